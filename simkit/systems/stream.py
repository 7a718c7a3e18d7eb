"""The random stream every kernel draws from: xoshiro256** written in numba.

One stream per chunk of rounds, seeded from ``numpy.random.SeedSequence``
(child ``k`` of the run's seed sequence for chunk ``k``), so the number of workers
never changes a result.  Dice, coin flips, targets and ``attack_share`` draws all
come from the same stream, in the order the rules ask for them.

Every round has a stream of its own, so that two scenarios run with the same seed
see the same dice in the same round (common random numbers) however differently
they use them.  A chunk's *key* is the first four words of ``chunk_state``;
round ``r`` of the chunk (counted from 0) starts from the xoshiro words

    word_j = splitmix64_mix(key_j + (r + 1) * 0x9E3779B97F4A7C15)   (mod 2**64)

for j = 0..3 (``round_start``), with an empty byte buffer.  The *state* of a stream is
six words: the four xoshiro words, a buffered 64-bit output that small draws are cut
from byte by byte (low byte first), and the number of bytes still unused in that
buffer.

The working array (``STATE_WORDS`` words) holds that state and lets a round start
lazily: most rounds of the d10 systems draw at most eight bytes, all from the first
output, and that output depends on one xoshiro word only.  So ``round_start_lazy``
computes that word and the first output, puts the output in the buffer as if the
first byte draw had just fetched it (eight bytes unused) and marks the state
*pending*: the four words are computed, and advanced past the first output, only
when a second output is needed.  ``next_u64`` on a pending state that has not used
a byte yet returns the prefetched output itself, exactly as the first output of the
round.  The draws are those of ``round_start``; ``canonical_state`` gives the
six-word state either way.

Working array: words 0-3 xoshiro (valid unless pending), 4 buffer, 5 bytes unused,
6 pending flag, 7 the round's ``(r + 1) * golden``, 8-11 the chunk key.

Draw primitives (the plain-Python port in ``tests/naive_rng.py`` must match):

``roll(st, sides)``
    One die (``roll_many``: several, the same draws): bytes are drawn until one is below
    ``256 - 256 % sides``; the die is ``byte % sides + 1``.
``below(st, n)``
    A uniform integer in ``[0, n)``.  ``n == 1`` draws nothing.  ``2 <= n <= 256``
    uses byte rejection as for dice; larger ``n`` uses a fresh 64-bit output with
    rejection below ``2**64 % n``.
``chance(st, threshold)``
    True with probability ``threshold / 2**53``: a fresh 64-bit output ``x``,
    ``(x >> 11) < threshold``.  ``chance_threshold(p)`` turns a probability into a
    threshold; callers draw only when ``0 < p < 1``.
"""

from __future__ import annotations

import numpy as np

from simkit.systems.support import JIT, helper_njit, njit

# Helpers only jitted code calls: no Python or C wrapper is compiled for them, and they
# are not cached apart (the kernels' entry points are, with them compiled in).  The
# draws plain Python calls too (``roll``, ``below``, ``chance``, ``next_u64``,
# ``round_start``, ``round_start_lazy``, ``canonical_state``: tests, plug-in systems) are
# compiled the same way for kernels (``support.helper_njit``); a plain-Python call goes
# to a twin with wrappers, compiled on its first call.
INNER = {**JIT, "cache": False, "no_cpython_wrapper": True, "no_cfunc_wrapper": True}

STATE_WORDS = 12  # the working array (see the module docstring)
CANONICAL_WORDS = 6

