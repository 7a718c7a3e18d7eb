"""The numba stream (simkit/systems/stream.py) against its plain-Python port (naive_rng.py).

Where a property holds for every input (the port and the stream agree on any sequence of
draws, the mixes invert each other), hypothesis chooses the inputs (tests/conftest.py:
derandomized, so every run tries the same ones).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as hs
from naive_rng import (
    GOLDEN,
    M64,
    NaiveStream,
    key_for_round_words,
    round_words,
    splitmix64_mix,
    splitmix64_unmix,
)
from numba import njit

from simkit.systems.stream import (
    CANONICAL_WORDS,
    STATE_WORDS,
    below,
    canonical_state,
    chance,
    chance_threshold,
    chunk_state,
    first_outputs,
    next_u64,
    roll,
    roll_many,
    round_start,
    round_start_lazy,
)

ROLL, BELOW, CHANCE = 0, 1, 2


def six(st: np.ndarray) -> list[int]:
    """The six-word state of a working array, as the port keeps it."""
    return [int(w) for w in canonical_state(st)]


@njit(cache=False)
def _drive(st, kinds, params, out, states=None):
    """Play a scripted sequence of draws on the numba stream; record every result (and,
    given ``states``, the canonical state after every draw)."""
    for k in range(kinds.size):
        if kinds[k] == 0:
            out[k] = roll(st, params[k])
        elif kinds[k] == 1:
            out[k] = below(st, params[k])
        else:
            out[k] = 1 if chance(st, params[k]) else 0
        if states is not None:
            c = canonical_state(st)
            for j in range(CANONICAL_WORDS):
                states[k, j] = c[j]


@njit(cache=False)
def _rolls(st, sides, n, out):
    for k in range(n):
        out[k] = roll(st, sides)


@njit(cache=False)
def _u64s(st, n, out):
    for k in range(n):
        out[k] = next_u64(st)


def _naive_drive(ns: NaiveStream, kinds: np.ndarray, params: np.ndarray) -> list[int]:
    out = []
    for kind, p in zip(kinds.tolist(), params.tolist(), strict=True):
        if kind == ROLL:
            out.append(ns.roll(p))
        elif kind == BELOW:
            out.append(ns.below(p))
        else:
            out.append(int(ns.chance(p)))
    return out


def chi2_sf(x: float, df: int) -> float:
    """Survival function of the chi-square distribution with integer ``df`` (closed form)."""
    h = x / 2.0
    if df % 2 == 0:
        term, total = 1.0, 1.0
        for j in range(1, df // 2):
            term *= h / j
            total += term
        return math.exp(-h) * total
    total = math.erfc(math.sqrt(h))
    term = math.sqrt(h) / math.gamma(1.5)  # h^(j - 1/2) / Gamma(j + 1/2), j = 1
    for j in range(1, (df - 1) // 2 + 1):
        if j > 1:
            term *= h / (j - 0.5)
        total += math.exp(-h) * term
    return total


def chi2_critical(df: int, alpha: float) -> float:
    """The x with chi2_sf(x, df) == alpha (bisection)."""
    lo, hi = 0.0, 1000.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if chi2_sf(mid, df) > alpha:
            lo = mid
        else:
            hi = mid
    return hi


def test_chi2_helper_matches_tables():
    # textbook critical values at alpha = 0.05
    assert chi2_critical(1, 0.05) == pytest.approx(3.8415, abs=1e-3)
    assert chi2_critical(2, 0.05) == pytest.approx(5.9915, abs=1e-3)
    assert chi2_critical(5, 0.05) == pytest.approx(11.0705, abs=1e-3)
    assert chi2_critical(10, 0.05) == pytest.approx(18.307, abs=1e-3)


def test_known_first_output():
    # xoshiro256** reference: state (1, 2, 3, 4) gives rotl(2 * 5, 7) * 9 = 11520 first
    st = np.zeros(STATE_WORDS, np.uint64)
    st[:4] = [1, 2, 3, 4]
    assert int(next_u64(st)) == 11520
    ns = NaiveStream([1, 2, 3, 4, 0, 0])
    assert ns.next_u64() == 11520
    # the next outputs of the reference C implementation from the same state
    assert [int(next_u64(st)) for _ in range(3)] == [0, 1509978240, 1215971899390074240]
    assert [ns.next_u64() for _ in range(3)] == [0, 1509978240, 1215971899390074240]
    assert ns.state() == six(st)


def test_port_matches_raw_outputs():
    st = chunk_state(np.random.SeedSequence(12345), 3)
    ns = NaiveStream(six(st))
    out = np.zeros(5000, np.uint64)
    _u64s(st, out.size, out)
    assert [int(x) for x in out] == [ns.next_u64() for _ in range(out.size)]
    assert ns.state() == six(st)


SIDES = [2, 3, 4, 5, 6, 7, 8, 10, 12, 20, 100, 256]
BIG_BELOW = [257, 1000, 10**6, 2**32 + 1, 3 * 2**61, 2**63 - 1]
THRESHOLDS = [0, 1, chance_threshold(0.25), chance_threshold(0.5), chance_threshold(0.999), 2**53]
U64 = hs.integers(0, M64)

# one draw of a script: (kind, parameter)
DRAW = hs.one_of(
    hs.tuples(hs.just(ROLL), hs.sampled_from(SIDES)),
    hs.tuples(
        hs.just(BELOW),
        hs.one_of(hs.integers(1, 300), hs.sampled_from(BIG_BELOW), hs.integers(1, 2**63 - 1)),
    ),
    hs.tuples(hs.just(CHANCE), hs.one_of(hs.sampled_from(THRESHOLDS), hs.integers(0, 2**53))),
)


def _mixed_script(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    kinds = rng.integers(0, 3, n).astype(np.int64)
    params = np.zeros(n, np.int64)
    sides = np.array(SIDES)
    big = np.array(BIG_BELOW, dtype=np.int64)
    thresholds = np.array(THRESHOLDS, dtype=np.int64)
    for k in range(n):
        if kinds[k] == ROLL:
            params[k] = rng.choice(sides)
        elif kinds[k] == BELOW:
            params[k] = rng.integers(1, 300) if rng.random() < 0.8 else rng.choice(big)
        else:
            params[k] = rng.choice(thresholds)
    return kinds, params


def _assert_agree(seed: int, kinds: np.ndarray, params: np.ndarray) -> None:
    """The numba stream and the port, from chunk 0 of ``seed``, give the same results
    for the scripted draws and end in the same state."""
    st = chunk_state(np.random.SeedSequence(seed), 0)
    ns = NaiveStream(six(st))
    out = np.zeros(kinds.size, np.int64)
    _drive(st, kinds, params, out)
    expected = _naive_drive(ns, kinds, params)
    bad = [k for k in range(kinds.size) if out[k] != expected[k]]
    assert not bad, (
        f"first mismatch at draw {bad[0]}: kind {kinds[bad[0]]} param {params[bad[0]]}: "
        f"numba {out[bad[0]]} port {expected[bad[0]]}"
    )
    # the same number of bytes and outputs was consumed
    assert ns.state() == six(st)


def test_numba_and_port_agree_on_a_long_mixed_script():
    """10,000 draws in a row: many byte buffers and outputs used up and refilled."""
    rng = np.random.default_rng(2026)
    kinds, params = _mixed_script(rng, 10_000)
    _assert_agree(2026, kinds, params)


@given(seed=hs.integers(0, 2**64 - 1), script=hs.lists(DRAW, min_size=1, max_size=3000))
def test_numba_and_port_agree_on_any_draw_script(seed, script):
    """Any sequence of draws (dice, ``below`` small and huge, ``chance`` at any
    threshold) from any chunk: the same results, and the same state at the end."""
    kinds = np.array([k for k, _ in script], np.int64)
    params = np.array([p for _, p in script], np.int64)
    _assert_agree(seed, kinds, params)


def test_chunk_state_layout():
    st = chunk_state(np.random.SeedSequence(7), 0)
    assert st.dtype == np.uint64 and st.shape == (STATE_WORDS,)
    assert st[4] == 0 and st[5] == 0  # empty byte buffer
    assert st[:4].any()
    # chunks are distinct streams
    assert not np.array_equal(st, chunk_state(np.random.SeedSequence(7), 1))


def test_roll_d6_is_uniform():
    n = 600_000
    st = chunk_state(np.random.SeedSequence(99), 0)
    out = np.zeros(n, np.int64)
    _rolls(st, 6, n, out)
    assert out.min() == 1 and out.max() == 6
    counts = np.bincount(out, minlength=7)[1:]
    expected = n / 6
    stat = float(((counts - expected) ** 2 / expected).sum())
    # the critical value of chi-square with 5 degrees of freedom at alpha = 1e-6
    critical = chi2_critical(5, 1e-6)
    assert critical == pytest.approx(35.89, abs=0.05)
    assert stat < critical, (stat, counts)


@pytest.mark.parametrize("sides", [2, 3, 6, 10, 20, 100])
def test_roll_in_range_and_port(sides):
    st = chunk_state(np.random.SeedSequence(sides), 0)
    ns = NaiveStream(six(st))
    out = np.zeros(3000, np.int64)
    _rolls(st, sides, out.size, out)
    assert out.min() == 1 and out.max() == sides
    assert out.tolist() == [ns.roll(sides) for _ in range(out.size)]


def test_below_one_draws_nothing():
    st = chunk_state(np.random.SeedSequence(5), 0)
    before = st.copy()
    for _ in range(10):
        assert below(st, 1) == 0
    assert np.array_equal(st, before)
    ns = NaiveStream(six(before))
    assert ns.below(1) == 0
    assert ns.state() == six(before)


def test_below_in_range_up_to_1000():
    st = chunk_state(np.random.SeedSequence(11), 0)
    ns = NaiveStream(six(st))
    for n in range(1, 1001):
        for _ in range(5):
            x = below(st, n)
            assert 0 <= x < n
            assert ns.below(n) == x
    assert ns.state() == six(st)


def test_chance_extremes():
    st = chunk_state(np.random.SeedSequence(3), 0)
    assert not any(chance(st, 0) for _ in range(100))
    assert all(chance(st, 2**53) for _ in range(100))
    n = 200_000
    hits = sum(chance(st, chance_threshold(0.3)) for _ in range(n))
    assert abs(hits / n - 0.3) < 5 * math.sqrt(0.3 * 0.7 / n)


# ------------------------------------------------------------------ per-round streams
@njit(cache=False)
def _round_words(key, rounds, out):
    """``round_start`` for every round in ``rounds``: one row of six words each (the
    canonical state; ``round_start_lazy`` must give the same)."""
    st = np.zeros(STATE_WORDS, np.uint64)
    lazy = np.zeros(STATE_WORDS, np.uint64)
    for k in range(rounds.size):
        st[4] = np.uint64(123)  # a dirty byte buffer: round_start must empty it
        st[5] = np.uint64(5)
        round_start(st, key, rounds[k])
        round_start_lazy(lazy, key, rounds[k])
        c = canonical_state(st)
        if not np.array_equal(c, canonical_state(lazy)):
            c[:] = 0  # fails the comparison with the port
        for j in range(CANONICAL_WORDS):
            out[k, j] = c[j]


@njit(cache=False)
def _round_rolls(key, first, n_rounds, per_round, out):
    """``per_round`` d6 from each round's stream, rounds ``first ..``."""
    st = np.zeros(STATE_WORDS, np.uint64)
    for r in range(n_rounds):
        round_start(st, key, first + r)
        for k in range(per_round):
            out[r, k] = roll(st, 6)


