"""vtm scenario files that must be rejected, each naming the file and the field path."""

from __future__ import annotations

from pathlib import Path

import pytest

import simkit
from simkit.scenario import ScenarioError, load_scenario

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"

HEAD = """\
[scenario]
name = "test"
system = "vtm"
"""

OPPONENT = """
[[combatant]]
name = "Ghoul"
side = "ghouls"
rating = 3
"""


def write(tmp_path: Path, body: str, rules: str = "") -> Path:
    path = tmp_path / "scenario.toml"
    path.write_text(HEAD + rules + body + OPPONENT, encoding="utf-8")
    return path


def combatant(**fields: object) -> str:
    lines = ["", "[[combatant]]", 'name = "Vampire"', 'side = "kindred"']
    for key, value in fields.items():
        lines.append(f"{key} = {value!r}".replace("'", '"'))
    return "\n".join(lines) + "\n"


def rejected(path: Path, field_path: str, *words: str) -> str:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    message = str(info.value)
    assert str(path) in message
    assert field_path in message
    for word in words:
        assert word in message, (word, message)
    return message


def test_a_valid_file_loads(tmp_path):
    path = write(
        tmp_path, combatant(dexterity=3, wits=2, extra_actions=2), "[rules]\ntie='random'\n"
    )
    scenario = load_scenario(path)
    assert scenario.combatants[0]["rating"] == 5
    assert scenario.rules["tie"] == "random"
    assert scenario.combatants[1]["delay"] == "never"


def test_readiness_field_in_a_vtm_scenario(tmp_path):
    path = write(tmp_path, combatant(rating=4, readiness=3))
    rejected(path, "(index 0).readiness", "readiness", "vtm")


def test_perception_field_in_a_vtm_scenario(tmp_path):
    path = write(tmp_path, combatant(rating=4, perception=3))
    rejected(path, "(index 0).perception", "perception")


def test_rating_together_with_dexterity_or_wits(tmp_path):
    rejected(write(tmp_path, combatant(rating=4, dexterity=2)), "(index 0).rating", "not both")
    rejected(write(tmp_path, combatant(rating=4, wits=2)), "(index 0).rating", "not both")


def test_missing_stats(tmp_path):
    rejected(write(tmp_path, combatant()), "(index 0).dexterity", "missing", "rating")
    rejected(write(tmp_path, combatant(dexterity=3)), "(index 0).wits", "missing")
    rejected(write(tmp_path, combatant(wits=3)), "(index 0).dexterity", "missing")


@pytest.mark.parametrize(
    ("fields", "field_path"),
    [
        ({"rating": 41}, "(index 0).rating"),
        ({"rating": -1}, "(index 0).rating"),
        ({"dexterity": 21, "wits": 1}, "(index 0).dexterity"),
        ({"dexterity": 1, "wits": -2}, "(index 0).wits"),
        ({"rating": 3, "wound_penalty": -1}, "(index 0).wound_penalty"),
        ({"rating": 3, "actions": 0}, "(index 0).actions"),
        ({"rating": 3, "extra_actions": -1}, "(index 0).extra_actions"),
        ({"rating": 3, "extra_actions": 11}, "(index 0).extra_actions"),
        ({"rating": 3, "attack_share": 1.5}, "(index 0).attack_share"),
        ({"rating": 3.5}, "(index 0).rating"),
        ({"rating": "high"}, "(index 0).rating"),
        ({"rating": 3, "delay": "sometimes"}, "(index 0).delay"),
        ({"rating": 3, "abort": "maybe"}, "(index 0).abort"),
        ({"rating": 3, "target": "Nobody"}, "(index 0).target"),
    ],
)
def test_out_of_range_or_wrong_values(tmp_path, fields, field_path):
    message = rejected(write(tmp_path, combatant(**fields)), field_path)
    assert "allowed" in message or "expected" in message


def test_unknown_rule(tmp_path):
    path = write(tmp_path, combatant(rating=3), "[rules]\norder = 'chain'\n")
    rejected(path, "rules.order", "unknown rule", "vtm")


def test_bad_tie_rule(tmp_path):
    path = write(tmp_path, combatant(rating=3), "[rules]\ntie = 'coin'\n")
    rejected(path, "rules.tie", "simultaneous", "random")


def test_bad_slot_abort_rule(tmp_path):
    """V5 [rev 3]: slot_abort takes "allowed" (the default) or "never" (revision 2)."""
    path = write(tmp_path, combatant(rating=3), "[rules]\nslot_abort = 'sometimes'\n")
    rejected(path, "rules.slot_abort", "allowed", "never")
    path = write(tmp_path, combatant(rating=3), "[rules]\nslot_abort = true\n")
    rejected(path, "rules.slot_abort")


@pytest.mark.parametrize("value", ["allowed", "never"])
def test_slot_abort_values_load(tmp_path, value):
    scenario = load_scenario(
        write(tmp_path, combatant(rating=3), f"[rules]\nslot_abort = '{value}'\n")
    )
    assert scenario.rules["slot_abort"] == value
    assert load_scenario(write(tmp_path, combatant(rating=3))).rules["slot_abort"] == "allowed"


def test_unknown_key(tmp_path):
    rejected(write(tmp_path, combatant(rating=3, celerity=2)), "(index 0).celerity", "unknown")


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("vtm_*.toml")), ids=lambda p: p.name)
def test_example_scenarios_load_and_run(path):
    scenario = load_scenario(path)
    assert scenario.system == "vtm"
    result = simkit.run(scenario, rounds=20_000, rng=1, workers=1)
    assert (result.table["mean"] >= 0).all()


def test_there_are_example_scenarios():
    assert len(list(SCENARIOS.glob("vtm_*.toml"))) >= 2
