"""One fight in another initiative system: ``simkit convert SCEN --to SYSTEM``.

A scenario of system X becomes the same fight in system Y: the same combatants (names,
sides, ``count`` groups, targets, attack shares), rounds and seed, with

* the main stat (``System.main_field``) mapped by a stat mapping: the default keeps the
  combatants' relative speed (``simkit.systems.counterparts.STAT_SCALE``; the reasons
  are in docs/rules-decisions.md, "One fight in three systems"), and ``mapping``
  entries override it or set further integer fields of Y;
* every policy the file *gives* mapped to its counterpart in Y where one exists
  (``counterparts.POLICY_COUNTERPARTS``); a policy left at its default takes Y's
  default (each system's default fight stays its default fight);
* everything without a counterpart listed: a policy or field the file gives with a
  non-default value, a rule with a non-default value, a ``[sweep]`` table.  The list is
  written as comments at the top of the new file and returned as ``notes``.

A mapping entry is ``FIELD=SOURCE+K``, ``FIELD=SOURCE-K``, ``FIELD=SOURCE*K``,
``FIELD=SOURCE`` or ``FIELD=N``: FIELD an integer field of Y, SOURCE an integer field
of X (its main stat, or another), K and N in ASCII digits (``simkit.digits``; K of
``*`` may be a decimal).  A product is rounded to the nearest integer (halves away from
zero).  A value outside FIELD's range is set to the nearest bound and listed.  Entries
are read with plain string methods, in time linear in their length.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from simkit import digits
from simkit.scenario.model import Combatant, Scenario
from simkit.scenario.validate import parse_toml, scenario_from_dict, suggest
from simkit.systems import counterparts, get, names
from simkit.systems.base import COMMON_FIELDS, NAME_MAX, REQUIRED

MAX_MAP_TEXT = 200
OPERATORS = ("+", "-", "*")


class MappingError(ValueError):
    """A bad stat mapping or target system; the message starts with the option's name."""


@dataclass(frozen=True)
class StatMap:
    """One entry of a stat mapping: ``field = source OP k`` (``source`` None: ``field = k``)."""

    field: str
    source: str | None
    op: str
    k: float
    text: str

    def apply(self, params: Mapping[str, Any]) -> int:
        if self.source is None:
            return int(self.k)
        x = params[self.source]
        if self.op == "+":
            return int(x + self.k)
        if self.op == "-":
            return int(x - self.k)
        product = x * self.k
        return int(math.floor(abs(product) + 0.5)) * (1 if product >= 0 else -1)


@dataclass(frozen=True)
class Conversion:
    """A converted scenario: ``text`` (the TOML file), ``scenario`` (it, validated),
    ``mapping`` (the stat mapping used, as text) and ``notes`` (what has no counterpart
    in the target system, or was moved to a field's bound)."""

    text: str
    scenario: Scenario
    mapping: tuple[str, ...]
    notes: tuple[str, ...]


def _int_fields(system: Any) -> list[str]:
    parts = counterparts.STAT_PARTS.get(system.name, ())
    return [k for k, f in system.fields.items() if f.kind is int and k not in parts]


def default_mapping(source: str, target: str) -> str:
    """The default mapping of the main stat, e.g. ``"rating=readiness+2"``."""
    a, b = get(source), get(target)
    shift = counterparts.STAT_SCALE.get(source, 0) - counterparts.STAT_SCALE.get(target, 0)
    sign = "+" if shift >= 0 else "-"
    tail = f"{sign}{abs(shift)}" if shift else ""
    return f"{b.main_field}={a.main_field}{tail}"


def check_target(scenario: Scenario, to: Any, label: str = "to") -> str:
    """``to`` checked: a registered system other than the scenario's own."""
    known = list(names())
    if not isinstance(to, str) or to not in known:
        shown = digits.shown(to) if isinstance(to, str) else repr(to)
        hint = suggest(to, known) if isinstance(to, str) else ""
        raise MappingError(f"{label}: no system {shown}{hint}; systems: {', '.join(known)}")
    if to == scenario.system:
        raise MappingError(
            f"{label}: {scenario.source} is a {to} scenario already; choose another system "
            f"({', '.join(k for k in known if k != to)})"
        )
    return to


