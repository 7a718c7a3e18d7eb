"""The revision-2 vtm twin (tests/twins/vtm.py): exact values, round identities, and
revision 1 reachable through its named variants.

Exact values come from enumerating every d10 and every random choice (tie order,
attack_share, target) of the twin with ``fractions.Fraction`` (``exact``), checked
against closed forms written here from the rules (docs/rules.md).  Scenarios are built with
``builders.make_scenario`` (no validation: the twin needs nothing of simkit); the twin's
contract interface (``play_rounds_keyed``, ``fold_log``, ``random_scenario``, ``dice``)
is checked at the end.  tests/test_vtm_kernel.py holds the kernel to these values.
"""

from __future__ import annotations

import random
from fractions import Fraction
from itertools import product
from typing import Any

import pytest
import rev1_record
from builders import make_scenario
from enumerate import every_round, expectation
from naive_rng import NaiveStream
from twins import vtm as twin

D10 = range(1, 11)
HALF = Fraction(1, 2)


# ------------------------------------------------------------------ enumeration
def exact(scenario: Any) -> dict[tuple[str, str], Fraction]:
    """Exact per-round mean of every count of the twin (tests/enumerate.py)."""
    return expectation(lambda draws: twin.play_round(scenario, draws))


def p_dice(n: int, event) -> Fraction:
    """P(event(d1, .., dn)) over n independent d10."""
    return Fraction(sum(1 for dice in product(D10, repeat=n) if event(*dice)), 10**n)


class Script:
    """A draw source with fixed dice and no other draw (a ``below(1)`` draws nothing)."""

    def __init__(self, *dice: int) -> None:
        self.dice = list(dice)

    def roll(self, sides: int) -> int:
        assert sides == 10
        return self.dice.pop(0)

    def below(self, n: int) -> int:
        assert n <= 1, f"unexpected below({n})"
        return 0

    def chance(self, threshold: int) -> bool:
        raise AssertionError("unexpected attack_share draw")


def scripted(scenario: Any, *dice: int) -> tuple[dict, list[tuple]]:
    log: list[tuple] = []
    draws = Script(*dice)
    counts = twin.play_round(scenario, draws, log)
    assert draws.dice == []
    return counts, log


def acts(log: list[tuple]) -> list[tuple]:
    return [e[2:] for e in log if e[0] == "act"]


def vtm(*combatants: dict, **rules: Any) -> Any:
    return make_scenario("vtm", list(combatants), rules=rules)


def fighter(name: str, side: str, rating: int, **fields: Any) -> dict:
    return {"name": name, "side": side, "rating": rating, **fields}


# ------------------------------------------------------------------ worked example
@pytest.mark.parametrize("multi", ["end", "in_turn"])
def test_worked_example_rating_5_vs_3(multi):
    """docs/rules.md: the first goes first unless the second rolls at least 3 more: P = 0.72."""
    p_first = p_dice(2, lambda da, db: 5 + da >= 3 + db)  # equal totals: higher rating
    assert p_first == Fraction(18, 25)
    ex = exact(vtm(fighter("A", "a", 5), fighter("B", "b", 3), multi=multi))
    assert ex[("A", "first_action")] == Fraction(18, 25)
    assert ex[("A", "acts_before.B")] == Fraction(18, 25)
    assert ex[("B", "first_action")] == Fraction(7, 25)
    assert ex[("B", "attacked_before_acting")] == Fraction(18, 25)
    assert ex[("A", "known_declarations")] == Fraction(18, 25)  # V3: B declared first
    assert ex[("", "simultaneous")] == 0
    assert ex[("B", "undefended")] == 1  # abort "never": no defense
    assert ex[("B", "defended")] == 0


def test_enumeration_walks_every_path():
    scenario = vtm(fighter("A", "a", 5, attack_share=0.0), fighter("B", "b", 3, attack_share=0.0))
    paths = list(every_round(lambda draws: twin.play_round(scenario, draws)))
    assert len(paths) == 100
    assert sum(p for p, _ in paths) == 1


# ------------------------------------------------------------------ V6
def _v6_scenario(multi: str) -> Any:
    return vtm(
        fighter("A", "a", 5, actions=2, extra_actions=1, attack_share=0.0),
        fighter("B", "b", 3, attack_share=0.0),
        fighter("C", "b", 4, extra_actions=2, attack_share=0.0),
        fighter("D", "b", 4, extra_actions=1, attack_share=0.0),
        multi=multi,
    )


