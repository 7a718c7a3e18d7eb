"""System ``perception``: d10 + Perception, individual or group (RULES.md P1-P4)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from simkit.metrics import Layout, Sums
from simkit.systems.base import Problem, SystemBase, Trace
from simkit.systems.perception import kernel
from simkit.systems.perception.schema import FIELDS, RULES


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
    waiting_words = ""
    method_note = (
        "Each combatant (individual mode) or each side (group mode) rolls d10 + perception; "
        "the higher total acts first (P1, P2) and learns the first actions of those below (P3)."
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
        return 2

    def dice_spec(self, params: Mapping[str, Any]) -> tuple[int, int]:
        return (1, 10)

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
        kernel.run_chunk(compiled, key, n_rounds, sums, first=first)
        return 0

    def trace(
        self,
        compiled: Any,
        key: np.ndarray,
        n_rounds: int,
        first: int = 0,
        carry: int = 0,
        dice: Mapping[int, Sequence[int]] | None = None,
    ) -> Trace:
        rows = kernel.trace(compiled, key, n_rounds, first)
        empty = np.zeros((0, 8), np.int64)
        return Trace(rows, empty, np.zeros(n_rounds, np.int64), np.zeros((n_rounds, 6), np.uint64))

    def bench_scenario(self) -> dict[str, Any]:
        return {
            "scenario": {"name": "bench perception", "system": self.name},
            "combatant": [
                {"name": "A", "side": "a", "count": 2, "perception": 4},
                {"name": "B", "side": "b", "count": 2, "perception": 6},
            ],
        }


SYSTEM = Perception()
