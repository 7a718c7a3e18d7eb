"""The revision-2 readiness twin (tests/twins/readiness.py) against the rules' revision 2
(docs/rules.md).

Every expectation is exact: the twin is driven by the enumerating draw source of
tests/enumerate.py (every draw sequence, a whole R1 pool being one draw over its
multisets), so each count's expectation comes out as a ``Fraction``, and it is
compared with a value derived by hand from the rules (the derivation is in the test).
Scripted rounds (fixed dice, no other draw) check the event log line by line.  Random
scenarios and streams check round identities, the log's completeness, and that
revision 1 stays reachable: with revision 1's readings written out, the twin gives the
counts the revision-1 twin gave, round by round, and consumes the same draws
(tests/rev1_record.py).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from itertools import product
from typing import Any

import pytest
import rev1_record
from builders import make_scenario
from enumerate import expectation
from hypothesis import given
from hypothesis import strategies as hs
from naive_rng import NaiveStream, round_words
from twins import readiness as twin

from simkit.scenario import Scenario

Counts = dict[tuple[str, str], int]
Play = Callable[..., Counts]


# --------------------------------------------------------------------------- enumeration
def exact_round(
    scenario: Scenario, no_hold: bool = False, play: Play = twin.play_round
) -> dict[tuple[str, str], Fraction]:
    """E[count] of one round, over every dice outcome and every random choice
    (tests/enumerate.py; a whole R1 pool is one draw over its multisets)."""
    return expectation(lambda draws: play(scenario, draws, no_hold))


def exact_expectations(
    scenario: Scenario, play: Play = twin.play_round
) -> dict[tuple[str, str], Fraction]:
    """Per-round expectations in the long run, R8 included.

    A normal round is a stalemate with probability s and is then followed by a forced
    round (no holds, never a stalemate): E = (E_normal + s E_forced) / (1 + s).
    """
    normal = exact_round(scenario, False, play)
    s = normal[("", "stalemate")]
    if s == 0:
        return normal
    forced = exact_round(scenario, True, play)
    assert forced[("", "stalemate")] == 0
    return {k: (normal[k] + s * forced[k]) / (1 + s) for k in normal}


class FixedDice:
    """Draws for a scripted round: the given dice in order, and nothing else."""

    def __init__(self, dice: list[int]) -> None:
        self.dice = list(dice)

    def roll(self, sides: int) -> int:
        assert sides == 6
        return self.dice.pop(0)

    def below(self, n: int) -> int:
        raise AssertionError(f"unexpected T3 or target draw below({n})")

    def chance(self, threshold: int) -> bool:
        raise AssertionError("unexpected attack_share draw")


def scenario(*combatants: dict[str, Any], **rules: Any) -> Scenario:
    """A revision-2 scenario (every field not given at its default)."""
    return make_scenario("readiness", list(combatants), rules)


def scripted(s: Scenario, dice: list[int], no_hold: bool = False) -> tuple[Counts, list[tuple]]:
    """One round on fixed dice: its counts and its event log (checked for consistency)."""
    log: list[tuple[Any, ...]] = []
    counts = twin.play_round(s, FixedDice(dice), no_hold, log)
    check_log(s, log, counts)
    return counts, log


def play_log(log: list[tuple]) -> list[tuple]:
    """The events after R1 and R2 (the dice are checked where they are scripted)."""
    return [e for e in log if e[0] not in ("roll", "prep")]


def differing(a: dict, b: dict) -> set:
    return {k for k in a if a[k] != b[k]}


# --------------------------------------------------------------------------- the log
def check_log(s: Scenario, log: list[tuple], counts: Counts) -> None:
    """Replay a round from its events alone (``twin.fold_log``, which also checks that
    every die spent is the spender's highest, every act follows its turn or declare,
    ...) and compare with the round's counts."""
    carry = int(log[:1] == [("no_hold", "R8")])
    derived = twin.fold_log(s, log, carry)
    assert set(derived) == set(counts)
    wrong = {k: (counts[k], derived[k]) for k in counts if counts[k] != derived[k]}
    assert not wrong, wrong


COUNT_NAMES = twin.COUNT_NAMES


def test_count_names():
    s = scenario(
        {"name": "A", "side": "a", "readiness": 3},
        {"name": "W", "side": "b", "readiness": 1, "count": 2},
    )
    counts = twin.play_round(s, NaiveStream(round_words([1, 2, 3, 4], 0)))
    want = {("", "stalemate")}
    for c in s.combatants:
        want |= {(c.name, m) for m in COUNT_NAMES}
        want |= {(c.name, f"acts_before.{o.name}") for o in s.combatants if o is not c}
        want |= {(c.name, f"actions_dist.{k}") for k in range(c["readiness"] + 1)}
    assert set(counts) == want
    assert ("W 1", "actions_dist.1") in counts and ("W 1", "actions_dist.2") not in counts


# --------------------------------------------------------------------------- R2
def best_single_raise(dice: list[int], advantage: int) -> tuple[int, ...]:
    """R2's definition: the best sorted pool from raising ONE die by up to B, at most to 6."""
    best = tuple(sorted(dice, reverse=True))
    for k in range(len(dice)):
        for up in range(advantage + 1):
            pool = list(dice)
            pool[k] = min(6, pool[k] + up)
            best = max(best, tuple(sorted(pool, reverse=True)))
    return best


@pytest.mark.parametrize(
    ("dice", "advantage", "prep", "after"),
    [
        # the examples of R2 in docs/rules.md
        ([5, 1], 5, "one_die", [6, 5]),
        ([6, 3, 1], 2, "one_die", [6, 5, 1]),
        ([6, 6, 6], 4, "one_die", [6, 6, 6]),
        # one die takes every pip: 4 -> 6 with a pip wasted, the other 4 stays
        ([4, 4], 3, "one_die", [6, 4]),
        # the lowest die that can reach 6 (2 needs 4 pips) rather than 3 (needs 3)
        ([3, 2, 1], 4, "one_die", [6, 3, 1]),
        # nobody can reach 6: the highest die below 6 rises by all of B
        ([2, 1], 3, "one_die", [5, 1]),
        # advantage above 5 changes nothing more
        ([5, 1], 9, "one_die", [6, 5]),
        ([1], 0, "one_die", [1]),
        # revision 1's "sixes": each pip to the highest die still below 6
        ([4, 4], 3, "sixes", [6, 5]),
        ([6, 3, 1], 2, "sixes", [6, 5, 1]),
        ([3, 2, 1], 4, "sixes", [6, 3, 1]),
        ([5, 1], 7, "sixes", [6, 6]),
        ([1, 1], 5, "sixes", [6, 1]),
        ([1, 1], 7, "sixes", [6, 3]),
        # revision 1's "lowest": each pip to the lowest die
        ([6, 3, 1], 2, "lowest", [6, 3, 3]),
        ([2, 1], 3, "lowest", [3, 3]),
        ([4, 4], 3, "lowest", [6, 5]),
        ([3, 2, 1], 4, "lowest", [4, 3, 3]),
    ],
)
def test_r2_preparation_examples(dice, advantage, prep, after):
    assert twin.prepare(dice, advantage, prep) == after
    # the same through a round: the prep event shows the pool before and after R2
    s = scenario(
        {"name": "A", "side": "a", "readiness": len(dice), "advantage": advantage},
        {"name": "B", "side": "b", "readiness": 1},
        prep=prep,
    )
    other = 2 if max(after) == 1 else 1  # B's die, never tied with A's highest
    _, log = scripted(s, [*dice, other])
    preps = [e for e in log if e[0] == "prep"]
    if advantage > 0:
        assert preps == [("prep", "R2", "A", tuple(sorted(dice, reverse=True)), tuple(after))]
    else:
        assert preps == []


def test_r2_one_die_is_the_best_single_raise():
    """The algorithm of R2 gives the best pool over every way of raising one die."""
    for n in range(1, 5):
        for dice in product(range(1, 7), repeat=n):
            for advantage in range(9):
                got = tuple(twin.prepare(list(dice), advantage, "one_die"))
                assert got == best_single_raise(list(dice), advantage), (dice, advantage)
                # spreading the pips (revision 1) never gives a worse pool (sorted, high to low)
                assert got <= tuple(twin.prepare(list(dice), advantage, "sixes"))


def high_to_low(dice: list[int]) -> list[int]:
    return sorted(dice, reverse=True)


def first_turn_probability(pool_a: Callable, pool_b: Callable, n_a: int, n_b: int) -> Fraction:
    """P(A takes the first turn) from R3: at the first turn nothing is spent, so T1 then
    T2 compare the whole sorted pools lexicographically (docs/rules-decisions.md, R3
    T2); equal pools go to T3, a fair coin."""
    total = Fraction(0)
    for a in product(range(1, 7), repeat=n_a):
        pa = tuple(pool_a(list(a)))
        for b in product(range(1, 7), repeat=n_b):
            pb = tuple(pool_b(list(b)))
            total += 1 if pa > pb else Fraction(1, 2) if pa == pb else 0
    return total / 6 ** (n_a + n_b)


def duel(advantage: int, prep: str) -> Scenario:
    return scenario(
        {"name": "A", "side": "a", "readiness": 2, "advantage": advantage, "attack_share": 0.0},
        {"name": "B", "side": "b", "readiness": 2, "attack_share": 0.0},
        prep=prep,
    )


def test_r2_advantage_above_five_is_advantage_five_under_one_die():
    exp5 = exact_expectations(duel(5, "one_die"))
    exp7 = exact_expectations(duel(7, "one_die"))
    assert exp5 == exp7
    # and A's first turn is the one R3 gives the best single-raise pool
    want = first_turn_probability(lambda d: best_single_raise(d, 5), high_to_low, 2, 2)
    assert exp5[("A", "first_action")] == want
    assert want > Fraction(1, 2)
    # under "sixes" the pips beyond 5 go on raising: 1,1 becomes 6,1 with 5 pips but
    # 6,3 with 7, which beats B's 6,2 at T2; no pool gets worse, so A goes first more
    six5 = exact_expectations(duel(5, "sixes"))
    six7 = exact_expectations(duel(7, "sixes"))
    assert six7[("A", "first_action")] > six5[("A", "first_action")]
    spread = {
        adv: first_turn_probability(
            lambda d, adv=adv: twin.spread_pips(d, adv, "sixes"), high_to_low, 2, 2
        )
        for adv in (5, 7)
    }
    assert (six5[("A", "first_action")], six7[("A", "first_action")]) == (spread[5], spread[7])
    # one_die with 5 pips is worse for A than spreading them (4,4 -> 6,4 vs 6,6)
    assert exp5[("A", "first_action")] < six5[("A", "first_action")]


