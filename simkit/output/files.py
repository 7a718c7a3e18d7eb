"""Writing result files: the one atomic writer.

``write_files({path: text or bytes})`` writes every file to a temporary name in its
directory, then renames them into place; files are created with mode 0644 (less the
umask), like any file a user writes.  Nothing half-written is ever left under a
target name, and temporary files are removed on any error.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

FILE_MODE = 0o644


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
        for tmp, path in temps:
            os.replace(tmp, path)
    finally:
        for tmp, _ in temps:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return list(files)
