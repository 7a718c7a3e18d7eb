"""The public Python API: everything the command line does, callable from Python.

A thin layer: each function validates its arguments, calls the analysis layer and
returns a value object (:class:`~simkit.analysis.result.Result`, ``SweepResult``,
``Comparison``, ...).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from simkit.analysis.compare import Comparison, compare
from simkit.analysis.report_runs import report
from simkit.analysis.result import Result
from simkit.analysis.run import as_scenario
from simkit.analysis.run import run as _run
from simkit.analysis.sweep import SweepResult, sweep
from simkit.analysis.tune import Tuning, tune
from simkit.engine import RngLike
from simkit.scenario import Scenario

__all__ = [
    "Comparison",
    "Result",
    "SweepResult",
    "Tuning",
    "compare",
    "report",
    "run",
    "sweep",
    "tune",
    "validate",
]


def validate(scenario_or_path: Scenario | str | Path) -> Scenario:
    """Load and check a scenario; raises ScenarioError naming every problem."""
    return as_scenario(scenario_or_path)


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
        ``result.table`` is a tidy DataFrame (combatant, metric, mean, se, ci_low,
        ci_high); ``result.by("side")`` and ``result.by("group")`` aggregate.
    """
    return _run(
        scenario_or_path, rounds, rng, workers=workers, progress=progress, scheduler=scheduler
    )
