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

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_rebalance.errors import RebalanceError, SnapshotError
from kafka_rebalance.userinput import (
    INT32_MAX,
    INT64_MAX,
    InputError,
    finite_number,
    int_in,
    is_ascii_digits,
    is_int,
    loads_json,
    read_text,
    topic_name_problem,
)

CONTROLLERS = ("kraft", "zookeeper")
THRESHOLD_CONFIG = "leader.imbalance.per.broker.percentage"
PARQUET_META_KEY = b"kafka_rebalance.snapshot"
FORMAT_VERSION = 1
SNAPSHOT_SUFFIXES = (".json", ".parquet")


@dataclass(frozen=True, slots=True)
class Broker:
    id: int
    rack: str | None = None
    alive: bool = True
    configs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Partition:
    topic: str
    partition: int
    replicas: tuple[int, ...]
    leader: int  # -1: no leader
    isr: tuple[int, ...]
    size_bytes: int | None = None
    bytes_in_per_sec: float | None = None
    offline_replicas: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"

    @property
    def preferred(self) -> int:
        return self.replicas[0]


@dataclass(frozen=True, slots=True)
class Snapshot:
    cluster_id: str
    brokers: tuple[Broker, ...]
    partitions: tuple[Partition, ...]
    controller: str = "kraft"
    captured_at: str | None = None
    configs: dict[str, str] = field(default_factory=dict)
    topics: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)

    @property
    def broker_ids(self) -> list[int]:
        return [b.id for b in self.brokers]

    @property
    def live_broker_ids(self) -> list[int]:
        return [b.id for b in self.brokers if b.alive]

    def broker(self, broker_id: int) -> Broker:
        for b in self.brokers:
            if b.id == broker_id:
                return b
        raise KeyError(broker_id)

    @property
    def rack_of(self) -> dict[int, str | None]:
        return {b.id: b.rack for b in self.brokers}

    @property
    def has_racks(self) -> bool:
        return any(b.rack is not None for b in self.brokers)

    def topic_configs(self, topic: str) -> dict[str, str]:
        return self.topics.get(topic, {}).get("configs", {})

    def header_dict(self) -> dict[str, Any]:
        """Everything but the partitions, in the JSON field order of the format."""
        out: dict[str, Any] = {"cluster_id": self.cluster_id}
        if self.captured_at is not None:
            out["captured_at"] = self.captured_at
        out["controller"] = self.controller
        out["configs"] = dict(sorted(self.configs.items()))
        out["brokers"] = [_broker_dict(b) for b in self.brokers]
        out["topics"] = {t: {"configs": dict(sorted(v.get("configs", {}).items()))} for t, v in sorted(self.topics.items())}
        return out

    def to_dict(self) -> dict[str, Any]:
        out = self.header_dict()
        out["partitions"] = [_partition_dict(p) for p in self.partitions]
        return out

    def fingerprint(self) -> str:
        """sha256 of the canonical JSON form: equal for equal content, whatever the file format."""
        digest = hashlib.sha256()
        digest.update(json.dumps(self.header_dict(), sort_keys=True, separators=(",", ":")).encode())
        # One JSON array of fixed-order rows: the C encoder does it in one call (10x faster
        # than a document per partition at a million partitions).
        rows = [
            [p.topic, p.partition, p.replicas, p.leader, p.isr, p.size_bytes, p.bytes_in_per_sec, p.offline_replicas]
            for p in self.partitions
        ]
        digest.update(json.dumps(rows, separators=(",", ":")).encode())
        return digest.hexdigest()


def _broker_dict(b: Broker) -> dict[str, Any]:
    return {"id": b.id, "rack": b.rack, "alive": b.alive, "configs": dict(sorted(b.configs.items()))}


def _partition_dict(p: Partition) -> dict[str, Any]:
    out: dict[str, Any] = {
        "topic": p.topic,
        "partition": p.partition,
        "replicas": list(p.replicas),
        "leader": p.leader,
        "isr": list(p.isr),
        "size_bytes": p.size_bytes,
        "bytes_in_per_sec": p.bytes_in_per_sec,
    }
    if p.offline_replicas:
        out["offline_replicas"] = list(p.offline_replicas)
    return out


# --------------------------------------------------------------------------- validation


_is_int = is_int


def _configs(value: Any, where: str, problems: list[str]) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append(f"{where}: must be an object of config name to value, got {type(value).__name__}")
        return {}
    out: dict[str, str] = {}
    for k, v in value.items():
        if isinstance(v, (dict, list)) or v is None:
            problems.append(f"{where}.{k}: config values must be strings, got {json.dumps(v)}")
            continue
        # Kafka configs are strings on the wire; 10 and "10" mean the same thing.
        out[str(k)] = str(v).lower() if isinstance(v, bool) else str(v)
    return out


