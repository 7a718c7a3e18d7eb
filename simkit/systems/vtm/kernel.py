"""System ``vtm``: the kernel of the rules, revision 3 (docs/rules.md, V1-V7), written once.

``compile_scenario`` flattens a validated scenario into one int64 memory vector and
a plan of how its counts are summed; ``run_chunk`` plays rounds and adds their sums;
``trace`` plays the same rounds on the same code (``_setup``, ``_play``, ``finish``)
and returns every round's complete row, its events and the stream state it left
behind.  One shortcut: rounds of the simplest scenarios (one action each, no delay or
abort) are played side by side by ``_lanes`` for ``run_chunk`` (section "lanes"), held
equal to the rules' code by the tests.  The plain-Python twin ``tests/twins/vtm.py`` is
the specification: every count, every draw and every event of a round agree with it
(tests/test_contract.py).
Cases the rules leave open are decided in docs/rules-decisions.md (section vtm).

A round
-------
``_setup``  V1: a d10 per combatant in scenario order (``trace --dice``: drawn, then
            replaced); initiative = die + rating - wound_penalty (V7).  V2: positions
            by descending (initiative, rating, -index): a sorting network up to 4
            combatants, ranks by counting up to ``SMALL``, buckets of initiative
            beyond; equal (initiative, rating) share one *slot*
            (``tie = "simultaneous"``) or get a fair random order (``"random"``:
            ``below`` over the still tied, fastest tied group first).  V3
            (``_declare``): ``known_declarations`` = opponents in strictly slower
            slots.  V6: each combatant's actions of its turn (1 under
            ``multi = "end"``, ``actions`` under ``"in_turn"``) and the numbers
            1..P_END of its end-of-round actions (a range: they are only ever taken
            or given up from the front, so W_END_NEXT says which are left).
``_play``   moment by moment: each pass of its loop finds who acts in the next
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

Sums
----
How the counts are summed is counts.py: the slot plan (constant, alias, coded and
flushed slots), the plan vector ``run_chunk`` reads every round (its ``H_*`` header),
``finish``, and the decoder through which counting.py's dense histogram of the three
outcome codes is turned back into sums at the end of ``_run_chunk`` (``_EXPAND``:
``counts.code_expander`` with V3, ``_declare``, from here).  The
kernel's memory vector ``m`` (its offsets, the rules' codes, ``_address``) is
memory.py.

Where the plan needs nothing but the three codes and the scenario makes every round a
function of its first sixteen byte draws (one action each, no delay or abort, ties
sharing a slot, attack_share 0 or 1: ``H_LANES``), ``_lanes`` plays many rounds side by
side and gives their codes; a round it cannot finish from those draws is played as
above (section "lanes" below).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simkit.metrics import Layout, Sums
from simkit.systems.base import (
    EVENT_WIDTH,
    MAX_COMBATANTS,
    NOBODY,
    SHARE_ALWAYS,
    SHARE_NEVER,
    TIE_CODES,
    TIE_RANDOM,
    code_of,
    share_code,
)
from simkit.systems.counting import (
    aggregate_round,
    close_chunk,
    dense_add,
    first_reason,
    new_dense_histogram,
)
from simkit.systems.stream import (
    BYTE_LIMIT,
    LANE_BYTES,
    RECIPROCAL,
    STATE_WORDS,
    below,
    canonical_state,
    chance,
    first_outputs,
    lane_byte,
    lane_roll,
    roll,
    round_start_lazy,
)
from simkit.systems.support import JIT, njit, unmanaged
from simkit.systems.vtm.counts import (
    ABORTS,
    ACTIONS,
    ATTACKED_BEFORE_ACTING,
    ATTACKS_MADE,
    ATTACKS_RECEIVED,
    COUNTS,
    DEFENDED,
    DEFENSES,
    F_SLOTS,
    H_BEFORE,
    H_BINARY,
    H_CODED,
    H_DECLARE,
    H_DST,
    H_END,
    H_FINISH,
    H_FLUSH,
    H_LANES,
    H_OP,
    H_PAIRS,
    H_RANKED,
    H_SRC,
    H_VALUE_KINDS,
    H_VALUE_SLOTS,
    H_VALUE_WEIGHTS,
    H_ZERO_ALL,
    HIST_MAX,
    KNOWN,
    N_COUNTS,
    SCENARIO_COUNTS,
    UNDEFENDED,
    CodedSums,
    code_expander,
    compile_counts,
    families,
    finish,
)
from simkit.systems.vtm.memory import (
    ABORT_ALWAYS,
    ABORT_CODES,
    ABORT_NEVER,
    DELAY_CODES,
    DELAY_NEVER,
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
    G_SIMULTANEOUS_SLOT,
    G_SLOT_ABORT,
    G_SP,
    G_STACK,
    G_TARGETS,
    G_TIE,
    G_TOTAL,
    G_TRACE,
    MULTI_CODES,
    MULTI_END,
    P_ABORT,
    P_BASE,
    P_BUCKET,
    P_DELAY,
    P_DIST,
    P_END,
    P_FIXED,
    P_KEY,
    P_RATING,
    P_SHARE,
    P_SIDE,
    P_STATIC,
    P_TCOUNT,
    P_TSTART,
    P_TURN,
    SLOT_ABORT_CODES,
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
    _address,
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


@dataclass(frozen=True)
class Compiled:
    """A vtm scenario as flat arrays for the kernel, and how its slots are summed."""

    layout: Layout
    m: np.ndarray  # int64: the kernel's memory, parameters and target lists filled in
    cs: np.ndarray  # int64 [n, K]: Layout.count_slots
    events_per_round: int  # at most this many events in a round
    plan: np.ndarray  # int64: what run_chunk does every round (counts.H_* header, then lists)
    coded_sums: CodedSums  # what run_chunk sums after the chunk (counts.py)
    lanes_off: str | None = None  # why _lanes cannot serve the scenario (LANE_REASONS)


# ----------------------------------------------------------------------------- compile
def compile_scenario(scenario, layout: Layout, plain: bool = False) -> Compiled:
    """Flatten a validated vtm scenario; sort its slots into constant, coded, flushed.

    ``plain``: every slot flushed every round, no codes, constants or aliases (tests
    hold the sums of both plans equal)."""
    n = len(scenario.combatants)
    if n > MAX_COMBATANTS:
        raise ValueError(f"at most {MAX_COMBATANTS} combatants, got {n}")
    if tuple(layout.counts) != COUNTS or tuple(layout.scenario_counts) != SCENARIO_COUNTS:
        raise ValueError("layout: not the counts of the vtm kernel")
    rules = scenario.rules
    tie = code_of(TIE_CODES, rules["tie"], "rules.tie")
    multi = code_of(MULTI_CODES, rules["multi"], "rules.multi")
    slot_abort = code_of(SLOT_ABORT_CODES, rules["slot_abort"], "rules.slot_abort")
    sides = scenario.sides
    targets: list[int] = []
    total: list[int] = []
    rows: dict[int, list[int]] = {}
    for i, c in enumerate(scenario.combatants):
        declared, extra = int(c["actions"]), int(c["extra_actions"])
        rating = int(c["rating"])
        base = rating - int(c["wound_penalty"])  # V1, V7
        tl = scenario.targets(i)
        values = {
            P_RATING: rating,
            P_BASE: base,
            P_KEY: ((base + INIT_OFFSET) << KEY_SHIFT) | (rating << 8) | (255 - i),
            P_SIDE: sides.index(c.side),
            # V6: actions of its turn, and how many come at the end of the round
            P_TURN: 1 if multi == MULTI_END else declared,
            P_END: declared - 1 + extra if multi == MULTI_END else extra,
            P_DELAY: code_of(DELAY_CODES, c["delay"], f"{c.name}.delay"),
            P_ABORT: code_of(ABORT_CODES, c["abort"], f"{c.name}.abort"),
            P_SHARE: share_code(float(c["attack_share"])),
            P_TSTART: len(targets),
            P_TCOUNT: len(tl),
        }
        for row, value in values.items():
            rows.setdefault(row, []).append(value)
        targets.extend(tl)
        total.append(declared + extra)
    m = np.zeros(G_TARGETS + len(targets), dtype=np.int64)
    for row, values in rows.items():
        m[row : row + len(values)] = values
    # V2 beyond SMALL: buckets of initiative, filled in the order of (rating, -index)
    base = np.array(rows[P_BASE], dtype=np.int64)
    low = int(base.min()) + 1
    m[P_STATIC : P_STATIC + n] = sorted(range(n), key=lambda i: (-rows[P_RATING][i], i))
    m[P_BUCKET : P_BUCKET + n] = base - low
    m[P_DIST : P_DIST + n] = layout.dist_offsets
    m[G_TARGETS:] = targets
    m[W_ACTING : W_ACTING + n] = -1  # never reset: moments and group numbers only grow
    m[W_GROUP : W_GROUP + n] = -1
    m[W_END_NEXT : W_END_NEXT + n] = 1
    m[G_N] = n
    m[G_SIDES] = len(sides)
    m[G_TIE] = tie
    m[G_MULTI] = multi
    m[G_SLOT_ABORT] = slot_abort
    m[G_BUCKETS] = int(base.max()) - low + D10 + 1
    m[G_SIMULTANEOUS_SLOT] = layout.scenario_index("simultaneous")
    m[G_DELAYERS] = int(any(v != DELAY_NEVER for v in rows[P_DELAY]))  # V4 in play
    m[G_ENDS] = int(any(v > 0 for v in rows[P_END]))  # V6 in play

    def lanes(f: dict, per_round: int) -> tuple[list[int] | str, str | None]:
        kinds = _lane_kinds(layout, f["value_slots"])
        return kinds, why_not_lanes(f, per_round, kinds, rows, tie, plain)

    plan, coded_sums, lanes_off = compile_counts(
        scenario, layout, rows[P_ABORT], rows[P_SHARE], rows[P_DELAY], total, tie, plain, lanes
    )
    return Compiled(
        layout=layout,
        m=m,
        cs=np.ascontiguousarray(layout.count_slots, dtype=np.int64),
        events_per_round=5 * n + 3 * sum(total),
        plan=plan,
        coded_sums=coded_sums,
        lanes_off=lanes_off,
    )


def _draws(rows: dict[int, list[int]], i: int) -> bool:
    """Whether i's action draws a byte for its target: it always attacks, from several."""
    return rows[P_SHARE][i] == SHARE_ALWAYS and rows[P_TCOUNT][i] > 1


