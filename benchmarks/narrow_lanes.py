"""The readiness lanes' update loop in 64-bit and in 32-bit lanes, side by side in ONE
process: does numba's 64-bit arithmetic keep the lanes at 8 rounds a vector instruction?

numba types ``uint32 op uint32`` as uint64 (and int32 as int64).  LLVM can still use
32-bit vector lanes where every result is truncated back to 32 bits and stored into a
uint32 array.  The loop measured is the hottest of ``lanes.play_passes``: its per
combatant update (the actor's counts and spend, R7's answer of the target, the new R3
key and the best of them), ``update64`` as lanes.py had it before its state was 32-bit
(int64 state, pools in 8-bit
face fields, counts in two 64-bit words) and ``update32`` the same work on uint32 state
(pools in 4-bit face fields, keys in 18 bits with 0 for "no key", the two count words
split into four 32-bit words).  Both are first checked to leave the same state (every
pool, key, first step, flag and count unpacked and compared) from the same random lanes,
then timed taking turns, and their assembly's vector instructions counted by element
width (``vpaddd`` against ``vpaddq``, ...).

Printed: ns per combatant-lane update of each (mean over the turns), the ratio
64-bit / 32-bit with the quartiles of the single turns' ratios, and per version the
count of 256/512-bit (ymm/zmm) integer instructions on dwords and on qwords.

Usage: python benchmarks/narrow_lanes.py [--combatants 4] [--reps 20000] [--turns 16]
"""

from __future__ import annotations

import argparse
import re
import statistics
import time

import numpy as np
from numba import types
from numba.extending import intrinsic

from simkit.systems.readiness.codes import NEVER_HASTY, NO_STEP
from simkit.systems.readiness.lanes import (
    A_DEFENSES,
    A_EARLY,
    A_OUTCOME,
    B_HITS,
    HOT,
    INNER,
    K_COUNT,
    K_V,
    LANES,
    ULANES,
)
from simkit.systems.support import leading_zeros, njit

FIELD = 8  # the 64-bit lanes' pools: the count of face f in bits 8(f-1) .. 8f-1


@njit(**HOT)
def _top(pool):
    """rules.top: the highest face of a pool of 8-bit fields, 0 if empty."""
    return (71 - leading_zeros(pool)) >> 3


@njit(**HOT)
def _key(pool, rk):
    """rules.key_of in the 64-bit lanes' layout; -1 if empty."""
    v = _top(pool)
    count = (pool >> ((v - 1) * FIELD)) & 255
    return ((v << K_V) | (count << K_COUNT) | rk) if pool != 0 else np.int64(-1)


@njit(**HOT)
def _larger(x, y):
    return x if x > y else y


U = np.uint32
NO_STEP32 = U(0xFFFFFFFF)
# rows of S as in lanes.play_passes
STEP, BEST, ACT, CLS, AUX, SHR, MR, SEL, SPD = (
    np.uint64(k * LANES) for k in (2, 3, 4, 6, 7, 8, 9, 10, 14)
)
S_ROWS = 15
# lanes.py's options for play_passes, but callable from Python (the check below)
LOOP = {**INNER, "no_cpython_wrapper": False, "error_model": "numpy", "link_only": False}


@intrinsic
def clz32(typingctx, x):
    """Leading zero bits of a uint32 (32 for 0): llvm.ctlz.i32."""
    sig = types.uint32(types.uint32)

    def codegen(context, builder, signature, args):
        return builder.ctlz(args[0], context.get_constant(types.boolean, False))

    return sig, codegen


@njit(**HOT)
def _top32(pool):
    """The highest face of a pool of 4-bit face fields (face f in bits 4(f-1) .. 4f-1)."""
    return U((U(35) - clz32(pool)) >> U(2))


@njit(**HOT)
def _key32(pool, rk):
    """lanes._key on 32 bits: (v << 15 | count << 7 | rk), 0 if the pool is empty."""
    v = _top32(pool)
    count = U(U(pool >> U(U(U(v << U(2)) - U(4)) & U(31))) & U(15))
    k = U(U(v << U(K_V)) | U(count << U(7)) | rk)
    return k if pool != U(0) else U(0)


@njit(**HOT)
def _larger32(x, y):
    return x if x > y else y


