"""How vtm's play reads: trace events as the twin's tuples, text and JSON; the notes."""

from __future__ import annotations

from typing import Any

import numpy as np

from simkit.systems.base import PresentationBase
from simkit.systems.vtm import rules


class VtmPresentation(PresentationBase):
    waiting_words = "delaying (V4)"
    sweep_note = (
        " For vtm the swept stat is the rating (V1: initiative = d10 + rating − "
        "wound_penalty; V2: the higher rating wins ties): a combatant whose file gives "
        "a rating has it changed directly, one given as dexterity + wits has its "
        "dexterity changed, so the rating follows. Sweeping the wound penalty instead would "
        "move initiative only (not the tie-break) and cannot go below 0."
    )
    method_note = (
        "Each combatant rolls d10 + rating - wound penalty (V1); the highest acts first, "
        "ties going to the higher rating, then sharing a time slot or in random order (V2); "
        "slower combatants declare first (V3); delayers wait for an opponent's action (V4); "
        "an attacked combatant may give up an action still to come to defend, a slot-mate "
        "too while its action of the shared moment is not yet resolved (V5); "
        "additional actions come at the end of the round (V6)."
    )

    # ------------------------------------------------------------------ events
    def event_tuple(self, event: np.ndarray, scenario: Any) -> tuple[Any, ...]:
        """The event as tests/twins/vtm.py logs it: ``(kind, rule ID, ...)``."""
        names = scenario.names
        kind = int(event[1])
        name = names[int(event[2])]
        a, b = int(event[4]), int(event[5])
        label = rules.EVENT_KINDS[kind]
        rule = rules.EVENT_RULES[kind]
        if kind == rules.E_ROLL:
            return (label, rule, name, a, b)
        if kind == rules.E_SLOT:
            return (label, rule, a, tuple(names[i] for i in _members(event, len(names))))
        if kind == rules.E_KNOWN:
            return (label, rule, name, a)
        if kind == rules.E_ACT:
            return (label, "V6" if b else rule, name, a, bool(b))
        if kind == rules.E_ATTACK:
            return (label, rule, name, names[int(event[3])])
        if kind == rules.E_ABORT:
            return (label, rule, name, a)
        return (label, rule, name)  # delay, release, unanswered

    def event_text(self, event: np.ndarray, scenario: Any) -> str:
        """One line a designer reads in ``simkit trace``, citing the rule."""
        e = self.event_tuple(event, scenario)
        kind, rule = e[0], e[1]
        if kind == "roll":
            return f"{rule} {e[2]} rolls {e[3]} on its d10: initiative {e[4]}"
        if kind == "slot":
            if len(e[3]) > 1:
                who = ", ".join(e[3][:-1]) + " and " + e[3][-1]
                return (
                    f"{rule} slot {e[2] + 1}: {who} share it (same initiative and rating): "
                    "they act simultaneously"
                )
            return f"{rule} slot {e[2] + 1}: {e[3][0]}"
        if kind == "known":
            if e[3] == 0:
                return f"{rule} {e[2]} declares, knowing no opponent's declaration"
            whose = "1 opponent's declaration" if e[3] == 1 else f"{e[3]} opponents' declarations"
            return f"{rule} {e[2]} declares, knowing {whose}"
        if kind == "delay":
            return f"{rule} {e[2]} delays: it waits until an opponent acts"
        if kind == "release":
            return f"{rule} {e[2]} stops delaying and takes its turn"
        if kind == "act":
            what = "acts at the end of the round" if e[4] else "acts"
            return f"{rule} moment {e[3] + 1}: {e[2]} {what}"
        if kind == "attack":
            return f"{rule} {e[2]} attacks {e[3]}"
        if kind == "abort":
            given = "the action of its turn" if e[3] == 0 else f"its end-of-round action {e[3]}"
            return f"{rule} {e[2]} aborts to defend, giving up {given}"
        why = UNANSWERED_WHY.get(int(event[4]), "")
        return f"{rule} {e[2]} does not defend{why}"

    def event_json(self, event: np.ndarray, scenario: Any) -> dict[str, Any]:
        e = self.event_tuple(event, scenario)
        out: dict[str, Any] = {"round": int(event[0]), "event": e[0], "rule": e[1]}
        keys = {
            "roll": ("combatant", "die", "initiative"),
            "slot": ("slot", "combatants"),
            "known": ("combatant", "known_declarations"),
            "act": ("combatant", "moment", "end_of_round"),
            "attack": ("combatant", "target"),
            "abort": ("combatant", "given_up"),
        }.get(e[0], ("combatant",))
        for key, value in zip(keys, e[2:], strict=True):
            out[key] = list(value) if isinstance(value, tuple) else value
        if e[0] == "unanswered":
            out["why"] = UNANSWERED_KEYS.get(int(event[4]), "")
        return out


def _members(event: np.ndarray, n: int) -> list[int]:
    """The combatants of a slot event: a bit mask in columns other, b, c, d."""
    words = [int(event[3]), int(event[5]), int(event[6]), int(event[7])]
    return [i for i in range(n) if (words[i >> 6] >> (i & 63)) & 1]


UNANSWERED_WHY = {
    int(rules.NO_DEFENSE_POLICY): ' (abort = "never")',
    int(rules.NO_DEFENSE_SAME_MOMENT): (
        ': it acts in this same moment (simultaneous under slot_abort = "never")'
    ),
    int(rules.NO_DEFENSE_NOTHING_LEFT): ": no action left in reserve",
    int(rules.NO_DEFENSE_HAS_ACTED): ' (abort = "before_acting": it has already acted)',
}

UNANSWERED_KEYS = {
    int(rules.NO_DEFENSE_POLICY): "abort_never",
    int(rules.NO_DEFENSE_SAME_MOMENT): "same_moment",
    int(rules.NO_DEFENSE_NOTHING_LEFT): "nothing_left",
    int(rules.NO_DEFENSE_HAS_ACTED): "has_acted",
}
