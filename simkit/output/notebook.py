"""Compact HTML of result objects for notebooks (``_repr_html_``): the key numbers per
side and per group, in words, not the dataclass.

Headers are registry labels with the unit beneath; numbers are right-aligned and
rounded to what their 95% interval supports (``format``); a ``count`` group is one row
("Wolf ×3", per member).  ``result.table``, ``.by("side")`` and ``.by("group")`` have
everything.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from simkit.metrics import Estimate
from simkit.output.numbers import format_difference, format_estimate, format_gain
from simkit.output.report_document.names import (
    group_label,
    is_percent,
    sweep_axis,
    title_of,
    unit_of,
)

STYLE = (
    "<style>.simkit-t{border-collapse:collapse;font-size:0.9em;margin:4px 0 8px}"
    ".simkit-t th,.simkit-t td{padding:2px 9px;border-bottom:1px solid #ddd}"
    ".simkit-t td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    ".simkit-t th{text-align:left;vertical-align:bottom}.simkit-t th.n{text-align:right}"
    ".simkit-t th small{display:block;font-weight:normal;color:#666}"
    ".simkit-c{font-size:0.85em;color:#555}</style>"
)
KEY = ("first_action", "actions", "attacks_received", "undefended", "attacked_before_acting")
SIDE_KEY = ("actions", "action_economy", "first_action", "attacks_made", "undefended", "hasty_only")


def table_html(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    numeric_from: int = 1,
    units: Sequence[str] | None = None,
) -> str:
    """A table: text columns before ``numeric_from``, numbers (right-aligned) after;
    ``units`` (optional) under the headers."""
    cells = []
    for j, h in enumerate(header):
        unit = f"<small>{html.escape(units[j])}</small>" if units and units[j] else ""
        cls = "n" if j >= numeric_from else ""
        cells.append(f'<th class="{cls}">{html.escape(h)}{unit}</th>')
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="{"n" if j >= numeric_from else ""}">{html.escape(str(c))}</td>'
            for j, c in enumerate(r)
        )
        + "</tr>"
        for r in rows
    )
    return f'<table class="simkit-t"><tr>{"".join(cells)}</tr>{body}</table>'


def _cell(metric: str, e: Estimate | None) -> str:
    return "" if e is None else format_estimate(metric, e.mean, e.se, unit=False)


def _heads(metrics: Sequence[str]) -> tuple[list[str], list[str]]:
    return [title_of(m) for m in metrics], [unit_of(m) for m in metrics]


def result_html(result: Any) -> str:
    from simkit.output.report_document.readings import Numbers

    s = result.scenario
    numbers = Numbers(result)
    title = (
        f"<b>{html.escape(s.name)}</b> — {html.escape(s.system)}, {len(s.combatants)} "
        f"combatants, {result.rounds:,} rounds, seed {html.escape(str(result.seed))}"
    )
    side_metrics = [m for m in SIDE_KEY if numbers.has(m)]
    heads, units = _heads(side_metrics)
    sides = table_html(
        ["side", *heads],
        [[x, *(_cell(m, numbers.side(x, m)) for m in side_metrics)] for x in numbers.sides],
        1,
        ["", *units],
    )
    metrics = [m for m in KEY if numbers.has(m)]
    heads, units = _heads(metrics)
    rows = []
    for g in numbers.groups:
        label = group_label(s, g) + (" (each)" if len(numbers.members[g]) > 1 else "")
        rows.append([label, *(_cell(m, numbers.each(g, m)) for m in metrics)])
    groups = table_html(["combatant", *heads], rows, 1, ["", *units])
    return (
        f'{STYLE}<div>{title}{sides}{groups}<div class="simkit-c">± = 95% interval '
        "half-width. result.table has every metric; result.by('side') and "
        "result.by('group') the aggregates.</div></div>"
    )


def sweep_html(sweep: Any) -> str:
    sides = list(sweep.scenario.sides)
    metrics = [("action_economy", x) for x in sides[:3]] + [("first_action", x) for x in sides[:3]]
    labels = [sweep_axis(sweep, a)[1] for a in range(len(sweep.axes))]
    rows = []
    for k, res in enumerate(sweep.results):
        by = {(w, m): Estimate(*x) for w, m, *x in res.level_rows("side")}
        idx, rest = [], k
        for axis in reversed(sweep.axes):
            idx.append(rest % len(axis.values))
            rest //= len(axis.values)
        idx.reverse()
        point = [labels[a][i].replace("\n", " ") for a, i in enumerate(idx)]
        rows.append([*point, *(_cell(m, by.get((x, m))) for m, x in metrics)])
    header = [*sweep.fields, *(f"{title_of(m)}: {x}" for m, x in metrics)]
    units = ["" for _ in sweep.fields] + [unit_of(m) for m, _ in metrics]
    name = html.escape(sweep.scenario.name)
    size = f"{len(sweep.results)} points × {sweep.rounds:,} rounds, the same dice at every point"
    table = table_html(header, rows, len(sweep.fields), units)
    return (
        f'{STYLE}<div><b>Sweep of {name}</b> ({size}){table}<div class="simkit-c">Offsets '
        "are shown as the values they gave. sweep.table has every metric per combatant; "
        "sweep.level_table('side') per side.</div></div>"
    )


COMPARE_KEY = (
    "actions",
    "first_action",
    "attacked_before_acting",
    "undefended",
    "hasty_only",
    "action_economy",
)


def comparison_html(comparison: Any) -> str:
    """Per side and per group, the paired differences B − A of the key metrics; "·"
    where the paired 95% interval covers 0 (no detectable difference)."""
    parts = [
        f"{STYLE}<div><b>A:</b> {html.escape(comparison.label_a)}<br>"
        f"<b>B:</b> {html.escape(comparison.label_b)}"
    ]
    for level in ("side", "group"):
        t = comparison.level_table(level)
        present = [m for m in COMPARE_KEY if (t.metric == m).any()]
        if not present:
            continue
        cells: dict[tuple[str, str], str] = {}
        for r in t[t.metric.isin(present)].itertuples(index=False):
            who = getattr(r, level)
            sig = r.ci_low > 0 or r.ci_high < 0
            half = comparison.t_paired * r.se_paired
            diff = format_difference(r.metric, r.difference, half).replace(" pp", "")
            cells[(who, r.metric)] = diff if sig else "·"
        names = list(dict.fromkeys(getattr(r, level) for r in t.itertuples(index=False)))
        rows = [
            [
                group_label(comparison.a.scenario, n) if level == "group" else n,
                *(cells.get((n, m), "") for m in present),
            ]
            for n in names
        ]
        units = ["", *("pp" if is_percent(m) else unit_of(m) for m in present)]
        parts.append(table_html([level, *(title_of(m) for m in present)], rows, 1, units))
    parts.append(
        '<div class="simkit-c">B − A, paired on the same dice, ± its 95% interval; · no '
        "detectable difference. comparison.table and .level_table(level) have every metric."
        "</div></div>"
    )
    return "".join(parts)


def tuning_html(tuning: Any) -> str:
    rows = []
    unit = "actions" if tuning.target.denominator else tuning.target.numerator.metric
    for p in tuning.points:
        rows.append(
            [
                *(str(v) for v in p.values),
                p.actual,
                format_estimate(unit, p.estimate.mean, p.estimate.se),
                p.decision if tuning.target.band is not None else ("✓" if p.met else ""),
            ]
        )
    decided = "decision" if tuning.target.band is not None else "meets it"
    header = [*tuning.fields, "values as played", tuning.target.quantity, decided]
    text = html.escape(tuning.target.shown)
    table = table_html(header, rows, len(tuning.fields) + 1)
    return f"{STYLE}<div><b>Target:</b> {text}{table}<p>{html.escape(tuning.answer)}</p></div>"


def sensitivity_html(s: Any) -> str:
    """The answer, then per knob (largest first) each change and its paired difference
    in every measure; "·" where the paired 95% interval covers 0."""
    rows = []
    last = None
    cells: dict[tuple[str, str], dict[str, str]] = {}
    heads: dict[tuple[str, str], Any] = {}
    for r in s.table.itertuples(index=False):
        key = (r.knob, r.changed_to)
        heads.setdefault(key, r)
        sig = r.ci_low > 0 or r.ci_high < 0
        half = s.t_paired * r.se_paired
        text = format_difference("action_economy", r.difference, half)
        cells.setdefault(key, {})[r.measure] = text if sig else "·"
    for key, r in heads.items():
        first = r.knob != last
        last = r.knob
        rows.append(
            [
                str(r.rank) if first else "",
                f"{r.who}.{r.field}" if first else "",
                f"{r.as_written} → {r.changed_to}",
                *(cells[key].get(m.label, "") for m in s.measures),
            ]
        )
    header = ["rank", "knob", "change", *(m.column for m in s.measures)]
    skipped = "".join(f"<br>skipped: {html.escape(x)}" for x in s.skipped)
    return (
        f"{STYLE}<div><p>{html.escape(s.answer)}</p>{table_html(header, rows, 3)}"
        f'<div class="simkit-c">{html.escape(s.note)}; · no detectable difference.'
        f"{skipped}</div></div>"
    )


def policies_html(search: Any) -> str:
    """``PolicySearch._repr_html_``: the objectives, the ranked table and the answer."""
    rows = []
    for ch in search.ranked:
        value, g = ch.best
        c = ch.coordinate
        gain = "0" if value == ch.current else format_gain(g.difference, g.ci_high - g.difference)
        rows.append([c.group, c.field, str(c.written), str(value), gain, ch.verdict])
    header = ["combatant", "field", "as written", "best", "gain for its side", "verdict"]
    words = "".join(
        f"<li><b>{html.escape(side)}</b>: {html.escape(o.words)}</li>"
        for side, o in search.objectives.items()
    )
    table = table_html(header, rows, 4)
    extra = ""
    if search.equilibrium is not None:
        from simkit.output.terminal import equilibrium_lines

        extra = "<pre>" + html.escape("\n".join(equilibrium_lines(search, search.equilibrium)))
        extra += "</pre>"
    return (
        f"{STYLE}<div><b>Objectives</b><ul>{words}</ul>{table}"
        f"<p>{html.escape(search.answer)}</p>{extra}</div>"
    )
