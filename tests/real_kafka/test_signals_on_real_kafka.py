"""SIGTERM and SIGINT mid-execution on real Kafka: no throttle left, the stop recorded, a re-run finishes.

The command line is a real ``kafka-rebalance execute`` process, signalled by its pid; the Airflow
operator runs in this process with a SIGTERM handler that calls ``on_kill``, as Airflow's task runner
installs it. Throttles are read back from the brokers with Kafka's admin client.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from kafka.admin import ConfigResource, ConfigResourceType

from kafka_rebalance.plan_dir import record_approval
from kafka_rebalance.sandbox.seed import SeedSpec, seed
from tests.support.kafka import (
    ROOT,
    admin,
    cli,
    describe_partitions,
    final_targets,
    gather,
    plan_validate_and_approve,
    wait_for,
)

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

THROTTLE_KEYS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
                 "leader.replication.throttled.replicas", "follower.replication.throttled.replicas")
# Sources of a value someone set (per broker or topic, or as the cluster-wide dynamic default), not Kafka's own default.
SET_SOURCES = {"DYNAMIC_BROKER_CONFIG", "DYNAMIC_DEFAULT_BROKER_CONFIG", "DYNAMIC_TOPIC_CONFIG", "STATIC_BROKER_CONFIG"}


def throttles_set(sandbox, prefix: str) -> dict[str, dict[str, str]]:
    """Every throttle config set on any broker or on this test's topics, as the brokers answer DescribeConfigs."""
    client = admin(sandbox)
    try:
        resources = [("broker", ConfigResource(ConfigResourceType.BROKER, str(n.node_id))) for n in sandbox.nodes]
        resources += [("topic", ConfigResource(ConfigResourceType.TOPIC, t)) for t in client.list_topics() if t.startswith(prefix)]
        left: dict[str, dict[str, str]] = {}
        for kind, resource in resources:
            found = client.describe_configs([resource], config_filter="all").get(kind, {}).get(resource.name, {})
            hits = {k: v["value"] for k, v in found.items() if k in THROTTLE_KEYS and v.get("config_source") in SET_SOURCES}
            if hits:
                left[f"{kind} {resource.name}"] = hits
        return left
    finally:
        client.close()


def _submitted(ledger_path: Path) -> bool:
    """A move is in flight: the ledger says a step was submitted (saved before the submission) and none ended."""
    if not ledger_path.exists():
        return False
    try:
        steps = json.loads(ledger_path.read_text()).get("continuous", {}).get("steps", {})
    except json.JSONDecodeError:  # pragma: no cover - the ledger is replaced atomically
        return False
    return any(v.get("state") == "submitted" for v in steps.values())


def _slow_plan(kafka_sandbox, topic_prefix: str, tmp_path: Path) -> Path:
    """A plan whose moves take several seconds each (1 MiB partitions under a 256 KiB/s throttle)."""
    seed(kafka_sandbox, SeedSpec(topics=1, partitions=6, mb_per_partition=1, skew=0.9, seed=5, topic_prefix=topic_prefix))
    snap_path = gather(kafka_sandbox, tmp_path / "before.json", topic_prefix)
    plan_dir = tmp_path / "plan"
    manifest = plan_validate_and_approve(snap_path, plan_dir, "--throttle", str(256 * 1024), "--max-moves-per-broker", "1",
                                 "--ordering", "large-first")
    assert manifest["summary"]["replica_moves"] >= 2
    assert throttles_set(kafka_sandbox, topic_prefix) == {}
    return plan_dir


