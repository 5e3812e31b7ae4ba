"""The cluster a clusters.yaml entry names, opened for one step and always closed.

``source`` is an Airflow connection id (a live cluster) or ``simulated:<snapshot>`` (the embedded
simulator, whose state persists between runs under the staging area).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from kafka_rebalance.cluster.admin import ClusterAdmin
from kafka_rebalance.orchestration.clusters_config import ClusterConfig, ClustersFile
from kafka_rebalance.orchestration.staging import simulated_state_file
from kafka_rebalance.snapshot import load_snapshot


def cluster_admin(cfg: ClustersFile, cluster: ClusterConfig) -> ClusterAdmin:
    """The cluster behind ``source``: the persistent simulator, or a live cluster via an Airflow connection."""
    if cluster.simulated:
        from kafka_rebalance.cluster.sim_admin import SimAdmin

        # The simulated cluster persists between runs, so a second run sees what the first one executed.
        return SimAdmin.open(load_snapshot(cfg.simulated_snapshot(cluster)), simulated_state_file(cluster.cluster_id))
    from kafka_rebalance.cluster.connection import settings_from_airflow_connection
    from kafka_rebalance.cluster.live import LiveAdmin

    return LiveAdmin(settings_from_airflow_connection(cluster.source))


@contextmanager
def admin_session(cfg: ClustersFile, cluster: ClusterConfig) -> Iterator[ClusterAdmin]:
    """``with admin_session(cfg, cluster) as admin:`` the cluster, closed however the block ends."""
    admin = cluster_admin(cfg, cluster)
    try:
        yield admin
    finally:
        admin.close()
