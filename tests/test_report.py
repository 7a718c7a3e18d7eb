"""Reports: self-contained files, findings that match the numbers, nothing written on
bad input, and the progress bar of `simkit run/report` (terminal only)."""

from __future__ import annotations

import functools
import importlib
import io
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import simkit
import simkit.cli
import simkit.output.progress
from simkit.cli import main
from simkit.metrics import Z95
from simkit.output.progress import ProgressBar

report_module = importlib.import_module("simkit.analysis.report")
render_module = importlib.import_module("simkit.output.report")
format_module = importlib.import_module("simkit.output.format")
files_module = importlib.import_module("simkit.output.files")

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"
WOLVES = SCENARIOS / "party_vs_wolves.toml"
PERCEPTION = SCENARIOS / "perception_gunnar_wolf.toml"
BRAWL = SCENARIOS / "vtm_three_way_brawl.toml"
ROUNDS = 20_000
SEED = 7
CSV_FILES = [
    "metrics.csv",
    "acts_before.csv",
    "actions_distribution.csv",
    "holding.csv",
    "sweep.csv",
]


@pytest.fixture(scope="module")
def wolves(tmp_path_factory):
    """The party-vs-wolves report (20k rounds per run), written once for the module."""
    out = tmp_path_factory.mktemp("wolves")
    calls: list[int] = []
    rendered = report_module.make_report(WOLVES, ROUNDS, SEED, progress=calls.append)
    path = rendered.write(out)
    return out, path, rendered, calls


def test_report_writes_every_file(wolves):
    out, path, rendered, _ = wolves
    assert path == out / "report.html"
    names = {p.name for p in out.iterdir()}
    assert {"report.html", "report.md", *CSV_FILES} <= names
    assert {"first_action.png", "acts_before.png", "actions_distribution.png"} <= names
    assert {"hasty_defenses.png", "holding.png", "sweep_party.png", "sweep_wolves.png"} <= names
    assert not [n for n in names if n.endswith(".tmp")]


def test_html_is_one_self_contained_file(wolves):
    out, path, _, _ = wolves
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert "http://" not in text and "https://" not in text
    sources = re.findall(r"""src\s*=\s*["']?([^"'\s>]*)""", text, flags=re.I)
    assert len(sources) >= 6
    assert all(s.startswith("data:image/png;base64,") for s in sources)
    assert not re.search(r"""(href|url)\s*[=(]\s*["']?(?!#|data:)""", text, flags=re.I)
    assert "<link" not in text.lower() and "<script" not in text.lower()
    assert "<style>" in text  # inline CSS


def test_every_png_referenced_by_the_markdown_exists(wolves):
    out, _, _, _ = wolves
    md = (out / "report.md").read_text(encoding="utf-8")
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    assert len(images) >= 6
    for name in images:
        assert "/" not in name and name.endswith(".png")
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert set(images) == {p.name for p in out.glob("*.png")}
    for name in re.findall(r"\]\(([^)]+\.csv)\)", md):
        assert (out / name).is_file()


def test_every_csv_parses(wolves):
    out, _, rendered, _ = wolves
    tables = {name: pd.read_csv(out / name, keep_default_na=False) for name in CSV_FILES}
    result = rendered.data.result
    metrics = tables["metrics.csv"]
    assert list(metrics.columns) == ["combatant", "metric", "mean", "se", "ci_low", "ci_high"]
    assert len(metrics) == len(result.table)
    acts = tables["acts_before.csv"]
    assert list(acts.columns[:2]) == ["combatant", "other"]
    n = len(result.scenario.names)
    assert len(acts) == n * (n - 1)
    dist = tables["actions_distribution.csv"]
    sums = dist.groupby("combatant")["mean"].sum()
    assert all(abs(v - 1) < 1e-9 for v in sums)
    holding = tables["holding.csv"]
    assert {"combatant", "metric", "mean_a", "mean_b", "se_paired", "ci_low"} <= set(holding)
    gunnar = holding[(holding.combatant == "Gunnar") & (holding.metric == "first_action")]
    assert len(gunnar) == 1
    sweep = tables["sweep.csv"]
    offsets = {side: sorted(set(sweep[sweep.side == side].offset)) for side in ("party", "wolves")}
    assert offsets == {"party": [-2, -1, 0, 1, 2], "wolves": [-1, 0, 1, 2]}  # 2 - 2 clips to 1
    wolf = sweep[(sweep.side == "wolves") & (sweep.combatant == "Wolf 1")]
    assert dict(zip(wolf.offset, wolf.value.astype(int), strict=True)) == {-1: 1, 0: 2, 1: 3, 2: 4}


def test_sweep_point_zero_is_the_main_run(wolves):
    _, _, rendered, _ = wolves
    sweep = render_module.sweep_table(rendered.data)
    zero = sweep[(sweep.offset == 0) & (sweep.side == "party") & (sweep.metric == "actions")]
    main_run = rendered.data.result
    for row in zero.itertuples(index=False):
        assert row.mean == main_run.mean(row.combatant, "actions")


