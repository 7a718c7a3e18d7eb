"""Plain-Python twin of one ``perception`` round under rules revision 3 (docs/rules.md, P1-P4).

A readable, deliberately slow restatement of the rules.  It keeps the acting order
as a list of *slots* (each a list of the combatants acting in it) and works out every
metric from its definition.  It imports nothing from simkit; it reads a ``Scenario``
(``combatants`` with ``name``, ``side``, ``group`` and fields by ``c[field]``,
``sides``, ``rules``) and takes its randomness from a draw source with ``roll(sides)``,
``below(n)`` and ``chance(threshold)`` (``enumerate.Draws``: ``naive_rng.NaiveStream``, or
``enumerate.PathDraws`` for exact probabilities).

The contract every system's twin meets (tests/contract_support.py):
``play_rounds_keyed(scenario, key_words, n_rounds, first=0, carry=0, dice=None)`` plays
consecutive rounds the way the kernel does, each from its own stream
(``naive_rng.NaiveStream.for_round``), and returns a ``RoundRecord`` per round (counts,
stream state, carry, log); ``fold_log`` gives the counts from a log alone;
``random_scenario`` makes a valid scenario (the one place that imports simkit).
``dice`` maps a roller index (individual mode: a combatant, scenario order; group
mode: a side, order of first appearance) to the faces it rolls: its d10 is drawn as
usual, then replaced, so every other draw stays where it was.

Rules: ``mode`` (``"individual"`` | ``"group"``), ``tie`` (``"random"`` |
``"simultaneous"``), ``group_stat`` (``"commander"`` | ``"highest"``), ``within_side``
(``"random"`` | ``"listed"``), ``information`` (``"strict"``, default | ``"order"``,
revision 1).  Cases the rules leave open follow docs/rules-decisions.md (section
``perception``).

Draw order (binding; revision 2 adds no draw):
1. P1: one d10 per combatant in scenario order; P2: one d10 per side, sides in order
   of first appearance.
2. Ties, from the first slot to the last: a fair random order of the still tied by
   sequential selection (``below(m)`` picks the next among the ``m`` left, counted in
   scenario order).  P2 then orders each side's members (``within_side = "random"``),
   side after side in acting order.
3. P3/P4 stated first actions in scenario order: ``chance`` if 0 < attack_share < 1,
   then ``below`` over the target list if it is an attack and the list has more than
   one entry.

P3 information.  ``"strict"``: a combatant learns the first action of every
combatant whose initiative total is strictly lower than its own (P1: d10 +
perception; P2: every member of a side learns every member of every side with a
strictly lower side total, d10 + group stat; never its own side's).  ``"order"``:
of every combatant acting in a later slot (P2: of every member of a later side).  The
combatant acting first states nothing (individual mode: every combatant of the first
slot; group mode: every member of the side acting first, as only the lower sides
state); nobody could learn its action in either reading (nobody has a higher total or
an earlier slot, of another side), so this changes no count, only the ``act`` event.

Event log (``log``: anything with ``append``), in the order things happen.  Every
event is a tuple ``(kind, rule, ...)``:

``("roll", "P1", name, die, total)``
    individual mode: one per combatant, scenario order; total = die + perception.
``("roll", "P2", side, die, total)``
    group mode: one per side, order of first appearance; total = die + group stat.
``("slot", "P1" | "P2", name, slot)``
    the final acting order after every tie-break: one event per combatant, in acting
    order (slot-mates in scenario order); ``slot`` counts from 0 (fastest); combatants
    sharing a slot (P1 ``tie = "simultaneous"``) have the same number, and the numbers
    have no gaps.  In group mode every combatant has a slot of its own.
``("intent", "P3", learner, stater)``
    ``learner`` learns ``stater``'s first action, for every such pair, allies included
    in individual mode (the metrics count opponents only); learners in acting order,
    for each learner the staters in acting order (slot-mates in scenario order).
``("act", "P4", name, stated)``
    each combatant's one action, in acting order (slot-mates in scenario order);
    ``stated`` False for those acting first, who stated nothing (P3), True for the
    others, who carry out the first action they stated (P4).
``("attack", "P4", attacker, target)``
    right after the ``act`` event of an action that is an attack.

There is no defense in this system: every attack is unanswered (``undefended``).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from enumerate import Draws
from naive_rng import NaiveStream

D10 = 10  # P1, P2: a d10


def chance_threshold(p: float) -> int:
    """The integer threshold of ``chance`` for probability ``p`` (random_stream's rule)."""
    return round(p * 2**53)


def targets_of(scenario: Any, i: int) -> list[int]:
    """Indices combatant ``i`` may attack (docs/rules.md, targets), in scenario order."""
    combatants = scenario.combatants
    me = combatants[i]
    opponents = [j for j, c in enumerate(combatants) if c.side != me.side]
    target = me["target"]
    if target == "random":
        return opponents
    named = [j for j in opponents if combatants[j].name == target]
    return named or [j for j in opponents if combatants[j].group == target]


@dataclass(eq=False)
class Fighter:
    """One combatant: its fields and what happened to it this round."""

    index: int
    name: str
    side: str
    perception: int
    commander: bool
    attack_share: float
    targets: list[int]
    total: int = 0  # its initiative total (P1), or its side's total (P2)
    slot: int = 0
    target: Fighter | None = None  # the opponent its stated first action attacks
    attacked_before_acting: bool = False
    attacks_received: int = 0


def fair_order(draws: Draws, tied: list) -> list:
    """A fair random order of ``tied`` (given in scenario order): sequential selection.

    ``below(m)`` picks the next one among the ``m`` still left (in scenario order),
    until one is left.  Every order has probability 1 / len(tied)!.
    """
    left = list(tied)
    out = []
    while len(left) > 1:
        out.append(left.pop(draws.below(len(left))))
    return out + left


def roll_d10(draws: Draws, roller: int, dice: Mapping[int, Sequence[int]] | None) -> int:
    """One d10 of roller ``roller``; fixed ``dice`` replace the face after the draw."""
    die = draws.roll(D10)
    if dice is not None and roller in dice:
        (die,) = dice[roller]  # one d10 per roller and round
    return die


def individual_slots(
    fighters: list[Fighter],
    tie: str,
    draws: Draws,
    note: Any,
    dice: Mapping[int, Sequence[int]] | None = None,
) -> list[list[Fighter]]:
    """P1: the acting order of one round in individual mode, as a list of slots."""
    # P1: initiative = 1d10 + perception, every round (dice in scenario order)
    for f in fighters:
        die = roll_d10(draws, f.index, dice)
        f.total = die + f.perception
        note("roll", "P1", f.name, die, f.total)
    # P1: descending order of initiative; tie: higher perception first
    keys = sorted({(f.total, f.perception) for f in fighters}, reverse=True)
    slots: list[list[Fighter]] = []
    for key in keys:
        tied = [f for f in fighters if (f.total, f.perception) == key]
        # P1 variant tie = "simultaneous": the still tied act in the same slot
        if len(tied) == 1 or tie == "simultaneous":
            slots.append(tied)
        else:  # P1 default tie = "random"
            slots.extend([f] for f in fair_order(draws, tied))
    return slots


def group_perception(members: list[Fighter], group_stat: str) -> int:
    """P2: the side's commander's perception, or the highest perception on the side."""
    if group_stat == "highest":
        return max(f.perception for f in members)
    (commander,) = [f for f in members if f.commander]  # validation: exactly one
    return commander.perception


def group_slots(
    fighters: list[Fighter],
    sides: tuple[str, ...],
    rules: Any,
    draws: Draws,
    note: Any,
    dice: Mapping[int, Sequence[int]] | None = None,
) -> list[list[Fighter]]:
    """P2: the acting order of one round in group mode, as a list of slots."""
    members = {s: [f for f in fighters if f.side == s] for s in sides}
    stat = {s: group_perception(members[s], rules["group_stat"]) for s in sides}
    # P2: one d10 per side (sides in order of first appearance) plus group_stat
    total = {}
    for k, s in enumerate(sides):
        die = roll_d10(draws, k, dice)
        total[s] = die + stat[s]
        note("roll", "P2", s, die, total[s])
        for f in members[s]:
            f.total = total[s]
    # P2: sides in descending total; tie: higher group perception, then random
    side_order: list[str] = []
    for key in sorted({(total[s], stat[s]) for s in sides}, reverse=True):
        tied = [s for s in sides if (total[s], stat[s]) == key]
        side_order.extend(fair_order(draws, tied))
    slots: list[list[Fighter]] = []
    for s in side_order:
        # P2: within a side, a fresh random order each round, or scenario order
        order = members[s] if rules["within_side"] == "listed" else fair_order(draws, members[s])
        slots.extend([f] for f in order)
    return slots


def learns(f: Fighter, g: Fighter, information: str, group: bool) -> bool:
    """P3: does ``f`` learn ``g``'s first action?"""
    if information == "strict":
        # strictly lower initiative total (group mode: a lower side, never its own)
        return g.total < f.total and not (group and g.side == f.side)
    # "order" (revision 1): g acts in a later slot (group mode: a later side)
    return g.slot > f.slot and not (group and g.side == f.side)


def play_round(
    scenario: Any,
    draws: Draws,
    log: Any = None,
    dice: Mapping[int, Sequence[int]] | None = None,
) -> dict[tuple[str, str], int]:
    """Play one round; its counts keyed (combatant name, metric).

    ``log`` (optional) receives the events of the module docstring; ``dice`` fixes the
    faces of rollers (module docstring).
    """

    def note(*event: Any) -> None:
        if log is not None:
            log.append(event)

    fighters = [
        Fighter(
            index=i,
            name=c.name,
            side=c.side,
            perception=c["perception"],
            commander=c["commander"],
            attack_share=c["attack_share"],
            targets=targets_of(scenario, i),
        )
        for i, c in enumerate(scenario.combatants)
    ]
    rules = scenario.rules
    group = rules["mode"] == "group"
    if group:
        slots = group_slots(fighters, scenario.sides, rules, draws, note, dice)
    else:
        slots = individual_slots(fighters, rules["tie"], draws, note, dice)
    rule = "P2" if group else "P1"
    for k, members in enumerate(slots):
        for f in members:
            f.slot = k
            note("slot", rule, f.name, k)

    # P3: everyone states its first action before anyone acts (P4: it must carry it
    # out).  The stated actions are drawn in scenario order.
    for f in fighters:
        share = f.attack_share
        attack = share == 1.0 or (0.0 < share < 1.0 and draws.chance(chance_threshold(share)))
        if attack:
            k = draws.below(len(f.targets)) if len(f.targets) > 1 else 0
            f.target = fighters[f.targets[k]]

    # P3: who learns whose first action.  The one acting first states nothing, but
    # nobody has a higher total or an earlier slot, so nobody could learn it anyway.
    in_order = [f for members in slots for f in members]
    known: dict[Fighter, list[Fighter]] = {f: [] for f in fighters}
    known_by: dict[Fighter, list[Fighter]] = {f: [] for f in fighters}
    for f in in_order:
        for g in in_order:
            if g is not f and learns(f, g, rules["information"], group):
                known[f].append(g)
                known_by[g].append(f)
                note("intent", "P3", f.name, g.name)

    # P4: everyone acts once, on its turn; all but the first to act carry out the
    # action they stated (P3: the first states nothing; group mode: the first side)
    lead = in_order[0]
    for f in in_order:
        stated = f.side != lead.side if group else f.slot > 0
        note("act", "P4", f.name, stated)
        t = f.target
        if t is not None:
            note("attack", "P4", f.name, t.name)
            t.attacks_received += 1
            if t.slot > f.slot:  # same slot: simultaneous, not before acting
                t.attacked_before_acting = True

    counts: dict[tuple[str, str], int] = {}
    for f in fighters:
        counts[(f.name, "first_action")] = int(f.slot == 0)
        counts[(f.name, "actions")] = 1  # P4
        counts[(f.name, "no_action")] = 0
        counts[(f.name, "attacked_before_acting")] = int(f.attacked_before_acting)
        # P3 metrics count opponents only
        counts[(f.name, "known_intents")] = sum(1 for g in known[f] if g.side != f.side)
        counts[(f.name, "intent_disclosed")] = int(any(g.side != f.side for g in known_by[f]))
        counts[(f.name, "attacks_made")] = int(f.target is not None)
        counts[(f.name, "attacks_received")] = f.attacks_received
        counts[(f.name, "undefended")] = f.attacks_received  # no defense in this system
        for g in fighters:
            if g is not f:
                counts[(f.name, f"acts_before.{g.name}")] = int(f.slot < g.slot)
        counts[(f.name, "actions_dist.0")] = 0
        counts[(f.name, "actions_dist.1")] = 1
    return counts


class RoundRecord(NamedTuple):
    """One round as the contract tests see it (tests/contract_support.py)."""

    counts: dict[tuple[str, str], int]
    state: list[int]  # the six stream words the round left behind
    carry: int  # what the round passes to the next one: nothing in perception
    log: list[tuple]


def play_rounds_keyed(
    scenario: Any,
    key_words: Iterable[int],
    n_rounds: int,
    first: int = 0,
    carry: int = 0,
    dice: Mapping[int, Sequence[int]] | None = None,
) -> list[RoundRecord]:
    """Rounds ``first .. first + n_rounds - 1`` of a chunk, each from its own stream.

    Round ``r`` draws from ``NaiveStream.for_round(key_words, r)``.  Nothing carries
    from one perception round to the next: ``carry`` must be 0 and every record's
    carry is 0.
    """
    if carry != 0:
        raise ValueError(f"perception carries nothing between rounds, got carry={carry}")
    key = [int(w) for w in key_words][:4]
    out = []
    for r in range(first, first + n_rounds):
        stream = NaiveStream.for_round(key, r)
        log: list[tuple] = []
        counts = play_round(scenario, stream, log, dice)
        out.append(RoundRecord(counts, stream.state(), 0, log))
    return out


def fold_log(scenario: Any, log: Iterable[tuple], carry: int = 0) -> dict[tuple[str, str], int]:
    """The counts of one round rebuilt from its event log alone (and the scenario's
    names and sides): the events say everything that is counted."""
    side = {c.name: c.side for c in scenario.combatants}
    names = list(side)
    slot: dict[str, int] = {}
    actions = dict.fromkeys(names, 0)
    known = dict.fromkeys(names, 0)
    disclosed = dict.fromkeys(names, 0)
    made = dict.fromkeys(names, 0)
    received = dict.fromkeys(names, 0)
    attacked_first = dict.fromkeys(names, 0)
    log = list(log)
    for e in log:
        if e[0] == "slot":
            slot[e[2]] = e[3]
    for e in log:
        kind = e[0]
        if kind == "intent" and side[e[2]] != side[e[3]]:  # P3 metrics: opponents only
            known[e[2]] += 1
            disclosed[e[3]] = 1
        elif kind == "act":
            actions[e[2]] += 1
        elif kind == "attack":
            attacker, target = e[2], e[3]
            made[attacker] += 1
            received[target] += 1
            if slot[attacker] < slot[target]:
                attacked_first[target] = 1
    counts: dict[tuple[str, str], int] = {}
    for n in names:
        counts[(n, "first_action")] = int(slot[n] == 0)
        counts[(n, "actions")] = actions[n]
        counts[(n, "no_action")] = int(actions[n] == 0)
        counts[(n, "attacked_before_acting")] = attacked_first[n]
        counts[(n, "known_intents")] = known[n]
        counts[(n, "intent_disclosed")] = disclosed[n]
        counts[(n, "attacks_made")] = made[n]
        counts[(n, "attacks_received")] = received[n]
        counts[(n, "undefended")] = received[n]
        for g in names:
            if g != n:
                counts[(n, f"acts_before.{g}")] = int(slot[n] < slot[g])
        for k in range(2):
            counts[(n, f"actions_dist.{k}")] = int(actions[n] == k)
    return counts


# ------------------------------------------------------------------ random scenarios
SHARES = (1.0, 1.0, 0.0, 0.5, 0.3, 0.9, 1e-17)
RULE_CHOICES = {
    "mode": ("individual", "group"),
    "tie": ("random", "simultaneous"),
    "group_stat": ("commander", "highest"),
    "within_side": ("random", "listed"),
    "information": ("strict", "order"),
}


def random_entries(rng: random.Random, max_total: int = 8) -> tuple[list[dict], dict]:
    """Random combatant entries and rules: 2-3 sides, up to ``max_total`` combatants after
    ``count`` expansion, small perceptions (many ties), every rule, share kind and
    target kind (random, a single opponent, a count group, one member of a group)."""
    n_sides = rng.choice((2, 2, 3))
    sides = [f"side{k}" for k in range(n_sides)]
    rules = {key: rng.choice(values) for key, values in RULE_CHOICES.items()}
    needs_commander = rules["mode"] == "group" and rules["group_stat"] == "commander"
    entries: list[dict] = []
    made = 0
    total = rng.randint(n_sides, max_total)
    while made < total:
        k = len(entries)
        if k < n_sides:  # one single combatant per side first (the commanders)
            e: dict[str, Any] = {"name": f"C{k}", "side": sides[k], "count": 1}
            if needs_commander or rng.random() < 0.4:
                e["commander"] = True
        else:
            count = 1 if rng.random() < 0.5 else rng.randint(1, min(3, total - made))
            e = {"name": f"C{k}", "side": rng.choice(sides), "count": count}
        e["perception"] = rng.randint(0, 5)
        e["attack_share"] = rng.choice(SHARES)
        entries.append(e)
        made += e["count"]
    for e in entries:
        opponents = [o for o in entries if o["side"] != e["side"]]
        r = rng.random()
        o = rng.choice(opponents)
        if r < 0.25:
            e["target"] = o["name"] if o["count"] == 1 else f"{o['name']} {o['count']}"
        elif r < 0.45:
            e["target"] = o["name"]  # a single opponent or a count group
    return entries, rules


def random_scenario(rng: random.Random, max_total: int = 8) -> Any:
    """A valid (validated) perception scenario: 2-3 sides, up to ``max_total`` (8)
    combatants after ``count`` expansion, individual and group mode (with commanders
    where needed), every rule, field and target kind reachable."""
    from simkit.scenario import scenario_from_dict  # only here: the rules need no simkit

    entries, rules = random_entries(rng, max_total)
    for e in entries:
        if e["count"] == 1:
            del e["count"]
    data = {"scenario": {"name": "random perception", "system": "perception"}, "rules": rules}
    return scenario_from_dict({**data, "combatant": entries}, source="<random perception>")
