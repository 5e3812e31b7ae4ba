"""Exact, hand-computed figures on hand-built clusters (Kafka's controller rule)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_rebalance.analysis.job import analyze
from tests.support.clusters import brokers, cluster, dead_broker_cluster, part, rack_cluster, thresholds_cluster, write

pytestmark = pytest.mark.spark


def by_broker(result) -> dict[int, dict]:
    return {r["broker_id"]: r for r in result.broker_rows}


@pytest.fixture(scope="module")
def thresholds_result(spark, tmp_path_factory):
    path = write(thresholds_cluster(), tmp_path_factory.mktemp("thr") / "thresholds.json")
    return analyze(spark, path)


def test_per_broker_counts_and_ratios(thresholds_result) -> None:
    b = by_broker(thresholds_result)
    assert sorted(b) == [0, 1, 2, 3]
    assert [(b[i]["preferred_partitions"], b[i]["preferred_not_led"]) for i in range(4)] == [(10, 1), (9, 1), (4, 1), (0, 0)]
    assert b[0]["imbalance_ratio"] == 0.1
    assert b[1]["imbalance_ratio"] == 1 / 9
    assert b[2]["imbalance_ratio"] == 0.25
    assert [b[i]["replicas"] for i in range(4)] == [10, 9, 4, 23]
    assert [b[i]["leaders"] for i in range(4)] == [9, 8, 3, 2]
    assert [b[i]["size_bytes"] for i in range(4)] == [1000, 1800, 1200, 4000]
    # leader bytes-in: b0 leads 9 x 1.5, b3 leads t0-9 (1.5) and t1-8 (2.0); the offline partition counts for no one.
    assert [b[i]["leader_bytes_in_per_sec"] for i in range(4)] == [13.5, 16.0, 0.75, 3.5]
    assert [b[i]["under_replicated_partitions"] for i in range(4)] == [0, 0, 1, 1]
    # t2-3 has an empty ISR, so broker 2 could lead only 3 of its 4 after an election.
    assert [b[i]["could_lead_after_election"] for i in range(4)] == [10, 9, 3, 0]


def test_ratio_exactly_at_threshold_does_not_exceed(thresholds_result) -> None:
    b = by_broker(thresholds_result)
    assert b[0]["threshold_percentage"] == 10.0 and b[0]["threshold_source"] == "default"
    assert b[0]["exceeds_threshold"] is False  # 1/10 == 10 %: not over
    assert b[1]["exceeds_threshold"] is True
    assert b[2]["exceeds_threshold"] is True


def test_broker_without_preferred_partitions_has_null_ratio(thresholds_result) -> None:
    b3 = by_broker(thresholds_result)[3]
    assert b3["imbalance_ratio"] is None
    assert b3["exceeds_threshold"] is False


def test_partition_without_leader_counts_as_not_led(thresholds_result) -> None:
    c = thresholds_result.summary["clusters"][0]
    assert by_broker(thresholds_result)[2]["preferred_not_led"] == 1  # t2-3, leader -1
    assert c["offline_partitions"] == 1
    assert c["non_preferred_leaders"] == 3
    assert c["electable_non_preferred_leaders"] == 2  # t2-3's preferred replica is not in its ISR
    assert c["under_replicated_partitions"] == 1
    assert c["brokers_over_threshold"] == [1, 2]
    assert c["max_imbalance_ratio"] == 0.25
    assert c["partitions"] == 23 and c["replicas"] == 46
    assert c["balanced"] is False


@pytest.mark.parametrize(("setting", "over"), [(25, []), (24, [2]), (100 / 9, [2])])
def test_threshold_setting_boundaries(spark, tmp_path: Path, setting: float, over: list[int]) -> None:
    path = write(thresholds_cluster(), tmp_path / "t.json")
    c = analyze(spark, path, threshold_setting=setting).summary["clusters"][0]
    assert c["threshold_source"] == "setting"
    assert c["threshold_percentage"] == setting
    assert c["brokers_over_threshold"] == over


def test_cluster_config_wins_over_setting(spark, tmp_path: Path) -> None:
    raw = thresholds_cluster(configs={"leader.imbalance.per.broker.percentage": "25"})
    c = analyze(spark, write(raw, tmp_path / "t.parquet"), threshold_setting=5).summary["clusters"][0]
    assert (c["threshold_percentage"], c["threshold_source"]) == (25.0, "cluster")
    assert c["brokers_over_threshold"] == []  # broker 2 is at exactly 25 %


def test_dead_broker(spark, tmp_path: Path) -> None:
    result = analyze(spark, write(dead_broker_cluster(), tmp_path / "d.json"))
    b = by_broker(result)
    assert [b[i]["alive"] for i in range(3)] == [True, True, False]
    assert (b[2]["preferred_partitions"], b[2]["preferred_not_led"], b[2]["imbalance_ratio"]) == (2, 2, 1.0)
    assert b[2]["exceeds_threshold"] is True
    assert b[2]["could_lead_after_election"] == 0
    assert [b[i]["replicas"] for i in range(3)] == [2, 3, 3]
    assert [b[i]["leaders"] for i in range(3)] == [2, 2, 0]
    assert [b[i]["imbalance_ratio"] for i in range(2)] == [0.0, 0.0]
    c = result.summary["clusters"][0]
    assert (c["brokers"], c["live_brokers"], c["dead_brokers"]) == (3, 2, [2])
    assert c["under_replicated_partitions"] == 3
    assert c["electable_non_preferred_leaders"] == 0
    # Spreads count live brokers only: replicas [2, 3] are within [floor 2, ceil 3].
    assert c["replica_spread"]["ideal"] == 2.5 and c["replica_spread"]["balanced"] is True
    assert c["preferred_leader_spread"]["ideal"] == 1.0 and c["preferred_leader_spread"]["balanced"] is True
    assert c["byte_spread"]["mean"] == 60.0  # broker 0: 10+20, broker 1: 20+30+40
    assert c["balanced"] is False  # broker 2 is over the threshold


def test_rack_violations(spark, tmp_path: Path) -> None:
    c = analyze(spark, write(rack_cluster(), tmp_path / "r.parquet")).summary["clusters"][0]
    assert c["racks"] == 2
    assert c["rack_violations"] == 2


def test_no_racks_means_no_rack_violations(spark, tmp_path: Path) -> None:
    c = analyze(spark, write(dead_broker_cluster(), tmp_path / "x.json")).summary["clusters"][0]
    assert c["racks"] == 3 and c["rack_violations"] == 0


@pytest.mark.parametrize("suffix", [".json", ".parquet"])
def test_empty_cluster(spark, tmp_path: Path, suffix: str) -> None:
    result = analyze(spark, write(cluster("empty", [], []), tmp_path / f"e{suffix}"))
    assert result.broker_rows == []
    c = result.summary["clusters"][0]
    assert (c["cluster_id"], c["brokers"], c["partitions"], c["replicas"]) == ("empty", 0, 0, 0)
    assert c["brokers_over_threshold"] == [] and c["max_imbalance_ratio"] is None
    assert c["balanced"] is True


def test_brokers_without_partitions(spark, tmp_path: Path) -> None:
    result = analyze(spark, write(cluster("idle", brokers(5, 7), []), tmp_path / "i.json"))
    assert [(r["broker_id"], r["replicas"], r["imbalance_ratio"], r["exceeds_threshold"]) for r in result.broker_rows] == [
        (5, 0, None, False), (7, 0, None, False)]
    assert result.summary["clusters"][0]["balanced"] is True


def test_balanced_cluster(spark, tmp_path: Path) -> None:


    parts = [part("t", i, [i % 3, (i + 1) % 3], i % 3, size=100) for i in range(6)]
    c = analyze(spark, write(cluster("even", brokers(0, 1, 2), parts), tmp_path / "b.json")).summary["clusters"][0]
    assert c["replica_spread"]["min"] == c["replica_spread"]["max"] == 4
    assert c["byte_spread"]["deviation"] == 0.0
    assert c["non_preferred_leaders"] == 0
    assert c["balanced"] is True
