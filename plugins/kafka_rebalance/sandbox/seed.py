"""Deliberately unbalanced topics on a real cluster, with real bytes in them.

Topics are created with explicit replica assignments (so Kafka's placer is not involved): a share
``skew`` of the partitions has its replicas and its preferred leader packed onto the first brokers;
some partitions then get a replica order whose first broker is not the current leader (a
metadata-only reassignment keeps the leader where it is), so leadership is off the preferred
replica. Every partition then receives ``mb_per_partition`` MiB of records, so that moves copy
real data and replication throttles matter.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.sandbox.cluster import Sandbox
from kafka_rebalance.units import MIB

RECORD_BYTES = 256 * 1024  # well under the broker's default message.max.bytes (~1 MiB)


class SeedError(RebalanceError):
    pass


@dataclass(frozen=True)
class SeedSpec:
    topics: int = 6
    partitions: int = 12
    mb_per_partition: float = 8.0
    skew: float = 0.8
    seed: int = 1
    replication_factor: int = 2
    topic_prefix: str = "skewed"

    @property
    def produce_bytes(self) -> int:
        """Bytes of records ``seed`` produces in all."""
        return int(self.mb_per_partition * MIB) * self.topics * self.partitions

    def check(self, brokers: int) -> None:
        if not 1 <= self.topics <= 1000:
            raise SeedError(f"--topics: {self.topics} is outside 1..1000")
        if not 1 <= self.partitions <= 1000:
            raise SeedError(f"--partitions: {self.partitions} is outside 1..1000")
        if not 0 <= self.mb_per_partition <= 1024 or self.mb_per_partition != self.mb_per_partition:
            raise SeedError(f"--mb-per-partition: {self.mb_per_partition} is outside 0..1024")
        if not 0.0 <= self.skew <= 1.0:
            raise SeedError(f"--skew: {self.skew} is outside 0..1")
        if not 0 <= self.seed < 2**63:
            raise SeedError(f"--seed: {self.seed} is outside 0..2**63-1")
        if not 1 <= self.replication_factor <= brokers:
            raise SeedError(f"--replication-factor: {self.replication_factor} is outside 1..{brokers} (brokers in the sandbox)")


def skewed_assignment(broker_ids: list[int], racks: dict[int, str | None], spec: SeedSpec
                      ) -> tuple[dict[str, dict[int, list[int]]], dict[str, dict[int, list[int]]]]:
    """(creation assignment, later replica order) per topic; pure and seeded.

    Skewed partitions take their replicas from the "hot" brokers (the first half, at least RF of
    them) with the first hot broker preferred; the rest are spread round-robin. Replicas of one
    partition are always on distinct racks while racks allow.
    """
    rng = random.Random(spec.seed)
    rf = spec.replication_factor
    ids = sorted(broker_ids)
    hot = ids[: max(rf, (len(ids) + 1) // 2)]
    created: dict[str, dict[int, list[int]]] = {}
    reorder: dict[str, dict[int, list[int]]] = {}
    cursor = 0
    for t in range(spec.topics):
        topic = f"{spec.topic_prefix}-{t}"
        created[topic], reorder[topic] = {}, {}
        for p in range(spec.partitions):
            if rng.random() < spec.skew:
                pool = list(hot)
                rest = pool[1:]
                rng.shuffle(rest)
                replicas = [pool[0]]
            else:
                start = cursor % len(ids)
                cursor += 1
                pool = ids[start:] + ids[:start]
                rest = pool[1:]
                replicas = [pool[0]]
            for b in rest:
                if len(replicas) == rf:
                    break
                used = {racks.get(r) for r in replicas}
                if racks.get(b) is None or racks.get(b) not in used or len(used) >= len(set(racks.values())):
                    replicas.append(b)
            for b in ids:  # not enough rack-distinct hot brokers: fill from anywhere
                if len(replicas) == rf:
                    break
                if b not in replicas:
                    replicas.append(b)
            created[topic][p] = replicas
            # Leadership off the preferred replica: the leader stays on the old first replica.
            if rf > 1 and rng.random() < spec.skew * 0.5:
                reorder[topic][p] = replicas[1:] + replicas[:1]
    return created, reorder


@dataclass(frozen=True)
class SeedResult:
    topics: list[str]
    partitions: int
    bytes_produced: int
    seconds: float
    off_preferred: int


def seed(sandbox: Sandbox, spec: SeedSpec, progress: Callable[[str], None] = lambda _: None,
         produced_bytes: Callable[[int], None] = lambda _: None) -> SeedResult:
    """Create the spec's topics on their skewed assignment and fill them; ``produced_bytes(n)`` is told of
    every record handed to the producer (``spec.produce_bytes`` in all), for a progress bar."""
    from kafka import KafkaProducer, TopicPartition
    from kafka.admin import KafkaAdminClient, NewTopic

    spec.check(len(sandbox.nodes))
    started = time.monotonic()
    racks = {n.node_id: n.rack for n in sandbox.nodes}
    created, reorder = skewed_assignment([n.node_id for n in sandbox.nodes], racks, spec)
    admin = KafkaAdminClient(bootstrap_servers=sandbox.bootstrap_servers, request_timeout_ms=30000)
    try:
        existing = set(admin.list_topics())
        clash = sorted(set(created) & existing)
        if clash:
            raise SeedError(f"topics {clash} already exist on {sandbox.bootstrap_servers}; seed a fresh sandbox or use another prefix")
        progress(f"creating {spec.topics} topic(s) x {spec.partitions} partition(s), RF {spec.replication_factor}, skew {spec.skew}")
        admin.create_topics([NewTopic(t, replica_assignments={p: r for p, r in a.items()}) for t, a in created.items()])
        _wait_for_leaders(admin, created)
        moves = {TopicPartition(t, p): r for t, ps in reorder.items() for p, r in ps.items()}
        if moves:
            admin.alter_partition_reassignments(moves)
            _wait_no_reassignments(admin)
    finally:
        admin.close()
    total = spec.produce_bytes // (spec.topics * spec.partitions)
    produced = 0
    if total:
        progress(f"producing {spec.mb_per_partition:g} MiB into each of {spec.topics * spec.partitions} partitions")
        producer = KafkaProducer(bootstrap_servers=sandbox.bootstrap_servers, acks=1, linger_ms=5,
                                 batch_size=RECORD_BYTES + 1024, max_request_size=RECORD_BYTES + 4096,
                                 compression_type=None)
        rng = random.Random(spec.seed)
        # Incompressible bytes, so that on-disk size equals what was produced.
        payload = rng.randbytes(RECORD_BYTES)
        try:
            for topic in created:
                for p in created[topic]:
                    left = total
                    while left > 0:
                        n = min(left, RECORD_BYTES)
                        producer.send(topic, value=payload[:n], partition=p)
                        left -= n
                        produced += n
                        produced_bytes(n)
                producer.flush(timeout=120)
        finally:
            producer.close(timeout=30)
    return SeedResult(sorted(created), spec.topics * spec.partitions, produced, round(time.monotonic() - started, 1),
                      sum(len(v) for v in reorder.values()))


def _wait_for_leaders(admin, assignment: dict[str, dict[int, list[int]]], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        described = admin.describe_topics(list(assignment))
        ready = all(p["leader_id"] >= 0 and len(p["isr_nodes"]) == len(p["replica_nodes"])
                    for t in described for p in t["partitions"]) and len(described) == len(assignment)
        if ready:
            return
        time.sleep(0.3)
    raise SeedError(f"topics {sorted(assignment)} did not get leaders and full ISRs within {timeout:.0f}s")


def _wait_no_reassignments(admin, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not admin.list_partition_reassignments():
            return
        time.sleep(0.3)
    raise SeedError(f"replica re-ordering did not complete within {timeout:.0f}s")
