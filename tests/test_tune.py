"""``simkit tune``: the value of a field that meets a balance target.

Every point is played with the same seed as ``simkit.run`` of that point would be, so
the target quantity at a point is checked against a direct run: a single reference
equals the run's estimate exactly, and a ratio of the two sides' actions equals the
side's ``action_economy`` (the same delta-method estimate from the same cycle sums).
The answers (met, bracketed, not reachable, pairs of two fields) are checked against
the points they are computed from, and bad targets are one error line.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pandas as pd
import pytest

import simkit
from simkit.cli import main
from simkit.scenario import ScenarioError, load_scenario, with_changes

ROOT = Path(__file__).resolve().parents[1]
BOSS = ROOT / "scenarios" / "boss_fight.toml"
RATIO = "side:monsters.actions / side:party.actions"
ROUNDS = 20_000


@pytest.fixture(scope="module")
def bracket() -> simkit.Tuning:
    return simkit.tune(BOSS, "Troll Chief.readiness=1..10", f"{RATIO} = 1", rounds=ROUNDS, rng=5)


def test_the_ratio_is_the_action_economy_of_a_direct_run(bracket):
    scenario = load_scenario(BOSS)
    for k in (0, 4, 9):
        point = bracket.points[k]
        chief = with_changes(scenario, combatants={"Troll Chief": {"readiness": k + 1}})
        direct = simkit.run(chief, rounds=ROUNDS, rng=5)
        want = direct.estimate("side:monsters", "action_economy")
        assert point.values == (k + 1,)
        assert math.isclose(point.estimate.mean, want.mean, rel_tol=1e-12)
        assert math.isclose(point.estimate.se, want.se, rel_tol=1e-9)


def test_a_single_reference_is_the_run_estimate_exactly():
    t = simkit.tune(
        BOSS, "Troll Chief.readiness=4,6", "side:party.actions >= 7", rounds=ROUNDS, rng=5
    )
    scenario = load_scenario(BOSS)
    for point in t.points:
        changed = with_changes(scenario, combatants={"Troll Chief": {"readiness": point.values[0]}})
        want = simkit.run(changed, rounds=ROUNDS, rng=5).estimate("side:party", "actions")
        assert point.estimate == want
        assert point.met == (want.mean >= 7)


def test_the_answer_names_the_bracketing_pair(bracket):
    means = [p.estimate.mean for p in bracket.points]
    assert means == sorted(means)  # a stronger chief: more monster actions per party action
    below = [p for p in bracket.points if p.estimate.mean < 1]
    above = [p for p in bracket.points if p.estimate.mean > 1]
    assert below and above, means
    a, b = below[-1].values[0], above[0].values[0]
    if not any(p.met for p in bracket.points):
        assert f"lies between Troll Chief.readiness = {a}" in bracket.answer
        assert f"and Troll Chief.readiness = {b}" in bracket.answer
    table = bracket.table
    assert list(table["Troll Chief.readiness"]) == list(range(1, 11))
    assert {"mean", "se", "ci_low", "ci_high", "met"} <= set(table.columns)


def test_met_means_the_interval_covers_an_equality_target(bracket):
    value = bracket.points[6].estimate.mean  # a value inside point 7's interval
    t = simkit.tune(BOSS, "Troll Chief.readiness=1..10", f"{RATIO} = {value}", rounds=ROUNDS, rng=5)
    met = [p for p in t.points if p.met]
    assert met and all(p.estimate.ci_low <= value <= p.estimate.ci_high for p in met)
    assert t.answer.startswith("Met (the 95% interval covers")
    assert "Troll Chief.readiness = 7" in t.answer


def test_not_reachable_names_the_closest_value(bracket):
    t = simkit.tune(BOSS, "Troll Chief.readiness=1..3", f"{RATIO} >= 50", rounds=ROUNDS, rng=5)
    assert not any(p.met for p in t.points)
    closest = max(t.points, key=lambda p: p.estimate.mean)
    assert t.answer.startswith("Not reachable in this range; closest: ")
    assert f"Troll Chief.readiness = {closest.values[0]}" in t.answer


def test_two_fields_give_the_pairs_that_meet_it():
    t = simkit.tune(
        BOSS,
        ["Troll Chief.readiness=4..6", "Goblin.readiness=1..3"],
        f"{RATIO} <= 0.3",
        rounds=ROUNDS,
        rng=5,
    )
    met = [p for p in t.points if p.met]
    assert len(t.points) == 9
    assert met and len(met) < 9
    assert all(p.estimate.mean <= 0.3 for p in met)
    assert t.answer.startswith(f"{len(met)} of 9 pairs meet the target")


@pytest.mark.parametrize(
    ("target", "fragment"),
    [
        ("side:monster.actions = 1", "no side 'monster' (did you mean 'monsters'?)"),
        ("side:monsters.actoins = 1", "no metric 'actoins' per side (did you mean 'actions'?)"),
        ("Troll.actions = 1", "no combatant 'Troll'"),
        ("monsters.actions = 1", "prefix side: or group:"),
        ("side:monsters.actions ~ 1", "--target"),
    ],
)
def test_a_bad_target_is_one_line_and_writes_nothing(tmp_path, capsys, target, fragment):
    out = tmp_path / "t"
    args = ["tune", str(BOSS), "--vary", "Troll Chief.readiness=1..3", "--target", target]
    assert main([*args, "--rounds", "1000", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("simkit: error: ") and captured.err.count("\n") == 1
    assert fragment in captured.err
    assert not out.exists()


def test_hidden_counts_are_not_offered_as_metrics():
    with pytest.raises(ScenarioError) as err:
        simkit.tune(BOSS, "Troll Chief.readiness=1..2", "side:party.actoins = 1", rounds=100)
    assert "hasty_scale_total" not in str(err.value)


def test_cli_prints_the_answer_and_writes_csv_and_plot(tmp_path, capsys):
    out = tmp_path / "tune"
    args = ["tune", str(BOSS), "--vary", "Troll Chief.readiness=6..9", "--target", f"{RATIO} = 1"]
    assert main([*args, "--rounds", "5000", "--seed", "5", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"target: {RATIO} = 1\n")
    assert all(len(line) <= 100 for line in text.splitlines())
    direct = simkit.tune(BOSS, "Troll Chief.readiness=6..9", f"{RATIO} = 1", rounds=5000, rng=5)
    assert " ".join(direct.answer.split()) in " ".join(text.split())
    saved = pd.read_csv(out / "tune.csv")
    assert list(saved["Troll Chief.readiness"]) == [6, 7, 8, 9]
    assert (out / "tune.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("fmt", ["csv", "md", "json"])
def test_cli_formats_are_the_tune_table(capsys, fmt):
    args = ["tune", str(BOSS), "--vary", "Troll Chief.readiness=6..8", "--target", f"{RATIO} = 1"]
    assert main([*args, "--rounds", "3000", "--seed", "5", "--format", fmt]) == 0
    text = capsys.readouterr().out
    direct = simkit.tune(BOSS, "Troll Chief.readiness=6..8", f"{RATIO} = 1", rounds=3000, rng=5)
    if fmt == "json":
        document = json.loads(text)
        assert document["kind"] == "tune"
        assert document["parameters"]["target"] == f"{RATIO} = 1"
        assert document["notes"] == [direct.answer]
        assert [r["mean"] for r in document["rows"]] == list(direct.table["mean"])
        assert [r["met"] for r in document["rows"]] == list(direct.table["met"])
    elif fmt == "csv":
        saved = pd.read_csv(io.StringIO(text))
        assert list(saved.columns) == list(direct.table.columns)
        assert list(saved["mean"]) == [float(f"{m:.10g}") for m in direct.table["mean"]]
    else:
        lines = text.splitlines()
        assert lines[0] == "| " + " | ".join(direct.table.columns) + " |"
        assert len(lines) == 2 + len(direct.table)


# --------------------------------------------------------------------------- tolerance
BAND = f"{RATIO} = 1 ± 0.05"


@pytest.mark.parametrize(
    ("target", "tolerance"),
    [
        (f"{RATIO} = 1 ± 0.05", None),
        (f"{RATIO} = 1 +- 0.05", None),
        (f"{RATIO} = 1 ± 5%", None),
        (f"{RATIO} = 1", "0.05"),
        (f"{RATIO} = 1", "5%"),
        (f"{RATIO} = 1", 0.05),
    ],
)
def test_a_tolerance_is_read_in_every_form(target, tolerance):
    scenario = load_scenario(BOSS)
    t = simkit.api.read_target(scenario, target, tolerance=tolerance)
    assert t.comparator == "="
    assert t.value == 1
    assert t.band == pytest.approx((0.95, 1.05), abs=1e-15)


@pytest.mark.parametrize(
    ("target", "tolerance", "fragment"),
    [
        (f"{RATIO} = 1 ± lots", None, "tolerance 'lots' is not a number >= 0"),
        (f"{RATIO} = 1 ± -0.1", None, "is not a number >= 0"),
        (f"{RATIO} >= 1 ± 0.1", None, "a tolerance goes with '='"),
        (f"{RATIO} = 0 ± 5%", None, "a relative tolerance needs a target value other than 0"),
        (f"{RATIO} = 1 ± 0.1", "0.05", "gives a tolerance already"),
        (f"{RATIO} = 1", "x", "--tolerance 'x': tolerance 'x' is not a number"),
    ],
)
def test_a_bad_tolerance_is_one_line_and_writes_nothing(
    tmp_path, capsys, target, tolerance, fragment
):
    out = tmp_path / "t"
    args = ["tune", str(BOSS), "--vary", "Troll Chief.readiness=1..3", "--target", target]
    if tolerance is not None:
        args += ["--tolerance", tolerance]
    assert main([*args, "--rounds", "1000", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("simkit: error: ") and captured.err.count("\n") == 1
    assert fragment in captured.err
    assert not out.exists()


@pytest.fixture(scope="module")
def banded() -> simkit.Tuning:
    # max_rounds = the grid's rounds: no point is played again, the decisions are raw
    return simkit.tune(
        BOSS, "Troll Chief.readiness=1..10", BAND, rounds=ROUNDS, rng=5, max_rounds=ROUNDS
    )


def test_the_decision_reads_the_whole_interval_against_the_band(banded):
    low, high = 0.95, 1.05
    seen = set()
    for p in banded.points:
        e = p.estimate
        inside = low <= e.ci_low and e.ci_high <= high
        outside = e.ci_high < low or e.ci_low > high
        want = "met" if inside else "not met" if outside else "undecided"
        assert p.decision == want
        assert p.met == inside
        seen.add(want)
    assert "not met" in seen


def test_undecided_says_about_how_many_more_rounds():
    # a band edge inside readiness 8's interval: undecided there
    base = simkit.tune(BOSS, "Troll Chief.readiness=8", f"{RATIO} = 1", rounds=ROUNDS, rng=5)
    e = base.points[0].estimate
    edge = e.mean + 0.5 * (e.ci_high - e.mean)  # the upper edge of the band
    t = simkit.tune(
        BOSS,
        "Troll Chief.readiness=8",
        f"{RATIO} = {edge - 0.01} ± 0.01",
        rounds=ROUNDS,
        rng=5,
        max_rounds=ROUNDS,
    )
    p = t.points[0]
    assert p.decision == "undecided"
    h = max(e.mean - e.ci_low, e.ci_high - e.mean)
    d = abs(e.mean - edge)
    assert p.more == pytest.approx(ROUNDS * (h / d) ** 2 - ROUNDS, rel=1e-6)
    assert "Undecided" in t.answer and "needs about" in t.answer
    assert simkit.analysis.tune.about(p.more) in t.answer


def test_rounds_are_added_only_where_they_decide_the_answer():
    target = f"{RATIO} = 1 ± 0.01"
    t = simkit.tune(BOSS, "Troll Chief.readiness=5..9", target, rounds=ROUNDS, rng=5)
    pair = simkit.analysis.tune.bracket(t.target, list(t.points))
    assert pair is not None
    for p in t.points:
        if p in pair:
            continue
        assert p.rounds == ROUNDS
    grown = [p for p in t.points if p.rounds > ROUNDS]
    assert grown and all(p in pair for p in grown)
    scenario = load_scenario(BOSS)
    for p in grown:  # the same as a direct run of that many rounds with the same seed
        changed = with_changes(scenario, combatants={"Troll Chief": {"readiness": p.values[0]}})
        direct = simkit.run(changed, rounds=p.rounds, rng=5)
        want = direct.estimate("side:monsters", "action_economy")
        assert math.isclose(p.estimate.mean, want.mean, rel_tol=1e-12)
        assert p.rounds <= 64 * ROUNDS
    assert list(t.table["rounds"]) == [p.rounds for p in t.points]


def test_without_a_tolerance_the_answer_says_what_equals_means(bracket):
    assert "'=' without a tolerance: met where the 95% interval covers 1" in bracket.answer
    assert all(p.decision in ("met", "not met") for p in bracket.points)


# --------------------------------------------------------------------------- finer knobs
def test_between_two_values_names_the_finer_knobs_of_that_combatant(bracket):
    assert bracket.finer == ("Troll Chief.advantage",)
    assert "Finer knobs of Troll Chief that could close it: Troll Chief.advantage" in (
        bracket.answer
    )
    assert "--refine" in bracket.answer


def test_vtm_names_wound_penalty_and_perception_nothing():
    vtm = simkit.tune(
        ROOT / "scenarios" / "vtm_duel.toml",
        "Duelist.rating=1..6",
        "Duelist.first_action = 0.6",
        rounds=5000,
        rng=3,
    )
    assert simkit.analysis.tune.bracket(vtm.target, list(vtm.points)) is not None
    assert vtm.finer == ("Duelist.wound_penalty",)
    perception = simkit.tune(
        ROOT / "scenarios" / "perception_gunnar_wolf.toml",
        "Gunnar.perception=3..8",
        "Gunnar.first_action = 0.45",
        rounds=5000,
        rng=3,
    )
    assert simkit.analysis.tune.bracket(perception.target, list(perception.points)) is not None
    assert perception.finer == ()
    assert "Finer knobs" not in perception.answer


def test_refine_tunes_the_finer_knob_at_both_values():
    target = f"{RATIO} = 1 ± 0.01"
    t = simkit.tune(BOSS, "Troll Chief.readiness=6..9", target, rounds=5000, rng=5, refine=True)
    pair = simkit.analysis.tune.bracket(t.target, list(t.points))
    assert [r.value for r in t.refined] == [p.values[0] for p in pair]
    scenario = load_scenario(BOSS)
    for r in t.refined:
        assert r.tuning.fields == ["Troll Chief.advantage"]
        fixed = with_changes(scenario, combatants={"Troll Chief": {"readiness": r.value}})
        direct = simkit.tune(fixed, "Troll Chief.advantage=0..10", target, rounds=5000, rng=5)
        assert [p.estimate for p in r.tuning.points] == [p.estimate for p in direct.points]
        assert f"With Troll Chief.readiness = {r.value}: " in t.answer
    table = t.table
    assert set(table["stage"]) == {"grid"} | {f"refine at {r.fixed}" for r in t.refined}
    assert len(table) == len(t.points) + sum(len(r.tuning.points) for r in t.refined)


def test_cli_tune_with_a_tolerance_prints_the_decision(tmp_path, capsys):
    out = tmp_path / "tune"
    args = ["tune", str(BOSS), "--vary", "Troll Chief.readiness=6..9", "--target", f"{RATIO} = 1"]
    args += ["--tolerance", "5%", "--rounds", "5000", "--seed", "5", "--out", str(out)]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"target: {RATIO} = 1 ± 5% (0.95 to 1.05)\n")
    assert "decision" in text.splitlines()[1]
    saved = pd.read_csv(out / "tune.csv")
    assert {"decision", "rounds", "more_rounds"} <= set(saved.columns)
    assert main([*args[:-2], "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["parameters"]["band"] == pytest.approx([0.95, 1.05])
    assert [r["decision"] for r in document["rows"]] == list(saved["decision"])


def test_the_plot_legend_says_meets_the_target_only_when_something_does(bracket):
    def legend(t):
        fig = t.plot()
        return [x.get_text() for x in fig.axes[0].get_legend().get_texts()]

    far = simkit.tune(BOSS, "Troll Chief.readiness=1..3", f"{RATIO} = 5 ± 0.1", rounds=2000, rng=5)
    assert not any(p.met for p in far.points)
    assert "meets the target" not in legend(far)
    near = simkit.tune(BOSS, "Troll Chief.readiness=7..9", f"{RATIO} = 1 ± 0.1", rounds=2000, rng=5)
    assert any(p.met for p in near.points)
    assert "meets the target" in legend(near)


def test_cli_refine_prints_each_refinement(capsys):
    args = ["tune", str(BOSS), "--vary", "Troll Chief.readiness=6..9", "--target"]
    args += [f"{RATIO} = 1 ± 0.01", "--rounds", "3000", "--seed", "5"]
    assert main(args) == 0
    plain = capsys.readouterr().out
    assert "(--refine tunes them)" in " ".join(plain.split())
    assert "refine: " not in plain
    assert main([*args, "--refine"]) == 0
    text = capsys.readouterr().out
    direct = simkit.tune(
        BOSS, "Troll Chief.readiness=6..9", f"{RATIO} = 1 ± 0.01", rounds=3000, rng=5, refine=True
    )
    assert direct.refined
    for r in direct.refined:
        assert f"refine: {r.fixed}\n" in text
    assert text.count("Troll Chief.advantage  ") == len(direct.refined)


def test_a_notebook_shows_the_decision():
    t = simkit.tune(BOSS, "Troll Chief.readiness=7..8", BAND, rounds=2000, rng=5)
    page = t._repr_html_()
    assert "decision" in page and "0.95 to 1.05" in page
