"""simkit.systems.counting, the counting engine of every kernel, tested on its own.

Each flush against a plain Python sum of the rows it is given (and against
``metrics.flush_cycle``, the definition of the sums); the outcome histogram against a
``Counter`` while it grows; the fast paths' reasons by name, on the benchmark and
example scenarios and on scenarios made to fail one condition each.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from numba import njit

from simkit import engine
from simkit.metrics import Sums, flush_cycle
from simkit.metrics.layout import OP_SUM
from simkit.scenario import load_scenario, scenario_from_dict
from simkit.systems import counting
from simkit.systems.base import MAX_COMBATANTS
from simkit.systems.perception import kernel as perception
from simkit.systems.perception import lanes as perception_lanes
from simkit.systems.readiness import counts as readiness_counts
from simkit.systems.readiness import kernel as readiness
from simkit.systems.readiness import schema as readiness_schema
from simkit.systems.vtm import kernel as vtm
from simkit.systems.vtm import lanes as vtm_lanes

ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- histogram
def _held(t: np.ndarray) -> dict[int, int]:
    """The (code, rounds) pairs a histogram holds, read from its entries."""
    cap = int(counting.histogram_capacity(t))
    entries = t[counting.HISTOGRAM_HEADER : counting.HISTOGRAM_HEADER + 2 * cap]
    codes, rounds = entries[::2], entries[1::2]
    held = codes != counting.HISTOGRAM_EMPTY
    assert (rounds[~held] == 0).all()
    return dict(zip(codes[held].tolist(), rounds[held].tolist(), strict=True))


def test_histogram_grows_and_counts_every_code():
    """From 4 entries to 64: twice the entries whenever more than half are held, every
    code's rounds those of a Counter at every step; full (True) only beyond half of 64."""
    t = counting.new_histogram(2, 6)
    assert counting.histogram_capacity(t) == 4 and counting.histogram_used(t) == 0
    rng = random.Random("histogram")
    expected: Counter[int] = Counter()
    capacities = set()
    while True:
        code = (
            rng.randrange(1 << 31)
            if rng.random() < 0.6 or not expected
            else rng.choice(list(expected))
        )
        count = rng.randrange(1, 5)
        new = code not in expected
        expected[code] += count
        full = counting.histogram_add(t, code, count)
        cap = int(counting.histogram_capacity(t))
        capacities.add(cap)
        assert counting.histogram_used(t) == len(expected)
        assert _held(t) == dict(expected)
        assert 2 * len(expected) <= cap or cap == 64  # grown before it is over half full
        if full:
            assert new and cap == 64 and len(expected) == 33
            break
    assert capacities == {4, 8, 16, 32, 64}
    counting.histogram_clear(t)
    assert counting.histogram_used(t) == 0 and _held(t) == {}
    assert counting.histogram_capacity(t) == 64  # the capacity stays


def test_histogram_keeps_codes_that_collide():
    """Codes that hash to the same entry (open addressing: the next free one) and code 0."""
    t = counting.new_histogram(4, 4)
    codes = [0, 16 << 16, 32 << 16, 1, 1 << 30]
    for k, code in enumerate(codes):
        assert not counting.histogram_add(t, code, k + 1)
    assert _held(t) == {code: k + 1 for k, code in enumerate(codes)}


def test_histogram_kind_decides_by_the_size_of_the_code_space():
    assert counting.histogram_kind(1) == counting.DENSE
    assert counting.histogram_kind(counting.DENSE_MAX) == counting.DENSE
    assert counting.histogram_kind(counting.DENSE_MAX + 1) == counting.HASHED
    h = counting.new_dense_histogram(3, 5, counting.DENSE_MAX)  # three code spaces, one vector
    assert h.dtype == np.int64 and h.size == 8 + counting.DENSE_MAX and not h.any()
    with pytest.raises(ValueError, match="DENSE_MAX"):
        counting.new_dense_histogram(4, counting.DENSE_MAX + 1)


