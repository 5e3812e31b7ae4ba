"""When a run must plan: a selected goal the snapshot does not meet, an operator's request included."""

from __future__ import annotations

from kafka_rebalance.options import PlanOptions
from kafka_rebalance.orchestration.plan_decision import plan_decision
from kafka_rebalance.snapshot import snapshot_from_dict

PLACEMENT = ("goal placement not met (brokers 3): no movable replica on a dead or decommissioned broker, every "
             "partition at its target replication factor")


def cluster(partitions: list[tuple[str, int, list[int], int]], sizes: dict[tuple[str, int], int] | None = None):
    """Brokers 0..3; partitions as (topic, partition, replicas, leader)."""
    sizes = sizes or {}
    return snapshot_from_dict({
        "cluster_id": "c", "brokers": [{"id": b} for b in range(4)],
        "partitions": [{"topic": t, "partition": p, "replicas": r, "leader": leader, "isr": r if leader >= 0 else [],
                        "size_bytes": sizes.get((t, p), 0)}
                       for t, p, r, leader in partitions],
    })  # fmt: skip


BALANCED = cluster([("orders", 0, [0, 1], 0), ("orders", 1, [1, 2], 1), ("orders", 2, [2, 3], 2), ("orders", 3, [3, 0], 3)])


def opts(**kw: object) -> PlanOptions:
    return PlanOptions(threshold_percentage=10.0, **kw)  # type: ignore[arg-type]


def test_balanced_and_nothing_asked_does_not_plan() -> None:
    decision = plan_decision(BALANCED, opts())
    assert (decision.plan, decision.reasons) == (False, ())
    # every goal judged, in the registry's order, and met
    assert [(c.name, c.reached) for c in decision.checks] == [
        ("placement", True), ("rack-safety", True), ("disk-capacity", True), ("replica-count", True), ("bytes", True),
        ("preferred-leader", True), ("leader-imbalance", True)]


def test_each_unmet_goal_is_a_reason_naming_its_brokers() -> None:
    # Counts 0:3, 1:3, 2:2, 3:0 against 2..2 (8 replicas / 4); first replicas 0:2 (orders-0, orders-3), 1:1, 2:1,
    # 3:0 against 1..1; bytes 0:20, 1:20, 2:20, 3:0 (orders-3 is empty) against 15 +-1.5: every broker off.
    # Broker 1 leads orders-3, whose first replica is 0: broker 0 leads 1 of its 2.
    snap = cluster([("orders", 0, [0, 1], 0), ("orders", 1, [1, 2], 1), ("orders", 2, [2, 0], 2), ("orders", 3, [0, 1], 1)],
                   {("orders", 0): 10, ("orders", 1): 10, ("orders", 2): 10, ("orders", 3): 0})
    decision = plan_decision(snap, opts())
    by_goal = {c.name: c for c in decision.checks}
    assert by_goal["replica-count"].offenders == (0, 1, 3)
    assert by_goal["bytes"].offenders == (0, 1, 2, 3)
    assert by_goal["preferred-leader"].offenders == (0, 3)
    assert by_goal["leader-imbalance"].offenders == (0,)  # 1 of 2 not led: 50 % > 10 %
    assert decision.reasons[0].startswith("goal replica-count not met (brokers 0, 1, 3): every eligible broker's replica")
    assert [r.split(" not met")[0] for r in decision.reasons] == [
        "goal replica-count", "goal bytes", "goal preferred-leader", "goal leader-imbalance"]


def test_left_out_goals_do_not_start_a_plan() -> None:
    snap = cluster([("orders", 0, [0, 1], 0), ("orders", 1, [1, 2], 1), ("orders", 2, [2, 0], 2), ("orders", 3, [0, 1], 0)])
    # counts 0:3, 1:3, 3:0 off; first replicas 0:2, 3:0 off; every first replica leads; no bytes at all
    assert [c.name for c in plan_decision(snap, opts()).checks if not c.reached] == ["replica-count", "preferred-leader"]
    assert plan_decision(snap, opts(goals=("bytes", "leader-imbalance"))).plan is False


def test_broker_to_decommission_still_holding_replicas_plans_on_a_balanced_cluster() -> None:
    decision = plan_decision(BALANCED, opts(decommission_brokers=(3,)))
    assert decision.plan is True
    assert decision.reasons == (PLACEMENT,)


def test_already_empty_broker_to_decommission_does_not_plan() -> None:
    emptied = cluster([("orders", 0, [0, 1], 0), ("orders", 1, [1, 2], 1), ("orders", 2, [2, 0], 2)])
    assert plan_decision(emptied, opts(decommission_brokers=(3,))).plan is False


def test_replicas_no_plan_can_move_do_not_start_one() -> None:
    """Broker 3 holds only an excluded topic's replica and a leaderless partition's: planning would change nothing."""
    snap = cluster([("orders", 0, [0, 1], 0), ("audit", 0, [3, 0], 3), ("orders", 1, [3, 2], -1)])
    assert plan_decision(snap, opts(decommission_brokers=(3,), exclude_topics=("audit",))).plan is False
    assert plan_decision(snap, opts(decommission_brokers=(3,))).reasons == (PLACEMENT,)


def test_unknown_broker_to_decommission_plans_so_the_planner_refuses_it_loudly() -> None:
    assert plan_decision(BALANCED, opts(decommission_brokers=(9,))).reasons == (
        "broker 9 to decommission is not in the cluster",)


def test_replication_factor_request() -> None:
    assert plan_decision(BALANCED, opts(replication_factor=2)).plan is False
    decision = plan_decision(BALANCED, opts(replication_factor=3))
    assert decision.reasons[0].startswith("goal placement not met: ")
    assert [c.value for c in decision.checks if c.name == "placement"] == [4]  # 4 partitions at RF 2
