"""The report's panels: bar panels, distributions, matrices, stacked shares, policy
effects and line panels (laid out by hand, margins in inches)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from simkit.output.plots.look import (
    CI_LABEL,
    DPI,
    ERROR,
    FONT,
    INK,
    WIDTH,
    ShownFigure,
    band_handle,
    ci_handle,
    error_bars,
    hbars,
    heatmap,
    label_x,
    label_y,
    line_colour,
    lines,
    panel_title,
    style_axes,
)
from simkit.output.report_document.names import (
    axis_label,
    title_of,
    unit_of,
)

if TYPE_CHECKING:
    pass

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
        panel_title(ax, title_of(name))
        label_x(ax, unit_of(name))
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
    legend_room = _label_room([*labels, CI_LABEL]) + 0.35  # its longest entry fits
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
            x, mean, yerr=error_bars(mean, low, high), fmt="none", ecolor=ERROR, capsize=1.5, lw=0.8
        )
    ax.set_xticks(range(ks), [str(k) for k in range(ks)])
    label_x(ax, xlabel)
    label_y(ax, "% of rounds")
    style_axes(ax, "y")
    handles = [Patch(facecolor=c, label=lab) for lab, c in zip(labels, colours, strict=True)]
    ax.legend(
        handles=[*handles, ci_handle()],
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
    label_x(ax, xlabel)
    label_y(ax, ylabel)
    panel_title(ax, title)
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
    ax.errorbar(
        mean, y, xerr=error_bars(mean, low, high), fmt="none", ecolor=ERROR, capsize=3, lw=1
    )
    ax.set_yticks(y, list(labels), fontsize=FONT - 0.5)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    label_x(ax, xlabel)
    panel_title(ax, title)
    style_axes(ax, "x")
    handles = [Patch(facecolor=c, label=lab) for lab, _, c in parts]
    fig.legend(
        handles=[*handles, ci_handle()],
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
        colour = line_colour(colours.get(key, INK))  # dark enough on white
        ax.plot([lo, hi], [yi, yi], color=colour, lw=5, solid_capstyle="butt")
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
    label_x(ax, xlabel)
    style_axes(ax, "x")
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
        logged = _log_axis(ax) if p.get("log") else False
        if p.get("hline") is not None:
            ax.axhline(p["hline"][0], color="0.25", lw=0.9, ls=":")
        ax.set_xticks(p["xs"], p["xlabels"])
        label_x(ax, p["xtitle"])
        ylabel = p.get("ylabel") or axis_label(p["metric"])
        if p.get("log") and not logged:  # a value at or below 0: the axis stayed linear
            ylabel = ylabel.replace(" (log scale)", "")
        label_y(ax, ylabel)
        panel_title(ax, p.get("title", title_of(p["metric"])))
    for k in range(len(panels), nrows * ncols):
        axes[k // ncols][k % ncols].set_visible(False)
    if title:
        fig.suptitle(title, fontsize=FONT + 1)
    handles = [*legend, band_handle()]
    fig.legend(
        handles=handles,
        loc="lower center",
        bbox_to_anchor=(0.5, 0.0),
        ncols=min(len(handles), 6),
        fontsize=FONT - 0.5,
        frameon=False,
    )
    return fig


def _log_axis(ax: Axes) -> bool:
    """A log y axis with plain tick labels (0.2, 0.5, 1, 2, 5) instead of powers of 10;
    False (the axis stays linear) when a line has a value at or below 0 (a side without
    actions has an action economy of 0), which no log axis can show."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    values = [float(y) for line in ax.get_lines() for y in line.get_ydata()]
    if any(y <= 0 for y in values if math.isfinite(y)):
        return False
    ax.set_yscale("log")
    low, high = ax.get_ylim()
    if not low > 0:  # a band reaching below 0 (the lines are all above it)
        low = min(y for y in values if math.isfinite(y)) / 2
        ax.set_ylim(low, high)
    ticks = [
        m * 10.0**e
        for e in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1)
        for m in (1, 2, 5)
    ]
    ticks = [t for t in ticks if low <= t <= high]
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    return True


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
