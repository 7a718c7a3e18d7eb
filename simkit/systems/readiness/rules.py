"""One readiness round, rules revision 3 (docs/rules.md, R1-R9), as numba functions: the only
implementation of the rules.  ``run_chunk``, ``trace`` and every scenario (with or
without holds) play rounds through ``play_round`` (``round_player``); the tests hold it to the
plain-Python twin (tests/twins/readiness.py) count by count, draw by draw and event
by event.

Arrays (fields named in ``codes.py``)
-------------------------------------
``st``  the round's random stream (``stream.py``); draws in the twin's order: R1 dice
        of combatant 0, 1, ...; then as play goes, T3 ``below(k)``, ``chance`` for an
        action when ``0 < attack_share < 1`` (even when its threshold rounds to 0),
        ``below(m)`` over the target list of an attack, then ``chance`` for its effect
        when the attacker's ``hit_chance < 1`` (R7 [rev 3], 0 included).  Nothing else draws.
``P``   ``P[i, P_*]`` combatant i's parameters; ``T`` the target lists; ``GL`` the
        guards of every combatant D (``GL[2 D]`` start and ``GL[2 D + 1]`` count of the
        guards that may answer for D in ``GL``, scenario order: R7's guards of its side,
        R7a's only if they name it; kernel._guard_lists).
``W``   ``W[i, W_*]`` the round's state of combatant i (``P`` and ``W`` are the columns of one
        array: a combatant's fields are contiguous, the row length a compile-time constant).
``G``   round scalars (``G_*``) and per side who has dice and actions taken (kept only
        when some combatant has a hold policy: only R5 asks for them).
``KT``  the R3 key trees (below).
``Y``   counts (kernel.COUNT_DTYPE): ``Y[CS[i, ACTIONS] + col] += 1``, except that a hasty
        defense of scale k counts only in row ``hasty_ge.k``, and attacks_received and no_action
        are not counted here: counts.derived_rows derives them, and the rest of the
        hasty counts, from the rows (attacks_received = undefended + defended +
        hasty_only, #11's identity; no_action from actions); ``CS`` the layout's
        ``count_slots`` scaled to the kernel's batch (kernel.py: a row of ``Y`` per
        slot, a column per regeneration cycle), ``col`` the round's column; the
        scenario counts follow the count slots (``G_STALEMATE_ROW``).  Every count is
        an increment, so the rounds of a cycle (a stalemate and the forced round after
        it) can add to one column.  With more than ONE_LEVEL combatants an action's
        counts go to two packed fields of the combatants' rows (``W_OWN``, ``W_AIMED``)
        and ``add_round`` adds them to ``Y`` at the round's end.
``F``   ``F[i, col]``: the step of i's first action in the round (acts_before).
``EV``  events (``base.EVENT_COLUMNS``), written when the player's ``log`` is true
        (``trace``), from the same code path that counts: what ``simkit trace`` shows
        is what is counted.  ``run_chunk``'s players have ``log`` False, a constant of
        the closure: numba drops every event branch before compiling.

A pool (R1) is one integer: the count of dice showing face f in the byte at bits
8(f-1) .. 8f-1.  A combatant's highest unspent die is the top set byte (a
leading-zero count); spending it is one subtraction; every spend takes it (R4, R5,
R7).

R3 by keys
----------
T2 compares the dice of the round minus one die of the tied value v; removing one v
from two sorted lists that both hold it keeps their order, so T2 is the order of the
full pools (docs/rules-decisions.md), fixed for the round: each combatant gets the
*rank* of its full pool (how many pools of the round are lower; a pool is an integer
whose order is that of its sorted dice, a die beating no die).  Its R3 key packs
(highest unspent die v, T1 count of v, T2 rank, a twin flag, 255 - its index); -1
while it cannot take a turn (no dice, or holding).  The index makes every key unique:
the best key names the combatant.  Two combatants can tie through T1 and T2 only if
their full pools are equal, so T3 is looked for only when the best key's twin flag
says another full pool of the round equals its own (``pick_tied``: the leaves with
that key but for the index, ``below(k)`` among the k of them in scenario order).
The keys are the leaves of a tree of GROUP-wide levels (GROUP 4), a node holding the
best key below it.  The next turn is the best key at the top (at most GROUP nodes).  A
spend re-keys one leaf and those of its ancestors that change: one level (a scan of the
keys) for up to ONE_LEVEL (8) combatants, two for up to 16, four for 200 (narrow nodes:
each level on the path from one action to the next is a short maximum); so a die of a
200-combatant round costs a few times one of a 4-combatant round, not 50 times.
Released holders (R5) are picked the same way from a second tree.

Caching: these functions are not cached on their own; kernel.py's drivers are, with
everything compiled into them, under a key of every source file of simkit/systems and
simkit/metrics (support.SourceTreeCache): an edit here, in codes.py or in stream.py
recompiles them.
"""

from __future__ import annotations

import numpy as np
from numba.extending import intrinsic

from simkit.systems.base import MAX_COMBATANTS, SHARE_ALWAYS, SHARE_NEVER
from simkit.systems.readiness.codes import (
    ACTIONS,
    ATTACKED_BEFORE_ACTING,
    ATTACKS_MADE,
    DEFEND_NEVER,
    DEFENDED,
    DEFENSES,
    EDGE_WOUND,
    EV_ACT,
    EV_ATTACK,
    EV_DECLARE,
    EV_DECLINED,
    EV_EXPIRED,
    EV_HOLD,
    EV_NO_EFFECT,
    EV_NO_HOLD,
    EV_PREP,
    EV_REJOIN,
    EV_RELEASE,
    EV_RESPONSE,
    EV_ROLL,
    EV_RUN_BROKEN,
    EV_STALEMATE,
    EV_TURN,
    EV_UNANSWERED,
    EXPIRED_DICE,
    FACE_BITS,
    FIRST_ACTION,
    G_ARMED,
    G_EVENTS,
    G_HOLDER_ACTIONS,
    G_HOLDING,
    G_LOG_BATCH,
    G_MAY_HOLD,
    G_ORDER,
    G_PREP,
    G_RELEASE_RULE,
    G_RELEASED,
    G_ROUND,
    G_SIDE_ARMED,
    G_SIDES,
    G_STALEMATE_ROW,
    G_STEP,
    G_WAITING_FOR_ENEMY,
    GROUP,
    GROUP_BITS,
    GUARD_ALWAYS,
    GUARD_BACKUP,
    GUARD_DEFENSES,
    H_FRESH,
    H_HOLDING,
    H_NORMAL,
    H_RELEASED,
    HASTY_GE_1,
    HASTY_ONLY,
    HIGHEST_SCALE,
    HIT_ALWAYS,
    HITS,
    HOLD_NEVER,
    HOLD_UNTIL_ATTACKED,
    HOLD_UNTIL_ENEMY_ACTS,
    HOLDER_HELD_DICE,
    KEY_COUNT,
    KEY_INDEX,
    KEY_RANK,
    KEY_TWIN,
    KEY_V,
    NO_STEP,
    ON_EDGE,
    ONE_LEVEL,
    ORDER_CHAIN_UNBROKEN,
    ORDER_DYNAMIC,
    P_ADVANTAGE,
    P_DEFEND,
    P_DICE,
    P_FIXED,
    P_FIXED_FACES,
    P_FIXED_POOL,
    P_GUARD,
    P_GUARD_NAMED,
    P_HASTY_LIMIT,
    P_HIT,
    P_HOLD,
    P_SHARE,
    P_SIDE,
    P_SURPRISED,
    P_TARGET_COUNT,
    P_TARGET_MASK,
    P_TARGET_START,
    P_WHEN_EFFECTIVE,
    P_WOUND,
    PREP_ONE_DIE,
    PREP_SIXES,
    R3_SET,
    RELEASE_ATTACKED,
    RELEASE_ENEMY_ACTED,
    RELEASE_HIGHER,
    RELEASE_OPPONENTS_OUT,
    RESPONSE_GUARD,
    RESPONSE_HASTY,
    RESPONSE_SELF,
    SCRATCH_SET,
    SIDES,
    UNDEFENDED,
    W_AIMED,
    W_ATTACKED,
    W_FIRST,
    W_HELD,
    W_IN_R3,
    W_LOWEST,
    W_OWN,
    W_POOL,
    W_RANK,
    W_RELEASE_EVENT,
    W_ROWS,
    W_STATE,
    WASTED_DEFENSES,
    WE_DEFEND,
    WE_GUARD,
)
from simkit.systems.readiness.schema import MAX_READINESS
from simkit.systems.stream import below, chance, next_byte, next_u64, roll_many
from simkit.systems.support import JIT, JIT_DISABLED, leading_zeros, njit

