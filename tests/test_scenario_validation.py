"""Scenario validation through the command line: every bad input is one line on stderr.

Each bad-input case writes a small scenario file, runs ``simkit run FILE --out DIR``
and checks: exit status 2, exactly one line on stderr naming the file, the field
path and what is allowed, nothing on stdout, and no ``--out`` directory.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from simkit import ScenarioError, load_scenario
from simkit.cli import main
from simkit.scenario import scenario_from_dict

SCENARIO = {"name": '"Test fight"', "system": '"readiness"', "rounds": "1000", "seed": "7"}
HERO = {"name": '"Hero"', "side": '"party"', "readiness": "3"}
WOLF = {
    "name": '"Wolf"',
    "side": '"wolves"',
    "readiness": "2",
    "role": '"secondary"',
    "count": "2",
}


def with_(base: dict[str, str], **changes: str | None) -> dict[str, str]:
    """``base`` with fields changed (values are TOML literals) or removed (None)."""
    out = dict(base)
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def doc(
    scenario: dict[str, str] | None = None,
    rules: dict[str, str] | None = None,
    combatants: list[dict[str, str]] | None = None,
    top: str = "",
) -> str:
    """A scenario file as text; ``top`` goes before the first table."""
    lines = [top] if top else []
    lines += ["[scenario]", *(f"{k} = {v}" for k, v in (scenario or SCENARIO).items())]
    if rules:
        lines += ["", "[rules]", *(f"{k} = {v}" for k, v in rules.items())]
    for c in [HERO, WOLF] if combatants is None else combatants:
        lines += ["", "[[combatant]]", *(f"{k} = {v}" for k, v in c.items())]
    return "\n".join(lines) + "\n"


PERCEPTION = with_(SCENARIO, system='"perception"')
P_HERO = {"name": '"Gunnar"', "side": '"party"', "perception": "4"}
P_WOLF = {"name": '"Wolf"', "side": '"wolves"', "perception": "6"}
VTM = with_(SCENARIO, system='"vtm"')
V_HERO = {"name": '"Kain"', "side": '"sabbat"', "dexterity": "3", "wits": "2"}
V_FOE = {"name": '"Beckett"', "side": '"camarilla"', "rating": "5"}

# (id, file text, field path, fragments the message must also contain)
BAD_SCENARIOS: list[tuple[str, str, str, tuple[str, ...]]] = [
    (
        "toml-syntax",
        doc().replace("readiness = 3", "readiness = "),
        "TOML syntax error",
        ("line 10",),
    ),
    (
        "toml-duplicate-key",
        doc(combatants=[{**HERO}, WOLF]).replace("readiness = 3", "readiness = 3\nreadiness = 4"),
        "TOML syntax error",
        ("line",),
    ),
    (
        "unknown-table",
        doc().replace("[scenario]", "[rule]\norder = 'chain'\n\n[scenario]"),
        "rule: unknown table",
        ("did you mean 'rules'", "allowed: [scenario], [rules], [[combatant]]"),
    ),
    (
        "unknown-scenario-key",
        doc(with_(SCENARIO, sead="3")),
        "scenario.sead",
        ("did you mean 'seed'", "allowed: name, system, rounds, seed"),
    ),
    (
        "unknown-combatant-key",
        doc(combatants=[with_(HERO, readines="3"), WOLF]),
        "(index 0).readines",
        ("did you mean 'readiness'", "allowed: name, side, count"),
    ),
    (
        "unknown-rule",
        doc(rules={"orders": '"chain"'}),
        "rules.orders",
        ("did you mean 'order'", "allowed: order, prep"),
    ),
    (
        "rule-of-other-system",
        doc(rules={"tie": '"random"'}),
        "rules.tie",
        ("rule of system vtm/perception", "allowed: order, prep"),
    ),
    (
        "field-of-other-system",
        doc(combatants=[with_(HERO, perception="4"), WOLF]),
        "(index 0).perception",
        ("field of system perception", "allowed: name, side"),
    ),
    (
        "readiness-bool",
        doc(combatants=[HERO, with_(WOLF, readiness="true")]),
        "(index 1).readiness",
        ("got bool", "an integer from 1 to 20"),
    ),
    (
        "readiness-zero",
        doc(combatants=[HERO, with_(WOLF, readiness="0")]),
        "(index 1).readiness",
        ("0 is not allowed", "an integer from 1 to 20"),
    ),
    (
        "readiness-21",
        doc(combatants=[with_(HERO, readiness="21"), WOLF]),
        "(index 0).readiness",
        ("21 is not allowed", "an integer from 1 to 20"),
    ),
    (
        "readiness-float",
        doc(combatants=[with_(HERO, readiness="3.5"), WOLF]),
        "(index 0).readiness",
        ("got float", "an integer from 1 to 20"),
    ),
    (
        "readiness-string",
        doc(combatants=[with_(HERO, readiness='"3"'), WOLF]),
        "(index 0).readiness",
        ("got str", "an integer from 1 to 20"),
    ),
    (
        "readiness-missing",
        doc(combatants=[with_(HERO, readiness=None), WOLF]),
        "(index 0).readiness",
        ("missing", "an integer from 1 to 20"),
    ),
    (
        "advantage-negative",
        doc(combatants=[with_(HERO, advantage="-1"), WOLF]),
        "(index 0).advantage",
        ("-1 is not allowed", "an integer from 0"),
    ),
    (
        "count-zero",
        doc(combatants=[HERO, with_(WOLF, count="0")]),
        "(index 1).count",
        ("an integer from 1 to 100",),
    ),
    (
        "attack-share-above-one",
        doc(combatants=[with_(HERO, attack_share="1.5"), WOLF]),
        "(index 0).attack_share",
        ("a number from 0 to 1",),
    ),
    (
        "guard-not-a-policy",
        doc(combatants=[with_(HERO, guard='"yes"'), WOLF]),
        "(index 0).guard",
        ('"never", "backup" or "always" (true means "backup", false "never")',),
    ),
    (
        "unknown-system",
        doc(with_(SCENARIO, system='"readyness"')),
        "scenario.system",
        ("did you mean 'readiness'", '"readiness", "vtm", "perception"'),
    ),
    (
        "missing-system",
        doc(with_(SCENARIO, system=None)),
        "scenario.system",
        ("missing", '"readiness", "vtm", "perception"'),
    ),
    (
        "rounds-zero",
        doc(with_(SCENARIO, rounds="0")),
        "scenario.rounds",
        ("an integer from 1",),
    ),
    (
        "seed-negative",
        doc(with_(SCENARIO, seed="-1")),
        "scenario.seed",
        ("an integer from 0",),
    ),
    (
        "unknown-rule-value",
        doc(rules={"order": '"dinamic"'}),
        "rules.order",
        ("did you mean 'dynamic'", '"dynamic", "chain"'),
    ),
    (
        "unknown-release-rule",
        doc(rules={"release": '"highest"'}),
        "rules.release",
        ("did you mean 'higher'", '"higher", "any"'),
    ),
    (
        "chain-unbroken-misspelt",
        doc(rules={"order": '"chain-unbroken"'}),
        "rules.order",
        ("did you mean 'chain_unbroken'", '"dynamic", "chain", "chain_unbroken"'),
    ),
    (
        "unknown-hold-policy",
        doc(combatants=[with_(HERO, hold='"until_attack"'), WOLF]),
        "(index 0).hold",
        ("did you mean 'until_attacked'", '"never", "until_attacked", "until_enemy_acts"'),
    ),
    (
        "bad-defend-policy",
        doc(combatants=[with_(HERO, defend='"hasty_up_to:two"'), WOLF]),
        "(index 0).defend",
        ('"hasty_up_to:N"', '"unless_hasty"'),
    ),
    (
        "unknown-role",
        doc(combatants=[with_(HERO, role='"villain"'), WOLF]),
        "(index 0).role",
        ('"hero", "secondary"',),
    ),
    (
        "weakness-on-secondary",
        doc(combatants=[HERO, with_(WOLF, weakness="2")]),
        "(index 1).weakness",
        ('role = "hero"',),
    ),
    (
        "duplicate-name",
        doc(combatants=[HERO, with_(HERO, side='"wolves"')]),
        "(index 1).name",
        ("duplicate combatant name 'Hero'", "must be unique"),
    ),
    (
        "duplicate-after-count",
        doc(combatants=[with_(HERO, name='"Wolf 2"'), WOLF]),
        "(index 1).name",
        ("duplicate combatant name 'Wolf 2'", "must be unique after count expansion"),
    ),
    (
        "empty-name",
        doc(combatants=[with_(HERO, name='" "'), WOLF]),
        "combatant[0].name",
        ("must not be empty",),
    ),
    (
        "name-not-string",
        doc(combatants=[with_(HERO, name="5"), WOLF]),
        "combatant[0].name",
        ("expected a string",),
    ),
    (
        "one-side",
        doc(combatants=[HERO, with_(WOLF, side='"party"')]),
        "combatant",
        ("at least two sides", "only side 'party'"),
    ),
    (
        "no-combatants",
        doc(combatants=[]),
        "combatant",
        ("two sides",),
    ),
    (
        "combatant-not-array",
        doc(combatants=[]) + '\n[combatant]\nname = "Hero"\n',
        "combatant",
        ("[[combatant]] entries",),
    ),
    (
        "rules-not-table",
        doc(top="rules = 3"),
        "rules",
        ("expected a table",),
    ),
    (
        "target-ally",
        doc(combatants=[HERO, with_(HERO, name='"Astrid"', target='"Hero"'), WOLF]),
        "(index 1).target",
        ("not an opponent", "ally", "\"random\" or one of 'Wolf 1', 'Wolf 2', 'Wolf'"),
    ),
    (
        "target-unknown",
        doc(combatants=[with_(HERO, target='"Wolff"'), WOLF]),
        "(index 0).target",
        ("not an opponent", "did you mean 'Wolf", '"random" or one of'),
    ),
    (
        "target-own-group",
        doc(combatants=[HERO, with_(WOLF, target='"Wolf"')]),
        "(index 1).target",
        ("its own side", "\"random\" or one of 'Hero'"),
    ),
    (
        "perception-group-without-commander",
        doc(PERCEPTION, rules={"mode": '"group"'}, combatants=[P_HERO, P_WOLF]),
        "rules.group_stat",
        ("no commander", 'group_stat = "highest"'),
    ),
    (
        "perception-two-commanders",
        doc(
            PERCEPTION,
            combatants=[
                with_(P_HERO, commander="true"),
                with_(P_HERO, name='"Astrid"', commander="true"),
                P_WOLF,
            ],
        ),
        "(index 1).commander",
        ("at most one per side",),
    ),
    (
        "vtm-rating-and-parts",
        doc(VTM, combatants=[with_(V_HERO, rating="5"), V_FOE]),
        "(index 0).rating",
        ("either rating or dexterity and wits",),
    ),
    (
        "vtm-missing-wits",
        doc(VTM, combatants=[with_(V_HERO, wits=None), V_FOE]),
        "(index 0).wits",
        ("missing", "dexterity and wits"),
    ),
]


# R7a: a guard that names the allies it protects (docs/rules-decisions.md, R7a)
MIRA = {"name": '"Mira"', "side": '"party"', "readiness": "2"}
HERO_PATH = 'combatant "Hero" (index 0).guard'
BAD_SCENARIOS += [
    (
        "r7a-unknown-ally",
        doc(combatants=[with_(HERO, guard='["Mra"]'), MIRA, WOLF]),
        HERO_PATH,
        ("'Mra' is not a combatant or group", "did you mean 'Mira'?", "allies of Hero: 'Mira'"),
    ),
    (
        "r7a-opponent",
        doc(combatants=[with_(HERO, guard='["Mira", "Wolf"]'), MIRA, WOLF]),
        HERO_PATH,
        ("'Wolf' is not an ally of Hero", "side 'wolves'"),
    ),
    (
        "r7a-itself",
        doc(combatants=[with_(HERO, guard='["Hero"]'), MIRA, WOLF]),
        HERO_PATH,
        ("'Hero' is itself", "R7 already lets"),
    ),
    (
        "r7a-empty",
        doc(combatants=[with_(HERO, guard="[]"), MIRA, WOLF]),
        HERO_PATH,
        ("an empty list names nobody",),
    ),
    (
        "r7a-twice",
        doc(combatants=[with_(HERO, guard='["Mira", "Mira"]'), MIRA, WOLF]),
        HERO_PATH,
        ("'Mira' is listed twice",),
    ),
    (
        "r7a-mode-without-list",
        doc(combatants=[with_(HERO, guard='"always"', guard_mode='"always"'), MIRA, WOLF]),
        'combatant "Hero" (index 0).guard_mode',
        ("goes with a list of the allies",),
    ),
    (
        "r7a-own-copy",
        doc(combatants=[HERO, with_(WOLF, guard='["Wolf 2"]')]),
        'combatant "Wolf" (index 1).guard',
        ("'Wolf 2' is one of its own copies",),
    ),
]


def write(tmp_path: Path, text: str, name: str = "fight.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def assert_one_error_line(err: str, *fragments: str) -> str:
    assert err.endswith("\n") and err.count("\n") == 1, f"not exactly one line: {err!r}"
    assert err.startswith("simkit: error: "), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, f"{fragment!r} not in {err!r}"
    return err


@pytest.mark.parametrize(
    ("text", "path", "fragments"),
    [case[1:] for case in BAD_SCENARIOS],
    ids=[case[0] for case in BAD_SCENARIOS],
)
def test_bad_scenario_is_one_line_and_writes_nothing(tmp_path, capsys, text, path, fragments):
    scenario = write(tmp_path, text)
    out = tmp_path / "out"
    status = main(["run", str(scenario), "--rounds", "100", "--out", str(out)])
    captured = capsys.readouterr()
    assert status == 2
    assert captured.out == ""
    assert_one_error_line(captured.err, f"{scenario}: ", path, *fragments)
    assert not out.exists()


@pytest.mark.parametrize(("text", "path", "fragments"), [case[1:] for case in BAD_SCENARIOS[:6]])
def test_validate_reports_the_same_error(tmp_path, capsys, text, path, fragments):
    scenario = write(tmp_path, text)
    assert main(["validate", str(scenario)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert_one_error_line(captured.err, str(scenario), path, *fragments)


def test_missing_file(tmp_path, capsys):
    missing = tmp_path / "nowhere.toml"
    out = tmp_path / "out"
    assert main(["run", str(missing), "--out", str(out)]) == 2
    assert_one_error_line(capsys.readouterr().err, str(missing), "cannot read file")
    assert not out.exists()


def test_directory_instead_of_file(tmp_path, capsys):
    assert main(["validate", str(tmp_path)]) == 2
    assert_one_error_line(capsys.readouterr().err, str(tmp_path), "not a regular file")


def test_not_utf8(tmp_path, capsys):
    scenario = tmp_path / "binary.toml"
    scenario.write_bytes(b"\xff\xfe[scenario]\n")
    assert main(["validate", str(scenario)]) == 2
    assert_one_error_line(capsys.readouterr().err, str(scenario), "not a UTF-8 text file")


def test_newline_in_a_name_is_rejected_and_each_problem_gets_a_line(tmp_path, capsys):
    odd = with_(HERO, name='"""Hero\nthe Bold"""')
    scenario = write(tmp_path, doc(combatants=[odd, with_(odd, side='"wolves"')]))
    assert main(["validate", str(scenario)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == f"simkit: error: {scenario}: 2 problems"
    assert len(lines) == 3
    for k, line in enumerate(lines[1:]):
        assert line.startswith(f"  combatant[{k}].name: ")
        assert "'Hero\\nthe Bold' contains control characters" in line


@pytest.mark.parametrize(
    ("option", "value", "allowed"),
    [
        ("--rounds", "0", "an integer from 1 to 1,000,000,000,000"),
        ("--rounds", "abc", "an integer from 1 to 1,000,000,000,000"),
        ("--rounds", "-5", "an integer from 1 to 1,000,000,000,000"),
        ("--rounds", "1.5", "an integer from 1 to 1,000,000,000,000"),
        ("--workers", "0", "an integer from 1 to 256"),
        ("--workers", "two", "an integer from 1 to 256"),
        ("--seed", "-1", "an integer from 0 to 9,223,372,036,854,775,807"),
        ("--seed", "x", "an integer from 0 to 9,223,372,036,854,775,807"),
    ],
)
def test_bad_cli_value(tmp_path, capsys, option, value, allowed):
    scenario = write(tmp_path, doc())
    out = tmp_path / "out"
    status = main(["run", str(scenario), option, value, "--out", str(out)])
    captured = capsys.readouterr()
    assert status == 2
    assert captured.out == ""
    assert_one_error_line(
        captured.err, f"simkit: error: {option}: expected {allowed}, got '{value}'"
    )
    assert not out.exists()


@pytest.mark.parametrize(
    ("argv", "fragments"),
    [
        (["rnu"], ("invalid choice: 'rnu'", "'run', 'validate',")),
        (["run"], ("required: SCENARIO",)),
        (["run", "a.toml", "--frobnicate"], ("unrecognized arguments: --frobnicate",)),
        (["run", "a.toml", "--rounds"], ("--rounds: expected one argument",)),
        (["bench", "--rounds", "0"], ("--rounds: expected an integer from 1 to", "got '0'")),
    ],
)
def test_bad_command_line_is_one_line_without_usage(capsys, argv, fragments):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "usage:" not in captured.err
    assert_one_error_line(captured.err, *fragments)


def test_out_that_is_a_file(tmp_path, capsys):
    scenario = write(tmp_path, doc())
    taken = tmp_path / "taken"
    taken.write_text("keep me")
    assert main(["run", str(scenario), "--rounds", "100", "--out", str(taken)]) == 2
    assert_one_error_line(capsys.readouterr().err, "--out", "not a directory")
    assert taken.read_text() == "keep me"


@pytest.mark.parametrize(
    ("case", "extra"),
    [
        ("readiness-bool", ["--rounds", "100"]),
        ("unknown-combatant-key", ["--rounds", "100"]),
        ("toml-syntax", []),
        ("target-ally", []),
        (None, ["--seed", "-1"]),
    ],
)
def test_end_to_end_no_traceback(tmp_path, case, extra):
    """``python -m simkit``: status 2, one stderr line, no traceback, nothing written."""
    text = dict((c[0], c[1]) for c in BAD_SCENARIOS)[case] if case else doc()
    scenario = write(tmp_path, text)
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "simkit", "run", str(scenario), *extra, "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert_one_error_line(proc.stderr, "simkit: error: ")
    assert not out.exists()


# --- what a valid file turns into -------------------------------------------------


def test_defaults_are_filled_in(tmp_path):
    s = load_scenario(write(tmp_path, doc()))
    assert dict(s.rules) == {
        "order": "dynamic",
        "prep": "one_die",
        "holder_actions": "held_dice",
        "release": "higher",
    }
    hero = s.combatants[0]
    assert dict(hero.params) == {
        "target": "random",
        "attack_share": 1.0,
        "readiness": 3,
        "advantage": 0,
        "role": "hero",
        "weakness": 1,
        "surprised": False,
        "opening": False,
        "hold": "never",
        "defend": "always",
        "guard": "never",
        "hit_chance": 1.0,
        "guard_mode": "backup",
    }
    assert (s.rounds, s.seed, s.system) == (1000, 7, "readiness")


def test_scenario_defaults_and_name_from_file(tmp_path):
    s = load_scenario(write(tmp_path, doc(with_(SCENARIO, name=None, rounds=None, seed=None))))
    assert s.name == "fight"
    assert s.rounds == 1_000_000
    assert s.seed == 0


def test_count_expansion(tmp_path):
    s = load_scenario(write(tmp_path, doc(combatants=[HERO, with_(WOLF, count="3")])))
    assert s.names == ("Hero", "Wolf 1", "Wolf 2", "Wolf 3")
    assert [c.group for c in s.combatants] == ["Hero", "Wolf", "Wolf", "Wolf"]
    assert {c.side for c in s.combatants[1:]} == {"wolves"}
    assert all(c["role"] == "secondary" and c["readiness"] == 2 for c in s.combatants[1:])
    assert s.sides == ("party", "wolves")


def test_count_one_keeps_the_name(tmp_path):
    s = load_scenario(write(tmp_path, doc(combatants=[HERO, with_(WOLF, count="1")])))
    assert s.names == ("Hero", "Wolf")


def test_target_by_group_name(tmp_path):
    text = doc(combatants=[with_(HERO, target='"Wolf"'), with_(WOLF, count="3")])
    s = load_scenario(write(tmp_path, text))
    assert s.targets(0) == (1, 2, 3)


def test_target_by_single_name(tmp_path):
    text = doc(combatants=[HERO, with_(WOLF, target='"Hero"')])
    s = load_scenario(write(tmp_path, text))
    assert s.targets(1) == (0,) and s.targets(2) == (0,)


def test_integer_attack_share_is_accepted_as_float(tmp_path):
    text = doc(combatants=[with_(HERO, attack_share="1"), with_(WOLF, attack_share="0")])
    s = load_scenario(write(tmp_path, text))
    assert s.combatants[0]["attack_share"] == 1.0
    assert isinstance(s.combatants[0]["attack_share"], float)
    assert s.combatants[1]["attack_share"] == 0.0


def test_bool_is_not_an_integer(tmp_path):
    text = doc(combatants=[with_(HERO, readiness="true"), WOLF])
    with pytest.raises(ScenarioError, match=r'combatant "Hero" \(index 0\)\.readiness: .*got bool'):
        load_scenario(write(tmp_path, text))


def test_policies_and_variants_accepted(tmp_path):
    hero = with_(HERO, hold='"until_enemy_acts"', defend='"hasty_up_to:2"', guard="true")
    text = doc(
        rules={"order": '"chain_unbroken"', "prep": '"lowest"', "release": '"any"'},
        combatants=[hero, WOLF],
    )
    s = load_scenario(write(tmp_path, text))
    assert dict(s.rules) == {
        "order": "chain_unbroken",
        "prep": "lowest",
        "holder_actions": "held_dice",
        "release": "any",
    }
    assert s.combatants[0]["defend"] == "hasty_up_to:2"
    assert s.combatants[0]["guard"] == "backup"  # true is the old spelling of "backup"


def test_validate_prints_one_ok_line(tmp_path, capsys):
    scenario = write(tmp_path, doc(combatants=[HERO, with_(WOLF, count="3")]))
    assert main(["validate", str(scenario)]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out.count("\n") == 1
    line = captured.out
    assert line.startswith(f"OK {scenario}: ")
    for fragment in (
        '"Test fight"',
        "system readiness",
        "4 combatants on 2 sides",
        "party 1, wolves 3",
        'order="dynamic"',
        'prep="one_die"',
    ):
        assert fragment in line


# --- any document: a Scenario or a ScenarioError, nothing else ---------------------------
EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "scenarios").glob("*.toml"))
JUNK = hs.recursive(
    hs.none()
    | hs.booleans()
    | hs.integers(-(2**70), 2**70)
    | hs.floats(allow_nan=True, allow_infinity=True)
    | hs.text(max_size=12)
    | hs.sampled_from(["", "random", "never", "always", "hasty_up_to:2", "C0", "side0"]),
    lambda inner: (
        hs.lists(inner, max_size=3) | hs.dictionaries(hs.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


@hs.composite
def damaged_documents(draw):
    """An example scenario file's document with a few values replaced by anything TOML
    (or a caller) could give: wrong types, out of range, unknown keys, removed keys."""
    path = draw(hs.sampled_from(EXAMPLES))
    data = tomllib.loads(path.read_text())
    for _ in range(draw(hs.integers(1, 4))):
        table = draw(hs.sampled_from(["scenario", "rules", "combatant", "top"]))
        if table == "top":
            target = data
        elif table == "combatant":
            if not isinstance(data.get("combatant"), list) or not data["combatant"]:
                continue
            target = draw(hs.sampled_from(data["combatant"]))
        else:
            target = data.setdefault(table, {})
        if not isinstance(target, dict):
            continue
        keys = sorted(target) + ["unknown_key"]
        key = draw(hs.sampled_from(keys))
        if draw(hs.booleans()) and key in target:
            del target[key]
        else:
            target[key] = draw(JUNK)
    return path.name, data


@settings(max_examples=300)
@given(case=damaged_documents())
def test_validation_raises_only_scenario_errors_on_any_document(case):
    """Validation of any document gives a Scenario or a ScenarioError naming the source
    (never another exception: no KeyError, TypeError, OverflowError ... from inside)."""
    name, data = case
    try:
        scenario = scenario_from_dict(data, source=name)
    except ScenarioError as exc:
        assert str(exc).startswith(name), str(exc)
    else:
        assert len(scenario.combatants) >= 2


def test_r7a_named_guards_load_and_edit(tmp_path):
    """A list of allies loads as a tuple; its own count group is allowed (the copies guard
    each other); --set guard = "never" drops guard_mode with the list."""
    from simkit.scenario import apply_set

    text = doc(
        combatants=[
            with_(HERO, guard='["Mira"]', guard_mode='"always"'),
            MIRA,
            with_(WOLF, guard='["Wolf"]'),
        ]
    )
    s = load_scenario(write(tmp_path, text))
    assert s.combatants[0]["guard"] == ("Mira",) and s.combatants[0]["guard_mode"] == "always"
    assert s.combatants[2]["guard"] == ("Wolf",) and s.combatants[2]["guard_mode"] == "backup"
    never = apply_set(s, ["Hero.guard=never"])
    assert never.combatants[0]["guard"] == "never"
    assert never.combatants[0]["guard_mode"] == "backup"
    back = apply_set(s, {"Hero.guard": ["Mira"]})
    assert back.combatants[0]["guard"] == ("Mira",)


def test_the_number_of_varied_fields_is_checked_where_the_specs_are_read():
    """tune and report vary at most two fields: ``parse_vary``'s ``most`` is the one check
    (api.read_grid and the report's plan both call it), with the same words for both."""
    from simkit.analysis.report_runs import plan
    from simkit.api import read_grid
    from simkit.scenario import parse_vary

    scenario = load_scenario(Path(__file__).parent.parent / "scenarios" / "party_vs_wolves.toml")
    three = ["Wolf.readiness=1,2", "Gunnar.readiness=1,2", "Leif.readiness=1,2"]
    assert len(parse_vary(scenario, three)) == 3  # no bound: a sweep takes three
    assert len(parse_vary(scenario, three[:2], most=2)) == 2
    with pytest.raises(ScenarioError, match=r"^vary: a report varies one or two fields, got 3$"):
        parse_vary(scenario, three, most=2, what="a report")
    with pytest.raises(ScenarioError, match=r"^vary: tune varies one or two fields, got 3$"):
        read_grid(scenario, three, most=2, what="tune")
    with pytest.raises(ScenarioError, match=r"^--vary: a report varies one or two fields, got 3$"):
        plan(scenario, 1000, three, None, ("--vary", "--target"))
