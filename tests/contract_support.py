"""What the contract tests need to know about each system's plain-Python twin.

Every registered system has a twin module ``tests/twins/<name>.py`` with

``play_rounds_keyed(scenario, key_words, n_rounds, first=0, carry=0, dice=None)``
    rounds ``first ..`` of a chunk, each on its own stream
    (``naive_rng.NaiveStream.for_round``), carrying the round-to-round state; returns a
    list of ``RoundRecord``-like tuples ``(counts, state, carry, log)``: the counts as
    ``{(combatant, count): int}`` (scenario counts under ``""``), the six stream words
    left behind, the carry passed to the next round and the event log.  ``dice`` maps a
    roller index (``System.rollers``) to the faces it rolls in every round.
``fold_log(scenario, log, carry=0)``
    the counts of one round rebuilt from its event log alone.
``random_scenario(rng)``
    a valid scenario of the system; every rule and policy variant is reachable.

The kernel's trace rows are turned into the same count dicts by :func:`row_counts`.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import numpy as np

from simkit.metrics import Layout

ROOT = Path(__file__).resolve().parents[1]


def twin(system: str) -> ModuleType:
    return importlib.import_module(f"twins.{system}")


def row_counts(row: np.ndarray, layout: Layout) -> dict[tuple[str, str], int]:
    """A kernel trace row as a twin's count dict (combatant and scenario slots)."""
    out: dict[tuple[str, str], int] = {}
    for i, name in enumerate(layout.names):
        for m, count in enumerate(layout.counts):
            out[(name, count)] = int(row[layout.count_slots[i, m]])
        for j, other in enumerate(layout.names):
            value = int(row[layout.before_index(i, j)])
            if j == i:
                assert value == 0, f"{name} acts before itself"
                continue
            out[(name, f"acts_before.{other}")] = value
        for k in range(layout.dist_sizes[i]):
            out[(name, f"actions_dist.{k}")] = int(row[layout.dist_index(i, k)])
    for count in layout.scenario_counts:
        out[("", count)] = int(row[layout.scenario_index(count)])
    return out


def cycles(rows: np.ndarray, carries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-round rows grouped into regeneration cycles: a cycle ends after a round whose
    carry is 0, and at the end of the rows.  Returns (cycle rows, cycle lengths)."""
    out, lengths = [], []
    current = np.zeros(rows.shape[1], np.int64)
    length = 0
    for r in range(rows.shape[0]):
        current = current + rows[r]
        length += 1
        if carries[r] == 0 or r == rows.shape[0] - 1:
            out.append(current)
            lengths.append(length)
            current = np.zeros(rows.shape[1], np.int64)
            length = 0
    return np.array(out, dtype=np.int64).reshape(-1, rows.shape[1]), np.array(lengths)


def scenario_files(system: str) -> list[Path]:
    """Example and test scenario files of ``system``."""
    import tomllib

    paths = sorted((ROOT / "scenarios").glob("*.toml")) + sorted(
        (ROOT / "tests/data").rglob("*.toml")
    )
    return [p for p in paths if tomllib.loads(p.read_text())["scenario"]["system"] == system]
