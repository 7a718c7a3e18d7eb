"""simkit: Monte Carlo balance analysis of tabletop RPG initiative systems."""

from __future__ import annotations

from simkit.api import run, validate
from simkit.compare import Comparison, compare
from simkit.report import report
from simkit.result import Result
from simkit.scenario import Scenario, ScenarioError, load_scenario, with_changes
from simkit.sweep import SweepResult, sweep

__version__ = "0.1.0"

__all__ = [
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
