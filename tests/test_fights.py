"""Fights of several rounds (R8a): ``[scenario] fight_rounds`` and ``opening``.

* the kernel plays fights as the readiness twin does on the same dice
  (``twin.play_fights_keyed``): every count, stream state, carry and event, R8 carrying
  within a fight and every fight starting afresh;
* the engine's bulk play of fights (``engine.fights.play_rows``: two passes and the
  replay of rounds whose carry was not their fight's) gives the rows of the round by
  round play (``trace_fights``), and ``simulate`` their sums, whatever the workers;
* exact: a 2-round fight enumerated with Fractions (tests/enumerate.py), against
  values derived by hand and against the kernel's per-round-index intervals;
* validation and the command line.
"""

from __future__ import annotations

import dataclasses
import json
import random
from fractions import Fraction

import numpy as np
import pytest
from contract_support import row_counts
from enumerate import expectation
from twins import readiness as twin

from simkit import engine, systems
from simkit.engine import fights as fights_engine
from simkit.engine.fights import play_rows, rows_sums, trace_fights
from simkit.metrics import Z95
from simkit.scenario import ScenarioError, scenario_from_dict
from simkit.systems.stream import chunk_state

READINESS = systems.get("readiness")


def _key(seed: int, k: int = 0) -> np.ndarray:
    return chunk_state(np.random.SeedSequence(seed), k)


def _fight_scenario(scenario, k: int, rng: random.Random):
    """``scenario`` in fights of k rounds, ``opening`` on some combatants."""
    combatants = []
    for c in scenario.combatants:
        if rng.random() < 0.5:
            params = type(c.params)({**c.params, "opening": True})
            c = dataclasses.replace(c, params=params)
        combatants.append(c)
    return dataclasses.replace(scenario, fight_rounds=k, combatants=tuple(combatants))


def _compiled(scenario):
    job = engine.prepare(scenario)
    after = READINESS.after_opening(scenario)
    later = None if after is None else READINESS.compile(after, job.layout)
    return job, later


def _stalemates(k: int = 3, readiness: int = 2):
    """Everyone holds until attacked: a fresh round is a stalemate (R8), the round after
    it is forced (no holds) and so is not."""
    return scenario_from_dict(
        {
            "scenario": {"name": "stalemates", "system": "readiness", "fight_rounds": k},
            "combatant": [
                {"name": "A", "side": "a", "readiness": readiness, "hold": "until_attacked"},
                {
                    "name": "B",
                    "side": "b",
                    "readiness": readiness,
                    "hold": "until_attacked",
                    "advantage": 3,
                    "opening": True,
                },
            ],
        }
    )


# --------------------------------------------------------------------------- kernel = twin
def _compare_fights_with_twin(scenario, key, n, dice=None):
    job, later = _compiled(scenario)
    k = scenario.fight_rounds
    tr = trace_fights(READINESS, job.compiled, later, key, n, k, dice)
    records = twin.play_fights_keyed(scenario, [int(w) for w in key[:4]], n, k, dice)
    events: dict[int, list[tuple]] = {}
    for e in tr.events:
        events.setdefault(int(e[0]), []).append(READINESS.event_tuple(e, scenario))
    for r, (counts, state, carry, log) in enumerate(records):
        assert row_counts(tr.rows[r], job.layout) == counts, f"round {r}: counts differ"
        assert [int(w) for w in tr.states[r]] == [int(w) for w in state], f"round {r}: state"
        assert int(tr.carries[r]) == int(carry), f"round {r}: carry differs"
        assert events.get(r, []) == list(log), f"round {r}: events differ"
    return job, later, tr


def test_kernel_fights_equal_the_twin_on_random_scenarios():
    rng = random.Random("fights")
    carried = reset = 0
    for n in range(200):  # at least 24 scenarios, and on until both were seen
        if n >= 24 and carried > 0 and reset > 0:
            break
        k = rng.choice((1, 2, 3, 5))
        scenario = _fight_scenario(twin.random_scenario(rng), k, rng)
        _, _, tr = _compare_fights_with_twin(scenario, _key(3000 + n), 40)
        ends = tr.carries[np.arange(40) % k == k - 1]
        carried += int(tr.carries[np.arange(40) % k != k - 1].sum())
        reset += int(ends.sum())
    assert carried > 0 and reset > 0  # R8 carried within fights and was cut between them


