"""System ``readiness``: dice-pool initiative (RULES.md R1-R10).

``compile_scenario`` flattens a validated scenario into integer arrays;
``run_chunk`` plays a chunk of rounds and adds their counts to running sums;
``trace`` plays rounds and returns each round's counts (for the tests that compare
the kernel with the plain-Python twin in ``tests/naive_readiness.py``).

Implementation notes
--------------------
* Every spend takes a combatant's highest unspent die (R4, R5, R7).  A pool is one
  integer: the count of dice of face f in the byte at bits 8(f-1)..8f-1, so the
  highest die is the top set byte (a leading-zero count and a shift) and spending
  it is one subtraction.
* T2 of R3 compares all of the round's dice minus one die of the tied value ``v``.
  Removing one ``v`` from two sorted lists that both hold it keeps their
  lexicographic order, so T2 is the lexicographic order of the full sorted pools
  ("a die beats no die"), which is the order of the pool integers: a rank fixed for
  the whole round.
* The R3 key ``(v, count of unspent v, T2 rank)`` is packed into one integer,
  computed without branches and updated only when that combatant spends a die.
* Scenarios with a hold policy (R5, and so R8 from round to round) play on the
  general kernel ``_run_chunk`` (one table per chunk, regeneration cycles).
* Scenarios without one take ``_run_simple``: every round is a cycle of its own; the
  round state is a few short vectors; two rounds are played side by side (their
  dependency chains overlap in the processor); a finished round adds one count to a
  histogram of each combatant's outcome and one to a histogram of the order of first
  actions, expanded into the sums once per chunk.  A second build of that kernel
  (``Compiled.plain``) has the default policies as compile-time constants.  Both
  paths give the same sums as the traced rounds, exactly (tests/test_readiness_twin.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from numba import njit

from simkit.metrics import Layout, Sums, flush_cycle
from simkit.systems.stream import (
    STATE_WORDS,
    below,
    chance,
    chance_threshold,
    roll,
    round_start,
)
from simkit.systems.support import leading_zeros, unmanaged

HASTY_UP_TO = re.compile(r"^hasty_up_to:(\d+)$")

COUNTS = (
    "first_action",
    "actions",
    "no_action",
    "attacked_before_acting",
    "defenses",
    "hasty_defenses",
    "hasty_scale_total",
    "expired_dice",
)
RATIOS = (
    ("hasty_share", "hasty_defenses", "defenses"),
    ("hasty_scale", "hasty_scale_total", "hasty_defenses"),
)
SCENARIO_COUNTS = ("stalemate",)
N_COUNTS = len(COUNTS)
SQUARED = ("actions", "defenses", "hasty_defenses", "hasty_scale_total", "expired_dice")

HOLD_CODES = {"never": 0, "until_attacked": 1, "until_enemy_acts": 2}
DEFEND_CODES = {"always": 0, "never": 1, "unless_hasty": 2}
DEFEND_HASTY_UP_TO = 3

# Per-combatant columns of the kernel's one int64 table ``cb`` (parameters, then the
# round's working state, then the dice).  Few arrays keep the kernel free of
# reference-counting traffic between its helper functions.
C_DICE, C_ADV, C_SIDE, C_HOLD, C_DEFEND, C_DEFEND_N, C_GUARD, C_TSTART, C_TCOUNT = range(9)
C_SHARE = 9  # attack_share as a ``chance`` threshold
W_POOL, W_KEY, W_RANK, W_HSTATE, W_ATTACKED, W_FIRST, W_ACTS, W_DEFS = range(10, 18)
W_HASTY, W_SCALE, W_ABBA, W_PEND = range(18, 22)
C_GUARDED = 22  # 1 if an ally has guard = true (R7.2 worth looking at)
N_COLS = 23
# A pool of dice is one integer: the count of dice showing face f in the byte at
# bits 8(f-1) .. 8f-1 (readiness <= 20 < 256; bytes keep the field arithmetic to
# shifts).  Face 6 is the most significant field, so
# comparing two pools as integers compares them die by die from the highest, with
# "a die beats no die" -- exactly T2 of R3 (see the module docstring).
FIELD = 8
FIELD_MASK = 255
# R3 key: (v << KEY_V) | (count of v << KEY_COUNT) | (T2 rank << 8) | low byte (0, or
# the combatant's index where keys cannot tie); MAX_COMBATANTS <= 255.
KEY_V = 24
KEY_COUNT = 16
# The int64 vector ``sg``: round scalars, per-side counts, then the target lists.
G_STEP, G_HOLDING, G_PENDING = range(3)  # G_STEP: actions taken so far this round
G_TARGETS = 4

# hold states during a round
H_FRESH, H_HOLDING, H_NORMAL, H_PENDING = 0, 1, 2, 3
NONE = 1 << 40  # "no action yet" step index
# attack_share as stored: 1 and 0 draw nothing; 0 < p < 1 draws chance(threshold),
# even when the threshold rounds to 0 or 2**53 (the draw order must not depend on it).
SHARE_ALWAYS = (1 << 53) + 1
SHARE_NEVER = -1


@dataclass(frozen=True)
class Compiled:
    """A readiness scenario as flat arrays for the kernel."""

    layout: Layout
    table: np.ndarray  # int64 [n, N_COLS]: parameters (working columns zero)
    sg: np.ndarray  # int64: round scalars (zero) and target lists
    order: int  # 0 dynamic, 1 chain
    prep: int  # 0 sixes, 1 lowest
    squared: np.ndarray  # int64 0/1 per count: 1 where a round's count can exceed 1
    may_hold: bool  # some combatant has a hold policy (R5, and so R8)

    @property
    def dice_per_round(self) -> int:
        return int(self.table[:, C_DICE].sum())

    @property
    def plain(self) -> bool:
        """Every combatant on the default policies that the no-hold path can specialise
        on: defend = "always", no guard, attack_share = 1, no advantage."""
        t = self.table
        return bool(
            (t[:, C_DEFEND] == DEFEND_CODES["always"]).all()
            and not t[:, C_GUARD].any()
            and (t[:, C_SHARE] == SHARE_ALWAYS).all()
            and not t[:, C_ADV].any()
        )


def compile_scenario(scenario, layout: Layout) -> Compiled:
    """Flatten a validated readiness scenario."""
    n = len(scenario.combatants)
    sides = scenario.sides
    table = np.zeros((n, N_COLS), dtype=np.int64)
    targets: list[int] = []
    for i, c in enumerate(scenario.combatants):
        table[i, C_DICE] = c["readiness"]
        table[i, C_ADV] = c["advantage"]
        table[i, C_SIDE] = sides.index(c.side)
        table[i, C_HOLD] = HOLD_CODES[c["hold"]]
        match = HASTY_UP_TO.match(c["defend"])
        if match:
            table[i, C_DEFEND] = DEFEND_HASTY_UP_TO
            table[i, C_DEFEND_N] = int(match.group(1))
        else:
            table[i, C_DEFEND] = DEFEND_CODES[c["defend"]]
        table[i, C_GUARD] = int(c["guard"])
        tl = scenario.targets(i)
        table[i, C_TSTART] = len(targets)
        table[i, C_TCOUNT] = len(tl)
        targets.extend(tl)
        share = c["attack_share"]
        table[i, C_SHARE] = (
            SHARE_ALWAYS
            if share >= 1.0
            else SHARE_NEVER
            if share <= 0.0
            else chance_threshold(share)
        )
    for i, c in enumerate(scenario.combatants):
        table[i, C_GUARDED] = any(
            d["guard"] and d.side == c.side and j != i for j, d in enumerate(scenario.combatants)
        )
    sg = np.zeros(G_TARGETS + len(targets), dtype=np.int64)
    sg[G_TARGETS:] = targets
    return Compiled(
        layout=layout,
        table=table,
        sg=sg,
        order=0 if scenario.rules["order"] == "dynamic" else 1,
        prep=0 if scenario.rules["prep"] == "sixes" else 1,
        squared=_squared(layout),
        may_hold=bool(table[:, C_HOLD].any()),
    )


def _squared(layout: Layout) -> np.ndarray:
    """1 for the counts a single round can make larger than 1 (see _emit_single)."""
    out = np.zeros(layout.size, np.int64)
    for i in range(layout.n):
        for metric in SQUARED:
            out[layout.count_index(i, metric)] = 1
    return out


# --------------------------------------------------------------------------- kernel
_JIT = {"cache": True, "nogil": True}


@njit(**_JIT, inline="always")
def _key(cb, i):
    """R3 key of i: (highest unspent die v, T1 count of unspent v, T2 rank), or -1."""
    return _pool_key(cb[i, W_POOL], cb[i, W_RANK])


@njit(**_JIT, inline="always")
def _pool_key(pool, rank):
    """R3 key of a pool with T2 rank ``rank``; -1 for an empty pool."""
    v = _top(pool)
    # no branch: an empty pool has v = 0 and shifts by 0 (its count is unused)
    count = (pool >> max(FIELD * (v - 1), 0)) & FIELD_MASK
    key = (v << KEY_V) | (count << KEY_COUNT) | rank
    return key if pool != 0 else -1


@njit(**_JIT, inline="always")
def _top(pool):
    """Highest face in a pool (0 for an empty pool): the field of its highest set bit."""
    return (71 - leading_zeros(pool)) >> 3  # (63 - lz) // FIELD + 1; 7 >> 3 = 0 when empty


@njit(**_JIT, inline="always")
def _count(pool):
    """Number of dice in a pool."""
    return (pool * 0x0101010101010101) >> 56  # the sum of the six byte fields (each <= 20)


@njit(**_JIT)
def _opponents_have(cb, i, col):
    """True if some opponent of i has a non-zero ``col`` (dice left, actions taken)."""
    s = cb[i, C_SIDE]
    for j in range(cb.shape[0]):  # noqa: SIM110 (numba: a plain loop)
        if cb[j, C_SIDE] != s and cb[j, col] != 0:
            return True
    return False


@njit(**_JIT, inline="always")
def _spend(cb, sg, i, holds):
    """Spend i's highest unspent die (R4, R7) and return its value.

    ``holds``: someone may be holding this round (False lets the compiler drop the
    hold bookkeeping from the common path)."""
    v = _top(cb[i, W_POOL])
    cb[i, W_POOL] -= 1 << (FIELD * (v - 1))
    # only combatants in R3 carry a key; holders and released holders carry -1
    h = cb[i, W_HSTATE] if holds else H_NORMAL
    cb[i, W_KEY] = _key(cb, i) if (h == H_NORMAL or h == H_FRESH) else -1  # noqa: SIM109
    return v


@njit(**_JIT, inline="always")
def _pick(st, cb):
    """R3: the combatant in R3 with the highest key; T3 a fair random choice; -1 if none."""
    return _pick_keys(st, cb[:, W_KEY])


@njit(**_JIT)
def _pick_pending(st, cb, gen):
    """R3 among the holders released by event ``gen`` that still have dice; -1 if none."""
    n = cb.shape[0]
    best = -1
    ties = 0
    first = -1
    for i in range(n):
        if cb[i, W_HSTATE] == H_PENDING and cb[i, W_PEND] == gen:
            k = _key(cb, i)
            if k > best:
                best = k
                ties = 1
                first = i
            elif k == best:
                ties += 1
    if best < 0:
        return -1
    if ties == 1:
        return first
    r = below(st, ties)  # T3
    for i in range(first, n):
        if cb[i, W_HSTATE] == H_PENDING and cb[i, W_PEND] == gen and _key(cb, i) == best:
            if r == 0:
                return i
            r -= 1
    return -1


@njit(**_JIT, inline="always")
def _defend(cb, sg, t, a, by_holder, holds):
    """R7: at most one defense answers an attack of initiative ``a`` on ``t``."""
    policy = cb[t, C_DEFEND]
    pool = cb[t, W_POOL]
    has = pool != 0
    d = _top(pool)
    # R7.1 the target itself, if its highest die d >= a (or the attacker held)
    normal = has & (policy != 1) & (by_holder | (d >= a))  # bitwise: no branches
    if cb[t, C_GUARDED] and not normal:  # the predictable test first
        # R7.2 the first guarding ally in scenario order with highest die g >= a
        s = cb[t, C_SIDE]
        for j in range(cb.shape[0]):
            if j != t and cb[j, C_GUARD] == 1 and cb[j, C_SIDE] == s:
                pj = cb[j, W_POOL]
                if pj != 0 and (by_holder or _top(pj) >= a):
                    _spend(cb, sg, j, holds)
                    cb[j, W_DEFS] += 1
                    return
    # R7.3 else the target itself, hasty, at difficulty scale a - d, if its policy allows
    scale = a - d
    hasty = (
        has
        & (not normal)
        & (not by_holder)
        & ((policy == 0) | ((policy == DEFEND_HASTY_UP_TO) & (scale <= cb[t, C_DEFEND_N])))
    )
    if holds:
        if normal | hasty:
            _spend(cb, sg, t, holds)
            cb[t, W_DEFS] += 1
            cb[t, W_HASTY] += hasty
            cb[t, W_SCALE] += scale if hasty else 0
    else:  # no branch on the dice: spend nothing when there is no defense
        do = normal | hasty
        cb[t, W_POOL] = pool - ((1 << max(FIELD * (d - 1), 0)) if do else 0)
        cb[t, W_KEY] = _key(cb, t)
        cb[t, W_DEFS] += do
        cb[t, W_HASTY] += hasty
        cb[t, W_SCALE] += scale if hasty else 0


@njit(**_JIT, inline="always")
def _act(st, cb, sg, c, by_holder, holds):
    """R4: c spends its highest die and takes one action, an attack with p = attack_share."""
    a = _spend(cb, sg, c, holds)
    cb[c, W_ACTS] += 1
    step = sg[G_STEP]
    cb[c, W_FIRST] = min(cb[c, W_FIRST], step)  # steps only grow: the first action's
    sg[G_STEP] = step + 1
    s = cb[c, C_SIDE]
    threshold = cb[c, C_SHARE]
    attack = threshold == SHARE_ALWAYS or (threshold >= 0 and chance(st, threshold))
    if attack:
        t = sg[G_TARGETS + cb[c, C_TSTART] + below(st, cb[c, C_TCOUNT])]
        cb[t, W_ABBA] |= cb[t, W_FIRST] == NONE
        cb[t, W_ATTACKED] = 1
        _defend(cb, sg, t, a, by_holder, holds)
        # R5 until_attacked: attacked while holding -> acts normally from now on
        if holds and cb[t, W_HSTATE] == H_HOLDING and cb[t, C_HOLD] == 1:
            cb[t, W_HSTATE] = H_NORMAL
            cb[t, W_KEY] = _key(cb, t)
            sg[G_HOLDING] -= 1
    # R5 until_enemy_acts: the first opponent action releases every such holder
    if holds and sg[G_HOLDING] > 0:
        for h in range(cb.shape[0]):
            if cb[h, W_HSTATE] == H_HOLDING and cb[h, C_HOLD] == 2 and cb[h, C_SIDE] != s:
                cb[h, W_HSTATE] = H_PENDING
                cb[h, W_PEND] = sg[G_STEP]
                sg[G_HOLDING] -= 1
                sg[G_PENDING] += 1


@njit(**_JIT)
def _release_exhausted(cb, sg):
    """R5: holders whose opponents have all run out of dice rejoin R3."""
    for h in range(cb.shape[0]):
        if cb[h, W_HSTATE] == H_HOLDING and not _opponents_have(cb, h, W_POOL):
            cb[h, W_HSTATE] = H_NORMAL
            cb[h, W_KEY] = _key(cb, h)
            sg[G_HOLDING] -= 1


@njit(**_JIT)
def _play_pending(st, cb, sg):
    """Released until_enemy_acts holders declare: earliest release first, then R3."""
    while sg[G_PENDING] > 0:
        gen = NONE
        for i in range(cb.shape[0]):
            if cb[i, W_HSTATE] == H_PENDING and cb[i, W_PEND] < gen:
                gen = cb[i, W_PEND]
        c = _pick_pending(st, cb, gen)
        if c < 0:  # released holders without dice: nothing to declare
            for i in range(cb.shape[0]):
                if cb[i, W_HSTATE] == H_PENDING and cb[i, W_PEND] == gen:
                    cb[i, W_HSTATE] = H_NORMAL
                    sg[G_PENDING] -= 1
            continue
        cb[c, W_HSTATE] = H_NORMAL
        sg[G_PENDING] -= 1
        _act(st, cb, sg, c, True, True)
        cb[c, W_KEY] = _key(cb, c)


@njit(**_JIT, inline="always")
def _setup(st, no_hold, prep, cb, sg):
    """R1 roll and R2 preparation; reset the round state.  Returns True if anyone may hold."""
    n = cb.shape[0]
    for k in range(G_TARGETS):
        sg[k] = 0
    may_hold = False
    for i in range(n):
        r = cb[i, C_DICE]
        pool = 0
        for _ in range(r):  # R1, in scenario order
            pool += 1 << (FIELD * (roll(st, 6) - 1))
        pips = cb[i, C_ADV]
        if pips > 0:
            pool = _prepare(pool, pips, prep)
        cb[i, W_POOL] = pool
        cb[i, W_KEY] = pool  # the T2 key, for the ranks below
        holds = cb[i, C_HOLD] != 0 and not no_hold
        may_hold = may_hold or holds
        cb[i, W_HSTATE] = H_FRESH if holds else H_NORMAL
        cb[i, W_ATTACKED] = 0
        cb[i, W_FIRST] = NONE
        cb[i, W_ACTS] = 0
        cb[i, W_DEFS] = 0
        cb[i, W_HASTY] = 0
        cb[i, W_SCALE] = 0
        cb[i, W_ABBA] = 0
        cb[i, W_PEND] = NONE
    # T2: the order of the full pools, as a rank
    for i in range(n):
        rank = 0
        for j in range(n):
            rank += cb[j, W_KEY] < cb[i, W_KEY]
        cb[i, W_RANK] = rank << 8
    for i in range(n):
        cb[i, W_KEY] = _key(cb, i)
    return may_hold


@njit(**_JIT)
def _prepare(pool, pips, prep):
    """R2: add ``pips`` to a pool, no die above 6."""
    if prep == 0:  # "sixes": each pip to the highest die still below 6
        for f in range(5, 0, -1):
            while pips > 0 and (pool >> (FIELD * (f - 1))) & FIELD_MASK:
                to = f + pips if f + pips < 6 else 6
                pool += (1 << (FIELD * (to - 1))) - (1 << (FIELD * (f - 1)))
                pips -= to - f
    else:  # "lowest": each pip to the lowest die
        while pips > 0:
            f = 1
            while (pool >> (FIELD * (f - 1))) & FIELD_MASK == 0:
                f += 1
            if f == 6:
                break
            pool += (1 << (FIELD * f)) - (1 << (FIELD * (f - 1)))
            pips -= 1
    return pool


@njit(**_JIT, inline="always")
def _turn(st, may_hold, order, cb, sg):
    """One turn of R3-R5: the next combatant acts (or starts holding).  False at R9."""
    if may_hold and sg[G_HOLDING] > 0:
        _release_exhausted(cb, sg)
    c = _pick(st, cb)
    if c < 0:
        return False  # R9
    if may_hold and cb[c, W_HSTATE] == H_FRESH:
        # R5: first turn of a combatant with a hold policy
        cb[c, W_HSTATE] = H_NORMAL
        if _opponents_have(cb, c, W_POOL):  # else nothing could release it
            hold = cb[c, C_HOLD]
            if (hold == 1 and cb[c, W_ATTACKED] == 0) or (
                hold == 2 and not _opponents_have(cb, c, W_ACTS)
            ):
                cb[c, W_HSTATE] = H_HOLDING
                cb[c, W_KEY] = -1
                sg[G_HOLDING] += 1
                return True
    v = cb[c, W_KEY] >> KEY_V
    _act(st, cb, sg, c, False, may_hold)
    if order == 1:  # R3 chain: every die of value v, one action each
        while cb[c, W_KEY] >> KEY_V == v:
            _act(st, cb, sg, c, False, may_hold)
    if may_hold and sg[G_PENDING] > 0:
        _play_pending(st, cb, sg)
    return True


@njit(**_JIT, inline="always")
def _play(st, no_hold, order, prep, cb, sg):
    """Play one round (R1-R9); return True for a stalemate (R8)."""
    may_hold = _setup(st, no_hold, prep, cb, sg)
    while _turn(st, may_hold, order, cb, sg):
        pass
    return sg[G_STEP] == 0


@njit(**_JIT, inline="always")
def _emit_cycle(cb, stalemate, y, dist_off):
    """Add the round's counts to the cycle vector ``y`` (layout of metrics.Layout)."""
    n = cb.shape[0]
    for i in range(n):
        base = i * N_COUNTS
        acts = cb[i, W_ACTS]
        fi = cb[i, W_FIRST]
        y[base + 0] += fi == 0
        y[base + 1] += acts
        y[base + 2] += acts == 0
        y[base + 3] += cb[i, W_ABBA]
        y[base + 4] += cb[i, W_DEFS]
        y[base + 5] += cb[i, W_HASTY]
        y[base + 6] += cb[i, W_SCALE]
        y[base + 7] += _count(cb[i, W_POOL])
        row = n * N_COUNTS + i * n
        for j in range(n):
            y[row + j] += fi < cb[j, W_FIRST]
        y[dist_off[i] + acts] += 1
    y[dist_off[n]] += stalemate


