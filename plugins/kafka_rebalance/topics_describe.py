"""Import the text that ``kafka-topics.sh --describe`` prints into a snapshot.

Operators have that output at hand long before they have a metadata pipeline.
Both the old layout (``Topic:foo  PartitionCount:6``) and the 3.x+ layout (tabs,
``TopicId``, ``Elr``/``LastKnownElr``) parse. ``Leader: none`` becomes -1. The text
has no racks or sizes, so racks come from an optional rack map and sizes stay
unknown. A broker that appears only in ``Offline:`` lists is marked not alive.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.snapshot import Snapshot, snapshot_from_dict
from kafka_rebalance.userinput import INT32_MAX, InputError, is_ascii_digits, loads_json, parse_int, read_text

_KEYS = (
    "Topic", "TopicId", "PartitionCount", "ReplicationFactor", "Configs", "Partition", "Leader",
    "Replicas", "Isr", "Offline", "Elr", "LastKnownElr", "MarkedForDeletion",
    "Adding Replicas", "Removing Replicas", "Directories",
)  # fmt: skip
_KEY_RE = re.compile(r"(?:(?<=\s)|^)(" + "|".join(re.escape(k) for k in _KEYS) + r"):")


def _fields(line: str) -> dict[str, str]:
    matches = list(_KEY_RE.finditer(line))
    out: dict[str, str] = {}
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(line)
        out[m.group(1)] = line[m.end() : end].strip()
    return out


def _configs(text: str) -> dict[str, str]:
    # Values may contain commas (throttled-replica lists): a chunk without '=' continues the previous value.
    out: dict[str, str] = {}
    last: str | None = None
    for chunk in text.split(","):
        if "=" in chunk:
            k, v = chunk.split("=", 1)
            last = k.strip()
            out[last] = v.strip()
        elif last is not None and chunk.strip():
            out[last] += "," + chunk.strip()
    return out


def _ids(text: str, where: str, field: str) -> list[int]:
    text = text.strip()
    if not text:
        return []
    items = [x.strip() for x in text.split(",")]
    # An empty item is a cut-off line ("Replicas: 1,2,"): guessing the rest would invent a cluster.
    if not all(is_ascii_digits(x) and int(x) <= INT32_MAX for x in items):
        raise RebalanceError(f"{where}: {field}: expected comma-separated broker ids, got '{text}'")
    return [int(x) for x in items]


def parse_rack_map(path: str | Path) -> dict[int, str]:
    """A rack map: JSON ``{"0": "rack-a"}`` or lines ``0 rack-a`` / ``0:rack-a`` / ``0=rack-a``.

    A broker given two different racks is refused, naming both: which one is right is the
    operator's call, and placement on the wrong one breaks rack-awareness silently.
    """
    p = Path(path)
    text = read_text(p, "rack map file")
    raw = None
    if text.lstrip().startswith("{"):  # JSON: then it must be valid JSON, not fall through to the line format
        raw = loads_json(text, str(p))
    out: dict[int, str] = {}
    where: dict[int, str] = {}

    def put(bid: int, rack: str, at: str) -> None:
        if bid in out and out[bid] != rack:
            raise RebalanceError(f"{p}: broker {bid} is listed in two racks: {out[bid]!r} ({where[bid]}) and {rack!r} ({at})")
        if bid not in out:
            out[bid], where[bid] = rack, at

    if isinstance(raw, dict):
        for k, v in raw.items():
            if not (is_ascii_digits(k) and int(k) <= INT32_MAX) or not isinstance(v, str) or not v:
                raise RebalanceError(f"{p}: entry {json.dumps(k)}: {json.dumps(v)} must map a broker id to a rack name")
            put(int(k), v, f"key {json.dumps(k)}")  # "1" and "01" are the same broker
        return out
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = re.split(r"[\s:=,]+", line, maxsplit=1)
        if len(parts) != 2 or not (is_ascii_digits(parts[0]) and int(parts[0]) <= INT32_MAX) or not parts[1]:
            raise RebalanceError(f"{p}:{n}: expected '<broker id> <rack>', got '{line}'")
        put(int(parts[0]), parts[1].strip(), f"line {n}")
    return out


def parse_topics_describe(
    text: str, cluster_id: str, rack_map: dict[int, str] | None = None, source: str = "describe output"
) -> Snapshot:
    topics: dict[str, dict[str, Any]] = {}
    partitions: list[dict[str, Any]] = []
    offline: set[int] = set()
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        f = _fields(line)
        where = f"{source}:{n}"
        if "Partition" in f and "Replicas" in f:
            missing = [k for k in ("Topic", "Leader", "Isr") if k not in f]
            if missing:
                # kafka-topics prints every one of them: a line without is cut off or edited.
                raise RebalanceError(f"{where}: partition line without {', '.join(k + ':' for k in missing)} (truncated?)")
            try:
                part = parse_int(f["Partition"], f"{where}: Partition", 0, INT32_MAX, "a partition number")
            except InputError as exc:
                raise RebalanceError(str(exc)) from None
            leader_txt = f["Leader"].strip()
            if leader_txt in ("none", "-1"):
                leader = -1
            elif is_ascii_digits(leader_txt) and int(leader_txt) <= INT32_MAX:
                leader = int(leader_txt)
            else:
                raise RebalanceError(f"{where}: Leader: expected a broker id or 'none', got '{leader_txt}'")
            replicas = _ids(f["Replicas"], where, "Replicas")
            if not replicas:
                raise RebalanceError(f"{where}: Replicas: empty (truncated line?)")
            row: dict[str, Any] = {
                "topic": f["Topic"],
                "partition": part,
                "replicas": replicas,
                "leader": leader,
                "isr": _ids(f["Isr"], where, "Isr"),
            }
            for extra in ("Elr", "LastKnownElr"):  # KIP-966 (Kafka 3.7+); "N/A" when the broker does not report it
                if f.get(extra, "").strip() != "N/A":
                    _ids(f.get(extra, ""), where, extra)
            off = _ids(f.get("Offline", ""), where, "Offline")
            if off:
                row["offline_replicas"] = off
                offline.update(off)
            partitions.append(row)
            topics.setdefault(f["Topic"], {"configs": {}})
        elif "Topic" in f and ("PartitionCount" in f or "Configs" in f):
            topics[f["Topic"]] = {"configs": _configs(f.get("Configs", ""))}
        else:
            raise RebalanceError(f"{where}: not a line of kafka-topics.sh --describe output: '{line.strip()[:80]}'")
    if not partitions:
        raise RebalanceError(f"{source}: no partition lines found (expected 'Topic: ... Partition: ... Replicas: ...')")
    seen = {r for p in partitions for r in p["replicas"]} | set(rack_map or {})
    # A broker that hosts something but is named only in Offline lists is down.
    alive = {r for p in partitions for r in p["isr"]} | {p["leader"] for p in partitions}
    brokers = [
        {"id": b, "rack": (rack_map or {}).get(b), "alive": not (b in offline and b not in alive)}
        for b in sorted(seen)
    ]
    raw = {"cluster_id": cluster_id, "brokers": brokers, "topics": topics, "partitions": partitions}
    return snapshot_from_dict(raw, source)