def _lane_kinds(layout: Layout, value_slots: np.ndarray) -> list[int] | str:
    """The values code's counts as the lanes compute them (``H_VALUE_KINDS``: 2 i + the
    count's place in LANE_CARRIES), or the name of the first count they do not carry."""
    kinds = []
    cs = layout.count_slots
    for slot in value_slots.tolist():
        i, m = (int(x[0]) for x in np.nonzero(cs == slot))
        if COUNTS[m] not in LANE_CARRIES:
            return COUNTS[m]
        kinds.append(2 * i + LANE_CARRIES.index(COUNTS[m]))
    return kinds


def why_not_lanes(
    f: dict, per_round: int, kinds: list[int] | str, rows: dict[int, list[int]], tie: int,
    plain: bool,
) -> str | None:  # fmt: skip
    """None if ``_lanes`` can play the scenario's rounds side by side, else the name of
    the first reason it cannot (LANE_REASONS).  ``f``: the slot plan's fields
    (``counts.SlotPlan.fields``); ``per_round``: aggregation entries and pair products the
    plan needs every round; ``kinds``: ``_lane_kinds``."""
    n = len(rows[P_TURN])
    return first_reason(
        (
            ("plain_plan", not plain),
            ("too_many_combatants", n <= HIST_MAX),
            ("delay_or_abort", f["ranked"]),
            ("random_tie", tie != TIE_RANDOM),
            ("uncarried_count", not isinstance(kinds, str)),
            ("counts_flushed", not f["flush"].size),  # e.g. too many values for one code
            (
                "summed_every_round",
                not (f["declare"] or f["finish"] or f["zero_all"] or f["binary"].size)
                and per_round == 0,
            ),
            ("several_actions", all(t == 1 for t in rows[P_TURN]) and not any(rows[P_END])),
            ("share_between_0_and_1", all(v in (SHARE_NEVER, SHARE_ALWAYS) for v in rows[P_SHARE])),
            ("no_targets", min(rows[P_TCOUNT]) >= 1),
            ("too_many_draws", n + sum(_draws(rows, i) for i in range(n)) <= LANE_BYTES),
        )
    )


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
def _declare(m, y, cs, ev):
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
def _setup(st, m, y, cs, ev):
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
        _declare(m, y, cs, ev)
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
def _play(st, m, y, cs, ev):
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


