"""Names and words shared by reports, plots and notebook tables (no heavy imports).

A ``count`` group is shown as one name, ``Wolf ×3``; field values read as words
(``until_attacked`` -> "until attacked"); rule IDs are lifted out of sentences into
footnotes (:class:`Footnotes`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from simkit.metrics import UnknownMetric, metric

# "(R7)", "(R5, R7)", "(V2)", "(R1-R10)": a parenthesised list of rule IDs.
RULE_IDS = re.compile(r"\s*\(((?:[A-Z][0-9]+)(?:\s*[-–,]\s*[A-Z]?[0-9]+)*)\)")
SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def group_size(scenario: Any, group: str) -> int:
    return sum(1 for c in scenario.combatants if c.group == group)


def group_label(scenario: Any, group: str) -> str:
    """``Wolf ×3`` for a ``count`` group of three, the name itself for a single."""
    n = group_size(scenario, group)
    return f"{group} ×{n}" if n > 1 else group


# A policy word: ``until_attacked``, ``hasty_up_to:2`` (lower-case words joined by "_", an
# optional ":N"). Anything else (a combatant's name such as ``Wolf_Alpha:2``) is shown as written.
_POLICY_WORD = re.compile(r"[a-z]+(?:_[a-z]+)*(?::-?[0-9]+)?", re.ASCII)


def value_words(value: Any, field: Any = None) -> str:
    """A field value in words: ``until_attacked`` -> ``until attacked``,
    ``hasty_up_to:2`` -> ``hasty up to 2``, ``True`` -> ``yes``.

    Only policy words are rewritten; a name is shown as written. With ``field`` (the
    value's :class:`~simkit.systems.base.Field`), a free-text field (no choices, no
    pattern: ``target``) is never rewritten, whatever its value looks like."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if value is None:
        return "–"
    if isinstance(value, tuple):  # names (readiness guard = ["Mira"], R7a)
        return "for " + join_names([str(v) for v in value])
    text = str(value)
    free_text = getattr(field, "choices", None) is None and getattr(field, "pattern", None) is None
    if field is not None and free_text:
        return text
    if not _POLICY_WORD.fullmatch(text):
        return text
    return text.replace("_", " ").replace(":", " ")


def field_words(name: str) -> str:
    return name.replace("_", " ")


def join_names(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    names = list(names)
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def strip_rule_ids(text: str) -> tuple[str, list[str]]:
    """``"holding (R5)"`` -> ``("holding", ["R5"])``."""
    ids: list[str] = []

    def take(m: re.Match[str]) -> str:
        ids.append(m.group(1))
        return ""

    return RULE_IDS.sub(take, text).strip(), ids


def superscript(n: int) -> str:
    return str(n).translate(SUPERSCRIPTS)


class Footnotes:
    """Numbered notes of one report: ``mark(text)`` gives the superscript to put after a
    word, the same number for the same text."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def mark(self, text: str) -> str:
        if text not in self.notes:
            self.notes.append(text)
        return superscript(self.notes.index(text) + 1)

    def words(self, text: str, what: str = "") -> str:
        """``text`` without its rule IDs, followed by a footnote mark citing them."""
        plain, ids = strip_rule_ids(text)
        if not ids:
            return plain
        return plain + self.rule(what or plain.capitalize(), ids)

    def rule(self, what: str, ids: Sequence[str]) -> str:
        """The mark of the note "``what`` (rule R5 in docs/rules.md of the simkit repository)."."""
        if not ids:
            return ""
        plural = "s" if len(ids) > 1 or any(c in ids[0] for c in ",-–") else ""
        rules = "docs/rules.md of the simkit repository"
        return self.mark(f"{what} (rule{plural} {', '.join(ids)} in {rules}).")

    def items(self) -> list[tuple[str, str]]:
        return [(superscript(k + 1), t) for k, t in enumerate(self.notes)]


# --- metric words (registry labels and units)
def is_percent(name: str) -> bool:
    try:
        return metric(name).is_probability
    except UnknownMetric:
        return False


def factor_of(name: str) -> float:
    """100 for metrics shown in %, else 1."""
    return 100.0 if is_percent(name) else 1.0


def title_of(name: str) -> str:
    """The metric's label in words (``hasty_scale_ge.3`` -> "Hasty scale >= 3")."""
    try:
        m = metric(name)
    except UnknownMetric:
        return name.replace("_", " ").capitalize()
    _, _, member = name.partition(".")
    if member and m.family == "k":
        return m.label.replace(" k", f" {member}").replace(">=", "≥")
    if member and m.family == "combatant":
        return f"{m.label} {member}"
    return m.label.replace(">=", "≥")


def unit_of(name: str) -> str:
    try:
        return metric(name).unit
    except UnknownMetric:
        return ""


# --- how a group's or a side's value is made from its members' (one wording everywhere)
ANY_MEMBER = "any member"
SUM = "sum"
RATIO_OF_SUMS = "ratio of sums"
EACH = "each, on average"


def aggregation(name: str) -> str:
    """How a group's or side's row of ``name`` aggregates its members: "any member"
    (a probability: at least one member), "sum" (a count), "ratio of sums" (a ratio);
    "" for the action economy (its unit says it: per opponent action) and for a name the
    registry does not know.  A report's per-group tables read "each, on average"
    (:data:`EACH`) instead."""
    if name == "action_economy":
        return ""
    try:
        m = metric(name)
    except UnknownMetric:
        return ""
    if m.kind == "probability":
        return ANY_MEMBER
    return SUM if m.kind == "mean" else RATIO_OF_SUMS


def axis_label(name: str, difference: bool = False) -> str:
    """``First action, % of rounds``; a difference: ``… percentage points`` for a %."""
    unit = unit_of(name)
    if difference:
        unit = "percentage points" if is_percent(name) else unit
        return f"Change in {title_of(name).lower()}, {unit}" if unit else title_of(name)
    return f"{title_of(name)}, {unit}" if unit else title_of(name)


# --- sweep axes (offsets shown as the values they gave)
def _actual(sweep: Any, k: int, axis: Any) -> list[Any]:
    """The values a relative axis gave at grid point ``k`` (distinct, sorted)."""
    scenario = sweep.results[k].scenario
    if axis.target == "rules":
        return [scenario.rules[axis.field]]
    chosen = [
        c for c in scenario.combatants if axis.target == "*" or axis.target in (c.name, c.group)
    ]
    return sorted({c.params[axis.field] for c in chosen}, key=str)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def sweep_axis(sweep: Any, a: int = 0) -> tuple[list[float], list[str], str]:
    """Positions, tick labels and title of axis ``a`` of a sweep, with actual values:
    an offset (``+1``) is shown as the value it gave (``3``), or as ``+1 (2/3)`` when it
    gave different values to different combatants."""
    axis = sweep.axes[a]
    values = list(axis.values)
    title = axis.column
    if not axis.relative:
        if all(_is_number(v) for v in values):
            return [float(v) for v in values], [_cell(v) for v in values], title
        return list(range(len(values))), [_cell(v) for v in values], title
    stride = 1
    for later in sweep.axes[a + 1 :]:
        stride *= len(later.values)
    actual = [_actual(sweep, k * stride, axis) for k in range(len(values))]
    if all(len(v) == 1 and _is_number(v[0]) for v in actual):
        return [float(v[0]) for v in actual], [_cell(v[0]) for v in actual], title
    labels = [
        f"{_cell(v)}\n({'/'.join(_cell(x) for x in act)})"
        for v, act in zip(values, actual, strict=True)
    ]
    return [float(v.delta) for v in values], labels, f"{title} (offset; values as played)"


def _cell(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)
