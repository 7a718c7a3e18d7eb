"""Plain-Python port of ``simkit/systems/stream.py`` (xoshiro256** and its draw primitives).

Written from the documented algorithm with Python integers masked to 64 bits; it
imports nothing from simkit, so a test can hold the numba stream against it.

State: six words, as in ``chunk_state``: the four xoshiro words ``s0 .. s3``, a
buffered 64-bit output that small draws are cut from byte by byte (low byte first),
and the number of bytes still unused in that buffer.

Every round has a stream of its own: round ``r`` of a chunk with key ``k0 .. k3``
(the first four words of ``chunk_state``) starts from the words
``splitmix64_mix(k_j + (r + 1) * GOLDEN)`` with an empty byte buffer
(``round_words``, ``NaiveStream.for_round``).
"""

from __future__ import annotations

from collections.abc import Iterable

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15  # the splitmix64 increment, floor(2**64 / golden ratio)
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB


def splitmix64_mix(z: int) -> int:
    """The splitmix64 output function (a bijection of 64-bit words)."""
    z &= M64
    z = ((z ^ (z >> 30)) * _MIX1) & M64
    z = ((z ^ (z >> 27)) * _MIX2) & M64
    return z ^ (z >> 31)


def _unshift_xor(z: int, k: int) -> int:
    """Invert ``z ^ (z >> k)`` on 64-bit words."""
    x = z
    for _ in range(64 // k + 1):
        x = z ^ (x >> k)
    return x & M64


def splitmix64_unmix(z: int) -> int:
    """The inverse of :func:`splitmix64_mix`."""
    z = _unshift_xor(z & M64, 31)
    z = (z * pow(_MIX2, -1, 1 << 64)) & M64
    z = _unshift_xor(z, 27)
    z = (z * pow(_MIX1, -1, 1 << 64)) & M64
    return _unshift_xor(z, 30)


def round_words(key_words: Iterable[int], r: int) -> list[int]:
    """The six state words at the start of round ``r`` (from 0) under chunk key ``key_words``.

    ``key_words``: the chunk's key, its first four words (more are ignored).
    """
    key = [int(w) & M64 for w in key_words][:4]
    if len(key) != 4:
        raise ValueError(f"expected at least 4 key words, got {len(key)}")
    step = ((r + 1) * GOLDEN) & M64
    return [splitmix64_mix(k + step) for k in key] + [0, 0]


def key_for_round_words(words: Iterable[int], r: int = 0) -> list[int]:
    """A chunk key whose round ``r`` starts from the xoshiro words ``words[:4]``."""
    step = ((r + 1) * GOLDEN) & M64
    return [(splitmix64_unmix(int(w)) - step) & M64 for w in list(words)[:4]]


def rotl(x: int, k: int) -> int:
    """Rotate a 64-bit word left by ``k`` bits."""
    return ((x << k) | (x >> (64 - k))) & M64


def words_for_outputs(outputs: list[int], s0: int = GOLDEN) -> list[int]:
    """Six stream words (empty byte buffer) whose first one or two outputs are ``outputs``.

    The first output is rotl(s1 * 5, 7) * 9, a bijection of s1; after one step the
    new s1 is s1 ^ s2 ^ s0, so s2 fixes the second output.
    """

    def s1_for(x: int) -> int:
        y = (x * pow(9, -1, 1 << 64)) & M64
        y = rotl(y, 64 - 7)  # rotate right by 7
        return (y * pow(5, -1, 1 << 64)) & M64

    assert 1 <= len(outputs) <= 2
    s1 = s1_for(outputs[0])
    s2 = 0x0123456789ABCDEF
    if len(outputs) > 1:
        s2 = s1_for(outputs[1]) ^ s1 ^ s0
    return [s0, s1, s2, 0xDEADBEEFCAFEF00D, 0, 0]


class NaiveStream:
    """xoshiro256** with the byte buffer and the draws ``roll``, ``below``, ``chance``."""

    def __init__(self, state_words: Iterable[int]) -> None:
        words = [int(w) & M64 for w in state_words]
        if len(words) != 6:
            raise ValueError(f"expected 6 state words, got {len(words)}")
        self.s = words[:4]
        self.buffer = words[4]
        self.left = words[5]

    @classmethod
    def for_round(cls, key_words: Iterable[int], r: int) -> NaiveStream:
        """The stream of round ``r`` (from 0) of the chunk with key ``key_words``."""
        return cls(round_words(key_words, r))

    def state(self) -> list[int]:
        """The six state words, in the layout of ``chunk_state``."""
        return [*self.s, self.buffer, self.left]

    # ------------------------------------------------------------- raw outputs
    def next_u64(self) -> int:
        """One xoshiro256** output (Blackman and Vigna's reference algorithm)."""
        s0, s1, s2, s3 = self.s
        result = (rotl((s1 * 5) & M64, 7) * 9) & M64
        t = (s1 << 17) & M64
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotl(s3, 45)
        self.s = [s0, s1, s2, s3]
        return result

    def next_byte(self) -> int:
        """The next unused byte of the buffered output (a fresh output when it is empty)."""
        if self.left == 0:
            self.buffer = self.next_u64()
            self.left = 8
        b = self.buffer & 0xFF
        self.buffer >>= 8
        self.left -= 1
        return b

    # ------------------------------------------------------------- draws
    def roll(self, sides: int) -> int:
        """One die 1..sides: bytes until one is below 256 - 256 % sides; byte % sides + 1."""
        limit = 256 - 256 % sides
        while True:
            b = self.next_byte()
            if b < limit:
                return b % sides + 1

    def below(self, n: int) -> int:
        """Uniform in [0, n); n == 1 draws nothing, n <= 256 cuts bytes, else 64-bit words."""
        if n <= 1:
            return 0
        if n <= 256:
            limit = 256 - 256 % n
            while True:
                b = self.next_byte()
                if b < limit:
                    return b % n
        threshold = (1 << 64) % n  # == (2**64 - n) % n, the rejected low outputs
        while True:
            x = self.next_u64()
            if x >= threshold:
                return x % n

    def chance(self, threshold: int) -> bool:
        """True with probability threshold / 2**53: a fresh output x, (x >> 11) < threshold."""
        return (self.next_u64() >> 11) < threshold
