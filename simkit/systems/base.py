"""What an initiative system is to the rest of simkit: the :class:`System` protocol.

An initiative system lives in one package under ``simkit/systems/`` and exports one
object satisfying :class:`System`.  Validation, the engine, sweeps, comparisons,
reports, the benchmark and the command line only ever talk to that object (found in
the registry, ``simkit.systems``); none of them names a system.

:class:`System` is four smaller protocols, each with a base class of defaults that
:class:`SystemBase` assembles:

* :class:`Rules` (:class:`RulesBase`): fields, rules, counts and the checks and edits
  of a scenario (simkit.scenario, the engine's layout);
* :class:`Kernel` (:class:`KernelBase`): compile, run_chunk, trace, rollers, cost
  (simkit.engine); ``KernelBase`` calls the system's kernel module directly, so a
  system writes no pass-through, only ``kernel = <its kernel module>``;
* :class:`Presentation` (:class:`PresentationBase`): event words, waiting words, report
  notes (``simkit trace``, reports);
* :class:`Fixtures` (:class:`FixturesBase`): the bench and warm-up scenarios.

The seam between orchestration and kernels is

    compile(scenario, layout)  ->  compiled (flat arrays, named slot indices)
    run_chunk(compiled, key, n_rounds, sums, first, carry) -> carry
    trace(compiled, key, n_rounds, first, carry, dice) -> Trace

``run_chunk`` plays rounds ``first .. first + n_rounds - 1`` of the chunk whose
random-stream key is ``key`` (each round on its own stream, ``stream.round_start``) and
adds their counts to ``sums`` (``metrics.Sums`` of ``layout``).  ``carry`` is what a
round passes to the next one (``carries_state``: readiness R8; 0 for the others);
chunks always start with 0.  ``trace`` plays the same rounds on the kernel's own code
and returns every round's counts (complete rows of the layout, group and side slots
filled) and the events of play, one row each (``EVENT_COLUMNS``); flushing its rows as
cycles must give exactly the sums of ``run_chunk``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from simkit.metrics import Layout, Sums


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()

MAX_COUNT = 100
MAX_COMBATANTS = 200
NAME_MAX = 100  # characters in a name, side or target


@dataclass(frozen=True)
class Field:
    """One scenario field or rule: its type, default and what is allowed.

    ``aliases`` maps accepted spellings to the value they mean (``guard = true`` is
    ``"backup"``); ``pattern`` is a regular expression for string values beyond
    ``choices`` whose integer group must lie in ``[pattern_low, pattern_high]``
    (``hasty_up_to:N``).  ``names``: the field also takes a list of combatant or group
    names (readiness ``guard = ["Mira"]``, R7a), each a non-empty printable string, kept
    as a tuple; what they must name is the system's ``check``.
    """

    kind: type
    default: Any = REQUIRED
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] | None = None
    allowed: str | None = None
    aliases: Mapping[Any, Any] = field(default_factory=dict)
    pattern: str | None = None
    pattern_low: int = 0
    pattern_high: int = 0
    meaning: str = ""
    names: bool = False

    def describe(self) -> str:
        """What is allowed, in words."""
        if self.allowed:
            return self.allowed
        if self.choices:
            return "one of " + ", ".join(f'"{c}"' for c in self.choices)
        name = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}[
            self.kind
        ]
        if self.low is not None and self.high is not None:
            return f"{name} from {_num(self.low)} to {_num(self.high)}"
        if self.low is not None:
            return f"{name} >= {_num(self.low)}"
        return name

    def pattern_value(self, value: str) -> int | None:
        """The integer of a ``pattern`` value (``hasty_up_to:3`` -> 3), else None."""
        if self.pattern is None:
            return None
        m = re.fullmatch(self.pattern, value, re.ASCII)  # 3, not ٣ (simkit.digits)
        return int(m.group(1)) if m else None


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


# The common model of the rules (docs/rules.md): fields every system has.
COMMON_FIELDS: dict[str, Field] = {
    "name": Field(str, meaning="unique after count expansion"),
    "side": Field(str, meaning="combatants of every other side are its opponents"),
    "count": Field(
        int,
        1,
        1,
        MAX_COUNT,
        meaning='count = N > 1 makes N copies named "NAME 1" .. "NAME N"; NAME becomes a group',
    ),
    "target": Field(
        str,
        "random",
        allowed='"random", the name of one opponent, or the base name of a count group',
        meaning="whom its attacks aim at",
    ),
    "attack_share": Field(float, 1.0, 0.0, 1.0, meaning="probability that an action is an attack"),
}
IDENTITY_FIELDS = ("name", "side", "count")  # never changed by --set, --vary, with_changes


def codes(choices: Sequence[str]) -> dict[str, int]:
    """Named codes of a choice field, 0, 1, 2 ... in the order of ``choices``."""
    return {c: k for k, c in enumerate(choices)}


def code_of(table: Mapping[str, int], value: str, what: str) -> int:
    """The code of ``value``; an unknown value is an error, never a silent default."""
    try:
        return table[value]
    except KeyError:
        raise ValueError(f"{what}: unknown value {value!r}; known: {', '.join(table)}") from None


# One meaning of a tie rule in every system.
TIE_RANDOM, TIE_SIMULTANEOUS = 0, 1
TIE_CODES = {"random": TIE_RANDOM, "simultaneous": TIE_SIMULTANEOUS}

# attack_share as a kernel stores it: 1 and 0 draw nothing; 0 < p < 1 draws
# chance(threshold) even when the threshold rounds to 0 or 2**53.
SHARE_ALWAYS = (1 << 53) + 1
SHARE_NEVER = -1


def share_code(p: float) -> int:
    """``attack_share`` as a kernel code (see SHARE_ALWAYS / SHARE_NEVER)."""
    from simkit.systems.stream import chance_threshold

    if p >= 1.0:
        return SHARE_ALWAYS
    if p <= 0.0:
        return SHARE_NEVER
    return chance_threshold(p)


# Trace events: one int64 row each.  ``kind`` is the system's event code; the other
# columns' meaning depends on the kind (System.event_text / event_json).
EVENT_COLUMNS = ("round", "kind", "actor", "other", "a", "b", "c", "d")
EVENT_WIDTH = len(EVENT_COLUMNS)
NOBODY = -1


@dataclass(frozen=True)
class Trace:
    """What ``System.trace`` returns.

    rows : int64 [n_rounds, layout.size]
        Every round's counts, aggregate slots filled.
    events : int64 [n_events, EVENT_WIDTH]
        The events of play, in order (``EVENT_COLUMNS``).
    carries : int64 [n_rounds]
        The carry each round passes on (readiness R8; 0 elsewhere).
    states : uint64 [n_rounds, 6]
        The six stream words each round left behind (random_stream.canonical_state).
    """

    rows: np.ndarray
    events: np.ndarray
    carries: np.ndarray
    states: np.ndarray


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a scenario: the field path and the message."""

    path: str
    message: str


