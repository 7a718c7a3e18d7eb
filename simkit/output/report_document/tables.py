"""A report's tables, as data (``Table``): the side table of the verdict, the
scenario, the per-group metrics (one table per theme; the HTML page cuts a table into
"(continued)" parts only where it would not fit the page's width, ``page.column_parts``),
the cost and benefit of every policy, and the sweep.

Headers are words from the metric registry with the unit on a second line; cells are
``mean ± half-width`` rounded to what the interval supports, without the unit; text
columns come first.  A ``count`` group is one row ("Wolf ×3", values per member); its
members get rows of their own only where they differ (non-overlapping intervals).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from simkit import systems
from simkit.metrics import Estimate
from simkit.output.numbers import format_difference, format_estimate, format_gain
from simkit.output.report_document.names import (
    EACH,
    aggregation,
    field_words,
    join_names,
    title_of,
    unit_of,
    value_words,
)
from simkit.output.report_document.readings import Numbers

if TYPE_CHECKING:
    from simkit.analysis.report_runs import PolicyEffect, ReportData

MAX_COLUMNS = 7  # value columns per table: a table of the report fits 1,200 px
ECONOMY = "action_economy"

THEMES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Who acts when", ("first_action", "actions", "no_action", "attacked_before_acting")),
    (
        "Attacks and answers",
        (
            "attacks_made",
            "attacks_received",
            "defended",
            "hasty_only",
            "undefended",
            "defenses",
            "guard_defenses",
            "aborts",
        ),
    ),
    (
        "Hasty defenses",
        (
            "hasty_defenses",
            "hasty_share",
            "hasty_scale",
            "hasty_scale_ge.2",
            "hasty_scale_ge.3",
            "hasty_scale_ge.4",
            "hasty_scale_ge.5",
        ),
    ),
    (
        "Waiting, information and stalemates",
        (
            "expired_dice",
            "known_declarations",
            "known_intents",
            "intent_disclosed",
            "on_edge",
            "edge_wound",
        ),
    ),
)
SIDE_METRICS = (
    "actions",
    "action_economy",
    "first_action",
    "attacks_made",
    "undefended",
    "hasty_only",
    "hasty_scale",
)


@dataclass(frozen=True)
class Table:
    """A table to render: ``header`` (words) and ``units`` (second header line) per
    column, ``rows`` of text cells; the first ``text_columns`` columns are text (left),
    the rest numbers (right, aligned on the decimal point)."""

    title: str
    header: list[str]
    units: list[str]
    rows: list[list[str]]
    text_columns: int = 1
    members: frozenset[int] = frozenset()  # rows that are a group's members (indented)
    note: str = ""
    key: str = ""  # a stable id (CSS anchor)
    extra: dict[str, Any] = field(default_factory=dict)


def cell(metric: str, e: Estimate) -> str:
    return format_estimate(metric, e.mean, e.se, unit=False)


def header(metric: str) -> tuple[str, str]:
    """(words, unit) of a column: ("First action", "% of rounds")."""
    return title_of(metric), unit_of(metric)


def chunks(names: list[str], size: int = MAX_COLUMNS) -> list[list[str]]:
    """Columns cut into tables of at most ``size``, as evenly as possible."""
    if len(names) <= size:
        return [names]
    parts = -(-len(names) // size)
    step = -(-len(names) // parts)
    return [names[k : k + step] for k in range(0, len(names), step)]


# --------------------------------------------------------------------------- verdict
def side_unit(metric: str) -> str:
    """The unit of a side's row with how its members make it: ``actions, sum``."""
    how = aggregation(metric)
    return f"{unit_of(metric)}, {how}" if how else unit_of(metric)


def side_table(
    numbers: Numbers, chosen: tuple[str, ...] = SIDE_METRICS, columns: bool = False
) -> Table:
    """The verdict's table: one column per side (one row per side beyond four sides;
    ``columns``: one column per side always); each unit says how the side's members
    make its value (``sum``, ``any member``, ``ratio of sums``)."""
    metrics = [m for m in chosen if numbers.has(m)]
    note = (
        "Per side: counts summed over its members (sum), a probability as any member's "
        "(any member), a share as the ratio of the summed counts; action economy: its "
        "actions per action of all its opponents."
    )
    if columns or len(numbers.sides) <= 4:
        rows = [
            [title_of(m), side_unit(m), *(cell(m, numbers.side(s, m)) for s in numbers.sides)]
            for m in metrics
        ]
        return Table(
            "Sides",
            ["", "Unit", *numbers.sides],
            ["", "", *("" for _ in numbers.sides)],
            rows,
            text_columns=2,
            note=note,
            key="sides",
            extra={"align": False},
        )
    heads = [(title_of(m), side_unit(m)) for m in metrics]
    rows = [[s, *(cell(m, numbers.side(s, m)) for m in metrics)] for s in numbers.sides]
    return Table(
        "Sides",
        ["Side", *(h for h, _ in heads)],
        ["", *(u for _, u in heads)],
        rows,
        note=note,
        key="sides",
    )


