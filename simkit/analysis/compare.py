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
from dataclasses import dataclass, field, replace
from pathlib import Path
from threading import Lock
from typing import Any

import numpy as np

from simkit.analysis.result import Result
from simkit.analysis.run import as_scenario
from simkit.deferred import pandas as pd
from simkit.engine import RawRun, RngLike, seed_sequence, seed_value, simulate
from simkit.metrics import COMBATANT, GROUP, ROUNDS, SIDE, Z95, metric_slots, t_quantile_975
from simkit.output import result_files
from simkit.output.files import OutputDir
from simkit.scenario import Scenario, ScenarioError, apply_set

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
    levels: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False, compare=False)
    # a comparison to a precision: how it stopped (simkit.analysis.precision.Stopping)
    stopping: Any = field(default=None, repr=False, compare=False)

    def level_table(self, level: str) -> pd.DataFrame:
        """The comparison per ``"combatant"`` (``table``), ``"group"`` or ``"side"``: counts
        summed, probabilities as "any member", ratios of sums, and the action economy."""
        if level == COMBATANT:
            return self.table
        if level not in self.levels:
            raise ValueError(f"no level {level!r}; allowed: combatant, group, side")
        return self.levels[level]

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

    @property
    def guard_changes(self) -> list[GuardChange]:
        """The guards whose protection differs between A and B (R7/R7a), each with the
        allies it changes for: what ``compare`` shows beside the guard's cost."""
        return guard_changes(self.a.scenario, self.b.scenario)

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

    def format_table(self, all_metrics: bool = False, **options: Any) -> str:
        """Differences as text: the rows that differ significantly (every row if
        ``all_metrics``), then the narrowing line; ``by``, ``metrics``, ``width`` as
        for ``Result.format_table``."""
        from simkit.output.terminal import comparison_table

        return comparison_table(self, all_metrics=all_metrics, **options)

    def _repr_html_(self) -> str:
        from simkit.output.notebook import comparison_html

        return comparison_html(self)

    def plot(self, metric: str = "actions", by: str = COMBATANT) -> Any:
        """The paired differences B - A of ``metric`` with their 95% intervals."""
        from simkit.output.plots import comparison_figure

        return comparison_figure(self, metric, by=by)

    def files(self) -> dict[str, str]:
        """``compare.csv`` (``table``), by file name."""
        return result_files.compare_files(self)

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write :meth:`files` into the result directory ``out_dir`` as a whole."""
        return OutputDir(out_dir, "out_dir").write(self.files())


GUARD_GAINS = ("undefended", "hasty_only")  # an ally's attacks left unanswered / only hasty
GUARD_COSTS = ("actions", "guard_defenses")  # what guarding costs the guard


@dataclass(frozen=True)
class GuardChange:
    """One guard whose protection differs between two scenarios (R7/R7a).

    ``in_a``, ``in_b``: ally name -> how it guards it ("backup", "always") in A and B;
    ``allies``: the allies it guards in A or B (scenario order), whose undefended and
    hasty-only attacks show the guard's gain (an ally guarded in both still changes when
    the guard's dice go elsewhere); ``every_a``, ``every_b``: it guards every
    ally of its side."""

    guard: str
    in_a: dict[str, str]
    in_b: dict[str, str]
    allies: tuple[str, ...]
    every_a: bool
    every_b: bool


def guard_changes(a: Scenario, b: Scenario) -> list[GuardChange]:
    """The guards of A and B (the same combatants) whose protection differs."""
    from simkit import systems

    if a.system != b.system:
        return []
    system = systems.get(a.system)
    protections = getattr(system, "protections", None)
    if protections is None:
        return []
    pa, pb = protections(a), protections(b)
    out = []
    for c in a.combatants:
        in_a, in_b = pa.get(c.name, {}), pb.get(c.name, {})
        if in_a == in_b:
            continue
        allies = tuple(  # guarded in A or B: also those guarded in both, whose guard
            d.name  # may now be busy elsewhere
            for d in a.combatants
            if d.side == c.side and d.name != c.name and (d.name in in_a or d.name in in_b)
        )
        side = {d.name for d in a.combatants if d.side == c.side and d.name != c.name}
        every_a = bool(in_a) and set(in_a) == side
        every_b = bool(in_b) and set(in_b) == side
        out.append(GuardChange(c.name, in_a, in_b, allies, every_a, every_b))
    return out


def compare(
    a: Scenario | str | Path,
    b: Scenario | str | Path | None = None,
    *,
    set: Sequence[str] | Mapping[str, Any] | str | None = None,
    rounds: int | None = None,
    rng: RngLike = None,
    batch_rounds: int = 4096,
    progress: Callable[[int], None] | None = None,
    labels: tuple[str, str] | None = None,
    precision: Any = None,
    quantities: Callable[[Comparison], list[Any]] | None = None,
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
    labels : (str, str), optional
        What to call A and B (default: their names, or A's name and the changes).
    precision, quantities : optional
        A :class:`~simkit.analysis.precision.Precision` instead of ``rounds``: A and B
        are played in the same doubling blocks until every paired difference of
        ``quantities(comparison)`` (``(name, difference, ci_low, ci_high)`` rows; default
        every metric per combatant) meets it; the batches are those of the first block.

    Returns
    -------
    Comparison
        ``table`` has mean A, mean B, difference, its paired se and 95% interval,
        the unpaired se and how many times narrower the paired interval is.
    """
    scenario_a = as_scenario(a)
    if (b is None) == (set is None):
        raise TypeError("compare needs either b (a second scenario) or set (changes to a)")
    if b is not None:
        scenario_b = as_scenario(b)
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
    if labels is not None:
        label_a, label_b = (str(x) for x in labels)
    if sorted(scenario_a.names) != sorted(scenario_b.names):
        only_a = sorted(set_(scenario_a.names) - set_(scenario_b.names))
        only_b = sorted(set_(scenario_b.names) - set_(scenario_a.names))
        raise ScenarioError(
            f"{scenario_b.source}: compare needs the same combatant names in A and B; "
            f"only in A: {', '.join(only_a) or 'none'}; only in B: {', '.join(only_b) or 'none'}"
        )
    if scenario_a.fight_rounds != scenario_b.fight_rounds:
        raise ScenarioError(
            f"{scenario_b.source}: a paired comparison needs the same fights in A and B "
            f"(fight_rounds {scenario_a.fight_rounds or 'absent'} and "
            f"{scenario_b.fight_rounds or 'absent'}): their rounds do not see the same dice; "
            "simkit.api.compare_many([A, B]) compares them unpaired (simkit compare A B does)"
        )
    seq = seed_sequence(scenario_a.seed if rng is None else rng)
    seed = seed_value(seq)
    lock = Lock()

    def count(n: int) -> None:
        if progress is not None:
            with lock:
                progress(n)

    if precision is not None:
        return _compare_to_precision(
            scenario_a,
            scenario_b,
            label_a,
            label_b,
            precision,
            seq,
            batch_rounds,
            count,
            quantities or difference_quantities,
            progress,
        )
    rounds = scenario_a.rounds if rounds is None else rounds
    batch = batch_size(rounds, batch_rounds)

    # Batched runs are single-threaded; play A and B side by side (the kernels release the GIL).
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [
            pool.submit(simulate, s, rounds, seq, progress=count, batch_rounds=batch)
            for s in (scenario_a, scenario_b)
        ]
        raw_a, raw_b = (f.result() for f in futures)
    result_a = Result.from_raw(scenario_a, seed, raw_a)
    result_b = Result.from_raw(scenario_b, seed, raw_b)
    return paired_comparison(result_a, raw_a, result_b, raw_b, label_a, label_b, batch)


