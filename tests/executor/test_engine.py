"""The move engine's batch mode: its steps come from the batch files, and a batch waits for the previous one's barrier."""

from __future__ import annotations

from pathlib import Path

from kafka_rebalance.cluster.admin import TP
from kafka_rebalance.cluster.sim_admin import SimAdmin
from kafka_rebalance.cluster.simulator import Simulator
from kafka_rebalance.executor.engine import steps_from_batches
from kafka_rebalance.executor.executor import Executor
from kafka_rebalance.executor.settings import ExecSettings
from kafka_rebalance.plan_manifest import load_plan
from kafka_rebalance.snapshot import load_snapshot
from tests.support.plans import move_one_replica, write_plan

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "sample-cluster.json"


def _two_batches_on_the_same_partitions(tmp_path: Path):
    snap = load_snapshot(SAMPLE)
    first = move_one_replica(snap, 3)
    alive = sorted(b.id for b in snap.brokers if b.alive)
    second = {tp: (next(b for b in alive if b not in r), *r[1:]) for tp, r in first.items()}
    reorder = {tp: tuple(reversed(r)) for tp, r in second.items()}  # the same replicas, another order
    return snap, load_plan(write_plan(tmp_path / "plan", snap, [first, second, reorder])), (first, second, reorder)


def test_steps_from_batches_are_one_per_partition_per_batch_in_batch_order(tmp_path) -> None:
    _, plan, (first, second, reorder) = _two_batches_on_the_same_partitions(tmp_path)
    steps = steps_from_batches(plan)
    assert [(m.batch, m.tp, m.replicas) for m in steps] == [
        (b.id, tp, b.targets[tp]) for b in plan.batches for tp in sorted(b.targets)]
    assert [m.id for m in steps] == list(range(len(steps)))
    for m in steps:
        earlier = [s for s in steps[:m.id] if s.tp == m.tp]
        assert m.after == (earlier[-1].id if earlier else None)
        assert m.before == plan.batch(m.batch).before[m.tp]
    reorders = [m for m in steps if m.batch == plan.batches[2].id]
    assert len(reorders) == len(reorder) and all(not m.adds and not m.removes for m in reorders)
    # A selection keeps its own order and links only within itself.
    tail = steps_from_batches(plan, [plan.batches[1].id, plan.batches[2].id])
    assert [m.after for m in tail[:len(second)]] == [None] * len(second)


def test_batch_mode_submits_each_batch_at_once_and_the_next_only_after_its_barrier(tmp_path) -> None:
    snap, plan, batches = _two_batches_on_the_same_partitions(tmp_path)
    sim = Simulator.from_snapshot(snap)
    calls: list[tuple[float, tuple[TP, ...], int]] = []  # (clock, submitted, moves in flight at that moment)

    class Recording(SimAdmin):
        def alter_reassignments(self, targets):
            if any(t is not None for t in targets.values()):
                calls.append((self.now(), tuple(sorted(targets)), len(self.sim.list_reassignments())))
            return super().alter_reassignments(targets)

    report = Executor(plan, Recording(sim), ExecSettings(poll_interval=5.0, mode="batches")).run().to_dict()
    assert report["status"] == "complete", report
    assert [c[1] for c in calls] == [tuple(sorted(b)) for b in batches]  # one submission per batch, whole
    assert all(in_flight == 0 for _, _, in_flight in calls)  # each after the previous batch ended
    assert [r["id"] for r in report["batches"]] == [b.id for b in plan.batches]
    for tp, target in batches[-1].items():
        assert tuple(sim.partitions[tp].replicas) == target
