"""System ``perception``: d10 + Perception, individual or group (docs/rules.md, P1-P4, rev 2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from simkit.systems.base import Problem, SystemBase
from simkit.systems.perception import kernel
from simkit.systems.perception.schema import FIELDS, RULES

# Event kind -> (name, rule) as the twin logs them (tests/twins/perception.py).
_KINDS = {
    kernel.EV_ROLL_P1: ("roll", "P1"),
    kernel.EV_ROLL_P2: ("roll", "P2"),
    kernel.EV_SLOT_P1: ("slot", "P1"),
    kernel.EV_SLOT_P2: ("slot", "P2"),
    kernel.EV_INTENT: ("intent", "P3"),
    kernel.EV_ACT: ("act", "P4"),
    kernel.EV_ATTACK: ("attack", "P4"),
}


def _ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


class Perception(SystemBase):
    name = "perception"
    title = "d10 + Perception, individual or group"
    rule_ids = "P1-P4"
    fields = FIELDS
    rules = RULES
    main_field = "perception"
    policies = ()
    counts = kernel.COUNTS
    scenario_counts = ()
    kernel = kernel
    waiting_words = ""
    method_note = (
        "Each combatant (individual mode, P1) or each side (group mode, P2) rolls d10 + "
        "perception; higher totals act first.  Before anyone acts, each combatant learns "
        "the first actions of those with a strictly lower total (P3; or, with "
        'information = "order", of everyone acting later); everyone then acts once and '
        "carries out the action it stated (P4)."
    )

    def check(self, scenario: Any) -> list[Problem]:
        problems = []
        lacking = []
        for side in scenario.sides:
            members = [c for c in scenario.combatants if c.side == side]
            commanders = [c for c in members if c["commander"]]
            if len(commanders) > 1:
                names = ", ".join(c.name for c in commanders)
                problems.append(
                    Problem(
                        f"{commanders[1].path}.commander",
                        f"side '{side}' has more than one commander ({names}); "
                        "at most one per side",
                    )
                )
            if not commanders:
                lacking.append(side)
        group = scenario.rules["mode"] == "group" and scenario.rules["group_stat"] == "commander"
        if group and lacking:
            which = ", ".join(f"'{s}'" for s in lacking)
            problems.append(
                Problem(
                    "rules.group_stat",
                    f"side{'s' if len(lacking) > 1 else ''} {which} "
                    f"{'have' if len(lacking) > 1 else 'has'} no commander; group mode with "
                    'group_stat = "commander" needs one per side (set commander = true) or use '
                    'group_stat = "highest"',
                )
            )
        return problems

    def dist_size(self, params: Mapping[str, Any]) -> int:
        return kernel.DIST_SIZE

    def cost(self, scenario: Any) -> float:
        """Time per round relative to the 4-combatant benchmark scenario: 1 up to 4
        combatants (the histogram path); above, 0.55 n (every combatant's counts, every
        round) plus n**2 / 2500 (acts_before).  Measured (CPU time per round, both modes,
        a busy 2-core machine): 3.1-4.7 at 5-7 combatants, 13 at 20, 34 at 50, 147 at
        200; the formula gives 2.8-3.9, 11, 28, 126.  It stays under engine's
        COST_FULL_CHUNK for every example scenario (7 combatants: 3.9), so their chunks
        and numbers are those of revision 1."""
        n = len(scenario.combatants)
        if n <= kernel.HIST_MAX_N:
            return 1.0
        return n * (0.55 + n / 2500)

    def rollers(self, scenario: Any) -> list[tuple[str, int, int]]:
        if scenario.rules["mode"] == "group":  # P2: one d10 per side
            return [(side, 1, kernel.D10) for side in scenario.sides]
        return [(c.name, 1, kernel.D10) for c in scenario.combatants]  # P1

    # ------------------------------------------------------------------ events
    def event_tuple(self, event: np.ndarray, scenario: Any) -> tuple[Any, ...]:
        names = scenario.names
        kind = int(event[1])
        what, rule = _KINDS[kind]
        actor, other, a, b = int(event[2]), int(event[3]), int(event[4]), int(event[5])
        if kind == kernel.EV_ROLL_P1:
            return (what, rule, names[actor], a, b)
        if kind == kernel.EV_ROLL_P2:
            return (what, rule, scenario.sides[actor], a, b)
        if kind in (kernel.EV_SLOT_P1, kernel.EV_SLOT_P2):
            return (what, rule, names[actor], a)
        if kind in (kernel.EV_INTENT, kernel.EV_ATTACK):
            return (what, rule, names[actor], names[other])
        return (what, rule, names[actor])

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
        return f"{rule} {t[2]} acts, carrying out the first action it stated"

    def event_json(self, event: np.ndarray, scenario: Any) -> dict[str, Any]:
        t = self.event_tuple(event, scenario)
        out: dict[str, Any] = {"round": int(event[0]), "event": t[0], "rule": t[1]}
        keys = {
            "roll": ("side" if t[1] == "P2" else "name", "die", "total"),
            "slot": ("name", "slot"),
            "intent": ("learner", "stater"),
            "act": ("name",),
            "attack": ("attacker", "target"),
        }[t[0]]
        out.update(zip(keys, t[2:], strict=True))
        return out

    def bench_scenario(self) -> dict[str, Any]:
        return {
            "scenario": {"name": "bench perception", "system": self.name},
            "combatant": [
                {"name": "A", "side": "a", "count": 2, "perception": 4},
                {"name": "B", "side": "b", "count": 2, "perception": 6},
            ],
        }

    def warmup_scenarios(self) -> list[dict[str, Any]]:
        """The benchmark scenario (histogram path) and a 5-combatant one (general path)."""
        five = self.bench_scenario()
        five["combatant"] = [*five["combatant"], {"name": "C", "side": "c", "perception": 2}]
        return [self.bench_scenario(), five]


SYSTEM = Perception()
