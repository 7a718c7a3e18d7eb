"""System ``perception``: the rules, d10 + Perception, individual or group (docs/rules.md,
P1-P4, rev 2), as numba functions: the only implementation of the rules.

``play_round`` plays one round into the round rows of the table ``tab`` (table.py);
every path of kernel.py calls it (``_run_general``, ``_run_histogram`` for the rounds
the lanes do not play, ``_trace_rounds``), and ``note_round`` writes the round's events
for ``trace`` from the state it left in ``tab``, the state that is counted
(counts.py).  The simplest scenarios' rounds are also played side by side from the same
draws (lanes.py), held equal to ``play_round`` by the tests.

A round, and the order of its draws (tests/twins/perception.py is the spec)
---------------------------------------------------------------------------
Round ``r`` of a chunk starts on its own stream (``round_start_lazy(st, key, r)``).

1. P1: one d10 per combatant in scenario order, initiative = d10 + perception.  P2:
   one d10 per side in order of first appearance, total = d10 + group stat (the
   commander's perception or the side's highest, fixed at compile time).  Trace
   ``dice`` replace a roller's face after the draw.
2. The acting order of the *entities* (P1: combatants; P2: sides): descending total,
   then descending perception (group stat), then scenario order.  Entities still
   tied: P1 ``tie = "simultaneous"`` shares a slot; otherwise (P1 ``"random"``, P2
   always) a fair random order by sequential selection, tied runs from the first slot
   to the last: ``below(m)`` picks the next among the ``m`` left (counted in scenario
   order), until one is left.  P2 then lists the sides' members, side after side,
   each side in a fresh fair order (``within_side = "random"``) or in scenario order
   (``"listed"``, no draw).  Slots count from 0 without gaps.
3. P3 (no draw): each combatant's *information run*, the acting positions around it
   with its own information value; it learns the first action of everyone after its
   run (group mode: of other sides only).  The value is the total under
   ``information = "strict"`` (P2: the side total) and the slot under ``"order"``;
   along the acting order both only ever step one way, so a run is a stretch of
   consecutive positions (``T_RUN_END``).
4. P3/P4 stated first actions, in scenario order: ``chance(attack_share)`` unless the
   share is 0 or 1, then ``below`` over its target list if it attacks.

Implementation notes (each measured on the 4-combatant benchmark scenario)
------------------------------------------------------------------------
* Everything a round reads or writes lives in ONE int64 table ``tab``, a row per
  quantity, indexed ``tab[ROW, k]``: parameters, target lists, round state.  numba
  increfs and decrefs every array argument on entry to and exit from a function it
  does not inline, and every row view: so the round function takes two arrays (the
  stream and ``tab``) and creates no view.
* The steps of a round are written out in ``play_round``, not in helpers: a call
  with an array costs more than most steps, and LLVM does not inline functions of
  that size.  (``play_round`` itself is inlined into each path, the only
  ``inline="always"`` here; its comment says why.)  ``stream.below`` is such a
  function (8 ns a call, against 1.6 ns for a ``roll`` of a constant die), so its
  byte path is written out too, once for the fair orders and once for the targets,
  with ``BELOW_LIMIT`` / ``BELOW_RECIPROCAL`` (the same draws, tested).  All fair
  orders of a round (tied runs, then P2's sides) are drawn by one loop.
* Dice make ties and runs coin flips, so the common path is branch-free: few
  entities (``PAIRWISE_MAX``) are ordered by counting who is ahead of whom, many by a
  counting sort over the possible totals (the same order; each is faster where used).
* Constants passed to a jitted function are numpy scalars (``_ZERO``, ``EV_*``): a
  Python int is a literal type, and numba compiles the function again per literal.
"""

from __future__ import annotations

import numpy as np

