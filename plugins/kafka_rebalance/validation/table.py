"""One table of typed rows per suite, as pandas (GX's pandas engine) or a Spark DataFrame (its Spark engine).

A GX suite runs on one batch, so each suite gets one table whose rows have a ``kind``; columns belong to one kind
and are null on the others, and GX's column expectations skip nulls, so each expectation sees exactly its rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

# Column -> Spark SQL type; pandas dtypes follow from it (see ``to_pandas``).
COLUMN_TYPES: dict[str, str] = {
    "row": "bigint", "kind": "string", "where": "string",
    # snapshot
    "topic": "string", "partition": "bigint", "replicas": "array<bigint>", "leader": "bigint", "isr": "array<bigint>",
    "replicas_nonempty": "boolean", "replicas_distinct": "boolean", "replicas_known": "boolean",
    "leader_ok": "boolean", "isr_subset": "boolean", "size_bytes": "double", "bytes_in_per_sec": "double",
    "broker_id": "bigint",
    # plan
    "batch": "string", "replicas_before": "array<bigint>", "replica_count": "bigint", "rf_expected": "bigint",
    "in_snapshot": "boolean", "targets_eligible": "boolean", "racks_spanned": "bigint", "racks_required": "bigint",
    "moved_topic": "string", "batch_partitions": "bigint", "broker_moves": "bigint", "throttle_rate": "double",
    "throttle_field": "string", "schedule_consistent": "boolean", "schedule_problem": "string", "path": "string",
    "recorded_sha256": "string", "actual_sha256": "string",
    # projected balance
    "replicas_after": "bigint", "replica_lo": "bigint", "replica_hi": "bigint", "replicas_off_target": "bigint",
    "byte_target": "double", "preferred_after": "bigint", "leaders_after": "bigint",
    "replica_count_before": "bigint", "preferred_before": "bigint", "imbalance_ratio_after": "double",
    "size_before": "bigint", "size_after": "bigint", "byte_deviation_before": "double",
    "byte_deviation_after": "double", "byte_deviation_allowed": "double", "movable_replicas_after": "bigint",
    "disk_limit": "double", "disk_over_limit_bytes": "double", "rf_off_target_after": "bigint",
    "rack_violations_after": "bigint", "topic_spread_before": "double", "topic_spread_after": "double",
    "network_in_allowed": "double", "network_in_after": "double", "network_out_allowed": "double",
    "network_out_after": "double",
}

_PANDAS = {"bigint": "Int64", "double": "float64", "boolean": "boolean", "string": "object"}


@dataclass
class Table:
    """Rows for one suite plus the values its ``$PARAMETER`` references resolve to."""

    suite: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    parameters: dict[str, Any] = field(default_factory=dict)
    # Columns an expectation reads even when no row of their kind exists (an all-null column
    # passes; a missing one is an error in GX).
    declared: tuple[str, ...] = ()

    def add(self, kind: str, where: str, **values: Any) -> None:
        unknown = set(values) - set(COLUMN_TYPES)
        if unknown:  # a typo here would silently make an expectation see only nulls
            raise KeyError(f"undeclared row column(s): {sorted(unknown)}")
        self.rows.append({"row": len(self.rows), "kind": kind, "where": where, **values})

    @property
    def columns(self) -> list[str]:
        present = {k for r in self.rows for k in r}
        return [c for c in COLUMN_TYPES if c in present or c in ("row", "kind", "where") or c in self.declared]

    def to_pandas(self) -> pd.DataFrame:
        cols = self.columns
        data = {c: [r.get(c) for r in self.rows] for c in cols}
        frame = pd.DataFrame({c: pd.Series(data[c], dtype=_PANDAS.get(COLUMN_TYPES[c], "object")) for c in cols})
        return frame

    def spark_schema(self) -> str:
        return ", ".join(f"`{c}` {COLUMN_TYPES[c]}" for c in self.columns)

    def to_spark(self, spark: Any) -> Any:
        cols = self.columns
        tuples = [tuple(_spark_value(r.get(c), COLUMN_TYPES[c]) for c in cols) for r in self.rows]
        return spark.createDataFrame(tuples, schema=self.spark_schema())


def _spark_value(v: Any, kind: str) -> Any:
    if v is None:
        return None
    if kind == "double":
        return float(v)
    if kind.startswith("array"):
        return [int(x) for x in v]
    return v