def test_r8_carries_within_a_fight_and_every_fight_starts_afresh():
    scenario = _stalemates(3)
    _, _, tr = _compare_fights_with_twin(scenario, _key(5), 9)
    stalemate = [row_counts(r, engine.layout_for(scenario))[("", "stalemate")] for r in tr.rows]
    # rounds 1 and 3 of every fight are stalemates; round 2 is forced (R8 carried);
    # round 1 of the next fight is not forced although round 3 was a stalemate
    assert stalemate == [1, 0, 1] * 3
    assert list(tr.carries) == [1, 0, 1] * 3


def test_the_opening_round_only_has_the_advantage():
    scenario = _stalemates(2)
    _, _, tr = _compare_fights_with_twin(scenario, _key(6), 4, dice={1: [1, 1]})
    prepared = [int(e[0]) for e in tr.events if READINESS.event_tuple(e, scenario)[1] == "R2"]
    assert prepared == [0, 2]  # B prepares (R2) in the first round of each fight only


# --------------------------------------------------------------------------- engine
@pytest.mark.parametrize("k", [1, 2, 3, 7])
def test_bulk_play_equals_round_by_round_play(k):
    rng = random.Random(f"bulk-{k}")
    for n in range(6):
        scenario = _fight_scenario(twin.random_scenario(rng), k, rng)
        job, later = _compiled(scenario)
        key = _key(4000 + n)
        fights = 60 // k
        slow = trace_fights(READINESS, job.compiled, later, key, fights * k, k)
        fast = play_rows(READINESS, job.compiled, later, key, 0, fights, k)
        assert np.array_equal(fast, slow.rows)
    scenario = _stalemates(k)
    job, later = _compiled(scenario)
    slow = trace_fights(READINESS, job.compiled, later, _key(1), 12 * k, k)
    assert np.array_equal(play_rows(READINESS, job.compiled, later, _key(1), 0, 12, k), slow.rows)


def test_simulate_gives_the_sums_of_the_traced_fights_for_any_workers(monkeypatch):
    monkeypatch.setattr(engine.core, "CHUNK_ROUNDS", 90)  # several chunks of whole fights
    monkeypatch.setattr(fights_engine, "PIECE_ROUNDS", 20)
    rng = random.Random("simulate")
    scenario = _fight_scenario(twin.random_scenario(rng), 4, rng)
    seq = np.random.SeedSequence(11)
    one = engine.simulate(scenario, 1001, seq, workers=1)
    two = engine.simulate(scenario, 1001, seq, workers=2)
    assert one.sums.equals(two.sums)
    assert one.sums.rounds == 1004 and one.sums.cycles == 251  # rounded up to whole fights
    for a, b in zip(one.fights.per_index, two.fights.per_index, strict=True):
        assert a.equals(b)
    job, later = _compiled(scenario)
    sizes = fights_engine.fight_chunks(251, 4, 90)
    assert sizes == [22] * 11 + [9]
    rows = np.concatenate(
        [
            trace_fights(
                READINESS, job.compiled, later, engine.core.chunk_state(seq, c), n * 4, 4
            ).rows
            for c, n in enumerate(sizes)
        ]
    )
    by_fight = rows.reshape(251, 4, -1)
    assert rows_sums(job.layout, by_fight.sum(axis=1), 4).equals(one.sums)
    for j in range(4):
        assert rows_sums(job.layout, by_fight[:, j], 1).equals(one.fights.per_index[j])


