"""The revision-2 perception twin (tests/twins/perception.py): exact values, round
identities, and revision 1 reachable through ``information = "order"``.

Exact values come from enumerating every d10 and every random choice (tie orders,
within-side orders, attack_share, target) of the twin with ``fractions.Fraction``
(``exact``), checked against closed forms written here from the rules (docs/rules.md).
Scenarios are built with ``builders.make_scenario`` (no validation: the twin needs
nothing of simkit).
"""

from __future__ import annotations

import random
from fractions import Fraction
from itertools import product
from typing import Any

import pytest
import rev1_record
from builders import make_scenario
from enumerate import expectation
from naive_rng import NaiveStream
from twins import perception as twin

D10 = range(1, 11)


# ------------------------------------------------------------------ enumeration
def exact(scenario: Any) -> dict[tuple[str, str], Fraction]:
    """Exact per-round mean of every count of the twin (tests/enumerate.py)."""
    return expectation(lambda draws: twin.play_round(scenario, draws))


def p_dice(n: int, event) -> Fraction:
    """P(event(d1, .., dn)) over n independent d10."""
    return Fraction(sum(1 for dice in product(D10, repeat=n) if event(*dice)), 10**n)


def perception(*combatants: dict, **rules: Any) -> Any:
    return make_scenario("perception", list(combatants), rules=rules)


def gunnar_and_wolf(mode: str, information: str) -> Any:
    return perception(
        {"name": "Gunnar", "side": "party", "perception": 4, "commander": True},
        {"name": "Wolf", "side": "wolves", "perception": 6, "commander": True},
        mode=mode,
        information=information,
    )


# ------------------------------------------------------------------ the seed's example
@pytest.mark.parametrize("mode", ["individual", "group"])
@pytest.mark.parametrize("information", ["strict", "order"])
def test_gunnar_and_the_wolf_exact(mode, information):
    """The rules (docs/rules.md, P3): P(Gunnar first) = 28/100; the wolf knows Gunnar's
    first action with 64/100 (strict: its total strictly higher) or 72/100 ("order": it
    acts first)."""
    first = p_dice(2, lambda g, w: 4 + g > 6 + w)  # a tie goes to the wolf (P1, P2)
    wolf_higher = p_dice(2, lambda g, w: 6 + w > 4 + g)
    assert (first, wolf_higher) == (Fraction(28, 100), Fraction(64, 100))
    ex = exact(gunnar_and_wolf(mode, information))
    assert ex[("Gunnar", "first_action")] == first
    assert ex[("Wolf", "first_action")] == 1 - first
    assert ex[("Gunnar", "acts_before.Wolf")] == first
    # Gunnar acts first exactly when his total is strictly higher: both readings agree
    assert ex[("Gunnar", "known_intents")] == ex[("Wolf", "intent_disclosed")] == first
    wolf_knows = Fraction(64, 100) if information == "strict" else Fraction(72, 100)
    assert ex[("Wolf", "known_intents")] == wolf_knows
    assert ex[("Gunnar", "intent_disclosed")] == wolf_knows
    assert ex[("Wolf", "attacked_before_acting")] == first
    assert ex[("Gunnar", "attacks_received")] == ex[("Gunnar", "undefended")] == 1


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


@pytest.mark.parametrize("mode", ["individual", "group"])
def test_gunnar_and_the_wolf_seed_rolls_log(mode):
    """Gunnar 9 -> 13, the wolf 2 -> 8: Gunnar acts first and knows the wolf's attack."""
    log: list[tuple] = []
    counts = twin.play_round(gunnar_and_wolf(mode, "strict"), SeedRolls(), log)
    rule, who = ("P1", ("Gunnar", "Wolf")) if mode == "individual" else ("P2", ("party", "wolves"))
    assert log == [
        ("roll", rule, who[0], 9, 13),
        ("roll", rule, who[1], 2, 8),
        ("slot", rule, "Gunnar", 0),
        ("slot", rule, "Wolf", 1),
        ("intent", "P3", "Gunnar", "Wolf"),
        ("act", "P4", "Gunnar", False),  # acting first, it stated nothing (P3)
        ("attack", "P4", "Gunnar", "Wolf"),
        ("act", "P4", "Wolf", True),  # the attack it stated (P4)
        ("attack", "P4", "Wolf", "Gunnar"),
    ]
    assert counts[("Gunnar", "known_intents")] == 1
    assert counts[("Wolf", "intent_disclosed")] == 1
    assert counts[("Gunnar", "intent_disclosed")] == 0
    assert counts[("Wolf", "attacked_before_acting")] == 1


