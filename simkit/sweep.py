"""Parameter sweeps: run a scenario over a grid of field values with common random numbers.

A sweep varies one or more fields (``Wolf.readiness=1..5``, ``rules.order=dynamic,chain``)
over the full grid of their values and runs every grid point with the *same* seed.
Every round draws from a stream of its own (``random_stream``), so all points see the
same dice round by round: differences between neighbouring points are mostly the
effect of the change, not noise.

Specs (``--vary`` on the command line, ``vary`` in Python, ``vary`` in a ``[sweep]``
table of the scenario file) have the form ``TARGET.FIELD=VALUES``:

``TARGET``
    a combatant name, the base name of a ``count`` group (every member changes),
    ``*`` (every combatant) or ``rules``.
``VALUES``
    ``a..b`` (every integer from a to b, both included; integer fields only) or a
    comma-separated list ``x,y,z``; each value is read by the field's type (integer,
    number, ``true``/``false`` or text) and checked against what the field allows.

Every spec and every grid point is checked before anything is simulated; a bad one
raises :class:`~simkit.scenario.ScenarioError` with a one-line message naming it.
"""

from __future__ import annotations

import difflib
import itertools
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simkit.api import run, validate
from simkit.deferred import pandas as pd
from simkit.distributed import connect
from simkit.engine import RngLike, seed_sequence
from simkit.metrics import PROBABILITIES, Z95
from simkit.result import COLUMNS, Result
from simkit.scenario import Scenario, ScenarioError, with_changes
from simkit.schema import COMMON_FIELDS, SYSTEM_FIELDS, SYSTEM_RULES, Field

ALL = "*"  # the target that selects every combatant
RULES = "rules"
FIXED_FIELDS = ("name", "side", "count")  # identity fields: never changed
MAX_POINTS = 10_000
SWEEP_KEYS = ("vary", "rounds")
# Metrics drawn by ``SweepResult.write`` and printed by ``format_table``.
PLOT_METRICS = ("first_action", "actions", "attacked_before_acting")

VarySpec = str | Sequence[str] | Mapping[str, Any]


@dataclass(frozen=True)
class Axis:
    """One varied field and the values it takes, in grid order.

    ``target`` is a combatant or group name, ``"*"`` or ``"rules"``; ``column`` is the
    name of the field's column in sweep tables (``"Wolf.readiness"``).
    """

    target: str
    field: str
    values: tuple[Any, ...]
    spec: str

    @property
    def column(self) -> str:
        return f"{self.target}.{self.field}"