@njit(**LOOP)
def update64(n, width, C, S, POOL, RK, FIRST, ATT, WA, WB, KEYS):
    """lanes.play_passes' update loop as it was on 64-bit state."""
    un = np.uint64(n)
    for i in range(un):
        row = i * ULANES
        me = np.int64(i)
        able = C[3, i]
        hasty_limit = C[4, i]
        for b in range(np.uint64(width)):
            a = S[SEL + b]
            step = S[STEP + b]
            acts = np.int64(S[CLS + b] == me)
            hit_me = np.int64(S[MR + b] == me)
            pool = POOL[row + b] - (S[SPD + b] & -acts)
            first0 = FIRST[row + b]
            first = step if (acts != 0) & (step < first0) else first0
            wa = WA[row + b] + (S[SHR + b] & -acts)
            die = _top(pool)
            can = able & np.int64(pool != 0)
            normal = can & np.int64(die >= a)
            hasty = can & (1 - normal) & np.int64(a - die <= hasty_limit)
            own = (normal | hasty) & hit_me
            hasty &= hit_me
            early = np.int64((ATT[row + b] == 0) & (first == NO_STEP)) & hit_me
            ATT[row + b] |= hit_me
            pool -= (own << (FIELD * (die - 1))) if die > 0 else np.int64(0)
            outcome = np.int64(2) if hasty != 0 else normal
            scale = (a - die) if a - die > 1 else np.int64(1)
            WA[row + b] = wa + (
                (
                    (early << A_EARLY)
                    + (own << A_DEFENSES)
                    + (np.int64(1) << (A_OUTCOME + 8 * outcome))
                )
                & -hit_me
            )
            WB[row + b] += (hasty << (8 * (scale - 1))) + ((hit_me & (1 - normal)) << B_HITS)
            S[AUX + b] |= own
            POOL[row + b] = pool
            FIRST[row + b] = first
            k = _key(pool, RK[row + b])
            KEYS[row + b] = k
            S[BEST + b] = _larger(S[BEST + b], k)
            goes = (acts != 0) & ((k >> K_V) == a)
            S[ACT + b] = (me + 1) if goes else (np.int64(0) if acts != 0 else S[ACT + b])


@njit(**LOOP)
def update32(n, width, C, S, POOL, RK, FIRST, ATT, WA, WA2, WB, WB2, KEYS):
    """The same loop on uint32 state: every expression truncated back to 32 bits.
    Counts: WA actions, first, made, early; WA2 defenses, undefended, defended,
    hasty_only; WB hasty_ge.1-4; WB2 hasty_ge.5, hits (8-bit fields, in that order)."""
    un = np.uint64(n)
    one = U(1)
    for i in range(un):
        row = i * ULANES
        me = U(i)
        able = U(C[3, i])
        hasty_limit = U(C[4, i])
        for b in range(np.uint64(width)):
            a = S[SEL + b]
            step = S[STEP + b]
            acts = U(S[CLS + b] == me)
            hit_me = U(S[MR + b] == me)
            macts = U(U(0) - acts)
            mhit = U(U(0) - hit_me)
            pool = U(POOL[row + b] - U(S[SPD + b] & macts))
            first0 = FIRST[row + b]
            first = step if (acts != U(0)) & (step < first0) else first0
            wa = U(WA[row + b] + U(S[SHR + b] & macts))
            die = _top32(pool)
            can = U(able & U(pool != U(0)))
            normal = U(can & U(die >= a))
            hasty = U(U(can & U(one - normal)) & U(U(a - die) <= hasty_limit))
            own = U(U(normal | hasty) & hit_me)
            hasty = U(hasty & hit_me)
            early = U(U((ATT[row + b] == U(0)) & (first == NO_STEP32)) & hit_me)
            ATT[row + b] = U(ATT[row + b] | hit_me)
            spent = U(own << U(U(U(die << U(2)) - U(4)) & U(31)))
            pool = U(pool - (spent if die > U(0) else U(0)))
            outcome = U(2) if hasty != U(0) else normal
            scale = U(a - die) if a > U(die + one) else one
            WA[row + b] = U(wa + U(U(early << U(24)) & mhit))
            WA2[row + b] = U(
                WA2[row + b] + U(U(own + U(one << U(U(8) + U(outcome << U(3))))) & mhit)
            )
            low = U(hasty << U(U(U(scale << U(3)) - U(8)) & U(31)))
            WB[row + b] = U(WB[row + b] + (low if scale < U(5) else U(0)))
            WB2[row + b] = U(
                WB2[row + b] + U(hasty & U(scale == U(5))) + U(U(hit_me & U(one - normal)) << U(8))
            )
            S[AUX + b] = U(S[AUX + b] | own)
            POOL[row + b] = pool
            FIRST[row + b] = first
            k = _key32(pool, RK[row + b])
            KEYS[row + b] = k
            S[BEST + b] = _larger32(S[BEST + b], k)
            goes = (acts != U(0)) & (U(k >> U(K_V)) == a)
            S[ACT + b] = U(me + one) if goes else (U(0) if acts != U(0) else S[ACT + b])


@njit
def time64(reps, n, C, S, POOL, RK, FIRST, ATT, WA, WB, KEYS):
    for _ in range(reps):
        update64(n, LANES, C, S, POOL, RK, FIRST, ATT, WA, WB, KEYS)


