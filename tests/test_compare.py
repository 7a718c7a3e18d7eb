"""Paired comparisons: exact zeros, agreement with direct runs, paired vs unpaired errors."""

from __future__ import annotations

import importlib
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import simkit
from simkit.cli import main
from simkit.engine import seed_sequence, simulate
from simkit.metrics import estimates, t_quantile_975

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"
WOLVES = SCENARIOS / "party_vs_wolves.toml"  # Gunnar holds until attacked
COMPARE_MODULE = importlib.import_module(
    "simkit.analysis.compare"
)  # simkit.compare is the function
COLUMNS = [
    "combatant",
    "metric",
    "mean_a",
    "mean_b",
    "difference",
    "se_paired",
    "ci_low",
    "ci_high",
    "se_unpaired",
    "narrower",
]


@pytest.fixture(scope="module")
def hold() -> simkit.Comparison:
    return simkit.compare(WOLVES, set=["Gunnar.hold=never"], rounds=100_000, rng=21)


def _main_rows(table: pd.DataFrame) -> pd.DataFrame:
    return table[~table.metric.str.contains(".", regex=False)]


def test_a_scenario_against_itself_differs_by_exactly_zero():
    c = simkit.compare(WOLVES, WOLVES, rounds=20_000, rng=3)
    assert list(c.table.columns) == COLUMNS
    assert (c.table.difference == 0.0).all()
    assert (c.table.se_paired == 0.0).all()
    assert (c.table.ci_low == 0.0).all() and (c.table.ci_high == 0.0).all()
    assert (c.table.mean_a == c.table.mean_b).all()
    assert "every paired difference is exactly 0" in c.format_table()


def test_means_and_unpaired_errors_are_those_of_direct_runs(hold):
    a = simkit.run(WOLVES, rounds=100_000, rng=21)
    changed = simkit.with_changes(a.scenario, combatants={"Gunnar": {"hold": "never"}})
    b = simkit.run(changed, rounds=100_000, rng=21)
    t = hold.table
    assert len(t) == len(a.table)
    assert list(zip(t.combatant, t.metric, strict=True)) == list(
        zip(a.table.combatant, a.table.metric, strict=True)
    )
    # identical numbers: the same rounds, the same dice
    np.testing.assert_array_equal(t.mean_a.to_numpy(), a.table["mean"].to_numpy())
    np.testing.assert_array_equal(t.mean_b.to_numpy(), b.table["mean"].to_numpy())
    np.testing.assert_array_equal(t.difference.to_numpy(), (t.mean_b - t.mean_a).to_numpy())
    unpaired = np.hypot(a.table.se.to_numpy(), b.table.se.to_numpy())
    np.testing.assert_allclose(t.se_unpaired.to_numpy(), unpaired, rtol=1e-12)
    assert hold.rounds == 100_000 and hold.seed == 21


def test_pairing_narrows_the_interval_of_the_changed_combatant(hold):
    row = hold.difference("Gunnar", "actions")
    assert row.se_paired < row.se_unpaired
    assert row.narrower == pytest.approx(row.se_unpaired / row.se_paired)
    assert row.ci_low < row.difference < row.ci_high
    assert row.ci_high - row.ci_low == pytest.approx(2 * hold.t_paired * row.se_paired)
    # the intervals of a combatant with no hold policy narrow too
    assert hold.difference("Wolf 1", "actions").narrower > 1
    assert hold.median_narrowing() > 1


def test_paired_interval_covers_the_difference_of_independent_long_runs(hold):
    long_a = simkit.run(WOLVES, rounds=200_000, rng=1001)
    changed = simkit.with_changes(long_a.scenario, combatants={"Gunnar": {"hold": "never"}})
    long_b = simkit.run(changed, rounds=200_000, rng=2002)
    ta = long_a.table.set_index(["combatant", "metric"])
    tb = long_b.table.set_index(["combatant", "metric"])
    checked = 0
    for r in _main_rows(hold.table).itertuples(index=False):
        key = (r.combatant, r.metric)
        independent = tb.loc[key, "mean"] - ta.loc[key, "mean"]
        se = math.hypot(r.se_paired, ta.loc[key, "se"], tb.loc[key, "se"])
        if not math.isfinite(independent) or not math.isfinite(r.difference):
            continue
        assert abs(r.difference - independent) <= 5 * se + 1e-12, key
        checked += 1
    assert checked >= 40


