"""System ``readiness``: a scenario as flat arrays, and the drivers of ``rules.py``.

``compile_scenario`` turns a validated scenario into integer arrays (named codes of
``codes.py``, read with ``base.code_of``).  ``run_chunk`` (driver ``run_rounds``) plays
rounds of a chunk and adds their regeneration-cycle sums (metrics.sums) to a ``Sums``;
``trace`` (driver ``trace_rounds``) plays the same rounds on the same code and returns
every round's complete count row, the events of play, the R8 carries and the stream
states.  Every driver calls ``rules.play_round``, the one implementation of the rules
for every scenario, with or without holds, as built by ``rules.round_player``: without
events in simulation, without the R5 code in the driver of scenarios without a hold
policy (``run_rounds_plain``), and without the code of bigger fights in the driver of
scenarios with holds and at most ONE_LEVEL combatants (``run_rounds_small``; the general
``run_rounds`` above that: ``run_chunk_driver``), so a cold start compiles only what its
path can reach (docs/performance.md).  The one exception: ``run_chunk`` of a scenario the
lanes serve (``Compiled.lanes_off`` None: no holds, guards, advantage, fights, ...) plays
its rounds LANES side by side (lanes.py, lanes_run.py, compiled on first use), its sums
held equal to ``play_round``'s bit for bit (tests/test_readiness_lanes.py), the rounds it
cannot finish played by ``play_round``.

Counts and their sums
---------------------
A round adds its counts to one column of the counts array ``Y`` (a batch of
``counting.BATCH_DTYPE``, ``COUNT_DTYPE`` here: ``compile_scenario`` checks that a
cycle's counts fit, ``count_bound``); ``run_chunk`` gives each regeneration cycle a
column and flushes a full batch into the running sums.  The flush, ``round_row`` (a
traced round as a full layout row) and the plan they read (``Compiled.plan``, one
int64 vector through ``counts.H_*``) are counts.py's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from simkit.metrics import Layout, Sums
from simkit.systems.base import EVENT_WIDTH, MAX_COMBATANTS, code_of, share_code
from simkit.systems.counting import BATCH_DTYPE, batch_fits
from simkit.systems.readiness import counts, guards, lanes, schema
from simkit.systems.readiness.codes import (
    COUNT_COLUMNS,
    COUNTS,
    DEFEND_ALWAYS,
    DEFEND_CODES,
    DEFEND_HASTY_UP_TO,
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
    HIGHEST_SCALE,
    HIT_ALWAYS,
    HOLD_CODES,
    HOLDER_ACTION_CODES,
    N_FIELDS,
    N_P,
    NEVER_HASTY,
    ONE_LEVEL,
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
    WE_DEFEND,
    WE_GUARD,
)
from simkit.systems.readiness.counts import (
    STEP_CAP,
    before_slots,
    flush_cycles,
    flush_cycles_small,
    flush_single,
    round_row,
)
from simkit.systems.readiness.rules import FIELD, RANK_BY_COUNTING, round_player
from simkit.systems.stream import STATE_WORDS, canonical_state, chance_threshold, round_start
from simkit.systems.support import ENTRY, njit, unmanaged, with_columns

HASTY_UP_TO = re.compile(schema.HASTY_UP_TO_PATTERN)
BATCH_ENTRIES = 65536  # counts-array entries per batch (rows x cycles)
COUNT_DTYPE = BATCH_DTYPE  # a count of one cycle, at most count_bound() (counting.batch_fits)
MAX_BATCH = 128
# flush's 16-bit copy of the first-action steps (counts.STEP_CAP): every step of a round
# is below the round's dice (at most MAX_COMBATANTS * MAX_READINESS)
assert MAX_COMBATANTS * schema.MAX_READINESS < STEP_CAP and MAX_BATCH < STEP_CAP
assert schema.MAX_READINESS < 32  # rules.rank_by_counting: a face's count in 5 bits
ACC_LIMIT = int(STEP_CAP) - MAX_BATCH  # flush's 16-bit acts_before counts stay below STEP_CAP


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
    plan: np.ndarray  # int64: every list the flush and round_row read (counts.H_*)
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

    @property
    def derived(self) -> np.ndarray:
        """The derived pair rows, int64 [4, d]: (kind, i, j or k, row), from the plan."""
        return counts.lists(self.plan, counts.H_DERIVED_KIND, 4)


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
    rows, plan = counts.plan(layout, frozenset(never))
    batch = 1 << (max(1, min(MAX_BATCH, BATCH_ENTRIES // rows)).bit_length() - 1)
    dice = int(params[P_DICE].sum())
    # validation's limits keep every count in range (tests/test_readiness_kernel.py)
    assert batch_fits(count_bound(n, dice))
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
        plan=plan,
        batch=batch,
        tree_levels=_levels(n),
        tree_width=n if n <= ONE_LEVEL else -(-n // int(GROUP)) * int(GROUP),
        # (rejoin: once per holder; run_broken: per action; R7 [rev 3]: per attack, no_effect
        # and a declined event per responder that answers only an attack that takes effect)
        event_bound=2 + 8 * n + 6 * dice + dice * _declining(params),
        dice=dice,
        may_hold=bool((params[P_HOLD] != HOLD_CODES["never"]).any()),
        lanes_off=lanes.why_not_lanes(params, frozenset(never), bool(scenario.fight_rounds)),
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
    """``slots`` [n, K] as uint64 rows of ``columns`` entries (K <= columns; the rest 0).
    A combatant's K slots are consecutive (rules.at reads ``CS[i, m]`` as ``CS[i, 0]``
    plus m rows)."""
    assert (slots == slots[:, :1] + np.arange(slots.shape[1])).all()
    table = np.zeros((slots.shape[0], columns), dtype=np.uint64)
    table[:, : slots.shape[1]] = slots
    return table


def _levels(n: int) -> int:
    """Levels of an R3 key tree over n leaves: one for up to ONE_LEVEL, else as many as
    leave at most GROUP nodes at the top."""
    if n <= ONE_LEVEL:
        return 1
    levels, size = 1, n
    while size > GROUP:
        size = -(-size // int(GROUP))
        levels += 1
    return levels


# --------------------------------------------------------------------------- the driver
# The players of the rules (rules.round_player): simulation with and without R5 code, and
# the trace's, which writes events.
play_holds = round_player(False, True)
play_holds_small = round_player(False, True, small=True)  # at most ONE_LEVEL combatants
play_plain = round_player(False, False)
play_traced = round_player(True, True)
# the lanes' scalar player (lanes_run.py): rounds of scenarios the lanes serve only
play_lean = round_player(False, False, True)
assert lanes.MAX_LANE_COMBATANTS <= RANK_BY_COUNTING  # (the lean player's T2 ranks)


def _drivers(may_hold, small=False):
    """The entry points, closing over ``may_hold`` (some combatant has a hold policy)
    and ``small`` (with holds, at most ONE_LEVEL combatants): ``run_rounds`` calls only
    the player and flush it needs (numba drops the other branches before compiling), so
    a scenario without holds never compiles the R5 code, and one with holds and at most
    ONE_LEVEL combatants not the code of bigger fights (``round_player``'s ``small``,
    ``counts.flusher``'s); ``trace_rounds`` the same for all."""

    @njit(**ENTRY)
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
        plan,
        s1,
        s2,
        sl,
        sx,
        tot,
        AB,
        FT,
        ACC,
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
        n = P.shape[0]
        sums = (s1, s2, sl, sx, tot, AB, ACC)
        pending = 0  # cycles flushed since ACC was last added to AB
        b = 0
        end = first + n_rounds
        for r in range(first, end):
            round_start(st, key, r)
            G[G_ROUND] = r
            if small:
                carry = play_holds_small(st, P, W, G, KT, T, GL, Y, np.uint64(b), CS, F, EV, carry)
            elif may_hold:
                carry = play_holds(st, P, W, G, KT, T, GL, Y, np.uint64(b), CS, F, EV, carry)
            else:
                carry = play_plain(st, P, W, G, KT, T, GL, Y, np.uint64(b), CS, F, EV, carry)
            L[b] += 1
            # the cycle ends (R8: a stalemate joins the next round), or the rounds do
            if carry == 0 or r == end - 1:
                b += 1
            if b == 1 << lb or (b > 0 and r == end - 1):  # a full batch, or the last
                # only the flush its scenarios can need (numba drops the other branch)
                if small:
                    flush_cycles_small(Y, F, FT, L, b, lb, CS, plan, sums)
                elif may_hold:
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
        before = before_slots(plan)
        for i in range(n):  # acts_before: 0 or 1 per cycle, so sum y^2 = sum y
            for j in range(n):
                slot = before[i, j]
                s1[slot] += AB[0, i, j]
                s2[slot] += AB[0, i, j]
                sl[slot] += AB[0, i, j] + AB[1, i, j]
        return carry

    @njit(**ENTRY)
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
        plan,
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
            round_row(Y, F, CS, plan, rows[k])
            carries[k] = carry
            state = canonical_state(st)
            for w in range(state.size):
                states[k, w] = state[w]
        return n_rounds, carry

    return run_rounds, trace_rounds


run_rounds, trace_rounds = _drivers(True)
run_rounds_small, _ = _drivers(True, small=True)
run_rounds_plain, _ = _drivers(False)


def _rows_driver(may_hold):
    """``rows_rounds``: ``trace_rounds`` without events (the simulation's player), for
    ``rows`` (R8a fights: engine.fights plays every round's count row)."""

    @njit(**ENTRY)
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
        plan,
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
            round_row(Y, F, CS, plan, rows[k])
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
    drive = run_chunk_driver(compiled)
    key4 = np.ascontiguousarray(key[:4], dtype=np.uint64)
    return int(drive(key4, first, n_rounds, int(carry), *driver_arguments(compiled, sums)))


def run_chunk_driver(compiled: Compiled):
    """The scalar driver of ``run_chunk`` for ``compiled``: without R5 code when no
    combatant holds; with holds, the small driver for at most ONE_LEVEL combatants (a
    cold start compiles only the code its size can reach), else the general one."""
    if not compiled.may_hold:
        return run_rounds_plain
    return run_rounds_small if compiled.n <= ONE_LEVEL else run_rounds


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
        compiled.plan,
        sums.s1,
        sums.s2,
        sums.sl,
        sums.sx,
        sums.tot,
        np.zeros((2, n, n), dtype=np.int64),
        np.zeros((compiled.batch + 1) * n, dtype=np.int16),  # flush: F transposed
        np.zeros(n * n, dtype=np.int16),  # flush: acts_before not yet in AB (run_rounds)
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
            compiled.plan,
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
        compiled.plan,
        out,
        carries,
    )
    return out, carries
