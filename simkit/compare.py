"""Paired comparisons of two scenarios with common random numbers.

Both scenarios are played with the same seed.  Every round draws from a stream of its
own (``random_stream``), so round ``r`` of A and round ``r`` of B start from the same
dice; where the two scenarios behave alike their per-round counts are strongly
correlated and the difference B - A is estimated far more precisely than from two
independent runs.

How the paired standard error is computed (batch means).  The rounds are cut into
``K`` batches (``engine.simulate(..., batch_rounds=...)``; batch ``k`` of A and batch
``k`` of B cover the same rounds).  For a metric that is a ratio of sums
``R = sum(n) / sum(d)`` (``d`` is the number of rounds for a per-round mean, the
denominator count for ``hasty_share`` and ``hasty_scale``), each batch contributes the
delta-method term ``u_k = (n_k - R d_k) / sum(d)``.  The difference ``D = R_B - R_A``
has the per-batch terms ``u_k = u_k^B - u_k^A`` and

    se_paired^2 = K / (K - 1) * sum_k u_k^2

(for per-round means this is the usual batch-means variance of the difference).  The
95% interval is ``D ± t * se_paired`` with ``t`` the 97.5% quantile of Student's t with
``K - 1`` degrees of freedom.  Batches are long compared with the only dependence
between rounds (R8 links a stalemate round to the next), so they are independent to
a very good approximation.  The unpaired standard error, what two independent runs
would give, is ``sqrt(se_A^2 + se_B^2)`` from each run's own (regeneration-cycle)
standard errors; ``narrower`` is ``se_unpaired / se_paired``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from threading import Lock
from typing import Any

import numpy as np

from simkit.api import validate
from simkit.deferred import pandas as pd
from simkit.engine import RawRun, RngLike, seed_sequence, simulate, system_module
from simkit.metrics import PROBABILITIES, Z95, Layout
from simkit.result import Result, write_atomically
from simkit.scenario import Scenario, ScenarioError
from simkit.sweep import apply_assignments, check_value, field_spec, parse_value, split_spec

COLUMNS = [
    "combatant",
    "metric",
    "mean_a",
    "mean_b",
    "difference",
    "se_paired",
    "ci_low",
    "ci_high",
    "se_unpaired",
    "narrower",
]
# Fewer batches than this make the paired se too rough: shorter runs use smaller batches.
MIN_BATCHES = 32


@dataclass(frozen=True)
class Comparison:
    """Paired differences B - A of every metric of two scenarios.

    Attributes
    ----------
    a, b : Result
        The two runs (same seed and rounds; their numbers equal those of
        ``simkit.run``).
    label_a, label_b : str
        Short descriptions of A and B.
    batch_rounds, batches : int
        Rounds per batch and number of batches behind the paired errors.
    t_paired : float
        The Student-t quantile of the paired 95% intervals (``batches - 1`` d.f.).
    table : pandas.DataFrame
        One row per (combatant, metric): ``mean_a, mean_b, difference`` (B - A),
        ``se_paired, ci_low, ci_high`` (paired, batch means), ``se_unpaired``
        (``sqrt(se_A^2 + se_B^2)``) and ``narrower`` (``se_unpaired / se_paired``).
        Scenario metrics have ``combatant == ""``.
    """

    a: Result
    b: Result
    label_a: str
    label_b: str
    batch_rounds: int
    batches: int
    t_paired: float
    table: pd.DataFrame
    z_unpaired: float = field(default=Z95, repr=False)

    @property
    def rounds(self) -> int:
        return self.a.rounds

    @property
    def seed(self) -> int | list[int]:
        return self.a.seed

    def difference(self, combatant: str, metric: str) -> pd.Series:
        """The row of one (combatant, metric); ``combatant=""`` for scenario metrics."""
        t = self.table
        row = t[(t.combatant == combatant) & (t.metric == metric)]
        if row.empty:
            raise KeyError(f"no metric {metric!r} for {combatant!r}")
        return row.iloc[0]

    def median_narrowing(self) -> float:
        """Median of ``se_unpaired / se_paired`` over the metrics where both are positive."""
        t = self.table
        ok = (t.se_paired > 0) & (t.se_unpaired > 0)
        return float(np.median(t.narrower[ok])) if ok.any() else float("nan")

    def narrowing_line(self) -> str:
        """One line saying how much narrower the paired intervals are."""
        m = self.median_narrowing()
        if m == m:
            return f"paired intervals are {m:.1f}× narrower than unpaired (median over metrics)"
        if (self.table.difference.fillna(0) == 0).all() and (
            self.table.se_paired.fillna(0) == 0
        ).all():
            return "A and B play identically: every paired difference is exactly 0"
        return "paired intervals: not enough batches to estimate"

    def format_table(self, all_metrics: bool = False) -> str:
        """Differences as text: per-combatant and scenario metrics (every row if
        ``all_metrics``), then the narrowing line."""
        t = self.table
        if not all_metrics:
            t = t[~t.metric.str.contains(".", regex=False)]
        header = ["combatant", "metric", "A", "B", "B - A", "se paired", "se unpaired", "narrower"]
        rows = []
        for r in t.itertuples(index=False):
            pct = r.metric in PROBABILITIES or r.metric.startswith(
                ("acts_before.", "actions_dist.")
            )
            half = self.t_paired * r.se_paired
            rows.append(
                [
                    r.combatant or "(scenario)",
                    r.metric,
                    _num(r.mean_a, pct),
                    _num(r.mean_b, pct),
                    f"{_num(r.difference, pct, sign=True)} ±{_num(half, pct)}",
                    _num(r.se_paired, pct),
                    _num(r.se_unpaired, pct),
                    _ratio(r.narrower),
                ]
            )
        widths = [max(len(x) for x in col) for col in zip(header, *rows, strict=True)]
        lines = [
            f"A: {self.label_a}",
            f"B: {self.label_b}",
            "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip(),
            "  ".join("-" * w for w in widths),
        ]
        lines += [
            "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
        ]
        lines.append(
            f"{self.rounds:,} rounds each, seed {self.seed}, {self.batches} batches of up to "
            f"{self.batch_rounds:,} rounds; ± is the paired 95% half-width (t, "
            f"{self.batches - 1} d.f.); probabilities in %"
        )
        lines.append(self.narrowing_line())
        return "\n".join(lines)

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write ``compare.csv`` (``table``) into ``out_dir`` atomically."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        path = out / "compare.csv"
        write_atomically({path: self.table.to_csv(index=False, float_format="%.10g")})
        return [path]


def compare(
    a: Scenario | str | Path,
    b: Scenario | str | Path | None = None,
    *,
    set: Sequence[str] | Mapping[str, Any] | str | None = None,
    rounds: int | None = None,
    rng: RngLike = None,
    batch_rounds: int = 4096,
    progress: Callable[[int], None] | None = None,
) -> Comparison:
    """Compare two scenarios with common random numbers: paired differences B - A.

    Parameters
    ----------
    a, b : Scenario or path
        The two scenarios; they must have the same combatant names.  Give ``b`` or
        ``set``, not both.
    set : list of str or mapping, optional
        Changes that turn ``a`` into B: ``["Gunnar.hold=never"]``, ``"*.advantage=1"``
        (every combatant), ``"rules.order=chain"``, or ``{"Gunnar.hold": "never"}``;
        a group name changes every member.  Applied in order.
    rounds : int, optional
        Rounds of each run; default ``a``'s ``rounds``.
    rng : numpy Generator, SeedSequence, int or None, optional
        Normalised once and used for both runs; default ``a``'s ``seed``.
    batch_rounds : int, optional
        Rounds per batch of the paired standard error.  Runs shorter than
        ``32 * batch_rounds`` use ``rounds // 32`` so that there are at least 32 batches.
    progress : callable, optional
        Called with the rounds of every finished chunk of either run.

    Returns
    -------
    Comparison
        ``table`` has mean A, mean B, difference, its paired se and 95% interval,
        the unpaired se and how many times narrower the paired interval is.
    """
    scenario_a = validate(a)
    if (b is None) == (set is None):
        raise TypeError("compare needs either b (a second scenario) or set (changes to a)")
    if b is not None:
        scenario_b = validate(b)
        label_a, label_b = scenario_a.name, scenario_b.name
        if label_a == label_b:
            label_a, label_b = scenario_a.source, scenario_b.source
    else:
        changes = [set] if isinstance(set, str) else set
        scenario_b = apply_set(scenario_a, changes)
        texts = (
            [f"{k}={v}" for k, v in changes.items()] if isinstance(changes, Mapping) else changes
        )
        label_a, label_b = scenario_a.name, f"{scenario_a.name} with " + ", ".join(texts)
    if sorted(scenario_a.names) != sorted(scenario_b.names):
        only_a = sorted(set_(scenario_a.names) - set_(scenario_b.names))
        only_b = sorted(set_(scenario_b.names) - set_(scenario_a.names))
        raise ScenarioError(
            f"{scenario_b.source}: compare needs the same combatant names in A and B; "
            f"only in A: {', '.join(only_a) or 'none'}; only in B: {', '.join(only_b) or 'none'}"
        )
    rounds = scenario_a.rounds if rounds is None else rounds
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
    if isinstance(batch_rounds, bool) or not isinstance(batch_rounds, int) or batch_rounds < 1:
        raise ValueError(f"batch_rounds must be a positive integer, got {batch_rounds!r}")
    for s in (scenario_a, scenario_b):
        if not _supports_batches(s.system):
            raise NotImplementedError(
                f"compare: system {s.system} cannot play rounds in batches yet "
                "(its run_chunk takes no 'first' argument)"
            )
    batch = max(1, min(batch_rounds, rounds // MIN_BATCHES))
    seq = seed_sequence(scenario_a.seed if rng is None else rng)
    seed = seq.entropy if isinstance(seq.entropy, int) else list(seq.entropy)
    lock = Lock()

    def count(n: int) -> None:
        if progress is not None:
            with lock:
                progress(n)

    # Batched runs are single-threaded; play A and B side by side (the kernels release the GIL).
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [
            pool.submit(simulate, s, rounds, seq, progress=count, batch_rounds=batch)
            for s in (scenario_a, scenario_b)
        ]
        raw_a, raw_b = (f.result() for f in futures)
    result_a = Result.from_sums(
        scenario_a, seed, raw_a.layout, raw_a.sums, raw_a.elapsed_s, raw_a.workers
    )
    result_b = Result.from_sums(
        scenario_b, seed, raw_b.layout, raw_b.sums, raw_b.elapsed_s, raw_b.workers
    )
    k = len(raw_a.batches or [])
    table = paired_table(raw_a, raw_b, result_a, result_b)
    t = t_quantile_975(k - 1) if k > 1 else float("nan")
    table["ci_low"] = table.difference - t * table.se_paired
    table["ci_high"] = table.difference + t * table.se_paired
    return Comparison(result_a, result_b, label_a, label_b, batch, k, t, table)


def set_(names: Sequence[str]) -> set[str]:
    """The builtin ``set`` (shadowed by ``compare``'s argument of that name)."""
    return {*names}


SET_FORM = "NAME.FIELD=VALUE, e.g. 'Gunnar.hold=never', '*.advantage=1' or 'rules.order=chain'"


def apply_set(
    scenario: Scenario, changes: Sequence[str] | Mapping[str, Any], label: str = "set"
) -> Scenario:
    """``scenario`` with ``Name.field=value`` changes applied (``*`` and ``rules`` too).

    ``label`` starts every error message (``--set`` on the command line).
    """
    assignments = []
    if isinstance(changes, Mapping):
        for key, value in changes.items():
            origin = f"{label} {key!r}"
            target, name, _ = split_spec(f"{key}=x", origin, SET_FORM)
            spec = field_spec(scenario, target, name, origin)
            assignments.append((target, name, check_value(value, spec, f"{target}.{name}", origin)))
    else:
        if not changes:
            raise ScenarioError(f"{label}: no changes given; expected {SET_FORM}")
        for text in changes:
            origin = f"{label} {text!r}"
            target, name, raw = split_spec(text, origin, SET_FORM)
            spec = field_spec(scenario, target, name, origin)
            assignments.append((target, name, parse_value(raw, spec, f"{target}.{name}", origin)))
    return apply_assignments(scenario, assignments, label)


def _supports_batches(system: str) -> bool:
    import inspect

    return "first" in inspect.signature(system_module(system).run_chunk).parameters


def metric_rows(layout: Layout) -> list[tuple[str, str, int, int | None]]:
    """(combatant, metric, numerator index, denominator index or None for rounds), in the
    order of ``metrics.estimates``."""
    rows: list[tuple[str, str, int, int | None]] = []
    for i, name in enumerate(layout.names):
        for metric in layout.counts:
            if metric not in layout.hidden:
                rows.append((name, metric, layout.count_index(i, metric), None))
        for ratio, num, den in layout.ratios:
            rows.append((name, ratio, layout.count_index(i, num), layout.count_index(i, den)))
        for j, other in enumerate(layout.names):
            if j != i:
                rows.append((name, f"acts_before.{other}", layout.before_index(i, j), None))
        for k in range(layout.dist_sizes[i]):
            rows.append((name, f"actions_dist.{k}", layout.dist_index(i, k), None))
    for k, metric in enumerate(layout.scenario_counts):
        rows.append(("", metric, layout.scenario_offset + k, None))
    return rows


def _batch_terms(raw: RawRun, result: Result) -> dict[tuple[str, str], tuple[np.ndarray, ...]]:
    """Per metric: batch numerator and denominator sums (int64 arrays of length K)."""
    rows = metric_rows(raw.layout)
    keys = list(zip(result.table.combatant, result.table.metric, strict=True))
    if [(c, m) for c, m, _, _ in rows] != keys:  # metric_rows must mirror estimates()
        raise RuntimeError("compare: metric layout does not match the result table")
    batches = raw.batches or []
    s1 = np.stack([b.s1 for b in batches])
    length = np.array([b.tot[1] for b in batches], dtype=np.int64)
    return {(c, m): (s1[:, num], length if den is None else s1[:, den]) for c, m, num, den in rows}


def paired_table(raw_a: RawRun, raw_b: RawRun, result_a: Result, result_b: Result) -> pd.DataFrame:
    """The comparison table without intervals (see the module docstring for the method)."""
    terms_a = _batch_terms(raw_a, result_a)
    terms_b = _batch_terms(raw_b, result_b)
    se_a = {(r.combatant, r.metric): r.se for r in result_a.table.itertuples(index=False)}
    se_b = {(r.combatant, r.metric): r.se for r in result_b.table.itertuples(index=False)}
    keys = list(terms_a) + [k for k in terms_b if k not in terms_a]
    length = np.array([b.tot[1] for b in raw_a.batches or []], dtype=np.int64)
    rows = []
    for key in keys:
        ta, tb = terms_a.get(key), terms_b.get(key)
        ea, eb = se_a.get(key), se_b.get(key)
        if ta is None or tb is None:
            if not key[1].startswith("actions_dist."):
                continue  # a metric of only one of the systems: nothing to compare
            # P(actions = k) beyond the most actions one side can take is exactly 0.
            zero = (np.zeros_like(length), length)
            ta, tb = ta or zero, tb or zero
            ea, eb = 0.0 if ea is None else ea, 0.0 if eb is None else eb
        mean_a, u_a = _linearised(*ta)
        mean_b, u_b = _linearised(*tb)
        u = u_b - u_a
        k = u.size
        se = math.sqrt(k / (k - 1) * float(np.dot(u, u))) if k > 1 else float("nan")
        unpaired = math.hypot(ea, eb)
        if se > 0:
            narrower = unpaired / se
        else:
            narrower = math.inf if unpaired > 0 else float("nan")
        rows.append(
            (*key, mean_a, mean_b, mean_b - mean_a, se, math.nan, math.nan, unpaired, narrower)
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def _linearised(num: np.ndarray, den: np.ndarray) -> tuple[float, np.ndarray]:
    """``R = sum(num) / sum(den)`` and the per-batch delta-method terms of ``R``."""
    total_num, total_den = int(num.sum()), int(den.sum())
    if total_den == 0:
        return float("nan"), np.full(num.size, np.nan)
    r = float(total_num) / float(total_den)
    return r, (num - r * den) / float(total_den)


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


def _ratio(value: float) -> str:
    if value != value:
        return "n/a"
    return "exact" if math.isinf(value) else f"{value:.1f}×"


def _num(value: float, percent: bool, sign: bool = False) -> str:
    if value != value:
        return "n/a"
    if percent:
        return f"{100 * value:+.2f}%" if sign else f"{100 * value:.2f}%"
    return f"{value:+.4f}" if sign else f"{value:.4f}"
