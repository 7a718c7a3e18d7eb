"""A report's sentences: the balance verdict, the findings per group, the cost and
benefit of every policy, and what the sweep shows.

Every number comes with its 95% interval (``format``: rounded to what the interval
supports), every comparison uses the intervals (two estimates differ only where their
intervals do not overlap; a paired difference only where its interval excludes 0), and
"no detectable difference" is said where they cover it.  Rule IDs never appear inside
a sentence: :class:`~simkit.output.report_document.names.Footnotes` turns them into notes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from simkit import systems
from simkit.metrics import METRICS, Estimate
from simkit.metrics import metric as registry
from simkit.output.numbers import format_difference, format_estimate, format_gain, format_mean
from simkit.output.report_document.names import (
    EACH,
    Footnotes,
    field_words,
    join_names,
    strip_rule_ids,
    title_of,
    value_words,
)
from simkit.output.report_document.readings import Numbers, constant

if TYPE_CHECKING:
    from simkit.analysis.report_runs import PolicyEffect, ReportData

ECONOMY = "action_economy"
ORDINALS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def est(metric: str, e: Estimate) -> str:
    return format_estimate(metric, e.mean, e.se)


def mean(metric: str, e: Estimate) -> str:
    return format_mean(metric, e.mean, e.se)


def overlap(a: Estimate, b: Estimate) -> bool:
    return not (a.ci_low > b.ci_high or b.ci_low > a.ci_high)


def parity(numbers: Numbers) -> float:
    """The action economy of a side when every side takes as many actions."""
    k = len(numbers.sides)
    return 1.0 / (k - 1) if k > 1 else 1.0


def parity_words(numbers: Numbers) -> str:
    k = len(numbers.sides)
    if k == 2:
        return "1 is parity"
    value = parity(numbers)
    return f"an even share among {ORDINALS.get(k, str(k))} sides would be {value:.3g}"


# --------------------------------------------------------------------------- the verdict
def verdict(numbers: Numbers) -> list[str]:
    """At most four sentences: which side the initiative economy favours and by how
    much, who acts first, and (where the system has them) undefended and hasty attacks."""
    out: list[str] = []
    sides = numbers.sides
    if numbers.has(ECONOMY) and len(sides) >= 2:
        out.append(_economy_sentence(numbers))
    if numbers.has("first_action"):
        out.append(_first_sentence(numbers))
    if numbers.has("undefended") and (numbers.has("defended") or numbers.has("hasty_only")):
        parts = []
        for k, s in enumerate(sides):
            u, r = numbers.side(s, "undefended"), numbers.side(s, "attacks_received")
            of = ""
            if r.mean == r.mean:
                of = f" of the {mean('attacks_received', r)}" + (" it receives" if k == 0 else "")
            parts.append(f"{s} {est('undefended', u)}{of}")
        out.append(
            "Attacks left unanswered per round, the sum over each side's members: "
            + ", ".join(parts)
            + "."
        )
    if numbers.has("hasty_only"):
        parts = []
        for k, s in enumerate(sides):
            h = numbers.side(s, "hasty_only")
            text = f"{est('hasty_only', h)} on {s}"
            scale = numbers.side(s, "hasty_scale")
            if h.mean > 0 and scale.mean == scale.mean:
                text += (
                    f" at a mean scale of {est('hasty_scale', scale)} pips"
                    if k == 0
                    else (f" at {est('hasty_scale', scale)} pips")
                )
            parts.append(text)
        out.append(
            "Attacks answered only hastily per round, the sum over each side's members: "
            + ", ".join(parts)
            + "."
        )
    return out[:4]


def actions_text(e: Estimate) -> str:
    """``6.56 ± 0.02 actions``, ``1 action``."""
    text = est("actions", e)
    return f"{text} action" if text == "1" else f"{text} actions"


def _economy_sentence(numbers: Numbers) -> str:
    sides = numbers.sides
    if all(constant(numbers.side(s, "actions")) for s in sides):
        listed = join_names([f"{s} {actions_text(numbers.side(s, 'actions'))}" for s in sides])
        return (
            "The action economy is fixed here, every combatant acting the same number of "
            f"times every round: {listed} per round (the sum over each side's members)."
        )
    if len(sides) == 2:
        a, b = sides
        e = numbers.side(a, ECONOMY)
        aa, ab = numbers.side(a, "actions"), numbers.side(b, "actions")
        if e.mean != e.mean:
            return "Nobody takes an action, so there is no action economy to compare."
        if e.covers(1.0):
            return (
                f"No detectable difference in the initiative economy: {a} takes "
                f"{actions_text(aa)} per round (the sum over its members) and {b} "
                f"{est('actions', ab)} "
                f"(action economy {est(ECONOMY, e)}; {parity_words(numbers)})."
            )
        fav, other = (a, b) if e.mean > 1 else (b, a)
        ef = numbers.side(fav, ECONOMY)
        return (
            f"The initiative economy favours {fav}: {actions_text(numbers.side(fav, 'actions'))} "
            f"per round (the sum over its members) against "
            f"{est('actions', numbers.side(other, 'actions'))} for {other}, "
            f"{est(ECONOMY, ef)} times as many ({parity_words(numbers)})."
        )
    even = parity(numbers)
    above = [s for s in sides if numbers.side(s, ECONOMY).ci_low > even]
    below = [s for s in sides if numbers.side(s, ECONOMY).ci_high < even]
    level = [s for s in sides if s not in above and s not in below]

    def listed(names: Sequence[str]) -> str:
        return join_names([f"{s} ({est(ECONOMY, numbers.side(s, ECONOMY))})" for s in names])

    parts = []
    if above:
        parts.append(f"the initiative economy favours {listed(above)}")
    if below:
        parts.append(f"{'and ' if above else 'the initiative economy '}disfavours {listed(below)}")
    text = " ".join(parts)
    if level:
        text += (
            "; " if text else ""
        ) + f"no detectable difference from an even share for {listed(level)}"
    return f"Action economy against all opponents ({parity_words(numbers)}): {text}."


def _first_sentence(numbers: Numbers) -> str:
    ests = sorted(
        ((s, numbers.side(s, "first_action")) for s in numbers.sides), key=lambda x: -x[1].mean
    )
    listed = ", ".join(
        f"{s} in {est('first_action', e)}" + (" of rounds" if k == 0 else "")
        for k, (s, e) in enumerate(ests)
    )
    shared = sum(e.mean for _, e in ests) > 1.005
    note = " (a first slot shared by both sides counts for each)" if shared else ""
    if len(ests) >= 2 and overlap(ests[0][1], ests[1][1]):
        tied = [s for s, e in ests if overlap(e, ests[0][1])]
        return (
            f"First action by any member of a side: no detectable difference between "
            f"{join_names(tied)} ({listed}){note}."
        )
    return f"First action by any member of a side: {listed}{note}."


# --------------------------------------------------------------------------- per group
def _leaders(rows: list[tuple[str, Estimate]], highest: bool = True) -> list[tuple[str, Estimate]]:
    """The best and every one whose interval overlaps the best's interval."""
    valid = [(n, e) for n, e in rows if e.mean == e.mean]
    if not valid:
        return []
    valid.sort(key=lambda r: r[1].mean, reverse=highest)
    best = valid[0][1]
    return [(n, e) for n, e in valid if overlap(e, best)]


