"""Fields and rules of the vtm system (names exactly as RULES.md)."""

from __future__ import annotations

from simkit.systems.base import Field

FIELDS: dict[str, Field] = {
    "dexterity": Field(int, low=0, high=20, meaning="V1: part of the rating"),
    "wits": Field(int, low=0, high=20, meaning="V1: part of the rating"),
    "rating": Field(int, low=0, high=40, meaning="V1: dexterity + wits"),
    "wound_penalty": Field(int, 0, 0, 20, meaning="V7: taken from initiative"),
    "extra_actions": Field(int, 0, 0, 10, meaning="V6: actions of a discipline (Celerity)"),
    "actions": Field(int, 1, 1, 10, meaning="V6: actions declared in the initiative phase"),
    "delay": Field(str, "never", choices=("never", "until_enemy_acts"), meaning="V4"),
    "abort": Field(str, "never", choices=("never", "always"), meaning="V5"),
}

RULES: dict[str, Field] = {
    "tie": Field(str, "simultaneous", choices=("simultaneous", "random"), meaning="V2"),
}
