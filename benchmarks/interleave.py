"""Speed of simkit at two or more git revisions in ONE process, taking turns on short runs.

On a shared machine the speed of a process drifts by a third within minutes; two trees
run one after the other (or in separate processes) then differ by more than most changes
do.  Here each revision's ``simkit`` package is copied under a name of its own
(``simkit_rev0``, ``simkit_rev1``, ...: every ``simkit.`` import rewritten), all are
imported into this process, their kernels compiled, and then each plays ``--rounds``
rounds of the same scenario (``engine.simulate``, one worker, the same seed) in turn,
``--turns`` times, the order alternating.  Both see the same background load, so their
ratio is steady: two copies of the same tree measure within about 2% of each other.
Printed: the mean time per round of each and its ratio to the first revision, with the
range of the ratios of single turns (first to third quartile).  A call of
``engine.simulate`` has a fixed cost of about 2 ms (workers, sums, merging): keep the
turns long enough (the default 200,000 rounds) that it does not dilute the ratio.

Usage: python benchmarks/interleave.py REV REV [REV ...] --scenario FILE
       [--rounds 200000] [--turns 60] [--clock wall|cpu]
       (a revision is anything git names, or ``.`` for the working tree)
Example: python benchmarks/interleave.py HEAD~1 . --scenario scenarios/party_vs_wolves.toml
"""

from __future__ import annotations

import argparse
import importlib
import io
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from against import git  # noqa: E402  (this directory's module)

IMPORTS = re.compile(r"\bsimkit(?=\.|\s+import\b|\s*$)", re.MULTILINE)


def export(rev: str, into: Path, name: str) -> None:
    """``rev``'s simkit package as package ``name`` under ``into``."""
    target = into / name
    if rev == ".":
        for path in (ROOT / "simkit").rglob("*.py"):
            dest = target / path.relative_to(ROOT / "simkit")
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(path.read_text())
    else:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", git("rev-parse", "--verify", rev), "simkit"],
            capture_output=True,
            check=True,
        ).stdout  # (bytes: against.git reads text)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(into / "_archive", filter="data")
        (into / "_archive" / "simkit").rename(target)
    for path in target.rglob("*.py"):
        text = path.read_text()
        path.write_text(IMPORTS.sub(name, text))


def simulator(name: str, scenario: str):
    """``engine.simulate`` and the scenario, as the revision's own code loads them."""
    engine = importlib.import_module(f"{name}.engine")
    simulate = (
        getattr(engine, "simulate", None) or importlib.import_module(f"{name}.engine.core").simulate
    )
    load = importlib.import_module(f"{name}.scenario").load_scenario
    return simulate, load(scenario)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revisions", nargs="+", help="git revisions; '.' is the working tree")
    parser.add_argument("--scenario", required=True, help="scenario file (TOML)")
    parser.add_argument("--rounds", type=int, default=200_000, help="rounds per turn")
    parser.add_argument("--turns", type=int, default=60, help="turns of each revision")
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="time a turn by the wall clock or by this process's processor time (cpu: the "
        "other processes of a shared machine do not count)",
    )
    args = parser.parse_args()
    if len(args.revisions) < 2:
        raise SystemExit("give at least two revisions")
    if not Path(args.scenario).is_file():
        raise SystemExit(f"--scenario: no file {args.scenario}")
    with tempfile.TemporaryDirectory(prefix="simkit-interleave-") as tmp:
        names = [f"simkit_rev{k}" for k in range(len(args.revisions))]
        for rev, name in zip(args.revisions, names, strict=True):
            export(rev, Path(tmp), name)
        sys.path.insert(0, tmp)
        runs = [simulator(name, str(Path(args.scenario).resolve())) for name in names]
        seq = np.random.SeedSequence(1)
        for simulate, scenario in runs:  # compile (or load) every revision's kernels
            simulate(scenario, 1000, seq, workers=1)
        times = [[0.0] * args.turns for _ in runs]
        clock = time.process_time if args.clock == "cpu" else time.perf_counter
        for turn in range(args.turns):
            order = range(len(runs)) if turn % 2 == 0 else reversed(range(len(runs)))
            for k in order:
                simulate, scenario = runs[k]
                start = clock()
                simulate(scenario, args.rounds, seq, workers=1)
                times[k][turn] = clock() - start
    labels = [rev if rev == "." else git("rev-parse", "--short", rev) for rev in args.revisions]
    print(
        f"{Path(args.scenario).name}: {args.turns} turns of {args.rounds:,} rounds each, "
        f"one process, one worker"
    )
    header = f"{'revision':<12} {'ns/round':>10} {'x first':>8}  {'single turns (quartiles)':>24}"
    print(header)
    print("-" * len(header))
    base = sum(times[0])
    for label, ts in zip(labels, times, strict=True):
        ratios = [t / t0 for t, t0 in zip(ts, times[0], strict=True)]
        q1, _, q3 = statistics.quantiles(ratios, n=4)
        print(
            f"{label:<12} {sum(ts) / (args.rounds * args.turns) * 1e9:>10.1f} "
            f"{sum(ts) / base:>8.3f}  {q1:>11.3f} .. {q3:.3f}"
        )


if __name__ == "__main__":
    main()