# --------------------------------------------------------------------------- scenario
def combatant_table(data: ReportData, numbers: Numbers) -> Table:
    """One row per group: side, main stat, and only the fields that differ from their
    defaults (a field that does not apply to a combatant never differs)."""
    s = data.scenario
    system = systems.get(s.system)
    fields = system.fields
    main = system.main_field
    rows = []
    for group in numbers.groups:
        members = [c for c in s.combatants if c.group == group]
        c = members[0]
        same = all(m.params == c.params for m in members)
        shown = members[:1] if same else members
        for m in shown:
            settings = []
            for name, spec in {**_common(), **fields}.items():
                value = m.params.get(name)
                if name in (main, "name", "side", "count") or value is None:
                    continue
                default = spec.default
                if isinstance(default, str | int | float | bool) and value == default:
                    continue
                settings.append(f"{field_words(name)} {value_words(value, spec)}")
            label = numbers.label(group) if same else m.name
            rows.append([label, m.side, str(system.stat(m.params)), ", ".join(settings) or "–"])
    return Table(
        "Combatants",
        ["Combatant", "Side", field_words(main).capitalize(), "Settings"],
        ["", "", "", "fields that differ from the default"],
        rows,
        text_columns=2,
        note=_defaults_note(system),
        key="combatants",
        extra={"wide_last": True},
    )


def _common() -> dict[str, Any]:
    from simkit.systems.base import COMMON_FIELDS

    return dict(COMMON_FIELDS)


def _defaults_note(system: Any) -> str:
    parts = []
    for name, spec in {**_common(), **system.fields}.items():
        if name in (system.main_field, "name", "side", "count"):
            continue
        if isinstance(spec.default, str | int | float | bool):
            parts.append(f"{field_words(name)} {value_words(spec.default, spec)}")
    return "Defaults: " + ", ".join(parts) + "." if parts else ""


def rules_text(data: ReportData) -> str:
    s = data.scenario
    system = systems.get(s.system)
    if not s.rules:
        return "No rules to choose."
    parts = []
    changed = []
    for name, value in s.rules.items():
        parts.append(f"{field_words(name)} {value_words(value)}")
        spec = system.rules.get(name)
        if spec is not None and value != spec.default:
            changed.append(field_words(name))
    tail = f" (not the default: {join_names(changed)})" if changed else " (all defaults)"
    return "Rules: " + ", ".join(parts) + tail + "."


# --------------------------------------------------------------------------- per group
def group_tables(numbers: Numbers) -> tuple[list[Table], list[str]]:
    """The per-group metric tables, by theme, and the metrics left out because they
    cannot vary: the same value in every round for everyone (0 hasty defenses, one
    action each)."""
    available = [m for m in numbers.metrics]
    for k in (2, 3, 4, 5):
        name = f"hasty_scale_ge.{k}"
        if any((n, name) in numbers.rows for n in numbers.scenario.names):
            available.append(name)
    zero = [m for m in available if numbers.always_zero(m)]
    fixed = [m for m in available if m not in zero and not numbers.varies(m)]
    zero += [m for m in fixed if len({numbers.each(g, m).mean for g in numbers.groups}) == 1]
    placed: set[str] = set()
    tables = []
    themes = list(THEMES)
    rest = [m for m in available if not any(m in names for _, names in THEMES)]
    if rest:
        themes.append(("Other", tuple(rest)))
    for title, names in themes:
        chosen = [m for m in names if m in available and m not in zero]
        placed.update(chosen)
        if chosen:  # one table per theme; the page cuts it only where it is too wide
            tables.append(_group_table(numbers, title, chosen))
    return tables, zero


