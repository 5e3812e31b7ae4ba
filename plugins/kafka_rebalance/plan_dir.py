"""The plan directory: its file names, canonical JSON, THE plan hash, verdicts, safe writes.

Every module that reads or writes a plan directory imports its names and its hash from
here (docs/PLAN_FORMAT.md), so the planner, the quality gate, staging, the executor and
the report cannot disagree about what "this plan" is.

What the plan hash covers: every top-level field of ``plan.json`` (the batch list and its
order, the options, the summary, cluster id, snapshot fingerprint, format and tool
version) except ``plan_hash`` itself, ``field_sha256`` (derived) and ``snapshot.path``
(where the snapshot happened to lie; two runs of the same plan differ only there), and,
through ``files``, the bytes of every file listed there (each batch's files,
``election.json``, ``RUNBOOK.md``, and whatever a later format lists). A new field or a
new listed file is covered without touching this module.

Verdicts are not in ``plan.json``: validation writes ``validation/verdict.json`` and the
approval step ``approval.json``, each naming the plan hash it judged.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import Any

from kafka_rebalance.approval_key import configured_key, signature_problem, signed
from kafka_rebalance.atomic import atomic_write
from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.userinput import InputError, cluster_id_problem
from kafka_rebalance.userinput import read_json as read_strict_json

FORMAT_VERSION = 2

# Written by `plan` (the hashed plan itself).
PLAN_FILE = "plan.json"
ELECTION_FILE = "election.json"
RUNBOOK_FILE = "RUNBOOK.md"
SCHEDULE_FILE = "schedule.json"
BATCHES_DIR = "batches"
BATCH_FILE_KINDS = ("reassignment", "rollback", "throttles")
# Written by `validate`.
VALIDATION_DIR = "validation"
VALIDATION_VERDICT = "validation/verdict.json"
VALIDATION_RESULT = "validation/result.json"
DATA_DOCS_DIR = "validation/data_docs"
# Validations of a plan that already passed for its hash: written here, beside the verdict, never over it.
VALIDATION_ATTEMPTS = "validation/attempts"
# Written by the approval step (the DAG's HITL task).
APPROVAL_FILE = "approval.json"
# Written by `pause` / `resume` / `stop` (and the plan page's buttons): the operator's requests.
CONTROL_FILE = "control.json"
# Written by execute / verify / cancel.
LEDGER_FILE = "ledger.json"
LEDGER_ARCHIVE = "ledger.{n}.json"
# Locked (flock) by the one run acting on the plan; its holder is recorded in the ledger (executor/lease.py).
LEASE_FILE = ".lease"
SIM_STATE_FILE = "simulator-state.json"
FINAL_SNAPSHOT_STEM = "final-snapshot"
FINAL_SNAPSHOT_FILES = (f"{FINAL_SNAPSHOT_STEM}.json", f"{FINAL_SNAPSHOT_STEM}.parquet")
VERIFICATION_FILE = "verification.json"
# Written by `report` (and the DAG's report step).
REPORT_FILE = "report.html"

# Which step may write which path of a plan directory (fnmatch patterns on the relative path).
OWNERS: dict[str, tuple[str, ...]] = {
    "plan": (PLAN_FILE, ELECTION_FILE, RUNBOOK_FILE, SCHEDULE_FILE, f"{BATCHES_DIR}/*"),
    "validate": (f"{VALIDATION_DIR}/*",),
    "approve": (APPROVAL_FILE,),
    "control": (CONTROL_FILE,),
    "execute": (LEDGER_FILE, "ledger.*.json", SIM_STATE_FILE, *FINAL_SNAPSHOT_FILES, VERIFICATION_FILE),
    "report": (REPORT_FILE,),
}
# plan.json fields outside the hash: the hash itself, its per-field breakdown, and where
# the snapshot file lay when planning (the same plan planned in two run directories).
UNHASHED_FIELDS = ("plan_hash", "field_sha256")
UNHASHED_SNAPSHOT_FIELDS = ("path",)

_STAGED_NAME = re.compile(r"[0-9a-f]{16}")


class PlanDirError(RebalanceError):
    """The plan directory is malformed, altered since planning, not approved, or would be overwritten."""


# ----------------------------------------------------------------------------- names


def batch_dir_name(index: int, count: int) -> str:
    return str(index).zfill(max(3, len(str(count))))


def batch_file(batch_id: str, kind: str) -> str:
    """``batches/NNN/<kind>.json``, the relative path the manifest lists."""
    if kind not in BATCH_FILE_KINDS:
        raise ValueError(f"unknown batch file kind {kind!r}")
    return f"{BATCHES_DIR}/{batch_id}/{kind}.json"


def owner_of(rel: str, manifest_files: Iterable[str] = ()) -> str | None:
    """The step that writes ``rel`` (a path relative to the plan directory), None if no step does."""
    if rel in set(manifest_files):
        return "plan"
    for step, patterns in OWNERS.items():
        if any(fnmatch.fnmatchcase(rel, p) for p in patterns):
            return step
    return None


# ----------------------------------------------------------------------------- JSON and hashes


def canonical_json(value: Any) -> bytes:
    """The one form every hash is taken over: sorted keys, no spaces, ASCII escapes, no NaN.

    Values are first put through a JSON round trip so that what is hashed in memory
    (int dict keys, tuples) equals what is hashed after reading the file back.
    """
    normal = json.loads(json.dumps(value, allow_nan=False))
    return json.dumps(normal, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode("ascii")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def hashed_fields(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The part of plan.json the plan hash covers (see the module doc)."""
    body = {k: v for k, v in manifest.items() if k not in UNHASHED_FIELDS}
    snapshot = body.get("snapshot")
    if isinstance(snapshot, Mapping):
        body["snapshot"] = {k: v for k, v in snapshot.items() if k not in UNHASHED_SNAPSHOT_FIELDS}
    return body


