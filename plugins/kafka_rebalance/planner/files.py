"""Writing a plan directory exactly as docs/PLAN_FORMAT.md specifies, atomically.

Everything is rendered in memory first, written to a hidden temporary directory
beside DIR and renamed into place only when complete, so a failure never leaves a
partial directory that looks like a plan. An existing non-empty DIR is refused
unless it already holds this very plan (same plan hash, every file byte-identical).
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import Any

from kafka_rebalance import __version__
from kafka_rebalance.atomic import atomic_directory
from kafka_rebalance.errors import PlanError
from kafka_rebalance.estimates import CONTINUOUS_STEP_FIELD, TENTHS, tenths
from kafka_rebalance.plan_dir import (
    ELECTION_FILE,
    FORMAT_VERSION,
    PLAN_FILE,
    RUNBOOK_FILE,
    SCHEDULE_FILE,
    PlanDirError,
    batch_dir_name,
    batch_file,
    dump,
    enclosing_plan_dir,
    read_manifest,
    seal,
    sha256_bytes,
)
from kafka_rebalance.planner import runbook
from kafka_rebalance.planner.core import Plan
from kafka_rebalance.planner.estimate import step_figures
from kafka_rebalance.planner.steps import ANY_LOG_DIR


def _entries(steps, which: str) -> dict[str, Any]:
    return {
        "version": 1,
        "partitions": [
            {
                "topic": s.topic,
                "partition": s.partition,
                "replicas": list(getattr(s, which)),
                # A rollback names no dir: the replicas go back to their brokers, wherever each puts them.
                "log_dirs": list(s.log_dirs) if which == "after" else [ANY_LOG_DIR] * len(s.before),
            }
            for s in steps
        ],
    }


def reassignment_bytes(steps, which: str) -> bytes:
    """``dump(_entries(steps, which))``, byte for byte, without json's slow indenting encoder.

    Thousands of batch files at a million partitions made the generic encoder the
    slowest part of planning; tests compare this against ``dump`` to keep them equal.
    """
    if not steps:
        return dump(_entries(steps, which))
    out = []
    for s in steps:
        reps = getattr(s, which)
        dirs = s.log_dirs if which == "after" else (ANY_LOG_DIR,) * len(reps)
        out.append(
            '    {\n      "log_dirs": [\n'
            + ",\n".join(f"        {encode_basestring_ascii(d)}" for d in dirs)
            + f'\n      ],\n      "partition": {int(s.partition)},\n      "replicas": [\n'
            + ",\n".join(f"        {int(b)}" for b in reps)
            + f"\n      ],\n      \"topic\": {encode_basestring_ascii(s.topic)}\n    }}"
        )
    return ('{\n  "partitions": [\n' + ",\n".join(out) + '\n  ],\n  "version": 1\n}\n').encode("utf-8")


def schedule_bytes(plan: Plan, batch_of: dict[tuple[int, int], str]) -> bytes:
    """schedule.json: one step per line (a million-partition plan has ~150,000), each with sorted keys.

    The document is ``dump``-compatible JSON in content, laid out compactly: steps in the
    dispatcher's order of preference, each with its partition's previous step (``after``),
    the batch file holding the same step, and its simulated start and end.
    """
    sched = plan.schedule
    head: dict[str, Any] = {
        "version": 1,
        "throttle_bytes_per_sec": plan.options.throttle_bytes_per_sec,
        "throttle_efficiency": plan.options.throttle_efficiency,
        "move_fixed_seconds": plan.options.move_fixed_seconds,
        "max_moves_per_broker": sched.max_moves_per_broker,
        "max_in_flight": sched.max_in_flight,
        "estimated_seconds": tenths(sched.seconds) / TENTHS,
        "physical_bound_seconds": round(sched.bound_seconds, 1),
    }
    if sched.disk is not None:  # only where a broker's disk size is known: other plans are the plans they were
        head["disk_room"] = sched.disk.to_dict()
        if sched.disk.dirs:  # and per log dir where a broker has several (as the log-dir batches leave them)
            head["dir_room"] = sched.disk.dirs_dict()
    lines = []
    for n, item in enumerate(sched.steps):
        s = item.step
        row: dict[str, Any] = {
            "adds": list(s.adds), "after": item.after, "batch": batch_of[(s.p, s.seq)], "before": list(s.before), "bytes": s.size,
            "estimated_end_s": round(item.end, 1), "estimated_start_s": round(item.start, 1), "id": n,
            "leader": s.leader, "partition": s.partition, "produce_bytes_per_sec": s.rate, "removes": list(s.removes), "replicas": list(s.after),
            "topic": s.topic,
        }
        if s.sources:  # the dir of each replica in ``before`` where known: what the executor's ledger frees at its end
            row["sources"] = list(s.sources)
        lines.append(json.dumps(row, sort_keys=True, separators=(",", ":")))
    body = ",\n".join(lines)
    head_text = json.dumps(head, sort_keys=True, separators=(",", ":"))[:-1]
    return (head_text + ',"steps":[\n' + body + ("\n" if lines else "") + "]}\n").encode("utf-8")


def render(plan: Plan, snapshot_path: str) -> tuple[dict[str, bytes], dict[str, Any]]:
    """All files of the plan directory (relative path -> bytes) and the manifest."""
    files: dict[str, bytes] = {}
    batch_rows: list[dict[str, Any]] = []
    figures = step_figures(plan.batches, plan.schedule)
    for n, (batch, throttles, wave, share) in enumerate(zip(plan.batches, plan.throttles, figures.waves, figures.shares),
                                                         start=1):
        bid = batch_dir_name(n, len(plan.batches))
        files[batch_file(bid, "reassignment")] = reassignment_bytes(batch.steps, "after")
        files[batch_file(bid, "rollback")] = reassignment_bytes(batch.steps, "before")
        files[batch_file(bid, "throttles")] = dump(throttles)
        batch_rows.append(
            {
                "id": bid,
                "kind": batch.kind,
                "partitions": len(batch.steps),
                "replica_moves": batch.replica_moves,
                "bytes": batch.bytes,
                "estimated_seconds": wave,
                CONTINUOUS_STEP_FIELD: share,
            }
        )
    batch_of = {(s.p, s.seq): row["id"] for row, batch in zip(batch_rows, plan.batches) for s in batch.steps}
    files[SCHEDULE_FILE] = schedule_bytes(plan, batch_of)
    files[ELECTION_FILE] = dump({"partitions": [{"topic": t, "partition": p} for t, p in plan.elections]})
    snap = plan.snapshot
    manifest: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "tool_version": __version__,
        "cluster_id": snap.cluster_id,
        # Only when known, so plans from snapshots without it are the plans they were.
        **({"kafka_cluster_id": snap.kafka_cluster_id} if snap.kafka_cluster_id is not None else {}),
        "snapshot": {"sha256": snap.fingerprint(), "captured_at": snap.captured_at, "path": snapshot_path},
        "options": plan.options.manifest(),
        "batches": batch_rows,
        "summary": plan.summary,
    }
    files[RUNBOOK_FILE] = runbook.render(manifest, len(plan.elections)).encode("utf-8")
    # Every file listed here is covered by the plan hash, whatever a later format adds.
    manifest["files"] = {path: sha256_bytes(data) for path, data in sorted(files.items())}
    seal(manifest)
    files[PLAN_FILE] = dump(manifest)
    return files, manifest


def _holds_same_plan(out: Path, manifest: dict[str, Any], files: dict[str, bytes]) -> bool:
    try:
        existing = read_manifest(out)
    except PlanDirError:
        return False
    if existing.get("plan_hash") != manifest["plan_hash"]:
        return False
    for path, data in files.items():
        if path == PLAN_FILE:  # same hash: differs at most in the unhashed snapshot.path
            continue
        target = out / path
        if not target.is_file() or target.read_bytes() != data:
            return False
    return True


def write_plan(plan: Plan, out: str | Path, snapshot_path: str) -> tuple[dict[str, Any], str]:
    """Write the plan directory; returns (manifest, "written" | "unchanged")."""
    out = Path(out)
    files, manifest = render(plan, snapshot_path)
    if out.exists() and not out.is_dir():
        raise PlanError(f"--out {out}: exists and is not a directory")
    inside = enclosing_plan_dir(out.resolve().parent)
    if inside is not None:
        raise PlanError(f"--out {out}: inside plan directory {inside}; a plan is never written into another plan's directory")
    if out.is_dir() and any(out.iterdir()):
        if _holds_same_plan(out, manifest, files):
            return manifest, "unchanged"
        raise PlanError(
            f"--out {out}: directory is not empty and does not hold this plan (plan_hash {manifest['plan_hash'][:16]}); "
            "choose a new directory or remove it"
        )
    with atomic_directory(out) as tmp:  # empty or absent: checked above
        for path, data in files.items():
            target = tmp / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    return manifest, "written"
