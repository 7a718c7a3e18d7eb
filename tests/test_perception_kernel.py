"""The perception kernel (simkit/systems/perception/: rules.py, lanes.py, kernel.py): exact
values, its paths, the worked example of the rules (docs/rules.md).

1. Exact.  Every slot of the layout (each combatant's counts, acts_before,
   actions_dist, and every group and side aggregate) has its exact per-round mean
   computed by enumerating every draw of the twin (tests/twins/perception.py) with
   ``fractions.Fraction``; ``simkit.run`` must lie within 5 standard errors of it (a
   standard error of 0 demands equality).
2. Paths.  The histogram path, the general path and the traced rounds flushed one by
   one give bit-identical sums, also with cross sums of any pair of slots (``simkit
   tune`` targets), across the byte counters' and the hash table's emptying; large
   scenarios (the counting sort above ``PAIRWISE_MAX``) trace exactly as the twin.
3. The rules' worked example (docs/rules.md): scenarios/perception_gunnar_wolf.toml
   gives 28/100 and 64/100 (72/100 under ``information = "order"``), and ``trace`` with
   the seed's dice (Gunnar 9, the wolf 2) shows the seed's round.
"""

from __future__ import annotations

import dataclasses
import random
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from contract_support import row_counts
from enumerate import every_round
from twins import perception as twin

import simkit
from simkit import engine, systems
from simkit.analysis.trace import parse_dice, play_trace
from simkit.metrics import aggregate_round, flush_rows, mean_estimate
from simkit.scenario import load_scenario, scenario_from_dict, with_changes
from simkit.systems import counting
from simkit.systems.perception import counts as perception_counts
from simkit.systems.perception import kernel
from simkit.systems.perception import lanes as perception_lanes
from simkit.systems.perception import rules as perception_rules
from simkit.systems.stream import chunk_state

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = 200_000
Z = 5  # tolerance in standard errors
SYSTEM = systems.get("perception")


def _scenario(name: str, rules: dict, *combatants: dict):
    return scenario_from_dict(
        {
            "scenario": {"name": name, "system": "perception"},
            "rules": rules,
            "combatant": list(combatants),
        },
        source=f"<{name}>",
    )


def _key(seed: int, k: int = 0) -> np.ndarray:
    return chunk_state(np.random.SeedSequence(seed), k)


# ------------------------------------------------------------------ exact values
def twin_row(scenario, layout, counts: dict) -> np.ndarray:
    """A twin round's counts as a complete row of ``layout`` (aggregates filled)."""
    row = np.zeros(layout.size, np.int64)
    for i, name in enumerate(layout.names):
        for count in layout.counts:
            row[layout.count_index(i, count)] = counts[(name, count)]
        for j, other in enumerate(layout.names):
            if j != i:
                row[layout.before_index(i, j)] = counts[(name, f"acts_before.{other}")]
        for k in range(layout.dist_sizes[i]):
            row[layout.dist_index(i, k)] = counts[(name, f"actions_dist.{k}")]
    aggregate_round(row, *layout.aggregation)
    return row


def exact_row(scenario) -> list[Fraction]:
    """The exact per-round mean of every slot of the scenario's layout."""
    layout = engine.layout_for(scenario)
    weight: dict[tuple, Fraction] = {}  # identical rounds once, with their probability
    rounds: dict[tuple, dict] = {}
    for p, counts in every_round(lambda draws: twin.play_round(scenario, draws)):
        key = tuple(counts.items())
        weight[key] = weight.get(key, Fraction(0)) + p
        rounds.setdefault(key, counts)
    assert sum(weight.values()) == 1
    total = [Fraction(0)] * layout.size
    for key, p in weight.items():
        row = twin_row(scenario, layout, rounds[key])
        for m in np.flatnonzero(row):
            total[m] += p * int(row[m])
    return total


