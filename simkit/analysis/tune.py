"""``simkit tune``: the value(s) of a field that meet a balance target.

    simkit tune boss.toml --vary 'Troll Chief.readiness=1..10' \\
        --target 'side:monsters.actions / side:party.actions = 1'

The grid is played by the sweep engine (every point with the same seed: common random
numbers, so neighbouring points differ by the change, not by noise).  At every point
the target quantity is estimated with its 95% interval (a ratio of two references by
the delta method, from the cross sums the run keeps for that pair).  The answer:

* ``=``: the values whose interval covers the target ("met"), the neighbouring pair
  whose estimates straddle it ("between 7 and 8"), or, if neither, "not reachable in
  this range" with the closest value;
* ``>=`` / ``<=``: the values whose estimate is on that side, and those whose whole
  interval is ("clearly");
* with two varied fields: the set of pairs that meet it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from simkit.analysis.run import as_scenario, run
from simkit.analysis.sweep import SweepResult, sweep
from simkit.analysis.targets import MET, UNDECIDED, Target, parse_target
from simkit.engine import RngLike, layout_for, system_of
from simkit.metrics import COMBATANT, GROUP, SIDE, Estimate, metric_slots
from simkit.output.numbers import format_estimate
from simkit.scenario import Scenario
from simkit.scenario.specs import Axis, VarySpec
from simkit.scenario.specs import cell as cell_text

DEFAULT_MAX_ROUNDS = 10**9
DECIDE_FACTOR = 64  # a deciding point's rounds grow to at most this many times the grid's

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure


def available_metrics(scenario: Scenario) -> dict[str, list[str]]:
    """Every metric name a reference may use, per level."""
    layout = layout_for(scenario)
    out = {}
    for level in (COMBATANT, GROUP, SIDE):
        names = [s.metric for s in metric_slots(layout, level) if s.who and "." not in s.metric]
        out[level] = list(dict.fromkeys(names))
    return out


@dataclass(frozen=True)
class Point:
    """One grid point: its values (as written and as played), the target's estimate,
    the rounds behind it and the decision (``met``, ``not met``, ``undecided``;
    ``more``: about how many more rounds an undecided point needs)."""

    values: tuple[Any, ...]
    actual: str
    estimate: Estimate
    met: bool
    clearly: bool
    decision: str = ""
    rounds: int = 0
    more: float = 0.0


@dataclass(frozen=True)
class Refinement:
    """``--refine``: a finer knob tuned with the varied field fixed at one of the two
    values the target lies between (``fixed``: ``"Troll Chief.readiness = 6"``)."""

    fixed: str
    column: str
    value: Any
    tuning: Tuning


@dataclass(frozen=True)
class Tuning:
    """The outcome of ``tune``.

    Attributes
    ----------
    target : Target
        The parsed target.
    points : tuple of Point
        Every grid point in grid order with the target's estimate and whether it is met.
    answer : str
        The answer in words.
    sweep : SweepResult
        Every point's full result (for anything else one wants to read), at the rounds
        of the grid (a point given more rounds to decide it has them in ``points``).
    finer : tuple of str
        The finer knobs (``"Troll Chief.advantage"``) that could close a target lying
        between two values of the varied field (System ``finer``).
    refined : tuple of Refinement
        With ``refine``: each finer knob tuned at each of the two values.
    """

    scenario: Scenario
    target: Target
    points: tuple[Point, ...]
    answer: str
    sweep: SweepResult = field(repr=False)
    finer: tuple[str, ...] = ()
    refined: tuple[Refinement, ...] = ()

    @property
    def fields(self) -> list[str]:
        return self.sweep.fields

    @property
    def stopping(self) -> Any:
        """How a tuning to a precision stopped (None without a precision)."""
        return self.sweep.stopping

    @property
    def met(self) -> list[tuple[Any, ...]]:
        """The grid values (as written) that meet the target."""
        return [p.values for p in self.points if p.met]

    @property
    def table(self) -> pd.DataFrame:
        """One row per grid point: the varied values, the values as played (for
        offsets), the target quantity's mean, se and interval, met, clearly."""
        import pandas as pd

        rows = []
        for p in self.points:
            e = p.estimate
            rows.append(
                [
                    *p.values,
                    p.actual,
                    p.rounds,
                    e.mean,
                    e.se,
                    e.ci_low,
                    e.ci_high,
                    p.met,
                    p.clearly,
                    p.decision,
                    p.more if p.decision == UNDECIDED else 0.0,
                ]
            )
        columns = [*self.fields, "values", *POINT_COLUMNS]
        table = pd.DataFrame(rows, columns=columns)
        if not self.refined:
            return table
        frames = [table.assign(stage="grid")]
        for r in self.refined:
            sub = r.tuning.table
            sub.insert(0, r.column, [r.value] * len(sub))
            frames.append(sub.assign(stage=f"refine at {r.fixed}"))
        return pd.concat(frames, ignore_index=True)

    def format_table(self, width: int = 100) -> str:
        """The table ``simkit tune`` prints: the target at every point, then the answer."""
        from simkit.output.terminal import tuning_table

        return tuning_table(self, width=width)

    def plot(self) -> Figure:
        """The target quantity against the varied value, its 95% band and the target line."""
        from simkit.output.plots import tune_figure

        return tune_figure(self)

    def files(self) -> dict[str, Any]:
        """``tune.csv`` and ``tune.png``, by file name."""
        from simkit.output.result_files import tune_files

        return tune_files(self)

    def write(self, out_dir: str | Path) -> list[Path]:
        from simkit.output.files import OutputDir

        return OutputDir(out_dir, "out_dir").write(self.files())

    def _repr_html_(self) -> str:
        from simkit.output.notebook import tuning_html

        return tuning_html(self)


