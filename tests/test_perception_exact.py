"""Exact probabilities of small perception scenarios against the Monte Carlo estimates.

``exact_expectations`` enumerates every d10 outcome and every fair random order
(each of the ``m!`` orders of ``m`` tied with probability ``1/m!``) with
``fractions.Fraction``; it follows RULES.md P1-P4 directly and shares no code with
the kernel or the twin (the attack draws enter through their probabilities: a
combatant is attacked before acting unless every opponent acting before it spares
it).  Every metric of ``simkit.run`` must lie within 5 standard errors of its exact
value (a standard error of 0 demands equality).  The worked example of RULES.md
(Gunnar against the wolf) is checked in both modes, exactly, by Monte Carlo, and on
the seed's own rolls through the twin and the kernel.
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction
from itertools import permutations, product
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from kernel_drivers import compile_for, perception_round_states
from naive_perception import counts_from_row, play_round
from naive_rng import NaiveStream, key_for_round_words, round_words, words_for_outputs

import simkit
from simkit.scenario import Scenario, load_scenario, scenario_from_dict
from simkit.systems.perception import kernel as perception
from simkit.systems.stream import chance_threshold

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = 200_000
Z = 5  # tolerance in standard errors

Outcome = tuple[tuple[int, ...], Fraction]  # (slot of each combatant, probability)


def _pattern(keys: list[tuple[int, int]]) -> tuple[int, ...]:
    """Dense rank of every key, 0 for the highest (equal keys share a rank)."""
    distinct = sorted(set(keys), reverse=True)
    return tuple(distinct.index(k) for k in keys)


def _orders_of_groups(groups: list[list[int]]) -> list[tuple[list[list[int]], Fraction]]:
    """Every way to put each group in a fair random order, with its probability."""
    choices = [list(permutations(g)) for g in groups]
    weight = Fraction(1, math.prod(len(c) for c in choices))
    return [([list(p) for p in combo], weight) for combo in product(*choices)]


def _individual_outcomes(scenario: Scenario) -> list[Outcome]:
    """P1: one d10 + perception each; descending, higher perception, then the tie rule."""
    per = [c["perception"] for c in scenario.combatants]
    n = len(per)
    patterns: Counter[tuple[int, ...]] = Counter()
    for dice in product(range(1, 11), repeat=n):
        patterns[_pattern([(d + p, p) for d, p in zip(dice, per, strict=True)])] += 1
    out: list[Outcome] = []
    for pattern, count in patterns.items():
        p_pattern = Fraction(count, 10**n)
        levels = [[i for i in range(n) if pattern[i] == r] for r in range(max(pattern) + 1)]
        if scenario.rules["tie"] == "simultaneous":
            slots = tuple(sum(len(lv) for lv in levels[: pattern[i]]) for i in range(n))
            out.append((slots, p_pattern))
            continue
        for ordered, weight in _orders_of_groups(levels):
            sequence = [i for level in ordered for i in level]
            slots = tuple(sequence.index(i) for i in range(n))
            out.append((slots, p_pattern * weight))
    return out


def _group_outcomes(scenario: Scenario) -> list[Outcome]:
    """P2: one d10 per side plus its group perception; sides, then members within."""
    combatants = scenario.combatants
    sides = scenario.sides
    members = [[i for i, c in enumerate(combatants) if c.side == s] for s in sides]
    if scenario.rules["group_stat"] == "highest":
        stat = [max(combatants[i]["perception"] for i in m) for m in members]
    else:
        stat = [
            next(combatants[i]["perception"] for i in m if combatants[i]["commander"])
            for m in members
        ]
    within = (
        _orders_of_groups(members)
        if scenario.rules["within_side"] == "random"
        else [(members, Fraction(1))]
    )
    patterns: Counter[tuple[int, ...]] = Counter()
    for dice in product(range(1, 11), repeat=len(sides)):
        patterns[_pattern([(d + g, g) for d, g in zip(dice, stat, strict=True)])] += 1
    out: list[Outcome] = []
    for pattern, count in patterns.items():
        p_pattern = Fraction(count, 10 ** len(sides))
        levels = [
            [s for s in range(len(sides)) if pattern[s] == r] for r in range(max(pattern) + 1)
        ]
        for side_levels, w_sides in _orders_of_groups(levels):
            side_order = [s for level in side_levels for s in level]
            for member_orders, w_members in within:
                sequence = [i for s in side_order for i in member_orders[s]]
                slots = tuple(sequence.index(i) for i in range(len(combatants)))
                out.append((slots, p_pattern * w_sides * w_members))
    return out


def exact_expectations(scenario: Scenario) -> dict[tuple[str, str], Fraction]:
    """Every per-combatant metric's exact per-round mean, keyed (name, metric)."""
    if scenario.rules["mode"] == "individual":
        outcomes = _individual_outcomes(scenario)
    else:
        outcomes = _group_outcomes(scenario)
    assert sum(p for _, p in outcomes) == 1
    cs = scenario.combatants
    n = len(cs)
    names = scenario.names
    # P(j's one action is an attack on i) = attack_share_j / len(targets_j), if i is one
    hit = [[Fraction(0)] * n for _ in range(n)]
    for j, c in enumerate(cs):
        targets = scenario.targets(j)
        share = Fraction(chance_threshold(c["attack_share"]), 2**53)
        for i in targets:
            hit[j][i] = share / len(targets)
    exp: dict[tuple[str, str], Fraction] = Counter()
    for slots, p in outcomes:
        for i in range(n):
            opp = [j for j in range(n) if cs[j].side != cs[i].side]
            exp[(names[i], "first_action")] += p * (slots[i] == 0)
            spared = math.prod(
                (1 - hit[j][i] for j in range(n) if slots[j] < slots[i]), start=Fraction(1)
            )
            exp[(names[i], "attacked_before_acting")] += p * (1 - spared)
            exp[(names[i], "known_intents")] += p * sum(slots[j] > slots[i] for j in opp)
            exp[(names[i], "intent_disclosed")] += p * any(slots[j] < slots[i] for j in opp)
            for j in range(n):
                if j != i:
                    exp[(names[i], f"acts_before.{names[j]}")] += p * (slots[i] < slots[j])
    for name in names:  # P4: everyone acts exactly once
        exp[(name, "actions")] = Fraction(1)
        exp[(name, "no_action")] = Fraction(0)
        exp[(name, "actions_dist.0")] = Fraction(0)
        exp[(name, "actions_dist.1")] = Fraction(1)
    return dict(exp)


