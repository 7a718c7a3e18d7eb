"""Ctrl-C and SIGTERM from the first instant of the ``simkit`` command (simkit._signals).

A signal at any moment after the entry point starts -- while Python imports numpy,
pandas and numba, while numba compiles, while the run is under way -- ends the command
within a second with exactly one line (``simkit: interrupted`` / ``simkit: terminated``)
and status 130 / 143: never a traceback, never an "Exception ignored" line, never a run
that goes on to finish.  Each delay is tried with a cold start (an empty numba cache and
no byte-compiled Python: everything imported from source) and a warm one, with a busy
process beside it.

"The entry point starts" is the moment ``simkit/__init__.py`` installs its handlers
(seen as SIGTERM in ``SigCgt`` of /proc/PID/status); before it the Python interpreter
itself is starting (its own imports, the virtualenv's .pth files: 30-60 ms) and no code
of simkit can run.  A delay shorter than that is sent as soon as the handlers are there.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simkit import _signals

ROOT = Path(__file__).resolve().parents[1]
WOLVES = ROOT / "scenarios" / "party_vs_wolves.toml"
DELAYS = [round(0.02 * (100 ** (k / 19)), 3) for k in range(20)]  # 0.02 s .. 2 s
STOP_S = 1.0  # from the signal to the end of the process
RUN = ["run", str(WOLVES), "--rounds", str(10**11)]  # cannot finish in the test's time
WORDS = {signal.SIGINT: (130, "interrupted"), signal.SIGTERM: (143, "terminated")}

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc"),
]


def _caught(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigCgt:"):
                return int(line.split()[1], 16)
    except OSError:
        pass
    return 0


def _wait_for_handlers(proc: subprocess.Popen, until: float) -> None:
    """Until simkit's handlers are installed (SIGTERM caught) or the process ended."""
    while time.perf_counter() < until and proc.poll() is None:
        if _caught(proc.pid) & (1 << (signal.SIGTERM - 1)):
            return
        time.sleep(0.0005)


