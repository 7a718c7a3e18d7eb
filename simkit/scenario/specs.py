"""Changes written as text: ``--set 'Wolf.readiness=3'``, ``--vary 'Wolf.readiness=1..5'``.

A spec is ``TARGET.FIELD=VALUES``:

``TARGET``
    a combatant name, the base name of a ``count`` group (every member changes),
    ``*`` (every combatant) or ``rules``.
``VALUES``
    one value, ``a..b`` (every integer from a to b, both included; integer fields
    only) or a comma-separated list ``x,y,z``.  A value is read by the field's type
    (integer, number, ``true``/``false`` or text).  On a number field a value written
    with a sign is an *offset* from the scenario's own value (``+1``, ``-2``,
    ``+0..+3``), applied to each selected combatant.

Every value goes through the one validator (``scenario.validate``), so a spec is
accepted exactly when a file saying the same would be.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from simkit import systems
from simkit.digits import parse_int, parse_number
from simkit.scenario.model import Scenario, ScenarioError
from simkit.scenario.validate import (
    MAX_ROUNDS,
    check_value,
    shown,
    suggest,
    with_changes,
)
from simkit.systems.base import COMMON_FIELDS, IDENTITY_FIELDS, Field, Problem

ALL = "*"  # the target that selects every combatant
RULES = "rules"
MAX_POINTS = 10_000
SWEEP_KEYS = ("vary", "rounds")
SET_FORM = "NAME.FIELD=VALUE, e.g. 'Gunnar.hold=never', '*.advantage=1' or 'rules.order=chain'"
VARY_FORM = (
    "TARGET.FIELD=VALUES, e.g. 'Wolf.readiness=1..5', 'Wolf.readiness=+0..+2' or "
    "'rules.order=dynamic,chain'"
)

DIGITS_NOTE = "numbers are written in ASCII digits, e.g. 3, -2 or 0.5"

VarySpec = str | Sequence[str] | Mapping[str, Any]


@dataclass(frozen=True)
class Offset:
    """A change relative to each combatant's own value (``+1``)."""

    delta: int | float

    def __str__(self) -> str:
        return f"{self.delta:+g}"

    def __repr__(self) -> str:
        return f"Offset({self.delta:+g})"


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

    @property
    def relative(self) -> bool:
        return any(isinstance(v, Offset) for v in self.values)


def _fields(scenario: Scenario) -> dict[str, Field]:
    system = systems.get(scenario.system)
    return {k: v for k, v in {**COMMON_FIELDS, **system.fields}.items() if k not in IDENTITY_FIELDS}


def targets_of(scenario: Scenario) -> list[str]:
    return list(dict.fromkeys([*scenario.names, *scenario.groups]))


def field_spec(scenario: Scenario, target: str, name: str, origin: str) -> Field:
    """The schema entry of ``target.name``; ScenarioError (with suggestions) if unknown."""
    system = systems.get(scenario.system)
    if target == RULES:
        if name not in system.rules:
            raise ScenarioError(
                f"{origin}: unknown rule {shown(name)} for system {system.name}"
                f"{suggest(name, list(system.rules))}; allowed: {', '.join(system.rules) or 'none'}"
            )
        return system.rules[name]
    known = targets_of(scenario)
    if target != ALL and target not in known:
        raise ScenarioError(
            f"{origin}: no combatant or group named {shown(target)}{suggest(target, known)}; "
            f"allowed: {', '.join(known)}, '*' (every combatant) or 'rules'"
        )
    fields = _fields(scenario)
    if name not in fields:
        others = [s.name for s in systems.all_systems() if s is not system and name in s.fields]
        hint = f" ('{name}' is a field of system {'/'.join(others)})" if others else ""
        raise ScenarioError(
            f"{origin}: {shown(name)} is not a field of system {system.name} that can be "
            f"changed{suggest(name, list(fields))}{hint}; allowed: {', '.join(fields)}"
        )
    return fields[name]


def split_spec(spec: Any, origin: str, form: str = VARY_FORM) -> tuple[str, str, str]:
    """``'Wolf.readiness=1..5'`` -> ``('Wolf', 'readiness', '1..5')``."""
    if not isinstance(spec, str):
        raise ScenarioError(f"{origin}: expected {form}; got {type(spec).__name__} {shown(spec)}")
    left, eq, right = spec.partition("=")
    target, dot, name = left.strip().rpartition(".")
    if not eq or not dot or not target.strip() or not name.strip() or not right.strip():
        raise ScenarioError(f"{origin}: expected {form}")
    return target.strip(), name.strip(), right.strip()


def _numeric(spec: Field) -> bool:
    return spec.kind in (int, float)


