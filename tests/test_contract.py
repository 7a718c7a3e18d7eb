"""The contract every registered system meets (systems as plug-ins: docs/architecture.md).

Parametrised over the registry, so a new system is held to it automatically:

1. its kernel's trace equals its plain-Python twin round by round: every count, the
   stream state left behind, the carry, and every event (``System.event_tuple`` equals
   the twin's log entry);
2. the events alone give the counts (the twin's ``fold_log`` on the kernel's events);
3. ``run_chunk`` equals the traced rounds flushed as regeneration cycles, bit for bit,
   also from a ``first`` round and with a carry in; the group and side slots of a
   traced row are ``aggregate_round`` of its combatant slots;
4. the worker count and batching change nothing; two scenarios that differ only in
   policy roll the same dice (common random numbers);
5. ``0 < attack_share < 2**-54`` still draws (the stream stays in step with the twin);
6. every field and rule rejects a value of the wrong type with its path;
7. ``trace(dice=...)`` rolls the given faces and nothing else changes;
8. the system is each of the four parts of ``System`` (rules, kernel, presentation,
   fixtures), and one that does not carry state between rounds refuses a carry;
9. ``rows`` gives the trace's rows and carries, and fights of several rounds (R8a,
   engine.fights) equal the twin's fights round by round.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from contract_support import cycles, row_counts, scenario_files, twin

from simkit import engine, systems
from simkit.metrics import aggregate_round, flush_rows
from simkit.scenario import ScenarioError, load_scenario, scenario_from_dict, with_changes
from simkit.systems.base import Fixtures, Kernel, Presentation, Rules, System
from simkit.systems.stream import chunk_state
from simkit.systems.support import JIT_DISABLED

SYSTEMS = list(systems.names())
# With NUMBA_DISABLE_JIT=1 (make coverage) the kernels run as plain Python, about a
# thousand times slower: fewer scenarios and rounds, enough to reach every line.
RANDOM_SCENARIOS = 12 if JIT_DISABLED else 40
ROUNDS_PER_SCENARIO = 20 if JIT_DISABLED else 60


def _key(seed: int, k: int = 0) -> np.ndarray:
    return chunk_state(np.random.SeedSequence(seed), k)


def _compare_trace_with_twin(scenario, key, n, first=0, carry=0, dice=None):
    system = systems.get(scenario.system)
    job = engine.prepare(scenario)
    tr = system.trace(job.compiled, key, n, first=first, carry=carry, dice=dice)
    records = twin(system.name).play_rounds_keyed(
        scenario, [int(w) for w in key[:4]], n, first=first, carry=carry, dice=dice
    )
    events_by_round: dict[int, list[tuple]] = {}
    for e in tr.events:
        events_by_round.setdefault(int(e[0]), []).append(system.event_tuple(e, scenario))
    for r, (counts, state, carry_out, log) in enumerate(records):
        got = row_counts(tr.rows[r], job.layout)
        assert got == counts, _diff(got, counts, scenario, first + r)
        assert [int(w) for w in tr.states[r]] == [int(w) for w in state], (
            f"round {first + r}: stream state differs"
        )
        assert int(tr.carries[r]) == int(carry_out), f"round {first + r}: carry differs"
        assert events_by_round.get(first + r, []) == list(log), (
            f"round {first + r}: events differ\nkernel: {events_by_round.get(first + r)}\n"
            f"twin:   {log}"
        )
    return job, tr


def _diff(got, want, scenario, r) -> str:
    keys = sorted(set(got) | set(want), key=str)
    bad = [
        f"{k}: kernel {got.get(k)} twin {want.get(k)}" for k in keys if got.get(k) != want.get(k)
    ]
    return f"{scenario.source} round {r}:\n" + "\n".join(bad[:20])


@pytest.mark.parametrize("system", SYSTEMS)
def test_kernel_trace_equals_the_twin_on_every_scenario_file(system):
    files = scenario_files(system)
    assert files, f"no scenario files of system {system}"
    for k, path in enumerate(files):
        scenario = load_scenario(path)
        _compare_trace_with_twin(scenario, _key(k), ROUNDS_PER_SCENARIO, first=k)


@pytest.mark.parametrize("system", SYSTEMS)
def test_kernel_trace_equals_the_twin_on_random_scenarios(system):
    rng = random.Random(f"contract-{system}")
    for k in range(RANDOM_SCENARIOS):
        scenario = twin(system).random_scenario(rng)
        _compare_trace_with_twin(scenario, _key(1000 + k), ROUNDS_PER_SCENARIO, first=7 * k)


@pytest.mark.parametrize("system", SYSTEMS)
def test_events_alone_give_the_counts(system):
    rng = random.Random(f"fold-{system}")
    fold = twin(system).fold_log
    for k in range(RANDOM_SCENARIOS // 2):
        scenario = twin(system).random_scenario(rng)
        sys_ = systems.get(system)
        job = engine.prepare(scenario)
        tr = sys_.trace(job.compiled, _key(2000 + k), 30)
        carry = 0
        for r in range(30):
            log = [sys_.event_tuple(e, scenario) for e in tr.events if int(e[0]) == r]
            assert fold(scenario, log, carry) == row_counts(tr.rows[r], job.layout)
            carry = int(tr.carries[r])


@pytest.mark.parametrize("system", SYSTEMS)
def test_run_chunk_equals_the_flushed_trace(system):
    rng = random.Random(f"flush-{system}")
    sys_ = systems.get(system)
    src, dst, op = None, None, None
    for k in range(RANDOM_SCENARIOS // 2):
        scenario = twin(system).random_scenario(rng)
        job = engine.prepare(scenario)
        src, dst, op = job.layout.aggregation
        key = _key(3000 + k)
        n, first = rng.choice((1, 2, 7, 300, 2001)), rng.randrange(0, 500)
        carry = rng.choice((0, 1)) if sys_.carries_state else 0
        tr = sys_.trace(job.compiled, key, n, first=first, carry=carry)
        for r in range(n):  # group and side slots are aggregate_round of the rest
            row = tr.rows[r].copy()
            row[job.layout.unit_offset :] = 0
            aggregate_round(row, src, dst, op)
            assert np.array_equal(row, tr.rows[r]), f"round {r}: aggregate slots differ"
        rows, lengths = cycles(tr.rows, tr.carries)
        want = flush_rows(rows, job.layout, lengths)
        got = job.layout.new_sums()
        carry_out = sys_.run_chunk(job.compiled, key, n, got, first=first, carry=carry)
        assert got.equals(want), f"{scenario.source}: run_chunk differs from the trace"
        assert carry_out == int(tr.carries[-1])


@pytest.mark.parametrize("system", SYSTEMS)
def test_run_chunk_equals_the_flushed_trace_on_the_bench_scenario(system):
    """The bench scenario takes the system's fast path where it has one (every system:
    rounds side by side, ``lanes_off`` None): ``run_chunk`` there equals the traced
    rounds flushed as cycles, bit for bit, over whole blocks of lanes and a tail, from a
    ``first`` round.  (The random scenarios above mostly take the scalar path; readiness's
    lanes are held to it on random scenarios they serve in test_readiness_lanes.py.)"""
    sys_ = systems.get(system)
    job = engine.prepare(scenario_from_dict(sys_.bench_scenario(), source="<bench>"))
    assert getattr(job.compiled, "lanes_off", None) is None, f"{system}: the bench takes no lanes"
    for n, first in ((300, 0), (300 if JIT_DISABLED else 2001, 77)):
        key = _key(6000 + n)
        tr = sys_.trace(job.compiled, key, n, first=first)
        rows, lengths = cycles(tr.rows, tr.carries)
        want = flush_rows(rows, job.layout, lengths)
        got = job.layout.new_sums()
        sys_.run_chunk(job.compiled, key, n, got, first=first)
        assert got.equals(want), f"{system}: the lanes differ from the trace"


@pytest.mark.parametrize("system", SYSTEMS)
@pytest.mark.skipif(JIT_DISABLED, reason="whole chunks: too slow without the JIT")
def test_workers_and_batches_change_nothing(system):
    rng = random.Random(f"workers-{system}")
    for _ in range(3):
        scenario = twin(system).random_scenario(rng)
        seq = np.random.SeedSequence(rng.randrange(1 << 30))
        rounds = engine.chunk_rounds(scenario) + 1234
        one = engine.simulate(scenario, rounds, seq, workers=1)
        two = engine.simulate(scenario, rounds, seq, workers=2)
        assert one.sums.equals(two.sums)
        batched = engine.simulate(scenario, rounds, seq, batch_rounds=5000)
        assert np.array_equal(batched.sums.s1, one.sums.s1)
        assert sum(b.rounds for b in batched.batches) == rounds


@pytest.mark.parametrize("system", SYSTEMS)
def test_policies_do_not_change_the_dice(system):
    """Common random numbers: a scenario and a copy with other policies roll the same dice."""
    sys_ = systems.get(system)
    rng = random.Random(f"crn-{system}")
    for k in range(10):
        a = twin(system).random_scenario(rng)
        changes = {}
        for c in a.combatants:
            for field in sys_.policies:
                spec = sys_.fields[field]
                if spec.choices:
                    changes.setdefault(c.name, {})[field] = rng.choice(spec.choices)
        b = with_changes(a, combatants=changes)
        rolls = []
        for s in (a, b):
            job = engine.prepare(s)
            tr = sys_.trace(job.compiled, _key(4000 + k), 20)
            rolls.append(
                [sys_.event_tuple(e, s) for e in tr.events if sys_.event_tuple(e, s)[0] == "roll"]
            )
        assert rolls[0] == rolls[1]


@pytest.mark.parametrize("system", SYSTEMS)
def test_a_tiny_attack_share_still_draws(system):
    rng = random.Random(f"tiny-{system}")
    scenario = twin(system).random_scenario(rng)
    first = scenario.combatants[0]
    tiny = with_changes(scenario, combatants={first.name: {"attack_share": 1e-17}})
    _compare_trace_with_twin(tiny, _key(5000), 200)


@pytest.mark.parametrize("system", SYSTEMS)
def test_fixed_dice_roll_those_faces(system):
    sys_ = systems.get(system)
    rng = random.Random(f"dice-{system}")
    for k in range(10):
        scenario = twin(system).random_scenario(rng)
        rollers = sys_.rollers(scenario)
        i = rng.randrange(len(rollers))
        _, count, sides = rollers[i]
        faces = [rng.randint(1, sides) for _ in range(count)]
        _compare_trace_with_twin(scenario, _key(6000 + k), 5, dice={i: faces})


@pytest.mark.parametrize("system", SYSTEMS)
def test_every_field_rejects_a_wrong_type(system, tmp_path):
    sys_ = systems.get(system)
    base = sys_.bench_scenario()
    for field, spec in sys_.fields.items():
        wrong = [1.5] if spec.kind is not float else ["x"]
        if spec.kind is str:
            wrong = [3]
        for value in wrong:
            data = {**base, "combatant": [dict(c) for c in base["combatant"]]}
            data["combatant"][0][field] = value
            with pytest.raises(ScenarioError, match=rf"\(index 0\)\.{field}: "):
                scenario_from_dict(data, source="x.toml")
    for rule, spec in sys_.rules.items():
        data = {**base, "rules": {rule: 3 if spec.kind is str else "x"}}
        with pytest.raises(ScenarioError, match=rf"rules\.{rule}: "):
            scenario_from_dict(data, source="x.toml")


@pytest.mark.parametrize("system", SYSTEMS)
def test_the_system_is_its_four_parts(system):
    sys_ = systems.get(system)
    for part in (Rules, Kernel, Presentation, Fixtures, System):
        assert isinstance(sys_, part), part.__name__
    assert isinstance(sys_.carries_state, bool)
    scenario = scenario_from_dict(sys_.bench_scenario(), source="bench.toml")
    job = engine.prepare(scenario)
    tr = sys_.trace(job.compiled, _key(7000), 3)
    assert tr.rows.shape == (3, job.layout.size) and tr.carries.shape == (3,)
    if not sys_.carries_state:
        assert not tr.carries.any()
        with pytest.raises(ValueError, match="carries nothing between rounds"):
            sys_.run_chunk(job.compiled, _key(7000), 3, job.layout.new_sums(), carry=1)
        with pytest.raises(ValueError, match="carries nothing between rounds"):
            sys_.trace(job.compiled, _key(7000), 3, carry=1)


@pytest.mark.parametrize("system", SYSTEMS)
def test_rows_are_the_traced_rows_and_carries(system):
    """``System.rows`` (R8a fights play every round's row through it) gives ``trace``'s
    rows and carries, from a ``first`` round and with a carry in."""
    rng = random.Random(f"rows-{system}")
    sys_ = systems.get(system)
    for k in range(RANDOM_SCENARIOS // 4):
        scenario = twin(system).random_scenario(rng)
        job = engine.prepare(scenario)
        tr = sys_.trace(job.compiled, _key(5000 + k), 40, first=3 * k)
        rows, carries = sys_.rows(job.compiled, _key(5000 + k), 40, first=3 * k)
        assert np.array_equal(rows, tr.rows) and np.array_equal(carries, tr.carries)
        if sys_.carries_state:
            tr = sys_.trace(job.compiled, _key(k), 5, first=k, carry=1)
            rows, carries = sys_.rows(job.compiled, _key(k), 5, first=k, carry=1)
            assert np.array_equal(rows, tr.rows) and np.array_equal(carries, tr.carries)


@pytest.mark.parametrize("system", SYSTEMS)
def test_fights_are_played_as_the_twin_plays_them(system):
    """R8a: fights of several rounds (engine.fights, from ``System.rows``) equal the
    twin's fights round by round (its ``play_fights_keyed``, or, for a twin without one,
    its rounds as they come: such a system must have no opening and carry nothing)."""
    import dataclasses

    from simkit.engine.fights import play_rows, trace_fights

    rng = random.Random(f"fights-{system}")
    sys_ = systems.get(system)
    mod = twin(system)
    for k in range(RANDOM_SCENARIOS // 4):
        fight_rounds = rng.choice((1, 2, 3))
        scenario = dataclasses.replace(mod.random_scenario(rng), fight_rounds=fight_rounds)
        if "opening" in sys_.fields:  # a system's opening field (readiness R8a)
            scenario = dataclasses.replace(
                scenario,
                combatants=tuple(
                    dataclasses.replace(
                        c, params=type(c.params)({**c.params, "opening": rng.random() < 0.5})
                    )
                    for c in scenario.combatants
                ),
            )
        job = engine.prepare(scenario)
        after = sys_.after_opening(scenario)
        later = None if after is None else sys_.compile(after, job.layout)
        key = _key(6000 + k)
        words = [int(w) for w in key[:4]]
        n = 6 * fight_rounds
        if hasattr(mod, "play_fights_keyed"):
            records = mod.play_fights_keyed(scenario, words, n, fight_rounds)
        else:
            assert after is None and not sys_.carries_state
            records = mod.play_rounds_keyed(scenario, words, n)
        rows = play_rows(sys_, job.compiled, later, key, 0, 6, fight_rounds)
        traced = trace_fights(sys_, job.compiled, later, key, n, fight_rounds)
        assert np.array_equal(rows, traced.rows)
        for r, (counts, _, carry, _) in enumerate(records):
            assert row_counts(rows[r], job.layout) == counts, f"round {r} differs"
            assert int(traced.carries[r]) == int(carry)
