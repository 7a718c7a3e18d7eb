"""Fuzzing the command line in-process: mutated scenario files and mutated command lines.

Every input must end in exit status 0 or 2; on 2, exactly one ``simkit: error:`` line
(a scenario file with several problems adds indented lines), no traceback, and nothing
written.  The mutations are seeded (``SIMKIT_FUZZ_SEED`` picks another seed to explore
further); FILES mutated files go through ``validate`` and a third of them through
``run``, and COMMAND_LINES mutated command lines through whatever they name.
"""

from __future__ import annotations

import os
import random
import re
import time
from pathlib import Path

import pytest

from simkit.cli import main

ROOT = Path(__file__).resolve().parents[1]
FILES = 2000
COMMAND_LINES = 300
SEED = int(os.environ.get("SIMKIT_FUZZ_SEED", "20261201"))

BASES = sorted((ROOT / "scenarios").glob("*.toml")) + sorted((ROOT / "tests/data").rglob("*.toml"))

VALUES = [
    "0",
    "-1",
    "1",
    "2",
    "3",
    "20",
    "21",
    "100",
    "201",
    "1_000_000",
    "10000000000000",
    str(2**63),
    str(2**64),
    "1e308",
    "-1e308",
    "nan",
    "inf",
    "-inf",
    "0.5",
    "1.5",
    "-0.0",
    "true",
    "false",
    '""',
    '" "',
    '"x"',
    '"random"',
    '"never"',
    '"always"',
    '"backup"',
    '"hasty_up_to:3"',
    f'"hasty_up_to:{2**70}"',
    '"hasty_up_to:-1"',
    '"until_attacked"',
    '"until_enemy_acts"',
    '"chain"',
    '"dynamic"',
    '"one_die"',
    '"group"',
    '"commander"',
    '"readiness"',
    '"vtm"',
    '"perception"',
    '"chess"',
    '"\\u001b[2J"',
    '"a\\nb"',
    '"' + "a" * 5000 + '"',
    "[]",
    "[1, 2]",
    '["x"]',
    "{}",
    "{a = 1}",
    "1979-05-27",
    '"Wolf"',
    '"Gunnar"',
    '"Nobody"',
    "[[]]",
    # second campaign (issue 30): digits that are not ASCII, huge integers, math text
    "1" + "0" * 400,
    '"hasty_up_to:٣"',
    '"hasty_up_to:３"',
    '"hasty_up_to: 3"',
    '"\\u0007"',
    '"\\u202e"',
    '"$\\\\undefinedcommand{x}$"',
    '"party"',
    '"wolves"',
]
KEYS = [
    "name",
    "side",
    "count",
    "target",
    "attack_share",
    "readiness",
    "advantage",
    "role",
    "weakness",
    "hold",
    "defend",
    "guard",
    "surprised",
    "rating",
    "dexterity",
    "wits",
    "wound_penalty",
    "extra_actions",
    "actions",
    "delay",
    "abort",
    "perception",
    "commander",
    "order",
    "prep",
    "holder_actions",
    "release",
    "tie",
    "multi",
    "slot_abort",
    "mode",
    "group_stat",
    "within_side",
    "information",
    "rounds",
    "seed",
    "system",
    "description",
    "vary",
    "readines",
    "xyz",
]
TABLES = [
    "[scenario]",
    "[rules]",
    "[[combatant]]",
    "[sweep]",
    "[extra]",
    "[[scenario]]",
    "[rules.x]",
]
ASSIGN = re.compile(r"^(\s*)([A-Za-z_][\w.]*|\"[^\"]*\")(\s*=\s*)(.*)$")


def mutate_text(text: str, rng: random.Random) -> str:
    lines = text.splitlines()
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        kind = rng.randrange(10)
        k = rng.randrange(len(lines)) if lines else 0
        if kind == 0 and lines:  # a value replaced
            m = ASSIGN.match(lines[k])
            if m:
                lines[k] = f"{m.group(1)}{m.group(2)}{m.group(3)}{rng.choice(VALUES)}"
        elif kind == 1 and lines:  # a key renamed
            m = ASSIGN.match(lines[k])
            if m:
                lines[k] = f"{m.group(1)}{rng.choice(KEYS)}{m.group(3)}{m.group(4)}"
        elif kind == 2:  # a line added
            lines.insert(k, f"{rng.choice(KEYS)} = {rng.choice(VALUES)}")
        elif kind == 3 and lines:  # a line removed
            del lines[k]
        elif kind == 4 and lines:  # a line repeated
            lines.insert(k, lines[k])
        elif kind == 5:  # a table header
            lines.insert(k, rng.choice(TABLES))
        elif kind == 6 and lines:  # bytes flipped
            line = lines[k]
            if line:
                j = rng.randrange(len(line))
                lines[k] = (
                    line[:j]
                    + chr(rng.choice((0, 7, 27, 34, 39, 61, 91, 93, 0x2028, 0xFEFF)))
                    + line[j + 1 :]
                )
        elif kind == 7:  # cut short
            lines = lines[: rng.randrange(len(lines) + 1)]
        elif kind == 8:  # a count that multiplies
            lines.insert(k, f"count = {rng.choice(('100', '2', '0', '99', '101'))}")
        else:  # an entry duplicated many times
            block = "\n".join(lines[max(0, k - 4) : k + 1])
            lines.append((block + "\n") * rng.choice((2, 20, 300)))
    return "\n".join(lines) + "\n"