def _read_number(text: str, kind: type) -> int | float:
    """An integer or a number in ASCII digits (``simkit.digits``); ValueError otherwise."""
    return parse_int(text) if kind is int else parse_number(text)


def parse_value(text: str, spec: Field, what: str, origin: str, target: str = "") -> Any:
    """One value written as text, read by the field's type and checked (an Offset for a
    signed number on a combatant's number field)."""
    text = text.strip()
    if spec.names and len(text) >= 2 and text[0] == "[" and text[-1] == "]":
        return check(names_of(text), spec, what, origin)  # guard=[Mira, Kira] (R7a)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    if _numeric(spec) and text[:1] in "+-" and target != RULES:
        try:
            unsigned = _read_number(text[1:], spec.kind)
            if text[1:2] == "-":
                raise ValueError
            delta: int | float = -unsigned if text[0] == "-" else unsigned
        except ValueError:
            raise ScenarioError(
                f"{origin}: {what}: cannot read {shown(text)}; expected {spec.describe()} or an "
                f"offset such as +1 ({DIGITS_NOTE})"
            ) from None
        return Offset(delta)
    value: Any = text
    try:
        if spec.kind is bool:
            lowered = text.lower()
            if lowered not in ("true", "false"):
                raise ValueError
            value = lowered == "true"
        elif spec.kind in (int, float):
            value = _read_number(text, spec.kind)
        elif spec.aliases and text.lower() in ("true", "false"):
            value = text.lower() == "true"
    except ValueError:
        raise ScenarioError(
            f"{origin}: {what}: cannot read {shown(text)}; expected {spec.describe()}"
            + (" (or an offset such as +1)" if _numeric(spec) and target != RULES else "")
            + (f"; {DIGITS_NOTE}" if _numeric(spec) else "")
        ) from None
    return check(value, spec, what, origin)


def names_of(text: str) -> list[str]:
    """``[Mira, "Kira"]`` -> ``["Mira", "Kira"]`` (a names field's list, quotes optional)."""
    inner = text.strip()[1:-1]
    out = []
    for part in inner.split(","):
        part = part.strip()
        if len(part) >= 2 and part[0] == part[-1] and part[0] in "'\"":
            part = part[1:-1]
        out.append(part)
    return [] if out == [""] else out


def check(value: Any, spec: Field, what: str, origin: str) -> Any:
    """``value`` if the field allows it (Offsets are checked when applied)."""
    if isinstance(value, Offset):
        return value
    checked, message = check_value(spec, value)
    if message:
        raise ScenarioError(f"{origin}: {what}: {message}")
    return checked


