"""The byte-trim pass (planner/goals/byte_trim.py): a moved replica swapped for a smaller one from the
same donor when both brokers stay in the band. Brokers 0..n-1 are their own indexes."""

from __future__ import annotations

from kafka_rebalance.planner.goals.base import Goal
from kafka_rebalance.planner.goals.byte_trim import ByteTrimGoal
from kafka_rebalance.planner.state import ClusterState
from tests.support.clusters import GiB, part, planner_state


def moved_4_gib(**options) -> ClusterState:
    # Broker 0: a (4 GiB), b (3), c (1); broker 1: d (2). 10 GiB, 5 each. The plan so far moved a to 1.
    s = planner_state([0, 1], [part("a", 0, [0], size_bytes=4 * GiB), part("b", 0, [0], size_bytes=3 * GiB),
                               part("c", 0, [0], size_bytes=GiB), part("d", 0, [1], size_bytes=2 * GiB)], targets=True, **options)
    s.move(0, 0, 1)
    return s


def test_a_move_is_swapped_for_the_smallest_replica_that_keeps_both_brokers_in_the_band() -> None:
    # After a's move: 4 / 6 GiB. The band (10 % less the 0.5 % edge) is [4.5025, 5.4975]: a replacement
    # of at least 4 - 1.4975 GiB keeps both inside; b (3 GiB) is the smallest such. 5 / 5 and 1 GiB saved.
    s = moved_4_gib()
    ByteTrimGoal().optimize(s)
    assert [s.row(p) for p in range(4)] == [[0], [1], [0], [1]]
    assert s.moved_bytes() == 3 * GiB and not s.touched[0] and 0 not in s.cur


def test_a_receiver_still_below_the_band_keeps_the_larger_move() -> None:
    # Broker 0: a (4), b (3), c (3); broker 1: d (empty). After a's move 6 / 4 GiB: broker 1 is below the band,
    # so a smaller replica would only leave it further below.
    s = planner_state([0, 1], [part("a", 0, [0], size_bytes=4 * GiB), part("b", 0, [0], size_bytes=3 * GiB),
                               part("c", 0, [0], size_bytes=3 * GiB), part("d", 0, [1], size_bytes=0)], targets=True)
    s.move(0, 0, 1)
    ByteTrimGoal().optimize(s)
    assert s.moved_bytes() == 4 * GiB and s.row(0) == [1]


def test_a_goal_optimised_earlier_may_veto_the_smaller_replica() -> None:
    class NoB(Goal):
        def accept_move(self, state, p, src, dst):
            return p != 1

    s = moved_4_gib()
    s.vetoes = [NoB()]
    ByteTrimGoal().optimize(s)
    assert s.moved_bytes() == 4 * GiB and s.row(1) == [0]
