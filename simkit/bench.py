"""`simkit bench`: rounds per second of each system on this machine.

Each system plays a 4-combatant, 2-side scenario with default policies (the same as
benchmarks/scenarios/), one worker and the requested workers taking turns, ``REPEAT``
times each after a warm-up run that loads (or compiles) the kernels; the best of each
counts (a single run of a fraction of a second is at the mercy of a busy machine).
Without ``--rounds`` a system plays 16 whole chunks, doubled until one worker takes
``MIN_SECONDS``: a fast kernel plays 16 chunks in a tenth of a second, where starting
the workers and merging their sums would weigh on the speed-up.
benchmarks/throughput.py measures the same from the command line, process start-up
included.
"""

from __future__ import annotations

import time

import numpy as np

from simkit import systems
from simkit.engine import default_workers, simulate
from simkit.engine.core import CHUNK_ROUNDS
from simkit.scenario import Scenario, scenario_from_dict

# 16 whole chunks (engine.CHUNK_ROUNDS) of a 4-combatant scenario: 1, 2, 4, 8 or 16
# workers get equal shares.  (4,000,000 rounds were 15 chunks and a quarter one: two
# workers then split 8 to 7.26 chunks, a ceiling of 1.91 x before anything else.)
DEFAULT_ROUNDS = 16 * CHUNK_ROUNDS
REPEAT = 5
MIN_SECONDS = 0.5


def bench_scenarios() -> dict[str, Scenario]:
    """The benchmark scenario of every registered system: 2 vs 2, default policies."""
    return {
        s.name: scenario_from_dict(s.bench_scenario(), source=f"<bench {s.name}>")
        for s in systems.all_systems()
    }


def measure(scenario: Scenario, rounds: int, workers: int) -> float:
    """Rounds per second of one run (kernels already loaded)."""
    start = time.perf_counter()
    simulate(scenario, rounds, np.random.SeedSequence(1), workers=workers)
    return rounds / (time.perf_counter() - start)


def main(rounds: int | None = None, workers: int | None = None) -> int:
    given = rounds
    workers = workers or default_workers()
    how = f"{given:,} rounds" if given else f"16 chunks or more, one worker >= {MIN_SECONDS} s"
    print(f"simkit bench: 4 combatants on 2 sides, best of {REPEAT}; {how} a run")
    header = f"{'system':<11} {'rounds':>11} {'1 worker':>14}"
    if workers > 1:
        header += f" {f'{workers} workers':>14} {'speed-up':>9}"
    print(header)
    print("-" * len(header))
    for system, scenario in bench_scenarios().items():
        simulate(scenario, 1000, np.random.SeedSequence(0), workers=1)  # load the kernel
        rounds = given or DEFAULT_ROUNDS
        while not given and rounds / measure(scenario, rounds, 1) < MIN_SECONDS:
            rounds *= 2
        one = many = 0.0
        for _ in range(REPEAT):  # one worker and many taking turns
            one = max(one, measure(scenario, rounds, 1))
            if workers > 1:
                many = max(many, measure(scenario, rounds, workers))
        line = f"{system:<11} {rounds:>11,} {one:>12,.0f}/s"
        if workers > 1:
            line += f" {many:>12,.0f}/s {many / one:>8.2f}x"
        print(line)
    return 0