def changes_for(
    scenario: Scenario, assignments: Iterable[tuple[str, str, Any]]
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """``with_changes`` arguments (rules, combatants) for (target, field, value) triples;
    offsets become each selected combatant's own value plus the offset."""
    rules: dict[str, Any] = {}
    combatants: dict[str, dict[str, Any]] = {}
    for target, name, value in assignments:
        if target == RULES:
            rules[name] = value
            continue
        if target == ALL:
            chosen = [c.name for c in scenario.combatants]
        else:
            chosen = [target]
        if not isinstance(value, Offset):
            for who in chosen:
                combatants.setdefault(who, {})[name] = value
            continue
        selected = [c for c in scenario.combatants if target == ALL or target in (c.name, c.group)]
        for c in selected:
            current = combatants.get(c.name, {}).get(name, c.params[name])
            if current is None:  # vtm dexterity of a rating-given combatant
                current = c.params[name]
            combatants.setdefault(c.name, {})[name] = (current or 0) + value.delta
    return rules, combatants


def apply_assignments(
    scenario: Scenario, assignments: Iterable[tuple[str, str, Any]], origin: str
) -> Scenario:
    """``scenario`` with every (target, field, value) applied; ScenarioError names ``origin``."""
    rules, combatants = changes_for(scenario, assignments)
    try:
        return with_changes(scenario, rules=rules, combatants=combatants)
    except ScenarioError as exc:
        message = str(exc).removeprefix(f"{scenario.source}: ")
        raise ScenarioError(f"{origin}: {message}", exc.problems) from None


def apply_set(
    scenario: Scenario, changes: Sequence[str] | Mapping[str, Any] | str, label: str = "set"
) -> Scenario:
    """``scenario`` with ``Name.field=value`` changes applied (``*`` and ``rules`` too)."""
    if isinstance(changes, str):
        changes = [changes]
    assignments = []
    if isinstance(changes, Mapping):
        for key, value in changes.items():
            origin = f"{label} {shown(key)}"
            target, name, _ = split_spec(f"{key}=x", origin, SET_FORM)
            spec = field_spec(scenario, target, name, origin)
            if isinstance(value, str) and spec.kind is not str:
                value = parse_value(value, spec, f"{target}.{name}", origin, target)
            assignments.append((target, name, check(value, spec, f"{target}.{name}", origin)))
    else:
        if not changes:
            raise ScenarioError(f"{label}: no changes given; expected {SET_FORM}")
        for text in changes:
            origin = f"{label} {shown(text)}"
            target, name, raw = split_spec(text, origin, SET_FORM)
            spec = field_spec(scenario, target, name, origin)
            listed = spec.names and raw.startswith("[") and raw.endswith("]")
            if ("," in raw or ".." in raw) and not listed:
                raise ScenarioError(
                    f"{origin}: one value expected (ranges and lists are for --vary); "
                    f"expected {SET_FORM}"
                )
            assignments.append(
                (target, name, parse_value(raw, spec, f"{target}.{name}", origin, target))
            )
    return apply_assignments(scenario, assignments, label)


def parse_vary(
    scenario: Scenario,
    vary: VarySpec,
    label: str = "vary",
    *,
    most: int | None = None,
    what: str = "a sweep",
) -> list[Axis]:
    """Read and check sweep specs; one :class:`Axis` per varied field, in the given order.

    ``most`` bounds the number of varied fields (tune and report: 2); the message names
    ``what`` varies them ("a report varies one or two fields, got 3")."""
    varier = what
    if isinstance(vary, str):
        vary = [vary]
    items: list[tuple[str, str, str, str, Any]] = []
    if isinstance(vary, Mapping):
        for key, values in vary.items():
            origin = f"{label} {shown(key)}"
            target, name, _ = split_spec(f"{key}=x", origin)
            items.append((str(key), origin, target, name, values))
    elif isinstance(vary, Sequence):
        for spec in vary:
            origin = f"{label} {shown(spec)}"
            target, name, text = split_spec(spec, origin)
            items.append((spec, origin, target, name, text))
    else:
        raise ScenarioError(
            f"{label}: expected a spec string, a list of them or a mapping, got "
            f"{type(vary).__name__}"
        )
    if not items:
        raise ScenarioError(f"{label}: nothing to vary; give at least one spec like {VARY_FORM}")
    axes: list[Axis] = []
    seen: dict[str, str] = {}
    for written, origin, target, name, raw in items:
        spec = field_spec(scenario, target, name, origin)
        what = f"{target}.{name}"
        if what in seen:
            raise ScenarioError(f"{origin}: {what} is already varied by {seen[what]}")
        seen[what] = origin
        values = _values(raw, spec, what, origin, target)
        axes.append(Axis(target, name, tuple(values), written))
    if most is not None and len(axes) > most:
        words = "one or two" if most == 2 else f"at most {most}"
        raise ScenarioError(f"{label}: {varier} varies {words} fields, got {len(axes)}")
    points = 1
    for axis in axes:
        points *= len(axis.values)
    if points > MAX_POINTS:
        raise ScenarioError(f"{label}: the grid has {points:,} points; at most {MAX_POINTS:,}")
    return axes


def _range_end(text: str, spec: Field, what: str, origin: str, target: str) -> Any:
    return parse_value(text, Field(int, low=None, high=None), what, origin, target)


def _values(raw: Any, spec: Field, what: str, origin: str, target: str) -> list[Any]:
    if isinstance(raw, str):
        text = raw.strip()
        low, dots, high = text.partition("..")
        if dots:
            if spec.kind is not int:
                raise ScenarioError(
                    f"{origin}: a range a..b needs an integer field; {what} expects "
                    f"{spec.describe()} (list values as x,y,z)"
                )
            if not low.strip() or not high.strip():
                raise ScenarioError(f"{origin}: {what}: a range needs both ends, e.g. 1..5")
            a = _range_end(low, spec, what, origin, target)
            b = _range_end(high, spec, what, origin, target)
            if isinstance(a, Offset) != isinstance(b, Offset):
                raise ScenarioError(
                    f"{origin}: {what}: give both ends as values (1..5) or both as offsets (+0..+3)"
                )
            lo = a.delta if isinstance(a, Offset) else a
            hi = b.delta if isinstance(b, Offset) else b
            if hi < lo:
                raise ScenarioError(
                    f"{origin}: {what}: empty range {low.strip()}..{high.strip()} (the first "
                    "value must not exceed the last)"
                )
            if hi - lo + 1 > MAX_POINTS:
                raise ScenarioError(
                    f"{origin}: {what}: {hi - lo + 1:,} values; at most {MAX_POINTS:,}"
                )
            if isinstance(a, Offset):
                values: list[Any] = [Offset(v) for v in range(int(lo), int(hi) + 1)]
            else:
                values = [check(v, spec, what, origin) for v in range(int(lo), int(hi) + 1)]
        else:
            parts = text.split(",")
            if any(not p.strip() for p in parts):
                raise ScenarioError(f"{origin}: {what}: empty value in list {shown(text)}")
            if len(parts) > MAX_POINTS:
                raise ScenarioError(
                    f"{origin}: {what}: {len(parts):,} values; at most {MAX_POINTS:,}"
                )
            values = [parse_value(p, spec, what, origin, target) for p in parts]
    elif isinstance(raw, Sequence | range) and not isinstance(raw, bytes | str):
        if len(raw) > MAX_POINTS:
            raise ScenarioError(f"{origin}: {what}: {len(raw):,} values; at most {MAX_POINTS:,}")
        values = [check(v, spec, what, origin) for v in raw]
        if not values:
            raise ScenarioError(f"{origin}: {what}: no values given")
    else:
        raise ScenarioError(
            f"{origin}: {what}: expected a list of values or a spec like '1..5', got "
            f"{type(raw).__name__} {shown(raw)}"
        )
    seen: set[Any] = set()  # one pass: a list of 10,000 values is checked in milliseconds
    for v in values:
        if v in seen:
            shown_v = shown(v) if isinstance(v, str) else v
            raise ScenarioError(f"{origin}: {what}: value {shown_v} is listed twice")
        seen.add(v)
    return values


def grid_scenarios(scenario: Scenario, axes: Sequence[Axis], label: str = "vary") -> list[Scenario]:
    """The scenario of every grid point (each checked again), in grid order."""
    out = []
    for values in itertools.product(*(a.values for a in axes)):
        assignments = [(a.target, a.field, v) for a, v in zip(axes, values, strict=True)]
        point = ", ".join(f"{a.column}={cell(v)}" for a, v in zip(axes, values, strict=True))
        out.append(apply_assignments(scenario, assignments, f"{label}: grid point {point}"))
    return out


def cell(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def sweep_table(scenario: Scenario) -> tuple[VarySpec | None, int | None]:
    """The ``vary`` and ``rounds`` of the scenario's ``[sweep]`` table (checked)."""
    problems = _sweep_table_problems(scenario)
    if problems:
        raise ScenarioError.of(scenario.source, [(p.path, p.message) for p in problems])
    table = dict(scenario.sweep)
    return table.get("vary"), table.get("rounds")


def _sweep_table_problems(scenario: Scenario) -> list[Problem]:
    table = dict(scenario.sweep)
    problems = []
    for key in table:
        if key not in SWEEP_KEYS:
            problems.append(
                Problem(
                    f"sweep.{key}" if len(str(key)) <= 40 else "sweep",
                    f"unknown key {shown(key)}{suggest(key, list(SWEEP_KEYS))}; allowed: "
                    + ", ".join(SWEEP_KEYS),
                )
            )
    rounds = table.get("rounds")
    if rounds is not None and (
        isinstance(rounds, bool) or not isinstance(rounds, int) or not 1 <= rounds <= MAX_ROUNDS
    ):
        problems.append(
            Problem(
                "sweep.rounds", f"expected an integer from 1 to {MAX_ROUNDS}, got {shown(rounds)}"
            )
        )
    vary = table.get("vary")
    if vary is None:
        if table:
            problems.append(
                Problem("sweep.vary", 'missing; expected a list like ["Wolf.readiness=1..5"]')
            )
    elif not isinstance(vary, list | dict) or (
        isinstance(vary, list) and not all(isinstance(v, str) for v in vary)
    ):
        problems.append(
            Problem(
                "sweep.vary",
                'expected a list of strings like ["Wolf.readiness=1..5"] or a table like '
                f'{{"Wolf.readiness" = [1, 2, 3]}}, got {shown(vary)}',
            )
        )
    return problems


def sweep_problems(scenario: Scenario) -> list[Problem]:
    """Everything wrong with the scenario's [sweep] table, its grid points included."""
    problems = _sweep_table_problems(scenario)
    vary = dict(scenario.sweep).get("vary")
    if problems or vary is None:
        return problems
    try:
        axes = parse_vary(scenario, vary, label="sweep.vary")
        grid_scenarios(scenario, axes, label="sweep.vary")
    except ScenarioError as exc:
        message = str(exc).removeprefix("sweep.vary: ").removeprefix("sweep.vary ")
        return [Problem("sweep.vary", message)]
    return []
