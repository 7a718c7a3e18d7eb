"""Text tables of results for the terminal.

Tables fit a given width (100 columns by default): a wide table is cut into blocks of
columns, each block repeating the name column, never wrapping mid-number.  Numbers are
rounded to what their 95% interval supports (``numbers.format_estimate``); the unit goes
in the column header.  The other formats (``csv``, ``md``, ``json``) are drawn from
tidy rows by :mod:`simkit.output.render`, which also chooses the table of a command.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from simkit.metrics import Z95, UnknownMetric, metric
from simkit.output.numbers import (
    format_difference,
    format_estimate,
    format_gain,
    format_mean,
    format_ratio,
)

WIDTH = 100
GAP = "  "

Row = tuple[str, str, float, float, float, float]


def header_of(name: str) -> str:
    """A column header in words, with its unit: ``First action %``."""
    try:
        m = metric(name)
    except UnknownMetric:
        return name
    base, _, member = name.partition(".")
    label = m.label.replace(" k", f" {member}") if member and m.family == "k" else m.label
    if member and m.family == "combatant":
        label = f"{m.label} {member}"
    return f"{label} %" if m.is_probability else label


def cell(name: str, mean: float, se: float) -> str:
    """A number without its unit (the header has it): ``41.2 ± 0.1``."""
    return format_estimate(name, mean, se, unit=False)


def _widths(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[int]:
    return [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]


def _lines(
    header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]
) -> list[str]:
    widths = _widths(header, rows)

    def fmt(cells: Sequence[str]) -> str:
        out = [
            str(c).rjust(w) if r else str(c).ljust(w)
            for c, w, r in zip(cells, widths, right, strict=True)
        ]
        return GAP.join(out).rstrip()

    return [fmt(header), GAP.join("-" * w for w in widths).rstrip(), *(fmt(r) for r in rows)]


def grid(
    keys: Sequence[str],
    key_rows: Sequence[Sequence[str]],
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    width: int = WIDTH,
) -> list[str]:
    """Rows of ``keys`` columns (left-aligned) and value columns (right-aligned), cut
    into blocks of columns that each fit ``width``."""
    key_w = _widths(keys, key_rows) if key_rows else [len(k) for k in keys]
    used = sum(key_w) + len(GAP) * len(keys)
    val_w = _widths(header, rows) if rows else [len(h) for h in header]
    blocks: list[list[int]] = [[]]
    room = used
    for j, w in enumerate(val_w):
        if blocks[-1] and room + w > width:
            blocks.append([])
            room = used
        blocks[-1].append(j)
        room += w + len(GAP)
    out: list[str] = []
    for b, cols in enumerate(blocks):
        if b:
            out.append("")
        h = [*keys, *(header[j] for j in cols)]
        body = [[*kr, *(r[j] for j in cols)] for kr, r in zip(key_rows, rows, strict=True)]
        out += _lines(h, body, [False] * len(keys) + [True] * len(cols))
    return out


def pick_metrics(available: Sequence[str], wanted: Sequence[str] | None) -> list[str]:
    """``wanted`` checked against ``available`` (KeyError naming the unknown ones)."""
    if not wanted:
        return list(available)
    unknown = [m for m in wanted if m not in available]
    if unknown:
        raise KeyError(f"no metric {unknown[0]!r} here; available: {', '.join(available)}")
    return list(wanted)


def level_table(
    rows: Sequence[Row],
    level: str,
    names: Sequence[str],
    sides: dict[str, str] | None = None,
    metrics: Sequence[str] | None = None,
    width: int = WIDTH,
) -> list[str]:
    """One row per combatant, group or side; one column per metric."""
    per: dict[str, dict[str, tuple[float, float]]] = {}
    for who, m, mean, se, _, _ in rows:
        per.setdefault(who, {})[m] = (mean, se)
    available = list(dict.fromkeys(m for cells in per.values() for m in cells))
    chosen = pick_metrics(available, metrics)
    keys = [level] + (["side"] if sides else [])
    key_rows = [[n] + ([sides[n]] if sides else []) for n in names if n in per]
    body = [[cell(m, *per[n][m]) if m in per[n] else "" for m in chosen] for n in names if n in per]
    return grid(keys, key_rows, [header_of(m) for m in chosen], body, width)


def result_table(
    result: Any,
    *,
    by: str = "combatant",
    metrics: Sequence[str] | None = None,
    width: int = WIDTH,
) -> str:
    """The table ``simkit run`` prints: the metrics per combatant, group or side, the
    scenario metrics and a last line on the run."""
    rows = result.level_rows(by)
    if by == "combatant" and metrics and any("." in m for m in metrics):
        rows = [r for r in result.rows if r[0]]  # a family's members: acts_before.X ...
    if by == "combatant":
        names = list(result.scenario.names)
        sides = {c.name: c.side for c in result.scenario.combatants}
    else:
        names = result.layout.level_names(by)
        sides = None
    text = level_table(rows, by, names, sides, metrics, width)
    text.append("")
    for who, m, mean, se, _, _ in result.rows:
        if not who:
            text.append(f"{metric(m).label}: {format_estimate(m, mean, se)}")
    workers = result.workers
    text.append(
        f"{result.rounds:,} rounds, seed {result.seed}, {result.elapsed_s:.2f} s "
        f"({result.rounds_per_s:,.0f} rounds/s, {workers} worker{'s' if workers != 1 else ''}); "
        "± is the 95% interval half-width"
    )
    return "\n".join(fit(text, width))


def fit(lines: list[str], width: int = WIDTH) -> list[str]:
    """Wrap prose lines (never table rows, which fit already) at ``width``."""
    import textwrap

    out = []
    for line in lines:
        if len(line) <= width or line.startswith(("-", " ")) or "  " in line:
            out.append(line)
        else:
            out += textwrap.wrap(line, width, subsequent_indent="  ", break_on_hyphens=False)
    return out


def markdown(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table (``|`` in a cell escaped)."""

    def esc(x: Any) -> str:
        return str(x).replace("|", "\\|")

    lines = ["| " + " | ".join(esc(c) for c in columns) + " |"]
    lines.append("|" + "|".join("---" for _ in columns) + "|")
    lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def comparison_table(
    comparison: Any,
    all_metrics: bool = False,
    *,
    metrics: Sequence[str] | None = None,
    width: int = WIDTH,
    by: str = "combatant",
) -> str:
    """A comparison as text: by default only the rows whose paired 95% interval excludes
    0 (``all_metrics``: every row), then how much narrower pairing made the intervals."""
    t = comparison.level_table(by) if by != "combatant" else comparison.table
    t = t[~t.metric.str.contains(".", regex=False)] if not (all_metrics or metrics) else t
    if metrics:
        t = t[t.metric.isin(list(metrics))]
    shown = t if all_metrics else t[(t.ci_low > 0) | (t.ci_high < 0)]
    who = t.columns[0]
    key_rows, body = [], []
    for r in shown.itertuples(index=False):
        half = comparison.t_paired * r.se_paired
        name = getattr(r, who) or "(scenario)"
        key_rows.append([name, header_of(r.metric)])
        body.append(
            [
                format_mean(r.metric, r.mean_a, r.se_unpaired),
                format_mean(r.metric, r.mean_b, r.se_unpaired),
                format_difference(r.metric, r.difference, half),
                format_ratio(r.narrower),
            ]
        )
    lines = [f"A: {comparison.label_a}", f"B: {comparison.label_b}"]
    if body:
        lines += grid([who, "metric"], key_rows, ["A", "B", "B − A", "narrower"], body, width)
    else:
        lines.append("No metric differs significantly (every paired 95% interval covers 0).")
    hidden = len(t) - len(shown)
    if hidden and not all_metrics:
        lines.append(f"{hidden} rows with no significant difference not shown (--all shows them).")
    lines.append(
        f"{comparison.rounds:,} rounds each, seed {comparison.seed}, {comparison.batches} batches "
        f"of up to {comparison.batch_rounds:,} rounds; ± is the paired 95% half-width "
        f"(t, {comparison.batches - 1} d.f.); probabilities in %, differences in percentage "
        "points (pp)"
    )
    lines.append(comparison.narrowing_line())
    return "\n".join(fit(lines, width))