def _group_table(numbers: Numbers, title: str, metrics: list[str]) -> Table:
    rows: list[list[str]] = []
    member_rows: set[int] = set()
    each = False
    for g in numbers.groups:
        size = len(numbers.members[g])
        each = each or size > 1
        label = numbers.label(g) + (" (each)" if size > 1 else "")
        rows.append([label, *(cell(m, numbers.each(g, m)) for m in metrics)])
        if numbers.members_differ(g, metrics):
            for name in numbers.members[g]:
                member_rows.add(len(rows))
                rows.append([name, *(cell(m, numbers.combatant(name, m)) for m in metrics)])
    heads = [header(m) for m in metrics]
    note = ""
    if member_rows:
        note = "Indented: members listed because they differ (non-overlapping 95% intervals)."
    return Table(
        title,
        ["Combatant", *(h for h, _ in heads)],
        [f"a group ×N: {EACH}" if each else "", *(u for _, u in heads)],
        rows,
        members=frozenset(member_rows),
        note=note,
        key="t-" + title.lower().replace(" ", "-"),
    )


def scenario_table(numbers: Numbers) -> Table | None:
    if not numbers.scenario_rows:
        return None
    rows = [[title_of(m), unit_of(m), cell(m, e)] for m, e in numbers.scenario_rows]
    return Table(
        "Scenario-wide", ["Metric", "Unit", "Estimate"], ["", "", ""], rows, text_columns=2
    )


# --------------------------------------------------------------------------- policies
POLICY_METRICS = (
    "actions",
    "first_action",
    "expired_dice",
    "aborts",
    "hasty_share",
    "hasty_only",
    "undefended",
    "defended",
    "attacked_before_acting",
)


def policy_table(e: PolicyEffect, numbers: Numbers, title: str) -> Table:
    """Rows: cost then benefit metrics; columns: the holder, its side, every other side;
    cells: as written minus the alternative, with the paired 95% half-width."""
    from simkit.output.report_document.findings import effect, holder_label

    c = e.change
    columns = [(c.level, c.who, holder_label(e, numbers))]
    if len(numbers.side_members[c.side]) > len(c.members):
        columns.append(("side", c.side, c.side))
    columns += [("side", s, s) for s in numbers.sides if s != c.side]
    rows = []
    for m in POLICY_METRICS:
        if not numbers.has(m):
            continue
        found = [effect(e, level, name, m) for level, name, _ in columns]
        if all(x is None or (x.difference == 0 and x.half == 0) for x in found):
            continue  # the policy cannot change it: nothing to show
        cells = [
            "–"
            if x is None
            else "0"
            if x.difference == 0 and x.half == 0
            else format_difference(m, x.difference, x.half).replace(" pp", "")
            for x in found
        ]
        percent = m in ("first_action", "hasty_share", "attacked_before_acting")
        rows.append([title_of(m), "percentage points" if percent else unit_of(m), *cells])
    return Table(
        title,
        ["Metric", "Unit", *(label for _, _, label in columns)],
        ["", "", *("" for _ in columns)],
        rows,
        text_columns=2,
        note="As written minus the alternative, on the same dice (a side: its members' "
        "sum, a probability as any member's); ± is the paired 95% "
        "half-width; 0: the same in every round.",
        key="policy",
        extra={"align": False},
    )


# --------------------------------------------------------------------------- sweeps
def _point_columns(numbers: Numbers, budget: int) -> list[tuple[str, str]]:
    """(metric, side) columns of a sweep table: actions and first action of every side."""
    cols = [("actions", s) for s in numbers.sides] + [("first_action", s) for s in numbers.sides]
    return cols[:budget]


def side_sweep_table(data: ReportData, numbers: Numbers) -> Table:
    stat = data.plan.stat
    metrics = _point_columns(numbers, MAX_COLUMNS - 1)
    rows = []
    for side, points in data.sweeps.items():
        for p in points:
            assert p.result is not None
            by = {(w, m): Estimate(*x) for w, m, *x in p.result.level_rows("side")}
            values = sorted({v[1] for v in p.values.values()})
            point = f"{side} {'/'.join(map(str, values))}"
            if p.offset == 0:
                point += " (as written)"
            economy = cell(ECONOMY, by.get((side, ECONOMY), _nan()))
            rows.append([point, economy, *(cell(m, by.get((s, m), _nan())) for m, s in metrics)])
    return Table(
        f"Sweep of each side's {stat}",
        [
            "Swept side and its " + stat,
            "Its action economy",
            *(f"{title_of(m)}: {s}" for m, s in metrics),
        ],
        ["", unit_of(ECONOMY), *(side_unit(m) for m, _ in metrics)],
        rows,
        key="sweep",
    )


