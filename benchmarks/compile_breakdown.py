"""Where the cold compile of a kernel path goes: processor seconds per phase and per
compiled function.

Each path (the labels of benchmarks/compile.py) runs in a fresh child process with an
EMPTY numba cache (``NUMBA_CACHE_DIR`` = a new temporary directory), ``simkit`` called
in that process.  The child listens to numba's compile events (numba.core.event:
``numba:compile`` per function and signature, ``numba:run_pass`` per compiler pass,
``numba:llvm_lock`` around LLVM's work) and charges the processor time
(``time.process_time``) between them to the innermost function being compiled, so a
caller's time excludes the callees compiled while it is typed.  The parent counts the
child's processor time (``resource.getrusage(RUSAGE_CHILDREN)``); each path is run
``--repeat`` times (the paths taking turns) and the run of least processor time is
shown:

* the phases: importing simkit (before the command), numba's type inference, its
  lowering to LLVM IR, LLVM (optimisation and machine code, under the LLVM lock), the
  rest of numba's compile passes, and everything else (the command's own work, saving
  the cache, ...);
* every compiled function: its signatures (a function compiled for two argument
  types costs twice), its own processor time (``self``), and of that the type
  inference and LLVM, largest first (machine code 0 for a link-only library,
  ``support.njit(link_only=True)``: its callers emit it); functions compiled for more
  than one signature are listed with their signatures (``--signatures``);
* numba's compiler passes by processor time, LLVM's work excluded (``--passes``).

Processor seconds hold steady on a loaded machine where wall seconds stretch.

Usage: python benchmarks/compile_breakdown.py [--paths 'readiness, holds; vtm']
       [--repeat 2] [--top 25] [--signatures] [--passes] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compile import PATHS  # noqa: E402  (benchmarks/compile.py: the same paths)

STAGES = ("function opt", "module opt", "machine code")
PHASES = ("import", "type inference", "lowering", "llvm", "other passes", "rest")


def child(label: str, out: str) -> None:
    """Run path ``label`` in this process, listening to numba's events; write the
    breakdown to ``out`` (JSON)."""
    start = time.process_time()
    from numba.core import event as ev
    from numba.core.dispatcher import Dispatcher

    import simkit  # noqa: F401
    from simkit.cli import main

    imported = time.process_time()
    frames: list[dict] = []  # the functions being compiled, innermost last
    functions: dict[str, dict] = {}
    phase = {p: 0.0 for p in PHASES}
    by_pass: dict[str, float] = {}  # processor seconds per numba pass (innermost, not LLVM)
    passes: list[tuple[str, float]] = []  # (pass name, start) of the running passes
    llvm: list[float] = []

    def entry(dispatcher: Dispatcher, args: object) -> dict:
        py = dispatcher.py_func
        name = f"{py.__module__.removeprefix('simkit.systems.')}.{py.__qualname__}"
        name = name.replace(".<locals>", "")
        record = functions.setdefault(
            name,
            {"signatures": [], "self": 0.0, "inference": 0.0, "llvm": 0.0, "lowering": 0.0}
            | {k: 0.0 for k in STAGES},
        )
        record["signatures"].append(str(args))
        return record

    def charge(seconds: float) -> None:
        """Time since the last event, to the innermost function and pass."""
        if frames:
            frames[-1]["record"]["self"] += seconds
            if stage:  # LLVM's part: optimising functions, the linked module, machine code
                frames[-1]["record"][stage[-1]] += seconds
        if llvm:
            key = "llvm"
        elif passes:
            name = passes[-1][0]
            by_pass[name] = by_pass.get(name, 0.0) + seconds
            key = {"nopython_type_inference": "inference", "native_lowering": "lowering"}.get(
                name, "other"
            )
        else:
            key = None
        if key and frames:
            record = frames[-1]["record"]
            if key in record:
                record[key] += seconds
        named = {
            "llvm": "llvm",
            "inference": "type inference",
            "lowering": "lowering",
            "other": "other passes",
        }
        if key:
            phase[named[key]] += seconds

    last = [time.process_time()]

    class Listener(ev.Listener):
        def __init__(self, kind: str) -> None:
            self.kind = kind

        def _tick(self) -> None:
            now = time.process_time()
            charge(now - last[0])
            last[0] = now

        def on_start(self, event: ev.Event) -> None:
            self._tick()
            if self.kind == "numba:compile":
                data = event.data
                frames.append({"record": entry(data["dispatcher"], data["args"])})
            elif self.kind == "numba:run_pass":
                passes.append((event.data["name"].split(" [")[0], 0.0))
            else:
                llvm.append(0.0)

        def on_end(self, event: ev.Event) -> None:
            self._tick()
            if self.kind == "numba:compile":
                frames.pop()
            elif self.kind == "numba:run_pass":
                passes.pop()
            else:
                llvm.pop()

    for kind in ("numba:compile", "numba:run_pass", "numba:llvm_lock"):
        ev.register(kind, Listener(kind))
    stage: list[str] = []  # the LLVM stage running (numba's code library methods)

    def staged(method, name: str):
        def run(self, *args, **kwargs):
            now = time.process_time()
            charge(now - last[0])
            last[0] = now
            stage.append(name)
            try:
                return method(self, *args, **kwargs)
            finally:
                now = time.process_time()
                charge(now - last[0])
                last[0] = now
                stage.pop()

        return run

    from numba.core import codegen

    for cls, attr, name in (
        (codegen.CPUCodeLibrary, "_optimize_functions", "function opt"),
        (codegen.CPUCodeLibrary, "_optimize_final_module", "module opt"),
        (codegen.JITCodeLibrary, "_finalize_specific", "machine code"),
    ):
        setattr(cls, attr, staged(getattr(cls, attr), name))
    command = list(PATHS[label])
    if command[0] == "run":
        command += ["--rounds", "1000", "--workers", "1"]
    last[0] = time.process_time()
    with open(os.devnull, "w") as sink:
        saved = sys.stdout
        sys.stdout = sink
        try:
            status = main(command)
        finally:
            sys.stdout = saved
    if status:
        raise SystemExit(f"{label}: simkit {' '.join(command)} exited {status}")
    end = time.process_time()
    phase["import"] = imported - start
    phase["rest"] = (end - imported) - sum(phase[p] for p in PHASES if p not in ("import", "rest"))
    with open(out, "w") as f:
        json.dump(
            {"cpu_self": end - start, "phase": phase, "functions": functions, "passes": by_pass},
            f,
        )


def run_child(label: str) -> dict:
    """One cold run of ``label`` in a fresh process with an empty numba cache: the child's
    breakdown, with its processor seconds (RUSAGE_CHILDREN) and wall seconds."""
    with tempfile.TemporaryDirectory(prefix="simkit-breakdown-") as cache:
        out = str(Path(cache) / "breakdown.json")
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        done = subprocess.run(
            [sys.executable, __file__, "--child", label, out],
            env=env,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode:
            raise SystemExit(f"failed: {label}\n{done.stderr}")
        with open(out) as f:
            result = json.load(f)
    result["cpu"] = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    result["wall"] = wall
    result["rss_mb"] = after.ru_maxrss / 1024
    return result


def show(label: str, r: dict, top: int, signatures: bool, passes: bool = False) -> None:
    phase = r["phase"]
    funcs = r["functions"]
    compiles = sum(len(f["signatures"]) for f in funcs.values())
    print(f"\n== {label}: {r['cpu']:.1f} cpu s ({r['wall']:.1f} s wall), "
          f"{len(funcs)} functions, {compiles} compiles")  # fmt: skip
    print("   " + ", ".join(f"{p} {phase[p]:.1f}" for p in PHASES))
    print("   of llvm: " + ", ".join(
        f"{k} {sum(f[k] for f in funcs.values()):.1f}" for k in STAGES))  # fmt: skip
    header = (
        f"   {'function':<44} {'sigs':>4} {'self s':>7} {'infer':>6} {'lower':>6} {'llvm':>6}"
        f" {'fn opt':>6} {'module':>6} {'mcode':>6}"
    )
    print(header)
    ranked = sorted(funcs.items(), key=lambda kv: -kv[1]["self"])
    for name, f in ranked[:top]:
        figures = [f[k] for k in ("self", "inference", "lowering", "llvm", *STAGES)]
        print(f"   {name[-44:]:<44} {len(f['signatures']):>4} {figures[0]:>7.2f} "
              + " ".join(f"{x:>6.2f}" for x in figures[1:]))  # fmt: skip
    rest = ranked[top:]
    if rest:
        print(f"   {f'({len(rest)} more)':<44} {sum(len(f['signatures']) for _, f in rest):>4} "
              f"{sum(f['self'] for _, f in rest):>7.2f}")  # fmt: skip
    if passes:  # numba's passes (LLVM's work excluded), largest first
        ranked_passes = sorted(r.get("passes", {}).items(), key=lambda kv: -kv[1])
        print("   numba passes: " + ", ".join(f"{k} {v:.2f}" for k, v in ranked_passes[:12]))
    if signatures:
        for name, f in ranked:
            if len(f["signatures"]) > 1:
                print(f"   {name}:")
                for s in f["signatures"]:
                    print(f"      {s}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--paths", help="labels as printed, separated by ';' (default: all)")
    parser.add_argument("--repeat", type=int, default=2, help="cold runs per path (least cpu)")
    parser.add_argument("--top", type=int, default=25, help="functions listed per path")
    parser.add_argument("--signatures", action="store_true", help="list repeated signatures")
    parser.add_argument("--passes", action="store_true", help="list numba's passes by time")
    parser.add_argument("--json", help="also write every path's breakdown here")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    chosen = [p.strip() for p in args.paths.split(";")] if args.paths else list(PATHS)
    unknown = [p for p in chosen if p not in PATHS]
    if unknown:
        parser.error(f"unknown path {unknown[0]!r}; paths: {'; '.join(PATHS)}")
    best: dict[str, dict] = {}
    for _ in range(max(1, args.repeat)):  # the paths take turns
        for label in chosen:
            r = run_child(label)
            if label not in best or r["cpu"] < best[label]["cpu"]:
                best[label] = r
    print(f"Cold compile breakdown (empty numba cache, fresh process), least cpu of "
          f"{max(1, args.repeat)}; seconds are processor seconds")  # fmt: skip
    for label in chosen:
        show(label, best[label], args.top, args.signatures, args.passes)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(best, f, indent=1)


if __name__ == "__main__":
    main()
