"""Writing a plan directory exactly as docs/PLAN_FORMAT.md specifies, atomically.

Everything is rendered in memory first, written to a hidden temporary directory
beside DIR and renamed into place only when complete, so a failure never leaves a
partial directory that looks like a plan. An existing non-empty DIR is refused
unless it already holds this very plan (same plan hash, every file byte-identical).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from json.encoder import encode_basestring_ascii  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

from kafka_rebalance import __version__
from kafka_rebalance.planner import runbook
from kafka_rebalance.planner.core import Plan
from kafka_rebalance.planner.errors import PlanError

FORMAT_VERSION = 1


def dump(value: Any) -> bytes:
    """``json.dumps(value, sort_keys=True, indent=2) + "\\n"``, byte for byte, but faster.

    json's indenting encoder is pure Python; this one hands every scalar to json's C
    encoder and only does the layout itself (tests compare both on whole plans).
    """
    out: list[str] = []
    _layout(value, "", out)
    out.append("\n")
    return "".join(out).encode("utf-8")


_float = json.JSONEncoder().encode


def _scalar(v: Any) -> str:
    if isinstance(v, str):
        return encode_basestring_ascii(v)
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return int.__repr__(v)
    return _float(v)


def _layout(value: Any, pad: str, out: list[str]) -> None:
    if isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = pad + "  "
        out.append("{")
        first = True
        for key in sorted(value):
            out.append("\n" + inner if first else ",\n" + inner)
            first = False
            out.append(_scalar(key if isinstance(key, str) else str(key)))
            out.append(": ")
            _layout(value[key], inner, out)
        out.append("\n" + pad + "}")
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = pad + "  "
        out.append("[")
        first = True
        for item in value:
            out.append("\n" + inner if first else ",\n" + inner)
            first = False
            _layout(item, inner, out)
        out.append("\n" + pad + "]")
    else:
        out.append(_scalar(value))


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def plan_hash(snapshot_sha256: str, options: dict[str, Any], files: dict[str, str]) -> str:
    return sha256(canonical({"snapshot_sha256": snapshot_sha256, "options": options, "files": files}))


def _entries(steps, which: str) -> dict[str, Any]:  # noqa: ANN001
    return {
        "version": 1,
        "partitions": [
            {
                "topic": s.topic,
                "partition": s.partition,
                "replicas": list(getattr(s, which)),
                "log_dirs": ["any"] * len(getattr(s, which)),
            }
            for s in steps
        ],
    }


def reassignment_bytes(steps, which: str) -> bytes:  # noqa: ANN001
    """``dump(_entries(steps, which))``, byte for byte, without json's slow indenting encoder.

    Thousands of batch files at a million partitions made the generic encoder the
    slowest part of planning; tests compare this against ``dump`` to keep them equal.
    """
    if not steps:
        return dump(_entries(steps, which))
    out = []
    for s in steps:
        reps = getattr(s, which)
        out.append(
            '    {\n      "log_dirs": [\n'
            + ",\n".join(['        "any"'] * len(reps))
            + f'\n      ],\n      "partition": {int(s.partition)},\n      "replicas": [\n'
            + ",\n".join(f"        {int(b)}" for b in reps)
            + f"\n      ],\n      \"topic\": {encode_basestring_ascii(s.topic)}\n    }}"
        )
    return ('{\n  "partitions": [\n' + ",\n".join(out) + '\n  ],\n  "version": 1\n}\n').encode("utf-8")


def render(plan: Plan, snapshot_path: str) -> tuple[dict[str, bytes], dict[str, Any]]:
    """All files of the plan directory (relative path -> bytes) and the manifest."""
    files: dict[str, bytes] = {}
    width = max(3, len(str(len(plan.batches))))
    batch_rows = []
    for n, (batch, throttles) in enumerate(zip(plan.batches, plan.throttles), start=1):
        bid = f"{n:0{width}d}"
        files[f"batches/{bid}/reassignment.json"] = reassignment_bytes(batch.steps, "after")
        files[f"batches/{bid}/rollback.json"] = reassignment_bytes(batch.steps, "before")
        files[f"batches/{bid}/throttles.json"] = dump(throttles)
        batch_rows.append(
            {
                "id": bid,
                "kind": batch.kind,
                "partitions": len(batch.steps),
                "replica_moves": batch.replica_moves,
                "bytes": batch.bytes,
                "estimated_seconds": round(batch.seconds, 1),
            }
        )
    files["election.json"] = dump({"partitions": [{"topic": t, "partition": p} for t, p in plan.elections]})
    snap = plan.snapshot
    manifest: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "tool_version": __version__,
        "cluster_id": snap.cluster_id,
        "snapshot": {"sha256": snap.fingerprint(), "captured_at": snap.captured_at, "path": snapshot_path},
        "options": plan.options.manifest(),
        "batches": batch_rows,
        "summary": plan.summary,
    }
    files["RUNBOOK.md"] = runbook.render(manifest, len(plan.elections)).encode("utf-8")
    hashes = {path: sha256(data) for path, data in sorted(files.items())}
    manifest["files"] = hashes
    manifest["plan_hash"] = plan_hash(manifest["snapshot"]["sha256"], manifest["options"], hashes)
    manifest["validation"] = {"status": "pending", "plan_hash": None, "result": None}
    files["plan.json"] = dump(manifest)
    return files, manifest


def _holds_same_plan(out: Path, manifest: dict[str, Any], files: dict[str, bytes]) -> bool:
    try:
        existing = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(existing, dict) or existing.get("plan_hash") != manifest["plan_hash"]:
        return False
    for path, data in files.items():
        if path == "plan.json":  # validation may have recorded its verdict there
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
    if out.is_dir() and any(out.iterdir()):
        if _holds_same_plan(out, manifest, files):
            return manifest, "unchanged"
        raise PlanError(
            f"--out {out}: directory is not empty and does not hold this plan (plan_hash {manifest['plan_hash'][:16]}); "
            "choose a new directory or remove it"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        for path, data in files.items():
            target = tmp / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        os.chmod(tmp, 0o755)
        if out.is_dir():
            out.rmdir()  # empty: checked above
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest, "written"
