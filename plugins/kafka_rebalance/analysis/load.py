"""Snapshots into Spark DataFrames: partition rows, brokers, and per-cluster settings.

Parquet snapshots are scanned by Spark directly (their partition rows never pass
through Python); only the cluster header, which sits in the file's key-value
metadata, is read and validated on the driver. JSON snapshots are small by
construction, so they are loaded and validated strictly on the driver with
``load_snapshot`` and handed to Spark as Arrow.

Every input problem becomes a ``RebalanceError`` naming the file (and field),
before Spark runs anything.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import reduce
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_rebalance.errors import SnapshotError
from kafka_rebalance.metrics import check_threshold_setting, threshold_percentage
from kafka_rebalance.snapshot import (
    FORMAT_VERSION,
    Broker,
    Snapshot,
    load_snapshot,
    partition_table,
    read_parquet_header,
    snapshot_files,
    snapshot_from_dict,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

PARTITION_COLUMNS = (
    "cluster_id string, topic string, partition int, replicas array<int>, leader int, "
    "isr array<int>, size_bytes bigint, bytes_in_per_sec double"
)
BROKER_COLUMNS = "cluster_id string, broker_id int, rack string, alive boolean"
SETTINGS_COLUMNS = (
    "cluster_id string, threshold_percentage double, threshold_source string, rack_count int, "
    "rack_base int, rack_index array<int>, rack_by_id map<int,int>"
)
# Rack lookups index an array by (broker id - smallest id); Spark's map lookup is a linear
# scan, too slow per replica on big clusters. Ids spread wider than this fall back to the map.
DENSE_RACK_SPAN = 1_000_000

_REQUIRED = {"topic": "string", "partition": "int", "replicas": "list<int>", "leader": "int", "isr": "list<int>"}
_OPTIONAL = {"size_bytes": "int", "bytes_in_per_sec": "number"}


@dataclass(frozen=True, slots=True)
class ClusterInfo:
    """What the driver knows about one cluster before Spark reads its partitions."""

    cluster_id: str
    source: str
    controller: str
    brokers: tuple[Broker, ...]
    threshold_percentage: float
    threshold_source: str
    source_format: str = "json"

    @property
    def rack_count(self) -> int:
        return len({b.rack for b in self.brokers if b.rack is not None})


@dataclass(frozen=True)
class Fleet:
    """One or more clusters, as the analysis consumes them. ``clusters`` is sorted by cluster_id."""

    clusters: tuple[ClusterInfo, ...]
    partitions: DataFrame
    brokers: DataFrame
    settings: DataFrame

    @property
    def parquet_cluster_ids(self) -> list[str]:
        """Clusters whose partition rows Spark read unvalidated (JSON ones went through load_snapshot)."""
        return [c.cluster_id for c in self.clusters if c.source_format == "parquet"]

    def source_of(self, cluster_id: str) -> str:
        for c in self.clusters:
            if c.cluster_id == cluster_id:
                return c.source
        return cluster_id


def _is_parquet(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(4) == b"PAR1"
    except OSError as exc:
        raise SnapshotError(str(path), [f"cannot read: {exc.strerror}"]) from None


def _header_snapshot(header: Any, path: Path) -> Snapshot:
    """Validate a Parquet file's cluster header with the same rules as a JSON snapshot."""
    if not isinstance(header, dict):
        raise SnapshotError(str(path), ["kafka_rebalance.snapshot metadata must be a JSON object"])
    version = header.get("format_version")
    if version != FORMAT_VERSION:
        raise SnapshotError(
            str(path), [f"format_version: expected {FORMAT_VERSION}, got {json.dumps(version)}"]
        )
    return snapshot_from_dict({**header, "partitions": []}, str(path))


def _arrow_kind(t: Any) -> str:
    import pyarrow as pa

    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_dictionary(t):
        return "string"
    if pa.types.is_integer(t):
        return "int"
    if pa.types.is_floating(t):
        return "number"
    if (pa.types.is_list(t) or pa.types.is_large_list(t)) and pa.types.is_integer(t.value_type):
        return "list<int>"
    return str(t)


def _check_parquet_schema(path: Path) -> set[str]:
    """Fail on missing or mistyped columns here, not as a Spark stack trace later."""
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    problems = []
    for name, want in {**_REQUIRED, **_OPTIONAL}.items():
        if name not in schema.names:
            if name in _REQUIRED:
                problems.append(f"column '{name}': missing (partition rows need {', '.join(_REQUIRED)})")
            continue
        got = _arrow_kind(schema.field(name).type)
        ok = got == want or (want == "number" and got == "int")
        if not ok:
            problems.append(f"column '{name}': expected {want}, got {schema.field(name).type}")
    if problems:
        raise SnapshotError(str(path), problems)
    return set(schema.names)


