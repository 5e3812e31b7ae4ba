"""Fleet-wide leader imbalance: every configured cluster, ONE Spark job.

gather every cluster's snapshot -> one Spark analysis over the directory -> fleet
summary (clusters and brokers over their thresholds, and scale events) -> an asset event for
each cluster that needs a plan, which triggers that cluster's DAG (a dry run, unless it finds a scale
event and the cluster has an approval policy).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pendulum
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import Asset, dag, task

from kafka_rebalance.orchestration import fleet as fleet_steps
from kafka_rebalance.orchestration.clusters_config import clusters_file, load_clusters

PROJECT = Path(__file__).resolve().parents[1]
SPARK_JOB = PROJECT / "spark_jobs" / "leader_imbalance.py"
# The job's driver imports kafka_rebalance: point it at this deployment's copy, and run
# Python workers on the same interpreter as Airflow's tasks.
SPARK_ENV = {"PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable, "PYTHONPATH": str(PROJECT / "plugins")}

_config = load_clusters(clusters_file())


@dag(
    dag_id="kafka_fleet_imbalance",
    description="Leader imbalance and skew across every configured Kafka cluster",
    schedule=_config.fleet.schedule,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    tags=["kafka", "rebalance", "fleet"],
    default_args={"retries": 0},
    doc_md=__doc__,
)
def kafka_fleet_imbalance():
    @task
    def gather_fleet(**ctx) -> dict:
        return fleet_steps.gather_fleet(_config, ctx["run_id"])

    fleet = gather_fleet()
    analyze = SparkSubmitOperator(
        task_id="analyze_fleet",
        conn_id="spark_default",
        application=str(SPARK_JOB),
        application_args=["--snapshot", fleet["snapshots"], "--out", fleet["analysis"]],
        env_vars=SPARK_ENV,
        name="kafka-rebalance-fleet",
    )

    @task.branch
    def fleet_summary(fleet: dict) -> list[str]:
        return [f"needs_plan_{c}" for c in fleet_steps.fleet_summary(fleet, _config)]

    chooser = fleet_summary(fleet)
    fleet >> analyze >> chooser
    for cluster in _config.clusters:
        # One task per cluster so that only clusters that need a plan emit their asset event.
        @task(task_id=f"needs_plan_{cluster.cluster_id}", outlets=[Asset(f"kafka-rebalance://needs-plan/{cluster.cluster_id}")])
        def needs_plan(cluster_id: str = cluster.cluster_id) -> str:
            return cluster_id

        chooser >> needs_plan()


kafka_fleet_imbalance()
