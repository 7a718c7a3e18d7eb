"""The lanes' flush (lanes_run.py): a block's sums straight from the packed counts.

``play_block_packed`` leaves each combatant's counts of a lane in four packed 32-bit
words of 8-bit fields (``lanes.WORD_A``'s fields 0 .. 3 and 4 .. 7, ``lanes.WORD_B``'s
0 .. 3 and 4 .. 5: the lanes' ``WA``, ``WA2``, ``WB``, ``WB2``) and its first step
(NONE32 for none).  The block is flushed from the words themselves: every value a row of
the kernel's counts array ``Y`` would hold is a field of a per-lane word of the scratch
``V`` (uint32: 16 lanes an AVX-512 instruction), and the sums (s1, s2, sl, sx, tot,
actions_dist and acts_before) are added along the lanes from those fields.  Every cycle
is one round (the lanes never serve holds), so ``sl`` is ``s1`` and every L is 1; a
block's sum of a field, of its squares or of its products with another is below
LANES * 255 * 255 < 2**32, and the sums are int64, so the order of the additions changes
no bit: the sums are those of ``counts.flush_single`` exactly
(tests/test_readiness_lanes.py).

The words of ``V`` (``LANES`` entries each, ``word * LANES + lane``):

* per combatant i, words ``5 i .. 5 i + 4`` (``WORDS``): ``A`` and ``A2``, the lane's
  ``WA`` and ``WA2`` as they are; ``X``: hasty_ge.1 .. 4 (fields 0 .. 3, cumulative: a
  hasty defense of scale k is in hasty_ge.1 .. k; hasty_defenses is hasty_ge.1);
  ``X2``: hasty_ge.5 (field 0), hits (1), hasty_scale_total (2, the sum of hasty_ge.1 ..
  5) and attacks_received (3, undefended + defended + hasty_only); ``Z``: no_action
  (field 0: the lane's actions are 0), as ``counts.derived_rows`` derives them;
* per group or side, the same five words, each field the sum of its members' fields (a
  probability count's field, "any member": the OR of theirs; ``aggregate_batch``); every
  sum fits its 8 bits: a group's count of a round is at most the round's dice (at most
  ``lanes.MAX_LANE_DICE``), its hasty_scale_total at most 5 times that;
* one word per pair row outside the count rows (``kernel.Compiled.derived``: acts_before
  or an actions_dist slot of a ratio pair), the value in field 0.

``flush_plan`` reads the kernel's flush plan (``kernel.Compiled.plan``, its lists
``ranges``, ``agg_sum``, ``agg_any``, ``derived``, ``pair_rows``, ``dist_offsets``
through ``counts.H_*``: the one place here that does) and says for every
row where its value is (word, shift); ``flush_block`` adds the block to the sums.
"""

from __future__ import annotations

import numpy as np

from simkit.systems.readiness import counts, lanes
from simkit.systems.readiness.codes import (
    ATTACKS_RECEIVED,
    COUNTS,
    HASTY_DEFENSES,
    HASTY_GE_1,
    HASTY_SCALE_TOTAL,
    HITS,
    NO_ACTION,
    SCENARIO_COUNTS,
)
from simkit.systems.support import njit

LANES = lanes.LANES
assert LANES * 255 < 1 << 16, "word_sums adds two 8-bit fields of LANES lanes in 16 bits"
ULANES = np.uint64(LANES)
WORDS = 5  # per combatant and per group or side: A, A2, X, X2, Z (32 bits each)
W_A, W_A2, W_X, W_X2, W_Z = 0, 1, 2, 3, 4
X_HITS, X_TOTAL, X_RECEIVED = 8, 16, 24  # the fields of X2 after hasty_ge.5
FIELDS = 4  # 8-bit fields a word
DERIVED_BEFORE = counts.DERIVED_BEFORE