POINT_COLUMNS = [
    "rounds",
    "mean",
    "se",
    "ci_low",
    "ci_high",
    "met",
    "clearly",
    "decision",
    "more_rounds",
]


def _describe(point: Point, fields: list[str]) -> str:
    values = ", ".join(f"{f} = {cell_text(v)}" for f, v in zip(fields, point.values, strict=True))
    if point.actual:
        values += f" ({point.actual})"
    return values


def about(n: float) -> str:
    """``123456.7`` -> ``"123,000"``: a count of rounds to two significant digits."""
    if n != n or n == float("inf"):
        return "unbounded"
    n = max(1, math.ceil(n))
    digits = len(str(n))
    step = 10 ** max(0, digits - 2)
    return f"{math.ceil(n / step) * step:,}"


def _estimate_text(target: Target, p: Point) -> str:
    unit = "actions" if target.denominator else target.numerator.metric
    return format_estimate(unit, p.estimate.mean, p.estimate.se)


def bracket(target: Target, points: list[Point]) -> tuple[Point, Point] | None:
    """The neighbouring pair (grid order) whose estimates straddle the target value."""
    if target.comparator != "=":
        return None
    valid = [p for p in points if p.estimate.mean == p.estimate.mean]
    for a, b in zip(valid, valid[1:], strict=False):
        da, db = a.estimate.mean - target.value, b.estimate.mean - target.value
        if da == 0 or db == 0 or (da < 0) != (db < 0):
            return a, b
    return None


def _undecided_text(target: Target, points: list[Point], fields: list[str]) -> str:
    undecided = [p for p in points if p.decision == UNDECIDED]
    if not undecided:
        return ""
    parts = []
    for p in undecided:
        if p.more == float("inf"):
            need = "its estimate sits on an edge of the band, more rounds may not decide it"
        else:
            need = f"needs about {about(p.more)} more rounds"
        parts.append(f"{_describe(p, fields)} ({_estimate_text(target, p)}): {need}")
    return (
        "Undecided (the 95% interval reaches over an edge of the band) at " + "; ".join(parts) + "."
    )


