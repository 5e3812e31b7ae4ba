"""The byte goal (planner/goals/byte_balance.py) on its own, on clusters small enough to follow by hand.

Targets come from planner/targets.py; the count goal is a veto only where a test adds it (as the
planner does after optimising counts). Brokers 0..n-1 are their own indexes; loads are in GiB.
"""

from __future__ import annotations

from typing import Any

from kafka_rebalance.planner.goals.byte_balance import ByteBalanceGoal
from kafka_rebalance.planner.goals.replica_count import ReplicaCountGoal
from kafka_rebalance.planner.state import ClusterState
from tests.support.clusters import GiB, part, planner_state


def balanced(brokers: list[int], layout: dict[int, list[int]], counts_veto: bool = False, **options: Any) -> ClusterState:
    """``layout``: broker -> its single-replica partitions' sizes in GiB (partitions numbered in that order)."""
    parts, i = [], 0
    for b, sizes in layout.items():
        for g in sizes:
            parts.append(part("t", i, [b], size_bytes=g * GiB))
            i += 1
    s = planner_state(brokers, parts, targets=True, **options)
    if counts_veto:
        s.vetoes = [ReplicaCountGoal()]
    ByteBalanceGoal().optimize(s)
    return s


def loads(s: ClusterState) -> list[float]:
    return [round(float(b) / GiB, 6) for b in s.bytes]


def rows(s: ClusterState) -> list[list[int]]:
    return [s.row(p) for p in range(s.n_parts)]


def test_the_replica_nearest_the_excess_moves_when_it_improves_and_nothing_overshoots() -> None:
    # 8 GiB (6 + 2) against 2 GiB (1 + 1); target 5, band [4.5, 5.5]. The wanted 3 GiB: 2 GiB is nearest
    # and improves; after it (6 / 4) only the 6 GiB replica is left on 0, which would overshoot.
    s = balanced([0, 1], {0: [6, 2], 1: [1, 1]})
    assert loads(s) == [6, 4]
    assert rows(s) == [[0], [1], [1], [1]]


def test_where_counts_leave_no_slack_a_large_replica_is_swapped_for_a_small_one() -> None:
    # Two replicas each (the count range is 2..2): 4 + 4 against 1 + 1. No single move keeps the counts,
    # so 4 GiB goes to 1 and 1 GiB comes back: 5 and 5.
    s = balanced([0, 1], {0: [4, 4], 1: [1, 1]}, counts_veto=True)
    assert loads(s) == [5, 5]
    assert s.counts.tolist() == [2, 2]
    assert rows(s) == [[1], [0], [0], [1]]
    # Without the veto: two single moves reach the same rows, 4 GiB over (4 / 6), then 1 GiB back (5 / 5).
    s = balanced([0, 1], {0: [4, 4], 1: [1, 1]})
    assert loads(s) == [5, 5] and rows(s) == [[1], [0], [0], [1]]
    assert s.arrivals == {1: [0], 0: [2]}


def test_a_cluster_within_the_band_is_left_alone() -> None:
    s = balanced([0, 1, 2], {0: [4], 1: [3, 1], 2: [2, 2]}, byte_tolerance=0.0)
    assert s.cur == {} and loads(s) == [4, 4, 4]


def test_the_broker_furthest_outside_the_band_goes_first_and_moved_replicas_may_move_on() -> None:
    # 12 GiB over three brokers, target 4, band [3.6, 4.4]: 0 holds 4 + 2, 1 holds 3 + 3, 2 is empty.
    # 2 is furthest out (3.6 under): it takes the 2 GiB replica from 0 (the first of the two equally
    # loaded donors), then 1 (1.6 over) gives it a 3 GiB one. 4 / 3 / 5 is as close as whole replicas get:
    # every further move or swap leaves a broker as far out as before.
    s = balanced([0, 1, 2], {0: [4, 2], 1: [3, 3], 2: []})
    assert loads(s) == [4, 3, 5]
    assert rows(s) == [[0], [2], [2], [1]]


def test_the_gates_band_for_a_broker_the_tolerance_cannot_reach() -> None:
    # One 9 GiB partition and one of 1 GiB: no placement reaches 5 +- 10 %. The goal stops where it is:
    # moving 9 GiB only makes the other broker as far off.
    s = balanced([0, 1], {0: [9, 1], 1: []})
    assert loads(s) == [9, 1]
    assert rows(s) == [[0], [1]]
