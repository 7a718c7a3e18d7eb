"""Reports: one scenario's results as HTML, Markdown, PNG plots and CSV tables.

:func:`report` runs exactly these simulations, every one from the same seed, so
that they see the same dice round by round (common random numbers):

1. the scenario as written (the main result);
2. readiness only, and only if some combatant holds: ``simkit.compare`` of the
   scenario against a copy in which every combatant has ``hold = "never"``
   (paired differences);
3. the sweep: for each side, its members' initiative stat shifted by -2 .. +2
   (``readiness``; ``rating`` for vtm; ``perception``), clipped to the allowed range;
   the offset 0 point is the main result.

Everything else (findings, tables, plots) only renders those results.  Files are
written to temporary names first and renamed into place, so a failed or interrupted
report leaves no half-written file, and a bad scenario writes nothing at all.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simkit import systems
from simkit.deferred import pandas as pd
from simkit.metrics import Z95, Estimate
from simkit.output.files import write_files
from simkit.output.format import (
    decimals,
    format_difference,
    format_estimate,
    join_words,
)

if TYPE_CHECKING:
    from simkit.analysis.report import ReportData
    from simkit.analysis.result import Result

SCENARIO_ROW = ""

CLIPPED = ", clipped to the allowed range"
OFFSETS = (-1, 1, -2, 2)  # by size first: a clipped duplicate keeps the smaller offset
COMPARISON_COLUMNS = [  # holding.csv without a comparison (simkit.compare's columns)
    "combatant",
    "metric",
    "mean_a",
    "mean_b",
    "difference",
    "se_paired",
    "ci_low",
    "ci_high",
    "se_unpaired",
    "narrower",
]
SWEEP_COLUMNS = [
    "side",
    "offset",
    "stat",
    "combatant",
    "value",
    "metric",
    "mean",
    "se",
    "ci_low",
    "ci_high",
]
CSV_FILES = (
    "metrics.csv",
    "acts_before.csv",
    "actions_distribution.csv",
    "holding.csv",
    "sweep.csv",
)


def _unit(metric: str) -> str:
    from simkit.metrics import UnknownMetric
    from simkit.metrics import metric as registry

    try:
        return registry(metric).unit
    except UnknownMetric:
        return ""


SCENARIO_METRIC_TEXT = {
    "stalemate": "Stalemate rounds (everyone held, R8)",
    "simultaneous": "Rounds in which at least two combatants share a time slot (V2)",
}


# --- tables ------------------------------------------------------------------------


def _tidy_prefixed(table: pd.DataFrame, prefix: str, column: str) -> pd.DataFrame:
    t = table[table.metric.str.startswith(prefix)].copy()
    t.insert(1, column, t.metric.str.slice(len(prefix)))
    return t.drop(columns="metric").reset_index(drop=True)


def csv_tables(data: ReportData) -> dict[str, pd.DataFrame]:
    """The data tables of a report, by file name."""
    table = data.result.table
    acts = _tidy_prefixed(table, "acts_before.", "other")
    dist = _tidy_prefixed(table, "actions_dist.", "actions")
    dist["actions"] = dist["actions"].astype(int)
    if data.comparison is not None:
        holding = data.comparison
    else:
        try:
            from simkit.compare import COLUMNS as columns
        except ImportError:
            columns = COMPARISON_COLUMNS
        holding = pd.DataFrame(columns=columns)
    return {
        "metrics.csv": table,
        "acts_before.csv": acts,
        "actions_distribution.csv": dist,
        "holding.csv": holding,
        "sweep.csv": sweep_table(data),
    }


def sweep_table(data: ReportData) -> pd.DataFrame:
    """Every sweep point's per-combatant and scenario metrics, tidy."""
    rows = []
    for side, points in data.sweeps.items():
        for p in points:
            assert p.result is not None
            t = p.result.table
            t = t[~t.metric.str.contains(".", regex=False)]
            for r in t.itertuples(index=False):
                value = (
                    p.result.scenario.combatants[p.result.scenario.index(r.combatant)][
                        systems.get(data.scenario.system).main_field
                    ]
                    if r.combatant != SCENARIO_ROW
                    else None
                )
                rows.append(
                    (
                        side,
                        p.offset,
                        data.plan.stat,
                        r.combatant,
                        value,
                        r.metric,
                        r.mean,
                        r.se,
                        r.ci_low,
                        r.ci_high,
                    )
                )
    out = pd.DataFrame(rows, columns=SWEEP_COLUMNS)
    out["value"] = out["value"].astype("Int64")
    return out


