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


def header_of(name: str, level: str = "combatant") -> str:
    """A column header in words, with its unit: ``First action %``; per group or side
    with how the members make it: ``First action % (any member)``, ``Actions (sum)``."""
    try:
        m = metric(name)
    except UnknownMetric:
        return name
    base, _, member = name.partition(".")
    label = m.label.replace(" k", f" {member}") if member and m.family == "k" else m.label
    if member and m.family == "combatant":
        label = f"{m.label} {member}"
    label = f"{label} %" if m.is_probability else label
    if level in ("group", "side") and m.scope != "scenario":
        from simkit.output.report_document.names import aggregation

        how = aggregation(name)
        label += f" ({how})" if how else ""
    return label


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
    return grid(keys, key_rows, [header_of(m, level) for m in chosen], body, width)


def result_table(
    result: Any,
    *,
    by: str = "combatant",
    metrics: Sequence[str] | None = None,
    width: int = WIDTH,
    verdict: bool = True,
) -> str:
    """The table ``simkit run`` prints: the metrics per combatant, group or side, the
    scenario metrics and a line on the run; then, with two or more sides and no
    ``metrics`` chosen (and ``verdict``), the side table and the verdict sentences of a
    report (:func:`verdict_lines`)."""
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
    if getattr(result, "fights", None) is not None:
        text.append(result.fights.rounds_note)
    text.append(
        f"{result.rounds:,} rounds, seed {result.seed}, {result.elapsed_s:.2f} s "
        f"({result.rounds_per_s:,.0f} rounds/s, {workers} worker{'s' if workers != 1 else ''}); "
        "± is the 95% interval half-width"
    )
    text = fit(text, width)
    if verdict and not metrics and len(result.scenario.sides) >= 2:
        text += ["", *verdict_lines(result, width, sides_table=by != "side")]
    return "\n".join(text)


# The side table of ``simkit run``: the verdict's quantities (the report's side table has
# a few more columns; the words and numbers are the same).
RUN_SIDE_METRICS = ("actions", "action_economy", "first_action", "undefended", "hasty_only")


def verdict_lines(result: Any, width: int = WIDTH, *, sides_table: bool = True) -> list[str]:
    """The sides of a run (actions, action economy, first action, undefended, hasty
    only: the report's side table) and the report's verdict sentences, wrapped at
    ``width``; nothing for a run of one side."""
    from simkit.output.report_document.findings import verdict
    from simkit.output.report_document.readings import Numbers
    from simkit.output.report_document.tables import side_table

    numbers = Numbers(result)
    if len(numbers.sides) < 2:
        return []
    out: list[str] = []
    if sides_table:
        table = side_table(numbers, RUN_SIDE_METRICS, columns=True)
        out.append("Sides:")
        keys = ["metric", "unit"]
        key_rows = [row[:2] for row in table.rows]
        out += grid(keys, key_rows, table.header[2:], [row[2:] for row in table.rows], width)
        out += wrap(table.note, width)
        out.append("")
    out.append("Verdict:")
    for sentence in verdict(numbers):
        out += wrap(sentence, width, bullet="- ")
    return out


def wrap(text: str, width: int = WIDTH, bullet: str = "") -> list[str]:
    """A sentence (or paragraph) wrapped at ``width``: after a ``bullet`` (``"- "``), the
    further lines indented by as much as the bullet, else by two spaces."""
    import textwrap

    indent = " " * len(bullet) if bullet else "  "
    return textwrap.wrap(
        text,
        max(20, width),
        initial_indent=bullet,
        subsequent_indent=indent,
        break_on_hyphens=False,
        break_long_words=False,
    ) or [bullet.rstrip()]