@runtime_checkable
class Rules(Protocol):
    """What a scenario of the system is: its fields, rules, counts, checks and edits."""

    name: str  # as in a scenario file: system = "readiness"
    title: str  # "dice-pool initiative"
    rule_ids: str  # "R1-R10"
    fields: Mapping[str, Field]  # its combatant fields (COMMON_FIELDS come on top)
    rules: Mapping[str, Field]  # its [rules]
    main_field: str  # the initiative stat a report sweeps ("readiness", "rating", ...)
    # finer knobs of a combatant: for an integer field, the fields that move the same
    # combatant's speed by less than one step of it (readiness: advantage); ``tune``
    # names them when a target lies between two values and ``--refine`` tunes them
    finer: Mapping[str, tuple[str, ...]]
    policies: tuple[str, ...]  # the policy fields (hold, defend, ...)
    policy_alternatives: Mapping[str, tuple[Any, ...]]  # values ``simkit policies`` tries
    counts: tuple[str, ...]  # per-combatant counts its kernels fill (metric registry names)
    scenario_counts: tuple[str, ...]  # scenario-wide counts
    optional_required: tuple[str, ...]  # required fields whose absence prepare() judges

    def prepare(self, entry: Mapping[str, Any], params: dict[str, Any]) -> list[Problem]:
        """Cross-field checks of one combatant entry (``entry``: the keys as given;
        ``params``: every field checked, defaults filled).  May fill derived fields
        in ``params``.  Paths are field names (``weakness``)."""
        ...

    def check(self, scenario: Any) -> list[Problem]:
        """Checks across combatants (commanders, ...); full paths."""
        ...

    def edit(self, given: dict[str, Any], key: str, value: Any) -> str | None:
        """Apply one change (``--set``, ``with_changes``) to the keys as given; a message
        if the change cannot be made this way."""
        ...

    def dist_size(self, params: Mapping[str, Any]) -> int:
        """How many values ``actions`` can take for a combatant (k = 0 .. size - 1)."""
        ...

    def stat(self, params: Mapping[str, Any]) -> int:
        """The value of its main initiative stat."""
        ...

    def stat_field(self, params: Mapping[str, Any], given: frozenset[str]) -> str:
        """The field that moves the main stat of this combatant (vtm: rating or dexterity)."""
        ...

    def waits(self, params: Mapping[str, Any]) -> bool:
        """True if its policies make it wait (hold, delay)."""
        ...

    def never_waits(self) -> dict[str, Any]:
        """The changes that make a combatant stop waiting (``{"hold": "never"}``)."""
        ...

    def after_opening(self, scenario: Any) -> Any:
        """R8a: the scenario as it plays in rounds 2.. of a fight (what applies to the
        opening round only taken away), or None if every round of a fight plays alike."""
        ...

    def policy_fields(self, scenario: Any, index: int) -> tuple[str, ...]:
        """The policy fields ``simkit policies`` searches for combatant ``index``: its
        ``policies`` and ``target`` (when it has more than one opponent to aim at)."""
        ...

    def policy_values(self, scenario: Any, index: int, name: str) -> tuple[Any, ...]:
        """Every value of policy field ``name`` to try for combatant ``index``."""
        ...