def sweep_table(
    sweep: Any,
    metrics: Sequence[str] | None = None,
    *,
    by: str = "combatant",
    width: int = WIDTH,
) -> str:
    """The table ``simkit sweep`` prints: one row per (grid point, combatant / group /
    side); ``metrics`` (default first_action, actions, attacked_before_acting) as
    ``mean ± h``."""
    from simkit.output.result_files import SWEEP_PLOTS
    from simkit.scenario.specs import cell as cell_text

    chosen = list(metrics) if metrics else list(SWEEP_PLOTS)
    present = [m for m in chosen if (sweep.level_table(by).metric == m).any()]
    missing = [m for m in chosen if m not in present]
    if metrics and missing:
        raise KeyError(f"no metric {missing[0]!r} in this sweep")
    relative = any(a.relative for a in sweep.axes)
    keys = [*sweep.fields, *(["values"] if relative else []), by]
    key_rows: list[list[str]] = []
    body: list[list[str]] = []
    for k, (point, res) in enumerate(zip(sweep.points, sweep.results, strict=True)):
        rows = {(r[0], r[1]): r for r in res.level_rows(by)}
        names = res.scenario.names if by == "combatant" else res.layout.level_names(by)
        for name in names:
            key_rows.append(
                [cell_text(v) for v in point.values()]
                + ([sweep.actual_values(k)] if relative else [])
                + [name]
            )
            body.append(
                [
                    cell(m, rows[(name, m)][2], rows[(name, m)][3]) if (name, m) in rows else ""
                    for m in present
                ]
            )
    lines = grid(keys, key_rows, [header_of(m) for m in present], body, width)
    lines.append(
        f"{len(sweep.results)} points x {sweep.rounds:,} rounds, seed {sweep.seed} "
        f"(the same dice at every point), {sweep.elapsed_s:.2f} s; ± is the 95% interval "
        "half-width"
    )
    return "\n".join(fit(lines, width))