from simkit.systems.base import NOBODY, SHARE_ALWAYS, SHARE_NEVER
from simkit.systems.perception.schema import (
    INFORMATION_STRICT,
    MODE_INDIVIDUAL,
    TIE_SIMULTANEOUS,
    WITHIN_RANDOM,
)
from simkit.systems.perception.table import (
    P_INFO,
    P_LOW,
    P_MODE,
    P_N,
    P_SIDES,
    P_SPAN,
    P_TIE,
    P_WITHIN,
    T_BUCKET,
    T_BY_PER,
    T_BY_STAT,
    T_CHOICE,
    T_DIE,
    T_FAIR_SIZE,
    T_FAIR_START,
    T_FIXED,
    T_KEY,
    T_MCOUNT,
    T_MEMBERS,
    T_MSTART,
    T_ORDER,
    T_PAR,
    T_PER,
    T_RUN_END,
    T_SHARE,
    T_SIDE,
    T_SLOT,
    T_SORDER,
    T_SSLOT,
    T_STAT,
    T_STOTAL,
    T_TARGET,
    T_TARGETS,
    T_TCOUNT,
    T_TIED,
    T_TLIST,
    T_TOTAL,
)
from simkit.systems.stream import BYTE_LIMIT, RECIPROCAL, chance, next_byte, roll
from simkit.systems.support import JIT, njit

D10 = 10  # P1, P2

# Event kinds (column ``kind``); the System object names them and cites their rules.
EV_ROLL_P1, EV_ROLL_P2, EV_SLOT_P1, EV_SLOT_P2, EV_INTENT, EV_ACT, EV_ATTACK = (
    np.int64(k) for k in range(7)
)
_NOBODY = np.int64(NOBODY)
_ZERO = np.int64(0)


# stream.below(st, n) for 2 <= n <= 256, as the round function draws it (written out:
# a call to stream.below costs 8 ns, more than the draw, because LLVM does not inline
# it): bytes until one is below BELOW_LIMIT[n] = 256 - 256 % n, then b % n computed as
# b - ((b * BELOW_RECIPROCAL[n]) >> 32) * n, exact for bytes.  The same draws as
# stream.below (tests/test_perception_kernel.py::test_below_written_out_is_stream_below).
BELOW_LIMIT, BELOW_RECIPROCAL = BYTE_LIMIT, RECIPROCAL
KEY_SHIFT = 5  # order keys (total << 5) | perception: perception <= MAX_PERCEPTION < 32
PAIRWISE_MAX = 8  # up to 8 entities are ordered by counting who is ahead of whom