def test_paired_se_is_the_batch_means_se_of_the_per_batch_differences():
    # 32 equal batches of 1024 rounds: the textbook batch-means formula applies exactly.
    rounds, batch = 32 * 1024, 1024
    c = simkit.compare(WOLVES, set="Gunnar.hold=never", rounds=rounds, rng=7, batch_rounds=batch)
    assert c.batches == 32 and c.batch_rounds == batch
    seq = seed_sequence(7)
    a = simkit.load_scenario(WOLVES)
    b = simkit.with_changes(a, combatants={"Gunnar": {"hold": "never"}})
    per_batch = {}
    for name, s in (("a", a), ("b", b)):
        raw = simulate(s, rounds, seq, batch_rounds=batch)
        per_batch[name] = [
            {(who, m): e.mean for who, m, e in estimates(raw.layout, sums)} for sums in raw.batches
        ]
    for key in [("Gunnar", "actions"), ("Wolf 2", "first_action"), ("Leif", "no_action")]:
        d = np.array([pb[key] - pa[key] for pa, pb in zip(*per_batch.values(), strict=True)])
        row = c.difference(*key)
        assert row.difference == pytest.approx(d.mean(), abs=1e-12)
        assert row.se_paired == pytest.approx(d.std(ddof=1) / math.sqrt(d.size), rel=1e-9)


def test_short_runs_use_at_least_32_batches():
    c = simkit.compare(WOLVES, set=["Gunnar.hold=never"], rounds=20_000, rng=2)
    assert c.batch_rounds == 20_000 // 32
    assert c.batches >= 32
    assert c.t_paired == pytest.approx(t_quantile_975(c.batches - 1))


@pytest.mark.parametrize(
    ("df", "quantile"),
    [
        (1, 12.706204736),
        (2, 4.302652730),
        (4, 2.776445105),
        (9, 2.262157163),
        (30, 2.042272456),
        (100, 1.983971519),
        (200, 1.971896224),
        (250, 1.969498393),
        (1000, 1.962339081),
    ],
)
def test_student_t_quantile(df, quantile):
    assert t_quantile_975(df) == pytest.approx(quantile, abs=2e-8)


def test_set_for_every_combatant_rules_and_mappings():
    c = simkit.compare(WOLVES, set=["*.advantage=1", "rules.order=chain"], rounds=5_000, rng=4)
    assert all(x["advantage"] == 1 for x in c.b.scenario.combatants)
    assert c.b.scenario.rules["order"] == "chain"
    assert all(x["advantage"] == 0 for x in c.a.scenario.combatants)
    m = simkit.compare(WOLVES, set={"*.advantage": 1, "rules.order": "chain"}, rounds=5_000, rng=4)
    pd.testing.assert_frame_equal(c.table, m.table, check_exact=True)
    assert "with *.advantage=1, rules.order=chain" in c.label_b


def test_different_combatants_are_rejected(tmp_path):
    with pytest.raises(
        simkit.ScenarioError, match="same combatant names.*only in B: Ragnar, Sigrid"
    ):
        simkit.compare(WOLVES, SCENARIOS / "duel_of_equals.toml", rounds=1_000)
    with pytest.raises(TypeError):
        simkit.compare(WOLVES, rounds=1_000)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--set", "Gunar.hold=never"], "--set 'Gunar.hold=never': no combatant or group named"),
        (["--set", "Gunnar.hold=nevr"], "did you mean 'never'"),
        (["--set", "Gunnar.hold"], "expected NAME.FIELD=VALUE"),
        (["--set", "Gunnar.readiness=21"], "21 is not allowed"),
        ([str(SCENARIOS / "duel_of_equals.toml")], "same combatant names"),
        ([str(WOLVES), "--set", "Gunnar.hold=never"], "not both"),
        ([], "B missing"),
    ],
)
def test_cli_compare_errors_exit_2(args, fragment, tmp_path, capsys):
    out = tmp_path / "out"
    status = main(["compare", str(WOLVES), *args, "--rounds", "1000", "--out", str(out)])
    captured = capsys.readouterr()
    assert status == 2
    assert len(captured.err.splitlines()) == 1
    assert captured.err.startswith("simkit: error: ")
    assert fragment in captured.err
    assert captured.out == ""
    assert not out.exists()


