"""The readiness kernel (simkit/systems/readiness) beyond the contract every system meets
(tests/test_contract.py).

* ``simkit.run`` of small scenarios lands within 5 standard errors of EXACT expectations,
  computed by enumerating the plain-Python twin (tests/twins/readiness.py) over every
  draw with Fractions: every combatant row, every group and side row ("any member" for
  probabilities, sums otherwise, ratios of sums), on_edge and edge_wound with R8's
  regeneration cycles;
* the batch flush gives the same sums whatever the batch size (one cycle at a time
  included), with stalemate cycles and ratio pairs on acts_before / actions_dist slots;
* scenarios past one level of the R3 key tree (9, 70 and 200 combatants) and past the
  counting T2 ranks equal the twin round by round, run_chunk equal to their trace;
* the worked example of R3 in docs/rules.md (scenarios/worked_example_readiness.toml)
  plays in the order the rules give, and differently under ``order = "chain"``;
* trace events read as lines citing rule IDs and as JSON objects; the schema's values;
  ``cost``.
"""

from __future__ import annotations

import dataclasses
import math
import random
import tomllib
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from builders import make_scenario
from contract_support import cycles, row_counts
from test_readiness_rules import exact_expectations
from twins import readiness as twin

import simkit
from simkit import engine, systems
from simkit.metrics import flush_rows
from simkit.metrics.registry import PROBABILITY, metric
from simkit.scenario import ScenarioError, load_scenario, scenario_from_dict
from simkit.systems.base import MAX_COMBATANTS
from simkit.systems.readiness import codes, kernel, schema
from simkit.systems.stream import chunk_state

ROOT = Path(__file__).resolve().parents[1]
SYSTEM = systems.get("readiness")
ROUNDS = 200_000


def _key(seed: int, k: int = 0) -> np.ndarray:
    return chunk_state(np.random.SeedSequence(seed), k)


def document(rules: dict, *combatants: dict) -> dict:
    return {
        "scenario": {"name": "kernel test", "system": "readiness"},
        "rules": rules,
        "combatant": list(combatants),
    }


# --------------------------------------------------------------------------- exact
EXACT = {
    # R7 [rev 2]: an always guard beside a backup guard for a surprised victim; a count
    # group (group rows), a side of three
    "guards": document(
        {},
        {"name": "W", "side": "wolves", "readiness": 1, "count": 2, "target": "D"},
        {"name": "D", "side": "party", "readiness": 1, "surprised": True, "attack_share": 0.0},
        {"name": "G", "side": "party", "readiness": 1, "guard": "always", "attack_share": 0.0},
        {"name": "B", "side": "party", "readiness": 1, "guard": "backup", "attack_share": 0.0},
    ),
    # R2 one_die with an advantage above 5, R3 chain, defend variants, hasty defenses
    "prepared_chain": document(
        {"order": "chain"},
        {"name": "A", "side": "a", "readiness": 2, "advantage": 7, "target": "B"},
        {"name": "B", "side": "b", "readiness": 2, "target": "A", "defend": "hasty_up_to:2"},
        {"name": "C", "side": "b", "readiness": 1, "defend": "never", "attack_share": 0.0},
    ),
    # R5 holds, R8 stalemates (on_edge, edge_wound: weakness and a secondary's 3)
    "holders": document(
        {"prep": "lowest"},
        {"name": "H", "side": "h", "readiness": 2, "hold": "until_attacked", "weakness": 2},
        {"name": "K", "side": "h", "readiness": 1, "hold": "until_enemy_acts", "guard": True},
        {
            "name": "S",
            "side": "s",
            "readiness": 2,
            "hold": "until_enemy_acts",
            "role": "secondary",
            "advantage": 1,
        },
    ),
    # revision 1's holder reading; until_attacked and until_enemy_acts on both sides
    "release_only": document(
        {"holder_actions": "release_only"},
        {"name": "X", "side": "x", "readiness": 2, "hold": "until_enemy_acts", "target": "Z"},
        {"name": "Y", "side": "x", "readiness": 1, "attack_share": 0.0},
        {"name": "Z", "side": "z", "readiness": 1, "hold": "until_attacked", "target": "X"},
        {"name": "Q", "side": "z", "readiness": 1, "guard": "always", "attack_share": 0.0},
    ),
}