# Compile time and speed.  Every jitted function costs a full numba pipeline (about
# 0.1 s even for a one-liner), numba's own inlining (``inline="always"``) costs more
# than that per call site, and a call that LLVM does not inline costs two runtime
# calls per array argument (reference counts).  So the round is one function,
# ``play_round``, and the functions it calls are either small HELPERs that LLVM
# always inlines (``forceinline``: no numba work per call site) or COLD ones it
# calls on rare paths only (trace events, R2, released holders, T3 ties), which keep
# the hot code small.  None of them is called from Python: no wrappers are built.
# Not cached on their own: the drivers (kernel.py) are, with everything compiled into
# them, under a key of every source file (support.SourceTreeCache).
COLD = {**JIT, "cache": False, "no_cpython_wrapper": True, "no_cfunc_wrapper": True}
HELPER = {**COLD, "forceinline": True}

if JIT_DISABLED:

    def non_negative(x):  # type: ignore[no-untyped-def]
        """Plain Python: ``x``."""
        return x

else:

    @intrinsic
    def non_negative(typingctx, x):
        """``x``, which the caller knows is >= 0 (a combatant index), said to LLVM
        (``llvm.assume``): an array index needs no fix-up for negative values then, a
        few instructions less on the chain of dependent steps from one action to the
        next."""
        sig = x(x)

        def codegen(context, builder, signature, args):
            builder.assume(builder.icmp_signed(">=", args[0], args[0].type(0)))
            return args[0]

        return sig, codegen


FIELD = 8  # bits per face in a pool
FIELD_MASK = 255
BYTES_ONES = 0x0101010101010101
NOBODY = np.int64(-1)
ZERO = np.int64(0)  # an argument: np.int64, not a literal (codes.py)
ONE = np.int64(1)
ON_TURN = np.bool_(False)  # act(): an action on its turn
ON_RELEASE = np.bool_(True)  # act(): the action declared on release (R5)
RANK_BY_COUNTING = 16  # up to this many combatants, T2 ranks by counting (n^2, no branch)
assert DEFENDED == UNDEFENDED + 1 and HASTY_ONLY == UNDEFENDED + 2
# More than ONE_LEVEL combatants: a round's counts of one combatant, collected in two
# fields of its row (``add_round`` adds them to the counts array at the round's end):
# W_OWN, OWN_BITS a count, those of its own dice (each at most its readiness,
# MAX_READINESS: asserted below); W_AIMED, AIMED_BITS a count, the attacks on it (at most
# the round's dice, under 2**15)
OWN_BITS = np.int64(5)
OWN_MASK = np.int64(31)
(S_ACTIONS, S_FIRST, S_MADE, S_EARLY, S_DEFENSES, S_WASTED, S_GUARD, S_HASTY) = (
    np.int64(OWN_BITS * k) for k in range(8)
)  # S_HASTY: hasty_ge.k at S_HASTY + OWN_BITS (k - 1), k = 1 .. 5 (up to bit 59)
AIMED_BITS = np.int64(16)  # undefended, defended, hasty_only (UNDEFENDED + outcome), hits
AIMED_MASK = np.int64(0xFFFF)
S_HITS = np.int64(3 * AIMED_BITS)
assert MAX_READINESS <= OWN_MASK and MAX_COMBATANTS * MAX_READINESS < 1 << (AIMED_BITS - 1)
assert GROUP == 4  # pick: the top level's four nodes


# --------------------------------------------------------------------------- pools
@njit(**HELPER)
def top(pool):
    """The highest face in a pool (0 for an empty pool): the field of its top set bit."""
    return (71 - leading_zeros(pool)) >> 3  # (63 - lz) // FIELD + 1; 7 >> 3 = 0 if empty


@njit(**HELPER)
def face_count(pool, f):
    """Dice of face ``f`` in a pool."""
    return (pool >> (FIELD * (f - 1))) & FIELD_MASK


@njit(**HELPER)
def one_die(f):
    """A pool of one die showing ``f``."""
    return np.int64(1) << (FIELD * (f - 1))


@njit(**HELPER)
def dice_in(pool):
    """Number of dice in a pool (the sum of its byte fields, each at most MAX_DICE)."""
    return (pool * BYTES_ONES) >> 56


@njit(**COLD)
def prepare(pool, pips, prep):
    """R2: a pool after ``pips`` of preparation, no die above 6.

    ``PREP_ONE_DIE`` [rev 2]: all pips on the one die that makes the best pool: the
    lowest die that can reach 6 becomes 6, else the highest die below 6 rises by all
    of them.  ``PREP_SIXES``: each pip to the highest die still below 6 (a die keeps
    taking pips until 6).  ``PREP_LOWEST``: each pip to the lowest die."""
    if pips <= 0:
        return pool
    if prep == PREP_ONE_DIE:
        for f in range(max(1, SIDES - pips), SIDES):
            if face_count(pool, f) > 0:
                return pool + one_die(SIDES) - one_die(f)
        for f in range(SIDES - 1, 0, -1):
            if face_count(pool, f) > 0:
                return pool + one_die(f + pips) - one_die(f)
        return pool
    if prep == PREP_SIXES:
        for f in range(SIDES - 1, 0, -1):
            while pips > 0 and face_count(pool, f) > 0:
                to = min(f + pips, SIDES)
                pool += one_die(to) - one_die(f)
                pips -= to - f
        return pool
    while pips > 0:  # PREP_LOWEST
        f = ONE  # (not a literal 1: face_count compiles once)
        while face_count(pool, f) == 0:
            f += 1
        if f == SIDES:
            break
        pool += one_die(f + 1) - one_die(f)
        pips -= 1
    return pool


