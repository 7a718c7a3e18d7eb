"""Perception scenarios that must be rejected before any simulation.

Each error is a ScenarioError whose message names the file and the field path.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from simkit.scenario import ScenarioError, load_scenario, with_changes

GOOD = """\
[scenario]
name = "validation"
system = "perception"

[rules]
{rules}

[[combatant]]
name = "Gunnar"
side = "party"
perception = 4
{gunnar}

[[combatant]]
name = "Astrid"
side = "party"
perception = 3
{astrid}

[[combatant]]
name = "Wolf"
side = "wolves"
perception = 6
{wolf}
"""


def _write(
    tmp_path: Path, rules: str = "", gunnar: str = "", astrid: str = "", wolf: str = ""
) -> Path:
    path = tmp_path / "scenario.toml"
    path.write_text(GOOD.format(rules=rules, gunnar=gunnar, astrid=astrid, wolf=wolf))
    return path


def _error(path: Path) -> str:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    return str(info.value)


def test_good_file_loads(tmp_path):
    scenario = load_scenario(
        _write(tmp_path, 'mode = "group"', gunnar="commander = true", wolf="commander = true")
    )
    assert scenario.rules["mode"] == "group"
    assert scenario.rules["group_stat"] == "commander"  # the default, filled in
    assert scenario.rules["within_side"] == "random"


def test_two_commanders_on_one_side(tmp_path):
    path = _write(tmp_path, gunnar="commander = true", astrid="commander = true")
    msg = _error(path)
    assert str(path) in msg
    assert "(index 1).commander" in msg
    assert "more than one commander" in msg and "party" in msg


def test_two_commanders_rejected_in_individual_mode_too(tmp_path):
    path = _write(tmp_path, 'mode = "individual"', "commander = true", "commander = true")
    assert "(index 1).commander" in _error(path)


def test_count_group_of_commanders(tmp_path):
    path = _write(tmp_path, wolf="count = 2\ncommander = true")
    msg = _error(path)
    assert str(path) in msg and "(index 2).commander" in msg


def test_group_mode_side_without_commander(tmp_path):
    path = _write(tmp_path, 'mode = "group"\ngroup_stat = "commander"', gunnar="commander = true")
    msg = _error(path)
    assert str(path) in msg
    assert "rules.group_stat" in msg
    assert "wolves" in msg and "no commander" in msg


def test_group_mode_default_group_stat_needs_commanders(tmp_path):
    path = _write(tmp_path, 'mode = "group"')
    msg = _error(path)
    assert str(path) in msg and "rules.group_stat" in msg and "party" in msg


def test_group_mode_highest_needs_no_commander(tmp_path):
    scenario = load_scenario(_write(tmp_path, 'mode = "group"\ngroup_stat = "highest"'))
    assert scenario.rules["group_stat"] == "highest"


def test_commander_check_after_changes(tmp_path):
    scenario = load_scenario(_write(tmp_path, 'mode = "group"\ngroup_stat = "highest"'))
    with pytest.raises(ScenarioError) as info:
        with_changes(scenario, rules={"group_stat": "commander"})
    assert "rules.group_stat" in str(info.value) and str(scenario.source) in str(info.value)


def test_readiness_field_in_perception_scenario(tmp_path):
    path = _write(tmp_path, astrid="readiness = 3")
    msg = _error(path)
    assert str(path) in msg
    assert "(index 1).readiness" in msg
    assert "readiness" in msg and "perception" in msg


def test_vtm_field_in_perception_scenario(tmp_path):
    path = _write(tmp_path, wolf="wits = 2")
    msg = _error(path)
    assert str(path) in msg and "(index 2).wits" in msg


def test_readiness_rule_in_perception_scenario(tmp_path):
    path = _write(tmp_path, 'order = "chain"')
    msg = _error(path)
    assert str(path) in msg and "rules.order" in msg


@pytest.mark.parametrize(
    ("rules", "field", "value"),
    [
        ('mode = "team"', "rules.mode", "team"),
        ('tie = "coin"', "rules.tie", "coin"),
        ('group_stat = "average"', "rules.group_stat", "average"),
        ('within_side = "sorted"', "rules.within_side", "sorted"),
    ],
)
def test_unknown_rule_value(tmp_path, rules, field, value):
    path = _write(tmp_path, rules)
    msg = _error(path)
    assert str(path) in msg
    assert field in msg
    assert value in msg and "allowed" in msg


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("perception = -1", "(index 0).perception"),
        ("perception = 31", "(index 0).perception"),
        ('perception = "high"', "(index 0).perception"),
        ('perception = 4\ncommander = "yes"', "(index 0).commander"),
        ("attack_share = 1.5", "(index 0).attack_share"),
    ],
)
def test_bad_field_values(tmp_path, line, field):
    path = tmp_path / "bad.toml"
    text = GOOD.format(rules="", gunnar="", astrid="", wolf="")
    text = text.replace("perception = 4\n", line + "\n", 1)
    path.write_text(text)
    msg = _error(path)
    assert str(path) in msg and field in msg


def test_missing_perception(tmp_path):
    path = tmp_path / "missing.toml"
    path.write_text(
        GOOD.format(rules="", gunnar="", astrid="", wolf="").replace("perception = 6\n", "")
    )
    msg = _error(path)
    assert str(path) in msg and "(index 2).perception" in msg


def test_target_must_be_an_opponent(tmp_path):
    path = _write(tmp_path, gunnar='target = "Astrid"')
    msg = _error(path)
    assert str(path) in msg and "(index 0).target" in msg
