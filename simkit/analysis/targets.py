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
estimate is on that side).  ``= 1 ± 0.05`` (or ASCII ``+- 0.05``, or relative ``± 5%``)
gives ``=`` a tolerance and a decision at every point (:meth:`Target.decision`): *met*
where the whole 95% interval lies inside the band ``[0.95, 1.05]``, *not met* where it
lies wholly outside, *undecided* otherwise, with the rounds that would about decide it
(:meth:`Target.more_rounds`: the half-width shrinks as one over the square root of the
rounds).  The ratio of two references gets a delta-method interval
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
from simkit.scenario.target_text import split_ratio, split_target, split_tolerance

LEVEL_PREFIXES = {"group": GROUP, "side": SIDE}
COMPARATORS = (">=", "<=", "=")
MET, NOT_MET, UNDECIDED = "met", "not met", "undecided"


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
    tolerance: float | None = None  # the band's half-width (absolute), with "="
    tolerance_text: str = ""  # as written: "0.05" or "5%"

    @property
    def quantity(self) -> str:
        return str(self.numerator) + (f" / {self.denominator}" if self.denominator else "")

    @property
    def band(self) -> tuple[float, float] | None:
        """The band ``value ± tolerance`` (None without a tolerance)."""
        if self.tolerance is None:
            return None
        return self.value - self.tolerance, self.value + self.tolerance

    @property
    def wanted(self) -> str:
        """``= 1 ± 0.05 (0.95 to 1.05)``, ``= 1``, ``>= 7``: the comparator and value."""
        text = f"{self.comparator} {self.value:g}"
        band = self.band
        if band is not None:
            text += f" ± {self.tolerance_text} ({band[0]:g} to {band[1]:g})"
        return text

    @property
    def shown(self) -> str:
        """The target in words: ``QUANTITY = 1 ± 0.05 (0.95 to 1.05)``."""
        return f"{self.quantity} {self.wanted}"

    def decision(self, e: Estimate) -> str:
        """With a tolerance: ``met`` (the whole interval inside the band), ``not met``
        (wholly outside) or ``undecided``.  Without one: ``met`` or ``not met`` as
        :meth:`met` says."""
        band = self.band
        if band is None:
            return MET if self.met(e) else NOT_MET
        if e.mean != e.mean:
            return UNDECIDED
        low, high = band
        if low <= e.ci_low and e.ci_high <= high:
            return MET
        if e.ci_high < low or e.ci_low > high:
            return NOT_MET
        return UNDECIDED

    def more_rounds(self, e: Estimate, rounds: int) -> float:
        """About how many more rounds (beyond ``rounds``) an undecided point needs: the
        half-width ``h`` shrinks as ``1 / sqrt(rounds)``, and the decision needs it below
        the distance ``d`` from the estimate to the nearer edge of the band, so
        ``rounds * (h / d)**2 - rounds``.  0 for a decided point; infinity for an
        estimate on an edge (or without a value)."""
        band = self.band
        if band is None or self.decision(e) != UNDECIDED:
            return 0.0
        d = min(abs(e.mean - band[0]), abs(e.mean - band[1]))
        h = max(e.mean - e.ci_low, e.ci_high - e.mean)
        if not d > 0 or h != h:
            return float("inf")
        return max(1.0, rounds * (h / d) ** 2 - rounds)

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


def read_tolerance(text: str, value: float, origin: str) -> float:
    """A tolerance's text, ``0.05`` (absolute) or ``5%`` (of ``value``), as the band's
    absolute half-width; ScenarioError naming ``origin`` if it is not a number >= 0 (or a
    percentage of a target value of 0)."""
    relative = text.endswith("%")
    number = text[:-1].strip() if relative else text
    try:
        tolerance = parse_number(number)
    except ValueError:
        tolerance = float("nan")
    if not (tolerance >= 0 and tolerance != float("inf")):
        raise ScenarioError(
            f"{origin}: tolerance {shown(text)} is not a number >= 0; write e.g. '± 0.05' "
            "(or '+- 0.05') or '± 5%'"
        )
    if relative:
        if value == 0:
            raise ScenarioError(f"{origin}: a relative tolerance needs a target value other than 0")
        tolerance = abs(value) * tolerance / 100
    return tolerance


def parse_target(
    scenario: Scenario,
    text: str,
    available: dict[str, list[str]],
    label: str = "--target",
    tolerance: str | None = None,
    tolerance_label: str = "--tolerance",
) -> Target:
    """``'side:monsters.actions / side:party.actions = 1'`` -> Target; ``= 1 ± 0.05``
    (``+-``, ``± 5%``) or ``tolerance`` (``"0.05"``, ``"5%"``) give it a tolerance.

    ``available`` maps a level to its metric names (``metric_slots`` of the layout)."""
    origin = f"{label} {shown(text)}"
    m = split_target(text) if isinstance(text, str) else None
    if m is None:
        raise ScenarioError(
            f"{origin}: expected REF OP VALUE or REF / REF OP VALUE with OP one of =, >=, <=, "
            "e.g. 'side:monsters.actions / side:party.actions = 1' (or '= 1 ± 0.05')"
        )
    value_text, tolerance_text = split_tolerance(m[2])
    try:
        value = parse_number(value_text)  # ASCII digits only (simkit.digits)
    except ValueError:
        raise ScenarioError(f"{origin}: {shown(value_text)} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ScenarioError(f"{origin}: the target value must be a finite number")
    if tolerance is not None:
        if tolerance_text is not None:
            raise ScenarioError(
                f"{tolerance_label}: the target {shown(text)} gives a tolerance already; "
                "give it once"
            )
        tolerance_text = tolerance.strip()
        origin = f"{tolerance_label} {shown(tolerance)}"
    band = None
    if tolerance_text is not None:
        if m[1] != "=":
            raise ScenarioError(
                f"{origin}: a tolerance goes with '=' (REF = 1 ± 0.05), not with '{m[1]}'"
            )
        band = read_tolerance(tolerance_text, value, origin)
        origin = f"{label} {shown(text)}"
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
    if band is None:
        return Target(num, den, m[1], value, text.strip())
    shown_text = text.strip() if tolerance is None else f"{text.strip()} ± {tolerance_text}"
    return Target(num, den, m[1], value, shown_text, band, tolerance_text)
