"""What a designer reads at the terminal: ``simkit run`` ends with the sides and the
report's verdict, every aggregated label says how its members make it (and run and
report agree), ``--metrics`` takes every metric the API has, ``compare`` starts with the
sides, and sentences and long lists wrap at the width asked for."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import simkit
from simkit.cli import main
from simkit.output.report_document.findings import verdict
from simkit.output.report_document.names import EACH, aggregation
from simkit.output.report_document.readings import Numbers
from simkit.output.report_document.tables import group_tables, side_table
from simkit.output.terminal import RUN_SIDE_METRICS, header_of

ROOT = Path(__file__).resolve().parents[1]
WOLVES = ROOT / "scenarios" / "party_vs_wolves.toml"
ROUNDS = "4000"


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def unwrapped(lines: list[str]) -> list[str]:
    """Bulleted sentences joined back: ``- a`` + ``  b`` -> ``a b``."""
    out: list[str] = []
    for line in lines:
        if line.startswith("- "):
            out.append(line[2:])
        elif line.startswith("  ") and out:
            out[-1] += " " + line.strip()
    return out


@pytest.fixture(scope="module")
def wolves():
    return simkit.run(WOLVES, rounds=int(ROUNDS))


# --- item 3: a verdict from simkit run ---------------------------------------------------------
def test_run_ends_with_the_sides_and_the_reports_verdict(capsys, wolves):
    status, out, _ = run_cli(capsys, "run", str(WOLVES), "--rounds", ROUNDS)
    assert status == 0
    lines = out.splitlines()
    assert lines[0].startswith("combatant  side")  # today's per-combatant blocks first
    sides_at, verdict_at = lines.index("Sides:"), lines.index("Verdict:")
    assert any(line.endswith("half-width") for line in lines[:sides_at])
    assert sides_at < verdict_at
    table = lines[sides_at + 1 : verdict_at]
    assert table[0].split()[-2:] == ["party", "wolves"]
    numbers = Numbers(wolves)
    for m in RUN_SIDE_METRICS:
        title, unit, *values = side_table(numbers, (m,)).rows[0]  # the report's row
        shown = next(line for line in table if line.startswith(title + "  "))
        assert unit in shown and shown.split()[-len(values) * 3 :] == " ".join(values).split()
    # the sentences are the report's, word for word (the same function), only wrapped
    assert unwrapped(lines[verdict_at + 1 :]) == verdict(numbers)
    assert len(verdict(numbers)) >= 3


def test_run_with_chosen_metrics_or_other_formats_has_no_verdict(capsys):
    status, out, _ = run_cli(capsys, "run", str(WOLVES), "--rounds", ROUNDS, "--metrics", "actions")
    assert status == 0 and "Verdict:" not in out and "Sides:" not in out
    status, out, _ = run_cli(capsys, "run", str(WOLVES), "--rounds", ROUNDS, "--format", "csv")
    assert status == 0 and "Verdict" not in out


def test_run_by_side_gives_the_verdict_without_repeating_the_side_table(capsys):
    status, out, _ = run_cli(capsys, "run", str(WOLVES), "--rounds", ROUNDS, "--by", "side")
    assert status == 0 and "Verdict:" in out and "Sides:" not in out


@pytest.mark.parametrize("family", ["acts_before", "actions_dist"])
def test_metrics_takes_every_family_the_api_has(capsys, family, wolves):
    status, out, err = run_cli(capsys, "run", str(WOLVES), "--rounds", ROUNDS, "--metrics", family)
    assert status == 0, err
    expected = "Acts before Astrid %" if family == "acts_before" else "Actions = 0 %"
    assert expected in out
    # the same members as the API's tables
    api = wolves.acts_before() if family == "acts_before" else wolves.actions_distribution()
    assert api.size
    args = ["sweep", str(WOLVES), "--rounds", "1000", "--vary", "Wolf.readiness=+0..+1"]
    status, out, err = run_cli(capsys, *args, "--metrics", family)
    assert status == 0, err
    assert expected in out and re.search(r"\d ± \d", out)
    status, out, err = run_cli(capsys, "run", str(WOLVES), "--by", "side", "--metrics", family)
    assert status == 2 and out == ""
    assert f"'{family}' is read per combatant only, not per side; give --by combatant" in err
    status, out, err = run_cli(capsys, "run", str(WOLVES), "--metrics", "action_economy")
    assert status == 2 and "'action_economy' is read per side only, not per combatant" in err


def test_compare_shows_the_side_rows_then_the_significant_combatant_rows(capsys):
    args = ["compare", str(WOLVES), "--set", "Gunnar.hold=never", "--rounds", ROUNDS]
    status, out, _ = run_cli(capsys, *args)
    assert status == 0
    lines = out.splitlines()
    at = lines.index("Sides (every row of the side table):")
    rows = lines[at + 3 : lines.index("Combatants (the rows that differ significantly):") - 1]
    c = simkit.compare(WOLVES, set=["Gunnar.hold=never"], rounds=int(ROUNDS))
    side = c.level_table("side")
    expected = side[side.metric.isin(RUN_SIDE_METRICS)]
    assert len(rows) == len(expected) == 2 * len(RUN_SIDE_METRICS)
    for r in expected.itertuples(index=False):
        assert any(row.startswith(r.side) and header_of(r.metric, "side") in row for row in rows)
    status, everything, _ = run_cli(capsys, *args, "--all")
    assert "Sides (every row" not in everything
    assert len(everything.splitlines()) > len(lines)


# --- item 4: one meaning per label -------------------------------------------------------------
HOW = re.compile(r"\(([a-z ,]+)\)$")


def level_cells(out: str, level: str) -> dict[tuple[str, str], str]:
    """(who, header) -> cell of a ``run --by group|side`` table (blocks of columns)."""
    cells: dict[tuple[str, str], str] = {}
    block: list[str] = []
    for line in [*out.splitlines(), ""]:
        if line.strip():
            block.append(line)
            continue
        if len(block) > 2 and block[0].startswith(level) and set(block[1]) <= {"-", " "}:
            spans = [m.span() for m in re.finditer(r"-+", block[1])]
            heads = [block[0][a:b].strip() for a, b in spans]
            for row in block[2:]:
                values = [row[a:b].strip() for a, b in spans]
                for h, v in zip(heads[1:], values[1:], strict=True):
                    cells[(values[0], h)] = v
        block = []
    return cells


def test_side_rows_of_run_and_report_say_the_same_and_agree(capsys, wolves):
    status, out, _ = run_cli(capsys, "run", str(WOLVES), "--rounds", ROUNDS, "--by", "side")
    assert status == 0
    run_cells = level_cells(out, "side")
    numbers = Numbers(wolves)
    sides = list(numbers.sides)
    checked = 0
    for m in ("actions", "action_economy", "first_action", "undefended", "hasty_only"):
        title, unit, *values = side_table(numbers, (m,)).rows[0]  # the report's row
        pattern = re.escape(title) + r"( %)?( \(.*\))?"
        heads = {h for (_, h) in run_cells if re.fullmatch(pattern, h)}
        assert len(heads) == 1, heads
        head = heads.pop()
        words = HOW.search(head)
        # the run's header and the report's unit name the same aggregation ...
        assert (words.group(1) if words else "") == aggregation_of(unit), (head, unit)
        for s, v in zip(sides, values, strict=True):
            assert run_cells[(s, head)] == v, (s, head)  # ... and give the same number
        checked += 1
    assert checked == 5


def aggregation_of(unit: str) -> str:
    """The aggregation word of a report unit ``actions per round, sum``."""
    for how in ("any member", "ratio of sums", "sum"):
        if unit.endswith(", " + how):
            return how
    return ""


def test_group_rows_of_run_are_any_member_and_the_reports_each_on_average(capsys, wolves):
    status, out, _ = run_cli(capsys, "run", str(WOLVES), "--rounds", ROUNDS, "--by", "group")
    assert status == 0
    run_cells = level_cells(out, "group")
    numbers = Numbers(wolves)
    head = header_of("attacked_before_acting", "group")
    assert (
        head
        == "Attacked before acting % (any member)"
        == (f"Attacked before acting % ({aggregation('attacked_before_acting')})")
    )
    assert header_of("actions", "side") == "Actions (sum)"
    total = numbers.total("Wolf", "attacked_before_acting")
    each = numbers.each("Wolf", "attacked_before_acting")
    assert total.ci_low > each.ci_high  # the two readings differ: the labels must too
    from simkit.output.report_document.tables import cell

    assert run_cells[("Wolf", head)] == cell("attacked_before_acting", total)
    tables, _ = group_tables(numbers)
    table = next(t for t in tables if "Attacked before acting" in t.header)
    assert table.units[0] == f"a group ×N: {EACH}"  # the report's group rows: each, on average
    row = next(r for r in table.rows if r[0].startswith("Wolf ×3"))
    assert row[table.header.index("Attacked before acting")] == cell("attacked_before_acting", each)
    wolf = [s for s in _findings(numbers) if "Wolf ×3 (" in s]
    assert wolf and all(f" {EACH})" in s for s in wolf)  # the sentences say "each" too


def _findings(numbers: Numbers) -> list[str]:
    from simkit.output.report_document.findings import group_findings
    from simkit.output.report_document.names import Footnotes

    return group_findings(numbers, Footnotes())


# --- item 6: the width of the terminal, also on a pipe ----------------------------------------
def cli(*args: str, columns: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "simkit", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize(("columns", "width"), [("80", 80), (None, 100)])
def test_sentences_wrap_at_columns_also_on_a_pipe(columns, width):
    proc = cli("run", str(WOLVES), "--rounds", "2000", columns=columns)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert max(len(line) for line in lines) <= width
    verdict_lines = lines[lines.index("Verdict:") + 1 :]
    assert len(verdict_lines) > len(unwrapped(verdict_lines))  # some sentence was wrapped
    assert max(len(line) for line in verdict_lines) > width - 15  # ... at that width


def test_long_allowed_lists_wrap_at_columns():
    proc = cli("run", str(WOLVES), "--metrics", "actoins", columns="80")
    assert proc.returncode == 2 and proc.stdout == ""
    first, *more = proc.stderr.splitlines()
    assert first.startswith("simkit: error: --metrics: no metric 'actoins'")
    assert more and all(line.startswith("    ") for line in more)
    assert max(len(line) for line in proc.stderr.splitlines()) <= 80
    joined = " ".join(proc.stderr.split())
    assert "available: first_action, actions," in joined
    # without a known width (a pipe, no COLUMNS) one line, for scripts
    proc = cli("run", str(WOLVES), "--metrics", "actoins", columns=None)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
