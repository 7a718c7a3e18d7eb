"""Every plot simkit draws, in one look: results, sweeps, comparisons, tunings, reports.

Plots render finished results and never simulate.  The look is the same everywhere:

* one colour per *group* (a ``count`` group's copies share it; a side that is a single
  group shares that group's colour, other sides get their own), from the Okabe-Ito
  palette, which colour-blind readers can tell apart (:func:`palette`);
* probabilities in % (differences in percentage points), other metrics in their
  registry unit; titles and axis labels in words, from the metric registry;
* heatmaps in greys (:data:`HEAT`), so that no cell reads as a combatant's colour;
* every estimate with its 95% interval (bars, bands or error bars).

Figures are ``matplotlib.figure.Figure`` objects built without pyplot (no global state,
no display, thread-safe); :func:`figure_png` renders one with the Agg canvas.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap, to_rgb
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from simkit.output.report.names import (
    axis_label,
    factor_of,
    group_label,
    sweep_axis,
    title_of,
    unit_of,
)

if TYPE_CHECKING:
    from simkit.analysis.compare import Comparison
    from simkit.analysis.sweep import SweepResult

DPI = 100
WIDTH = 8.8  # inches: 880 px at DPI, the width of a report's column
FONT = 9.0
# Okabe & Ito (2008), "Color Universal Design": distinguishable with every common form of
# colour blindness.  Black (softened, error bars are darker) and yellow (the hardest to
# see on white) come last.
OKABE_ITO = (
    "#E69F00",
    "#56B4E9",
    "#009E73",
    "#0072B2",
    "#D55E00",
    "#CC79A7",
    "#4D4D4D",
    "#F0E442",
)
HEAT = ListedColormap(colormaps["Greys"](np.linspace(0.04, 0.78, 256)), name="simkit_greys")
INK = "#222222"
ERROR = "#333333"
CI_LABEL = "95% confidence interval"
MAX_HEATMAP = 12  # names per side of a heatmap; beyond it the heatmap is left out
MAX_LINES = 12  # lines in one panel; beyond it, lines are drawn per group


# --------------------------------------------------------------------------- the look
@dataclass(frozen=True)
class Palette:
    """Colours by level: ``palette.of("group")["Wolf"]``."""

    group: dict[str, str] = field(default_factory=dict)
    side: dict[str, str] = field(default_factory=dict)
    combatant: dict[str, str] = field(default_factory=dict)

    def of(self, level: str) -> dict[str, str]:
        return {"group": self.group, "side": self.side}.get(level, self.combatant)


def _colours(n: int) -> list[str]:
    """``n`` colours: Okabe-Ito first, then tab20 (beyond seven names colour-blind safety
    cannot be kept anyway), cycling beyond that."""
    from matplotlib.colors import to_hex

    extra = [to_hex(colormaps["tab20"](k)) for k in range(20)]
    pool = list(OKABE_ITO) + [c for c in extra if c.lower() not in {o.lower() for o in OKABE_ITO}]
    return [pool[k % len(pool)] for k in range(n)]


def palette(scenario: Any) -> Palette:
    """The colours of a scenario: one per group (copies share it), a side that is one
    group takes that group's colour, every other side a colour of its own."""
    groups = list(scenario.groups)
    sides = list(scenario.sides)
    groups_of = {s: {c.group for c in scenario.combatants if c.side == s} for s in sides}
    own = [s for s in sides if len(groups_of[s]) != 1]
    pool = _colours(len(groups) + len(own))
    group = dict(zip(groups, pool, strict=False))
    side = {}
    for s in sides:
        side[s] = group[next(iter(groups_of[s]))] if len(groups_of[s]) == 1 else ""
    for s, colour in zip(own, pool[len(groups) :], strict=True):
        side[s] = colour
    combatant = {c.name: group[c.group] for c in scenario.combatants}
    return Palette(group, side, combatant)


class ShownFigure(Figure):
    """A matplotlib Figure that shows itself in a notebook without pyplot (``_repr_png_``):
    the figures of ``.plot()`` display as pictures whatever the notebook's backend."""

    def _repr_png_(self) -> bytes:
        return figure_png(self)


