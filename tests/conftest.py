"""Settings shared by every test.

Property tests (hypothesis) run derandomized by default: the examples follow from each
test's source, so CI and every developer machine try the same examples and a failure
reproduces.  ``HYPOTHESIS_PROFILE=explore`` draws fresh random examples (and more of
them) for a search away from CI.  No deadline: a first example may wait for a numba
compile, and the machine may be loaded.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "derandomized",
    derandomize=True,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "explore",
    max_examples=1000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "derandomized"))


@pytest.fixture(autouse=True)
def _no_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Output width as on a pipe with no ``COLUMNS`` (100, errors on one line), whatever
    the shell that runs the tests exports; a test that wants a width sets it.  (Set
    first, so that the process environment child processes inherit loses it too, where
    a library set it without ``os.environ`` knowing.)"""
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.delenv("COLUMNS")
