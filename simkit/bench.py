"""`simkit bench`: rounds per second of each system on this machine.

Each system plays a 4-combatant, 2-side scenario with default policies (the same as
benchmarks/scenarios/), first one worker, then the requested workers, after a
warm-up run that loads (or compiles) the kernels.  benchmarks/throughput.py
measures the same from the command line, process start-up included.
"""

from __future__ import annotations

import time

import numpy as np

from simkit.engine import default_workers, simulate
from simkit.scenario import Scenario, scenario_from_dict

DEFAULT_ROUNDS = 4_000_000


def bench_scenarios() -> dict[str, Scenario]:
    """The benchmark scenario of each system: 2 vs 2, default policies."""

    def make(system: str, a: dict, b: dict) -> Scenario:
        return scenario_from_dict(
            {
                "scenario": {"name": f"bench {system}", "system": system},
                "combatant": [
                    {"name": "A", "side": "a", "count": 2, **a},
                    {"name": "B", "side": "b", "count": 2, **b},
                ],
            },
            source=f"<bench {system}>",
        )

    return {
        "readiness": make("readiness", {"readiness": 3}, {"readiness": 3}),
        "vtm": make("vtm", {"dexterity": 3, "wits": 2}, {"dexterity": 2, "wits": 2}),
        "perception": make("perception", {"perception": 4}, {"perception": 6}),
    }


def measure(scenario: Scenario, rounds: int, workers: int) -> float:
    """Rounds per second of one run (kernels already loaded)."""
    start = time.perf_counter()
    simulate(scenario, rounds, np.random.SeedSequence(1), workers=workers)
    return rounds / (time.perf_counter() - start)


def main(rounds: int | None = None, workers: int | None = None) -> int:
    rounds = rounds or DEFAULT_ROUNDS
    workers = workers or default_workers()
    print(f"simkit bench: {rounds:,} rounds per measurement, 4 combatants on 2 sides")
    header = f"{'system':<11} {'1 worker':>14} {f'{workers} workers':>14}"
    print(header)
    print("-" * len(header))
    for system, scenario in bench_scenarios().items():
        try:
            simulate(scenario, 1000, np.random.SeedSequence(0), workers=1)  # load the kernel
        except ImportError as exc:  # a system not built into this version
            print(f"{system:<11} unavailable: {exc}")
            continue
        one = measure(scenario, rounds, 1)
        many = measure(scenario, rounds, workers) if workers > 1 else one
        print(f"{system:<11} {one:>12,.0f}/s {many:>12,.0f}/s")
    return 0
