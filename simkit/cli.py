"""The ``simkit`` command line: a thin layer over the public Python API.

Contract (README, "Command line"):

* Bad input -- a scenario file, a command-line value, an ``--out`` that cannot be
  written -- ends in one ``simkit: error: <message>`` line on stderr (a scenario file
  with several problems adds one indented line per problem) and exit status 2, before
  anything is simulated or written.
* Ctrl-C ends with ``simkit: interrupted`` and status 130, SIGTERM with
  ``simkit: terminated`` and status 143, at any moment (even while Python is still
  importing), leaving no temporary file and no half-changed result directory.
* If writing the results fails after a run, the table is still printed and the error
  says what was not written.

This module imports only the standard library (and simkit's small helpers built on it:
``_signals``, ``digits``, ``bounded``) at start-up; everything else is imported inside
``main``, so that Ctrl-C during start-up is handled like any other.
It parses, checks ``--out``, calls :mod:`simkit.api` (which checks every value, once)
and prints through :func:`simkit.output.render.render`; of simkit it imports only
``simkit.api``, ``simkit.output``, ``simkit.scenario.errors`` and those small helpers (an
import-linter contract in pyproject.toml says so).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from simkit import _signals, digits
from simkit._signals import Terminated  # SIGTERM while running
from simkit.bounded import cut_words

PROG = "simkit"
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143
MAX_WORKERS = 256
CONNECT_TIMEOUT_S = 10.0
LEVELS = ("combatant", "group", "side")
FORMATS = ("table", "csv", "md", "json")  # simkit.output.render.FORMATS (a test checks)

EXAMPLES = """\
examples:
  simkit run scenarios/party_vs_wolves.toml --rounds 200000
  simkit run scenarios/party_vs_wolves.toml --by side --metrics actions,first_action
  simkit trace scenarios/worked_example_readiness.toml --dice 'A=6,6,2' --dice 'B=6,6,5'
  simkit sweep scenarios/party_vs_wolves.toml --vary 'Wolf.readiness=+0..+2'
  simkit compare scenarios/party_vs_wolves.toml --set 'Gunnar.hold=never'
  simkit sensitivity scenarios/boss_fight.toml --rounds 200000
  simkit policies scenarios/boss_fight.toml --rounds 200000 --equilibrium
  simkit convert scenarios/party_vs_wolves.toml --to vtm --out party_vtm.toml
  simkit compare scenarios/party_vs_wolves.toml party_vtm.toml party_perception.toml
  simkit report scenarios/party_vs_wolves.toml --out reports/party_vs_wolves
"""


class CliError(Exception):
    """A bad command-line value or output trouble; the message says what and why."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line, without the usage block."""

    def error(self, message: str) -> NoReturn:
        # argparse says "argument --rounds: ..."; the option name alone is clearer.
        raise CliError(message.removeprefix("argument "))


def _integer(low: int, high: int, allowed: str) -> Callable[[str], int]:
    """An argparse type: an integer in [low, high] (ASCII digits, ``simkit.digits``)."""

    def parse(text: str) -> int:
        form = "" if digits.is_int(text) else f" ({digits.INTEGER_FORM}, no spaces, no +)"
        if form or not low <= int(text) <= high:
            raise argparse.ArgumentTypeError(f"expected {allowed}, got {digits.shown(text)}{form}")
        return int(text)

    return parse


def _number(low: float, high: float, allowed: str) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            return digits.read_number(text, low, high)
        except digits.DigitsError:
            raise argparse.ArgumentTypeError(
                f"expected {allowed}, got {digits.shown(text)}"
            ) from None

    return parse


def _checked(check: str, *args: Any) -> Callable[[str], int]:
    """An argparse type: the text checked by ``simkit.api.<check>`` (imported when an
    option is given, so that ``--help`` stays light)."""

    def parse(text: str) -> int:
        from simkit import api

        try:
            return getattr(api, check)(text, *args)
        except api.ArgumentError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


_rounds = _checked("check_rounds", None)
_seed = _checked("check_seed", None)
_trace_rounds = _checked("check_trace_rounds", None)
_worker_count = _integer(1, MAX_WORKERS, f"an integer from 1 to {MAX_WORKERS}")
_timeout = _number(0.1, 3600.0, "a number of seconds from 0.1 to 3600")


def _metric_list(text: str) -> list[str]:
    names = [m.strip() for m in text.split(",")]
    if not text.strip() or any(not m for m in names):
        raise argparse.ArgumentTypeError(
            f"expected metric names separated by commas, got {text[:40]!r}"
        )
    return names


def _add_common(p: argparse.ArgumentParser, *, workers: bool = True, rounds: str = "") -> None:
    p.add_argument(
        "--rounds",
        type=_rounds,
        metavar="N",
        help=rounds or "rounds to play (default: the scenario's)",
    )
    p.add_argument("--seed", type=_seed, metavar="S", help="random seed (default: the scenario's)")
    if workers:
        p.add_argument(
            "--workers",
            type=_worker_count,
            metavar="K",
            help="worker threads (default: every core)",
        )


