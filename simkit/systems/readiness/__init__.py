"""System ``readiness``: dice-pool initiative (RULES.md R1-R10)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from simkit.metrics import Layout, Sums
from simkit.systems.base import Problem, SystemBase, Trace
from simkit.systems.readiness import kernel
from simkit.systems.readiness.schema import FIELDS, RULES


class Readiness(SystemBase):
    name = "readiness"
    title = "dice-pool initiative"
    rule_ids = "R1-R10"
    fields = FIELDS
    rules = RULES
    main_field = "readiness"
    policies = ("hold", "defend", "guard")
    counts = kernel.COUNTS
    scenario_counts = kernel.SCENARIO_COUNTS
    waiting_words = "holding (R5)"
    method_note = (
        "Each combatant rolls its readiness in d6 (R1), raised by its advantage (R2); the "
        "highest unspent die acts next (R3), ties broken by more dice of that value, then "
        "the other dice of the round, then at random."
    )

    def prepare(self, entry: Mapping[str, Any], params: dict[str, Any]) -> list[Problem]:
        if params.get("role") == "secondary" and "weakness" in entry:
            return [
                Problem(
                    "weakness",
                    'weakness applies to heroes only (R8); remove it or set role = "hero"',
                )
            ]
        return []

    def dist_size(self, params: Mapping[str, Any]) -> int:
        return int(params["readiness"]) + 1

    def waits(self, params: Mapping[str, Any]) -> bool:
        return params["hold"] != "never"

    def never_waits(self) -> dict[str, Any]:
        return {"hold": "never"}

    def cost(self, scenario: Any) -> float:
        return max(1.0, sum(c["readiness"] for c in scenario.combatants) / 12)

    def dice_spec(self, params: Mapping[str, Any]) -> tuple[int, int]:
        return (int(params["readiness"]), 6)

    def compile(self, scenario: Any, layout: Layout) -> Any:
        return kernel.compile_scenario(scenario, layout)

    def run_chunk(
        self,
        compiled: Any,
        key: np.ndarray,
        n_rounds: int,
        sums: Sums,
        first: int = 0,
        carry: int = 0,
    ) -> int:
        return int(
            kernel.run_chunk(compiled, key, n_rounds, sums, first=first, no_hold=bool(carry))
        )

    def trace(
        self,
        compiled: Any,
        key: np.ndarray,
        n_rounds: int,
        first: int = 0,
        carry: int = 0,
        dice: Mapping[int, Sequence[int]] | None = None,
    ) -> Trace:
        rows = kernel.trace(compiled, key, n_rounds, bool(carry), first)
        empty = np.zeros((0, 8), np.int64)
        return Trace(rows, empty, np.zeros(n_rounds, np.int64), np.zeros((n_rounds, 6), np.uint64))

    def bench_scenario(self) -> dict[str, Any]:
        return {
            "scenario": {"name": "bench readiness", "system": self.name},
            "combatant": [
                {"name": "A", "side": "a", "count": 2, "readiness": 3},
                {"name": "B", "side": "b", "count": 2, "readiness": 3},
            ],
        }


SYSTEM = Readiness()
