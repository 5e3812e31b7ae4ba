"""The lower bounds on moves and bytes (planner/lower_bounds.py), term by term, on clusters small
enough to work out by hand. Brokers 0..n-1 are their own indexes; partitions are in (topic, partition) order."""

from __future__ import annotations

from typing import Any

import numpy as np

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


def test_broker_zero_decommissioned_its_replica_is_a_forced_copy_and_a_move_out() -> None:
    # Broker 0 (index 0) is decommissioned and holds t-0, an empty partition: one copy, no bytes. Brokers 1 and
    # 2 hold t-1 and t-2 (1 GiB): counts [1, 2] and bytes 1 GiB +- 10 % each already hold, so every term is that
    # one move out (0 + 1 leaving), and no byte.
    s = state([0, 1, 2], [part("t", 0, [0], size_bytes=0), part("t", 1, [1], size_bytes=GiB),
                          part("t", 2, [2], size_bytes=GiB)], decommission_brokers=(0,))
    assert lb.forced_copies(s).tolist() == [1, 0, 0]
    one = {"replica_moves": 1, "bytes_moved": 0}
    assert lb.compute(s) == {"forced": one, "counts": one, "bytes": one, "both": one}


def test_forced_copies_count_a_crowded_rack_by_every_replica_before() -> None:
    # Racks a = {0, 1, 2}, b = {3, 4}; 4 is dead. RF 3 over 2 racks: at most 2 per rack.
    # t-0 [0, 1, 2]: the third rack-a replica has two before it in rack a: one copy.
    # t-1 [0, 4, 1]: the dead 4 is in no rack; 1 has one rack-a replica before it and stays: one copy (for 4).
    s = state([(0, "a"), (1, "a"), (2, "a"), (3, "b"), (4, "b", False)],
              [part("t", 0, [0, 1, 2]), part("t", 1, [0, 4, 1], isr=[0, 1])])
    assert lb.forced_copies(s).tolist() == [1, 1]
    # One rack among the eligible brokers: no cap below the RF, [0, 1] stays (a rack of one cannot be spread).
    s = state([(0, "a"), (1, "a")], [part("t", 0, [0, 1])])
    assert lb.forced_copies(s).tolist() == [0]


def test_shrinking_one_byte_partitions_still_needs_copies_into_a_new_broker() -> None:
    # t-0..t-2 (1 byte, RF 2 -> 1) on brokers 0 and 1, broker 2 new: 1 replica and 1 byte each, [0.9, 1.1].
    # Dropping replicas copies nothing, but broker 2 needs one replica (count) and 0.9 bytes, at least
    # ceil(0.9 / 1) = 1 copy of the largest (1 byte) partition (bytes): 1 move, 1 byte, in every term.
    s = state([0, 1, 2], [part("t", i, [0, 1], size_bytes=1) for i in range(3)], replication_factor=1)
    one = {"replica_moves": 1, "bytes_moved": 1}
    assert lb.compute(s) == {"forced": {"replica_moves": 0, "bytes_moved": 0}, "counts": one, "bytes": one, "both": one}


def test_empty_partitions_bound_moves_but_no_bytes() -> None:
    # t-0, t-1 (empty) on broker 0, broker 1 new: one must move (counts), no byte needs to (targets 0 bytes,
    # and no partition has a byte to bound a byte deficit with).
    s = state([0, 1], [part("t", 0, [0], size_bytes=0), part("t", 1, [0], size_bytes=0)])
    none, one = {"replica_moves": 0, "bytes_moved": 0}, {"replica_moves": 1, "bytes_moved": 0}
    assert lb.compute(s) == {"forced": none, "counts": one, "bytes": none, "both": one}


def test_an_overloaded_broker_of_small_replicas_sheds_one_move_per_replica() -> None:
    # Broker 0: t-0..t-5 (1 byte each), broker 1: u-0 (3 bytes), broker 2 new. 7 replicas: [2, 3] each;
    # 9 bytes: 3 each, [2.7, 3.3].
    s = state([0, 1, 2], [part("t", i, [0], size_bytes=1) for i in range(6)] + [part("u", 0, [1], size_bytes=3)])
    assert lb.compute(s) == {
        "forced": {"replica_moves": 0, "bytes_moved": 0},
        # counts: 1 into broker 1 and 2 into broker 2 (3 in), 3 out of broker 0; in, the cluster's 3 smallest
        # (3 bytes), out, broker 0's own 3 smallest (3 bytes)
        "counts": {"replica_moves": 3, "bytes_moved": 3},
        # bytes: broker 2 needs 2.7, ceil(2.7 / 3) = 1 copy of the largest; broker 0 sheds 6 - 3.3 = 2.7 in
        # replicas of at most 1 byte: 3 moves. 2.7 bytes rounded up: 3
        "bytes": {"replica_moves": 3, "bytes_moved": 3},
        # both: in max(1, 0) + max(2, 1) = 3, out max(3, 3) = 3; bytes in max(1, 0) + max(2, 2.7) = 3.7 -> 4
        "both": {"replica_moves": 3, "bytes_moved": 4},
    }