def grid_table(data: ReportData, numbers: Numbers) -> Table:
    from simkit.output.report_document.names import sweep_axis

    sweep = data.sweep
    assert sweep is not None
    metrics = _point_columns(numbers, MAX_COLUMNS - (1 if data.tuning else 0))
    labels = [sweep_axis(sweep, a)[1] for a in range(len(sweep.axes))]
    rows = []
    for k, res in enumerate(sweep.results):
        by = {(w, m): Estimate(*x) for w, m, *x in res.level_rows("side")}
        idx = []
        rest = k
        for a in reversed(sweep.axes):
            idx.append(rest % len(a.values))
            rest //= len(a.values)
        idx.reverse()
        point = ", ".join(
            f"{ax.column} {labels[a][i].replace(chr(10), ' ')}"
            for a, (ax, i) in enumerate(zip(sweep.axes, idx, strict=True))
        )
        row = [point, *(cell(m, by.get((s, m), _nan())) for m, s in metrics)]
        if data.tuning is not None:
            p = data.tuning.points[k]
            unit = (
                "actions" if data.tuning.target.denominator else data.tuning.target.numerator.metric
            )
            row.append(
                format_estimate(unit, p.estimate.mean, p.estimate.se, unit=False)
                + (" ✓" if p.met else "")
            )
        rows.append(row)
    head = ["Point", *(f"{title_of(m)}: {s}" for m, s in metrics)]
    units = ["values as played", *(side_unit(m) for m, _ in metrics)]
    if data.tuning is not None:
        head.append(data.tuning.target.quantity)
        met = any(p.met for p in data.tuning.points)
        units.append("✓ meets the target" if met else "no point meets the target")
    return Table("The sweep", head, units, rows, key="sweep")


def _nan() -> Estimate:
    nan = float("nan")
    return Estimate(nan, nan, nan, nan)


# --------------------------------------------------------------------------- sensitivity
def sensitivity_table(data: ReportData) -> Table | None:
    """Per knob (largest first) each change and its paired change in each side's action
    economy; "·" where the paired 95% interval covers 0."""
    s = data.sensitivity
    if s is None or s.table.empty:
        return None
    cells: dict[tuple[str, str], dict[str, str]] = {}
    heads: dict[tuple[str, str], Any] = {}
    for r in s.table.itertuples(index=False):
        key = (r.knob, r.changed_to)
        heads.setdefault(key, r)
        text = format_difference(ECONOMY, r.difference, s.t_paired * r.se_paired)
        shown = text if s.detectable(r) else "·"
        cells.setdefault(key, {})[r.measure] = "0 exactly" if text == "+0" else shown
    rows = []
    last = None
    for key, r in heads.items():
        first = r.knob != last
        last = r.knob
        name = f"{r.who} {r.field}" if r.kind == "stat" else f"rules.{r.field}"
        rows.append(
            [
                name if first else "",
                f"{r.as_written} → {r.changed_to}",
                *(cells[key].get(m.label, "") for m in s.measures),
            ]
        )
    return Table(
        "What moves the balance",
        ["Knob", "Change", *(f"{m.column}: change in action economy" for m in s.measures)],
        ["", "", *("" for _ in s.measures)],
        rows,
        text_columns=2,
        note="Variant minus as written on the same dice, ± its paired 95% interval; "
        "· no detectable difference.",
        key="sensitivity",
    )


def best_policy_table(search: Any) -> Table:
    """Per combatant and policy field: as written, the best value, its gain for the
    combatant's side and the change for every side, the verdict; ranked by gain."""
    sides = list(search.objectives)
    rows = []
    for ch in search.ranked:
        value, g = ch.best
        c = ch.coordinate
        effects = dict(ch.effects)
        same = value == ch.current
        cells = [
            "0" if same else format_gain(e.difference, e.ci_high - e.difference)
            for e in (effects[s] for s in sides)
        ]
        rows.append([c.group, c.field, str(c.written), str(value), *cells, ch.verdict])
    return Table(
        "Best policy per combatant and field",
        ["Combatant", "Policy", "As written", "Best", *(f"Change for {s}" for s in sides)]
        + ["Verdict"],
        ["", "", "", "", *("objective per round" for _ in sides), ""],
        rows,
        text_columns=4,
        note="Best: the value with the highest objective of the combatant's side; a change "
        "is clear when its paired 95% interval excludes 0.",
        key="best-policies",
    )