def changes_for(
    scenario: Scenario, assignments: Iterable[tuple[str, str, Any]]
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """``with_changes`` arguments (rules, combatants) for (target, field, value) triples."""
    rules: dict[str, Any] = {}
    combatants: dict[str, dict[str, Any]] = {}
    for target, name, value in assignments:
        if target == RULES:
            rules[name] = value
        elif target == ALL:
            for c in scenario.combatants:
                combatants.setdefault(c.name, {})[name] = value
        else:
            combatants.setdefault(target, {})[name] = value
    return rules, combatants


def apply_assignments(
    scenario: Scenario, assignments: Iterable[tuple[str, str, Any]], origin: str
) -> Scenario:
    """``scenario`` with every (target, field, value) applied; ScenarioError names ``origin``."""
    rules, combatants = changes_for(scenario, assignments)
    try:
        return with_changes(scenario, rules=rules, combatants=combatants)
    except ScenarioError as exc:
        raise ScenarioError(f"{origin}: {exc}") from None


def field_spec(scenario: Scenario, target: str, name: str, origin: str) -> Field:
    """The schema entry of ``target.name``; ScenarioError (with suggestions) if unknown."""
    if target == RULES:
        specs = SYSTEM_RULES[scenario.system]
        if name not in specs:
            raise ScenarioError(
                f"{origin}: unknown rule '{name}' for system {scenario.system}"
                f"{_suggest(name, list(specs))}; allowed: {', '.join(specs) or 'none'}"
            )
        return specs[name]
    known = _targets(scenario)
    if target != ALL and target not in known:
        raise ScenarioError(
            f"{origin}: no combatant or group named '{target}'{_suggest(target, known)}; "
            f"allowed: {', '.join(known)}, '*' (every combatant) or 'rules'"
        )
    fields = {
        k: v
        for k, v in {**COMMON_FIELDS, **SYSTEM_FIELDS[scenario.system]}.items()
        if k not in FIXED_FIELDS
    }
    if name not in fields:
        others = [s for s, f in SYSTEM_FIELDS.items() if s != scenario.system and name in f]
        hint = f" ('{name}' is a field of system {'/'.join(others)})" if others else ""
        raise ScenarioError(
            f"{origin}: '{name}' is not a field of system {scenario.system} that can be "
            f"changed{_suggest(name, list(fields))}{hint}; allowed: {', '.join(fields)}"
        )
    return fields[name]


def split_spec(
    spec: str,
    origin: str,
    form: str = "TARGET.FIELD=VALUES, e.g. 'Wolf.readiness=1..5' or 'rules.order=dynamic,chain'",
) -> tuple[str, str, str]:
    """``'Wolf.readiness=1..5'`` -> ``('Wolf', 'readiness', '1..5')``."""
    if not isinstance(spec, str):
        raise ScenarioError(f"{origin}: expected {form}; got {type(spec).__name__} {spec!r}")
    left, eq, right = spec.partition("=")
    target, dot, name = left.strip().rpartition(".")
    if not eq or not dot or not target.strip() or not name.strip() or not right.strip():
        raise ScenarioError(f"{origin}: expected {form}")
    return target.strip(), name.strip(), right.strip()


def parse_value(text: str, spec: Field, what: str, origin: str) -> Any:
    """One value written as text, read by the field's type and checked."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    value: Any = text
    try:
        if spec.kind is bool:
            lowered = text.lower()
            if lowered not in ("true", "false"):
                raise ValueError
            value = lowered == "true"
        elif spec.kind is int:
            value = int(text)
        elif spec.kind is float:
            value = float(text)
    except ValueError:
        raise ScenarioError(
            f"{origin}: {what}: cannot read {text!r}; expected {spec.describe()}"
        ) from None
    return check_value(value, spec, what, origin)


def check_value(value: Any, spec: Field, what: str, origin: str) -> Any:
    """``value`` if the field allows it, else ScenarioError saying what is allowed."""
    kind_ok = (
        isinstance(value, bool)
        if spec.kind is bool
        else not isinstance(value, bool)
        and isinstance(value, int | float if spec.kind is float else spec.kind)
    )
    if not kind_ok:
        raise ScenarioError(
            f"{origin}: {what}: expected {spec.describe()}, got {type(value).__name__} {value!r}"
        )
    if spec.kind is float:
        value = float(value)
    bad = (
        value != value
        or (spec.low is not None and value < spec.low)
        or (spec.high is not None and value > spec.high)
        or (spec.choices is not None and value not in spec.choices)
        or (spec.check is not None and not spec.check(value))
        or (spec.kind is str and not value.strip())
    )
    if bad:
        hint = (
            _suggest(value, list(spec.choices)) if spec.choices and isinstance(value, str) else ""
        )
        raise ScenarioError(
            f"{origin}: {what}: {value!r} is not allowed{hint}; allowed: {spec.describe()}"
        )
    return value


def parse_vary(scenario: Scenario, vary: VarySpec, label: str = "vary") -> list[Axis]:
    """Read and check sweep specs; one :class:`Axis` per varied field, in the given order.

    ``vary`` is a spec string, a list of them, or a mapping ``{"Wolf.readiness":
    [1, 2, 3]}`` (values may also be a spec string such as ``"1..5"``).  ``label``
    starts every error message (``--vary`` on the command line).
    """
    if isinstance(vary, str):
        vary = [vary]
    # (spec as written, origin of messages, target, field, raw values)
    items: list[tuple[str, str, str, str, Any]] = []
    if isinstance(vary, Mapping):
        for key, values in vary.items():
            origin = f"{label} {key!r}"
            target, name, _ = split_spec(f"{key}=x", origin)
            items.append((str(key), origin, target, name, values))
    elif isinstance(vary, Sequence):
        for spec in vary:
            origin = f"{label} {spec!r}"
            target, name, text = split_spec(spec, origin)
            items.append((spec, origin, target, name, text))
    else:
        raise ScenarioError(
            f"{label}: expected a spec string, a list of them or a mapping, got "
            f"{type(vary).__name__}"
        )
    if not items:
        raise ScenarioError(
            f"{label}: nothing to vary; give at least one spec like 'Wolf.readiness=1..5'"
        )
    axes: list[Axis] = []
    seen: dict[str, str] = {}
    for written, origin, target, name, raw in items:
        spec = field_spec(scenario, target, name, origin)
        what = f"{target}.{name}"
        if what in seen:
            raise ScenarioError(f"{origin}: {what} is already varied by {seen[what]}")
        seen[what] = origin
        values = _values(raw, spec, what, origin)
        axes.append(Axis(target, name, tuple(values), written))
    points = 1
    for axis in axes:
        points *= len(axis.values)
    if points > MAX_POINTS:
        raise ScenarioError(f"{label}: the grid has {points:,} points; at most {MAX_POINTS:,}")
    return axes


def _values(raw: Any, spec: Field, what: str, origin: str) -> list[Any]:
    if isinstance(raw, str):
        text = raw.strip()
        low, dots, high = text.partition("..")
        if dots:
            if spec.kind is not int:
                raise ScenarioError(
                    f"{origin}: a range a..b needs an integer field; {what} expects "
                    f"{spec.describe()} (list values as x,y,z)"
                )
            a = parse_value(low, Field(int), what, origin) if low.strip() else None
            b = parse_value(high, Field(int), what, origin) if high.strip() else None
            if a is None or b is None:
                raise ScenarioError(f"{origin}: {what}: a range needs both ends, e.g. 1..5")
            if b < a:
                raise ScenarioError(
                    f"{origin}: {what}: empty range {a}..{b} (the first value must not "
                    "exceed the last)"
                )
            if b - a + 1 > MAX_POINTS:
                raise ScenarioError(
                    f"{origin}: {what}: {b - a + 1:,} values; at most {MAX_POINTS:,}"
                )
            values = [check_value(v, spec, what, origin) for v in range(a, b + 1)]
        else:
            parts = text.split(",")
            if any(not p.strip() for p in parts):
                raise ScenarioError(f"{origin}: {what}: empty value in list {text!r}")
            values = [parse_value(p, spec, what, origin) for p in parts]
    elif isinstance(raw, Sequence | range) and not isinstance(raw, bytes):
        values = [check_value(v, spec, what, origin) for v in raw]
        if not values:
            raise ScenarioError(f"{origin}: {what}: no values given")
    else:
        raise ScenarioError(
            f"{origin}: {what}: expected a list of values or a spec like '1..5', got "
            f"{type(raw).__name__} {raw!r}"
        )
    duplicates = [v for k, v in enumerate(values) if v in values[:k]]
    if duplicates:
        raise ScenarioError(f"{origin}: {what}: value {duplicates[0]!r} is listed twice")
    return values


def sweep_table_vary(scenario: Scenario) -> tuple[VarySpec | None, int | None]:
    """The ``vary`` and ``rounds`` of the scenario's ``[sweep]`` table (checked)."""
    table = dict(scenario.sweep)
    source = scenario.source
    for key in table:
        if key not in SWEEP_KEYS:
            raise ScenarioError(
                f"{source}: sweep.{key}: unknown key{_suggest(key, list(SWEEP_KEYS))}; "
                f"allowed: {', '.join(SWEEP_KEYS)}"
            )
    rounds = table.get("rounds")
    if rounds is not None and (
        isinstance(rounds, bool) or not isinstance(rounds, int) or not 1 <= rounds <= 10**12
    ):
        raise ScenarioError(
            f"{source}: sweep.rounds: expected an integer from 1 to 1000000000000, got {rounds!r}"
        )
    vary = table.get("vary")
    if vary is None:
        if table:
            raise ScenarioError(
                f'{source}: sweep.vary: missing; expected a list like ["Wolf.readiness=1..5"]'
            )
        return None, rounds
    if not isinstance(vary, list | dict) or (
        isinstance(vary, list) and not all(isinstance(v, str) for v in vary)
    ):
        raise ScenarioError(
            f'{source}: sweep.vary: expected a list of strings like ["Wolf.readiness=1..5"] '
            f'or a table like {{"Wolf.readiness" = [1, 2, 3]}}, got {vary!r}'
        )
    return vary, rounds


@dataclass(frozen=True)
class SweepResult:
    """The outcome of a sweep: one :class:`~simkit.result.Result` per grid point.

    Attributes
    ----------
    scenario : Scenario
        The scenario the changes were applied to.
    axes : tuple of Axis
        The varied fields, first one slowest in the grid.
    rounds, seed :
        Rounds per point and the seed entropy shared by every point.
    table : pandas.DataFrame
        Tidy: one column per varied field (``"Wolf.readiness"``), then ``combatant,
        metric, mean, se, ci_low, ci_high`` (every row of every point's result table).
    results : tuple of Result
        The result of each grid point, in grid order (``points`` gives the values).
    """

    scenario: Scenario
    axes: tuple[Axis, ...]
    rounds: int
    seed: int | list[int]
    table: pd.DataFrame
    elapsed_s: float
    results: tuple[Result, ...] = field(repr=False, compare=False)

    @property
    def fields(self) -> list[str]:
        """The column names of the varied fields."""
        return [a.column for a in self.axes]

    @property
    def points(self) -> list[dict[str, Any]]:
        """Every grid point as ``{column: value}``, in grid order."""
        return [
            dict(zip(self.fields, values, strict=True))
            for values in itertools.product(*(a.values for a in self.axes))
        ]

    def result(self, **point: Any) -> Result:
        """The result of one grid point, by keyword: ``result(**{"Wolf.readiness": 3})``."""
        for p, res in zip(self.points, self.results, strict=True):
            if p == point:
                return res
        raise KeyError(f"no grid point {point!r}; fields: {', '.join(self.fields)}")

    def metric(self, metric: str, stat: str = "mean") -> pd.DataFrame:
        """One metric as a wide table: grid points as rows, combatants as columns."""
        t = self.table[self.table.metric == metric]
        if t.empty:
            raise KeyError(f"no metric {metric!r} in this sweep")
        out = t.pivot_table(
            index=self.fields, columns="combatant", values=stat, sort=False, dropna=False
        )
        names = [n for n in (*self.scenario.names, "") if n in out.columns]
        out = out[names]
        out.columns.name = None
        return out

    def format_table(self, metrics: Sequence[str] = PLOT_METRICS) -> str:
        """A compact table: one row per (point, combatant), ``mean ±h`` of ``metrics``."""
        present = [m for m in metrics if (self.table.metric == m).any()]
        header = [*self.fields, "combatant", *present]
        rows: list[list[str]] = []
        for point, res in zip(self.points, self.results, strict=True):
            for name in res.scenario.names:
                cells = [_cell(v) for v in point.values()] + [name]
                for m in present:
                    e = res.estimate(name, m)
                    cells.append(_fmt(m, e.mean, e.se))
                rows.append(cells)
        widths = [max(len(x) for x in col) for col in zip(header, *rows, strict=True)]
        lines = [
            "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip(),
            "  ".join("-" * w for w in widths),
        ]
        lines += [
            "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
        ]
        lines.append(
            f"{len(self.results)} points x {self.rounds:,} rounds, seed {self.seed} "
            f"(the same dice at every point), {self.elapsed_s:.2f} s; ± is the 95% interval "
            "half-width"
        )
        return "\n".join(lines)

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write ``sweep.csv`` and the plots into ``out_dir`` (atomically).

        One varied field: ``sweep_<metric>.png``, a line per combatant with its 95%
        band.  Two: ``sweep_<metric>.png``, a heatmap of the mean per combatant.  Plots
        are drawn for ``first_action``, ``actions`` and ``attacked_before_acting``;
        with three or more varied fields only ``sweep.csv`` is written.
        """
        from simkit.plots import figure_png, sweep_figure, write_files_atomically

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        files: dict[Path, bytes] = {
            out / "sweep.csv": self.table.to_csv(index=False, float_format="%.10g").encode()
        }
        if len(self.axes) <= 2:
            for m in PLOT_METRICS:
                if (self.table.metric == m).any():
                    files[out / f"sweep_{m}.png"] = figure_png(sweep_figure(self, m))
        write_files_atomically(files)
        return list(files)


def sweep(
    scenario_or_path: Scenario | str | Path,
    vary: VarySpec | None = None,
    rounds: int | None = None,
    rng: RngLike = None,
    *,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    scheduler: Any = None,
) -> SweepResult:
    """Run a scenario at every point of a grid of field values, with common random numbers.

    Parameters
    ----------
    scenario_or_path : Scenario or path
        The base scenario.
    vary : str, list of str or mapping, optional
        What to vary: ``["Wolf.readiness=1..5", "rules.order=dynamic,chain"]`` or
        ``{"Wolf.readiness": [1, 2, 3]}``.  Default: ``vary`` of the scenario's
        ``[sweep]`` table.  The grid is the cartesian product (first field slowest).
    rounds : int, optional
        Rounds per grid point; default ``rounds`` of ``[sweep]``, else the scenario's.
    rng : numpy Generator, SeedSequence, int or None, optional
        The randomness, normalised once and shared by every point (default: the
        scenario's ``seed``).  A point's numbers are identical to
        ``simkit.run(changed_scenario, rounds, seed)``.
    workers, progress, scheduler :
        As for :func:`simkit.run`; ``progress`` counts the rounds of every point.  A
        ``scheduler`` (Dask Client, address or ``"local"``) is connected to once for
        the whole sweep.

    Raises
    ------
    ScenarioError
        For a bad spec or grid point (unknown combatant or field, empty range,
        value out of range, malformed spec), before anything is simulated.
    """
    scenario = validate(scenario_or_path)
    file_vary, file_rounds = sweep_table_vary(scenario)
    label = "vary"
    if vary is None:
        if file_vary is None:
            raise ScenarioError(
                f"{scenario.source}: nothing to vary; give vary (e.g. 'Wolf.readiness=1..5') "
                "or a [sweep] table with vary = [...]"
            )
        vary, label = file_vary, f"{scenario.source}: sweep.vary"
    axes = parse_vary(scenario, vary, label)
    if rounds is None:
        rounds = file_rounds if file_rounds is not None else scenario.rounds
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
    scenarios = grid_scenarios(scenario, axes, label)
    seq = seed_sequence(scenario.seed if rng is None else rng)  # once: the same for every point
    start = time.perf_counter()
    with connect(scheduler, workers) as client:  # None without a scheduler
        results = tuple(
            run(s, rounds=rounds, rng=seq, workers=workers, progress=progress, scheduler=client)
            for s in scenarios
        )
    frames = []
    for values, res in zip(itertools.product(*(a.values for a in axes)), results, strict=True):
        t = res.table.copy()
        for axis, value in reversed(list(zip(axes, values, strict=True))):
            t.insert(0, axis.column, [value] * len(t))
        frames.append(t)
    table = pd.concat(frames, ignore_index=True)
    table = table[[a.column for a in axes] + COLUMNS]
    seed = seq.entropy if isinstance(seq.entropy, int) else list(seq.entropy)
    return SweepResult(
        scenario, tuple(axes), rounds, seed, table, time.perf_counter() - start, results
    )


def grid_scenarios(scenario: Scenario, axes: Sequence[Axis], label: str = "vary") -> list[Scenario]:
    """The scenario of every grid point (each checked again), in grid order."""
    out = []
    for values in itertools.product(*(a.values for a in axes)):
        assignments = [(a.target, a.field, v) for a, v in zip(axes, values, strict=True)]
        point = ", ".join(f"{a.column}={_cell(v)}" for a, v in zip(axes, values, strict=True))
        out.append(apply_assignments(scenario, assignments, f"{label}: grid point {point}"))
    return out


def _targets(scenario: Scenario) -> list[str]:
    return list(dict.fromkeys([*scenario.names, *(c.group for c in scenario.combatants)]))


def _suggest(key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _fmt(metric: str, mean: float, se: float) -> str:
    if mean != mean:
        return "n/a"
    half = Z95 * se
    if metric in PROBABILITIES:
        return f"{100 * mean:.2f}% ±{100 * half:.2f}"
    return f"{mean:.4f} ±{half:.4f}"
