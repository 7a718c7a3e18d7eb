"""``simkit policies``: the policy each combatant should play, and best responses.

    simkit policies scenarios/boss_fight.toml
    simkit policies scenarios/boss_fight.toml --equilibrium

A *coordinate* is one policy field of one combatant (a ``count`` group as one: every
member plays the same value); its system declares the fields and the values to try
(``System.policy_fields`` / ``System.policy_values``), so a plug-in system is searched
without any change here.  Every variant is the scenario with one coordinate changed,
played with the same seed and rounds as the scenario as written: common random numbers,
so the gain of a value is a paired difference of its side's objective
(:mod:`simkit.analysis.objectives`, batch means, Student's t).  A policy is data: every
variant runs on the same compiled kernel.

The best value of a coordinate is the one with the highest estimated objective; its
gain over the file's value is "clear" when its 95% interval excludes 0, otherwise "no
detectable difference".  (The highest of several noisy estimates is biased upwards;
the word "clear" asks for the interval of that one difference to exclude 0.)

Equilibrium (``equilibrium=True``): the sides take turns; on its turn a side goes
through its combatants' coordinates one at a time and moves each to its best response
against the current profile when the gain is clear.  The search stops when a full
round of turns changes nothing (an equilibrium of best responses, up to the paired
intervals), or when a profile repeats at the same turn (a cycle: its members are
reported), or after ``MAX_ROUNDS_OF_TURNS`` rounds.  From ``SCREEN_FROM`` rounds a
variant, the turns are first taken at a quarter of the rounds (screening) and the
search then goes on at full rounds from where screening stopped, so that what it
reports (equilibrium, cycle, the side verdicts) always rests on full runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from threading import Lock
from typing import TYPE_CHECKING, Any

from simkit.analysis.compare import batch_size
from simkit.analysis.objectives import Objective, PairedEstimate, default_objective
from simkit.engine import RawRun, RngLike, layout_for, seed_sequence, seed_value, simulate
from simkit.metrics import SIDE, metric_slots
from simkit.scenario import Scenario
from simkit.scenario.validate import with_changes

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

MAX_ROUNDS_OF_TURNS = 12
SCREEN_FROM = 40_000  # equilibrium searches of this many rounds a variant screen first
SCREEN_FACTOR = 4  # at a quarter of the rounds
CLEAR = "clear"
UNCLEAR = "no detectable difference"
AS_WRITTEN = "file's value best"

Key = tuple[str, str]  # (group, field)
Profile = tuple[tuple[Key, Any], ...]  # every coordinate's value, in coordinate order


@dataclass(frozen=True)
class Coordinate:
    """One policy field of one combatant or count group, and the values to try."""

    group: str
    side: str
    field: str
    written: Any
    values: tuple[Any, ...]

    @property
    def key(self) -> Key:
        return (self.group, self.field)


@dataclass(frozen=True)
class Choice:
    """One coordinate's values against one profile: the objective of its side under
    each value, the gain of each over the profile's value (paired), the best one."""

    coordinate: Coordinate
    current: Any
    gains: tuple[tuple[Any, PairedEstimate], ...]
    effects: tuple[tuple[str, PairedEstimate], ...] = ()  # the best value, for every side

    @property
    def best(self) -> tuple[Any, PairedEstimate]:
        return max(self.gains, key=lambda g: g[1].mean_b)

    @property
    def verdict(self) -> str:
        value, gain = self.best
        if value == self.current:
            return AS_WRITTEN
        return CLEAR if gain.clear else UNCLEAR


@dataclass(frozen=True)
class GuardGain:
    """R7/R7a: what the best value of a policy changes for an ally whose guard it
    changes (the best value minus as written, paired): the protected ally's side of a
    guard's cost, as ``simkit compare`` and a report's guard finding show it."""

    group: str  # the combatant (or count group) whose policy changes
    field: str
    value: Any  # its best value
    guard: str  # the guard whose protection changes
    ally: str
    metric: str  # "undefended" or "hasty_only"
    estimate: PairedEstimate


