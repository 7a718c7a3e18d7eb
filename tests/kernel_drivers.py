"""What the kernels' tests need beyond ``System.trace``.

Every system's ``System.trace`` now returns the stream state each round leaves behind
(``Trace.states``, held to the plain-Python twins by tests/test_contract.py), so no
numba driver of a kernel's internals is left here.  ``readiness_round_states`` reads
those states for the tests written before the contract.
"""

from __future__ import annotations

import numpy as np


def readiness_round_states(
    compiled, key: np.ndarray, n_rounds: int, no_hold_first: bool = False, first: int = 0
) -> np.ndarray:
    """Row ``r``: the stream state round ``first + r`` of the readiness kernel leaves
    (``System.trace(...).states``)."""
    from simkit import systems

    tr = systems.get("readiness").trace(
        compiled, key, n_rounds, first=first, carry=int(no_hold_first)
    )
    return tr.states


def compile_for(scenario):
    """A scenario compiled for its system, with the engine's layout."""
    from simkit import engine

    return engine.prepare(scenario).compiled
