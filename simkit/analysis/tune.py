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

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simkit.analysis.run import as_scenario
from simkit.analysis.sweep import SweepResult, sweep
from simkit.analysis.targets import Target, parse_target
from simkit.engine import RngLike, layout_for
from simkit.metrics import COMBATANT, GROUP, SIDE, Estimate, metric_slots
from simkit.output.numbers import format_estimate
from simkit.scenario import Scenario
from simkit.scenario.specs import VarySpec
from simkit.scenario.specs import cell as cell_text

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
    """One grid point: its values (as written and as played) and the target's estimate."""

    values: tuple[Any, ...]
    actual: str
    estimate: Estimate
    met: bool
    clearly: bool


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
        Every point's full result (for anything else one wants to read).
    """

    scenario: Scenario
    target: Target
    points: tuple[Point, ...]
    answer: str
    sweep: SweepResult = field(repr=False)

    @property
    def fields(self) -> list[str]:
        return self.sweep.fields

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
                    e.mean,
                    e.se,
                    e.ci_low,
                    e.ci_high,
                    p.met,
                    p.clearly,
                ]
            )
        columns = [*self.fields, "values", "mean", "se", "ci_low", "ci_high", "met", "clearly"]
        return pd.DataFrame(rows, columns=columns)

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


def _describe(point: Point, fields: list[str]) -> str:
    values = ", ".join(f"{f} = {cell_text(v)}" for f, v in zip(fields, point.values, strict=True))
    if point.actual:
        values += f" ({point.actual})"
    return values


def _answer(target: Target, points: list[Point], fields: list[str]) -> str:
    def est(p: Point) -> str:
        unit = "actions" if target.denominator else target.numerator.metric
        return format_estimate(unit, p.estimate.mean, p.estimate.se)

    met = [p for p in points if p.met]
    valid = [p for p in points if p.estimate.mean == p.estimate.mean]
    if not valid:
        return (
            "The target quantity has no value at any point (a ratio whose denominator is always 0)."
        )
    if len(fields) == 1:
        parts = []
        if met:
            shown = "; ".join(f"{_describe(p, fields)}: {est(p)}" for p in met)
            if target.comparator == "=":
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
        if target.comparator == "=":
            for a, b in zip(valid, valid[1:], strict=False):
                da, db = a.estimate.mean - target.value, b.estimate.mean - target.value
                if da == 0 or db == 0 or (da < 0) != (db < 0):
                    parts.append(
                        f"The target {target.value:g} lies between {_describe(a, fields)} "
                        f"({est(a)}) and {_describe(b, fields)} ({est(b)})."
                    )
                    break
        if not parts:
            closest = min(valid, key=lambda p: abs(p.estimate.mean - target.value))
            parts.append(
                f"Not reachable in this range; closest: {_describe(closest, fields)} "
                f"({est(closest)})."
            )
        return " ".join(parts)
    if met:
        return (
            f"{len(met)} of {len(points)} pairs meet the target: "
            + "; ".join(f"{_describe(p, fields)} ({est(p)})" for p in met)
            + "."
        )
    closest = min(valid, key=lambda p: abs(p.estimate.mean - target.value))
    return (
        f"No pair meets the target in this grid; closest: {_describe(closest, fields)} "
        f"({est(closest)})."
    )


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
    rounds, rng, workers, progress, scheduler :
        As for :func:`simkit.sweep` (every point has the same seed).

    Returns
    -------
    Tuning
        ``.points`` with the target's estimate at each point, ``.answer`` in words,
        ``.table``, ``.plot()``, ``.write(dir)`` (tune.csv and tune.png).
    """
    scenario = as_scenario(scenario_or_path)
    if not isinstance(target, Target):
        target = parse_target(scenario, target, available_metrics(scenario), label="target")
    result = sweep(
        scenario,
        vary,
        rounds,
        rng,
        workers=workers,
        progress=progress,
        scheduler=scheduler,
        pairs=target.pairs,
    )
    points = []
    for k, (values, res) in enumerate(
        zip([tuple(p.values()) for p in result.points], result.results, strict=True)
    ):
        e = target.estimate(res)
        points.append(Point(values, result.actual_values(k), e, target.met(e), target.clearly(e)))
    answer = _answer(target, points, result.fields)
    return Tuning(scenario, target, tuple(points), answer, result)