def with_units(scenario):
    """The twin's round counts plus every group and side count, as the layout defines
    them: a sum of the members, or "any member" for a probability count."""
    units = {}
    for c in scenario.combatants:
        units.setdefault(("group", c.group), []).append(c.name)
        units.setdefault(("side", c.side), []).append(c.name)

    def play(s, draws, no_hold=False):
        counts = twin.play_round(s, draws, no_hold)
        for (level, name), members in units.items():
            for count in SYSTEM.counts:
                values = [counts[(m, count)] for m in members]
                any_member = metric(count).kind == PROBABILITY
                counts[(f"{level}:{name}", count)] = max(values) if any_member else sum(values)
        return counts

    return play


def exact_value(exp: dict, who: str, name: str) -> Fraction | None:
    """The exact mean of a table row (None for 0 / 0)."""
    base, _, k = name.partition(".")
    m = metric(name)
    if m.kind != "ratio":
        return exp[(who, name)]
    if name == "action_economy":
        level, _, side = who.partition(":")
        own = exp[(who, "actions")]
        others = sum(exp[(f"side:{s}", "actions")] for s in SIDES_OF[who] if s != side)
        return None if others == 0 else own / others
    num = f"{m.numerator}.{k}" if k else m.numerator
    den = exp[(who, m.denominator)]
    return None if den == 0 else exp[(who, num)] / den


SIDES_OF: dict[str, list[str]] = {}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(EXACT))
def test_run_matches_exact_expectations(name):
    data = EXACT[name]
    scenario = scenario_from_dict(data, source=f"<{name}>")
    sides = list(scenario.sides)
    for s in sides:
        SIDES_OF[f"side:{s}"] = sides
    exp = exact_expectations(scenario, with_units(scenario))
    result = simkit.run(scenario, rounds=ROUNDS, rng=2026, workers=1)
    rows = [(who or "", m, mean, se) for who, m, mean, se, *_ in result.rows]
    for level in ("group", "side"):
        table = result.by(level)
        rows += [
            (f"{level}:{who}", m, mean, se)
            for who, m, mean, se in zip(
                table[level], table.metric, table["mean"], table.se, strict=True
            )
        ]
    bad, checked = [], 0
    for who, m, mean, se in rows:
        exact = exact_value(exp, who, m)
        checked += 1
        if exact is None:
            ok = math.isnan(mean)
        elif se == 0:
            ok = mean == float(exact)
        else:
            ok = abs(mean - float(exact)) <= 5 * se
        if not ok:
            bad.append(f"{who}.{m}: exact {exact} = {float(exact or 0):.6f}, run {mean} se {se}")
    assert checked > 100
    assert not bad, "\n".join(bad[:20])
    if name == "holders":  # R8 is exercised: every combatant is on edge in some rounds
        assert exp[("", "stalemate")] > 0
        assert exp[("H", "edge_wound")] == 2 * exp[("H", "on_edge")]
        assert exp[("S", "edge_wound")] == 3 * exp[("S", "on_edge")]


# --------------------------------------------------------------------------- the flush
def test_every_batch_size_gives_the_same_sums():
    """Batches of 1, 2, 8 and the default cycles: identical sums, with stalemates (cycles
    of two rounds) and ratio pairs on acts_before and actions_dist slots."""
    scenario = load_scenario(ROOT / "tests/data/rev2/readiness_stalemates.toml")
    layout = engine.layout_for(scenario)
    extra = ((layout.before_index(0, 1), layout.dist_index(2, 0)), (layout.dist_index(0, 1), 0))
    job = engine.prepare(scenario, pairs=extra)
    assert job.compiled.derived.shape[1] == 3  # acts_before, actions_dist.0 and .1
    key = _key(77)
    sums = []
    for batch in (1, 2, 8, job.compiled.batch):
        compiled = dataclasses.replace(job.compiled, batch=batch)
        s = job.layout.new_sums()
        SYSTEM.run_chunk(compiled, key, 3001, s, first=5, carry=1)
        sums.append(s)
    assert sums[0].tot[1] == 3001 and sums[0].tot[0] < 3001  # stalemates joined cycles
    for s in sums[1:]:
        assert s.equals(sums[0])
    tr = SYSTEM.trace(job.compiled, key, 3001, first=5, carry=1)
    rows, lengths = cycles(tr.rows, tr.carries)
    assert flush_rows(rows, job.layout, lengths).equals(sums[0])