@pytest.mark.parametrize("mode", ["individual", "group"])
@pytest.mark.parametrize("tie", ["random", "simultaneous"])
def test_only_those_acting_first_state_nothing(mode, tie):
    """P3/P4 [rev 3 wording]: everyone but the first to act states its first action and
    carries it out; the first states nothing.  Individual mode: every combatant of the
    first slot (two of them when tied under tie = "simultaneous"); group mode: every
    member of the side acting first (the seed: only the lower sides state)."""
    scenario = perception(
        {"name": "Gunnar", "side": "party", "perception": 4, "commander": True},
        {"name": "Mira", "side": "party", "perception": 4},
        {"name": "Wolf", "side": "wolves", "perception": 3, "commander": True},
        mode=mode,
        tie=tie,
        within_side="listed",
    )

    class Rolls:  # individual: Gunnar 9, Mira 9, Wolf 2; group: party 9, wolves 2
        dice = [9, 9, 2] if mode == "individual" else [9, 2]

        def roll(self, sides: int) -> int:
            return self.dice.pop(0)

        def below(self, n: int) -> int:
            return 0  # a tie between Gunnar and Mira: Gunnar first

        def chance(self, threshold: int) -> bool:
            raise AssertionError("unexpected attack_share draw")

    log: list[tuple] = []
    counts = twin.play_round(scenario, Rolls(), log)
    stated = {e[2]: e[3] for e in log if e[0] == "act"}
    if mode == "individual" and tie == "random":  # Gunnar first, then Mira (13 = 13)
        assert stated == {"Gunnar": False, "Mira": True, "Wolf": True}
    else:  # both 13s act first (one slot, or the side acting first)
        assert stated == {"Gunnar": False, "Mira": False, "Wolf": True}
    assert counts == twin.fold_log(scenario, log)


# ------------------------------------------------------------------ group mode
@pytest.mark.parametrize("information", ["strict", "order"])
def test_group_equal_group_perception(information):
    """Both sides have group perception 4 ("highest"): equal totals (1/10) give nobody
    information under "strict"; under "order" the side the coin puts first learns."""
    scenario = perception(
        {"name": "A", "side": "x", "perception": 4, "target": "C"},
        {"name": "B", "side": "x", "perception": 1, "attack_share": 0.5, "target": "C"},
        {"name": "C", "side": "y", "perception": 4, "target": "B"},
        {"name": "D", "side": "y", "perception": 2, "attack_share": 0.0},
        {"name": "E", "side": "y", "perception": 0, "attack_share": 0.0},
        mode="group",
        group_stat="highest",
        within_side="random",
        information=information,
    )
    ex = exact(scenario)
    x_higher = p_dice(2, lambda dx, dy: dx > dy)
    tie = p_dice(2, lambda dx, dy: dx == dy)
    assert (x_higher, tie) == (Fraction(45, 100), Fraction(1, 10))
    x_learns = x_higher if information == "strict" else x_higher + tie / 2
    assert ex[("A", "known_intents")] == 3 * x_learns
    assert ex[("B", "known_intents")] == 3 * x_learns
    assert ex[("C", "known_intents")] == 2 * x_learns  # symmetric: y learns as often
    assert ex[("A", "intent_disclosed")] == x_learns
    assert ex[("E", "intent_disclosed")] == x_learns
    # the acting order does not depend on the reading
    assert ex[("A", "first_action")] == Fraction(1, 4)
    assert ex[("C", "first_action")] == Fraction(1, 6)
    # C attacks B; B is attacked before acting when y acts first (1/2)
    assert ex[("B", "attacked_before_acting")] == Fraction(1, 2)
    # C always attacks B; A always and B half the time attack C
    assert ex[("B", "attacks_received")] == 1
    assert ex[("A", "attacks_received")] == 0
    assert ex[("C", "attacks_received")] == ex[("C", "undefended")] == Fraction(3, 2)
    # C before acting: y second (1/2); A attacks surely, B with 1/2: 1 - 1/2 = 1/2
    assert ex[("C", "attacked_before_acting")] == Fraction(1, 2)


