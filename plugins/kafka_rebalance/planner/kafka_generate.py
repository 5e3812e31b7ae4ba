"""The baseline users compare us with: ``kafka-reassign-partitions.sh --generate`` over every topic.

Kafka rebuilds each topic's assignment from scratch with AdminUtils.assignReplicasToBrokers
(random start index and shift; here drawn from a seeded generator so the figure is
reproducible) over the given brokers, keeping each topic's replication factor (that
of its partition 0). We count the new replicas (data copies) it would create.
"""

from __future__ import annotations

import random
from itertools import groupby

from kafka_rebalance.assignment import BrokerMetadata, assign_replicas_to_brokers
from kafka_rebalance.snapshot import Snapshot


def generate_moves(snapshot: Snapshot, broker_ids: list[int] | None = None, seed: int = 0) -> dict[str, int]:
    """Replica moves and bytes that --generate (then --execute) would cause."""
    ids = set(broker_ids if broker_ids is not None else snapshot.live_broker_ids)
    brokers = [BrokerMetadata(b.id, b.rack) for b in snapshot.brokers if b.id in ids]
    rng = random.Random(seed)
    moves = moved_bytes = changed = 0
    for _topic, group in groupby(snapshot.partitions, key=lambda p: p.topic):
        parts = list(group)
        rf = len(next((p for p in parts if p.partition == 0), parts[0]).replicas)
        proposal = assign_replicas_to_brokers(brokers, len(parts), rf, rng=rng)
        for i, p in enumerate(parts):
            new = proposal[i]
            fresh = sum(1 for b in new if b not in p.replicas)
            moves += fresh
            moved_bytes += fresh * (p.size_bytes or 0)
            changed += new != list(p.replicas)
    return {"replica_moves": moves, "bytes_moved": moved_bytes, "partitions_changed": changed}
