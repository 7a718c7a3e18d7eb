"""One metric of one result per combatant, group or side (``Result.plot``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from matplotlib.figure import Figure

from simkit.output.plots.look import WIDTH, hbars, label_x, new_figure, palette, panel_title
from simkit.output.report_document.names import (
    group_label,
    title_of,
    unit_of,
)

if TYPE_CHECKING:
    pass


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
    fig = new_figure(WIDTH * 0.8, min(1.0 + 0.3 * len(names), 24.0))
    ax = fig.add_subplot()
    hbars(ax, labels, [Estimate(*rows[n][2:]) for n in names], metric, [colours[n] for n in names])
    panel_title(ax, f"{title_of(metric)}, per {by}")
    label_x(ax, f"{unit_of(metric)} (bars: 95% confidence intervals)")
    return fig