SCENARIOS = {
    "individual, random ties": _scenario(
        "individual, random ties",
        {"tie": "random"},
        {"name": "A", "side": "x", "perception": 2, "attack_share": 0.5, "target": "C"},
        {"name": "B", "side": "x", "perception": 2},
        {"name": "C", "side": "y", "perception": 2, "target": "A"},
    ),
    "individual, simultaneous, order": _scenario(
        "individual, simultaneous, order",
        {"tie": "simultaneous", "information": "order"},
        {"name": "Hero", "side": "x", "perception": 1, "target": "Orc", "attack_share": 0.25},
        {"name": "Scout", "side": "x", "perception": 3},
        {"name": "Orc", "side": "y", "perception": 1, "count": 2, "target": "Hero"},
    ),
    "individual, three sides": _scenario(
        "individual, three sides",
        {},
        {"name": "A", "side": "x", "perception": 0, "target": "D"},
        {"name": "B", "side": "y", "perception": 3, "attack_share": 0.7, "target": "D"},
        {"name": "C", "side": "y", "perception": 3, "target": "D"},
        {"name": "D", "side": "z", "perception": 5, "target": "A", "attack_share": 0.0},
    ),
    "group, commander, listed, three sides": _scenario(
        "group, commander, listed, three sides",
        {"mode": "group", "group_stat": "commander", "within_side": "listed"},
        {"name": "Gunnar", "side": "party", "perception": 3, "commander": True},
        {"name": "Astrid", "side": "party", "perception": 6, "target": "Bear"},
        {"name": "Wolf", "side": "wolves", "perception": 5, "commander": True, "target": "Bear"},
        {"name": "Bear", "side": "bear", "perception": 2, "commander": True, "attack_share": 0.6},
    ),
    "group, highest, random within, equal totals, order": _scenario(
        "group, highest, random within, equal totals, order",
        {"mode": "group", "group_stat": "highest", "information": "order"},
        {"name": "A", "side": "x", "perception": 4},
        {"name": "B", "side": "x", "perception": 1, "attack_share": 0.5, "target": "C"},
        {"name": "C", "side": "y", "perception": 4, "target": "B"},
        {"name": "D", "side": "y", "perception": 2, "attack_share": 0.0},
        {"name": "E", "side": "y", "perception": 0, "attack_share": 0.0},
    ),
    "group, commander, random within, three sides": _scenario(
        "group, commander, random within, three sides",
        {"mode": "group", "within_side": "random"},
        {"name": "A", "side": "x", "perception": 2, "commander": True},
        {"name": "B", "side": "x", "perception": 5, "attack_share": 0.3},
        {"name": "C", "side": "y", "perception": 2, "commander": True, "target": "D"},
        {"name": "D", "side": "z", "perception": 3, "commander": True, "target": "C"},
    ),
    "group, six, equal totals, strict": _scenario(
        "group, six, equal totals, strict",
        {"mode": "group", "within_side": "random"},
        {"name": "Hero", "side": "x", "perception": 5, "commander": True, "target": "Orc"},
        {"name": "Squire", "side": "x", "perception": 6, "target": "Goblin"},
        {"name": "Page", "side": "x", "perception": 2, "attack_share": 0.0},
        {"name": "Orc", "side": "y", "perception": 5, "commander": True, "target": "Hero"},
        {"name": "Goblin", "side": "y", "perception": 1, "count": 2, "target": "Page"},
    ),
    "worked example": load_scenario(ROOT / "scenarios" / "perception_gunnar_wolf.toml"),
    "worked example, group": load_scenario(
        ROOT / "scenarios" / "perception_gunnar_wolf_group.toml"
    ),
}


@pytest.fixture(scope="module")
def exact_rows() -> dict[str, list[Fraction]]:
    return {}


def _exact(cache: dict, name: str) -> list[Fraction]:
    if name not in cache:
        cache[name] = exact_row(SCENARIOS[name])
    return cache[name]


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_monte_carlo_matches_exact(name, exact_rows):
    """Every slot of the layout (counts, acts_before, actions_dist, every group and side
    aggregate) within 5 standard errors of its exact value (equal where se = 0)."""
    scenario = SCENARIOS[name]
    want = _exact(exact_rows, name)
    result = simkit.run(scenario, rounds=ROUNDS, rng=2026, workers=1)
    layout, sums = result.layout, result.sums
    assert layout.size == len(want)
    bad = []
    for m, exact in enumerate(want):
        est = mean_estimate(sums, m)
        ok = (
            Fraction(int(sums.s1[m]), ROUNDS) == exact
            if est.se == 0
            else (abs(est.mean - float(exact)) <= Z * est.se)
        )
        if not ok:
            bad.append(f"{layout.slot_label(m)}: {est.mean:.6f} ± {est.se:.2e}, exact {exact}")
    assert not bad, f"{name}:\n" + "\n".join(bad)


