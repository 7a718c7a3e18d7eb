"""The public Python API: everything the command line does, callable from Python.

Each function checks its arguments, calls the analysis layer and returns a value
object (:class:`~simkit.analysis.result.Result`, ``SweepResult``, ``Comparison``,
``Tuning``, ``Trace``).

Every argument is checked here, once, where it enters simkit -- from Python or from the
command line (which passes its option name as ``label``): rounds and seeds
(:func:`check_rounds`, :func:`check_seed`), the varied fields of a grid
(:func:`read_grid`), a balance target (:func:`read_target`), changes (:func:`check_set`),
metric names (:func:`check_metrics`) and fixed dice (:func:`read_dice`).  A bad value is
an :class:`ArgumentError` (or, for a spec that names a scenario's fields, a
``ScenarioError``) whose message starts with the label, raised before anything is
simulated.  The analysis layer below trusts what it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from simkit import digits
from simkit.analysis import compare as _compare
from simkit.analysis import policies as _policies
from simkit.analysis import precision as _precision
from simkit.analysis import report_runs as _report
from simkit.analysis import sensitivity as _sensitivity
from simkit.analysis import sweep as _sweep
from simkit.analysis import trace as _trace
from simkit.analysis import tune as _tune
from simkit.analysis.compare import Comparison, Dominance, SideBySide
from simkit.analysis.objectives import Objective, parse_objective
from simkit.analysis.policies import PolicySearch
from simkit.analysis.precision import Precision, PrecisionError
from simkit.analysis.result import Result
from simkit.analysis.run import as_scenario
from simkit.analysis.run import run as _run
from simkit.analysis.sensitivity import Sensitivity
from simkit.analysis.sweep import SweepResult
from simkit.analysis.targets import Target, parse_target
from simkit.analysis.trace import Trace
from simkit.analysis.tune import Tuning
from simkit.analysis.tune import available_metrics as available_metrics_by_level
from simkit.engine import RngLike, layout_for, seed_sequence
from simkit.engine.distributed import Scheduler, SchedulerError
from simkit.metrics import metric_slots
from simkit.scenario import (
    MAX_ROUNDS,
    Scenario,
    ScenarioError,
    apply_set,
    grid_scenarios,
    parse_vary,
    suggest,
    sweep_table,
)
from simkit.scenario.convert import Conversion, MappingError
from simkit.scenario.convert import convert as _convert
from simkit.scenario.specs import VarySpec

__all__ = [
    "MAX_ROUNDS",
    "MAX_SEED",
    "ArgumentError",
    "Comparison",
    "Conversion",
    "Dominance",
    "Grid",
    "Precision",
    "Objective",
    "PolicySearch",
    "Result",
    "Scheduler",
    "SchedulerError",
    "Sensitivity",
    "SideBySide",
    "SweepResult",
    "Trace",
    "Tuning",
    "available_metrics",
    "check_metrics",
    "check_round_metrics",
    "check_rounds",
    "check_seed",
    "check_set",
    "check_trace_rounds",
    "compare",
    "convert",
    "dominance",
    "make_report",
    "precision_rounds",
    "read_dice",
    "read_grid",
    "read_precision",
    "policies",
    "read_dice",
    "read_grid",
    "read_side_objectives",
    "read_target",
    "report",
    "report_rounds",
    "run",
    "sensitivity",
    "sweep",
    "trace",
    "tune",
    "validate",
    "warm_up",
]

MAX_SEED = 2**63 - 1
MAX_TRACE_ROUNDS = 1000
LEVELS = ("combatant", "group", "side")


class ArgumentError(ValueError):
    """A bad argument (a count, a seed, a metric name...); the message starts with the
    argument's name (or option) and says what is allowed."""


# --------------------------------------------------------------------------- the checks
def _prefix(label: str | None) -> str:
    return f"{label}: " if label else ""


def check_count(value: Any, low: int, high: int, label: str | None = None) -> int:
    """An integer in [low, high], given as an int or as text in ASCII digits with an
    optional minus sign (``simkit.digits``: no spaces, no ``+``, no ``_``, no other
    digits)."""
    number: Any = value
    form = ""
    if isinstance(value, str):
        number = int(value) if digits.is_int(value) else None
        form = "" if number is not None else f" ({digits.INTEGER_FORM}, no spaces, no +)"
    if isinstance(number, bool) or not isinstance(number, int) or not low <= number <= high:
        text = digits.shown(value) if isinstance(value, str) else repr(value)
        allowed = f"{low:,} to {high:,}" if high >= 10_000 else f"{low} to {high}"
        raise ArgumentError(f"{_prefix(label)}expected an integer from {allowed}, got {text}{form}")
    return number


