"""What a field of one initiative system means in another: the data of ``simkit convert``.

Only data lives here (the conversion itself is :mod:`simkit.scenario.convert`, which
names no system); the reasons for every entry are in docs/rules-decisions.md, "One
fight in three systems".

``STAT_SCALE``
    The main stat (``System.main_field``) of each system on one common scale: a value
    ``s`` of system X plays like ``s + STAT_SCALE[X] - STAT_SCALE[Y]`` in system Y.  vtm
    and perception both roll d10 + stat with ties to the higher stat (V1-V2, P1), so
    their stats are the same number.  A readiness pool of n d6 (R1) plays like a d10
    stat of n + 2: over the pools 2..6 one more die moves P(first turn) of a duel by
    about what +1 to a d10 stat does (64% against 58-66%), and a player character's 3
    dice become the rating 5 of a typical character (Dexterity 2 + Wits 3).
``STAT_PARTS``
    Fields that make up a system's main stat (vtm's rating = dexterity + wits): read
    through the main stat, never converted on their own.
``POLICY_COUNTERPARTS``
    Policies that mean the same in several systems: ``(meaning, {system: (field,
    value)})``.  ``IMPLICIT`` marks a system that always behaves this way and so has
    nothing to write (perception has no waiting and no defenses, P4; vtm has no
    guards, V5).  A policy value found in no entry, or in an entry without the target
    system, has no counterpart there.
``RULE_COUNTERPARTS``
    Rules of the same name and values in several systems.
"""

from __future__ import annotations

from typing import Any

IMPLICIT: Any = "implicit"

STAT_SCALE: dict[str, int] = {"readiness": 2, "vtm": 0, "perception": 0}

STAT_PARTS: dict[str, tuple[str, ...]] = {"vtm": ("dexterity", "wits")}

POLICY_COUNTERPARTS: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "acts on its turn, never waits (R5, V4, P4)",
        {"readiness": ("hold", "never"), "vtm": ("delay", "never"), "perception": IMPLICIT},
    ),
    (
        "waits until an opponent has acted, then acts at once (R5, V4)",
        {"readiness": ("hold", "until_enemy_acts"), "vtm": ("delay", "until_enemy_acts")},
    ),
    (
        "answers every attack on itself, at the cost of an action still to come (R7, V5)",
        {"readiness": ("defend", "always"), "vtm": ("abort", "always")},
    ),
    (
        "never answers an attack (R7, V5, P4)",
        {"readiness": ("defend", "never"), "vtm": ("abort", "never"), "perception": IMPLICIT},
    ),
    (
        "never answers an attack on an ally (R7; V5 and P4 have no guards)",
        {"readiness": ("guard", "never"), "vtm": IMPLICIT, "perception": IMPLICIT},
    ),
)

RULE_COUNTERPARTS: tuple[dict[str, str], ...] = ({"vtm": "tie", "perception": "tie"},)
