"""Numbers written as text, read one way everywhere (command-line options, ``--set`` and
``--vary`` values and ranges, policy parameters such as ``hasty_up_to:N``).

An integer is ASCII digits with an optional leading minus sign: ``-?[0-9]+``.  Nothing
else is read as one -- no surrounding spaces, no leading ``+``, no Unicode or full-width
digits (Python's ``int()`` takes ``'٣'``, ``' 5'`` and ``'+1'``; simkit does not).  Where
a TOML file allows ``_`` between digits (``1_000_000``) the file's parser has read it
already; on the command line ``_`` is not allowed (``underscores=True`` is for callers
that read text taken from a file).

A number is an integer, a decimal (``0.5``, ``-2.25``, ``.5``, ``5.``) or either with an
exponent (``1e6``, ``2.5E-3``), in ASCII; ``inf`` and ``nan`` are not numbers here.

Every reader is linear in the length of the text (fixed regular expressions without
nested repetition, and a length check first), so a hostile value costs microseconds.
"""

from __future__ import annotations

import re

INTEGER_FORM = "ASCII digits with an optional leading minus sign, e.g. 42 or -3"
NUMBER_FORM = "a decimal number in ASCII digits, e.g. 0.5, -2 or 1e6"
MAX_DIGITS = 40  # longer text is no integer simkit accepts (2**63 has 19 digits)

_INT = re.compile(r"-?[0-9]+", re.ASCII)
_INT_UNDERSCORE = re.compile(r"-?[0-9]+(?:_[0-9]+)*", re.ASCII)
_NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?", re.ASCII)
_SHOWN = 40


class DigitsError(ValueError):
    """Text that is not a number of the allowed form; the message says the form."""


def shown(text: str) -> str:
    """``repr(text)``, cut to a readable length."""
    if len(text) <= _SHOWN:
        return repr(text)
    return f"{text[:_SHOWN]!r}… ({len(text):,} characters)".replace("'…", "…'", 1)


def is_int(text: str, *, signed: bool = True, underscores: bool = False) -> bool:
    """True if ``text`` is an integer of the allowed form (see the module docstring)."""
    if not isinstance(text, str) or not text or len(text) > MAX_DIGITS:
        return False
    if not signed and text.startswith("-"):
        return False
    return (_INT_UNDERSCORE if underscores else _INT).fullmatch(text) is not None


def parse_int(text: str, *, underscores: bool = False) -> int:
    """The integer written in ``text``; DigitsError (with the allowed form) otherwise."""
    if not is_int(text, underscores=underscores):
        raise DigitsError(f"expected an integer ({INTEGER_FORM}), got {shown(str(text))}")
    return int(text.replace("_", "") if underscores else text)


def read_int(text: str, low: int | None = None, high: int | None = None) -> int:
    """An integer in ``[low, high]``; DigitsError names the range and the form."""
    value = parse_int(text)
    if (low is not None and value < low) or (high is not None and value > high):
        raise DigitsError(f"expected an integer from {low:,} to {high:,}, got {shown(text)}")
    return value


def parse_number(text: str) -> float:
    """The number written in ``text`` (finite); DigitsError otherwise."""
    if not isinstance(text, str) or not text or len(text) > 64 or _NUMBER.fullmatch(text) is None:
        raise DigitsError(f"expected a number ({NUMBER_FORM}), got {shown(str(text))}")
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise DigitsError(f"expected a finite number, got {shown(text)}")
    return value


def read_number(text: str, low: float, high: float) -> float:
    """A number in ``[low, high]``; DigitsError names the range and the form."""
    value = parse_number(text)
    if not low <= value <= high:
        raise DigitsError(f"expected a number from {low:g} to {high:g}, got {shown(text)}")
    return value
