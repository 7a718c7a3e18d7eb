"""The vtm kernel (simkit/systems/vtm/: rules.py, lanes.py, kernel.py), beyond the contract
every system meets
(tests/test_contract.py: trace = twin, events, run_chunk = flushed trace, workers, CRN,
tiny attack shares, fixed dice):

* ``simkit.run`` of small scenarios against EXACT per-round means: every path of the
  revision-2 twin (tests/twins/vtm.py) enumerated with ``Fraction`` (every d10, tie
  order, attack_share draw and target), every reported number of every combatant,
  group and side within 5 standard errors (equal when the standard error is 0);
* the sum plans: the coded, constant and alias slots of the fast plan give the sums
  of the plain plan (every slot flushed every round) bit for bit; constant and alias
  slots hold in every traced round;
* V2 beyond 16 combatants (buckets of initiative) and many combatants against the twin;
* the worked example file, and what ``simkit trace`` prints.
"""

from __future__ import annotations

import random
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from builders import make_scenario
from contract_support import row_counts
from enumerate import every_round
from twins import vtm as twin

import simkit
from simkit import engine, systems
from simkit.analysis.trace import play_trace
from simkit.metrics import ROUNDS, aggregate_round, metric_slots
from simkit.scenario import load_scenario, scenario_from_dict
from simkit.systems.stream import chunk_state
from simkit.systems.vtm import counts as vtm_counts
from simkit.systems.vtm import kernel
from simkit.systems.vtm import lanes as vtm_lanes
from simkit.systems.vtm import rules as vtm_rules

ROOT = Path(__file__).resolve().parents[1]
MC_ROUNDS = 300_000
VTM = systems.get("vtm")


def _key(seed: int) -> np.ndarray:
    return chunk_state(np.random.SeedSequence(seed), 0)


# ------------------------------------------------------------------ exact expectations
def counts_row(counts: dict, layout) -> np.ndarray:
    """A twin round's counts as a complete row of ``layout`` (group and side slots
    through aggregate_round): the inverse of contract_support.row_counts."""
    row = np.zeros(layout.size, np.int64)
    for i, name in enumerate(layout.names):
        for m, count in enumerate(layout.counts):
            row[layout.count_slots[i, m]] = counts[(name, count)]
        for j, other in enumerate(layout.names):
            if j != i:
                row[layout.before_index(i, j)] = counts[(name, f"acts_before.{other}")]
        for k in range(layout.dist_sizes[i]):
            row[layout.dist_index(i, k)] = counts[(name, f"actions_dist.{k}")]
    for count in layout.scenario_counts:
        row[layout.scenario_index(count)] = counts[("", count)]
    aggregate_round(row, *layout.aggregation)
    return row


_EXACT: dict[int, list[Fraction]] = {}


def exact_means(scenario) -> list[Fraction]:
    """The exact per-round mean of every slot of the scenario's layout."""
    if id(scenario) in _EXACT:
        return _EXACT[id(scenario)]
    layout = engine.layout_for(scenario)
    total = [Fraction(0)] * layout.size
    mass = Fraction(0)
    for p, counts in every_round(lambda draws: twin.play_round(scenario, draws)):
        mass += p
        row = counts_row(counts, layout)
        for k in np.flatnonzero(row):
            total[k] += p * int(row[k])
    assert mass == 1
    _EXACT[id(scenario)] = total
    return total


def assert_run_matches_exact(scenario, seed: int = 2026) -> int:
    """Every reported number per combatant, group and side (ratios too) within 5 se of
    its exact value; returns how many were checked."""
    exact = exact_means(scenario)
    result = simkit.run(scenario, rounds=MC_ROUNDS, rng=seed, workers=1)
    layout = result.layout
    estimates = {}
    for level in ("combatant", "group", "side"):
        for who, metric, *numbers in result.level_rows(level):
            estimates[(level, who, metric)] = numbers
    for who, metric, *numbers in result.rows:
        estimates[("combatant", who, metric)] = numbers
    checked = 0
    for level in ("combatant", "group", "side"):
        for s in metric_slots(layout, level):
            want = exact[s.num] / (1 if s.den == ROUNDS else exact[s.den])
            mean, se = estimates[(level, s.who, s.metric)][:2]
            where = (level, s.who, s.metric, mean, float(want), se)
            if se == 0:
                assert mean == float(want), where
            else:
                assert abs(mean - float(want)) <= 5 * se, where
            checked += 1
    return checked


