"""How a report is drawn: the verdict, findings, tables, plots and page of one report.

The modules, by job: ``names`` (how groups, values and rule IDs read), ``readings``
(the estimates per side, group and combatant that the sentences read, with the
differences and ratios computed from them), ``findings`` (sentences), ``tables``,
``figures`` (which plots), ``data`` (CSV files), ``page`` (HTML, Markdown and CSS) and
``build`` (everything put together: :func:`build_report`).  What a report runs is
``simkit.analysis.report_runs``; nothing here simulates.

Attributes are loaded on first use, so that ``simkit.output.report_document.names``
stays light.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "Report": "build",
    "build_report": "build",
    "csv_tables": "data",
    "sweep_table": "data",
    "verdict": "findings",
    "group_findings": "findings",
    "policy_findings": "findings",
    "render_html": "page",
    "render_markdown": "page",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