def tuning_table(tuning: Any, *, width: int = WIDTH) -> str:
    """The table ``simkit tune`` prints: the target quantity at every grid point, whether
    it is met, then the answer in words."""
    from simkit.scenario.specs import cell as cell_text

    target = tuning.target
    keys = [*tuning.fields] + (["values"] if any(p.actual for p in tuning.points) else [])
    key_rows = [
        [cell_text(v) for v in p.values] + ([p.actual] if len(keys) > len(tuning.fields) else [])
        for p in tuning.points
    ]
    unit = target.numerator.metric if not target.denominator else "actions"
    body = [
        [
            format_estimate(unit, p.estimate.mean, p.estimate.se),
            "met" if p.met else "",
            "clearly" if p.clearly and target.comparator != "=" else "",
        ]
        for p in tuning.points
    ]
    lines = [f"target: {target.text}"]
    lines += grid(keys, key_rows, [target.quantity, "met", ""], body, width)
    lines += ["", tuning.answer]
    lines.append(
        f"{len(tuning.points)} points x {tuning.sweep.rounds:,} rounds, seed {tuning.sweep.seed} "
        "(the same dice at every point); ± is the 95% interval half-width"
    )
    return "\n".join(fit(lines, width))


def side_by_side_table(side: Any, rows: Any, *, by: str = "combatant", width: int = WIDTH) -> str:
    """``simkit compare A B C ...``: one row per (who, metric), for each scenario its
    mean ± 95% half-width and, after A, its difference from A (paired, or marked
    unpaired); then the dominance of each scenario's fastest combatant."""
    letters = [_letter(k) for k in range(len(side.labels))]
    lines = []
    for k, (label, result) in enumerate(zip(side.labels, side.results, strict=True)):
        how = ""
        if k:
            how = (
                ", paired with A"
                if side.paired[k]
                else ", unpaired ("
                + (
                    "another system"
                    if result.scenario.system != side.results[0].scenario.system
                    else "other combatants"
                )
                + "): independent intervals"
            )
        system = result.scenario.system
        named = label if label.endswith(f"({system})") else f"{label} ({system})"
        lines.append(f"{letters[k]}: {named}{how}")
    header: list[str] = []
    for k in range(len(side.labels)):
        header.append(letters[k])
        if k:
            header.append(f"{letters[k]} − A" + ("" if side.paired[k] else " unpaired"))
    cells: dict[tuple[str, str], list[str]] = {}
    for r in rows.itertuples(index=False):
        who = getattr(r, by) or "(scenario)"
        row = cells.setdefault((who, r.metric), [""] * len(header))
        k = side.labels.index(r.scenario)
        row[2 * k - 1 if k else 0] = cell(r.metric, r.mean, r.se)
        if k:
            t = side.t_paired if side.paired[k] else Z95
            row[2 * k] = format_difference(r.metric, r.difference, t * r.se_difference)
    key_rows = [[who, header_of(m)] for who, m in cells]
    if cells:
        lines += grid([by, "metric"], key_rows, header, list(cells.values()), width)
    else:
        lines.append("No metric that every scenario has (--all shows every metric).")
    lines.append("")
    lines += dominance_table(side.dominance, width=width, letters=letters).split("\n")
    lines.append(
        f"{side.rounds:,} rounds each, seed {side.seed}; ± is the 95% half-width: of each "
        f"mean; of a paired difference from A ({side.batches} batches of up to "
        f"{side.batch_rounds:,} rounds, t); of an unpaired one (independent runs, z); "
        "probabilities in %, differences in percentage points (pp)"
    )
    return "\n".join(fit(lines, width))


def _letter(k: int) -> str:
    return chr(ord("A") + k) if k < 26 else f"#{k + 1}"


