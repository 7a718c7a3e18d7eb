"""Nothing lost, nothing raw: hostile input, signals, full disks and closed streams.

Each test names the item of the reliability pass it guards.  The contract (README,
"Command line"): exit 2 with one ``simkit: error:`` line (plus one indented line per
problem of a scenario file) and nothing written for any bad input; 130 on Ctrl-C, 143
on SIGTERM, each with one line; no half-written or mixed results.
"""

from __future__ import annotations

import argparse
import builtins
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from requires import requires_module

import simkit.analysis.run
import simkit.output.files
from simkit import api, cli
from simkit.cli import main
from simkit.output.files import OutputDir, OutputError
from simkit.scenario import MAX_ROUNDS, validate

ROOT = Path(__file__).resolve().parents[1]
WOLVES = ROOT / "scenarios" / "party_vs_wolves.toml"
DUEL = ROOT / "scenarios" / "duel_of_equals.toml"
SIMKIT = [sys.executable, "-m", "simkit"]

HEAD = '[scenario]\nname = "x"\nsystem = "readiness"\n'
A = '[[combatant]]\nname = "A"\nside = "a"\nreadiness = 3\n'
B = '[[combatant]]\nname = "B"\nside = "b"\nreadiness = 2\n'


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def one_error(err: str, *fragments: str) -> str:
    lines = err.splitlines()
    assert len(lines) >= 1 and lines[0].startswith("simkit: error: "), err
    assert sum(line.startswith("simkit:") for line in lines) == 1, err
    assert all(line.startswith("  ") for line in lines[1:]), err
    assert "Traceback" not in err
    for f in fragments:
        assert f in err, f"{f!r} not in {err!r}"
    return lines[0]


def forbid_simulation(monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("simulated although the input is bad")

    monkeypatch.setattr(simkit.analysis.run, "simulate", forbidden)


# 1 -------------------------------------------------------------------- huge hasty_up_to
@pytest.mark.parametrize("command", ["validate", "run"])
def test_hasty_up_to_beyond_any_integer_is_rejected(tmp_path, capsys, command, monkeypatch):
    forbid_simulation(monkeypatch)
    path = write(tmp_path, HEAD + A + f'defend = "hasty_up_to:{2**63}"\n' + B)
    assert main([command, str(path)]) == 2
    one_error(capsys.readouterr().err, "(index 0).defend", "hasty_up_to:N")


@pytest.mark.parametrize("command", [["sweep", "--vary"], ["compare", "--set"]])
def test_hasty_up_to_beyond_any_integer_in_specs(tmp_path, capsys, command, monkeypatch):
    forbid_simulation(monkeypatch)
    spec = f"A.defend=hasty_up_to:{2**63}"
    assert main([command[0], str(write(tmp_path, HEAD + A + B)), command[1], spec]) == 2
    one_error(capsys.readouterr().err, "A.defend", "hasty_up_to:N")


# 2 -------------------------------------------------------------------- deep TOML
def test_deeply_nested_toml_is_one_line(tmp_path, capsys):
    path = write(tmp_path, "a = " + "[" * 500 + "]" * 500 + "\n")
    assert main(["validate", str(path)]) == 2
    one_error(capsys.readouterr().err, "nested too deeply")


# 3 -------------------------------------------------------------------- --rounds bounds
@pytest.mark.parametrize("value", [str(MAX_ROUNDS + 1), "10" * 15, str(2**64), "1e30", "0"])
@pytest.mark.parametrize("command", ["run", "sweep", "compare", "bench", "report"])
def test_rounds_have_the_bounds_of_a_file(value, command, capsys, tmp_path, monkeypatch):
    forbid_simulation(monkeypatch)
    args = [command] + ([] if command == "bench" else [str(DUEL)])
    if command == "sweep":
        args += ["--vary", "Sigrid.readiness=1..2"]
    if command == "compare":
        args += ["--set", "Sigrid.readiness=2"]
    if command == "report":
        args += ["--out", str(tmp_path / "r")]
    assert main([*args, "--rounds", value]) == 2
    one_error(capsys.readouterr().err, "--rounds", "1,000,000,000,000")
    assert not (tmp_path / "r").exists()


def test_cli_bounds_equal_the_file_bounds(capsys):
    """The command line checks --rounds with simkit.api, whose bound is the file's."""
    assert api.MAX_ROUNDS == MAX_ROUNDS
    assert cli._rounds(str(MAX_ROUNDS)) == MAX_ROUNDS
    # "_" between digits is TOML's, for files; on the command line digits are digits
    with pytest.raises(argparse.ArgumentTypeError, match="ASCII digits"):
        cli._rounds(f"{MAX_ROUNDS:_}")
    with pytest.raises(argparse.ArgumentTypeError, match="1,000,000,000,000"):
        cli._rounds(str(MAX_ROUNDS + 1))


# 4 -------------------------------------------------------------------- --out checked first
@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda p: (p / "file").write_text("x") and "file/sub", "not a directory"),
        (lambda p: (p / "file").write_text("x") and "file", "not a directory"),
        (
            lambda p: (p / "d").mkdir() or (p / "d" / "notes.txt").write_text("x") and "d",
            "notes.txt",
        ),
        (lambda p: "", "empty path"),
    ],
)
def test_a_bad_out_is_found_before_simulating(tmp_path, capsys, monkeypatch, make, fragment):
    forbid_simulation(monkeypatch)
    out = make(tmp_path)
    before = sorted(os.listdir(tmp_path))
    assert (
        main(["run", str(DUEL), "--rounds", "100", "--out", str(tmp_path / out) if out else ""])
        == 2
    )
    one_error(capsys.readouterr().err, "--out", fragment)
    assert sorted(os.listdir(tmp_path)) == before


