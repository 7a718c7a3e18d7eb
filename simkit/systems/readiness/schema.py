"""Fields and rules of the readiness system, rules revision 3 (names exactly as in docs/rules.md).

The choice tuples here are the only spelling of each policy and rule value: the
kernel's named codes (``kernel.HOLD_CODES`` ...) are built from them with
``base.codes``, so a value the schema accepts always has a code, and an unknown
value is an error (``base.code_of``), never a silent default.
"""

from __future__ import annotations

from simkit.systems.base import Field

ROLES = ("hero", "secondary")
HOLDS = ("never", "until_attacked", "until_enemy_acts")
DEFENDS = ("always", "never", "unless_hasty")  # and "hasty_up_to:N" (HASTY_UP_TO_PATTERN)
HASTY_UP_TO = "hasty_up_to"
HASTY_UP_TO_PATTERN = r"hasty_up_to:(\d{1,6})(?:\+when_effective)?"
HASTY_UP_TO_MAX = 999
GUARDS = ("never", "backup", "always")
# R7 [rev 3]: a policy that answers only an attack that would take effect (hit_chance):
# "when_effective" alone (defend: "always" that looks first), or the modifier
# "+when_effective" after a policy that answers ("unless_hasty+when_effective",
# "hasty_up_to:2+when_effective", guard "backup+when_effective"; a named guard's
# guard_mode "always+when_effective").  ``when_effective`` is the one parser of the form
# (the kernel, the twin and any other policy field read it through this function).
WHEN_EFFECTIVE = "when_effective"
WHEN_EFFECTIVE_SUFFIX = "+" + WHEN_EFFECTIVE
ORDERS = ("dynamic", "chain", "chain_unbroken")
PREPS = ("one_die", "sixes", "lowest")
HOLDER_ACTIONS = ("held_dice", "release_only")
RELEASES = ("higher", "any")


def when_effective(value: str, alone: str = "always") -> tuple[str, bool]:
    """A policy value as (the policy it modifies, whether it answers only an attack that
    would take effect): ``"backup+when_effective"`` -> ``("backup", True)``, ``"backup"``
    -> ``("backup", False)``, ``"when_effective"`` alone -> ``(alone, True)``."""
    if value == WHEN_EFFECTIVE:
        return alone, True
    if value.endswith(WHEN_EFFECTIVE_SUFFIX):
        return value[: -len(WHEN_EFFECTIVE_SUFFIX)], True
    return value, False


def with_when_effective(policies: tuple[str, ...]) -> tuple[str, ...]:
    """``policies`` and each of them with the modifier (every one but "never", which
    answers nothing): the choices of a policy field that takes the form."""
    return policies + tuple(p + WHEN_EFFECTIVE_SUFFIX for p in policies if p != "never")


DEFEND_CHOICES = (*with_when_effective(DEFENDS), WHEN_EFFECTIVE)
GUARD_CHOICES = with_when_effective(GUARDS)
# R7a: guard_mode of a guard that lists the allies it protects
GUARD_MODES = with_when_effective(("backup", "always"))
MAX_HIT_CHANCE = 1.0

MAX_READINESS = 20  # a pool's count of one face must fit a byte field (kernel)
MAX_ADVANTAGE = 120
MAX_WEAKNESS = 20

FIELDS: dict[str, Field] = {
    "readiness": Field(
        int,
        low=1,
        high=MAX_READINESS,
        meaning="R1: initiative d6 rolled every round (player characters have 3)",
    ),
    "advantage": Field(
        int,
        0,
        0,
        MAX_ADVANTAGE,
        meaning="R2: preparation margin, pips added to its dice before the round (rules.prep)",
    ),
    "role": Field(
        str,
        "hero",
        choices=ROLES,
        meaning="R8: a hero's stalemate wound is its weakness, a \"secondary\" one's is 3",
    ),
    "weakness": Field(
        int,
        1,
        0,
        MAX_WEAKNESS,
        meaning="R8: size of a hero's mental wound when a stalemate puts it on edge (heroes only)",
    ),
    "surprised": Field(
        bool,
        False,
        meaning="R7: it does not understand what is happening and makes no responses (still acts)",
    ),
    "opening": Field(
        bool,
        False,
        meaning="R8a: its advantage and surprised apply to the first round of each fight only "
        "(needs [scenario] fight_rounds)",
    ),
    "hold": Field(
        str,
        "never",
        choices=HOLDS,
        meaning="R5: when it holds its dice instead of acting on its first turn",
    ),
    "defend": Field(
        str,
        "always",
        choices=DEFEND_CHOICES,
        pattern=HASTY_UP_TO_PATTERN,
        pattern_low=0,
        pattern_high=HASTY_UP_TO_MAX,
        allowed=(
            f'"always", "never", "unless_hasty" or "hasty_up_to:N" (N an integer 0..'
            f'{HASTY_UP_TO_MAX}), each but "never" also with "+when_effective"; or '
            '"when_effective"'
        ),
        meaning="R7: when it answers an attack on itself (hastily only if this allows the scale; "
        '"+when_effective": only an attack that would take effect, rev 3)',
    ),
    "guard": Field(
        str,
        "never",
        choices=GUARD_CHOICES,
        aliases={True: "backup", False: "never"},
        allowed='"never", "backup" or "always" (true means "backup", false "never"); '
        '"backup+when_effective" or "always+when_effective"; or a list of the allies it '
        'protects (names or count group names, e.g. ["Mira"])',
        meaning="R7: when it answers an attack on an ally (backup: only if the ally cannot; "
        '"+when_effective": only an attack that would take effect, rev 3); R7a: a list '
        "protects only those allies, as guard_mode says",
        names=True,
    ),
    "guard_mode": Field(
        str,
        "backup",
        choices=GUARD_MODES,
        meaning='R7a: with guard = [names], "backup" or "always" restricted to those allies, '
        'also with "+when_effective" (only with a list)',
    ),
    "hit_chance": Field(
        float,
        1.0,
        0.0,
        MAX_HIT_CHANCE,
        meaning="R7 [rev 3]: probability that one of its attacks would take effect if nobody "
        "answered it (drawn per attack only when below 1)",
    ),
}

RULES: dict[str, Field] = {
    "order": Field(
        str,
        "dynamic",
        choices=ORDERS,
        meaning='R3: who acts next is chosen before every turn; "chain" spends all dice of a value '
        'until someone responds (rev 3), "chain_unbroken" all of them (rev 2)',
    ),
    "prep": Field(
        str,
        "one_die",
        choices=PREPS,
        meaning='R2: advantage raises one die ("one_die"), or each pip goes to the highest die '
        'below 6 ("sixes") or to the lowest die ("lowest")',
    ),
    "holder_actions": Field(
        str,
        "held_dice",
        choices=HOLDER_ACTIONS,
        meaning="R5: which of a former holder's actions are a holder's action (never answered "
        'hastily); "release_only": only the one declared on release',
    ),
    "release": Field(
        str,
        "higher",
        choices=RELEASES,
        meaning="R5: a released until_enemy_acts holder jumps in only with a die above the next "
        'turn\'s initiative ("higher", rev 3), else it rejoins R3; "any": always (rev 2)',
    ),
}