def check_rounds(value: Any, label: str | None = "rounds") -> int:
    """Rounds to play: an integer from 1 to MAX_ROUNDS, the bound of a scenario file."""
    return check_count(value, 1, MAX_ROUNDS, label)


def check_trace_rounds(value: Any, label: str | None = "rounds") -> int:
    """Rounds of a trace: an integer from 1 to MAX_TRACE_ROUNDS (1000)."""
    return check_count(value, 1, MAX_TRACE_ROUNDS, label)


def check_seed(value: Any, label: str | None = "seed") -> int:
    """A seed: an integer from 0 to 2**63 - 1."""
    return check_count(value, 0, MAX_SEED, label)


def _rng(rng: RngLike, label: str = "rng") -> RngLike:
    """An integer seed checked; a Generator, SeedSequence or None as given."""
    if isinstance(rng, int):
        return check_seed(rng, label)
    return rng


def _rounds(rounds: Any, label: str = "rounds") -> int | None:
    return None if rounds is None else check_rounds(rounds, label)


def available_metrics(scenario: Scenario, by: str = "combatant") -> list[str]:
    """The metric names of ``scenario`` per combatant, group or side."""
    slots = metric_slots(layout_for(scenario), by)
    return list(dict.fromkeys(s.metric for s in slots if s.who and "." not in s.metric))


def metric_families(scenario: Scenario, by: str = "combatant") -> list[str]:
    """The metric families of ``scenario`` per ``by`` (``acts_before``: one
    ``acts_before.X`` per other combatant; ``actions_dist``: one ``actions_dist.k`` per
    count); a family's name in ``--metrics`` means all of its members."""
    slots = metric_slots(layout_for(scenario), by)
    return list(dict.fromkeys(s.metric.partition(".")[0] for s in slots if "." in s.metric))


def check_metrics(
    scenario: Scenario,
    by: str,
    wanted: Sequence[str] | None,
    label: str = "metrics",
    *,
    families: bool = True,
) -> list[str] | None:
    """``wanted`` checked against the metrics of ``scenario`` per ``by``; with
    ``families`` a family's name (``acts_before``, ``actions_dist``: what
    ``Result.acts_before()`` and ``Result.actions_distribution()`` give) is accepted too
    and means all its members.  A metric read per combatant only, asked per group or
    side, says so."""
    if by not in LEVELS:
        raise ArgumentError(f"by: no level {by!r}; allowed: {', '.join(LEVELS)}")
    if not wanted:
        return None
    available = available_metrics(scenario, by)
    families = metric_families(scenario, by) if families else []
    unknown = [m for m in wanted if m not in available and m not in families]
    if unknown:
        levels = [
            level
            for level in LEVELS
            if level != by
            and unknown[0] in available_metrics(scenario, level) + metric_families(scenario, level)
        ]
        if levels:  # a metric of another level: say which
            where = " or ".join(f"per {level}" for level in levels)
            option = " or ".join(f"--by {level}" for level in levels)
            raise ArgumentError(
                f"{label}: {unknown[0]!r} is read {where} only, not per {by}; give {option}"
            )
    if unknown:
        more = f" (and {', '.join(f + '.*' for f in families)})" if families else ""
        raise ArgumentError(
            f"{label}: no metric {unknown[0]!r}{suggest(unknown[0], available + families)} "
            f"per {by}; available: {', '.join(available)}{more}"
        )
    return list(wanted)


def check_round_metrics(
    scenario: Scenario, wanted: Sequence[str] | None, label: str = "metrics"
) -> list[str] | None:
    """``run --by round``'s ``wanted`` metrics: each one of a combatant, a group, a side
    (``action_economy``) or the scenario (``stalemate``); a family's members by name."""
    if not wanted:
        return None
    scenario_wide = [s.metric for s in metric_slots(layout_for(scenario), "combatant")]
    known = list(
        dict.fromkeys(
            available_metrics(scenario, "combatant")
            + available_metrics(scenario, "side")
            + [m for m in scenario_wide if "." not in m or m.startswith("hasty_scale_ge.")]
        )
    )
    unknown = [m for m in wanted if m not in known]
    if unknown:
        plain = [m for m in known if "." not in m]
        raise ArgumentError(
            f"{label}: no metric {unknown[0]!r}{suggest(unknown[0], known)} per round; "
            f"available: {', '.join(plain)}"
        )
    return list(wanted)