def test_v6_end_additional_actions_round_by_round():
    """V6 "end": A's 2nd and 3rd actions after every normal action, one round of
    additional actions at a time, in initiative order; slot-mates C, D together."""
    counts, log = scripted(_v6_scenario("end"), 5, 5, 5, 5)  # A 10, C = D 9, B 8
    assert [e for e in log if e[0] == "slot"] == [
        ("slot", "V2", 0, ("A",)),
        ("slot", "V2", 1, ("C", "D")),
        ("slot", "V2", 2, ("B",)),
    ]
    assert [e for e in log if e[0] == "act"] == [
        ("act", "V2", "A", 0, False),
        ("act", "V2", "C", 1, False),
        ("act", "V2", "D", 1, False),
        ("act", "V2", "B", 2, False),
        ("act", "V6", "A", 3, True),  # additional round 1
        ("act", "V6", "C", 4, True),
        ("act", "V6", "D", 4, True),
        ("act", "V6", "A", 5, True),  # additional round 2
        ("act", "V6", "C", 6, True),
    ]
    assert counts[("A", "actions_dist.3")] == 1
    assert counts[("C", "actions")] == 3
    assert counts[("B", "first_action")] == 0
    assert counts[("B", "acts_before.A")] == 0


def test_v6_in_turn_is_revision_1():
    """V6 "in_turn": declared actions in a row at the turn; extras at the end, each
    combatant's all in a row, slot-mates moment by moment."""
    _, log = scripted(_v6_scenario("in_turn"), 5, 5, 5, 5)
    assert acts(log) == [
        ("A", 0, False),
        ("A", 1, False),
        ("C", 2, False),
        ("D", 2, False),
        ("B", 3, False),
        ("A", 4, True),
        ("C", 5, True),
        ("D", 5, True),
        ("C", 6, True),
    ]


@pytest.mark.parametrize("multi", ["end", "in_turn"])
def test_v6_exact_first_action_and_acts_before(multi):
    """Additional actions never change who acts first (they all follow the normal
    actions); they change how often B is attacked before it acts."""
    scenario = vtm(
        fighter("A", "a", 5, actions=2, extra_actions=1, attack_share=0.5, target="B"),
        fighter("B", "b", 3, attack_share=0.0),
        fighter("C", "b", 4, extra_actions=1, attack_share=0.0),
        multi=multi,
    )
    ex = exact(scenario)

    def p(event) -> Fraction:
        return p_dice(3, lambda a, b, c: event(5 + a, 3 + b, 4 + c))

    a_before_b = p(lambda a, b, c: a >= b)  # ties go to the higher rating (V2)
    a_before_c = p(lambda a, b, c: a >= c)
    c_before_b = p(lambda a, b, c: c >= b)
    assert a_before_b == Fraction(18, 25)
    assert ex[("A", "acts_before.B")] == a_before_b
    assert ex[("B", "acts_before.A")] == 1 - a_before_b
    assert ex[("A", "acts_before.C")] == a_before_c
    assert ex[("C", "acts_before.A")] == 1 - a_before_c
    assert ex[("C", "acts_before.B")] == c_before_b
    assert ex[("A", "first_action")] == p(lambda a, b, c: a >= b and a >= c)
    assert ex[("C", "first_action")] == p(lambda a, b, c: c > a and c >= b)
    assert ex[("B", "first_action")] == p(lambda a, b, c: b > a and b > c)
    assert ex[("A", "actions_dist.3")] == 1
    assert ex[("C", "actions")] == 2
    # A attacks B with each of its three actions with probability 1/2; "end": only
    # its normal action can come before B's turn, "in_turn": both declared ones
    before_b = HALF if multi == "end" else 1 - HALF**2
    assert ex[("B", "attacked_before_acting")] == a_before_b * before_b
    assert ex[("B", "attacks_received")] == Fraction(3, 2)
    assert ex[("B", "undefended")] == Fraction(3, 2)


def test_delayer_released_after_the_normal_actions_is_a_normal_action():
    """V4 then V6: both delay, A (faster) acts last before V6 and releases B, who acts
    right after; A's second declared action comes in additional round 1."""
    scenario = vtm(
        fighter("A", "a", 9, actions=2, delay="until_enemy_acts", attack_share=0.0),
        fighter("B", "b", 0, extra_actions=1, delay="until_enemy_acts", attack_share=0.0),
    )
    _, log = scripted(scenario, 1, 1)
    assert [e for e in log if e[0] in ("delay", "release", "act")] == [
        ("delay", "V4", "A"),
        ("delay", "V4", "B"),
        ("release", "V4", "A"),
        ("act", "V2", "A", 0, False),
        ("release", "V4", "B"),
        ("act", "V2", "B", 1, False),
        ("act", "V6", "A", 2, True),  # V6 in initiative order: A before B
        ("act", "V6", "B", 3, True),
    ]


