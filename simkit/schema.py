"""Field and rule schemas of the three initiative systems (names exactly as RULES.md).

Each entry says the type, the default (``REQUIRED`` if none) and what is allowed.
``scenario.py`` validates against these tables; the system modules read the
validated values.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()

HASTY_UP_TO = re.compile(r"^hasty_up_to:(\d+)$")


@dataclass(frozen=True)
class Field:
    """One scenario field: its type, default and allowed values."""

    kind: type
    default: Any = REQUIRED
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] | None = None
    check: Callable[[Any], bool] | None = None
    allowed: str | None = None

    def describe(self) -> str:
        """What is allowed, in words."""
        if self.allowed:
            return self.allowed
        if self.choices:
            return "one of " + ", ".join(f'"{c}"' for c in self.choices)
        name = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}[
            self.kind
        ]
        if self.low is not None and self.high is not None:
            return f"{name} from {_num(self.low)} to {_num(self.high)}"
        if self.low is not None:
            return f"{name} >= {_num(self.low)}"
        return name


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _defend_ok(value: str) -> bool:
    return value in ("always", "never", "unless_hasty") or HASTY_UP_TO.match(value) is not None


MAX_COUNT = 100
MAX_COMBATANTS = 200

# Fields every system has (RULES.md, common model).
COMMON_FIELDS: dict[str, Field] = {
    "name": Field(str),
    "side": Field(str),
    "count": Field(int, 1, 1, MAX_COUNT),
    "target": Field(
        str,
        "random",
        allowed='"random", the name of one opponent, or the base name of a count group',
    ),
    "attack_share": Field(float, 1.0, 0.0, 1.0),
}

SYSTEM_FIELDS: dict[str, dict[str, Field]] = {
    "readiness": {
        "readiness": Field(int, REQUIRED, 1, 20),
        "advantage": Field(int, 0, 0, 120),
        "role": Field(str, "hero", choices=("hero", "secondary")),
        "weakness": Field(int, 1, 0, 20),
        "hold": Field(str, "never", choices=("never", "until_attacked", "until_enemy_acts")),
        "defend": Field(
            str,
            "always",
            check=_defend_ok,
            allowed='"always", "never", "unless_hasty" or "hasty_up_to:N" (N an integer >= 0)',
        ),
        "guard": Field(bool, False),
    },
    "vtm": {
        "dexterity": Field(int, REQUIRED, 0, 20),
        "wits": Field(int, REQUIRED, 0, 20),
        "rating": Field(int, REQUIRED, 0, 40),
        "wound_penalty": Field(int, 0, 0, 20),
        "extra_actions": Field(int, 0, 0, 10),
        "actions": Field(int, 1, 1, 10),
        "delay": Field(str, "never", choices=("never", "until_enemy_acts")),
        "abort": Field(str, "never", choices=("never", "always")),
    },
    "perception": {
        "perception": Field(int, REQUIRED, 0, 30),
        "commander": Field(bool, False),
    },
}

SYSTEM_RULES: dict[str, dict[str, Field]] = {
    "readiness": {
        "order": Field(str, "dynamic", choices=("dynamic", "chain")),
        "prep": Field(str, "sixes", choices=("sixes", "lowest")),
    },
    "vtm": {
        "tie": Field(str, "simultaneous", choices=("simultaneous", "random")),
    },
    "perception": {
        "mode": Field(str, "individual", choices=("individual", "group")),
        "tie": Field(str, "random", choices=("random", "simultaneous")),
        "group_stat": Field(str, "commander", choices=("commander", "highest")),
        "within_side": Field(str, "random", choices=("random", "listed")),
    },
}

SYSTEMS: tuple[str, ...] = tuple(SYSTEM_FIELDS)

SCENARIO_FIELDS: dict[str, Field] = {
    "name": Field(str),
    "system": Field(str, REQUIRED, choices=SYSTEMS),
    "rounds": Field(int, 1_000_000, 1, 10**12),
    "seed": Field(int, 0, 0, 2**63 - 1),
    "description": Field(str, ""),
}
