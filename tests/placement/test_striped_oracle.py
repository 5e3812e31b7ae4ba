"""Differential test: our StripedReplicaPlacer against kafka-metadata's own (the pinned 4.1.x runtime).

Each case seeds ONE java.util.Random and places one to three topics in a row with one placer,
as a KRaft controller does; the harness (oracles/StripedOracle.java) runs them all in one JVM.
Placements must be equal, errors must have the same text and kind.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass

import pytest

from kafka_rebalance.errors import AssignmentError
from kafka_rebalance.placement import JavaRandom, UsableBroker, place_striped
from kafka_rebalance.placement.striped import NON_TERMINATION
from tests.placement.oracle import Oracle, broker_token
from tests.support.cli_inprocess import run_cli

SEED = 4_100_001
CASES = 2200
# "Aa"/"BB" and "AaAa"/"BBBB"/"AaBB"/"BBAa" have equal String.hashCode: the HashMap keeps them in
# insertion order within one bucket, so the order brokers are given in matters.
RACK_NAMES = ["rack-a", "rack-b", "rack-c", "us-east-1a", "us-east-1b", "us-east-1c", "Aa", "BB", "AaAa", "BBBB",
              "AaBB", "BBAa", "z", "\u00e4", "\uff21", "\U0001f680", "r1", "r2", "r3", "r10"]


@dataclass(frozen=True)
class Case:
    id: int
    seed: int
    brokers: tuple[UsableBroker, ...]  # in the ClusterDescriber's iteration order
    placements: tuple[tuple[int, int], ...]  # (partitions, replication factor), placed in turn

    def line(self) -> str:
        spec = ";".join(f"{n}x{rf}" for n, rf in self.placements)
        return f"{self.id} {self.seed} 0 {spec} {broker_token((b.id, b.rack, b.fenced) for b in self.brokers)}"

    def ours(self) -> list[str]:
        rnd = JavaRandom(self.seed)
        out = []
        for n, rf in self.placements:
            try:
                out.append("OK " + json.dumps(place_striped(self.brokers, n, rf, rnd)))
            except AssignmentError as e:
                out.append(f"ERR {e.kafka_exception} {e}")
        return out


def _case(rng: random.Random, case_id: int) -> Case:
    n = rng.randint(0, 40) if rng.random() < 0.02 else rng.randint(1, 40)
    ids = rng.sample(range(2000), n) if rng.random() < 0.6 else list(range(n))
    roll = rng.random()
    if roll < 0.1:
        racks: list[str | None] = [f"rack-{i}" for i in range(n)]  # one rack per broker: the HashMap resizes
    else:
        n_racks = rng.randint(0, 6)
        names = rng.sample(RACK_NAMES, n_racks)
        racks = [rng.choice(names) if names else None for _ in range(n)]
        if names and rng.random() < 0.1:
            racks = [None if rng.random() < 0.3 else r for r in racks]  # some brokers without a rack
    fenced_share = rng.choice([0.0, 0.0, 0.0, 0.2, 0.5, 0.9, 1.0])
    brokers = [UsableBroker(i, r, rng.random() < fenced_share) for i, r in zip(ids, racks)]
    if rng.random() < 0.7:
        rng.shuffle(brokers)
    placements = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        roll = rng.random()
        if roll < 0.05:
            rf = rng.choice([0, -1])
        elif roll < 0.09:
            rf = n + rng.randint(1, 2)
        else:
            rf = rng.randint(1, max(1, min(n, 5)))
        partitions = rng.randint(1, 200) if rng.random() > 0.03 else rng.choice([0, -2])
        placements.append((partitions, rf))
    return Case(case_id, rng.randint(-(1 << 63), (1 << 63) - 1), tuple(brokers), tuple(placements))


def test_striped_equals_kafka(striped_oracle: Oracle) -> None:
    rng = random.Random(SEED)
    cases = [_case(rng, i) for i in range(CASES)]
    ours = {c.id: c.ours() for c in cases}
    # Where Kafka's loop would never return we stop with an error instead (the JVM would hang);
    # no generated case does, but one must not hang the test run.
    hanging = [c for c in cases if any(a.startswith(f"ERR {NON_TERMINATION}") for a in ours[c.id])]
    asked = [c for c in cases if c not in hanging]
    kafka: dict[int, list[str]] = {c.id: [] for c in asked}
    for line in striped_oracle.ask(c.line() for c in asked):
        case_id, _k, answer = line.split(" ", 2)
        kafka[int(case_id)].append(answer)
    mismatches = [(c, kafka[c.id], ours[c.id]) for c in asked if kafka[c.id] != ours[c.id]]
    assert not mismatches, f"{len(mismatches)} of {len(asked)} cases differ; first: {mismatches[0]}"

    answers = [a for c in asked for a in kafka[c.id]]
    errors = sorted({re.sub(r"-?\d+", "N", a.split(" ", 1)[1]) for a in answers if a.startswith("ERR")})
    placed = [a for a in answers if a.startswith("OK [[")]
    with_fenced = [c for c in asked if any(b.fenced for b in c.brokers) and kafka[c.id][0].startswith("OK [[")]
    multi_rack = [c for c in asked if len({b.rack for b in c.brokers}) > 1 and kafka[c.id][0].startswith("OK [[")]
    print(f"\nStripedReplicaPlacer differential: {len(asked)} cases, {len(answers)} placements "
          f"({len(placed)} non-empty, {len(with_fenced)} cases with fenced brokers, {len(multi_rack)} multi-rack), "
          f"{len(hanging)} cases left out where Kafka would not return; errors: {errors}")
    assert len(asked) >= 2000 and len(with_fenced) > 200 and len(multi_rack) > 1000 and not hanging
    # Not positive, too few brokers, all fenced, and a negative partition count (Kafka sizes a list with it).
    assert errors == [
        "IllegalArgumentException Illegal Capacity: N",
        "InvalidReplicationFactorException All brokers are currently fenced.",
        "InvalidReplicationFactorException Invalid replication factor N: the replication factor must be positive.",
        "InvalidReplicationFactorException The target replication factor of N cannot be reached because only N "
        "broker(s) are registered.",
    ]


def test_cli_striped_equals_kafka(striped_oracle: Oracle) -> None:
    """`assign --placer striped --seed N` byte for byte: brokers by id, as the CLI passes them."""
    rng = random.Random(SEED + 1)
    cases = []
    for case_id in range(250):
        c = _case(rng, case_id)
        brokers = tuple(sorted(c.brokers, key=lambda b: b.id))
        n, rf = c.placements[0]
        if not brokers or n <= 0:
            continue  # the CLI refuses both before placing
        cases.append(Case(case_id, c.seed, brokers, ((n, rf),)))
    kafka = {}
    for line in striped_oracle.ask(c.line() for c in cases):
        case_id, _k, answer = line.split(" ", 2)
        kafka[int(case_id)] = answer
    mismatches = []
    for c in cases:
        (n, rf), = c.placements
        args = ["assign", "--placer", "striped", "--seed", str(c.seed), "--partitions", str(n),
                "--replication-factor", str(rf),
                "--brokers", ",".join(str(b.id) if b.rack is None else f"{b.id}:{b.rack}" for b in c.brokers)]
        fenced = [str(b.id) for b in c.brokers if b.fenced]
        if fenced:
            args += ["--fenced", ",".join(fenced)]
        r = run_cli(*args)
        expected = kafka[c.id]
        if expected.startswith("OK "):
            expected = json.dumps({str(p): replicas for p, replicas in enumerate(json.loads(expected[3:]))})
            got = r.stdout.rstrip("\n") if r.code == 0 else r.stderr
        else:
            expected = "error: " + expected.split(" ", 2)[2]
            got = r.stderr.rstrip("\n") if r.code == 2 else r.stdout
        if got != expected:
            mismatches.append((c, expected, got))
    assert not mismatches, f"{len(mismatches)} of {len(cases)} CLI runs differ; first: {mismatches[0]}"
    print(f"\nStripedReplicaPlacer differential through the CLI: {len(cases)} cases")
    assert len(cases) > 200


def _colliding_names(count: int) -> list[str]:
    # Concatenations of "Aa" and "BB" all share one String.hashCode, so they share a HashMap bucket.
    return ["".join("Aa" if (i >> bit) & 1 else "BB" for bit in range(4)) for i in range(count)]


def test_racks_sharing_a_bucket_equal_kafka(striped_oracle: Oracle) -> None:
    """9 and 10 rack names in one bucket make the HashMap grow instead of building a tree; order still Java's."""
    cases = []
    for count in (2, 5, 9, 10):
        names = _colliding_names(count)
        for seed in range(25):
            rng = random.Random(seed)
            brokers = [UsableBroker(i, names[i % count], rng.random() < 0.2) for i in range(2 * count)]
            rng.shuffle(brokers)  # insertion order decides the order inside the bucket
            cases.append(Case(len(cases), seed * 7919 - 3, tuple(brokers), ((rng.randint(1, 60), 3), (7, 2))))
    kafka: dict[int, list[str]] = {c.id: [] for c in cases}
    for line in striped_oracle.ask(c.line() for c in cases):
        case_id, _k, answer = line.split(" ", 2)
        kafka[int(case_id)].append(answer)
    mismatches = [(c, kafka[c.id], c.ours()) for c in cases if kafka[c.id] != c.ours()]
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ; first: {mismatches[0]}"
    assert all(answer.startswith("OK [[") for c in cases for answer in kafka[c.id])


def test_racks_in_a_tree_bucket_are_refused() -> None:
    # 11 names in one bucket of a 64-bucket table: Java orders them through a red-black tree keyed
    # on identity hash codes (Optional is not Comparable), which no other run could reproduce.
    brokers = [UsableBroker(i, name) for i, name in enumerate(_colliding_names(11))]
    with pytest.raises(AssignmentError, match="red-black tree"):
        place_striped(brokers, 3, 2, JavaRandom(1))