# ------------------------------------------------------------------ V5
def _celerity(abort: str, multi: str = "end") -> Any:
    return vtm(
        fighter("C", "c", 5, extra_actions=1, abort=abort),
        fighter("E", "e", 3),
        multi=multi,
    )


def test_celerity_defends_after_its_turn_log():
    """V5 [rev 2]: C acts at its turn, is attacked afterwards and gives up its
    end-of-round (Celerity) action to defend."""
    counts, log = scripted(_celerity("always"), 5, 5)  # C 10, E 8
    assert log == [
        ("roll", "V1", "C", 5, 10),
        ("roll", "V1", "E", 5, 8),
        ("slot", "V2", 0, ("C",)),
        ("slot", "V2", 1, ("E",)),
        ("known", "V3", "E", 0),
        ("known", "V3", "C", 1),
        ("act", "V2", "C", 0, False),
        ("attack", "V2", "C", "E"),
        ("unanswered", "V5", "E"),
        ("act", "V2", "E", 1, False),
        ("attack", "V2", "E", "C"),
        ("abort", "V5", "C", 1),  # its end-of-round action number 1
    ]
    assert counts[("C", "actions")] == 1
    assert counts[("C", "aborts")] == counts[("C", "defenses")] == counts[("C", "defended")] == 1
    assert counts[("C", "attacked_before_acting")] == 0
    # revision 1 reading: nothing to give up once it has acted
    counts, log = scripted(_celerity("before_acting"), 5, 5)
    assert ("unanswered", "V5", "C") in log
    assert counts[("C", "actions")] == 2
    assert counts[("C", "aborts")] == 0


@pytest.mark.parametrize("multi", ["end", "in_turn"])
def test_celerity_defends_after_its_turn_exact(multi):
    """C faster (18/25): gives up its Celerity action after its turn; E faster: gives
    up its normal action and acts at the end of the round."""
    ex = exact(_celerity("always", multi))
    assert ex[("C", "aborts")] == ex[("C", "defenses")] == ex[("C", "defended")] == 1
    assert ex[("C", "undefended")] == 0
    assert ex[("C", "actions")] == 1
    assert ex[("C", "actions_dist.1")] == 1
    assert ex[("C", "first_action")] == Fraction(18, 25)
    assert ex[("C", "acts_before.E")] == Fraction(18, 25)
    assert ex[("E", "acts_before.C")] == Fraction(7, 25)
    assert ex[("C", "attacked_before_acting")] == Fraction(7, 25)
    assert ex[("E", "attacks_received")] == 1
    # "before_acting" (revision 1): only E's attack before C's turn is answered
    ex = exact(_celerity("before_acting", multi))
    assert ex[("C", "aborts")] == Fraction(7, 25)
    assert ex[("C", "actions")] == 2 * Fraction(18, 25) + Fraction(7, 25)
    assert ex[("C", "undefended")] == Fraction(18, 25)
    assert ex[("E", "attacks_received")] == ex[("C", "actions")]
    # "never": no defense at all
    ex = exact(_celerity("never", multi))
    assert ex[("C", "aborts")] == 0
    assert ex[("C", "actions")] == 2
    assert ex[("C", "undefended")] == 1


def test_abort_keeps_the_other_actions_in_their_places():
    """V5 [rev 2]: B gives up its normal action, then its additional action 1; its
    action 2 stays in additional round 2 (it does not move up to round 1)."""
    scenario = vtm(
        fighter("A", "a", 5, extra_actions=1, target="B"),
        fighter("B", "b", 3, extra_actions=2, abort="always", target="A"),
        fighter("D", "a", 0, extra_actions=2, attack_share=0.0),
    )
    counts, log = scripted(scenario, 5, 5, 1)  # A 10, B 8, D 1
    assert [e for e in log if e[0] in ("act", "abort")] == [
        ("act", "V2", "A", 0, False),
        ("abort", "V5", "B", 0),
        ("act", "V2", "D", 1, False),
        ("act", "V6", "A", 2, True),
        ("abort", "V5", "B", 1),
        ("act", "V6", "D", 3, True),
        ("act", "V6", "B", 4, True),  # additional round 2
        ("act", "V6", "D", 5, True),
    ]
    assert counts[("B", "first_action")] == 0
    assert counts[("D", "acts_before.B")] == 1
    assert counts[("B", "attacked_before_acting")] == 1
    assert counts[("B", "aborts")] == 2
    assert counts[("A", "undefended")] == 1


