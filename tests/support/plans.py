"""Write contract-conforming plan directories (docs/PLAN_FORMAT.md) for executor tests.

Stands in for the planner: the throttles follow the contract's rules, the hashes are
computed by ``kafka_rebalance.plan_dir`` exactly as the contract states. The validation
verdict is written as if the gate had judged it (``status``), with a result.json to match.
"""

from __future__ import annotations

import json
from pathlib import Path

from kafka_rebalance.cluster.admin import TP
from kafka_rebalance.plan_dir import FORMAT_VERSION, batch_dir_name, dump, file_sha256, seal, write_validation_verdict
from kafka_rebalance.snapshot import Snapshot


def dump_text(value) -> str:
    return dump(value).decode("utf-8")


def _assignment_json(parts: dict[TP, tuple[int, ...]]) -> dict:
    return {"version": 1, "partitions": [
        {"topic": tp.topic, "partition": tp.partition, "replicas": list(r), "log_dirs": ["any"] * len(r)}
        for tp, r in sorted(parts.items())]}


def throttles_for(before: dict[TP, tuple[int, ...]], after: dict[TP, tuple[int, ...]], rate: int) -> dict:
    brokers: set[int] = set()
    leader: dict[str, set[tuple[int, int]]] = {}
    follower: dict[str, set[tuple[int, int]]] = {}
    for tp, old in before.items():
        new = after[tp]
        if set(new) == set(old):
            continue
        brokers.update(old)
        brokers.update(new)
        leader.setdefault(tp.topic, set()).update((tp.partition, b) for b in old)
        follower.setdefault(tp.topic, set()).update((tp.partition, b) for b in new if b not in old)
    fmt = lambda s: ",".join(f"{p}:{b}" for p, b in sorted(s))  # noqa: E731
    return {
        "rate_bytes_per_sec": rate,
        "brokers": {str(b): {"follower.replication.throttled.rate": str(rate), "leader.replication.throttled.rate": str(rate)}
                    for b in sorted(brokers)},
        "topics": {t: {"follower.replication.throttled.replicas": fmt(follower.get(t, set())),
                       "leader.replication.throttled.replicas": fmt(leader[t])} for t in sorted(leader)},
    }


def write_plan(plan_dir: Path, snap: Snapshot, batches: list[dict[TP, tuple[int, ...]]], *, rate: int = 52428800,
               status: str = "passed", election_batch_size: int = 1000, schedule: bool = True) -> Path:
    plan_dir.mkdir(parents=True, exist_ok=True)
    current = {TP(p.topic, p.partition): tuple(p.replicas) for p in snap.partitions}
    sizes = {TP(p.topic, p.partition): p.size_bytes or 0 for p in snap.partitions}
    files: dict[str, str] = {}
    meta = []
    for i, targets in enumerate(batches, start=1):
        bid = batch_dir_name(i, len(batches))
        before = {tp: current[tp] for tp in targets}
        throttles = throttles_for(before, targets, rate)
        moved = sum(sizes[tp] * len(set(t) - set(before[tp])) for tp, t in targets.items())
        d = plan_dir / "batches" / bid
        d.mkdir(parents=True, exist_ok=True)
        (d / "reassignment.json").write_text(dump_text(_assignment_json(targets)))
        (d / "rollback.json").write_text(dump_text(_assignment_json(before)))
        (d / "throttles.json").write_text(dump_text(throttles))
        for name in ("reassignment", "rollback", "throttles"):
            files[f"batches/{bid}/{name}.json"] = file_sha256(d / f"{name}.json")
        kind = "reorder" if all(set(t) == set(before[tp]) for tp, t in targets.items()) else "move"
        moves = sum(len(set(t) - set(before[tp])) for tp, t in targets.items())
        meta.append({"id": bid, "kind": kind, "partitions": len(targets), "replica_moves": moves, "bytes": moved,
                     "estimated_seconds": round(moved / rate, 1)})
        current.update(targets)
    if schedule:
        (plan_dir / "schedule.json").write_text(dump_text(_schedule(snap, batches, meta, rate)))
        files["schedule.json"] = file_sha256(plan_dir / "schedule.json")
    elect = sorted({tp for b in batches for tp in b})
    (plan_dir / "election.json").write_text(dump_text({"partitions": [{"topic": t.topic, "partition": t.partition} for t in elect]}))
    (plan_dir / "RUNBOOK.md").write_text("# Runbook\n\nkafka-rebalance execute --plan .\n")
    for name in ("election.json", "RUNBOOK.md"):
        files[name] = file_sha256(plan_dir / name)
    options = {"throttle_bytes_per_sec": rate, "election_batch_size": election_batch_size, "ordering": "small-first"}
    snap_sha = snap.fingerprint()
    manifest = seal({
        "format_version": FORMAT_VERSION, "tool_version": "0.1.0", "cluster_id": snap.cluster_id,
        "snapshot": {"sha256": snap_sha, "captured_at": snap.captured_at, "path": "snapshot.json"},
        "options": options, "files": files, "batches": meta, "summary": {},
    })
    (plan_dir / "plan.json").write_text(dump_text(manifest))
    if status != "pending":
        judge(plan_dir, status)
    return plan_dir


