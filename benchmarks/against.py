"""Speed of simkit at several git revisions, measured side by side in one run.

Each revision (any git revision name, or ``.`` for the working tree) is checked out as a
detached worktree in a temporary directory.  For each system, the benchmark scenario of
``make bench`` (benchmarks/scenarios/, the same file for every revision) runs through
``simkit run --workers 1`` in a fresh process, with ``PYTHONPATH`` at that revision's tree:
same interpreter, same numpy and numba, only simkit differs.  Every revision is warmed
first (its kernels compiled into its own tree's cache, not timed), then the revisions take
turns ``--repeat`` times, so that a busy moment of a shared machine slows one attempt of
each rather than one revision; the best wall time, processor time and the simulation time
``simkit run`` prints count, each against the first revision's.

Usage: python benchmarks/against.py REV [REV ...] [--rounds 20000000] [--repeat 5]
       [--systems readiness,vtm,perception]
Example: python benchmarks/against.py 8a9a920 dd584c8 .
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from throughput import SCENARIOS, run_child  # noqa: E402  (this directory's module)


def git(*args: str) -> str:
    out = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout.strip()


def checkout(rev: str, into: Path) -> Path:
    """The tree of ``rev`` (``.``: the working tree as it is) as a directory."""
    if rev == ".":
        return ROOT
    git("worktree", "add", "--quiet", "--detach", str(into), git("rev-parse", "--verify", rev))
    return into


def env_for(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree)}


def command(tree: Path, scenario: Path, rounds: int) -> tuple[list[str], dict[str, str]]:
    args = [sys.executable, "-m", "simkit", "run", str(scenario), "--rounds", str(rounds)]
    return [*args, "--workers", "1"], env_for(tree)


def check_import(tree: Path, cwd: Path) -> None:
    """The child imports simkit from ``tree``, not from the installed package."""
    out = subprocess.run(
        [sys.executable, "-c", "import simkit; print(simkit.__file__)"],
        capture_output=True,
        text=True,
        env=env_for(tree),
        cwd=cwd,
    )
    where = Path(out.stdout.strip()).resolve()
    if out.returncode != 0 or tree.resolve() not in where.parents:
        raise SystemExit(f"{tree}: simkit imported from {where or out.stderr.strip()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revisions", nargs="+", help="git revisions; '.' is the working tree")
    parser.add_argument("--rounds", type=int, default=20_000_000)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each revision")
    parser.add_argument("--systems", default="readiness,vtm,perception")
    args = parser.parse_args()
    systems = [s for s in args.systems.split(",") if s]
    unknown = [s for s in systems if s not in SCENARIOS]
    if unknown:
        raise SystemExit(f"--systems: unknown {', '.join(unknown)} (known: {', '.join(SCENARIOS)})")
    labels = [rev if rev == "." else git("rev-parse", "--short", rev) for rev in args.revisions]
    with tempfile.TemporaryDirectory(prefix="simkit-against-") as tmp:
        work = Path(tmp)
        trees: list[Path] = []
        try:
            for k, rev in enumerate(args.revisions):
                trees.append(checkout(rev, work / f"tree{k}"))
            for tree in trees:
                check_import(tree, work)
            print(
                f"simkit at {len(trees)} revisions: simkit run --workers 1, "
                f"{args.rounds:,} rounds, best of {args.repeat}, taking turns, "
                f"{os.cpu_count()} cores"
            )
            print("wall, cpu (processor time) and sim (what simkit run prints) in seconds;")
            print(f"x: against {labels[0]}")
            header = f"{'system':<11} {'revision':<10} {'wall':>6} {'cpu':>6} {'sim':>6} "
            header += f"{'x wall':>6} {'x cpu':>6} {'x sim':>6}"
            print(header)
            print("-" * len(header))
            for system in systems:
                scenario = SCENARIOS[system][0]
                for tree in trees:  # warm: each tree compiles into its own cache
                    cmd, env = command(tree, scenario, 1000)
                    run_child(cmd, env=env, cwd=work)
                runs: list[list[tuple[float, float, float]]] = [[] for _ in trees]
                for _ in range(args.repeat):
                    for k, tree in enumerate(trees):
                        cmd, env = command(tree, scenario, args.rounds)
                        runs[k].append(run_child(cmd, env=env, cwd=work))
                best = [tuple(min(r[m] for r in rs) for m in range(3)) for rs in runs]
                for k, (wall, cpu, sim) in enumerate(best):
                    w0, c0, s0 = best[0]
                    print(
                        f"{system:<11} {labels[k]:<10} {wall:>6.2f} {cpu:>6.2f} {sim:>6.2f} "
                        f"{wall / w0:>6.3f} {cpu / c0:>6.3f} {sim / s0:>6.3f}"
                    )
        finally:
            for tree in trees:
                if tree != ROOT:
                    git("worktree", "remove", "--force", str(tree))


if __name__ == "__main__":
    main()
