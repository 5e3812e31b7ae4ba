"""The donor index of planner/goals/base.py: a broker's movable replicas by size, searched outward
from a wanted size. Brokers 0..n-1 are their own indexes; partition indexes follow (topic, partition)."""

from __future__ import annotations

from typing import Any

from kafka_rebalance.planner.goals.base import DonorIndex, donor_index
from kafka_rebalance.planner.state import ClusterState
from tests.support.clusters import GiB, part, planner_state


def state(partitions: list[dict[str, Any]], **options: Any) -> ClusterState:
    return planner_state([0, 1, 2], partitions, **options)


def sized(*gib: int, replicas: list[int] | None = None) -> list[dict[str, Any]]:
    return [part("t", i, replicas or [0], size_bytes=g * GiB) for i, g in enumerate(gib)]


def always(p: int) -> bool:
    return True


def test_the_nearest_size_wins_and_a_tie_goes_to_the_smaller_replica() -> None:
    # Broker 0 holds t-0..t-4 of 1, 3, 3, 5, 8 GiB. Wanting 4 GiB: 3 and 5 are equally near, the smaller wins;
    # of the two 3 GiB ones, the later one in the size order (t-2) is met first going down from 4.
    idx = DonorIndex(state(sized(1, 3, 3, 5, 8)), 0)
    assert (idx.parts, idx.sizes) == ([0, 1, 2, 3, 4], [g * GiB for g in (1, 3, 3, 5, 8)])
    assert [idx.find(4 * GiB, always) for _ in range(3)] == [2, 1, 3]  # then 1 GiB (3 away) loses to 5 (1 away)
    assert idx.parts == [0, 4]  # what was found left the index
    assert idx.find(100 * GiB, always) == 4 and idx.find(0, always) == 0 and idx.find(0, always) is None


def test_refused_candidates_are_passed_over_up_to_the_limit() -> None:
    idx = DonorIndex(state(sized(1, 3, 5, 8)), 0)
    assert idx.find(5 * GiB, lambda p: p != 2) == 1          # 5 refused; 3 (2 away) before 8 (3 away)
    assert idx.find(5 * GiB, lambda p: p == 0, limit=2) is None  # 5 and 8 checked, the limit stops before 1
    assert idx.find(5 * GiB, lambda p: p == 0, limit=3) == 0
    assert idx.parts == [2, 3]  # refused ones stay


def test_frozen_and_hot_partitions_are_never_donated() -> None:
    parts = sized(1, 2, 3, 4)
    parts[1] = {**parts[1], "leader": -1, "isr": []}                # leaderless: frozen
    parts[2] = {**parts[2], "bytes_in_per_sec": 50 * 1024 * 1024}   # produces faster than the throttle delivers
    s = state(parts + [part("x", 0, [0])], exclude_topics=("x",), throttle_bytes_per_sec=10 * 1024 * 1024)
    assert DonorIndex(s, 0).parts == [0, 3]


def test_a_replica_that_moved_away_is_dropped_and_a_touched_one_set_aside() -> None:
    # RF 2 on brokers 0 and 1. t-1's replica on 0 moves away (dropped from 0's index); t-2's replica on 1
    # moves (t-2 is touched, but its replica on 0 is still there: set aside, found only when allowed).
    s = state(sized(1, 2, 3, 4, replicas=[0, 1]))
    idx = donor_index(s, 0)
    assert donor_index(s, 0) is idx  # one index per broker, kept on the state
    s.move(1, 0, 2)
    s.move(2, 1, 2)
    # Wanting 3 GiB: t-2 (touched) is set aside, t-1 (gone) dropped; 4 GiB (1 away) beats 1 GiB (2 away).
    assert idx.find(3 * GiB, always) == 3
    assert (idx.parts, idx.side_parts) == ([0], [2])
    assert idx.find(3 * GiB, always, allow_touched=True) == 2  # the set-aside one is nearer than 1 GiB
    assert (idx.parts, idx.side_parts) == ([0], [])
    assert idx.find(3 * GiB, always, allow_touched=True) == 0


