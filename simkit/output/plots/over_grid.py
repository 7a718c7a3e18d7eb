"""Sweeps: a metric over the grid of varied values (lines with bands for one field,
heatmaps for two; ``SweepResult.plot``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from simkit.output.plots.look import (
    FONT,
    INK,
    MAX_LINES,
    WIDTH,
    band_handle,
    heatmap,
    label_x,
    label_y,
    lines,
    new_figure,
    palette,
    panel_title,
)
from simkit.output.report_document.names import (
    axis_label,
    factor_of,
    group_label,
    sweep_axis,
    title_of,
)

if TYPE_CHECKING:
    from simkit.analysis.sweep import SweepResult


# --------------------------------------------------------------------------- sweeps
class _View:
    """A sweep read at one level: ``table`` with a ``name`` column, ``names`` in order."""

    def __init__(self, sweep: Any, by: str) -> None:
        if by == "combatant":
            self.table = sweep.table.rename(columns={"combatant": "name"})
            present = set(self.table.name)
            self.names = [n for n in (*sweep.scenario.names, "") if n in present]
        else:
            self.table = sweep.level_table(by).rename(columns={by: "name"})
            self.names = list(dict.fromkeys(self.table.name))
        self.by = by


def _estimates(rows: Any) -> list[Any]:
    from simkit.metrics import Estimate

    return [
        Estimate(float(r["mean"]), float(r["se"]), float(r["ci_low"]), float(r["ci_high"]))
        for _, r in rows.iterrows()
    ]


def _sweep_series(sweep: Any, view: _View, metric: str, names: Sequence[str]) -> list[tuple]:
    """(label, colour, estimates per point, style) per name; copies of a group large enough
    to crowd the panel are drawn as one line, the group's mean per member."""
    from simkit.metrics import Estimate

    axis = sweep.axes[0]
    t = view.table[view.table.metric == metric]
    colours = palette(sweep.scenario).of(view.by)
    scenario = sweep.scenario
    out: list[tuple] = []
    if view.by == "combatant" and len(names) > MAX_LINES:
        for group in scenario.groups:
            members = [c.name for c in scenario.combatants if c.group == group]
            rows = t[t.name.isin(members)]
            per = rows.groupby(axis.column, sort=False)[["mean", "se", "ci_low", "ci_high"]].mean()
            per = per.reindex(list(axis.values))
            ests = [Estimate(*map(float, r)) for r in per.to_numpy()]
            out.append((group_label(scenario, group) + " (each)", colours[members[0]], ests, "-"))
        return out
    seen: set[str] = set()
    for name in names:
        rows = t[t.name == name].set_index(axis.column).reindex(list(axis.values))
        if rows["mean"].isna().all():
            continue
        colour = colours.get(name, INK)
        label = name or "scenario"
        if view.by == "combatant" and name:
            group = scenario.combatants[scenario.index(name)].group
            label = group_label(scenario, group) if group != name else name
            if label in seen:
                label = "_" + label  # copies: one legend entry
            seen.add(label)
        out.append((label, colour, _estimates(rows.reset_index()), "-"))
    return out


def plot_sweep_lines(
    result: SweepResult,
    metric: str,
    ax: Axes | None = None,
    combatants: Sequence[str] | None = None,
    by: str = "combatant",
) -> Axes:
    """``metric`` against the varied field, one line per combatant (or group, side) with
    its 95% band; offsets are shown as the values they gave."""
    if len(result.axes) != 1:
        raise ValueError(f"a line plot needs a sweep over one field, not {len(result.axes)}")
    view = _View(result, by)
    if not (view.table.metric == metric).any():
        raise KeyError(f"no metric {metric!r} in this sweep")
    if ax is None:
        ax = new_figure(WIDTH, 4.0).add_subplot()
    names = list(combatants) if combatants is not None else view.names
    xs, labels, xtitle = sweep_axis(result, 0)
    handles = lines(ax, xs, _sweep_series(result, view, metric, names), metric)
    ax.set_xticks(xs, labels)
    label_x(ax, xtitle)
    label_y(ax, axis_label(metric))
    panel_title(ax, f"{title_of(metric)} against {result.axes[0].column}")
    visible = [h for h in handles if not h.get_label().startswith("_")]
    ax.legend(
        handles=[*visible, band_handle()],
        fontsize=FONT - 1,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        frameon=False,
    )
    return ax


