"""Readiness rounds side by side ("lanes"): ``LANES`` rounds at once, exactly as
``rules.play_round`` plays them one by one, for the scenarios it can serve
(``kernel.run_chunk`` sends them to lanes_run.py; docs/performance.md has the figures).

Which scenarios
---------------
``why_not_lanes`` names the first reason a scenario cannot take the lanes (``REASONS``;
kept on ``kernel.Compiled.lanes_off``): the lanes not enabled (``ENABLED``), any hold
policy, guard (R7, or R7a's guard of named allies), ``hit_chance`` below 1,
``attack_share`` strictly between 0 and 1, advantage (R2), fights (R8a: a fight's rounds
are played by ``kernel.rows``, never by ``run_chunk``, and ``opening`` needs fights),
more than ``MAX_LANE_COMBATANTS`` combatants, more than ``MAX_LANE_DICE`` dice a round,
or a count the lanes do not carry (``LANE_CARRIES``).  Every other field value is
modelled: ``surprised``, every ``defend`` policy (with ``hit_chance`` 1 a
``+when_effective`` form answers as the policy it modifies), every ``order``, any
target lists.  A scenario without holds has no stalemate (R8): every cycle is one round.

How
---
A block of ``LANES`` consecutive rounds of a chunk: row ``b`` of every per-lane array is
round ``r0 + b``.  Each round's first ``LANE_WORDS`` stream outputs (``round_start`` and
xoshiro, the words ``next_u64`` gives) are computed for all lanes at once; every draw
of the round is a byte of them, at the lane's own position.  A round whose draws
would need a byte beyond them (or a second rejected byte of one draw, or more than
``MAX_REJECTED`` rejected bytes among its dice) is marked not *ok* and played again,
alone, by ``rules.play_round`` (the scalar player) into its column: the sums are those
of the scalar path bit for bit.

Every loop runs along the lanes (the innermost loop over ``b``), the combatants and
dice in loops outside it, with no branch on a lane's data and no call LLVM cannot
vectorise (numba's ``min`` and ``max`` are such calls: selects instead): LLVM
vectorises them.  R1 reads the bytes as rows (byte p of every lane), die k one of the
rows k .. k + MAX_REJECTED + 1 chosen by the lane's rejected bytes so far.  A pass
plays one action in every lane still playing (R3's choice from keys computed from the
pools, T3's draw where the best key has a twin, R4's spend, R7's target draw and
response).  After ``FIRST_PASSES`` passes the rounds still playing are moved to the
front of the block and played alone until no die is left.  The counts of a combatant
are two packed words of 8-bit fields per lane (``WORD_A``, ``WORD_B``), each held as two
32-bit halves: the same counts ``play_round`` writes.  lanes_run.py flushes a whole
block straight from these words (lanes_flush.py); ``play_block`` (benchmarks, tests)
unpacks them into the kernel's counts array ``Y`` instead (``write_counts``; the flush
derives the rest).

The state is 32-bit from ``start_block`` to the flush (uint32 rows: pools in 5-bit face
fields, keys 0 for none, the stream words as eight 32-bit words, NONE32 for nobody and
no first step), so that LLVM runs every loop of a pass on 32-bit vector lanes: 16
rounds an AVX-512 instruction instead of 8 (docs/performance.md).
"""

from __future__ import annotations

import numpy as np

from simkit.systems.base import SHARE_ALWAYS, SHARE_NEVER
from simkit.systems.counting import first_reason
from simkit.systems.readiness.codes import (
    ACTIONS,
    ATTACKED_BEFORE_ACTING,
    ATTACKS_MADE,
    COUNT_COLUMNS,
    COUNTS,
    DEFEND_NEVER,
    DEFENDED,
    DEFENSES,
    FIRST_ACTION,
    GUARD_NEVER,
    HASTY_GE_1,
    HASTY_ONLY,
    HIT_ALWAYS,
    HITS,
    HOLD_CODES,
    N_FIELDS,
    NO_STEP,
    ORDER_CHAIN_UNBROKEN,
    ORDER_DYNAMIC,
    P_ADVANTAGE,
    P_DEFEND,
    P_DICE,
    P_GUARD,
    P_HASTY_LIMIT,
    P_HIT,
    P_HOLD,
    P_SHARE,
    P_SURPRISED,
    P_TARGET_COUNT,
    P_TARGET_START,
    SIDES,
    UNDEFENDED,
)
from simkit.systems.stream import BYTE_LIMIT, RECIPROCAL, _mix, round_start
from simkit.systems.support import JIT_DISABLED, njit

