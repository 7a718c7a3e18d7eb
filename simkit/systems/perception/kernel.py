"""System ``perception``: d10 + Perception, individual or group (docs/rules.md, P1-P4, rev 2).

The rules are played by ONE round function, ``_play_round`` (and, for the simplest
scenarios, by its side-by-side shortcut ``_lanes``), and counted by ONE count function,
``count_round`` (counts.py, with the rest of the counting: the complete row, the byte
counters, the outcome code's decoding and the plan's ``H_*`` header; the table's rows
are table.py).  The entry points differ only in what they do with a played round:

``_trace_rounds``
    ``System.trace``: every round's complete row (``full_row``), its events
    (``_note_round`` writes them from the state the round left in ``tab``, the state
    that is counted) and the stream state after it.
``_run_general``
    ``run_chunk``: every round's row is added to chunk accumulators (its squares and
    cross sums too), ``acts_before`` in byte counters (below).
``_run_histogram``
    ``run_chunk`` for up to ``HIST_MAX_N`` combatants: a round only counts its
    *outcome* (every slot, every stated target and where P3's information runs break,
    packed in 19 bits at most) in an outcome histogram of counting.py, dense up to 3
    combatants and hashed at 4 (``counting.histogram_kind`` by ``counts.code_space``);
    once per chunk (``_empty_outcomes``) each outcome met is turned back into a round
    (``counts.decode_row``), counted by ``count_round`` and flushed with its number
    of rounds.  In individual mode with
    attack_share 0 or 1 the outcomes of most rounds come from ``_lanes``, which plays
    many rounds side by side from their first sixteen byte draws (a shortcut held equal
    to ``_play_round`` by the tests; section "lanes"; ``why_not_lanes`` names why not).

Every round is its own regeneration cycle (nothing carries over), so every path
gives, bit for bit, the sums of ``metrics.flush_cycle(y, 1, ...)`` over the rounds'
complete rows (tests/test_contract.py, tests/test_perception_kernel.py).

A round, and the order of its draws (tests/twins/perception.py is the spec)
---------------------------------------------------------------------------
Round ``r`` of a chunk starts on its own stream (``round_start_lazy(st, key, r)``).

1. P1: one d10 per combatant in scenario order, initiative = d10 + perception.  P2:
   one d10 per side in order of first appearance, total = d10 + group stat (the
   commander's perception or the side's highest, fixed at compile time).  Trace
   ``dice`` replace a roller's face after the draw.
2. The acting order of the *entities* (P1: combatants; P2: sides): descending total,
   then descending perception (group stat), then scenario order.  Entities still
   tied: P1 ``tie = "simultaneous"`` shares a slot; otherwise (P1 ``"random"``, P2
   always) a fair random order by sequential selection, tied runs from the first slot
   to the last: ``below(m)`` picks the next among the ``m`` left (counted in scenario
   order), until one is left.  P2 then lists the sides' members, side after side,
   each side in a fresh fair order (``within_side = "random"``) or in scenario order
   (``"listed"``, no draw).  Slots count from 0 without gaps.
3. P3 (no draw): each combatant's *information run*, the acting positions around it
   with its own information value; it learns the first action of everyone after its
   run (group mode: of other sides only).  The value is the total under
   ``information = "strict"`` (P2: the side total) and the slot under ``"order"``;
   along the acting order both only ever step one way, so a run is a stretch of
   consecutive positions (``T_RUN_END``).
4. P3/P4 stated first actions, in scenario order: ``chance(attack_share)`` unless the
   share is 0 or 1, then ``below`` over its target list if it attacks.

Implementation notes (each measured on the 4-combatant benchmark scenario)
------------------------------------------------------------------------
* Everything a round reads or writes lives in ONE int64 table ``tab``, a row per
  quantity, indexed ``tab[ROW, k]``: parameters, target lists, round state.  numba
  increfs and decrefs every array argument on entry to and exit from a function it
  does not inline, and every row view: so the round function takes two arrays (the
  stream and ``tab``) and creates no view.
* The steps of a round are written out in ``_play_round``, not in helpers: a call
  with an array costs more than most steps, and LLVM does not inline functions of
  that size.  (``_play_round`` itself is inlined into each path, the only
  ``inline="always"`` here; its comment says why.)  ``stream.below`` is such a
  function (8 ns a call, against 1.6 ns for a ``roll`` of a constant die), so its
  byte path is written out too, once for the fair orders and once for the targets,
  with ``BELOW_LIMIT`` / ``BELOW_RECIPROCAL`` (the same draws, tested).  All fair
  orders of a round (tied runs, then P2's sides) are drawn by one loop.
* Dice make ties and runs coin flips, so the common path is branch-free: few
  entities (``PAIRWISE_MAX``) are ordered by counting who is ahead of whom, many by a
  counting sort over the possible totals (the same order; each is faster where used).
* ``acts_before`` is the only count with n * n slots.  ``_run_general`` adds
  ``slot_i < slot_j`` to a byte counter per pair (rows padded to blocks of
  ``BYTE_BLOCK`` that LLVM vectorises, one instruction a block) and empties them into
  the int64 sums every ``BYTE_ROUNDS`` rounds.
* Constants passed to a jitted function are numpy scalars (``_ZERO``, ``EV_*``): a
  Python int is a literal type, and numba compiles the function again per literal.
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
    code_of,
    share_code,
)
from simkit.systems.counting import (
    DENSE,
    aggregate_round,
    dense_add,
    first_reason,
    histogram_add,
    histogram_kind,
    new_dense_histogram,
    new_histogram,
)
from simkit.systems.perception.counts import (
    BYTE_BLOCK,
    BYTE_ROUNDS,
    CODE_BITS,
    CODE_SLOT_BITS,
    H_DST,
    H_OP,
    H_PA,
    H_PAIR_BEFORE,
    H_PB,
    H_SRC,
    H_UNITS_VARYING,
    H_VAR_DST,
    H_VAR_OP,
    H_VAR_SRC,
    HASH_BITS,
    HASH_MAX_BITS,
    HIST_MAX_N,
    code_space,
    compile_plan,
    count_round,
    empty_bytes,
    expand_outcomes,
    fixed_counts,
    full_row,
)
from simkit.systems.perception.schema import (
    GROUP_STAT_CODES,
    GROUP_STAT_HIGHEST,
    INFORMATION_CODES,
    INFORMATION_STRICT,
    MAX_PERCEPTION,
    MODE_CODES,
    MODE_GROUP,
    MODE_INDIVIDUAL,
    TIE_CODES,
    TIE_SIMULTANEOUS,
    WITHIN_CODES,
    WITHIN_RANDOM,
)
from simkit.systems.perception.table import (
    COUNTS,
    N_PAR,
    P_BEFORE,
    P_INFO,
    P_LANES,
    P_LOW,
    P_MODE,
    P_N,
    P_SIDES,
    P_SIZE,
    P_SPAN,
    P_TIE,
    P_UNITS,
    P_WITHIN,
    T_BUCKET,
    T_BY_PER,
    T_BY_STAT,
    T_CHOICE,
    T_DIE,
    T_DIST,
    T_FAIR_SIZE,
    T_FAIR_START,
    T_FIXED,
    T_KEY,
    T_MCOUNT,
    T_MEMBERS,
    T_MSTART,
    T_ORDER,
    T_PAR,
    T_PER,
    T_RUN_END,
    T_SHARE,
    T_SIDE,
    T_SLOT,
    T_SLOTS,
    T_SORDER,
    T_SSLOT,
    T_STAT,
    T_STOTAL,
    T_TARGET,
    T_TARGETS,
    T_TCOUNT,
    T_TIED,
    T_TLIST,
    T_TOTAL,
)
from simkit.systems.stream import (
    BYTE_LIMIT,
    CANONICAL_WORDS,
    LANE_BYTES,
    RECIPROCAL,
    STATE_WORDS,
    canonical_state,
    chance,
    first_outputs,
    lane_byte,
    lane_roll,
    next_byte,
    roll,
    round_start_lazy,
)
from simkit.systems.support import JIT, njit, unmanaged

D10 = 10  # P1, P2

# Event kinds (column ``kind``); the System object names them and cites their rules.
EV_ROLL_P1, EV_ROLL_P2, EV_SLOT_P1, EV_SLOT_P2, EV_INTENT, EV_ACT, EV_ATTACK = (
    np.int64(k) for k in range(7)
)
_NOBODY = np.int64(NOBODY)
_ZERO = np.int64(0)


# stream.below(st, n) for 2 <= n <= 256, as the round function draws it (written out:
# a call to stream.below costs 8 ns, more than the draw, because LLVM does not inline
# it): bytes until one is below BELOW_LIMIT[n] = 256 - 256 % n, then b % n computed as
# b - ((b * BELOW_RECIPROCAL[n]) >> 32) * n, exact for bytes.  The same draws as
# stream.below (tests/test_perception_kernel.py::test_below_written_out_is_stream_below).
BELOW_LIMIT, BELOW_RECIPROCAL = BYTE_LIMIT, RECIPROCAL
KEY_SHIFT = 5  # order keys (total << 5) | perception: perception <= MAX_PERCEPTION < 32
PAIRWISE_MAX = 8  # up to 8 entities are ordered by counting who is ahead of whom


# Why ``_lanes`` cannot serve a scenario (``why_not_lanes``, ``Compiled.lanes_off``).
LANE_REASONS = ("group_mode", "too_many_combatants", "share_between_0_and_1")


@dataclass(frozen=True)
class Compiled:
    """A perception scenario as flat arrays for the kernels."""

    layout: Layout
    tab: np.ndarray  # int64 [T_TARGETS + target lists, width]: parameters (round rows zero)
    plan: np.ndarray  # int64: the lists of slots the kernels read (counts.H_* header)
    n_rollers: int
    sides: tuple[str, ...]  # side names (group-mode events name the side that rolls)
    lanes_off: str | None  # why _lanes cannot serve the scenario (LANE_REASONS), or None

    @property
    def n(self) -> int:
        return int(self.tab[T_PAR, P_N])


def compile_scenario(scenario, layout: Layout) -> Compiled:
    """Flatten a validated perception scenario; every rule value through its code."""
    cs = scenario.combatants
    n = len(cs)
    if n > MAX_COMBATANTS:  # slots fit in a byte (acts_before counters)
        raise ValueError(f"at most {MAX_COMBATANTS} combatants, got {n}")
    if tuple(layout.counts) != COUNTS:
        raise ValueError(f"layout counts {layout.counts} are not perception's {COUNTS}")
    per = [c["perception"] for c in cs]
    if max(per) > MAX_PERCEPTION:
        raise ValueError(f"perception above {MAX_PERCEPTION}: order keys would collide")
    rules = scenario.rules
    mode = code_of(MODE_CODES, rules["mode"], "rules.mode")
    tie = code_of(TIE_CODES, rules["tie"], "rules.tie")
    group_stat = code_of(GROUP_STAT_CODES, rules["group_stat"], "rules.group_stat")
    within = code_of(WITHIN_CODES, rules["within_side"], "rules.within_side")
    info = code_of(INFORMATION_CODES, rules["information"], "rules.information")
    sides = scenario.sides
    ns = len(sides)
    members = [[i for i, c in enumerate(cs) if c.side == side] for side in sides]
    stat = []
    for s, mine in enumerate(members):
        if group_stat == GROUP_STAT_HIGHEST:  # P2: the highest perception on the side
            stat.append(max(per[i] for i in mine))
        else:  # P2: the commander's (System.check: exactly one per side in group mode)
            commanders = [per[i] for i in mine if cs[i]["commander"]]
            if not commanders and mode == MODE_GROUP:
                raise ValueError(f"side {sides[s]!r} has no commander (group_stat = 'commander')")
            stat.append(commanders[0] if commanders else 0)
    stats = per if mode == MODE_INDIVIDUAL else stat
    low = min(stats) + 1  # the lowest total
    span = max(stats) + D10 - low + 1  # how many totals there can be

    # the distinct target lists (with target = "random", one per side: a row the
    # round's target draws find in the first-level cache, not one row per combatant)
    targets_of = [tuple(scenario.targets(i)) for i in range(n)]
    lists: dict[tuple[int, ...], int] = {}
    for targets in targets_of:
        lists.setdefault(targets, len(lists))
    tab = np.zeros((T_TARGETS + len(lists), max(n, ns, span + 1, N_PAR)), np.int64)
    for targets, row in lists.items():
        tab[T_TARGETS + row, : len(targets)] = targets
    pos = 0
    for s, mine in enumerate(members):
        tab[T_STAT, s] = stat[s]
        tab[T_MSTART, s] = pos
        tab[T_MCOUNT, s] = len(mine)
        tab[T_MEMBERS, pos : pos + len(mine)] = mine
        pos += len(mine)
    for i, c in enumerate(cs):
        tab[T_PER, i] = per[i]
        tab[T_SIDE, i] = sides.index(c.side)
        tab[T_SHARE, i] = share_code(c["attack_share"])
        tab[T_TCOUNT, i] = len(targets_of[i])
        tab[T_TLIST, i] = lists[targets_of[i]]
    tab[T_SLOTS : T_SLOTS + len(COUNTS), :n] = layout.count_slots.T  # named count slots
    tab[T_DIST, :n] = layout.dist_offsets
    # P1/P2 within equal totals: higher perception (group stat), then scenario order
    tab[T_BY_PER, :n] = sorted(range(n), key=lambda i: (-per[i], i))
    tab[T_BY_STAT, :ns] = sorted(range(ns), key=lambda s: (-stat[s], s))
    par = tab[T_PAR]
    par[P_MODE], par[P_TIE], par[P_WITHIN], par[P_INFO] = mode, tie, within, info
    par[P_N], par[P_SIDES], par[P_LOW], par[P_SPAN] = n, ns, low, span
    par[P_BEFORE], par[P_UNITS], par[P_SIZE] = (
        layout.before_offset,
        layout.unit_offset,
        layout.size,
    )
    lanes_off = why_not_lanes(mode, n, [int(tab[T_SHARE, i]) for i in range(n)])
    par[P_LANES] = lanes_off is None
    return Compiled(
        layout=layout,
        tab=tab,
        n_rollers=n if mode == MODE_INDIVIDUAL else ns,
        sides=tuple(sides),
        lanes_off=lanes_off,
        plan=compile_plan(layout),
    )


def why_not_lanes(mode: int, n: int, shares: list[int]) -> str | None:
    """None if ``_lanes`` can play the scenario's rounds side by side, else the name of
    the first reason it cannot (LANE_REASONS): a lane carries one d10 per combatant and
    a target draw per attack from several targets, for at most HIST_MAX_N combatants."""
    return first_reason(
        (
            ("group_mode", mode == MODE_INDIVIDUAL),  # P2 side dice and fair orders
            ("too_many_combatants", n <= HIST_MAX_N),  # the histogram path's outcome codes
            ("share_between_0_and_1", all(s in (SHARE_NEVER, SHARE_ALWAYS) for s in shares)),
        )
    )


# --------------------------------------------------------------------------- a round
# The one function inlined by numba (inline="always"): each path calls it once per round
# and compiles it once either way, so inlining costs ~0.3 s of compile per path and
# saves the call (~7 ns a round: on the benchmark scenario, 1.32x -> 1.19x the time of
# revision 1's kernel, which inlined every helper).
@njit(**JIT, inline="always")
def _play_round(st, tab):
    """Play one round (P1-P4) on the stream ``st`` into the round rows of ``tab``:
    the dice, slots, acting order, information runs and stated targets."""
    n = tab[T_PAR, P_N]
    mode = tab[T_PAR, P_MODE]
    # P1: the combatants roll and are ordered; P2: the sides (ties: always random)
    if mode == MODE_INDIVIDUAL:
        m, e_stat, e_by, e_total, e_order, e_slot = n, T_PER, T_BY_PER, T_TOTAL, T_ORDER, T_SLOT
        shared = tab[T_PAR, P_TIE] == TIE_SIMULTANEOUS
    else:
        m, e_stat, e_by = tab[T_PAR, P_SIDES], T_STAT, T_BY_STAT
        e_total, e_order, e_slot = T_STOTAL, T_SORDER, T_SSLOT
        shared = False
    for k in range(m):  # one d10 each, in order; trace dice replace the face drawn
        d = roll(st, D10)
        if tab[T_FIXED, k] > 0:
            d = tab[T_FIXED, k]
        tab[T_DIE, k] = d
        tab[e_total, k] = d + tab[e_stat, k]
        tab[T_KEY, k] = (tab[e_total, k] << KEY_SHIFT) | tab[e_stat, k]
    # The order: descending (total, stat), then scenario order.
    tied = False  # are any two entities tied (equal total and stat)?
    if m <= PAIRWISE_MAX:  # few: count who is ahead of whom, branch-free
        for k in range(m):
            tab[T_TIED, k] = 0  # (holds how many are ahead until the order is known)
        for a in range(m):
            ka = tab[T_KEY, a]
            ahead = tab[T_TIED, a]
            for b in range(a + 1, m):
                kb = tab[T_KEY, b]
                ahead += ka < kb
                tab[T_TIED, b] += ka >= kb  # equal keys: scenario order
                tied |= ka == kb
            tab[e_order, ahead] = a
    else:  # many: a counting sort over the possible totals (stable in tab[e_by] order)
        low = tab[T_PAR, P_LOW]
        span = tab[T_PAR, P_SPAN]
        for t in range(span):
            tab[T_BUCKET, t] = 0
        for k in range(m):
            tab[T_BUCKET, tab[e_total, k] - low] += 1
        ahead = 0
        for t in range(span - 1, -1, -1):
            c = tab[T_BUCKET, t]
            tab[T_BUCKET, t] = ahead
            ahead += c
        for k in range(m):
            e = tab[e_by, k]
            t = tab[e_total, e] - low
            tab[e_order, tab[T_BUCKET, t]] = e
            tab[T_BUCKET, t] += 1
        for p in range(1, m):
            tied |= tab[T_KEY, tab[e_order, p]] == tab[T_KEY, tab[e_order, p - 1]]
    # Still tied: one shared slot (P1 "simultaneous") or a fair random order (P1
    # "random", P2), tied runs first to last.  Most rounds have no tie.
    n_fair = 0  # fair orders to draw: tab[T_FAIR_START, k], tab[T_FAIR_SIZE, k]
    if tied:
        tab[T_TIED, 0] = 0
        for p in range(1, m):  # tied with the one before it
            tab[T_TIED, p] = tab[T_KEY, tab[e_order, p]] == tab[T_KEY, tab[e_order, p - 1]]
        p = 0
        while not shared and p < m:
            q = p + 1
            while q < m and tab[T_TIED, q]:
                q += 1
            tab[T_FAIR_START, n_fair] = p
            tab[T_FAIR_SIZE, n_fair] = q - p
            n_fair += q - p > 1
            p = q
    row = e_order
    for phase in range(2):
        # Fair random orders of tab[row, start : start + size], first to last, by
        # sequential selection: below(left) picks the next among those left, which
        # keep their order.  (below's byte path, written out: see BELOW_LIMIT.)
        for f in range(n_fair):
            start = tab[T_FAIR_START, f]
            size = tab[T_FAIR_SIZE, f]
            for x in range(size - 1):
                a = start + x
                left = size - x
                limit = BELOW_LIMIT[left]
                b = next_byte(st)
                while b >= limit:
                    b = next_byte(st)
                pick = b - ((b * BELOW_RECIPROCAL[left]) >> 32) * left
                if pick > 0:
                    v = tab[row, a + pick]
                    for c in range(a + pick, a, -1):
                        tab[row, c] = tab[row, c - 1]
                    tab[row, a] = v
        if phase == 1:  # P2: the members' slots, in the order just drawn
            for p in range(n):
                i = tab[T_ORDER, p]
                tab[T_SLOT, i] = p
            break
        k = -1
        for p in range(m):
            k += not (shared and tied and tab[T_TIED, p])
            tab[e_slot, tab[e_order, p]] = k
        if mode == MODE_INDIVIDUAL:
            break
        # P2: the sides' members, side after side in acting order, each side in a fresh
        # fair order (within_side = "random") or in scenario order; one slot each.
        pos = 0
        n_fair = 0
        for x in range(m):
            s = tab[T_SORDER, x]
            start = tab[T_MSTART, s]
            size = tab[T_MCOUNT, s]
            for q in range(size):
                i = tab[T_MEMBERS, start + q]
                tab[T_ORDER, pos + q] = i
                tab[T_TOTAL, i] = tab[T_STOTAL, s]  # P3 "strict" compares side totals
            if tab[T_PAR, P_WITHIN] == WITHIN_RANDOM and size > 1:
                tab[T_FAIR_START, n_fair] = pos
                tab[T_FAIR_SIZE, n_fair] = size
                n_fair += 1
            pos += size
        row = T_ORDER
    # P3: tab[T_RUN_END, p], the first acting position after p's information run.  A
    # combatant learns the first action of everyone after its run (group mode: other
    # sides only); the run is those with its total ("strict": "of those whose
    # initiative is less than his own") or its slot ("order", revision 1).  Along the
    # acting order totals never rise and slots never fall: runs are consecutive.
    row = T_TOTAL if tab[T_PAR, P_INFO] == INFORMATION_STRICT else T_SLOT
    tab[T_RUN_END, n - 1] = n
    later = tab[row, tab[T_ORDER, n - 1]]
    for p in range(n - 2, -1, -1):
        v = tab[row, tab[T_ORDER, p]]
        tab[T_RUN_END, p] = p + 1 if v != later else tab[T_RUN_END, p + 1]
        later = v
    # P3/P4: the first action each states (and must carry out), in scenario order: an
    # attack with probability attack_share, at ``below`` over its target list.
    for i in range(n):
        share = tab[T_SHARE, i]
        attack = share == SHARE_ALWAYS or (share != SHARE_NEVER and chance(st, share))
        tab[T_TARGET, i] = NOBODY
        tab[T_CHOICE, i] = 0
        if attack:
            count = tab[T_TCOUNT, i]  # below(count), its byte path written out as above
            k = 0
            if count > 1:
                limit = BELOW_LIMIT[count]
                b = next_byte(st)
                while b >= limit:
                    b = next_byte(st)
                k = b - ((b * BELOW_RECIPROCAL[count]) >> 32) * count
            tab[T_TARGET, i] = tab[T_TARGETS + tab[T_TLIST, i], k]
            tab[T_CHOICE, i] = k + 1


@njit(**JIT)
def _note(ev, ne, r, kind, actor, other, a, b):
    """Write one event row (trace); returns the new number of events."""
    ev[ne, 0] = r
    ev[ne, 1] = kind
    ev[ne, 2] = actor
    ev[ne, 3] = other
    ev[ne, 4] = a
    ev[ne, 5] = b
    ev[ne, 6] = 0
    ev[ne, 7] = 0
    return ne + 1


@njit(**JIT)
def _note_round(ev, ne, r, tab):
    """The events of the round ``_play_round`` left in ``tab``, in the twin's order:
    the rolls (P1/P2), the slots, who learns whose first action (P3: learners in
    acting order), then every action and attack (P4) in acting order."""
    n = tab[T_PAR, P_N]
    if tab[T_PAR, P_MODE] == MODE_INDIVIDUAL:
        m, total, roll_event, slot_event = n, T_TOTAL, EV_ROLL_P1, EV_SLOT_P1
    else:
        m, total, roll_event, slot_event = tab[T_PAR, P_SIDES], T_STOTAL, EV_ROLL_P2, EV_SLOT_P2
    for k in range(m):
        ne = _note(ev, ne, r, roll_event, k, _NOBODY, tab[T_DIE, k], tab[total, k])
    for p in range(n):
        i = tab[T_ORDER, p]
        ne = _note(ev, ne, r, slot_event, i, _NOBODY, tab[T_SLOT, i], _ZERO)
    for p in range(n):
        f = tab[T_ORDER, p]
        for q in range(tab[T_RUN_END, p], n):
            g = tab[T_ORDER, q]
            if tab[T_PAR, P_MODE] == MODE_INDIVIDUAL or tab[T_SIDE, g] != tab[T_SIDE, f]:
                ne = _note(ev, ne, r, EV_INTENT, f, g, _ZERO, _ZERO)
    # P3: the first to act states nothing (group mode: every member of the side acting
    # first; only the lower sides state); column a: 1 if it stated its first action
    lead = tab[T_ORDER, 0]
    for p in range(n):
        f = tab[T_ORDER, p]
        if tab[T_PAR, P_MODE] == MODE_INDIVIDUAL:
            stated = np.int64(tab[T_SLOT, f] > 0)
        else:
            stated = np.int64(tab[T_SIDE, f] != tab[T_SIDE, lead])
        ne = _note(ev, ne, r, EV_ACT, f, _NOBODY, stated, _ZERO)
        if tab[T_TARGET, f] != NOBODY:
            ne = _note(ev, ne, r, EV_ATTACK, f, tab[T_TARGET, f], _ZERO, _ZERO)
    return ne


# --------------------------------------------------------------------------- run: general
@njit(**JIT)
def _run_general(
    key, first, n_rounds, tab, plan, y, acc1, acc2, accx, slot8, before8, s1, s2, sl, sx, tot, st,
):  # fmt: skip
    """Play rounds ``first ..`` of the chunk with key ``key``; add their sums.

    Every round's row (but acts_before) is added to ``acc1`` and its squares to
    ``acc2``, in two stretches of the layout: the combatants' counts, and the
    distributions, scenario and aggregate slots.  acts_before goes to byte counters."""
    key = unmanaged(key)
    tab = unmanaged(tab)
    pv = unmanaged(plan)  # its lists: views without a reference count
    src = pv[pv[H_SRC] : pv[H_SRC + 1]]
    dst = pv[pv[H_DST] : pv[H_DST + 1]]
    op = pv[pv[H_OP] : pv[H_OP + 1]]
    var_src = pv[pv[H_VAR_SRC] : pv[H_VAR_SRC + 1]]
    var_dst = pv[pv[H_VAR_DST] : pv[H_VAR_DST + 1]]
    var_op = pv[pv[H_VAR_OP] : pv[H_VAR_OP + 1]]
    units_varying = pv[pv[H_UNITS_VARYING] : pv[H_UNITS_VARYING + 1]]
    pa = pv[pv[H_PA] : pv[H_PA + 1]]
    pb = pv[pv[H_PB] : pv[H_PB + 1]]
    pair_before = pv[pv[H_PAIR_BEFORE] : pv[H_PAIR_BEFORE + 1]]
    y = unmanaged(y)
    acc1 = unmanaged(acc1)
    acc2 = unmanaged(acc2)
    accx = unmanaged(accx)
    slot8 = unmanaged(slot8)
    before8 = unmanaged(before8)
    st = unmanaged(st)
    n = tab[T_PAR, P_N]
    before = tab[T_PAR, P_BEFORE]
    after = before + n * n  # the distributions start here
    units = tab[T_PAR, P_UNITS]
    size = tab[T_PAR, P_SIZE]
    fixed_counts(tab, y, n)  # P4: the same in every round
    in_bytes = 0
    for r in range(first, first + n_rounds):
        round_start_lazy(st, key, r)
        _play_round(st, tab)
        count_round(tab, y)
        if r == first:  # every aggregate slot; those of FIXED_COUNTS keep their values
            for m in range(units, size):
                y[m] = 0
            aggregate_round(y, src, dst, op)
        else:
            for k in range(units_varying.size):
                y[units_varying[k]] = 0
            aggregate_round(y, var_src, var_dst, var_op)
        for m in range(before):
            v = y[m]
            acc1[m] += v
            acc2[m] += v * v
        for m in range(after, size):
            v = y[m]
            acc1[m] += v
            acc2[m] += v * v
        if pa.size > 0:
            for k in range(pair_before.size):
                m = pair_before[k] - before
                y[m + before] = tab[T_SLOT, m // n] < tab[T_SLOT, m % n]
            for k in range(pa.size):
                accx[k] += y[pa[k]] * y[pb[k]]
        # acts_before: a byte counter per pair, rows padded to whole BYTE_BLOCKs (the
        # padding's slot 0 is never above anyone's: its counters stay 0), each block a
        # vector instruction
        stride = slot8.size
        for i in range(n):
            slot8[i] = tab[T_SLOT, i]
        for i in range(n):
            si = slot8[i]
            row = i * stride
            for j in range(stride):
                before8[row + j] += si < slot8[j]
        in_bytes += 1
        if in_bytes == BYTE_ROUNDS:
            empty_bytes(before8, acc1, before, n)
            in_bytes = 0
    empty_bytes(before8, acc1, before, n)
    for m in range(size):
        s1[m] += acc1[m]
        sl[m] += acc1[m]  # one-round cycles
        s2[m] += acc2[m]
    for m in range(before, after):  # acts_before is 0 or 1: its square is itself
        s2[m] += acc1[m] - acc2[m]
    for k in range(pa.size):
        sx[k] += accx[k]
    tot[0] += n_rounds
    tot[1] += n_rounds
    tot[2] += n_rounds


# --------------------------------------------------------------------------- lanes
# Rounds side by side (``P_LANES``: individual mode, at most HIST_MAX_N combatants,
# attack_share 0 or 1): such a round is a function of its first sixteen byte draws (P1
# dice, a below(2) for each pair of tied combatants, then the target draws in scenario
# order), cut from its first two outputs (stream.first_outputs).  ``_lanes`` plays
# FAST_LANES rounds at once, every loop along the rounds (vectorised), and gives each its
# outcome as ``_run_histogram`` codes it.  A round it cannot finish from those bytes (a
# die rejecting two bytes in a row, three combatants tied, a rejected target byte) is
# played by ``_play_round`` as usual.  tests/test_perception_kernel.py holds both equal.
FAST_LANES = 256
LANE_BLOCK = 1 << 16  # rounds whose codes run_chunk keeps at a time (a multiple of FAST_LANES)
(L_OK, L_POS, L_CODE, L_BREAKS, L_AT) = range(5)  # rows of the lanes array, then per
L_KEY = 5  # combatant: its order key,
L_TOTAL = L_KEY + HIST_MAX_N  # its total,
L_PLACE = L_TOTAL + HIST_MAX_N  # its acting position (= slot under tie "random"),
L_SLOT = L_PLACE + HIST_MAX_N  # its slot,
L_TIED = L_SLOT + HIST_MAX_N  # 1 if a later combatant has its key (it leads a tied pair)
L_ROWS = L_TIED + HIST_MAX_N


@njit(**JIT)
def _lanes(key, first, tab, codes, words, second, lanes):
    """``codes[k]``: the outcome code of round ``first + k`` as ``_run_histogram`` computes
    it from ``_play_round``'s rows, or -1 where the round must be played (``codes.size``
    a multiple of FAST_LANES).  FAST_LANES rounds at a time: row L_OK of ``lanes`` is 1
    where a round could be played from its first sixteen byte draws, L_CODE its outcome;
    every inner loop runs along the rounds over rows of ``lanes`` (int32: twice the
    rounds per vector instruction of int64; a code has 19 bits).  Called apart from
    ``_run_histogram``, which reads the codes, and written as one function: numba and
    LLVM then compile this code once."""
    n = tab[T_PAR, P_N]
    for r0 in range(first, first + codes.size, FAST_LANES):
        first_outputs(key, r0, words, second)
        ok = lanes[L_OK]
        pos = lanes[L_POS]
        for b in range(FAST_LANES):
            ok[b] = 1
            pos[b] = 0
        for i in range(n):  # P1: i's d10
            keys = lanes[L_KEY + i]
            totals = lanes[L_TOTAL + i]
            per = np.int32(tab[T_PER, i])
            for b in range(FAST_LANES):
                total = np.int32(lane_roll(words, second, b, pos, ok, D10)) + per
                totals[b] = total
                keys[b] = (total << KEY_SHIFT) | per
        for i in range(n):  # the acting position: descending key, then scenario order
            place = lanes[L_PLACE + i]
            tied = lanes[L_TIED + i]
            shared = lanes[L_SLOT + i]  # (here: how many others have its key)
            ki = lanes[L_KEY + i]
            for b in range(FAST_LANES):
                place[b] = 0
                tied[b] = 0
                shared[b] = 0
            for j in range(n):
                if j != i:
                    kj = lanes[L_KEY + j]
                    for b in range(FAST_LANES):
                        place[b] += (kj[b] > ki[b]) | ((kj[b] == ki[b]) & (j < i))
                        tied[b] |= (kj[b] == ki[b]) & (j > i)
                        shared[b] += kj[b] == ki[b]
            for b in range(FAST_LANES):
                ok[b] &= shared[b] <= 1  # no three tied
        if tab[T_PAR, P_TIE] != TIE_SIMULTANEOUS:  # a fair order of each tied pair: below(2),
            at = lanes[L_AT]  # one byte each, the pairs first to last (by key)
            for a in range(n):
                ka = lanes[L_KEY + a]
                for b in range(FAST_LANES):
                    at[b] = pos[b]
                for d in range(n):  # a pair ahead of a's: led by d, with a higher key
                    kd = lanes[L_KEY + d]
                    tied_d = lanes[L_TIED + d]
                    for b in range(FAST_LANES):
                        at[b] += tied_d[b] & (kd[b] > ka[b])
                place_a = lanes[L_PLACE + a]
                for c in range(a + 1, n):
                    kc = lanes[L_KEY + c]
                    place_c = lanes[L_PLACE + c]
                    for b in range(FAST_LANES):
                        x = lane_byte(words, second, b, at[b] & (LANE_BYTES - 1))
                        pair = ka[b] == kc[b]
                        swap = pair & (x & 1)  # below(2) = 1: the later one acts first
                        ok[b] &= (at[b] < LANE_BYTES) | (not pair)
                        place_a[b] += swap
                        place_c[b] -= swap
            for a in range(n):  # the bytes of every tied pair
                tied_a = lanes[L_TIED + a]
                for b in range(FAST_LANES):
                    pos[b] += tied_a[b]
            for i in range(n):  # one slot each
                slot = lanes[L_SLOT + i]
                place = lanes[L_PLACE + i]
                for b in range(FAST_LANES):
                    slot[b] = place[b]
        else:  # tied combatants share a slot: the position of the first of them
            for i in range(n):
                slot = lanes[L_SLOT + i]
                place = lanes[L_PLACE + i]
                ki = lanes[L_KEY + i]
                for b in range(FAST_LANES):
                    slot[b] = place[b]
                for j in range(i):  # a tied pair's later member: the slot of the earlier one
                    kj = lanes[L_KEY + j]
                    for b in range(FAST_LANES):
                        slot[b] -= kj[b] == ki[b]
                for j in range(n):  # and one slot less for each tied pair ahead of it
                    kj = lanes[L_KEY + j]
                    tied_j = lanes[L_TIED + j]
                    for b in range(FAST_LANES):
                        slot[b] -= tied_j[b] & (kj[b] > ki[b])
        # P3: the bit of position p is set where p's information value differs from the next's
        breaks = lanes[L_BREAKS]
        value = L_TOTAL if tab[T_PAR, P_INFO] == INFORMATION_STRICT else L_SLOT
        for b in range(FAST_LANES):
            breaks[b] = np.int32((1 << (n - 1)) - 1)
        for i in range(n):
            place_i = lanes[L_PLACE + i]
            value_i = lanes[value + i]
            for j in range(n):
                if j != i:
                    place_j = lanes[L_PLACE + j]
                    value_j = lanes[value + j]
                    for b in range(FAST_LANES):
                        same = (place_j[b] == place_i[b] + 1) & (value_i[b] == value_j[b])
                        breaks[b] &= ~(np.int32(same) << (place_i[b] & 31))
        code = lanes[L_CODE]
        for b in range(FAST_LANES):
            code[b] = breaks[b] << np.int32(CODE_BITS * n)
        for i in range(n):  # P4: targets in scenario order, a byte for a list of several
            share = tab[T_SHARE, i]
            count = tab[T_TCOUNT, i]
            choice = np.int32(1 if share == SHARE_ALWAYS else 0)
            slot = lanes[L_SLOT + i]
            shift = np.int32(CODE_BITS * i)
            for b in range(FAST_LANES):
                code[b] += (slot[b] | (choice << CODE_SLOT_BITS)) << shift
            if share == SHARE_ALWAYS and count > 1:
                limit = BELOW_LIMIT[count]
                reciprocal = BELOW_RECIPROCAL[count]
                shift = np.int32(CODE_BITS * i + CODE_SLOT_BITS)
                for b in range(FAST_LANES):
                    p = pos[b]
                    x = lane_byte(words, second, b, p & (LANE_BYTES - 1))
                    ok[b] &= (p < LANE_BYTES) & (x < limit)
                    k = np.int32(x - ((x * reciprocal) >> 32) * count)
                    code[b] += k << shift
                    pos[b] = p + 1
        for b in range(FAST_LANES):
            codes[r0 - first + b] = lanes[L_CODE, b] if lanes[L_OK, b] != 0 else -1


@njit(**JIT)
def _run_histogram(
    key, first, n_rounds, tab, plan, table, dense, y, slots, s1, s2, sl, sx, tot, st, codes, final,
):  # fmt: skip
    """Play rounds ``first ..`` of the chunk with key ``key`` (at most ``HIST_MAX_N``
    combatants); count each distinct outcome once (module docstring).  ``table``: the
    outcome histogram (``dense``: counting.new_dense_histogram, else
    counting.new_histogram); emptied into the sums (of the ``slots``: every slot) when
    ``final`` (else the next call goes on with it) or when full at its largest.  ``codes``: the
    outcomes of the first ``codes.size`` rounds from the lanes (``_lanes``; -1: play the
    round)."""
    key = unmanaged(key)
    tab = unmanaged(tab)
    table = unmanaged(table)
    st = unmanaged(st)
    codes = unmanaged(codes)
    n = tab[T_PAR, P_N]
    for r in range(first, first + n_rounds):
        k = r - first
        code = codes[k] if k < codes.size else -1
        if code < 0:
            round_start_lazy(st, key, r)
            _play_round(st, tab)
            # the outcome: every slot, every target and where P3's information runs break
            # (all that count_round and acts_before read)
            code = 0
            for i in range(n):
                field = tab[T_SLOT, i] | (tab[T_CHOICE, i] << CODE_SLOT_BITS)
                code |= field << (CODE_BITS * i)
            for p in range(n - 1):
                code |= (tab[T_RUN_END, p] == p + 1) << (CODE_BITS * n + p)
        if dense:
            dense_add(table, code, 1)
        elif histogram_add(table, code, 1):  # full at its largest: emptied into the sums
            _empty_outcomes(table, dense, tab, plan, y, slots, s1, s2, sl, sx, tot)
    if final:
        _empty_outcomes(table, dense, tab, plan, y, slots, s1, s2, sl, sx, tot)


@njit(**JIT)
def _empty_outcomes(table, dense, tab, plan, y, slots, s1, s2, sl, sx, tot):
    """Every outcome of the histogram (``dense`` or hashed) counted once with its number
    of rounds (counting's expansion loop through counts.decode_row); the table emptied."""
    pv = unmanaged(plan)  # views without a reference count, passed on every outcome
    ctx = (
        unmanaged(tab),
        pv[pv[H_SRC] : pv[H_SRC + 1]],
        pv[pv[H_DST] : pv[H_DST + 1]],
        pv[pv[H_OP] : pv[H_OP + 1]],
    )
    pa = pv[pv[H_PA] : pv[H_PA + 1]]
    pb = pv[pv[H_PB] : pv[H_PB + 1]]
    s1 = unmanaged(s1)
    s2 = unmanaged(s2)
    sl = unmanaged(sl)
    sx = unmanaged(sx)
    table = unmanaged(table)
    y = unmanaged(y)
    slots = unmanaged(slots)
    tot = unmanaged(tot)
    expand_outcomes(table, dense, ctx, y, slots, s1, s2, sl, sx, pa, pb, tot)


# --------------------------------------------------------------------------- trace
@njit(**JIT)
def _trace_rounds(key, first, n_rounds, tab, plan):
    """Rounds ``first ..``: complete rows, events, and the stream state after each."""
    src = plan[plan[H_SRC] : plan[H_SRC + 1]]
    dst = plan[plan[H_DST] : plan[H_DST + 1]]
    op = plan[plan[H_OP] : plan[H_OP + 1]]
    n = tab[T_PAR, P_N]
    rows = np.zeros((n_rounds, tab[T_PAR, P_SIZE]), np.int64)
    states = np.zeros((n_rounds, CANONICAL_WORDS), np.uint64)
    most = n * n + 3 * n + tab[T_PAR, P_SIDES]  # events of one round at most
    ev = np.zeros((most * min(max(n_rounds, 1), 64), EVENT_WIDTH), np.int64)
    st = np.zeros(STATE_WORDS, np.uint64)
    ne = np.int64(0)
    for k in range(n_rounds):
        if ne + most > ev.shape[0]:
            grown = np.zeros((2 * ev.shape[0], EVENT_WIDTH), np.int64)
            for e in range(ne):  # element by element: a slice copy compiles slowly
                for c in range(EVENT_WIDTH):
                    grown[e, c] = ev[e, c]
            ev = grown
        r = first + k
        round_start_lazy(st, key, r)
        _play_round(st, tab)
        ne = _note_round(ev, ne, r, tab)
        full_row(tab, src, dst, op, rows[k])
        words = canonical_state(st)
        for c in range(CANONICAL_WORDS):
            states[k, c] = words[c]
    return rows, ev[:ne].copy(), states


# --------------------------------------------------------------------------- entry points
def uses_histogram(compiled: Compiled) -> bool:
    """True if ``run_chunk`` takes the histogram path for this scenario."""
    return compiled.n <= HIST_MAX_N


def run_chunk(
    compiled: Compiled,
    key: np.ndarray,
    n_rounds: int,
    sums: Sums,
    first: int = 0,
    histogram: bool | None = None,
) -> None:
    """Play rounds ``first .. first + n_rounds - 1`` of the chunk with key ``key`` (its
    first four words) and add them to ``sums``.  ``histogram`` forces a path (tests)."""
    if histogram is None:
        histogram = uses_histogram(compiled)
    if histogram and not uses_histogram(compiled):
        raise ValueError(f"the histogram path takes at most {HIST_MAX_N} combatants")
    lay = compiled.layout
    y = np.zeros(lay.size, np.int64)
    st = np.zeros(STATE_WORDS, np.uint64)
    n_pairs = len(lay.pairs)
    key4 = np.ascontiguousarray(key[:4], dtype=np.uint64)
    tab = compiled.tab.copy()
    if histogram:
        space = code_space(lay.n)
        dense = histogram_kind(space) == DENSE
        table = new_dense_histogram(space) if dense else new_histogram(HASH_BITS, HASH_MAX_BITS)
        slots = np.arange(lay.size, dtype=np.int64)
        side_by_side = bool(tab[T_PAR, P_LANES])
        # the lanes' codes a block at a time, into one buffer of at most LANE_BLOCK
        # rounds (512 KiB) however long the chunk
        codes = np.empty(min(n_rounds, LANE_BLOCK) if side_by_side else 0, np.int64)
        lanes = np.zeros((L_ROWS, FAST_LANES), np.int32)
        words = np.zeros((2, FAST_LANES), np.uint64)
        for start in range(0, n_rounds, LANE_BLOCK):
            m = min(LANE_BLOCK, n_rounds - start)
            block = codes[: m // FAST_LANES * FAST_LANES]
            if block.size:
                _lanes(key4, first + start, tab, block, words[0], words[1], lanes)
            _run_histogram(key4, first + start, m, tab, compiled.plan, table, dense, y, slots,
                           sums.s1, sums.s2, sums.sl, sums.sx, sums.tot, st, block,
                           start + m == n_rounds)  # fmt: skip
        return
    n = lay.n
    stride = -(-n // BYTE_BLOCK) * BYTE_BLOCK  # acts_before rows, padded (_run_general)
    _run_general(
        key4, first, n_rounds, tab, compiled.plan, y,
        np.zeros(lay.size, np.int64), np.zeros(lay.size, np.int64), np.zeros(n_pairs, np.int64),
        np.zeros(stride, np.uint8), np.zeros(n * stride, np.uint8),
        sums.s1, sums.s2, sums.sl, sums.sx, sums.tot, st,
    )  # fmt: skip


def trace_rounds(
    compiled: Compiled,
    key: np.ndarray,
    n_rounds: int,
    first: int = 0,
    dice: dict[int, list[int]] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rounds ``first ..`` of the chunk with key ``key``: (rows, events, states).

    ``dice`` maps a roller index (P1: combatant; P2: side) to its one face."""
    tab = compiled.tab.copy()
    for k, faces in (dice or {}).items():
        if not 0 <= k < compiled.n_rollers:
            raise ValueError(f"no roller {k}; there are {compiled.n_rollers}")
        (face,) = faces
        if not 1 <= face <= D10:
            raise ValueError(f"{face} is not a face of a d10")
        tab[T_FIXED, k] = face
    key4 = np.ascontiguousarray(key[:4], dtype=np.uint64)
    return _trace_rounds(key4, first, n_rounds, tab, compiled.plan)


def hist_bins(n: int) -> int:
    """Histogram size of ``run_chunk`` for ``n`` combatants (1: no histogram)."""
    return 1 << HASH_BITS if n <= HIST_MAX_N else 1


trace = trace_rounds  # the kernel module interface of base.KernelBase
