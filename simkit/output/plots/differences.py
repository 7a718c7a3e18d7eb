"""Comparisons: paired differences B - A with their intervals (``Comparison.plot``),
and the before/after bars of the explorer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from simkit.output.plots.look import (
    ERROR,
    FONT,
    INK,
    WIDTH,
    error_bars,
    label_x,
    line_colour,
    new_figure,
    palette,
    panel_title,
    style_axes,
)
from simkit.output.report_document.names import (
    axis_label,
    factor_of,
    group_label,
    title_of,
)

if TYPE_CHECKING:
    from simkit.analysis.compare import Comparison


# --------------------------------------------------------------------------- comparisons
class _ComparisonView:
    def __init__(self, comparison: Any, by: str) -> None:
        self.table = comparison.level_table(by).rename(columns={by: "combatant"})
        self.z_unpaired = comparison.z_unpaired
        self.label_a = getattr(comparison, "label_a", "")
        self.label_b = getattr(comparison, "label_b", "")
        self.scenario = comparison.a.scenario
        self.by = by


def plot_differences(
    comparison: Comparison,
    metric: str,
    ax: Axes | None = None,
    combatants: Sequence[str] | None = None,
    by: str = "combatant",
) -> Axes:
    """Difference B - A of ``metric`` per combatant (group, side): the paired 95% interval
    (thick, in the name's colour) and the unpaired one (thin grey), to show what common
    random numbers buy."""
    view = (
        comparison if isinstance(comparison, _ComparisonView) else _ComparisonView(comparison, by)
    )
    t = view.table[view.table.metric == metric]
    if t.empty:
        raise KeyError(f"no metric {metric!r} in this comparison")
    if combatants is not None:
        t = t.set_index("combatant").loc[list(combatants)].reset_index()
    if ax is None:
        ax = new_figure(WIDTH * 0.7, 0.5 + 0.32 * len(t) + 1.0).add_subplot()
    f = factor_of(metric)
    colours = palette(view.scenario).of(view.by)
    y = np.arange(len(t))
    diff = f * t["difference"].to_numpy(float)
    low = f * t["ci_low"].to_numpy(float)
    high = f * t["ci_high"].to_numpy(float)
    unpaired = f * view.z_unpaired * t["se_unpaired"].to_numpy(float)
    ax.errorbar(diff, y, xerr=unpaired, fmt="none", ecolor="0.65", elinewidth=1, capsize=3)
    for yi, d, lo, hi, name in zip(y, diff, low, high, t["combatant"], strict=True):
        colour = line_colour(colours.get(name, INK))  # dark enough on white
        ax.plot([lo, hi], [yi, yi], color=colour, lw=4, solid_capstyle="butt")
        ax.plot([d], [yi], "o", color=INK, markersize=3.5)
    ax.axvline(0.0, color="0.3", lw=0.8)
    labels = [c or "scenario" for c in t["combatant"]]
    if view.by == "group":
        labels = [group_label(view.scenario, c) if c else "scenario" for c in t["combatant"]]
    ax.set_yticks(y, labels)
    ax.set_ylim(len(t) - 0.5, -0.5)
    label_x(ax, axis_label(metric, difference=True))
    panel_title(ax, title_of(metric))
    style_axes(ax, "x")
    ax.legend(
        handles=[
            Line2D([], [], color="0.4", lw=4, label="paired 95%"),
            Line2D([], [], color="0.65", lw=1, label="unpaired 95%"),
        ],
        fontsize=FONT - 1,
        loc="best",
        frameon=False,
    )
    return ax


def comparison_figure(
    comparison: Comparison,
    metrics: Sequence[str] | str = ("first_action", "actions"),
    by: str = "combatant",
) -> Figure:
    """One :func:`plot_differences` panel per metric, side by side, A and B in the title."""
    if isinstance(metrics, str):
        metrics = [metrics]
    view = _ComparisonView(comparison, by)
    n = len(set(view.table.combatant))
    fig = new_figure(min(4.4 * len(metrics), 13.0), min(1.6 + 0.3 * n, 24.0))
    for ax, m in zip(fig.subplots(1, len(metrics), squeeze=False)[0], metrics, strict=True):
        plot_differences(view, m, ax=ax)  # type: ignore[arg-type]
    if view.label_a or view.label_b:
        import textwrap

        width = fig.get_size_inches()[0]
        text = f"B − A, where A: {view.label_a}; B: {view.label_b}"
        fig.suptitle(textwrap.fill(text, int(width * 14)), fontsize=FONT)
    return fig


def comparison_bars(base: Any, current: Any, differences: Any, metric: str = "actions") -> Figure:
    """``metric`` per side as written and as changed (same dice), with each side's paired
    difference in its label."""
    from simkit.metrics import Estimate

    sides = base.layout.level_names("side")
    before = {r[0]: Estimate(*r[2:]) for r in base.level_rows("side") if r[1] == metric}
    after = {r[0]: Estimate(*r[2:]) for r in current.level_rows("side") if r[1] == metric}
    diff = {r.side: r for r in differences.itertuples(index=False) if r.metric == metric}
    colours = palette(base.scenario).side
    f = factor_of(metric)
    fig = new_figure(6.4, 0.9 + 0.7 * len(sides))
    ax = fig.add_subplot()
    y = np.arange(len(sides))
    for offset, rows, alpha, label in (
        (-0.2, before, 0.45, "as written"),
        (0.2, after, 1.0, "changed"),
    ):
        mean = np.array([f * rows[s].mean for s in sides])
        low = np.array([f * rows[s].ci_low for s in sides])
        high = np.array([f * rows[s].ci_high for s in sides])
        ax.barh(
            y + offset,
            mean,
            height=0.38,
            color=[colours[s] for s in sides],
            alpha=alpha,
            label=label,
        )
        ax.errorbar(
            mean, y + offset, xerr=error_bars(mean, low, high), fmt="none", ecolor=ERROR, capsize=3
        )
    labels = []
    for s in sides:
        d = diff.get(s)
        if d is not None and d.difference == d.difference:
            unit = " pp" if f == 100 else ""
            labels.append(
                f"{s}\n{f * d.difference:+.3g}{unit} [{f * d.ci_low:+.3g}, {f * d.ci_high:+.3g}]"
            )
        else:
            labels.append(s)
    ax.set_yticks(y, labels, fontsize=FONT - 0.5)
    ax.set_ylim(len(sides) - 0.5, -0.5)
    label_x(ax, axis_label(metric) + " (light: as written; dark: changed)")
    style_axes(ax, "x")
    return fig