# R1 by table: a byte below DIE_LIMIT is the die b % SIDES + 1 (stream.roll), whose pool
# field DIE_POOL[b] holds; a byte at or above it is rejected.  DIE_LIMIT is 252: a byte
# is rejected when its top six bits are all set (REJECT_BITS in every byte).
DIE_LIMIT = np.int64(256 - 256 % SIDES)
assert DIE_LIMIT == 252
DIE_POOL = np.array(
    [1 << (FIELD * (b % SIDES)) if b < DIE_LIMIT else 0 for b in range(256)], dtype=np.int64
)
REJECT_BITS = np.uint64(0xFCFCFCFCFCFCFCFC)
LOW_BYTES = np.uint64(0x0101010101010101)
HIGH_BITS = np.uint64(0x8080808080808080)
BYTE = np.uint64(0xFF)
EIGHT = np.uint64(8)


@njit(**HELPER)
def roll_round(st, P, W, n):
    """R1 for every combatant in scenario order, as ``roll_many`` draws it (the same
    bytes, rejections included), its pool to W_POOL; the byte buffer in registers for
    the whole round, each die a load from DIE_POOL (not a remainder and a shift), and a
    whole stream word of eight dice at once when the combatant needs eight more and none
    of its bytes is rejected (a zero byte of ``(word & REJECT_BITS) ^ REJECT_BITS``)."""
    buf = st[4]
    left = st[5]
    for i in range(n):
        pool = ZERO
        need = P[i, P_DICE]
        while need > 0:
            if left == 0:
                st[5] = np.uint64(0)  # (as roll_many: next_u64 of a pending state asks)
                buf = next_u64(st)
                left = EIGHT
                if need >= 8:
                    v = (buf & REJECT_BITS) ^ REJECT_BITS
                    if ((v - LOW_BYTES) & ~v & HIGH_BITS) == 0:  # no rejected byte
                        a = DIE_POOL[buf & BYTE] + DIE_POOL[(buf >> np.uint64(8)) & BYTE]
                        b = DIE_POOL[(buf >> np.uint64(16)) & BYTE]
                        b += DIE_POOL[(buf >> np.uint64(24)) & BYTE]
                        c = DIE_POOL[(buf >> np.uint64(32)) & BYTE]
                        c += DIE_POOL[(buf >> np.uint64(40)) & BYTE]
                        d = DIE_POOL[(buf >> np.uint64(48)) & BYTE] + DIE_POOL[buf >> np.uint64(56)]
                        pool += (a + b) + (c + d)
                        need -= 8
                        buf = np.uint64(0)
                        left = np.uint64(0)
                        continue
            x = buf & BYTE
            buf = buf >> EIGHT
            left = left - np.uint64(1)
            if np.int64(x) < DIE_LIMIT:
                pool += DIE_POOL[x]
                need -= 1
        W[i, W_POOL] = pool
    st[4] = buf
    st[5] = left


# --------------------------------------------------------------------------- events
@njit(**COLD)
def event(EV, G, kind, actor, other, a, b, c):
    """Append one event row (caller checks ``log``)."""
    k = G[G_EVENTS]
    EV[k, 0] = G[G_ROUND]
    EV[k, 1] = kind
    EV[k, 2] = actor
    EV[k, 3] = other
    EV[k, 4] = a
    EV[k, 5] = b
    EV[k, 6] = c
    EV[k, 7] = 0
    G[G_EVENTS] = k + 1


# --------------------------------------------------------------------------- R3
@njit(**HELPER)
def key_of(pool, low):
    """R3 key of a pool: (highest die v, T1 count of v, then ``low``, W_RANK: the T2 rank
    of the round's full pool, its twin flag and KEY_INDEX - i) packed so that a higher
    key wins; -1 for an empty pool.  No two combatants have the same key."""
    lz = leading_zeros(pool)
    count = (pool >> ((63 - lz) & 56)) & FIELD_MASK
    key = (((71 - lz) >> 3) << KEY_V) | (count << KEY_COUNT) | low
    return key if pool != 0 else NOBODY


@njit(**HELPER)
def combine(KT, s, level, j):
    """Node ``j`` of ``level`` in tree ``s``: the best key of its GROUP children (a
    maximum: no branch, a few vector instructions)."""
    base = j << GROUP_BITS
    best = KT[s, level - 1, base]
    for k in range(1, GROUP):
        best = max(best, KT[s, level - 1, base + k])
    KT[s, level, j] = best


@njit(**COLD)
def rebuild(KT, s):
    """Every node of tree ``s`` from its children (after the leaves were set)."""
    for level in range(1, KT.shape[1]):
        shift = GROUP_BITS * level
        for j in range((KT.shape[2] + (ONE << shift) - 1) >> shift):  # nodes of the level
            combine(KT, s, level, j)


@njit(**HELPER)
def set_key(KT, s, i, key):
    """Give combatant i the R3 key ``key`` in tree ``s`` (-1: it cannot take a turn) and
    update its ancestors, up to the first one that does not change: a node takes a
    higher key as it is, and is found again (``combine``) only when the key it held
    falls."""
    old = KT[s, 0, i]
    KT[s, 0, i] = key
    j = i
    for level in range(1, KT.shape[1]):
        j >>= GROUP_BITS
        node = KT[s, level, j]
        if key > node:
            KT[s, level, j] = key
        elif old == node:
            combine(KT, s, level, j)
            key = KT[s, level, j]
        else:
            break
        old = node


@njit(**HELPER)
def pick(st, KT, s):
    """R3 in tree ``s``: who takes the next turn, or NOBODY; and its key.

    The best key is the highest initiative v, then T1 the most unspent dice of v, then
    T2 the best full pool (the key but for its twin flag and index: its *class*); T3 a
    fair ``below(k)`` among the k combatants of that class, in scenario order (leaf
    order).  The top level (at most GROUP nodes) gives the best key and so the
    combatant: the leaf scanned for a one-level tree, else the index in the key.  Ties
    are counted only when its full pool has a twin (``ties_of``)."""
    top_level = KT.shape[1] - 1
    if top_level == 0:  # one level, as wide as the scenario (at most ONE_LEVEL leaves)
        best = NOBODY
        first = ZERO
        for k in range(min(ONE_LEVEL, KT.shape[2])):
            x = KT[s, 0, k]
            up = x > best
            first = k if up else first  # (a scalar loop: a vector maximum would wait for the
            best = x if up else best  # store of the key just spent)
    else:  # GROUP nodes at the top (the tree is a multiple of GROUP wide): the best in a
        # tree of maxima, two steps deep, not a chain of compares
        t = KT[s, top_level]
        best = max(max(t[0], t[1]), max(t[2], t[3]))
        first = KEY_INDEX - (best & KEY_INDEX)
    if best < 0:
        return NOBODY, best
    if (best >> KEY_TWIN) & 1:
        ties = ties_of(KT, s, best >> KEY_RANK, first)
        if ties > 1:
            first = pick_tied(st, KT, s, best >> KEY_RANK, ties, first)
    return first, best


