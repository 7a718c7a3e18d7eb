"""A report's round-by-round part, for a scenario in fights of several rounds (R8a):
the key metrics of every side against the round index of a fight, and the sentences on
what the opening buys in round 1 and what is left of it in rounds 2 .. K.

Differences between round indices are read as the rest of the report reads unpaired
numbers: only where two 95% intervals do not overlap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from simkit import systems
from simkit.metrics import Z95, Estimate
from simkit.output import plots
from simkit.output.numbers import format_difference
from simkit.output.report_document.findings import est, overlap
from simkit.output.report_document.names import axis_label, title_of

if TYPE_CHECKING:
    from simkit.output.report_document.figures import Plot

KEY_METRICS = ("first_action", "actions", "attacked_before_acting", "hasty_defenses")
STYLES = ("-", (0, (5, 2)), (0, (1, 1.5)), (0, (6, 2, 1, 2)))


def _per_round(result: Any) -> dict[tuple[str, str, str], Estimate]:
    """(round, side, metric) -> estimate, rounds "1" .. "K" and "fight"."""
    return {(r, who, m): Estimate(*x) for r, who, m, *x in result.fights.rows("side")}


def _metrics(result: Any, table: dict[tuple[str, str, str], Estimate]) -> list[str]:
    """The key metrics this scenario has that are not the same in every round index."""
    sides = result.scenario.sides
    k = result.fights.fight_rounds
    out = []
    for m in KEY_METRICS:
        values = [table.get((str(j), s, m)) for j in range(1, k + 1) for s in sides]
        if all(v is not None for v in values) and any(v.se > 0 for v in values):
            out.append(m)
    return out


def opening_words(scenario: Any) -> str:
    """What the opening round has that the others do not, in fields: "Bandit's advantage
    2" (the differences between the scenario and ``System.after_opening``)."""
    after = systems.get(scenario.system).after_opening(scenario)
    if after is None:
        return ""
    seen: dict[str, str] = {}
    for c, d in zip(scenario.combatants, after.combatants, strict=True):
        changed = [_value(f, v) for f, v in c.params.items() if d.params[f] != v]
        if changed and c.group not in seen:
            seen[c.group] = f"{c.group}'s {' and '.join(changed)}"
    return "; ".join(seen.values())


def _value(field: str, v: Any) -> str:
    """``advantage 2``; a flag by its name alone (``surprised``)."""
    if isinstance(v, bool):
        return field if v else f"not {field}"
    return f"{field} {v}"


def fight_findings(result: Any, notes: Any) -> list[str]:
    """What the opening buys in round 1, and what is left of it in rounds 2 .. K (rule IDs
    as ``notes``' footnote marks)."""
    if getattr(result, "fights", None) is None:
        return []
    opening_mark = notes.rule("The opening of a fight", ["R8a"])
    stalemate_mark = notes.rule("Stalemate", ["R8"])
    table = _per_round(result)
    k = result.fights.fight_rounds
    sides = result.scenario.sides
    metrics = _metrics(result, table)
    opening = opening_words(result.scenario)
    head = (
        f"A fight is {k} round{'s' if k != 1 else ''}, and only its first round (the "
        f"opening{opening_mark}) has {opening}"
        if opening
        else f"A fight is {k} round{'s' if k != 1 else ''}; every round of it plays alike"
    )
    if k == 1 or not metrics:
        return [head + "."]
    bought = []
    for m in metrics:
        for s in sides:
            one, two = table[("1", s, m)], table[("2", s, m)]
            if not overlap(one, two):
                half = Z95 * (one.se**2 + two.se**2) ** 0.5  # unpaired: conservative
                diff = format_difference(m, one.mean - two.mean, half)
                bought.append(
                    f"{title_of(m).lower()} of {s} {est(m, one)} in round 1 against "
                    f"{est(m, two)} in round 2 ({diff})"
                )
    out = [
        head
        + (
            ". What round 1 buys: " + "; ".join(bought[:4]) + "."
            if bought
            else ". Round 1 and round 2 agree within their intervals in "
            + ", ".join(title_of(m).lower() for m in metrics)
            + "."
        )
    ]
    if k >= 3:
        left = [
            f"{title_of(m).lower()} of {s}"
            for s in sides
            for m in metrics
            if not all(overlap(table[("2", s, m)], table[(str(j), s, m)]) for j in range(3, k + 1))
        ]
        out.append(
            f"What is left of it in rounds 2–{k}: "
            + (
                "nothing detectable; rounds 2 to "
                f"{k} agree within their intervals in every key metric (only a "
                f"stalemate{stalemate_mark} carries from one round to the next)."
                if not left
                else "rounds 2 to " + f"{k} still differ in " + ", ".join(left[:4]) + "."
            )
        )
    else:
        out.append(
            "What is left of it in round 2: round 2 plays without it, and only a "
            f"stalemate{stalemate_mark} in round 1 carries into it."
        )
    return out


def fight_plot(result: Any, colours: Any) -> Plot | None:
    """The key metrics of every side against the round index of a fight (95% bands)."""
    from simkit.output.report_document.figures import Plot

    if getattr(result, "fights", None) is None or result.fights.fight_rounds < 2:
        return None
    table = _per_round(result)
    metrics = _metrics(result, table)
    if not metrics:
        return None
    k = result.fights.fight_rounds
    sides = list(result.scenario.sides)
    xs = [float(j) for j in range(1, k + 1)]
    panels = [
        {
            "xs": xs,
            "xlabels": [str(j) for j in range(1, k + 1)],
            "xtitle": "round of the fight (1: the opening)",
            "metric": m,
            "series": [
                (
                    s,
                    colours.side[s],
                    [table[(str(j), s, m)] for j in range(1, k + 1)],
                    STYLES[n % len(STYLES)],
                )
                for n, s in enumerate(sides)
            ],
            "title": title_of(m),
            "ylabel": axis_label(m),
        }
        for m in metrics
    ]
    legend = plots.side_handles(sides, colours.side, STYLES)
    return Plot(
        "rounds.png",
        "Round by round: the opening and after",
        f"Per side, in round 1 to {k} of a fight ({result.fights.fights:,} fights, the "
        "independent units): " + "; ".join(title_of(m).lower() for m in metrics) + ". Bands: "
        "95% confidence intervals.",
        plots.figure_png(plots.line_panels(panels, legend=legend, ncols=2)),
        "rounds",
    )
