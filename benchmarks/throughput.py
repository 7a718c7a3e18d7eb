"""Throughput and memory benchmarks of simkit, printed as a table.

For each system, a 4-combatant scenario on 2 sides with default policies
(benchmarks/scenarios/) is run through the command line, ``simkit run --workers 1``,
in a fresh process (start-up, cached JIT load and everything included), and its
wall time is divided by the time numpy takes, in this same script, just to roll the
dice those rounds use (``Generator.integers(..., dtype=np.int8)``, in slices of
10 million to keep memory bounded); so is the simulation time ``simkit run`` itself
prints (the kernels and the merging of chunks, without the process start-up of about
half a second that dominates the wall time of a fast kernel), and the kernel time:
``engine.simulate`` of the same rounds in a fresh process once its kernels are loaded
(numba's own start-up, about 0.2 s, is in the simulation time: the first jitted call of
a process pays it).  Each is timed ``--repeat`` times (default 3),
taking turns, and the best time of each counts.  Peak memory (max RSS of the child
process) of ``simkit run`` is compared between 1 million and 100 million rounds.

With ``--dask`` it measures instead the speed-up of a local Dask cluster of 2 one-thread
worker processes (``--scheduler local``) over one local worker thread, on the same rounds
of the readiness scenario (cluster start-up and JIT loading excluded from both times).

Usage: python benchmarks/throughput.py [--rounds 20000000] [--repeat 3]
       [--systems readiness,vtm,perception] [--skip-memory] [--dask]
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SCENARIOS = {
    "readiness": (HERE / "scenarios" / "four_readiness.toml", 12, 6),
    "vtm": (HERE / "scenarios" / "four_vtm.toml", 4, 10),
    "perception": (HERE / "scenarios" / "four_perception.toml", 4, 10),
}
SLICE = 10_000_000


def simkit_command() -> list[str]:
    exe = Path(sys.executable).with_name("simkit")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "simkit"]


KERNEL = """\
import sys, time
import numpy as np
from simkit.engine import simulate
from simkit.scenario import load_scenario
scenario = load_scenario(sys.argv[1])
seq = np.random.SeedSequence(1)
simulate(scenario, 1000, seq, workers=1)  # numba's start-up and the cached kernels' load
start = time.perf_counter()
simulate(scenario, int(sys.argv[2]), seq, workers=1)
print(time.perf_counter() - start)
"""


def kernel_time(path: Path, rounds: int) -> float:
    """Seconds ``engine.simulate`` takes for ``rounds`` rounds on one worker in a fresh
    process once its kernels are loaded: the kernels, chunking and merging of sums."""
    out = subprocess.run(
        [sys.executable, "-c", KERNEL, str(path), str(rounds)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip())


SIMULATION = re.compile(r"rounds, seed \S+, ([0-9.]+) s \(")  # simkit run's summary line


def run_child(
    args: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> tuple[float, float, float]:
    """Wall time, CPU time (user + system, s) and, for ``simkit run``, the simulation
    time it reports (the kernels and the merging of chunks: no start-up, no output) of
    one child process (``env`` and ``cwd`` as for subprocess.run)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"benchmark run failed: {' '.join(args)}\n{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    found = SIMULATION.search(proc.stdout)
    return wall, cpu, float(found.group(1)) if found else float("nan")


