"""Recovery: the throttles a killed run left set are restored whatever happened to the plan directory since, and an
editor's litter never makes a plan untrustworthy."""

from __future__ import annotations

import json

import pytest

from kafka_rebalance.cluster.sim_admin import SimAdmin
from kafka_rebalance.executor.executor import Executor
from kafka_rebalance.executor.settings import ExecSettings
from kafka_rebalance.plan_manifest import load_plan
from kafka_rebalance.snapshot import load_snapshot
from tests.support.plans import approve, move_one_replica, write_plan

from .test_plan_integrity import SAMPLE, one_error_line, run_cli

RATE_KEYS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")


def _killed_mid_batch(tmp_path):
    """A plan whose run was killed with its moves in flight and throttles set, on a persisted simulated cluster."""
    snap = load_snapshot(SAMPLE)
    batch = move_one_replica(snap, 3)
    plan_dir = approve(write_plan(tmp_path / "plan", snap, [batch]))
    sim_state = plan_dir / "simulator-state.json"
    admin = SimAdmin.open(snap, sim_state)
    for tp, target in batch.items():
        admin.sim.never_catch_up(tp, [r for r in target if r not in admin.sim.partitions[tp].replicas][0])

    def killed(line: str) -> None:
        raise KeyboardInterrupt  # the process dies between polls: no finally of ours runs after this in real life

    with pytest.raises(KeyboardInterrupt):
        Executor(load_plan(plan_dir), admin, ExecSettings(mode="batches"), progress=killed).run().to_dict()
    admin.close()
    return plan_dir, batch


def _rates(plan_dir):
    sim = SimAdmin.open(load_snapshot(SAMPLE), plan_dir / "simulator-state.json").sim
    return {b: {k: v for k, v in sim.brokers[b].configs.items() if k in RATE_KEYS} for b in sorted(sim.brokers)}


def test_an_editors_swap_file_left_in_a_batch_blocks_nothing(tmp_path, capsys):
    plan_dir, _ = _killed_mid_batch(tmp_path)
    # The run above restored its throttles in its finally; what matters here is that the plan still loads.
    (plan_dir / "batches" / "001" / ".reassignment.json.swp").write_bytes(b"b0VIM 9.0")
    (plan_dir / "batches" / "001" / "rollback.json~").write_text("{}")
    assert load_plan(plan_dir, require_approval=True).plan_hash
    code, out, err = run_cli(capsys, "cancel", "--plan", plan_dir, "--simulate", SAMPLE)
    assert code == 0, err
    assert len(json.loads(out)["cancelled"]) == 3
    # Any other unlisted file still makes the plan untrustworthy.
    (plan_dir / "batches" / "001" / "extra.json").write_text("{}")
    assert "not listed in plan.json files" in one_error_line(run_cli(capsys, "cancel", "--plan", plan_dir, "--simulate", SAMPLE)[2])


def test_restore_puts_back_recorded_throttles_when_the_plan_no_longer_verifies(tmp_path, capsys):
    plan_dir, batch = _killed_mid_batch(tmp_path)
    # Simulate a SIGKILL's leftovers exactly: the ledger still says the throttles are set, and they are.
    ledger = json.loads((plan_dir / "ledger.json").read_text())
    entry = ledger["batches"]["001"]
    entry.update(throttles_restored=False, restored=[], restore_pending=[])
    (plan_dir / "ledger.json").write_text(json.dumps(ledger))
    rate = "52428800"
    touched = sorted(int(b) for b in entry["throttles_before"]["brokers"])
    assert touched, entry
    admin = SimAdmin.open(load_snapshot(SAMPLE), plan_dir / "simulator-state.json")
    for b in touched:
        admin.alter_configs("broker", str(b), {k: rate for k in RATE_KEYS})
    admin.close()
    assert all(_rates(plan_dir)[b] == {k: rate for k in RATE_KEYS} for b in touched)
    # Someone edits a batch file afterwards: the plan no longer verifies.
    rollback = plan_dir / "batches" / "001" / "rollback.json"
    rollback.write_text(rollback.read_text().replace("\n", "\n ", 1))

    assert "changed since planning" in one_error_line(run_cli(capsys, "cancel", "--plan", plan_dir, "--simulate", SAMPLE)[2])
    code, out, err = run_cli(capsys, "restore", "--plan", plan_dir, "--simulate", SAMPLE)
    assert code == 0, err
    result = json.loads(out)
    assert result["restored_throttles_of"] == ["001"] and "changed since planning" in result["plan_damaged"]
    assert all(_rates(plan_dir)[b] == {} for b in touched)
    assert json.loads((plan_dir / "ledger.json").read_text())["batches"]["001"]["throttles_restored"] is True