def test_splitmix64_reference_values():
    # splitmix64 seeded with 1234567: the first output of the reference generator
    # (state += GOLDEN, then the mix) is 6457827717110365317
    assert splitmix64_mix(1234567 + GOLDEN) == 6457827717110365317
    assert splitmix64_mix(0) == 0


@given(z=hs.one_of(hs.sampled_from([0, 1, M64, GOLDEN]), U64))
def test_splitmix64_unmix_inverts_the_mix(z):
    assert splitmix64_unmix(splitmix64_mix(z)) == z
    assert splitmix64_mix(splitmix64_unmix(z)) == z


def _keys() -> list[np.ndarray]:
    keys = [
        chunk_state(np.random.SeedSequence(s), k)[:4].copy() for s in (0, 1, 2026) for k in (0, 7)
    ]
    keys.append(np.zeros(4, np.uint64))
    keys.append(np.full(4, M64, np.uint64))
    keys.append(np.array([1, 2, 3, 4], np.uint64))
    return keys


ROUNDS_TO_CHECK = np.array(
    [0, 1, 2, 3, 255, 256, 4095, 4096, 262_143, 262_144, 10**9, 2**31 - 1, 2**40 + 3, 2**62],
    dtype=np.int64,
)


@pytest.mark.parametrize("key_index", range(9))
def test_round_start_matches_port(key_index):
    key = _keys()[key_index]
    rounds = np.concatenate([ROUNDS_TO_CHECK, np.arange(4, 200, dtype=np.int64)])
    out = np.zeros((rounds.size, CANONICAL_WORDS), np.uint64)
    _round_words(key, rounds, out)
    key_words = [int(w) for w in key]
    for k, r in enumerate(rounds.tolist()):
        want = round_words(key_words, r)
        assert [int(w) for w in out[k]] == want, f"round {r}"
        assert want[4:] == [0, 0]  # an empty byte buffer
        assert NaiveStream.for_round(key_words, r).state() == want
    # the round_start words are the formula's, written out once more by hand
    r = 5
    row = rounds.tolist().index(r)
    step = ((r + 1) * 0x9E3779B97F4A7C15) % 2**64
    z = (key_words[0] + step) % 2**64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
    assert int(out[row, 0]) == round_words(key_words, r)[0] == z ^ (z >> 31)


