"""What a test needs from outside simkit, and what happens when it is missing.

On a developer machine a missing tool or optional package SKIPS the test that needs it,
saying what is missing and how to get it.  Under CI (the environment variable ``CI`` set
to ``true`` or ``1``, as CI services and .ci/run set it) the same test FAILS: a check that
silently did not run must not pass a build.
"""

from __future__ import annotations

import importlib
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def missing(why: str) -> NoReturn:
    """Skip the test with ``why``, or fail it under CI."""
    if in_ci():
        pytest.fail(f"{why} (CI is set: a missing requirement fails the suite)", pytrace=False)
    pytest.skip(why, allow_module_level=True)


def requires_tool(name: str, *alternatives: str, hint: str = "") -> str:
    """The path of the program ``name`` (or the first of ``alternatives`` found): looked
    for beside the running interpreter first (a virtualenv's scripts), then on PATH."""
    for candidate in (name, *alternatives):
        beside = Path(sys.executable).parent / candidate
        if beside.exists():
            return str(beside)
        found = shutil.which(candidate)
        if found:
            return found
    missing(f"{name} is not installed{f' ({hint})' if hint else ''}")


def requires_module(name: str, hint: str = "") -> ModuleType:
    """The module ``name``, imported."""
    try:
        return importlib.import_module(name)
    except ImportError:
        missing(f"{name} is not installed{f' ({hint})' if hint else ''}")
