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


def _ids(text: str, where: str) -> list[int]:
    text = text.strip()
    if not text:
        return []
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise RebalanceError(f"{where}: expected comma-separated broker ids, got '{text}'") from None


def parse_rack_map(path: str | Path) -> dict[int, str]:
    """A rack map: JSON ``{"0": "rack-a"}`` or lines ``0 rack-a`` / ``0:rack-a`` / ``0=rack-a``."""
    p = Path(path)
    if not p.exists():
        raise RebalanceError(f"{p}: rack map file does not exist")
    text = p.read_text(encoding="utf-8")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError:
        raw = None
    out: dict[int, str] = {}
    if isinstance(raw, dict):
        for k, v in raw.items():
            if not str(k).isdigit() or not isinstance(v, str) or not v:
                raise RebalanceError(f"{p}: entry {json.dumps(k)}: {json.dumps(v)} must map a broker id to a rack name")
            out[int(k)] = v
        return out
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = re.split(r"[\s:=,]+", line, maxsplit=1)
        if len(parts) != 2 or not parts[0].isdigit() or not parts[1]:
            raise RebalanceError(f"{p}:{n}: expected '<broker id> <rack>', got '{line}'")
        out[int(parts[0])] = parts[1].strip()
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
            if "Topic" not in f:
                raise RebalanceError(f"{where}: partition line without 'Topic:'")
            try:
                part = int(f["Partition"])
            except ValueError:
                raise RebalanceError(f"{where}: Partition must be an integer, got '{f['Partition']}'") from None
            leader_txt = f.get("Leader", "none").strip()
            if leader_txt in ("none", "-1", ""):
                leader = -1
            else:
                try:
                    leader = int(leader_txt)
                except ValueError:
                    raise RebalanceError(f"{where}: Leader must be a broker id or 'none', got '{leader_txt}'") from None
            row: dict[str, Any] = {
                "topic": f["Topic"],
                "partition": part,
                "replicas": _ids(f["Replicas"], where),
                "leader": leader,
                "isr": _ids(f.get("Isr", ""), where),
            }
            off = _ids(f.get("Offline", ""), where)
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