def test_an_unwritable_parent_is_found_before_simulating(tmp_path, capsys, monkeypatch):
    """Permission denied (root ignores modes, so the probe's failure is simulated)."""
    forbid_simulation(monkeypatch)
    real = simkit.output.files.tempfile.mkstemp

    def denied(*args, dir=None, **kwargs):
        if dir is not None and Path(dir) == tmp_path:
            raise PermissionError(13, "Permission denied")
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(simkit.output.files.tempfile, "mkstemp", denied)
    assert main(["run", str(DUEL), "--rounds", "100", "--out", str(tmp_path / "new")]) == 2
    one_error(capsys.readouterr().err, "--out", "not writable", "Permission denied")


def test_when_writing_fails_after_the_run_the_table_is_still_printed(tmp_path, capsys, monkeypatch):
    def full(self, files):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(OutputDir, "write", full)
    assert main(["run", str(DUEL), "--rounds", "2000", "--out", str(tmp_path / "o")]) == 2
    captured = capsys.readouterr()
    assert "Sigrid" in captured.out and "rounds, seed" in captured.out
    one_error(captured.err, "could not write", "No space left on device", "nothing was written")


# 5 -------------------------------------------------------------------- all or nothing
def test_a_result_directory_changes_as_a_whole(tmp_path, monkeypatch):
    out = tmp_path / "result"
    first = OutputDir(out).write({"summary.json": "old\n", "metrics.csv": "old\n", "x.png": b"o"})
    assert {p.name for p in first} == {"summary.json", "metrics.csv", "x.png"}
    real_open = open
    calls = []

    def interrupted(path, *args, **kwargs):
        calls.append(path)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", interrupted)
    with pytest.raises(KeyboardInterrupt):
        OutputDir(out).write({"summary.json": "new\n", "metrics.csv": "new\n"})
    monkeypatch.undo()
    assert (out / "summary.json").read_text() == "old\n"
    assert (out / "metrics.csv").read_text() == "old\n"
    assert sorted(os.listdir(tmp_path)) == ["result"]  # no hidden leftovers
    OutputDir(out).write({"summary.json": "new\n", "metrics.csv": "new\n"})
    assert sorted(os.listdir(out)) == [".simkit", "metrics.csv", "summary.json"]  # no stale png
    assert (out / "summary.json").read_text() == "new\n"
    assert sorted(os.listdir(tmp_path)) == ["result"]


