"""Cost of a round as the fight grows: rounds/s and ns per die at 4, 20, 50 and 200
combatants for every system, one worker, kernels warm.

Readiness uses combatants of readiness 20 at every size (200 x 20: 4,000 dice a round);
vtm and perception roll one d10 each.  Half the combatants on each of two sides, a third
of them waiting (readiness ``hold = "until_enemy_acts"``, vtm ``delay``) so that the
general paths are measured too.  Each size runs for about 2 s, ``--repeat`` times (default
3), the sizes taking turns, and the best rate of each counts (these machines are noisy:
a ratio of two single runs can be off by a third).

Usage: python benchmarks/scaling.py [--sizes 4,20,50,200] [--seconds 2] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from simkit import engine
from simkit.scenario import scenario_from_dict

SIZES = (4, 20, 50, 200)


def scenario(system: str, n: int) -> tuple[object, int]:
    """A scenario of ``n`` combatants and its dice per round."""
    entries = []
    for i in range(n):
        entry = {"name": f"C{i}", "side": "ab"[i % 2]}
        if system == "readiness":
            entry.update(readiness=20, hold="until_enemy_acts" if i % 3 == 0 else "never")
        elif system == "vtm":
            entry.update(rating=4 + i % 5, delay="until_enemy_acts" if i % 3 == 0 else "never")
        else:
            entry.update(perception=3 + i % 5)
        entries.append(entry)
    doc = {"scenario": {"name": f"{system} x {n}", "system": system}, "combatant": entries}
    dice = 20 * n if system == "readiness" else n
    return scenario_from_dict(doc, source=f"<{system} {n}>"), dice


def rate(s: object, seconds: float) -> float:
    seq = np.random.SeedSequence(1)
    engine.simulate(s, 256, seq, workers=1)  # warm
    rounds = 256
    while True:
        start = time.perf_counter()
        engine.simulate(s, rounds, seq, workers=1)
        took = time.perf_counter() - start
        if took >= seconds / 4 or rounds > 10**8:
            return rounds / took
        rounds *= 4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--systems", default="readiness,vtm,perception")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    systems = args.systems.split(",")
    cases = {(system, n): scenario(system, n) for system in systems for n in sizes}
    best: dict[tuple[str, int], float] = {}
    for _ in range(max(1, args.repeat)):  # every case once per pass: they take turns
        for case, (s, _dice) in cases.items():
            best[case] = max(best.get(case, 0.0), rate(s, args.seconds))
    print(f"Cost as the fight grows (one worker, warm kernels, best of {max(1, args.repeat)})")
    header = (
        f"{'system':<11} {'combatants':>10} {'dice/round':>10} {'rounds/s':>12} {'ns/die':>8} "
        f"{'x at 4':>7}"
    )
    print(header)
    print("-" * len(header))
    for system in systems:
        base = None
        for n in sizes:
            dice = cases[system, n][1]
            r = best[system, n]
            ns = 1e9 / (r * dice)
            base = base or ns
            print(
                f"{system:<11} {n:>10} {dice:>10} {r:>12,.0f} {ns:>8.1f} {ns / base:>7.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
