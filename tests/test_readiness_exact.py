"""Exact per-round expectations of small readiness scenarios, and the kernel against them.

The twin (tests/naive_readiness.py) is driven by an enumerating draw source: a
depth-first search over draw sequences that re-plays the round with a scripted
prefix of draws and branches on every new draw (a whole R1 pool is one draw, over
its multisets).  Every count's expectation comes out as a ``Fraction``.  Then
``simkit.run`` must land within 5 standard errors of it for every row of the table.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from fractions import Fraction
from functools import cache
from itertools import combinations_with_replacement, product
from typing import Any

import numpy as np
import pytest
from kernel_drivers import compile_for
from naive_readiness import counts_from_row, play_round, to_toml
from naive_rng import NaiveStream, key_for_round_words, round_words, words_for_outputs

import simkit
from simkit.scenario import Scenario, scenario_from_dict
from simkit.systems.readiness import kernel as readiness

TWO53 = 1 << 53


# --------------------------------------------------------------------------- enumeration
class NeedDraw(Exception):
    """The scripted prefix ran out: ``options`` are the next draw's (value, probability)."""

    def __init__(self, options: list[tuple[Any, Fraction]]) -> None:
        super().__init__()
        self.options = options


@cache
def pool_options(count: int, sides: int) -> tuple[tuple[tuple[int, ...], Fraction], ...]:
    """Every multiset of ``count`` dice with ``sides`` sides and its probability."""
    out = []
    total = sides**count
    for pool in combinations_with_replacement(range(sides, 0, -1), count):
        ways = math.factorial(count)
        for m in Counter(pool).values():
            ways //= math.factorial(m)
        out.append((pool, Fraction(ways, total)))
    assert sum(p for _, p in out) == 1
    return tuple(out)


class ScriptedDraws:
    """Replays ``prefix``; the first draw beyond it raises :class:`NeedDraw`."""

    def __init__(self, prefix: tuple[Any, ...]) -> None:
        self.prefix = prefix
        self.pos = 0

    def _next(self, options: Any) -> Any:
        if self.pos < len(self.prefix):
            value = self.prefix[self.pos]
            self.pos += 1
            return value
        raise NeedDraw(options())

    def roll(self, sides: int) -> int:
        return self._next(lambda: [(v, Fraction(1, sides)) for v in range(1, sides + 1)])

    def roll_pool(self, count: int, sides: int) -> tuple[int, ...]:
        return self._next(lambda: list(pool_options(count, sides)))

    def below(self, n: int) -> int:
        if n <= 1:
            return 0  # draws nothing
        return self._next(lambda: [(k, Fraction(1, n)) for k in range(n)])

    def chance(self, threshold: int) -> bool:
        p = Fraction(min(max(threshold, 0), TWO53), TWO53)
        return self._next(lambda: [(v, q) for v, q in ((True, p), (False, 1 - p)) if q > 0])


def exact_round(scenario: Scenario, no_hold: bool) -> dict[tuple[str, str], Fraction]:
    """E[count] of one round, over every dice outcome and every random choice."""
    totals: dict[tuple[str, str], Fraction] = {}
    mass = Fraction(0)
    stack: list[tuple[tuple[Any, ...], Fraction]] = [((), Fraction(1))]
    while stack:
        prefix, p = stack.pop()
        try:
            counts = play_round(scenario, ScriptedDraws(prefix), no_hold)
        except NeedDraw as need:
            stack.extend((prefix + (value,), p * q) for value, q in need.options)
            continue
        mass += p
        for key, value in counts.items():
            if value:
                totals[key] = totals.get(key, Fraction(0)) + p * value
            else:
                totals.setdefault(key, Fraction(0))
    assert mass == 1
    return totals


def exact_expectations(scenario: Scenario) -> dict[tuple[str, str], Fraction]:
    """Per-round expectations in the long run, R8 included.

    Rounds form a Markov chain: a normal round is a stalemate with probability s and
    is then followed by a forced round (no holds, never a stalemate).  The stationary
    mix is E = (E_normal + s E_forced) / (1 + s).
    """
    normal = exact_round(scenario, no_hold=False)
    s = normal[("", "stalemate")]
    if s == 0:
        return normal
    forced = exact_round(scenario, no_hold=True)
    assert forced[("", "stalemate")] == 0
    return {k: (normal[k] + s * forced[k]) / (1 + s) for k in normal}


