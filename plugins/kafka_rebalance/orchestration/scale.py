"""Scale events: brokers that joined a cluster and hold (almost) nothing, and brokers marked for removal that still
hold replicas.

Kafka places no existing replica on a new broker, so after a scale-out the new broker sits empty until someone
moves data onto it; a broker marked for removal (``decommission_brokers`` in the cluster's clusters.yaml entry,
the same option the trigger form and ``plan --decommission-brokers`` set) must be emptied before it can be shut
down. Either is a change an operator made on purpose, so a scheduled run plans for it and, on a cluster with an
approval policy, goes on to execute what the policy (or a human) approves. An imbalance that merely drifted in
stays a dry run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kafka_rebalance.metrics import broker_loads
from kafka_rebalance.snapshot import Snapshot

# A broker holding at most this fraction of its share of replicas is taken for a newly added one. A broker that
# merely lost a few replicas to a plan or a topic deletion is well above it; one that joined holds none, or the
# odd partition of a topic created since it joined. A quarter keeps both apart on clusters of 3 to 1000 brokers.
ADDED_BELOW_SHARE = 0.25


@dataclass(frozen=True, slots=True)
class ScaleEvent:
    """What changed in the cluster's membership, by broker id (both empty: no scale event)."""

    added: tuple[int, ...]  # alive, not marked for removal, holding at most ADDED_BELOW_SHARE of their share
    leaving: tuple[int, ...]  # marked for removal and still holding at least one replica

    @property
    def any(self) -> bool:
        return bool(self.added or self.leaving)

    def describe(self) -> str:
        parts = []
        if self.added:
            parts.append(f"broker(s) {', '.join(map(str, self.added))} added (holding almost no replicas)")
        if self.leaving:
            parts.append(f"broker(s) {', '.join(map(str, self.leaving))} marked for removal still hold replicas")
        return "; ".join(parts) or "no scale event"

    def to_dict(self) -> dict[str, list[int]]:
        return {"added": list(self.added), "leaving": list(self.leaving)}


def scale_event(snapshot: Snapshot, marked_for_removal: Iterable[int] = ()) -> ScaleEvent:
    """The brokers ``snapshot`` shows added, and those of ``marked_for_removal`` that still hold replicas."""
    marked = set(marked_for_removal)
    loads = broker_loads(snapshot)
    leaving = tuple(b.broker_id for b in loads if b.broker_id in marked and b.replicas > 0)
    eligible = [b for b in loads if b.alive and b.broker_id not in marked]
    total = sum(b.replicas for b in loads)
    if not eligible or total == 0:
        return ScaleEvent((), leaving)
    share = total / len(eligible)
    # A broker cannot be "below its share" when the share is under one replica (more brokers than replicas).
    added = tuple(b.broker_id for b in eligible if share >= 1 and b.replicas <= ADDED_BELOW_SHARE * share)
    return ScaleEvent(added, leaving)