def _who(numbers: Numbers, rows: list[tuple[str, Estimate]], metric: str, unit: str) -> str:
    """``Astrid (31.3% ± 0.6% of rounds) and Leif (30.7% ± 0.6%)``; a group of copies
    says "each, on average"."""
    parts = []
    for k, (g, e) in enumerate(rows):
        each = f" {EACH}" if len(numbers.members[g]) > 1 else ""
        parts.append(f"{numbers.label(g)} ({est(metric, e)}{unit if k == 0 else ''}{each})")
    return join_names(parts)


def group_findings(numbers: Numbers, notes: Footnotes) -> list[str]:
    """Plain sentences per group, one idea each."""
    out: list[str] = []
    groups = numbers.groups
    n = len(groups)

    def rows(metric: str) -> list[tuple[str, Estimate]]:
        return [(g, numbers.each(g, metric)) for g in groups]

    if numbers.has("first_action"):
        first = rows("first_action")
        top = _leaders(first)
        never = [g for g, e in first if e.mean == 0 and constant(e)]
        if top and len(top) < n:
            tie = ", with no detectable difference between them" if len(top) > 1 else ""
            out.append(
                f"Most often first: {_who(numbers, top, 'first_action', ' of rounds')}{tie}."
            )
        elif top:
            out.append(
                "No detectable difference in who acts first: "
                + _who(numbers, first, "first_action", " of rounds")
                + "."
            )
        if never:
            out.append(f"Never first: {join_names([numbers.label(g) for g in never])}.")
    if numbers.has("actions") and numbers.varies("actions"):
        acts = rows("actions")
        top, low = _leaders(acts), _leaders(acts, highest=False)
        if len(top) == n:
            out.append(
                "No detectable difference in actions per round: "
                + _who(numbers, acts, "actions", "")
                + "."
            )
        else:
            out.append(
                f"Most actions: {_who(numbers, top, 'actions', ' per round')}; "
                f"fewest: {_who(numbers, low, 'actions', ' per round')}."
            )
    elif numbers.has("actions"):
        acts = rows("actions")
        if len({est("actions", e) for _, e in acts}) == 1:
            out.append(f"Every combatant takes exactly {actions_text(acts[0][1])} per round.")
        else:
            out.append("Actions per round are fixed: " + _who(numbers, acts, "actions", "") + ".")
    answers = numbers.has("defended") or numbers.has("hasty_only")  # can anyone answer?
    for metric, head, unit in (
        ("attacked_before_acting", "Most often attacked before acting", " of rounds"),
        ("undefended", "Most attacks left unanswered", " per round"),
    ):
        if numbers.has(metric) and (metric != "undefended" or answers):
            top = _leaders(rows(metric))
            if top and top[0][1].ci_low > 0 and len(top) < n:
                out.append(f"{head}: {_who(numbers, top, metric, unit)}.")
    if numbers.has("hasty_share"):
        share = [(g, e) for g, e in rows("hasty_share") if e.mean == e.mean and e.mean > 0]
        top = _leaders(share)
        if top:

            def scale(g: str) -> str:
                s = numbers.each(g, "hasty_scale")
                return f"mean scale {est('hasty_scale', s)} pips" if s.mean == s.mean else ""

            hasty = notes.words(
                "hasty (R7)", "Hasty defense: a defense with a die lower than the attack's"
            )
            parts = [
                f"{numbers.label(g)} ({est('hasty_share', e)} of its defenses, {scale(g)})"
                for g, e in top
            ]
            out.append(f"Highest share of {hasty} defenses: {join_names(parts)}.")
        elif numbers.has("hasty_defenses"):
            out.append("Nobody ever defends hastily.")
    for metric, e in numbers.scenario_rows:
        label = title_of(metric)
        ids = _rule_of(registry(metric).meaning) if metric in METRICS else ""
        if ids:
            label += notes.rule(label, [ids])
        if e.mean == 0 and constant(e):
            out.append(f"{label}: never.")
        else:
            out.append(f"{label}: {est(metric, e)} of rounds.")
    return out