def plot_sweep_heatmap(
    result: SweepResult, metric: str, combatants: Sequence[str] | None = None, by: str = "group"
) -> Figure:
    """Heatmaps of the mean of ``metric`` over a two-field sweep: one panel per group
    (copies averaged: "each") or side, one shared grey scale."""
    if len(result.axes) != 2:
        raise ValueError(f"a heatmap needs a sweep over two fields, not {len(result.axes)}")
    scenario = result.scenario
    rows_axis, cols_axis = result.axes
    level = "group" if by == "combatant" else by
    if level == "group":
        t = result.table[result.table.metric == metric]
        if t.empty:
            raise KeyError(f"no metric {metric!r} in this sweep")
        group_of = {c.name: c.group for c in scenario.combatants}
        t = t[t.combatant != ""].assign(name=lambda d: d.combatant.map(group_of))
        names = list(combatants) if combatants is not None else list(scenario.groups)
        titles = {
            g: group_label(scenario, g) + (" (each)" if "×" in group_label(scenario, g) else "")
            for g in names
        }
    else:
        t = result.level_table(level).rename(columns={level: "name"})
        t = t[t.metric == metric]
        if t.empty:
            raise KeyError(f"no metric {metric!r} in this sweep")
        names = list(combatants) if combatants is not None else list(dict.fromkeys(t.name))
        titles = {n: n for n in names}
    f = factor_of(metric)
    grids = []
    for name in names:
        g = (
            t[t.name == name]
            .groupby([rows_axis.column, cols_axis.column], sort=False)["mean"]
            .mean()
        )
        g = g.unstack(cols_axis.column).reindex(
            index=list(rows_axis.values), columns=list(cols_axis.values)
        )
        grids.append(f * g.to_numpy(float))
    stacked = np.array(grids)
    finite = stacked[np.isfinite(stacked)]
    vmin, vmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    ncols = min(3, len(names))
    nrows = math.ceil(len(names) / ncols)
    fig = new_figure(min(3.3 * ncols + 1.2, WIDTH + 1), 2.9 * nrows + 0.8)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    ry, ly, ty = sweep_axis(result, 0)
    rx, lx, tx = sweep_axis(result, 1)
    image = None
    fmt = "{:.0f}" if f == 100 else "{:.3g}"
    for k, (name, grid) in enumerate(zip(names, stacked, strict=True)):
        ax = axes[k // ncols][k % ncols]
        image = heatmap(ax, grid, ly, lx, vmin=vmin, vmax=vmax, fmt=fmt)
        label_x(ax, tx)
        label_y(ax, ty)
        panel_title(ax, titles[name])
    for k in range(len(names), nrows * ncols):
        axes[k // ncols][k % ncols].set_visible(False)
    if image is not None:
        bar = fig.colorbar(image, ax=axes, shrink=0.85)
        bar.set_label(axis_label(metric), fontsize=FONT)
        bar.ax.tick_params(labelsize=FONT - 1)
    fig.suptitle(
        f"{title_of(metric)} over {rows_axis.column} × {cols_axis.column}", fontsize=FONT + 1
    )
    return fig


def sweep_figure(result: SweepResult, metric: str, by: str = "combatant") -> Figure:
    """The figure of a sweep: lines with 95% bands (one varied field) or one heatmap per
    group or side (two), per combatant, group or side."""
    if len(result.axes) == 1:
        ax = plot_sweep_lines(result, metric, by=by)
        return ax.get_figure()
    if len(result.axes) == 2:
        return plot_sweep_heatmap(result, metric, by=by)
    raise ValueError(f"a sweep plot shows one or two varied fields, not {len(result.axes)}")