def exact_metric(exp: dict[tuple[str, str], Fraction], who: str, metric: str) -> Fraction | None:
    """The exact value of a table row (None for a ratio of zero to zero)."""
    ratios = {
        "hasty_share": ("hasty_defenses", "defenses"),
        "hasty_scale": ("hasty_scale_total", "hasty_defenses"),
    }
    if metric in ratios:
        num, den = ratios[metric]
        d = exp[(who, den)]
        return None if d == 0 else exp[(who, num)] / d
    return exp[(who, metric)]


# --------------------------------------------------------------------------- scenarios
def _scenario(name: str, rules: dict[str, Any], *combatants: dict[str, Any]) -> dict[str, Any]:
    return {
        "scenario": {"name": name, "system": "readiness"},
        "rules": rules,
        "combatant": list(combatants),
    }


EXACT_SCENARIOS = {
    # R2 "sixes", attack_share < 1, defend "always" (hasty defenses)
    "advantage_sixes": _scenario(
        "advantage_sixes",
        {"prep": "sixes"},
        {"name": "A", "side": "party", "readiness": 3, "advantage": 2},
        {"name": "B", "side": "foes", "readiness": 2, "attack_share": 0.5, "role": "secondary"},
    ),
    # R2 "lowest", defend "unless_hasty" and "hasty_up_to:1"
    "advantage_lowest": _scenario(
        "advantage_lowest",
        {"prep": "lowest"},
        {
            "name": "A",
            "side": "party",
            "readiness": 2,
            "advantage": 3,
            "defend": "unless_hasty",
            "attack_share": 0.75,
        },
        {"name": "B", "side": "foes", "readiness": 3, "defend": "hasty_up_to:1"},
    ),
    # R3 chain, defend "never", a count group as target
    "chain": _scenario(
        "chain",
        {"order": "chain"},
        {"name": "A", "side": "party", "readiness": 3, "defend": "never", "target": "W"},
        {"name": "W", "side": "wolves", "readiness": 1, "count": 2, "role": "secondary"},
    ),
    # R5 until_attacked and R7 guard
    "until_attacked_guard": _scenario(
        "until_attacked_guard",
        {},
        {"name": "G", "side": "party", "readiness": 2, "hold": "until_attacked"},
        {"name": "H", "side": "party", "readiness": 1, "guard": True, "defend": "hasty_up_to:2"},
        {"name": "W", "side": "wolves", "readiness": 2, "role": "secondary"},
    ),
    # R5 until_enemy_acts (released holders declare; R7 against a holder), chain order
    "until_enemy_acts": _scenario(
        "until_enemy_acts",
        {"order": "chain"},
        {"name": "A", "side": "party", "readiness": 2, "hold": "until_enemy_acts"},
        {"name": "B", "side": "party", "readiness": 1, "guard": True},
        {
            "name": "W",
            "side": "wolves",
            "readiness": 2,
            "hold": "until_attacked",
            "target": "A",
            "defend": "unless_hasty",
        },
    ),
    # every combatant holds: each normal round is a stalemate (R8), then a forced round
    "stalemate": _scenario(
        "stalemate",
        {"prep": "lowest"},
        {"name": "A", "side": "party", "readiness": 2, "hold": "until_attacked", "advantage": 1},
        {"name": "B", "side": "party", "readiness": 1, "hold": "until_enemy_acts", "guard": True},
        {
            "name": "W",
            "side": "wolves",
            "readiness": 2,
            "hold": "until_enemy_acts",
            "defend": "hasty_up_to:0",
            "attack_share": 0.5,
        },
    ),
    # holds on both sides, one of them a never-holder: holds without stalemate
    "mixed_holds": _scenario(
        "mixed_holds",
        {},
        {"name": "A", "side": "party", "readiness": 2, "hold": "until_enemy_acts", "target": "W"},
        {"name": "B", "side": "party", "readiness": 1, "attack_share": 0.5, "target": "V"},
        {"name": "W", "side": "wolves", "readiness": 1},
        {"name": "V", "side": "wolves", "readiness": 1, "guard": True, "hold": "until_attacked"},
    ),
}