@njit(**HELPER)
def ties_of(KT, s, same, first):
    """How many leaves of tree ``s`` have the class ``same`` (R3 keys but for the twin
    flag and the index), ``first`` the lowest of them (the best key: the index in a key
    is KEY_INDEX - i, so a tied leaf below it would have had a higher key)."""
    ties = ZERO
    for i in range(first, KT.shape[2]):
        ties += np.int64((KT[s, 0, i] >> KEY_RANK) == same)
    return ties


@njit(**COLD)
def pick_tied(st, KT, s, same, ties, first):
    """T3: a fair ``below(ties)`` among the ``ties`` leaves of tree ``s`` of class
    ``same``: the r-th of them in scenario order (leaf order), ``first`` the lowest."""
    r = below(st, ties)
    for i in range(first, KT.shape[2]):
        if (KT[s, 0, i] >> KEY_RANK) == same:
            if r == 0:
                return np.int64(i)
            r -= 1
    return NOBODY  # not reached: r < ties


@njit(**HELPER)
def join_r3(W, KT, i):
    """i may take turns (R3): its key into the tree (none if it has no dice)."""
    set_key(KT, R3_SET, i, key_of(W[i, W_POOL], W[i, W_RANK]))
    W[i, W_IN_R3] = 1


@njit(**HELPER)
def leave_r3(W, KT, i):
    """i holds (R5): out of R3."""
    set_key(KT, R3_SET, i, NOBODY)
    W[i, W_IN_R3] = 0


@njit(**HELPER)
def spend(P, W, G, KT, i, v, do, holds):
    """If ``do`` (0 or 1): i spends its highest unspent die ``v`` (R4, R5, R7; ``top`` of
    its pool, which the caller knows: the actor's from its R3 key, so the spend need not
    wait for the pool to find it).  Returns ``v``.  No branch on the dice: a combatant in
    R3 gets the key of what is left (the same key when ``do`` is 0).  ``holds``: the
    player's ``may_hold`` (False: nobody ever leaves R3 and nothing asks who has dice)."""
    pool = W[i, W_POOL]
    rest = pool - do * one_die(max(v, 1))
    W[i, W_POOL] = rest
    # who has dice, per side: only R5 asks; changed when a pool empties, not on every
    # spend (200 combatants with holders: about 3% faster)
    if holds and G[G_MAY_HOLD] != 0 and rest == 0 and pool != 0:
        G[G_ARMED] -= 1
        G[G_SIDE_ARMED + P[i, P_SIDE]] -= 1
    if not holds or W[i, W_IN_R3] != 0:  # holders are not in R3
        set_key(KT, R3_SET, i, key_of(rest, W[i, W_RANK]))
    return v


@njit(**HELPER)
def lower_best(KT, s, i, key):
    """Leaf i of tree ``s``, which holds the tree's best key (so every node above it holds
    it too), falls to ``key``: each node on its path becomes the best of the new value
    below it and its GROUP - 1 other children.  Those are read before the path's node of
    their level is stored (none of them is on the path), so they wait for nothing this
    change stores, and the chain from ``key`` to the top is one maximum a level (``set_key``
    finds the same nodes, each from its children in memory after the store below)."""
    j = non_negative(i)
    top_level = KT.shape[1] - 1
    for level in range(top_level):
        p = j & (GROUP - 1)
        base = j - p
        o1 = KT[s, level, base + ((p + 1) & (GROUP - 1))]
        o2 = KT[s, level, base + ((p + 2) & (GROUP - 1))]
        o3 = KT[s, level, base + ((p + 3) & (GROUP - 1))]
        KT[s, level, j] = key
        key = max(key, max(max(o1, o2), o3))
        j = j >> GROUP_BITS
    KT[s, top_level, j] = key


@njit(**HELPER)
def spend_best(P, W, G, KT, i, v, holds):
    """``spend(P, W, G, KT, i, v, 1, holds)`` of the combatant that holds the best key of
    R3 (R4: the action of its turn): the same pool, counts of who has dice and key, the
    tree updated by ``lower_best``."""
    pool = W[i, W_POOL]
    rest = pool - one_die(max(v, 1))
    W[i, W_POOL] = rest
    if holds and G[G_MAY_HOLD] != 0 and rest == 0 and pool != 0:
        G[G_ARMED] -= 1
        G[G_SIDE_ARMED + P[i, P_SIDE]] -= 1
    lower_best(KT, R3_SET, i, key_of(rest, W[i, W_RANK]))
    return v


# --------------------------------------------------------------------------- R4, R5, R7
@njit(**HELPER)
def at(rows, m, lb):
    """The entry of count ``m`` of the combatant whose first count's entry this round is
    ``rows`` (``W_ROWS``): a combatant's counts are consecutive slots of the layout
    (``Layout.count_slots``), rows of ``1 << lb`` cycles, so ``CS[i, m] + col`` without a
    load from ``CS`` (a 256-byte row per combatant) on the action's path."""
    return rows + (np.uint64(m) << lb)


@njit(**HELPER)
def add_round(Y, W, i, lb):
    """Add combatant i's counts of the round, collected in W_OWN and W_AIMED while it was
    played (an action adds to two fields of rows it reads anyway, not to a dozen
    scattered entries of the counts array), to its counts (``W_ROWS``); the round's
    resets clear them."""
    rows = np.uint64(W[i, W_ROWS])
    own = W[i, W_OWN]
    aimed = W[i, W_AIMED]
    Y[at(rows, ACTIONS, lb)] += (own >> S_ACTIONS) & OWN_MASK
    Y[at(rows, FIRST_ACTION, lb)] += (own >> S_FIRST) & OWN_MASK
    Y[at(rows, ATTACKS_MADE, lb)] += (own >> S_MADE) & OWN_MASK
    Y[at(rows, ATTACKED_BEFORE_ACTING, lb)] += (own >> S_EARLY) & OWN_MASK
    Y[at(rows, DEFENSES, lb)] += (own >> S_DEFENSES) & OWN_MASK
    Y[at(rows, WASTED_DEFENSES, lb)] += (own >> S_WASTED) & OWN_MASK
    Y[at(rows, GUARD_DEFENSES, lb)] += (own >> S_GUARD) & OWN_MASK
    for k in range(HIGHEST_SCALE):
        Y[at(rows, HASTY_GE_1 + k, lb)] += (own >> (S_HASTY + OWN_BITS * k)) & OWN_MASK
    for k in range(3):
        Y[at(rows, UNDEFENDED + k, lb)] += (aimed >> (AIMED_BITS * k)) & AIMED_MASK
    Y[at(rows, HITS, lb)] += (aimed >> S_HITS) & AIMED_MASK


