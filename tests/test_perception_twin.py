"""The perception kernel against its plain-Python twin, fed identical draws.

For many randomly generated scenarios (seeded, so every failure is reproducible) the
kernel's ``trace`` and the twin (tests/naive_perception.py) play the same rounds of a
chunk, round ``r`` from its own stream (``NaiveStream.for_round(key, r)`` for the
twin), and every per-round count must be equal; every round must also consume exactly
the same draws (the stream state the kernel's round function leaves, recorded by
tests/kernel_drivers.py, equals the twin's).  ``run_chunk`` (which counts outcomes in
a histogram for up to four combatants) must add exactly the sums that flushing every
traced round as a one-round cycle gives.
"""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest
from kernel_drivers import compile_for, perception_round_states, revision_1_part
from naive_perception import counts_from_row, play_rounds_keyed

import simkit
from simkit.metrics import flush_cycle
from simkit.scenario import Scenario, scenario_from_dict
from simkit.systems.perception import kernel as perception
from simkit.systems.stream import below, chunk_state

SHARES = (1.0, 1.0, 0.0, 0.5, 0.3, 0.9)
RULE_CHOICES = {
    "mode": ("individual", "group"),
    "tie": ("random", "simultaneous"),
    "group_stat": ("commander", "highest"),
    "within_side": ("random", "listed"),
}


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    return repr(v)


def to_toml(data: dict[str, Any]) -> str:
    """A scenario dict as a TOML file (for failure reports)."""
    lines = ["[scenario]"]
    lines += [f"{k} = {_toml_value(v)}" for k, v in data["scenario"].items()]
    lines += ["", "[rules]"]
    lines += [f"{k} = {_toml_value(v)}" for k, v in data.get("rules", {}).items()]
    for c in data["combatant"]:
        lines += ["", "[[combatant]]"]
        lines += [f"{k} = {_toml_value(v)}" for k, v in c.items()]
    return "\n".join(lines) + "\n"


def random_scenario_dict(
    rng: random.Random, name: str, max_total: int = 7, max_count: int = 3
) -> dict[str, Any]:
    """A random valid perception scenario: 2-3 sides, up to ``max_total`` combatants.

    Perceptions are small (0-5) so that ties in initiative and perception are common.
    """
    n_sides = rng.choice((2, 2, 3))
    total = rng.randint(n_sides, max_total)
    sides = [f"side{k}" for k in range(n_sides)]
    entries: list[dict[str, Any]] = []
    made = 0
    while made < total:
        if len(entries) < n_sides:  # one single combatant per side first (commanders)
            entry = {"name": f"C{len(entries)}", "side": sides[len(entries)], "count": 1}
        else:
            count = 1 if rng.random() < 0.5 else rng.randint(1, min(max_count, total - made))
            entry = {"name": f"C{len(entries)}", "side": rng.choice(sides), "count": count}
        entries.append(entry)
        made += entry["count"]
    rules = {key: rng.choice(values) for key, values in RULE_CHOICES.items()}
    needs_commander = rules["mode"] == "group" and rules["group_stat"] == "commander"
    members = []
    for e in entries:
        if e["count"] == 1:
            members.append((e["name"], e["name"], e["side"]))
        else:
            members += [
                (f"{e['name']} {k}", e["name"], e["side"]) for k in range(1, e["count"] + 1)
            ]
    combatants = []
    for k, e in enumerate(entries):
        c = dict(e)
        if c["count"] == 1:
            del c["count"]
        c["perception"] = rng.randint(0, 5)
        if k < n_sides and (needs_commander or rng.random() < 0.4):
            c["commander"] = True
        share = rng.choice(SHARES)
        if rng.random() < 0.1:
            share = round(rng.random(), 3)
        c["attack_share"] = share
        opponents = [m for m in members if m[2] != e["side"]]
        groups = sorted({m[1] for m in opponents if m[0] != m[1]})
        r = rng.random()
        if r < 0.25:
            c["target"] = rng.choice(opponents)[0]
        elif r < 0.45 and groups:
            c["target"] = rng.choice(groups)
        combatants.append(c)
    return {
        "scenario": {"name": name, "system": "perception"},
        "rules": rules,
        "combatant": combatants,
    }


def compare(scenario: Scenario, seed: int, n_rounds: int, first: int = 0) -> list[str]:
    """Kernel vs twin over rounds ``first ..`` of a chunk; mismatch descriptions (empty: equal)."""
    compiled = compile_for(scenario)
    key = chunk_state(np.random.SeedSequence(seed), 0)
    rows = perception.trace(compiled, key, n_rounds, first=first)
    twin, twin_states = play_rounds_keyed(scenario, key, n_rounds, first=first)
    kernel_states = perception_round_states(compiled, key, n_rounds, first=first)
    for r in range(n_rounds):
        got = counts_from_row(rows[r], compiled.layout)
        want = twin[r]
        if got != want:
            diff = {
                f"{who}:{metric}": {
                    "kernel": got.get((who, metric)),
                    "twin": want.get((who, metric)),
                }
                for who, metric in sorted(set(got) | set(want))
                if got.get((who, metric)) != want.get((who, metric))
            }
            return [f"round {first + r}: {diff}"]
        if twin_states[r] != [int(w) for w in kernel_states[r]]:
            return [
                f"round {first + r}: all counts equal but the kernel consumed different draws "
                f"(stream left at {kernel_states[r].tolist()}, twin at {twin_states[r]})"
            ]
    return []


