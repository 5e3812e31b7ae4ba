"""When a run must plan: unbalanced, or an operator's request the cluster does not satisfy yet."""

from __future__ import annotations

from kafka_rebalance.orchestration.plan_decision import plan_decision
from kafka_rebalance.snapshot import snapshot_from_dict


def cluster(partitions: list[tuple[str, int, list[int], int]]):
    """Brokers 0..3; partitions as (topic, partition, replicas, leader)."""
    return snapshot_from_dict({
        "cluster_id": "c", "brokers": [{"id": b} for b in range(4)],
        "partitions": [{"topic": t, "partition": p, "replicas": r, "leader": leader, "isr": r if leader >= 0 else []}
                       for t, p, r, leader in partitions],
    })  # fmt: skip


BALANCED = cluster([("orders", 0, [0, 1], 0), ("orders", 1, [1, 2], 1), ("orders", 2, [2, 3], 2), ("orders", 3, [3, 0], 3)])


def test_balanced_and_nothing_asked_does_not_plan() -> None:
    decision = plan_decision(BALANCED, balanced=True)
    assert (decision.plan, decision.reasons) == (False, ())


def test_unbalanced_plans() -> None:
    assert plan_decision(BALANCED, balanced=False).reasons == ("the analysis finds the cluster unbalanced",)


def test_broker_to_decommission_still_holding_replicas_plans_on_a_balanced_cluster() -> None:
    decision = plan_decision(BALANCED, balanced=True, decommission_brokers=[3])
    assert decision.plan is True
    assert decision.reasons == ("broker 3 to decommission still holds 2 replica(s)",)


def test_already_empty_broker_to_decommission_does_not_plan() -> None:
    emptied = cluster([("orders", 0, [0, 1], 0), ("orders", 1, [1, 2], 1), ("orders", 2, [2, 0], 2)])
    assert plan_decision(emptied, balanced=True, decommission_brokers=[3]).plan is False


def test_replicas_no_plan_can_move_do_not_start_one() -> None:
    """Broker 3 holds only an excluded topic's replica and a leaderless partition's: planning would change nothing."""
    snap = cluster([("orders", 0, [0, 1], 0), ("audit", 0, [3, 0], 3), ("orders", 1, [3, 2], -1)])
    assert plan_decision(snap, balanced=True, decommission_brokers=[3], exclude_topics=["audit"]).plan is False
    assert plan_decision(snap, balanced=True, decommission_brokers=[3]).reasons == (
        "broker 3 to decommission still holds 1 replica(s)",)


def test_unknown_broker_to_decommission_plans_so_the_planner_refuses_it_loudly() -> None:
    assert plan_decision(BALANCED, balanced=True, decommission_brokers=[9]).reasons == (
        "broker 9 to decommission is not in the cluster",)


def test_replication_factor_request() -> None:
    assert plan_decision(BALANCED, balanced=True, replication_factor=2).plan is False
    assert plan_decision(BALANCED, balanced=True, replication_factor=3).reasons == (
        "4 partition(s) do not have replication factor 3",)


def test_every_reason_is_given() -> None:
    decision = plan_decision(BALANCED, balanced=False, decommission_brokers=[2, 3])
    assert decision.reasons == ("the analysis finds the cluster unbalanced", "broker 2 to decommission still holds 2 replica(s)",
                                "broker 3 to decommission still holds 2 replica(s)")  # fmt: skip
