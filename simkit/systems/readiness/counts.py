"""System ``readiness``: how the counts of its cycles are summed (rules.py plays the rules).

A round adds its counts to one column of the counts array ``Y`` (a batch of
``counting.BATCH_DTYPE``, a row per slot: the layout's count slots, the scenario counts,
then rows the flush fills: the group/side slots and any acts_before or actions_dist slot
a ratio pair needs; ``batch`` columns, a power of two sized so that ``Y`` stays in the
cache).  ``kernel.run_chunk`` gives each regeneration cycle (R8: a round, or a stalemate
and the forced round after it) a column; ``flush`` turns a full batch into the running
sums, every loop running along the cycles of one row (vectorised):

* a count row's ``sum y``, ``sum y^2``, ``sum y L`` (L the cycle's rounds; a row that
  is 0 or 1 in every round gives ``sum y`` thrice when every L is 1, and a row the
  scenario cannot make non-zero, e.g. ``on_edge`` without a hold policy, is skipped);
* group and side rows from ``Layout.aggregation`` (the rule of ``aggregate_round``):
  a sum of the members, or "any member" for a probability count.  "Any" of a cycle
  equals the sum over its rounds of each round's "any", because the only other round
  of a cycle, the stalemate, has the same value (0 or 1) for every member in every
  probability count (nobody acts or is attacked; everyone is on edge and has no action);
* actions_dist from the cycle's actions (a stalemate round adds ``actions_dist.0``);
* acts_before from the step of each combatant's first action in the cycle's last round
  (a stalemate round has none): 0 or 1 per cycle, summed in an n x n matrix;
* the cross sums of every ratio pair (``Layout.pairs``) as dot products of rows.

``round_row`` turns one round's column (``trace``, ``rows``) into a full layout row
(then ``aggregate_round``), so flushing its rows as cycles gives exactly ``run_chunk``'s
sums (tests/test_contract.py).

The plan
--------
Every list of slots and rows the flush and ``round_row`` read is one int64 vector,
``Compiled.plan`` (``plan(layout, never)``, made by ``counting.pack_plan``): list ``h``
is ``plan[plan[h] : plan[h + 1]]`` (``part``), its header names ``H_*`` below.  A table
of ``m`` rows (``ranges`` [3, k]: row, slot, 0-or-1 flag) is ``m`` lists of one length,
one after the other, read as one [m, k] view (``table``), the form counting.py's
``aggregate_batch`` and ``flush_batch`` take.
"""

from __future__ import annotations

import numpy as np

from simkit.metrics import Layout
from simkit.metrics.layout import OP_SUM
from simkit.systems.counting import (
    aggregate_batch,
    aggregate_round,
    binary_slots,
    clear_batch,
    flush_batch,
    pack_plan,
)
from simkit.systems.readiness.codes import (
    ACTIONS,
    ATTACKS_RECEIVED,
    DEFENDED,
    HASTY_DEFENSES,
    HASTY_GE_1,
    HASTY_ONLY,
    HASTY_SCALE_TOTAL,
    HIGHEST_SCALE,
    N_COUNTS,
    NO_ACTION,
    SCENARIO_COUNTS,
    UNDEFENDED,
)
from simkit.systems.readiness.rules import COLD, HELPER
from simkit.systems.support import njit

# flush's 16-bit copy of the first-action steps: every step of a round is below the
# round's dice (kernel.py asserts it); NO_STEP becomes the cap
STEP_CAP = np.int16(32767)
# lists per table: np.int64, not literals, so `table` compiles once (a literal 2 and 3
# were two signatures)
TWO = np.int64(2)
THREE = np.int64(3)
ONE_ROUND = np.ones(1, dtype=np.int64)  # a traced round: a cycle of its own
# flush: a combatant's actions_dist of more slots than this is counted one cycle at a
# time (a slot each: the cycle's actions, at most its dice), not one slot at a time
DIST_BY_COUNTING = 8
# Flush rows computed from other data (pair slots outside the count rows).
DERIVED_BEFORE, DERIVED_DIST = 0, 1

