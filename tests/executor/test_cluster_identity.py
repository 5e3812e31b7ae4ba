"""A plan acts only on the Kafka cluster it was made for: Kafka's own cluster id, under the plan hash."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from kafka_rebalance.cluster.sim_admin import SimAdmin
from kafka_rebalance.cluster.simulator import Simulator
from kafka_rebalance.executor.executor import Executor
from kafka_rebalance.executor.settings import ExecSettings, ExecutionRefused
from kafka_rebalance.plan_dir import PlanDirError, seal
from kafka_rebalance.plan_manifest import load_plan
from kafka_rebalance.snapshot import load_snapshot, snapshot_from_dict, write_snapshot
from tests.support.plans import judge, move_one_replica, write_plan

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "sample-cluster.json"
KAFKA_ID = "MkU3OEVBNTcwNTJENDM2Qg"


def _state(sim: Simulator) -> tuple:
    return ({b.id: dict(b.configs) for b in sim.brokers.values()}, {t: dict(c) for t, c in sim.topics.items()},
            {tp: tuple(p.replicas) for tp, p in sim.partitions.items()}, dict(sim.list_reassignments()))


def test_snapshot_field_round_trips_and_old_snapshots_stay_readable(tmp_path):
    old = load_snapshot(SAMPLE)
    assert old.kafka_cluster_id is None and "kafka_cluster_id" not in old.to_dict()
    snap = replace(old, kafka_cluster_id=KAFKA_ID)
    assert snap.fingerprint() != old.fingerprint()  # the id is part of what the plan's snapshot hash covers
    for name in ("s.json", "s.parquet"):
        again = load_snapshot(write_snapshot(snap, tmp_path / name))
        assert again.kafka_cluster_id == KAFKA_ID and again.fingerprint() == snap.fingerprint()
    assert Simulator.from_snapshot(snap).describe().kafka_cluster_id == KAFKA_ID
    with pytest.raises(Exception, match="kafka_cluster_id: must be a non-empty string"):
        snapshot_from_dict({**old.to_dict(), "kafka_cluster_id": ""})


def test_plan_made_for_another_kafka_cluster_is_refused_before_anything_is_touched(tmp_path):
    snap = replace(load_snapshot(SAMPLE), kafka_cluster_id=KAFKA_ID)
    plan = load_plan(write_plan(tmp_path / "plan", snap, [move_one_replica(snap, 3)]))
    assert plan.kafka_cluster_id == KAFKA_ID
    other = Simulator.from_snapshot(replace(snap, kafka_cluster_id="another-cluster-uuid"))
    before = _state(other)
    for action in ("run", "verify", "cancel", "elections", "restore_leftover_throttles"):
        with pytest.raises(ExecutionRefused) as info:
            getattr(Executor(plan, SimAdmin(other), ExecSettings(mode="batches")), action)()
        assert str(info.value) == (f"{plan.path}: the plan was made for Kafka cluster {KAFKA_ID!r} ('demo-eu-1'), but the "
                                   "connected cluster reports 'another-cluster-uuid'; refusing to act on another cluster")
    assert _state(other) == before
    assert not (plan.path / "ledger.json").exists()
    # The cluster it was made for: runs to the end.
    same = Simulator.from_snapshot(snap)
    assert Executor(plan, SimAdmin(same), ExecSettings(mode="batches")).run().to_dict()["status"] == "complete"


def test_the_id_is_under_the_plan_hash(tmp_path):
    snap = replace(load_snapshot(SAMPLE), kafka_cluster_id=KAFKA_ID)
    plan_dir = write_plan(tmp_path / "plan", snap, [move_one_replica(snap, 3)])
    manifest = json.loads((plan_dir / "plan.json").read_text())
    manifest["kafka_cluster_id"] = "another-cluster-uuid"
    (plan_dir / "plan.json").write_text(json.dumps(manifest))
    with pytest.raises(PlanDirError, match="kafka_cluster_id"):
        load_plan(plan_dir)
    # Re-hashed and re-judged (a forgery that passes every integrity check) it is a plan for another cluster.
    (plan_dir / "plan.json").write_text(json.dumps(seal(manifest)))
    judge(plan_dir, "passed")
    assert load_plan(plan_dir).kafka_cluster_id == "another-cluster-uuid"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kafka_rebalance.cli", *args], capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(ROOT / "plugins"), "PATH": "/usr/bin:/bin"})


def test_planner_records_the_id_and_a_plan_without_one_says_so_once(tmp_path):
    snap_path = write_snapshot(replace(load_snapshot(SAMPLE), kafka_cluster_id=KAFKA_ID), tmp_path / "snap.json")
    assert _cli("plan", "--snapshot", str(snap_path), "--out", str(tmp_path / "plan")).returncode == 0
    assert json.loads((tmp_path / "plan" / "plan.json").read_text())["kafka_cluster_id"] == KAFKA_ID
    # A plan from a snapshot without the id (the sample: hand-written): today's behaviour, and one note.
    assert _cli("plan", "--snapshot", str(SAMPLE), "--out", str(tmp_path / "old")).returncode == 0
    assert "kafka_cluster_id" not in json.loads((tmp_path / "old" / "plan.json").read_text())
    assert _cli("validate", "--plan", str(tmp_path / "old"), "--snapshot", str(SAMPLE)).returncode == 0
    done = _cli("verify", "--plan", str(tmp_path / "old"), "--simulate", str(SAMPLE))
    notes = [line for line in done.stderr.splitlines() if "records no Kafka cluster id" in line]
    assert len(notes) == 1, done.stderr
