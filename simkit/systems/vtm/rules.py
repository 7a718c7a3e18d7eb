"""System ``vtm``: the rules, revision 3 (docs/rules.md, V1-V7), as numba functions:
the only implementation of the rules.

``setup`` and ``play`` play one round into the kernel's memory ``m`` (memory.py) and its
count row ``y``; kernel.py calls them for every round ``trace`` plays and for every
round ``run_chunk`` plays one by one (lanes.py plays the simplest scenarios' rounds side
by side from the same draws, held equal to these by the tests).  The plain-Python twin
``tests/twins/vtm.py`` is the specification: every count, every draw and every event of
a round agree with it (tests/test_contract.py).
Cases the rules leave open are decided in docs/rules-decisions.md (section vtm).

A round
-------
``setup``   V1: a d10 per combatant in scenario order (``trace --dice``: drawn, then
            replaced); initiative = die + rating - wound_penalty (V7).  V2: positions
            by descending (initiative, rating, -index): a sorting network up to 4
            combatants, ranks by counting up to ``SMALL``, buckets of initiative
            beyond; equal (initiative, rating) share one *slot*
            (``tie = "simultaneous"``) or get a fair random order (``"random"``:
            ``below`` over the still tied, fastest tied group first).  V3
            (``declare``): ``known_declarations`` = opponents in strictly slower
            slots.  V6: each combatant's actions of its turn (1 under
            ``multi = "end"``, ``actions`` under ``"in_turn"``) and the numbers
            1..P_END of its end-of-round actions (a range: they are only ever taken
            or given up from the front, so W_END_NEXT says which are left).
``play``    moment by moment: each pass of its loop finds who acts in the next
            moment and plays it.  Slots in order; a slot's *turn group* (its members
            that do not delay) plays moments in which each member with a turn action
            left takes one.  V4: a delayer lets its turn pass while no opponent has
            acted; right after a moment, the delayers waiting for one of the sides that
            just acted are released (``_release``) and interrupt from a stack, the
            fastest on top, each playing its whole turn (with those it releases in
            turn) before the one below.  Delayers still waiting after the last slot
            take their turns, fastest slot first.  V6: ``"end"``: additional rounds
            k = 1, 2, ..., slot by slot, the members whose next end-of-round action is
            number k together; ``"in_turn"``: slot by slot, each its extra actions.
            One action: ``chance`` if 0 < attack_share < 1 (``SHARE_*`` codes: a
            share that rounds to threshold 0 still draws), ``below`` over its target
            list; V5: ``abort = "always"`` gives up its next action still to come
            (one of its turn, else its earliest end-of-round action),
            ``"before_acting"`` one of its turn actions while it has not acted yet.
            The movers of a moment are resolved in scenario order (positions of one
            slot); ``slot_abort = "allowed"`` [rev 3]: a mover not yet resolved
            (*pending*) gives up its action of this moment (W_ACTING becomes
            ``GAVE_UP - moment``: it is skipped, its first action not yet taken),
            one resolved a later one; ``"never"`` (revision 2): a target acting in
            the same moment defends nothing (simultaneous).
``finish``  (counts.py) what follows from the round as a whole: first action, no
            action, the distribution of actions, simultaneous, ``acts_before``.

Counts go into the round's row ``y`` through the layout's named slots
(``cs[c * N_COUNTS + ACTIONS]`` is ``Layout.count_slots[c, ACTIONS]``); the group
and side slots come from ``metrics.aggregate_round``.  With ``m[G_TRACE]`` set every
step also writes its event row (``EVENT_COLUMNS``; the kinds and their columns are
listed at ``E_ROLL``): the rows ``simkit trace`` prints.  Every helper takes data
pointers (``_address``), not arrays: passing arrays costs reference counting per call.
"""

from __future__ import annotations

import numpy as np

