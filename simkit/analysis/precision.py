"""Runs that stop when precise enough: ``--precision 0.001`` or ``--precision 0.5%``.

The stopping rule (docs/precision.md).  A run to a precision plays in blocks: the first
block is one chunk of the engine (``chunk_rounds``: 262,144 rounds for every example
scenario), and each further block doubles the rounds played so far (1, 2, 4, 8 ...
chunks), the last one ending at ``max_rounds`` (default 10^9).  After each block every
quantity that is shown (or named with ``--metrics``, or the target of ``tune``) is
read with its 95% interval; the run stops after the first block at which every one of
them has a half-width (half the interval's width) of at most the precision: an
absolute number (``0.001``) or a share of the estimate's size (``0.5%``: half-width <=
0.005 x |mean|).  A quantity without a value (a ratio whose denominator never
happened) does not hold the run.  At ``max_rounds`` the run stops anyway and names
the quantities that did not meet the precision.

Blocks are whole chunks, and a chunk's rounds draw from the chunk's own key: stopping
after a block never changes what a round draws, and the result after ``N`` rounds is
the result of ``--rounds N`` with the same seed, bit for bit.  A scenario in fights of
K rounds (R8a) plays whole fights: its chunks hold whole fights
(``engine.block_rounds``, 262,143 rounds for K = 3, is then the first block), a block
of ``N`` rounds plays ``ceil(N / K)`` fights, and the result is again the one of
``--rounds N``.  The same seed and
precision give the same rounds and the same result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from simkit.analysis.result import Result
from simkit.digits import parse_number
from simkit.engine import block_rounds, block_totals, chunk_rounds, play_blocks, seed_value
from simkit.scenario import Scenario

DEFAULT_MAX_ROUNDS = 10**9


class PrecisionError(ValueError):
    """A bad precision or max-rounds; the message starts with the option's name."""


@dataclass(frozen=True)
class Precision:
    """The precision asked for: ``value`` absolute, or a share of |mean| if
    ``relative``; ``text`` as written; ``max_rounds`` the most rounds to play."""

    value: float
    relative: bool
    text: str
    max_rounds: int = DEFAULT_MAX_ROUNDS

    def allowed(self, mean: float) -> float:
        """The largest half-width allowed for an estimate of ``mean``."""
        return self.value * abs(mean) if self.relative else self.value

    def meets(self, mean: float, low: float, high: float) -> bool:
        """True if the interval [low, high] around ``mean`` is precise enough (a
        quantity without a value counts as precise: it does not hold the run)."""
        if mean != mean:
            return True
        return (high - low) / 2 <= self.allowed(mean)

    def unmet(self, rows: Iterable[tuple[str, float, float, float]]) -> list[str]:
        """The names (with their half-widths) of ``(name, mean, low, high)`` rows that
        do not meet the precision."""
        return [
            f"{name} (± {(high - low) / 2:.3g})"
            for name, mean, low, high in rows
            if not self.meets(mean, low, high)
        ]

    @staticmethod
    def first_block(scenarios: Iterable[Scenario]) -> int:
        """The rounds of the first block: one chunk (the largest of ``scenarios``); when
        every one is played in fights (R8a), one chunk of whole fights
        (``engine.block_rounds``: 262,143 rounds for fights of 3)."""
        group = list(scenarios)
        size = block_rounds if all(s.fight_rounds for s in group) else chunk_rounds
        return max(size(s) for s in group)

    def totals(self, scenarios: Iterable[Scenario]) -> list[int]:
        """The round totals after each block (one chunk, doubling, then max_rounds)."""
        return block_totals(self.first_block(scenarios), self.max_rounds)

    @property
    def words(self) -> str:
        if self.relative:
            return f"{self.text} of the estimate"
        return f"± {self.text}"


def read_precision(
    text: str | float,
    max_rounds: int | None = None,
    label: str = "precision",
) -> Precision:
    """``"0.001"`` (or ``0.001``) -> absolute, ``"0.5%"`` -> relative; a number > 0."""
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise PrecisionError(f"{label}: expected a number > 0 or a percentage, got {text!r}")
    written = text.strip() if isinstance(text, str) else repr(float(text))
    relative = written.endswith("%")
    number = written[:-1].strip() if relative else written
    try:
        value = parse_number(number) if isinstance(text, str) else float(text)
    except ValueError:
        value = float("nan")
    if not (value > 0 and value != float("inf")):
        raise PrecisionError(
            f"{label}: expected a number > 0 (the half-width of the 95% interval, e.g. "
            f"0.001) or a percentage of the estimate (e.g. 0.5%), got {written[:40]!r}"
        )
    if relative:
        value /= 100
    if isinstance(text, str):
        written = f"{number}%" if relative else number
    return Precision(
        value, relative, written, DEFAULT_MAX_ROUNDS if max_rounds is None else max_rounds
    )


