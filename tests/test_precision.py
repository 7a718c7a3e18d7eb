"""Runs to a precision (``--precision``, simkit.analysis.precision, docs/precision.md).

The stopping rule is checked against its definition: the rounds used are the first block
total at which every shown quantity meets the precision (the block before does not), the
result is ``--rounds N`` of the same seed bit for bit (blocks are whole chunks), the same
seed and precision give the same result, and at ``max_rounds`` the quantities that did
not meet it are named.  The intervals at stopping still cover an exact answer (from the
twin, tests/enumerate.py) 95% of the time, within 3 binomial standard errors.  Bad
precision text, precision with --rounds and max-rounds below the first block are one
error line, exit status 2.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from enumerate import expectation
from twins import perception as twin

import simkit.engine.core as core
from simkit import api
from simkit.analysis.precision import read_precision, run_quantities
from simkit.cli import main
from simkit.engine import block_totals
from simkit.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]
DUEL = ROOT / "scenarios" / "perception_gunnar_wolf.toml"
BOSS = ROOT / "scenarios" / "boss_fight.toml"
SMALL_CHUNK = 256  # core.MIN_CHUNK_ROUNDS: blocks of 256, 512, 1024 ... rounds


@pytest.fixture
def small_chunks(monkeypatch):
    """The engine's chunks at their smallest size, so that a precision is reached after
    a few blocks of a few thousand rounds (the rule does not depend on the chunk size)."""
    monkeypatch.setattr(core, "CHUNK_ROUNDS", SMALL_CHUNK)


def test_blocks_double_from_one_chunk_and_end_at_max_rounds():
    assert block_totals(256, 256) == [256]
    assert block_totals(256, 2000) == [256, 512, 1024, 2000]
    assert block_totals(256, 2048) == [256, 512, 1024, 2048]


@pytest.mark.parametrize(
    ("text", "value", "relative"),
    [("0.001", 0.001, False), ("0.5%", 0.005, True), (0.25, 0.25, False), ("2 %", 0.02, True)],
)
def test_precision_text(text, value, relative):
    p = read_precision(text)
    assert p.value == pytest.approx(value) and p.relative == relative
    assert p.max_rounds == 10**9


def test_run_stops_at_the_first_block_that_meets_it(small_chunks):
    result = api.run(DUEL, rng=4, precision=0.01)
    n = result.rounds
    assert result.stopping.met and result.stopping.rounds == n
    assert n in block_totals(SMALL_CHUNK, 10**9) and n > SMALL_CHUNK
    assert all((high - low) / 2 <= 0.01 for _, _, low, high in run_quantities(result))
    before = api.run(DUEL, rounds=n // 2, rng=4)  # the block before: not precise enough
    assert any((high - low) / 2 > 0.01 for _, _, low, high in run_quantities(before))
    direct = api.run(DUEL, rounds=n, rng=4)  # the same rounds, the same draws
    assert result.sums.equals(direct.sums)
    assert result.rows == direct.rows
    again = api.run(DUEL, rng=4, precision=0.01)
    assert again.rows == result.rows and again.rounds == n


def test_a_relative_precision_reads_each_estimate(small_chunks):
    result = api.run(DUEL, rng=4, precision="2%", metrics=["first_action"])
    for _, mean, low, high in run_quantities(result, metrics=["first_action"]):
        assert (high - low) / 2 <= 0.02 * abs(mean)
    before = api.run(DUEL, rounds=result.rounds // 2, rng=4)
    assert any(
        (high - low) / 2 > 0.02 * abs(mean)
        for _, mean, low, high in run_quantities(before, metrics=["first_action"])
    )


def test_only_the_named_metrics_and_level_hold_the_run(small_chunks):
    everything = api.run(DUEL, rng=4, precision=0.01)
    one = api.run(DUEL, rng=4, precision=0.01, by="side", metrics=["action_economy"])
    assert one.rounds < everything.rounds  # a constant action economy is precise at once
    assert one.rounds == SMALL_CHUNK


def test_max_rounds_names_what_did_not_meet_it(small_chunks):
    result = api.run(DUEL, rng=4, precision=0.001, max_rounds=3000)
    assert result.rounds == 3000
    stopping = result.stopping
    assert not stopping.met
    assert "Gunnar.first_action" in " ".join(stopping.unmet)
    assert "not met by 3,000 rounds" in stopping.line()
    assert result.rows == api.run(DUEL, rounds=3000, rng=4).rows


def test_sweep_and_tune_play_every_point_to_the_precision(small_chunks):
    swept = api.sweep(DUEL, "Gunnar.perception=3..5", rng=2, precision=0.02)
    n = swept.rounds
    assert {r.rounds for r in swept.results} == {n} and swept.stopping.met
    direct = api.sweep(DUEL, "Gunnar.perception=3..5", rounds=n, rng=2)
    assert [r.rows for r in swept.results] == [r.rows for r in direct.results]
    half = api.sweep(DUEL, "Gunnar.perception=3..5", rounds=n // 2, rng=2)
    assert any(
        (high - low) / 2 > 0.02
        for r in half.results
        for _, _, low, high in run_quantities(r, metrics=["first_action", "actions"])
        + run_quantities(r, metrics=["attacked_before_acting"])
    )
    tuned = api.tune(
        DUEL, "Gunnar.perception=3..5", "Gunnar.first_action = 0.3", rng=2, precision=0.02
    )
    for p in tuned.points:
        assert (p.estimate.ci_high - p.estimate.ci_low) / 2 <= 0.02
    assert "met after" in tuned.answer


def test_compare_plays_both_to_the_precision_of_the_differences(small_chunks):
    c = api.compare(DUEL, set=["Gunnar.perception=5"], rng=2, precision=0.03)
    assert c.stopping.met
    assert all(
        (c.table.ci_high - c.table.ci_low)[~c.table.metric.str.contains(".", regex=False)]
        <= 2 * 0.03 + 1e-12
    )
    direct = api.compare(
        DUEL, set=["Gunnar.perception=5"], rng=2, rounds=c.rounds, batch_rounds=c.batch_rounds
    )
    assert c.table.equals(direct.table)


def test_intervals_at_stopping_cover_the_exact_answer_95_percent(small_chunks):
    """2,000 runs of Gunnar against the wolf, each stopped by the rule (half-width 0.0195
    on first_action: about half stop after 2,048 rounds, half after 4,096): the 95%
    interval of P(Gunnar acts first) at stopping covers the exact 7/25 (the twin
    enumerated) in 95% of them, within 3 binomial standard errors."""
    scenario = load_scenario(DUEL)
    exact = expectation(lambda draws: twin.play_round(scenario, draws))[("Gunnar", "first_action")]
    assert exact == pytest.approx(0.28)
    runs, hits, stops = 2000, 0, set()
    for seed in range(runs):
        r = api.run(scenario, rng=seed, precision=0.0195, metrics=["first_action"], workers=1)
        e = r.estimate("Gunnar", "first_action")
        hits += e.ci_low <= exact <= e.ci_high
        stops.add(r.rounds)
    assert len(stops) >= 2  # the stopping point is random: the rule is what is tested
    se = math.sqrt(0.95 * 0.05 / runs)
    assert abs(hits / runs - 0.95) <= 3 * se, (hits / runs, stops)


# --------------------------------------------------------------------------- the command line
@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["run", str(DUEL), "--precision", "abc"], "--precision: expected a number > 0"),
        (["run", str(DUEL), "--precision", "-1"], "--precision: expected a number > 0"),
        (["run", str(DUEL), "--precision", "0%"], "--precision: expected a number > 0"),
        (
            ["run", str(DUEL), "--precision", "0.01", "--rounds", "1000"],
            "--precision: give --precision or --rounds, not both",
        ),
        (
            ["run", str(DUEL), "--precision", "0.01", "--max-rounds", "1000"],
            "--max-rounds: 1,000 is below the first block of 262,144 rounds",
        ),
        (["run", str(DUEL), "--max-rounds", "1000000"], "--max-rounds: goes with --precision"),
        (
            ["sweep", str(DUEL), "--vary", "Gunnar.perception=3,4", "--precision", "x"],
            "--precision: expected",
        ),
        (
            ["compare", str(DUEL), str(DUEL), str(DUEL), "--precision", "0.01"],
            "--precision: compares two files",
        ),
        (
            [
                "tune",
                str(DUEL),
                "--vary",
                "Gunnar.perception=3,4",
                "--target",
                "Gunnar.first_action = 0.3",
                "--precision",
                "0.01",
                "--rounds",
                "1000",
            ],
            "give --precision or --rounds",
        ),
        (["report", str(DUEL), "--precision", "1..2"], "--precision: expected"),
    ],
)
def test_bad_precision_is_one_line_exit_2(tmp_path, capsys, args, fragment):
    out = tmp_path / "out"
    assert main([*args, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("simkit: error: ") and captured.err.count("\n") == 1
    assert fragment in captured.err
    assert not out.exists()


def test_cli_prints_the_rounds_used(capsys):
    assert main(["run", str(DUEL), "--precision", "0.002", "--seed", "3"]) == 0
    text = capsys.readouterr().out
    direct = api.run(DUEL, rng=3, precision=0.002)
    assert f"met after {direct.rounds:,} rounds" in " ".join(text.split())
    assert main(["run", str(DUEL), "--precision", "0.002", "--seed", "3", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["parameters"]["precision"]["rounds_used"] == direct.rounds
    assert document["parameters"]["rounds"] == direct.rounds
    assert any("met after" in note for note in document["notes"])


def test_cli_report_with_a_precision_says_its_rounds(tmp_path, capsys):
    out = tmp_path / "report"
    args = ["report", str(DUEL), "--precision", "0.002", "--seed", "3", "--out", str(out)]
    assert main(args) == 0
    text = " ".join(capsys.readouterr().out.split())
    rounds = api.precision_rounds(load_scenario(DUEL), read_precision("0.002"), 3).rounds
    assert f"every run of the report has {rounds:,} rounds" in text
    assert (out / "report.html").exists()


AMBUSH = ROOT / "scenarios" / "ambush.toml"  # fights of 3 rounds with an opening (R8a)


def _same_run(a, b):
    """Two Results equal bit for bit: every running sum, row and per-round row."""
    for name in ("s1", "s2", "sl", "sx", "tot"):
        assert (getattr(a.sums, name) == getattr(b.sums, name)).all(), name
    assert a.rows == b.rows and a.rounds == b.rounds
    for level in ("combatant", "side"):
        assert a.round_rows(level) == b.round_rows(level)


def test_a_fight_of_several_rounds_to_a_precision_is_its_rounds_played(small_chunks):
    """R8a: a run to a precision plays whole fights in blocks of whole chunks of fights
    (256 // 3 = 85 fights: 255, 510, 1,020 ... rounds), and the result after N rounds is
    ``--rounds N`` of the same seed bit for bit, whatever block it stopped at, the last
    one (``--max-rounds``, not a whole chunk) too."""
    scenario = load_scenario(AMBUSH)
    assert read_precision("0.05").first_block([scenario]) == 255
    met = api.run(AMBUSH, rng=9, precision=0.05, workers=2)
    assert met.stopping.met and met.stopping.blocks >= 2
    assert met.rounds in block_totals(255, 10**9) and met.rounds % 3 == 0
    _same_run(met, api.run(AMBUSH, rounds=met.rounds, rng=9, workers=1))
    capped = api.run(AMBUSH, rng=9, precision=0.0001, max_rounds=1_000, by="side")
    assert not capped.stopping.met and capped.stopping.blocks == 3  # 255, 510, 1,000
    assert capped.rounds == capped.stopping.rounds == 1_002  # 334 whole fights
    _same_run(capped, api.run(AMBUSH, rounds=1_000, rng=9))
    by_round = api.run(AMBUSH, rng=9, precision=0.05, by="round", metrics=["action_economy"])
    assert by_round.rounds >= 255 and by_round.stopping.met


def test_fight_blocks_ending_inside_a_chunk_keep_sums_and_batches(small_chunks):
    """Blocks of any totals (a sweep's or a comparison's points with different chunk
    sizes): a block ending inside a chunk of fights, or inside a batch, is continued by
    the next, and every block's run, batches included, is ``simulate`` of its rounds."""
    from simkit import engine

    scenario = load_scenario(AMBUSH)
    seq = engine.seed_sequence(4)
    totals = [100, 301, 700, 1_001]
    blocks = list(engine.play_blocks(scenario, totals, seq, batch_rounds=60))
    plain = list(engine.play_blocks(scenario, totals, seq, workers=2))
    for total, raw, unbatched in zip(totals, blocks, plain, strict=True):
        want = engine.simulate(scenario, total, seq, workers=1, batch_rounds=60)
        for got in (raw, unbatched):
            for name in ("s1", "s2", "sl", "sx", "tot"):
                assert (getattr(got.sums, name) == getattr(want.sums, name)).all()
            for a, b in zip(got.fights.per_index, want.fights.per_index, strict=True):
                assert (a.s1 == b.s1).all() and (a.s2 == b.s2).all() and (a.tot == b.tot).all()
        assert len(raw.batches) == len(want.batches)
        for a, b in zip(raw.batches, want.batches, strict=True):
            assert (a.s1 == b.s1).all() and (a.s2 == b.s2).all() and (a.tot == b.tot).all()


def test_cli_runs_a_fight_to_a_precision(small_chunks, tmp_path, capsys):
    out = tmp_path / "out"
    args = ["run", str(AMBUSH), "--precision", "0.05", "--seed", "9", "--by", "round"]
    assert main([*args, "--format", "json", "--out", str(out)]) == 0
    document = json.loads(capsys.readouterr().out)
    used = document["parameters"]["precision"]["rounds_used"]
    assert used == document["parameters"]["rounds"] == 3 * document["parameters"]["fights"]
    assert json.loads((out / "summary.json").read_text())["rounds"] == used
    again = ["run", str(AMBUSH), "--rounds", str(used), "--seed", "9", "--by", "round"]
    assert main([*again, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"] == document["rows"]
