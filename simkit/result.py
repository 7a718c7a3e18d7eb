"""Results as values: a tidy DataFrame plus metadata, rendered to JSON, CSV and text."""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simkit.metrics import PROBABILITIES, Estimate, Layout, Sums, estimates
from simkit.scenario import Scenario

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = ["combatant", "metric", "mean", "se", "ci_low", "ci_high"]
SCENARIO_ROW = ""  # the combatant column of scenario-wide metrics


@dataclass(frozen=True)
class Result:
    """The outcome of a run.

    Attributes
    ----------
    scenario : Scenario
        The scenario as run (rules with defaults filled in).
    rounds, seed :
        Round count and the seed entropy; together with the scenario they reproduce
        the result exactly.
    table : pandas.DataFrame
        Tidy: one row per (combatant, metric) with ``mean, se, ci_low, ci_high``.
        Scenario-wide metrics have ``combatant == ""``; ``acts_before.X`` rows give
        P(acts strictly before X); ``actions_dist.k`` rows give P(actions = k).
    """

    scenario: Scenario
    rounds: int
    seed: int | list[int]
    rows: tuple[tuple[str, str, float, float, float, float], ...] = field(repr=False)
    elapsed_s: float
    workers: int
    layout: Layout = field(repr=False, compare=False)
    sums: Sums = field(repr=False, compare=False)

    @classmethod
    def from_sums(
        cls,
        scenario: Scenario,
        seed: int | list[int],
        layout: Layout,
        sums: Sums,
        elapsed_s: float,
        workers: int,
    ) -> Result:
        rows = tuple(
            (who, metric, e.mean, e.se, e.ci_low, e.ci_high)
            for who, metric, e in estimates(layout, sums)
        )
        return cls(scenario, sums.rounds, seed, rows, elapsed_s, workers, layout, sums)

    @cached_property
    def table(self) -> pd.DataFrame:
        """The tidy table (built on first use: pandas is imported only when needed)."""
        import pandas as pd

        return pd.DataFrame(list(self.rows), columns=COLUMNS)

    @property
    def rounds_per_s(self) -> float:
        return self.rounds / self.elapsed_s if self.elapsed_s > 0 else float("nan")

    def estimate(self, combatant: str, metric: str) -> Estimate:
        """One metric's estimate (``combatant=""`` for scenario metrics)."""
        t = self.table
        row = t[(t.combatant == combatant) & (t.metric == metric)]
        if row.empty:
            raise KeyError(f"no metric {metric!r} for {combatant!r}")
        r = row.iloc[0]
        return Estimate(float(r["mean"]), float(r.se), float(r.ci_low), float(r.ci_high))

    def mean(self, combatant: str, metric: str) -> float:
        return self.estimate(combatant, metric).mean

    def wide(self, stat: str = "mean") -> pd.DataFrame:
        """Combatants as rows and the per-combatant metrics as columns."""
        t = self.table[
            (self.table.combatant != SCENARIO_ROW)
            & ~self.table.metric.str.contains(".", regex=False)
        ]
        out = t.pivot(index="combatant", columns="metric", values=stat)
        out = out.reindex(index=list(self.scenario.names))
        order = list(dict.fromkeys(t.metric))
        return out[order]

    def actions_distribution(self) -> pd.DataFrame:
        """P(actions = k): combatants as rows, k as columns."""
        t = self.table[self.table.metric.str.startswith("actions_dist.")].copy()
        t["k"] = t.metric.str.slice(len("actions_dist.")).astype(int)
        out = t.pivot(index="combatant", columns="k", values="mean")
        return out.reindex(index=list(self.scenario.names))

    def acts_before(self) -> pd.DataFrame:
        """P(row acts strictly before column)."""
        t = self.table[self.table.metric.str.startswith("acts_before.")].copy()
        t["other"] = t.metric.str.slice(len("acts_before."))
        out = t.pivot(index="combatant", columns="other", values="mean")
        names = list(self.scenario.names)
        return out.reindex(index=names, columns=names)

    def summary(self) -> dict[str, Any]:
        """The summary.json document: exactly the top-level keys of DESIGN.md."""
        from simkit import __version__

        combatants: dict[str, Any] = {}
        for c in self.scenario.combatants:
            combatants[c.name] = {
                "side": c.side,
                "metrics": {},
                "acts_before": {},
                "actions_distribution": {},
            }
        scenario_metrics: dict[str, Any] = {}
        for who, metric, *numbers in self.rows:
            est = Estimate(*numbers).as_dict()
            if who == SCENARIO_ROW:
                scenario_metrics[metric] = est
            elif metric.startswith("acts_before."):
                combatants[who]["acts_before"][metric[len("acts_before.") :]] = est
            elif metric.startswith("actions_dist."):
                combatants[who]["actions_distribution"][metric[len("actions_dist.") :]] = est
            else:
                combatants[who]["metrics"][metric] = est
        return {
            "simkit_version": __version__,
            "scenario": self.scenario.name,
            "system": self.scenario.system,
            "rounds": self.rounds,
            "seed": self.seed,
            "rules": dict(self.scenario.rules),
            "combatants": combatants,
            "scenario_metrics": scenario_metrics,
            "elapsed_s": round(self.elapsed_s, 4),
            "rounds_per_s": round(self.rounds_per_s, 1),
        }

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write summary.json and metrics.csv into ``out_dir`` atomically."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        files = {
            out / "summary.json": json.dumps(self.summary(), indent=2, allow_nan=False) + "\n",
            out / "metrics.csv": self.metrics_csv(),
        }
        write_atomically(files)
        return list(files)

    def metrics_csv(self) -> str:
        """metrics.csv: the tidy table, numbers to 10 significant digits, NaN empty."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(COLUMNS)
        for who, metric, *numbers in self.rows:
            writer.writerow([who, metric, *("" if x != x else f"{x:.10g}" for x in numbers)])
        return buf.getvalue()

    def format_table(self) -> str:
        """A readable per-combatant table (mean ± 95% half-width)."""
        per: dict[str, dict[str, tuple[float, float]]] = {}
        for who, metric, mean, se, _, _ in self.rows:
            if who != SCENARIO_ROW and "." not in metric:
                per.setdefault(who, {})[metric] = (mean, se)
        metrics = list(dict.fromkeys(m for cells in per.values() for m in cells))
        header = ["combatant", "side", *metrics]
        lines = []
        for c in self.scenario.combatants:
            cells = [c.name, c.side]
            for m in metrics:
                cells.append(_fmt(m, *per[c.name][m]))
            lines.append(cells)
        widths = [max(len(str(x)) for x in col) for col in zip(header, *lines, strict=True)]
        text = [
            "  ".join(str(h).ljust(w) for h, w in zip(header, widths, strict=True)),
            "  ".join("-" * w for w in widths),
        ]
        for cells in lines:
            text.append("  ".join(str(x).ljust(w) for x, w in zip(cells, widths, strict=True)))
        for who, metric, mean, se, _, _ in self.rows:
            if who == SCENARIO_ROW:
                text.append(f"{metric}: {_fmt(metric, mean, se)}")
        text.append(
            f"{self.rounds:,} rounds, seed {self.seed}, {self.elapsed_s:.2f} s "
            f"({self.rounds_per_s:,.0f} rounds/s, {self.workers} worker"
            f"{'s' if self.workers != 1 else ''}); ± is the 95% interval half-width"
        )
        return "\n".join(text)


def _fmt(metric: str, mean: float, se: float) -> str:
    if mean != mean:
        return "n/a"
    half = 1.959963984540054 * se if se == se else float("nan")
    if metric in PROBABILITIES:
        return f"{100 * mean:.2f}% ±{100 * half:.2f}"
    return f"{mean:.4f} ±{half:.4f}"


def write_atomically(files: dict[Path, str]) -> None:
    """Write every file to a temporary name first, then rename them all into place."""
    temps: list[tuple[str, Path]] = []
    try:
        for path, text in files.items():
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            temps.append((tmp, path))
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        for tmp, path in temps:
            os.replace(tmp, path)
    finally:
        for tmp, _ in temps:
            if os.path.exists(tmp):
                os.unlink(tmp)
