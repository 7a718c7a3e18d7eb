"""Reports: what a report of one scenario simulates, and the public ``report`` call.

:func:`report` runs exactly these simulations, every one from the same seed, so
that they see the same dice round by round (common random numbers):

1. the scenario as written (the main result);
2. only if some combatant waits (its system's waiting rule: readiness holds, vtm
   delays): ``simkit.compare`` of the scenario against a copy in which nobody waits
   (paired differences);
3. the sweep: for each side, its members' initiative stat shifted by -2 .. +2 (the
   system's ``main_field``), clipped to the allowed range; the offset 0 point is the
   main result.

Everything else (findings, tables, plots: ``simkit.output.report``) only renders those
results.  Files are written atomically, and a bad scenario writes nothing at all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from simkit import systems
from simkit.analysis.result import Result
from simkit.analysis.run import as_scenario, run
from simkit.deferred import pandas as pd
from simkit.engine import RngLike, seed_sequence
from simkit.output.report import Report, build_report
from simkit.scenario import Combatant, Scenario, with_changes

OFFSETS = (-1, 1, -2, 2)  # by size first: a clipped duplicate keeps the smaller offset


@dataclass(frozen=True)
class SweepPoint:
    """One point of a side's sweep: the changed scenario and, once run, its result."""

    side: str
    offset: int
    values: dict[str, tuple[int, int]]  # member -> (stat as written, stat here)
    scenario: Scenario
    result: Result | None = None


@dataclass(frozen=True)
class Plan:
    """The runs a report makes, known before anything is simulated."""

    scenario: Scenario
    rounds: int
    holders: tuple[str, ...]
    holding: bool
    holding_note: str
    stat: str
    sweeps: dict[str, list[SweepPoint]]

    @property
    def total_rounds(self) -> int:
        runs = 1 + sum(len(points) for points in self.sweeps.values())
        return self.rounds * (runs + (2 if self.holding else 0))


def _stat_field(scenario: Scenario, c: Combatant) -> str:
    """The field that moves the main stat of ``c`` (the system decides: vtm moves
    ``dexterity`` where the file gives dexterity and wits)."""
    return systems.get(scenario.system).stat_field(c.params, c.given)


def _stat(scenario: Scenario, c: Combatant) -> int:
    return systems.get(scenario.system).stat(c.params)


def _sweep_points(scenario: Scenario, side: str) -> list[SweepPoint]:
    members = [c for c in scenario.combatants if c.side == side]
    seen = {tuple(_stat(scenario, c) for c in members)}
    points = []
    for offset in OFFSETS:
        changes: dict[str, dict[str, int]] = {}
        values: dict[str, tuple[int, int]] = {}
        for c in members:
            name = _stat_field(scenario, c)
            spec = systems.get(scenario.system).fields[name]
            low = int(spec.low if spec.low is not None else 0)
            high = int(spec.high if spec.high is not None else 10**9)
            new = min(max(int(c[name]) + offset, low), high)
            if new != c[name]:
                changes[c.name] = {name: new}
            old_stat = _stat(scenario, c)
            values[c.name] = (old_stat, old_stat + new - int(c[name]))
        key = tuple(v[1] for v in values.values())
        if key in seen:
            continue
        seen.add(key)
        variant = with_changes(scenario, combatants=changes)
        points.append(SweepPoint(side, offset, values, variant))
    return sorted(points, key=lambda p: p.offset)


def plan(scenario: Scenario, rounds: int) -> Plan:
    """Every run a report of ``scenario`` makes (simulates nothing)."""
    system = systems.get(scenario.system)
    holders = tuple(c.name for c in scenario.combatants if system.waits(c.params))
    holding = bool(holders)
    if not system.waiting_words:
        note = f"The {system.name} system has no rule for waiting."
    elif not holders:
        note = f"Nobody waits ({system.waiting_words}) in this scenario."
    else:
        note = ""
    sweeps = {side: _sweep_points(scenario, side) for side in scenario.sides}
    return Plan(scenario, rounds, holders, holding, note, system.main_field, sweeps)


def planned_rounds(scenario: Scenario, rounds: int | None = None) -> int:
    """Total rounds a report simulates (for a progress bar)."""
    return plan(scenario, scenario.rounds if rounds is None else rounds).total_rounds