def test_acts_before_along_the_combatants_over_its_16_bit_limit():
    """More combatants than cycles (batches of 8 for 9 combatants): acts_before counted in
    16 bits and added to the sums before it could overflow, over more cycles than 16 bits
    hold, gives the sums of batches of 128 (counted along the cycles)."""
    scenario = crowd(9, 1, True, seed=3)
    job = engine.prepare(scenario)
    key = _key(9)
    rounds = 4 * kernel.ACC_LIMIT
    sums = []
    for batch in (8, 128):
        s = job.layout.new_sums()
        SYSTEM.run_chunk(dataclasses.replace(job.compiled, batch=batch), key, rounds, s)
        sums.append(s)
    assert sums[0].tot[1] == rounds
    assert sums[0].equals(sums[1])


def test_small_holds_driver_equals_the_general_one():
    """A scenario with holds and at most ONE_LEVEL combatants runs on the small driver
    (no packed counts, T2 ranks counted, acts_before along the cycles even where a batch
    has fewer cycles than combatants); the general driver, which bigger fights take, gives
    the same sums and carry on it, bit for bit, from whole batches down to one cycle."""
    rng = random.Random("small-holds")

    def driver(n, holds):
        return kernel.run_chunk_driver(engine.prepare(crowd(n, 2, holds, seed=1)).compiled)

    assert driver(codes.ONE_LEVEL, True) is kernel.run_rounds_small
    assert driver(codes.ONE_LEVEL + 1, True) is kernel.run_rounds
    assert driver(codes.ONE_LEVEL, False) is kernel.run_rounds_plain
    for k in range(6):
        n = rng.randint(2, codes.ONE_LEVEL)
        job = engine.prepare(crowd(n, rng.randint(1, 3), True, seed=k))
        assert job.compiled.may_hold and job.compiled.n <= codes.ONE_LEVEL
        compiled = dataclasses.replace(job.compiled, batch=rng.choice((1, 4, 8, 128)))
        key = np.ascontiguousarray(_key(500 + k)[:4], dtype=np.uint64)
        rounds, first, carry = rng.randint(1, 700), rng.randrange(50), rng.choice((0, 1))
        got = []
        for drive in (kernel.run_rounds_small, kernel.run_rounds):
            sums = job.layout.new_sums()
            out = drive(key, first, rounds, carry, *kernel.driver_arguments(compiled, sums))
            got.append((sums, out))
        assert got[0][0].equals(got[1][0]), f"batch {compiled.batch}, {rounds} rounds"
        assert got[0][1] == got[1][1]


# --------------------------------------------------------------------------- big scenarios
def crowd(n: int, readiness: int, holds: bool, seed: int):
    rng = random.Random(seed)
    return scenario_from_dict(
        document(
            {"order": rng.choice(("dynamic", "chain"))},
            {
                "name": "A",
                "side": "a",
                "count": n // 2,
                "readiness": readiness,
                "guard": "backup",
                **({"hold": "until_attacked"} if holds else {}),
            },
            {
                "name": "B",
                "side": "b",
                "count": n - n // 2,
                "readiness": readiness,
                "defend": "unless_hasty",
                **({"hold": "until_enemy_acts"} if holds else {}),
            },
        )
    )


