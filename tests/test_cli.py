"""The command line over the public API: table, output files, reproducibility, errors."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

import simkit
import simkit.analysis.result
import simkit.analysis.run
import simkit.api
import simkit.output.files
from simkit import systems
from simkit.cli import main
from simkit.engine import CHUNK_ROUNDS
from simkit.output.progress import ProgressBar
from simkit.output.terminal import header_of

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"
WOLVES = SCENARIOS / "party_vs_wolves.toml"
NAMES = ["Gunnar", "Astrid", "Leif", "Wolf 1", "Wolf 2", "Wolf 3"]

SUMMARY_KEYS = {
    "groups",
    "sides",
    "simkit_version",
    "scenario",
    "system",
    "rounds",
    "seed",
    "rules",
    "combatants",
    "scenario_metrics",
    "elapsed_s",
    "rounds_per_s",
}
READINESS_METRICS = {
    "first_action",
    "actions",
    "no_action",
    "attacked_before_acting",
    "defenses",
    "hasty_defenses",
    "hasty_share",
    "hasty_scale",
    "expired_dice",
    "guard_defenses",
    "on_edge",
    "edge_wound",
    "attacks_made",
    "attacks_received",
    "undefended",
    "defended",
    "hasty_only",
    *(f"hasty_scale_ge.{k}" for k in range(1, 6)),
    "hits",  # R7 [rev 3]
    "wasted_defenses",
}
ESTIMATE_KEYS = {"mean", "se", "ci_low", "ci_high"}
CSV_COLUMNS = ["combatant", "metric", "mean", "se", "ci_low", "ci_high"]


def test_run_prints_a_table_with_every_combatant(capsys):
    assert main(["run", str(WOLVES), "--rounds", "3000", "--seed", "5"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0].split()[:4] == ["combatant", "side", "First", "action"]
    headers = " ".join(line for line in lines if line.startswith("combatant"))
    for name in READINESS_METRICS:  # families (hasty_scale_ge.k) only in files and --metrics
        assert "." in name or header_of(name) in headers
    rows = {line.split("  ")[0].strip(): line for line in lines[2:]}
    for name in NAMES:
        assert name in rows
    assert "Stalemate: " in captured.out
    assert "3,000 rounds, seed 5" in captured.out
    assert captured.err == ""


def test_run_uses_the_scenario_seed_by_default(tmp_path, capsys):
    assert main(["run", str(WOLVES), "--rounds", "2000", "--out", str(tmp_path / "a")]) == 0
    assert main(["run", str(WOLVES), "--rounds", "2000", "--seed", "2026"]) == 0
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert summary["seed"] == 2026
    assert (tmp_path / "a" / "metrics.csv").exists()


def test_out_writes_summary_and_metrics(tmp_path, capsys):
    out = tmp_path / "results" / "wolves"  # parents are created too
    assert main(["run", str(WOLVES), "--rounds", "4000", "--seed", "11", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "Gunnar" in captured.out
    assert "summary.json" in captured.err and "metrics.csv" in captured.err
    assert sorted(p.name for p in out.iterdir()) == [".simkit", "metrics.csv", "summary.json"]

    summary = json.loads((out / "summary.json").read_text())
    assert set(summary) == SUMMARY_KEYS
    assert summary["simkit_version"] == simkit.__version__
    assert summary["scenario"] == "Party vs three wolves"
    assert summary["system"] == "readiness"
    assert summary["rounds"] == 4000
    assert summary["seed"] == 11
    defaults = {key: spec.default for key, spec in systems.get("readiness").rules.items()}
    assert summary["rules"] == defaults
    assert list(summary["combatants"]) == NAMES
    for name, entry in summary["combatants"].items():
        assert {"side", "metrics", "acts_before"} <= set(entry)
        assert entry["side"] == ("wolves" if name.startswith("Wolf") else "party")
        assert set(entry["metrics"]) == READINESS_METRICS
        for est in entry["metrics"].values():
            assert set(est) == ESTIMATE_KEYS
        assert set(entry["acts_before"]) == set(NAMES) - {name}
        for est in entry["acts_before"].values():
            assert set(est) == ESTIMATE_KEYS
            assert 0.0 <= est["ci_low"] <= est["mean"] <= est["ci_high"] <= 1.0
    assert set(summary["scenario_metrics"]) >= {"stalemate"}
    assert set(summary["scenario_metrics"]["stalemate"]) == ESTIMATE_KEYS
    assert summary["elapsed_s"] >= 0
    assert summary["rounds_per_s"] > 0
    first = summary["combatants"]["Astrid"]["metrics"]["first_action"]
    assert first["ci_low"] <= first["mean"] <= first["ci_high"]

    with (out / "metrics.csv").open(newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == CSV_COLUMNS
    body = rows[1:]
    assert {r[0] for r in body} == set(NAMES) | {""}
    assert ["", "stalemate"] in [r[:2] for r in body]
    for name in NAMES:
        metrics = {r[1] for r in body if r[0] == name}
        assert metrics >= READINESS_METRICS
        assert {f"acts_before.{o}" for o in NAMES if o != name} <= metrics


def _run_to(out: Path, workers: int, rounds: int) -> None:
    argv = ["run", str(WOLVES), "--rounds", str(rounds), "--seed", "99", "--out", str(out)]
    assert main([*argv, "--workers", str(workers)]) == 0


def test_worker_count_does_not_change_the_result(tmp_path, capsys):
    rounds = 600_000
    assert rounds > 2 * CHUNK_ROUNDS  # three chunks, the last one short
    _run_to(tmp_path / "w1", 1, rounds)
    _run_to(tmp_path / "w2", 2, rounds)
    csv1 = (tmp_path / "w1" / "metrics.csv").read_bytes()
    assert csv1 == (tmp_path / "w2" / "metrics.csv").read_bytes()
    s1, s2 = (json.loads((tmp_path / w / "summary.json").read_text()) for w in ("w1", "w2"))
    for s in (s1, s2):
        del s["elapsed_s"], s["rounds_per_s"]
    assert s1 == s2
    assert s1["rounds"] == rounds


def test_interrupted_run_writes_nothing(tmp_path, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(simkit.analysis.run, "simulate", interrupted)
    out = tmp_path / "out"
    assert main(["run", str(WOLVES), "--rounds", "1000", "--out", str(out)]) == 130
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "simkit: interrupted\n"
    assert not out.exists()


def test_failing_simulation_raises_and_writes_nothing(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("kernel bug")

    monkeypatch.setattr(simkit.analysis.run, "simulate", broken)
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match="kernel bug"):
        main(["run", str(WOLVES), "--rounds", "1000", "--out", str(out)])
    assert not out.exists()


def test_interrupted_write_leaves_no_partial_files(tmp_path, capsys, monkeypatch):
    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(simkit.output.files.os, "rename", interrupted)
    out = tmp_path / "out"
    assert main(["run", str(WOLVES), "--rounds", "1000", "--out", str(out)]) == 130
    assert capsys.readouterr().err == "simkit: interrupted\n"
    assert list(tmp_path.iterdir()) == []  # neither the result nor its temporary directory


# An --out that cannot be written: tests/test_reliability.py (found before simulating).


def test_validate_runs_nothing(tmp_path, capsys, monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("validate must not simulate")

    monkeypatch.setattr(simkit.analysis.run, "simulate", forbidden)
    monkeypatch.chdir(tmp_path)
    assert main(["validate", str(WOLVES)]) == 0
    captured = capsys.readouterr()
    assert captured.out == (
        f'OK {WOLVES}: "Party vs three wolves", system readiness, 6 combatants on 2 sides '
        '(party 3, wolves 3), rules: order="dynamic", prep="one_die", holder_actions="held_dice", '
        'release="higher"\n'
    )
    assert list(tmp_path.iterdir()) == []


def test_bench_is_wired_to_simkit_bench(monkeypatch):
    calls = []
    fake = types.ModuleType("simkit.bench")
    fake.main = lambda rounds, workers: calls.append((rounds, workers))
    monkeypatch.setitem(sys.modules, "simkit.bench", fake)
    monkeypatch.setattr(simkit, "bench", fake, raising=False)
    assert main(["bench", "--rounds", "5000", "--workers", "1"]) == 0
    assert main(["bench"]) == 0
    assert calls == [(5000, 1), (None, None)]


def test_help_exits_zero(capsys):
    assert main(["--help"]) == 0
    assert "run" in capsys.readouterr().out
    assert main(["run", "--help"]) == 0
    assert "--workers" in capsys.readouterr().out


def test_python_dash_m_simkit(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "simkit", "run", str(WOLVES), "--rounds", "2000"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert all(name in proc.stdout for name in NAMES)
    assert "Traceback" not in proc.stderr
    assert "\r" not in proc.stderr  # no progress bar when output is captured


def test_command_exits_fast_with_complete_output(tmp_path):
    """The command skips interpreter finalisation (``console_main``): its exit status,
    its whole piped output and its files must still all be there."""
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "simkit", "run", str(WOLVES), "--rounds", "3000", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "half-width\n" in proc.stdout  # the table's last line
    assert proc.stdout.rstrip().endswith("pips.")  # the verdict's last sentence, flushed
    assert json.loads((out / "summary.json").read_text())["rounds"] == 3000
    assert (out / "metrics.csv").read_text().endswith("\n")
    bad = tmp_path / "bad.toml"
    bad.write_text("[scenario\n")
    proc = subprocess.run(
        [sys.executable, "-m", "simkit", "validate", str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("simkit: error: ") and str(bad) in proc.stderr


def test_progress_bar_draws_only_on_a_terminal():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty = Terminal()
    with ProgressBar(1000, tty, min_rounds=0) as bar:
        bar(400)
        assert "40.0%" in tty.getvalue() and "400/1,000 rounds" in tty.getvalue()
        bar(600)
        assert "100.0%" in tty.getvalue()
    assert tty.getvalue().endswith("\r\033[K")

    piped = io.StringIO()
    with ProgressBar(1000, piped, min_rounds=0) as bar:
        bar(1000)
    assert piped.getvalue() == ""

    short = Terminal()
    with ProgressBar(1000, short) as bar:  # below MIN_ROUNDS: no bar
        bar(1000)
    assert short.getvalue() == ""


# --- the example scenarios -------------------------------------------------------

SCENARIO_FILES = sorted(SCENARIOS.glob("*.toml"))


def test_the_example_scenarios_exist():
    names = {p.name for p in SCENARIO_FILES}
    assert {"party_vs_wolves.toml", "duel_of_equals.toml", "ambush.toml"} <= names


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=[p.name for p in SCENARIO_FILES])
def test_every_example_scenario_validates_and_readiness_ones_run(path, tmp_path, capsys):
    scenario = simkit.validate(path)
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().out.startswith(f"OK {path}: ")
    if scenario.system != "readiness":
        return
    out = tmp_path / "out"
    assert main(["run", str(path), "--rounds", "2000", "--out", str(out)]) == 0
    table = capsys.readouterr().out
    assert all(name in table for name in scenario.names)
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary["combatants"]) == list(scenario.names)
    k = scenario.fight_rounds or 1  # R8a: rounds rounded up to whole fights
    assert summary["rounds"] == -(-2000 // k) * k and summary["seed"] == scenario.seed


def test_duel_of_equals_is_symmetric():
    result = simkit.run(SCENARIOS / "duel_of_equals.toml", rounds=20_000)
    a, b = result.scenario.names
    for metric in ("first_action", "actions", "defenses"):
        ea, eb = result.estimate(a, metric), result.estimate(b, metric)
        assert abs(ea.mean - eb.mean) <= 5 * (ea.se**2 + eb.se**2) ** 0.5


def test_ambush_favours_the_prepared_side():
    result = simkit.run(SCENARIOS / "ambush.toml", rounds=20_000)
    first = result.wide()["first_action"]
    sides = {c.name: c.side for c in result.scenario.combatants}
    bandits = sum(v for name, v in first.items() if sides[name] == "bandits")
    assert bandits > 0.5
