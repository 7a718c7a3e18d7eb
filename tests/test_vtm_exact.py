"""vtm Monte Carlo estimates against exact probabilities of small scenarios.

Exact values come from two independent places:

* closed forms written here from RULES.md (two d10 enumerated with ``Fraction``),
  for the worked example and one case per rule;
* the twin (``tests/naive_vtm.py``) driven by a draw source that enumerates every
  d10 outcome and every random choice (tie order, attack_share, target), each path
  weighted by its exact probability.

Every metric of ``simkit.run(...).table`` must lie within 5 standard errors of the
exact value (exact equality when the standard error is 0).
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from itertools import product

import pytest
from naive_vtm import RoundOutcome, play_round, row_maker

import simkit
from simkit import engine
from simkit.scenario import Scenario, scenario_from_dict

ROUNDS = 200_000
D10 = range(1, 11)


class PathDraws:
    """A draw source that follows a given list of choices, then takes choice 0.

    It records every choice, how many there were to pick from, and the probability of
    the path so far, so that all paths can be walked like an odometer.
    """

    def __init__(self, prefix: list[int]) -> None:
        self.prefix = prefix
        self.choices: list[int] = []
        self.arity: list[int] = []
        self.probability = Fraction(1)

    def _choose(self, weights: list[Fraction]) -> int:
        pos = len(self.choices)
        k = self.prefix[pos] if pos < len(self.prefix) else 0
        self.choices.append(k)
        self.arity.append(len(weights))
        self.probability *= weights[k]
        return k

    def roll(self, sides: int) -> int:
        return self._choose([Fraction(1, sides)] * sides) + 1

    def below(self, n: int) -> int:
        if n <= 1:
            return 0  # draws nothing
        return self._choose([Fraction(1, n)] * n)

    def chance(self, threshold: int) -> bool:
        p = Fraction(threshold, 2**53)
        return self._choose([p, 1 - p]) == 0


def every_round(scenario: Scenario) -> Iterator[tuple[Fraction, RoundOutcome]]:
    """Every possible round of ``scenario`` with its exact probability."""
    prefix: list[int] = []
    while True:
        draws = PathDraws(prefix)
        outcome = play_round(scenario, draws)
        yield draws.probability, outcome
        k = len(draws.choices) - 1
        while k >= 0 and draws.choices[k] + 1 == draws.arity[k]:
            k -= 1
        if k < 0:
            return
        prefix = draws.choices[:k] + [draws.choices[k] + 1]


def labels(layout) -> list[tuple[str, str]]:
    """(combatant, metric) of every position of a layout, as in ``Result.table``."""
    out = [("", "")] * layout.size
    for i, name in enumerate(layout.names):
        for m in layout.counts:
            out[layout.count_index(i, m)] = (name, m)
        for j, other in enumerate(layout.names):
            out[layout.before_index(i, j)] = (name, f"acts_before.{other}")
        for k in range(layout.dist_sizes[i]):
            out[layout.dist_index(i, k)] = (name, f"actions_dist.{k}")
    for k, m in enumerate(layout.scenario_counts):
        out[layout.scenario_offset + k] = ("", m)
    return out


def exact_metrics(scenario: Scenario) -> dict[tuple[str, str], Fraction]:
    """Exact per-round means of every metric, by enumeration of the twin."""
    layout = engine.layout_for(scenario)
    row = row_maker(layout)
    total = [Fraction(0)] * layout.size
    mass = Fraction(0)
    for p, outcome in every_round(scenario):
        mass += p
        for m, v in enumerate(row(outcome)):
            if v:
                total[m] += p * v
    assert mass == 1
    return dict(zip(labels(layout), total, strict=True))


def assert_monte_carlo_matches(scenario: Scenario, exact: dict, seed: int = 2026) -> None:
    result = simkit.run(scenario, rounds=ROUNDS, rng=seed, workers=1)
    checked = 0
    for row in result.table.itertuples(index=False):
        value = exact[(row.combatant, row.metric)]
        if row.se == 0:
            assert row.mean == float(value), (row.combatant, row.metric, row.mean, value)
        else:
            assert abs(row.mean - float(value)) <= 5 * row.se, (
                row.combatant,
                row.metric,
                row.mean,
                float(value),
                row.se,
            )
        checked += 1
    assert checked == len(result.table) > 0


def duel(a: dict, b: dict, tie: str = "simultaneous", extra: list | None = None) -> Scenario:
    return scenario_from_dict(
        {
            "scenario": {"name": "duel", "system": "vtm"},
            "rules": {"tie": tie},
            "combatant": [
                {"name": "A", "side": "a", **a},
                {"name": "B", "side": "b", **b},
                *(extra or []),
            ],
        }
    )


def p_two_dice(event) -> Fraction:
    """P(event(d_a, d_b)) over two independent d10."""
    return Fraction(sum(1 for da, db in product(D10, D10) if event(da, db)), 100)


# ------------------------------------------------------------------ closed forms
def test_worked_example_rating_5_vs_3():
    """RULES.md: the first goes first unless the second rolls at least 3 more; P = 0.72."""
    p_first = p_two_dice(lambda da, db: 5 + da >= 3 + db)  # equal totals: higher rating
    assert p_first == Fraction(72, 100)
    scenario = duel({"rating": 5}, {"rating": 3})
    exact = exact_metrics(scenario)
    assert exact[("A", "first_action")] == Fraction(72, 100)
    assert exact[("A", "acts_before.B")] == Fraction(72, 100)
    assert exact[("B", "first_action")] == Fraction(28, 100)
    assert exact[("B", "attacked_before_acting")] == Fraction(72, 100)  # A attacks first
    assert exact[("A", "known_declarations")] == Fraction(72, 100)  # V3: B declared first
    assert exact[("", "simultaneous")] == 0
    assert_monte_carlo_matches(scenario, exact)


def test_worked_example_from_dexterity_and_wits():
    scenario = duel({"dexterity": 2, "wits": 3}, {"dexterity": 1, "wits": 2})
    exact = exact_metrics(scenario)
    assert exact[("A", "first_action")] == Fraction(72, 100)
    assert_monte_carlo_matches(scenario, exact)


def test_tie_simultaneous():
    """V2: equal totals and ratings share a slot; both act first; neither knows the other."""
    scenario = duel({"rating": 4}, {"rating": 4})
    exact = exact_metrics(scenario)
    p_tie = p_two_dice(lambda da, db: da == db)
    assert exact[("", "simultaneous")] == p_tie == Fraction(1, 10)
    assert exact[("A", "first_action")] == p_two_dice(lambda da, db: da >= db) == Fraction(55, 100)
    assert exact[("A", "acts_before.B")] == Fraction(45, 100)
    assert exact[("A", "known_declarations")] == Fraction(45, 100)
    assert exact[("A", "attacked_before_acting")] == Fraction(45, 100)  # same slot: not before
    assert_monte_carlo_matches(scenario, exact)


def test_tie_random():
    """V2 variant: a fair coin among the tied; nobody shares a slot."""
    scenario = duel({"rating": 4}, {"rating": 4}, tie="random")
    exact = exact_metrics(scenario)
    assert exact[("", "simultaneous")] == 0
    assert exact[("A", "first_action")] == Fraction(45, 100) + Fraction(1, 10) / 2
    assert exact[("A", "known_declarations")] == Fraction(1, 2)
    assert_monte_carlo_matches(scenario, exact)


def test_wound_penalty_counts_on_the_roll_not_the_tie_break():
    """V7/V1: 5 - 2 vs 3: equal bases; equal totals go to the higher rating (5)."""
    scenario = duel({"rating": 5, "wound_penalty": 2}, {"rating": 3})
    exact = exact_metrics(scenario)
    assert exact[("A", "first_action")] == p_two_dice(lambda da, db: da >= db)
    assert exact[("", "simultaneous")] == 0
    assert_monte_carlo_matches(scenario, exact)


def test_abort_gives_up_the_action_for_a_defense():
    """V5: B (abort "always") attacked before acting: one abort, one defense, no action."""
    scenario = duel({"rating": 5}, {"rating": 3, "abort": "always"})
    exact = exact_metrics(scenario)
    for metric in ("aborts", "defenses", "no_action", "attacked_before_acting"):
        assert exact[("B", metric)] == Fraction(72, 100), metric
    assert exact[("B", "actions")] == Fraction(28, 100)
    assert exact[("B", "actions_dist.0")] == Fraction(72, 100)
    assert exact[("A", "defenses")] == 0  # without abort there is no defense
    assert exact[("A", "attacked_before_acting")] == Fraction(28, 100)
    assert_monte_carlo_matches(scenario, exact)


def test_delay_until_enemy_acts():
    """V4: A is always faster, delays, and acts right after B's action."""
    scenario = duel({"rating": 9, "delay": "until_enemy_acts"}, {"rating": 0})
    exact = exact_metrics(scenario)
    assert exact[("B", "first_action")] == 1
    assert exact[("B", "acts_before.A")] == 1
    assert exact[("A", "attacked_before_acting")] == 1
    assert exact[("A", "known_declarations")] == 1  # declared after B all the same (V3)
    assert exact[("A", "actions")] == 1
    assert_monte_carlo_matches(scenario, exact)