def _figure(width: float = WIDTH, height: float = 4.0) -> Figure:
    fig = ShownFigure(figsize=(width, height), dpi=DPI, layout="constrained")
    fig.get_layout_engine().set(w_pad=0.04, h_pad=0.04, wspace=0.04, hspace=0.06)
    return fig


def figure_png(fig: Figure, dpi: int = DPI) -> bytes:
    """The figure as PNG bytes (Agg; no "Software" entry, so the same results give the
    same bytes)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    return buffer.getvalue()


def _style(ax: Axes, grid: str = "x") -> None:
    ax.tick_params(labelsize=FONT - 0.5, length=3)
    ax.grid(axis=grid, alpha=0.3, linewidth=0.6)
    ax.set_axisbelow(True)
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)


def _title(ax: Axes, text: str) -> None:
    ax.set_title(text, fontsize=FONT + 1, loc="left")


def _label_x(ax: Axes, text: str) -> None:
    ax.set_xlabel(text, fontsize=FONT)


def _label_y(ax: Axes, text: str) -> None:
    ax.set_ylabel(text, fontsize=FONT)


# --------------------------------------------------------------------------- primitives
def _errors(mean: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    err = np.vstack([mean - low, high - mean])
    return np.where(np.isfinite(err), np.maximum(err, 0.0), 0.0)


def hbars(
    ax: Axes,
    labels: Sequence[str],
    estimates: Sequence[Any],
    name: str,
    colours: Sequence[str],
    *,
    annotate: bool = True,
) -> None:
    """Horizontal bars of one metric with 95% error bars, first label at the top."""
    f = factor_of(name)
    mean = np.array([f * e.mean for e in estimates], float)
    low = np.array([f * e.ci_low for e in estimates], float)
    high = np.array([f * e.ci_high for e in estimates], float)
    y = np.arange(len(labels))
    ax.barh(y, np.nan_to_num(mean), color=list(colours), height=0.66, edgecolor="none")
    ax.errorbar(mean, y, xerr=_errors(mean, low, high), fmt="none", ecolor=ERROR, capsize=3, lw=1)
    ax.set_yticks(y, list(labels), fontsize=FONT - 0.5)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    finite = high[np.isfinite(high)]
    top = float(finite.max()) if finite.size else 1.0
    ax.set_xlim(min(0.0, float(np.nanmin(low)) if np.isfinite(low).any() else 0.0), top * 1.22 or 1)
    if annotate and len(labels) <= 24:
        for yi, m, hi in zip(y, mean, high, strict=True):
            text = "n/a" if not math.isfinite(m) else _short(m)
            at = hi if math.isfinite(hi) else m if math.isfinite(m) else 0.0
            ax.annotate(
                text,
                (at, yi),
                xytext=(4, 0),
                textcoords="offset points",
                va="center",
                fontsize=FONT - 1,
                color=INK,
            )
    _style(ax, "x")


def _short(v: float) -> str:
    a = abs(v)
    if a == 0:
        return "0"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def lines(
    ax: Axes,
    xs: Sequence[float],
    series: Sequence[tuple[str, str, Sequence[Any], str]],
    name: str,
) -> list[Any]:
    """One line per series ``(label, colour, estimates, linestyle)`` with its 95% band."""
    f = factor_of(name)
    handles = []
    for label, colour, ests, style in series:
        mean = np.array([f * e.mean for e in ests], float)
        low = np.array([f * e.ci_low for e in ests], float)
        high = np.array([f * e.ci_high for e in ests], float)
        (line,) = ax.plot(
            xs, mean, linestyle=style, color=colour, marker="o", markersize=3.5, lw=1.6
        )
        ax.fill_between(xs, low, high, color=colour, alpha=0.22, lw=0)
        line.set_label(label)
        handles.append(line)
    _style(ax, "both")
    return handles


def heatmap(
    ax: Axes,
    grid: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    vmin: float,
    vmax: float,
    fmt: str = "{:.0f}",
    annotate: bool = True,
) -> Any:
    """A heatmap in greys, cells annotated (black on light, white on dark)."""
    image = ax.imshow(
        np.ma.masked_invalid(grid), cmap=HEAT, vmin=vmin, vmax=vmax, aspect="auto", origin="lower"
    )
    ax.set_xticks(range(len(col_labels)), list(col_labels), fontsize=FONT - 0.5)
    ax.set_yticks(range(len(row_labels)), list(row_labels), fontsize=FONT - 0.5)
    if annotate and grid.size <= 196:
        span = (vmax - vmin) or 1.0
        for i in range(grid.shape[0]):
            for j in range(grid.shape[1]):
                v = grid[i, j]
                if not math.isfinite(v):
                    ax.text(j, i, "–", ha="center", va="center", fontsize=FONT - 1)
                    continue
                dark = (v - vmin) / span > 0.55
                ax.text(
                    j,
                    i,
                    fmt.format(v),
                    ha="center",
                    va="center",
                    fontsize=FONT - 1,
                    color="white" if dark else "black",
                )
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.tick_params(length=0)
    return image


def _legend(fig: Figure, handles: list[Any], *, below: bool = False, ncols: int = 0) -> None:
    if not handles:
        return
    if below:
        fig.legend(
            handles=handles,
            loc="outside lower center",
            fontsize=FONT - 0.5,
            ncols=ncols or min(len(handles), 5),
            frameon=False,
        )
    else:
        fig.legend(handles=handles, loc="outside right upper", fontsize=FONT - 0.5, frameon=False)


def _band_handle() -> Patch:
    return Patch(facecolor="0.6", alpha=0.35, label="95% confidence band")


def _ci_handle() -> Line2D:
    return Line2D([], [], color=ERROR, marker="|", linestyle="-", lw=1, label=CI_LABEL)


# --------------------------------------------------------------------------- results
def _level_names(result: Any, by: str) -> list[str]:
    if by == "combatant":
        return list(result.scenario.names)
    return list(result.layout.level_names(by))


def result_figure(result: Any, metric: str = "first_action", by: str = "combatant") -> Figure:
    """One metric of a result per combatant, group or side: bars with 95% intervals,
    coloured by group (copies share a colour)."""
    rows = {r[0]: r for r in result.level_rows(by) if r[1] == metric}
    if not rows:
        known = sorted({r[1] for r in result.level_rows(by)})
        raise KeyError(f"no metric {metric!r} per {by}; metrics: {', '.join(known)}")
    from simkit.metrics import Estimate

    names = [n for n in _level_names(result, by) if n in rows]
    colours = palette(result.scenario).of(by)
    labels = [group_label(result.scenario, n) if by == "group" else n for n in names]
    fig = _figure(WIDTH * 0.8, min(1.0 + 0.3 * len(names), 24.0))
    ax = fig.add_subplot()
    hbars(ax, labels, [Estimate(*rows[n][2:]) for n in names], metric, [colours[n] for n in names])
    _title(ax, f"{title_of(metric)}, per {by}")
    _label_x(ax, f"{unit_of(metric)} (bars: 95% confidence intervals)")
    return fig


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
        ax = _figure(WIDTH, 4.0).add_subplot()
    names = list(combatants) if combatants is not None else view.names
    xs, labels, xtitle = sweep_axis(result, 0)
    handles = lines(ax, xs, _sweep_series(result, view, metric, names), metric)
    ax.set_xticks(xs, labels)
    _label_x(ax, xtitle)
    _label_y(ax, axis_label(metric))
    _title(ax, f"{title_of(metric)} against {result.axes[0].column}")
    visible = [h for h in handles if not h.get_label().startswith("_")]
    ax.legend(
        handles=[*visible, _band_handle()],
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
    fig = _figure(min(3.3 * ncols + 1.2, WIDTH + 1), 2.9 * nrows + 0.8)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    ry, ly, ty = sweep_axis(result, 0)
    rx, lx, tx = sweep_axis(result, 1)
    image = None
    fmt = "{:.0f}" if f == 100 else "{:.3g}"
    for k, (name, grid) in enumerate(zip(names, stacked, strict=True)):
        ax = axes[k // ncols][k % ncols]
        image = heatmap(ax, grid, ly, lx, vmin=vmin, vmax=vmax, fmt=fmt)
        _label_x(ax, tx)
        _label_y(ax, ty)
        _title(ax, titles[name])
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
        ax = _figure(WIDTH * 0.7, 0.5 + 0.32 * len(t) + 1.0).add_subplot()
    f = factor_of(metric)
    colours = palette(view.scenario).of(view.by)
    y = np.arange(len(t))
    diff = f * t["difference"].to_numpy(float)
    low = f * t["ci_low"].to_numpy(float)
    high = f * t["ci_high"].to_numpy(float)
    unpaired = f * view.z_unpaired * t["se_unpaired"].to_numpy(float)
    ax.errorbar(diff, y, xerr=unpaired, fmt="none", ecolor="0.65", elinewidth=1, capsize=3)
    for yi, d, lo, hi, name in zip(y, diff, low, high, t["combatant"], strict=True):
        colour = colours.get(name, INK)
        ax.plot([lo, hi], [yi, yi], color=colour, lw=4, solid_capstyle="butt")
        ax.plot([d], [yi], "o", color=INK, markersize=3.5)
    ax.axvline(0.0, color="0.3", lw=0.8)
    labels = [c or "scenario" for c in t["combatant"]]
    if view.by == "group":
        labels = [group_label(view.scenario, c) if c else "scenario" for c in t["combatant"]]
    ax.set_yticks(y, labels)
    ax.set_ylim(len(t) - 0.5, -0.5)
    _label_x(ax, axis_label(metric, difference=True))
    _title(ax, title_of(metric))
    _style(ax, "x")
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
    fig = _figure(min(4.4 * len(metrics), 13.0), min(1.6 + 0.3 * n, 24.0))
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
    fig = _figure(6.4, 0.9 + 0.7 * len(sides))
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
            mean, y + offset, xerr=_errors(mean, low, high), fmt="none", ecolor=ERROR, capsize=3
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
    _label_x(ax, axis_label(metric) + " (light: as written; dark: changed)")
    _style(ax, "x")
    return fig


# --------------------------------------------------------------------------- tuning
def tune_figure(tuning: Any) -> Figure:
    """The target quantity against the varied value (actual values for offsets) with its
    95% band and the target line (one field), or a grey map of it with the pairs that
    meet the target ticked (two)."""
    target = tuning.target
    points = tuning.points
    fig = _figure(7.2, 4.0)
    ax = fig.add_subplot()
    colour = OKABE_ITO[3]
    sweep = tuning.sweep
    if len(tuning.fields) == 1:
        xs, labels, xtitle = sweep_axis(sweep, 0)
        lines(ax, xs, [(target.quantity, colour, [p.estimate for p in points], "-")], "")
        for x, p in zip(xs, points, strict=True):
            if p.met:
                ax.plot([x], [p.estimate.mean], "o", ms=11, mfc="none", mec=OKABE_ITO[2], mew=2)
        ax.axhline(target.value, color=OKABE_ITO[4], ls="--", lw=1.2)
        ax.set_xticks(xs, labels)
        _label_x(ax, xtitle)
        _label_y(ax, target.quantity)
        ax.legend(
            handles=[
                Line2D([], [], color=colour, marker="o", label="estimate"),
                _band_handle(),
                Line2D(
                    [],
                    [],
                    color=OKABE_ITO[4],
                    ls="--",
                    label=f"target {target.comparator} {target.value:g}",
                ),
                Line2D(
                    [],
                    [],
                    marker="o",
                    ls="",
                    ms=9,
                    mfc="none",
                    mec=OKABE_ITO[2],
                    mew=2,
                    label="meets the target",
                ),
            ],
            fontsize=FONT - 1,
            loc="best",
            frameon=False,
        )
    else:
        ry, ly, ty = sweep_axis(sweep, 0)
        rx, lx, tx = sweep_axis(sweep, 1)
        grid = np.array([p.estimate.mean for p in points], float).reshape(len(ly), len(lx))
        finite = grid[np.isfinite(grid)]
        vmin, vmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        image = heatmap(ax, grid, ly, lx, vmin=vmin, vmax=vmax, fmt="{:.3g}")
        met = np.array([p.met for p in points]).reshape(grid.shape)
        for i, j in zip(*np.nonzero(met), strict=True):
            ax.add_patch(
                Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor=OKABE_ITO[4], lw=2)
            )
        bar = fig.colorbar(image, ax=ax)
        bar.set_label(target.quantity, fontsize=FONT)
        _label_x(ax, tx)
        _label_y(ax, ty)
    _title(ax, f"Target: {target.text}")
    return fig


# --------------------------------------------------------------------------- report plots
# A report draws several figures; the constrained layout engine would measure every text
# twice, so these lay themselves out: margins in inches from the longest label.
CHAR = 0.068  # inches per character of a tick label at FONT - 0.5


def _plain(width: float, height: float) -> Figure:
    return ShownFigure(figsize=(width, height), dpi=DPI)


def _place(
    fig: Figure,
    *,
    left: float,
    bottom: float,
    top: float = 0.35,
    right: float = 0.15,
    wspace: float = 0.0,
    hspace: float = 0.0,
) -> None:
    """Margins and gaps in inches."""
    w, h = fig.get_size_inches()
    fig.subplots_adjust(
        left=left / w,
        right=1 - right / w,
        bottom=bottom / h,
        top=1 - top / h,
        wspace=wspace,
        hspace=hspace,
    )


def _label_room(labels: Sequence[str]) -> float:
    return 0.25 + CHAR * max((len(x) for x in labels), default=4)


def bar_panels(
    panels: Sequence[tuple[str, Sequence[str], Sequence[Any], Sequence[str]]],
    title: str = "",
) -> Figure:
    """Side-by-side panels of horizontal bars: ``(metric, labels, estimates, colours)``
    each (the same labels in every panel, shown once at the left)."""
    n = max(len(p[1]) for p in panels)
    height = min(1.1 + 0.3 * n, 20.0)
    fig = _plain(WIDTH, height)
    _place(fig, left=_label_room(panels[0][1]), bottom=0.5, top=0.3, right=0.3, wspace=0.12)
    axes = fig.subplots(1, len(panels), squeeze=False, sharey=True)[0]
    for k, (ax, (name, labels, ests, colours)) in enumerate(zip(axes, panels, strict=True)):
        hbars(ax, labels, ests, name, colours)
        _title(ax, title_of(name))
        _label_x(ax, unit_of(name))
        if k:
            ax.tick_params(labelleft=False, left=False)
    if title:
        fig.suptitle(title, fontsize=FONT + 1)
    return fig


def distribution_figure(
    labels: Sequence[str],
    distributions: Sequence[Sequence[Any]],
    colours: Sequence[str],
    xlabel: str,
) -> Figure:
    """Grouped bars: P(value = k) per name (``distributions[i][k]`` an Estimate), in %."""
    ks = max(len(d) for d in distributions)
    fig = _plain(WIDTH, 3.0)
    legend_room = _label_room(labels) + 0.35
    _place(fig, left=0.6, bottom=0.5, top=0.15, right=legend_room)
    ax = fig.add_subplot()
    width = 0.84 / len(labels)
    for i, (label, dist, colour) in enumerate(zip(labels, distributions, colours, strict=True)):
        mean = np.array([100 * e.mean for e in dist], float)
        low = np.array([100 * e.ci_low for e in dist], float)
        high = np.array([100 * e.ci_high for e in dist], float)
        x = np.arange(len(dist)) - 0.42 + width * (i + 0.5)
        ax.bar(x, np.nan_to_num(mean), width=width, color=colour, label=label, edgecolor="none")
        ax.errorbar(
            x, mean, yerr=_errors(mean, low, high), fmt="none", ecolor=ERROR, capsize=1.5, lw=0.8
        )
    ax.set_xticks(range(ks), [str(k) for k in range(ks)])
    _label_x(ax, xlabel)
    _label_y(ax, "% of rounds")
    _style(ax, "y")
    handles = [Patch(facecolor=c, label=lab) for lab, c in zip(labels, colours, strict=True)]
    ax.legend(
        handles=[*handles, _ci_handle()],
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize=FONT - 0.5,
        frameon=False,
    )
    return fig


def matrix_figure(
    labels: Sequence[str],
    matrix: np.ndarray,
    colours: Sequence[str],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    colorbar: str,
) -> Figure:
    """A square heatmap of percentages (rows and columns named, names in their colours)."""
    n = len(labels)
    cell = 0.55 if n <= 6 else 0.42
    room = _label_room(labels)
    rotate = n > 4 or max(len(x) for x in labels) > 10
    bottom = 0.55 + (0.7 * room if rotate else 0.0)
    width = min(room + 0.35 + cell * n + 1.3, WIDTH)
    height = 0.35 + cell * n + bottom
    fig = _plain(width, height)
    _place(fig, left=room + 0.3, bottom=bottom, top=0.32, right=1.25)
    ax = fig.add_subplot()
    image = heatmap(ax, matrix[::-1], list(labels)[::-1], labels, vmin=0, vmax=100)
    ax.set_xticks(
        range(n), list(labels), rotation=30 if rotate else 0, ha="right" if rotate else "center"
    )
    for tick, colour in zip(ax.get_xticklabels(), colours, strict=True):
        tick.set_color(_darker(colour))
        tick.set_fontweight("bold")
    for tick, colour in zip(ax.get_yticklabels(), list(colours)[::-1], strict=True):
        tick.set_color(_darker(colour))
        tick.set_fontweight("bold")
    _label_x(ax, xlabel)
    _label_y(ax, ylabel)
    _title(ax, title)
    w, h = fig.get_size_inches()
    cax = fig.add_axes((1 - 1.0 / w, bottom / h, 0.12 / w, (cell * n) / h))
    bar = fig.colorbar(image, cax=cax)
    bar.set_label(colorbar, fontsize=FONT)
    bar.ax.tick_params(labelsize=FONT - 1)
    return fig


def _darker(colour: str) -> tuple[float, float, float]:
    r, g, b = to_rgb(colour)
    return (0.75 * r, 0.75 * g, 0.75 * b)


def stacked_figure(
    labels: Sequence[str],
    parts: Sequence[tuple[str, Sequence[float], str]],
    totals: Sequence[Any],
    *,
    title: str,
    xlabel: str,
) -> Figure:
    """Horizontal stacked bars: each name's total split into ``parts`` (label, values,
    colour), with the total's 95% interval; the legend below."""
    fig = _plain(WIDTH, min(1.35 + 0.3 * len(labels), 20.0))
    _place(fig, left=_label_room(labels), bottom=0.85, top=0.3, right=0.3)
    ax = fig.add_subplot()
    y = np.arange(len(labels))
    left = np.zeros(len(labels))
    for label, values, colour in parts:
        v = np.nan_to_num(np.array(values, float))
        ax.barh(y, v, left=left, color=colour, height=0.62, label=label, edgecolor="white", lw=0.5)
        left += v
    mean = np.array([e.mean for e in totals], float)
    low = np.array([e.ci_low for e in totals], float)
    high = np.array([e.ci_high for e in totals], float)
    ax.errorbar(mean, y, xerr=_errors(mean, low, high), fmt="none", ecolor=ERROR, capsize=3, lw=1)
    ax.set_yticks(y, list(labels), fontsize=FONT - 0.5)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    _label_x(ax, xlabel)
    _title(ax, title)
    _style(ax, "x")
    handles = [Patch(facecolor=c, label=lab) for lab, _, c in parts]
    fig.legend(
        handles=[*handles, _ci_handle()],
        loc="lower center",
        bbox_to_anchor=(0.5, 0.0),
        ncols=len(handles) + 1,
        fontsize=FONT - 0.5,
        frameon=False,
    )
    return fig