# ----------------------------------------------------------------------------- lanes
# Rounds side by side (``H_LANES``): where every combatant takes exactly one action at
# its turn, nobody delays or aborts, ties share a slot and attack_share is 0 or 1, a
# round is a function of its first sixteen byte draws (V1 dice, then one target draw
# per attack from several targets, in the order of the actions), cut from its first two
# outputs (stream.first_outputs).  ``_lanes`` plays FAST_LANES such rounds at once,
# every loop along the rounds (vectorised), and gives each the codes ``_run_chunk``
# histograms.  A round it cannot finish from those bytes (a die rejecting two bytes in
# a row, a rejected target byte, more than sixteen bytes) is played by ``_setup`` and
# ``_play`` as usual.  tests/test_vtm_kernel.py holds both ways equal.
FAST_LANES = 256
# The counts of the values code a lane computes (``H_VALUE_KINDS``: 2 i + the place here);
# a values code with any other count turns the lanes off ("uncarried_count").
LANE_CARRIES = ("attacked_before_acting", "attacks_received")
# Why ``_lanes`` cannot serve a scenario (``why_not_lanes``, ``Compiled.lanes_off``).
LANE_REASONS = (
    "plain_plan", "too_many_combatants", "delay_or_abort", "random_tie", "uncarried_count",
    "counts_flushed", "summed_every_round", "several_actions", "share_between_0_and_1",
    "no_targets", "too_many_draws",
)  # fmt: skip
(L_OK, L_SLOT, L_VALUE, L_POS, L_ACC, L_DICE_END, L_KEY) = range(7)  # rows of the lanes
L_LO = L_KEY + HIST_MAX  # then a row per combatant: V2 key, slot start, target
L_TARGET = L_LO + HIST_MAX
L_ROWS = L_TARGET + HIST_MAX


