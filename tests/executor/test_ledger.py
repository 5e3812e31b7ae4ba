"""ledger.json as checked input: migrated from version 1, every recorded throttle value and resource checked,
and state changes only through the transition table."""

from __future__ import annotations

import json

import pytest

from kafka_rebalance.cluster.admin import TP
from kafka_rebalance.cluster.sim_admin import SimAdmin
from kafka_rebalance.cluster.simulator import Simulator
from kafka_rebalance.executor.executor import Executor
from kafka_rebalance.executor.ledger import CorruptLedger, Ledger, Owned
from kafka_rebalance.executor.moves import FINISHED, SUBMITTED, IllegalTransition
from kafka_rebalance.executor.settings import ExecSettings
from kafka_rebalance.plan_manifest import load_plan
from kafka_rebalance.snapshot import load_snapshot
from tests.support.plans import move_one_replica, write_plan

from .test_executor import SAMPLE


@pytest.fixture
def plan(tmp_path):
    snap = load_snapshot(SAMPLE)
    return load_plan(write_plan(tmp_path / "plan", snap, [move_one_replica(snap, 3)]))


def _v1(plan, **batch) -> dict:
    """A ledger as version 1 wrote it (the format before states went through the transition table)."""
    broker = min(plan.brokers_touched)
    topic = min(plan.topics_touched)
    return {
        "version": 1, "plan_hash": plan.plan_hash, "elections": {}, "events": ["an event"], "rearms": [],
        "batches": {"001": {"state": "submitted", "started_at": "2026-11-26T10:00:00.000+00:00",
                            "throttles_before": {"brokers": {str(broker): {"leader.replication.throttled.rate": None,
                                                                           "follower.replication.throttled.rate": "1000"}},
                                                 "topics": {topic: {"leader.replication.throttled.replicas": "0:1",
                                                                    "follower.replication.throttled.replicas": None}}},
                            "throttles_restored": False, "restored": [], "restore_pending": [], **batch}},
    }


def _write(plan, data) -> None:
    (plan.path / "ledger.json").write_text(json.dumps(data), encoding="utf-8")


def test_a_version_1_ledger_is_migrated_and_keeps_every_record(plan):
    v1 = _v1(plan)
    _write(plan, v1)
    ledger = Ledger.open(plan.path, plan.plan_hash, Owned.of(plan))
    assert ledger.data["version"] == 2
    assert ledger.data["lease"] is None and ledger.data["unidentified_cluster"] is None
    assert ledger.data["batches"] == v1["batches"]
    assert ledger.data["events"][-1] == "migrated from ledger version 1 to 2"
    assert ledger.unrestored() == ["001"]
    ledger.save()
    assert json.loads((plan.path / "ledger.json").read_text())["version"] == 2


def test_a_ledger_from_a_newer_version_is_refused(plan):
    _write(plan, {**_v1(plan), "version": 3})
    with pytest.raises(Exception, match="version 3: written by a newer kafka-rebalance"):
        Ledger.open(plan.path, plan.plan_hash)


@pytest.mark.parametrize(("forge", "message"), [
    (lambda rec, plan: rec["topics"][min(plan.topics_touched)].update({"retention.ms": "1"}),
     r"retention.ms: not a throttle config"),
    (lambda rec, plan: rec["topics"].update({"not-in-the-plan": {"leader.replication.throttled.replicas": None}}),
     r"the plan moves nothing on topic 'not-in-the-plan'"),
    (lambda rec, plan: rec["brokers"].update({"99": {"leader.replication.throttled.rate": "1024"}}),
     r"the plan moves nothing on broker '99'"),
    (lambda rec, plan: rec["brokers"][str(min(plan.brokers_touched))].update({"leader.replication.throttled.rate": "-5"}),
     r"leader.replication.throttled.rate: expected a whole number of bytes/s"),
    (lambda rec, plan: rec["topics"][min(plan.topics_touched)].update({"leader.replication.throttled.replicas": "x;rm"}),
     r"is not PARTITION:BROKER"),
    (lambda rec, plan: rec["topics"][min(plan.topics_touched)].update({"leader.replication.throttled.rate": "1024"}),
     r"a broker config"),
])
def test_a_forged_throttle_record_is_refused_before_the_cluster_is_touched(plan, forge, message):
    data = _v1(plan)
    forge(data["batches"]["001"]["throttles_before"], plan)
    _write(plan, data)
    sim = Simulator.from_snapshot(load_snapshot(SAMPLE))
    calls: list[str] = []

    class Recording(SimAdmin):
        def alter_configs(self, *args):
            calls.append("alter_configs")
            return super().alter_configs(*args)

        def alter_reassignments(self, *args):
            calls.append("alter_reassignments")
            return super().alter_reassignments(*args)

    with pytest.raises(CorruptLedger, match=message):
        Executor(plan, Recording(sim), ExecSettings()).cancel()
    assert calls == []


def test_an_impossible_state_change_is_refused_logged_and_not_written(plan):
    ledger = Ledger.open(plan.path, plan.plan_hash)
    ledger.set_step("0", SUBMITTED, tp=str(TP("t", 0)))
    ledger.set_step("0", FINISHED)
    with pytest.raises(IllegalTransition, match="step 0: finished -> submitted is not a valid transition"):
        ledger.set_step("0", SUBMITTED)
    assert ledger.step_state("0") == FINISHED
    on_disk = json.loads((plan.path / "ledger.json").read_text())
    assert on_disk["continuous"]["steps"]["0"]["state"] == "finished"
    assert on_disk["events"][-1].startswith("refused: step step 0: finished -> submitted")