# 6 / 7 --------------------------------------------------------------- signals, in a process
def _start(args: list[str], tmp_path: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [*SIMKIT, *args],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _wait_for_the_entry_point(proc: subprocess.Popen) -> None:
    """Wait until the command has installed its SIGTERM handler (``SigCgt`` in
    /proc/PID/status), the first thing its entry point does.  Before that moment the
    Python interpreter itself is starting (about 30 ms) and a signal gets Python's own
    default; no code of simkit could run yet.  Everything after it, the imports of numpy
    and numba included, is covered by the test below."""
    status = Path(f"/proc/{proc.pid}/status")
    deadline = time.perf_counter() + 10
    while time.perf_counter() < deadline:
        try:
            caught = next(
                int(line.split()[1], 16)
                for line in status.read_text().splitlines()
                if line.startswith("SigCgt:")
            )
        except (OSError, StopIteration):
            caught = 0
        if caught & (1 << (signal.SIGTERM - 1)):
            return
        time.sleep(0.001)
    pytest.fail("the command did not install its SIGTERM handler within 10 s")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sig", "status", "word"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
)
@pytest.mark.parametrize("delay", [0.0, 0.05, 0.4, 2.0])
def test_a_signal_at_any_moment_is_one_line_and_leaves_nothing(tmp_path, sig, status, word, delay):
    proc = _start(["run", str(WOLVES), "--rounds", "200000000", "--out", "o"], tmp_path)
    if not Path(f"/proc/{proc.pid}/status").exists():
        pytest.skip("needs /proc to see when the command has started")
    _wait_for_the_entry_point(proc)
    time.sleep(delay)
    proc.send_signal(sig)
    start = time.perf_counter()
    out, err = proc.communicate(timeout=60)
    stopped_in = time.perf_counter() - start
    if proc.returncode == 0:  # the run cannot finish that soon
        pytest.fail("the run ended before the signal")
    assert proc.returncode == status, err
    assert err.strip().splitlines() == [f"simkit: {word}"], err
    assert out == ""
    assert os.listdir(tmp_path) == []  # no result, no temporary file
    # It stops at once (about 0.1-0.3 s on an idle machine: the chunk in flight, then
    # exit), where running on would take minutes (200 million rounds at under 2 M
    # rounds/s).  30 s is a hundred times the normal figure, so a loaded machine (a
    # parallel compile made it 10 times slower) cannot fail it, and still far below
    # what not stopping would take.
    assert stopped_in < 30.0


# 8 -------------------------------------------------------------------- big scenarios stop
def _big(tmp_path: Path, n: int = 200, readiness: int = 20) -> Path:
    text = HEAD + "".join(
        f'[[combatant]]\nname = "C{i}"\nside = "{"ab"[i % 2]}"\nreadiness = {readiness}\n'
        f'hold = "{"until_enemy_acts" if i % 3 == 0 else "never"}"\n'
        for i in range(n)
    )
    return write(tmp_path, text, "big.toml")


@pytest.mark.slow
def test_a_200_combatant_run_stops_at_the_chunk_in_flight(tmp_path):
    """Ctrl-C in the middle of a 200-combatant run stops it after the chunks in flight.

    How short a chunk is, is counted, not timed, by the next test (a chunk's rounds x
    cost stay within a normal full chunk's).  Here the whole process answers: about
    0.5 s on an idle machine; the deadline is 40 times that, so load cannot fail it,
    while the same run without the chunk rule would need a 128-times-longer chunk, and
    running to the end would take hours."""
    path = _big(tmp_path)
    proc = _start(["run", str(path), "--rounds", "100000000", "--workers", "2"], tmp_path)
    time.sleep(4.0)  # usually compiled or cached by now; if not, it stops all the same
    proc.send_signal(signal.SIGINT)
    start = time.perf_counter()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert time.perf_counter() - start < 20.0