# --- findings ----------------------------------------------------------------------


def _est(metric: str, e: Estimate) -> str:
    return format_estimate(metric, e.mean, e.se)


def _leaders(rows: list[tuple[str, Estimate]], highest: bool = True) -> list[tuple[str, Estimate]]:
    """The best combatant and every one whose interval overlaps its interval.

    Non-overlapping 95% intervals are a significant difference whatever the
    correlation between the two estimates, so only those are called different.
    """
    valid = [(n, e) for n, e in rows if e.mean == e.mean]
    if not valid:
        return []
    valid.sort(key=lambda r: r[1].mean, reverse=highest)
    best = valid[0][1]
    if highest:
        return [(n, e) for n, e in valid if e.ci_high >= best.ci_low]
    return [(n, e) for n, e in valid if e.ci_low <= best.ci_high]


def _estimates(result: Result, metric: str) -> list[tuple[str, Estimate]]:
    return [(n, result.estimate(n, metric)) for n in result.scenario.names]


def findings(data: ReportData) -> list[str]:
    """Plain sentences generated from the numbers; only what the intervals support."""
    r = data.result
    n = len(r.scenario.names)
    out: list[str] = []

    first = _estimates(r, "first_action")
    top = _leaders(first)
    if len(top) == 1:
        (name, e), rest = top[0], [x for x in sorted(first, key=lambda x: -x[1].mean)][1:]
        text = f"{name} acts first in {_est('first_action', e)} of rounds, more than anyone else"
        if rest:
            text += f" (next: {rest[0][0]}, {_est('first_action', rest[0][1])})"
        out.append(text + ".")
    else:
        lead = "; ".join(f"{nm} acts first in {_est('first_action', e)} of rounds" for nm, e in top)
        if len(top) == n:
            out.append(f"No detectable difference in who acts first: {lead}.")
        else:
            who = join_words([nm for nm, _ in top])
            out.append(
                f"{who} act first most often, with no detectable difference among them: {lead}."
            )
    total = sum(e.mean for _, e in first)
    note = ""
    if total > 1.005:
        note = " (a shared first time slot counts for each, so the shares add up to more than 100%)"
    out.append(
        "Share of rounds in which each combatant acts first: "
        + ", ".join(f"{nm} {_est('first_action', e)}" for nm, e in first)
        + note
        + "."
    )

    actions = _estimates(r, "actions")
    top = _leaders(actions)
    low = _leaders(actions, highest=False)
    if all(e.se == 0 for _, e in actions):  # no randomness in how many actions (e.g. P4)
        out.append(f"Actions do not vary: {_grouped(actions, 'actions', r, ' per round')}.")
    elif len(top) == n:
        out.append(
            "No detectable difference in actions per round: "
            + ", ".join(f"{nm} {_est('actions', e)}" for nm, e in actions)
            + "."
        )
    else:
        most = "; ".join(f"{nm} {_est('actions', e)}" for nm, e in top)
        fewest = _grouped(low, "actions", r, " per round")
        if len(top) == 1:
            head = f"{top[0][0]} gets the most actions: {_est('actions', top[0][1])} per round"
        else:
            head = (
                f"{join_words([nm for nm, _ in top])} get the most actions, with no detectable "
                f"difference among them ({most} per round)"
            )
        out.append(f"{head}; the fewest: {fewest}.")

    idle = _leaders(_estimates(r, "no_action"))
    if idle and idle[0][1].ci_low > 0:
        verb = "takes no action of its own" if len(idle) == 1 else "take no action of their own"
        out.append(
            f"{join_words([nm for nm, _ in idle])} most often {verb}: "
            + "; ".join(f"{nm} in {_est('no_action', e)} of rounds" for nm, e in idle)
            + "."
        )
    hit = _leaders(_estimates(r, "attacked_before_acting"))
    if hit and hit[0][1].ci_low > 0:
        out.append(
            "Most often attacked before acting: "
            + "; ".join(f"{nm} in {_est('attacked_before_acting', e)} of rounds" for nm, e in hit)
            + "."
        )

    if "hasty_share" in r.metrics:
        out.append(_hasty_finding(r))
    for row in r.table[r.table.combatant == SCENARIO_ROW].itertuples(index=False):
        label = SCENARIO_METRIC_TEXT.get(row.metric, row.metric)
        out.append(f"{label}: {format_estimate(row.metric, row.mean, row.se)} of rounds.")

    out.extend(_holding_findings(data))
    out.extend(_sweep_findings(data))
    return out


