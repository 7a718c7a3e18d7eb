"""System ``vtm``: d10 + Dexterity + Wits initiative (RULES.md V1-V7).

``compile_scenario`` flattens a validated scenario into one int64 table;
``run_chunk`` plays a chunk of rounds and adds their counts to running sums;
``trace`` plays rounds and returns each round's counts (for the tests that compare
the kernel with the plain-Python twin in ``tests/naive_vtm.py``).

Model of a round (where RULES.md is open, the choice is recorded in
``docs/rules-decisions.md``, section ``vtm``)
------------------------------------------------------------------------------
* V1/V2 give the *time slots*: combatants sorted by (initiative, rating), both
  descending.  Equal pairs share a slot under ``tie = "simultaneous"``; under
  ``tie = "random"`` they get a fair random order (``below`` over the still-tied, in
  scenario order; fastest tied group first; right after the dice).
* Play is a sequence of *moments*.  A *turn group* is a set of combatants of one slot
  acting together (the slot's members, or delayers released together).  In each of
  its moments every member with an action left takes one, so a combatant's actions
  come in a row and simultaneous members act side by side.
* V3: a combatant knows the declarations of the opponents in strictly slower slots.
* V4: an ``until_enemy_acts`` delayer skips its slot if no opponent has acted yet and
  is released by the first moment in which an opponent acts; released delayers act
  right after that moment (interrupting the current group, even in the middle of a
  series of actions), slot by slot in order of initiative.  Delayers never released
  act after the last normal action, fastest slot first.
* V5: defenses exist only as aborts: an attacked combatant that has not acted yet,
  has ``abort = "always"`` and still has a declared action gives up one declared
  action for a defense.  Extra actions (V6) are never given up.
* V6: after every normal action (and every delayer) each combatant with
  ``extra_actions`` takes them all, slot by slot in order of initiative.

Implementation notes
--------------------
* Round ``r`` of a chunk draws from its own stream (``random_stream.round_start``),
  in the order of ``docs/rules-decisions.md``: the d10s in scenario order, the
  random tie orders, then per action ``chance`` (if 0 < attack_share < 1) and
  ``below`` over the target list.
* One int64 table ``tb`` holds every combatant's parameters and round state, one
  column per combatant; one int64 vector ``sg`` holds the order of play, a stack of
  turn groups (the kernel's way of letting a released delayer interrupt) and the
  target lists.  The chunk kernels take ``unmanaged`` views of every array.
* V2 sorts unique keys (initiative, rating, 255 - index): a sorting network in
  registers up to 4 combatants, ranks by counting up to 16, insertion beyond.
* Nobody delays (the default): slots are played in order, without the stack.
* Every round is one cycle (nothing carries over), so the running sums are plain
  sums of the counts and of their squares; counts that are 0 or 1 are their own
  squares.
* Up to ``HIST_MAX`` combatants, ``acts_before`` is counted per round as one code
  (the order of first actions) in a histogram that is expanded once per chunk.  When
  nobody delays or aborts ("ranked" scenarios) the code is the slot structure, and
  ``first_action``, ``known_declarations`` and ``simultaneous`` follow from it too;
  actions, aborts and ``actions_dist`` are then the same in every round.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from simkit.metrics import Layout, Sums
from simkit.systems.stream import (
    STATE_WORDS,
    below,
    chance,
    chance_threshold,
    roll,
    round_start_lazy,
)
from simkit.systems.support import unmanaged

COUNTS = (
    "first_action",
    "actions",
    "no_action",
    "attacked_before_acting",
    "defenses",
    "aborts",
    "known_declarations",
)
SCENARIO_COUNTS = ("simultaneous",)
MULTI_COUNTS = ("actions", "defenses", "aborts", "known_declarations")  # may exceed 1
N_COUNTS = len(COUNTS)
I_FIRST, I_ACTIONS, I_NO_ACTION, I_ABBA, I_DEFENSES, I_ABORTS, I_KNOWN = range(N_COUNTS)

TIE_CODES = {"simultaneous": 0, "random": 1}
DELAY_CODES = {"never": 0, "until_enemy_acts": 1}
ABORT_CODES = {"never": 0, "always": 1}

# Rows of the kernel's one int64 table ``tb`` (one column per combatant, so that the
# loops over combatants read contiguous memory): parameters, then the round's state.
C_RATING, C_KEY, C_SIDE, C_ACTIONS, C_EXTRA, C_DELAY, C_ABORT, C_SHARE = range(8)
C_TSTART, C_TCOUNT = 8, 9
W_KEY, W_LO, W_HI, W_REM, W_DELAYING, W_GROUP, W_FIRST, W_ACTS = range(10, 18)
W_ABBA, W_ABORTS, W_KNOWN = 18, 19, 20
N_ROWS = 21
# The int64 vector ``sg``: round scalars, then the order of play (combatant at each
# position), per-side scratch counts, the turn-group stack (lo, hi, group id per
# entry) and the target lists.
G_MOMENT, G_SP, G_GROUP, G_DELAYING, G_TOTAL, G_SIMULT = range(6)
G_ORDER = 8
MAX_COMBATANTS = 200
G_SIDES = G_ORDER + MAX_COMBATANTS
G_STACK = G_SIDES + MAX_COMBATANTS
G_TARGETS = G_STACK + 3 * (MAX_COMBATANTS + 2)

NONE = 1 << 40  # "no action yet" moment
SHARE_ONE = 1 << 53  # chance threshold of attack_share = 1
# The sort key of V2: initiative (made positive), rating, then 255 - index, so that
# keys are unique and equal (initiative, rating) keep scenario order.  C_KEY holds
# the key without the die, which is added as ``die << KEY_SHIFT``.
INIT_OFFSET = 64  # initiative >= 1 - 20
KEY_SHIFT = 14  # 6 bits of rating (0..40), 8 bits of index
SMALL = 16  # up to this many combatants V2 ranks by counting (no branches)
HIST_MAX = 5  # up to this many combatants acts_before is counted by order codes


@dataclass(frozen=True)
class Compiled:
    """A vtm scenario as flat arrays for the kernel."""

    layout: Layout
    table: np.ndarray  # int64 [N_ROWS, n]: parameters (working rows zero)
    sg: np.ndarray  # int64: round scalars (zero) and the target lists
    n_sides: int
    tie: int  # 0 simultaneous, 1 random
    has_delay: bool  # any delay policy: play through the turn-group stack
    has_extra: bool  # any extra_actions (V6)
    has_abort: bool  # any abort policy: actions and aborts vary from round to round

    @property
    def coded(self) -> bool:
        """acts_before counted by order codes (few combatants)."""
        return self.layout.n <= HIST_MAX

    @property
    def ranked(self) -> bool:
        """Nobody delays or aborts: the slots alone give the order of first actions."""
        return self.coded and not self.has_delay and not self.has_abort


def compile_scenario(scenario, layout: Layout) -> Compiled:
    """Flatten a validated vtm scenario."""
    n = len(scenario.combatants)
    if n > MAX_COMBATANTS:
        raise ValueError(f"at most {MAX_COMBATANTS} combatants, got {n}")
    sides = scenario.sides
    table = np.zeros((N_ROWS, n), dtype=np.int64)
    targets: list[int] = []
    for i, c in enumerate(scenario.combatants):
        table[C_RATING, i] = c["rating"]
        table[C_SIDE, i] = sides.index(c.side)
        table[C_ACTIONS, i] = c["actions"]
        table[C_EXTRA, i] = c["extra_actions"]
        table[C_DELAY, i] = DELAY_CODES[c["delay"]]
        table[C_ABORT, i] = ABORT_CODES[c["abort"]]
        table[C_SHARE, i] = chance_threshold(c["attack_share"])
        tl = scenario.targets(i)
        table[C_TSTART, i] = len(targets)
        table[C_TCOUNT, i] = len(tl)
        base = c["rating"] - c["wound_penalty"] + INIT_OFFSET  # V1, V7
        table[C_KEY, i] = (base << KEY_SHIFT) | (c["rating"] << 8) | (255 - i)
        targets.extend(tl)
    sg = np.zeros(G_TARGETS + len(targets), dtype=np.int64)
    sg[G_TARGETS:] = targets
    return Compiled(
        layout=layout,
        table=table,
        sg=sg,
        n_sides=len(sides),
        tie=TIE_CODES[scenario.rules["tie"]],
        has_delay=bool(table[C_DELAY].any()),
        has_extra=bool(table[C_EXTRA].any()),
        has_abort=bool(table[C_ABORT].any()),
    )


# --------------------------------------------------------------------------- kernel
_JIT = {"cache": True, "nogil": True}


@njit(**_JIT, inline="always")
def _setup(st, tie, counted, tb, sg):
    """V1 roll, V2 order and time slots; reset the round state."""
    n = tb.shape[1]
    for i in range(n):  # V1, in scenario order; V7: the wound penalty is in C_KEY
        tb[W_KEY, i] = (roll(st, 10) << KEY_SHIFT) + tb[C_KEY, i]
    for i in range(n):
        tb[W_REM, i] = tb[C_ACTIONS, i]
        tb[W_FIRST, i] = NONE
        tb[W_ABBA, i] = 0
    if counted:
        for i in range(n):
            tb[W_ACTS, i] = 0
            tb[W_ABORTS, i] = 0
    sg[G_SIMULT] = 0
    # V2: descending (initiative, rating); first every combatant in a slot of its own
    tied = False
    if n <= 4:  # a sorting network on the keys, in registers (missing keys: -1)
        x0 = tb[W_KEY, 0]
        x1 = tb[W_KEY, 1]
        x2 = tb[W_KEY, 2] if n > 2 else -1
        x3 = tb[W_KEY, 3] if n > 3 else -1
        x0, x1 = max(x0, x1), min(x0, x1)
        x2, x3 = max(x2, x3), min(x2, x3)
        x0, x2 = max(x0, x2), min(x0, x2)
        x1, x3 = max(x1, x3), min(x1, x3)
        x1, x2 = max(x1, x2), min(x1, x2)
        tied = (x0 ^ x1) < 256 or (n > 2 and (x1 ^ x2) < 256) or (n > 3 and (x2 ^ x3) < 256)
        _place(tb, sg, 0, 255 - (x0 & 255))
        _place(tb, sg, 1, 255 - (x1 & 255))
        if n > 2:
            _place(tb, sg, 2, 255 - (x2 & 255))
        if n > 3:
            _place(tb, sg, 3, 255 - (x3 & 255))
    elif n <= SMALL:  # ranks by counting
        for i in range(n):
            k = tb[W_KEY, i]
            r = 0
            same = 0
            for j in range(n):
                kj = tb[W_KEY, j]
                r += kj > k
                same += (kj ^ k) < 256  # equal (initiative, rating), i itself included
            sg[G_ORDER + r] = i
            tb[W_LO, i] = r
            tb[W_HI, i] = r + 1
            tied |= same > 1
    else:
        for p in range(n):
            k = tb[W_KEY, p]
            q = p - 1
            while q >= 0 and tb[W_KEY, sg[G_ORDER + q]] < k:
                sg[G_ORDER + q + 1] = sg[G_ORDER + q]
                q -= 1
            sg[G_ORDER + q + 1] = p
        level = -1
        for p in range(n):
            c = sg[G_ORDER + p]
            tb[W_LO, c] = p
            tb[W_HI, c] = p + 1
            tied |= tb[W_KEY, c] >> 8 == level
            level = tb[W_KEY, c] >> 8
    if tied:
        _ties(st, tie, tb, sg)


@njit(**_JIT, inline="always")
def _place(tb, sg, p, c):
    """Combatant c in position p, in a slot of its own."""
    sg[G_ORDER + p] = c
    tb[W_LO, c] = p
    tb[W_HI, c] = p + 1


@njit(**_JIT)
def _ties(st, tie, tb, sg):
    """V2 ties (equal initiative and rating): one slot, or a fair random order."""
    n = tb.shape[1]
    lo = 0
    while lo < n:
        k = tb[W_KEY, sg[G_ORDER + lo]] >> 8
        hi = lo + 1
        while hi < n and tb[W_KEY, sg[G_ORDER + hi]] >> 8 == k:
            hi += 1
        if hi - lo > 1:
            if tie == 0:  # simultaneous: they share a slot
                sg[G_SIMULT] = 1
                for p in range(lo, hi):
                    tb[W_LO, sg[G_ORDER + p]] = lo
                    tb[W_HI, sg[G_ORDER + p]] = hi
            else:  # random: below over the still-tied, in scenario order
                for p in range(lo, hi - 1):
                    r = below(st, hi - p)
                    c = sg[G_ORDER + p + r]
                    for q in range(p + r, p, -1):  # the others keep scenario order
                        sg[G_ORDER + q] = sg[G_ORDER + q - 1]
                    sg[G_ORDER + p] = c
                for p in range(lo, hi):
                    tb[W_LO, sg[G_ORDER + p]] = p
                    tb[W_HI, sg[G_ORDER + p]] = p + 1
        lo = hi


@njit(**_JIT)
def _known(n_sides, tb, sg):
    """V3: each knows the declarations of the opponents in strictly slower slots."""
    n = tb.shape[1]
    for s in range(n_sides):
        sg[G_SIDES + s] = 0  # the slower combatants of each side
    slower = 0
    p = n
    while p > 0:  # slot by slot, slowest first
        lo = tb[W_LO, sg[G_ORDER + p - 1]]
        for q in range(lo, p):
            c = sg[G_ORDER + q]
            tb[W_KNOWN, c] = slower - sg[G_SIDES + tb[C_SIDE, c]]
        for q in range(lo, p):
            sg[G_SIDES + tb[C_SIDE, sg[G_ORDER + q]]] += 1
        slower += p - lo
        p = lo


@njit(**_JIT, inline="always")
def _act(st, tb, sg, c, counted):
    """One action of c: an attack with p = attack_share, on a target of its policy.

    ``counted``: count the action and let an attacked combatant abort (V5); without
    it, no combatant has an abort policy and actions are counted per chunk.
    """
    if counted:
        tb[W_ACTS, c] += 1
    threshold = tb[C_SHARE, c]
    if threshold >= SHARE_ONE or (threshold > 0 and chance(st, threshold)):
        t = sg[G_TARGETS + tb[C_TSTART, c] + below(st, tb[C_TCOUNT, c])]
        before = tb[W_FIRST, t] == NONE  # t is attacked before acting
        tb[W_ABBA, t] |= before  # no branch: ``before`` is unpredictable
        if counted and tb[C_ABORT, t] == 1 and before and tb[W_REM, t] > 0:
            # V5 abort "always": one declared action is given up for a defense
            tb[W_REM, t] -= 1
            tb[W_ABORTS, t] += 1
            if tb[W_DELAYING, t] == 1 and tb[W_REM, t] == 0:
                tb[W_DELAYING, t] = 0  # nothing left to delay
                sg[G_DELAYING] -= 1


@njit(**_JIT, inline="always")
def _moments(st, tb, sg, lo, hi, counted):
    """Members of slot [lo, hi) with actions left act side by side, one moment each.

    Only used when nobody delays, so every such member is in the turn group.
    """
    while True:
        moment = sg[G_MOMENT]
        present = False
        for p in range(lo, hi):
            c = sg[G_ORDER + p]
            if tb[W_REM, c] > 0:
                present = True
                if tb[W_FIRST, c] == NONE:
                    tb[W_FIRST, c] = moment
        if not present:
            return
        for p in range(lo, hi):
            c = sg[G_ORDER + p]
            if tb[W_REM, c] > 0:
                tb[W_REM, c] -= 1
                _act(st, tb, sg, c, counted)
        sg[G_MOMENT] = moment + 1


@njit(**_JIT, inline="always")
def _push(sg, lo, hi, group):
    sp = sg[G_SP]
    sg[G_STACK + 3 * sp] = lo
    sg[G_STACK + 3 * sp + 1] = hi
    sg[G_STACK + 3 * sp + 2] = group
    sg[G_SP] = sp + 1


@njit(**_JIT)
def _release(tb, sg, side, multi):
    """V4: delayers with an opponent acting in the last moment act right after it.

    Their turn groups go on the stack slowest first, so the fastest acts first.
    """
    n = tb.shape[1]
    last_lo = -1
    group = 0
    for p in range(n - 1, -1, -1):
        c = sg[G_ORDER + p]
        if tb[W_DELAYING, c] == 1 and (multi or tb[C_SIDE, c] != side):
            tb[W_DELAYING, c] = 0
            sg[G_DELAYING] -= 1
            lo = tb[W_LO, c]
            if lo != last_lo:
                last_lo = lo
                group = sg[G_GROUP]
                sg[G_GROUP] = group + 1
                _push(sg, lo, tb[W_HI, c], group)
            tb[W_GROUP, c] = group


@njit(**_JIT)
def _play(st, tb, sg):
    """Play the turn groups on the stack, one moment at a time, until it is empty."""
    while sg[G_SP] > 0:
        top = G_STACK + 3 * (sg[G_SP] - 1)
        lo = sg[top]
        hi = sg[top + 1]
        group = sg[top + 2]
        moment = sg[G_MOMENT]
        present = False
        for p in range(lo, hi):
            c = sg[G_ORDER + p]
            if tb[W_GROUP, c] == group and tb[W_REM, c] > 0:
                present = True
                if tb[W_FIRST, c] == NONE:
                    tb[W_FIRST, c] = moment
        if not present:
            sg[G_SP] -= 1
            continue
        side = -1
        multi = False
        for p in range(lo, hi):
            c = sg[G_ORDER + p]
            if tb[W_GROUP, c] == group and tb[W_REM, c] > 0:
                tb[W_REM, c] -= 1
                s = tb[C_SIDE, c]
                sg[G_SIDES + s] += 1
                sg[G_TOTAL] += 1
                if side < 0:
                    side = s
                elif s != side:
                    multi = True
                _act(st, tb, sg, c, True)
        sg[G_MOMENT] = moment + 1
        if sg[G_DELAYING] > 0:
            _release(tb, sg, side, multi)


@njit(**_JIT)
def _play_delays(st, has_extra, n_sides, tb, sg):
    """The whole round through turn groups, for scenarios with delayers (V4)."""
    n = tb.shape[1]
    for k in (G_MOMENT, G_SP, G_GROUP, G_DELAYING, G_TOTAL):
        sg[k] = 0
    for i in range(n):
        tb[W_DELAYING, i] = 0
        tb[W_GROUP, i] = -1
    for s in range(n_sides):
        sg[G_SIDES + s] = 0  # actions of each side so far
    # normal actions, slot by slot (V2)
    lo = 0
    while lo < n:
        hi = tb[W_HI, sg[G_ORDER + lo]]
        group = sg[G_GROUP]
        present = False
        for p in range(lo, hi):
            c = sg[G_ORDER + p]
            if tb[W_REM, c] > 0:
                # V4: until_enemy_acts delays while no opponent has acted
                if tb[C_DELAY, c] == 1 and sg[G_TOTAL] == sg[G_SIDES + tb[C_SIDE, c]]:
                    tb[W_DELAYING, c] = 1
                    sg[G_DELAYING] += 1
                else:
                    tb[W_GROUP, c] = group
                    present = True
        if present:
            sg[G_GROUP] = group + 1
            _push(sg, lo, hi, group)
            _play(st, tb, sg)
        lo = hi
    # V4: delayers never released act last, before V6, fastest slot first
    while sg[G_DELAYING] > 0:
        group = sg[G_GROUP]
        sg[G_GROUP] = group + 1
        lo = -1
        for p in range(n):
            c = sg[G_ORDER + p]
            if tb[W_DELAYING, c] == 1:
                if lo < 0:
                    lo = tb[W_LO, c]
                elif tb[W_LO, c] != lo:
                    break
                tb[W_DELAYING, c] = 0
                sg[G_DELAYING] -= 1
                tb[W_GROUP, c] = group
        _push(sg, lo, tb[W_HI, sg[G_ORDER + lo]], group)
        _play(st, tb, sg)
    # V6: extra actions at the end, slot by slot
    if has_extra:
        lo = 0
        while lo < n:
            hi = tb[W_HI, sg[G_ORDER + lo]]
            group = sg[G_GROUP]
            present = False
            for p in range(lo, hi):
                c = sg[G_ORDER + p]
                if tb[C_EXTRA, c] > 0:
                    tb[W_REM, c] = tb[C_EXTRA, c]
                    tb[W_GROUP, c] = group
                    present = True
            if present:
                sg[G_GROUP] = group + 1
                _push(sg, lo, hi, group)
                _play(st, tb, sg)
            lo = hi


@njit(**_JIT, inline="always")
def _round(st, tie, has_delay, has_extra, counted, n_sides, tb, sg):
    """Play one round (V1-V6); the outcome stays in ``tb`` and ``sg``."""
    _setup(st, tie, counted, tb, sg)
    if has_delay:
        _play_delays(st, has_extra, n_sides, tb, sg)
        return
    # nobody delays: slot by slot; a slot of one takes its actions in a row, one moment
    # each (the moment counter stays in a register)
    n = tb.shape[1]
    moment = 0
    p = 0
    while p < n:
        c = sg[G_ORDER + p]
        hi = tb[W_HI, c]
        if hi == p + 1:
            r = tb[W_REM, c]  # fewer than C_ACTIONS after aborts (V5)
            if r > 0:
                tb[W_FIRST, c] = moment  # nobody acts before its slot without delays
                for _ in range(r):
                    _act(st, tb, sg, c, counted)
                moment += r
        else:
            sg[G_MOMENT] = moment
            _moments(st, tb, sg, p, hi, counted)
            moment = sg[G_MOMENT]
        p = hi
    if has_extra:  # V6
        p = 0
        while p < n:
            c = sg[G_ORDER + p]
            hi = tb[W_HI, c]
            if hi == p + 1:
                r = tb[C_EXTRA, c]
                if r > 0:
                    if tb[W_FIRST, c] == NONE:
                        tb[W_FIRST, c] = moment
                    for _ in range(r):
                        _act(st, tb, sg, c, counted)
                    moment += r
            else:
                for q in range(p, hi):
                    tb[W_REM, sg[G_ORDER + q]] = tb[C_EXTRA, sg[G_ORDER + q]]
                sg[G_MOMENT] = moment
                _moments(st, tb, sg, p, hi, counted)
                moment = sg[G_MOMENT]
            p = hi


@njit(**_JIT, inline="always")
def _tally(tb, sg, n_sides, ranked, counted, hist, a1, a2, dist_off):
    """Add the round's counts to ``a1`` and the squares of those above 1 to ``a2``.

    With a histogram (``hist.size > 0``), ``acts_before`` is counted as one code
    ``sum(r_i * n**i)``, ``r_i`` the number of combatants whose first action came
    strictly earlier than i's (so ``r_i < r_j`` exactly when i acts before j).
    ``ranked``: nobody delays or aborts, so ``r_i`` is the start of i's slot and the
    code also gives first_action, known_declarations and simultaneous (``_expand``).
    ``counted``: add actions, aborts and their distribution (else ``_constant_counts``).
    """
    n = tb.shape[1]
    code = 0
    scale = 1
    if ranked:
        for i in range(n):
            code += tb[W_LO, i] * scale
            scale *= n
            a1[i * N_COUNTS + I_ABBA] += tb[W_ABBA, i]
        hist[code] += 1
        return
    _known(n_sides, tb, sg)
    for i in range(n):
        base = i * N_COUNTS
        fi = tb[W_FIRST, i]
        if hist.size == 0:
            row = n * N_COUNTS + i * n
            for j in range(n):
                a1[row + j] += fi < tb[W_FIRST, j]
        else:
            r = 0
            for j in range(n):
                r += tb[W_FIRST, j] < fi
            code += r * scale
            scale *= n
        a1[base + I_FIRST] += fi == 0
        a1[base + I_ABBA] += tb[W_ABBA, i]
        known = tb[W_KNOWN, i]
        a1[base + I_KNOWN] += known
        a2[base + I_KNOWN] += known * known
        if counted:
            acts = tb[W_ACTS, i]
            aborts = tb[W_ABORTS, i]
            a1[base + I_ACTIONS] += acts
            a2[base + I_ACTIONS] += acts * acts
            a1[base + I_NO_ACTION] += acts == 0
            a1[base + I_DEFENSES] += aborts  # V5: every defense is an abort
            a2[base + I_DEFENSES] += aborts * aborts
            a1[base + I_ABORTS] += aborts
            a2[base + I_ABORTS] += aborts * aborts
            a1[dist_off[i] + acts] += 1
    if hist.size > 0:
        hist[code] += 1
    a1[dist_off[n]] += sg[G_SIMULT]


@njit(**_JIT)
def _expand(hist, ranked, tb, a1, a2, dist_off):
    """Add the counts of every code in ``hist`` (see ``_tally``)."""
    n = tb.shape[1]
    r = np.zeros(n, np.int64)
    for code in range(hist.size):
        count = hist[code]
        if count == 0:
            continue
        x = code
        for i in range(n):
            r[i] = x % n
            x //= n
        shared = False
        for i in range(n):
            row = n * N_COUNTS + i * n
            known = 0
            for j in range(n):
                if r[i] < r[j]:
                    a1[row + j] += count
                    known += tb[C_SIDE, j] != tb[C_SIDE, i]  # V3
                elif j != i and r[i] == r[j]:
                    shared = True
            if ranked:
                base = i * N_COUNTS
                a1[base + I_FIRST] += count if r[i] == 0 else 0
                a1[base + I_KNOWN] += count * known
                a2[base + I_KNOWN] += count * known * known
        if ranked and shared:
            a1[dist_off[n]] += count


@njit(**_JIT)
def _constant_counts(tb, n_rounds, a1, a2, dist_off):
    """Without aborts every combatant takes all its actions and extra actions (V4, V6)."""
    n = tb.shape[1]
    for i in range(n):
        acts = tb[C_ACTIONS, i] + tb[C_EXTRA, i]
        a1[i * N_COUNTS + I_ACTIONS] += n_rounds * acts
        a2[i * N_COUNTS + I_ACTIONS] += n_rounds * acts * acts
        a1[dist_off[i] + acts] += n_rounds


@njit(**_JIT)
def _run_chunk_ranked(
    key, first, n_rounds, tie, has_extra, n_sides, tb, sg, dist_off, hist, a1, a2, st
):
    """``_run_chunk`` for ranked scenarios: no delayers, no aborts, a histogram."""
    key = unmanaged(key)
    st = unmanaged(st)  # the caller's: a stream allocated here is reference-counted per round
    tb = unmanaged(tb)
    sg = unmanaged(sg)
    dist_off = unmanaged(dist_off)
    hist = unmanaged(hist)
    a1 = unmanaged(a1)
    a2 = unmanaged(a2)
    for r in range(first, first + n_rounds):
        round_start_lazy(st, key, r)
        _round(st, tie, False, has_extra, False, n_sides, tb, sg)
        _tally(tb, sg, n_sides, True, False, hist, a1, a2, dist_off)
    _expand(hist, True, tb, a1, a2, dist_off)
    _constant_counts(tb, n_rounds, a1, a2, dist_off)


@njit(**_JIT)
def _run_chunk(
    key, first, n_rounds, tie, has_delay, has_extra, counted, n_sides, tb, sg, dist_off, hist,
    a1, a2, st,
):  # fmt: skip
    """Play rounds ``first .. first + n_rounds - 1`` of the chunk with key ``key``, each
    from its own stream; sum the counts and their squares."""
    key = unmanaged(key)
    st = unmanaged(st)
    tb = unmanaged(tb)
    sg = unmanaged(sg)
    dist_off = unmanaged(dist_off)
    hist = unmanaged(hist)
    a1 = unmanaged(a1)
    a2 = unmanaged(a2)
    for r in range(first, first + n_rounds):
        round_start_lazy(st, key, r)
        _round(st, tie, has_delay, has_extra, counted, n_sides, tb, sg)
        _tally(tb, sg, n_sides, False, counted, hist, a1, a2, dist_off)
    _expand(hist, False, tb, a1, a2, dist_off)
    if not counted:
        _constant_counts(tb, n_rounds, a1, a2, dist_off)


@njit(**_JIT)
def _trace_rounds(key, first, n_rounds, tie, has_delay, has_extra, n_sides, tb, sg, dist_off, size):
    """Each round's counts as a row (tests): [n_rounds, size]."""
    out = np.zeros((n_rounds, size), np.int64)
    squares = np.zeros(size, np.int64)
    hist = np.zeros(0, np.int64)
    st = np.zeros(STATE_WORDS, np.uint64)
    for r in range(n_rounds):
        round_start_lazy(st, key, first + r)
        _round(st, tie, has_delay, has_extra, True, n_sides, tb, sg)
        _tally(tb, sg, n_sides, False, True, hist, out[r], squares, dist_off)
    return out


