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
a counts array with fewer than ``LANES`` cycles a row, or a count the lanes do not carry
(``LANE_CARRIES``).  Every other field value is modelled: ``surprised``, every
``defend`` policy (with ``hit_chance`` 1 a ``+when_effective`` form answers as the policy
it modifies), every ``order``, any target lists.  A scenario without holds has no
stalemate (R8): every cycle is one round.

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
are two packed words of 8-bit fields per lane (``WORD_A``, ``WORD_B``): the same counts
``play_round`` writes.  lanes_run.py flushes a whole block straight from these words
(lanes_flush.py); ``play_block`` (benchmarks, tests) unpacks them into the kernel's
counts array ``Y`` instead (``write_counts``; the flush derives the rest).
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
from simkit.systems.support import leading_zeros, njit

# On: measured faster than the scalar path (docs/performance.md).  False turns them off.
ENABLED = True
LANES = 128  # rounds side by side (a block); the counts array has at least as many columns
ULANES = np.uint64(LANES)
LANE_WORDS = 4  # stream outputs a lane holds: 32 byte draws
# rows of the per-lane arrays (unsigned: the index arithmetic needs no fix-up)
(ROW0, ROW1, ROW2, ROW3, ROW4, ROW5, ROW6, ROW7, ROW8, ROW9, ROW10, OKS, ORIG, OFF, SPD) = (
    np.uint64(k * LANES) for k in range(15)
)
S_ROWS = 15
FIRST_PASSES = np.int64(7)  # passes over the whole block; then the rounds still playing alone
# stream.below's reciprocals ceil(2**32 / t) of the small counts (``_below_small``)
R1, R2, R3, R4, R5, R6, R7, R8 = (
    int(RECIPROCAL[k]) for k in range(1, 9)
)  # rows of the per-lane scalars ``S``
LANE_BYTES = 8 * LANE_WORDS
MAX_LANE_COMBATANTS = 8
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
    "small_batch",
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
FIELD = 8  # a pool as in rules.py: the count of face f in bits 8(f-1) .. 8f-1


def why_not_lanes(p: np.ndarray, batch: int, never: frozenset[str], fights: bool) -> str | None:
    """None if the lanes can play the scenario's rounds, else the name of the first
    reason they cannot (``REASONS``).  ``p``: the parameters (kernel.Compiled.params),
    ``batch``: the counts array's cycles per row, ``never``: counts the scenario cannot
    make, ``fights``: the scenario is played as fights (R8a)."""
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
            ("small_batch", batch >= LANES),
            (
                "uncarried_count",
                all(c in LANE_CARRIES or c in DERIVED or c in never for c in COUNTS),
            ),
        ]
    )


