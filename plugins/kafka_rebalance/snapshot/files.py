"""Snapshot files: JSON and Parquet, read strictly and written deterministically."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kafka_rebalance.errors import RebalanceError, SnapshotError
from kafka_rebalance.snapshot.model import (
    FORMAT_VERSION,
    METHOD_FIELDS,
    PARQUET_META_KEY,
    SNAPSHOT_SUFFIXES,
    Partition,
    Snapshot,
)
from kafka_rebalance.snapshot.parse import (
    parse_header,
    snapshot_from_dict,
    validate_partitions,
)
from kafka_rebalance.userinput import (
    InputError,
    loads_json,
    read_text,
)


def load_snapshot(path: str | Path) -> Snapshot:
    """Load a JSON or Parquet snapshot file, validating it strictly."""
    p = Path(path)
    if not p.exists():
        raise SnapshotError(str(p), ["file does not exist"])
    if p.is_dir():
        raise SnapshotError(str(p), ["is a directory; give one snapshot file (.json or .parquet)"])
    if is_parquet(p):
        return _load_parquet(p)
    try:
        raw = loads_json(read_text(p, "snapshot file (JSON or Parquet)"), str(p))
    except InputError as exc:
        raise SnapshotError(str(p), [str(exc).removeprefix(f"{p}: ")]) from None
    return snapshot_from_dict(raw, str(p))


def is_parquet(p: Path) -> bool:
    """A Parquet file by its magic bytes, whatever its name."""
    try:
        with p.open("rb") as fh:
            return fh.read(4) == b"PAR1"
    except OSError as exc:
        raise SnapshotError(str(p), [f"cannot read ({exc.strerror})"]) from None


def snapshot_files(path: str | Path) -> list[Path]:
    """One snapshot file, or every snapshot file of a fleet directory (sorted by name)."""
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix in SNAPSHOT_SUFFIXES)
        if not files:
            raise SnapshotError(str(p), ["directory holds no snapshot files (*.json, *.parquet)"])
        return files
    if not p.exists():
        raise SnapshotError(str(p), ["file does not exist"])
    return [p]


def write_snapshot(snapshot: Snapshot, path: str | Path) -> Path:
    """Write JSON or Parquet, chosen by the file suffix."""
    from kafka_rebalance.userinput import check_output_file

    p = check_output_file(path, "snapshot output")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        if p.suffix == ".parquet":
            write_parquet(partition_table(snapshot.partitions), snapshot.header_dict(), p)
        else:
            p.write_text(json.dumps(snapshot.to_dict(), indent=1) + "\n", encoding="utf-8")
    except OSError as exc:
        raise RebalanceError(f"{p}: cannot write snapshot ({exc.strerror or exc})") from None
    return p


def partition_schema():
    import pyarrow as pa

    return pa.schema(
        [
            ("topic", pa.string()),
            ("partition", pa.int32()),
            ("replicas", pa.list_(pa.int32())),
            ("leader", pa.int32()),
            ("isr", pa.list_(pa.int32())),
            ("size_bytes", pa.int64()),
            ("bytes_in_per_sec", pa.float64()),
            ("offline_replicas", pa.list_(pa.int32())),
        ]
    )


def partition_table(partitions: Iterable[Partition]):
    """The partition rows; a ``log_dirs`` column (each replica's log dir) only when any row records them,
    so snapshots without them keep the schema readers of older versions know."""
    import pyarrow as pa

    parts = list(partitions)
    table = pa.table(
        {
            "topic": [p.topic for p in parts],
            "partition": [p.partition for p in parts],
            "replicas": [list(p.replicas) for p in parts],
            "leader": [p.leader for p in parts],
            "isr": [list(p.isr) for p in parts],
            "size_bytes": [p.size_bytes for p in parts],
            "bytes_in_per_sec": [p.bytes_in_per_sec for p in parts],
            "offline_replicas": [list(p.offline_replicas) for p in parts],
        },
        schema=partition_schema(),
    )
    if any(p.log_dirs for p in parts):
        table = table.append_column(pa.field("log_dirs", pa.list_(pa.string())),
                                    pa.array([list(p.log_dirs) or None for p in parts], pa.list_(pa.string())))
    # Likewise the traffic columns beyond bytes_in_per_sec: only when gather measured them.
    if any(p.has_metric_fields for p in parts):
        for f in metric_fields():
            values = [p.metric_fields.get(f.name) for p in parts]
            if any(v is not None for v in values):
                table = table.append_column(f, pa.array(values, f.type))
    return table


def metric_fields():
    """The optional traffic columns: consumer bytes/s and how each figure was produced."""
    import pyarrow as pa

    return [pa.field("bytes_out_per_sec", pa.float64()),
            *(pa.field(name, pa.string()) for name in METHOD_FIELDS)]


def write_parquet(table, header: dict[str, Any], path: Path) -> None:
    import pyarrow.parquet as pq

    meta = dict(table.schema.metadata or {})
    meta[PARQUET_META_KEY] = json.dumps({"format_version": FORMAT_VERSION, **header}, sort_keys=True).encode()
    pq.write_table(table.replace_schema_metadata(meta), path, compression="zstd")


def read_parquet_header(path: str | Path) -> dict[str, Any]:
    import pyarrow.parquet as pq

    try:
        meta = pq.read_schema(path).metadata or {}
    except Exception as exc:  # pyarrow raises a zoo of types (ArrowInvalid, OSError...) for a damaged footer
        raise SnapshotError(str(path), [f"unreadable Parquet footer: {str(exc).splitlines()[0][:200]}"]) from None
    if PARQUET_META_KEY not in meta:
        raise SnapshotError(
            str(path),
            [f"Parquet file has no '{PARQUET_META_KEY.decode()}' metadata; write snapshots with kafka-rebalance"],
        )
    where = f"{path}: metadata {PARQUET_META_KEY.decode()}"
    try:
        header = loads_json(meta[PARQUET_META_KEY].decode("utf-8"), where)
    except UnicodeDecodeError:
        raise SnapshotError(str(path), [f"metadata {PARQUET_META_KEY.decode()}: not UTF-8 text"]) from None
    except InputError as exc:
        raise SnapshotError(str(path), [str(exc).removeprefix(f"{path}: ")]) from None
    if not isinstance(header, dict):
        raise SnapshotError(str(path), [f"metadata {PARQUET_META_KEY.decode()}: must be a JSON object, got {type(header).__name__}"])
    return header


def _compatible(actual, expected) -> bool:
    """Same kind of column: integers of any width for integers, strings for strings, and so on."""
    import pyarrow as pa

    def kind(t) -> str:
        if pa.types.is_list(t) or pa.types.is_large_list(t):
            return "list<" + kind(t.value_type) + ">"
        if pa.types.is_integer(t):
            return "int"
        if pa.types.is_floating(t):
            return "float"
        if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_dictionary(t):
            return "string"
        return str(t)

    return kind(actual) == kind(expected) or (kind(expected) == "float" and kind(actual) == "int")


def _load_parquet(p: Path) -> Snapshot:
    import pyarrow.parquet as pq

    problems: list[str] = []
    head = parse_header(read_parquet_header(p), problems)
    try:
        table = pq.read_table(p)
    except Exception as exc:  # pyarrow raises a zoo of types for a damaged file
        raise SnapshotError(str(p), [f"unreadable Parquet: {str(exc).splitlines()[0][:200]}"]) from None
    required = ("topic", "partition", "replicas", "leader", "isr")
    missing = [c for c in required if c not in table.column_names]
    if missing:
        raise SnapshotError(str(p), [f"Parquet partition rows lack column(s) {', '.join(missing)}"])
    import pyarrow as pa

    expected = partition_schema().append(pa.field("log_dirs", pa.list_(pa.string())))
    for f in metric_fields():
        expected = expected.append(f)
    wrong = [
        f"column {f.name} is {table.schema.field(f.name).type}, expected {f.type}"
        for f in expected
        if f.name in table.column_names and not _compatible(table.schema.field(f.name).type, f.type)
    ]
    if wrong:
        raise SnapshotError(str(p), wrong)
    columns = {name: table.column(name).to_pylist() for name in table.column_names}
    partitions = validate_partitions(columns, {b.id for b in head["brokers"]}, problems, typed=True)
    if problems:
        raise SnapshotError(str(p), problems)
    return Snapshot(partitions=tuple(partitions), **{**head, "brokers": tuple(head["brokers"])})
