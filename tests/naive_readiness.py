"""The plain-Python twin of one ``readiness`` round (docs/rules.md, R1-R9).

A readable, deliberately slow restatement of the rules, used to pin the numba kernel
in ``simkit/readiness.py``: both consume the same draws and must produce the same
per-round counts.  It uses no packed keys and no shortcuts: every combatant's dice
are a list, R3's tie-breaks T1 and T2 are computed literally before every turn (T2
compares the other dice of the round minus one die of value v, element by element),
and the cases the rules leave open follow docs/rules-decisions.md.

Draws come from any object with ``roll(sides)``, ``below(n)`` and ``chance(threshold)``
(``naive_rng.NaiveStream``, or an enumerating source for exact probabilities).  If it
also has ``roll_pool(count, sides)``, R1 asks it for a whole pool at once; the pool is
a multiset (R3 only ever looks at it sorted), so this changes nothing but speed.

``play_rounds_keyed`` plays consecutive rounds the way the kernel does, each round
from its own stream (``naive_rng.NaiveStream.for_round``).

Draw order (docs/rules-decisions.md, "The random stream"): R1 dice of combatant 0,
then 1, ...; then, as the round is played: T3 ``below(k)`` over the tied candidates
in scenario order, ``chance(threshold)`` for an action when 0 < attack_share < 1, and
``below(m)`` over the target list when the action is an attack and m > 1.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import zip_longest
from typing import Any, Protocol

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
    "defenses",
    "hasty_defenses",
    "hasty_scale_total",
    "expired_dice",
)

SIDES_OF_A_DIE = 6  # R1: d6

# Hold states of a combatant during a round (R5).
FRESH = "fresh"  # has a hold policy and has not had its first turn yet
HOLDING = "holding"  # holds: skipped by R3
RELEASED = "released"  # until_enemy_acts holder whose event came: declares next
NORMAL = "normal"  # acts whenever R3 gives it the turn

_HASTY_UP_TO = re.compile(r"^hasty_up_to:(\d+)$")


class Draws(Protocol):
    def roll(self, sides: int) -> int: ...
    def below(self, n: int) -> int: ...
    def chance(self, threshold: int) -> bool: ...


@dataclass
class Fighter:
    """One combatant: its parameters and its state during the round."""

    index: int
    name: str
    side: str
    group: str
    readiness: int
    advantage: int
    hold: str
    defend: str
    guard: bool
    target: str
    attack_share: float
    targets: list[Fighter] = field(default_factory=list, repr=False)
    # the round's state
    dice: list[int] = field(default_factory=list)  # every die of the round, after R2
    unspent: list[int] = field(default_factory=list)  # unspent dice, high to low
    state: str = NORMAL
    release_event: int = -1  # the action that released an until_enemy_acts holder
    attacked: bool = False
    first_step: int | None = None  # index of its first action among the round's actions
    actions: int = 0
    defenses: int = 0
    hasty_defenses: int = 0
    hasty_scale_total: int = 0
    attacked_before_acting: bool = False

    @property
    def initiative(self) -> int:
        """R3: the highest unspent die (only asked of a combatant with dice)."""
        return self.unspent[0]

    def spend_highest(self) -> int:
        """R4 / R5 / R7: every spend takes the highest unspent die."""
        die = max(self.unspent)
        self.unspent.remove(die)
        return die

    def other_dice(self, v: int) -> list[int]:
        """T2: all of its dice of this round, spent and unspent, minus one die of value v."""
        rest = sorted(self.dice, reverse=True)
        rest.remove(v)
        return rest


def compare_other_dice(a: list[int], b: list[int]) -> int:
    """T2 on two lists sorted high to low: +1 if a wins, -1 if b wins, 0 if equal.

    Element by element; the first higher die wins; a die beats no die.
    """
    for x, y in zip_longest(a, b):
        if x == y:
            continue
        if y is None:
            return 1
        if x is None:
            return -1
        return 1 if x > y else -1
    return 0


def prepare(dice: list[int], pips: int, prep: str) -> list[int]:
    """R2: add ``pips`` pips one at a time, no die above 6; returns the dice high to low."""
    dice = list(dice)
    for _ in range(pips):
        below_six = [k for k in range(len(dice)) if dice[k] < 6]
        if not below_six:
            break
        if prep == "sixes":  # the highest die that is still below 6
            k = max(below_six, key=lambda j: dice[j])
        else:  # "lowest": the lowest die
            k = min(range(len(dice)), key=lambda j: dice[j])
        dice[k] += 1
    return sorted(dice, reverse=True)


@lru_cache(maxsize=256)
def _parameters(scenario: Scenario) -> tuple[tuple[dict[str, Any], tuple[int, ...]], ...]:
    """Each combatant's fields and target list (indices), read once per scenario."""
    out = []
    for c in scenario.combatants:
        fields = {
            "name": c.name,
            "side": c.side,
            "group": c.group,
            "readiness": c["readiness"],
            "advantage": c["advantage"],
            "hold": c["hold"],
            "defend": c["defend"],
            "guard": c["guard"],
            "target": c["target"],
            "attack_share": c["attack_share"],
        }
        # Targets (docs/rules.md, common model), in scenario order: every opponent for
        # "random", the one opponent of that name, or the members of that count group.
        opponents = [j for j, o in enumerate(scenario.combatants) if o.side != c.side]
        if c["target"] == "random":
            targets = opponents
        else:
            named = [j for j in opponents if scenario.combatants[j].name == c["target"]]
            groups = [j for j in opponents if scenario.combatants[j].group == c["target"]]
            targets = named or groups
        assert targets, f"{c.name}: no target"
        out.append((fields, tuple(targets)))
    return tuple(out)