# --------------------------------------------------------------------------- a round
# The one function inlined by numba (inline="always"): each path calls it once per round
# and compiles it once either way, so inlining costs ~0.3 s of compile per path and
# saves the call (~7 ns a round: on the benchmark scenario, 1.32x -> 1.19x the time of
# revision 1's kernel, which inlined every helper).
@njit(**JIT, inline="always")
def play_round(st, tab):
    """Play one round (P1-P4) on the stream ``st`` into the round rows of ``tab``:
    the dice, slots, acting order, information runs and stated targets."""
    n = tab[T_PAR, P_N]
    mode = tab[T_PAR, P_MODE]
    # P1: the combatants roll and are ordered; P2: the sides (ties: always random)
    if mode == MODE_INDIVIDUAL:
        m, e_stat, e_by, e_total, e_order, e_slot = n, T_PER, T_BY_PER, T_TOTAL, T_ORDER, T_SLOT
        shared = tab[T_PAR, P_TIE] == TIE_SIMULTANEOUS
    else:
        m, e_stat, e_by = tab[T_PAR, P_SIDES], T_STAT, T_BY_STAT
        e_total, e_order, e_slot = T_STOTAL, T_SORDER, T_SSLOT
        shared = False
    for k in range(m):  # one d10 each, in order; trace dice replace the face drawn
        d = roll(st, D10)
        if tab[T_FIXED, k] > 0:
            d = tab[T_FIXED, k]
        tab[T_DIE, k] = d
        tab[e_total, k] = d + tab[e_stat, k]
        tab[T_KEY, k] = (tab[e_total, k] << KEY_SHIFT) | tab[e_stat, k]
    # The order: descending (total, stat), then scenario order.
    tied = False  # are any two entities tied (equal total and stat)?
    if m <= PAIRWISE_MAX:  # few: count who is ahead of whom, branch-free
        for k in range(m):
            tab[T_TIED, k] = 0  # (holds how many are ahead until the order is known)
        for a in range(m):
            ka = tab[T_KEY, a]
            ahead = tab[T_TIED, a]
            for b in range(a + 1, m):
                kb = tab[T_KEY, b]
                ahead += ka < kb
                tab[T_TIED, b] += ka >= kb  # equal keys: scenario order
                tied |= ka == kb
            tab[e_order, ahead] = a
    else:  # many: a counting sort over the possible totals (stable in tab[e_by] order)
        low = tab[T_PAR, P_LOW]
        span = tab[T_PAR, P_SPAN]
        for t in range(span):
            tab[T_BUCKET, t] = 0
        for k in range(m):
            tab[T_BUCKET, tab[e_total, k] - low] += 1
        ahead = 0
        for t in range(span - 1, -1, -1):
            c = tab[T_BUCKET, t]
            tab[T_BUCKET, t] = ahead
            ahead += c
        for k in range(m):
            e = tab[e_by, k]
            t = tab[e_total, e] - low
            tab[e_order, tab[T_BUCKET, t]] = e
            tab[T_BUCKET, t] += 1
        for p in range(1, m):
            tied |= tab[T_KEY, tab[e_order, p]] == tab[T_KEY, tab[e_order, p - 1]]
    # Still tied: one shared slot (P1 "simultaneous") or a fair random order (P1
    # "random", P2), tied runs first to last.  Most rounds have no tie.
    n_fair = 0  # fair orders to draw: tab[T_FAIR_START, k], tab[T_FAIR_SIZE, k]
    if tied:
        tab[T_TIED, 0] = 0
        for p in range(1, m):  # tied with the one before it
            tab[T_TIED, p] = tab[T_KEY, tab[e_order, p]] == tab[T_KEY, tab[e_order, p - 1]]
        p = 0
        while not shared and p < m:
            q = p + 1
            while q < m and tab[T_TIED, q]:
                q += 1
            tab[T_FAIR_START, n_fair] = p
            tab[T_FAIR_SIZE, n_fair] = q - p
            n_fair += q - p > 1
            p = q
    row = e_order
    for phase in range(2):
        # Fair random orders of tab[row, start : start + size], first to last, by
        # sequential selection: below(left) picks the next among those left, which
        # keep their order.  (below's byte path, written out: see BELOW_LIMIT.)
        for f in range(n_fair):
            start = tab[T_FAIR_START, f]
            size = tab[T_FAIR_SIZE, f]
            for x in range(size - 1):
                a = start + x
                left = size - x
                limit = BELOW_LIMIT[left]
                b = next_byte(st)
                while b >= limit:
                    b = next_byte(st)
                pick = b - ((b * BELOW_RECIPROCAL[left]) >> 32) * left
                if pick > 0:
                    v = tab[row, a + pick]
                    for c in range(a + pick, a, -1):
                        tab[row, c] = tab[row, c - 1]
                    tab[row, a] = v
        if phase == 1:  # P2: the members' slots, in the order just drawn
            for p in range(n):
                i = tab[T_ORDER, p]
                tab[T_SLOT, i] = p
            break
        k = -1
        for p in range(m):
            k += not (shared and tied and tab[T_TIED, p])
            tab[e_slot, tab[e_order, p]] = k
        if mode == MODE_INDIVIDUAL:
            break
        # P2: the sides' members, side after side in acting order, each side in a fresh
        # fair order (within_side = "random") or in scenario order; one slot each.
        pos = 0
        n_fair = 0
        for x in range(m):
            s = tab[T_SORDER, x]
            start = tab[T_MSTART, s]
            size = tab[T_MCOUNT, s]
            for q in range(size):
                i = tab[T_MEMBERS, start + q]
                tab[T_ORDER, pos + q] = i
                tab[T_TOTAL, i] = tab[T_STOTAL, s]  # P3 "strict" compares side totals
            if tab[T_PAR, P_WITHIN] == WITHIN_RANDOM and size > 1:
                tab[T_FAIR_START, n_fair] = pos
                tab[T_FAIR_SIZE, n_fair] = size
                n_fair += 1
            pos += size
        row = T_ORDER
    # P3: tab[T_RUN_END, p], the first acting position after p's information run.  A
    # combatant learns the first action of everyone after its run (group mode: other
    # sides only); the run is those with its total ("strict": "of those whose
    # initiative is less than his own") or its slot ("order", revision 1).  Along the
    # acting order totals never rise and slots never fall: runs are consecutive.
    row = T_TOTAL if tab[T_PAR, P_INFO] == INFORMATION_STRICT else T_SLOT
    tab[T_RUN_END, n - 1] = n
    later = tab[row, tab[T_ORDER, n - 1]]
    for p in range(n - 2, -1, -1):
        v = tab[row, tab[T_ORDER, p]]
        tab[T_RUN_END, p] = p + 1 if v != later else tab[T_RUN_END, p + 1]
        later = v
    # P3/P4: the first action each states (and must carry out), in scenario order: an
    # attack with probability attack_share, at ``below`` over its target list.
    for i in range(n):
        share = tab[T_SHARE, i]
        attack = share == SHARE_ALWAYS or (share != SHARE_NEVER and chance(st, share))
        tab[T_TARGET, i] = NOBODY
        tab[T_CHOICE, i] = 0
        if attack:
            count = tab[T_TCOUNT, i]  # below(count), its byte path written out as above
            k = 0
            if count > 1:
                limit = BELOW_LIMIT[count]
                b = next_byte(st)
                while b >= limit:
                    b = next_byte(st)
                k = b - ((b * BELOW_RECIPROCAL[count]) >> 32) * count
            tab[T_TARGET, i] = tab[T_TARGETS + tab[T_TLIST, i], k]
            tab[T_CHOICE, i] = k + 1


