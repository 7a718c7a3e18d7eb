"""simkit: Monte Carlo balance analysis of tabletop RPG initiative systems.

``import simkit`` is light: the functions below load the analysis and output layers
(pandas, matplotlib) only when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

if TYPE_CHECKING:
    from simkit.analysis.compare import Comparison, compare
    from simkit.analysis.report import report
    from simkit.analysis.result import Result
    from simkit.analysis.sweep import SweepResult, sweep
    from simkit.api import run, validate
    from simkit.scenario import Scenario, ScenarioError, load_scenario, with_changes

_LAZY = {
    "Comparison": "simkit.api",
    "Result": "simkit.api",
    "SweepResult": "simkit.api",
    "compare": "simkit.api",
    "report": "simkit.api",
    "run": "simkit.api",
    "sweep": "simkit.api",
    "validate": "simkit.api",
    "Scenario": "simkit.scenario",
    "ScenarioError": "simkit.scenario",
    "load_scenario": "simkit.scenario",
    "with_changes": "simkit.scenario",
}

__all__ = [  # noqa: F822 (resolved lazily by __getattr__)
    "Comparison",
    "Result",
    "Scenario",
    "ScenarioError",
    "SweepResult",
    "__version__",
    "compare",
    "load_scenario",
    "report",
    "run",
    "sweep",
    "validate",
    "with_changes",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'simkit' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