def peak_rss(args: list[str]) -> float:
    """Peak RSS (MiB) of ``args`` run in a fresh helper process."""
    code = (
        "import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], check=True, capture_output=True)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    )
    return int(out.stdout.strip()) / 1024


def numpy_dice_time(n_dice: int, sides: int, one_call: bool = False) -> tuple[float, float]:
    """Wall and CPU time numpy takes to roll ``n_dice`` dice, in slices of 10 million
    (the faster way) or, with ``one_call``, in one array of all of them."""
    rng = np.random.default_rng(0)
    start, cpu = time.perf_counter(), time.process_time()
    if one_call:
        rng.integers(1, sides + 1, size=n_dice, dtype=np.int8)
    left = n_dice if not one_call else 0
    while left > 0:
        k = min(SLICE, left)
        rng.integers(1, sides + 1, size=k, dtype=np.int8)
        left -= k
    return time.perf_counter() - start, time.process_time() - cpu


def dask_speedup(rounds: int, n_workers: int = 2) -> None:
    """Time ``rounds`` rounds on one local worker and on a local Dask cluster."""
    from distributed import Client, LocalCluster

    from simkit import engine
    from simkit.scenario import load_scenario

    scenario = load_scenario(SCENARIOS["readiness"][0])
    seq = np.random.SeedSequence(1)
    engine.simulate(scenario, 1000, seq, workers=1)  # compile or load the kernels once
    start = time.perf_counter()
    local = engine.simulate(scenario, rounds, seq, workers=1)
    one = time.perf_counter() - start

    start = time.perf_counter()
    with (
        LocalCluster(
            n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        Client(cluster, set_as_default=False) as client,
    ):
        client.run(engine.simulate, scenario, 1000, seq, 1)  # load the kernels on every worker
        ready = time.perf_counter() - start
        start = time.perf_counter()
        remote = engine.simulate(scenario, rounds, seq, scheduler=client)
        many = time.perf_counter() - start
    same = all(
        np.array_equal(getattr(local.sums, f), getattr(remote.sums, f))
        for f in ("s1", "s2", "sl", "sx", "tot")
    )
    chunks = len(engine.chunk_sizes(rounds))
    print(f"Dask speed-up, readiness, {rounds:,} rounds ({chunks} chunks), {os.cpu_count()} cores")
    print(f"  1 local worker thread:        {one:8.2f} s  ({rounds / one:,.0f} rounds/s)")
    print(
        f"  {n_workers}-worker local Dask cluster: {many:8.2f} s  ({rounds / many:,.0f} rounds/s; "
        f"start-up {ready:.1f} s not included)"
    )
    print(f"  speed-up: {one / many:.2f}x; sums bit-identical: {'yes' if same else 'NO'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20_000_000)
    parser.add_argument("--memory-rounds", type=int, default=100_000_000)
    parser.add_argument("--systems", default="readiness,vtm,perception")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument(
        "--repeat", type=int, default=3, help="timed runs of each kind; the best counts"
    )
    parser.add_argument(
        "--dask",
        action="store_true",
        help="only measure a 2-worker local Dask cluster against one local worker",
    )
    parser.add_argument("--dask-rounds", type=int, default=16 * 262_144)
    args = parser.parse_args()
    if args.dask:
        dask_speedup(args.dask_rounds)
        return
    # Byte-compile the package as a regular install does (an editable install, or a
    # PYTHONDONTWRITEBYTECODE environment, would otherwise compile it in every run).
    compileall.compile_dir(str(HERE.parent / "simkit"), quiet=1)
    cmd = simkit_command()
    systems = [s for s in args.systems.split(",") if s]
    print(f"simkit throughput, {args.rounds:,} rounds, --workers 1, {os.cpu_count()} cores")
    print("wall = elapsed seconds; cpu = seconds of processor time (robust to a busy machine)")
    print("numpy = Generator.integers(..., dtype=np.int8) for the same dice, 10M per call")
    print(f"best of {args.repeat} runs each, simkit and numpy taking turns")
    print("sim = the simulation time simkit run prints (no process start-up or output, but")
    print("numba's start-up and the cached kernels' load, about 0.2 s, included)")
    print("kernel = engine.simulate of the same rounds once its kernels are loaded")
    print("x wall, x cpu, x sim, x kernel: simkit's time over numpy's")
    header = (
        f"{'system':<10} {'wall':>6} {'cpu':>6} {'sim':>6} {'kernel':>6} {'rounds/s':>11} "
        f"{'numpy':>6} {'cpu':>6} {'x wall':>6} {'x cpu':>6} {'x sim':>6} {'x kernel':>8}"
    )
    print(header)
    print("-" * len(header))
    for system in systems:
        path, dice_per_round, sides = SCENARIOS[system]
        if not path.exists():
            print(f"{system:<11} (no benchmark scenario {path.name})")
            continue
        # warm the JIT cache so that the timed run loads compiled code, as users see it
        run_child([*cmd, "run", str(path), "--rounds", "1000", "--workers", "1"])
        # best of --repeat, simkit and numpy taking turns (a busy moment of a shared
        # machine then slows one attempt of each, not the ratio)
        runs, dice, kernels = [], [], []
        for _ in range(args.repeat):
            runs.append(
                run_child([*cmd, "run", str(path), "--rounds", str(args.rounds), "--workers", "1"])
            )
            dice.append(numpy_dice_time(args.rounds * dice_per_round, sides))
            kernels.append(kernel_time(path, args.rounds))
        wall, cpu = min(r[0] for r in runs), min(r[1] for r in runs)
        sim = min(r[2] for r in runs)
        kernel = min(kernels)
        dice_wall, dice_cpu = min(w for w, _ in dice), min(c for _, c in dice)
        print(
            f"{system:<10} {wall:>6.2f} {cpu:>6.2f} {sim:>6.2f} {kernel:>6.2f} "
            f"{args.rounds / wall:>11,.0f} {dice_wall:>6.3f} {dice_cpu:>6.3f} "
            f"{wall / dice_wall:>6.1f} {cpu / dice_cpu:>6.1f} {sim / dice_wall:>6.1f} "
            f"{kernel / dice_wall:>8.1f}"
        )
        if system == "readiness":
            one_wall = min(
                numpy_dice_time(args.rounds * dice_per_round, sides, one_call=True)[0]
                for _ in range(args.repeat)
            )
            print(
                f"{'':<11} (numpy in one call of {args.rounds * dice_per_round:,} dice: "
                f"{one_wall:.3f} s wall, ratio {wall / one_wall:.1f})"
            )
    if args.skip_memory:
        return
    path = SCENARIOS["readiness"][0]
    small = peak_rss([*cmd, "run", str(path), "--rounds", "1000000", "--workers", "1"])
    big = peak_rss([*cmd, "run", str(path), "--rounds", str(args.memory_rounds), "--workers", "1"])
    print()
    print("peak memory of simkit run (readiness, --workers 1)")
    print(f"  1,000,000 rounds: {small:8.1f} MiB")
    print(f"  {args.memory_rounds:,} rounds: {big:8.1f} MiB  (difference {big - small:+.1f} MiB)")


if __name__ == "__main__":
    main()
