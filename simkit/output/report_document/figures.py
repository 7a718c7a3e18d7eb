"""Which plots a report draws, from which numbers (``simkit.output.plots`` draws them).

Plots are per group (a ``count`` group's copies are one bar or line in one colour),
per side where a scenario has too many groups to show, and a panel is left out where
its metric cannot vary (everyone takes one action per round).  Heatmaps over pairs are
left out beyond ``plots.MAX_HEATMAP`` groups.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from simkit.output import plots
from simkit.output.report_document import findings as words
from simkit.output.report_document.names import axis_label, sweep_axis, title_of
from simkit.output.report_document.readings import Numbers

if TYPE_CHECKING:
    from simkit.analysis.report_runs import ReportData

MAX_BARS = 30  # groups shown one bar each; beyond, plots are per side
# Sides' lines differ in style too, so that lines on top of each other (sides with the
# same numbers) stay visible.
STYLES = ("-", (0, (5, 2)), (0, (1, 1.5)), (0, (6, 2, 1, 2)))
ROW_WORDS = {  # (metric, of a side) -> a row of the policy plot
    ("hasty_only", False): "attacks on it, answered only hastily",
    ("undefended", False): "attacks on it, unanswered",
    ("undefended", True): "unanswered attacks",
}
ECONOMY = "action_economy"


@dataclass(frozen=True)
class Plot:
    name: str  # file name, e.g. overview.png
    title: str
    caption: str
    png: bytes
    section: str  # where the page shows it: order, attacks, policies, sweep


def figures(data: ReportData, numbers: Numbers | None = None) -> list[Plot]:
    """Every plot of the report, rendered to PNG."""
    numbers = numbers or Numbers(data.result)
    colours = plots.palette(data.scenario)
    out: list[Plot] = []
    out += _order(numbers, colours)
    out += _attacks(numbers, colours)
    from simkit.output.report_document.fight_rounds import fight_plot

    rounds = fight_plot(data.result, colours)  # R8a: fights of several rounds
    if rounds is not None:
        out.append(rounds)
    if data.policies:
        policies = _policies(data, numbers, colours)
        if policies is not None:
            out.append(policies)
    if data.sweeps:
        out.append(_side_sweep(data, numbers, colours))
    if data.sweep is not None:
        out += _grid(data, numbers, colours)
    if data.sensitivity is not None and not data.sensitivity.table.empty:
        out.append(_tornado(data))
    return out


def _tornado(data: ReportData) -> Plot:
    s = data.sensitivity
    assert s is not None
    measure = plots.top_measure(s)
    words_ = next(m.words for m in s.measures if m.label == measure)
    return Plot(
        "sensitivity.png",
        "What moves the balance",
        f"The change in {words_} when one knob is turned, the rest as written: each "
        "combatant's (or group's) main stat one point up (solid) and down (light), each rule "
        "variant (grey); every run on the same dice as the scenario as written; whiskers: "
        "paired 95% confidence intervals.",
        plots.figure_png(plots.tornado_figure(s, measure)),
        "sensitivity",
    )


def _rows(numbers: Numbers, colours: plots.Palette) -> tuple[str, list[str], list[str], list[str]]:
    """The level of bar plots: groups, or sides when there are too many groups."""
    if len(numbers.groups) <= MAX_BARS:
        labels = [numbers.label(g) for g in numbers.groups]
        return "group", list(numbers.groups), labels, [colours.group[g] for g in numbers.groups]
    return (
        "side",
        list(numbers.sides),
        list(numbers.sides),
        [colours.side[s] for s in numbers.sides],
    )


def _value(numbers: Numbers, level: str, name: str, metric: str):  # noqa: ANN202
    return numbers.each(name, metric) if level == "group" else numbers.side(name, metric)


def _order(numbers: Numbers, colours: plots.Palette) -> list[Plot]:
    level, names, labels, cols = _rows(numbers, colours)
    metrics = [
        m
        for m in ("first_action", "actions", "attacked_before_acting")
        if numbers.has(m) and numbers.varies(m, level)
    ]
    out = []
    if metrics:
        panels = [(m, labels, [_value(numbers, level, n, m) for n in names], cols) for m in metrics]
        each = " (per member of a group)" if level == "group" else " (per side)"
        out.append(
            Plot(
                "overview.png",
                "Who acts first, how often, who is hit first",
                f"Per round{each}: "
                + "; ".join(title_of(m).lower() for m in metrics)
                + ". Bars: 95% confidence intervals.",
                plots.figure_png(plots.bar_panels(panels)),
                "order",
            )
        )
    if numbers.has("actions") and numbers.varies("actions") and len(numbers.groups) <= 12:
        dists = [numbers.distribution(g) for g in numbers.groups]
        if any(max((e.mean for e in d), default=1) < 1 for d in dists):
            out.append(
                Plot(
                    "actions_distribution.png",
                    "How many actions a round",
                    "Share of rounds in which one member of each group takes k actions of its "
                    "own (defenses not counted); bars: 95% confidence intervals.",
                    plots.figure_png(
                        plots.distribution_figure(
                            [numbers.label(g) for g in numbers.groups],
                            dists,
                            [colours.group[g] for g in numbers.groups],
                            "own actions in a round",
                        )
                    ),
                    "order",
                )
            )
    if 2 <= len(numbers.groups) <= plots.MAX_HEATMAP and numbers.has("first_action"):
        matrix = numbers.before_matrix(numbers.groups)
        out.append(
            Plot(
                "acts_before.png",
                "Who acts before whom",
                "Each cell: % of rounds in which a member of the row acts before a member of "
                "the column (one that takes no action counts as later); copies of a group are "
                "averaged. Greys: the darker, the more often.",
                plots.figure_png(
                    plots.matrix_figure(
                        [numbers.label(g) for g in numbers.groups],
                        matrix,
                        [colours.group[g] for g in numbers.groups],
                        title="Row acts before column",
                        xlabel="… before a member of this group",
                        ylabel="a member of this group acts …",
                        colorbar="% of rounds",
                    )
                ),
                "order",
            )
        )
    return out


def _attacks(numbers: Numbers, colours: plots.Palette) -> list[Plot]:
    if not (numbers.has("undefended") and numbers.has("attacks_received")):
        return []
    if not (numbers.has("defended") or numbers.has("hasty_only")):
        return []  # nobody can answer an attack: the split would be one part
    level, names, labels, _ = _rows(numbers, colours)
    parts_of = [
        ("defended", "answered normally"),
        ("hasty_only", "answered only hastily"),
        ("undefended", "unanswered"),
    ]
    present = [(m, w) for m, w in parts_of if numbers.has(m)]
    values = {m: [_value(numbers, level, n, m).mean for n in names] for m, _ in present}
    totals = [_value(numbers, level, n, "attacks_received") for n in names]
    rest = [t.mean - sum(values[m][k] for m, _ in present) for k, t in enumerate(totals)]
    parts = [(w, values[m], plots.PART_COLOURS[k]) for k, (m, w) in enumerate(present)]
    if max(rest, default=0) > 1e-9 * max((t.mean for t in totals), default=1):
        parts.append(("answered otherwise", rest, plots.PART_COLOURS[3]))
    each = "one member of each group" if level == "group" else "each side"
    return [
        Plot(
            "attacks.png",
            "Attacks received and how they are answered",
            f"Attacks on {each} per round, split by the best answer they got; the error bar is "
            "the 95% interval of all attacks received.",
            plots.figure_png(
                plots.stacked_figure(
                    labels,
                    parts,
                    totals,
                    title="Attacks received per round",
                    xlabel="attacks per round",
                )
            ),
            "attacks",
        )
    ]


def _policies(data: ReportData, numbers: Numbers, colours: plots.Palette) -> Plot | None:
    """Per policy: the holder's actions, the attacks on it answered only hastily (or left
    unanswered), its side's unanswered attacks and the other sides' actions."""
    benefit = "hasty_only" if numbers.has("hasty_only") else "undefended"
    panels = []
    keys: dict[str, str] = {}
    for e in data.policies:
        c = e.change
        who = words.holder_label(e, numbers)
        keys[who] = colours.group.get(c.who) or colours.combatant.get(c.who, plots.INK)
        wanted = [(c.level, c.who, who, "actions"), (c.level, c.who, who, benefit)]
        if numbers.has("undefended"):
            wanted.append(("side", c.side, c.side, "undefended"))
        wanted += [("side", s, s, "actions") for s in numbers.sides if s != c.side]
        rows = []
        for level, name, label, metric in wanted:
            x = words.effect(e, level, name, metric) if numbers.has(metric) else None
            if x is None:
                continue
            keys.setdefault(label, colours.side.get(label, plots.INK))
            what = ROW_WORDS.get((metric, level == "side"), title_of(metric).lower())
            rows.append((f"{label}: {what}", label, (x.difference, x.ci_low, x.ci_high)))
        if rows:
            panels.append((words.policy_phrase(e, numbers, _Silent()), rows))
    if not panels:
        return None
    figure = plots.effects_figure(
        panels, keys, xlabel="change per round, as written minus the alternative"
    )
    return Plot(
        "policies.png",
        "Cost and benefit of each policy",
        "Paired differences on the same dice, as written minus the alternative, per round "
        "(actions or attacks), with 95% intervals; left of the line: fewer than without "
        "the policy.",
        plots.figure_png(figure),
        "policies",
    )


def _style(sides: list[str], side: str) -> object:
    return STYLES[sides.index(side) % len(STYLES)]


class _Silent:
    """Footnotes that are not kept (a plot title cites no notes)."""

    def mark(self, text: str) -> str:
        return ""

    def rule(self, what: str, ids: object) -> str:
        return ""


def _side_sweep(data: ReportData, numbers: Numbers, colours: plots.Palette) -> Plot:
    stat = data.plan.stat
    sides = numbers.sides
    even = words.parity(numbers)
    panels = []
    for side, points in data.sweeps.items():
        points = sorted(points, key=lambda p: p.offset)
        new = [sorted({v[1] for v in p.values.values()}) for p in points]
        if all(len(v) == 1 for v in new):
            xs = [float(v[0]) for v in new]
            xlabels = [str(v[0]) for v in new]
            xtitle = f"{stat} of {side}"
        else:
            xs = [float(p.offset) for p in points]
            xlabels = [f"{p.offset:+d}" for p in points]
            xtitle = f"change in {stat} of every member of {side}"
        ests = {s: [_side(p.result, s) for p in points] for s in sides}
        metric = words.balance_metric([p.result for p in points], side)
        economy = metric == ECONOMY
        shown = [s for s in sides if len(sides) > 2 or s == side or not economy]
        panels.append(
            {
                "xs": xs,
                "xlabels": xlabels,
                "xtitle": xtitle,
                "metric": metric,
                "series": [
                    (s, colours.side[s], [e[metric] for e in ests[s]], _style(sides, s))
                    for s in shown
                ],
                "hline": (even if economy else 100 * words.even_share(numbers, metric), "even"),
                "log": economy,
                "title": f"{words.possessive(side)} {stat} varied",
                "ylabel": "action economy (log scale)" if economy else axis_label(metric),
            }
        )
    legend = plots.side_handles(sides, colours.side, STYLES)
    what = "Action economy" if all(p["metric"] == ECONOMY for p in panels) else "Balance"
    return Plot(
        "sweep.png",
        f"{what} against each side's {stat}",
        f"Each side's {stat} changed by up to ±2 (clipped to the allowed range), every run on "
        "the same dice; the action economy where it can change (dotted: parity), first action "
        "where it cannot (dotted: an even share); bands: 95% confidence intervals.",
        plots.figure_png(plots.line_panels(panels, legend=legend, ncols=2)),
        "sweep",
    )


def _side(result, side: str) -> dict:  # noqa: ANN001
    from simkit.metrics import Estimate

    return {m: Estimate(*x) for w, m, *x in result.level_rows("side") if w == side}


def _grid(data: ReportData, numbers: Numbers, colours: plots.Palette) -> list[Plot]:
    sweep = data.sweep
    assert sweep is not None
    sides = numbers.sides
    out = []
    if len(sweep.axes) == 1:
        xs, xlabels, xtitle = sweep_axis(sweep, 0)
        ests = {s: [_side(r, s) for r in sweep.results] for s in sides}
        panels = [
            {
                "xs": xs,
                "xlabels": xlabels,
                "xtitle": xtitle,
                "metric": ECONOMY,
                "series": [
                    (s, colours.side[s], [e[ECONOMY] for e in ests[s]], STYLES[k % len(STYLES)])
                    for k, s in enumerate(sides)
                ],
                "hline": (words.parity(numbers), "parity"),
                "log": True,
                "ylabel": "own actions per opponent action (log)",
            },
            {
                "xs": xs,
                "xlabels": xlabels,
                "xtitle": xtitle,
                "metric": "first_action",
                "series": [
                    (
                        s,
                        colours.side[s],
                        [e["first_action"] for e in ests[s]],
                        STYLES[k % len(STYLES)],
                    )
                    for k, s in enumerate(sides)
                ],
            },
        ]
        figure = plots.line_panels(panels, legend=plots.side_handles(sides, colours.side, STYLES))
    else:
        figure = plots.plot_sweep_heatmap(sweep, ECONOMY, by="side")
    out.append(
        Plot(
            "sweep.png",
            "The sweep",
            f"The grid {', '.join(a.spec for a in sweep.axes)}, every point on the same dice; "
            "offsets shown as the values they gave; bands: 95% confidence intervals.",
            plots.figure_png(figure),
            "sweep",
        )
    )
    if data.tuning is not None:
        out.append(
            Plot(
                "tune.png",
                "The target",
                f"{data.tuning.target.quantity} at every point with its 95% interval; dashed: "
                "the target; circled: the points that meet it.",
                plots.figure_png(plots.tune_figure(data.tuning)),
                "sweep",
            )
        )
    return out
