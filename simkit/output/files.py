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

Three kinds of ``--out`` are checked for up front as well:

* a symbolic link to a directory is written *through*: the result goes to the link's
  target (swapped there as above) and the link itself stays as it is;
* a symbolic link to nothing (dangling, or into a missing directory) is refused;
* a mount point (a container volume) cannot be swapped, so its files are written in
  place, each replaced atomically, and the files of the previous result that the new
  one does not have are removed afterwards.

If writing fails anyway after a run (a full disk, a directory removed meanwhile), the
files are saved in a new ``simkit-result-*`` directory in the system's temporary
directory and the error says where.
"""

from __future__ import annotations

import contextlib
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

from simkit import _signals
from simkit.bounded import cut

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
        # another thread may take the signal meanwhile: the handler waits for this too
        with _signals.held():
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
        self.target = self._resolve()  # where the files go (a link's target)
        self.in_place = os.path.ismount(self.target)  # no swap possible: file by file
        self._check()

    def _fail(self, why: str) -> OutputError:
        return OutputError(f"{self.option}: cannot write to '{cut(str(self.path))}': {why}")

    def _resolve(self) -> Path:
        """The path itself, or for a symbolic link the directory it points to (refused
        when there is none: a dangling link, or one into a missing directory)."""
        if not os.path.islink(self.path):
            return self.path
        try:
            real = Path(os.path.realpath(self.path, strict=True))
        except (OSError, RuntimeError):  # dangling, a loop, or into a missing directory
            shown = cut(os.readlink(self.path)) if os.path.islink(self.path) else "?"
            raise self._fail(
                f"it is a symbolic link to '{shown}', which does not exist; give a directory "
                "or a link to one"
            ) from None
        if not real.is_dir():
            raise self._fail(f"it is a symbolic link to '{cut(str(real))}', not a directory")
        return real

    def _check(self) -> None:
        p = self.target
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
        p = self.target.absolute()
        if self.in_place:
            return p
        if p.is_dir():
            return p.parent
        cur = p.parent
        while not os.path.lexists(cur):
            cur = cur.parent
        if not cur.is_dir():
            raise self._fail(f"'{cur}' is a file, not a directory")
        return cur

    def write(self, files: Mapping[str, str | bytes]) -> list[Path]:
        """Write ``files`` (name -> content) as the whole new content of the directory.

        On failure the files are saved in a ``simkit-result-*`` directory instead and
        the OutputError says where (the caller's message goes on with what failed)."""
        try:
            if self.in_place:
                return self._write_in_place(files)
            return self._write_swapped(files)
        except OSError as exc:
            why = exc.strerror or str(exc)
            try:
                saved = self._save_elsewhere(files)
            except OSError:
                raise exc from None
            raise OutputError(f"{why}; the files were saved in '{saved}' instead") from None

    @staticmethod
    def _save_elsewhere(files: Mapping[str, str | bytes]) -> Path:
        """The files in a new directory of the system's temporary directory."""
        where = Path(tempfile.mkdtemp(prefix="simkit-result-"))
        os.chmod(where, DIR_MODE & ~_umask())
        write_files({where / name: content for name, content in files.items()})
        return where

    def _write_in_place(self, files: Mapping[str, str | bytes]) -> list[Path]:
        """A mount point: every file replaced atomically, then the previous result's
        files that the new one lacks removed (a reader may see a mix meanwhile)."""
        target = self.target.absolute()
        names = sorted(files)
        marker = "\n".join(["simkit result directory", *names]) + "\n"
        write_files({target / name: content for name, content in {**files, MARKER: marker}.items()})
        with signals_held():
            for entry in os.listdir(target):
                if entry not in files and entry != MARKER and is_known(entry):
                    with contextlib.suppress(FileNotFoundError, IsADirectoryError):
                        os.unlink(target / entry)
        return [self.path / name for name in files]

    def _write_swapped(self, files: Mapping[str, str | bytes]) -> list[Path]:
        target = self.target.absolute()
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
