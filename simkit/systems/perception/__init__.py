"""System ``perception``: d10 + Perception, individual or group (docs/rules.md, P1-P4, rev 2).

The package: ``schema.py`` (fields and rules), ``rules.py`` (a round, P1-P4),
``lanes.py`` (rounds side by side), ``kernel.py`` (a scenario as arrays, the chunk
paths), ``counts.py`` (how the counts are summed), ``table.py`` (the kernel's table),
``presentation.py`` (events and notes as they read); here its rules' checks, its
kernel's rollers and cost, and its bench and warm-up scenarios."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simkit.systems.base import Problem, SystemBase
from simkit.systems.perception import counts, kernel
from simkit.systems.perception.counts import HIST_MAX_N
from simkit.systems.perception.presentation import PerceptionPresentation
from simkit.systems.perception.rules import D10
from simkit.systems.perception.schema import FIELDS, RULES
from simkit.systems.perception.table import COUNTS


class Perception(PerceptionPresentation, SystemBase):
    name = "perception"
    title = "d10 + Perception, individual or group"
    rule_ids = "P1-P4"
    fields = FIELDS
    rules = RULES
    main_field = "perception"
    policies = ()
    counts = COUNTS
    scenario_counts = ()
    kernel = kernel

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
        return counts.DIST_SIZE

    def cost(self, scenario: Any) -> float:
        """Time per round relative to the 4-combatant benchmark scenario: 1 up to 4
        combatants (the histogram path); above, 0.55 n (every combatant's counts, every
        round) plus n**2 / 2500 (acts_before).  Measured (CPU time per round, both modes,
        a busy 2-core machine): 3.1-4.7 at 5-7 combatants, 13 at 20, 34 at 50, 147 at
        200; the formula gives 2.8-3.9, 11, 28, 126.  It stays under engine's
        COST_FULL_CHUNK for every example scenario (7 combatants: 3.9), so their chunks
        and numbers are those of revision 1."""
        n = len(scenario.combatants)
        if n <= HIST_MAX_N:
            return 1.0
        return n * (0.55 + n / 2500)

    def rollers(self, scenario: Any) -> list[tuple[str, int, int]]:
        if scenario.rules["mode"] == "group":  # P2: one d10 per side
            return [(side, 1, D10) for side in scenario.sides]
        return [(c.name, 1, D10) for c in scenario.combatants]  # P1

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
