"""Writing result files: one atomic writer, and result directories that change as a whole.

``write_files({path: text or bytes})`` writes every file to a temporary name in its
directory, then renames them into place; files are created with mode 0644 (less the
umask).  Nothing half-written is ever left under a target name, and temporary files
are removed on any error.

``OutputDir`` is a *result directory* (``--out DIR``): checked before anything is
simulated (creatable, writable, and holding nothing but files with the names simkit
writes, so that no file of the user's is ever replaced), then
written as a whole: every file goes into a new hidden directory beside it, which is
swapped in with one atomic exchange (``renameat2(RENAME_EXCHANGE)`` on Linux; two
renames elsewhere) and the previous contents are removed.  A reader sees the old
files or the new ones, never a mix.  Ctrl-C and SIGTERM are held back during the swap.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

FILE_MODE = 0o644
DIR_MODE = 0o755
MARKER = ".simkit"  # names every file of a result directory
KNOWN_NAMES = frozenset(
    {
        "summary.json",
        "metrics.csv",
        "groups.csv",
        "sides.csv",
        "sweep.csv",
        "compare.csv",
        "tune.csv",
        "holding.csv",
        "defending.csv",
        "acts_before.csv",
        "actions_distribution.csv",
        "report.html",
        "report.md",
        "trace.jsonl",
        MARKER,
    }
)
KNOWN_SUFFIXES = (".png", ".csv")


class OutputError(OSError):
    """A result directory that cannot be used or written; the message says why."""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_files(files: Mapping[Path, str | bytes]) -> list[Path]:
    """Write every file to a temporary name first, then rename them all into place."""
    temps: list[tuple[str, Path]] = []
    mode = FILE_MODE & ~_umask()
    try:
        for path, content in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            temps.append((tmp, path))
            data = content.encode("utf-8") if isinstance(content, str) else content
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.chmod(tmp, mode)
        with signals_held():
            for tmp, path in temps:
                os.replace(tmp, path)
    finally:
        for tmp, _ in temps:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return list(files)


@contextmanager
def signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back (main thread only) for a short critical section."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "pthread_sigmask"
    ):
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _libc_renameat2():  # type: ignore[no-untyped-def]
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_RENAMEAT2 = _libc_renameat2()


def exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically; False where the system cannot (then nothing moved)."""
    if _RENAMEAT2 is None:
        return False
    rc = _RENAMEAT2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def is_known(name: str) -> bool:
    """A file name simkit writes into a result directory."""
    return name in KNOWN_NAMES or name.endswith(KNOWN_SUFFIXES)


class OutputDir:
    """A result directory, checked when made (see the module docstring)."""

    def __init__(self, path: str | Path, option: str = "--out") -> None:
        text = str(path)
        if not text.strip():
            raise OutputError(f"{option}: an empty path is not a directory; give a directory")
        self.option = option
        self.path = Path(text)
        self._check()

    def _fail(self, why: str) -> OutputError:
        return OutputError(f"{self.option}: cannot write to '{self.path}': {why}")

    def _check(self) -> None:
        p = self.path
        try:
            info = os.stat(p)
        except FileNotFoundError:
            info = None
        except NotADirectoryError:
            info = None  # a file on the way: _existing_parent names it
        except OSError as exc:
            raise self._fail(exc.strerror or str(exc)) from None
        if info is not None:
            if not stat.S_ISDIR(info.st_mode):
                raise self._fail("it exists and is not a directory")
            entries = sorted(os.listdir(p))
            strangers = [e for e in entries if not is_known(e) or (p / e).is_dir()]
            if strangers:
                shown = ", ".join(strangers[:3]) + (", ..." if len(strangers) > 3 else "")
                raise self._fail(
                    f"it holds files simkit did not write ({shown}); give a new or empty "
                    "directory, or one simkit wrote before"
                )
        parent = self._existing_parent()
        if not os.access(parent, os.W_OK | os.X_OK):
            raise self._fail(f"'{parent}' is not writable")
        try:  # the access() answer is not the whole truth (read-only mounts, ACLs)
            fd, probe = tempfile.mkstemp(prefix=".simkit-probe-", dir=parent)
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise self._fail(f"'{parent}' is not writable: {exc.strerror or exc}") from None

    def _existing_parent(self) -> Path:
        """The directory where the result directory (or its first missing ancestor) will
        be created."""
        p = self.path.absolute()
        if p.is_dir():
            return p.parent
        cur = p.parent
        while not os.path.lexists(cur):
            cur = cur.parent
        if not cur.is_dir():
            raise self._fail(f"'{cur}' is a file, not a directory")
        return cur

    def write(self, files: Mapping[str, str | bytes]) -> list[Path]:
        """Write ``files`` (name -> content) as the whole new content of the directory."""
        target = self.path.absolute()
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp: Path | None = Path(tempfile.mkdtemp(prefix=f".{target.name}.new-", dir=target.parent))
        mode = FILE_MODE & ~_umask()
        try:
            names = sorted(files)
            for name, content in files.items():
                data = content.encode("utf-8") if isinstance(content, str) else content
                with open(tmp / name, "wb") as fh:
                    fh.write(data)
                os.chmod(tmp / name, mode)
            (tmp / MARKER).write_text("\n".join(["simkit result directory", *names]) + "\n")
            os.chmod(tmp / MARKER, mode)
            os.chmod(tmp, DIR_MODE & ~_umask())
            with signals_held():
                if target.exists():
                    if not exchange(tmp, target):
                        old = Path(
                            tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent)
                        )
                        os.rmdir(old)
                        os.rename(target, old)
                        os.rename(tmp, target)
                        tmp = old
                else:
                    os.rename(tmp, target)
                    tmp = None
                if tmp is not None:  # the previous contents
                    shutil.rmtree(tmp, ignore_errors=True)
                    tmp = None
        finally:
            if tmp is not None and tmp.exists():
                with signals_held():
                    shutil.rmtree(tmp, ignore_errors=True)
        return [self.path / name for name in files]
