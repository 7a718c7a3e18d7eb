"""Where every count of a round lives: the :class:`Layout` of a kernel's vector ``y``.

A kernel adds each round's counts into ``y``.  The layout labels every slot:

``[0, n K)``
    per combatant ``i`` (scenario order) its ``K`` counts, in the order of the
    system's ``counts``; ``count_slots[i, m]`` is the slot of count ``m``.  Kernels
    index this array with named count indices, never with offsets of their own.
then ``n * n``
    ``acts_before``: ``before_slot(i, j)`` is 1 in a round where i's first action
    comes strictly before j's.
then the ``actions`` distributions
    ``dist_offsets[i] + k`` is 1 in a round where combatant i takes exactly k actions.
then the scenario-wide counts,
then the *aggregate units*
    one block of the aggregated counts per distinct set of two or more combatants that
    is a ``count`` group, a side or the opponents of a side.  A group or side of one
    combatant reads that combatant's own slots; a side that is exactly one group shares
    the group's block.  ``aggregate_round`` (metrics.sums) fills these slots from the
    combatant slots at the end of every round: a ``"mean"`` count is summed, a
    ``"probability"`` count becomes "any member".

Cross sums (``Sums.sx``) are kept for every ratio pair: each ratio metric of a
combatant or unit, the action economy of every side (its actions over its opponents'
actions), and any ``pairs`` of slots asked for (``simkit tune`` targets).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from simkit.metrics.registry import MEAN, PROBABILITY, metric, ratio_metrics
from simkit.metrics.sums import Sums

COMBATANT, GROUP, SIDE, VERSUS, SCENARIO = "combatant", "group", "side", "versus", "scenario"
LEVELS = (COMBATANT, GROUP, SIDE)
OP_SUM, OP_ANY = 0, 1


@dataclass(frozen=True)
class Unit:
    """A set of two or more combatants whose counts are aggregated every round."""

    members: tuple[int, ...]
    names: tuple[tuple[str, str], ...]  # (level, name) pairs that read this unit


@dataclass(frozen=True)
class Source:
    """Where a (level, name) reads its counts: one combatant or one aggregate unit."""

    level: str
    name: str
    combatant: int = -1  # index, or -1
    unit: int = -1  # index, or -1
    members: tuple[int, ...] = ()


@dataclass(frozen=True)
class Layout:
    """The slots of a kernel's per-round vector (see the module docstring)."""

    names: tuple[str, ...]
    counts: tuple[str, ...]
    dist_sizes: tuple[int, ...]
    scenario_counts: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    sides: tuple[str, ...] = ()
    extra_pairs: tuple[tuple[int, int], ...] = field(default=())

    def __post_init__(self) -> None:
        n = len(self.names)
        if not self.groups:
            object.__setattr__(self, "groups", self.names)
        if not self.sides:
            object.__setattr__(self, "sides", self.names)
        if len(self.groups) != n or len(self.sides) != n or len(self.dist_sizes) != n:
            raise ValueError("layout: names, groups, sides and dist_sizes differ in length")
        for c in self.counts:
            metric(c)  # every count must be in the registry

    # ------------------------------------------------------------------ sizes
    @property
    def n(self) -> int:
        return len(self.names)

    @property
    def per_combatant(self) -> int:
        return len(self.counts)

    def count_index(self, i: int, name: str) -> int:
        """Slot of count ``name`` of combatant ``i``."""
        return i * self.per_combatant + self.counts.index(name)

    @cached_property
    def count_slots(self) -> np.ndarray:
        """int64 [n, K]: ``count_slots[i, m]`` is the slot of count ``m`` of combatant ``i``."""
        k = self.per_combatant
        return np.arange(self.n * k, dtype=np.int64).reshape(self.n, k)

    @property
    def before_offset(self) -> int:
        return self.n * self.per_combatant

    def before_index(self, i: int, j: int) -> int:
        return self.before_offset + i * self.n + j

    @cached_property
    def dist_offsets(self) -> np.ndarray:
        start = self.before_offset + self.n * self.n
        return np.concatenate([[0], np.cumsum(self.dist_sizes)])[:-1].astype(np.int64) + start

    def dist_index(self, i: int, k: int) -> int:
        return int(self.dist_offsets[i]) + k

    @property
    def scenario_offset(self) -> int:
        return self.before_offset + self.n * self.n + sum(self.dist_sizes)

    def scenario_index(self, name: str) -> int:
        return self.scenario_offset + self.scenario_counts.index(name)

    @property
    def unit_offset(self) -> int:
        return self.scenario_offset + len(self.scenario_counts)

    @cached_property
    def aggregated(self) -> tuple[str, ...]:
        """The counts read per group and side (every count whose metric aggregates)."""
        return tuple(c for c in self.counts if metric(c).aggregate)

    @property
    def size(self) -> int:
        return self.unit_offset + len(self.units) * len(self.aggregated)

    # ------------------------------------------------------------------ units
    @cached_property
    def _sources(self) -> tuple[tuple[Unit, ...], dict[tuple[str, str], Source]]:
        sets: dict[tuple[int, ...], list[tuple[str, str]]] = {}
        single: dict[tuple[str, str], int] = {}

        def add(level: str, name: str, members: tuple[int, ...]) -> None:
            if len(members) == 1:
                single[(level, name)] = members[0]
            else:
                sets.setdefault(members, []).append((level, name))

        for g in dict.fromkeys(self.groups):
            add(GROUP, g, tuple(i for i in range(self.n) if self.groups[i] == g))
        for s in dict.fromkeys(self.sides):
            add(SIDE, s, tuple(i for i in range(self.n) if self.sides[i] == s))
        for s in dict.fromkeys(self.sides):
            add(VERSUS, s, tuple(i for i in range(self.n) if self.sides[i] != s))
        units = tuple(Unit(members, tuple(names)) for members, names in sets.items())
        sources: dict[tuple[str, str], Source] = {}
        for (level, name), i in single.items():
            sources[(level, name)] = Source(level, name, combatant=i, members=(i,))
        for u, unit in enumerate(units):
            for level, name in unit.names:
                sources[(level, name)] = Source(level, name, unit=u, members=unit.members)
        for i, name in enumerate(self.names):
            sources[(COMBATANT, name)] = Source(COMBATANT, name, combatant=i, members=(i,))
        return units, sources

    @property
    def units(self) -> tuple[Unit, ...]:
        return self._sources[0]

    def source(self, level: str, name: str) -> Source:
        """Where ``name`` at ``level`` (combatant, group, side, versus) reads its counts."""
        try:
            return self._sources[1][(level, name)]
        except KeyError:
            raise KeyError(f"no {level} named {name!r}") from None

    def level_names(self, level: str) -> list[str]:
        """The combatants, groups or sides, in scenario order."""
        if level == COMBATANT:
            return list(self.names)
        if level == GROUP:
            return list(dict.fromkeys(self.groups))
        if level == SIDE:
            return list(dict.fromkeys(self.sides))
        raise ValueError(f"unknown level {level!r}; allowed: {', '.join(LEVELS)}")

    def slot(self, source: Source, count: str) -> int:
        """Slot of ``count`` for a combatant or unit source."""
        if source.unit >= 0:
            return (
                self.unit_offset + source.unit * len(self.aggregated) + self.aggregated.index(count)
            )
        return self.count_index(source.combatant, count)

    @cached_property
    def aggregation(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(src, dst, op) int64 arrays: every round, ``y[dst] (+= or any=) y[src]``."""
        src, dst, op = [], [], []
        k = len(self.aggregated)
        for u, unit in enumerate(self.units):
            for a, count in enumerate(self.aggregated):
                kind = metric(count).kind
                for i in unit.members:
                    src.append(self.count_index(i, count))
                    dst.append(self.unit_offset + u * k + a)
                    op.append(OP_ANY if kind == PROBABILITY else OP_SUM)
                assert kind in (MEAN, PROBABILITY)
        return (
            np.array(src, dtype=np.int64),
            np.array(dst, dtype=np.int64),
            np.array(op, dtype=np.int64),
        )

    # ------------------------------------------------------------------ ratio pairs
    @cached_property
    def ratios(self) -> tuple[tuple[str, str, str], ...]:
        """(ratio metric, numerator count, denominator count) of this layout."""
        return tuple(ratio_metrics(self.counts))

    @cached_property
    def pairs(self) -> tuple[tuple[int, int], ...]:
        """Every (numerator slot, denominator slot) whose cross sum is kept."""
        out: dict[tuple[int, int], None] = {}
        agg = set(self.aggregated)
        for i in range(self.n):
            src = Source(COMBATANT, self.names[i], combatant=i)
            for _, num, den in self.ratios:
                out[(self.slot(src, num), self.slot(src, den))] = None
        for u in range(len(self.units)):
            src = Source(GROUP, "", unit=u)
            for _, num, den in self.ratios:
                if num in agg and den in agg:
                    out[(self.slot(src, num), self.slot(src, den))] = None
        if "actions" in self.counts:
            for s in dict.fromkeys(self.sides):
                a = self.slot(self.source(SIDE, s), "actions")
                b = self.slot(self.source(VERSUS, s), "actions")
                out[(a, b)] = None
        for pair in self.extra_pairs:
            out[(int(pair[0]), int(pair[1]))] = None
        return tuple(out)

    @cached_property
    def pair_index(self) -> dict[tuple[int, int], int]:
        return {p: k for k, p in enumerate(self.pairs)}

    def pair_indices(self) -> tuple[np.ndarray, np.ndarray]:
        """Numerator and denominator slots of every kept pair (int64 arrays)."""
        a = np.array([p[0] for p in self.pairs], dtype=np.int64)
        b = np.array([p[1] for p in self.pairs], dtype=np.int64)
        return a, b

    def with_pairs(self, pairs: tuple[tuple[int, int], ...]) -> Layout:
        """The same layout keeping cross sums of ``pairs`` too."""
        extra = tuple(dict.fromkeys((*self.extra_pairs, *pairs)))
        return Layout(
            self.names,
            self.counts,
            self.dist_sizes,
            self.scenario_counts,
            self.groups,
            self.sides,
            extra,
        )

    def new_sums(self) -> Sums:
        return Sums.zeros(self.size, len(self.pairs))

    # ------------------------------------------------------------------ labels
    def slot_label(self, slot: int) -> str:
        """What a slot holds, in words (for messages and tests)."""
        if slot < self.before_offset:
            i, m = divmod(slot, self.per_combatant)
            return f"{self.names[i]}.{self.counts[m]}"
        if slot < self.dist_offsets[0] if self.n else False:
            i, j = divmod(slot - self.before_offset, self.n)
            return f"{self.names[i]}.acts_before.{self.names[j]}"
        if slot < self.scenario_offset:
            for i in range(self.n - 1, -1, -1):
                if slot >= self.dist_offsets[i]:
                    return f"{self.names[i]}.actions_dist.{slot - int(self.dist_offsets[i])}"
        if slot < self.unit_offset:
            return self.scenario_counts[slot - self.scenario_offset]
        u, a = divmod(slot - self.unit_offset, len(self.aggregated))
        level, name = self.units[u].names[0]
        return f"{level}:{name}.{self.aggregated[a]}"