@pytest.mark.parametrize("information", ["strict", "order"])
def test_group_commanders_equal_totals(information):
    """Commander perception 5 vs 3: equal side totals (8/100) put side x first on its
    higher group perception (P2), but under "strict" nobody learns anything then."""
    scenario = perception(
        {"name": "Hero", "side": "x", "perception": 5, "commander": True},
        {"name": "Squire", "side": "x", "perception": 6},
        {"name": "Orc", "side": "y", "perception": 3, "commander": True},
        {"name": "Goblin", "side": "y", "perception": 1},
        mode="group",
        within_side="listed",
        information=information,
    )
    ex = exact(scenario)
    x_first = p_dice(2, lambda dx, dy: 5 + dx >= 3 + dy)
    x_higher = p_dice(2, lambda dx, dy: 5 + dx > 3 + dy)
    assert x_first - x_higher == Fraction(8, 100)
    x_learns = x_higher if information == "strict" else x_first
    assert ex[("Hero", "first_action")] == x_first
    assert ex[("Squire", "first_action")] == 0  # listed: the Hero first
    assert ex[("Squire", "known_intents")] == 2 * x_learns
    assert ex[("Goblin", "intent_disclosed")] == x_learns
    assert ex[("Orc", "known_intents")] == 2 * (1 - x_first)  # y first: x's total lower


# ------------------------------------------------------------------ tie = "simultaneous"
@pytest.mark.parametrize("information", ["strict", "order"])
def test_individual_tie_simultaneous(information):
    """A (3) and C (3) share a slot on equal totals; A (3) beats B (2) on equal totals,
    which gives A B's intent only under "order"."""
    scenario = perception(
        {"name": "A", "side": "x", "perception": 3},
        {"name": "B", "side": "y", "perception": 2, "attack_share": 0.0},
        {"name": "C", "side": "y", "perception": 3, "attack_share": 0.0},
        tie="simultaneous",
        information=information,
    )
    ex = exact(scenario)

    def p(event) -> Fraction:
        return p_dice(3, lambda a, b, c: event(3 + a, 2 + b, 3 + c))

    a_before_b = p(lambda a, b, c: a >= b)  # equal totals: the higher perception
    a_before_c = p(lambda a, b, c: a > c)  # equal totals and perception: same slot
    if information == "strict":
        assert ex[("A", "known_intents")] == p(lambda a, b, c: a > b) + a_before_c
        assert ex[("B", "intent_disclosed")] == p(lambda a, b, c: a > b)
    else:
        assert ex[("A", "known_intents")] == a_before_b + a_before_c
        assert ex[("B", "intent_disclosed")] == a_before_b
    assert p(lambda a, b, c: a == b) == Fraction(9, 100)
    assert ex[("C", "known_intents")] == p(lambda a, b, c: c > a)  # never learns on a tie
    assert ex[("A", "acts_before.C")] == a_before_c
    assert ex[("A", "acts_before.B")] == a_before_b
    assert ex[("A", "first_action")] == p(lambda a, b, c: a >= c and a >= b)
    assert ex[("C", "first_action")] == p(lambda a, b, c: c >= a and c >= b)
    # A attacks B or C; same slot (a == c) is not "before acting"
    assert ex[("C", "attacked_before_acting")] == a_before_c / 2
    assert ex[("A", "attacks_made")] == 1


# ------------------------------------------------------------------ random scenarios
def random_scenario(rng: random.Random, information: str, max_total: int = 7) -> Any:
    """A random perception scenario (the twin's ``random_entries``), this ``information``."""
    entries, rules = twin.random_entries(rng, max_total)
    return make_scenario("perception", entries, rules={**rules, "information": information})


def rev1_fights():
    """The 300 random fights of the record (tests/rev1_record.py), under ``information =
    "order"``: ``(k, scenario, key, first)``; 40 rounds each from round ``first``."""
    rng = random.Random(20261202)
    for k in range(300):
        scenario = random_scenario(rng, information="order")
        key = [rng.getrandbits(64) for _ in range(4)]
        first = rng.randint(0, 999)
        yield k, scenario, key, first


def test_revision_1_stays_reachable():
    """300 random scenarios x 40 rounds: with ``information = "order"`` the new twin
    gives every count the revision-1 twin gave, round by round, and leaves the stream in
    the same state (tests/rev1_record.py)."""
    seen: set = set()
    for k, scenario, key, first in rev1_fights():
        records = twin.play_rounds_keyed(scenario, key, 40, first=first)
        played = [(rec.counts, rec.state) for rec in records]
        rev1_record.check("perception", k, played, scenario.to_dict())
        rules = scenario.rules
        seen.add((rules["mode"], rules["tie"] if rules["mode"] == "individual" else "-"))
        seen.add(len(scenario.sides))
    assert {("individual", "random"), ("individual", "simultaneous"), ("group", "-"), 2, 3} <= seen


