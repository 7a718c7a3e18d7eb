"""Ctrl-C and SIGTERM for the ``simkit`` command, from its first instant to its last.

Installed by ``simkit/__init__.py`` before anything else is imported (numpy, pandas,
numba, matplotlib: up to a second or more of start-up on a loaded machine), and only
when this process *is* the command (the ``simkit`` script or ``python -m simkit``):
importing simkit in a program or a notebook leaves its signal handlers alone.

What a signal does depends on the moment:

* **Start-up** (before ``running()``), **inside an import** (a frame of Python's import
  machinery on the stack, e.g. the lazy ``import matplotlib`` of a report), and
  **after the run** (``settle()``): the handler prints one line (``simkit:
  interrupted`` / ``simkit: terminated``) and ends the process at once with 130 / 143.
  Nothing is written yet (or everything is), and an import cannot be left half-done:
  a KeyboardInterrupt raised inside an import is swallowed by Python's import locks
  ("Exception ignored in ... _get_module_lock") or breaks the module for good
  ("ImportError: initialization failed").
* **Running**: the first signal raises KeyboardInterrupt (SIGTERM: ``Terminated``) in
  the main thread, and the command stops in order: workers stopped, temporary files
  removed, one line.  Further signals are ignored (a storm of 30 Ctrl-C must not
  interrupt the clean-up itself).  Inside ``held()`` (a result directory being swapped)
  the exception waits until the section ends.
* **A stop that hangs**: the C-level handler also writes to a wake-up pipe, read by a
  watchdog thread that does not need the main thread; if the process still lives
  ``GRACE_S`` after the first signal (the main thread stuck in a long C call, or the
  KeyboardInterrupt swallowed by a finaliser), the watchdog prints the line and ends
  the process.  So every signal ends the command within a second.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from types import FrameType

EXIT_STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}
WORDS = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}
GRACE_S = 0.7  # how long an orderly stop may take before the watchdog ends the process
PROG = "simkit"

STARTING, RUNNING, DONE = "starting", "running", "done"


class Terminated(BaseException):
    """SIGTERM arrived (raised in the main thread by the handler while running)."""


class _State:
    installed = False
    mode = STARTING
    first: int | None = None  # the first signal's number
    held = 0  # depth of held() sections
    pending = False  # a signal arrived inside held()
    reported = False  # the line was printed


_state = _State()


def is_command() -> bool:
    """True when this process runs the simkit command (script or ``python -m simkit``)."""
    argv = list(getattr(sys, "orig_argv", ()) or ())
    if "-m" in argv:
        k = argv.index("-m")
        if k + 1 < len(argv) and argv[k + 1] == "simkit":
            return True
    script = sys.argv[0] if sys.argv else ""
    return os.path.basename(script) in ("simkit", "simkit.exe")


def install() -> bool:
    """Install the handlers and the watchdog (once; main thread only).  True if done."""
    if _state.installed:
        return True
    try:
        signal.signal(signal.SIGINT, _handler)
        signal.signal(signal.SIGTERM, _handler)
    except (ValueError, OSError, AttributeError):  # not the main thread, or no SIGTERM
        return False
    _state.installed = True
    _start_watchdog()
    return True


def install_for_command() -> None:
    """``install()`` when this process is the simkit command (see the module docstring)."""
    if is_command():
        install()


def running() -> None:
    """From now on a signal stops the command in order (KeyboardInterrupt/Terminated)."""
    if _state.mode == STARTING:
        _state.mode = RUNNING


def settle(status: int) -> int:
    """The exit status once ``main`` has returned: 130/143 if a signal arrived (the line
    printed if nobody did), else ``status``.  A signal from now on ends the process."""
    _state.mode = DONE
    first = _state.first
    if first is None:
        return status
    if status != EXIT_STATUS[first]:
        _report(first)
    _state.reported = True
    return EXIT_STATUS[first]


def exception_for(signum: int) -> BaseException:
    return Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


@contextmanager
def held() -> Iterator[None]:
    """A section a signal must not interrupt (a directory swap): the exception is raised
    when it ends."""
    _state.held += 1
    try:
        yield
    finally:
        _state.held -= 1
        if not _state.held and _state.pending and _state.mode == RUNNING:
            _state.pending = False
            assert _state.first is not None
            raise exception_for(_state.first)


def _handler(signum: int, frame: FrameType | None) -> None:
    if _state.first is not None:
        return  # a storm: the first signal is being handled
    _state.first = signum
    if _state.mode != RUNNING or _importing(frame):
        _exit(signum)
    if _state.held:
        _state.pending = True
        return
    raise exception_for(signum)


def _importing(frame: FrameType | None) -> bool:
    """True if Python's import machinery is on the stack (an import in progress)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def _report(signum: int) -> None:
    if _state.reported:
        return
    _state.reported = True
    with suppress(OSError):
        os.write(2, f"{PROG}: {WORDS[signum]}\n".encode())


def _exit(signum: int) -> None:
    _report(signum)
    os._exit(EXIT_STATUS[signum])


def _start_watchdog() -> None:
    """A thread woken by the C-level handler (``signal.set_wakeup_fd``)."""
    import threading

    try:
        read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)
        signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    except (OSError, ValueError, AttributeError):
        return
    threading.Thread(target=_watch, args=(read_fd,), name="simkit-signals", daemon=True).start()


def _watch(read_fd: int) -> None:
    import time

    # this thread never takes a signal: the main thread's handler runs as usual
    with suppress(AttributeError, OSError, ValueError):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    signum = 0
    while signum not in EXIT_STATUS:
        try:
            data = os.read(read_fd, 64)
        except OSError:
            return
        if not data:
            return
        signum = next((b for b in data if b in EXIT_STATUS), 0)
    if _state.mode != RUNNING:  # starting or done: nothing to clean up
        time.sleep(0.05)  # the handler in the main thread is normally this quick
        _exit(signum)
    time.sleep(GRACE_S)
    _exit(signum)