@pytest.mark.parametrize(
    ("n", "readiness", "rounds"), [(9, 2, 6), (17, 3, 4), (40, 1, 6), (70, 4, 3), (200, 20, 1)]
)
@pytest.mark.parametrize("holds", [False, True])
def test_many_combatants_equal_the_twin(n, readiness, rounds, holds):
    """Two, three and four levels of the R3 key tree, T2 ranks by counting (more than 16; with
    one die each, most pools have twins and T3 draws), acts_before along the combatants
    (batches of fewer than 8 cycles)."""
    scenario = crowd(n, readiness, holds, seed=n)
    job = engine.prepare(scenario)
    assert job.compiled.tree_levels == (1 if n <= 8 else 2 if n <= 16 else 3 if n <= 64 else 4)
    key = _key(n + holds)
    tr = SYSTEM.trace(job.compiled, key, rounds)
    records = twin.play_rounds_keyed(scenario, [int(w) for w in key[:4]], rounds)
    for r, rec in enumerate(records):
        assert row_counts(tr.rows[r], job.layout) == rec.counts, r
        assert [int(w) for w in tr.states[r]] == rec.state, r
        log = [SYSTEM.event_tuple(e, scenario) for e in tr.events if int(e[0]) == r]
        assert log == rec.log, r
    got = job.layout.new_sums()
    SYSTEM.run_chunk(job.compiled, key, rounds, got)
    rows, lengths = cycles(tr.rows, tr.carries)
    assert got.equals(flush_rows(rows, job.layout, lengths))


def test_counts_fit_the_counts_array():
    """kernel.count_bound: validation's limits keep a cycle's counts within COUNT_DTYPE,
    and the bound holds for the largest counts of a crowd at those limits."""
    dice = MAX_COMBATANTS * schema.MAX_READINESS
    assert kernel.count_bound(MAX_COMBATANTS, dice) <= np.iinfo(kernel.COUNT_DTYPE).max
    scenario = crowd(MAX_COMBATANTS, schema.MAX_READINESS, True, seed=5)
    job = engine.prepare(scenario)
    tr = SYSTEM.trace(job.compiled, _key(5), 2)
    rows, _ = cycles(tr.rows, tr.carries)
    assert 0 < rows.max() <= kernel.count_bound(MAX_COMBATANTS, dice)


# --------------------------------------------------------------------------- R3 example
WORKED = ROOT / "scenarios/worked_example_readiness.toml"
DICE = {"A": [6, 6, 2], "B": [6, 6, 5], "W": [6, 1]}


def turns(order: str) -> list[tuple[str, int]]:
    scenario = load_scenario(WORKED)
    if order != scenario.rules["order"]:
        data = tomllib.loads(WORKED.read_text())
        data["rules"]["order"] = order
        scenario = scenario_from_dict(data)
    rollers = [name for name, _, _ in SYSTEM.rollers(scenario)]
    dice = {rollers.index(name): faces for name, faces in DICE.items()}
    job = engine.prepare(scenario)
    tr = SYSTEM.trace(job.compiled, _key(scenario.seed), 1, dice=dice)
    events = [SYSTEM.event_tuple(e, scenario) for e in tr.events]
    assert events[:3] == [("roll", "R1", name, tuple(faces)) for name, faces in DICE.items()]
    return [(e[2], e[3]) for e in events if e[0] == "act"]


def test_worked_example_order():
    """The rules (docs/rules.md, R3): B 6, A 6, B 6, A 6, W 6, B 5, A 2, W 1 (order = "dynamic")."""
    assert turns("dynamic") == [
        ("B", 6),
        ("A", 6),
        ("B", 6),
        ("A", 6),
        ("W", 6),
        ("B", 5),
        ("A", 2),
        ("W", 1),
    ]
    # under chain the one who gets the turn at 6 spends all its 6s in a row
    assert turns("chain") == [
        ("B", 6),
        ("B", 6),
        ("A", 6),
        ("A", 6),
        ("W", 6),
        ("B", 5),
        ("A", 2),
        ("W", 1),
    ]