@njit(**_JIT, inline="always")
def _emit_single(cb, dist_off, u1, u2, sx):
    """``_emit_round`` for the round in table ``cb`` (the general kernel)."""
    _emit_round(
        cb[:, C_DICE],
        cb[:, W_ACTS],
        cb[:, W_FIRST],
        cb[:, W_DEFS],
        cb[:, W_HASTY],
        cb[:, W_SCALE],
        cb[:, W_ABBA],
        dist_off,
        u1,
        u2,
        sx,
    )


@njit(**_JIT, inline="always")
def _emit_round(dice, acts, fst, defs, hasty, scale, abba, dist_off, u1, u2, sx):
    """Add a one-round cycle that is not a stalemate to the single-round sums: ``u1``
    (every count) and ``u2`` (squares of the counts that can exceed 1; for 0/1 counts
    the square is the count itself).  ``_fold_single`` turns them into cycle sums and
    fills in what follows from the rest: the sums of ``actions``, of its square and
    of ``no_action`` from the distribution of actions, and the sum of
    ``expired_dice`` from ``readiness - actions - defenses`` (every die is spent on an
    action or a defense, or left).  The arguments are the round's per-combatant
    vectors (readiness, actions, first action, defenses, hasty ones, their scale,
    attacked before acting)."""
    n = dice.size
    for i in range(n):
        base = i * N_COUNTS
        ai = acts[i]
        fi = fst[i]
        di = defs[i]
        hi = hasty[i]
        si = scale[i]
        left = dice[i] - ai - di
        u1[base + 0] += fi == 0
        u1[base + 3] += abba[i]
        u1[base + 4] += di
        u2[base + 4] += di * di
        u1[base + 5] += hi
        u2[base + 5] += hi * hi
        u1[base + 6] += si
        u2[base + 6] += si * si
        u2[base + 7] += left * left
        sx[2 * i] += hi * di  # the RATIOS pairs, in Layout.pair_indices order
        sx[2 * i + 1] += si * hi
        row = n * N_COUNTS + i * n
        for j in range(i):  # j == i would add fi < fi, always 0
            u1[row + j] += fi < fst[j]
        for j in range(i + 1, n):
            u1[row + j] += fi < fst[j]
        u1[dist_off[i] + ai] += 1


