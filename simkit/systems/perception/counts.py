"""System ``perception``: how the counts of its rounds are written and summed.

``count_round`` writes a played round's counts (in ``tab``, table.py) to the row
``y``; ``full_row`` the complete row (every count, acts_before, the distributions, the
group and side slots).  Two ways to sum them (kernel.py plays the rounds, by rules.py):

* the general path (``_run_general``) adds every round's row to chunk accumulators,
  acts_before in byte counters (``empty_bytes``);
* the histogram path (up to ``HIST_MAX_N`` combatants) counts each round's outcome code
  (every slot, every stated target, where P3's information runs break: ``CODE_*``) in
  an outcome histogram of counting.py, dense or hashed as ``counting.histogram_kind``
  decides by the size of the code space (``code_space``: dense up to 3 combatants);
  ``expand_outcomes`` (counting's loop through ``decode_row``)
  turn every outcome met back into its round and flush it with its number of rounds.
"""

from __future__ import annotations

import numpy as np

from simkit.metrics import Layout
from simkit.systems.base import NOBODY
from simkit.systems.counting import (
    aggregate_round,
    expander,
    pack_plan,
)
from simkit.systems.perception.table import (
    K_ACTIONS,
    K_ATTACKED_FIRST,
    K_DISCLOSED,
    K_FIRST,
    K_KNOWN,
    K_MADE,
    K_NO_ACTION,
    K_RECEIVED,
    K_UNDEFENDED,
    P_BEFORE,
    P_N,
    P_SIDES,
    T_AHEAD,
    T_DIST,
    T_MCOUNT,
    T_ORDER,
    T_PAR,
    T_RUN_END,
    T_SIDE,
    T_SLOT,
    T_SLOTS,
    T_TARGET,
    T_TARGETS,
    T_TLIST,
)
from simkit.systems.support import JIT, njit

ACTIONS_PER_ROUND = 1  # P4: everyone acts exactly once
FIXED_COUNTS = ("actions", "no_action")  # so these are the same in every round
DIST_SIZE = ACTIONS_PER_ROUND + 1  # actions_dist.0 and .1
BYTE_ROUNDS = 255  # acts_before byte counters are emptied before they can wrap
BYTE_BLOCK = 64  # acts_before byte counters per vector instruction (rows padded to these)
HIST_MAX_N = 4  # the histogram path takes up to 4 combatants
# An outcome (histogram path): per combatant 2 bits of slot and 2 of its target's place
# in its target list + 1 (0: no attack; the list has at most 3 entries), then one bit per
# acting position after which P3's information run breaks: at most 19 bits.
CODE_SLOT_BITS = 2
CODE_CHOICE_BITS = 2
CODE_BITS = CODE_SLOT_BITS + CODE_CHOICE_BITS  # per combatant
HASH_BITS = 12  # outcomes are counted in a counting.new_histogram of 4096 entries at first
HASH_MAX_BITS = 16  # growing to 65,536; emptied into the sums beyond half of that


# Header of Compiled.plan (counting.pack_plan): where each list starts, the next one's
# start its end
(
    H_SRC,  # Layout.aggregation: sources,
    H_DST,  # destinations,
    H_OP,  # and OP_SUM / OP_ANY
    H_VAR_SRC,  # its entries of the counts P4 leaves free (varying_aggregation)
    H_VAR_DST,
    H_VAR_OP,
    H_UNITS_VARYING,  # their group and side slots
    H_PA,  # Layout.pair_indices: the first slot of every cross sum,
    H_PB,  # and the second
    H_PAIR_BEFORE,  # the acts_before slots a cross sum reads
    H_END,
) = range(11)
H_SIZE = H_END + 1


def compile_plan(layout: Layout) -> np.ndarray:
    """The plan of a scenario: every list of slots the kernels read, in one vector."""
    varying = varying_aggregation(layout)
    return pack_plan(
        [*layout.aggregation, *varying["agg_varying"], varying["units_varying"],
         *layout.pair_indices(), pair_before(layout)],
        {},
        H_SIZE,
    )  # fmt: skip


def code_space(n: int) -> int:
    """The number of outcome codes of ``n`` combatants (the histogram path)."""
    return 1 << (CODE_BITS * n + max(n - 1, 0))


def varying_aggregation(layout: Layout) -> dict:
    """The entries of ``Layout.aggregation`` of every count but those P4 makes the same
    in every round (``FIXED_COUNTS``): ``_run_general`` aggregates those once a chunk."""
    src, dst, op = layout.aggregation
    per_unit = len(layout.aggregated)
    fixed = [layout.aggregated.index(c) for c in FIXED_COUNTS if c in layout.aggregated]
    keep = np.array([(int(d) - layout.unit_offset) % per_unit not in fixed for d in dst], bool)
    return {
        "agg_varying": (src[keep].copy(), dst[keep].copy(), op[keep].copy()),
        "units_varying": np.array(sorted({int(d) for d in dst[keep]}), dtype=np.int64),
    }


def pair_before(layout: Layout) -> np.ndarray:
    """The acts_before slots a cross sum reads (``_run_general`` counts acts_before in
    bytes and fills these into its row only for the cross sums)."""
    start = layout.before_offset
    before = {m for pair in layout.pairs for m in pair if start <= m < start + layout.n**2}
    return np.array(sorted(before), dtype=np.int64)