def test_a_side_aggregate_through_the_public_api(exact_rows):
    """The side slots are what ``Result.estimate('side:NAME', ...)`` reports."""
    name = "group, six, equal totals, strict"
    scenario = SCENARIOS[name]
    want = _exact(exact_rows, name)
    layout = engine.layout_for(scenario)
    result = simkit.run(scenario, rounds=ROUNDS, rng=7, workers=2)
    for metric in ("attacks_received", "known_intents", "intent_disclosed", "first_action"):
        exact = want[layout.slot(layout.source("side", "y"), metric)]
        est = result.estimate("side:y", metric)
        assert abs(est.mean - float(exact)) <= Z * est.se, (metric, est, exact)
    # side y (Orc, Goblin 1, Goblin 2) receives two attacks every round: the Hero's on
    # the Orc and the Squire's on a Goblin (P4); the Page never attacks
    assert want[layout.slot(layout.source("side", "y"), "attacks_received")] == 2


def test_exact_scenarios_cover_every_variant():
    seen = set()
    for scenario in SCENARIOS.values():
        rules = scenario.rules
        seen.add(("information", rules["information"]))
        if rules["mode"] == "individual":
            seen.add(("individual", rules["tie"]))
        else:
            seen.add(("group", rules["group_stat"], rules["within_side"]))
        seen.add(("sides", len(scenario.sides)))
        seen.add(("histogram", len(scenario.combatants) <= kernel.HIST_MAX_N))
        for i, c in enumerate(scenario.combatants):
            share = c["attack_share"]
            seen.add(("share", "0" if share == 0 else "1" if share == 1 else "fraction"))
            seen.add(("targets", c["target"] != "random", len(scenario.targets(i)) > 1))
    assert seen >= {
        ("information", "strict"),
        ("information", "order"),
        ("individual", "random"),
        ("individual", "simultaneous"),
        ("group", "commander", "listed"),
        ("group", "commander", "random"),
        ("group", "highest", "random"),
        ("sides", 2),
        ("sides", 3),
        ("histogram", True),
        ("histogram", False),
        ("share", "0"),
        ("share", "1"),
        ("share", "fraction"),
        ("targets", True, False),  # one named opponent
        ("targets", True, True),  # a count group
        ("targets", False, True),  # random over several
    }, seen


def test_exact_hand_computed_cases(exact_rows):
    """A few values worked out by hand, to pin the enumeration itself."""
    want = _exact(exact_rows, "individual, random ties")
    lay = engine.layout_for(SCENARIOS["individual, random ties"])
    a, b, c = 0, 1, 2

    def count(i: int, name: str) -> Fraction:
        return want[lay.count_index(i, name)]

    # three perception-2 combatants: every order equally likely
    assert count(a, "first_action") == Fraction(1, 3)
    assert want[lay.before_index(a, b)] == Fraction(1, 2)
    # strict P3: C learns an opponent's intent when its total is strictly higher:
    # P(C's d10 > A's d10) = 45/100, the same for B
    assert count(c, "known_intents") == 2 * Fraction(45, 100)
    # C only attacks A: A is attacked before acting iff C comes before A
    assert count(a, "attacked_before_acting") == Fraction(1, 2)
    assert count(b, "attacked_before_acting") == 0
    # C is attacked by B always and by A half the time, both before C acts when they
    # come first: B before C (1/2) or A before C and attacking (1/2 * 1/2), not both
    # counted twice: 1 - P(neither) = 1 - (1/2 ... ) -- enumerate the 6 orders
    orders = [(a, b, c), (a, c, b), (b, a, c), (b, c, a), (c, a, b), (c, b, a)]
    p = Fraction(0)
    for order in orders:
        before = order[: order.index(c)]
        spared = (Fraction(1, 2) if a in before else 1) * (0 if b in before else 1)
        p += Fraction(1, 6) * (1 - spared)
    assert count(c, "attacked_before_acting") == p
    assert count(c, "attacks_received") == count(c, "undefended") == Fraction(3, 2)
    assert count(a, "attacks_made") == Fraction(1, 2)