# --------------------------------------------------------------------------- wrappers
def _offsets(compiled: Compiled) -> np.ndarray:
    """Distribution offsets of every combatant, then the scenario-count offset."""
    lay = compiled.layout
    return np.append(lay.dist_offsets, lay.scenario_offset).astype(np.int64)


def _squared(layout: Layout) -> np.ndarray:
    """True where a count may exceed 1 (its square is summed apart)."""
    out = np.zeros(layout.size, dtype=bool)
    for i in range(layout.n):
        for metric in MULTI_COUNTS:
            out[layout.count_index(i, metric)] = True
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

    ``key``: the chunk's ``chunk_state`` (its first four words); round ``r`` draws from
    its own stream (``round_start``).  Every round is its own cycle, since nothing
    carries over between vtm rounds: the sums are those of ``flush_cycle(y, 1, ...)``
    after every round, i.e. sum y, sum y^2 and sum y * 1.  ``no_hold`` (readiness'
    R8) has no meaning here; the return value, what carries into the next round, is
    always False.
    """
    lay = compiled.layout
    n = lay.n
    a1 = np.zeros(lay.size, np.int64)
    a2 = np.zeros(lay.size, np.int64)
    hist = np.zeros(n**n if compiled.coded else 0, np.int64)
    tb = compiled.table.copy()
    sg = compiled.sg.copy()
    words = np.ascontiguousarray(key[:4], dtype=np.uint64)
    if compiled.ranked:
        _run_chunk_ranked(
            words, first, n_rounds, compiled.tie, compiled.has_extra, compiled.n_sides,
            tb, sg, _offsets(compiled), hist, a1, a2, np.zeros(STATE_WORDS, np.uint64),
        )  # fmt: skip
    else:
        _run_chunk(
            words, first, n_rounds, compiled.tie, compiled.has_delay, compiled.has_extra,
            compiled.has_abort, compiled.n_sides, tb, sg, _offsets(compiled), hist, a1, a2,
            np.zeros(STATE_WORDS, np.uint64),
        )  # fmt: skip
    sums.s1 += a1
    sums.s2 += np.where(_squared(lay), a2, a1)
    sums.sl += a1
    sums.tot += np.array([n_rounds, n_rounds, n_rounds], np.int64)
    return False


def trace(compiled: Compiled, key: np.ndarray, n_rounds: int, first: int = 0) -> np.ndarray:
    """Counts of rounds ``first .. first + n_rounds - 1`` of the chunk with key ``key``,
    int64 [n_rounds, layout.size], in the layout of ``compiled.layout``."""
    return _trace_rounds(
        np.ascontiguousarray(key[:4], dtype=np.uint64),
        first,
        n_rounds,
        compiled.tie,
        compiled.has_delay,
        compiled.has_extra,
        compiled.n_sides,
        compiled.table.copy(),
        compiled.sg.copy(),
        _offsets(compiled),
        compiled.layout.size,
    )
