"""The explorer (simkit.explore) driven headless: its widgets are set from code, as a
browser would set them, and its tables, paired differences and plot are read back."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from requires import requires_module

requires_module("ipywidgets", "the notebooks extra")

import simkit  # noqa: E402
from simkit.explorer import ROUNDS, Explorer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
WOLVES = ROOT / "scenarios" / "party_vs_wolves.toml"
SMALL = 20_000  # rounds for the behaviour tests; the timing test uses ROUNDS
LEVELS = ("combatant", "group", "side")


@pytest.fixture(scope="module")
def box():
    return simkit.explore(WOLVES, rounds=SMALL)


@pytest.fixture(autouse=True)
def _as_written(request):
    """Every test starts from the scenario as written."""
    yield
    if "box" in request.fixturenames:
        request.getfixturevalue("box").reset.click()


def _rows(table: list[list[str]]) -> dict[tuple[str, str], list[str]]:
    return {(r[0], r[1]): r for r in table}


def test_one_set_of_controls_per_group_then_the_rules(box):
    keys = list(box.controls)
    # the three wolves are one group: one set of controls, not three
    assert "Wolf.readiness" in keys and not any(k.startswith("Wolf 1.") for k in keys)
    # every field of the system's schema, and every rule, from the schema
    readiness = simkit.systems.get("readiness")
    for who in ("Gunnar", "Astrid", "Leif", "Wolf"):
        for field in readiness.fields:
            # opening (R8a) limits advantage to a fight's first round: only in fights
            assert (f"{who}.{field}" in keys) == (field != "opening"), field
    assert {"role", "weakness", "surprised"} <= set(readiness.fields)  # beyond the old five
    assert keys[-len(readiness.rules) :] == [f"rules.{r}" for r in readiness.rules]
    # the controls show the scenario as written
    assert box.controls["Gunnar.hold"].value == "until_attacked"
    assert box.controls["Leif.defend"].value == "hasty_up_to:2"  # a value beyond the choices
    assert box.controls["Astrid.guard"].value == "backup"
    assert box.controls["Wolf.readiness"].value == 2
    # a number re-plays once, when it is entered
    assert box.controls["Wolf.readiness"].continuous_update is False
    assert "(1..20)" in box.controls["Wolf.readiness"].description


def test_an_out_of_range_value_is_refused_visibly_not_clamped(box):
    ex = box.explorer
    before = ex.tables()
    box.controls["Wolf.readiness"].value = 99
    assert ex.error == (
        "Wolf.readiness: 99 is not allowed; allowed: an integer from 1 to 20; not applied"
    )
    assert "99 is not allowed" in box.tables.value  # shown above the tables
    assert box.controls["Wolf.readiness"].value == 2  # the value in force, not 20
    assert ex.changes == {} and ex.tables() == before
    assert ex.set("Wolf", "readiness", 20) and ex.error == ""  # the end of the range plays
    assert ex.current.combatants[ex.current.index("Wolf 1")].params["readiness"] == 20


def test_the_explorer_as_written_is_simkit_run(box):
    ex = box.explorer
    run = simkit.run(WOLVES, rounds=SMALL)  # the scenario's own seed, as the explorer
    assert ex.base_result.rows == run.rows  # identical numbers, not merely close
    for level in LEVELS:
        assert (ex.differences(level).difference == 0).all()


def test_a_control_changes_the_tables_the_difference_and_the_plot(box):
    ex = box.explorer
    before = {level: _rows(rows) for level, rows in ex.tables().items()}
    png = box.image.value
    box.controls["Wolf.readiness"].value = 3

    assert ex.changes == {"Wolf": {"readiness": 3}}
    readiness = {c.name: c.params["readiness"] for c in ex.current.combatants}
    assert readiness == {"Gunnar": 3, "Astrid": 3, "Leif": 3, "Wolf 1": 3, "Wolf 2": 3, "Wolf 3": 3}
    assert "Wolf.readiness=3" in box.tables.value
    assert box.image.value != png

    sides = ex.differences("side").set_index(["side", "metric"])
    wolves, party = sides.loc[("wolves", "actions")], sides.loc[("party", "actions")]
    assert wolves.ci_low > 0  # a third die per wolf: more wolf actions ...
    assert party.ci_high < 0  # ... and fewer for the party, which must defend more
    # the difference is the difference of the two runs' own numbers
    assert wolves.difference == pytest.approx(
        ex.result.estimate("side:wolves", "actions").mean
        - ex.base_result.estimate("side:wolves", "actions").mean,
        abs=1e-12,
    )
    after = {level: _rows(rows) for level, rows in ex.tables().items()}
    row = after["side"][("wolves", "Actions (sum)")]
    assert row[2] == before["side"][("wolves", "Actions (sum)")][3]  # "as written" stays
    assert row[3] != row[2]  # "now" moved
    assert row[4].startswith("+")  # the change, with its interval
    group = after["group"][("Wolf", "Actions (sum)")]
    assert group[4].startswith("+") and group[3] != before["group"][("Wolf", "Actions (sum)")][3]


def test_the_difference_is_simkit_compare_on_the_same_dice(box):
    ex = box.explorer
    box.controls["Gunnar.hold"].value = "never"
    paired = simkit.compare(WOLVES, set=["Gunnar.hold=never"], rounds=SMALL)
    for level in LEVELS:
        mine = ex.differences(level).set_index([level, "metric"]).difference
        theirs = paired.level_table(level).set_index([level, "metric"]).difference
        theirs = theirs.loc[mine.index]
        # the same rounds on the same dice: the same means, to the last bit
        assert mine.fillna(-1).tolist() == theirs.fillna(-1).tolist()


def test_a_change_set_back_gives_exactly_zero(box):
    ex = box.explorer
    slider = box.controls["Wolf.readiness"]
    slider.value = 4
    assert (ex.differences("side").difference != 0).any()
    slider.value = 2  # as written
    assert ex.changes == {}
    for level in LEVELS:
        d = ex.differences(level)
        assert (d.difference == 0).all() and (d.se_paired == 0).all(), level
    assert all(r[4] == "0" for rows in ex.tables().values() for r in rows)


def test_a_change_undone_under_another_leaves_the_other_alone(box):
    ex = box.explorer
    box.controls["Wolf.readiness"].value = 3
    box.controls["rules.order"].value = "chain"
    box.controls["Wolf.readiness"].value = 2
    assert ex.rules == {"order": "chain"} and ex.changes == {}
    alone = Explorer(simkit.validate(WOLVES), rounds=SMALL)
    alone.set("rules", "order", "chain")
    for level in LEVELS:
        a = ex.differences(level).difference.fillna(-1).tolist()
        assert a == alone.differences(level).difference.fillna(-1).tolist()


def test_the_reset_button_restores_every_control_with_one_replay(box, monkeypatch):
    ex = box.explorer
    box.controls["Wolf.readiness"].value = 5
    box.controls["Leif.defend"].value = "never"
    box.controls["rules.prep"].value = "lowest"
    calls = []
    original = ex.update
    monkeypatch.setattr(ex, "update", lambda: (calls.append(1), original())[1])
    box.reset.click()
    assert len(calls) == 1
    assert box.controls["Wolf.readiness"].value == 2
    assert box.controls["Leif.defend"].value == "hasty_up_to:2"
    assert box.controls["rules.prep"].value == "one_die"
    assert ex.changes == {} and ex.rules == {}
    assert (ex.differences("side").difference == 0).all()


def test_the_plot_metric_can_be_chosen(box):
    box.controls["Wolf.readiness"].value = 3
    png = box.image.value
    assert "first_action" in [value for _, value in box.metric.options]
    box.metric.value = "first_action"
    assert box.image.value != png and box.image.value[:4] == b"\x89PNG"
    box.metric.value = "actions"


def test_an_impossible_change_says_why_and_keeps_the_last_tables():
    box = simkit.explore(ROOT / "scenarios" / "perception_gunnar_wolf.toml", rounds=2_000)
    ex = box.explorer
    box.controls["Gunnar.perception"].value = 6
    good = ex.tables()
    # group mode with group_stat = "commander" needs a commander on every side (P2)
    box.controls["rules.mode"].value = "group"
    assert "commander" in ex.error
    assert "commander" in box.tables.value
    assert ex.tables() == good
    box.controls["rules.group_stat"].value = "highest"  # now it can be played
    assert ex.error == ""
    assert ex.current.rules["mode"] == "group"


def test_every_system_can_be_explored():
    for name in ("vtm_gangrel_ambush.toml", "perception_party_vs_wolves.toml"):
        box = simkit.explore(ROOT / "scenarios" / name, rounds=2_000)
        ex = box.explorer
        stat = next(k for k in box.controls if not k.startswith("rules."))
        box.controls[stat].value = box.controls[stat].value + 2
        assert ex.error == "" and ex.changes
        assert (ex.differences("side").difference != 0).any()
        box.reset.click()
        assert (ex.differences("side").difference == 0).all()


def test_one_update_answers_within_half_a_second(record_property):
    """One widget update at 200,000 rounds: the re-play, the tables and the plot.

    The machine may be shared, so the CPU time of the update (every thread of this
    process) is what is held to 0.5 s; the best of five is taken, after one update that
    loads the kernel of the changed path."""
    box = simkit.explore(WOLVES, rounds=ROUNDS)
    assert box.explorer.rounds == 200_000
    slider = box.controls["Wolf.readiness"]
    slider.value = 3  # warm-up
    cpu, wall = [], []
    for value in (4, 2, 3, 4, 2):
        c, w = time.process_time(), time.perf_counter()
        slider.value = value
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    record_property("update_cpu_s", min(cpu))
    record_property("update_wall_s", min(wall))
    print(
        f"\nexplorer update at {ROUNDS:,} rounds: CPU best {min(cpu):.3f} s, "
        f"wall best {min(wall):.3f} s (CPU {', '.join(f'{x:.3f}' for x in cpu)})"
    )
    assert min(cpu) < 0.5


def test_a_fight_scenario_has_its_opening_as_a_control():
    box = simkit.explore(ROOT / "scenarios" / "ambush.toml", rounds=3_000)
    ex = box.explorer
    assert "Bandit.opening" in box.controls and "Merchant.opening" in box.controls
    box.controls["Bandit.opening"].value = False  # the advantage in every round (R8a)
    assert ex.error == "" and ex.changes
    first = ex.differences("side").set_index(["side", "metric"]).difference
    assert first[("bandits", "first_action")] > 0
    box.reset.click()
    assert (ex.differences("side").difference == 0).all()