def field_digests(manifest: Mapping[str, Any]) -> dict[str, str]:
    """sha256 of each hashed field's canonical JSON: lets a mismatch name the field that changed."""
    return {k: sha256_bytes(canonical_json(v)) for k, v in sorted(hashed_fields(manifest).items())}


def plan_hash_of(manifest: Mapping[str, Any]) -> str:
    """THE plan hash: sha256 of the canonical JSON of the per-field digests."""
    return sha256_bytes(canonical_json(field_digests(manifest)))


def seal(manifest: dict[str, Any]) -> dict[str, Any]:
    """Record ``field_sha256`` and ``plan_hash`` in a manifest whose ``files`` are already filled in."""
    manifest.pop("plan_hash", None)
    manifest.pop("field_sha256", None)
    digests = field_digests(manifest)
    manifest["field_sha256"] = digests
    manifest["plan_hash"] = sha256_bytes(canonical_json(digests))
    return manifest


# ----------------------------------------------------------------------------- text form


def dump(value: Any) -> bytes:
    """``json.dumps(value, sort_keys=True, indent=2) + "\\n"``, byte for byte, but faster.

    json's indenting encoder is pure Python; this one hands every scalar to json's C
    encoder and only does the layout itself (tests compare both on whole plans).
    """
    out: list[str] = []
    _layout(value, "", out)
    out.append("\n")
    return "".join(out).encode("utf-8")


_float = json.JSONEncoder(allow_nan=False).encode


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


# ----------------------------------------------------------------------------- reading and writing


def read_json(path: Path, what: str = "plan file") -> Any:
    """A plan-directory JSON file, or PlanDirError naming the file and why it cannot be read.

    The reading and the strict JSON rules (duplicate keys, NaN, depth) are userinput's, as for
    every file users and steps hand us; only the error says it is a plan file.
    """
    try:
        return read_strict_json(path, what)
    except InputError as exc:
        # A file that is there but unusable was damaged, or written by hand: say so.
        raise PlanDirError(f"{exc} (the {what} is corrupt or ambiguous)" if path.is_file() else str(exc)) from None


def atomic_write_json(path: Path, value: Any) -> Path:
    return atomic_write(path, dump(value))


# ----------------------------------------------------------------------------- the manifest


def editor_litter(name: str) -> bool:
    """An editor's swap, lock or backup file (``.x.swp``, ``.#x``, ``x~``): nobody reads it, neither this tool nor
    Kafka's, so it never makes a plan untrustworthy (nor blocks the cleanup of a run killed while it was open)."""
    return name.startswith(".") or name.endswith("~")


def read_manifest(plan_dir: Path) -> dict[str, Any]:
    """plan.json as written, unchecked beyond being a JSON object (see ``verify_plan`` for trust)."""
    plan_dir = Path(plan_dir)
    if not plan_dir.is_dir():
        raise PlanDirError(f"{plan_dir}: not a plan directory (does not exist or is a file)")
    where = plan_dir / PLAN_FILE
    manifest = read_json(where, "plan manifest")
    if not isinstance(manifest, dict):
        raise PlanDirError(f"{where}: top level must be a JSON object")
    return manifest