def _scenario(name: str, rules: dict[str, Any], *combatants: dict[str, Any]) -> Scenario:
    return scenario_from_dict(
        {
            "scenario": {"name": name, "system": "perception"},
            "rules": rules,
            "combatant": list(combatants),
        }
    )


SCENARIOS: dict[str, Scenario] = {
    "individual, random ties": _scenario(
        "individual, random ties",
        {"tie": "random"},
        {"name": "A", "side": "x", "perception": 2, "attack_share": 0.5},
        {"name": "B", "side": "x", "perception": 2},
        {"name": "C", "side": "y", "perception": 2, "target": "A"},
    ),
    "individual, simultaneous": _scenario(
        "individual, simultaneous",
        {"tie": "simultaneous"},
        {"name": "Hero", "side": "x", "perception": 1, "target": "Orc", "attack_share": 0.25},
        {"name": "Scout", "side": "x", "perception": 3},
        {"name": "Orc", "side": "y", "perception": 1, "count": 2},
    ),
    "individual, three sides": _scenario(
        "individual, three sides",
        {},
        {"name": "A", "side": "x", "perception": 0},
        {"name": "B", "side": "y", "perception": 3, "attack_share": 0.7},
        {"name": "C", "side": "y", "perception": 3, "target": "D"},
        {"name": "D", "side": "z", "perception": 5},
    ),
    "individual, five, no attacks": _scenario(
        "individual, five, no attacks",
        {"tie": "simultaneous"},
        {"name": "A", "side": "x", "perception": 2, "attack_share": 0.0},
        {"name": "B", "side": "x", "perception": 2, "attack_share": 0.0},
        {"name": "C", "side": "y", "perception": 2, "attack_share": 0.0},
        {"name": "D", "side": "y", "perception": 4, "attack_share": 0.0},
        {"name": "E", "side": "y", "perception": 0, "attack_share": 0.0},
    ),
    "individual, five, random": _scenario(
        "individual, five, random",
        {"tie": "random"},
        {"name": "A", "side": "x", "perception": 1, "target": "Wolf"},
        {"name": "B", "side": "x", "perception": 1, "attack_share": 0.4},
        {"name": "Wolf", "side": "y", "perception": 1, "count": 3},
    ),
    "group, commander, listed, three sides": _scenario(
        "group, commander, listed, three sides",
        {"mode": "group", "group_stat": "commander", "within_side": "listed"},
        {"name": "Gunnar", "side": "party", "perception": 3, "commander": True},
        {"name": "Astrid", "side": "party", "perception": 6, "target": "Bear"},
        {"name": "Wolf", "side": "wolves", "perception": 5, "commander": True},
        {"name": "Bear", "side": "bear", "perception": 2, "commander": True, "attack_share": 0.6},
    ),
    "group, highest, random within": _scenario(
        "group, highest, random within",
        {"mode": "group", "group_stat": "highest", "within_side": "random"},
        {"name": "A", "side": "x", "perception": 4},
        {"name": "B", "side": "x", "perception": 1, "attack_share": 0.5},
        {"name": "C", "side": "y", "perception": 4, "target": "B"},
        {"name": "D", "side": "y", "perception": 2},
        {"name": "E", "side": "y", "perception": 0},
    ),
    "group, commander, random within, three sides": _scenario(
        "group, commander, random within, three sides",
        {"mode": "group", "group_stat": "commander", "within_side": "random"},
        {"name": "A", "side": "x", "perception": 2, "commander": True},
        {"name": "B", "side": "x", "perception": 5, "attack_share": 0.3},
        {"name": "C", "side": "y", "perception": 2, "commander": True},
        {"name": "D", "side": "z", "perception": 3, "commander": True, "target": "C"},
    ),
    "worked example": load_scenario(ROOT / "scenarios" / "perception_gunnar_wolf.toml"),
    "worked example, group": load_scenario(
        ROOT / "scenarios" / "perception_gunnar_wolf_group.toml"
    ),
}


