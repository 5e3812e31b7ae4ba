"""Fleets, JSON vs Parquet, the plain-Python oracle, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from kafka_rebalance.analysis.job import analyze, run
from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.generate import ClusterSpec, generate
from kafka_rebalance.metrics import broker_loads
from kafka_rebalance.snapshot import load_snapshot, partition_schema, write_parquet
from tests.support.clusters import (
    brokers,
    cluster,
    dead_broker_cluster,
    fleet_member,
    long_replicas_cluster,
    part,
    rack_cluster,
    thresholds_cluster,
    write,
)

pytestmark = pytest.mark.spark


def test_threshold_per_cluster_of_a_fleet(spark, tmp_path: Path) -> None:
    write(thresholds_cluster("a-default"), tmp_path / "a.json")
    write(thresholds_cluster("b-cluster-25", {"leader.imbalance.per.broker.percentage": "25"}), tmp_path / "b.parquet")
    write(thresholds_cluster("c-cluster-0", {"leader.imbalance.per.broker.percentage": "0"}), tmp_path / "c.json")
    (tmp_path / "notes.txt").write_text("not a snapshot")

    plain = {c["cluster_id"]: c for c in analyze(spark, tmp_path).summary["clusters"]}
    assert list(plain) == ["a-default", "b-cluster-25", "c-cluster-0"]
    assert (plain["a-default"]["threshold_percentage"], plain["a-default"]["threshold_source"]) == (10.0, "default")
    assert plain["a-default"]["brokers_over_threshold"] == [1, 2]
    assert (plain["b-cluster-25"]["threshold_percentage"], plain["b-cluster-25"]["threshold_source"]) == (25.0, "cluster")
    assert plain["b-cluster-25"]["brokers_over_threshold"] == []
    assert plain["c-cluster-0"]["brokers_over_threshold"] == [0, 1, 2]

    result = analyze(spark, tmp_path, threshold_setting=24)
    with_setting = {c["cluster_id"]: c for c in result.summary["clusters"]}
    assert (with_setting["a-default"]["threshold_percentage"], with_setting["a-default"]["threshold_source"]) == (24.0, "setting")
    assert with_setting["a-default"]["brokers_over_threshold"] == [2]
    assert with_setting["b-cluster-25"]["threshold_source"] == "cluster"
    assert with_setting["b-cluster-25"]["brokers_over_threshold"] == []
    # broker rows carry their own cluster's threshold, in (cluster_id, broker_id) order
    keys = [(r["cluster_id"], r["broker_id"], r["threshold_percentage"]) for r in result.broker_rows]
    assert keys == [(c, b, t) for c, t in (("a-default", 24.0), ("b-cluster-25", 25.0), ("c-cluster-0", 0.0)) for b in range(4)]


def test_json_and_parquet_give_the_same_result(spark, tmp_path: Path) -> None:
    for raw in (thresholds_cluster(), dead_broker_cluster(), rack_cluster()):
        write(raw, tmp_path / "json" / f"{raw['cluster_id']}.json")
        write(raw, tmp_path / "parquet" / f"{raw['cluster_id']}.parquet")
    from_json = run(spark, tmp_path / "json", tmp_path / "out-json")
    from_parquet = run(spark, tmp_path / "parquet", tmp_path / "out-parquet")
    assert from_json.broker_rows == from_parquet.broker_rows
    assert (tmp_path / "out-json/broker_metrics.parquet").read_bytes() == (tmp_path / "out-parquet/broker_metrics.parquet").read_bytes()

    def without_source(summary: dict) -> list[dict]:
        return [{k: v for k, v in c.items() if k != "source"} for c in summary["clusters"]]

    assert without_source(from_json.summary) == without_source(from_parquet.summary)
    assert len(from_json.summary["clusters"]) == 3


def test_outputs_are_deterministic_and_documented_shape(spark, tmp_path: Path) -> None:
    write(dead_broker_cluster(), tmp_path / "in" / "d.json")
    run(spark, tmp_path / "in", tmp_path / "o1")
    run(spark, tmp_path / "in", tmp_path / "o2")
    for name in ("broker_metrics.parquet", "summary.json"):
        assert (tmp_path / "o1" / name).read_bytes() == (tmp_path / "o2" / name).read_bytes()
    assert sorted(p.name for p in (tmp_path / "o1").iterdir()) == ["broker_metrics.parquet", "summary.json"]
    summary = json.loads((tmp_path / "o1/summary.json").read_text())
    assert list(summary) == ["clusters"] and summary["clusters"][0]["cluster_id"] == "dead-broker"
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "o1/broker_metrics.parquet")
    for col in ("cluster_id", "broker_id", "preferred_partitions", "preferred_not_led", "imbalance_ratio",
                "threshold_percentage", "exceeds_threshold", "replicas", "leaders", "size_bytes"):
        assert col in table.column_names
    assert table.column("broker_id").to_pylist() == [0, 1, 2]


def test_matches_plain_python_oracle_on_generated_fleet(spark, tmp_path: Path) -> None:
    specs = [
        ClusterSpec(cluster_id="gen-a", brokers=9, racks=3, topics=7, partitions=400, replica_skew=1.0,
                    leader_skew=0.3, new_brokers=2, dead_brokers=1, under_replicated=0.1, seed=1),
        ClusterSpec(cluster_id="gen-b", brokers=5, racks=0, topics=3, partitions=150, replication_factor=2,
                    leader_skew=0.05, threshold_percentage=20, seed=2),
    ]
    for spec in specs:
        generate(spec, tmp_path / f"{spec.cluster_id}.parquet")
    generate(ClusterSpec(cluster_id="gen-c", brokers=4, racks=2, partitions=60, leader_skew=0.5, seed=3),
             tmp_path / "gen-c.json")
    result = analyze(spark, tmp_path)
    for cid in ("gen-a", "gen-b", "gen-c"):
        suffix = ".json" if cid == "gen-c" else ".parquet"
        snap = load_snapshot(tmp_path / f"{cid}{suffix}")
        oracle = broker_loads(snap)
        rows = [r for r in result.broker_rows if r["cluster_id"] == cid]
        assert [r["broker_id"] for r in rows] == [b.broker_id for b in oracle]
        for row, ref in zip(rows, oracle):
            got = {k: row[k] for k in ("alive", "rack", "replicas", "leaders", "preferred_partitions",
                                       "preferred_not_led", "size_bytes", "imbalance_ratio")}
            want = {"alive": ref.alive, "rack": ref.rack, "replicas": ref.replicas, "leaders": ref.leaders,
                    "preferred_partitions": ref.preferred_partitions, "preferred_not_led": ref.preferred_not_led,
                    "size_bytes": ref.size_bytes, "imbalance_ratio": ref.imbalance_ratio}
            assert got == want, (cid, row["broker_id"])
            assert row["leader_bytes_in_per_sec"] == pytest.approx(ref.leader_bytes_in_per_sec, abs=1e-6)
        summary = next(c for c in result.summary["clusters"] if c["cluster_id"] == cid)
        # independent plain-Python counts of the partition-level figures
        live = {b.id for b in snap.brokers if b.alive}
        rack = snap.rack_of
        racks = len({r for r in rack.values() if r})
        assert summary["partitions"] == len(snap.partitions)
        assert summary["non_preferred_leaders"] == sum(p.leader != p.replicas[0] for p in snap.partitions)
        assert summary["electable_non_preferred_leaders"] == sum(
            p.leader != p.replicas[0] and p.replicas[0] in p.isr and p.replicas[0] in live for p in snap.partitions)
        assert summary["under_replicated_partitions"] == sum(len(p.isr) < len(p.replicas) for p in snap.partitions)
        assert summary["rack_violations"] == sum(
            racks >= len(p.replicas) and len({rack[r] for r in p.replicas}) < len(p.replicas) for p in snap.partitions)
    gen_b = next(c for c in result.summary["clusters"] if c["cluster_id"] == "gen-b")
    assert (gen_b["threshold_percentage"], gen_b["threshold_source"]) == (20.0, "cluster")


def test_one_spark_job_over_100_clusters_flags_exactly_the_unbalanced(spark, tmp_path: Path) -> None:
    for i in range(100):
        write(fleet_member(i), tmp_path / f"c{i:03d}.parquet")
    sc = spark.sparkContext
    sc.setJobGroup("fleet-100", "the 100-cluster fleet")
    try:
        result = analyze(spark, tmp_path)
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    # Three Spark jobs for the whole fleet, whatever its size: the analysis (its two aggregations,
    # each over one scan of all 100 files, then the result stage), and one broadcast of the
    # settings table (one row per cluster) for each aggregation.
    jobs = sc.statusTracker().getJobIdsForGroup("fleet-100")
    assert len(jobs) == 3
    assert sorted(len(sc.statusTracker().getJobInfo(j).stageIds) for j in jobs) == [1, 1, 3]
    clusters = {c["cluster_id"]: c for c in result.summary["clusters"]}
    assert len(clusters) == 100
    assert {cid for cid, c in clusters.items() if not c["balanced"]} == {f"fleet-{i:03d}" for i in range(100) if i % 4 < 2}
    for i in range(100):
        c = clusters[f"fleet-{i:03d}"]
        assert c["brokers_over_threshold"] == ([i % 6] if i % 4 == 0 else [])
        assert c["byte_spread"]["balanced"] is (i % 4 != 1)
        assert (c["partitions"], c["replicas"], c["rack_violations"]) == (60, 180, 0)


def test_long_replica_lists_and_odd_file_names(spark, tmp_path: Path) -> None:
    path = write(long_replicas_cluster(), tmp_path / "a weird [name] %41+x.parquet")
    write(dead_broker_cluster("json-one"), tmp_path / "b.json")
    result = analyze(spark, tmp_path)
    long = next(c for c in result.summary["clusters"] if c["cluster_id"] == "long")
    assert (long["source"], long["racks"], long["partitions"], long["replicas"]) == (str(path), 5, 5, 23)
    assert long["rack_violations"] == 2
    assert [r["replicas"] for r in result.broker_rows if r["cluster_id"] == "long"] == [4, 4, 4, 4, 3, 4]


# --------------------------------------------------------------------------- bad input


def _bad_parquet(path: Path, rows: list[dict], header_brokers: list[dict]) -> Path:
    table = pa.Table.from_pylist([{"offline_replicas": [], "size_bytes": None, "bytes_in_per_sec": None, **r} for r in rows],
                                 schema=partition_schema())
    header = {"cluster_id": "bad", "controller": "kraft", "configs": {}, "brokers": header_brokers, "topics": {}}
    write_parquet(table, header, path)
    return path


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"topic": "t", "partition": 0, "replicas": [0, 9], "leader": 0, "isr": [0]}, "broker(s) 9 that are not"),
        ({"topic": "t", "partition": 0, "replicas": [0, 1], "leader": 2, "isr": [0]}, "leader is neither -1 nor"),
        ({"topic": "t", "partition": 0, "replicas": [0, 0], "leader": 0, "isr": [0]}, "distinct broker ids"),
        ({"topic": "t", "partition": 0, "replicas": [], "leader": -1, "isr": []}, "non-empty list"),
        ({"topic": "t", "partition": 0, "replicas": [0, 1], "leader": 0, "isr": [2]}, "isr must be distinct brokers"),
        ({"topic": "t", "partition": 0, "replicas": [0, 1], "leader": 0, "isr": [0, 0]}, "isr must be distinct brokers"),
        ({"topic": "t", "partition": 0, "replicas": [0, 1], "leader": 0, "isr": [1, None]}, "isr must be distinct brokers"),
        ({"topic": "t", "partition": 0, "replicas": [0, 1, 2], "leader": 0, "isr": [0, 1, 2, 1]}, "isr must be distinct"),
        ({"topic": "t", "partition": -1, "replicas": [0], "leader": 0, "isr": [0]}, "non-negative integer"),
        ({"topic": "t", "partition": 0, "replicas": [0], "leader": 0, "isr": [0], "size_bytes": -5}, "size_bytes"),
    ],
)
def test_bad_parquet_rows_name_file_and_partition(spark, tmp_path: Path, row: dict, expected: str) -> None:
    good = {"topic": "ok", "partition": 0, "replicas": [1, 0], "leader": 1, "isr": [1, 0]}
    path = _bad_parquet(tmp_path / "bad.parquet", [good, row], brokers(0, 1, 2))
    with pytest.raises(RebalanceError) as err:
        analyze(spark, path)
    message = str(err.value)
    assert str(path) in message and expected in message
    if "not" not in expected:
        assert "t-" in message  # an example partition is named


def test_isr_in_any_order_and_subset_is_well_formed(spark, tmp_path: Path) -> None:
    rows = [
        {"topic": "t", "partition": 0, "replicas": [0, 1, 2], "leader": 2, "isr": [2, 0, 1]},
        {"topic": "t", "partition": 1, "replicas": [1, 2, 0], "leader": 0, "isr": [0]},
        {"topic": "t", "partition": 2, "replicas": [2, 0, 1], "leader": -1, "isr": []},
    ]
    result = analyze(spark, _bad_parquet(tmp_path / "ok.parquet", rows, brokers(0, 1, 2)))
    (cluster,) = result.summary["clusters"]
    assert (cluster["under_replicated_partitions"], cluster["offline_partitions"]) == (2, 1)


def test_duplicate_parquet_partition(spark, tmp_path: Path) -> None:
    row = {"topic": "t", "partition": 3, "replicas": [0], "leader": 0, "isr": [0]}
    path = _bad_parquet(tmp_path / "dup.parquet", [row, row], brokers(0))
    with pytest.raises(RebalanceError, match=r"dup\.parquet.*duplicate partition rows: t-3 \(2 times\)"):
        analyze(spark, path)


def test_input_errors_before_spark_runs(spark, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    plain = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"topic": ["t"]}), plain)
    with pytest.raises(RebalanceError, match=r"plain\.parquet.*no 'kafka_rebalance.snapshot' metadata"):
        analyze(spark, plain)

    no_isr = tmp_path / "noisr.parquet"
    write_parquet(pa.table({"topic": ["t"], "partition": [0], "replicas": [[0]], "leader": [0]}),
                  {"cluster_id": "x", "brokers": [{"id": 0}]}, no_isr)
    with pytest.raises(RebalanceError, match=r"noisr\.parquet.*column 'isr': missing"):
        analyze(spark, no_isr)

    bad_json = tmp_path / "j" / "bad.json"
    bad_json.parent.mkdir()
    bad_json.write_text(json.dumps(cluster("j", brokers(0), [part("t", 0, [0, 5], 0)])))
    with pytest.raises(RebalanceError, match=r"bad\.json.*replica 5 is not a known broker"):
        analyze(spark, bad_json.parent)

    twice = tmp_path / "twice"
    write(dead_broker_cluster("same"), twice / "a.json")
    write(rack_cluster("same"), twice / "b.parquet")
    with pytest.raises(RebalanceError, match=r"b\.parquet.*'same' is also the cluster of .*a\.json"):
        analyze(spark, twice)

    with pytest.raises(RebalanceError, match="holds no snapshot files"):
        analyze(spark, _empty_dir(tmp_path))
    with pytest.raises(RebalanceError, match=r"--threshold-percentage.*0\.\.100, got -1"):
        analyze(spark, twice, threshold_setting=-1)


def _empty_dir(tmp_path: Path) -> Path:
    d = tmp_path / "empty-dir"
    d.mkdir()
    return d


def test_value_spark_cannot_read_is_one_line_naming_the_file(spark, tmp_path: Path) -> None:
    # int64 broker ids pass the column check but overflow Spark's int: caught mid-scan.
    table = pa.table({"topic": ["t"], "partition": [0], "replicas": pa.array([[5_000_000_000]], pa.list_(pa.int64())),
                      "leader": [0], "isr": pa.array([[0]], pa.list_(pa.int32()))})
    path = tmp_path / "wide.parquet"
    write_parquet(table, {"cluster_id": "wide", "brokers": [{"id": 0}]}, path)
    with pytest.raises(RebalanceError) as err:
        analyze(spark, path)
    message = str(err.value)
    assert "wide.parquet" in message and "Spark failed reading" in message
    assert "\n" not in message and "at org.apache" not in message