@pytest.mark.parametrize("abort", ["always", "before_acting"])
def test_abort_in_the_middle_of_an_in_turn_series(abort):
    """V5, multi "in_turn": D's release interrupts A's two declared actions; "always"
    gives up A's next declared action (not its Celerity action); "before_acting"
    (revision 1) gives up nothing once A has acted."""
    scenario = vtm(
        fighter("A", "a", 3, actions=2, extra_actions=1, abort=abort, attack_share=0.0),
        fighter("D", "d", 5, delay="until_enemy_acts", target="A"),
        multi="in_turn",
    )
    counts, log = scripted(scenario, 5, 5)  # A 8, D 10
    given_up = [("abort", "V5", "A", 0)] if abort == "always" else [("unanswered", "V5", "A")]
    assert [e for e in log if e[0] in ("delay", "release", "act", "abort", "unanswered")] == [
        ("delay", "V4", "D"),
        ("act", "V2", "A", 0, False),
        ("release", "V4", "D"),
        ("act", "V2", "D", 1, False),
        *given_up,
        *([] if abort == "always" else [("act", "V2", "A", 2, False)]),
        ("act", "V6", "A", 2 if abort == "always" else 3, True),
    ]
    assert counts[("A", "actions")] == (2 if abort == "always" else 3)
    assert counts[("D", "first_action")] == 0


@pytest.mark.parametrize("multi", ["end", "in_turn"])
def test_abort_always_with_several_actions(multi):
    """A (always faster) attacks three times; B has three actions in all."""
    scenario = vtm(
        fighter("A", "a", 9, actions=2, extra_actions=1),
        fighter("B", "b", 0, actions=2, extra_actions=1, abort="always", attack_share=0.0),
        multi=multi,
    )
    ex = exact(scenario)
    assert ex[("B", "aborts")] == 3
    assert ex[("B", "no_action")] == 1
    assert ex[("B", "actions_dist.0")] == 1
    assert ex[("B", "attacked_before_acting")] == 1


# ------------------------------------------------------------------ V5 shared slots
def _slot_mates(slot_abort: str, **rules: Any) -> Any:
    return vtm(
        fighter("A", "a", 4, extra_actions=1, abort="always"),
        fighter("B", "b", 4, extra_actions=1, abort="always"),
        slot_abort=slot_abort,
        **rules,
    )


def test_shared_slot_triggers_no_abort_under_never_log():
    """V5/V2 revision 2 (slot_abort = "never"): slot-mates attack each other in the same
    moments: nobody aborts."""
    counts, log = scripted(_slot_mates("never"), 3, 3)
    assert [e for e in log if e[0] in ("act", "abort", "unanswered")] == [
        ("act", "V2", "A", 0, False),
        ("unanswered", "V5", "B"),
        ("act", "V2", "B", 0, False),
        ("unanswered", "V5", "A"),
        ("act", "V6", "A", 1, True),
        ("unanswered", "V5", "B"),
        ("act", "V6", "B", 1, True),
        ("unanswered", "V5", "A"),
    ]
    assert counts[("", "simultaneous")] == 1
    assert counts[("A", "first_action")] == counts[("B", "first_action")] == 1
    assert counts[("A", "attacked_before_acting")] == 0


def test_shared_slot_allows_an_abort_of_the_pending_action_log():
    """V5 [rev 3] (slot_abort = "allowed", the default): A's action of the shared moment
    is resolved first (scenario order); B's is still in reserve, so B gives it up to
    defend, and in additional round 1 again: B never acts, A is never attacked."""
    counts, log = scripted(_slot_mates("allowed"), 3, 3)
    assert [e for e in log if e[0] in ("act", "abort", "unanswered")] == [
        ("act", "V2", "A", 0, False),
        ("abort", "V5", "B", 0),
        ("act", "V6", "A", 1, True),
        ("abort", "V5", "B", 1),
    ]
    assert counts[("", "simultaneous")] == 1  # V2: they still share the slot
    assert counts[("A", "first_action")] == 1
    assert counts[("B", "first_action")] == 0
    assert counts[("B", "attacked_before_acting")] == 1  # attacked, then never acted
    assert counts[("B", "actions")] == 0
    assert counts[("B", "aborts")] == counts[("B", "defended")] == 2
    assert twin.fold_log(_slot_mates("allowed"), log) == counts


