"""Tuning: the target quantity over the grid, its band and the target line
(``Tuning.plot``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from simkit.output.plots.look import (
    FONT,
    OKABE_ITO,
    band_handle,
    heatmap,
    label_x,
    label_y,
    lines,
    new_figure,
    panel_title,
)
from simkit.output.report_document.names import (
    sweep_axis,
)

if TYPE_CHECKING:
    pass


# --------------------------------------------------------------------------- tuning
def tune_figure(tuning: Any) -> Figure:
    """The target quantity against the varied value (actual values for offsets) with its
    95% band and the target line (one field), or a grey map of it with the pairs that
    meet the target ticked (two)."""
    target = tuning.target
    points = tuning.points
    fig = new_figure(7.2, 4.0)
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
        label_x(ax, xtitle)
        label_y(ax, target.quantity)
        ax.legend(
            handles=[
                Line2D([], [], color=colour, marker="o", label="estimate"),
                band_handle(),
                Line2D(
                    [],
                    [],
                    color=OKABE_ITO[4],
                    ls="--",
                    label=f"target {target.comparator} {target.value:g}",
                ),
                *(
                    [
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
                        )
                    ]
                    if any(p.met for p in points)  # only where a value does
                    else []
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
        label_x(ax, tx)
        label_y(ax, ty)
    panel_title(ax, f"Target: {target.text}")
    return fig
