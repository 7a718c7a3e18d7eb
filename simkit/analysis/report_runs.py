"""Reports: what a report of one scenario simulates, and the public ``report`` call.

:func:`report` runs these simulations, every one from the same seed, so that they see
the same dice round by round (common random numbers):

1. the scenario as written (the main result);
2. for every combatant -- or ``count`` group, as a whole -- whose policy differs from
   the default (``System.policies``; its system's waiting rule, readiness ``hold`` or
   vtm ``delay``, is switched off by ``System.never_waits()``), the scenario with that
   one policy set back.  Paired with the main run it gives the policy's cost and
   benefit, as written minus the alternative;
3. the policy search (``simkit policies``, at most ``POLICY_ROUNDS`` rounds a variant):
   every value of every policy field of every combatant, the others as written, and the
   best for its side's default objective, which says whether the policies as written
   are an equilibrium of single changes;
4. the sweep: by default, for each side, its members' main stat (``System.main_field``)
   shifted by -2 .. +2, clipped to the allowed range (a clipped duplicate is not run
   again), each point paired with the main run.  With ``vary`` the designer's own grid
   replaces it (``simkit sweep``), and with ``target`` it is a ``simkit tune``;
5. the sensitivity (``analysis/sensitivity.py``, ``simkit sensitivity``): each
   combatant's main stat (a group as one) one point up and down and each alternative of
   each rule, at the report's rounds, paired with the main run; a variant that is a
   point of the default sweep already (a side of one group) is not run again.

Runs 1, 2, 4 (default sweep) and 5 are batched for the paired intervals and played side by
side, one per core.  Everything else -- findings, tables, plots (``simkit.output
.report``) -- only renders these results.  Files are written atomically, and a bad
scenario, spec or target writes nothing at all.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simkit import systems
from simkit.analysis import sensitivity as sens
from simkit.analysis.compare import Comparison, batch_size, paired_comparison
from simkit.analysis.result import Result
from simkit.analysis.run import as_scenario
from simkit.deferred import pandas as pd
from simkit.engine import RngLike, layout_for, seed_sequence, seed_value, simulate
from simkit.engine.core import default_workers
from simkit.output.files import OutputDir
from simkit.scenario import Combatant, Scenario, ScenarioError, with_changes

if TYPE_CHECKING:
    from simkit.analysis.policies import PolicySearch
    from simkit.analysis.sweep import SweepResult
    from simkit.analysis.tune import Tuning
    from simkit.output.report_document import Report

OFFSETS = (-1, 1, -2, 2)  # by size first: a clipped duplicate keeps the smaller offset
MAX_CHANGES = 8  # policy comparisons per report (scenario order, waiting first)
POLICY_ROUNDS = 50_000  # rounds of each variant of a report's policy search (at most)
MAX_BATCHES = 64
MAX_KNOB_RUNS = 32  # sensitivity runs of a report (every rule alternative, stats in order)


def _paired(metric: str) -> bool:
    """The rows a report pairs: every metric but the per-pair ``acts_before.X`` and the
    ``actions_dist.k`` (hundreds of combatants would make them most of the work)."""
    return not metric.startswith(("acts_before.", "actions_dist."))


BATCH_BYTES = 48 * 2**20  # the batch sums a paired run may keep


@dataclass(frozen=True)
class PolicyChange:
    """One policy as written and the alternative it is compared with.

    ``who`` is a group (every copy changes together) or one combatant; ``fields`` are
    (field, as written, alternative) triples; ``waiting`` marks the system's waiting rule.
    """

    who: str
    level: str  # "group" (a count group as a whole) or "combatant"
    members: tuple[str, ...]
    side: str
    fields: tuple[tuple[str, Any, Any], ...]
    waiting: bool
    scenario: Scenario

    @property
    def label(self) -> str:
        """``Gunnar.hold=until_attacked vs never``."""
        return ", ".join(f"{self.who}.{f}={_text(a)} vs {_text(b)}" for f, a, b in self.fields)


@dataclass(frozen=True)
class PolicyEffect:
    """A policy change and its paired comparison: A = the alternative, B = as written,
    so that ``difference`` is as written minus the alternative."""

    change: PolicyChange
    comparison: Comparison


@dataclass(frozen=True)
class SweepPoint:
    """One point of a side's default sweep: the changed scenario and, once run, its
    result and its paired comparison with the main run (the point minus as written), per
    side only."""

    side: str
    offset: int
    values: dict[str, tuple[int, int]]  # member -> (stat as written, stat here)
    scenario: Scenario
    result: Result | None = None
    comparison: Comparison | None = None


@dataclass(frozen=True)
class Plan:
    """The runs a report makes, known (and checked) before anything is simulated."""

    scenario: Scenario
    rounds: int
    changes: tuple[PolicyChange, ...]
    left_out: tuple[PolicyChange, ...]
    stat: str
    sweeps: dict[str, list[SweepPoint]]
    vary: tuple[str, ...] = ()
    target: str | None = None
    grid_points: int = 0
    batch_rounds: int = 1
    sensitivity: sens.Plan | None = None
    # per sensitivity variant: the index of the sweep point it equals, or -1 (its own run)
    shared: tuple[int, ...] = ()
    policy_variants: int = 0  # runs of the policy search (the scenario as written included)

    @property
    def holders(self) -> tuple[str, ...]:
        """The combatants that wait (the system's waiting rule) as written."""
        return tuple(m for c in self.changes if c.waiting for m in c.members)

    @property
    def runs(self) -> int:
        own = sum(1 for k in self.shared if k < 0)
        points = sum(len(p) for p in self.sweeps.values())
        return 1 + len(self.changes) + points + self.grid_points + own

    @property
    def policy_rounds(self) -> int:
        return min(self.rounds, POLICY_ROUNDS)

    @property
    def total_rounds(self) -> int:
        return self.rounds * self.runs + self.policy_rounds * self.policy_variants


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):  # a list of names (readiness guard, R7a)
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def _stat_field(scenario: Scenario, c: Combatant) -> str:
    """The field that moves the main stat of ``c`` (the system decides: vtm moves
    ``dexterity`` where the file gives dexterity and wits)."""
    return systems.get(scenario.system).stat_field(c.params, c.given)