@pytest.mark.parametrize("slot_abort", ["allowed", "never"])
def test_shared_slot_exact(slot_abort):
    """Equal ratings, tie "simultaneous".  Not tied (9/10): the slower gives up both of
    its actions, one per attack of the faster.  Tied (1/10): under "never" nobody
    aborts; under "allowed" A, resolved first, plays as the faster and B aborts twice."""
    ex = exact(_slot_mates(slot_abort))
    p_slower = p_dice(2, lambda da, db: da < db)
    p_tie = p_dice(2, lambda da, db: da == db)
    assert (p_slower, p_tie) == (Fraction(9, 20), Fraction(1, 10))
    assert ex[("", "simultaneous")] == p_tie
    assert ex[("A", "aborts")] == ex[("A", "defended")] == 2 * p_slower
    assert ex[("A", "actions")] == 2 * (1 - p_slower)
    assert ex[("A", "first_action")] == 1 - p_slower
    if slot_abort == "never":
        assert ex[("A", "undefended")] == ex[("B", "undefended")] == 2 * p_tie
        assert ex[("B", "aborts")] == 2 * p_slower
        assert ex[("B", "first_action")] == 1 - p_slower
        assert ex[("B", "attacked_before_acting")] == p_slower
    else:
        assert ex[("A", "undefended")] == ex[("B", "undefended")] == 0
        assert ex[("B", "aborts")] == 2 * (p_slower + p_tie) == Fraction(11, 10)
        assert ex[("B", "actions")] == 2 * p_slower == Fraction(9, 10)
        assert ex[("B", "first_action")] == p_slower
        assert ex[("B", "attacked_before_acting")] == p_slower + p_tie


@pytest.mark.parametrize("abort", ["always", "before_acting"])
@pytest.mark.parametrize("slot_abort", ["allowed", "never"])
def test_the_issues_twin_may_abort_in_its_own_moment(slot_abort, abort):
    """The traced case of issue 26: Twin shares Hunter's slot and still has its action in
    reserve when Hunter's attack is resolved.  Under "allowed" it aborts (abort =
    "always", or "before_acting": it has not acted yet) and acts no more this round;
    under "never" (revision 2) it does not defend and acts in the same moment."""
    scenario = vtm(
        fighter("Hunter", "a", 3),
        fighter("Twin", "b", 3, abort=abort),
        slot_abort=slot_abort,
    )
    counts, log = scripted(scenario, 4, 4)
    if slot_abort == "allowed":
        assert log[-2:] == [("attack", "V2", "Hunter", "Twin"), ("abort", "V5", "Twin", 0)]
        assert counts[("Twin", "actions")] == 0
        assert counts[("Hunter", "undefended")] == 0
    else:
        assert ("unanswered", "V5", "Twin") in log
        assert ("act", "V2", "Twin", 0, False) in log
        assert counts[("Hunter", "undefended")] == 1


def test_a_resolved_slot_mate_gives_up_a_later_action():
    """V5 [rev 3]: B attacks A after A's action of the moment is resolved: A no longer
    has that one, but it has its end-of-round action in reserve and gives that up
    (revision 2: no defense at all in a shared moment)."""
    entries = (
        fighter("A", "a", 4, extra_actions=1, abort="always", attack_share=0.0),
        fighter("B", "b", 4),
    )
    counts, log = scripted(vtm(*entries), 3, 3)
    assert [e for e in log if e[0] in ("act", "abort", "unanswered")] == [
        ("act", "V2", "A", 0, False),
        ("act", "V2", "B", 0, False),
        ("abort", "V5", "A", 1),
    ]
    assert counts[("A", "actions")] == 1
    assert counts[("A", "attacked_before_acting")] == 0
    counts, log = scripted(vtm(*entries, slot_abort="never"), 3, 3)
    assert ("unanswered", "V5", "A") in log
    assert counts[("A", "actions")] == 2


