"""Reading a plan directory and proving it is the one that was approved (docs/PLAN_FORMAT.md).

The executor trusts nothing in a plan directory until every file listed in
``plan.json`` hashes to the recorded sha256, the recomputed ``plan_hash`` equals
the recorded one, and validation passed for that very hash.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.kafka.admin import TP
from kafka_rebalance.userinput import INT32_MAX, InputError, int_in, is_ascii_digits, loads_json, read_text, topic_name_problem

PLAN_FILE = "plan.json"
ELECTION_FILE = "election.json"
LEDGER_FILE = "ledger.json"
FORMAT_VERSION = 1


class PlanError(RebalanceError):
    """The plan directory is malformed, altered since planning, or not approved."""


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no spaces: the form every hash in the contract is taken over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def compute_plan_hash(snapshot_sha256: str, options: Mapping[str, Any], files: Mapping[str, str]) -> str:
    return hashlib.sha256(
        canonical_json({"snapshot_sha256": snapshot_sha256, "options": dict(options), "files": dict(files)})
    ).hexdigest()


def dump_json(value: Any) -> str:
    """The plan files' text form: sorted keys, 2-space indent, trailing newline."""
    return json.dumps(value, sort_keys=True, indent=2) + "\n"


def batch_dir_name(index: int, count: int) -> str:
    return str(index).zfill(max(3, len(str(count))))


@dataclass(frozen=True, slots=True)
class Throttles:
    rate_bytes_per_sec: int | None
    brokers: dict[int, dict[str, str]] = field(default_factory=dict)
    topics: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.brokers and not self.topics


@dataclass(frozen=True, slots=True)
class Batch:
    id: str
    kind: str
    targets: dict[TP, tuple[int, ...]]
    before: dict[TP, tuple[int, ...]]
    throttles: Throttles
    estimated_seconds: float | None
    bytes: int | None


@dataclass(frozen=True, slots=True)
class Plan:
    path: Path
    manifest: dict[str, Any]
    plan_hash: str
    cluster_id: str
    options: dict[str, Any]
    batches: tuple[Batch, ...]
    elections: tuple[TP, ...]

    @property
    def election_batch_size(self) -> int:
        size = self.options.get("election_batch_size", 1000)
        return size if isinstance(size, int) and size > 0 else 1000

    def batch(self, batch_id: str) -> Batch:
        for b in self.batches:
            if b.id == batch_id or (is_ascii_digits(batch_id) and is_ascii_digits(b.id) and int(b.id) == int(batch_id)):
                return b
        raise PlanError(f"{self.path / PLAN_FILE}: batches: no batch {batch_id!r} (plan has {', '.join(b.id for b in self.batches)})")


def _read_json(path: Path, rel: str) -> Any:
    if not path.exists():
        raise PlanError(f"{path}: missing ({rel} is part of the plan)")
    try:
        return loads_json(read_text(path, "plan file"), str(path))
    except InputError as exc:
        raise PlanError(str(exc)) from None


def _assignment(raw: Any, path: Path) -> dict[TP, tuple[int, ...]]:
    if not isinstance(raw, dict) or raw.get("version") != 1 or not isinstance(raw.get("partitions"), list):
        raise PlanError(f"{path}: expected Kafka's reassignment JSON {{\"version\": 1, \"partitions\": [...]}}")
    out: dict[TP, tuple[int, ...]] = {}
    for i, p in enumerate(raw["partitions"]):
        topic, part, replicas = (p.get("topic"), p.get("partition"), p.get("replicas")) if isinstance(p, dict) else (None,) * 3
        if not isinstance(topic, str) or not int_in(part, 0, INT32_MAX) or not isinstance(replicas, list) or not replicas \
                or not all(int_in(r, 0, INT32_MAX) for r in replicas):
            raise PlanError(f"{path}: partitions[{i}]: needs topic (string), partition (int32) and replicas (non-empty broker id list), "
                            f"got {json.dumps(p)[:200]}")
        if topic_name_problem(topic):
            raise PlanError(f"{path}: partitions[{i}].topic: {topic_name_problem(topic)}")
        tp = TP(topic, part)
        if tp in out:
            raise PlanError(f"{path}: partitions[{i}]: {tp} listed twice")
        out[tp] = tuple(replicas)
    return out


def _throttles(raw: Any, path: Path) -> Throttles:
    if not isinstance(raw, dict):
        raise PlanError(f"{path}: expected an object with rate_bytes_per_sec, brokers and topics")
    brokers_raw, topics_raw = raw.get("brokers", {}), raw.get("topics", {})
    if not isinstance(brokers_raw, dict) or not isinstance(topics_raw, dict):
        raise PlanError(f"{path}: brokers and topics must be objects")
    brokers: dict[int, dict[str, str]] = {}
    for bid, cfg in brokers_raw.items():
        if not (is_ascii_digits(bid) and int(bid) <= INT32_MAX) or not isinstance(cfg, dict) \
                or not all(isinstance(v, str) for v in cfg.values()):
            raise PlanError(f"{path}: brokers.{bid}: expected a broker id mapping config names to string values")
        brokers[int(bid)] = dict(cfg)
    topics: dict[str, dict[str, str]] = {}
    for name, cfg in topics_raw.items():
        if not isinstance(cfg, dict) or not all(isinstance(v, str) for v in cfg.values()):
            raise PlanError(f"{path}: topics.{name}: expected config names mapping to string values")
        topics[name] = dict(cfg)
    rate = raw.get("rate_bytes_per_sec")
    return Throttles(rate if isinstance(rate, int) else None, brokers, topics)


