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