PART_COLOURS = ("#5E8FBF", "#E3A857", "#B8B8B8", "#8C6BB1")  # defended, hasty, undefended, other


def effects_figure(
    panels: Sequence[tuple[str, Sequence[tuple[str, str, tuple[float, float, float]]]]],
    colours: Mapping[str, str],
    *,
    xlabel: str,
) -> Figure:
    """Paired differences as intervals on one axis, a block of rows per ``(title,
    rows)``; a row is ``(label, colour key, (difference, low, high))``; the zero line
    marks no change."""
    labels: list[str] = []
    items: list[tuple[float, str, tuple[float, float, float]]] = []
    heads: list[tuple[float, str]] = []
    y = 0.0
    for title, rows in panels:
        heads.append((y, title))
        y += 1.0
        for label, key, values in rows:
            labels.append(label)
            items.append((y, key, values))
            y += 1.0
        y += 0.4
    fig = _plain(WIDTH, min(0.8 + 0.24 * y, 24.0))
    _place(fig, left=_label_room(labels), bottom=0.5, top=0.1, right=0.3)
    ax = fig.add_subplot()
    for yi, key, (d, lo, hi) in items:
        ax.plot([lo, hi], [yi, yi], color=colours.get(key, INK), lw=5, solid_capstyle="butt")
        ax.plot([d], [yi], "o", color=INK, markersize=3.2)
    ax.axvline(0, color="0.3", lw=0.8)
    ax.set_yticks([yi for yi, _, _ in items], labels, fontsize=FONT - 0.5)
    for yh, title in heads:
        ax.text(
            0.0,
            yh,
            title,
            transform=ax.get_yaxis_transform(),
            ha="left",
            va="center",
            fontsize=FONT,
            fontweight="bold",
            color=INK,
        )
    ax.set_ylim(y - 0.4, -0.6)
    _label_x(ax, xlabel)
    _style(ax, "x")
    return fig