def _add_precision(p: argparse.ArgumentParser, what: str = "every shown quantity") -> None:
    p.add_argument(
        "--precision",
        metavar="P",
        help=f"instead of --rounds: play in doubling blocks of rounds until {what} has a "
        "95%% interval half-width of at most P (0.001) or P%% of its estimate (0.5%%); "
        "prints the rounds used (docs/precision.md)",
    )
    p.add_argument(
        "--max-rounds",
        type=_rounds,
        metavar="N",
        help="with --precision: the most rounds to play (default 1,000,000,000)",
    )


def _add_view(p: argparse.ArgumentParser, by_round: bool = False) -> None:
    p.add_argument(
        "--by",
        choices=LEVELS + (("round",) if by_round else ()),
        default="combatant",
        help="read the metrics per combatant (default), per count group or per side"
        + (
            "; round: per round index of a fight and per fight, per side, count group and "
            "combatant ([scenario] fight_rounds, R8a)"
            if by_round
            else ""
        ),
    )
    p.add_argument(
        "--metrics",
        type=_metric_list,
        metavar="a,b,c",
        help="only these metrics (default: every metric, in blocks that fit the terminal)",
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table (default), or csv, md, json for piping",
    )


def _add_scheduler(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="play the chunks on a Dask cluster: tcp://HOST:8786, or 'local' (K one-thread "
        "worker processes here); same results as without it; needs pip install "
        "'simkit[dask]'",
    )
    p.add_argument(
        "--connect-timeout",
        type=_timeout,
        default=CONNECT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"give up connecting to --scheduler after this long (default {CONNECT_TIMEOUT_S:g})",
    )


