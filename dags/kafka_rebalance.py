"""One rebalance DAG per cluster in config/clusters.yaml.

gather -> snapshot gate -> Spark analysis -> balanced? -> plan -> validate -> stage
-> [execute mode, or a scale event under an approval policy] approval policy -> approval (unless the policy
approved) -> execute batches (throttles always restored) -> elections
-> final verify -> report.

This file only wires tasks; every step is a function in ``kafka_rebalance.orchestration.pipeline``.
Scheduled (and asset-triggered) runs are dry runs: they stage a plan and stop, unless they find a scale
event (brokers added, or marked for removal) on a cluster with an approval policy: then the policy
approves the plan or holds it for a person's approval, and an approved plan executes.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pendulum
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import Asset, AssetOrTimeSchedule, CronTriggerTimetable, TriggerRule, chain, dag, task

from kafka_rebalance.metrics import DEFAULT_THRESHOLD_PERCENTAGE
from kafka_rebalance.orchestration import pipeline
from kafka_rebalance.orchestration.approval import PlanApprovalOperator
from kafka_rebalance.orchestration.clusters_config import ClusterConfig, ClustersFile, clusters_file, load_clusters
from kafka_rebalance.orchestration.execute_operator import ExecutePlanOperator
from kafka_rebalance.orchestration.trigger_form import trigger_form

PROJECT = Path(__file__).resolve().parents[1]
SPARK_JOB = PROJECT / "spark_jobs" / "leader_imbalance.py"
# The job's driver imports kafka_rebalance: point it at this deployment's copy, and run
# Python workers on the same interpreter as Airflow's tasks.
SPARK_ENV = {"PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable, "PYTHONPATH": str(PROJECT / "plugins")}


def build(cfg: ClustersFile, cluster: ClusterConfig):
    defaults = cfg.effective_defaults(cluster)
    staged_asset = Asset(f"kafka-rebalance://plans/{cluster.cluster_id}")
    needs_plan = Asset(f"kafka-rebalance://needs-plan/{cluster.cluster_id}")

    @dag(
        dag_id=cluster.dag_id,
        description=f"Rebalance Kafka cluster {cluster.cluster_id} ({cluster.source})",
        # The cron schedule, or the fleet DAG's "needs a plan" asset event, whichever comes first.
        schedule=(
            AssetOrTimeSchedule(timetable=CronTriggerTimetable(cluster.schedule, timezone="UTC"), assets=needs_plan)
            if cluster.schedule
            else [needs_plan]
        ),
        start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
        catchup=False,
        max_active_runs=1,
        tags=["kafka", "rebalance", cluster.cluster_id],
        default_args={"retries": 0},
        params=trigger_form(cfg, cluster),
        doc_md=__doc__,
    )
    def rebalance():
        @task
        def gather(**ctx) -> dict:
            return pipeline.gather(cfg, cluster, ctx["run_id"], ctx["params"])

        @task
        def snapshot_gate(run: dict) -> str:
            return pipeline.snapshot_gate(run)

        run = gather()
        gate = snapshot_gate(run)
        analyze = SparkSubmitOperator(
            task_id="analyze",
            conn_id="spark_default",
            application=str(SPARK_JOB),
            application_args=[
                "--snapshot", run["snapshot"], "--out", run["analysis"],
                "--threshold-percentage",
                f"{{{{ params.threshold_percentage if params.threshold_percentage is not none else {DEFAULT_THRESHOLD_PERCENTAGE} }}}}",
                "--byte-tolerance", str(defaults.byte_tolerance),
                "--replica-tolerance", str(defaults.replica_tolerance),
            ],
            env_vars=SPARK_ENV,
            name=f"kafka-rebalance-{cluster.cluster_id}",
        )  # fmt: skip

        @task.branch
        def balanced(run: dict, **ctx) -> str:
            # Unbalanced, or asked for a change (e.g. brokers to decommission) the cluster does not have yet.
            return "plan" if pipeline.needs_plan(run, ctx["params"], defaults) else "record_balanced"

        @task
        def record_balanced(run: dict) -> str:
            return pipeline.record_balanced(run)

        @task
        def plan(run: dict, **ctx) -> str:
            return pipeline.make_plan(run, ctx["params"], defaults, mode=cluster.executor.mode)

        @task
        def validate(run: dict, plan_dir: str) -> str:
            return pipeline.validate_plan(run, plan_dir)

        @task(outlets=[staged_asset])
        def stage(plan_dir: str, **ctx) -> dict:
            return pipeline.stage(cluster.cluster_id, plan_dir, outlet_events=ctx["outlet_events"][staged_asset],
                                  mode=cluster.executor.mode, max_age_seconds=pipeline.approval_age_limit(cluster),
                                  window=pipeline.window_text(cluster, ctx["params"].get("window")))

        @task.branch
        def mode(run: dict, **ctx) -> str:
            executes = pipeline.run_executes(cluster, run, ctx["dag_run"].run_type, ctx["params"], defaults)
            return "policy" if executes else "dry_run_done"

        @task
        def dry_run_done(staged: dict) -> str:
            return staged["dir"]

        @task
        def policy(staged: dict, **ctx) -> dict | None:
            # Records an approval the cluster's policy allows; the approval step then asks nobody.
            return pipeline.apply_policy(cluster, staged["dir"], ctx["params"].get("window"))

        approve = PlanApprovalOperator(
            task_id="approve",
            policy_task_id="policy",
            subject=f"Rebalance {cluster.cluster_id}: approve the staged plan?",
            body="{{ ti.xcom_pull(task_ids='stage')['body'] }}",
        )

        @task
        def preflight(staged: dict, **ctx) -> dict:
            return pipeline.preflight(cfg, cluster, staged["dir"], ctx["ti"].xcom_pull(task_ids="approve", key="decision"),
                                      rearm=bool(ctx["params"].get("rearm")), run_id=ctx["run_id"],
                                      window=ctx["params"].get("window"))

        # Deferrable: between maintenance windows and while paused it waits in the triggerer, not a worker.
        execute = ExecutePlanOperator(
            task_id="execute",
            cluster_id=cluster.cluster_id,
            staged_dir="{{ ti.xcom_pull(task_ids='stage')['dir'] }}",
            window="{{ params.window }}",
            resume_poll_seconds=cluster.executor.poll_interval_seconds,
        )

        # ALL_DONE tasks may run after `stage` was skipped (balanced cluster), so they read
        # its result with xcom_pull, which gives None, instead of an XComArg that would fail.
        @task(trigger_rule=TriggerRule.ALL_DONE)
        def restore_throttles(**ctx) -> str | None:
            staged = ctx["ti"].xcom_pull(task_ids="stage")
            return pipeline.restore_throttles(cfg, cluster, staged["dir"]) if staged else None

        @task
        def elections(staged: dict) -> str:
            return pipeline.elections(cfg, cluster, staged["dir"])

        @task
        def final_verify(run: dict, staged: dict) -> str:
            return pipeline.final_verify(cfg, cluster, run, staged["dir"])

        @task(trigger_rule=TriggerRule.ALL_DONE)
        def report(run: dict, **ctx) -> dict:
            ti = ctx["ti"]
            staged = ti.xcom_pull(task_ids="stage")
            return pipeline.finish(run, staged["dir"] if staged else None, ti.xcom_pull(task_ids="approve", key="decision"),
                                   mode=cluster.executor.mode)

        # Every run: the metadata, its gate, the Spark analysis, then plan or not.
        branch = balanced(run)
        chain(gate, analyze, branch)
        # Balanced: record it.
        done_balanced = record_balanced(run)
        branch >> done_balanced
        # Plan: validate, stage, then a dry run ends here; an execute run meets the approval policy, then (unless the
        # policy approved) a person.
        plan_dir = plan(run)
        staged = stage(validate(run, plan_dir))
        done_dry = dry_run_done(staged)
        chain(branch, plan_dir)
        judged = policy(staged)
        chain(staged, mode(run), [done_dry, judged])
        judged >> approve
        # Execute: preflight (setup) -> execute -> restore_throttles (teardown): the teardown runs
        # whenever the setup succeeded, so throttles are restored even when a batch fails.
        armed = preflight(staged)
        restore = restore_throttles()
        verified = final_verify(run, staged)
        chain(approve, armed, execute, restore)
        armed >> restore.as_teardown(setups=armed)
        chain([execute, restore], elections(staged), verified)
        # Not a direct child of `approve`, so a Reject does not skip it: the decision and the
        # report are always written, and a rejected plan stays on disk marked rejected.
        [done_balanced, done_dry, verified] >> report(run)

    return rebalance()


_config = load_clusters(clusters_file())
for _cluster in _config.clusters:
    globals()[_cluster.dag_id] = build(_config, _cluster)