def _hadoop_path(path: Path) -> str:
    # Spark treats read paths as glob patterns; a file name is a literal.
    text = str(path.resolve())
    return "".join("\\" + ch if ch in "*?[]{}\\" else ch for ch in text)


def _read_parquet_rows(spark: SparkSession, path: Path, cluster_id: str, names: set[str]) -> DataFrame:
    from pyspark.sql import functions as F

    try:
        raw = spark.read.parquet(_hadoop_path(path))
    except Exception as exc:  # AnalysisException and friends: report the file, not the JVM
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SnapshotError(str(path), [f"Spark cannot read the Parquet file: {first}"]) from None

    def col(name: str, sql_type: str):  # noqa: ANN202
        return (F.col(name) if name in names else F.lit(None)).cast(sql_type).alias(name)

    return raw.select(
        F.lit(cluster_id).alias("cluster_id"),
        col("topic", "string"),
        col("partition", "int"),
        col("replicas", "array<int>"),
        col("leader", "int"),
        col("isr", "array<int>"),
        col("size_bytes", "bigint"),
        col("bytes_in_per_sec", "double"),
    )


def _json_rows(spark: SparkSession, snapshots: Sequence[Snapshot]) -> DataFrame:
    import pyarrow as pa

    tables = []
    for snap in snapshots:
        table = partition_table(snap.partitions).drop_columns(["offline_replicas"])
        ids = pa.array([snap.cluster_id] * table.num_rows, pa.string())
        tables.append(table.add_column(0, "cluster_id", ids))
    return spark.createDataFrame(pa.concat_tables(tables), schema=PARTITION_COLUMNS)


def _settings_row(info: ClusterInfo) -> tuple[Any, ...]:
    racks = sorted({b.rack for b in info.brokers if b.rack is not None})
    rack_no = {r: i for i, r in enumerate(racks)}
    by_id = {b.id: rack_no[b.rack] for b in info.brokers if b.rack is not None}
    base = min(by_id) if by_id else 0
    span = (max(by_id) - base + 1) if by_id else 0
    if span <= DENSE_RACK_SPAN:
        dense: list[int | None] = [None] * span
        for bid, r in by_id.items():
            dense[bid - base] = r
        return (info.cluster_id, info.threshold_percentage, info.threshold_source, len(racks), base, dense, None)
    return (info.cluster_id, info.threshold_percentage, info.threshold_source, len(racks), base, None, by_id)


def load_fleet(spark: SparkSession, path: str | Path, threshold_setting: float | None = None) -> Fleet:
    """One snapshot file or a directory of them (one cluster each) as DataFrames with ``cluster_id``."""
    check_threshold_setting(threshold_setting)
    infos: list[ClusterInfo] = []
    parquet: list[tuple[Path, str, set[str]]] = []
    json_snaps: list[Snapshot] = []
    seen: dict[str, Path] = {}
    for f in snapshot_files(path):
        if _is_parquet(f):
            try:
                header = read_parquet_header(f)
            except SnapshotError:
                raise
            except Exception as exc:  # not Parquet after all, or metadata that is not JSON
                raise SnapshotError(str(f), [f"unreadable Parquet snapshot header: {exc}"]) from None
            snap = _header_snapshot(header, f)
            names = _check_parquet_schema(f)
            parquet.append((f, snap.cluster_id, names))
            fmt = "parquet"
        else:
            snap = load_snapshot(f)
            json_snaps.append(snap)
            fmt = "json"
        if snap.cluster_id in seen:
            raise SnapshotError(
                str(f), [f"cluster_id: '{snap.cluster_id}' is also the cluster of {seen[snap.cluster_id]}; one file per cluster"]
            )
        seen[snap.cluster_id] = f
        pct, source = threshold_percentage(snap, threshold_setting)
        infos.append(ClusterInfo(snap.cluster_id, str(f), snap.controller, snap.brokers, pct, source, fmt))

    infos.sort(key=lambda c: c.cluster_id)
    frames = [_read_parquet_rows(spark, f, cid, names) for f, cid, names in parquet]
    if json_snaps:
        frames.append(_json_rows(spark, json_snaps))
    partitions = reduce(lambda a, b: a.unionByName(b), frames)
    brokers = spark.createDataFrame(
        [(c.cluster_id, b.id, b.rack, b.alive) for c in infos for b in c.brokers], schema=BROKER_COLUMNS
    )
    settings = spark.createDataFrame([_settings_row(c) for c in infos], schema=SETTINGS_COLUMNS)
    return Fleet(tuple(infos), partitions, brokers, settings)
