"""The readiness lanes against the scalar path and numpy's dice, stage by stage, in ONE
process taking turns (a shared machine drifts; ratios in one process stay steady).

Timed per round, ``--turns`` turns of ``--rounds`` rounds each, the order alternating:

* ``numpy dice``: ``Generator.integers(1, 7, dice * rounds, dtype=np.int8)``, the time
  issue 29's "x numpy" divides by (benchmarks/throughput.py);
* ``scalar``: ``kernel.run_chunk`` on the scalar path (``lanes_off`` forced);
* ``lanes``: ``kernel.run_chunk`` on the lanes (lanes_run.py), flush and replays included;
* ``start``: their start alone (``lanes.start_block``: streams, R1 dice, T2 ranks, keys);
* ``block``: the lanes' blocks alone (``lanes.play_block``: streams, dice, ranks, turns,
  the counts written into a batch's columns), no replays, nothing flushed;
* ``packed``: ``lanes_flush.play_block_packed`` alone (the block leaving its counts
  packed, as lanes_run.py plays it), no replays, nothing flushed;
* ``Y flush``: one block's packed counts written into the counts array
  (``lanes.write_counts``) and flushed by the scalar path's flush (``counts.flush_single``),
  once per block of the rounds: the flush before lanes_flush.py;
* ``flush``: the same block flushed from its packed counts (``lanes_flush.flush_block``).

Printed: ns a round (mean over the turns), its ratio to the scalar path and to numpy's
dice, with the quartiles of the single turns' ratios to the scalar path.

Usage: python benchmarks/lanes_stages.py [--scenario FILE] [--rounds 131072] [--turns 16]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from pathlib import Path

import numpy as np

from simkit import engine
from simkit.scenario import load_scenario
from simkit.systems.readiness import counts, kernel, lanes, lanes_flush
from simkit.systems.stream import chunk_state
from simkit.systems.support import njit

HERE = Path(__file__).resolve().parent


@njit
def blocks(key, rounds, n, order, C, W64, WD, BY, S, POOL, RK, FIRST, ATT, WA, WA2, WB, WB2,
           KEYS, CS, Y, F):  # fmt: skip
    """``lanes.play_block`` over ``rounds`` rounds (whole blocks): the passes played."""
    passes = 0
    for r0 in range(0, rounds - lanes.LANES + 1, lanes.LANES):
        passes += lanes.play_block(
            key, r0, n, order, C, W64, WD, BY, S, POOL, RK, FIRST, ATT, WA, WA2, WB, WB2,
            KEYS, CS, Y, F,
        )  # fmt: skip
    return passes


@njit
def packed_blocks(key, rounds, n, order, C, W64, WD, BY, S, POOL, RK, FIRST, ATT, WA, WA2,
                  WB, WB2, KEYS, SA, SA2, SB, SB2, SF):  # fmt: skip
    """``lanes_flush.play_block_packed`` over ``rounds`` rounds (whole blocks)."""
    passes = 0
    for r0 in range(0, rounds - lanes.LANES + 1, lanes.LANES):
        passes += lanes_flush.play_block_packed(
            key, r0, n, order, C, W64, WD, BY, S, POOL, RK, FIRST, ATT, WA, WA2, WB, WB2,
            KEYS, SA, SA2, SB, SB2, SF,
        )  # fmt: skip
    return passes


@njit
def y_flushes(rounds, n, WA, WA2, WB, WB2, FIRST, CS, Y, F, FT, L, lb, plan, sums):
    """One block's packed counts written into ``Y`` and flushed by ``counts.flush_single``,
    once per block of ``rounds``."""
    for _ in range(0, rounds - lanes.LANES + 1, lanes.LANES):
        lanes.write_counts(n, CS, Y, F, WA, WA2, WB, WB2, FIRST)
        for b in range(lanes.LANES):
            L[b] = 1
        counts.flush_single(Y, F, FT, L, lanes.LANES, lb, CS, plan, sums)


@njit
def packed_flushes(rounds, n, WA, WA2, WB, WB2, FIRST, V, packed, s1, s2, sl, sx, tot, AB):
    """The same block flushed by ``lanes_flush.flush_block``, once per block of ``rounds``."""
    for _ in range(0, rounds - lanes.LANES + 1, lanes.LANES):
        lanes_flush.flush_block(
            n, lanes.LANES, WA, WA2, WB, WB2, FIRST, V, packed, s1, s2, sl, sx, tot, AB
        )


@njit
def starts(key, rounds, n, C, W64, WD, BY, S, POOL, RK, FIRST, ATT, WA, WA2, WB, WB2, KEYS):
    """``lanes.start_block`` over ``rounds`` rounds: streams, dice, ranks and keys."""
    for r0 in range(0, rounds - lanes.LANES + 1, lanes.LANES):
        lanes.start_block(
            key, r0, n, C, W64, WD, BY, S, POOL, RK, FIRST, ATT, WA, WA2, WB, WB2, KEYS
        )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default=str(HERE / "scenarios" / "four_readiness.toml"))
    parser.add_argument("--rounds", type=int, default=131_072)
    parser.add_argument("--turns", type=int, default=16)
    args = parser.parse_args()
    lanes.ENABLED = True
    job = engine.prepare(load_scenario(args.scenario))
    compiled = job.compiled
    if compiled.lanes_off is not None:
        raise SystemExit(f"the lanes do not serve {args.scenario}: {compiled.lanes_off}")
    scalar = dataclasses.replace(compiled, lanes_off="forced")
    dice = int(compiled.dice)
    key = chunk_state(np.random.SeedSequence(1), 0)
    key4 = np.ascontiguousarray(key[:4], dtype=np.uint64)
    n = compiled.n
    C = lanes.lane_tables(compiled.params, compiled.targets)
    per = n * lanes.LANES
    work = (
        np.zeros(lanes.LANE_WORDS * lanes.LANES, dtype=np.uint64),
        np.zeros(lanes.W_ROWS * lanes.LANES, dtype=np.uint32),
        np.zeros(lanes.LANE_BYTES * lanes.LANES, dtype=np.uint8),
        np.zeros(lanes.S_ROWS * lanes.LANES, dtype=np.uint32),
        *(np.zeros(per, dtype=np.uint32) for _ in range(9)),
        compiled.count_table << np.uint64(lanes.LANES.bit_length() - 1),
        np.zeros(compiled.rows * lanes.LANES, dtype=kernel.COUNT_DTYPE),
        np.zeros((n, lanes.LANES), dtype=np.int64),
    )
    order = int(compiled.rules[0])
    rng = np.random.default_rng(1)

    def numpy_dice() -> None:
        left = dice * args.rounds
        while left > 0:
            k = min(left, 10_000_000)
            rng.integers(1, 7, k, dtype=np.int8)
            left -= k

    def run(c) -> None:
        kernel.run_chunk(c, key, args.rounds, job.layout.new_sums())

    def block() -> None:
        blocks(key4, args.rounds, n, order, C, *work)

    def start() -> None:
        starts(key4, args.rounds, n, C, *work[:-3])

    saved = tuple(np.zeros(per, dtype=np.uint32) for _ in range(5))

    def packed_block() -> None:
        packed_blocks(key4, args.rounds, n, order, C, *work[:-3], *saved)

    packed_block()  # a block's packed counts, every lane played: what the flushes flush
    plan = compiled.plan
    packed = lanes_flush.flush_plan(compiled)
    V = np.zeros(lanes_flush.scratch_size(packed), dtype=np.uint32)
    y_sums, p_sums = job.layout.new_sums(), job.layout.new_sums()
    AB = (np.zeros((2, n, n), dtype=np.int64), np.zeros((2, n, n), dtype=np.int64))
    ACC = np.zeros(n * n, dtype=np.int16)
    FT = np.zeros((lanes.LANES + 1) * n, dtype=np.int16)
    L = np.zeros(lanes.LANES, dtype=np.int64)
    lb = lanes.LANES.bit_length() - 1

    def y_flush() -> None:
        s = y_sums
        y_flushes(
            args.rounds, n, *saved, work[-3], work[-2], work[-1], FT, L, lb, plan,
            (s.s1, s.s2, s.sl, s.sx, s.tot, AB[0], ACC),
        )  # fmt: skip

    def flush() -> None:
        s = p_sums
        packed_flushes(args.rounds, n, *saved, V, packed, s.s1, s.s2, s.sl, s.sx, s.tot, AB[1])

    stages = {
        "numpy dice": numpy_dice,
        "scalar": lambda: run(scalar),
        "lanes": lambda: run(compiled),
        "block": block,
        "start": start,
        "packed": packed_block,
        "Y flush": y_flush,
        "flush": flush,
    }
    for f in stages.values():  # compile
        f()
    y_flush()
    flush()  # the two flushes of the same blocks: the same sums
    if not (y_sums.equals(p_sums) and np.array_equal(AB[0][0], AB[1][0])):
        raise SystemExit("the packed flush's sums differ from the scalar flush's")
    times = {name: [] for name in stages}
    names = list(stages)
    for turn in range(args.turns):
        for name in names if turn % 2 == 0 else reversed(names):
            start = time.process_time()
            stages[name]()
            times[name].append(time.process_time() - start)
    passes = blocks(key4, args.rounds, n, order, C, *work)
    n_blocks = args.rounds // lanes.LANES
    print(
        f"{Path(args.scenario).name}: {args.turns} turns of {args.rounds:,} rounds, "
        f"processor time; {passes / n_blocks:.2f} passes a block"
    )
    print(f"{'stage':<11} {'ns/round':>9} {'x scalar':>9} {'x numpy':>8}  quartiles (x scalar)")
    base = sum(times["scalar"])
    dice_ns = sum(times["numpy dice"])
    for name, ts in times.items():
        ratios = [t / t0 for t, t0 in zip(ts, times["scalar"], strict=True)]
        q1, _, q3 = statistics.quantiles(ratios, n=4)
        print(
            f"{name:<11} {sum(ts) / (args.rounds * args.turns) * 1e9:>9.1f} "
            f"{sum(ts) / base:>9.3f} {sum(ts) / dice_ns:>8.2f}  {q1:.3f} .. {q3:.3f}"
        )


if __name__ == "__main__":
    main()
