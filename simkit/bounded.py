"""Bounded error output: what a message may echo of the user's input.

Every message simkit prints about bad input stays readable however long the input was:
a scenario's problems are listed up to :data:`MAX_LISTED` (then ``... and N more``),
any word longer than :data:`MAX_WORD` characters (a path, a ``--metrics`` value, a
name) is cut to its beginning and end with its length, and so is a run of spaces and a
line still longer than :data:`MAX_LINE`.  All are linear in the text.
"""

from __future__ import annotations

import re

MAX_LISTED = 50  # problems listed in one error; the rest are counted
MAX_WORD = 120  # characters of one echoed word
_KEEP = 50  # characters kept at each end of a cut word
MAX_LINE = 1000  # characters of one message line, the cut words counted
_LONG_WORD = re.compile(rf"\S{{{MAX_WORD + 1},}}")
_LONG_SPACE = re.compile(rf"[ \t]{{{MAX_WORD + 1},}}")


def cut(text: str, limit: int = MAX_WORD) -> str:
    """``text`` if at most ``limit`` characters, else its beginning and end around ``…``."""
    if len(text) <= limit:
        return text
    keep = max(1, min(_KEEP, (limit - 1) // 2))
    return f"{text[:keep]}…{text[-keep:]} ({len(text):,} characters)"


def cut_words(text: str) -> str:
    """Every word (run of non-space characters) longer than MAX_WORD shortened, every
    longer run of spaces shown as its length, and what is still longer than MAX_LINE
    (many long words) cut in the middle."""
    if len(text) <= MAX_WORD:
        return text
    text = _LONG_WORD.sub(lambda m: cut(m.group(0)), text)
    text = _LONG_SPACE.sub(lambda m: f" …({len(m.group(0)):,} spaces)… ", text)
    if len(text) > MAX_LINE:
        keep = MAX_LINE // 2 - 20
        text = f"{text[:keep]} …({len(text) - 2 * keep:,} characters)… {text[-keep:]}"
    return text


def listed(lines: list[str], limit: int = MAX_LISTED) -> list[str]:
    """At most ``limit`` of ``lines``, then one ``... and N more`` line."""
    if len(lines) <= limit:
        return lines
    return [*lines[:limit], f"... and {len(lines) - limit:,} more"]