@njit(**JIT)
def _lanes(key, r0, m, pl, words, second, lanes):
    """Rounds r0 .. r0 + FAST_LANES - 1 (``H_LANES``): in row L_OK of ``lanes`` 1 where a
    round could be played from its first sixteen byte draws, and then its slot code
    (L_SLOT) and values code (L_VALUE) as ``_run_chunk`` computes them."""
    n = m[G_N]
    first_outputs(key, r0, words, second)
    ok = lanes[L_OK]
    pos = lanes[L_POS]
    for b in range(FAST_LANES):
        ok[b] = 1
        pos[b] = 0
    for i in range(n):  # V1: i's d10
        die_key = lanes[L_KEY + i]
        base = m[P_KEY + i]
        for b in range(FAST_LANES):
            die_key[b] = (lane_roll(words, second, b, pos, ok, D10) << KEY_SHIFT) + base
    dice_end = lanes[L_DICE_END]
    for b in range(FAST_LANES):
        dice_end[b] = pos[b]
    for i in range(n):  # V2: a slot starts after every higher (initiative, rating) level
        lo = lanes[L_LO + i]
        ki = lanes[L_KEY + i]
        for b in range(FAST_LANES):
            lo[b] = 0
        for j in range(n):
            kj = lanes[L_KEY + j]
            for b in range(FAST_LANES):
                lo[b] += (kj[b] >> 8) > (ki[b] >> 8)
    for c in range(n):  # its target: the byte after the dice and the earlier actions' draws
        target = lanes[L_TARGET + c]
        count = m[P_TCOUNT + c]
        start = G_TARGETS + m[P_TSTART + c]
        if m[P_SHARE + c] == SHARE_NEVER or count == 1:
            t = m[start] if m[P_SHARE + c] != SHARE_NEVER else NOT_A_COMBATANT
            for b in range(FAST_LANES):
                target[b] = t
            continue
        kc = lanes[L_KEY + c]
        for b in range(FAST_LANES):
            pos[b] = dice_end[b]
        for j in range(n):  # actions come in descending key order
            if m[P_SHARE + j] == SHARE_ALWAYS and m[P_TCOUNT + j] > 1:
                kj = lanes[L_KEY + j]
                for b in range(FAST_LANES):
                    pos[b] += kj[b] > kc[b]
        limit = BYTE_LIMIT[count]
        reciprocal = RECIPROCAL[count]
        last = start + count - 1  # the list as six values (count <= HIST_MAX)
        t0, t1, t2 = m[start], m[min(start + 1, last)], m[min(start + 2, last)]
        t3, t4, t5 = m[min(start + 3, last)], m[min(start + 4, last)], m[min(start + 5, last)]
        for b in range(FAST_LANES):  # below(count), then the list's entry: selects, no gather
            p = pos[b]
            x = lane_byte(words, second, b, p & (LANE_BYTES - 1))
            ok[b] &= (p < LANE_BYTES) & (x < limit)
            e = x - ((x * reciprocal) >> 32) * count
            t = t0 if e == 0 else t1
            t = t if e < 2 else t2
            t = t if e < 3 else t3
            t = t if e < 4 else t4
            target[b] = t if e < 5 else t5
    code = lanes[L_SLOT]
    for b in range(FAST_LANES):
        code[b] = 0
    scale = 1
    for i in range(n):
        lo = lanes[L_LO + i]
        for b in range(FAST_LANES):
            code[b] += lo[b] * scale
        scale *= n
    value = lanes[L_VALUE]
    acc = lanes[L_ACC]
    for b in range(FAST_LANES):
        value[b] = 0
    start = pl[H_VALUE_KINDS]
    for k in range(start, pl[H_END]):  # attacks_received or attacked_before_acting of j
        j = pl[k] >> 1
        weight = pl[pl[H_VALUE_WEIGHTS] + k - start]
        for b in range(FAST_LANES):
            acc[b] = 0
        lo_j = lanes[L_LO + j]
        for c in range(n):
            target = lanes[L_TARGET + c]
            lo_c = lanes[L_LO + c]
            if pl[k] & 1:
                for b in range(FAST_LANES):
                    acc[b] += target[b] == j
            else:  # attacked from an earlier slot: j had not acted (a slot acts at once)
                for b in range(FAST_LANES):
                    acc[b] |= (target[b] == j) & (lo_j[b] > lo_c[b])
        for b in range(FAST_LANES):
            value[b] += acc[b] * weight


