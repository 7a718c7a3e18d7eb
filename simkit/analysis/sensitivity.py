"""Sensitivity: which knob moves the balance most (``simkit sensitivity``).

The knobs of a scenario, every one tried on its own, the rest as written:

* for each combatant -- a ``count`` group as one -- its system's main stat
  (``System.main_field``; the field that moves it is ``System.stat_field``: vtm moves
  ``dexterity`` where the file gives dexterity and wits) one point up and one point
  down.  A change beyond the field's bounds is skipped, and said (``Sensitivity.skipped``);
* for each rule of its system (``System.rules``: every field with ``choices``, or true
  / false), every value other than the one in force.  A value the scenario cannot take
  (a check across combatants fails) is skipped, and said.

Every variant is played with the scenario's seed and rounds, so round ``r`` of every
variant sees the dice of round ``r`` as written (common random numbers), batched like
``simkit compare`` (``analysis/compare.py``): the change of each *measure* (by default
each side's action economy) is the variant minus as written, with its paired standard
error from batch means and a 95% interval with Student's t.  A measure is a linear
combination of metric references (``side:party.action_economy``); its per-batch
delta-method terms are the same combination of the terms of each reference, so its
interval comes from the batches, not from adding variances.

Knobs are ranked by size: a knob's size is the largest absolute change of any measure
over its variants (a main stat's knob has two, +1 and -1).  ``Sensitivity.answer`` says
it in one sentence.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from simkit import systems
from simkit.analysis.compare import _linearised
from simkit.analysis.run import as_scenario
from simkit.deferred import pandas as pd
from simkit.engine import RawRun, RngLike, seed_sequence, seed_value, simulate
from simkit.engine.core import default_workers
from simkit.metrics import ROUNDS, SIDE, metric_slots, t_quantile_975
from simkit.output.files import OutputDir
from simkit.output.numbers import format_difference
from simkit.scenario import Combatant, Scenario, ScenarioError, with_changes

ECONOMY = "action_economy"
STAT, RULE = "stat", "rule"
COLUMNS = [
    "rank",
    "knob",
    "kind",
    "who",
    "field",
    "as_written",
    "changed_to",
    "measure",
    "value_as_written",
    "value_changed",
    "difference",
    "se_paired",
    "ci_low",
    "ci_high",
]


# --------------------------------------------------------------------------- measures
@dataclass(frozen=True)
class Measure:
    """What a change is measured in: ``sum(coef * reference)``; a reference is
    ``(level, who, metric)`` with level ``"combatant"``, ``"group"`` or ``"side"``."""

    label: str  # "side:party.action_economy"
    words: str  # "party's action economy"
    parts: tuple[tuple[float, str, str, str], ...]
    header: str = ""  # its column in a table ("party"); default the label

    @property
    def column(self) -> str:
        return self.header or self.label


def possessive(name: str) -> str:
    """``party's``, ``wolves'``."""
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def default_measures(scenario: Scenario) -> tuple[Measure, ...]:
    """Each side's action economy (its actions per action of all its opponents)."""
    return tuple(
        Measure(
            f"side:{s}.{ECONOMY}",
            f"{possessive(s)} action economy",
            ((1.0, SIDE, s, ECONOMY),),
            s,
        )
        for s in scenario.sides
    )


def objective_measure(objective: Any) -> Measure:
    """An objective (``analysis.objectives.Objective``, ``--objective``) as a measure."""
    parts = tuple((t.coefficient, t.ref.level, t.ref.name, t.ref.metric) for t in objective.terms)
    return Measure(objective.text, objective.text, parts)


Terms = dict[str, tuple[float, np.ndarray]]  # measure label -> (value, per-batch terms)