def _schedule(snap: Snapshot, batches: list[dict[TP, tuple[int, ...]]], meta: list[dict], rate: int) -> dict:
    """schedule.json for these batches: their data moves in batch order, each after its partition's previous step.

    No per-broker limit to speak of (1000): the executor may start every step whose partition is ready.
    """
    current = {TP(p.topic, p.partition): tuple(p.replicas) for p in snap.partitions}
    leader = {TP(p.topic, p.partition): p.leader for p in snap.partitions}
    sizes = {TP(p.topic, p.partition): p.size_bytes or 0 for p in snap.partitions}
    steps: list[dict] = []
    last: dict[TP, int] = {}
    clock = 0.0
    for targets, row in zip(batches, meta):
        for tp, target in sorted(targets.items()):
            before = current[tp]
            if set(before) != set(target):
                steps.append({"adds": [b for b in target if b not in before], "after": last.get(tp), "batch": row["id"],
                              "before": list(before), "bytes": sizes[tp], "estimated_end_s": clock + row["estimated_seconds"],
                              "estimated_start_s": clock, "id": len(steps), "leader": leader[tp], "partition": tp.partition,
                              "produce_bytes_per_sec": 0.0, "removes": [b for b in before if b not in target],
                              "replicas": list(target), "topic": tp.topic})
                last[tp] = len(steps) - 1
                if leader[tp] not in target:
                    leader[tp] = target[0]
            current[tp] = target
        clock += row["estimated_seconds"]
    return {"version": 1, "throttle_bytes_per_sec": rate, "max_moves_per_broker": 1000, "max_in_flight": 1000,
            "estimated_seconds": clock, "physical_bound_seconds": clock, "steps": steps}


def judge(plan_dir: Path, status: str, plan_hash: str | None = None) -> None:
    """Record a validation verdict (and its result.json) for the plan as it is now, or for ``plan_hash``."""
    judged = plan_hash or json.loads((plan_dir / "plan.json").read_text())["plan_hash"]
    (plan_dir / "validation").mkdir(exist_ok=True)
    (plan_dir / "validation" / "result.json").write_text(dump_text({"status": status, "plan_hash": judged, "suites": []}))
    write_validation_verdict(plan_dir, status, judged)


def move_one_replica(snap: Snapshot, count: int, skip: int = 0) -> dict[TP, tuple[int, ...]]:
    """Targets that replace each partition's last replica by a broker outside its replica set."""
    out: dict[TP, tuple[int, ...]] = {}
    ids = [b.id for b in snap.brokers if b.alive]
    for p in snap.partitions[skip:skip + count]:
        spare = [b for b in ids if b not in p.replicas]
        out[TP(p.topic, p.partition)] = tuple(p.replicas[:-1]) + (spare[(p.partition) % len(spare)],)
    return out


def read_json(path: Path) -> dict:
    return json.loads(path.read_text())
