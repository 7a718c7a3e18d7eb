"""Fields and rules of the readiness system (names exactly as RULES.md)."""

from __future__ import annotations

from simkit.systems.base import Field

HASTY_UP_TO_PATTERN = r"hasty_up_to:(\d{1,6})"
DEFEND_CHOICES = ("always", "never", "unless_hasty")
HOLD_CHOICES = ("never", "until_attacked", "until_enemy_acts")

FIELDS: dict[str, Field] = {
    "readiness": Field(int, low=1, high=20, meaning="R1: d6 rolled each round"),
    "advantage": Field(int, 0, 0, 120, meaning="R2: preparation margin"),
    "role": Field(
        str, "hero", choices=("hero", "secondary"), meaning="R8: size of a stalemate wound"
    ),
    "weakness": Field(int, 1, 0, 20, meaning="R8: a hero's stalemate wound (heroes only)"),
    "hold": Field(str, "never", choices=HOLD_CHOICES, meaning="R5"),
    "defend": Field(
        str,
        "always",
        choices=DEFEND_CHOICES,
        pattern=HASTY_UP_TO_PATTERN,
        pattern_low=0,
        pattern_high=999,
        allowed='"always", "never", "unless_hasty" or "hasty_up_to:N" (N an integer 0..999)',
        meaning="R7: when it defends itself",
    ),
    "guard": Field(bool, False, meaning="R7.2: defends allies whose own die is too low"),
}

RULES: dict[str, Field] = {
    "order": Field(str, "dynamic", choices=("dynamic", "chain"), meaning="R3"),
    "prep": Field(str, "sixes", choices=("sixes", "lowest"), meaning="R2"),
}
