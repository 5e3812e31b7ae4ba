"""Whether a run must plan: the cluster is unbalanced, or the operator asked for a change it does not have yet.

The Spark summary only says whether the cluster is balanced. An operator's request
(brokers to empty, a replication factor) is work even on a perfectly balanced cluster,
so the DAG's "balanced?" branch asks this function, not the summary alone. A request
the planner would refuse (a broker that is not in the cluster) also plans, so the
planner's error reaches the operator instead of the run ending quietly as "balanced".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from kafka_rebalance.snapshot import Snapshot


@dataclass(frozen=True)
class PlanDecision:
    plan: bool
    reasons: tuple[str, ...]  # why a plan is needed; empty when it is not


def plan_decision(
    snapshot: Snapshot,
    balanced: bool,
    decommission_brokers: Iterable[int] = (),
    exclude_topics: Iterable[str] = (),
    replication_factor: int | None = None,
) -> PlanDecision:
    """Plan when the analysis says unbalanced, or when a request is not yet met by the snapshot.

    Only replicas the planner may move count towards a request: those of excluded topics
    and of partitions without a leader stay where they are, so they alone never start a plan
    (it could not change them, and the run would plan again and again).
    """
    reasons: list[str] = [] if balanced else ["the analysis finds the cluster unbalanced"]
    excluded = set(exclude_topics)
    movable = [p for p in snapshot.partitions if p.topic not in excluded and p.leader >= 0]
    known = set(snapshot.broker_ids)
    leaving = sorted(set(decommission_brokers))
    held = Counter(b for p in movable for b in p.replicas if b in leaving)
    for b in leaving:
        if b not in known:
            reasons.append(f"broker {b} to decommission is not in the cluster")
        elif held[b]:
            reasons.append(f"broker {b} to decommission still holds {held[b]} replica(s)")
    if replication_factor is not None:
        other = sum(1 for p in movable if len(p.replicas) != replication_factor)
        if other:
            reasons.append(f"{other} partition(s) do not have replication factor {replication_factor}")
    return PlanDecision(bool(reasons), tuple(reasons))
