"""Common random numbers: two scenarios run with one seed see the same dice, round by round.

Every round of a chunk has its own stream (simkit/random_stream.py), so what a round
draws cannot depend on how many draws the rounds before it used.  Two readiness
scenarios that differ only in one combatant's hold policy use different numbers of
draws in many rounds (T3 ties, attacks and targets fall differently), yet in round
``r`` both roll the same R1 dice.  Checked three ways:

* the twin (tests/naive_readiness.py) logs identical R1 dice for both scenarios in
  every round, and each scenario's kernel trace equals its twin, draw for draw;
* the kernels alone, on scenarios whose counts reveal a comparison of two dice
  (nobody attacks A or B): in every round, both kernels order A and B as round
  ``r``'s stream rolled them;
* statistically: the paired differences of per-batch means of ``actions`` have a
  much smaller standard error than the unpaired difference (and than a pairing of
  two different seeds).

The controls show that each check could fail: with one continuous stream per chunk
(the old design) the two scenarios' dice part after the first round in which their
draws differ, and shifting one scenario's rounds by one breaks the kernel check.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from kernel_drivers import compile_for, readiness_round_states
from naive_readiness import counts_from_row, play_round, play_rounds_keyed
from naive_rng import NaiveStream

from simkit import engine
from simkit.scenario import Scenario, scenario_from_dict
from simkit.systems.readiness import kernel as readiness
from simkit.systems.stream import chunk_state


def party(hold: str) -> Scenario:
    """Party vs wolves; only Gunnar's hold policy varies."""
    return scenario_from_dict(
        {
            "scenario": {"name": f"crn party {hold}", "system": "readiness"},
            "combatant": [
                {"name": "Gunnar", "side": "party", "readiness": 3, "hold": hold},
                {"name": "Astrid", "side": "party", "readiness": 3, "guard": True},
                {"name": "Leif", "side": "party", "readiness": 2, "attack_share": 0.5},
                {"name": "Wolf", "side": "wolves", "readiness": 2, "count": 3},
            ],
        }
    )


def duel_with_bystanders(hold: str) -> Scenario:
    """A and B (one die each, never attacking, never attacked) beside a fight of H and D.

    D attacks H, H attacks D half the time; H's hold policy varies.  A holding H keeps
    its dice for defenses, so it acts (and draws ``chance``) a different number of
    times.  A and B only take their turns: A acts before B exactly when A's die beats
    B's (a tie goes to T3, a draw that may differ between the two scenarios).
    """
    return scenario_from_dict(
        {
            "scenario": {"name": f"crn duel {hold}", "system": "readiness"},
            "combatant": [
                {"name": "A", "side": "a", "readiness": 1, "attack_share": 0.0},
                {"name": "B", "side": "b", "readiness": 1, "attack_share": 0.0},
                {
                    "name": "H",
                    "side": "h",
                    "readiness": 3,
                    "attack_share": 0.5,
                    "target": "D",
                    "hold": hold,
                },
                {"name": "D", "side": "d", "readiness": 2, "target": "H"},
            ],
        }
    )


HOLDS = ("never", "until_attacked")
TWIN_ROUNDS = 5000
KERNEL_ROUNDS = 20_000


def _r1_dice(log: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return [e for e in log if e[0] == "dice"]


def test_twin_sees_the_same_dice_in_every_round():
    """Both scenarios roll the same R1 dice in round r; the kernels agree with the twins."""
    scenarios = [party(h) for h in HOLDS]
    key = chunk_state(np.random.SeedSequence(41), 0)
    key_words = [int(w) for w in key[:4]]
    played = [play_rounds_keyed(s, key, TWIN_ROUNDS) for s in scenarios]
    no_hold = [False, False]
    draws_differ = 0
    for r in range(TWIN_ROUNDS):
        logs = []
        for v, s in enumerate(scenarios):
            log: list[tuple[Any, ...]] = []
            counts = play_round(s, NaiveStream.for_round(key_words, r), no_hold[v], log)
            assert counts == played[v][0][r]
            no_hold[v] = bool(counts[("", "stalemate")])
            logs.append(log)
        assert _r1_dice(logs[0]) == _r1_dice(logs[1]), f"round {r}"
        draws_differ += played[0][1][r] != played[1][1][r]
    # the hold policy changes how many draws many rounds use (else the test is idle)
    assert draws_differ > TWIN_ROUNDS // 10, draws_differ
    # each kernel plays exactly its twin's rounds, draw for draw
    for v, s in enumerate(scenarios):
        compiled = compile_for(s)
        rows = readiness.trace(compiled, key, TWIN_ROUNDS)
        states = readiness_round_states(compiled, key, TWIN_ROUNDS)
        counts, twin_states = played[v]
        for r in range(TWIN_ROUNDS):
            assert counts_from_row(rows[r], compiled.layout) == counts[r], (HOLDS[v], r)
            assert [int(w) for w in states[r]] == twin_states[r], (HOLDS[v], r)


def test_control_one_continuous_stream_would_part_the_dice():
    """With one stream for the whole chunk (no per-round streams) the dice would differ."""
    scenarios = [party(h) for h in HOLDS]
    key = chunk_state(np.random.SeedSequence(41), 0)
    streams = [NaiveStream(int(w) for w in key[:6]), NaiveStream(int(w) for w in key[:6])]
    no_hold = [False, False]
    parted = 0
    for _ in range(200):
        logs = []
        for v, s in enumerate(scenarios):
            log: list[tuple[Any, ...]] = []
            counts = play_round(s, streams[v], no_hold[v], log)
            no_hold[v] = bool(counts[("", "stalemate")])
            logs.append(log)
        parted += _r1_dice(logs[0]) != _r1_dice(logs[1])
    assert parted > 150


def _a_before_b(compiled: readiness.Compiled, rows: np.ndarray) -> np.ndarray:
    return rows[:, compiled.layout.before_index(0, 1)]


@pytest.mark.parametrize("hold", ["until_attacked", "until_enemy_acts"])
def test_kernels_order_the_same_dice_in_every_round(hold):
    """Both kernels put A before B exactly when round r's stream rolled A higher."""
    key = chunk_state(np.random.SeedSequence(43), 1)
    key_words = [int(w) for w in key[:4]]
    first = 1000  # rounds far from the start of the chunk as well
    dice = []
    for r in range(first, first + KERNEL_ROUNDS):
        ns = NaiveStream.for_round(key_words, r)
        dice.append((ns.roll(6), ns.roll(6)))  # R1 in scenario order: A's die, then B's
    da, db = np.array(dice).T
    decided = da != db
    want = (da > db)[decided]
    variants = [duel_with_bystanders("never"), duel_with_bystanders(hold)]
    compiled = [compile_for(s) for s in variants]
    for c in compiled:
        rows = readiness.trace(c, key, KERNEL_ROUNDS, first=first)
        assert np.array_equal(_a_before_b(c, rows)[decided], want)
    # the variants use different numbers of draws in many rounds: with one continuous
    # stream their dice would part
    states = [readiness_round_states(c, key, KERNEL_ROUNDS, first=first) for c in compiled]
    differ = int((states[0] != states[1]).any(axis=1).sum())
    assert differ > KERNEL_ROUNDS // 10, differ
    # control: the same check on rounds shifted by one fails in about half the rounds
    shifted = readiness.trace(compiled[1], key, KERNEL_ROUNDS, first=first + 1)
    wrong = int((_a_before_b(compiled[1], shifted)[decided] != want).sum())
    assert wrong > decided.sum() // 4


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
