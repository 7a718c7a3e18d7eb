"""How perception's play reads: trace events as the twin's tuples, text and JSON; the
notes."""

from __future__ import annotations

from typing import Any

import numpy as np

from simkit.systems.base import PresentationBase
from simkit.systems.perception import rules

# Event kind -> (name, rule) as the twin logs them (tests/twins/perception.py).
_KINDS = {
    rules.EV_ROLL_P1: ("roll", "P1"),
    rules.EV_ROLL_P2: ("roll", "P2"),
    rules.EV_SLOT_P1: ("slot", "P1"),
    rules.EV_SLOT_P2: ("slot", "P2"),
    rules.EV_INTENT: ("intent", "P3"),
    rules.EV_ACT: ("act", "P4"),
    rules.EV_ATTACK: ("attack", "P4"),
}


def _ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


class PerceptionPresentation(PresentationBase):
    waiting_words = ""
    method_note = (
        "Each combatant (individual mode, P1) or each side (group mode, P2) rolls d10 + "
        "perception; higher totals act first.  Before anyone acts, each combatant learns "
        "the first actions of those with a strictly lower total (P3; or, with "
        'information = "order", of everyone acting later); everyone then acts once on its '
        "turn, and everyone who stated its first action (all but the first to act) "
        "carries it out (P4)."
    )

    # ------------------------------------------------------------------ events
    def event_tuple(self, event: np.ndarray, scenario: Any) -> tuple[Any, ...]:
        names = scenario.names
        kind = int(event[1])
        what, rule = _KINDS[kind]
        actor, other, a, b = int(event[2]), int(event[3]), int(event[4]), int(event[5])
        if kind == rules.EV_ROLL_P1:
            return (what, rule, names[actor], a, b)
        if kind == rules.EV_ROLL_P2:
            return (what, rule, scenario.sides[actor], a, b)
        if kind in (rules.EV_SLOT_P1, rules.EV_SLOT_P2):
            return (what, rule, names[actor], a)
        if kind in (rules.EV_INTENT, rules.EV_ATTACK):
            return (what, rule, names[actor], names[other])
        return (what, rule, names[actor], bool(a))  # act: did it state its first action

    def event_text(self, event: np.ndarray, scenario: Any) -> str:
        t = self.event_tuple(event, scenario)
        what, rule = t[0], t[1]
        if what == "roll" and rule == "P1":
            _, _, who, die, total = t
            return f"{rule} {who} rolls {die} + perception {total - die} = initiative {total}"
        if what == "roll":
            _, _, side, die, total = t
            return f"{rule} side {side} rolls {die} + group perception {total - die} = {total}"
        if what == "slot":
            return f"{rule} {t[2]} acts {_ordinal(t[3] + 1)}"
        if what == "intent":
            return f"{rule} {t[2]} learns {t[3]}'s first action before anyone acts"
        if what == "attack":
            return f"{rule} {t[2]} attacks {t[3]} (no defense in this system: undefended)"
        if t[3]:
            return f"{rule} {t[2]} acts, carrying out the first action it stated"
        return f"{rule} {t[2]} acts; acting first, it stated nothing beforehand (P3)"

    def event_json(self, event: np.ndarray, scenario: Any) -> dict[str, Any]:
        t = self.event_tuple(event, scenario)
        out: dict[str, Any] = {"round": int(event[0]), "event": t[0], "rule": t[1]}
        keys = {
            "roll": ("side" if t[1] == "P2" else "name", "die", "total"),
            "slot": ("name", "slot"),
            "intent": ("learner", "stater"),
            "act": ("name", "stated"),
            "attack": ("attacker", "target"),
        }[t[0]]
        out.update(zip(keys, t[2:], strict=True))
        return out
