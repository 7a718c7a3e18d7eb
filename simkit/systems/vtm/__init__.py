"""System ``vtm``: d10 + Dexterity + Wits initiative (docs/rules.md, V1-V7).

The package: ``schema.py`` (fields and rules), ``rules.py`` (a round, V1-V7),
``lanes.py`` (rounds side by side), ``kernel.py`` (a scenario as arrays, the chunk loops),
``counts.py`` (how the counts are summed), ``memory.py`` (the kernel's memory),
``presentation.py`` (events and notes as they read); here its rules' checks and edits,
its kernel's rollers and cost, and its bench and warm-up scenarios."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simkit.systems.base import REQUIRED, Problem, SystemBase
from simkit.systems.vtm import kernel
from simkit.systems.vtm.counts import COUNTS, SCENARIO_COUNTS
from simkit.systems.vtm.presentation import VtmPresentation
from simkit.systems.vtm.rules import D10
from simkit.systems.vtm.schema import FIELDS, RULES

PARTS = ("dexterity", "wits")


class Vtm(VtmPresentation, SystemBase):
    name = "vtm"
    title = "d10 + Dexterity + Wits"
    rule_ids = "V1-V7"
    fields = FIELDS
    rules = RULES
    main_field = "rating"
    # V7: wound_penalty is taken from the initiative total, one point at a time
    finer = {part: ("wound_penalty",) for part in ("rating", "dexterity", "wits")}
    policies = ("delay", "abort")
    counts = COUNTS
    scenario_counts = SCENARIO_COUNTS
    kernel = kernel
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
        return [(c.name, 1, D10) for c in scenario.combatants]  # V1: one d10 each

    def cost(self, scenario: Any) -> float:
        """Relative time of a round, 1 for the bench scenario: a least-squares fit of
        the measured nanoseconds per round (4 to 200 combatants, 1 to 4 actions each):
        a part per combatant, per action, and per pair of combatants (acts_before)."""
        n = len(scenario.combatants)
        acts = sum(c["actions"] + c["extra_actions"] for c in scenario.combatants)
        ns = COST_NS[0] + COST_NS[1] * n + COST_NS[2] * n * n + COST_NS[3] * acts
        return max(1.0, ns / BENCH_NS)

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


# cost(): nanoseconds per round = COST_NS . (1, combatants, combatants**2, actions), fitted
# to measurements on a 2-core machine (numba 0.68); BENCH_NS: the bench scenario's
COST_NS = (-110.0, 28.0, 0.02, 23.0)
BENCH_NS = 92.0

SYSTEM = Vtm()
assert FIELDS["rating"].default is REQUIRED
