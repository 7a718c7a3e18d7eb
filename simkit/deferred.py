"""Modules imported on first use, so that `simkit run` starts without them.

pandas takes a sixth of a second to import; the command line only needs it for
sweeps, comparisons and reports.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class DeferredModule:
    """Stands for a module and imports it at the first attribute access."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)


pandas = DeferredModule("pandas")
