"""How tests/data/rev1_twins.json was made (kept for the record; not run by the tests).

The revision-1 twins (tests/naive_readiness.py, naive_vtm.py, naive_perception.py) were
removed after commit d449524, where revision 1 stays reachable through variants of the
revision-2 twins.  This script played them one last time, at that commit, on the random
fights of the tests that compare the two (``rev1_fights`` in
tests/test_readiness_rules.py, test_vtm_rules.py and test_perception_rules.py), and
wrote per fight the fingerprint of tests/rev1_record.py: every count of every round
and the stream state the round left behind.  It also played the revision-2 twins with
revision 1's readings written out and checked that, round by round, their counts are
the revision-1 twin's plus only the metrics revision 2 added (``rev2_only``, whose
counts the fingerprint leaves out).  The exact expectations of the revision-1 readiness
twin for ``test_default_policies_are_revision_1_exactly`` are stored as fractions.

Run from the repository root:

    mkdir -p /tmp/rev1 && for s in readiness vtm perception; do
        git show d449524:tests/naive_$s.py > /tmp/rev1/naive_$s.py; done
    PYTHONPATH=.:tests:/tmp/rev1 python tests/data/make_rev1_twins.py
"""

from __future__ import annotations

import json
import sys
from typing import Any

import naive_perception
import naive_readiness
import naive_vtm
import rev1_record
import test_perception_rules as perception_tests
import test_readiness_rules as readiness_tests
import test_vtm_rules as vtm_tests
from enumerate import expectation
from naive_rng import NaiveStream
from twins import perception as perception_twin
from twins import readiness as readiness_twin
from twins import vtm as vtm_twin

from simkit.scenario import Combatant, Params, Scenario


def rev1_readiness_scenario(entries: list[dict[str, Any]], rules: dict[str, Any]) -> Scenario:
    """The revision-1 twin's scenario, built directly (guard a bool, no revision-2 field)."""
    combatants = []
    for e in entries:
        params = {
            "readiness": e["readiness"],
            "advantage": e.get("advantage", 0),
            "role": e.get("role", "hero"),
            "hold": e["hold"],
            "defend": e["defend"],
            "guard": e["guard"],
            "target": e.get("target", "random"),
            "attack_share": float(e["attack_share"]),
        }
        count = e["count"]
        names = [e["name"]] if count == 1 else [f"{e['name']} {k}" for k in range(1, count + 1)]
        combatants += [Combatant(n, e["side"], e["name"], Params(params)) for n in names]
    return Scenario(
        name="rev1",
        system="readiness",
        rounds=1000,
        seed=0,
        rules=Params({"order": rules["order"], "prep": rules["prep"]}),
        combatants=tuple(combatants),
    )


def vtm_counts(scenario: Any, outcome: naive_vtm.RoundOutcome) -> dict[tuple[str, str], int]:
    """Every count of the revision-1 vtm twin, keyed like the new twin's."""
    out = {}
    for i, c in enumerate(scenario.combatants):
        for metric, value in outcome.counts(i).items():
            out[(c.name, metric)] = value
        for j, d in enumerate(scenario.combatants):
            if j != i:
                out[(c.name, f"acts_before.{d.name}")] = int(outcome.acts_before(i, j))
        for k in range(c["actions"] + c["extra_actions"] + 1):
            out[(c.name, f"actions_dist.{k}")] = int(outcome.actions[i] == k)
    out[("", "simultaneous")] = int(outcome.simultaneous)
    return out


def readiness_fights():
    for _, entries, rules, key in readiness_tests.rev1_fights():
        old, old_states = naive_readiness.play_rounds_keyed(
            rev1_readiness_scenario(entries, rules), key, 4
        )
        new = readiness_twin.play_rounds_keyed(
            readiness_tests.rev1_readings(entries, rules), key, 4
        )
        yield list(zip(old, old_states, strict=True)), [rec.counts for rec in new]


def vtm_fights():
    for _, entries, tie, key in vtm_tests.rev1_fights():
        old_s = vtm_tests.make_scenario("vtm", entries, rules={"tie": tie, "multi": "in_turn"})
        new_s = vtm_tests.rev1_readings(entries, tie)
        old, new = [], []
        for r in range(40):
            stream = NaiveStream.for_round(key, r)
            old.append((vtm_counts(old_s, naive_vtm.play_round(old_s, stream)), stream.state()))
            new.append(vtm_twin.play_round(new_s, NaiveStream.for_round(key, r)))
        yield old, new


def perception_fights():
    for _, scenario, key, first in perception_tests.rev1_fights():
        old = []
        for r in range(40):
            stream = NaiveStream.for_round(key, first + r)
            old.append((naive_perception.play_round(scenario, stream), stream.state()))
        new = perception_twin.play_rounds_keyed(scenario, key, 40, first=first)
        yield old, [rec.counts for rec in new]


def record(fights) -> dict:
    """Fingerprints of the revision-1 twin, after checking that the revision-2 twin's
    counts are the same keys plus whole metrics revision 2 added."""
    played = list(fights)
    rev2_only = set()
    for old, new in played:
        for (counts, _), got in zip(old, new, strict=True):
            assert set(counts) <= set(got)
            rev2_only |= {rev1_record.base(m) for _, m in set(got) - set(counts)}
    for old, new in played:
        for (counts, _), got in zip(old, new, strict=True):
            assert rev2_only.isdisjoint(rev1_record.base(m) for _, m in counts)
            kept = {k for k in got if rev1_record.base(k[1]) not in rev2_only}
            assert kept == set(counts)
    return {
        "rev2_only": sorted(rev2_only),
        "fights": [rev1_record.fingerprint(old) for old, _ in played],
    }


def main() -> None:
    out = {
        "made_by": "tests/data/make_rev1_twins.py at d449524",
        "readiness": record(readiness_fights()),
        "vtm": record(vtm_fights()),
        "perception": record(perception_fights()),
        "exact": {"readiness_default_policies": []},
    }
    for entries in readiness_tests.DEFAULT_POLICY_FIGHTS:
        scenario = rev1_readiness_scenario(
            readiness_tests.default_policy_entries(entries), readiness_tests.DEFAULT_POLICY_RULES
        )
        normal = expectation(lambda d, s=scenario: naive_readiness.play_round(s, d, False))
        assert normal[("", "stalemate")] == 0  # nobody holds: no forced round to weigh in
        out["exact"]["readiness_default_policies"].append(rev1_record.exact_to_json(normal))
    for system in ("readiness", "vtm", "perception"):
        print(system, len(out[system]["fights"]), out[system]["rev2_only"], file=sys.stderr)
    rev1_record.PATH.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