def round_table(result: Any, *, metrics: Sequence[str] | None = None, width: int = WIDTH) -> str:
    """``simkit run --by round``: a column per round index of a fight (R8a) and one for
    the fight's totals; a row per side and metric (with two or more sides: the side
    table's metrics, ``RUN_SIDE_METRICS``), per count group of two or more and metric
    (the same metrics), then per combatant and metric (every metric).  With ``metrics``
    every level shows those of them it has."""
    sides = result.layout.level_names("side")
    groups = list(result.layout.groups)
    levels = [
        ("side", "Sides", len(sides) >= 2, RUN_SIDE_METRICS),
        ("group", "Count groups", len(groups) > len(set(groups)), RUN_SIDE_METRICS),
        ("combatant", "Combatants", True, None),
    ]
    blocks: list[tuple[str, list[str]]] = []
    shown: set[str] = set()
    for level, title, wanted, default in levels:
        if not (wanted or metrics):
            continue
        rows = result.round_rows(level)
        if level == "group":  # a group of one combatant is its combatant's rows
            rows = [r for r in rows if groups.count(r[1]) > 1]
        available = list(dict.fromkeys(r[2] for r in rows))
        chosen = [m for m in (metrics or default or available) if m in available]
        if chosen:
            shown.update(chosen)
            blocks.append((title, _round_grid(rows, level, chosen, width)))
    missing = [m for m in metrics or () if m not in shown]
    if missing:
        raise KeyError(f"no metric {missing[0]!r} per round here")
    text: list[str] = []
    for title, lines in blocks:
        text += (["", f"{title}:"] if text else [f"{title}:"]) if len(blocks) > 1 else []
        text += lines
    text += ["", result.fights.rounds_note]
    text.append(
        "round k: the metric in the k-th round of a fight; per fight: summed over the fight's "
        "rounds (a probability becomes the expected number of such rounds); a side's or "
        "group's counts are its members' summed, its probabilities any member's; ± is the "
        "95% interval half-width, fights being the independent units"
    )
    return "\n".join(fit(text, width))


def _round_grid(
    rows: Sequence[Sequence[Any]], level: str, chosen: Sequence[str], width: int
) -> list[str]:
    """Round rows ``(round, who, metric, mean, se, ...)`` of ``chosen`` metrics: a row per
    (who, metric), metric by metric, a column per round index and one per fight."""
    rounds = list(dict.fromkeys(r[0] for r in rows))
    per: dict[tuple[str, str], dict[str, tuple[float, float]]] = {}
    for rnd, who, m, mean, se, *_ in rows:
        if m in chosen:
            per.setdefault((who, m), {})[rnd] = (mean, se)
    keys = sorted(per, key=lambda k: chosen.index(k[1]))
    header = [f"round {r}" if r.isdigit() else "per fight" for r in rounds]

    def shown(m: str, rnd: str, mean: float, se: float) -> str:
        if rnd.isdigit():
            return format_estimate(m, mean, se)
        return format_estimate(m if metric(m).kind == "ratio" else "actions", mean, se)

    body = [[shown(m, r, *per[(who, m)][r]) for r in rounds] for who, m in keys]
    key_rows = [[who or "(scenario)", header_of(m).removesuffix(" %")] for who, m in keys]
    return grid([level, "metric"], key_rows, header, body, width)


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
    """A comparison as text: by default the side rows of a run's side table (with two or
    more sides, per combatant), then only the rows whose paired 95% interval excludes 0
    (``all_metrics``: every row), then how much narrower pairing made the intervals."""
    t = comparison.level_table(by) if by != "combatant" else comparison.table
    t = t[~t.metric.str.contains(".", regex=False)] if not (all_metrics or metrics) else t
    if metrics:
        t = t[t.metric.isin(list(metrics))]
    shown = t if all_metrics else t[(t.ci_low > 0) | (t.ci_high < 0)]
    who = t.columns[0]
    lines = [f"A: {comparison.label_a}", f"B: {comparison.label_b}"]
    sides = None
    if by == "combatant" and not metrics and not all_metrics:
        sides = _comparison_sides(comparison)
    if sides is not None and len(sides):
        lines.append("Sides (every row of the side table):")
        side_keys, side_body = _comparison_cells(comparison, sides, "side")
        lines += grid(
            ["side", "metric"], side_keys, ["A", "B", "B − A", "narrower"], side_body, width
        )
        lines += ["", "Combatants (the rows that differ significantly):"]
    key_rows, body = _comparison_cells(comparison, shown, who)
    if body:
        lines += grid([who, "metric"], key_rows, ["A", "B", "B − A", "narrower"], body, width)
    else:
        lines.append("No metric differs significantly (every paired 95% interval covers 0).")
    hidden = len(t) - len(shown)
    if hidden and not all_metrics:
        lines.append(f"{hidden} rows with no significant difference not shown (--all shows them).")
    lines += guard_lines(comparison)
    lines.append(
        f"{comparison.rounds:,} rounds each, seed {comparison.seed}, {comparison.batches} batches "
        f"of up to {comparison.batch_rounds:,} rounds; ± is the paired 95% half-width "
        f"(t, {comparison.batches - 1} d.f.); probabilities in %, differences in percentage "
        "points (pp)"
    )
    lines.append(comparison.narrowing_line())
    return "\n".join(fit(lines, width))


