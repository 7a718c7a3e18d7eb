"""One way to print a result: ``render(kind, result, fmt)`` for every command.

Every command's result is first read as *tidy rows* (:class:`Tidy`: a kind, the
parameters it was run with, named columns, one row per estimate or event, and notes),
and every format is drawn from those rows the same way:

* ``table``: the terminal table of the kind (:mod:`simkit.output.terminal`), which
  rounds every number to what its 95% interval supports;
* ``csv``: the columns and rows, numbers at full precision (10 significant digits),
  NaN empty, lists as JSON;
* ``md``: the same columns and rows as a Markdown table;
* ``json``: one object ``{"kind": ..., "parameters": {...}, "rows": [{column: value},
  ...], "notes": [...]}``, NaN as ``null``.

The kinds are ``run``, ``sweep``, ``compare``, ``tune`` and ``trace`` (the results of
the commands of those names), ``side_by_side`` (``compare`` of three or more files,
``SideBySide``), ``dominance`` (``run --dominance``, ``Dominance``), ``sensitivity``
(``simkit sensitivity``, ``Sensitivity``) and ``policies`` (``simkit policies``,
``PolicySearch``).  A result played to a precision (``stopping``) adds its stopping
line to the table and the notes, and ``precision`` (what was asked, the rounds used,
what did not meet it) to the parameters.  A metric
family's name in ``metrics`` (``acts_before``) means every member of it
(``acts_before.X`` for every other combatant).  An unknown kind or format is a
``ValueError`` here, and nowhere else.  Nothing here simulates; the results are read
by their attributes.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from simkit.output import terminal
from simkit.output.numbers import csv_number
from simkit.output.spreadsheet import safe_cell

FORMATS = ("table", "csv", "md", "json")
STATS = ["mean", "se", "ci_low", "ci_high"]


@dataclass(frozen=True)
class Tidy:
    """A result as tidy rows: what every format but ``table`` prints."""

    kind: str
    parameters: dict[str, Any]
    columns: list[str]
    rows: list[list[Any]]
    notes: list[str] = field(default_factory=list)

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]


@dataclass(frozen=True)
class View:
    """What to show: the level (``by``), the metrics (None: all), the terminal width,
    and for comparisons whether rows that do not differ are shown in the table."""

    by: str = "combatant"
    metrics: Sequence[str] | None = None
    width: int = terminal.WIDTH
    all_metrics: bool = False
    verdict: bool = True


# --------------------------------------------------------------------------- tidy rows
def _frame(t: Any) -> tuple[list[str], list[list[Any]]]:
    """A DataFrame's columns and rows, values as plain Python objects."""
    split = t.to_dict(orient="split")
    return [str(c) for c in split["columns"]], [list(r) for r in split["data"]]


def _only(t: Any, metrics: Sequence[str] | None) -> Any:
    return t[t.metric.isin(list(metrics))] if metrics else t


ROUND = "round"  # ``--by round``: per round index of a fight (R8a)


def _run(result: Any, view: View) -> Tidy:
    if view.by == ROUND:
        return _run_by_round(result, view)
    rows = result.rows if view.by == "combatant" else result.level_rows(view.by)
    chosen = set(view.metrics) if view.metrics else None
    scenario = result.scenario
    return Tidy(
        "run",
        {
            "scenario": scenario.name,
            "system": scenario.system,
            "rounds": result.rounds,
            "seed": result.seed,
            "rules": dict(scenario.rules),
            "by": view.by,
            "metrics": list(view.metrics) if view.metrics else None,
        },
        [view.by, "metric", *STATS],
        [list(r) for r in rows if chosen is None or r[1] in chosen],
        [result.fights.rounds_note] if getattr(result, "fights", None) else [],
    )


def round_level_rows(result: Any) -> list[list[Any]]:
    """``run --by round``'s tidy rows: per round index of a fight and per fight, every
    side's metrics, then every count group's, then every combatant's (and the
    scenario's, name ``""``), as ``[round, level, name, metric, mean, se, ci_low,
    ci_high]`` (the columns of a report's rounds.csv)."""
    return [[r[0], level, *r[1:]] for level in ROUND_LEVELS for r in result.round_rows(level)]


def _run_by_round(result: Any, view: View) -> Tidy:
    """``run --by round``: every side's, group's and combatant's metrics (and the
    scenario's) per round index of a fight, then per fight (``Result.round_rows``)."""
    chosen = set(view.metrics) if view.metrics else None
    scenario = result.scenario
    return Tidy(
        "run",
        {
            "scenario": scenario.name,
            "system": scenario.system,
            "rounds": result.rounds,
            "fights": result.fights.fights,
            "fight_rounds": result.fights.fight_rounds,
            "seed": result.seed,
            "rules": dict(scenario.rules),
            "by": ROUND,
            "metrics": list(view.metrics) if view.metrics else None,
        },
        [ROUND, "level", "name", "metric", *STATS],
        [r for r in round_level_rows(result) if chosen is None or r[3] in chosen],
        [result.fights.rounds_note, ROUND_NOTE],
    )