@dataclass(frozen=True)
class Grid:
    """The varied fields of a sweep, tune or report, checked: the specs as given (or the
    scenario file's ``[sweep]`` vary), the axes, the number of points, and the rounds
    per point of the file's ``[sweep]`` table (None if it gives none)."""

    vary: VarySpec
    axes: tuple[Any, ...]
    points: int
    file_rounds: int | None


def read_grid(
    scenario: Scenario,
    vary: VarySpec | None,
    label: str = "vary",
    *,
    most: int | None = None,
    what: str = "a sweep",
) -> Grid:
    """Parse ``vary`` (default: the file's ``[sweep]`` vary) and check every grid point;
    ``most`` bounds the number of varied fields (tune and report: 2)."""
    file_vary, file_rounds = sweep_table(scenario)
    where = label
    if vary is None:
        if file_vary is None:
            raise ScenarioError(
                f"{label}: missing, and {scenario.source} has nothing to vary; give {label} "
                "'COMBATANT.FIELD=VALUES' (e.g. 'Wolf.readiness=1..5') or a [sweep] table "
                "with vary = [...] in the scenario file"
            )
        vary, where = file_vary, f"{scenario.source}: sweep.vary"
    axes = parse_vary(scenario, vary, where, most=most, what=what)
    points = len(grid_scenarios(scenario, axes, where))
    return Grid(vary, tuple(axes), points, file_rounds)


def read_target(
    scenario: Scenario,
    text: str | Target,
    label: str = "target",
    tolerance: str | float | None = None,
    tolerance_label: str = "tolerance",
) -> Target:
    """A balance target (``"side:monsters.actions / side:party.actions = 1"``, with a
    tolerance ``"... = 1 ± 0.05"``, ``+- 0.05`` or ``± 5%``) checked against the metrics
    of ``scenario``; ``tolerance`` (``0.05``, ``"0.05"`` or ``"5%"``) gives the tolerance
    apart (not both)."""
    if isinstance(text, Target):
        if tolerance is not None:
            raise ArgumentError(f"{tolerance_label}: give the tolerance in the target's text")
        return text
    if tolerance is not None and not isinstance(tolerance, str):
        if isinstance(tolerance, bool) or not isinstance(tolerance, int | float):
            raise ArgumentError(
                f"{tolerance_label}: expected a number >= 0 or a percentage ('5%'), "
                f"got {tolerance!r}"
            )
        tolerance = repr(float(tolerance))
    return parse_target(
        scenario,
        text,
        available_metrics_by_level(scenario),
        label=label,
        tolerance=tolerance,
        tolerance_label=tolerance_label,
    )


def read_precision(
    scenarios: Scenario | Sequence[Scenario],
    precision: str | float | Precision | None,
    max_rounds: Any = None,
    rounds: Any = None,
    labels: tuple[str, str, str] = ("precision", "max_rounds", "rounds"),
) -> Precision | None:
    """``precision`` (``"0.001"``, ``0.001`` or ``"0.5%"``) and ``max_rounds`` (default
    10^9) checked: a number > 0, not together with ``rounds``, and ``max_rounds`` at least
    the first block (one chunk of the scenarios, ``simkit.engine.chunk_rounds``).  None
    without a precision (then ``max_rounds`` is refused)."""
    p_label, m_label, r_label = labels
    if precision is None:
        if max_rounds is not None:
            raise ArgumentError(f"{m_label}: goes with {p_label} (a run that stops when precise)")
        return None
    if rounds is not None:
        raise ArgumentError(
            f"{p_label}: give {p_label} or {r_label}, not both ({p_label} chooses the rounds)"
        )
    if isinstance(precision, Precision):
        given = precision
    else:
        try:
            given = _precision.read_precision(precision, label=p_label)
        except PrecisionError as exc:
            raise ArgumentError(str(exc)) from None
    if max_rounds is not None:
        given = Precision(
            given.value, given.relative, given.text, check_count(max_rounds, 1, MAX_ROUNDS, m_label)
        )
    group = [scenarios] if isinstance(scenarios, Scenario) else list(scenarios)
    first = given.first_block(group)
    if given.max_rounds < first:
        raise ArgumentError(
            f"{m_label}: {given.max_rounds:,} is below the first block of {first:,} rounds "
            "(one chunk of the engine); give at least that"
        )
    return given


