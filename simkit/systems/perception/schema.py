"""Fields and rules of the perception system (names exactly as in docs/rules.md, revision 2),
and the named codes the kernel uses for every rule value."""

from __future__ import annotations

from simkit.systems.base import TIE_CODES, Field, codes

MAX_PERCEPTION = 30

FIELDS: dict[str, Field] = {
    "perception": Field(
        int,
        low=0,
        high=MAX_PERCEPTION,
        meaning="P1: added to its d10 for its initiative; P2: its side's group stat",
    ),
    "commander": Field(
        bool,
        False,
        meaning='P2: with group_stat = "commander" its perception is its side\'s '
        "(at most one per side)",
    ),
}

MODES = ("individual", "group")
TIES = tuple(TIE_CODES)  # base.TIE_CODES: one meaning of a tie code in every system
GROUP_STATS = ("commander", "highest")
WITHIN_SIDES = ("random", "listed")
INFORMATIONS = ("strict", "order")

RULES: dict[str, Field] = {
    "mode": Field(
        str,
        "individual",
        choices=MODES,
        meaning="P1 individual: each combatant rolls d10 + perception; "
        "P2 group: one d10 per side plus group_stat",
    ),
    "tie": Field(
        str,
        "random",
        choices=TIES,
        meaning="P1: equal initiative and perception: a fair random order, "
        "or one shared slot (simultaneous)",
    ),
    "group_stat": Field(
        str,
        "commander",
        choices=GROUP_STATS,
        meaning="P2: a side adds its commander's perception, or its highest perception",
    ),
    "within_side": Field(
        str,
        "random",
        choices=WITHIN_SIDES,
        meaning="P2: a side's members act in a fresh random order each round, "
        "or in scenario order (listed)",
    ),
    "information": Field(
        str,
        "strict",
        choices=INFORMATIONS,
        meaning="P3: a combatant learns the first actions of those with a strictly lower "
        "total (strict, rev 2), or of those acting later (order, rev 1)",
    ),
}

# Named codes of the rule values (``base.code_of`` turns a value into its code and
# rejects an unknown one).
MODE_CODES = codes(MODES)
MODE_INDIVIDUAL, MODE_GROUP = MODE_CODES["individual"], MODE_CODES["group"]
TIE_RANDOM, TIE_SIMULTANEOUS = TIE_CODES["random"], TIE_CODES["simultaneous"]
GROUP_STAT_CODES = codes(GROUP_STATS)
GROUP_STAT_COMMANDER, GROUP_STAT_HIGHEST = (
    GROUP_STAT_CODES["commander"],
    GROUP_STAT_CODES["highest"],
)
WITHIN_CODES = codes(WITHIN_SIDES)
WITHIN_RANDOM, WITHIN_LISTED = WITHIN_CODES["random"], WITHIN_CODES["listed"]
INFORMATION_CODES = codes(INFORMATIONS)
INFORMATION_STRICT, INFORMATION_ORDER = INFORMATION_CODES["strict"], INFORMATION_CODES["order"]
