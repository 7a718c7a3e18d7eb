"""The scenario layer: TOML loading, the one validator, the frozen Scenario, and every
edit of one (``with_changes``, ``--set`` and ``--vary`` specs)."""

from simkit.scenario.model import Combatant, Params, Scenario, ScenarioError, entry_path
from simkit.scenario.specs import (
    ALL,
    RULES,
    Axis,
    Offset,
    apply_assignments,
    apply_set,
    field_spec,
    grid_scenarios,
    parse_value,
    parse_vary,
    split_spec,
    sweep_table,
)
from simkit.scenario.validate import (
    MAX_FILE_BYTES,
    MAX_ROUNDS,
    check_value,
    load_scenario,
    scenario_from_dict,
    scenario_problems,
    shown,
    suggest,
    with_changes,
)

__all__ = [
    "ALL",
    "MAX_FILE_BYTES",
    "MAX_ROUNDS",
    "RULES",
    "Axis",
    "Combatant",
    "Offset",
    "Params",
    "Scenario",
    "ScenarioError",
    "apply_assignments",
    "apply_set",
    "check_value",
    "entry_path",
    "field_spec",
    "grid_scenarios",
    "load_scenario",
    "parse_value",
    "parse_vary",
    "scenario_from_dict",
    "scenario_problems",
    "shown",
    "split_spec",
    "suggest",
    "sweep_table",
    "with_changes",
]