def _hasty_finding(r: Result) -> str:
    share = [(nm, e) for nm, e in _estimates(r, "hasty_share") if e.mean == e.mean]
    if not share or max(e.mean for _, e in share) <= 0:
        return "No combatant ever made a hasty defense (R7)."
    top = _leaders(share)

    def numbers(name: str, e: Estimate) -> str:
        scale = r.estimate(name, "hasty_scale")
        rate = r.estimate(name, "hasty_defenses")
        return (
            f"{_est('hasty_share', e)} of its defenses are hasty "
            f"({_est('hasty_defenses', rate)} hasty defenses per round) at a mean difficulty "
            f"scale of {_est('hasty_scale', scale)} pips"
        )

    if len(top) == 1:
        name, e = top[0]
        return f"{name} has the highest hasty-defense share (R7): {numbers(name, e)}."
    return (
        f"{join_words([nm for nm, _ in top])} have the highest hasty-defense shares (R7), with no "
        "detectable difference among them: "
        + "; ".join(f"{nm}: {numbers(nm, e)}" for nm, e in top)
        + "."
    )


def _holding_findings(data: ReportData) -> list[str]:
    if data.comparison is None:
        return [data.plan.holding_note]
    effects = data.holding_effects()
    holders = join_words(list(data.plan.holders))
    out = []
    for metric, label in (
        ("first_action", "first action, in percentage points"),
        ("actions", "actions per round"),
    ):
        rows = effects[(effects.metric == metric) & (effects.combatant != SCENARIO_ROW)]
        found, none = [], []
        for row in sorted(rows.itertuples(index=False), key=lambda x: -abs(x.effect)):
            if row.ci_low <= 0 <= row.ci_high:
                none.append(row.combatant)
            else:
                half = (row.ci_high - row.ci_low) / 2
                effect = format_difference(metric, row.effect, half)
                found.append(f"{row.combatant} {effect}")
        text = f'Holding by {holders} (as written against everyone hold = "never", on the same '
        text += f"dice) changes {label}: "
        text += "; ".join(found) if found else "not detectably for anyone"
        if found and none:
            text += f"; no detectable difference for {join_words(none)}"
        out.append(text + ".")
    return out


def _side_sum(result: Result, members: Sequence[str], metric: str) -> tuple[float, float]:
    """Sum over members and a bound on its standard error (the sum of the errors)."""
    es = [result.estimate(m, metric) for m in members]
    return sum(e.mean for e in es), sum(e.se for e in es)


def _names_text(names: Sequence[str], scenario: Any) -> str:
    """Names joined, a complete ``count`` group written as ``Ghoul 1–5``."""
    words: list[str] = []
    done: set[str] = set()
    for name in names:
        if name in done:
            continue
        group = scenario.combatants[scenario.index(name)].group
        members = [c.name for c in scenario.combatants if c.group == group]
        if len(members) > 2 and group != name and set(members) <= set(names):
            words.append(f"{group} 1–{len(members)}")
            done.update(members)
        else:
            words.append(name)
            done.add(name)
    return join_words(words)