@njit(**_JIT, inline="always")
def _fold_single(dice, dist_off, u1, u2, squared, rounds, s1, s2, sl, tot):
    """Single-round cycles into the cycle sums (L = 1, so sum y*L = sum y).  For the
    counts that are 0 or 1 (``squared[m] == 0``) the sum of squares is the sum."""
    for i in range(dice.size):  # what _emit_single leaves out
        base = i * N_COUNTS
        acts = 0
        acts2 = 0
        for k in range(dice[i] + 1):
            acts += k * u1[dist_off[i] + k]
            acts2 += k * k * u1[dist_off[i] + k]
        u1[base + 1] = acts
        u2[base + 1] = acts2
        u1[base + 2] = u1[dist_off[i]]
        u1[base + 7] = rounds * dice[i] - acts - u1[base + 4]
    for m in range(s1.size):
        s1[m] += u1[m]
        s2[m] += u2[m] if squared[m] else u1[m]
        sl[m] += u1[m]
        u1[m] = 0
        u2[m] = 0
    tot[0] += rounds
    tot[1] += rounds
    tot[2] += rounds


@njit(**_JIT)
def _run_chunk(
    key,
    first,
    n_rounds,
    no_hold,
    order,
    prep,
    cb,
    sg,
    dist_off,
    squared,
    y,
    s1,
    s2,
    sl,
    sx,
    pa,
    pb,
    tot,
    st,
    u1,
    u2,
):
    """Play rounds ``first .. first + n_rounds - 1`` of the chunk with key ``key``; add
    their cycle sums (see metrics.py).  ``no_hold``: R8 forbids holds in the first
    round.  Returns whether it forbids them in the round after the last."""
    key = unmanaged(key)
    st = unmanaged(st)  # the caller's: arrays allocated here are reference-counted per round
    cb = unmanaged(cb)
    sg = unmanaged(sg)
    dist_off = unmanaged(dist_off)
    squared = unmanaged(squared)
    y = unmanaged(y)
    s1 = unmanaged(s1)
    s2 = unmanaged(s2)
    sl = unmanaged(sl)
    sx = unmanaged(sx)
    tot = unmanaged(tot)
    u1 = unmanaged(u1)
    u2 = unmanaged(u2)
    singles = 0
    length = 0
    for r in range(first, first + n_rounds):
        round_start(st, key, r)
        stalemate = _play(st, no_hold, order, prep, cb, sg)
        if length == 0 and not stalemate:  # the common case: a cycle of one round
            _emit_single(cb, dist_off, u1, u2, sx)
            singles += 1
            no_hold = False
            continue
        _emit_cycle(cb, np.int64(stalemate), y, dist_off)
        length += 1
        if stalemate:
            no_hold = True  # R8: nobody may hold in the next round
        else:
            flush_cycle(y, length, s1, s2, sl, sx, pa, pb, tot)
            length = 0
            no_hold = False
    if length > 0:
        flush_cycle(y, length, s1, s2, sl, sx, pa, pb, tot)
    _fold_single(cb[:, C_DICE], dist_off, u1, u2, squared, singles, s1, s2, sl, tot)
    return no_hold