@njit
def time32(reps, n, C, S, POOL, RK, FIRST, ATT, WA, WA2, WB, WB2, KEYS):
    for _ in range(reps):
        update32(n, LANES, C, S, POOL, RK, FIRST, ATT, WA, WA2, WB, WB2, KEYS)


def lanes64(n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random lanes in the middle of a 4 x 3 round: pools of 3 dice, an actor spending its
    highest die (or nobody), a target (or nobody), the actor's count word."""
    faces = rng.integers(1, 7, (n, LANES, 3))
    pool = np.zeros((n, LANES), dtype=np.int64)
    for d in range(3):
        keep = rng.random((n, LANES)) < 0.8  # some dice already spent
        pool += np.where(keep, np.int64(1) << (FIELD * (faces[:, :, d] - 1)), 0)
    S = np.zeros(S_ROWS * LANES, dtype=np.int64)
    actor = rng.integers(-1, n, LANES)
    tops = np.zeros((n, LANES), dtype=np.int64)
    for f in range(1, 7):
        tops = np.where((pool >> (FIELD * (f - 1))) & 255 != 0, f, tops)
    a = np.where(actor >= 0, tops[np.maximum(actor, 0), np.arange(LANES)], 0)
    actor = np.where(a > 0, actor, -1)
    a = np.where(actor >= 0, a, 0)
    row = {k: slice(int(v), int(v) + LANES) for k, v in
           dict(STEP=STEP, CLS=CLS, MR=MR, SEL=SEL, SPD=SPD, SHR=SHR, ACT=ACT).items()}  # fmt: skip
    S[row["STEP"]] = rng.integers(0, 6, LANES)
    S[row["CLS"]] = actor
    S[row["MR"]] = np.where(rng.random(LANES) < 0.6, rng.integers(0, n, LANES), -1)
    S[row["SEL"]] = a
    S[row["SPD"]] = np.where(a > 0, np.int64(1) << (FIELD * (np.maximum(a, 1) - 1)), 0)
    S[row["SHR"]] = 1 + ((S[row["STEP"]] == 0) << 8) + (rng.integers(0, 2, LANES) << 16)
    S[row["ACT"]] = rng.integers(0, n + 1, LANES)
    S[int(BEST) : int(BEST) + LANES] = -1
    C = np.zeros((6, n), dtype=np.int64)
    C[3] = rng.integers(0, 2, n) | 1
    C[4] = rng.choice([NEVER_HASTY, 0, 1, 2, 5], n)
    rk = np.array([[(rng.integers(0, n) << 4) | (rng.integers(0, 2) << 3) | (7 - i)
                    for _ in range(LANES)] for i in range(n)], dtype=np.int64)  # fmt: skip
    first = np.where(rng.random((n, LANES)) < 0.5, rng.integers(0, 4, (n, LANES)), NO_STEP)
    return dict(
        C=C,
        S=S,
        POOL=pool.ravel(),
        RK=rk.ravel(),
        FIRST=first.ravel().astype(np.int64),
        ATT=rng.integers(0, 2, n * LANES).astype(np.int64),
        WA=rng.integers(0, 2, n * LANES).astype(np.int64) * 0x0101,
        WB=np.zeros(n * LANES, dtype=np.int64),
        KEYS=np.full(n * LANES, -1, dtype=np.int64),
    )


def pool32(pool: np.ndarray) -> np.ndarray:
    """Pools of 8-bit face fields as 4-bit face fields."""
    out = np.zeros(pool.shape, dtype=np.uint32)
    for f in range(6):
        out |= (((pool >> (8 * f)) & 15) << (4 * f)).astype(np.uint32)
    return out


def narrow(st: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The 64-bit lanes' state as the 32-bit loop holds it."""
    S = st["S"].copy()
    spd = slice(int(SPD), int(SPD) + LANES)
    S[spd] = pool32(S[spd]).astype(np.int64)
    best = slice(int(BEST), int(BEST) + LANES)
    S[best] = np.maximum(S[best], 0)  # no key: 0
    C = st["C"].copy()
    C[4] = np.maximum(C[4], 0)  # NEVER_HASTY: no scale is <= 0 where it matters
    wa, wb = st["WA"].astype(np.uint64), st["WB"].astype(np.uint64)
    return dict(
        C=C,
        S=S.astype(np.uint32),
        POOL=pool32(st["POOL"]),
        RK=st["RK"].astype(np.uint32),
        FIRST=np.where(st["FIRST"] == NO_STEP, NO_STEP32, st["FIRST"]).astype(np.uint32),
        ATT=st["ATT"].astype(np.uint32),
        WA=(wa & 0xFFFFFFFF).astype(np.uint32),
        WA2=(wa >> np.uint64(32)).astype(np.uint32),
        WB=(wb & 0xFFFFFFFF).astype(np.uint32),
        WB2=(wb >> np.uint64(32)).astype(np.uint32),
        KEYS=np.where(st["KEYS"] < 0, 0, st["KEYS"]).astype(np.uint32),
    )


def check(n: int, seed: int) -> None:
    """update64 and update32 from the same lanes leave the same state."""
    rng = np.random.default_rng(seed)
    st = lanes64(n, rng)
    s32 = narrow(st)
    update64(
        n,
        LANES,
        st["C"],
        st["S"],
        st["POOL"],
        st["RK"],
        st["FIRST"],
        st["ATT"],
        st["WA"],
        st["WB"],
        st["KEYS"],
    )
    update32(n, LANES, s32["C"], s32["S"], s32["POOL"], s32["RK"], s32["FIRST"], s32["ATT"],
             s32["WA"], s32["WA2"], s32["WB"], s32["WB2"], s32["KEYS"])  # fmt: skip
    want = narrow(st)
    for name in ("POOL", "RK", "FIRST", "ATT", "WA", "WA2", "WB", "KEYS"):
        assert np.array_equal(want[name], s32[name]), name
    hits = (st["WB"].astype(np.uint64) >> np.uint64(B_HITS)) & np.uint64(255)
    ge5 = (st["WB"].astype(np.uint64) >> np.uint64(32)) & np.uint64(255)
    assert np.array_equal(s32["WB2"], (ge5 | hits << np.uint64(8)).astype(np.uint32)), "WB2"
    for row in (STEP, BEST, ACT, AUX):
        r = slice(int(row), int(row) + LANES)
        assert np.array_equal(
            np.where(st["S"][r] < 0, 0, st["S"][r]).astype(np.uint32), s32["S"][r]
        ), row


OPS = re.compile(r"^\s*(vp[a-z0-9]+)\s+.*%([yz])mm")


def widths(fn) -> dict[str, int]:
    """Integer vector instructions on ymm/zmm registers in ``fn``'s assembly, by element
    width: mnemonics ending in d/ud (dwords) or q/uq (qwords)."""
    asm = "\n".join(fn.inspect_asm().values())
    out = {"dword": 0, "qword": 0, "zmm": 0, "ymm": 0}
    for line in asm.splitlines():
        m = OPS.match(line)
        if not m:
            continue
        op, reg = m.groups()
        out[reg + "mm"] += 1
        if op.endswith("q") or op.endswith("64"):
            out["qword"] += 1
        elif op.endswith("d") or op.endswith("32"):
            out["dword"] += 1
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--combatants", type=int, default=4)
    ap.add_argument("--reps", type=int, default=20000)
    ap.add_argument("--turns", type=int, default=16)
    args = ap.parse_args()
    n = args.combatants
    for seed in range(200):
        check(n, seed)
    print(f"same state from 200 random blocks of {LANES} lanes x {n} combatants")
    st = lanes64(n, np.random.default_rng(1))
    s32 = narrow(st)
    a64 = (
        st["C"],
        st["S"],
        st["POOL"],
        st["RK"],
        st["FIRST"],
        st["ATT"],
        st["WA"],
        st["WB"],
        st["KEYS"],
    )
    a32 = (s32["C"], s32["S"], s32["POOL"], s32["RK"], s32["FIRST"], s32["ATT"],
           s32["WA"], s32["WA2"], s32["WB"], s32["WB2"], s32["KEYS"])  # fmt: skip
    time64(1, n, *a64)
    time32(1, n, *a32)
    per = args.reps * n * LANES
    t = {"64": [], "32": []}
    for turn in range(args.turns):
        for name in ("64", "32") if turn % 2 == 0 else ("32", "64"):
            start = time.perf_counter()
            if name == "64":
                time64(args.reps, n, *a64)
            else:
                time32(args.reps, n, *a32)
            t[name].append((time.perf_counter() - start) / per * 1e9)
    ratios = [x / y for x, y in zip(t["64"], t["32"], strict=True)]
    q1, _, q3 = statistics.quantiles(ratios, n=4)
    for name in ("64", "32"):
        w = widths(update64 if name == "64" else update32)
        print(
            f"{name}-bit: {statistics.mean(t[name]):.3f} ns a combatant-lane; vector ops "
            f"dword {w['dword']} qword {w['qword']} (zmm {w['zmm']}, ymm {w['ymm']})"
        )
    print(f"64-bit / 32-bit: {statistics.mean(t['64']) / statistics.mean(t['32']):.3f} "
          f"(turns' quartiles {q1:.3f}-{q3:.3f})")  # fmt: skip


if __name__ == "__main__":
    main()
