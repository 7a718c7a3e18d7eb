"""``simkit policies`` and objectives: exact answers on small fights, clean errors.

Exact values come from the vtm twin (tests/twins/vtm.py) enumerated with
``fractions.Fraction`` (tests/enumerate.py): every variant's default objective, so every
gain and the best value of every coordinate, exactly.  The search's estimates must
cover them within their paired intervals, widened for the number of comparisons made
in one test (Bonferroni: each interval at 1 - 0.05 / m, so that all m hold together
with 95% probability; the seed is fixed, so the test is deterministic).
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from functools import cache
from statistics import NormalDist
from typing import Any

import pytest
from enumerate import expectation
from twins import vtm as twin

import simkit
from simkit.analysis.objectives import parse_objective, split_terms
from simkit.analysis.tune import available_metrics
from simkit.cli import main
from simkit.engine import seed_sequence, simulate
from simkit.metrics import SIDE, source_estimate
from simkit.scenario import scenario_from_dict, with_changes

ROUNDS = 100_000


def vtm_fight(*combatants: dict[str, Any], name: str = "fight") -> Any:
    return scenario_from_dict(
        {
            "scenario": {"name": name, "system": "vtm", "rounds": ROUNDS, "seed": 11},
            "combatant": list(combatants),
        }
    )


@cache
def exact_counts(scenario: Any) -> dict[Any, Fraction]:
    return expectation(lambda draws: twin.play_round(scenario, draws))


def exact_objective(scenario: Any, side: str) -> Fraction:
    """The default objective of ``side`` (OBJ-1), exactly: attacks the other sides
    receive without a normal defense minus those ``side`` receives without one."""
    ex = exact_counts(scenario)
    total = Fraction(0)
    for c in scenario.combatants:
        landed = ex.get((c.name, "attacks_received"), 0) - ex.get((c.name, "defended"), 0)
        total += -landed if c.side == side else landed
    return total


def check_exact(scenario: Any) -> None:
    search = simkit.policies(scenario, rounds=ROUNDS)
    rows = search.alternatives
    m = len(rows) + len(search.choices)
    q = NormalDist().inv_cdf(1 - 0.025 / m)
    for ch in search.choices:
        c = ch.coordinate
        written = exact_objective(scenario, c.side)
        exact = {}
        for value, gain in ch.gains:
            variant = with_changes(scenario, combatants={c.group: {c.field: value}})
            exact[value] = exact_objective(variant, c.side) - written
            assert abs(gain.difference - float(exact[value])) <= q * gain.se + 1e-12, (
                c.group,
                c.field,
                value,
                gain,
                float(exact[value]),
            )
        # Some coordinate must matter, or the test could not fail on a wrong best.
        # The value found best is best exactly, or within its own interval of the best.
        value, gain = ch.best
        top = max(exact.values())
        assert float(top - exact[value]) <= q * max(gain.se, 1e-12) + 1e-12, (c.key, value, exact)


def test_some_gains_are_clear_in_the_exact_cases():
    """An attack_share of 0.5 makes an abort (V5) trade half an attack for a defense and
    a delay (V4) change who is attacked before acting: the checks above compare real,
    clear differences (exact: Orc's abort = always gains, Goblin's delay = never loses)."""
    fight = two_against_one()
    search = simkit.policies(fight, rounds=ROUNDS)
    verdicts = {ch.coordinate.key: ch.verdict for ch in search.choices}
    assert verdicts[("Orc", "abort")] == "clear"
    assert verdicts[("Goblin", "delay")] == "file's value best"
    written = exact_objective(fight, "b")
    never = with_changes(fight, combatants={"Goblin": {"delay": "never"}})
    assert exact_objective(never, "b") < written


def test_a_vtm_duel_best_policies_and_gains_equal_the_exact_answer():
    duel = vtm_fight(
        {"name": "Ash", "side": "a", "rating": 6, "extra_actions": 1},
        {"name": "Bran", "side": "b", "rating": 5, "abort": "always", "attack_share": 0.5},
    )
    check_exact(duel)


def two_against_one() -> Any:
    return vtm_fight(
        {"name": "Hero", "side": "a", "rating": 7, "abort": "before_acting", "attack_share": 0.5},
        {"name": "Orc", "side": "b", "rating": 5, "attack_share": 0.5},
        {"name": "Goblin", "side": "b", "rating": 3, "delay": "until_enemy_acts"},
    )


@pytest.mark.slow  # about 40 s: 18 variants enumerated exactly
def test_two_against_one_best_policies_and_gains_equal_the_exact_answer():
    fight = two_against_one()
    choices = simkit.policies(fight, rounds=64).choices
    fields = {(c.coordinate.group, c.coordinate.field) for c in choices}
    assert ("Hero", "target") in fields and ("Orc", "target") not in fields  # one opponent
    check_exact(fight)


def test_one_term_objective_equals_the_metric_and_its_interval():
    """A single reference, through the objective's cycle sums, is the metric itself:
    the same mean and standard error (metrics.estimates)."""
    scenario = simkit.validate("scenarios/boss_fight.toml")
    obj = parse_objective("side:party.actions", scenario, available_metrics(scenario))
    raw = simulate(scenario, 20_000, seed_sequence(3), pairs=obj.pairs)
    e = obj.estimate(raw)
    m = source_estimate(raw.layout, raw.sums, raw.layout.source(SIDE, "party"), "actions")
    assert e.mean == pytest.approx(m.mean, rel=1e-12)
    assert e.se == pytest.approx(m.se, rel=1e-9)
    # a linear combination: its se is not the root of the summed variances
    two = parse_objective(
        "side:party.actions - side:monsters.actions", scenario, available_metrics(scenario)
    )
    raw2 = simulate(scenario, 20_000, seed_sequence(3), pairs=two.pairs)
    e2 = two.estimate(raw2)
    a = source_estimate(raw2.layout, raw2.sums, raw2.layout.source(SIDE, "monsters"), "actions")
    assert e2.mean == pytest.approx(m.mean - a.mean, rel=1e-12)
    assert not math.isclose(e2.se, math.hypot(m.se, a.se), rel_tol=1e-3)


def test_objective_text_splits_at_spaced_signs_only():
    assert split_terms("side:a.x - 0.5*side:b.y + Half-Orc.actions") == [
        (1, "side:a.x"),
        (-1, "0.5*side:b.y"),
        (1, "Half-Orc.actions"),
    ]
    assert split_terms("-side:a.x") == [(-1, "side:a.x")]


@pytest.mark.parametrize(
    ("objective", "says"),
    [
        ("side:prty.actions", "did you mean 'party'"),
        ("side:party.actoins", "did you mean 'actions'"),
        ("partyy=side:party.actions", "did you mean 'party'"),
        ("x*side:party.actions", "is not a number"),
        ("side:party.actions -", "a term is expected"),
    ],
)
def test_a_bad_objective_is_one_error_line(objective, says, capsys):
    status = main(["policies", "scenarios/boss_fight.toml", "--objective", objective])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("simkit: error: --objective") and err.count("\n") == 1
    assert says in err


def test_an_unknown_policy_value_is_one_error_line(tmp_path, capsys):
    path = tmp_path / "bad.toml"
    path.write_text(
        '[scenario]\nname = "x"\nsystem = "vtm"\n\n'
        '[[combatant]]\nname = "A"\nside = "a"\nrating = 3\nabort = "sometimes"\n\n'
        '[[combatant]]\nname = "B"\nside = "b"\nrating = 3\n'
    )
    status = main(["policies", str(path)])
    captured = capsys.readouterr()
    assert status == 2 and captured.out == ""
    assert captured.err.startswith("simkit: error:") and "abort" in captured.err


def test_policies_print_through_render_in_every_format(capsys):
    args = ["policies", "scenarios/vtm_duel.toml", "--rounds", "2000"]
    assert main(args) == 0
    table = capsys.readouterr().out
    assert "objective of" in table and "as written" in table
    assert max(len(line) for line in table.splitlines()) <= 100
    assert main([*args, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["kind"] == "policies"
    assert {"combatant", "field", "as_written", "best", "gain", "verdict"} <= set(data["rows"][0])
    assert any("default objective" in n for n in data["notes"])
    assert main([*args, "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("combatant,side,field,as_written,best")


def test_the_value_object_answers_and_draws(tmp_path):
    search = simkit.policies("scenarios/vtm_duel.toml", rounds=2000)
    assert search.answer
    assert "<table" in search._repr_html_()
    fig = search.plot()
    assert fig.axes
    ranked = list(search.table.gain)
    assert ranked == sorted(ranked, reverse=True)


def test_a_report_names_every_combatants_best_policy_and_the_equilibrium():
    from simkit.api import make_report

    rendered = make_report("scenarios/vtm_duel.toml", rounds=4000)
    search = rendered.data.best_policies
    assert search is not None and search.rounds == 4000
    assert "equilibrium" in rendered.verdict[-1]
    assert ("not at equilibrium" in rendered.verdict[-1]) == (not search.as_written_is_equilibrium)
    text = rendered.files["report.md"].decode()
    assert "## Best policy for every combatant" in text
    for ch in search.choices:
        assert ch.coordinate.group in text


def test_an_equilibrium_found_after_screening_holds_at_full_rounds():
    """From 40,000 rounds the turns are screened at a quarter of the rounds first; the
    search then goes on at full rounds, so an equilibrium it reports is one at full
    rounds: played as written, its policies leave no single change a clear gain."""
    fight = two_against_one()
    search = simkit.policies(fight, rounds=40_000, equilibrium=True)
    e = search.equilibrium
    assert e.screen_rounds == 10_000
    assert e.status == "equilibrium"
    assert e.steps, "this fight has clear moves to make"
    changes: dict[str, dict[str, Any]] = {}
    for (group, name), value in e.profile.items():
        changes.setdefault(group, {})[name] = value
    again = simkit.policies(with_changes(fight, combatants=changes), rounds=40_000)
    assert again.as_written_is_equilibrium


def test_a_guard_change_shows_the_protected_allys_side(capsys):
    """R7a: beside the gain of Bran's side when Bran stops guarding Mira, the search
    gives what it costs Mira (attacks left unanswered, answered only hastily): exactly
    `simkit compare` of the same two files on the same dice."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scenarios" / "bodyguard.toml"
    search = simkit.policies(path, rounds=20_000, rng=3)
    bran = [g for g in search.guarded if g.group == "Bran" and g.field == "guard"]
    assert bran, search.guarded
    value = bran[0].value
    assert {(g.ally, g.metric) for g in bran} >= {("Mira", "undefended"), ("Mira", "hasty_only")}
    compared = simkit.compare(path, set=[f"Bran.guard={value}"], rounds=20_000, rng=3)
    table = compared.table
    for g in bran:
        row = table[(table.combatant == g.ally) & (table.metric == g.metric)].iloc[0]
        assert g.estimate.difference == pytest.approx(row.difference, rel=1e-12, abs=1e-12)
    mira = next(g for g in bran if g.ally == "Mira" and g.metric == "undefended")
    if value == "never":  # Mira loses her bodyguard: more of her attacks go unanswered
        assert mira.estimate.ci_low > 0
    assert main(["policies", str(path), "--rounds", "20000", "--seed", "3"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "For the allies a guard protects" in out
    assert f"Bran.guard = {value}: Mira's attacks left unanswered" in out
    assert "as written" in out and "[Mira]" in out  # a list of names as the file writes it
