"""A report's data files: tidy CSV tables of every number it shows (full precision)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from simkit.deferred import pandas as pd

if TYPE_CHECKING:
    from simkit.analysis.report_runs import ReportData

SCENARIO_ROW = ""
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


def _tidy_prefixed(table: pd.DataFrame, prefix: str, column: str) -> pd.DataFrame:
    t = table[table.metric.str.startswith(prefix)].copy()
    t.insert(1, column, t.metric.str.slice(len(prefix)))
    return t.drop(columns="metric").reset_index(drop=True)


def sweep_table(data: ReportData) -> pd.DataFrame:
    """Every sweep point's per-combatant and scenario metrics, tidy (the default side
    sweep: side, offset, stat, combatant, value of the stat; the designer's grid: its
    varied fields -- an offset followed by the value it gave -- then combatant and
    metric)."""
    if data.sweep is not None:
        from simkit.output.result_files import sweep_frame

        t = data.sweep.table
        t = sweep_frame(data.sweep, t[~t.metric.str.contains(".", regex=False)])
        return t.reset_index(drop=True)
    frames = []
    for side, points in data.sweeps.items():
        for p in points:
            assert p.result is not None
            t = p.result.table
            t = t[~t.metric.str.contains(".", regex=False)]
            stats = {c.name: c.params.get(data.plan.stat) for c in p.result.scenario.combatants}
            frame = t.assign(
                side=side,
                offset=p.offset,
                stat=data.plan.stat,
                value=t.combatant.map(stats).astype("Int64"),
            )
            frames.append(frame[SWEEP_COLUMNS])
    if not frames:
        return pd.DataFrame(columns=SWEEP_COLUMNS)
    return pd.concat(frames, ignore_index=True)


def csv_tables(data: ReportData) -> dict[str, pd.DataFrame]:
    """The data tables of a report, by file name."""
    table = data.result.table
    acts = _tidy_prefixed(table, "acts_before.", "other")
    dist = _tidy_prefixed(table, "actions_dist.", "actions")
    dist["actions"] = dist["actions"].astype(int)
    out = {
        "metrics.csv": table,
        "sides.csv": data.result.by("side"),
        "groups.csv": data.result.by("group"),
        "acts_before.csv": acts,
        "actions_distribution.csv": dist,
        "holding.csv": data.holding_table(),
        "sweep.csv": sweep_table(data),
    }
    if data.tuning is not None:
        out["tune.csv"] = data.tuning.table
    if data.sensitivity is not None:
        out["sensitivity.csv"] = data.sensitivity.rows
    if getattr(data.result, "fights", None) is not None:  # R8a: per round of a fight
        rows = [(*r[:1], "combatant", *r[1:]) for r in data.result.round_rows("combatant")]
        rows += [(*r[:1], "side", *r[1:]) for r in data.result.round_rows("side")]
        out["rounds.csv"] = pd.DataFrame(
            rows, columns=["round", "level", "name", "metric", "mean", "se", "ci_low", "ci_high"]
        )
    return out
