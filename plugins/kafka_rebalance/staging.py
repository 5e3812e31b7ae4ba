"""Where the pipeline keeps what must survive a run: staged plans, run files, simulated clusters.

Layout under the data root (``$KAFKA_REBALANCE_HOME``, default ``<project>/var``):

    plans/<cluster>/<plan-hash-16>/   staged plans: plan files, validation, approval, ledger
    runs/<cluster>/<run-id>/          one DAG run's working files (snapshots, analysis)
    simulated/<cluster>/              the embedded simulator's persistent state

A staged plan is never overwritten: staging the same plan again (same plan hash, same
file hashes) is a no-op that returns the existing directory; anything else that would
land on an existing directory is refused. Staging copies into a temporary sibling and
renames it into place, so a crash never leaves a half-staged plan that looks complete.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from kafka_rebalance.errors import RebalanceError

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# Where the Airflow plugin serves staged plans in the API server (report_app).
REPORTS_URL_PREFIX = "/kafka-rebalance"


def data_root() -> Path:
    root = os.environ.get("KAFKA_REBALANCE_HOME")
    return Path(root).resolve() if root else PROJECT_ROOT / "var"


def run_dir_path(cluster_id: str, run_id: str, root: Path | None = None) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in run_id)
    return (root or data_root()) / "runs" / cluster_id / safe


def run_dir(cluster_id: str, run_id: str, root: Path | None = None) -> Path:
    path = run_dir_path(cluster_id, run_id, root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def simulated_state_dir(cluster_id: str, root: Path | None = None) -> Path:
    path = (root or data_root()) / "simulated" / cluster_id
    path.mkdir(parents=True, exist_ok=True)
    return path


def read_manifest(plan_dir: Path) -> dict:
    manifest = plan_dir / "plan.json"
    if not manifest.exists():
        raise RebalanceError(f"{plan_dir}: not a plan directory (no plan.json)")
    try:
        return json.loads(manifest.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise RebalanceError(f"{manifest}: not valid JSON: {exc.msg} at line {exc.lineno}") from None


def stage_plan(plan_dir: Path, cluster_id: str, root: Path | None = None) -> Path:
    """Copy a validated plan to ``plans/<cluster>/<plan-hash-16>/``; idempotent, never overwrites."""
    manifest = read_manifest(plan_dir)
    plan_hash = manifest.get("plan_hash")
    if not isinstance(plan_hash, str) or len(plan_hash) < 16:
        raise RebalanceError(f"{plan_dir / 'plan.json'}: plan_hash missing or malformed: {plan_hash!r}")
    target = (root or data_root()) / "plans" / cluster_id / plan_hash[:16]
    if target.exists():
        # Re-staging the same plan (a retried or re-triggered run) reuses it, including the
        # approval and ledger it has gathered since; different content is never written over it.
        theirs = read_manifest(target)
        if theirs.get("plan_hash") != plan_hash or theirs.get("files") != manifest.get("files"):
            raise RebalanceError(
                f"{target}: already holds a different plan (plan_hash {theirs.get('plan_hash')}); refusing to overwrite"
            )
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{plan_hash[:16]}-", dir=target.parent))
    try:
        shutil.copytree(plan_dir, tmp, dirs_exist_ok=True)
        os.rename(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def record_decision(staged: Path, decision: str, by: str, note: str = "") -> Path:
    """Write the human decision beside the staged plan, once: a second, different decision is refused."""
    path = staged / "approval.json"
    record = {"decision": decision, "by": by, "note": note, "plan_hash": read_manifest(staged).get("plan_hash")}
    if path.exists():
        existing = json.loads(path.read_text(encoding="utf-8"))
        if existing.get("decision") != decision:
            raise RebalanceError(
                f"{path}: plan was already {existing.get('decision')} by {existing.get('by')}; not recording '{decision}'"
            )
        return path
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path