# ------------------------------------------------------------------ paths
def _run(scenario, key, n, first=0, histogram=None, pairs=()):
    job = engine.prepare(scenario, pairs)
    sums = job.layout.new_sums()
    kernel.run_chunk(job.compiled, key, n, sums, first=first, histogram=histogram)
    return job, sums


def _flushed_trace(job, key, n, first=0):
    rows, _, _ = kernel.trace_rounds(job.compiled, key, n, first)
    return flush_rows(rows, job.layout)


def _extra_pairs(layout) -> tuple[tuple[int, int], ...]:
    """Cross sums of every kind: acts_before with a count, two counts that vary, a
    count with a fixed one (P4: actions), a side's slot with a combatant's."""
    n = layout.n
    side = layout.source("side", layout.sides[0])
    return (
        (layout.before_index(0, n - 1), layout.count_index(n - 1, "known_intents")),
        (layout.count_index(0, "first_action"), layout.before_index(n - 1, 0)),
        (layout.count_index(0, "attacks_received"), layout.count_index(1, "attacks_made")),
        (layout.count_index(0, "actions"), layout.count_index(1, "intent_disclosed")),
        (layout.slot(side, "attacked_before_acting"), layout.count_index(0, "actions")),
        (layout.slot(side, "known_intents"), layout.count_index(n - 1, "first_action")),
    )


@pytest.mark.parametrize("seed", range(6))
def test_histogram_and_general_paths_equal_the_flushed_trace(seed):
    """Up to four combatants both paths run; they and the traced rounds flushed one by
    one give bit-identical sums, cross sums of extra pairs included.  The byte
    counters of acts_before are emptied every 255 rounds: 1000 rounds cross that."""
    rng = random.Random(f"paths-{seed}")
    done = 0
    while done < 5:
        scenario = twin.random_scenario(rng, max_total=4)
        if len(scenario.combatants) > kernel.HIST_MAX_N:
            continue
        done += 1
        key, n, first = _key(seed, done), rng.choice((1, 255, 1000)), rng.randrange(300)
        pairs = _extra_pairs(engine.layout_for(scenario))
        job, hist = _run(scenario, key, n, first, histogram=True, pairs=pairs)
        _, general = _run(scenario, key, n, first, histogram=False, pairs=pairs)
        want = _flushed_trace(job, key, n, first)
        assert hist.equals(want), scenario.to_dict()
        assert general.equals(want), scenario.to_dict()


def test_rounds_side_by_side_equal_the_general_path():
    """Individual mode, up to four combatants, attack_share 0 or 1: the histogram path
    plays rounds side by side (``lanes.play_lanes``, from each round's first sixteen byte draws)
    and gives the general path's sums bit for bit, whatever the chunk's first round and
    length.  Rounds the lanes cannot finish (a die rejecting two bytes, three tied, a
    rejected target byte) are played one by one; both kinds occur, with every rule."""
    rng = random.Random("lanes")
    kept = rejected = 0
    rules_seen = set()
    done = 0
    while done < 30:
        entries, rules = twin.random_entries(rng, max_total=4)
        if rules["mode"] != "individual":
            continue
        for e in entries:
            e["attack_share"] = rng.choice((0.0, 1.0, 1.0))
            e["perception"] = rng.choice((0, 1, 1))  # many ties, three tied too
        data = {"scenario": {"name": "lanes", "system": "perception"}, "rules": rules}
        scenario = scenario_from_dict({**data, "combatant": entries}, source="<lanes>")
        done += 1
        rules_seen.add((rules["tie"], rules["information"]))
        key, first = _key(41, done), rng.randrange(1000)
        n = rng.choice((perception_lanes.FAST_LANES - 1, 2 * perception_lanes.FAST_LANES + 33))
        job, hist = _run(scenario, key, n, first, histogram=True)
        assert job.compiled.tab[kernel.T_PAR, kernel.P_LANES] == 1
        _, general = _run(scenario, key, n, first, histogram=False)
        assert hist.equals(general), scenario.to_dict()
        width = perception_lanes.FAST_LANES
        lanes = np.zeros((perception_lanes.L_ROWS, width), np.int32)
        words = np.zeros(width, np.uint64)
        codes = np.zeros(width, np.int64)
        tab = job.compiled.tab.copy()
        perception_lanes.play_lanes(key[:4].copy(), first, tab, codes, words, words.copy(), lanes)
        kept += int((codes >= 0).sum())
        rejected += int((codes < 0).sum())
    assert kept > 0 and rejected > 0
    assert len(rules_seen) == 4