def read_side_objectives(
    scenario: Scenario,
    texts: str | Objective | Sequence[str | Objective] | None,
    label: str = "objective",
) -> list[Objective]:
    """Objectives (``"side:party.actions - 0.5*side:party.hasty_only"``) checked against
    the metrics of ``scenario``: at most one per side (the side of its first reference)."""
    if texts is None:
        return []
    items = [texts] if isinstance(texts, str | Objective) else list(texts)
    out: list[Objective] = []
    for text in items:
        if isinstance(text, Objective):
            objective = text
        else:
            objective = parse_objective(
                text, scenario, available_metrics_by_level(scenario), label=label
            )
        if any(o.side == objective.side for o in out):
            raise ArgumentError(
                f"{label}: two objectives for side {objective.side!r}; give one per side "
                "(the side of its first reference)"
            )
        out.append(objective)
    return out


def check_set(scenario: Scenario, changes: Any, label: str = "set") -> Scenario:
    """``scenario`` with ``changes`` applied (every change checked)."""
    items = [changes] if isinstance(changes, str) else changes
    return apply_set(scenario, items, label=label)


def read_dice(
    scenario: Scenario, specs: Sequence[str], label: str = "dice"
) -> dict[int, list[int]]:
    """``["Gunnar=6,6,2"]`` checked against who rolls what in ``scenario``."""
    return _trace.parse_dice(scenario, list(specs), label=label)


# --------------------------------------------------------------------------- the commands
def validate(scenario_or_path: Scenario | str | Path) -> Scenario:
    """Load and check a scenario; raises ScenarioError naming every problem."""
    return as_scenario(scenario_or_path)


def run(
    scenario_or_path: Scenario | str | Path,
    rounds: int | None = None,
    rng: RngLike = None,
    *,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    scheduler: Any = None,
    precision: str | float | Precision | None = None,
    max_rounds: int | None = None,
    by: str = "combatant",
    metrics: Sequence[str] | None = None,
) -> Result:
    """Simulate a scenario and estimate every metric with its 95% interval.

    Parameters
    ----------
    scenario_or_path : Scenario or path
        A scenario (``load_scenario``) or the path of a TOML scenario file.
    rounds : int, optional
        Rounds to play; default the scenario's ``rounds``.  A scenario with
        ``fight_rounds`` K (R8a) plays them rounded up to whole fights of K rounds
        (``result.fights``: per round index and per fight; README "Fights of several
        rounds").
    rng : numpy Generator, SeedSequence, int or None, optional
        The randomness (SPEC 7).  Default: the scenario's ``seed``.  The same
        scenario, seed and rounds give identical results for any ``workers``.
    workers : int, optional
        Threads to use; default all cores.
    progress : callable, optional
        Called with the number of rounds of each finished chunk.
    scheduler : dask.distributed.Client or str, optional
        Play the chunks on a Dask cluster: a Client, the address of a running
        scheduler (``"tcp://HOST:8786"``) or ``"local"`` (a cluster of ``workers``
        one-thread processes on this machine, started for this run).  The result is
        bit-identical to a local run with the same seed.  Needs
        ``pip install 'simkit[dask]'``.
    precision : float or str, optional
        Instead of ``rounds``: play in doubling blocks of rounds until the 95% interval
        of every metric shown per ``by`` (or of ``metrics``) has a half-width of at most
        this (``0.001``), or this share of the estimate (``"0.5%"``); see
        :mod:`simkit.analysis.precision`.  ``result.stopping`` says how it ended.
    max_rounds : int, optional
        With ``precision``: the most rounds to play (default 10^9).
    by, metrics :
        With ``precision``: the quantities it applies to (as ``simkit run`` shows them).

    Returns
    -------
    Result
        ``result.table`` is a tidy DataFrame (combatant, metric, mean, se, ci_low,
        ci_high); ``result.by("side")`` and ``result.by("group")`` aggregate.
    """
    scenario = as_scenario(scenario_or_path)
    checked = read_precision(scenario, precision, max_rounds, rounds)
    if checked is not None:
        if scheduler is not None:
            raise ArgumentError("precision: cannot be combined with a scheduler")
        if by == "round":  # R8a: the rows of run --by round
            if not scenario.fight_rounds:
                raise ArgumentError(
                    "by: 'round' needs a scenario in fights (fight_rounds = K in [scenario])"
                )
            chosen = check_round_metrics(scenario, metrics)
        else:
            chosen = check_metrics(scenario, by, metrics)
        return _precision.run_to_precision(
            scenario,
            checked,
            seed_sequence(scenario.seed if rng is None else _rng(rng)),
            lambda result: _precision.run_quantities(result, by, chosen),
            workers=workers,
            progress=progress,
        )
    return _run(
        scenario,
        _rounds(rounds),
        _rng(rng),
        workers=workers,
        progress=progress,
        scheduler=scheduler,
    )


