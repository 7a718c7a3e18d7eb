"""simkit: Monte Carlo balance analysis of tabletop RPG initiative systems.

``import simkit`` is light: the functions below load the analysis and output layers
(pandas, matplotlib) only when first used.
"""

from __future__ import annotations

# First of all, before any heavy import (numpy, pandas, numba: a second or more of
# start-up): Ctrl-C and SIGTERM handlers, when this process is the simkit command.
from simkit import _signals

_signals.install_for_command()

import os  # noqa: E402
import sys  # noqa: E402
from typing import TYPE_CHECKING, Any  # noqa: E402

__version__ = "0.2.0"


def _numba_cache_dir() -> None:
    """Make sure numba can cache the kernels, before anything imports numba.

    numba caches next to the source when the package directory is writable, else in
    the user's cache directory (``$XDG_CACHE_HOME`` or ``~/.cache``).  When neither is
    writable (a read-only install for a user whose home is read-only), simkit points
    ``NUMBA_CACHE_DIR`` at a private directory in the system's temporary directory; if
    even that fails, the kernels are compiled in every process (``SIMKIT_NO_CACHE``,
    read by the one JIT setting, ``simkit.systems.support.JIT``) and one warning line
    says so.  An explicit ``NUMBA_CACHE_DIR`` is always kept.  Wherever it is, a cached
    kernel is valid only for the source text it was compiled from
    (``simkit.systems.support.SourceTreeCache``).
    """
    if os.environ.get("NUMBA_CACHE_DIR") or os.environ.get("SIMKIT_NO_CACHE"):
        return
    here = os.path.dirname(os.path.abspath(__file__))
    if os.access(here, os.W_OK | os.X_OK):
        return
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if _usable(os.path.join(base, "numba")):
        return
    import tempfile

    uid = os.getuid() if hasattr(os, "getuid") else 0
    fallback = os.path.join(tempfile.gettempdir(), f"simkit-numba-cache-{uid}")
    if _usable(fallback):
        os.environ["NUMBA_CACHE_DIR"] = fallback
        return
    os.environ["SIMKIT_NO_CACHE"] = "1"
    print(
        "simkit: warning: no writable cache directory (set NUMBA_CACHE_DIR); kernels are "
        "compiled in every process",
        file=sys.stderr,
    )


def _usable(path: str) -> bool:
    """True if ``path`` is (or can be made) a directory this user can write in."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError:
        return False
    return os.access(path, os.W_OK | os.X_OK)


def _matplotlib_dir() -> None:
    """Give matplotlib a writable configuration and cache directory, before it is
    imported, when the user's (``$MPLCONFIGDIR``, else ``~/.config/matplotlib`` and
    ``~/.cache/matplotlib``) cannot be written: a private ``simkit-matplotlib-UID`` in
    the system's temporary directory.  Otherwise matplotlib warns in several lines and
    makes a new temporary directory of its own in every process.  Nothing is printed."""
    home = os.path.expanduser("~")
    given = os.environ.get("MPLCONFIGDIR")
    if given:
        wanted = [given]
    else:
        wanted = [
            os.path.join(
                os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config"), "matplotlib"
            ),
            os.path.join(
                os.environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache"), "matplotlib"
            ),
        ]
    if all(_creatable(path) for path in wanted):
        return
    import tempfile

    uid = os.getuid() if hasattr(os, "getuid") else 0
    private = os.path.join(tempfile.gettempdir(), f"simkit-matplotlib-{uid}")
    if _usable(private):
        os.environ["MPLCONFIGDIR"] = private


def _creatable(path: str) -> bool:
    """True if ``path`` is a writable directory, or could be made in a writable one
    (found without creating anything)."""
    path = os.path.abspath(path)
    while not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            return False
        path = parent
    return os.path.isdir(path) and os.access(path, os.W_OK | os.X_OK)


_numba_cache_dir()
_matplotlib_dir()

if TYPE_CHECKING:
    from simkit.api import (
        Comparison,
        PolicySearch,
        Result,
        Sensitivity,
        SweepResult,
        Tuning,
        compare,
        policies,
        report,
        run,
        sensitivity,
        sweep,
        tune,
        validate,
    )
    from simkit.explorer import explore
    from simkit.scenario import Scenario, ScenarioError, load_scenario, with_changes

_LAZY = {
    "Comparison": "simkit.api",
    "Result": "simkit.api",
    "SweepResult": "simkit.api",
    "compare": "simkit.api",
    "report": "simkit.api",
    "run": "simkit.api",
    "sweep": "simkit.api",
    "tune": "simkit.api",
    "Tuning": "simkit.api",
    "policies": "simkit.api",
    "PolicySearch": "simkit.api",
    "validate": "simkit.api",
    "convert": "simkit.api",
    "Conversion": "simkit.api",
    "SideBySide": "simkit.api",
    "sensitivity": "simkit.api",
    "Sensitivity": "simkit.api",
    "explore": "simkit.explorer",
    "Scenario": "simkit.scenario",
    "ScenarioError": "simkit.scenario",
    "load_scenario": "simkit.scenario",
    "with_changes": "simkit.scenario",
}

__all__ = [  # noqa: F822 (resolved lazily by __getattr__)
    "Comparison",
    "Conversion",
    "PolicySearch",
    "Result",
    "Scenario",
    "ScenarioError",
    "Sensitivity",
    "SideBySide",
    "SweepResult",
    "Tuning",
    "__version__",
    "compare",
    "convert",
    "explore",
    "load_scenario",
    "policies",
    "report",
    "run",
    "sensitivity",
    "sweep",
    "tune",
    "validate",
    "with_changes",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'simkit' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
