"""What ``simkit policies`` costs: scenarios/boss_fight.toml at 200,000 rounds a variant,
warm kernels (a first search at 2,000 rounds compiles every code path it reaches), in
this process; then ``--equilibrium`` the same way.  Wall and CPU time (all threads): on a
machine shared with other work the CPU time divided by the cores is what wall time
would be alone.  Targets (issue 27): the search
within 30 s, the equilibrium within 2 minutes, on the 2-core reference machine.

Usage: python benchmarks/policies.py
"""

from __future__ import annotations

import time
from pathlib import Path

import simkit

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "boss_fight.toml"
ROUNDS = 200_000


def main() -> None:
    simkit.policies(SCENARIO, rounds=2000, equilibrium=True)  # warm every code path
    print(f"simkit policies of scenarios/boss_fight.toml, {ROUNDS:,} rounds a variant (warm)")
    start, cpu = time.perf_counter(), time.process_time()
    search = simkit.policies(SCENARIO, rounds=ROUNDS)
    took, used = time.perf_counter() - start, time.process_time() - cpu
    print(
        f"  policies:      {took:6.1f} s wall, {used:6.1f} s CPU, {search.variants} variants",
        flush=True,
    )
    start, cpu = time.perf_counter(), time.process_time()
    found = simkit.policies(SCENARIO, rounds=ROUNDS, equilibrium=True)
    took, used = time.perf_counter() - start, time.process_time() - cpu
    e = found.equilibrium
    assert e is not None
    print(
        f"  --equilibrium: {took:6.1f} s wall, {used:6.1f} s CPU, {found.variants} variants, "
        f"{e.status} after {e.turns} turns",
        flush=True,
    )


if __name__ == "__main__":
    main()