GUARD_WORDS = {
    "undefended": "left unanswered",
    "hasty_only": "answered only hastily",
    "actions": "actions",
    "guard_defenses": "guard defenses",
}


def _guarding(protects: dict[str, str], every: bool) -> str:
    """``every ally (backup)``, ``Mira (always)``, ``nobody``."""
    if not protects:
        return "nobody"
    modes = sorted(set(protects.values()))
    if every and len(modes) == 1:
        return f"every ally ({modes[0]})"
    by_mode = {m: [a for a, v in protects.items() if v == m] for m in modes}
    return "; ".join(f"{', '.join(names)} ({m})" for m, names in by_mode.items())


def guard_lines(comparison: Any) -> list[str]:
    """When A and B differ in a guard (R7/R7a): what it guards in each, the protected
    allies' gain (their attacks left unanswered and answered only hastily, per round, A
    → B with the paired B − A) and the guard's cost (its actions and guard defenses)."""
    changes = getattr(comparison, "guard_changes", None) or []
    lines: list[str] = []
    table = comparison.table

    def row(who: str, metric: str) -> str | None:
        r = table[(table.combatant == who) & (table.metric == metric)]
        if r.empty:
            return None
        r = r.iloc[0]
        half = comparison.t_paired * r.se_paired
        return (
            f"{GUARD_WORDS[metric]} {format_mean(metric, r.mean_a, r.se_unpaired)} → "
            f"{format_mean(metric, r.mean_b, r.se_unpaired)} "
            f"({format_difference(metric, r.difference, half)})"
        )

    for g in changes:
        lines.append(
            f"Guard {g.guard} (R7/R7a): guards {_guarding(g.in_a, g.every_a)} in A, "
            f"{_guarding(g.in_b, g.every_b)} in B"
        )
        for ally in g.allies:
            parts = [p for p in (row(ally, m) for m in ("undefended", "hasty_only")) if p]
            a, b = g.in_a.get(ally), g.in_b.get(ally)
            status = (
                "in B only"
                if a is None
                else "in A only"
                if b is None
                else f"in both ({a})"
                if a == b
                else f"{a} in A, {b} in B"
            )
            if parts:
                lines.append(
                    f"  {ally}, guarded by {g.guard} {status}; attacks on {ally} per round: "
                    + ", ".join(parts)
                )
        cost = [p for p in (row(g.guard, m) for m in ("actions", "guard_defenses")) if p]
        if cost:
            lines.append(f"  {g.guard}'s cost, per round: " + ", ".join(cost))
    return lines


def _comparison_sides(comparison: Any) -> Any:
    """The side rows of a comparison for the metrics of a run's side table (None with
    fewer than two sides)."""
    levels = getattr(comparison, "levels", {})
    if "side" not in levels or len(comparison.a.scenario.sides) < 2:
        return None
    t = levels["side"]
    t = t[t.metric.isin(RUN_SIDE_METRICS)]
    order = {m: k for k, m in enumerate(RUN_SIDE_METRICS)}
    return t.iloc[sorted(range(len(t)), key=lambda k: (order[t.metric.iloc[k]], k))]


