"""The plots of a report: each function renders finished results to PNG bytes.

Nothing here simulates.  Every plot has a title, axis labels with units and a legend,
and uses one colour per combatant (``palette``: keyed by scenario order) so that a
combatant looks the same in every plot.  Figures are built with
``matplotlib.figure.Figure`` directly (no pyplot state), so rendering is thread-safe
and needs no display.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

DPI = 110
WIDTH = 8.0  # inches: a report column at DPI is about 880 px wide
HEIGHT = 4.4
CI_LABEL = "95% confidence interval"

Color = tuple[float, float, float, float]


def palette(names: Sequence[str]) -> dict[str, Color]:
    """One colour per combatant, in scenario order (tab10, or tab20 beyond 10)."""
    cmap = colormaps["tab10" if len(names) <= 10 else "tab20"]
    return {name: cmap(i % cmap.N) for i, name in enumerate(names)}


def _figure(width: float = WIDTH, height: float = HEIGHT) -> Figure:
    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    fig.get_layout_engine().set(w_pad=0.06, h_pad=0.06)
    return fig


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    # No "Software" entry: the same results give byte-identical PNGs.
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def _errors(means: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Asymmetric error bars (intervals of probabilities are clipped to [0, 1])."""
    err = np.vstack([means - low, high - means])
    return np.where(np.isfinite(err), np.maximum(err, 0.0), 0.0)


def _legend(fig: Figure, handles: list[Any], below: bool = False) -> None:
    """The legend outside the axes: at the right, or below for figures of several panels."""
    if below:
        fig.legend(
            handles=handles,
            loc="outside lower center",
            fontsize=8.5,
            ncols=min(len(handles), 5),
            frameon=False,
        )
    else:
        fig.legend(handles=handles, loc="outside right upper", fontsize=8.5, frameon=False)


def _combatant_handles(names: Sequence[str], colors: Mapping[str, Color]) -> list[Any]:
    return [Patch(facecolor=colors[n], label=n) for n in names]


def _ci_handle() -> Line2D:
    return Line2D([], [], color="black", marker="_", markersize=10, linewidth=1.2, label=CI_LABEL)


def _names_axis(ax: Any, names: Sequence[str], sides: Mapping[str, str]) -> None:
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(
        [f"{n}\n({sides[n]})" for n in names],
        fontsize=8.5 if len(names) <= 8 else 7,
        rotation=0 if len(names) <= 6 else 35,
        ha="center" if len(names) <= 6 else "right",
    )


def _text_color(rgb: Sequence[float]) -> str:
    r, g, b = rgb[:3]
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.55 else "white"


def _metric_rows(table: pd.DataFrame, metric: str, names: Sequence[str]) -> pd.DataFrame:
    rows = table[table.metric == metric].set_index("combatant")
    return rows.reindex(list(names))


def first_action(
    table: pd.DataFrame,
    names: Sequence[str],
    sides: Mapping[str, str],
    colors: Mapping[str, Color],
) -> bytes:
    """Bar per combatant: P(it takes the round's first action), with 95% error bars."""
    rows = _metric_rows(table, "first_action", names)
    mean = 100 * rows["mean"].to_numpy(float)
    err = _errors(mean, 100 * rows.ci_low.to_numpy(float), 100 * rows.ci_high.to_numpy(float))
    fig = _figure()
    ax = fig.add_subplot()
    x = np.arange(len(names))
    ax.bar(x, mean, color=[colors[n] for n in names], width=0.7)
    ax.errorbar(x, mean, yerr=err, fmt="none", ecolor="black", capsize=5, linewidth=1.2)
    for xi, m in zip(x, mean, strict=True):
        ax.annotate(
            f"{m:.1f}%",
            (xi, m),
            xytext=(0, 6),
            textcoords="offset points",
            ha="center",
            fontsize=8.5,
        )
    ax.set_ylim(0, max(float(np.nanmax(mean)) * 1.18, 1.0))
    _names_axis(ax, names, sides)
    ax.set_xlabel("combatant (side)")
    ax.set_ylabel("rounds in which it acts first (%)")
    ax.set_title("Who acts first")
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    _legend(fig, [*_combatant_handles(names, colors), _ci_handle()])
    return _png(fig)