def _rule_of(text: str) -> str:
    """The rule IDs a registry meaning cites ("P(..., V2)" -> "V2")."""
    import re

    return ", ".join(dict.fromkeys(re.findall(r"\b[A-Z][0-9]{1,2}\b", text)))


# --------------------------------------------------------------------------- policies
COSTS = ("actions", "first_action", "expired_dice", "aborts")
BENEFITS = ("hasty_share", "hasty_only", "undefended", "defended", "attacked_before_acting")


@dataclass(frozen=True)
class Effect:
    """One paired difference, as written minus the alternative."""

    metric: str
    as_written: float
    alternative: float
    difference: float
    ci_low: float
    ci_high: float

    @property
    def half(self) -> float:
        return (self.ci_high - self.ci_low) / 2

    @property
    def detectable(self) -> bool:
        return self.ci_low > 0 or self.ci_high < 0

    @property
    def exact_zero(self) -> bool:
        """The same in every round with and without the policy."""
        return self.difference == 0 and self.half == 0

    def text(self) -> str:
        return format_difference(self.metric, self.difference, self.half)


def effect(e: PolicyEffect, level: str, name: str, metric: str) -> Effect | None:
    t = e.comparison.level_table(level)
    key = level if level in t.columns else "combatant"
    row = t[(t[key] == name) & (t.metric == metric)]
    if row.empty:
        return None
    r = row.iloc[0]
    if r.difference != r.difference:
        return None
    return Effect(
        metric,
        float(r.mean_b),
        float(r.mean_a),
        float(r.difference),
        float(r.ci_low),
        float(r.ci_high),
    )


