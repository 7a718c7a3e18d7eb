"""A fourth initiative system, written here, runs through run, sweep, compare and report
without any change outside tests/: the proof that systems are plug-ins.

The toy system ``highest_die``: every round each combatant rolls one d6 and adds its
``bonus``; the highest total acts first, ties in a fair random order (``below`` over the
tied, in scenario order); everyone acts once, attacking a random opponent.  H2: an attack
lands (``undefended``) when its target has the attacker's ``stance``.  Its kernel
is plain Python over simkit's random stream; its twin below reads like the rule.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest
from naive_rng import NaiveStream

import simkit
from simkit import engine, systems
from simkit.metrics import aggregate_round, flush_cycle, flush_rows
from simkit.systems.base import EVENT_WIDTH, Field, SystemBase
from simkit.systems.stream import STATE_WORDS, below, canonical_state, roll, round_start

COUNTS = ("first_action", "actions", "no_action", "attacks_made", "attacks_received", "undefended")


def compile_scenario(scenario: Any, layout: Any) -> dict[str, Any]:
    return {
        "layout": layout,
        "bonus": [c["bonus"] for c in scenario.combatants],
        "targets": [scenario.targets(i) for i in range(len(scenario.combatants))],
        "stance": [c["stance"] for c in scenario.combatants],
    }


def play_round(c: Any, st: np.ndarray, y: np.ndarray, dice: Any) -> list[list[int]]:
    """H1 on simkit's stream: counts into ``y``, the events (roll 0, attack 1) returned."""
    lay, n = c["layout"], len(c["bonus"])
    slot = lay.count_slots
    rolled = [roll(st, 6) for _ in range(n)]
    for k, faces in dice.items():
        rolled[k] = faces[0]
    total = [rolled[i] + c["bonus"][i] for i in range(n)]
    order: list[int] = []
    for v in sorted(set(total), reverse=True):
        tied = [i for i in range(n) if total[i] == v]
        while len(tied) > 1:
            order.append(tied.pop(below(st, len(tied))))
        order += tied
    events = [[0, i, rolled[i]] for i in range(n)]
    for step, i in enumerate(order):
        targets = c["targets"][i]
        t = targets[below(st, len(targets))]
        y[slot[i, 0]] += step == 0
        y[slot[i, 1]] += 1
        y[slot[i, 3]] += 1
        y[slot[t, 4]] += 1
        y[slot[t, 5]] += c["stance"][i] == c["stance"][t]  # H2: it lands on a like stance
        y[lay.dist_index(i, 1)] += 1
        for j in order[step + 1 :]:
            y[lay.before_index(i, j)] += 1
        events.append([1, i, t])
    aggregate_round(y, *lay.aggregation)
    return events


def run_chunk(compiled: Any, key: np.ndarray, n_rounds: int, sums: Any, first: int) -> None:
    pa, pb = compiled["layout"].pair_indices()
    st = np.zeros(STATE_WORDS, np.uint64)
    y = np.zeros(compiled["layout"].size, np.int64)
    for r in range(first, first + n_rounds):
        round_start(st, key, r)
        play_round(compiled, st, y, {})
        flush_cycle(y, 1, sums.s1, sums.s2, sums.sl, sums.sx, pa, pb, sums.tot)


def trace(compiled: Any, key: np.ndarray, n_rounds: int, first: int, dice: Any) -> tuple:
    st = np.zeros(STATE_WORDS, np.uint64)
    rows = np.zeros((n_rounds, compiled["layout"].size), np.int64)
    events, states = [], []
    for r in range(n_rounds):
        round_start(st, key, first + r)
        for event in play_round(compiled, st, rows[r], dice):
            events.append([first + r, *event] + [0] * (EVENT_WIDTH - 4))
        states.append(canonical_state(st))
    return rows, np.array(events, np.int64).reshape(-1, EVENT_WIDTH), np.array(states)