def difference_quantities(
    comparison: Comparison, by: str = COMBATANT, metrics: Sequence[str] | None = None
) -> list[tuple[str, float, float, float]]:
    """The paired differences ``compare`` shows per ``by``: every metric (``metrics``
    if given, a family's name meaning its members; else no ``acts_before.X`` /
    ``actions_dist.k``), as ``(name, difference, ci_low, ci_high)``."""
    from simkit.output.render import expand_metrics

    chosen = expand_metrics("compare", comparison, metrics)
    t = comparison.level_table(by)
    prefix = "" if by == COMBATANT else f"{by}:"
    out = []
    for who, metric, diff, low, high in zip(
        t[by], t.metric, t.difference, t.ci_low, t.ci_high, strict=True
    ):
        if (chosen is None and "." not in metric) or (chosen is not None and metric in chosen):
            name = f"{prefix}{who}.{metric}" if who else metric
            out.append((f"{name} (B - A)", float(diff), float(low), float(high)))
    return out


def _compare_to_precision(
    scenario_a: Scenario,
    scenario_b: Scenario,
    label_a: str,
    label_b: str,
    precision: Any,
    seq: np.random.SeedSequence,
    batch_rounds: int,
    count: Callable[[int], None],
    quantities: Callable[[Comparison], list[Any]],
    progress: Any,
) -> Comparison:
    """A and B in the same doubling blocks until every difference meets ``precision``."""
    from simkit.analysis.precision import Stopping, _grow
    from simkit.engine import play_blocks

    totals = precision.totals([scenario_a, scenario_b])
    batch = batch_size(totals[0], batch_rounds)
    seed = seed_value(seq)
    blocks = [
        play_blocks(s, totals, seq, progress=count, batch_rounds=batch)
        for s in (scenario_a, scenario_b)
    ]
    comparison = None
    unmet: list[str] = []
    played = total = 0
    with ThreadPoolExecutor(max_workers=2) as pool:
        for total in totals:
            played += 1
            _grow(progress, 2 * total)
            raw_a, raw_b = pool.map(next, blocks)
            result_a = Result.from_raw(scenario_a, seed, raw_a)
            result_b = Result.from_raw(scenario_b, seed, raw_b)
            comparison = paired_comparison(
                result_a, raw_a, result_b, raw_b, label_a, label_b, batch
            )
            unmet = precision.unmet(quantities(comparison))
            if not unmet:
                break
    assert comparison is not None
    rounds = max(comparison.a.rounds, comparison.b.rounds)  # R8a: rounded up to whole fights
    stopping = Stopping(precision, rounds, played, tuple(unmet))
    return replace(comparison, stopping=stopping)