ROUNDS = 300_000


def _check_against_run(name: str, exp: dict[tuple[str, str], Fraction], seed: int) -> list[str]:
    data = EXACT_SCENARIOS[name]
    scenario = scenario_from_dict(data)
    result = simkit.run(scenario, rounds=ROUNDS, rng=seed, workers=1)
    bad = []
    rows = 0
    for r in result.table.itertuples(index=False):
        rows += 1
        exact = exact_metric(exp, r.combatant, r.metric)
        if exact is None:
            if not math.isnan(r.mean):
                bad.append(f"{r.combatant}:{r.metric}: exact 0/0 but mean {r.mean}")
            continue
        if r.se == 0:
            ok = r.mean == float(exact)
        else:
            ok = abs(r.mean - float(exact)) <= 5 * r.se
        if not ok:
            z = (r.mean - float(exact)) / r.se if r.se else float("inf")
            bad.append(
                f"{r.combatant}:{r.metric}: exact {float(exact):.6f} ({exact}), "
                f"simkit {r.mean:.6f} se {r.se:.2e} (z = {z:.1f})"
            )
    # every exact count is reported (hasty_scale_total only through hasty_scale)
    reported = {(r.combatant, r.metric) for r in result.table.itertuples(index=False)}
    missing = {k for k in exp if k not in reported and k[1] != "hasty_scale_total"}
    if missing:
        bad.append(f"counts missing from the table: {sorted(missing)}")
    assert rows > 0
    if bad:
        print(f"scenario {name}, rounds {ROUNDS}, seed {seed}\n{to_toml(data)}")
        print("\n".join(bad))
    return bad


@pytest.mark.parametrize("name", list(EXACT_SCENARIOS))
def test_kernel_matches_exact_expectations(name):
    start = time.perf_counter()
    exp = exact_expectations(scenario_from_dict(EXACT_SCENARIOS[name]))
    enum_s = time.perf_counter() - start
    bad = _check_against_run(name, exp, seed=2026)
    print(f"{name}: enumeration {enum_s:.1f} s")
    assert not bad, "\n".join(bad)


def test_exact_scenarios_cover_the_rules():
    seen: set[tuple[str, Any]] = set()
    for data in EXACT_SCENARIOS.values():
        scenario = scenario_from_dict(data)
        assert sum(c["readiness"] for c in scenario.combatants) <= 7
        seen.add(("order", scenario.rules["order"]))
        seen.add(("prep", scenario.rules["prep"]))
        for c in scenario.combatants:
            seen.add(("hold", c["hold"]))
            seen.add(("defend", c["defend"].split(":")[0]))
            seen.add(("guard", c["guard"]))
            seen.add(("advantage", c["advantage"] > 0))
            seen.add(("share<1", c["attack_share"] < 1))
            if c["advantage"] > 0:
                seen.add(("advantage+prep", scenario.rules["prep"]))
    need = {
        ("order", "chain"),
        ("order", "dynamic"),
        ("hold", "never"),
        ("hold", "until_attacked"),
        ("hold", "until_enemy_acts"),
        ("defend", "always"),
        ("defend", "never"),
        ("defend", "unless_hasty"),
        ("defend", "hasty_up_to"),
        ("guard", True),
        ("advantage", True),
        ("share<1", True),
        ("advantage+prep", "sixes"),
        ("advantage+prep", "lowest"),
    }
    assert need <= seen, need - seen


