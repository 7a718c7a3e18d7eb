"""What the revision-1 twins gave, kept as fingerprints (tests/data/rev1_twins.json).

Revision 1 of the rules stays reachable through named variants of the revision-2 twins
(tests/twins/*.py).  The revision-1 twins themselves (tests/naive_readiness.py,
naive_vtm.py, naive_perception.py, removed after commit d449524) were played one last
time on the random fights of ``test_revision_1_stays_reachable*`` in
tests/test_readiness_rules.py, test_vtm_rules.py and test_perception_rules.py, by
tests/data/make_rev1_twins.py, which wrote down per fight a fingerprint of every count
of every round and the stream state each round left behind, and the exact
expectations of ``test_default_policies_are_revision_1_exactly``.

A revision-2 twin, with revision 1's readings written out, must give the same
fingerprint: the same counts (leaving out only the counts revision 2 added, listed per
system in the record as ``rev2_only``), round by round, drawing the same random numbers.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from functools import cache
from pathlib import Path

PATH = Path(__file__).resolve().parent / "data" / "rev1_twins.json"
Counts = Mapping[tuple[str, str], int]


@cache
def record() -> dict:
    return json.loads(PATH.read_text())


def base(metric: str) -> str:
    """A metric's name without its per-opponent or per-value part (``acts_before.B``,
    ``actions_dist.2``, ``hasty_ge.3``)."""
    return metric.split(".", 1)[0]


def fingerprint(
    rounds: Iterable[tuple[Counts, Sequence[int]]], leave_out: Iterable[str] = ()
) -> str:
    """One fight: every round's counts (those whose metric's base is not in
    ``leave_out``) and the six stream words it left behind."""
    skip = set(leave_out)
    text = json.dumps(
        [
            [
                sorted(
                    [who, metric, int(v)]
                    for (who, metric), v in counts.items()
                    if base(metric) not in skip
                ),
                [int(w) for w in state],
            ]
            for counts, state in rounds
        ]
    )
    return hashlib.sha256(text.encode()).hexdigest()[:20]


# Counts added after revision 2 (not in the record's ``rev2_only``), left out the same way.
LATER_COUNTS: dict[str, tuple[str, ...]] = {"readiness": ("hits", "wasted_defenses")}


def check(system: str, k: int, rounds: Iterable[tuple[Counts, Sequence[int]]], context=None):
    """Asserts that fight ``k`` of ``system`` gives revision 1's fingerprint."""
    rec = record()[system]
    got = fingerprint(rounds, [*rec["rev2_only"], *LATER_COUNTS.get(system, ())])
    assert got == rec["fights"][k], (
        f"{system} fight {k}: the counts or the stream state differ from the revision-1 "
        f"twin's (tests/data/make_rev1_twins.py plays it again): {context!r}"
    )


def exact(name: str) -> list[dict[tuple[str, str], Fraction]]:
    """Recorded exact expectations, one dict per case."""
    return [
        {tuple(key.split("|", 1)): Fraction(value) for key, value in case.items()}
        for case in record()["exact"][name]
    ]


def exact_to_json(values: Mapping[tuple[str, str], Fraction]) -> dict[str, str]:
    return {f"{who}|{metric}": str(value) for (who, metric), value in sorted(values.items())}
