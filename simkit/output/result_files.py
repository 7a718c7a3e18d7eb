"""The files of a result directory, by command: ``summary.json`` and ``metrics.csv``
(``simkit run --out``), ``sweep.csv`` and its plots, ``compare.csv``, ``tune.csv`` and
``tune.png``.

Each function takes a finished result and returns ``{file name: text or bytes}``;
:class:`simkit.output.files.OutputDir` writes them as a whole.  The shapes of
summary.json and metrics.csv are the file contract of README.md ("Output files"):
numbers at full precision (CSV: 10 significant digits, NaN empty).
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from simkit.metrics import GROUP, SIDE, Estimate
from simkit.output.numbers import csv_number
from simkit.output.spreadsheet import frame_csv, safe_cell

COLUMNS = ["combatant", "metric", "mean", "se", "ci_low", "ci_high"]
SCENARIO_ROW = ""  # the combatant column of scenario-wide metrics
SWEEP_PLOTS = ("first_action", "actions", "attacked_before_acting")


def summary(result: Any) -> dict[str, Any]:
    """The summary.json document of a run: the keys README.md documents, groups and
    sides included."""
    from simkit import __version__

    combatants: dict[str, Any] = {}
    for c in result.scenario.combatants:
        combatants[c.name] = {
            "side": c.side,
            "metrics": {},
            "acts_before": {},
            "actions_distribution": {},
        }
    scenario_metrics: dict[str, Any] = {}
    for who, metric, *numbers in result.rows:
        est = Estimate(*numbers).as_dict()
        if who == SCENARIO_ROW:
            scenario_metrics[metric] = est
        elif metric.startswith("acts_before."):
            combatants[who]["acts_before"][metric[len("acts_before.") :]] = est
        elif metric.startswith("actions_dist."):
            combatants[who]["actions_distribution"][metric[len("actions_dist.") :]] = est
        else:
            combatants[who]["metrics"][metric] = est
    levels: dict[str, Any] = {}
    for level in (GROUP, SIDE):
        out: dict[str, Any] = {}
        members = result.layout.groups if level == GROUP else result.layout.sides
        for who, metric, *numbers in result.level_rows(level):
            entry = out.setdefault(
                who,
                {
                    "members": [
                        n for n, g in zip(result.scenario.names, members, strict=True) if g == who
                    ],
                    "metrics": {},
                },
            )
            entry["metrics"][metric] = Estimate(*numbers).as_dict()
        levels[level + "s"] = out
    document = {
        "simkit_version": __version__,
        "scenario": result.scenario.name,
        "system": result.scenario.system,
        "rounds": result.rounds,
        "seed": result.seed,
        "rules": dict(result.scenario.rules),
        "combatants": combatants,
        "scenario_metrics": scenario_metrics,
        "groups": levels["groups"],
        "sides": levels["sides"],
        "elapsed_s": round(result.elapsed_s, 4),
        "rounds_per_s": round(result.rounds_per_s, 1),
    }
    if getattr(result, "fights", None) is not None:
        document = {**document, "fights": fight_section(result)}
    return document


def fight_section(result: Any) -> dict[str, Any]:
    """summary.json's ``fights`` (R8a, only with ``fight_rounds``): per round index
    ``"1"`` .. ``"K"`` and per fight (``"fight"``: totals over the fight's rounds), the
    metrics of every combatant, the scenario and every side."""
    fights = result.fights
    per: dict[str, Any] = {}
    for level in ("combatant", SIDE):
        key = "combatants" if level == "combatant" else "sides"
        for rnd, who, metric, *numbers in fights.rows(level):
            entry = per.setdefault(rnd, {"combatants": {}, "scenario_metrics": {}, "sides": {}})
            est = Estimate(*numbers).as_dict()
            if who == SCENARIO_ROW and level == "combatant":
                entry["scenario_metrics"][metric] = est
            else:
                entry[key].setdefault(who, {})[metric] = est
    return {
        "fight_rounds": fights.fight_rounds,
        "fights": fights.fights,
        "note": fights.rounds_note,
        "per_round": per,
    }


def metrics_csv(result: Any) -> str:
    """metrics.csv of a run: the tidy table, numbers to 10 significant digits, NaN empty."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for who, metric, *numbers in result.rows:
        writer.writerow([safe_cell(who), metric, *(csv_number(x) for x in numbers)])
    return buf.getvalue()


def run_files(result: Any) -> dict[str, str]:
    """``simkit run --out``: summary.json and metrics.csv."""
    return {
        "summary.json": json.dumps(summary(result), indent=2, allow_nan=False) + "\n",
        "metrics.csv": metrics_csv(result),
    }


def played_column(column: str) -> str:
    """The column of the values an offset gave: ``Wolf.readiness value``."""
    return f"{column} value"


def sweep_frame(sweep: Any, table: Any = None) -> Any:
    """``sweep.table`` (or ``table``, rows of it in the same order) with, after each
    field varied by offsets (``Wolf.readiness=+0..+2``), the value each row's combatant
    played with (``Wolf.readiness value``: 2, 3, 4; empty for one the field does not
    change and for scenario-wide rows)."""
    t = sweep.table if table is None else table
    relative = [a for a in sweep.axes if a.relative]
    if not relative:
        return t
    t = t.copy()
    for axis in relative:
        values: list[Any] = []
        for res in sweep.results:
            params = {
                c.name: c.params[axis.field]
                for c in res.scenario.combatants
                if axis.target == "*" or axis.target in (c.name, c.group)
            }
            values += [params.get(name) for name in res.table.combatant]
        column = played_column(axis.column)
        if table is None:
            shown = values
        else:  # a subset of the rows, in order: the index of sweep.table says which
            shown = [values[k] for k in t.index]
        numbers = all(v is None or isinstance(v, int) for v in shown)
        t.insert(
            t.columns.get_loc(axis.column) + 1,
            column,
            _ints(shown) if numbers else shown,
        )
    return t


def _ints(values: list[Any]) -> Any:
    from simkit.deferred import pandas as pd

    return pd.array(values, dtype="Int64")


def sweep_files(sweep: Any) -> dict[str, bytes]:
    """``simkit sweep --out``: sweep.csv and the plots.

    ``sweep.csv`` is ``sweep.table`` with, beside each field varied by offsets, the
    values they gave (:func:`sweep_frame`).  One varied field: ``sweep_<metric>.png``, a
    line per combatant with its 95% band.
    Two: ``sweep_<metric>.png``, a heatmap of the mean per combatant.  Plots are drawn
    for ``first_action``, ``actions`` and ``attacked_before_acting``; with three or more
    varied fields only ``sweep.csv`` is written.
    """
    from simkit.output.plots import figure_png, sweep_figure

    files: dict[str, bytes] = {"sweep.csv": frame_csv(sweep_frame(sweep)).encode()}
    if len(sweep.axes) <= 2:
        for m in SWEEP_PLOTS:
            if (sweep.table.metric == m).any():
                files[f"sweep_{m}.png"] = figure_png(sweep_figure(sweep, m))
    return files


def compare_files(comparison: Any) -> dict[str, str]:
    """``simkit compare --out``: compare.csv (the per-combatant table)."""
    return {"compare.csv": frame_csv(comparison.table)}


def tune_files(tuning: Any) -> dict[str, Any]:
    """``simkit tune --out``: tune.csv and tune.png."""
    from simkit.output.plots import figure_png, tune_figure

    return {
        "tune.csv": frame_csv(tuning.table),
        "tune.png": figure_png(tune_figure(tuning)),
    }
