"""``simkit sensitivity``: each knob turned on the dice as written, the paired change,
ranked, in one sentence.

The changes of a readiness duel are compared with their exact values (the twin
enumerated with Fractions, tests/enumerate.py); the ranking and the sentence are
checked against the figures they read, on a played run and on hand-made batch terms;
bad options are one error line and exit status 2.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from builders import make_scenario
from enumerate import expectation
from twins import readiness as twin

import simkit
from simkit.analysis import sensitivity as sens
from simkit.cli import main
from simkit.metrics import SIDE, t_quantile_975
from simkit.output.numbers import format_difference
from simkit.output.render import render

DUEL = """\
[scenario]
name = "Duel"
system = "readiness"
rounds = 200_000
seed = 11

[[combatant]]
name = "A"
side = "a"
readiness = 2

[[combatant]]
name = "B"
side = "b"
readiness = 2
"""


def exact_economy(readiness_a: int, readiness_b: int) -> Fraction:
    """Side a's action economy, E[actions of A] / E[actions of B] per round in the long
    run (R8: a stalemate round is followed by one without holds)."""
    s = make_scenario(
        "readiness",
        [
            {"name": "A", "side": "a", "readiness": readiness_a},
            {"name": "B", "side": "b", "readiness": readiness_b},
        ],
    )
    normal = expectation(lambda d: twin.play_round(s, d, False))
    stalemate = normal[("", "stalemate")]
    forced = expectation(lambda d: twin.play_round(s, d, True)) if stalemate else normal
    actions = {
        n: (normal[(n, "actions")] + stalemate * forced[(n, "actions")]) / (1 + stalemate)
        for n in ("A", "B")
    }
    return actions["A"] / actions["B"]


@pytest.fixture(scope="module")
def duel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("duel") / "duel.toml"
    path.write_text(DUEL)
    return path


@pytest.fixture(scope="module")
def played(duel: Path) -> sens.Sensitivity:
    return simkit.sensitivity(duel, workers=2)


def _row(s: sens.Sensitivity, knob: str, changed_to: str, measure: str) -> dict:
    t = s.table
    rows = t[(t.knob == knob) & (t.changed_to == changed_to) & (t.measure == measure)]
    assert len(rows) == 1
    return rows.iloc[0].to_dict()


@pytest.mark.parametrize(
    ("knob", "new_a", "new_b", "changed_to"),
    [("A.readiness", 3, 2, "3"), ("A.readiness", 1, 2, "1"), ("B.readiness", 2, 3, "3")],
)
def test_a_point_of_readiness_changes_the_economy_by_its_exact_value(
    played, knob, new_a, new_b, changed_to
):
    as_written = exact_economy(2, 2)
    assert as_written == 1  # a duel of equals
    exact = float(exact_economy(new_a, new_b) - as_written)
    row = _row(played, knob, changed_to, "side:a.action_economy")
    assert row["ci_low"] <= exact <= row["ci_high"], (row, exact)
    assert row["se_paired"] > 0
    # the interval is paired: far narrower than the change itself
    assert row["ci_high"] - row["ci_low"] < abs(exact) / 10


def test_the_duel_plays_every_knob_once_and_skips_nothing(played):
    knobs = set(played.table.knob)
    assert {"A.readiness", "B.readiness", "rules.order=chain"} <= knobs
    assert played.skipped == ()
    # every (variant, measure) once: 2 stat knobs x 2 steps, each rule alternative
    system = simkit.systems.get("readiness")
    alternatives = sum(len(f.choices) - 1 for f in system.rules.values() if f.choices)
    assert len(played.table) == (4 + alternatives) * 2


def test_the_ranking_and_the_sentence_follow_the_figures(played):
    t = played.table
    size = t.groupby("knob", sort=False).difference.apply(lambda d: d.abs().max())
    ranked = list(dict.fromkeys(t.sort_values("rank", kind="stable").knob))
    assert ranked == played.knobs
    assert [size[k] for k in ranked] == sorted(size, reverse=True)
    assert list(t["rank"]) == sorted(t["rank"])
    top = played.headline(ranked[0])
    assert abs(top.difference) == t.difference.abs().max()
    # a point of readiness moves a duel most; the sentence reads the top two knobs' rows
    assert set(ranked[:2]) == {"A.readiness", "B.readiness"}
    second = played.headline(ranked[1])
    assert played.answer.startswith(
        f"The balance moves most with {top.knob_words} ({top.measure_words} "
    )
    for knob, head in ((ranked[0], top), (ranked[1], second)):
        for step, changed in (("up", "3"), ("down", "1")):
            r = _row(played, knob, changed, head.measure)
            half = played.t_paired * r["se_paired"]
            text = format_difference("action_economy", r["difference"], half)
            assert f"{text} per point {step}" in played.answer
    assert f", then {second.knob_words} (" in played.answer


def _synthetic(duel: Path, changes: list[tuple[str, float, np.ndarray]]) -> sens.Sensitivity:
    """A sensitivity assembled from hand-made batch terms: ``(knob, difference, u)``
    per variant, for the knobs A.readiness +1 and rules.order=chain/chain_unbroken."""
    scenario = simkit.load_scenario(duel)
    plan = sens.plan(scenario)
    variants = {f"{v.knob} {v.change}": v for v in plan.variants}
    chosen = tuple(variants[k] for k, _, _ in changes)
    measure = sens.Measure("m", "m", ((1.0, SIDE, "a", "action_economy"),), "m")
    k = len(changes[0][2])
    base = {"m": (1.0, np.zeros(k))}
    done = [{"m": (1.0 + d, u)} for _, d, u in changes]
    return sens.assemble(sens.Plan(scenario, chosen, ()), [measure], base, done, 100, 1, 25)


def test_the_sentence_names_the_two_largest_detectable_knobs(duel):
    u = np.array([0.01, -0.01, 0.01, -0.01])
    s = _synthetic(
        duel,
        [
            ("A.readiness +1", 0.5, u),
            ("rules.order=chain dynamic -> chain", -0.8, u),
            ("rules.order=chain_unbroken dynamic -> chain_unbroken", 0.05, u),
        ],
    )
    se = math.sqrt(4 / 3 * float(u @ u))
    half = t_quantile_975(3) * se
    assert s.table.se_paired.tolist() == pytest.approx([se] * 3, rel=1e-12)
    assert s.knobs == ["rules.order=chain", "A.readiness", "rules.order=chain_unbroken"]
    assert s.table["rank"].tolist() == [1, 2, 3]
    assert round(half, 4) == 0.0735  # 0.05 is not detectable, 0.5 and 0.8 are
    assert s.answer == (
        "The balance moves most with rules.order = chain (-0.80 ± 0.07), then A's "
        "readiness (+0.50 ± 0.07 per point up)."
    )


def test_undetectable_changes_are_not_named(duel):
    u = np.array([0.01, -0.01, 0.01, -0.01])
    one = _synthetic(duel, [("A.readiness +1", 0.5, u), ("A.readiness -1", 0.01, u)])
    assert one.answer == (
        "The balance moves most with A's readiness (+0.50 ± 0.07 per point up, +0.01 ± 0.07 "
        "per point down); no other knob moves it detectably."
    )
    none = _synthetic(
        duel, [("A.readiness +1", 0.05, u), ("rules.order=chain dynamic -> chain", -0.02, u)]
    )
    assert none.answer == (
        "No knob moves the balance detectably in 100 rounds: every paired 95% interval contains 0."
    )


def test_a_change_beyond_a_bound_is_skipped_and_said(tmp_path):
    path = tmp_path / "low.toml"
    path.write_text(
        DUEL.replace("readiness = 2\n\n[[combatant]]", "readiness = 1\n\n[[combatant]]")
    )
    plan = sens.plan(simkit.load_scenario(path))
    assert "A.readiness +1" in [f"{v.knob} {v.change}" for v in plan.variants]
    assert "A.readiness -1" not in [f"{v.knob} {v.change}" for v in plan.variants]
    assert plan.skipped == ("A.readiness -1 skipped: readiness 1 is the minimum",)


def test_a_count_group_is_one_knob(tmp_path):
    path = tmp_path / "group.toml"
    path.write_text(DUEL.replace('name = "B"\n', 'name = "B"\ncount = 3\n'))
    plan = sens.plan(simkit.load_scenario(path))
    b = [v for v in plan.variants if v.who == "B"]
    assert [(v.knob, v.step) for v in b] == [("B.readiness", 1), ("B.readiness", -1)]
    up = b[0].scenario
    assert [c["readiness"] for c in up.combatants] == [2, 3, 3, 3]


def test_every_format_and_the_table_fits_100_columns(played):
    table = render("sensitivity", played, "table", width=100)
    assert max(len(line) for line in table.splitlines()) <= 100
    assert table.splitlines()[0].startswith("The balance moves most with")
    doc = json.loads(render("sensitivity", played, "json"))
    assert doc["kind"] == "sensitivity"
    assert set(doc) == {"kind", "parameters", "rows", "notes"}
    assert doc["notes"][0] == played.answer
    assert len(doc["rows"]) == len(played.table)
    csv_text = render("sensitivity", played, "csv")
    assert csv_text.splitlines()[0].startswith("rank,knob,kind,who,field")
    assert render("sensitivity", played, "md").startswith("| rank | knob |")
    assert "<table" in played._repr_html_()
    fig = played.plot()
    assert len(fig.axes[0].patches) >= len(played.table) // 2


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--rounds", "0"], "--rounds: expected an integer from 1"),
        (["--rounds", "1"], "--rounds: paired runs need at least 2 rounds, got 1"),
        (["--objective", "side:a.actoins"], "did you mean 'actions'?"),
        (["--objective", "side:c.actions"], "no side 'c'"),
        (["--format", "xml"], "--format: invalid choice"),
        (["--seed", "-1"], "--seed: expected an integer"),
    ],
)
def test_bad_options_are_one_clean_error(duel, tmp_path, capsys, args, words):
    status = main(["sensitivity", str(duel), *args, "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("simkit: error: ")
    assert words in err
    assert not (tmp_path / "out").exists()


def test_the_command_prints_and_writes(duel, tmp_path, capsys):
    status = main(
        ["sensitivity", str(duel), "--rounds", "4000", "--seed", "3", "--out", str(tmp_path / "o")]
    )
    out, _ = capsys.readouterr()
    assert status == 0
    assert "Change in each side's action economy" in out
    assert (tmp_path / "o" / "sensitivity.csv").read_text().startswith("rank,knob")


def test_an_objective_replaces_the_economy(duel):
    s = simkit.sensitivity(duel, rounds=4000, objective="side:a.actions - side:b.actions")
    assert [m.label for m in s.measures] == ["side:a.actions - side:b.actions"]
    assert set(s.table.measure) == {"side:a.actions - side:b.actions"}
    row = _row(s, "A.readiness", "3", "side:a.actions - side:b.actions")
    assert row["ci_low"] > 0


def test_vtm_moves_dexterity_where_the_file_gives_it_and_perception_says_what_it_skips():
    root = Path(__file__).resolve().parents[1] / "scenarios"
    vtm = sens.plan(simkit.load_scenario(root / "vtm_gangrel_ambush.toml"))
    up = next(v for v in vtm.variants if v.knob == "Gangrel.dexterity" and v.step == 1)
    assert (up.as_written, up.changed_to) == (4, 5)
    gangrel = up.scenario.combatants[0]
    assert (gangrel["dexterity"], gangrel["rating"]) == (5, 8)  # the rating moves by one
    rules = [v.knob for v in vtm.variants if v.kind == "rule"]
    assert rules == ["rules.tie=random", "rules.multi=in_turn", "rules.slot_abort=never"]
    perception = sens.plan(simkit.load_scenario(root / "perception_gunnar_wolf.toml"))
    assert len(perception.skipped) == 1
    assert perception.skipped[0].startswith("rules.mode=group skipped: rules.group_stat: ")
    assert "no commander" in perception.skipped[0]