@pytest.mark.parametrize("system", ["vtm", "perception"])
def test_systems_without_an_opening_play_fights_as_rounds(system):
    """vtm and perception carry nothing between rounds and have no opening: a fight is
    K rounds as they come, and the per-round-index results are those rounds."""
    path = {"vtm": "scenarios/vtm_duel.toml", "perception": "scenarios/perception_gunnar_wolf.toml"}
    from simkit.scenario import load_scenario

    scenario = dataclasses.replace(load_scenario(path[system]), fight_rounds=3)
    sys_ = systems.get(system)
    assert sys_.after_opening(scenario) is None
    job = engine.prepare(scenario)
    rows = play_rows(sys_, job.compiled, None, _key(2), 0, 10, 3)
    assert np.array_equal(rows, sys_.trace(job.compiled, _key(2), 30).rows)


# --------------------------------------------------------------------------- exact
OPENING = {
    "scenario": {"name": "two-round ambush", "system": "readiness", "fight_rounds": 2},
    "combatant": [
        {"name": "A", "side": "a", "readiness": 1, "advantage": 2, "opening": True},
        {"name": "B", "side": "b", "readiness": 1, "hold": "until_attacked"},
    ],
}


def _exact_fight(scenario):
    """E[count] per (round index, combatant, count) of one fight, exactly."""

    def play(draws):
        out = {}
        for j, counts in enumerate(twin.play_fight(scenario, draws, scenario.fight_rounds)):
            for key, value in counts.items():
                out[(j + 1, *key)] = value
        return out

    return expectation(play)


def test_a_two_round_fight_enumerated_exactly():
    scenario = scenario_from_dict(OPENING)
    exact = _exact_fight(scenario)
    # Round 1: A's d6 is raised by 2 (never above 6): it shows 3..6, B's die 1..6; B
    # holds until attacked, so A always acts first, and B answers hastily when its die
    # is below A's.  P(A's die > B's) = sum over A's raised die a of P(a) (a - 1) / 6:
    # a = 3 (A rolled 1), 4 (2), 5 (3), 6 (4, 5, 6) -> (2 + 3 + 4 + 3 * 5) / 36 = 24/36.
    assert exact[(1, "A", "first_action")] == 1
    assert exact[(1, "B", "hasty_defenses")] == Fraction(24, 36)
    # Round 2: no advantage: P(A's d6 > B's d6) = 15/36.
    assert exact[(2, "A", "first_action")] == 1
    assert exact[(2, "B", "hasty_defenses")] == Fraction(15, 36)
    # No stalemate (A never holds): nothing carries.
    assert exact[(1, "", "stalemate")] == exact[(2, "", "stalemate")] == 0


def test_the_kernel_per_round_index_intervals_cover_the_exact_values():
    scenario = scenario_from_dict({**OPENING, "scenario": {**OPENING["scenario"], "seed": 3}})
    exact = _exact_fight(scenario)
    from simkit.analysis.run import run

    result = run(scenario, 40_000)
    assert result.fights.fights == 20_000
    table = result.by_round("side")
    assert list(table.columns) == ["round", "side", "metric", "mean", "se", "ci_low", "ci_high"]
    assert set(table["round"]) == {"1", "2", "fight"}
    rows = {(r, w, m): (mean, se) for r, w, m, mean, se, *_ in result.round_rows()}
    checked = 0
    for (j, who, count), value in exact.items():
        got = rows.get((str(j), who, count))
        if got is None or "." in count:
            continue
        mean, se = got
        if se == 0:
            assert mean == float(value)
        else:  # a 99.9% band: 3.29 standard errors (fixed seed)
            assert abs(mean - float(value)) <= 3.29 * se, (j, who, count, mean, value, se)
        checked += 1
    assert checked > 20
    # per fight: the sum of the two rounds, fight-level standard error
    mean, se = rows[("fight", "B", "hasty_defenses")]
    assert abs(mean - float(Fraction(24, 36) + Fraction(15, 36))) <= 3.29 * se
    assert se > 0 and Z95 * se < 0.02


# --------------------------------------------------------------------------- validation
def test_opening_without_fights_is_an_error():
    data = json.loads(json.dumps(OPENING))
    del data["scenario"]["fight_rounds"]
    with pytest.raises(
        ScenarioError, match=r"combatant \"A\" \(index 0\)\.opening: .*fight_rounds"
    ):
        scenario_from_dict(data)


