"""The ``simkit`` command line: a thin layer over the public Python API.

Every bad input (scenario file or command-line value) ends in exactly one line on
stderr, ``simkit: error: <message>``, and exit status 2, before anything is
simulated or written.  Ctrl-C ends with one line and status 130.  Any other
exception is a bug and is left to raise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from simkit.engine.distributed import SchedulerError
from simkit.output.progress import ProgressBar
from simkit.scenario import Scenario, ScenarioError

PROG = "simkit"
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130


class CliError(Exception):
    """A bad command-line value; the message names the option and what is allowed."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line, without the usage block."""

    commands: tuple[str, ...] = ()

    def error(self, message: str) -> NoReturn:
        # argparse says "argument --rounds: ..."; the option name alone is clearer.
        message = message.removeprefix("argument ")
        if message.endswith("required: COMMAND"):
            message = "COMMAND missing; allowed: " + ", ".join(self.commands)
        raise CliError(message)


def _integer(low: int, allowed: str) -> Callable[[str], int]:
    """An argparse type: an integer >= ``low``; the error says what is allowed."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low:
            raise argparse.ArgumentTypeError(f"expected {allowed}, got {text!r}")
        return value

    return parse


_positive = _integer(1, "a positive integer")
_non_negative = _integer(0, "a non-negative integer")
_SCHEDULER_HELP = (
    "play the chunks on a Dask cluster: a scheduler address (tcp://HOST:8786) or 'local' "
    "(K one-thread worker processes on this machine); same results as without it; needs "
    "pip install 'simkit[dask]'"
)


def _workers(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--workers", type=_positive, metavar="K", help="worker threads (default: all cores)"
    )


def _seed_and_workers(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--seed", type=_non_negative, metavar="S", help="random seed (default: the scenario's)"
    )
    _workers(p)


def build_parser() -> _Parser:
    """The argument parser of every subcommand."""
    parser = _Parser(
        prog=PROG,
        description="Monte Carlo balance analysis of tabletop RPG initiative systems.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "run",
        help="simulate a scenario and print a per-combatant table",
        description="Simulate a scenario and print every metric with its 95% interval.",
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (TOML)")
    p.add_argument(
        "--rounds", type=_positive, metavar="N", help="rounds to play (default: the scenario's)"
    )
    _seed_and_workers(p)
    p.add_argument("--out", metavar="DIR", help="also write DIR/summary.json and DIR/metrics.csv")
    p.add_argument("--scheduler", metavar="ADDRESS", help=_SCHEDULER_HELP)
    p.set_defaults(handler=_cmd_run)

    p = sub.add_parser(
        "validate",
        help="check a scenario file, run nothing",
        description="Check a scenario file and print a one-line summary; nothing is run.",
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (TOML)")
    p.set_defaults(handler=_cmd_validate)

    p = sub.add_parser(
        "sweep",
        help="run a scenario over a grid of field values (common random numbers)",
        description="Run a scenario at every point of a grid of field values, every point "
        "with the same seed, and print first_action, actions and attacked_before_acting.",
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (TOML)")
    p.add_argument(
        "--vary",
        action="append",
        metavar="SPEC",
        help="TARGET.FIELD=VALUES, e.g. 'Wolf.readiness=1..5' or 'rules.order=dynamic,chain'; "
        "repeat for a grid (default: vary of the file's [sweep] table)",
    )
    p.add_argument(
        "--rounds",
        type=_positive,
        metavar="N",
        help="rounds per grid point (default: the [sweep] table's, else the scenario's)",
    )
    _seed_and_workers(p)
    p.add_argument("--out", metavar="DIR", help="also write DIR/sweep.csv and plots (PNG)")
    p.add_argument("--scheduler", metavar="ADDRESS", help=_SCHEDULER_HELP)
    p.set_defaults(handler=_cmd_sweep)

    p = sub.add_parser(
        "compare",
        help="paired differences B - A of two scenarios (common random numbers)",
        description="Play two scenarios with the same seed and print the paired differences "
        "B - A of every metric with their 95% intervals.",
    )
    p.add_argument("scenario", metavar="A", help="scenario file A (TOML)")
    p.add_argument("other", metavar="B", nargs="?", help="scenario file B (or use --set)")
    p.add_argument(
        "--set",
        action="append",
        dest="changes",
        metavar="SPEC",
        help="B is A with this change: 'Gunnar.hold=never', '*.advantage=1', 'rules.order=chain'; "
        "repeatable",
    )
    p.add_argument(
        "--rounds", type=_positive, metavar="N", help="rounds of each run (default: A's)"
    )
    p.add_argument("--seed", type=_non_negative, metavar="S", help="random seed (default: A's)")
    p.add_argument(
        "--all", action="store_true", help="print every metric (acts_before, actions_dist too)"
    )
    p.add_argument("--out", metavar="DIR", help="also write DIR/compare.csv")
    p.set_defaults(handler=_cmd_compare)

    p = sub.add_parser(
        "report",
        help="write an HTML + Markdown report with plots and CSV tables",
        description=(
            "Simulate a scenario (as written, without holding, and with each side's "
            "initiative stat changed by up to 2) and write DIR/report.html (self-contained), "
            "DIR/report.md with its PNG plots, and the data tables as CSV."
        ),
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (TOML)")
    p.add_argument(
        "--rounds", type=_positive, metavar="N", help="rounds per run (default: the scenario's)"
    )
    _seed_and_workers(p)
    p.add_argument("--out", metavar="DIR", required=True, help="directory to write the report to")
    p.set_defaults(handler=_cmd_report)

    p = sub.add_parser(
        "bench",
        help="rounds per second of each system on this machine",
        description="Measure rounds per second of each initiative system on this machine.",
    )
    p.add_argument("--rounds", type=_positive, metavar="N", help="rounds per measurement")
    _workers(p)
    p.set_defaults(handler=_cmd_bench)
    parser.commands = tuple(sub.choices)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    try:
        args = build_parser().parse_args(argv)
        return args.handler(args)
    except ScenarioError as exc:
        first, *rest = str(exc).split("\n")
        _error(first, details=tuple(r.strip() for r in rest))
        return EXIT_ERROR
    except CliError as exc:
        _error(str(exc))
        return EXIT_ERROR
    except SchedulerError as exc:  # dask missing, or the scheduler cannot be reached
        _error(f"--scheduler: {exc}")
        return EXIT_ERROR
    except KeyboardInterrupt:
        _error("interrupted", prefix=f"{PROG}: ")
        return EXIT_INTERRUPTED
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else 0
    except BrokenPipeError:  # `simkit run ... | head`: the reader left, not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def console_main() -> NoReturn:
    """The ``simkit`` command: ``main``, then exit without interpreter finalisation.

    Every output file is complete and closed by the time ``main`` returns (they are
    written atomically), worker threads have finished and any Dask connection is
    closed.  What finalisation would still do -- tearing down the JIT-compiled code
    and a few thousand module objects -- takes 0.1-0.2 s, a tenth of a short run, and
    changes nothing, so the process ends right after flushing its output.
    """
    status = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # the reader left; nothing more to say
        pass
    os._exit(status)


def _error(message: str, prefix: str = f"{PROG}: error: ", details: tuple[str, ...] = ()) -> None:
    """One ``simkit: error:`` line (control characters escaped), then one indented line
    per detail (every problem of a scenario file)."""
    line = _printable(message)
    lines = [prefix + line] + ["  " + _printable(d) for d in details]
    print("\n".join(lines), file=sys.stderr, flush=True)


def _printable(text: str) -> str:
    """``text`` on one line: newlines and other control characters escaped."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def _print_and_write(result: Any, out: Path | None) -> int:
    """Write a result's files into ``out`` (if given), then print its table."""
    files: list[Path] = []
    if out is not None:
        try:
            files = result.write(out)
        except OSError as exc:
            raise CliError(f"--out: cannot write to '{out}': {exc.strerror or exc}") from None
    print(result.format_table(), flush=True)
    if files:
        print("wrote " + ", ".join(str(f) for f in files), file=sys.stderr)
    return 0


