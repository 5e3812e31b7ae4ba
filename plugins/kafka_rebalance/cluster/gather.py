"""A snapshot of a live cluster: the one code path behind ``kafka-rebalance gather`` and the DAG's gather step."""

from __future__ import annotations

from dataclasses import replace

from kafka_rebalance.cluster.admin import ClusterAdmin
from kafka_rebalance.snapshot import Snapshot


def gather_snapshot(admin: ClusterAdmin, cluster_id: str) -> Snapshot:
    """Brokers, racks, liveness, partitions, leaders, ISR, offline replicas, replica sizes and dynamic configs.

    The snapshot is recorded under ``cluster_id`` (the operator's name for the cluster), not the
    cluster's own UUID: plans, staging and reports are keyed by that name.
    """
    snapshot = admin.describe()
    if snapshot.cluster_id != cluster_id:
        snapshot = replace(snapshot, cluster_id=cluster_id)
    return snapshot