GUARD_METRICS = ("undefended", "hasty_only")


@dataclass(frozen=True)
class Step:
    """A move of the equilibrium search: ``side`` changes ``group.field``."""

    turn: int
    side: str
    group: str
    field: str
    old: Any
    new: Any
    gain: PairedEstimate
    rounds: int = 0  # rounds of the runs behind it (fewer while screening)


@dataclass(frozen=True)
class SideVerdict:
    """A side's objective and action economy as written and under the equilibrium (or
    the last profile searched), with the paired difference."""

    side: str
    objective: PairedEstimate
    action_economy: PairedEstimate


@dataclass(frozen=True)
class Equilibrium:
    """The outcome of the best-response search.

    status : "equilibrium", "cycle" or "no convergence"
    profile : the last profile ((group, field) -> value)
    cycle : the profiles of a cycle, in order (empty unless status is "cycle")
    steps : every change made, in order
    dominant : (group, field, value) best against every opponent profile met
    findings : degenerate findings and the equilibrium in words
    sides : each side's verdict as written and under the profile
    """

    status: str
    profile: dict[Key, Any]
    cycle: tuple[dict[Key, Any], ...]
    steps: tuple[Step, ...]
    dominant: tuple[tuple[str, str, Any], ...]
    findings: tuple[str, ...]
    sides: tuple[SideVerdict, ...]
    turns: int
    screen_rounds: int = 0  # rounds a variant of the screening turns (0: none)


@dataclass(frozen=True)
class PolicySearch:
    """The outcome of :func:`policies`.

    Attributes
    ----------
    scenario : Scenario
    objectives : dict side -> Objective (what each side wants; ``.words`` says it)
    choices : tuple of Choice, one per coordinate against the policies as written
    table : pandas.DataFrame
        One row per coordinate, ranked by gain: combatant, side, field, as_written,
        best, objective (its side's, under the best value), gain, se, ci_low, ci_high,
        verdict ("clear", "no detectable difference", "file's value best").
    alternatives : pandas.DataFrame
        Every value tried: combatant, field, value, objective, gain (over the file's
        value), se, ci_low, ci_high.
    answer : str
        The answer in words.
    equilibrium : Equilibrium or None
    """

    scenario: Scenario
    objectives: dict[str, Objective]
    choices: tuple[Choice, ...]
    answer: str
    rounds: int
    seed: int | list[int]
    batches: int
    variants: int
    elapsed_s: float
    equilibrium: Equilibrium | None = None
    notes: tuple[str, ...] = field(default=())
    guarded: tuple[GuardGain, ...] = ()  # R7/R7a: the allies' side of a guard's change

    @property
    def table(self) -> pd.DataFrame:
        import pandas as pd

        rows = []
        for ch in ranked(self.choices):
            value, g = ch.best
            c = ch.coordinate
            rows.append(
                [c.group, c.side, c.field, c.written, value, g.mean_b, g.difference, g.se]
                + [g.ci_low, g.ci_high, ch.verdict]
            )
        columns = ["combatant", "side", "field", "as_written", "best", "objective", "gain"]
        return pd.DataFrame(rows, columns=[*columns, "se", "ci_low", "ci_high", "verdict"])

    @property
    def as_written_is_equilibrium(self) -> bool:
        """No single policy change gains clearly for the changer's side: the policies as
        written are an equilibrium of one-field deviations (up to the intervals)."""
        return not any(ch.verdict == CLEAR for ch in self.choices)

    @property
    def ranked(self) -> list[Choice]:
        """The choices by gain of their best value, largest first."""
        return ranked(self.choices)

    @property
    def alternatives(self) -> pd.DataFrame:
        import pandas as pd

        rows = []
        for ch in self.choices:
            c = ch.coordinate
            for value, g in ch.gains:
                rows.append(
                    [c.group, c.side, c.field, value, value == c.written, g.mean_b]
                    + [g.difference, g.se, g.ci_low, g.ci_high]
                )
        columns = ["combatant", "side", "field", "value", "as_written", "objective", "gain"]
        return pd.DataFrame(rows, columns=[*columns, "se", "ci_low", "ci_high"])

    def format_table(self, width: int = 100) -> str:
        """The table ``simkit policies`` prints."""
        from simkit.output.render import render

        return render("policies", self, width=width)

    def _repr_html_(self) -> str:
        from simkit.output.notebook import policies_html

        return policies_html(self)

    def plot(self) -> Figure:
        """The gain of the best value of every coordinate, with its paired interval."""
        from simkit.output.plots import policies_figure

        return policies_figure(self)


