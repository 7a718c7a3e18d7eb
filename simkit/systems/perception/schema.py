"""Fields and rules of the perception system (names exactly as RULES.md)."""

from __future__ import annotations

from simkit.systems.base import Field

FIELDS: dict[str, Field] = {
    "perception": Field(int, low=0, high=30, meaning="P1: added to the d10"),
    "commander": Field(bool, False, meaning="P2: its perception is the side's (group mode)"),
}

RULES: dict[str, Field] = {
    "mode": Field(str, "individual", choices=("individual", "group"), meaning="P1/P2"),
    "tie": Field(str, "random", choices=("random", "simultaneous"), meaning="P1"),
    "group_stat": Field(str, "commander", choices=("commander", "highest"), meaning="P2"),
    "within_side": Field(str, "random", choices=("random", "listed"), meaning="P2"),
}