def measure_terms(raw: RawRun, measures: Sequence[Measure]) -> Terms:
    """Each measure's value over the whole run and its per-batch delta-method terms (a
    linear combination of its references' terms, ``compare._linearised``)."""
    batches = raw.batches or []
    s1 = np.stack([b.s1 for b in batches])
    length = np.array([b.tot[1] for b in batches], dtype=np.int64)
    wanted = {(level, who, m) for ms in measures for _, level, who, m in ms.parts}
    slots = {}
    for level in {w[0] for w in wanted}:
        for s in metric_slots(raw.layout, level):
            if (level, s.who, s.metric) in wanted:
                slots[(level, s.who, s.metric)] = s
    out: Terms = {}
    for ms in measures:
        value = 0.0
        terms = np.zeros(len(batches))
        for coef, level, who, m in ms.parts:
            s = slots[(level, who, m)]
            den = length if s.den == ROUNDS else s1[:, s.den]
            r, u = _linearised(s1[:, s.num], den)
            value += coef * r
            terms = terms + coef * u
        out[ms.label] = (value, terms)
    return out


# --------------------------------------------------------------------------- knobs
@dataclass(frozen=True)
class Variant:
    """One knob turned: ``who.field`` from ``as_written`` to ``changed_to``.

    ``kind`` is ``"stat"`` (``who`` a combatant or a count group, ``step`` +1 or -1) or
    ``"rule"`` (``who == "rules"``)."""

    kind: str
    who: str
    field: str
    as_written: Any
    changed_to: Any
    step: int
    scenario: Scenario

    @property
    def knob(self) -> str:
        """The knob it turns: ``Troll Chief.readiness`` or ``rules.order=chain``."""
        if self.kind == STAT:
            return f"{self.who}.{self.field}"
        return f"rules.{self.field}={_text(self.changed_to)}"

    @property
    def change(self) -> str:
        """``+1`` / ``-1`` or ``dynamic -> chain``."""
        if self.kind == STAT:
            return f"{self.step:+d}"
        return f"{_text(self.as_written)} -> {_text(self.changed_to)}"


@dataclass(frozen=True)
class Plan:
    """The variants a sensitivity plays and the knobs it leaves out (and why)."""

    scenario: Scenario
    variants: tuple[Variant, ...]
    skipped: tuple[str, ...]


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _stat_variant(
    scenario: Scenario, who: str, members: list[Combatant], step: int
) -> Variant | str:
    """``who``'s main stat moved by ``step``, or why it cannot be."""
    system = systems.get(scenario.system)
    changes: dict[str, dict[str, int]] = {}
    fields = set()
    for c in members:
        name = system.stat_field(c.params, c.given)
        spec = system.fields[name]
        new = int(c[name]) + step
        fields.add(name)
        if spec.low is not None and new < spec.low:
            return f"{who}.{name} {step:+d} skipped: {name} {int(c[name])} is the minimum"
        if spec.high is not None and new > spec.high:
            return f"{who}.{name} {step:+d} skipped: {name} {int(c[name])} is the maximum"
        changes[c.name] = {name: new}
    try:
        variant = with_changes(scenario, combatants=changes)
    except ScenarioError as exc:
        why = _first_line(exc, scenario.source)
        return f"{who}.{'/'.join(sorted(fields))} {step:+d} skipped: {why}"
    if len(fields) > 1:  # members moved through different fields: their main stat
        field_name = system.main_field
        stats = sorted({int(system.stat(c.params)) for c in members})
    else:  # the field that moved (vtm: dexterity 4 -> 5 moves the rating 7 -> 8)
        field_name = fields.pop()
        stats = sorted({int(c[field_name]) for c in members})
    changed = _stats([v + step for v in stats])
    return Variant(STAT, who, field_name, _stats(stats), changed, step, variant)


def _stats(values: list[int]) -> Any:
    return values[0] if len(values) == 1 else "/".join(str(v) for v in values)


def _first_line(exc: Exception, source: str = "") -> str:
    """A scenario error on one line, without the file name in front."""
    lines = str(exc).split("\n")
    text = " ".join(x.strip() for x in lines if x.strip())
    return text.removeprefix(f"{source}: ") if source else text


def _units(scenario: Scenario) -> list[tuple[str, list[Combatant]]]:
    """Every combatant, a ``count`` group as one, in scenario order."""
    out = []
    for group in scenario.groups:
        members = [c for c in scenario.combatants if c.group == group]
        out.append((group, members))
    return out


def rule_alternatives(spec: Any, value: Any) -> list[Any]:
    """The values of a rule other than ``value``: its choices, or the other boolean."""
    if spec.choices:
        return [c for c in spec.choices if c != value]
    if spec.kind is bool:
        return [not value]
    return []


