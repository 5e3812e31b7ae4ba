"""The real per-cluster DAG, run end to end with dag.test() on SQLite, Spark local and the simulator."""

from __future__ import annotations

import json
import os
from datetime import UTC
from pathlib import Path

import pytest

from kafka_rebalance.metrics import broker_loads
from kafka_rebalance.orchestration.staging import simulated_state_file
from kafka_rebalance.snapshot import load_snapshot
from kafka_rebalance.testing.hitl_client import Approver

ROOT = Path(__file__).resolve().parents[2]
THROTTLE_KEYS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
                 "leader.replication.throttled.replicas", "follower.replication.throttled.replicas")  # fmt: skip

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dagbag(airflow_db):
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(ROOT / "dags"))
    assert bag.import_errors == {}
    return bag


def run(dagbag, dag_id: str, **conf):
    dr = dagbag.get_dag(dag_id).test(run_conf=conf or None)
    return dr, {ti.task_id: str(getattr(ti.state, "value", ti.state)) for ti in dr.get_task_instances()}


def data_root() -> Path:
    return Path(os.environ["KAFKA_REBALANCE_HOME"])


def sim_state(cluster: str) -> dict:
    return json.loads(simulated_state_file(cluster).read_text())


def throttles_left(state: dict) -> list[str]:
    """Every throttle config still set anywhere in the simulated cluster."""
    found = []
    text = json.dumps(state)
    for key in THROTTLE_KEYS:
        if f'"{key}"' in text:
            found.append(key)
    return found


def current_snapshot(cluster: str):
    from kafka_rebalance.cluster.sim_admin import read_state

    return read_state(simulated_state_file(cluster)).describe()


def assignment(snapshot) -> dict:
    return {(p.topic, p.partition): p.replicas for p in snapshot.partitions}


def staged_dirs(cluster: str) -> list[Path]:
    root = data_root() / "plans" / cluster
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")) if root.exists() else []


def test_balanced_cluster_stops_after_analysis(dagbag) -> None:
    dr, states = run(dagbag, "kafka_rebalance_balanced")
    assert str(dr.state) in ("success", "DagRunState.SUCCESS")
    assert states["analyze"] == "success" and states["record_balanced"] == "success"
    assert states["plan"] == "skipped" and states["stage"] == "skipped"
    assert staged_dirs("balanced") == []


def test_dry_run_stages_a_validated_plan(dagbag) -> None:
    dr, states = run(dagbag, "kafka_rebalance_demo_dry")
    assert states["stage"] == "success" and states["dry_run_done"] == "success"
    assert states["approve"] == "skipped" and states["execute"] == "skipped"
    [staged] = staged_dirs("demo-dry")
    manifest = json.loads((staged / "plan.json").read_text())
    verdict = json.loads((staged / "validation" / "verdict.json").read_text())
    assert verdict["status"] == "passed" and verdict["plan_hash"] == manifest["plan_hash"]
    assert json.loads((staged / "validation" / "result.json").read_text())["status"] == "passed"
    assert (staged / "batches" / "001" / "reassignment.json").exists() and (staged / "RUNBOOK.md").exists()
    assert not (staged / "ledger.json").exists()
    assert 'id="validation-status">passed<' in (staged / "report.html").read_text()
    # Nothing was executed: the simulated cluster still has its original assignment.
    assert assignment(current_snapshot("demo-dry")) == assignment(load_snapshot(ROOT / "samples" / "sample-cluster.json"))


def test_execute_approved_through_rest_api_balances_the_cluster(dagbag) -> None:
    before = load_snapshot(ROOT / "samples" / "sample-cluster.json")
    approver = Approver("kafka_rebalance_demo_exec", "Approve")
    approver.start()
    dr, states = run(dagbag, "kafka_rebalance_demo_exec", mode="execute", throttle="80MiB/s")
    approver.join(5)
    assert approver.error is None and approver.response["chosen_options"] == ["Approve"]
    assert "replica moves" in approver.detail["body"]
    for task in ("approve", "preflight", "execute", "restore_throttles", "elections", "final_verify", "report"):
        assert states[task] == "success", (task, states)
    [staged] = staged_dirs("demo-exec")
    verification = json.loads((staged / "verification.json").read_text())
    assert verification["status"] == "complete" and verification["brokers_over_threshold"] == []
    assert verification["replicas_balanced"] is True
    assert json.loads((staged / "approval.json").read_text())["decision"] == "approved"
    report = (staged / "report.html").read_text()
    assert "final snapshot captured" in report and report.count("<svg") >= 7
    assert throttles_left(sim_state("demo-exec")) == []
    after = load_snapshot(verification["final_snapshot"])
    spread = lambda s: max(b.replicas for b in broker_loads(s)) - min(b.replicas for b in broker_loads(s))  # noqa: E731
    assert spread(after) < spread(before)
    assert json.loads((staged / "plan.json").read_text())["options"]["throttle_bytes_per_sec"] == 80 * 1024 * 1024