MAX_ERROR_LINES = 52  # the first line, 50 problems, "... and N more"
MAX_LINE_CHARS = 2000


def check_outcome(status: int, out: str, err: str, written: Path | None) -> None:
    assert status in (0, 2), f"exit {status}\n{err[-2000:]}"
    assert "Traceback" not in err and "Traceback" not in out, err[-2000:]
    if status == 2:
        lines = err.splitlines()
        assert len(lines) <= MAX_ERROR_LINES, f"{len(lines)} lines: {err[:2000]}"
        assert all(len(line) <= MAX_LINE_CHARS for line in lines), err[:2000]
        assert lines and lines[0].startswith("simkit: error: "), err[-2000:]
        assert sum(line.startswith("simkit:") for line in lines) == 1, err[-2000:]
        assert all(line.startswith("  ") for line in lines[1:]), err[-2000:]
        if written is not None:
            assert not written.exists(), "written although the input was bad"


@pytest.mark.slow
def test_mutated_scenario_files(tmp_path, capsys):
    rng = random.Random(SEED)
    bases = [p.read_text() for p in BASES]
    outcomes = {0: 0, 2: 0}
    for k in range(FILES):
        text = mutate_text(rng.choice(bases), rng)
        path = tmp_path / f"m{k}.toml"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        status = main(["validate", str(path)])
        captured = capsys.readouterr()
        check_outcome(status, captured.out, captured.err, None)
        outcomes[status] += 1
        if k % 3 == 0:
            out = tmp_path / f"out{k}"
            status = main(["run", str(path), "--rounds", "40", "--workers", "1", "--out", str(out)])
            captured = capsys.readouterr()
            check_outcome(status, captured.out, captured.err, out)
            if status == 0:
                assert (out / "summary.json").exists()
        path.unlink()
    assert outcomes[0] > 50 and outcomes[2] > 500, outcomes  # both kinds were reached


OPTIONS = {
    "run": [
        "--rounds",
        "--seed",
        "--workers",
        "--out",
        "--by",
        "--metrics",
        "--format",
        "--scheduler",
    ],
    "validate": [],
    "sweep": ["--vary", "--rounds", "--seed", "--out", "--by", "--metrics", "--format"],
    "compare": ["--set", "--rounds", "--seed", "--all", "--out", "--by", "--metrics", "--format"],
    "trace": ["--rounds", "--seed", "--dice", "--json"],
    "bench": ["--rounds", "--workers"],
}
OPTION_VALUES = [
    "",
    "0",
    "1",
    "2",
    "-3",
    "50",
    "+1",
    "1e3",
    "9" * 30,
    "abc",
    "side",
    "group",
    "combatant",
    "csv",
    "json",
    "md",
    "table",
    "xml",
    "actions",
    "actions,first_action",
    "nope,actions",
    "Gunnar.hold=never",
    "Wolf.readiness=1..3",
    "Wolf.readiness=+0..+2",
    "Wolf.readiness=5..1",
    "*.advantage=+1",
    "rules.order=chain",
    "Wolf.weakness=3",
    "Gunnar=6,6,2",
    "Gunnar=7",
    "Wolf 1=6,1",
    "x=1",
    "=",
    "local?",
    "\x1b[2J",
    "a\nb",
    "Gunnar.readiness=" + "9" * 40,
    # second campaign (issue 30)
    "٣",
    "３",
    " 5",
    "5 ",
    "1_000",
    "Wolf.readiness=１..３",
    "Wolf.readiness=٢,٣",
    "Leif.defend=hasty_up_to:٣",
    "x" * 5000,
    "Wolf.readiness=" + ",".join(["1"] * 20_000),
]