def sweep(
    scenario_or_path: Scenario | str | Path,
    vary: VarySpec | None = None,
    rounds: int | None = None,
    rng: RngLike = None,
    *,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    scheduler: Any = None,
    precision: str | float | Precision | None = None,
    max_rounds: int | None = None,
    by: str = "combatant",
    metrics: Sequence[str] | None = None,
) -> SweepResult:
    """Run a scenario at every point of a grid of field values, with common random
    numbers (see :func:`simkit.analysis.sweep.sweep` for the parameters).  Every grid
    point is checked before anything is simulated.  ``precision`` (with ``max_rounds``,
    ``by`` and ``metrics``: what it applies to) as for :func:`run`: every point gets the
    same rounds."""
    scenario = as_scenario(scenario_or_path)
    grid = read_grid(scenario, vary)
    rounds = _rounds(rounds)
    checked = read_precision(grid_scenarios(scenario, grid.axes), precision, max_rounds, rounds)
    if checked is not None:
        if scheduler is not None:
            raise ArgumentError("precision: cannot be combined with a scheduler")
        chosen = check_metrics(scenario, by, metrics, families=False)

        def quantities(results: list[Result], labels: list[str]) -> Any:
            return _precision.points_quantities(results, labels, by, chosen)

        return _sweep.sweep(
            scenario,
            grid.vary,
            None,
            _rng(rng),
            workers=workers,
            progress=progress,
            precision=checked,
            quantities=quantities,
        )
    if rounds is None:
        rounds = grid.file_rounds or scenario.rounds
    return _sweep.sweep(
        scenario,
        grid.vary,
        rounds,
        _rng(rng),
        workers=workers,
        progress=progress,
        scheduler=scheduler,
    )


def compare(
    a: Scenario | str | Path,
    b: Scenario | str | Path | None = None,
    *more: Scenario | str | Path,
    set: Sequence[str] | Mapping[str, Any] | str | None = None,
    rounds: int | None = None,
    rng: RngLike = None,
    batch_rounds: int = 4096,
    progress: Callable[[int], None] | None = None,
    labels: Sequence[str] | None = None,
    precision: str | float | Precision | None = None,
    max_rounds: int | None = None,
    by: str = "combatant",
    metrics: Sequence[str] | None = None,
) -> Any:
    """Compare two scenarios with common random numbers: paired differences B - A (see
    :func:`simkit.analysis.compare.compare` for the parameters).  With three or more
    scenarios (``compare(a, b, c, ...)``), a :class:`SideBySide` (see
    :func:`compare_many`).  ``precision`` (with ``max_rounds``; ``by`` and ``metrics``:
    the differences it applies to) as for :func:`run`, two scenarios only."""
    if more:
        if set is not None:
            raise ArgumentError("set: give changes with two scenarios at most (A and --set)")
        if precision is not None:
            raise ArgumentError(
                "precision: compares two scenarios (A and B); with three or more give rounds"
            )
        return compare_many(
            [a, b, *more],
            rounds=rounds,
            rng=rng,
            batch_rounds=batch_rounds,
            progress=progress,
            labels=labels,
        )
    scenario = as_scenario(a)
    if set is not None:
        check_set(scenario, set)
    others = [scenario] + ([] if b is None else [as_scenario(b)])
    checked = read_precision(others, precision, max_rounds, rounds)
    if checked is not None:
        chosen = check_metrics(scenario, by, metrics)
        return _compare.compare(
            scenario,
            b,
            set=set,
            rng=_rng(rng),
            batch_rounds=check_count(batch_rounds, 1, MAX_ROUNDS, "batch_rounds"),
            progress=progress,
            labels=None if labels is None else (str(labels[0]), str(labels[1])),
            precision=checked,
            quantities=lambda c: _compare.difference_quantities(c, by, chosen),
        )
    return _compare.compare(
        scenario,
        b,
        set=set,
        rounds=_rounds(rounds),
        rng=_rng(rng),
        batch_rounds=check_count(batch_rounds, 1, MAX_ROUNDS, "batch_rounds"),
        progress=progress,
        labels=None if labels is None else (str(labels[0]), str(labels[1])),
    )


