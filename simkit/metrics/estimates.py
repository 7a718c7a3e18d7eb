"""Estimates with standard errors and 95% intervals, from running sums.

For a count with cycle sums ``y_c`` and cycle lengths ``L_c`` (C cycles) the
per-round mean is ``R = sum(y) / sum(L)`` and

    se^2 = C / (C - 1) * sum((y_c - R L_c)^2) / sum(L)^2

which reduces to the usual ``s / sqrt(N)`` when every cycle is one round.  A ratio
metric ``A / B`` (``hasty_share``, an action economy, a tune target) is a ratio of two
cycle sums and uses the same delta-method formula with ``B`` in place of ``L``.
Probabilities (and bounded ratios) have their intervals clipped to [0, 1].
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simkit.metrics.layout import COMBATANT, SCENARIO, SIDE, VERSUS, Layout, Source
from simkit.metrics.registry import ACTION_ECONOMY, metric
from simkit.metrics.sums import Sums

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Estimate:
    """A mean with its standard error and 95% confidence interval (NaN: no value)."""

    mean: float
    se: float
    ci_low: float
    ci_high: float

    def as_dict(self) -> dict[str, float | None]:
        return {k: _json_float(v) for k, v in self.__dict__.items()}

    @property
    def half_width(self) -> float:
        return Z95 * self.se

    def covers(self, value: float) -> bool:
        return self.ci_low <= value <= self.ci_high


NAN_ESTIMATE = Estimate(math.nan, math.nan, math.nan, math.nan)


def _json_float(v: float) -> float | None:
    return None if (v is None or math.isnan(v)) else float(v)


def ratio_of_sums(
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
        return NAN_ESTIMATE
    r = sa / sb
    ss = saa - 2.0 * r * sab + r * r * sbb
    ss = max(ss, 0.0)
    se = math.sqrt(ss * cycles / (cycles - 1)) / sb if cycles > 1 else math.nan
    lo, hi = r - Z95 * se, r + Z95 * se
    if probability:
        lo, hi = max(lo, 0.0), min(hi, 1.0)
    return Estimate(r, se, lo, hi)


def mean_estimate(sums: Sums, m: int, probability: bool = False) -> Estimate:
    """Per-round mean of slot ``m``."""
    return ratio_of_sums(
        float(sums.s1[m]),
        float(sums.s2[m]),
        float(sums.sl[m]),
        float(sums.tot[1]),
        float(sums.tot[2]),
        int(sums.tot[0]),
        probability,
    )


def pair_estimate(layout: Layout, sums: Sums, a: int, b: int, probability: bool) -> Estimate:
    """Ratio of the per-round means of slots ``a`` and ``b`` (a kept pair)."""
    try:
        k = layout.pair_index[(a, b)]
    except KeyError:
        raise KeyError(
            f"no cross sum kept for {layout.slot_label(a)} / {layout.slot_label(b)}"
        ) from None
    return ratio_of_sums(
        float(sums.s1[a]),
        float(sums.s2[a]),
        float(sums.sx[k]),
        float(sums.s1[b]),
        float(sums.s2[b]),
        int(sums.tot[0]),
        probability,
    )


ROUNDS = -1  # "denominator": the number of rounds (a per-round mean)


@dataclass(frozen=True)
class MetricSlots:
    """Where one reported number comes from: ``sum(y[num]) / sum(y[den])`` (``den`` is
    ``ROUNDS`` for a per-round mean)."""

    who: str
    metric: str
    num: int
    den: int
    probability: bool


def _source_slots(layout: Layout, source: Source, name: str) -> tuple[int, int]:
    m = metric(name)
    if m is ACTION_ECONOMY:
        versus = layout.source(VERSUS, source.name)
        return layout.slot(source, "actions"), layout.slot(versus, "actions")
    if m.kind == "ratio":
        num = m.numerator + name[len(m.name) :]  # hasty_scale_ge.3 -> hasty_ge.3
        return layout.slot(source, num), layout.slot(source, m.denominator)
    return layout.slot(source, name), ROUNDS


def metric_slots(layout: Layout, level: str = COMBATANT) -> list[MetricSlots]:
    """Every reported number of ``level`` in a stable order, with its slots.

    ``"combatant"``: per combatant its counts (hidden ones left out), its ratios,
    ``acts_before.X`` for every other combatant and ``actions_dist.k``; then the scenario
    metrics with the combatant ``""``.  ``"group"`` / ``"side"``: per group or side every
    aggregated count and ratio, and per side its ``action_economy``.
    """
    out: list[MetricSlots] = []
    if level == COMBATANT:
        for i, name in enumerate(layout.names):
            src = layout.source(COMBATANT, name)
            for count in layout.counts:
                m = metric(count)
                if not m.hidden:
                    out.append(
                        MetricSlots(name, count, layout.slot(src, count), ROUNDS, m.is_probability)
                    )
            for ratio, _, _ in layout.ratios:
                a, b = _source_slots(layout, src, ratio)
                out.append(MetricSlots(name, ratio, a, b, metric(ratio).is_probability))
            for j, other in enumerate(layout.names):
                if j != i:
                    out.append(
                        MetricSlots(
                            name, f"acts_before.{other}", layout.before_index(i, j), ROUNDS, True
                        )
                    )
            for k in range(layout.dist_sizes[i]):
                out.append(
                    MetricSlots(name, f"actions_dist.{k}", layout.dist_index(i, k), ROUNDS, True)
                )
        for count in layout.scenario_counts:
            out.append(
                MetricSlots(
                    "", count, layout.scenario_index(count), ROUNDS, metric(count).is_probability
                )
            )
        return out
    agg = set(layout.aggregated)
    for who in layout.level_names(level):
        src = layout.source(level, who)
        for count in layout.aggregated:
            m = metric(count)
            if not m.hidden:
                out.append(
                    MetricSlots(who, count, layout.slot(src, count), ROUNDS, m.is_probability)
                )
        for ratio, num, den in layout.ratios:
            if num in agg and den in agg:
                a, b = _source_slots(layout, src, ratio)
                out.append(MetricSlots(who, ratio, a, b, metric(ratio).is_probability))
        if level == SIDE and "actions" in layout.counts:
            a, b = _source_slots(layout, src, ACTION_ECONOMY.name)
            out.append(MetricSlots(who, ACTION_ECONOMY.name, a, b, False))
    return out


def slots_estimate(layout: Layout, sums: Sums, s: MetricSlots) -> Estimate:
    if s.den == ROUNDS:
        return mean_estimate(sums, s.num, s.probability)
    return pair_estimate(layout, sums, s.num, s.den, s.probability)


def source_estimate(layout: Layout, sums: Sums, source: Source, name: str) -> Estimate:
    """The estimate of metric ``name`` for a combatant, group or side."""
    a, b = _source_slots(layout, source, name)
    prob = metric(name).is_probability
    return mean_estimate(sums, a, prob) if b == ROUNDS else pair_estimate(layout, sums, a, b, prob)


Row = tuple[str, str, Estimate]


def estimates(layout: Layout, sums: Sums) -> list[Row]:
    """Every per-combatant and scenario metric as (combatant, metric, estimate) rows
    (the order of ``metric_slots``); scenario metrics have the combatant ``""``."""
    return [(s.who, s.metric, slots_estimate(layout, sums, s)) for s in metric_slots(layout)]


def level_estimates(layout: Layout, sums: Sums, level: str) -> list[Row]:
    """Every metric per group or side (``level``): (name, metric, estimate) rows."""
    if level == SCENARIO:
        return [r for r in estimates(layout, sums) if r[0] == ""]
    if level == COMBATANT:
        return [r for r in estimates(layout, sums) if r[0] != ""]
    return [(s.who, s.metric, slots_estimate(layout, sums, s)) for s in metric_slots(layout, level)]


def t_quantile_975(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom.

    Exact (Abramowitz & Stegun 26.7.3-4, inverted by bisection) up to 200 d.f.; above,
    the Cornish-Fisher expansion, accurate to better than 1e-7 there.
    """
    if df < 1:
        raise ValueError(f"df must be >= 1, got {df}")
    z = Z95
    if df > 200:
        return (
            z
            + (z**3 + z) / (4 * df)
            + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
        )
    lo, hi = z, 20.0 if df > 1 else 100.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if _t_central(mid, df) < 0.95:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    return (lo + hi) / 2


def _t_central(t: float, df: int) -> float:
    """P(|T| < t) for Student's t with integer ``df`` (A&S 26.7.3 and 26.7.4)."""
    theta = math.atan(t / math.sqrt(df))
    s, c = math.sin(theta), math.cos(theta)
    if df % 2 == 1:
        total, term = 0.0, c
        for k in range(1, (df - 1) // 2 + 1):
            if k > 1:
                term *= c * c * (2 * k - 2) / (2 * k - 1)
            total += term
        return 2 / math.pi * (theta + s * total) if df > 1 else 2 * theta / math.pi
    total, term = 1.0, 1.0
    for k in range(1, df // 2):
        term *= c * c * (2 * k - 1) / (2 * k)
        total += term
    return s * total
