"""Revision 2 of the readiness rules stays reachable: every readiness example fight with
revision 2's readings written out (scenarios/revision_2/, R5 ``release = "any"``; none
of them uses ``order = "chain"``, whose revision-2 run is ``"chain_unbroken"``) gives
exactly the numbers simkit gave before revision 3 (tests/data/rev2_baseline_readiness.json,
made at commit 3d2bc67 by tests/data/make_rev2_baseline_readiness.py: 300,000 rounds,
each file's own seed, one worker).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

import simkit
from simkit.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]
BASELINE = json.loads((ROOT / "tests/data/rev2_baseline_readiness.json").read_text())


@pytest.mark.parametrize("rel", sorted(BASELINE))
def test_revision_2_readiness_numbers_unchanged(rel: str) -> None:
    expected = BASELINE[rel]
    rules = tomllib.loads((ROOT / rel).read_text())["rules"]
    assert rules["release"] == "any" and rules.get("order", "dynamic") != "chain"
    scenario = load_scenario(ROOT / rel)
    result = simkit.run(scenario, rounds=expected["rounds"], rng=expected["seed"], workers=2)
    got = {(who, m): (repr(mean), repr(se)) for who, m, mean, se, _, _ in result.rows}
    want = {(who, m): (mean, se) for who, m, mean, se in expected["rows"]}
    # metrics added since (R7 [rev 3]) are the only new rows; every old one is unchanged
    assert set(want) <= set(got)
    assert {m for _, m in set(got) - set(want)} <= {"hits", "wasted_defenses"}
    mismatches = [f"{k}: {got[k]}, was {want[k]}" for k in want if got[k] != want[k]]
    assert not mismatches, f"{len(mismatches)} numbers changed:\n" + "\n".join(mismatches[:20])


def _revision_3_only(doc: dict) -> bool:
    """A fight revision 2 cannot write: a guard that names the allies it protects (R7a)."""
    return any(isinstance(c.get("guard"), list) for c in doc.get("combatant", []))


def test_every_readiness_example_has_a_revision_2_copy() -> None:
    docs = {p.name: tomllib.loads(p.read_text()) for p in (ROOT / "scenarios").glob("*.toml")}
    examples = {
        name
        for name, doc in docs.items()
        if doc["scenario"]["system"] == "readiness" and not _revision_3_only(doc)
    }
    assert "bodyguard.toml" in docs and "bodyguard.toml" not in examples
    assert {Path(rel).name for rel in BASELINE} == examples
    assert {p.name for p in (ROOT / "scenarios/revision_2").glob("*.toml")} >= examples