def compare_many(
    scenarios: Sequence[Scenario | str | Path],
    *,
    rounds: int | None = None,
    rng: RngLike = None,
    batch_rounds: int = 4096,
    progress: Callable[[int], None] | None = None,
    labels: Sequence[str] | None = None,
) -> SideBySide:
    """Play N scenarios (N >= 2) with the same seed and rounds and set them side by side:
    every metric of each with its 95% interval and its difference from the first,
    paired (common random numbers) where a scenario has the first's system and
    combatants, otherwise from independent runs and marked unpaired; and the dominance
    of each one's fastest combatant (:class:`~simkit.analysis.compare.SideBySide`)."""
    played = [as_scenario(s) for s in scenarios]
    if len(played) < 2:
        raise ArgumentError(f"scenarios: compare needs at least 2, got {len(played)}")
    if labels is not None and len(labels) != len(played):
        raise ArgumentError(f"labels: {len(labels)} given for {len(played)} scenarios")
    return _compare.compare_many(
        played,
        rounds=_rounds(rounds),
        rng=_rng(rng),
        batch_rounds=check_count(batch_rounds, 1, MAX_ROUNDS, "batch_rounds"),
        progress=progress,
        labels=labels,
    )


def dominance(result: Result) -> Dominance:
    """How often the fastest combatant of a run (the highest main stat; ties give every
    tied one) acts before each other combatant: ``acts_before`` with its intervals."""
    return _compare.dominance(result)


def convert(
    scenario_or_path: Scenario | str | Path,
    to: str,
    mapping: Sequence[str] | str | None = None,
    *,
    labels: tuple[str, str] = ("to", "mapping"),
) -> Conversion:
    """The same fight in system ``to``: ``conversion.text`` is the TOML file,
    ``conversion.scenario`` the scenario it validates to, ``conversion.notes`` what has
    no counterpart in ``to`` (also written as comments in the file).

    ``mapping`` overrides the default stat mapping (``"rating=readiness+2"`` from
    readiness to vtm; docs/rules-decisions.md, "One fight in three systems") or maps
    further integer fields: ``FIELD=SOURCE+K``, ``FIELD=SOURCE-K``, ``FIELD=SOURCE*K``,
    ``FIELD=SOURCE`` or ``FIELD=N`` (see :mod:`simkit.scenario.convert`).  A bad
    ``to`` or mapping is an :class:`ArgumentError` naming it."""
    scenario = as_scenario(scenario_or_path)
    try:
        return _convert(scenario, to, mapping, labels)
    except MappingError as exc:
        raise ArgumentError(str(exc)) from None


def tune(
    scenario_or_path: Scenario | str | Path,
    vary: VarySpec,
    target: str | Target,
    rounds: int | None = None,
    rng: RngLike = None,
    *,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    scheduler: Any = None,
    tolerance: str | float | None = None,
    refine: bool = False,
    max_rounds: int | None = None,
    precision: str | float | Precision | None = None,
) -> Tuning:
    """Find the value(s) of one or two fields that meet a balance target (see
    :func:`simkit.analysis.tune.tune` for the parameters)."""
    scenario = as_scenario(scenario_or_path)
    grid = read_grid(scenario, vary, most=2, what="tune")
    checked = read_target(scenario, target, tolerance=tolerance)
    precise = read_precision(
        grid_scenarios(scenario, grid.axes), precision, max_rounds if precision else None, rounds
    )
    if precise is not None and scheduler is not None:
        raise ArgumentError("precision: cannot be combined with a scheduler")
    return _tune.tune(
        scenario,
        vary,
        checked,
        _rounds(rounds),
        _rng(rng),
        workers=workers,
        progress=progress,
        scheduler=scheduler,
        refine=bool(refine),
        max_rounds=None
        if max_rounds is None
        else check_count(max_rounds, 1, MAX_ROUNDS, "max_rounds"),
        precision=precise,
    )