def plan(scenario: Scenario) -> Plan:
    """Every variant of ``scenario`` (simulates nothing): each unit's main stat -1 and
    +1, then each alternative of each rule."""
    system = systems.get(scenario.system)
    variants: list[Variant] = []
    skipped: list[str] = []
    if system.main_field:
        for who, members in _units(scenario):
            for step in (1, -1):
                v = _stat_variant(scenario, who, members, step)
                (variants if isinstance(v, Variant) else skipped).append(v)  # type: ignore[arg-type]
    else:
        skipped.append(f"system {system.name} declares no main stat: no stat is changed")
    for rule, spec in system.rules.items():
        current = scenario.rules[rule]
        for value in rule_alternatives(spec, current):
            try:
                changed = with_changes(scenario, rules={rule: value})
            except ScenarioError as exc:
                why = _first_line(exc, scenario.source)
                skipped.append(f"rules.{rule}={_text(value)} skipped: {why}")
                continue
            variants.append(Variant(RULE, "rules", rule, current, value, 0, changed))
    return Plan(scenario, tuple(variants), tuple(skipped))


# --------------------------------------------------------------------------- the result
@dataclass(frozen=True)
class Sensitivity:
    """The paired change of every measure for every knob of a scenario.

    Attributes
    ----------
    scenario : Scenario
        As written.
    rounds, seed, batches, batch_rounds, t_paired :
        Rounds of every run (as written and each variant), the seed they share, the
        batches behind the paired errors and the t quantile of the 95% intervals.
    measures : tuple of Measure
        What a change is measured in (default: each side's action economy).
    table : pandas.DataFrame
        One row per (variant, measure), knobs ranked by size (``rank`` 1 is the
        largest): ``knob, kind, who, field, as_written, changed_to, measure,
        value_as_written, value_changed, difference`` (changed minus as written),
        ``se_paired, ci_low, ci_high``; then ``step`` (+1 / -1 of a stat, 0 for a
        rule) and the words the sentence uses (``measure_words``, ``knob_words``).
    skipped : tuple of str
        The changes left out, each with why (a stat at its bound, a rule value the
        scenario cannot take).
    """

    scenario: Scenario
    rounds: int
    seed: int | list[int]
    batches: int
    batch_rounds: int
    t_paired: float
    measures: tuple[Measure, ...]
    table: pd.DataFrame
    skipped: tuple[str, ...] = ()
    variants: tuple[Variant, ...] = field(default=(), repr=False, compare=False)

    @property
    def rows(self) -> pd.DataFrame:
        """``table``'s columns that sensitivity.csv and ``--format csv|md|json`` show
        (``COLUMNS``: the knob, the change, the measure and its paired difference)."""
        return self.table[COLUMNS]

    @property
    def knobs(self) -> list[str]:
        """The knobs, largest first."""
        return list(dict.fromkeys(self.table.knob))

    def headline(self, knob: str) -> pd.Series:
        """The row of ``knob`` with the largest absolute change (ties: the first)."""
        t = self.table[self.table.knob == knob]
        return t.loc[t.difference.abs().idxmax()] if t.difference.notna().any() else t.iloc[0]

    def detectable(self, row: Any) -> bool:
        """True if a row's paired 95% interval excludes 0."""
        return bool(row.ci_low > 0 or row.ci_high < 0)

    @property
    def economy(self) -> bool:
        """True if the measures are each side's action economy (the default)."""
        return all(m.label == f"side:{m.header}.{ECONOMY}" for m in self.measures)

    @property
    def answer(self) -> str:
        """One sentence: the knob the balance moves most with, and the next one."""
        return answer_sentence(self)

    @property
    def note(self) -> str:
        """What was played, in one line."""
        measured = ", ".join(m.words for m in self.measures)
        return (
            f"{len(self.variants)} variants, each {self.rounds:,} rounds with seed {self.seed} "
            f"(the same dice as written), {self.batches} batches; change in {measured}: the "
            f"variant minus as written, ± the paired 95% half-width (t, {self.batches - 1} d.f.)"
        )

    def format_table(self, width: int = 100) -> str:
        """The table ``simkit sensitivity`` prints."""
        from simkit.output.render import render

        return render("sensitivity", self, width=width)

    def _repr_html_(self) -> str:
        from simkit.output.notebook import sensitivity_html

        return sensitivity_html(self)

    def plot(self, measure: str | None = None) -> Any:
        """The tornado: per knob its changes of ``measure`` (default: the measure that
        moves most) with their paired 95% intervals, largest on top."""
        from simkit.output.plots import tornado_figure

        return tornado_figure(self, measure)

    def files(self) -> dict[str, str]:
        """``sensitivity.csv`` (``table``), by file name."""
        from simkit.output.result_files import frame_csv

        return {"sensitivity.csv": frame_csv(self.table)}

    def write(self, out_dir: str | Path) -> list[Path]:
        return OutputDir(out_dir, "out_dir").write(self.files())


