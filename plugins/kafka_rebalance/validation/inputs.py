"""Reading the validator's inputs as raw as possible.

The quality gate must see what is really on disk, so nothing here repairs or
rejects content: a snapshot is read without the strict loader (whose rejections
the ``snapshot`` suite re-checks and reports row by row), and plan files are read
byte for byte. Only input that cannot be turned into rows at all (a missing file,
text that is not JSON, a field of the wrong type) raises ``ValidationInputError``,
which the CLI prints as one line and exit code 2.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeGuard

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.plan_dir import BATCHES_DIR, ELECTION_FILE, PLAN_FILE, SCHEDULE_FILE, batch_file, file_sha256
from kafka_rebalance.snapshot import PARQUET_META_KEY
from kafka_rebalance.snapshot.capacity import capacity_problem
from kafka_rebalance.snapshot.model import Capacity
from kafka_rebalance.userinput import InputError, loads_json
from kafka_rebalance.userinput import read_json as read_strict_json


class ValidationInputError(RebalanceError):
    """The snapshot or plan cannot be read into rows; ``plan_unusable`` says whose fault."""

    def __init__(self, message: str, plan_unusable: bool = False) -> None:
        super().__init__(message)
        self.plan_unusable = plan_unusable


def _is_int(v: Any) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def read_json(path: Path, plan_file: bool = False) -> Any:
    try:
        return read_strict_json(path)
    except InputError as exc:
        raise ValidationInputError(str(exc), plan_file) from None


def sha256_file(path: Path) -> str | None:
    if not path.is_file():
        return None
    return file_sha256(path)


# --------------------------------------------------------------------------- snapshot


@dataclass(frozen=True)
class RawBroker:
    id: int
    rack: str | None
    alive: bool
    # Its log dirs' total and usable bytes, summed; None unless every dir reports the figure.
    dir_total_bytes: int | None = None
    usable_bytes: int | None = None
    # Its configured capacity (brokers[].capacity) where the file holds a usable one.
    capacity: Capacity | None = None

    def with_capacity(self, configured: Capacity | None) -> RawBroker:
        """This broker with ``configured`` over its own configured figures, field by field (a plan's options)."""
        return self if configured is None else replace(self, capacity=configured.over(self.capacity))

    @property
    def capacity_bytes(self) -> int | None:
        """Its disks' size as the planner reads it (``snapshot.Broker.capacity_bytes``): the log dirs' total,
        else the configured disk."""
        if self.dir_total_bytes is not None:
            return self.dir_total_bytes
        return self.capacity.disk_bytes if self.capacity is not None else None


@dataclass(frozen=True)
class RawPartition:
    index: int  # position in the file, for messages
    topic: str
    partition: int
    replicas: tuple[int, ...]
    leader: int
    isr: tuple[int, ...]
    size_bytes: int | float | None
    bytes_in_per_sec: float | None
    bytes_out_per_sec: float | None = None  # consumer traffic, where measured

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass
class RawSnapshot:
    source: str
    cluster_id: str
    configs: dict[str, str]
    brokers: list[RawBroker]
    partitions: list[RawPartition]
    fingerprint: str | None = None  # Snapshot.fingerprint() when the strict loader accepts the file
    header: dict[str, Any] = field(default_factory=dict)

    @property
    def broker_ids(self) -> set[int]:
        return {b.id for b in self.brokers}

    @property
    def rack_of(self) -> dict[int, str | None]:
        return {b.id: b.rack for b in self.brokers}

    @property
    def alive_ids(self) -> set[int]:
        return {b.id for b in self.brokers if b.alive}


def _int_list(value: Any, what: str, where: str, plan_file: bool = False) -> tuple[int, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(_is_int(x) for x in value):
        raise ValidationInputError(
            f"{where}: {what} must be a list of broker ids, got {json.dumps(value, default=str)[:80]}", plan_file
        )
    return tuple(value)


def _partition(i: int, p: Any, source: str) -> RawPartition:
    where = f"{source}: partitions[{i}]"
    if not isinstance(p, dict):
        raise ValidationInputError(f"{where}: must be an object, got {json.dumps(p, default=str)[:60]}")
    topic, part = p.get("topic"), p.get("partition")
    if not isinstance(topic, str) or not topic:
        raise ValidationInputError(f"{where}: topic must be a non-empty string, got {json.dumps(topic)}")
    if not _is_int(part):
        raise ValidationInputError(f"{where} {topic}: partition must be an integer, got {json.dumps(part)}")
    where = f"{where} {topic}-{part}"
    if "replicas" not in p:
        raise ValidationInputError(f"{where}: missing field 'replicas'")
    leader: Any = p.get("leader", -1)
    leader = -1 if leader is None else leader
    if not _is_int(leader):
        raise ValidationInputError(f"{where}: leader must be a broker id or -1, got {json.dumps(leader)}")
    size = p.get("size_bytes")
    if size is not None and (isinstance(size, bool) or not isinstance(size, (int, float))):
        raise ValidationInputError(f"{where}: size_bytes must be a number, got {json.dumps(size)}")
    rate = p.get("bytes_in_per_sec")
    if rate is not None and (isinstance(rate, bool) or not isinstance(rate, (int, float))):
        raise ValidationInputError(f"{where}: bytes_in_per_sec must be a number, got {json.dumps(rate)}")
    out = p.get("bytes_out_per_sec")
    if out is not None and (isinstance(out, bool) or not isinstance(out, (int, float))):
        raise ValidationInputError(f"{where}: bytes_out_per_sec must be a number, got {json.dumps(out)}")
    return RawPartition(
        i, topic, part, _int_list(p["replicas"], "replicas", where), leader, _int_list(p.get("isr"), "isr", where),
        size, None if rate is None else float(rate), None if out is None else float(out),
    )


def _brokers(raw: Any, source: str) -> list[RawBroker]:
    if not isinstance(raw, list):
        raise ValidationInputError(f"{source}: brokers must be a list, got {type(raw).__name__}")
    out = []
    for i, b in enumerate(raw):
        if not isinstance(b, dict) or not _is_int(b.get("id")):
            raise ValidationInputError(f"{source}: brokers[{i}]: must be an object with an integer 'id'")
        rack = b.get("rack")
        dirs = b.get("log_dirs")
        dirs = [d for d in dirs if isinstance(d, dict)] if isinstance(dirs, list) else []
        total = _dir_sum(dirs, "total_bytes")
        capacity = capacity_problem(b["capacity"], "capacity")[0] if b.get("capacity") is not None else None
        out.append(RawBroker(b["id"], rack if isinstance(rack, str) and rack else None, b.get("alive", True) is not False,
                             total, _dir_sum(dirs, "usable_bytes") if total is not None else None, capacity))
    return out


def _dir_sum(dirs: list[dict[str, Any]], key: str) -> int | None:
    values = [v for d in dirs if _is_int(v := d.get(key)) and v >= 0]
    return sum(values) if dirs and len(values) == len(dirs) else None


def read_raw_snapshot(path: str | Path) -> RawSnapshot:
    """The snapshot's header and partition rows, typed but not judged."""
    p = Path(path)
    if not p.is_file():
        raise ValidationInputError(f"{p}: snapshot file does not exist")
    with p.open("rb") as fh:
        parquet = fh.read(4) == b"PAR1"
    if parquet:
        import pyarrow.parquet as pq

        try:
            meta = pq.read_schema(p).metadata or {}
            table = pq.read_table(p)
        except Exception as exc:  # pyarrow raises many types for a damaged file
            raise ValidationInputError(f"{p}: unreadable Parquet: {exc}") from None
        if PARQUET_META_KEY not in meta:
            raise ValidationInputError(f"{p}: Parquet file has no '{PARQUET_META_KEY.decode()}' metadata")
        try:
            header = loads_json(meta[PARQUET_META_KEY].decode("utf-8", "replace"), f"{p}: metadata {PARQUET_META_KEY.decode()}")
        except InputError as exc:
            raise ValidationInputError(str(exc)) from None
        if not isinstance(header, dict):
            raise ValidationInputError(f"{p}: metadata {PARQUET_META_KEY.decode()}: must be a JSON object")
        rows: list[Any] = table.to_pylist()
    else:
        raw = read_json(p)
        if not isinstance(raw, dict):
            raise ValidationInputError(f"{p}: top level must be a JSON object, got {type(raw).__name__}")
        rows = raw.get("partitions")  # type: ignore[assignment]
        if not isinstance(rows, list):
            raise ValidationInputError(f"{p}: partitions must be a list, got {type(rows).__name__}")
        header = {k: v for k, v in raw.items() if k != "partitions"}
    configs = header.get("configs") or {}
    snap = RawSnapshot(
        source=str(p),
        cluster_id=str(header.get("cluster_id", "?")),
        configs={str(k): str(v) for k, v in configs.items()} if isinstance(configs, dict) else {},
        brokers=_brokers(header.get("brokers"), str(p)),
        partitions=[_partition(i, r, str(p)) for i, r in enumerate(rows)],
        header=header,
    )
    snap.fingerprint = _strict_fingerprint(p)
    return snap


def _strict_fingerprint(p: Path) -> str | None:
    from kafka_rebalance.snapshot import load_snapshot

    try:
        return load_snapshot(p).fingerprint()
    except RebalanceError:
        return None  # the snapshot suite says why, row by row


# --------------------------------------------------------------------------- plan


@dataclass(frozen=True)
class RawBatch:
    id: str
    moves: list[dict[str, Any]]  # reassignment.json "partitions", as written
    throttles: dict[str, Any]


@dataclass
class RawPlan:
    dir: Path
    manifest: dict[str, Any]
    batches: list[RawBatch]
    election: list[tuple[str, int]]
    schedule: list[dict[str, Any]] | None = None  # schedule.json's steps; None for plans made before it existed

    @property
    def options(self) -> dict[str, Any]:
        return self.manifest.get("options") or {}


def _batch_ids(plan_dir: Path, manifest: dict[str, Any]) -> list[str]:
    on_disk = {d.name for d in (plan_dir / BATCHES_DIR).iterdir() if d.is_dir()} if (plan_dir / BATCHES_DIR).is_dir() else set()
    listed = {str(b.get("id")) for b in manifest.get("batches") or [] if isinstance(b, dict)}
    bad = sorted(i for i in on_disk | listed if not (i.isascii() and i.isdigit()))
    if bad:
        raise ValidationInputError(f"{plan_dir}/batches: batch id {bad[0]!r} is not a number", True)
    return sorted(on_disk | listed, key=lambda i: (int(i), i))


def read_raw_plan(plan_dir: str | Path) -> RawPlan:
    d = Path(plan_dir)
    if not d.is_dir():
        raise ValidationInputError(f"{d}: plan directory does not exist")
    manifest = read_json(d / PLAN_FILE, plan_file=True)
    if not isinstance(manifest, dict):
        raise ValidationInputError(f"{d / PLAN_FILE}: top level must be a JSON object", True)
    for key, kind in (("options", dict), ("files", dict), ("batches", list)):
        if not isinstance(manifest.get(key), kind):
            raise ValidationInputError(f"{d / PLAN_FILE}: field '{key}' must be a JSON {kind.__name__.replace('dict', 'object')}", True)
    batches = []
    for bid in _batch_ids(d, manifest):
        reassignment_path, throttles_path = d / batch_file(bid, "reassignment"), d / batch_file(bid, "throttles")
        reassignment = read_json(reassignment_path, plan_file=True)
        moves = reassignment.get("partitions") if isinstance(reassignment, dict) else None
        if not isinstance(moves, list) or not all(isinstance(m, dict) for m in moves):
            raise ValidationInputError(f"{reassignment_path}: field 'partitions' must be a list of objects", True)
        for i, m in enumerate(moves):
            if not isinstance(m.get("topic"), str) or not _is_int(m.get("partition")):
                raise ValidationInputError(f"{reassignment_path}: partitions[{i}] needs a string 'topic' and an integer 'partition'", True)
            if not isinstance(m.get("replicas"), list):
                raise ValidationInputError(f"{reassignment_path}: partitions[{i}]: missing field 'replicas'", True)
            _int_list(m["replicas"], "replicas", f"{reassignment_path}: partitions[{i}]", plan_file=True)
        throttles = read_json(throttles_path, plan_file=True)
        if not isinstance(throttles, dict):
            raise ValidationInputError(f"{throttles_path}: top level must be a JSON object", True)
        batches.append(RawBatch(bid, moves, throttles))
    election_raw = read_json(d / ELECTION_FILE, plan_file=True)
    parts = election_raw.get("partitions") if isinstance(election_raw, dict) else None
    if not isinstance(parts, list) or not all(isinstance(p, dict) and isinstance(p.get("topic"), str) and _is_int(p.get("partition")) for p in parts):
        raise ValidationInputError(f"{d / ELECTION_FILE}: 'partitions' must be a list of {{\"topic\", \"partition\"}}", True)
    schedule = None
    if (d / SCHEDULE_FILE).exists() or SCHEDULE_FILE in manifest["files"]:
        doc = read_json(d / SCHEDULE_FILE, plan_file=True)
        steps = doc.get("steps") if isinstance(doc, dict) else None
        if not isinstance(steps, list) or not all(isinstance(st, dict) and isinstance(st.get("topic"), str)
                                                  and _is_int(st.get("partition")) for st in steps):
            raise ValidationInputError(f"{d / SCHEDULE_FILE}: 'steps' must be a list of objects with a string 'topic' "
                                       "and an integer 'partition'", True)
        schedule = steps
    return RawPlan(d, manifest, batches, [(p["topic"], p["partition"]) for p in parts], schedule)