def parse_map(text: Any, source: str, target: str, label: str = "map") -> StatMap:
    """One mapping entry checked against the fields of both systems (see the module
    docstring for the forms)."""
    form = "FIELD=SOURCE+K, FIELD=SOURCE-K, FIELD=SOURCE*K, FIELD=SOURCE or FIELD=N"
    if not isinstance(text, str):
        raise MappingError(f"{label}: expected text of the form {form}, got {text!r}")
    if len(text) > MAX_MAP_TEXT:
        raise MappingError(
            f"{label}: {len(text):,} characters; a mapping is at most {MAX_MAP_TEXT} ({form})"
        )
    field, eq, expr = text.partition("=")
    field, expr = field.strip(), expr.strip()
    if not eq or not field or not expr:
        raise MappingError(f"{label}: expected {form}, got {digits.shown(text)}")
    a, b = get(source), get(target)
    allowed = _int_fields(b)
    if field not in allowed:
        parts = counterparts.STAT_PARTS.get(target, ())
        why = (
            f" (part of {b.main_field}; map {b.main_field} instead)"
            if field in parts
            else suggest(field, allowed)
        )
        raise MappingError(
            f"{label}: {digits.shown(field)} is no integer field of {target}{why}; "
            f"fields: {', '.join(allowed)}"
        )
    if digits.is_int(expr):
        return StatMap(field, None, "=", int(expr), text)
    # the first operator after the source name splits the expression
    cut = min((i for i in (expr.find(op, 1) for op in OPERATORS) if i > 0), default=-1)
    name, op, number = (expr, "", "") if cut < 0 else (expr[:cut], expr[cut], expr[cut + 1 :])
    name, number = name.strip(), number.strip()
    sources = [k for k, f in a.fields.items() if f.kind is int]
    if name not in sources:
        raise MappingError(
            f"{label}: {digits.shown(name)} is no integer field of {source}"
            f"{suggest(name, sources)}; fields: {', '.join(sources)} ({form})"
        )
    if not op:
        return StatMap(field, name, "+", 0, text)
    try:
        k: float = digits.parse_int(number) if op != "*" else digits.parse_number(number)
    except digits.DigitsError as exc:
        raise MappingError(f"{label}: K of {digits.shown(text)}: {exc}") from None
    if op != "*" and number.startswith("-"):
        raise MappingError(f"{label}: K of {digits.shown(text)} has a sign; write {form}")
    return StatMap(field, name, op, k, text)


def read_mapping(
    scenario: Scenario, to: str, mapping: Sequence[str] | str | None, label: str = "map"
) -> list[StatMap]:
    """The default main-stat mapping with the entries of ``mapping`` applied on top (a
    later entry for a field replaces an earlier one)."""
    items = [mapping] if isinstance(mapping, str) else list(mapping or [])
    chosen: dict[str, StatMap] = {}
    default = default_mapping(scenario.system, to)
    chosen[get(to).main_field] = parse_map(default, scenario.system, to, "default mapping")
    for text in items:
        entry = parse_map(text, scenario.system, to, label)
        chosen[entry.field] = entry
    return list(chosen.values())


def _name(name: str, to: str) -> str:
    """The converted scenario's name: ``NAME (SYSTEM)``, within NAME_MAX characters."""
    suffix = f" ({to})"
    if len(name) + len(suffix) > NAME_MAX:
        name = name[: max(0, NAME_MAX - len(suffix) - 1)] + "…"
    return name + suffix


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, tuple):  # a list of names (readiness guard, R7a)
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def _rule_id(meaning: str) -> str:
    head, colon, _ = meaning.partition(":")
    word = head.split(" ")[0] if colon else ""
    return word if word[:1].isupper() and word[1:2].isdigit() else ""


def _value_text(field: str, value: Any, spec: Any) -> str:
    rule = _rule_id(spec.meaning) if spec is not None else ""
    return f"{field} = {_toml(value)}" + (f" ({rule})" if rule else "")


def _policy(system: str, field: str, value: Any, to: str) -> tuple[bool, Any]:
    """(found, counterpart) of ``field = value`` of ``system`` in ``to``: counterpart is
    a (field, value) pair, IMPLICIT, or None (no counterpart)."""
    for _, where in counterparts.POLICY_COUNTERPARTS:
        if where.get(system) == (field, value):
            return True, where.get(to)
    return False, None


def _entries(scenario: Scenario) -> list[list[Combatant]]:
    """The combatants by [[combatant]] table; a count group whose members differ (after
    a change to one of them) is split into one table per member."""
    tables: dict[int, list[Combatant]] = {}
    for c in scenario.combatants:
        tables.setdefault(c.entry, []).append(c)
    out: list[list[Combatant]] = []
    for members in tables.values():
        same = all(m.params == members[0].params for m in members)
        out += [members] if same else [[m] for m in members]
    return out