from simkit.systems.base import EVENT_WIDTH, NOBODY, SHARE_ALWAYS, SHARE_NEVER, TIE_RANDOM
from simkit.systems.stream import below, chance, roll
from simkit.systems.support import JIT, njit
from simkit.systems.vtm.counts import (
    ABORTS,
    ACTIONS,
    ATTACKED_BEFORE_ACTING,
    ATTACKS_MADE,
    ATTACKS_RECEIVED,
    DEFENDED,
    DEFENSES,
    KNOWN,
    N_COUNTS,
    UNDEFENDED,
)
from simkit.systems.vtm.memory import (
    ABORT_ALWAYS,
    ABORT_NEVER,
    DELAY_UNTIL_ENEMY_ACTS,
    G_BASE,
    G_BUCKETS,
    G_COUNT,
    G_DECLARE,
    G_DELAYERS,
    G_DELAYING,
    G_ENDS,
    G_EVENTS,
    G_FIXED,
    G_GROUPS,
    G_MOMENT,
    G_MULTI,
    G_N,
    G_ORDER,
    G_ROUND,
    G_SIDE_ACTS,
    G_SIDES,
    G_SIMULTANEOUS,
    G_SLOT_ABORT,
    G_SP,
    G_STACK,
    G_TARGETS,
    G_TIE,
    G_TOTAL,
    G_TRACE,
    MULTI_END,
    P_ABORT,
    P_BASE,
    P_BUCKET,
    P_DELAY,
    P_END,
    P_FIXED,
    P_KEY,
    P_SHARE,
    P_SIDE,
    P_STATIC,
    P_TCOUNT,
    P_TSTART,
    P_TURN,
    SLOT_ABORT_NEVER,
    W_ACTING,
    W_DELAYING,
    W_END_NEXT,
    W_FIRST,
    W_GROUP,
    W_HI,
    W_KEY,
    W_LO,
    W_TURN,
)

# Event kinds (column ``kind``); the other columns of each:
#   E_ROLL        actor, a = die, b = initiative                              (V1)
#   E_SLOT        actor = first member, a = slot index (0 = fastest); the members
#                 as a bit mask over combatant indices in other, b, c, d (64 each)  (V2)
#   E_KNOWN       actor, a = opponents whose declaration it knew               (V3)
#   E_DELAY       actor lets its turn pass                                     (V4)
#   E_RELEASE     actor stops waiting and takes its turn                       (V4)
#   E_ACT         actor, a = moment, b = 1 for an end-of-round action    (V2 / V6)
#   E_ATTACK      actor attacks other                                          (V2)
#   E_ABORT       actor gives up an action to defend: a = 0 an action of its turn,
#                 a = k its end-of-round action k                              (V5)
#   E_UNANSWERED  nobody defends the attack on actor; a = why (NO_DEFENSE_*)     (V5)
EVENT_KINDS = (
    "roll",
    "slot",
    "known",
    "delay",
    "release",
    "act",
    "attack",
    "abort",
    "unanswered",
)
# (numpy scalars, so that numba types them int64, not as literals that would each get a
# build of their own: one build of every function, whatever the call site passes)
E_ROLL, E_SLOT, E_KNOWN, E_DELAY, E_RELEASE, E_ACT, E_ATTACK, E_ABORT, E_UNANSWERED = (
    np.int64(k) for k in range(len(EVENT_KINDS))
)
EVENT_RULES = ("V1", "V2", "V3", "V4", "V4", "V2", "V2", "V5", "V5")  # E_ACT: V6 at the end
# why an attack goes unanswered (V5; column a of E_UNANSWERED)
NO_DEFENSE_POLICY, NO_DEFENSE_SAME_MOMENT, NO_DEFENSE_NOTHING_LEFT, NO_DEFENSE_HAS_ACTED = (
    np.int64(k) for k in (-1, -2, -3, -4)
)

D10 = 10
ZERO, ONE, TWO, THREE = (np.int64(k) for k in range(4))  # int64 arguments, not literals
NOT_A_COMBATANT = np.int64(NOBODY)
NO_SIDE, MIXED = np.int64(-2), np.int64(-1)  # the side of a moment's movers: none, several
NO_GROUP = np.int64(-1)
NONE = 1 << 40  # the moment of "no action yet"
GAVE_UP = np.int64(-2)  # W_ACTING = GAVE_UP - moment: its action of that moment went to a defense
# V2 sorts keys ((initiative + INIT_OFFSET) << KEY_SHIFT) | (rating << 8) | (255 - index):
# unique, descending = faster; ``key >> 8`` is the level (initiative, rating) of a tie.
INIT_OFFSET = 64  # initiative >= 1 - 20
KEY_SHIFT = 14  # 6 bits of rating (0..40), 8 bits of index
SMALL = 16  # up to this many combatants V2 ranks by counting, beyond by buckets


