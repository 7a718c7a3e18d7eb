"""Every notebook in notebooks/ runs without error (with few rounds) and is stored clean:
no outputs, the public API only, plots from the result objects (no pyplot), and rule
citations pointing at docs/rules.md."""

from __future__ import annotations

from pathlib import Path

import pytest
from requires import requires_module

nbformat = requires_module("nbformat", "the notebooks extra")
nbclient = requires_module("nbclient", "the notebooks extra")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
TEST_ROUNDS = "ROUNDS = 2000"


def _parameters_cell(nb) -> int:
    for k, cell in enumerate(nb.cells):
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            return k
    raise AssertionError("no cell tagged 'parameters'")


def test_the_six_notebooks_are_there():
    assert [p.name for p in NOTEBOOKS] == [
        "01_tuning_readiness.ipynb",
        "02_holding_dice.ipynb",
        "03_three_systems.ipynb",
        "04_balancing_a_boss.ipynb",
        "05_explorer.ipynb",
        "06_is_holding_degenerate.ipynb",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.nbformat == 4
    assert _parameters_cell(nb) == 0
    assert nb.cells[0].source.strip() == "ROUNDS = 200_000"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name}: stored outputs"
            assert cell.execution_count is None, f"{path.name}: stored execution count"
    source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "import simkit\n" in source
    # only the public API: no submodule imports
    assert "from simkit" not in source and "import simkit." not in source
    # plots come from the result objects' .plot(), not from hand-written matplotlib
    assert "pyplot" not in source and "plt." not in source
    text = "\n".join(c.source for c in nb.cells)
    # the rules are cited from docs/rules.md (the rules as simkit implements them)
    assert "RULES.md" not in text
    assert "docs/rules.md" in text


def test_the_boss_fight_is_the_one_notebook_04_balances():
    import simkit

    boss = simkit.validate(ROOT / "scenarios" / "boss_fight.toml")
    assert boss.system == "readiness"
    sides = {side: [c for c in boss.combatants if c.side == side] for side in boss.sides}
    assert sorted(sides) == ["monsters", "party"]
    assert len(sides["party"]) == 4
    readiness = {c.name: c.params["readiness"] for c in sides["monsters"]}
    assert readiness["Troll Chief"] == 5
    assert [c.group for c in sides["monsters"]].count("Goblin") == 2


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")  # the kernel inherits it: no display needed
    nb = nbformat.read(path, as_version=4)
    nb.cells[_parameters_cell(nb)].source = TEST_ROUNDS
    client = nbclient.NotebookClient(
        nb,
        kernel_name="python3",
        timeout=900,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    errors = [
        out
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.outputs
        if out.output_type == "error"
    ]
    assert errors == []
