"""Compile every kernel once and leave it in numba's cache (``simkit warmup``).

``make install`` runs it, so the first ``simkit run`` after installing starts at once;
run it on every Dask worker machine too.  Each system names the small scenarios that
reach every path of its kernels (``System.warmup_scenarios``; the benchmark scenario
by default); each is played for ``WARM_ROUNDS`` rounds (enough for the paths that play
many rounds side by side), in batches from a later round, traced and read as rows
(``System.rows``, what fights of several rounds play), which compiles
(or loads) every specialisation a user can reach (tests/test_warmup.py).

Compiling is single-threaded, so the systems are warmed in parallel processes, one per
core and at most one per system, the one with the most warm-up scenarios (readiness: its
scalar drivers and its lanes) started first; numba's cache saves are serialised by
``systems.support.SourceTreeCache``'s lock.  Processes are forked, so they only run
where ``fork`` exists, caching is on and this process runs no other thread than the
command's signal watchdog (which only reads a pipe); otherwise (and with
``processes=1``) the systems are warmed here, one after the other.  A warm-up process
takes signals as by default (a Ctrl-C ends it at once) and is ended with the command.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import suppress
from typing import Any

import numpy as np

from simkit import systems
from simkit.engine.core import prepare, simulate
from simkit.scenario import scenario_from_dict
from simkit.systems.stream import chunk_state
from simkit.systems.support import CACHE

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


def _warm_named(name: str) -> tuple[int, float]:
    """Warm the system called ``name``: (scenarios played, seconds)."""
    start = time.perf_counter()
    n = warm_system(systems.get(name))
    return n, time.perf_counter() - start


def _line(name: str, n: int, took: float) -> str:
    plural = "s" if n != 1 else ""
    return f"{name}: {n} scenario{plural} compiled or loaded in {took:.1f} s"


def warm_processes(count: int) -> int:
    """How many processes warm ``count`` systems here (1: in this process)."""
    if not CACHE or "fork" not in multiprocessing.get_all_start_methods():
        return 1  # nothing a child compiled would be kept, or no fork
    others = [t for t in threading.enumerate() if t is not threading.main_thread()]
    if any(t.name != "simkit-signals" for t in others):
        return 1  # forking a process while other threads run is not safe
    return max(1, min(count, os.cpu_count() or 1))


def warm_all(processes: int | None = None) -> Iterator[str]:
    """Warm every registered system; yields one line per system, in registration order
    (``processes``: at most this many at once; default :func:`warm_processes`)."""
    names = [system.name for system in systems.all_systems()]
    workers = warm_processes(len(names)) if processes is None else max(1, processes)
    if workers == 1:
        for name in names:
            yield _line(name, *_warm_named(name))
        return
    # most warm-up scenarios (most kernel paths) first: the others share the rest meanwhile
    slowest = sorted(names, key=lambda name: -len(warmup_documents(systems.get(name))))
    pool = multiprocessing.get_context("fork").Pool(workers, initializer=_child_signals)
    try:
        done = {name: pool.apply_async(_warm_named, (name,)) for name in slowest}
        for name in names:
            yield _line(name, *done[name].get())
        pool.close()
    finally:
        pool.terminate()  # at once, also when the command is stopped or a system fails
        pool.join()


def _child_signals() -> None:
    """A warm-up process: SIGINT and SIGTERM as by default, no wake-up pipe (the
    command's, whose watchdog thread is not in this process)."""
    with suppress(ValueError, OSError):
        signal.set_wakeup_fd(-1)
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.SIG_DFL)