@njit(**HELPER)
def opponents_have_dice(P, G, i):
    return G[G_ARMED] - G[G_SIDE_ARMED + P[i, P_SIDE]] > 0


@njit(**HELPER)
def can_answer(P, W, g, a, by_holder):
    """R7: g has a die >= a (any die against a holder's action) and is not surprised."""
    pool = W[g, W_POOL]
    return pool != 0 and P[g, P_SURPRISED] == 0 and (by_holder or top(pool) >= a)


@njit(**HELPER)
def rank_field(rank, twin, i):
    """W_RANK of combatant i: its T2 ``rank``, ``twin`` (another full pool of the round
    equals its own: only then can R3 need T3) and its index, as its R3 keys hold them."""
    return (rank << KEY_RANK) | (np.int64(twin) << KEY_TWIN) | (KEY_INDEX - i)


@njit(**COLD)
def rank_by_counting(W, KT):
    """T2 ranks (how many full pools of the round are lower) of more than
    RANK_BY_COUNTING combatants, without a sort: for each pool the count of pools at or
    below it (``le``: one pass per pool j adding ``p_j <= p_i`` to every i, vectorised in
    16 bits over the pools packed into 30 bits, 5 a face, in the same order), then each
    pool's multiplicity m from the ``le`` values (equal pools have equal ``le``, unequal
    ones unequal: a higher pool counts every pool at or below the lower one and itself),
    so the rank is ``le - m`` and the twin flag ``m > 1``, exactly (before: a heapsort
    and binary searches, about three times the time at 200 combatants).  Room: the
    bottom two levels of the scratch tree (at least n int64 wide: the pools and the
    multiplicities in 32 bits, ``le`` in 16), which hold NOBODY outside
    ``next_released`` and are given back so.  Called, not inlined: once a round, and
    compiled once, not into every player."""
    n = W.shape[0]
    m = np.uint64(n)
    pools = KT[SCRATCH_SET, 0].view(np.int32)  # pools[0 .. n), multiplicities [n .. 2n)
    le = KT[SCRATCH_SET, 1].view(np.int16)
    for i in range(m):
        pool = W[i, W_POOL]  # 5 bits a face (a face's count is at most MAX_READINESS, 20)
        pools[i] = np.int32(
            (pool & 31)
            | ((pool >> 3) & (31 << 5))
            | ((pool >> 6) & (31 << 10))
            | ((pool >> 9) & (31 << 15))
            | ((pool >> 12) & (31 << 20))
            | ((pool >> 15) & (31 << 25))
        )
        pools[m + i] = 0
        le[i] = 0
    for j in range(m):
        pj = pools[j]
        for i in range(m):
            le[i] += np.int16(pj <= pools[i])
    for i in range(n):
        pools[n + np.int64(le[i]) - 1] += 1
    for i in range(n):
        at = np.int64(le[i])
        same = np.int64(pools[n + at - 1])
        W[i, W_RANK] = rank_field(at - same, same > 1, i)
    for i in range(m):
        KT[SCRATCH_SET, 0, i] = NOBODY
        KT[SCRATCH_SET, 1, i] = NOBODY


@njit(**HELPER)
def next_initiative(KT):
    """R5 [rev 3]: the initiative of the turn R3 would give next (the best key at the
    top of the R3 tree: combatants with dice that are not holding), 0 if nobody has one.
    Draws nothing (a T3 tie does not change the value)."""
    top_level = KT.shape[1] - 1
    best = NOBODY
    for k in range(GROUP if top_level > 0 else min(ONE_LEVEL, KT.shape[2])):  # (one level: all)
        best = max(best, KT[R3_SET, top_level, k])
    return best >> KEY_V if best >= 0 else ZERO


@njit(**COLD)
def next_released(st, P, W, G, KT, EV, log):
    """R5: the released until_enemy_acts holder that declares next, or NOBODY.

    Those released by one action declare in R3 order (picked from the scratch tree),
    before those released by their actions; one without dice declares nothing and
    simply stops holding.  The one chosen rejoins R3 and its declare event is written.
    Under ``release = "higher"`` [rev 3] the one chosen declares only if its highest die
    is strictly above ``next_initiative`` (0 when nobody else could take a turn: any die
    is above it); otherwise it rejoins R3 without declaring (a rejoin event) and the
    next released holder is asked."""
    n = P.shape[0]
    while G[G_RELEASED] > 0:
        first = NO_STEP
        for i in range(n):
            if W[i, W_STATE] == H_RELEASED and W[i, W_RELEASE_EVENT] < first:
                first = W[i, W_RELEASE_EVENT]
        members = ZERO
        for i in range(n):
            released = W[i, W_STATE] == H_RELEASED and W[i, W_RELEASE_EVENT] == first
            if released and W[i, W_POOL] != 0:
                set_key(KT, SCRATCH_SET, i, key_of(W[i, W_POOL], W[i, W_RANK]))
                members += 1
        if members == 0:
            for i in range(n):
                if W[i, W_STATE] == H_RELEASED and W[i, W_RELEASE_EVENT] == first:
                    W[i, W_STATE] = H_NORMAL
                    G[G_RELEASED] -= 1
            continue
        d, _ = pick(st, KT, SCRATCH_SET)
        for i in range(n):
            released = W[i, W_STATE] == H_RELEASED and W[i, W_RELEASE_EVENT] == first
            if released and W[i, W_POOL] != 0:
                set_key(KT, SCRATCH_SET, i, NOBODY)
        W[d, W_STATE] = H_NORMAL
        G[G_RELEASED] -= 1
        value = top(W[d, W_POOL])
        if G[G_RELEASE_RULE] == RELEASE_HIGHER:
            nxt = next_initiative(KT)  # (before d rejoins R3)
            if value <= nxt:
                join_r3(W, KT, d)  # it acts at its natural place
                if log:
                    event(EV, G, EV_REJOIN, d, NOBODY, value, nxt, ZERO)
                continue
        join_r3(W, KT, d)
        if log:
            event(EV, G, EV_DECLARE, d, NOBODY, value, ZERO, ZERO)
        return d
    return NOBODY


