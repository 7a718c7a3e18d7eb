"""System ``vtm``: a scenario as arrays, and the chunk loops that play rules.py's rounds.

``compile_scenario`` flattens a validated scenario into one int64 memory vector and
a plan of how its counts are summed; ``run_chunk`` plays rounds and adds their sums;
``trace`` plays the same rounds on the same code (``rules.setup``, ``rules.play``,
``counts.finish``) and returns every round's complete row, its events and the stream
state it left behind.  One shortcut: rounds of the simplest scenarios (one action each,
no delay or abort) are played side by side by ``lanes.play_lanes`` for ``run_chunk``,
held equal to the rules' code by the tests.  The rules themselves, how a round is
played (V1-V7), are rules.py; the plain-Python twin ``tests/twins/vtm.py`` is their
specification (tests/test_contract.py).

Sums
----
How the counts are summed is counts.py: the slot plan (constant, alias, coded and
flushed slots), the plan vector ``run_chunk`` reads every round (its ``H_*`` header),
``finish``, and the decoder through which counting.py's dense histogram of the three
outcome codes is turned back into sums at the end of ``_run_chunk`` (``_EXPAND``:
``counts.code_expander`` with V3, ``rules.declare``).  The
kernel's memory vector ``m`` (its offsets, the rules' codes, ``_address``) is
memory.py.

Where the plan needs nothing but the three codes and the scenario makes every round a
function of its first sixteen byte draws (one action each, no delay or abort, ties
sharing a slot, attack_share 0 or 1: ``H_LANES``), ``lanes.play_lanes`` plays many
rounds side by side and gives their codes; a round it cannot finish from those draws is
played by the rules one by one (lanes.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simkit.metrics import Layout, Sums
from simkit.systems.base import EVENT_WIDTH, MAX_COMBATANTS, TIE_CODES, code_of, share_code
from simkit.systems.counting import aggregate_round, close_chunk, dense_add, new_dense_histogram
from simkit.systems.stream import STATE_WORDS, canonical_state, round_start_lazy
from simkit.systems.support import JIT, njit, unmanaged
from simkit.systems.vtm.counts import (
    COUNTS,
    F_SLOTS,
    H_BEFORE,
    H_BINARY,
    H_CODED,
    H_DECLARE,
    H_DST,
    H_FINISH,
    H_FLUSH,
    H_LANES,
    H_OP,
    H_PAIRS,
    H_RANKED,
    H_SRC,
    H_VALUE_SLOTS,
    H_VALUE_WEIGHTS,
    H_ZERO_ALL,
    N_COUNTS,
    SCENARIO_COUNTS,
    CodedSums,
    code_expander,
    compile_counts,
    families,
    finish,
)
from simkit.systems.vtm.lanes import (
    FAST_LANES,
    L_OK,
    L_ROWS,
    L_SLOT,
    L_VALUE,
    lane_kinds,
    play_lanes,
    why_not_lanes,
)
from simkit.systems.vtm.memory import (
    ABORT_CODES,
    DELAY_CODES,
    DELAY_NEVER,
    G_BASE,
    G_BUCKETS,
    G_DECLARE,
    G_DELAYERS,
    G_ENDS,
    G_EVENTS,
    G_FIXED,
    G_MULTI,
    G_N,
    G_ROUND,
    G_SIDES,
    G_SIMULTANEOUS_SLOT,
    G_SLOT_ABORT,
    G_TARGETS,
    G_TIE,
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
    W_ACTING,
    W_END_NEXT,
    W_FIRST,
    W_GROUP,
    W_LO,
    _address,
)
from simkit.systems.vtm.rules import D10, INIT_OFFSET, KEY_SHIFT, ONE, ZERO, declare, play, setup


@dataclass(frozen=True)
class Compiled:
    """A vtm scenario as flat arrays for the kernel, and how its slots are summed."""

    layout: Layout
    m: np.ndarray  # int64: the kernel's memory, parameters and target lists filled in
    cs: np.ndarray  # int64 [n, K]: Layout.count_slots
    events_per_round: int  # at most this many events in a round
    plan: np.ndarray  # int64: what run_chunk does every round (counts.H_* header, then lists)
    coded_sums: CodedSums  # what run_chunk sums after the chunk (counts.py)
    lanes_off: str | None = None  # why lanes.play_lanes cannot serve the scenario (LANE_REASONS)


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
        kinds = lane_kinds(layout, f["value_slots"])
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
            play_lanes(key, r0, m, pl, words, second, lanes)
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
            setup(st, m, y, cs, m)
            play(st, m, y, cs, m)
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


# the expansion loop of the three codes (counts.code_expander, through V3: rules.declare)
_EXPAND = code_expander(declare)


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
        setup(st, m, y, cs, ev)
        play(st, m, y, cs, ev)
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
