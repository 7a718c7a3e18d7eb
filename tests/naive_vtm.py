"""Plain-Python twin of ``simkit/vtm.py``, written from the rules (docs/rules.md, system ``vtm``).

It reads like the rules, one round at a time, with no arrays, codes or stacks (a
released delayer interrupting a turn is a recursive call).  It imports nothing from
simkit's kernel: it takes a validated ``Scenario`` and a *draw source*, any object
with the three draws of ``simkit/systems/stream.py``:

``roll(sides)``   one die, 1..sides
``below(n)``      uniform in [0, n); ``below(1)`` draws nothing and returns 0
``chance(t)``     True with probability ``t / 2**53``

``tests/naive_rng.NaiveStream.for_round(key, r)`` is such a source (the kernel's
stream of round ``r``); the exact tests use one that enumerates every
outcome instead.

Choices where the rules are open follow ``docs/rules-decisions.md`` (section ``vtm``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any, Protocol


class Draws(Protocol):
    def roll(self, sides: int) -> int: ...
    def below(self, n: int) -> int: ...
    def chance(self, threshold: int) -> bool: ...


COUNTS = (
    "first_action",
    "actions",
    "no_action",
    "attacked_before_acting",
    "defenses",
    "aborts",
    "known_declarations",
)


@dataclass
class RoundOutcome:
    """Everything one round produced, per combatant index."""

    first: list[int | None]  # moment of the first own action (None: never acted)
    actions: list[int]
    attacked_before_acting: list[bool]
    aborts: list[int]
    known_declarations: list[int]
    simultaneous: bool

    def counts(self, i: int) -> dict[str, int]:
        """The per-combatant counts of the README's metric table for combatant i."""
        return {
            "first_action": int(self.first[i] == 0),
            "actions": self.actions[i],
            "no_action": int(self.actions[i] == 0),
            "attacked_before_acting": int(self.attacked_before_acting[i]),
            "defenses": self.aborts[i],  # V5: a defense is always an abort
            "aborts": self.aborts[i],
            "known_declarations": self.known_declarations[i],
        }

    def acts_before(self, i: int, j: int) -> bool:
        """i's first action strictly before j's (j never acting counts as later)."""
        fi, fj = self.first[i], self.first[j]
        return fi is not None and (fj is None or fi < fj)


@dataclass
class _Round:
    scenario: Any
    draws: Draws
    slots: list[list[int]]
    remaining: list[int]  # actions left in the current phase (declared, then extra)
    first: list[int | None]
    actions: list[int]
    attacked: list[bool]
    aborts: list[int]
    moment: int = 0
    delaying: list[int] = field(default_factory=list)
    actions_by_side: dict[str, int] = field(default_factory=dict)

    def c(self, i: int) -> Any:
        return self.scenario.combatants[i]

    def slot_of(self, i: int) -> int:
        return next(s for s, members in enumerate(self.slots) if i in members)

    def opponent_has_acted(self, i: int) -> bool:
        return any(n > 0 for side, n in self.actions_by_side.items() if side != self.c(i).side)

    # ---------------------------------------------------------------- one action
    def act(self, i: int) -> None:
        """An action of i; an attack with probability attack_share (common model)."""
        self.actions[i] += 1
        self.actions_by_side[self.c(i).side] = self.actions_by_side.get(self.c(i).side, 0) + 1
        share = self.c(i)["attack_share"]
        if share == 0:
            return
        if share < 1 and not self.draws.chance(round(share * 2**53)):
            return
        targets = self.scenario.targets(i)
        t = targets[self.draws.below(len(targets))]
        if self.first[t] is None:  # attacked before its first own action
            self.attacked[t] = True
            # V5: abort "always" gives up one declared action for a defense.
            # Extra actions (V6) are not given up; without abort there is no defense.
            if self.c(t)["abort"] == "always" and self.remaining[t] > 0:
                self.remaining[t] -= 1
                self.aborts[t] += 1
                if t in self.delaying and self.remaining[t] == 0:
                    self.delaying.remove(t)  # nothing left to delay

    # ---------------------------------------------------------------- a turn
    def take_turn(self, group: list[int]) -> None:
        """Combatants acting at the same time take their actions in a row.

        Each moment, every member with an action left takes one (members of a shared
        slot side by side).  V4: after each moment, delayers for whom an opponent has
        just acted act right away (interrupting this turn), in order of initiative.
        """
        while True:
            movers = [i for i in group if self.remaining[i] > 0]
            if not movers:
                return
            for i in movers:
                if self.first[i] is None:
                    self.first[i] = self.moment
            sides = set()
            for i in movers:
                self.remaining[i] -= 1
                sides.add(self.c(i).side)
                self.act(i)
            self.moment += 1
            released = [d for d in self.delaying if sides - {self.c(d).side}]
            for d in released:
                self.delaying.remove(d)
            for slot in self.slots:  # V4: delayers wanting the same moment, by initiative
                together = [d for d in slot if d in released]
                if together:
                    self.take_turn(together)