@njit(**JIT)
def _run_chunk(
    key, first, n_rounds, memory, row, count_slots, plan, s1, s2, sx, codes, block, state,
    before, family, const_slots, const_values, scratch,
):  # fmt: skip
    """Play rounds ``first ..`` and add them up as ``plan`` says: the slots flushed
    every round, the per-round pair products, and the codes (``codes``: one dense
    histogram of the first-action, V2 slot and values codes, expanded into ``s1`` and
    ``s2`` after the rounds through ``family``, each code's ``counts.families``) or
    else the ``acts_before`` block.  ``scratch``: the
    expansion's unused sums (sl, sx, pair slots, tot)."""
    pv = unmanaged(plan)
    y_array = unmanaged(row)
    src = pv[pv[H_SRC] : pv[H_DST]]
    dst = pv[pv[H_DST] : pv[H_OP]]
    op = pv[pv[H_OP] : pv[H_PAIRS]]
    key = _address(key)
    m = _address(memory)
    y = _address(row)
    cs = _address(count_slots)
    st = _address(state)
    pl = _address(plan)
    a1 = _address(s1)
    a2 = _address(s2)
    ax = _address(sx)
    hc = _address(codes)
    bl = _address(block)
    n = m[G_N]
    size = row.size
    counts_end = n * N_COUNTS
    dist_start = counts_end + n * n
    finishing = pl[H_FINISH] != 0
    zero_all = pl[H_ZERO_ALL] != 0
    coded = pl[H_CODED] != 0
    ranked = pl[H_RANKED] != 0
    n_codes = n**n if coded else 0  # hc: first-action codes, slot codes, values codes
    m[G_TRACE] = 0
    m[G_DECLARE] = pl[H_DECLARE]
    words = np.empty(FAST_LANES, np.uint64)
    second = np.empty(FAST_LANES, np.uint64)
    lanes = np.zeros((L_ROWS, FAST_LANES), np.int64)
    ok = lanes[L_OK]
    end = first + n_rounds
    r0 = first
    while r0 < end:
        side_by_side = pl[H_LANES] != 0 and end - r0 >= FAST_LANES
        if side_by_side:
            _lanes(key, r0, m, pl, words, second, lanes)
        k_rounds = FAST_LANES if side_by_side else 1
        for b in range(k_rounds):
            if side_by_side and ok[b] != 0:
                dense_add(hc, n_codes + lanes[L_SLOT, b], ONE)
                dense_add(hc, lanes[L_SLOT, b], ONE)  # ranked
                dense_add(hc, 2 * n_codes + lanes[L_VALUE, b], ONE)
                continue
            r = r0 + b
            if zero_all:
                for k in range(counts_end):
                    y[k] = 0
                for k in range(dist_start, size):
                    y[k] = 0
            else:  # only the counts of the values code are read
                for k in range(pl[H_VALUE_SLOTS], pl[H_VALUE_WEIGHTS]):
                    y[pl[k]] = 0
            round_start_lazy(st, key, r)
            m[G_ROUND] = r
            _setup(st, m, y, cs, m)
            _play(st, m, y, cs, m)
            if finishing:
                finish(m, y, cs, pl, pl[H_BEFORE], pl[H_VALUE_SLOTS])
            if src.size > 0:
                aggregate_round(y_array, src, dst, op)
            if coded:
                code = 0
                scale = 1
                for i in range(n):
                    code += m[W_LO + i] * scale
                    scale *= n
                dense_add(hc, n_codes + code, ONE)
                if not ranked:
                    code = 0
                    scale = 1
                    for i in range(n):
                        fi = m[W_FIRST + i]
                        rank = 0
                        for j in range(n):
                            rank += m[W_FIRST + j] < fi
                        code += rank * scale
                        scale *= n
                dense_add(hc, code, ONE)
                code = 0
                for k in range(pl[H_VALUE_SLOTS], pl[H_VALUE_WEIGHTS]):
                    code += y[pl[k]] * pl[k + pl[H_VALUE_WEIGHTS] - pl[H_VALUE_SLOTS]]
                dense_add(hc, 2 * n_codes + code, ONE)
            else:  # acts_before, into its block (int32: a chunk has at most 2**18 rounds)
                for i in range(n):
                    fi = m[W_FIRST + i]
                    row_i = i * n
                    for j in range(n):
                        bl[row_i + j] += fi < m[W_FIRST + j]
            for k in range(pl[H_FLUSH], pl[H_BINARY]):
                v = y[pl[k]]
                a1[pl[k]] += v
                a2[pl[k]] += v * v
            for k in range(pl[H_BINARY], pl[H_SRC]):
                a1[pl[k]] += y[pl[k]]
            for k in range(pl[H_PAIRS], pl[H_BEFORE], 3):
                ax[pl[k]] += y[pl[k + 1]] * y[pl[k + 2]]
        r0 += k_rounds
    if coded:  # every code met, back into the sums of the slots that follow from it
        m[G_TRACE] = 0
        m[G_BASE] = 0  # first-action codes: ranks as moments
        sl, none_x, none_a, none_b, tot = scratch
        cs_flat = count_slots.reshape(-1)
        for c in range(3):
            f = family[c]
            slots = f[f[F_SLOTS] : f[F_SLOTS + 1]]
            if slots.size:
                for k in range(const_slots.size):
                    y[const_slots[k]] = const_values[k]
                h = codes[c * n_codes : (c + 1) * n_codes if c < 2 else codes.size]
                ctx = (memory, cs_flat, before, f)
                _EXPAND(h, True, ctx, row, slots, s1, s2, sl, none_x, none_a, none_b, tot)


