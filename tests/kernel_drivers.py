"""Small numba drivers that expose what the kernels' ``trace`` does not: the stream
state each round leaves behind.

Each plays the kernel's own round function on the per-round streams exactly like the
kernel's ``_trace_rounds`` loop (``round_start`` or ``round_start_lazy``, as the kernel
does, then one round) and records the six words of the stream's canonical state
after every round, so a test can check that the
plain-Python twin consumed exactly the draws the kernel did, round by round.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simkit.systems.perception import kernel as perception
from simkit.systems.readiness import kernel as readiness
from simkit.systems.stream import (
    CANONICAL_WORDS,
    STATE_WORDS,
    canonical_state,
    round_start,
    round_start_lazy,
)


@njit(cache=True)
def _readiness_states(key, first, n_rounds, no_hold, order, prep, cb, sg):
    out = np.zeros((n_rounds, CANONICAL_WORDS), np.uint64)
    st = np.zeros(STATE_WORDS, np.uint64)
    for r in range(n_rounds):
        round_start(st, key, first + r)
        no_hold = readiness._play(st, no_hold, order, prep, cb, sg)
        out[r] = canonical_state(st)
    return out


def readiness_round_states(
    compiled: readiness.Compiled,
    key: np.ndarray,
    n_rounds: int,
    no_hold_first: bool = False,
    first: int = 0,
) -> np.ndarray:
    """Row ``r``: the stream state round ``first + r`` of the readiness kernel leaves."""
    return _readiness_states(
        key[:4].copy(),
        first,
        n_rounds,
        no_hold_first,
        compiled.order,
        compiled.prep,
        compiled.table.copy(),
        compiled.sg.copy(),
    )


@njit(cache=True)
def _perception_states(key, first, n_rounds, mode, tie, within, cb, sd, sg):
    out = np.zeros((n_rounds, CANONICAL_WORDS), np.uint64)
    st = np.zeros(STATE_WORDS, np.uint64)
    n = cb.shape[0]
    ns = sd.shape[0]
    for r in range(n_rounds):
        round_start_lazy(st, key, first + r)  # as perception's kernel
        perception._play(st, mode, tie, within, cb, sd, sg, n, ns, 2 * n + ns)
        out[r] = canonical_state(st)
    return out


def perception_round_states(
    compiled: perception.Compiled, key: np.ndarray, n_rounds: int, first: int = 0
) -> np.ndarray:
    """Row ``r``: the stream state round ``first + r`` of the perception kernel leaves."""
    return _perception_states(
        key[:4].copy(),
        first,
        n_rounds,
        compiled.mode,
        compiled.tie,
        compiled.within,
        compiled.table.copy(),
        compiled.sides.copy(),
        compiled.sg.copy(),
    )


def compile_for(scenario):
    """A scenario compiled for its system, with the engine's layout."""
    from simkit import engine

    return engine.prepare(scenario).compiled


def revision_1_part(sums, layout):
    """The sums a revision-1 kernel fills: the combatant, acts_before, distribution and
    scenario slots and the per-combatant ratio pairs (not the group and side slots)."""
    from simkit.metrics import Sums

    end = layout.unit_offset
    pairs = layout.n * len(layout.ratios)
    return Sums(sums.s1[:end], sums.s2[:end], sums.sl[:end], sums.sx[:pairs], sums.tot)