def test_a_brokers_cheapest_replicas_out_start_from_its_own_smallest() -> None:
    # Broker 0 (index 0): t-0..t-2 of 5 bytes; brokers 1, 2: u-0, u-1 of 1 byte; broker 3 new. 5 replicas:
    # [1, 2] each; 17 bytes: 4.25 each, [3.825, 4.675].
    s = state([0, 1, 2, 3], [part("t", i, [0], size_bytes=5) for i in range(3)]
              + [part("u", 0, [1], size_bytes=1), part("u", 1, [2], size_bytes=1)])
    assert lb.compute(s) == {
        "forced": {"replica_moves": 0, "bytes_moved": 0},
        # counts: one into broker 3 (the cluster's smallest, 1 byte), one out of broker 0 (its smallest: 5)
        "counts": {"replica_moves": 1, "bytes_moved": 5},
        # bytes in: 2.825 + 2.825 + 3.825 = 9.475, one copy of at most 5 bytes each (3); out of broker 0:
        # 15 - 4.675 = 10.325 in replicas of 5 bytes: ceil(2.065) = 3. Bytes: 10.325 -> 11
        "bytes": {"replica_moves": 3, "bytes_moved": 11},
        # both: in max(0, 1) * 2 + max(1, 1) = 3, out max(1, 3) = 3; bytes out max(5, 10.325) -> 11
        "both": {"replica_moves": 3, "bytes_moved": 11},
    }


def test_ceil_rounds_up_except_within_a_floats_error_of_a_whole_number() -> None:
    x = np.asarray([2.3, 3.0, 0.0, 16106127360.000002, 3221225471.9999995, 2.7])
    assert lb._ceil(x).tolist() == [3.0, 3.0, 0.0, 16106127360.0, 3221225472.0, 3.0]


def test_with_counts_and_band_both_reached_a_broker_shedding_replicas_but_short_of_bytes_receives_both() -> None:
    # Broker 0: four 100-byte replicas (400); broker 1: two of 800 (1,600). Target 1,000, band [900, 1,100];
    # 6 replicas over 2 brokers: counts [3, 3]. Broker 0 must shed one replica (its smallest, 100) and still
    # end at 900 or more: it receives at least 500 + 100 = 600. Broker 1 must take one (the cluster's
    # smallest, 100) and end at 1,100 or less: it sheds at least 500 + 100 = 600. In: 600 + 100, out:
    # 100 + 600, so 700 bytes; without the tie the terms added up to 500 + 100 either way: 600. (The
    # fewest is 1,000: an 800 one way, two 100s the other.)
    s = planner_state([0, 1], [part("t", i, [0], size_bytes=100) for i in range(4)]
                      + [part("u", i, [1], size_bytes=800) for i in range(2)], targets=True)
    b = lb.compute(s)
    assert b["both"]["bytes_moved"] == 700
    assert (b["counts"]["bytes_moved"], b["bytes"]["bytes_moved"]) == (100, 500)


def test_the_byte_terms_count_only_the_brokers_brought_into_their_band() -> None:
    # Same cluster. Only broker 1 in its band: broker 0's deficit and tie no longer bind, in = 0 + 100 (broker
    # 1's count), out = 100 (broker 0's count) + 600 (broker 1's tie). Only broker 0: in = 600 + 100, out =
    # 100 + 0. Neither: the count terms. The band alone (no counts): broker 1's excess, 500.
    s = planner_state([0, 1], [part("t", i, [0], size_bytes=100) for i in range(4)]
                      + [part("u", i, [1], size_bytes=800) for i in range(2)], targets=True)
    t = lb.terms(s)
    assert lb.summed(t, np.asarray([False, True]))["both"]["bytes_moved"] == 700
    assert lb.summed(t, np.asarray([True, False]))["both"]["bytes_moved"] == 700
    assert lb.summed(t, np.asarray([False, False]))["both"] == lb.summed(t)["counts"]
    assert lb.summed(t, np.asarray([False, True]))["bytes"]["bytes_moved"] == 500


def test_forced_copies_count_every_rack_a_partition_must_span_and_does_not() -> None:
    # Racks a = {0, 1, 2, 3}, b = {4, 5}, c = {6, 7}; RF 4 over three racks: at most 2 per rack, all three spanned.
    # [0, 1, 4, 5] (2 + 2 + 0) is under the cap everywhere and still needs one copy into c; [0, 1, 2, 4] (3 + 1) one,
    # which also fills c; [0, 1, 2, 3] (4 in a) two; [0, 1, 4, 6] (2 + 1 + 1) none.
    s = state([(0, "a"), (1, "a"), (2, "a"), (3, "a"), (4, "b"), (5, "b"), (6, "c"), (7, "c")],
              [part("t", 0, [0, 1, 4, 5]), part("t", 1, [0, 1, 2, 4]), part("t", 2, [0, 1, 2, 3]), part("t", 3, [0, 1, 4, 6])])
    assert lb.forced_copies(s).tolist() == [1, 1, 2, 0]