def lane_tables(p: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per combatant: (dice, share 0/1, target count, able to respond 0/1, hasty limit,
    its attack in one word: share | count << 1 | stream.BYTE_LIMIT[count] << 8 |
    stream.RECIPROCAL[count] << 20) as ``C`` [6, n], and its target list as row i of
    ``TT`` [n, MAX_LANE_COMBATANTS]."""
    n = p.shape[1]
    C = np.zeros((6, n), dtype=np.int64)
    TT = np.zeros(n * MAX_LANE_COMBATANTS, dtype=np.int64)
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
            TT[i * MAX_LANE_COMBATANTS + r] = targets[start + r]
    return C, TT


INNER = {"cache": False, "nogil": True, "no_cpython_wrapper": True, "no_cfunc_wrapper": True}
HOT = {**INNER, "forceinline": True, "error_model": "numpy"}


@njit(**HOT)
def _shift(WD, b, s):
    """Lane b's words (a 256-bit number, low byte first) shifted down by ``s`` bits,
    0 <= s <= 56, zeros coming in at the top: its next byte becomes the low byte of its
    first word.  (``(x << 1) << (63 - s)``: ``x << (64 - s)``, 0 for s = 0.)"""
    one = np.uint64(1)
    up = np.uint64(63) - s
    w0 = WD[b]
    w1 = WD[ROW1 + b]
    w2 = WD[ROW2 + b]
    w3 = WD[ROW3 + b]
    WD[b] = (w0 >> s) | ((w1 << one) << up)
    WD[ROW1 + b] = (w1 >> s) | ((w2 << one) << up)
    WD[ROW2 + b] = (w2 >> s) | ((w3 << one) << up)
    WD[ROW3 + b] = w3 >> s


@njit(**HOT)
def _limit(t):
    """stream.BYTE_LIMIT[t] for 0 <= t <= MAX_LANE_COMBATANTS, by selects (no gather)."""
    odd = (t == 3) | (t == 5)
    return np.int64(252) if (t == 6) | (t == 7) else (np.int64(255) if odd else np.int64(256))


@njit(**HOT)
def _below_small(x, t):
    """``x % t`` for a byte x and 1 <= t <= MAX_LANE_COMBATANTS: stream.below's
    reciprocal of t chosen by selects, then one multiplication (no division, no table
    lookup: a gather or a loop here keeps LLVM from vectorising the loop over the lanes)."""
    rc = np.int64(0)
    rc = R1 if t == 1 else rc
    rc = R2 if t == 2 else rc
    rc = R3 if t == 3 else rc
    rc = R4 if t == 4 else rc
    rc = R5 if t == 5 else rc
    rc = R6 if t == 6 else rc
    rc = R7 if t == 7 else rc
    rc = R8 if t == 8 else rc
    return x - ((x * rc) >> 32) * t


@njit(**HOT)
def _top(pool):
    """rules.top: the highest face of a pool, 0 if empty."""
    return (71 - leading_zeros(pool)) >> 3


@njit(**HOT)
def _key(pool, rk):
    """rules.key_of in the lane layout (``rk``: rank, twin and index bits); -1 if empty."""
    v = _top(pool)
    count = (pool >> ((v - 1) * FIELD)) & 255
    return ((v << K_V) | (count << K_COUNT) | rk) if pool != 0 else np.int64(-1)


@njit(**HOT)
def _larger(x, y):
    """max(x, y) as a select (numba's ``max`` is a call LLVM will not vectorise: a loop
    with it runs one lane at a time)."""
    return x if x > y else y


@njit(**{**INNER, "error_model": "numpy"})
def start_block(key, r0, n, C, WD, BY, S, POOL, RK, FIRST, ATT, WA, WB, KEYS):
    """The start of rounds r0 .. r0 + LANES - 1 (``play_block``'s rows): streams, R1 dice,
    T2 ranks and every combatant's R3 key, the best of them in S's row BEST."""
    OK, POS, STEP, BEST, CONT, AUX = ROW0, ROW1, ROW2, ROW3, ROW5, ROW7
    un = np.uint64(n)
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
            WD[np.uint64(w) * ULANES + b] = (
                (x << np.uint64(7)) | (x >> np.uint64(57))
            ) * np.uint64(9)
            t = s1 << np.uint64(17)
            s2 ^= s0
            s3 ^= s1
            s1 ^= s2
            s0 ^= s3
            s2 ^= t
            s3 = (s3 << np.uint64(45)) | (s3 >> np.uint64(19))
        S[OK + b] = 1
        S[POS + b] = 0
        S[STEP + b] = 0
        S[CONT + b] = 0
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
                BY[out + b] = np.uint8((WD[word + b] >> shift) & np.uint64(255))
    limit = BYTE_LIMIT[SIDES]
    k = np.uint64(0)  # the round's dice so far
    for i in range(un):
        row = i * ULANES
        for b in range(ULANES):
            POOL[row + b] = 0
            FIRST[row + b] = NO_STEP
            ATT[row + b] = 0
            WA[row + b] = 0
            WB[row + b] = 0
        for _ in range(C[0, i]):
            k0 = k * ULANES
            k1 = k0 + ULANES
            k2 = k1 + ULANES
            k3 = k2 + ULANES
            k4 = k3 + ULANES
            for b in range(ULANES):
                r = S[POS + b]
                y0 = np.int64(BY[k0 + b])
                y1 = np.int64(BY[k1 + b])
                y2 = np.int64(BY[k2 + b])
                y3 = np.int64(BY[k3 + b])
                y4 = np.int64(BY[k4 + b])
                x = y0 if r == 0 else (y1 if r == 1 else (y2 if r == 2 else y3))
                again = np.int64(x >= limit)  # rejected: the next byte
                x2 = y1 if r == 0 else (y2 if r == 1 else (y3 if r == 2 else y4))
                x = x2 if again != 0 else x
                r += again
                S[OK + b] &= np.int64((x < limit) & (r <= MAX_REJECTED))
                S[POS + b] = r
                f = x - ((x * RECIPROCAL[SIDES]) >> 32) * SIDES
                POOL[row + b] += np.int64(1) << (FIELD * f)
            k += np.uint64(1)
    for b in range(ULANES):
        p = S[POS + b] + np.int64(k)  # the next byte: the dice and the rejected bytes
        S[POS + b] = p
        # the words from byte p on: byte p the low byte of the first (``_shift``)
        q = p >> 3
        zero = np.uint64(0)
        w0 = WD[b]
        w1 = WD[ROW1 + b]
        w2 = WD[ROW2 + b]
        w3 = WD[ROW3 + b]
        WD[b] = w0 if q == 0 else (w1 if q == 1 else (w2 if q == 2 else w3))
        WD[ROW1 + b] = w1 if q == 0 else (w2 if q == 1 else (w3 if q == 2 else zero))
        WD[ROW2 + b] = w2 if q == 0 else (w3 if q == 1 else zero)
        WD[ROW3 + b] = w3 if q == 0 else zero
        _shift(WD, b, np.uint64(8 * (p & 7)))
    # ---- T2: ranks of the full pools, the twin flag and the index
    for i in range(un):
        row = i * ULANES
        for b in range(ULANES):
            S[AUX + b] = 0
            RK[row + b] = 0
        for j in range(un):
            other = j * ULANES
            for b in range(ULANES):
                RK[row + b] += np.int64(POOL[other + b] < POOL[row + b])
                S[AUX + b] += np.int64(POOL[other + b] == POOL[row + b])
        for b in range(ULANES):
            RK[row + b] = (
                (RK[row + b] << K_RANK) | (np.int64(S[AUX + b] > 1) << K_TWIN) | (7 - np.int64(i))
            )
    # ---- turns: one action per lane still playing, a pass at a time.  KEYS and S[BEST]
    # hold every combatant's R3 key and the best of them (-1: the round is over)
    for b in range(ULANES):
        S[BEST + b] = -1
    for i in range(un):
        row = i * ULANES
        for b in range(ULANES):
            k = _key(POOL[row + b], RK[row + b])
            KEYS[row + b] = k
            S[BEST + b] = _larger(S[BEST + b], k)


# inlined by numba into its caller (``inline="always"``: a few calls, so cheap to type
# there), not compiled on its own: a library of its own would optimise and emit again every
# function it calls, about 1.2 s of processor time of a cold compile (docs/performance.md)
@njit(**{**INNER, "error_model": "numpy"}, inline="always")
def play_block(key, r0, n, order, C, TT, WD, BY, S, POOL, RK, FIRST, ATT, WA, WB, KEYS, CS, Y, F):
    """Rounds r0 .. r0 + LANES - 1 of the chunk with key ``key``, side by side.

    ``S`` [S_ROWS, LANES]: per lane ok, position, step, best key, actor, continuing,
    class, scratch, the actor's share, target count and pool; ``POOL``, ``RK``,
    ``FIRST``, ``ATT``, ``WA``, ``WB``, ``KEYS`` [n, LANES]: per combatant and lane its
    pool, rank bits, first step, attacked flag, packed counts and R3 key.  Leaves in
    ``S``'s row OKS 1 where the lane's round was played exactly (0: the scalar player
    must play it again), its counts in its column of ``Y`` (rows ``CS``) and its first
    steps in ``F`` (``write_counts``).  Returns the passes played (the most actions of
    a round of the block).

    ``FIRST_PASSES`` passes go over the whole block; the rounds still playing then
    (about 11% at 4 x 3) are moved to the front (``compact``) and played alone to the
    end, their counts written into their own columns (``write_back``)."""
    start_block(key, r0, n, C, WD, BY, S, POOL, RK, FIRST, ATT, WA, WB, KEYS)
    passes, left = play_passes(
        n, order, ULANES, FIRST_PASSES, C, TT, WD, S, POOL, RK, FIRST, ATT, WA, WB, KEYS
    )
    write_counts(n, CS, Y, F, WA, WB, FIRST)
    for b in range(ULANES):
        S[OKS + b] = S[ROW0 + b]
    if left == 0:
        return passes
    # the rounds still playing to the front (lanes 0 .. m - 1), then passes over them alone
    m, width = compact(n, S, WD, POOL, RK, FIRST, ATT, WA, WB, KEYS)
    more, _ = play_passes(
        n, order, width, MAX_PASSES, C, TT, WD, S, POOL, RK, FIRST, ATT, WA, WB, KEYS
    )
    write_back(n, m, CS, Y, F, S, WA, WB, FIRST)
    return passes + more


@njit(**{**INNER, "error_model": "numpy"})
def play_passes(n, order, width, limit, C, TT, WD, S, POOL, RK, FIRST, ATT, WA, WB, KEYS):
    """Passes over lanes 0 .. width - 1 (one action in every lane still playing each)
    until none plays or after ``limit`` passes: (passes played, 1 if some lane still
    plays).  The rows as in ``play_block``."""
    OK, POS, STEP, BEST, ACT, CONT, CLS, AUX = ROW0, ROW1, ROW2, ROW3, ROW4, ROW5, ROW6, ROW7
    SHR, MR, SEL = ROW8, ROW9, ROW10  # the actor's attack share, target count, pool/die
    un = np.uint64(n)
    width = np.uint64(width)
    passes = 0
    while True:
        playing = np.int64(0)
        for b in range(width):
            playing |= np.int64(S[BEST + b] >= 0)
        if playing == 0:
            return passes, 0
        if passes == limit:
            return passes, 1
        passes += 1
        # R3: the best key's combatant; T3 where its full pool has a twin (and no chain
        # goes on): the r-th of the tied class in scenario order, r = below(ties)
        for b in range(width):
            S[CLS + b] = S[BEST + b] >> K_RANK
            S[AUX + b] = 0
        for i in range(un):
            row = i * ULANES
            for b in range(width):
                S[AUX + b] += np.int64((KEYS[row + b] >> K_RANK) == S[CLS + b])
        for b in range(width):
            best = S[BEST + b]
            ties = S[AUX + b]
            cont = S[CONT + b]
            need = (
                ((best >> K_TWIN) & 1)
                & np.int64(ties > 1)
                & np.int64(cont == 0)
                & np.int64(best >= 0)
            )
            # the lane's next bytes are the low bytes of its first word (``_shift``)
            tl = _limit(ties)
            lo = WD[b]
            x = np.int64(lo & np.uint64(255))
            again = need & np.int64(x >= tl)  # rejected: the next byte
            x = np.int64((lo >> np.uint64(8)) & np.uint64(255)) if again != 0 else x
            p = S[POS + b] + again
            S[OK + b] &= ~need | np.int64((x < tl) & (p < LANE_BYTES))
            S[POS + b] = p + need
            S[OFF + b] = again + need  # bytes used this pass
            r = _below_small(x, ties)
            S[AUX + b] = r if need != 0 else np.int64(-1)  # the tie wanted, -1 if none
            S[ACT + b] = (cont - 1) if cont != 0 else (7 - (best & 7))
        # the actor (the tie drawn) and its attack word (lane_tables' C[5])
        for i in range(un):
            row = i * ULANES
            me = np.int64(i)
            word = C[5, i]
            for b in range(width):
                tied = np.int64((KEYS[row + b] >> K_RANK) == S[CLS + b])
                chosen = (tied & np.int64(S[AUX + b] == 0)) != 0
                S[AUX + b] -= tied
                acts = chosen | (S[ACT + b] == me)
                S[ACT + b] = me if acts else S[ACT + b]
                S[MR + b] = word if acts else S[MR + b]
        # R4: the actor spends its highest die a: a chain's next die has the value of its
        # last (S[SEL]), else the best key's value (a T3 tie is of the same class); its
        # target, if it attacks
        for b in range(width):
            best = S[BEST + b]
            live = np.int64(best >> 63) + 1  # 1 if the lane still plays
            c = S[ACT + b]
            a = (S[SEL + b] if S[CONT + b] != 0 else best >> K_V) * live
            S[SEL + b] = a
            word = S[MR + b]
            shares = (word & 1) * live
            # the target: below(count) (for a power of two count the same byte & mask)
            m = (word >> 1) & 15
            drawn = shares & np.int64(m > 1)
            tl = (word >> 8) & 511
            lo = WD[b] >> np.uint64(8 * S[OFF + b])  # (at most 2 bytes used: in the word)
            x = np.int64(lo & np.uint64(255))
            again = drawn & np.int64(x >= tl)
            x = np.int64((lo >> np.uint64(8)) & np.uint64(255)) if again != 0 else x
            p = S[POS + b] + again
            S[OK + b] &= ~drawn | np.int64((x < tl) & (p < LANE_BYTES))
            S[POS + b] = p + drawn
            S[OFF + b] += again + drawn
            r = (x - ((x * (word >> 20)) >> 32) * m) * drawn
            # the target list's entry r, looked up below (a gather would keep this loop
            # from vectorising)
            S[CLS + b] = np.int64(
                (np.uint64(c) & np.uint64(7)) * np.uint64(MAX_LANE_COMBATANTS)
            ) + (r & 7)
            S[SHR + b] = shares
        for b in range(width):
            S[MR + b] = TT[S[CLS + b]]
        for b in range(width):
            live = np.int64(S[BEST + b] >> 63) + 1
            # who acts (-1: nobody, the round is over), whom it attacks (-1: nobody), what
            # it spends (one die of value a, as a pool) and adds to its counts
            a = S[SEL + b]
            shares = S[SHR + b]
            step = S[STEP + b]
            S[CLS + b] = S[ACT + b] if live != 0 else np.int64(-1)
            S[MR + b] = S[MR + b] if shares != 0 else np.int64(-1)
            S[SPD + b] = (np.int64(1) << (FIELD * (a - 1))) if a > 0 else np.int64(0)
            S[SHR + b] = (
                (np.int64(1) << A_ACTIONS) + (np.int64(step == 0) << A_FIRST) + (shares << A_MADE)
            )
            S[BEST + b] = -1
            S[AUX + b] = 0  # someone responded (a chain ends)
        # the actor's counts and spend, then R7: the target answers from its dice
        # before any response; each combatant's new R3 key, the best of them
        for i in range(un):
            row = i * ULANES
            me = np.int64(i)
            able = C[3, i]
            hasty_limit = C[4, i]
            for b in range(width):
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
                # a chain may go on: the actor's next die has the value a (its new key's)
                goes = (acts != 0) & ((k >> K_V) == a)
                S[ACT + b] = (me + 1) if goes else (np.int64(0) if acts != 0 else S[ACT + b])
        # R3 (chain orders): the actor goes on with its next die of value a unless a
        # response broke the run ("chain"), or always ("chain_unbroken")
        unbroken = np.int64(order == ORDER_CHAIN_UNBROKEN)
        chained = np.int64(order != ORDER_DYNAMIC)
        for b in range(width):
            keep = chained & (unbroken | np.int64(S[AUX + b] == 0))
            S[CONT + b] = S[ACT + b] * keep
            S[STEP + b] += np.int64(S[CLS + b] >= 0)
            _shift(WD, b, np.uint64(8 * S[OFF + b]))  # the bytes used this pass out


@njit(**INNER)
def compact(n, S, WD, POOL, RK, FIRST, ATT, WA, WB, KEYS):
    """The lanes still playing moved to the front, in order (lane j their j-th, ``S``'s
    row ORIG its lane): every row a pass reads.  Returns (m, the width to play: m
    rounded up to a multiple of 8, the lanes m .. width - 1 emptied: no dice)."""
    m = np.uint64(0)
    for b in range(ULANES):
        if S[ROW3 + b] < 0:
            continue
        j = m
        m += np.uint64(1)
        S[ORIG + j] = np.int64(b)
        if j == b:
            continue
        for row in (ROW0, ROW1, ROW2, ROW3, ROW5, ROW10):  # ok, position, step, best,
            # continuing, the last die
            S[row + j] = S[row + b]
        for w in range(LANE_WORDS):
            WD[np.uint64(w) * ULANES + j] = WD[np.uint64(w) * ULANES + b]
        for i in range(np.uint64(n)):
            row = i * ULANES
            POOL[row + j] = POOL[row + b]
            RK[row + j] = RK[row + b]
            FIRST[row + j] = FIRST[row + b]
            ATT[row + j] = ATT[row + b]
            WA[row + j] = WA[row + b]
            WB[row + j] = WB[row + b]
            KEYS[row + j] = KEYS[row + b]
    width = (m + np.uint64(7)) & ~np.uint64(7)
    for j in range(m, width):
        S[ROW3 + j] = -1
        S[ROW5 + j] = 0
        for i in range(np.uint64(n)):
            POOL[i * ULANES + j] = 0
            KEYS[i * ULANES + j] = -1
    return m, width


@njit(**INNER)
def write_back(n, m, CS, Y, F, S, WA, WB, FIRST):
    """The counts, first steps and ok flags of the compacted lanes 0 .. m - 1 into the
    columns of their rounds (``S``'s row ORIG), as ``write_counts`` writes them."""
    for j in range(m):
        b = np.uint64(S[ORIG + j])
        S[OKS + b] = S[ROW0 + j]
        for i in range(n):
            row = np.uint64(i) * ULANES
            for k in range(WORD_A.size):
                Y[CS[i, WORD_A[k]] + b] = (np.uint64(WA[row + j]) >> np.uint64(8 * k)) & np.uint64(
                    255
                )
            for k in range(WORD_B.size):
                Y[CS[i, WORD_B[k]] + b] = (np.uint64(WB[row + j]) >> np.uint64(8 * k)) & np.uint64(
                    255
                )
            F[i, b] = FIRST[row + j]


@njit(**INNER)
def write_counts(n, CS, Y, F, WA, WB, FIRST):
    """The packed counts of every lane into its column of ``Y`` (rows ``CS[i, count]``,
    scaled to the batch, the lane its column) and the first steps into ``F``."""
    for i in range(np.uint64(n)):
        row = i * ULANES
        for k in range(WORD_A.size):
            out = CS[i, WORD_A[k]]
            shift = np.uint64(8 * k)
            for b in range(ULANES):
                Y[out + b] = (np.uint64(WA[row + b]) >> shift) & np.uint64(255)
        for k in range(WORD_B.size):
            out = CS[i, WORD_B[k]]
            shift = np.uint64(8 * k)
            for b in range(ULANES):
                Y[out + b] = (np.uint64(WB[row + b]) >> shift) & np.uint64(255)
        for b in range(ULANES):
            F[i, b] = FIRST[row + b]


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