def test_round_start_accepts_the_full_chunk_state():
    """The engine passes the whole ``chunk_state`` array; only its first four words count."""
    st = chunk_state(np.random.SeedSequence(31), 2)
    st[4], st[5] = 77, 3
    out6 = np.zeros((ROUNDS_TO_CHECK.size, CANONICAL_WORDS), np.uint64)
    out4 = np.zeros_like(out6)
    _round_words(st, ROUNDS_TO_CHECK, out6)
    _round_words(st[:4].copy(), ROUNDS_TO_CHECK, out4)
    assert np.array_equal(out6, out4)


@pytest.mark.parametrize("seed", range(4))
def test_lazy_round_start_draws_the_same(seed):
    """``round_start_lazy`` is only a shortcut: after it every draw, and the state after
    every draw, equal those after ``round_start`` -- whether the round begins with
    bytes (dice, small ``below``), with a whole output (``chance``, large ``below``),
    uses fewer than eight bytes, exactly eight, or many more."""
    rng = np.random.default_rng(seed)
    key = chunk_state(np.random.SeedSequence(seed), 1)[:4].copy()
    starts = set()
    for r in range(300):
        n = int(rng.choice([0, 1, 2, 4, 8, 9, 40]))
        kinds, params = _mixed_script(rng, n)
        if n and rng.random() < 0.3:  # only byte draws: the buffer runs out exactly
            kinds[:] = ROLL
            params[:] = 6
        if n:
            starts.add(int(kinds[0]))
        eager = np.zeros(STATE_WORDS, np.uint64)
        lazy = np.full(STATE_WORDS, 99, np.uint64)  # a used array: nothing may leak
        round_start(eager, key, r)
        round_start_lazy(lazy, key, r)
        assert six(eager) == six(lazy) == round_words([int(w) for w in key], r)
        results = []
        for st in (eager, lazy):
            out = np.zeros(n, np.int64)
            states = np.zeros((n, CANONICAL_WORDS), np.uint64)
            _drive(st, kinds, params, out, states)
            results.append((out.tolist(), states.tolist()))
        assert results[0] == results[1], f"round {r}: {kinds.tolist()} {params.tolist()}"
        ns = NaiveStream.for_round([int(w) for w in key], r)
        assert _naive_drive(ns, kinds, params) == results[0][0]
        assert ns.state() == six(lazy)
    assert starts == {ROLL, BELOW, CHANCE}