def ranked(choices: Sequence[Choice]) -> list[Choice]:
    """Coordinates by gain of their best value, largest first."""
    return sorted(choices, key=lambda ch: -ch.best[1].difference)


def side_objectives(scenario: Scenario, given: Sequence[Objective] = ()) -> dict[str, Objective]:
    """Every side's objective: one given for it; else, in a fight of two sides where the
    other side has one, its opposite; else the side's default (docs/rules-decisions.md
    OBJ-1, OBJ-2)."""
    metrics = tuple(
        dict.fromkeys(s.metric for s in metric_slots(layout_for(scenario), SIDE) if s.who)
    )
    own = {o.side: o for o in given}
    out = {}
    for side in scenario.sides:
        if side in own:
            out[side] = own[side]
        elif len(scenario.sides) == 2 and own:
            other = next(iter(own.values()))
            out[side] = other.negated(side)
        else:
            out[side] = default_objective(scenario, side, metrics)
    return out


def coordinates(scenario: Scenario) -> list[Coordinate]:
    """Every policy field of every combatant (a count group as one), as its system
    declares them."""
    from simkit.engine import system_of

    system = system_of(scenario)
    out = []
    seen = set()
    for i, c in enumerate(scenario.combatants):
        if c.group in seen:
            continue
        seen.add(c.group)
        for name in system.policy_fields(scenario, i):
            values = tuple(system.policy_values(scenario, i, name))
            written = c.params[name]
            if written not in values:
                values = (written, *values)
            out.append(Coordinate(c.group, c.side, name, written, values))
    return out


class _Runs:
    """Plays profiles (batched, common random numbers) and keeps every run."""

    def __init__(
        self,
        scenario: Scenario,
        coords: list[Coordinate],
        rounds: int,
        seq: Any,
        batch: int,
        pairs: Callable[[Any], tuple[tuple[int, int], ...]],
        workers: int,
        progress: Callable[[int], None] | None,
    ) -> None:
        self.scenario = scenario
        self.coords = coords
        self.rounds, self.seq, self.batch, self.pairs = rounds, seq, batch, pairs
        self.workers = workers
        self.progress = progress
        self.cache: dict[Profile, RawRun] = {}
        self.lock = Lock()

    def written(self) -> dict[Key, Any]:
        return {c.key: c.written for c in self.coords}

    def key(self, profile: Mapping[Key, Any]) -> Profile:
        return tuple((c.key, profile[c.key]) for c in self.coords)

    def scenario_of(self, profile: Mapping[Key, Any]) -> Scenario:
        changes: dict[str, dict[str, Any]] = {}
        for c in self.coords:
            if profile[c.key] != c.written:
                changes.setdefault(c.group, {})[c.field] = profile[c.key]
        return with_changes(self.scenario, combatants=changes) if changes else self.scenario

    def _count(self, n: int) -> None:
        if self.progress is not None:
            with self.lock:
                self.progress(n)

    def runs(self, profiles: Sequence[Mapping[Key, Any]]) -> list[RawRun]:
        keys = [self.key(p) for p in profiles]
        todo = {k: p for k, p in zip(keys, profiles, strict=True) if k not in self.cache}
        if todo:
            scenarios = {k: self.scenario_of(p) for k, p in todo.items()}

            def play(k: Profile) -> RawRun:
                return simulate(
                    scenarios[k],
                    self.rounds,
                    self.seq,
                    progress=self._count,
                    batch_rounds=self.batch,
                    pairs=self.pairs,
                )

            with ThreadPoolExecutor(max_workers=self.workers) as pool:
                for k, raw in zip(todo, pool.map(play, list(todo)), strict=True):
                    self.cache[k] = raw
        return [self.cache[k] for k in keys]

    def choice(
        self,
        coord: Coordinate,
        profile: Mapping[Key, Any],
        objective: Objective,
        every: Mapping[str, Objective] | None = None,
    ) -> Choice:
        """``coord``'s values against ``profile`` for ``objective``; with ``every`` (side ->
        objective), also what the best value changes for every side."""
        variants = [{**profile, coord.key: v} for v in coord.values]
        base, *runs = self.runs([profile, *variants])
        gains = tuple(
            (v, objective.evaluate(base, run)) for v, run in zip(coord.values, runs, strict=True)
        )
        choice = Choice(coord, profile[coord.key], gains)
        if every:
            best = runs[coord.values.index(choice.best[0])]
            effects = tuple((side, o.evaluate(base, best)) for side, o in every.items())
            choice = Choice(coord, profile[coord.key], gains, effects)
        return choice