def _knob_words(scenario: Scenario, v: Variant) -> str:
    if v.kind == RULE:
        return f"rules.{v.field} = {_text(v.changed_to)}"
    size = len(scenario.members(v.who))
    if size > 1 and v.who in scenario.groups:
        return f"the {v.field} of {v.who} ×{size}"
    return f"{possessive(v.who)} {v.field}"


def _change_words(s: Sensitivity, row: Any) -> str:
    return format_difference(ECONOMY, row.difference, s.t_paired * row.se_paired)


def knob_reading(s: Sensitivity, knob: str, measure_words: bool = True) -> str:
    """A knob's changes in words, in the measure of its largest change: ``party's action
    economy -1.41 ± 0.01 per point up, +1.74 ± 0.02 per point down`` or ``+0.008 ±
    0.001``."""
    top = s.headline(knob)
    rows = s.table[(s.table.knob == knob) & (s.table.measure == top.measure)]
    if top.kind == STAT:
        parts = [
            f"{_change_words(s, r)} per point {'up' if r.step > 0 else 'down'}"
            for r in rows.sort_values("step", ascending=False).itertuples()
        ]
        text = ", ".join(parts)
    else:
        text = _change_words(s, top)
    return f"{top.measure_words} {text}" if measure_words else text


def answer_sentence(s: Sensitivity) -> str:
    """``The balance moves most with Troll Chief's readiness (party's action economy
    -0.99 ± 0.01 per point up, +1.56 ± 0.02 per point down), then rules.order = chain
    (+0.008 ± 0.001).``  Knobs whose every interval contains 0 are not named."""
    if s.table.empty:
        return "Nothing to vary: no stat can move by a point and no rule has an alternative."
    found = [k for k in s.knobs if s.detectable(s.headline(k))]
    if (s.table.difference == 0).all() and (s.table.se_paired == 0).all():
        what = "any side's action economy" if s.economy else "the objective"
        return f"No knob changes {what} here: every change is exactly 0, batch by batch."
    if not found:
        return (
            f"No knob moves the balance detectably in {s.rounds:,} rounds: every paired 95% "
            "interval contains 0."
        )
    many = len(s.measures) > 1
    first = s.headline(found[0])
    text = f"The balance moves most with {first.knob_words} ({knob_reading(s, found[0], many)})"
    if len(found) > 1:
        second = s.headline(found[1])
        same = not many or second.measure == first.measure
        text += f", then {second.knob_words} ({knob_reading(s, found[1], not same)})"
    else:
        text += "; no other knob moves it detectably"
    return text + "."


