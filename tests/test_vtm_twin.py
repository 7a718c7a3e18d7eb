"""The vtm kernel against its plain-Python twin, round by round, on the same stream."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_drivers import compile_for
from naive_rng import NaiveStream
from naive_vtm import play_round, row_maker

import simkit
from simkit import engine
from simkit.engine import CHUNK_ROUNDS, simulate
from simkit.scenario import Scenario, scenario_from_dict
from simkit.systems.stream import chunk_state
from simkit.systems.vtm import kernel as vtm

SHARES = (1.0, 1.0, 1.0, 0.5, 0.3, 0.0)


def random_scenario(rng: np.random.Generator, max_entries: int = 5) -> Scenario:
    """A random valid vtm scenario touching every field, rule and policy."""
    n_sides = int(rng.choice([2, 2, 3]))
    sides = [f"side{s}" for s in range(n_sides)]
    n_entries = int(rng.integers(n_sides, max_entries + 1))
    entries = []
    for k in range(n_entries):
        e: dict = {"name": f"F{k}", "side": sides[k] if k < n_sides else str(rng.choice(sides))}
        if rng.random() < 0.5:
            e["rating"] = int(rng.integers(0, 5))  # narrow: many ties
        else:
            e["dexterity"] = int(rng.integers(0, 3))
            e["wits"] = int(rng.integers(0, 3))
        if rng.random() < 0.3:
            e["wound_penalty"] = int(rng.integers(0, 4))
        if rng.random() < 0.4:
            e["actions"] = int(rng.integers(1, 4))
        if rng.random() < 0.3:
            e["extra_actions"] = int(rng.integers(0, 3))
        if rng.random() < 0.35:
            e["delay"] = "until_enemy_acts"
        if rng.random() < 0.35:
            e["abort"] = "always"
        if rng.random() < 0.4:
            e["attack_share"] = float(rng.choice(SHARES))
        if rng.random() < 0.25:
            e["count"] = int(rng.integers(2, 4))
        entries.append(e)
    # targets: a named opponent or an opponent group, for some combatants
    for e in entries:
        if rng.random() < 0.3:
            opp = [o for o in entries if o["side"] != e["side"]]
            o = opp[int(rng.integers(len(opp)))]
            e["target"] = o["name"] if o.get("count", 1) > 1 else o["name"]
            if o.get("count", 1) > 1 and rng.random() < 0.5:
                e["target"] = f"{o['name']} 1"
    data = {
        "scenario": {"name": "random", "system": "vtm"},
        "rules": {"tie": str(rng.choice(["simultaneous", "random"]))},
        "combatant": entries,
    }
    return scenario_from_dict(data)


def twin_rows(scenario: Scenario, key: np.ndarray, n_rounds: int, first: int = 0) -> np.ndarray:
    """The twin's counts of rounds ``first ..``, each round on its own stream."""
    row = row_maker(engine.layout_for(scenario))
    rows = [
        row(play_round(scenario, NaiveStream.for_round(key, r)))
        for r in range(first, first + n_rounds)
    ]
    return np.array(rows, dtype=np.int64)


def explain(scenario: Scenario, kernel: np.ndarray, twin: np.ndarray) -> str:
    layout = engine.layout_for(scenario)
    labels = [""] * layout.size
    for i, name in enumerate(layout.names):
        for m in layout.counts:
            labels[layout.count_index(i, m)] = f"{name}.{m}"
        for j, other in enumerate(layout.names):
            labels[layout.before_index(i, j)] = f"{name}.acts_before.{other}"
        for k in range(layout.dist_sizes[i]):
            labels[layout.dist_index(i, k)] = f"{name}.actions_dist.{k}"
    labels[layout.scenario_offset] = "simultaneous"
    bad = np.nonzero((kernel != twin).any(axis=1))[0]
    r = int(bad[0])
    diffs = [
        f"{labels[m]}: kernel {kernel[r, m]} twin {twin[r, m]}"
        for m in np.nonzero(kernel[r] != twin[r])[0]
    ]
    return f"round {r}: " + "; ".join(diffs) + f"\nscenario: {scenario.to_dict()}"