# Header of Compiled.plan (counting.pack_plan): where each list starts, the next one's
# start its end.  The lists of one table follow each other (``table``).
(
    H_RANGE_ROW,  # ranges [3, k], every row summed: its row of the counts array,
    H_RANGE_SLOT,  # its slot,
    H_RANGE_BINARY,  # 1 if the count is 0 or 1 in a round
    H_SUM_SRC,  # agg_sum [2, k], Layout.aggregation's sums: source row,
    H_SUM_DST,  # and group or side row
    H_ANY_SRC,  # agg_any [2, k], its "any member" entries (probability counts)
    H_ANY_DST,
    H_DERIVED_KIND,  # derived pair rows: DERIVED_BEFORE or DERIVED_DIST,
    H_DERIVED_I,  # the combatant,
    H_DERIVED_J,  # the other combatant (acts_before) or the actions (actions_dist),
    H_DERIVED_ROW,  # and the row it is written to
    H_PAIR_A,  # pair_rows [2, p], the rows of every ratio pair: the first,
    H_PAIR_B,  # and the second
    H_DIST,  # Layout.dist_offsets, then the end of the last (n + 1)
    H_BEFORE,  # Layout.before_index(i, j) at i n + j
    H_SCENARIO,  # Layout.scenario_index of SCENARIO_COUNTS
    H_AGG_SRC,  # Layout.aggregation (round_row): source slots,
    H_AGG_DST,  # destinations,
    H_AGG_OP,  # and OP_SUM / OP_ANY
    H_END,
) = (np.int64(h) for h in range(20))  # np.int64, not int: a literal int would compile
# ``part`` and ``table`` once per header name (numba types a global int as a literal)
H_SIZE = int(H_END) + 1
RANGES, AGG_SUM, AGG_ANY, PAIRS = H_RANGE_ROW, H_SUM_SRC, H_ANY_SRC, H_PAIR_A  # tables


def plan(layout: Layout, never: frozenset[str]) -> tuple[int, np.ndarray]:
    """The rows of the counts array and the plan (module docstring) of a scenario whose
    counts ``never`` are never non-zero (``_emission``)."""
    rows, ranges, agg, derived, pair_rows = _emission(layout, never)
    n = layout.n
    src, dst, op = layout.aggregation
    before = [layout.before_index(i, j) for i in range(n) for j in range(n)]
    sums = agg[2] == OP_SUM
    parts = [
        *ranges,
        *agg[:2, sums],
        *agg[:2, ~sums],
        *derived,
        *pair_rows,
        np.append(layout.dist_offsets, layout.scenario_offset),
        before,
        [layout.scenario_index(c) for c in SCENARIO_COUNTS],
        src,
        dst,
        op,
    ]
    return rows, pack_plan(parts, {}, H_SIZE)


def lists(plan_: np.ndarray, h: int, m: int = 1) -> np.ndarray:
    """Lists ``h .. h + m - 1`` of a plan as an [m, k] array (plain Python; tests)."""
    return plan_[plan_[h] : plan_[h + m]].reshape(m, int(plan_[h + 1] - plan_[h]))


@njit(**HELPER)
def part(plan, h):
    """List ``h`` of the plan (a view)."""
    return plan[plan[h] : plan[h + 1]]


@njit(**HELPER)
def table(plan, h, m):
    """Lists ``h .. h + m - 1`` of the plan, of one length, as an [m, k] view."""
    return plan[plan[h] : plan[h + m]].reshape((m, plan[h + 1] - plan[h]))


@njit(**HELPER)
def before_slots(plan):
    """The acts_before slots as an [n, n] view (``Layout.before_index``)."""
    n = plan[H_DIST + 1] - plan[H_DIST] - 1
    return plan[plan[H_BEFORE] : plan[H_BEFORE + 1]].reshape((n, n))