def test_results_match_a_plain_run_with_the_same_seed(wolves):
    _, _, rendered, _ = wolves
    plain = simkit.run(WOLVES, rounds=ROUNDS, rng=SEED)
    pd.testing.assert_frame_equal(plain.table, rendered.data.result.table)


def _parse(number: str) -> tuple[float, float]:
    """A displayed number and half of its last displayed digit (the rounding error)."""
    places = len(number.split(".")[1]) if "." in number else 0
    return float(number), 0.5 * 10.0**-places + 1e-12


def test_findings_state_first_action_with_the_right_numbers(wolves):
    out, _, rendered, _ = wolves
    result = rendered.data.result
    best = max(result.scenario.names, key=lambda n: result.mean(n, "first_action"))
    est = result.estimate(best, "first_action")
    pattern = rf"{re.escape(best)} acts first in ([0-9.]+)% ± ([0-9.]+)% of rounds"
    found = [m for line in rendered.findings if (m := re.search(pattern, line))]
    assert found, rendered.findings
    mean_text, half_text = found[0].groups()
    shown, rounding = _parse(mean_text)
    assert abs(shown - 100 * est.mean) <= rounding
    shown, rounding = _parse(half_text)
    assert abs(shown - 100 * Z95 * est.se) <= rounding
    assert found[0].group(0) in (out / "report.md").read_text(encoding="utf-8")


def test_findings_cover_actions_hasty_holding_and_sweep(wolves):
    _, _, rendered, _ = wolves
    text = "\n".join(rendered.findings)
    assert "the most actions" in text
    assert "hasty-defense share" in text and "difficulty scale" in text
    assert "Holding by Gunnar" in text
    assert "Readiness +2 for side party" in text and "Readiness -2 for side party" in text
    assert "Readiness -1 for side wolves" in text  # readiness 2 cannot go to 0


def test_holding_effect_is_as_written_minus_never(wolves):
    _, _, rendered, _ = wolves
    effects = rendered.data.holding_effects()
    row = effects[(effects.combatant == "Gunnar") & (effects.metric == "first_action")].iloc[0]
    assert row.ci_high < 0  # Gunnar holds until attacked: holding costs him the first action
    assert rendered.data.result.mean("Gunnar", "first_action") == 0


def test_progress_counts_every_planned_round(wolves):
    _, _, rendered, calls = wolves
    scenario = rendered.data.scenario
    assert sum(calls) == report_module.planned_rounds(scenario, ROUNDS)


def test_decimals_follow_the_interval():
    fmt = format_module.format_estimate
    assert fmt("first_action", 0.41234, 0.0005) == "41.23% ± 0.10%"
    assert fmt("first_action", 0.41234, 0.0003) == "41.23% ± 0.06%"
    assert fmt("actions", 2.38251, 0.0008) == "2.383 ± 0.002"
    assert fmt("actions", 2.38251, 0.0005) == "2.3825 ± 0.0010"
    assert fmt("first_action", 0.0, 0.0) == "0%"
    assert fmt("hasty_scale", float("nan"), float("nan")) == "n/a"


