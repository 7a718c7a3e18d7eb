"""Orchestration shared by every system: layout, chunking, seeding, workers, merging.

A run of ``rounds`` rounds is cut into chunks (``chunk_rounds``; the last one
shorter).  Chunk ``k`` draws from its own stream, keyed by child ``k`` of the run's
``SeedSequence``; each chunk reduces its rounds into integer running sums, and the
sums are added up.  Integer sums make the merge order irrelevant, so the result is
bit-identical whatever the number of workers.  Workers are threads: the kernels are
compiled with ``nogil=True`` and run in parallel without process start-up costs.

Chunk size rule.  A chunk is ``CHUNK_ROUNDS`` = 262,144 rounds for every scenario
whose round costs at most ``COST_FULL_CHUNK`` (``System.cost``: about 1 for four
combatants with three dice each; every example scenario is below 2).  A costlier
scenario gets chunks of ``CHUNK_ROUNDS / 2**k`` rounds, the smallest ``k`` that brings
``chunk rounds x cost`` under ``CHUNK_ROUNDS x COST_FULL_CHUNK``, so that a chunk
never takes much more than a few tenths of a second: Ctrl-C and the progress bar
answer within a second at any size.  The chunks, and so the numbers, depend only on
the scenario, the seed, the round count and this rule.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

import numpy as np

from simkit import systems
from simkit.metrics import Layout, Sums
from simkit.scenario import Scenario
from simkit.systems.base import System
from simkit.systems.stream import chunk_state

CHUNK_ROUNDS = 1 << 18
COST_FULL_CHUNK = 4.0
MIN_CHUNK_ROUNDS = 256

RngLike = np.random.Generator | np.random.SeedSequence | int | None


def system_of(scenario: Scenario) -> System:
    """The System object of a scenario (from the registry)."""
    return systems.get(scenario.system)


def layout_for(scenario: Scenario, pairs: tuple[tuple[int, int], ...] = ()) -> Layout:
    """The layout of a scenario's counts (its system's counts, its groups and sides)."""
    system = system_of(scenario)
    return Layout(
        names=scenario.names,
        counts=tuple(system.counts),
        dist_sizes=tuple(system.dist_size(c.params) for c in scenario.combatants),
        scenario_counts=tuple(system.scenario_counts),
        groups=tuple(c.group for c in scenario.combatants),
        sides=tuple(c.side for c in scenario.combatants),
        extra_pairs=pairs,
    )


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


def seed_value(seq: np.random.SeedSequence) -> int | list[int]:
    """The seed entropy as plain JSON data."""
    return seq.entropy if isinstance(seq.entropy, int) else list(seq.entropy)


def chunk_rounds(scenario: Scenario) -> int:
    """Rounds per chunk for ``scenario`` (the module docstring's rule)."""
    cost = float(system_of(scenario).cost(scenario))
    if not cost <= COST_FULL_CHUNK:
        k = math.ceil(math.log2(cost / COST_FULL_CHUNK))
        return max(MIN_CHUNK_ROUNDS, CHUNK_ROUNDS >> k)
    return CHUNK_ROUNDS


def block_rounds(scenario: Scenario) -> int:
    """The rounds of one chunk as a run plays it: ``chunk_rounds``, or for a scenario
    with ``fight_rounds`` K the chunk's whole fights (``engine.fights.fight_chunks``:
    ``chunk_rounds // K`` fights, at least one)."""
    k = scenario.fight_rounds
    size = chunk_rounds(scenario)
    return max(1, size // k) * k if k else size


def chunk_sizes(rounds: int, size: int = CHUNK_ROUNDS) -> list[int]:
    full, rest = divmod(rounds, size)
    return [size] * full + ([rest] if rest else [])


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
    fights: Any = None  # engine.fights.FightSums of a scenario with fight_rounds (R8a)


@dataclass(frozen=True)
class Job:
    """Everything a worker needs to play chunks: picklable (Dask tasks)."""

    system: System
    compiled: Any
    layout: Layout

    def play(self, key: np.ndarray, n_rounds: int) -> Sums:
        sums = self.layout.new_sums()
        self.system.run_chunk(self.compiled, key, n_rounds, sums)
        return sums


@dataclass(frozen=True)
class FightJob:
    """Everything a worker needs to play chunks of fights (R8a, ``engine.fights``): the
    job, the scenario after its opening compiled (None: as written) and the rounds of a
    fight; picklable (Dask tasks).  ``play`` takes a number of fights."""

    job: Job
    later: Any
    fight_rounds: int

    @property
    def layout(self) -> Layout:
        return self.job.layout

    def play(self, key: np.ndarray, n_fights: int, first_fight: int = 0) -> tuple[Sums, Any]:
        from simkit.engine.fights import play_fights

        job = self.job
        return play_fights(
            job.system,
            job.compiled,
            self.later,
            job.layout,
            key,
            n_fights,
            self.fight_rounds,
            first_fight=first_fight,
        )


Pairs = tuple[tuple[int, int], ...] | Callable[[Layout], tuple[tuple[int, int], ...]]


def prepare(scenario: Scenario, pairs: Pairs = ()) -> Job:
    """Compile ``scenario`` for its system.  ``pairs``: extra (slot, slot) cross sums to
    keep (or a function of the layout giving them), for ratios such as tune targets."""
    system = system_of(scenario)
    if callable(pairs):
        pairs = pairs(layout_for(scenario))
    layout = layout_for(scenario, pairs)
    return Job(system, system.compile(scenario, layout), layout)


def prepare_fights(scenario: Scenario, pairs: Pairs = ()) -> FightJob:
    """``prepare`` of a scenario with ``fight_rounds``: compiled as written (a fight's
    first round) and after its opening (``System.after_opening``; the other rounds)."""
    job = prepare(scenario, pairs)
    after = job.system.after_opening(scenario)
    later = None if after is None else job.system.compile(after, job.layout)
    return FightJob(job, later, scenario.fight_rounds)


def simulate(
    scenario: Scenario,
    rounds: int,
    seq: np.random.SeedSequence,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    batch_rounds: int | None = None,
    scheduler: Any = None,
    pairs: Pairs = (),
) -> RawRun:
    """Play ``rounds`` rounds of ``scenario`` and return the merged running sums.

    With ``scheduler`` (a ``dask.distributed.Client``, a scheduler address or
    ``"local"``), the same chunks are played on a Dask cluster (``engine.distributed``).

    With ``batch_rounds``, also keep the sums of every batch of that many rounds
    (``RawRun.batches``, in round order) for paired comparisons.  Batches leave the
    means unchanged: within a chunk they carry a round's state (R8) from one batch to
    the next (a regeneration cycle cut by a batch boundary is counted as two cycles).

    ``rounds`` is trusted (checked where it enters: ``simkit.api.check_rounds``).
    """
    workers = workers or default_workers()
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if scenario.fight_rounds:
        if scheduler is not None:
            if batch_rounds:
                raise ValueError("batch_rounds cannot be combined with a scheduler")
            from simkit.engine.distributed import simulate_distributed
            from simkit.engine.fights import fight_chunks, fight_count

            k = scenario.fight_rounds
            fights = fight_chunks(fight_count(rounds, k), k, chunk_rounds(scenario))
            fight_job = prepare_fights(scenario, pairs)
            return simulate_distributed(
                fight_job, fights, seq, scheduler, workers=workers, progress=progress
            )
        return _simulate_fights(scenario, rounds, seq, workers, progress, pairs, batch_rounds)
    sizes = chunk_sizes(rounds, chunk_rounds(scenario))
    job = prepare(scenario, pairs)
    if scheduler is not None:
        if batch_rounds:
            raise ValueError("batch_rounds cannot be combined with a scheduler")
        from simkit.engine.distributed import simulate_distributed

        return simulate_distributed(job, sizes, seq, scheduler, workers=workers, progress=progress)
    if batch_rounds:
        return _simulate_batches(job, sizes, seq, batch_rounds, progress)
    total = job.layout.new_sums()
    start = time.perf_counter()

    def play(k: int) -> Sums:
        return job.play(chunk_state(seq, k), sizes[k])

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
    return RawRun(job.layout, total, time.perf_counter() - start, workers)


def _parallel(
    play: Callable[[int], Sums], sizes: list[int], workers: int
) -> Iterator[tuple[Sums, int]]:
    """Run chunks on a thread pool, at most ``2 * workers`` in flight (flat memory)."""
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
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
    finally:
        # On Ctrl-C do not wait for queued chunks (running ones end with their chunk).
        pool.shutdown(wait=False, cancel_futures=True)


def _simulate_batches(
    job: Job,
    sizes: list[int],
    seq: np.random.SeedSequence,
    batch_rounds: int,
    progress: Callable[[int], None] | None,
    start_chunk: int = 0,
) -> RawRun:
    """Single-threaded run that keeps per-batch sums (round streams make them paired);
    ``start_chunk``: play chunks ``start_chunk ..`` of ``sizes`` only."""
    start = time.perf_counter()
    total = job.layout.new_sums()
    batches: list[Sums] = []
    for k, size in enumerate(sizes):
        if k < start_chunk:
            continue
        key = chunk_state(seq, k)
        carry = 0
        for first in range(0, size, batch_rounds):
            sums = job.layout.new_sums()
            n = min(batch_rounds, size - first)
            carry = job.system.run_chunk(job.compiled, key, n, sums, first=first, carry=carry)
            batches.append(sums)
            total.add(sums)
        if progress:
            progress(size)
    return RawRun(job.layout, total, time.perf_counter() - start, 1, batches)


# --------------------------------------------------------------------------- blocks
def block_totals(first: int, max_rounds: int) -> list[int]:
    """The round totals after each block of a run to a precision: ``first`` (one chunk),
    then doubling (``2 * first``, ``4 * first`` ...), the last one ``max_rounds``."""
    totals = []
    total = first
    while total < max_rounds:
        totals.append(total)
        total *= 2
    totals.append(max_rounds)
    return totals


def _copy(sums: Sums) -> Sums:
    return Sums(sums.s1.copy(), sums.s2.copy(), sums.sl.copy(), sums.sx.copy(), sums.tot.copy())


def play_blocks(
    scenario: Scenario,
    totals: list[int],
    seq: np.random.SeedSequence,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    batch_rounds: int | None = None,
    pairs: Pairs = (),
) -> Iterator[RawRun]:
    """Play ``scenario`` in blocks: after each block, the run of ``totals[b]`` rounds.

    Every block but the last ends on a chunk boundary (``totals`` from
    :func:`block_totals` with ``first = chunk_rounds(scenario)``), so block ``b`` plays
    chunks ``totals[b-1] / chunk`` onwards, each from its own key as ever: the RawRun
    after a block equals ``simulate(scenario, totals[b], seq, ...)`` bit for bit, and
    stopping after any block never changes what a round draws.  With ``batch_rounds``
    the batches are kept as :func:`simulate` keeps them (single-threaded).  A scenario
    with ``fight_rounds`` plays whole fights (``_play_fight_blocks``: any totals)."""
    if scenario.fight_rounds:
        yield from _play_fight_blocks(scenario, totals, seq, workers, progress, batch_rounds, pairs)
        return
    workers = workers or default_workers()
    size = chunk_rounds(scenario)
    job = prepare(scenario, pairs)
    total = job.layout.new_sums()
    batches: list[Sums] = []
    start = time.perf_counter()
    done = 0
    for end in totals:
        if done % size:
            raise ValueError(f"a block must start on a chunk boundary, got round {done}")
        sizes = chunk_sizes(end, size)
        first = done // size
        if batch_rounds:
            raw = _simulate_batches(job, sizes, seq, batch_rounds, progress, start_chunk=first)
            total.add(raw.sums)
            batches += raw.batches or []
        else:

            def play(k: int, first: int = first, sizes: list[int] = sizes) -> Sums:
                return job.play(chunk_state(seq, first + k), sizes[first + k])

            todo = list(range(len(sizes) - first))
            if workers == 1 or len(todo) == 1:
                for k in todo:
                    total.add(play(k))
                    if progress:
                        progress(sizes[first + k])
            else:
                for sums, n in _parallel(play, sizes[first:], workers):
                    total.add(sums)
                    if progress:
                        progress(n)
        done = end
        yield RawRun(
            job.layout,
            _copy(total),
            time.perf_counter() - start,
            1 if batch_rounds else workers,
            list(batches) if batch_rounds else None,
        )


def _simulate_fights(
    scenario: Scenario,
    rounds: int,
    seq: np.random.SeedSequence,
    workers: int,
    progress: Callable[[int], None] | None,
    pairs: Pairs,
    batch_rounds: int | None = None,
) -> RawRun:
    """``simulate`` of a scenario with ``fight_rounds`` (engine.fights): ``rounds``
    rounded up to whole fights, chunks of whole fights; with ``batch_rounds``, batches of
    whole fights too (``batch_rounds // fight_rounds`` fights, at least one)."""
    from simkit.engine.fights import fight_chunks, fight_count, play_fights

    k = scenario.fight_rounds
    sizes = fight_chunks(fight_count(rounds, k), k, chunk_rounds(scenario))
    job = prepare(scenario, pairs)
    after = job.system.after_opening(scenario)
    later = None if after is None else job.system.compile(after, job.layout)
    start = time.perf_counter()

    def play(c: int) -> tuple[Sums, Any]:
        return play_fights(
            job.system, job.compiled, later, job.layout, chunk_state(seq, c), sizes[c], k
        )

    total = job.layout.new_sums()
    fights = None
    rounds_of = [n * k for n in sizes]

    def take(part: tuple[Sums, Any]) -> None:
        nonlocal fights
        total.add(part[0])
        if fights is None:
            fights = part[1]
        else:
            fights.add(part[1])

    batches: list[Sums] | None = None
    if batch_rounds:
        batches = []
        per_batch = max(1, batch_rounds // k)
        for c, size in enumerate(sizes):
            key = chunk_state(seq, c)
            for f0 in range(0, size, per_batch):
                part = play_fights(
                    job.system,
                    job.compiled,
                    later,
                    job.layout,
                    key,
                    min(per_batch, size - f0),
                    k,
                    first_fight=f0,
                )
                take(part)
                batches.append(part[0])
            if progress:
                progress(rounds_of[c])
        workers = 1
    elif workers == 1 or len(sizes) == 1:
        for c in range(len(sizes)):
            take(play(c))
            if progress:
                progress(rounds_of[c])
    else:
        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            for part, c in zip(pool.map(play, range(len(sizes))), range(len(sizes)), strict=True):
                take(part)
                if progress:
                    progress(rounds_of[c])
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
    elapsed = time.perf_counter() - start
    return RawRun(job.layout, total, elapsed, workers, batches, fights=fights)


def _copy_fights(fights: Any) -> Any:
    from simkit.engine.fights import FightSums

    return FightSums(fights.fight_rounds, [_copy(s) for s in fights.per_index])


def _play_fight_blocks(
    scenario: Scenario,
    totals: list[int],
    seq: np.random.SeedSequence,
    workers: int | None,
    progress: Callable[[int], None] | None,
    batch_rounds: int | None,
    pairs: Pairs,
) -> Iterator[RawRun]:
    """``play_blocks`` of a scenario with ``fight_rounds`` K (R8a): after each block, the
    run of ``totals[b]`` rounds, i.e. ``fight_count(totals[b], K)`` whole fights.

    The fights lie in chunks as ``_simulate_fights`` lays them (``fight_chunks``: fight
    ``f`` is fight ``f mod per`` of chunk ``f // per``, ``per`` fights a chunk), so a
    block plays fights ``done .. end`` where they lie, each from its chunk's key and
    carry 0 (``play_fights(first_fight=...)``): integer sums, the same as the run of
    ``totals[b]`` rounds bit for bit wherever a block ends (with totals from
    ``block_rounds``, every block but the last is whole chunks).  With ``batch_rounds``
    the batches are those of ``simulate``: ``batch_rounds // K`` fights from the start of
    each chunk, a batch cut by a block's end completed by the next block."""
    from simkit.engine.fights import FightSums, fight_count

    workers = workers or default_workers()
    k = scenario.fight_rounds
    per = max(1, chunk_rounds(scenario) // k)
    job = prepare_fights(scenario, pairs)
    total = job.layout.new_sums()
    fights = FightSums(k, [job.layout.new_sums() for _ in range(k)])
    batches: list[Sums] = []
    start = time.perf_counter()
    done = 0  # fights played

    def play(piece: tuple[int, int, int]) -> tuple[Sums, Any]:
        c, lo, n = piece
        return job.play(chunk_state(seq, c), n, first_fight=lo)

    def take(part: tuple[Sums, Any], n: int) -> None:
        total.add(part[0])
        fights.add(part[1])
        if progress:
            progress(n * k)

    for end_rounds in totals:
        end = fight_count(end_rounds, k)
        pieces = []  # (chunk, first fight in it, fights)
        f = done
        while f < end:
            c = f // per
            n = min(end, (c + 1) * per) - f
            pieces.append((c, f - c * per, n))
            f += n
        if batch_rounds:
            per_batch = max(1, batch_rounds // k)
            for c, lo, n in pieces:
                f0 = lo
                while f0 < lo + n:
                    m = min(per_batch - f0 % per_batch, lo + n - f0)
                    part = play((c, f0, m))
                    take(part, m)
                    if f0 % per_batch:  # the rest of a batch cut by the last block's end
                        joined = _copy(batches[-1])
                        joined.add(part[0])
                        batches[-1] = joined
                    else:
                        batches.append(part[0])
                    f0 += m
        elif workers == 1 or len(pieces) == 1:
            for piece in pieces:
                take(play(piece), piece[2])
        else:
            pool = ThreadPoolExecutor(max_workers=workers)
            try:
                for part, piece in zip(pool.map(play, pieces), pieces, strict=True):
                    take(part, piece[2])
            finally:
                pool.shutdown(wait=False, cancel_futures=True)
        done = max(done, end)
        yield RawRun(
            job.layout,
            _copy(total),
            time.perf_counter() - start,
            1 if batch_rounds else workers,
            list(batches) if batch_rounds else None,
            fights=_copy_fights(fights),
        )