def vtm(*combatants: dict, **rules) -> object:
    data = {"scenario": {"name": "exact", "system": "vtm"}, "rules": rules}
    return scenario_from_dict({**data, "combatant": list(combatants)})


def fighter(name: str, side: str, rating: int, **fields) -> dict:
    return {"name": name, "side": side, "rating": rating, **fields}


EXACT_SCENARIOS = {
    # V1/V2 worked example, and the rating given as dexterity + wits
    "worked-example": vtm(fighter("A", "a", 5), fighter("B", "b", 3)),
    "dexterity-wits": vtm(
        {"name": "A", "side": "a", "dexterity": 2, "wits": 3},
        {"name": "B", "side": "b", "dexterity": 1, "wits": 2},
    ),
    # V2 ties: a shared slot, or a fair coin; V7 on the roll, not on the tie-break
    "tie-simultaneous": vtm(fighter("A", "a", 4), fighter("B", "b", 4)),
    "tie-random": vtm(fighter("A", "a", 4), fighter("B", "b", 4), tie="random"),
    "wounds": vtm(fighter("A", "a", 5, wound_penalty=2), fighter("B", "b", 3)),
    # V5/V6 revision 2: Celerity given up after the turn; revision 1's variant
    "celerity-end": vtm(
        fighter("C", "c", 5, extra_actions=1, abort="always"), fighter("E", "e", 3)
    ),
    "celerity-in-turn": vtm(
        fighter("C", "c", 5, extra_actions=1, abort="always"), fighter("E", "e", 3), multi="in_turn"
    ),
    "before-acting": vtm(fighter("A", "a", 5), fighter("B", "b", 3, abort="before_acting")),
    # V4: the faster delays and acts right after the other's action
    "delay": vtm(fighter("A", "a", 9, delay="until_enemy_acts"), fighter("B", "b", 0)),
    # a count group, attack_share 1/2, a group target, a three-way random tie, aborts
    "group-share-random": vtm(
        fighter("A", "a", 2, attack_share=0.5, target="G"),
        fighter("G", "g", 2, count=2, abort="always"),
        tie="random",
    ),
    # three sides, named targets, delay and abort together, shared slots
    "three-sides": vtm(
        fighter("A", "a", 3, delay="until_enemy_acts", target="C"),
        fighter("B", "b", 3, abort="always", actions=2, target="A"),
        fighter("C", "c", 3, abort="always", target="B"),
    ),
    # extra actions in a shared slot (V6 "end"), wounds, attack_share 0 and 1/4
    "extra-shared": vtm(
        fighter("A", "a", 4, wound_penalty=1, extra_actions=2, attack_share=0.25),
        fighter("B", "b", 3, extra_actions=1, abort="always", attack_share=0.0),
    ),
    # a group, a side that is more than the group, its opponents' side of one
    "group-and-side": vtm(
        fighter("W", "pack", 2, count=2, abort="always"),
        fighter("L", "pack", 3, actions=2),
        fighter("H", "hunter", 4, extra_actions=1, abort="always"),
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(EXACT_SCENARIOS))
def test_run_within_five_se_of_the_exact_twin(name):
    checked = assert_run_matches_exact(EXACT_SCENARIOS[name])
    assert checked > 20


def test_exact_group_and_side_values():
    """The aggregate slots of the exact rows: the pack's attacks received are the sum of
    its members', and P(some pack member acts first) is 1 - P(the hunter alone is first)."""
    scenario = EXACT_SCENARIOS["group-and-side"]
    layout = engine.layout_for(scenario)
    exact = exact_means(scenario)
    side = layout.source("side", "pack")
    group = layout.source("group", "W")
    members = [layout.count_index(i, "attacks_received") for i in range(3)]
    assert exact[layout.slot(side, "attacks_received")] == sum(exact[k] for k in members)
    first = layout.slot(side, "first_action")
    hunter_first = exact[layout.count_index(3, "first_action")]
    # the hunter's slot is shared with nobody: its rating 4 is unique
    assert exact[first] == 1 - hunter_first
    assert exact[layout.slot(group, "aborts")] == sum(
        exact[layout.count_index(i, "aborts")] for i in (0, 1)
    )
    # every attack of H is on a pack member; the pack's attacks are all on H
    hunter = layout.source("side", "hunter")
    assert (
        exact[layout.slot(side, "attacks_received")] == exact[layout.slot(hunter, "attacks_made")]
    )
    assert (
        exact[layout.slot(hunter, "attacks_received")] == exact[layout.slot(side, "attacks_made")]
    )


# ------------------------------------------------------------------ the worked example
def test_worked_example_file_gives_p_072():
    """scenarios/worked_example_vtm.toml: the rules' P = 0.72 (docs/rules.md) within 5 se."""
    scenario = load_scenario(ROOT / "scenarios/worked_example_vtm.toml")
    result = simkit.run(scenario, rounds=MC_ROUNDS, rng=7, workers=1)
    elder = result.estimate("Elder", "first_action")
    assert abs(elder.mean - 0.72) <= 5 * elder.se
    assert elder.se > 0
    neonate = result.estimate("Neonate", "first_action")
    assert abs(neonate.mean - 0.28) <= 5 * neonate.se
    assert result.mean("Elder", "first_action") + result.mean("Neonate", "first_action") == 1


def test_worked_example_trace_with_fixed_dice_shows_the_order():
    """Equal totals (4 + 5 = 6 + 3): the Elder's higher rating puts it first (V2); the
    Neonate, in the slower slot, declares first (V3).  A Neonate 3 better goes first."""
    scenario = load_scenario(ROOT / "scenarios/worked_example_vtm.toml")
    text = play_trace(scenario, 1, 2026, {0: [4], 1: [6]})
    lines = [line.strip() for line in text.splitlines()]
    assert lines[lines.index("Round 1") + 1 :] == [
        "V1 Elder rolls 4 on its d10: initiative 9",
        "V1 Neonate rolls 6 on its d10: initiative 9",
        "V2 slot 1: Elder",
        "V2 slot 2: Neonate",
        "V3 Neonate declares, knowing no opponent's declaration",
        "V3 Elder declares, knowing 1 opponent's declaration",
        "V2 moment 1: Elder acts",
        "V2 Elder attacks Neonate",
        'V5 Neonate does not defend (abort = "never")',
        "V2 moment 2: Neonate acts",
        "V2 Neonate attacks Elder",
        'V5 Elder does not defend (abort = "never")',
    ]
    text = play_trace(scenario, 1, 2026, {0: [4], 1: [7]})
    assert "V2 slot 1: Neonate" in text and "V2 moment 1: Neonate acts" in text


@pytest.mark.parametrize("slot_abort", ["allowed", "never"])
def test_trace_of_a_slot_mate_aborting_in_its_own_moment(slot_abort):
    """Issue 26's case: Twin shares Hunter's slot (same initiative and rating) and its
    action of that moment is still in reserve when Hunter's attack is resolved: V5
    [rev 3] lets it abort (the default); revision 2 ("never") said it acts in the same
    moment."""
    scenario = vtm(
        fighter("Hunter", "a", 3),
        fighter("Twin", "b", 3, abort="always"),
        slot_abort=slot_abort,
    )
    text = play_trace(scenario, 1, 2026, {0: [4], 1: [4]})
    lines = [line.strip() for line in text.splitlines()]
    head = [
        "V2 slot 1: Hunter and Twin share it (same initiative and rating): they act simultaneously",
        "V3 Hunter declares, knowing no opponent's declaration",
        "V3 Twin declares, knowing no opponent's declaration",
        "V2 moment 1: Hunter acts",
        "V2 Hunter attacks Twin",
    ]
    assert lines[lines.index("Round 1") + 3 :][: len(head)] == head
    rest = lines[lines.index("Round 1") + 3 + len(head) :]
    if slot_abort == "allowed":
        assert rest == ["V5 Twin aborts to defend, giving up the action of its turn"]
    else:
        assert rest == [
            "V5 Twin does not defend: it acts in this same moment (simultaneous under "
            'slot_abort = "never")',
            "V2 moment 1: Twin acts",
            "V2 Twin attacks Hunter",
            'V5 Hunter does not defend (abort = "never")',
        ]


# ------------------------------------------------------------------ sum plans
def test_fast_plan_equals_the_plain_plan():
    """Codes, constants, aliases and flushed slots give the sums of the plain plan
    (every slot flushed every round), bit for bit, on random scenarios of both sizes
    (coded up to HIST_MAX combatants, the acts_before block beyond)."""
    rng = random.Random("plans")
    seen = set()
    for k in range(80):
        scenario = twin.random_scenario(rng)
        layout = engine.layout_for(scenario)
        fast = kernel.compile_scenario(scenario, layout)
        plain = kernel.compile_scenario(scenario, layout, plain=True)
        seen.add(("coded", fast.coded_sums.coded))
        seen.add(("values", fast.coded_sums.values > 0))
        seen.add(("constants", fast.coded_sums.const_slots.size > 0))
        a, b = layout.new_sums(), layout.new_sums()
        n, first = rng.choice((1, 5, 700, 3000)), rng.randrange(1000)
        kernel.run_chunk(fast, _key(k), n, a, first=first)
        kernel.run_chunk(plain, _key(k), n, b, first=first)
        assert a.equals(b), (k, scenario.to_dict())
    assert {("coded", True), ("coded", False), ("values", True), ("values", False)} <= seen


def _lane_scenario(rng: random.Random, tie: str = "simultaneous"):
    """A random scenario whose rounds may be played side by side (kernel ``H_LANES``):
    one action each, no delay or abort, attack_share 0 or 1, at most HIST_MAX."""
    while True:
        entries = twin.random_entries(rng, aborts=("never",))
        for e in entries:
            for field in ("delay", "actions", "extra_actions", "abort"):
                e.pop(field, None)
            e["attack_share"] = rng.choice((0.0, 1.0, 1.0, 1.0))
        if sum(e.get("count", 1) for e in entries) <= vtm_counts.HIST_MAX:
            break
    rules = {
        "tie": tie,
        "multi": rng.choice(("end", "in_turn")),
        "slot_abort": rng.choice(("allowed", "never")),  # V5: nobody aborts here
    }
    data = {"scenario": {"name": "lanes", "system": "vtm"}, "rules": rules}
    return scenario_from_dict({**data, "combatant": entries}, source="<lanes>")


def test_rounds_side_by_side_equal_rounds_one_by_one():
    """The lanes (many rounds at once from their first sixteen byte draws) give the sums
    of the plain plan bit for bit, whatever the chunk's first round and length; rounds
    the lanes cannot finish (rejected bytes) are played one by one, and both kinds
    occur.  Without lanes only when some counts must be flushed (too many values for a
    code); tie = "random" draws while ordering: no lanes."""
    rng = random.Random("lanes")
    kept = rejected = with_lanes = 0
    for k in range(40):
        scenario = _lane_scenario(rng)
        layout = engine.layout_for(scenario)
        fast = kernel.compile_scenario(scenario, layout)
        if fast.lanes_off is not None:  # only if some counts must be flushed every round
            assert fast.lanes_off == "counts_flushed", scenario.to_dict()
            assert fast.plan[kernel.H_FLUSH] < fast.plan[kernel.H_BINARY], scenario.to_dict()
            continue
        assert fast.plan[kernel.H_LANES] == 1
        with_lanes += 1
        plain = kernel.compile_scenario(scenario, layout, plain=True)
        n, first = (
            rng.choice((vtm_lanes.FAST_LANES - 1, 3 * vtm_lanes.FAST_LANES + 17)),
            rng.randrange(999),
        )
        a, b = layout.new_sums(), layout.new_sums()
        kernel.run_chunk(fast, _key(k), n, a, first=first)
        kernel.run_chunk(plain, _key(k), n, b, first=first)
        assert a.equals(b), (k, scenario.to_dict())
        lanes = np.zeros((vtm_lanes.L_ROWS, vtm_lanes.FAST_LANES), np.int64)
        words = np.zeros(vtm_lanes.FAST_LANES, np.uint64)
        vtm_lanes.play_lanes(
            _key(k)[:4].copy(), first, fast.m.copy(), fast.plan, words, words.copy(), lanes
        )
        kept += int(lanes[vtm_lanes.L_OK].sum())
        rejected += vtm_lanes.FAST_LANES - int(lanes[vtm_lanes.L_OK].sum())
    assert kept > 0 and rejected > 0 and with_lanes >= 30
    random_tie = _lane_scenario(rng, tie="random")
    compiled = kernel.compile_scenario(random_tie, engine.layout_for(random_tie))
    assert compiled.lanes_off == "random_tie" and compiled.plan[kernel.H_LANES] == 0


def test_a_pair_across_codes_is_summed_every_round():
    """A cross sum of two slots that come from different codes (``simkit tune``
    pairs): summed round by round, equal to the plain plan and to the trace."""
    scenario = EXACT_SCENARIOS["three-sides"]
    base = engine.layout_for(scenario)
    pairs = (
        (base.count_index(0, "first_action"), base.count_index(1, "known_declarations")),
        (base.before_index(0, 2), base.count_index(2, "attacks_received")),
    )
    layout = base.with_pairs(pairs)
    fast = kernel.compile_scenario(scenario, layout)
    plain = kernel.compile_scenario(scenario, layout, plain=True)
    assert fast.coded_sums.coded and fast.coded_sums.pairs_round.size >= 2
    a, b = layout.new_sums(), layout.new_sums()
    kernel.run_chunk(fast, _key(3), 5000, a)
    kernel.run_chunk(plain, _key(3), 5000, b)
    assert a.equals(b)
    rows, _, _ = kernel.trace(fast, _key(3), 5000)
    for (x, y), got in zip(layout.pairs, a.sx, strict=True):
        assert got == int((rows[:, x] * rows[:, y]).sum())


def test_constant_and_alias_slots_hold_in_every_round():
    """What the plan takes as constant (or equal to another slot) is so in every traced
    round of random scenarios."""
    rng = random.Random("constants")
    for k in range(40):
        scenario = twin.random_scenario(rng)
        compiled = engine.prepare(scenario).compiled
        cd = compiled.coded_sums
        rows, _, _ = kernel.trace(compiled, _key(100 + k), 200)
        assert (rows[:, cd.const_slots] == cd.const_values).all()
        assert (rows[:, cd.alias_slots] == rows[:, cd.alias_of]).all()


def test_the_bench_scenario_is_coded_without_per_round_flushes():
    """Four combatants with default policies: every slot constant, an alias or coded;
    nothing is flushed or aggregated round by round."""
    compiled = engine.prepare(scenario_from_dict(VTM.bench_scenario())).compiled
    plan = compiled.plan
    assert compiled.coded_sums.coded and compiled.coded_sums.values > 0
    assert plan[kernel.H_SRC] == plan[kernel.H_FLUSH]  # no flushed or binary slots
    assert plan[kernel.H_PAIRS] == plan[kernel.H_SRC]  # no aggregation every round
    assert not plan[kernel.H_DECLARE] and not plan[kernel.H_FINISH]


# ------------------------------------------------------------------ many combatants
@pytest.mark.parametrize("slot_abort", ["allowed", "never"])
@pytest.mark.parametrize("tie", ["simultaneous", "random"])
@pytest.mark.parametrize("multi", ["end", "in_turn"])
def test_many_combatants_equal_the_twin(tie, multi, slot_abort):
    """More than 16 combatants: V2 by buckets of initiative; every count, state and
    event equal to the twin."""
    scenario = vtm(
        {"name": "Ghoul", "side": "ghouls", "rating": 3, "count": 9, "abort": "always"},
        {"name": "Hunter", "side": "hunters", "rating": 4, "count": 6, "actions": 2},
        {"name": "Elder", "side": "elders", "rating": 8, "extra_actions": 2,
         "delay": "until_enemy_acts", "abort": "before_acting"},
        {"name": "Thrall", "side": "elders", "rating": 3, "count": 3, "attack_share": 0.5,
         "wound_penalty": 1},
        tie=tie, multi=multi, slot_abort=slot_abort,
    )  # fmt: skip
    _trace_equals_twin(scenario, _key(7), 40, first=11)


def test_two_hundred_combatants_equal_the_twin():
    scenario = vtm(
        {"name": "A", "side": "a", "dexterity": 3, "wits": 2, "count": 100},
        {"name": "B", "side": "b", "rating": 4, "count": 99, "abort": "always"},
        {"name": "Boss", "side": "b", "rating": 9, "extra_actions": 3},
    )
    compiled = engine.prepare(scenario).compiled
    assert not compiled.coded_sums.coded
    _trace_equals_twin(scenario, _key(8), 3)
    a, b = compiled.layout.new_sums(), compiled.layout.new_sums()
    kernel.run_chunk(compiled, _key(8), 50, a)
    plain = kernel.compile_scenario(scenario, compiled.layout, plain=True)
    kernel.run_chunk(plain, _key(8), 50, b)
    assert a.equals(b)


def test_large_random_scenarios_equal_the_twin_and_the_plain_plan():
    """Random scenarios of up to about 50 combatants (count groups up to 6), every rule
    and policy: trace = twin, and the fast plan's sums = the plain plan's."""
    rng = random.Random("large")
    sizes = set()
    for k in range(12):
        entries = twin.random_entries(rng, max_entries=8)
        for e in entries:
            if rng.random() < 0.5:
                e["count"] = rng.randint(2, 6)
        rules = {
            "tie": rng.choice(("simultaneous", "random")),
            "multi": rng.choice(("end", "in_turn")),
            "slot_abort": rng.choice(("allowed", "never")),
        }
        scenario = vtm(*entries, **rules)
        sizes.add(len(scenario.combatants) > vtm_rules.SMALL)
        _trace_equals_twin(scenario, _key(200 + k), 6, first=k)
        layout = engine.layout_for(scenario)
        a, b = layout.new_sums(), layout.new_sums()
        kernel.run_chunk(kernel.compile_scenario(scenario, layout), _key(k), 400, a)
        kernel.run_chunk(kernel.compile_scenario(scenario, layout, plain=True), _key(k), 400, b)
        assert a.equals(b)
    assert sizes == {True, False}


@pytest.mark.parametrize("multi", ["end", "in_turn"])
def test_aborts_in_a_shared_moment_equal_the_twin(multi):
    """V5 [rev 3]: equal ratings on three sides, so that slot-mates attack each other;
    every policy, delays and several actions: trace = twin under both slot_abort
    readings, the fast plan's sums = the plain plan's, and the readings differ (pending
    slot-mates do abort under "allowed")."""
    entries = [
        {"name": "A", "side": "a", "rating": 2, "count": 2, "abort": "always", "actions": 2},
        {"name": "B", "side": "b", "rating": 2, "count": 2, "abort": "before_acting",
         "extra_actions": 1},
        {"name": "C", "side": "c", "rating": 2, "abort": "always", "extra_actions": 2,
         "delay": "until_enemy_acts", "attack_share": 0.5},
    ]  # fmt: skip
    aborts = {}
    for slot_abort in ("allowed", "never"):
        scenario = vtm(*entries, multi=multi, slot_abort=slot_abort)
        _trace_equals_twin(scenario, _key(31), 60)
        layout = engine.layout_for(scenario)
        # the lanes play only rounds where nobody can abort, under either reading
        assert kernel.compile_scenario(scenario, layout).lanes_off == "delay_or_abort"
        a, b = layout.new_sums(), layout.new_sums()
        kernel.run_chunk(kernel.compile_scenario(scenario, layout), _key(32), 3000, a)
        kernel.run_chunk(kernel.compile_scenario(scenario, layout, plain=True), _key(32), 3000, b)
        assert a.equals(b)
        records = twin.play_rounds_keyed(scenario, [1, 2, 3, 4], 300)
        aborts[slot_abort] = sum(r.counts[("C", "aborts")] for r in records)
    assert aborts["allowed"] > aborts["never"]


def _trace_equals_twin(scenario, key, n, first=0):
    job = engine.prepare(scenario)
    tr = VTM.trace(job.compiled, key, n, first=first)
    records = twin.play_rounds_keyed(scenario, [int(w) for w in key[:4]], n, first=first)
    for r, record in enumerate(records):
        assert row_counts(tr.rows[r], job.layout) == record.counts, r
        assert [int(w) for w in tr.states[r]] == record.state, r
        events = [VTM.event_tuple(e, scenario) for e in tr.events if e[0] == first + r]
        assert events == record.log, r


# ------------------------------------------------------------------ events
def test_every_event_line_cites_its_rule():
    """``simkit trace`` lines start with the rule ID of the twin's event; JSON events
    carry round, event and rule; slot masks name every member (beyond 64 too)."""
    scenario = vtm(
        {"name": "X", "side": "x", "rating": 2, "count": 70, "abort": "always"},
        {"name": "Y", "side": "y", "rating": 5, "count": 3, "delay": "until_enemy_acts",
         "extra_actions": 1, "attack_share": 0.5},
        {"name": "Z", "side": "z", "rating": 1, "abort": "before_acting"},
    )  # fmt: skip
    job = engine.prepare(scenario)
    tr = VTM.trace(job.compiled, _key(9), 3)
    kinds = set()
    for e in tr.events:
        t = VTM.event_tuple(e, scenario)
        kinds.add(t[0])
        assert VTM.event_text(e, scenario).startswith(t[1] + " ")
        j = VTM.event_json(e, scenario)
        assert (j["round"], j["event"], j["rule"]) == (int(e[0]), t[0], t[1])
    assert kinds == set(vtm_rules.EVENT_KINDS)
    shared = [VTM.event_tuple(e, scenario) for e in tr.events if e[1] == vtm_rules.E_SLOT]
    assert sum(len(t[3]) for t in shared) == 3 * len(scenario.combatants)
    assert any(len(t[3]) > 1 and max(map(scenario.index, t[3])) >= 64 for t in shared)


def test_unknown_codes_are_errors():
    scenario = make_scenario("vtm", [fighter("A", "a", 3), fighter("B", "b", 3)])
    layout = engine.layout_for(scenario)
    bad = make_scenario("vtm", [fighter("A", "a", 3, abort="sometimes"), fighter("B", "b", 3)])
    with pytest.raises(ValueError, match="abort: unknown value 'sometimes'"):
        kernel.compile_scenario(bad, layout)
    bad = make_scenario("vtm", [fighter("A", "a", 3), fighter("B", "b", 3)], {"multi": "x"})
    with pytest.raises(ValueError, match="rules.multi: unknown value 'x'"):
        kernel.compile_scenario(bad, layout)
    bad = make_scenario("vtm", [fighter("A", "a", 3), fighter("B", "b", 3)], {"slot_abort": "x"})
    with pytest.raises(ValueError, match="rules.slot_abort: unknown value 'x'"):
        kernel.compile_scenario(bad, layout)
    with pytest.raises(ValueError, match="one d10"):
        kernel.trace(kernel.compile_scenario(scenario, layout), _key(1), 1, dice={0: [11]})


def test_cost_is_about_one_for_the_bench_scenario_and_grows():
    bench = scenario_from_dict(VTM.bench_scenario())
    assert 0.8 <= VTM.cost(bench) <= 1.2
    big = EXACT_SCENARIOS["three-sides"]
    crowd = scenario_from_dict(
        {"scenario": {"name": "c", "system": "vtm"},
         "combatant": [{"name": "A", "side": "a", "rating": 3, "count": 100},
                       {"name": "B", "side": "b", "rating": 3, "count": 100}]}
    )  # fmt: skip
    assert VTM.cost(big) <= VTM.cost(crowd)
    assert engine.chunk_rounds(bench) == engine.CHUNK_ROUNDS
    assert engine.chunk_rounds(crowd) < engine.CHUNK_ROUNDS
