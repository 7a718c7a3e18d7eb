"""Runs on a Dask cluster: the same chunks, streams and integer sums as a local run.

``engine.simulate(..., scheduler=...)`` (and so ``simkit.run``, ``simkit.sweep`` and the
``--scheduler`` option) hands the run to :func:`simulate_distributed`.  The rounds are
cut into the chunks of ``engine.chunk_rounds``; chunk ``k`` becomes one Dask
task that gets the compiled scenario, the chunk's key ``chunk_state(seq, k)`` (its
SeedSequence child) and its size, and returns the chunk's integer :class:`Sums`, never
per-round data.  The client adds every chunk's sums exactly once, keyed by ``k``;
integer addition makes the order irrelevant, so the result is bit-identical to a local
run with the same seed, whatever the number of Dask workers.  A scenario in fights
(R8a) is a :class:`~simkit.engine.core.FightJob`: its tasks are the chunks of whole
fights of ``engine.fights.fight_chunks``, each returning its sums and its sums per
round index of a fight.

A worker lost mid-run loses nothing: Dask recomputes the tasks it was running or held
the results of (the task description, not the worker, holds the chunk's key), and a
chunk already added is never added again.  At most ``2 x`` the cluster's worker
threads chunks are in flight at once, so client memory stays flat however long the run.

``scheduler`` is a ``dask.distributed.Client``, the address of a running scheduler
(``tcp://HOST:8786``) or ``"local"`` (a ``LocalCluster`` of one-thread worker processes
on this machine, started and stopped with the run).  Dask is an optional dependency
(``pip install 'simkit[dask]'``) imported only here, only when a scheduler is given.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from simkit.engine.core import FightJob, Job, RawRun, default_workers
from simkit.systems.stream import chunk_state

LOCAL = "local"
INSTALL = "pip install 'simkit[dask]'"
LIMIT_REFRESH_S = 1.0  # how often the number of worker threads is asked again
CONNECT_TIMEOUT_S = 10.0


class SchedulerError(Exception):
    """A scheduler that cannot be used: dask is not installed, or it cannot be reached."""


class DaskMissingError(SchedulerError, ImportError):
    """``dask.distributed`` is not installed."""


def import_distributed() -> ModuleType:
    """The ``distributed`` package, or DaskMissingError saying how to install it."""
    try:
        import distributed
    except ImportError:
        raise DaskMissingError(
            f"dask.distributed is not installed; install it with: {INSTALL}"
        ) from None
    return distributed


@dataclass(frozen=True)
class Scheduler:
    """A scheduler address (or ``"local"``) with the time to wait for it."""

    address: str
    timeout: float = CONNECT_TIMEOUT_S


@contextlib.contextmanager
def _quiet_interrupts() -> Iterator[None]:
    """Start processes with SIGINT ignored, so that Ctrl-C reaches this process only
    (the local cluster's workers would otherwise print tracebacks of their own)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


@contextlib.contextmanager
def connect(scheduler: Any, workers: int | None = None) -> Iterator[Any]:
    """A ``dask.distributed.Client`` for ``scheduler`` (``None`` gives ``None``).

    A Client is used as it is and left open; an address (a string or a
    :class:`Scheduler`) is connected to, waiting at most its timeout (10 s by default),
    and the connection closed at the end; ``"local"`` starts a LocalCluster of
    ``workers`` (default: all cores) one-thread worker processes, quietly, and stops it
    at the end.
    """
    if scheduler is None:
        yield None
        return
    distributed = import_distributed()
    if isinstance(scheduler, distributed.Client):
        yield scheduler
        return
    timeout = CONNECT_TIMEOUT_S
    if isinstance(scheduler, Scheduler):
        scheduler, timeout = scheduler.address, scheduler.timeout
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise SchedulerError(
            f"scheduler must be a dask.distributed.Client, an address such as "
            f"tcp://HOST:8786 or 'local', got {scheduler!r}"
        )
    address = scheduler.strip()
    for name in ("distributed", "distributed.nanny", "distributed.worker", "tornado"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    with contextlib.ExitStack() as stack:
        if address == LOCAL:
            with _quiet_interrupts():
                cluster = stack.enter_context(
                    distributed.LocalCluster(
                        n_workers=workers or default_workers(),
                        threads_per_worker=1,
                        processes=True,
                        dashboard_address=":0",
                        silence_logs=logging.CRITICAL,
                    )
                )
            address = cluster.scheduler_address
        try:
            client = distributed.Client(address, set_as_default=False, timeout=timeout)
        except (OSError, TimeoutError, ValueError, TypeError) as exc:
            why = str(exc) or type(exc).__name__
            raise SchedulerError(
                f"cannot connect to scheduler {scheduler!r} within {timeout:g} s: {why}"
            ) from None
        stack.enter_context(client)
        yield client


def play_chunk(job: Job | FightJob, key: np.ndarray, size: int) -> Any:
    """One task: play ``size`` rounds of the chunk with key ``key``; its running sums
    (a FightJob: ``size`` fights; its sums and per-round-index sums)."""
    return job.play(key, size)


def simulate_distributed(
    job: Job | FightJob,
    sizes: list[int],
    seq: np.random.SeedSequence,
    scheduler: Any,
    *,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> RawRun:
    """Play the chunks ``sizes`` of a compiled ``job`` on a Dask cluster; merged sums.
    A :class:`FightJob` (a scenario in fights, R8a) has chunks of ``sizes`` fights, as
    ``engine.fights.fight_chunks`` cuts them, and merges their per-round-index sums too.

    ``workers`` is the number of worker processes of a ``"local"`` cluster and is
    otherwise unused (the cluster decides).  ``progress`` is called with the rounds of
    each chunk as it is added.
    """
    with connect(scheduler, workers) as client:
        return _simulate_on(client, job, sizes, seq, progress)


def _threads(client: Any) -> int:
    return max(1, sum(client.nthreads().values()))


def _simulate_on(
    client: Any,
    job: Job | FightJob,
    sizes: list[int],
    seq: np.random.SeedSequence,
    progress: Callable[[int], None] | None,
) -> RawRun:
    distributed = import_distributed()
    unit = getattr(job, "fight_rounds", 1)  # rounds per unit of ``sizes``: fights (R8a)
    fights: Any = None
    rounds = sum(sizes) * unit
    total = job.layout.new_sums()
    added = [False] * len(sizes)
    run_id = uuid.uuid4().hex
    threads = _threads(client)
    start = checked = time.perf_counter()
    limit = 2 * threads

    pending: dict[Any, int] = {}  # future -> chunk index
    completed = distributed.as_completed(loop=client.loop)
    next_k = 0
    try:
        while next_k < len(sizes) or pending:
            if time.perf_counter() - checked > LIMIT_REFRESH_S:  # workers come and go
                limit, checked = 2 * _threads(client), time.perf_counter()
            while next_k < len(sizes) and len(pending) < limit:
                future = client.submit(
                    play_chunk,
                    job,
                    chunk_state(seq, next_k),
                    sizes[next_k],
                    key=f"simkit-chunk-{run_id}-{next_k}",
                )
                pending[future] = next_k
                completed.add(future)
                next_k += 1
            future = next(completed)
            k = pending.pop(future)
            sums = future.result()  # lost data is recomputed by Dask before this returns
            future.release()
            if added[k]:  # cannot happen: each chunk's future is yielded once
                raise RuntimeError(f"chunk {k} finished twice")
            added[k] = True
            if isinstance(job, FightJob):
                sums, part = sums
                if fights is None:
                    fights = part
                else:
                    fights.add(part)
            total.add(sums)
            if progress:
                progress(sizes[k] * unit)
    finally:
        if pending:
            client.cancel(list(pending))
    if not all(added) or total.rounds != rounds:
        raise RuntimeError(f"distributed run added {total.rounds} rounds, expected {rounds}")
    return RawRun(job.layout, total, time.perf_counter() - start, threads, fights=fights)