def _answer(target: Target, points: list[Point], fields: list[str]) -> str:
    def est(p: Point) -> str:
        return _estimate_text(target, p)

    met = [p for p in points if p.met]
    valid = [p for p in points if p.estimate.mean == p.estimate.mean]
    if not valid:
        return (
            "The target quantity has no value at any point (a ratio whose denominator is always 0)."
        )
    band = target.band
    if len(fields) == 1:
        parts = []
        if met:
            shown = "; ".join(f"{_describe(p, fields)}: {est(p)}" for p in met)
            if band is not None:
                parts.append(
                    f"Met (the whole 95% interval inside {band[0]:g} to {band[1]:g}) at {shown}."
                )
            elif target.comparator == "=":
                parts.append(f"Met (the 95% interval covers {target.value:g}) at {shown}.")
            else:
                clear = [p for p in met if p.clearly]
                parts.append(f"Met ({target.comparator} {target.value:g}) at {shown}.")
                if clear and len(clear) < len(met):
                    parts.append(
                        "Clearly met (the whole interval) at "
                        + ", ".join(_describe(p, fields) for p in clear)
                        + "."
                    )
        pair = bracket(target, points)
        if pair is not None:
            a, b = pair
            parts.append(
                f"The target {target.value:g} lies between {_describe(a, fields)} "
                f"({est(a)}) and {_describe(b, fields)} ({est(b)})."
            )
        if band is not None:
            undecided = _undecided_text(target, points, fields)
            if undecided:
                parts.append(undecided)
            elif not met:
                parts.append(
                    f"Not met at any value: every 95% interval lies outside "
                    f"{band[0]:g} to {band[1]:g}."
                )
        if not parts:
            closest = min(valid, key=lambda p: abs(p.estimate.mean - target.value))
            parts.append(
                f"Not reachable in this range; closest: {_describe(closest, fields)} "
                f"({est(closest)})."
            )
        if band is None and target.comparator == "=":
            parts.append(
                f"('=' without a tolerance: met where the 95% interval covers {target.value:g}, "
                f"which more rounds make harder; '= {target.value:g} ± 0.05' or --tolerance "
                "decides met, not met or undecided.)"
            )
        return " ".join(parts)
    undecided = _undecided_text(target, points, fields) if band is not None else ""
    if met:
        return (
            f"{len(met)} of {len(points)} pairs meet the target: "
            + "; ".join(f"{_describe(p, fields)} ({est(p)})" for p in met)
            + "."
            + (" " + undecided if undecided else "")
        )
    closest = min(valid, key=lambda p: abs(p.estimate.mean - target.value))
    return (
        f"No pair meets the target in this grid; closest: {_describe(closest, fields)} "
        f"({est(closest)})." + (" " + undecided if undecided else "")
    )


def finer_knobs(scenario: Scenario, axes: tuple[Axis, ...]) -> tuple[tuple[str, str], ...]:
    """``(target, knob)`` of the finer knobs of the one varied combatant field (System
    ``finer``: readiness -> advantage; none for ``*``, rules or two fields)."""
    if len(axes) != 1 or axes[0].target in ("*", "rules"):
        return ()
    axis = axes[0]
    knobs = system_of(scenario).finer.get(axis.field, ())
    return tuple((axis.target, k) for k in knobs)


REFINE_STEPS = 10  # a finer knob is tuned over at most this many steps above its lowest value


def _point(target: Target, values: tuple[Any, ...], actual: str, result: Any) -> Point:
    e = target.estimate(result)
    decision = target.decision(e)
    return Point(
        values,
        actual,
        e,
        decision == MET if target.band is not None else target.met(e),
        target.clearly(e),
        decision,
        result.rounds,
        target.more_rounds(e, result.rounds),
    )


def _decide(
    target: Target,
    points: list[Point],
    scenarios: list[Scenario],
    seed: Any,
    max_rounds: int,
    workers: int | None,
    progress: Callable[[int], None] | None,
) -> list[Point]:
    """More rounds where they decide the answer: the two values the target lies between
    (else the closest value), if undecided, each played again at about the rounds that
    decide it (at least twice its rounds, at most ``max_rounds``) until decided."""
    valid = [p for p in points if p.estimate.mean == p.estimate.mean]
    if target.band is None or not valid:
        return points
    pair = bracket(target, points)
    deciding = (
        list(pair)
        if pair is not None
        else [min(valid, key=lambda p: abs(p.estimate.mean - target.value))]
    )
    out = list(points)
    for p in deciding:
        k = points.index(p)
        q = p
        while q.decision == UNDECIDED and q.rounds < max_rounds:
            wanted = q.rounds + q.more * 1.2
            if not wanted <= max_rounds:
                break  # out of reach: said as "needs about N more rounds"
            rounds = int(min(max_rounds, max(2 * q.rounds, math.ceil(wanted))))
            res = run(
                scenarios[k],
                rounds,
                np.random.SeedSequence(seed),
                workers=workers,
                progress=progress,
                pairs=target.pairs,
            )
            q = _point(target, q.values, q.actual, res)
        out[k] = q
    return out