def _places() -> dict[int, tuple[int, int]]:
    """Count index -> (word, shift) of its field in a combatant's words."""
    out = {int(k): (W_A + f // FIELDS, 8 * (f % FIELDS)) for f, k in enumerate(lanes.WORD_A)}
    out.update({int(HASTY_GE_1) + s: (W_X + s // FIELDS, 8 * (s % FIELDS)) for s in range(5)})
    out[int(HITS)] = (W_X2, X_HITS)
    out[int(HASTY_DEFENSES)] = (W_X, 0)
    out[int(HASTY_SCALE_TOTAL)] = (W_X2, X_TOTAL)
    out[int(ATTACKS_RECEIVED)] = (W_X2, X_RECEIVED)
    out[int(NO_ACTION)] = (W_Z, 0)
    return out


PLACES = _places()


def flush_plan(compiled) -> tuple:
    """``flush_block``'s plan for a scenario the lanes serve (``kernel.Compiled``):
    ``(UNITS, EMIT, PAIRS, NEAR, PARTNER, DERIVED, dist_offsets, summed, words)``.

    ``UNITS`` [3, u] (word, member word, any-mask): a group's or side's word, built
    from its members' in order (the first copied); ``EMIT`` [4, e] (word, shift, slot,
    1 if 0 or 1 in a round): every row the scalar flush sums (``ranges``); ``PAIRS``
    [5, p] (word a, shift a, word b, shift b, sx index) of every ratio pair whose rows
    can both be non-zero, but for those in ``NEAR`` [2, q] (the sum's place among the
    words' sums, sx index): the pairs of a summed word's field with the word's
    ``PARTNER`` field (-1: none), summed in the word's pass; ``DERIVED`` [4, d] (kind,
    i, j, word); ``summed``: the words whose fields the flush sums (those of the
    combatants, groups and sides); ``words``: the words of ``V`` (``scratch_size``: its
    entries)."""
    for seen, plan in _PLANS:
        if seen is compiled:
            return plan
    # the kernel's flush plan (counts.H_*), read here only
    ranges = counts.lists(compiled.plan, counts.RANGES, 3).tolist()
    agg_sum = counts.lists(compiled.plan, counts.AGG_SUM, 2).tolist()
    agg_any = counts.lists(compiled.plan, counts.AGG_ANY, 2).tolist()
    derived_table = counts.lists(compiled.plan, counts.H_DERIVED_KIND, 4).tolist()
    pair_rows = counts.lists(compiled.plan, counts.PAIRS, 2).tolist()
    dist_offsets = counts.lists(compiled.plan, counts.H_DIST).ravel().copy()
    layout = compiled.layout
    n = compiled.n
    K = len(COUNTS)
    n_counts = layout.before_offset
    first_unit = n_counts + len(SCENARIO_COUNTS)
    aggregated = layout.aggregated
    per_unit = max(1, len(aggregated))
    unit_count = [COUNTS.index(c) for c in aggregated]
    slots = compiled.count_slots.tolist()
    slot_of = {int(slots[i][k]): (i, k) for i in range(n) for k in range(K)}
    unit_rows = layout.size - layout.unit_offset
    n_units = unit_rows // per_unit
    base_unit = WORDS * n
    base_derived = base_unit + WORDS * n_units
    derived_rows = {int(r): d for d, r in enumerate(derived_table[3])}

    def place(row: int) -> tuple[int, int] | None:
        """(word, shift) of a row's value; None: 0 in every round the lanes play."""
        if row < n_counts:
            i, k = slot_of[row]
            if k not in PLACES:
                return None
            w, s = PLACES[k]
            return WORDS * i + w, s
        if row < first_unit:  # a scenario count: only R8's stalemate, never without holds
            return None
        if row < first_unit + unit_rows:
            u, a = divmod(row - first_unit, per_unit)
            k = unit_count[a]
            if k not in PLACES:
                return None
            w, s = PLACES[k]
            return base_unit + WORDS * u + w, s
        assert row in derived_rows, f"row {row} is no row of the plan"
        return base_derived + derived_rows[row], 0

    members: dict[int, dict[int, list[int]]] = {}  # unit word -> shift -> member words
    any_mask: dict[int, int] = {}
    for agg, anyone in ((agg_sum, False), (agg_any, True)):
        for src_row, dst_row in zip(*agg, strict=True):
            src, dst = place(src_row), place(dst_row)
            if src is None or dst is None:
                continue
            listed = members.setdefault(dst[0], {}).setdefault(dst[1], [])
            if src[0] not in listed:  # (hasty_defenses and hasty_ge.1: one field)
                listed.append(src[0])
            if anyone:
                any_mask[dst[0]] = any_mask.get(dst[0], 0) | 255 << dst[1]
    units = []
    for word in sorted(members):
        lists = {tuple(ms) for ms in members[word].values()}
        assert len(lists) == 1, "a group's or side's fields of one word have the same members"
        for m in lists.pop():
            units.append((word, m, any_mask.get(word, 0)))
    emit = []
    for row, slot, binary in zip(*ranges, strict=True):
        at = place(row)
        assert at is not None, "the lanes carry every count the scalar flush sums"
        emit.append((at[0], at[1], slot, binary))
    pairs = []
    for k, (row_a, row_b) in enumerate(zip(*pair_rows, strict=True)):
        a, b = place(row_a), place(row_b)
        if a is not None and b is not None:
            pairs.append((a[0], a[1], b[0], b[1], k))
    # a summed word's partner: the field most of the pairs inside the word share (the
    # others' products with it summed in the word's pass: ``word_sums``)
    partner = [-1] * base_derived
    shares: dict[tuple[int, int], int] = {}
    for wa, sa, wb, sb, _ in pairs:
        if wa == wb and wa < base_derived:
            for s in {sa, sb}:
                shares[wa, s] = shares.get((wa, s), 0) + 1
    for (w, s), count in sorted(shares.items()):
        if count >= PARTNER_PAIRS and (partner[w] < 0 or count > shares[w, partner[w]]):
            partner[w] = s
    near, far = [], []
    for wa, sa, wb, sb, k in pairs:
        p = partner[wa] if wa == wb and wa < base_derived else -1
        if p >= 0 and p in (sa, sb):
            other = sb if sa == p else sa
            near.append((SUMS * wa + 2 * FIELDS + (other >> 3), k))
        else:
            far.append((wa, sa, wb, sb, k))
    derived = [
        (kind, i, j, base_derived + d)
        for d, (kind, i, j, _) in enumerate(zip(*derived_table, strict=True))
    ]

    def table(rows: list, width: int) -> np.ndarray:
        return np.ascontiguousarray(np.array(rows, dtype=np.int64).reshape(-1, width).T)

    plan = (
        table(units, 3),
        table(emit, 4),
        table(far, 5),
        table(near, 2),
        np.array(partner, dtype=np.int64),
        table(derived, 4),
        dist_offsets,
        base_derived,
        base_derived + len(derived),
    )
    _PLANS.insert(0, (compiled, plan))
    del _PLANS[PLANS_KEPT:]
    return plan


PLANS_KEPT = 4  # the plans of the last scenarios (a run calls flush_plan once a chunk)
_PLANS: list = []


SUMS = 3 * FIELDS  # a summed word's sums in the scratch: its fields', squares', products
PARTNER_PAIRS = 3  # pairs inside a word that make one of its fields the word's partner


def scratch_size(plan: tuple) -> int:
    """Entries of ``flush_block``'s scratch ``V``: the words, then SUMS a summed word."""
    return plan[-1] * LANES + SUMS * plan[-2]


INNER = {"cache": False, "nogil": True, "no_cpython_wrapper": True, "no_cfunc_wrapper": True}
INNER["link_only"] = True  # no machine code of their own (support.njit): the driver emits it
HOT = {**INNER, "error_model": "numpy"}
U = np.uint32
BYTE = U(255)
SPREAD4 = U(0x01010101)  # a byte into every field; the sum of fields 0 .. 3 into field 3


@njit(**HOT)
def block_words(n, WA, WA2, WB, WB2, FIRST, V, UNITS, DERIVED):
    """Fill ``V``'s words (module docstring) from a block's packed counts."""
    for i in range(np.uint64(n)):
        row = i * ULANES
        a = np.uint64(WORDS) * row
        a2 = a + ULANES
        x = a2 + ULANES
        x2 = x + ULANES
        z = x2 + ULANES
        for b in range(ULANES):
            wa = WA[row + b]
            wa2 = WA2[row + b]
            raw = WB[row + b]  # hasty_ge.1 .. 4 as counted (scale exactly k)
            wb2 = WB2[row + b]
            r5 = U(wb2 & BYTE)
            ge = U(raw + U(raw >> U(8)) + U(raw >> U(16)) + U(raw >> U(24)) + U(r5 * SPREAD4))
            total = U(U(U(ge * SPREAD4) >> U(24)) + r5)
            received = U(U(U(wa2 >> U(8)) & BYTE) + U(U(wa2 >> U(16)) & BYTE) + U(wa2 >> U(24)))
            V[a + b] = wa
            V[a2 + b] = wa2
            V[x + b] = ge
            V[x2 + b] = U(
                r5 | U(wb2 & U(0xFF00)) | U(total << U(X_TOTAL)) | U(received << U(X_RECEIVED))
            )
            V[z + b] = U((wa & BYTE) == U(0))
    for e in range(UNITS.shape[1]):
        out = np.uint64(UNITS[0, e]) * ULANES
        src = np.uint64(UNITS[1, e]) * ULANES
        am = U(UNITS[2, e])
        sm = U(~am)
        if e == 0 or UNITS[0, e - 1] != UNITS[0, e]:  # the unit's first member
            for b in range(ULANES):
                V[out + b] = V[src + b]
            continue
        for b in range(ULANES):
            u = V[out + b]
            v = V[src + b]
            V[out + b] = U(U(U(u + v) & sm) | U(U(u | v) & am))
    for d in range(DERIVED.shape[1]):
        out = np.uint64(DERIVED[3, d]) * ULANES
        i = np.uint64(DERIVED[1, d]) * ULANES
        j = DERIVED[2, d]
        if DERIVED[0, d] == DERIVED_BEFORE:
            other = np.uint64(j) * ULANES
            for b in range(ULANES):
                V[out + b] = U(FIRST[i + b] < FIRST[other + b])
        else:  # actions_dist.j: the lane's actions are j (one-round cycles)
            acts = np.uint64(WORDS) * i
            uj = U(j)
            for b in range(ULANES):
                V[out + b] = U(U(V[acts + b] & BYTE) == uj)


SPREAD16 = U(0x00FF00FF)  # fields 0 and 2 in 16 bits each
SIXTEEN = U(0xFFFF)


@njit(**HOT)
def word_sums(V, w, out, p):
    """The sums along the lanes of word ``w``'s fields (``V[out + f]``), of their squares
    (``V[out + 4 + f]``) and, if ``p`` >= 0, of their products with the field at shift
    ``p`` (``V[out + 8 + f]``), f = 0 .. 3 (every sum of a block fits 32 bits: at most
    LANES * 255 * 255).  The fields' sums in one pass, two fields to a 32-bit sum in 16
    bits each (at most LANES * 255 < 2**16); a Z word (only field 0, 0 or 1) by one sum."""
    base = np.uint64(w) * ULANES
    zero = U(0)
    if w % WORDS == W_Z:
        a = zero
        for b in range(ULANES):
            a = U(a + U(V[base + b] & BYTE))
        for f in range(SUMS):
            V[out + np.uint64(f)] = zero
        V[out] = a
        V[out + np.uint64(FIELDS)] = a
        V[out + np.uint64(2 * FIELDS)] = a
        return
    lo = zero
    hi = zero
    q0 = q1 = q2 = q3 = zero
    c0 = c1 = c2 = c3 = zero
    if p < 0:
        for b in range(ULANES):
            v = V[base + b]
            lo = U(lo + U(v & SPREAD16))
            hi = U(hi + U(U(v >> U(8)) & SPREAD16))
            x0 = U(v & BYTE)
            x1 = U(U(v >> U(8)) & BYTE)
            x2 = U(U(v >> U(16)) & BYTE)
            x3 = U(v >> U(24))
            q0 = U(q0 + U(x0 * x0))
            q1 = U(q1 + U(x1 * x1))
            q2 = U(q2 + U(x2 * x2))
            q3 = U(q3 + U(x3 * x3))
    else:
        up = U(p)
        for b in range(ULANES):
            v = V[base + b]
            lo = U(lo + U(v & SPREAD16))
            hi = U(hi + U(U(v >> U(8)) & SPREAD16))
            y = U(U(v >> up) & BYTE)
            x0 = U(v & BYTE)
            x1 = U(U(v >> U(8)) & BYTE)
            x2 = U(U(v >> U(16)) & BYTE)
            x3 = U(v >> U(24))
            q0 = U(q0 + U(x0 * x0))
            q1 = U(q1 + U(x1 * x1))
            q2 = U(q2 + U(x2 * x2))
            q3 = U(q3 + U(x3 * x3))
            c0 = U(c0 + U(x0 * y))
            c1 = U(c1 + U(x1 * y))
            c2 = U(c2 + U(x2 * y))
            c3 = U(c3 + U(x3 * y))
    V[out] = U(lo & SIXTEEN)
    V[out + np.uint64(1)] = U(hi & SIXTEEN)
    V[out + np.uint64(2)] = U(lo >> U(16))
    V[out + np.uint64(3)] = U(hi >> U(16))
    V[out + np.uint64(4)] = q0
    V[out + np.uint64(5)] = q1
    V[out + np.uint64(6)] = q2
    V[out + np.uint64(7)] = q3
    V[out + np.uint64(8)] = c0
    V[out + np.uint64(9)] = c1
    V[out + np.uint64(10)] = c2
    V[out + np.uint64(11)] = c3


@njit(**INNER)
def pad_lanes(n, nb, FIRST, V, words):
    """Lanes ``nb`` .. LANES - 1 of a short last block hold no round: their words of
    ``V`` zeroed and their first steps NONE32, so that they add nothing to a sum but to
    actions_dist's slot 0 (actions 0: ``flush_block`` takes them off)."""
    for w in range(np.uint64(words)):
        base = w * ULANES
        for b in range(np.uint64(nb), ULANES):
            V[base + b] = U(0)
    for i in range(np.uint64(n)):
        row = i * ULANES
        for b in range(np.uint64(nb), ULANES):
            FIRST[row + b] = lanes.NONE32


@njit(**HOT)
def flush_block(n, nb, WA, WA2, WB, WB2, FIRST, V, plan, s1, s2, sl, sx, tot, AB):
    """Add a block of ``nb`` (at most ``LANES``) one-round cycles to the sums from its
    packed counts (``WA``, ``WA2``, ``WB``, ``WB2``, ``FIRST`` [n, LANES], uint32, as
    ``play_block_packed`` leaves them, the rounds in lanes 0 .. nb - 1, the others padding
    (``pad_lanes``); ``V`` the words' scratch; ``plan``: ``flush_plan``'s), as
    ``counts.flush_single`` adds the same cycles written into the counts array;
    ``AB[0, i, j]`` counts acts_before (the driver adds it to the sums)."""
    UNITS, EMIT, PAIRS, NEAR, PARTNER, DERIVED, dist_off, summed, words = plan
    block_words(n, WA, WA2, WB, WB2, FIRST, V, UNITS, DERIVED)
    pad = U(LANES - nb)
    if nb < LANES:
        pad_lanes(n, nb, FIRST, V, words)
    at = np.uint64(words) * ULANES  # the words' sums after the words: SUMS entries a word
    for w in range(summed):
        word_sums(V, w, at + np.uint64(SUMS * w), PARTNER[w])
    for e in range(EMIT.shape[1]):
        slot = EMIT[2, e]
        f = at + np.uint64(SUMS * EMIT[0, e] + (EMIT[1, e] >> 3))
        a1 = np.int64(V[f])
        s1[slot] += a1
        s2[slot] += a1 if EMIT[3, e] != 0 else np.int64(V[f + np.uint64(FIELDS)])  # x^2 = x
        sl[slot] += a1
    for k in range(PAIRS.shape[1]):
        wa = np.uint64(PAIRS[0, k]) * ULANES
        sa = U(PAIRS[1, k])
        wb = np.uint64(PAIRS[2, k]) * ULANES
        sb = U(PAIRS[3, k])
        acc = U(0)
        for b in range(ULANES):
            acc = U(acc + U(U(U(V[wa + b] >> sa) & BYTE) * U(U(V[wb + b] >> sb) & BYTE)))
        sx[PAIRS[4, k]] += np.int64(acc)
    for k in range(NEAR.shape[1]):  # pairs with a word's partner field (``word_sums``)
        sx[NEAR[1, k]] += np.int64(V[at + np.uint64(NEAR[0, k])])
    for i in range(n):
        acts = np.uint64(WORDS * i) * ULANES  # actions: field 0 of A
        d = dist_off[i]
        for k in range(dist_off[i + 1] - d):  # actions_dist: the cycle's actions
            hits = U(0)
            uk = U(k)
            for b in range(ULANES):
                hits = U(hits + U(U(V[acts + b] & BYTE) == uk))
            if k == 0:  # padding lanes: actions 0
                hits = U(hits - pad)
            s1[d + k] += np.int64(hits)
            s2[d + k] += np.int64(hits)
            sl[d + k] += np.int64(hits)
        fi = np.uint64(i) * ULANES
        for j in range(n):  # acts_before: i's first action strictly before j's
            if j == i:
                continue
            fj = np.uint64(j) * ULANES
            before = U(0)
            for b in range(ULANES):
                before = U(before + U(FIRST[fi + b] < FIRST[fj + b]))
            AB[0, i, j] += np.int64(before)
    tot[0] += nb
    tot[1] += nb
    tot[2] += nb


# inlined by numba into its caller, as ``lanes.play_block`` is (docs/performance.md)
@njit(**{**INNER, "error_model": "numpy"}, inline="always")
def play_block_packed(
    key, r0, n, order, C, W64, WD, BY, S, POOL, RK, FIRST, ATT, WA, WA2, WB, WB2, KEYS,
    SA, SA2, SB, SB2, SF,
):  # fmt: skip
    """``lanes.play_block`` leaving the block's packed counts and first steps in ``SA``,
    ``SA2``, ``SB``, ``SB2``, ``SF`` [n, LANES] (uint32, as ``lanes.play_passes`` holds
    them: NONE32 for no first step; every lane in its own place: the rounds played alone after
    ``lanes.compact`` put back into theirs) instead of the counts array; ``S``'s row OKS
    as there.  Returns the passes played."""
    lanes.start_block(key, r0, n, C, W64, WD, BY, S, POOL, RK, FIRST, ATT, WA, WA2, WB, WB2, KEYS)
    passes, left = lanes.play_passes(
        n, order, ULANES, lanes.FIRST_PASSES, C, WD, S, POOL, RK, FIRST, ATT, WA, WA2,
        WB, WB2, KEYS,
    )  # fmt: skip
    for m in range(np.uint64(n) * ULANES):
        SA[m] = WA[m]
        SA2[m] = WA2[m]
        SB[m] = WB[m]
        SB2[m] = WB2[m]
        SF[m] = FIRST[m]
    for b in range(ULANES):
        S[lanes.OKS + b] = S[lanes.ROW0 + b]
    if left == 0:
        return passes
    m, width = lanes.compact(n, S, WD, POOL, RK, FIRST, ATT, WA, WA2, WB, WB2, KEYS)
    more, _ = lanes.play_passes(
        n, order, width, lanes.MAX_PASSES, C, WD, S, POOL, RK, FIRST, ATT, WA, WA2, WB,
        WB2, KEYS,
    )  # fmt: skip
    for j in range(m):
        b = np.uint64(S[lanes.ORIG + j])
        S[lanes.OKS + b] = S[lanes.ROW0 + j]
        for i in range(np.uint64(n)):
            row = i * ULANES
            SA[row + b] = WA[row + j]
            SA2[row + b] = WA2[row + j]
            SB[row + b] = WB[row + j]
            SB2[row + b] = WB2[row + j]
            SF[row + b] = FIRST[row + j]
    return passes + more


@njit(**INNER)
def pack_column(n, CS, Y, F, col, b, SA, SA2, SB, SB2, SF):
    """Lane b's round as the scalar player wrote it into column ``col`` of ``Y`` (and
    ``F``) packed into ``SA``, ``SA2``, ``SB``, ``SB2``, ``SF`` as the lanes pack theirs;
    the column then zeroed (``lanes.clear_column``)."""
    ub = np.uint64(b)
    uc = np.uint64(col)
    for i in range(n):
        row = np.uint64(i) * ULANES
        wa = np.int64(0)
        for k in range(lanes.WORD_A.size):
            wa |= np.int64(Y[CS[i, lanes.WORD_A[k]] + uc]) << (8 * k)
        wb = np.int64(0)
        for k in range(lanes.WORD_B.size):
            wb |= np.int64(Y[CS[i, lanes.WORD_B[k]] + uc]) << (8 * k)
        SA[row + ub] = U(wa & 0xFFFFFFFF)
        SA2[row + ub] = U(wa >> 32)
        SB[row + ub] = U(wb & 0xFFFFFFFF)
        SB2[row + ub] = U(wb >> 32)
        SF[row + ub] = U(F[i, col]) if F[i, col] != lanes.NO_STEP else lanes.NONE32
    lanes.clear_column(n, CS, Y, F, col)