@runtime_checkable
class Kernel(Protocol):
    """How rounds of a scenario are played (the seam in the module docstring)."""

    carries_state: bool  # a round may pass a carry to the next (readiness R8)

    def compile(self, scenario: Any, layout: Layout) -> Any: ...

    def run_chunk(
        self,
        compiled: Any,
        key: np.ndarray,
        n_rounds: int,
        sums: Sums,
        first: int = 0,
        carry: int = 0,
    ) -> int: ...

    def trace(
        self,
        compiled: Any,
        key: np.ndarray,
        n_rounds: int,
        first: int = 0,
        carry: int = 0,
        dice: Mapping[int, Sequence[int]] | None = None,
    ) -> Trace: ...

    def rows(
        self, compiled: Any, key: np.ndarray, n_rounds: int, first: int = 0, carry: int = 0
    ) -> tuple[np.ndarray, np.ndarray]:
        """``trace``'s rows and carries without its events (R8a fights, engine.fights)."""
        ...

    def rollers(self, scenario: Any) -> list[tuple[str, int, int]]:
        """Who rolls initiative dice in a round, in draw order: (name, dice, sides) each.
        ``trace(dice={index: faces})`` fixes the faces of roller ``index``."""
        ...

    def cost(self, scenario: Any) -> float:
        """Relative work of one round (about 1 for a 4-combatant default scenario)."""
        ...


@runtime_checkable
class Presentation(Protocol):
    """How the system's play reads: events, waiting, notes for reports."""

    method_note: str  # one paragraph on how a round is played, for reports
    waiting_words: str  # how this system's own waiting rule reads ("holding (R5)")
    sweep_note: str  # what a report's sweep of the main stat means here ("" if plain)

    def event_tuple(self, event: np.ndarray, scenario: Any) -> tuple[Any, ...]:
        """One event of ``scenario``'s trace as the tuple the twin logs: ``(kind, rule ID,
        ...)``, combatants and sides by name."""
        ...

    def event_text(self, event: np.ndarray, scenario: Any) -> str:
        """One event as a line of text, citing its rule ID."""
        ...

    def event_json(self, event: np.ndarray, scenario: Any) -> dict[str, Any]:
        """One event as a JSON object (``{"round": r, "event": kind, "rule": id, ...}``)."""
        ...


