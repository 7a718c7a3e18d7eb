"""Orchestration shared by every system: chunking, seeding, workers, merging.

A run of ``rounds`` rounds is cut into chunks of ``CHUNK_ROUNDS`` (the last one
shorter).  Chunk ``k`` draws from its own stream, seeded by child ``k`` of the run's
``SeedSequence``; each chunk reduces its rounds into integer running sums, and the
sums are added up.  Integer sums make the merge order irrelevant, so the result is
bit-identical whatever the number of workers.  Workers are threads: the kernels are
compiled with ``nogil=True`` and run in parallel without process start-up costs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from simkit.metrics import Layout, Sums
from simkit.random_stream import chunk_state
from simkit.scenario import Scenario

CHUNK_ROUNDS = 1 << 18

RngLike = np.random.Generator | np.random.SeedSequence | int | None


def system_module(system: str) -> ModuleType:
    """The module implementing ``system`` (spec compiler and kernel)."""
    if system == "readiness":
        from simkit import readiness

        return readiness
    if system == "vtm":
        from simkit import vtm

        return vtm
    if system == "perception":
        from simkit import perception

        return perception
    raise ValueError(f"unknown system {system!r}")


def seed_sequence(rng: RngLike) -> np.random.SeedSequence:
    """Normalise the one ``rng`` argument (SPEC 7) to a SeedSequence."""
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if isinstance(rng, np.random.Generator):
        return np.random.SeedSequence(int(rng.integers(0, 2**63)))
    if rng is None:
        return np.random.SeedSequence()
    if isinstance(rng, bool) or not isinstance(rng, int | np.integer) or int(rng) < 0:
        raise ValueError(f"rng must be a Generator, SeedSequence, int >= 0 or None, got {rng!r}")
    return np.random.SeedSequence(int(rng))


def chunk_sizes(rounds: int, chunk_rounds: int = CHUNK_ROUNDS) -> list[int]:
    full, rest = divmod(rounds, chunk_rounds)
    return [chunk_rounds] * full + ([rest] if rest else [])


def default_workers() -> int:
    return os.cpu_count() or 1


@dataclass
class RawRun:
    """What a run produced before estimation: the layout and merged sums."""

    layout: Layout
    sums: Sums
    elapsed_s: float
    workers: int
    batches: list[Sums] | None = None


def simulate(
    scenario: Scenario,
    rounds: int,
    seq: np.random.SeedSequence,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    batch_rounds: int | None = None,
    scheduler: Any = None,
) -> RawRun:
    """Play ``rounds`` rounds of ``scenario`` and return the merged running sums.

    With ``scheduler`` (a ``dask.distributed.Client``, a scheduler address or
    ``"local"``), the same chunks are played on a Dask cluster (``simkit.distributed``).

    With ``batch_rounds``, also keep the sums of every batch of that many rounds
    (``RawRun.batches``, in round order) for paired comparisons.  Batches leave the
    means unchanged: within a chunk they carry R8 from one batch to the next (a
    regeneration cycle cut by a batch boundary is counted as two cycles).
    """
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    workers = workers or default_workers()
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if scheduler is not None:
        if batch_rounds:
            raise ValueError("batch_rounds cannot be combined with a scheduler")
        from simkit.distributed import simulate_distributed

        return simulate_distributed(
            scenario, rounds, seq, scheduler, workers=workers, progress=progress
        )
    module = system_module(scenario.system)
    compiled = module.compile_scenario(scenario)
    sizes = chunk_sizes(rounds)
    total = compiled.layout.new_sums()
    start = time.perf_counter()

    def play(k: int) -> Sums:
        sums = compiled.layout.new_sums()
        module.run_chunk(compiled, chunk_state(seq, k), sizes[k], sums)
        return sums

    if batch_rounds:
        return _simulate_batches(compiled, module, sizes, seq, batch_rounds, progress)

    if workers == 1 or len(sizes) == 1:
        for k in range(len(sizes)):
            total.add(play(k))
            if progress:
                progress(sizes[k])
    else:
        for sums, n in _parallel(play, sizes, workers):
            total.add(sums)
            if progress:
                progress(n)
    elapsed = time.perf_counter() - start
    return RawRun(compiled.layout, total, elapsed, workers)


def _parallel(
    play: Callable[[int], Sums], sizes: list[int], workers: int
) -> Iterator[tuple[Sums, int]]:
    """Run chunks on a thread pool, at most ``2 * workers`` in flight (flat memory)."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending: dict[Future[Any], int] = {}
        next_k = 0
        while next_k < len(sizes) or pending:
            while next_k < len(sizes) and len(pending) < 2 * workers:
                pending[pool.submit(play, next_k)] = next_k
                next_k += 1
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                k = pending.pop(fut)
                yield fut.result(), sizes[k]


def _simulate_batches(
    compiled: Any,
    module: ModuleType,
    sizes: list[int],
    seq: np.random.SeedSequence,
    batch_rounds: int,
    progress: Callable[[int], None] | None,
) -> RawRun:
    """Single-threaded run that keeps per-batch sums (round streams make them paired)."""
    start = time.perf_counter()
    total = compiled.layout.new_sums()
    batches: list[Sums] = []
    for k, size in enumerate(sizes):
        key = chunk_state(seq, k)
        no_hold = False
        for first in range(0, size, batch_rounds):
            sums = compiled.layout.new_sums()
            n = min(batch_rounds, size - first)
            no_hold = module.run_chunk(compiled, key, n, sums, first=first, no_hold=no_hold)
            batches.append(sums)
            total.add(sums)
        if progress:
            progress(size)
    return RawRun(compiled.layout, total, time.perf_counter() - start, 1, batches)