# ----------------------------------------------------------------------------- events
@njit(**JIT)
def _emit(ev, m, kind, actor, other, a, b):
    """One event row (only while tracing)."""
    k = m[G_EVENTS]
    ev[k * EVENT_WIDTH + 0] = m[G_ROUND]
    ev[k * EVENT_WIDTH + 1] = kind
    ev[k * EVENT_WIDTH + 2] = actor
    ev[k * EVENT_WIDTH + 3] = other
    ev[k * EVENT_WIDTH + 4] = a
    ev[k * EVENT_WIDTH + 5] = b
    ev[k * EVENT_WIDTH + 6] = 0
    ev[k * EVENT_WIDTH + 7] = 0
    m[G_EVENTS] = k + 1


@njit(**JIT)
def _emit_slot(ev, m, lo, hi, s):
    """The V2 event of the slot at positions [lo, hi): its members as a bit mask."""
    k = m[G_EVENTS]
    ev[k * EVENT_WIDTH + 0] = m[G_ROUND]
    ev[k * EVENT_WIDTH + 1] = E_SLOT
    ev[k * EVENT_WIDTH + 2] = m[G_ORDER + lo]  # the first member in scenario order
    ev[k * EVENT_WIDTH + 3] = 0
    ev[k * EVENT_WIDTH + 4] = s
    ev[k * EVENT_WIDTH + 5] = 0
    ev[k * EVENT_WIDTH + 6] = 0
    ev[k * EVENT_WIDTH + 7] = 0
    for q in range(lo, hi):
        c = m[G_ORDER + q]
        col = 3 if c < 64 else 4 + (c >> 6)
        ev[k * EVENT_WIDTH + col] |= np.int64(1) << (c & 63)
    m[G_EVENTS] = k + 1


# ----------------------------------------------------------------------------- V1-V3
@njit(**JIT)
def declare(m, y, cs, ev):
    """V3: declarations from the slowest slot up; each knows the opponents in strictly
    slower slots (not those sharing its slot)."""
    n = m[G_N]
    for q in range(m[G_SIDES]):
        m[G_COUNT + q] = 0  # combatants of each side in slower slots
    slower = 0
    hi = n
    while hi > 0:
        lo = m[W_LO + m[G_ORDER + hi - 1]]
        for q in range(lo, hi):
            c = m[G_ORDER + q]
            known = slower - m[G_COUNT + m[P_SIDE + c]]
            y[cs[c * N_COUNTS + KNOWN]] = known
            if m[G_TRACE] != 0:
                _emit(ev, m, E_KNOWN, c, NOT_A_COMBATANT, known, ZERO)
        for q in range(lo, hi):
            m[G_COUNT + m[P_SIDE + m[G_ORDER + q]]] += 1
        slower += hi - lo
        hi = lo


@njit(**JIT)
def _place(m, q, key):
    """The combatant of ``key`` at position q, in a slot of its own (V2)."""
    c = 255 - (key & 255)
    m[G_ORDER + q] = c
    m[W_LO + c] = q
    m[W_HI + c] = q + 1