def waiting_words(system: Any) -> tuple[str, list[str]]:
    """The system's own word for waiting ("holding", "delaying") and its rule IDs."""
    return strip_rule_ids(system.waiting_words or "waiting")


def possessive(name: str) -> str:
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def policy_phrase(e: PolicyEffect, numbers: Numbers, notes: Any) -> str:
    """``Gunnar's holding (until attacked)``, ``Leif's defend policy (hasty up to 2 rather
    than always)``."""
    c = e.change
    who = holder_label(e, numbers)
    if c.waiting:
        system = systems.get(numbers.scenario.system)
        words, ids = waiting_words(system)
        mark = notes.rule(words.capitalize(), ids) if ids else ""
        values = ", ".join(value_words(a) for _, a, _ in c.fields)
        return f"{possessive(who)} {words}{mark} ({values})"
    f, a, b = c.fields[0]
    return (
        f"{possessive(who)} {field_words(f)} policy ({value_words(a)} rather than {value_words(b)})"
    )


def holder_label(e: PolicyEffect, numbers: Numbers) -> str:
    c = e.change
    return numbers.label(c.who) if c.level == "group" else c.who


def policy_findings(e: PolicyEffect, numbers: Numbers, notes: Footnotes) -> list[str]:
    """Cost and benefit of one policy in at most three sentences: the holder's actions,
    the attacks on it answered only hastily (or left unanswered), and the side totals."""
    c = e.change
    level = c.level
    who = holder_label(e, numbers)
    phrase = policy_phrase(e, numbers, notes)
    phrase = phrase[0].upper() + phrase[1:]
    out: list[str] = []
    acts = effect(e, level, c.who, "actions")
    if acts is not None:
        if acts.exact_zero:
            out.append(f"{phrase} never changes how many actions {who} takes.")
        elif not acts.detectable:
            out.append(
                f"{phrase} makes no detectable difference to {possessive(who)} actions per "
                f"round ({acts.text()})."
            )
        else:
            verb = "costs" if acts.difference < 0 else "gains"
            amount = format_difference("actions", abs(acts.difference), acts.half).lstrip("+")
            out.append(
                f"{phrase} {verb} {who} {amount} actions per round ({_instead('actions', acts)})."
            )
        first = effect(e, level, c.who, "first_action")
        if not acts.detectable and first is not None and first.detectable:
            out.append(
                f"It changes when {who} acts: first in {_instead('first_action', first)} "
                f"of rounds ({first.text()})."
            )
    benefit = (
        "hasty_only"
        if numbers.has("hasty_only")
        else "undefended"
        if numbers.has("undefended")
        else ""
    )
    if benefit:
        b = effect(e, level, c.who, benefit)
        what = "answered only hastily" if benefit == "hasty_only" else "left unanswered"
        if b is not None and b.exact_zero:
            out.append(f"Attacks on {who} {what}: unchanged.")
        elif b is not None and b.detectable:
            verb = "fall" if b.difference < 0 else "rise"
            out.append(
                f"Attacks on {who} {what} {verb} to {_instead(benefit, b)} per round ({b.text()})."
            )
        elif b is not None:
            out.append(f"Attacks on {who} {what}: no detectable change ({b.text()} per round).")
    out += guard_gain_findings(e, numbers, notes)
    parts = []
    if numbers.has("undefended"):
        u = effect(e, "side", c.side, "undefended")
        if u is not None:
            parts.append(f"unanswered attacks on {c.side} {_change(u)}")
    a = effect(e, "side", c.side, "actions")
    if a is not None and len(numbers.side_members[c.side]) > len(c.members):
        parts.append(f"actions of {c.side} {_change(a)}")
    for other in numbers.sides:
        o = effect(e, "side", other, "actions") if other != c.side else None
        if o is not None:
            parts.append(f"actions of {other} {_change(o)}")
    if parts:
        out.append("Per round, " + ", ".join(parts) + ".")
    return out


