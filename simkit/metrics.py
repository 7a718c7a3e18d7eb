"""Metric layout, running sums and estimates with confidence intervals.

A kernel adds each round's counts into a vector ``y`` laid out by :class:`Layout`.
Rounds are grouped into *cycles* (regeneration cycles): a cycle ends after every
round from which the next round starts afresh.  Only the readiness system carries
state across rounds (R8: a stalemate round forbids holds in the next one), so its
cycles are one round, or a stalemate round plus the forced round after it; for the
other systems every cycle is a single round.  Cycles are independent and identically
distributed, so for a metric with cycle sums ``y_c`` and cycle lengths ``L_c`` the
per-round mean is ``R = sum(y) / sum(L)`` and its standard error is

    se^2 = C / (C - 1) * sum((y_c - R L_c)^2) / sum(L)^2        (C cycles)

which reduces to the usual ``s / sqrt(N)`` when every cycle is one round.  Ratio
metrics ``A / B`` (``hasty_share``, ``hasty_scale``) are ratios of two cycle sums
and use the same delta-method formula with ``B`` in place of ``L``.

All sums are int64, so merging chunks in any order gives bit-identical results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

Z95 = 1.959963984540054

# Metrics that are probabilities (their intervals are clipped to [0, 1]).
PROBABILITIES = frozenset(
    {
        "first_action",
        "no_action",
        "attacked_before_acting",
        "hasty_share",
        "intent_disclosed",
        "stalemate",
        "simultaneous",
    }
)


@dataclass(frozen=True)
class Layout:
    """Where each count lives in a kernel's per-round vector.

    Per combatant ``i`` (in scenario order): ``counts`` at ``i * len(counts)``; then
    the ``acts_before`` matrix (``i`` before ``j``) at ``n * P + i * n + j``; then
    each combatant's distribution of ``actions`` (k = 0 .. ``dist_sizes[i] - 1``);
    then the scenario-wide counts.
    """

    names: tuple[str, ...]
    counts: tuple[str, ...]
    dist_sizes: tuple[int, ...]
    scenario_counts: tuple[str, ...]
    ratios: tuple[tuple[str, str, str], ...] = ()
    hidden: frozenset[str] = frozenset()

    @property
    def n(self) -> int:
        return len(self.names)

    @property
    def per_combatant(self) -> int:
        return len(self.counts)

    def count_index(self, i: int, metric: str) -> int:
        return i * self.per_combatant + self.counts.index(metric)

    def before_index(self, i: int, j: int) -> int:
        return self.n * self.per_combatant + i * self.n + j

    @property
    def dist_offsets(self) -> np.ndarray:
        start = self.n * self.per_combatant + self.n * self.n
        return np.concatenate([[0], np.cumsum(self.dist_sizes)])[:-1].astype(np.int64) + start

    def dist_index(self, i: int, k: int) -> int:
        return int(self.dist_offsets[i]) + k

    @property
    def scenario_offset(self) -> int:
        return self.n * self.per_combatant + self.n * self.n + sum(self.dist_sizes)

    @property
    def size(self) -> int:
        return self.scenario_offset + len(self.scenario_counts)

    def pair_indices(self) -> tuple[np.ndarray, np.ndarray]:
        """Indices (numerator, denominator) of every ratio metric, per combatant."""
        a, b = [], []
        for i in range(self.n):
            for _, num, den in self.ratios:
                a.append(self.count_index(i, num))
                b.append(self.count_index(i, den))
        return np.array(a, dtype=np.int64), np.array(b, dtype=np.int64)

    def new_sums(self) -> Sums:
        pa, pb = self.pair_indices()
        return Sums(
            s1=np.zeros(self.size, np.int64),
            s2=np.zeros(self.size, np.int64),
            sl=np.zeros(self.size, np.int64),
            sx=np.zeros(pa.size, np.int64),
            tot=np.zeros(3, np.int64),
        )


@dataclass
class Sums:
    """Running sums over cycles: sum y, sum y^2, sum y*L, ratio cross sums, (C, sum L, sum L^2)."""

    s1: np.ndarray
    s2: np.ndarray
    sl: np.ndarray
    sx: np.ndarray
    tot: np.ndarray

    def add(self, other: Sums) -> None:
        self.s1 += other.s1
        self.s2 += other.s2
        self.sl += other.sl
        self.sx += other.sx
        self.tot += other.tot

    @property
    def rounds(self) -> int:
        return int(self.tot[1])


@njit(cache=True, nogil=True)
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


@dataclass(frozen=True)
class Estimate:
    mean: float
    se: float
    ci_low: float
    ci_high: float

    def as_dict(self) -> dict[str, float | None]:
        return {k: _json_float(v) for k, v in self.__dict__.items()}


def _json_float(v: float) -> float | None:
    return None if (v is None or math.isnan(v)) else float(v)


def _estimate(
    sa: float,
    saa: float,
    sab: float,
    sb: float,
    sbb: float,
    cycles: int,
    probability: bool,
) -> Estimate:
    """Ratio ``sum(a) / sum(b)`` of cycle sums with its delta-method interval."""
    if sb == 0:
        nan = float("nan")
        return Estimate(nan, nan, nan, nan)
    r = sa / sb
    ss = saa - 2.0 * r * sab + r * r * sbb
    ss = max(ss, 0.0)
    se = math.sqrt(ss * cycles / (cycles - 1)) / sb if cycles > 1 else float("nan")
    lo, hi = r - Z95 * se, r + Z95 * se
    if probability:
        lo, hi = max(lo, 0.0), min(hi, 1.0)
    return Estimate(r, se, lo, hi)


def mean_estimate(sums: Sums, m: int, probability: bool = False) -> Estimate:
    """Per-round mean of count ``m``."""
    return _estimate(
        float(sums.s1[m]),
        float(sums.s2[m]),
        float(sums.sl[m]),
        float(sums.tot[1]),
        float(sums.tot[2]),
        int(sums.tot[0]),
        probability,
    )


def ratio_estimate(sums: Sums, a: int, b: int, pair: int, probability: bool) -> Estimate:
    """Ratio of the per-round means of counts ``a`` and ``b`` (pair index ``pair``)."""
    return _estimate(
        float(sums.s1[a]),
        float(sums.s2[a]),
        float(sums.sx[pair]),
        float(sums.s1[b]),
        float(sums.s2[b]),
        int(sums.tot[0]),
        probability,
    )


def estimates(layout: Layout, sums: Sums) -> list[tuple[str, str, Estimate]]:
    """Every public metric as (combatant, metric, estimate) rows, in a stable order.

    Scenario metrics have the combatant ``""``.
    """
    rows: list[tuple[str, str, Estimate]] = []
    pair = 0
    for i, name in enumerate(layout.names):
        for metric in layout.counts:
            if metric in layout.hidden:
                continue
            m = layout.count_index(i, metric)
            rows.append((name, metric, mean_estimate(sums, m, metric in PROBABILITIES)))
        for ratio, num, den in layout.ratios:
            a, b = layout.count_index(i, num), layout.count_index(i, den)
            rows.append((name, ratio, ratio_estimate(sums, a, b, pair, ratio in PROBABILITIES)))
            pair += 1
        for j, other in enumerate(layout.names):
            if j != i:
                rows.append(
                    (
                        name,
                        f"acts_before.{other}",
                        mean_estimate(sums, layout.before_index(i, j), True),
                    )
                )
        for k in range(layout.dist_sizes[i]):
            rows.append(
                (name, f"actions_dist.{k}", mean_estimate(sums, layout.dist_index(i, k), True))
            )
    for k, metric in enumerate(layout.scenario_counts):
        rows.append(
            ("", metric, mean_estimate(sums, layout.scenario_offset + k, metric in PROBABILITIES))
        )
    return rows
