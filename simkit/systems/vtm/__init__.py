"""System ``vtm``: d10 + Dexterity + Wits initiative (docs/rules.md, V1-V7)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from simkit.systems.base import REQUIRED, Problem, SystemBase
from simkit.systems.vtm import kernel
from simkit.systems.vtm.schema import FIELDS, RULES

PARTS = ("dexterity", "wits")


class Vtm(SystemBase):
    name = "vtm"
    title = "d10 + Dexterity + Wits"
    rule_ids = "V1-V7"
    fields = FIELDS
    rules = RULES
    main_field = "rating"
    policies = ("delay", "abort")
    counts = kernel.COUNTS
    scenario_counts = kernel.SCENARIO_COUNTS
    kernel = kernel
    waiting_words = "delaying (V4)"
    sweep_note = (
        " For vtm the swept stat is the rating (V1: initiative = d10 + rating − "
        "wound_penalty; V2: the higher rating wins ties): a combatant whose file gives "
        "`rating` has it changed directly, one given as dexterity + wits has its "
        "dexterity changed, so the rating follows. Sweeping `wound_penalty` instead would "
        "move initiative only (not the tie-break) and cannot go below 0."
    )
    method_note = (
        "Each combatant rolls d10 + rating - wound penalty (V1); the highest acts first, "
        "ties going to the higher rating, then sharing a time slot or in random order (V2); "
        "slower combatants declare first (V3); delayers wait for an opponent's action (V4); "
        "an attacked combatant may give up an action still to come to defend (V5); "
        "additional actions come at the end of the round (V6)."
    )

    # rating is required unless dexterity and wits are given (prepare checks it)
    optional_required = ("dexterity", "wits", "rating")

    def prepare(self, entry: Mapping[str, Any], params: dict[str, Any]) -> list[Problem]:
        has_rating = "rating" in entry
        parts = [k for k in PARTS if k in entry]
        if has_rating and parts:
            return [Problem("rating", "give either rating or dexterity and wits, not both (V1)")]
        if not has_rating and len(parts) != 2:
            missing = [k for k in PARTS if k not in entry]
            return [
                Problem(
                    missing[0],
                    "missing; give dexterity and wits (integers 0..20) or rating (0..40)",
                )
            ]
        if not has_rating:
            if params.get("dexterity") is None or params.get("wits") is None:
                return []  # their own problems are reported
            params["rating"] = params["dexterity"] + params["wits"]
        else:
            params["dexterity"] = None
            params["wits"] = None
        return []

    def edit(self, given: dict[str, Any], key: str, value: Any) -> str | None:
        if key in PARTS and "rating" in given:
            return "is given by rating, not dexterity and wits (V1); change rating instead"
        if key == "rating":
            for part in PARTS:
                given.pop(part, None)
        given[key] = value
        return None

    def stat_field(self, params: Mapping[str, Any], given: frozenset[str]) -> str:
        return "dexterity" if params.get("dexterity") is not None else "rating"

    def dist_size(self, params: Mapping[str, Any]) -> int:
        return int(params["actions"]) + int(params["extra_actions"]) + 1

    def waits(self, params: Mapping[str, Any]) -> bool:
        return params["delay"] != "never"

    def never_waits(self) -> dict[str, Any]:
        return {"delay": "never"}

    def rollers(self, scenario: Any) -> list[tuple[str, int, int]]:
        return [(c.name, 1, kernel.D10) for c in scenario.combatants]  # V1: one d10 each

    def cost(self, scenario: Any) -> float:
        """Relative time of a round, 1 for the bench scenario: a least-squares fit of
        the measured nanoseconds per round (4 to 200 combatants, 1 to 4 actions each):
        a part per combatant, per action, and per pair of combatants (acts_before)."""
        n = len(scenario.combatants)
        acts = sum(c["actions"] + c["extra_actions"] for c in scenario.combatants)
        ns = COST_NS[0] + COST_NS[1] * n + COST_NS[2] * n * n + COST_NS[3] * acts
        return max(1.0, ns / BENCH_NS)

    # ------------------------------------------------------------------ events
    def event_tuple(self, event: np.ndarray, scenario: Any) -> tuple[Any, ...]:
        """The event as tests/twins/vtm.py logs it: ``(kind, rule ID, ...)``."""
        names = scenario.names
        kind = int(event[1])
        name = names[int(event[2])]
        a, b = int(event[4]), int(event[5])
        label = kernel.EVENT_KINDS[kind]
        rule = kernel.EVENT_RULES[kind]
        if kind == kernel.E_ROLL:
            return (label, rule, name, a, b)
        if kind == kernel.E_SLOT:
            return (label, rule, a, tuple(names[i] for i in _members(event, len(names))))
        if kind == kernel.E_KNOWN:
            return (label, rule, name, a)
        if kind == kernel.E_ACT:
            return (label, "V6" if b else rule, name, a, bool(b))
        if kind == kernel.E_ATTACK:
            return (label, rule, name, names[int(event[3])])
        if kind == kernel.E_ABORT:
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

    def bench_scenario(self) -> dict[str, Any]:
        return {
            "scenario": {"name": "bench vtm", "system": self.name},
            "combatant": [
                {"name": "A", "side": "a", "count": 2, "dexterity": 3, "wits": 2},
                {"name": "B", "side": "b", "count": 2, "dexterity": 2, "wits": 2},
            ],
        }

    def warmup_scenarios(self) -> list[dict[str, Any]]:
        """The bench scenario (coded sums) and one of 8 combatants with every policy
        (the acts_before block, delays, aborts): every path of the kernel."""
        many = {
            "scenario": {"name": "warmup vtm", "system": self.name},
            "rules": {"tie": "random", "multi": "in_turn"},
            "combatant": [
                {"name": "A", "side": "a", "count": 4, "rating": 3, "abort": "always"},
                {"name": "B", "side": "b", "count": 4, "rating": 3, "delay": "until_enemy_acts",
                 "attack_share": 0.5, "extra_actions": 1},
            ],
        }  # fmt: skip
        return [self.bench_scenario(), many]


def _members(event: np.ndarray, n: int) -> list[int]:
    """The combatants of a slot event: a bit mask in columns other, b, c, d."""
    words = [int(event[3]), int(event[5]), int(event[6]), int(event[7])]
    return [i for i in range(n) if (words[i >> 6] >> (i & 63)) & 1]


UNANSWERED_WHY = {
    int(kernel.NO_DEFENSE_POLICY): ' (abort = "never")',
    int(kernel.NO_DEFENSE_SAME_MOMENT): ": it acts in this same moment (simultaneous)",
    int(kernel.NO_DEFENSE_NOTHING_LEFT): ": no action left in reserve",
    int(kernel.NO_DEFENSE_HAS_ACTED): ' (abort = "before_acting": it has already acted)',
}

UNANSWERED_KEYS = {
    int(kernel.NO_DEFENSE_POLICY): "abort_never",
    int(kernel.NO_DEFENSE_SAME_MOMENT): "same_moment",
    int(kernel.NO_DEFENSE_NOTHING_LEFT): "nothing_left",
    int(kernel.NO_DEFENSE_HAS_ACTED): "has_acted",
}

# cost(): nanoseconds per round = COST_NS . (1, combatants, combatants**2, actions), fitted
# to measurements on a 2-core machine (numba 0.68); BENCH_NS: the bench scenario's
COST_NS = (-110.0, 28.0, 0.02, 23.0)
BENCH_NS = 92.0

SYSTEM = Vtm()
assert FIELDS["rating"].default is REQUIRED