@njit(**JIT)
def setup(st, m, y, cs, ev):
    """V1 roll, V2 order and slots, V3 declarations, V6 plans; the round's state."""
    n = m[G_N]
    tracing = m[G_TRACE] != 0
    fixed = m[G_FIXED] != 0
    for i in range(n):  # V1, in scenario order; V7: the wound penalty is in P_KEY
        die = roll(st, D10)
        if fixed and m[P_FIXED + i] > 0:
            die = m[P_FIXED + i]  # trace --dice: drawn, then replaced
        m[W_KEY + i] = (die << KEY_SHIFT) + m[P_KEY + i]
        if tracing:
            _emit(ev, m, E_ROLL, i, NOT_A_COMBATANT, die, die + m[P_BASE + i])
        # V6 plans; the round's state (W_ACTING and W_GROUP need no reset: moments
        # and group numbers never repeat within a call; W_DELAYING is 0 after a round)
        m[W_TURN + i] = m[P_TURN + i]
        m[W_FIRST + i] = NONE
    if m[G_ENDS] != 0:
        for i in range(n):
            m[W_END_NEXT + i] = 1
    if m[G_DELAYERS] != 0:
        for q in range(m[G_SIDES]):
            m[G_SIDE_ACTS + q] = 0
    # V2: descending keys
    ties = True  # some (initiative, rating) level may be shared: find the slots below
    if n <= 4:  # a sorting network in registers (missing keys: -1)
        x0 = m[W_KEY]
        x1 = m[W_KEY + 1]
        x2 = m[W_KEY + 2] if n > 2 else -1
        x3 = m[W_KEY + 3] if n > 3 else -1
        x0, x1 = max(x0, x1), min(x0, x1)
        x2, x3 = max(x2, x3), min(x2, x3)
        x0, x2 = max(x0, x2), min(x0, x2)
        x1, x3 = max(x1, x3), min(x1, x3)
        x1, x2 = max(x1, x2), min(x1, x2)
        ties = (x0 ^ x1) < 256 or (n > 2 and (x1 ^ x2) < 256) or (n > 3 and (x2 ^ x3) < 256)
        _place(m, ZERO, x0)
        _place(m, ONE, x1)
        if n > 2:
            _place(m, TWO, x2)
        if n > 3:
            _place(m, THREE, x3)
    elif n <= SMALL:  # ranks by counting (no branches), each in a slot of its own unless tied
        ties = False
        for i in range(n):
            k = m[W_KEY + i]
            r = 0
            same = 0
            for j in range(n):
                r += m[W_KEY + j] > k
                same += (m[W_KEY + j] ^ k) < 256  # the same level (itself included)
            m[G_ORDER + r] = i
            m[W_LO + i] = r
            m[W_HI + i] = r + 1
            ties |= same > 1
    else:  # buckets of initiative (highest first), each in the order of (rating, -index)
        buckets = m[G_BUCKETS]
        for v in range(buckets):
            m[G_COUNT + v] = 0
        for i in range(n):  # the die: (W_KEY - P_KEY) >> KEY_SHIFT
            m[G_COUNT + m[P_BUCKET + i] + ((m[W_KEY + i] - m[P_KEY + i]) >> KEY_SHIFT)] += 1
        start = 0
        for v in range(buckets - 1, -1, -1):
            c = m[G_COUNT + v]
            m[G_COUNT + v] = start
            start += c
        for q in range(n):
            i = m[P_STATIC + q]
            v = G_COUNT + m[P_BUCKET + i] + ((m[W_KEY + i] - m[P_KEY + i]) >> KEY_SHIFT)
            m[G_ORDER + m[v]] = i
            m[v] += 1
    # V2: slots; equal (initiative, rating) share one, or get a fair random order
    simultaneous = 0
    s = ZERO
    lo = ZERO
    if not ties:  # every combatant in a slot of its own, the ranks of their keys
        lo = n
        if tracing:
            for q in range(n):
                _emit_slot(ev, m, q, q + 1, q)
    while lo < n:
        level = m[W_KEY + m[G_ORDER + lo]] >> 8
        hi = lo + 1
        while hi < n and m[W_KEY + m[G_ORDER + hi]] >> 8 == level:
            hi += 1
        if hi - lo > 1 and m[G_TIE] == TIE_RANDOM:
            for q in range(lo, hi - 1):  # below over the still tied, in scenario order
                k = below(st, hi - q)
                c = m[G_ORDER + q + k]
                for u in range(q + k, q, -1):
                    m[G_ORDER + u] = m[G_ORDER + u - 1]
                m[G_ORDER + q] = c
            for q in range(lo, hi):
                c = m[G_ORDER + q]
                m[W_LO + c] = q
                m[W_HI + c] = q + 1
                if tracing:
                    _emit_slot(ev, m, q, q + 1, s)
                s += 1
        else:
            if hi - lo > 1:
                simultaneous = 1
            for q in range(lo, hi):
                c = m[G_ORDER + q]
                m[W_LO + c] = lo
                m[W_HI + c] = hi
            if tracing:
                _emit_slot(ev, m, lo, hi, s)
            s += 1
        lo = hi
    m[G_SIMULTANEOUS] = simultaneous
    if m[G_DECLARE] != 0:
        declare(m, y, cs, ev)
    m[G_BASE] = m[G_MOMENT]  # the round's moment 0
    m[G_SP] = 0
    m[G_DELAYING] = 0
    m[G_TOTAL] = 0


