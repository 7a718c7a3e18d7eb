"""The look every plot shares: colours by group (Okabe-Ito), figure sizes and fonts,
plain text for every name (no mathtext), PNG output, and the drawing primitives (bars,
lines with bands, heatmaps) the other modules build on."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib import colormaps, rc_context
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text

from simkit.output.report_document.names import (
    factor_of,
)

if TYPE_CHECKING:
    pass

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
    the figures of ``.plot()`` display as pictures whatever the notebook's backend.

    Every text is drawn as written: names, sides and titles come from the user's
    scenario, and a ``$`` in a name must not switch matplotlib to mathtext (where
    ``$\\undefinedcommand{x}$`` would make drawing fail).  :meth:`draw` marks every
    text plain before drawing, and draws with ``text.parse_math`` off so that the texts
    matplotlib makes while drawing (new ticks, a legend's labels) are plain too."""

    def draw(self, renderer: Any) -> None:
        plain_text(self)
        with rc_context({"text.parse_math": False}):
            super().draw(renderer)

    def _repr_png_(self) -> bytes:
        return figure_png(self)


def plain_text(fig: Figure) -> None:
    """Every text of ``fig`` drawn as written (no mathtext)."""
    for text in fig.findobj(Text):
        text.set_parse_math(False)


def new_figure(width: float = WIDTH, height: float = 4.0) -> Figure:
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


def style_axes(ax: Axes, grid: str = "x") -> None:
    ax.tick_params(labelsize=FONT - 0.5, length=3)
    ax.grid(axis=grid, alpha=0.3, linewidth=0.6)
    ax.set_axisbelow(True)
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)


def panel_title(ax: Axes, text: str) -> None:
    ax.set_title(text, fontsize=FONT + 1, loc="left")


def label_x(ax: Axes, text: str) -> None:
    ax.set_xlabel(text, fontsize=FONT)


def label_y(ax: Axes, text: str) -> None:
    ax.set_ylabel(text, fontsize=FONT)


# --------------------------------------------------------------------------- primitives
def error_bars(mean: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
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
    ax.errorbar(
        mean, y, xerr=error_bars(mean, low, high), fmt="none", ecolor=ERROR, capsize=3, lw=1
    )
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
    style_axes(ax, "x")


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


MIN_LINE_CONTRAST = 3.0  # a line against the white page (WCAG's 3:1 for graphics)


def contrast(colour: Any, background: Any = "white") -> float:
    """The WCAG contrast ratio of two colours (1 to 21)."""
    from matplotlib.colors import to_rgb

    def luminance(c: Any) -> float:
        lin = [x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4 for x in to_rgb(c)]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    a, b = sorted((luminance(colour), luminance(background)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def line_colour(colour: Any, least: float = MIN_LINE_CONTRAST) -> str:
    """``colour`` darkened (its hue kept) just enough for a contrast of ``least`` against
    white: Okabe-Ito's yellow and orange as lines on a white page are too pale."""
    from matplotlib.colors import to_hex, to_rgb

    rgb = to_rgb(colour)
    factor = 1.0
    while contrast(tuple(factor * x for x in rgb)) < least and factor > 0:
        factor -= 0.01
    return to_hex(tuple(max(0.0, factor) * x for x in rgb))


def lines(
    ax: Axes,
    xs: Sequence[float],
    series: Sequence[tuple[str, str, Sequence[Any], str]],
    name: str,
) -> list[Any]:
    """One line per series ``(label, colour, estimates, linestyle)`` with its 95% band;
    a colour too pale for a line on white is darkened (:func:`line_colour`)."""
    f = factor_of(name)
    handles = []
    for label, given, ests, style in series:
        colour = line_colour(given)
        mean = np.array([f * e.mean for e in ests], float)
        low = np.array([f * e.ci_low for e in ests], float)
        high = np.array([f * e.ci_high for e in ests], float)
        (line,) = ax.plot(
            xs, mean, linestyle=style, color=colour, marker="o", markersize=3.5, lw=1.6
        )
        ax.fill_between(xs, low, high, color=colour, alpha=0.22, lw=0)
        line.set_label(label)
        handles.append(line)
    style_axes(ax, "both")
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


def band_handle() -> Patch:
    return Patch(facecolor="0.6", alpha=0.35, label="95% confidence band")


def ci_handle() -> Line2D:
    return Line2D([], [], color=ERROR, marker="|", linestyle="-", lw=1, label=CI_LABEL)
