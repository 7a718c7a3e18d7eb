"""R7a: the allies a guard protects (docs/rules.md), from its ``guard`` field.

``guard`` is ``"never"``, ``"backup"`` or ``"always"`` (R7: every ally), or a tuple of
names (R7a: ``guard = ["Mira"]``): each the name of an ally or the base name of a
``count`` group of allies; ``guard_mode`` (``"backup"`` or ``"always"``) then says how it
answers for them.  Its own count group names the other copies of its entry (they guard
each other); its own name, an opponent or an unknown name is an error
(docs/rules-decisions.md, R7a).
"""

from __future__ import annotations

from typing import Any

from simkit.systems.base import Problem

MODE_FIELD = "guard_mode"


def is_named(guard: Any) -> bool:
    """True for a guard that lists the allies it protects (R7a)."""
    return isinstance(guard, tuple)


def mode(params: Any) -> str:
    """What it does for the allies it protects: ``"never"``, ``"backup"`` or ``"always"``."""
    guard = params["guard"]
    return params[MODE_FIELD] if is_named(guard) else guard


def protected(scenario: Any, i: int) -> tuple[int, ...] | None:
    """The allies combatant ``i`` protects, in scenario order; None for every ally (a guard
    that lists no names).  Assumes a validated scenario."""
    guard = scenario.combatants[i]["guard"]
    if not is_named(guard):
        return None
    me = scenario.combatants[i]
    chosen: set[int] = set()
    for name in guard:
        named = [j for j, c in enumerate(scenario.combatants) if c.name == name]
        chosen.update(named or [j for j, c in enumerate(scenario.combatants) if c.group == name])
    return tuple(j for j in sorted(chosen) if j != i and scenario.combatants[j].side == me.side)


def guard_problems(scenario: Any) -> list[Problem]:
    """Every named guard's list checked against the scenario: one problem per entry,
    naming the field and, for an unknown name, the closest ally."""
    from difflib import get_close_matches

    problems: list[Problem] = []
    reported: set[int] = set()
    names = set(scenario.names)
    groups = set(scenario.groups)
    for c in scenario.combatants:
        guard = c["guard"]
        if not is_named(guard) or c.entry in reported:
            continue
        own_entry = {d.name for d in scenario.combatants if d.entry == c.entry and d.entry >= 0}
        own_entry.add(c.name)
        allies = [
            d.name for d in scenario.combatants if d.side == c.side and d.name not in own_entry
        ]
        ally_groups = sorted(
            {d.group for d in scenario.combatants if d.side == c.side and d.group != d.name}
        )
        known = allies + [g for g in ally_groups if g not in allies]
        listed = ", ".join(repr(k) for k in known[:20]) + (", ..." if len(known) > 20 else "")
        allowed = f"allies of {c.name}: {listed}" if known else f"{c.name} has no allies"
        for name in guard:
            message = None
            if name in own_entry:
                message = (
                    f"{name!r} is {'itself' if name == c.name else 'one of its own copies'}: "
                    "R7 already lets a combatant answer attacks on itself; list the allies "
                    f"it guards ({allowed})"
                )
            elif name in names or name in groups:
                members = [d for d in scenario.combatants if d.name == name] or [
                    d for d in scenario.combatants if d.group == name
                ]
                if members[0].side != c.side:
                    message = (
                        f"{name!r} is not an ally of {c.name} (it is on side "
                        f"{members[0].side!r}); a guard protects allies only ({allowed})"
                    )
            else:
                close = get_close_matches(name, known, 1, 0.6) if len(known) < 2000 else []
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                message = f"{name!r} is not a combatant or group{hint}; {allowed}"
            if message:
                reported.add(c.entry)
                problems.append(Problem(f"{c.path}.guard", message))
                break
    return problems
