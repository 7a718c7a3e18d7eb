"""Sensitivity: the tornado (``Sensitivity.plot``, a report's sensitivity section).

One row per knob, the largest change on top: a main stat's knob has a bar for one point
up (solid) and one point down (light), in its group's colour; a rule's alternative has
one grey bar.  Every bar runs from 0 to the paired change of one measure, with its 95%
interval."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from simkit.bounded import cut
from simkit.output.plots.look import (
    ERROR,
    FONT,
    INK,
    WIDTH,
    error_bars,
    label_x,
    new_figure,
    palette,
    panel_title,
    style_axes,
)

MAX_KNOBS = 24  # rows of one tornado; the smaller knobs beyond are left out (and said)
RULE_COLOUR = "#8C8C8C"


def top_measure(s: Any) -> str:
    """The measure of the largest change (the first in order where nothing changes)."""
    t = s.table
    if t.empty or not t.difference.abs().gt(0).any():
        return s.measures[0].label
    return str(t.loc[t.difference.abs().idxmax()].measure)


def tornado_figure(s: Any, measure: str | None = None) -> Figure:
    """The tornado of ``s`` (a ``Sensitivity``) in ``measure`` (a label of
    ``s.measures``; default :func:`top_measure`)."""
    labels = [m.label for m in s.measures]
    measure = measure or top_measure(s)
    if measure not in labels:
        raise KeyError(f"no measure {measure!r}; allowed: {', '.join(labels)}")
    words = next(m.words for m in s.measures if m.label == measure)
    t = s.table[s.table.measure == measure]
    knobs = list(dict.fromkeys(t.knob))
    shown = knobs[:MAX_KNOBS]
    colours = palette(s.scenario).group
    fig = new_figure(WIDTH * 0.8, 1.3 + 0.34 * max(len(shown), 1))
    ax = fig.add_subplot()
    names = []
    for y, knob in enumerate(shown):
        rows = t[t.knob == knob]
        first = rows.iloc[0]
        if first.kind == "stat":
            size = len(s.scenario.members(first.who)) if first.who in s.scenario.groups else 1
            who = f"{first.who} ×{size}" if size > 1 else first.who
            names.append(cut(f"{who} {first.field}", 40))
            colour = colours.get(first.who, INK)
        else:
            names.append(cut(f"rules.{first.field} = {first.changed_to}", 40))
            colour = RULE_COLOUR
        for r in rows.itertuples(index=False):
            down = r.kind == "stat" and r.step < 0
            alpha = 0.4 if down else 1.0
            ax.barh(y, r.difference, height=0.62, color=colour, alpha=alpha, edgecolor="none")
            err = error_bars(np.array([r.difference]), np.array([r.ci_low]), np.array([r.ci_high]))
            ax.errorbar([r.difference], [y], xerr=err, fmt="none", ecolor=ERROR, capsize=3, lw=1)
    ax.axvline(0.0, color="0.3", lw=0.8)
    ax.set_yticks(np.arange(len(shown)), names, fontsize=FONT - 0.5)
    ax.set_ylim(max(len(shown), 1) - 0.5, -0.5)
    label_x(ax, f"change in {words} (variant − as written)")
    title = "What moves the balance"
    if len(knobs) > len(shown):
        title += f" (the {len(shown)} largest of {len(knobs)} knobs)"
    panel_title(ax, title)
    style_axes(ax, "x")
    handles = [
        Patch(color="0.35", label="one point up"),
        Patch(color="0.35", alpha=0.4, label="one point down"),
        Patch(color=RULE_COLOUR, label="rule variant"),
    ]
    ax.legend(handles=handles, fontsize=FONT - 1, loc="best", frameon=False)
    return fig