def assemble(
    plan_: Plan,
    measures: Sequence[Measure],
    base: Terms,
    done: Sequence[Terms],
    rounds: int,
    seed: int | list[int],
    batch_rounds: int,
) -> Sensitivity:
    """The :class:`Sensitivity` of played runs: ``base`` the terms as written, ``done``
    those of each variant of ``plan_`` (same rounds, seed and batches)."""
    k = len(next(iter(base.values()))[1]) if base else 0
    t = t_quantile_975(k - 1) if k > 1 else float("nan")
    words = {m.label: m.words for m in measures}
    rows = []
    for v, terms in zip(plan_.variants, done, strict=True):
        for m in measures:
            a, u_a = base[m.label]
            b, u_b = terms[m.label]
            u = u_b - u_a
            se = math.sqrt(k / (k - 1) * float(np.dot(u, u))) if k > 1 else math.nan
            diff = b - a
            rows.append(
                {
                    "knob": v.knob,
                    "kind": v.kind,
                    "who": v.who,
                    "field": v.field,
                    "as_written": _text(v.as_written),
                    "changed_to": _text(v.changed_to),
                    "measure": m.label,
                    "value_as_written": a,
                    "value_changed": b,
                    "difference": diff,
                    "se_paired": se,
                    "ci_low": diff - t * se,
                    "ci_high": diff + t * se,
                    "step": v.step,
                    "measure_words": words[m.label],
                    "knob_words": _knob_words(plan_.scenario, v),
                }
            )
    extra = ["step", "measure_words", "knob_words"]
    table = pd.DataFrame(rows, columns=[c for c in COLUMNS if c != "rank"] + extra)
    if not table.empty:
        size = table.groupby("knob", sort=False).difference.apply(lambda d: d.abs().max())
        order = {
            knob: n for n, knob in enumerate(size.sort_values(ascending=False, kind="stable").index)
        }
        table["rank"] = table.knob.map(order) + 1
        table = table.sort_values(["rank"], kind="stable").reset_index(drop=True)
    else:
        table["rank"] = pd.Series(dtype=int)
    table = table[COLUMNS + extra]
    return Sensitivity(
        plan_.scenario,
        rounds,
        seed,
        k,
        batch_rounds,
        t,
        tuple(measures),
        table,
        plan_.skipped,
        plan_.variants,
    )


def paired_batch_rounds(scenario: Scenario, rounds: int) -> int:
    """Rounds per batch: those of a report's paired runs (at most 64 batches, fewer
    where a batch's sums are large), so that a report can pair its own runs too."""
    from simkit.analysis.report_runs import _batch_rounds

    return _batch_rounds(scenario, rounds)


def sensitivity(
    scenario_or_path: Scenario | str | Path,
    rounds: int | None = None,
    rng: RngLike = None,
    *,
    measures: Sequence[Measure] | None = None,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> Sensitivity:
    """Play the scenario as written and every variant of :func:`plan` with the same
    seed and rounds, and return the paired change of each measure (see the module
    docstring).

    Parameters
    ----------
    scenario_or_path : Scenario or path
    rounds : int, optional
        Rounds of every run; default the scenario's ``rounds``.
    rng : numpy Generator, SeedSequence, int or None, optional
        One source of randomness for every run; default the scenario's ``seed``.
    measures : sequence of Measure, optional
        Default: each side's action economy (:func:`default_measures`).
    workers : int, optional
        Runs played at once (default: all cores).
    progress : callable, optional
        Called with the rounds of every finished chunk of any run.
    """
    scenario = as_scenario(scenario_or_path)
    rounds = scenario.rounds if rounds is None else rounds
    measures = tuple(measures) if measures else default_measures(scenario)
    the_plan = plan(scenario)
    seq = seed_sequence(scenario.seed if rng is None else rng)
    seed = seed_value(seq)
    batch = paired_batch_rounds(scenario, rounds)
    lock = threading.Lock()

    def count(n: int) -> None:
        if progress is not None:
            with lock:
                progress(n)

    runs = [scenario, *(v.scenario for v in the_plan.variants)]
    threads = max(1, min(workers or default_workers(), len(runs)))
    play = functools.partial(simulate, workers=1, progress=count, batch_rounds=batch)

    def terms_of(s: Scenario) -> Terms:
        return measure_terms(play(s, rounds, seq), measures)  # the batch sums go here

    pool = ThreadPoolExecutor(max_workers=threads)
    try:
        futures = [pool.submit(terms_of, s) for s in runs]
        done = [f.result() for f in futures]
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return assemble(the_plan, measures, done[0], done[1:], rounds, seed, batch)


def total_rounds(scenario: Scenario, rounds: int) -> int:
    """Rounds a sensitivity plays in all (as written and every variant)."""
    return rounds * (1 + len(plan(scenario).variants))
