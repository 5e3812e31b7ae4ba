"""The cluster snapshot: what the pipeline knows about one cluster at one moment.

One format for every stage (gather, analyze, plan, validate, execute, verify).
JSON for hand-written and small clusters; Parquet for large ones, where each row
is one partition and the cluster-level fields (id, configs, brokers, topics) sit
in the file's key-value metadata under ``kafka_rebalance.snapshot`` so that a
snapshot stays one self-contained file and Spark can scan the partition rows
directly.

Loading is strict: every problem is reported with its location, e.g.
``partitions[17] orders-3: replica 9 is not a known broker``. Partitions are
kept sorted by (topic, partition) and brokers by id so that everything
downstream is deterministic whatever order the cluster reported them in.
"""

from __future__ import annotations

from kafka_rebalance.snapshot.files import (
    is_parquet,
    load_snapshot,
    partition_schema,
    partition_table,
    read_parquet_header,
    snapshot_files,
    write_parquet,
    write_snapshot,
)
from kafka_rebalance.snapshot.model import (
    CONTROLLERS,
    FORMAT_VERSION,
    PARQUET_META_KEY,
    SNAPSHOT_SUFFIXES,
    THRESHOLD_CONFIG,
    Broker,
    LogDir,
    MetricMethod,
    MetricsSource,
    MetricsSourceKind,
    Partition,
    Snapshot,
)
from kafka_rebalance.snapshot.parse import (
    snapshot_from_dict,
    validate_partitions,
)

__all__ = [
    "is_parquet",
    "Broker",
    "LogDir",
    "MetricMethod",
    "MetricsSource",
    "MetricsSourceKind",
    "CONTROLLERS",
    "FORMAT_VERSION",
    "PARQUET_META_KEY",
    "Partition",
    "SNAPSHOT_SUFFIXES",
    "Snapshot",
    "THRESHOLD_CONFIG",
    "load_snapshot",
    "partition_schema",
    "partition_table",
    "read_parquet_header",
    "snapshot_files",
    "snapshot_from_dict",
    "validate_partitions",
    "write_parquet",
    "write_snapshot",
]