def _grouped(rows: list[tuple[str, Estimate]], metric: str, r: Result, unit: str) -> str:
    """``Ghoul 1–5 and Handler (1 per round each)``: names with equal values merged."""
    texts: dict[str, list[str]] = {}
    for nm, e in rows:
        texts.setdefault(_est(metric, e), []).append(nm)
    parts = []
    for text, names in texts.items():
        each = " each" if len(names) > 1 else ""
        parts.append(f"{_names_text(names, r.scenario)} ({text}{unit}{each})")
    return "; ".join(parts)


def _values_text(stat: str, values: dict[str, tuple[int, int]], scenario: Any) -> str:
    pairs: dict[tuple[int, int], list[str]] = {}
    for name, pair in values.items():
        pairs.setdefault(pair, []).append(name)
    if len(pairs) == 1:
        old, new = next(iter(pairs))
        return f"{stat} {old} → {new}"
    return "; ".join(
        f"{_names_text(names, scenario)}: {old} → {new}" for (old, new), names in pairs.items()
    )


def _sweep_findings(data: ReportData) -> list[str]:
    out = []
    stat = data.plan.stat
    base = data.result
    for side, points in data.sweeps.items():
        members = [c.name for c in data.scenario.combatants if c.side == side]
        others = [c.name for c in data.scenario.combatants if c.side != side]
        for direction, word in ((1, "higher"), (-1, "lower")):
            candidates = [p for p in points if p.offset * direction > 0]
            if not candidates:
                out.append(
                    f"Side {side}'s {stat} cannot go {word} (already at the limit of its range)."
                )
                continue
            p = max(candidates, key=lambda q: abs(q.offset))
            assert p.result is not None
            clipped = any(new - old != p.offset for old, new in p.values.values())
            parts = []
            for who, label, metric, percent in (
                (members, "the side's summed first action", "first_action", True),
                (members, "its actions per round", "actions", False),
                (others, "the other sides' actions per round", "actions", False),
            ):
                a, sa = _side_sum(base, who, metric)
                b, sb = _side_sum(p.result, who, metric)
                half = Z95 * (sa + sb)  # conservative: holds for any correlation
                factor, sign = (100.0, "%") if percent else (1.0, "")
                if half == 0:  # the same in every round of both runs
                    if a == b and percent:
                        parts.append(f"{label} stays at exactly {factor * a:g}{sign}")
                    elif a != b:
                        parts.append(f"{label} {factor * a:g}{sign} → {factor * b:g}{sign}")
                    continue
                places = decimals(factor * half)
                span = f"{factor * a:.{places}f}{sign} → {factor * b:.{places}f}{sign}"
                if abs(b - a) <= half:
                    parts.append(f"{label} {span}, no detectable difference")
                else:
                    diff = format_difference(metric, b - a, half)
                    parts.append(f"{label} {span} ({diff})")
            note = CLIPPED if clipped else ""
            if abs(p.offset) < 2:
                note += f"; {2 * direction:+d} would clip to the same values"
            out.append(
                f"{stat.capitalize()} {p.offset:+d} for side {side} "
                f"({_values_text(stat, p.values, data.scenario)}{note}): " + "; ".join(parts) + "."
            )
    return out


# --- rendering ----------------------------------------------------------------------


@dataclass(frozen=True)
class Plot:
    name: str  # file name, e.g. first_action.png
    title: str
    caption: str
    png: bytes