def round_player(log, may_hold, lean=False, small=False):
    """``play_round`` for a driver: ``log`` (write events), ``may_hold`` (some combatant
    has a hold policy) and ``lean`` are compile-time constants of the closure, so numba
    drops the code of what cannot happen before it types and compiles anything: no event
    code in simulation, no R5 code (nor ``next_released``) in a scenario without holds.
    ``lean``: the player of the rounds the lanes could not finish (lanes_run.py), only
    ever given a scenario the lanes serve (lanes.why_not_lanes: no advantage, guard or
    hit_chance below 1, attack_share 0 or 1, at most RANK_BY_COUNTING combatants), so
    without R2 (``prepare``), ``rank_by_counting``, the guards' answers and the draws of
    attack_share and hit_chance: the same counts and draws, compiled in about 0.9 s of
    processor time against 2.4 s for the plain player and what only it calls
    (benchmarks/compile_breakdown.py, docs/performance.md).  A
    driver compiles only its own player; every player runs the same code.  So the player
    without holds serves every rule of revision 3 too: ``release`` concerns holders only
    (there are none), and the end of a ``chain`` run at a response is in the shared code
    (tests/test_contract.py holds both players to the twin on random scenarios of every
    ``order`` and ``release``).  ``small``: the player of scenarios of at most ONE_LEVEL
    combatants (kernel.run_rounds_small), their counts never packed and their T2 ranks
    counted, so neither ``add_round`` nor ``rank_by_counting`` is compiled into it."""

    @njit(**HELPER, link_only=lean)  # (lean: no machine code of its own, support.njit)
    def play_round(st, P, W, G, KT, T, GL, Y, col, CS, F, EV, no_hold):
        """One round, R1-R9 (the twin's ``Round.play``); returns 1 for a stalemate (R8).

        ``no_hold`` 1: the round follows a stalemate (R8): hold policies act as "never".
        ``log`` (of ``round_player``): write the round's events to ``EV``; ``may_hold``
        False: no combatant has a hold policy, so no R5 code (every R5 test below
        starts with it and is dropped: what it guards could never run).
        Counts go to column ``col`` of the counts array ``Y`` (rows ``CS[i, COUNT]``), the
        step of each combatant's first action to ``F[i, col]``.

        R4: an action spends the actor's highest die a; it is an attack with p =
        attack_share.  R5: the action is a holder's when declared on release, or, under
        ``holder_actions = "held_dice"`` [rev 2], when the actor held this round and another
        combatant already took an action of its own at an initiative below a.
        R7 [rev 2]: an attack is answered by its target D (normally with a die >= a, or any
        die against a holder's action; else hastily at scale a - die if its defend policy
        accepts it), by the first able backup guard when D will not defend normally (D then
        makes no hasty defense), and by every able always guard.  Who answers is decided
        from the dice before any response; D answers first, then the guards in scenario
        order, each with its highest die.  The common path has no branch on the dice: D's
        answer is a pair of flags applied by ``spend(..., do)`` and flag-weighted counts.
        R7 [rev 3]: after its target, an attack of an attacker with hit_chance < 1 draws
        whether it would take effect; a responder whose policy has ``+when_effective``
        (P_WHEN_EFFECTIVE) drops out of the answers decided above when it would not, and
        nobody takes its place.  hits: it would take effect and met no normal response;
        wasted_defenses: responses to one that would not.
        R5: an attack releases the until_attacked holder it hits (after the responses);
        any action releases the actor's opponents' until_enemy_acts holders."""
        P = W  # (every driver passes one array as both: its parameters read through the
        # round's own base address, one register less in the loop of actions)
        n = P.shape[0]
        lb = np.uint64(G[G_LOG_BATCH])  # the counts array's rows: 1 << lb cycles
        # more than ONE_LEVEL combatants: a round's counts collected in W_OWN and W_AIMED
        # and added at its end (add_round: a dozen fields a combatant, paid back by the
        # actions of a big fight, not by a few); else each straight to the counts array
        # (the lanes' lean player and the small one: at most ONE_LEVEL, never packed; a
        # constant False, so none of the packed code is compiled into them)
        packed = False if lean or small else n > ONE_LEVEL
        # ---- R1, R2, T2 and R3
        if log and no_hold:
            event(EV, G, EV_NO_HOLD, NOBODY, NOBODY, ZERO, ZERO, ZERO)
        G[G_STEP] = 0
        if may_hold:  # what only R5 asks for (a player without holds keeps none of it)
            for k in range(2 * G[G_SIDES]):
                G[G_SIDE_ARMED + k] = 0
            G[G_ARMED] = 0
            G[G_HOLDING] = 0
            G[G_WAITING_FOR_ENEMY] = 0
            G[G_RELEASED] = 0
        # R1: every combatant's dice, in scenario order
        if not log:
            roll_round(st, P, W, n)
        else:
            for i in range(n):
                # (the roll event shows the faces in the order drawn)
                pool, faces = roll_many(st, P[i, P_DICE], SIDES, FIELD, FACE_BITS)
                if P[i, P_FIXED] != 0:  # trace(dice=...): drawn as usual, then replaced
                    pool = P[i, P_FIXED_POOL]
                    faces = P[i, P_FIXED_FACES]
                W[i, W_POOL] = pool
                event(EV, G, EV_ROLL, i, NOBODY, faces, P[i, P_DICE], ZERO)
        for i in range(n):
            pool = W[i, W_POOL]
            if not lean and P[i, P_ADVANTAGE] > 0:  # R2
                ready = prepare(pool, P[i, P_ADVANTAGE], G[G_PREP])
                W[i, W_POOL] = ready
                if log:
                    event(EV, G, EV_PREP, i, NOBODY, pool, ready, ZERO)
            W[i, W_ATTACKED] = 0
            if packed:  # its counts of the round (add_round)
                W[i, W_OWN] = 0
                W[i, W_AIMED] = 0
            W[i, W_FIRST] = NO_STEP
            W[i, W_ROWS] = np.int64(CS[i, 0] + col)  # its counts: CS[i, m] = CS[i, 0] + (m << lb)
            if may_hold:  # R5's state: who has dice per side, hold states, held dice
                armed = np.int64(W[i, W_POOL] != 0)
                G[G_ARMED] += armed
                G[G_SIDE_ARMED + P[i, P_SIDE]] += armed
                holds = P[i, P_HOLD] != HOLD_NEVER and not no_hold
                W[i, W_STATE] = H_FRESH if holds else H_NORMAL
                W[i, W_HELD] = 0
                W[i, W_RELEASE_EVENT] = NO_STEP
                W[i, W_LOWEST] = NO_STEP
        # T2: the rank of each full pool among the round's pools (how many are lower; pool
        # integers compare as the sorted dice do, a die beating no die); everyone joins R3
        if lean or small or n <= RANK_BY_COUNTING:
            for i in range(n):
                pi = W[i, W_POOL]
                rank = ZERO
                same = ZERO
                for j in range(n):
                    rank += np.int64(W[j, W_POOL] < pi)
                    same += np.int64(W[j, W_POOL] == pi)
                W[i, W_RANK] = rank_field(rank, same > 1, i)
        else:
            rank_by_counting(W, KT)
        for i in range(n):
            KT[R3_SET, 0, i] = key_of(W[i, W_POOL], W[i, W_RANK])
            if may_hold:  # without holds everyone stays in R3 (spend does not ask)
                W[i, W_IN_R3] = 1
        rebuild(KT, R3_SET)
        # ---- turns (R3), until R9
        while True:
            # R5: holders whose every opponent is out of dice rejoin R3
            if may_hold and G[G_HOLDING] > 0:
                for h in range(n):
                    if W[h, W_STATE] == H_HOLDING and not opponents_have_dice(P, G, h):
                        W[h, W_STATE] = H_NORMAL
                        G[G_HOLDING] -= 1
                        if P[h, P_HOLD] == HOLD_UNTIL_ENEMY_ACTS:
                            G[G_WAITING_FOR_ENEMY] -= 1
                        join_r3(W, KT, h)
                        if log:
                            event(EV, G, EV_RELEASE, h, NOBODY, RELEASE_OPPONENTS_OUT, ZERO, ZERO)
            c, key = pick(st, KT, R3_SET)  # R3
            if c == NOBODY:
                break  # R9: no unspent dice, or only holders nothing can release
            c = non_negative(c)
            v = key >> KEY_V  # its initiative: top(W[c, W_POOL]), from its R3 key
            if log:
                event(EV, G, EV_TURN, c, NOBODY, v, ZERO, ZERO)
            if may_hold and W[c, W_STATE] == H_FRESH:
                # R5, its first turn: it holds unless no opponent has dice (it would be
                # released at once) or its event has passed (docs/rules-decisions.md)
                W[c, W_STATE] = H_NORMAL
                hold = P[c, P_HOLD]
                side_acts = G[G_SIDE_ARMED + G[G_SIDES] + P[c, P_SIDE]]
                if opponents_have_dice(P, G, c) and (
                    (hold == HOLD_UNTIL_ATTACKED and W[c, W_ATTACKED] == 0)
                    or (hold == HOLD_UNTIL_ENEMY_ACTS and G[G_STEP] == side_acts)
                ):
                    W[c, W_STATE] = H_HOLDING
                    W[c, W_HELD] = 1
                    G[G_HOLDING] += 1
                    if hold == HOLD_UNTIL_ENEMY_ACTS:
                        G[G_WAITING_FOR_ENEMY] += 1
                    leave_r3(W, KT, c)
                    if log:
                        event(EV, G, EV_HOLD, c, NOBODY, ZERO, ZERO, ZERO)
                    continue
            # R4 (one place for every action of the turn): its action; under order = "chain"
            # every die of value v, one action each, until an action is answered (R3/R6
            # [rev 3]; "chain_unbroken": every die of v); then released until_enemy_acts
            # holders declare one action each (R5; under release = "higher" [rev 3] only
            # one whose die is above the next turn's initiative, the others rejoin R3)
            on_release = ON_TURN
            a = v  # the die of c's next action: its top
            # c holds the best key of R3 (not a T3 tie's other pick): its spend lowers the
            # tree's maximum (lower_best), on this action only (a chain's next one may not be)
            best = (key & KEY_INDEX) == KEY_INDEX - c
            while True:
                # ---- R4: c spends its highest die a on one action
                if best:
                    spend_best(P, W, G, KT, c, a, may_hold)
                    best = False
                else:
                    spend(P, W, G, KT, c, a, ONE, may_hold)
                by_holder = on_release
                if may_hold and W[c, W_HELD] != 0 and G[G_HOLDER_ACTIONS] == HOLDER_HELD_DICE:
                    for j in range(n):
                        by_holder |= (j != c) & (W[j, W_LOWEST] < a)
                step = G[G_STEP]
                responded = ZERO  # R3 [rev 3]: responses to this action (a chain ends)
                # c's counts of this action: actions, first_action for the round's first
                # action, attacks_made for an attack (packed: in W_OWN, add_round)
                mine = (ONE << S_ACTIONS) + (np.int64(step == 0) << S_FIRST)
                rc = np.uint64(W[c, W_ROWS])
                if not packed:
                    Y[at(rc, ACTIONS, lb)] += 1
                    if step == 0:  # the round's first action
                        Y[at(rc, FIRST_ACTION, lb)] += 1
                W[c, W_FIRST] = min(W[c, W_FIRST], step)
                G[G_STEP] = step + 1
                side = P[c, P_SIDE]
                if (
                    may_hold and G[G_MAY_HOLD] != 0
                ):  # what R5 asks: lowest initiative, actions per side
                    W[c, W_LOWEST] = min(W[c, W_LOWEST], a)
                    G[G_SIDE_ARMED + G[G_SIDES] + side] += 1
                if log:
                    event(EV, G, EV_ACT, c, NOBODY, a, np.int64(by_holder), ZERO)
                share = P[c, P_SHARE]
                if share == SHARE_ALWAYS or (
                    not lean and share != SHARE_NEVER and chance(st, share)
                ):
                    # below(count); for a power of two count = mask + 1 (>= 2) the same draw
                    # is one byte & mask (every byte is below its limit 256), without
                    # below's two multiplications on the way to the target
                    mask = P[c, P_TARGET_MASK]
                    r = next_byte(st) & mask if mask >= 0 else below(st, P[c, P_TARGET_COUNT])
                    d = non_negative(T[non_negative(P[c, P_TARGET_START] + r)])
                    mine += ONE << S_MADE  # (attacks_received: counts.derived_rows)
                    rd = np.uint64(W[d, W_ROWS])
                    early = (W[d, W_ATTACKED] == 0) & (W[d, W_FIRST] == NO_STEP)
                    if not packed:
                        Y[at(rc, ATTACKS_MADE, lb)] += 1
                        Y[at(rd, ATTACKED_BEFORE_ACTING, lb)] += np.int64(early)
                    W[d, W_ATTACKED] = 1
                    if log:
                        event(EV, G, EV_ATTACK, c, d, a, np.int64(by_holder), ZERO)
                    # R7 [rev 3]: would it take effect if nobody answered it? Drawn once per
                    # attack, after its target, only for a hit_chance below 1
                    effective = ONE
                    if not lean and P[c, P_HIT] != HIT_ALWAYS:
                        effective = np.int64(chance(st, P[c, P_HIT]))
                        if log and effective == 0:
                            event(EV, G, EV_NO_EFFECT, c, d, ZERO, ZERO, ZERO)
                    # R7: who answers, from the dice before any response
                    pool = W[d, W_POOL]
                    die = top(pool)
                    able = (pool != 0) & (P[d, P_SURPRISED] == 0) & (P[d, P_DEFEND] != DEFEND_NEVER)
                    normal = able & (by_holder | (die >= a))
                    hasty = able & (not normal) & (a - die <= P[d, P_HASTY_LIMIT])
                    g0 = GL[2 * d]  # D's guards (R7; R7a: a named guard only of its allies)
                    g1 = g0 + GL[2 * d + 1]
                    backup = NOBODY
                    if not lean and g1 > g0 and not normal:
                        for k in range(g0, g1):
                            g = non_negative(GL[k])
                            if (
                                g != d
                                and P[g, P_GUARD] == GUARD_BACKUP
                                and can_answer(P, W, g, a, by_holder)
                            ):
                                backup = g
                                hasty = False
                                break
                    # R7 [rev 3]: a responder whose policy answers only an attack that would
                    # take effect stands aside from one that would not (nobody takes its place)
                    keep = (effective != 0) | ((P[d, P_WHEN_EFFECTIVE] & WE_DEFEND) == 0)
                    if log and (normal | hasty) and not keep:
                        event(EV, G, EV_DECLINED, d, d, c, ZERO, ZERO)
                    normal = normal & keep
                    hasty = hasty & keep
                    # R7: the responses, D first
                    own = np.int64(normal | hasty)
                    spend(P, W, G, KT, d, die, own, may_hold)
                    scale = (a - die) * np.int64(hasty)
                    # D's counts: attacked_before_acting, defenses, wasted_defenses and a
                    # hasty defense of scale k (1 .. 5) once, in row hasty_ge.k; the drivers
                    # turn these rows into hasty_ge (sums of the rows above), hasty_defenses
                    # and hasty_scale_total (counts.derived_rows): no branch on the dice
                    if packed:
                        W[d, W_OWN] += (
                            (np.int64(early) << S_EARLY)
                            + (own << S_DEFENSES)
                            + ((own * (ONE - effective)) << S_WASTED)
                            + (np.int64(hasty) << (S_HASTY + OWN_BITS * (max(scale, ONE) - ONE)))
                        )
                    else:
                        Y[at(rd, DEFENSES, lb)] += own
                        Y[at(rd, WASTED_DEFENSES, lb)] += own * (ONE - effective)
                        Y[at(rd, HASTY_GE_1 + max(scale, ONE) - ONE, lb)] += np.int64(hasty)
                    if log and own != 0:
                        kind = RESPONSE_SELF if normal else RESPONSE_HASTY
                        event(EV, G, EV_RESPONSE, d, d, die, kind, scale)
                    answered = np.int64(normal)  # normal responses
                    if not lean:  # the guards' answers (R7, R7a)
                        for k in range(g0, g1):
                            g = non_negative(GL[k])
                            if g != d and (
                                g == backup
                                or (
                                    P[g, P_GUARD] == GUARD_ALWAYS
                                    and can_answer(P, W, g, a, by_holder)
                                )
                            ):
                                if effective == 0 and (P[g, P_WHEN_EFFECTIVE] & WE_GUARD) != 0:
                                    if log:  # R7 [rev 3]: it stands aside
                                        event(EV, G, EV_DECLINED, g, d, c, ZERO, ZERO)
                                    continue
                                # a guard is never hasty
                                used = spend(P, W, G, KT, g, top(W[g, W_POOL]), ONE, may_hold)
                                if packed:
                                    W[g, W_OWN] += (
                                        (ONE << S_DEFENSES)
                                        + (ONE << S_GUARD)
                                        + ((ONE - effective) << S_WASTED)
                                    )
                                else:
                                    rg = np.uint64(W[g, W_ROWS])
                                    Y[at(rg, DEFENSES, lb)] += 1
                                    Y[at(rg, GUARD_DEFENSES, lb)] += 1
                                    Y[at(rg, WASTED_DEFENSES, lb)] += ONE - effective
                                answered += 1
                                if log:
                                    named = P[g, P_GUARD_NAMED]  # R7a in the trace
                                    event(EV, G, EV_RESPONSE, g, d, used, RESPONSE_GUARD, named)
                    responded = own + answered
                    # the attack's outcome: exactly one of undefended, defended, hasty_only
                    outcome = 1 if answered > 0 else (2 if hasty else 0)
                    # (undefended, defended, hasty_only); R7 [rev 3] hits: it would take
                    # effect and met no normal response
                    if packed:
                        W[d, W_AIMED] += (ONE << (AIMED_BITS * outcome)) + (
                            (effective * np.int64(answered == 0)) << S_HITS
                        )
                    else:
                        Y[at(rd, UNDEFENDED + outcome, lb)] += 1
                        Y[at(rd, HITS, lb)] += effective * np.int64(answered == 0)
                    if log and answered == 0 and not hasty:
                        event(EV, G, EV_UNANSWERED, d, NOBODY, ZERO, ZERO, ZERO)
                    # R5 until_attacked: it has answered (or could not); from now on it
                    # acts normally
                    if (
                        may_hold
                        and W[d, W_STATE] == H_HOLDING
                        and P[d, P_HOLD] == HOLD_UNTIL_ATTACKED
                    ):
                        W[d, W_STATE] = H_NORMAL
                        G[G_HOLDING] -= 1
                        join_r3(W, KT, d)
                        if log:
                            event(EV, G, EV_RELEASE, d, NOBODY, RELEASE_ATTACKED, ZERO, ZERO)
                if packed:
                    W[c, W_OWN] += mine
                # R5 until_enemy_acts: c's action releases its opponents' holders (scenario order)
                if may_hold and G[G_WAITING_FOR_ENEMY] > 0:
                    for h in range(n):
                        if (
                            W[h, W_STATE] == H_HOLDING
                            and P[h, P_HOLD] == HOLD_UNTIL_ENEMY_ACTS
                            and P[h, P_SIDE] != side
                        ):
                            W[h, W_STATE] = H_RELEASED
                            W[h, W_RELEASE_EVENT] = G[G_STEP]
                            G[G_HOLDING] -= 1
                            G[G_WAITING_FOR_ENEMY] -= 1
                            G[G_RELEASED] += 1
                            if log:
                                event(EV, G, EV_RELEASE, h, NOBODY, RELEASE_ENEMY_ACTED, ZERO, ZERO)
                # ---- the next action of this turn, if any: under a chain order its next
                # die of value v (a stays v); under "chain" [rev 3] only if nobody responded
                if (
                    not on_release
                    and G[G_ORDER] != ORDER_DYNAMIC
                    and W[c, W_POOL] != 0
                    and top(W[c, W_POOL]) == v
                ):
                    if responded == 0 or G[G_ORDER] == ORDER_CHAIN_UNBROKEN:
                        continue
                    if log:  # the run ends: R3 chooses the next turn afresh
                        event(EV, G, EV_RUN_BROKEN, c, NOBODY, v, ZERO, ZERO)
                if not may_hold:
                    break
                if G[G_RELEASED] == 0:
                    break
                c = next_released(st, P, W, G, KT, EV, log)
                if c == NOBODY:
                    break
                on_release = ON_RELEASE
                a = top(W[c, W_POOL])

        # held dice expire (R5; without a hold policy every die is spent by R9)
        if may_hold:
            for i in range(n):
                left = dice_in(W[i, W_POOL])
                if left > 0:
                    Y[CS[i, EXPIRED_DICE] + col] += left
                    if log:
                        event(EV, G, EV_EXPIRED, i, NOBODY, left, ZERO, ZERO)
        # R8: nobody took an action: everyone is on edge, the next round forbids holds
        stalemate = np.int64(1) if G[G_STEP] == 0 else ZERO
        if stalemate:
            Y[np.uint64(G[G_STALEMATE_ROW]) + col] += 1
            for i in range(n):
                Y[CS[i, ON_EDGE] + col] += 1
                Y[CS[i, EDGE_WOUND] + col] += P[i, P_WOUND]
            if log:
                event(EV, G, EV_STALEMATE, NOBODY, NOBODY, ZERO, ZERO, ZERO)
        for i in range(n):  # (no_action: counts.derived_rows, from actions)
            F[i, col] = W[i, W_FIRST]
            if packed:
                add_round(Y, W, i, lb)
        return stalemate

    return play_round