def _short(h: Any) -> str:
    return f"{h[:12]}..." if isinstance(h, str) else json.dumps(h)


def verify_plan(plan_dir: Path) -> tuple[dict[str, Any], str]:
    """Prove the directory holds exactly the plan that was planned; return (manifest, plan hash).

    Refuses, naming what differs: a plan.json field, a listed file, an unlisted batch file,
    a batch in the list without its files (or files without a batch), the plan hash.
    """
    plan_dir = Path(plan_dir)
    manifest = read_manifest(plan_dir)
    where = plan_dir / PLAN_FILE
    if manifest.get("format_version") != FORMAT_VERSION:
        raise PlanDirError(f"{where}: format_version: expected {FORMAT_VERSION}, got {json.dumps(manifest.get('format_version'))}; "
                           "re-plan with this version of kafka-rebalance")
    recorded_fields = manifest.get("field_sha256")
    if not isinstance(recorded_fields, dict):
        raise PlanDirError(f"{where}: field_sha256: missing; cannot prove the plan is unchanged")
    try:
        actual_fields = field_digests(manifest)
    except ValueError as exc:
        raise PlanDirError(f"{where}: holds a value JSON cannot hash ({exc})") from None
    changed = sorted(k for k in set(actual_fields) | set(recorded_fields) if actual_fields.get(k) != recorded_fields.get(k))
    if changed:
        k = changed[0]
        state = "added" if k not in recorded_fields else "removed" if k not in actual_fields else "changed"
        raise PlanDirError(f"{where}: {k}: {state} since planning (sha256 now {_short(actual_fields.get(k))}, "
                           f"recorded {_short(recorded_fields.get(k))})"
                        + (f"; also {', '.join(changed[1:])}" if len(changed) > 1 else "")
                        + "; re-plan and re-approve instead of editing")
    recomputed = sha256_bytes(canonical_json(actual_fields))
    if manifest.get("plan_hash") != recomputed:
        raise PlanDirError(f"{where}: plan_hash: recorded {json.dumps(manifest.get('plan_hash'))} but the plan hashes to "
                           f"{recomputed}; plan.json was edited after planning")
    # The hashes prove only that plan.json agrees with itself: one written by hand carries its own.
    bad_id = cluster_id_problem(manifest.get("cluster_id"))
    if bad_id:
        raise PlanDirError(f"{where}: cluster_id: {bad_id}")
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        raise PlanDirError(f"{where}: files: missing or empty; cannot prove the plan is unchanged")
    root = plan_dir.resolve()
    for rel, expected in sorted(files.items()):
        target = (plan_dir / rel).resolve()
        if root not in target.parents:
            raise PlanDirError(f"{where}: files: {rel!r} points outside the plan directory")
        if not target.is_file():
            raise PlanDirError(f"{plan_dir / rel}: missing (listed in plan.json files)")
        actual = file_sha256(target)
        if actual != expected:
            raise PlanDirError(f"{plan_dir / rel}: changed since planning (sha256 {actual[:12]}..., plan.json files records "
                               f"{_short(expected)}); re-plan and re-approve instead of editing")
    batches_dir = plan_dir / BATCHES_DIR
    if batches_dir.is_dir():
        for f in sorted(batches_dir.rglob("*")):
            rel = f.relative_to(plan_dir).as_posix()
            if f.is_file() and rel not in files and not editor_litter(f.name):
                raise PlanDirError(f"{f}: not listed in plan.json files; a plan's batch files are never added after planning")
    batches = manifest.get("batches")
    if not isinstance(batches, list):
        raise PlanDirError(f"{where}: batches: must be a list")
    listed = set()
    for i, b in enumerate(batches):
        bid = b.get("id") if isinstance(b, dict) else None
        if not isinstance(bid, str) or not bid.isascii() or not bid.isdigit():
            raise PlanDirError(f"{where}: batches[{i}].id: expected a zero-padded number, got {json.dumps(bid)}")
        if bid in listed:
            raise PlanDirError(f"{where}: batches[{i}].id: batch {bid} is listed twice")
        listed.add(bid)
        for kind in BATCH_FILE_KINDS:
            if batch_file(bid, kind) not in files:
                raise PlanDirError(f"{where}: files: {batch_file(bid, kind)} is not listed; the plan cannot be trusted")
    for rel in sorted(files):
        parts = rel.split("/")
        if parts[0] == BATCHES_DIR and (len(parts) < 3 or parts[1] not in listed):
            raise PlanDirError(f"{where}: batches: {rel} belongs to no batch in the list; the batch list was cut")
    if [b["id"] for b in batches] != sorted((b["id"] for b in batches), key=int):
        raise PlanDirError(f"{where}: batches: ids must be in numeric order")
    if _STAGED_NAME.fullmatch(plan_dir.resolve().name) and plan_dir.resolve().name != recomputed[:16]:
        raise PlanDirError(f"{plan_dir}: staged under the name of another plan (this plan hashes to {recomputed[:16]}...)")
    return manifest, recomputed


