"""The metrics layer: the metric registry, the Layout of a kernel's counts, running
sums over regeneration cycles and estimates with confidence intervals.

It knows no initiative system: systems declare which counts they fill.
"""

from simkit.metrics.estimates import (
    NAN_ESTIMATE,
    ROUNDS,
    Z95,
    Estimate,
    MetricSlots,
    estimates,
    level_estimates,
    mean_estimate,
    metric_slots,
    pair_estimate,
    ratio_of_sums,
    slots_estimate,
    source_estimate,
    t_quantile_975,
)
from simkit.metrics.layout import COMBATANT, GROUP, LEVELS, SCENARIO, SIDE, VERSUS, Layout, Source
from simkit.metrics.registry import (
    ACTION_ECONOMY,
    METRICS,
    Metric,
    UnknownMetric,
    is_probability,
    metric,
    public_metrics,
    ratio_metrics,
)
from simkit.metrics.sums import Sums, aggregate_round, flush_cycle, flush_rows

__all__ = [
    "ACTION_ECONOMY",
    "COMBATANT",
    "GROUP",
    "LEVELS",
    "METRICS",
    "NAN_ESTIMATE",
    "ROUNDS",
    "SCENARIO",
    "SIDE",
    "VERSUS",
    "Z95",
    "Estimate",
    "Layout",
    "Metric",
    "MetricSlots",
    "Source",
    "Sums",
    "UnknownMetric",
    "aggregate_round",
    "estimates",
    "flush_cycle",
    "flush_rows",
    "is_probability",
    "level_estimates",
    "mean_estimate",
    "metric_slots",
    "metric",
    "pair_estimate",
    "public_metrics",
    "ratio_metrics",
    "ratio_of_sums",
    "slots_estimate",
    "source_estimate",
    "t_quantile_975",
]