@pytest.mark.parametrize("multi", ["end", "in_turn"])
def test_a_pending_slot_mate_keeps_its_other_actions(multi):
    """V5 [rev 3] with several actions: B gives up only its action of the shared moment
    (0: of its turn) and takes its other declared action later: under "in_turn" in the
    next moment of its turn, under "end" at the end of the round."""
    scenario = vtm(
        fighter("A", "a", 4),
        fighter("B", "b", 4, actions=2, abort="always", attack_share=0.0),
        multi=multi,
    )
    counts, log = scripted(scenario, 3, 3)
    moves = [e for e in log if e[0] in ("act", "abort", "unanswered")]
    assert moves[:2] == [("act", "V2", "A", 0, False), ("abort", "V5", "B", 0)]
    assert moves[2] == ("act", "V2" if multi == "in_turn" else "V6", "B", 1, multi == "end")
    assert counts[("B", "actions")] == 1
    assert counts[("B", "first_action")] == 0
    assert counts[("B", "attacked_before_acting")] == 1
    assert counts[("A", "acts_before.B")] == 1


@pytest.mark.parametrize("multi", ["end", "in_turn"])
@pytest.mark.parametrize("slot_abort", ["allowed", "never"])
def test_slot_mate_acting_alone_is_not_simultaneous(multi, slot_abort):
    """In a shared slot an attack in a moment where the target does not act is an
    ordinary one: under "in_turn" A's second declared action comes alone and B gives up
    its Celerity action; under "end" both act in additional round 1, and B, pending
    there (after A in scenario order), gives up its Celerity action only under
    "allowed"."""
    scenario = vtm(
        fighter("A", "a", 4, actions=2),
        fighter("B", "b", 4, extra_actions=1, abort="always", attack_share=0.0),
        multi=multi,
        slot_abort=slot_abort,
    )
    counts, log = scripted(scenario, 3, 3)
    aborts = [e for e in log if e[0] == "abort"]
    if multi == "in_turn":  # A's first attack, in the shared moment, and its second
        assert aborts == ([("abort", "V5", "B", 0)] if slot_abort == "allowed" else []) + [
            ("abort", "V5", "B", 1)
        ]
        assert counts[("B", "actions")] == 2 - len(aborts)
    elif slot_abort == "allowed":
        assert aborts == [("abort", "V5", "B", 0), ("abort", "V5", "B", 1)]
        assert counts[("B", "actions")] == 0
    else:
        assert not aborts
        assert counts[("B", "actions")] == 2


# ------------------------------------------------------------------ before_acting = revision 1
@pytest.mark.parametrize("multi", ["end", "in_turn"])
def test_before_acting_duel_is_revision_1(multi):
    """The revision-1 values of the former exact test of an abort giving up the action."""
    ex = exact(vtm(fighter("A", "a", 5), fighter("B", "b", 3, abort="before_acting"), multi=multi))
    for metric in ("aborts", "defenses", "no_action", "attacked_before_acting", "defended"):
        assert ex[("B", metric)] == Fraction(18, 25), metric
    assert ex[("B", "actions")] == Fraction(7, 25)
    assert ex[("A", "defenses")] == 0
    assert ex[("A", "attacked_before_acting")] == Fraction(7, 25)


@pytest.mark.parametrize("multi", ["end", "in_turn"])
def test_before_acting_several_actions_is_revision_1(multi):
    """The revision-1 values of the former exact test of several and extra actions: only an
    action of its turn is given up, and only before it acts."""
    ex = exact(
        vtm(
            fighter("A", "a", 9, actions=2, extra_actions=1),
            fighter("B", "b", 0, abort="before_acting", extra_actions=1),
            multi=multi,
        )
    )
    assert ex[("A", "actions")] == 3
    assert ex[("A", "actions_dist.3")] == 1
    assert ex[("B", "aborts")] == 1
    assert ex[("B", "actions")] == 1
    assert ex[("B", "attacked_before_acting")] == 1
    assert ex[("B", "undefended")] == 2


# ------------------------------------------------------------------ random scenarios
random_entries = twin.random_entries


def rev1_fights():
    """The 300 random revision-1 fights of the record (tests/rev1_record.py): ``(k,
    entries, tie, key)``; 40 rounds each, under ``multi = "in_turn"``."""
    rng = random.Random(20261201)
    for k in range(300):
        entries = random_entries(rng, aborts=("never", "always"))
        tie = rng.choice(("simultaneous", "random"))
        key = [rng.getrandbits(64) for _ in range(4)]
        yield k, entries, tie, key


def rev1_readings(entries: list[dict], tie: str) -> Any:
    """The fight with revision 1's readings written out: abort "always" is
    "before_acting", a shared moment triggers no abort (slot_abort "never"; multi
    "in_turn" is given by the fight)."""
    new_entries = [
        {**e, "abort": "before_acting"} if e.get("abort") == "always" else e for e in entries
    ]
    rules = {"tie": tie, "multi": "in_turn", "slot_abort": "never"}
    return make_scenario("vtm", new_entries, rules=rules)


