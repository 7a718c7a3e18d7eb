"""The driver of the readiness lanes (lanes.py): ``run_chunk`` for a scenario whose
``kernel.Compiled.lanes_off`` is None.

Rounds go in blocks of ``lanes.LANES``:
``lanes_flush.play_block_packed`` plays a block side by side and leaves every round's
counts packed (``SA`` .. ``SF``, 32-bit words); a round it could not finish from its lane's bytes
is played again by ``rules.play_round`` (kernel.py's lean scalar player, ``play_lean``)
into column 0 of the counts array (any batch will do) and packed into its lane
(``lanes_flush.pack_column``); ``lanes_flush.flush_block`` then adds the block to the
sums straight from the packed counts.  A last block of fewer rounds is played by the
scalar player alone, each round packed into its lane as above, and flushed the same way,
``flush_block`` told how many lanes hold rounds (the others add nothing): the scalar
path's flush is not compiled into this one.  The sums are the scalar path's bit for bit
(tests/test_readiness_lanes.py)."""

from __future__ import annotations

import numpy as np

from simkit.metrics import Sums
from simkit.systems.readiness import counts, lanes, lanes_flush
from simkit.systems.readiness.codes import COUNT_COLUMNS, G_ORDER, G_ROUND, N_FIELDS
from simkit.systems.readiness.kernel import Compiled, driver_arguments, play_lean
from simkit.systems.stream import round_start
from simkit.systems.support import ENTRY, njit, unmanaged, with_columns

LANES = lanes.LANES


@njit(**ENTRY)
def run_rounds_lanes(
    key, first, n_rounds, P, T, GL, CS, W, G, KT, Y, F, L, EV, st, plan, s1, s2, sl, sx, tot, AB,
    FT, ACC, C, W64, WD, BY, S, POOL, RK, FIRST, ATT, WA, WA2, WB, WB2, KEYS, SA, SA2, SB, SB2, SF,
    V, packed,
):  # fmt: skip
    """``kernel.run_rounds_plain`` with blocks of LANES rounds played side by side
    (``packed``: ``lanes_flush.flush_plan``; ``V`` its words' scratch; ``ACC``, the
    scalar flush's, unused)."""
    key = unmanaged(key)
    P = with_columns(P, N_FIELDS)
    W = with_columns(W, N_FIELDS)
    CS = with_columns(CS, COUNT_COLUMNS)
    before_slots = counts.before_slots(plan)
    n = P.shape[0]
    order = G[G_ORDER]
    r = first
    end = first + n_rounds
    while r < end:
        nb = min(LANES, end - r)
        if nb == LANES:
            lanes_flush.play_block_packed(
                key, r, n, order, C, W64, WD, BY, S, POOL, RK, FIRST, ATT, WA, WA2, WB, WB2,
                KEYS, SA, SA2, SB, SB2, SF,
            )  # fmt: skip
        # the scalar player (one call site: a copy of it compiled, not two): every round
        # of a last block of fewer rounds, and a round that outran its lane's bytes, each
        # into column 0 of the counts array and packed into its lane
        for b in range(nb):
            if nb < LANES or S[lanes.OKS + np.uint64(b)] == 0:
                lanes.clear_column(n, CS, Y, F, 0)
                round_start(st, key, r + b)
                G[G_ROUND] = r + b
                play_lean(st, P, W, G, KT, T, GL, Y, np.uint64(0), CS, F, EV, 0)
                lanes_flush.pack_column(n, CS, Y, F, 0, b, SA, SA2, SB, SB2, SF)
        # flushed straight from its packed counts (a short block's other lanes add nothing)
        lanes_flush.flush_block(n, nb, SA, SA2, SB, SB2, SF, V, packed, s1, s2, sl, sx, tot, AB)
        r += nb
    for i in range(n):  # acts_before: 0 or 1 per cycle (kernel.run_rounds)
        for j in range(n):
            slot = before_slots[i, j]
            s1[slot] += AB[0, i, j]
            s2[slot] += AB[0, i, j]
            sl[slot] += AB[0, i, j] + AB[1, i, j]
    return 0


def run_chunk_lanes(
    compiled: Compiled, key: np.ndarray, n_rounds: int, sums: Sums, first: int = 0
) -> int:
    """``kernel.run_chunk`` on the lanes (no holds: no stalemate, the carry is 0)."""
    n = compiled.n
    C = lanes.lane_tables(compiled.params, compiled.targets)
    per = n * LANES
    packed = lanes_flush.flush_plan(compiled)
    return int(
        run_rounds_lanes(
            np.ascontiguousarray(key[:4], dtype=np.uint64),
            first,
            n_rounds,
            *driver_arguments(compiled, sums),
            C,
            np.zeros(lanes.LANE_WORDS * LANES, dtype=np.uint64),
            np.zeros(lanes.W_ROWS * LANES, dtype=np.uint32),
            np.zeros(lanes.LANE_BYTES * LANES, dtype=np.uint8),
            np.zeros(lanes.S_ROWS * LANES, dtype=np.uint32),
            *(np.zeros(per, dtype=np.uint32) for _ in range(14)),  # POOL .. KEYS, SA .. SF
            np.zeros(lanes_flush.scratch_size(packed), dtype=np.uint32),
            packed,
        )
    )