def line_panels(
    panels: Sequence[dict[str, Any]],
    *,
    title: str = "",
    legend: Sequence[Any] = (),
    ncols: int = 2,
) -> Figure:
    """Panels of lines with 95% bands.  Each panel: ``xs``, ``xlabels``, ``xtitle``,
    ``metric``, ``series`` (as :func:`lines`), optional ``hline`` (value, label),
    ``title``, ``ylabel``, ``log``; the legend below."""
    ncols = min(ncols, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    height = 2.6 * nrows + 0.9
    fig = _plain(WIDTH, height)
    _place(fig, left=0.75, bottom=0.95, top=0.3, right=0.2, wspace=0.28, hspace=0.55)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for k, p in enumerate(panels):
        ax = axes[k // ncols][k % ncols]
        lines(ax, p["xs"], p["series"], p["metric"])
        if p.get("log"):
            _log_axis(ax)
        if p.get("hline") is not None:
            ax.axhline(p["hline"][0], color="0.25", lw=0.9, ls=":")
        ax.set_xticks(p["xs"], p["xlabels"])
        _label_x(ax, p["xtitle"])
        _label_y(ax, p.get("ylabel") or axis_label(p["metric"]))
        _title(ax, p.get("title", title_of(p["metric"])))
    for k in range(len(panels), nrows * ncols):
        axes[k // ncols][k % ncols].set_visible(False)
    if title:
        fig.suptitle(title, fontsize=FONT + 1)
    handles = [*legend, _band_handle()]
    fig.legend(
        handles=handles,
        loc="lower center",
        bbox_to_anchor=(0.5, 0.0),
        ncols=min(len(handles), 6),
        fontsize=FONT - 0.5,
        frameon=False,
    )
    return fig


def _log_axis(ax: Axes) -> None:
    """A log y axis with plain tick labels (0.2, 0.5, 1, 2, 5) instead of powers of 10."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    ax.set_yscale("log")
    low, high = ax.get_ylim()
    ticks = [
        m * 10.0**e
        for e in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1)
        for m in (1, 2, 5)
    ]
    ticks = [t for t in ticks if low <= t <= high]
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


def side_handles(
    names: Sequence[str], colours: Mapping[str, str], styles: Sequence[Any] = ("-",)
) -> list[Line2D]:
    """Legend entries of lines per side (colour and, cycling, line style)."""
    return [
        Line2D(
            [], [], color=colours[n], marker="o", lw=1.6, linestyle=styles[k % len(styles)], label=n
        )
        for k, n in enumerate(names)
    ]
