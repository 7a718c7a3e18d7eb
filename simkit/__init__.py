"""simkit: Monte Carlo balance analysis of tabletop RPG initiative systems."""

from __future__ import annotations

from simkit.api import run, validate
from simkit.result import Result
from simkit.scenario import Scenario, ScenarioError, load_scenario, with_changes

__version__ = "0.1.0"

__all__ = [
    "Result",
    "Scenario",
    "ScenarioError",
    "__version__",
    "load_scenario",
    "run",
    "validate",
    "with_changes",
]