def figures(data: ReportData) -> list[Plot]:
    """Every plot of the report, rendered to PNG."""
    from simkit.output import report_plots as plots  # matplotlib only when a report is drawn

    r = data.result
    names = list(r.scenario.names)
    sides = {c.name: c.side for c in r.scenario.combatants}
    colors = plots.palette(names)
    out = [
        Plot(
            "first_action.png",
            "Who acts first",
            "Share of rounds in which each combatant takes the round's first action; "
            "error bars are 95% confidence intervals.",
            plots.first_action(r.table, names, sides, colors),
        ),
        Plot(
            "acts_before.png",
            "Who acts before whom",
            "Each cell: share of rounds in which the row's first action comes strictly before "
            "the column's (a column that takes no action counts as later).",
            plots.acts_before(r.acts_before(), names, colors),
        ),
        Plot(
            "actions_distribution.png",
            "Actions per round",
            "Distribution of the number of own actions per round (defenses not counted), "
            "with 95% error bars.",
            plots.actions_distribution(r.table, names, colors),
        ),
    ]
    if "hasty_share" in r.metrics:
        out.append(
            Plot(
                "hasty_defenses.png",
                "Hasty defenses",
                "Hasty defenses per round, their share of all its defenses, and their mean "
                "difficulty scale (attack's die minus its die, R7); 95% error bars.",
                plots.hasty_defenses(r.table, names, sides, colors),
            )
        )
    if data.comparison is not None:
        out.append(
            Plot(
                "holding.png",
                "Effect of holding",
                'The scenario as written minus the same scenario with every hold = "never", '
                "on the same dice; error bars are paired 95% intervals. "
                "* marks the combatants that hold.",
                plots.holding_effect(
                    data.holding_effects(), names, sides, data.plan.holders, colors
                ),
            )
        )
    used: set[str] = set()
    for side, points in data.sweeps.items():
        slug = re.sub(r"[^a-z0-9]+", "_", side.lower()).strip("_") or "side"
        while slug in used:
            slug += "_"
        used.add(slug)
        rows = []
        for p in points:
            assert p.result is not None
            t = p.result.table
            t = t[t.metric.isin(["first_action", "actions"]) & (t.combatant != SCENARIO_ROW)]
            rows.append(t.assign(offset=p.offset))
        table = pd.concat(rows, ignore_index=True)
        swept = [c.name for c in r.scenario.combatants if c.side == side]
        out.append(
            Plot(
                f"sweep_{slug}.png",
                f"Sweep: {data.plan.stat} of side {side}",
                f"First action and actions per round when every member of side {side} has its "
                f"{data.plan.stat} changed by the offset (clipped to the allowed range); "
                "bands are 95% confidence intervals of each run. Solid lines: side "
                f"{side}; dashed: the others. Combatants with the same numbers (identical "
                "stats) lie on top of each other.",
                plots.sweep(table, names, swept, colors, side=side, field=data.plan.stat),
            )
        )
    return out


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _scenario_tables(s: Any) -> tuple[list[str], list[list[str]], list[list[str]]]:
    rules = [[k, _cell(v)] for k, v in s.rules.items()]
    keys = list(s.combatants[0].params)
    header = ["name", "side", "group", *keys]
    rows = [[c.name, c.side, c.group, *(_cell(c.params[k]) for k in keys)] for c in s.combatants]
    return header, rows, rules