@pytest.mark.parametrize("value", [0, -1, 1.5, "3", True])
def test_fight_rounds_must_be_a_positive_integer(value):
    data = json.loads(json.dumps(OPENING))
    data["scenario"]["fight_rounds"] = value
    with pytest.raises(ScenarioError, match="scenario.fight_rounds"):
        scenario_from_dict(data)


def test_without_fight_rounds_nothing_changes():
    data = json.loads(json.dumps(OPENING))
    del data["scenario"]["fight_rounds"]
    data["combatant"][0]["opening"] = False
    scenario = scenario_from_dict(data)
    assert scenario.fight_rounds == 0
    assert "fight_rounds" not in scenario.to_dict()
    from simkit.analysis.run import run

    result = run(scenario, 1000, 5)
    assert result.fights is None and "fights" not in result.summary()
    with pytest.raises(ValueError, match="no fights"):
        result.round_rows()


def test_batches_hold_whole_fights_and_add_up_to_the_run():
    rng = random.Random("batches")
    scenario = _fight_scenario(twin.random_scenario(rng), 3, rng)
    seq = np.random.SeedSequence(4)
    whole = engine.simulate(scenario, 600, seq, workers=2)
    batched = engine.simulate(scenario, 600, seq, batch_rounds=100)
    assert len(batched.batches) == 7  # 200 fights in batches of 33 fights
    assert [b.cycles for b in batched.batches] == [33] * 6 + [2]
    assert batched.sums.equals(whole.sums)
    for a, b in zip(batched.fights.per_index, whole.fights.per_index, strict=True):
        assert a.equals(b)


# --------------------------------------------------------------------------- command line
def _cli(*args):
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "simkit", *args], capture_output=True, text=True, check=False
    )


AMBUSH_TOML = """
[scenario]
name = "two-round ambush"
system = "readiness"
fight_rounds = 2

[[combatant]]
name = "A"
side = "a"
readiness = 1
advantage = 2
opening = true

[[combatant]]
name = "B"
side = "b"
readiness = 1
hold = "until_attacked"
"""


def test_trace_shows_the_round_of_the_fight(tmp_path):
    path = tmp_path / "ambush.toml"
    path.write_text(AMBUSH_TOML)
    out = _cli("trace", str(path), "--rounds", "3")
    assert out.returncode == 0, out.stderr
    assert "Round 1 (fight 1, round 1 of 2: the opening)" in out.stdout
    assert "Round 2 (fight 1, round 2 of 2)\n" in out.stdout
    assert "Round 3 (fight 2, round 1 of 2: the opening)" in out.stdout
    doc = json.loads(_cli("trace", str(path), "--rounds", "3", "--format", "json").stdout)
    places = {(r["round"], r["fight"], r["fight_round"]) for r in doc["rows"]}
    assert places == {(0, 1, 1), (1, 1, 2), (2, 2, 1)}
    prepared = {r["round"] for r in doc["rows"] if r["rule"] == "R2"}
    assert prepared == {0, 2}