def test_with_touched_allowed_the_main_list_wins_when_it_is_nearer() -> None:
    s = state(sized(1, 5, 6, replicas=[0, 1]))
    idx = donor_index(s, 0)
    s.move(0, 1, 2)                              # t-0 (1 GiB) touched
    assert idx.find(5 * GiB, lambda p: p == 2) == 2 and idx.side_parts == []  # 1 GiB never reached: not set aside
    assert idx.find(0, lambda p: p == 1) == 1 and idx.side_parts == [0]        # passing 1 GiB sets it aside
    idx.put_back(1)
    assert idx.find(4 * GiB, always, allow_touched=True) == 1                # 5 GiB (1 away) beats the side 1 GiB


def test_put_back_keeps_the_size_then_partition_order() -> None:
    idx = DonorIndex(state(sized(2, 2, 2, 7)), 0)
    assert idx.find(2 * GiB, always) == 0  # going up from 2 GiB, the first of the equal sizes
    idx.put_back(0)
    assert idx.parts == [0, 1, 2, 3]
    idx.find(7 * GiB, always)
    idx.put_back(3)
    assert idx.parts == [0, 1, 2, 3]


def test_smallest_untouched_in_a_size_range() -> None:
    s = state(sized(1, 2, 3, 4, 5, replicas=[0, 1]))
    idx = donor_index(s, 0)
    s.move(1, 1, 2)  # t-1 (2 GiB) touched
    assert idx.smallest_untouched(2 * GiB, 5 * GiB, always, limit=10) == 2      # 2 GiB is touched: set aside
    assert (idx.parts, idx.side_parts) == ([0, 3, 4], [1])
    assert idx.smallest_untouched(2 * GiB, 5 * GiB, lambda p: p == 4, limit=10) is None  # 5 GiB is not below 5
    assert idx.smallest_untouched(0, 5 * GiB, lambda p: p == 3, limit=1) is None         # one check: 1 GiB refused
    assert idx.smallest_untouched(0, 5 * GiB, lambda p: p == 3, limit=2) == 3
    assert idx.parts == [0, 4]


def test_a_replica_at_the_move_cap_is_parked_until_its_partition_changes_or_the_cap_rises() -> None:
    # RF 2 on brokers 0 and 1. t-1's replica on 1 moves to 2, then the cap: t-1 has its one new replica, so
    # its original replica on 0 may not move to a new broker. A search passes it by and parks it.
    s = state(sized(1, 2, 3, replicas=[0, 1]))
    s.move(1, 1, 2)
    s.cap_moves()
    idx = donor_index(s, 0)
    assert s.capped(1, 0) and not s.capped(0, 0) and not s.capped(1, 2)  # 2 holds t-1's new replica, not an original
    # Wanting 2 GiB: t-1 is parked, then 1 GiB and 3 GiB are equally near and the smaller wins.
    assert idx.find(2 * GiB, always, allow_touched=True) == 0
    assert idx.parked == {1} and s.parked == {1: [0]} and 1 not in idx.parts + idx.side_parts
    # t-1's replica goes home: the partition changed, the search sees its replica on 0 again.
    s.move(1, 2, 1)
    assert idx.parked == set() and s.parked == {} and not s.capped(1, 0)
    assert idx.find(2 * GiB, always, allow_touched=True) == 1
    idx.put_back(1)  # not moved after all (as a caller does)
    # Parked again when t-1 moves once more, then handed back when the cap rises by one step (for the partitions
    # moved before the cap, as t-1 was; t-2, moved after it, stays at one new replica).
    s.move(1, 1, 2)
    s.move(2, 1, 2)
    assert idx.find(2 * GiB, always, allow_touched=True) is None and idx.parked == {1, 2}
    s.one_more_move()
    assert not s.capped(1, 0) and s.capped(2, 0)
    assert idx.parked == set()  # both handed back; t-2 is parked again by the first search that passes it
    assert idx.find(3 * GiB, always, allow_touched=True) == 1 and idx.parked == {2}