# ----------------------------------------------------------------------------- verdicts


@dataclass(frozen=True, slots=True)
class ValidationVerdict:
    status: str  # passed | failed
    plan_hash: str | None
    result: str | None = None
    result_sha256: str | None = None
    reason: str | None = None


def write_validation_verdict(plan_dir: Path, status: str, plan_hash: str | None, reason: str | None = None) -> Path:
    """validation/verdict.json: the gate's verdict on the plan with this hash, bound to result.json's bytes."""
    result = Path(plan_dir) / VALIDATION_RESULT
    record: dict[str, Any] = {
        "status": status, "plan_hash": plan_hash,
        "result": VALIDATION_RESULT if result.is_file() else None,
        "result_sha256": file_sha256(result) if result.is_file() else None,
    }
    if reason:
        record["reason"] = reason
    return atomic_write_json(Path(plan_dir) / VALIDATION_VERDICT, record)


def read_validation_verdict(plan_dir: Path) -> ValidationVerdict | None:
    """The recorded verdict, None when the plan was never validated."""
    path = Path(plan_dir) / VALIDATION_VERDICT
    if not path.exists():
        return None
    raw = read_json(path, "validation verdict")
    if not isinstance(raw, dict) or raw.get("status") not in ("passed", "failed"):
        raise PlanDirError(f"{path}: status: expected \"passed\" or \"failed\"; the verdict is corrupt, validate again")
    return ValidationVerdict(raw["status"], raw.get("plan_hash"), raw.get("result"), raw.get("result_sha256"), raw.get("reason"))


def validation_status(plan_dir: Path) -> str:
    """For display: passed | failed | pending | unreadable."""
    try:
        verdict = read_validation_verdict(plan_dir)
    except PlanDirError:
        return "unreadable"
    return verdict.status if verdict else "pending"


def require_validated(plan_dir: Path, plan_hash: str) -> ValidationVerdict:
    """Refuse unless validation passed for exactly this plan hash, with result.json unchanged."""
    plan_dir = Path(plan_dir)
    path = plan_dir / VALIDATION_VERDICT
    verdict = read_validation_verdict(plan_dir)
    if verdict is None:
        raise PlanDirError(f"{path}: missing; the plan was never validated (run kafka-rebalance validate)")
    if verdict.plan_hash != plan_hash:
        raise PlanDirError(f"{path}: plan_hash: the verdict judged plan {json.dumps(verdict.plan_hash)}, but this directory's "
                           f"plan hashes to {plan_hash}; validate this plan")
    if verdict.status != "passed":
        raise PlanDirError(f"{path}: status is \"{verdict.status}\"; only a plan that passed validation can run"
                        + (f" ({verdict.reason})" if verdict.reason else ""))
    result_path = plan_dir / VALIDATION_RESULT
    if verdict.result != VALIDATION_RESULT or not isinstance(verdict.result_sha256, str):
        raise PlanDirError(f"{path}: result_sha256: the verdict does not name the result it summarises; validate again")
    if not result_path.is_file() or file_sha256(result_path) != verdict.result_sha256:
        raise PlanDirError(f"{result_path}: differs from what {VALIDATION_VERDICT} recorded (result_sha256); validate again")
    result = read_json(result_path, "validation result")
    if not isinstance(result, dict) or result.get("status") != verdict.status or result.get("plan_hash") != plan_hash:
        raise PlanDirError(f"{path}: status: says {verdict.status!r} but {VALIDATION_RESULT} says "
                           f"{result.get('status') if isinstance(result, dict) else '?'!r} for plan "
                           f"{result.get('plan_hash') if isinstance(result, dict) else '?'}; validate again")
    return verdict


def read_approval(plan_dir: Path) -> dict[str, Any] | None:
    path = Path(plan_dir) / APPROVAL_FILE
    if not path.exists():
        return None
    raw = read_json(path, "approval")
    if not isinstance(raw, dict) or raw.get("decision") not in ("approved", "rejected"):
        raise PlanDirError(f"{path}: decision: expected \"approved\" or \"rejected\"; the approval record is corrupt")
    return raw


