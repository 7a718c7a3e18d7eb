"""Revision 1 of the rules stays reachable: every example scenario, with revision 1's
readings written out as variants, gives exactly the numbers simkit gave before
revision 2 (tests/data/rev1_baseline.json, made at commit 46d63bd by
tests/data/make_rev1_baseline.py: 300,000 rounds, each file's own seed, one worker).

Revision 3's fights (R8a: ``fight_rounds``, ``opening``) are taken out of a file, as
revision 1 had none (scenarios/ambush.toml became a fight of three rounds).  The only
intended difference is the vtm fix for 0 < attack_share < 2**-54 (none of
these files has such a share).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

import simkit
from simkit import systems
from simkit.scenario import scenario_from_dict

ROOT = Path(__file__).resolve().parents[1]
BASELINE = json.loads((ROOT / "tests/data/rev1_baseline.json").read_text())

# Revision 1's readings as revision-2 variants, per system: rules to write out (where
# the file does not give them) and field values to translate.
REV1_RULES = {
    "readiness": {"prep": "sixes", "holder_actions": "release_only", "release": "any"},
    "vtm": {"multi": "in_turn", "slot_abort": "never"},
    "perception": {"information": "order"},
}
REV1_VALUES = {"vtm": {"abort": {"always": "before_acting"}}}
# Rule values a later revision renamed: revision 1's (and 2's) "chain" never ends early.
REV1_RULE_VALUES = {"readiness": {"order": {"chain": "chain_unbroken"}}}


def rev1_document(path: Path) -> dict:
    """The scenario file with revision 1's readings written out: the rules it does not
    give, and the values revision 2 renamed."""
    data = tomllib.loads(path.read_text())
    # Revision 3's fights (R8a) did not exist: every round was a round of the same kind,
    # with a combatant's advantage and surprise in all of them.
    data["scenario"].pop("fight_rounds", None)
    for entry in data["combatant"]:
        entry.pop("opening", None)
    system = systems.get(data["scenario"]["system"])
    rules = data.setdefault("rules", {})
    for key, value in REV1_RULES[system.name].items():
        if key in system.rules and key not in rules:
            rules[key] = value
    for key, mapping in REV1_RULE_VALUES.get(system.name, {}).items():
        if rules.get(key) in mapping:
            rules[key] = mapping[rules[key]]
    for entry in data["combatant"]:
        for key, mapping in REV1_VALUES.get(system.name, {}).items():
            spec = system.fields.get(key)
            if (
                key in entry
                and spec is not None
                and mapping.get(entry[key]) in (spec.choices or ())
            ):
                entry[key] = mapping[entry[key]]
    return data


@pytest.mark.parametrize("rel", sorted(BASELINE))
def test_revision_1_numbers_unchanged(rel: str) -> None:
    expected = BASELINE[rel]
    scenario = scenario_from_dict(rev1_document(ROOT / rel), source=rel)
    result = simkit.run(scenario, rounds=expected["rounds"], rng=expected["seed"], workers=2)
    got = {(who, m): (mean, se) for who, m, mean, se, _, _ in result.rows}
    mismatches = []
    for who, metric, mean, se in expected["rows"]:
        if (who, metric) not in got:
            mismatches.append(f"{who}.{metric}: missing")
            continue
        g_mean, g_se = got[(who, metric)]
        same_mean = (g_mean == float(mean)) or (g_mean != g_mean and mean == "nan")
        same_se = (
            (g_se == float(se))
            or (g_se != g_se and se == "nan")
            or abs(g_se - float(se)) <= 1e-12 * max(1.0, abs(float(se)))
        )
        if not (same_mean and same_se):
            mismatches.append(f"{who}.{metric}: {g_mean!r} ± {g_se!r}, was {mean} ± {se}")
    assert not mismatches, f"{len(mismatches)} numbers changed:\n" + "\n".join(mismatches[:20])