def _stat(scenario: Scenario, c: Combatant) -> int:
    return systems.get(scenario.system).stat(c.params)


def _sweep_points(scenario: Scenario, side: str) -> list[SweepPoint]:
    system = systems.get(scenario.system)
    members = [c for c in scenario.combatants if c.side == side]
    seen = {tuple(_stat(scenario, c) for c in members)}
    points = []
    for offset in OFFSETS:
        changes: dict[str, dict[str, int]] = {}
        values: dict[str, tuple[int, int]] = {}
        for c in members:
            name = _stat_field(scenario, c)
            spec = system.fields[name]
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


def policy_changes(scenario: Scenario) -> list[PolicyChange]:
    """Every policy that differs from its default, per group where the copies agree
    (waiting rules first, then the other policies, each in scenario order)."""
    system = systems.get(scenario.system)
    stop = system.never_waits()
    waiting: list[PolicyChange] = []
    other: list[PolicyChange] = []
    for group in scenario.groups:
        members = [c for c in scenario.combatants if c.group == group]
        buckets: dict[tuple[Any, ...], list[Combatant]] = {}
        for c in members:
            buckets.setdefault(tuple(c.params.get(p) for p in system.policies), []).append(c)
        for chosen in buckets.values():
            whole = len(chosen) == len(members)
            units = [(group, chosen)] if whole else [(c.name, [c]) for c in chosen]
            for who, cs in units:
                params = cs[0].params
                level = "group" if len(cs) > 1 else "combatant"
                names = tuple(c.name for c in cs)
                if system.waits(params):
                    fields = tuple((f, params[f], v) for f, v in stop.items() if params[f] != v)
                    if fields:
                        waiting.append(
                            _change(scenario, who, level, names, cs[0].side, fields, True)
                        )
                for p in system.policies:
                    if p in stop:
                        continue
                    default = system.fields[p].default
                    if params[p] != default and isinstance(default, str | int | float | bool):
                        fields = ((p, params[p], default),)
                        other.append(
                            _change(scenario, who, level, names, cs[0].side, fields, False)
                        )
    return waiting + other


def _change(
    scenario: Scenario,
    who: str,
    level: str,
    members: tuple[str, ...],
    side: str,
    fields: tuple[tuple[str, Any, Any], ...],
    waiting: bool,
) -> PolicyChange:
    variant = with_changes(scenario, combatants={who: {f: alt for f, _, alt in fields}})
    return PolicyChange(who, level, members, side, fields, waiting, variant)