def _metric_tables(r: Result) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) of every metric, each cell ``mean ± half-width``."""
    wide_mean, wide_se = r.wide("mean"), r.wide("se")
    metrics = list(wide_mean.columns)
    header = ["combatant", *(f"{m} ({_unit(m)})" for m in metrics)]
    rows = [
        [name, *(format_estimate(m, wide_mean.at[name, m], wide_se.at[name, m]) for m in metrics)]
        for name in wide_mean.index
    ]
    out = [("Per-combatant metrics", header, rows)]
    scen = r.table[r.table.combatant == SCENARIO_ROW]
    if not scen.empty:
        out.append(
            (
                "Scenario metrics",
                ["metric", "estimate"],
                [
                    [
                        f"{x.metric} ({_unit(x.metric)})",
                        format_estimate(x.metric, x.mean, x.se),
                    ]
                    for x in scen.itertuples(index=False)
                ],
            )
        )
    names = list(r.scenario.names)
    t = r.table.set_index(["combatant", "metric"])
    rows = []
    for a in names:
        row = [a]
        for b in names:
            key = (a, f"acts_before.{b}")
            row.append(
                "–" if a == b else format_estimate(key[1], t.at[key, "mean"], t.at[key, "se"])
            )
        rows.append(row)
    out.append(("P(row acts before column), % of rounds", ["acts before →", *names], rows))
    dist = _tidy_prefixed(r.table, "actions_dist.", "actions")
    ks = sorted({int(k) for k in dist["actions"]})
    rows = []
    for name in names:
        own = {int(x.actions): x for x in dist[dist.combatant == name].itertuples(index=False)}
        rows.append(
            [
                name,
                *(
                    format_estimate("actions_dist.", own[k].mean, own[k].se) if k in own else "–"
                    for k in ks
                ),
            ]
        )
    out.append(("P(actions = k), % of rounds", ["combatant", *(f"k = {k}" for k in ks)], rows))
    return out


def _method(data: ReportData) -> list[str]:
    p = data.plan
    s = data.scenario
    runs = sum(len(points) - 1 for points in data.sweeps.values())
    text = [
        f"Main run: {data.result.rounds:,} rounds of the scenario as written, "
        f"seed {data.result.seed}.",
    ]
    if data.comparison is not None:
        text.append(
            f'Holding: simkit.compare of the scenario against a copy with every hold = "never", '
            f"{p.rounds:,} rounds each on the same dice (common random numbers); the "
            "differences and their intervals are paired (batch means, Student t)."
        )
    else:
        text.append(p.holding_note)
    stat_note = getattr(systems.get(s.system), "sweep_note", "")
    text.append(
        f"Sweep: {runs} more runs of {p.rounds:,} rounds, each with the same seed, in which "
        f"every member of one side has its {p.stat} changed by −2 … +2, clipped to the allowed "
        "range (a change that clipping makes identical to a smaller one is not run again); "
        "the 0 point is the main run. The sweep findings compare side totals (sums over the "
        "side's members) with a conservative 95% bound: the sum of the standard errors, "
        "valid whatever the correlation between the estimates." + stat_note
    )
    text.append(
        "Every ± is the half-width of a 95% confidence interval (1.96 standard errors); a "
        "difference is reported only when its interval excludes 0, otherwise the report says "
        "“no detectable difference”. Standard errors come from regeneration cycles (README, "
        "Reading the metrics)."
    )
    return text


@dataclass(frozen=True)
class Report:
    """A rendered report: its findings and every file, by name, as bytes."""

    data: ReportData
    findings: list[str]
    files: dict[str, bytes] = field(repr=False)

    def write(self, out_dir: str | Path) -> Path:
        """Write every file into ``out_dir`` atomically; returns the path of report.html."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        write_files({out / name: content for name, content in self.files.items()})
        return out / "report.html"


def build_report(data: ReportData) -> Report:
    """Render findings, plots, HTML, Markdown and CSV (no simulation)."""
    found = findings(data)
    figs = figures(data)
    files: dict[str, bytes] = {}
    for name, table in csv_tables(data).items():
        files[name] = table.to_csv(index=False, float_format="%.10g").encode("utf-8")
    for f in figs:
        files[f.name] = f.png
    files["report.md"] = render_markdown(data, found, figs).encode("utf-8")
    files["report.html"] = render_html(data, found, figs).encode("utf-8")
    return Report(data, found, files)


def _title(data: ReportData) -> str:
    return f"simkit report: {data.scenario.name}"


