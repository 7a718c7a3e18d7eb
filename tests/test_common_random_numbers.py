"""Common random numbers: two scenarios run with one seed see the same dice, round by round.

Every round of a chunk has its own stream (simkit/systems/stream.py), so what a round
draws cannot depend on how many draws the rounds before it used.  For every system,
two variants of a scenario that use different numbers of draws in many rounds (a hold
or abort policy, an attack share: ties, attacks and targets fall differently) still
roll the same initiative dice in round ``r``.  Checked two ways:

* on the kernels' traces (``System.trace``, whose events and stream states are held to
  the plain-Python twins by tests/test_contract.py): the ``roll`` events of both
  variants are equal in every round, while the stream states they leave behind differ
  in many rounds (else the check would be idle); the control, the same comparison on
  rounds shifted by one, fails in most rounds;
* statistically: the paired differences of per-batch means of ``actions`` have a
  much smaller standard error than the unpaired difference (and than a pairing of
  two different seeds).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from simkit import engine, systems
from simkit.scenario import Scenario, scenario_from_dict
from simkit.systems.stream import chunk_state


def party(hold: str) -> Scenario:
    """Party vs wolves; only Gunnar's hold policy varies."""
    return scenario_from_dict(
        {
            "scenario": {"name": f"crn party {hold}", "system": "readiness"},
            "combatant": [
                {"name": "Gunnar", "side": "party", "readiness": 3, "hold": hold},
                {"name": "Astrid", "side": "party", "readiness": 3, "guard": "backup"},
                {"name": "Leif", "side": "party", "readiness": 2, "attack_share": 0.5},
                {"name": "Wolf", "side": "wolves", "readiness": 2, "count": 3},
            ],
        }
    )


def vtm(abort: str) -> Scenario:
    """Four vampires; only the abort policy varies (aborts change which actions happen)."""
    return scenario_from_dict(
        {
            "scenario": {"name": f"crn vtm {abort}", "system": "vtm"},
            "combatant": [
                {
                    "name": "Ana",
                    "side": "a",
                    "dexterity": 3,
                    "wits": 2,
                    "abort": abort,
                    "attack_share": 0.6,
                    "extra_actions": 1,
                },
                {"name": "Bo", "side": "a", "dexterity": 2, "wits": 2, "abort": abort},
                {
                    "name": "Cy",
                    "side": "b",
                    "dexterity": 2,
                    "wits": 3,
                    "attack_share": 0.7,
                    "abort": abort,
                },
                {"name": "Di", "side": "b", "dexterity": 1, "wits": 4, "actions": 2},
            ],
        }
    )


def perception(share: float) -> Scenario:
    """Gunnar's party against wolves; only one combatant's attack share varies."""
    return scenario_from_dict(
        {
            "scenario": {"name": f"crn perception {share}", "system": "perception"},
            "combatant": [
                {"name": "Gunnar", "side": "party", "perception": 3, "attack_share": share},
                {"name": "Astrid", "side": "party", "perception": 2},
                {"name": "Wolf", "side": "wolves", "perception": 2, "count": 3},
            ],
        }
    )


VARIANTS = {
    "readiness": (party("never"), party("until_attacked")),
    "vtm": (vtm("never"), vtm("always")),
    "perception": (perception(1.0), perception(0.5)),
}
ROUNDS = 5000


def _rolls(system: Any, scenario: Scenario, events: np.ndarray, n: int, first: int) -> list:
    out: list[list[tuple[Any, ...]]] = [[] for _ in range(n)]
    for e in events:
        t = system.event_tuple(e, scenario)
        if t[0] == "roll":
            out[int(e[0]) - first].append(t)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variants_roll_the_same_dice_in_every_round(name):
    system = systems.get(name)
    key = chunk_state(np.random.SeedSequence(41), 3)
    first = 1000  # rounds far from the start of the chunk as well
    traces, rolls = [], []
    for scenario in VARIANTS[name]:
        job = engine.prepare(scenario)
        tr = system.trace(job.compiled, key, ROUNDS, first=first)
        traces.append(tr)
        rolls.append(_rolls(system, scenario, tr.events, ROUNDS, first))
    assert all(rolls[0]) and rolls[0] == rolls[1]
    # the variants use different numbers of draws in many rounds (else the test is idle)
    differ = int((traces[0].states != traces[1].states).any(axis=1).sum())
    assert differ > ROUNDS // 10, differ
    # control: the rolls of rounds shifted by one differ in most rounds
    shifted = system.trace(engine.prepare(VARIANTS[name][1]).compiled, key, ROUNDS, first=first + 1)
    later = _rolls(system, VARIANTS[name][1], shifted.events, ROUNDS, first + 1)
    wrong = sum(a != b for a, b in zip(rolls[0][1:], later[:-1], strict=True))
    assert wrong == 0  # round first + r + 1 is the same round in both
    wrong = sum(a != b for a, b in zip(rolls[0], later, strict=True))
    assert wrong > ROUNDS // 2, wrong


BATCH = 4096
BATCHES = 256  # 1,048,576 rounds: four chunks


def _batch_means(raw: engine.RawRun, m: int) -> np.ndarray:
    return np.array([b.s1[m] / b.tot[1] for b in raw.batches])


def test_paired_difference_has_smaller_standard_error():
    a, b = party("never"), party("until_attacked")
    rounds = BATCH * BATCHES
    seq = np.random.SeedSequence(2026)
    run_a = engine.simulate(a, rounds, seq, batch_rounds=BATCH)
    run_b = engine.simulate(b, rounds, seq, batch_rounds=BATCH)
    run_c = engine.simulate(b, rounds, np.random.SeedSequence(2027), batch_rounds=BATCH)
    assert len(engine.chunk_sizes(rounds)) == 4
    assert len(run_a.batches) == len(run_b.batches) == BATCHES
    lay = run_a.layout
    report = []
    for i, name in enumerate(lay.names):
        m = lay.count_index(i, "actions")
        xa, xb, xc = (_batch_means(r, m) for r in (run_a, run_b, run_c))
        k = len(xa)
        paired = float((xb - xa).std(ddof=1)) / np.sqrt(k)
        unpaired = float(np.sqrt(xa.var(ddof=1) / k + xb.var(ddof=1) / k))
        other_seed = float((xc - xa).std(ddof=1)) / np.sqrt(k)
        report.append(
            f"{name}: paired {paired:.2e}, unpaired {unpaired:.2e}, two seeds {other_seed:.2e}"
        )
        # the hold policy changes the mean, and the paired se is far below the unpaired
        assert abs(xb.mean() - xa.mean()) > 5 * paired, report[-1]
        assert paired < 0.7 * unpaired, report[-1]
        # control: pairing batches of two different seeds gains nothing
        assert other_seed > 0.8 * unpaired, report[-1]
    print("\n".join(report))