def test_lanes_in_blocks_equal_one_block(monkeypatch):
    """run_chunk keeps the lanes' codes a block at a time (LANE_BLOCK rounds) and goes on
    with one hash table across the blocks: blocks of 512 rounds, a chunk of four and a
    half blocks, give the sums of the general path."""
    scenario = _scenario(
        "blocks",
        {},
        {"name": "A", "side": "x", "perception": 1},
        {"name": "B", "side": "x", "perception": 0},
        {"name": "C", "side": "y", "perception": 1},
        {"name": "D", "side": "y", "perception": 0},
    )
    key = _key(43, 1)
    n = 4 * 512 + 300
    _, general = _run(scenario, key, n, first=5, histogram=False)
    _, whole = _run(scenario, key, n, first=5, histogram=True)
    monkeypatch.setattr(kernel, "LANE_BLOCK", 512)  # (lanes.py's, read by run_chunk here)
    job, blocks = _run(scenario, key, n, first=5, histogram=True)
    assert job.compiled.tab[kernel.T_PAR, kernel.P_LANES] == 1
    assert whole.equals(general)
    assert blocks.equals(general)


def test_general_path_with_extra_pairs_on_large_scenarios():
    rng = random.Random("pairs-large")
    for k in range(6):
        scenario = twin.random_scenario(rng, max_total=30)
        pairs = _extra_pairs(engine.layout_for(scenario))
        key = _key(77, k)
        job, got = _run(scenario, key, 600, first=k, pairs=pairs)
        assert got.equals(_flushed_trace(job, key, 600, first=k)), scenario.to_dict()


def test_the_outcome_histogram_is_dense_up_to_three_combatants():
    """counting.histogram_kind by the size of the code space: dense up to 3 combatants
    (at most 2**14 codes), hashed at 4 (2**19); the dense path gives the sums of the
    general path and of the traced rows bit for bit."""
    kinds = [counting.histogram_kind(perception_counts.code_space(n)) for n in range(1, 5)]
    assert kinds == [counting.DENSE] * 3 + [counting.HASHED]
    for n in (2, 3):
        scenario = _scenario(
            "dense",
            {"tie": "simultaneous"},
            *(
                {"name": f"F{k}", "side": f"s{k % 2}", "perception": k, "attack_share": 0.5}
                for k in range(n)
            ),
        )
        key = _key(11 + n)
        job, hist = _run(scenario, key, 20_000, histogram=True)
        assert hist.equals(_flushed_trace(job, key, 20_000))
        _, general = _run(scenario, key, 20_000, histogram=False)
        assert general.equals(hist)


def test_many_distinct_outcomes(monkeypatch):
    """Four sides of one, equal perception, shared slots, a coin for every attack and
    three targets each: more distinct outcomes than the histogram keeps (held at its
    first size, 4096 entries, so that it is emptied within the chunk)."""
    monkeypatch.setattr(kernel, "HASH_MAX_BITS", kernel.HASH_BITS)
    scenario = _scenario(
        "many outcomes",
        {"tie": "simultaneous"},
        *(
            {"name": f"F{k}", "side": f"s{k}", "perception": 0, "attack_share": 0.5}
            for k in range(4)
        ),
    )
    key = _key(5)
    job, hist = _run(scenario, key, 30_000, histogram=True)
    rows, _, _ = kernel.trace_rounds(job.compiled, key, 30_000)
    n = 4
    slots = rows[:, [job.layout.before_index(i, j) for i in range(n) for j in range(n)]]
    codes = {tuple(r) for r in np.hstack([slots, rows[:, : job.layout.unit_offset]])}
    assert len(codes) > (1 << kernel.HASH_BITS) // 2  # the table is emptied within the chunk
    assert hist.equals(flush_rows(rows, job.layout))
    _, general = _run(scenario, key, 30_000, histogram=False)
    assert general.equals(hist)