# ----------------------------------------------------------------------------- V2, V4-V6
@njit(**JIT)
def _push(m, lo, hi, group):
    """A turn group (positions [lo, hi), members with W_GROUP == group) on the stack."""
    top = G_STACK + 3 * m[G_SP]
    m[top] = lo
    m[top + 1] = hi
    m[top + 2] = group
    m[G_SP] += 1


@njit(**JIT)
def _release(side, m, ev):
    """V4: the delayers waiting for an opponent of ``side`` (every delayer if -1) stop
    waiting; their turn groups go on the stack, the fastest on top."""
    n = m[G_N]
    first_group = m[G_GROUPS]
    last_lo = -1
    for q in range(n):
        c = m[G_ORDER + q]
        if m[W_DELAYING + c] != 0 and (side < 0 or m[P_SIDE + c] != side):
            m[W_DELAYING + c] = 0
            m[G_DELAYING] -= 1
            if m[W_LO + c] != last_lo:
                last_lo = m[W_LO + c]
                m[G_GROUPS] += 1
            m[W_GROUP + c] = m[G_GROUPS] - 1
            if m[G_TRACE] != 0:
                _emit(ev, m, E_RELEASE, c, NOT_A_COMBATANT, ZERO, ZERO)
    last = -1
    for q in range(n - 1, -1, -1):
        c = m[G_ORDER + q]
        group = m[W_GROUP + c]
        if group >= first_group and group != last:
            last = group
            _push(m, m[W_LO + c], m[W_HI + c], group)


