"""Builds contract-conforming plan directories (docs/PLAN_FORMAT.md) for the gate's tests.

Used for a hand-built plan whose every file is known; tests on real planner output
live beside it. ``restamp`` re-records hashes after a test corrupts a file, so the
corruption trips only the expectation that guards against it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from kafka_rebalance.plan_dir import FORMAT_VERSION, seal
from kafka_rebalance.snapshot import load_snapshot

DEFAULT_OPTIONS: dict[str, Any] = {
    "throttle_bytes_per_sec": 52428800, "max_partitions_per_batch": 2, "max_moves_per_broker": 5,
    "max_new_replicas_per_partition": 1, "ordering": "small-first", "exclude_topics": [],
    "decommission_brokers": [], "byte_tolerance": 0.1, "election_batch_size": 1000,
    "threshold_percentage": 10.0, "threshold_source": "default", "replication_factor": None,
    "optimizer": "auto",
}

Move = tuple[str, int, list[int]]


def dump(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _throttles(moves: list[Move], before: dict[tuple[str, int], tuple[int, ...]], rate: int) -> dict[str, Any]:
    brokers: set[int] = set()
    topics: dict[str, dict[str, list[tuple[int, int]]]] = {}
    for topic, part, new in moves:
        old = before[(topic, part)]
        if set(old) == set(new):
            continue
        brokers |= set(old) | set(new)
        t = topics.setdefault(topic, {"leader": [], "follower": []})
        t["leader"] += [(part, b) for b in old]
        t["follower"] += [(part, b) for b in new if b not in old]
    as_text = lambda pairs: ",".join(f"{p}:{b}" for p, b in sorted(pairs))  # noqa: E731
    return {
        "rate_bytes_per_sec": rate,
        "brokers": {str(b): {"follower.replication.throttled.rate": str(rate), "leader.replication.throttled.rate": str(rate)}
                    for b in sorted(brokers)},
        "topics": {t: {"follower.replication.throttled.replicas": as_text(v["follower"]),
                       "leader.replication.throttled.replicas": as_text(v["leader"])} for t, v in sorted(topics.items())},
    }


def _reassignment(moves: list[Move]) -> dict[str, Any]:
    return {"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": list(r), "log_dirs": ["any"] * len(r)} for t, p, r in moves]}


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def restamp(plan_dir: Path) -> None:
    """Record the current bytes of every staged file and the resulting plan hash in plan.json."""
    manifest = json.loads((plan_dir / "plan.json").read_text())
    files = {"election.json": sha(plan_dir / "election.json")}
    for listed in ("RUNBOOK.md", "schedule.json"):  # the planner lists them; keep them listed
        if listed in manifest.get("files", {}):
            files[listed] = sha(plan_dir / listed)
    for f in sorted((plan_dir / "batches").rglob("*.json")):
        files[f.relative_to(plan_dir).as_posix()] = sha(f)
    manifest["files"] = dict(sorted(files.items()))
    dump(plan_dir / "plan.json", seal(manifest))


def write_plan(plan_dir: Path, snapshot_path: Path, batches: list[list[Move]], election: list[tuple[str, int]],
               **options: Any) -> Path:
    snap = load_snapshot(snapshot_path)
    opts = {**DEFAULT_OPTIONS, **options}
    state = {(p.topic, p.partition): p.replicas for p in snap.partitions}
    summary_batches = []
    for i, moves in enumerate(batches, start=1):
        bid = f"{i:03d}"
        base = plan_dir / "batches" / bid
        before = dict(state)
        dump(base / "reassignment.json", _reassignment(moves))
        dump(base / "rollback.json", _reassignment([(t, p, list(before[(t, p)])) for t, p, _ in moves]))
        dump(base / "throttles.json", _throttles(moves, before, opts["throttle_bytes_per_sec"]))
        data = [m for m in moves if set(m[2]) != set(before[(m[0], m[1])])]
        summary_batches.append({"id": bid, "kind": "move" if data else "reorder", "partitions": len(moves),
                                "replica_moves": sum(len(set(m[2]) - set(before[(m[0], m[1])])) for m in data),
                                "bytes": 0, "estimated_seconds": 0.0})
        for t, p, r in moves:
            state[(t, p)] = tuple(r)
    dump(plan_dir / "election.json", {"partitions": [{"topic": t, "partition": p} for t, p in sorted(election)]})
    (plan_dir / "RUNBOOK.md").write_text("# Runbook\n")
    dump(plan_dir / "plan.json", {
        "format_version": FORMAT_VERSION, "tool_version": "0.1.0", "cluster_id": snap.cluster_id,
        "snapshot": {"sha256": snap.fingerprint(), "captured_at": snap.captured_at, "path": str(snapshot_path)},
        "options": opts, "files": {}, "batches": summary_batches, "summary": {},
    })
    restamp(plan_dir)
    return plan_dir


# --------------------------------------------------------------------------- a small cluster and its plan

RACKS = {0: "rack-a", 1: "rack-b", 2: "rack-a", 3: "rack-b"}
# Broker 1 holds every 'orders' partition; the plan hands half of them to broker 3.
ORDERS_BEFORE = [(0, 1), (1, 2), (2, 1), (1, 0), (0, 1), (1, 0), (2, 1), (1, 2)]
ORDERS_AFTER = [(0, 1), (1, 2), (2, 3), (3, 0), (0, 3), (1, 0), (2, 1), (3, 2)]
AUDIT = [(0, 3), (1, 2), (2, 1), (3, 0)]
SIZE = 1_000_000
# Sizes chosen so that the plan leaves every broker at exactly the mean (7 units): orders-6
# and audit-0 are twice the others. Swapping orders-0 and orders-6 between brokers 0 and 2
# keeps every count but not the bytes (see test_bytes_not_worse_off).
UNITS = {("orders", 6): 2, ("audit", 0): 2}


def small_snapshot() -> dict[str, Any]:
    parts = []
    for topic, layout in (("audit", AUDIT), ("orders", ORDERS_BEFORE)):
        for i, reps in enumerate(layout):
            # audit partitions are led by their second replica: the plan's election fixes that
            leader = reps[1] if topic == "audit" else reps[0]
            parts.append({"topic": topic, "partition": i, "replicas": list(reps), "leader": leader, "isr": list(reps),
                          "size_bytes": SIZE * UNITS.get((topic, i), 1), "bytes_in_per_sec": 100.0})
    return {
        "cluster_id": "test-1", "captured_at": "2026-01-01T00:00:00Z", "controller": "kraft", "configs": {},
        "brokers": [{"id": b, "rack": r, "alive": True, "configs": {}} for b, r in RACKS.items()],
        "topics": {"audit": {"configs": {}}, "orders": {"configs": {}}},
        "partitions": parts,
    }


def small_plan_moves() -> list[list[Move]]:
    moves = [("orders", i, list(after)) for i, (before, after) in enumerate(zip(ORDERS_BEFORE, ORDERS_AFTER)) if before != after]
    return [moves[:2], moves[2:]]


def small_plan(tmp: Path, snapshot: dict[str, Any] | None = None, moves: list[list[Move]] | None = None,
               **options: Any) -> tuple[Path, Path]:
    path = tmp / "snapshot.json"
    dump(path, snapshot or small_snapshot())
    moves = small_plan_moves() if moves is None else moves
    election = sorted({(t, p) for batch in moves for t, p, _ in batch} | {("audit", i) for i in range(len(AUDIT))})
    return write_plan(tmp / "plan", path, moves, election, **{"exclude_topics": ["audit"], **options}), path