def check_round(scenario: Any, counts: dict, log: list[tuple]) -> None:
    """The identities every round satisfies."""
    cs = scenario.combatants
    side = {c.name: c.side for c in cs}
    for c in cs:
        n = c.name
        assert counts[(n, "attacks_received")] == counts[(n, "undefended")]
        assert counts[(n, "actions")] == 1 and counts[(n, "actions_dist.1")] == 1
        learned = [e[3] for e in log if e[0] == "intent" and e[2] == n]
        assert counts[(n, "known_intents")] == sum(1 for s in learned if side[s] != c.side)
        assert counts[(n, "attacks_made")] == sum(1 for e in log if e[0] == "attack" and e[2] == n)
    attacks = [(e[2], e[3]) for e in log if e[0] == "attack"]
    assert all(side[a] != side[t] for a, t in attacks)
    if len(scenario.sides) == 2:
        for s in scenario.sides:
            made = sum(counts[(c.name, "attacks_made")] for c in cs if c.side == s)
            received = sum(counts[(c.name, "attacks_received")] for c in cs if c.side != s)
            assert made == received
    assert sum(counts[(c.name, "attacks_made")] for c in cs) == sum(
        counts[(c.name, "attacks_received")] for c in cs
    )
    assert sum(1 for e in log if e[0] == "act") == len(cs)
    # the first slot's intent is never learned ("except the one acting first")
    first_slot = {e[2] for e in log if e[0] == "slot" and e[3] == 0}
    assert first_slot and not [e for e in log if e[0] == "intent" and e[3] in first_slot]
    # the slots: one per combatant, in acting order, numbered from 0 without gaps
    slots = [e[3] for e in log if e[0] == "slot"]
    assert sorted(e[2] for e in log if e[0] == "slot") == sorted(side)
    assert slots == sorted(slots) and set(slots) == set(range(slots[-1] + 1))
    assert fold_log_counts(scenario, log) == counts


def test_round_identities_and_strict_within_order():
    """400 random scenarios x 20 rounds: the identities; and on the same stream the
    strict reading gives a subset of what "order" gives, every other count equal."""
    rng = random.Random(4242)
    for _ in range(400):
        entries, rules = twin.random_entries(rng, max_total=7)
        rules.pop("information")
        scenario = make_scenario("perception", entries, rules={**rules, "information": "strict"})
        other = make_scenario("perception", entries, rules={**rules, "information": "order"})
        key = [rng.getrandbits(64) for _ in range(4)]
        for r in range(20):
            log: list[tuple] = []
            stream, order_stream = NaiveStream.for_round(key, r), NaiveStream.for_round(key, r)
            counts = twin.play_round(scenario, stream, log)
            check_round(scenario, counts, log)
            wide_log: list[tuple] = []
            wide = twin.play_round(other, order_stream, wide_log)
            check_round(other, wide, wide_log)
            assert stream.state() == order_stream.state()
            for (name, metric), value in counts.items():
                if metric in ("known_intents", "intent_disclosed"):
                    assert value <= wide[(name, metric)]
                else:
                    assert value == wide[(name, metric)]


def fold_log_counts(scenario: Any, log: list[tuple]) -> dict:
    return twin.fold_log(scenario, log)


def test_play_rounds_keyed_matches_play_round():
    scenario = gunnar_and_wolf("individual", "strict")
    key = [5, 6, 7, 8]
    records = twin.play_rounds_keyed(scenario, key, 5, first=3)
    for r in range(5):
        stream = NaiveStream.for_round(key, 3 + r)
        log: list[tuple] = []
        assert twin.play_round(scenario, stream, log) == records[r].counts
        assert stream.state() == records[r].state
        assert records[r].log == log and records[r].carry == 0


@pytest.mark.parametrize("mode", ["individual", "group"])
def test_fixed_dice_replace_the_face_after_the_draw(mode):
    """``dice`` fixes a roller's d10 (P1: a combatant; P2: a side): the die is drawn as
    usual and replaced, so the stream ends where it would have and only that face
    changes."""
    scenario = gunnar_and_wolf(mode, "strict")
    key = [11, 12, 13, 14]
    free = twin.play_rounds_keyed(scenario, key, 20)
    fixed = twin.play_rounds_keyed(scenario, key, 20, dice={1: [2]})
    for a, b in zip(free, fixed, strict=True):
        assert a.state == b.state
        rolls_a = [e for e in a.log if e[0] == "roll"]
        rolls_b = [e for e in b.log if e[0] == "roll"]
        assert rolls_a[0] == rolls_b[0]
        assert rolls_b[1][3:] == (2, 2 + 6)  # the wolf (or its side): 2 + perception 6


def test_carry_must_be_zero():
    with pytest.raises(ValueError, match="carries nothing"):
        twin.play_rounds_keyed(gunnar_and_wolf("individual", "strict"), [1, 2, 3, 4], 1, carry=1)
