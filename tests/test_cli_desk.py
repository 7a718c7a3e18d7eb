"""The command line at a designer's desk: tables that fit 100 columns, --metrics,
--format, --by, compare's significant rows, --version, help, relative specs and
validation that names every problem."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

import simkit
from simkit import cli, systems
from simkit.cli import main

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted((ROOT / "scenarios").glob("*.toml"))
WOLVES = ROOT / "scenarios" / "party_vs_wolves.toml"


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.slow
@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
@pytest.mark.parametrize("by", ["combatant", "group", "side"])
def test_run_tables_fit_100_columns(capsys, path, by):
    status, out, _ = run_cli(capsys, "run", str(path), "--rounds", "3000", "--by", by)
    assert status == 0
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 100, max(lines, key=len)
    assert "±" in out or "n/a" in out


def test_compare_fits_and_shows_only_significant_rows(capsys):
    status, out, _ = run_cli(
        capsys, "compare", str(WOLVES), "--set", "Gunnar.hold=never", "--rounds", "40000"
    )
    assert status == 0
    assert max(len(line) for line in out.splitlines()) <= 100
    c = simkit.compare(WOLVES, set=["Gunnar.hold=never"], rounds=40000)
    t = c.table[~c.table.metric.str.contains(".", regex=False)]
    significant = t[(t.ci_low > 0) | (t.ci_high < 0)]
    assert 0 < len(significant) < len(t)
    assert f"{len(t) - len(significant)} rows with no significant difference not shown" in out
    status, everything, _ = run_cli(
        capsys, "compare", str(WOLVES), "--set", "Gunnar.hold=never", "--rounds", "40000", "--all"
    )
    assert len(everything.splitlines()) > len(out.splitlines())


def test_metrics_picks_columns_and_rejects_unknown_ones(capsys):
    status, out, _ = run_cli(
        capsys, "run", str(WOLVES), "--rounds", "3000", "--metrics", "actions,first_action"
    )
    assert status == 0
    header = out.splitlines()[0]
    assert "Actions" in header and "First action %" in header and "Defenses" not in header
    status, out, err = run_cli(capsys, "run", str(WOLVES), "--metrics", "actoins")
    assert status == 2 and out == ""
    assert "did you mean 'actions'" in err and len(err.splitlines()) == 1


COMMANDS = {
    "run": ["run", str(WOLVES)],
    "sweep": ["sweep", str(WOLVES), "--vary", "Wolf.readiness=2..3"],
    "compare": ["compare", str(WOLVES), "--set", "Wolf.readiness=3"],
}


@pytest.mark.parametrize("kind", list(COMMANDS))
def test_every_format_is_drawn_from_the_same_rows(capsys, kind):
    """csv, md and json of a command carry the same columns and rows; json is the one
    documented shape (kind, parameters, rows, notes)."""
    args = [*COMMANDS[kind], "--rounds", "3000", "--seed", "3", "--by", "side"]
    printed = {}
    for fmt in ("csv", "json", "md"):
        status, printed[fmt], _ = run_cli(capsys, *args, "--format", fmt)
        assert status == 0
    rows = list(csv.DictReader(io.StringIO(printed["csv"])))
    assert {r["side"] for r in rows} == {"party", "wolves"}
    assert {"metric"} <= set(rows[0])
    document = json.loads(printed["json"])
    assert sorted(document) == ["kind", "notes", "parameters", "rows"]
    assert document["kind"] == kind
    assert document["parameters"]["by"] == "side" and document["parameters"]["seed"] == 3
    assert [list(r) for r in document["rows"]] == [list(rows[0])] * len(rows)
    for record, row in zip(document["rows"], rows, strict=True):
        for column, text in row.items():
            value = record[column]
            if isinstance(value, float):
                assert text == f"{value:.10g}"
            else:
                assert text == ("" if value is None else str(value))
    md = printed["md"].splitlines()
    assert md[0] == "| " + " | ".join(rows[0]) + " |"
    assert len(md) == 2 + len(rows)


def test_run_json_with_metrics_keeps_only_those(capsys):
    status, out, _ = run_cli(
        capsys, "run", str(WOLVES), "--rounds", "2000", "--format", "json", "--metrics", "actions"
    )
    assert status == 0
    document = json.loads(out)
    assert document["parameters"]["metrics"] == ["actions"]
    assert {r["metric"] for r in document["rows"]} == {"actions"}


def test_an_unknown_format_is_an_error_in_one_place(capsys):
    from simkit.output import render

    with pytest.raises(ValueError, match="unknown format 'xml'; allowed: table, csv, md, json"):
        render.render("run", object(), "xml")
    with pytest.raises(ValueError, match="unknown kind 'policy'"):
        render.render("policy", object(), "csv")
    assert cli.FORMATS == render.FORMATS
    status, out, err = run_cli(capsys, "run", str(WOLVES), "--format", "xml")
    assert status == 2 and out == "" and "--format" in err


def test_version_and_bare_command(capsys):
    status, out, _ = run_cli(capsys, "--version")
    assert status == 0 and out.strip() == f"simkit {simkit.__version__}"
    status, out, err = run_cli(capsys)
    assert status == 0 and err == ""
    assert out.startswith("usage: simkit") and "run" in out and "tune" in out


def test_relative_specs_are_offsets_shown_with_actual_values(capsys):
    status, out, _ = run_cli(
        capsys, "sweep", str(WOLVES), "--vary", "Wolf.readiness=+0..+2", "--rounds", "2000"
    )
    assert status == 0
    assert "readiness 2" in out and "readiness 4" in out  # the wolves have readiness 2
    result = simkit.sweep(WOLVES, ["Wolf.readiness=+1"], rounds=1000)
    assert {c["readiness"] for c in result.results[0].scenario.combatants if c.group == "Wolf"} == {
        3
    }
    status, _, err = run_cli(capsys, "sweep", str(WOLVES), "--vary", "*.readiness=++1")
    assert status == 2 and "cannot read" in err


def test_every_problem_of_a_file_is_named(tmp_path, capsys):
    path = tmp_path / "bad.toml"
    path.write_text(
        '[scenario]\nsystem = "readiness"\nrounds = 0\n\n[rules]\norder = "dinamic"\n\n'
        '[[combatant]]\nname = "Troll Chief"\nside = "monsters"\nreadiness = 0\n\n'
        '[[combatant]]\nname = "Hero"\nside = "party"\nreadiness = 3\nhold = "sometimes"\n'
    )
    status, out, err = run_cli(capsys, "validate", str(path))
    assert status == 2 and out == ""
    lines = err.splitlines()
    assert lines[0] == f"simkit: error: {path}: 4 problems"
    assert lines[1:] == [
        "  scenario.rounds: 0 is not allowed; allowed: an integer from 1 to 1000000000000",
        "  rules.order: 'dinamic' is not allowed (did you mean 'dynamic'?); allowed: one of "
        + ", ".join(f'"{c}"' for c in systems.get("readiness").rules["order"].choices),
        '  combatant "Troll Chief" (index 0).readiness: 0 is not allowed; allowed: an integer '
        "from 1 to 20",
        "  combatant \"Hero\" (index 1).hold: 'sometimes' is not allowed; allowed: one of "
        + ", ".join(f'"{c}"' for c in systems.get("readiness").fields["hold"].choices),
    ]


def test_api_errors_name_what_is_wrong():
    result = simkit.run(WOLVES, rounds=1000)
    with pytest.raises(KeyError, match=r"no combatant 'Gunar' \(did you mean 'Gunnar'\?\)"):
        result.estimate("Gunar", "actions")
    with pytest.raises(KeyError, match=r"no metric 'actoins'.*did you mean 'actions'"):
        result.estimate("Gunnar", "actoins")
    with pytest.raises(ValueError, match=r"no statistic 'hasty'.*allowed: mean, se"):
        result.wide("hasty")
    with pytest.raises(KeyError, match=r"no side 'wolfs'.*did you mean 'wolves'"):
        result.estimate("side:wolfs", "actions")
