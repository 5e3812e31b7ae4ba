"""The snapshot format: strict loading with located messages, JSON <-> Parquet equivalence."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_rebalance.errors import SnapshotError
from kafka_rebalance.snapshot import (
    Broker,
    Partition,
    Snapshot,
    load_snapshot,
    snapshot_files,
    snapshot_from_dict,
    validate_partitions,
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
        (lambda r: r.update(cluster_id=""), "cluster_id: must be a non-empty string, got ''"),
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


# --------------------------------------------------------------------------- the partition rows, both paths

INT32_MAX, INT64_MAX = 2**31 - 1, 2**63 - 1
BROKERS = {1, 2, 3}
_ids = st.sampled_from([1, 2, 3, 4, -1, 0])
_row = st.fixed_dictionaries({
    "topic": st.sampled_from(["t", "u", "", "a b", "..", "x" * 250]),
    "partition": st.sampled_from([0, 1, INT32_MAX, INT32_MAX + 1, -1]),
    "replicas": st.lists(_ids, max_size=4),
    "leader": st.one_of(st.none(), _ids, st.just(-2), st.just(INT32_MAX + 1)),
    "isr": st.one_of(st.none(), st.lists(_ids, max_size=4)),
    "size_bytes": st.one_of(st.none(), st.sampled_from([0, 1, INT64_MAX, INT64_MAX + 1, -1])),
    "bytes_in_per_sec": st.one_of(st.none(), st.sampled_from([0.0, 1.5, -0.5, float("inf"), float("nan")])),
    "offline_replicas": st.one_of(st.none(), st.lists(_ids, max_size=2)),
})


@settings(max_examples=300, deadline=None)
@given(st.lists(_row, min_size=1, max_size=6))
def test_the_parquet_fast_path_accepts_and_refuses_exactly_what_the_detailed_checks_do(rows: list[dict]) -> None:
    # A Parquet file with our schema takes the fast path (typed=True); JSON always takes the detailed one.
    # Both must give the same partitions and the same problems, row for row.
    columns = {k: [r[k] for r in rows] for k in rows[0]}
    numbers = [10 + i for i in range(len(rows))]
    fast: list[str] = []
    detailed: list[str] = []
    assert validate_partitions(columns, BROKERS, fast, numbers, typed=True) == \
        validate_partitions(columns, BROKERS, detailed, numbers, typed=False)
    assert fast == detailed


def _one(**row) -> tuple[list, list[str]]:
    base = {"topic": "t", "partition": 0, "replicas": [1, 2], "leader": 1, "isr": [1, 2], "size_bytes": None,
            "bytes_in_per_sec": None, "offline_replicas": None}
    columns = {k: [v] for k, v in {**base, **row}.items()}
    problems: list[str] = []
    return validate_partitions(columns, BROKERS, problems, [7], typed=True), problems


@pytest.mark.parametrize(
    "row",
    [{"partition": 0}, {"partition": INT32_MAX}, {"size_bytes": 0}, {"size_bytes": INT64_MAX},
     {"bytes_in_per_sec": 0.0}, {"leader": -1}, {"leader": None}, {"isr": []}, {"isr": None},
     {"offline_replicas": [2]}, {"offline_replicas": []}],
)
def test_the_limits_of_a_partition_row_are_accepted(row: dict) -> None:
    parts, problems = _one(**row)
    assert problems == [] and len(parts) == 1
    assert parts[0].leader == (-1 if row.get("leader", 1) in (None, -1) else 1)


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ({"partition": INT32_MAX + 1}, f"partitions[7] t: partition must be an integer 0..{INT32_MAX}, got {INT32_MAX + 1}"),
        ({"partition": -1}, f"partitions[7] t: partition must be an integer 0..{INT32_MAX}, got -1"),
        ({"size_bytes": -1}, f"partitions[7] t-0: size_bytes must be an integer 0..{INT64_MAX}, got -1"),
        ({"size_bytes": INT64_MAX + 1}, f"partitions[7] t-0: size_bytes must be an integer 0..{INT64_MAX}, got {INT64_MAX + 1}"),
        ({"bytes_in_per_sec": float("inf")}, "partitions[7] t-0: bytes_in_per_sec must be a finite non-negative number, got Infinity"),
        ({"bytes_in_per_sec": -0.5}, "partitions[7] t-0: bytes_in_per_sec must be a finite non-negative number, got -0.5"),
        ({"leader": -2}, "partitions[7] t-0: leader must be a broker id or -1, got -2"),
        ({"leader": 3}, "partitions[7] t-0: leader 3 is not among replicas [1, 2]"),
        ({"isr": [1, 1]}, "partitions[7] t-0: isr [1, 1] repeats a broker"),
        ({"isr": [3]}, "partitions[7] t-0: isr [3] is not a subset of replicas [1, 2] (3 not a replica)"),
        ({"replicas": [1, 1], "isr": [1]}, "partitions[7] t-0: replicas [1, 1] repeat broker 1"),
        ({"replicas": [], "leader": -1, "isr": []}, "partitions[7] t-0: replicas is empty; every partition needs at least one replica"),
        ({"replicas": [1, 9], "isr": [1]}, "partitions[7] t-0: replica 9 is not a known broker"),
        ({"offline_replicas": [3]}, "partitions[7] t-0: offline_replicas [3] are not all replicas"),
        ({"topic": ""}, 'partitions[7]: topic must be a non-empty string, got ""'),
    ],
)
def test_each_bad_partition_row_is_named_with_its_row_in_the_file(row: dict, problem: str) -> None:
    parts, problems = _one(**row)
    assert parts == [] and problems == [problem]


def test_a_duplicate_partition_names_the_row_it_repeats() -> None:
    columns = {"topic": ["t", "t"], "partition": [0, 0], "replicas": [[1], [2]], "leader": [1, 2], "isr": [[1], [2]]}
    for typed in (True, False):
        problems: list[str] = []
        parts = validate_partitions(columns, BROKERS, problems, [4, 9], typed=typed)
        assert [p.replicas for p in parts] == [(1,)]
        assert problems == ["partitions[9] t-0: duplicate partition (also partitions[4])"]


# --------------------------------------------------------------------------- the header, exactly


THRESHOLD = "leader.imbalance.per.broker.percentage"


def _header(**raw) -> list[str]:
    """The problems of a one-broker snapshot with ``raw`` over its header, in the order they are found."""
    doc = {"cluster_id": "c", "brokers": [{"id": 1}], "partitions": [], **raw}
    try:
        snapshot_from_dict(doc, "s.json")
    except SnapshotError as exc:
        return exc.problems
    return []


@pytest.mark.parametrize(
    ("raw", "problems"),
    [
        ({"cluster_id": "  "}, ["cluster_id: '  ' has characters outside [a-zA-Z0-9._-]"]),
        ({"cluster_id": "prod\n$(rm -rf ~)"}, ["cluster_id: 'prod\\n$(rm -rf ~)' has characters outside [a-zA-Z0-9._-]"]),
        ({"cluster_id": ".."}, ["cluster_id: cannot be \".\" or \"..\", got '..'"]),
        ({"cluster_id": "c" * 250}, [f"cluster_id: is 250 characters, Kafka allows at most 249: {'c' * 40!r}..."]),
        ({"cluster_id": 7}, ["cluster_id: must be a non-empty string, got 7"]),
        ({"controller": None}, ["controller: must be one of kraft, zookeeper, got null"]),
        ({"captured_at": 20261125}, ["captured_at: must be an ISO-8601 string, got 20261125"]),
        ({"topics": ["t"]}, ['topics: must be an object of topic name to {"configs": {...}}, got list']),
        ({"topics": {"a b": {}}}, ['topics: topic name "a b" has characters outside [a-zA-Z0-9._-]']),
        ({"topics": {"t": 5}}, ['topics.t: must be an object like {"configs": {...}}']),
        ({"topics": {"t": {"configs": {"x": [1]}}}}, ["topics.t.configs.x: config values must be strings, got [1]"]),
        ({"configs": ["x"]}, ["configs: must be an object of config name to value, got list"]),
        ({"configs": {"a": None}}, ["configs.a: config values must be strings, got null"]),
        ({"configs": {THRESHOLD: "101"}}, [f'configs.{THRESHOLD}: must be an integer percentage 0..100, got "101"']),
        ({"configs": {THRESHOLD: "-1"}}, [f'configs.{THRESHOLD}: must be an integer percentage 0..100, got "-1"']),
        ({"brokers": None}, ["brokers: missing (list the cluster's brokers, [] for an empty cluster)"]),
        ({"brokers": {"id": 1}}, ["brokers: must be a list, got dict"]),
        ({"brokers": [1]}, ["brokers[0]: must be an object with an 'id', got 1"]),
        ({"brokers": [{"id": -1}]}, ["brokers[0]: id must be a broker id 0..2147483647, got -1"]),
        ({"brokers": [{"id": 2**31}]}, ["brokers[0]: id must be a broker id 0..2147483647, got 2147483648"]),
        ({"brokers": [{"id": 1, "rack": ""}]}, ['brokers[0] broker 1: rack must be a non-empty string or null, got ""']),
        ({"brokers": [{"id": 1, "alive": "yes"}]}, ['brokers[0] broker 1: alive must be true or false, got "yes"']),
        ({"brokers": [{"id": 1, "configs": 5}]}, ["brokers[0].configs: must be an object of config name to value, got int"]),
        ({"partitions": None}, ["partitions: missing (use [] for a cluster without topics)"]),
        ({"partitions": {}}, ["partitions: must be a list, got dict"]),
        ({"partitions": ["t-0"]}, ['partitions[0]: must be an object, got "t-0"']),
        ({"partitions": [{"topic": "t", "partition": 0}]}, ["partitions[0]: missing field 'replicas'"]),
        ({"partitions": [{"partition": 0, "replicas": [1]}]}, ["partitions[0]: missing field 'topic'"]),
    ],
)
def test_each_header_problem_is_named_exactly(raw: dict, problems: list[str]) -> None:
    assert _header(**raw) == problems


def test_the_header_limits_and_conversions() -> None:
    snap = snapshot_from_dict({
        "cluster_id": "c", "controller": "zookeeper", "captured_at": "2026-11-25T00:00:00Z",
        "configs": {THRESHOLD: "100", "auto.leader.rebalance.enable": True, "x": 10},
        "topics": {"t": None, "u": {"configs": {"retention.ms": 5}}},
        "brokers": [{"id": 2**31 - 1, "rack": "r"}, {"id": 0, "rack": "r", "alive": False, "configs": {"a": False}}],
        "partitions": [{"topic": "t", "partition": 0, "replicas": [0]}],
    }, "s.json")
    assert (snap.cluster_id, snap.controller, snap.captured_at) == ("c", "zookeeper", "2026-11-25T00:00:00Z")
    assert snap.configs == {THRESHOLD: "100", "auto.leader.rebalance.enable": "true", "x": "10"}
    assert snap.topics == {"t": {"configs": {}}, "u": {"configs": {"retention.ms": "5"}}}
    assert [(b.id, b.rack, b.alive, b.configs) for b in snap.brokers] == [(0, "r", False, {"a": "false"}),
                                                                          (2**31 - 1, "r", True, {})]
    assert snap.partitions[0].leader == -1 and snap.partitions[0].isr == ()
    assert _header(configs={THRESHOLD: "0"}) == [] and _header(brokers=[]) == [] and _header(controller="kraft") == []


def test_every_bad_row_and_broker_is_reported_and_numbered_as_in_the_file() -> None:
    doc = {
        "cluster_id": "c",
        "brokers": [{"id": 1, "rack": ""}, {"id": 2, "alive": 1}, {"id": 1}, {"id": 3, "rack": 5}],
        "partitions": [
            {"topic": "t", "partition": 0},  # missing replicas: reported once, its row number kept by the others
            "junk",
            {"topic": "t", "partition": 1, "replicas": "1", "leader": 1},
            {"topic": "t", "partition": 2, "replicas": [1], "isr": [1, "2"]},
            {"topic": "t", "partition": 3, "replicas": [1], "leader": 2},
            {"topic": "", "partition": 4, "replicas": [1]},
            {"topic": "a b", "partition": 5, "replicas": [1]},
            {"topic": "t", "partition": 6, "replicas": [1], "offline_replicas": [1, "x"]},
            {"topic": "t", "partition": 7, "replicas": [1], "leader": 1},
        ],
    }
    with pytest.raises(SnapshotError) as err:
        snapshot_from_dict(doc, "s.json")
    assert err.value.problems == [
        'brokers[0] broker 1: rack must be a non-empty string or null, got ""',
        "brokers[1] broker 2: alive must be true or false, got 1",
        "brokers[2]: duplicate broker id 1 (also brokers[0])",
        "brokers[3] broker 3: rack must be a non-empty string or null, got 5",
        "partitions[0]: missing field 'replicas'",
        'partitions[1]: must be an object, got "junk"',
        'partitions[2] t-1: replicas must be a list of broker ids, got "1"',
        'partitions[3] t-2: isr must be a list of broker ids, got [1, "2"]',
        "partitions[4] t-3: leader 2 is not among replicas [1]",
        'partitions[5]: topic must be a non-empty string, got ""',
        'partitions[6].topic: topic name "a b" has characters outside [a-zA-Z0-9._-]',
        'partitions[7] t-6: offline_replicas must be a list of broker ids, got [1, "x"]',
    ]


def test_a_long_list_of_brokers_without_a_rack_is_cut_at_ten() -> None:
    brokers = [{"id": 0, "rack": "r"}] + [{"id": i} for i in range(1, 13)]
    assert _header(brokers=brokers) == [
        "brokers: some brokers have a rack and some do not (no rack: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ... (12 in all)); "
        "Kafka's rack-aware placement needs all or none"]
    exactly_ten = [{"id": 0, "rack": "r"}] + [{"id": i} for i in range(1, 11)]
    assert _header(brokers=exactly_ten) == [
        "brokers: some brokers have a rack and some do not (no rack: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10); "
        "Kafka's rack-aware placement needs all or none"]


def test_a_snapshot_that_is_not_an_object_names_its_source() -> None:
    with pytest.raises(SnapshotError) as err:
        snapshot_from_dict([], "s.json")
    assert str(err.value) == "s.json: invalid snapshot (1 problem(s)): top level must be a JSON object, got list"


# --------------------------------------------------------------------------- Parquet column kinds


@pytest.mark.parametrize(("actual", "expected", "ok"), [
    ("int64", "int32", True), ("int8", "int32", True), ("uint16", "int32", True),      # any integer width
    ("int32", "float64", True), ("float32", "float64", True),                          # integers widen to floats
    ("float64", "int32", False), ("string", "int32", False), ("bool", "int32", False),
    ("large_string", "string", True), ("dictionary", "string", True), ("int32", "string", False),
    ("list<int64>", "list<int32>", True), ("large_list<int16>", "list<int32>", True),
    ("list<string>", "list<int32>", False), ("list<float64>", "list<int32>", False), ("int32", "list<int32>", False),
    ("timestamp", "timestamp", True), ("date32", "timestamp", False),
])
def test_parquet_columns_of_the_same_kind_are_accepted(actual: str, expected: str, ok: bool) -> None:
    import pyarrow as pa

    from kafka_rebalance.snapshot.files import _compatible

    types = {"int64": pa.int64(), "int32": pa.int32(), "int8": pa.int8(), "uint16": pa.uint16(), "float64": pa.float64(),
             "float32": pa.float32(), "string": pa.string(), "bool": pa.bool_(), "large_string": pa.large_string(),
             "dictionary": pa.dictionary(pa.int32(), pa.string()), "list<int64>": pa.list_(pa.int64()),
             "list<int32>": pa.list_(pa.int32()), "large_list<int16>": pa.large_list(pa.int16()),
             "list<string>": pa.list_(pa.string()), "list<float64>": pa.list_(pa.float64()),
             "timestamp": pa.timestamp("ms"), "date32": pa.date32()}
    assert _compatible(types[actual], types[expected]) is ok


def test_a_snapshot_that_cannot_be_written_is_one_error_naming_the_file() -> None:
    from kafka_rebalance.errors import RebalanceError
    from tests.support.clusters import part, snapshot

    snap = snapshot([0], [part("t", 0, [0])])
    with pytest.raises(RebalanceError, match=r"^/sys/kafka-rebalance\.json: cannot write snapshot \(Permission denied\)$"):
        write_snapshot(snap, "/sys/kafka-rebalance.json")
    # pyarrow's own errors carry no strerror: their message is quoted instead
    with pytest.raises(RebalanceError, match=r"^/sys/kafka-rebalance\.parquet: cannot write snapshot \(.*Permission denied.*\)$"):
        write_snapshot(snap, "/sys/kafka-rebalance.parquet")


# --------------------------------------------------------------------------- the file layer, message by message


def _problem(path: Path, problem: str) -> str:
    return f"{path}: invalid snapshot (1 problem(s)): {problem}"


def _small() -> Snapshot:
    from tests.support.clusters import part, snapshot

    return snapshot([0, 1], [part("t", 0, [0, 1]), part("t", 1, [1, 0])])


def test_missing_files_and_empty_directories_are_named(tmp_path: Path) -> None:
    for call in (load_snapshot, snapshot_files):
        with pytest.raises(SnapshotError) as err:
            call(tmp_path / "gone.json")
        assert str(err.value) == _problem(tmp_path / "gone.json", "file does not exist")
    with pytest.raises(SnapshotError) as err:
        snapshot_files(tmp_path)
    assert str(err.value) == _problem(tmp_path, "directory holds no snapshot files (*.json, *.parquet)")
    (tmp_path / "b.parquet").write_bytes(b"x")
    (tmp_path / "a.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("")
    assert snapshot_files(tmp_path) == [tmp_path / "a.json", tmp_path / "b.parquet"]
    assert snapshot_files(tmp_path / "a.json") == [tmp_path / "a.json"]


def test_written_files_are_laid_out_as_documented(tmp_path: Path) -> None:
    snap = _small()
    out = write_snapshot(snap, tmp_path / "deep" / "er" / "s.json")  # parents are created
    text = out.read_text(encoding="utf-8")
    assert text == json.dumps(snap.to_dict(), indent=1) + "\n"
    pq_path = write_snapshot(snap, tmp_path / "deep" / "s.parquet")
    meta = pq.read_schema(pq_path).metadata[b"kafka_rebalance.snapshot"]
    assert meta == json.dumps({"format_version": 1, **snap.header_dict()}, sort_keys=True).encode()
    assert pq.ParquetFile(pq_path).metadata.row_group(0).column(0).compression == "ZSTD"


def _parquet(tmp_path: Path, drop: str | None = None, meta: bytes | None = None, retype: tuple[str, Any] | None = None) -> Path:
    from kafka_rebalance.snapshot.files import partition_table, write_parquet

    table = partition_table(_small().partitions)
    if drop:
        table = table.drop_columns([drop])
    if retype:
        name, typ = retype
        table = table.set_column(table.column_names.index(name), name, table.column(name).cast(typ))
    path = tmp_path / "s.parquet"
    write_parquet(table, _small().header_dict(), path)
    if meta is not None:
        t = pq.read_table(path)
        pq.write_table(t.replace_schema_metadata({b"kafka_rebalance.snapshot": meta}), path)
    return path


@pytest.mark.parametrize(("kind", "problem"), [
    ("drop", "Parquet partition rows lack column(s) isr"),
    ("not-utf8", "metadata kafka_rebalance.snapshot: not UTF-8 text"),
    ("not-object", "metadata kafka_rebalance.snapshot: must be a JSON object, got list"),
    ("retype", "column leader is string, expected int32"),
])
def test_each_parquet_problem_is_named_with_the_file(tmp_path: Path, kind: str, problem: str) -> None:
    import pyarrow as pa

    path = {"drop": lambda: _parquet(tmp_path, drop="isr"),
            "not-utf8": lambda: _parquet(tmp_path, meta=b"\xff\xfe"),
            "not-object": lambda: _parquet(tmp_path, meta=b"[1]"),
            "retype": lambda: _parquet(tmp_path, retype=("leader", pa.string()))}[kind]()
    with pytest.raises(SnapshotError) as err:
        load_snapshot(path)
    assert str(err.value) == _problem(path, problem)


def test_a_damaged_parquet_body_is_one_problem_naming_the_file(tmp_path: Path) -> None:
    path = _parquet(tmp_path)
    data = bytearray(path.read_bytes())
    data[8:200] = b"\0" * 192  # the column chunks, not the footer
    path.write_bytes(bytes(data))
    with pytest.raises(SnapshotError) as err:
        load_snapshot(path)
    assert str(err.value).startswith(f"{path}: invalid snapshot (1 problem(s)): unreadable Parquet: ")
    assert "\n" not in str(err.value)


# --------------------------------------------------------------------------- the model's dict forms and fingerprint


def _model_snapshot() -> Snapshot:
    # Configs given out of order, one partition with an offline replica and one without sizes.
    return Snapshot(
        cluster_id="c", captured_at="T", controller="kraft", configs={"z": "1", "y": "2"},
        brokers=(Broker(1, "r1", True, {"b": "2", "a": "1"}), Broker(2, None, False)),
        partitions=(Partition("t", 0, (1, 2), 1, (1,), 5, 1.5, (2,)), Partition("t", 1, (2, 1), -1, ())),
        topics={"t": {"configs": {"k": "v"}}},
    )  # fmt: skip


def test_the_dict_form_names_every_field_and_sorts_configs() -> None:
    assert _model_snapshot().to_dict() == {
        "cluster_id": "c", "captured_at": "T", "controller": "kraft", "configs": {"y": "2", "z": "1"},
        "brokers": [{"id": 1, "rack": "r1", "alive": True, "configs": {"a": "1", "b": "2"}},
                    {"id": 2, "rack": None, "alive": False, "configs": {}}],
        "topics": {"t": {"configs": {"k": "v"}}},
        "partitions": [
            {"topic": "t", "partition": 0, "replicas": [1, 2], "leader": 1, "isr": [1], "size_bytes": 5,
             "bytes_in_per_sec": 1.5, "offline_replicas": [2]},
            # no offline replica: the key is left out
            {"topic": "t", "partition": 1, "replicas": [2, 1], "leader": -1, "isr": [], "size_bytes": None,
             "bytes_in_per_sec": None},
        ],
    }  # fmt: skip


def test_the_fingerprint_is_the_sha256_of_the_documented_canonical_json() -> None:
    # The header with every key sorted and no spaces, then the rows as one compact array of
    # [topic, partition, replicas, leader, isr, size_bytes, bytes_in_per_sec, offline_replicas].
    header = ('{"brokers":[{"alive":true,"configs":{"a":"1","b":"2"},"id":1,"rack":"r1"},'
              '{"alive":false,"configs":{},"id":2,"rack":null}],"captured_at":"T","cluster_id":"c",'
              '"configs":{"y":"2","z":"1"},"controller":"kraft","topics":{"t":{"configs":{"k":"v"}}}}')
    rows = '[["t",0,[1,2],1,[1],5,1.5,[2]],["t",1,[2,1],-1,[],null,null,[]]]'  # fmt: skip
    assert _model_snapshot().fingerprint() == hashlib.sha256((header + rows).encode()).hexdigest()


def test_an_unknown_broker_is_a_key_error_naming_it() -> None:
    snap = _model_snapshot()
    assert snap.broker(2).alive is False
    with pytest.raises(KeyError) as err:
        snap.broker(9)
    assert err.value.args == (9,)


JBOD = mutate(lambda r: (
    r.update(rate_window_seconds=60.0),
    r["brokers"][0].update(log_dirs=[{"path": "/d1", "total_bytes": 1000, "usable_bytes": 400}, {"path": "/d2"}]),
    r["brokers"][1].update(log_dirs=[{"path": "/d1", "total_bytes": 3000, "usable_bytes": 2000}]),
    r["partitions"][0].update(log_dirs=["/d1", "/d2", None]),
))  # fmt: skip


def test_log_dirs_and_the_rate_window_load_and_survive_json_and_parquet(tmp_path: Path) -> None:
    snap = snapshot_from_dict(JBOD)
    assert snap.rate_window_seconds == 60.0
    b0, b1, b2 = snap.brokers
    assert [(d.path, d.total_bytes, d.usable_bytes) for d in b0.log_dirs] == [("/d1", 1000, 400), ("/d2", None, None)]
    # A broker's capacity is known only when every one of its disks reports its size.
    assert (b0.capacity_bytes, b1.capacity_bytes, b2.capacity_bytes) == (None, 3000, None)
    assert b1.usable_bytes == 2000 and b2.log_dirs == ()
    orders1 = next(p for p in snap.partitions if p.name == "orders-1")
    assert orders1.log_dirs == ("/d1", "/d2", None) and snap.partitions[0].log_dirs == ()
    write_snapshot(snap, tmp_path / "s.json")
    write_snapshot(snap, tmp_path / "s.parquet")
    assert load_snapshot(tmp_path / "s.json") == load_snapshot(tmp_path / "s.parquet") == snap
    assert pq.read_table(tmp_path / "s.parquet").column("log_dirs").to_pylist() == [None, None, ["/d1", "/d2", None]]
    # Each new field is part of the fingerprint; a snapshot without them keeps its old one (test above).
    for change in (lambda r: r.update(rate_window_seconds=30),
                   lambda r: r["brokers"][1]["log_dirs"][0].update(usable_bytes=1999),
                   lambda r: r["partitions"][0].update(log_dirs=["/d2", "/d2", None])):
        raw = copy.deepcopy(JBOD)
        change(raw)
        assert snapshot_from_dict(raw).fingerprint() != snap.fingerprint()


def test_a_snapshot_without_log_dirs_writes_no_log_dirs_column(tmp_path: Path) -> None:
    write_snapshot(snapshot_from_dict(GOOD), tmp_path / "s.parquet")
    assert "log_dirs" not in pq.read_table(tmp_path / "s.parquet").column_names
    assert "rate_window_seconds" not in snapshot_from_dict(GOOD).to_dict()


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda r: r.update(rate_window_seconds=0), "rate_window_seconds: must be a positive number of seconds or absent, got 0"),
        (lambda r: r.update(rate_window_seconds="60"), 'rate_window_seconds: must be a positive number of seconds or absent, got "60"'),
        (lambda r: r["brokers"][1].update(log_dirs={"path": "/d"}),
         'brokers[1] broker 1: log_dirs must be a list of {"path": ...}, got {"path": "/d"}'),
        (lambda r: r["brokers"][1].update(log_dirs=[{"total_bytes": 5}]),
         'brokers[1] broker 1: log_dirs[0] must be an object with a non-empty \'path\', got {"total_bytes": 5}'),
        (lambda r: r["brokers"][1].update(log_dirs=[{"path": "/d", "total_bytes": -1}]),
         "brokers[1] broker 1: log_dirs[0].total_bytes must be an integer 0..9223372036854775807 or absent, got -1"),
        (lambda r: r["brokers"][1].update(log_dirs=[{"path": "/d", "total_bytes": 5, "usable_bytes": 6}]),
         "brokers[1] broker 1: log_dirs[0]: usable_bytes 6 is more than total_bytes 5"),
        (lambda r: r["brokers"][1].update(log_dirs=[{"path": "/d"}, {"path": "/d"}]), "brokers[1] broker 1: log_dirs repeat /d"),
        (lambda r: r["partitions"][0].update(log_dirs=["/d"]),
         'partitions[0] orders-1: log_dirs must list one log dir (or null) per replica [1, 2, 0], got ["/d"]'),
        (lambda r: r["partitions"][0].update(log_dirs=["/d", "", None]),
         'partitions[0] orders-1: log_dirs must list one log dir (or null) per replica [1, 2, 0], got ["/d", "", null]'),
    ],
    ids=["zero-window", "string-window", "dirs-not-list", "dir-without-path", "negative-total", "usable-over-total",
         "repeated-dir", "short-replica-dirs", "empty-replica-dir"],
)  # fmt: skip
def test_each_bad_log_dir_or_rate_window_is_named(change, expected: str) -> None:
    assert expected in problems_of(mutate(change))


TRAFFIC = mutate(lambda r: (
    r.update(rate_window_seconds=30.0, metrics={"source": "prometheus", "url": "http://p:9090", "bytes_out": "prometheus"}),
    r["partitions"][0].update(bytes_out_per_sec=7.25, bytes_in_method="prometheus-topic-split-by-offsets",
                              bytes_out_method="prometheus-topic-split-by-offsets"),
    r["partitions"][1].update(bytes_in_method="prometheus-topic-split-evenly", size_method="prometheus-partition"),
))  # fmt: skip


def test_traffic_figures_and_their_methods_load_and_survive_json_and_parquet(tmp_path: Path) -> None:
    from kafka_rebalance.snapshot import MetricMethod, MetricsSource, MetricsSourceKind

    snap = snapshot_from_dict(TRAFFIC)
    assert snap.metrics_source == MetricsSource(MetricsSourceKind.PROMETHEUS, "prometheus", "http://p:9090")
    parts = {p.name: p for p in snap.partitions}
    assert (parts["orders-1"].bytes_out_per_sec, parts["orders-1"].bytes_in_method, parts["orders-1"].bytes_out_method,
            parts["orders-1"].size_method) == (7.25, MetricMethod.PROMETHEUS_TOPIC_BY_OFFSETS,
                                               MetricMethod.PROMETHEUS_TOPIC_BY_OFFSETS, None)
    assert parts["orders-0"].size_method is MetricMethod.PROMETHEUS_PARTITION
    assert parts["audit-0"].bytes_out_per_sec is None and parts["audit-0"].bytes_in_method is None
    write_snapshot(snap, tmp_path / "s.json")
    write_snapshot(snap, tmp_path / "s.parquet")
    assert load_snapshot(tmp_path / "s.json") == load_snapshot(tmp_path / "s.parquet") == snap
    raw = json.loads((tmp_path / "s.json").read_text())
    assert raw["metrics"] == {"source": "prometheus", "url": "http://p:9090", "bytes_out": "prometheus"}
    # Written only where set, like log_dirs: audit-0 has none of them.
    assert [sorted(set(p) - {"topic", "partition", "replicas", "leader", "isr", "size_bytes", "bytes_in_per_sec"})
            for p in raw["partitions"]] == [[], ["bytes_in_method", "size_method"],
                                            ["bytes_in_method", "bytes_out_method", "bytes_out_per_sec"]]
    assert pq.read_table(tmp_path / "s.parquet").column("bytes_out_per_sec").to_pylist() == [None, None, 7.25]
    for change in (lambda r: r["partitions"][0].update(bytes_out_per_sec=7.5),
                   lambda r: r["partitions"][1].update(bytes_in_method="prometheus-topic-split-by-offsets"),
                   lambda r: r["metrics"].update(bytes_out="not exported")):
        changed = copy.deepcopy(TRAFFIC)
        change(changed)
        assert snapshot_from_dict(changed).fingerprint() != snap.fingerprint()


def test_a_snapshot_without_traffic_methods_writes_no_such_columns(tmp_path: Path) -> None:
    write_snapshot(snapshot_from_dict(GOOD), tmp_path / "s.parquet")
    names = pq.read_table(tmp_path / "s.parquet").column_names
    assert not {"bytes_out_per_sec", "bytes_in_method", "bytes_out_method", "size_method"} & set(names)
    assert "metrics" not in snapshot_from_dict(GOOD).to_dict()


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda r: r["partitions"][0].update(bytes_out_per_sec=-1),
         "partitions[0] orders-1: bytes_out_per_sec must be a finite non-negative number, got -1"),
        (lambda r: r["partitions"][0].update(bytes_in_method="guessed"),
         'partitions[0] orders-1: bytes_in_method must be one of sampled-log-ends, prometheus-topic-split-by-offsets, '
         'prometheus-topic-split-evenly, prometheus-partition, sampled-group-offsets, got "guessed"'),
        (lambda r: r.update(metrics={"source": "graphite"}),
         'metrics: must be an object with a source (sampling, prometheus), got {"source": "graphite"}'),
        (lambda r: r.update(metrics={"source": "sampling"}),
         "metrics.bytes_out: must say how consumer traffic was measured, got null"),
        (lambda r: r.update(metrics={"source": "prometheus", "url": 5, "bytes_out": "prometheus"}),
         "metrics.url: must be a non-empty string or absent, got 5"),
    ],
    ids=["negative-out", "unknown-method", "unknown-source", "no-bytes-out", "url-not-string"],
)  # fmt: skip
def test_each_bad_traffic_field_is_named(change, expected: str) -> None:
    assert expected in problems_of(mutate(change))


def test_the_parquet_fast_path_names_a_bad_method(tmp_path: Path) -> None:
    import pyarrow as pa

    snap = snapshot_from_dict(TRAFFIC)
    write_snapshot(snap, tmp_path / "s.parquet")
    table = pq.read_table(tmp_path / "s.parquet")
    i = table.column_names.index("bytes_in_method")
    table = table.set_column(i, table.schema.field(i), pa.array(["made-up", None, None], pa.string()))
    pq.write_table(table, tmp_path / "s.parquet")
    with pytest.raises(SnapshotError) as err:
        load_snapshot(tmp_path / "s.parquet")
    assert err.value.problems == ["partitions[0] audit-0: bytes_in_method must be one of sampled-log-ends, "
                                  "prometheus-topic-split-by-offsets, prometheus-topic-split-evenly, "
                                  'prometheus-partition, sampled-group-offsets, got "made-up"']