MAX_GUARDED = 4  # allies named in a guard finding (the largest changes first)


def guard_gain_findings(e: PolicyEffect, numbers: Numbers, notes: Any) -> list[str]:
    """For a guard policy (R7/R7a): the protected allies' gain beside the guard's cost,
    i.e. the attacks on each ally it guards left unanswered and answered only hastily,
    as written instead of without the guard, with the paired interval."""
    changes = getattr(e.comparison, "guard_changes", None)
    if not changes or not numbers.has("undefended"):
        return []
    allies = list(dict.fromkeys(a for g in changes for a in g.allies))
    named = any(not (g.every_a or g.every_b) for g in changes)
    found = []
    for ally in allies:
        u = effect(e, "combatant", ally, "undefended")
        h = effect(e, "combatant", ally, "hasty_only") if numbers.has("hasty_only") else None
        if u is not None:
            found.append((abs(u.difference), ally, u, h))
    found.sort(key=lambda x: -x[0])
    rule = "R7a" if named else "R7"
    parts = []
    for _, ally, u, h in found[:MAX_GUARDED]:
        part = f"{possessive(ally)} attacks left unanswered {_change_instead('undefended', u)}"
        if h is not None:
            part += f" and answered only hastily {_change_instead('hasty_only', h)}"
        parts.append(part)
    if not parts:
        return []
    more = len(found) - MAX_GUARDED
    tail = f"; {more} more in holding.csv" if more > 0 else ""
    mark = notes.rule("Guarding named allies" if named else "Guarding", [rule])
    return [f"For the allies it guards{mark}, per round: " + "; ".join(parts) + tail + "."]


def _change_instead(metric: str, e: Effect) -> str:
    """``unchanged``, or ``0.30 instead of 0.41 (−0.11 ± 0.01)``."""
    if e.exact_zero:
        return "unchanged"
    return f"{_instead(metric, e)} ({e.text()})"


def _instead(metric: str, e: Effect) -> str:
    """``2.110 instead of 2.402``: as written, then the alternative."""
    from simkit.output.numbers import decimals

    f = 100.0 if metric in ("first_action", "hasty_share") else 1.0
    places = decimals(f * e.half)
    unit = "%" if f == 100 else ""

    def shown(v: float) -> str:
        return f"0{unit}" if v == 0 else f"{f * v:.{places}f}{unit}"

    return f"{shown(e.as_written)} instead of {shown(e.alternative)}"


def _change(e: Effect) -> str:
    if e.exact_zero:
        return "unchanged"
    if not e.detectable:
        return f"no detectable change ({e.text()})"
    return e.text()


# --------------------------------------------------------------------------- sweeps
def values_text(values: dict[str, tuple[int, int]], numbers: Numbers, offset: int) -> str:
    """``3 → 5``, or the offset and each member's values where they differ:
    ``+2 (Gunnar 4 → 6, Wolf ×3 6 → 8)``."""
    pairs: dict[tuple[int, int], list[str]] = {}
    for name, pair in values.items():
        pairs.setdefault(pair, []).append(name)
    if len(pairs) == 1:
        old, new = next(iter(pairs))
        return f"{old} → {new}"
    parts = []
    for (old, new), names in pairs.items():
        shown: list[str] = []
        for g in numbers.groups:
            members = numbers.members[g]
            if set(members) <= set(names):
                shown.append(numbers.label(g))
            else:
                shown += [n for n in members if n in names]
        parts.append(f"{join_names(shown)} {old} → {new}")
    return f"{offset:+d} ({', '.join(parts)})"


