"""What ``simkit sensitivity`` costs: scenarios/boss_fight.toml (six units, so twelve
main-stat variants, and six rule alternatives: 19 runs) at its own 1,000,000 rounds a
run and at 200,000, warm kernels, in this process, every core.  Best of three.  The
issue's bound: within 20 s warm on a 2-core machine.

Usage: python benchmarks/sensitivity.py
"""

from __future__ import annotations

import time
from pathlib import Path

import simkit

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "boss_fight.toml"


def main() -> None:
    simkit.sensitivity(SCENARIO, rounds=2000)  # kernels compiled or loaded
    print("simkit sensitivity of scenarios/boss_fight.toml (warm), best of 3")
    for rounds in (200_000, 1_000_000):
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            s = simkit.sensitivity(SCENARIO, rounds=rounds)
            best = min(best, time.perf_counter() - start)
        runs = 1 + len(s.variants)
        print(
            f"  {rounds:>9,} rounds a run x {runs} runs: {best:.2f} s "
            f"({runs * rounds / best:,.0f} rounds/s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
