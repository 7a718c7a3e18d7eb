"""The counting engine of every kernel: from the counts of rounds to the metric sums.

A kernel plays rounds by its rules and writes what happened as *counts*; everything
after that is here, one memory convention for all three systems (below):

Count rows
    A round's (or a regeneration cycle's) counts are a row over the slots of its
    ``Layout``: int64, one entry per slot, the group and side slots filled from the
    combatants' by ``aggregate_round`` (metrics.sums, the definition of the sums).  A
    kernel that keeps many cycles before summing them (readiness) keeps them as a
    *batch*: row ``r`` of cycle ``b`` at ``(r << lb) + b`` of one counts array of
    ``BATCH_DTYPE``, so that every loop runs along the cycles of one row and vectorises.

The slot plan
    ``Layout.count_slots[i, k]`` is the slot of count ``k`` of combatant ``i``; the plan
    of a kernel says what happens to every slot: summed every round or cycle
    (``flushed``), 0 or 1 (``binary_slots``: its sum of squares is its sum), constant,
    an alias of another, or recovered from an outcome code.  ``aggregation_entries``
    picks the ``Layout.aggregation`` entries that fill a set of slots; ``pack_plan``
    lays lists of slots and flags out as one int64 vector a kernel reads through a
    header (``plan[h]``: where list ``h`` starts, the next list's start its end).
    A slot the same in every round is *constant*, one equal to another an *alias*
    (``constant_units`` and ``alias_units`` extend both to the group and side slots);
    a kernel sums neither, and ``close_chunk`` fills in their sums after the chunk.

Flushes into regeneration-cycle sums (metrics.sums.Sums)
    ``flush_cycle`` adds one finished cycle's row; ``flush_weighted`` adds ``w`` one-round
    cycles with the same row (an outcome met ``w`` times); ``aggregate_batch``,
    ``flush_batch`` and ``clear_batch`` do the same for a batch of cycles.  All sums are
    int64, so the order of the cycles never changes a bit of them.  A batch's counts are
    ``BATCH_DTYPE`` (uint16): a kernel that keeps one checks that a cycle's counts fit
    (``batch_fits`` of its bound on them).

Outcome histograms
    A round whose counts follow from a small *outcome code* is counted as that code, in
    one of two histograms; ``histogram_kind(space)`` picks which by the number of codes
    there can be (the one place that decides, ``DENSE_MAX``):

    * ``DENSE``: an int64 vector of one entry per code, the code its index
      (``new_dense_histogram``, ``dense_add``: one add, no probing).  A kernel may keep
      several code spaces in one vector, each at an offset of its own.
    * ``HASHED``: an open-addressing hash table of (code, rounds) pairs
      (``new_histogram``, ``histogram_add``) that starts small, doubles while more than
      half full, up to ``HISTOGRAM_MAX_BITS``; beyond that ``histogram_add`` says so and
      the kernel empties it into the sums (``histogram_clear`` after).

    Either is emptied into the sums by the same loop, made for a kernel's *decoder*
    (``decode(code, ctx, y)``: writes the round of ``code`` into the row ``y`` from the
    kernel's ``ctx``, a tuple of its arrays): ``expander(decode)`` returns that loop,
    ``expand(h, dense, ctx, y, slots, s1, s2, sl, sx, pa, pb, tot)`` (``dense``: which
    kind ``h`` is): every code met ``w`` times is decoded once and its row added ``w``
    times (``flush_weighted`` of the ``slots`` only, and the cross sums of
    ``pa``/``pb``; every slot in order: ``flush_weighted`` itself), then the histogram
    is empty.  It is an inner function: a kernel's cached entry point calls it.

The memory convention (every kernel's counting side)
    * a *count row* is int64, one entry per slot of the ``Layout`` (``Layout.size``),
      count ``k`` of combatant ``i`` at ``Layout.count_slots[i, k]``, the group and side
      slots filled by ``aggregate_round`` (or, along a batch, ``aggregate_batch``);
    * a *batch* of cycles is one ``BATCH_DTYPE`` (uint16) array, row-major by slot:
      slot ``s`` of cycle ``b`` at ``(s << lb) + b``, the kernel's bound on a cycle's
      counts checked by ``batch_fits``: the narrowest type that holds a cycle's counts
      (half the memory of int32 keeps a batch in the cache, and a flush streams
      through it; with int64 batches a readiness round took 1.19 times as long with
      four combatants, 1.04 with two hundred).  Only a batch is narrow: a count row,
      and every sum, is int64;
    * the *plan*, every list of slots and every flag a kernel reads while it counts, is
      ONE int64 vector made by ``pack_plan`` and read through its header (list ``h`` is
      ``plan[plan[h] : plan[h + 1]]``, a view), its ``H_*`` names in the system's
      counts module (a table of ``m`` rows is ``m`` lists of one length, one after the
      other, read as one [m, k] view);
    * *histograms* are this module's (dense or hashed, ``histogram_kind``), emptied
      into the sums by its expansion loops through the kernel's decoder; no kernel
      keeps an outcome table of its own;
    * the *sums* are ``metrics.sums.Sums`` (int64 s1, s2, sl, sx, tot).
    The rules' own memory is each kernel's (vtm: the vector ``m``, vtm/memory.py;
    perception: the table ``tab``, perception/table.py, which also holds the count
    slots its round function writes through; readiness: its P/W/G arrays), and so is
    each system's counting code proper (vtm/counts.py, perception/counts.py,
    readiness/counts.py).  Every kernel follows the convention throughout.

Fast paths and their reasons
    A kernel's fast path (rounds played side by side, "lanes") serves only some
    scenarios.  Its kernel declares what a lane carries (``LANE_CARRIES``) and a
    ``why_not_lanes`` that returns ``None`` or the *name* of the first reason it cannot
    serve the scenario (``first_reason``), kept on the compiled scenario
    (``Compiled.lanes_off``) for the tests to read: a count the lanes do not carry turns
    them off by a named reason, never silently.

tests/test_counting.py tests this module directly.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from simkit.metrics.layout import OP_ANY, Layout
from simkit.metrics.registry import PROBABILITY, metric
from simkit.metrics.sums import aggregate_round, flush_cycle
from simkit.systems.support import JIT, njit

__all__ = [
    "BATCH_DTYPE",
    "DENSE",
    "DENSE_MAX",
    "HASHED",
    "HISTOGRAM_EMPTY",
    "HISTOGRAM_HEADER",
    "HISTOGRAM_MAX_BITS",
    "aggregate_batch",
    "aggregate_round",
    "aggregation_entries",
    "alias_units",
    "batch_fits",
    "binary_slots",
    "clear_batch",
    "close_chunk",
    "constant_units",
    "dense_add",
    "expander",
    "first_reason",
    "flush_batch",
    "flush_cycle",
    "flush_weighted",
    "histogram_add",
    "histogram_capacity",
    "histogram_clear",
    "histogram_kind",
    "histogram_used",
    "new_dense_histogram",
    "new_histogram",
    "pack_plan",
    "unit_members",
]

# Inner functions: compiled into the kernels' cached entry points (not cached apart).
# COLD: those only jitted code calls (tests call the histogram's from Python): no Python
# or C wrapper, each of which numba would lower and LLVM optimise and emit per function.
INNER = {**JIT, "cache": False}
COLD = {**INNER, "no_cpython_wrapper": True, "no_cfunc_wrapper": True}


# --------------------------------------------------------------------------- slot plan
def binary_slots(layout: Layout) -> set[int]:
    """The slots that are 0 or 1 in every round (their sum of squares is their sum):
    acts_before, the distributions, the scenario counts, the combatants' probability
    counts and the "any member" group and side slots."""
    out = set(range(layout.before_offset, layout.unit_offset))
    for i in range(layout.n):
        for m, name in enumerate(layout.counts):
            if metric(name).kind == PROBABILITY:
                out.add(int(layout.count_slots[i, m]))
    _, dst, op = layout.aggregation
    out |= {int(d) for d, o in zip(dst, op, strict=True) if o == OP_ANY}
    return out


def aggregation_entries(
    layout: Layout, dsts: set[int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The entries of ``Layout.aggregation`` that fill the slots ``dsts``."""
    src, dst, op = layout.aggregation
    keep = np.array([int(d) in dsts for d in dst], dtype=bool)
    return src[keep], dst[keep], op[keep]


