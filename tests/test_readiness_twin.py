"""The readiness kernel against its plain-Python twin, fed identical draws.

For many randomly generated scenarios (seeded, so every failure is reproducible) the
kernel's ``trace`` and the twin (tests/naive_readiness.py) play the same rounds of a
chunk, round ``r`` from its own stream (``NaiveStream.for_round(key, r)`` for the
twin), carrying R8 from round to round, and every per-round count must be equal.
Every round must also consume exactly the same draws: a small driver
(tests/kernel_drivers.py) plays the kernel's own round function on the per-round
streams and records the stream state each round leaves, which must equal the twin's.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from kernel_drivers import compile_for, readiness_round_states, revision_1_part
from naive_readiness import counts_from_row, play_rounds_keyed, to_toml

from simkit.metrics import flush_cycle
from simkit.scenario import Scenario, scenario_from_dict
from simkit.systems.readiness import kernel as readiness
from simkit.systems.stream import chunk_state

HOLDS = ("never", "until_attacked", "until_enemy_acts")
DEFENDS = ("always", "never", "unless_hasty", "hasty_up_to:0", "hasty_up_to:1", "hasty_up_to:3")
SHARES = (0.0, 1.0, 1.0, 0.5, 0.25, 0.8)


def random_scenario_dict(rng: random.Random, name: str, all_hold: bool = False) -> dict[str, Any]:
    """A random valid readiness scenario: 2-3 sides, 2-6 combatants, readiness 1-5."""
    n_sides = rng.choice((2, 2, 3))
    total = rng.randint(max(2, n_sides), 6)
    sides = [f"side{k}" for k in range(n_sides)]
    # entries (count groups) until `total` combatants; the first n_sides get distinct sides
    entries: list[dict[str, Any]] = []
    made = 0
    while made < total:
        room = total - made - max(0, n_sides - len(entries) - 1)  # leave one per missing side
        count = 1 if rng.random() < 0.6 else rng.randint(1, min(3, room))
        side = sides[len(entries)] if len(entries) < n_sides else rng.choice(sides)
        entries.append({"name": f"C{len(entries)}", "side": side, "count": count})
        made += count
    # members of each entry after count expansion: (name, group, side)
    members = []
    for e in entries:
        if e["count"] == 1:
            members.append((e["name"], e["name"], e["side"]))
        else:
            members += [
                (f"{e['name']} {k}", e["name"], e["side"]) for k in range(1, e["count"] + 1)
            ]
    combatants = []
    for e in entries:
        c = dict(e)
        if c["count"] == 1:
            del c["count"]
        c["readiness"] = rng.randint(1, 5)
        if rng.random() < 0.4:
            c["advantage"] = rng.choice((1, 2, 3, 5, 9))
        if rng.random() < 0.3:
            c["role"] = "secondary"
        elif rng.random() < 0.3:
            c["weakness"] = rng.randint(0, 3)
        if all_hold:
            c["hold"] = rng.choice(HOLDS[1:])
        else:
            c["hold"] = rng.choice(HOLDS)
        c["defend"] = rng.choice(DEFENDS)
        if rng.random() < 0.35:
            c["guard"] = True
        share = rng.choice(SHARES)
        if rng.random() < 0.15:
            share = round(rng.random(), 3)
        c["attack_share"] = share
        # target: random, one opponent by name, or an opponent count group's base name
        opponents = [m for m in members if m[2] != e["side"]]
        groups = sorted({m[1] for m in opponents if m[0] != m[1]})
        r = rng.random()
        if r < 0.25:
            c["target"] = rng.choice(opponents)[0]
        elif r < 0.45 and groups:
            c["target"] = rng.choice(groups)
        combatants.append(c)
    rules = {"order": rng.choice(("dynamic", "chain")), "prep": rng.choice(("sixes", "lowest"))}
    return {
        "scenario": {"name": name, "system": "readiness"},
        "rules": rules,
        "combatant": combatants,
    }


def compare(scenario: Scenario, seed: int, n_rounds: int, first: int = 0) -> tuple[list[str], int]:
    """Kernel vs twin over rounds ``first ..`` of a chunk; (mismatch descriptions, stalemates)."""
    compiled = compile_for(scenario)
    key = chunk_state(np.random.SeedSequence(seed), 0)
    rows = readiness.trace(compiled, key, n_rounds, first=first)
    twin, twin_states = play_rounds_keyed(scenario, key, n_rounds, first=first)
    kernel_states = readiness_round_states(compiled, key, n_rounds, first=first)
    problems = []
    for r in range(n_rounds):
        got = counts_from_row(rows[r], compiled.layout)
        want = twin[r]
        no_hold = r > 0 and bool(twin[r - 1][("", "stalemate")])
        if got != want:
            diff = {
                f"{who}:{metric}": {
                    "kernel": got.get((who, metric)),
                    "twin": want.get((who, metric)),
                }
                for who, metric in sorted(set(got) | set(want))
                if got.get((who, metric)) != want.get((who, metric))
            }
            problems.append(f"round {first + r} (no_hold={no_hold}): {diff}")
            break  # R8 carries the difference on
        if twin_states[r] != [int(w) for w in kernel_states[r]]:
            problems.append(
                f"round {first + r} (no_hold={no_hold}): all counts equal but the kernel "
                f"consumed different draws (stream left at {kernel_states[r].tolist()}, "
                f"twin at {twin_states[r]})"
            )
            break
    stalemates = sum(c[("", "stalemate")] for c in twin)
    return problems, stalemates


def _run_family(base_seed: int, n_scenarios: int, n_rounds: int, all_hold: bool) -> int:
    rng = random.Random(base_seed)
    failures = []
    stalemates = 0
    for k in range(n_scenarios):
        data = random_scenario_dict(rng, f"twin-{base_seed}-{k}", all_hold=all_hold)
        scenario = scenario_from_dict(data)
        seed = base_seed * 100_000 + k
        problems, s = compare(scenario, seed, n_rounds)
        stalemates += s
        if problems:
            failures.append(
                f"--- scenario {k}, key chunk_state(SeedSequence({seed}), 0), "
                f"{n_rounds} rounds from trace(..., no_hold_first=False)\n"
                f"{to_toml(data)}{problems[0]}"
            )
    if failures:
        print("\n\n".join(failures[:5]))
    assert not failures, f"{len(failures)} of {n_scenarios} scenarios differ:\n" + failures[0]
    return stalemates


@pytest.mark.parametrize("base_seed", [1, 2, 3, 4])
def test_kernel_matches_twin_random_scenarios(base_seed):
    # 4 x 60 scenarios x 50 rounds = 12,000 rounds
    _run_family(base_seed, n_scenarios=60, n_rounds=50, all_hold=False)


def test_kernel_matches_twin_all_holders():
    # every combatant holds: a stalemate in every other round (R8), then a forced round
    stalemates = _run_family(77, n_scenarios=40, n_rounds=60, all_hold=True)
    assert stalemates >= 40 * 20


def test_generator_covers_every_option():
    """The random scenarios above reach every policy and rule the twin implements."""
    rng = random.Random(1)
    seen: set[tuple[str, Any]] = set()
    for k in range(60):
        data = random_scenario_dict(rng, f"t{k}")
        scenario = scenario_from_dict(data)
        for key in ("order", "prep"):
            seen.add((key, scenario.rules[key]))
        for i, c in enumerate(scenario.combatants):
            for key in ("hold", "defend", "guard", "role"):
                seen.add((key, c[key]))
            share = c["attack_share"]
            seen.add(("share", "0" if share == 0 else "1" if share == 1 else "fraction"))
            seen.add(("advantage", c["advantage"] > 0))
            seen.add(("readiness", c["readiness"]))
            kind = "random" if c["target"] == "random" else "name"
            if c["target"] != "random" and c["target"] not in scenario.names:
                kind = "group"
            seen.add(("target", kind))
            seen.add(("targets", len(scenario.targets(i)) > 1))
        seen.add(("sides", len(scenario.sides)))
        seen.add(("combatants", len(scenario.combatants)))
    expected = (
        {("order", o) for o in ("dynamic", "chain")}
        | {("prep", p) for p in ("sixes", "lowest")}
        | {("hold", h) for h in HOLDS}
        | {("defend", d) for d in DEFENDS}
        | {("guard", True), ("guard", False), ("role", "hero"), ("role", "secondary")}
        | {("share", s) for s in ("0", "1", "fraction")}
        | {("advantage", True), ("advantage", False)}
        | {("readiness", r) for r in range(1, 6)}
        | {("target", t) for t in ("random", "name", "group")}
        | {("targets", True), ("targets", False)}
        | {("sides", 2), ("sides", 3)}
        | {("combatants", n) for n in range(2, 7)}
    )
    assert expected <= seen, expected - seen


def test_party_vs_wolves_many_rounds():
    from pathlib import Path

    from simkit import load_scenario

    path = Path(__file__).resolve().parents[1] / "scenarios" / "party_vs_wolves.toml"
    problems, _ = compare(load_scenario(path), 2026, 3000)
    assert not problems, problems


def test_tiny_attack_share_still_draws():
    data = {
        "scenario": {"name": "tiny share", "system": "readiness"},
        "combatant": [
            {"name": "A", "side": "a", "readiness": 3, "attack_share": 1e-17},
            {"name": "B", "side": "b", "readiness": 3},
        ],
    }
    problems, _ = compare(scenario_from_dict(data), 1, 50)
    if problems:
        print(to_toml(data), "key chunk_state(SeedSequence(1), 0)", problems[0])
    assert not problems, problems


def test_kernel_matches_twin_late_rounds():
    """Rounds far into a chunk (``first``), where the round index is large."""
    rng = random.Random(8)
    for k, first in enumerate((1, 4095, 262_100, 10**9)):
        data = random_scenario_dict(rng, f"late-{k}")
        problems, _ = compare(scenario_from_dict(data), 900 + k, 40, first=first)
        assert not problems, f"first={first}\n{to_toml(data)}{problems[0]}"


def _all_hold_scenario(seed: int) -> tuple[dict[str, Any], readiness.Compiled]:
    data = random_scenario_dict(random.Random(seed), f"holders-{seed}", all_hold=True)
    return data, compile_for(scenario_from_dict(data))


def _stalemate_column(compiled: readiness.Compiled) -> int:
    return compiled.layout.scenario_offset + compiled.layout.scenario_counts.index("stalemate")


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_trace_from_first_continues_the_chunk(seed):
    """Rounds k.. traced from ``first = k`` (R8 carried in) are rounds k.. of the chunk."""
    data, compiled = _all_hold_scenario(seed)
    key = chunk_state(np.random.SeedSequence(seed), 0)
    whole = readiness.trace(compiled, key, 120)
    stale = _stalemate_column(compiled)
    assert 0 < whole[:, stale].sum() < 120, to_toml(data)
    for k in (1, 2, 17, 60, 119):
        tail = readiness.trace(
            compiled, key, 120 - k, no_hold_first=bool(whole[k - 1, stale]), first=k
        )
        assert np.array_equal(tail, whole[k:]), f"first={k}\n{to_toml(data)}"


def _flushed(compiled: readiness.Compiled, rows: np.ndarray):
    """The sums of the traced rounds flushed in regeneration cycles (metrics.py)."""
    sums = compiled.layout.new_sums()
    pa, pb = compiled.layout.pair_indices()
    stale = _stalemate_column(compiled)
    y = np.zeros(compiled.layout.size, np.int64)
    length = 0
    for row in rows:
        y += row
        length += 1
        if row[stale] == 0:
            flush_cycle(y, length, sums.s1, sums.s2, sums.sl, sums.sx, pa, pb, sums.tot)
            length = 0
    if length:
        flush_cycle(y, length, sums.s1, sums.s2, sums.sl, sums.sx, pa, pb, sums.tot)
    return sums


SUM_FIELDS = ("s1", "s2", "sl", "sx", "tot")


@pytest.mark.parametrize("seed", [6, 7])
def test_run_chunk_equals_flushed_trace(seed):
    """``run_chunk`` adds exactly the cycle sums of the traced rounds, also in pieces."""
    for all_hold in (False, True):
        data = random_scenario_dict(random.Random(seed), f"chunk-{seed}", all_hold=all_hold)
        compiled = compile_for(scenario_from_dict(data))
        key = chunk_state(np.random.SeedSequence(seed), 2)
        n = 3000
        rows = readiness.trace(compiled, key, n)
        want = _flushed(compiled, rows)
        got = compiled.layout.new_sums()
        last = readiness.run_chunk(compiled, key, n, got)
        assert last == bool(rows[-1, _stalemate_column(compiled)])
        for f in SUM_FIELDS:
            assert np.array_equal(getattr(got, f), getattr(want, f)), f"{f}\n{to_toml(data)}"
        # the same rounds in pieces, R8 carried from piece to piece: a piece boundary
        # may cut a cycle in two, which leaves the per-round totals unchanged
        pieces = compiled.layout.new_sums()
        no_hold = False
        for first in range(0, n, 700):
            part = compiled.layout.new_sums()
            size = min(700, n - first)
            no_hold = readiness.run_chunk(compiled, key, size, part, first=first, no_hold=no_hold)
            assert np.array_equal(part.s1, rows[first : first + size].sum(axis=0))
            pieces.add(part)
        assert no_hold == last
        assert np.array_equal(pieces.s1, want.s1)
        assert pieces.tot[1] == want.tot[1] == n


@pytest.mark.parametrize("seed", [100, 101, 102, 103])
def test_no_hold_path_equals_trace(seed):
    """Without hold policies ``run_chunk`` takes a path of its own (two rounds side by
    side, no R5/R8 bookkeeping, outcome histograms unless they would be too large; a
    second build for default policies); its sums must
    equal those of the traced rounds exactly, for every policy and variant the random
    scenarios draw and an odd number of rounds starting anywhere in the chunk."""
    rng = random.Random(seed)
    seen = set()
    for k in range(12):
        data = random_scenario_dict(rng, f"simple-{seed}-{k}")
        for c in data["combatant"]:
            c["hold"] = "never"
            if k % 3 == 2:  # the defaults: the kernel compiled for Compiled.plain
                for field in ("defend", "guard", "attack_share", "advantage"):
                    c.pop(field, None)
        if k % 4 == 3:  # too many outcomes for the histograms: counts added per round
            data["combatant"][0]["readiness"] = 20
        if k % 3 == 0:
            data["combatant"][-1]["guard"] = True
            seen.add(("guard", c.get("guard", False)))
            seen.add(("defend", c.get("defend", "always")))
        seen.add(("order", data["rules"]["order"]))
        compiled = compile_for(scenario_from_dict(data))
        assert not compiled.may_hold
        assert compiled.plain == (k % 3 == 2)
        seen.add(("plain", compiled.plain))
        coded = readiness.outcome_offsets(compiled.table[:, readiness.C_DICE]) is not None
        assert coded or k % 4 == 3 or len(compiled.layout.names) > readiness.ORDER_MAX_N
        seen.add(("coded", coded))
        key = chunk_state(np.random.SeedSequence(seed), k)
        first = rng.randint(0, 1000)
        n = rng.choice((1, 2, 3, 401, 1001))
        rows = readiness.trace(compiled, key, n, first=first)
        want = _flushed(compiled, rows)
        got = compiled.layout.new_sums()
        readiness.run_chunk(compiled, key, n, got, first=first)
        got = revision_1_part(got, compiled.layout)
        want = revision_1_part(want, compiled.layout)
        for f in SUM_FIELDS:
            assert np.array_equal(getattr(got, f), getattr(want, f)), f"{f}\n{to_toml(data)}"
    assert {("guard", True), ("order", "chain"), ("order", "dynamic"), ("plain", True)} <= seen
    assert {("coded", True), ("coded", False)} <= seen