def balance_metric(results: Sequence[Any], side: str) -> str:
    """The action economy, or first action where the economy is the same at every point
    (everyone acts once a round: only the order can change)."""
    ests = [Estimate(*_side_estimate(r, side)) for r in results]
    if all(constant(e) for e in ests) and len({e.mean for e in ests}) == 1:
        return "first_action"
    return ECONOMY


def even_share(numbers: Numbers, metric: str) -> float:
    return parity(numbers) if metric == ECONOMY else 1.0 / max(len(numbers.sides), 1)


def crossing(xs: Sequence[str], ests: Sequence[Estimate], level: float, what: str = "") -> str:
    """Where a sequence of estimates meets ``level``: "at 3" (an interval covers it),
    "between 2 and 3" (the means straddle it) or ""."""
    at = [x for x, e in zip(xs, ests, strict=True) if e.mean == e.mean and e.covers(level)]
    if at:
        return f"at {what}{join_names(list(at))}"
    for (xa, a), (xb, b) in zip(
        zip(xs, ests, strict=True), list(zip(xs, ests, strict=True))[1:], strict=False
    ):
        if a.mean == a.mean and b.mean == b.mean and (a.mean - level) * (b.mean - level) < 0:
            return f"between {what}{xa} and {xb}"
    return ""


def side_sweep_findings(data: ReportData, numbers: Numbers) -> list[str]:
    """Per swept side: what its largest changes up and down do to its action economy (or
    first action, where the economy cannot change), paired with the run as written, and
    where that meets an even share."""
    out: list[str] = []
    stat = data.plan.stat
    for side, points in data.sweeps.items():
        metric = balance_metric([p.result for p in points], side)
        words = "action economy" if metric == ECONOMY else "first action"
        base = numbers.side(side, metric)
        if base.mean != base.mean:
            continue
        parts = []
        said = False  # the first change names the value as written
        for direction in (1, -1):
            candidates = [p for p in points if p.offset * direction > 0]
            if not candidates:
                parts.append(f"it cannot go {'higher' if direction > 0 else 'lower'}")
                continue
            p = max(candidates, key=lambda q: abs(q.offset))
            assert p.comparison is not None and p.result is not None
            t = p.comparison.level_table("side")
            row = t[(t.side == side) & (t.metric == metric)]
            if row.empty:
                continue
            r = row.iloc[0]
            half = (r.ci_high - r.ci_low) / 2
            new = Estimate(*_side_estimate(p.result, side, metric))
            change = values_text(p.values, numbers, p.offset)
            if r.difference == 0 and half == 0:
                parts.append(f"{change} leaves its {words} unchanged at {est(metric, base)}")
                continue
            diff = format_difference(metric, r.difference, half)
            if not said:
                parts.append(
                    f"{change} moves its {words} from {est(metric, base)} to "
                    f"{est(metric, new)} ({diff})"
                )
                said = True
            else:
                parts.append(f"{change} to {est(metric, new)} ({diff})")
        out.append(f"{stat.capitalize()} of {side}: " + "; ".join(parts) + ".")
        ordered = sorted(points, key=lambda q: q.offset)
        xs = [_stat_text(q.values) for q in ordered]
        ests = [Estimate(*_side_estimate(q.result, side, metric)) for q in ordered]
        even = even_share(numbers, metric)
        where = crossing(xs, ests, even, f"{stat} ")
        shown = f"{even:.3g}" if metric == ECONOMY else f"{100 * even:.3g}%"
        if where:
            even_words = "Parity" if metric == ECONOMY else f"An even {words}"
            out.append(f"{even_words} ({shown}) for {side} lies {where}.")
    return out


