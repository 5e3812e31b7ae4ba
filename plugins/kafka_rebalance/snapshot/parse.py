"""The strict parser: a snapshot document (JSON's dict, or Parquet's columns) to a Snapshot, every problem named
with its location, or SnapshotError listing them all."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from kafka_rebalance.errors import SnapshotError
from kafka_rebalance.snapshot.capacity import capacity_problem
from kafka_rebalance.snapshot.model import (
    CONTROLLERS,
    METHOD_FIELDS,
    THRESHOLD_CONFIG,
    Broker,
    LogDir,
    MetricMethod,
    MetricsSource,
    MetricsSourceKind,
    Partition,
    Snapshot,
)
from kafka_rebalance.userinput import (
    INT32_MAX,
    INT64_MAX,
    cluster_id_problem,
    finite_number,
    int_in,
    is_ascii_digits,
    is_int,
    topic_name_problem,
)

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
        capacity = None
        if b.get("capacity") is not None:
            capacity, problem = capacity_problem(b["capacity"], f"{where} broker {bid}: capacity")
            if problem is not None:
                problems.append(problem)
        brokers.append(Broker(bid, rack, alive, _configs(b.get("configs"), f"{where}.configs", problems),
                              _log_dirs(b.get("log_dirs"), f"{where} broker {bid}", problems), capacity))
    with_rack = [b.id for b in brokers if b.rack is not None]
    without = [b.id for b in brokers if b.rack is None]
    if with_rack and without:
        problems.append(
            f"brokers: some brokers have a rack and some do not (no rack: {_ids(without)}); "
            "Kafka's rack-aware placement needs all or none"
        )
    return sorted(brokers, key=lambda b: b.id)


def _log_dirs(raw: Any, where: str, problems: list[str]) -> tuple[LogDir, ...]:
    """A broker's log dirs: absent for an unrecorded list, each {path, total_bytes?, usable_bytes?}."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        problems.append(f"{where}: log_dirs must be a list of {{\"path\": ...}}, got {json.dumps(raw, default=str)[:60]}")
        return ()
    out: list[LogDir] = []
    for k, d in enumerate(raw):
        at = f"{where}: log_dirs[{k}]"
        if not isinstance(d, dict) or not isinstance(d.get("path"), str) or not d["path"]:
            problems.append(f"{at} must be an object with a non-empty 'path', got {json.dumps(d, default=str)[:60]}")
            continue
        sizes: list[int | None] = []
        for key in ("total_bytes", "usable_bytes"):
            v = d.get(key)
            if v is not None and not int_in(v, 0, INT64_MAX):
                problems.append(f"{at}.{key} must be an integer 0..{INT64_MAX} or absent, got {json.dumps(v)}")
                v = None
            sizes.append(v)
        total, usable = sizes
        if total is not None and usable is not None and usable > total:
            problems.append(f"{at}: usable_bytes {usable} is more than total_bytes {total}")
        out.append(LogDir(d["path"], total, usable))
    paths = [d.path for d in out]
    dupes = sorted({x for x in paths if paths.count(x) > 1})
    if dupes:
        problems.append(f"{where}: log_dirs repeat {', '.join(dupes)}")
    return tuple(out)


def _replica_dirs(raw: Any, replicas: tuple[int, ...], where: str, problems: list[str]) -> tuple[str | None, ...] | None:
    """Each replica's log dir, in replicas order; None (with a problem) when malformed."""
    if raw is None:
        return ()
    if (not isinstance(raw, (list, tuple)) or len(raw) != len(replicas)
            or not all(d is None or (isinstance(d, str) and d) for d in raw)):
        problems.append(f"{where}: log_dirs must list one log dir (or null) per replica {list(replicas)}, "
                        f"got {json.dumps(raw, default=str)[:80]}")
        return None
    return tuple(raw)


METRIC_COLUMNS = ("bytes_out_per_sec", *METHOD_FIELDS)
_METHODS = ", ".join(m.value for m in MetricMethod)


def _metric_extras(cols: Mapping[str, Sequence[Any]], i: int, where: str, problems: list[str]) -> dict[str, Any] | None:
    """A row's bytes_out_per_sec and method fields (absent ones left out); None (with problems) when malformed."""
    extras: dict[str, Any] = {}
    ok = True
    for key, col in cols.items():
        value = col[i]
        if value is None:
            continue
        if key == "bytes_out_per_sec":
            if finite_number(value, 0):
                extras[key] = float(value)
            else:
                problems.append(f"{where}: bytes_out_per_sec must be a finite non-negative number, got {json.dumps(value)}")
                ok = False
        elif isinstance(value, str) and value in MetricMethod._value2member_map_:
            extras[key] = MetricMethod(value)
        else:
            problems.append(f"{where}: {key} must be one of {_METHODS}, got {json.dumps(value, default=str)[:60]}")
            ok = False
    return extras if ok else None