def _batch_rounds(scenario: Scenario, rounds: int) -> int:
    """Rounds per batch of the paired runs: at most MAX_BATCHES batches, fewer for
    scenarios whose batch sums are large (hundreds of combatants)."""
    layout = layout_for(scenario)
    per_batch = 8 * (3 * layout.size + 3 * len(layout.pairs) + 8)
    batches = max(8, min(MAX_BATCHES, BATCH_BYTES // max(per_batch, 1)))
    return max(batch_size(rounds), math.ceil(rounds / batches))


def plan(
    scenario: Scenario,
    rounds: int,
    vary: Sequence[str] | str | None = None,
    target: str | None = None,
    labels: tuple[str, str] = ("vary", "target"),
) -> Plan:
    """Every run a report of ``scenario`` makes (simulates nothing).

    Raises
    ------
    ScenarioError
        For a bad ``vary`` spec or grid point, more than two varied fields, a bad
        ``target``, or a ``target`` without ``vary`` (messages name ``labels``).
    """
    system = systems.get(scenario.system)
    changes = policy_changes(scenario)
    vary_specs: tuple[str, ...] = ()
    grid = 0
    if target is not None and not vary:
        raise ScenarioError(
            f"{labels[1]}: a target needs the field(s) to vary; give {labels[0]} too, e.g. "
            f"{labels[0]} 'Wolf.readiness=+0..+3'"
        )
    if vary:
        from simkit.scenario import grid_scenarios, parse_vary

        vary_specs = (vary,) if isinstance(vary, str) else tuple(vary)
        axes = parse_vary(scenario, list(vary_specs), labels[0], most=2, what="a report")
        grid = len(grid_scenarios(scenario, axes, labels[0]))
        if target is not None:
            from simkit.analysis.targets import parse_target
            from simkit.analysis.tune import available_metrics

            parse_target(scenario, target, available_metrics(scenario), label=labels[1])
        sweeps: dict[str, list[SweepPoint]] = {}
    else:
        sweeps = {side: _sweep_points(scenario, side) for side in scenario.sides}
    knobs = _report_knobs(sens.plan(scenario))
    points = [p.scenario for ps in sweeps.values() for p in ps]
    shared = tuple(_index(points, v.scenario) for v in knobs.variants)
    return Plan(
        scenario,
        rounds,
        tuple(changes[:MAX_CHANGES]),
        tuple(changes[MAX_CHANGES:]),
        system.main_field,
        sweeps,
        vary_specs,
        target,
        grid,
        _batch_rounds(scenario, rounds),
        knobs,
        shared,
        _policy_variants(scenario),
    )


def _report_knobs(knobs: sens.Plan) -> sens.Plan:
    """At most MAX_KNOB_RUNS variants: every rule alternative, then the main stats of the
    combatants in scenario order; those left out are said (``simkit sensitivity`` plays
    them all)."""
    if len(knobs.variants) <= MAX_KNOB_RUNS:
        return knobs
    rules = [v for v in knobs.variants if v.kind == sens.RULE]
    stats = [v for v in knobs.variants if v.kind == sens.STAT]
    room = max(0, MAX_KNOB_RUNS - len(rules))
    kept = stats[:room]
    if kept and len(kept) < len(stats) and kept[-1].who == stats[len(kept)].who:
        kept = kept[:-1]  # a combatant's two steps together
    left = list(dict.fromkeys(v.who for v in stats[len(kept) :]))
    note = (
        f"the main stat of {len(left)} more combatants or groups ({', '.join(left[:5])}"
        f"{', ...' if len(left) > 5 else ''}) is not varied here, to keep the report's run "
        "time modest (simkit sensitivity varies every one)"
    )
    return sens.Plan(knobs.scenario, (*kept, *rules), (*knobs.skipped, note))


def _index(scenarios: Sequence[Scenario], scenario: Scenario) -> int:
    """The index of the first of ``scenarios`` equal to ``scenario``, else -1."""
    return next((k for k, s in enumerate(scenarios) if s == scenario), -1)


def _policy_variants(scenario: Scenario) -> int:
    """Runs of the report's policy search: as written, and every other value."""
    from simkit.analysis.policies import coordinates

    coords = coordinates(scenario)
    return 1 + sum(len(c.values) - 1 for c in coords) if coords else 0


def planned_rounds(
    scenario: Scenario,
    rounds: int | None = None,
    vary: Sequence[str] | str | None = None,
    target: str | None = None,
) -> int:
    """Total rounds a report simulates (for a progress bar)."""
    return plan(scenario, scenario.rounds if rounds is None else rounds, vary, target).total_rounds


@dataclass(frozen=True)
class ReportData:
    """Every result a report renders."""

    plan: Plan
    result: Result
    policies: tuple[PolicyEffect, ...] = ()
    sweeps: dict[str, list[SweepPoint]] = field(default_factory=dict)  # offset 0 included
    sweep: SweepResult | None = None  # the designer's grid (vary)
    tuning: Tuning | None = None  # with a target
    sensitivity: sens.Sensitivity | None = None  # each stat +-1, each rule alternative
    best_policies: PolicySearch | None = None  # every combatant's best policy

    @property
    def scenario(self) -> Scenario:
        return self.result.scenario

    def holding_table(self) -> pd.DataFrame:
        """Every policy's paired effect, as written minus the alternative, per combatant,
        group and side (holding.csv)."""
        frames = []
        for effect in self.policies:
            c = effect.comparison
            for level in ("combatant", "group", "side"):
                t = c.level_table(level)
                frames.append(
                    pd.DataFrame(
                        {
                            "policy": effect.change.label,
                            "level": level,
                            "name": t[level if level in t else "combatant"],
                            "metric": t.metric,
                            "as_written": t.mean_b,
                            "alternative": t.mean_a,
                            "difference": t.difference,
                            "se_paired": t.se_paired,
                            "ci_low": t.ci_low,
                            "ci_high": t.ci_high,
                        }
                    )
                )
        if not frames:
            return pd.DataFrame(columns=HOLDING_COLUMNS)
        return pd.concat(frames, ignore_index=True)[HOLDING_COLUMNS]


HOLDING_COLUMNS = [
    "policy",
    "level",
    "name",
    "metric",
    "as_written",
    "alternative",
    "difference",
    "se_paired",
    "ci_low",
    "ci_high",
]


def simulate_report(
    scenario: Scenario,
    rounds: int,
    rng: RngLike,
    *,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    vary: Sequence[str] | str | None = None,
    target: str | None = None,
) -> ReportData:
    """Play every run of :func:`plan` (see the module docstring)."""
    the_plan = plan(scenario, rounds, vary, target)
    seq = seed_sequence(scenario.seed if rng is None else rng)  # one stream for every run
    seed = seed_value(seq)
    batch = the_plan.batch_rounds
    lock = threading.Lock()

    def count(n: int) -> None:
        if progress is not None:
            with lock:
                progress(n)

    variants: list[Scenario] = [c.scenario for c in the_plan.changes]
    variants += [p.scenario for points in the_plan.sweeps.values() for p in points]
    knobs = the_plan.sensitivity
    first_point = len(the_plan.changes)
    wanted: list[int] = []  # the run (index into variants) of each sensitivity variant
    for v, k in zip(knobs.variants if knobs else (), the_plan.shared, strict=True):
        if k < 0:
            wanted.append(len(variants))
            variants.append(v.scenario)
        else:
            wanted.append(first_point + k)
    measures = sens.default_measures(scenario)
    terms: dict[int, sens.Terms] = {}
    n_swept = sum(len(p) for p in the_plan.sweeps.values())
    threads = max(1, min(workers or default_workers(), 1 + len(variants)))
    effects: list[PolicyEffect] = []
    swept: list[tuple[Result, Comparison]] = []
    pool = ThreadPoolExecutor(max_workers=threads)
    try:
        # Batched runs are single-threaded: one run per core, the main run first.
        play = functools.partial(simulate, workers=1, progress=count, batch_rounds=batch)
        main_future = pool.submit(play, scenario, rounds, seq)
        futures = [pool.submit(play, s, rounds, seq) for s in variants]
        raw_main = main_future.result()
        result = Result.from_raw(scenario, seed, raw_main)
        base_terms = sens.measure_terms(raw_main, measures)
        wanted_set = set(wanted)
        for k, future in enumerate(futures):
            raw = future.result()
            futures[k] = None  # type: ignore[call-overload]  # let its batch sums go
            if k in wanted_set:
                terms[k] = sens.measure_terms(raw, measures)
            if k >= first_point + n_swept:
                del raw
                continue  # a sensitivity variant only
            other = Result.from_raw(variants[k], seed, raw)
            if k < len(the_plan.changes):
                change = the_plan.changes[k]
                comparison = paired_comparison(
                    other, raw, result, raw_main, change.label, "as written", batch, _paired
                )
                effects.append(PolicyEffect(change, comparison))
            else:
                comparison = paired_comparison(
                    result, raw_main, other, raw, "as written", "swept", batch, _paired, ("side",)
                )
                swept.append((other, comparison))
            del raw
    finally:
        # On Ctrl-C do not wait for the queued runs (running ones end with their run).
        pool.shutdown(wait=False, cancel_futures=True)
    sweeps: dict[str, list[SweepPoint]] = {}
    k = 0
    for side, points in the_plan.sweeps.items():
        done = []
        for p in points:
            res, comparison = swept[k]
            k += 1
            done.append(SweepPoint(p.side, p.offset, p.values, p.scenario, res, comparison))
        same = {c.name: (_stat(scenario, c),) * 2 for c in scenario.combatants if c.side == side}
        done.append(SweepPoint(side, 0, same, scenario, result))
        sweeps[side] = sorted(done, key=lambda p: p.offset)
    grid = tuning = None
    if the_plan.vary:
        if the_plan.target is not None:
            from simkit.analysis.tune import tune

            tuning = tune(
                scenario,
                list(the_plan.vary),
                the_plan.target,
                rounds=rounds,
                rng=seq,
                workers=workers,
                progress=count,
                max_rounds=rounds,  # the planned rounds: an undecided value says what it needs
            )
            grid = tuning.sweep
        else:
            from simkit.analysis.sweep import sweep

            grid = sweep(
                scenario,
                list(the_plan.vary),
                rounds=rounds,
                rng=seq,
                workers=workers,
                progress=count,
            )
    sensitivity = None
    if knobs is not None:
        done = [terms[k] for k in wanted]
        sensitivity = sens.assemble(knobs, measures, base_terms, done, rounds, seed, batch)
    best = None
    if the_plan.policy_variants:
        from simkit.analysis.policies import policies

        best = policies(
            scenario,
            rounds=the_plan.policy_rounds,
            rng=seq,
            workers=min(2, workers or default_workers()),
            progress=count,
        )
    return ReportData(the_plan, result, tuple(effects), sweeps, grid, tuning, sensitivity, best)


def make_report(
    scenario_or_path: Scenario | str | Path,
    rounds: int | None = None,
    rng: RngLike = None,
    *,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    vary: Sequence[str] | str | None = None,
    target: str | None = None,
) -> Report:
    """Simulate and render a report in memory (see :func:`report`); writes nothing."""
    from simkit.output.report_document import build_report

    scenario = as_scenario(scenario_or_path)
    rounds = scenario.rounds if rounds is None else rounds
    data = simulate_report(
        scenario, rounds, rng, workers=workers, progress=progress, vary=vary, target=target
    )
    return build_report(data)


def report(
    scenario_or_path: Scenario | str | Path,
    out_dir: str | Path,
    rounds: int | None = None,
    rng: RngLike = None,
    *,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    vary: Sequence[str] | str | None = None,
    target: str | None = None,
) -> Path:
    """Simulate a scenario and write its report into ``out_dir``.

    Parameters
    ----------
    scenario_or_path : Scenario or path
        A scenario or the path of a TOML scenario file (validated before anything runs).
    out_dir : path
        Created if needed.  Receives report.html (self-contained), report.md with its
        PNG plots, and metrics.csv, sides.csv, groups.csv, acts_before.csv,
        actions_distribution.csv, holding.csv and sweep.csv; the directory changes as a
        whole.
    rounds : int, optional
        Rounds of every run (default: the scenario's ``rounds``).
    rng : numpy Generator, SeedSequence, int or None, optional
        One source of randomness for every run (default: the scenario's ``seed``).
    workers : int, optional
        Runs played at once (default: all cores).
    progress : callable, optional
        Called with the number of rounds of each finished chunk, over all runs
        (:func:`planned_rounds` is the total).
    vary : str or list of str, optional
        The designer's sweep instead of the default one: ``"Wolf.readiness=+0..+3"``
        (one or two fields, as for :func:`simkit.sweep`).
    target : str, optional
        A balance target for ``vary``, as for :func:`simkit.tune`:
        ``"side:wolves.actions / side:party.actions = 1"``.

    Returns
    -------
    Path
        The path of report.html.
    """
    out = OutputDir(out_dir, "out_dir")  # checked before anything runs
    rendered = make_report(  # specs checked (plan) before anything runs
        scenario_or_path, rounds, rng, workers=workers, progress=progress, vary=vary, target=target
    )
    out.write(rendered.files)
    return out.path / "report.html"