@pytest.mark.slow
def test_mutated_command_lines(tmp_path, capsys):
    rng = random.Random(SEED + 1)
    scenarios = [str(p) for p in BASES] + [str(tmp_path / "missing.toml"), str(tmp_path)]
    for k in range(COMMAND_LINES):
        command = rng.choice([*OPTIONS, "bogus"])
        args = [command] if command != "bogus" else [rng.choice(("runn", "--rounds", "-x", ""))]
        if command not in ("bench", "bogus"):
            args.append(rng.choice(scenarios))
        if command == "compare" and rng.random() < 0.3:
            args.append(rng.choice(scenarios))
        out = None
        options = OPTIONS.get(command, [])
        for option in rng.sample(options, rng.randint(0, min(3, len(options)))):
            if option in ("--all", "--json"):
                args.append(option)
            elif option == "--out":
                out = tmp_path / f"o{k}"
                args += [option, str(out)]
            elif option == "--scheduler":
                continue  # needs a cluster: tested in test_distributed.py
            else:
                args += [option, rng.choice(OPTION_VALUES)]
        if command in ("run", "sweep", "compare") and "--rounds" not in args:
            args += ["--rounds", "30"]
        if command == "bench":
            args += ["--rounds", "2000"]
        if command in ("run", "sweep") and "--workers" not in args:
            args += ["--workers", "1"]
        status = main(args)
        captured = capsys.readouterr()
        check_outcome(status, captured.out, captured.err, out)


# Shapes of the second hostile campaign (issue 30): big inputs that took seconds to
# minutes in quadratic code, error lists that ran to 80,001 lines, names meaning two
# things.  Each case must end like any other (status 0 or 2, one bounded error) and in
# time linear in its size: BOUND_S covers a 1 MiB file's TOML parse on a loaded machine.
SHAPES = 40
BOUND_S = 10.0


def _shape(base: str, rng: random.Random) -> str:
    kind = rng.randrange(6)
    n = rng.choice((10, 1_000, 20_000, 80_000))
    if kind == 0:  # many unknown keys in the last table
        return base + "".join(f"k{i} = 1\n" for i in range(n))
    if kind == 1:  # a long sweep list, one value a line
        values = ",\n".join(str(rng.choice((1, 2, 3, 4))) for _ in range(min(n, 150_000)))
        who = rng.choice(("Wolf", "*", "Nobody"))
        return base + f'\n[sweep]\nvary = {{ "{who}.readiness" = [\n{values}] }}\n'
    if kind == 2:  # a huge integer where a number is read
        digits = "1" + "0" * rng.choice((20, 400, 4000))
        return base + f"attack_share = {digits}\n"
    if kind == 3:  # a combatant named like a group, a combatant or a side
        name = rng.choice(("Wolf", "Gunnar", "party", "wolves", "A", "heroes"))
        side = rng.choice(("party", "wolves", "zzz"))
        return base + f'\n[[combatant]]\nname = "{name}"\nside = "{side}"\nreadiness = 2\n'
    if kind == 4:  # many combatants with problems
        return base + "".join(
            f'\n[[combatant]]\nname = "C{i}"\nside = "s"\nreadiness = 99\n'
            for i in range(min(n, 90))
        )
    return base.replace("readiness = 2", "readiness = ٢", 1)  # not TOML: a syntax error


@pytest.mark.slow
def test_hostile_shapes(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a relative --out could only ever land here
    rng = random.Random(SEED + 2)
    bases = [p.read_text() for p in BASES]
    for k in range(SHAPES):
        text = _shape(rng.choice(bases), rng)
        path = tmp_path / f"h{k}.toml"
        path.write_text(text, encoding="utf-8")
        start = time.perf_counter()
        status = main(["validate", str(path)])
        elapsed = time.perf_counter() - start
        captured = capsys.readouterr()
        check_outcome(status, captured.out, captured.err, None)
        assert elapsed < BOUND_S, (k, elapsed, len(text))
        path.unlink()
    long_values = ["a" + " " * 64_000 + "b", "x" * 5000, "side:party.actions / " * 3000 + "= 1"]
    for k, value in enumerate(long_values * 2):
        option = rng.choice(("--target", "--metrics", "--out"))
        args = ["report" if option == "--target" else "run", str(BASES[0])]
        args += [option, value, "--rounds", "10", "--workers", "1"]
        if option == "--target":
            args += ["--out", str(tmp_path / f"r{k}")]
        start = time.perf_counter()
        status = main(args)
        elapsed = time.perf_counter() - start
        captured = capsys.readouterr()
        check_outcome(status, captured.out, captured.err, None)
        assert status == 2, captured.err
        assert elapsed < BOUND_S, (option, elapsed)
