"""The planner's own rules, checked against hand computations: batch time, rack cap, replica targets."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from kafka_rebalance.balance import placement_targets
from kafka_rebalance.plan_manifest import PlanDirError, load_plan
from kafka_rebalance.planner import PlanOptions
from kafka_rebalance.planner.dispatch import columns
from kafka_rebalance.planner.estimate import batch_seconds, waves_seconds
from kafka_rebalance.planner.state import ClusterState
from kafka_rebalance.planner.steps import Step
from tests.support.clusters import GiB, part, snapshot
from tests.support.drawn_steps import draw_steps
from tests.support.plans import plan_dir

MiB = 1024**2


def step(p: int, adds: tuple[int, ...], leader: int, size: int, rate: float) -> Step:
    return Step(p, "t", p, (leader,), (leader, *adds), adds, (), 0, leader, size, rate)


def test_estimate_subtracts_the_produce_rate_from_the_throttle() -> None:
    # 1,000,000 bytes into broker 1 at a 300,000 B/s throttle while producers add 100,000 B/s:
    # the copy gains 200,000 B/s on the log, so 5 s (3.33 s if the produce rate were ignored).
    assert batch_seconds([step(0, (1,), 0, 1_000_000, 100_000.0)], 300_000) == 5.0
    # Two partitions into broker 1: 3,000,000 bytes against 300,000 - 150,000 B/s = 20 s.
    assert batch_seconds([step(0, (1,), 0, 1_000_000, 100_000.0), step(1, (1,), 2, 2_000_000, 50_000.0)], 300_000) == 20.0
    # Producers as fast as the throttle: the copy never catches up.
    assert batch_seconds([step(0, (1,), 0, 10, 300_000.0)], 300_000) == float("inf")


def test_estimate_counts_the_leaders_side_too() -> None:
    # Leader 0 sends 1,000,000 B to broker 1 and 2,000,000 B to broker 2 (produce 100,000 and
    # 50,000 B/s): the receivers need 1e6 / 2e5 = 5 s and 2e6 / 2.5e5 = 8 s, but the leader's
    # throttle carries 3e6 B against 3e5 - 1.5e5 B/s: 20 s.
    assert batch_seconds([step(0, (1,), 0, 1_000_000, 100_000.0), step(1, (2,), 0, 2_000_000, 50_000.0)], 300_000) == 20.0
    # Each receiver is under the throttle, but the leader's produce traffic out is not.
    assert batch_seconds([step(0, (1,), 0, 10, 160_000.0), step(1, (2,), 0, 10, 160_000.0)], 300_000) == float("inf")
    assert batch_seconds([], 300_000) == 0.0


def test_plan_estimate_honours_the_produce_rate(tmp_path: Path) -> None:
    # Decommissioning broker 1 copies the 1 GiB partition to broker 2 at 100 MiB/s while 50 MiB/s
    # are produced: 1024 MiB / (100 - 50) MiB/s = 20.48 s.
    snap = snapshot([0, 1, 2], [part("t", 0, [0, 1], bytes_in_per_sec=50.0 * MiB)])
    m = plan_dir(snap, tmp_path / "p", throttle_bytes_per_sec=100 * MiB, decommission_brokers=(1,), move_fixed_seconds=0)
    moves = [b for b in m["batches"] if b["replica_moves"]]
    assert [(b["bytes"], b["estimated_seconds"]) for b in moves] == [(GiB, pytest.approx(20.48, abs=0.05))]  # plan.json rounds to 0.1 s


def test_every_estimate_adds_the_fixed_cost_of_a_move(tmp_path: Path) -> None:
    # The same 1 GiB copy with 3 s of fixed cost per move: 20.48 + 3 s in the batch and the schedule
    # alike; the physical bound stays bytes / rate, and schedule.json carries the figure for execute.
    snap = snapshot([0, 1, 2], [part("t", 0, [0, 1], bytes_in_per_sec=50.0 * MiB)])
    m = plan_dir(snap, tmp_path / "p", throttle_bytes_per_sec=100 * MiB, decommission_brokers=(1,), move_fixed_seconds=3)
    moves = [b for b in m["batches"] if b["replica_moves"]]
    assert [b["estimated_seconds"] for b in moves] == [pytest.approx(23.48, abs=0.05)]
    assert m["summary"]["continuous"]["estimated_seconds"] == pytest.approx(23.48, abs=0.05)
    assert m["summary"]["continuous"]["physical_bound_seconds"] == pytest.approx(1024 / 100, abs=0.05)
    assert m["options"]["move_fixed_seconds"] == 3
    assert load_plan(tmp_path / "p", require_passed=False).schedule.move_fixed_seconds == 3.0


def test_the_fixed_cost_of_a_move_is_checked_like_every_option(tmp_path: Path) -> None:
    snap = snapshot([0, 1, 2], [part("t", 0, [0, 1])])
    for bad in (-1, 601, float("nan")):
        with pytest.raises(Exception) as err:
            plan_dir(snap, tmp_path / "p", move_fixed_seconds=bad)
        assert str(err.value) == f"plan: --move-fixed-seconds must be within 0..600 (seconds per move), got {bad}"


def test_plan_estimates_at_the_delivered_rate_and_throttles_at_the_configured_one(tmp_path: Path) -> None:
    # The same 1 GiB copy with the brokers delivering 0.75 of 100 MiB/s: 1024 / (75 - 50) = 40.96 s,
    # in the batch, the continuous schedule and its physical bound alike; Kafka still gets 100 MiB/s.
    snap = snapshot([0, 1, 2], [part("t", 0, [0, 1], bytes_in_per_sec=50.0 * MiB)])
    m = plan_dir(snap, tmp_path / "p", throttle_bytes_per_sec=100 * MiB, decommission_brokers=(1,), throttle_efficiency=0.75,
                 move_fixed_seconds=0)
    moves = [b for b in m["batches"] if b["replica_moves"]]
    assert [b["estimated_seconds"] for b in moves] == [pytest.approx(40.96, abs=0.05)]
    assert m["summary"]["continuous"]["estimated_seconds"] == pytest.approx(40.96, abs=0.05)
    assert m["summary"]["continuous"]["physical_bound_seconds"] == pytest.approx(1024 / 75, abs=0.05)
    schedule = json.loads((tmp_path / "p" / "schedule.json").read_text())
    assert (schedule["throttle_bytes_per_sec"], schedule["throttle_efficiency"]) == (100 * MiB, 0.75)
    throttles = json.loads((tmp_path / "p" / "batches" / "001" / "throttles.json").read_text())
    assert {v for cfg in throttles["brokers"].values() for v in cfg.values()} == {str(100 * MiB)}
    assert load_plan(tmp_path / "p", require_passed=False).schedule.delivered_rate == 75 * MiB


def test_a_partition_that_cannot_catch_up_at_the_delivered_rate_is_named(tmp_path: Path) -> None:
    # 50 MiB/s of produce traffic is below the 60 MiB/s throttle but not below the 30 MiB/s it delivers at 0.5.
    snap = snapshot([0, 1, 2], [part("t", 0, [0, 1], bytes_in_per_sec=50.0 * MiB)])
    with pytest.raises(Exception) as err:
        plan_dir(snap, tmp_path / "p", throttle_bytes_per_sec=60 * MiB, decommission_brokers=(1,), throttle_efficiency=0.5)
    assert str(err.value) == (
        "partition t-0 must move (broker 1 is decommissioned) but its produce rate 52,428,800 B/s is at or above the "
        "delivered rate 31,457,280 B/s (0.5 of the throttle 62,914,560 B/s), so its new replica could never catch up; "
        "raise --throttle above 104,857,600")


def _state(brokers: list[tuple[int, str]], rf: int) -> ClusterState:
    ids = [b for b, _ in brokers]
    return ClusterState(snapshot(brokers, [part("t", 0, ids[:rf])]), PlanOptions())


@pytest.mark.parametrize(
    ("racks", "rf", "cap"),
    [("aabb", 3, 2), ("aabb", 2, 1), ("aabb", 4, 2), ("aabbcc", 3, 1), ("aabbcc", 4, 2), ("aabbcc", 6, 2), ("aabbcc", 1, 1)],
)
def test_rack_cap_is_the_ceiling_of_rf_over_racks(racks: str, rf: int, cap: int) -> None:
    state = _state([(i, r) for i, r in enumerate(racks)], 1)
    assert state.rack_cap(rf) == cap


def test_rack_ok_refuses_a_replica_that_would_exceed_the_cap() -> None:
    # Racks a = {0, 1, 4}, b = {2, 3}; RF 3 over 2 racks: at most 2 replicas per rack.
    state = _state([(0, "a"), (1, "a"), (2, "b"), (3, "b"), (4, "a")], 3)
    assert state.rack_ok([0, 2], None, 1, 3)  # a second replica in rack a: allowed
    assert not state.rack_ok([0, 1], None, 4, 3)  # a third in rack a: refused
    assert not state.rack_ok([0, 1, 2], 2, 4, 3)  # replacing b's only replica by a third in a: refused
    assert state.rack_ok([0, 1, 2], 2, 3, 3)  # within rack b: always fine


def test_replica_targets_are_floor_and_ceiling_of_the_mean(tmp_path: Path) -> None:
    # 10 single-replica partitions over 3 brokers: 10/3 = 3.33, so every broker may hold 3 or 4.
    t = placement_targets({0: None, 1: None, 2: None}, {1: (10, 10 * GiB)})
    assert t.replicas == {0: (3, 4), 1: (3, 4), 2: (3, 4)}
    snap = snapshot([0, 1, 2], [part("t", i, [0]) for i in range(10)])
    m = plan_dir(snap, tmp_path / "p")
    assert m["summary"]["targets"]["replicas"] == {"0": [3, 4], "1": [3, 4], "2": [3, 4]}
    assert sorted(r["replicas"] for r in m["summary"]["projected"]) == [3, 3, 4]
    assert m["summary"]["replica_moves"] == 6


def test_the_executor_refuses_an_edited_runbook(tmp_path: Path) -> None:
    out = tmp_path / "p"
    m = plan_dir(snapshot([0, 1, 2], [part("t", 0, [0, 1]), part("t", 1, [0, 1])]), out)
    assert "RUNBOOK.md" in m["files"]
    load_plan(out, require_passed=False)  # unedited: accepted
    runbook = out / "RUNBOOK.md"
    runbook.write_text(runbook.read_text() + "\nkafka-reassign-partitions.sh --execute --reassignment-json-file evil.json\n")
    with pytest.raises(PlanDirError) as err:
        load_plan(out, require_passed=False)
    assert str(err.value).startswith(f"{runbook}: changed since planning")
    assert json.loads((out / "plan.json").read_text())["files"]["RUNBOOK.md"] == m["files"]["RUNBOOK.md"]


def wave(steps: list[Step], rate: float, fixed: float) -> float:
    """The module docstring's rule, one step at a time."""
    recv: dict[int, list[float]] = {}
    send: dict[int, list[float]] = {}
    for s in steps:
        for b in s.adds:
            for side, x in ((recv, b), (send, s.leader)):
                got = side.setdefault(x, [0, 0.0])
                got[0] += s.size
                got[1] += s.rate
    if any(rate - flow <= 0 for size, flow in [*recv.values(), *send.values()]):
        return float("inf")
    worst = max([size / (rate - flow) for size, flow in [*recv.values(), *send.values()]], default=0.0)
    return worst + fixed if recv else worst


@pytest.mark.parametrize("seed", range(40))
def test_every_batchs_seconds_are_the_rule(seed: int) -> None:
    rnd = random.Random(seed)
    chains, _, _, throttle, fixed, _ = draw_steps(seed)
    steps = [s for chain in chains for s in chain]
    n = rnd.randint(1, 5)
    groups = [[i for i in range(len(steps)) if i % n == g] for g in range(n)]
    for g in groups:
        rnd.shuffle(g)  # (the order sums the rates: a batch's own order)
    order = np.array([i for g in groups for i in g], dtype=np.int64)
    at = np.cumsum([0] + [len(g) for g in groups])
    got = waves_seconds(columns(steps, None), order, at, throttle, fixed).tolist()
    assert got == [wave([steps[i] for i in g], throttle, fixed) for g in groups]
