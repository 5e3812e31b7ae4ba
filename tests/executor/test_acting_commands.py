"""Every command that acts on a cluster, against every kind of plan it must not act on: unapproved, tampered,
stale, gathered in the future, made for another cluster, and with a forged ledger. Each refuses before the cluster
is touched, or (undoing: cancel, restore) does only what the plan itself set, which here is nothing.

The cluster is the simulator, persisted by the command it serves; "untouched" means its configs and assignment are
exactly those of its snapshot afterwards."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kafka_rebalance.cluster.sim_admin import read_state
from kafka_rebalance.orchestration.clusters_config import load_clusters
from kafka_rebalance.orchestration.staging import simulated_state_file
from kafka_rebalance.plan_approval import decide
from kafka_rebalance.plan_dir import record_approval
from kafka_rebalance.snapshot import load_snapshot, write_snapshot
from tests.support.plans import move_one_replica, write_plan

from .test_plan_integrity import SAMPLE, run_cli

KINDS = ("unapproved", "tampered", "stale", "future", "another-cluster", "forged-ledger")
CLI = ("execute", "cancel", "restore", "pause", "resume", "stop")
# Undoing commands may go on with a stale or future plan (a long run ages; undoing never needs a young plan):
# they then act only on what the plan set, which is nothing here.
UNDO_MAY_PROCEED = {("cancel", "stale"), ("cancel", "future"), ("restore", "stale"), ("restore", "future"),
                    ("restore", "unapproved"), ("restore", "tampered")}
# pause/resume/stop only write the plan's control file: they need the plan as planned (not yet approved: a plan
# may be paused before its approval, to wait once approved) and never touch the cluster; age, identity and the
# ledger are the run's business when it reads the request.
CONTROL = {"pause", "resume", "stop"}


def _bad_plan(tmp_path: Path, kind: str) -> tuple[Path, Path]:
    """(plan directory, snapshot of the cluster to act on) for one kind of plan that must not be acted on."""
    now = datetime.now(UTC)
    gathered = now + timedelta(days=1) if kind == "future" else now - timedelta(hours=1)
    made_for = replace(load_snapshot(SAMPLE), cluster_id="acting", kafka_cluster_id="cluster-A",
                       captured_at=gathered.strftime("%Y-%m-%dT%H:%M:%SZ"))
    cluster = write_snapshot(replace(made_for, kafka_cluster_id="cluster-B") if kind == "another-cluster" else made_for,
                             tmp_path / "cluster.json")
    plan = write_plan(tmp_path / "plan", made_for, [move_one_replica(made_for, 3)])
    if kind == "future":
        # Approved on a host whose clock was wrong (approve itself refuses a future gather time).
        record_approval(plan, "approved", "alice", details={"max_plan_age_seconds": 86400})
    elif kind != "unapproved":
        decide(plan, "approved", "alice", "", max_age_seconds=86400, now=now)
    if kind == "stale":
        approval = json.loads((plan / "approval.json").read_text())
        (plan / "approval.json").write_text(json.dumps({**approval, "max_plan_age_seconds": 60}))
    if kind == "tampered":
        path = plan / "batches" / "001" / "reassignment.json"
        path.write_text(path.read_text().replace('"replicas"', '"replicas" ', 1))
    if kind == "forged-ledger":
        topic = sorted(made_for.topics)[0]
        (plan / "ledger.json").write_text(json.dumps({
            "version": 2, "plan_hash": json.loads((plan / "plan.json").read_text())["plan_hash"], "elections": {},
            "events": [], "rearms": [], "lease": None, "unidentified_cluster": None,
            "batches": {"001": {"state": "submitted", "throttles_restored": False, "restored": [], "restore_pending": [],
                                "throttles_before": {"brokers": {}, "topics": {topic: {"retention.ms": "1"}}}}}}))
    return plan, cluster


def _as_snapshot(state_file: Path, cluster: Path):
    return read_state(state_file).describe() if state_file.exists() else load_snapshot(cluster)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", CLI)
def test_every_cli_command_refuses_or_touches_nothing(tmp_path, capsys, command, kind):
    plan, cluster = _bad_plan(tmp_path, kind)
    ledger_before = (plan / "ledger.json").read_bytes() if (plan / "ledger.json").exists() else None
    args = [command, "--plan", plan] + ([] if command in CONTROL else ["--simulate", cluster])
    code, out, err = run_cli(capsys, *args)

    assert "Traceback" not in err
    assert _as_snapshot(plan / "simulator-state.json", cluster) == load_snapshot(cluster)
    if command in CONTROL:
        refuses = kind == "tampered"
    else:
        refuses = (command, kind) not in UNDO_MAY_PROCEED
    if refuses:
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), err
        expected = {"unapproved": "nobody approved this plan", "tampered": "changed since planning",
                    "stale": "over the maximum plan age", "future": "in the future",
                    "another-cluster": "refusing to act on another cluster", "forged-ledger": "retention.ms: not a throttle config"}
        assert expected[kind] in lines[0], lines[0]
    else:
        assert code == 0, err
    # A forged ledger is never rewritten (it is evidence), nor is any ledger of a refused command.
    if ledger_before is not None and refuses:
        assert (plan / "ledger.json").read_bytes() == ledger_before


STEPS = ("preflight", "execute", "restore_throttles", "elections", "final_verify", "operator")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("step", STEPS)
def test_every_dag_step_refuses_or_touches_nothing(tmp_path, monkeypatch, step, kind):
    """The DAG's steps, and its deferrable execute operator, against the same plans."""
    from kafka_rebalance.errors import RebalanceError
    from kafka_rebalance.orchestration import pipeline
    from kafka_rebalance.orchestration.execute_operator import ExecutePlanOperator

    plan, cluster = _bad_plan(tmp_path, kind)
    cluster_id = f"acting-{step.replace('_', '-')}-{kind}"
    (tmp_path / "clusters.yaml").write_text(
        f"clusters:\n  - {{cluster_id: {cluster_id}, source: 'simulated:{cluster}', schedule: null}}\n")
    cfg = load_clusters(tmp_path / "clusters.yaml")
    monkeypatch.setenv("KAFKA_REBALANCE_CLUSTERS", str(tmp_path / "clusters.yaml"))
    state = simulated_state_file(cluster_id)
    state.unlink(missing_ok=True)
    calls = {
        "preflight": lambda: pipeline.preflight(cfg, cfg.clusters[0], str(plan), {"responded_by": {"name": "ops"}}),
        "execute": lambda: pipeline.execute(cfg, cfg.clusters[0], str(plan)),
        "restore_throttles": lambda: pipeline.restore_throttles(cfg, cfg.clusters[0], str(plan)),
        "elections": lambda: pipeline.elections(cfg, cfg.clusters[0], str(plan)),
        "final_verify": lambda: pipeline.final_verify(cfg, cfg.clusters[0], {"run_dir": str(tmp_path)}, str(plan)),
        "operator": lambda: ExecutePlanOperator(task_id="execute", cluster_id=cluster_id, staged_dir=str(plan),
                                                window="now").execute(context={}),
    }
    # The teardown only undoes what a run recorded: with no ledger (or one it may trust) it proceeds. The approve
    # task's answer is the approval, so preflight records it for an unapproved plan (with approve's checks) and
    # goes on to check the cluster, which it does not change.
    proceeds = (step == "restore_throttles" and kind != "forged-ledger") or (step, kind) == ("preflight", "unapproved")
    if proceeds:
        calls[step]()
    else:
        with pytest.raises(RebalanceError):
            calls[step]()
    assert _as_snapshot(state, cluster) == load_snapshot(cluster)
    if (step, kind) == ("preflight", "unapproved"):
        assert json.loads((plan / "approval.json").read_text())["by"] == "ops"