@dataclass(frozen=True)
class ReportData:
    """Every result a report renders."""

    plan: Plan
    result: Result
    comparison: pd.DataFrame | None  # Comparison.table of written vs hold = "never"
    sweeps: dict[str, list[SweepPoint]]  # with results, offset 0 included

    @property
    def scenario(self) -> Scenario:
        return self.result.scenario

    def holding_effects(self) -> pd.DataFrame:
        """Effect of holding: as written minus hold = "never", with its paired interval."""
        if self.comparison is None:
            return pd.DataFrame(columns=["combatant", "metric", "effect", "ci_low", "ci_high"])
        t = self.comparison
        # compare(a, b) gives B - A with a = as written, b = hold "never": holding is A - B.
        sign = -1.0
        diff = t["difference"] if "difference" in t else t["diff"]
        return pd.DataFrame(
            {
                "combatant": t.combatant,
                "metric": t.metric,
                "effect": sign * diff,
                "ci_low": sign * t.ci_high,
                "ci_high": sign * t.ci_low,
                "se": t.se_paired,
            }
        )


def simulate_report(
    scenario: Scenario,
    rounds: int,
    rng: RngLike,
    *,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> ReportData:
    """Run the main result, the holding comparison and the sweep (see the module doc)."""
    the_plan = plan(scenario, rounds)
    seq = seed_sequence(scenario.seed if rng is None else rng)  # one stream for every run
    result = run(scenario, rounds, seq, workers=workers, progress=progress)
    comparison = None
    if the_plan.holding:
        from simkit.analysis.compare import compare

        never = with_changes(
            scenario,
            combatants={
                name: systems.get(scenario.system).never_waits() for name in the_plan.holders
            },
        )
        comparison = compare(scenario, never, rounds=rounds, rng=seq, progress=progress).table
    sweeps: dict[str, list[SweepPoint]] = {}
    for side, points in the_plan.sweeps.items():
        done = [
            SweepPoint(
                p.side,
                p.offset,
                p.values,
                p.scenario,
                run(p.scenario, rounds, seq, workers=workers, progress=progress),
            )
            for p in points
        ]
        same = {c.name: (_stat(scenario, c),) * 2 for c in scenario.combatants if c.side == side}
        done.append(SweepPoint(side, 0, same, scenario, result))
        sweeps[side] = sorted(done, key=lambda p: p.offset)
    return ReportData(the_plan, result, comparison, sweeps)


def make_report(
    scenario_or_path: Scenario | str | Path,
    rounds: int | None = None,
    rng: RngLike = None,
    *,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> Report:
    """Simulate and render a report in memory (see :func:`report`); writes nothing."""
    scenario = as_scenario(scenario_or_path)
    rounds = scenario.rounds if rounds is None else rounds
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 2:
        raise ValueError(f"rounds must be an integer >= 2, got {rounds!r}")
    data = simulate_report(scenario, rounds, rng, workers=workers, progress=progress)
    return build_report(data)


def report(
    scenario_or_path: Scenario | str | Path,
    out_dir: str | Path,
    rounds: int | None = None,
    rng: RngLike = None,
    *,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> Path:
    """Simulate a scenario and write its report into ``out_dir``.

    Parameters
    ----------
    scenario_or_path : Scenario or path
        A scenario or the path of a TOML scenario file (validated before anything runs).
    out_dir : path
        Created if needed.  Receives report.html (self-contained), report.md with its
        PNG plots, and metrics.csv, acts_before.csv, actions_distribution.csv,
        holding.csv and sweep.csv; every file is written atomically.
    rounds : int, optional
        Rounds of every run (default: the scenario's ``rounds``).
    rng : numpy Generator, SeedSequence, int or None, optional
        One source of randomness for every run (default: the scenario's ``seed``).
    workers : int, optional
        Threads per run (default: all cores).
    progress : callable, optional
        Called with the number of rounds of each finished chunk, over all runs
        (:func:`planned_rounds` is the total).

    Returns
    -------
    Path
        The path of report.html.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"{out}: exists and is not a directory")
    return make_report(scenario_or_path, rounds, rng, workers=workers, progress=progress).write(out)