@runtime_checkable
class Fixtures(Protocol):
    """Scenarios the benchmark and the warm-up play."""

    def bench_scenario(self) -> dict[str, Any]:
        """A 4-combatant, 2-side scenario with default policies (TOML as a dict)."""
        ...

    def warmup_scenarios(self) -> list[dict[str, Any]]:
        """Scenarios that together reach every path of the kernels (``simkit warmup``)."""
        ...


@runtime_checkable
class System(Rules, Kernel, Presentation, Fixtures, Protocol):
    """An initiative system (one package under simkit/systems/): the four parts."""


Warmup = Callable[[], None]


class RulesBase:
    """Defaults of :class:`Rules`: no cross-field checks, edits as given, no waiting."""

    name = ""
    title = ""
    rule_ids = ""
    fields: Mapping[str, Field] = {}
    rules: Mapping[str, Field] = {}
    main_field = ""
    finer: Mapping[str, tuple[str, ...]] = {}
    policies: tuple[str, ...] = ()
    policy_alternatives: Mapping[str, tuple[Any, ...]] = {}
    counts: tuple[str, ...] = ()
    scenario_counts: tuple[str, ...] = ()
    optional_required: tuple[str, ...] = ()

    def prepare(self, entry: Mapping[str, Any], params: dict[str, Any]) -> list[Problem]:
        return []

    def check(self, scenario: Any) -> list[Problem]:
        return []

    def edit(self, given: dict[str, Any], key: str, value: Any) -> str | None:
        given[key] = value
        return None

    def protections(self, scenario: Any) -> dict[str, dict[str, str]]:
        """Who answers attacks on whom besides the target itself: guard name -> {ally
        name: how it guards} (readiness R7/R7a); empty for a system without guards.
        ``compare`` and reports read it to show what a guard changes for its allies."""
        return {}

    def dist_size(self, params: Mapping[str, Any]) -> int:
        return 2  # an action or none

    def stat(self, params: Mapping[str, Any]) -> int:
        return int(params[self.main_field])

    def stat_field(self, params: Mapping[str, Any], given: frozenset[str]) -> str:
        return self.main_field

    def waits(self, params: Mapping[str, Any]) -> bool:
        return False

    def never_waits(self) -> dict[str, Any]:
        return {}

    def after_opening(self, scenario: Any) -> Any:
        return None

    def policy_fields(self, scenario: Any, index: int) -> tuple[str, ...]:
        aims = len(_opponent_groups(scenario, index))
        return (*self.policies, "target") if aims > 1 else tuple(self.policies)

    def policy_values(self, scenario: Any, index: int, name: str) -> tuple[Any, ...]:
        """``policy_alternatives[name]``, else the field's choices; ``target``: "random"
        and every opponent group (a count group as one, else the combatant)."""
        if name == "target":
            return ("random", *_opponent_groups(scenario, index))
        if name in self.policy_alternatives:
            return tuple(self.policy_alternatives[name])
        spec = self.fields[name]
        if spec.choices is None:
            raise ValueError(f"{self.name}: policy field {name!r} has no choices to try")
        return tuple(spec.choices)


def _opponent_groups(scenario: Any, index: int) -> tuple[str, ...]:
    """The groups (a count group's base name, else the name) of ``index``'s opponents."""
    return tuple(dict.fromkeys(scenario.combatants[j].group for j in scenario.opponents(index)))


