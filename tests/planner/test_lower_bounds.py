"""The lower bounds on moves and bytes (planner/lower_bounds.py), term by term, on clusters small
enough to work out by hand. Brokers 0..n-1 are their own indexes; partitions are in (topic, partition) order."""

from __future__ import annotations

from typing import Any

from kafka_rebalance.planner import lower_bounds as lb
from kafka_rebalance.planner.state import ClusterState
from tests.support.clusters import GiB, part, planner_state


def state(brokers: list[Any], partitions: list[dict[str, Any]], **options: Any) -> ClusterState:
    return planner_state(brokers, partitions, targets=True, **options)


def test_forced_copies_are_the_replicas_a_partition_cannot_keep() -> None:
    # 2 is decommissioned: t-0 [0, 2] must copy one replica, t-1 [2] one; t-2 stays; x (excluded) never moves.
    s = state([0, 1, 2], [part("t", 0, [0, 2], size_bytes=2 * GiB), part("t", 1, [2], size_bytes=3 * GiB),
                          part("t", 2, [0, 1]), part("x", 0, [2])], decommission_brokers=(2,), exclude_topics=("x",))
    assert lb.forced_copies(s).tolist() == [1, 1, 0, 0]
    assert lb.compute(s)["forced"] == {"replica_moves": 2, "bytes_moved": 5 * GiB}


def test_forced_copies_repair_racks_and_replace_dead_brokers() -> None:
    # Racks a = {0, 1}, b = {2, 3}; 3 is dead. [0, 1] crowds rack a (one must go), [0, 2] is fine,
    # [0, 3] loses its dead replica, [1, 0, 2] (RF 3 over 2 racks: 2 per rack) keeps all three.
    s = state([(0, "a"), (1, "a"), (2, "b"), (3, "b", False)],
              [part("t", 0, [0, 1]), part("t", 1, [0, 2]), part("t", 2, [0, 3], isr=[0]), part("u", 0, [1, 0, 2])])
    assert lb.forced_copies(s).tolist() == [1, 0, 1, 0]


def test_a_replication_factor_increase_forces_the_new_replicas() -> None:
    s = state([0, 1, 2], [part("t", 0, [0], size_bytes=2 * GiB), part("t", 1, [1, 2])], replication_factor=3)
    assert lb.forced_copies(s).tolist() == [2, 1]
    assert lb.compute(s)["forced"] == {"replica_moves": 3, "bytes_moved": 5 * GiB}


def skewed() -> ClusterState:
    # Broker 0: 1, 2, 3, 4 GiB; broker 1: 5, 5 GiB; broker 2: new. 6 replicas: 2 each (counts [4, 2, 0]).
    # Bytes: 20 GiB, 6.67 each; at 10 % the band is [6, 7.33] GiB.
    return state([0, 1, 2], [part("t", i, [0], size_bytes=g * GiB) for i, g in enumerate([1, 2, 3, 4])]
                 + [part("u", i, [1], size_bytes=5 * GiB) for i in range(2)])


def test_each_term_of_a_new_broker_and_an_overloaded_one() -> None:
    b = lb.compute(skewed())
    assert b["forced"] == {"replica_moves": 0, "bytes_moved": 0}
    # counts: 2 moves into broker 2, 2 out of broker 0; the cheapest two in are the cluster's two
    # smallest (1 + 2 GiB), the cheapest two out are broker 0's own two smallest (1 + 2 GiB).
    assert b["counts"] == {"replica_moves": 2, "bytes_moved": 3 * GiB}
    # bytes: broker 2 needs 6 GiB, in ceil(6 / 5) = 2 copies of at most 5 GiB; brokers 0 and 1 each
    # shed 2.67 GiB, at least one replica each. Bytes in (6 GiB) exceed bytes out (5.33 GiB).
    assert b["bytes"] == {"replica_moves": 2, "bytes_moved": 6 * GiB}
    # both: out of broker 0 max(2, 1) and out of broker 1 max(0, 1) = 3 moves; in: max(3, 6) GiB.
    assert b["both"] == {"replica_moves": 3, "bytes_moved": 6 * GiB}


def test_finish_keeps_only_the_terms_of_the_goals_the_plan_reached() -> None:
    b = lb.compute(skewed())
    assert lb.finish(b, True, True) == {"replica_moves": 3, "bytes_moved": 6 * GiB}
    assert lb.finish(b, True, False) == {"replica_moves": 2, "bytes_moved": 3 * GiB}
    assert lb.finish(b, False, True) == {"replica_moves": 2, "bytes_moved": 6 * GiB}
    assert lb.finish(b, False, False) == {"replica_moves": 0, "bytes_moved": 0}
    forced = {"forced": {"replica_moves": 9, "bytes_moved": 1}, **{k: {"replica_moves": 1, "bytes_moved": 5} for k in ("counts", "bytes", "both")}}
    assert lb.finish(forced, True, True) == {"replica_moves": 9, "bytes_moved": 5}


def test_an_ineligible_brokers_replicas_all_leave() -> None:
    # 2 is decommissioned and holds t-2 (3 GiB): counts are in range for 0 and 1 (1 each of [1, 2]),
    # but its replica must go: one move, 3 GiB out.
    s = state([0, 1, 2], [part("t", 0, [0]), part("t", 1, [1]), part("t", 2, [2], size_bytes=3 * GiB)],
              decommission_brokers=(2,))
    b = lb.compute(s)
    assert b["forced"] == {"replica_moves": 1, "bytes_moved": 3 * GiB}
    assert b["counts"] == {"replica_moves": 1, "bytes_moved": 3 * GiB}


def test_a_shrinking_replication_factor_needs_no_copy_to_remove_a_replica() -> None:
    # RF 2 -> 1 on two brokers: each holds 2 of a target 1, but dropping replicas copies nothing.
    s = state([0, 1], [part("t", 0, [0, 1]), part("t", 1, [0, 1])], replication_factor=1)
    b = lb.compute(s)
    assert b["counts"] == b["bytes"] == b["both"] == b["forced"] == {"replica_moves": 0, "bytes_moved": 0}


def test_bounds_round_up_to_whole_bytes_but_not_past_a_floats_error() -> None:
    # 10 GiB over broker 0 and 1 (1 GiB and 9 GiB replicas), target 5 GiB, band [4.5, 5.5]: broker 0 needs
    # 3.5 GiB in, broker 1 sheds 3.5 GiB: 3758096384 bytes exactly, not one more.
    s = state([0, 1], [part("t", 0, [0], size_bytes=GiB), part("t", 1, [1], size_bytes=9 * GiB)])
    assert lb.compute(s)["bytes"]["bytes_moved"] == 3758096384
    # an odd byte count: 1 byte and 10 bytes, target 5.5, band [4.95, 6.05]: 3.95 in, rounded up to 4
    s = state([0, 1], [part("t", 0, [0], size_bytes=1), part("t", 1, [1], size_bytes=10)])
    assert lb.compute(s)["bytes"]["bytes_moved"] == 4
