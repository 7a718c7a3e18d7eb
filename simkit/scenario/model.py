"""The validated, immutable scenario: what every other layer reads."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from simkit.scenario.errors import ScenarioError

__all__ = ["Combatant", "Params", "Scenario", "ScenarioError", "entry_path"]


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
    """One combatant after ``count`` expansion, every field filled in.

    ``entry`` is the index of the ``[[combatant]]`` table it came from (file order,
    from 0) and ``given`` the fields that table gave explicitly.
    """

    name: str
    side: str
    group: str
    params: Params
    entry: int = -1
    given: frozenset[str] = frozenset()

    def __getitem__(self, key: str) -> Any:
        return self.params[key]

    @property
    def path(self) -> str:
        """The field path of its [[combatant]] table in messages."""
        return entry_path(self.entry, self.group)


def entry_path(index: int, name: Any) -> str:
    """``combatant "Troll Chief" (index 0)``, or ``combatant[0]`` without a usable name."""
    if isinstance(name, str) and name.strip() and len(name) <= 100 and name.isprintable():
        return f"combatant {_quote(name)} (index {index})"
    return f"combatant[{index}]"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


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
    fight_rounds: int = 0  # R8a: rounds in one fight; 0: one unbounded sequence of rounds

    @property
    def sides(self) -> tuple[str, ...]:
        """Side names in order of first appearance."""
        return tuple(dict.fromkeys(c.side for c in self.combatants))

    @property
    def groups(self) -> tuple[str, ...]:
        """Group names (a count group's base name, else the combatant's name), in order."""
        return tuple(dict.fromkeys(c.group for c in self.combatants))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.combatants)

    def index(self, name: str) -> int:
        return self.names.index(name)

    def members(self, group: str) -> tuple[int, ...]:
        return tuple(i for i, c in enumerate(self.combatants) if c.group == group)

    def side_members(self, side: str) -> tuple[int, ...]:
        return tuple(i for i, c in enumerate(self.combatants) if c.side == side)

    def opponents(self, i: int) -> tuple[int, ...]:
        side = self.combatants[i].side
        return tuple(j for j, c in enumerate(self.combatants) if c.side != side)

    def targets(self, i: int) -> tuple[int, ...]:
        """Indices ``i`` may attack under its ``target`` policy (docs/rules.md, targets)."""
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
            **({"fight_rounds": self.fight_rounds} if self.fight_rounds else {}),
            "combatants": [
                {"name": c.name, "side": c.side, "group": c.group, **dict(c.params)}
                for c in self.combatants
            ],
        }
