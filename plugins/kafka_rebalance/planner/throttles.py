"""KIP-73 throttle configs for one batch, as ``kafka-reassign-partitions.sh --execute --throttle`` sets them.

* topic config ``leader.replication.throttled.replicas``: every replica BEFORE the move, ``partition:broker``;
* topic config ``follower.replication.throttled.replicas``: destinations that were not replicas;
* broker configs ``leader.replication.throttled.rate`` and ``follower.replication.throttled.rate``
  on every broker that is a replica before or after the move.
Entries are sorted by partition then broker. A reorder-only batch sets nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kafka_rebalance.cluster.admin import FOLLOWER_RATE, FOLLOWER_REPLICAS, LEADER_RATE, LEADER_REPLICAS
from kafka_rebalance.planner.steps import Step


def batch_throttles(steps: Iterable[Step], rate: int) -> dict[str, Any]:
    leader: dict[str, set[tuple[int, int]]] = {}
    follower: dict[str, set[tuple[int, int]]] = {}
    brokers: set[int] = set()
    for s in steps:
        if s.reorder:
            continue
        lead = leader.setdefault(s.topic, set())
        for b in s.before:
            lead.add((s.partition, b))
        dests = [b for b in s.after if b not in s.before]
        if dests:
            fol = follower.setdefault(s.topic, set())
            for b in dests:
                fol.add((s.partition, b))
        brokers.update(s.before)
        brokers.update(s.after)
    topics: dict[str, dict[str, str]] = {}
    for topic in sorted(leader):
        entry = {LEADER_REPLICAS: ",".join(f"{p}:{b}" for p, b in sorted(leader[topic]))}
        if topic in follower:
            entry[FOLLOWER_REPLICAS] = ",".join(f"{p}:{b}" for p, b in sorted(follower[topic]))
        topics[topic] = entry
    value = str(rate)
    return {
        "rate_bytes_per_sec": rate,
        "brokers": {str(b): {FOLLOWER_RATE: value, LEADER_RATE: value} for b in sorted(brokers)},
        "topics": topics,
    }