def _emission(layout: Layout, never: frozenset[str]):
    """Rows of the counts array and what the flush does with them (module docstring).

    ``never``: counts this scenario cannot make non-zero (no hold policy: nothing
    expires, nobody is ever on edge; no guard: no guard defenses); their rows are not
    emitted (adding zeros changes no sum) and their group rows not aggregated."""
    n_counts = layout.before_offset  # count slots are 0 .. n K - 1
    n_scen = len(layout.scenario_counts)
    n_units = layout.size - layout.unit_offset
    first_unit = n_counts + n_scen
    agg_counts = layout.aggregated
    binary = binary_slots(layout)  # the slots that are 0 or 1 in a round
    emit = []  # (row, slot, 1 if the count is 0 or 1 in a round)
    for i in range(layout.n):
        for m, count in enumerate(layout.counts):
            if count not in never:
                slot = int(layout.count_slots[i, m])
                emit.append((slot, slot, int(slot in binary)))
    for k, count in enumerate(layout.scenario_counts):
        if count not in never:
            slot = layout.scenario_offset + k
            emit.append((n_counts + k, slot, int(slot in binary)))
    for u in range(n_units):
        if agg_counts[u % len(agg_counts)] not in never:
            slot = layout.unit_offset + u
            emit.append((first_unit + u, slot, int(slot in binary)))
    ranges = np.array(emit, dtype=np.int64).reshape(-1, 3).T.copy()
    src, dst, op = layout.aggregation
    agg = np.stack([src, dst - layout.unit_offset + first_unit, op]).astype(np.int64)
    live = np.array(
        [agg_counts[(d - layout.unit_offset) % len(agg_counts)] not in never for d in dst],
        dtype=bool,
    )
    agg = agg[:, live] if agg.size else agg
    # by source row, not by destination: the entries adding into one group or side row
    # then come apart (one after the other, each would wait for the store of the last)
    agg = agg[:, np.argsort(agg[0], kind="stable")]
    derived: dict[int, tuple[int, int, int, int]] = {}
    rows = first_unit + n_units

    def row_of(slot: int) -> int:
        nonlocal rows
        if slot < n_counts:
            return slot
        if slot >= layout.unit_offset:
            return first_unit + slot - layout.unit_offset
        if slot >= layout.scenario_offset:
            return n_counts + slot - layout.scenario_offset
        if slot not in derived:
            if slot < int(layout.dist_offsets[0]):
                i, j = divmod(slot - layout.before_offset, layout.n)
                derived[slot] = (DERIVED_BEFORE, i, j, rows)
            else:
                i = int(np.searchsorted(layout.dist_offsets, slot, side="right")) - 1
                derived[slot] = (DERIVED_DIST, i, slot - int(layout.dist_offsets[i]), rows)
            rows += 1
        return derived[slot][3]

    pairs = [(row_of(a), row_of(b)) for a, b in layout.pairs]
    pair_rows = np.array(pairs, dtype=np.int64).reshape(-1, 2).T.copy()
    derived_rows = np.array(list(derived.values()), dtype=np.int64).reshape(-1, 4).T.copy()
    return rows, ranges, agg, derived_rows, pair_rows


# --------------------------------------------------------------------------- the flush
@njit(**COLD, link_only=True)
def derived_rows(Y, CS, L, nb):
    """The counts of cycles 0 .. nb - 1 (``CS`` scaled to the counts array's cycles per
    row; ``L`` their rounds) that ``rules.play_round`` does not count one by one:

    * attacks_received = undefended + defended + hasty_only (every attack has exactly
      one outcome);
    * no_action = 1 in a round without an action of its own: the stalemate round of a
      two-round cycle (nobody acts), and the last round if its actions are 0;
    * the hasty counts, from each hasty defense of scale k counted once in row
      hasty_ge.k: hasty_ge.k becomes the sum of rows k .. 5 (the defenses of scale
      >= k), hasty_defenses hasty_ge.1 and hasty_scale_total the sum of hasty_ge.1 .. 5
      (a defense of scale k is in k of them)."""
    cycles = np.uint64(nb)  # unsigned row + b: no wraparound code, the loops vectorise
    for i in range(CS.shape[0]):  # every loop along the cycles of one row (Y[row + b])
        rec = CS[i, ATTACKS_RECEIVED]
        und = CS[i, UNDEFENDED]
        dfd = CS[i, DEFENDED]
        hso = CS[i, HASTY_ONLY]
        for b in range(cycles):
            Y[rec + b] = Y[und + b] + Y[dfd + b] + Y[hso + b]
        noa = CS[i, NO_ACTION]
        act = CS[i, ACTIONS]
        for b in range(cycles):
            Y[noa + b] = (L[b] - 1) + (Y[act + b] == 0)
        tot = CS[i, HASTY_SCALE_TOTAL]
        above = CS[i, HASTY_GE_1 + HIGHEST_SCALE - 1]
        for b in range(cycles):
            Y[tot + b] = Y[above + b]
        for k in range(HIGHEST_SCALE - 2, -1, -1):
            row = CS[i, HASTY_GE_1 + k]
            for b in range(cycles):
                Y[row + b] += Y[above + b]
                Y[tot + b] += Y[row + b]
            above = row
        dfs = CS[i, HASTY_DEFENSES]
        for b in range(cycles):
            Y[dfs + b] = Y[above + b]