def policies(
    scenario: Scenario,
    *,
    objectives: Sequence[Objective] = (),
    rounds: int | None = None,
    rng: RngLike = None,
    equilibrium: bool = False,
    batch_rounds: int = 4096,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> PolicySearch:
    """Play every alternative value of every policy field of every combatant (a count
    group as one), the others as written, on common random numbers; with
    ``equilibrium``, also the best-response search (module docstring).

    ``objectives`` are parsed objectives (``parse_objective``), at most one per side;
    the other sides get theirs from :func:`side_objectives`."""
    start = time.perf_counter()
    rounds = scenario.rounds if rounds is None else rounds
    seq = seed_sequence(scenario.seed if rng is None else rng)
    wanted = side_objectives(scenario, objectives)

    def pairs(layout: Any) -> tuple[tuple[int, int], ...]:
        return tuple(dict.fromkeys(p for o in wanted.values() for p in o.pairs(layout)))

    coords = coordinates(scenario)
    batch = batch_size(rounds, batch_rounds)
    runs = _Runs(scenario, coords, rounds, seq, batch, pairs, workers or 2, progress)
    written = runs.written()
    runs.runs([written] + [{**written, c.key: v} for c in coords for v in c.values])
    choices = tuple(runs.choice(c, written, wanted[c.side], wanted) for c in coords)
    found = None
    if equilibrium:
        screen = None
        if rounds >= SCREEN_FROM:
            few = rounds // SCREEN_FACTOR
            screen = _Runs(
                scenario,
                coords,
                few,
                seq,
                batch_size(few, batch_rounds),
                pairs,
                workers or 2,
                progress,
            )
        found = _search(runs, coords, wanted, screen)
    answer = _answer(choices, wanted)
    base = runs.cache[runs.key(written)]
    return PolicySearch(
        scenario,
        wanted,
        choices,
        answer,
        rounds,
        seed_value(seq),
        len(base.batches or []),
        len(runs.cache),
        time.perf_counter() - start,
        found,
        guarded=_guard_gains(runs, choices, written),
    )


def _guard_gains(
    runs: _Runs, choices: Sequence[Choice], written: Mapping[Key, Any]
) -> tuple[GuardGain, ...]:
    """For every best value that changes whom a guard protects (or how), the attacks
    each ally it guards in either profile is left unanswered and answered only hastily:
    best value minus as written, paired on the same dice (analysis.compare's
    ``guard_changes`` says which guards and allies).  A ``count`` group of allies is one
    row (its members summed), and so is a count group of guards, so that a fight of
    hundreds costs a few estimates per choice, not one per guard and ally."""
    from simkit.analysis.compare import guard_changes
    from simkit.analysis.objectives import Term
    from simkit.analysis.targets import Ref
    from simkit.metrics import COMBATANT, GROUP

    scenario = runs.scenario
    by_name = {c.name: c for c in scenario.combatants}
    sizes: dict[str, int] = {}
    for c in scenario.combatants:
        sizes[c.group] = sizes.get(c.group, 0) + 1
    out: list[GuardGain] = []
    for ch in choices:
        value, _ = ch.best
        c = ch.coordinate
        if value == ch.current:
            continue
        best_profile = {**written, c.key: value}
        changes = guard_changes(runs.scenario_of(written), runs.scenario_of(best_profile))
        if not changes:
            continue
        guards = list(dict.fromkeys(by_name[g.guard].group for g in changes))
        guard = ", ".join(guards)
        allies: dict[tuple[str, str], str] = {}  # (level, name) -> its words
        for g in changes:
            for ally in g.allies:
                group = by_name[ally].group
                if sizes[group] > 1:
                    allies.setdefault((GROUP, group), f"{group} ×{sizes[group]}")
                else:
                    allies.setdefault((COMBATANT, ally), ally)
        base, best = runs.runs([written, best_profile])
        for (level, name), words in allies.items():
            for m in GUARD_METRICS:
                o = Objective((Term(1.0, Ref(level, name, m)),), f"{name}.{m}", m, c.side)
                gain = o.evaluate(base, best)
                out.append(GuardGain(c.group, c.field, value, guard, words, m, gain))
    return tuple(out)


def _answer(choices: Sequence[Choice], wanted: Mapping[str, Objective]) -> str:
    clear = [ch for ch in ranked(choices) if ch.verdict == CLEAR]
    if not choices:
        return "No combatant has a policy field to choose in this scenario."
    if not clear:
        return (
            "Every combatant's policies as written are as good as any single change for "
            "its side (no clear gain)."
        )
    top = clear[0]
    value, g = top.best
    c = top.coordinate
    more = f"; {len(clear) - 1} more clear gains below" if len(clear) > 1 else ""
    return (
        f"The largest clear gain: {c.group} playing {c.field} = {value} instead of "
        f"{c.written} (+{g.difference:.3g} for {c.side}, 95% interval {g.ci_low:.3g} to "
        f"{g.ci_high:.3g}){more}."
    )


# --------------------------------------------------------------------------- equilibrium
def _search(
    runs: _Runs,
    coords: list[Coordinate],
    wanted: Mapping[str, Objective],
    screen: _Runs | None = None,
) -> Equilibrium:
    """Best responses (module docstring).  With ``screen`` (the same search at fewer
    rounds), the turns are first taken there, and the search then goes on at full
    rounds from where screening stopped: the answer is always one of the full runs, the
    screening only saves the turns that full rounds would spend getting there."""
    best_seen: dict[Key, list[tuple[Profile, Any]]] = {}
    steps: list[Step] = []
    profile = runs.written()
    turns = 0
    if screen is not None:
        _, profile, _, turns = _turns(screen, coords, wanted, profile, best_seen, steps)
    status, profile, cycle, more = _turns(runs, coords, wanted, profile, best_seen, steps, turns)
    turns += more
    dominant = []
    for c in coords:
        met = best_seen.get(c.key, [])
        values = {v for _, v in met}
        if len({o for o, _ in met}) > 1 and len(values) == 1:
            dominant.append((c.group, c.field, next(iter(values))))
    final = profile
    base, last = runs.runs([runs.written(), final])
    verdicts = []
    for side in wanted:
        economy = _economy(side)
        verdicts.append(
            SideVerdict(side, wanted[side].evaluate(base, last), economy.evaluate(base, last))
        )
    findings = _findings(coords, best_seen, runs.written(), final, status)
    return Equilibrium(
        status,
        final,
        cycle,
        tuple(steps),
        tuple(dominant),
        tuple(findings),
        tuple(verdicts),
        turns,
        screen.rounds if screen is not None else 0,
    )


def _turns(
    runs: _Runs,
    coords: list[Coordinate],
    wanted: Mapping[str, Objective],
    profile: dict[Key, Any],
    best_seen: dict[Key, list[tuple[Profile, Any]]],
    steps: list[Step],
    first: int = 0,
) -> tuple[str, dict[Key, Any], tuple[dict[Key, Any], ...], int]:
    """Sides take turns from ``profile`` until a full round of turns changes nothing, a
    state repeats or MAX_ROUNDS_OF_TURNS; (status, profile, cycle, turns)."""
    sides = list(dict.fromkeys(c.side for c in coords))
    seen: dict[tuple[int, Profile], int] = {}
    history: list[dict[Key, Any]] = []
    status: str = "no convergence"
    cycle: tuple[dict[Key, Any], ...] = ()
    turn = 0
    quiet = 0  # turns in a row without a change
    while turn < MAX_ROUNDS_OF_TURNS * len(sides):
        side = sides[turn % len(sides)]
        state = (turn % len(sides), runs.key(profile))
        if state in seen:
            status = "cycle"
            cycle = tuple(history[seen[state] :])
            break
        seen[state] = len(history)
        history.append(dict(profile))
        changed = False
        for c in coords:
            if c.side != side:
                continue
            ch = runs.choice(c, profile, wanted[side])
            value, gain = ch.best
            others = tuple((o.key, profile[o.key]) for o in coords if o.side != side)
            best_seen.setdefault(c.key, []).append((others, value))
            if value != profile[c.key] and gain.clear:
                steps.append(
                    Step(
                        first + turn,
                        side,
                        c.group,
                        c.field,
                        profile[c.key],
                        value,
                        gain,
                        runs.rounds,
                    )
                )
                profile = {**profile, c.key: value}
                changed = True
        quiet = 0 if changed else quiet + 1
        turn += 1
        if quiet >= len(sides):
            status = "equilibrium"
            break
    return status, profile, cycle, turn


def _economy(side: str) -> Objective:
    from simkit.analysis.objectives import Term
    from simkit.analysis.targets import Ref

    terms = (Term(1.0, Ref(SIDE, side, "action_economy")),)
    return Objective(terms, f"side:{side}.action_economy", f"{side}'s action economy", side)


def _findings(
    coords: list[Coordinate],
    best_seen: Mapping[Key, list[tuple[Profile, Any]]],
    written: Mapping[Key, Any],
    final: Mapping[Key, Any],
    status: str,
) -> list[str]:
    out = []
    by_field: dict[str, list[Coordinate]] = {}
    for c in coords:
        by_field.setdefault(c.field, []).append(c)
    for name, cs in by_field.items():
        values = dict.fromkeys(v for c in cs for v in c.values)
        chosen = {v for c in cs for _, v in best_seen.get(c.key, [])}
        chosen |= {final[c.key] for c in cs}
        never = [v for v in values if v not in chosen]
        if never and len(cs) > 1:
            shown = ", ".join(f"{name} = {v}" for v in never)
            out.append(f"{shown}: never the best response for anyone in this fight.")
        for c in cs:
            met = best_seen.get(c.key, [])
            if met and len({v for _, v in met}) == 1 and met[0][1] != c.written:
                out.append(
                    f"{name} = {met[0][1]} is best for {c.group} every time it was asked "
                    f"({len(met)} {'profile' if len(met) == 1 else 'profiles'}); the file has "
                    f"{c.written}."
                )
    changed = [c for c in coords if final[c.key] != written[c.key]]
    if status == "equilibrium" and not changed:
        out.insert(
            0, "The policies as written are an equilibrium: no side gains clearly by a change."
        )
    elif status == "equilibrium":
        moves = ", ".join(f"{c.group}.{c.field} = {final[c.key]}" for c in changed)
        out.insert(0, f"The policies as written are not an equilibrium; at equilibrium: {moves}.")
    return out
