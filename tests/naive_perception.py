"""The plain-Python twin of one ``perception`` round (docs/rules.md, P1-P4).

A readable, deliberately slow restatement of the rules, used to pin the numba kernel
in ``simkit/perception.py``: both consume the same draws and must produce the same
per-round counts.  It keeps the acting order as a list of *slots* (each a list of the
combatants acting in it), sorts with Python's ``sorted`` and works out every metric
from its definition; the cases the rules leave open follow docs/rules-decisions.md
(section ``perception``).

Draws come from any object with ``roll(sides)``, ``below(n)`` and ``chance(threshold)``
(``naive_rng.NaiveStream``, or a scripted source).  ``play_rounds_keyed`` plays
consecutive rounds the way the kernel does, each round from its own stream
(``naive_rng.NaiveStream.for_round``).

Draw order (docs/rules-decisions.md, "The random stream" and "perception"):
1. P1: one d10 per combatant in scenario order; P2: one d10 per side, sides in
   order of first appearance.
2. Ties, from the first slot to the last: a *fair random order* of the still-tied,
   drawn by sequential selection (``below(m)`` picks the next one among the ``m``
   left, counted in scenario order).  P2 then orders each side's members
   (``within_side = "random"``), side after side in acting order.
3. P3/P4 actions in scenario order: ``chance`` if 0 < attack_share < 1, then
   ``below`` over the target list if it is an attack and the list has more than one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from naive_rng import NaiveStream

from simkit.metrics import Layout
from simkit.scenario import Scenario
from simkit.systems.stream import chance_threshold

COUNT_NAMES = (
    "first_action",
    "actions",
    "no_action",
    "attacked_before_acting",
    "known_intents",
    "intent_disclosed",
)

D10 = 10  # P1, P2: a d10


class Draws(Protocol):
    def roll(self, sides: int) -> int: ...
    def below(self, n: int) -> int: ...
    def chance(self, threshold: int) -> bool: ...


@dataclass
class Fighter:
    """One combatant: its parameters and what happened to it this round."""

    index: int
    name: str
    side: str
    perception: int
    commander: bool
    attack_share: float
    targets: list[int]
    attacked_before_acting: bool = False


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


def individual_slots(fighters: list[Fighter], tie: str, draws: Draws) -> list[list[Fighter]]:
    """P1: the acting order of one round in individual mode, as a list of slots."""
    # P1: initiative = 1d10 + perception, every round (dice in scenario order)
    initiative = [draws.roll(D10) + f.perception for f in fighters]
    # P1: descending order of initiative; tie: higher perception first
    keys = sorted({(initiative[f.index], f.perception) for f in fighters}, reverse=True)
    slots: list[list[Fighter]] = []
    for key in keys:
        tied = [f for f in fighters if (initiative[f.index], f.perception) == key]
        # P1 variant tie = "simultaneous": the still-tied act in the same slot
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
    fighters: list[Fighter], sides: tuple[str, ...], rules: dict, draws: Draws
) -> list[list[Fighter]]:
    """P2: the acting order of one round in group mode, as a list of slots."""
    members = {s: [f for f in fighters if f.side == s] for s in sides}
    stat = {s: group_perception(members[s], rules["group_stat"]) for s in sides}
    # P2: one d10 per side (sides in order of first appearance) plus group_stat
    total = {s: draws.roll(D10) + stat[s] for s in sides}
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


def play_round(scenario: Scenario, draws: Draws) -> dict[tuple[str, str], int]:
    """Play one round; its counts keyed by (combatant name, metric)."""
    fighters = [
        Fighter(
            index=i,
            name=c.name,
            side=c.side,
            perception=c["perception"],
            commander=c["commander"],
            attack_share=c["attack_share"],
            targets=list(scenario.targets(i)),
        )
        for i, c in enumerate(scenario.combatants)
    ]
    rules = dict(scenario.rules)
    if rules["mode"] == "individual":
        slots = individual_slots(fighters, rules["tie"], draws)
    else:
        slots = group_slots(fighters, scenario.sides, rules, draws)
    slot = {f.index: k for k, members in enumerate(slots) for f in members}

    # P4: everyone acts once, on its turn, and carries out the first action it stated
    # (P3).  The stated actions are drawn in scenario order.
    for f in fighters:
        share = f.attack_share
        attack = share == 1.0 or (0.0 < share < 1.0 and draws.chance(chance_threshold(share)))
        if attack:
            k = draws.below(len(f.targets)) if len(f.targets) > 1 else 0
            target = fighters[f.targets[k]]
            if slot[f.index] < slot[target.index]:  # same slot: simultaneous, not before
                target.attacked_before_acting = True

    counts: dict[tuple[str, str], int] = {}
    for f in fighters:
        opponents = [g for g in fighters if g.side != f.side]
        # P3: f learns the first action of every opponent with a lower initiative
        # (acting in a later slot; group mode: every member of every lower side)
        learns = [g for g in opponents if slot[g.index] > slot[f.index]]
        # ... and its own first action is known to every opponent acting before it
        known_by = [g for g in opponents if slot[g.index] < slot[f.index]]
        counts[(f.name, "first_action")] = int(slot[f.index] == 0)
        counts[(f.name, "actions")] = 1  # P4
        counts[(f.name, "no_action")] = 0
        counts[(f.name, "attacked_before_acting")] = int(f.attacked_before_acting)
        counts[(f.name, "known_intents")] = len(learns)
        counts[(f.name, "intent_disclosed")] = int(bool(known_by))
        for g in fighters:
            if g is not f:
                counts[(f.name, f"acts_before.{g.name}")] = int(slot[f.index] < slot[g.index])
        counts[(f.name, "actions_dist.0")] = 0
        counts[(f.name, "actions_dist.1")] = 1
    return counts


def play_rounds(
    scenario: Scenario, draws: Draws, n_rounds: int
) -> list[dict[tuple[str, str], int]]:
    """``n_rounds`` independent rounds from one draw source."""
    return [play_round(scenario, draws) for _ in range(n_rounds)]


def play_rounds_keyed(
    scenario: Scenario, key_words: Iterable[int], n_rounds: int, first: int = 0
) -> tuple[list[dict[tuple[str, str], int]], list[list[int]]]:
    """Rounds ``first .. first + n_rounds - 1`` of a chunk, each from its own stream.

    Round ``r`` draws from ``NaiveStream.for_round(key_words, r)`` (the per-round
    streams of simkit/systems/stream.py).  Returns the counts of every round and the
    six stream words each round left behind.
    """
    key = [int(w) for w in key_words][:4]
    out = []
    states = []
    for r in range(first, first + n_rounds):
        stream = NaiveStream.for_round(key, r)
        out.append(play_round(scenario, stream))
        states.append(stream.state())
    return out, states


def counts_from_row(row: np.ndarray, layout: Layout) -> dict[tuple[str, str], int]:
    """A kernel trace row (``perception.trace``) as the twin's count dict."""
    out: dict[tuple[str, str], int] = {}
    names = layout.names
    for i, name in enumerate(names):
        for metric in layout.counts:
            out[(name, metric)] = int(row[layout.count_index(i, metric)])
        for j, other in enumerate(names):
            value = int(row[layout.before_index(i, j)])
            if j == i:
                if value != 0:
                    raise AssertionError(f"kernel: {name} acts before itself ({value})")
                continue
            out[(name, f"acts_before.{other}")] = value
        for k in range(layout.dist_sizes[i]):
            out[(name, f"actions_dist.{k}")] = int(row[layout.dist_index(i, k)])
    if layout.scenario_counts:
        raise AssertionError("perception has no scenario-wide counts")
    return out
