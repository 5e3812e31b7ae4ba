"""Whether a run must plan: a selected goal is not met by the cluster as it is.

The goals decide (planner/goals, through ``planner.judge.snapshot_checks``): the Spark
analysis computes the fleet's figures and its own "balanced" flag for the fleet view, but
"needs a plan?" is each goal's own check on the snapshot, with the run's options. An
operator's request is a goal's target like any other: brokers to empty and a replication
factor are the placement goal's, so they plan even on a perfectly balanced cluster, and
replicas no plan can move (excluded topics, leaderless partitions) never start one. A
request the planner would refuse (a broker that is not in the cluster) also plans, so the
planner's error reaches the operator instead of the run ending quietly as "balanced".
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_rebalance.options import PlanOptions
from kafka_rebalance.planner.goals.view import GoalCheck
from kafka_rebalance.snapshot import Snapshot


@dataclass(frozen=True)
class PlanDecision:
    plan: bool
    reasons: tuple[str, ...]  # why a plan is needed; empty when it is not
    checks: tuple[GoalCheck, ...] = ()  # every selected goal's verdict on the snapshot


def reason(check: GoalCheck) -> str:
    """One line for an operator: which goal, its rule, and where it is broken."""
    where = f" (brokers {', '.join(map(str, check.offenders))})" if check.offenders else ""
    return f"goal {check.name} not met{where}: {check.target}"


def plan_decision(snapshot: Snapshot, options: PlanOptions) -> PlanDecision:
    """Plan when a selected goal is not met by the snapshot, or a request names a broker it lacks."""
    from kafka_rebalance.planner.judge import snapshot_checks

    known = set(snapshot.broker_ids)
    reasons = [f"broker {b} to decommission is not in the cluster" for b in options.decommission_brokers if b not in known]
    if reasons:
        return PlanDecision(True, tuple(reasons))
    checks = tuple(snapshot_checks(snapshot, options))
    reasons = [reason(c) for c in checks if not c.reached]
    return PlanDecision(bool(reasons), tuple(reasons), checks)
