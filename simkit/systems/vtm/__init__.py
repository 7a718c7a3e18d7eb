"""System ``vtm``: d10 + Dexterity + Wits initiative (RULES.md V1-V7)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from simkit.metrics import Layout, Sums
from simkit.systems.base import REQUIRED, Problem, SystemBase, Trace
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
        "ties going to the higher rating (V2); slower combatants declare first (V3)."
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
            "scenario": {"name": "bench vtm", "system": self.name},
            "combatant": [
                {"name": "A", "side": "a", "count": 2, "dexterity": 3, "wits": 2},
                {"name": "B", "side": "b", "count": 2, "dexterity": 2, "wits": 2},
            ],
        }


SYSTEM = Vtm()
assert FIELDS["rating"].default is REQUIRED