def batch_size(rounds: int, batch_rounds: int = 4096) -> int:
    """Rounds per batch of a paired run: ``batch_rounds``, smaller for short runs so
    that there are at least ``MIN_BATCHES`` batches."""
    return max(1, min(batch_rounds, rounds // MIN_BATCHES))


def paired_comparison(
    result_a: Result,
    raw_a: RawRun,
    result_b: Result,
    raw_b: RawRun,
    label_a: str,
    label_b: str,
    batch_rounds: int,
    keep: Callable[[str], bool] | None = None,
    levels: Sequence[str] = (COMBATANT, GROUP, SIDE),
) -> Comparison:
    """The :class:`Comparison` of two batched runs of the same rounds, seed and
    ``batch_rounds`` (``engine.simulate(..., batch_rounds=...)``): what :func:`compare`
    returns, for callers that play (or share) the runs themselves, e.g. a report that
    pairs one run as written with several variants.  ``keep`` (a metric name -> bool)
    leaves rows out, e.g. the ``acts_before.X`` of hundreds of combatants; ``levels``
    are the levels to compare (``table`` is empty without ``"combatant"``)."""
    k = len(raw_a.batches or [])
    if k != len(raw_b.batches or []):
        raise ValueError(
            f"paired runs need the same batches, got {k} and {len(raw_b.batches or [])}"
        )
    t = t_quantile_975(k - 1) if k > 1 else float("nan")
    tables = {COMBATANT: pd.DataFrame(columns=COLUMNS)}
    for level in levels:
        table = paired_table(raw_a, raw_b, result_a, result_b, level, keep)
        table["ci_low"] = table.difference - t * table.se_paired
        table["ci_high"] = table.difference + t * table.se_paired
        tables[level] = table
    table = tables.pop(COMBATANT)
    return Comparison(
        result_a, result_b, label_a, label_b, batch_rounds, k, t, table, levels=tables
    )


def set_(names: Sequence[str]) -> set[str]:
    """The builtin ``set`` (shadowed by ``compare``'s argument of that name)."""
    return {*names}


def _batch_terms(
    raw: RawRun, level: str, keep: Callable[[str], bool] | None = None
) -> dict[tuple[str, str], tuple[np.ndarray, ...]]:
    """Per reported number: batch numerator and denominator sums (int64 arrays of length K)."""
    batches = raw.batches or []
    s1 = np.stack([b.s1 for b in batches])
    length = np.array([b.tot[1] for b in batches], dtype=np.int64)
    return {
        (s.who, s.metric): (s1[:, s.num], length if s.den == ROUNDS else s1[:, s.den])
        for s in metric_slots(raw.layout, level)
        if keep is None or keep(s.metric)
    }


def paired_table(
    raw_a: RawRun,
    raw_b: RawRun,
    result_a: Result,
    result_b: Result,
    level: str = COMBATANT,
    keep: Callable[[str], bool] | None = None,
) -> pd.DataFrame:
    """The comparison table without intervals (see the module docstring for the method);
    ``keep`` (a metric name -> bool) leaves rows out."""
    terms_a = _batch_terms(raw_a, level, keep)
    terms_b = _batch_terms(raw_b, level, keep)
    rows_a = result_a.rows if level == COMBATANT else result_a.level_rows(level)
    rows_b = result_b.rows if level == COMBATANT else result_b.level_rows(level)
    se_a = {(r[0], r[1]): r[3] for r in rows_a}
    se_b = {(r[0], r[1]): r[3] for r in rows_b}
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
    return pd.DataFrame(rows, columns=[level, *COLUMNS[1:]])


def _linearised(num: np.ndarray, den: np.ndarray) -> tuple[float, np.ndarray]:
    """``R = sum(num) / sum(den)`` and the per-batch delta-method terms of ``R``."""
    total_num, total_den = int(num.sum()), int(den.sum())
    if total_den == 0:
        return float("nan"), np.full(num.size, np.nan)
    r = float(total_num) / float(total_den)
    return r, (num - r * den) / float(total_den)


# --------------------------------------------------------------------------- dominance
@dataclass(frozen=True)
class Dominance:
    """How often the fastest combatant acts before each other combatant.

    The fastest is the combatant with the highest main stat (``System.main_field``:
    readiness, rating, perception); with several at the highest, ``tied`` is True and
    every one of them has its rows.  ``rows`` are ``(fastest, other, other's stat, mean,
    se, ci_low, ci_high)`` of ``acts_before.OTHER`` of the fastest (P(its first action
    of the round comes strictly before OTHER's)), the numbers of
    ``result.acts_before()`` with their intervals.
    """

    label: str
    system: str
    stat_field: str
    stat: int
    fastest: tuple[str, ...]
    rows: tuple[tuple[str, str, int, float, float, float, float], ...]
    rounds: int
    seed: int | list[int]

    @property
    def tied(self) -> bool:
        return len(self.fastest) > 1

    def format_table(self, **options: Any) -> str:
        """The table ``simkit run --dominance`` prints."""
        from simkit.output.render import render

        return render("dominance", self, **options)

    def heading(self) -> str:
        """``fastest: Gunnar (readiness 3)`` or ``fastest (tied): ...``."""
        who = ", ".join(self.fastest)
        tie = ", tied" if self.tied else ""
        return f"fastest: {who} ({self.stat_field} {self.stat}{tie})"


def dominance(result: Result, label: str | None = None) -> Dominance:
    """The :class:`Dominance` of a run."""
    from simkit.systems import get

    scenario = result.scenario
    system = get(scenario.system)
    stats = {c.name: int(system.stat(c.params)) for c in scenario.combatants}
    top = max(stats.values())
    fastest = tuple(n for n in scenario.names if stats[n] == top)
    index = {(r[0], r[1]): r for r in result.rows}
    rows = []
    for f in fastest:
        for other in scenario.names:
            row = index.get((f, f"acts_before.{other}"))
            if other != f and row is not None:
                rows.append((f, other, stats[other], *row[2:]))
    return Dominance(
        label or scenario.name,
        scenario.system,
        system.main_field,
        top,
        fastest,
        tuple(rows),
        result.rounds,
        result.seed,
    )


# --------------------------------------------------------------------------- N files
SIDE_COLUMNS = [
    "metric",
    "scenario",
    "system",
    "paired",
    "mean",
    "se",
    "ci_low",
    "ci_high",
    "difference",
    "se_difference",
    "ci_low_difference",
    "ci_high_difference",
]


@dataclass(frozen=True)
class SideBySide:
    """Several scenarios played with the same seed and rounds, side by side.

    Attributes
    ----------
    results : tuple of Result
        One run per scenario, in the order given (A, B, C, ...).
    labels : tuple of str
        Their names (file names where names repeat).
    paired : tuple of bool
        Whether each scenario is paired with A (common random numbers): the same
        system and the same combatant names (and, always here, the same rounds and
        seed).  A is paired with itself.
    batch_rounds, batches, t_paired :
        The batches behind the paired errors, as for :class:`Comparison`.
    dominance : tuple of Dominance
        How often the fastest combatant of each scenario acts before each other one.

    ``level_table(level)`` is one row per (who, metric, scenario): its mean, se and 95%
    interval, and its difference from A with se and interval, paired (batch means, t)
    where ``paired``, else from independent runs (``sqrt(se_A^2 + se_X^2)``, z).
    """

    results: tuple[Result, ...]
    labels: tuple[str, ...]
    paired: tuple[bool, ...]
    batch_rounds: int
    batches: int
    t_paired: float
    dominance: tuple[Dominance, ...]
    raws: tuple[RawRun, ...] = field(repr=False, compare=False)

    @property
    def rounds(self) -> int:
        return self.results[0].rounds

    @property
    def seed(self) -> int | list[int]:
        return self.results[0].seed

    @property
    def table(self) -> pd.DataFrame:
        return self.level_table(COMBATANT)

    def level_table(self, level: str) -> pd.DataFrame:
        """The side-by-side rows per ``"combatant"``, ``"group"`` or ``"side"``."""
        if level not in (COMBATANT, GROUP, SIDE):
            raise ValueError(f"no level {level!r}; allowed: combatant, group, side")
        return _side_table(self, level)

    def format_table(self, **options: Any) -> str:
        """The table ``simkit compare A B C ...`` prints (``by``, ``metrics``,
        ``all_metrics``, ``width`` as for :func:`simkit.output.render.render`)."""
        from simkit.output.render import render

        return render("side_by_side", self, **options)

    def files(self) -> dict[str, str]:
        """``compare.csv`` (``table``), by file name."""
        return {"compare.csv": result_files.frame_csv(self.table)}

    def write(self, out_dir: str | Path) -> list[Path]:
        return OutputDir(out_dir, "out_dir").write(self.files())


def pairable(a: Scenario, b: Scenario) -> bool:
    """True if runs of ``a`` and ``b`` with the same seed and rounds are paired (common
    random numbers mean the same dice): the same system and combatant names, and the
    same ``fight_rounds`` (R8a: fights are cut into chunks of whole fights, so a round's
    dice depend on the fight length)."""
    return a.system == b.system and a.names == b.names and a.fight_rounds == b.fight_rounds


def compare_many(
    scenarios: Sequence[Scenario | str | Path],
    *,
    rounds: int | None = None,
    rng: RngLike = None,
    batch_rounds: int = 4096,
    progress: Callable[[int], None] | None = None,
    labels: Sequence[str] | None = None,
) -> SideBySide:
    """Play N scenarios (N >= 2) with the same seed and rounds and set them side by side
    (see :class:`SideBySide`); rounds default to the first's, the seed to the first's."""
    played = [as_scenario(s) for s in scenarios]
    if len(played) < 2:
        raise ValueError(f"compare needs at least 2 scenarios, got {len(played)}")
    names = [s.name for s in played]
    if labels is not None:
        names = [str(x) for x in labels]
    elif len(set_(names)) < len(names):
        names = [s.source for s in played]
    first = played[0]
    rounds = first.rounds if rounds is None else rounds
    batch = batch_size(rounds, batch_rounds)
    seq = seed_sequence(first.seed if rng is None else rng)
    seed = seed_value(seq)
    lock = Lock()

    def count(n: int) -> None:
        if progress is not None:
            with lock:
                progress(n)

    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [
            pool.submit(simulate, s, rounds, seq, progress=count, batch_rounds=batch)
            for s in played
        ]
        raws = tuple(f.result() for f in futures)
    results = tuple(Result.from_raw(s, seed, raw) for s, raw in zip(played, raws, strict=True))
    k = len(raws[0].batches or [])
    t = t_quantile_975(k - 1) if k > 1 else float("nan")
    return SideBySide(
        results,
        tuple(names),
        tuple(pairable(first, s) for s in played),
        batch,
        k,
        t,
        tuple(dominance(r, n) for r, n in zip(results, names, strict=True)),
        raws,
    )


def _side_table(side: SideBySide, level: str) -> pd.DataFrame:
    rows: list[tuple[Any, ...]] = []
    per_file = []
    for result in side.results:
        rows_x = result.rows if level == COMBATANT else result.level_rows(level)
        per_file.append({(r[0], r[1]): r for r in rows_x})
    keys = list(dict.fromkeys(k for rows_x in per_file for k in rows_x))
    terms_a = _batch_terms(side.raws[0], level)
    for x, (result, raw) in enumerate(zip(side.results, side.raws, strict=True)):
        terms_x = _batch_terms(raw, level) if side.paired[x] and x else {}
        for key in keys:
            row = per_file[x].get(key)
            if row is None:
                continue
            a = per_file[0].get(key)
            diff = se = low = high = math.nan
            if a is not None:
                diff = row[2] - a[2]
                if x == 0:
                    se = low = high = 0.0
                elif side.paired[x] and key in terms_a and key in terms_x:
                    _, u_a = _linearised(*terms_a[key])
                    _, u_x = _linearised(*terms_x[key])
                    u = u_x - u_a
                    n = u.size
                    se = math.sqrt(n / (n - 1) * float(np.dot(u, u))) if n > 1 else math.nan
                    low, high = diff - side.t_paired * se, diff + side.t_paired * se
                else:
                    se = math.hypot(row[3], a[3])
                    low, high = diff - Z95 * se, diff + Z95 * se
            rows.append(
                (
                    *key,
                    side.labels[x],
                    result.scenario.system,
                    side.paired[x],
                    *row[2:],
                    diff,
                    se,
                    low,
                    high,
                )
            )
    return pd.DataFrame(rows, columns=[level, *SIDE_COLUMNS])