ROUND_LEVELS = ("side", "group", "combatant")  # ``--by round``: its rows, in this order
ROUND_NOTE = (
    'round: the round index within a fight (1 = the opening); "fight": the totals of a '
    "fight (a probability summed over its rounds: the expected number of such rounds); "
    "level: side (its members' counts summed, probabilities as any member), group (a "
    "count group) or combatant (name empty: the scenario's metrics)"
)


def _sweep(sweep: Any, view: View) -> Tidy:
    columns, rows = _frame(_only(sweep.level_table(view.by), view.metrics))
    return Tidy(
        "sweep",
        {
            "scenario": sweep.scenario.name,
            "system": sweep.scenario.system,
            "fields": list(sweep.fields),
            "values": [list(a.values) for a in sweep.axes],
            "rounds": sweep.rounds,
            "seed": sweep.seed,
            "by": view.by,
            "metrics": list(view.metrics) if view.metrics else None,
        },
        columns,
        rows,
    )


def _compare(comparison: Any, view: View) -> Tidy:
    columns, rows = _frame(_only(comparison.level_table(view.by), view.metrics))
    return Tidy(
        "compare",
        {
            "a": comparison.label_a,
            "b": comparison.label_b,
            "rounds": comparison.rounds,
            "seed": comparison.seed,
            "batches": comparison.batches,
            "batch_rounds": comparison.batch_rounds,
            "by": view.by,
            "metrics": list(view.metrics) if view.metrics else None,
        },
        columns,
        rows,
        [*terminal.guard_lines(comparison), comparison.narrowing_line()],
    )


def _tune(tuning: Any, view: View) -> Tidy:
    columns, rows = _frame(tuning.table)
    return Tidy(
        "tune",
        {
            "scenario": tuning.scenario.name,
            "system": tuning.scenario.system,
            "target": tuning.target.text,
            "tolerance": tuning.target.tolerance,
            "band": list(tuning.target.band) if tuning.target.band else None,
            "fields": list(tuning.fields),
            "rounds": tuning.sweep.rounds,
            "seed": tuning.sweep.seed,
            "finer": list(tuning.finer),
        },
        columns,
        rows,
        [tuning.answer],
    )


def _policies(search: Any, view: View) -> Tidy:
    columns, rows = _frame(search.table)
    notes = [f"objective of {side}: {o.words} = {o.text}" for side, o in search.objectives.items()]
    notes.append(search.answer)
    notes += terminal.guard_gain_lines(search)
    e = search.equilibrium
    parameters: dict[str, Any] = {
        "scenario": search.scenario.name,
        "system": search.scenario.system,
        "objectives": {side: o.text for side, o in search.objectives.items()},
        "rounds": search.rounds,
        "seed": search.seed,
        "variants": search.variants,
        "batches": search.batches,
    }
    if e is not None:
        parameters["equilibrium"] = {
            "status": e.status,
            "turns": e.turns,
            "policies": [[g, f, v] for (g, f), v in e.profile.items()],
            "cycle": [[[g, f, v] for (g, f), v in m.items()] for m in e.cycle],
            "dominant": [list(d) for d in e.dominant],
            "sides": [
                {
                    "side": v.side,
                    "objective_as_written": v.objective.mean_a,
                    "objective_at_end": v.objective.mean_b,
                    "objective_change_ci": [v.objective.ci_low, v.objective.ci_high],
                    "action_economy_as_written": v.action_economy.mean_a,
                    "action_economy_at_end": v.action_economy.mean_b,
                }
                for v in e.sides
            ],
        }
        notes += list(e.findings)
    return Tidy("policies", parameters, columns, rows, notes)


def _trace(trace: Any, view: View) -> Tidy:
    columns = list(dict.fromkeys(k for r in trace.records for k in r))
    return Tidy(
        "trace",
        {
            "scenario": trace.scenario.name,
            "system": trace.scenario.system,
            "rounds": trace.rounds,
            "seed": trace.seed,
            "dice": dict(trace.dice),
        },
        columns,
        [[r.get(c) for c in columns] for r in trace.records],
        [trace.heading],
    )


DOMINANCE_COLUMNS = ["scenario", "system", "fastest", "other", "stat", "other_stat", "tied"]


