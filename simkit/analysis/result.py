"""Results as values: the estimates of one run plus metadata, readable per combatant,
per group and per side, rendered to JSON, CSV, text, HTML and plots."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from simkit.engine import RawRun
from simkit.metrics import (
    COMBATANT,
    GROUP,
    LEVELS,
    SIDE,
    Estimate,
    Layout,
    Sums,
    estimates,
    level_estimates,
    metric_slots,
    slots_estimate,
)
from simkit.metrics.estimates import ROUNDS
from simkit.output import files as output_files
from simkit.output import result_files
from simkit.output.result_files import COLUMNS, SCENARIO_ROW
from simkit.scenario import Scenario, suggest

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

STATS = ("mean", "se", "ci_low", "ci_high")

Row = tuple[str, str, float, float, float, float]
RoundRow = tuple[str, str, str, float, float, float, float]  # (round, who, metric, stats)
PER_FIGHT = "fight"  # the round column of a fight's totals


@dataclass(frozen=True)
class Fights:
    """A run in fights of ``fight_rounds`` rounds (R8a): the sums per round index and the
    fights as cycles (engine.fights).  Fights are the independent units: a round index's
    mean has one value per fight, a fight's total is the sum over its rounds."""

    fight_rounds: int
    fights: int
    layout: Layout = field(repr=False)
    per_index: tuple[Sums, ...] = field(repr=False)
    sums: Sums = field(repr=False)  # each fight one cycle of fight_rounds rounds

    @property
    def rounds_note(self) -> str:
        k, f = self.fight_rounds, self.fights
        return (
            f"{f * k:,} rounds = {f:,} fights of {k} rounds (R8a: rounds rounded up to whole "
            "fights; a fight's first round is its opening; fights are the independent units)"
        )

    def rows(self, level: str = COMBATANT) -> list[RoundRow]:
        """Every metric of ``level`` (with the scenario metrics for ``"combatant"``) per
        round index ``"1"`` .. ``"K"``, then per fight (``"fight"``: counts summed over the
        fight's rounds, so a probability becomes the expected number of such rounds; a
        ratio is the ratio of the fight's sums, as over all rounds)."""
        slots = [
            s
            for s in metric_slots(self.layout, level)
            if "." not in s.metric or s.metric.startswith("hasty_scale_ge.")
        ]
        out: list[RoundRow] = []
        for j, sums in enumerate(self.per_index):
            for s in slots:
                e = slots_estimate(self.layout, sums, s)
                out.append((str(j + 1), s.who, s.metric, e.mean, e.se, e.ci_low, e.ci_high))
        per_fight = fight_totals(self.sums)
        for s in slots:
            if s.den == ROUNDS:
                s = dataclasses.replace(s, probability=False)
            e = slots_estimate(self.layout, per_fight, s)
            out.append((PER_FIGHT, s.who, s.metric, e.mean, e.se, e.ci_low, e.ci_high))
        return out


