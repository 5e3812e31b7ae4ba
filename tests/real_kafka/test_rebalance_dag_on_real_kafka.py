"""The per-cluster DAG in execute mode, through dag.test(), against the real Kafka sandbox.

The cluster `real-kafka` in the test clusters file reaches the sandbox through the Airflow
connection `kafka_sandbox` (type kafka, set by the kafka_sandbox fixture); the approval is answered
through Airflow's REST API while the run waits for it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kafka_rebalance.sandbox.seed import SeedSpec, seed
from kafka_rebalance.snapshot import load_snapshot
from kafka_rebalance.testing.hitl_client import Approver
from tests.support.kafka import (
    assert_leaders_as_planned,
    describe_partitions,
    sandbox_disk_limit,
    settled_partitions,
    throttles_anywhere,
)

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.kafka, pytest.mark.slow]


def test_rebalance_dag_executes_on_real_kafka(kafka_sandbox, topic_prefix, airflow_db):
    from airflow.dag_processing.dagbag import DagBag

    seed(kafka_sandbox, SeedSpec(topics=2, partitions=8, mb_per_partition=0.5, skew=0.9, seed=4, topic_prefix=topic_prefix))
    before = describe_partitions(kafka_sandbox, topic_prefix)
    preferred_off = sum(p["leader"] != p["replicas"][0] for p in before.values())
    counts = lambda parts: sorted(sum(b in p["replicas"] for p in parts.values()) for b in (1, 2, 3))  # noqa: E731
    assert counts(before)[-1] - counts(before)[0] > 2 or preferred_off > 0

    bag = DagBag(dag_folder=str(ROOT / "dags"))
    assert bag.import_errors == {}
    approver = Approver("kafka_rebalance_real_kafka", "Approve")
    approver.start()
    dr = bag.get_dag("kafka_rebalance_real_kafka").test(
        run_conf={"mode": "execute", "throttle": "20MiB/s", "max_moves_per_broker": 20,
                  "max_disk_usage": sandbox_disk_limit()})
    approver.join(10)
    states = {ti.task_id: str(getattr(ti.state, "value", ti.state)) for ti in dr.get_task_instances()}
    assert approver.error is None and approver.response["chosen_options"] == ["Approve"]
    for task in ("gather", "snapshot_gate", "analyze", "plan", "validate", "stage", "approve", "preflight", "execute",
                 "restore_throttles", "elections", "final_verify", "report"):
        assert states.get(task) == "success", (task, states)

    staged = sorted((Path(os.environ["KAFKA_REBALANCE_HOME"]) / "plans" / "real-kafka").glob("*/verification.json"))
    verification = json.loads(staged[-1].read_text())
    # The plan names the cluster by Kafka's own id, which every executing step checked against the sandbox.
    assert json.loads((staged[-1].parent / "plan.json").read_text())["kafka_cluster_id"] == kafka_sandbox.cluster_uuid
    assert verification["status"] == "complete" and verification["brokers_over_threshold"] == []
    # Kafka's own view after the run: balanced replica counts, full ISRs, no throttles.
    after = settled_partitions(kafka_sandbox, topic_prefix)
    assert counts(after)[-1] - counts(after)[0] <= 1
    assert all(sorted(p["isr"]) == sorted(p["replicas"]) for p in after.values()), after
    assert throttles_anywhere(kafka_sandbox, topic_prefix) == {}
    final = load_snapshot(verification["final_snapshot"])
    assert final.cluster_id == "real-kafka"
    # Leaders as planned (see assert_leaders_as_planned: a partition the plan did not elect may rightly stay off its
    # preferred replica), and as the final snapshot reported them.
    assert_leaders_as_planned(kafka_sandbox, topic_prefix, staged[-1].parent)
    assert {tp: p["leader"] for tp, p in after.items()} == {
        (x.topic, x.partition): x.leader for x in final.partitions if x.topic.startswith(topic_prefix)}
