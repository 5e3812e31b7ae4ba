"""Plan directories for tests: the planner's own (``plan_dir`` and readers of what it wrote), and
hand-built ones that conform to the contract (docs/PLAN_FORMAT.md) with every file known.

Hand-built plans stand in for the planner: the throttles follow the contract's rules and the hashes
are computed by ``kafka_rebalance.plan_dir`` exactly as the contract states. ``write_plan`` is the
executor tests' (canonical files, a schedule, and a verdict as if the gate had judged it);
``write_gate_plan`` is the gate's tests' (an explicit election, options in full, no verdict), and
``restamp`` re-records the hashes after a test corrupts a file, so the corruption trips only the
expectation that guards against it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kafka_rebalance.cluster.admin import TP
from kafka_rebalance.plan_dir import FORMAT_VERSION, batch_dir_name, dump, file_sha256, record_approval, seal, write_validation_verdict
from kafka_rebalance.planner import PlanOptions, make_plan
from kafka_rebalance.planner import write_plan as write_planner_plan
from kafka_rebalance.snapshot import Snapshot, load_snapshot

# --------------------------------------------------------------------------- the planner's plans


def plan_dir(snap: Snapshot, out: Path, **options: Any) -> dict[str, Any]:
    manifest, _ = write_planner_plan(make_plan(snap, PlanOptions(**options)), out, "snapshot.json")
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


# --------------------------------------------------------------------------- hand-built plans


def final_rows(plan: Any) -> dict[tuple[str, int], tuple[int, ...]]:
    """Every partition's replicas once the planner's (in-memory) plan ran: the snapshot's, then each step's."""
    rows = {(p.topic, p.partition): tuple(p.replicas) for p in plan.snapshot.partitions}
    for batch in plan.batches:
        for s in batch.steps:
            rows[(s.topic, s.partition)] = tuple(s.after)
    return rows


def dump_text(value) -> str:
    return dump(value).decode("utf-8")


def assignment_json(parts: dict[TP, tuple[int, ...]]) -> dict:
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
        (d / "reassignment.json").write_text(dump_text(assignment_json(targets)))
        (d / "rollback.json").write_text(dump_text(assignment_json(before)))
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
        # as the planner does: recorded only when the snapshot knows Kafka's own cluster id
        **({"kafka_cluster_id": snap.kafka_cluster_id} if snap.kafka_cluster_id is not None else {}),
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


def approve(plan_dir: Path, by: str = "test") -> Path:
    """Record an approval as a human would (kafka-rebalance approve checks age and verdict first; the tests
    of those checks use the command). Returns the plan directory, for chaining."""
    record_approval(plan_dir, "approved", by)
    return plan_dir


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


# --------------------------------------------------------------------------- hand-built plans for the gate

DEFAULT_OPTIONS: dict[str, Any] = {
    "throttle_bytes_per_sec": 52428800, "max_partitions_per_batch": 2, "max_moves_per_broker": 5,
    "max_new_replicas_per_partition": 1, "ordering": "small-first", "exclude_topics": [],
    "decommission_brokers": [], "byte_tolerance": 0.1, "election_batch_size": 1000,
    "threshold_percentage": 10.0, "threshold_source": "default", "replication_factor": None,
    "optimizer": "auto",
}

Move = tuple[str, int, list[int]]


def write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _reassignment(moves: list[Move]) -> dict[str, Any]:
    return {"version": 1, "partitions": [  # in the order given, as a hand-edited file might be
        {"topic": t, "partition": p, "replicas": list(r), "log_dirs": ["any"] * len(r)} for t, p, r in moves]}


def restamp(plan_dir: Path) -> None:
    """Record the current bytes of every staged file and the resulting plan hash in plan.json."""
    manifest = json.loads((plan_dir / "plan.json").read_text())
    files = {"election.json": file_sha256(plan_dir / "election.json")}
    for listed in ("RUNBOOK.md", "schedule.json"):  # the planner lists them; keep them listed
        if listed in manifest.get("files", {}):
            files[listed] = file_sha256(plan_dir / listed)
    for f in sorted((plan_dir / "batches").rglob("*.json")):
        files[f.relative_to(plan_dir).as_posix()] = file_sha256(f)
    manifest["files"] = dict(sorted(files.items()))
    write_json(plan_dir / "plan.json", seal(manifest))


def write_gate_plan(plan_dir: Path, snapshot_path: Path, batches: list[list[Move]], election: list[tuple[str, int]],
                    **options: Any) -> Path:
    snap = load_snapshot(snapshot_path)
    opts = {**DEFAULT_OPTIONS, **options}
    state = {(p.topic, p.partition): p.replicas for p in snap.partitions}
    summary_batches = []
    for i, moves in enumerate(batches, start=1):
        bid = f"{i:03d}"
        base = plan_dir / "batches" / bid
        before = dict(state)
        write_json(base / "reassignment.json", _reassignment(moves))
        write_json(base / "rollback.json", _reassignment([(t, p, list(before[(t, p)])) for t, p, _ in moves]))
        moved = {TP(t, p): tuple(r) for t, p, r in moves}
        write_json(base / "throttles.json", throttles_for({tp: tuple(before[tp]) for tp in moved}, moved, opts["throttle_bytes_per_sec"]))
        data = [m for m in moves if set(m[2]) != set(before[(m[0], m[1])])]
        summary_batches.append({"id": bid, "kind": "move" if data else "reorder", "partitions": len(moves),
                                "replica_moves": sum(len(set(m[2]) - set(before[(m[0], m[1])])) for m in data),
                                "bytes": 0, "estimated_seconds": 0.0})
        for t, p, r in moves:
            state[(t, p)] = tuple(r)
    write_json(plan_dir / "election.json", {"partitions": [{"topic": t, "partition": p} for t, p in sorted(election)]})
    (plan_dir / "RUNBOOK.md").write_text("# Runbook\n")
    write_json(plan_dir / "plan.json", {
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
    write_json(path, snapshot or small_snapshot())
    moves = small_plan_moves() if moves is None else moves
    election = sorted({(t, p) for batch in moves for t, p, _ in batch} | {("audit", i) for i in range(len(AUDIT))})
    return write_gate_plan(tmp / "plan", path, moves, election, **{"exclude_topics": ["audit"], **options}), path