# For 1 <= n <= 256: the byte rejection limit 256 - 256 % n, and ceil(2**32 / n).
BYTE_LIMIT = np.array([0] + [256 - 256 % n for n in range(1, 257)], dtype=np.int64)
RECIPROCAL = np.array([0] + [-(-(2**32) // n) for n in range(1, 257)], dtype=np.int64)


@helper_njit(forceinline=True)
def next_u64(st):
    if st[6] != 0:  # pending (round_start): the words come first
        untouched = st[5] == np.uint64(8)
        first = st[4]
        _materialise(st)
        if untouched:  # the round's first output, not yet cut into bytes
            st[4] = np.uint64(0)
            st[5] = np.uint64(0)
            return first
    return _xoshiro(st)


@njit(**INNER)
def _materialise(st):
    """Compute a pending round's xoshiro words and advance them past its first output."""
    step = st[7]
    for j in range(4):
        st[j] = _mix(st[8 + j] + step)
    _xoshiro(st)
    st[6] = np.uint64(0)


@njit(**INNER, forceinline=True)
def _xoshiro(st):
    s0 = st[0]
    s1 = st[1]
    s2 = st[2]
    s3 = st[3]
    x = s1 * np.uint64(5)
    result = ((x << np.uint64(7)) | (x >> np.uint64(57))) * np.uint64(9)  # rotl(s1 * 5, 7) * 9
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = (s3 << np.uint64(45)) | (s3 >> np.uint64(19))  # rotl(s3, 45)
    st[0] = s0
    st[1] = s1
    st[2] = s2
    st[3] = s3
    return result


@njit(**INNER, forceinline=True)
def next_byte(st):
    if st[5] == 0:
        st[4] = next_u64(st)
        st[5] = np.uint64(8)
    b = st[4] & np.uint64(0xFF)
    st[4] = st[4] >> np.uint64(8)
    st[5] = st[5] - np.uint64(1)
    return np.int64(b)


@helper_njit(forceinline=True)
def roll(st, sides):
    limit = 256 - 256 % sides
    while True:
        b = next_byte(st)
        if b < limit:
            return b % sides + 1


@njit(**INNER, forceinline=True)
def roll_many(st, count, sides, field, face_bits):
    """``count`` rolls of ``roll(st, sides)``, the same draws, with the byte buffer in
    registers (``roll`` goes through the state array for every byte): the dice as
    ``sum(1 << field * (face - 1))`` and their faces in the order drawn, ``face_bits``
    each (die k at bits face_bits k ..)."""
    limit = 256 - 256 % sides
    buf = st[4]
    left = st[5]
    pool = np.int64(0)
    faces = np.int64(0)
    for k in range(count):
        while True:
            if left == 0:
                st[5] = np.uint64(0)  # the buffer used up: next_u64 of a pending state asks
                buf = next_u64(st)
                left = np.uint64(8)
            b = np.int64(buf & np.uint64(0xFF))
            buf = buf >> np.uint64(8)
            left = left - np.uint64(1)
            if b < limit:
                break
        f = b % sides + 1
        pool += np.int64(1) << (field * (f - 1))
        faces |= f << (face_bits * k)
    st[4] = buf
    st[5] = left
    return pool, faces


@helper_njit(forceinline=True)
def below(st, n):
    if n <= 1:
        return 0
    if n <= 256:
        # b % n without a division: q = floor(b / n) = (b * ceil(2**32 / n)) >> 32,
        # exact for b < 256 (the error b * n / 2**32 stays below 1 / n).
        limit = BYTE_LIMIT[n]
        while True:
            b = next_byte(st)
            if b < limit:
                return b - ((b * RECIPROCAL[n]) >> 32) * n
    un = np.uint64(n)
    threshold = (np.uint64(0) - un) % un
    while True:
        x = next_u64(st)
        if x >= threshold:
            return np.int64(x % un)


@helper_njit(forceinline=True)
def chance(st, threshold):
    x = next_u64(st) >> np.uint64(11)
    return np.int64(x) < threshold


def chance_threshold(p: float) -> int:
    """The integer threshold of ``chance`` for probability ``p`` (0 <= p <= 1)."""
    return round(p * 2**53)


def chunk_state(seed_seq: np.random.SeedSequence, chunk: int) -> np.ndarray:
    """Initial stream state of chunk ``chunk``: the chunk's child of ``seed_seq``.

    A working array (not pending, empty buffer) whose first four words are also the
    chunk's key for ``round_start``."""
    child = np.random.SeedSequence(seed_seq.entropy, spawn_key=tuple(seed_seq.spawn_key) + (chunk,))
    st = np.zeros(STATE_WORDS, dtype=np.uint64)
    st[:4] = child.generate_state(4, np.uint64)
    if not st[:4].any():  # xoshiro's one forbidden state
        st[0] = 1
    return st


_GOLDEN = 0x9E3779B97F4A7C15


@njit(**INNER, forceinline=True)
def _mix(z):
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@helper_njit()
def round_start(st, key, r):
    """Set ``st`` to the start of round ``r``'s stream under chunk key ``key``."""
    step = np.uint64(r + 1) * np.uint64(_GOLDEN)
    for j in range(4):
        st[j] = _mix(key[j] + step)
    st[4] = np.uint64(0)
    st[5] = np.uint64(0)
    st[6] = np.uint64(0)


@helper_njit(forceinline=True)
def round_start_lazy(st, key, r):
    """``round_start``, pending: word 1 and the first output only (see the module
    docstring); for kernels whose rounds mostly draw eight bytes or fewer."""
    step = np.uint64(r + 1) * np.uint64(_GOLDEN)
    x = _mix(key[1] + step) * np.uint64(5)
    st[4] = ((x << np.uint64(7)) | (x >> np.uint64(57))) * np.uint64(9)  # output of s1
    st[5] = np.uint64(8)
    st[6] = np.uint64(1)
    st[7] = step
    for j in range(4):
        st[8 + j] = key[j]


@njit(**INNER)
def first_outputs(key, r0, out, second):
    """The first two outputs of the streams of rounds r = r0 .. r0 + out.size - 1 (the
    words ``next_u64`` gives after ``round_start(st, key, r)``): their bytes, low byte
    first, are a round's first sixteen byte draws.  One loop over the rounds, with no
    branch: it vectorises."""
    for b in range(out.size):
        step = np.uint64(r0 + b + 1) * np.uint64(_GOLDEN)
        s0 = _mix(key[0] + step)
        s1 = _mix(key[1] + step)
        s2 = _mix(key[2] + step)
        x = s1 * np.uint64(5)
        out[b] = ((x << np.uint64(7)) | (x >> np.uint64(57))) * np.uint64(9)
        s1 ^= s2 ^ s0  # word 1 after one step of _xoshiro (word 3 does not reach it)
        x = s1 * np.uint64(5)
        second[b] = ((x << np.uint64(7)) | (x >> np.uint64(57))) * np.uint64(9)


LANE_BYTES = 16  # the byte draws of a round that first_outputs gives


@njit(**INNER, forceinline=True)
def lane_byte(out, second, b, pos):
    """Byte draw ``pos`` (0 .. LANE_BYTES - 1) of the round in lane b of
    ``first_outputs``: both words shifted, then a select, so that a loop over the lanes
    has no branch and vectorises."""
    shift = np.uint64((8 * pos) & 63)
    low = out[b] >> shift
    high = second[b] >> shift
    return np.int64((low if pos < 8 else high) & np.uint64(255))


@njit(**INNER, forceinline=True)
def lane_roll(out, second, b, pos, ok, sides):
    """``roll(st, sides)`` for the round in lane b, from its byte draw ``pos[b]`` on,
    with one retry (the round's bytes run out after LANE_BYTES): ``pos[b]`` moves past
    the bytes used, ``ok[b]`` becomes 0 if a second byte was rejected too."""
    limit = BYTE_LIMIT[sides]
    p = pos[b]
    p += lane_byte(out, second, b, p) >= limit
    x = lane_byte(out, second, b, p)
    ok[b] &= x < limit
    pos[b] = p + 1
    return x % sides + 1


@helper_njit()
def canonical_state(st):
    """The six-word state of the working array ``st`` (as if nothing were pending)."""
    out = np.zeros(CANONICAL_WORDS, np.uint64)
    if st[6] != 0 and st[5] == np.uint64(8):  # pending and untouched: the round start
        for j in range(4):
            out[j] = _mix(st[8 + j] + st[7])
        return out  # an empty buffer
    work = st.copy()
    if work[6] != 0:
        _materialise(work)
    for j in range(CANONICAL_WORDS):
        out[j] = work[j]
    return out