def _fighters(scenario: Scenario) -> list[Fighter]:
    params = _parameters(scenario)
    fighters = [Fighter(index=i, **fields) for i, (fields, _) in enumerate(params)]
    for f, (_, targets) in zip(fighters, params, strict=True):
        f.targets = [fighters[j] for j in targets]
    return fighters


class Round:
    """One round of play; ``play()`` returns its counts."""

    def __init__(
        self,
        scenario: Scenario,
        draws: Draws,
        no_hold: bool = False,
        log: list[tuple[Any, ...]] | None = None,
    ) -> None:
        assert scenario.system == "readiness"
        self.fighters = _fighters(scenario)
        self.chain = scenario.rules["order"] == "chain"
        self.prep = scenario.rules["prep"]
        self.draws = draws
        self.no_hold = no_hold
        self.log = log
        self.steps = 0  # actions taken so far this round

    # ------------------------------------------------------------------ helpers
    def _note(self, *event: Any) -> None:
        if self.log is not None:
            self.log.append(event)

    def opponents(self, f: Fighter) -> list[Fighter]:
        return [g for g in self.fighters if g.side != f.side]

    def opponents_have_dice(self, f: Fighter) -> bool:
        return any(g.unspent for g in self.opponents(f))

    def opponent_has_acted(self, f: Fighter) -> bool:
        return any(g.actions > 0 for g in self.opponents(f))

    def _roll_pool(self, count: int) -> list[int]:
        pool = getattr(self.draws, "roll_pool", None)
        if pool is not None:
            return list(pool(count, SIDES_OF_A_DIE))
        return [self.draws.roll(SIDES_OF_A_DIE) for _ in range(count)]

    # ------------------------------------------------------------------ R3
    def next_turn(self, candidates: list[Fighter]) -> Fighter:
        """R3: who of ``candidates`` (scenario order, each with dice) takes the next turn."""
        v = max(f.initiative for f in candidates)
        tied = [f for f in candidates if f.initiative == v]
        # T1: more unspent dice of value v
        if len(tied) > 1:
            most = max(f.unspent.count(v) for f in tied)
            tied = [f for f in tied if f.unspent.count(v) == most]
        # T2: the other dice of the round (spent and unspent) minus one die of value v
        if len(tied) > 1:
            best = tied[0]
            for f in tied[1:]:
                if compare_other_dice(f.other_dice(v), best.other_dice(v)) > 0:
                    best = f
            tied = [f for f in tied if compare_other_dice(f.other_dice(v), best.other_dice(v)) == 0]
        # T3: a fair random choice, below(k) indexing the tied in scenario order
        if len(tied) > 1:
            return tied[self.draws.below(len(tied))]
        return tied[0]

    # ------------------------------------------------------------------ R5 holds
    def wants_to_hold(self, f: Fighter) -> bool:
        """R5: the decision on the first turn of a combatant with a hold policy."""
        if not self.opponents_have_dice(f):
            return False  # rules-decisions: it would be released at once
        if f.hold == "until_attacked":
            return not f.attacked  # "unless it has already been attacked this round"
        if f.hold == "until_enemy_acts":
            return not self.opponent_has_acted(f)  # rules-decisions: the event has passed
        return False

    def release_exhausted(self) -> None:
        """R5: a holder whose every opponent has run out of dice rejoins R3."""
        for f in self.fighters:
            if f.state == HOLDING and not self.opponents_have_dice(f):
                f.state = NORMAL
                self._note("released", f.name)

    # ------------------------------------------------------------------ R4, R7
    def take_action(self, c: Fighter, by_holder: bool) -> None:
        """R4: c spends its highest die; the action is an attack with p = attack_share."""
        a = c.spend_highest()
        c.actions += 1
        if c.first_step is None:
            c.first_step = self.steps
        self.steps += 1
        share = c.attack_share
        if share >= 1:
            attack = True
        elif share <= 0:
            attack = False
        else:
            attack = self.draws.chance(chance_threshold(share))
        self._note("act", c.name, a, attack)
        if attack:
            m = len(c.targets)
            t = c.targets[self.draws.below(m)] if m > 1 else c.targets[0]
            if t.first_step is None:
                t.attacked_before_acting = True
            t.attacked = True
            self._note("attack", c.name, t.name)
            self.defend(t, a, by_holder)
            # R5 until_attacked: the holder defended (R7) and from now on acts normally
            if t.state == HOLDING and t.hold == "until_attacked":
                t.state = NORMAL
        # R5 until_enemy_acts: right after the first opponent action is resolved, every
        # such holder (c's opponents) declares before anyone else's next turn
        for h in self.opponents(c):
            if h.state == HOLDING and h.hold == "until_enemy_acts":
                h.state = RELEASED
                h.release_event = self.steps

    def defend(self, d: Fighter, a: int, by_holder: bool) -> None:
        """R7: at most one defense answers an attack of initiative ``a`` on ``d``."""
        policy = d.defend
        match = _HASTY_UP_TO.match(policy)
        # 1. d itself, if its highest die >= a (or the attacker held) and defend allows
        if d.unspent and policy != "never" and (by_holder or d.initiative >= a):
            die = d.spend_highest()
            d.defenses += 1
            self._note("defend", d.name, d.name, die, 0)
            return
        # 2. the first guarding ally in scenario order whose highest die >= a (or holder)
        for g in self.fighters:
            if g is d or not g.guard or g.side != d.side or not g.unspent:
                continue
            if by_holder or g.initiative >= a:
                die = g.spend_highest()
                g.defenses += 1  # a guard is never hasty
                self._note("defend", g.name, d.name, die, 0)
                return
        # 3. d itself, hasty, difficulty scale a - d (never against a holder's action)
        if d.unspent and not by_holder:
            scale = a - d.initiative
            if policy == "always" or (match is not None and scale <= int(match.group(1))):
                d.spend_highest()
                d.defenses += 1
                d.hasty_defenses += 1
                d.hasty_scale_total += scale
                self._note("defend", d.name, d.name, a - scale, scale)

    def play_released(self) -> None:
        """R5: released until_enemy_acts holders declare, one action each.

        Holders released by one event act first, in R3 order; holders released by
        their actions follow (rules-decisions).  Their actions count as a holder's:
        defenses against them are never hasty (R7).
        """
        while True:
            released = [f for f in self.fighters if f.state == RELEASED]
            if not released:
                return
            event = min(f.release_event for f in released)
            group = [f for f in released if f.release_event == event]
            with_dice = [f for f in group if f.unspent]
            if not with_dice:
                for f in group:  # nothing to declare: it simply stops holding
                    f.state = NORMAL
                continue
            c = self.next_turn(with_dice)
            c.state = NORMAL
            self.take_action(c, by_holder=True)

    # ------------------------------------------------------------------ the round
    def play(self) -> dict[tuple[str, str], int]:
        fighters = self.fighters
        # R1: every combatant rolls `readiness` d6, in scenario order
        rolled = [self._roll_pool(f.readiness) for f in fighters]
        for f, dice in zip(fighters, rolled, strict=True):
            f.dice = prepare(dice, f.advantage, self.prep)  # R2
            f.unspent = list(f.dice)
            # R8: after a stalemate nobody may hold (hold policies act as "never")
            f.state = FRESH if f.hold != "never" and not self.no_hold else NORMAL
            self._note("dice", f.name, tuple(f.dice))
        while True:
            self.release_exhausted()
            ready = [f for f in fighters if f.unspent and f.state in (FRESH, NORMAL)]
            if not ready:
                break  # R9: no unspent dice, or only holders nothing can release
            # R3 afresh before every turn (R6: several dice of one value give several
            # actions in a row only while it keeps winning R3)
            c = self.next_turn(ready)
            if c.state == FRESH:  # R5: its first turn
                c.state = NORMAL
                if self.wants_to_hold(c):
                    c.state = HOLDING
                    self._note("hold", c.name)
                    continue
            v = c.initiative
            self.take_action(c, by_holder=False)  # R4
            if self.chain:  # R3 chain: every die of value v, one action each
                while c.unspent and c.initiative == v:
                    self.take_action(c, by_holder=False)
            self.play_released()  # R5: after the turn (under chain: after the chain)
        return self.counts()

    def counts(self) -> dict[tuple[str, str], int]:
        fighters = self.fighters
        # R8: nobody took an action (each combatant got a turn and held)
        stalemate = all(f.actions == 0 for f in fighters)
        out: dict[tuple[str, str], int] = {}
        for f in fighters:
            out[(f.name, "first_action")] = int(f.first_step == 0)
            out[(f.name, "actions")] = f.actions
            out[(f.name, "no_action")] = int(f.actions == 0)
            out[(f.name, "attacked_before_acting")] = int(f.attacked_before_acting)
            out[(f.name, "defenses")] = f.defenses
            out[(f.name, "hasty_defenses")] = f.hasty_defenses
            out[(f.name, "hasty_scale_total")] = f.hasty_scale_total
            out[(f.name, "expired_dice")] = len(f.unspent)  # R5: held dice are lost
            for g in fighters:
                if g is not f:
                    before = f.first_step is not None and (
                        g.first_step is None or f.first_step < g.first_step
                    )
                    out[(f.name, f"acts_before.{g.name}")] = int(before)
            for k in range(f.readiness + 1):
                out[(f.name, f"actions_dist.{k}")] = int(f.actions == k)
        out[("", "stalemate")] = int(stalemate)
        return out


