"""Plots of sweeps and comparisons.  They render results and never simulate.

Figures are built with the object-oriented matplotlib API (``matplotlib.figure.Figure``),
so no pyplot state or interactive backend is involved; functions that draw into one
axes accept ``ax=`` so that notebooks and reports can place them where they like.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from simkit.metrics import is_probability

if TYPE_CHECKING:
    from simkit.analysis.compare import Comparison
    from simkit.analysis.sweep import SweepResult


def _is_numeric(values: Sequence[Any]) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)


def _label(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _metric_label(metric: str) -> str:
    return f"P({metric})" if is_probability(metric) else f"{metric} per round"


def plot_sweep_lines(
    result: SweepResult,
    metric: str,
    ax: Axes | None = None,
    combatants: Sequence[str] | None = None,
) -> Axes:
    """One line per combatant: ``metric`` against the varied field, with its 95% band.

    Needs a sweep over exactly one field.  A numeric field gives lines with shaded
    bands; a categorical one (``rules.order``) gives points with 95% error bars.
    """
    if len(result.axes) != 1:
        raise ValueError(f"a line plot needs a sweep over one field, not {len(result.axes)}")
    axis = result.axes[0]
    if ax is None:
        ax = Figure(figsize=(8, 4.2), layout="constrained").add_subplot()
    t = result.table[result.table.metric == metric]
    if t.empty:
        raise KeyError(f"no metric {metric!r} in this sweep")
    names = list(combatants) if combatants is not None else _names(result, t)
    numeric = _is_numeric(axis.values)
    positions = list(axis.values) if numeric else list(range(len(axis.values)))
    for name in names:
        rows = t[t.combatant == name].set_index(axis.column).reindex(list(axis.values))
        label = name or "scenario"
        mean, low, high = (rows[c].to_numpy(float) for c in ("mean", "ci_low", "ci_high"))
        if numeric:
            (line,) = ax.plot(positions, mean, marker="o", markersize=3, label=label)
            ax.fill_between(positions, low, high, color=line.get_color(), alpha=0.2, lw=0)
        else:
            ax.errorbar(
                positions,
                mean,
                yerr=[mean - low, high - mean],
                marker="o",
                capsize=3,
                label=label,
            )
    if not numeric:
        ax.set_xticks(positions, [_label(v) for v in axis.values])
        ax.set_xlim(-0.5, len(positions) - 0.5)
    elif all(isinstance(v, int) for v in axis.values) and len(axis.values) <= 25:
        ax.set_xticks(positions)
    ax.set_xlabel(axis.column)
    ax.set_ylabel(_metric_label(metric))
    ax.set_title(f"{metric} vs {axis.column} (95% bands, {result.rounds:,} rounds per point)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return ax


def plot_sweep_heatmap(
    result: SweepResult, metric: str, combatants: Sequence[str] | None = None
) -> Figure:
    """Heatmaps of the mean of ``metric`` over a two-field sweep, one panel per combatant.

    Rows are the values of the first field, columns those of the second; every panel
    shares one colour scale, and cells are annotated with the mean when the grid is
    small enough to read.
    """
    if len(result.axes) != 2:
        raise ValueError(f"a heatmap needs a sweep over two fields, not {len(result.axes)}")
    rows_axis, cols_axis = result.axes
    t = result.table[result.table.metric == metric]
    if t.empty:
        raise KeyError(f"no metric {metric!r} in this sweep")
    names = list(combatants) if combatants is not None else _names(result, t)
    grids = []
    for name in names:
        g = t[t.combatant == name].pivot_table(
            index=rows_axis.column, columns=cols_axis.column, values="mean", dropna=False
        )
        grids.append(g.reindex(index=list(rows_axis.values), columns=list(cols_axis.values)))
    stacked = np.array([g.to_numpy(float) for g in grids])
    finite = stacked[np.isfinite(stacked)]
    vmin, vmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    ncols = min(3, len(names))
    nrows = math.ceil(len(names) / ncols)
    fig = Figure(figsize=(3.6 * ncols + 1.0, 3.0 * nrows + 0.6), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    annotate = len(rows_axis.values) * len(cols_axis.values) <= 144
    image = None
    for k, (name, grid) in enumerate(zip(names, stacked, strict=True)):
        ax = axes[k // ncols][k % ncols]
        image = ax.imshow(grid, origin="lower", aspect="auto", vmin=vmin, vmax=vmax)
        ax.set_xticks(range(len(cols_axis.values)), [_label(v) for v in cols_axis.values])
        ax.set_yticks(range(len(rows_axis.values)), [_label(v) for v in rows_axis.values])
        ax.set_xlabel(cols_axis.column)
        ax.set_ylabel(rows_axis.column)
        ax.set_title(name or "scenario")
        if annotate:
            mid = (vmin + vmax) / 2
            for i in range(grid.shape[0]):
                for j in range(grid.shape[1]):
                    v = grid[i, j]
                    text = "n/a" if not np.isfinite(v) else f"{v:.3g}"
                    color = "black" if np.isfinite(v) and v > mid else "white"
                    ax.text(j, i, text, ha="center", va="center", fontsize=7, color=color)
    for k in range(len(names), nrows * ncols):
        axes[k // ncols][k % ncols].set_visible(False)
    if image is not None:
        fig.colorbar(image, ax=axes, shrink=0.8, label=f"mean {_metric_label(metric)}")
    fig.suptitle(f"{metric}: mean over {rows_axis.column} x {cols_axis.column}")
    return fig


def sweep_figure(result: SweepResult, metric: str) -> Figure:
    """The standard figure of a sweep: lines with bands (one field) or heatmaps (two)."""
    if len(result.axes) == 1:
        ax = plot_sweep_lines(result, metric)
        return ax.get_figure()
    return plot_sweep_heatmap(result, metric)


def plot_differences(
    comparison: Comparison,
    metric: str,
    ax: Axes | None = None,
    combatants: Sequence[str] | None = None,
) -> Axes:
    """Difference B - A of ``metric`` per combatant: paired 95% interval (thick) and the
    unpaired one (thin), to show what common random numbers buy."""
    t = comparison.table[comparison.table.metric == metric]
    if t.empty:
        raise KeyError(f"no metric {metric!r} in this comparison")
    if combatants is not None:
        t = t.set_index("combatant").loc[list(combatants)].reset_index()
    if ax is None:
        ax = Figure(figsize=(7, 0.4 * len(t) + 1.5), layout="constrained").add_subplot()
    y = np.arange(len(t))[::-1]
    diff = t["difference"].to_numpy(float)
    half_unpaired = comparison.z_unpaired * t["se_unpaired"].to_numpy(float)
    ax.errorbar(
        diff,
        y,
        xerr=half_unpaired,
        fmt="none",
        ecolor="0.6",
        elinewidth=1,
        capsize=3,
        label="unpaired 95%",
    )
    ax.errorbar(
        diff,
        y,
        xerr=[diff - t["ci_low"].to_numpy(float), t["ci_high"].to_numpy(float) - diff],
        fmt="o",
        elinewidth=3,
        capsize=0,
        label="paired 95%",
    )
    ax.axvline(0.0, color="0.3", lw=0.8)
    ax.set_yticks(y, [c or "scenario" for c in t["combatant"]])
    ax.set_xlabel(f"{metric}: B - A")
    ax.set_title(metric)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize="small", loc="best")
    return ax


def comparison_figure(
    comparison: Comparison, metrics: Sequence[str] = ("first_action", "actions")
) -> Figure:
    """One :func:`plot_differences` panel per metric, side by side."""
    fig = Figure(figsize=(5.2 * len(metrics), 4.2), layout="constrained")
    for ax, metric in zip(fig.subplots(1, len(metrics), squeeze=False)[0], metrics, strict=True):
        plot_differences(comparison, metric, ax=ax)
    fig.suptitle(f"A: {comparison.label_a}\nB: {comparison.label_b}", fontsize="medium")
    return fig


def _names(result: SweepResult, t: Any) -> list[str]:
    present = set(t.combatant)
    return [n for n in (*result.scenario.names, "") if n in present]


def figure_png(fig: Figure, dpi: int = 110) -> bytes:
    """The figure rendered as PNG bytes."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def result_figure(result: Any, metric: str = "first_action", by: str = "combatant") -> Figure:
    """One metric of a result per combatant, group or side, with 95% error bars."""
    from matplotlib.figure import Figure as _Figure

    rows = [r for r in result.level_rows(by) if r[1] == metric]
    if not rows:
        known = sorted({r[1] for r in result.level_rows(by)})
        raise KeyError(f"no metric {metric!r} per {by}; metrics: {', '.join(known)}")
    percent = is_probability(metric)
    factor = 100.0 if percent else 1.0
    names = [r[0] for r in rows]
    means = [factor * r[2] for r in rows]
    lows = [factor * (r[2] - r[4]) for r in rows]
    highs = [factor * (r[5] - r[2]) for r in rows]
    fig = _Figure(figsize=(7, 0.5 + 0.35 * len(rows)), layout="constrained")
    ax = fig.add_subplot()
    ax.barh(names, means, xerr=[lows, highs], color="#4C72B0", capsize=3)
    ax.invert_yaxis()
    ax.set_xlabel(("%" if percent else metric.replace("_", " ")) + " (95% interval)")
    ax.set_title(f"{metric.replace('_', ' ')} per {by}")
    return fig