@njit(**JIT)
def _note(ev, ne, r, kind, actor, other, a, b):
    """Write one event row (trace); returns the new number of events."""
    ev[ne, 0] = r
    ev[ne, 1] = kind
    ev[ne, 2] = actor
    ev[ne, 3] = other
    ev[ne, 4] = a
    ev[ne, 5] = b
    ev[ne, 6] = 0
    ev[ne, 7] = 0
    return ne + 1


@njit(**JIT)
def note_round(ev, ne, r, tab):
    """The events of the round ``play_round`` left in ``tab``, in the twin's order:
    the rolls (P1/P2), the slots, who learns whose first action (P3: learners in
    acting order), then every action and attack (P4) in acting order."""
    n = tab[T_PAR, P_N]
    if tab[T_PAR, P_MODE] == MODE_INDIVIDUAL:
        m, total, roll_event, slot_event = n, T_TOTAL, EV_ROLL_P1, EV_SLOT_P1
    else:
        m, total, roll_event, slot_event = tab[T_PAR, P_SIDES], T_STOTAL, EV_ROLL_P2, EV_SLOT_P2
    for k in range(m):
        ne = _note(ev, ne, r, roll_event, k, _NOBODY, tab[T_DIE, k], tab[total, k])
    for p in range(n):
        i = tab[T_ORDER, p]
        ne = _note(ev, ne, r, slot_event, i, _NOBODY, tab[T_SLOT, i], _ZERO)
    for p in range(n):
        f = tab[T_ORDER, p]
        for q in range(tab[T_RUN_END, p], n):
            g = tab[T_ORDER, q]
            if tab[T_PAR, P_MODE] == MODE_INDIVIDUAL or tab[T_SIDE, g] != tab[T_SIDE, f]:
                ne = _note(ev, ne, r, EV_INTENT, f, g, _ZERO, _ZERO)
    # P3: the first to act states nothing (group mode: every member of the side acting
    # first; only the lower sides state); column a: 1 if it stated its first action
    lead = tab[T_ORDER, 0]
    for p in range(n):
        f = tab[T_ORDER, p]
        if tab[T_PAR, P_MODE] == MODE_INDIVIDUAL:
            stated = np.int64(tab[T_SLOT, f] > 0)
        else:
            stated = np.int64(tab[T_SIDE, f] != tab[T_SIDE, lead])
        ne = _note(ev, ne, r, EV_ACT, f, _NOBODY, stated, _ZERO)
        if tab[T_TARGET, f] != NOBODY:
            ne = _note(ev, ne, r, EV_ATTACK, f, tab[T_TARGET, f], _ZERO, _ZERO)
    return ne
