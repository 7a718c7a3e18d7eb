"""Running one scenario: the engine's sums turned into a Result."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from simkit.analysis.result import Result
from simkit.engine import RngLike, seed_sequence, seed_value, simulate
from simkit.scenario import Scenario, load_scenario


def as_scenario(scenario_or_path: Scenario | str | Path) -> Scenario:
    """A Scenario as given, or loaded and validated from a path."""
    if isinstance(scenario_or_path, Scenario):
        return scenario_or_path
    return load_scenario(scenario_or_path)


def run(
    scenario_or_path: Scenario | str | Path,
    rounds: int | None = None,
    rng: RngLike = None,
    *,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    scheduler: Any = None,
    pairs: Any = (),
) -> Result:
    """Simulate a scenario and estimate every metric with its 95% interval (see
    simkit.api.run, which checks the arguments)."""
    scenario = as_scenario(scenario_or_path)
    rounds = scenario.rounds if rounds is None else rounds
    seq = seed_sequence(scenario.seed if rng is None else rng)
    raw = simulate(
        scenario, rounds, seq, workers=workers, progress=progress, scheduler=scheduler, pairs=pairs
    )
    return Result.from_raw(scenario, seed_value(seq), raw)