def pack_plan(parts: list, flags: dict[int, int | bool], header: int) -> np.ndarray:
    """Lists and flags as one int64 vector: ``plan[h]`` is where list ``h`` starts (lists
    ``0 .. len(parts) - 1``), ``plan[len(parts)]`` where the last ends, then the flags
    at their header places; the lists follow the ``header`` entries."""
    plan = np.zeros(header + sum(len(x) for x in parts), dtype=np.int64)
    at = header
    for h, part in enumerate(parts):
        plan[h] = at
        plan[at : at + len(part)] = part
        at += len(part)
    plan[len(parts)] = at
    for h, flag in flags.items():
        plan[h] = flag
    return plan


# --------------------------------------------------------------------------- constants
def unit_members(layout: Layout) -> tuple[dict[int, list[int]], dict[int, int]]:
    """Each group and side slot's member slots, and its OP_SUM / OP_ANY
    (``Layout.aggregation`` by destination)."""
    src, dst, op = layout.aggregation
    members: dict[int, list[int]] = {}
    for k in range(src.size):
        members.setdefault(int(dst[k]), []).append(int(src[k]))
    return members, {int(d): int(o) for d, o in zip(dst, op, strict=True)}


def constant_units(members: dict[int, list[int]], unit_op: dict[int, int], const: dict) -> None:
    """Add to ``const`` (slot: its value in every round) every group and side slot whose
    members are all constant."""
    for d, ms in members.items():
        if all(x in const for x in ms):
            values = [const[x] for x in ms]
            const[d] = max(values) if unit_op[d] == OP_ANY else sum(values)


