"""The fleet DAG's steps: one snapshot per configured cluster, and the list of clusters that need a plan
(unbalanced by the Spark analysis, or with a scale event)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path

from kafka_rebalance.analysis.summary_file import read_summaries
from kafka_rebalance.cluster.gather import gather_snapshot
from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.orchestration.cluster_access import admin_session
from kafka_rebalance.orchestration.clusters_config import ClustersFile
from kafka_rebalance.orchestration.plan_params import setting
from kafka_rebalance.orchestration.scale import ScaleEvent, scale_event
from kafka_rebalance.orchestration.staging import run_dir, write_cluster_snapshot
from kafka_rebalance.snapshot import load_snapshot

log = logging.getLogger(__name__)


def gather_fleet(cfg: ClustersFile, run_id: str) -> dict[str, str]:
    """One snapshot per configured cluster, in one directory: the Spark job reads it as a fleet."""
    directory = run_dir("_fleet", run_id)
    snapshots = directory / "snapshots"
    snapshots.mkdir(exist_ok=True)
    failed = []
    for cluster in cfg.clusters:
        try:
            with admin_session(cfg, cluster) as admin:
                # The fleet summary is keyed by the configured id, whatever the cluster calls itself.
                snap = gather_snapshot(admin, cluster.cluster_id)
        except RebalanceError as exc:
            # One unreachable cluster must not hide the state of the others: record and go on.
            log.error("cluster %s: cannot gather: %s", cluster.cluster_id, exc)
            failed.append({"cluster_id": cluster.cluster_id, "error": str(exc)})
            continue
        write_cluster_snapshot(snap, snapshots, cluster.cluster_id)
    (directory / "gather_errors.json").write_text(json.dumps(failed, indent=2) + "\n", encoding="utf-8")
    if len(failed) == len(cfg.clusters):
        raise RebalanceError(f"no cluster could be gathered: {failed}")
    return {"run_dir": str(directory), "snapshots": str(snapshots), "analysis": str(directory / "analysis")}


def fleet_scale_events(cfg: ClustersFile, snapshots: Path) -> dict[str, ScaleEvent]:
    """Each gathered cluster's scale event (orchestration/scale.py), its marks for removal from clusters.yaml."""
    events = {}
    for cluster in cfg.clusters:
        found = sorted(snapshots.glob(f"{cluster.cluster_id}.*"))
        if found:
            marked = setting({}, cfg.effective_defaults(cluster), "decommission_brokers")
            events[cluster.cluster_id] = scale_event(load_snapshot(found[0]), marked)
    return events


def fleet_summary(fleet: Mapping[str, str], cfg: ClustersFile | None = None) -> list[str]:
    """Write fleet_summary.json and return the clusters that need a plan: unbalanced, or (``cfg`` given) with a
    scale event, which their own DAG then plans for (and, under an approval policy, executes)."""
    events = fleet_scale_events(cfg, Path(fleet["snapshots"])) if cfg is not None else {}
    rows = [
        {"cluster_id": c["cluster_id"], "balanced": c.get("balanced"), "threshold_percentage": c.get("threshold_percentage"),
         "brokers_over_threshold": c.get("brokers_over_threshold", []), "max_imbalance_ratio": c.get("max_imbalance_ratio"),
         "scale_event": events[c["cluster_id"]].to_dict() if c["cluster_id"] in events else None}
        for c in read_summaries(fleet["analysis"])
    ]  # fmt: skip
    for cid, event in events.items():
        if event.any:
            log.info("cluster %s: %s", cid, event.describe())
    need = sorted(r["cluster_id"] for r in rows if not r["balanced"] or (r["cluster_id"] in events and events[r["cluster_id"]].any))
    out = Path(fleet["run_dir"]) / "fleet_summary.json"
    out.write_text(json.dumps({"clusters": rows, "need_plan": need}, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    log.info("fleet: %d cluster(s), %d need a plan: %s", len(rows), len(need), ", ".join(need) or "none")
    return need
