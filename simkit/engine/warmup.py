"""Compile every kernel once and leave it in numba's cache (``simkit warmup``).

``make install`` runs it, so the first ``simkit run`` after installing starts at once;
run it on every Dask worker machine too.  Each system names the small scenarios that
reach every path of its kernels (``System.warmup_scenarios``; the benchmark scenario
by default); each is played for ``WARM_ROUNDS`` rounds (enough for the paths that play
many rounds side by side), in batches from a later round, traced and read as rows
(``System.rows``, what fights of several rounds play), which compiles
(or loads) every specialisation a user can reach (tests/test_warmup.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from simkit import systems
from simkit.engine.core import prepare, simulate
from simkit.scenario import scenario_from_dict
from simkit.systems.stream import chunk_state

WARM_ROUNDS = 4096


def warmup_documents(system: Any) -> list[dict[str, Any]]:
    documents = getattr(system, "warmup_scenarios", None)
    return list(documents()) if documents is not None else [system.bench_scenario()]


def warm_system(system: Any) -> int:
    """Compile every path of ``system``; returns the number of scenarios played."""
    docs = warmup_documents(system)
    for k, doc in enumerate(docs):
        scenario = scenario_from_dict(doc, source=f"<warmup {system.name} {k}>")
        seq = np.random.SeedSequence(k)
        simulate(scenario, WARM_ROUNDS, seq, workers=1)
        simulate(scenario, 64, seq, batch_rounds=16)
        job = prepare(scenario)
        system.trace(job.compiled, chunk_state(seq, 0), 2)
        system.rows(job.compiled, chunk_state(seq, 0), 2)  # fights (R8a) play through it
    return len(docs)


def warm_all() -> Iterator[str]:
    """Warm every registered system; yields one line per system."""
    for system in systems.all_systems():
        start = time.perf_counter()
        n = warm_system(system)
        took = time.perf_counter() - start
        plural = "s" if n != 1 else ""
        yield f"{system.name}: {n} scenario{plural} compiled or loaded in {took:.1f} s"