# --------------------------------------------------------------------------- events
def test_events_read_as_text_and_json():
    seen = set()
    paths = sorted((ROOT / "tests/data/rev2").glob("readiness_*.toml"))
    paths += sorted((ROOT / "tests/data/rev3").glob("readiness_*.toml"))  # R7 [rev 3]
    for path in paths:
        scenario = load_scenario(path)
        job = engine.prepare(scenario)
        tr = SYSTEM.trace(job.compiled, _key(3), 40, carry=1)
        for e in tr.events:
            kind, rule, *_ = SYSTEM.event_tuple(e, scenario)
            text = SYSTEM.event_text(e, scenario)
            assert text.startswith(f"{rule} ") and rule == codes.EVENT_RULES[kind], text
            js = SYSTEM.event_json(e, scenario)
            assert (js["round"], js["event"], js["rule"]) == (int(e[0]), kind, rule)
            assert all(isinstance(v, int | str | bool | list) for v in js.values()), js
            seen.add(kind)
    assert seen == set(codes.EVENT_KINDS)


# --------------------------------------------------------------------------- schema, codes
def test_schema_values():
    base = SYSTEM.bench_scenario()

    def with_field(key, value, index=0):
        data = {**base, "combatant": [dict(c) for c in base["combatant"]]}
        data["combatant"][index][key] = value
        return scenario_from_dict(data, source="x.toml")

    assert with_field("guard", True).combatants[0]["guard"] == "backup"
    assert with_field("guard", False).combatants[0]["guard"] == "never"
    assert with_field("guard", "always").combatants[0]["guard"] == "always"
    assert with_field("defend", "hasty_up_to:999").combatants[0]["defend"] == "hasty_up_to:999"
    # R7 [rev 3]: the when_effective forms, read by the one parser schema.when_effective
    for field, value, read in (
        ("defend", "when_effective", ("always", True)),
        ("defend", "always+when_effective", ("always", True)),
        ("defend", "unless_hasty+when_effective", ("unless_hasty", True)),
        ("defend", "hasty_up_to:2+when_effective", ("hasty_up_to:2", True)),
        ("guard", "backup+when_effective", ("backup", True)),
        ("guard", "always+when_effective", ("always", True)),
        ("guard", "backup", ("backup", False)),
    ):
        assert with_field(field, value).combatants[0][field] == value
        assert schema.when_effective(value) == read
    assert with_field("hit_chance", 0).combatants[0]["hit_chance"] == 0.0
    for field, value in (
        ("guard", "sometimes"),
        ("defend", "hasty_up_to:1000"),
        ("defend", "hasty_up_to:1000+when_effective"),
        ("defend", "never+when_effective"),  # answers nothing: nothing to modify
        ("guard", "never+when_effective"),
        ("guard", "when_effective"),  # backup or always? said in full
        ("defend", "when_effective+always"),
        ("hit_chance", 1.5),
        ("hit_chance", -0.1),
        ("hit_chance", "half"),
        ("surprised", "yes"),
        ("readiness", 21),
        ("advantage", -1),
    ):
        with pytest.raises(ScenarioError, match=rf"\(index 0\)\.{field}: "):
            with_field(field, value)
    with pytest.raises(ScenarioError, match=r"weakness: weakness applies to heroes only"):
        scenario_from_dict(
            document(
                {},
                {"name": "A", "side": "a", "readiness": 1},
                {"name": "B", "side": "b", "readiness": 1, "role": "secondary", "weakness": 2},
            )
        )
    for rule in ("order", "prep", "holder_actions"):
        assert SYSTEM.rules[rule].default == SYSTEM.rules[rule].choices[0]
    assert all(f.meaning for f in (*SYSTEM.fields.values(), *SYSTEM.rules.values()))


def test_an_unknown_value_is_an_error_not_a_default():
    """Scenarios built without the validator (tests/builders.py) still go through the
    named codes: a value that has none stops compile_scenario."""
    for field, value in (("guard", "sometimes"), ("hold", "forever"), ("defend", "rarely")):
        s = make_scenario("readiness", [{"name": "A", "side": "a", "readiness": 1, field: value},
                                        {"name": "B", "side": "b", "readiness": 1}])  # fmt: skip
        with pytest.raises(ValueError, match=rf"A\.{field}: unknown value"):
            kernel.compile_scenario(s, engine.layout_for(s))
    s = make_scenario(
        "readiness",
        [{"name": "A", "side": "a", "readiness": 1}, {"name": "B", "side": "b", "readiness": 1}],
        rules={"prep": "evenly"},
    )
    with pytest.raises(ValueError, match=r"rules\.prep: unknown value 'evenly'"):
        kernel.compile_scenario(s, engine.layout_for(s))


