"""Sweeps: grid, common random numbers, sanity of the trends, spec errors, [sweep] tables."""

from __future__ import annotations

import importlib
import itertools
import math
from pathlib import Path

import pandas as pd
import pytest

import simkit
from simkit.analysis.result import COLUMNS
from simkit.cli import main

ROOT = Path(__file__).resolve().parents[1]
WOLVES = ROOT / "scenarios" / "party_vs_wolves.toml"
WOLF_NAMES = ["Wolf 1", "Wolf 2", "Wolf 3"]
PNG = b"\x89PNG\r\n\x1a\n"
SWEEP_MODULE = importlib.import_module("simkit.analysis.sweep")  # simkit.sweep is the function

SMALL_SCENARIO = """\
[scenario]
name = "Hero against two wolves"
system = "readiness"
rounds = 1_000_000
seed = 4

[sweep]
vary = ["Wolf.readiness=1..3"]
rounds = 20_000

[[combatant]]
name = "Hero"
side = "party"
readiness = 3
hold = "until_attacked"

[[combatant]]
name = "Wolf"
side = "wolves"
readiness = 2
role = "secondary"
count = 2
"""


@pytest.fixture(scope="module")
def grid() -> simkit.SweepResult:
    return simkit.sweep(
        WOLVES, ["Wolf.readiness=1..3", "rules.order=dynamic,chain"], rounds=20_000, rng=99
    )


def test_grid_has_every_point_and_the_tidy_columns(grid):
    assert list(grid.table.columns) == ["Wolf.readiness", "rules.order", *COLUMNS]
    assert grid.fields == ["Wolf.readiness", "rules.order"]
    expected = list(itertools.product([1, 2, 3], ["dynamic", "chain"]))
    assert [tuple(p.values()) for p in grid.points] == expected
    assert len(grid.results) == 6
    assert len(grid.table) == sum(len(r.table) for r in grid.results)
    seen = list(
        dict.fromkeys(zip(grid.table["Wolf.readiness"], grid.table["rules.order"], strict=True))
    )
    assert seen == expected
    for (readiness, order), res in zip(expected, grid.results, strict=True):
        assert res.rounds == 20_000
        assert res.scenario.rules["order"] == order
        for c in res.scenario.combatants:
            assert c["readiness"] == (readiness if c.group == "Wolf" else 3)


def test_a_point_equals_a_direct_run_with_the_same_seed(grid):
    base = simkit.load_scenario(WOLVES)
    changed = simkit.with_changes(
        base, rules={"order": "chain"}, combatants={"Wolf": {"readiness": 3}}
    )
    direct = simkit.run(changed, rounds=20_000, rng=99, workers=1)
    t = grid.table
    point = t[(t["Wolf.readiness"] == 3) & (t["rules.order"] == "chain")]
    pd.testing.assert_frame_equal(
        point[COLUMNS].reset_index(drop=True), direct.table, check_exact=True
    )
    assert grid.result(**{"Wolf.readiness": 3, "rules.order": "chain"}).table.equals(direct.table)


def test_metric_is_a_wide_table_over_the_grid(grid):
    wide = grid.metric("actions")
    assert list(wide.columns) == list(simkit.load_scenario(WOLVES).names)
    assert wide.index.names == ["Wolf.readiness", "rules.order"]
    assert wide.shape == (6, 6)
    assert wide.loc[(2, "dynamic"), "Wolf 1"] == grid.result(
        **{"Wolf.readiness": 2, "rules.order": "dynamic"}
    ).mean("Wolf 1", "actions")


