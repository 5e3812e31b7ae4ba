"""The continuous executor keeps every broker under its disk limit when moves finish out of their planned order.

The plan (the real planner, on a corpus member given disks that leave its fullest brokers a few percent of
room: tests/planner/test_disk_peaks.py) records each broker's bytes and limit in schedule.json
(``disk_room``). On the simulator, two brokers' networks are slowed, so moves into and out of them finish
long after the schedule's estimate and others overtake them. What is asserted is what the cluster saw: at
every reassignment the executor submitted, each limited broker's partitions (every replica it holds or is
receiving, at the snapshot's sizes) within its limit; and that the limit shaped the run (some step started
only after a departure from its destination had landed).
"""

from __future__ import annotations

import json
from pathlib import Path

from kafka_rebalance.cluster.admin import TP
from kafka_rebalance.cluster.sim_admin import SimAdmin
from kafka_rebalance.cluster.simulator import Simulator
from kafka_rebalance.executor.executor import Executor
from kafka_rebalance.executor.settings import ExecSettings
from kafka_rebalance.plan_manifest import load_plan
from kafka_rebalance.planner import PlanOptions, make_plan, write_plan
from kafka_rebalance.testing import corpus
from tests.planner.test_disk_peaks import MAX_USAGE, with_disks
from tests.support.plans import approve, judge

MEMBER = "one-broker-rack"
RATE = 20 * 1024 * 1024


class Watching(SimAdmin):
    """The simulator's admin, checking each limited broker's bytes whenever a reassignment is submitted."""

    def __init__(self, sim: Simulator, size: dict[TP, int], limit: dict[int, int]) -> None:
        super().__init__(sim)
        self.size, self.limit = size, limit
        self.over: list[str] = []
        self.submitted: list[tuple[float, TP, tuple[int, ...]]] = []

    def held(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for tp, p in self.sim.partitions.items():
            for b in p.replicas:  # while a move runs: its new replicas and the ones it replaces
                out[b] = out.get(b, 0) + self.size[tp]
        return out

    def alter_reassignments(self, targets):
        out = super().alter_reassignments(targets)
        for tp, t in sorted(targets.items()):
            if t is not None:
                self.submitted.append((self.now(), tp, tuple(t)))
        held = self.held()
        self.over += [f"{self.now():.1f} s: broker {b} holds {held.get(b, 0):,} > {lim:,}" for b, lim in sorted(self.limit.items())
                      if held.get(b, 0) > lim]
        return out


def test_moves_finishing_out_of_order_never_take_a_broker_over_its_disk_limit(tmp_path: Path) -> None:
    snapshot, options = corpus.member(MEMBER)
    snapshot = with_disks(snapshot)
    out = tmp_path / "plan"
    opts = PlanOptions(optimizer="heuristic", max_disk_usage=MAX_USAGE, throttle_bytes_per_sec=RATE, move_fixed_seconds=0,
                       **options)
    write_plan(make_plan(snapshot, opts), out, "snapshot.json")
    judge(out, "passed")
    plan = load_plan(approve(out))
    assert plan.schedule is not None and plan.schedule.disk_room
    room = {b: (start, limit) for b, start, limit in plan.schedule.disk_room}
    assert room.keys() == {b.id for b in snapshot.brokers}
    size = {TP(p.topic, p.partition): p.size_bytes or 0 for p in snapshot.partitions}

    sim = Simulator.from_snapshot(snapshot)
    # The two brokers receiving the most: a tenth of the throttle in and out, so their moves finish late.
    into: dict[int, int] = {}
    for m in plan.schedule.moves:
        for b in m.adds:
            into[b] = into.get(b, 0) + m.bytes
    slow = sorted(into, key=lambda b: (-into[b], b))[:2]
    for b in slow:
        sim.set_network_capacity(b, RATE / 10, RATE / 10)
    admin = Watching(sim, size, {b: limit for b, (_, limit) in room.items()})
    report = Executor(plan, admin, ExecSettings(poll_interval=2.0, stall_seconds=3600.0)).run().to_dict()

    assert report["status"] == "complete" and report["mode"] == "continuous", report
    assert admin.over == []
    # Out of order: the steps landed in another order than the schedule's estimated ends.
    ledger = json.loads((plan.path / "ledger.json").read_text())["continuous"]["steps"]
    landed = sorted(ledger, key=lambda i: (ledger[i]["ended_clock"], int(i)))
    planned = sorted(ledger, key=lambda i: (plan.schedule.moves[int(i)].estimated_end_s, int(i)))
    assert landed != planned
    # The limit shaped the run: some step went to a broker that had room for it only once a departure from
    # it had landed (its bytes before the plan + every arrival submitted up to it > its limit).
    arrived: dict[int, int] = {}
    waited = []
    for _, tp, target in admin.submitted:
        m = next((m for m in plan.schedule.moves if m.tp == tp and m.replicas == target), None)
        if m is None:
            continue  # a reorder batch's
        for b in m.adds:
            arrived[b] = arrived.get(b, 0) + m.bytes
            if room[b][0] + arrived[b] > room[b][1]:
                waited.append((str(tp), b))
    assert waited, "no step needed a departure first: the test does not bite"