@dataclass(frozen=True)
class Stopping:
    """How a run to a precision ended: the rounds it used, the blocks, and the shown
    quantities that did not meet the precision (none if it was met)."""

    precision: Precision
    rounds: int
    blocks: int
    unmet: tuple[str, ...]

    @property
    def met(self) -> bool:
        return not self.unmet

    def line(self) -> str:
        """One sentence: met after N rounds, or not met by max-rounds for what."""
        block = f"{self.blocks} block{'s' if self.blocks != 1 else ''}"
        if self.met:
            return (
                f"precision {self.precision.words} (half-width of every shown 95% interval): "
                f"met after {self.rounds:,} rounds ({block})"
            )
        shown = ", ".join(self.unmet[:6]) + (
            f" and {len(self.unmet) - 6} more" if len(self.unmet) > 6 else ""
        )
        return (
            f"precision {self.precision.words} not met by {self.rounds:,} rounds "
            f"(--max-rounds, {block}) for: {shown}"
        )

    def parameters(self) -> dict[str, object]:
        return {
            "precision": self.precision.text,
            "relative": self.precision.relative,
            "max_rounds": self.precision.max_rounds,
            "rounds_used": self.rounds,
            "met": self.met,
            "unmet": list(self.unmet),
        }


# --------------------------------------------------------------------------- what is shown
Quantity = tuple[str, float, float, float]


def run_quantities(
    result: Any, by: str = "combatant", metrics: Sequence[str] | None = None
) -> list[Quantity]:
    """The quantities ``simkit run`` shows (per ``by``; ``metrics`` if given, a family's
    name meaning its members), each as ``(name, mean, low, high)``; ``by="round"`` (a
    scenario in fights, R8a): every row of ``run --by round``."""
    from simkit.output.render import expand_metrics

    chosen = expand_metrics("run", result, metrics)
    if by == "round":  # R8a: every row of run --by round (each level, round index, fight)
        from simkit.output.render import round_level_rows

        return [
            (f"round {rnd} {level}:{who}.{m}" if who else f"round {rnd} {m}", mean, low, high)
            for rnd, level, who, m, mean, _, low, high in round_level_rows(result)
            if chosen is None or m in chosen
        ]
    rows = list(result.level_rows(by))
    if by == "combatant" and chosen and any("." in m for m in chosen):
        rows = [r for r in result.rows if r[0]]
    rows += [r for r in result.rows if not r[0]]  # scenario metrics
    prefix = "" if by == "combatant" else f"{by}:"
    return [
        (f"{prefix}{who}.{m}" if who else m, mean, low, high)
        for who, m, mean, _, low, high in rows
        if chosen is None or m in chosen
    ]


def run_to_precision(
    scenario: Scenario,
    precision: Precision,
    seq: np.random.SeedSequence,
    quantities: Callable[[Result], list[Quantity]],
    *,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    pairs: Any = (),
) -> Result:
    """Play ``scenario`` block by block until every quantity meets ``precision`` (or
    ``max_rounds``); the Result (with ``stopping``) of the rounds played."""
    results = runs_to_precision(
        [scenario],
        precision,
        seq,
        lambda rs: quantities(rs[0]),
        workers=workers,
        progress=progress,
        pairs=pairs,
    )
    return results[0]


def runs_to_precision(
    scenarios: Sequence[Scenario],
    precision: Precision,
    seq: np.random.SeedSequence,
    quantities: Callable[[list[Result]], list[Quantity]],
    *,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    pairs: Any = (),
) -> list[Result]:
    """Several scenarios (a sweep's points) block by block, all with the same rounds,
    until every quantity of all of them meets ``precision``; each Result carries the
    same ``stopping``."""
    totals = precision.totals(scenarios)
    seed = seed_value(seq)
    blocks = [
        play_blocks(s, totals, seq, workers=workers, progress=progress, pairs=pairs)
        for s in scenarios
    ]
    results: list[Result] = []
    unmet: list[str] = []
    played = total = 0
    for total in totals:
        played += 1
        _grow(progress, total * len(scenarios))
        raws = [next(g) for g in blocks]
        results = [Result.from_raw(s, seed, raw) for s, raw in zip(scenarios, raws, strict=True)]
        unmet = precision.unmet(quantities(results))
        if not unmet:
            break
    # the rounds played: ``total``, or with fights (R8a) rounded up to whole fights
    stopping = Stopping(precision, max(r.rounds for r in results), played, tuple(unmet))
    return [replace(r, stopping=stopping) for r in results]


def _grow(progress: Any, total: int) -> None:
    """A progress bar's total grows with the blocks (its ``total``, if it has one)."""
    if progress is not None and hasattr(progress, "total"):
        progress.total = total


def points_quantities(
    results: Sequence[Any],
    labels: Sequence[str],
    by: str = "combatant",
    metrics: Sequence[str] | None = None,
) -> list[Quantity]:
    """The quantities a sweep shows: at every point (``labels``), the metrics of
    ``simkit sweep``'s table (default first_action, actions, attacked_before_acting)
    per ``by``."""
    from simkit.output.result_files import SWEEP_PLOTS

    chosen = list(metrics) if metrics else list(SWEEP_PLOTS)
    out = []
    for label, result in zip(labels, results, strict=True):
        for name, mean, low, high in run_quantities(result, by, chosen):
            out.append((f"{name} at {label}", mean, low, high))
    return out