def test_run_by_round_and_its_errors(tmp_path):
    path = tmp_path / "ambush.toml"
    path.write_text(AMBUSH_TOML)
    out = _cli("run", str(path), "--rounds", "1001", "--by", "round", "--format", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["parameters"]["fights"] == 501 and doc["parameters"]["rounds"] == 1002
    assert {r["round"] for r in doc["rows"]} == {"1", "2", "fight"}
    assert "1,002 rounds = 501 fights of 2 rounds" in doc["notes"][0]
    table = _cli("run", str(path), "--rounds", "1000", "--by", "round", "--metrics", "actions")
    assert "round 1" in table.stdout and "per fight" in table.stdout
    assert "1,000 rounds = 500 fights of 2 rounds" in table.stdout
    plain = tmp_path / "plain.toml"
    plain.write_text(AMBUSH_TOML.replace("fight_rounds = 2", ""))
    bad = _cli("run", str(plain), "--rounds", "100")
    assert bad.returncode == 2 and "opening" in bad.stderr and "fight_rounds" in bad.stderr
    plain.write_text(AMBUSH_TOML.replace("fight_rounds = 2", "").replace("opening = true", ""))
    bad = _cli("run", str(plain), "--rounds", "100", "--by", "round")
    assert bad.returncode == 2 and "--by round" in bad.stderr and bad.stdout == ""
    out_dir = tmp_path / "out"
    assert _cli("run", str(path), "--rounds", "100", "--out", str(out_dir)).returncode == 0
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["fights"]["fight_rounds"] == 2 and summary["fights"]["fights"] == 50
    assert set(summary["fights"]["per_round"]) == {"1", "2", "fight"}
    assert summary["fights"]["per_round"]["1"]["combatants"]["A"]["first_action"]["mean"] == 1


def test_the_report_of_a_fight_shows_the_rounds(tmp_path):
    path = tmp_path / "ambush.toml"
    # B never holds: with a hold, B's readiness 1 in the report's sweep never acts, and
    # the sweep plot's log axis cannot show an action economy of 0 (not about fights)
    path.write_text(AMBUSH_TOML.replace('hold = "until_attacked"', 'hold = "never"'))
    out = _cli("report", str(path), "--rounds", "4000", "--out", str(tmp_path / "report"))
    assert out.returncode == 0, out.stderr
    files = {p.name for p in (tmp_path / "report").iterdir()}
    assert {"rounds.png", "rounds.csv", "report.html", "report.md"} <= files
    md = (tmp_path / "report" / "report.md").read_text()
    assert "## Round by round" in md
    # A has advantage 2 in the opening: it acts first more often in round 1; the report
    # says what the opening buys, and what is left (K = 2: round 2 itself)
    assert "only its first round (the opening" in md and "has A's advantage 2" in md
    assert "What round 1 buys: first action of a " in md
    assert "What is left of it in round 2: round 2 plays without it" in md
    assert "4,000 rounds = 2,000 fights of 2 rounds" in md


def test_every_command_says_how_the_rounds_make_fights(tmp_path):
    path = tmp_path / "ambush.toml"
    path.write_text(AMBUSH_TOML)
    note = "1,000 rounds = 500 fights of 2 rounds"
    compare = _cli("compare", str(path), "--set", "B.hold=never", "--rounds", "1000")
    assert compare.returncode == 0, compare.stderr
    assert note in " ".join(compare.stdout.split())
    sweep = _cli(
        "sweep", str(path), "--vary", "A.readiness=1..2", "--rounds", "1000", "--format", "json"
    )
    assert note in json.loads(sweep.stdout)["notes"][0]
    run = _cli("run", str(path), "--rounds", "1000", "--format", "csv")
    assert run.returncode == 0 and "fights" not in run.stdout  # csv: rows only


def test_convert_keeps_the_fights(tmp_path):
    from simkit import api

    path = tmp_path / "ambush.toml"
    path.write_text(AMBUSH_TOML)
    for to in ("vtm", "perception"):
        conversion = api.convert(str(path), to)
        assert conversion.scenario.fight_rounds == 2
        assert any(line.startswith("opening = true") for line in conversion.notes)


def test_a_two_round_fight_with_a_stalemate_enumerated_exactly():
    """Both hold until attacked: round 1 is a stalemate (R8), so round 2 is forced (no
    holds) and B's opening advantage is gone: A and B are alike in round 2."""
    scenario = _stalemates(2, readiness=1)
    exact = _exact_fight(scenario)
    assert exact[(1, "", "stalemate")] == 1 and exact[(2, "", "stalemate")] == 0
    assert exact[(1, "A", "on_edge")] == exact[(1, "B", "on_edge")] == 1
    assert exact[(1, "A", "edge_wound")] == 1  # a hero's weakness (default 1)
    assert exact[(2, "A", "on_edge")] == 0
    assert exact[(1, "A", "actions")] == exact[(1, "B", "actions")] == 0
    # round 2: no holds (R8 carried), no advantage (opening): symmetric
    assert exact[(2, "A", "first_action")] == exact[(2, "B", "first_action")] == Fraction(1, 2)
    assert exact[(2, "A", "actions")] == exact[(2, "B", "actions")]
    assert exact[(2, "A", "hasty_defenses")] == exact[(2, "B", "hasty_defenses")] > 0
    # without R8 carrying, round 2 would be a stalemate again; without the opening rule,
    # B's advantage 3 would make it act first more often than A
    from simkit.analysis.run import run

    result = run(scenario, 20_000, 9)
    rows = {(r, w, m): (mean, se) for r, w, m, mean, se, *_ in result.round_rows()}
    for (j, who, count), value in exact.items():
        if (str(j), who, count) in rows and "." not in count:
            mean, se = rows[(str(j), who, count)]
            assert abs(mean - float(value)) <= 3.29 * se or (se == 0 and mean == value)


def test_run_by_round_reads_sides_and_count_groups_too(tmp_path):
    """``run --by round``: the side table's metrics per side and round index, the count
    groups of two or more, then the combatants; csv/md/json hold every level's rows as
    ``round, level, name, metric, ...`` (a report's rounds.csv), the same numbers as
    ``Result.round_rows(level)``."""
    from simkit import api
    from simkit.output.render import render

    path = tmp_path / "ambush.toml"
    path.write_text(AMBUSH_TOML.replace('name = "A"', 'name = "A"\ncount = 2'))
    result = api.run(path, rounds=400, rng=5)
    doc = json.loads(render("run", result, "json", by="round"))
    rows = doc["rows"]
    assert list(rows[0]) == ["round", "level", "name", "metric", "mean", "se", "ci_low", "ci_high"]
    assert [r["level"] for r in rows] == sorted(
        (r["level"] for r in rows), key=["side", "group", "combatant"].index
    )
    for level in ("side", "group", "combatant"):
        want = [[x if x == x else None for x in r] for r in result.round_rows(level)]
        got = [[r["round"], r["name"], r["metric"], r["mean"], r["se"]] for r in rows]
        assert [g for g, r in zip(got, rows, strict=True) if r["level"] == level] == [
            w[:5] for w in want
        ]
    economy = {(r["round"], r["name"]) for r in rows if r["metric"] == "action_economy"}
    assert economy == {(j, s) for j in ("1", "2", "fight") for s in ("a", "b")}
    assert {r["name"] for r in rows if r["level"] == "group"} == {"A", "B"}
    table = render("run", result, "table", by="round", width=100)
    assert max(len(line) for line in table.splitlines()) <= 100
    sides, groups, combatants = (table.index(t) for t in ("Sides:", "Count groups:", "Combatants:"))
    assert sides < groups < combatants
    assert "Action economy" in table[sides:groups] and "A 2" in table[combatants:]
    assert "\nB " not in table[groups:combatants]  # a group of one is its combatant's rows
    only = _cli("run", str(path), "--rounds", "400", "--by", "round", "--metrics", "action_economy")
    assert only.returncode == 0, only.stderr
    assert "Action economy" in only.stdout and "Combatants:" not in only.stdout
    bad = _cli("run", str(path), "--rounds", "400", "--by", "round", "--metrics", "actoins")
    assert bad.returncode == 2 and bad.stdout == "" and "'actions'" in bad.stderr


def test_files_with_other_fights_compare_unpaired(capsys):
    """R8a: a scenario in fights and the same fight without (or with another length) do
    not see the same dice round by round: `simkit compare A B` compares them side by side,
    unpaired, and says why; the paired API refuses in words."""
    from pathlib import Path

    import simkit
    from simkit import api
    from simkit.cli import main

    root = Path(__file__).resolve().parents[1] / "scenarios"
    a, b = root / "revision_2" / "ambush.toml", root / "ambush.toml"
    assert main(["compare", str(a), str(b), "--by", "side", "--rounds", "262144"]) == 0
    out = capsys.readouterr().out
    assert "unpaired (other fights): independent intervals" in out
    with pytest.raises(ScenarioError, match="needs the same fights in A and B"):
        simkit.compare(a, b, rounds=2000)
    side = api.compare_many([a, b], rounds=2000)
    assert side.paired[1] is False
