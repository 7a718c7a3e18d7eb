"""System ``readiness``: dice-pool initiative (RULES.md R1-R10).

``compile_scenario`` flattens a validated scenario into integer and float arrays;
``_run_chunk`` plays a chunk of rounds and adds their counts to running sums;
``_trace_rounds`` plays rounds and returns each round's counts (for the tests that
compare the kernel with the plain-Python twin in ``tests/naive_readiness.py``).

Implementation notes
--------------------
* Every spend takes a combatant's highest unspent die (R4, R5, R7), so after sorting
  a combatant's dice from high to low its unspent dice are always a suffix; one
  pointer per combatant is the whole state of its pool.
* T2 of R3 compares all of the round's dice minus one die of the tied value ``v``.
  Removing one ``v`` from two sorted lists that both hold it keeps their
  lexicographic order, so T2 is the lexicographic order of the full sorted pools
  ("a die beats no die"): a rank fixed for the whole round.
* The R3 key ``(v, count of unspent v, T2 rank)`` is packed into one integer and
  updated only when that combatant spends a die.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from simkit.metrics import Layout, Sums, flush_cycle
from simkit.random_stream import below, chance, chance_threshold, roll
from simkit.scenario import Scenario
from simkit.schema import HASTY_UP_TO

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

HOLD_CODES = {"never": 0, "until_attacked": 1, "until_enemy_acts": 2}
DEFEND_CODES = {"always": 0, "never": 1, "unless_hasty": 2}
DEFEND_HASTY_UP_TO = 3

# Per-combatant columns of the kernel's one int64 table ``cb`` (parameters, then the
# round's working state, then the dice).  Few arrays keep the kernel free of
# reference-counting traffic between its helper functions.
C_DICE, C_ADV, C_SIDE, C_HOLD, C_DEFEND, C_DEFEND_N, C_GUARD, C_TSTART, C_TCOUNT = range(9)
C_SHARE = 9  # attack_share as a ``chance`` threshold
W_PTR, W_KEY, W_RANK, W_HSTATE, W_ATTACKED, W_FIRST, W_ACTS, W_DEFS = range(10, 18)
W_HASTY, W_SCALE, W_ABBA, W_PEND = range(18, 22)
C_DIE0 = 22  # dice, sorted high to low, in columns C_DIE0 .. C_DIE0 + readiness - 1
MAX_DICE = 20
N_COLS = C_DIE0 + MAX_DICE
# The int64 vector ``sg``: round scalars, per-side counts, then the target lists.
G_STEP, G_TOTAL, G_LEFT, G_HOLDING, G_PENDING, G_NSIDES = range(6)
G_SIDE_LEFT = 8
MAX_SIDES = 256
G_SIDE_ACTS = G_SIDE_LEFT + MAX_SIDES
G_TARGETS = G_SIDE_ACTS + MAX_SIDES

# hold states during a round
H_FRESH, H_HOLDING, H_NORMAL, H_PENDING = 0, 1, 2, 3
NONE = 1 << 40  # "no action yet" step index
SHARE_ONE = 1 << 53  # chance threshold of attack_share = 1

_POW7 = np.array([7**k for k in range(19, -1, -1)], dtype=np.int64)


@dataclass(frozen=True)
class Compiled:
    """A readiness scenario as flat arrays for the kernel."""

    layout: Layout
    table: np.ndarray  # int64 [n, N_COLS]: parameters (working columns zero)
    sg: np.ndarray  # int64: round scalars (zero) and target lists
    order: int  # 0 dynamic, 1 chain
    prep: int  # 0 sixes, 1 lowest

    @property
    def dice_per_round(self) -> int:
        return int(self.table[:, C_DICE].sum())


def layout_for(scenario: Scenario) -> Layout:
    return Layout(
        names=scenario.names,
        counts=COUNTS,
        dist_sizes=tuple(c["readiness"] + 1 for c in scenario.combatants),
        scenario_counts=SCENARIO_COUNTS,
        ratios=RATIOS,
        hidden=frozenset({"hasty_scale_total"}),
    )


def compile_scenario(scenario: Scenario) -> Compiled:
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
        table[i, C_SHARE] = chance_threshold(c["attack_share"])
    sg = np.zeros(G_TARGETS + len(targets), dtype=np.int64)
    sg[G_NSIDES] = len(sides)
    sg[G_TARGETS:] = targets
    return Compiled(
        layout=layout_for(scenario),
        table=table,
        sg=sg,
        order=0 if scenario.rules["order"] == "dynamic" else 1,
        prep=0 if scenario.rules["prep"] == "sixes" else 1,
    )


# --------------------------------------------------------------------------- kernel
_JIT = {"cache": True, "nogil": True}


@njit(**_JIT, inline="always")
def _key(cb, i):
    """R3 key of i: (highest unspent die v, T1 count of unspent v, T2 rank), or -1."""
    p = cb[i, W_PTR]
    nd = cb[i, C_DICE]
    if p >= nd:
        return -1
    v = cb[i, C_DIE0 + p]
    c = 1
    while p + c < nd and cb[i, C_DIE0 + p + c] == v:
        c += 1
    return (v << 20) | (c << 12) | cb[i, W_RANK]


@njit(**_JIT, inline="always")
def _spend(cb, sg, i):
    """Spend i's highest unspent die (R4, R7) and return its value."""
    p = cb[i, W_PTR]
    v = cb[i, C_DIE0 + p]
    cb[i, W_PTR] = p + 1
    sg[G_SIDE_LEFT + cb[i, C_SIDE]] -= 1
    sg[G_LEFT] -= 1
    cb[i, W_KEY] = _key(cb, i)
    return v