@pytest.fixture(scope="module")
def expectations() -> dict[str, dict[tuple[str, str], Fraction]]:
    return {}


def _exact(cache: dict[str, Any], name: str) -> dict[tuple[str, str], Fraction]:
    if name not in cache:
        cache[name] = exact_expectations(SCENARIOS[name])
    return cache[name]


def check_against_run(
    scenario: Scenario, exp: dict[tuple[str, str], Fraction], seed: int
) -> list[str]:
    """Rows of ``simkit.run`` farther than Z standard errors from the exact value."""
    result = simkit.run(scenario, rounds=ROUNDS, rng=seed, workers=1)
    bad = []
    seen = set()
    for r in result.table.itertuples(index=False):
        key = (r.combatant, r.metric)
        seen.add(key)
        want = exp[key]
        if r.se == 0:
            ok = Fraction(r.mean) == want
        else:
            ok = abs(r.mean - float(want)) <= Z * r.se
        if not ok:
            bad.append(f"{key}: mean {r.mean:.6f} se {r.se:.2e}, exact {float(want):.6f} ({want})")
    assert seen == set(exp), sorted(set(exp) ^ seen)
    return bad


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_monte_carlo_matches_exact(name, expectations):
    exp = _exact(expectations, name)
    bad = check_against_run(SCENARIOS[name], exp, seed=2026)
    assert not bad, f"{name}:\n" + "\n".join(bad)


def test_exact_scenarios_cover_every_variant():
    seen = set()
    for scenario in SCENARIOS.values():
        rules = scenario.rules
        if rules["mode"] == "individual":
            seen.add(("individual", rules["tie"]))
        else:
            seen.add(("group", rules["group_stat"], rules["within_side"]))
        seen.add(("sides", len(scenario.sides)))
        seen.add(("histogram", perception.hist_bins(len(scenario.combatants)) > 1))
        for i, c in enumerate(scenario.combatants):
            share = c["attack_share"]
            seen.add(("share", "0" if share == 0 else "1" if share == 1 else "fraction"))
            seen.add(("targets", c["target"] != "random", len(scenario.targets(i)) > 1))
    assert seen >= {
        ("individual", "random"),
        ("individual", "simultaneous"),
        ("group", "commander", "listed"),
        ("group", "commander", "random"),
        ("group", "highest", "random"),
        ("sides", 2),
        ("sides", 3),
        ("histogram", True),
        ("histogram", False),
        ("share", "0"),
        ("share", "1"),
        ("share", "fraction"),
        ("targets", True, False),  # one named opponent
        ("targets", True, True),  # a count group
        ("targets", False, True),  # random over several
    }, seen


def test_exact_hand_computed_cases(expectations):
    """A few values worked out by hand, to pin the enumeration itself."""
    # three perception-2 combatants: every order equally likely
    exp = _exact(expectations, "individual, random ties")
    assert exp[("A", "first_action")] == Fraction(1, 3)
    assert exp[("A", "acts_before.B")] == Fraction(1, 2)
    # C learns A's and B's first actions when it acts first (1/3), one of them when
    # second (1/3): E = 2/3 + 1/3 = 1
    assert exp[("C", "known_intents")] == 1
    # C only attacks A: A is attacked before acting iff C comes before A
    assert exp[("A", "attacked_before_acting")] == Fraction(1, 2)
    # B is attacked before acting iff C comes before it and C attacks it -- never
    assert exp[("B", "attacked_before_acting")] == 0
    # C is attacked by B always and by A half the time: C second behind A (1/6) is
    # hit with 1/2, C second behind B (1/6) or last (1/3) surely: 1/12 + 1/6 + 1/3
    assert exp[("C", "attacked_before_acting")] == Fraction(7, 12)
    # group mode, equal group perception 4 on both sides: the sides' order is a coin
    # flip on equal totals, else the higher d10
    exp = _exact(expectations, "group, highest, random within")
    assert exp[("A", "intent_disclosed")] == Fraction(1, 2)
    assert exp[("A", "known_intents")] == Fraction(3, 2)
    assert exp[("A", "first_action")] == Fraction(1, 4)