def tune(
    scenario_or_path: Scenario | str | Path,
    vary: VarySpec,
    target: str | Target,
    rounds: int | None = None,
    rng: RngLike = None,
    *,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    scheduler: Any = None,
    refine: bool = False,
    max_rounds: int | None = None,
    precision: Any = None,
) -> Tuning:
    """Find the value(s) of one or two fields that meet a balance target.

    Parameters
    ----------
    scenario_or_path : Scenario or path
    vary : spec or list of specs
        One or two varied fields, as for :func:`simkit.sweep`
        (``"Troll Chief.readiness=1..10"``, ``"Wolf.readiness=+0..+3"``).
    target : str or Target
        ``"side:monsters.actions / side:party.actions = 1"``; ``>=`` and ``<=`` too.
        ``"... = 1 ± 0.05"`` (``+-``, ``± 5%``): met where the whole 95% interval lies
        inside the band, not met where it lies outside, otherwise undecided with about
        the rounds that would decide it.
    rounds, rng, workers, progress, scheduler :
        As for :func:`simkit.sweep` (every point has the same seed).
    refine : bool
        If the target lies between two values of a combatant's field, also tune each
        finer knob of that combatant (System ``finer``: readiness's advantage, vtm's
        wound_penalty) with the field at each of the two values.
    max_rounds : int, optional
        With a tolerance, the two values the target lies between (else the closest) are
        played again with more rounds while undecided, up to this many rounds each
        (default: ``DECIDE_FACTOR`` = 64 times the rounds of the grid, an interval 8
        times narrower; with ``precision``, its ``max_rounds``).
    precision : Precision, optional
        Instead of ``rounds``: every point in the same doubling blocks until the target
        quantity's 95% interval at every point is that precise
        (:mod:`simkit.analysis.precision`).

    Returns
    -------
    Tuning
        ``.points`` with the target's estimate at each point, ``.answer`` in words,
        ``.table``, ``.plot()``, ``.write(dir)`` (tune.csv and tune.png).
    """
    scenario = as_scenario(scenario_or_path)
    if not isinstance(target, Target):
        target = parse_target(scenario, target, available_metrics(scenario), label="target")

    def quantities(results: list[Any], labels: list[str]) -> list[Any]:
        out = []
        for label, res in zip(labels, results, strict=True):
            e = target.estimate(res)
            out.append((f"{target.quantity} at {label}", e.mean, e.ci_low, e.ci_high))
        return out

    result = sweep(
        scenario,
        vary,
        rounds,
        rng,
        workers=workers,
        progress=progress,
        scheduler=scheduler,
        pairs=target.pairs,
        precision=precision,
        quantities=quantities,
    )
    points = [
        _point(target, values, result.actual_values(k), res)
        for k, (values, res) in enumerate(
            zip([tuple(p.values()) for p in result.points], result.results, strict=True)
        )
    ]
    scenarios = [res.scenario for res in result.results]
    if max_rounds is None:
        max_rounds = (
            precision.max_rounds
            if precision is not None
            else min(DEFAULT_MAX_ROUNDS, DECIDE_FACTOR * result.rounds)
        )
    points = _decide(target, points, scenarios, result.seed, max_rounds, workers, progress)
    knobs = finer_knobs(scenario, result.axes)
    pair = bracket(target, points)
    finer: tuple[str, ...] = ()
    refined: list[Refinement] = []
    answer = _answer(target, points, result.fields)
    if knobs and pair is not None and not any(p.met for p in pair):
        finer = tuple(f"{who}.{knob}" for who, knob in knobs)
        axis = result.axes[0]
        answer += f" Finer knobs of {axis.target} that could close it: {', '.join(finer)}" + (
            "." if refine else " (--refine tunes them)."
        )
        if refine:
            fields = system_of(scenario).fields
            for who, knob in knobs:
                low = int(fields[knob].low or 0)
                high = int(min(fields[knob].high or low + REFINE_STEPS, low + REFINE_STEPS))
                for p in pair:
                    fixed = scenarios[points.index(p)]
                    sub = tune(
                        fixed,
                        f"{who}.{knob}={low}..{high}",
                        target,
                        result.rounds,
                        np.random.SeedSequence(result.seed),
                        workers=workers,
                        progress=progress,
                        scheduler=scheduler,
                        max_rounds=max_rounds,
                    )
                    text = f"{axis.column} = {cell_text(p.values[0])}"
                    refined.append(Refinement(text, axis.column, p.values[0], sub))
                    answer += f" With {text}: {sub.answer}"
    if result.stopping is not None:
        answer += " " + result.stopping.line()[0].upper() + result.stopping.line()[1:] + "."
    return Tuning(scenario, target, tuple(points), answer, result, finer, tuple(refined))
