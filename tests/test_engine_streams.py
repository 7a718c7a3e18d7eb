"""The engine over the per-round streams: workers, chunks and batches change nothing.

Every chunk ``k`` has the key ``chunk_state(seq, k)`` and every round of it its own
stream, so the result must not depend on the number of workers (threads playing
chunks), and a single-threaded run cut into batches (``batch_rounds``, R8 carried
from batch to batch) must give the same per-round means.
"""

from __future__ import annotations

import numpy as np
import pytest

import simkit
from simkit import engine, systems
from simkit.scenario import Scenario, scenario_from_dict
from simkit.systems.perception import kernel as perception
from simkit.systems.stream import chunk_state

ROUNDS = 2 * engine.CHUNK_ROUNDS + 1234  # three chunks, the last one short
SUM_FIELDS = ("s1", "s2", "sl", "sx", "tot")


def _readiness() -> Scenario:
    """Holds on both sides, so R8 stalemates (cycles of two rounds) occur."""
    return scenario_from_dict(
        {
            "scenario": {"name": "engine readiness", "system": "readiness"},
            "rules": {"order": "dynamic"},
            "combatant": [
                {"name": "A", "side": "a", "readiness": 2, "hold": "until_attacked"},
                {"name": "B", "side": "a", "readiness": 1, "attack_share": 0.5, "guard": "backup"},
                {"name": "W", "side": "w", "readiness": 2, "hold": "until_enemy_acts"},
            ],
        }
    )


def _perception(n_wolves: int) -> Scenario:
    """Two sides; 3 combatants use the histogram path, 6 the per-round path."""
    return scenario_from_dict(
        {
            "scenario": {"name": "engine perception", "system": "perception"},
            "rules": {"mode": "individual", "tie": "random"},
            "combatant": [
                {"name": "G", "side": "party", "perception": 4, "attack_share": 0.5},
                {"name": "A", "side": "party", "perception": 2},
                {"name": "W", "side": "wolves", "perception": 3, "count": n_wolves},
            ],
        }
    )


def _vtm() -> Scenario:
    """Delays, aborts and end-of-round actions."""
    return scenario_from_dict(
        {
            "scenario": {"name": "engine vtm", "system": "vtm"},
            "combatant": [
                {"name": "A", "side": "a", "dexterity": 3, "wits": 2, "abort": "always"},
                {"name": "B", "side": "a", "dexterity": 2, "wits": 1, "extra_actions": 1},
                {"name": "W", "side": "w", "dexterity": 2, "wits": 3, "delay": "until_enemy_acts"},
            ],
        }
    )


SCENARIOS = {
    "readiness": _readiness,
    "vtm": _vtm,
    "perception (histogram)": lambda: _perception(1),
    "perception (per round)": lambda: _perception(4),
}


def test_scenarios_cover_both_perception_paths():
    assert perception.hist_bins(len(_perception(1).combatants)) > 1
    assert perception.hist_bins(len(_perception(4).combatants)) == 1


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_workers_do_not_change_the_table(name):
    scenario = SCENARIOS[name]()
    assert len(engine.chunk_sizes(ROUNDS)) == 3
    one = simkit.run(scenario, rounds=ROUNDS, rng=11, workers=1)
    two = simkit.run(scenario, rounds=ROUNDS, rng=11, workers=2)
    three = simkit.run(scenario, rounds=ROUNDS, rng=11, workers=3)
    assert one.rounds == two.rounds == ROUNDS
    assert one.table.equals(two.table)
    assert one.table.equals(three.table)
    for f in SUM_FIELDS:
        assert np.array_equal(getattr(one.sums, f), getattr(two.sums, f)), f
    # and the seed matters
    other = simkit.run(scenario, rounds=ROUNDS, rng=12, workers=2)
    assert not np.array_equal(one.sums.s1, other.sums.s1)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_batches_keep_the_means(name):
    scenario = SCENARIOS[name]()
    seq = np.random.SeedSequence(2026)
    whole = engine.simulate(scenario, ROUNDS, seq, workers=2)
    batched = engine.simulate(scenario, ROUNDS, seq, batch_rounds=4096)
    assert whole.batches is None
    # 64 batches in each full chunk, one in the short last chunk
    per_chunk = engine.CHUNK_ROUNDS // 4096
    assert [int(b.tot[1]) for b in batched.batches] == [4096] * (2 * per_chunk) + [1234]
    # the batches add up to the run, and the per-round totals are the whole run's
    total = whole.layout.new_sums()
    for b in batched.batches:
        total.add(b)
    for f in SUM_FIELDS:
        assert np.array_equal(getattr(total, f), getattr(batched.sums, f)), f
    assert np.array_equal(batched.sums.s1, whole.sums.s1)
    assert batched.sums.tot[1] == whole.sums.tot[1] == ROUNDS
    means = simkit.Result.from_sums(scenario, 2026, batched.layout, batched.sums, 0.0, 1)
    want = simkit.run(scenario, rounds=ROUNDS, rng=seq)
    assert np.array_equal(means.table["mean"], want.table["mean"], equal_nan=True)
    if scenario.system == "perception":  # one-round cycles: nothing is cut by a batch
        for f in SUM_FIELDS:
            assert np.array_equal(getattr(batched.sums, f), getattr(whole.sums, f)), f
    else:  # R8 cycles cut by a batch boundary count as two: a few more cycles
        assert batched.sums.tot[0] >= whole.sums.tot[0]


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_batches_are_the_rounds_of_the_chunks_in_order(name):
    """Batch b of chunk k holds rounds 4096 b .. of chunk k's key (traced directly)."""
    scenario = SCENARIOS[name]()
    system = systems.get(scenario.system)
    compiled = engine.prepare(scenario).compiled
    seq = np.random.SeedSequence(99)
    rounds = engine.CHUNK_ROUNDS + 5000
    batched = engine.simulate(scenario, rounds, seq, batch_rounds=4096)
    per_chunk = engine.CHUNK_ROUNDS // 4096
    for k, b in ((0, 0), (0, 1), (0, per_chunk - 1), (1, 0), (1, 1)):
        key = chunk_state(seq, k)
        first = 4096 * b
        batch = batched.batches[k * per_chunk + b]
        carry = 0
        if first > 0:  # R8 carried into the batch (readiness; 0 elsewhere)
            carry = int(system.trace(compiled, key, first).carries[-1])
        tr = system.trace(compiled, key, int(batch.tot[1]), first=first, carry=carry)
        assert np.array_equal(batch.s1, tr.rows.sum(axis=0)), (k, b)