# the expansion loop of the three codes (counts.code_expander, through V3 here)
_EXPAND = code_expander(_declare)


@njit(**JIT)
def _trace_rounds(
    key, first, n_rounds, memory, row, count_slots, events, before, agg_src, agg_dst, agg_op,
    rows, states,
):  # fmt: skip
    """Rounds ``first ..`` with their events (rows of ``events``, counted in
    m[G_EVENTS]), complete rows and the stream state each round leaves."""
    state = np.zeros(STATE_WORDS, np.uint64)
    st = _address(state)
    k4 = _address(key)
    m = _address(memory)
    y = _address(row)
    cs = _address(count_slots)
    ev = _address(events)
    bf = _address(before)
    m[G_TRACE] = 1
    m[G_DECLARE] = 1
    for k in range(n_rounds):
        for j in range(row.size):
            y[j] = 0
        round_start_lazy(st, k4, first + k)
        m[G_ROUND] = first + k
        _setup(st, m, y, cs, ev)
        _play(st, m, y, cs, ev)
        finish(m, y, cs, bf, ZERO, before.size)
        aggregate_round(row, agg_src, agg_dst, agg_op)
        for j in range(row.size):
            rows[k, j] = y[j]
        words = canonical_state(state)
        for j in range(words.size):
            states[k, j] = words[j]