def validate(path: str) -> Scenario:
    from simkit.api import validate as _validate

    return _validate(path)


def _cmd_run(args: argparse.Namespace) -> int:
    from simkit.api import run

    scenario = validate(args.scenario)
    out = _out_dir(args.out)
    rounds = args.rounds if args.rounds is not None else scenario.rounds
    seed = args.seed if args.seed is not None else scenario.seed
    with ProgressBar(rounds) as bar:
        result = run(
            scenario,
            rounds=rounds,
            rng=seed,
            workers=args.workers,
            progress=bar,
            scheduler=args.scheduler,
        )
    return _print_and_write(result, out)


def _cmd_report(args: argparse.Namespace) -> int:
    from simkit.analysis.report import make_report, planned_rounds

    scenario = validate(args.scenario)
    out = _out_dir(args.out)
    rounds = args.rounds if args.rounds is not None else scenario.rounds
    if rounds < 2:
        raise CliError(f"--rounds: a report needs at least 2 rounds, got {rounds}")
    seed = args.seed if args.seed is not None else scenario.seed
    with ProgressBar(planned_rounds(scenario, rounds)) as bar:
        rendered = make_report(scenario, rounds, seed, workers=args.workers, progress=bar)
    try:
        path = rendered.write(out)
    except OSError as exc:
        raise CliError(f"--out: cannot write to '{out}': {exc.strerror or exc}") from None
    print(rendered.data.result.format_table())
    print("\nFindings:")
    for line in rendered.findings:
        print(f"- {line}")
    plots = sum(name.endswith(".png") for name in rendered.files)
    tables = sum(name.endswith(".csv") for name in rendered.files)
    print(f"report: {path}")
    print(f"also: {path.parent / 'report.md'}, {plots} PNG plots and {tables} CSV tables beside it")
    return 0