def test_exact_hand_computed_cases():
    """The enumerator itself, on cases small enough to compute by hand."""
    # one d6 each, no holds, attack_share 0: A acts first iff A > B, or A == B and T3 (1/2)
    # (T2 compares no other dice: equal), so P = 15/36 + 6/36 * 1/2 = 1/2
    data = _scenario(
        "duel",
        {},
        {"name": "A", "side": "a", "readiness": 1, "attack_share": 0.0},
        {"name": "B", "side": "b", "readiness": 1, "attack_share": 0.0},
    )
    exp = exact_expectations(scenario_from_dict(data))
    assert exp[("A", "first_action")] == Fraction(1, 2)
    assert exp[("A", "actions")] == 1
    assert exp[("", "stalemate")] == 0
    # readiness 2 vs 1 with prep sixes and advantage 1 on B: B's die d becomes
    # min(d + 1, 6); A goes first iff its highest die beats B's, ties by T1 then T2
    data = _scenario(
        "two_vs_one",
        {},
        {"name": "A", "side": "a", "readiness": 2, "attack_share": 0.0},
        {"name": "B", "side": "b", "readiness": 1, "advantage": 1, "attack_share": 0.0},
    )
    exp = exact_expectations(scenario_from_dict(data))
    # a tie at v always goes to A: T1 if both its dice show v, else T2 (its other die
    # beats no die)
    first = sum(1 for a1, a2, b in product(range(1, 7), repeat=3) if max(a1, a2) >= min(b + 1, 6))
    assert exp[("A", "first_action")] == Fraction(first, 216)
    # all holders: every normal round is a stalemate, the forced round after it is not
    data = _scenario(
        "holders",
        {},
        {"name": "A", "side": "a", "readiness": 1, "hold": "until_attacked"},
        {"name": "B", "side": "b", "readiness": 2, "hold": "until_enemy_acts"},
    )
    normal = exact_round(scenario_from_dict(data), no_hold=False)
    assert normal[("", "stalemate")] == 1
    assert normal[("A", "expired_dice")] == 1 and normal[("B", "expired_dice")] == 2
    forced = exact_round(scenario_from_dict(data), no_hold=True)
    assert forced[("", "stalemate")] == 0 and forced[("B", "no_action")] == 0
    exp = exact_expectations(scenario_from_dict(data))
    assert exp[("", "stalemate")] == Fraction(1, 2)
    assert exp[("B", "no_action")] == Fraction(1, 2)
    assert exp[("B", "expired_dice")] == 1  # (2 + 0) / 2


# --------------------------------------------------------------------------- R3 example
class FixedDice:
    """Draws for the worked example: the given dice in order, and nothing else."""

    def __init__(self, dice: list[int]) -> None:
        self.dice = list(dice)

    def roll(self, sides: int) -> int:
        assert sides == 6
        return self.dice.pop(0)

    def below(self, n: int) -> int:
        raise AssertionError(f"unexpected T3 or target draw below({n})")

    def chance(self, threshold: int) -> bool:
        raise AssertionError("unexpected attack_share draw")


WORKED_EXAMPLE = _scenario(
    "R3 worked example",
    {},
    {"name": "A", "side": "heroes", "readiness": 3, "attack_share": 0.0},
    {"name": "B", "side": "heroes", "readiness": 3, "attack_share": 0.0},
    {"name": "W", "side": "wolves", "readiness": 2, "role": "secondary", "attack_share": 0.0},
)
WORKED_DICE = [6, 6, 2, 6, 6, 5, 6, 1]  # A: 6,6,2; B: 6,6,5; W: 6,1 (R1 in scenario order)


def stream_words_for_outputs(outputs: list[int]) -> list[int]:
    """Six stream words whose first one or two xoshiro256** outputs are ``outputs``."""
    return words_for_outputs(outputs)


