"""Plan-manifest refusals, the execute/verify/cancel CLI, and connection-error messages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_rebalance.cluster.simulator import Simulator
from kafka_rebalance.plan_dir import record_approval, seal
from kafka_rebalance.plan_manifest import PlanDirError, load_plan
from kafka_rebalance.snapshot import load_snapshot
from kafka_rebalance.testing.testserver import KafkaTestServer
from tests.support.plans import approve, judge, move_one_replica, read_json, write_plan

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "sample-cluster.json"


def _cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    return subprocess.run([sys.executable, "-m", "kafka_rebalance.cli", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture
def plan_dir(tmp_path):
    snap = load_snapshot(SAMPLE)
    return approve(write_plan(tmp_path / "plan", snap, [move_one_replica(snap, 4), move_one_replica(snap, 4, skip=4)]))


def test_plan_hash_is_sha256_of_the_canonical_field_digests(plan_dir):
    manifest = read_json(plan_dir / "plan.json")
    import hashlib

    def digest(value) -> str:
        return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()

    hashed = {k: v for k, v in manifest.items() if k not in ("plan_hash", "field_sha256")}
    hashed["snapshot"] = {k: v for k, v in hashed["snapshot"].items() if k != "path"}
    fields = {k: digest(v) for k, v in hashed.items()}
    assert set(fields) == {"format_version", "tool_version", "cluster_id", "snapshot", "options", "files", "batches", "summary"}
    assert manifest["field_sha256"] == fields
    assert manifest["plan_hash"] == digest(fields)
    assert load_plan(plan_dir).plan_hash == manifest["plan_hash"]


def test_edited_batch_file_is_refused(plan_dir):
    path = plan_dir / "batches" / "001" / "reassignment.json"
    raw = read_json(path)
    raw["partitions"][0]["replicas"] = list(reversed(raw["partitions"][0]["replicas"]))
    path.write_text(json.dumps(raw, indent=2, sort_keys=True) + "\n")
    with pytest.raises(PlanDirError, match=r"batches/001/reassignment.json: changed since planning"):
        load_plan(plan_dir)


def test_edited_manifest_is_refused_even_with_matching_file_hashes(plan_dir):
    manifest = read_json(plan_dir / "plan.json")
    manifest["options"]["throttle_bytes_per_sec"] = 1
    (plan_dir / "plan.json").write_text(json.dumps(manifest))
    with pytest.raises(PlanDirError, match="plan.json: options: changed since planning"):
        load_plan(plan_dir)
    # Re-hashing the edit does not help: the verdict names the old hash.
    (plan_dir / "plan.json").write_text(json.dumps(seal(manifest)))
    with pytest.raises(PlanDirError, match="verdict.json: plan_hash: the verdict judged plan"):
        load_plan(plan_dir)


@pytest.mark.parametrize("status", ["pending", "failed"])
def test_plan_not_passed_is_refused(tmp_path, status):
    snap = load_snapshot(SAMPLE)
    plan = write_plan(tmp_path / "p", snap, [move_one_replica(snap, 2)], status=status)
    r = _cli("execute", "--plan", str(plan), "--simulate", str(SAMPLE))
    assert r.returncode == 2
    expected = "missing; the plan was never validated" if status == "pending" else 'status is "failed"'
    assert expected in r.stderr and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (plan / "simulator-state.json").exists()


@pytest.mark.parametrize("decision", [None, "rejected"])
def test_unapproved_or_rejected_plan_is_refused_before_the_cluster_is_touched(tmp_path, decision):
    snap = load_snapshot(SAMPLE)
    plan = write_plan(tmp_path / "p", snap, [move_one_replica(snap, 2)])
    if decision is not None:
        record_approval(plan, decision, "bob", "not tonight")
    r = _cli("execute", "--plan", str(plan), "--simulate", str(SAMPLE))
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    expected = (f"error: {plan / 'approval.json'}: missing; nobody approved this plan (approve it: kafka-rebalance "
                f"approve --plan {plan} --by NAME)") if decision is None else \
        f'error: {plan / "approval.json"}: decision is "rejected" (by bob); a rejected plan never runs'
    assert r.stderr.strip() == expected
    assert not (plan / "simulator-state.json").exists() and not (plan / "ledger.json").exists()


def test_cli_simulate_persists_state_for_verify_and_reruns(plan_dir, tmp_path):
    r = _cli("verify", "--plan", str(plan_dir), "--simulate", str(SAMPLE))
    assert r.returncode == 1 and json.loads(r.stdout)["status"] == "incomplete"
    r = _cli("execute", "--plan", str(plan_dir), "--simulate", str(SAMPLE), "--batches", "1",
             "--final-snapshot", str(tmp_path / "after1.json"))
    assert r.returncode == 1, r.stderr  # only batch 1 of 2: incomplete
    assert "batch 001: 4/4 partitions done, 0 B left" in r.stderr
    assert "partitions done" in r.stderr and "ETA" in r.stderr
    r = _cli("execute", "--plan", str(plan_dir), "--simulate", str(SAMPLE), "--final-snapshot", str(tmp_path / "final.json"))
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    # Resumed continuously: batch 001's moves (finished as a wave) are not submitted again, batch 002's run.
    assert report["mode"] == "continuous" and report["batches"] == []
    assert report["continuous"]["state"] == "finished" and report["continuous"]["finished"] == report["continuous"]["steps"]
    steps = json.loads((plan_dir / "ledger.json").read_text())["continuous"]["steps"]
    assert steps and {e["batch"] for e in steps.values()} == {"002"}
    verify = _cli("verify", "--plan", str(plan_dir), "--simulate", str(SAMPLE))
    assert verify.returncode == 0 and json.loads(verify.stdout)["throttles_left"] == []
    final = load_snapshot(tmp_path / "final.json")
    assert all(b.configs == {} for b in final.brokers)  # no throttle left behind
    assert json.loads((plan_dir / "simulator-state.json").read_text())["now"] > 0


def test_cli_connection_refused_is_one_line(plan_dir):
    r = _cli("execute", "--plan", str(plan_dir), "--bootstrap-server", "127.0.0.1:1", "--connect-timeout", "2")
    assert r.returncode == 2
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert lines == ["error: cannot connect to 127.0.0.1:1 over PLAINTEXT: connection refused: nothing listens on that host:port"]


def test_cli_bad_credentials_is_one_line_without_the_password(plan_dir, tmp_path):
    sim = Simulator.from_snapshot(load_snapshot(SAMPLE))
    with KafkaTestServer(sim, sasl_users={"admin": "right-secret"}) as server:
        props = tmp_path / "client.properties"
        props.write_text(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
            'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required '
            'username="admin" password="wrong-secret-123";\n')
        r = _cli("verify", "--plan", str(plan_dir), "--bootstrap-server", server.bootstrap_servers,
                 "--command-config", str(props), "--connect-timeout", "2")
    assert r.returncode == 2
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "bad credentials: the broker rejected the credentials of user 'admin'" in lines[0]
    assert "SASL PLAIN as admin" in lines[0], r.stderr
    assert "wrong-secret-123" not in r.stderr + r.stdout


def test_cli_live_execute_over_sasl_against_the_test_server(plan_dir, tmp_path):
    sim = Simulator.from_snapshot(load_snapshot(SAMPLE))
    with KafkaTestServer(sim, time_scale=500, sasl_users={"admin": "right-secret"}) as server:
        props = tmp_path / "client.properties"
        props.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.username=admin\nsasl.password=right-secret\n")
        r = _cli("execute", "--plan", str(plan_dir), "--bootstrap-server", server.bootstrap_servers, "--command-config",
                 str(props), "--poll-interval", "0.05", "--stall-seconds", "1", "--final-snapshot", str(tmp_path / "f.json"))
        # The sample snapshot records no Kafka cluster id: a real cluster runs such a plan only when told to.
        assert r.returncode == 2 and "records no Kafka cluster id" in r.stderr and "--allow-unidentified-cluster" in r.stderr
        assert not (plan_dir / "ledger.json").exists() or '"batches": {}' in (plan_dir / "ledger.json").read_text()
        r = _cli("execute", "--plan", str(plan_dir), "--bootstrap-server", server.bootstrap_servers, "--command-config",
                 str(props), "--poll-interval", "0.05", "--stall-seconds", "1", "--final-snapshot", str(tmp_path / "f.json"),
                 "--allow-unidentified-cluster")
    assert r.returncode == 0, r.stderr
    assert "`execute` (pid" in json.loads((plan_dir / "ledger.json").read_text())["unidentified_cluster"]["allowed_by"]
    assert "right-secret" not in r.stderr + r.stdout + (plan_dir / "ledger.json").read_text() + (tmp_path / "f.json").read_text()
    final = load_snapshot(tmp_path / "f.json")
    assert all(b.configs == {} for b in final.brokers)
    plan = load_plan(plan_dir)
    parts = {(p.topic, p.partition): p.replicas for p in final.partitions}
    for b in plan.batches:
        for tp, target in b.targets.items():
            assert parts[(tp.topic, tp.partition)] == target


def test_real_planned_plan_balances_the_simulated_cluster(tmp_path):
    """The planner's own output (kafka-rebalance plan), approved, executed on the simulator to balance."""
    from kafka_rebalance.metrics import broker_loads
    from tests.support.bands import counts_in_band

    snap_path = tmp_path / "skewed.json"
    r = _cli("generate-cluster", "--out", str(snap_path), "--brokers", "6", "--racks", "3", "--topics", "4",
             "--partitions", "48", "--new-brokers", "2", "--mean-partition-mb", "8", "--seed", "3")
    assert r.returncode == 0, r.stderr
    before = load_snapshot(snap_path)
    assert not counts_in_band([b.replicas for b in broker_loads(before)])
    plan_dir = tmp_path / "plan"
    r = _cli("plan", "--snapshot", str(snap_path), "--out", str(plan_dir))
    assert r.returncode == 0, r.stderr
    # Stands in for the quality gate's verdict (validation/verdict.json, beside plan.json).
    judge(plan_dir, "passed")
    approve(plan_dir)
    r = _cli("execute", "--plan", str(plan_dir), "--simulate", str(snap_path), "--final-snapshot", str(tmp_path / "after.json"))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["status"] == "complete"
    after = load_snapshot(tmp_path / "after.json")
    loads = broker_loads(after)
    assert counts_in_band([b.replicas for b in loads])
    assert counts_in_band([b.leaders for b in loads])
    assert all(b.configs == {} for b in after.brokers)
