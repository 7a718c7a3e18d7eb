"""Running sums over regeneration cycles, and the per-round steps every kernel shares.

Rounds are grouped into *cycles* (regeneration cycles): a cycle ends after every
round from which the next round starts afresh.  A system that carries state from one
round to the next (readiness, R8) has longer cycles; for the others every cycle is a
single round.  Cycles are independent and identically distributed, so for a count
with cycle sums ``y_c`` and cycle lengths ``L_c`` the per-round mean is
``R = sum(y) / sum(L)`` and its standard error comes from the sums kept here (see
metrics.estimates).  All sums are int64, so merging chunks in any order gives
bit-identical results.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

# Not cached on their own (metrics sits below simkit.systems and cannot use its cache):
# the kernels compile these into themselves and are cached, under a key of this file
# too, by simkit.systems.support.SourceTreeCache.


@dataclass
class Sums:
    """sum y, sum y^2, sum y*L per slot; cross sums per pair; (C, sum L, sum L^2)."""

    s1: np.ndarray
    s2: np.ndarray
    sl: np.ndarray
    sx: np.ndarray
    tot: np.ndarray

    @classmethod
    def zeros(cls, size: int, pairs: int) -> Sums:
        return cls(
            s1=np.zeros(size, np.int64),
            s2=np.zeros(size, np.int64),
            sl=np.zeros(size, np.int64),
            sx=np.zeros(pairs, np.int64),
            tot=np.zeros(3, np.int64),
        )

    def add(self, other: Sums) -> None:
        self.s1 += other.s1
        self.s2 += other.s2
        self.sl += other.sl
        self.sx += other.sx
        self.tot += other.tot

    @property
    def rounds(self) -> int:
        return int(self.tot[1])

    @property
    def cycles(self) -> int:
        return int(self.tot[0])

    def equals(self, other: Sums) -> bool:
        """Bit-for-bit equality of every sum."""
        return all(
            np.array_equal(getattr(self, k), getattr(other, k))
            for k in ("s1", "s2", "sl", "sx", "tot")
        )


@njit(nogil=True)
def aggregate_round(y, src, dst, op):
    """Fill a round's group and side slots from its combatant slots (Layout.aggregation).

    ``y`` holds ONE round's counts with its aggregate slots zero; a sum adds the
    members' counts, "any" keeps 1 if some member counts 1."""
    for k in range(src.size):  # no branch on the counts (a select)
        v = y[src[k]]
        d = dst[k]
        w = y[d]
        y[d] = w + v if op[k] == 0 else max(w, v)


@njit(nogil=True)
def flush_cycle(y, length, s1, s2, sl, sx, pa, pb, tot):
    """Add one finished cycle ``y`` (``length`` rounds) to the running sums; zero ``y``."""
    for k in range(pa.size):
        sx[k] += y[pa[k]] * y[pb[k]]
    for m in range(y.size):  # branch-free, so that it vectorises
        v = y[m]
        s1[m] += v
        s2[m] += v * v
        sl[m] += v * length
        y[m] = 0
    tot[0] += 1
    tot[1] += length
    tot[2] += length * length


def flush_rows(rows: np.ndarray, layout: object, lengths: np.ndarray | None = None) -> Sums:
    """The sums of per-round (or per-cycle) rows, as a kernel would give them.

    ``rows`` are complete rows (aggregate slots filled).  Each row is one cycle of
    ``lengths[k]`` rounds (default 1).  Used by tests and trace to check kernels.
    """
    pa, pb = layout.pair_indices()  # type: ignore[attr-defined]
    sums = layout.new_sums()  # type: ignore[attr-defined]
    y = np.zeros(rows.shape[1], np.int64)
    for k in range(rows.shape[0]):
        y[:] = rows[k]
        length = 1 if lengths is None else int(lengths[k])
        flush_cycle(y, length, sums.s1, sums.s2, sums.sl, sums.sx, pa, pb, sums.tot)
    return sums