def test_progress_is_reported_after_every_chunk_at_any_size(tmp_path):
    """Progress (and with it Ctrl-C) is answered after every chunk, and a big scenario's
    chunk holds no more work than a normal full chunk (engine's chunk size rule).

    Counted, not timed: the first report comes after exactly one chunk's rounds, and
    rounds x cost of that chunk are within CHUNK_ROUNDS x COST_FULL_CHUNK.  That the cost
    model is honest (a chunk of that budget takes a few tenths of a second) is checked
    with a deadline far above the normal figure: about 0.3 s idle; 10 s allows a machine
    30 times slower (a parallel compile once made it 2.6 s), while a 200-combatant chunk
    of full size, the failure this guards against, takes 128 times the normal figure."""
    from simkit import engine, systems
    from simkit.engine.core import COST_FULL_CHUNK

    scenario = simkit.load_scenario(_big(tmp_path))
    size = engine.chunk_rounds(scenario)
    cost = systems.get(scenario.system).cost(scenario)
    assert cost > 16 * COST_FULL_CHUNK  # a scenario the rule has to cut
    assert size < engine.CHUNK_ROUNDS
    assert size * cost <= engine.CHUNK_ROUNDS * COST_FULL_CHUNK
    assert 2 * size * cost > engine.CHUNK_ROUNDS * COST_FULL_CHUNK  # the largest that fits
    engine.simulate(scenario, 50, engine.seed_sequence(1), workers=1)  # compile first
    reports: list[tuple[int, float]] = []
    start = time.perf_counter()

    def progress(n: int) -> None:
        reports.append((n, time.perf_counter() - start))
        if len(reports) == 3:
            raise KeyboardInterrupt  # stop at the third report

    with pytest.raises(KeyboardInterrupt):
        engine.simulate(scenario, 10**9, engine.seed_sequence(1), workers=1, progress=progress)
    assert [n for n, _ in reports] == [size] * 3  # one report per chunk
    assert reports[0][1] < 10.0


# 9 -------------------------------------------------------------------- unwritable HOME
@pytest.fixture
def request_cleanup():
    paths: list[Path] = []
    yield paths
    for p in paths:
        shutil.rmtree(p, ignore_errors=True)


RUN_IMPORTS = ("numpy", "numpy.libs", "numba", "llvmlite")  # what `simkit run` needs


