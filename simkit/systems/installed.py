"""The installed initiative systems (the systems registry): name -> System object.

``simkit.systems`` registers the built-in systems on import; a test or plug-in can
``register`` one more at run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from simkit.systems.base import System

_REGISTRY: dict[str, System] = {}


def register(system: System) -> System:
    """Add ``system`` to the registry (its ``name`` must be new); returns it."""
    from simkit.systems.base import System

    if not isinstance(system, System):
        raise TypeError(f"{system!r} does not satisfy the System protocol")
    if system.name in _REGISTRY and _REGISTRY[system.name] is not system:
        raise ValueError(f"a system named {system.name!r} is already registered")
    _REGISTRY[system.name] = system
    return system


def unregister(name: str) -> None:
    """Remove a system registered at run time (tests)."""
    _REGISTRY.pop(name, None)


def get(name: str) -> System:
    """The system called ``name``; KeyError listing the known ones otherwise."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown system {name!r}; known: {', '.join(_REGISTRY)}") from None


def names() -> tuple[str, ...]:
    """Every registered system's name, in registration order."""
    return tuple(_REGISTRY)


def all_systems() -> tuple[System, ...]:
    return tuple(_REGISTRY.values())
