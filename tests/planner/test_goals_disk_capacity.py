"""The disk-capacity goal (planner/goals/disk_capacity.py): no broker's disks filled past --max-disk-usage.

Clusters worked out by hand. Sizes in GiB; a broker's capacity is its log dirs' total bytes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kafka_rebalance.options import PlanOptions
from kafka_rebalance.planner import make_plan
from kafka_rebalance.planner.goals.disk_capacity import DiskCapacityGoal
from kafka_rebalance.planner.goals.registry import selected
from kafka_rebalance.planner.goals.view import BalanceView, BrokerView
from kafka_rebalance.planner.state import ClusterState
from kafka_rebalance.snapshot import Snapshot, snapshot_from_dict
from tests.support.clusters import part

GIB = 1024**3


def disk_cluster(capacity: dict[int, int | None], partitions: list[dict[str, Any]],
                 usable: dict[int, int] | None = None) -> Snapshot:  # fmt: skip
    """Brokers with one log dir each of ``capacity`` bytes (None: a broker that reports no size)."""
    brokers = []
    for b, total in capacity.items():
        d: dict[str, Any] = {"path": f"/data/{b}"}
        if total is not None:
            d["total_bytes"] = total
        if usable and b in usable:
            d["usable_bytes"] = usable[b]
        brokers.append({"id": b, "log_dirs": [d]})
    parts = [{"leader": p["replicas"][0], "isr": list(p["replicas"]), **p} for p in partitions]
    return snapshot_from_dict({"cluster_id": "disks", "brokers": brokers, "partitions": parts})


def new_small_broker(capacity_2: int | None) -> Snapshot:
    """Brokers 0 and 1 hold three 3 GiB and three 1 GiB replicas each (12 GiB, 6 replicas); broker 2 is new
    and empty. Even shares are 4 replicas and 8 GiB each: the byte goal would put 8 GiB on broker 2 (two of
    each size). Broker 2's disk of 8 GiB at 0.85 holds 6.8 GiB: at 4 replicas, at most one 3 GiB among them."""
    parts = [part("a", i, [i // 3], size_bytes=3 * GIB) for i in range(6)]
    parts += [part("b", i, [i // 3], size_bytes=GIB) for i in range(6)]
    return disk_cluster({0: 100 * GIB, 1: 100 * GIB, 2: capacity_2}, parts)


def projected(summary: dict, broker: int) -> int:
    return next(r["size_bytes"] for r in summary["projected"] if r["broker_id"] == broker)


@pytest.mark.parametrize("optimizer", ["heuristic", "exact"])
def test_the_byte_goal_does_not_fill_a_small_disk_past_its_limit(optimizer: str) -> None:
    limit = 0.85 * 8 * GIB
    # The cluster bites: with broker 2's capacity unknown, the plan puts more than 6.8 GiB there.
    unknown = make_plan(new_small_broker(None), PlanOptions(optimizer=optimizer)).summary
    assert projected(unknown, 2) > limit
    disk = next(g for g in unknown["goals"] if g["name"] == "disk-capacity")
    assert disk["reached"] is True and disk["after"]["offenders"] == []  # unknown capacity: unconstrained

    # Known capacities of 100, 100 and 8 GiB differ, so the targets are shared by capacity (balance.capacity_weights):
    # broker 2's share is 24 GiB x 8 / 208 = 0.92 GiB and 12 x 8 / 208 = 0.46 replicas (0..1), far under its limit;
    # one 1 GiB replica is the only load within 10 % of that share.
    summary = make_plan(new_small_broker(8 * GIB), PlanOptions(optimizer=optimizer)).summary
    assert projected(summary, 2) <= limit
    assert projected(summary, 2) == GIB
    assert summary["targets"]["replicas_reached"] is True
    disk = next(g for g in summary["goals"] if g["name"] == "disk-capacity")
    assert disk["hard"] is True and disk["reached"] is True and disk["after"]["offenders"] == []
    assert summary["optimizer"]["used"] == optimizer  # the solver's own plan, held to the goal's rows


@pytest.mark.parametrize("optimizer", ["heuristic", "exact"])
def test_a_broker_above_its_limit_is_relieved_even_when_no_soft_goal_is_chosen(optimizer: str) -> None:
    # Broker 0: nine 1 GiB replicas on a 10 GiB disk, limit 8.5 GiB; broker 1 is empty with room.
    snap = disk_cluster({0: 10 * GIB, 1: 100 * GIB}, [part("t", i, [0], size_bytes=GIB) for i in range(9)])
    summary = make_plan(snap, PlanOptions(optimizer=optimizer, goals=("preferred-leader",))).summary
    before = next(g for g in summary["goals"] if g["name"] == "disk-capacity")["before"]
    assert before == {"value": 9 * GIB - 0.85 * 10 * GIB, "reached": False, "offenders": [0]}
    assert summary["optimizer"]["used"] == optimizer
    # One 1 GiB replica is the fewest bytes that bring it under: 8 GiB <= 8.5 GiB.
    assert (summary["replica_moves"], summary["bytes_moved"]) == (1, GIB)
    assert projected(summary, 0) == 8 * GIB
    assert next(g for g in summary["goals"] if g["name"] == "disk-capacity")["after"]["offenders"] == []


def test_the_limit_is_the_fraction_of_the_capacity_less_what_the_disk_holds_besides_the_partitions() -> None:
    # Broker 0: a 100 GiB disk with 40 GiB free and 50 GiB of partitions: 10 GiB of other files.
    # Broker 1: no usable figure: the limit is the fraction of the capacity. Broker 2: no capacity at all.
    snap = disk_cluster({0: 100 * GIB, 1: 100 * GIB, 2: None},
                        [part("t", 0, [0], size_bytes=50 * GIB), part("t", 1, [1], size_bytes=GIB)],
                        usable={0: 40 * GIB})  # fmt: skip
    state = ClusterState(snap, PlanOptions(max_disk_usage=0.85))
    assert state.disk_limit.tolist() == [0.85 * 100 * GIB - 10 * GIB, 0.85 * 100 * GIB, np.inf]


def test_the_check_names_brokers_over_their_limit_and_leaves_unknown_ones_out() -> None:
    def broker(bid: int, size: float, limit: float | None) -> BrokerView:
        return BrokerView(bid, 1, 0, 9, size, size, 0.1, 0, 0, 0, 1, limit)

    view = BalanceView((broker(1, 120.0, 100.0), broker(2, 80.0, 100.0), broker(3, 10**12, None)), (), 0.1, 10.0,
                       (0, 9))  # fmt: skip
    check = DiskCapacityGoal().check(view)
    assert (check.value, check.reached, check.offenders) == (20.0, False, (1,))
    assert check.per_broker == {1: 20.0, 2: 0.0}


def test_it_is_hard_and_cannot_be_dropped() -> None:
    assert DiskCapacityGoal.hard and "disk-capacity" in selected(("bytes",))
    assert selected(("bytes",))[:3] == ("placement", "rack-safety", "disk-capacity")