def test_counts_and_codes():
    assert set(SYSTEM.counts) == {k for _, k in twin.count_keys(make_scenario(
        "readiness", [{"name": "A", "side": "a", "readiness": 1},
                      {"name": "B", "side": "b", "readiness": 1}]))
        if not k.startswith(("acts_before", "actions_dist")) and k != "stalemate"}  # fmt: skip
    assert SYSTEM.scenario_counts == ("stalemate",)
    outcome = [SYSTEM.counts[k] for k in (codes.UNDEFENDED, codes.DEFENDED, codes.HASTY_ONLY)]
    assert outcome == ["undefended", "defended", "hasty_only"]
    assert SYSTEM.counts[codes.HASTY_GE_1 + 4] == "hasty_ge.5"


def test_cost():
    bench = scenario_from_dict(SYSTEM.bench_scenario())
    assert SYSTEM.cost(bench) == pytest.approx(1.0)
    small = crowd(20, 2, False, 1)
    big = crowd(200, 20, False, 1)
    assert 1 < SYSTEM.cost(small) < SYSTEM.cost(big)
    assert engine.chunk_rounds(big) < engine.chunk_rounds(small) <= engine.CHUNK_ROUNDS


def test_random_scenarios_reach_every_variant():
    rng = random.Random("variants")
    seen = set()
    for _ in range(150):
        s = twin.random_scenario(rng)
        for rule in ("order", "prep", "holder_actions", "release"):
            seen.add((rule, s.rules[rule]))
        seen.add(("sides", len(s.sides)))
        for c in s.combatants:
            for field in ("hold", "guard", "role", "surprised"):
                seen.add((field, c[field]))
            seen.add(("defend", c["defend"].partition(":")[0]))
            hit = c["hit_chance"]
            seen.add(("hit", "1" if hit == 1 else "0" if hit == 0 else "tiny" if hit < 1e-9
                      else "part"))  # fmt: skip
            share = c["attack_share"]
            seen.add(("share", "0" if share == 0 else "1" if share == 1 else "tiny" if share < 1e-9
                      else "part"))  # fmt: skip
            seen.add(("advantage", "big" if c["advantage"] > 5 else c["advantage"] > 0))
            kind = c["target"] if c["target"] == "random" else (
                "name" if c["target"] in s.names else "group")  # fmt: skip
            seen.add(("target", kind))
            seen.add(("readiness", "high" if c["readiness"] > 6 else "low"))
    want = {("order", o) for o in ("dynamic", "chain", "chain_unbroken")}
    want |= {("release", r) for r in ("higher", "any")}
    want |= {("prep", p) for p in ("one_die", "sixes", "lowest")}
    want |= {("holder_actions", h) for h in ("held_dice", "release_only")}
    want |= {("hold", h) for h in ("never", "until_attacked", "until_enemy_acts")}
    want |= {("guard", g) for g in schema.GUARD_CHOICES}
    want |= {("defend", d) for d in ("always", "never", "unless_hasty", "hasty_up_to")}
    want |= {("defend", d) for d in schema.DEFEND_CHOICES if d != "never"}
    want |= {
        ("defend", "hasty_up_to"),
        ("hit", "1"),
        ("hit", "0"),
        ("hit", "tiny"),
        ("hit", "part"),
    }
    want |= {("role", "hero"), ("role", "secondary"), ("surprised", True)}
    want |= {("share", k) for k in ("0", "1", "tiny", "part")}
    want |= {("advantage", "big"), ("advantage", True), ("advantage", False)}
    want |= {("target", t) for t in ("random", "name", "group")}
    want |= {("sides", k) for k in (2, 3, 4)} | {("readiness", "high")}
    assert want <= seen, want - seen