def dominance_table(
    dominances: Sequence[Any], *, width: int = WIDTH, letters: Sequence[str] | None = None
) -> str:
    """How often the fastest combatant (the highest main stat) acts before each other
    one, for each of ``dominances`` (``analysis.compare.Dominance``)."""
    lines = ["Dominance: how often the fastest combatant acts before each other one"]
    keys = (["scenario"] if letters else []) + ["fastest", "other"]
    key_rows, body = [], []
    for k, d in enumerate(dominances):
        lines.append((f"{letters[k]}: " if letters else f"{d.label} ({d.system}): ") + d.heading())
        for f, other, other_stat, mean, se, _, _ in d.rows:
            key_rows.append(
                ([letters[k]] if letters else []) + [f, f"{other} ({d.stat_field} {other_stat})"]
            )
            body.append([format_estimate("acts_before", mean, se, unit=False)])
    if body:
        lines += grid(keys, key_rows, ["acts before %"], body, width)
    else:
        lines.append("(one combatant only: nobody to act before)")
    if not letters:
        d = dominances[0]
        lines.append(
            f"{d.rounds:,} rounds, seed {d.seed}; ± is the 95% interval half-width; acts "
            "before: its first action of the round comes strictly before the other's (the "
            "other taking no action counts as later)"
        )
    return "\n".join(fit(lines, width))


def _gain_text(g: Any) -> str:
    """A paired gain and its 95% half-width (``+0.123 ± 0.004``)."""
    return format_gain(g.difference, g.ci_high - g.difference)


def _value_text(value: Any) -> str:
    return str(value)


def policies_table(search: Any, *, width: int = WIDTH) -> str:
    """``simkit policies``: per combatant and policy field the file's value, the best one
    for its side's objective, the gain with its paired interval and the verdict, ranked
    by gain; the objectives in words; then the equilibrium, if searched."""
    s = search.scenario
    lines = [
        f"policies of {s.name!r} ({s.system}): every value of every policy field, the "
        "others as written"
    ]
    for side, objective in search.objectives.items():
        lines.append(f"objective of {side}: {objective.words}")
        lines.append(f"(as a formula: {objective.text})")
    lines.append("")
    keys = ["combatant", "field"]
    key_rows, body = [], []
    for ch in search.ranked:
        value, g = ch.best
        c = ch.coordinate
        key_rows.append([c.group, c.field])
        gain = "0" if ch.verdict.startswith("the file") else _gain_text(g)
        body.append([_value_text(c.written), _value_text(value), gain, ch.verdict])
    header = ["as written", "best", "gain for its side", "verdict"]
    lines += grid(keys, key_rows, header, body, width)
    lines += ["", search.answer]
    e = search.equilibrium
    if e is not None:
        lines += ["", *equilibrium_lines(search, e)]
    lines.append(
        f"{search.variants} variants x {search.rounds:,} rounds, seed {search.seed} (the same "
        f"dice in every variant); gains paired over {search.batches} batches, ± is the 95% "
        "interval half-width"
    )
    return "\n".join(fit(lines, width))


def equilibrium_lines(search: Any, e: Any) -> list[str]:
    """The equilibrium search in words and a table of the sides as written and under it."""
    status = {
        "equilibrium": f"equilibrium of best responses reached after {e.turns} turns",
        "cycle": f"the best responses cycle ({len(e.cycle)} profiles) after {e.turns} turns",
        "no convergence": f"no equilibrium within {e.turns} turns",
    }[e.status]
    out = [f"best responses: {status}"]
    if e.screen_rounds:
        out.append(
            f"(turns screened at {e.screen_rounds:,} rounds a variant, then taken again at "
            f"{search.rounds:,} from where screening stopped)"
        )
    for step in e.steps:
        where = " (screening)" if step.rounds and step.rounds < search.rounds else ""
        out.append(
            f"- turn {step.turn + 1}, {step.side}: {step.group}.{step.field} {step.old} -> "
            f"{step.new} ({_gain_text(step.gain)}){where}"
        )
    if e.status == "cycle":
        for k, member in enumerate(e.cycle):
            moved = [f"{g}.{f} = {v}" for (g, f), v in member.items()]
            out.append(f"- cycle member {k + 1}: " + ", ".join(moved))
    written = search_written(search)
    changed = [f"{g}.{f} = {v}" for (g, f), v in e.profile.items() if written[(g, f)] != v]
    if e.status != "equilibrium":  # an equilibrium's policies are in its findings
        out.append("policies at the end: " + (", ".join(changed) if changed else "as written"))
    for group, name, value in e.dominant:
        out.append(f"dominant: {group}.{name} = {value} (best against every profile met)")
    out += e.findings
    rows = []
    for v in e.sides:
        rows.append(
            [
                f"{v.objective.mean_a:.3f}",
                f"{v.objective.mean_b:.3f}",
                _gain_text(v.objective),
                f"{v.action_economy.mean_a:.3f}",
                f"{v.action_economy.mean_b:.3f}",
            ]
        )
    out.append("")
    out += grid(
        ["side"],
        [[v.side] for v in e.sides],
        ["objective", "at the end", "change", "action economy", "at the end"],
        rows,
    )
    return out


def search_written(search: Any) -> dict[tuple[str, str], Any]:
    return {ch.coordinate.key: ch.coordinate.written for ch in search.choices}
