"""System ``perception``: rounds side by side ("lanes"), the fast path of the histogram
path of ``kernel.run_chunk``.

Where ``P_LANES`` (individual mode, at most HIST_MAX_N combatants, attack_share 0 or 1),
a round is a function of its first sixteen byte draws (P1 dice, a below(2) for each pair
of tied combatants, then the target draws in scenario order), cut from its first two
outputs (stream.first_outputs).  ``play_lanes`` plays FAST_LANES rounds at once, every
loop along the rounds (vectorised), and gives each its outcome as
``kernel._run_histogram`` codes it.  A round it cannot finish from those bytes (a die
rejecting two bytes in a row, three combatants tied, a rejected target byte) is played
by ``rules.play_round`` as usual.  tests/test_perception_kernel.py holds both equal.
``why_not_lanes`` names the first reason a scenario cannot take the lanes
(``LANE_REASONS``; kept on ``kernel.Compiled.lanes_off``).
"""

from __future__ import annotations

import numpy as np

from simkit.systems.base import SHARE_ALWAYS, SHARE_NEVER
from simkit.systems.counting import first_reason
from simkit.systems.perception.counts import CODE_BITS, CODE_SLOT_BITS, HIST_MAX_N
from simkit.systems.perception.rules import BELOW_LIMIT, BELOW_RECIPROCAL, D10, KEY_SHIFT
from simkit.systems.perception.schema import INFORMATION_STRICT, MODE_INDIVIDUAL, TIE_SIMULTANEOUS
from simkit.systems.perception.table import P_INFO, P_N, P_TIE, T_PAR, T_PER, T_SHARE, T_TCOUNT
from simkit.systems.stream import LANE_BYTES, first_outputs, lane_byte, lane_roll
from simkit.systems.support import JIT, njit

FAST_LANES = 256
LANE_BLOCK = 1 << 16  # rounds whose codes run_chunk keeps at a time (a multiple of FAST_LANES)
(L_OK, L_POS, L_CODE, L_BREAKS, L_AT) = range(5)  # rows of the lanes array, then per
L_KEY = 5  # combatant: its order key,
L_TOTAL = L_KEY + HIST_MAX_N  # its total,
L_PLACE = L_TOTAL + HIST_MAX_N  # its acting position (= slot under tie "random"),
L_SLOT = L_PLACE + HIST_MAX_N  # its slot,
L_TIED = L_SLOT + HIST_MAX_N  # 1 if a later combatant has its key (it leads a tied pair)
L_ROWS = L_TIED + HIST_MAX_N
# Why ``play_lanes`` cannot serve a scenario (``why_not_lanes``, ``Compiled.lanes_off``).
LANE_REASONS = ("group_mode", "too_many_combatants", "share_between_0_and_1")


def why_not_lanes(mode: int, n: int, shares: list[int]) -> str | None:
    """None if ``play_lanes`` can play the scenario's rounds side by side, else the name of
    the first reason it cannot (LANE_REASONS): a lane carries one d10 per combatant and
    a target draw per attack from several targets, for at most HIST_MAX_N combatants."""
    return first_reason(
        (
            ("group_mode", mode == MODE_INDIVIDUAL),  # P2 side dice and fair orders
            ("too_many_combatants", n <= HIST_MAX_N),  # the histogram path's outcome codes
            ("share_between_0_and_1", all(s in (SHARE_NEVER, SHARE_ALWAYS) for s in shares)),
        )
    )


