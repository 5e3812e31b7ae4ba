"""``JavaRandom`` against what java.util.Random itself prints (oracles/JavaRandomOracle.java)."""

from __future__ import annotations

import random
import struct

from kafka_rebalance.placement.java_random import JavaRandom, java_shuffle
from tests.placement.oracle import Oracle

# Printed by JavaRandomOracle (OpenJDK 17): `new Random(seed).nextInt()` three times, and
# nextInt(10) / nextLong() for seed 42. Kept literal so the test stands without a JVM as well.
KNOWN_NEXT_INT = {
    0: [-1155484576, -723955400, 1033096058],
    42: [-1170105035, 234785527, -1360544799],
    -1: [1155099827, 1887904451, 52699159],
}
KNOWN_SEED42_NEXT_INT_10 = [0, 3, 8, 4, 0]
KNOWN_SEED42_NEXT_LONG = [-5025562857975149833, -5843495416241995736]

# Bounds for each path of nextInt(bound): 1, powers of two (multiply-shift), small odd bounds,
# and 2^30 + 1 and 2^31 - 1, where about half the raw draws fall in the rejected tail.
BOUNDS = [1, 2, 3, 5, 7, 10, 16, 64, 100, 1000, 1 << 20, (1 << 30) + 1, 1_500_000_000, (1 << 31) - 1]


def _python_ops(seed: int, ops: list[str]) -> list[str]:
    rnd = JavaRandom(seed)
    out = []
    for op in ops:
        kind, arg = op[0], op[1:]
        if kind == "i":
            out.append(str(rnd.next_int(int(arg)) if arg else rnd.next_int()))
        elif kind == "l":
            out.append(str(rnd.next_long()))
        elif kind == "z":
            out.append("true" if rnd.next_boolean() else "false")
        elif kind == "d":
            out.append(str(struct.unpack(">q", struct.pack(">d", rnd.next_double()))[0]))
        elif kind == "f":
            out.append(str(struct.unpack(">i", struct.pack(">f", rnd.next_float()))[0]))
        elif kind == "s":
            items = list(range(int(arg)))
            java_shuffle(items, rnd)
            out.append(":".join(map(str, items)) or "-")
    return out


def test_known_values() -> None:
    for seed, expected in KNOWN_NEXT_INT.items():
        rnd = JavaRandom(seed)
        assert [rnd.next_int() for _ in range(3)] == expected
    rnd = JavaRandom(42)
    assert [rnd.next_int(10) for _ in range(5)] == KNOWN_SEED42_NEXT_INT_10
    rnd = JavaRandom(42)
    assert [rnd.next_long() for _ in range(2)] == KNOWN_SEED42_NEXT_LONG


def test_known_values_are_javas(java_random_oracle: Oracle) -> None:
    lines = [f"{seed} {seed} i,i,i" for seed in KNOWN_NEXT_INT] + ["x 42 i10,i10,i10,i10,i10", "y 42 l,l"]
    out = dict(line.split(" ", 1) for line in java_random_oracle.ask(lines))
    for seed, expected in KNOWN_NEXT_INT.items():
        assert out[str(seed)] == " ".join(map(str, expected))
    assert out["x"] == " ".join(map(str, KNOWN_SEED42_NEXT_INT_10))
    assert out["y"] == " ".join(map(str, KNOWN_SEED42_NEXT_LONG))


def test_every_method_matches_java(java_random_oracle: Oracle) -> None:
    rng = random.Random(7)
    seeds = [0, 1, -1, 42, (1 << 63) - 1, -(1 << 63), 0x5DEECE66D, 1 << 48] + [
        rng.randint(-(1 << 63), (1 << 63) - 1) for _ in range(300)
    ]
    cases = []
    for i, seed in enumerate(seeds):
        ops = [rng.choice(["i", "l", "z", "d", "f"]) for _ in range(10)]
        ops += [f"i{rng.choice(BOUNDS)}" for _ in range(40)]
        ops += [f"s{rng.randint(0, 12)}" for _ in range(3)]
        rng.shuffle(ops)
        cases.append((str(i), seed, ops))
    out = dict(line.split(" ", 1) for line in java_random_oracle.ask(f"{i} {s} {','.join(ops)}" for i, s, ops in cases))
    mismatches = [(i, s) for i, s, ops in cases if out[i] != " ".join(_python_ops(s, ops))]
    assert not mismatches, f"{len(mismatches)} of {len(cases)} seeds differ from java.util.Random, e.g. {mismatches[0]}"


def test_rejection_path_is_exercised() -> None:
    # Independent of our code: with bound 2^30 + 1, any raw 31-bit draw >= bound is rejected.
    state = (42 ^ 0x5DEECE66D) & ((1 << 48) - 1)
    raws = []
    for _ in range(8):
        state = (state * 0x5DEECE66D + 0xB) & ((1 << 48) - 1)
        raws.append(state >> 17)
    assert any(r >= (1 << 30) + 1 for r in raws)