def flusher(always_single, small=False):
    """``flush`` for a driver.  ``always_single`` (a constant of the closure): every cycle
    is one round long, as in every scenario without a hold policy (no R8: readiness >= 1,
    so someone acts in every round); numba then compiles only the one-round sums.
    Otherwise a batch whose cycles all happen to be one round long takes them too.
    ``small`` (a constant too): at most ONE_LEVEL combatants, whose acts_before is always
    counted along the cycles (the same counts), so the code along the combatants, for
    more combatants than cycles, is not compiled."""

    @njit(**COLD, link_only=True)
    def flush(Y, F, FT, L, nb, lb, CS, plan, sums):
        """Add cycles 0 .. nb - 1 of a batch to the running sums and zero them.

        ``Y`` (counting.BATCH_DTYPE) is the counts array, row-major with ``1 << lb``
        cycles per row (row r, cycle b at ``(r << lb) + b``), and ``F[i, b]`` the step of
        i's first action in cycle b's last round, so every loop below runs along the
        cycles of one row and vectorises (``FT``: room for F transposed in 16 bits, when
        acts_before runs along the combatants instead).  ``plan``: Compiled.plan, its
        lists read through ``H_*`` (``ranges`` [3, k]: the row, slot and "0 or 1 per
        round" flag of every row emitted: count slots, scenario counts, group and side
        slots).  ``AB[0]`` and ``AB[1]`` collect acts_before: cycles where i's first
        action came before j's, and the extra rounds (L - 1) of those cycles (``drive``
        adds them to the sums).  ``sums``: (s1, s2, sl, sx, tot, AB, ACC), ``ACC``
        (int16, n x n) acts_before's cycles of the batches along the combatants, not yet
        in AB[0] (the driver adds them)."""
        dist_off = part(plan, H_DIST)
        ranges = table(plan, RANGES, THREE)
        pair_rows = table(plan, PAIRS, TWO)
        kinds = part(plan, H_DERIVED_KIND)
        first = part(plan, H_DERIVED_I)
        other = part(plan, H_DERIVED_J)
        written = part(plan, H_DERIVED_ROW)
        s1, s2, sl, sx, tot, AB, ACC = sums
        n = CS.shape[0]
        cycles = np.uint64(nb)  # unsigned row + b: no wraparound code, the loops vectorise
        derived_rows(Y, CS, L, nb)
        single = np.bool_(True)  # every cycle of the batch one round long (not a literal: one
        # signature of flush_batch, not a first one typed with a literal True as well)
        if not always_single:
            for b in range(cycles):
                single &= L[b] == 1
        aggregate_batch(Y, nb, lb, table(plan, AGG_SUM, TWO), table(plan, AGG_ANY, TWO))  # units
        for k in range(kinds.size):  # pair slots outside the rows
            i = first[k]
            j = other[k]
            out = np.uint64(written[k] << lb)
            acts = CS[i, ACTIONS]
            for b in range(cycles):
                if kinds[k] == DERIVED_BEFORE:
                    Y[out + b] = 1 if F[i, b] < F[j, b] else 0
                else:
                    Y[out + b] = (1 if Y[acts + b] == j else 0) + ((L[b] - 1) if j == 0 else 0)
        flush_batch(Y, L, nb, lb, always_single or single, ranges, pair_rows, s1, s2, sl, sx, tot)
        for i in range(n):
            acts = CS[i, ACTIONS]  # actions_dist: the cycle's actions (and its stalemate)
            d = dist_off[i]
            if dist_off[i + 1] - d > DIST_BY_COUNTING:  # one slot per cycle (at most its dice)
                for b in range(cycles):
                    slot = d + np.int64(Y[acts + b])
                    s1[slot] += 1
                    s2[slot] += 1
                    sl[slot] += 1
            else:  # few slots: each counted along the cycles (vectorised)
                for k in range(dist_off[i + 1] - d):
                    hits = 0
                    for b in range(cycles):
                        hits += 1 if Y[acts + b] == k else 0
                    s1[d + k] += hits
                    s2[d + k] += hits
                    sl[d + k] += hits
            # acts_before: i's first action strictly before j's, along the cycles
            if small or n < nb:
                for j in range(n):
                    before = 0
                    for b in range(cycles):
                        before += 1 if F[i, b] < F[j, b] else 0
                    AB[0, i, j] += before
        # ... or, for more combatants than cycles, along the combatants
        if not small and n >= nb:
            # F transposed, a cycle's steps contiguous, in 16 bits (STEP_CAP: the same
            # order); the cycles in which i acted before j are counted in 16 bits too
            # (four times the combatants of int64 per vector instruction), in the n x n
            # ``ACC`` that the driver adds to AB[0] before it could overflow (a quarter of
            # AB[0]'s memory, not read and written once per batch)
            m = np.uint64(n)
            for i in range(m):
                for b in range(cycles):
                    FT[b * m + i] = min(F[i, b], STEP_CAP)
            eight = np.uint64(8)
            b0 = np.uint64(0)
            while b0 + eight <= cycles:  # eight cycles at a time: each ACC entry read and
                # written once for eight comparisons (the loop along j vectorises)
                q0 = FT[b0 * m : (b0 + np.uint64(1)) * m]
                q1 = FT[(b0 + np.uint64(1)) * m : (b0 + np.uint64(2)) * m]
                q2 = FT[(b0 + np.uint64(2)) * m : (b0 + np.uint64(3)) * m]
                q3 = FT[(b0 + np.uint64(3)) * m : (b0 + np.uint64(4)) * m]
                q4 = FT[(b0 + np.uint64(4)) * m : (b0 + np.uint64(5)) * m]
                q5 = FT[(b0 + np.uint64(5)) * m : (b0 + np.uint64(6)) * m]
                q6 = FT[(b0 + np.uint64(6)) * m : (b0 + np.uint64(7)) * m]
                q7 = FT[(b0 + np.uint64(7)) * m : (b0 + eight) * m]
                for i in range(m):
                    at = i * m
                    f0, f1, f2, f3 = q0[i], q1[i], q2[i], q3[i]
                    f4, f5, f6, f7 = q4[i], q5[i], q6[i], q7[i]
                    for j in range(m):
                        ACC[at + j] += (
                            np.int16(f0 < q0[j])
                            + np.int16(f1 < q1[j])
                            + np.int16(f2 < q2[j])
                            + np.int16(f3 < q3[j])
                            + np.int16(f4 < q4[j])
                            + np.int16(f5 < q5[j])
                            + np.int16(f6 < q6[j])
                            + np.int16(f7 < q7[j])
                        )
                b0 += eight
            for i in range(m):  # the cycles left, one at a time
                at = i * m
                for b in range(b0, cycles):
                    row = b * m
                    fi = FT[row + i]
                    for j in range(m):
                        ACC[at + j] += np.int16(fi < FT[row + j])
        if not always_single and not single:  # a stalemate (R8) made some cycles two rounds long
            for b in range(cycles):
                extra = L[b] - 1
                if extra == 0:
                    continue
                for i in range(n):
                    acts = np.int64(Y[CS[i, ACTIONS] + b])
                    d = dist_off[i]
                    # this cycle's y at actions_dist.0 is extra + (acts == 0), not (acts == 0)
                    y0 = 1 if acts == 0 else 0
                    x = extra + y0
                    s1[d] += extra
                    s2[d] += x * x - y0
                    sl[d] += x * L[b] - y0
                    if acts > 0:  # y = 1 at actions_dist.acts, counted with L = 1 above
                        sl[d + acts] += extra
                    for j in range(n):
                        AB[1, i, j] += extra if F[i, b] < F[j, b] else 0
        clear_batch(Y, L, nb)

    return flush


