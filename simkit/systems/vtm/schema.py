"""Fields and rules of the vtm system (names exactly as in docs/rules.md, revision 3)."""

from __future__ import annotations

from simkit.systems.base import Field

DELAYS = ("never", "until_enemy_acts")
ABORTS = ("never", "always", "before_acting")
TIES = ("simultaneous", "random")
MULTIS = ("end", "in_turn")
SLOT_ABORTS = ("allowed", "never")

FIELDS: dict[str, Field] = {
    "dexterity": Field(
        int, low=0, high=20, meaning="V1: part of the rating (rating = dexterity + wits)"
    ),
    "wits": Field(
        int, low=0, high=20, meaning="V1: part of the rating (rating = dexterity + wits)"
    ),
    "rating": Field(
        int,
        low=0,
        high=40,
        meaning="V1: dexterity + wits, added to the d10; V2: the higher rating wins a tie",
    ),
    "wound_penalty": Field(
        int, 0, 0, 20, meaning="V7: taken from initiative in the same round (not from the rating)"
    ),
    "extra_actions": Field(
        int,
        0,
        0,
        10,
        meaning="V6: actions of a discipline such as Celerity, all at the end of the round",
    ),
    "actions": Field(
        int,
        1,
        1,
        10,
        meaning="V6: actions declared in the initiative phase; the first at its turn, the "
        'others at the end of the round (multi = "end") or in a row at its turn ("in_turn")',
    ),
    "delay": Field(
        str,
        "never",
        choices=DELAYS,
        meaning='V4: "until_enemy_acts" lets its turn pass until an opponent has acted',
    ),
    "abort": Field(
        str,
        "never",
        choices=ABORTS,
        meaning='V5: "always" gives up its next action still to come to defend an attack; '
        '"before_acting" (revision 1) only an action of its turn, before it has acted',
    ),
}

RULES: dict[str, Field] = {
    "tie": Field(
        str,
        "simultaneous",
        choices=TIES,
        meaning="V2: equal initiative and rating share a time slot, or get a fair random order",
    ),
    "multi": Field(
        str,
        "end",
        choices=MULTIS,
        meaning='V6: "end": every action after the first at the end of the round; "in_turn" '
        "(revision 1): declared actions in a row at its turn, extra actions at the end",
    ),
    "slot_abort": Field(
        str,
        "allowed",
        choices=SLOT_ABORTS,
        meaning='V5 [rev 3]: "allowed": a slot-mate whose action of the moment is not yet '
        'resolved may abort it to defend an attack of that moment; "never" (revision 2): '
        "an attack in a shared moment is simultaneous and triggers no abort",
    ),
}
