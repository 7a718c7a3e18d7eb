"""The one validator: scenario files, ``with_changes``, ``--set`` and ``--vary`` all
check fields here, with the schemas the systems declare.

Every problem of a file is collected and reported together (``ScenarioError``), each
naming the field path -- ``scenario.rounds``, ``rules.order``,
``combatant "Troll Chief" (index 0).readiness`` (combatants counted from 0 in file
order, before ``count`` expansion) -- and what is allowed.  Nothing is simulated or
written before a scenario has passed every check.
"""

from __future__ import annotations

import difflib
import math
import os
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from simkit import systems
from simkit.bounded import MAX_LISTED
from simkit.scenario.model import Combatant, Params, Scenario, ScenarioError, entry_path
from simkit.systems.base import (
    COMMON_FIELDS,
    IDENTITY_FIELDS,
    MAX_COMBATANTS,
    NAME_MAX,
    REQUIRED,
    Field,
    Problem,
)

TOP_LEVEL = ("scenario", "rules", "combatant", "sweep")
MAX_FILE_BYTES = 1 << 20  # a scenario file is at most 1 MiB
MAX_LINE = 4096  # characters in a line (a TOML parser's time grows with the square of a
# dotted key's length: a 40 KB key took 9 s)
MAX_ROUNDS = 10**12
MAX_SEED = 2**63 - 1
SHOWN_CHARS = 40  # a value longer than this is shortened in messages
SUGGEST_MAX = 100  # names longer than this get no "did you mean"
DESCRIPTION_MAX = 10_000  # characters of scenario.description
MAX_FIGHT_ROUNDS = 1_000  # rounds in one fight (R8a)
SUGGEST_CANDIDATES = 2_000  # no "did you mean" among more names than this

SCENARIO_FIELDS: dict[str, Field] = {
    "name": Field(str),
    "system": Field(str),
    "rounds": Field(int, 1_000_000, 1, MAX_ROUNDS),
    "seed": Field(int, 0, 0, MAX_SEED),
    "description": Field(str, ""),
    "fight_rounds": Field(
        int, 0, 1, MAX_FIGHT_ROUNDS, meaning="R8a: rounds in one fight (absent: one long sequence)"
    ),
}
NAMED_TEXT = ("name", "side", "target")  # no control characters, at most NAME_MAX characters


# --------------------------------------------------------------------------- values
def shown(value: Any) -> str:
    """``repr(value)``, shortened: ``'aaaa…' (100,000 characters)``."""
    if isinstance(value, str) and len(value) > SHOWN_CHARS:
        return f"{value[:SHOWN_CHARS]!r}… ({len(value):,} characters)".replace("'…", "…'", 1)
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"an integer of {value.bit_length():,} bits"
    text = repr(value)
    if len(text) > 2 * SHOWN_CHARS:
        return f"{text[: 2 * SHOWN_CHARS]}… ({type(value).__name__}, {len(text):,} characters)"
    return text