@njit(**_JIT, inline="always")
def _eligible(cb, i, pending_gen):
    h = cb[i, W_HSTATE]
    if pending_gen < 0:
        return h == H_FRESH or h == H_NORMAL  # noqa: PLR1714 (numba: plain compares)
    return h == H_PENDING and cb[i, W_PEND] == pending_gen


@njit(**_JIT)
def _pick(st, cb, pending_gen):
    """R3: the eligible combatant with the highest key; T3 a fair random choice.

    Eligible: not holding (``pending_gen < 0``), or released holders of one event.
    """
    n = cb.shape[0]
    best = -1
    ties = 0
    first = -1
    for i in range(n):
        if _eligible(cb, i, pending_gen):
            k = cb[i, W_KEY]
            if k > best:
                best = k
                ties = 1
                first = i
            elif k == best and k >= 0:
                ties += 1
    if ties <= 1:
        return first
    r = below(st, ties)  # T3
    for i in range(first, n):
        if _eligible(cb, i, pending_gen) and cb[i, W_KEY] == best:
            if r == 0:
                return i
            r -= 1
    return -1


@njit(**_JIT)
def _defend(cb, sg, t, a, by_holder):
    """R7: at most one defense answers an attack of initiative ``a`` on ``t``."""
    policy = cb[t, C_DEFEND]
    has = cb[t, W_PTR] < cb[t, C_DICE]
    # R7.1 the target itself, if its highest die d >= a (or the attacker held)
    if has and policy != 1 and (by_holder or cb[t, C_DIE0 + cb[t, W_PTR]] >= a):
        _spend(cb, sg, t)
        cb[t, W_DEFS] += 1
        return
    # R7.2 the first guarding ally in scenario order with highest die g >= a
    s = cb[t, C_SIDE]
    for j in range(cb.shape[0]):
        if j != t and cb[j, C_GUARD] == 1 and cb[j, C_SIDE] == s:
            pj = cb[j, W_PTR]
            if pj < cb[j, C_DICE] and (by_holder or cb[j, C_DIE0 + pj] >= a):
                _spend(cb, sg, j)
                cb[j, W_DEFS] += 1
                return
    # R7.3 the target itself, hasty, at difficulty scale a - d, if its policy allows
    if has and not by_holder:
        scale = a - cb[t, C_DIE0 + cb[t, W_PTR]]
        if policy == 0 or (policy == DEFEND_HASTY_UP_TO and scale <= cb[t, C_DEFEND_N]):
            _spend(cb, sg, t)
            cb[t, W_DEFS] += 1
            cb[t, W_HASTY] += 1
            cb[t, W_SCALE] += scale


@njit(**_JIT)
def _act(st, cb, sg, c, by_holder):
    """R4: c spends its highest die and takes one action, an attack with p = attack_share."""
    a = _spend(cb, sg, c)
    cb[c, W_ACTS] += 1
    if cb[c, W_FIRST] == NONE:
        cb[c, W_FIRST] = sg[G_STEP]
    sg[G_STEP] += 1
    sg[G_TOTAL] += 1
    s = cb[c, C_SIDE]
    sg[G_SIDE_ACTS + s] += 1
    threshold = cb[c, C_SHARE]
    attack = threshold >= SHARE_ONE or (threshold > 0 and chance(st, threshold))
    if attack:
        t = sg[G_TARGETS + cb[c, C_TSTART] + below(st, cb[c, C_TCOUNT])]
        if cb[t, W_FIRST] == NONE:
            cb[t, W_ABBA] = 1
        cb[t, W_ATTACKED] = 1
        _defend(cb, sg, t, a, by_holder)
        # R5 until_attacked: attacked while holding -> acts normally from now on
        if cb[t, W_HSTATE] == H_HOLDING and cb[t, C_HOLD] == 1:
            cb[t, W_HSTATE] = H_NORMAL
            sg[G_HOLDING] -= 1
    # R5 until_enemy_acts: the first opponent action releases every such holder
    if sg[G_HOLDING] > 0:
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
        if cb[h, W_HSTATE] == H_HOLDING and sg[G_LEFT] - sg[G_SIDE_LEFT + cb[h, C_SIDE]] == 0:
            cb[h, W_HSTATE] = H_NORMAL
            sg[G_HOLDING] -= 1