def dice_bytes(dice: list[int]) -> list[int]:
    """Outputs whose bytes (low byte first) roll ``dice`` as d6: byte = die - 1 (< 252)."""
    padded = dice + [1] * (-len(dice) % 8)
    return [
        sum((padded[8 * k + j] - 1) << (8 * j) for j in range(8)) for k in range(len(padded) // 8)
    ]


def test_r3_worked_example_twin():
    scenario = scenario_from_dict(WORKED_EXAMPLE)
    log: list[tuple[Any, ...]] = []
    counts = play_round(scenario, FixedDice(WORKED_DICE), log=log)
    turns = [(e[1], e[2]) for e in log if e[0] == "act"]
    # RULES.md R3: B, A, B, A, W at value 6; then B's 5, A's 2, W's 1
    assert turns[:5] == [("B", 6), ("A", 6), ("B", 6), ("A", 6), ("W", 6)]
    assert turns == [("B", 6), ("A", 6), ("B", 6), ("A", 6), ("W", 6), ("B", 5), ("A", 2), ("W", 1)]
    assert counts[("B", "first_action")] == 1
    assert counts[("B", "acts_before.A")] == 1 and counts[("A", "acts_before.W")] == 1
    assert counts[("", "stalemate")] == 0
    assert all(counts[(n, "defenses")] == 0 for n in "ABW")


def key_for_round(words: list[int], r: int = 0) -> np.ndarray:
    """A chunk key under which round ``r`` starts from the crafted stream ``words``.

    Round ``r`` starts from splitmix64_mix(key_j + (r + 1) * golden) (random_stream.py);
    the mix is a bijection, so the key is its inverse minus the golden step.
    """
    assert words[4:] == [0, 0]  # a round starts with an empty byte buffer
    key = key_for_round_words(words, r)
    assert round_words(key, r) == words
    return np.array(key, dtype=np.uint64)


@pytest.mark.parametrize("r", [0, 1, 262_143, 10**12])
def test_r3_worked_example_kernel(r):
    """The kernel on a round stream crafted so that R1 rolls exactly the example's dice."""
    scenario = scenario_from_dict(WORKED_EXAMPLE)
    words = stream_words_for_outputs(dice_bytes(WORKED_DICE))
    ns = NaiveStream(words)
    assert [ns.roll(6) for _ in range(8)] == WORKED_DICE
    log: list[tuple[Any, ...]] = []
    key = key_for_round(words, r)
    twin = play_round(scenario, NaiveStream.for_round(key, r), log=log)
    turns = [(e[1], e[2]) for e in log if e[0] == "act"]
    assert turns == [("B", 6), ("A", 6), ("B", 6), ("A", 6), ("W", 6), ("B", 5), ("A", 2), ("W", 1)]
    compiled = compile_for(scenario)
    rows = readiness.trace(compiled, key, 1, first=r)
    got = counts_from_row(rows[0], compiled.layout)
    assert got == twin
    # B first, then A, then W (first actions); 3, 3 and 2 actions
    assert got[("B", "first_action")] == 1 and got[("A", "first_action")] == 0
    assert got[("B", "acts_before.A")] == 1 and got[("A", "acts_before.B")] == 0
    assert got[("A", "acts_before.W")] == 1 and got[("W", "acts_before.A")] == 0
    assert (got[("A", "actions")], got[("B", "actions")], got[("W", "actions")]) == (3, 3, 2)
    if r > 0:
        # the crafted dice belong to round r only: round r - 1 of the same key is another
        # stream, and round r traced from first = r - 1 is the example again
        before = NaiveStream.for_round(key, r - 1)
        assert [before.roll(6) for _ in range(8)] != WORKED_DICE
        two = readiness.trace(compiled, key, 2, first=r - 1)
        if not two[0, compiled.layout.scenario_offset]:  # no R8 carried into round r
            assert np.array_equal(two[1], rows[0])


@pytest.mark.parametrize(
    ("dice_a", "dice_b", "first"),
    [
        # T1: two 6s beat one 6 even against higher other dice
        ([6, 6, 1], [6, 5, 5], "A"),
        # T2: equal 6s, other dice 5 vs 4
        ([6, 5, 1], [6, 4, 4], "A"),
        # T2: a die beats no die (readiness 3 vs a pool that is otherwise equal)
        ([6, 3], [6, 3, 1], "B"),
    ],
)
def test_tie_breaks_on_crafted_dice(dice_a, dice_b, first):
    data = _scenario(
        "ties",
        {},
        {"name": "A", "side": "a", "readiness": len(dice_a), "attack_share": 0.0},
        {"name": "B", "side": "b", "readiness": len(dice_b), "attack_share": 0.0},
    )
    scenario = scenario_from_dict(data)
    dice = dice_a + dice_b
    twin = play_round(scenario, FixedDice(dice))
    assert twin[(first, "first_action")] == 1
    words = stream_words_for_outputs(dice_bytes(dice))
    compiled = compile_for(scenario)
    row = readiness.trace(compiled, key_for_round(words), 1)[0]
    assert counts_from_row(row, compiled.layout) == twin