def test_rejected_approval_executes_nothing(dagbag) -> None:
    approver = Approver("kafka_rebalance_demo_reject", "Reject")
    approver.start()
    dr, states = run(dagbag, "kafka_rebalance_demo_reject", mode="execute")
    approver.join(5)
    assert approver.error is None
    assert states["execute"] == "skipped" and states["report"] == "success"
    [staged] = staged_dirs("demo-reject")
    decision = json.loads((staged / "approval.json").read_text())
    assert decision["decision"] == "rejected" and decision["by"] == "Anonymous"  # the all-admins test user
    assert not (staged / "ledger.json").exists()
    assert throttles_left(sim_state("demo-reject")) == []
    assert assignment(current_snapshot("demo-reject")) == assignment(load_snapshot(ROOT / "samples" / "sample-cluster.json"))


def test_failing_batch_still_restores_throttles(dagbag) -> None:
    def kill_a_destination(detail: dict) -> None:
        # Just before approving, kill a broker that the first data-moving batch copies to.
        [staged] = staged_dirs("demo-fail")
        first_move = next(b["id"] for b in json.loads((staged / "plan.json").read_text())["batches"] if b["kind"] == "move")
        plan = json.loads((staged / "batches" / first_move / "reassignment.json").read_text())
        before = json.loads((staged / "batches" / first_move / "rollback.json").read_text())
        old = {(p["topic"], p["partition"]): set(p["replicas"]) for p in before["partitions"]}
        victim = next(b for p in plan["partitions"] for b in p["replicas"] if b not in old[(p["topic"], p["partition"])])
        from kafka_rebalance.cluster.sim_admin import read_state, write_state

        path = simulated_state_file("demo-fail")
        sim = read_state(path)
        sim.kill_broker(victim)
        write_state(sim, path)

    approver = Approver("kafka_rebalance_demo_fail", "Approve", before_answer=kill_a_destination)
    approver.start()
    dr, states = run(dagbag, "kafka_rebalance_demo_fail", mode="execute")
    approver.join(5)
    assert approver.error is None
    assert states["preflight"] == "success" and states["execute"] == "failed"
    assert states["restore_throttles"] == "success"  # the teardown ran although the batch failed
    # Nothing executed to the end: the run itself shows failed, not a green success over a failed execution.
    assert states["report"] == "failed" and str(getattr(dr.state, "value", dr.state)) == "failed"
    assert states["elections"] in ("upstream_failed", "skipped")
    [staged] = staged_dirs("demo-fail")
    ledger = json.loads((staged / "ledger.json").read_text())
    assert all(b.get("throttles_restored") for b in ledger["batches"].values() if b.get("throttles_before") is not None)
    assert throttles_left(sim_state("demo-fail")) == []


def test_rest_api_refuses_bad_trigger_values(dagbag) -> None:
    from airflow.api_fastapi.app import create_app
    from fastapi.testclient import TestClient

    client = TestClient(create_app())
    url = "/api/v2/dags/kafka_rebalance_demo_dry/dagRuns"
    bad = client.post(url, json={"logical_date": None, "conf": {"max_moves_per_broker": 0}})
    assert bad.status_code == 400, bad.text
    assert "max_moves_per_broker" in bad.text
    bad = client.post(url, json={"logical_date": None, "conf": {"throttle": "80 megs"}})
    assert bad.status_code == 400 and "throttle" in bad.text, bad.text


def test_fleet_dag_runs_one_spark_job_and_flags_unbalanced_clusters(dagbag) -> None:
    dr, states = run(dagbag, "kafka_fleet_imbalance")
    assert states["gather_fleet"] == "success" and states["analyze_fleet"] == "success"
    summary_files = sorted((data_root() / "runs" / "_fleet").glob("*/fleet_summary.json"))
    fleet = json.loads(summary_files[-1].read_text())
    by_id = {c["cluster_id"]: c for c in fleet["clusters"]}
    assert by_id["balanced"]["balanced"] is True
    # Only unbalanced clusters get their "needs a plan" asset event (their task runs, the rest are skipped).
    assert states["needs_plan_balanced"] == "skipped"
    assert "balanced" not in fleet["need_plan"]
    for cluster in fleet["need_plan"]:
        assert states[f"needs_plan_{cluster}"] == "success"
    # One Spark job over all clusters: one broker_metrics output covering every cluster.
    analysis = summary_files[-1].parent / "analysis" / "summary.json"
    assert {c["cluster_id"] for c in json.loads(analysis.read_text())["clusters"]} == set(by_id)


