"""What a report costs beyond its simulation: scenarios/party_vs_wolves.toml reported at
1,000 rounds (the fixed cost: rendering, plots, files) and at 200,000 rounds, warm
kernels, in this process.  Best of three.

Usage: python benchmarks/report_cost.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import simkit

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "party_vs_wolves.toml"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        simkit.report(SCENARIO, Path(tmp) / "warm", rounds=1000)  # kernels and matplotlib
        print("Report of scenarios/party_vs_wolves.toml (warm), best of 3")
        for rounds in (1000, 200_000):
            best = float("inf")
            for k in range(3):
                start = time.perf_counter()
                simkit.report(SCENARIO, Path(tmp) / f"r{rounds}-{k}", rounds=rounds)
                best = min(best, time.perf_counter() - start)
            print(f"  {rounds:>9,} rounds: {best:.2f} s", flush=True)


if __name__ == "__main__":
    main()