def _metrics_source(raw: Any, problems: list[str]) -> MetricsSource | None:
    if raw is None:
        return None
    kinds = ", ".join(k.value for k in MetricsSourceKind)
    if not isinstance(raw, dict) or raw.get("source") not in MetricsSourceKind._value2member_map_:
        problems.append(f"metrics: must be an object with a source ({kinds}), got {json.dumps(raw, default=str)[:80]}")
        return None
    url, bytes_out = raw.get("url"), raw.get("bytes_out")
    if url is not None and (not isinstance(url, str) or not url):
        problems.append(f"metrics.url: must be a non-empty string or absent, got {json.dumps(url)}")
        return None
    if not isinstance(bytes_out, str) or not bytes_out:
        problems.append(f"metrics.bytes_out: must say how consumer traffic was measured, got {json.dumps(bytes_out)}")
        return None
    return MetricsSource(MetricsSourceKind(raw["source"]), bytes_out, url)


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
    get = {k: columns.get(k) for k in ("size_bytes", "bytes_in_per_sec", "offline_replicas", "log_dirs")}
    seen: dict[tuple[str, int], int] = {}
    out: list[Partition] = []
    topics, parts = columns["topic"], columns["partition"]
    replicas_col, leaders, isrs = columns["replicas"], columns["leader"], columns["isr"]
    sizes, rates, offlines, dirs = get["size_bytes"], get["bytes_in_per_sec"], get["offline_replicas"], get["log_dirs"]
    # Kafka's topic-name rule once per distinct name, not once per row.
    bad_topics = {t for t in set(t for t in topics if isinstance(t, str)) if topic_name_problem(t)}
    metric_cols = {k: c for k in METRIC_COLUMNS if (c := columns.get(k)) is not None and any(v is not None for v in c)}
    for i in range(n):
        row = row_numbers[i] if row_numbers is not None else i
        topic, part = topics[i], parts[i]
        if typed:
            rep, leader, isr = replicas_col[i], leaders[i], isrs[i] or ()
            size = sizes[i] if sizes is not None else None
            rate = rates[i] if rates is not None else None
            off = (offlines[i] if offlines is not None else None) or ()
            rdirs = (dirs[i] if dirs is not None else None) or ()
            rep_set = set(rep or ())
            if (
                topic and topic not in bad_topics and part is not None and 0 <= part <= INT32_MAX
                and (topic, part) not in seen
                and rep and len(rep_set) == len(rep) and known_brokers.issuperset(rep_set)
                and (leader is None or leader == -1 or leader in rep_set)
                and rep_set.issuperset(isr) and len(set(isr)) == len(isr)
                and (size is None or 0 <= size <= INT64_MAX) and (rate is None or 0 <= rate < math.inf)  # NaN fails
                and rep_set.issuperset(off)
                and (not rdirs or (len(rdirs) == len(rep) and all(d is None or d for d in rdirs)))
            ):  # fmt: skip
                extras = _metric_extras(metric_cols, i, f"partitions[{row}] {topic}-{part}", problems) if metric_cols else {}
                if extras is None:
                    continue
                seen[(topic, part)] = row
                out.append(Partition(topic, part, tuple(rep), -1 if leader is None else leader, tuple(isr), size,
                                     rate, tuple(off), tuple(rdirs), **extras))  # fmt: skip
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
        replica_dirs = _replica_dirs(dirs[i] if dirs is not None else None, replicas, where, problems)
        if replica_dirs is None:
            ok = False
        extras = _metric_extras(metric_cols, i, where, problems) if metric_cols else {}
        if ok and extras is not None:
            out.append(Partition(topic, part, replicas, leader, isr, size, rate, offline, replica_dirs or (), **extras))
    out.sort(key=lambda p: (p.topic, p.partition))
    return out


def parse_header(raw: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    cluster_id = raw.get("cluster_id")
    problem = cluster_id_problem(cluster_id)
    if problem:
        problems.append(f"cluster_id: {problem}")
        cluster_id = "?"
    kafka_cluster_id = raw.get("kafka_cluster_id")
    if kafka_cluster_id is not None and (not isinstance(kafka_cluster_id, str) or not kafka_cluster_id.strip()):
        problems.append(f"kafka_cluster_id: must be a non-empty string (Kafka's cluster id) or absent, "
                        f"got {json.dumps(kafka_cluster_id)}")
        kafka_cluster_id = None
    controller = raw.get("controller", "kraft")
    if controller not in CONTROLLERS:
        problems.append(f"controller: must be one of {', '.join(CONTROLLERS)}, got {json.dumps(controller)}")
        controller = "kraft"
    rate_window = raw.get("rate_window_seconds")
    if rate_window is not None and not (finite_number(rate_window, 0) and rate_window > 0):
        problems.append(f"rate_window_seconds: must be a positive number of seconds or absent, got {json.dumps(rate_window)}")
        rate_window = None
    metrics_source = _metrics_source(raw.get("metrics"), problems)
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
        "kafka_cluster_id": kafka_cluster_id,
        "controller": controller,
        "captured_at": captured_at,
        "rate_window_seconds": None if rate_window is None else float(rate_window),
        "metrics_source": metrics_source,
        "configs": configs,
        "brokers": _brokers(raw.get("brokers"), problems),
        "topics": topics,
    }


def snapshot_from_dict(raw: Any, source: str = "snapshot") -> Snapshot:
    """Build a validated snapshot from its JSON form; raise SnapshotError listing every problem."""
    if not isinstance(raw, dict):
        raise SnapshotError(source, [f"top level must be a JSON object, got {type(raw).__name__}"])
    problems: list[str] = []
    head = parse_header(raw, problems)
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
        "log_dirs": [r.get("log_dirs") for r in kept],
        **{k: [r.get(k) for r in kept] for k in METRIC_COLUMNS},
    }
    partitions = validate_partitions(columns, {b.id for b in head["brokers"]}, problems, keep)
    if problems:
        raise SnapshotError(source, problems)
    return Snapshot(partitions=tuple(partitions), **{**head, "brokers": tuple(head["brokers"])})
