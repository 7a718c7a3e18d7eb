"""A report looked at: every legend drawn inside its picture, lines dark enough to see on
white, no "(continued)" table that would fit whole, "1 copy", and a tune plot's legend
that offers "meets the target" only when some value does.  (The browser's view of the
same reports, at 1,200 and 800 px: tests/test_report_layout.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from matplotlib.legend import Legend

import simkit
from simkit.analysis.report_runs import make_report
from simkit.output import plots
from simkit.output.plots import look
from simkit.output.report_document import page, tables
from simkit.output.report_document.build import copies
from simkit.output.report_document.readings import Numbers

ROOT = Path(__file__).resolve().parents[1]
WOLVES = ROOT / "scenarios" / "party_vs_wolves.toml"
AMBUSH = ROOT / "scenarios" / "ambush.toml"


@pytest.fixture(scope="module")
def drawn():
    """Every figure the party-vs-wolves report draws, kept as it is saved."""
    figures = []
    saved = look.figure_png

    def keep(fig, *args, **kwargs):
        png = saved(fig, *args, **kwargs)
        figures.append(fig)
        return png

    mp = pytest.MonkeyPatch()
    for module in (look, plots):
        mp.setattr(module, "figure_png", keep)
    import simkit.output.report_document.figures as report_figures

    mp.setattr(report_figures.plots, "figure_png", keep)
    try:
        rendered = make_report(WOLVES, 3000, 5)
    finally:
        mp.undo()
    return rendered, figures


def _legends(fig):
    out = list(fig.legends)
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is not None:
            out.append(legend)
    return out


def test_every_legend_lies_inside_its_picture(drawn):
    _, figures = drawn
    assert len(figures) >= 5
    checked = 0
    for fig in figures:
        renderer = fig.canvas.get_renderer()
        box = fig.bbox
        for legend in _legends(fig):
            assert isinstance(legend, Legend)
            extent = legend.get_window_extent(renderer)
            texts = [t.get_text() for t in legend.get_texts()]
            assert extent.x0 >= box.x0 - 0.5 and extent.x1 <= box.x1 + 0.5, texts
            assert extent.y0 >= box.y0 - 0.5 and extent.y1 <= box.y1 + 0.5, texts
            checked += 1
    assert checked >= 2


def test_the_actions_distribution_legend_names_the_interval_whole(drawn):
    _, figures = drawn
    with_ci = [
        legend
        for fig in figures
        for legend in _legends(fig)
        if look.CI_LABEL in [t.get_text() for t in legend.get_texts()]
    ]
    assert with_ci  # the legend that was cut at "95% confid..."


def test_lines_contrast_at_least_3_to_1_with_white(drawn):
    _, figures = drawn
    colours = [
        line.get_color()
        for fig in figures
        for ax in fig.axes
        for line in ax.get_lines()
        if len(line.get_xdata()) > 1 and line.get_linestyle() not in ("None", "")
    ]
    assert colours
    assert min(look.contrast(c) for c in colours) >= look.MIN_LINE_CONTRAST
    # Okabe-Ito's yellow (1.3:1) and orange (2.3:1) are darkened, hue kept
    assert look.contrast("#F0E442") < 3 <= look.contrast(look.line_colour("#F0E442"))
    assert look.line_colour("#0072B2") == "#0072b2"  # dark enough already: unchanged


def test_a_sweep_plot_draws_pale_colours_dark(tmp_path):
    sweep = simkit.sweep(WOLVES, ["Wolf.readiness=+0..+1"], rounds=500, rng=1)
    ax = plots.plot_sweep_lines(sweep, "actions", by="group")
    assert min(look.contrast(line.get_color()) for line in ax.get_lines()) >= 3


def test_one_policy_reads_one_copy():
    assert copies(1) == "1 copy" and copies(3) == "3 copies"


def test_no_report_says_1_copies(drawn):
    rendered, _ = drawn
    md = rendered.files["report.md"].decode()
    assert "copies" in md or "copy" in md
    assert not re.search(r"\b1 copies\b", md)


def test_no_table_is_cut_while_it_fits():
    rendered = make_report(AMBUSH, 2000, 5)
    numbers = Numbers(rendered.data.result)
    group, _ = tables.group_tables(numbers)
    assert not any("(continued)" in t.title for t in group)  # one table per theme
    sweep = tables.side_sweep_table(rendered.data, numbers)
    # the sweep table (984 px estimated, 866 px in Chromium) is shown whole
    assert len(page.column_parts(sweep)) == 1
    html = rendered.files["report.html"].decode()
    for t in [*group, sweep]:
        cut = f"{t.title} (continued)" in html.replace("&#x27;", "'")
        estimate = sum(page._width(t, j) for j in range(len(t.header)))
        assert cut == (estimate > page.BUDGET), t.title


@pytest.mark.parametrize(("value", "met"), [("5", True), ("50", False)])
def test_the_tune_legend_says_meets_only_when_a_value_does(value, met):
    target = f"side:wolves.actions / side:party.actions >= {value}"
    tuning = simkit.tune(WOLVES, ["Wolf.readiness=+0..+3"], target, rounds=500, rng=1)
    assert any(p.met for p in tuning.points) == met
    fig = plots.tune_figure(tuning)
    labels = [t.get_text() for legend in _legends(fig) for t in legend.get_texts()]
    assert ("meets the target" in labels) == met


def test_an_economy_of_zero_keeps_the_axis_linear():
    """A side without actions has an action economy of 0: the panel that would be drawn
    on a log axis stays linear instead of failing (math domain error) or hiding it."""
    from simkit.output.plots.report_panels import _log_axis, _plain

    fig = _plain(4, 3)
    ax = fig.subplots()
    ax.plot([1, 2, 3], [0.0, 0.5, 1.5])
    assert _log_axis(ax) is False and ax.get_yscale() == "linear"
    ax2 = fig.subplots()
    ax2.plot([1, 2, 3], [0.2, 0.5, 1.5])
    assert _log_axis(ax2) and ax2.get_yscale() == "log"
    # a linear axis whose margin reaches below 0 although every value is above it (the
    # travellers' sweep of ambush: 0.19 to 4.4) still gets its log scale
    ax3 = fig.subplots()
    ax3.plot([1, 2, 3, 4, 5], [0.1864, 0.6, 1.45, 2.7, 4.45])
    assert ax3.get_ylim()[0] < 0
    assert _log_axis(ax3) and ax3.get_yscale() == "log"