# --------------------------------------------------------------------------- R3
def test_r3_worked_example_event_log():
    s = scenario(
        {"name": "A", "side": "heroes", "readiness": 3, "attack_share": 0.0},
        {"name": "B", "side": "heroes", "readiness": 3, "attack_share": 0.0},
        {"name": "W", "side": "wolves", "readiness": 2, "role": "secondary", "attack_share": 0.0},
    )
    counts, log = scripted(s, [6, 6, 2, 6, 6, 5, 6, 1])
    assert log[:3] == [
        ("roll", "R1", "A", (6, 6, 2)),
        ("roll", "R1", "B", (6, 6, 5)),
        ("roll", "R1", "W", (6, 1)),
    ]
    # the rules (docs/rules.md, R3): B, A, B, A, W at value 6; then B's 5, A's 2, W's 1;
    # one act per turn
    turns = [("B", 6), ("A", 6), ("B", 6), ("A", 6), ("W", 6), ("B", 5), ("A", 2), ("W", 1)]
    expected = []
    for name, value in turns:
        expected += [("turn", "R3", name, value), ("act", "R4", name, value, False)]
    assert log[3:] == expected
    assert counts[("B", "first_action")] == 1
    assert counts[("B", "acts_before.A")] == 1 and counts[("A", "acts_before.W")] == 1


# --------------------------------------------------------------------------- R7 responses
def fight(guards: tuple[str, str], d: dict[str, Any] | None = None, **rules: Any) -> Scenario:
    """W (readiness 2) attacks D; D's allies G1 and G2 guard as given; only W attacks."""
    return scenario(
        {"name": "W", "side": "wolves", "readiness": 2, "target": "D", "role": "secondary"},
        {"name": "D", "side": "party", "readiness": 1, "attack_share": 0.0, **(d or {})},
        {"name": "G1", "side": "party", "readiness": 1, "attack_share": 0.0, "guard": guards[0]},
        {"name": "G2", "side": "party", "readiness": 1, "attack_share": 0.0, "guard": guards[1]},
        **rules,
    )


def test_r7_target_and_two_always_guards_all_respond():
    # W 6,6 goes first (T1); its attack at 6 is answered by D itself (6 >= 6) and by
    # both "always" guards; its second attack finds nobody with a die
    counts, log = scripted(fight(("always", "always")), [6, 6, 6, 6, 6])
    assert play_log(log) == [
        ("turn", "R3", "W", 6),
        ("act", "R4", "W", 6, False),
        ("attack", "R4", "W", "D", 6, False),
        ("response", "R7", "D", "D", 6, "self", 0),
        ("response", "R7", "G1", "D", 6, "guard", 0),
        ("response", "R7", "G2", "D", 6, "guard", 0),
        ("turn", "R3", "W", 6),
        ("act", "R4", "W", 6, False),
        ("attack", "R4", "W", "D", 6, False),
        ("unanswered", "R7", "D"),
    ]
    assert counts[("W", "attacks_made")] == 2 and counts[("W", "actions")] == 2
    assert counts[("D", "attacks_received")] == 2
    assert (counts[("D", "defended")], counts[("D", "undefended")]) == (1, 1)
    assert (counts[("D", "defenses")], counts[("D", "guard_defenses")]) == (1, 0)
    for g in ("G1", "G2"):
        assert (counts[(g, "defenses")], counts[(g, "guard_defenses")]) == (1, 1)
        assert (counts[(g, "actions")], counts[(g, "expired_dice")]) == (0, 0)


def test_r7_hasty_self_defense_beside_always_guards():
    # D's 2 answers hastily (scale 4), G1's 6 guards; G2's 5 is below the attack's 6.
    # One normal response makes the attack "defended", not "hasty_only".
    counts, log = scripted(fight(("always", "always")), [6, 6, 2, 6, 5])
    assert play_log(log)[:6] == [
        ("turn", "R3", "W", 6),
        ("act", "R4", "W", 6, False),
        ("attack", "R4", "W", "D", 6, False),
        ("response", "R7", "D", "D", 2, "hasty", 4),
        ("response", "R7", "G1", "D", 6, "guard", 0),
        ("turn", "R3", "W", 6),
    ]
    assert counts[("D", "hasty_defenses")] == 1 and counts[("D", "hasty_scale_total")] == 4
    assert [counts[("D", f"hasty_ge.{k}")] for k in range(1, 6)] == [1, 1, 1, 1, 0]
    assert (counts[("D", "defended")], counts[("D", "hasty_only")]) == (1, 0)
    assert (counts[("D", "undefended")], counts[("G2", "actions")]) == (1, 1)


def test_r7_only_the_first_backup_guard_steps_in_and_stops_the_hasty_defense():
    counts, log = scripted(fight(("backup", "backup")), [6, 6, 2, 6, 6])
    assert play_log(log) == [
        ("turn", "R3", "W", 6),
        ("act", "R4", "W", 6, False),
        ("attack", "R4", "W", "D", 6, False),
        ("response", "R7", "G1", "D", 6, "guard", 0),  # D makes no hasty defense
        ("turn", "R3", "W", 6),
        ("act", "R4", "W", 6, False),
        ("attack", "R4", "W", "D", 6, False),
        ("response", "R7", "G2", "D", 6, "guard", 0),  # G1 is out of dice now
        ("turn", "R3", "D", 2),
        ("act", "R4", "D", 2, False),
    ]
    assert counts[("D", "defenses")] == 0 and counts[("D", "defended")] == 2


def test_r7_backup_and_always_guards_answer_in_scenario_order():
    # G1 "always" and G2 "backup" both answer (D's 1 cannot defend normally); the
    # backup guard stops D's hasty defense, the always guard does not stop anything
    counts, log = scripted(fight(("always", "backup")), [6, 6, 1, 6, 6])
    assert play_log(log)[2:5] == [
        ("attack", "R4", "W", "D", 6, False),
        ("response", "R7", "G1", "D", 6, "guard", 0),
        ("response", "R7", "G2", "D", 6, "guard", 0),
    ]
    # a backup guard does not step in when D defends normally; an always guard does.
    # W's second 6 then beats G1's 6 at T2 (W's other die, its spent 6, beats nothing)
    # and attacks D, now without dice: the backup guard steps in.
    counts, log = scripted(fight(("backup", "always")), [6, 6, 6, 6, 6])
    assert play_log(log) == [
        ("turn", "R3", "W", 6),
        ("act", "R4", "W", 6, False),
        ("attack", "R4", "W", "D", 6, False),
        ("response", "R7", "D", "D", 6, "self", 0),
        ("response", "R7", "G2", "D", 6, "guard", 0),
        ("turn", "R3", "W", 6),
        ("act", "R4", "W", 6, False),
        ("attack", "R4", "W", "D", 6, False),
        ("response", "R7", "G1", "D", 6, "guard", 0),
    ]
    assert counts[("G1", "guard_defenses")] == 1 and counts[("D", "defended")] == 2


def one_die_fight(guard: str, surprised: bool = False, guard_surprised: bool = False):
    """W, D, G with one die each; W attacks D; D and G never attack."""
    return scenario(
        {"name": "W", "side": "wolves", "readiness": 1, "target": "D"},
        {"name": "D", "side": "party", "readiness": 1, "attack_share": 0.0, "surprised": surprised},
        {
            "name": "G",
            "side": "party",
            "readiness": 1,
            "attack_share": 0.0,
            "guard": guard,
            "surprised": guard_surprised,
        },
    )


# Hand derivations for one die each (w: W's die, d: D's, g: G's).  Whoever has the
# highest die acts first; equal single dice tie through T1 (one each) and T2 (no other
# dice) to T3, so the tied act in a uniformly random order.  W attacks once, at w.
#   G can answer iff g == w and W comes first of the two: P = 1/6 * 1/2 = 1/12
#     (g > w: G has acted, its die is spent; g < w: its die is below the attack).
#   D answers hastily iff d < w (P = 15/36); normally iff d == w and W comes first.
P_G_CAN = Fraction(1, 12)
P_D_LOW = Fraction(15, 36)


def test_r7_always_guard_exact():
    exp = exact_expectations(one_die_fight("always"))
    # the always guard never stops D's hasty defense
    assert exp[("D", "hasty_defenses")] == P_D_LOW
    assert exp[("G", "guard_defenses")] == P_G_CAN == exp[("G", "defenses")]
    # scale w - d: sum over d < w of (w - d) / 36 = (1*5 + 2*4 + 3*3 + 4*2 + 5*1) / 36
    assert exp[("D", "hasty_scale_total")] == Fraction(35, 36)
    assert exp[("D", "defenses")] == P_D_LOW + Fraction(1, 6) * Fraction(1, 2)
    # hasty_only: d < w and G does not answer (independent of d)
    assert exp[("D", "hasty_only")] == P_D_LOW * (1 - P_G_CAN)


def test_r7_backup_guard_exact():
    exp = exact_expectations(one_die_fight("backup"))
    # the backup guard steps in when it can and D cannot defend normally, and then
    # D makes no hasty defense: D's hasty defenses lose the cases d < w, G answers
    assert exp[("D", "hasty_defenses")] == P_D_LOW * (1 - P_G_CAN) == Fraction(55, 144)
    # G answers: d != w (5/6) and G can (1/12); or d == g == w (1/36) in the order
    # D, W, G of the three tied (1/6): D has spent its die acting, W attacks, G steps in
    assert exp[("G", "guard_defenses")] == Fraction(5, 6) * P_G_CAN + Fraction(1, 36 * 6)
    assert exp[("G", "guard_defenses")] == Fraction(2, 27)