@pytest.mark.slow
def test_revision_1_stays_reachable():
    """300 random revision-1 scenarios x 40 rounds: the new twin with revision 1's
    readings written out (abort "always" -> "before_acting", multi "in_turn") gives
    every count the revision-1 twin gave, round by round, and leaves the stream in the
    same state (tests/rev1_record.py)."""
    seen: set[str] = set()
    rounds = 0
    for k, entries, tie, key in rev1_fights():
        new = rev1_readings(entries, tie)
        played = []
        for r in range(40):
            stream = NaiveStream.for_round(key, r)
            got = twin.play_round(new, stream)
            played.append((got, stream.state()))
            rounds += 1
            for (_, metric), v in got.items():
                if v and metric in ("aborts", "simultaneous", "attacked_before_acting"):
                    seen.add(metric)
        rev1_record.check("vtm", k, played, (entries, tie))
        seen.add(f"tie={tie}")
        seen.update(
            "abort=" + {"always": "before_acting"}.get(e["abort"], e["abort"])
            for e in entries
            if "abort" in e
        )
        seen.update("delay" for e in entries if "delay" in e)
    assert rounds == 12_000
    assert {
        "aborts", "simultaneous", "attacked_before_acting", "tie=simultaneous", "tie=random",
        "abort=never", "abort=before_acting", "delay",
    } <= seen  # fmt: skip


def check_round(scenario: Any, counts: dict, log: list[tuple]) -> None:
    """The identities every revision-2 round satisfies."""
    cs = scenario.combatants
    for c in cs:
        n = c.name
        assert (
            counts[(n, "attacks_received")] == counts[(n, "undefended")] + counts[(n, "defended")]
        )
        assert counts[(n, "defenses")] == counts[(n, "aborts")] == counts[(n, "defended")]
        # every planned action is either taken or given up (V5), never lost
        assert counts[(n, "actions")] + counts[(n, "aborts")] == c["actions"] + c["extra_actions"]
        dist = [
            counts[(n, f"actions_dist.{k}")] for k in range(c["actions"] + c["extra_actions"] + 1)
        ]
        assert dist == [int(k == counts[(n, "actions")]) for k in range(len(dist))]
        assert counts[(n, "no_action")] == int(counts[(n, "actions")] == 0)
        assert counts[(n, "actions")] == sum(1 for e in log if e[0] == "act" and e[2] == n)
        assert counts[(n, "aborts")] == sum(1 for e in log if e[0] == "abort" and e[2] == n)
        if c["abort"] == "never":
            assert counts[(n, "aborts")] == 0
    # per side: the attacks it made are the attacks its opponents received from it
    side = {c.name: c.side for c in cs}
    attacks = [(e[2], e[3]) for e in log if e[0] == "attack"]
    for s in scenario.sides:
        made = sum(counts[(c.name, "attacks_made")] for c in cs if c.side == s)
        assert made == sum(1 for a, t in attacks if side[a] == s and side[t] != s)
    if len(scenario.sides) == 2:
        for s in scenario.sides:
            made = sum(counts[(c.name, "attacks_made")] for c in cs if c.side == s)
            received = sum(counts[(c.name, "attacks_received")] for c in cs if c.side != s)
            assert made == received
    assert sum(counts[(c.name, "attacks_made")] for c in cs) == sum(
        counts[(c.name, "attacks_received")] for c in cs
    )
    # every attack is answered by exactly one abort or unanswered event about its target
    for k, e in enumerate(log):
        if e[0] == "attack":
            assert log[k + 1][0] in ("abort", "unanswered") and log[k + 1][2] == e[3]
    # someone takes the round's first action; moments are never out of order
    assert any(counts[(c.name, "first_action")] for c in cs)
    moments = [e[3] for e in log if e[0] == "act"]
    assert moments == sorted(moments) and moments[0] == 0
    ends = [e[4] for e in log if e[0] == "act"]
    assert ends == sorted(ends)  # every end-of-round action after every turn action


