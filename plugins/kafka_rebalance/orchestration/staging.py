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

import os
import shutil
from pathlib import Path

from kafka_rebalance.atomic import atomic_directory
from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.paths import PROJECT_ROOT
from kafka_rebalance.plan_dir import SIM_STATE_FILE, read_manifest, record_approval, verify_plan
from kafka_rebalance.snapshot import Snapshot, write_snapshot

PARQUET_ABOVE_PARTITIONS = 50_000

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


def simulated_state_file(cluster_id: str, root: Path | None = None) -> Path:
    """The embedded simulator's state for a ``simulated:`` cluster, kept across runs in simulated/<cluster>/
    (under the file name the CLI's --simulate uses in a plan directory)."""
    path = (root or data_root()) / "simulated" / cluster_id
    path.mkdir(parents=True, exist_ok=True)
    return path / SIM_STATE_FILE


def write_cluster_snapshot(snapshot: Snapshot, directory: Path, name: str = "snapshot") -> Path:
    """A gathered snapshot in a run directory: Parquet once JSON would be slow to load."""
    suffix = ".parquet" if len(snapshot.partitions) > PARQUET_ABOVE_PARTITIONS else ".json"
    return write_snapshot(snapshot, directory / f"{name}{suffix}")


def stage_plan(plan_dir: Path, cluster_id: str, root: Path | None = None) -> Path:
    """Copy a validated plan to ``plans/<cluster>/<plan-hash-16>/``; idempotent, never overwrites."""
    # Only a plan that is exactly what was planned is staged, under the hash it really has.
    manifest, plan_hash = verify_plan(plan_dir)
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
    with atomic_directory(target) as tmp:
        shutil.copytree(plan_dir, tmp, dirs_exist_ok=True)
    return target


def record_decision(staged: Path, decision: str, by: str, note: str = "") -> Path:
    """Write the human decision beside the staged plan, once: a second, different decision is refused."""
    return record_approval(staged, decision, by, note)
