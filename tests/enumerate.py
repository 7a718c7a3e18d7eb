"""Exact probabilities from the twins: the draw protocol and the one enumerator.

A twin (tests/twins/*.py) reads every random number of a round through a
:class:`Draws` source: ``naive_rng.NaiveStream`` for the kernel's own stream, a
scripted source for a fixed round, or :class:`PathDraws` here, which makes each draw
a choice among its outcomes, each with its exact probability.  :func:`every_round`
walks every sequence of choices (an odometer over the draws), so summing a count
times the probability of its path (:func:`expectation`) gives its exact per-round
mean as a :class:`~fractions.Fraction`.

Imported as ``from enumerate import ...`` (the module name is the subject; a plain
``import enumerate`` would shadow the builtin in the importing module).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Mapping
from fractions import Fraction
from functools import cache
from itertools import combinations_with_replacement
from typing import Any, Protocol, TypeVar

TWO53 = 1 << 53
T = TypeVar("T")


class Draws(Protocol):
    """Every draw a round makes (docs/rules-decisions.md, "The random stream").

    ``roll(sides)``: one die, 1..sides.  ``below(n)``: uniform in 0..n-1 (``n <= 1``
    draws nothing and gives 0).  ``chance(threshold)``: True with probability
    ``threshold / 2**53``.  A source may also have ``roll_pool(count, sides)``, a whole
    pool at once as a multiset sorted high to low (the readiness twin asks for it when it
    is there: this changes nothing but the number of paths to walk).
    """

    def roll(self, sides: int) -> int: ...
    def below(self, n: int) -> int: ...
    def chance(self, threshold: int) -> bool: ...


@cache
def pool_options(count: int, sides: int) -> tuple[tuple[tuple[int, ...], Fraction], ...]:
    """Every multiset of ``count`` dice with ``sides`` sides (high to low), with its
    probability."""
    out = []
    total = sides**count
    for pool in combinations_with_replacement(range(sides, 0, -1), count):
        ways = math.factorial(count)
        for m in Counter(pool).values():
            ways //= math.factorial(m)
        out.append((pool, Fraction(ways, total)))
    assert sum(p for _, p in out) == 1
    return tuple(out)


class PathDraws:
    """A draw source that follows a given list of choices, then takes choice 0.

    Each draw is a choice among its possible outcomes (those of probability zero left
    out); the source records the choice, how many there were, and the probability of
    the path so far, so that :func:`every_round` can walk all paths like an odometer.
    """

    def __init__(self, prefix: list[int]) -> None:
        self.prefix = prefix
        self.choices: list[int] = []
        self.arity: list[int] = []
        self.probability = Fraction(1)

    def _choose(self, options: list[tuple[Any, Fraction]]) -> Any:
        pos = len(self.choices)
        k = self.prefix[pos] if pos < len(self.prefix) else 0
        self.choices.append(k)
        self.arity.append(len(options))
        value, p = options[k]
        self.probability *= p
        return value

    def roll(self, sides: int) -> int:
        return self._choose([(v, Fraction(1, sides)) for v in range(1, sides + 1)])

    def roll_pool(self, count: int, sides: int) -> tuple[int, ...]:
        return self._choose(list(pool_options(count, sides)))

    def below(self, n: int) -> int:
        if n <= 1:
            return 0  # draws nothing
        return self._choose([(k, Fraction(1, n)) for k in range(n)])

    def chance(self, threshold: int) -> bool:
        p = Fraction(min(max(threshold, 0), TWO53), TWO53)
        return self._choose([(v, q) for v, q in ((True, p), (False, 1 - p)) if q > 0])


def every_round(play: Callable[[PathDraws], T]) -> Iterator[tuple[Fraction, T]]:
    """``(probability, play(draws))`` for every possible sequence of draws of
    ``play`` (a round of a twin, given its draw source); the probabilities sum to 1."""
    prefix: list[int] = []
    while True:
        draws = PathDraws(prefix)
        result = play(draws)
        yield draws.probability, result
        k = len(draws.choices) - 1
        while k >= 0 and draws.choices[k] + 1 == draws.arity[k]:
            k -= 1
        if k < 0:
            return
        prefix = draws.choices[:k] + [draws.choices[k] + 1]


def expectation(play: Callable[[PathDraws], Mapping[Hashable, int]]) -> dict[Any, Fraction]:
    """The exact mean of every count ``play`` returns (a count absent from a path is 0
    there); asserts that the paths' probabilities sum to exactly 1."""
    total: dict[Any, Fraction] = {}
    mass = Fraction(0)
    for p, counts in every_round(play):
        mass += p
        for key, value in counts.items():
            total[key] = total.get(key, Fraction(0)) + p * value
    assert mass == 1
    return total