@njit(**JIT)
def play(st, m, y, cs, ev):
    """The normal actions (V2, V4, V5), then the end of the round (V6), one moment at
    a time: each pass of the loop finds who acts in the next moment (marked in
    W_ACTING, first actions noted) and plays it.

    The *turn group* is the slot taking its turn (or the delayers released at the end of
    the normal actions); delayers released by a moment interrupt it from the stack, the
    fastest on top, each playing its whole turn before the one below (V4)."""
    n = m[G_N]
    tracing = m[G_TRACE] != 0
    delayers = m[G_DELAYERS] != 0
    end = m[G_MULTI] == MULTI_END
    end_phase = False
    slot = ZERO  # the first position of the next slot to take its turn
    turn_lo = ZERO
    turn_hi = ZERO
    turn_group = NO_GROUP
    turn_more = False  # a member of the turn group may have a turn action left
    rounds = ZERO  # end phase: additional rounds ("end"), or 1 pass ("in_turn")
    k = ONE  # end phase: the additional round
    lo = ZERO
    hi = ZERO
    while True:
        moment = m[G_MOMENT]
        present = False
        of_turn = False  # the moment is the turn group's
        if end_phase:  # V6
            if hi >= n:  # the slots are done: the next additional round
                if k >= rounds:
                    break
                k += 1
                hi = ZERO
            lo = hi
            hi = m[W_HI + m[G_ORDER + lo]]
            for q in range(lo, hi):
                c = m[G_ORDER + q]
                if m[W_END_NEXT + c] <= m[P_END + c] and (not end or m[W_END_NEXT + c] == k):
                    m[W_ACTING + c] = moment
                    if m[W_FIRST + c] == NONE:
                        m[W_FIRST + c] = moment
                    present = True
            if not present:
                continue
        elif m[G_SP] > 0:  # a released group on the stack plays a moment, or is done
            top = G_STACK + 3 * (m[G_SP] - 1)
            lo = m[top]
            hi = m[top + 1]
            group = m[top + 2]
            for q in range(lo, hi):
                c = m[G_ORDER + q]
                if m[W_GROUP + c] == group and m[W_TURN + c] > 0:
                    m[W_ACTING + c] = moment
                    if m[W_FIRST + c] == NONE:
                        m[W_FIRST + c] = moment
                    present = True
            if not present:
                m[G_SP] -= 1
                continue
        elif turn_more:  # the turn group's next moment, if a member has an action left
            lo = turn_lo
            hi = turn_hi
            for q in range(lo, hi):
                c = m[G_ORDER + q]
                if m[W_GROUP + c] == turn_group and m[W_TURN + c] > 0:
                    m[W_ACTING + c] = moment
                    if m[W_FIRST + c] == NONE:  # it gave up its first moment's (V5)
                        m[W_FIRST + c] = moment
                    present = True
            turn_more = present
            if not present:
                continue
            of_turn = True
        elif slot < n:  # V2: the next slot takes its turn; V4: who delays
            lo = slot
            hi = m[W_HI + m[G_ORDER + lo]]
            slot = hi
            turn_group = m[G_GROUPS]
            for q in range(lo, hi):
                c = m[G_ORDER + q]
                if m[W_TURN + c] == 0:  # every action of its turn given up (V5)
                    continue
                if (
                    m[P_DELAY + c] == DELAY_UNTIL_ENEMY_ACTS
                    and m[G_TOTAL] == m[G_SIDE_ACTS + m[P_SIDE + c]]
                ):  # no opponent has acted yet
                    m[W_DELAYING + c] = 1
                    m[G_DELAYING] += 1
                    if m[G_TRACE] != 0:
                        _emit(ev, m, E_DELAY, c, NOT_A_COMBATANT, ZERO, ZERO)
                else:
                    m[W_GROUP + c] = turn_group
                    m[W_ACTING + c] = moment
                    m[W_FIRST + c] = moment  # nobody of a slot has acted before its turn
                    present = True
            if not present:
                continue
            m[G_GROUPS] = turn_group + 1
            turn_lo = lo
            turn_hi = hi
            of_turn = True
        elif m[G_DELAYING] > 0:  # V4: still waiting: last, before V6, fastest slot first
            q = 0
            while m[W_DELAYING + m[G_ORDER + q]] == 0:
                q += 1
            lo = m[W_LO + m[G_ORDER + q]]
            hi = m[W_HI + m[G_ORDER + q]]
            turn_group = m[G_GROUPS]
            m[G_GROUPS] = turn_group + 1
            for q in range(lo, hi):
                c = m[G_ORDER + q]
                if m[W_DELAYING + c] != 0:
                    m[W_DELAYING + c] = 0
                    m[G_DELAYING] -= 1
                    m[W_GROUP + c] = turn_group
                    m[W_ACTING + c] = moment
                    m[W_FIRST + c] = moment
                    if m[G_TRACE] != 0:
                        _emit(ev, m, E_RELEASE, c, NOT_A_COMBATANT, ZERO, ZERO)
            turn_lo = lo
            turn_hi = hi
            of_turn = True
        else:  # V6: "end": additional rounds 1, 2, ... through the slots; "in_turn":
            end_phase = True  # slot by slot, each its extra actions in a row
            if m[G_ENDS] == 0:
                break
            for i in range(n):
                if m[W_END_NEXT + i] <= m[P_END + i]:
                    rounds = max(rounds, m[P_END + i] if end else 1)
            if rounds == 0:
                break
            hi = ZERO
            continue
        # the moment: each member marked takes one action, in scenario order
        side = NO_SIDE
        more = False
        for q in range(lo, hi):
            c = m[G_ORDER + q]
            if m[W_ACTING + c] != moment:
                if m[W_ACTING + c] == GAVE_UP - moment:  # V5 [rev 3]: went to a defense
                    if end_phase:
                        more |= m[W_END_NEXT + c] <= m[P_END + c]
                    else:
                        more |= m[W_TURN + c] > 0
                continue
            if end_phase:
                m[W_END_NEXT + c] += 1
                more |= m[W_END_NEXT + c] <= m[P_END + c]
            else:
                m[W_TURN + c] -= 1
                more |= m[W_TURN + c] > 0
            s = m[P_SIDE + c]
            if side == NO_SIDE:
                side = s
            elif side != s:
                side = MIXED
            # one own action of c (V2, V6); an attack with p = attack_share (common
            # model: no draw for 0 or 1, a draw for any share between, however small)
            y[cs[c * N_COUNTS + ACTIONS]] += 1
            if delayers:  # V4: who has acted (only delayers ask)
                m[G_SIDE_ACTS + s] += 1
                m[G_TOTAL] += 1
            if tracing:
                _emit(
                    ev, m, E_ACT, c, NOT_A_COMBATANT, moment - m[G_BASE], ONE if end_phase else ZERO
                )
            code = m[P_SHARE + c]
            if code == SHARE_NEVER or (code != SHARE_ALWAYS and not chance(st, code)):
                continue
            t = m[G_TARGETS + m[P_TSTART + c] + below(st, m[P_TCOUNT + c])]  # its policy
            slots = t * N_COUNTS
            y[cs[c * N_COUNTS + ATTACKS_MADE]] += 1
            y[cs[slots + ATTACKS_RECEIVED]] += 1
            if tracing:
                _emit(ev, m, E_ATTACK, c, t, ZERO, ZERO)
            first = m[W_FIRST + t]
            # the movers of this moment have their first action; no branch: unpredictable
            y[cs[slots + ATTACKED_BEFORE_ACTING]] |= first == NONE
            # V5: the action t gives up (0: of its turn, k: end-of-round action k), or why none
            given = NO_DEFENSE_POLICY
            rule = m[P_ABORT + t]
            # V5 [rev 3]: a mover of this moment later in the order (the movers are one
            # slot's, resolved by index) has not resolved its action: it is in reserve
            pending = m[W_ACTING + t] == moment and t > c
            if rule != ABORT_NEVER:
                if pending and first == moment:
                    first = NONE  # (set when it was marked) it has not acted yet
                if m[W_ACTING + t] == moment and m[G_SLOT_ABORT] == SLOT_ABORT_NEVER:
                    given = NO_DEFENSE_SAME_MOMENT  # revision 2: simultaneous
                elif rule == ABORT_ALWAYS:  # its next action still to come
                    given = NO_DEFENSE_NOTHING_LEFT
                    if m[W_TURN + t] > 0:
                        m[W_TURN + t] -= 1
                        given = 0
                    elif m[W_END_NEXT + t] <= m[P_END + t]:
                        given = m[W_END_NEXT + t]
                        m[W_END_NEXT + t] += 1
                elif first != NONE:  # ABORT_BEFORE_ACTING (revision 1): not once it acted
                    given = NO_DEFENSE_HAS_ACTED
                elif m[W_TURN + t] > 0:  # an action of its turn
                    m[W_TURN + t] -= 1
                    given = 0
                else:
                    given = NO_DEFENSE_NOTHING_LEFT
            if given >= 0 and pending:  # its action of this moment given up (V5 [rev 3])
                m[W_ACTING + t] = GAVE_UP - moment
                if first == NONE:
                    m[W_FIRST + t] = NONE
                    y[cs[slots + ATTACKED_BEFORE_ACTING]] = 1
            if given < 0:
                y[cs[slots + UNDEFENDED]] += 1
                if tracing:
                    _emit(ev, m, E_UNANSWERED, t, NOT_A_COMBATANT, given, ZERO)
                continue
            y[cs[slots + ABORTS]] += 1
            y[cs[slots + DEFENSES]] += 1  # V5: a vtm defense is always an abort
            y[cs[slots + DEFENDED]] += 1
            if tracing:
                _emit(ev, m, E_ABORT, t, NOT_A_COMBATANT, given, ZERO)
            if m[W_DELAYING + t] != 0 and m[W_TURN + t] == 0:
                m[W_DELAYING + t] = 0  # V4: nothing left to delay
                m[G_DELAYING] -= 1
        m[G_MOMENT] = moment + 1
        if end_phase:
            if more and not end:
                hi = lo  # "in_turn": this slot again, until its extra actions are done
        else:
            if of_turn:
                turn_more = more
            if m[G_DELAYING] > 0:  # V4: right after an opponent's action
                _release(side, m, ev)
