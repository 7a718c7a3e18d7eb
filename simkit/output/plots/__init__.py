"""Every plot simkit draws, in one look, split by what it draws.

* :mod:`.look`: the shared look (colours by group, fonts, sizes, plain text, PNG output)
  and the drawing primitives;
* :mod:`.per_combatant`: one metric of a result per combatant, group or side;
* :mod:`.over_grid`: sweeps (lines with bands, heatmaps);
* :mod:`.differences`: comparisons (paired differences);
* :mod:`.target_curve`: tunings (the target quantity against the varied value);
* :mod:`.report_panels`: the report's panels;
* :mod:`.tornado`: sensitivities (the tornado of what moves the balance).

Plots render finished results and never simulate.  The look is the same everywhere:

* one colour per *group* (a ``count`` group's copies share it; a side that is a single
  group shares that group's colour, other sides get their own), from the Okabe-Ito
  palette, which colour-blind readers can tell apart (:func:`palette`);
* probabilities in % (differences in percentage points), other metrics in their
  registry unit; titles and axis labels in words, from the metric registry;
* heatmaps in greys (:data:`HEAT`), so that no cell reads as a combatant's colour;
* every estimate with its 95% interval (bars, bands or error bars);
* every text as written: a ``$`` in a name is a dollar sign, never mathtext.

Figures are ``matplotlib.figure.Figure`` objects built without pyplot (no global state,
no display, thread-safe); :func:`figure_png` renders one with the Agg canvas.
"""

from simkit.output.plots.differences import comparison_bars, comparison_figure, plot_differences
from simkit.output.plots.look import (
    CI_LABEL,
    DPI,
    FONT,
    HEAT,
    INK,
    MAX_HEATMAP,
    OKABE_ITO,
    WIDTH,
    Palette,
    ShownFigure,
    figure_png,
    hbars,
    heatmap,
    lines,
    palette,
)
from simkit.output.plots.over_grid import plot_sweep_heatmap, plot_sweep_lines, sweep_figure
from simkit.output.plots.per_combatant import result_figure
from simkit.output.plots.policy_gains import policies_figure
from simkit.output.plots.report_panels import (
    PART_COLOURS,
    bar_panels,
    distribution_figure,
    effects_figure,
    line_panels,
    matrix_figure,
    side_handles,
    stacked_figure,
)
from simkit.output.plots.target_curve import tune_figure
from simkit.output.plots.tornado import top_measure, tornado_figure

__all__ = [
    "CI_LABEL",
    "DPI",
    "FONT",
    "HEAT",
    "INK",
    "MAX_HEATMAP",
    "OKABE_ITO",
    "PART_COLOURS",
    "WIDTH",
    "Palette",
    "ShownFigure",
    "bar_panels",
    "comparison_bars",
    "comparison_figure",
    "distribution_figure",
    "effects_figure",
    "figure_png",
    "hbars",
    "heatmap",
    "line_panels",
    "lines",
    "matrix_figure",
    "palette",
    "plot_differences",
    "plot_sweep_heatmap",
    "plot_sweep_lines",
    "result_figure",
    "side_handles",
    "stacked_figure",
    "sweep_figure",
    "top_measure",
    "tornado_figure",
    "policies_figure",
    "tune_figure",
]