# Rows of ``_run_simple``'s working array: one vector per quantity, entry i for
# combatant i (contiguous, so that the R3 scan reads one short vector).
S_POOL, S_KEY, S_RANK, S_FIRST, S_ACTS, S_DEFS, S_HASTY, S_SCALE, S_ABBA = range(9)
N_S = 9
# Outcome histograms of the no-hold path (``_simple_code``): at most CODE_MAX entries
# per combatant and ORDER_MAX_N combatants (n**n orders of first actions).
CODE_MAX = 1 << 14
ORDER_MAX_N = 5


@njit(**_JIT, inline="always")
def _pick_keys(st, keys):
    """R3 over a vector of keys: the highest, T3 a fair random choice; -1 if none."""
    n = keys.size
    best = keys[0]
    first = 0
    ties = 1
    for i in range(1, n):  # written for conditional moves, not branches
        k = keys[i]
        up = k > best
        ties = 1 if up else ties + (k == best)
        first = i if up else first
        best = k if up else best
    if best < 0:
        return -1
    if ties == 1:
        return first
    r = below(st, ties)  # T3
    for i in range(first, n):
        if keys[i] == best:
            if r == 0:
                return i
            r -= 1
    return -1


@njit(**_JIT, inline="always")
def _take(pool, keys, rank, i):
    """Spend the highest die of i's pool (R4, R7); return its value."""
    v = _top(pool[i])
    pool[i] -= 1 << (FIELD * (v - 1))
    keys[i] = _pool_key(pool[i], rank[i])
    return v


