"""The readiness lanes (simkit/systems/readiness/lanes.py): rounds played side by side
write exactly the sums of the scalar path, and a scenario they cannot serve says why by
name (``Compiled.lanes_off``).  The tests hold them on (``lanes.ENABLED``) and compare
them with the same scenario forced onto the scalar path."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import numpy as np
import pytest
from contract_support import cycles, twin

from simkit import engine, systems
from simkit.metrics import flush_rows
from simkit.scenario import load_scenario, scenario_from_dict
from simkit.systems.readiness import kernel, lanes, lanes_flush
from simkit.systems.stream import chunk_state
from simkit.systems.support import JIT_DISABLED

ROOT = Path(__file__).resolve().parents[1]
READINESS = systems.get("readiness")


@pytest.fixture(autouse=True)
def lanes_on(monkeypatch):
    monkeypatch.setattr(lanes, "ENABLED", True)


def test_the_lanes_are_off_unless_enabled(monkeypatch):
    monkeypatch.setattr(lanes, "ENABLED", False)
    bench = load_scenario(ROOT / "benchmarks" / "scenarios" / "four_readiness.toml")
    assert engine.prepare(bench).compiled.lanes_off == "not_enabled"


def eligible_scenario(rng: random.Random):
    """A random readiness scenario the lanes serve: 2-4 sides, 2-8 combatants (some in
    groups), at most MAX_LANE_DICE dice a round, attack_share 0 or 1, and at random every
    field value they model: surprised, every defend policy (``+when_effective`` forms
    too), every order, targets by name or group.  No hold, guard, advantage or
    hit_chance below 1."""
    tw = twin("readiness")
    n_sides = rng.choice((2, 2, 3, 4))
    total = rng.randint(n_sides, lanes.MAX_LANE_COMBATANTS)
    entries = []
    made = 0
    while made < total:
        room = total - made - max(0, n_sides - len(entries) - 1)
        count = 1 if rng.random() < 0.6 else rng.randint(1, max(1, min(3, room)))
        side = f"side{len(entries)}" if len(entries) < n_sides else f"side{rng.randrange(n_sides)}"
        entries.append({"name": f"C{len(entries)}", "side": side, "count": count})
        made += count
    for e in entries:
        e["readiness"] = rng.randint(1, max(1, lanes.MAX_LANE_DICE // total))
        e["attack_share"] = rng.choice((0.0, 1.0, 1.0, 1.0))
        if rng.random() < 0.8:
            e["defend"] = rng.choice(tw.RANDOM_DEFENDS + tw.RANDOM_WHEN_EFFECTIVE_DEFENDS)
        if rng.random() < 0.15:
            e["surprised"] = True
        opponents = [o for o in entries if o["side"] != e["side"]]
        if rng.random() < 0.3 and opponents:
            e["target"] = rng.choice(opponents)["name"]
    entries[0]["attack_share"] = 1.0
    rules = {"order": rng.choice(("dynamic", "chain", "chain_unbroken"))}
    data = {"scenario": {"name": "lanes", "system": "readiness"}, "rules": rules}
    return scenario_from_dict({**data, "combatant": entries}, source="<lanes scenario>")


def _key(seed: int, k: int = 0) -> np.ndarray:
    return chunk_state(np.random.SeedSequence(seed), k)


def _scalar(compiled):
    """The same scenario forced onto the scalar path."""
    return dataclasses.replace(compiled, lanes_off="forced")


def test_eligible_scenarios_take_the_lanes():
    rng = random.Random("lanes-eligible")
    for _ in range(30):
        scenario = eligible_scenario(rng)
        assert engine.prepare(scenario).compiled.lanes_off is None, scenario.to_dict()
    bench = load_scenario(ROOT / "benchmarks" / "scenarios" / "four_readiness.toml")
    assert engine.prepare(bench).compiled.lanes_off is None


def _with(rules=None, fight_rounds=0, **fields):
    """The benchmark scenario (2 x 2, readiness 3) with fields of its first entry changed."""
    entries = [
        {"name": "Hero", "side": "party", "readiness": 3, "count": 2, **fields},
        {"name": "Foe", "side": "foes", "readiness": 3, "count": 2},
    ]
    head = {"name": "lanes", "system": "readiness"}
    if fight_rounds:
        head["fight_rounds"] = fight_rounds
    data = {"scenario": head, "rules": rules or {}}
    return scenario_from_dict({**data, "combatant": entries}, source="<lanes>")


def test_reasons_by_name():
    off = {
        "hold": _with(hold="until_attacked"),
        "guard": _with(guard="backup"),
        "fights": _with(fight_rounds=3),
        "hit_chance": _with(hit_chance=0.5),
        "attack_share_between_0_and_1": _with(attack_share=0.5),
        "advantage": _with(advantage=1),
        "too_many_combatants": _with(count=7),
        "too_many_dice": _with(readiness=18),
    }
    for reason, scenario in off.items():
        assert reason in lanes.REASONS
        assert engine.prepare(scenario).compiled.lanes_off == reason, reason
    # R7a: a guard of named allies is a guard
    named = _with(guard=["Hero"], guard_mode="always")
    assert engine.prepare(named).compiled.lanes_off == "guard"
    # a guard that never answers changes nothing the lanes play
    assert engine.prepare(_with(guard="never")).compiled.lanes_off is None
    # what the lanes model keeps them on
    for fields in (
        {"surprised": True},
        {"defend": "hasty_up_to:2+when_effective"},
        {"attack_share": 0.0},
    ):
        assert engine.prepare(_with(**fields)).compiled.lanes_off is None, fields
    for order in ("dynamic", "chain", "chain_unbroken"):
        assert engine.prepare(_with({"order": order})).compiled.lanes_off is None


def test_a_count_the_lanes_do_not_carry_turns_them_off(monkeypatch):
    base = load_scenario(ROOT / "benchmarks" / "scenarios" / "four_readiness.toml")
    monkeypatch.setattr(lanes, "LANE_CARRIES", tuple(c for c in lanes.LANE_CARRIES if c != "hits"))
    assert engine.prepare(base).compiled.lanes_off == "uncarried_count"


def test_lanes_equal_the_flushed_trace():
    """run_chunk on the lanes equals the traced rounds (the twin's equals) flushed as
    cycles, from several first rounds and lengths (whole blocks and a tail)."""
    rng = random.Random("lanes-trace")
    for k in range(8):
        scenario = eligible_scenario(rng)
        job = engine.prepare(scenario)
        assert job.compiled.lanes_off is None
        key = _key(4000 + k)
        n, first = rng.choice((128, 300, 1000)), rng.randrange(0, 500)
        tr = READINESS.trace(job.compiled, key, n, first=first)
        rows, lengths = cycles(tr.rows, tr.carries)
        want = flush_rows(rows, job.layout, lengths)
        got = job.layout.new_sums()
        assert READINESS.run_chunk(job.compiled, key, n, got, first=first) == 0
        assert got.equals(want), scenario.to_dict()


@pytest.mark.skipif(JIT_DISABLED, reason="a million rounds: too slow without the JIT")
def test_lanes_and_scalar_path_write_the_same_sums_over_a_million_rounds():
    rng = random.Random("lanes-million")
    total = 0
    k = 0
    while total < 1_000_000:
        scenario = eligible_scenario(rng)
        job = engine.prepare(scenario)
        assert job.compiled.lanes_off is None
        n = rng.choice((65_536, 100_000, 131_077))
        key, first = _key(5000 + k), rng.randrange(0, 1000)
        fast, slow = job.layout.new_sums(), job.layout.new_sums()
        kernel.run_chunk(job.compiled, key, n, fast, first=first)
        kernel.run_chunk(_scalar(job.compiled), key, n, slow, first=first)
        assert fast.equals(slow), scenario.to_dict()
        total += n
        k += 1


def test_the_packed_flush_covers_groups_sides_and_every_kind_of_pair():
    """The lanes' flush from the packed counts (lanes_flush.py) on groups, sides and
    ratio pairs of every kind: on acts_before and actions_dist slots (rows the flush
    derives), on group and side slots, and on a count the lanes never make (its pair
    skipped: 0 in every round).  Its sums are the scalar path's and the flushed trace's."""
    entries = [
        {"name": "Hero", "side": "party", "readiness": 3, "count": 2, "defend": "hasty_up_to:3"},
        {"name": "Mage", "side": "party", "readiness": 2, "attack_share": 0.0},
        {"name": "Foe", "side": "foes", "readiness": 3, "count": 2, "defend": "always"},
        {"name": "Orc", "side": "beasts", "readiness": 4, "target": "Hero"},
    ]
    data = {"scenario": {"name": "lanes", "system": "readiness"}, "rules": {"order": "chain"}}
    scenario = scenario_from_dict({**data, "combatant": entries}, source="<lanes>")
    layout = engine.layout_for(scenario)
    wasted = layout.count_index(0, "wasted_defenses")
    unit, per = layout.unit_offset, len(layout.aggregated)
    extra = (
        (layout.before_index(0, 1), layout.dist_index(2, 0)),
        (layout.dist_index(5, 2), layout.before_index(5, 3)),
        (unit + per + layout.aggregated.index("hasty_scale_total"), unit + 1),
        (wasted, layout.dist_index(1, 1)),
    )
    job = engine.prepare(scenario, pairs=extra)
    compiled = job.compiled
    assert compiled.lanes_off is None
    UNITS, _, PAIRS, NEAR, _, DERIVED, *_ = lanes_flush.flush_plan(compiled)
    assert DERIVED.shape[1] == 5 and UNITS.shape[1] > 0  # 2 before and 3 dist rows, units
    assert NEAR.shape[1] > 0  # pairs summed in their word's pass
    assert PAIRS.shape[1] + NEAR.shape[1] == len(layout.pairs) + len(extra) - 1  # wasted: skipped
    for k, (n, first) in enumerate(((1000, 3), (40_000, 77))):
        key = _key(6000 + k)
        fast, slow = job.layout.new_sums(), job.layout.new_sums()
        kernel.run_chunk(compiled, key, n, fast, first=first)
        kernel.run_chunk(_scalar(compiled), key, n, slow, first=first)
        assert fast.equals(slow)
        if n <= 1000:
            tr = READINESS.trace(compiled, key, n, first=first)
            rows, lengths = cycles(tr.rows, tr.carries)
            assert fast.equals(flush_rows(rows, job.layout, lengths))


def test_a_short_last_block_is_flushed_from_its_lanes():
    """Rounds that are not a multiple of LANES (nor of 16): the last block's rounds are
    played by the scalar player, packed into their lanes and flushed by
    ``lanes_flush.flush_block`` told how many lanes hold rounds; the padding lanes add
    nothing, to actions_dist's slot 0, no_action, acts_before and pairs of them too.
    The sums are the scalar path's."""
    assert lanes.LANES == 256
    entries = [
        {"name": "Hero", "side": "party", "readiness": 3, "count": 2, "defend": "hasty_up_to:3"},
        {"name": "Mage", "side": "party", "readiness": 2, "attack_share": 0.0},
        {"name": "Foe", "side": "foes", "readiness": 3, "count": 2, "defend": "always"},
    ]
    data = {"scenario": {"name": "lanes", "system": "readiness"}, "rules": {"order": "dynamic"}}
    scenario = scenario_from_dict({**data, "combatant": entries}, source="<lanes>")
    layout = engine.layout_for(scenario)
    extra = (
        (layout.before_index(0, 3), layout.dist_index(2, 0)),
        (layout.dist_index(0, 0), layout.count_index(2, "no_action")),
        (layout.count_index(1, "no_action"), layout.before_index(4, 1)),
    )
    rng = random.Random("lanes-short")
    scenarios = [(scenario, extra)] + [(eligible_scenario(rng), ()) for _ in range(3)]
    for k, (sc, pairs) in enumerate(scenarios):
        job = engine.prepare(sc, pairs=pairs)
        assert job.compiled.lanes_off is None
        for n in (1000, 130, 7):
            key, first = _key(7000 + k), rng.randrange(0, 500)
            fast, slow = job.layout.new_sums(), job.layout.new_sums()
            kernel.run_chunk(job.compiled, key, n, fast, first=first)
            kernel.run_chunk(_scalar(job.compiled), key, n, slow, first=first)
            assert fast.equals(slow), (sc.to_dict(), n)