def test_decommission_on_a_balanced_cluster_empties_the_brokers(dagbag) -> None:
    """The cluster is balanced, so only the operator's request makes this run plan. Brokers 4 and 5
    (racks 1 and 2) share partitions: those lose two replicas with one new replica per step, so
    their first step keeps a replica on a broker being decommissioned, which the gate accepts."""
    from collections import Counter

    approver = Approver("kafka_rebalance_decom_balanced", "Approve")
    approver.start()
    dr, states = run(dagbag, "kafka_rebalance_decom_balanced", mode="execute", decommission_brokers=[4, 5])
    approver.join(5)
    assert approver.error is None and approver.response["chosen_options"] == ["Approve"]
    assert states["record_balanced"] == "skipped", states
    for task in ("plan", "validate", "stage", "approve", "preflight", "execute", "restore_throttles", "elections",
                 "final_verify", "report"):
        assert states[task] == "success", (task, states)
    [staged] = staged_dirs("decom-balanced")
    manifest = json.loads((staged / "plan.json").read_text())
    assert json.loads((staged / "validation" / "verdict.json").read_text())["status"] == "passed"
    assert manifest["options"]["decommission_brokers"] == [4, 5]
    assert manifest["options"]["byte_tolerance"] == 0.2  # from clusters.yaml, not the form
    steps = [p["replicas"] for b in manifest["batches"]
             for p in json.loads((staged / "batches" / b["id"] / "reassignment.json").read_text())["partitions"]]
    assert any({4, 5} & set(r) for r in steps)  # an intermediate step still on a leaving broker
    verification = json.loads((staged / "verification.json").read_text())
    assert verification["status"] == "complete"
    for final in (load_snapshot(verification["final_snapshot"]), current_snapshot("decom-balanced")):
        held = Counter(b for p in final.partitions for b in p.replicas)
        assert (held[4], held[5]) == (0, 0)
        assert sum(held.values()) == 36 and all(len(p.replicas) == 3 for p in final.partitions)
    assert throttles_left(sim_state("decom-balanced")) == []


@pytest.mark.spark
def test_fleet_dag_spark_submit_on_two_worker_standalone_cluster(dagbag, spark, spark_standalone, monkeypatch) -> None:
    """The DAG's SparkSubmitOperator path against a real master with two workers: same bytes as local mode."""
    from kafka_rebalance.analysis.job import run as run_locally

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", json.dumps(
        {"conn_type": "spark", "host": "spark://127.0.0.1", "port": spark_standalone.port,
         "extra": {"spark-binary": "spark-submit"}}))  # fmt: skip
    before = {a["id"] for a in spark_standalone.state()["completedapps"]}
    dr, states = run(dagbag, "kafka_fleet_imbalance")
    assert states["gather_fleet"] == "success" and states["analyze_fleet"] == "success"
    apps = [a for a in spark_standalone.state()["completedapps"] if a["id"] not in before]
    # One application (named by the job's own SparkSession), with a 1-core executor on each worker.
    assert [(a["name"], a["cores"]) for a in apps] == [("kafka-rebalance-leader-imbalance", 2)]
    run_dir = sorted((data_root() / "runs" / "_fleet").glob("*/fleet_summary.json"))[-1].parent
    local = run_locally(spark, run_dir / "snapshots", run_dir / "local")
    for name in ("broker_metrics.parquet", "summary.json"):
        assert (run_dir / "analysis" / name).read_bytes() == (run_dir / "local" / name).read_bytes(), name
    fleet = json.loads((run_dir / "fleet_summary.json").read_text())
    # A plan is needed where the job found imbalance, and where brokers were added or are leaving (a scale event,
    # e.g. scale-policy's empty broker 6 until a test in this session has filled it).
    scaled = {r["cluster_id"] for r in fleet["clusters"] if r["scale_event"] and any(r["scale_event"].values())}
    need = fleet["need_plan"]
    assert need == sorted({c["cluster_id"] for c in local.summary["clusters"] if not c["balanced"]} | scaled)
    assert "balanced" not in need and need


WINDOW_OPENS_AFTER = 180  # seconds from the trigger; the run waits for it, so the test lasts at least this