def test_dense_add_counts_every_code_at_its_index():
    h = counting.new_dense_histogram(10)
    rng = random.Random("dense")
    expected: Counter[int] = Counter()
    for _ in range(200):
        code, count = rng.randrange(10), rng.randrange(1, 4)
        counting.dense_add(h, code, count)
        expected[code] += count
    assert h.tolist() == [expected[c] for c in range(10)]


@njit
def _toy_decode(code, ctx, y):
    """A decoder as a kernel writes one: the round of ``code`` into ``y`` from ``ctx``."""
    table = ctx[0]
    y[0] = code % 3
    y[1] = code // 3
    y[2] = table[code % table.size]
    y[3] = y[0] * y[1]


_EXPAND = counting.expander(_toy_decode)


@pytest.mark.parametrize("kind", [counting.DENSE, counting.HASHED])
def test_expansion_is_the_plain_sum_of_every_round(kind):
    """Rounds counted as codes in either histogram, expanded through a decoder: the
    plain Python sums of every round's row (of the slots asked for, and the cross sums);
    the histogram is empty after."""
    table = np.array([5, 0, 2, 7], np.int64)
    rng = random.Random(kind)
    codes = [rng.randrange(24) for _ in range(500)]
    if kind == counting.DENSE:
        h = counting.new_dense_histogram(24)
        for code in codes:
            counting.dense_add(h, code, 1)
    else:
        h = counting.new_histogram(2, 6)
        for code in codes:
            assert not counting.histogram_add(h, code, 1)
    slots = np.array([0, 2, 3], np.int64)  # slot 1 is summed elsewhere
    pa, pb = np.array([0, 1], np.int64), np.array([2, 3], np.int64)
    got = _zeros(4, 2)
    dense = kind == counting.DENSE
    _EXPAND(h, dense, (table,), np.zeros(4, np.int64), slots, *got[:4], pa, pb, got[4])
    rows = [[c % 3, c // 3, int(table[c % 4]), (c % 3) * (c // 3)] for c in codes]
    s1, s2, sl, sx, tot = _plain_sums(rows, [1] * len(rows), [(0, 2), (1, 3)])
    keep = lambda xs: [x if m in (0, 2, 3) else 0 for m, x in enumerate(xs)]  # noqa: E731
    assert got[0].tolist() == keep(s1) and got[1].tolist() == keep(s2)
    assert got[2].tolist() == keep(sl) and got[3].tolist() == sx and got[4].tolist() == tot
    if kind == counting.DENSE:
        assert not h.any()
    else:
        assert counting.histogram_used(h) == 0 and _held(h) == {}


# --------------------------------------------------------------------------- flushes
def _plain_sums(rows, lengths, pairs, weights=None):
    """sum y, sum y^2, sum y L per slot, cross sums, (C, sum L, sum L^2) in plain Python."""
    size = len(rows[0])
    s1, s2, sl = [0] * size, [0] * size, [0] * size
    sx = [0] * len(pairs)
    tot = [0, 0, 0]
    for r, row in enumerate(rows):
        w = 1 if weights is None else weights[r]
        length = lengths[r]
        for m, v in enumerate(row):
            s1[m] += w * v
            s2[m] += w * v * v
            sl[m] += w * v * length
        for k, (a, b) in enumerate(pairs):
            sx[k] += w * row[a] * row[b]
        tot[0] += w
        tot[1] += w * length
        tot[2] += w * length * length
    return s1, s2, sl, sx, tot


# The flushes are compiled without Python wrappers (counting.COLD: only kernels call
# them); the tests call them through these.
@njit
def _flush_weighted(y, w, s1, s2, sl, sx, pa, pb, tot):
    counting.flush_weighted(y, w, s1, s2, sl, sx, pa, pb, tot)


@njit
def _aggregate_batch(Y, nb, lb, agg_sum, agg_any):
    counting.aggregate_batch(Y, nb, lb, agg_sum, agg_any)


@njit
def _flush_batch(Y, L, nb, lb, single, ranges, pair_rows, s1, s2, sl, sx, tot):
    counting.flush_batch(Y, L, nb, lb, single, ranges, pair_rows, s1, s2, sl, sx, tot)


@njit
def _clear_batch(Y, L, nb):
    counting.clear_batch(Y, L, nb)


def _zeros(size, pairs):
    return [np.zeros(k, np.int64) for k in (size, size, size, pairs, 3)]


def test_flush_weighted_is_flush_cycle_w_times():
    rng = np.random.default_rng(3)
    size, pairs = 9, 4
    pa = rng.integers(0, size, pairs).astype(np.int64)
    pb = rng.integers(0, size, pairs).astype(np.int64)
    weighted, repeated = _zeros(size, pairs), _zeros(size, pairs)
    rows, weights = [], []
    for _ in range(20):
        y = rng.integers(0, 7, size).astype(np.int64)
        w = int(rng.integers(1, 50))
        _flush_weighted(y, w, *weighted[:4], pa, pb, weighted[4])
        for _ in range(w):
            flush_cycle(y.copy(), 1, *repeated[:4], pa, pb, repeated[4])
        rows.append(y.tolist())
        weights.append(w)
    plain = _plain_sums(rows, [1] * len(rows), list(zip(pa, pb, strict=True)), weights)
    for got, again, want in zip(weighted, repeated, plain, strict=True):
        assert got.tolist() == again.tolist() == list(want)


@pytest.mark.parametrize("single", [True, False])
def test_batch_flush_is_the_plain_sum_of_its_cycles(single):
    """A batch of cycles (rows x cycles, ``1 << lb`` a row), its group rows filled by
    aggregate_batch (sums and "any member"), flushed by flush_batch: the plain Python
    sums of each cycle's complete row; clear_batch zeroes the array and the lengths."""
    rng = np.random.default_rng(11 if single else 12)
    lb, nb, counted = 3, 6, 5  # 8 cycles a row, 6 of them used; rows 0-4 counted, 5-6 units
    rows = counted + 2
    Y = np.zeros(rows << lb, np.uint16)
    for r in range(counted):
        for b in range(nb):
            Y[(r << lb) + b] = rng.integers(0, 2) if r < 2 else rng.integers(0, 40)
    L = np.zeros(1 << lb, np.int64)
    L[:nb] = 1 if single else rng.integers(1, 4, nb)
    agg_sum = np.array([[2, 3], [5, 5]], np.int64)  # row 5: rows 2 + 3
    agg_any = np.array([[0, 1], [6, 6]], np.int64)  # row 6: row 0 or row 1
    # every row summed into slot 10 + row (rows 0, 1 and 6 are 0 or 1 in a round)
    ranges = np.array(
        [list(range(rows)), [10 + r for r in range(rows)], [1, 1, 0, 0, 0, 0, 1]], np.int64
    )
    pair_rows = np.array([[0, 2, 5], [6, 3, 5]], np.int64)
    expect_rows = []
    for b in range(nb):
        y = [int(Y[(r << lb) + b]) for r in range(rows)]
        y[5] = y[2] + y[3]
        y[6] = max(y[0], y[1])
        expect_rows.append(y)
    lengths = L[:nb].tolist()
    s1, s2, sl, sx, tot = _zeros(10 + rows, pair_rows.shape[1])
    _aggregate_batch(Y, nb, lb, agg_sum, agg_any)
    _flush_batch(Y, L, nb, lb, single, ranges, pair_rows, s1, s2, sl, sx, tot)
    plain = _plain_sums(expect_rows, lengths, list(zip(*pair_rows.tolist(), strict=True)))
    assert s1[10:].tolist() == plain[0] and s2[10:].tolist() == plain[1]
    assert sl[10:].tolist() == plain[2] and sx.tolist() == plain[3] and tot.tolist() == plain[4]
    assert not s1[:10].any()
    _clear_batch(Y, L, nb)
    assert not Y.any() and not L.any()


def test_close_chunk_fills_in_constant_alias_and_binary_slots():
    """A kernel sums only the varying slots (s2 of the non-binary ones, the pairs of two
    varying slots); close_chunk gives the sums of flush_cycle over the complete rows."""
    rng = np.random.default_rng(5)
    size, n_rounds = 10, 37
    const = {1: 3, 4: 0, 7: 1}
    alias = {2: 0, 8: 5}  # slot 2 equals slot 0, slot 8 slot 5
    binary = [5, 6, 8]  # 0 or 1 in every round (8: through its alias)
    rows = rng.integers(0, 9, (n_rounds, size)).astype(np.int64)
    rows[:, binary] = rng.integers(0, 2, (n_rounds, len(binary)))
    for slot, value in const.items():
        rows[:, slot] = value
    for slot, of in alias.items():
        rows[:, slot] = rows[:, of]
    pa = np.array([0, 1, 3, 2, 7, 5], np.int64)
    pb = np.array([3, 3, 1, 8, 4, 6], np.int64)
    fixed = set(const) | set(alias)
    s1, s2 = np.zeros(size, np.int64), np.zeros(size, np.int64)
    sx = np.zeros(pa.size, np.int64)
    for row in rows:  # what the kernel adds
        for m in range(size):
            if m not in fixed:
                s1[m] += row[m]
                if m not in binary:
                    s2[m] += row[m] * row[m]
        for k in range(pa.size):
            if pa[k] not in const and pb[k] not in const:
                sx[k] += row[pa[k]] * row[pb[k]]
    sums = Sums.zeros(size, pa.size)
    counting.close_chunk(
        sums, n_rounds, s1, s2, sx, np.array([5, 6], np.int64),
        np.array(list(const), np.int64), np.array(list(const.values()), np.int64),
        np.array(list(alias), np.int64), np.array(list(alias.values()), np.int64), pa, pb,
    )  # fmt: skip
    want = Sums.zeros(size, pa.size)
    for row in rows:
        flush_cycle(row.copy(), 1, want.s1, want.s2, want.sl, want.sx, pa, pb, want.tot)
    assert sums.equals(want)


def test_constant_and_alias_units():
    members = {10: [0, 1], 11: [2, 3], 12: [4, 5], 13: [6, 7]}
    unit_op = {10: 0, 11: 1, 12: 0, 13: 0}  # 11: "any member"
    const = {0: 2, 1: 3, 2: 0, 3: 1}
    counting.constant_units(members, unit_op, const)
    assert const[10] == 5 and const[11] == 1 and 12 not in const
    alias = {4: 6, 5: 7}
    counting.alias_units(members, unit_op, alias)
    assert alias[12] == 13 and 10 not in alias
    scenario = load_scenario(ROOT / "scenarios" / "vtm_three_way_brawl.toml")
    layout = engine.layout_for(scenario)
    members, unit_op = counting.unit_members(layout)
    src, dst, op = layout.aggregation
    assert sum(len(ms) for ms in members.values()) == src.size
    assert set(members) == set(dst.tolist()) and set(unit_op.values()) <= {0, 1}


# --------------------------------------------------------------------------- slot plan
def test_pack_plan_header_and_lists():
    plan = counting.pack_plan([[7, 8], [], [9]], {4: 1, 5: True}, header=6)
    assert plan.tolist() == [6, 8, 8, 9, 1, 1, 7, 8, 9]
    assert plan[plan[0] : plan[1]].tolist() == [7, 8] and plan[plan[2] : plan[3]].tolist() == [9]


def test_binary_slots_and_aggregation_entries():
    scenario = load_scenario(ROOT / "scenarios" / "vtm_three_way_brawl.toml")
    layout = engine.layout_for(scenario)
    binary = counting.binary_slots(layout)
    assert set(range(layout.before_offset, layout.unit_offset)) <= binary
    k = layout.counts.index("first_action")
    assert {int(s) for s in layout.count_slots[:, k]} <= binary
    k = layout.counts.index("actions")
    assert not {int(s) for s in layout.count_slots[:, k]} & binary
    src, dst, op = layout.aggregation
    some = {int(dst[0]), int(dst[-1])}
    s, d, o = counting.aggregation_entries(layout, some)
    assert set(d.tolist()) == some and len(d) == sum(int(x) in some for x in dst)


# the counts a readiness scenario without holds or guards never makes non-zero
NO_HOLDS_OR_GUARDS = frozenset(
    {"expired_dice", "on_edge", "edge_wound", "stalemate", "guard_defenses"}
)


def _read_back(plan, h, m):
    """Lists ``h .. h + m - 1`` of a plan as the kernels read them: through
    ``readiness.counts.part`` and ``table`` (numba views)."""
    return np.stack([_part(plan, h + k) for k in range(m)]) if m > 1 else _part(plan, h)


@njit
def _part(plan, h):
    return readiness_counts.part(plan, h).copy()


@njit
def _table(plan, h, m):
    return readiness_counts.table(plan, h, m).copy()


@njit
def _before(plan):
    return readiness_counts.before_slots(plan).copy()


@pytest.mark.parametrize("never", [frozenset(), NO_HOLDS_OR_GUARDS])
def test_readiness_plan_reads_back_every_list(never):
    """readiness's plan (one pack_plan vector): every list it packs reads back, through
    the kernels' views, equal to what ``_emission`` produced and to the layout's slots."""
    scenario = load_scenario(ROOT / "tests/data/rev2/readiness_stalemates.toml")
    layout = engine.layout_for(scenario)
    extra = ((layout.before_index(0, 1), layout.dist_index(2, 0)), (layout.dist_index(0, 1), 0))
    layout = engine.layout_for(scenario, pairs=extra)
    rows, ranges, agg, derived, pair_rows = readiness_counts._emission(layout, never)
    got_rows, plan = readiness_counts.plan(layout, never)
    assert got_rows == rows and plan.dtype == np.int64 and plan.flags.c_contiguous
    assert derived.shape[1] == 3 and ranges.shape[1] > 0 and agg.shape[1] > 0
    sums = agg[2] == OP_SUM
    want = {
        readiness_counts.RANGES: ranges,
        readiness_counts.AGG_SUM: agg[:2, sums],
        readiness_counts.AGG_ANY: agg[:2, ~sums],
        readiness_counts.H_DERIVED_KIND: derived,
        readiness_counts.PAIRS: pair_rows,
    }
    for h, table in want.items():
        m = table.shape[0]
        assert _table(plan, h, m).tolist() == table.tolist(), h
        assert _read_back(plan, h, m).tolist() == table.tolist(), h
        assert readiness_counts.lists(plan, h, m).tolist() == table.tolist(), h
    n = layout.n
    dist = [*layout.dist_offsets.tolist(), layout.scenario_offset]
    assert _part(plan, readiness_counts.H_DIST).tolist() == dist
    before = [[layout.before_index(i, j) for j in range(n)] for i in range(n)]
    assert _before(plan).tolist() == before
    scen = [layout.scenario_index(c) for c in layout.scenario_counts]
    assert _part(plan, readiness_counts.H_SCENARIO).tolist() == scen
    for h, part in zip((readiness_counts.H_AGG_SRC, readiness_counts.H_AGG_DST,
                        readiness_counts.H_AGG_OP), layout.aggregation, strict=True):  # fmt: skip
        assert _part(plan, h).tolist() == part.tolist()
    end = int(plan[readiness_counts.H_END])
    assert end == plan.size and int(plan[0]) == readiness_counts.H_SIZE


def test_batch_fits_refuses_a_bound_above_the_batch_type():
    """A batch is counting.BATCH_DTYPE (uint16): a cycle's counts up to 65,535 fit, one
    more does not; readiness's largest bound (validation's limits) fits."""
    assert np.iinfo(counting.BATCH_DTYPE).max == 65_535
    assert counting.batch_fits(0) and counting.batch_fits(65_535)
    assert not counting.batch_fits(65_536) and not counting.batch_fits(-1)
    dice = MAX_COMBATANTS * readiness_schema.MAX_READINESS
    assert counting.batch_fits(readiness.count_bound(MAX_COMBATANTS, dice))
    assert readiness.COUNT_DTYPE is counting.BATCH_DTYPE


# --------------------------------------------------------------------------- reasons
def test_first_reason_names_the_first_failing_check():
    assert counting.first_reason([("a", True), ("b", False), ("c", False)]) == "b"
    assert counting.first_reason([("a", True)]) is None


def _compiled(kernel, scenario):
    return kernel.compile_scenario(scenario, engine.layout_for(scenario))


def test_the_benchmark_scenarios_take_the_lanes():
    for kernel, name in ((vtm, "four_vtm"), (perception, "four_perception")):
        scenario = load_scenario(ROOT / "benchmarks" / "scenarios" / f"{name}.toml")
        assert _compiled(kernel, scenario).lanes_off is None, name


def test_every_example_scenario_says_why_it_has_no_lanes():
    """A reason is one of the kernel's declared names, and lanes on means the plan says so."""
    seen = set()
    for path in sorted((ROOT / "scenarios").glob("*.toml")):
        scenario = load_scenario(path)
        modules = {"vtm": (vtm, vtm_lanes), "perception": (perception, perception_lanes)}
        if scenario.system not in modules:
            continue
        kernel, lanes = modules[scenario.system]
        compiled = _compiled(kernel, scenario)
        assert compiled.lanes_off is None or compiled.lanes_off in lanes.LANE_REASONS, path
        if kernel is vtm:
            assert (compiled.plan[vtm.H_LANES] == 1) == (compiled.lanes_off is None)
        else:
            assert (compiled.tab[perception.T_PAR, perception.P_LANES] == 1) == (
                compiled.lanes_off is None
            )
        seen.add((scenario.system, compiled.lanes_off))
    assert ("perception", "group_mode") in seen


def _vtm(rules=None, **fields):
    entries = [
        {"name": "A", "side": "x", "dexterity": 3, "wits": 2, "count": 2, **fields},
        {"name": "B", "side": "y", "dexterity": 2, "wits": 2, "count": 2},
    ]
    data = {"scenario": {"name": "lanes", "system": "vtm"}, "rules": rules or {}}
    return scenario_from_dict({**data, "combatant": entries}, source="<lanes>")


def test_vtm_reasons_by_name(monkeypatch):
    assert _compiled(vtm, _vtm()).lanes_off is None
    assert _compiled(vtm, _vtm({"tie": "random"})).lanes_off == "random_tie"
    assert _compiled(vtm, _vtm(delay="until_enemy_acts")).lanes_off == "delay_or_abort"
    half = _vtm(attack_share=0.5)  # attacks_made varies: in the values code, not in a lane
    assert _compiled(vtm, half).lanes_off == "uncarried_count"
    with monkeypatch.context() as patch:  # were it carried, the share's draw stops the lanes
        patch.setattr(vtm_lanes, "LANE_CARRIES", (*vtm_lanes.LANE_CARRIES, "attacks_made"))
        assert _compiled(vtm, half).lanes_off == "share_between_0_and_1"
    assert _compiled(vtm, _vtm(actions=2)).lanes_off == "several_actions"
    layout = engine.layout_for(_vtm())
    assert vtm.compile_scenario(_vtm(), layout, plain=True).lanes_off == "plain_plan"
    # a count of the values code that the lanes do not compute turns them off by name
    monkeypatch.setattr(vtm_lanes, "LANE_CARRIES", ("attacked_before_acting",))
    assert _compiled(vtm, _vtm()).lanes_off == "uncarried_count"


def test_perception_reasons_by_name():
    def scenario(rules, n=2, share=1.0):
        entries = [
            {"name": f"P{k}", "side": "xy"[k % 2], "perception": 1, "attack_share": share}
            for k in range(n)
        ]
        entries[0]["commander"] = True
        entries[1]["commander"] = True
        data = {"scenario": {"name": "lanes", "system": "perception"}, "rules": rules}
        return scenario_from_dict({**data, "combatant": entries}, source="<lanes>")

    assert _compiled(perception, scenario({})).lanes_off is None
    assert _compiled(perception, scenario({"mode": "group"})).lanes_off == "group_mode"
    assert _compiled(perception, scenario({}, n=5)).lanes_off == "too_many_combatants"
    assert _compiled(perception, scenario({}, share=0.5)).lanes_off == "share_between_0_and_1"