def _brokers(raw: Any, problems: list[str]) -> list[Broker]:
    if raw is None:
        problems.append("brokers: missing (list the cluster's brokers, [] for an empty cluster)")
        return []
    if not isinstance(raw, list):
        problems.append(f"brokers: must be a list, got {type(raw).__name__}")
        return []
    brokers: list[Broker] = []
    seen: dict[int, int] = {}
    for i, b in enumerate(raw):
        where = f"brokers[{i}]"
        if not isinstance(b, dict):
            problems.append(f"{where}: must be an object with an 'id', got {json.dumps(b)}")
            continue
        bid = b.get("id")
        if not int_in(bid, 0, INT32_MAX):
            problems.append(f"{where}: id must be a broker id 0..{INT32_MAX}, got {json.dumps(bid)}")
            continue
        if bid in seen:
            problems.append(f"{where}: duplicate broker id {bid} (also brokers[{seen[bid]}])")
            continue
        seen[bid] = i
        rack = b.get("rack")
        if rack is not None and (not isinstance(rack, str) or not rack):
            problems.append(f"{where} broker {bid}: rack must be a non-empty string or null, got {json.dumps(rack)}")
            rack = None
        alive = b.get("alive", True)
        if not isinstance(alive, bool):
            problems.append(f"{where} broker {bid}: alive must be true or false, got {json.dumps(alive)}")
            alive = True
        brokers.append(Broker(bid, rack, alive, _configs(b.get("configs"), f"{where}.configs", problems)))
    with_rack = [b.id for b in brokers if b.rack is not None]
    without = [b.id for b in brokers if b.rack is None]
    if with_rack and without:
        problems.append(
            f"brokers: some brokers have a rack and some do not (no rack: {_ids(without)}); "
            "Kafka's rack-aware placement needs all or none"
        )
    return sorted(brokers, key=lambda b: b.id)


def _ids(ids: Sequence[int], limit: int = 10) -> str:
    shown = ", ".join(str(i) for i in ids[:limit])
    return shown + (f", ... ({len(ids)} in all)" if len(ids) > limit else "")


def _int_list(value: Any, what: str, where: str, problems: list[str]) -> tuple[int, ...] | None:
    if not isinstance(value, (list, tuple)) or not all(_is_int(x) for x in value):
        problems.append(f"{where}: {what} must be a list of broker ids, got {json.dumps(value, default=str)}")
        return None
    return tuple(value)