# ----------------------------------------------------------------------------- wrappers
def _words(key: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(key[:4], dtype=np.uint64)


def _row_and_memory(compiled: Compiled) -> tuple[np.ndarray, np.ndarray]:
    """A fresh memory vector and row for one call (calls may run in parallel)."""
    return compiled.m.copy(), np.zeros(compiled.layout.size, np.int64)


def run_chunk(
    compiled: Compiled, key: np.ndarray, n_rounds: int, sums: Sums, first: int = 0
) -> None:
    """Play rounds ``first .. first + n_rounds - 1`` of the chunk whose key is ``key``
    (each on its own stream) and add their sums to ``sums``: exactly those of
    ``flush_cycle(row, 1, ...)`` after every round's complete row."""
    lay = compiled.layout
    n = lay.n
    m, y = _row_and_memory(compiled)
    s1 = np.zeros(lay.size, np.int64)
    s2 = np.zeros(lay.size, np.int64)
    pa, pb = lay.pair_indices()
    sx = np.zeros(pa.size, np.int64)
    cd = compiled.coded_sums
    n_codes = n**n if cd.coded else 0
    codes = new_dense_histogram(n_codes, n_codes, max(cd.values, 1))
    small = n_rounds < 1 << 31  # int32 holds the acts_before block of any real chunk
    block = np.zeros(0 if cd.coded else n * n, np.int32 if small else np.int64)
    before = np.arange(lay.before_offset, lay.before_offset + n * n, dtype=np.int64)
    none = np.zeros(0, np.int64)  # no cross sums: those are summed every round
    _run_chunk(
        _words(key), first, n_rounds, m, y, compiled.cs, compiled.plan, s1, s2, sx, codes, block,
        np.zeros(STATE_WORDS, np.uint64), before, families(cd), cd.const_slots, cd.const_values,
        (np.zeros(lay.size, np.int64), none, none, none, np.zeros(3, np.int64)),
    )  # fmt: skip
    if not cd.coded:  # acts_before: 0 or 1
        s1[before] = block
        s2[before] = block
    close_chunk(
        sums, n_rounds, s1, s2, sx, compiled.plan[compiled.plan[H_BINARY] : compiled.plan[H_SRC]],
        cd.const_slots, cd.const_values, cd.alias_slots, cd.alias_of, pa, pb,
    )  # fmt: skip


TRACE_EVENTS = 1 << 20  # event rows a batch of traced rounds may hold


def trace(
    compiled: Compiled,
    key: np.ndarray,
    n_rounds: int,
    first: int = 0,
    dice: dict[int, list[int]] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rounds ``first ..`` on the kernel's own code: (rows, events, states).

    ``dice`` maps a combatant index to the face its d10 shows in every round (drawn as
    usual, then replaced: V1)."""
    lay = compiled.layout
    n = lay.n
    m, y = _row_and_memory(compiled)
    for i, faces in (dice or {}).items():
        if not (0 <= int(i) < n and len(faces) == 1 and 1 <= int(faces[0]) <= D10):
            raise ValueError(f"dice: combatant {i} rolls one d10, got {faces!r}")
        m[P_FIXED + int(i)] = int(faces[0])
        m[G_FIXED] = 1
    before = np.arange(lay.before_offset, lay.before_offset + n * n, dtype=np.int64)
    rows = np.zeros((n_rounds, lay.size), np.int64)
    states = np.zeros((n_rounds, 6), np.uint64)
    bound = compiled.events_per_round
    batch = max(1, TRACE_EVENTS // bound)
    events = []
    for start in range(0, n_rounds, batch):
        count = min(batch, n_rounds - start)
        ev = np.zeros((count * bound, EVENT_WIDTH), np.int64)
        m[G_EVENTS] = 0
        _trace_rounds(
            _words(key), first + start, count, m, y, compiled.cs, ev, before,
            *lay.aggregation, rows[start : start + count], states[start : start + count],
        )  # fmt: skip
        events.append(ev[: m[G_EVENTS]].copy())
    return rows, np.concatenate(events) if events else np.zeros((0, EVENT_WIDTH), np.int64), states