@pytest.fixture(scope="module")
def busy():
    """A process that keeps one core busy throughout (the machine under load)."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    yield proc
    proc.kill()
    proc.wait()


@pytest.fixture(scope="module")
def warm_env(tmp_path_factory):
    """Environment of a warm start: the kernels compiled once into a cache directory."""
    cache = tmp_path_factory.mktemp("numba-cache")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_CACHE_DIR": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run(
        [sys.executable, "-m", "simkit", "run", str(WOLVES), "--rounds", "2"],
        env=env,
        check=True,
        capture_output=True,
        timeout=600,
    )
    return env


def _cold_env(tmp: Path, python_too: bool) -> dict[str, str]:
    """A cold start: an empty numba cache (the kernels compiled in the run), and with
    ``python_too`` no byte-compiled Python read or written either (every module compiled
    from source: the imports alone then outlast the 2 s; without it, compiling the kernels
    starts within a second and the later delays land in numba's compiler)."""
    (tmp / "numba").mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_CACHE_DIR": str(tmp / "numba")}
    if python_too:
        (tmp / "pycache").mkdir()
        env.update(PYTHONPYCACHEPREFIX=str(tmp / "pycache"), PYTHONDONTWRITEBYTECODE="1")
    return env


def _trial(env: dict[str, str], cwd: Path, sig: int, delay: float) -> str:
    """One signal ``delay`` s after the start; '' if all is well, else what went wrong."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "simkit", *RUN, "--out", "o"],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    started = time.perf_counter()
    _wait_for_handlers(proc, started + 30)
    pause = started + delay - time.perf_counter()
    if pause > 0:
        time.sleep(pause)
    sent = time.perf_counter()
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return f"{delay} s: still running 30 s after the signal"
    stopped = time.perf_counter() - sent
    status, word = WORDS[sig]
    problems = []
    if proc.returncode != status:
        problems.append(f"exit {proc.returncode}, not {status}")
    if err.splitlines() != [f"simkit: {word}"]:
        problems.append(f"stderr {err[-500:]!r}")
    if out:
        problems.append(f"stdout {out[-200:]!r} (a finished run?)")
    if stopped > STOP_S:
        problems.append(f"stopped {stopped:.2f} s after the signal")
    if (cwd / "o").exists():
        problems.append("a result was written")
    at = sent - started
    return f"{delay} s (sent at {at:.3f} s): " + "; ".join(problems) if problems else ""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_at_any_moment_of_a_warm_start(tmp_path, busy, warm_env, sig):
    failures = [f for d in DELAYS if (f := _trial(warm_env, tmp_path, sig, d))]
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("python_too", [True, False], ids=["imports", "kernels"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_at_any_moment_of_a_cold_start(tmp_path, busy, warm_env, sig, python_too):
    failures = []
    for k, delay in enumerate(DELAYS):
        trial = tmp_path / f"t{k}"
        trial.mkdir()
        if failure := _trial(_cold_env(trial, python_too), trial, sig, delay):
            failures.append(failure)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("at", [0.3, 3.0], ids=["starting", "running"])
def test_a_storm_of_30_interrupts_5_ms_apart_is_one_line(tmp_path, busy, warm_env, at):
    proc = subprocess.Popen(
        [sys.executable, "-m", "simkit", *RUN],
        cwd=tmp_path,
        env=warm_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for_handlers(proc, time.perf_counter() + 30)
    time.sleep(at)
    first = time.perf_counter()
    for _ in range(30):
        if proc.poll() is not None:
            break
        proc.send_signal(signal.SIGINT)
        time.sleep(0.005)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert err.splitlines() == ["simkit: interrupted"], err
    assert out == ""
    assert time.perf_counter() - first < STOP_S + 30 * 0.005


# the pieces, in this process ---------------------------------------------------------
def test_the_handlers_are_installed_only_for_the_command():
    assert not _signals.is_command()  # pytest imported simkit: no handler of simkit's
    assert signal.getsignal(signal.SIGINT) is not _signals._handler


def test_the_entry_points_reach_simkit_first():
    """Both entry points import the package first, whose first statement installs the
    handlers: the console script names simkit.cli (package first), and ``python -m
    simkit`` imports the package before ``__main__``."""
    text = (ROOT / "pyproject.toml").read_text()
    assert 'simkit = "simkit.cli:console_main"' in text
    init = (ROOT / "simkit" / "__init__.py").read_text()
    body = init.split('"""', 2)[2]
    code = [
        line for line in body.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]
    assert code[:3] == [
        "from __future__ import annotations",
        "from simkit import _signals",
        "_signals.install_for_command()",
    ]
    source = (ROOT / "simkit" / "_signals.py").read_text()
    heavy = ("numpy", "pandas", "numba", "matplotlib", "simkit.")
    imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert not [line for line in imports if any(h in line for h in heavy)], imports


def test_a_signal_inside_held_waits_for_the_end(monkeypatch):
    monkeypatch.setattr(_signals, "_state", _signals._State())
    _signals._state.mode = _signals.RUNNING
    order = []
    with pytest.raises(KeyboardInterrupt), _signals.held():
        _signals._handler(signal.SIGINT, None)  # returns: held
        order.append("section finished")
    assert order == ["section finished"]
    _signals._handler(signal.SIGINT, None)  # a second signal: ignored


def test_settle_gives_the_signals_status_when_the_interrupt_was_swallowed(monkeypatch, capfd):
    monkeypatch.setattr(_signals, "_state", _signals._State())
    assert _signals.settle(0) == 0
    monkeypatch.setattr(_signals, "_state", _signals._State())
    _signals._state.first = signal.SIGTERM
    assert _signals.settle(0) == 143
    assert capfd.readouterr().err == "simkit: terminated\n"
    monkeypatch.setattr(_signals, "_state", _signals._State())
    _signals._state.first = signal.SIGINT
    assert _signals.settle(130) == 130  # the command said it already
    assert capfd.readouterr().err == ""
