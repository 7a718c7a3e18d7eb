"""Scenario files: TOML in, frozen and fully validated specs out.

Every problem is reported as a :class:`ScenarioError` whose message names the file,
the field path (``combatant[1].readiness``; combatants are counted from 0 in file
order) and what is allowed.  Nothing is simulated or written before a scenario has
passed every check.
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from simkit.schema import (
    COMMON_FIELDS,
    MAX_COMBATANTS,
    REQUIRED,
    SCENARIO_FIELDS,
    SYSTEM_FIELDS,
    SYSTEM_RULES,
    SYSTEMS,
    Field,
)

TOP_LEVEL = ("scenario", "rules", "combatant", "sweep")


class ScenarioError(ValueError):
    """A scenario that cannot be simulated; the message names file and field."""


class Params(Mapping[str, Any]):
    """An immutable, hashable mapping of field names to values (schema order)."""

    __slots__ = ("_items", "_dict")

    def __init__(self, items: Mapping[str, Any] | tuple[tuple[str, Any], ...] = ()) -> None:
        pairs = tuple(items.items()) if isinstance(items, Mapping) else tuple(items)
        object.__setattr__(self, "_items", pairs)
        object.__setattr__(self, "_dict", dict(pairs))

    def __getitem__(self, key: str) -> Any:
        return self._dict[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._dict)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self._items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Params) and self._items == other._items

    def __repr__(self) -> str:
        return f"Params({self._dict!r})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Params is immutable")

    def __reduce__(self) -> tuple[Any, ...]:  # pickling (Dask workers) without __setattr__
        return (Params, (self._items,))


@dataclass(frozen=True)
class Combatant:
    """One combatant after ``count`` expansion, every field filled in."""

    name: str
    side: str
    group: str
    params: Params

    def __getitem__(self, key: str) -> Any:
        return self.params[key]


@dataclass(frozen=True)
class Scenario:
    """A validated scenario: rules with defaults filled in, combatants expanded."""

    name: str
    system: str
    rounds: int
    seed: int
    rules: Params
    combatants: tuple[Combatant, ...]
    source: str = "<scenario>"
    description: str = ""
    sweep: Params = field(default_factory=Params)

    @property
    def sides(self) -> tuple[str, ...]:
        """Side names in order of first appearance."""
        return tuple(dict.fromkeys(c.side for c in self.combatants))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.combatants)

    def index(self, name: str) -> int:
        return self.names.index(name)

    def opponents(self, i: int) -> tuple[int, ...]:
        side = self.combatants[i].side
        return tuple(j for j, c in enumerate(self.combatants) if c.side != side)

    def targets(self, i: int) -> tuple[int, ...]:
        """Indices ``i`` may attack under its ``target`` policy (RULES.md, targets)."""
        target = self.combatants[i]["target"]
        opp = self.opponents(i)
        if target == "random":
            return opp
        named = tuple(j for j in opp if self.combatants[j].name == target)
        return named or tuple(j for j in opp if self.combatants[j].group == target)

    def to_dict(self) -> dict[str, Any]:
        """The scenario as plain data, defaults filled in (for summary.json and reports)."""
        return {
            "name": self.name,
            "system": self.system,
            "rounds": self.rounds,
            "seed": self.seed,
            "rules": dict(self.rules),
            "combatants": [
                {"name": c.name, "side": c.side, "group": c.group, **dict(c.params)}
                for c in self.combatants
            ],
        }


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file.

    Raises
    ------
    ScenarioError
        On any problem, with a one-line message naming the file and field.
    """
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ScenarioError(f"{p}: cannot read file: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ScenarioError(f"{p}: not a UTF-8 text file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{p}: TOML syntax error: {exc}") from None
    return scenario_from_dict(data, source=str(p))


def _fail(source: str, path: str, message: str) -> ScenarioError:
    return ScenarioError(f"{source}: {path}: {message}")


def _suggest(key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _type_ok(value: Any, kind: type) -> bool:
    if isinstance(value, bool):
        return kind is bool
    if kind is float:
        return isinstance(value, int | float)
    return isinstance(value, kind)


def _check_value(source: str, path: str, value: Any, spec: Field) -> Any:
    if not _type_ok(value, spec.kind):
        raise _fail(
            source,
            path,
            f"expected {spec.describe()}, got {type(value).__name__} {value!r}",
        )
    if spec.kind is float:
        value = float(value)
        if value != value:
            raise _fail(source, path, f"expected {spec.describe()}, got nan")
    bad = (
        (spec.low is not None and value < spec.low)
        or (spec.high is not None and value > spec.high)
        or (spec.choices is not None and value not in spec.choices)
        or (spec.check is not None and not spec.check(value))
    )
    if bad:
        extra = ""
        if spec.choices is not None and isinstance(value, str):
            extra = _suggest(value, list(spec.choices))
        raise _fail(source, path, f"{value!r} is not allowed{extra}; allowed: {spec.describe()}")
    if spec.kind is str and not value.strip() and spec.default is REQUIRED:
        raise _fail(source, path, "must not be empty")
    return value


def _other_system(key: str, table: dict[str, dict[str, Field]], system: str) -> str | None:
    owners = [s for s, fields in table.items() if s != system and key in fields]
    return "/".join(owners) if owners else None


def _table(source: str, path: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(source, path, f"expected a table, got {type(value).__name__}")
    return value


def scenario_from_dict(data: Mapping[str, Any], source: str = "<scenario>") -> Scenario:
    """Validate already-parsed scenario data (the TOML document as a dict)."""
    for key in data:
        if key not in TOP_LEVEL:
            raise _fail(
                source,
                key,
                f"unknown table{_suggest(key, list(TOP_LEVEL))}; allowed: "
                + ", ".join(f"[{t}]" for t in TOP_LEVEL[:2])
                + ", [[combatant]], [sweep]",
            )
    if "scenario" not in data:
        raise _fail(source, "scenario", "missing [scenario] table (name, system, ...)")
    head = _table(source, "scenario", data["scenario"])
    values: dict[str, Any] = {}
    for key in head:
        if key not in SCENARIO_FIELDS:
            raise _fail(
                source,
                f"scenario.{key}",
                f"unknown key{_suggest(key, list(SCENARIO_FIELDS))}; allowed: "
                + ", ".join(SCENARIO_FIELDS),
            )
    for key, spec in SCENARIO_FIELDS.items():
        if key in head:
            values[key] = _check_value(source, f"scenario.{key}", head[key], spec)
        elif key == "name":
            values[key] = Path(source).stem  # an unnamed scenario is called after its file
        elif spec.default is REQUIRED:
            raise _fail(source, f"scenario.{key}", f"missing; expected {spec.describe()}")
        else:
            values[key] = spec.default
    system = values["system"]

    rules_in = _table(source, "rules", data.get("rules", {}))
    rule_specs = SYSTEM_RULES[system]
    rules: dict[str, Any] = {}
    for key in rules_in:
        if key not in rule_specs:
            other = _other_system(key, SYSTEM_RULES, system)
            hint = f"; '{key}' is a rule of system {other}" if other else ""
            raise _fail(
                source,
                f"rules.{key}",
                f"unknown rule for system {system}{_suggest(key, list(rule_specs))}{hint}; "
                f"allowed: {', '.join(rule_specs) or 'none'}",
            )
    for key, spec in rule_specs.items():
        rules[key] = (
            _check_value(source, f"rules.{key}", rules_in[key], spec)
            if key in rules_in
            else spec.default
        )

    raw_combatants = data.get("combatant")
    if raw_combatants is None:
        raise _fail(source, "combatant", "no [[combatant]] entries; a scenario needs two sides")
    if not isinstance(raw_combatants, list):
        raise _fail(source, "combatant", "expected [[combatant]] entries (an array of tables)")

    combatants: list[Combatant] = []
    seen: dict[str, str] = {}
    groups: set[str] = set()
    for idx, entry in enumerate(raw_combatants):
        base = f"combatant[{idx}]"
        entry = _table(source, base, entry)
        params = _combatant_params(source, base, entry, system)
        name = params.pop("name")
        side = params.pop("side")
        count = params.pop("count")
        names = [name] if count == 1 else [f"{name} {k}" for k in range(1, count + 1)]
        if count > 1:
            groups.add(name)
        for member in names:
            if member in seen:
                raise _fail(
                    source,
                    f"{base}.name",
                    f"duplicate combatant name '{member}' (already used by {seen[member]}); "
                    "names must be unique after count expansion",
                )
            seen[member] = base
            combatants.append(Combatant(member, side, name, Params(params)))
    if len(combatants) > MAX_COMBATANTS:
        raise _fail(source, "combatant", f"{len(combatants)} combatants; at most {MAX_COMBATANTS}")
    scenario = Scenario(
        name=values["name"],
        system=system,
        rounds=values["rounds"],
        seed=values["seed"],
        rules=Params(rules),
        combatants=tuple(combatants),
        source=source,
        description=values["description"],
        sweep=Params(_table(source, "sweep", data.get("sweep", {}))),
    )
    check_scenario(scenario, source)
    return scenario


def _combatant_params(source: str, base: str, entry: dict[str, Any], system: str) -> dict[str, Any]:
    own = SYSTEM_FIELDS[system]
    allowed = {**COMMON_FIELDS, **own}
    for key in entry:
        if key not in allowed:
            other = _other_system(key, SYSTEM_FIELDS, system)
            if other:
                raise _fail(
                    source,
                    f"{base}.{key}",
                    f"'{key}' is a field of system {other}, not {system}; "
                    f"allowed: {', '.join(allowed)}",
                )
            raise _fail(
                source,
                f"{base}.{key}",
                f"unknown key{_suggest(key, list(allowed))}; allowed: {', '.join(allowed)}",
            )
    params: dict[str, Any] = {}
    for key, spec in allowed.items():
        if key in entry:
            params[key] = _check_value(source, f"{base}.{key}", entry[key], spec)
        elif spec.default is REQUIRED:
            if system == "vtm" and key in ("dexterity", "wits", "rating"):
                continue
            raise _fail(source, f"{base}.{key}", f"missing; expected {spec.describe()}")
        else:
            params[key] = spec.default
    if system == "readiness" and params["role"] == "secondary" and "weakness" in entry:
        raise _fail(
            source,
            f"{base}.weakness",
            'weakness applies to heroes only (R8); remove it or set role = "hero"',
        )
    if system == "vtm":
        has_rating = "rating" in entry
        has_parts = [k for k in ("dexterity", "wits") if k in entry]
        if has_rating and has_parts:
            raise _fail(
                source,
                f"{base}.rating",
                "give either rating or dexterity and wits, not both (V1)",
            )
        if not has_rating and len(has_parts) != 2:
            missing = [k for k in ("dexterity", "wits") if k not in entry]
            raise _fail(
                source,
                f"{base}.{missing[0]}",
                "missing; give dexterity and wits (integers 0..20) or rating (0..40)",
            )
        if not has_rating:
            params["rating"] = params["dexterity"] + params["wits"]
        else:
            params["dexterity"] = None
            params["wits"] = None
    return params


def check_scenario(scenario: Scenario, source: str | None = None) -> None:
    """Cross-field checks (sides, targets, commanders); raises ScenarioError."""
    source = source or scenario.source
    if scenario.system not in SYSTEMS:
        raise _fail(source, "scenario.system", f"unknown system {scenario.system!r}")
    sides = scenario.sides
    if len(sides) < 2:
        found = f"only side '{sides[0]}'" if sides else "no combatants"
        raise _fail(
            source,
            "combatant",
            f"a scenario needs at least two sides; found {found}",
        )
    first_index = _file_indices(scenario)
    for i, c in enumerate(scenario.combatants):
        base = f"combatant[{first_index[i]}]"
        if c.name.strip() == "":
            raise _fail(source, f"{base}.name", "must not be empty")
        target = c["target"]
        if target != "random" and not scenario.targets(i):
            own = [d.name for d in scenario.combatants if d.side == c.side]
            known = [d.name for d in scenario.combatants if d.side != c.side]
            known += sorted({d.group for d in scenario.combatants if d.side != c.side} - set(known))
            why = " (that is an ally, not an opponent)" if target in own else ""
            if not why and any(d.group == target and d.side == c.side for d in scenario.combatants):
                why = " (that group is on its own side)"
            raise _fail(
                source,
                f"{base}.target",
                f"{target!r} is not an opponent{why}{_suggest(target, known)}; allowed: "
                '"random" or one of ' + ", ".join(repr(k) for k in known),
            )
    if scenario.system == "perception":
        for side in sides:
            members = [i for i, c in enumerate(scenario.combatants) if c.side == side]
            commanders = [i for i in members if scenario.combatants[i]["commander"]]
            if len(commanders) > 1:
                names = ", ".join(scenario.combatants[i].name for i in commanders)
                raise _fail(
                    source,
                    f"combatant[{first_index[commanders[1]]}].commander",
                    f"side '{side}' has more than one commander ({names}); at most one per side",
                )
            if (
                scenario.rules["mode"] == "group"
                and scenario.rules["group_stat"] == "commander"
                and not commanders
            ):
                raise _fail(
                    source,
                    "rules.group_stat",
                    f"side '{side}' has no commander; group mode with group_stat = \"commander\" "
                    'needs one per side (set commander = true) or use group_stat = "highest"',
                )


def _file_indices(scenario: Scenario) -> list[int]:
    """File index of the [[combatant]] entry each expanded combatant came from."""
    out: list[int] = []
    idx = -1
    prev_group = None
    for c in scenario.combatants:
        if c.group != prev_group or c.name == c.group:
            idx += 1
        prev_group = c.group
        out.append(idx)
    return out


def with_changes(
    scenario: Scenario,
    *,
    rules: Mapping[str, Any] | None = None,
    combatants: Mapping[str, Mapping[str, Any]] | None = None,
) -> Scenario:
    """A copy with rules or combatant fields changed, validated again.

    ``combatants`` maps a combatant name, or the base name of a ``count`` group, to
    the fields to change.
    """
    new_rules = dict(scenario.rules)
    for key, value in (rules or {}).items():
        specs = SYSTEM_RULES[scenario.system]
        if key not in specs:
            raise _fail(
                scenario.source,
                f"rules.{key}",
                f"unknown rule{_suggest(key, list(specs))}; allowed: {', '.join(specs)}",
            )
        new_rules[key] = _check_value(scenario.source, f"rules.{key}", value, specs[key])
    changes = dict(combatants or {})
    new_list = []
    matched: set[str] = set()
    allowed = {**COMMON_FIELDS, **SYSTEM_FIELDS[scenario.system]}
    for c in scenario.combatants:
        params = dict(c.params)
        for who in (c.group, c.name):
            if who in changes:
                matched.add(who)
                for key, value in changes[who].items():
                    if key not in allowed or key in ("name", "side", "count"):
                        raise _fail(
                            scenario.source,
                            f"{who}.{key}",
                            f"not a field that can be changed{_suggest(key, list(allowed))}",
                        )
                    if key in ("dexterity", "wits") and params.get(key) is None:
                        raise _fail(
                            scenario.source,
                            f"{who}.{key}",
                            f"{c.name} is given by rating, not dexterity and wits (V1); "
                            "change rating instead",
                        )
                    params[key] = _check_value(scenario.source, f"{who}.{key}", value, allowed[key])
                    if key in ("dexterity", "wits"):  # V1: the rating is their sum
                        params["rating"] = params["dexterity"] + params["wits"]
                    elif key == "rating" and params.get("dexterity") is not None:
                        params["dexterity"] = params["wits"] = None  # now given by rating
        new_list.append(replace(c, params=Params(params)))
    unknown = set(changes) - matched
    if unknown:
        who = sorted(unknown)[0]
        known = sorted(set(scenario.names) | {c.group for c in scenario.combatants})
        raise _fail(
            scenario.source,
            who,
            f"no combatant or group named {who!r}{_suggest(who, known)}; known: "
            + ", ".join(known),
        )
    out = replace(scenario, rules=Params(new_rules), combatants=tuple(new_list))
    check_scenario(out)
    return out
