"""``simkit warmup`` (what ``make install`` ends with) leaves every kernel a user can
reach in numba's cache: afterwards, running and tracing every example scenario compiles
nothing (numba's compile events count real compiles only, not loads from the cache)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

RUN_EVERY_EXAMPLE = """
import json, sys
from numba.core import event

compiled = []


class Compiles(event.Listener):
    def on_start(self, e):
        compiled.append(e.data["dispatcher"].py_func.__qualname__)

    def on_end(self, e):
        pass


event.register("numba:compile", Compiles())
import numpy as np
import simkit
from simkit import engine
from simkit.systems.stream import chunk_state

for path in sys.argv[1:]:
    simkit.run(path, rounds=5000, rng=1, workers=1)
    scenario = simkit.load_scenario(path)
    job = engine.prepare(scenario)
    job.system.trace(job.compiled, chunk_state(np.random.SeedSequence(1), 0), 3)
print(json.dumps(compiled))
"""


@pytest.mark.slow
def test_warmup_leaves_nothing_to_compile(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    done = subprocess.run(
        [sys.executable, "-m", "simkit", "warmup"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    examples = sorted(str(p) for p in (ROOT / "scenarios").glob("*.toml"))
    assert len(examples) >= 12
    ran = subprocess.run(
        [sys.executable, "-c", RUN_EVERY_EXAMPLE, *examples],
        env=env,
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout.strip().splitlines()[-1]) == []


def test_warmup_processes_only_where_forking_is_safe(monkeypatch):
    """Forked warm-up processes only with the cache on and no thread but the command's
    signal watchdog; otherwise the systems are warmed in this process."""
    import threading

    from simkit.engine import warmup

    main = threading.main_thread()
    watchdog = threading.Thread(name="simkit-signals")  # never started: only its name counts
    worker = threading.Thread(name="some-worker")
    running = [main]
    monkeypatch.setattr(warmup.threading, "enumerate", lambda: list(running))
    monkeypatch.setattr(warmup.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(warmup, "CACHE", True)
    assert warmup.warm_processes(3) == 2
    assert warmup.warm_processes(1) == 1
    monkeypatch.setattr(warmup.os, "cpu_count", lambda: 8)
    assert warmup.warm_processes(3) == 3
    running.append(watchdog)
    assert warmup.warm_processes(3) == 3  # the watchdog only reads a pipe
    running.append(worker)
    assert warmup.warm_processes(3) == 1  # forking while another thread runs is not safe
    running.remove(worker)
    monkeypatch.setattr(warmup, "CACHE", False)
    assert warmup.warm_processes(3) == 1  # nothing a child compiled would be kept


def test_a_cache_save_waits_for_another_process_holding_the_lock(tmp_path):
    """support._locked: while one process saves (holds the lock), another's save waits
    (an exclusive flock), so numba's read-modify-write of the index is never interleaved."""
    import fcntl
    import multiprocessing

    from simkit.systems.support import SAVE_LOCK, _locked

    lock = tmp_path / SAVE_LOCK
    fork = multiprocessing.get_context("fork")
    held, go = fork.Event(), fork.Event()

    def holder():
        with _locked(lock):
            held.set()
            go.wait(60)

    child = fork.Process(target=holder)
    child.start()
    try:
        assert held.wait(60)
        with open(lock, "a") as handle, pytest.raises(BlockingIOError):
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        go.set()
        child.join(60)
    assert child.exitcode == 0
    with _locked(lock), open(lock, "a") as handle, pytest.raises(BlockingIOError):
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held by this process now
    with open(lock, "a") as handle:  # released at the end of the block
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