def alias_units(members: dict[int, list[int]], unit_op: dict[int, int], alias: dict) -> None:
    """Add to ``alias`` (slot: the slot it equals in every round) every group and side
    slot whose members all alias the members of another one of the same kind."""
    for d, ms in members.items():
        targets = {alias.get(x) for x in ms}
        if None not in targets:
            units = {
                d2 for d2, ms2 in members.items()
                if unit_op[d2] == unit_op[d] and sorted(ms2) == sorted(alias[x] for x in ms)
            }  # fmt: skip
            if units:
                alias[d] = units.pop()


def close_chunk(sums, n_rounds, s1, s2, sx, binary, const_slots, const_values, alias_slots,
                alias_of, pa, pb) -> None:  # fmt: skip
    """Add a chunk of ``n_rounds`` one-round cycles to ``sums`` (metrics.sums.Sums) from
    what its kernel summed: ``s1`` of every slot but the constant and alias ones, ``s2``
    but those and the ``binary`` ones (0 or 1: s2 = s1), ``sx`` of the pairs whose slots
    both vary.  The rest follows: a constant slot ``c`` of value ``v`` sums ``n v`` and
    ``n v^2``, an alias the sums of its slot, a pair with a constant ``v`` sums ``v``
    times the other's ``s1``; ``sl`` is ``s1`` (every L is 1)."""
    s2[binary] = s1[binary]
    s1[const_slots] = n_rounds * const_values
    s2[const_slots] = n_rounds * const_values * const_values
    s1[alias_slots] = s1[alias_of]
    s2[alias_slots] = s2[alias_of]
    const = dict(zip(const_slots.tolist(), const_values.tolist(), strict=True))
    for k in range(pa.size):
        a, b = int(pa[k]), int(pb[k])
        if a in const and b in const:
            sx[k] = n_rounds * const[a] * const[b]
        elif a in const:
            sx[k] = const[a] * s1[b]
        elif b in const:
            sx[k] = const[b] * s1[a]
    sums.s1 += s1
    sums.s2 += s2
    sums.sl += s1
    sums.sx += sx
    sums.tot += np.array([n_rounds, n_rounds, n_rounds], np.int64)


# --------------------------------------------------------------------------- flushes
# A batch's counts (the convention, module docstring): uint16, the narrowest type that
# holds a cycle's counts (``batch_fits``).  A count row of one round stays int64.
BATCH_DTYPE = np.uint16


@njit(**COLD, link_only=True)
def flush_weighted(y, w, s1, s2, sl, sx, pa, pb, tot):
    """``w`` one-round cycles whose row is ``y``: ``flush_cycle(y, 1, ...)`` ``w`` times
    (``y`` is kept)."""
    for k in range(pa.size):
        sx[k] += w * y[pa[k]] * y[pb[k]]
    for m in range(y.size):
        v = y[m]
        s1[m] += w * v
        s2[m] += w * v * v
        sl[m] += w * v
    tot[0] += w
    tot[1] += w
    tot[2] += w


@njit(**COLD, link_only=True)
def aggregate_batch(Y, nb, lb, agg_sum, agg_any):
    """The group and side rows of cycles 0 .. nb - 1 of a batch (``1 << lb`` cycles a
    row): ``agg_sum`` [2, k] (source row, unit row) adds a member, ``agg_any`` [2, k]
    keeps "any member" of a probability count (``aggregate_round``, along the cycles)."""
    cycles = np.uint64(nb)  # unsigned row + b: no wraparound code, the loops vectorise
    for k in range(agg_sum.shape[1]):
        dst = np.uint64(agg_sum[1, k] << lb)
        src = np.uint64(agg_sum[0, k] << lb)
        for b in range(cycles):
            Y[dst + b] += Y[src + b]
    for k in range(agg_any.shape[1]):
        dst = np.uint64(agg_any[1, k] << lb)
        src = np.uint64(agg_any[0, k] << lb)
        for b in range(cycles):
            Y[dst + b] = max(Y[dst + b], Y[src + b])


