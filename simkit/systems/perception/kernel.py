"""System ``perception``: d10 + Perception, individual or group (RULES.md P1-P4).

``compile_scenario`` flattens a validated scenario into integer arrays;
``run_chunk`` plays rounds of a chunk and adds their counts to running sums;
``trace`` plays rounds and returns each round's counts (for the tests that compare
the kernel with the plain-Python twin in ``tests/naive_perception.py``).  Both take
the chunk's key and play round ``r`` on its own stream (``round_start``, see
random_stream.py), so a round's draws do not depend on the rounds before it.  The choices
where RULES.md is open are listed in ``docs/rules-decisions.md``, section
``perception``.

A round, and the order of its draws from its random stream
----------------------------------------------------------
Every round starts on its own stream (``round_start_lazy(st, key, r)``), then draws:

1. P1 individual: one d10 per combatant in scenario order.  P2 group: one d10 per
   side, sides in order of first appearance.
2. The acting order, as *slots* (0 = first).  P1: descending initiative, then higher
   perception; combatants still tied get a fair random order (``tie = "random"``)
   or share one slot (``"simultaneous"``).  P2: sides in descending total, then
   higher group perception, then a fair random order (the ``tie`` rule is not used);
   then, side after side in acting order, the side's members in a fresh fair random
   order (``within_side = "random"``) or in scenario order (``"listed"``, no draw),
   one slot each.  Tied groups are ordered from the first slot to the last.
   A *fair random order* of ``m`` candidates is drawn by sequential selection:
   ``below(m)`` picks the first of them, counted in scenario order, ``below(m - 1)``
   the next among those left (still in scenario order), ... until one is left, which
   draws nothing.  Each of the ``m!`` orders has probability ``1 / m!``.
3. P3/P4: everyone acts once and carries out the first action it stated.  These
   actions are drawn in scenario order once the acting order is fixed: an attack
   with probability ``attack_share`` (``chance`` drawn only if
   ``0 < attack_share < 1``), then ``below`` over the target list if it is an attack
   and the list has more than one entry.  Policies do not depend on what a
   combatant learns, so this order changes no probability.

P3 reduces to the slots in both modes: ``i`` learns the first action of opponent
``j`` iff ``i``'s slot is earlier than ``j``'s (in group mode opponents are on other
sides and a side's members hold consecutive slots; in a shared slot nobody learns the
other's).  An attack counts as "before acting" only from a strictly earlier slot.

Implementation notes
--------------------
* Per-combatant parameters and round state live in one int64 table ``cb``, side
  parameters in ``sd``, and the order buffers, member lists and target lists in the
  vector ``sg``; the chunk kernel takes ``unmanaged`` views of all of them, and every
  helper is inlined into it.
* P1 slots are counted over pairs of packed keys ``(initiative << 5) | perception``
  instead of sorting: no unpredictable branches.  Ties are rare and shuffled apart.
* ``below`` over at most 256 is re-implemented (``_below``) with the rejection limit
  and a multiply-shift for ``% n`` from tables: the same draws without two divisions
  by a variable (tests/test_perception_twin.py checks it against ``below``).
* Every round is its own regeneration cycle (no state carries over), so
  ``flush_cycle(y, 1, ...)`` after every round would give ``s1 = sl = sum y``,
  ``s2 = sum y^2`` and ``tot = (R, R, R)``.  The chunk kernel adds the same integer
  sums directly: every count is 0 or 1 (so ``y^2 = y``) except ``known_intents``,
  whose squares it keeps apart, and the counts that are the same in every round
  (P4: one action) are added once per chunk.  Up to ``HIST_MAX_N`` combatants a
  round only counts its outcome (every slot and attacked-before-acting flag, all the
  counts depend on) in a histogram, and the counts are derived once per distinct
  outcome at the end of the chunk.  tests/test_perception_twin.py checks that both
  paths give sums bit-identical to flushing each traced round.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from simkit.metrics import Layout, Sums
from simkit.systems.stream import (
    STATE_WORDS,
    chance,
    chance_threshold,
    next_byte,
    roll,
    round_start_lazy,
)
from simkit.systems.support import unmanaged

COUNTS = (
    "first_action",
    "actions",
    "no_action",
    "attacked_before_acting",
    "known_intents",
    "intent_disclosed",
)
N_COUNTS = len(COUNTS)
K_FIRST, K_ACTIONS, K_NO_ACTION, K_ABBA, K_KNOWN, K_DISCLOSED = range(N_COUNTS)
DIST_SIZE = 2  # P4: exactly one action per round, so actions_dist.0 and .1

MODE_CODES = {"individual": 0, "group": 1}
TIE_CODES = {"random": 0, "simultaneous": 1}
WITHIN_CODES = {"random": 0, "listed": 1}

# Columns of the per-combatant table ``cb``: parameters, then the round's state.
C_PER, C_SIDE, C_SHARE, C_TSTART, C_TCOUNT = range(5)
W_SLOT, W_ABBA, W_KEY = range(5, 8)
N_COLS = 8
# Columns of the per-side table ``sd``.
S_GSTAT, S_MSTART, S_MCOUNT, S_KEY = range(4)
N_SIDE_COLS = 4

SHARE_ONE = 1 << 53  # chance threshold of attack_share = 1: always attacks, no draw
SHARE_NEVER = -1  # attack_share = 0: never attacks, no draw
KEY_SHIFT_TOTAL = 5  # sort keys: (initiative << 5) | perception; perception <= 30
HIST_MAX_N = 4  # chunks of up to 4 combatants count outcomes in a histogram
HIST_SLOT_BITS = 2  # an outcome code: 2 bits of slot and 1 attacked bit per combatant
HIST_SLOT_MASK = 3
MAX_BYTE_BELOW = 256  # every ``below`` here is over at most 200 (combatants): one byte
MAGIC_SHIFT = 24  # b // n == (b * ceil(2**24 / n)) >> 24 for bytes b and n <= 256
# ``below(n)`` for n <= 256 accepts a byte under BELOW_LIMIT[n] and reduces it mod n;
# the tables spare the kernel its two divisions by a variable.
BELOW_LIMIT = np.array([0] + [256 - 256 % n for n in range(1, 257)], dtype=np.int64)
BELOW_MAGIC = np.array([0] + [-(-(1 << MAGIC_SHIFT) // n) for n in range(1, 257)], dtype=np.int64)


@dataclass(frozen=True)
class Compiled:
    """A perception scenario as flat arrays for the kernel."""

    layout: Layout
    table: np.ndarray  # int64 [n, N_COLS]: parameters (state columns zero)
    sides: np.ndarray  # int64 [n_sides, N_SIDE_COLS]: group perception, member list
    sg: np.ndarray  # int64: order buffer [n], side order [n_sides], members [n], targets
    mode: int  # 0 individual (P1), 1 group (P2)
    tie: int  # 0 random, 1 simultaneous (P1 only)
    within: int  # 0 random, 1 listed (P2 only)


def compile_scenario(scenario, layout: Layout) -> Compiled:
    """Flatten a validated perception scenario."""
    n = len(scenario.combatants)
    if n > MAX_BYTE_BELOW:
        raise ValueError(f"at most {MAX_BYTE_BELOW} combatants, got {n}")
    side_names = scenario.sides
    ns = len(side_names)
    group_stat = scenario.rules["group_stat"]
    table = np.zeros((n, N_COLS), dtype=np.int64)
    sides = np.zeros((ns, N_SIDE_COLS), dtype=np.int64)
    members: list[int] = []
    for s, side in enumerate(side_names):
        mine = [i for i, c in enumerate(scenario.combatants) if c.side == side]
        sides[s, S_MSTART] = len(members)
        sides[s, S_MCOUNT] = len(mine)
        members.extend(mine)
        perceptions = [scenario.combatants[i]["perception"] for i in mine]
        commanders = [
            scenario.combatants[i]["perception"]
            for i in mine
            if scenario.combatants[i]["commander"]
        ]
        if group_stat == "highest":
            sides[s, S_GSTAT] = max(perceptions)
        elif commanders:
            sides[s, S_GSTAT] = commanders[0]
        elif scenario.rules["mode"] == "group":  # check_scenario rejects this first
            raise ValueError(f"side {side!r} has no commander (group_stat = 'commander')")
    targets: list[int] = []
    for i, c in enumerate(scenario.combatants):
        table[i, C_PER] = c["perception"]
        table[i, C_SIDE] = side_names.index(c.side)
        share = c["attack_share"]
        if share >= 1.0:
            table[i, C_SHARE] = SHARE_ONE
        elif share <= 0.0:
            table[i, C_SHARE] = SHARE_NEVER
        else:
            table[i, C_SHARE] = chance_threshold(share)
        tl = scenario.targets(i)
        table[i, C_TSTART] = len(targets)
        table[i, C_TCOUNT] = len(tl)
        targets.extend(tl)
    sg = np.zeros(2 * n + ns + len(targets), dtype=np.int64)
    sg[n + ns : 2 * n + ns] = members
    sg[2 * n + ns :] = targets
    rules = scenario.rules
    return Compiled(
        layout=layout,
        table=table,
        sides=sides,
        sg=sg,
        mode=MODE_CODES[rules["mode"]],
        tie=TIE_CODES[rules["tie"]],
        within=WITHIN_CODES[rules["within_side"]],
    )


# --------------------------------------------------------------------------- kernel
_JIT = {"cache": True, "nogil": True}


@njit(**_JIT, inline="always")
def _below(st, n):
    """``below(st, n)`` of random_stream.py for ``n <= 256``, without divisions."""
    if n <= 1:
        return 0
    limit = BELOW_LIMIT[n]
    while True:
        b = next_byte(st)
        if b < limit:
            return b - ((b * BELOW_MAGIC[n]) >> MAGIC_SHIFT) * n


@njit(**_JIT, inline="always")
def _pick_next(st, sg, a, left):
    """One step of a fair random order: move a pick of ``sg[a : a + left]`` to ``sg[a]``.

    ``below(left)`` is the index of the pick among them; the others keep their order.
    """
    p = _below(st, left)
    if p > 0:
        v = sg[a + p]
        for b in range(a + p, a, -1):
            sg[b] = sg[b - 1]
        sg[a] = v


@njit(**_JIT, inline="always")
def _shuffle_ties(st, key_of, keys, sg, start, m):
    """Give every run of equal keys in the order ``sg[start : start + m]`` a fair order.

    ``keys[sg[k], key_of]`` is the key of the one in position ``k``; runs are in
    scenario order and are shuffled from the first position to the last.
    """
    k = 0
    while k < m:
        key = keys[sg[start + k], key_of]
        run = 1
        while k + run < m and keys[sg[start + k + run], key_of] == key:
            run += 1
        for r in range(run - 1):
            _pick_next(st, sg, start + k + r, run - r)
        k += run


@njit(**_JIT, inline="always")
def _order_individual(st, tie, cb, sg, n):
    """P1: roll and order; fill every ``W_SLOT`` (the acting slot, 0 = first)."""
    for i in range(n):  # P1: 1d10 + perception, dice in scenario order
        per = cb[i, C_PER]
        cb[i, W_KEY] = ((roll(st, 10) + per) << KEY_SHIFT_TOTAL) | per
        cb[i, W_SLOT] = 0
    # Slots by counting over pairs (no sorting, no unpredictable branches).  The key
    # orders by initiative, then higher perception (P1).  Still tied: "simultaneous"
    # shares the slot (slot = number strictly ahead); "random" puts them in scenario
    # order for now and then shuffles them below.
    random_tie = tie == 0
    ties = False
    for i in range(n):
        ki = cb[i, W_KEY]
        si = cb[i, W_SLOT]
        for j in range(i + 1, n):
            kj = cb[j, W_KEY]
            si += ki < kj
            cb[j, W_SLOT] += (ki > kj) | ((ki == kj) & random_tie)
            ties |= ki == kj
        cb[i, W_SLOT] = si
    if ties and random_tie:  # P1 tie = "random": a fair random order of the tied
        for i in range(n):
            sg[cb[i, W_SLOT]] = i
        _shuffle_ties(st, W_KEY, cb, sg, 0, n)
        for k in range(n):
            cb[sg[k], W_SLOT] = k


@njit(**_JIT, inline="always")
def _order_group(st, within, cb, sd, sg, n, ns):
    """P2: one d10 per side, sides in order, members within; fill every ``W_SLOT``."""
    so = n  # the sides in acting order
    for s in range(ns):  # P2: one d10 per side, in order of first appearance
        stat = sd[s, S_GSTAT]
        sd[s, S_KEY] = ((roll(st, 10) + stat) << KEY_SHIFT_TOTAL) | stat
    for s in range(ns):  # descending total, tie: higher group perception
        ks = sd[s, S_KEY]
        pos = 0
        for q in range(ns):
            kq = sd[q, S_KEY]
            pos += (kq > ks) | ((kq == ks) & (q < s))
        sg[so + pos] = s
    _shuffle_ties(st, S_KEY, sd, sg, so, ns)  # P2: then a fair random order
    mem = n + ns
    slot = 0
    for r in range(ns):
        s = sg[so + r]
        start = sd[s, S_MSTART]
        m = sd[s, S_MCOUNT]
        for q in range(m):
            sg[slot + q] = sg[mem + start + q]
        for q in range(m):
            if within == 0 and q < m - 1:  # within_side = "random": a fresh fair order
                _pick_next(st, sg, slot + q, m - q)
            cb[sg[slot + q], W_SLOT] = slot + q
        slot += m


@njit(**_JIT, inline="always")
def _play(st, mode, tie, within, cb, sd, sg, n, ns, tg):
    """Play one round: every ``W_SLOT`` (acting slot) and ``W_ABBA`` (attacked before)."""
    if mode == 0:
        _order_individual(st, tie, cb, sg, n)
    else:
        _order_group(st, within, cb, sd, sg, n, ns)
    # P3/P4: everyone carries out the first action it stated (drawn in scenario order)
    for i in range(n):
        cb[i, W_ABBA] = 0
    for i in range(n):
        threshold = cb[i, C_SHARE]
        if threshold >= SHARE_ONE or (threshold >= 0 and chance(st, threshold)):
            t = sg[tg + cb[i, C_TSTART] + _below(st, cb[i, C_TCOUNT])]
            cb[t, W_ABBA] |= cb[i, W_SLOT] < cb[t, W_SLOT]


@njit(**_JIT, inline="always")
def _count(cb, y, ksq, n, w):
    """Add ``w`` times the counts of the round in ``cb`` to ``y`` (known_intents^2 to ``ksq``).

    The counts that are the same in every round (``_add_constant``) are left out.
    """
    before = n * N_COUNTS
    for i in range(n):
        base = i * N_COUNTS
        si = cb[i, W_SLOT]
        side = cb[i, C_SIDE]
        known = 0
        disclosed = 0
        row = before + i * n
        for j in range(n):  # branch-free: the comparisons are coin flips
            sj = cb[j, W_SLOT]
            opp = cb[j, C_SIDE] != side
            later = si < sj
            y[row + j] += later * w
            known += later & opp  # P3: i learns j's first action
            disclosed |= (sj < si) & opp  # P3: j learns i's first action
        y[base + K_FIRST] += (si == 0) * w
        y[base + K_ABBA] += cb[i, W_ABBA] * w
        y[base + K_KNOWN] += known * w
        ksq[i] += known * known * w
        y[base + K_DISCLOSED] += disclosed * w


@njit(**_JIT, inline="always")
def _add_constant(y, n, times):
    """Counts equal in every round: P4, one action each (``actions``, ``actions_dist.1``)."""
    dist = n * N_COUNTS + n * n
    for i in range(n):
        y[i * N_COUNTS + K_ACTIONS] += times
        y[dist + i * DIST_SIZE + 1] += times


@njit(**_JIT)
def _run_chunk(
    key, first, n_rounds, mode, tie, within, cb, sd, sg, acc, ksq, hist, s1, s2, sl, tot, st
):
    """Play rounds ``first .. first + n_rounds - 1`` of the chunk with key ``key`` as
    one-round cycles; add their sums (see the module docstring).

    With a histogram (``hist.size > 1``, at most ``HIST_MAX_N`` combatants) each round
    only counts its outcome -- every slot and ``W_ABBA``, all that ``_count`` reads --
    and the counts are derived once per distinct outcome at the end.
    """
    key = unmanaged(key)
    st = unmanaged(st)  # the caller's: a stream allocated here is reference-counted per round
    cb = unmanaged(cb)
    sd = unmanaged(sd)
    sg = unmanaged(sg)
    acc = unmanaged(acc)
    ksq = unmanaged(ksq)
    hist = unmanaged(hist)
    n = cb.shape[0]
    ns = sd.shape[0]
    tg = 2 * n + ns
    if hist.size > 1:
        for r in range(first, first + n_rounds):
            round_start_lazy(st, key, r)
            _play(st, mode, tie, within, cb, sd, sg, n, ns, tg)
            code = 0
            for i in range(n):
                code |= (cb[i, W_SLOT] << (HIST_SLOT_BITS * i)) | (
                    cb[i, W_ABBA] << (HIST_SLOT_BITS * n + i)
                )
            hist[code] += 1
        for code in range(hist.size):
            w = hist[code]
            if w > 0:
                for i in range(n):
                    cb[i, W_SLOT] = (code >> (HIST_SLOT_BITS * i)) & HIST_SLOT_MASK
                    cb[i, W_ABBA] = (code >> (HIST_SLOT_BITS * n + i)) & 1
                _count(cb, acc, ksq, n, w)
    else:
        for r in range(first, first + n_rounds):
            round_start_lazy(st, key, r)
            _play(st, mode, tie, within, cb, sd, sg, n, ns, tg)
            _count(cb, acc, ksq, n, 1)
    _add_constant(acc, n, n_rounds)
    for m in range(acc.size):
        v = acc[m]
        s1[m] += v
        s2[m] += v  # every count but known_intents is 0 or 1 in a round: y^2 = y
        sl[m] += v  # cycle length 1
    for i in range(n):
        m = i * N_COUNTS + K_KNOWN
        s2[m] += ksq[i] - acc[m]
    tot[0] += n_rounds
    tot[1] += n_rounds
    tot[2] += n_rounds


@njit(**_JIT)
def _trace_rounds(key, first, n_rounds, mode, tie, within, cb, sd, sg, size):
    """Each round's counts as a row (tests): int64 [n_rounds, size]; row ``r`` is round
    ``first + r`` of the chunk with key ``key``."""
    out = np.zeros((n_rounds, size), np.int64)
    st = np.zeros(STATE_WORDS, np.uint64)
    n = cb.shape[0]
    ns = sd.shape[0]
    ksq = np.zeros(n, np.int64)
    for r in range(n_rounds):
        round_start_lazy(st, key, first + r)
        _play(st, mode, tie, within, cb, sd, sg, n, ns, 2 * n + ns)
        _count(cb, out[r], ksq, n, 1)
        _add_constant(out[r], n, 1)
    return out


def run_chunk(
    compiled: Compiled,
    key: np.ndarray,
    n_rounds: int,
    sums: Sums,
    first: int = 0,
    no_hold: bool = False,
) -> bool:
    """Play rounds ``first ..`` of the chunk with key ``key`` and add them to ``sums``.

    ``key``: the chunk's key (``chunk_state``; only its first four words are used).
    ``no_hold`` is returned unchanged: perception has no R8 and carries no state from
    round to round (the argument keeps the kernels' common interface).
    """
    _run_chunk(
        key[:4].copy(),
        first,
        n_rounds,
        compiled.mode,
        compiled.tie,
        compiled.within,
        compiled.table.copy(),
        compiled.sides.copy(),
        compiled.sg.copy(),
        np.zeros(compiled.layout.size, np.int64),
        np.zeros(compiled.layout.n, np.int64),
        np.zeros(hist_bins(compiled.layout.n), np.int64),
        sums.s1,
        sums.s2,
        sums.sl,
        sums.tot,
        np.zeros(STATE_WORDS, np.uint64),
    )
    return no_hold


def hist_bins(n: int) -> int:
    """Histogram size of ``_run_chunk`` for ``n`` combatants (1: no histogram)."""
    return 1 << ((HIST_SLOT_BITS + 1) * n) if n <= HIST_MAX_N else 1


def trace(
    compiled: Compiled,
    key: np.ndarray,
    n_rounds: int,
    no_hold_first: bool = False,
    first: int = 0,
) -> np.ndarray:
    """Per-round counts (one row per round) in the layout of ``compiled.layout``.

    Row ``r`` is round ``first + r`` of the chunk with key ``key``.  ``no_hold_first``
    is accepted for the kernels' common interface and has no effect (no R8 here).
    """
    return _trace_rounds(
        key[:4].copy(),
        first,
        n_rounds,
        compiled.mode,
        compiled.tie,
        compiled.within,
        compiled.table.copy(),
        compiled.sides.copy(),
        compiled.sg.copy(),
        compiled.layout.size,
    )
