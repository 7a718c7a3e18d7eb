"""Text cells that a spreadsheet would read as a formula.

A CSV cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return, which
some spreadsheets skip before one of those) is run as a formula when the file is opened in a
spreadsheet. simkit writes names and other text as the user wrote them, so such a cell gets a
leading apostrophe, which spreadsheets read as "this is text" and do not show. Numbers,
including negative ones, are left alone: they are written by simkit, not typed by a user.
"""

from __future__ import annotations

from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def safe_cell(value: Any) -> Any:
    """``value`` as a CSV cell a spreadsheet shows as text: a string starting like a
    formula gets a leading ``'``; anything else is returned unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _is_number(value):
        return "'" + value
    return value


def safe_frame(frame: Any) -> Any:
    """A copy of a pandas DataFrame with every text cell made safe (see :func:`safe_cell`);
    the frame itself when no cell needs it (the usual case: nothing is copied)."""
    from pandas.api.types import is_numeric_dtype

    text_columns = [c for c in frame.columns if not is_numeric_dtype(frame[c].dtype)]
    needs = [c for c in text_columns if frame[c].map(lambda v: safe_cell(v) is not v).any()]
    if not needs and not any(safe_cell(c) is not c for c in frame.columns):
        return frame
    out = frame.copy()
    for c in needs:
        out[c] = out[c].map(safe_cell)
    out.columns = [safe_cell(c) for c in out.columns]
    return out


def frame_csv(frame: Any) -> str:
    """The CSV text of a result table: no index, numbers to 10 significant digits, text
    cells made safe (see :func:`safe_cell`)."""
    return safe_frame(frame).to_csv(index=False, float_format="%.10g")
