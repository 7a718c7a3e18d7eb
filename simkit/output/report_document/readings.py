"""The estimates of one result as a report reads them: per side, per group ("each"
member of a ``count`` group) and per combatant, computed once.

A group's row is what one member gets: for a count (``actions``) the group's summed
estimate divided by its size (exact, correlations included); for a probability the
average of the members' estimates, with the average of their standard errors (an upper
bound of the average's, whatever the correlation); for a ratio the group's ratio of
summed counts.  Members are listed apart only where they differ: two members whose 95%
intervals do not overlap (in a run of at least ``MIN_ROUNDS`` rounds).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np

from simkit.metrics import Z95, Estimate, UnknownMetric, metric
from simkit.output.report_document.names import group_label

NAN = Estimate(math.nan, math.nan, math.nan, math.nan)
# Fewer rounds than this give intervals too rough to call two copies different (the same
# floor as the batches of a paired comparison, simkit.analysis.compare.MIN_BATCHES).
MIN_ROUNDS = 32


def _kind(name: str) -> str:
    try:
        return metric(name).kind
    except UnknownMetric:
        return "ratio"


def _bounded(name: str) -> bool:
    try:
        return metric(name).is_probability
    except UnknownMetric:
        return False


def average(ests: Sequence[Estimate], bounded: bool) -> Estimate:
    """The mean of several estimates, with the mean of their standard errors."""
    valid = [e for e in ests if e.mean == e.mean]
    if not valid:
        return NAN
    mean = sum(e.mean for e in valid) / len(valid)
    se = sum(e.se for e in valid) / len(valid)
    low, high = mean - Z95 * se, mean + Z95 * se
    if bounded:
        low, high = max(low, 0.0), min(high, 1.0)
    return Estimate(mean, se, low, high)


def scaled(e: Estimate, factor: float) -> Estimate:
    return Estimate(e.mean * factor, e.se * factor, e.ci_low * factor, e.ci_high * factor)


def constant(e: Estimate) -> bool:
    """The same value in every round (a standard error of exactly 0)."""
    return e.se == 0


def differ(ests: Sequence[Estimate]) -> bool:
    """Two of the estimates have 95% intervals that do not overlap."""
    valid = [e for e in ests if e.mean == e.mean and e.ci_low == e.ci_low]
    if len(valid) < 2:
        return False
    return max(e.ci_low for e in valid) > min(e.ci_high for e in valid)


class Numbers:
    """Every estimate of a result, by combatant, group and side."""

    def __init__(self, result: Any) -> None:
        self.result = result
        s = result.scenario
        self.scenario = s
        self.rows = {(r[0], r[1]): Estimate(*r[2:]) for r in result.rows}
        self.metrics: list[str] = list(result.metrics)
        self.groups: list[str] = list(s.groups)
        self.sides: list[str] = list(s.sides)
        self.members = {g: [c.name for c in s.combatants if c.group == g] for g in self.groups}
        self.side_members = {x: [c.name for c in s.combatants if c.side == x] for x in self.sides}
        self.side_groups = {
            x: list(dict.fromkeys(c.group for c in s.combatants if c.side == x)) for x in self.sides
        }
        self.group_side = {c.group: c.side for c in s.combatants}

    @cached_property
    def group_rows(self) -> dict[tuple[str, str], Estimate]:
        return {(w, m): Estimate(*x) for w, m, *x in self.result.level_rows("group")}

    @cached_property
    def side_rows(self) -> dict[tuple[str, str], Estimate]:
        return {(w, m): Estimate(*x) for w, m, *x in self.result.level_rows("side")}

    @cached_property
    def scenario_rows(self) -> list[tuple[str, Estimate]]:
        return [(m, e) for (w, m), e in self.rows.items() if w == ""]

    # ------------------------------------------------------------------ reading
    def has(self, name: str) -> bool:
        if name == "action_economy":
            return any(m == name for _, m in self.side_rows)
        return name in self.metrics

    def label(self, group: str) -> str:
        return group_label(self.scenario, group)

    def combatant(self, name: str, m: str) -> Estimate:
        return self.rows.get((name, m), NAN)

    def side(self, side: str, m: str) -> Estimate:
        return self.side_rows.get((side, m), NAN)

    def total(self, group: str, m: str) -> Estimate:
        """The group's aggregate (counts summed, probabilities "any member")."""
        if len(self.members[group]) == 1:
            return self.combatant(self.members[group][0], m)
        return self.group_rows.get((group, m), NAN)

    def each(self, group: str, m: str) -> Estimate:
        """What one member of the group gets (see the module docstring)."""
        members = self.members[group]
        if len(members) == 1:
            return self.combatant(members[0], m)
        kind = _kind(m)
        if kind == "mean" and (group, m) in self.group_rows:
            return scaled(self.group_rows[(group, m)], 1.0 / len(members))
        if kind == "ratio" and (group, m) in self.group_rows:
            return self.group_rows[(group, m)]
        return average([self.combatant(x, m) for x in members], _bounded(m))

    def members_differ(self, group: str, names: Sequence[str]) -> bool:
        members = self.members[group]
        if len(members) < 2 or self.result.rounds < MIN_ROUNDS:
            return False
        return any(differ([self.combatant(x, m) for x in members]) for m in names)

    def varies(self, m: str, level: str = "group") -> bool:
        """False where the metric is the same in every round for everyone (it cannot vary,
        e.g. one action each per round)."""
        if level == "side":
            ests = [self.side(s, m) for s in self.sides]
        else:
            ests = [self.each(g, m) for g in self.groups]
        return not all(constant(e) for e in ests if e.mean == e.mean)

    def always_zero(self, m: str) -> bool:
        ests = [self.each(g, m) for g in self.groups]
        return all(e.mean == 0 and constant(e) for e in ests)

    # ------------------------------------------------------------------ families
    def distribution(self, group: str) -> list[Estimate]:
        """P(actions = k), k = 0 .., for one member of the group."""
        members = self.members[group]
        size = 0
        while (members[0], f"actions_dist.{size}") in self.rows:
            size += 1
        return [
            average([self.combatant(x, f"actions_dist.{k}") for x in members], True)
            for k in range(size)
        ]

    def before_matrix(self, groups: Sequence[str]) -> np.ndarray:
        """P(a member of the row group acts before a member of the column group), averaged
        over member pairs (NaN on the diagonal of a single)."""
        out = np.full((len(groups), len(groups)), np.nan)
        for i, a in enumerate(groups):
            for j, b in enumerate(groups):
                values = [
                    self.rows[(x, f"acts_before.{y}")].mean
                    for x in self.members[a]
                    for y in self.members[b]
                    if x != y and (x, f"acts_before.{y}") in self.rows
                ]
                if values:
                    out[i, j] = 100.0 * sum(values) / len(values)
        return out
