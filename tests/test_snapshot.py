"""The snapshot format: strict loading with located messages, JSON <-> Parquet equivalence."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from kafka_rebalance.errors import SnapshotError
from kafka_rebalance.snapshot import (
    load_snapshot,
    snapshot_files,
    snapshot_from_dict,
    write_snapshot,
)

GOOD = {
    "cluster_id": "prod-eu-1",
    "captured_at": "2026-11-22T10:00:00Z",
    "controller": "zookeeper",
    "configs": {"leader.imbalance.per.broker.percentage": "10"},
    "brokers": [
        {"id": 0, "rack": "rack-a", "alive": True, "configs": {}},
        {"id": 1, "rack": "rack-b"},
        {"id": 2, "rack": "rack-c", "alive": False},
    ],
    "topics": {"orders": {"configs": {"retention.ms": "86400000"}}},
    "partitions": [
        {"topic": "orders", "partition": 1, "replicas": [1, 2, 0], "leader": 1, "isr": [1, 0],
         "size_bytes": 2048, "bytes_in_per_sec": 10.5},
        {"topic": "orders", "partition": 0, "replicas": [0, 1, 2], "leader": 0, "isr": [0, 1, 2],
         "size_bytes": 1048576, "bytes_in_per_sec": 2048.0},
        {"topic": "audit", "partition": 0, "replicas": [2], "leader": -1, "isr": []},
    ],
}  # fmt: skip


def problems_of(raw: dict) -> list[str]:
    with pytest.raises(SnapshotError) as err:
        snapshot_from_dict(raw, "snap.json")
    return err.value.problems


def mutate(fn) -> dict:
    raw = copy.deepcopy(GOOD)
    fn(raw)
    return raw


def test_good_snapshot_loads_sorted() -> None:
    snap = snapshot_from_dict(GOOD)
    assert [(p.topic, p.partition) for p in snap.partitions] == [("audit", 0), ("orders", 0), ("orders", 1)]
    assert snap.partitions[0].leader == -1 and snap.partitions[0].size_bytes is None
    assert snap.broker(2).alive is False and snap.broker(1).alive is True
    assert snap.topic_configs("orders") == {"retention.ms": "86400000"}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda r: r["partitions"].append(dict(r["partitions"][1])),
         "partitions[3] orders-0: duplicate partition (also partitions[1])"),
        (lambda r: r["partitions"][0].update(replicas=[], leader=-1, isr=[]),
         "partitions[0] orders-1: replicas is empty; every partition needs at least one replica"),
        (lambda r: r["partitions"][0].update(replicas=[1, 1, 0]),
         "partitions[0] orders-1: replicas [1, 1, 0] repeat broker 1"),
        (lambda r: r["partitions"][1].update(replicas=[0, 1, 9]),
         "partitions[1] orders-0: replica 9 is not a known broker"),
        (lambda r: r["partitions"][1].update(leader=7),
         "partitions[1] orders-0: leader 7 is not among replicas [0, 1, 2]"),
        (lambda r: r["partitions"][0].update(isr=[1, 0, 2, 5]),
         "partitions[0] orders-1: isr [1, 0, 2, 5] is not a subset of replicas [1, 2, 0] (5 not a replica)"),
        (lambda r: r["partitions"][1].update(size_bytes=-1),
         "partitions[1] orders-0: size_bytes must be an integer 0..9223372036854775807, got -1"),
        (lambda r: r["partitions"][1].update(bytes_in_per_sec=-3.0),
         "partitions[1] orders-0: bytes_in_per_sec must be a finite non-negative number, got -3.0"),
        (lambda r: r["brokers"].append({"id": 1, "rack": "rack-z"}),
         "brokers[3]: duplicate broker id 1 (also brokers[1])"),
        (lambda r: r["brokers"][1].pop("rack"),
         "brokers: some brokers have a rack and some do not (no rack: 1); Kafka's rack-aware placement needs all or none"),
        (lambda r: r.update(cluster_id=""), 'cluster_id: must be a non-empty string, got ""'),
        (lambda r: r.update(controller="kraftt"), 'controller: must be one of kraft, zookeeper, got "kraftt"'),
        (lambda r: r["configs"].update({"leader.imbalance.per.broker.percentage": "ten"}),
         'configs.leader.imbalance.per.broker.percentage: must be an integer percentage 0..100, got "ten"'),
        (lambda r: r["partitions"][2].pop("replicas"), "partitions[2]: missing field 'replicas'"),
        (lambda r: r["brokers"][0].update(id="zero"), 'brokers[0]: id must be a broker id 0..2147483647, got "zero"'),
        (lambda r: r["partitions"][1].update(partition=-2),
         "partitions[1] orders: partition must be an integer 0..2147483647, got -2"),
    ],
    ids=[
        "duplicate-partition", "empty-replicas", "duplicate-replica", "unknown-broker", "leader-not-replica",
        "isr-not-subset", "negative-size", "negative-rate", "duplicate-broker", "mixed-racks", "empty-cluster-id",
        "bad-controller", "bad-threshold", "missing-field", "bad-broker-id", "negative-partition",
    ],
)  # fmt: skip
def test_each_bad_snapshot_names_the_problem(change, expected: str) -> None:
    assert expected in problems_of(mutate(change))


def test_every_problem_is_reported_not_just_the_first() -> None:
    def two(r: dict) -> None:
        r["partitions"][0]["leader"] = 9
        r["partitions"][1]["replicas"] = [0, 1, 8]

    problems = problems_of(mutate(two))
    assert any("leader 9" in p for p in problems) and any("replica 8" in p for p in problems)
    with pytest.raises(SnapshotError, match=r"snap.json: invalid snapshot \(\d+ problem\(s\)\)"):
        snapshot_from_dict(mutate(two), "snap.json")


def test_files_that_are_not_snapshots(tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text('{"cluster_id": "x", ')
    with pytest.raises(SnapshotError, match=r"broken.json: .*not valid JSON: Expecting property name"):
        load_snapshot(bad)
    with pytest.raises(SnapshotError, match="file does not exist"):
        load_snapshot(tmp_path / "missing.json")
    with pytest.raises(SnapshotError, match="top level must be a JSON object, got list"):
        (tmp_path / "list.json").write_text("[]")
        load_snapshot(tmp_path / "list.json")


def test_json_and_parquet_hold_the_same_snapshot(tmp_path: Path) -> None:
    snap = snapshot_from_dict(GOOD)
    write_snapshot(snap, tmp_path / "s.json")
    write_snapshot(snap, tmp_path / "s.parquet")
    from_json, from_parquet = load_snapshot(tmp_path / "s.json"), load_snapshot(tmp_path / "s.parquet")
    assert from_json == from_parquet == snap
    assert from_json.fingerprint() == from_parquet.fingerprint()
    # One row per partition in the Parquet file.
    assert pq.read_table(tmp_path / "s.parquet").num_rows == 3


def test_fingerprint_changes_with_content() -> None:
    a = snapshot_from_dict(GOOD)
    b = snapshot_from_dict(mutate(lambda r: r["partitions"][1].update(leader=1)))
    assert a.fingerprint() != b.fingerprint()
    # ...but not with the order the cluster reported things in.
    c = snapshot_from_dict(mutate(lambda r: r["partitions"].reverse()))
    assert a.fingerprint() == c.fingerprint()


def test_parquet_rows_are_validated_too(tmp_path: Path) -> None:
    import pyarrow as pa

    from kafka_rebalance.snapshot import partition_schema, write_parquet

    snap = snapshot_from_dict(GOOD)
    table = pa.table(
        {"topic": ["t", "t"], "partition": [0, 0], "replicas": [[0, 5], [0, 1]], "leader": [0, 0],
         "isr": [[0], [0]], "size_bytes": [1, 1], "bytes_in_per_sec": [None, None], "offline_replicas": [[], []]},
        schema=partition_schema(),
    )  # fmt: skip
    write_parquet(table, snap.header_dict(), tmp_path / "bad.parquet")
    with pytest.raises(SnapshotError) as err:
        load_snapshot(tmp_path / "bad.parquet")
    assert "partitions[0] t-0: replica 5 is not a known broker" in err.value.problems
    assert "partitions[1] t-0: duplicate partition (also partitions[0])" in err.value.problems


def test_parquet_without_our_metadata_is_refused(tmp_path: Path) -> None:
    import pyarrow as pa

    pq.write_table(pa.table({"a": [1]}), tmp_path / "other.parquet")
    with pytest.raises(SnapshotError, match="has no 'kafka_rebalance.snapshot' metadata"):
        load_snapshot(tmp_path / "other.parquet")


def test_empty_cluster_is_a_valid_snapshot() -> None:
    snap = snapshot_from_dict({"cluster_id": "empty", "brokers": [], "partitions": []})
    assert snap.partitions == () and snap.brokers == () and snap.controller == "kraft"


def test_fleet_directory_lists_snapshot_files(tmp_path: Path) -> None:
    snap = snapshot_from_dict(GOOD)
    write_snapshot(snap, tmp_path / "b.parquet")
    write_snapshot(snap, tmp_path / "a.json")
    (tmp_path / "notes.txt").write_text("ignored")
    assert [p.name for p in snapshot_files(tmp_path)] == ["a.json", "b.parquet"]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SnapshotError, match="holds no snapshot files"):
        snapshot_files(empty)


def test_bundled_sample_is_valid(sample_snapshot_path: Path) -> None:
    snap = load_snapshot(sample_snapshot_path)
    assert snap.cluster_id == "demo-eu-1" and len(snap.brokers) == 6
    assert json.loads(sample_snapshot_path.read_text())["cluster_id"] == "demo-eu-1"


def test_parquet_with_wrong_column_types_is_refused(tmp_path: Path) -> None:
    import pyarrow as pa

    from kafka_rebalance.snapshot import write_parquet

    snap = snapshot_from_dict(GOOD)
    table = pa.table({"topic": ["t"], "partition": [0], "replicas": [["0", "1"]], "leader": [0], "isr": [[0]]})
    write_parquet(table, snap.header_dict(), tmp_path / "typed.parquet")
    with pytest.raises(SnapshotError, match=r"column replicas is list<\w+: string>, expected list<item: int32>"):
        load_snapshot(tmp_path / "typed.parquet")


def test_parquet_fast_path_still_names_bad_values(tmp_path: Path) -> None:
    import pyarrow as pa

    from kafka_rebalance.snapshot import partition_schema, write_parquet

    snap = snapshot_from_dict(GOOD)
    table = pa.table(
        {"topic": ["t", "t", "t"], "partition": [0, 1, 2], "replicas": [[0, 1], [1, 0], [2, 2]], "leader": [1, 2, 2],
         "isr": [[0, 1], [1], [2]], "size_bytes": [1, -5, 1], "bytes_in_per_sec": [float("nan"), 1.0, None],
         "offline_replicas": [[], [], []]},
        schema=partition_schema(),
    )  # fmt: skip
    write_parquet(table, snap.header_dict(), tmp_path / "bad.parquet")
    with pytest.raises(SnapshotError) as err:
        load_snapshot(tmp_path / "bad.parquet")
    assert err.value.problems == [
        "partitions[0] t-0: bytes_in_per_sec must be a finite non-negative number, got NaN",
        "partitions[1] t-1: leader 2 is not among replicas [1, 0]",
        "partitions[1] t-1: size_bytes must be an integer 0..9223372036854775807, got -5",
        "partitions[2] t-2: replicas [2, 2] repeat broker 2",
    ]


def test_isr_member_must_be_a_replica_not_just_a_known_broker(tmp_path: Path) -> None:
    # Broker 2 exists, but is not a replica of t-0: an ISR naming it is impossible.
    raw = {
        "cluster_id": "c", "brokers": [{"id": 0}, {"id": 1}, {"id": 2}],
        "partitions": [{"topic": "t", "partition": 0, "replicas": [0, 1], "leader": 0, "isr": [0, 2]}],
    }  # fmt: skip
    expected = "partitions[0] t-0: isr [0, 2] is not a subset of replicas [0, 1] (2 not a replica)"
    with pytest.raises(SnapshotError) as err:
        snapshot_from_dict(raw)
    assert err.value.problems == [expected]
    # the typed Parquet path (one cheap test per row) applies the same rule
    import pyarrow as pa

    from kafka_rebalance.snapshot import partition_schema, write_parquet

    table = pa.Table.from_pylist([{**raw["partitions"][0], "size_bytes": None, "bytes_in_per_sec": None,
                                   "offline_replicas": []}], schema=partition_schema())  # fmt: skip
    write_parquet(table, {k: v for k, v in raw.items() if k != "partitions"}, tmp_path / "s.parquet")
    with pytest.raises(SnapshotError) as err:
        load_snapshot(tmp_path / "s.parquet")
    assert err.value.problems == [expected]