def record_approval(plan_dir: Path, decision: str, by: str, note: str = "", details: Mapping[str, Any] | None = None) -> Path:
    """approval.json, written once: the same decision again is a no-op, a different one is refused.

    ``details``: what the decision was taken on (plan_approval.decide records when, and the
    snapshot's age); kept beside the decision, never replacing its fields.
    """
    plan_dir = Path(plan_dir)
    _, plan_hash = verify_plan(plan_dir)
    path = plan_dir / APPROVAL_FILE
    existing = read_approval(plan_dir)
    if existing is not None:
        if existing.get("decision") != decision or existing.get("plan_hash") != plan_hash:
            raise PlanDirError(f"{path}: plan {existing.get('plan_hash')} was already {existing.get('decision')} by "
                               f"{existing.get('by')}; not recording '{decision}'")
        return path
    record = {**(details or {}), "decision": decision, "by": by, "note": note, "plan_hash": plan_hash}
    return atomic_write_json(path, signed(record, configured_key()))


def require_approved(plan_dir: Path, plan_hash: str) -> dict[str, Any]:
    path = Path(plan_dir) / APPROVAL_FILE
    approval = read_approval(plan_dir)
    if approval is None:
        raise PlanDirError(f"{path}: missing; nobody approved this plan (approve it: kafka-rebalance approve "
                           f"--plan {plan_dir} --by NAME)")
    if approval.get("plan_hash") != plan_hash:
        raise PlanDirError(f"{path}: plan_hash: the approval names plan {json.dumps(approval.get('plan_hash'))}, "
                           f"but this directory's plan hashes to {plan_hash}")
    if approval["decision"] != "approved":
        raise PlanDirError(f"{path}: decision is \"{approval['decision']}\" (by {approval.get('by')}); a rejected plan never runs")
    problem = signature_problem(approval, configured_key())
    if problem is not None:
        raise PlanDirError(f"{path}: signature: {problem}")
    return approval


# ----------------------------------------------------------------------------- output paths


def enclosing_plan_dir(path: Path) -> Path | None:
    """The plan directory ``path`` lies in (or is), if any: a directory with plan.json and its batches."""
    path = Path(path).resolve()
    for candidate in (path, *path.parents):
        if (candidate / PLAN_FILE).is_file() and ((candidate / ELECTION_FILE).is_file() or (candidate / BATCHES_DIR).is_dir()):
            return candidate
    return None


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def check_output(path: Path, flag: str, *, may_write: Iterable[str] = (), inputs: Iterable[tuple[str, Path | None]] = (),
                 directory: bool = False) -> Path:
    """Refuse an output path that would overwrite a command's input or a file of a plan directory.

    ``may_write``: the paths, relative to a plan directory, this flag owns (e.g. report.html).
    ``inputs``: (what, path) the command reads; none of them (nor, for a directory output,
    anything inside it) may be written over.
    """
    out = Path(path)
    target = out.resolve()
    for what, given in inputs:
        if given is None:
            continue
        given = Path(given)
        if _same_file(target, given) or (directory and given.resolve().is_relative_to(target)):
            raise PlanDirError(f"{flag} {out}: is the {what} this command reads; refusing to overwrite it (choose another path)")
        if given.is_dir() and target.is_relative_to(given.resolve()):
            raise PlanDirError(f"{flag} {out}: lies inside the {what} directory {given} this command reads; choose another path")
    if not directory and target.is_dir():
        raise PlanDirError(f"{flag} {out}: is a directory; give a file path")
    plan = enclosing_plan_dir(target)
    if plan is None:
        return out
    rel = "." if target == plan else target.relative_to(plan).as_posix()
    allowed = tuple(may_write)
    if rel != "." and any(fnmatch.fnmatchcase(rel, p) for p in allowed):
        return out
    try:
        files = (read_manifest(plan).get("files") or {}).keys()
    except PlanDirError:
        files = ()
    owner = owner_of(rel, files) if rel != "." else "plan"
    whose = f"belongs to the '{owner}' step" if owner else "is not a file of the plan format"
    may = f"; {flag} may write only {' or '.join(allowed)} there" if allowed else ""
    raise PlanDirError(f"{flag} {out}: inside plan directory {plan}, where {rel} {whose}{may}; "
                       "nothing else writes into a plan directory (choose a path outside it)")