def convert(
    scenario: Scenario,
    to: str,
    mapping: Sequence[str] | str | None = None,
    labels: tuple[str, str] = ("to", "map"),
) -> Conversion:
    """``scenario`` as a scenario of system ``to`` (see the module docstring); errors
    name ``labels`` (the target's and the mapping's option)."""
    to = check_target(scenario, to, labels[0])
    label = labels[1]
    maps = read_mapping(scenario, to, mapping, label)
    source, target = get(scenario.system), get(to)
    parts = counterparts.STAT_PARTS.get(scenario.system, ())
    notes: dict[str, list[str]] = {}  # note -> names

    def note(text: str, who: str) -> None:
        notes.setdefault(text, []).append(who)

    body: list[str] = []
    for members in _entries(scenario):
        first = members[0]
        params, given = first.params, first.given
        whole = len(members) > 1 or first.group != first.name
        name = first.group if whole else first.name
        lines = [f"name = {_toml(name)}", f"side = {_toml(first.side)}"]
        if whole:
            lines.append(f"count = {len(members)}")
        for m in maps:
            spec = target.fields[m.field]
            if m.source is not None and params.get(m.source) is None:
                raise MappingError(
                    f"{label}: {m.text}: {name} has no {m.source} (its file gives "
                    f"{source.main_field})"
                )
            value = m.apply(params)
            low, high = spec.low, spec.high
            bounded = value
            if low is not None and value < low:
                bounded = int(low)
            if high is not None and value > high:
                bounded = int(high)
            if bounded != value:
                note(
                    f"{m.text} gives {value}, outside {m.field}'s {spec.describe()}: "
                    f"written {m.field} = {bounded}",
                    name,
                )
            lines.append(f"{m.field} = {bounded}")
        mapped = {m.field for m in maps}
        for key in source.fields:
            if key == source.main_field or key in parts or key not in given:
                continue
            value = params[key]
            spec = source.fields[key]
            found, other = _policy(scenario.system, key, value, to)
            if found and other is counterparts.IMPLICIT:
                continue
            if found and other is not None:
                if other[0] not in mapped and other[1] != target.fields[other[0]].default:
                    lines.append(f"{other[0]} = {_toml(other[1])}")
                continue
            if spec.default is not REQUIRED and value == spec.default and not found:
                continue
            if key in source.policies or found:
                note(f"{_value_text(key, value, spec)}: no counterpart in {to}", name)
            else:
                note(f"{_value_text(key, value, spec)}: no field of {to} means this", name)
        for key, spec in COMMON_FIELDS.items():
            if key in ("name", "side", "count"):
                continue
            if params[key] != spec.default:
                lines.append(f"{key} = {_toml(params[key])}")
        body += ["", "[[combatant]]", *lines]

    rules: list[str] = []
    for key, value in scenario.rules.items():
        spec = source.rules[key]
        pair = next(
            (r for r in counterparts.RULE_COUNTERPARTS if r.get(scenario.system) == key), None
        )
        if value == spec.default:
            continue
        if pair is not None and to in pair:
            rules.append(f"{pair[to]} = {_toml(value)}")
        else:
            note(f"rules.{_value_text(key, value, spec)}: no counterpart in {to}", "")
    if len(scenario.sweep):
        note(f"[sweep] table: its fields are {scenario.system}'s; not carried over", "")

    listed = [
        f"{text} ({', '.join(dict.fromkeys(who))})" if any(who) else text
        for text, who in notes.items()
    ]
    used = [m.text for m in maps]
    head = [
        f"# {scenario.name}, converted from {scenario.source} (system {scenario.system}) to "
        f"{to} by `simkit convert`.",
        f"# Stat mapping: {', '.join(used)} (docs/rules-decisions.md, 'One fight in three "
        "systems').",
        "# Policies the source gives are mapped where a counterpart exists; the rest take "
        f"{to}'s defaults.",
    ]
    if listed:
        head.append(f"# Not carried over to {to}:")
        head += [f"#   {line}" for line in listed]
    else:
        head.append(f"# Everything the source gives has a counterpart in {to}.")
    table = [
        "",
        "[scenario]",
        f"name = {_toml(_name(scenario.name, to))}",
        f"system = {_toml(to)}",
        f"rounds = {scenario.rounds}",
        f"seed = {scenario.seed}",
    ]
    if scenario.fight_rounds:  # R8a: fights are every system's (engine.fights)
        table.append(f"fight_rounds = {scenario.fight_rounds}")
    if scenario.description:
        table.append(f"description = {_toml(scenario.description)}")
    if rules:
        table += ["", "[rules]", *rules]
    text = "\n".join([*head, *table, *body]) + "\n"
    where = f"{scenario.source} converted to {to}"
    converted = scenario_from_dict(parse_toml(text, where), source=where)
    return Conversion(text, converted, tuple(used), tuple(listed))
