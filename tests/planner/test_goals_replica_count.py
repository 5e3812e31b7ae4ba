"""The replica-count goal (planner/goals/replica_count.py): the size it asks for, its veto, and
its moves, on clusters small enough to work out by hand. Brokers 0..n-1 are their own indexes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kafka_rebalance.planner.goals.replica_count import ReplicaCountGoal, byte_need, desired_size
from kafka_rebalance.planner.state import ClusterState
from tests.support.clusters import GiB, part, planner_state


def state(brokers: list[Any], partitions: list[dict[str, Any]], **options: Any) -> ClusterState:
    return planner_state(brokers, partitions, targets=True, **options)


def four_on_zero(**options: Any) -> ClusterState:
    """1, 2, 3 and 4 GiB on broker 0; broker 1 empty: targets 2 replicas and 5 GiB each."""
    return state([0, 1], [part("t", i, [0], size_bytes=(i + 1) * GiB) for i in range(4)], **options)


def test_the_size_asked_for_keeps_both_brokers_in_the_band_over_their_remaining_moves() -> None:
    s = four_on_zero()
    # Aiming 25 % inside the 10 % band (7.5 %): broker 0 must shed 10 - 5.375 GiB over 2 moves, broker 1
    # gain 4.625 GiB over 2: 2.3125 GiB a move either way.
    assert desired_size(s, 0, 1) == pytest.approx(2.3125 * GiB)
    assert byte_need(s, np.asarray([0, 1])).tolist() == [-1.0, 1.0]
    # with a 20 % band (15 % aimed): 10 - 5.75 over 2 = 2.125; 4.25 over 2 = 2.125
    assert desired_size(four_on_zero(byte_tolerance=0.2), 0, 1) == pytest.approx(2.125 * GiB)


def test_a_broker_being_emptied_asks_for_nothing_of_its_own() -> None:
    # Broker 0 is decommissioned: only the receiver's need counts, 9.25 GiB (10 less 7.5 %) over 4 moves.
    s = state([0, 1], [part("t", i, [0], size_bytes=(i + 1) * GiB) for i in range(4)], decommission_brokers=(0,))
    assert desired_size(s, 0, 1) == pytest.approx(9.25 / 4 * GiB)


def test_neither_under_pressure_asks_for_the_smallest() -> None:
    s = state([0, 1], [part("t", 0, [0], size_bytes=5 * GiB), part("t", 1, [1], size_bytes=5 * GiB)])
    assert desired_size(s, 0, 1) == 0.0


def test_the_veto_keeps_counts_in_range_and_lets_ineligible_brokers_empty() -> None:
    goal = ReplicaCountGoal()
    s = four_on_zero()
    assert goal.accept_move(s, 0, 0, 1)          # 4 above lo 2 on the source, 0 below hi 2 on the destination
    s.move(0, 0, 1)
    s.move(1, 0, 1)
    assert not goal.accept_move(s, 2, 0, 1)      # broker 0 is at its lo of 2 (and 1 at its hi)
    assert not goal.accept_move(s, 0, 1, 0)
    # Broker 2 is decommissioned (no range of its own); 0 and 1 hold one each of a range 1..2.
    s2 = state([0, 1, 2], [part("t", 0, [2]), part("t", 1, [0]), part("t", 2, [1])], decommission_brokers=(2,))
    assert goal.accept_move(s2, 0, 2, 0)         # leaving an ineligible broker is always fine
    assert not goal.accept_move(s2, 2, 1, 0)     # 1 would drop below its lo of 1


def test_each_count_move_takes_the_replica_nearest_the_size_asked_for() -> None:
    # Broker 0 gives two: first the one nearest 2.3125 GiB (2), then, from 8 GiB on 3 replicas, the one
    # nearest 2.625 GiB (3). Both end with 5 GiB.
    s = four_on_zero()
    ReplicaCountGoal().optimize(s)
    assert [s.row(p) for p in range(4)] == [[0], [1], [1], [0]]
    assert s.counts.tolist() == [2, 2] and (s.bytes // GiB).tolist() == [5, 5]


def test_a_receiver_below_its_range_pulls_from_the_donor_in_its_own_rack_first() -> None:
    # Racks a = {0, 2}, b = {1, 3}; brokers 2 and 3 are new. 6 replicas over 4 brokers: 1 or 2 each. 0 and 1
    # hold 3 each, one above; each gives one to the new broker of its own rack: 0 to 2, 1 to 3.
    parts = [part("t", i, [0]) for i in range(3)] + [part("u", i, [1]) for i in range(3)]
    s = state([(0, "a"), (1, "b"), (2, "a"), (3, "b")], parts)
    ReplicaCountGoal().optimize(s)
    assert s.counts.tolist() == [2, 2, 1, 1]
    moved = {(p, s.row(p)[0]) for p in range(6) if s.row(p) != s.original_row(p)}
    assert {(s.parts[p].topic, b) for p, b in moved} == {("t", 2), ("u", 3)}
