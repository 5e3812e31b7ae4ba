"""Hand-built snapshots and a plan-directory reader for the planner tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kafka_rebalance.planner import PlanOptions, make_plan, write_plan
from kafka_rebalance.snapshot import Snapshot, snapshot_from_dict

GiB = 1024**3


def snapshot(brokers: list[Any], partitions: list[dict[str, Any]], cluster_id: str = "test") -> Snapshot:
    """brokers: ids, or (id, rack) / (id, rack, alive) tuples; partitions: dicts with at least topic/partition/replicas."""
    bl = []
    for b in brokers:
        if isinstance(b, int):
            bl.append({"id": b})
        else:
            bid, rack, *rest = b
            bl.append({"id": bid, "rack": rack, "alive": rest[0] if rest else True})
    parts = []
    for p in partitions:
        row = {"leader": p["replicas"][0], "isr": list(p["replicas"]), "size_bytes": GiB, **p}
        parts.append(row)
    return snapshot_from_dict(
        {"cluster_id": cluster_id, "captured_at": "2026-01-01T00:00:00Z", "brokers": bl, "partitions": parts}
    )


def part(topic: str, partition: int, replicas: list[int], **kw: Any) -> dict[str, Any]:
    return {"topic": topic, "partition": partition, "replicas": replicas, **kw}


def plan_dir(snap: Snapshot, out: Path, **options: Any) -> dict[str, Any]:
    manifest, _ = write_plan(make_plan(snap, PlanOptions(**options)), out, "snapshot.json")
    return manifest


def read(out: Path, rel: str) -> Any:
    return json.loads((out / rel).read_text())


def batches(out: Path) -> list[dict[str, Any]]:
    """Per batch: kind, reassignment, rollback, throttles (in execution order)."""
    manifest = read(out, "plan.json")
    return [
        {
            "id": b["id"],
            "kind": b["kind"],
            "reassignment": read(out, f"batches/{b['id']}/reassignment.json")["partitions"],
            "rollback": read(out, f"batches/{b['id']}/rollback.json")["partitions"],
            "throttles": read(out, f"batches/{b['id']}/throttles.json"),
        }
        for b in manifest["batches"]
    ]


def final_assignment(snap: Snapshot, out: Path) -> dict[tuple[str, int], list[int]]:
    """The snapshot's assignment with every batch applied in order (checking each rollback matches)."""
    current = {(p.topic, p.partition): list(p.replicas) for p in snap.partitions}
    for b in batches(out):
        for before, after in zip(b["rollback"], b["reassignment"]):
            key = (after["topic"], after["partition"])
            assert (before["topic"], before["partition"]) == key
            assert current[key] == before["replicas"], f"batch {b['id']} rollback of {key} is not the state before it"
            current[key] = after["replicas"]
    return current
