"""System ``vtm``: rounds side by side ("lanes"), the fast path of ``kernel.run_chunk``.

Where every combatant takes exactly one action at its turn, nobody delays or aborts,
ties share a slot and attack_share is 0 or 1 (``H_LANES``), a round is a function of its
first sixteen byte draws (V1 dice, then one target draw per attack from several
targets, in the order of the actions), cut from its first two outputs
(stream.first_outputs).  ``play_lanes`` plays FAST_LANES such rounds at once, every
loop along the rounds (vectorised), and gives each the codes ``kernel._run_chunk``
histograms.  A round it cannot finish from those bytes (a die rejecting two bytes in
a row, a rejected target byte, more than sixteen bytes) is played by ``rules.setup``
and ``rules.play`` as usual.  tests/test_vtm_kernel.py holds both ways equal.

``why_not_lanes`` names the first reason a scenario cannot take the lanes
(``LANE_REASONS``; kept on ``kernel.Compiled.lanes_off``), ``lane_kinds`` the counts of
the values code as a lane computes them (``LANE_CARRIES``).
"""

from __future__ import annotations

import numpy as np

from simkit.metrics import Layout
from simkit.systems.base import SHARE_ALWAYS, SHARE_NEVER, TIE_RANDOM
from simkit.systems.counting import first_reason
from simkit.systems.stream import (
    BYTE_LIMIT,
    LANE_BYTES,
    RECIPROCAL,
    first_outputs,
    lane_byte,
    lane_roll,
)
from simkit.systems.support import JIT, njit
from simkit.systems.vtm.counts import COUNTS, H_END, H_VALUE_KINDS, H_VALUE_WEIGHTS, HIST_MAX
from simkit.systems.vtm.memory import (
    G_N,
    G_TARGETS,
    P_END,
    P_KEY,
    P_SHARE,
    P_TCOUNT,
    P_TSTART,
    P_TURN,
)
from simkit.systems.vtm.rules import D10, KEY_SHIFT, NOT_A_COMBATANT

FAST_LANES = 256
# The counts of the values code a lane computes (``H_VALUE_KINDS``: 2 i + the place here);
# a values code with any other count turns the lanes off ("uncarried_count").
LANE_CARRIES = ("attacked_before_acting", "attacks_received")
# Why ``play_lanes`` cannot serve a scenario (``why_not_lanes``, ``Compiled.lanes_off``).
LANE_REASONS = (
    "plain_plan", "too_many_combatants", "delay_or_abort", "random_tie", "uncarried_count",
    "counts_flushed", "summed_every_round", "several_actions", "share_between_0_and_1",
    "no_targets", "too_many_draws",
)  # fmt: skip
(L_OK, L_SLOT, L_VALUE, L_POS, L_ACC, L_DICE_END, L_KEY) = range(7)  # rows of the lanes
L_LO = L_KEY + HIST_MAX  # then a row per combatant: V2 key, slot start, target
L_TARGET = L_LO + HIST_MAX
L_ROWS = L_TARGET + HIST_MAX


def _draws(rows: dict[int, list[int]], i: int) -> bool:
    """Whether i's action draws a byte for its target: it always attacks, from several."""
    return rows[P_SHARE][i] == SHARE_ALWAYS and rows[P_TCOUNT][i] > 1


def lane_kinds(layout: Layout, value_slots: np.ndarray) -> list[int] | str:
    """The values code's counts as the lanes compute them (``H_VALUE_KINDS``: 2 i + the
    count's place in LANE_CARRIES), or the name of the first count they do not carry."""
    kinds = []
    cs = layout.count_slots
    for slot in value_slots.tolist():
        i, m = (int(x[0]) for x in np.nonzero(cs == slot))
        if COUNTS[m] not in LANE_CARRIES:
            return COUNTS[m]
        kinds.append(2 * i + LANE_CARRIES.index(COUNTS[m]))
    return kinds


def why_not_lanes(
    f: dict, per_round: int, kinds: list[int] | str, rows: dict[int, list[int]], tie: int,
    plain: bool,
) -> str | None:  # fmt: skip
    """None if ``play_lanes`` can play the scenario's rounds side by side, else the name of
    the first reason it cannot (LANE_REASONS).  ``f``: the slot plan's fields
    (``counts.SlotPlan.fields``); ``per_round``: aggregation entries and pair products the
    plan needs every round; ``kinds``: ``lane_kinds``."""
    n = len(rows[P_TURN])
    return first_reason(
        (
            ("plain_plan", not plain),
            ("too_many_combatants", n <= HIST_MAX),
            ("delay_or_abort", f["ranked"]),
            ("random_tie", tie != TIE_RANDOM),
            ("uncarried_count", not isinstance(kinds, str)),
            ("counts_flushed", not f["flush"].size),  # e.g. too many values for one code
            (
                "summed_every_round",
                not (f["declare"] or f["finish"] or f["zero_all"] or f["binary"].size)
                and per_round == 0,
            ),
            ("several_actions", all(t == 1 for t in rows[P_TURN]) and not any(rows[P_END])),
            ("share_between_0_and_1", all(v in (SHARE_NEVER, SHARE_ALWAYS) for v in rows[P_SHARE])),
            ("no_targets", min(rows[P_TCOUNT]) >= 1),
            ("too_many_draws", n + sum(_draws(rows, i) for i in range(n)) <= LANE_BYTES),
        )
    )