def test_r7_two_always_guards_exact():
    """fight() with readiness 1 for W: D, G1, G2 all may answer the one attack."""
    s = scenario(
        {"name": "W", "side": "wolves", "readiness": 1, "target": "D"},
        {"name": "D", "side": "party", "readiness": 1, "attack_share": 0.0},
        {"name": "G1", "side": "party", "readiness": 1, "attack_share": 0.0, "guard": "always"},
        {"name": "G2", "side": "party", "readiness": 1, "attack_share": 0.0, "guard": "always"},
    )
    exp = exact_expectations(s)
    for g in ("G1", "G2"):
        assert exp[(g, "guard_defenses")] == P_G_CAN  # the tied order is symmetric
    assert exp[("D", "defenses")] == Fraction(1, 2)  # 15/36 hasty + 6/36 * 1/2 normal
    # nobody answers: everyone tied with W at w goes before W, a set of k tied others
    # all before W has probability 1/(k + 1); and D has no hasty defense (d >= w)
    tied_guards = {0: Fraction(25, 36), 1: Fraction(10, 36), 2: Fraction(1, 36)}
    guards_silent = sum(p / (k + 1) for k, p in tied_guards.items())  # D not tied
    guards_and_d_silent = sum(p / (k + 2) for k, p in tied_guards.items())  # D tied too
    assert guards_silent == Fraction(91, 108)
    undefended = Fraction(15, 36) * guards_silent + Fraction(1, 6) * guards_and_d_silent
    hasty_only = P_D_LOW * guards_silent
    assert exp[("D", "undefended")] == undefended
    assert exp[("D", "hasty_only")] == hasty_only
    assert exp[("D", "defended")] == 1 - undefended - hasty_only


# --------------------------------------------------------------------------- surprised
def test_surprised_victim_never_responds_a_backup_guard_may():
    exp = exact_expectations(one_die_fight("backup", surprised=True))
    assert exp[("D", "defenses")] == 0
    # D surprised never "defends normally", so G steps in whenever it can
    assert exp[("G", "guard_defenses")] == P_G_CAN
    assert exp[("D", "defended")] == P_G_CAN and exp[("D", "undefended")] == 1 - P_G_CAN
    # without a guard every attack on a surprised combatant is unanswered
    exp = exact_expectations(one_die_fight("never", surprised=True))
    assert exp[("D", "undefended")] == 1 and exp[("D", "defenses")] == 0
    # a surprised guard makes no responses at all
    exp = exact_expectations(one_die_fight("always", guard_surprised=True))
    assert exp[("G", "defenses")] == 0 and exp[("D", "hasty_defenses")] == P_D_LOW
    # scripted: the backup guard steps in for the surprised D, whose 6 stays unused
    counts, log = scripted(fight(("backup", "never"), {"surprised": True}), [6, 6, 6, 6, 1])
    assert play_log(log)[2:4] == [
        ("attack", "R4", "W", "D", 6, False),
        ("response", "R7", "G1", "D", 6, "guard", 0),
    ]
    assert counts[("D", "actions")] == 1


def holder_victim(surprised: bool) -> Scenario:
    return scenario(
        {
            "name": "D",
            "side": "party",
            "readiness": 2,
            "hold": "until_attacked",
            "attack_share": 0.0,
            "surprised": surprised,
        },
        {"name": "W", "side": "wolves", "readiness": 1, "target": "D"},
    )


def test_surprised_until_attacked_holder_stops_holding_without_responding():
    counts, log = scripted(holder_victim(True), [6, 5, 3])
    assert play_log(log) == [
        ("turn", "R3", "D", 6),
        ("hold", "R5", "D"),
        ("turn", "R3", "W", 3),
        ("act", "R4", "W", 3, False),
        ("attack", "R4", "W", "D", 3, False),
        ("unanswered", "R7", "D"),
        ("release", "R5", "D", "attacked"),
        # W acted at 3 below both of D's held dice: both are holder's actions (R5 rev 2)
        ("turn", "R3", "D", 6),
        ("act", "R4", "D", 6, True),
        ("turn", "R3", "D", 5),
        ("act", "R4", "D", 5, True),
    ]
    assert (counts[("D", "actions")], counts[("D", "defenses")]) == (2, 0)
    counts, log = scripted(holder_victim(False), [6, 5, 3])
    assert play_log(log)[5:] == [
        ("response", "R7", "D", "D", 6, "self", 0),
        ("release", "R5", "D", "attacked"),
        ("turn", "R3", "D", 5),
        ("act", "R4", "D", 5, True),
    ]
    # exact: D goes first iff its higher die d1 >= w (a tie goes to D by T1 or T2) and
    # holds; either way W attacks it once.  Surprised, it then acts with both dice;
    # otherwise it defends with d1 (hastily iff w > d1) and acts once.
    exp = exact_expectations(holder_victim(True))
    assert (exp[("D", "actions")], exp[("D", "defenses")], exp[("D", "undefended")]) == (2, 0, 1)
    exp = exact_expectations(holder_victim(False))
    assert (exp[("D", "actions")], exp[("D", "defenses")]) == (1, 1)
    p_w_above = sum(Fraction(w - 1, 6) ** 2 for w in range(1, 7)) / 6  # P(max(d1, d2) < w)
    assert exp[("D", "hasty_defenses")] == p_w_above == Fraction(55, 216)
    assert exp[("D", "attacked_before_acting")] == 1


# --------------------------------------------------------------------------- R5 holder actions
def held_six(holder_actions: str, b_defend: str = "never") -> Scenario:
    """A holds until B acts; C guards B always (R5 release as revision 2: "any")."""
    return scenario(
        {"name": "A", "side": "party", "readiness": 2, "hold": "until_enemy_acts", "target": "B"},
        {"name": "B", "side": "foes", "readiness": 3, "attack_share": 0.0, "defend": b_defend},
        {"name": "C", "side": "foes", "readiness": 2, "attack_share": 0.0, "guard": "always"},
        holder_actions=holder_actions,
        release="any",
    )


def test_held_dice_ally_guards_a_later_held_die_with_any_die():
    dice = [6, 5, 4, 2, 1, 1, 1]  # A 6,5; B 4,2,1; C 1,1
    head = [
        ("turn", "R3", "A", 6),
        ("hold", "R5", "A"),
        ("turn", "R3", "B", 4),
        ("act", "R4", "B", 4, False),
        ("release", "R5", "A", "enemy_acted"),
        ("declare", "R5", "A", 6),
        ("act", "R4", "A", 6, True),
        ("attack", "R4", "A", "B", 6, True),
        ("response", "R7", "C", "B", 1, "guard", 0),  # against a holder: any die
        ("turn", "R3", "A", 5),
    ]
    counts, log = scripted(held_six("held_dice"), dice)
    assert play_log(log) == head + [
        # B acted at 4 < 5 earlier: A's 5 is a held die whose turn had passed
        ("act", "R4", "A", 5, True),
        ("attack", "R4", "A", "B", 5, True),
        ("response", "R7", "C", "B", 1, "guard", 0),
        ("turn", "R3", "B", 2),
        ("act", "R4", "B", 2, False),
        ("turn", "R3", "B", 1),
        ("act", "R4", "B", 1, False),
    ]
    assert counts[("C", "guard_defenses")] == 2 and counts[("B", "defended")] == 2
    counts, log = scripted(held_six("release_only"), dice)
    assert play_log(log) == head + [
        ("act", "R4", "A", 5, False),
        ("attack", "R4", "A", "B", 5, False),
        ("unanswered", "R7", "B"),  # C's 1 is below 5
        ("turn", "R3", "B", 2),
        ("act", "R4", "B", 2, False),
        ("turn", "R3", "B", 1),  # T2: B's other dice 4,2 beat C's 1
        ("act", "R4", "B", 1, False),
        ("turn", "R3", "C", 1),
        ("act", "R4", "C", 1, False),
    ]
    assert counts[("C", "guard_defenses")] == 1 and counts[("B", "undefended")] == 1
    # the defender itself answers both attacks, the first (the release) normally with
    # its 2; the later one normally with its 1 under held_dice, hastily under release_only
    first = [
        ("attack", "R4", "A", "B", 6, True),
        ("response", "R7", "B", "B", 2, "self", 0),
        ("response", "R7", "C", "B", 1, "guard", 0),
        ("turn", "R3", "A", 5),
    ]
    _, log = scripted(held_six("held_dice", "always"), dice)
    assert play_log(log)[7:] == first + [
        ("act", "R4", "A", 5, True),
        ("attack", "R4", "A", "B", 5, True),
        ("response", "R7", "B", "B", 1, "self", 0),
        ("response", "R7", "C", "B", 1, "guard", 0),
    ]
    _, log = scripted(held_six("release_only", "always"), dice)
    assert play_log(log)[7:] == first + [
        ("act", "R4", "A", 5, False),
        ("attack", "R4", "A", "B", 5, False),
        ("response", "R7", "B", "B", 1, "hasty", 4),
        ("turn", "R3", "C", 1),
        ("act", "R4", "C", 1, False),
    ]


def test_held_dice_after_an_until_attacked_release():
    s = {
        mode: scenario(
            {"name": "A", "side": "party", "readiness": 2, "hold": "until_attacked"},
            {"name": "B", "side": "foes", "readiness": 3},
            holder_actions=mode,
        )
        for mode in ("held_dice", "release_only")
    }
    head = [
        ("turn", "R3", "A", 6),
        ("hold", "R5", "A"),
        ("turn", "R3", "B", 3),
        ("act", "R4", "B", 3, False),
        ("attack", "R4", "B", "A", 3, False),
        ("response", "R7", "A", "A", 6, "self", 0),
        ("release", "R5", "A", "attacked"),
        ("turn", "R3", "A", 5),
    ]
    tail = [
        ("turn", "R3", "B", 1),
        ("act", "R4", "B", 1, False),
        ("attack", "R4", "B", "A", 1, False),
        ("unanswered", "R7", "A"),
    ]
    _, log = scripted(s["held_dice"], [6, 5, 3, 2, 1])
    assert play_log(log) == head + [
        ("act", "R4", "A", 5, True),
        ("attack", "R4", "A", "B", 5, True),
        ("response", "R7", "B", "B", 2, "self", 0),
        *tail,
    ]
    _, log = scripted(s["release_only"], [6, 5, 3, 2, 1])
    assert play_log(log) == head + [
        ("act", "R4", "A", 5, False),
        ("attack", "R4", "A", "B", 5, False),
        ("response", "R7", "B", "B", 2, "hasty", 3),
        *tail,
    ]