@njit(**COLD, link_only=True)
def flush_batch(Y, L, nb, lb, single, ranges, pair_rows, s1, s2, sl, sx, tot):
    """Add the rows of cycles 0 .. nb - 1 of a batch to the running sums: ``ranges`` [3,
    k] (row, slot, 1 if the count is 0 or 1 in a round) of every row summed,
    ``pair_rows`` [2, p] the rows of every cross sum, ``L`` the cycles' rounds
    (``single``: every one is 1, so ``y L = y``).  ``flush_cycle`` of every cycle's row,
    one pass along the cycles per row."""
    cycles = np.uint64(nb)
    for e in range(ranges.shape[1]):
        ys = np.uint64(ranges[0, e] << lb)
        slot = ranges[1, e]
        a1 = 0
        if single and ranges[2, e] != 0:  # y is 0 or 1, and L is 1: y^2 = y L = y
            for b in range(cycles):
                a1 += np.int64(Y[ys + b])
            s1[slot] += a1
            s2[slot] += a1
            sl[slot] += a1
            continue
        a2 = 0
        if single:  # L is 1: y L = y
            for b in range(cycles):
                v = np.int64(Y[ys + b])
                a1 += v
                a2 += v * v
            s1[slot] += a1
            s2[slot] += a2
            sl[slot] += a1
            continue
        al = 0
        for b in range(cycles):
            v = np.int64(Y[ys + b])
            a1 += v
            a2 += v * v
            al += v * L[b]
        s1[slot] += a1
        s2[slot] += a2
        sl[slot] += al
    for k in range(pair_rows.shape[1]):
        ya = np.uint64(pair_rows[0, k] << lb)
        yb = np.uint64(pair_rows[1, k] << lb)
        acc = 0
        for b in range(cycles):
            acc += np.int64(Y[ya + b]) * np.int64(Y[yb + b])
        sx[k] += acc
    for b in range(cycles):
        tot[0] += 1
        tot[1] += L[b]
        tot[2] += L[b] * L[b]


def batch_fits(bound: int) -> bool:
    """A batch of cycles whose counts are each at most ``bound`` fits BATCH_DTYPE."""
    return 0 <= bound <= np.iinfo(BATCH_DTYPE).max


@njit(**COLD, link_only=True)
def clear_batch(Y, L, nb):
    """Zero the counts array and the rounds of cycles 0 .. nb - 1."""
    for b in range(nb):
        L[b] = 0
    for m in range(Y.size):
        Y[m] = 0


# --------------------------------------------------------------------------- histograms
DENSE, HASHED = "dense", "hashed"
DENSE_MAX = 1 << 16  # code spaces up to this size are counted densely (512 KiB at most)


def histogram_kind(space: int) -> str:
    """The histogram of a code space of ``space`` codes (0 .. space - 1): DENSE up to
    DENSE_MAX codes, HASHED beyond.  The one place this is decided."""
    return DENSE if space <= DENSE_MAX else HASHED


def new_dense_histogram(*spaces: int) -> np.ndarray:
    """An empty dense histogram of one or more code spaces (``spaces``: the number of
    codes of each), one after the other in one int64 vector: one entry per code."""
    for space in spaces:
        if histogram_kind(space) != DENSE:
            raise ValueError(f"{space} codes: more than DENSE_MAX ({DENSE_MAX}), use new_histogram")
    return np.zeros(max(sum(spaces), 1), np.int64)


@njit(**INNER, forceinline=True)
def dense_add(h, code, count):
    """Add ``count`` rounds of outcome ``code`` (an index of ``h``)."""
    h[code] += count


def expander(decode):
    """The loop that empties an outcome histogram into the sums through ``decode``
    (module docstring): ``expand(h, dense, ctx, y, slots, s1, s2, sl, sx, pa, pb,
    tot)``, ``dense``: ``h`` is a dense histogram, else a hashed one."""

    @njit(**INNER, inline="always")
    def expand(h, dense, ctx, y, slots, s1, s2, sl, sx, pa, pb, tot):
        every = slots.size == y.size  # every slot, in order: flush_weighted (it vectorises)
        for e in range(h.size if dense else h[0] + 1):
            if dense:
                code = e
                w = h[e]
                h[e] = 0
            else:  # an empty entry holds 0 rounds
                code = h[HISTOGRAM_HEADER + 2 * e]
                w = h[HISTOGRAM_HEADER + 2 * e + 1]
            if w == 0:
                continue
            decode(code, ctx, y)
            if every:
                flush_weighted(y, w, s1, s2, sl, sx, pa, pb, tot)
                continue
            for k in range(pa.size):  # flush_weighted of the slots only
                sx[k] += w * y[pa[k]] * y[pb[k]]
            for k in range(slots.size):
                v = y[slots[k]]
                s1[slots[k]] += w * v
                s2[slots[k]] += w * v * v
                sl[slots[k]] += w * v
            tot[0] += w
            tot[1] += w
            tot[2] += w
        if not dense:
            histogram_clear(h)

    return expand