def validate_partitions(
    columns: Mapping[str, Sequence[Any]],
    known_brokers: set[int],
    problems: list[str],
    row_numbers: Sequence[int] | None = None,
    typed: bool = False,
) -> list[Partition]:
    """Check partition rows given as columns (so JSON and Parquet share one path).

    ``row_numbers`` maps column positions back to the rows of the source file, so
    messages point at the row the operator sees. ``typed`` says the column types are
    already guaranteed (a Parquet file with our schema): then a row that passes every
    check in one cheap test is taken as it is, and only a suspect row goes through the
    detailed checks that name its problems. A million rows load in seconds that way.
    """
    n = len(columns["topic"])
    get = {k: columns.get(k) for k in ("size_bytes", "bytes_in_per_sec", "offline_replicas")}
    seen: dict[tuple[str, int], int] = {}
    out: list[Partition] = []
    topics, parts = columns["topic"], columns["partition"]
    replicas_col, leaders, isrs = columns["replicas"], columns["leader"], columns["isr"]
    sizes, rates, offlines = get["size_bytes"], get["bytes_in_per_sec"], get["offline_replicas"]
    # Kafka's topic-name rule once per distinct name, not once per row.
    bad_topics = {t for t in set(t for t in topics if isinstance(t, str)) if topic_name_problem(t)}
    for i in range(n):
        row = row_numbers[i] if row_numbers is not None else i
        topic, part = topics[i], parts[i]
        if typed:
            rep, leader, isr = replicas_col[i], leaders[i], isrs[i] or ()
            size = sizes[i] if sizes is not None else None
            rate = rates[i] if rates is not None else None
            off = (offlines[i] if offlines is not None else None) or ()
            rep_set = set(rep or ())
            if (
                topic and topic not in bad_topics and part is not None and 0 <= part <= INT32_MAX
                and (topic, part) not in seen
                and rep and len(rep_set) == len(rep) and known_brokers.issuperset(rep_set)
                and (leader is None or leader == -1 or leader in rep_set)
                and rep_set.issuperset(isr) and len(set(isr)) == len(isr)
                and (size is None or 0 <= size <= INT64_MAX) and (rate is None or 0 <= rate < math.inf)  # NaN fails
                and rep_set.issuperset(off)
            ):  # fmt: skip
                seen[(topic, part)] = row
                out.append(Partition(topic, part, tuple(rep), -1 if leader is None else leader, tuple(isr), size,
                                     rate, tuple(off)))  # fmt: skip
                continue
        if not isinstance(topic, str) or not topic:
            problems.append(f"partitions[{row}]: topic must be a non-empty string, got {json.dumps(topic)}")
            continue
        if topic in bad_topics:
            problems.append(f"partitions[{row}].topic: {topic_name_problem(topic)}")
            continue
        if not int_in(part, 0, INT32_MAX):
            problems.append(f"partitions[{row}] {topic}: partition must be an integer 0..{INT32_MAX}, got {json.dumps(part)}")
            continue
        where = f"partitions[{row}] {topic}-{part}"
        key = (topic, part)
        if key in seen:
            problems.append(f"{where}: duplicate partition (also partitions[{seen[key]}])")
            continue
        seen[key] = row
        ok = True
        replicas = _int_list(replicas_col[i], "replicas", where, problems)
        if replicas is None:
            continue
        if not replicas:
            problems.append(f"{where}: replicas is empty; every partition needs at least one replica")
            ok = False
        dupes = sorted({r for r in replicas if replicas.count(r) > 1})
        if dupes:
            problems.append(f"{where}: replicas {list(replicas)} repeat broker {', '.join(map(str, dupes))}")
            ok = False
        for r in replicas:
            if r not in known_brokers:
                problems.append(f"{where}: replica {r} is not a known broker")
                ok = False
        leader = leaders[i]
        if leader is None:
            leader = -1
        if not int_in(leader, -1, INT32_MAX):
            problems.append(f"{where}: leader must be a broker id or -1, got {json.dumps(leader)}")
            ok = False
        elif leader != -1 and leader not in replicas:
            problems.append(f"{where}: leader {leader} is not among replicas {list(replicas)}")
            ok = False
        isr = _int_list(isrs[i] if isrs[i] is not None else [], "isr", where, problems)
        if isr is None:
            continue
        outside = [r for r in isr if r not in replicas]
        if outside:
            problems.append(f"{where}: isr {list(isr)} is not a subset of replicas {list(replicas)} ({_ids(outside)} not a replica)")
            ok = False
        if len(set(isr)) != len(isr):
            problems.append(f"{where}: isr {list(isr)} repeats a broker")
            ok = False
        size = get["size_bytes"][i] if get["size_bytes"] is not None else None
        if size is not None and not int_in(size, 0, INT64_MAX):
            if isinstance(size, float) and size.is_integer() and 0 <= size <= INT64_MAX:
                size = int(size)
            else:
                problems.append(f"{where}: size_bytes must be an integer 0..{INT64_MAX}, got {json.dumps(size)}")
                ok = False
        rate = get["bytes_in_per_sec"][i] if get["bytes_in_per_sec"] is not None else None
        if rate is not None:
            if not finite_number(rate, 0):
                problems.append(f"{where}: bytes_in_per_sec must be a finite non-negative number, got {json.dumps(rate)}")
                ok = False
            else:
                rate = float(rate)
        offline_raw = get["offline_replicas"][i] if get["offline_replicas"] is not None else None
        offline: tuple[int, ...] = ()
        if offline_raw is not None:
            checked = _int_list(offline_raw, "offline_replicas", where, problems)
            if checked is None:
                ok = False
            else:
                offline = checked
                stray = [r for r in offline if r not in replicas]
                if stray:
                    problems.append(f"{where}: offline_replicas {list(offline)} are not all replicas")
                    ok = False
        if ok:
            out.append(Partition(topic, part, replicas, leader, isr, size, rate, offline))
    out.sort(key=lambda p: (p.topic, p.partition))
    return out