def _run_family(base_seed: int, n_scenarios: int, n_rounds: int, **kwargs: int) -> None:
    rng = random.Random(base_seed)
    failures = []
    for k in range(n_scenarios):
        data = random_scenario_dict(rng, f"twin-{base_seed}-{k}", **kwargs)
        scenario = scenario_from_dict(data)
        seed = base_seed * 100_000 + k
        problems = compare(scenario, seed, n_rounds)
        if problems:
            failures.append(
                f"--- scenario {k}, key chunk_state(SeedSequence({seed}), 0), "
                f"{n_rounds} rounds\n{to_toml(data)}{problems[0]}"
            )
    assert not failures, f"{len(failures)} of {n_scenarios} scenarios differ:\n" + failures[0]


@pytest.mark.parametrize("base_seed", [1, 2, 3, 4])
def test_kernel_matches_twin_random_scenarios(base_seed):
    # 4 x 60 scenarios x 50 rounds = 12,000 rounds
    _run_family(base_seed, n_scenarios=60, n_rounds=50)


def test_kernel_matches_twin_large_scenarios():
    # up to 60 combatants: long target lists, large tied groups and sides
    _run_family(99, n_scenarios=12, n_rounds=40, max_total=60, max_count=25)


def test_generator_covers_every_option():
    """The random scenarios above reach every rule and policy the twin implements."""
    rng = random.Random(1)
    seen: set[tuple[str, Any]] = set()
    for k in range(60):
        scenario = scenario_from_dict(random_scenario_dict(rng, f"t{k}"))
        for key in RULE_CHOICES:
            seen.add((key, scenario.rules[key]))
        seen.add(("sides", len(scenario.sides)))
        seen.add(("combatants", len(scenario.combatants)))
        for i, c in enumerate(scenario.combatants):
            seen.add(("commander", c["commander"]))
            share = c["attack_share"]
            seen.add(("share", "0" if share == 0 else "1" if share == 1 else "fraction"))
            kind = "random" if c["target"] == "random" else "name"
            if c["target"] != "random" and c["target"] not in scenario.names:
                kind = "group"
            seen.add(("target", kind))
            seen.add(("targets", len(scenario.targets(i)) > 1))
    expected = (
        {(key, v) for key, values in RULE_CHOICES.items() for v in values}
        | {("sides", 2), ("sides", 3)}
        | {("combatants", n) for n in range(2, 8)}
        | {("commander", True), ("commander", False)}
        | {("share", s) for s in ("0", "1", "fraction")}
        | {("target", t) for t in ("random", "name", "group")}
        | {("targets", True), ("targets", False)}
    )
    assert expected <= seen, sorted(expected - seen)


def test_twin_sees_ties_of_every_kind():
    """Ties (P1 random and simultaneous, P2 sides) occur in the compared rounds."""
    rng = random.Random(5)
    shared_slot = 0
    for k in range(40):
        scenario = scenario_from_dict(random_scenario_dict(rng, f"t{k}"))
        if scenario.rules["mode"] != "individual" or scenario.rules["tie"] != "simultaneous":
            continue
        compiled = compile_for(scenario)
        rows = perception.trace(compiled, chunk_state(np.random.SeedSequence(k), 0), 200)
        n = compiled.layout.n
        first = rows[:, [compiled.layout.count_index(i, "first_action") for i in range(n)]]
        shared_slot += int((first.sum(axis=1) > 1).sum())
    assert shared_slot > 50


def _flushed_sums(compiled: perception.Compiled, rows: np.ndarray):
    """The sums of every traced round flushed as a one-round cycle (metrics.py)."""
    sums = compiled.layout.new_sums()
    pa, pb = compiled.layout.pair_indices()
    for row in rows:
        y = row.copy()
        flush_cycle(y, 1, sums.s1, sums.s2, sums.sl, sums.sx, pa, pb, sums.tot)
    return sums