def test_raising_wolf_readiness_never_lowers_the_wolves_actions():
    result = simkit.sweep(WOLVES, "Wolf.readiness=1..6", rounds=50_000, rng=5)
    t = result.table[result.table.metric == "actions"]
    for wolf in WOLF_NAMES:
        rows = t[t.combatant == wolf].sort_values("Wolf.readiness")
        mean, se = rows["mean"].to_numpy(), rows["se"].to_numpy()
        for k in range(len(mean) - 1):
            # not lower beyond noise: 5 se of the difference (as if independent: conservative)
            assert mean[k + 1] - mean[k] >= -5 * math.hypot(se[k], se[k + 1])
        # and the trend is real: readiness 6 gives clearly more actions than readiness 1
        assert mean[-1] - mean[0] > 5 * math.hypot(se[0], se[-1])
        assert rows["ci_low"].iloc[-1] > rows["ci_high"].iloc[0]


def test_vary_as_a_mapping_and_for_every_combatant():
    as_text = simkit.sweep(WOLVES, ["*.advantage=0,2"], rounds=5_000, rng=1)
    as_dict = simkit.sweep(WOLVES, {"*.advantage": [0, 2]}, rounds=5_000, rng=1)
    pd.testing.assert_frame_equal(as_text.table, as_dict.table, check_exact=True)
    for res in as_dict.results[1:]:
        assert all(c["advantage"] == 2 for c in res.scenario.combatants)
    booleans = simkit.sweep(WOLVES, {"Astrid.guard": "false,true"}, rounds=5_000, rng=1)
    assert list(booleans.table["Astrid.guard"].unique()) == ["never", "backup"]  # R7 spellings


def test_every_point_gets_the_same_seed():
    both = simkit.sweep(WOLVES, ["rules.prep=lowest,sixes"], rounds=5_000, rng=3)
    one = simkit.sweep(WOLVES, ["rules.prep=sixes"], rounds=5_000, rng=3)
    second = both.table[both.table["rules.prep"] == "sixes"].reset_index(drop=True)
    pd.testing.assert_frame_equal(second, one.table, check_exact=True)


BAD_SPECS = [
    ("Wolfe.readiness=1..3", "did you mean 'Wolf'"),
    ("Wolf.readines=1..3", "did you mean 'readiness'"),
    ("Wolf.readiness=5..1", "empty range 5..1"),
    ("Wolf.readiness=0..3", "0 is not allowed"),
    ("Wolf.readiness=19..21", "21 is not allowed"),
    ("Wolf.readiness=1..x", "cannot read 'x'"),
    ("Wolf.readiness=1,,2", "empty value"),
    ("Wolf.readiness", "expected TARGET.FIELD=VALUES"),
    ("Wolf=1..3", "expected TARGET.FIELD=VALUES"),
    ("Wolf.readiness=", "expected TARGET.FIELD=VALUES"),
    ("Wolf.hold=never,sometimes", "'sometimes' is not allowed"),
    ("Wolf.hold=1..2", "a range a..b needs an integer field"),
    ("Wolf.name=a,b", "not a field of system readiness that can be changed"),
    ("rules.order=dynamic,chian", "did you mean 'chain'"),
    ("rules.tie=random", "unknown rule 'tie'"),
    ("Wolf.readiness=2,3,2", "listed twice"),
    ("Gunnar.target=Astrid", "not an opponent"),
]


@pytest.mark.parametrize(("spec", "fragment"), BAD_SPECS)
def test_a_bad_vary_exits_2_with_one_line_and_writes_nothing(spec, fragment, tmp_path, capsys):
    out = tmp_path / "out"
    status = main(["sweep", str(WOLVES), "--vary", spec, "--rounds", "1000", "--out", str(out)])
    captured = capsys.readouterr()
    assert status == 2
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("simkit: error: --vary")
    assert spec.split("=")[0] in lines[0]
    assert fragment in lines[0]
    assert captured.out == ""
    assert not out.exists()