@njit(**JIT)
def play_lanes(key, r0, m, pl, words, second, lanes):
    """Rounds r0 .. r0 + FAST_LANES - 1 (``H_LANES``): in row L_OK of ``lanes`` 1 where a
    round could be played from its first sixteen byte draws, and then its slot code
    (L_SLOT) and values code (L_VALUE) as ``kernel._run_chunk`` computes them."""
    n = m[G_N]
    first_outputs(key, r0, words, second)
    ok = lanes[L_OK]
    pos = lanes[L_POS]
    for b in range(FAST_LANES):
        ok[b] = 1
        pos[b] = 0
    for i in range(n):  # V1: i's d10
        die_key = lanes[L_KEY + i]
        base = m[P_KEY + i]
        for b in range(FAST_LANES):
            die_key[b] = (lane_roll(words, second, b, pos, ok, D10) << KEY_SHIFT) + base
    dice_end = lanes[L_DICE_END]
    for b in range(FAST_LANES):
        dice_end[b] = pos[b]
    for i in range(n):  # V2: a slot starts after every higher (initiative, rating) level
        lo = lanes[L_LO + i]
        ki = lanes[L_KEY + i]
        for b in range(FAST_LANES):
            lo[b] = 0
        for j in range(n):
            kj = lanes[L_KEY + j]
            for b in range(FAST_LANES):
                lo[b] += (kj[b] >> 8) > (ki[b] >> 8)
    for c in range(n):  # its target: the byte after the dice and the earlier actions' draws
        target = lanes[L_TARGET + c]
        count = m[P_TCOUNT + c]
        start = G_TARGETS + m[P_TSTART + c]
        if m[P_SHARE + c] == SHARE_NEVER or count == 1:
            t = m[start] if m[P_SHARE + c] != SHARE_NEVER else NOT_A_COMBATANT
            for b in range(FAST_LANES):
                target[b] = t
            continue
        kc = lanes[L_KEY + c]
        for b in range(FAST_LANES):
            pos[b] = dice_end[b]
        for j in range(n):  # actions come in descending key order
            if m[P_SHARE + j] == SHARE_ALWAYS and m[P_TCOUNT + j] > 1:
                kj = lanes[L_KEY + j]
                for b in range(FAST_LANES):
                    pos[b] += kj[b] > kc[b]
        limit = BYTE_LIMIT[count]
        reciprocal = RECIPROCAL[count]
        last = start + count - 1  # the list as six values (count <= HIST_MAX)
        t0, t1, t2 = m[start], m[min(start + 1, last)], m[min(start + 2, last)]
        t3, t4, t5 = m[min(start + 3, last)], m[min(start + 4, last)], m[min(start + 5, last)]
        for b in range(FAST_LANES):  # below(count), then the list's entry: selects, no gather
            p = pos[b]
            x = lane_byte(words, second, b, p & (LANE_BYTES - 1))
            ok[b] &= (p < LANE_BYTES) & (x < limit)
            e = x - ((x * reciprocal) >> 32) * count
            t = t0 if e == 0 else t1
            t = t if e < 2 else t2
            t = t if e < 3 else t3
            t = t if e < 4 else t4
            target[b] = t if e < 5 else t5
    code = lanes[L_SLOT]
    for b in range(FAST_LANES):
        code[b] = 0
    scale = 1
    for i in range(n):
        lo = lanes[L_LO + i]
        for b in range(FAST_LANES):
            code[b] += lo[b] * scale
        scale *= n
    value = lanes[L_VALUE]
    acc = lanes[L_ACC]
    for b in range(FAST_LANES):
        value[b] = 0
    start = pl[H_VALUE_KINDS]
    for k in range(start, pl[H_END]):  # attacks_received or attacked_before_acting of j
        j = pl[k] >> 1
        weight = pl[pl[H_VALUE_WEIGHTS] + k - start]
        for b in range(FAST_LANES):
            acc[b] = 0
        lo_j = lanes[L_LO + j]
        for c in range(n):
            target = lanes[L_TARGET + c]
            lo_c = lanes[L_LO + c]
            if pl[k] & 1:
                for b in range(FAST_LANES):
                    acc[b] += target[b] == j
            else:  # attacked from an earlier slot: j had not acted (a slot acts at once)
                for b in range(FAST_LANES):
                    acc[b] |= (target[b] == j) & (lo_j[b] > lo_c[b])
        for b in range(FAST_LANES):
            value[b] += acc[b] * weight
