"""System ``readiness``: dice-pool initiative (docs/rules.md, R1-R10, revision 3).

The package: ``schema.py`` (fields and rules), ``codes.py`` (the named codes of every
value, count and event), ``rules.py`` (one round, R1-R9: the implementation of the
rules), ``kernel.py`` (a scenario as arrays; ``run_chunk`` and ``trace``, both playing
rounds through ``rules.play_round``), ``counts.py`` (how the counts are summed: the
flush, the plan), ``lanes.py``, ``lanes_flush.py`` and ``lanes_run.py`` (``run_chunk``'s
shortcut for the simplest scenarios: 128 rounds side by side, flushed from their packed
counts, sums equal to ``play_round``'s bit for bit), ``events.py`` (trace events as the
twin's tuples, text
and JSON).  The plain-Python twin tests/twins/readiness.py is the specification the
kernel is held to.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from simkit.systems.base import Problem, SystemBase
from simkit.systems.readiness import events, guards, kernel, schema
from simkit.systems.readiness.codes import COUNTS, SCENARIO_COUNTS, SIDES
from simkit.systems.readiness.schema import DEFENDS, FIELDS, GUARDS, HASTY_UP_TO, HOLDS, RULES

# cost(): nanoseconds per round measured on the 2-core reference machine (run_chunk,
# default policies, 4 to 200 combatants of readiness 1 to 20), least-squares fitted as
# ROUND + DIE * dice + COMBATANT * n + PAIR * n**2 (the n**2: acts_before, T2 ranks),
# within 30% of every measurement; cost() is that over the bench scenario's.
COST_ROUND = -209.0
COST_PER_DIE = 27.3
COST_PER_COMBATANT = 65.3
COST_PER_PAIR = 0.69
BENCH_DICE = 12
BENCH_COMBATANTS = 4
LEAST_COST = 0.25


class Readiness(SystemBase):
    name = "readiness"
    title = "dice-pool initiative"
    rule_ids = "R1-R10"
    fields = FIELDS
    rules = RULES
    main_field = "readiness"
    finer = {"readiness": ("advantage",)}  # R2: pips before the round, finer than a die
    policies = ("hold", "defend", "guard")
    # What `simkit policies` tries: every choice, and defend = hasty_up_to:N for N 0..5.
    policy_alternatives = {
        "hold": HOLDS,
        "defend": (*DEFENDS, *(f"{HASTY_UP_TO}:{n}" for n in range(6))),
        "guard": GUARDS,
    }
    counts = COUNTS
    scenario_counts = SCENARIO_COUNTS
    kernel = kernel
    carries_state = True  # R8: a stalemate carries into the next round
    waiting_words = "holding (R5)"
    method_note = (
        "Each combatant rolls its readiness in d6 (R1); an advantage raises one die (R2); "
        "the highest unspent die acts next (R3), ties broken by more dice of that value, "
        "then the other dice of the round, then at random; an attack is answered by its "
        "target and by guarding allies (R7)."
    )

    def prepare(self, entry: Mapping[str, Any], params: dict[str, Any]) -> list[Problem]:
        if params.get("role") == "secondary" and "weakness" in entry:
            return [
                Problem(
                    "weakness",
                    "weakness applies to heroes only (R8: a secondary's wound is 3); remove it "
                    'or set role = "hero"',
                )
            ]
        if guards.MODE_FIELD in entry and not guards.is_named(params.get("guard")):
            return [
                Problem(
                    guards.MODE_FIELD,
                    "guard_mode goes with a list of the allies it guards (R7a), e.g. "
                    'guard = ["Mira"]; with guard = "backup" or "always" remove guard_mode',
                )
            ]
        return []

    def protections(self, scenario: Any) -> dict[str, dict[str, str]]:
        """R7/R7a: each guard -> {ally it answers for: "backup" or "always"}."""
        out: dict[str, dict[str, str]] = {}
        for i, c in enumerate(scenario.combatants):
            how, _ = schema.when_effective(guards.mode(c), alone="")  # R7 [rev 3] aside
            if how == "never":
                continue
            allies = guards.protected(scenario, i)
            if allies is None:
                allies = tuple(j for j in scenario.side_members(c.side) if j != i)
            out[c.name] = {scenario.combatants[j].name: how for j in allies}
        return out

    def edit(self, given: dict[str, Any], key: str, value: Any) -> str | None:
        if key == "guard" and not isinstance(value, list | tuple):
            given.pop(guards.MODE_FIELD, None)  # R7a: the mode belongs to a list of names
        given[key] = value
        return None

    def dist_size(self, params: Mapping[str, Any]) -> int:
        return int(params["readiness"]) + 1

    def check(self, scenario: Any) -> list[Problem]:
        """R7a: a named guard lists allies; R8a: ``opening`` needs fights
        (docs/rules-decisions.md, R7a and R8a)."""
        problems = guards.guard_problems(scenario)
        if scenario.fight_rounds:
            return problems
        seen: set[int] = set()
        for c in scenario.combatants:
            if c["opening"] and c.entry not in seen:
                seen.add(c.entry)
                problems.append(
                    Problem(
                        f"{c.path}.opening",
                        "opening = true limits advantage and surprised to the first round of "
                        "a fight, but the scenario has no fights: add fight_rounds = K (an "
                        "integer >= 1) to [scenario], or remove opening",
                    )
                )
        return problems

    def after_opening(self, scenario: Any) -> Any:
        """R8a: rounds 2.. of a fight: every ``opening`` combatant without its advantage
        and surprise; None if that changes nobody."""
        changed = False
        combatants = []
        for c in scenario.combatants:
            if c["opening"] and (c["advantage"] or c["surprised"]):
                params = type(c.params)({**c.params, "advantage": 0, "surprised": False})
                c = dataclasses.replace(c, params=params)
                changed = True
            combatants.append(c)
        return dataclasses.replace(scenario, combatants=tuple(combatants)) if changed else None

    def waits(self, params: Mapping[str, Any]) -> bool:
        return params["hold"] != "never"

    def never_waits(self) -> dict[str, Any]:
        return {"hold": "never"}

    def cost(self, scenario: Any) -> float:
        """Relative time of a round (1 for the bench scenario), fitted to measurements."""

        def ns(n: int, dice: int) -> float:
            return COST_ROUND + COST_PER_DIE * dice + COST_PER_COMBATANT * n + COST_PER_PAIR * n * n

        n = len(scenario.combatants)
        dice = sum(c["readiness"] for c in scenario.combatants)
        return max(LEAST_COST, ns(n, dice) / ns(BENCH_COMBATANTS, BENCH_DICE))

    def rollers(self, scenario: Any) -> list[tuple[str, int, int]]:
        return [(c.name, int(c["readiness"]), SIDES) for c in scenario.combatants]

    def event_tuple(self, event: np.ndarray, scenario: Any) -> tuple[Any, ...]:
        return events.event_tuple(event, scenario.names)

    def event_text(self, event: np.ndarray, scenario: Any) -> str:
        return events.event_text(event, scenario.names)

    def event_json(self, event: np.ndarray, scenario: Any) -> dict[str, Any]:
        return events.event_json(event, scenario.names)

    def warmup_scenarios(self) -> list[dict[str, Any]]:
        """The bench scenario (the lanes: kernel.Compiled.lanes_off None), one without
        holds that the lanes do not serve (a guard: the scalar driver without R5), one
        with holds, guards and advantage (at most ONE_LEVEL combatants: the small driver)
        and one with holds and more combatants (the driver of bigger fights): every
        driver (run and trace) over the one round function, and the lanes, reach every
        kernel path."""
        bench = self.bench_scenario()
        plain = {**bench, "scenario": {"name": "warmup readiness plain", "system": self.name}}
        plain["combatant"] = [
            {**bench["combatant"][0], "guard": "backup"},
            *bench["combatant"][1:],
        ]
        holds = {
            "scenario": {"name": "warmup readiness", "system": self.name},
            "combatant": [
                {"name": "A", "side": "a", "readiness": 3, "hold": "until_attacked"},
                {"name": "B", "side": "a", "readiness": 2, "guard": "always", "advantage": 2},
                {"name": "C", "side": "b", "count": 2, "readiness": 3, "hold": "until_enemy_acts"},
            ],
        }
        big = {
            "scenario": {"name": "warmup readiness big", "system": self.name},
            "combatant": [
                {"name": "D", "side": "a", "count": 5, "readiness": 3, "hold": "until_attacked"},
                {"name": "E", "side": "b", "count": 5, "readiness": 3},
            ],
        }
        return [bench, plain, holds, big]

    def bench_scenario(self) -> dict[str, Any]:
        return {
            "scenario": {"name": "bench readiness", "system": self.name},
            "combatant": [
                {"name": "A", "side": "a", "count": 2, "readiness": 3},
                {"name": "B", "side": "b", "count": 2, "readiness": 3},
            ],
        }


SYSTEM = Readiness()