def test_a_bad_spec_is_caught_before_anything_runs(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("simulated although a spec was bad")

    monkeypatch.setattr(SWEEP_MODULE, "run", fail)
    with pytest.raises(simkit.ScenarioError, match=r"^vary 'Wolf.readiness=1..21': "):
        simkit.sweep(WOLVES, ["rules.order=dynamic,chain", "Wolf.readiness=1..21"])
    with pytest.raises(simkit.ScenarioError, match="grid point Gunnar.target=Astrid"):
        simkit.sweep(WOLVES, ["Gunnar.target=random,Astrid"])
    with pytest.raises(simkit.ScenarioError, match="already varied"):
        simkit.sweep(WOLVES, ["Wolf.readiness=1..2", "Wolf.readiness=3"])
    with pytest.raises(simkit.ScenarioError, match="^vary: missing, .* has nothing to vary"):
        simkit.sweep(WOLVES)


def test_a_sweep_table_in_the_file_declares_the_grid(tmp_path, capsys):
    path = tmp_path / "small.toml"
    path.write_text(SMALL_SCENARIO)
    result = simkit.sweep(path)
    assert result.fields == ["Wolf.readiness"]
    assert result.rounds == 20_000  # [sweep] rounds, not the scenario's
    assert [p["Wolf.readiness"] for p in result.points] == [1, 2, 3]
    assert result.seed == 4
    # the command line reads it too, and --vary overrides it
    assert main(["sweep", str(path), "--rounds", "2000"]) == 0
    out = capsys.readouterr().out
    assert [h.strip() for h in out.splitlines()[0].split("  ") if h.strip()] == [
        "Wolf.readiness",
        "combatant",
        "First action %",
        "Actions",
        "Attacked before acting %",
    ]
    assert "3 points x 2,000 rounds, seed 4" in out
    assert main(["sweep", str(path), "--rounds", "2000", "--vary", "Hero.readiness=2,4"]) == 0
    assert "Hero.readiness" in capsys.readouterr().out


def test_a_sweep_table_may_list_values_per_field(tmp_path):
    path = tmp_path / "table.toml"
    table = '[sweep.vary]\n"Wolf.readiness" = [1, 3]\n"rules.order" = "dynamic,chain"\n'
    old = '[sweep]\nvary = ["Wolf.readiness=1..3"]\nrounds = 20_000\n'
    assert old in SMALL_SCENARIO
    path.write_text(SMALL_SCENARIO.replace(old, table))
    result = simkit.sweep(path, rounds=2_000)
    assert [tuple(p.values()) for p in result.points] == [
        (1, "dynamic"),
        (1, "chain"),
        (3, "dynamic"),
        (3, "chain"),
    ]


@pytest.mark.parametrize(
    ("table", "fragment"),
    [
        ('vary = ["Wolf.readines=1..3"]', "sweep.vary: 'Wolf.readines=1..3'"),
        ("vary = 3", "sweep.vary: expected a list of strings"),
        (
            'varyy = ["Wolf.readiness=1..3"]',
            "sweep.varyy: unknown key 'varyy' (did you mean 'vary'?)",
        ),
        ('vary = ["Wolf.readiness=1..3"]\nrounds = 0', "sweep.rounds"),
        ('vary = ["Wolf.readiness=3..1"]', "empty range 3..1"),
    ],
)
@pytest.mark.parametrize("command", ["validate", "run", "sweep"])
def test_a_bad_sweep_table_exits_2(table, fragment, command, tmp_path, capsys):
    path = tmp_path / "bad.toml"
    path.write_text(
        SMALL_SCENARIO.replace('vary = ["Wolf.readiness=1..3"]\nrounds = 20_000', table)
    )
    out = tmp_path / "out"
    args = [command, str(path)] + ([] if command == "validate" else ["--out", str(out)])
    assert main(args) == 2
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert lines[0].startswith("simkit: error: ")
    assert all(line.startswith("  ") for line in lines[1:])
    assert fragment in err
    assert str(path) in err
    assert not out.exists()


def test_write_one_field_gives_csv_and_line_plots(tmp_path):
    result = simkit.sweep(WOLVES, ["Wolf.readiness=1..3"], rounds=5_000, rng=2)
    files = result.write(tmp_path / "out")
    names = sorted(f.name for f in files)
    assert names == [
        "sweep.csv",
        "sweep_actions.png",
        "sweep_attacked_before_acting.png",
        "sweep_first_action.png",
    ]
    # no temp files left; .simkit marks a directory simkit wrote (it may replace it)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [".simkit", *names]
    for f in files:
        if f.suffix == ".png":
            assert f.read_bytes().startswith(PNG)
    back = pd.read_csv(tmp_path / "out" / "sweep.csv", keep_default_na=False, na_values=[""])
    assert list(back.columns) == list(result.table.columns)
    assert len(back) == len(result.table)
    assert back["mean"].to_numpy() == pytest.approx(result.table["mean"].to_numpy(), rel=1e-9)


def test_write_two_fields_gives_heatmaps_and_three_only_csv(tmp_path, grid):
    files = grid.write(tmp_path / "two")
    assert {f.name for f in files} == {
        "sweep.csv",
        "sweep_first_action.png",
        "sweep_actions.png",
        "sweep_attacked_before_acting.png",
    }
    three = simkit.sweep(
        WOLVES,
        ["Wolf.readiness=1,2", "rules.order=dynamic,chain", "Gunnar.hold=never,until_attacked"],
        rounds=2_000,
        rng=1,
    )
    assert len(three.results) == 8
    assert [f.name for f in three.write(tmp_path / "three")] == ["sweep.csv"]


def test_cli_sweep_prints_a_compact_table_and_writes_files(tmp_path, capsys):
    out = tmp_path / "sweep"
    args = ["sweep", str(WOLVES), "--vary", "Wolf.readiness=2..3", "--rounds", "3000"]
    assert main([*args, "--seed", "6", "--workers", "1", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0].split()[:2] == ["Wolf.readiness", "combatant"]
    assert len(lines) == 2 + 2 * 6 + 2  # the last line, on the run, wraps at 100 columns
    assert "2 points x 3,000 rounds, seed 6" in lines[-2]
    assert (out / "sweep.csv").exists()
    assert "wrote" in captured.err
    direct = simkit.sweep(WOLVES, ["Wolf.readiness=2..3"], rounds=3000, rng=6)
    saved = pd.read_csv(out / "sweep.csv")
    assert saved["mean"].to_numpy() == pytest.approx(direct.table["mean"].to_numpy(), rel=1e-9)


def test_sweep_csv_carries_the_values_beside_the_offsets(tmp_path):
    """``--vary 'Wolf.readiness=+0..+2'``: sweep.csv keeps the offsets and gives, beside
    them, the value each combatant played with (empty where the field did not change)."""
    import io

    out = tmp_path / "sweep"
    args = ["sweep", str(WOLVES), "--vary", "Wolf.readiness=+0..+2", "--vary", "Gunnar.hold=never"]
    assert main([*args, "--rounds", "500", "--out", str(out)]) == 0
    t = pd.read_csv(out / "sweep.csv", dtype={"Wolf.readiness": str})
    columns = list(t.columns)
    assert columns[:3] == ["Wolf.readiness", "Wolf.readiness value", "Gunnar.hold"]
    wolves = t[t.combatant.str.startswith("Wolf")].drop_duplicates("Wolf.readiness")
    assert list(wolves["Wolf.readiness"]) == ["+0", "+1", "+2"]
    assert list(wolves["Wolf.readiness value"]) == [2, 3, 4]  # the wolves' readiness 2 + k
    assert t[t.combatant == "Gunnar"]["Wolf.readiness value"].isna().all()
    absolute = simkit.sweep(WOLVES, ["Wolf.readiness=2..3"], rounds=200, rng=1)
    saved = pd.read_csv(io.BytesIO(absolute.files()["sweep.csv"]))
    assert "Wolf.readiness value" not in saved.columns  # nothing to add to absolute values
