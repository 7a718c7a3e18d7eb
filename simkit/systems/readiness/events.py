"""Readiness trace events, decoded: the tuple the twin logs, a line of text, a JSON object.

An event is an int64 row of ``base.EVENT_COLUMNS`` (round, kind, actor, other, a, b,
c, d) written by ``rules.py`` as it plays; ``codes.EVENT_FIELDS`` names what each
kind keeps in actor, other, a, b, c.  The tuples are exactly those of the twin's log
(tests/twins/readiness.py, module docstring): ``(kind, rule ID, *fields)``, names for
combatants, dice high to low unless in the order drawn (roll).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from simkit.systems.readiness.codes import (
    EVENT_FIELDS,
    EVENT_KINDS,
    EVENT_RULES,
    FACE_BITS,
    RELEASE_WHYS,
    RESPONSE_KINDS,
    SIDES,
)

_FIELD = 8
NAMED_GUARD_RULE = "R7a"  # a response of a guard that protects the allies it names


def pool_dice(pool: int) -> tuple[int, ...]:
    """A kernel pool as its dice, high to low."""
    out: list[int] = []
    for f in range(int(SIDES), 0, -1):
        out += [f] * ((int(pool) >> (_FIELD * (f - 1))) & 0xFF)
    return tuple(out)


def roll_faces(faces: int, count: int) -> tuple[int, ...]:
    """A roll event's faces, in the order drawn."""
    bits = int(FACE_BITS)
    mask = (1 << bits) - 1
    return tuple((int(faces) >> (bits * k)) & mask for k in range(int(count)))


def decode(event: np.ndarray, names: Sequence[str]) -> tuple[str, str, dict[str, Any]]:
    """(kind, rule ID, {field: value}) of one event row, fields in the twin's order."""
    kind = EVENT_KINDS[int(event[1])]
    actor, other, a, b, c = (int(x) for x in event[2:7])
    fields: dict[str, Any] = {}
    spec = EVENT_FIELDS[kind]
    if spec[0]:
        fields[spec[0]] = names[actor]
    if spec[1]:
        fields[spec[1]] = names[other]
    if kind == "roll":
        fields["dice"] = roll_faces(a, b)
    elif kind == "prep":
        fields["before"] = pool_dice(a)
        fields["after"] = pool_dice(b)
    elif kind == "release":
        fields["why"] = RELEASE_WHYS[a]
    elif kind == "act":
        fields["die"] = a
        fields["holder_action"] = bool(b)
    elif kind == "attack":
        fields["initiative"] = a
        fields["by_holder"] = bool(b)
    elif kind == "rejoin":
        fields["value"] = a
        fields["next"] = b
    elif kind == "declined":
        fields["attacker"] = names[a]
    elif kind == "response":
        fields["die"] = a
        fields["kind"] = RESPONSE_KINDS[b]
        if fields["kind"] == "guard":  # c: 1 for a guard of named allies
            fields["scale"] = 0
            return kind, (NAMED_GUARD_RULE if c else EVENT_RULES[kind]), fields
        fields["scale"] = c
    elif spec[2]:
        fields[spec[2]] = a
    return kind, EVENT_RULES[kind], fields


def event_tuple(event: np.ndarray, names: Sequence[str]) -> tuple[Any, ...]:
    kind, rule, fields = decode(event, names)
    return (kind, rule, *fields.values())


def event_json(event: np.ndarray, names: Sequence[str]) -> dict[str, Any]:
    kind, rule, fields = decode(event, names)
    out: dict[str, Any] = {"round": int(event[0]), "event": kind, "rule": rule}
    for key, value in fields.items():
        out[key] = list(value) if isinstance(value, tuple) else value
    return out


def _dice(values: tuple[int, ...]) -> str:
    return ", ".join(str(v) for v in values)


def event_text(event: np.ndarray, names: Sequence[str]) -> str:
    """One line: the rule ID, then what happened (``R4  Astrid acts with a 6``)."""
    kind, rule, f = decode(event, names)
    if kind == "no_hold":
        text = "nobody may hold this round (the last one was a stalemate)"
    elif kind == "roll":
        text = f"{f['combatant']} rolls {_dice(sorted(f['dice'], reverse=True))}"  # high to low
    elif kind == "prep":
        text = f"{f['combatant']} prepares: {_dice(f['before'])} -> {_dice(f['after'])}"
    elif kind == "turn":
        text = f"{f['combatant']} has the turn at {f['value']}"
    elif kind == "hold":
        text = f"{f['combatant']} holds"
    elif kind == "release":
        why = {
            "attacked": "it was attacked",
            "enemy_acted": "an opponent acted",
            "opponents_out": "every opponent is out of dice",
        }[f["why"]]
        text = f"{f['combatant']} stops holding: {why}"
    elif kind == "declare":
        text = f"{f['combatant']} declares at {f['value']}"
    elif kind == "rejoin":
        text = (
            f"{f['combatant']} does not jump in: its {f['value']} is not above the next "
            f"turn's {f['next']}; it takes its turns in order"
        )
    elif kind == "run_broken":
        text = f"{f['combatant']}'s run of {f['value']}s ends: its action was answered"
    elif kind == "act":
        holder = " (a holder's action)" if f["holder_action"] else ""
        text = f"{f['combatant']} acts with a {f['die']}{holder}"
    elif kind == "attack":
        text = f"{f['attacker']} attacks {f['target']} at initiative {f['initiative']}"
    elif kind == "response":
        who, target = f["responder"], f["defended"]
        if f["kind"] == "self":
            text = f"{who} defends with a {f['die']}"
        elif f["kind"] == "hasty":
            text = f"{who} defends hastily with a {f['die']} (scale {f['scale']})"
        elif rule == NAMED_GUARD_RULE:
            text = f"{who} guards {target} with a {f['die']} (an ally it names)"
        else:
            text = f"{who} guards {target} with a {f['die']}"
    elif kind == "unanswered":
        text = f"nobody answers the attack on {f['target']}"
    elif kind == "no_effect":
        text = f"{f['attacker']}'s attack on {f['target']} would not take effect (rev 3)"
    elif kind == "declined":
        who, target = f["responder"], f["defended"]
        answer = "does not answer it" if who == target else f"does not guard {target} against it"
        text = f"{f['attacker']}'s attack would not take effect; {who} {answer}"
    elif kind == "expired":
        count = f["count"]
        text = f"{f['combatant']} loses {count} held {'die' if count == 1 else 'dice'}"
    else:
        text = "stalemate: nobody acted, everyone is on edge"
    return f"{rule:<3} {text}"