def test_large_scenarios_trace_as_the_twin():
    """Up to 60 combatants: counting sort, long target lists, long tied runs."""
    rng = random.Random("large")
    for k in range(8):
        scenario = twin.random_scenario(rng, max_total=60)
        job = engine.prepare(scenario)
        key = _key(90, k)
        tr = SYSTEM.trace(job.compiled, key, 25, first=k)
        records = twin.play_rounds_keyed(scenario, [int(w) for w in key[:4]], 25, first=k)
        for r, rec in enumerate(records):
            assert row_counts(tr.rows[r], job.layout) == rec.counts, (k, r)
            assert [int(w) for w in tr.states[r]] == rec.state, (k, r)
            log = [SYSTEM.event_tuple(e, scenario) for e in tr.events if e[0] == k + r]
            assert log == rec.log, (k, r)
    assert perception_rules.PAIRWISE_MAX < 60


def test_both_sort_methods_around_their_threshold():
    """Individual mode with PAIRWISE_MAX entities (counted pairwise) and one more
    (counting sort): each traces exactly as the twin, ties of every kind included."""
    for m in (perception_rules.PAIRWISE_MAX, perception_rules.PAIRWISE_MAX + 1):
        for tie in ("random", "simultaneous"):
            scenario = _scenario(
                f"{m} {tie}",
                {"tie": tie},
                *({"name": f"F{k}", "side": "ab"[k % 2], "perception": k % 3} for k in range(m)),
            )
            job = engine.prepare(scenario)
            key = _key(m)
            tr = SYSTEM.trace(job.compiled, key, 200)
            records = twin.play_rounds_keyed(scenario, [int(w) for w in key[:4]], 200)
            for r, rec in enumerate(records):
                assert row_counts(tr.rows[r], job.layout) == rec.counts, (m, tie, r)
                assert [int(w) for w in tr.states[r]] == rec.state


def test_chunks_in_pieces_add_up():
    """Rounds are independent cycles: a chunk played in pieces (``first``) gives the
    sums of the whole chunk."""
    scenario = SCENARIOS["group, six, equal totals, strict"]
    key = _key(3)
    job, whole = _run(scenario, key, 3000)
    pieces = job.layout.new_sums()
    for first in range(0, 3000, 700):
        pieces.add(_run(scenario, key, min(700, 3000 - first), first)[1])
    assert pieces.equals(whole)


def test_below_written_out_is_stream_below():
    """The round function draws ``stream.below(n)`` with its byte path written out: the
    same rejection limit, and ``b % n`` by multiplying, exact for every byte kept (the
    twin, drawing with NaiveStream.below, pins the rest: targets and fair orders of
    every size in the tests above)."""
    for n in range(2, 257):
        limit = int(perception_rules.BELOW_LIMIT[n])
        assert limit == 256 - 256 % n
        reciprocal = int(perception_rules.BELOW_RECIPROCAL[n])
        assert all(b - ((b * reciprocal) >> 32) * n == b % n for b in range(limit))


def test_the_kernel_takes_codes_not_names():
    """An unknown rule value reaching the compiler is an error, never a default."""
    scenario = SCENARIOS["worked example"]
    layout = engine.layout_for(scenario)
    bad = dataclasses.replace(scenario, rules={**scenario.rules, "tie": "coin"})
    with pytest.raises(ValueError, match="rules.tie: unknown value 'coin'"):
        kernel.compile_scenario(bad, layout)


# ------------------------------------------------------------------ the worked example
GUNNAR = ROOT / "scenarios" / "perception_gunnar_wolf.toml"