@njit(**_JIT, inline="always")
def _simple_setup(st, key, r, prep, par, w, plain):
    """Start round ``r``: R1 roll in scenario order, R2, T2 ranks and R3 keys.
    ``plain``: a constant of the compiled kernel (see ``Compiled.plain``)."""
    round_start(st, key, r)
    n = par.shape[1]
    dice = par[C_DICE]
    adv = par[C_ADV]
    pool = w[S_POOL]
    rank = w[S_RANK]
    for i in range(n):
        p = 0
        for _ in range(dice[i]):
            p += 1 << (FIELD * (roll(st, 6) - 1))
        if not plain and adv[i] > 0:
            p = _prepare(p, adv[i], prep)
        pool[i] = p
        w[S_FIRST, i] = NONE
        w[S_ACTS, i] = 0
        w[S_DEFS, i] = 0
        w[S_HASTY, i] = 0
        w[S_SCALE, i] = 0
        w[S_ABBA, i] = 0
    for i in range(n):  # T2: the order of the full pools, as a rank
        rk = 0
        for j in range(n):
            rk += pool[j] < pool[i]
        rank[i] = rk << 8
    for i in range(n):
        w[S_KEY, i] = _pool_key(pool[i], rank[i])


@njit(**_JIT, inline="always")
def _simple_turn(st, order, par, targets, w, step, plain):
    """One turn of R3/R4/R7 (``_turn`` without holds); the new action count, or -1 at R9.
    ``plain``: a constant of the compiled kernel (see ``Compiled.plain``)."""
    n = par.shape[1]
    side = par[C_SIDE]
    policy = par[C_DEFEND]
    guard = par[C_GUARD]
    share = par[C_SHARE]
    pool = w[S_POOL]
    keys = w[S_KEY]
    rank = w[S_RANK]
    fst = w[S_FIRST]
    defs = w[S_DEFS]
    ci = _pick_keys(st, keys)  # R3
    if ci < 0:
        return -1  # R9
    c = np.uint64(ci)
    v = keys[c] >> KEY_V
    while True:  # R4: one action; R3 chain: every die of value v
        a = _take(pool, keys, rank, c)
        w[S_ACTS, c] += 1
        fst[c] = min(fst[c], step)
        step += 1
        threshold = SHARE_ALWAYS if plain else share[c]
        if threshold == SHARE_ALWAYS or (threshold >= 0 and chance(st, threshold)):
            ti = targets[np.uint64(par[C_TSTART, c] + below(st, par[C_TCOUNT, c]))]
            t = np.uint64(ti)
            w[S_ABBA, t] |= fst[t] == NONE
            # R7: at most one defense
            pt = pool[t]
            has = pt != 0
            d = _top(pt)
            pol = 0 if plain else policy[t]  # 0: defend = "always"
            normal = has & (pol != 1) & (d >= a)  # R7.1
            covered = False
            # R7.2: the first guarding ally that can defend
            if not plain and par[C_GUARDED, t] and not normal:
                for j in range(n):
                    if (
                        j != ti
                        and guard[j] == 1
                        and side[j] == side[t]
                        and pool[j] != 0
                        and _top(pool[j]) >= a
                    ):
                        _take(pool, keys, rank, j)
                        defs[j] += 1
                        covered = True
                        break
            if not covered:  # R7.1 or R7.3 (hasty, scale a - d), without a branch
                gap = a - d
                hst = (
                    has
                    & (not normal)
                    & ((pol == 0) | ((pol == DEFEND_HASTY_UP_TO) & (gap <= par[C_DEFEND_N, t])))
                )
                do = normal | hst
                pool[t] = pt - ((1 << max(FIELD * (d - 1), 0)) if do else 0)
                keys[t] = _pool_key(pool[t], rank[t])
                defs[t] += do
                w[S_HASTY, t] += hst
                w[S_SCALE, t] += gap if hst else 0
        if order == 0 or keys[c] >> KEY_V != v:
            return step