def verify_manifest(plan_dir: Path, manifest: Mapping[str, Any]) -> str:
    """Check every hashed file and the plan hash; return the plan hash."""
    where = plan_dir / PLAN_FILE
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        raise PlanError(f"{where}: files: missing or empty; cannot prove the plan is unchanged")
    for rel, expected in sorted(files.items()):
        target = (plan_dir / rel).resolve()
        if plan_dir.resolve() not in target.parents:
            raise PlanError(f"{where}: files: {rel!r} points outside the plan directory")
        if not target.is_file():
            raise PlanError(f"{plan_dir / rel}: missing (listed in plan.json files)")
        actual = file_sha256(target)
        if actual != expected:
            raise PlanError(
                f"{plan_dir / rel}: changed since planning (sha256 {actual[:12]}..., plan.json files records {str(expected)[:12]}...); "
                "re-plan and re-approve instead of editing"
            )
    snapshot = manifest.get("snapshot")
    snap_sha = snapshot.get("sha256") if isinstance(snapshot, dict) else None
    options = manifest.get("options")
    if not isinstance(snap_sha, str) or not isinstance(options, dict):
        raise PlanError(f"{where}: snapshot.sha256 and options are required to recompute plan_hash")
    recomputed = compute_plan_hash(snap_sha, options, files)
    recorded = manifest.get("plan_hash")
    if recomputed != recorded:
        raise PlanError(
            f"{where}: plan_hash: recorded {recorded!r} but snapshot, options and files hash to {recomputed!r}; "
            "plan.json was edited after planning"
        )
    return recomputed


def load_plan(plan_dir: Path | str, require_passed: bool = True) -> Plan:
    plan_dir = Path(plan_dir)
    if not plan_dir.is_dir():
        raise PlanError(f"{plan_dir}: not a plan directory (does not exist or is a file)")
    where = plan_dir / PLAN_FILE
    manifest = _read_json(where, PLAN_FILE)
    if not isinstance(manifest, dict):
        raise PlanError(f"{where}: top level must be an object")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise PlanError(f"{where}: format_version: expected {FORMAT_VERSION}, got {json.dumps(manifest.get('format_version'))}")
    plan_hash = verify_manifest(plan_dir, manifest)
    if require_passed:
        validation = manifest.get("validation") if isinstance(manifest.get("validation"), dict) else {}
        status = validation.get("status")
        if status != "passed":
            raise PlanError(f"{where}: validation.status is {json.dumps(status)}; only a plan that passed validation can run")
        if validation.get("plan_hash") != plan_hash:
            raise PlanError(
                f"{where}: validation.plan_hash {json.dumps(validation.get('plan_hash'))} is not this plan's hash {plan_hash}; "
                "validation approved a different plan"
            )
    files = manifest["files"]
    batches_raw = manifest.get("batches")
    if not isinstance(batches_raw, list):
        raise PlanError(f"{where}: batches: must be a list")
    batches = []
    for i, b in enumerate(batches_raw):
        bid = b.get("id") if isinstance(b, dict) else None
        if not isinstance(bid, str) or not is_ascii_digits(bid) or len(bid) > 9:
            raise PlanError(f"{where}: batches[{i}].id: expected a zero-padded number, got {json.dumps(bid)}")
        rels = {name: f"batches/{bid}/{name}.json" for name in ("reassignment", "rollback", "throttles")}
        for rel in rels.values():
            if rel not in files:
                raise PlanError(f"{where}: files: {rel} is not hashed; the plan cannot be trusted")
        targets = _assignment(_read_json(plan_dir / rels["reassignment"], rels["reassignment"]), plan_dir / rels["reassignment"])
        before = _assignment(_read_json(plan_dir / rels["rollback"], rels["rollback"]), plan_dir / rels["rollback"])
        if set(before) != set(targets):
            raise PlanError(f"{plan_dir / rels['rollback']}: partitions differ from {rels['reassignment']}")
        est = b.get("estimated_seconds")
        batches.append(
            Batch(bid, str(b.get("kind", "move")), targets, before,
                  _throttles(_read_json(plan_dir / rels["throttles"], rels["throttles"]), plan_dir / rels["throttles"]),
                  float(est) if isinstance(est, (int, float)) else None,
                  b.get("bytes") if isinstance(b.get("bytes"), int) else None)
        )
    if [b.id for b in batches] != sorted((b.id for b in batches), key=int):
        raise PlanError(f"{where}: batches: ids must be in numeric order")
    elections: tuple[TP, ...] = ()
    if ELECTION_FILE in files:
        raw = _read_json(plan_dir / ELECTION_FILE, ELECTION_FILE)
        parts = raw.get("partitions") if isinstance(raw, dict) else None
        if not isinstance(parts, list):
            raise PlanError(f"{plan_dir / ELECTION_FILE}: expected {{\"partitions\": [{{\"topic\": ..., \"partition\": ...}}]}}")
        if not all(isinstance(p, dict) and isinstance(p.get("topic"), str) and int_in(p.get("partition"), 0, INT32_MAX)
                   for p in parts):
            raise PlanError(f"{plan_dir / ELECTION_FILE}: every entry needs topic (string) and partition (int32)")
        elections = tuple(TP(p["topic"], p["partition"]) for p in parts)
    options = manifest.get("options") or {}
    return Plan(plan_dir, manifest, plan_hash, str(manifest.get("cluster_id", "")), dict(options), tuple(batches), elections)