def acts_before(
    matrix: pd.DataFrame,
    names: Sequence[str],
    colors: Mapping[str, Color],
) -> bytes:
    """Heatmap of P(row acts strictly before column), annotated in %."""
    n = len(names)
    values = 100 * matrix.reindex(index=list(names), columns=list(names)).to_numpy(float)
    size = min(max(4.4, 0.55 * n + 2.2), 9.0)
    fig = _figure(WIDTH, size)
    ax = fig.add_subplot()
    cmap = colormaps["RdBu_r"].with_extremes(bad="#d9d9d9")
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=0, vmax=100, aspect="auto")
    font = 9 if n <= 8 else 7 if n <= 14 else 5
    for i in range(n):
        for j in range(n):
            v = values[i, j]
            if math.isnan(v):
                ax.text(j, i, "–", ha="center", va="center", fontsize=font, color="black")
                continue
            rgba = cmap(v / 100)
            ax.text(
                j, i, f"{v:.0f}%", ha="center", va="center", fontsize=font, color=_text_color(rgba)
            )
    ax.set_xticks(range(n))
    ax.set_yticks(range(n))
    ax.set_xticklabels(names, rotation=35 if n > 4 else 0, ha="right" if n > 4 else "center")
    ax.set_yticklabels(names)
    for label in [*ax.get_xticklabels(), *ax.get_yticklabels()]:
        label.set_color(_darker(colors[label.get_text()]))
        label.set_fontweight("bold")
        label.set_fontsize(8.5 if n <= 10 else 7)
    ax.set_xlabel("… before this combatant (column)")
    ax.set_ylabel("this combatant (row) acts …")
    ax.set_title("Who acts before whom: P(row's first action comes before column's)")
    bar = fig.colorbar(image, ax=ax, shrink=0.9)
    bar.set_label("P(row acts before column) (% of rounds)")
    return _png(fig)


def _darker(color: Sequence[float]) -> tuple[float, float, float]:
    r, g, b = to_rgb(color)  # type: ignore[arg-type]
    return (0.8 * r, 0.8 * g, 0.8 * b)


def actions_distribution(
    table: pd.DataFrame,
    names: Sequence[str],
    colors: Mapping[str, Color],
) -> bytes:
    """Grouped bars: P(actions = k) for each combatant, with 95% error bars."""
    rows = table[table.metric.str.startswith("actions_dist.")].copy()
    rows["k"] = rows.metric.str.slice(len("actions_dist.")).astype(int)
    ks = sorted(rows.k.unique())
    fig = _figure()
    ax = fig.add_subplot()
    n = len(names)
    width = 0.84 / n
    for i, name in enumerate(names):
        own = rows[rows.combatant == name].set_index("k").reindex(ks)
        mean = 100 * own["mean"].to_numpy(float)
        err = _errors(mean, 100 * own.ci_low.to_numpy(float), 100 * own.ci_high.to_numpy(float))
        x = np.arange(len(ks)) - 0.42 + width * (i + 0.5)
        ax.bar(x, np.nan_to_num(mean), width=width, color=colors[name], label=name)
        ax.errorbar(x, mean, yerr=err, fmt="none", ecolor="black", capsize=2, linewidth=0.9)
    ax.set_xticks(range(len(ks)))
    ax.set_xticklabels([str(k) for k in ks])
    ax.set_xlabel("own actions in a round (defenses not counted)")
    ax.set_ylabel("share of rounds (%)")
    ax.set_title("How many actions each combatant takes per round")
    ax.set_ylim(0, min(105.0, 1.15 * float(rows["ci_high"].max()) * 100 + 2))
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    _legend(fig, [*_combatant_handles(names, colors), _ci_handle()])
    return _png(fig)


def hasty_defenses(
    table: pd.DataFrame,
    names: Sequence[str],
    sides: Mapping[str, str],
    colors: Mapping[str, Color],
) -> bytes:
    """Three panels: hasty defenses per round, their share of defenses, their mean scale."""
    panels = [
        ("hasty_defenses", 1.0, "hasty defenses per round", "Hasty defenses per round"),
        ("hasty_share", 100.0, "hasty share of its defenses (%)", "Share of defenses"),
        ("hasty_scale", 1.0, "mean difficulty scale (pips)", "Mean scale when hasty"),
    ]
    fig = _figure(WIDTH + 2.5, HEIGHT + 0.3)
    axes = fig.subplots(1, 3)
    x = np.arange(len(names))
    for ax, (metric, factor, label, title) in zip(axes, panels, strict=True):
        rows = _metric_rows(table, metric, names)
        mean = factor * rows["mean"].to_numpy(float)
        low, high = factor * rows.ci_low.to_numpy(float), factor * rows.ci_high.to_numpy(float)
        ax.bar(x, np.nan_to_num(mean), color=[colors[n] for n in names], width=0.7)
        ax.errorbar(x, mean, yerr=_errors(mean, low, high), fmt="none", ecolor="black", capsize=4)
        for xi, m in zip(x, mean, strict=True):
            if math.isnan(m):
                ax.text(xi, 0, "n/a", ha="center", va="bottom", fontsize=8, color="dimgray")
        ax.set_xticks(x)
        ax.set_xticklabels(names, rotation=40, ha="right", fontsize=8.5)
        ax.set_xlabel("combatant")
        ax.set_ylabel(label)
        ax.set_title(title, fontsize=10.5)
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
        if not np.isfinite(mean).any() or np.nanmax(mean) <= 0:
            ax.set_ylim(0, 1)
    fig.suptitle("Hasty defenses (R7): how often, and how hard (n/a: never hasty)")
    _legend(fig, [*_combatant_handles(names, colors), _ci_handle()], below=True)
    return _png(fig)