@pytest.mark.slow
def test_round_identities_on_random_scenarios():
    """400 random revision-2 scenarios x 20 rounds on random streams."""
    rng = random.Random(777)
    seen: set[str] = set()
    for _ in range(400):
        entries = random_entries(rng, aborts=("never", "always", "before_acting"))
        rules = {
            "tie": rng.choice(("simultaneous", "random")),
            "multi": rng.choice(("end", "in_turn")),
        }
        scenario = make_scenario("vtm", entries, rules=rules)
        key = [rng.getrandbits(64) for _ in range(4)]
        first = rng.randint(0, 999)
        records = twin.play_rounds_keyed(scenario, key, 20, first=first)
        for r, (counts, state, carry, log) in enumerate(records):
            assert len(state) == 6 and carry == 0
            seen.update(m for (_, m), v in counts.items() if v and m in ("aborts", "defended"))
            check_round(scenario, counts, log)
            assert twin.fold_log(scenario, log) == counts  # the log says every count
            again: list[tuple] = []  # the same stream again: the same round
            assert twin.play_round(scenario, NaiveStream.for_round(key, first + r), again) == counts
            assert again == log
        seen.add(rules["multi"])
    assert {"aborts", "defended", "end", "in_turn"} <= seen


def test_play_rounds_keyed_matches_play_round():
    scenario = vtm(fighter("A", "a", 2, actions=2, abort="always"), fighter("B", "b", 2, count=2))
    key = [1, 2, 3, 4]
    records = twin.play_rounds_keyed(scenario, key, 5, first=10)
    for r in range(5):
        stream = NaiveStream.for_round(key, 10 + r)
        log: list[tuple] = []
        assert twin.play_round(scenario, stream, log) == records[r].counts
        assert stream.state() == records[r].state
        assert log == records[r].log
        assert records[r].carry == 0
    with pytest.raises(ValueError, match="carries nothing"):
        twin.play_rounds_keyed(scenario, key, 1, carry=1)


def test_fixed_dice_are_drawn_then_replaced():
    """``dice``: the stream moves as without it; only the face changes (V1)."""
    scenario = vtm(fighter("A", "a", 5), fighter("B", "b", 3, attack_share=0.5))
    key = [5, 6, 7, 8]
    free = twin.play_rounds_keyed(scenario, key, 30)
    fixed = twin.play_rounds_keyed(scenario, key, 30, dice={1: [10]})
    for a, b in zip(free, fixed, strict=True):
        assert a.state == b.state  # the same draws (B's attack shares drawn in both)
        rolls = [e for e in b.log if e[0] == "roll"]
        assert rolls[1] == ("roll", "V1", "B", 10, 13)
        assert rolls[0] == next(e for e in a.log if e[0] == "roll")  # A's die unchanged
        a_first = rolls[0][4] >= 13  # V2: at 13 all the higher rating (A) goes first
        assert b.counts[("A", "first_action")] == int(a_first)
        assert b.counts[("B", "first_action")] == int(not a_first)


def test_fold_log_reads_attacks_in_a_shared_moment():
    """A slot-mate attacked in the moment both act was not attacked before acting: the
    log alone says so (the attack comes before the target's own act event)."""
    scenario = vtm(fighter("A", "a", 4, extra_actions=1), fighter("B", "b", 4))
    counts, log = scripted(scenario, 3, 3)
    assert log.index(("attack", "V2", "A", "B")) < log.index(("act", "V2", "B", 0, False))
    assert counts[("B", "attacked_before_acting")] == 0
    assert twin.fold_log(scenario, log) == counts


def test_random_scenarios_reach_every_variant():
    """tests/twins/vtm.py::random_scenario (the contract's scenarios) is valid and
    reaches every rule, policy, target kind, count groups and 2 and 3 sides."""
    rng = random.Random("reach")
    seen: set[str] = set()
    for _ in range(200):
        s = twin.random_scenario(rng)
        assert len(s.combatants) <= 8
        seen.update(f"{rule}={value}" for rule, value in s.rules.items())
        seen.add(f"sides={len(s.sides)}")
        for c in s.combatants:
            seen.update((f"delay={c['delay']}", f"abort={c['abort']}"))
            seen.add("dexterity+wits" if c["dexterity"] is not None else "rating")
            seen.update(k for k in ("actions", "extra_actions", "wound_penalty") if c[k] > 1)
            if 0 < c["attack_share"] < 2**-54:
                seen.add("tiny share")
            if c.group != c.name:
                seen.add("count group")
            if c["target"] != "random":
                seen.add("target named" if c["target"] in s.names else "target group")
    expected = {
        "tie=simultaneous", "tie=random", "multi=end", "multi=in_turn", "sides=2", "sides=3",
        "delay=never", "delay=until_enemy_acts", "abort=never", "abort=always",
        "abort=before_acting", "dexterity+wits", "rating", "actions", "extra_actions",
        "wound_penalty", "tiny share", "count group", "target named", "target group",
    }  # fmt: skip
    assert expected <= seen, expected - seen