def _out_dir(value: str | None) -> Path | None:
    """Check ``--out`` before simulating, so that a bad one costs no run."""
    if value is None:
        return None
    out = Path(value)
    if out.exists() and not out.is_dir():
        raise CliError(f"--out: '{out}' exists and is not a directory; allowed: a directory")
    return out


def _cmd_validate(args: argparse.Namespace) -> int:
    scenario = validate(args.scenario)
    print(f"OK {args.scenario}: {describe(scenario)}")
    return 0


def describe(scenario: Scenario) -> str:
    """One line: name, system, combatants and sides, rules with defaults filled in."""
    per_side = Counter(c.side for c in scenario.combatants)
    sides = ", ".join(f"{side} {per_side[side]}" for side in scenario.sides)
    rules = ", ".join(f"{k}={_toml(v)}" for k, v in scenario.rules.items()) or "none"
    n = len(scenario.combatants)
    return (
        f"{_toml(scenario.name)}, system {scenario.system}, {n} combatants on "
        f"{len(scenario.sides)} sides ({sides}), rules: {rules}"
    )


def _toml(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _cmd_bench(args: argparse.Namespace) -> int:
    from simkit import bench  # imported here: only `simkit bench` needs it

    status = bench.main(args.rounds, args.workers)
    return status if isinstance(status, int) else 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    from simkit.api import sweep
    from simkit.scenario import grid_scenarios, parse_vary, sweep_table

    scenario = validate(args.scenario)
    out = _out_dir(args.out)
    # Check every spec and grid point before anything runs (sweep() does it again).
    file_vary, file_rounds = sweep_table(scenario)
    if args.vary is not None:
        axes = parse_vary(scenario, args.vary, label="--vary")
    elif file_vary is not None:
        axes = parse_vary(scenario, file_vary, label=f"{scenario.source}: sweep.vary")
    else:
        raise CliError(
            "--vary: missing; give --vary 'COMBATANT.FIELD=VALUES' (e.g. 'Wolf.readiness=1..5') "
            "or a [sweep] table with vary = [...] in the scenario file"
        )
    points = len(grid_scenarios(scenario, axes, label="--vary"))
    rounds = args.rounds if args.rounds is not None else file_rounds or scenario.rounds
    seed = args.seed if args.seed is not None else scenario.seed
    with ProgressBar(rounds * points) as bar:
        result = sweep(
            scenario,
            args.vary,
            rounds=rounds,
            rng=seed,
            workers=args.workers,
            progress=bar,
            scheduler=args.scheduler,
        )
    return _print_and_write(result, out)


def _cmd_compare(args: argparse.Namespace) -> int:
    from simkit.api import compare
    from simkit.scenario import apply_set

    if args.other is None and args.changes is None:
        raise CliError("B missing; give a second scenario file B or --set 'NAME.FIELD=VALUE'")
    if args.other is not None and args.changes is not None:
        raise CliError("B and --set both given; give a second scenario file or --set, not both")
    scenario = validate(args.scenario)
    other = validate(args.other) if args.other is not None else None
    if args.changes is not None:
        apply_set(scenario, args.changes, label="--set")  # checked before anything runs
    out = _out_dir(args.out)
    rounds = args.rounds if args.rounds is not None else scenario.rounds
    seed = args.seed if args.seed is not None else scenario.seed
    with ProgressBar(2 * rounds) as bar:
        comparison = compare(
            scenario, other, set=args.changes, rounds=rounds, rng=seed, progress=bar
        )
    files: list[Path] = []
    if out is not None:
        try:
            files = comparison.write(out)
        except OSError as exc:
            raise CliError(f"--out: cannot write to '{out}': {exc.strerror or exc}") from None
    print(comparison.format_table(all_metrics=args.all), flush=True)
    if files:
        print("wrote " + ", ".join(str(f) for f in files), file=sys.stderr)
    return 0
