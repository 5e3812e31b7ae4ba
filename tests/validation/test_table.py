"""The typed row table behind every GX suite (validation/table.py), without GX."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from kafka_rebalance.validation.table import Table


def test_rows_of_different_kinds_share_one_typed_table_with_nulls_elsewhere() -> None:
    t = Table("plan", declared=("byte_target",))
    t.add("move", "t-0", topic="t", partition=0, replicas=[1, 2], in_snapshot=True, throttle_rate=5)
    t.add("batch", "batch 1", batch="001", broker_moves=3)
    frame = t.to_pandas()
    # in COLUMN_TYPES' order, whatever order the rows name them in
    assert list(frame.columns) == ["row", "kind", "where", "topic", "partition", "replicas", "batch", "in_snapshot",
                                   "broker_moves", "throttle_rate", "byte_target"]
    assert {c: str(frame[c].dtype) for c in frame.columns} == {
        "row": "Int64", "kind": "object", "where": "object", "topic": "object", "partition": "Int64", "replicas": "object",
        "in_snapshot": "boolean", "batch": "object", "throttle_rate": "float64", "broker_moves": "Int64",
        "byte_target": "float64",
    }
    assert frame["row"].tolist() == [0, 1] and frame["kind"].tolist() == ["move", "batch"]
    assert frame["topic"].tolist() == ["t", None] and frame["replicas"].tolist() == [[1, 2], None]
    assert frame["partition"].tolist()[0] == 0 and frame["partition"].isna().tolist() == [False, True]
    assert frame["in_snapshot"].isna().tolist() == [False, True] and bool(frame["in_snapshot"][0]) is True
    assert frame["throttle_rate"][0] == 5.0 and math.isnan(frame["throttle_rate"][1])
    assert frame["broker_moves"].isna().tolist() == [True, False] and frame["broker_moves"][1] == 3
    assert frame["byte_target"].isna().all()  # declared without a row: all null, but present


def test_an_empty_table_still_has_its_key_columns() -> None:
    frame = Table("snapshot").to_pandas()
    assert list(frame.columns) == ["row", "kind", "where"] and len(frame) == 0
    assert isinstance(frame, pd.DataFrame)


def test_an_undeclared_column_is_refused_rather_than_silently_null() -> None:
    with pytest.raises(KeyError, match=r"undeclared row column\(s\): \['replica', 'toppic'\]"):
        Table("plan").add("move", "t-0", toppic="t", replica=1)


def test_the_spark_schema_follows_the_columns() -> None:
    t = Table("plan")
    t.add("move", "t-0", replicas=[1], size_bytes=5)
    assert t.spark_schema() == "`row` bigint, `kind` string, `where` string, `replicas` array<bigint>, `size_bytes` double"