@njit(**_JIT, inline="always")
def _simple_emit(par, w, dist_off, u1, u2, sx):
    """``_emit_round`` for the round in the no-hold kernel's vectors ``w``."""
    _emit_round(
        par[C_DICE],
        w[S_ACTS],
        w[S_FIRST],
        w[S_DEFS],
        w[S_HASTY],
        w[S_SCALE],
        w[S_ABBA],
        dist_off,
        u1,
        u2,
        sx,
    )


@njit(**_JIT, inline="always")
def _simple_code(par, w, hist, hoff):
    """A finished round into the outcome histograms: one increment per combatant (its
    ``_outcome_code``) and one for the order of first actions (``sum rk_i n**(n-1-i)``,
    ``rk_i`` the number of combatants whose first action came strictly earlier than
    i's).  ``_simple_unfold`` turns them into the sums ``_simple_emit`` adds."""
    n = par.shape[1]
    fst = w[S_FIRST]
    order = 0
    for i in range(n):
        r = par[C_DICE, i]
        fi = fst[i]
        rk = 0
        for j in range(n):
            rk += fst[j] < fi
        order = order * n + rk
        code = (
            (((w[S_ACTS, i] * (r + 1) + w[S_DEFS, i]) * (r + 1) + w[S_HASTY, i]) * 2 + w[S_ABBA, i])
            * (5 * r + 1)
        ) + w[S_SCALE, i]
        hist[hoff[i] + code] += 1
    hist[hoff[n] + order] += 1