def test_both_delay_then_act_last_in_initiative_order():
    """V4: no opponent acts before the normal actions end; the faster delayer goes first."""
    scenario = duel(
        {"rating": 5, "delay": "until_enemy_acts"}, {"rating": 3, "delay": "until_enemy_acts"}
    )
    exact = exact_metrics(scenario)
    assert exact[("A", "first_action")] == Fraction(72, 100)
    assert exact[("B", "attacked_before_acting")] == Fraction(72, 100)
    assert_monte_carlo_matches(scenario, exact)


def test_several_actions_and_extra_actions():
    """Declared actions in a row, then V6; the defender aborts its only declared action."""
    scenario = duel(
        {"rating": 9, "actions": 2, "extra_actions": 1},
        {"rating": 0, "abort": "always", "extra_actions": 1},
    )
    exact = exact_metrics(scenario)
    assert exact[("A", "actions")] == 3
    assert exact[("A", "actions_dist.3")] == 1
    assert exact[("B", "aborts")] == 1  # the second attack finds no declared action left
    assert exact[("B", "actions")] == 1  # the extra action is never given up
    assert exact[("B", "attacked_before_acting")] == 1
    assert_monte_carlo_matches(scenario, exact)


# ------------------------------------------------------------------ enumeration only
@pytest.mark.parametrize(
    "data",
    [
        # attack_share, a group target, a three-way random tie, aborts
        {
            "rules": {"tie": "random"},
            "combatant": [
                {"name": "A", "side": "a", "rating": 2, "attack_share": 0.5, "target": "G"},
                {"name": "G", "side": "g", "rating": 2, "count": 2, "abort": "always"},
            ],
        },
        # three sides, named targets, delay and abort together, shared slots
        {
            "rules": {"tie": "simultaneous"},
            "combatant": [
                {"name": "A", "side": "a", "rating": 3, "delay": "until_enemy_acts",
                 "target": "C"},
                {"name": "B", "side": "b", "rating": 3, "abort": "always", "actions": 2,
                 "target": "A"},
                {"name": "C", "side": "c", "rating": 3, "abort": "always", "target": "B"},
            ],
        },
        # two delayers of one side and one of the other, several actions
        {
            "rules": {"tie": "simultaneous"},
            "combatant": [
                {"name": "A", "side": "a", "rating": 2, "delay": "until_enemy_acts",
                 "actions": 2},
                {"name": "B", "side": "a", "rating": 1, "delay": "until_enemy_acts"},
                {"name": "C", "side": "c", "rating": 2, "delay": "until_enemy_acts",
                 "abort": "always"},
            ],
        },
        # extra actions in a shared slot, wound penalty, attack_share 0 and 0.25
        {
            "rules": {"tie": "simultaneous"},
            "combatant": [
                {"name": "A", "side": "a", "rating": 4, "wound_penalty": 1, "extra_actions": 2,
                 "attack_share": 0.25},
                {"name": "B", "side": "b", "rating": 3, "extra_actions": 1, "abort": "always",
                 "attack_share": 0.0},
            ],
        },
    ],
    ids=["share-group-random", "three-sides-delay-abort", "delayers", "extra-wounds-shares"],
)  # fmt: skip
def test_small_scenarios_by_enumeration(data):
    scenario = scenario_from_dict({"scenario": {"name": "small", "system": "vtm"}, **data})
    exact = exact_metrics(scenario)
    assert_monte_carlo_matches(scenario, exact)


def test_enumeration_walks_every_path():
    """The odometer over choices visits each of the 100 dice pairs exactly once."""
    scenario = duel({"rating": 5, "attack_share": 0.0}, {"rating": 3, "attack_share": 0.0})
    paths = list(every_round(scenario))
    assert len(paths) == 100
    assert sum(p for p, _ in paths) == 1