class HighestDie(SystemBase):
    name = "highest_die"
    title = "highest d6 acts first"
    rule_ids = "H1"
    fields = {
        "bonus": Field(int, 0, 0, 5, meaning="H1: added to the d6"),
        "stance": Field(
            str, "high", choices=("high", "low"), meaning="H2: an attack lands on a like stance"
        ),
    }
    policies = ("stance",)  # searched by simkit policies with no change to simkit
    main_field = "bonus"
    counts = COUNTS
    kernel = sys.modules[__name__]  # compile_scenario, run_chunk, trace above

    def rollers(self, scenario: Any) -> list[tuple[str, int, int]]:
        return [(c.name, 1, 6) for c in scenario.combatants]

    def event_tuple(self, event, scenario):
        names = scenario.names
        if event[1] == 0:
            return ("roll", "H1", names[event[2]], int(event[3]))
        return ("attack", "H1", names[event[2]], names[event[3]])

    def bench_scenario(self) -> dict[str, Any]:
        return {
            "scenario": {"name": "toy", "system": self.name},
            "combatant": [
                {"name": "A", "side": "a", "count": 2, "bonus": 1},
                {"name": "B", "side": "b", "count": 2},
            ],
        }


def twin_round(scenario: Any, draws: NaiveStream) -> tuple[list[str], dict[str, str]]:
    """H1, read literally: roll, order by total (ties at random), everyone attacks once."""
    fighters = scenario.combatants
    total = {c.name: draws.roll(6) + c["bonus"] for c in fighters}
    order: list[str] = []
    for v in sorted(set(total.values()), reverse=True):
        tied = [c.name for c in fighters if total[c.name] == v]
        while len(tied) > 1:
            order.append(tied.pop(draws.below(len(tied))))
        order += tied
    attacked = {}
    for name in order:
        i = scenario.index(name)
        opponents = [scenario.combatants[j].name for j in scenario.targets(i)]
        attacked[name] = opponents[draws.below(len(opponents))]
    return order, attacked


@pytest.fixture(scope="module")
def toy():
    system = systems.register(HighestDie())
    yield system
    systems.unregister(system.name)


@pytest.fixture
def scenario_file(toy, tmp_path):
    path = tmp_path / "toy.toml"
    path.write_text(
        '[scenario]\nname = "Toy"\nsystem = "highest_die"\nrounds = 3000\nseed = 4\n\n'
        '[[combatant]]\nname = "Knight"\nside = "red"\nbonus = 2\n\n'
        '[[combatant]]\nname = "Imp"\nside = "blue"\ncount = 2\n'
    )
    return path


def test_the_toy_kernel_equals_its_twin(scenario_file):
    scenario = simkit.load_scenario(scenario_file)
    job = engine.prepare(scenario)
    key = engine.core.chunk_state(np.random.SeedSequence(3), 0)
    tr = job.system.trace(job.compiled, key, 200)
    for r in range(200):
        stream = NaiveStream.for_round([int(w) for w in key[:4]], r)
        order, attacked = twin_round(scenario, stream)
        got = [job.system.event_tuple(e, scenario) for e in tr.events if e[0] == r]
        assert [e[2] for e in got if e[0] == "attack"] == order
        assert {e[2]: e[3] for e in got if e[0] == "attack"} == attacked
        assert [int(w) for w in tr.states[r]] == stream.state()
    sums = job.layout.new_sums()
    job.system.run_chunk(job.compiled, key, 200, sums)
    assert sums.equals(flush_rows(tr.rows, job.layout))


def test_the_toy_system_through_run_sweep_compare_and_report(scenario_file, tmp_path):
    result = simkit.run(scenario_file, rounds=3000, workers=2)
    assert result.scenario.system == "highest_die"
    assert result.mean("Knight", "actions") == 1.0
    first = result.estimate("Knight", "first_action")
    # P(d6 + 2 beats two d6, ties broken fairly), exactly: sum over the Knight's die.
    exact = 0.0
    for k in range(1, 7):
        for a in range(1, 7):
            for b in range(1, 7):
                t = k + 2
                if t > a and t > b:
                    exact += 1 / 216
                elif t >= a and t >= b:
                    exact += 1 / 216 / (1 + (a == t) + (b == t))
    assert abs(first.mean - exact) <= 5 * first.se
    sides = result.by("side")
    red = sides[(sides.side == "red") & (sides.metric == "actions")].iloc[0]
    assert red["mean"] == 1.0
    sweep = simkit.sweep(scenario_file, ["Knight.bonus=0..2"], rounds=2000)
    assert len(sweep.results) == 3
    c = simkit.compare(scenario_file, set=["Knight.bonus=0"], rounds=2000)
    d = c.difference("Knight", "first_action")
    assert d.difference < 0 and d.ci_high < 0
    path = simkit.report(scenario_file, tmp_path / "report", rounds=2000)
    assert path.exists() and "Knight" in path.read_text()