@pytest.mark.parametrize("seed", range(8))
def test_run_chunk_equals_flushed_trace(seed):
    rng = random.Random(1000 + seed)
    for k in range(6):
        data = random_scenario_dict(rng, f"chunk-{seed}-{k}", max_total=3 + seed % 5)
        scenario = scenario_from_dict(data)
        compiled = compile_for(scenario)
        key = chunk_state(np.random.SeedSequence(seed), k)
        rows = perception.trace(compiled, key, 3000)
        want = _flushed_sums(compiled, rows)
        got = compiled.layout.new_sums()
        assert perception.run_chunk(compiled, key, 3000, got) is False
        got = revision_1_part(got, compiled.layout)
        want = revision_1_part(want, compiled.layout)
        for field in ("s1", "s2", "sl", "sx", "tot"):
            assert np.array_equal(getattr(got, field), getattr(want, field)), (
                f"{field} differs (n={compiled.layout.n})\n{to_toml(data)}"
            )
        # the same rounds in pieces (``first``): every round is its own cycle, so the
        # pieces add up to exactly the same sums, and each piece is its traced rounds
        pieces = revision_1_part(compiled.layout.new_sums(), compiled.layout)
        for first in range(0, 3000, 1100):
            part = compiled.layout.new_sums()
            size = min(1100, 3000 - first)
            assert perception.run_chunk(compiled, key, size, part, first=first, no_hold=True)
            part_want = _flushed_sums(compiled, rows[first : first + size])
            assert np.array_equal(part.s1, part_want.s1) and np.array_equal(part.s2, part_want.s2)
            pieces.add(revision_1_part(part, compiled.layout))
        for field in ("s1", "s2", "sl", "sx", "tot"):
            assert np.array_equal(getattr(pieces, field), getattr(want, field)), field


def test_trace_from_first_and_no_hold_first():
    """``trace(first=k)`` gives rounds k.. of the chunk; ``no_hold_first`` changes nothing."""
    scenario = scenario_from_dict(random_scenario_dict(random.Random(21), "first"))
    compiled = compile_for(scenario)
    key = chunk_state(np.random.SeedSequence(21), 0)
    whole = perception.trace(compiled, key, 300)
    for k in (1, 150, 299):
        assert np.array_equal(perception.trace(compiled, key, 300 - k, first=k), whole[k:])
    assert np.array_equal(perception.trace(compiled, key, 300, no_hold_first=True), whole)
    # the key is only the chunk state's first four words
    dirty = key.copy()
    dirty[4:] = 99
    assert np.array_equal(perception.trace(compiled, dirty, 300), whole)


def test_kernel_matches_twin_late_rounds():
    rng = random.Random(31)
    for k, first in enumerate((1, 262_143, 10**9)):
        data = random_scenario_dict(rng, f"late-{k}")
        problems = compare(scenario_from_dict(data), 700 + k, 40, first=first)
        assert not problems, f"first={first}\n{to_toml(data)}{problems[0]}"


def test_histogram_and_per_round_paths_both_run():
    assert perception.hist_bins(4) > 1
    assert perception.hist_bins(5) == 1


def test_below_tables_are_exact():
    """``_below``'s tables: the rejection limit of ``below`` and ``b % n`` by multiply-shift."""
    for n in range(2, 257):
        limit = int(perception.BELOW_LIMIT[n])
        assert limit == 256 - 256 % n
        magic = int(perception.BELOW_MAGIC[n])
        for b in range(limit):
            assert b - ((b * magic) >> perception.MAGIC_SHIFT) * n == b % n


def test_below_matches_random_stream():
    """``_below`` draws exactly what ``random_stream.below`` draws, for every n <= 256."""
    for n in range(1, 257):
        st = chunk_state(np.random.SeedSequence(n), 0)
        mine = st.copy()
        for _ in range(20):
            assert perception._below(mine, n) == below(st, n)
        assert np.array_equal(mine, st)


@pytest.mark.parametrize("seed", range(4))
def test_round_invariants(seed):
    """Every round: one acting order over everyone (P1/P2), one action each (P4)."""
    rng = random.Random(500 + seed)
    for k in range(10):
        scenario = scenario_from_dict(random_scenario_dict(rng, f"inv-{seed}-{k}"))
        compiled = compile_for(scenario)
        lay = compiled.layout
        rows = perception.trace(compiled, chunk_state(np.random.SeedSequence(seed), k), 500)
        n = lay.n
        first = rows[:, [lay.count_index(i, "first_action") for i in range(n)]].sum(axis=1)
        before = np.array([[rows[:, lay.before_index(i, j)] for j in range(n)] for i in range(n)])
        pairs = before + before.transpose(1, 0, 2)  # [i, j, round]
        off_diagonal = ~np.eye(n, dtype=bool)
        shared = scenario.rules["mode"] == "individual" and scenario.rules["tie"] == "simultaneous"
        if shared:  # a shared slot: neither acts before the other
            assert (first >= 1).all()
            assert (pairs[off_diagonal] <= 1).all()
        else:  # a strict order
            assert (first == 1).all()
            assert (pairs[off_diagonal] == 1).all()
        for i in range(n):
            assert (rows[:, lay.count_index(i, "actions")] == 1).all()
            assert (rows[:, lay.count_index(i, "no_action")] == 0).all()
            assert (rows[:, lay.dist_index(i, 1)] == 1).all()
            known = rows[:, lay.count_index(i, "known_intents")]
            assert (known <= len(scenario.opponents(i))).all()


def test_result_independent_of_workers():
    scenario = scenario_from_dict(random_scenario_dict(random.Random(3), "workers"))
    rounds = 2 * (1 << 18) + 1234  # three chunks
    one = simkit.run(scenario, rounds=rounds, rng=11, workers=1)
    two = simkit.run(scenario, rounds=rounds, rng=11, workers=2)
    assert one.table.equals(two.table)