def build_parser() -> _Parser:
    """The argument parser of every subcommand."""
    from simkit import __version__

    parser = _Parser(
        prog=PROG,
        description="Monte Carlo balance analysis of tabletop RPG initiative systems.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "run",
        help="simulate a scenario and print every metric with its 95%% interval",
        description="Simulate a scenario and print every metric with its 95% interval.",
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (TOML)")
    _add_common(p)
    p.add_argument(
        "--out",
        metavar="DIR",
        help="also write DIR/summary.json and DIR/metrics.csv (DIR is replaced as a whole)",
    )
    _add_view(p, by_round=True)
    _add_precision(p, "every shown quantity (or each of --metrics)")
    p.add_argument(
        "--dominance",
        action="store_true",
        help="print how often the fastest combatant (the highest main stat) acts before each "
        "other one, with 95%% intervals, instead of every metric",
    )
    _add_scheduler(p)
    p.set_defaults(handler=_cmd_run)

    p = sub.add_parser(
        "validate",
        help="check a scenario file, run nothing",
        description="Check a scenario file and print a one-line summary; nothing is run.",
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (TOML)")
    p.set_defaults(handler=_cmd_validate)

    p = sub.add_parser(
        "trace",
        help="the play-by-play of a few rounds, each line citing its rule",
        description="Play K rounds (default 1) and print every event as the rules see "
        "it: the dice, every turn, hold and release, attack and response, each line citing "
        "its rule ID.  --dice fixes a combatant's roll; everything else comes from the seed.",
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (TOML)")
    p.add_argument(
        "--rounds", type=_trace_rounds, default=1, metavar="K", help="rounds to play (default 1)"
    )
    p.add_argument("--seed", type=_seed, metavar="S", help="random seed (default: the scenario's)")
    p.add_argument(
        "--dice",
        action="append",
        metavar="NAME=FACES",
        help="fix the roll of one combatant (or, in group mode, of a side) in every round: "
        "'Gunnar=6,6,2'; repeatable",
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table (default: a block of lines per round), or csv, md, json (one row per event)",
    )
    p.add_argument(
        "--json",
        dest="format",
        action="store_const",
        const="json",
        help="the same as --format json",
    )
    p.set_defaults(handler=_cmd_trace)

    p = sub.add_parser(
        "sweep",
        help="run a scenario over a grid of field values (common random numbers)",
        description="Run a scenario at every point of a grid of field values, every point "
        "with the same seed.  A value written with a sign is an offset from the scenario's "
        "own value: 'Wolf.readiness=+0..+3'.",
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (TOML)")
    p.add_argument(
        "--vary",
        action="append",
        metavar="SPEC",
        help="TARGET.FIELD=VALUES, e.g. 'Wolf.readiness=1..5', 'Wolf.readiness=+0..+2' or "
        "'rules.order=dynamic,chain'; repeat for a grid (default: vary of the file's [sweep])",
    )
    _add_common(
        p, rounds="rounds per grid point (default: the [sweep] table's, else the scenario's)"
    )
    p.add_argument("--out", metavar="DIR", help="also write DIR/sweep.csv and plots (PNG)")
    _add_view(p)
    _add_precision(p, "every shown quantity at every point (or each of --metrics)")
    _add_scheduler(p)
    p.set_defaults(handler=_cmd_sweep)

    p = sub.add_parser(
        "tune",
        help="the value(s) of a field that meet a balance target",
        description="Play a grid of values (the same dice at every point) and print the "
        "target quantity at each with its 95% interval, then the answer: the value(s) that "
        "meet the target, the pair that brackets it, or the closest value.",
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (TOML)")
    p.add_argument(
        "--vary",
        action="append",
        required=True,
        metavar="SPEC",
        help="the field(s) to tune, e.g. 'Troll Chief.readiness=1..10' or "
        "'Wolf.readiness=+0..+3'; one or two",
    )
    p.add_argument(
        "--target",
        required=True,
        metavar="TARGET",
        help="REF OP VALUE or REF / REF OP VALUE, OP one of =, >=, <=; REF is NAME.metric, "
        "group:NAME.metric or side:NAME.metric, e.g. "
        "'side:monsters.actions / side:party.actions = 1'; '= 1 ± 0.05' (or '+- 0.05', "
        "'± 5%%') decides met (the whole 95%% interval inside the band), not met or undecided",
    )
    p.add_argument(
        "--tolerance",
        metavar="T",
        help="the tolerance of an '=' target apart: 0.05 or 5%% (the same as '= 1 ± 0.05')",
    )
    p.add_argument(
        "--refine",
        action="store_true",
        help="when the target lies between two values, also tune the finer knobs of that "
        "combatant (readiness: advantage; vtm: wound_penalty) at both values",
    )
    _add_common(p, rounds="rounds per grid point (default: the scenario's)")
    p.add_argument(
        "--precision",
        metavar="P",
        help="instead of --rounds: play every point in doubling blocks of rounds until the "
        "target quantity's 95%% interval half-width is at most P (0.001) or P%% of it "
        "(0.5%%) everywhere (docs/precision.md)",
    )
    p.add_argument(
        "--max-rounds",
        type=_rounds,
        metavar="N",
        help="the most rounds of a point: with --precision (default 1,000,000,000), and for "
        "the points a tolerance's decision gets more rounds (default 64 times --rounds)",
    )
    p.add_argument("--out", metavar="DIR", help="also write DIR/tune.csv and DIR/tune.png")
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table (default), or csv, md, json for piping",
    )
    _add_scheduler(p)
    p.set_defaults(handler=_cmd_tune)

    p = sub.add_parser(
        "policies",
        help="the policy each combatant should play for its side (common random numbers)",
        description="Play every value of every policy field of every combatant (a count "
        "group as one), the others as written, with the same dice; print per combatant "
        "and field the file's value, the best value for its side's objective and the "
        "paired gain with its 95% interval, ranked by gain.",
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (TOML)")
    p.add_argument(
        "--objective",
        action="append",
        metavar="EXPR",
        help="what a side wants: references joined by + or -, each with an optional "
        "coefficient, e.g. 'party=side:wolves.undefended - 0.5*side:party.undefended'; one per "
        "side (SIDE= says whose, default the side of its first reference; with two sides "
        "the other wants the opposite); "
        "default: each side's default objective, stated in the output",
    )
    p.add_argument(
        "--equilibrium",
        action="store_true",
        help="let the sides take turns choosing best responses until no side changes "
        "(or a cycle is found); print the policies and the sides' numbers under them",
    )
    _add_common(p, rounds="rounds per variant (default: the scenario's)")
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table (default), or csv, md, json for piping",
    )
    p.set_defaults(handler=_cmd_policies)

    p = sub.add_parser(
        "compare",
        help="paired differences B - A of two scenarios (common random numbers), or N "
        "scenarios side by side",
        description="Play two scenarios with the same seed and print the metrics whose "
        "paired difference B - A is significant (--all: every metric), with 95% intervals.  "
        "With three or more files: one side-by-side table of the metrics every file has "
        "(--all: every metric), each with its interval and its difference from A, paired "
        "where a file has A's system and combatants, otherwise marked unpaired; then how "
        "often each file's fastest combatant acts before each other one.",
    )
    p.add_argument("scenario", metavar="A", help="scenario file A (TOML)")
    p.add_argument(
        "other",
        metavar="B",
        nargs="*",
        help="scenario file B (or use --set); C, D ... for a side-by-side table",
    )
    p.add_argument(
        "--set",
        action="append",
        dest="changes",
        metavar="SPEC",
        help="B is A with this change: 'Gunnar.hold=never', '*.advantage=+1', "
        "'rules.order=chain'; repeatable",
    )
    _add_common(p, workers=False, rounds="rounds of each run (default: A's)")
    p.add_argument(
        "--all", action="store_true", help="print every metric, not only those that differ"
    )
    p.add_argument("--out", metavar="DIR", help="also write DIR/compare.csv")
    _add_view(p)
    _add_precision(p, "every paired difference (or each of --metrics; two files)")
    p.set_defaults(handler=_cmd_compare)

    p = sub.add_parser(
        "sensitivity",
        help="which knob moves the balance most: each stat +-1, each rule variant",
        description="Play the scenario as written and, one at a time, each combatant's main "
        "stat (a count group as one) one point up and one point down, and each other value "
        "of each rule, all on the same dice (common random numbers); print the paired change "
        "in each side's action economy with its 95% interval, the knobs ranked by size, "
        "after one sentence naming the knob the balance moves most with.  A change beyond a "
        "field's bounds is skipped and said.",
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (TOML)")
    _add_common(p, rounds="rounds of each run (default: the scenario's)")
    p.add_argument(
        "--objective",
        action="append",
        metavar="EXPR",
        help="measure the change in this instead of each side's action economy: references "
        "joined by + or -, each with an optional coefficient, e.g. "
        "'side:party.actions - 0.5*side:party.hasty_only'; repeatable",
    )
    p.add_argument("--out", metavar="DIR", help="also write DIR/sensitivity.csv")
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table (default), or csv, md, json for piping",
    )
    p.set_defaults(handler=_cmd_sensitivity)

    p = sub.add_parser(
        "convert",
        help="write the same fight in another initiative system",
        description="Write SCENARIO's fight in another system: the same combatants, sides, "
        "targets, rounds and seed; the main stat mapped (default: a mapping that keeps the "
        "combatants' relative speed, docs/rules-decisions.md); every policy the file gives "
        "mapped where the other system has a counterpart.  What has none is listed as "
        "comments at the top of the file and on stderr.",
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (TOML)")
    p.add_argument("--to", required=True, metavar="SYSTEM", help="the system to write the fight in")
    p.add_argument(
        "--map",
        action="append",
        dest="mapping",
        metavar="SPEC",
        help="FIELD=SOURCE+K, FIELD=SOURCE-K, FIELD=SOURCE*K, FIELD=SOURCE or FIELD=N, e.g. "
        "'rating=readiness+2': overrides the default mapping of FIELD; repeatable",
    )
    p.add_argument(
        "--out", metavar="FILE", help="write the TOML file here (default: standard output)"
    )
    p.set_defaults(handler=_cmd_convert)

    p = sub.add_parser(
        "report",
        help="write an HTML + Markdown report with plots and CSV tables",
        description="Simulate a scenario (as written; with each non-default policy set back, "
        "for its cost and benefit; and with each side's initiative stat changed by up to 2, "
        "or the grid of --vary) and write DIR/report.html (self-contained), DIR/report.md "
        "with its PNG plots, and the data tables as CSV.  The report opens with a balance "
        "verdict per side.",
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (TOML)")
    p.add_argument(
        "--vary",
        action="append",
        metavar="SPEC",
        help="sweep this instead of each side's stat +-2: TARGET.FIELD=VALUES as for sweep, "
        "e.g. 'Wolf.readiness=+0..+3'; one or two (repeat the option)",
    )
    p.add_argument(
        "--target",
        metavar="TARGET",
        help="with --vary: a balance target as for tune, e.g. "
        "'side:wolves.actions / side:party.actions = 1'; the report answers it",
    )
    _add_common(p, rounds="rounds per run (default: the scenario's)")
    _add_precision(p, "every metric per combatant and per side of the scenario as written")
    p.add_argument("--out", metavar="DIR", required=True, help="directory to write the report to")
    p.add_argument(
        "--verbose",
        action="store_true",
        help="also print the run's table, the findings and the files written (default: the "
        "report's path and its verdict)",
    )
    p.set_defaults(handler=_cmd_report)

    p = sub.add_parser(
        "bench",
        help="rounds per second of each system on this machine",
        description="Measure rounds per second of each initiative system on this machine.",
    )
    p.add_argument("--rounds", type=_rounds, metavar="N", help="rounds per measurement")
    p.add_argument(
        "--workers", type=_worker_count, metavar="K", help="worker threads (default: every core)"
    )
    p.set_defaults(handler=_cmd_bench)

    p = sub.add_parser(
        "warmup",
        help="compile and cache every kernel now (make install runs it)",
        description="Compile every kernel of every system and store it in numba's cache, so "
        "that the first run afterwards starts at once.  Run it on each Dask worker machine.",
    )
    p.set_defaults(handler=_cmd_warmup)
    return parser


# --------------------------------------------------------------------------- entry points
def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        _error("interrupted", prefix=f"{PROG}: ")
        return EXIT_INTERRUPTED
    except Terminated:
        _error("terminated", prefix=f"{PROG}: ")
        return EXIT_TERMINATED


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except CliError as exc:
        _error(str(exc))
        return EXIT_ERROR
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0
    if args.command is None:
        _emit(parser.format_help())
        return 0
    from simkit.api import ArgumentError, SchedulerError
    from simkit.output.files import OutputError
    from simkit.scenario.errors import ScenarioError

    try:
        return args.handler(args)
    except ScenarioError as exc:
        first, *rest = str(exc).split("\n")
        _error(first, details=tuple(r.strip() for r in rest))
    except (CliError, OutputError, ArgumentError) as exc:
        _error(str(exc))
    except SchedulerError as exc:  # dask missing, or the scheduler cannot be reached
        _error(f"--scheduler: {exc}")
    except BrokenPipeError:  # `simkit run ... | head`: the reader left, not an error
        _silence_stdout()
        return 0
    return EXIT_ERROR


def console_main() -> NoReturn:
    """The ``simkit`` command: ``main``, then exit without interpreter finalisation.

    Signal handlers come first (``simkit._signals``, installed by ``simkit/__init__.py``
    before any heavy import), so that a signal during start-up is one line too.  Every
    output file is complete and closed by the time ``main`` returns, worker threads
    have finished and any Dask connection is closed.  What finalisation would still do
    -- tearing down the JIT-compiled code and a few thousand module objects -- takes
    0.1-0.2 s and changes nothing, so the process ends right after flushing its output.
    """
    try:
        _signals.install()  # done already by simkit/__init__.py when run as the command
        _signals.running()  # a signal now stops the command in order (simkit._signals)
        status = main()
    except KeyboardInterrupt:  # between main's handlers and here
        status = EXIT_INTERRUPTED
    except Terminated:
        status = EXIT_TERMINATED
    status = _signals.settle(status)
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # the reader left or the disk is full: said already
            pass
    os._exit(status)


# --------------------------------------------------------------------------- output
def _error(message: str, prefix: str = f"{PROG}: error: ", details: tuple[str, ...] = ()) -> None:
    """One ``simkit: error:`` line (control characters escaped), then one indented line
    per detail (every problem of a scenario file)."""
    lines = _listing(prefix + _printable(cut_words(message)))
    for d in details:  # long words cut (bounded)
        lines += _listing("  " + _printable(cut_words(d)))
    with contextlib.suppress(OSError, ValueError, AttributeError):  # no stderr to speak to
        print("\n".join(lines), file=sys.stderr, flush=True)


LISTS = ("allowed: ", "available: ")


def _listing(line: str) -> list[str]:
    """An error line with a list of names (``allowed: ...``, ``available: ...``) wrapped
    at the width of stderr, the further lines indented by four spaces, when that width is
    known (``COLUMNS``, or stderr is a terminal); otherwise, and for any other line, as
    it is: one line a script can read."""
    known = os.environ.get("COLUMNS", "").strip() or _isatty(sys.stderr)
    width = _width(sys.stderr)
    if not known or len(line) <= width or not any(word in line for word in LISTS):
        return [line]
    import textwrap

    return textwrap.wrap(
        line,
        width,
        subsequent_indent="    ",
        break_long_words=False,
        break_on_hyphens=False,
    ) or [line]


def _isatty(stream: Any) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (OSError, ValueError, AttributeError):
        return False


def _printable(text: str) -> str:
    """``text`` on one line: newlines and other control characters escaped."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def _emit(text: str, after: str = "") -> None:
    """Print ``text`` on stdout; trouble there becomes a CliError (``after`` says what was
    already done, e.g. which files were written)."""
    if sys.stdout is None:
        raise CliError("standard output is closed; nothing printed" + after)
    try:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as exc:
        why = getattr(exc, "strerror", None) or str(exc)
        _silence_stdout()
        raise CliError(f"cannot write to standard output: {why}{after}") from None


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _note(text: str) -> None:
    """A line on stderr (what was written)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        print(text, file=sys.stderr, flush=True)


def _width(stream: Any = None) -> int:
    """Columns for tables and sentences: ``COLUMNS`` when set (also when the output is a
    pipe or a file), else the terminal's when ``stream`` (default stdout) is one, else
    100; always from 60 to 200."""
    stream = sys.stdout if stream is None else stream
    columns = os.environ.get("COLUMNS", "").strip()
    if digits.is_int(columns) and int(columns) > 0:
        return max(60, min(200, int(columns)))
    try:
        if stream is not None and stream.isatty():
            return max(60, min(200, os.get_terminal_size(stream.fileno()).columns))
    except (OSError, ValueError, AttributeError):
        pass
    return 100


def _out_dir(value: str | None) -> Any:
    """``--out`` checked before anything is simulated (creatable, writable, ours)."""
    if value is None:
        return None
    from simkit.output.files import OutputDir

    return OutputDir(value, "--out")


def _finish(text: str, out: Any, files: Callable[[], dict[str, Any]] | None) -> int:
    """Write the result directory (if any), then print; a failed write still prints the
    table and then reports what was not written."""
    problem = ""
    written = ""
    if out is not None and files is not None:
        try:
            names = out.write(files())
            written = f"; the files in {out.path} were written"
            _emit(text, after=written)
            _note(f"wrote {out.path}: " + ", ".join(p.name for p in names))
            return 0
        except OSError as exc:
            problem = (
                f"--out: could not write '{out.path}': {exc.strerror or exc}; nothing was "
                "written there (the table above is complete)"
            )
    _emit(text, after=written)
    if problem:
        raise CliError(problem)
    return 0


def _render(kind: str, result: Any, args: argparse.Namespace) -> str:
    """The result in the format of ``--format`` (simkit.output.render)."""
    from simkit.output.render import render

    try:
        return render(
            kind,
            result,
            getattr(args, "format", "table"),
            by=getattr(args, "by", "combatant"),
            metrics=getattr(args, "metrics", None),
            width=_width(),
            all_metrics=getattr(args, "all", False),
        )
    except KeyError as exc:
        raise CliError(f"--metrics: {exc.args[0]}") from None


def _metrics(args: argparse.Namespace, scenario: Any, families: bool = True) -> None:
    """``--metrics`` checked before anything is simulated (``families``: a metric
    family's name, ``acts_before``, is allowed)."""
    from simkit import api

    api.check_metrics(scenario, args.by, args.metrics, "--metrics", families=families)


# --------------------------------------------------------------------------- commands
def validate(path: str) -> Any:
    from simkit import api

    return api.validate(path)


def _progress(total: int) -> Any:
    from simkit.output.progress import ProgressBar

    return ProgressBar(total)


def _scheduler(args: argparse.Namespace) -> Any:
    if getattr(args, "scheduler", None) is None:
        return None
    from simkit import api

    return api.Scheduler(args.scheduler, timeout=args.connect_timeout)


def _cmd_run(args: argparse.Namespace) -> int:
    from simkit import api

    scenario = validate(args.scenario)
    out = _out_dir(args.out)
    if args.by == "round":
        if not scenario.fight_rounds:
            raise CliError(
                f"--by round: {args.scenario} has no fights; add fight_rounds = K (an integer "
                ">= 1) to its [scenario] table (R8a)"
            )
        api.check_round_metrics(scenario, args.metrics, "--metrics")
    else:
        _metrics(args, scenario)
    precision = _precision(args, [scenario])
    if precision is not None:
        with _progress(precision.totals([scenario])[0]) as bar:
            result = api.run(
                scenario,
                rng=args.seed,
                workers=args.workers,
                progress=bar,
                precision=precision,
                by=args.by,
                metrics=args.metrics,
            )
        if getattr(args, "dominance", False):
            _note(result.stopping.line())
    else:
        rounds = args.rounds or scenario.rounds
        with _progress(rounds) as bar:
            result = api.run(
                scenario,
                rounds=rounds,
                rng=args.seed,
                workers=args.workers,
                progress=bar,
                scheduler=_scheduler(args),
            )
    if getattr(args, "dominance", False):
        return _finish(_render("dominance", api.dominance(result), args), out, result.files)
    return _finish(_render("run", result, args), out, result.files)


def _precision(args: argparse.Namespace, scenarios: list[Any]) -> Any:
    """``--precision`` and ``--max-rounds`` checked (not with --rounds or --scheduler,
    max-rounds at least the first block) before anything runs; None without them."""
    from simkit import api

    labels = ("--precision", "--max-rounds", "--rounds")
    precision = api.read_precision(scenarios, args.precision, args.max_rounds, args.rounds, labels)
    if precision is not None and getattr(args, "scheduler", None) is not None:
        raise CliError("--precision: cannot be combined with --scheduler")
    return precision


def _cmd_report(args: argparse.Namespace) -> int:
    from simkit import api
    from simkit.output.render import render
    from simkit.output.terminal import wrap

    scenario = validate(args.scenario)
    out = _out_dir(args.out)
    # --rounds, --vary and --target checked (every grid point too) before anything runs
    labels = ("--rounds", "--vary", "--target")
    precision = _precision(args, [scenario])
    rounds = args.rounds
    stopping = None
    if precision is not None:
        api.report_rounds(scenario, precision.totals([scenario])[0], args.vary, args.target, labels)
        with _progress(precision.totals([scenario])[0]) as bar:
            found = api.precision_rounds(
                scenario, precision, args.seed, workers=args.workers, progress=bar
            )
        rounds, stopping = found.rounds, found.stopping
    total = api.report_rounds(scenario, rounds, args.vary, args.target, labels)
    with _progress(total) as bar:
        rendered = api.make_report(
            scenario,
            rounds,
            args.seed,
            workers=args.workers,
            progress=bar,
            vary=args.vary,
            target=args.target,
        )
        bar.stage("writing the report")
        try:
            out.write(rendered.files)
        except OSError as exc:
            failure = (
                f"--out: could not write '{out.path}': {exc.strerror or exc}; nothing was "
                "written there"
            )
        else:
            failure = ""
    width = _width()
    verbose = getattr(args, "verbose", False)
    lines = []
    if verbose:
        lines += [render("run", rendered.data.result, width=width, verdict=False), ""]
    if stopping is not None:
        lines.append(f"{stopping.line()}; every run of the report has {rounds:,} rounds")
    if not failure:
        lines.append(f"report: {out.path / 'report.html'}")
    if rendered.verdict:
        lines.append("Verdict:")
        lines += [row for line in rendered.verdict for row in wrap(line, width, bullet="- ")]
    tuning = getattr(rendered.data, "tuning", None)
    if tuning is not None and not verbose:  # the answer to --target (also in the findings)
        lines += wrap(f"Target {tuning.target.text}: {tuning.answer}", width)
    if verbose:
        lines += ["", "Findings:"]
        lines += [row for line in rendered.findings for row in wrap(line, width, bullet="- ")]
        if not failure:
            plots = sum(name.endswith(".png") for name in rendered.files)
            tables_ = sum(name.endswith(".csv") for name in rendered.files)
            lines.append(
                f"also: {out.path / 'report.md'}, {plots} PNG plots and {tables_} CSV tables "
                "beside it"
            )
    _emit("\n".join(lines))
    if failure:
        raise CliError(failure)
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    scenario = validate(args.scenario)
    _emit(f"OK {args.scenario}: {describe(scenario)}")
    return 0


def describe(scenario: Any) -> str:
    """One line: name, system, combatants and sides, rules with defaults filled in."""
    import json
    from collections import Counter

    def toml(value: object) -> str:
        return json.dumps(value, ensure_ascii=False)

    per_side = Counter(c.side for c in scenario.combatants)
    sides = ", ".join(f"{side} {per_side[side]}" for side in scenario.sides)
    rules = ", ".join(f"{k}={toml(v)}" for k, v in scenario.rules.items()) or "none"
    n = len(scenario.combatants)
    k = getattr(scenario, "fight_rounds", 0)
    fights = f", fights of {k} round{'s' if k != 1 else ''} (R8a)" if k else ""
    return (
        f"{toml(scenario.name)}, system {scenario.system}, {n} combatants on "
        f"{len(scenario.sides)} sides ({sides}){fights}, rules: {rules}"
    )


def _cmd_bench(args: argparse.Namespace) -> int:
    from simkit import api

    return api.bench(args.rounds, args.workers)


def _cmd_warmup(args: argparse.Namespace) -> int:
    from simkit import api

    for line in api.warm_up():
        _note(line)
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    from simkit import api

    scenario = validate(args.scenario)
    out = _out_dir(args.out)
    grid = api.read_grid(scenario, args.vary, "--vary")  # every point checked
    _metrics(args, scenario)
    precision = _precision(args, [scenario])
    if precision is not None:
        with _progress(precision.totals([scenario])[0] * grid.points) as bar:
            result = api.sweep(
                scenario,
                grid.vary,
                rng=args.seed,
                workers=args.workers,
                progress=bar,
                precision=precision,
                by=args.by,
                metrics=args.metrics,
            )
        return _finish(_render("sweep", result, args), out, result.files)
    rounds = args.rounds or grid.file_rounds or scenario.rounds
    with _progress(rounds * grid.points) as bar:
        result = api.sweep(
            scenario,
            grid.vary,
            rounds=rounds,
            rng=args.seed,
            workers=args.workers,
            progress=bar,
            scheduler=_scheduler(args),
        )
    return _finish(_render("sweep", result, args), out, result.files)


def _cmd_compare(args: argparse.Namespace) -> int:
    from simkit import api

    others = list(args.other or [])
    if not others and args.changes is None:
        raise CliError("B missing; give a second scenario file B or --set 'NAME.FIELD=VALUE'")
    if others and args.changes is not None:
        raise CliError("B and --set both given; give a second scenario file or --set, not both")
    if len(others) > 1:
        return _compare_many(args, [args.scenario, *others])
    scenario = validate(args.scenario)
    other = validate(others[0]) if others else None
    if other is not None and other.fight_rounds != scenario.fight_rounds:
        # R8a: different fights see different dice round by round: side by side, unpaired
        return _compare_many(args, [args.scenario, *others])
    if args.changes is not None:
        api.check_set(scenario, args.changes, "--set")  # checked before anything runs
    out = _out_dir(args.out)
    _metrics(args, scenario)
    precision = _precision(args, [scenario] + ([other] if other is not None else []))
    if precision is not None:
        with _progress(2 * precision.totals([scenario])[0]) as bar:
            comparison = api.compare(
                scenario,
                other,
                set=args.changes,
                rng=args.seed,
                progress=bar,
                precision=precision,
                by=args.by,
                metrics=args.metrics,
            )
        return _finish(_render("compare", comparison, args), out, comparison.files)
    rounds = args.rounds or scenario.rounds
    with _progress(2 * rounds) as bar:
        comparison = api.compare(
            scenario, other, set=args.changes, rounds=rounds, rng=args.seed, progress=bar
        )
    return _finish(_render("compare", comparison, args), out, comparison.files)


def _cmd_trace(args: argparse.Namespace) -> int:
    from simkit import api

    scenario = validate(args.scenario)
    dice = api.read_dice(scenario, args.dice or [], "--dice")
    played = api.trace(scenario, args.rounds, args.seed, dice)
    _emit(_render("trace", played, args))
    return 0


def _cmd_tune(args: argparse.Namespace) -> int:
    from simkit import api

    scenario = validate(args.scenario)
    out = _out_dir(args.out)
    grid = api.read_grid(scenario, args.vary, "--vary", most=2, what="tune")
    target = api.read_target(scenario, args.target, "--target", args.tolerance, "--tolerance")
    precision = _precision(args, [scenario]) if args.precision is not None else None
    rounds = args.rounds or scenario.rounds
    if precision is not None:
        rounds = precision.totals([scenario])[0]
    with _progress(rounds * grid.points) as bar:
        tuning = api.tune(
            scenario,
            args.vary,
            target,
            rounds=None if precision is not None else rounds,
            rng=args.seed,
            workers=args.workers,
            progress=bar,
            scheduler=_scheduler(args),
            refine=args.refine,
            max_rounds=args.max_rounds if precision is None else None,
            precision=precision,
        )
    return _finish(_render("tune", tuning, args), out, tuning.files)


def _cmd_sensitivity(args: argparse.Namespace) -> int:
    from simkit import api

    scenario = validate(args.scenario)
    out = _out_dir(args.out)
    api.read_objectives(scenario, args.objective, "--objective")  # before anything runs
    total = api.sensitivity_rounds(scenario, args.rounds, "--rounds")
    with _progress(total) as bar:
        result = api.sensitivity(
            scenario,
            rounds=args.rounds,
            rng=args.seed,
            objective=args.objective,
            workers=args.workers,
            progress=bar,
        )
    return _finish(_render("sensitivity", result, args), out, result.files)


def _cmd_policies(args: argparse.Namespace) -> int:
    from simkit import api

    scenario = validate(args.scenario)
    objectives = api.read_side_objectives(scenario, args.objective, "--objective")
    search = api.policies(
        scenario,
        objectives,
        rounds=args.rounds or scenario.rounds,
        rng=args.seed,
        equilibrium=args.equilibrium,
        workers=args.workers,
    )
    _emit(_render("policies", search, args))
    return 0


def _compare_many(args: argparse.Namespace, paths: list[str]) -> int:
    """``simkit compare A B C ...``: the side-by-side table."""
    from simkit import api

    scenarios = [validate(p) for p in paths]  # every file checked before anything runs
    if args.precision is not None:
        raise CliError(
            "--precision: compares two files (A and B); with three or more give --rounds"
        )
    out = _out_dir(args.out)
    if args.metrics:
        _metrics_any(args, scenarios)
    rounds = args.rounds or scenarios[0].rounds
    with _progress(len(scenarios) * rounds) as bar:
        side = api.compare_many(scenarios, rounds=rounds, rng=args.seed, progress=bar)
    return _finish(_render("side_by_side", side, args), out, side.files)


def _metrics_any(args: argparse.Namespace, scenarios: list[Any]) -> None:
    """``--metrics`` of a side-by-side table: each name must be a metric of some file."""
    from simkit import api

    for name in args.metrics:
        problems = []
        for scenario in scenarios:
            try:
                api.check_metrics(scenario, args.by, [name], "--metrics")
            except api.ArgumentError as exc:
                problems.append(exc)
        if len(problems) == len(scenarios):
            raise problems[0]


def _cmd_convert(args: argparse.Namespace) -> int:
    from simkit import api

    scenario = validate(args.scenario)
    target = _out_file(args.out)
    conversion = api.convert(scenario, args.to, args.mapping, labels=("--to", "--map"))
    if target is None:
        _emit(conversion.text)
    else:
        from simkit.output.files import write_files

        try:
            write_files({target: conversion.text})
        except OSError as exc:
            raise CliError(f"--out: could not write '{target}': {exc.strerror or exc}") from None
        _note(f"wrote {target}: {describe(conversion.scenario)}")
    _note(f"stat mapping: {', '.join(conversion.mapping)}")
    for line in conversion.notes:
        _note(f"not carried over: {line}")
    return 0


def _out_file(value: str | None) -> Any:
    """``--out FILE`` of convert checked before anything is done: not a directory, in a
    directory that exists and can be written."""
    if value is None:
        return None
    from pathlib import Path

    path = Path(value)
    if not value or value.endswith(os.sep) or path.is_dir():
        raise CliError(f"--out: '{value}' is a directory; give a file name")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise CliError(f"--out: directory '{parent}' does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise CliError(f"--out: cannot write in '{parent}'")
    return path