@pytest.mark.slow
def test_a_user_whose_home_is_not_writable_can_run(request_cleanup):
    """As user nobody, HOME unwritable, the package directory not writable either."""
    python = Path("/usr/bin/python3")
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None or not python.exists():
        pytest.skip("needs root, setpriv and /usr/bin/python3 to run as another user")
    version = subprocess.run(
        [str(python), "-c", "import sys; print(sys.version_info[:2])"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    if version != str(sys.version_info[:2]):
        pytest.skip(f"/usr/bin/python3 is {version}, the venv is {sys.version_info[:2]}")
    site = next(p for p in sys.path if p.endswith("site-packages") and ".venv" in p)
    import tempfile

    work = Path(tempfile.mkdtemp(prefix="simkit-nobody-", dir="/tmp"))  # reachable by nobody
    os.chmod(work, 0o777)
    request_cleanup.append(work)
    shutil.copy(DUEL, work / "duel.toml")
    # The checkout and its .venv may sit below a directory only root can enter (a
    # mktemp -d clone): give nobody its own copy of simkit and of what a run imports,
    # owned by root and not writable by nobody (hard links where the filesystem allows).
    code = work / "code"
    for src, dst in [
        (ROOT / "simkit", code / "pkg" / "simkit"),
        *((Path(site) / n, code / "site" / n) for n in RUN_IMPORTS if (Path(site) / n).exists()),
    ]:
        try:
            shutil.copytree(src, dst, copy_function=os.link)
        except OSError:
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(src, dst)
    for d, _, _ in os.walk(code):
        os.chmod(d, 0o755)
    env = {
        "HOME": "/nonexistent",
        "PYTHONPATH": f"{code / 'site'}{os.pathsep}{code / 'pkg'}",
        "PATH": "/usr/bin:/bin",
        "TMPDIR": str(work),
    }
    proc = subprocess.run(
        [
            setpriv,
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            str(python),
            "-m",
            "simkit",
            "run",
            "duel.toml",
            "--rounds",
            "1000",
            "--workers",
            "1",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Sigrid" in proc.stdout
    assert "Traceback" not in proc.stderr
    assert (work / "simkit-numba-cache-65534").is_dir()  # cached in the fallback


# 10 -------------------------------------------------------------------- stdout trouble
@pytest.mark.parametrize("command", [["validate"], ["run", "--rounds", "1000"]])
def test_a_full_stdout_is_one_line(tmp_path, command):
    with open("/dev/full", "w") as full:
        args = [*SIMKIT, command[0], str(DUEL), *command[1:]]
        if command[0] == "run":
            args += ["--out", str(tmp_path / "o")]
        proc = subprocess.run(args, stdout=full, stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 2
    line = one_error(proc.stderr, "cannot write to standard output", "No space left on device")
    if command[0] == "run":
        assert "were written" in line and (tmp_path / "o" / "summary.json").exists()


def test_a_closed_stdout_is_one_line():
    proc = subprocess.run(
        [*SIMKIT, "validate", str(DUEL)],
        stderr=subprocess.PIPE,
        text=True,
        stdout=None,
        preexec_fn=lambda: os.close(1),
    )
    assert proc.returncode == 2
    one_error(proc.stderr, "standard output is closed")


# 11 -------------------------------------------------------------------- bounded inputs
def _count_calls(monkeypatch, module, name: str) -> list:
    """Record every call of ``module.name`` (still made): counted work instead of time."""
    calls: list = []
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_the_combatant_limit_comes_before_count_expansion(tmp_path, capsys, monkeypatch):
    path = write(
        tmp_path,
        HEAD + A + ('[[combatant]]\nname = "W"\nside = "b"\nreadiness = 1\ncount = 100\n') * 5000,
    )
    assert path.stat().st_size < (1 << 20)
    made = _count_calls(monkeypatch, validate, "combatant_params")
    assert main(["validate", str(path)]) == 2
    assert made == []  # refused before a single entry was read, let alone expanded
    one_error(capsys.readouterr().err, "500,001 combatants", "at most 200")


@pytest.mark.parametrize("size", [40_000, 80_000])
def test_long_dotted_keys_are_rejected_before_parsing(tmp_path, capsys, monkeypatch, size):
    """tomllib takes quadratic time over a long dotted key; the line limit refuses the
    file before it is parsed (counted: the parser is never called)."""
    key = ".".join(["k"] * (size // 2))
    path = write(tmp_path, HEAD + A + B + f"[rules]\n{key} = 1\n")
    parsed = _count_calls(monkeypatch, validate.tomllib, "loads")
    assert main(["validate", str(path)]) == 2
    assert parsed == []
    one_error(capsys.readouterr().err, "characters; at most")


def test_a_file_over_the_limit_is_rejected_unread(tmp_path, capsys):
    path = tmp_path / "big.toml"
    path.write_bytes(b"#" * ((1 << 20) + 1))
    assert main(["validate", str(path)]) == 2
    one_error(capsys.readouterr().err, "at most 1,048,576 bytes")


@pytest.mark.parametrize("special", ["/dev/zero", "fifo", "dir"])
def test_only_regular_files_are_read(tmp_path, capsys, monkeypatch, special):
    if special == "fifo":
        path = tmp_path / "fifo.toml"
        os.mkfifo(path)
    elif special == "dir":
        path = tmp_path
    else:
        path = Path(special)
    opened = _count_calls(monkeypatch, builtins, "open")
    assert main(["validate", str(path)]) == 2
    # never opened: reading a fifo would wait for a writer, /dev/zero would never end
    assert not [c for c in opened if str(c[0]) == str(path)]
    one_error(capsys.readouterr().err, "not a regular file")


# 12 -------------------------------------------------------------------- one validator
@pytest.mark.parametrize(
    "args",
    [
        ["compare", str(WOLVES), "--set", "Wolf.weakness=5"],
        ["sweep", str(WOLVES), "--vary", "Wolf.weakness=1..2"],
    ],
)
def test_weakness_on_a_secondary_is_rejected_by_specs_too(args, capsys, monkeypatch):
    forbid_simulation(monkeypatch)
    assert main(args) == 2
    one_error(capsys.readouterr().err, "weakness applies to heroes only")


# 14 -------------------------------------------------------------------- odds and ends
def test_result_files_are_world_readable(tmp_path):
    old = os.umask(0o022)
    try:
        assert main(["run", str(DUEL), "--rounds", "1000", "--out", str(tmp_path / "o")]) == 0
    finally:
        os.umask(old)
    for f in (tmp_path / "o").iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o644, f
    assert stat.S_IMODE((tmp_path / "o").stat().st_mode) == 0o755


def test_long_values_are_shortened_in_error_lines(tmp_path, capsys):
    path = write(tmp_path, HEAD + A + f'hold = "{"a" * 3_000}"\n' + B)
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    one_error(err, "(3,000 characters)")
    assert len(err) < 1000
    # a line longer than any scenario needs is refused before it is parsed
    path = write(tmp_path, HEAD + A + f'hold = "{"a" * 100_000}"\n' + B)
    assert main(["validate", str(path)]) == 2
    one_error(capsys.readouterr().err, "line 8 has 100,009 characters; at most 4,096")


@pytest.mark.parametrize("bad", ["\\u001b[2J", "Hero\\nthe Bold", "tab\\there"])
@pytest.mark.parametrize("field", ["name", "side"])
def test_control_characters_are_not_allowed_in_names_or_sides(tmp_path, capsys, bad, field):
    entry = (
        A.replace('name = "A"', f'name = "{bad}"')
        if field == "name"
        else A.replace('side = "a"', f'side = "{bad}"')
    )
    assert main(["validate", str(write(tmp_path, HEAD + entry + B))]) == 2
    err = capsys.readouterr().err
    one_error(err, "control characters")
    assert "\x1b" not in err


def test_an_unreachable_scheduler_gives_up_after_the_timeout(capsys):
    requires_module("distributed", "the dask extra")
    start = time.perf_counter()
    status = main(
        [
            "run",
            str(DUEL),
            "--rounds",
            "1000",
            "--scheduler",
            "tcp://127.0.0.1:1",
            "--connect-timeout",
            "1",
        ]
    )
    assert status == 2
    # --connect-timeout 1: about 1.5 s in all (importing distributed included) on an
    # idle machine; distributed's own default would wait 30 s.  20 s is far above the
    # normal figure and still tells the two apart.
    assert time.perf_counter() - start < 20.0
    one_error(capsys.readouterr().err, "--scheduler", "cannot connect", "within 1 s")


def test_output_dir_reuses_its_own_but_never_replaces_a_users_file(tmp_path):
    d = tmp_path / "d"
    OutputDir(d).write({"summary.json": "{}\n"})
    OutputDir(d).write({"summary.json": "[]\n"})  # its own: replaced as a whole
    (d / "notes.txt").write_text("mine")
    with pytest.raises(OutputError, match="notes.txt"):
        OutputDir(d)
    assert (d / "notes.txt").read_text() == "mine"
