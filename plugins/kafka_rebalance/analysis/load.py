"""Snapshots into Spark DataFrames: partition rows, brokers, and per-cluster settings.

Parquet snapshots are scanned by Spark directly (their partition rows never pass
through Python); only the cluster header, which sits in the file's key-value
metadata, is read and validated on the driver. Files with the same column types are
read by ONE scan (a fleet of generated snapshots is one scan, whatever its size), with
the schema given up front so that Spark runs no schema-inference job; each row learns
its cluster from a broadcast join on the file it came from. JSON snapshots are small
by construction, so they are loaded and validated strictly on the driver with
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
from urllib.parse import unquote, urlparse

from kafka_rebalance.errors import SnapshotError
from kafka_rebalance.metrics import check_threshold_setting, threshold_percentage
from kafka_rebalance.snapshot import (
    FORMAT_VERSION,
    Broker,
    Snapshot,
    is_parquet,
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
PARTITION_COLUMNS_JSON = PARTITION_COLUMNS.replace("cluster_id string", "cluster_no int")
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
    partition_rows: int = 0

    @property
    def rack_count(self) -> int:
        return len({b.rack for b in self.brokers if b.rack is not None})


@dataclass(frozen=True)
class Fleet:
    """One or more clusters, as the analysis consumes them. ``clusters`` is sorted by cluster_id.

    ``partitions`` has one row per partition row of every snapshot: ``cluster_id``, the
    snapshot's partition columns, and the cluster's settings (``cluster_no`` = index in
    ``clusters``, rack lookups).
    """

    clusters: tuple[ClusterInfo, ...]
    partitions: DataFrame

    @property
    def partition_rows(self) -> int:
        return sum(c.partition_rows for c in self.clusters)

    def source_of(self, cluster_id: str) -> str:
        for c in self.clusters:
            if c.cluster_id == cluster_id:
                return c.source
        return cluster_id


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


# Arrow types Spark reads with a known schema; anything else is left to Spark's inference.
_SPARK_TYPES = {
    "string": "string", "large_string": "string", "int8": "tinyint", "int16": "smallint", "int32": "int",
    "int64": "bigint", "float": "float", "double": "double",
    "list<item: int32>": "array<int>", "list<element: int32>": "array<int>",
    "list<item: int64>": "array<bigint>", "list<element: int64>": "array<bigint>",
}


def _check_parquet_schema(path: Path) -> tuple[set[str], tuple[tuple[str, str], ...], int]:
    """Fail on missing or mistyped columns here, not as a Spark stack trace later.

    Returns the column names, the (name, Arrow type) of the columns the analysis reads (files
    with the same ones share a scan) and the row count, all from the footer.
    """
    import pyarrow.parquet as pq

    meta = pq.read_metadata(path)
    schema = meta.schema.to_arrow_schema()
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
    used = tuple((n, str(schema.field(n).type)) for n in (*_REQUIRED, *_OPTIONAL) if n in schema.names)
    return set(schema.names), used, meta.num_rows


def _hadoop_path(path: Path) -> str:
    # Spark treats read paths as glob patterns; a file name is a literal.
    text = str(path.resolve())
    return "".join("\\" + ch if ch in "*?[]{}\\" else ch for ch in text)


def _read_parquet_group(
    spark: SparkSession, files: Sequence[Path], used: tuple[tuple[str, str], ...]
) -> tuple[DataFrame, dict[Path, str]]:
    """ONE scan over snapshot files of identical column types, and each file's path as the scan spells it.

    Rows carry ``_metadata.file_name`` (unique: the files come from one directory); the caller
    joins it to the cluster. The schema is given,
    so Spark runs no job to infer it from a footer.
    """
    from pyspark.sql import functions as F

    names = {n for n, _ in used}
    types = [_SPARK_TYPES.get(t if not t.startswith("dictionary<values=string") else "string") for _, t in used]
    try:
        reader = spark.read
        if None not in types:  # an unusual Arrow type: let Spark infer it (one small job)
            reader = reader.schema(", ".join(f"`{n}` {t}" for (n, _), t in zip(used, types)))
        raw = reader.parquet(*[_hadoop_path(f) for f in files])
        uris = raw.inputFiles()
    except Exception as exc:  # AnalysisException and friends: report the file, not the JVM
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SnapshotError(str(files[0]), [f"Spark cannot read the Parquet file: {first}"]) from None
    # ``_metadata.file_name`` is the last segment of the file's URI, encoded as in inputFiles().
    by_local = {Path(unquote(urlparse(uri).path)): urlparse(uri).path.rsplit("/", 1)[-1] for uri in uris}
    missing = [f for f in files if f.resolve() not in by_local]
    if missing:
        raise SnapshotError(str(missing[0]), [f"Spark lists this file under another path: {sorted(uris)[:3]}"])

    def col(name: str, sql_type: str):
        return (F.col(name) if name in names else F.lit(None)).cast(sql_type).alias(name)

    rows = raw.select(
        F.col("_metadata.file_name").alias("file_name"),
        col("topic", "string"),
        col("partition", "int"),
        col("replicas", "array<int>"),
        col("leader", "int"),
        col("isr", "array<int>"),
        col("size_bytes", "bigint"),
        col("bytes_in_per_sec", "double"),
    )
    return rows, {f: by_local[f.resolve()] for f in files}


def _json_rows(spark: SparkSession, snapshots: Sequence[tuple[int, Snapshot]], settings: DataFrame) -> DataFrame:
    import pyarrow as pa
    from pyspark.sql import functions as F

    tables = []
    for no, snap in snapshots:
        table = partition_table(snap.partitions)
        table = table.drop_columns([c for c in ("offline_replicas", "log_dirs") if c in table.column_names])
        tables.append(table.add_column(0, "cluster_no", pa.array([no] * table.num_rows, pa.int32())))
    rows = spark.createDataFrame(pa.concat_tables(tables), schema=PARTITION_COLUMNS_JSON)
    return rows.join(F.broadcast(settings.drop("file_name")), "cluster_no")


def _rack_lookup(info: ClusterInfo) -> tuple[int, int, list[int | None] | None, dict[int, int] | None]:
    """Rack count, smallest id, and rack numbers by broker id: a dense array when the ids allow, else a map."""
    racks = sorted({b.rack for b in info.brokers if b.rack is not None})
    rack_no = {r: i for i, r in enumerate(racks)}
    by_id = {b.id: rack_no[b.rack] for b in info.brokers if b.rack is not None}
    base = min(by_id) if by_id else 0
    span = (max(by_id) - base + 1) if by_id else 0
    if span <= DENSE_RACK_SPAN:
        dense: list[int | None] = [None] * span
        for bid, r in by_id.items():
            dense[bid - base] = r
        return len(racks), base, dense, None
    return len(racks), base, None, by_id


def _settings(spark: SparkSession, infos: Sequence[ClusterInfo], file_names: dict[str, str]) -> DataFrame:
    """One row per cluster, as an inline table: Spark broadcasts it without running a job.

    (A DataFrame made from Python rows is an RDD, and broadcasting it would cost a Spark job.)
    Numbers are written into the SQL text; file names travel as parameters.
    """
    rows, args = [], {}
    for no, info in enumerate(infos):
        rack_count, base, dense, by_id = _rack_lookup(info)
        args[f"f{no}"] = file_names.get(info.cluster_id, "")
        index = "NULL" if dense is None else f"array({', '.join('NULL' if r is None else str(r) for r in dense)})"
        by_id_sql = "NULL" if by_id is None else f"map({', '.join(f'{k}, {v}' for k, v in sorted(by_id.items()))})"
        rows.append(f"(:f{no}, {no}, {rack_count}, {base}, {index}, {by_id_sql})")
    return spark.sql(
        "SELECT file_name, cluster_no, rack_count, rack_base, CAST(rack_index AS array<int>) AS rack_index, "
        "CAST(rack_by_id AS map<int,int>) AS rack_by_id FROM VALUES " + ", ".join(rows)
        + " AS settings(file_name, cluster_no, rack_count, rack_base, rack_index, rack_by_id)",
        args=args,
    )


def load_fleet(spark: SparkSession, path: str | Path, threshold_setting: float | None = None) -> Fleet:
    """One snapshot file or a directory of them (one cluster each) as one DataFrame of partition rows."""
    from pyspark.sql import functions as F

    check_threshold_setting(threshold_setting)
    infos: list[ClusterInfo] = []
    parquet: dict[str, tuple[Path, tuple[tuple[str, str], ...]]] = {}
    json_snaps: list[Snapshot] = []
    seen: dict[str, Path] = {}
    for f in snapshot_files(path):
        if is_parquet(f):
            try:
                header = read_parquet_header(f)
            except SnapshotError:
                raise
            except Exception as exc:  # not Parquet after all, or metadata that is not JSON
                raise SnapshotError(str(f), [f"unreadable Parquet snapshot header: {exc}"]) from None
            snap = _header_snapshot(header, f)
            _, used, rows = _check_parquet_schema(f)
            fmt = "parquet"
        else:
            snap = load_snapshot(f)
            json_snaps.append(snap)
            fmt, rows = "json", len(snap.partitions)
        if snap.cluster_id in seen:
            raise SnapshotError(
                str(f), [f"cluster_id: '{snap.cluster_id}' is also the cluster of {seen[snap.cluster_id]}; one file per cluster"]
            )
        seen[snap.cluster_id] = f
        if fmt == "parquet":
            parquet[snap.cluster_id] = (f, used)
        pct, source = threshold_percentage(snap, threshold_setting)
        infos.append(ClusterInfo(snap.cluster_id, str(f), snap.controller, snap.brokers, pct, source, fmt, rows))

    infos.sort(key=lambda c: c.cluster_id)
    groups: dict[tuple[tuple[str, str], ...], list[Path]] = {}
    for f, used in sorted(parquet.values()):
        groups.setdefault(used, []).append(f)
    scans, uris = [], {}
    for used, files in groups.items():
        scan, paths = _read_parquet_group(spark, files, used)
        scans.append(scan)
        uris.update(paths)
    settings = _settings(spark, infos, {cid: uris[f] for cid, (f, _) in parquet.items()})
    # A broadcast hash join per row on the file name (the settings table has one row per cluster).
    frames = [scan.join(F.broadcast(settings), "file_name").drop("file_name") for scan in scans]
    if json_snaps:
        number = {c.cluster_id: no for no, c in enumerate(infos)}
        frames.append(_json_rows(spark, [(number[s.cluster_id], s) for s in json_snaps], settings))
    partitions = reduce(lambda a, b: a.unionByName(b), frames)
    return Fleet(tuple(infos), partitions)