# ----------------------------------------------------------------- worked example
def test_worked_example_exact():
    """RULES.md: P(Gunnar acts first) = P(d10 - d10' >= 3) = 28/100, in both modes."""
    direct = Fraction(sum(a - b >= 3 for a in range(1, 11) for b in range(1, 11)), 100)
    assert direct == Fraction(28, 100)
    for name in ("worked example", "worked example, group"):
        exp = exact_expectations(SCENARIOS[name])
        assert exp[("Gunnar", "first_action")] == Fraction(28, 100), name
        assert exp[("Wolf", "first_action")] == Fraction(72, 100), name
        # acting first, Gunnar knows the wolf's first action (P3)
        assert exp[("Gunnar", "known_intents")] == Fraction(28, 100), name
        assert exp[("Wolf", "intent_disclosed")] == Fraction(28, 100), name


@pytest.mark.parametrize(
    "file", ["perception_gunnar_wolf.toml", "perception_gunnar_wolf_group.toml"]
)
def test_worked_example_monte_carlo(file):
    scenario = load_scenario(ROOT / "scenarios" / file)
    assert scenario.rules["mode"] == ("group" if "group" in file else "individual")
    result = simkit.run(scenario, rounds=ROUNDS, rng=7, workers=1)
    est = result.estimate("Gunnar", "first_action")
    assert abs(est.mean - 0.28) <= Z * est.se


class SeedRolls:
    """The seed's rolls: Gunnar 9, the wolf 2; no other draw is expected."""

    def __init__(self) -> None:
        self.dice = [9, 2]

    def roll(self, sides: int) -> int:
        assert sides == 10
        return self.dice.pop(0)

    def below(self, n: int) -> int:
        raise AssertionError(f"unexpected below({n})")

    def chance(self, threshold: int) -> bool:
        raise AssertionError("unexpected attack_share draw")


@pytest.mark.parametrize(
    "file", ["perception_gunnar_wolf.toml", "perception_gunnar_wolf_group.toml"]
)
def test_worked_example_seed_rolls_twin(file):
    """Gunnar rolls 9 -> 13, the wolf 2 -> 8: Gunnar acts first and knows the wolf's attack."""
    scenario = load_scenario(ROOT / "scenarios" / file)
    counts = play_round(scenario, SeedRolls())
    assert counts[("Gunnar", "first_action")] == 1
    assert counts[("Gunnar", "known_intents")] == 1  # knows the wolf will attack him
    assert counts[("Wolf", "intent_disclosed")] == 1
    assert counts[("Gunnar", "intent_disclosed")] == 0
    assert counts[("Wolf", "attacked_before_acting")] == 1  # Gunnar's attack comes first
    assert counts[("Gunnar", "attacked_before_acting")] == 0


@pytest.mark.parametrize(
    "file", ["perception_gunnar_wolf.toml", "perception_gunnar_wolf_group.toml"]
)
def test_worked_example_seed_rolls_kernel(file):
    """The kernel on a round stream whose first two bytes roll the seed's 9 and 2."""
    scenario = load_scenario(ROOT / "scenarios" / file)
    compiled = compile_for(scenario)
    # round 0 starts from crafted words: first output's bytes, low first, are 8 -> d10
    # = 9 and 1 -> d10 = 2, then bytes a d10 rejects (>= 250) if it were rolled again
    first_output = 8 | (1 << 8) | sum(0xFF << (8 * k) for k in range(2, 8))
    words = words_for_outputs([first_output])
    key_words = key_for_round_words(words, 0)
    assert round_words(key_words, 0) == words
    key = np.array(key_words, dtype=np.uint64)
    row = perception.trace(compiled, key, 1)[0]
    lay = compiled.layout
    g, w = scenario.index("Gunnar"), scenario.index("Wolf")
    assert row[lay.count_index(g, "first_action")] == 1
    assert row[lay.count_index(g, "known_intents")] == 1
    assert row[lay.count_index(w, "intent_disclosed")] == 1
    assert row[lay.count_index(w, "attacked_before_acting")] == 1
    assert row[lay.before_index(g, w)] == 1
    # both bytes used, nothing else drawn: six bytes of the first output left
    state = perception_round_states(compiled, key, 1)[0]
    assert [int(x) for x in state[4:]] == [first_output >> 16, 6]
    twin = NaiveStream.for_round(key_words, 0)
    assert counts_from_row(row, lay) == play_round(scenario, twin)
    assert twin.state() == [int(x) for x in state]
