"""Cold and warm start of every kernel path, printed as a table.

For each system and each path a scenario can reach (no holds / holds / trace, ...),
``simkit run SCENARIO --rounds 1000 --workers 1`` (or ``simkit trace``) is started in a
fresh process with an EMPTY numba cache (``NUMBA_CACHE_DIR`` = a new temporary
directory): its wall time is the cold compile, its peak memory (max RSS) the compile's.
Then the same command again with that cache: the warm start.  Each path is measured
``--repeat`` times (default 2, every time with a new empty cache; the paths take turns)
and the best counts, with the processor time (user + system) of that run: a busy
machine stretches wall times by a third or more.

Usage: python benchmarks/compile.py [--paths 'readiness, holds; vtm'] [--repeat 2]
       (labels as printed, separated by ';')
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent

# (label, command after `simkit`)
PATHS = {
    "readiness, no holds": ["run", str(HERE / "scenarios/four_readiness.toml")],
    "readiness, no holds, policies": ["run", str(ROOT / "tests/data/rev1/readiness_nohold.toml")],
    "readiness, holds": ["run", str(ROOT / "scenarios/party_vs_wolves.toml")],
    "readiness, trace": ["trace", str(ROOT / "scenarios/party_vs_wolves.toml")],
    "vtm": ["run", str(HERE / "scenarios/four_vtm.toml")],
    "vtm, delays and aborts": ["run", str(ROOT / "scenarios/vtm_gangrel_ambush.toml")],
    "vtm, trace": ["trace", str(ROOT / "scenarios/vtm_gangrel_ambush.toml")],
    "perception": ["run", str(HERE / "scenarios/four_perception.toml")],
    "perception, group": ["run", str(ROOT / "scenarios/perception_party_vs_wolves.toml")],
    "perception, trace": ["trace", str(ROOT / "scenarios/perception_party_vs_wolves.toml")],
}


def simkit_command() -> list[str]:
    exe = Path(sys.executable).with_name("simkit")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "simkit"]


def measure(args: list[str], cache: str) -> tuple[float, float, float]:
    """Wall time (s), processor time (s) and peak RSS (MB) of one fresh process with numba
    cache ``cache``."""
    code = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "w = time.perf_counter() - t\n"
        "if p.returncode: sys.exit(p.stderr)\n"
        "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(w, u.ru_utime + u.ru_stime, u.ru_maxrss)\n"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env
    )
    if out.returncode:
        raise SystemExit(f"failed: {' '.join(args)}\n{out.stderr}")
    wall, cpu, rss = out.stdout.split()
    return float(wall), float(cpu), int(rss) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--paths", help="labels as printed, separated by ';' (default: all)")
    parser.add_argument("--repeat", type=int, default=2, help="cold starts per path (best)")
    args = parser.parse_args()
    chosen = [p.strip() for p in args.paths.split(";")] if args.paths else list(PATHS)
    unknown = [p for p in chosen if p not in PATHS]
    if unknown:
        parser.error(f"unknown path {unknown[0]!r}; paths: {'; '.join(PATHS)}")
    repeat = max(1, args.repeat)
    commands = {}
    for label in chosen:
        command = [*simkit_command(), *PATHS[label]]
        if command[len(simkit_command())] == "run":
            command += ["--rounds", "1000", "--workers", "1"]
        commands[label] = command
    best: dict[str, tuple[float, float, float, float]] = {}
    for _ in range(repeat):  # every path once per pass: they take turns
        for label, command in commands.items():
            with tempfile.TemporaryDirectory(prefix="simkit-cold-") as cache:
                cold, cpu, rss = measure(command, cache)
                warm, _, _ = measure(command, cache)
            if label not in best or cold < best[label][0]:
                best[label] = (cold, cpu, rss, warm)
    print(f"Cold compile (empty numba cache) and warm start, fresh processes, best of {repeat}")
    header = f"{'path':<32} {'cold s':>8} {'cpu s':>7} {'peak MB':>9} {'warm s':>8}"
    print(header)
    print("-" * len(header))
    for label in chosen:
        cold, cpu, rss, warm = best[label]
        print(f"{label:<32} {cold:>8.1f} {cpu:>7.1f} {rss:>9.0f} {warm:>8.2f}", flush=True)


if __name__ == "__main__":
    main()