def check_twin(scenario: Scenario, seed: int, n_rounds: int, first: int = 0) -> None:
    compiled = compile_for(scenario)
    key = chunk_state(np.random.SeedSequence(seed), 0)
    twin = twin_rows(scenario, key, n_rounds, first)
    kernel = vtm.trace(compiled, key, n_rounds, first=first)
    assert kernel.shape == (n_rounds, compiled.layout.size)
    if not np.array_equal(kernel, twin):
        pytest.fail(explain(scenario, kernel, twin))


def test_twin_agrees_on_random_scenarios():
    """>= 10,000 rounds over 160 random scenarios, every per-round count equal."""
    rng = np.random.default_rng(20260401)
    total = 0
    for k in range(160):
        scenario = random_scenario(rng)
        check_twin(scenario, seed=k, n_rounds=70, first=1000 * (k % 3))
        total += 70
    assert total >= 10_000


def test_random_scenarios_cover_every_variant():
    rng = np.random.default_rng(20260401)
    seen: set[str] = set()
    for _ in range(160):
        s = random_scenario(rng)
        seen.add(f"tie={s.rules['tie']}")
        seen.add(f"sides={len(s.sides)}")
        for c in s.combatants:
            seen.add(f"delay={c['delay']}")
            seen.add(f"abort={c['abort']}")
            seen.add("dexterity+wits" if c["dexterity"] is not None else "rating")
            for key in ("actions", "extra_actions", "wound_penalty"):
                if c[key] > (1 if key == "actions" else 0):
                    seen.add(key)
            if 0 < c["attack_share"] < 1:
                seen.add("attack_share between")
            if c["attack_share"] == 0:
                seen.add("attack_share 0")
            if c["target"] != "random":
                seen.add("target named" if c["target"] in s.names else "target group")
    expected = {
        "tie=simultaneous", "tie=random", "sides=2", "sides=3",
        "delay=never", "delay=until_enemy_acts", "abort=never", "abort=always",
        "dexterity+wits", "rating", "actions", "extra_actions", "wound_penalty",
        "attack_share between", "attack_share 0", "target named", "target group",
    }  # fmt: skip
    assert expected <= seen, expected - seen


@pytest.mark.parametrize("tie", ["simultaneous", "random"])
def test_twin_agrees_with_many_combatants(tie):
    """More than 16 combatants: V2 sorts by insertion instead of counting ranks."""
    data = {
        "scenario": {"name": "crowd", "system": "vtm"},
        "rules": {"tie": tie},
        "combatant": [
            {"name": "Ghoul", "side": "ghouls", "rating": 3, "count": 9, "abort": "always"},
            {"name": "Hunter", "side": "hunters", "rating": 4, "count": 6, "actions": 2},
            {"name": "Elder", "side": "elders", "rating": 8, "extra_actions": 2,
             "delay": "until_enemy_acts"},
            {"name": "Thrall", "side": "elders", "rating": 3, "count": 2, "attack_share": 0.5},
        ],
    }  # fmt: skip
    check_twin(scenario_from_dict(data), seed=7, n_rounds=150)


def _sums_from_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return rows.sum(axis=0), (rows * rows).sum(axis=0)


