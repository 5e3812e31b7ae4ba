"""The `snapshot` suite: each corruption of a snapshot trips the expectation guarding against it, by name."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kafka_rebalance.validation import validate_snapshot
from tests.support.plans import small_snapshot, write_json


def _part(snap: dict[str, Any], topic: str, partition: int) -> dict[str, Any]:
    return next(p for p in snap["partitions"] if p["topic"] == topic and p["partition"] == partition)


def dup_partition(s):
    s["partitions"].append(copy.deepcopy(_part(s, "orders", 3)))


def empty_replicas(s):
    _part(s, "orders", 3).update(replicas=[], leader=-1, isr=[])


def repeated_replica(s):
    _part(s, "orders", 3).update(replicas=[1, 1], leader=1, isr=[1])


def unknown_broker(s):
    _part(s, "orders", 3).update(replicas=[1, 9], leader=1, isr=[1])


def leader_outside(s):
    _part(s, "orders", 3).update(leader=2)


def isr_outside(s):
    _part(s, "orders", 3).update(isr=[1, 0, 2])


def negative_size(s):
    _part(s, "orders", 3).update(size_bytes=-5)


def negative_rate(s):
    _part(s, "orders", 3).update(bytes_in_per_sec=-1.5)


def dup_broker(s):
    s["brokers"].append({"id": 2, "rack": "rack-a", "alive": True, "configs": {}})


CASES: list[tuple[Callable[[dict[str, Any]], None], str, str]] = [
    (dup_partition, "expect_compound_columns_to_be_unique", "orders-3: appears more than once"),
    (empty_replicas, "expect_replica_list_non_empty", "orders-3: replicas [] is empty"),
    (repeated_replica, "expect_replica_list_without_repeats", "orders-3: replicas [1, 1] repeat broker 1"),
    (unknown_broker, "expect_replicas_on_known_brokers", "orders-3: replicas [1, 9]: broker 9 is not a known broker"),
    (leader_outside, "expect_leader_among_replicas", "orders-3: leader 2 is not among replicas [1, 0]"),
    (isr_outside, "expect_isr_subset_of_replicas", "orders-3: isr [1, 0, 2] is not a subset of replicas [1, 0]"),
    (negative_size, "expect_column_values_to_be_between", "orders-3: size_bytes -5"),
    (negative_rate, "expect_column_values_to_be_between", "orders-3: bytes_in_per_sec -1.5"),
    (dup_broker, "expect_column_values_to_be_unique", "broker 2: broker id 2 is listed more than once"),
]


def test_untouched_snapshot_passes(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    write_json(path, small_snapshot())
    outcome = validate_snapshot(path)
    assert outcome.status == "passed", outcome.report()
    assert [s["suite"] for s in outcome.suites] == ["snapshot"]
    assert outcome.suites[0]["evaluated"] == 9


@pytest.mark.parametrize("corrupt, expectation, message", CASES, ids=[c[0].__name__ for c in CASES])
def test_corruption_fails_its_expectation(tmp_path: Path, corrupt, expectation: str, message: str) -> None:
    snap = small_snapshot()
    corrupt(snap)
    path = tmp_path / "s.json"
    write_json(path, snap)
    outcome = validate_snapshot(path)
    assert outcome.status == "failed"
    assert outcome.failed_expectations() == {f"snapshot.{expectation}"}
    (failure,) = outcome.failures
    assert any(message in row for row in failure.rows), failure.rows
    assert message.split(":")[0] in outcome.report()


def test_every_offending_row_is_reported(tmp_path: Path) -> None:
    """The loader stops at nothing and neither does the gate: three bad rows, three lines."""
    snap = small_snapshot()
    for i in (0, 2, 5):
        _part(snap, "orders", i)["leader"] = 3 if 3 not in _part(snap, "orders", i)["replicas"] else 9
    path = tmp_path / "s.json"
    write_json(path, snap)
    (failure,) = validate_snapshot(path).failures
    assert failure.unexpected_count == 3
    assert [r.split(":")[0] for r in failure.rows] == ["orders-0", "orders-2", "orders-5"]


def test_parquet_snapshot_rows_are_checked_raw(tmp_path: Path) -> None:
    """A Parquet snapshot is read without the strict loader, so its bad rows reach the suite."""
    import pyarrow as pa

    from kafka_rebalance.snapshot import partition_schema, write_parquet

    snap = small_snapshot()
    repeated_replica(snap)
    rows = [{**{k: None for k in partition_schema().names}, **p} for p in snap["partitions"]]
    table = pa.Table.from_pylist(rows, schema=partition_schema())
    header = {k: v for k, v in snap.items() if k != "partitions"}
    path = tmp_path / "s.parquet"
    write_parquet(table, header, path)
    outcome = validate_snapshot(path)
    assert outcome.failed_expectations() == {"snapshot.expect_replica_list_without_repeats"}