def _comparison_cells(comparison: Any, rows: Any, who: str) -> tuple[list[Any], list[Any]]:
    """Key cells (who, metric) and value cells (A, B, B − A, narrower) of comparison rows."""
    key_rows, body = [], []
    for r in rows.itertuples(index=False):
        half = comparison.t_paired * r.se_paired
        name = getattr(r, who) or "(scenario)"
        key_rows.append([name, header_of(r.metric, who)])
        body.append(
            [
                format_mean(r.metric, r.mean_a, r.se_unpaired),
                format_mean(r.metric, r.mean_b, r.se_unpaired),
                format_difference(r.metric, r.difference, half),
                format_ratio(r.narrower),
            ]
        )
    return key_rows, body


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
        level = [r for r in res.rows if r[0]] if by == "combatant" else res.level_rows(by)
        rows = {(r[0], r[1]): r for r in level}  # per combatant: families' members too
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
    lines = grid(keys, key_rows, [header_of(m, by) for m in present], body, width)
    lines.append(
        f"{len(sweep.results)} points x {sweep.rounds:,} rounds, seed {sweep.seed} "
        f"(the same dice at every point), {sweep.elapsed_s:.2f} s; ± is the 95% interval "
        "half-width"
    )
    return "\n".join(fit(lines, width))


def tuning_table(tuning: Any, *, width: int = WIDTH, heading: bool = True) -> str:
    """The table ``simkit tune`` prints: the target quantity at every grid point, whether
    it is met (with a tolerance: met, not met or undecided, and the rounds of a point
    given more to decide it), then the answer in words, then each refinement's table."""
    from simkit.scenario.specs import cell as cell_text

    target = tuning.target
    keys = [*tuning.fields] + (["values"] if any(p.actual for p in tuning.points) else [])
    key_rows = [
        [cell_text(v) for v in p.values] + ([p.actual] if len(keys) > len(tuning.fields) else [])
        for p in tuning.points
    ]
    unit = target.numerator.metric if not target.denominator else "actions"
    rounds = tuning.sweep.rounds
    extended = any(p.rounds != rounds for p in tuning.points)
    tolerance = target.band is not None
    body = [
        [
            format_estimate(unit, p.estimate.mean, p.estimate.se),
            p.decision if tolerance else ("met" if p.met else ""),
            "clearly" if p.clearly and target.comparator != "=" else "",
        ]
        + ([f"{p.rounds:,}"] if extended else [])
        for p in tuning.points
    ]
    header = [target.quantity, "decision" if tolerance else "met", ""]
    header += ["rounds"] if extended else []
    lines = [f"target: {target.shown}"] if heading else []
    lines += grid(keys, key_rows, header, body, width)
    lines += ["", tuning.answer]
    lines.append(
        f"{len(tuning.points)} points x {rounds:,} rounds, seed {tuning.sweep.seed} "
        "(the same dice at every point)"
        + ("; more rounds where they decide the answer (column rounds)" if extended else "")
        + "; ± is the 95% interval half-width"
    )
    for r in getattr(tuning, "refined", ()):
        lines += ["", f"refine: {r.fixed}"]
        lines.append(tuning_table(r.tuning, width=width, heading=False))
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
                + _unpaired_reason(result.scenario, side.results[0].scenario)
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
    key_rows = [[who, header_of(m, by)] for who, m in cells]
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


KNOB_WIDTH = 34  # characters of a knob's name in the sensitivity table