def fight_totals(sums: Sums) -> Sums:
    """Fights as cycles of K rounds -> each fight's totals as one cycle of one unit."""
    c = int(sums.tot[0])
    return Sums(
        sums.s1.copy(),
        sums.s2.copy(),
        sums.s1.copy(),
        sums.sx.copy(),
        np.array([c, c, c], np.int64),
    )


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
    rows: tuple[Row, ...] = field(repr=False)
    elapsed_s: float
    workers: int
    layout: Layout = field(repr=False, compare=False)
    sums: Sums = field(repr=False, compare=False)
    # a run to a precision: how it stopped (simkit.analysis.precision.Stopping)
    stopping: Any = field(default=None, repr=False, compare=False)
    fights: Fights | None = field(default=None, repr=False, compare=False)  # R8a

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

    @classmethod
    def from_raw(cls, scenario: Scenario, seed: int | list[int], raw: RawRun) -> Result:
        result = cls.from_sums(scenario, seed, raw.layout, raw.sums, raw.elapsed_s, raw.workers)
        if raw.fights is None:
            return result
        fights = Fights(
            raw.fights.fight_rounds,
            raw.sums.cycles,
            raw.layout,
            tuple(raw.fights.per_index),
            raw.sums,
        )
        return dataclasses.replace(result, fights=fights)

    def round_rows(self, level: str = COMBATANT) -> list[RoundRow]:
        """Every metric per round index of a fight and per fight (``Fights.rows``); a
        ValueError for a scenario without fight_rounds."""
        if self.fights is None:
            raise ValueError(
                "no results per round: the scenario has no fights (add fight_rounds = K to "
                "[scenario], R8a)"
            )
        return self.fights.rows(level)

    def by_round(self, level: str = COMBATANT) -> pd.DataFrame:
        """``round_rows`` as a tidy table: ``round`` ("1" .. "K", then "fight"), the
        combatant (or ``"side"``, ``"group"``), metric, mean, se, ci_low, ci_high."""
        import pandas as pd

        return pd.DataFrame(self.round_rows(level), columns=["round", level, "metric", *STATS])

    # ------------------------------------------------------------------ tables
    @cached_property
    def table(self) -> pd.DataFrame:
        """The tidy table (built on first use: pandas is imported only when needed)."""
        import pandas as pd

        return pd.DataFrame(list(self.rows), columns=COLUMNS)

    @cached_property
    def _index(self) -> dict[tuple[str, str], Row]:
        return {(r[0], r[1]): r for r in self.rows}

    @property
    def rounds_per_s(self) -> float:
        return self.rounds / self.elapsed_s if self.elapsed_s > 0 else float("nan")

    @property
    def metrics(self) -> list[str]:
        """The per-combatant metrics of this result (no acts_before / actions_dist)."""
        return list(dict.fromkeys(m for w, m, *_ in self.rows if w and "." not in m))

    def estimate(self, combatant: str, metric: str) -> Estimate:
        """One metric's estimate (``combatant=""`` for scenario metrics).

        ``combatant`` may also be ``"group:NAME"`` or ``"side:NAME"``."""
        level, _, name = combatant.partition(":")
        if name and level in (GROUP, SIDE):
            return self._level_estimate(level, name, metric)
        row = self._index.get((combatant, metric))
        if row is None:
            raise KeyError(self._missing(combatant, metric))
        return Estimate(*row[2:])

    def _missing(self, combatant: str, metric: str) -> str:
        names = [*self.scenario.names, SCENARIO_ROW]
        if combatant not in names:
            shown = ", ".join(self.scenario.names)
            return (
                f"no combatant {combatant!r}{suggest(combatant, list(self.scenario.names))}; "
                f"combatants: {shown} ('' for scenario metrics, 'group:NAME', 'side:NAME')"
            )
        known = sorted({m for w, m, *_ in self.rows if w == combatant})
        plain = [m for m in known if "." not in m]
        return (
            f"no metric {metric!r} for {combatant or 'the scenario'!r}"
            f"{suggest(metric, known)}; metrics: {', '.join(plain)}"
            + (" (and acts_before.X, actions_dist.k)" if len(plain) < len(known) else "")
        )

    def mean(self, combatant: str, metric: str) -> float:
        return self.estimate(combatant, metric).mean

    def _check_stat(self, stat: str) -> None:
        if stat not in STATS:
            raise ValueError(
                f"no statistic {stat!r}{suggest(stat, list(STATS))}; allowed: " + ", ".join(STATS)
            )

    def wide(self, stat: str = "mean") -> pd.DataFrame:
        """Combatants as rows and the per-combatant metrics as columns."""
        self._check_stat(stat)
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

    # ------------------------------------------------------------------ groups and sides
    def level_rows(self, level: str) -> list[Row]:
        """Tidy rows of every metric per combatant, group or side."""
        if level not in LEVELS:
            raise ValueError(
                f"no level {level!r}{suggest(level, list(LEVELS))}; allowed: " + ", ".join(LEVELS)
            )
        if level == COMBATANT:
            return [r for r in self.rows if r[0] != SCENARIO_ROW and "." not in r[1]]
        return [
            (who, metric, e.mean, e.se, e.ci_low, e.ci_high)
            for who, metric, e in level_estimates(self.layout, self.sums, level)
        ]

    def by(self, level: str) -> pd.DataFrame:
        """Tidy table per ``"combatant"``, ``"group"`` or ``"side"``: counts summed over
        the members, probabilities as "any member", ratios of the summed counts, and per
        side its action economy (its actions over its opponents' actions)."""
        import pandas as pd

        rows = self.level_rows(level)
        return pd.DataFrame(rows, columns=[level, "metric", *STATS])

    def _level_estimate(self, level: str, name: str, metric: str) -> Estimate:
        names = self.layout.level_names(level)
        if name not in names:
            raise KeyError(
                f"no {level} {name!r}{suggest(name, names)}; {level}s: {', '.join(names)}"
            )
        for who, m, *numbers in self.level_rows(level):
            if who == name and m == metric:
                return Estimate(*numbers)
        known = [m for who, m, *_ in self.level_rows(level) if who == name]
        raise KeyError(
            f"no metric {metric!r} for {level} {name!r}{suggest(metric, known)}; metrics: "
            + ", ".join(known)
        )

    # ------------------------------------------------------------------ documents
    def summary(self) -> dict[str, Any]:
        """The summary.json document (see simkit.output.result_files.summary)."""
        return result_files.summary(self)

    def metrics_csv(self) -> str:
        """metrics.csv: the tidy table, numbers to 10 significant digits, NaN empty."""
        return result_files.metrics_csv(self)

    def files(self) -> dict[str, str]:
        """The files ``write`` writes, by name."""
        return result_files.run_files(self)

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write summary.json and metrics.csv into the result directory ``out_dir`` (the
        directory changes as a whole: see simkit.output.files)."""
        return output_files.OutputDir(out_dir, "out_dir").write(self.files())

    def format_table(self, **options: Any) -> str:
        """The table ``simkit run`` prints."""
        from simkit.output.terminal import result_table

        return result_table(self, **options)

    def _repr_html_(self) -> str:
        from simkit.output.notebook import result_html

        return result_html(self)

    def plot(self, metric: str = "first_action", by: str = COMBATANT) -> Figure:
        """One metric per combatant, group or side with its 95% interval (a Figure)."""
        from simkit.output.plots import result_figure

        return result_figure(self, metric=metric, by=by)