@njit(cache=False)
def _roll_many(st, counts, sides, out, states):
    """``roll_many`` for each count in turn: its pool (one byte field per face) and
    faces, and the canonical state after it."""
    for k in range(counts.size):
        out[k, 0], out[k, 1] = roll_many(st, counts[k], sides, 8, 3)
        c = canonical_state(st)
        for j in range(CANONICAL_WORDS):
            states[k, j] = c[j]


@pytest.mark.parametrize("lazy", [False, True])
@given(
    sides=hs.sampled_from([2, 3, 6, 10, 256]),
    pools=hs.lists(hs.integers(0, 20), min_size=1, max_size=5),
    r=hs.integers(0, 10**6),
)
def test_roll_many_is_rolls_one_by_one(lazy, sides, pools, r):
    """``roll_many`` (the buffer in registers) draws what ``roll`` draws one die at a
    time, from an eager or a pending round start, across the ends of outputs: any
    pools of up to 20 dice, any round."""
    key = chunk_state(np.random.SeedSequence(11), 2)[:4].copy()
    counts = np.array(pools, np.int64)
    st = np.zeros(STATE_WORDS, np.uint64)
    (round_start_lazy if lazy else round_start)(st, key, r)
    out = np.zeros((counts.size, 2), np.int64)
    states = np.zeros((counts.size, CANONICAL_WORDS), np.uint64)
    _roll_many(st, counts, sides, out, states)
    ns = NaiveStream.for_round([int(w) for w in key], r)
    for k, count in enumerate(counts):
        faces = [ns.roll(sides) for _ in range(count)]
        pool = sum(1 << (8 * (f - 1)) for f in faces if sides <= 8)
        packed = sum(f << (3 * j) for j, f in enumerate(faces))
        if sides <= 7:  # faces fit their 3 bits and the pool its byte fields
            assert out[k].tolist() == [pool, packed], (r, k)
        assert [int(w) for w in states[k]] == ns.state(), (r, k)