# --------------------------------------------------------------------------- counting
@njit(**JIT)
def count_round(tab, y):
    """The per-combatant counts of the round in ``tab``, written to their slots of ``y``
    (but actions and no_action, the same in every round: ``fixed_counts``)."""
    n = tab[T_PAR, P_N]
    for i in range(n):
        y[tab[T_SLOTS + K_FIRST, i]] = tab[T_SLOT, i] == 0
        y[tab[T_SLOTS + K_ATTACKED_FIRST, i]] = 0
        y[tab[T_SLOTS + K_MADE, i]] = tab[T_TARGET, i] != NOBODY
        y[tab[T_SLOTS + K_RECEIVED, i]] = 0
        y[tab[T_SLOTS + K_UNDEFENDED, i]] = 0
    for s in range(tab[T_PAR, P_SIDES]):
        tab[T_AHEAD, s] = 0
    # P3, opponents only: i learns everyone after its information run, and everyone
    # before its run learns i's first action.
    p = 0
    while p < n:
        q = tab[T_RUN_END, p]
        for k in range(p, q):
            i = tab[T_ORDER, k]
            y[tab[T_SLOTS + K_DISCLOSED, i]] = p - tab[T_AHEAD, tab[T_SIDE, i]] > 0
        for k in range(p, q):
            tab[T_AHEAD, tab[T_SIDE, tab[T_ORDER, k]]] += 1
        for k in range(p, q):
            i = tab[T_ORDER, k]
            s = tab[T_SIDE, i]
            y[tab[T_SLOTS + K_KNOWN, i]] = (n - q) - (tab[T_MCOUNT, s] - tab[T_AHEAD, s])
        p = q
    # P4: every stated attack is carried out; nothing defends in this system
    for i in range(n):
        t = tab[T_TARGET, i]
        if t != NOBODY:
            y[tab[T_SLOTS + K_RECEIVED, t]] += 1
            y[tab[T_SLOTS + K_UNDEFENDED, t]] += 1
            # attacked before acting (a shared slot is not "before"); no branch on the slots
            m = tab[T_SLOTS + K_ATTACKED_FIRST, t]
            y[m] = max(y[m], np.int64(tab[T_SLOT, i] < tab[T_SLOT, t]))


@njit(**JIT)
def fixed_counts(tab, y, n):
    """The counts that are the same in every round, P4: exactly one action each
    (``actions`` 1, ``no_action`` 0, ``actions_dist.1``)."""
    for i in range(n):
        y[tab[T_SLOTS + K_ACTIONS, i]] = ACTIONS_PER_ROUND
        y[tab[T_SLOTS + K_NO_ACTION, i]] = 0
        for k in range(DIST_SIZE):
            y[tab[T_DIST, i] + k] = k == ACTIONS_PER_ROUND


@njit(**JIT)
def full_row(tab, src, dst, op, y):
    """The complete row of the round in ``tab``: counts, acts_before, distributions
    and the group and side slots (``aggregate_round``)."""
    n = tab[T_PAR, P_N]
    for m in range(y.size):
        y[m] = 0
    count_round(tab, y)
    before = tab[T_PAR, P_BEFORE]
    for i in range(n):
        for j in range(n):
            y[before + i * n + j] = tab[T_SLOT, i] < tab[T_SLOT, j]
    fixed_counts(tab, y, n)
    aggregate_round(y, src, dst, op)


@njit(**JIT)
def empty_bytes(before8, acc1, before, n):
    """acts_before's byte counters (rows of ``before8.size // n``) into ``acc1``; zeroed."""
    stride = before8.size // n
    for i in range(n):
        for j in range(n):
            acc1[before + i * n + j] += before8[i * stride + j]
    for m in range(before8.size):
        before8[m] = 0


# --------------------------------------------------------------------------- run: histogram
@njit(**JIT)
def _decode(code, tab):
    """The round of an outcome code back in ``tab``: slots, targets, the acting order
    (by slot, slot-mates in scenario order) and the information runs."""
    n = tab[T_PAR, P_N]
    for i in range(n):
        field = code >> (CODE_BITS * i)
        tab[T_SLOT, i] = field & ((1 << CODE_SLOT_BITS) - 1)
        choice = (field >> CODE_SLOT_BITS) & ((1 << CODE_CHOICE_BITS) - 1)
        tab[T_TARGET, i] = tab[T_TARGETS + tab[T_TLIST, i], choice - 1] if choice > 0 else NOBODY
    p = 0
    for s in range(n):
        for i in range(n):
            if tab[T_SLOT, i] == s:
                tab[T_ORDER, p] = i
                p += 1
    for p in range(n - 1, -1, -1):
        if p == n - 1 or (code >> (CODE_BITS * n + p)) & 1:
            tab[T_RUN_END, p] = p + 1
        else:
            tab[T_RUN_END, p] = tab[T_RUN_END, p + 1]


@njit(**JIT, forceinline=True)
def decode_row(code, ctx, y):
    """The decoder of counting's expansion loops: the complete row of the round of
    outcome ``code``; ``ctx``: (tab, and Layout.aggregation's src, dst, op)."""
    tab = ctx[0]
    _decode(code, tab)
    full_row(tab, ctx[1], ctx[2], ctx[3], y)


expand_outcomes = expander(decode_row)