def play_round(
    scenario: Scenario,
    draws: Draws,
    no_hold: bool = False,
    log: list[tuple[Any, ...]] | None = None,
) -> dict[tuple[str, str], int]:
    """Play one round; its counts as ``{(combatant, metric): int}``.

    Scenario-wide counts have the combatant ``""``.  ``log``, if given, receives the
    events of the round (dice, holds, actions, attacks, defenses) in order.
    """
    return Round(scenario, draws, no_hold, log).play()


def play_rounds(
    scenario: Scenario, draws: Draws, n_rounds: int, no_hold_first: bool = False
) -> list[dict[tuple[str, str], int]]:
    """``n_rounds`` consecutive rounds, carrying R8 (a stalemate forbids holds next round)."""
    out = []
    no_hold = no_hold_first
    for _ in range(n_rounds):
        counts = play_round(scenario, draws, no_hold)
        out.append(counts)
        no_hold = bool(counts[("", "stalemate")])
    return out


def play_rounds_keyed(
    scenario: Scenario,
    key_words: Iterable[int],
    n_rounds: int,
    no_hold_first: bool = False,
    first: int = 0,
) -> tuple[list[dict[tuple[str, str], int]], list[list[int]]]:
    """Rounds ``first .. first + n_rounds - 1`` of a chunk, each from its own stream.

    Round ``r`` draws from ``NaiveStream.for_round(key_words, r)`` (the per-round
    streams of simkit/systems/stream.py), carrying R8 from round to round.  Returns
    the counts of every round and the six stream words each round left behind.
    """
    key = [int(w) for w in key_words][:4]
    out = []
    states = []
    no_hold = no_hold_first
    for r in range(first, first + n_rounds):
        stream = NaiveStream.for_round(key, r)
        counts = play_round(scenario, stream, no_hold)
        out.append(counts)
        states.append(stream.state())
        no_hold = bool(counts[("", "stalemate")])
    return out, states


def counts_from_row(row: np.ndarray, layout: Layout) -> dict[tuple[str, str], int]:
    """A kernel trace row (``readiness.trace``) as the twin's count dict."""
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
    for k, metric in enumerate(layout.scenario_counts):
        out[("", metric)] = int(row[layout.scenario_offset + k])
    return out


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    return repr(v)


def to_toml(data: dict[str, Any]) -> str:
    """A scenario dict as a TOML file (for failure reports)."""
    lines = ["[scenario]"]
    lines += [f"{k} = {_toml_value(v)}" for k, v in data["scenario"].items()]
    lines += ["", "[rules]"]
    lines += [f"{k} = {_toml_value(v)}" for k, v in data.get("rules", {}).items()]
    for c in data["combatant"]:
        lines += ["", "[[combatant]]"]
        lines += [f"{k} = {_toml_value(v)}" for k, v in c.items()]
    return "\n".join(lines) + "\n"
