"""``java.util.Random``, bit for bit: the generator Kafka hands to its placers.

A 48-bit linear congruential generator (Knuth, TAOCP vol. 2, 3.2.1), as specified in
``java.util.Random``'s javadoc. Only the methods the legacy algorithm defines are here;
the ones Java 17 inherits from ``RandomGenerator`` (``nextInt(origin, bound)`` etc.)
use other algorithms and are not needed by Kafka's placement.
"""

from __future__ import annotations

from collections.abc import MutableSequence
from typing import TypeVar

_MULTIPLIER = 0x5DEECE66D
_ADDEND = 0xB
_MASK = (1 << 48) - 1

T = TypeVar("T")


def _int32(value: int) -> int:
    """Java's narrowing to ``int``: keep the low 32 bits, two's complement."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


class JavaRandom:
    """``new java.util.Random(seed)``; the seed is a Java ``long`` (any int is reduced to 64 bits)."""

    __slots__ = ("_seed",)

    def __init__(self, seed: int) -> None:
        self.set_seed(seed)

    def set_seed(self, seed: int) -> None:
        self._seed = (seed ^ _MULTIPLIER) & _MASK

    def next_bits(self, bits: int) -> int:
        """``protected int next(int bits)``: the top ``bits`` of the new 48-bit state, as a Java int."""
        if not 1 <= bits <= 32:
            raise ValueError(f"bits must be in 1..32, got {bits}")
        self._seed = (self._seed * _MULTIPLIER + _ADDEND) & _MASK
        return _int32(self._seed >> (48 - bits))

    def next_int(self, bound: int | None = None) -> int:
        """``nextInt()`` or ``nextInt(bound)`` with the legacy algorithm (power-of-two fast path, rejection)."""
        if bound is None:
            return self.next_bits(32)
        if bound <= 0:
            raise ValueError("bound must be positive")
        if bound > 0x7FFFFFFF:
            raise ValueError(f"bound must fit a Java int, got {bound}")
        r = self.next_bits(31)
        m = bound - 1
        if bound & m == 0:
            # Power of two: the high bits are the better-distributed ones in an LCG.
            return (bound * r) >> 31
        u = r
        while True:
            r = u % bound
            # Java's `u - r + m < 0` is an int overflow test: reject the partial last bucket.
            if _int32(u - r + m) >= 0:
                return r
            u = self.next_bits(31)

    def next_long(self) -> int:
        high = self.next_bits(32)
        low = self.next_bits(32)
        value = ((high << 32) + low) & 0xFFFFFFFFFFFFFFFF
        return value - (1 << 64) if value & (1 << 63) else value

    def next_boolean(self) -> bool:
        return self.next_bits(1) != 0

    def next_double(self) -> float:
        return ((self.next_bits(26) << 27) + self.next_bits(27)) * (1.0 / (1 << 53))

    def next_float(self) -> float:
        # Exact in a double, and a Java float holds it exactly too (24 significant bits).
        return self.next_bits(24) / float(1 << 24)


def java_shuffle(items: MutableSequence[T], rnd: JavaRandom) -> None:
    """``Collections.shuffle(list, rnd)`` for a random-access list, in place."""
    for i in range(len(items), 1, -1):
        j = rnd.next_int(i)
        items[i - 1], items[j] = items[j], items[i - 1]