def test_the_toy_system_gets_a_sensitivity(scenario_file):
    """Its main stat (``main_field = "bonus"``, 0..5) one point up and down, a group as
    one, the bound respected; no rules.  Everyone acts once whatever the dice, so the
    action economy cannot move; the Knight's first action can."""
    s = simkit.sensitivity(scenario_file, rounds=3000, workers=2)
    changes = [(v.knob, v.step) for v in s.variants]
    assert changes == [("Knight.bonus", 1), ("Knight.bonus", -1), ("Imp.bonus", 1)]
    assert s.skipped == ("Imp.bonus -1 skipped: bonus 0 is the minimum",)
    assert (s.table.difference == 0).all() and (s.table.se_paired == 0).all()
    assert s.answer == (
        "No knob changes any side's action economy here: every change is exactly 0, batch by batch."
    )
    first = simkit.sensitivity(scenario_file, rounds=3000, objective="Knight.first_action")
    t = first.table.set_index(["knob", "changed_to"])
    assert t.loc[("Knight.bonus", "3")].ci_low > 0
    assert t.loc[("Knight.bonus", "1")].ci_high < 0
    assert t.loc[("Imp.bonus", "1")].ci_high < 0
    assert first.answer.startswith("The balance moves most with ")


def test_the_toy_systems_policy_field_is_searched(scenario_file):
    """Its one policy field, declared in its System object, is searched by
    ``simkit.policies`` with no change to simkit.  Every attack of the Knight lands on
    the Imps while their stance is like his (H2): with the default objective (attacks
    received by the other side minus attacks received, the toy counts no defenses) and
    every round the same (each combatant attacks once), the values are exact: the
    Knight's "low" loses exactly 1 a round against the Imps' "high"; the Imps' best is
    the same as written, and every se is 0."""
    search = simkit.policies(scenario_file, rounds=2000)
    table = search.table.set_index(["combatant", "field"])
    assert set(table.index) == {("Knight", "stance"), ("Imp", "stance")}
    knight = search.alternatives.set_index(["combatant", "value"])
    assert knight.loc[("Knight", "low"), "gain"] == 0  # received: 2 either way, landed: none
    row = table.loc[("Knight", "stance")]
    assert row["best"] == "high" and row["verdict"] == "file's value best"
    # Imps: the Knight's landed attacks count against them only through undefended, which
    # the default objective leaves out: every stance receives the same attacks.
    assert (search.alternatives.gain == 0).all()


def test_best_responses_of_a_matching_game_cycle(scenario_file):
    """Matching pennies: the Knight wants his attacks to land (a like stance, H2), the
    Imps want them not to: no profile is a best response for both, so the search must
    stop at the first repeated profile and name the cycle's four members."""
    search = simkit.policies(
        scenario_file, objective="red=side:blue.undefended", rounds=2000, equilibrium=True
    )
    assert search.objectives["red"].text == "side:blue.undefended"
    assert search.objectives["blue"].text == "-side:blue.undefended"
    e = search.equilibrium
    assert e.status == "cycle"
    members = [(m[("Knight", "stance")], m[("Imp", "stance")]) for m in e.cycle]
    assert members == [("high", "high"), ("high", "low"), ("low", "low"), ("low", "high")]
    assert [(s.side, s.new) for s in e.steps][:4] == [
        ("blue", "low"),
        ("red", "low"),
        ("blue", "high"),
        ("red", "high"),
    ]
    # every gain is exactly one attack a round (2000 rounds, no noise)
    assert all(s.gain.difference in (1.0, 2.0) and s.gain.se == 0 for s in e.steps)
    assert "cycle" in search.format_table()
