"""System ``perception``: a scenario as arrays, and the paths that play rules.py's rounds.

The rules are played by ONE round function, ``rules.play_round`` (and, for the simplest
scenarios, by its side-by-side shortcut ``lanes.play_lanes``), and counted by ONE count
function, ``count_round`` (counts.py, with the rest of the counting: the complete row,
the byte counters, the outcome code's decoding and the plan's ``H_*`` header; the
table's rows are table.py).  The entry points here differ only in what they do with a
played round:

``_trace_rounds``
    ``System.trace``: every round's complete row (``full_row``), its events
    (``rules.note_round`` writes them from the state the round left in ``tab``, the state
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
    of rounds.  In individual mode with attack_share 0 or 1 the outcomes of most
    rounds come from ``lanes.play_lanes``, which plays many rounds side by side from
    their first sixteen byte draws (a shortcut held equal to ``rules.play_round`` by the
    tests; ``lanes.why_not_lanes`` names why not).

Every round is its own regeneration cycle (nothing carries over), so every path
gives, bit for bit, the sums of ``metrics.flush_cycle(y, 1, ...)`` over the rounds'
complete rows (tests/test_contract.py, tests/test_perception_kernel.py).

Implementation notes
--------------------
* ``acts_before`` is the only count with n * n slots.  ``_run_general`` adds
  ``slot_i < slot_j`` to a byte counter per pair (rows padded to blocks of
  ``BYTE_BLOCK`` that LLVM vectorises, one instruction a block) and empties them into
  the int64 sums every ``BYTE_ROUNDS`` rounds.
* How a round is played, and why it is written as it is (one table ``tab``, the steps
  written out, ``play_round`` inlined into each path), is rules.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simkit.metrics import Layout, Sums
from simkit.systems.base import EVENT_WIDTH, MAX_COMBATANTS, code_of, share_code
from simkit.systems.counting import (
    DENSE,
    aggregate_round,
    dense_add,
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
from simkit.systems.perception.lanes import (
    FAST_LANES,
    L_ROWS,
    LANE_BLOCK,
    play_lanes,
    why_not_lanes,
)
from simkit.systems.perception.rules import D10, note_round, play_round
from simkit.systems.perception.schema import (
    GROUP_STAT_CODES,
    GROUP_STAT_HIGHEST,
    INFORMATION_CODES,
    MAX_PERCEPTION,
    MODE_CODES,
    MODE_GROUP,
    MODE_INDIVIDUAL,
    TIE_CODES,
    WITHIN_CODES,
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
    T_BY_PER,
    T_BY_STAT,
    T_CHOICE,
    T_DIST,
    T_FIXED,
    T_MCOUNT,
    T_MEMBERS,
    T_MSTART,
    T_PAR,
    T_PER,
    T_RUN_END,
    T_SHARE,
    T_SIDE,
    T_SLOT,
    T_SLOTS,
    T_STAT,
    T_TARGETS,
    T_TCOUNT,
    T_TLIST,
)
from simkit.systems.stream import CANONICAL_WORDS, STATE_WORDS, canonical_state, round_start_lazy
from simkit.systems.support import JIT, njit, unmanaged


@dataclass(frozen=True)
class Compiled:
    """A perception scenario as flat arrays for the kernels."""

    layout: Layout
    tab: np.ndarray  # int64 [T_TARGETS + target lists, width]: parameters (round rows zero)
    plan: np.ndarray  # int64: the lists of slots the kernels read (counts.H_* header)
    n_rollers: int
    sides: tuple[str, ...]  # side names (group-mode events name the side that rolls)
    lanes_off: str | None  # why lanes.play_lanes cannot serve it (LANE_REASONS), or None

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
        play_round(st, tab)
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


@njit(**JIT)
def _run_histogram(
    key, first, n_rounds, tab, plan, table, dense, y, slots, s1, s2, sl, sx, tot, st, codes, final,
):  # fmt: skip
    """Play rounds ``first ..`` of the chunk with key ``key`` (at most ``HIST_MAX_N``
    combatants); count each distinct outcome once (module docstring).  ``table``: the
    outcome histogram (``dense``: counting.new_dense_histogram, else
    counting.new_histogram); emptied into the sums (of the ``slots``: every slot) when
    ``final`` (else the next call goes on with it) or when full at its largest.  ``codes``: the
    outcomes of the first ``codes.size`` rounds from the lanes (``lanes.play_lanes``; -1:
    play the round)."""
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
            play_round(st, tab)
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
        play_round(st, tab)
        ne = note_round(ev, ne, r, tab)
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
                play_lanes(key4, first + start, tab, block, words[0], words[1], lanes)
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
