"""System ``readiness``: a scenario as flat arrays, and the drivers of ``rules.py``.

``compile_scenario`` turns a validated scenario into integer arrays (named codes of
``codes.py``, read with ``base.code_of``).  ``run_chunk`` (driver ``run_rounds``) plays
rounds of a chunk and adds their regeneration-cycle sums (metrics.sums) to a ``Sums``;
``trace`` (driver ``trace_rounds``) plays the same rounds on the same code and returns
every round's complete count row, the events of play, the R8 carries and the stream
states.  Every driver calls ``rules.play_round``, the one implementation of the rules
for every scenario, with or without holds, as built by ``rules.round_player``: without
events in simulation, and without the R5 code in the driver of scenarios without a hold
policy (``run_rounds_plain``), so a cold start compiles only what its path can reach
(README: a few seconds).  The one exception: ``run_chunk`` of a scenario the lanes serve
(``Compiled.lanes_off`` None: no holds, guards, advantage, fights, ...) plays its rounds
128 side by side (lanes.py, lanes_run.py, compiled on first use), its sums held equal to
``play_round``'s bit for bit (tests/test_readiness_lanes.py), the rounds it cannot finish
played by ``play_round``.

Counts and their sums
---------------------
A round adds its counts to one column of the counts array ``Y`` (uint16, a row per slot:
the layout's count slots, the scenario counts, then rows the flush fills: the
group/side slots and any acts_before or actions_dist slot a ratio pair needs; ``batch``
columns, a power of two sized so that ``Y`` stays in the cache).  ``run_chunk`` gives
each regeneration cycle (R8: a round, or a stalemate and the forced round after it) a
column; ``flush`` turns a full batch into the running sums, every loop running along
the cycles of one row (vectorised):

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

``trace`` plays one round per column and expands it into a full layout row (then
``aggregate_round``), so flushing its rows as cycles gives exactly ``run_chunk``'s sums
(tests/test_contract.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from simkit.metrics import Layout, Sums
from simkit.metrics.layout import OP_SUM
from simkit.systems.base import EVENT_WIDTH, MAX_COMBATANTS, code_of, share_code
from simkit.systems.counting import (
    aggregate_batch,
    aggregate_round,
    binary_slots,
    clear_batch,
    flush_batch,
)
from simkit.systems.readiness import guards, lanes, schema
from simkit.systems.readiness.codes import (
    ACTIONS,
    ATTACKS_RECEIVED,
    COUNT_COLUMNS,
    COUNTS,
    DEFEND_ALWAYS,
    DEFEND_CODES,
    DEFEND_HASTY_UP_TO,
    DEFENDED,
    FACE_BITS,
    G_EVENTS,
    G_HOLDER_ACTIONS,
    G_LOG,
    G_LOG_BATCH,
    G_MAY_HOLD,
    G_ORDER,
    G_PREP,
    G_RELEASE_RULE,
    G_ROUND,
    G_SIDE_ARMED,
    G_SIDES,
    G_STALEMATE_ROW,
    GROUP,
    GUARD_CODES,
    GUARD_NEVER,
    HASTY_DEFENSES,
    HASTY_GE_1,
    HASTY_ONLY,
    HASTY_SCALE_TOTAL,
    HIGHEST_SCALE,
    HIT_ALWAYS,
    HOLD_CODES,
    HOLDER_ACTION_CODES,
    N_COUNTS,
    N_FIELDS,
    N_P,
    NEVER_HASTY,
    NO_ACTION,
    ORDER_CODES,
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
    PREP_CODES,
    RELEASE_RULE_CODES,
    ROLE_CODES,
    ROLE_HERO,
    SCENARIO_COUNTS,
    SECONDARY_WOUND,
    SIDES,
    STALEMATE,
    UNDEFENDED,
    WE_DEFEND,
    WE_GUARD,
)
from simkit.systems.readiness.rules import COLD, FIELD, RANK_BY_COUNTING, round_player
from simkit.systems.stream import STATE_WORDS, canonical_state, chance_threshold, round_start
from simkit.systems.support import JIT, njit, unmanaged, with_columns

HASTY_UP_TO = re.compile(schema.HASTY_UP_TO_PATTERN)
BATCH_ENTRIES = 65536  # counts-array entries per batch (rows x cycles)
COUNT_DTYPE = np.uint16  # a count of one cycle, at most count_bound(); half the memory of
# int32, and the flush streams through the counts array: about a fifth faster
MAX_BATCH = 128
# flush's 16-bit copy of the first-action steps: every step of a round is below the
# round's dice (at most MAX_COMBATANTS * MAX_READINESS); NO_STEP becomes the cap
STEP_CAP = np.int16(32767)
assert MAX_COMBATANTS * schema.MAX_READINESS < STEP_CAP and MAX_BATCH < STEP_CAP
assert schema.MAX_READINESS < 32  # rules.rank_by_counting: a face's count in 5 bits
ACC_LIMIT = int(STEP_CAP) - MAX_BATCH  # flush's 16-bit acts_before counts stay below STEP_CAP
ONE_ROUND = np.ones(1, dtype=np.int64)  # a traced round: a cycle of its own
# flush: a combatant's actions_dist of more slots than this is counted one cycle at a
# time (a slot each: the cycle's actions, at most its dice), not one slot at a time
DIST_BY_COUNTING = 8
# Flush rows computed from other data (pair slots outside the count rows).
DERIVED_BEFORE, DERIVED_DIST = 0, 1


@dataclass(frozen=True)
class Compiled:
    """A readiness scenario as flat arrays for ``rules.py`` (fields: codes.py)."""

    layout: Layout
    params: np.ndarray  # int64 [N_P, n]
    targets: np.ndarray  # int64: the target lists (equal lists share their entries)
    guards: np.ndarray  # int64: per combatant D (start, count), then the lists of D's guards
    rules: np.ndarray  # int64 [4]: ORDER_*, PREP_*, HOLDER_*, RELEASE_HIGHER / RELEASE_ANY
    n_sides: int
    count_slots: np.ndarray  # uint64 [n, K]: Layout.count_slots (unsigned: no index fix-up)
    count_table: np.ndarray  # uint64 [n, COUNT_COLUMNS]: count_slots, rows padded (the ``CS``)
    rows: int  # rows of the counts array
    ranges: np.ndarray  # int64 [3, k]: (row, slot, 1 if 0/1 per round) of each row emitted
    agg_sum: np.ndarray  # int64 [2, k]: Layout.aggregation's sums as (source, unit) rows
    agg_any: np.ndarray  # int64 [2, k]: its "any member" entries (probability counts)
    aggregation: np.ndarray  # int64 [3, k]: Layout.aggregation as (src, dst, op) slots
    derived: np.ndarray  # int64 [4, d]: (kind, i, j or k, row) of derived pair rows
    pair_rows: np.ndarray  # int64 [2, p]: the rows of every ratio pair
    dist_offsets: np.ndarray  # int64 [n + 1]: Layout.dist_offsets, then the end of the last
    before_slots: np.ndarray  # int64 [n, n]: Layout.before_index
    scenario_slots: np.ndarray  # int64: Layout.scenario_index of SCENARIO_COUNTS
    batch: int  # cycles per flush, a power of two
    tree_levels: int  # levels of the R3 key trees (rules.py)
    tree_width: int  # leaves of a tree: n if one level, else a multiple of GROUP
    event_bound: int  # the most events one round can write
    dice: int  # dice rolled per round
    may_hold: bool  # some combatant has a hold policy (R5, and so R8)
    lanes_off: str | None = None  # why lanes.py cannot play its rounds (lanes.REASONS)

    @property
    def n(self) -> int:
        return self.params.shape[1]


def defend_code(value: str, what: str) -> tuple[int, int]:
    """R7 ``defend`` as (DEFEND_* code, largest hasty scale it accepts or NEVER_HASTY); a
    ``+when_effective`` form [rev 3] as the policy it modifies (``when_effective_bits``)."""
    value, _ = schema.when_effective(value)
    m = HASTY_UP_TO.fullmatch(value)
    if m:
        return DEFEND_HASTY_UP_TO, int(m.group(1))
    code = code_of({k: c for k, c in DEFEND_CODES.items() if c != DEFEND_HASTY_UP_TO}, value, what)
    return code, HIGHEST_SCALE if code == DEFEND_ALWAYS else NEVER_HASTY


def when_effective_bits(defend: str, guard: str) -> int:
    """R7 [rev 3] P_WHEN_EFFECTIVE: WE_DEFEND if its ``defend``, WE_GUARD if its ``guard``
    answers only an attack that would take effect (schema.when_effective)."""
    return (
        int(WE_DEFEND) * schema.when_effective(defend)[1]
        + int(WE_GUARD) * schema.when_effective(guard)[1]
    )


def hit_code(p: float) -> int:
    """R7 [rev 3] ``hit_chance`` as P_HIT: HIT_ALWAYS for 1 (no draw), else the threshold
    of ``chance`` (0 included: drawn, never true, so that every value below 1 draws)."""
    return int(HIT_ALWAYS) if p >= 1.0 else chance_threshold(p)


def pool_of(faces) -> int:
    """Faces as a pool (the count of face f in bits 8(f-1)..8f-1)."""
    return sum(1 << (FIELD * (int(f) - 1)) for f in faces)


def count_bound(n: int, dice: int) -> int:
    """The largest count one cycle can put in a row of the counts array, for n combatants
    rolling ``dice`` dice a round.  A cycle is one round, or a stalemate (nobody spends a
    die) and the round after it.  A die spent adds at most HIGHEST_SCALE to a row
    (hasty_scale_total; a group or side row sums its members); each round adds at most
    one per combatant to a 0-or-1 count, at most its wound to edge_wound and at most
    its dice to expired_dice."""
    per_round = n * (1 + max(int(schema.MAX_WEAKNESS), int(SECONDARY_WOUND))) + dice
    return int(HIGHEST_SCALE) * dice + 2 * per_round


def compile_scenario(scenario, layout: Layout) -> Compiled:
    """Flatten a validated readiness scenario (every value through its named code)."""
    combatants = scenario.combatants
    n = len(combatants)
    sides = scenario.sides
    params = np.zeros((N_P, n), dtype=np.int64)
    targets: list[int] = []
    lists: dict[tuple[int, ...], int] = {}  # equal target lists share their entries
    for i, c in enumerate(combatants):
        what = f"{scenario.source}: {c.name}"
        params[P_DICE, i] = c["readiness"]
        params[P_ADVANTAGE, i] = c["advantage"]
        params[P_SIDE, i] = sides.index(c.side)
        params[P_HOLD, i] = code_of(HOLD_CODES, c["hold"], f"{what}.hold")
        params[P_DEFEND, i], params[P_HASTY_LIMIT, i] = defend_code(c["defend"], f"{what}.defend")
        # R7a: a named guard's policy is its guard_mode; R7 [rev 3]: either may end in
        # "+when_effective" (schema.when_effective, the one parser of the form)
        guard_policy = guards.mode(c)
        guard, _ = schema.when_effective(guard_policy)
        params[P_GUARD, i] = code_of(GUARD_CODES, guard, f"{what}.guard")
        params[P_GUARD_NAMED, i] = int(guards.is_named(c["guard"]))
        params[P_WHEN_EFFECTIVE, i] = when_effective_bits(c["defend"], guard_policy)
        params[P_HIT, i] = hit_code(c["hit_chance"])
        params[P_SURPRISED, i] = int(bool(c["surprised"]))
        params[P_SHARE, i] = share_code(c["attack_share"])
        role = code_of(ROLE_CODES, c["role"], f"{what}.role")
        params[P_WOUND, i] = c["weakness"] if role == ROLE_HERO else SECONDARY_WOUND
        listed = tuple(scenario.targets(i))
        if listed not in lists:
            lists[listed] = len(targets)
            targets.extend(listed)
        params[P_TARGET_START, i] = lists[listed]
        params[P_TARGET_COUNT, i] = len(listed)
        m = len(listed)
        params[P_TARGET_MASK, i] = m - 1 if 2 <= m <= 256 and m & (m - 1) == 0 else -1
    guard_lists, header = _guard_lists(scenario, params)
    rules = np.array(
        [
            code_of(ORDER_CODES, scenario.rules["order"], f"{scenario.source}: rules.order"),
            code_of(PREP_CODES, scenario.rules["prep"], f"{scenario.source}: rules.prep"),
            code_of(
                HOLDER_ACTION_CODES,
                scenario.rules["holder_actions"],
                f"{scenario.source}: rules.holder_actions",
            ),
            code_of(
                RELEASE_RULE_CODES, scenario.rules["release"], f"{scenario.source}: rules.release"
            ),
        ],
        dtype=np.int64,
    )
    assert layout.counts == COUNTS and layout.scenario_counts == SCENARIO_COUNTS
    never = set()
    if not (params[P_HOLD] != HOLD_CODES["never"]).any():  # no R5, so no R8
        never |= {"expired_dice", "on_edge", "edge_wound", "stalemate"}
    if not (params[P_GUARD] != GUARD_NEVER).any():
        never.add("guard_defenses")
    if not (params[P_HIT] != HIT_ALWAYS).any():  # every attack would take effect (R7 rev 3)
        never.add("wasted_defenses")
    rows, ranges, agg, derived, pair_rows = _emission(layout, frozenset(never))
    batch = 1 << (max(1, min(MAX_BATCH, BATCH_ENTRIES // rows)).bit_length() - 1)
    dice = int(params[P_DICE].sum())
    # validation's limits keep every count in range (tests/test_readiness_kernel.py)
    assert count_bound(n, dice) <= np.iinfo(COUNT_DTYPE).max
    return Compiled(
        layout=layout,
        params=params,
        targets=np.array(targets, dtype=np.int64),
        guards=np.concatenate([header, np.array(guard_lists, dtype=np.int64)]),
        rules=rules,
        n_sides=len(sides),
        count_slots=np.ascontiguousarray(layout.count_slots, dtype=np.uint64),
        count_table=_padded(layout.count_slots, COUNT_COLUMNS),
        rows=rows,
        ranges=ranges,
        agg_sum=np.ascontiguousarray(agg[:2, agg[2] == OP_SUM]),
        agg_any=np.ascontiguousarray(agg[:2, agg[2] != OP_SUM]),
        aggregation=np.ascontiguousarray(np.stack(layout.aggregation), dtype=np.int64).reshape(
            3, -1
        ),
        derived=derived,
        pair_rows=pair_rows,
        dist_offsets=np.append(layout.dist_offsets, layout.scenario_offset).astype(np.int64),
        before_slots=np.array(
            [[layout.before_index(i, j) for j in range(n)] for i in range(n)], dtype=np.int64
        ).reshape(n, n),
        scenario_slots=np.array([layout.scenario_index(c) for c in SCENARIO_COUNTS], np.int64),
        batch=batch,
        tree_levels=_levels(n),
        tree_width=n if n <= GROUP else -(-n // int(GROUP)) * int(GROUP),
        # (rejoin: once per holder; run_broken: per action; R7 [rev 3]: per attack, no_effect
        # and a declined event per responder that answers only an attack that takes effect)
        event_bound=2 + 8 * n + 6 * dice + dice * _declining(params),
        dice=dice,
        may_hold=bool((params[P_HOLD] != HOLD_CODES["never"]).any()),
        lanes_off=lanes.why_not_lanes(params, batch, frozenset(never), bool(scenario.fight_rounds)),
    )


def _declining(params: np.ndarray) -> int:
    """Events an attack can add under R7 [rev 3]: no_effect and one declined per
    combatant with a ``when_effective`` policy (0 if every attack takes effect)."""
    if not (params[P_HIT] != HIT_ALWAYS).any():
        return 0
    return 1 + int((params[P_WHEN_EFFECTIVE] != 0).sum())


def _guard_lists(scenario, params: np.ndarray) -> tuple[list[int], np.ndarray]:
    """R7/R7a as data: for each combatant D, the guards that may answer for it, in scenario
    order (GL[2 D] the start of its list in GL, GL[2 D + 1] its length; equal lists share
    their entries).  A guard of every ally is in the list of each member of its side,
    itself included (the kernel skips a guard's own attacks: R7 is its own defense); a
    guard of named allies (R7a) only in theirs.  So a scenario without named guards has one
    list per side, as before, and the policy is data: no compile per scenario."""
    n = len(scenario.combatants)
    protects = [guards.protected(scenario, g) for g in range(n)]
    entries: list[int] = []
    shared: dict[tuple[int, ...], int] = {}
    header = np.zeros(2 * n, dtype=np.int64)
    for d, c in enumerate(scenario.combatants):
        listed = tuple(
            g
            for g, other in enumerate(scenario.combatants)
            if other.side == c.side
            and params[P_GUARD, g] != GUARD_NEVER
            and (protects[g] is None or d in protects[g])
        )
        if listed not in shared:
            shared[listed] = len(entries)
            entries.extend(listed)
        header[2 * d] = 2 * n + shared[listed]
        header[2 * d + 1] = len(listed)
    return entries, header


def _padded(slots: np.ndarray, columns: int) -> np.ndarray:
    """``slots`` [n, K] as uint64 rows of ``columns`` entries (K <= columns; the rest 0)."""
    table = np.zeros((slots.shape[0], columns), dtype=np.uint64)
    table[:, : slots.shape[1]] = slots
    return table


def _levels(n: int) -> int:
    """Levels of an R3 key tree over n leaves: the top one has at most GROUP nodes."""
    levels, size = 1, n
    while size > GROUP:
        size = -(-size // int(GROUP))
        levels += 1
    return levels


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


# --------------------------------------------------------------------------- emission
@njit(**COLD)
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


def flusher(always_single):
    """``flush`` for a driver.  ``always_single`` (a constant of the closure): every cycle
    is one round long, as in every scenario without a hold policy (no R8: readiness >= 1,
    so someone acts in every round); numba then compiles only the one-round sums.
    Otherwise a batch whose cycles all happen to be one round long takes them too."""

    @njit(**COLD)
    def flush(Y, F, FT, L, nb, lb, CS, plan, sums):
        """Add cycles 0 .. nb - 1 of a batch to the running sums and zero them.

        ``Y`` (COUNT_DTYPE) is the counts array, row-major with ``1 << lb`` cycles per row (row r,
        cycle b at ``(r << lb) + b``), and ``F[i, b]`` the step of i's first action in
        cycle b's last round, so every loop below runs along the cycles of one row and
        vectorises (``FT``: room for F transposed in 16 bits, when
        acts_before runs along the combatants instead).  ``ranges`` [3, k]: the row, slot
        and "0 or 1 per round" flag of every row emitted (count slots, scenario counts,
        group and side slots).  ``AB[0]`` and ``AB[1]`` collect acts_before: cycles where
        i's first action came before j's, and the extra rounds (L - 1) of those cycles
        (``drive`` adds them to the sums).
        ``plan``: (dist_off, ranges, agg_sum, agg_any, derived, pair_rows); ``sums``: (s1,
        s2, sl, sx, tot, AB, ACC), ``ACC`` (int16, n x n) acts_before's cycles of the
        batches along the combatants, not yet in AB[0] (the driver adds them)."""
        dist_off, ranges, agg_sum, agg_any, derived, pair_rows = plan
        s1, s2, sl, sx, tot, AB, ACC = sums
        n = CS.shape[0]
        cycles = np.uint64(nb)  # unsigned row + b: no wraparound code, the loops vectorise
        derived_rows(Y, CS, L, nb)
        single = np.bool_(True)  # every cycle of the batch one round long (not a literal: one
        # signature of flush_batch, not a first one typed with a literal True as well)
        if not always_single:
            for b in range(cycles):
                single &= L[b] == 1
        aggregate_batch(Y, nb, lb, agg_sum, agg_any)  # group and side rows
        for k in range(derived.shape[1]):  # pair slots outside the rows
            i = derived[1, k]
            j = derived[2, k]
            out = np.uint64(derived[3, k] << lb)
            acts = CS[i, ACTIONS]
            for b in range(cycles):
                if derived[0, k] == DERIVED_BEFORE:
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
            if n < nb:  # acts_before: i's first action strictly before j's, along the cycles
                for j in range(n):
                    before = 0
                    for b in range(cycles):
                        before += 1 if F[i, b] < F[j, b] else 0
                    AB[0, i, j] += before
        if n >= nb:  # ... or, for more combatants than cycles, along the combatants
            # F transposed, a cycle's steps contiguous, in 16 bits (STEP_CAP: the same
            # order); the cycles in which i acted before j are counted in 16 bits too
            # (four times the combatants of int64 per vector instruction), in the n x n
            # ``ACC`` that the driver adds to AB[0] before it could overflow (a quarter of
            # AB[0]'s memory, not read and written once per batch)
            m = np.uint64(n)
            for i in range(m):
                for b in range(cycles):
                    FT[b * m + i] = min(F[i, b], STEP_CAP)
            for i in range(m):
                at = i * m
                for b in range(cycles):
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


@njit(**COLD)
def round_row(Y, F, CS, dist_off, before_slots, scenario_slots, aggregation, row):
    """One round's counts ``Y`` (one cycle per row: ``lb`` 0) and first-action steps
    ``f`` as a complete layout row, aggregate slots filled by ``aggregate_round``
    (Layout.aggregation); zero ``Y``."""
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
            row[before_slots[i, j]] = 1 if F[i, 0] < F[j, 0] else 0
    first_scenario_row = n * k_counts
    for k in range(scenario_slots.size):
        row[scenario_slots[k]] = Y[first_scenario_row + k]
    aggregate_round(row, aggregation[0], aggregation[1], aggregation[2])
    for m in range(Y.size):
        Y[m] = 0


# --------------------------------------------------------------------------- the driver
# The players of the rules (rules.round_player): simulation with and without R5 code, and
# the trace's, which writes events.
play_holds = round_player(False, True)
play_plain = round_player(False, False)
play_traced = round_player(True, True)
# the lanes' scalar player (lanes_run.py): rounds of scenarios the lanes serve only
play_lean = round_player(False, False, True)
assert lanes.MAX_LANE_COMBATANTS <= RANK_BY_COUNTING  # (the lean player's T2 ranks)


def _drivers(may_hold):
    """The entry points, closing over ``may_hold`` (some combatant has a hold policy):
    ``run_rounds`` calls only the player it needs (numba drops the other branch before
    compiling), so a scenario without holds never compiles the R5 code; ``trace_rounds``
    the same for both."""

    @njit(**JIT)
    def run_rounds(
        key,
        first,
        n_rounds,
        carry,
        P,
        T,
        GL,
        CS,
        W,
        G,
        KT,
        Y,
        F,
        L,
        EV,
        st,
        dist_off,
        ranges,
        agg_sum,
        agg_any,
        derived,
        pair_rows,
        before_slots,
        s1,
        s2,
        sl,
        sx,
        tot,
        AB,
        FT,
    ):
        """Play rounds ``first .. first + n_rounds - 1`` of the chunk with key ``key``, each on
        its own stream (``carry`` 1: R8 forbids holds in the first), through
        ``rules.play_round``, the one implementation of the rules; add their cycle sums.

        Each regeneration cycle adds to a column of the counts array ``Y`` (``1 <<
        G[G_LOG_BATCH]`` columns per row, rules.py); a full batch is flushed into the sums.
        Returns the carry after the last round."""
        key = unmanaged(key)
        P = with_columns(P, N_FIELDS)
        W = with_columns(W, N_FIELDS)
        CS = with_columns(CS, COUNT_COLUMNS)
        T = unmanaged(T)
        GL = unmanaged(GL)
        G = unmanaged(G)
        KT = unmanaged(KT)
        Y = unmanaged(Y)
        F = unmanaged(F)
        FT = unmanaged(FT)
        L = unmanaged(L)
        EV = unmanaged(EV)
        st = unmanaged(st)
        lb = G[G_LOG_BATCH]
        plan = (dist_off, ranges, agg_sum, agg_any, derived, pair_rows)  # for flush
        n = before_slots.shape[0]
        ACC = np.zeros(n * n, dtype=np.int16)  # flush: acts_before not yet in AB
        sums = (s1, s2, sl, sx, tot, AB, ACC)
        pending = 0  # cycles flushed since ACC was last added to AB
        b = 0
        end = first + n_rounds
        for r in range(first, end):
            round_start(st, key, r)
            G[G_ROUND] = r
            if may_hold:
                carry = play_holds(st, P, W, G, KT, T, GL, Y, np.uint64(b), CS, F, EV, carry)
            else:
                carry = play_plain(st, P, W, G, KT, T, GL, Y, np.uint64(b), CS, F, EV, carry)
            L[b] += 1
            # the cycle ends (R8: a stalemate joins the next round), or the rounds do
            if carry == 0 or r == end - 1:
                b += 1
            if b == 1 << lb or (b > 0 and r == end - 1):  # a full batch, or the last
                # only the flush its scenarios can need (numba drops the other branch)
                if may_hold:
                    flush_cycles(Y, F, FT, L, b, lb, CS, plan, sums)
                else:
                    flush_single(Y, F, FT, L, b, lb, CS, plan, sums)
                pending += b
                if pending > ACC_LIMIT or r == end - 1:  # ACC into AB[0] before it overflows
                    for m in range(n * n):
                        AB[0, m // n, m % n] += ACC[m]
                        ACC[m] = 0
                    pending = 0
                b = 0
        for i in range(n):  # acts_before: 0 or 1 per cycle, so sum y^2 = sum y
            for j in range(n):
                slot = before_slots[i, j]
                s1[slot] += AB[0, i, j]
                s2[slot] += AB[0, i, j]
                sl[slot] += AB[0, i, j] + AB[1, i, j]
        return carry

    @njit(**JIT)
    def trace_rounds(
        key,
        first,
        n_rounds,
        carry,
        event_bound,
        P,
        T,
        GL,
        CS,
        W,
        G,
        KT,
        Y,
        F,
        EV,
        st,
        dist_off,
        before_slots,
        scenario_slots,
        aggregation,
        rows,
        carries,
        states,
    ):
        """``run_rounds`` one round at a time, on the same ``rules.play_round`` (``log``
        1: it writes its events to ``EV``): every round's complete layout row, carry and
        stream state.  Stops before a round whose events might not fit (fewer than
        ``event_bound`` rows of ``EV`` left).  Returns (rounds played, carry)."""
        P = with_columns(P, N_FIELDS)
        W = with_columns(W, N_FIELDS)
        CS = with_columns(CS, COUNT_COLUMNS)
        for k in range(n_rounds):
            if EV.shape[0] - G[G_EVENTS] < event_bound:
                return k, carry
            r = first + k
            round_start(st, key, r)
            G[G_ROUND] = r
            carry = play_traced(st, P, W, G, KT, T, GL, Y, np.uint64(0), CS, F, EV, carry)
            round_row(Y, F, CS, dist_off, before_slots, scenario_slots, aggregation, rows[k])
            carries[k] = carry
            state = canonical_state(st)
            for w in range(state.size):
                states[k, w] = state[w]
        return n_rounds, carry

    return run_rounds, trace_rounds


run_rounds, trace_rounds = _drivers(True)
run_rounds_plain, _ = _drivers(False)


def _rows_driver(may_hold):
    """``rows_rounds``: ``trace_rounds`` without events (the simulation's player), for
    ``rows`` (R8a fights: engine.fights plays every round's count row)."""

    @njit(**JIT)
    def rows_rounds(
        key,
        first,
        n_rounds,
        carry,
        P,
        T,
        GL,
        CS,
        W,
        G,
        KT,
        Y,
        F,
        EV,
        st,
        dist_off,
        before_slots,
        scenario_slots,
        aggregation,
        rows,
        carries,
    ):
        """Rounds ``first ..`` of the chunk with key ``key`` through ``rules.play_round``
        (``carry`` 1: R8 forbids holds in the first): every round's complete layout row
        and carry.  Returns the carry after the last round."""
        P = with_columns(P, N_FIELDS)
        W = with_columns(W, N_FIELDS)
        CS = with_columns(CS, COUNT_COLUMNS)
        for k in range(n_rounds):
            r = first + k
            round_start(st, key, r)
            G[G_ROUND] = r
            if may_hold:
                carry = play_holds(st, P, W, G, KT, T, GL, Y, np.uint64(0), CS, F, EV, carry)
            else:
                carry = play_plain(st, P, W, G, KT, T, GL, Y, np.uint64(0), CS, F, EV, carry)
            round_row(Y, F, CS, dist_off, before_slots, scenario_slots, aggregation, rows[k])
            carries[k] = carry
        return carry

    return rows_rounds


rows_rounds = _rows_driver(True)
rows_rounds_plain = _rows_driver(False)


# --------------------------------------------------------------------------- entry points
def _work(compiled: Compiled, columns: int, log: bool, params: np.ndarray):
    """Fresh round state: W (the combatants' rows, ``params`` in the P columns), G, KT,
    Y, F, L, st (``columns`` a power of two)."""
    n = compiled.n
    W = np.zeros((n, N_FIELDS), dtype=np.int64)
    W[:, :N_P] = params.T
    G = np.zeros(G_SIDE_ARMED + 2 * compiled.n_sides, dtype=np.int64)
    G[G_ORDER], G[G_PREP], G[G_HOLDER_ACTIONS], G[G_RELEASE_RULE] = compiled.rules
    G[G_SIDES] = compiled.n_sides
    log_batch = columns.bit_length() - 1
    G[G_LOG_BATCH] = log_batch
    G[G_STALEMATE_ROW] = (compiled.count_slots.size + STALEMATE) << log_batch
    G[G_LOG] = int(log)
    G[G_MAY_HOLD] = int(compiled.may_hold)
    levels, width = compiled.tree_levels, compiled.tree_width
    return (
        W,
        G,
        np.full((2, levels, width), -1, dtype=np.int64),
        np.zeros(compiled.rows * columns, dtype=COUNT_DTYPE),
        np.zeros((n, columns), dtype=np.int64),
        np.zeros(columns, dtype=np.int64),
        np.zeros(STATE_WORDS, dtype=np.uint64),
    )


def run_chunk(
    compiled: Compiled, key: np.ndarray, n_rounds: int, sums: Sums, first: int = 0, carry: int = 0
) -> int:
    """Play rounds ``first .. first + n_rounds - 1`` of the chunk with key ``key`` and add
    them to ``sums``; ``carry`` 1: R8 forbids holds in the first.  Returns the carry.
    A scenario the lanes serve (``lanes_off`` None) goes to lanes_run.py (imported here:
    it imports this module), which compiles only then."""
    if compiled.lanes_off is None:
        from simkit.systems.readiness.lanes_run import run_chunk_lanes

        return run_chunk_lanes(compiled, key, n_rounds, sums, first)
    drive = run_rounds if compiled.may_hold else run_rounds_plain
    key4 = np.ascontiguousarray(key[:4], dtype=np.uint64)
    return int(drive(key4, first, n_rounds, int(carry), *driver_arguments(compiled, sums)))


def driver_arguments(compiled: Compiled, sums: Sums) -> tuple:
    """The arguments of a chunk driver after ``key, first, n_rounds`` (and the carry):
    the scenario's tables, fresh work arrays and ``sums``; also lanes_run's."""
    W, G, KT, Y, F, L, st = _work(compiled, compiled.batch, False, compiled.params)
    n = compiled.n
    return (
        W,  # P and W: the columns of one array (codes.py)
        compiled.targets,
        compiled.guards,
        compiled.count_table << np.uint64(G[G_LOG_BATCH]),
        W,
        G,
        KT,
        Y,
        F,
        L,
        np.zeros((0, EVENT_WIDTH), dtype=np.int64),
        st,
        compiled.dist_offsets,
        compiled.ranges,
        compiled.agg_sum,
        compiled.agg_any,
        compiled.derived,
        compiled.pair_rows,
        compiled.before_slots,
        sums.s1,
        sums.s2,
        sums.sl,
        sums.sx,
        sums.tot,
        np.zeros((2, n, n), dtype=np.int64),
        np.zeros((compiled.batch + 1) * n, dtype=np.int16),  # flush: F transposed
    )


def with_dice(compiled: Compiled, dice) -> np.ndarray:
    """The parameters with R1 faces fixed: ``dice`` maps a combatant to its faces."""
    params = compiled.params.copy()
    for i, faces in (dice or {}).items():
        faces = [int(f) for f in faces]
        if len(faces) != params[P_DICE, i] or not all(1 <= f <= SIDES for f in faces):
            raise ValueError(
                f"{compiled.layout.names[i]} rolls {params[P_DICE, i]} d6, got faces {faces}"
            )
        params[P_FIXED, i] = 1
        params[P_FIXED_POOL, i] = pool_of(faces)
        params[P_FIXED_FACES, i] = sum(f << (FACE_BITS * k) for k, f in enumerate(faces))
    return params


def trace(
    compiled: Compiled, key: np.ndarray, n_rounds: int, first: int = 0, carry: int = 0, dice=None
):
    """Rows, events, carries and states of rounds ``first ..`` (see ``base.Trace``)."""
    layout = compiled.layout
    W, G, KT, Y, F, _, st = _work(compiled, 1, True, with_dice(compiled, dice))
    rows = np.zeros((n_rounds, layout.size), dtype=np.int64)
    carries = np.zeros(n_rounds, dtype=np.int64)
    states = np.zeros((n_rounds, 6), dtype=np.uint64)
    key4 = np.ascontiguousarray(key[:4], dtype=np.uint64)
    per_buffer = max(1, min(64, (1 << 20) // compiled.event_bound))
    events = []
    done = 0
    carry = int(carry)
    while done < n_rounds:
        size = compiled.event_bound * min(per_buffer, n_rounds - done)
        EV = np.zeros((size, EVENT_WIDTH), dtype=np.int64)
        G[G_EVENTS] = 0
        played, carry = trace_rounds(
            key4,
            first + done,
            n_rounds - done,
            carry,
            compiled.event_bound,
            W,
            compiled.targets,
            compiled.guards,
            compiled.count_table,
            W,
            G,
            KT,
            Y,
            F,
            EV,
            st,
            compiled.dist_offsets,
            compiled.before_slots,
            compiled.scenario_slots,
            compiled.aggregation,
            rows[done:],
            carries[done:],
            states[done:],
        )
        events.append(EV[: G[G_EVENTS]])
        done += int(played)
    return rows, np.concatenate(events), carries, states


def rows(
    compiled: Compiled, key: np.ndarray, n_rounds: int, first: int = 0, carry: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Every round's complete count row and carry, rounds ``first ..`` (``trace``'s rows
    and carries, without events; tests/test_contract.py)."""
    layout = compiled.layout
    W, G, KT, Y, F, _, st = _work(compiled, 1, False, compiled.params)
    out = np.zeros((n_rounds, layout.size), dtype=np.int64)
    carries = np.zeros(n_rounds, dtype=np.int64)
    drive = rows_rounds if compiled.may_hold else rows_rounds_plain
    drive(
        np.ascontiguousarray(key[:4], dtype=np.uint64),
        first,
        n_rounds,
        int(carry),
        W,
        compiled.targets,
        compiled.guards,
        compiled.count_table,
        W,
        G,
        KT,
        Y,
        F,
        np.zeros((0, EVENT_WIDTH), dtype=np.int64),
        st,
        compiled.dist_offsets,
        compiled.before_slots,
        compiled.scenario_slots,
        compiled.aggregation,
        out,
        carries,
    )
    return out, carries
