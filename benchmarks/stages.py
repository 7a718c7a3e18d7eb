"""Where a readiness round goes: the stages of ``run_chunk`` timed apart, one worker.

Four numba drivers play the same rounds of a scenario (one chunk key, the rounds' own
streams) and stop after a stage: ``roll`` (the stream's start and R1's dice), ``set-up``
(also the per-round resets and the set-up: T2 ranks, R3 keys and tree, written as
``rules.play_round`` has them), ``turns`` (the whole ``rules.play_round``, the counts
array never flushed) and ``run_chunk`` itself (with its flushes).  A stage costs the
difference of two drivers; the four take turns ``--repeat`` times and the median of each
counts.  The flush is also timed alone (``flush_cycles`` on one saved batch again and
again, warm caches, less the copying of the batch), a steadier figure than a difference
of two drivers whose play code numba lays out differently.  numpy's time for the round's
dice (``Generator.integers``) is printed as the yardstick.

Usage: python benchmarks/stages.py [--scenario benchmarks/scenarios/two_hundred_readiness.toml]
       [--rounds 2000] [--repeat 15] [--batch N]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from pathlib import Path

import numpy as np
from numba import njit

from simkit.engine.core import prepare
from simkit.scenario import load_scenario
from simkit.systems.readiness import codes, kernel, rules
from simkit.systems.readiness.codes import (
    COUNT_COLUMNS,
    G_LOG_BATCH,
    G_ROUND,
    N_FIELDS,
    NO_STEP,
    P_DICE,
    R3_SET,
    SIDES,
    W_ATTACKED,
    W_FIRST,
    W_IN_R3,
    W_POOL,
    W_RANK,
)
from simkit.systems.stream import round_start
from simkit.systems.support import unmanaged, with_columns

HERE = Path(__file__).resolve().parent
DEFAULT = HERE / "scenarios" / "two_hundred_readiness.toml"
STAGES = ("roll", "set-up", "turns", "flush")
ROWS = getattr(codes, "W_ROWS", -1)  # (a tree before W_ROWS: -1, not set)
OWN = getattr(codes, "W_OWN", -1)  # (a tree before the packed counts: -1, not set)
AIMED = getattr(codes, "W_AIMED", -1)
if hasattr(rules, "roll_round"):  # R1 of a whole round, as play_round draws it
    roll_round = rules.roll_round
else:  # (a tree before it: roll_many a combatant)

    @njit
    def roll_round(st, P, W, n):
        for i in range(n):
            pool, _ = rules.roll_many(st, P[i, P_DICE], SIDES, rules.FIELD, rules.FACE_BITS)
            W[i, W_POOL] = pool


def driver(stage: int, may_hold: bool):
    """``run_rounds`` stopping after stage ``stage`` (0 roll, 1 set-up, 2 turns)."""
    play = kernel.play_holds if may_hold else kernel.play_plain
    counting = hasattr(rules, "rank_by_counting")
    rank_large = rules.rank_by_counting if counting else rules.rank_by_sorting

    @njit
    def run(key, first, n_rounds, W, T, GL, CS, G, KT, Y, F, L, EV, st):
        key = unmanaged(key)
        W = with_columns(W, N_FIELDS)
        CS = with_columns(CS, COUNT_COLUMNS)
        T = unmanaged(T)
        GL = unmanaged(GL)
        G = unmanaged(G)
        KT = unmanaged(KT)
        Y = unmanaged(Y)
        F = unmanaged(F)
        L = unmanaged(L)
        EV = unmanaged(EV)
        st = unmanaged(st)
        lb = G[G_LOG_BATCH]
        b = 0
        n = W.shape[0]
        carry = 0
        for r in range(first, first + n_rounds):
            round_start(st, key, r)
            G[G_ROUND] = r
            if stage == 2:
                carry = play(st, W, W, G, KT, T, GL, Y, np.uint64(b), CS, F, EV, carry)
                L[b] += 1
                if carry == 0:
                    b = (b + 1) & ((1 << lb) - 1)
                continue
            roll_round(st, W, W, n)
            if stage == 1:  # play_round's resets and set-up, as written there
                for i in range(n):
                    W[i, W_ATTACKED] = 0
                    W[i, W_FIRST] = NO_STEP
                    if ROWS >= 0:
                        W[i, ROWS] = np.int64(CS[i, 0] + b)
                    if OWN >= 0 and n > rules.ONE_LEVEL:
                        W[i, OWN] = 0
                        W[i, AIMED] = 0
                if n <= rules.RANK_BY_COUNTING:
                    for i in range(n):
                        pi = W[i, W_POOL]
                        rank = 0
                        same = 0
                        for j in range(n):
                            rank += np.int64(W[j, W_POOL] < pi)
                            same += np.int64(W[j, W_POOL] == pi)
                        W[i, W_RANK] = rules.rank_field(rank, same > 1, i)
                elif counting:
                    rank_large(W, KT)
                else:  # (a tree before ranks by counting: its heapsort)
                    rank_large(W)
                for i in range(n):
                    KT[R3_SET, 0, i] = rules.key_of(W[i, W_POOL], W[i, W_RANK])
                    if may_hold:
                        W[i, W_IN_R3] = 1
                rules.rebuild(KT, R3_SET)
        return carry

    return run


def flush_alone(may_hold: bool):
    """``reps`` flushes of one saved batch (each on a fresh copy of its counts), or only
    the copies (``copy_only``): their difference is the flush of a batch, warm."""
    flush = kernel.flush_cycles if may_hold else kernel.flush_single

    @njit
    def run(reps, copy_only, Y0, L0, Y, F, FT, L, nb, lb, CS, plan, sums):
        CS = with_columns(CS, COUNT_COLUMNS)
        for _ in range(reps):
            for m in range(Y.size):
                Y[m] = Y0[m]
            for m in range(L.size):
                L[m] = L0[m]
            if not copy_only:
                flush(Y, F, FT, L, nb, lb, CS, plan, sums)

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenario", default=str(DEFAULT))
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--batch", type=int, default=0, help="cycles per flush (0: the kernel's)")
    args = parser.parse_args()
    scenario = load_scenario(args.scenario)
    job = prepare(scenario)
    compiled = job.compiled
    if args.batch:
        compiled = dataclasses.replace(compiled, batch=args.batch)
    drivers = [driver(k, compiled.may_hold) for k in range(3)]
    key = np.random.SeedSequence(1).generate_state(4, dtype=np.uint64)

    def staged(k: int) -> float:
        W, G, KT, Y, F, L, st = kernel._work(compiled, compiled.batch, False, compiled.params)
        CS = compiled.count_table << np.uint64(G[G_LOG_BATCH])
        EV = np.zeros((0, 8), dtype=np.int64)
        start = time.perf_counter()
        drivers[k](
            key, 0, args.rounds, W, compiled.targets, compiled.guards, CS, G, KT, Y, F, L, EV, st
        )
        return time.perf_counter() - start

    def whole() -> float:
        sums = job.layout.new_sums()
        start = time.perf_counter()
        kernel.run_chunk(compiled, key, args.rounds, sums)
        return time.perf_counter() - start

    dice = int(compiled.params[P_DICE].sum())
    rng = np.random.default_rng(1)

    def numpy_dice() -> float:
        start = time.perf_counter()
        for _ in range(args.rounds):
            rng.integers(1, SIDES + 1, size=dice, dtype=np.int8)
        return time.perf_counter() - start

    # one batch played and kept, then flushed again and again
    W, G, KT, Y, F, L, st = kernel._work(compiled, compiled.batch, False, compiled.params)
    CS = compiled.count_table << np.uint64(G[G_LOG_BATCH])
    drivers[2](
        key, 0, compiled.batch, W, compiled.targets, compiled.guards, CS, G, KT, Y, F, L,
        np.zeros((0, 8), dtype=np.int64), st,
    )  # fmt: skip
    n = compiled.n
    sums = job.layout.new_sums()
    parts = [sums.s1, sums.s2, sums.sl, sums.sx, sums.tot, np.zeros((2, n, n), np.int64)]
    if hasattr(kernel, "ACC_LIMIT"):  # acts_before collected in 16 bits
        parts.append(np.zeros(n * n, dtype=np.int16))
    plan = compiled.plan
    saved = (Y.copy(), L.copy())
    FT = np.zeros((compiled.batch + 1) * n, dtype=np.int16)
    lb = int(G[G_LOG_BATCH])
    flusher = flush_alone(compiled.may_hold)
    reps = max(1, args.rounds // compiled.batch)

    def flushed(copy_only: bool) -> float:
        start = time.perf_counter()
        flusher(reps, copy_only, *saved, Y, F, FT, L, compiled.batch, lb, CS, plan, tuple(parts))
        return time.perf_counter() - start

    runs = [lambda k=k: staged(k) for k in range(3)] + [whole, numpy_dice]
    runs += [lambda: flushed(False), lambda: flushed(True)]
    for run in runs:  # compile and warm
        run()
    times: list[list[float]] = [[] for _ in runs]
    for turn in range(args.repeat):
        order = range(len(runs)) if turn % 2 == 0 else reversed(range(len(runs)))
        for k in order:
            times[k].append(runs[k]() / args.rounds * 1e6)
    med = [statistics.median(t) for t in times]
    cumulative = med[:4]
    parts = [cumulative[0]] + [cumulative[k] - cumulative[k - 1] for k in range(1, 4)]
    print(
        f"{Path(args.scenario).name}: {compiled.n} combatants, {dice} dice a round, "
        f"{args.rounds} rounds x {args.repeat} turns (median), counts batch {compiled.batch}"
    )
    print(f"{'stage':<10} {'us/round':>9}")
    print("-" * 20)
    for name, t in zip(STAGES, parts, strict=True):
        print(f"{name:<10} {t:>9.2f}")
    print(f"{'round':<10} {cumulative[3]:>9.2f}   ({1e6 / cumulative[3]:,.0f} rounds/s)")
    print(f"{'numpy':<10} {med[4]:>9.2f}   (the round's dice, Generator.integers)")
    alone = (med[5] - med[6]) * args.rounds / (reps * compiled.batch)
    print(f"{'flush':<10} {alone:>9.2f}   (alone: one batch flushed again and again, a cycle)")


if __name__ == "__main__":
    main()