def test_held_dice_only_for_a_combatant_that_held():
    # X holds at 6 (T2: its 1 beats Z's nothing), defends Z's attack with it and keeps
    # holding, then declares its 1 (release "any", revision 2: under "higher" its 1 is
    # not above Y's 5).  Y never held: its 5 after X's action at 1 is an ordinary
    # action, and Z2 answers it hastily.
    s = scenario(
        {"name": "X", "side": "party", "readiness": 2, "hold": "until_enemy_acts", "target": "Z"},
        {"name": "Y", "side": "party", "readiness": 1, "target": "Z2"},
        {"name": "Z", "side": "foes", "readiness": 1, "target": "X"},
        {"name": "Z2", "side": "foes", "readiness": 1, "attack_share": 0.0},
        release="any",
    )
    counts, log = scripted(s, [6, 1, 5, 6, 2])
    assert play_log(log) == [
        ("turn", "R3", "X", 6),
        ("hold", "R5", "X"),
        ("turn", "R3", "Z", 6),
        ("act", "R4", "Z", 6, False),
        ("attack", "R4", "Z", "X", 6, False),
        ("response", "R7", "X", "X", 6, "self", 0),
        ("release", "R5", "X", "enemy_acted"),
        ("declare", "R5", "X", 1),
        ("act", "R4", "X", 1, True),
        ("attack", "R4", "X", "Z", 1, True),
        ("unanswered", "R7", "Z"),
        ("turn", "R3", "Y", 5),
        ("act", "R4", "Y", 5, False),
        ("attack", "R4", "Y", "Z2", 5, False),
        ("response", "R7", "Z2", "Z2", 2, "hasty", 3),
    ]
    assert counts[("X", "defenses")] == 1 and counts[("X", "actions")] == 1


def test_holder_guards_an_ally_and_keeps_holding():
    # X holds at 6 (T2: its 5 beats Z's nothing); Z attacks Y at 6: Y answers hastily
    # first, then X guards with its 6 while holding; then X is released by Z's action
    s = scenario(
        {
            "name": "X",
            "side": "party",
            "readiness": 2,
            "hold": "until_enemy_acts",
            "guard": "always",
        },
        {"name": "Y", "side": "party", "readiness": 1, "attack_share": 0.0},
        {"name": "Z", "side": "foes", "readiness": 1, "target": "Y"},
    )
    counts, log = scripted(s, [6, 5, 1, 6])
    assert play_log(log) == [
        ("turn", "R3", "X", 6),
        ("hold", "R5", "X"),
        ("turn", "R3", "Z", 6),
        ("act", "R4", "Z", 6, False),
        ("attack", "R4", "Z", "Y", 6, False),
        ("response", "R7", "Y", "Y", 1, "hasty", 5),
        ("response", "R7", "X", "Y", 6, "guard", 0),
        ("release", "R5", "X", "enemy_acted"),
        ("declare", "R5", "X", 5),
        ("act", "R4", "X", 5, True),
        ("attack", "R4", "X", "Z", 5, True),
        ("unanswered", "R7", "Z"),
    ]
    assert counts[("X", "guard_defenses")] == 1 and counts[("Y", "defended")] == 1


def late_holder(holder_actions: str) -> Scenario:
    """A (2 dice) holds until B acts; B (3 dice) never attacks and always defends (R5
    release as revision 2: "any")."""
    return scenario(
        {"name": "A", "side": "party", "readiness": 2, "hold": "until_enemy_acts", "target": "B"},
        {"name": "B", "side": "foes", "readiness": 3, "attack_share": 0.0},
        holder_actions=holder_actions,
        release="any",
    )


def test_held_dice_against_release_only_exact():
    """Where the two readings of R5 differ, and by exactly how much.

    Hand derivation (A's dice a1 >= a2, B's b1 >= b2 >= b3).  If B goes first, A's
    first turn comes after an opponent acted: A never holds and both readings agree.
    If A goes first (a1 >= b1 and R3 gives it A) it holds; B acts at b1 (no attack);
    A is released and declares at a1, a holder's action in both readings (B answers
    normally with b2).  Then A's a2 against B's b3: B acts first if b3 > a2 (A's
    later attack finds B without dice), a tie (b3 == a2) goes to B by T2 (b1 <= a1,
    and B has one more die), and if a2 > b3 A attacks at a2 and B answers with b3.
    Under "held_dice" that action is a holder's iff b1 < a2 (B acted below it): B's
    answer is normal; under "release_only" it is hasty, scale a2 - b3 (b3 <= b1 < a2).
    If b1 >= a2 it is hasty in both.  B answers every attack either way (defend
    "always" accepts every scale), so every die is spent the same way: only the
    hasty/normal split of B's responses can differ.
    """
    held = exact_expectations(late_holder("held_dice"))
    release = exact_expectations(late_holder("release_only"))
    moved = Fraction(0)  # P(b1 < a2): B's response turns from hasty to normal
    scale = Fraction(0)
    at_least = [Fraction(0)] * 6
    for a in product(range(1, 7), repeat=2):
        for b in product(range(1, 7), repeat=3):
            a2, b1, b3 = min(a), max(b), min(b)
            if b1 < a2:
                moved += Fraction(1, 6**5)
                scale += Fraction(a2 - b3, 6**5)
                for k in range(1, a2 - b3 + 1):
                    at_least[k] += Fraction(1, 6**5)
    # the same by the closed form: sum over m of P(min of 2 = m) P(max of 3 < m)
    assert moved == sum(Fraction(13 - 2 * m, 36) * Fraction(m - 1, 6) ** 3 for m in range(1, 7))
    assert moved == Fraction(517, 7776)
    changed = {
        ("B", "hasty_defenses"): moved,
        ("B", "hasty_only"): moved,
        ("B", "hits"): moved,  # R7 [rev 3]: a hasty-only answer is no normal response
        ("B", "defended"): -moved,
        ("B", "hasty_scale_total"): scale,
        **{("B", f"hasty_ge.{k}"): at_least[k] for k in range(1, 6)},
    }
    for key, diff in changed.items():
        assert release[key] - held[key] == diff, key
    assert differing(held, release) == {k for k, d in changed.items() if d != 0}
    assert at_least[1] == moved and at_least[5] > 0  # scales 1 .. 5 all occur


# --------------------------------------------------------------------------- R5 [rev 3] release
def jump_in(release: str) -> Scenario:
    """RULES.md's R5 example: A holds until an enemy acts and attacks W; W attacks A."""
    return scenario(
        {"name": "A", "side": "a", "readiness": 2, "hold": "until_enemy_acts"},
        {"name": "W", "side": "w", "readiness": 2},
        release=release,
    )


def test_r5_rev3_worked_example():
    """A (hold until_enemy_acts) 6,1 against W 5,5: W attacks A at 5, A defends with
    its 6, A is released with a 1 < 5: under "higher" W's second 5 comes first (A
    answers it hastily); under "any" (revision 2) A declares at 1 and W defends."""
    head = [
        ("turn", "R3", "A", 6),
        ("hold", "R5", "A"),
        ("turn", "R3", "W", 5),
        ("act", "R4", "W", 5, False),
        ("attack", "R4", "W", "A", 5, False),
        ("response", "R7", "A", "A", 6, "self", 0),
        ("release", "R5", "A", "enemy_acted"),
    ]
    counts, log = scripted(jump_in("higher"), [6, 1, 5, 5])
    assert play_log(log) == head + [
        ("rejoin", "R5", "A", 1, 5),
        ("turn", "R3", "W", 5),
        ("act", "R4", "W", 5, False),
        ("attack", "R4", "W", "A", 5, False),
        ("response", "R7", "A", "A", 1, "hasty", 4),
    ]
    assert counts[("W", "actions")] == 2 and counts[("A", "actions")] == 0
    assert counts[("A", "hasty_defenses")] == 1 and counts[("W", "defenses")] == 0
    counts, log = scripted(jump_in("any"), [6, 1, 5, 5])
    assert play_log(log) == head + [
        ("declare", "R5", "A", 1),
        ("act", "R4", "A", 1, True),
        ("attack", "R4", "A", "W", 1, True),
        ("response", "R7", "W", "W", 5, "self", 0),
    ]
    assert counts[("W", "actions")] == 1 and counts[("A", "actions")] == 1


def test_r5_rev3_open_cases():
    """docs/rules-decisions.md R5 [rev 3]: a die equal to the next initiative does not
    jump in (it rejoins R3 and T1/T2 decide, here T2: A's 6 beats W's 5); a die above
    it does; with nobody else able to take a turn, any die jumps in."""
    counts, log = scripted(jump_in("higher"), [6, 5, 5, 5])  # A 6,5 against W 5,5
    assert play_log(log)[6:] == [
        ("release", "R5", "A", "enemy_acted"),
        ("rejoin", "R5", "A", 5, 5),
        ("turn", "R3", "A", 5),  # T1 one 5 each; T2 A's 6 against W's 5
        ("act", "R4", "A", 5, False),  # W acted at 5, not below: not a holder's action
        ("attack", "R4", "A", "W", 5, False),
        ("response", "R7", "W", "W", 5, "self", 0),
    ]
    _, log = scripted(jump_in("higher"), [6, 6, 5, 4])  # A 6,6 against W 5,4
    assert play_log(log)[6:8] == [
        ("release", "R5", "A", "enemy_acted"),
        ("declare", "R5", "A", 6),  # 6 > 4
    ]
    # nobody else has dice (W spent its only die): A's 1 is above "no turn" (0)
    s = scenario(
        {"name": "A", "side": "a", "readiness": 2, "hold": "until_enemy_acts"},
        {"name": "W", "side": "w", "readiness": 1},
    )
    _, log = scripted(s, [6, 1, 5])
    assert play_log(log)[6:] == [
        ("release", "R5", "A", "enemy_acted"),
        ("declare", "R5", "A", 1),
        ("act", "R4", "A", 1, True),
        ("attack", "R4", "A", "W", 1, True),
        ("unanswered", "R7", "W"),
    ]