def precision_rounds(
    scenario: Scenario,
    precision: Precision,
    rng: RngLike = None,
    *,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> Result:
    """The rounds a report plays with ``precision``: the scenario as written run to that
    precision for every metric per combatant and per side (the report's tables); the
    Result (``.rounds``, ``.stopping``)."""

    def quantities(result: Result) -> Any:
        return _precision.run_quantities(result) + _precision.run_quantities(result, "side")

    return _precision.run_to_precision(
        scenario,
        precision,
        seed_sequence(scenario.seed if rng is None else _rng(rng)),
        quantities,
        workers=workers,
        progress=progress,
    )


def policies(
    scenario_or_path: Scenario | str | Path,
    objective: str | Objective | Sequence[str | Objective] | None = None,
    rounds: int | None = None,
    rng: RngLike = None,
    *,
    equilibrium: bool = False,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> PolicySearch:
    """The policy each combatant should play: every alternative value of every policy
    field of every combatant (a ``count`` group as one), the others as written, on common
    random numbers; the best for its side's objective and the paired gain.

    Parameters
    ----------
    scenario_or_path : Scenario or path
    objective : str or list of str, optional
        What a side wants, e.g. ``"side:party.actions - 0.5*side:party.hasty_only"``
        (one per side, the side of its first reference); in a fight of two sides the
        other side wants the opposite; without one a side has its default objective
        (``PolicySearch.objectives[side].words`` says it).
    rounds : int, optional
        Rounds of every variant (default: the scenario's).
    rng : int, SeedSequence, Generator or None, optional
        The seed shared by every variant (default: the scenario's).
    equilibrium : bool
        Also let the sides take turns choosing best responses until no side changes
        or a cycle is found (``PolicySearch.equilibrium``).
    workers : int, optional
        Variants played at a time (default 2).
    progress : callable, optional
        Called with the rounds of every finished chunk.

    Returns
    -------
    PolicySearch
        ``table`` (one row per combatant and field, ranked by gain), ``alternatives``
        (every value tried), ``answer``, ``equilibrium``, ``plot()``.
    """
    scenario = as_scenario(scenario_or_path)
    wanted = read_side_objectives(scenario, objective)
    if workers is not None:
        check_count(workers, 1, 256, "workers")
    return _policies.policies(
        scenario,
        objectives=wanted,
        rounds=_rounds(rounds),
        rng=_rng(rng),
        equilibrium=bool(equilibrium),
        workers=workers,
        progress=progress,
    )


def report_rounds(
    scenario: Scenario,
    rounds: int | None,
    vary: Sequence[str] | str | None = None,
    target: str | None = None,
    labels: tuple[str, str, str] = ("rounds", "vary", "target"),
) -> int:
    """Every run of a report of ``scenario`` checked (rounds, ``vary``, ``target``)
    without simulating; returns the total rounds it will play (for a progress bar)."""
    rounds = scenario.rounds if rounds is None else check_rounds(rounds, labels[0])
    if rounds < 2:
        raise ArgumentError(f"{labels[0]}: a report needs at least 2 rounds, got {rounds}")
    return _report.plan(scenario, rounds, vary, target, labels[1:]).total_rounds


def make_report(
    scenario_or_path: Scenario | str | Path,
    rounds: int | None = None,
    rng: RngLike = None,
    *,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    vary: Sequence[str] | str | None = None,
    target: str | None = None,
    precision: str | float | Precision | None = None,
    max_rounds: int | None = None,
) -> Any:
    """Simulate and render a report in memory (see :func:`report`); writes nothing."""
    scenario = as_scenario(scenario_or_path)
    checked = read_precision(scenario, precision, max_rounds, rounds)
    if checked is not None:
        rounds = precision_rounds(scenario, checked, rng, workers=workers, progress=progress).rounds
    report_rounds(scenario, rounds, vary, target)
    return _report.make_report(
        scenario, rounds, _rng(rng), workers=workers, progress=progress, vary=vary, target=target
    )


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
    precision: str | float | Precision | None = None,
    max_rounds: int | None = None,
) -> Path:
    """Simulate a scenario and write its report into ``out_dir`` (see
    :func:`simkit.analysis.report_runs.report` for the parameters); returns the path of
    report.html.  With ``precision`` (and ``max_rounds``), every run of the report has
    the rounds :func:`precision_rounds` finds for the scenario."""
    scenario = as_scenario(scenario_or_path)
    checked = read_precision(scenario, precision, max_rounds, rounds)
    if checked is not None:
        rounds = precision_rounds(scenario, checked, rng, workers=workers, progress=progress).rounds
    report_rounds(scenario, rounds, vary, target)
    return _report.report(
        scenario,
        out_dir,
        rounds,
        _rng(rng),
        workers=workers,
        progress=progress,
        vary=vary,
        target=target,
    )


def trace(
    scenario_or_path: Scenario | str | Path,
    rounds: int = 1,
    seed: int | None = None,
    dice: Sequence[str] | Mapping[int, list[int]] = (),
) -> Trace:
    """The play-by-play of rounds 1 .. ``rounds`` (at most 1000) of ``seed`` (default:
    the scenario's), as the rules see them; ``dice`` (``["Gunnar=6,6,2"]``) fixes the
    roll of a combatant (or, in group mode, of a side) in every round."""
    scenario = as_scenario(scenario_or_path)
    rounds = check_trace_rounds(rounds)
    seed = scenario.seed if seed is None else check_seed(seed)
    fixed = dict(dice) if isinstance(dice, Mapping) else read_dice(scenario, dice)
    return _trace.trace(scenario, rounds, seed, fixed)


def sensitivity(
    scenario_or_path: Scenario | str | Path,
    rounds: int | None = None,
    rng: RngLike = None,
    *,
    objective: str | Sequence[str] | None = None,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> Sensitivity:
    """What moves the balance most: every combatant's main stat (a ``count`` group as
    one) one point up and down, and every alternative of every rule, each played on the
    dice of the scenario as written (common random numbers), the paired change in each
    side's action economy with its 95% interval, knobs ranked by size
    (:class:`~simkit.analysis.sensitivity.Sensitivity`: ``.table``, ``.answer``,
    ``.plot()``); see :func:`simkit.analysis.sensitivity.sensitivity`.  ``objective``
    (one or several, ``"side:party.actions - 0.5*side:party.hasty_only"``) measures the
    change in those instead of each side's action economy."""
    scenario = as_scenario(scenario_or_path)
    measures = read_objectives(scenario, objective)
    return _sensitivity.sensitivity(
        scenario,
        _paired_rounds(scenario, rounds),
        _rng(rng),
        measures=measures,
        workers=workers,
        progress=progress,
    )


def read_objectives(
    scenario: Scenario, objective: str | Sequence[str] | None, label: str = "objective"
) -> list[Any] | None:
    """Objectives (``analysis.objectives``) checked against ``scenario``, as the
    measures of a sensitivity; None for the default (each side's action economy)."""
    if objective is None:
        return None
    from simkit.analysis.objectives import parse_objective

    texts = [objective] if isinstance(objective, str) else list(objective)
    if not texts:
        raise ArgumentError(f"{label}: give at least one objective, or none for the default")
    available = available_metrics_by_level(scenario)
    measures = [
        _sensitivity.objective_measure(parse_objective(t, scenario, available, label))
        for t in texts
    ]
    labels = [m.label for m in measures]
    for k, text in enumerate(labels):
        if text in labels[:k]:
            raise ArgumentError(f"{label}: {text!r} given twice")
    if len(measures) == 1:
        return [replace(measures[0], header="objective", words="the objective")]
    return [
        replace(m, header=f"objective {k + 1}", words=f"objective {k + 1}")
        for k, m in enumerate(measures)
    ]


def _paired_rounds(scenario: Scenario, rounds: Any, label: str = "rounds") -> int:
    """Rounds of paired runs: at least 2 (two batches for a paired interval)."""
    rounds = scenario.rounds if rounds is None else check_rounds(rounds, label)
    if rounds < 2:
        raise ArgumentError(f"{label}: paired runs need at least 2 rounds, got {rounds}")
    return rounds


def sensitivity_rounds(scenario: Scenario, rounds: int | None, label: str = "rounds") -> int:
    """Total rounds ``sensitivity`` plays (as written and every variant), for a
    progress bar; ``rounds`` checked."""
    return _sensitivity.total_rounds(scenario, _paired_rounds(scenario, rounds, label))


def bench(rounds: int | None = None, workers: int | None = None) -> int:
    """Measure rounds per second of each system here; prints a table (``simkit bench``)."""
    from simkit import bench as _bench

    return int(_bench.main(None if rounds is None else check_rounds(rounds), workers) or 0)


def warm_up() -> Iterator[str]:
    """Compile and cache every kernel of every system; yields one line per system."""
    from simkit.engine.warmup import warm_all

    yield from warm_all()


# The analysis functions document their parameters; the checked entries here share it.
sweep.__doc__ = _sweep.sweep.__doc__
compare.__doc__ = _compare.compare.__doc__
tune.__doc__ = _tune.tune.__doc__
report.__doc__ = _report.report.__doc__
