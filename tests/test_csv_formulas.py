"""CSV cells that a spreadsheet would run as formulas are written as text."""

from __future__ import annotations

import pandas as pd
import pytest

from simkit.output.spreadsheet import safe_cell, safe_frame


@pytest.mark.parametrize(
    "text", ['=HYPERLINK("x")', "+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1", "-Wolf"]
)
def test_a_formula_start_gets_an_apostrophe(text):
    assert safe_cell(text) == "'" + text


@pytest.mark.parametrize("value", ["Wolf", "-0.5", "+1", "1e-3", "", 3, -2.5, None, "a=b"])
def test_numbers_and_plain_text_are_left_alone(value):
    assert safe_cell(value) is value


def test_a_frame_without_formulas_is_not_copied():
    f = pd.DataFrame({"combatant": ["Wolf 1", "Gunnar"], "mean": [-0.5, 1.0]})
    assert safe_frame(f) is f


def test_text_cells_and_headers_of_a_frame_are_made_safe():
    f = pd.DataFrame({"combatant": ["=cmd|' /C calc'!A0", "Gunnar"], "@x": [-0.5, 1.0]})
    out = safe_frame(f)
    assert list(out["combatant"]) == ["'=cmd|' /C calc'!A0", "Gunnar"]
    assert list(out.columns) == ["combatant", "'@x"]
    assert list(out["'@x"]) == [-0.5, 1.0]
    assert list(f["combatant"])[0].startswith("=")  # the original is untouched


FORMULA_NAMES = """
[scenario]
name = "formulas"
system = "readiness"

[[combatant]]
name = "=HYPERLINK(1)"
side = "@party"
readiness = 3

[[combatant]]
name = "-Wolf"
side = "+wolves"
readiness = 2
"""


def _csv_cells(text: str) -> list[str]:
    import csv
    import io

    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def test_names_written_by_run_out_and_format_csv_are_text(tmp_path, capsys):
    from simkit.cli import main

    path = tmp_path / "formulas.toml"
    path.write_text(FORMULA_NAMES, encoding="utf-8")
    out = tmp_path / "out"
    args = ["run", str(path), "--rounds", "2000", "--seed", "7", "--workers", "1"]
    assert main([*args, "--out", str(out)]) == 0
    capsys.readouterr()
    assert main([*args, "--format", "csv", "--by", "side"]) == 0
    printed = capsys.readouterr().out
    for text in ((out / "metrics.csv").read_text(encoding="utf-8"), printed):
        cells = _csv_cells(text)
        formulas = [c for c in cells if c.startswith(("=", "+", "@", "-")) and not _number(c)]
        assert formulas == []
    assert "'=HYPERLINK(1)" in _csv_cells((out / "metrics.csv").read_text(encoding="utf-8"))
    assert "'+wolves" in _csv_cells(printed)


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
