"""The leader-keeping pass (planner/goals/leader_keep.py): a move of a leader's replica swapped for a
follower's of close size on the same donor, counts unchanged. Brokers 0..n-1 are their own indexes."""

from __future__ import annotations

from kafka_rebalance.planner.goals.base import Goal
from kafka_rebalance.planner.goals.leader_keep import keep_leaders
from kafka_rebalance.planner.state import ClusterState
from tests.support.clusters import GiB, part, planner_state


def three_brokers(follower_gib: int, **options) -> ClusterState:
    """a (4 GiB) led by 0; f (``follower_gib``) on 0 as a follower, led by 2; fillers for the bytes. Then the
    plan so far moved a's replica from 0 (its leader) to 1."""
    s = planner_state([0, 1, 2], [
        part("a", 0, [0, 2], size_bytes=4 * GiB),
        part("f", 0, [2, 0], size_bytes=follower_gib * GiB),
        part("g", 0, [1, 2], size_bytes=20 * GiB),
        part("h", 0, [0, 2], size_bytes=20 * GiB),
    ], targets=True, **options)
    s.move(0, 0, 1)
    return s


def test_a_leaders_move_becomes_a_followers_move_of_the_same_size() -> None:
    s = three_brokers(4)
    counts, held = s.counts.copy(), s.bytes.copy()
    assert keep_leaders(s) == 1
    assert s.row(0) == [0, 2] and not s.touched[0]  # a is back where it was: its leader stays
    assert s.row(1) == [2, 1]  # f's replica on 0, a follower there, went to 1 instead
    assert (s.counts == counts).all() and (s.bytes == held).all()
    assert s.moved_bytes() == 4 * GiB and s.moved_replicas() == 1


def test_a_larger_follower_is_taken_only_while_both_brokers_stay_in_the_band() -> None:
    # Bytes after a's move: 0: 5 + 20 = 25, 1: 20 + 4 = 24, 2: 49 GiB (mean 32.67, band about 29.4..35.9). f (5)
    # in place of a (4) takes 1 GiB more off 0, which is below its band already: no swap.
    s = three_brokers(5)
    assert keep_leaders(s) == 0 and s.row(0) == [1, 2] and s.row(1) == [2, 0]


def test_a_larger_follower_that_evens_the_bytes_is_taken_at_its_cost() -> None:
    # The same, with a band of 50 % (about 16.4..49): f in place of a leaves 0 and 1 at 24 and 25 GiB, both
    # inside it and under the fullest broker (2, 49): the swap is made, for 1 GiB more moved.
    s = three_brokers(5, byte_tolerance=0.5)
    assert keep_leaders(s) == 1
    assert s.row(0) == [0, 2] and s.row(1) == [2, 1]
    assert s.moved_bytes() == 5 * GiB and s.moved_replicas() == 1


def test_a_goal_optimised_earlier_may_veto_the_follower() -> None:
    class NoF(Goal):
        def accept_move(self, state, p, src, dst):
            return p != 1

    s = three_brokers(4)
    s.vetoes = [NoF()]
    assert keep_leaders(s) == 0 and s.row(0) == [1, 2]


def test_a_leaving_brokers_leaders_move_as_planned() -> None:
    # Broker 0 is decommissioned: every replica on it leaves, leaders included; nothing to swap.
    s = three_brokers(4, decommission_brokers=[0])
    assert keep_leaders(s) == 0 and s.row(0) == [1, 2]


def test_a_partition_the_broker_leads_is_never_the_replacement() -> None:
    # The only other replica on 0 of a's size is one 0 leads too: moving it would change its leader instead.
    s = planner_state([0, 1, 2], [
        part("a", 0, [0, 2], size_bytes=4 * GiB),
        part("b", 0, [0, 2], size_bytes=4 * GiB),
        part("g", 0, [1, 2], size_bytes=20 * GiB),
    ], targets=True)
    s.move(0, 0, 1)
    assert keep_leaders(s) == 0 and s.row(0) == [1, 2] and s.row(1) == [0, 2]