def _finishes_on_rerun(kafka_sandbox, topic_prefix: str, plan_dir: Path) -> None:
    again = cli("execute", "--plan", str(plan_dir), "--bootstrap-server", kafka_sandbox.bootstrap_servers, "--poll-interval", "1")
    assert again.returncode == 0, again.stderr[-3000:]
    now = describe_partitions(kafka_sandbox, topic_prefix)
    for tp, target in final_targets(plan_dir).items():
        assert now[tp]["replicas"] == target
    assert throttles_set(kafka_sandbox, topic_prefix) == {}


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"])
def test_a_signal_mid_move_restores_every_throttle_and_a_rerun_finishes(kafka_sandbox, topic_prefix, tmp_path, signum, code):
    plan_dir = _slow_plan(kafka_sandbox, topic_prefix, tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    proc = subprocess.Popen([sys.executable, "-m", "kafka_rebalance.cli", "execute", "--plan", str(plan_dir),
                             "--bootstrap-server", kafka_sandbox.bootstrap_servers, "--poll-interval", "0.5"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    ledger_path = plan_dir / "ledger.json"
    try:
        # The ledger records a submission before its throttles are set: wait for both.
        wait_for(lambda: proc.poll() is not None or (_submitted(ledger_path) and bool(throttles_set(kafka_sandbox, topic_prefix))),
                  180, "a submitted move under the plan's throttle")
        assert proc.poll() is None, "execute ended before a move was in flight"
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:  # pragma: no cover - only when an assertion above failed
            proc.kill()
            proc.communicate()
    name = signal.Signals(signum).name
    assert proc.returncode == code, err[-3000:]
    assert out == "" and "Traceback" not in err
    stops = [line for line in err.splitlines() if line.startswith("execute: stopped")]
    assert len(stops) == 1 and err.rstrip().splitlines()[-1] == stops[0], err[-3000:]
    assert stops[0].startswith(f"execute: stopped by {name} after ")
    assert "every throttle this run set is restored to its value before the run" in stops[0]
    assert throttles_set(kafka_sandbox, topic_prefix) == {}
    ledger = json.loads(ledger_path.read_text())
    assert ledger["stops"][-1]["signal"] == name
    # The line and the ledger name the same moves left running (Kafka's answer at the stop).
    left = ledger["stops"][-1]["in_flight"]
    assert (f"; {len(left)} move(s) left running in Kafka, no longer throttled" if left else "; no move of the plan is in flight") in stops[0]
    _finishes_on_rerun(kafka_sandbox, topic_prefix, plan_dir)


def test_the_airflow_operator_killed_mid_move_restores_every_throttle(kafka_sandbox, topic_prefix, tmp_path):
    from kafka_rebalance.orchestration.execute_operator import ExecutePlanOperator
    from kafka_rebalance.orchestration.pipeline import ExecutionStopped

    plan_dir = _slow_plan(kafka_sandbox, topic_prefix, tmp_path)
    record_approval(plan_dir, "approved", "test")
    op = ExecutePlanOperator(task_id="execute", cluster_id="real-kafka", staged_dir=str(plan_dir), window="now")
    ledger_path = plan_dir / "ledger.json"

    def kill_when_moving() -> None:
        wait_for(lambda: _submitted(ledger_path) and bool(throttles_set(kafka_sandbox, topic_prefix)), 180,
                  "a submitted move under the plan's throttle")
        os.kill(os.getpid(), signal.SIGTERM)

    # Airflow's task runner (sdk/execution_time/task_runner.py, run()) installs exactly this: SIGTERM -> on_kill.
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: op.on_kill())
    killer = threading.Thread(target=kill_when_moving, daemon=True)
    try:
        killer.start()
        with pytest.raises(ExecutionStopped) as stopped:
            op.execute(context={})
    finally:
        signal.signal(signal.SIGTERM, previous)
        killer.join(5)
    assert str(stopped.value).startswith("execute: stopped by SIGTERM after ")
    assert "every throttle this run set is restored" in str(stopped.value)
    assert throttles_set(kafka_sandbox, topic_prefix) == {}
    assert json.loads(ledger_path.read_text())["stops"][-1]["signal"] == "SIGTERM"
    _finishes_on_rerun(kafka_sandbox, topic_prefix, plan_dir)


class _TaskInstance:
    """What the operator reads of Airflow's task instance: the identity its lease records."""

    dag_id, run_id, task_id = "kafka_rebalance_real_kafka", "manual__worker-killed", "execute"


def test_a_worker_killed_mid_move_is_resumed_by_a_new_worker_that_finishes_the_plan(kafka_sandbox, topic_prefix, tmp_path):
    """The Airflow worker running the execute task dies (SIGKILL: no on_kill, no finally) with moves in flight and
    throttles set; the task's retry, on a new worker, restores the leftover throttles, watches the moves the dead
    worker submitted, takes over the lease the dead one recorded, and finishes the plan."""
    from kafka_rebalance.orchestration.execute_operator import ExecutePlanOperator

    plan_dir = _slow_plan(kafka_sandbox, topic_prefix, tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    worker = ("from kafka_rebalance.orchestration.execute_operator import ExecutePlanOperator\n"
              "class TI:\n    dag_id, run_id, task_id = 'kafka_rebalance_real_kafka', 'manual__worker-killed', 'execute'\n"
              f"ExecutePlanOperator(task_id='execute', cluster_id='real-kafka', staged_dir={str(plan_dir)!r}, window='now')"
              ".execute(context={'ti': TI()})\n")
    proc = subprocess.Popen([sys.executable, "-c", worker], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    ledger_path = plan_dir / "ledger.json"
    try:
        wait_for(lambda: proc.poll() is not None or (_submitted(ledger_path) and bool(throttles_set(kafka_sandbox, topic_prefix))),
                 180, "a submitted move under the plan's throttle")
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        proc.kill()  # the worker dies: nothing of ours runs after this
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:  # pragma: no cover - only when an assertion above failed
            proc.kill()
            proc.communicate()
    assert throttles_set(kafka_sandbox, topic_prefix) != {}  # the dead worker left its throttles set
    dead = json.loads(ledger_path.read_text())["lease"]
    assert dead is not None and dead["pid"] == proc.pid and dead["owner"] == "kafka_rebalance_real_kafka/manual__worker-killed/execute"

    # The retry on a new worker (this process): Airflow calls execute again, here as the resumed deferred task.
    op = ExecutePlanOperator(task_id="execute", cluster_id="real-kafka", staged_dir=str(plan_dir), window="now")
    assert op.execute(context={"ti": _TaskInstance()}, event={"resumed": "after the worker was lost"}) == str(ledger_path)

    ledger = json.loads(ledger_path.read_text())
    assert any(f"pid {dead['pid']}" in e and "taken by" in e for e in ledger["events"]), ledger["events"][-10:]
    assert ledger["lease"] is None
    assert throttles_set(kafka_sandbox, topic_prefix) == {}
    now = describe_partitions(kafka_sandbox, topic_prefix)
    for tp, target in final_targets(plan_dir).items():
        assert now[tp]["replicas"] == target, tp