def _header(raw: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    cluster_id = raw.get("cluster_id")
    if not isinstance(cluster_id, str) or not cluster_id.strip():
        problems.append(f"cluster_id: must be a non-empty string, got {json.dumps(cluster_id)}")
        cluster_id = "?"
    controller = raw.get("controller", "kraft")
    if controller not in CONTROLLERS:
        problems.append(f"controller: must be one of {', '.join(CONTROLLERS)}, got {json.dumps(controller)}")
        controller = "kraft"
    captured_at = raw.get("captured_at")
    if captured_at is not None and not isinstance(captured_at, str):
        problems.append(f"captured_at: must be an ISO-8601 string, got {json.dumps(captured_at)}")
        captured_at = None
    topics_raw = raw.get("topics") or {}
    topics: dict[str, dict[str, dict[str, str]]] = {}
    if not isinstance(topics_raw, dict):
        problems.append(f"topics: must be an object of topic name to {{\"configs\": {{...}}}}, got {type(topics_raw).__name__}")
    else:
        for name, spec in topics_raw.items():
            problem = topic_name_problem(name)
            if problem:
                problems.append(f"topics: {problem}")
                continue
            if spec is not None and not isinstance(spec, dict):
                problems.append(f"topics.{name}: must be an object like {{\"configs\": {{...}}}}")
                continue
            topics[name] = {"configs": _configs((spec or {}).get("configs"), f"topics.{name}.configs", problems)}
    configs = _configs(raw.get("configs"), "configs", problems)
    threshold = configs.get(THRESHOLD_CONFIG)
    if threshold is not None and not (is_ascii_digits(threshold.strip()) and 0 <= int(threshold) <= 100):
        problems.append(f"configs.{THRESHOLD_CONFIG}: must be an integer percentage 0..100, got {json.dumps(threshold)}")
    return {
        "cluster_id": cluster_id,
        "controller": controller,
        "captured_at": captured_at,
        "configs": configs,
        "brokers": _brokers(raw.get("brokers"), problems),
        "topics": topics,
    }


def snapshot_from_dict(raw: Any, source: str = "snapshot") -> Snapshot:
    """Build a validated snapshot from its JSON form; raise SnapshotError listing every problem."""
    if not isinstance(raw, dict):
        raise SnapshotError(source, [f"top level must be a JSON object, got {type(raw).__name__}"])
    problems: list[str] = []
    head = _header(raw, problems)
    parts_raw = raw.get("partitions")
    if parts_raw is None:
        problems.append("partitions: missing (use [] for a cluster without topics)")
        parts_raw = []
    if not isinstance(parts_raw, list):
        problems.append(f"partitions: must be a list, got {type(parts_raw).__name__}")
        parts_raw = []
    rows: list[dict[str, Any]] = []
    for i, p in enumerate(parts_raw):
        if not isinstance(p, dict):
            problems.append(f"partitions[{i}]: must be an object, got {json.dumps(p, default=str)[:60]}")
            rows.append({})
        else:
            for req in ("topic", "partition", "replicas"):
                if req not in p:
                    problems.append(f"partitions[{i}]: missing field '{req}'")
            rows.append(p)
    # Rows already reported as malformed must not produce a second, confusing message.
    keep = [i for i, r in enumerate(rows) if r and all(k in r for k in ("topic", "partition", "replicas"))]
    kept = [rows[i] for i in keep]
    columns = {
        "topic": [r["topic"] for r in kept],
        "partition": [r["partition"] for r in kept],
        "replicas": [r["replicas"] for r in kept],
        "leader": [r.get("leader", -1) for r in kept],
        "isr": [r.get("isr", []) for r in kept],
        "size_bytes": [r.get("size_bytes") for r in kept],
        "bytes_in_per_sec": [r.get("bytes_in_per_sec") for r in kept],
        "offline_replicas": [r.get("offline_replicas") for r in kept],
    }
    partitions = validate_partitions(columns, {b.id for b in head["brokers"]}, problems, keep)
    if problems:
        raise SnapshotError(source, problems)
    return Snapshot(partitions=tuple(partitions), **{**head, "brokers": tuple(head["brokers"])})


# --------------------------------------------------------------------------- I/O


def load_snapshot(path: str | Path) -> Snapshot:
    """Load a JSON or Parquet snapshot file, validating it strictly."""
    p = Path(path)
    if not p.exists():
        raise SnapshotError(str(p), ["file does not exist"])
    if p.is_dir():
        raise SnapshotError(str(p), ["is a directory; give one snapshot file (.json or .parquet)"])
    if _is_parquet(p):
        return _load_parquet(p)
    try:
        raw = loads_json(read_text(p, "snapshot file (JSON or Parquet)"), str(p))
    except InputError as exc:
        raise SnapshotError(str(p), [str(exc).removeprefix(f"{p}: ")]) from None
    return snapshot_from_dict(raw, str(p))


def _is_parquet(p: Path) -> bool:
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
    import pyarrow as pa

    parts = list(partitions)
    return pa.table(
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
    head = _header(read_parquet_header(p), problems)
    try:
        table = pq.read_table(p)
    except Exception as exc:  # pyarrow raises a zoo of types for a damaged file
        raise SnapshotError(str(p), [f"unreadable Parquet: {str(exc).splitlines()[0][:200]}"]) from None
    required = ("topic", "partition", "replicas", "leader", "isr")
    missing = [c for c in required if c not in table.column_names]
    if missing:
        raise SnapshotError(str(p), [f"Parquet partition rows lack column(s) {', '.join(missing)}"])
    expected = partition_schema()
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