def _dominance_rows(d: Any) -> list[list[Any]]:
    return [
        [d.label, d.system, f, other, d.stat, other_stat, d.tied, mean, se, low, high]
        for f, other, other_stat, mean, se, low, high in d.rows
    ]


def _dominance(d: Any, view: View) -> Tidy:
    return Tidy(
        "dominance",
        {
            "scenario": d.label,
            "system": d.system,
            "stat": d.stat_field,
            "fastest": list(d.fastest),
            "tied": d.tied,
            "rounds": d.rounds,
            "seed": d.seed,
        },
        [*DOMINANCE_COLUMNS, *STATS],
        _dominance_rows(d),
        [d.heading(), DOMINANCE_NOTE],
    )


DOMINANCE_NOTE = (
    "acts before: P(the fastest's first action of the round comes strictly before the "
    "other's; the other taking no action counts as later), result.acts_before()"
)


def side_by_side_rows(side: Any, view: View) -> Any:
    """The rows of a side-by-side comparison shown for ``view``: the metrics every
    scenario has (``all_metrics``: every metric), or ``view.metrics``."""
    t = side.level_table(view.by)
    if view.metrics:
        return t[t.metric.isin(list(view.metrics))]
    if view.all_metrics:
        return t
    per = t.groupby("metric", sort=False)["scenario"].nunique()
    common = set(per[per == len(side.labels)].index)
    return t[t.metric.isin(common) & ~t.metric.str.contains(".", regex=False)]


def _side_by_side(side: Any, view: View) -> Tidy:
    columns, rows = _frame(side_by_side_rows(side, view))
    return Tidy(
        "side_by_side",
        {
            "scenarios": list(side.labels),
            "systems": [r.scenario.system for r in side.results],
            "paired": list(side.paired),
            "rounds": side.rounds,
            "seed": side.seed,
            "batches": side.batches,
            "batch_rounds": side.batch_rounds,
            "by": view.by,
            "metrics": list(view.metrics) if view.metrics else None,
            "dominance": [
                dict(zip([*DOMINANCE_COLUMNS, *STATS], r, strict=True))
                for d in side.dominance
                for r in _dominance_rows(d)
            ],
        },
        columns,
        rows,
        [SIDE_NOTE],
    )


SIDE_NOTE = (
    "difference: from the first scenario; paired (common random numbers, batch means, t) "
    "where a scenario has the first's system and combatants, otherwise from independent "
    "runs (z)"
)


def _sensitivity(s: Any, view: View) -> Tidy:
    columns, rows = _frame(s.rows)
    return Tidy(
        "sensitivity",
        {
            "scenario": s.scenario.name,
            "system": s.scenario.system,
            "rounds": s.rounds,
            "seed": s.seed,
            "batches": s.batches,
            "batch_rounds": s.batch_rounds,
            "measures": {m.label: m.words for m in s.measures},
            "skipped": list(s.skipped),
        },
        columns,
        rows,
        [s.answer, s.note],
    )


TIDY: dict[str, Callable[[Any, View], Tidy]] = {
    "run": _run,
    "sweep": _sweep,
    "compare": _compare,
    "tune": _tune,
    "trace": _trace,
    "side_by_side": _side_by_side,
    "dominance": _dominance,
    "sensitivity": _sensitivity,
    "policies": _policies,
}


def _metric_names(kind: str, result: Any) -> list[str]:
    """Every metric name of a result (families' members included), for expanding a
    family's name."""
    if kind == "run":
        return list(dict.fromkeys(r[1] for r in result.rows))
    if kind in ("compare", "sweep"):
        return list(dict.fromkeys(result.table.metric))
    if kind == "side_by_side":
        return list(dict.fromkeys(m for r in result.results for _, m, *_ in r.rows))
    return []


def expand_metrics(kind: str, result: Any, metrics: Sequence[str] | None) -> list[str] | None:
    """``metrics`` with each family's name (``acts_before``) replaced by its members
    (``acts_before.X`` ...) where the result has no metric of that very name."""
    if not metrics:
        return None if metrics is None else list(metrics)
    names = _metric_names(kind, result)
    plain = set(names)
    out: list[str] = []
    for m in metrics:
        members = [n for n in names if n.startswith(m + ".")] if m not in plain else []
        out += members or [m]
    return list(dict.fromkeys(out))


def tidy(kind: str, result: Any, view: View | None = None) -> Tidy:
    """``result`` (of a command of kind ``kind``) as tidy rows."""
    check(kind, "table")
    return TIDY[kind](result, view or View())


