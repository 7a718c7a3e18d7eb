"""The compiled-kernel cache cannot go stale (simkit.systems.support.SourceTreeCache).

numba's own cache checks only the timestamp of the file defining a cached function,
so a kernel compiled with an older stream.py or metrics/sums.py inside it came back
from the cache after those files changed.  Every simkit kernel is cached under a digest
of every source file of simkit/systems and simkit/metrics instead: these tests check
that every kernel uses that cache, that the digest follows the text of every file
(a new one too) and nothing else, and, end to end, that an edited copy of the package
recompiles and changes its numbers without any cache being cleared.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba.core.caching import NullCache
from numba.core.dispatcher import Dispatcher

import simkit.systems  # noqa: F401  (imports every system's kernels)
from simkit.systems import support
from simkit.systems.support import JIT_DISABLED, SourceTreeCache, source_digest

PACKAGE = Path(support.__file__).resolve().parents[1]
SCENARIOS = PACKAGE.parent / "scenarios"
# one small example scenario of each system
EXAMPLES = {
    "readiness": "duel_of_equals.toml",
    "vtm": "vtm_duel.toml",
    "perception": "perception_gunnar_wolf.toml",
}

needs_jit = pytest.mark.skipif(JIT_DISABLED, reason="NUMBA_DISABLE_JIT=1: nothing is compiled")


def kernel_dispatchers() -> dict[str, Dispatcher]:
    """Every numba function of simkit.systems and simkit.metrics, by module.name."""
    found = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith(("simkit.systems", "simkit.metrics")) or module is None:
            continue
        for attr, value in vars(module).items():
            if isinstance(value, Dispatcher):
                found[f"{name}.{attr}"] = value
    return found


@needs_jit
def test_every_kernel_is_cached_under_the_source_tree_or_not_at_all():
    dispatchers = kernel_dispatchers()
    caches = {name: type(d._cache) for name, d in dispatchers.items()}
    assert set(caches.values()) <= {SourceTreeCache, NullCache}, {
        name: kind for name, kind in caches.items() if kind not in (SourceTreeCache, NullCache)
    }
    cached = {name for name, kind in caches.items() if kind is SourceTreeCache}
    for module in (
        "readiness.kernel", "vtm.rules", "vtm.lanes", "vtm.kernel", "perception.rules",
        "perception.lanes", "perception.kernel",
    ):  # fmt: skip
        assert any(name.startswith(f"simkit.systems.{module}.") for name in cached), module


@needs_jit
def test_stream_draws_compile_for_kernels_without_wrappers_and_for_python_with_a_cached_twin():
    """stream.py's draws (support.helper_njit): kernels compile them without wrappers or
    a cache entry of their own; a plain-Python call goes to a twin that has both."""
    from simkit.systems import stream

    st = np.zeros(stream.STATE_WORDS, dtype=np.uint64)
    stream.round_start(st, np.arange(1, 5, dtype=np.uint64), 3)
    assert 0 <= stream.below(st, 6) < 6
    for helper in (stream.round_start, stream.below):
        assert type(helper._cache) is NullCache
        assert helper.targetoptions["no_cpython_wrapper"]
        assert type(helper._python_twin._cache) is SourceTreeCache
        assert not helper._python_twin.targetoptions.get("no_cpython_wrapper", False)


def test_one_jit_setting():
    assert {"cache": not os.environ.get("SIMKIT_NO_CACHE"), "nogil": True} == support.JIT
    from simkit.systems.perception import kernel as perception
    from simkit.systems.vtm import kernel as vtm

    assert perception.JIT is support.JIT and vtm.JIT is support.JIT


def copy_trees(to: Path) -> Path:
    """simkit/systems and simkit/metrics copied under ``to`` (the package root)."""
    for tree in support.SOURCE_TREES:
        shutil.copytree(
            PACKAGE / tree, to / tree, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    return to


def test_the_digest_follows_the_text_of_every_source_file(tmp_path):
    root = copy_trees(tmp_path)
    first = source_digest(root)
    assert first == support.SOURCE_DIGEST  # the copy: the same text
    sums = root / "metrics" / "sums.py"
    os.utime(sums, ns=(1, 1))  # a new timestamp, the same text
    assert source_digest(root) == first
    (root / "systems" / "__pycache__").mkdir(exist_ok=True)
    (root / "systems" / "__pycache__" / "x.nbi").write_bytes(b"cache files do not count")
    assert source_digest(root) == first
    text = sums.read_text()
    sums.write_text(text.replace("tot[0] += 1", "tot[0] += 2"))
    edited = source_digest(root)
    assert edited != first
    sums.write_text(text)
    assert source_digest(root) == first
    (root / "systems" / "counting.py").write_text("ROWS = 1\n")  # a new file is covered
    assert source_digest(root) not in (first, edited)


# In the subprocess: run each example, print its metric means and the cache hits and
# misses of every simkit kernel.
RUN = """
import json, sys
from numba.core.dispatcher import Dispatcher
import simkit.api as api
out = {}
for system, path in json.loads(sys.argv[1]).items():
    result = api.run(path, rounds=2000, rng=7, workers=1)
    out[system] = [float(x) for x in result.table["mean"]]
hits = misses = 0
for name, module in list(sys.modules.items()):
    if name.startswith(("simkit.systems", "simkit.metrics")) and module is not None:
        for value in vars(module).values():
            if isinstance(value, Dispatcher):
                hits += sum(value.stats.cache_hits.values())
                misses += sum(value.stats.cache_misses.values())
out["hits"], out["misses"] = hits, misses
print(json.dumps(out))
"""


def run_copy(root: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "SIMKIT_"))}
    env["PYTHONPATH"] = str(root)  # the cache: numba's default, beside the copy's sources
    examples = {system: str(SCENARIOS / name) for system, name in EXAMPLES.items()}
    done = subprocess.run(
        [sys.executable, "-c", RUN, json.dumps(examples)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.slow
@needs_jit
def test_an_edited_copy_recompiles_and_changes_its_numbers(tmp_path):
    shutil.copytree(PACKAGE, tmp_path / "simkit", ignore=shutil.ignore_patterns("__pycache__"))
    cold = run_copy(tmp_path)
    assert cold["misses"] > 0
    warm = run_copy(tmp_path)  # unedited: every kernel from the cache, the same numbers
    assert warm["misses"] == 0 and warm["hits"] > 0
    for system in EXAMPLES:
        assert warm[system] == cold[system]

    stream = tmp_path / "simkit" / "systems" / "stream.py"
    text = stream.read_text()
    old = "return z ^ (z >> np.uint64(31))"
    assert text.count(old) == 1  # stream._mix's last shift
    stream.write_text(text.replace(old, "return z ^ (z >> np.uint64(29))"))
    edited = run_copy(tmp_path)  # no cache cleared
    assert edited["misses"] > 0
    for system in EXAMPLES:
        assert len(edited[system]) == len(cold[system])
        assert edited[system] != cold[system], system
    again = run_copy(tmp_path)  # and the edited kernels are cached in turn
    assert again["misses"] == 0 and again["hits"] > 0
    for system in EXAMPLES:
        assert again[system] == edited[system]