@njit(**_JIT)
def _play_pending(st, cb, sg):
    """Released until_enemy_acts holders declare: earliest release first, then R3."""
    while sg[G_PENDING] > 0:
        gen = NONE
        for i in range(cb.shape[0]):
            if cb[i, W_HSTATE] == H_PENDING and cb[i, W_PEND] < gen:
                gen = cb[i, W_PEND]
        c = _pick(st, cb, gen)
        if c < 0:  # released holders without dice: nothing to declare
            for i in range(cb.shape[0]):
                if cb[i, W_HSTATE] == H_PENDING and cb[i, W_PEND] == gen:
                    cb[i, W_HSTATE] = H_NORMAL
                    sg[G_PENDING] -= 1
            continue
        cb[c, W_HSTATE] = H_NORMAL
        sg[G_PENDING] -= 1
        _act(st, cb, sg, c, True)


@njit(**_JIT)
def _setup(st, no_hold, prep, cb, sg):
    """R1 roll and R2 preparation; reset the round state.  Returns True if anyone may hold."""
    n = cb.shape[0]
    for i in range(n):  # R1, in scenario order
        for k in range(cb[i, C_DICE]):
            cb[i, C_DIE0 + k] = roll(st, 6)
    for k in range(G_SIDE_LEFT):
        sg[k] = 0
    for k in range(G_SIDE_LEFT, G_SIDE_ACTS + MAX_SIDES):
        sg[k] = 0
    may_hold = False
    for i in range(n):
        r = cb[i, C_DICE]
        for a in range(C_DIE0 + 1, C_DIE0 + r):  # sort high to low
            v = cb[i, a]
            b = a - 1
            while b >= C_DIE0 and cb[i, b] < v:
                cb[i, b + 1] = cb[i, b]
                b -= 1
            cb[i, b + 1] = v
        pips = cb[i, C_ADV]
        if pips > 0:
            if prep == 0:  # R2 "sixes": each pip to the highest die still below 6
                for k in range(C_DIE0, C_DIE0 + r):
                    room = 6 - cb[i, k]
                    add = room if room < pips else pips
                    cb[i, k] += add
                    pips -= add
            else:  # R2 "lowest": each pip to the lowest die
                last = C_DIE0 + r - 1
                while pips > 0 and cb[i, last] < 6:
                    cb[i, last] += 1
                    pips -= 1
                    b = last
                    while b > C_DIE0 and cb[i, b - 1] < cb[i, b]:
                        tmp = cb[i, b - 1]
                        cb[i, b - 1] = cb[i, b]
                        cb[i, b] = tmp
                        b -= 1
        sg[G_SIDE_LEFT + cb[i, C_SIDE]] += r
        sg[G_LEFT] += r
        t2 = 0
        for k in range(r):
            t2 += cb[i, C_DIE0 + k] * _POW7[k]
        cb[i, W_KEY] = t2  # the T2 key, for the ranks below
        holds = cb[i, C_HOLD] != 0 and not no_hold
        may_hold = may_hold or holds
        cb[i, W_HSTATE] = H_FRESH if holds else H_NORMAL
        cb[i, W_PTR] = 0
        cb[i, W_ATTACKED] = 0
        cb[i, W_FIRST] = NONE
        cb[i, W_ACTS] = 0
        cb[i, W_DEFS] = 0
        cb[i, W_HASTY] = 0
        cb[i, W_SCALE] = 0
        cb[i, W_ABBA] = 0
        cb[i, W_PEND] = NONE
    # T2: the lexicographic order of the full sorted pools, as a rank
    for i in range(n):
        rank = 0
        for j in range(n):
            if cb[j, W_KEY] < cb[i, W_KEY]:
                rank += 1
        cb[i, W_RANK] = rank
    for i in range(n):
        cb[i, W_KEY] = _key(cb, i)
    return may_hold


