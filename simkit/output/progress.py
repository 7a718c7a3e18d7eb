"""A one-line progress bar for long runs, drawn on a terminal only."""

from __future__ import annotations

import os
import shutil
import sys
import time
from typing import TextIO

# Runs of at least this many rounds draw from the start; shorter ones only once they
# have lasted MIN_SECONDS (a run that ends within a second shows no bar at all).
MIN_ROUNDS = 2_000_000
MIN_SECONDS = 1.0


class ProgressBar:
    """Callable progress bar: ``bar(n)`` adds ``n`` finished rounds.

    It draws on ``stream`` only when that is a terminal (never when output is piped
    or captured): from the start for runs of at least ``min_rounds`` rounds, and for
    shorter runs once they have lasted ``delay`` seconds, so every run longer than
    about a second shows it.  The line gives the share done, the rounds, the rounds
    per second and the time left.  Use it as a context manager so the line is
    cleared at the end.
    """

    def __init__(
        self,
        total: int,
        stream: TextIO | None = None,
        *,
        min_rounds: int = MIN_ROUNDS,
        delay: float = MIN_SECONDS,
        enabled: bool | None = None,
    ) -> None:
        self.total = total
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            enabled = _is_terminal(self.stream)
        self.enabled = enabled
        self.delay = 0.0 if total >= min_rounds else delay
        self._start = time.perf_counter()
        self._drawn = False

    def __call__(self, rounds: int) -> None:
        self.done += rounds
        if self.enabled and (self._drawn or self._elapsed() >= self.delay):
            self._draw()

    def _elapsed(self) -> float:
        return time.perf_counter() - self._start

    def _draw(self) -> None:
        frac = min(self.done / self.total, 1.0) if self.total else 1.0
        elapsed = self._elapsed()
        eta = elapsed * (1 - frac) / frac if frac > 0 else float("nan")
        rate = self.done / elapsed if elapsed > 0 else float("nan")
        text = f" {100 * frac:5.1f}%  {self.done:,}/{self.total:,} rounds"
        if rate == rate:
            text += f"  {_rate(rate)} rounds/s"
        if eta == eta:
            text += f"  {eta:.0f} s left"
        # Fit one terminal line, or "\r" cannot redraw it: the bar takes what is left.
        columns = shutil.get_terminal_size((80, 24)).columns - 1
        longest = len(
            f" 100.0%  {self.total:,}/{self.total:,} rounds  999.99 M rounds/s  9999 s left"
        )
        width = max(10, min(30, columns - longest - 2))  # fixed: the bar does not jump
        filled = int(width * frac)
        line = f"[{'#' * filled}{'.' * (width - filled)}]{text}"[:columns]
        self._write(line)

    def _write(self, line: str) -> None:
        """Redraw the line: back to its start, the text, then clear what is left of any
        longer earlier text (no stray characters)."""
        try:
            self.stream.write("\r" + line + "\033[K")
            self.stream.flush()
        except (OSError, ValueError):
            self.enabled = False
            return
        self._drawn = True

    def stage(self, text: str) -> None:
        """Say what happens after the simulation (``rendering the report ...``)."""
        if self.enabled and self._drawn:
            columns = shutil.get_terminal_size((80, 24)).columns - 1
            self._write(f"{text} ..."[:columns])

    def close(self) -> None:
        """Erase the bar so that what follows starts on a clean line."""
        if self._drawn:
            try:
                self.stream.write("\r\033[K")
                self.stream.flush()
            except (OSError, ValueError):
                pass
            self._drawn = False

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _rate(rate: float) -> str:
    if rate >= 1e6:
        return f"{rate / 1e6:.2f} M"
    return f"{rate:,.0f}"


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False
