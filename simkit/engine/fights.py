"""Fights of several rounds (R8a): one mechanism for every system.

A scenario with ``[scenario] fight_rounds = K`` is played as fights of K consecutive
rounds.  Round ``j`` (0-based) of fight ``f`` of chunk ``k`` is round ``f K + j`` of
that chunk, on its own random stream as every round is; the carry a round passes on
(readiness R8) reaches the next round of the same fight, and every fight starts
afresh (carry 0).  A system whose first round of a fight plays differently
(``System.after_opening``: readiness ``opening``) is compiled twice, the opening
scenario for the first round of each fight and the later one for the others.

Nothing here knows a system's rules.  A chunk's rounds are played with
``System.rows`` (every round's complete count row and carry, on the kernel's own
code: ``trace`` without its events), once per compiled scenario, as one sequence of
rounds; a round whose incoming carry in that sequence is not the carry of its fight
(the first round of a fight after a stalemate, a round after an opening round whose
carry differed) is played again on its own with the right carry.  Since a round's
dice depend only on its chunk key and index, this is the fight played round by round,
exactly (tests/test_fights.py).

The rows give, per fight, the count row of each round index and their sum over the
fight, and so the running sums (metrics.sums) of three views, fights being the
independent units:

* ``sums``: each fight one regeneration cycle of K rounds: per-round means over all
  rounds (the same means as without fights) with fight-level standard errors;
* ``per_index[j]``: round j + 1 of every fight, one cycle of one round per fight;
* per fight (``fight_sums``): each fight's totals, one cycle per fight.

Chunks hold whole fights: a chunk is the largest multiple of K rounds not above the
engine's chunk size (at least one fight), so the numbers depend only on the scenario,
the seed and the number of fights, never on the worker count.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from simkit.metrics import Layout, Sums

PIECE_ROUNDS = 4096  # rounds traced at a time (memory: a row per round)


def fight_count(rounds: int, fight_rounds: int) -> int:
    """Fights played for ``rounds`` rounds: rounded up to whole fights."""
    return max(1, math.ceil(rounds / fight_rounds))


def fight_chunks(fights: int, fight_rounds: int, chunk: int) -> list[int]:
    """Fights per chunk: chunks of whole fights, at most ``chunk`` rounds (one fight
    at least)."""
    per = max(1, chunk // fight_rounds)
    full, rest = divmod(fights, per)
    return [per] * full + ([rest] if rest else [])


@dataclass
class FightSums:
    """The sums of a run in fights: per round index, and per fight (``sums`` of the
    run holds the fights as cycles of K rounds)."""

    fight_rounds: int
    per_index: list[Sums]

    def add(self, other: FightSums) -> None:
        for a, b in zip(self.per_index, other.per_index, strict=True):
            a.add(b)


def rows_sums(layout: Layout, rows: np.ndarray, length: int) -> Sums:
    """The running sums of ``rows`` (complete layout rows), each one cycle of ``length``
    rounds: what ``metrics.sums.flush_rows`` gives, in numpy."""
    pa, pb = layout.pair_indices()
    sums = layout.new_sums()
    c = rows.shape[0]
    sums.s1 += rows.sum(axis=0)
    sums.s2 += (rows * rows).sum(axis=0)
    sums.sl += sums.s1 * length
    if len(pa):
        sums.sx += (rows[:, pa] * rows[:, pb]).sum(axis=0)
    sums.tot += np.array([c, c * length, c * length * length], np.int64)
    return sums


def play_rows(
    system: Any, compiled: Any, later: Any, key: np.ndarray, first: int, n_fights: int, k: int
) -> np.ndarray:
    """The count rows of fights played from round ``first`` of a chunk (a fight's first
    round compiled as ``compiled``, the others as ``later``), each fight from carry 0."""
    n = n_fights * k
    a_rows, a_carries = system.rows(compiled, key, n, first=first)
    b_rows, b_carries = (
        (a_rows, a_carries) if later is None else system.rows(later, key, n, first=first)
    )
    opening = np.arange(n) % k == 0
    rows = np.where(opening[:, None], a_rows, b_rows)
    final = np.where(opening, a_carries, b_carries)
    if not (a_carries.any() or b_carries.any()):
        return rows
    # the carry each round got in its pass, and the one its fight gives it
    used = np.where(opening, np.r_[0, a_carries[:-1]], np.r_[0, b_carries[:-1]])
    want = np.where(opening, 0, np.r_[0, final[:-1]])
    heap = np.flatnonzero(used != want).tolist()
    heapq.heapify(heap)
    done: set[int] = set()
    while heap:
        r = heapq.heappop(heap)
        if r in done:
            continue
        done.add(r)
        carry = 0 if r % k == 0 else int(final[r - 1])
        if used[r] == carry:
            continue
        which = compiled if r % k == 0 or later is None else later
        again_rows, again_carries = system.rows(which, key, 1, first + r, carry)
        rows[r] = again_rows[0]
        final[r] = again_carries[0]
        used[r] = carry
        if r + 1 < n and (r + 1) % k:
            heapq.heappush(heap, r + 1)
    return rows


def trace_fights(
    system: Any,
    compiled: Any,
    later: Any,
    key: np.ndarray,
    n_rounds: int,
    k: int,
    dice: Any = None,
) -> Any:
    """``System.trace`` of rounds 0 .. n_rounds - 1 of a chunk played as fights of k
    rounds, round by round: the first round of each fight compiled as ``compiled`` from
    carry 0, the others as ``later`` (None: ``compiled``) with the carry of the round
    before.  The same rounds as ``play_rows`` (tests/test_fights.py), with events."""
    from simkit.systems.base import Trace

    parts = []
    carry = 0
    for r in range(n_rounds):
        opening = r % k == 0
        which = compiled if opening or later is None else later
        part = system.trace(which, key, 1, first=r, carry=0 if opening else carry, dice=dice)
        carry = int(part.carries[0])
        parts.append(part)
    return Trace(
        np.concatenate([p.rows for p in parts]),
        np.concatenate([p.events for p in parts]),
        np.concatenate([p.carries for p in parts]),
        np.concatenate([p.states for p in parts]),
    )


def play_fights(
    system: Any,
    compiled: Any,
    later: Any,
    layout: Layout,
    key: np.ndarray,
    n_fights: int,
    k: int,
    first_fight: int = 0,
) -> tuple[Sums, FightSums]:
    """Fights ``first_fight ..`` (``n_fights`` of them) of a chunk: (fights as cycles of
    k rounds, per round index)."""
    total = layout.new_sums()
    per_index = [layout.new_sums() for _ in range(k)]
    per_piece = max(1, PIECE_ROUNDS // k)
    for f0 in range(first_fight, first_fight + n_fights, per_piece):
        m = min(per_piece, first_fight + n_fights - f0)
        rows = play_rows(system, compiled, later, key, f0 * k, m, k)
        by_fight = rows.reshape(m, k, -1)
        total.add(rows_sums(layout, by_fight.sum(axis=1), k))
        for j in range(k):
            per_index[j].add(rows_sums(layout, by_fight[:, j], 1))
    return total, FightSums(k, per_index)
