"""The chunk kernel's running sums equal the per-round trace reduced in plain Python."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_drivers import compile_for

from simkit.scenario import scenario_from_dict
from simkit.systems.readiness import kernel as readiness
from simkit.systems.stream import chunk_state


def _scenario(hold_a: str, hold_b: str, guard: bool = False):
    return scenario_from_dict(
        {
            "scenario": {"name": "sums", "system": "readiness"},
            "combatant": [
                {"name": "A", "side": "a", "readiness": 3, "hold": hold_a, "guard": guard},
                {
                    "name": "B",
                    "side": "a",
                    "readiness": 2,
                    "defend": "hasty_up_to:2",
                    "hold": hold_a,
                },
                {"name": "C", "side": "c", "readiness": 3, "hold": hold_b, "count": 2},
            ],
        }
    )


def _reduce(rows: np.ndarray, layout) -> dict[str, np.ndarray]:
    """Regeneration-cycle sums of trace rows: a stalemate round joins the next round."""
    stalemate = rows[:, layout.scenario_offset] == 1
    pa, pb = layout.pair_indices()
    s1 = np.zeros(layout.size, np.int64)
    s2 = np.zeros(layout.size, np.int64)
    sl = np.zeros(layout.size, np.int64)
    sx = np.zeros(pa.size, np.int64)
    tot = np.zeros(3, np.int64)
    cycle = np.zeros(layout.size, np.int64)
    length = 0
    for r, row in enumerate(rows):
        cycle += row
        length += 1
        if stalemate[r] and r + 1 < len(rows):
            continue
        s1 += cycle
        s2 += cycle * cycle
        sl += cycle * length
        sx += cycle[pa] * cycle[pb]
        tot += [1, length, length * length]
        cycle[:] = 0
        length = 0
    return {"s1": s1, "s2": s2, "sl": sl, "sx": sx, "tot": tot}


@pytest.mark.parametrize(
    "hold_a,hold_b",
    [("never", "never"), ("until_attacked", "until_attacked"), ("until_enemy_acts", "never")],
)
def test_run_chunk_sums_equal_reduced_trace(hold_a, hold_b):
    scenario = _scenario(hold_a, hold_b, guard=True)
    compiled = compile_for(scenario)
    key = chunk_state(np.random.SeedSequence(42), 0)
    n = 3000
    rows = readiness.trace(compiled, key, n)
    expected = _reduce(rows, compiled.layout)
    sums = compiled.layout.new_sums()
    readiness.run_chunk(compiled, key, n, sums)
    for name, value in expected.items():
        np.testing.assert_array_equal(getattr(sums, name), value, err_msg=name)
    if hold_a == hold_b == "until_attacked":
        assert expected["tot"][1] > expected["tot"][0]  # some cycles had two rounds


def test_batches_carry_r8_and_keep_every_round():
    scenario = _scenario("until_attacked", "until_attacked")
    compiled = compile_for(scenario)
    key = chunk_state(np.random.SeedSequence(7), 0)
    whole = compiled.layout.new_sums()
    readiness.run_chunk(compiled, key, 1000, whole)
    parts = compiled.layout.new_sums()
    no_hold = False
    for first in range(0, 1000, 333):
        part = compiled.layout.new_sums()
        no_hold = readiness.run_chunk(
            compiled, key, min(333, 1000 - first), part, first=first, no_hold=no_hold
        )
        parts.add(part)
    np.testing.assert_array_equal(parts.s1, whole.s1)
    assert parts.rounds == whole.rounds == 1000