def suggest(key: Any, known: list[str]) -> str:
    """`` (did you mean 'x'?)`` for a close known name, else ``""`` (also when there are
    more than SUGGEST_CANDIDATES names to search: the hint is not worth the time)."""
    if not isinstance(key, str) or len(key) > SUGGEST_MAX or len(known) > SUGGEST_CANDIDATES:
        return ""
    close = difflib.get_close_matches(key, [k for k in known if len(k) <= SUGGEST_MAX], 1, 0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _type_name(value: Any) -> str:
    return type(value).__name__


def check_value(spec: Field, value: Any) -> tuple[Any, str | None]:
    """``(value, None)`` if ``spec`` allows ``value`` (normalised: aliases resolved, an
    integer number made float), else ``(None, message)``."""
    if isinstance(value, bool) and value in spec.aliases:
        return spec.aliases[value], None
    if spec.names and isinstance(value, list | tuple):
        return _names_value(spec, value)
    if isinstance(value, bool):
        ok = spec.kind is bool
    elif spec.kind is float:
        ok = isinstance(value, int | float)
    else:
        ok = isinstance(value, spec.kind)
    if not ok:
        return None, f"expected {spec.describe()}, got {_type_name(value)} {shown(value)}"
    if spec.kind is float:
        try:
            value = float(value)
        except OverflowError:  # an integer beyond any float: out of range, not a traceback
            return None, f"{shown(value)} is not allowed; allowed: {spec.describe()}"
        if not math.isfinite(value):
            return None, f"expected {spec.describe()}, got {shown(value)}"
    if spec.kind is str:
        if spec.choices is not None and value in spec.choices:
            return value, None
        n = spec.pattern_value(value) if len(value) <= 64 else None
        if n is not None and spec.pattern_low <= n <= spec.pattern_high:
            return value, None
        if spec.choices is not None or spec.pattern is not None:
            return None, (
                f"{shown(value)} is not allowed{suggest(value, list(spec.choices or ()))}; "
                f"allowed: {spec.describe()}"
            )
        if spec.default is REQUIRED and not value.strip():
            return None, "must not be empty"
        return value, None
    if (spec.low is not None and value < spec.low) or (spec.high is not None and value > spec.high):
        return None, f"{shown(value)} is not allowed; allowed: {spec.describe()}"
    return value, None


def _names_value(spec: Field, value: list[Any] | tuple[Any, ...]) -> tuple[Any, str | None]:
    """A list of names for a ``names`` field, as a tuple; the system's ``check`` says
    what they must name."""
    if not value:
        return None, f'an empty list names nobody (no guard is "never"); allowed: {spec.describe()}'
    if len(value) > MAX_COMBATANTS:
        return None, f"a list of {len(value):,} names; a scenario has at most {MAX_COMBATANTS}"
    seen: set[str] = set()
    for k, name in enumerate(value):
        if not isinstance(name, str):
            return None, (
                f"expected a list of names, got {_type_name(name)} {shown(name)} at position {k}"
            )
        bad = "must not be empty" if not name.strip() else _text_problem(name)
        if bad:
            return None, f"name at position {k}: {bad}"
        if name in seen:
            return None, f"{shown(name)} is listed twice; list each name once"
        seen.add(name)
    return tuple(value), None


# --------------------------------------------------------------------------- files
def read_scenario_text(path: str | Path) -> str:
    """The text of a scenario file: a regular UTF-8 file of at most 1 MiB."""
    p = Path(path)
    try:
        info = os.stat(p)
    except OSError as exc:
        raise ScenarioError(f"{p}: cannot read file: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ScenarioError(f"{p}: not a regular file; a scenario is a TOML file")
    if info.st_size > MAX_FILE_BYTES:
        raise ScenarioError(
            f"{p}: {info.st_size:,} bytes; a scenario file is at most {MAX_FILE_BYTES:,} bytes"
        )
    try:
        with open(p, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ScenarioError(f"{p}: cannot read file: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ScenarioError(
            f"{p}: more than {MAX_FILE_BYTES:,} bytes; a scenario file is at most that"
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError(f"{p}: not a UTF-8 text file") from None


def parse_toml(text: str, source: str) -> dict[str, Any]:
    for number, line in enumerate(text.splitlines(), 1):
        if len(line) > MAX_LINE:
            raise ScenarioError(
                f"{source}: line {number} has {len(line):,} characters; at most {MAX_LINE:,}"
            )
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{source}: TOML syntax error: {exc}") from None
    except RecursionError:
        raise ScenarioError(f"{source}: TOML nested too deeply") from None


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file; ScenarioError names the file and every field."""
    source = str(path)
    return scenario_from_dict(parse_toml(read_scenario_text(path), source), source=source)


# --------------------------------------------------------------------------- documents
class _Collector:
    def __init__(self) -> None:
        self.problems: list[tuple[str, str]] = []

    def add(self, path: str, message: str) -> None:
        self.problems.append((path, message))

    def suggest(self, key: Any, known: list[str]) -> str:
        """``suggest``, while the problems found so far are still listed in full (a file
        with 80,000 unknown keys costs no 80,000 fuzzy searches)."""
        return suggest(key, known) if len(self.problems) < MAX_LISTED else ""


def scenario_from_dict(data: Mapping[str, Any], source: str = "<scenario>") -> Scenario:
    """Validate already-parsed scenario data (the TOML document as a dict)."""
    out = _Collector()
    if not isinstance(data, Mapping):
        raise ScenarioError(f"{source}: expected a TOML document")
    for key in data:
        if key not in TOP_LEVEL:
            out.add(
                str(key)[:SHOWN_CHARS],
                f"unknown table{out.suggest(key, list(TOP_LEVEL))}; allowed: [scenario], [rules], "
                "[[combatant]], [sweep]",
            )
    head = data.get("scenario")
    if head is None:
        out.add("scenario", "missing [scenario] table (name, system, ...)")
        head = {}
    elif not isinstance(head, Mapping):
        out.add("scenario", f"expected a table, got {_type_name(head)}")
        head = {}
    values: dict[str, Any] = {}
    for key in head:
        if key not in SCENARIO_FIELDS:
            out.add(
                f"scenario.{shown(key) if len(key) > SHOWN_CHARS else key}",
                f"unknown key{out.suggest(key, list(SCENARIO_FIELDS))}; allowed: "
                + ", ".join(SCENARIO_FIELDS),
            )
    for key, spec in SCENARIO_FIELDS.items():
        if key == "system":
            continue
        if key in head:
            value, message = check_value(spec, head[key])
            if message:
                out.add(f"scenario.{key}", message)
            values[key] = value if message is None else spec.default
        elif key == "name":
            values[key] = Path(source).stem  # an unnamed scenario is called after its file
        else:
            values[key] = spec.default
    if isinstance(values.get("name"), str):
        bad = _text_problem(values["name"], limit=200)
        if bad:
            out.add("scenario.name", bad)
    if isinstance(values.get("description"), str):  # newlines and tabs are text here
        bad = _text_problem(
            values["description"].replace("\n", " ").replace("\t", " "), limit=DESCRIPTION_MAX
        )
        if bad:
            out.add("scenario.description", bad)
    system_name = head.get("system")
    known = list(systems.names())
    system = None
    if "system" not in head:
        if isinstance(data.get("scenario"), Mapping):
            out.add(
                "scenario.system", "missing; expected one of " + ", ".join(f'"{s}"' for s in known)
            )
    elif not isinstance(system_name, str) or system_name not in known:
        out.add(
            "scenario.system",
            f"{shown(system_name)} is not allowed{suggest(system_name, known)}; allowed: one of "
            + ", ".join(f'"{s}"' for s in known),
        )
    else:
        system = systems.get(system_name)

    rules_in = data.get("rules", {})
    if not isinstance(rules_in, Mapping):
        out.add("rules", f"expected a table, got {_type_name(rules_in)}")
        rules_in = {}
    sweep_in = data.get("sweep", {})
    if not isinstance(sweep_in, Mapping):
        out.add("sweep", f"expected a table, got {_type_name(sweep_in)}")
        sweep_in = {}
    raw = data.get("combatant")
    if raw is None:
        out.add("combatant", "no [[combatant]] entries; a scenario needs two sides")
        raw = []
    elif not isinstance(raw, list):
        out.add("combatant", "expected [[combatant]] entries (an array of tables)")
        raw = []

    # The combatant limit before anything is expanded.
    total = 0
    for entry in raw:
        count = entry.get("count", 1) if isinstance(entry, Mapping) else 1
        total += (
            count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 1
        )
    if total > MAX_COMBATANTS:
        out.add(
            "combatant", f"{total:,} combatants after count expansion; at most {MAX_COMBATANTS}"
        )
        raise ScenarioError.of(source, out.problems)
    if system is None:
        raise ScenarioError.of(source, out.problems)

    rules = _rules(system, rules_in, out)
    combatants: list[Combatant] = []
    seen: dict[str, str] = {}
    for idx, entry in enumerate(raw):
        if not isinstance(entry, Mapping):
            out.add(f"combatant[{idx}]", f"expected a table, got {_type_name(entry)}")
            continue
        base = entry_path(idx, entry.get("name"))
        params, problems = combatant_params(system, entry)
        for p in problems:
            out.add(f"{base}.{p.path}" if p.path else base, p.message)
        if problems:
            continue
        name, side, count = params.pop("name"), params.pop("side"), params.pop("count")
        given = frozenset(k for k in entry if k not in IDENTITY_FIELDS)
        names = [name] if count == 1 else [f"{name} {k}" for k in range(1, count + 1)]
        for member in names:
            if member in seen:
                out.add(
                    f"{base}.name",
                    f"duplicate combatant name {shown(member)} (already used by {seen[member]}); "
                    "names must be unique after count expansion",
                )
                continue
            seen[member] = base
            combatants.append(Combatant(member, side, name, Params(params), idx, given))
    if out.problems:
        raise ScenarioError.of(source, out.problems)
    scenario = Scenario(
        name=values["name"],
        system=system.name,
        rounds=values["rounds"],
        seed=values["seed"],
        rules=Params(rules),
        combatants=tuple(combatants),
        source=source,
        description=values["description"],
        sweep=Params(dict(sweep_in)),
        fight_rounds=values["fight_rounds"],
    )
    problems = scenario_problems(scenario)
    if not problems and sweep_in:
        from simkit.scenario.specs import sweep_problems

        problems = sweep_problems(scenario)
    if problems:
        raise ScenarioError.of(source, [(p.path, p.message) for p in problems])
    return scenario


def _rules(system: Any, rules_in: Mapping[str, Any], out: _Collector) -> dict[str, Any]:
    specs = system.rules
    rules: dict[str, Any] = {}
    for key in rules_in:
        if key not in specs:
            others = [s.name for s in systems.all_systems() if s is not system and key in s.rules]
            hint = f"; '{key}' is a rule of system {'/'.join(others)}" if others else ""
            out.add(
                f"rules.{key}" if len(str(key)) <= SHOWN_CHARS else "rules",
                f"unknown rule {shown(key)} for system {system.name}{out.suggest(key, list(specs))}"
                f"{hint}; allowed: {', '.join(specs) or 'none'}",
            )
    for key, spec in specs.items():
        if key in rules_in:
            value, message = check_value(spec, rules_in[key])
            if message:
                out.add(f"rules.{key}", message)
            rules[key] = value if message is None else spec.default
        else:
            rules[key] = spec.default
    return rules


def _text_problem(value: str, limit: int = NAME_MAX) -> str | None:
    if len(value) > limit:
        return f"at most {limit} characters, got {len(value):,}"
    if not value.isprintable():
        return f"{shown(value)} contains control characters; use printable text"
    return None


def combatant_params(system: Any, entry: Mapping[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
    """Check one combatant table (keys as given); every field filled, or the problems.

    Paths in the problems are field names; the caller prefixes the combatant."""
    allowed = {**COMMON_FIELDS, **system.fields}
    problems: list[Problem] = []
    for key in entry:
        if key in allowed:
            continue
        shown_key = key if isinstance(key, str) and len(key) <= SHOWN_CHARS else shown(key)
        others = [s.name for s in systems.all_systems() if s is not system and key in s.fields]
        if others:
            problems.append(
                Problem(
                    shown_key,
                    f"'{key}' is a field of system {'/'.join(others)}, not {system.name}; "
                    f"allowed: {', '.join(allowed)}",
                )
            )
        else:
            hint = suggest(key, list(allowed)) if len(problems) < MAX_LISTED else ""
            problems.append(
                Problem(
                    shown_key,
                    f"unknown key{hint}; allowed: {', '.join(allowed)}",
                )
            )
    params: dict[str, Any] = {}
    optional = getattr(system, "optional_required", ())
    for key, spec in allowed.items():
        if key in entry:
            value, message = check_value(spec, entry[key])
            if message is None and key in NAMED_TEXT and isinstance(value, str):
                message = _text_problem(value)
            if message:
                problems.append(Problem(key, message))
            params[key] = value
        elif spec.default is REQUIRED:
            if key in optional:
                params[key] = None
                continue
            problems.append(Problem(key, f"missing; expected {spec.describe()}"))
        else:
            params[key] = spec.default
    if not problems:
        problems += system.prepare(entry, params)
    return params, problems


def name_problems(scenario: Scenario) -> list[Problem]:
    """Names that could mean two things: a name (a combatant's, or a ``count`` group's
    base name) given to two entries -- a party's "Wolf" beside the wolves' group "Wolf"
    -- and a combatant or group named like a side other than its own lone entry's.

    Each is one problem naming both entries, so that ``--set 'Wolf.readiness=3'``,
    ``--by group`` and ``target = "Wolf"`` always mean one thing."""
    owners: dict[str, dict[int, Combatant]] = {}
    for c in scenario.combatants:
        for name in (c.name, c.group):
            key = c.entry if c.entry >= 0 else hash((c.group, c.side))  # built without a file
            owners.setdefault(name, {}).setdefault(key, c)
    problems: list[Problem] = []
    for name, entries in owners.items():
        if len(entries) > 1:
            first, *others = entries.values()
            for other in others:
                problems.append(
                    Problem(
                        f"{other.path}.name",
                        f"{shown(name)} also names {first.path} (side {shown(first.side)}); "
                        "a combatant or group name must mean one thing: rename one of them",
                    )
                )
    for side in scenario.sides:
        entries = owners.get(side)
        if not entries:
            continue
        members = {c.entry for c in scenario.combatants if c.side == side}
        (entry, c), *_ = entries.items()
        if len(entries) == 1 and c.side == side and members == {entry}:
            continue  # a side of one entry named like it: nothing else it could mean
        problems.append(
            Problem(
                f"{c.path}.name",
                f"{shown(side)} is also the name of side {shown(side)}; a combatant or group "
                "named like a side must be renamed",
            )
        )
    return problems


def scenario_problems(scenario: Scenario) -> list[Problem]:
    """Checks across combatants: names, sides, targets, and the system's own."""
    problems: list[Problem] = name_problems(scenario)
    if problems:
        return problems
    sides = scenario.sides
    if len(sides) < 2:
        found = f"only side {shown(sides[0])}" if sides else "no combatants"
        problems.append(Problem("combatant", f"a scenario needs at least two sides; found {found}"))
    reported: set[int] = set()
    for i, c in enumerate(scenario.combatants):
        target = c["target"]
        if target == "random" or scenario.targets(i) or c.entry in reported:
            continue
        reported.add(c.entry)
        own = [d.name for d in scenario.combatants if d.side == c.side]
        known = [d.name for d in scenario.combatants if d.side != c.side]
        known += sorted({d.group for d in scenario.combatants if d.side != c.side} - set(known))
        why = " (that is an ally, not an opponent)" if target in own else ""
        if not why and any(d.group == target and d.side == c.side for d in scenario.combatants):
            why = " (that group is on its own side)"
        problems.append(
            Problem(
                f"{c.path}.target",
                f"{shown(target)} is not an opponent{why}{suggest(target, known)}; allowed: "
                '"random" or one of '
                + ", ".join(shown(k) for k in known[:20])
                + (", ..." if len(known) > 20 else ""),
            )
        )
    if not problems:
        problems += systems.get(scenario.system).check(scenario)
    return problems


# --------------------------------------------------------------------------- edits
def with_changes(
    scenario: Scenario,
    *,
    rules: Mapping[str, Any] | None = None,
    combatants: Mapping[str, Mapping[str, Any]] | None = None,
) -> Scenario:
    """A copy with rules or combatant fields changed, checked by the same validator as a
    file (the changed fields count as given by the file).

    ``combatants`` maps a combatant name, or the base name of a ``count`` group, to the
    fields to change.
    """
    system = systems.get(scenario.system)
    source = scenario.source
    problems: list[tuple[str, str]] = []
    new_rules = dict(scenario.rules)
    for key, value in (rules or {}).items():
        spec = system.rules.get(key)
        if spec is None:
            problems.append(
                (
                    f"rules.{key}",
                    f"unknown rule for system {system.name}{suggest(key, list(system.rules))}; "
                    f"allowed: {', '.join(system.rules) or 'none'}",
                )
            )
            continue
        checked, message = check_value(spec, value)
        if message:
            problems.append((f"rules.{key}", message))
        new_rules[key] = checked
    changes = dict(combatants or {})
    allowed = {**COMMON_FIELDS, **system.fields}
    matched: set[str] = set()
    new_list: list[Combatant] = []
    for c in scenario.combatants:
        given = {k: c.params[k] for k in c.given}
        touched = False
        for who in (c.group, c.name):
            if who not in changes:
                continue
            matched.add(who)
            for key, value in changes[who].items():
                if key not in allowed or key in IDENTITY_FIELDS:
                    problems.append(
                        (
                            f"{who}.{key}",
                            f"not a field that can be changed{suggest(key, list(allowed))}; "
                            "allowed: " + ", ".join(k for k in allowed if k not in IDENTITY_FIELDS),
                        )
                    )
                    continue
                message = system.edit(given, key, value)
                if message:
                    problems.append((f"{who}.{key}", f"{c.name} {message}"))
                touched = True
        if not touched:
            new_list.append(c)
            continue
        entry = {"name": c.name, "side": c.side, **given}
        params, entry_problems = combatant_params(system, entry)
        for p in entry_problems:
            path = f"{c.group if c.group in changes else c.name}.{p.path}"
            if (path, p.message) not in problems:
                problems.append((path, p.message))
        if entry_problems:
            new_list.append(c)
            continue
        for key in IDENTITY_FIELDS:
            params.pop(key, None)
        new_list.append(replace(c, params=Params(params), given=frozenset(given)))
    unknown = [who for who in changes if who not in matched]
    if unknown:
        known = sorted(set(scenario.names) | set(scenario.groups))
        for who in unknown:
            problems.append(
                (
                    shown(who) if len(str(who)) > SHOWN_CHARS else str(who),
                    f"no combatant or group named {shown(who)}{suggest(who, known)}; known: "
                    + ", ".join(known),
                )
            )
    if problems:
        raise ScenarioError.of(source, problems)
    out = replace(scenario, rules=Params(new_rules), combatants=tuple(new_list))
    cross = scenario_problems(out)
    if cross:
        raise ScenarioError.of(source, [(p.path, p.message) for p in cross])
    return out
