"""One run per plan: a second command on a plan in use is refused in one line naming the holder; a holder that is
provably gone is taken over; a re-arm keeps what the old ledger still owes the cluster."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from kafka_rebalance.cluster.sim_admin import SimAdmin
from kafka_rebalance.cluster.simulator import Simulator
from kafka_rebalance.executor.executor import Executor
from kafka_rebalance.executor.lease import LeaseHeld, plan_lease
from kafka_rebalance.executor.ledger import THROTTLES_RECORDED, Ledger
from kafka_rebalance.executor.rearm import rearm
from kafka_rebalance.executor.settings import ExecSettings
from kafka_rebalance.plan_manifest import load_plan
from kafka_rebalance.snapshot import load_snapshot
from tests.support.plans import approve, move_one_replica, write_plan

from .test_plan_integrity import SAMPLE, one_error_line, run_cli


@pytest.fixture
def snap():
    return load_snapshot(SAMPLE)


@pytest.fixture
def plan(tmp_path, snap):
    return approve(write_plan(tmp_path / "plan", snap, [move_one_replica(snap, 3), move_one_replica(snap, 3, skip=3)]))


def _ledger(plan_dir) -> dict:
    return json.loads((plan_dir / "ledger.json").read_text())


@pytest.mark.parametrize("command", [
    ("execute", "--simulate", SAMPLE),
    ("cancel", "--simulate", SAMPLE),
    ("execute", "--simulate", SAMPLE, "--rearm"),
])
def test_a_second_command_on_a_plan_in_use_is_refused_naming_the_holder(plan, capsys, command):
    with plan_lease(plan, load_plan(plan).plan_hash, "execute") as holder:
        code, _, err = run_cli(capsys, command[0], "--plan", plan, *command[1:])
        line = one_error_line(err)
        assert code == 2
        assert f"in use by `execute` (pid {holder.pid} on {holder.host}" in line and "one run acts on a plan at a time" in line
        assert _ledger(plan)["batches"] == {} and "continuous" not in _ledger(plan)  # nothing was set or submitted
        assert _ledger(plan)["lease"]["pid"] == os.getpid()
    assert _ledger(plan)["lease"] is None
    assert run_cli(capsys, "execute", "--plan", plan, "--simulate", SAMPLE, "--poll-interval", "60")[0] == 0


def test_a_holder_that_exited_without_releasing_is_taken_over_and_the_ledger_says_so(plan, capsys):
    # A process that recorded its lease and died (SIGKILL): its flock went with it, its record stayed.
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    pid = int(dead.stdout)
    ledger = Ledger.open(plan, load_plan(plan).plan_hash)
    ledger.data["lease"] = {"host": os.uname().nodename, "pid": pid, "command": "execute", "since": "2026-11-27T00:00:00+00:00",
                            "owner": None}
    ledger.save()
    code, out, err = run_cli(capsys, "execute", "--plan", plan, "--simulate", SAMPLE, "--poll-interval", "60")
    assert code == 0, err
    events = _ledger(plan)["events"]
    assert any(f"lease of `execute` (pid {pid} on" in e and "it exited" in e for e in events)
    assert _ledger(plan)["lease"] is None


def test_a_holder_on_another_host_is_taken_over_only_when_the_operator_says_so(plan, capsys):
    ledger = Ledger.open(plan, load_plan(plan).plan_hash)
    ledger.data["lease"] = {"host": "worker-7", "pid": 4242, "command": "execute", "since": "2026-11-27T00:00:00+00:00",
                            "owner": None}
    ledger.save()
    code, _, err = run_cli(capsys, "execute", "--plan", plan, "--simulate", SAMPLE)
    line = one_error_line(err)
    assert code == 2 and "in use by `execute` (pid 4242 on worker-7" in line and "--take-over-lease" in line
    assert _ledger(plan)["batches"] == {} and "continuous" not in _ledger(plan)
    code, _, err = run_cli(capsys, "execute", "--plan", plan, "--simulate", SAMPLE, "--poll-interval", "60",
                           "--take-over-lease")
    assert code == 0, err
    assert any("pid 4242 on worker-7" in e and "taken over" in e for e in _ledger(plan)["events"])


def test_the_same_airflow_task_resumed_on_another_worker_takes_its_lease_over(plan):
    plan_hash = load_plan(plan).plan_hash
    ledger = Ledger.open(plan, plan_hash)
    ledger.data["lease"] = {"host": "worker-7", "pid": 4242, "command": "execute", "since": "2026-11-27T00:00:00+00:00",
                            "owner": "kafka_rebalance_demo/run-1/execute"}
    ledger.save()
    with pytest.raises(LeaseHeld, match="on another host"):
        with plan_lease(plan, plan_hash, "execute", owner="kafka_rebalance_demo/run-2/execute"):
            pass
    with plan_lease(plan, plan_hash, "execute", owner="kafka_rebalance_demo/run-1/execute") as holder:
        assert _ledger(plan)["lease"]["pid"] == holder.pid
    assert any("the same task resumed" in e for e in _ledger(plan)["events"])


def test_rearm_while_a_broker_is_down_keeps_its_pending_throttle_restore(tmp_path, snap):
    """`execute --rearm` with a broker down: the old ledger's restore for that broker is still owed; the new
    ledger keeps it, so the next run (or cancel) restores the broker's rate once it is back."""
    plan_dir = approve(write_plan(tmp_path / "plan", snap, [move_one_replica(snap, 3)]))
    p = load_plan(plan_dir)
    sim = Simulator.from_snapshot(snap)
    broker = min(p.brokers_touched)
    ledger = Ledger.open(plan_dir, p.plan_hash)
    ledger.set_batch("001", THROTTLES_RECORDED)
    entry = ledger.batch("001")
    entry.update(throttles_before={"brokers": {str(broker): {"leader.replication.throttled.rate": None,
                                                              "follower.replication.throttled.rate": None}}, "topics": {}},
                 throttles_restored=False, restored=[], restore_pending=[])
    ledger.save()
    sim.alter_configs("broker", str(broker), {"leader.replication.throttled.rate": "2048",
                                              "follower.replication.throttled.rate": "2048"})
    sim.kill_broker(broker)
    rearm(p, SimAdmin(sim), by="alice")
    fresh = _ledger(plan_dir)
    assert fresh["batches"]["001"]["throttles_restored"] is False
    assert fresh["batches"]["001"]["restore_pending"] == [f"broker:{broker}"]
    assert fresh["batches"]["001"]["state"] == "pending"
    sim.start_broker(broker)
    Executor(p, SimAdmin(sim), ExecSettings()).restore_leftover_throttles()
    assert sim.brokers[broker].configs.get("leader.replication.throttled.rate") is None
    assert _ledger(plan_dir)["batches"]["001"]["throttles_restored"] is True