def test_r5_rev3_release_exact():
    """Exact: A (2 dice, until_enemy_acts) against W (2 dice), both attacking.

    Hand derivation (A's dice a1 >= a2, W's w1 >= w2).  A holds iff R3 gives it the
    first turn: its pool beats W's (high to low), or they are equal and T3 picks A
    (1/2).  W attacks A at w1, A answers normally with a1 >= w1 and is released with
    a2; W's next initiative is w2.  "any": A declares a2, W answers normally.
    "higher": a2 > w2 the same; a2 == w2 A rejoins R3 and T2 (a1 against w1) gives A
    the turn when a1 > w1 (its action, answered normally by W: the same counts);
    equal pools go to T3 again, and when W wins it (1/2) W attacks at w2 and A answers
    normally with a2; a2 < w2 (so a1 > w1 >= w2 > a2) W attacks at w2 first and A
    answers hastily, scale w2 - a2.  In both changed cases W takes two actions and
    A none.  P(a1 > w1 >= w2 > a2) = 100 / 6**4 (lo < w2 <= w1 < hi: 20 with w1 == w2,
    15 four distinct values, times the orders) = 25/324; P(equal pools) = (6 + 15 * 4)
    / 6**4 = 11/216, of which 1/4 changes.  Every other count is the same.
    """
    higher = exact_round(jump_in("higher"))
    anyr = exact_round(jump_in("any"))
    hasty = Fraction(25, 324)
    changed = hasty + Fraction(11, 216) / 4
    assert changed == Fraction(233, 2592)
    scale = Fraction(0)  # E[w2 - a2] over a1 > w1 >= w2 > a2
    at_least = [Fraction(0)] * 6
    for a in product(range(1, 7), repeat=2):
        for w in product(range(1, 7), repeat=2):
            if max(a) > max(w) >= min(w) > min(a):
                scale += Fraction(min(w) - min(a), 6**4)
                for k in range(1, min(w) - min(a) + 1):
                    at_least[k] += Fraction(1, 6**4)
    diff = {
        ("A", "actions"): -changed,
        ("A", "no_action"): changed,
        ("A", "actions_dist.0"): changed,
        ("A", "actions_dist.1"): -changed,
        ("A", "attacks_made"): -changed,
        ("W", "attacks_received"): -changed,
        ("W", "defenses"): -changed,
        ("A", "defenses"): changed,
        ("W", "defended"): -changed,
        ("W", "actions"): changed,
        ("W", "actions_dist.1"): -changed,
        ("W", "actions_dist.2"): changed,
        ("W", "attacks_made"): changed,
        ("A", "attacks_received"): changed,
        ("A", "defended"): changed - hasty,
        ("A", "hasty_only"): hasty,
        ("A", "hits"): hasty,  # R7 [rev 3] with hit_chance 1: undefended + hasty_only
        ("A", "hasty_defenses"): hasty,
        ("A", "hasty_scale_total"): scale,
        **{("A", f"hasty_ge.{k}"): at_least[k] for k in range(1, 6)},
    }
    for key, d in diff.items():
        assert higher[key] - anyr[key] == d, key
    assert differing(higher, anyr) == {k for k, d in diff.items() if d != 0}
    assert at_least[5] == 0 and at_least[4] > 0  # a2 >= 1 and w2 <= 5: scales 1 .. 4


# --------------------------------------------------------------------------- R3 [rev 3] chain
def test_r3_rev3_chain_traced_case():
    """Issue 26's trace: W=6,6,2 against A=6,6,1 under "chain": W acts, A defends, W's
    run ends and R3 chooses afresh (T2 gives W the turn again: 6,2 beats 6,1); under
    "chain_unbroken" (revision 2) W's second 6 follows with no new turn."""
    rules = {"order": "chain"}
    fight = [
        {"name": "W", "side": "w", "readiness": 3},
        {"name": "A", "side": "a", "readiness": 3, "attack_share": 0.0},
    ]
    _, log = scripted(scenario(*fight, **rules), [6, 6, 2, 6, 6, 1])
    assert play_log(log)[:7] == [
        ("turn", "R3", "W", 6),
        ("act", "R4", "W", 6, False),
        ("attack", "R4", "W", "A", 6, False),
        ("response", "R7", "A", "A", 6, "self", 0),
        ("run_broken", "R3", "W", 6),
        ("turn", "R3", "W", 6),
        ("act", "R4", "W", 6, False),
    ]
    _, log = scripted(scenario(*fight, order="chain_unbroken"), [6, 6, 2, 6, 6, 1])
    assert play_log(log)[:5] == [
        ("turn", "R3", "W", 6),
        ("act", "R4", "W", 6, False),
        ("attack", "R4", "W", "A", 6, False),
        ("response", "R7", "A", "A", 6, "self", 0),
        ("act", "R4", "W", 6, False),
    ]


def test_r3_rev3_a_response_hands_the_turn_to_a_third():
    """W 6,6,5 leads C 6,6,1 by T2; W's attack on A is answered, so under "chain" C's
    two 6s now win T1 and C acts before W's second 6; a run nobody answers goes on."""
    fight = [
        {"name": "W", "side": "w", "readiness": 3, "target": "A"},
        {"name": "A", "side": "a", "readiness": 1, "attack_share": 0.0},
        {"name": "C", "side": "a", "readiness": 3, "attack_share": 0.0},
    ]
    dice = [6, 6, 5, 3, 6, 6, 1]
    _, log = scripted(scenario(*fight, order="chain"), dice)
    assert play_log(log)[:10] == [
        ("turn", "R3", "W", 6),
        ("act", "R4", "W", 6, False),
        ("attack", "R4", "W", "A", 6, False),
        ("response", "R7", "A", "A", 3, "hasty", 3),
        ("run_broken", "R3", "W", 6),
        ("turn", "R3", "C", 6),
        ("act", "R4", "C", 6, False),
        ("act", "R4", "C", 6, False),  # nobody answers C's actions: its run goes on
        ("turn", "R3", "W", 6),
        ("act", "R4", "W", 6, False),
    ]
    _, log = scripted(scenario(*fight, order="chain_unbroken"), dice)
    assert [e[2] for e in play_log(log) if e[0] == "act"][:3] == ["W", "W", "C"]


def test_r3_rev3_chain_exact():
    """Exact, W (2 dice, attacks) against A (2 dice, never attacks, always defends).

    With two combatants a response never gains the responder the turn (it spends its
    own highest die; T2 compares the round's full pools): the run ends, but R3 gives W
    its next die of the same value anyway, except when both pools are v,v.  Then T3
    gives W the first turn (1/2), A answers with a v, and T3 again (1/2) gives A its
    last v before W's second attack, which A can no longer answer.  P = 6 / 36**2 / 4
    = 1/864; "chain_unbroken" and "dynamic"-like counts otherwise agree."""
    fight = [
        {"name": "W", "side": "w", "readiness": 2},
        {"name": "A", "side": "a", "readiness": 2, "attack_share": 0.0},
    ]
    broken = exact_round(scenario(*fight, order="chain"))
    unbroken = exact_round(scenario(*fight, order="chain_unbroken"))
    p = Fraction(1, 864)
    diff = {
        ("A", "actions"): p,
        ("A", "no_action"): -p,
        ("A", "actions_dist.0"): -p,
        ("A", "actions_dist.1"): p,
        ("A", "defenses"): -p,
        ("A", "defended"): -p,
        ("A", "undefended"): p,
        ("A", "hits"): p,  # R7 [rev 3] with hit_chance 1: undefended + hasty_only
    }
    for key, d in diff.items():
        assert broken[key] - unbroken[key] == d, key
    assert differing(broken, unbroken) == set(diff)
    # and with no response at all (A never defends) the two chains are the same
    fight[1]["defend"] = "never"
    assert exact_round(scenario(*fight, order="chain")) == exact_round(
        scenario(*fight, order="chain_unbroken")
    )


# --------------------------------------------------------------------------- R8
def all_holders(surprised: bool = False) -> Scenario:
    return scenario(
        {"name": "H", "side": "party", "readiness": 1, "hold": "until_enemy_acts", "weakness": 2},
        {
            "name": "S",
            "side": "foes",
            "readiness": 2,
            "hold": "until_attacked",
            "role": "secondary",
            "surprised": surprised,
        },
    )


@pytest.mark.parametrize("surprised", [False, True])
def test_r8_on_edge_and_edge_wound_exact(surprised):
    """Every normal round is a stalemate: H's first turn comes before anyone acted, S's
    before anyone attacked, so both hold (a surprised combatant still holds).  The forced
    round after it has no holds and no stalemate.  Rounds alternate, s = 1:
    E = (normal + forced) / 2; the hero's wound is its weakness 2, the secondary's 3."""
    s = all_holders(surprised)
    normal = exact_round(s)
    assert normal[("", "stalemate")] == 1
    assert normal[("H", "on_edge")] == 1 and normal[("S", "on_edge")] == 1
    assert (normal[("H", "edge_wound")], normal[("S", "edge_wound")]) == (2, 3)
    assert (normal[("H", "expired_dice")], normal[("S", "expired_dice")]) == (1, 2)
    forced = exact_round(s, no_hold=True)
    assert forced[("", "stalemate")] == 0 and forced[("H", "on_edge")] == 0
    for name, dice in (("H", 1), ("S", 2)):  # nothing held: every die is spent
        assert forced[(name, "actions")] + forced[(name, "defenses")] == dice
    exp = exact_expectations(s)
    assert exp[("", "stalemate")] == Fraction(1, 2)
    assert exp[("H", "on_edge")] == exp[("S", "on_edge")] == Fraction(1, 2)
    assert exp[("H", "edge_wound")] == 1 and exp[("S", "edge_wound")] == Fraction(3, 2)
    assert exp[("H", "actions")] == forced[("H", "actions")] / 2
    # the stream carries R8: stalemate, forced round, stalemate, ...
    rounds = twin.play_rounds(s, NaiveStream(round_words([1, 2, 3, 4], 0)), 5)
    assert [c[("", "stalemate")] for c in rounds] == [1, 0, 1, 0, 1]
    log: list[tuple] = []
    twin.play_round(s, FixedDice([6, 6, 6]), log=log)
    assert log[-3:] == [("expired", "R5", "H", 1), ("expired", "R5", "S", 2), ("stalemate", "R8")]
    log = []
    twin.play_round(s, FixedDice([6, 6, 6]), no_hold=True, log=log)
    assert log[0] == ("no_hold", "R8") and not any(e[0] == "hold" for e in log)


