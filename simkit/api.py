"""The public Python API: everything the command line does, callable from Python."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from simkit.engine import RngLike, seed_sequence, simulate
from simkit.result import Result
from simkit.scenario import Scenario, load_scenario


def _scenario(scenario_or_path: Scenario | str | Path) -> Scenario:
    if isinstance(scenario_or_path, Scenario):
        return scenario_or_path
    return load_scenario(scenario_or_path)


def validate(scenario_or_path: Scenario | str | Path) -> Scenario:
    """Load and check a scenario; raises ScenarioError on any problem."""
    return _scenario(scenario_or_path)


def run(
    scenario_or_path: Scenario | str | Path,
    rounds: int | None = None,
    rng: RngLike = None,
    *,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    scheduler: Any = None,
) -> Result:
    """Simulate a scenario and estimate every metric with its 95% interval.

    Parameters
    ----------
    scenario_or_path : Scenario or path
        A scenario (``load_scenario``) or the path of a TOML scenario file.
    rounds : int, optional
        Rounds to play; default the scenario's ``rounds``.
    rng : numpy Generator, SeedSequence, int or None, optional
        The randomness (SPEC 7).  Default: the scenario's ``seed``.  The same
        scenario, seed and rounds give identical results for any ``workers``.
    workers : int, optional
        Threads to use; default all cores.
    progress : callable, optional
        Called with the number of rounds of each finished chunk.
    scheduler : dask.distributed.Client or str, optional
        Play the chunks on a Dask cluster: a Client, the address of a running
        scheduler (``"tcp://HOST:8786"``) or ``"local"`` (a cluster of ``workers``
        one-thread processes on this machine, started for this run).  The result is
        bit-identical to a local run with the same seed.  Needs
        ``pip install 'simkit[dask]'``.

    Returns
    -------
    Result
        ``result.table`` is a tidy DataFrame (combatant, metric, mean, se,
        ci_low, ci_high).
    """
    scenario = _scenario(scenario_or_path)
    rounds = scenario.rounds if rounds is None else rounds
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
    seq = seed_sequence(scenario.seed if rng is None else rng)
    raw = simulate(scenario, rounds, seq, workers=workers, progress=progress, scheduler=scheduler)
    seed = seq.entropy if isinstance(seq.entropy, int) else list(seq.entropy)
    return Result.from_sums(scenario, seed, raw.layout, raw.sums, raw.elapsed_s, raw.workers)
