"""Policies: the gain of every coordinate's best value with its paired interval
(``PolicySearch.plot``)."""

from __future__ import annotations

from typing import Any

from matplotlib.figure import Figure

from simkit.metrics import Estimate
from simkit.output.plots.look import FONT, OKABE_ITO, hbars, label_x, new_figure, panel_title


def policies_figure(search: Any) -> Figure:
    """Horizontal bars: per combatant and field, the gain of its best value over the
    file's value for its side's objective, with the 95% paired interval; largest first."""
    choices = search.ranked
    labels, estimates = [], []
    for ch in choices:
        value, g = ch.best
        c = ch.coordinate
        labels.append(f"{c.group}: {c.field} = {value}")
        estimates.append(Estimate(g.difference, g.se, g.ci_low, g.ci_high))
    fig = new_figure(7.2, max(2.4, 0.32 * len(labels) + 1.2))
    ax = fig.add_subplot()
    colours = [OKABE_ITO[2] if ch.verdict == "clear" else "#bbbbbb" for ch in choices]
    hbars(ax, labels, estimates, "gain", colours)
    ax.axvline(0, color="#444444", lw=0.8)
    label_x(ax, "gain of its side's objective over the file's value (per round)")
    panel_title(ax, f"Best policy per combatant: {search.scenario.name}")
    ax.tick_params(labelsize=FONT - 1)
    return fig
