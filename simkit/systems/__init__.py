"""The initiative systems, one package each, and their registry.

Every other part of simkit finds a system here by the name a scenario file gives
(``get("readiness")``) and talks to it only through the
:class:`~simkit.systems.base.System` protocol.  Adding a system is one package and one
line below; a test or a plug-in can also ``register`` one at run time.
"""

from __future__ import annotations

from simkit.systems.installed import all_systems, get, names, register, unregister

__all__ = ["all_systems", "get", "names", "register", "unregister"]

# The built-in systems: one line each.
from simkit.systems.readiness import SYSTEM as _readiness  # noqa: E402

register(_readiness)
from simkit.systems.vtm import SYSTEM as _vtm  # noqa: E402

register(_vtm)
from simkit.systems.perception import SYSTEM as _perception  # noqa: E402

register(_perception)
