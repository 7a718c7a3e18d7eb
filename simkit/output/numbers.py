"""Numbers as text, the same way everywhere (tables, reports, findings).

An estimate is shown with as many decimals as its 95% interval supports: the
half-width with one significant digit, the mean to the same decimal place
(2.383 ± 0.002, not 2.3825 ± 0.0015).  Probabilities are shown in %.  CSV and JSON files keep full
precision; only text is rounded.
"""

from __future__ import annotations

import math

from simkit.metrics import Z95, is_probability


def half_width(se: float) -> float:
    """Half-width of the 95% interval, ``1.96 se``."""
    return Z95 * se


def decimals(half: float) -> int:
    """Decimals that show a half-width with one significant digit (0.0015 -> 0.002)."""
    if not (half > 0 and math.isfinite(half)):
        return 2
    d = -math.floor(math.log10(half))
    if round(half * 10**d) >= 10:  # 0.0096 rounds to 0.01: one digit at the place before
        d -= 1
    return max(0, min(d, 6))


def is_percent(metric: str) -> bool:
    """True for metrics shown in % (probabilities, shares)."""
    return is_probability(metric)


def format_estimate(metric: str, mean: float, se: float, *, unit: bool = True) -> str:
    """``41.2% ± 0.1%`` for probabilities, ``1.234 ± 0.005`` otherwise; ``n/a`` for no value."""
    if mean != mean:
        return "n/a"
    factor, sign = (100.0, "%") if is_percent(metric) else (1.0, "")
    if not unit:
        sign = ""
    half = factor * half_width(se) if se == se else math.nan
    if half == 0:  # the same in every round (e.g. never): exact
        return f"{factor * mean:g}{sign}"
    d = decimals(half)
    if half != half:
        return f"{factor * mean:.{d}f}{sign}"
    return f"{factor * mean:.{d}f}{sign} ± {half:.{d}f}{sign}"


def format_mean(metric: str, mean: float, se: float) -> str:
    """The mean alone, rounded as in :func:`format_estimate`."""
    if mean != mean:
        return "n/a"
    factor, sign = (100.0, "%") if is_percent(metric) else (1.0, "")
    half = factor * half_width(se) if se == se else math.nan
    if half == 0:
        return f"{factor * mean:g}{sign}"
    return f"{factor * mean:.{decimals(half)}f}{sign}"


def format_difference(metric: str, diff: float, half: float) -> str:
    """A signed difference and its half-width (percentage points for probabilities)."""
    if diff != diff:
        return "n/a"
    factor, sign = (100.0, " pp") if is_percent(metric) else (1.0, "")
    d, h = factor * diff, factor * half
    if h == 0:
        return f"{d:+g}{sign}"
    places = decimals(h)
    if h != h:
        return f"{d:+.{places}f}{sign}"
    return f"{d:+.{places}f} ± {h:.{places}f}{sign}"


def format_ratio(value: float) -> str:
    """How many times narrower: ``2.3×``, ``exact`` for infinity, ``n/a``."""
    if value != value:
        return "n/a"
    return "exact" if math.isinf(value) else f"{value:.1f}×"


def csv_number(x: float) -> str:
    """Full precision for CSV files (10 significant digits); NaN as empty."""
    return "" if x != x else f"{x:.10g}"


def format_gain(diff: float, half: float) -> str:
    """A paired gain of an objective and its half-width, ``0`` where both are float
    rounding (two variants that play alike)."""
    if abs(diff) <= 1e-9 and (half != half or abs(half) <= 1e-9):
        return "0"
    return format_difference("objective", diff, half)