def holding_effect(
    effects: pd.DataFrame,
    names: Sequence[str],
    sides: Mapping[str, str],
    holders: Sequence[str],
    colors: Mapping[str, Color],
) -> bytes:
    """Paired effect of holding (as written minus hold = "never"), with 95% intervals.

    ``effects`` has columns combatant, metric, effect, ci_low, ci_high (effect of
    holding: the scenario as written minus everyone ``hold = "never"``).
    """
    panels = [
        ("first_action", 100.0, "change in first action (percentage points)", "First action"),
        ("actions", 1.0, "change in actions per round", "Actions per round"),
    ]
    fig = _figure(WIDTH + 1.5, HEIGHT + 0.3)
    axes = fig.subplots(1, 2)
    x = np.arange(len(names))
    labels = [f"{n}{' *' if n in holders else ''}" for n in names]
    for ax, (metric, factor, label, title) in zip(axes, panels, strict=True):
        rows = effects[effects.metric == metric].set_index("combatant").reindex(list(names))
        mean = factor * rows.effect.to_numpy(float)
        low, high = factor * rows.ci_low.to_numpy(float), factor * rows.ci_high.to_numpy(float)
        ax.bar(x, np.nan_to_num(mean), color=[colors[n] for n in names], width=0.7)
        ax.errorbar(x, mean, yerr=_errors(mean, low, high), fmt="none", ecolor="black", capsize=4)
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xticks(x)
        ax.set_xticklabels(labels, rotation=40, ha="right", fontsize=8.5)
        ax.set_xlabel("combatant (* holds in the scenario)")
        ax.set_ylabel(label)
        ax.set_title(title, fontsize=10.5)
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    fig.suptitle('Effect of holding: scenario as written minus everyone hold = "never" (paired)')
    _legend(fig, [*_combatant_handles(names, colors), _ci_handle()], below=True)
    return _png(fig)


def sweep(
    points: pd.DataFrame,
    names: Sequence[str],
    swept: Sequence[str],
    colors: Mapping[str, Color],
    *,
    side: str,
    field: str,
) -> bytes:
    """First action and actions per round against the side's stat offset, 95% bands.

    ``points`` has columns offset, combatant, metric, mean, ci_low, ci_high.
    """
    panels = [
        ("first_action", 100.0, "rounds in which it acts first (%)", "First action"),
        ("actions", 1.0, "actions per round", "Actions per round"),
    ]
    fig = _figure(WIDTH + 1.5, HEIGHT + 0.3)
    axes = fig.subplots(1, 2)
    offsets = sorted(points.offset.unique())
    for ax, (metric, factor, label, title) in zip(axes, panels, strict=True):
        for name in names:
            rows = points[(points.combatant == name) & (points.metric == metric)]
            rows = rows.set_index("offset").reindex(offsets)
            mean = factor * rows["mean"].to_numpy(float)
            style = "-" if name in swept else "--"
            ax.plot(offsets, mean, style, color=colors[name], marker="o", markersize=4)
            ax.fill_between(
                offsets,
                factor * rows.ci_low.to_numpy(float),
                factor * rows.ci_high.to_numpy(float),
                color=colors[name],
                alpha=0.25,
                linewidth=0,
            )
        ax.axvline(0, color="gray", linewidth=0.8, linestyle=":")
        ax.set_xticks(offsets)
        ax.set_xticklabels([f"{o:+d}" if o else "0 (as written)" for o in offsets], fontsize=9)
        ax.set_xlabel(f"change in {field} of side {side}")
        ax.set_ylabel(label)
        ax.set_title(title, fontsize=10.5)
        ax.grid(alpha=0.3)
    fig.suptitle(f"Sweep: {field} of side {side} changed by up to ±2")
    handles = [
        Line2D([], [], color=colors[n], linestyle="-" if n in swept else "--", marker="o", label=n)
        for n in names
    ]
    handles += [
        Line2D([], [], color="gray", linestyle="-", label=f"side {side} (changed)"),
        Line2D([], [], color="gray", linestyle="--", label="other sides"),
        Patch(facecolor="gray", alpha=0.25, label="95% confidence band"),
    ]
    _legend(fig, handles, below=True)
    return _png(fig)