def sensitivity_table(s: Any, *, width: int = WIDTH) -> str:
    """The table ``simkit sensitivity`` prints: the answer, then per knob (largest
    first) each change and its paired difference in every measure, then what was
    skipped and a line on the runs."""
    from simkit.bounded import cut

    lines = [s.answer, ""]
    measures = list(s.measures)
    if s.table.empty:
        lines += [f"skipped: {x}" for x in s.skipped]
        return "\n".join(fit(lines, width))
    cells: dict[tuple[str, str], list[Any]] = {}
    for r in s.table.itertuples(index=False):
        key = (r.knob, r.changed_to)
        half = s.t_paired * r.se_paired
        text = format_difference("action_economy", r.difference, half)
        cells.setdefault(key, [r, {}])[1][r.measure] = "0 exactly" if text == "+0" else text
    key_rows, body = [], []
    last = None
    for (knob, _), (r, by) in cells.items():
        first = knob != last
        last = knob
        name = f"{r.who}.{r.field}"  # rules.order for each of its alternatives
        key_rows.append(
            [
                str(r.rank) if first else "",
                cut(name, KNOB_WIDTH) if first else "",
                f"{r.as_written} -> {r.changed_to}",
            ]
        )
        body.append([by.get(m.label, "") for m in measures])
    if s.economy:
        what = "each side's action economy"
    else:
        what = "; ".join(f"{m.column} = {m.label}" if m.header else m.label for m in measures)
    lines.append(f"Change in {what} (variant minus as written, ± paired 95%):")
    lines += grid(
        ["rank", "knob", "change"], key_rows, [cut(m.column, 24) for m in measures], body, width
    )
    lines.append("")
    lines += [f"skipped: {x}" for x in s.skipped]
    lines.append(s.note)
    return "\n".join(fit(lines, width))


def _gain_text(g: Any) -> str:
    """A paired gain and its 95% half-width (``+0.123 ± 0.004``)."""
    return format_gain(g.difference, g.ci_high - g.difference)


def _value_text(value: Any) -> str:
    """A policy value as a scenario file writes it: a list of names (R7a) as
    ``[Mira, Kira]``."""
    if isinstance(value, tuple | list):
        return "[" + ", ".join(str(v) for v in value) + "]"
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
    guarded = guard_gain_lines(search, width)
    if guarded:
        lines += ["", *guarded]
    e = search.equilibrium
    if e is not None:
        lines += ["", *equilibrium_lines(search, e)]
    lines.append(
        f"{search.variants} variants x {search.rounds:,} rounds, seed {search.seed} (the same "
        f"dice in every variant); gains paired over {search.batches} batches, ± is the 95% "
        "interval half-width"
    )
    return "\n".join(fit(lines, width))


def _unpaired_reason(s: Any, a: Any) -> str:
    """Why B cannot be paired with A (analysis.compare.pairable)."""
    if s.system != a.system:
        return "another system"
    if s.fight_rounds != a.fight_rounds:  # R8a: rounds are cut into other fights
        return "other fights"
    return "other combatants"


def guard_gain_lines(search: Any, width: int | None = None) -> list[str]:
    """R7/R7a: for a best value that changes a guard, what it changes for the allies
    the guard protects (per round, best value minus as written, ± paired 95%), beside
    the gain of the guard's side above."""
    gains = getattr(search, "guarded", ())
    if not gains:
        return []
    lines = [
        "For the allies a guard protects (per round, the best value minus as written, "
        "± paired 95%):"
    ]
    by_change: dict[tuple[str, str, str, str], list[Any]] = {}
    for g in gains:
        by_change.setdefault((g.group, g.field, _value_text(g.value), g.guard), []).append(g)
    for (group, name, value, guard), items in by_change.items():
        parts = []
        for ally in dict.fromkeys(g.ally for g in items):
            cells = [
                f"{GUARD_WORDS[g.metric]} {_gain_text(g.estimate)}" for g in items if g.ally == ally
            ]
            parts.append(f"{ally}'s attacks {', '.join(cells)}")
        who = "" if guard == group else f" ({guard} guards)"
        line = f"{group}.{name} = {value}{who}: " + "; ".join(parts)
        lines += [f"- {line}"] if width is None else wrap(line, width, bullet="- ")
    return lines


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