def test_report_of_a_system_without_holding(tmp_path, capsys):
    out = tmp_path / "perception"
    assert main(["report", str(PERCEPTION), "--rounds", "5000", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert f"report: {out / 'report.html'}" in printed.out
    assert "Wolf acts first in" in printed.out
    assert printed.err == ""  # no progress bar when stderr is not a terminal
    holding = pd.read_csv(out / "holding.csv")
    assert holding.empty and "combatant" in holding.columns
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "has no rule for waiting" in md and "hasty" not in md.lower()
    sweep = pd.read_csv(out / "sweep.csv")
    gunnar = sweep[(sweep.combatant == "Gunnar") & (sweep.side == "party")]
    assert sorted(set(gunnar.value)) == [2, 3, 4, 5, 6]


def test_vtm_sweeps_the_rating_through_dexterity_where_given():
    scenario = simkit.load_scenario(BRAWL)
    points = report_module.plan(scenario, 100).sweeps["camarilla"]
    plus2 = next(p for p in points if p.offset == 2)
    toreador = plus2.scenario.combatants[plus2.scenario.index("Toreador")]
    sheriff = plus2.scenario.combatants[plus2.scenario.index("Sheriff")]
    assert (toreador["dexterity"], toreador["wits"], toreador["rating"]) == (5, 3, 8)
    assert (sheriff["dexterity"], sheriff["rating"]) == (None, 7)
    assert plus2.values == {"Toreador": (6, 8), "Sheriff": (5, 7)}


def test_vtm_report_runs(tmp_path):
    path = simkit.report(BRAWL, tmp_path / "brawl", rounds=4000)
    assert path.is_file()
    md = (path.parent / "report.md").read_text(encoding="utf-8")
    assert "Rating +2 for side camarilla" in md and "dexterity" in md


# --- bad input: exit 2, one line, nothing written -----------------------------------


def _bad_scenario(tmp_path: Path) -> Path:
    bad = tmp_path / "bad.toml"
    bad.write_text(WOLVES.read_text().replace("readiness = 2", "readiness = 0"))
    return bad


def test_validation_error_writes_nothing(tmp_path, capsys, monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("simulated despite a bad scenario")

    monkeypatch.setattr(report_module, "simulate_report", forbidden)
    out = tmp_path / "out"
    assert main(["report", str(_bad_scenario(tmp_path)), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("simkit: error: ") and err.count("\n") == 1
    assert "readiness" in err
    assert not out.exists()
    with pytest.raises(simkit.ScenarioError):
        simkit.report(_bad_scenario(tmp_path), out)
    assert not out.exists()


@pytest.mark.parametrize(
    "extra",
    [["--rounds", "0"], ["--rounds", "1"], ["--seed", "-1"], ["--workers", "x"], []],
    ids=["rounds0", "rounds1", "seed", "workers", "no-out"],
)
def test_bad_options_write_nothing(tmp_path, capsys, extra):
    out = tmp_path / "out"
    args = ["report", str(WOLVES), *extra] + (["--out", str(out)] if extra else [])
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("simkit: error: ") and err.count("\n") == 1
    assert not out.exists()


def test_out_that_is_a_file_is_rejected(tmp_path, capsys):
    out = tmp_path / "taken"
    out.write_text("x")
    assert main(["report", str(PERCEPTION), "--out", str(out)]) == 2
    assert "not a directory" in capsys.readouterr().err
    assert out.read_text() == "x"


def test_interrupted_write_leaves_no_partial_files(wolves, tmp_path, monkeypatch):
    rendered = wolves[2]
    replaced: list[str] = []

    def interrupted(src, dst):
        if replaced:
            raise KeyboardInterrupt
        replaced.append(dst)
        os.rename(src, dst)

    monkeypatch.setattr(files_module.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        rendered.write(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [Path(replaced[0]).name]


# --- progress bar ---------------------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bar_appears_once_a_run_has_lasted_its_delay():
    tty = _Terminal()
    with ProgressBar(1000, tty, delay=0.05) as bar:
        bar(100)
        assert tty.getvalue() == ""  # a run that ends within the delay shows nothing
        time.sleep(0.06)
        bar(400)
        assert "50.0%" in tty.getvalue() and "500/1,000 rounds" in tty.getvalue()
        assert re.search(r"[0-9,.]+( M)? rounds/s", tty.getvalue())
    assert tty.getvalue().endswith("\r\033[K")
    assert ProgressBar(10).delay == simkit.output.progress.MIN_SECONDS == 1.0


def test_report_shows_the_bar_with_rounds_per_second_on_a_terminal(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(render_module, "figures", lambda data: [])  # the bar is what counts here
    monkeypatch.setattr(simkit.output.progress, "_is_terminal", lambda stream: True)
    monkeypatch.setattr(simkit.cli, "ProgressBar", functools.partial(ProgressBar, min_rounds=0))
    assert main(["report", str(PERCEPTION), "--rounds", "3000", "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "\r[" in err and "rounds/s" in err and "100.0%" in err
    assert err.endswith("\r\033[K")  # the line is erased at the end


def _simkit(*args: str, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "TERM": "xterm"}
    return subprocess.run(
        [sys.executable, "-m", "simkit", *args], env=env, timeout=300, check=False, **kwargs
    )


def test_piped_stderr_gets_no_progress_output(tmp_path):
    # 2,000,000 rounds with one worker last well over a second: a terminal would show the bar.
    proc = _simkit(
        "run",
        str(WOLVES),
        "--rounds",
        "2000000",
        "--workers",
        "1",
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_terminal_stderr_shows_the_bar_with_rounds_per_second():
    import pty

    master, slave = pty.openpty()  # a real terminal for the child's stderr
    args = ["run", str(WOLVES), "--rounds", "2000000", "--workers", "1"]
    with subprocess.Popen(
        [sys.executable, "-m", "simkit", *args],
        env={**os.environ, "TERM": "xterm"},
        stdout=subprocess.DEVNULL,
        stderr=slave,
    ) as proc:
        os.close(slave)
        chunks = []
        try:
            while data := os.read(master, 4096):  # read while it runs: a full pty blocks
                chunks.append(data)
        except OSError:  # EIO: the child closed the terminal
            pass
        finally:
            os.close(master)
        assert proc.wait(timeout=300) == 0
    err = b"".join(chunks).decode()
    assert "\r[" in err and "rounds/s" in err and "/2,000,000 rounds" in err
    assert err.endswith("\r\x1b[K")  # erased at the end
