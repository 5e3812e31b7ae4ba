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
    """The configs for ``steps`` (module docstring). Every broker's entry is one dict, shared: the result is made to
    be written out (plan files, the executor's comparisons), never changed in place."""
    leader: dict[str, list[tuple[int, int]]] = {}
    follower: dict[str, list[tuple[int, int]]] = {}
    brokers: set[int] = set()
    for s in steps:
        if not s.adds and not s.removes:  # a reorder
            continue
        p, before = s.partition, s.before
        lead = leader.get(s.topic)
        if lead is None:
            lead = leader[s.topic] = []
        lead.extend([(p, b) for b in before])
        dests = [(p, b) for b in s.after if b not in before]
        if dests:
            fol = follower.get(s.topic)
            if fol is None:
                fol = follower[s.topic] = []
            fol.extend(dests)
        brokers.update(before)
        brokers.update(s.after)
    topics: dict[str, dict[str, str]] = {}
    for topic in sorted(leader):
        entry = {LEADER_REPLICAS: _entries(leader[topic])}
        if topic in follower:
            entry[FOLLOWER_REPLICAS] = _entries(follower[topic])
        topics[topic] = entry
    value = str(rate)
    both = {FOLLOWER_RATE: value, LEADER_RATE: value}
    return {"rate_bytes_per_sec": rate, "brokers": dict.fromkeys(map(str, sorted(brokers)), both), "topics": topics}


def _entries(pairs: list[tuple[int, int]]) -> str:
    """``partition:broker`` entries, sorted by partition then broker, each once."""
    return ",".join([f"{p}:{b}" for p, b in sorted(set(pairs))])
