"""Plain-Python twin of one ``vtm`` round under rules revision 3 (docs/rules.md, V1-V7).

A readable, deliberately slow restatement of the rules: no arrays, no codes, no
stacks (a released delayer interrupting a turn is a recursive call).  It imports
nothing from simkit; it reads a ``Scenario`` (``combatants`` with ``name``, ``side``,
``group`` and fields by ``c[field]``, ``rules`` by ``rules[rule]``) and takes its
randomness from a *draw source*, any object with the three draws of simkit's
random stream (``tests/naive_rng.py`` is their port):

``roll(sides)``   one die, 1..sides
``below(n)``      uniform in [0, n); ``below(1)`` draws nothing and returns 0
``chance(t)``     True with probability ``t / 2**53``

``naive_rng.NaiveStream.for_round(key, r)`` is such a source (``play_rounds_keyed``),
and ``enumerate.PathDraws`` (tests/enumerate.py) one for exact probabilities; the
protocol is ``enumerate.Draws``.

The contract every system's twin meets (tests/contract_support.py):
``play_rounds_keyed(scenario, key_words, n_rounds, first=0, carry=0, dice=None)``
(a ``RoundRecord`` per round: counts, stream state, carry, log), ``fold_log`` (the
counts from the log alone) and ``random_scenario`` (the one place that imports simkit:
it validates the scenario it makes).  ``dice`` fixes a combatant's d10 (drawn, then
replaced; its index is its roller index, scenario order).

Rules: ``tie`` = ``"simultaneous"`` | ``"random"`` (V2), ``multi`` = ``"end"``
(default) | ``"in_turn"`` (V6), ``slot_abort`` = ``"allowed"`` (default) | ``"never"``
(V5 [rev 3]).  Fields: ``rating`` (dexterity + wits), ``wound_penalty``,
``actions``, ``extra_actions``, ``delay`` (``"never"`` | ``"until_enemy_acts"``),
``abort`` (``"never"`` | ``"always"`` | ``"before_acting"``), ``target``,
``attack_share``.  Cases the rules leave open follow docs/rules-decisions.md (section
``vtm``: revisions 3 and 2, and revision 1 where no later one overrides it).

Draw order (binding; revisions 2 and 3 add no draw):
1. V1: one d10 per combatant, in scenario order.
2. V2 with ``tie = "random"``: for every tied group, fastest first, ``below(m)`` picks
   the next among the ``m`` still tied (counted in scenario order) until one is left
   (``below(1)`` draws nothing).
3. As play goes, action by action: ``chance`` if 0 < attack_share < 1, then, for an
   attack, ``below`` over the target list (nothing if the list has one entry).  Aborts,
   delays and releases draw nothing.

The round, moment by moment.  A *moment* is one point in time at which one or more
combatants act; its number counts from 0 and grows by one after each moment.
Combatants acting together (a shared V2 slot, or delayers of one slot released
together) act in the same moment, their actions resolved one by one in scenario order:
before its own action is resolved a mover is *pending* (its action of the moment is
still in reserve), after it *resolved*.
* Normal phase (V2): slots in initiative order.  Under ``multi = "end"`` each
  combatant takes its first declared action at its turn; under ``"in_turn"`` all its
  declared actions, one moment each.  V4: a delayer lets its turn pass (unless an
  opponent has already acted: then it acts at its turn); right after a
  moment in which an opponent acted, the delayers it was waiting for take their turn
  (all released delayers in initiative order, those of one slot together; each
  group's whole turn, with the delayers it releases in turn, before the next group).
  Delayers still waiting when the slots are done take their turn now, fastest slot
  first (their actions may release delayers of other sides).  A released delayer's
  action is a normal action.
* End of the round (V6).  ``multi = "end"``: every combatant's end-of-round actions
  (``actions`` - 1 + ``extra_actions``) are numbered 1, 2, ...; additional round k
  goes through the slots in initiative order and the members of a slot whose action k
  is still to come act together in one moment.  ``multi = "in_turn"``: the
  ``extra_actions`` only, slot by slot, each combatant all of its own in a row
  (slot-mates moment by moment).
* V5: with ``abort = "always"``, an attacked combatant that still has an action to
  come gives up the next one: an action of its turn if it has one left, else its
  earliest end-of-round action still to come (the others keep their numbers, so under
  ``"end"`` it sits out additional round k and acts in the later ones).
  ``"before_acting"`` (revision 1): only while it has taken no action yet, and only an
  action of its turn (one per attack; under ``"end"`` that is the single normal
  action).  A delayer whose turn actions are all given up stops waiting.
  ``slot_abort = "allowed"`` [rev 3]: a shared moment is no exception; a pending mover's
  next action to come is its action of this moment: giving it up, it does not act in
  this moment (and an attack on it before its first action is one "before acting");
  a resolved mover gives up a later one.  ``"never"`` (revision 2): an attack on a
  combatant acting in the same moment (pending or resolved) is simultaneous: no abort,
  not "before acting".

Event log (``log``: anything with ``append``), in the order things happen.  Every
event is a tuple ``(kind, rule, ...)``:

``("roll", "V1", name, die, initiative)``
    one per combatant, scenario order; initiative = die + rating - wound_penalty.
``("slot", "V2", slot_index, names)``
    one per slot from the fastest (index 0); ``names`` a tuple of the members' names
    in scenario order (more than one: they share the slot, ``tie = "simultaneous"``).
``("known", "V3", name, count)``
    one per combatant, in declaration order (slowest slot first, scenario order
    within a slot); ``count`` = opponents in strictly slower slots.
``("delay", "V4", name)``
    a delayer lets its turn pass (when its slot comes).
``("release", "V4", name)``
    a delayer stops waiting and is about to take its turn: logged for every delayer
    released by one moment (or by the end of the normal actions) at once, in
    initiative order, before any of them acts (an attack before its turn may still
    take its turn actions, V5).  A delayer whose turn actions are all given up while
    it waits stops waiting without a ``release`` event (the ``abort`` event says it).
``("act", "V2" | "V6", name, moment, end_of_round)``
    one own action.  ``end_of_round`` False: an action of its turn (its normal action,
    any declared action under ``"in_turn"``, a released delayer's action), rule
    ``"V2"``; True: an end-of-round action, rule ``"V6"``.  Slot-mates acting together
    log the same moment.
``("attack", "V2", attacker, target)``
    right after the ``act`` event of an action that is an attack.
``("abort", "V5", name, given_up)``
    right after the ``attack`` event: the target defends by giving up an action;
    ``given_up`` 0: an action of its turn; k >= 1: its end-of-round action number k.
    A pending mover that gives up its action of the moment logs no ``act`` in it.
``("unanswered", "V5", target)``
    right after the ``attack`` event instead of ``abort``: nobody defends.

Every ``attack`` event is followed at once by exactly one ``abort`` or
``unanswered`` event about its target.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any, NamedTuple

from enumerate import Draws
from naive_rng import NaiveStream

D10 = 10  # V1: a d10


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
    """One combatant: its fields, and what happens to it this round."""

    index: int
    name: str
    side: str
    rating: int
    wound_penalty: int
    declared: int  # the field `actions`: actions declared in the initiative phase
    extra: int  # the field `extra_actions` (Celerity and the like)
    delay: str
    abort: str
    attack_share: float
    targets: list[int]
    # the round
    slot: int = 0
    turn_left: int = 0  # actions still to come at its turn (V2; V6 "in_turn": all declared)
    end_plan: list[int] = field(default_factory=list)  # numbers of its V6 actions to come
    first: int | None = None  # moment of its first own action
    actions: int = 0
    attacked_before_acting: bool = False
    aborts: int = 0
    known_declarations: int = 0
    attacks_made: int = 0
    attacks_received: int = 0
    defended: int = 0
    undefended: int = 0


class Round:
    """The play of one round after V1-V3 fixed the slots."""

    def __init__(
        self,
        fighters: list[Fighter],
        slots: list[list[Fighter]],
        draws: Draws,
        log: Any,
        slot_abort: str = "allowed",
    ) -> None:
        self.fighters = fighters
        self.slot_abort = slot_abort
        self.slots = slots
        self.draws = draws
        self.log = log
        self.moment = 0
        self.acting_now: list[Fighter] = []  # who acts in the moment being played
        self.pending: list[Fighter] = []  # its movers whose action is not yet resolved
        self.delaying: list[Fighter] = []  # V4 delayers still waiting, initiative order
        self.sides_acted: set[str] = set()

    def note(self, *event: Any) -> None:
        if self.log is not None:
            self.log.append(event)

    def opponent_has_acted(self, f: Fighter) -> bool:
        return bool(self.sides_acted - {f.side})

    # ------------------------------------------------------------ V5 defense
    def give_up(self, t: Fighter) -> int | None:
        """V5: the action ``t`` gives up to defend an attack (0: of its turn; k: its
        end-of-round action k), or None if it does not defend."""
        if t in self.acting_now and self.slot_abort == "never":
            return None  # V5/V2 (revision 2): same moment as its own action, simultaneous
        given = self.next_given_up(t)
        if given is not None and t in self.pending:
            self.pending.remove(t)  # V5 [rev 3]: its action of this moment, given up
        return given

    def next_given_up(self, t: Fighter) -> int | None:
        """V5: the action ``t``'s policy gives up (a pending mover's next action still to
        come is its action of this moment), or None."""
        if t.abort == "always":
            if t.turn_left > 0:  # its next action still to come is one of its turn
                t.turn_left -= 1
                return 0
            if t.end_plan:  # else its earliest end-of-round action still to come (V6)
                return t.end_plan.pop(0)
            return None
        if t.abort == "before_acting":  # revision 1: before its first action, turn only
            if t.first is None and t.turn_left > 0:
                t.turn_left -= 1
                return 0
            return None
        return None  # "never": no defense (a vtm defense is always an abort)

    # ------------------------------------------------------------ one action
    def act(self, f: Fighter, end_of_round: bool) -> None:
        """One own action of ``f``; an attack with probability attack_share."""
        f.actions += 1
        self.sides_acted.add(f.side)
        self.note("act", "V6" if end_of_round else "V2", f.name, self.moment, end_of_round)
        share = f.attack_share
        if share == 0:
            return
        if share < 1 and not self.draws.chance(chance_threshold(share)):
            return
        t = self.fighters[f.targets[self.draws.below(len(f.targets))]]
        f.attacks_made += 1
        t.attacks_received += 1
        self.note("attack", "V2", f.name, t.name)
        given_up = self.give_up(t)
        if t.first is None and t not in self.pending:  # a pending mover acts in it
            t.attacked_before_acting = True
        if given_up is None:
            t.undefended += 1
            self.note("unanswered", "V5", t.name)
            return
        t.aborts += 1
        t.defended += 1
        self.note("abort", "V5", t.name, given_up)
        if t in self.delaying and t.turn_left == 0:
            self.delaying.remove(t)  # V4: nothing left to delay

    def play_moment(self, movers: list[Fighter], end_of_round: bool) -> list[Fighter]:
        """Every mover takes one action in this moment, resolved in scenario order,
        unless it gave it up to defend before its turn in the moment (V5 [rev 3]).
        Returns those who acted."""
        self.acting_now = movers
        self.pending = list(movers)
        acted = []
        for f in movers:
            if f not in self.pending:
                continue  # V5 [rev 3]: its action of this moment went to a defense
            self.pending.remove(f)
            if f.first is None:
                f.first = self.moment
            if end_of_round:
                f.end_plan.pop(0)
            else:
                f.turn_left -= 1
            acted.append(f)
            self.act(f, end_of_round)
        self.acting_now = []
        self.moment += 1
        return acted

    # ------------------------------------------------------------ turns
    def take_turn(self, group: list[Fighter]) -> None:
        """The turn of ``group`` (one slot, or delayers of one slot): its turn actions.

        V4: after each moment the delayers waiting for one of the sides that just
        acted are released and take their turns right away, in order of initiative.
        """
        while True:
            movers = [f for f in group if f.turn_left > 0]
            if not movers:
                return
            acted = self.play_moment(movers, end_of_round=False)
            sides = {f.side for f in acted}
            released = [d for d in self.delaying if sides - {d.side}]
            self.release(released)
            for slot in self.slots:  # V4: delayers wanting the same moment, by initiative
                together = [d for d in slot if d in released]
                if together:
                    self.take_turn(together)

    def release(self, released: list[Fighter]) -> None:
        for slot in self.slots:
            for d in slot:
                if d in released:
                    self.delaying.remove(d)
                    self.note("release", "V4", d.name)

    def normal_actions(self) -> None:
        """V2/V4: the turns in initiative order, delayers waiting for an opponent."""
        for slot in self.slots:
            group = []
            for f in slot:
                if f.turn_left == 0:  # every action of its turn given up (V5)
                    continue
                if f.delay == "until_enemy_acts" and not self.opponent_has_acted(f):
                    self.delaying.append(f)
                    self.note("delay", "V4", f.name)
                else:
                    group.append(f)
            if group:
                self.take_turn(group)
        # V4: no opponent acted before the normal actions ended: the delayers act last,
        # before V6, fastest slot first (each may still release others).
        while self.delaying:
            fastest = min(d.slot for d in self.delaying)
            group = [d for d in self.slots[fastest] if d in self.delaying]
            self.release(group)
            self.take_turn(group)

    def end_of_round(self, multi: str) -> None:
        """V6: the actions that happen at the end of the round."""
        if multi == "end":
            # one round of additional actions at a time, in initiative order;
            # slot-mates take theirs in the same moment
            rounds = max((f.end_plan[-1] for f in self.fighters if f.end_plan), default=0)
            for k in range(1, rounds + 1):
                for slot in self.slots:
                    movers = [f for f in slot if f.end_plan and f.end_plan[0] == k]
                    if movers:
                        self.play_moment(movers, end_of_round=True)
        else:
            # "in_turn" (revision 1): slot by slot, each combatant its own in a row
            for slot in self.slots:
                while True:
                    movers = [f for f in slot if f.end_plan]
                    if not movers:
                        break
                    self.play_moment(movers, end_of_round=True)


def play_round(
    scenario: Any, draws: Draws, log: Any = None, dice: Mapping[int, Sequence[int]] | None = None
) -> dict[tuple[str, str], int]:
    """Play one round of a vtm ``scenario``; its counts keyed (combatant, metric).

    Scenario-wide counts are keyed ("", metric).  ``log`` (optional) receives the
    events of the module docstring.  ``dice`` maps a combatant's index (its roller
    index, ``System.rollers``) to the one face its d10 shows: the die is drawn as usual
    and then replaced, so the stream moves exactly as without ``dice``.
    """
    multi = scenario.rules["multi"]
    tie = scenario.rules["tie"]
    fighters = [
        Fighter(
            index=i,
            name=c.name,
            side=c.side,
            rating=c["rating"],
            wound_penalty=c["wound_penalty"],
            declared=c["actions"],
            extra=c["extra_actions"],
            delay=c["delay"],
            abort=c["abort"],
            attack_share=c["attack_share"],
            targets=targets_of(scenario, i),
        )
        for i, c in enumerate(scenario.combatants)
    ]

    def note(*event: Any) -> None:
        if log is not None:
            log.append(event)

    # V1: initiative = 1d10 + rating - wound_penalty, dice in scenario order
    # (V7: the wound penalty counts in this round already).
    initiative = {}
    for f in fighters:
        die = draws.roll(D10)
        if dice and f.index in dice:
            die = dice[f.index][0]  # fixed (trace --dice): drawn, then replaced
        initiative[f] = die + f.rating - f.wound_penalty
        note("roll", "V1", f.name, die, initiative[f])

    # V2: descending initiative; a tie goes to the higher rating (without the wound
    # penalty); equal ratings too: one shared slot ("simultaneous") or a fair random
    # order ("random": the next drawn with below() among the still tied).
    def level(f: Fighter) -> tuple[int, int]:
        return (initiative[f], f.rating)

    ranked = sorted(fighters, key=lambda f: (-initiative[f], -f.rating, f.index))
    slots: list[list[Fighter]] = []
    for _, tied_group in groupby(ranked, key=level):
        tied = list(tied_group)
        if len(tied) == 1 or tie == "simultaneous":
            slots.append(tied)
        else:
            while tied:
                slots.append([tied.pop(draws.below(len(tied)))])
    for s, slot in enumerate(slots):
        for f in slot:
            f.slot = s
        note("slot", "V2", s, tuple(f.name for f in slot))

    # V3: declarations from the slowest up; each knows what the opponents in strictly
    # slower slots declared (not those sharing its slot).
    for slot in reversed(slots):
        for f in slot:
            f.known_declarations = sum(1 for g in fighters if g.side != f.side and g.slot > f.slot)
            note("known", "V3", f.name, f.known_declarations)

    # V6: what each combatant does at its turn and at the end of the round
    for f in fighters:
        if multi == "end":
            f.turn_left = 1
            f.end_plan = list(range(1, f.declared - 1 + f.extra + 1))
        else:
            f.turn_left = f.declared
            f.end_plan = list(range(1, f.extra + 1))

    rnd = Round(fighters, slots, draws, log, scenario.rules["slot_abort"])
    rnd.normal_actions()
    rnd.end_of_round(multi)

    counts: dict[tuple[str, str], int] = {}
    for f in fighters:
        counts[(f.name, "first_action")] = int(f.first == 0)
        counts[(f.name, "actions")] = f.actions
        counts[(f.name, "no_action")] = int(f.actions == 0)
        counts[(f.name, "attacked_before_acting")] = int(f.attacked_before_acting)
        counts[(f.name, "defenses")] = f.aborts  # V5: a defense is always an abort
        counts[(f.name, "aborts")] = f.aborts
        counts[(f.name, "known_declarations")] = f.known_declarations
        counts[(f.name, "attacks_made")] = f.attacks_made
        counts[(f.name, "attacks_received")] = f.attacks_received
        counts[(f.name, "undefended")] = f.undefended
        counts[(f.name, "defended")] = f.defended
        for g in fighters:
            if g is not f:  # f's first action strictly before g's (never acting: later)
                before = f.first is not None and (g.first is None or f.first < g.first)
                counts[(f.name, f"acts_before.{g.name}")] = int(before)
        for k in range(f.declared + f.extra + 1):
            counts[(f.name, f"actions_dist.{k}")] = int(f.actions == k)
    counts[("", "simultaneous")] = int(any(len(slot) > 1 for slot in slots))
    return counts


class RoundRecord(NamedTuple):
    """One round as the contract tests see it (tests/contract_support.py)."""

    counts: dict[tuple[str, str], int]
    state: list[int]  # the six stream words the round left behind
    carry: int  # what the round passes to the next one: nothing in vtm
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
    from one vtm round to the next: ``carry`` must be 0 and every record's carry is 0.
    """
    if carry != 0:
        raise ValueError(f"vtm carries nothing between rounds, got carry={carry}")
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
    names, sides and numbers of actions): the events say everything that is counted."""
    log = list(log)
    cs = scenario.combatants
    first: dict[str, int] = {}  # moment of each one's first own action
    actions = {c.name: 0 for c in cs}
    for e in log:
        if e[0] == "act":
            first.setdefault(e[2], e[3])
            actions[e[2]] += 1
    counts: dict[tuple[str, str], int] = {}
    for c in cs:
        for metric in COUNTED:
            counts[(c.name, metric)] = 0
    shared = 0
    moment = -1
    for e in log:
        kind = e[0]
        if kind == "slot":
            shared |= len(e[3]) > 1
        elif kind == "known":
            counts[(e[2], "known_declarations")] = e[3]
        elif kind == "act":
            moment = e[3]
        elif kind == "attack":  # made in the moment of the last act event
            attacker, target = e[2], e[3]
            counts[(attacker, "attacks_made")] += 1
            counts[(target, "attacks_received")] += 1
            if first.get(target, moment + 1) > moment:  # it had not acted by this moment
                counts[(target, "attacked_before_acting")] = 1
        elif kind == "abort":
            for metric in ("aborts", "defenses", "defended"):
                counts[(e[2], metric)] += 1
        elif kind == "unanswered":
            counts[(e[2], "undefended")] += 1
    for c in cs:
        n = c.name
        counts[(n, "first_action")] = int(first.get(n) == 0)
        counts[(n, "actions")] = actions[n]
        counts[(n, "no_action")] = int(actions[n] == 0)
        for g in cs:
            if g is not c:
                before = n in first and (g.name not in first or first[n] < first[g.name])
                counts[(n, f"acts_before.{g.name}")] = int(before)
        for k in range(c["actions"] + c["extra_actions"] + 1):
            counts[(n, f"actions_dist.{k}")] = int(actions[n] == k)
    counts[("", "simultaneous")] = int(shared)
    return counts


COUNTED = (
    "attacked_before_acting",
    "defenses",
    "aborts",
    "known_declarations",
    "attacks_made",
    "attacks_received",
    "undefended",
    "defended",
)

SHARES = (1.0, 1.0, 1.0, 0.5, 0.3, 0.0, 1e-17)


def random_entries(
    rng: random.Random,
    aborts: tuple[str, ...] = ("never", "always", "before_acting"),
    max_entries: int = 5,
) -> list[dict[str, Any]]:
    """Random ``[[combatant]]`` tables: every field, policy and target kind; narrow
    ratings, so that ties (V2) are frequent."""
    n_sides = rng.choice((2, 2, 3))
    sides = [f"side{s}" for s in range(n_sides)]
    entries: list[dict[str, Any]] = []
    for k in range(rng.randint(n_sides, max_entries)):
        e: dict[str, Any] = {
            "name": f"F{k}",
            "side": sides[k] if k < n_sides else rng.choice(sides),
        }
        if rng.random() < 0.5:
            e["rating"] = rng.randint(0, 4)
        else:
            e["dexterity"], e["wits"] = rng.randint(0, 2), rng.randint(0, 2)
        if rng.random() < 0.3:
            e["wound_penalty"] = rng.randint(0, 3)
        if rng.random() < 0.4:
            e["actions"] = rng.randint(1, 3)
        if rng.random() < 0.4:
            e["extra_actions"] = rng.randint(0, 2)
        if rng.random() < 0.35:
            e["delay"] = "until_enemy_acts"
        if rng.random() < 0.6:
            e["abort"] = rng.choice(aborts)
        if rng.random() < 0.4:
            e["attack_share"] = rng.choice(SHARES)
        if rng.random() < 0.25:
            e["count"] = rng.randint(2, 3)
        entries.append(e)
    for e in entries:
        if rng.random() < 0.3:
            o = rng.choice([o for o in entries if o["side"] != e["side"]])
            e["target"] = o["name"]  # a single opponent or a count group
            if o.get("count", 1) > 1 and rng.random() < 0.5:
                e["target"] = f"{o['name']} 1"
    return entries


def random_scenario(rng: random.Random) -> Any:
    """A valid (validated) vtm scenario: 2-3 sides, up to about 8 combatants after
    ``count`` expansion, every rule, field, policy and target kind reachable."""
    from simkit.scenario import scenario_from_dict  # only here: the rules need no simkit

    while True:
        entries = random_entries(rng)
        if sum(e.get("count", 1) for e in entries) <= 8:
            break
    rules = {
        "tie": rng.choice(("simultaneous", "random")),
        "multi": rng.choice(("end", "in_turn")),
        "slot_abort": rng.choice(("allowed", "never")),
    }
    data = {"scenario": {"name": "random vtm", "system": "vtm"}, "rules": rules}
    return scenario_from_dict({**data, "combatant": entries}, source="<random vtm>")