def test_execute_defers_while_paused_and_until_its_window_opens(dagbag) -> None:
    """Paused before it starts, the execute task waits in a trigger (PlanResumedTrigger) until resumed; then,
    before its window (an explicit interval from the trigger form), in Airflow's DateTimeTrigger."""
    import threading
    import time
    from datetime import datetime, timedelta

    from kafka_rebalance.executor.control import request

    # The window must open after the run reaches execute (held by the pause) and is resumed: gather, the Spark
    # analysis, plan, validation and staging come first. 45 s was too short on 2 busy cores (the run got there after
    # the window had opened, so no outside-window hold was ever due), and 75 s beside two other test workers (108 s).
    opens = (datetime.now(UTC) + timedelta(seconds=WINDOW_OPENS_AFTER)).replace(microsecond=0)
    resumed_at: list[datetime] = []

    def pause_before_approving(detail: dict) -> None:
        [staged] = staged_dirs("demo-window")
        request(staged, "pause", by="operator-a")

        def resume_once_held() -> None:
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                ledger = staged / "ledger.json"
                if ledger.exists() and json.loads(ledger.read_text()).get("holds"):
                    resumed_at.append(datetime.now(UTC))
                    request(staged, "resume", by="operator-b")
                    return
                time.sleep(0.5)

        threading.Thread(target=resume_once_held, daemon=True).start()

    approver = Approver("kafka_rebalance_demo_window", "Approve", before_answer=pause_before_approving)
    approver.start()
    dr, states = run(dagbag, "kafka_rebalance_demo_window", mode="execute",
                     window=f"{opens.isoformat().replace('+00:00', 'Z')}/PT30M")
    approver.join(5)
    assert approver.error is None
    assert states["execute"] == "success" and states["final_verify"] == "success", states
    [staged] = staged_dirs("demo-window")
    ledger = json.loads((staged / "ledger.json").read_text())
    # Checked first: resumed after the window opened, the run owes no outside-window hold (a slow machine, not a bug).
    assert resumed_at and resumed_at[0] < opens, (resumed_at, opens, ledger["holds"])
    # First held by the pause, then (resumed before the window) by the window; both deferred, not failed.
    assert [h["reason"] for h in ledger["holds"]] == ["paused", "outside-window"], ledger["holds"]
    assert ledger["holds"][1]["resume_at"] == opens.isoformat()
    starts = [datetime.fromisoformat(b["started_at"]) for b in ledger["batches"].values()]
    assert starts and min(starts) >= opens  # no batch started before the window opened
    control = json.loads((staged / "control.json").read_text())
    assert [(r["action"], r["by"]) for r in control["requests"]] == [("pause", "operator-a"), ("resume", "operator-b")]
    assert throttles_left(sim_state("demo-window")) == []


def test_a_scale_out_is_approved_by_the_clusters_policy_and_executes_with_nobody_asked(dagbag) -> None:
    """scale-policy: broker 6 joined empty, and the cluster's policy allows the plan that fills it (about 5 GiB to
    copy, under small-moves' 20 GiB): the policy task records the approval and the approval step asks nobody."""
    # A watchdog, not an approver: were anybody asked, it would reject, and the run would execute nothing.
    watchdog = Approver("kafka_rebalance_scale_policy", "Reject", timeout=600)
    watchdog.start()
    try:
        dr, states = run(dagbag, "kafka_rebalance_scale_policy", mode="execute")
    finally:
        watchdog.stop()
    assert watchdog.detail is None and watchdog.error is None  # no approval request was ever pending
    for task in ("stage", "policy", "approve", "preflight", "execute", "restore_throttles", "elections", "final_verify",
                 "report"):
        assert states[task] == "success", (task, states)
    [staged] = staged_dirs("scale-policy")
    manifest = json.loads((staged / "plan.json").read_text())
    approval = json.loads((staged / "approval.json").read_text())
    assert (approval["decision"], approval["by"], approval["plan_hash"]) == ("approved", "policy:small-moves",
                                                                             manifest["plan_hash"])
    assert approval["policy"]["rule"] == "small-moves"
    assert approval["policy"]["figures"]["bytes_moved"] == manifest["summary"]["bytes_moved"] <= 20 * 2**30
    assert json.loads((staged / "verification.json").read_text())["status"] == "complete"
    # Every move the plan made filled the new broker.
    after = current_snapshot("scale-policy")
    assert sum(6 in p.replicas for p in after.partitions) == manifest["summary"]["replica_moves"] > 0
    assert throttles_left(sim_state("scale-policy")) == []