@pytest.mark.parametrize(
    ("information", "wolf_knows"),
    [("strict", Fraction(64, 100)), ("order", Fraction(72, 100))],
)
def test_worked_example_monte_carlo(information, wolf_knows):
    """The rules (docs/rules.md, P3): Gunnar acts first with 28/100; the wolf learns
    Gunnar's first action with 64/100 (its total strictly higher), 72/100 under
    information = "order"."""
    scenario = load_scenario(GUNNAR)
    assert scenario.rules["information"] == "strict"  # the file uses the default
    if information == "order":
        scenario = with_changes(scenario, rules={"information": "order"})
    result = simkit.run(scenario, rounds=ROUNDS, rng=7, workers=1)
    checks = {
        ("Gunnar", "first_action"): Fraction(28, 100),
        ("Gunnar", "known_intents"): Fraction(28, 100),
        ("Wolf", "known_intents"): wolf_knows,
        ("Gunnar", "intent_disclosed"): wolf_knows,
        ("Wolf", "attacked_before_acting"): Fraction(28, 100),
    }
    for (who, metric), exact in checks.items():
        est = result.estimate(who, metric)
        assert abs(est.mean - float(exact)) <= Z * est.se, (who, metric, est, exact)


def test_worked_example_trace_with_the_seeds_dice():
    """``trace`` with Gunnar's 9 and the wolf's 2: the seed's round (docs/rules.md, P1-P4)."""
    scenario = load_scenario(GUNNAR)
    dice = parse_dice(scenario, ["Gunnar=9", "Wolf=2"])
    job = engine.prepare(scenario)
    tr = SYSTEM.trace(job.compiled, _key(2026), 3, dice=dice)
    for r in range(3):
        log = [SYSTEM.event_tuple(e, scenario) for e in tr.events if e[0] == r]
        assert log == [
            ("roll", "P1", "Gunnar", 9, 13),
            ("roll", "P1", "Wolf", 2, 8),
            ("slot", "P1", "Gunnar", 0),
            ("slot", "P1", "Wolf", 1),
            ("intent", "P3", "Gunnar", "Wolf"),  # Gunnar knows the wolf will attack him
            ("act", "P4", "Gunnar", False),  # acting first: it stated nothing (P3)
            ("attack", "P4", "Gunnar", "Wolf"),
            ("act", "P4", "Wolf", True),  # carries out the attack it stated (P4)
            ("attack", "P4", "Wolf", "Gunnar"),
        ]
        got = row_counts(tr.rows[r], job.layout)
        assert got[("Gunnar", "first_action")] == got[("Gunnar", "known_intents")] == 1
        assert got[("Wolf", "intent_disclosed")] == 1
        assert got[("Wolf", "attacked_before_acting")] == 1
        assert got[("Gunnar", "intent_disclosed")] == got[("Wolf", "known_intents")] == 0
    text = play_trace(scenario, 1, 2026, dice)
    for line in ("Gunnar rolls 9", "Wolf rolls 2", "P3 Gunnar learns", "P4 Gunnar attacks Wolf"):
        assert line in text, text
    assert "P4 Gunnar acts; acting first, it stated nothing beforehand (P3)" in text, text
    assert "P4 Wolf acts, carrying out the first action it stated" in text, text
    assert "Gunnar acts, carrying out" not in text, text


def test_group_mode_trace_names_the_sides():
    scenario = load_scenario(ROOT / "scenarios" / "perception_gunnar_wolf_group.toml")
    assert [r[0] for r in SYSTEM.rollers(scenario)] == ["party", "wolves"]
    dice = parse_dice(scenario, ["party=9", "wolves=2"])
    job = engine.prepare(scenario)
    tr = SYSTEM.trace(job.compiled, _key(1), 1, dice=dice)
    rolls = [
        SYSTEM.event_json(e, scenario) for e in tr.events if e[1] == perception_rules.EV_ROLL_P2
    ]
    assert rolls == [
        {"round": 0, "event": "roll", "rule": "P2", "side": "party", "die": 9, "total": 13},
        {"round": 0, "event": "roll", "rule": "P2", "side": "wolves", "die": 2, "total": 8},
    ]
    for e in tr.events:
        assert SYSTEM.event_text(e, scenario).split()[0] in ("P2", "P3", "P4")
