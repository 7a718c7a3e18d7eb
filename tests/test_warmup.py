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