@njit(**_JIT)
def _round(st, no_hold, order, prep, cb, sg, y, dist_off):
    """Play one round; add its counts to ``y``; return True for a stalemate (R8)."""
    n = cb.shape[0]
    may_hold = _setup(st, no_hold, prep, cb, sg)
    while True:
        if may_hold and sg[G_HOLDING] > 0:
            _release_exhausted(cb, sg)
        c = _pick(st, cb, -1)
        if c < 0:
            break  # R9
        if cb[c, W_HSTATE] == H_FRESH:
            # R5: first turn of a combatant with a hold policy
            cb[c, W_HSTATE] = H_NORMAL
            side = cb[c, C_SIDE]
            if sg[G_LEFT] - sg[G_SIDE_LEFT + side] > 0:  # else nothing could release it
                hold = cb[c, C_HOLD]
                if (hold == 1 and cb[c, W_ATTACKED] == 0) or (
                    hold == 2 and sg[G_TOTAL] - sg[G_SIDE_ACTS + side] == 0
                ):
                    cb[c, W_HSTATE] = H_HOLDING
                    sg[G_HOLDING] += 1
                    continue
        v = cb[c, C_DIE0 + cb[c, W_PTR]]
        _act(st, cb, sg, c, False)
        if order == 1:  # R3 chain: every die of value v, one action each
            while cb[c, W_PTR] < cb[c, C_DICE] and cb[c, C_DIE0 + cb[c, W_PTR]] == v:
                _act(st, cb, sg, c, False)
        if sg[G_PENDING] > 0:
            _play_pending(st, cb, sg)

    stalemate = sg[G_TOTAL] == 0
    npc = N_COUNTS
    for i in range(n):
        base = i * npc
        acts = cb[i, W_ACTS]
        fi = cb[i, W_FIRST]
        y[base + 0] += 1 if fi == 0 else 0
        y[base + 1] += acts
        y[base + 2] += 1 if acts == 0 else 0
        y[base + 3] += cb[i, W_ABBA]
        y[base + 4] += cb[i, W_DEFS]
        y[base + 5] += cb[i, W_HASTY]
        y[base + 6] += cb[i, W_SCALE]
        y[base + 7] += cb[i, C_DICE] - cb[i, W_PTR]
        if fi != NONE:
            row = n * npc + i * n
            for j in range(n):
                if fi < cb[j, W_FIRST]:
                    y[row + j] += 1
        y[dist_off[i] + acts] += 1
    if stalemate:
        y[dist_off[n]] += 1
    return stalemate


@njit(**_JIT)
def _run_chunk(st, n_rounds, order, prep, cb, sg, dist_off, y, s1, s2, sl, sx, pa, pb, tot):
    """Play ``n_rounds`` rounds from stream ``st``; add cycle sums (see metrics.py)."""
    no_hold = False
    length = 0
    for _ in range(n_rounds):
        stalemate = _round(st, no_hold, order, prep, cb, sg, y, dist_off)
        length += 1
        if stalemate:
            no_hold = True  # R8: nobody may hold in the next round
        else:
            flush_cycle(y, length, s1, s2, sl, sx, pa, pb, tot)
            length = 0
            no_hold = False
    if length > 0:
        flush_cycle(y, length, s1, s2, sl, sx, pa, pb, tot)


@njit(**_JIT)
def _trace_rounds(st, n_rounds, order, prep, cb, sg, dist_off, size, no_hold_first):
    """Each round's counts as a row (tests): [n_rounds, size]; R8 carried across rows."""
    out = np.zeros((n_rounds, size), np.int64)
    no_hold = no_hold_first
    for r in range(n_rounds):
        no_hold = _round(st, no_hold, order, prep, cb, sg, out[r], dist_off)
    return out


def _offsets(compiled: Compiled) -> np.ndarray:
    """Distribution offsets of every combatant, then the scenario-count offset."""
    lay = compiled.layout
    return np.append(lay.dist_offsets, lay.scenario_offset).astype(np.int64)


def run_chunk(compiled: Compiled, st: np.ndarray, n_rounds: int, sums: Sums) -> None:
    """Play one chunk with stream state ``st`` and add its sums to ``sums``."""
    pa, pb = compiled.layout.pair_indices()
    _run_chunk(
        st,
        n_rounds,
        compiled.order,
        compiled.prep,
        compiled.table.copy(),
        compiled.sg.copy(),
        _offsets(compiled),
        np.zeros(compiled.layout.size, np.int64),
        sums.s1,
        sums.s2,
        sums.sl,
        sums.sx,
        pa,
        pb,
        sums.tot,
    )


def trace(
    compiled: Compiled, st: np.ndarray, n_rounds: int, no_hold_first: bool = False
) -> np.ndarray:
    """Per-round counts (one row per round) in the layout of ``compiled.layout``."""
    return _trace_rounds(
        st,
        n_rounds,
        compiled.order,
        compiled.prep,
        compiled.table.copy(),
        compiled.sg.copy(),
        _offsets(compiled),
        compiled.layout.size,
        no_hold_first,
    )