# On: measured faster than the scalar path (docs/performance.md).  False turns them off.
ENABLED = True
LANES = 256  # rounds side by side (a block; 128 measured 1.06 x this time, 512 1.08 x)
ULANES = np.uint64(LANES)
LANE_WORDS = 4  # stream outputs a lane holds: 32 byte draws
# rows of the per-lane arrays (unsigned: the index arithmetic needs no fix-up)
(ROW0, ROW1, ROW2, ROW3, ROW4, ROW5, ROW6, ROW7, ROW8, ROW9, ROW10, OKS, ORIG, OFF, SPD) = (
    np.uint64(k * LANES) for k in range(15)
)
S_ROWS = 15
FIRST_PASSES = np.int64(7)  # passes over the whole block; then the rounds still playing alone
LANE_BYTES = 8 * LANE_WORDS
MAX_LANE_COMBATANTS = 8
TARGET_BITS = 3  # a target in lane_tables' list word C[6]: up to 8 entries of 3 bits
assert MAX_LANE_COMBATANTS <= 1 << TARGET_BITS and MAX_LANE_COMBATANTS * TARGET_BITS <= 32
MAX_LANE_DICE = 24  # dice a round: more would outrun the lane's bytes too often
MAX_PASSES = np.int64(MAX_LANE_DICE + 1)  # more than any round can play
# R1 in a lane: at most this many rejected bytes among its dice (more: played again);
# die k is then one of the bytes k .. k + MAX_REJECTED + 1
MAX_REJECTED = 3
assert MAX_LANE_DICE + MAX_REJECTED + 1 <= LANE_BYTES
# The counts a lane writes (the flush derives no_action, attacks_received, hasty_defenses
# and hasty_scale_total from them); the rest must be counts the scenario never makes.
LANE_CARRIES = (
    "first_action",
    "actions",
    "attacked_before_acting",
    "defenses",
    "attacks_made",
    "undefended",
    "defended",
    "hasty_only",
    *(f"hasty_ge.{k}" for k in range(1, 6)),
    "hits",
)
DERIVED = ("no_action", "attacks_received", "hasty_defenses", "hasty_scale_total")
# Why the lanes cannot serve a scenario (``why_not_lanes``, ``kernel.Compiled.lanes_off``).
REASONS = (
    "not_enabled",
    "hold",
    "guard",
    "hit_chance",
    "attack_share_between_0_and_1",
    "advantage",
    "fights",
    "too_many_combatants",
    "too_many_dice",
    "uncarried_count",
)
# A combatant's counts in a lane: 8-bit fields of two words (a count of one round is at
# most MAX_LANE_DICE < 256), in this order.
WORD_A = np.array(
    [ACTIONS, FIRST_ACTION, ATTACKS_MADE, ATTACKED_BEFORE_ACTING, DEFENSES, UNDEFENDED, DEFENDED,
     HASTY_ONLY], dtype=np.int64)  # fmt: skip
WORD_B = np.array([HASTY_GE_1 + k for k in range(5)] + [HITS], dtype=np.int64)
A_ACTIONS, A_FIRST, A_MADE, A_EARLY, A_DEFENSES, A_OUTCOME = 0, 8, 16, 24, 32, 40
B_HITS = 40
# R3 keys in a lane: (v, T1 count of v, T2 rank, twin flag, 7 - i), the order of
# rules.key_of's keys
K_V, K_COUNT, K_RANK, K_TWIN = 15, 7, 4, 3


def why_not_lanes(p: np.ndarray, never: frozenset[str], fights: bool) -> str | None:
    """None if the lanes can play the scenario's rounds, else the name of the first
    reason they cannot (``REASONS``).  ``p``: the parameters (kernel.Compiled.params),
    ``never``: counts the scenario cannot make, ``fights``: the scenario is played as
    fights (R8a).  Any counts array will do: the lanes' replays use its column 0."""
    return first_reason(
        [
            ("not_enabled", ENABLED),
            ("hold", bool((p[P_HOLD] == HOLD_CODES["never"]).all())),
            ("guard", bool((p[P_GUARD] == GUARD_NEVER).all())),
            ("hit_chance", bool((p[P_HIT] == HIT_ALWAYS).all())),
            (
                "attack_share_between_0_and_1",
                bool(np.isin(p[P_SHARE], (SHARE_ALWAYS, SHARE_NEVER)).all()),
            ),
            ("advantage", bool((p[P_ADVANTAGE] == 0).all())),
            ("fights", not fights),
            ("too_many_combatants", p.shape[1] <= MAX_LANE_COMBATANTS),
            ("too_many_dice", int(p[P_DICE].sum()) <= MAX_LANE_DICE),
            (
                "uncarried_count",
                all(c in LANE_CARRIES or c in DERIVED or c in never for c in COUNTS),
            ),
        ]
    )


