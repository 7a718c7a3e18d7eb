"""Metric references and balance targets: ``side:monsters.actions / side:party.actions = 1``.

A *reference* names one number of a result:

``NAME.metric``
    a combatant's metric (``Gunnar.first_action``);
``group:NAME.metric``
    a ``count`` group's (``group:Wolf.undefended``): counts summed, probabilities as
    "any member", ratios of the summed counts;
``side:NAME.metric``
    a side's, read the same way (also ``side:NAME.action_economy``).

A *target* is a reference, or the ratio of two references, compared with a number:
``=`` (met where the 95% interval covers the number), ``>=`` or ``<=`` (met where the
estimate is on that side).  The ratio of two references gets a delta-method interval
from the cross sums the run keeps for exactly that pair; both must be plain counts or
probabilities (not ratios themselves).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from simkit.digits import parse_number
from simkit.metrics import (
    COMBATANT,
    GROUP,
    SIDE,
    Estimate,
    Layout,
    UnknownMetric,
    metric,
    pair_estimate,
    source_estimate,
)
from simkit.scenario import Scenario, ScenarioError, shown, suggest
from simkit.scenario.target_text import split_ratio, split_target

LEVEL_PREFIXES = {"group": GROUP, "side": SIDE}
COMPARATORS = (">=", "<=", "=")


@dataclass(frozen=True)
class Ref:
    """One number of a result: a metric of a combatant, group or side."""

    level: str
    name: str
    metric: str

    def __str__(self) -> str:
        prefix = "" if self.level == COMBATANT else f"{self.level}:"
        return f"{prefix}{self.name}.{self.metric}"

    def slot(self, layout: Layout) -> int:
        """The slot of a count or probability reference."""
        return layout.slot(layout.source(self.level, self.name), self.metric)

    def estimate(self, result: Any) -> Estimate:
        source = result.layout.source(self.level, self.name)
        return source_estimate(result.layout, result.sums, source, self.metric)


@dataclass(frozen=True)
class Target:
    """``numerator [/ denominator] comparator value``."""

    numerator: Ref
    denominator: Ref | None
    comparator: str
    value: float
    text: str

    @property
    def quantity(self) -> str:
        return str(self.numerator) + (f" / {self.denominator}" if self.denominator else "")

    def pairs(self, layout: Layout) -> tuple[tuple[int, int], ...]:
        """The cross sum the ratio's interval needs (none for a single reference)."""
        if self.denominator is None:
            return ()
        return ((self.numerator.slot(layout), self.denominator.slot(layout)),)

    def estimate(self, result: Any) -> Estimate:
        if self.denominator is None:
            return self.numerator.estimate(result)
        a, b = self.pairs(result.layout)[0]
        return pair_estimate(result.layout, result.sums, a, b, False)

    def met(self, e: Estimate) -> bool:
        """The estimate meets the target (``=``: its interval covers the value)."""
        if e.mean != e.mean:
            return False
        if self.comparator == "=":
            return e.ci_low <= self.value <= e.ci_high
        if self.comparator == ">=":
            return e.mean >= self.value
        return e.mean <= self.value

    def clearly(self, e: Estimate) -> bool:
        """Met with the whole 95% interval on the right side (``>=``, ``<=``)."""
        if self.comparator == ">=":
            return e.ci_low >= self.value
        if self.comparator == "<=":
            return e.ci_high <= self.value
        return self.met(e)


def _names(scenario: Scenario, level: str) -> list[str]:
    if level == COMBATANT:
        return list(scenario.names)
    if level == GROUP:
        return list(scenario.groups)
    return list(scenario.sides)


def parse_ref(scenario: Scenario, text: str, metrics: list[str], origin: str) -> Ref:
    """``side:party.actions`` -> Ref; ScenarioError naming what is wrong (closest names)."""
    text = text.strip()
    level = COMBATANT
    prefix, colon, rest = text.partition(":")
    if colon and prefix in LEVEL_PREFIXES:
        level, text = LEVEL_PREFIXES[prefix], rest
    names = _names(scenario, level)
    # NAME.metric where NAME may contain dots: the longest known name followed by a dot.
    matches = [n for n in names if text.startswith(n + ".")]
    what = {COMBATANT: "combatant", GROUP: "group", SIDE: "side"}[level]
    if not matches:
        name = text.rpartition(".")[0] if "." in text else text
        if not name:
            raise ScenarioError(
                f"{origin}: expected NAME.metric, side:NAME.metric or group:NAME.metric"
            )
        hint = (
            " (prefix side: or group: to name a side or a group)"
            if level == COMBATANT and (name in scenario.sides or name in scenario.groups)
            else ""
        )
        raise ScenarioError(
            f"{origin}: no {what} {shown(name)}{suggest(name, names)}{hint}; "
            f"{what}s: {', '.join(names)}"
        )
    name = max(matches, key=len)
    m = text[len(name) + 1 :]
    if m not in metrics:
        raise ScenarioError(
            f"{origin}: no metric {shown(m)} per {what}{suggest(m, metrics)}; metrics: "
            + ", ".join(metrics)
        )
    return Ref(level, name, m)


def parse_target(
    scenario: Scenario, text: str, available: dict[str, list[str]], label: str = "--target"
) -> Target:
    """``'side:monsters.actions / side:party.actions = 1'`` -> Target.

    ``available`` maps a level to its metric names (``metric_slots`` of the layout)."""
    origin = f"{label} {shown(text)}"
    m = split_target(text) if isinstance(text, str) else None
    if m is None:
        raise ScenarioError(
            f"{origin}: expected REF OP VALUE or REF / REF OP VALUE with OP one of =, >=, <=, "
            "e.g. 'side:monsters.actions / side:party.actions = 1'"
        )
    try:
        value = parse_number(m[2].strip())  # ASCII digits only (simkit.digits)
    except ValueError:
        raise ScenarioError(f"{origin}: {shown(m[2].strip())} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ScenarioError(f"{origin}: the target value must be a finite number")
    lhs = m[0]
    parts = split_ratio(lhs)
    if len(parts) > 2:
        raise ScenarioError(f"{origin}: at most one ratio: REF / REF")

    def ref(part: str) -> Ref:
        level = LEVEL_PREFIXES.get(part.strip().partition(":")[0], COMBATANT)
        return parse_ref(scenario, part, available[level], origin)

    num = ref(parts[0])
    den = ref(parts[1]) if len(parts) == 2 else None
    if den is not None:
        for r in (num, den):
            try:
                kind = metric(r.metric).kind
            except UnknownMetric:
                kind = "ratio"
            if kind == "ratio" or r.metric == "action_economy":
                raise ScenarioError(
                    f"{origin}: {r} is itself a ratio; a target may divide two counts or "
                    "probabilities (e.g. side:a.actions / side:b.actions)"
                )
    return Target(num, den, m[1], value, text.strip())
