"""Target and objective text split in one pass: ``REF OP VALUE`` and ``REF / REF``.

String methods only (no backtracking pattern over the user's text), so a target of any
length is read or refused in time linear in its length: ``'a' + 64,000 spaces + 'b'``
took 30 s in a pattern before and takes microseconds here.
"""

from __future__ import annotations

OPERATORS = (">=", "<=", "=")
_FORBIDDEN_IN_VALUE = frozenset("=<>")


def split_target(text: str) -> tuple[str, str, str] | None:
    """``'side:a.actions / side:b.actions >= 1'`` -> ``(lhs, '>=', ' 1')``, else None.

    The operator is the last ``=`` (with a ``<`` or ``>`` just before it, ``<=`` or
    ``>=``); the value after it has no ``=``, ``<`` or ``>``; the left side is not
    empty and on one line.  ``text`` is stripped first."""
    text = text.strip()
    i = text.rfind("=")
    if i < 0:
        return None
    value = text[i + 1 :]
    if not value.strip() or any(ch in _FORBIDDEN_IN_VALUE for ch in value):
        return None
    start = i - 1 if i > 0 and text[i - 1] in "<>" else i
    op = text[start : i + 1]
    lhs = text[:start].rstrip()
    if not lhs or "\n" in lhs or "\r" in lhs:
        return None
    return lhs, op, value


TOLERANCE_SIGNS = ("±", "+-")


def split_tolerance(value: str) -> tuple[str, str | None]:
    """``' 1 ± 0.05'`` -> ``('1', '0.05')``, ``'1 +- 5%'`` -> ``('1', '5%')``, ``'1'`` ->
    ``('1', None)``: the value and the tolerance's text after ``±`` (or ASCII ``+-``),
    both stripped."""
    for sign in TOLERANCE_SIGNS:
        head, found, tail = value.partition(sign)
        if found:
            return head.strip(), tail.strip()
    return value.strip(), None


def split_ratio(lhs: str) -> list[str]:
    """``'a / b'`` -> ``['a', 'b']``: split at each ``/`` with white space on both sides
    (``side:a/b`` stays one part); the parts are stripped."""
    parts: list[str] = []
    begin = 0  # where the current part starts
    free = 0  # white space before this index belongs to an earlier separator
    k = lhs.find("/")
    while k >= 0:
        after = k + 1
        if k > free and lhs[k - 1].isspace() and after < len(lhs) and lhs[after].isspace():
            parts.append(lhs[begin:k].strip())
            while after < len(lhs) and lhs[after].isspace():
                after += 1
            begin = free = after
        k = lhs.find("/", k + 1)
    parts.append(lhs[begin:].strip())
    return parts
