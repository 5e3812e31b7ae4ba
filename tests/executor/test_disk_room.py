"""The continuous executor keeps every broker under its disk limit when moves finish out of their planned order.

The plan (the real planner, on a corpus member given disks that leave its fullest brokers a few percent of
room: tests/planner/test_disk_peaks.py) records each broker's bytes and limit in schedule.json
(``disk_room``). On the simulator, two brokers' networks are slowed, so moves into and out of them finish
long after the schedule's estimate and others overtake them. What is asserted is what the cluster saw: at
every reassignment the executor submitted, each limited broker's partitions (every replica it holds or is
receiving, at the snapshot's sizes) within its limit; and that the limit shaped the run (some step started
only after a departure from its destination had landed). The same holds per log dir (``dir_room``, each
step's ``sources``): a second run slows the brokers taking the replicas that leave the dirs the schedule fills
most, and checks every dir at every submission.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from kafka_rebalance.cluster.admin import TP
from kafka_rebalance.cluster.sim_admin import SimAdmin
from kafka_rebalance.cluster.simulator import Simulator
from kafka_rebalance.executor.executor import Executor
from kafka_rebalance.executor.settings import ExecSettings
from kafka_rebalance.plan_manifest import load_plan
from kafka_rebalance.planner import PlanOptions, make_plan, write_plan
from kafka_rebalance.testing import corpus
from tests.planner.test_disk_peaks import MAX_USAGE, limits, member, with_disks
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


def submitted_moves(plan, admin: Watching):
    """Each scheduled move the executor submitted, in submission order (a reorder batch's are not scheduled)."""
    for _, tp, target in admin.submitted:
        m = next((m for m in plan.schedule.moves if m.tp == tp and m.replicas == target), None)
        if m is not None:
            yield tp, m


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
    for tp, m in submitted_moves(plan, admin):
        for b in m.adds:
            arrived[b] = arrived.get(b, 0) + m.bytes
            if room[b][0] + arrived[b] > room[b][1]:
                waited.append((str(tp), b))
    assert waited, "no step needed a departure first: the test does not bite"


# ------------------------------------------------------------------------------------------------ per log dir

# A corpus draw whose schedule would fill a log dir past its limit were its arrivals started before its
# departures (the dir's bytes before the schedule + every replica the schedule puts in it > its limit). Its
# out-of-sync replicas are put in sync: the simulator's reassignment waits for every target replica in the ISR,
# and a follower that is out of it there never catches up.
DIR_MEMBER = "draw-11"


class WatchingDirs(Watching):
    """... and each log dir's: a replica is in the dir the snapshot records, or the one AlterReplicaLogDirs last named
    for it (the executor names a new replica's dir before submitting its reassignment)."""

    def __init__(self, sim: Simulator, size: dict[TP, int], dir_limit: dict[tuple[int, str], float],
                 where: dict[tuple[TP, int], str]) -> None:  # fmt: skip
        super().__init__(sim, size, {})
        self.dir_limit, self.where = dir_limit, where
        self.dir_over: list[str] = []
        self.dir_held: list[dict[tuple[int, str], int]] = []  # at each submission

    def alter_replica_log_dirs(self, dirs):
        self.where.update(dirs)
        return super().alter_replica_log_dirs(dirs)

    def alter_reassignments(self, targets):
        out = super().alter_reassignments(targets)
        held: dict[tuple[int, str], int] = {}
        for tp, p in self.sim.partitions.items():
            for b in p.replicas:  # while a move runs: its new replicas and the ones it replaces
                d = self.where.get((tp, b))
                if d is not None:
                    held[(b, d)] = held.get((b, d), 0) + self.size[tp]
        self.dir_held.append(held)
        self.dir_over += [f"{self.now():.1f} s: broker {b} log dir {d} holds {held.get((b, d), 0):,} > {lim:,.0f}"
                          for (b, d), lim in sorted(self.dir_limit.items()) if held.get((b, d), 0) > lim + 1]
        return out


def test_moves_finishing_out_of_order_never_take_a_log_dir_over_its_limit(tmp_path: Path) -> None:
    snapshot, options = member(DIR_MEMBER)
    alive = {b.id for b in snapshot.brokers if b.alive}
    snapshot = replace(snapshot, partitions=tuple(replace(p, isr=p.replicas) if set(p.replicas) <= alive else p
                                                  for p in snapshot.partitions))
    out = tmp_path / "plan"
    write_plan(make_plan(snapshot, replace(options, throttle_bytes_per_sec=RATE, move_fixed_seconds=0)), out, "snapshot.json")
    judge(out, "passed")
    plan = load_plan(approve(out))
    assert plan.schedule is not None and plan.schedule.dir_room
    size = {TP(p.topic, p.partition): p.size_bytes or 0 for p in snapshot.partitions}
    where = {(TP(p.topic, p.partition), b): d for p in snapshot.partitions for b, d in zip(p.replicas, p.log_dirs)
             if d is not None}
    start: dict[tuple[int, str], int] = {}
    for (tp, b), d in where.items():
        start[(b, d)] = start.get((b, d), 0) + size[tp]
    # The test's own limits (test_disk_peaks.limits); a dir that started above may end no fuller than it started.
    _, dir_limits = limits(snapshot)
    ceiling = {k: max(lim, start.get(k, 0)) for k, lim in dir_limits.items()}
    assert {(b, d) for b, d, _, _ in plan.schedule.dir_room} == set(ceiling)

    sim = Simulator.from_snapshot(snapshot)
    # The departures from the dirs the schedule fills the most land late: the two brokers receiving the most of
    # the replicas leaving those dirs get a tenth of the throttle in, so arrivals into the dirs would overtake
    # those departures unless the executor holds each dir.
    into: dict[tuple[int, str], int] = {}
    for m in plan.schedule.moves:
        for b in m.adds:
            d = plan_batch_dir(plan, m.batch, m.tp, b)
            if d is not None:
                into[(b, d)] = into.get((b, d), 0) + m.bytes
    fullest = set(sorted(into, key=lambda k: (-(start.get(k, 0) + into[k] - ceiling[k]), k))[:2])
    taking: dict[int, int] = {}
    for m in plan.schedule.moves:
        if any((b, d) in fullest for b, d in zip(m.before, m.sources)):
            for b in m.adds:
                taking[b] = taking.get(b, 0) + m.bytes
    traffic = sim.broker_traffic()
    for b in sorted(taking, key=lambda b: (-taking[b], b))[:2]:
        # (its clients' traffic keeps its share: copies into it get what they leave)
        sim.set_network_capacity(b, traffic[b].bytes_in + RATE / 10, traffic[b].bytes_out + 100 * RATE)
    admin = WatchingDirs(sim, size, ceiling, dict(where))
    # (a step's time limit is 3x the schedule's estimate + 10 minutes: the slowed ones take longer)
    settings = ExecSettings(poll_interval=2.0, stall_seconds=3600.0, batch_timeout=36_000.0)
    report = Executor(plan, admin, settings).run().to_dict()

    assert report["status"] == "complete" and report["mode"] == "continuous", report
    assert admin.dir_over == []
    # The dir limit shaped the run: some dir received a replica that fitted only once a departure from it had landed
    # (its bytes before the plan + every arrival submitted into it up to then > its ceiling).
    arrived: dict[tuple[int, str], int] = {}
    waited = []
    for tp, m in submitted_moves(plan, admin):
        for b in m.adds:
            d = plan_batch_dir(plan, m.batch, m.tp, b)
            if d is None:
                continue
            arrived[(b, d)] = arrived.get((b, d), 0) + m.bytes
            if start.get((b, d), 0) + arrived[(b, d)] > ceiling[(b, d)]:
                waited.append((str(tp), b, d))
    assert waited, "no step needed a departure from its dir first: the test does not bite"


def plan_batch_dir(plan, batch: str, tp: TP, b: int) -> str | None:
    """The log dir batch ``batch``'s reassignment names for ``tp``'s replica on broker ``b`` (None: "any")."""
    return next(x for x in plan.batches if x.id == batch).named_dirs(tp).get(b)