def _stat_text(values: dict[str, tuple[int, int]]) -> str:
    new = sorted({v[1] for v in values.values()})
    return "/".join(str(v) for v in new)


def _side_estimate(
    result: Any, side: str, metric: str = ECONOMY
) -> tuple[float, float, float, float]:
    for who, m, *x in result.level_rows("side"):
        if who == side and m == metric:
            return tuple(x)  # type: ignore[return-value]
    return (float("nan"),) * 4  # type: ignore[return-value]


def grid_findings(data: ReportData, numbers: Numbers) -> list[str]:
    """The designer's grid: each side's action economy from the first to the last point
    and where it meets parity (one varied field), its range (two); the target's answer."""
    from simkit.output.report_document.names import sweep_axis

    sweep = data.sweep
    assert sweep is not None
    out: list[str] = []
    even = parity(numbers)
    if data.tuning is not None:
        out.append(f"Target {data.tuning.target.text}: {data.tuning.answer}")
    per_side = {s: [Estimate(*_side_estimate(r, s)) for r in sweep.results] for s in numbers.sides}
    if len(sweep.axes) == 1:
        _, labels, title = sweep_axis(sweep, 0)
        labels = [x.replace("\n", " ") for x in labels]
        for s, ests in per_side.items():
            if all(e.mean != e.mean for e in ests):
                continue
            text = (
                f"Over {title} {labels[0]} to {labels[-1]}, {possessive(s)} action economy goes "
                f"from {est(ECONOMY, ests[0])} to {est(ECONOMY, ests[-1])}"
            )
            where = crossing(labels, ests, even, f"{title} ")
            text += (
                f"; it meets parity ({even:.3g}) {where}."
                if where
                else f"; it does not meet parity ({even:.3g})."
            )
            out.append(text)
    else:
        points = sweep.points
        for s, ests in per_side.items():
            valid = [(k, e) for k, e in enumerate(ests) if e.mean == e.mean]
            if not valid:
                continue
            lo = min(valid, key=lambda x: x[1].mean)
            hi = max(valid, key=lambda x: x[1].mean)

            def at(k: int) -> str:
                return ", ".join(f"{f} {v}" for f, v in points[k].items())

            out.append(
                f"{s}'s action economy ranges from {est(ECONOMY, lo[1])} ({at(lo[0])}) to "
                f"{est(ECONOMY, hi[1])} ({at(hi[0])})."
            )
    return out


# --------------------------------------------------------------------------- best policies
def _gain(g: Any) -> str:
    return format_gain(g.difference, g.ci_high - g.difference)


def equilibrium_sentence(search: Any) -> str:
    """Whether the policies as written are an equilibrium of single changes, for the
    verdict."""
    clear = [ch for ch in search.ranked if ch.verdict == "clear"]
    if not clear:
        return (
            "The policies as written are at equilibrium: no combatant's side gains clearly "
            "by changing one of its policies."
        )
    top = clear[0]
    value, g = top.best
    c = top.coordinate
    return (
        f"The policies as written are not at equilibrium: {len(clear)} single "
        f"{'change gains' if len(clear) == 1 else 'changes gain'} clearly for the changer's "
        f"side, the largest {possessive(c.group)} {c.field} = {value} ({_gain(g)} for {c.side})."
    )


def best_policy_findings(search: Any, most: int = 5) -> list[str]:
    """The clear gains, largest first, and what each changes for every side."""
    out = []
    clear = [ch for ch in search.ranked if ch.verdict == "clear"]
    for ch in clear[:most]:
        value, _ = ch.best
        c = ch.coordinate
        sides = ", ".join(f"{_gain(e)} for {side}" for side, e in ch.effects)
        out.append(f"{c.group}: {c.field} = {value} rather than {c.written}: {sides}.")
    if len(clear) > most:
        out.append(f"{len(clear) - most} more clear gains are in the table.")
    if not clear:
        out.append(
            "No single policy change gains clearly for any side: the policies as written "
            "are the best responses to each other."
        )
    return out
