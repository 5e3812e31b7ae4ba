"""summary.json's verdicts are the goals' (planner/goals), judged on the analysis' own figures: no Spark
needed, the per-broker rows are written out as the Spark job returns them."""

from __future__ import annotations

from typing import Any

from kafka_rebalance.analysis.load import ClusterInfo
from kafka_rebalance.analysis.summary import cluster_summary
from kafka_rebalance.snapshot import Broker


def row(broker: int, replicas: int, preferred: int, not_led: int, size: int, alive: bool = True) -> dict[str, Any]:
    ratio = not_led / preferred if preferred else None
    return {"broker_id": broker, "alive": alive, "replicas": replicas, "leaders": preferred - not_led,
            "preferred_partitions": preferred, "preferred_not_led": not_led, "size_bytes": size,
            "imbalance_ratio": ratio, "exceeds_threshold": bool(preferred and not_led * 100 > 10 * preferred)}


def info(n: int) -> ClusterInfo:
    return ClusterInfo("c", "test", "1", tuple(Broker(b) for b in range(n)), 10.0, "default")


def verdicts(entry: dict[str, Any]) -> dict[str, bool]:
    return {g["name"]: g["reached"] for g in entry["goals"]}


def test_an_even_cluster_meets_every_goal() -> None:
    entry = cluster_summary(info(3), [row(0, 2, 1, 0, 100), row(1, 2, 1, 0, 100), row(2, 2, 1, 0, 100)], {"partitions": 3})
    assert entry["balanced"] is True and all(verdicts(entry).values())


def test_each_figure_off_fails_its_own_goal() -> None:
    # counts 3/2/1 against 2..2; bytes 100/100/160 against 120 +-12: broker 0 and 1 (20 off) and 2 (40 off)
    entry = cluster_summary(info(3), [row(0, 3, 1, 0, 100), row(1, 2, 1, 0, 100), row(2, 1, 1, 0, 160)], {})
    assert verdicts(entry) == {"placement": True, "rack-safety": True, "disk-capacity": True, "replica-count": False,
                               "bytes": False,
                               "preferred-leader": True, "leader-imbalance": True}
    assert entry["replica_spread"]["balanced"] is False and entry["byte_spread"]["balanced"] is False
    assert {g["name"]: g["offenders"] for g in entry["goals"]}["replica-count"] == [0, 2]
    assert entry["balanced"] is False


def test_a_dead_broker_holding_replicas_and_rack_violations_are_not_balanced() -> None:
    rows = [row(0, 2, 1, 0, 100), row(1, 2, 1, 0, 100), row(2, 1, 1, 1, 50, alive=False)]
    entry = cluster_summary(info(3), rows, {"rack_violations": 2})
    got = verdicts(entry)
    assert (got["placement"], got["rack-safety"]) == (False, False)
    # the dead broker's own ratio (1 of 1 not led) is reported, and judged by no goal: it cannot be elected
    assert entry["brokers_over_threshold"] == [2] and got["leader-imbalance"] is True
    assert entry["balanced"] is False