def test_cli_compare_prints_differences_and_the_narrowing(tmp_path, capsys):
    out = tmp_path / "cmp"
    args = ["compare", str(WOLVES), "--set", "Gunnar.hold=never", "--rounds", "20000"]
    assert main([*args, "--seed", "9", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("A: Party vs three wolves\nB: Party vs three wolves with")
    assert re.search(
        r"^paired intervals are \d+\.\d× narrower than unpaired \(median over metrics\)$",
        captured.out,
        re.MULTILINE,
    )
    assert re.search(r"^Gunnar +Actions +\d", captured.out, re.MULTILINE)
    saved = pd.read_csv(out / "compare.csv", keep_default_na=False, na_values=[""])
    assert list(saved.columns) == COLUMNS
    direct = simkit.compare(WOLVES, set=["Gunnar.hold=never"], rounds=20_000, rng=9)
    assert len(saved) == len(direct.table)
    np.testing.assert_allclose(saved.difference, direct.table.difference, rtol=1e-9, atol=1e-15)
    # two files give the same as A plus --set
    b_file = tmp_path / "never.toml"
    b_file.write_text(WOLVES.read_text().replace('hold = "until_attacked"', 'hold = "never"'))
    assert main(["compare", str(WOLVES), str(b_file), "--rounds", "20000", "--seed", "9"]) == 0
    text = capsys.readouterr().out
    assert f"A: {WOLVES}\nB: {b_file}" in text
    assert main(["compare", str(WOLVES), str(b_file), "--all", "--rounds", "2000"]) == 0
    assert "Acts before Wolf 1 %" in capsys.readouterr().out


def test_difference_plots_render(hold):
    from simkit.output.plots import comparison_figure, figure_png, plot_differences

    png = figure_png(comparison_figure(hold, ["first_action", "actions", "hasty_share"]))
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    ax = plot_differences(hold, "actions", combatants=["Gunnar", "Wolf 1"])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["Gunnar", "Wolf 1"]
    with pytest.raises(KeyError):
        plot_differences(hold, "no_such_metric")


def test_a_changed_guard_shows_its_allies_gain_and_its_cost(capsys):
    """R7a: Bran guards only Mira in A, every ally in B: compare names both allies (Kira
    newly guarded, Mira guarded in both) with their paired differences, and Bran's cost."""
    bodyguard = SCENARIOS / "bodyguard.toml"
    c = simkit.compare(bodyguard, set=["Bran.guard=always"], rounds=20_000, rng=3)
    (change,) = c.guard_changes
    assert change.guard == "Bran" and change.allies == ("Mira", "Kira")
    assert change.in_a == {"Mira": "always"} and change.in_b == {"Mira": "always", "Kira": "always"}
    assert not change.every_a and change.every_b
    kira = c.difference("Kira", "undefended")
    assert kira.ci_high < 0  # a guard for Kira answers some attacks nobody else could
    from simkit.output.terminal import guard_lines

    text = "\n".join(guard_lines(c))
    assert "guards Mira (always) in A, every ally (always) in B" in text
    assert "Kira, guarded by Bran in B only" in text and "Mira, guarded by Bran in both" in text
    assert "Bran's cost, per round: actions" in text
    # the same lines are the json notes
    assert (
        main(
            [
                "compare",
                str(bodyguard),
                "--set",
                "Bran.guard=[Kira]",
                "--rounds",
                "2000",
                "--format",
                "json",
            ]
        )
        == 0
    )
    import json

    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any("guards Mira (always) in A, Kira (always) in B" in n for n in notes)
    assert any(n.startswith("  Mira, guarded by Bran in A only") for n in notes)


def test_no_guard_lines_without_a_guard_change():
    c = simkit.compare(WOLVES, set=["Gunnar.hold=never"], rounds=2000, rng=1)
    assert c.guard_changes == []