@njit(**_JIT, inline="always")
def _simple_out(par, w, dist_off, u1, u2, sx, coded, hist, hoff):
    """A finished round's counts: into the histograms if ``coded``, else directly."""
    if coded:
        _simple_code(par, w, hist, hoff)
    else:
        _simple_emit(par, w, dist_off, u1, u2, sx)


@njit(**_JIT)
def _simple_unfold(par, hist, hoff, dist_off, u1, u2, sx):
    """Add the counts of every outcome in the histograms (see ``_simple_code``)."""
    n = par.shape[1]
    for i in range(n):
        r = par[C_DICE, i]
        base = i * N_COUNTS
        for code in range(hoff[i + 1] - hoff[i]):
            cnt = hist[hoff[i] + code]
            if cnt == 0:
                continue
            x = code
            scale = x % (5 * r + 1)  # hasty defenses of scale 1-5 each: at most 5r
            x //= 5 * r + 1
            abba = x % 2
            x //= 2
            hasty = x % (r + 1)
            x //= r + 1
            defs = x % (r + 1)
            acts = x // (r + 1)
            left = r - acts - defs
            u1[base + 3] += abba * cnt
            u1[base + 4] += defs * cnt
            u2[base + 4] += defs * defs * cnt
            u1[base + 5] += hasty * cnt
            u2[base + 5] += hasty * hasty * cnt
            u1[base + 6] += scale * cnt
            u2[base + 6] += scale * scale * cnt
            u2[base + 7] += left * left * cnt
            sx[2 * i] += hasty * defs * cnt
            sx[2 * i + 1] += scale * hasty * cnt
            u1[dist_off[i] + acts] += cnt
    for code in range(hoff[n + 1] - hoff[n]):
        cnt = hist[hoff[n] + code]
        if cnt == 0:
            continue
        for i in range(n):
            rk_i = (code // n ** (n - 1 - i)) % n
            # someone acts first in every round without holds: rk = 0 is first_action
            u1[i * N_COUNTS + 0] += cnt if rk_i == 0 else 0
            row = n * N_COUNTS + i * n
            for j in range(n):
                u1[row + j] += cnt if rk_i < (code // n ** (n - 1 - j)) % n else 0


def outcome_offsets(dice: np.ndarray) -> np.ndarray | None:
    """Offsets of the no-hold path's outcome histograms (combatant i's at ``[i]``, the
    order of first actions at ``[n]``, the end at ``[n + 1]``), or None where they
    would be too large (then every round adds its counts directly)."""
    n = dice.size
    sizes = [(int(r) + 1) ** 3 * 2 * (5 * int(r) + 1) for r in dice]
    if n > ORDER_MAX_N or max(sizes) > CODE_MAX:
        return None
    return np.cumsum([0, *sizes, n**n]).astype(np.int64)


def _make_run_simple(plain):
    @njit(**_JIT)
    def run_simple(
        key,
        first,
        n_rounds,
        order,
        prep,
        par,
        targets,
        work,
        sts,
        dist_off,
        squared,
        s1,
        s2,
        sl,
        sx,
        tot,
        u1,
        u2,
        hist,
        hoff,
    ):
        """``_run_chunk`` for scenarios without hold policies: R5 and R8 never apply, so
        every round is a one-round cycle and the round's state is a few vectors.  The
        same rules as ``_setup``/``_turn``/``_act``/``_defend`` with ``holds`` False, on
        the same draws (the tests hold both paths to the per-round trace).  Two rounds
        are played side by side, a turn of each in turn, so that the processor overlaps
        their chains of dependent steps; the sums do not depend on the order in which
        rounds finish."""
        key = unmanaged(key)
        par = unmanaged(par)  # [N_COLS, n]: the table's columns
        targets = unmanaged(targets)
        work = unmanaged(work)  # [2, N_S, n]: the two rounds' state
        sts = unmanaged(sts)  # [2, STATE_WORDS]: their streams
        dist_off = unmanaged(dist_off)
        squared = unmanaged(squared)
        s1 = unmanaged(s1)
        s2 = unmanaged(s2)
        sl = unmanaged(sl)
        sx = unmanaged(sx)
        tot = unmanaged(tot)
        u1 = unmanaged(u1)  # the caller's zeros: arrays allocated here are reference-counted
        u2 = unmanaged(u2)
        hist = unmanaged(hist)  # outcome histograms (size 0: counts added per round)
        hoff = unmanaged(hoff)
        coded = hist.size > 0
        wa = work[0]
        wb = work[1]
        sta = sts[0]
        stb = sts[1]
        end = first + n_rounds
        nxt = first
        step_a = -1
        step_b = -1
        if nxt < end:
            _simple_setup(sta, key, nxt, prep, par, wa, plain)
            nxt += 1
            step_a = 0
        if nxt < end:
            _simple_setup(stb, key, nxt, prep, par, wb, plain)
            nxt += 1
            step_b = 0
        while step_a >= 0 and step_b >= 0:
            step_a = _simple_turn(sta, order, par, targets, wa, step_a, plain)
            step_b = _simple_turn(stb, order, par, targets, wb, step_b, plain)
            if step_a < 0:
                _simple_out(par, wa, dist_off, u1, u2, sx, coded, hist, hoff)
                if nxt < end:
                    _simple_setup(sta, key, nxt, prep, par, wa, plain)
                    nxt += 1
                    step_a = 0
            if step_b < 0:
                _simple_out(par, wb, dist_off, u1, u2, sx, coded, hist, hoff)
                if nxt < end:
                    _simple_setup(stb, key, nxt, prep, par, wb, plain)
                    nxt += 1
                    step_b = 0
        while step_a >= 0:  # the last round, alone
            step_a = _simple_turn(sta, order, par, targets, wa, step_a, plain)
            if step_a < 0:
                _simple_out(par, wa, dist_off, u1, u2, sx, coded, hist, hoff)
        while step_b >= 0:
            step_b = _simple_turn(stb, order, par, targets, wb, step_b, plain)
            if step_b < 0:
                _simple_out(par, wb, dist_off, u1, u2, sx, coded, hist, hoff)
        if coded:
            _simple_unfold(par, hist, hoff, dist_off, u1, u2, sx)
        _fold_single(par[C_DICE], dist_off, u1, u2, squared, n_rounds, s1, s2, sl, tot)

    return run_simple


# The no-hold kernel twice: for any policies, and for the defaults (``Compiled.plain``),
# where the policy tests are compile-time constants (0.93x time on the benchmark scenario).
# numba caches both: a closure's cache key includes its captured values.
_run_simple = _make_run_simple(False)
_run_simple_plain = _make_run_simple(True)


@njit(**_JIT)
def _trace_rounds(key, first, n_rounds, no_hold, order, prep, cb, sg, dist_off, size):
    """Each round's counts as a row (tests): [n_rounds, size]; R8 carried across rows."""
    out = np.zeros((n_rounds, size), np.int64)
    key = unmanaged(key)
    st = np.zeros(STATE_WORDS, np.uint64)
    cb = unmanaged(cb)
    sg = unmanaged(sg)
    for r in range(n_rounds):
        round_start(st, key, first + r)
        no_hold = _play(st, no_hold, order, prep, cb, sg)
        _emit_cycle(cb, np.int64(no_hold), out[r], dist_off)
    return out


def _offsets(compiled: Compiled) -> np.ndarray:
    """Distribution offsets of every combatant, then the scenario-count offset."""
    lay = compiled.layout
    return np.append(lay.dist_offsets, lay.scenario_offset).astype(np.int64)


def run_chunk(
    compiled: Compiled,
    key: np.ndarray,
    n_rounds: int,
    sums: Sums,
    first: int = 0,
    no_hold: bool = False,
) -> bool:
    """Play rounds ``first ..`` of the chunk with key ``key`` and add them to ``sums``.

    ``no_hold`` carries R8 into the first round; the return value carries it on.
    """
    if not compiled.may_hold:
        n = compiled.table.shape[0]
        kernel = _run_simple_plain if compiled.plain else _run_simple
        offsets = outcome_offsets(compiled.table[:, C_DICE])
        kernel(
            key[:4].copy(),
            first,
            n_rounds,
            compiled.order,
            compiled.prep,
            np.ascontiguousarray(compiled.table.T),
            compiled.sg[G_TARGETS:].copy(),
            np.zeros((2, N_S, n), np.int64),
            np.zeros((2, STATE_WORDS), np.uint64),
            _offsets(compiled),
            compiled.squared,
            sums.s1,
            sums.s2,
            sums.sl,
            sums.sx,
            sums.tot,
            np.zeros(compiled.layout.size, np.int64),
            np.zeros(compiled.layout.size, np.int64),
            np.zeros(0 if offsets is None else offsets[-1], np.int64),
            np.zeros(0, np.int64) if offsets is None else offsets,
        )
        return no_hold
    pa, pb = compiled.layout.pair_indices()
    return bool(
        _run_chunk(
            key[:4].copy(),
            first,
            n_rounds,
            no_hold,
            compiled.order,
            compiled.prep,
            compiled.table.copy(),
            compiled.sg.copy(),
            _offsets(compiled),
            compiled.squared,
            np.zeros(compiled.layout.size, np.int64),
            sums.s1,
            sums.s2,
            sums.sl,
            sums.sx,
            pa,
            pb,
            sums.tot,
            np.zeros(STATE_WORDS, np.uint64),
            np.zeros(compiled.layout.size, np.int64),
            np.zeros(compiled.layout.size, np.int64),
        )
    )


def trace(
    compiled: Compiled,
    key: np.ndarray,
    n_rounds: int,
    no_hold_first: bool = False,
    first: int = 0,
) -> np.ndarray:
    """Per-round counts (one row per round) in the layout of ``compiled.layout``."""
    return _trace_rounds(
        key[:4].copy(),
        first,
        n_rounds,
        no_hold_first,
        compiled.order,
        compiled.prep,
        compiled.table.copy(),
        compiled.sg.copy(),
        _offsets(compiled),
        compiled.layout.size,
    )
