"""Parameter sweeps: run a scenario over a grid of field values with common random numbers.

A sweep varies one or more fields (``Wolf.readiness=1..5``, ``rules.order=dynamic,chain``)
over the full grid of their values and runs every grid point with the *same* seed.
Every round draws from a stream of its own (``random_stream``), so all points see the
same dice round by round: differences between neighbouring points are mostly the
effect of the change, not noise.

Specs (``--vary`` on the command line, ``vary`` in Python, ``vary`` in a ``[sweep]``
table of the scenario file) have the form ``TARGET.FIELD=VALUES``:

``TARGET``
    a combatant name, the base name of a ``count`` group (every member changes),
    ``*`` (every combatant) or ``rules``.
``VALUES``
    ``a..b`` (every integer from a to b, both included; integer fields only) or a
    comma-separated list ``x,y,z``; each value is read by the field's type (integer,
    number, ``true``/``false`` or text) and checked against what the field allows.

Every spec and every grid point is checked before anything is simulated; a bad one
raises :class:`~simkit.scenario.ScenarioError` with a one-line message naming it.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simkit.analysis.result import COLUMNS, Result
from simkit.analysis.run import as_scenario, run
from simkit.deferred import pandas as pd
from simkit.engine import RngLike, seed_sequence, seed_value
from simkit.engine.distributed import connect
from simkit.output import result_files
from simkit.scenario import (
    Axis,
    Scenario,
    ScenarioError,
    grid_scenarios,
    parse_vary,
    sweep_table,
)
from simkit.scenario.specs import VarySpec

MAX_POINTS = 10_000
# Metrics drawn by ``SweepResult.write`` and printed by ``format_table``.
PLOT_METRICS = result_files.SWEEP_PLOTS


@dataclass(frozen=True)
class SweepResult:
    """The outcome of a sweep: one :class:`~simkit.result.Result` per grid point.

    Attributes
    ----------
    scenario : Scenario
        The scenario the changes were applied to.
    axes : tuple of Axis
        The varied fields, first one slowest in the grid.
    rounds, seed :
        Rounds per point and the seed entropy shared by every point.
    table : pandas.DataFrame
        Tidy: one column per varied field (``"Wolf.readiness"``), then ``combatant,
        metric, mean, se, ci_low, ci_high`` (every row of every point's result table).
    results : tuple of Result
        The result of each grid point, in grid order (``points`` gives the values).
    """

    scenario: Scenario
    axes: tuple[Axis, ...]
    rounds: int
    seed: int | list[int]
    table: pd.DataFrame
    elapsed_s: float
    results: tuple[Result, ...] = field(repr=False, compare=False)
    # a sweep to a precision: how it stopped (simkit.analysis.precision.Stopping)
    stopping: Any = field(default=None, repr=False, compare=False)

    @property
    def fields(self) -> list[str]:
        """The column names of the varied fields."""
        return [a.column for a in self.axes]

    @property
    def points(self) -> list[dict[str, Any]]:
        """Every grid point as ``{column: value}``, in grid order."""
        return [
            dict(zip(self.fields, values, strict=True))
            for values in itertools.product(*(a.values for a in self.axes))
        ]

    def result(self, **point: Any) -> Result:
        """The result of one grid point, by keyword: ``result(**{"Wolf.readiness": 3})``."""
        for p, res in zip(self.points, self.results, strict=True):
            if p == point:
                return res
        raise KeyError(f"no grid point {point!r}; fields: {', '.join(self.fields)}")

    def metric(self, metric: str, stat: str = "mean") -> pd.DataFrame:
        """One metric as a wide table: grid points as rows, combatants as columns."""
        t = self.table[self.table.metric == metric]
        if t.empty:
            raise KeyError(f"no metric {metric!r} in this sweep")
        out = t.pivot_table(
            index=self.fields, columns="combatant", values=stat, sort=False, dropna=False
        )
        names = [n for n in (*self.scenario.names, "") if n in out.columns]
        out = out[names]
        out.columns.name = None
        return out

    def level_table(self, level: str) -> pd.DataFrame:
        """Like ``table``, per ``"combatant"``, ``"group"`` or ``"side"``."""
        if level == "combatant":
            return self.table
        frames = []
        for values, res in zip(
            itertools.product(*(a.values for a in self.axes)), self.results, strict=True
        ):
            t = res.by(level)
            for axis, value in reversed(list(zip(self.axes, values, strict=True))):
                t.insert(0, axis.column, [value] * len(t))
            frames.append(t)
        return pd.concat(frames, ignore_index=True)

    def actual_values(self, point: int) -> str:
        """What an offset means at grid point ``point``: the values it gave, in words."""
        scenario = self.results[point].scenario
        parts = []
        for axis in self.axes:
            if not axis.relative:
                continue
            if axis.target == "*":
                chosen = list(scenario.combatants)
            else:
                chosen = [c for c in scenario.combatants if axis.target in (c.name, c.group)]
            values = sorted({c.params[axis.field] for c in chosen}, key=str)
            parts.append(f"{axis.field} {'/'.join(str(v) for v in values)}")
        return ", ".join(parts)

    def format_table(
        self,
        metrics: Sequence[str] | None = None,
        *,
        by: str = "combatant",
        width: int = 100,
    ) -> str:
        """One row per (grid point, combatant / group / side); ``metrics`` (default
        first_action, actions, attacked_before_acting) as ``mean ± h``."""
        from simkit.output.terminal import sweep_table

        return sweep_table(self, metrics, by=by, width=width)

    def _repr_html_(self) -> str:
        from simkit.output.notebook import sweep_html

        return sweep_html(self)

    def plot(self, metric: str = "first_action", by: str = "combatant") -> Any:
        """``metric`` against the varied field (one field: a line per combatant, group or
        side with its 95% band; two: a heatmap), as a matplotlib Figure."""
        from simkit.output.plots import sweep_figure

        return sweep_figure(self, metric, by=by)

    def files(self) -> dict[str, bytes]:
        """``sweep.csv`` and the plots, by file name (see
        simkit.output.result_files.sweep_files)."""
        return result_files.sweep_files(self)

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write :meth:`files` into the result directory ``out_dir`` as a whole."""
        from simkit.output.files import OutputDir

        return OutputDir(out_dir, "out_dir").write(self.files())


def sweep(
    scenario_or_path: Scenario | str | Path,
    vary: VarySpec | None = None,
    rounds: int | None = None,
    rng: RngLike = None,
    *,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    scheduler: Any = None,
    pairs: Any = (),
    precision: Any = None,
    quantities: Any = None,
) -> SweepResult:
    """Run a scenario at every point of a grid of field values, with common random numbers.

    Parameters
    ----------
    scenario_or_path : Scenario or path
        The base scenario.
    vary : str, list of str or mapping, optional
        What to vary: ``["Wolf.readiness=1..5", "rules.order=dynamic,chain"]`` or
        ``{"Wolf.readiness": [1, 2, 3]}``.  Default: ``vary`` of the scenario's
        ``[sweep]`` table.  The grid is the cartesian product (first field slowest).
    rounds : int, optional
        Rounds per grid point; default ``rounds`` of ``[sweep]``, else the scenario's.
    rng : numpy Generator, SeedSequence, int or None, optional
        The randomness, normalised once and shared by every point (default: the
        scenario's ``seed``).  A point's numbers are identical to
        ``simkit.run(changed_scenario, rounds, seed)``.
    workers, progress, scheduler :
        As for :func:`simkit.run`; ``progress`` counts the rounds of every point.  A
        ``scheduler`` (Dask Client, address or ``"local"``) is connected to once for
        the whole sweep.
    pairs :
        Extra cross sums to keep at every point (a function of the point's layout), for
        the intervals of ratios of two metrics (``simkit.tune``).
    precision, quantities :
        A :class:`~simkit.analysis.precision.Precision` instead of ``rounds``: every
        point is played in the same doubling blocks until ``quantities`` (a function of
        the points' results and their labels, ``"Wolf.readiness=3"``, giving ``(name,
        mean, low, high)`` rows; default the metrics ``simkit sweep`` shows) all meet it;
        every point has the same rounds.

    Raises
    ------
    ScenarioError
        For a bad spec or grid point (unknown combatant or field, empty range,
        value out of range, malformed spec), before anything is simulated.
    """
    scenario = as_scenario(scenario_or_path)
    file_vary, file_rounds = sweep_table(scenario)
    label = "vary"
    if vary is None:
        if file_vary is None:
            raise ScenarioError(
                f"{scenario.source}: nothing to vary; give vary (e.g. 'Wolf.readiness=1..5') "
                "or a [sweep] table with vary = [...]"
            )
        vary, label = file_vary, f"{scenario.source}: sweep.vary"
    axes = parse_vary(scenario, vary, label)
    if rounds is None:
        rounds = file_rounds if file_rounds is not None else scenario.rounds
    scenarios = grid_scenarios(scenario, axes, label)
    seq = seed_sequence(scenario.seed if rng is None else rng)  # once: the same for every point
    start = time.perf_counter()
    if precision is not None:
        from simkit.analysis import precision as _precision
        from simkit.scenario.specs import cell

        labels = [
            ", ".join(f"{a.column}={cell(v)}" for a, v in zip(axes, values, strict=True))
            for values in itertools.product(*(a.values for a in axes))
        ]
        chosen = quantities or _precision.points_quantities
        results = tuple(
            _precision.runs_to_precision(
                scenarios,
                precision,
                seq,
                lambda rs: chosen(rs, labels),
                workers=workers,
                progress=progress,
                pairs=pairs,
            )
        )
        rounds = results[0].rounds
    else:
        results = _play(scenarios, rounds, seq, workers, progress, scheduler, pairs)
    frames = []
    for values, res in zip(itertools.product(*(a.values for a in axes)), results, strict=True):
        t = res.table.copy()
        for axis, value in reversed(list(zip(axes, values, strict=True))):
            t.insert(0, axis.column, [value] * len(t))
        frames.append(t)
    table = pd.concat(frames, ignore_index=True)
    table = table[[a.column for a in axes] + COLUMNS]
    seed = seed_value(seq)
    return SweepResult(
        scenario,
        tuple(axes),
        rounds,
        seed,
        table,
        time.perf_counter() - start,
        results,
        results[0].stopping,
    )


def _play(
    scenarios: list[Scenario],
    rounds: int,
    seq: Any,
    workers: int | None,
    progress: Callable[[int], None] | None,
    scheduler: Any,
    pairs: Any,
) -> tuple[Result, ...]:
    """Every point played with ``rounds`` rounds and the same seed."""
    with connect(scheduler, workers) as client:  # None without a scheduler
        return tuple(
            run(
                s,
                rounds=rounds,
                rng=seq,
                workers=workers,
                progress=progress,
                scheduler=client,
                pairs=pairs,
            )
            for s in scenarios
        )