@njit(**JIT)
def play_lanes(key, first, tab, codes, words, second, lanes):
    """``codes[k]``: the outcome code of round ``first + k`` as ``kernel._run_histogram``
    computes it from ``rules.play_round``'s rows, or -1 where the round must be played
    (``codes.size`` a multiple of FAST_LANES).  FAST_LANES rounds at a time: row L_OK of
    ``lanes`` is 1 where a round could be played from its first sixteen byte draws, L_CODE
    its outcome; every inner loop runs along the rounds over rows of ``lanes`` (int32:
    twice the rounds per vector instruction of int64; a code has 19 bits).  Called apart
    from ``kernel._run_histogram``, which reads the codes, and written as one function:
    numba and LLVM then compile this code once."""
    n = tab[T_PAR, P_N]
    for r0 in range(first, first + codes.size, FAST_LANES):
        first_outputs(key, r0, words, second)
        ok = lanes[L_OK]
        pos = lanes[L_POS]
        for b in range(FAST_LANES):
            ok[b] = 1
            pos[b] = 0
        for i in range(n):  # P1: i's d10
            keys = lanes[L_KEY + i]
            totals = lanes[L_TOTAL + i]
            per = np.int32(tab[T_PER, i])
            for b in range(FAST_LANES):
                total = np.int32(lane_roll(words, second, b, pos, ok, D10)) + per
                totals[b] = total
                keys[b] = (total << KEY_SHIFT) | per
        for i in range(n):  # the acting position: descending key, then scenario order
            place = lanes[L_PLACE + i]
            tied = lanes[L_TIED + i]
            shared = lanes[L_SLOT + i]  # (here: how many others have its key)
            ki = lanes[L_KEY + i]
            for b in range(FAST_LANES):
                place[b] = 0
                tied[b] = 0
                shared[b] = 0
            for j in range(n):
                if j != i:
                    kj = lanes[L_KEY + j]
                    for b in range(FAST_LANES):
                        place[b] += (kj[b] > ki[b]) | ((kj[b] == ki[b]) & (j < i))
                        tied[b] |= (kj[b] == ki[b]) & (j > i)
                        shared[b] += kj[b] == ki[b]
            for b in range(FAST_LANES):
                ok[b] &= shared[b] <= 1  # no three tied
        if tab[T_PAR, P_TIE] != TIE_SIMULTANEOUS:  # a fair order of each tied pair: below(2),
            at = lanes[L_AT]  # one byte each, the pairs first to last (by key)
            for a in range(n):
                ka = lanes[L_KEY + a]
                for b in range(FAST_LANES):
                    at[b] = pos[b]
                for d in range(n):  # a pair ahead of a's: led by d, with a higher key
                    kd = lanes[L_KEY + d]
                    tied_d = lanes[L_TIED + d]
                    for b in range(FAST_LANES):
                        at[b] += tied_d[b] & (kd[b] > ka[b])
                place_a = lanes[L_PLACE + a]
                for c in range(a + 1, n):
                    kc = lanes[L_KEY + c]
                    place_c = lanes[L_PLACE + c]
                    for b in range(FAST_LANES):
                        x = lane_byte(words, second, b, at[b] & (LANE_BYTES - 1))
                        pair = ka[b] == kc[b]
                        swap = pair & (x & 1)  # below(2) = 1: the later one acts first
                        ok[b] &= (at[b] < LANE_BYTES) | (not pair)
                        place_a[b] += swap
                        place_c[b] -= swap
            for a in range(n):  # the bytes of every tied pair
                tied_a = lanes[L_TIED + a]
                for b in range(FAST_LANES):
                    pos[b] += tied_a[b]
            for i in range(n):  # one slot each
                slot = lanes[L_SLOT + i]
                place = lanes[L_PLACE + i]
                for b in range(FAST_LANES):
                    slot[b] = place[b]
        else:  # tied combatants share a slot: the position of the first of them
            for i in range(n):
                slot = lanes[L_SLOT + i]
                place = lanes[L_PLACE + i]
                ki = lanes[L_KEY + i]
                for b in range(FAST_LANES):
                    slot[b] = place[b]
                for j in range(i):  # a tied pair's later member: the slot of the earlier one
                    kj = lanes[L_KEY + j]
                    for b in range(FAST_LANES):
                        slot[b] -= kj[b] == ki[b]
                for j in range(n):  # and one slot less for each tied pair ahead of it
                    kj = lanes[L_KEY + j]
                    tied_j = lanes[L_TIED + j]
                    for b in range(FAST_LANES):
                        slot[b] -= tied_j[b] & (kj[b] > ki[b])
        # P3: the bit of position p is set where p's information value differs from the next's
        breaks = lanes[L_BREAKS]
        value = L_TOTAL if tab[T_PAR, P_INFO] == INFORMATION_STRICT else L_SLOT
        for b in range(FAST_LANES):
            breaks[b] = np.int32((1 << (n - 1)) - 1)
        for i in range(n):
            place_i = lanes[L_PLACE + i]
            value_i = lanes[value + i]
            for j in range(n):
                if j != i:
                    place_j = lanes[L_PLACE + j]
                    value_j = lanes[value + j]
                    for b in range(FAST_LANES):
                        same = (place_j[b] == place_i[b] + 1) & (value_i[b] == value_j[b])
                        breaks[b] &= ~(np.int32(same) << (place_i[b] & 31))
        code = lanes[L_CODE]
        for b in range(FAST_LANES):
            code[b] = breaks[b] << np.int32(CODE_BITS * n)
        for i in range(n):  # P4: targets in scenario order, a byte for a list of several
            share = tab[T_SHARE, i]
            count = tab[T_TCOUNT, i]
            choice = np.int32(1 if share == SHARE_ALWAYS else 0)
            slot = lanes[L_SLOT + i]
            shift = np.int32(CODE_BITS * i)
            for b in range(FAST_LANES):
                code[b] += (slot[b] | (choice << CODE_SLOT_BITS)) << shift
            if share == SHARE_ALWAYS and count > 1:
                limit = BELOW_LIMIT[count]
                reciprocal = BELOW_RECIPROCAL[count]
                shift = np.int32(CODE_BITS * i + CODE_SLOT_BITS)
                for b in range(FAST_LANES):
                    p = pos[b]
                    x = lane_byte(words, second, b, p & (LANE_BYTES - 1))
                    ok[b] &= (p < LANE_BYTES) & (x < limit)
                    k = np.int32(x - ((x * reciprocal) >> 32) * count)
                    code[b] += k << shift
                    pos[b] = p + 1
        for b in range(FAST_LANES):
            codes[r0 - first + b] = lanes[L_CODE, b] if lanes[L_OK, b] != 0 else -1