@njit
def _first_outputs(key, r0, out, second):
    first_outputs(key, r0, out, second)


@pytest.mark.parametrize("seed", range(3))
def test_first_outputs_are_each_rounds_first_two_outputs(seed):
    """``first_outputs`` (rounds side by side, vtm lanes): the first two ``next_u64``
    of each round's stream, as the port computes them, from any first round."""
    key = chunk_state(np.random.SeedSequence(seed), 1)[:4].copy()
    for r0 in (0, 1, 262_143, 10**9, 2**62):
        out = np.zeros(70, np.uint64)
        second = np.zeros(70, np.uint64)
        _first_outputs(key, r0, out, second)
        for b in range(out.size):
            ns = NaiveStream.for_round([int(w) for w in key], r0 + b)
            assert [int(out[b]), int(second[b])] == [ns.next_u64(), ns.next_u64()]


def test_round_streams_differ():
    key = chunk_state(np.random.SeedSequence(8), 0)[:4].copy()
    rounds = np.arange(0, 5000, dtype=np.int64)
    out = np.zeros((rounds.size, CANONICAL_WORDS), np.uint64)
    _round_words(key, rounds, out)
    starts = {tuple(int(w) for w in row[:4]) for row in out}
    assert len(starts) == rounds.size  # every round its own start
    assert not any(all(w == 0 for w in s) for s in starts)
    # and its own draws: consecutive rounds' first outputs differ, and their dice are
    # not one stream shifted (the rolls of round r + 1 are not the tail of round r's)
    rolls = np.zeros((400, 32), np.int64)
    _round_rolls(key, 0, 400, 32, rolls)
    same = sum(np.array_equal(rolls[r], rolls[r + 1]) for r in range(399))
    assert same == 0
    shifted = sum(
        np.array_equal(rolls[r, s:], rolls[r + 1, : 32 - s])
        for r in range(399)
        for s in range(1, 16)
    )
    assert shifted == 0
    # the rounds' dice, taken together, are fair d6 (chi-square, 5 degrees of freedom)
    counts = np.bincount(rolls.ravel(), minlength=7)[1:]
    expected = rolls.size / 6
    assert float(((counts - expected) ** 2 / expected).sum()) < chi2_critical(5, 1e-6)


def test_round_rolls_match_port_and_first_offset():
    """The numba draws of each round equal the port's ``for_round`` stream, from any first."""
    key = chunk_state(np.random.SeedSequence(2027), 3)
    key_words = [int(w) for w in key[:4]]
    rolls = np.zeros((300, 12), np.int64)
    _round_rolls(key, 0, 300, 12, rolls)
    for r in range(300):
        ns = NaiveStream.for_round(key_words, r)
        assert rolls[r].tolist() == [ns.roll(6) for _ in range(12)], f"round {r}"
    # rounds 100 .. 299 played from first = 100 are the same rounds
    later = np.zeros((200, 12), np.int64)
    _round_rolls(key, 100, 200, 12, later)
    assert np.array_equal(later, rolls[100:])


def test_different_chunks_give_different_rounds():
    a = chunk_state(np.random.SeedSequence(5), 0)
    b = chunk_state(np.random.SeedSequence(5), 1)
    ra, rb = np.zeros((50, 8), np.int64), np.zeros((50, 8), np.int64)
    _round_rolls(a, 0, 50, 8, ra)
    _round_rolls(b, 0, 50, 8, rb)
    assert sum(np.array_equal(ra[r], rb[r]) for r in range(50)) == 0


@given(
    words=hs.lists(U64, min_size=4, max_size=4),
    r=hs.one_of(hs.sampled_from([0, 1, 99, 2**40]), hs.integers(0, 2**62)),
)
def test_key_for_round_words_inverts_round_words(words, r):
    """For any four state words and any round, the key that makes them round ``r``'s
    start: the port and the numba stream both start round ``r`` there."""
    key = key_for_round_words(words, r)
    assert round_words(key, r) == [*words, 0, 0]
    out = np.zeros((1, CANONICAL_WORDS), np.uint64)
    _round_words(np.array(key, np.uint64), np.array([r], np.int64), out)
    assert [int(w) for w in out[0]] == [*words, 0, 0]
