"""The plain-Python twin of one ``readiness`` round under rules revision 3 (docs/rules.md, R1-R9).

A readable, deliberately slow restatement of the rules, to pin a numba kernel: both
consume the same draws and must produce the same per-round counts and the same
events.  Every combatant's dice are a list; R3's tie-breaks are computed literally
before every turn; the cases the rules leave open follow docs/rules-decisions.md
(section ``readiness``: revision 2, and revision 1 where revision 2 did not override it).

Rules read from the scenario: ``order`` ("dynamic" | "chain" | "chain_unbroken"),
``prep`` ("one_die" | "sixes" | "lowest"), ``holder_actions`` ("held_dice" |
"release_only"), ``release`` ("higher" | "any"); combatant
fields ``readiness, advantage, role, weakness, surprised, hold, defend, guard
("never" | "backup" | "always", or R7a's list of allies with guard_mode "backup" |
"always"; defend, guard and guard_mode also with ``+when_effective``, R7 [rev 3]),
target, attack_share, hit_chance``.  Revision 1 is the
special case ``prep`` "sixes" or "lowest", ``holder_actions = "release_only"``, no
guard "always", nobody surprised.  Revision 2 is ``order`` "dynamic" or
"chain_unbroken" and ``release = "any"``.

Draws
-----
From any ``enumerate.Draws``: ``roll(sides)``, ``below(n)`` and ``chance(threshold)``
(``naive_rng.NaiveStream``, or ``enumerate.PathDraws`` for exact probabilities).  If it
also has ``roll_pool(count, sides)``, R1 asks it for a whole pool at once (a pool is
a multiset; this changes nothing but speed).  The draw order is the one of
docs/rules-decisions.md, "The random stream", unchanged by revision 2 (which adds no
draw): R1 dice of combatant 0, then 1, ...; then, as the round is played, T3
``below(k)`` over the tied candidates in scenario order, ``chance(threshold)`` for an
action when 0 < attack_share < 1, and ``below(m)`` over the target list when the
action is an attack and m > 1, then (R7 [rev 3]) ``chance(threshold)`` for whether the
attack would take effect when the attacker's hit_chance < 1 (0 included), whoever the
target and whatever its state.  Nothing else draws (responses, holds and releases
are policy, not chance).

Events
------
``play_round(..., log=[])`` appends the round's events in the order they happen.
Each is a tuple ``(kind, rule, *fields)``; names are combatant names, dice are ints
1-6, dice tuples are sorted high to low unless said otherwise.

=============  ====  ===================================================================
kind           rule  fields and meaning
=============  ====  ===================================================================
no_hold        R8    ``()``: first event of a round that follows a stalemate; nobody
                     may hold in it.
roll           R1    ``(name, dice)``: its initiative dice in the order drawn; one per
                     combatant, in scenario order, before any other event but no_hold.
prep           R2    ``(name, before, after)``: its pool before and after preparation;
                     one per combatant with advantage > 0 (also if nothing changed), in
                     scenario order, after every roll event.
turn           R3    ``(name, value)``: R3 gives it the turn; ``value`` is its
                     initiative then.  Followed by either ``hold`` or its ``act``(s).
hold           R5    ``(name,)``: it holds on its first turn (after its ``turn``).
release        R5    ``(name, why)``: it stops holding; ``why`` is ``"attacked"``
                     (until_attacked, after the attack's responses), ``"enemy_acted"``
                     (until_enemy_acts, right after the opponent action, its responses
                     and any ``"attacked"`` release of that action), or
                     ``"opponents_out"`` (every opponent is out of dice; emitted before
                     the next ``turn``).  Several releases by one action: scenario order.
declare        R5    ``(name, value)``: a released until_enemy_acts holder declares its
                     action at initiative ``value`` (no ``turn`` event precedes it);
                     followed by its ``act``.  It comes right after the turn whose action
                     released it (under chain: after the whole chain); holders released
                     by one action declare in R3 order, then those released by their
                     actions.  A released holder without dice declares nothing.
rejoin         R5    ``(name, value, next)``: [rev 3, ``release = "higher"``] the released
                     holder picked to declare has ``value`` <= ``next``, the initiative
                     of the turn R3 would give next: it declares nothing and rejoins
                     R3 (in place of ``declare``).
run_broken     R3    ``(name, value)``: [rev 3, ``order = "chain"``] an action of its run
                     of ``value`` dice was answered and it still has a die of ``value``:
                     the run ends, R3 chooses afresh (after any ``declare``).
act            R4    ``(name, die, holder_action)``: it spends ``die`` (its highest) on
                     an action of its own; ``holder_action`` is True when the action is
                     a holder's action (R5): responses to it are never hasty.  An
                     ``act`` not immediately followed by an ``attack`` of the same
                     combatant is a non-attack action.
attack         R4    ``(attacker, target, initiative, by_holder)``: the action just
                     acted is an attack; ``initiative`` is the die of the ``act``.
                     Followed by its responses (target first, then guards in scenario
                     order) or by ``unanswered``.
response       R7    ``(responder, defended, die, kind, scale)``: ``responder`` spends
                     ``die`` answering the attack on ``defended``; ``kind`` is ``"self"``
                     (its own normal defense), ``"hasty"`` (its own hasty defense,
                     ``scale`` = initiative - die >= 1) or ``"guard"`` (for an ally);
                     ``scale`` is 0 unless hasty.  The rule is ``R7a`` for a guard
                     that names the allies it protects (``guard = ["Mira"]``).
unanswered     R7    ``(target,)``: nobody answered the attack just made on ``target``.
no_effect      R7    ``(attacker, target)``: [rev 3] the attack just made would not take
                     effect (drawn: hit_chance < 1); right after its ``attack``.
declined       R7    ``(responder, defended, attacker)``: [rev 3] ``responder`` was to
                     answer the attack (as target or guard, in the order of responses)
                     but its policy answers only an attack that would take effect.
expired        R5    ``(name, count)``: ``count`` > 0 dice still unspent (held) at the
                     end of the round are lost; scenario order, after the last action.
stalemate      R8    ``()``: last event of a round in which nobody acted (everyone held).
=============  ====  ===================================================================
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import zip_longest
from typing import TYPE_CHECKING, Any, NamedTuple

from enumerate import Draws
from naive_rng import NaiveStream

if TYPE_CHECKING:
    from simkit.scenario import Scenario

SIDES_OF_A_DIE = 6  # R1: d6
HIGHEST_SCALE = 5  # a hasty defense has scale a - d between 1 and 6 - 1
WOUND_OF_A_SECONDARY = 3  # R8

ORDERS = ("dynamic", "chain", "chain_unbroken")
RELEASES = ("higher", "any")
PREPS = ("one_die", "sixes", "lowest")
HOLDER_ACTIONS = ("held_dice", "release_only")
HOLDS = ("never", "until_attacked", "until_enemy_acts")
GUARDS = ("never", "backup", "always")
ROLES = ("hero", "secondary")

# Hold states of a combatant during a round (R5).
FRESH = "fresh"  # has a hold policy and has not had its first turn yet
HOLDING = "holding"  # holds: skipped by R3
RELEASED = "released"  # until_enemy_acts holder whose event came: declares next
NORMAL = "normal"  # acts whenever R3 gives it the turn


def chance_threshold(p: float) -> int:
    """The integer threshold of ``chance`` for probability ``p`` (the stream's rule)."""
    return round(p * 2**53)


WHEN_EFFECTIVE = "when_effective"


def when_effective(policy: str, alone: str = "always") -> tuple[str, bool]:
    """R7 [rev 3]: ``"X+when_effective"`` is policy X answering only an attack that would
    take effect; ``"when_effective"`` alone is ``alone`` ("always" for defend)."""
    if policy == WHEN_EFFECTIVE:
        return alone, True
    base, plus, modifier = policy.rpartition("+")
    if plus and modifier == WHEN_EFFECTIVE:
        return base, True
    return policy, False


def hasty_limit(defend: str) -> int | None:
    """R7 ``defend``: the largest hasty scale the policy accepts (None: never hasty)."""
    defend, _ = when_effective(defend)
    if defend == "always":
        return HIGHEST_SCALE
    if defend in ("never", "unless_hasty"):
        return None
    kind, _, number = defend.partition(":")
    assert kind == "hasty_up_to" and number.isdigit(), f"unknown defend policy {defend!r}"
    return int(number)


# --------------------------------------------------------------------------- R2
def raise_one_die(dice: list[int], advantage: int) -> list[int]:
    """R2 ``prep = "one_die"``: all pips on the one die that makes the best pool.

    If some die below 6 can reach 6, the lowest such die becomes 6; otherwise the
    highest die below 6 rises by the whole advantage; all sixes stay as they are.
    Equal dice are interchangeable (the pool is a multiset).  Returns high to low.
    """
    dice = sorted(dice)  # low to high
    if advantage > 0:
        can_reach_six = [k for k, x in enumerate(dice) if x < 6 and x + advantage >= 6]
        below_six = [k for k, x in enumerate(dice) if x < 6]
        if can_reach_six:
            lowest = min(can_reach_six, key=lambda k: dice[k])
            dice[lowest] = 6
        elif below_six:
            highest = max(below_six, key=lambda k: dice[k])
            dice[highest] += advantage  # stays below 6: no die could reach it
    return sorted(dice, reverse=True)


def spread_pips(dice: list[int], advantage: int, prep: str) -> list[int]:
    """R2 variants (revision 1): one pip at a time, never above 6; returns high to low.

    ``"sixes"``: each pip to the highest die still below 6; ``"lowest"``: each pip to
    the lowest die.
    """
    dice = list(dice)
    for _ in range(advantage):
        below_six = [k for k in range(len(dice)) if dice[k] < 6]
        if not below_six:
            break
        if prep == "sixes":
            k = max(below_six, key=lambda j: dice[j])
        else:
            k = min(range(len(dice)), key=lambda j: dice[j])
        dice[k] += 1
    return sorted(dice, reverse=True)


def prepare(dice: list[int], advantage: int, prep: str) -> list[int]:
    """R2: the pool after preparation with ``advantage`` pips, high to low."""
    assert prep in PREPS, f"unknown prep {prep!r}"
    if prep == "one_die":
        return raise_one_die(dice, advantage)
    return spread_pips(dice, advantage, prep)


# --------------------------------------------------------------------------- R3 T2
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


# --------------------------------------------------------------------------- combatants
@dataclass
class Fighter:
    """One combatant: its parameters and its state during the round."""

    index: int
    name: str
    side: str
    group: str
    readiness: int
    advantage: int
    wound: int  # R8: weakness for a hero, 3 for a secondary
    surprised: bool
    hold: str
    defend: str
    guard: str  # "never", "backup" or "always" (for a named guard: its guard_mode)
    target: str
    attack_share: float
    hit_chance: float  # R7 [rev 3]
    defend_when_effective: bool  # R7 [rev 3]: answers only an attack that would take effect
    guard_when_effective: bool
    targets: list[Fighter] = field(default_factory=list, repr=False)
    # R7a: the indices of the allies it protects; None: every ally (R7)
    protects: frozenset[int] | None = None
    # the round's state
    dice: list[int] = field(default_factory=list)  # every die of the round, after R2
    unspent: list[int] = field(default_factory=list)  # unspent dice, high to low
    state: str = NORMAL
    held: bool = False  # it held this round (R5: later actions may be a holder's)
    release_event: int = -1  # the action that released an until_enemy_acts holder
    attacked: bool = False
    first_step: int | None = None  # index of its first action among the round's actions
    # the round's counts
    actions: int = 0
    attacked_before_acting: bool = False
    defenses: int = 0
    guard_defenses: int = 0
    hasty_defenses: int = 0
    hasty_scale_total: int = 0
    hasty_scales: list[int] = field(default_factory=list)
    attacks_made: int = 0
    attacks_received: int = 0
    undefended: int = 0
    defended: int = 0
    hasty_only: int = 0
    hits: int = 0  # R7 [rev 3]
    wasted_defenses: int = 0

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


@lru_cache(maxsize=256)
def _parameters(scenario: Scenario) -> tuple[tuple[dict[str, Any], tuple[int, ...]], ...]:
    """Each combatant's fields and target list (indices), read once per scenario."""
    out = []
    for c in scenario.combatants:
        assert c["role"] in ROLES, c["role"]
        assert c["hold"] in HOLDS, c["hold"]
        # R7a: a list of ally names or count group names, guarding as guard_mode says;
        # R7 [rev 3]: the policy may end in "+when_effective"
        named = isinstance(c["guard"], tuple)
        guard, guard_we = when_effective(c["guard_mode"] if named else c["guard"], alone="")
        assert guard in GUARDS and not (guard_we and guard == "never"), c["guard"]
        protects = None
        if named:
            allies = [
                j
                for j, o in enumerate(scenario.combatants)
                if o.side == c.side
                and o is not c
                and (o.name in c["guard"] or (o.group in c["guard"] and o.group != o.name))
            ]
            protects = frozenset(allies)
        hasty_limit(c["defend"])  # validates the policy
        fields = {
            "name": c.name,
            "side": c.side,
            "group": c.group,
            "readiness": c["readiness"],
            "advantage": c["advantage"],
            # R8: a hero's mental wound is its weakness, a secondary's is 3
            "wound": c["weakness"] if c["role"] == "hero" else WOUND_OF_A_SECONDARY,
            "surprised": bool(c["surprised"]),
            "hold": c["hold"],
            "defend": c["defend"],
            "guard": guard,
            "protects": protects,
            "target": c["target"],
            "attack_share": c["attack_share"],
            "hit_chance": c["hit_chance"],
            "defend_when_effective": when_effective(c["defend"])[1],
            "guard_when_effective": guard_we,
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


# --------------------------------------------------------------------------- the round
class Round:
    """One round of play; ``play()`` returns its counts."""

    def __init__(
        self,
        scenario: Scenario,
        draws: Draws,
        no_hold: bool = False,
        log: list[tuple[Any, ...]] | None = None,
        dice: Mapping[int, Sequence[int]] | None = None,
    ) -> None:
        assert scenario.system == "readiness"
        rules = scenario.rules
        assert rules["order"] in ORDERS, rules["order"]
        assert rules["holder_actions"] in HOLDER_ACTIONS, rules["holder_actions"]
        assert rules["release"] in RELEASES, rules["release"]
        self.fighters = _fighters(scenario)
        self.chain = rules["order"] in ("chain", "chain_unbroken")
        self.chain_breaks = rules["order"] == "chain"  # [rev 3]: a response ends the run
        self.release_higher = rules["release"] == "higher"  # R5 [rev 3]
        self.prep = rules["prep"]
        self.held_dice = rules["holder_actions"] == "held_dice"
        self.draws = draws
        self.no_hold = no_hold
        self.log = log
        self.dice = dict(dice or {})  # combatant index -> fixed R1 faces
        self.steps = 0  # actions taken so far this round
        self.own_actions: list[tuple[Fighter, int]] = []  # (who, initiative), in order

    # ------------------------------------------------------------------ helpers
    def _note(self, *event: Any) -> None:
        if self.log is not None:
            self.log.append(event)

    def opponents(self, f: Fighter) -> list[Fighter]:
        return [g for g in self.fighters if g.side != f.side]

    def allies(self, f: Fighter) -> list[Fighter]:
        """Its side without itself, in scenario order."""
        return [g for g in self.fighters if g.side == f.side and g is not f]

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
            return False  # rev-1 decision: it would be released at once
        if f.hold == "until_attacked":
            return not f.attacked  # "unless it has already been attacked this round"
        if f.hold == "until_enemy_acts":
            return not self.opponent_has_acted(f)  # rev-1 decision: the event has passed
        return False

    def release_exhausted(self) -> None:
        """R5: a holder whose every opponent has run out of dice rejoins R3."""
        for f in self.fighters:
            if f.state == HOLDING and not self.opponents_have_dice(f):
                f.state = NORMAL
                self._note("release", "R5", f.name, "opponents_out")

    def is_holders_action(self, c: Fighter, v: int, on_release: bool) -> bool:
        """R5: is c's action with a die of value v a holder's action?

        The action declared on release always is.  Under ``holder_actions =
        "held_dice"`` [rev 2] so is every later action of a combatant that held this
        round, once any other combatant (ally or opponent) has taken an action of its
        own (not a defense) at an initiative lower than v: that die's turn had passed.
        Under ``"release_only"`` (revision 1) no other action is.
        """
        if on_release:
            return True
        if not self.held_dice or not c.held:
            return False
        return any(who is not c and initiative < v for who, initiative in self.own_actions)

    # ------------------------------------------------------------------ R4
    def take_action(self, c: Fighter, on_release: bool) -> bool:
        """R4: c spends its highest die; the action is an attack with p = attack_share.
        Returns whether anyone responded to it (R7; R3 [rev 3]: a chain ends)."""
        responded = False
        v = c.initiative
        by_holder = self.is_holders_action(c, v, on_release)
        c.spend_highest()
        c.actions += 1
        if c.first_step is None:
            c.first_step = self.steps
        self.steps += 1
        self.own_actions.append((c, v))
        self._note("act", "R4", c.name, v, by_holder)
        share = c.attack_share
        if share >= 1:
            attack = True
        elif share <= 0:
            attack = False
        else:
            attack = self.draws.chance(chance_threshold(share))
        if attack:
            m = len(c.targets)
            t = c.targets[self.draws.below(m)] if m > 1 else c.targets[0]
            c.attacks_made += 1
            t.attacks_received += 1
            if t.first_step is None:
                t.attacked_before_acting = True
            t.attacked = True
            self._note("attack", "R4", c.name, t.name, v, by_holder)
            # R7 [rev 3]: would it take effect if nobody answered it? One draw per attack,
            # after its target, only when hit_chance < 1 (0 included)
            effective = True
            if c.hit_chance < 1:
                effective = self.draws.chance(chance_threshold(c.hit_chance))
                if not effective:
                    self._note("no_effect", "R7", c.name, t.name)
            responded = self.respond(t, v, by_holder, c, effective)
            # R5 until_attacked: the holder has defended (R7), or could not because it is
            # surprised or out of dice; from now on it acts normally
            if t.state == HOLDING and t.hold == "until_attacked":
                t.state = NORMAL
                self._note("release", "R5", t.name, "attacked")
        # R5 until_enemy_acts: right after the first opponent action is resolved, every
        # such holder (c's opponents) declares before anyone else's next turn
        for h in self.opponents(c):
            if h.state == HOLDING and h.hold == "until_enemy_acts":
                h.state = RELEASED
                h.release_event = self.steps
                self._note("release", "R5", h.name, "enemy_acted")
        return responded

    # ------------------------------------------------------------------ R7
    def can_answer(self, g: Fighter, a: int, by_holder: bool) -> bool:
        """R7: g has a die >= a (any die against a holder's action) and is not surprised."""
        return bool(g.unspent) and not g.surprised and (by_holder or g.initiative >= a)

    def respond(
        self, d: Fighter, a: int, by_holder: bool, attacker: Fighter, effective: bool = True
    ) -> bool:
        """R7 [rev 2]: every response to an attack of initiative ``a`` on ``d``.

        Who responds is decided when the attack is declared, from the dice everyone
        has then; every response spends the responder's highest unspent die.  Returns
        whether anyone responded (normally, hastily or as a guard).

        R7 [rev 3]: if the attack would not take effect (``effective`` False), every
        responder so decided whose policy has ``+when_effective`` stands aside (a
        ``declined`` event); nobody takes its place (docs/rules-decisions.md).
        """
        # D's own response: normal with a die >= a (or against a holder's action),
        # otherwise hasty if its defend policy accepts the scale a - d.
        own = None
        if d.unspent and not d.surprised and d.defend != "never":
            if by_holder or d.initiative >= a:
                own = "self"
            else:
                limit = hasty_limit(d.defend)
                if limit is not None and a - d.initiative <= limit:
                    own = "hasty"
        defends_normally = own == "self"
        # Guards: the first able "backup" guard in scenario order steps in when D will
        # not defend normally, and then D makes no hasty defense; every able "always"
        # guard responds in addition, never stopping D's own response.
        # R7a: a guard that names the allies it protects answers only for them.
        guarding = [g for g in self.allies(d) if g.protects is None or d.index in g.protects]
        guards: list[Fighter] = []
        if not defends_normally:
            backups = [g for g in guarding if g.guard == "backup"]
            able = [g for g in backups if self.can_answer(g, a, by_holder)]
            if able:
                guards.append(able[0])
                if own == "hasty":
                    own = None
        guards += [g for g in guarding if g.guard == "always" and self.can_answer(g, a, by_holder)]
        guards.sort(key=lambda g: g.index)
        # Resolution: D first, then the guards in scenario order.
        normal_responses = 0
        if own is not None and not effective and d.defend_when_effective:
            self._note("declined", "R7", d.name, d.name, attacker.name)
            own = None
        wasted = 0 if effective else 1
        if own is not None:
            d.wasted_defenses += wasted
        if own == "self":
            die = d.spend_highest()
            d.defenses += 1
            normal_responses += 1
            self._note("response", "R7", d.name, d.name, die, "self", 0)
        elif own == "hasty":
            die = d.spend_highest()
            scale = a - die
            d.defenses += 1
            d.hasty_defenses += 1
            d.hasty_scale_total += scale
            d.hasty_scales.append(scale)
            self._note("response", "R7", d.name, d.name, die, "hasty", scale)
        answering = []
        for g in guards:
            if not effective and g.guard_when_effective:
                self._note("declined", "R7", g.name, d.name, attacker.name)
                continue
            answering.append(g)
            die = g.spend_highest()  # a guard is never hasty
            g.wasted_defenses += wasted
            g.defenses += 1
            g.guard_defenses += 1
            normal_responses += 1
            rule = "R7" if g.protects is None else "R7a"
            self._note("response", rule, g.name, d.name, die, "guard", 0)
        # the attack's outcome, counted on its target
        if normal_responses > 0:
            d.defended += 1
        elif own == "hasty":
            d.hasty_only += 1
        else:
            d.undefended += 1
            self._note("unanswered", "R7", d.name)
        if effective and normal_responses == 0:
            d.hits += 1  # R7 [rev 3]: it would take effect and met no normal response
        return own is not None or bool(answering)

    # ------------------------------------------------------------------ R5 releases
    def next_initiative(self) -> int:
        """R5 [rev 3]: the initiative of the turn R3 would give next: the highest die
        among combatants with dice that are not holding (nor released and yet to
        declare); 0 if there is none."""
        ready = [f for f in self.fighters if f.unspent and f.state in (FRESH, NORMAL)]
        return max((f.initiative for f in ready), default=0)

    def play_released(self) -> None:
        """R5: released until_enemy_acts holders declare, one action each.

        Holders released by one event act first, in R3 order; holders released by
        their actions follow (rev-1 decision).  The declared action is a holder's.
        Under ``release = "higher"`` [rev 3] the holder picked declares only if its
        highest die is strictly above ``next_initiative()``; otherwise it rejoins R3
        and acts at its natural place, and the next released holder is asked.
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
            if self.release_higher:
                # (c is now NORMAL: next_initiative must not count it)
                c.state = RELEASED
                nxt = self.next_initiative()
                c.state = NORMAL
                if c.initiative <= nxt:
                    self._note("rejoin", "R5", c.name, c.initiative, nxt)
                    continue
            self._note("declare", "R5", c.name, c.initiative)
            self.take_action(c, on_release=True)

    # ------------------------------------------------------------------ the round
    def play(self) -> dict[tuple[str, str], int]:
        fighters = self.fighters
        if self.no_hold:
            self._note("no_hold", "R8")
        # R1: every combatant rolls `readiness` d6, in scenario order, before anything else
        rolled = [self._roll_pool(f.readiness) for f in fighters]
        for i, faces in self.dice.items():  # drawn as usual, then replaced
            assert len(faces) == fighters[i].readiness and all(1 <= x <= 6 for x in faces)
            rolled[i] = [int(x) for x in faces]
        for f, dice in zip(fighters, rolled, strict=True):
            self._note("roll", "R1", f.name, tuple(dice))
        for f, dice in zip(fighters, rolled, strict=True):
            f.dice = prepare(dice, f.advantage, self.prep)  # R2
            f.unspent = list(f.dice)
            if f.advantage > 0:
                self._note("prep", "R2", f.name, tuple(sorted(dice, reverse=True)), tuple(f.dice))
            # R8: after a stalemate nobody may hold (hold policies act as "never")
            f.state = FRESH if f.hold != "never" and not self.no_hold else NORMAL
        while True:
            self.release_exhausted()
            ready = [f for f in fighters if f.unspent and f.state in (FRESH, NORMAL)]
            if not ready:
                break  # R9: no unspent dice, or only holders nothing can release
            # R3 afresh before every turn (R6: several dice of one value give several
            # actions in a row only while it keeps winning R3)
            c = self.next_turn(ready)
            v = c.initiative
            self._note("turn", "R3", c.name, v)
            if c.state == FRESH:  # R5: its first turn
                c.state = NORMAL
                if self.wants_to_hold(c):
                    c.state = HOLDING
                    c.held = True
                    self._note("hold", "R5", c.name)
                    continue
            responded = self.take_action(c, on_release=False)  # R4
            if self.chain:  # R3 chain: every die of value v, one action each ...
                while c.unspent and c.initiative == v:
                    if responded and self.chain_breaks:  # ... until one is answered [rev 3]
                        self._note("run_broken", "R3", c.name, v)
                        break
                    responded = self.take_action(c, on_release=False)
            self.play_released()  # R5: after the turn (under chain: after the chain)
        for f in fighters:
            if f.unspent:
                self._note("expired", "R5", f.name, len(f.unspent))  # held dice are lost
        # R8: nobody took a single action because every combatant held
        stalemate = all(f.actions == 0 for f in fighters)
        if stalemate:
            assert all(f.held for f in fighters)  # nothing else leaves every die unspent
            self._note("stalemate", "R8")
        return self.counts(stalemate)

    def counts(self, stalemate: bool) -> dict[tuple[str, str], int]:
        fighters = self.fighters
        out: dict[tuple[str, str], int] = {}
        for f in fighters:
            name = f.name
            out[(name, "first_action")] = int(f.first_step == 0)
            out[(name, "actions")] = f.actions
            out[(name, "no_action")] = int(f.actions == 0)
            out[(name, "attacked_before_acting")] = int(f.attacked_before_acting)
            out[(name, "defenses")] = f.defenses
            out[(name, "hasty_defenses")] = f.hasty_defenses
            out[(name, "hasty_scale_total")] = f.hasty_scale_total
            out[(name, "expired_dice")] = len(f.unspent)  # R5: held dice are lost
            out[(name, "guard_defenses")] = f.guard_defenses
            out[(name, "on_edge")] = int(stalemate)  # R8
            out[(name, "edge_wound")] = int(stalemate) * f.wound
            out[(name, "attacks_made")] = f.attacks_made
            out[(name, "attacks_received")] = f.attacks_received
            out[(name, "undefended")] = f.undefended
            out[(name, "defended")] = f.defended
            out[(name, "hasty_only")] = f.hasty_only
            for k in range(1, HIGHEST_SCALE + 1):
                out[(name, f"hasty_ge.{k}")] = sum(1 for s in f.hasty_scales if s >= k)
            out[(name, "hits")] = f.hits
            out[(name, "wasted_defenses")] = f.wasted_defenses
            for g in fighters:
                if g is not f:
                    before = f.first_step is not None and (
                        g.first_step is None or f.first_step < g.first_step
                    )
                    out[(name, f"acts_before.{g.name}")] = int(before)
            for k in range(f.readiness + 1):
                out[(name, f"actions_dist.{k}")] = int(f.actions == k)
        out[("", "stalemate")] = int(stalemate)
        return out


# --------------------------------------------------------------------------- entry points
Counts = dict[tuple[str, str], int]


def play_round(
    scenario: Scenario,
    draws: Draws,
    no_hold: bool = False,
    log: list[tuple[Any, ...]] | None = None,
    dice: Mapping[int, Sequence[int]] | None = None,
) -> Counts:
    """Play one round; its counts as ``{(combatant, metric): int}``.

    Scenario-wide counts have the combatant ``""``.  ``no_hold``: the round follows a
    stalemate (R8).  ``log``, if given, receives the round's events (module docstring).
    ``dice`` maps a combatant index to the R1 faces it rolls: its dice are drawn from
    ``draws`` as usual and then replaced, so no other draw moves.
    """
    return Round(scenario, draws, no_hold, log, dice).play()


def play_rounds(
    scenario: Scenario, draws: Draws, n_rounds: int, no_hold_first: bool = False
) -> list[Counts]:
    """``n_rounds`` consecutive rounds from one source of draws, carrying R8."""
    out = []
    no_hold = no_hold_first
    for _ in range(n_rounds):
        counts = play_round(scenario, draws, no_hold)
        out.append(counts)
        no_hold = bool(counts[("", "stalemate")])
    return out


class RoundRecord(NamedTuple):
    """One round of ``play_rounds_keyed`` (tests/contract_support.py)."""

    counts: Counts
    state: list[int]  # the six stream words the round left behind
    carry: int  # 1 after a stalemate: R8 forbids holds in the next round
    log: list[tuple[Any, ...]]


def play_rounds_keyed(
    scenario: Scenario,
    key_words: Iterable[int],
    n_rounds: int,
    first: int = 0,
    carry: int = 0,
    dice: Mapping[int, Sequence[int]] | None = None,
) -> list[RoundRecord]:
    """Rounds ``first .. first + n_rounds - 1`` of a chunk, each from its own stream.

    Round ``r`` draws from ``NaiveStream.for_round(key_words, r)``; ``carry`` 1 makes
    the first round a forced one (R8), and each round carries R8 to the next.  ``dice``
    (combatant index -> faces) fixes R1 faces in every round (``play_round``).
    """
    key = [int(w) for w in key_words][:4]
    out = []
    for r in range(first, first + n_rounds):
        stream = NaiveStream.for_round(key, r)
        log: list[tuple[Any, ...]] = []
        counts = play_round(scenario, stream, bool(carry), log, dice)
        carry = counts[("", "stalemate")]
        out.append(RoundRecord(counts, stream.state(), carry, log))
    return out


def after_opening(scenario: Scenario) -> Scenario:
    """R8a: the scenario as rounds 2.. of a fight play it: a combatant with ``opening``
    has no advantage (R2) and is not surprised (R7) after the first round."""
    import dataclasses

    combatants = []
    for c in scenario.combatants:
        if c.params.get("opening", False):
            params = type(c.params)({**c.params, "advantage": 0, "surprised": False})
            c = dataclasses.replace(c, params=params)
        combatants.append(c)
    return dataclasses.replace(scenario, combatants=tuple(combatants))


def play_fight(scenario: Scenario, draws: Draws, fight_rounds: int) -> list[Counts]:
    """R8a: one fight of ``fight_rounds`` rounds from one source of draws: the first
    round as the scenario says, from no carry; the later ones with ``opening`` taken
    away (``after_opening``), R8 carrying from each round to the next."""
    later = after_opening(scenario)
    out = []
    no_hold = False
    for j in range(fight_rounds):
        counts = play_round(scenario if j == 0 else later, draws, no_hold)
        out.append(counts)
        no_hold = bool(counts[("", "stalemate")])
    return out


def play_fights_keyed(
    scenario: Scenario,
    key_words: Iterable[int],
    n_rounds: int,
    fight_rounds: int,
    dice: Mapping[int, Sequence[int]] | None = None,
) -> list[RoundRecord]:
    """Rounds 0 .. n_rounds - 1 of a chunk as fights of ``fight_rounds`` rounds (R8a),
    round ``r`` from ``NaiveStream.for_round(key_words, r)`` as in ``play_rounds_keyed``:
    a fight's first round from no carry, its other rounds ``after_opening`` with the
    carry of the round before."""
    later = after_opening(scenario)
    out: list[RoundRecord] = []
    carry = 0
    for r in range(n_rounds):
        opening = r % fight_rounds == 0
        (record,) = play_rounds_keyed(
            scenario if opening else later, key_words, 1, r, 0 if opening else carry, dice
        )
        carry = record.carry
        out.append(record)
    return out


COUNT_NAMES = (
    "first_action",
    "actions",
    "no_action",
    "attacked_before_acting",
    "defenses",
    "hasty_defenses",
    "hasty_scale_total",
    "expired_dice",
    "guard_defenses",
    "on_edge",
    "edge_wound",
    "attacks_made",
    "attacks_received",
    "undefended",
    "defended",
    "hasty_only",
    *(f"hasty_ge.{k}" for k in range(1, HIGHEST_SCALE + 1)),
    "hits",
    "wasted_defenses",
)


def count_keys(scenario: Scenario) -> list[tuple[str, str]]:
    """Every count of a round, as the keys ``play_round`` returns."""
    keys = []
    for c in scenario.combatants:
        keys += [(c.name, m) for m in COUNT_NAMES]
        keys += [(c.name, f"acts_before.{o.name}") for o in scenario.combatants if o is not c]
        keys += [(c.name, f"actions_dist.{k}") for k in range(c["readiness"] + 1)]
    return [*keys, ("", "stalemate")]


def fold_log(scenario: Scenario, log: list[tuple[Any, ...]], carry: int = 0) -> Counts:
    """The counts of one round rebuilt from its event log alone, checking the log.

    Replays the round: every die spent must be the spender's highest unspent die
    (R4/R5/R7); every ``act`` follows a ``turn`` or ``declare`` of the same combatant
    at the same value (or, under ``order = "chain"``, its previous act at that value);
    a ``declare`` only by a released holder; responses only to the attack just made;
    the round starts with ``no_hold`` exactly when ``carry`` is 1.  Raises
    AssertionError on an inconsistent log.
    """
    names = [c.name for c in scenario.combatants]
    derived: Counts = {k: 0 for k in count_keys(scenario)}
    pools: dict[str, list[int]] = {}
    chain = scenario.rules["order"] in ("chain", "chain_unbroken")
    current: tuple[str, int, str] | None = None  # (name, value, "turn" | "declare")
    attack: dict[str, Any] | None = None
    first_acts: list[str] = []
    attacked_early: set[str] = set()
    last_act: tuple[str, int, bool] | None = None
    holding: set[str] = set()  # held and not yet released
    to_declare: set[str] = set()  # released until_enemy_acts holders
    assert (bool(log) and log[0] == ("no_hold", "R8")) == bool(carry), (carry, log[:1])

    def close_attack() -> None:
        nonlocal attack
        if attack is None:
            return
        target, kinds = attack["target"], attack["kinds"]
        if attack["effective"] and not any(k in ("self", "guard") for k in kinds):
            derived[(target, "hits")] += 1  # R7 [rev 3]
        if any(k in ("self", "guard") for k in kinds):
            derived[(target, "defended")] += 1
        elif kinds == ["hasty"]:
            derived[(target, "hasty_only")] += 1
        else:
            assert kinds == [] and attack["unanswered"], attack
            derived[(target, "undefended")] += 1
        attack = None

    def spend(name: str, die: int) -> None:
        assert pools[name] and die == max(pools[name]), (name, die, pools[name])
        pools[name].remove(die)

    for event in log:
        kind, rule = event[0], event[1]
        assert rule.startswith("R"), event
        if kind not in ("response", "unanswered", "no_effect", "declined"):
            close_attack()
        if kind == "roll":
            _, _, name, dice = event
            pools[name] = sorted(dice, reverse=True)
        elif kind == "prep":
            _, _, name, before, after = event
            assert tuple(pools[name]) == before and len(after) == len(before)
            pools[name] = list(after)
        elif kind == "turn":
            _, _, name, value = event
            assert value == max(pools[name])
            current = (name, value, "turn")
        elif kind == "declare":
            _, _, name, value = event
            assert value == max(pools[name]) and name in to_declare
            to_declare.remove(name)
            current = (name, value, "declare")
        elif kind == "rejoin":
            _, _, name, value, nxt = event
            assert scenario.rules["release"] == "higher" and name in to_declare
            assert value == max(pools[name]) and 0 < value <= nxt, event
            to_declare.remove(name)
        elif kind == "run_broken":
            _, _, name, value = event
            assert scenario.rules["order"] == "chain" and current == (name, value, "turn")
            assert max(pools[name]) == value, event
            current = None
        elif kind == "hold":
            assert current is not None and current[0] == event[2] and current[2] == "turn"
            holding.add(event[2])
            current = None
        elif kind == "release":
            _, _, name, why = event
            assert name in holding and why in ("attacked", "enemy_acted", "opponents_out")
            holding.remove(name)
            if why == "enemy_acted" and pools[name]:
                to_declare.add(name)
        elif kind == "act":
            _, _, name, die, holder = event
            assert current is not None and current[:2] == (name, die), (current, event)
            if current[2] == "declare":
                assert holder is True
            if current[2] == "declare" or not chain:
                current = None
            spend(name, die)
            derived[(name, "actions")] += 1
            if name not in first_acts:
                first_acts.append(name)
            last_act = (name, die, holder)
        elif kind == "attack":
            _, _, attacker, target, initiative, by_holder = event
            assert last_act == (attacker, initiative, by_holder)
            derived[(attacker, "attacks_made")] += 1
            derived[(target, "attacks_received")] += 1
            if target not in first_acts:
                attacked_early.add(target)
            attack = {
                "attacker": attacker,
                "target": target,
                "a": initiative,
                "kinds": [],
                "unanswered": False,
                "effective": True,
            }
        elif kind == "no_effect":  # R7 [rev 3]: right after its attack
            _, _, attacker, target = event
            assert attack is not None and attack["effective"] and not attack["kinds"], event
            assert (attack["attacker"], attack["target"]) == (attacker, target), event
            attack["effective"] = False
        elif kind == "declined":  # R7 [rev 3]: a when_effective responder stands aside
            _, _, responder, defended, attacker = event
            assert attack is not None and not attack["effective"], event
            assert (attack["attacker"], attack["target"]) == (attacker, defended), event
        elif kind == "response":
            _, _, responder, defended, die, rkind, scale = event
            assert attack is not None and attack["target"] == defended
            spend(responder, die)
            derived[(responder, "defenses")] += 1
            if not attack["effective"]:
                derived[(responder, "wasted_defenses")] += 1
            if rkind == "guard":
                assert responder != defended and scale == 0
                derived[(responder, "guard_defenses")] += 1
            elif rkind == "hasty":
                assert responder == defended and scale == attack["a"] - die >= 1
                derived[(responder, "hasty_defenses")] += 1
                derived[(responder, "hasty_scale_total")] += scale
                for k in range(1, scale + 1):
                    derived[(responder, f"hasty_ge.{k}")] += 1
            else:
                assert rkind == "self" and responder == defended and scale == 0
            attack["kinds"].append(rkind)
        elif kind == "unanswered":
            assert attack is not None and attack["target"] == event[2] and not attack["kinds"]
            attack["unanswered"] = True
        elif kind == "expired":
            _, _, name, count = event
            assert count == len(pools[name]) > 0
            derived[(name, "expired_dice")] = count
        elif kind == "stalemate":
            derived[("", "stalemate")] = 1
        else:
            assert kind == "no_hold" and event == log[0], event
    close_attack()
    assert all(not pools[n] for n in to_declare)  # a released holder declares if it can
    assert all(derived[(n, "expired_dice")] == len(pools[n]) for n in holding)
    assert all(not pools[n] or derived[(n, "expired_dice")] == len(pools[n]) for n in names)
    for i, name in enumerate(names):
        derived[(name, "first_action")] = int(first_acts[:1] == [name])
        derived[(name, "no_action")] = int(derived[(name, "actions")] == 0)
        derived[(name, "attacked_before_acting")] = int(name in attacked_early)
        for other in names:
            if other != name:
                before = name in first_acts and (
                    other not in first_acts or first_acts.index(name) < first_acts.index(other)
                )
                derived[(name, f"acts_before.{other}")] = int(before)
        for k in range(scenario.combatants[i]["readiness"] + 1):
            derived[(name, f"actions_dist.{k}")] = int(derived[(name, "actions")] == k)
        derived[(name, "on_edge")] = derived[("", "stalemate")]
        c = scenario.combatants[i]
        wound = c["weakness"] if c["role"] == "hero" else WOUND_OF_A_SECONDARY  # R8
        derived[(name, "edge_wound")] = derived[(name, "on_edge")] * wound
    return derived


# --------------------------------------------------------------------------- random scenarios
RANDOM_DEFENDS = (
    "always",
    "never",
    "unless_hasty",
    "hasty_up_to:0",
    "hasty_up_to:1",
    "hasty_up_to:3",
    "hasty_up_to:999",
)
RANDOM_SHARES = (0.0, 1.0, 1.0, 1.0, 0.5, 0.25, 0.8, 1e-17)
RANDOM_GUARDS = ("never", "never", "backup", "always", True, False)
# R7 [rev 3]: policies that answer only an attack that would take effect, and hit chances
# (1e-17: a threshold of 0, drawn and never true)
RANDOM_WHEN_EFFECTIVE_DEFENDS = (
    "when_effective",
    "always+when_effective",
    "unless_hasty+when_effective",
    "hasty_up_to:1+when_effective",
)
RANDOM_WHEN_EFFECTIVE_GUARDS = ("backup+when_effective", "always+when_effective")
RANDOM_HIT_CHANCES = (0.0, 0.25, 0.5, 0.5, 0.9, 1e-17, 1.0)


def random_scenario(rng: random.Random) -> Scenario:
    """A valid random scenario (validated like a file): 2-4 sides, 2-8 combatants with
    ``count`` groups, readiness 1-6 (now and then up to 20), every rule and policy
    variant reachable: order, prep, holder_actions; hold, defend (hasty_up_to:N),
    guard (also as true/false, and R7a's lists of allies with guard_mode), surprised,
    role, weakness, advantage (up to 9 and beyond 5), attack_share (0, 1, fractions, a
    tiny one), targets by name or group."""
    from simkit.scenario import scenario_from_dict

    n_sides = rng.choice((2, 2, 2, 3, 4))
    total = rng.randint(n_sides, 8)
    sides = [f"side{k}" for k in range(n_sides)]
    entries: list[dict[str, Any]] = []
    made = 0
    while made < total:
        room = total - made - max(0, n_sides - len(entries) - 1)
        count = 1 if rng.random() < 0.6 else rng.randint(1, max(1, min(3, room)))
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
    holders = rng.random() < 0.7  # some scenarios without any hold policy (the fast path)
    for e in entries:
        e["readiness"] = rng.randint(1, 6) if rng.random() < 0.93 else rng.randint(7, 20)
        if rng.random() < 0.4:
            e["advantage"] = rng.choice((1, 2, 3, 5, 7, 9))
        if rng.random() < 0.3:
            e["role"] = "secondary"
        elif rng.random() < 0.5:
            e["weakness"] = rng.randint(0, 3)
        if holders:
            e["hold"] = rng.choice(HOLDS)
        if rng.random() < 0.8:
            e["defend"] = rng.choice(RANDOM_DEFENDS)
        if rng.random() < 0.7:
            e["guard"] = rng.choice(RANDOM_GUARDS)
        # R7a: a list of allies (names, count groups, its own group) now and then
        own = {m[0] for m in members if m[1] == e["name"]}
        allies = [m[0] for m in members if m[2] == e["side"] and m[0] not in own]
        allies += sorted({m[1] for m in members if m[2] == e["side"] and m[0] != m[1]})
        if allies and rng.random() < 0.3:
            e["guard"] = rng.sample(allies, rng.randint(1, min(2, len(allies))))
            if rng.random() < 0.6:
                e["guard_mode"] = rng.choice(("backup", "always"))
        if rng.random() < 0.15:
            e["surprised"] = True
        e["attack_share"] = rng.choice(RANDOM_SHARES)
        if rng.random() < 0.5:
            e["hit_chance"] = rng.choice(RANDOM_HIT_CHANCES)
        if rng.random() < 0.3:
            e["defend"] = rng.choice(RANDOM_WHEN_EFFECTIVE_DEFENDS)
        if rng.random() < 0.2:
            if isinstance(e.get("guard"), list) and rng.random() < 0.5:
                e["guard_mode"] = rng.choice(RANDOM_WHEN_EFFECTIVE_GUARDS)  # R7a with rev 3
            else:
                e["guard"] = rng.choice(RANDOM_WHEN_EFFECTIVE_GUARDS)
                e.pop("guard_mode", None)
        opponents = [m for m in members if m[2] != e["side"]]
        groups = sorted({m[1] for m in opponents if m[0] != m[1]})
        r = rng.random()
        if r < 0.2:
            e["target"] = rng.choice(opponents)[0]
        elif r < 0.4 and groups:
            e["target"] = rng.choice(groups)
        if e["count"] == 1:
            del e["count"]
    rules: dict[str, Any] = {}
    for rule, choices in (
        ("order", ORDERS),
        ("prep", PREPS),
        ("holder_actions", HOLDER_ACTIONS),
        ("release", RELEASES),
    ):
        if rng.random() < 0.8:
            rules[rule] = rng.choice(choices)
    data = {
        "scenario": {"name": "random", "system": "readiness", "seed": rng.randrange(1 << 30)},
        "rules": rules,
        "combatant": entries,
    }
    return scenario_from_dict(data, source="<random readiness scenario>")