def lane_tables(p: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Per combatant: (dice, share 0/1, target count, able to respond 0/1, hasty limit,
    its attack in one word: share | count << 1 | stream.BYTE_LIMIT[count] << 8 |
    stream.RECIPROCAL[count] << 20, its target list in one word: entry r in bits
    TARGET_BITS * r ..) as ``C`` [7, n] (a pass takes the actor's target from its
    list word by a shift: no gather)."""
    n = p.shape[1]
    C = np.zeros((7, n), dtype=np.int64)
    for i in range(n):
        C[0, i] = p[P_DICE, i]
        C[1, i] = int(p[P_SHARE, i] == SHARE_ALWAYS)
        C[2, i] = p[P_TARGET_COUNT, i]
        C[3, i] = int(p[P_SURPRISED, i] == 0 and p[P_DEFEND, i] != DEFEND_NEVER)
        C[4, i] = p[P_HASTY_LIMIT, i]
        m = int(p[P_TARGET_COUNT, i])
        C[5, i] = C[1, i] | m << 1 | int(BYTE_LIMIT[m]) << 8 | int(RECIPROCAL[m]) << 20
        start = int(p[P_TARGET_START, i])
        for r in range(int(p[P_TARGET_COUNT, i])):
            C[6, i] |= int(targets[start + r]) << (TARGET_BITS * r)
    return C


INNER = {"cache": False, "nogil": True, "no_cpython_wrapper": True, "no_cfunc_wrapper": True}
INNER["link_only"] = True  # no machine code of their own (support.njit): the driver emits it
HOT = {**INNER, "forceinline": True, "error_model": "numpy"}

# ---- the lanes' state is 32-bit from start_block to the packed words.  numba computes
# ``uint32 op uint32`` in 64 bits; every result is truncated back (``U(...)``) and stored
# into uint32 rows, so that LLVM's loop vectoriser runs the loops along the lanes on
# 32-bit vector lanes (16 rounds an AVX-512 instruction instead of 8;
# benchmarks/narrow_lanes.py, docs/performance.md).
U = np.uint32
NONE32 = U(0xFFFFFFFF)  # nobody; no first step (NO_STEP of the counts array)
FIELD32 = 5  # a pool: the count of face f in bits 5(f-1) .. 5f-1 (at most 24 < 32)
UTARGET_BITS = U(TARGET_BITS)
WORD32 = 0xFFFFF  # lane_tables' attack word without its reciprocal (``_below32``)
W_ROWS = 2 * LANE_WORDS + 1  # the stream words as 32-bit words, then a row of zeros
R16_SIDES = (65536 + SIDES - 1) // SIDES  # ceil(2**16 / SIDES): x % SIDES for a byte x
# 32-bit constants typed once at import: numba types a global np.uint32 as uint32
# (a constant), where each U(...) in a kernel is a call to type and lower
U0 = U(0)
U1 = U(1)
U2 = U(2)
U3 = U(3)
U4 = U(4)
U5 = U(5)
U6 = U(6)
U7 = U(7)
U8 = U(8)
U15 = U(15)
U13 = U(13)
U16 = U(16)
U31 = U(31)
U32 = U(32)
U252 = U(252)
U255 = U(255)
U256 = U(256)
U511 = U(511)
U8192 = U(8192)
U9363 = U(9363)
U10923 = U(10923)
U13108 = U(13108)
U16384 = U(16384)
U21846 = U(21846)
U32768 = U(32768)
U65536 = U(65536)
UA_ACTIONS = U(A_ACTIONS)
UA_EARLY = U(A_EARLY)
UA_FIRST = U(A_FIRST)
UA_MADE = U(A_MADE)
UA_OUTCOME_ONE = U(1 << (A_OUTCOME - 32))
UB_HITS_HI = U(B_HITS - 32)
UFIELD32 = U(FIELD32)
UK_COUNT = U(K_COUNT)
UK_RANK = U(K_RANK)
UK_TWIN = U(K_TWIN)
UK_V = U(K_V)
ULANE_BYTES = U(LANE_BYTES)
UMAX_REJECTED = U(MAX_REJECTED)
UR16_SIDES = U(R16_SIDES)
USIDES = U(SIDES)


if JIT_DISABLED:  # (plain Python: numba's intrinsic cannot run)

    def _clz32(x):
        """Leading zero bits of a 32-bit word (32 for 0)."""
        return U(32 - int(x).bit_length())

else:
    from numba.cpython.unsafe.numbers import leading_zeros as _clz32

# ceil(g / 5) as (g + 4) * 13 >> 6 for the bits g = 0 .. 32 of a pool (no division)
assert all((x * 13) >> 6 == x // 5 for x in range(4, 37))


@njit(**HOT)
def _top32(pool):
    """The highest face of a pool of 5-bit fields, 0 if empty: the field of its highest
    bit, from the leading zeros (``vplzcntd``, 16 lanes an instruction; six compares
    and sums before, a fifth of ``play_passes``' update loop)."""
    g = U(U32 - _clz32(pool))  # the pool's bits up to its highest set bit: 0 if empty
    return U(U(U(g + U4) * U13) >> U6)


@njit(**HOT)
def _key32(pool, rk):
    """rules.key_of in the lane layout, (v << 15 | count << 7 | rk) (``rk``: rank, twin
    and index bits), 0 if the pool is empty: every key of a pool is above 0, so the
    order of keys is rules.py's."""
    v = _top32(pool)
    count = U(U(pool >> U(U(U(v * UFIELD32) - UFIELD32) & U31)) & U31)
    k = U(U(v << UK_V) | U(count << UK_COUNT) | rk)
    return k if pool != U0 else U0


@njit(**HOT)
def _larger32(x, y):
    """max(x, y) as a select (numba's ``max`` is a call LLVM will not vectorise: a loop
    with it runs one lane at a time)."""
    return x if x > y else y


@njit(**HOT)
def _limit32(t):
    """stream.BYTE_LIMIT[t] for 0 <= t <= MAX_LANE_COMBATANTS, by selects (no gather)."""
    odd = (t == U3) | (t == U5)
    return U252 if (t == U6) | (t == U7) else (U255 if odd else U256)


@njit(**HOT)
def _below32(x, t):
    """``x % t`` for a byte x and 1 <= t <= MAX_LANE_COMBATANTS (x for t = 0): the
    reciprocal ceil(2**16 / t), exact for x < 256, chosen by selects, then one
    multiplication (no division, no table lookup: a gather or a loop here keeps LLVM
    from vectorising the loop over the lanes)."""
    rc = U(
        U(U(U0 - U(t == U1)) & U65536)
        | U(U(U0 - U(t == U2)) & U32768)
        | U(U(U0 - U(t == U3)) & U21846)
        | U(U(U0 - U(t == U4)) & U16384)
        | U(U(U0 - U(t == U5)) & U13108)
        | U(U(U0 - U(t == U6)) & U10923)
        | U(U(U0 - U(t == U7)) & U9363)
        | U(U(U0 - U(t == U8)) & U8192)
    )
    return U(x - U(U(U(x * rc) >> U16) * t))


@njit(**{**INNER, "error_model": "numpy"})
def start_block(key, r0, n, C, W64, WD, BY, S, POOL, RK, FIRST, ATT, WA, WA2, WB, WB2, KEYS):
    """The start of rounds r0 .. r0 + LANES - 1 (``play_block``'s rows): streams, R1 dice,
    T2 ranks and every combatant's R3 key, the best of them in S's row BEST; every row
    32-bit (``W64``: the streams' 64-bit words, scratch)."""
    OK, POS, STEP, BEST, CONT, AUX = ROW0, ROW1, ROW2, ROW3, ROW5, ROW7
    un = np.uint64(n)
    one = U1
    zero = U0
    golden = np.uint64(0x9E3779B97F4A7C15)
    # ---- the first LANE_WORDS outputs of every lane's stream (round_start, xoshiro)
    for b in range(ULANES):
        step = np.uint64(r0 + 1 + np.int64(b)) * golden
        s0 = _mix(key[0] + step)
        s1 = _mix(key[1] + step)
        s2 = _mix(key[2] + step)
        s3 = _mix(key[3] + step)
        for w in range(LANE_WORDS):
            x = s1 * np.uint64(5)
            W64[np.uint64(w) * ULANES + b] = (
                (x << np.uint64(7)) | (x >> np.uint64(57))
            ) * np.uint64(9)
            t = s1 << np.uint64(17)
            s2 ^= s0
            s3 ^= s1
            s1 ^= s2
            s0 ^= s3
            s2 ^= t
            s3 = (s3 << np.uint64(45)) | (s3 >> np.uint64(19))
        S[OK + b] = one
        S[POS + b] = zero
        S[STEP + b] = zero
        S[CONT + b] = zero
    # ---- R1: every combatant's dice, in scenario order.  The bytes of the streams as
    # rows (BY[p, b]: byte p of lane b); die k of the round is byte k + r of its lane, r
    # the bytes rejected before it (S[POS] meanwhile): one of four rows, by selects
    dice = np.int64(0)
    for i in range(n):
        dice += C[0, i]
    for w in range((dice + MAX_REJECTED + 8) >> 3):  # the words R1 can read
        word = np.uint64(w) * ULANES
        for j in range(8):
            out = np.uint64(8 * w + j) * ULANES
            shift = np.uint64(8 * j)
            for b in range(ULANES):
                BY[out + b] = np.uint8((W64[word + b] >> shift) & np.uint64(255))
    limit = U(BYTE_LIMIT[SIDES])
    most = UMAX_REJECTED
    k = np.uint64(0)  # the round's dice so far
    for i in range(un):
        row = i * ULANES
        for b in range(ULANES):
            POOL[row + b] = zero
            FIRST[row + b] = NONE32
            ATT[row + b] = zero
            WA[row + b] = zero
            WA2[row + b] = zero
            WB[row + b] = zero
            WB2[row + b] = zero
        for _ in range(C[0, i]):
            k0 = k * ULANES
            k1 = k0 + ULANES
            k2 = k1 + ULANES
            k3 = k2 + ULANES
            k4 = k3 + ULANES
            for b in range(ULANES):
                r = S[POS + b]
                y0 = U(BY[k0 + b])
                y1 = U(BY[k1 + b])
                y2 = U(BY[k2 + b])
                y3 = U(BY[k3 + b])
                y4 = U(BY[k4 + b])
                x = y0 if r == zero else (y1 if r == one else (y2 if r == U2 else y3))
                again = U(x >= limit)  # rejected: the next byte
                x2 = y1 if r == zero else (y2 if r == one else (y3 if r == U2 else y4))
                x = x2 if again != zero else x
                r = U(r + again)
                S[OK + b] = S[OK + b] & U((x < limit) & (r <= most))
                S[POS + b] = r
                f = U(x - ((x * UR16_SIDES) >> U16) * USIDES)
                POOL[row + b] = POOL[row + b] + (one << ((f * UFIELD32) & U31))
            k += np.uint64(1)
    # the words from byte p on, byte p the low byte of the first, as 32-bit words
    low = np.uint64(0xFFFFFFFF)
    last = np.uint64(2 * LANE_WORDS) * ULANES
    for b in range(ULANES):
        p = U(S[POS + b] + U(k))  # the next byte: the dice and the rejected bytes
        S[POS + b] = p
        q = p >> U3
        z = np.uint64(0)
        w0 = W64[b]
        w1 = W64[ROW1 + b]
        w2 = W64[ROW2 + b]
        w3 = W64[ROW3 + b]
        v0 = w0 if q == zero else (w1 if q == one else (w2 if q == U2 else w3))
        v1 = w1 if q == zero else (w2 if q == one else (w3 if q == U2 else z))
        v2 = w2 if q == zero else (w3 if q == one else z)
        v3 = w3 if q == zero else z
        s = np.uint64(U(U(p & U7) << U3))
        up = np.uint64(63) - s  # (x << 1) << (63 - s): x << (64 - s), 0 for s = 0
        u0 = (v0 >> s) | ((v1 << np.uint64(1)) << up)
        u1 = (v1 >> s) | ((v2 << np.uint64(1)) << up)
        u2 = (v2 >> s) | ((v3 << np.uint64(1)) << up)
        u3 = v3 >> s
        WD[b] = u0 & low
        WD[ROW1 + b] = u0 >> np.uint64(32)
        WD[ROW2 + b] = u1 & low
        WD[ROW3 + b] = u1 >> np.uint64(32)
        WD[ROW4 + b] = u2 & low
        WD[ROW5 + b] = u2 >> np.uint64(32)
        WD[ROW6 + b] = u3 & low
        WD[ROW7 + b] = u3 >> np.uint64(32)
        WD[last + b] = zero
    # ---- T2: ranks of the full pools (5-bit fields: the order of rules.py's pools), the
    # twin flag and the index
    for i in range(un):
        row = i * ULANES
        for b in range(ULANES):
            S[AUX + b] = zero
            RK[row + b] = zero
        for j in range(un):
            other = j * ULANES
            for b in range(ULANES):
                RK[row + b] = RK[row + b] + U(POOL[other + b] < POOL[row + b])
                S[AUX + b] = S[AUX + b] + U(POOL[other + b] == POOL[row + b])
        me = U(7 - np.int64(i))
        for b in range(ULANES):
            RK[row + b] = (RK[row + b] << UK_RANK) | (U(S[AUX + b] > one) << UK_TWIN) | me
    # ---- turns: one action per lane still playing, a pass at a time.  KEYS and S[BEST]
    # hold every combatant's R3 key and the best of them (0: the round is over)
    for b in range(ULANES):
        S[BEST + b] = zero
    for i in range(un):
        row = i * ULANES
        for b in range(ULANES):
            kk = _key32(POOL[row + b], RK[row + b])
            KEYS[row + b] = kk
            S[BEST + b] = _larger32(S[BEST + b], kk)


# inlined by numba into its caller (``inline="always"``: a few calls, so cheap to type
# there), not compiled on its own: a library of its own would optimise and emit again every
# function it calls, about 1.2 s of processor time of a cold compile (docs/performance.md)
@njit(**{**INNER, "error_model": "numpy"}, inline="always")
def play_block(
    key, r0, n, order, C, W64, WD, BY, S, POOL, RK, FIRST, ATT, WA, WA2, WB, WB2, KEYS,
    CS, Y, F,
):  # fmt: skip
    """Rounds r0 .. r0 + LANES - 1 of the chunk with key ``key``, side by side.

    ``S`` [S_ROWS, LANES] (uint32): per lane ok, position, step, best key, actor,
    continuing, class, scratch, the actor's share, target count and pool; ``WD``
    [W_ROWS, LANES] (uint32): the lane's next stream bytes; ``POOL``, ``RK``, ``FIRST``,
    ``ATT``, ``WA``, ``WA2``, ``WB``, ``WB2``, ``KEYS`` [n, LANES] (uint32): per combatant
    and lane its pool, rank bits, first step, attacked flag, packed counts (low and high
    halves of WORD_A's and WORD_B's words) and R3 key.  Leaves in ``S``'s row OKS 1 where
    the lane's round was played exactly (0: the scalar player must play it again), its
    counts in its column of ``Y`` (rows ``CS``) and its first steps in ``F``
    (``write_counts``).  Returns the passes played (the most actions of a round of the
    block).

    ``FIRST_PASSES`` passes go over the whole block; the rounds still playing then
    (about 11% at 4 x 3) are moved to the front (``compact``) and played alone to the
    end, their counts written into their own columns (``write_back``; ``Y`` has
    ``LANES`` columns: a benchmark's and a test's array, not the kernel's batch)."""
    start_block(key, r0, n, C, W64, WD, BY, S, POOL, RK, FIRST, ATT, WA, WA2, WB, WB2, KEYS)
    passes, left = play_passes(
        n, order, ULANES, FIRST_PASSES, C, WD, S, POOL, RK, FIRST, ATT, WA, WA2, WB, WB2,
        KEYS,
    )  # fmt: skip
    write_counts(n, CS, Y, F, WA, WA2, WB, WB2, FIRST)
    for b in range(ULANES):
        S[OKS + b] = S[ROW0 + b]
    if left == 0:
        return passes
    # the rounds still playing to the front (lanes 0 .. m - 1), then passes over them alone
    m, width = compact(n, S, WD, POOL, RK, FIRST, ATT, WA, WA2, WB, WB2, KEYS)
    more, _ = play_passes(
        n, order, width, MAX_PASSES, C, WD, S, POOL, RK, FIRST, ATT, WA, WA2, WB, WB2, KEYS
    )
    write_back(n, m, CS, Y, F, S, WA, WA2, WB, WB2, FIRST)
    return passes + more


@njit(**{**INNER, "error_model": "numpy"})
def play_passes(n, order, width, limit, C, WD, S, POOL, RK, FIRST, ATT, WA, WA2, WB, WB2,
                KEYS):  # fmt: skip
    """Passes over lanes 0 .. width - 1 (one action in every lane still playing each;
    ``width`` a multiple of 16: LLVM then emits no remainder loops, a third of the
    function's code) until none plays or after ``limit`` passes: (passes played, 1 if
    some lane still plays).  The rows as in ``play_block``: keys 0 for none, pools of
    5-bit face fields, the count words in halves (``WA``/``WA2``: bits 0-31 / 32-63 of
    WORD_A's word, the same for ``WB``), NONE32 for nobody and no step."""
    OK, POS, STEP, BEST, ACT, CONT, CLS, AUX = ROW0, ROW1, ROW2, ROW3, ROW4, ROW5, ROW6, ROW7
    SHR, MR, SEL = ROW8, ROW9, ROW10  # the actor's attack share, target count, pool/die
    un = np.uint64(n)
    width = np.uint64(width) & ~np.uint64(15)  # (a multiple of 16: no remainder loops)
    one = U1
    zero = U0
    passes = 0
    while True:
        # R3: the best key's combatant; T3 where its full pool has a twin (and no chain
        # goes on): the r-th of the tied class in scenario order, r = below(ties)
        playing = zero
        for b in range(width):
            playing |= U(S[BEST + b] != zero)
            S[CLS + b] = U(S[BEST + b] >> UK_RANK)  # (scratch rows: unread after return)
            S[AUX + b] = zero
        if playing == zero:
            return passes, 0
        if passes == limit:
            return passes, 1
        passes += 1
        for i in range(un):
            row = i * ULANES
            for b in range(width):
                S[AUX + b] = S[AUX + b] + U(U(KEYS[row + b] >> UK_RANK) == S[CLS + b])
        for b in range(width):
            best = S[BEST + b]
            ties = S[AUX + b]
            cont = S[CONT + b]
            need = U(
                U(U(best >> UK_TWIN) & one) & U(ties > one) & U(cont == zero) & U(best != zero)
            )
            # the lane's next bytes are the low bytes of its first word
            tl = _limit32(ties)
            lo = WD[b]
            x = U(lo & U255)
            again = U(need & U(x >= tl))  # rejected: the next byte
            x = U(U(lo >> U8) & U255) if again != zero else x
            p = U(S[POS + b] + again)
            S[OK + b] = S[OK + b] & U(U(one - need) | U(U(x < tl) & U(p < ULANE_BYTES)))
            S[POS + b] = p + need
            S[OFF + b] = U(again + need)  # bytes used this pass
            r = _below32(x, ties)
            S[AUX + b] = r if need != zero else NONE32  # the tie wanted, NONE32 if none
            first = U(U7 - U(best & U7)) if best != zero else zero
            S[ACT + b] = U(cont - one) if cont != zero else first
        # the actor (the tie drawn), its attack word (lane_tables' C[5] without its
        # reciprocal) and its target list word (C[6], in row SPD until the spend's loop)
        for i in range(un):
            row = i * ULANES
            me = U(i)
            word = U(C[5, i] & WORD32)
            listed = U(C[6, i])
            for b in range(width):
                tied = U(U(KEYS[row + b] >> UK_RANK) == S[CLS + b])
                chosen = (tied & U(S[AUX + b] == zero)) != zero
                S[AUX + b] = S[AUX + b] - tied
                acts = chosen | (S[ACT + b] == me)
                S[ACT + b] = me if acts else S[ACT + b]
                S[MR + b] = word if acts else S[MR + b]
                S[SPD + b] = listed if acts else S[SPD + b]
        # R4: the actor spends its highest die a: a chain's next die has the value of its
        # last (S[SEL]), else the best key's value (a T3 tie is of the same class); its
        # target, if it attacks
        for b in range(width):
            best = S[BEST + b]
            live = U(best != zero)  # 1 if the lane still plays
            a = U(U(S[SEL + b] if S[CONT + b] != zero else U(best >> UK_V)) * live)
            S[SEL + b] = a
            word = S[MR + b]
            shares = U(U(word & one) * live)
            # the target: below(count) (for a power of two count the same byte & mask)
            m = U(U(word >> one) & U15)
            drawn = U(shares & U(m > one))
            tl = U(U(word >> U8) & U511)
            lo = U(WD[b] >> U(U(S[OFF + b] << U3) & U31))  # (at most 2 bytes used)
            x = U(lo & U255)
            again = U(drawn & U(x >= tl))
            x = U(U(lo >> U8) & U255) if again != zero else x
            p = U(S[POS + b] + again)
            S[OK + b] = S[OK + b] & U(U(one - drawn) | U(U(x < tl) & U(p < ULANE_BYTES)))
            S[POS + b] = p + drawn
            S[OFF + b] = S[OFF + b] + U(again + drawn)
            r = U(_below32(x, m) * drawn)
            # the target list's entry r: a field of the actor's list word (no gather)
            S[MR + b] = U(U(S[SPD + b] >> U(U(r & U7) * UTARGET_BITS)) & U7)
            S[SHR + b] = shares
        for b in range(width):
            live = S[BEST + b] != zero
            # who acts (NONE32: nobody, the round is over), whom it attacks (NONE32:
            # nobody), what it spends (one die of value a, as a pool) and adds to its counts
            a = S[SEL + b]
            shares = S[SHR + b]
            step = S[STEP + b]
            S[CLS + b] = S[ACT + b] if live else NONE32
            S[MR + b] = S[MR + b] if shares != zero else NONE32
            spend = U(one << U(U(U(a * UFIELD32) - UFIELD32) & U31))
            S[SPD + b] = spend if a > zero else zero
            S[SHR + b] = U(
                U(one << UA_ACTIONS) + U(U(step == zero) << UA_FIRST) + U(shares << UA_MADE)
            )
            S[BEST + b] = zero
            S[AUX + b] = zero  # someone responded (a chain ends)
        # the actor's counts and spend, then R7: the target answers from its dice
        # before any response; each combatant's new R3 key, the best of them
        for i in range(un):
            row = i * ULANES
            me = U(i)
            able = U(C[3, i])
            hasty_limit = U(C[4, i]) if C[4, i] >= 0 else zero  # NEVER_HASTY: no scale
            for b in range(width):
                a = S[SEL + b]
                step = S[STEP + b]
                acts = U(S[CLS + b] == me)
                hit_me = U(S[MR + b] == me)
                macts = U(zero - acts)
                mhit = U(zero - hit_me)
                pool = U(POOL[row + b] - U(S[SPD + b] & macts))
                first0 = FIRST[row + b]
                first = step if (acts != zero) & (step < first0) else first0
                wa = U(WA[row + b] + U(S[SHR + b] & macts))
                die = _top32(pool)
                can = U(able & U(pool != zero))
                normal = U(can & U(die >= a))
                hasty = U(U(can & U(one - normal)) & U(U(a - die) <= hasty_limit))
                own = U(U(normal | hasty) & hit_me)
                hasty = U(hasty & hit_me)
                early = U(U((ATT[row + b] == zero) & (first == NONE32)) & hit_me)
                ATT[row + b] = ATT[row + b] | hit_me
                spent = U(own << U(U(U(die * UFIELD32) - UFIELD32) & U31))
                pool = U(pool - (spent if die > zero else zero))
                outcome = U2 if hasty != zero else normal
                scale = U(a - die) if a > U(die + one) else one
                # WA: actions, first, made, early | WA2: defenses, undefended, defended,
                # hasty_only; WB: hasty_ge.1-4 | WB2: hasty_ge.5, hits (8-bit fields)
                # (early has hit_me in it; the shifts masked to 31: 32-bit vector shifts)
                WA[row + b] = wa + U(early << UA_EARLY)
                WA2[row + b] = U(
                    WA2[row + b] + U(U(own + U(UA_OUTCOME_ONE << U(U(outcome << U3) & U31))) & mhit)
                )
                low = U(hasty << U(U(U(scale << U3) - U8) & U31))
                WB[row + b] = WB[row + b] + (low if scale < U5 else zero)
                WB2[row + b] = U(
                    WB2[row + b]
                    + U(hasty & U(scale == U5))
                    + U(U(hit_me & U(one - normal)) << UB_HITS_HI)
                )
                S[AUX + b] = S[AUX + b] | own
                POOL[row + b] = pool
                FIRST[row + b] = first
                k = _key32(pool, RK[row + b])
                KEYS[row + b] = k
                S[BEST + b] = _larger32(S[BEST + b], k)
                # a chain may go on: the actor's next die has the value a (its new key's)
                goes = (acts != zero) & (U(k >> UK_V) == a)
                S[ACT + b] = U(me + one) if goes else (zero if acts != zero else S[ACT + b])
        # R3 (chain orders): the actor goes on with its next die of value a unless a
        # response broke the run ("chain"), or always ("chain_unbroken")
        unbroken = U(order == ORDER_CHAIN_UNBROKEN)
        chained = U(order != ORDER_DYNAMIC)
        for b in range(width):
            keep = U(chained & U(unbroken | U(S[AUX + b] == zero)))
            S[CONT + b] = S[ACT + b] * keep
            S[STEP + b] = S[STEP + b] + U(S[CLS + b] != NONE32)
            # the bytes used this pass out (at most 4: 32 bits; (y << 1) << (31 - sh) is
            # y << (32 - sh), 0 for sh = 0), every word in this loop (a loop a word, 8 of
            # them, doubled the LLVM IR of the function: a slower cold compile)
            whole = S[OFF + b] == U4
            sh = U((S[OFF + b] << U3) & U31)
            up = U(U31 - sh)
            x0 = WD[b]
            x1 = WD[ROW1 + b]
            x2 = WD[ROW2 + b]
            x3 = WD[ROW3 + b]
            x4 = WD[ROW4 + b]
            x5 = WD[ROW5 + b]
            x6 = WD[ROW6 + b]
            x7 = WD[ROW7 + b]
            x8 = WD[ROW8 + b]  # zeros
            WD[b] = x1 if whole else (x0 >> sh) | ((x1 << one) << up)
            WD[ROW1 + b] = x2 if whole else (x1 >> sh) | ((x2 << one) << up)
            WD[ROW2 + b] = x3 if whole else (x2 >> sh) | ((x3 << one) << up)
            WD[ROW3 + b] = x4 if whole else (x3 >> sh) | ((x4 << one) << up)
            WD[ROW4 + b] = x5 if whole else (x4 >> sh) | ((x5 << one) << up)
            WD[ROW5 + b] = x6 if whole else (x5 >> sh) | ((x6 << one) << up)
            WD[ROW6 + b] = x7 if whole else (x6 >> sh) | ((x7 << one) << up)
            WD[ROW7 + b] = x8 if whole else (x7 >> sh) | ((x8 << one) << up)


@njit(**INNER)
def compact(n, S, WD, POOL, RK, FIRST, ATT, WA, WA2, WB, WB2, KEYS):
    """The lanes still playing moved to the front, in order (lane j their j-th, ``S``'s
    row ORIG its lane): every row a pass reads.  Returns (m, the width to play: m
    rounded up to a multiple of 16, the lanes m .. width - 1 emptied: no dice).  Their
    lanes are listed first with no branch (a lane's index written, the count moved on
    if it still plays; a branch a lane, mispredicted, made ``compact`` about 15% of
    the block's time), then moved."""
    m = np.uint64(0)
    for b in range(ULANES):
        S[ORIG + m] = U(b)
        m += np.uint64(S[ROW3 + b] != 0)
    for j in range(m):
        b = np.uint64(S[ORIG + j])
        for row in (ROW0, ROW1, ROW2, ROW3, ROW5, ROW10):  # ok, position, step, best,
            # continuing, the last die
            S[row + j] = S[row + b]
        for w in range(2 * LANE_WORDS):
            WD[np.uint64(w) * ULANES + j] = WD[np.uint64(w) * ULANES + b]
        for i in range(np.uint64(n)):
            row = i * ULANES
            POOL[row + j] = POOL[row + b]
            RK[row + j] = RK[row + b]
            FIRST[row + j] = FIRST[row + b]
            ATT[row + j] = ATT[row + b]
            WA[row + j] = WA[row + b]
            WA2[row + j] = WA2[row + b]
            WB[row + j] = WB[row + b]
            WB2[row + j] = WB2[row + b]
            KEYS[row + j] = KEYS[row + b]
    width = (m + np.uint64(15)) & ~np.uint64(15)
    for j in range(m, width):
        S[ROW3 + j] = 0
        S[ROW5 + j] = 0
        for i in range(np.uint64(n)):
            POOL[i * ULANES + j] = 0
            KEYS[i * ULANES + j] = 0
    return m, width


@njit(**HOT)
def word64(lo, hi):
    """A packed count word (``WORD_A``'s or ``WORD_B``'s) from its 32-bit halves."""
    return np.int64(lo) | (np.int64(hi) << 32)


@njit(**HOT)
def first64(f):
    """A first step as the counts array holds it (NONE32: NO_STEP)."""
    return np.int64(f) if f != NONE32 else NO_STEP


@njit(**INNER)
def write_back(n, m, CS, Y, F, S, WA, WA2, WB, WB2, FIRST):
    """The counts, first steps and ok flags of the compacted lanes 0 .. m - 1 into the
    columns of their rounds (``S``'s row ORIG), as ``write_counts`` writes them."""
    for j in range(m):
        b = np.uint64(S[ORIG + j])
        S[OKS + b] = S[ROW0 + j]
        for i in range(n):
            row = np.uint64(i) * ULANES
            wa = word64(WA[row + j], WA2[row + j])
            wb = word64(WB[row + j], WB2[row + j])
            for k in range(WORD_A.size):
                Y[CS[i, WORD_A[k]] + b] = (wa >> (8 * k)) & 255
            for k in range(WORD_B.size):
                Y[CS[i, WORD_B[k]] + b] = (wb >> (8 * k)) & 255
            F[i, b] = first64(FIRST[row + j])


@njit(**INNER)
def write_counts(n, CS, Y, F, WA, WA2, WB, WB2, FIRST):
    """The packed counts of every lane into its column of ``Y`` (rows ``CS[i, count]``,
    scaled to the batch, the lane its column) and the first steps into ``F``."""
    for i in range(np.uint64(n)):
        row = i * ULANES
        for k in range(WORD_A.size):
            out = CS[i, WORD_A[k]]
            half = WA if k < 4 else WA2
            shift = U(8 * (k & 3))
            for b in range(ULANES):
                Y[out + b] = U(half[row + b] >> shift) & U255
        for k in range(WORD_B.size):
            out = CS[i, WORD_B[k]]
            half = WB if k < 4 else WB2
            shift = U(8 * (k & 3))
            for b in range(ULANES):
                Y[out + b] = U(half[row + b] >> shift) & U255
        for b in range(ULANES):
            F[i, b] = first64(FIRST[row + b])


@njit(**INNER)
def clear_column(n, CS, Y, F, b):
    """Zero lane b's counts (the rows ``write_counts`` writes) before the scalar player
    plays its round again."""
    ub = np.uint64(b)
    for i in range(n):
        for k in range(WORD_A.size):
            Y[CS[i, WORD_A[k]] + ub] = 0
        for k in range(WORD_B.size):
            Y[CS[i, WORD_B[k]] + ub] = 0
        F[i, b] = NO_STEP


__all__ = [
    "COUNT_COLUMNS",
    "LANES",
    "LANE_CARRIES",
    "N_FIELDS",
    "REASONS",
    "clear_column",
    "lane_tables",
    "play_block",
    "round_start",
    "why_not_lanes",
    "write_counts",
]