def play_round(scenario: Any, draws: Draws) -> RoundOutcome:
    """Play one round of a vtm ``scenario`` with ``draws``."""
    fighters = scenario.combatants
    n = len(fighters)
    tie = scenario.rules["tie"]

    # V1: initiative = 1d10 + rating - wound_penalty, every combatant in scenario order
    # (V7: the wound penalty counts in this round already).
    initiative = [draws.roll(10) + c["rating"] - c["wound_penalty"] for c in fighters]

    # V2: descending initiative; a tie goes to the higher rating (without the wound
    # penalty); equal ratings too: one shared slot ("simultaneous") or a fair random
    # order ("random": the next is drawn with below() among the still-tied, listed in
    # scenario order).
    def level(i: int) -> tuple[int, int]:
        return (initiative[i], fighters[i]["rating"])

    ranked = sorted(range(n), key=lambda i: (-initiative[i], -fighters[i]["rating"], i))
    slots: list[list[int]] = []
    for _, tied_group in groupby(ranked, key=level):
        tied = list(tied_group)
        if len(tied) == 1 or tie == "simultaneous":
            slots.append(tied)
        else:
            while tied:
                slots.append([tied.pop(draws.below(len(tied)))])
    simultaneous = any(len(slot) > 1 for slot in slots)

    # V3: declarations from the slowest up; each combatant knows what the opponents in
    # strictly slower slots declared (not those sharing its slot).
    slot_of = {i: s for s, slot in enumerate(slots) for i in slot}
    known = [sum(1 for j in scenario.opponents(i) if slot_of[j] > slot_of[i]) for i in range(n)]

    rnd = _Round(
        scenario=scenario,
        draws=draws,
        slots=slots,
        remaining=[c["actions"] for c in fighters],  # all declared actions in a row
        first=[None] * n,
        actions=[0] * n,
        attacked=[False] * n,
        aborts=[0] * n,
    )

    # Normal actions in slot order.  V4: an "until_enemy_acts" delayer whose turn comes
    # before any opponent has acted waits instead.
    for slot in slots:
        group = []
        for i in slot:
            if rnd.remaining[i] == 0:  # every declared action given up (V5)
                continue
            if fighters[i]["delay"] == "until_enemy_acts" and not rnd.opponent_has_acted(i):
                rnd.delaying.append(i)
            else:
                group.append(i)
        if group:
            rnd.take_turn(group)

    # V4: no opponent acted before the normal actions ended: the delayers act last,
    # before V6, in order of initiative (each may still release others).
    while rnd.delaying:
        fastest = min(rnd.slot_of(d) for d in rnd.delaying)
        group = [d for d in slots[fastest] if d in rnd.delaying]
        for d in group:
            rnd.delaying.remove(d)
        rnd.take_turn(group)

    # V6: extra actions at the end of the round, all of them, in initiative order.
    for slot in slots:
        group = [i for i in slot if fighters[i]["extra_actions"] > 0]
        for i in group:
            rnd.remaining[i] = fighters[i]["extra_actions"]
        if group:
            rnd.take_turn(group)

    return RoundOutcome(
        first=rnd.first,
        actions=rnd.actions,
        attacked_before_acting=rnd.attacked,
        aborts=rnd.aborts,
        known_declarations=known,
        simultaneous=simultaneous,
    )


def row_maker(layout: Any) -> Callable[[RoundOutcome], list[int]]:
    """A function giving a round's counts in the order of ``layout`` (a ``Layout``)."""
    n = layout.n
    counts = [[(layout.count_index(i, m), m) for m in layout.counts] for i in range(n)]
    before = [[layout.before_index(i, j) for j in range(n)] for i in range(n)]
    dist = [int(x) for x in layout.dist_offsets]
    simultaneous = layout.scenario_offset + layout.scenario_counts.index("simultaneous")

    def row(outcome: RoundOutcome) -> list[int]:
        out = [0] * layout.size
        for i in range(n):
            values = outcome.counts(i)
            for m, metric in counts[i]:
                out[m] = values[metric]
            for j in range(n):
                out[before[i][j]] = int(outcome.acts_before(i, j))
            out[dist[i] + outcome.actions[i]] = 1
        out[simultaneous] = int(outcome.simultaneous)
        return out

    return row