def test_r8_no_stalemate_when_someone_never_holds():
    s = scenario(
        {"name": "H", "side": "party", "readiness": 1, "hold": "until_enemy_acts", "weakness": 2},
        {"name": "S", "side": "foes", "readiness": 1, "role": "secondary", "attack_share": 0.0},
    )
    exp = exact_expectations(s)
    assert exp[("", "stalemate")] == 0 and exp[("H", "edge_wound")] == 0


# --------------------------------------------------------------------------- random scenarios
HOLDS = ("never", "until_attacked", "until_enemy_acts")
DEFENDS = ("always", "never", "unless_hasty", "hasty_up_to:0", "hasty_up_to:1", "hasty_up_to:3")
SHARES = (0.0, 1.0, 1.0, 0.5, 0.25, 0.8)


def random_entries(rng: random.Random, revision: int) -> tuple[list[dict[str, Any]], dict]:
    """Random combatant entries (``count`` groups included) and rules.

    ``revision = 1``: only revision 1's fields, ``guard`` a bool; ``2``: every field.
    """
    n_sides = rng.choice((2, 2, 3))
    total = rng.randint(max(2, n_sides), 5)
    sides = [f"side{k}" for k in range(n_sides)]
    entries: list[dict[str, Any]] = []
    made = 0
    while made < total:
        room = total - made - max(0, n_sides - len(entries) - 1)
        count = 1 if rng.random() < 0.6 else rng.randint(1, min(3, room))
        side = sides[len(entries)] if len(entries) < n_sides else rng.choice(sides)
        entries.append({"name": f"C{len(entries)}", "side": side, "count": count})
        made += count
    members = []  # (name, group, side)
    for e in entries:
        if e["count"] == 1:
            members.append((e["name"], e["name"], e["side"]))
        else:
            members += [
                (f"{e['name']} {k}", e["name"], e["side"]) for k in range(1, e["count"] + 1)
            ]
    for e in entries:
        e["readiness"] = rng.randint(1, 4)
        if rng.random() < 0.4:
            e["advantage"] = rng.choice((1, 2, 3, 5, 9))
        if rng.random() < 0.3:
            e["role"] = "secondary"
        e["hold"] = rng.choice(HOLDS)
        e["defend"] = rng.choice(DEFENDS)
        if revision == 1:
            e["guard"] = rng.random() < 0.35
        else:
            e["guard"] = rng.choice(("never", "never", "backup", "always"))
            e["surprised"] = rng.random() < 0.15
            if e.get("role") != "secondary":
                e["weakness"] = rng.randint(0, 3)
        e["attack_share"] = rng.choice(SHARES)
        opponents = [m for m in members if m[2] != e["side"]]
        groups = sorted({m[1] for m in opponents if m[0] != m[1]})
        r = rng.random()
        if r < 0.25:
            e["target"] = rng.choice(opponents)[0]
        elif r < 0.45 and groups:
            e["target"] = rng.choice(groups)
    if revision == 1:  # (the record's draws: "chain" is revision 1's unbroken chain)
        rules = {"order": rng.choice(("dynamic", "chain"))}
        rules["prep"] = rng.choice(("sixes", "lowest"))
    else:
        rules = {"order": rng.choice(twin.ORDERS)}
        rules["prep"] = rng.choice(("one_die", "one_die", "sixes", "lowest"))
        rules["holder_actions"] = rng.choice(("held_dice", "release_only"))
        rules["release"] = rng.choice(twin.RELEASES)
    return entries, rules


def rev1_readings(entries: list[dict[str, Any]], rules: dict[str, Any]) -> Scenario:
    """The same fight for the new twin, revision 1's readings written out."""
    new = []
    for e in entries:
        e = dict(e)
        e["guard"] = "backup" if e["guard"] else "never"
        e["surprised"] = False
        new.append(e)
    order = "chain_unbroken" if rules["order"] == "chain" else rules["order"]
    rules = {**rules, "order": order}
    return scenario(*new, **rules, holder_actions="release_only", release="any")


def check_identities(s: Scenario, counts: Counts) -> None:
    """Round identities (R7 bookkeeping, R4/R5 dice)."""
    names = [c.name for c in s.combatants]
    for c in s.combatants:
        n = c.name
        assert counts[(n, "attacks_received")] == (
            counts[(n, "undefended")] + counts[(n, "defended")] + counts[(n, "hasty_only")]
        )
        dice = counts[(n, "actions")] + counts[(n, "defenses")] + counts[(n, "expired_dice")]
        assert dice == c["readiness"]
        assert counts[(n, "hasty_ge.1")] == counts[(n, "hasty_defenses")]
        assert counts[(n, "guard_defenses")] <= counts[(n, "defenses")]
        assert counts[(n, "hasty_only")] <= counts[(n, "hasty_defenses")]
        for k in range(1, 5):
            assert counts[(n, f"hasty_ge.{k + 1}")] <= counts[(n, f"hasty_ge.{k}")]
        if c["surprised"]:
            assert counts[(n, "defenses")] == 0
        if c["guard"] == "never":
            assert counts[(n, "guard_defenses")] == 0
        assert sum(counts[(n, f"actions_dist.{k}")] for k in range(c["readiness"] + 1)) == 1
    for side in {c.side for c in s.combatants}:
        made = sum(counts[(c.name, "attacks_made")] for c in s.combatants if c.side == side)
        received = sum(counts[(c.name, "attacks_received")] for c in s.combatants if c.side != side)
        # every attack is aimed at an opponent; with two sides the totals pair up exactly
        if len({c.side for c in s.combatants}) == 2:
            assert made == received
    assert sum(counts[(n, "attacks_made")] for n in names) == sum(
        counts[(n, "attacks_received")] for n in names
    )
    assert sum(counts[(n, "first_action")] for n in names) == int(not counts[("", "stalemate")])


def test_round_identities_and_logs_on_random_scenarios():
    rng = random.Random(20251201)
    stalemates = responders = 0
    seen: Counter = Counter()  # what the random rounds exercised
    for k in range(300):
        entries, rules = random_entries(rng, revision=2)
        s = scenario(*entries, **rules)
        no_hold = False
        for r in range(4):
            stream = NaiveStream.for_round([k, 7, 11, 13], r)
            log: list[tuple] = []
            counts = twin.play_round(s, stream, no_hold, log)
            check_log(s, log, counts)
            check_identities(s, counts)
            no_hold = bool(counts[("", "stalemate")])
            stalemates += no_hold
            for i, e in enumerate(log):
                if e[0] == "response":
                    seen[("response", e[5])] += 1
                elif e[0] == "release":
                    seen[("release", e[3])] += 1
                elif e[0] == "act" and e[4] and log[i - 1][0] != "declare":
                    seen["held die"] += 1  # a holder's action other than the release's
                elif e[0] in ("no_hold", "prep", "expired", "rejoin", "run_broken"):
                    seen[e[0]] += 1
            # several responses to one attack happen (R7 rev 2)
            kinds = [e[0] for e in log]
            responders += sum(
                1
                for i in range(len(kinds) - 1)
                if kinds[i] == "response" and kinds[i + 1] == "response"
            )
    assert stalemates > 0 and responders > 0
    want = {("response", k) for k in ("self", "hasty", "guard")}
    want |= {("release", k) for k in ("attacked", "enemy_acted", "opponents_out")}
    want |= {"held die", "no_hold", "prep", "expired", "rejoin", "run_broken"}
    assert want <= set(seen), want - set(seen)


@given(rng=hs.randoms(use_true_random=False), k=hs.integers(0, 2**64 - 1))
def test_attack_totals_per_side_with_three_sides(rng, k):
    """Any random scenario (two or three sides), any stream: per side, attacks made ==
    attacks received by its opponents, counted per pair from the log."""
    entries, rules = random_entries(rng, revision=2)
    s = scenario(*entries, **rules)
    log: list[tuple] = []
    counts = twin.play_round(s, NaiveStream.for_round([k, 1, 2, 3], 0), False, log)
    side = {c.name: c.side for c in s.combatants}
    attacks = [e for e in log if e[0] == "attack"]
    assert all(side[e[2]] != side[e[3]] for e in attacks)
    for sd in set(side.values()):
        made = sum(counts[(n, "attacks_made")] for n in side if side[n] == sd)
        received_from = sum(1 for e in attacks if side[e[2]] == sd)
        assert made == received_from
        received = sum(counts[(n, "attacks_received")] for n in side if side[n] != sd)
        assert received == sum(1 for e in attacks if side[e[3]] != sd)


# --------------------------------------------------------------------------- revision 1
def rev1_fights():
    """The 400 random revision-1 fights of the record (tests/rev1_record.py): ``(k,
    entries, rules, key)``; 4 rounds each."""
    rng = random.Random(1201)
    for k in range(400):
        entries, rules = random_entries(rng, revision=1)
        yield k, entries, rules, [k + 1, 2 * k + 3, 5, 8]


def test_revision_1_stays_reachable_on_random_scenarios():
    """The new twin with revision 1's readings gives the revision-1 twin's counts round
    by round and leaves the stream in the same state (tests/rev1_record.py)."""
    checked = 0
    seen: Counter = Counter()
    for k, entries, rules, key in rev1_fights():
        new_s = rev1_readings(entries, rules)
        records = twin.play_rounds_keyed(new_s, key, 4)
        new = [rec.counts for rec in records]
        rev1_record.check(
            "readiness", k, [(rec.counts, rec.state) for rec in records], (entries, rules)
        )
        for r in range(4):
            check_identities(new_s, new[r])
            # revision 1: at most one response per attack
            defenses = sum(new[r][(c.name, "defenses")] for c in new_s.combatants)
            answered = sum(
                new[r][(c.name, "attacks_received")] - new[r][(c.name, "undefended")]
                for c in new_s.combatants
            )
            assert defenses == answered
            checked += 1
            for c in new_s.combatants:
                for m in ("hasty_defenses", "guard_defenses", "expired_dice", "attacks_made"):
                    seen[m] += new[r][(c.name, m)]
            seen["stalemate"] += new[r][("", "stalemate")]
    assert checked == 1600
    assert all(
        seen[m] > 0 for m in ("hasty_defenses", "guard_defenses", "expired_dice", "stalemate")
    )


