"""``simkit trace`` as a user runs it: the worked examples, JSON lines, bad ``--dice``.

The kernel's trace path itself is held to the twins by tests/test_contract.py; here the
command: the R3 worked example of docs/rules.md printed in the order the rules state
(``order = "dynamic"`` and ``"chain"`` now visibly differ), every line citing its rule,
the traced rounds being the first rounds ``simkit run`` plays with that seed, and every
bad ``--dice`` one error line.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from simkit.cli import main

ROOT = Path(__file__).resolve().parents[1]
WORKED = ROOT / "scenarios" / "worked_example_readiness.toml"
WOLVES = ROOT / "scenarios" / "party_vs_wolves.toml"
DICE = ["--dice", "A=6,6,2", "--dice", "B=6,6,5", "--dice", "W=6,1"]
RULE_LINE = re.compile(r"^  [RVP]\d+ +\S")


def _acts(text: str) -> list[tuple[str, int]]:
    return [(m[1], int(m[2])) for m in re.finditer(r"R4 +(\w+) acts with a (\d)", text)]


def test_the_worked_example_in_both_orders(tmp_path, capsys):
    assert main(["trace", str(WORKED), *DICE]) == 0
    text = capsys.readouterr().out
    dynamic = [("B", 6), ("A", 6), ("B", 6), ("A", 6), ("W", 6), ("B", 5), ("A", 2), ("W", 1)]
    assert _acts(text) == dynamic
    assert "fixed dice: A 6,6,2, B 6,6,5, W 6,1" in " ".join(text.split())
    chain_file = tmp_path / "chain.toml"
    chain_file.write_text(WORKED.read_text().replace('order = "dynamic"', 'order = "chain"'))
    assert main(["trace", str(chain_file), *DICE]) == 0
    chain = [("B", 6), ("B", 6), ("A", 6), ("A", 6), ("W", 6), ("B", 5), ("A", 2), ("W", 1)]
    assert _acts(capsys.readouterr().out) == chain


@pytest.mark.parametrize(
    "name", ["worked_example_vtm.toml", "perception_gunnar_wolf.toml", "party_vs_wolves.toml"]
)
def test_every_event_line_cites_its_rule_and_fits(capsys, name):
    assert main(["trace", str(ROOT / "scenarios" / name), "--rounds", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if line.startswith("Round ")] == [
        "Round 1",
        "Round 2",
        "Round 3",
    ]
    body = lines[lines.index("Round 1") :]  # the heading above may wrap
    events = [line for line in body if line.startswith("  ")]
    assert events and all(RULE_LINE.match(line) for line in events), events[:5]
    assert all(len(line) <= 100 for line in lines)


def test_json_events_are_the_first_rounds_simkit_run_plays(tmp_path, capsys):
    rounds = 200
    assert main(["trace", str(WOLVES), "--rounds", str(rounds), "--seed", "9", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["kind"] == "trace"
    assert document["parameters"]["rounds"] == rounds and document["parameters"]["seed"] == 9
    events = document["rows"]
    assert {e["round"] for e in events} == set(range(rounds))
    assert all({"round", "event", "rule"} <= set(e) for e in events)
    acts = Counter(e["combatant"] for e in events if e["event"] == "act")
    out = tmp_path / "run"
    args = ["run", str(WOLVES), "--rounds", str(rounds), "--seed", "9", "--workers", "1"]
    assert main([*args, "--out", str(out)]) == 0
    capsys.readouterr()
    summary = json.loads((out / "summary.json").read_text())
    for name, entry in summary["combatants"].items():
        assert entry["metrics"]["actions"]["mean"] * rounds == pytest.approx(acts[name], abs=1e-9)


@pytest.mark.parametrize(
    ("dice", "fragment"),
    [
        ("A=6,6", "A"),  # readiness 3: three dice
        ("A=7,6,2", "7"),  # a d6 has no 7
        ("Z=1,2,3", "nobody named 'Z' rolls dice here; rollers: A, B, W"),
        ("A", "NAME=FACES"),
    ],
)
def test_a_bad_dice_option_is_one_line(capsys, dice, fragment):
    assert main(["trace", str(WORKED), "--dice", dice]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("simkit: error: --dice") and captured.err.count("\n") == 1
    assert fragment in captured.err


def test_json_is_an_alias_of_format_json_and_csv_has_a_row_per_event(capsys):
    args = ["trace", str(WOLVES), "--rounds", "3", "--seed", "4"]
    assert main([*args, "--json"]) == 0
    alias = capsys.readouterr().out
    assert main([*args, "--format", "json"]) == 0
    assert capsys.readouterr().out == alias
    events = json.loads(alias)["rows"]
    assert main([*args, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == len(events)
    assert [r["event"] for r in rows] == [e["event"] for e in events]
    assert [int(r["round"]) for r in rows] == [e["round"] for e in events]
    assert main([*args, "--format", "md"]) == 0
    md = capsys.readouterr().out.splitlines()
    assert len(md) == 2 + len(events) and md[0].startswith("| round | event | rule |")


def test_a_pool_reads_high_to_low(capsys):
    """The roll line lists a pool high to low (the JSON keeps the order drawn)."""
    assert main(["trace", str(WORKED), "--dice", "W=1,4", "--dice", "B=2,6,5"]) == 0
    text = capsys.readouterr().out
    assert "R1  W rolls 4, 1" in text and "R1  B rolls 6, 5, 2" in text
    assert main(["trace", str(WOLVES), "--rounds", "20", "--seed", "11"]) == 0
    pools = re.findall(r"rolls ([\d, ]+)$", capsys.readouterr().out, re.MULTILINE)
    faces = [[int(x) for x in p.split(", ")] for p in pools]
    assert len(faces) >= 20 and any(len(set(f)) > 1 for f in faces)
    assert all(f == sorted(f, reverse=True) for f in faces)
    assert main(["trace", str(WORKED), "--dice", "W=1,4", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert next(r for r in rows if r.get("combatant") == "W" and "dice" in r)["dice"] == [1, 4]