def _intro(data: ReportData) -> str:
    from simkit import __version__

    s = data.scenario
    return (
        f"System {s.system}, {len(s.combatants)} combatants on {len(s.sides)} sides, "
        f"{data.result.rounds:,} rounds, seed {data.result.seed}, simkit {__version__}, "
        f"scenario file {Path(s.source).name}. Every ± is a 95% confidence-interval half-width."
    )


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = [
        "| " + " | ".join(_md_escape(h) for h in header) + " |",
        "|" + "---|" * len(header),
    ]
    lines += ["| " + " | ".join(_md_escape(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def render_markdown(data: ReportData, found: list[str], figs: list[Plot]) -> str:
    s = data.scenario
    header, rows, rules = _scenario_tables(s)
    parts = [f"# {_title(data)}", "", _intro(data), ""]
    if s.description:
        parts += [s.description, ""]
    parts += ["## Scenario", "", "Rules (defaults filled in):", ""]
    parts += [_md_table(["rule", "value"], rules) if rules else "No rules.", ""]
    parts += ["Combatants (every field, defaults filled in):", "", _md_table(header, rows), ""]
    parts += ["## Findings", ""] + [f"- {x}" for x in found] + [""]
    parts += ["## Plots", ""]
    for f in figs:
        parts += [f"### {f.title}", "", f"![{f.title}]({f.name})", "", f.caption, ""]
    parts += ["## Metrics", ""]
    for title, head, body in _metric_tables(data.result):
        parts += [f"### {title}", "", _md_table(head, body), ""]
    parts += ["## Method", ""] + [f"- {x}" for x in _method(data)] + [""]
    parts += [
        "Data: " + ", ".join(f"[{n}]({n})" for n in CSV_FILES) + " (tidy CSV tables).",
        "",
    ]
    return "\n".join(parts)


CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 0 auto;
       max-width: 1000px; padding: 1em 1.5em 3em; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; border-bottom: 2px solid #ddd; padding-bottom: .2em; }
h2 { font-size: 1.3em; margin-top: 1.8em; border-bottom: 1px solid #eee; }
h3 { font-size: 1.05em; margin-bottom: .3em; }
table { border-collapse: collapse; margin: .5em 0 1em; font-size: .85em; }
th, td { border: 1px solid #ddd; padding: .25em .55em; text-align: right; white-space: nowrap; }
th { background: #f4f4f4; }
td:first-child, th:first-child { text-align: left; }
.scroll { overflow-x: auto; }
figure { margin: 0 0 1.5em; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: .9em; color: #555; }
.findings li { margin-bottom: .35em; }
.meta { color: #555; }
"""


def _html_table(header: list[str], rows: list[list[str]]) -> str:
    e = html.escape
    head = "".join(f"<th>{e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<div class="scroll"><table><tr>{head}</tr>{body}</table></div>'


def render_html(data: ReportData, found: list[str], figs: list[Plot]) -> str:
    """One self-contained page: inline CSS, images as data: URIs, no external links."""
    e = html.escape
    s = data.scenario
    header, rows, rules = _scenario_tables(s)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(_title(data))}</title><style>{CSS}</style></head><body>",
        f"<h1>{e(_title(data))}</h1>",
        f'<p class="meta">{e(_intro(data))}</p>',
    ]
    if s.description:
        out.append(f"<p>{e(s.description)}</p>")
    out += ["<h2>Scenario</h2>", "<p>Rules (defaults filled in):</p>"]
    out.append(_html_table(["rule", "value"], rules) if rules else "<p>No rules.</p>")
    out += ["<p>Combatants (every field, defaults filled in):</p>", _html_table(header, rows)]
    out += ['<h2>Findings</h2><ul class="findings">']
    out += [f"<li>{e(x)}</li>" for x in found]
    out += ["</ul>", "<h2>Plots</h2>"]
    for f in figs:
        uri = "data:image/png;base64," + base64.b64encode(f.png).decode("ascii")
        out.append(
            f"<figure><h3>{e(f.title)}</h3>"
            f'<img alt="{e(f.title)}" src="{uri}">'
            f"<figcaption>{e(f.caption)}</figcaption></figure>"
        )
    out.append("<h2>Metrics</h2>")
    for title, head, body in _metric_tables(data.result):
        out += [f"<h3>{e(title)}</h3>", _html_table(head, body)]
    out += ["<h2>Method</h2><ul>"] + [f"<li>{e(x)}</li>" for x in _method(data)] + ["</ul>"]
    out.append(
        "<p>Data tables (CSV, beside this file): "
        + ", ".join(f"<code>{n}</code>" for n in CSV_FILES)
        + ".</p>"
    )
    out.append("</body></html>\n")
    return "\n".join(out)