# ``t``: int64, HISTOGRAM_HEADER entries (capacity - 1, outcomes held, largest capacity),
# then (code, rounds) pairs: entry h at t[HISTOGRAM_HEADER + 2 h].
HISTOGRAM_HEADER = 3
HISTOGRAM_MAX_BITS = 16  # at most 65,536 outcomes held before the kernel empties the table
HISTOGRAM_EMPTY = -1
_MULTIPLIER = 0x9E3779B1  # multiplicative hashing (codes below 2**31: no overflow)
_SHIFT = 16


def new_histogram(bits: int = 12, max_bits: int | None = None) -> np.ndarray:
    """An empty outcome histogram of ``1 << bits`` entries, growing to ``1 << max_bits``
    (default HISTOGRAM_MAX_BITS)."""
    most = 1 << (HISTOGRAM_MAX_BITS if max_bits is None else max_bits)
    size = min(1 << bits, most)
    t = np.empty(HISTOGRAM_HEADER + 2 * most, np.int64)  # the rest is set when grown into
    t[0], t[1], t[2] = size - 1, 0, most
    t[HISTOGRAM_HEADER : HISTOGRAM_HEADER + 2 * size : 2] = HISTOGRAM_EMPTY
    t[HISTOGRAM_HEADER + 1 : HISTOGRAM_HEADER + 2 * size : 2] = 0
    return t


@njit(**INNER)
def histogram_capacity(t):
    """Entries of the table now (codes are at t[HISTOGRAM_HEADER + 2 h], h below this)."""
    return t[0] + 1


@njit(**INNER)
def histogram_used(t):
    """Distinct outcomes held."""
    return t[1]


@njit(**COLD, forceinline=True)
def _insert(t, code, count):
    """Add ``count`` rounds of ``code``; True if the code is new."""
    mask = t[0]
    h = ((code * _MULTIPLIER) >> _SHIFT) & mask
    at = HISTOGRAM_HEADER + 2 * h
    while t[at] != code and t[at] != HISTOGRAM_EMPTY:
        h = (h + 1) & mask
        at = HISTOGRAM_HEADER + 2 * h
    new = t[at] == HISTOGRAM_EMPTY
    if new:
        t[at] = code
    t[at + 1] += count
    return new


@njit(**COLD)
def _grow(t):
    """Twice the entries, every outcome placed again."""
    size = t[0] + 1
    old = t[HISTOGRAM_HEADER : HISTOGRAM_HEADER + 2 * size].copy()
    for k in range(HISTOGRAM_HEADER, HISTOGRAM_HEADER + 4 * size, 2):
        t[k] = HISTOGRAM_EMPTY
        t[k + 1] = 0
    t[0] = 2 * size - 1
    for h in range(size):
        if old[2 * h] != HISTOGRAM_EMPTY:
            _insert(t, old[2 * h], old[2 * h + 1])


@njit(**INNER, forceinline=True)
def histogram_add(t, code, count):
    """Add ``count`` rounds of outcome ``code`` (0 <= code < 2**31).  Returns True when
    the table is more than half full at its largest: the kernel then empties it
    (``histogram_clear`` after flushing every outcome)."""
    if _insert(t, code, count):
        t[1] += 1
        if 2 * t[1] > t[0] + 1:
            if t[0] + 1 < t[2]:
                _grow(t)
            else:
                return True
    return False


@njit(**INNER)
def histogram_clear(t):
    """No outcome held (the capacity stays)."""
    for k in range(HISTOGRAM_HEADER, HISTOGRAM_HEADER + 2 * (t[0] + 1), 2):
        t[k] = HISTOGRAM_EMPTY
        t[k + 1] = 0
    t[1] = 0


# --------------------------------------------------------------------------- reasons
def first_reason(checks: Iterable[tuple[str, bool]]) -> str | None:
    """The name of the first check that fails (``(name, holds)`` pairs), or None."""
    for name, holds in checks:
        if not holds:
            return name
    return None