DEFAULT_POLICY_FIGHTS = [
    # R7 with default policies: guard "backup" (true) behind a defender, hasty self
    [
        {"name": "A", "side": "a", "readiness": 2, "advantage": 2},
        {"name": "B", "side": "a", "readiness": 1, "guard": True, "attack_share": 0.5},
        {"name": "W", "side": "w", "readiness": 2, "attack_share": 0.5},
    ],
    # one attacker, two backup guards: only the first steps in
    [
        {"name": "W", "side": "w", "readiness": 2, "target": "D"},
        {"name": "D", "side": "a", "readiness": 1, "attack_share": 0.0},
        {"name": "G1", "side": "a", "readiness": 1, "guard": True, "attack_share": 0.0},
        {"name": "G2", "side": "a", "readiness": 1, "guard": True, "attack_share": 0.0},
    ],
]


DEFAULT_POLICY_RULES = {"order": "dynamic", "prep": "sixes"}


def default_policy_entries(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The fight's entries with revision 1's default policies written out."""
    entries = [{**e, "count": 1, "hold": "never", "defend": "always"} for e in entries]
    for e in entries:
        e.setdefault("guard", False)
        e.setdefault("attack_share", 1.0)
    return entries


@pytest.mark.slow
@pytest.mark.parametrize("case", range(len(DEFAULT_POLICY_FIGHTS)))
def test_default_policies_are_revision_1_exactly(case):
    """No holds, defend "always", guard never/backup: R7 rev 2 is rev 1's one response.

    Revision 2's defaults elsewhere (holder_actions "held_dice") are left as they are;
    without a holder they cannot matter.  Exact expectations of the new twin agree with
    the revision-1 twin's (tests/rev1_record.py)."""
    entries = default_policy_entries(DEFAULT_POLICY_FIGHTS[case])
    rules = DEFAULT_POLICY_RULES
    old = rev1_record.exact("readiness_default_policies")[case]
    new_entries = [{**e, "guard": "backup" if e["guard"] else "never"} for e in entries]
    for e in new_entries:
        del e["count"]
    new = exact_expectations(scenario(*new_entries, **rules))
    assert {k: new[k] for k in old} == old
    # and every attack got at most one response
    total_def = sum(new[(e["name"], "defenses")] for e in entries)
    answered = sum(
        new[(e["name"], "attacks_received")] - new[(e["name"], "undefended")] for e in entries
    )
    assert total_def == answered


# --------------------------------------------------------------------------- R7 [rev 3] effect
class ScriptedDraws(FixedDice):
    """Fixed dice and, in order, the outcomes of the ``chance`` draws (R7 [rev 3]: whether
    an attack would take effect)."""

    def __init__(self, dice: list[int], effects: list[bool]) -> None:
        super().__init__(dice)
        self.effects = list(effects)

    def chance(self, threshold: int) -> bool:
        assert 0 <= threshold < 1 << 53, threshold
        return self.effects.pop(0)


def scripted_effects(s: Scenario, dice: list[int], effects: list[bool]):
    log: list[tuple[Any, ...]] = []
    draws = ScriptedDraws(dice, effects)
    counts = twin.play_round(s, draws, False, log)
    check_log(s, log, counts)
    assert draws.dice == [] and draws.effects == []  # every scripted draw made, no other
    return counts, log


def effect_duel(defend: str, hit_chance: float = 0.5, **d: Any) -> Scenario:
    """W (one die, hit_chance) attacks D (one die, never attacks, ``defend``)."""
    return scenario(
        {"name": "W", "side": "wolves", "readiness": 1, "target": "D", "hit_chance": hit_chance},
        {"name": "D", "side": "party", "readiness": 1, "attack_share": 0.0, "defend": defend, **d},
    )


def test_r7_rev3_ineffective_attack_unanswered_costs_no_die():
    # W's 6 attacks D's 2; the attack would not take effect: D answering when effective
    # stands aside and keeps its die, then acts with it
    counts, log = scripted_effects(effect_duel("when_effective"), [6, 2], [False])
    assert play_log(log) == [
        ("turn", "R3", "W", 6),
        ("act", "R4", "W", 6, False),
        ("attack", "R4", "W", "D", 6, False),
        ("no_effect", "R7", "W", "D"),
        ("declined", "R7", "D", "D", "W"),
        ("unanswered", "R7", "D"),
        ("turn", "R3", "D", 2),
        ("act", "R4", "D", 2, False),
    ]
    assert (counts[("D", "defenses")], counts[("D", "actions")]) == (0, 1)
    assert (counts[("D", "hits")], counts[("D", "wasted_defenses")]) == (0, 0)
    assert counts[("D", "undefended")] == 1
    # answering when declared, D spends its 2 hastily on it: a wasted defense
    counts, log = scripted_effects(effect_duel("always"), [6, 2], [False])
    assert play_log(log)[3:] == [
        ("no_effect", "R7", "W", "D"),
        ("response", "R7", "D", "D", 2, "hasty", 4),
    ]
    assert (counts[("D", "wasted_defenses")], counts[("D", "actions")]) == (1, 0)
    assert (counts[("D", "hits")], counts[("D", "hasty_only")]) == (0, 1)
    # an effective attack is answered alike by both; a hasty-only answer leaves it a hit
    for defend in ("always", "when_effective", "hasty_up_to:4+when_effective"):
        counts, log = scripted_effects(effect_duel(defend), [6, 2], [True])
        assert play_log(log)[3:] == [("response", "R7", "D", "D", 2, "hasty", 4)]
        assert (counts[("D", "hits")], counts[("D", "wasted_defenses")]) == (1, 0)
    # hit_chance 1 draws nothing (FixedDice has no chance): today's rounds exactly
    counts, log = scripted(effect_duel("when_effective", 1.0), [6, 2])
    assert play_log(log)[3:] == [("response", "R7", "D", "D", 2, "hasty", 4)]
    assert (counts[("D", "hits")], counts[("D", "hasty_only")]) == (1, 1)


def test_r7_rev3_until_attacked_holder_released_by_an_ineffective_attack():
    """docs/rules-decisions.md: an attack that would not take effect still attacks: an
    until_attacked holder answering only effective attacks stops holding unanswering."""
    s = effect_duel("when_effective", hold="until_attacked")
    counts, log = scripted_effects(s, [3, 6], [False])
    assert play_log(log) == [
        ("turn", "R3", "D", 6),
        ("hold", "R5", "D"),
        ("turn", "R3", "W", 3),
        ("act", "R4", "W", 3, False),
        ("attack", "R4", "W", "D", 3, False),
        ("no_effect", "R7", "W", "D"),
        ("declined", "R7", "D", "D", "W"),
        ("unanswered", "R7", "D"),
        ("release", "R5", "D", "attacked"),
        ("turn", "R3", "D", 6),
        ("act", "R4", "D", 6, True),
    ]
    assert counts[("D", "attacked_before_acting")] == 1 and counts[("D", "actions")] == 1


def test_r7_rev3_surprised_target_still_draws_the_effect():
    # the draw depends on the attacker only (common random numbers across policies)
    counts, log = scripted_effects(effect_duel("always", surprised=True), [6, 2], [True])
    assert play_log(log)[3:5] == [("unanswered", "R7", "D"), ("turn", "R3", "D", 2)]
    assert counts[("D", "hits")] == 1
    counts, log = scripted_effects(effect_duel("never", hit_chance=0.0), [6, 2], [False])
    assert play_log(log)[3:5] == [("no_effect", "R7", "W", "D"), ("unanswered", "R7", "D")]
    assert counts[("D", "hits")] == 0


# Hand derivation for effect_duel (w: W's die, d: D's).  W goes first iff w > d (15/36)
# or w == d (6/36) and T3 gives it W (1/2): P = 1/2; D then still has d and answers
# normally iff d == w (3/36), else hastily at scale w - d (15/36).  D first (1/2): D
# acts (no attack), W's attack finds it without dice.  The effect is a fair coin.
P_W_FIRST = Fraction(1, 2)
P_NORMAL = Fraction(3, 36)
P_HASTY = Fraction(15, 36)
HIT = Fraction(1, 2)


def test_r7_rev3_when_effective_against_always_exact():
    always = exact_round(effect_duel("always"))
    effective = exact_round(effect_duel("when_effective"))
    # "always" answers every attack W makes first, effective or not
    assert always[("D", "defenses")] == P_W_FIRST
    assert always[("D", "hasty_defenses")] == P_HASTY
    assert always[("D", "wasted_defenses")] == P_W_FIRST * (1 - HIT) == Fraction(1, 4)
    assert always[("D", "actions")] == 1 - P_W_FIRST
    # "when_effective" answers only the effective half; the other half costs no die,
    # which D then spends on an action of its own
    assert effective[("D", "defenses")] == P_W_FIRST * HIT == Fraction(1, 4)
    assert effective[("D", "hasty_defenses")] == P_HASTY * HIT == Fraction(5, 24)
    assert effective[("D", "wasted_defenses")] == 0
    assert effective[("D", "actions")] == 1 - P_W_FIRST + P_W_FIRST * (1 - HIT) == Fraction(3, 4)
    assert effective[("D", "undefended")] == 1 - P_W_FIRST + P_W_FIRST * (1 - HIT)
    # hits: effective and without a normal response, the same under both policies
    hits = HIT * (1 - P_NORMAL)
    assert always[("D", "hits")] == effective[("D", "hits")] == hits == Fraction(11, 24)
    # the modifier on unless_hasty: only normal answers to effective attacks
    unless = exact_round(effect_duel("unless_hasty+when_effective"))
    assert unless[("D", "defenses")] == P_NORMAL * HIT == Fraction(1, 24)
    assert unless[("D", "hasty_defenses")] == 0 and unless[("D", "hits")] == hits
    # with hit_chance 1 every form is its policy without the modifier, count for count
    for defend, plain in (
        ("when_effective", "always"),
        ("unless_hasty+when_effective", "unless_hasty"),
    ):
        assert exact_round(effect_duel(defend, 1.0)) == exact_round(effect_duel(plain, 1.0))
    plain = exact_round(effect_duel("always", 1.0))
    assert plain[("D", "hits")] == plain[("D", "undefended")] + plain[("D", "hasty_only")]
    assert plain[("D", "wasted_defenses")] == 0


def effect_guard_fight(guard: str) -> Scenario:
    """one_die_fight with W's attacks taking effect half of the time."""
    s = one_die_fight(guard)
    entries = [dict(c.params) | {"name": c.name, "side": c.side} for c in s.combatants]
    entries[0]["hit_chance"] = 0.5
    return scenario(*entries)


def test_r7_rev3_backup_guard_when_effective_exact():
    backup = exact_expectations(effect_guard_fight("backup"))
    effective = exact_expectations(effect_guard_fight("backup+when_effective"))
    # G steps in as before (test_r7_backup_guard_exact), the when_effective guard only
    # for the effective half; the other half of its answers were wasted
    assert backup[("G", "guard_defenses")] == Fraction(2, 27)
    assert backup[("G", "wasted_defenses")] == Fraction(1, 27)
    assert effective[("G", "guard_defenses")] == Fraction(1, 27)
    assert effective[("G", "wasted_defenses")] == 0
    # nobody takes the place of a guard that stands aside: D's hasty defense stays
    # cancelled wherever G was to step in (docs/rules-decisions.md)
    assert backup[("D", "hasty_defenses")] == effective[("D", "hasty_defenses")]
    assert effective[("D", "hasty_defenses")] == P_D_LOW * (1 - P_G_CAN)
    # D (defend "always") wastes its answers to the ineffective half alike
    assert backup[("D", "wasted_defenses")] == effective[("D", "wasted_defenses")]
    # hits: effective attacks neither D nor G answered normally
    assert effective[("D", "hits")] == backup[("D", "hits")]
    assert backup[("D", "hits")] == HIT * (
        backup[("D", "undefended")] + backup[("D", "hasty_only")]
    )


def test_r7_rev3_backup_guard_does_not_step_in_for_a_target_that_stands_aside():
    """docs/rules-decisions.md: D could answer W's 6 normally; it stands aside from the
    harmless first attack, and the backup guard G (answering when declared) does not
    step in for it: D is not in trouble.  W's second 6 (T2: its full pool 6,6) takes
    effect and D answers it."""
    s = scenario(
        {"name": "W", "side": "w", "readiness": 2, "target": "D", "hit_chance": 0.5},
        {"name": "D", "side": "p", "readiness": 1, "attack_share": 0.0, "defend": "when_effective"},
        {"name": "G", "side": "p", "readiness": 1, "attack_share": 0.0, "guard": "backup"},
    )
    counts, log = scripted_effects(s, [6, 6, 6, 6], [False, True])
    assert play_log(log) == [
        ("turn", "R3", "W", 6),
        ("act", "R4", "W", 6, False),
        ("attack", "R4", "W", "D", 6, False),
        ("no_effect", "R7", "W", "D"),
        ("declined", "R7", "D", "D", "W"),
        ("unanswered", "R7", "D"),
        ("turn", "R3", "W", 6),
        ("act", "R4", "W", 6, False),
        ("attack", "R4", "W", "D", 6, False),
        ("response", "R7", "D", "D", 6, "self", 0),
        ("turn", "R3", "G", 6),
        ("act", "R4", "G", 6, False),
    ]
    assert (counts[("G", "guard_defenses")], counts[("G", "wasted_defenses")]) == (0, 0)
    assert (counts[("D", "hits")], counts[("D", "undefended")], counts[("D", "defended")]) == (
        0,
        1,
        1,
    )


# --------------------------------------------------------------------------- R7a named guards
def bodyguard(guard: Any, mode: str = "always", hit_chance: float = 1.0) -> Scenario:
    """W (one die, ``hit_chance``) attacks D 1 or D 2 at random (its target is their count
    group D); G (one die) guards as given; D 1, D 2 and G never attack."""
    g: dict[str, Any] = {"name": "G", "side": "party", "readiness": 1, "attack_share": 0.0}
    g["guard"] = guard
    if isinstance(guard, list):
        g["guard_mode"] = mode
    return scenario(
        {"name": "W", "side": "wolves", "readiness": 1, "target": "D", "hit_chance": hit_chance},
        {"name": "D", "side": "party", "readiness": 1, "attack_share": 0.0, "count": 2},
        g,
    )


OUTCOMES = (
    "undefended",
    "defended",
    "hasty_only",
    "defenses",
    "hasty_defenses",
    "attacks_received",
)


@pytest.mark.parametrize("mode", ["always", "backup"])
def test_r7a_a_named_guard_protects_only_its_ally_exact(mode):
    """G guarding D 1 by name is G guarding every ally for D 1 and no guard for D 2, exactly."""
    every = exact_expectations(bodyguard(mode))
    named = exact_expectations(bodyguard(["D 1"], mode))
    nobody = exact_expectations(bodyguard("never"))
    for m in OUTCOMES:
        assert named[("D 1", m)] == every[("D 1", m)], m
        assert named[("D 2", m)] == nobody[("D 2", m)], m
    # W attacks once; G can answer iff g == w and W acts before G (tied single dice are
    # ordered uniformly at random): 1/6 * 1/2, for either target under "every ally"
    p_g_can = Fraction(1, 12)
    if mode == "always":
        assert every[("G", "guard_defenses")] == p_g_can
        assert named[("G", "guard_defenses")] == p_g_can / 2  # only attacks on D 1 (1/2)
    assert named[("G", "guard_defenses")] == every[("G", "guard_defenses")] / 2


def test_r7a_what_the_unprotected_ally_loses_exact():
    """The bodyguard's gain for D 1 is D 2's loss: the attacks on D 2 that only G answered.

    An attack on D (1/2 each) is left unanswered without G iff D has no die when W
    attacks: d > w (D acted first), or d == w and D came before W.  G answers iff g == w
    and W came before G.  Over w, d, g (1/6 each):
      d > w, g == w, W before G:          sum_w (6 - w) / 216 * 1/2 = 15/432
      d == g == w, order D, W, G (1/6):    6/216 * 1/6              =  2/432
    so 17/432 of the attacks on D are unanswered only for want of G, and D 2 loses
    1/2 * 17/432 = 17/864 of an answered attack per round; D 1 keeps them."""
    every = exact_expectations(bodyguard("always"))
    named = exact_expectations(bodyguard(["D 1"], "always"))
    gain = Fraction(1, 2) * Fraction(17, 432)
    assert named[("D 2", "undefended")] - every[("D 2", "undefended")] == gain == Fraction(17, 864)
    assert named[("D 1", "undefended")] == every[("D 1", "undefended")]
    # and D 2's unanswered attacks are those of a fight without any guard
    nobody = exact_expectations(bodyguard("never"))
    assert named[("D 2", "undefended")] == nobody[("D 2", "undefended")]
    assert every[("D 2", "undefended")] < nobody[("D 2", "undefended")]


def test_r7a_backup_is_the_first_backup_guard_that_protects_the_target():
    """G1 (backup for D2 only) comes first in scenario order but does not guard D1: G2
    (backup for every ally) steps in for D1; the named guard's response cites R7a."""
    s = scenario(
        {"name": "W", "side": "wolves", "readiness": 2, "target": "D1", "role": "secondary"},
        {"name": "D1", "side": "party", "readiness": 1, "attack_share": 0.0},
        {"name": "D2", "side": "party", "readiness": 1, "attack_share": 0.0},
        {"name": "G1", "side": "party", "readiness": 1, "attack_share": 0.0, "guard": ["D2"]},
        {"name": "G2", "side": "party", "readiness": 1, "attack_share": 0.0, "guard": "backup"},
    )
    # W 6,6 acts first; D1 (a 1) could answer only hastily: the backup guard G2 steps in
    counts, log = scripted(s, [6, 6, 1, 2, 6, 6])
    assert play_log(log)[:4] == [
        ("turn", "R3", "W", 6),
        ("act", "R4", "W", 6, False),
        ("attack", "R4", "W", "D1", 6, False),
        ("response", "R7", "G2", "D1", 6, "guard", 0),
    ]
    # W's second attack on D1: G2 is out of dice and G1 does not guard D1, so D1 answers
    # hastily (scale 5) and G1 keeps its 6
    assert counts[("G1", "guard_defenses")] == 0 and counts[("D1", "defended")] == 1
    assert counts[("D1", "hasty_only")] == 1 and counts[("G1", "actions")] == 1
    # the same with W attacking D2: G1 steps in, by name (R7a)
    s2 = scenario(
        {"name": "W", "side": "wolves", "readiness": 2, "target": "D2", "role": "secondary"},
        *[{**dict(name=c.name, side=c.side), **_given(c)} for c in s.combatants[1:]],
    )
    counts, log = scripted(s2, [6, 6, 1, 2, 6, 6])
    assert play_log(log)[3] == ("response", "R7a", "G1", "D2", 6, "guard", 0)
    # W's second attack on D2: G1 is out of dice, so the first able backup is G2
    assert counts[("G1", "guard_defenses")] == 1 and counts[("G2", "guard_defenses")] == 1


def _given(c: Any) -> dict[str, Any]:
    keys = ("readiness", "attack_share", "guard")
    out = {k: c[k] for k in keys}
    if isinstance(out["guard"], tuple):
        out["guard"] = list(out["guard"])
    return out


def test_r7a_guard_mode_takes_when_effective_exact():
    """R7a with R7 [rev 3]: guard_mode "always+when_effective" of a guard naming D 1 is,
    for D 1, exactly guard "always+when_effective" of every ally, and for D 2 no guard;
    its answers to attacks that would not take effect are gone."""
    every = exact_expectations(bodyguard("always+when_effective", hit_chance=0.5))
    named = exact_expectations(bodyguard(["D 1"], "always+when_effective", hit_chance=0.5))
    nobody = exact_expectations(bodyguard("never", hit_chance=0.5))
    declared = exact_expectations(bodyguard(["D 1"], "always", hit_chance=0.5))
    for m in (*OUTCOMES, "hits"):
        assert named[("D 1", m)] == every[("D 1", m)], m
        assert named[("D 2", m)] == nobody[("D 2", m)], m
    assert named[("G", "wasted_defenses")] == 0 < declared[("G", "wasted_defenses")]
    assert named[("G", "guard_defenses")] == declared[("G", "guard_defenses")] / 2