flush_single = flusher(True)  # the driver of scenarios without holds
flush_cycles = flusher(False)  # with holds
flush_cycles_small = flusher(False, True)  # with holds, at most ONE_LEVEL combatants


@njit(**COLD)
def round_row(Y, F, CS, plan, row):
    """One round's counts ``Y`` (one cycle per row: ``lb`` 0) and first-action steps
    ``f`` as a complete layout row, aggregate slots filled by ``aggregate_round``
    (Layout.aggregation, from ``plan``); zero ``Y``."""
    dist_off = part(plan, H_DIST)
    before = before_slots(plan)
    scenario_slots = part(plan, H_SCENARIO)
    n = CS.shape[0]
    k_counts = N_COUNTS  # CS rows are padded to COUNT_COLUMNS
    derived_rows(Y, CS, ONE_ROUND, 1)
    for m in range(row.size):
        row[m] = 0
    for i in range(n):
        for m in range(k_counts):
            row[CS[i, m]] = Y[CS[i, m]]
        row[dist_off[i] + Y[CS[i, ACTIONS]]] = 1
        for j in range(n):
            row[before[i, j]] = 1 if F[i, 0] < F[j, 0] else 0
    first_scenario_row = n * k_counts
    for k in range(scenario_slots.size):
        row[scenario_slots[k]] = Y[first_scenario_row + k]
    aggregate_round(row, part(plan, H_AGG_SRC), part(plan, H_AGG_DST), part(plan, H_AGG_OP))
    for m in range(Y.size):
        Y[m] = 0
