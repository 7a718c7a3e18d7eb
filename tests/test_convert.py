"""One fight in three systems: ``simkit convert``, ``compare`` of N files side by side,
``--metrics acts_before`` and the dominance summary (README, "One fight in three
systems"; docs/rules-decisions.md, "One fight in three systems")."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import simkit
from simkit import api, systems
from simkit.cli import main
from simkit.output.render import render
from simkit.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted((ROOT / "scenarios").glob("*.toml"))
SYSTEMS = ("readiness", "vtm", "perception")
ROUNDS = 2000


def _stats(scenario):
    system = systems.get(scenario.system)
    return [system.stat(c.params) for c in scenario.combatants]


# --------------------------------------------------------------------------- convert
@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
@pytest.mark.parametrize("to", SYSTEMS)
def test_every_example_converts_to_every_other_system_and_validates(path, to, tmp_path):
    scenario = load_scenario(path)
    if scenario.system == to:
        with pytest.raises(api.ArgumentError, match=r"^to: .* is a \w+ scenario already"):
            api.convert(scenario, to)
        return
    conversion = api.convert(scenario, to)
    assert conversion.scenario.system == to
    written = tmp_path / "converted.toml"
    written.write_text(conversion.text)
    again = load_scenario(written)  # the written file validates
    assert again.names == scenario.names
    assert [c.side for c in again.combatants] == [c.side for c in scenario.combatants]
    assert [c["target"] for c in again.combatants] == [c["target"] for c in scenario.combatants]
    assert (again.rounds, again.seed) == (scenario.rounds, scenario.seed)
    for note in conversion.notes:  # every note is in the file as a comment
        assert f"#   {note}" in conversion.text


@pytest.mark.parametrize(
    ("source", "to", "expected"),
    [
        ("readiness", "vtm", "rating=readiness+2"),
        ("readiness", "perception", "perception=readiness+2"),
        ("vtm", "readiness", "readiness=rating-2"),
        ("vtm", "perception", "perception=rating"),
        ("perception", "readiness", "readiness=perception-2"),
        ("perception", "vtm", "rating=perception"),
    ],
)
def test_the_default_mappings(source, to, expected):
    from simkit.scenario.convert import default_mapping

    assert default_mapping(source, to) == expected


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_round_trips_give_back_the_main_stat(path):
    """readiness -> vtm -> readiness and d10 -> d10 -> d10 under the default mapping."""
    scenario = load_scenario(path)
    via = {"readiness": "vtm", "vtm": "perception", "perception": "vtm"}[scenario.system]
    there = api.convert(scenario, via).scenario
    back = api.convert(there, scenario.system).scenario
    assert _stats(back) == _stats(scenario)
    assert back.names == scenario.names


def test_readiness_to_vtm_keeps_relative_speed_exactly_one_step_per_die():
    scenario = load_scenario(ROOT / "scenarios/boss_fight.toml")
    vtm = api.convert(scenario, "vtm").scenario
    assert _stats(vtm) == [s + 2 for s in _stats(scenario)]
    assert [c["rating"] for c in vtm.combatants] == [7, 4, 4, 5, 5, 5, 5]


def test_policies_map_by_meaning_and_the_rest_is_listed():
    conversion = api.convert(ROOT / "scenarios/party_vs_wolves.toml", "vtm")
    assert conversion.notes == (
        'hold = "until_attacked" (R5): no counterpart in vtm (Gunnar)',
        'guard = "backup" (R7): no counterpart in vtm (Astrid)',
        'defend = "hasty_up_to:2" (R7): no counterpart in vtm (Leif)',
        'role = "secondary" (R8): no field of vtm means this (Wolf)',
    )
    ambush = api.convert(ROOT / "scenarios/ambush.toml", "vtm").scenario
    ulf = ambush.combatants[ambush.index("Ulf")]
    assert ulf["delay"] == "until_enemy_acts"  # R5 hold until_enemy_acts ~ V4 delay
    assert [c["abort"] for c in ambush.combatants] == ["never"] * 7  # defaults stay defaults
    brawl = api.convert(ROOT / "scenarios/vtm_three_way_brawl.toml", "readiness")
    lasombra = brawl.scenario.combatants[brawl.scenario.index("Lasombra")]
    assert lasombra["hold"] == "until_enemy_acts"
    assert 'rules.tie = "random" (V2): no counterpart in readiness' in brawl.notes
    perception = api.convert(ROOT / "scenarios/vtm_three_way_brawl.toml", "perception")
    assert perception.scenario.rules["tie"] == "random"  # V2 tie ~ P1 tie
    assert 'abort = "always" (V5): no counterpart in perception (Sheriff)' in perception.notes


def test_a_long_name_stays_within_the_limit(tmp_path):
    text = (ROOT / "scenarios/vtm_duel.toml").read_text()
    long = tmp_path / "long.toml"
    long.write_text(text.replace('name = "Duel: rating 5 vs rating 3"', f'name = "{"x" * 100}"'))
    conversion = api.convert(long, "perception")
    assert len(conversion.scenario.name) == 100
    assert conversion.scenario.name.endswith("x… (perception)")


def test_count_groups_stay_groups():
    conversion = api.convert(ROOT / "scenarios/party_vs_wolves.toml", "perception")
    assert conversion.text.count("[[combatant]]") == 4
    assert 'name = "Wolf"\nside = "wolves"\ncount = 3\nperception = 4\n' in conversion.text


def test_mapping_overrides_the_default_and_sets_more_fields():
    path = ROOT / "scenarios/boss_fight.toml"
    doubled = api.convert(path, "vtm", ["rating=readiness*2"]).scenario
    assert [c["rating"] for c in doubled.combatants] == [10, 4, 4, 6, 6, 6, 6]
    fixed = api.convert(path, "vtm", "rating=6").scenario
    assert {c["rating"] for c in fixed.combatants} == {6}
    halves = api.convert(ROOT / "scenarios/vtm_duel.toml", "readiness", "readiness=rating*0.5")
    assert [c["readiness"] for c in halves.scenario.combatants] == [3, 2]  # 2.5 -> 3, 1.5 -> 2
    more = api.convert(path, "vtm", ["actions=readiness", "rating=readiness+1"])
    assert [c["actions"] for c in more.scenario.combatants] == [5, 2, 2, 3, 3, 3, 3]
    assert [c["rating"] for c in more.scenario.combatants] == [6, 3, 3, 4, 4, 4, 4]
    assert more.mapping == ("rating=readiness+1", "actions=readiness")


def test_a_value_outside_the_range_goes_to_the_bound_and_is_listed():
    conversion = api.convert(ROOT / "scenarios/vtm_duel.toml", "readiness")  # 5-2, 3-2
    assert [c["readiness"] for c in conversion.scenario.combatants] == [3, 1]
    low = api.convert(ROOT / "scenarios/vtm_duel.toml", "readiness", "readiness=rating-4")
    assert [c["readiness"] for c in low.scenario.combatants] == [1, 1]
    assert low.notes == (
        "readiness=rating-4 gives -1, outside readiness's an integer from 1 to 20: written "
        "readiness = 1 (Challenger)",
    )


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ("rating", "expected FIELD=SOURCE+K"),
        ("rating=", "expected FIELD=SOURCE+K"),
        ("=readiness", "expected FIELD=SOURCE+K"),
        ("ratin=readiness", "'ratin' is no integer field of vtm (did you mean 'rating'?)"),
        ("dexterity=readiness", "'dexterity' is no integer field of vtm (part of rating"),
        ("rating=readines+2", "'readines' is no integer field of readiness"),
        ("rating=readiness+x", "K of 'rating=readiness+x': expected an integer"),
        ("rating=readiness+\u0663", "expected an integer"),
        ("rating=readiness+-2", "has a sign"),
        ("rating=readiness*1e999", "expected a finite number"),
        ("rating=" + "9" * 300, "307 characters; a mapping is at most 200"),
        ("rating=\uff15", "is no integer field of readiness"),
    ],
)
def test_bad_map_is_one_error_line_naming_the_option(mapping, message, tmp_path, capsys):
    out = tmp_path / "x.toml"
    path = str(ROOT / "scenarios/party_vs_wolves.toml")
    status = main(["convert", path, "--to", "vtm", "--map", mapping, "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("simkit: error: --map: ")
    assert err.count("\n") == 1
    assert message in err
    assert not out.exists()


def test_bad_to_and_bad_out(tmp_path, capsys):
    path = str(ROOT / "scenarios/party_vs_wolves.toml")
    assert main(["convert", path, "--to", "vtmm"]) == 2
    assert "simkit: error: --to: no system 'vtmm' (did you mean 'vtm'?)" in capsys.readouterr().err
    assert main(["convert", path, "--to", "readiness"]) == 2
    assert "is a readiness scenario already" in capsys.readouterr().err
    assert main(["convert", path, "--to", "vtm", "--out", str(tmp_path)]) == 2
    assert "simkit: error: --out: " in capsys.readouterr().err
    assert main(["convert", path, "--to", "vtm", "--out", str(tmp_path / "no/x.toml")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_cli_writes_the_file_or_prints_it(tmp_path, capsys):
    path = str(ROOT / "scenarios/party_vs_wolves.toml")
    assert main(["convert", path, "--to", "perception"]) == 0
    captured = capsys.readouterr()
    assert captured.out == api.convert(path, "perception").text
    assert "stat mapping: perception=readiness+2" in captured.err
    assert 'not carried over: guard = "backup" (R7)' in captured.err
    out = tmp_path / "pv.toml"
    assert main(["convert", path, "--to", "vtm", "--out", str(out), "--map", "rating=3"]) == 0
    assert {c["rating"] for c in load_scenario(out).combatants} == {3}


def test_the_python_api_is_reachable_from_the_package():
    conversion = simkit.convert(ROOT / "scenarios/duel_of_equals.toml", to="vtm")
    assert isinstance(conversion, simkit.Conversion)
    assert conversion.notes == ()
    assert "Everything the source gives has a counterpart in vtm." in conversion.text


# --------------------------------------------------------------------------- N files
@pytest.fixture(scope="module")
def three(tmp_path_factory):
    """party_vs_wolves, a readiness variant of it (paired), and its vtm conversion."""
    where = tmp_path_factory.mktemp("three")
    source = ROOT / "scenarios/party_vs_wolves.toml"
    variant = where / "variant.toml"
    variant.write_text(
        source.read_text()
        .replace('hold = "until_attacked"', 'hold = "never"')
        .replace('name = "Party vs three wolves"', 'name = "Gunnar never holds"')
    )
    vtm = where / "vtm.toml"
    vtm.write_text(api.convert(source, "vtm").text)
    side = api.compare(source, variant, vtm, rounds=ROUNDS, rng=11)
    return source, variant, vtm, side


def test_side_by_side_shape_and_pairing(three):
    source, variant, vtm, side = three
    assert isinstance(side, api.SideBySide)
    assert side.paired == (True, True, False)
    assert side.labels == (
        "Party vs three wolves",
        "Gunnar never holds",
        "Party vs three wolves (vtm)",
    )
    t = side.table
    for k, result in enumerate(side.results):
        mine = t[t.scenario == side.labels[k]]
        assert len(mine) == len(result.rows)  # one row per (who, metric) of that run
        assert set(mine.paired) == {side.paired[k]}
    a = t[t.scenario == side.labels[0]]
    assert (a.difference == 0).all() and (a.se_difference == 0).all()


def test_paired_rows_equal_the_two_file_comparison(three):
    source, variant, vtm, side = three
    pair = api.compare(source, variant, rounds=ROUNDS, rng=11)
    t = side.table
    b = t[t.scenario == side.labels[1]].set_index(["combatant", "metric"])
    for r in pair.table.itertuples(index=False):
        row = b.loc[(r.combatant, r.metric)]
        assert row["mean"] == r.mean_b
        assert row["difference"] == r.difference
        if not math.isnan(r.se_paired):
            assert row["se_difference"] == pytest.approx(r.se_paired, rel=1e-12, abs=1e-15)
            assert row["ci_low_difference"] == pytest.approx(r.ci_low, rel=1e-12, abs=1e-15)


def test_unpaired_rows_use_independent_errors(three):
    side = three[3]
    t = side.table
    a = t[t.scenario == side.labels[0]].set_index(["combatant", "metric"])
    c = t[t.scenario == side.labels[2]]
    checked = 0
    for r in c.itertuples(index=False):
        if (r.combatant, r.metric) in a.index:
            ra = a.loc[(r.combatant, r.metric)]
            assert r.difference == r.mean - ra["mean"]
            assert r.se_difference == math.hypot(r.se, ra["se"])
            assert r.ci_high_difference == r.difference + 1.959963984540054 * r.se_difference
            checked += 1
    assert checked > 20


def test_side_by_side_renders_in_every_format(three):
    side = three[3]
    table = render("side_by_side", side)
    assert "B: Gunnar never holds (readiness), paired with A" in table
    assert "C: Party vs three wolves (vtm), unpaired (another system)" in table
    assert "C − A unpaired" in table and "B − A" in table
    assert "Dominance: how often the fastest combatant acts before each other one" in table
    doc = json.loads(render("side_by_side", side, "json", metrics=["first_action"]))
    assert doc["kind"] == "side_by_side"
    assert doc["parameters"]["paired"] == [True, True, False]
    assert {r["scenario"] for r in doc["rows"]} == set(side.labels)
    assert {r["metric"] for r in doc["rows"]} == {"first_action"}
    assert len(doc["rows"]) == 3 * 6
    csv = render("side_by_side", side, "csv", metrics=["acts_before"])
    assert csv.splitlines()[0].startswith("combatant,metric,scenario,system,paired,mean")
    assert ",acts_before.Wolf 1," in csv
    assert side.format_table() == table
    md = render("side_by_side", side, "md")
    assert md.startswith("| combatant | metric | scenario |")
    # by default the metrics every scenario has: vtm has no hasty_defenses, readiness has
    assert "hasty_defenses" in set(side.table.metric)
    assert ",hasty_defenses," not in render("side_by_side", side, "csv")
    assert ",hasty_defenses," in render("side_by_side", side, "csv", all_metrics=True)


def test_cli_compare_of_three_files(three, capsys):
    source, variant, vtm, _ = three
    argv = ["compare", str(source), str(variant), str(vtm), "--rounds", str(ROUNDS)]
    assert main([*argv, "--seed", "11", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["parameters"]["scenarios"] == list(three[3].labels)
    assert main([*argv, "--set", "Gunnar.hold=never"]) == 2
    assert "B and --set both given" in capsys.readouterr().err
    assert main([*argv, "--metrics", "no_such"]) == 2
    assert capsys.readouterr().err.startswith("simkit: error: --metrics: no metric 'no_such'")


# --------------------------------------------------------------------------- dominance
def test_dominance_equals_acts_before():
    result = api.run(ROOT / "scenarios/vtm_gangrel_ambush.toml", rounds=ROUNDS, rng=3)
    d = api.dominance(result)
    assert d.fastest == ("Gangrel",) and not d.tied and d.stat == 7
    matrix = result.acts_before()
    assert [r[1] for r in d.rows] == [f"Ghoul {k}" for k in range(1, 6)] + ["Handler"]
    for fastest, other, _, mean, se, low, high in d.rows:
        assert mean == matrix.loc[fastest, other]
        e = result.estimate(fastest, f"acts_before.{other}")
        assert (se, low, high) == (e.se, e.ci_low, e.ci_high)
    assert [r[2] for r in d.rows] == [4, 4, 4, 4, 4, 6]
    assert "fastest: Gangrel (rating 7)" in d.format_table()


def test_dominance_says_so_when_the_fastest_are_tied(capsys):
    path = str(ROOT / "scenarios/duel_of_equals.toml")
    assert main(["run", path, "--rounds", str(ROUNDS), "--seed", "5", "--dominance"]) == 0
    out = capsys.readouterr().out
    assert "fastest: Sigrid, Ragnar (readiness 3, tied)" in out
    result = api.run(path, rounds=ROUNDS, rng=5)
    assert (
        main(
            ["run", path, "--rounds", str(ROUNDS), "--seed", "5", "--dominance", "--format", "json"]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["parameters"]["tied"] is True
    got = {(r["fastest"], r["other"]): r["mean"] for r in doc["rows"]}
    assert got == {
        ("Sigrid", "Ragnar"): result.acts_before().loc["Sigrid", "Ragnar"],
        ("Ragnar", "Sigrid"): result.acts_before().loc["Ragnar", "Sigrid"],
    }


def test_metrics_acts_before_is_reachable_from_the_cli(capsys):
    path = str(ROOT / "scenarios/vtm_duel.toml")
    base = ["run", path, "--rounds", str(ROUNDS), "--seed", "5"]
    assert main([*base, "--metrics", "acts_before,actions"]) == 0
    out = capsys.readouterr().out
    assert "Acts before Challenger %" in out and "Acts before Duelist %" in out
    assert main([*base, "--metrics", "acts_before", "--format", "csv"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert [r.split(",")[:2] for r in rows[1:]] == [
        ["Duelist", "acts_before.Challenger"],
        ["Challenger", "acts_before.Duelist"],
    ]
    assert main([*base, "--metrics", "acts_befor"]) == 2
    err = capsys.readouterr().err
    assert "no metric 'acts_befor' (did you mean 'acts_before'?)" in err
    compare = ["compare", path, "--set", "Duelist.rating=6", "--rounds", str(ROUNDS)]
    assert main([*compare, "--metrics", "acts_before", "--all", "--format", "csv"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert [r.split(",")[:2] for r in rows[1:]] == [
        ["Duelist", "acts_before.Challenger"],
        ["Challenger", "acts_before.Duelist"],
    ]


# --------------------------------------------------------------------------- the mapping
def _first_turn(n: int, m: int):
    """P(a pool of n d6 takes the first turn against a pool of m d6), exactly: the
    highest die, then more dice of it (T1), then the other dice high to low, a die
    beating no die (T2), then a fair coin (T3) (docs/rules.md R3)."""
    from collections import Counter
    from fractions import Fraction
    from itertools import product, zip_longest

    def pools(k):
        return Counter(tuple(sorted(p, reverse=True)) for p in product(range(1, 7), repeat=k))

    def key(p):
        rest = list(p)
        rest.remove(p[0])
        return (p[0], p.count(p[0])), rest

    wins = Fraction(0)
    for a, ca in pools(n).items():
        for b, cb in pools(m).items():
            (ha, ra), (hb, rb) = key(a), key(b)
            order = (ha > hb) - (ha < hb)
            if not order:
                for x, y in zip_longest(ra, rb, fillvalue=0):
                    if x != y:
                        order = 1 if x > y else -1
                        break
            wins += ca * cb * (1 if order > 0 else Fraction(1, 2) if order == 0 else 0)
    return wins / 6 ** (n + m)


def _d10_first(d: int):
    """P(d10 + s + d acts before d10' + s), d > 0: ties go to the higher stat (V2, P1)."""
    from fractions import Fraction

    return Fraction(sum(1 for x in range(1, 11) for y in range(1, 11) if x + d >= y), 100)


def test_one_die_is_worth_about_one_point_of_a_d10_stat():
    """docs/rules-decisions.md, 'One fight in three systems': the numbers of its table."""
    from fractions import Fraction

    assert _first_turn(3, 2) == Fraction(641, 972)
    assert _first_turn(2, 1) == Fraction(161, 216)
    assert [_d10_first(d) for d in (1, 2, 3)] == [
        Fraction(64, 100),
        Fraction(72, 100),
        Fraction(79, 100),
    ]
    pairs = [(n, m) for n in range(2, 6) for m in range(2, n)]
    exact = {p: _first_turn(*p) for p in pairs}

    def error(points_per_die):
        return sum((exact[n, m] - _d10_first(points_per_die * (n - m))) ** 2 for n, m in pairs)

    assert error(1) < error(2) / 10
    assert max(abs(exact[p] - _d10_first(p[0] - p[1])) for p in pairs) < Fraction(5, 100)


def test_a_sweep_refuses_an_unknown_metric_before_simulating(capsys, monkeypatch):
    """(A family's name, ``acts_before``, is a metric of a sweep too:
    tests/test_run_verdict.py.)"""
    from simkit.analysis import sweep as sweep_module

    def no_run(*args, **kwargs):
        raise AssertionError("simulated before the --metrics check")

    monkeypatch.setattr(sweep_module, "sweep", no_run)
    path = str(ROOT / "scenarios/vtm_duel.toml")
    argv = ["sweep", path, "--vary", "Duelist.rating=5,6", "--metrics", "acts_befor"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("simkit: error: --metrics: no metric 'acts_befor'")
    assert "did you mean 'acts_before'" in err