class KernelBase:
    """:class:`Kernel` over the system's kernel module, ``kernel``, which provides

        compile_scenario(scenario, layout) -> compiled
        run_chunk(compiled, key, n_rounds, sums, first=, carry=) -> carry
        trace(compiled, key, n_rounds, first=, carry=, dice=) -> (rows, events, carries, states)

    with ``carries_state``; without it, ``run_chunk`` and ``trace`` take no ``carry``,
    ``trace`` returns (rows, events, states) and a carry other than 0 is refused here.
    ``dice`` reaches the kernel as ``{roller index: [faces]}`` of plain ints."""

    kernel: Any = None
    carries_state = False

    def compile(self, scenario: Any, layout: Layout) -> Any:
        return self.kernel.compile_scenario(scenario, layout)

    def run_chunk(
        self,
        compiled: Any,
        key: np.ndarray,
        n_rounds: int,
        sums: Sums,
        first: int = 0,
        carry: int = 0,
    ) -> int:
        if self.carries_state:
            return int(
                self.kernel.run_chunk(compiled, key, n_rounds, sums, first=first, carry=carry)
            )
        self._no_carry(carry)
        self.kernel.run_chunk(compiled, key, n_rounds, sums, first=first)
        return 0

    def trace(
        self,
        compiled: Any,
        key: np.ndarray,
        n_rounds: int,
        first: int = 0,
        carry: int = 0,
        dice: Mapping[int, Sequence[int]] | None = None,
    ) -> Trace:
        fixed = {int(k): [int(f) for f in faces] for k, faces in (dice or {}).items()}
        if self.carries_state:
            out = self.kernel.trace(compiled, key, n_rounds, first=first, carry=carry, dice=fixed)
            return Trace(*out)
        self._no_carry(carry)
        rows, events, states = self.kernel.trace(compiled, key, n_rounds, first=first, dice=fixed)
        return Trace(rows, events, np.zeros(n_rounds, np.int64), states)

    def rows(
        self, compiled: Any, key: np.ndarray, n_rounds: int, first: int = 0, carry: int = 0
    ) -> tuple[np.ndarray, np.ndarray]:
        """The kernel module's ``rows`` if it has one (no events: faster), else
        ``trace``'s rows and carries."""
        if hasattr(self.kernel, "rows"):
            return self.kernel.rows(compiled, key, n_rounds, first=first, carry=carry)
        tr = self.trace(compiled, key, n_rounds, first=first, carry=carry)
        return tr.rows, tr.carries

    def _no_carry(self, carry: int) -> None:
        if carry != 0:
            name = getattr(self, "name", "this system")
            raise ValueError(f"{name} carries nothing between rounds, got carry={carry}")

    def rollers(self, scenario: Any) -> list[tuple[str, int, int]]:
        return []

    def cost(self, scenario: Any) -> float:
        return max(1.0, len(scenario.combatants) / 4)


class PresentationBase:
    """Defaults of :class:`Presentation`: events as their raw numbers, no notes."""

    method_note = ""
    waiting_words = ""
    sweep_note = ""

    def event_tuple(self, event: np.ndarray, scenario: Any) -> tuple[Any, ...]:
        return tuple(int(x) for x in event[1:])

    def event_text(self, event: np.ndarray, scenario: Any) -> str:
        return " ".join(str(x) for x in self.event_tuple(event, scenario))

    def event_json(self, event: np.ndarray, scenario: Any) -> dict[str, Any]:
        return {k: int(v) for k, v in zip(EVENT_COLUMNS, event, strict=True)}


class FixturesBase:
    """Defaults of :class:`Fixtures`: the warm-up plays the bench scenario (which every
    system writes itself)."""

    def warmup_scenarios(self) -> list[dict[str, Any]]:
        return [self.bench_scenario()]  # type: ignore[attr-defined]


class SystemBase(RulesBase, KernelBase, PresentationBase, FixturesBase):
    """A system: the four parts' defaults.  A system subclasses it, sets its attributes
    (``kernel``: its kernel module) and writes ``bench_scenario`` and what differs."""

    def __repr__(self) -> str:
        return f"<system {self.name}>"

    def __reduce__(self) -> tuple[Any, ...]:  # pickled by name (Dask tasks)
        from simkit.systems.installed import get

        return (get, (self.name,))