# --------------------------------------------------------------------------- the table
def _table(kind: str, result: Any, view: View) -> str:
    if kind == "run" and view.by == ROUND:
        return terminal.round_table(result, metrics=view.metrics, width=view.width)
    if kind == "run":
        return terminal.result_table(
            result, by=view.by, metrics=view.metrics, width=view.width, verdict=view.verdict
        )
    if kind == "sweep":
        return terminal.sweep_table(result, view.metrics, by=view.by, width=view.width)
    if kind == "compare":
        return terminal.comparison_table(
            result, all_metrics=view.all_metrics, metrics=view.metrics, by=view.by, width=view.width
        )
    if kind == "tune":
        return terminal.tuning_table(result, width=view.width)
    if kind == "side_by_side":
        return terminal.side_by_side_table(
            result, side_by_side_rows(result, view), by=view.by, width=view.width
        )
    if kind == "dominance":
        return terminal.dominance_table([result], width=view.width)
    if kind == "sensitivity":
        return terminal.sensitivity_table(result, width=view.width)
    if kind == "policies":
        return terminal.policies_table(result, width=view.width)
    return "\n".join(terminal.fit(result.lines, view.width))  # trace


# --------------------------------------------------------------------------- formats
def _cell(value: Any) -> str:
    """One value as CSV or Markdown text: floats at 10 significant digits (NaN empty),
    lists and mappings as JSON, None empty."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return csv_number(value)
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _plain(value: Any) -> Any:
    """A value for JSON: NaN and infinities as null, tuples as lists."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def as_csv(t: Tidy) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([safe_cell(c) for c in t.columns])
    writer.writerows([safe_cell(_cell(v)) for v in row] for row in t.rows)
    return buf.getvalue()


def as_markdown(t: Tidy) -> str:
    return terminal.markdown(t.columns, [[_cell(v) for v in row] for row in t.rows])


def as_json(t: Tidy) -> str:
    document = {
        "kind": t.kind,
        "parameters": _plain(t.parameters),
        "rows": [_plain(r) for r in t.records()],
        "notes": list(t.notes),
    }
    return json.dumps(document, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


WRITERS: dict[str, Callable[[Tidy], str]] = {"csv": as_csv, "md": as_markdown, "json": as_json}


def check(kind: str, fmt: str) -> None:
    """A ValueError naming what is allowed, for an unknown kind or format."""
    if kind not in TIDY:
        raise ValueError(f"unknown kind {kind!r}; allowed: {', '.join(TIDY)}")
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; allowed: {', '.join(FORMATS)}")


def render(
    kind: str,
    result: Any,
    fmt: str = "table",
    *,
    by: str = "combatant",
    metrics: Sequence[str] | None = None,
    width: int = terminal.WIDTH,
    all_metrics: bool = False,
    verdict: bool = True,
) -> str:
    """``result`` of a ``kind`` command (run, sweep, compare, tune, trace) in format
    ``fmt`` (table, csv, md, json); see the module docstring.  KeyError for a metric
    that is not in the result.  The table of a run of two or more sides ends with its
    side table and verdict (``verdict=False``: without them)."""
    check(kind, fmt)
    view = View(by, expand_metrics(kind, result, metrics), width, all_metrics, verdict)
    stopping = getattr(result, "stopping", None)
    notes = fights_notes(result)
    if fmt == "table":
        text = _table(kind, result, view)
        if stopping is not None and kind != "tune":  # tune's answer says it
            text += "\n" + "\n".join(terminal.fit([stopping.line()], view.width))
        flat = " ".join(text.split())  # the table's lines are wrapped
        more = [n for n in notes if " ".join(n.split()) not in flat]
        return "\n".join([text, *terminal.fit(more, view.width)]) if more else text
    tidy_rows = TIDY[kind](result, view)
    if stopping is not None:
        tidy_rows.parameters["precision"] = stopping.parameters()
        if kind != "tune":
            tidy_rows.notes.append(stopping.line())
    tidy_rows.notes.extend(n for n in notes if n not in tidy_rows.notes)
    return WRITERS[fmt](tidy_rows)


def fights_notes(result: Any) -> list[str]:
    """R8a: the "N rounds = F fights of K rounds" line of every run behind ``result``
    (a run, a comparison's two, a sweep's or a tuning's points, a side-by-side's) whose
    scenario is played in fights; each different line once."""
    runs: list[Any] = []
    for obj in (result, getattr(result, "a", None), getattr(result, "b", None)):
        if obj is not None and getattr(obj, "fights", None) is not None:
            runs.append(obj)
    holder = getattr(result, "sweep", result)
    runs += [r for r in getattr(holder, "results", ()) or () if getattr(r, "fights", None)]
    return list(dict.fromkeys(r.fights.rounds_note for r in runs))
