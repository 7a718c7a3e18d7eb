"""Build scenarios in tests without a TOML file.

``make_scenario(system, combatants, rules=None)`` returns a ``simkit.scenario.Scenario``
with every field of the rules' revision 2 (docs/rules.md) filled in with its default.
It builds the object directly, without validation (the twins' tests need nothing else
of simkit); for a valid scenario the result is the one an equivalent TOML file loads to.
"""

from __future__ import annotations

from typing import Any

from simkit.scenario import Combatant, Params, Scenario

COMMON = {"target": "random", "attack_share": 1.0}
FIELDS: dict[str, dict[str, Any]] = {
    "readiness": {
        "readiness": None,
        "advantage": 0,
        "role": "hero",
        "weakness": 1,
        "surprised": False,
        "opening": False,
        "hold": "never",
        "defend": "always",
        "guard": "never",
        "hit_chance": 1.0,
        "guard_mode": "backup",
    },
    "vtm": {
        "dexterity": None,
        "wits": None,
        "rating": None,
        "wound_penalty": 0,
        "extra_actions": 0,
        "actions": 1,
        "delay": "never",
        "abort": "never",
    },
    "perception": {"perception": None, "commander": False},
}
RULES: dict[str, dict[str, Any]] = {
    "readiness": {
        "order": "dynamic",
        "prep": "one_die",
        "holder_actions": "held_dice",
        "release": "higher",
    },
    "vtm": {"tie": "simultaneous", "multi": "end", "slot_abort": "allowed"},
    "perception": {
        "mode": "individual",
        "tie": "random",
        "group_stat": "commander",
        "within_side": "random",
        "information": "strict",
    },
}


def make_scenario(
    system: str,
    combatants: list[dict[str, Any]],
    rules: dict[str, Any] | None = None,
    name: str = "test",
) -> Scenario:
    """A scenario of ``system``; each combatant dict needs ``name``, ``side`` and the
    system's main field (``readiness``, ``rating`` or ``perception``); ``count`` expands."""
    expanded = []
    for entry in combatants:
        entry = dict(entry)
        base, side = entry.pop("name"), entry.pop("side")
        count = entry.pop("count", 1)
        params = {**FIELDS[system], **COMMON}
        unknown = set(entry) - set(params)
        assert not unknown, f"unknown fields {unknown}"
        params.update(entry)
        if system == "vtm" and params["rating"] is None:
            params["rating"] = params["dexterity"] + params["wits"]
        if system == "readiness" and params["guard"] is True:
            params["guard"] = "backup"
        if system == "readiness" and params["guard"] is False:
            params["guard"] = "never"
        if system == "readiness" and isinstance(params["guard"], list):
            params["guard"] = tuple(params["guard"])  # R7a: names, as validation keeps them
        params["attack_share"] = float(params["attack_share"])
        names = [base] if count == 1 else [f"{base} {k}" for k in range(1, count + 1)]
        for member in names:
            expanded.append(Combatant(member, side, base, Params(params)))
    return Scenario(
        name=name,
        system=system,
        rounds=1000,
        seed=0,
        rules=Params({**RULES[system], **(rules or {})}),
        combatants=tuple(expanded),
        source=f"<{name}>",
    )