@pytest.mark.parametrize(
    "policies",
    [
        {},  # ranked: order codes give every order metric
        {"abort": "always"},  # coded, counted
        {"delay": "until_enemy_acts"},  # coded, through the turn-group stack
        {"actions": 2, "extra_actions": 1},
    ],
)
@pytest.mark.parametrize("count", [2, 3])  # 4 and 6 combatants: codes and direct pairs
@pytest.mark.parametrize("tie", ["simultaneous", "random"])
def test_run_chunk_sums_equal_trace_sums(policies, count, tie):
    """run_chunk (histograms, constant counts) equals flush_cycle of every traced round."""
    data = {
        "scenario": {"name": "sums", "system": "vtm"},
        "rules": {"tie": tie},
        "combatant": [
            {"name": "A", "side": "a", "rating": 4, "count": count, **policies},
            {"name": "B", "side": "b", "rating": 4, "count": count, "target": "A"},
        ],
    }
    scenario = scenario_from_dict(data)
    compiled = compile_for(scenario)
    n_rounds = 3000
    key = chunk_state(np.random.SeedSequence(11), 0)
    rows = vtm.trace(compiled, key, n_rounds)
    sums = compiled.layout.new_sums()
    assert vtm.run_chunk(compiled, key, n_rounds, sums) is False  # nothing carries over
    s1, s2 = _sums_from_rows(rows)
    assert np.array_equal(sums.s1, s1)
    assert np.array_equal(sums.s2, s2)
    assert np.array_equal(sums.sl, s1)  # cycles of one round
    assert sums.tot.tolist() == [n_rounds, n_rounds, n_rounds]
    # rounds first.. of the chunk: the same counts, so batches add up to the chunk
    parts = compiled.layout.new_sums()
    for first in (0, 1000, 1001, 2500):
        size = {0: 1000, 1000: 1, 1001: 1499, 2500: 500}[first]
        vtm.run_chunk(compiled, key, size, parts, first=first)
    assert np.array_equal(parts.s1, sums.s1) and np.array_equal(parts.s2, sums.s2)


def test_rounds_have_streams_of_their_own():
    """Round r depends on the key and r only (common random numbers across variants)."""
    scenario = random_scenario(np.random.default_rng(3))
    compiled = compile_for(scenario)
    key = chunk_state(np.random.SeedSequence(4), 2)
    whole = vtm.trace(compiled, key, 50)
    assert np.array_equal(vtm.trace(compiled, key, 20, first=30), whole[30:])


def test_engine_batches_equal_the_whole_run():
    scenario = random_scenario(np.random.default_rng(8))
    seq = np.random.SeedSequence(99)
    whole = simulate(scenario, 5000, seq, workers=1)
    batched = simulate(scenario, 5000, seq, workers=1, batch_rounds=700)
    assert batched.batches is not None and len(batched.batches) == 8
    assert np.array_equal(whole.sums.s1, batched.sums.s1)
    assert np.array_equal(whole.sums.s2, batched.sums.s2)


def test_same_result_for_any_worker_count():
    scenario = random_scenario(np.random.default_rng(5))
    rounds = CHUNK_ROUNDS + 1000
    one = simkit.run(scenario, rounds=rounds, rng=3, workers=1)
    two = simkit.run(scenario, rounds=rounds, rng=3, workers=2)
    assert one.table.equals(two.table)


def test_round_invariants():
    """Per round: somebody acts first; every declared action is taken or aborted; extra
    actions are always taken; acts_before is a strict order; known <= opponents."""
    rng = np.random.default_rng(77)
    for k in range(40):
        scenario = random_scenario(rng)
        layout = engine.layout_for(scenario)
        rows = vtm.trace(compile_for(scenario), chunk_state(np.random.SeedSequence(k), 0), 50)
        n = layout.n
        for row in rows:
            assert sum(row[layout.count_index(i, "first_action")] for i in range(n)) >= 1
            for i, c in enumerate(scenario.combatants):
                actions = row[layout.count_index(i, "actions")]
                aborts = row[layout.count_index(i, "aborts")]
                assert actions + aborts == c["actions"] + c["extra_actions"]
                assert aborts <= c["actions"]
                assert row[layout.count_index(i, "defenses")] == aborts
                assert row[layout.count_index(i, "no_action")] == (actions == 0)
                assert row[layout.count_index(i, "known_declarations")] <= len(
                    scenario.opponents(i)
                )
                assert sum(row[layout.dist_index(i, m)] for m in range(layout.dist_sizes[i])) == 1
                for j in range(n):
                    before = row[layout.before_index(i, j)] + row[layout.before_index(j, i)]
                    assert before <= 1
