"""The byte goal (planner/goals/byte_balance.py) on its own, on clusters small enough to follow by hand.

Targets come from planner/targets.py; the count goal is a veto only where a test adds it (as the
planner does after optimising counts). Brokers 0..n-1 are their own indexes; loads are in GiB.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kafka_rebalance.planner.goals.byte_balance import ByteBalanceGoal
from kafka_rebalance.planner.goals.placement import PlacementGoal, RackSafetyGoal
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


def costly(layout: dict[int, list[int]], budget: int) -> ClusterState:
    s = planner_state([0, 1], [part("t", i, [b], size_bytes=g * GiB) for i, (b, g) in
                               enumerate((b, g) for b, sizes in layout.items() for g in sizes)], targets=True)
    s.vetoes = [ReplicaCountGoal()]
    ByteBalanceGoal(costly_swaps=budget).optimize(s)
    return s


def costly_bytes(layout: dict[int, list[int]], budget: int) -> ClusterState:
    """``costly`` in bytes (sizes as given), any number of brokers, tolerance 0."""
    s = planner_state(sorted(layout), [part("t", i, [b], size_bytes=g) for i, (b, g) in
                                       enumerate((b, g) for b, sizes in layout.items() for g in sizes)],
                      targets=True, byte_tolerance=0.0)
    s.vetoes = [ReplicaCountGoal()]
    ByteBalanceGoal(costly_swaps=budget).optimize(s)
    return s


def loads_of(s: ClusterState) -> list[float]:
    return [float(b) for b in s.bytes]


def test_a_broker_takes_part_in_a_limited_number_of_swaps_copying_over_three_bytes_per_byte_shed() -> None:
    # Counts locked at 2..2. 3 + 3 against 2 + 2 (mean 5, band [4.5, 5.5]): 3 GiB for 2 GiB reaches 5 and 5 but
    # copies 5 GiB to shed 1. Made while both brokers have costly swaps left; with none left, nothing moves.
    assert loads(costly({0: [3, 3], 1: [2, 2]}, budget=1)) == [5, 5]
    s = costly({0: [3, 3], 1: [2, 2]}, budget=0)
    assert loads(s) == [6, 4] and s.moved_replicas() == 0
    # 5 + 5 against 2 + 2 (mean 7, band [6.3, 7.7]): 5 GiB for 2 GiB copies 7 GiB to shed 3 (2.3 per byte),
    # and 4 + 4 against 2 + 2 copies exactly 3 per byte: both cheap, made without any costly swap left.
    assert loads(costly({0: [5, 5], 1: [2, 2]}, budget=0)) == [7, 7]
    assert loads(costly({0: [4, 4], 1: [2, 2]}, budget=0)) == [6, 6]


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


def test_a_broker_below_the_band_draws_from_the_heaviest_broker_even_when_nobody_is_above_it() -> None:
    # 80 GiB over four brokers: target 20, band [18, 22]. 21 / 21 / 21 / 17: only 3 is out (1 under). It asks
    # the heaviest first (all equal: by id), broker 0, for min(21 - 20, 20 - 17) = 1 GiB; the 2 GiB replica
    # is nearest and leaves both inside: 19 and 19.
    s = balanced([0, 1, 2, 3], {0: [19, 2], 1: [19, 2], 2: [19, 2], 3: [17]})
    assert loads(s) == [19, 21, 21, 19]
    assert rows(s) == [[0], [3], [1], [1], [2], [2], [3]]


def test_a_broker_below_the_band_asks_the_heaviest_first() -> None:
    # Target 20, band [18, 22]: 21 / 23 / 16. Broker 2 is further out (2 under) than 1 (1 over), so it picks
    # its donor: the heaviest, 1, giving min(3, 4) = 3 GiB: 20 / 19, all inside. (Asking 0 first would have
    # taken its 1 GiB replica instead.)
    s = balanced([0, 1, 2], {0: [20, 1], 1: [20, 3], 2: [16]})
    assert loads(s) == [21, 20, 19]
    assert rows(s) == [[0], [0], [1], [2], [2]]


def test_a_broker_above_the_band_is_fixed_even_when_nobody_is_below_it() -> None:
    # Target 100 GiB, band [90, 110]: 118 / 94 / 94 / 94. Broker 0 (8 over) gives the lightest (all -6: by id)
    # min(18, 6) = 6 GiB: 112 / 100; still 2 over, it gives broker 2 min(12, 6) = 6, and the nearest it has
    # left is 12: 100 / 106. Aiming at the receiver's shortfall, not half the gap (12), spreads the bytes.
    s = balanced([0, 1, 2, 3], {0: [100, 12, 6], 1: [94], 2: [94], 3: [94]})
    assert loads(s) == [100, 100, 106, 94]
    assert rows(s) == [[0], [2], [1], [1], [2], [3]]


def test_a_donor_at_its_target_gives_half_the_gap() -> None:
    # Band 20 %: target 100, band [80, 120]. Broker 0 holds one 130 GiB replica (10 over), broker 2 70 (10
    # under), broker 1 exactly 100. Nothing of 0's can move without making things worse (a swap with 2 only
    # mirrors them: 10 + 10 either way), so 0 is stuck, and 2 asks 1. 1 is at its target, so it gives half
    # the gap, (0 - (-30)) / 2 = 15 GiB: the nearest is 14 (17 and 6 are further). 86 / 84, both inside.
    s = balanced([0, 1, 2], {0: [130], 1: [6, 14, 17, 63], 2: [70]}, byte_tolerance=0.2)
    assert loads(s) == [130, 86, 84]
    assert rows(s) == [[0], [1], [2], [1], [1], [2]]


def test_replicas_moved_onto_a_broker_may_move_on_nearest_size_first() -> None:
    # Excluded topics pin 53 GiB on 0 and 75 on 1; a (12), b (27) and c (33) were on 0 and the plan moved
    # them all to 1: 53 / 147 of a 100 target (band [90, 110]). Broker 1 has nothing of its own to give, only
    # what arrived: first the one nearest min(47, 47) = 47, c: 86 / 114; then nearest min(14, 14), a: 98 / 102.
    parts = [part("a", 0, [0], size_bytes=12 * GiB), part("b", 0, [0], size_bytes=27 * GiB),
             part("c", 0, [0], size_bytes=33 * GiB), part("x", 0, [0], size_bytes=53 * GiB),
             part("y", 0, [1], size_bytes=75 * GiB)]
    s = planner_state([0, 1], parts, targets=True, exclude_topics=("x", "y"))
    assert s.byte_target.tolist() == [100 * GiB, 100 * GiB]
    for p in range(3):
        s.move(p, 0, 1)
    ByteBalanceGoal().optimize(s)
    assert loads(s) == [98, 102]
    assert rows(s) == [[0], [1], [0], [0], [1]]


def test_a_heavy_broker_whose_lightest_partners_sit_in_other_racks_trades_within_its_own_rack() -> None:
    # RF 4 over 4 racks: every partition keeps exactly one replica in each rack, so bytes can only move
    # between brokers of one rack. Rack a (brokers 0-3) holds all 1,200 GiB: its forced share is 300 per
    # broker, 1.375x the mean of 4,800 / 22, so its band is that share within half the tolerance, [196.4,
    # 315] (the mean's bottom below it); racks b, c, d (six brokers each) are forced to 200, 0.917x the
    # mean, band [190, 240]. Twelve 90 GiB partitions and 120 of 1 GiB: broker 0 holds three 90s and 66
    # ones (336, 21 over), brokers 1-3 three 90s and 18 ones (288); in racks b-d the first three brokers
    # hold 184 (6 under), the others 216. The nine lightest brokers are all in racks b-d, where rack
    # safety refuses every move: asking only them, broker 0 stayed at 336. Its own rack takes the
    # excess, 1 GiB at a time, to 315, and each of racks b-d evens out within itself to 190 and 210.
    def rack(b: int) -> str:
        return "a" if b < 4 else "b" if b < 10 else "c" if b < 16 else "d"

    parts = [part("g", j, [j // 3, 4 + j // 2, 10 + j // 2, 16 + j // 2], size_bytes=90 * GiB) for j in range(12)]
    for u in range(120):
        a = 0 if u < 66 else 1 + (u - 66) // 18
        b = 4 + u // 4 if u < 12 else 7 + (u - 12) // 36
        parts.append(part("u", u, [a, b, b + 6, b + 12], size_bytes=GiB))
    s = planner_state([(b, rack(b)) for b in range(22)], parts, targets=True)
    assert loads(s)[:4] == [336, 288, 288, 288] and loads(s)[4:10] == [184, 184, 184, 216, 216, 216]
    assert (s.byte_hi[:5] / GiB).tolist() == pytest.approx([315, 315, 315, 315, 240]) and s.byte_lo[4] / GiB == pytest.approx(190)
    s.vetoes = [PlacementGoal(), RackSafetyGoal()]
    ByteBalanceGoal().optimize(s)
    assert loads(s)[:4] == [315, 295, 295, 295]
    assert loads(s)[4:] == [190, 190, 190, 210, 210, 210] * 3
    # only 1 GiB replicas moved, each partition once (one replica, within its rack)
    assert all(s.sizes[p] == GiB and s.new_replicas(p) == 1 for p in s.cur)
    assert sum(1 for p in s.cur if 0 not in s.row(p) and 0 in s.original_row(p)) == 21


def test_partitions_bound_to_their_racks_are_exactly_those_the_vetoes_refuse_across_racks() -> None:
    # Racks a = {0, 1}, b = {2, 3}, c = {4}. RF 3 over 3 racks, one per rack: bound (t-0, w-0). RF 2: it may
    # take the third rack (u-0). RF 3 with two in rack a: not rack-safe, so not bound (the vetoes let a
    # replica leave the crowded rack: v-0).
    s = planner_state([(0, "a"), (1, "a"), (2, "b"), (3, "b"), (4, "c")],
                      [part("t", 0, [0, 2, 4]), part("u", 0, [0, 2]), part("v", 0, [0, 1, 2]), part("w", 0, [1, 3, 4])],
                      targets=True)
    s.vetoes = [PlacementGoal(), RackSafetyGoal()]
    bound = ByteBalanceGoal._rack_bound(s)
    assert bound.tolist() == [True, False, False, True]
    goal = ByteBalanceGoal()
    goal._in_rack = bound
    # Wherever the shortcut skips a candidate, the vetoes refuse it.
    skipped = 0
    for p in range(s.n_parts):
        for src in s.row(p):
            for dst in range(5):
                skip = goal._bound_for(s, src, dst)
                if skip is not None and skip[p]:
                    skipped += 1
                    assert not s.accepts(p, src, dst), (p, src, dst)
    # t-0 and w-0 each: a replica in rack a or b to the 3 brokers outside its rack, the one in rack c to 4
    assert skipped == 2 * (3 + 3 + 4)
    # within its rack the shortcut leaves t-0 to the vetoes, which let it move (0 -> 1)
    assert goal._bound_for(s, 0, 1) is None and s.accepts(0, 0, 1)
    # u-0 (RF 2) is not bound: its replica on broker 0 may go to rack c
    assert s.accepts(1, 0, 4)


def test_band_excess_is_each_eligible_brokers_distance_beyond_its_band_and_zero_inside_it() -> None:
    # Broker 2 is decommissioned: it has no band. Bands set by hand, 9..11 and 18..22 GiB (10 and 20 GiB
    # within 10 %). 12.5 GiB is 1.5 beyond 11; 19 GiB is inside 18..22: 0, not -1.
    s = planner_state([0, 1, 2], [part("t", 0, [2], size_bytes=GiB)], decommission_brokers=(2,), byte_tolerance=0.1)
    s.byte_lo[:] = [9 * GiB, 18 * GiB, 0]
    s.byte_hi[:] = [11 * GiB, 22 * GiB, 0]
    load = np.asarray([12.5, 19.0, 99.0]) * GiB
    assert (ByteBalanceGoal().band_excess(s, load) / GiB).tolist() == [1.5, 0.0]
    # below the band counts as well: 7 GiB is 3 under 10, 2 beyond the band; 25 GiB is 3 beyond 22
    assert (ByteBalanceGoal().band_excess(s, np.asarray([7.0, 25.0, 0.0]) * GiB) / GiB).tolist() == [2.0, 3.0]


def test_the_sizes_that_help_are_read_off_the_band_edges() -> None:
    # Bands [6, 10] on both brokers; 14 against 2: 4 + 4 outside. Moving s from 0 to 1 lowers that from s = 0 on,
    # is 0 for s in [4, 8], and climbs back to 8 at s = 12 (2 against 14): the open interval (0, 12).
    goal = ByteBalanceGoal()
    goal.upper, goal.lower = np.asarray([10.0, 10.0]), np.asarray([6.0, 6.0])
    assert goal._reach(0, 1, 14.0, 2.0) == pytest.approx((0.0, 12.0), abs=1e-6)
    # Only 0 outside (2 above), 1 with 1 of room: s in (0, 3) helps (at 3, 11 / 11: 1 + 1 = 2 again).
    assert goal._reach(0, 1, 12.0, 9.0) == pytest.approx((0.0, 3.0), abs=1e-6)
    # Both inside: no move lowers a sum that is already 0.
    assert goal._reach(0, 1, 8.0, 8.0) is None
    # 0 above by 2, 1 below by 5 (7 in all): 7 - 2s up to s = 2, 5 - s to 0 at s = 5, 0 to 6, then s - 6 while 1 is
    # in its band (to 9), then 2s - 15 past both edges: back to 7 at s = 11, beyond the last kink.
    assert goal._reach(0, 1, 12.0, 1.0) == pytest.approx((0.0, 11.0), abs=1e-6)


def test_the_byte_guard_lets_no_broker_end_further_outside_its_band_within_half_a_byte() -> None:
    from kafka_rebalance.planner.goals.byte_balance import ByteGuard

    # 12 bytes against 4, bands [5, 10]: 2 above and 1 below.
    s = planner_state([0, 1], [part("t", 0, [0], size_bytes=12), part("t", 1, [1], size_bytes=4)])
    s.byte_lo[:], s.byte_hi[:] = [5, 5], [10, 10]
    s.vetoes = [ByteBalanceGoal()]
    guard = ByteGuard(s)
    assert guard.allows(s, {0: -1.0, 1: 1.0})  # 11 / 5: 1 above, inside
    assert not guard.allows(s, {0: -9.0, 1: 9.0})  # 3 / 13: 2 below (as far as before), 3 above (was 1 below)
    assert guard.allows(s, {1: -0.5}) and not guard.allows(s, {1: -0.75})  # half a byte further out, not more
    assert not guard.allows(s, {0: 0.75}) and guard.allows(s, {0: -2.0, 1: 0.0})
    s.vetoes = []  # the bytes goal is not (or not yet) one of the vetoes: nothing to keep
    assert ByteGuard(s).allows(s, {0: 99.0, 1: -99.0})


def test_the_arrival_index_walks_out_from_the_wanted_size_and_drops_replicas_that_moved_on() -> None:
    from kafka_rebalance.planner.goals.byte_balance import ArrivalIndex

    # t-0..t-3 of 5, 3, 9 and 5 bytes arrive on broker 0: sorted (3, t-1), (5, t-0), (5, t-3), (9, t-2).
    s = planner_state([0, 1], [part("t", i, [1], size_bytes=b) for i, b in enumerate([5, 3, 9, 5])])
    for p in range(4):
        s.move(p, 1, 0)
    idx = ArrivalIndex(s, 0)
    asked: list[int] = []

    def record(p: int) -> bool:
        asked.append(p)
        return False

    # From 5.2 the 5s first, the later of two equal sizes first (walking down), then 3 (2.2 away) before 9 (3.8).
    assert idx.find(5.2, record) is None and asked == [3, 0, 1, 2]
    asked.clear()
    assert idx.find(5.2, record, limit=2) is None and asked == [3, 0]
    assert idx.find(5.2, lambda p: p != 3) == 0
    assert idx.find(5.2, lambda p: True, window=(5.0, 10.0)) == 2  # sizes strictly inside the window only
    s.move(3, 0, 1)  # t-3 moves on: passed over, and dropped
    asked.clear()
    assert idx.find(5.2, record) is None and asked == [0, 1, 2]
    assert idx.parts == [1, 0, 2] and idx.sizes == [3, 5, 9]
    s.move(3, 1, 0)  # and back: listed again
    assert idx.find(5.2, lambda p: True) == 3 and idx.parts == [1, 0, 3, 2]


def test_the_check_is_the_largest_deviation_and_names_brokers_beyond_the_band_and_its_slack() -> None:
    from kafka_rebalance.planner.goals.view import BalanceView, BrokerView

    def broker(bid: int, size: float, band: tuple[float, float, float] | None = None) -> BrokerView:
        lo, hi, mean = band or (None, None, None)
        return BrokerView(bid, 1, 0, 9, size, 100.0, 0.1, 0, 0, 0, 1, None, lo, hi, mean)

    # Target 100 within 10 %: 115 is 0.05 beyond 110 (0.15 off), 110.0000005 on the edge (rounding: inside), 85
    # 0.05 below 90; broker 4's own band [50, 70] about 55: 72 is 2 / 55 beyond it.
    brokers = (broker(1, 115.0), broker(2, 110.0000005), broker(3, 85.0), broker(4, 72.0, (50.0, 70.0, 55.0)))
    check = ByteBalanceGoal().check(BalanceView(brokers, (), 0.1, 10.0, (0, 9)))
    assert (check.value, check.reached, check.offenders) == (pytest.approx(0.15), False, (1, 3, 4))
    assert check.per_broker == pytest.approx({1: 0.15, 2: 0.1, 3: 0.15, 4: 2 / 55 + 0.1})
    # The exact model's widening (3 bytes) lets broker 4 lie 2 beyond; 115 and 85 are 5 out.
    check = ByteBalanceGoal().check(BalanceView(brokers, (), 0.1, 10.0, (0, 9), byte_slack=3.0))
    assert check.offenders == (1, 3)
    check = ByteBalanceGoal().check(BalanceView(brokers[1:2], (), 0.1, 10.0, (0, 9)))
    assert check.reached and check.offenders == ()
    assert ByteBalanceGoal().check(BalanceView((), (), 0.1, 10.0, (0, 9))).value == 0.0
    assert ByteBalanceGoal.gate_allowance(np.asarray([0.05, 0.3]), 0.1).tolist() == [0.1, 0.3]


def test_partners_are_the_lowest_in_key_and_as_many_of_the_brokers_own_rack_held_then_own_rack_first() -> None:
    # Twelve brokers, even ones in rack a, odd in b; the key falls with the broker id, so 11 is lowest.
    racked = planner_state([(b, "ab"[b % 2]) for b in range(12)], [part("t", 0, [0])])
    elig = np.arange(12)
    key = np.arange(12, 0, -1).astype(float)
    none = np.zeros(12, dtype=bool)
    # The 8 lowest (11 down to 4) and broker 0's own rack (10, 8, 6, 4 and 2: all 5 of them): the own rack
    # first, then the others, each in key order.
    assert ByteBalanceGoal._partners(racked, elig, key, 0, False, none) == [10, 8, 6, 4, 2, 11, 9, 7, 5]
    assert ByteBalanceGoal._partners(racked, elig, key, 0, True, none) == [10, 8, 6, 4, 2]
    # A broker held above its band comes first (7, of the other rack), then the same order.
    held = none.copy()
    held[7] = True
    assert ByteBalanceGoal._partners(racked, elig, key, 0, False, held) == [7, 10, 8, 6, 4, 2, 11, 9, 5]
    plain = planner_state(list(range(12)), [part("t", 0, [0])])
    assert ByteBalanceGoal._partners(plain, elig, key, 0, False, none) == [11, 10, 9, 8, 7, 6, 5, 4]
    assert ByteBalanceGoal._partners(plain, elig, np.zeros(12), 3, False, none) == [0, 1, 2, 4, 5, 6, 7, 8]  # ties by id


def test_the_byte_guard_counts_a_broker_inside_its_band_as_0_off_whatever_its_margin() -> None:
    from kafka_rebalance.planner.goals.byte_balance import ByteGuard

    # Broker 1 holds 4 bytes inside its band [0, 10]: to 8 it stays inside; to 10.75 it ends 0.75 above, from 0.
    s = planner_state([0, 1], [part("t", 0, [0], size_bytes=12), part("t", 1, [1], size_bytes=4)])
    s.byte_lo[:], s.byte_hi[:] = [5, 0], [10, 10]
    s.vetoes = [ByteBalanceGoal()]
    guard = ByteGuard(s)
    assert guard.allows(s, {1: 4.0})
    assert not guard.allows(s, {1: 6.75})


def test_the_arrival_index_drops_every_replica_that_moved_on_in_one_search() -> None:
    from kafka_rebalance.planner.goals.byte_balance import ArrivalIndex

    # As above: (3, t-1), (5, t-0), (5, t-3), (9, t-2) arrive on broker 0; then t-1 and t-2 leave it.
    s = planner_state([0, 1], [part("t", i, [1], size_bytes=b) for i, b in enumerate([5, 3, 9, 5])])
    for p in range(4):
        s.move(p, 1, 0)
    idx = ArrivalIndex(s, 0)
    idx._feed()
    s.move(1, 0, 1)
    s.move(2, 0, 1)
    assert idx.find(5.2, lambda p: False) is None
    assert idx.parts == [0, 3] and idx.sizes == [5, 5]


def test_a_receiver_asks_a_giver_at_its_target_for_half_the_gap_not_more() -> None:
    # test_a_donor_at_its_target_gives_half_the_gap's cluster, one step of broker 2's alone (the byte trim after
    # the goal's own search would make a larger first choice as small): 15 GiB wanted, 14 the nearest.
    parts = [part("t", i, [b], size_bytes=g * GiB) for i, (b, g) in enumerate([(0, 130), (1, 6), (1, 14), (1, 17), (1, 63), (2, 70)])]
    s = planner_state([0, 1, 2], parts, targets=True, byte_tolerance=0.2)
    goal = ByteBalanceGoal()
    goal.upper, goal.lower = s.byte_hi, s.byte_lo
    goal._in_rack = goal._rack_bound(s)
    assert goal._improve(s, 2, [1], heavy=False)
    assert loads(s) == [130, 86, 84] and s.row(2) == [2]


@pytest.mark.parametrize("unit", [1.0, 1e6])
def test_the_sizes_that_help_end_where_the_line_past_the_last_kink_climbs_back(unit: float) -> None:
    # Broker 0's band [6, 10] holding 13 (3 above), broker 1's [2, 4] holding 0 (2 below): 5 outside. Kinks at
    # s = 2 (1 reaches 2), 3 (0 reaches 10), 4 (1 reaches 4), 7 (0 reaches 6): 1, 0, 0 and 3 outside there; past 7,
    # 2s - 11, back to 5 at s = 8. In bytes or in millions of them, the sizes that help are (0, 8).
    goal = ByteBalanceGoal()
    goal.upper, goal.lower = np.asarray([10.0, 4.0]) * unit, np.asarray([6.0, 2.0]) * unit
    reach = goal._reach(0, 1, 13.0 * unit, 0.0)
    assert reach is not None
    lo, hi = reach
    assert (lo, hi) == (pytest.approx(0.0, abs=1e-3), pytest.approx(8.0 * unit, abs=1e-3))


def test_a_band_is_short_only_beyond_its_slack() -> None:
    from kafka_rebalance.planner.byte_misses import SLACK

    s = planner_state([0, 1], [part("t", 0, [0], size_bytes=20), part("t", 1, [1], size_bytes=10)])
    elig = np.asarray([0, 1])

    def short(upper: list[float], lower: list[float]) -> bool:
        return ByteBalanceGoal._short(s, elig, np.asarray(upper), np.asarray(lower))

    assert not short([20 - SLACK, 100], [0, 10 + SLACK])  # each at its edge's slack: inside
    assert not short([20, 100], [0, 10])  # at the edges
    assert short([20 - SLACK - 0.25, 100], [0, 0]) and short([100, 100], [0, 10 + SLACK + 0.25])


def test_the_solver_holds_each_broker_to_its_band_less_its_excluded_bytes() -> None:
    from kafka_rebalance.planner import exact

    # x-0 (4 GiB, excluded) and t-0..t-2 (3 GiB each) on broker 0, t-3 (3) and t-4 (4) on broker 1, broker 2 new:
    # 20 GiB, targets 20 / 3 each, band [6, 7.33]. Broker 0 keeps one 3 (7); broker 2 takes two 3s (6), the fewest
    # bytes that bring it in; broker 1 keeps 7.
    parts = [part("t", i, [b], size_bytes=g * GiB) for i, (b, g) in enumerate([(0, 3), (0, 3), (0, 3), (1, 3), (1, 4)])]
    state = planner_state([0, 1, 2], parts + [part("x", 0, [0], size_bytes=4 * GiB)], targets=True, exclude_topics=("x",))
    found = exact._solve(state, widen=0.0)
    assert found.status in (exact.ExactStatus.OPTIMAL, exact.ExactStatus.FEASIBLE)
    assert found.bytes_moved == 6 * GiB and len(found.rows) == 2 and set(found.rows) <= {0, 1, 2}  # two of the equal 3s
    assert all(r == [2] for r in found.rows.values())


def test_the_solver_widens_an_unreachable_band_by_the_least_sum_then_moves_the_fewest_bytes() -> None:
    from kafka_rebalance.planner import exact

    # test_exact.py's widened_state: t-0..t-3 of 100, 1, 2, 3 GiB on broker 0, broker 1 new; 53 GiB +- 5.3 each.
    # No split meets both bands: {100, 1} against {2, 3} lies 2 x 42.7 GiB beyond them, the least; it moves 5 GiB.
    state = planner_state([0, 1], [part("t", i, [0], size_bytes=g * GiB) for i, g in enumerate([100, 1, 2, 3])], targets=True)
    assert exact._solve(state, widen=0.0).status is exact.ExactStatus.INFEASIBLE
    assert exact._solve(state, widen=None).widening == pytest.approx(2 * 42.7 * GiB, rel=1e-6)
    solved = exact.solve(state)
    assert (solved.rows, solved.bytes_moved) == ({2: [1], 3: [1]}, 5 * GiB)


def test_where_every_movable_partition_keeps_its_racks_bytes_move_within_a_rack_only() -> None:
    # Racks a = {0, 1}, b = {2, 3}; every movable partition has RF 2 over 2 racks, so the goal trades within a rack
    # only (rack safety, a hard goal, made each row one per rack before it runs; here x-0 and x-1 sit in rack a
    # twice, which only the byte goal's own rack shortcut keeps where it is). 8 / 8 / 1 / 1, band [4.05, 4.95]:
    # 0's only partner is 1, as heavy; 2's only partner is 3, as light. Nothing moves. The excluded z-0 (RF 1,
    # 0 bytes) does not count: only movable partitions decide.
    s = planner_state([(0, "a"), (1, "a"), (2, "b"), (3, "b")],
                      [part("x", 0, [0, 1], size_bytes=4 * GiB), part("x", 1, [0, 1], size_bytes=4 * GiB),
                       part("y", 0, [2, 3], size_bytes=GiB), part("z", 0, [2], size_bytes=0)],
                      targets=True, exclude_topics=("z",))
    ByteBalanceGoal().optimize(s)
    assert loads(s) == [8, 8, 1, 1] and s.cur == {}


def test_where_replicas_may_change_racks_the_lightest_broker_of_another_rack_is_a_partner() -> None:
    # Racks a = {0, 1}, b = {2}; RF 1, so a replica may change racks. 6 / 3 / 0, target 3: broker 0 (3 over, as
    # far out as 2) goes first and gives the lightest broker, 2 in rack b, min(3, 3) = 3 GiB: 3 / 3 / 3.
    s = planner_state([(0, "a"), (1, "a"), (2, "b")],
                      [part("t", 0, [0], size_bytes=3 * GiB), part("t", 1, [0], size_bytes=3 * GiB),
                       part("t", 2, [1], size_bytes=3 * GiB)], targets=True)
    ByteBalanceGoal().optimize(s)
    assert loads(s) == [3, 3, 3] and s.cur == {0: [2]}


def test_a_cluster_of_over_a_thousand_replicas_is_balanced() -> None:
    # The goal's step budget grows with the replicas (20 per broker + 1,000 + one per replica). 1,040 empty
    # replicas and two of 2 GiB, both on broker 0: one 2 GiB replica moves, 2 / 2.
    s = planner_state([0, 1], [part("t", i, [0], size_bytes=2 * GiB) for i in range(2)]
                      + [part("u", i, [i % 2], size_bytes=0) for i in range(1040)], targets=True)
    ByteBalanceGoal().optimize(s)
    assert loads(s) == [2, 2] and len(s.cur) == 1


def test_each_broker_of_a_costly_swap_spends_one_of_its_own_costly_swaps() -> None:
    # In bytes, counts locked at 3..3, tolerance 0: 9 (3 + 3 + 3) / 6 / 6 (2 + 2 + 2 each), target 7. A swap of 3
    # for 2 copies 5 bytes to shed 1: costly, 3 being exactly the most a costly p may hold for q = 2 (2 x 2 - 1).
    # Broker 0 swaps with 1 (8 / 7 / 6), then would with 2: with a budget of 1, 0 has none left, and nothing else
    # helps (1 at its target giving 2 a byte only moves the miss); with 2, it makes it: 7 / 7 / 7.
    assert loads_of(costly_bytes({0: [3, 3, 3], 1: [2, 2, 2], 2: [2, 2, 2]}, budget=1)) == [8, 7, 6]
    assert loads_of(costly_bytes({0: [3, 3, 3], 1: [2, 2, 2], 2: [2, 2, 2]}, budget=2)) == [7, 7, 7]
    # The other way round, 9 / 9 / 6 (target 8): broker 2 takes a 3 from 0 for a 2 (8 / 9 / 7); 1 would then swap
    # with 2, whose one costly swap is spent: 8 / 9 / 7.
    assert loads_of(costly_bytes({0: [3, 3, 3], 1: [3, 3, 3], 2: [2, 2, 2]}, budget=1)) == [8, 9, 7]


def test_a_budget_of_two_costly_swaps_is_two_swaps_one_of_three_three() -> None:
    # In bytes, counts locked at 6..6, tolerance 0: six 3s against six 2s, target 15. Each swap (costly) sheds 1:
    # with two costly swaps, 16 / 14; with three, one after the other between the same two brokers, 15 / 15.
    s = costly_bytes({0: [3] * 6, 1: [2] * 6}, budget=2)
    assert loads_of(s) == [16, 14] and s.counts.tolist() == [6, 6]
    assert loads_of(costly_bytes({0: [3] * 6, 1: [2] * 6}, budget=3)) == [15, 15]


def test_a_swap_copying_between_three_and_four_bytes_per_byte_shed_is_costly() -> None:
    # 5 + 5 against 3 + 3 (target 8, band [7.2, 8.8]): 5 for 3 reaches 8 / 8 but copies 8 GiB to shed 2, 4 per
    # byte: with no costly swap left, nothing moves.
    s = costly({0: [5, 5], 1: [3, 3]}, budget=0)
    assert loads(s) == [10, 6] and s.moved_replicas() == 0


def test_a_swap_takes_the_receivers_untouched_small_replica_before_an_arrival() -> None:
    # Counts locked at 2..2. t-0 (1 GiB) already moved from 0 to 1: 4 + 4 against 2 + 1, target 5.5, band
    # [4.95, 6.05]. Broker 1's smallest untouched replica, t-3 (2), is tried first (the arrival t-0 is smaller but
    # comes second): a 4 for it, min(2.5, 2.5) + 2 = 4.5 wanted, the later of the two equal 4s: 6 / 5.
    parts = [part("t", i, [b], size_bytes=g * GiB) for i, (b, g) in enumerate([(0, 1), (0, 4), (0, 4), (1, 2)])]
    s = planner_state([0, 1], parts, targets=True)
    s.move(0, 0, 1)
    s.vetoes = [ReplicaCountGoal()]
    ByteBalanceGoal().optimize(s)
    assert loads(s) == [6, 5] and s.cur == {0: [1], 2: [1], 3: [0]}


def test_the_sizes_that_help_bend_where_the_receiver_enters_its_band() -> None:
    # Bands [6, 10] on both brokers; 7 (inside) against 2 (4 below): 4 outside. Moving s from 0 to 1: 4 - s until 0
    # leaves its band at s = 1, then flat at 3 (0 loses below what 1 gains) until 1 enters its band at s = 4, then
    # s - 1, back to 4 at s = 5: (0, 5). Read off 1 and 8 alone (no bend at 4) the climb would start at 1: (0, 2.75).
    goal = ByteBalanceGoal()
    goal.upper, goal.lower = np.asarray([10.0, 10.0]), np.asarray([6.0, 6.0])
    assert goal._reach(0, 1, 7.0, 2.0) == pytest.approx((0.0, 5.0), abs=1e-6)
    # In bytes, a bend within the first byte counts as well: 11 against 4, bands [0, 10] and [5, 5]: 2 outside. f falls
    # to 0 at s = 1 (both edges at once), then climbs as s - 1 (0 inside, 1 above its band): back to 2 at s = 3.
    goal.upper, goal.lower = np.asarray([10.0, 5.0]), np.asarray([0.0, 5.0])
    assert goal._reach(0, 1, 11.0, 4.0) == pytest.approx((0.0, 3.0), abs=1e-6)


def test_a_partner_whose_sizes_cannot_help_is_passed_over_for_the_next() -> None:
    # Bands set by hand (targets 20 GiB each): 0 holds 22 + 4 = 26 in [18, 22], 4 over; 1 holds 18 in [17, 18], no
    # room; 2 holds 19 in [18, 22]. 1 comes first (lightest against its target), but whatever 0 gives it lands above
    # its band: no size helps. 2 does: min(6, 1) = 1 wanted, the 4 GiB replica the nearest, 22 / 23 (1 outside).
    parts = [part("t", i, [b], size_bytes=g * GiB) for i, (b, g) in enumerate([(0, 22), (0, 4), (1, 18), (2, 19)])]
    s = planner_state([0, 1, 2], parts)
    s.byte_target = np.full(3, 20.0 * GiB)
    goal = ByteBalanceGoal()
    goal.upper, goal.lower = np.asarray([22.0, 18.0, 22.0]) * GiB, np.asarray([18.0, 17.0, 18.0]) * GiB
    goal._in_rack = goal._rack_bound(s)
    assert goal._improve(s, 0, [1, 2], heavy=True)
    assert loads(s) == [22, 18, 23] and s.cur == {1: [2]}


def test_a_move_must_bring_the_pair_closer_to_their_bands_a_mirror_is_not_enough() -> None:
    # In bytes (where the goal's 1e-9 margin is not lost to rounding): excluded x-0 (4) on 0 and y-0 (4) on 1; t-0
    # (8) on 0: 12 / 4, target 8, band [6, 10], 2 + 2 outside. Moving t-0 gives 4 / 12, 2 + 2 again: not an
    # improvement, so a step of broker 0 against these bands makes none.
    parts = [part("t", 0, [0], size_bytes=8), part("x", 0, [0], size_bytes=4), part("y", 0, [1], size_bytes=4)]
    s = planner_state([0, 1], parts, targets=True, byte_tolerance=0.25, exclude_topics=("x", "y"))
    goal = ByteBalanceGoal()
    goal.upper, goal.lower = s.byte_hi, s.byte_lo
    goal._in_rack = goal._rack_bound(s)
    assert not goal._improve(s, 0, [1], heavy=True)
    assert s.bytes.tolist() == [12, 4] and s.cur == {}
    # One byte better is better: 10 + 1 against 7, targets 8 and bands [6, 10] set by hand, 1 outside. The 1 byte
    # replica, min(3, 1) = 1 wanted, leaves both inside: 10 / 8.
    s = planner_state([0, 1], [part("t", i, [b], size_bytes=g) for i, (b, g) in enumerate([(0, 10), (0, 1), (1, 7)])])
    s.byte_target = np.full(2, 8.0)
    goal = ByteBalanceGoal()
    goal.upper, goal.lower = np.full(2, 10.0), np.full(2, 6.0)
    goal._in_rack = goal._rack_bound(s)
    assert goal._improve(s, 0, [1], heavy=True)
    assert s.bytes.tolist() == [10, 8] and s.cur == {1: [1]}


def test_the_check_allows_rounding_below_the_band_and_the_slack_on_both_sides() -> None:
    from kafka_rebalance.planner.goals.view import BalanceView, BrokerView

    def broker(bid: int, size: float) -> BrokerView:
        return BrokerView(bid, 1, 0, 9, size, 100.0, 0.1, 0, 0, 0, 1, None, None, None, None)

    # Band [90, 110]: 89.9999995 is on the bottom edge (rounding: inside), 89.5 half a byte below it, 110.5 half a
    # byte above the top: both out. A slack of 3 bytes takes both in.
    brokers = (broker(5, 89.9999995), broker(6, 89.5), broker(7, 110.5))
    assert ByteBalanceGoal().check(BalanceView(brokers, (), 0.1, 10.0, (0, 9))).offenders == (6, 7)
    assert ByteBalanceGoal().check(BalanceView(brokers, (), 0.1, 10.0, (0, 9), byte_slack=3.0)).offenders == ()


def in_bytes(layout: dict[int, list[int]], counts_veto: bool = False, **options: Any) -> ClusterState:
    """``balanced`` in bytes (sizes as given): broker -> its single-replica partitions, numbered in that order."""
    parts = [part("t", i, [b], size_bytes=g) for i, (b, g) in enumerate((b, g) for b, sizes in layout.items() for g in sizes)]
    s = planner_state(sorted(layout), parts, targets=True, **options)
    if counts_veto:
        s.vetoes = [ReplicaCountGoal()]
    ByteBalanceGoal().optimize(s)
    return s


def test_a_broker_one_byte_outside_its_band_is_still_brought_in() -> None:
    # In bytes, target 10, band [5, 15]: 16 / 7 / 7, only broker 0 out (1 above). It gives the lightest (1: the
    # first of two equal) the replica nearest min(6, 3) = 3: the 1 byte one (2 away, 15 is 12), 15 / 8 / 7.
    s = in_bytes({0: [15, 1], 1: [7], 2: [7]}, byte_tolerance=0.5)
    assert s.bytes.tolist() == [15, 8, 7] and s.cur == {1: [1]}
    # The mirror: 4 / 13 / 13, only broker 0 out (1 below). It asks the heaviest (1, by id) for min(3, 6) = 3:
    # the 1 byte replica again, 5 / 12 / 13.
    s = in_bytes({0: [4], 1: [12, 1], 2: [13]}, byte_tolerance=0.5)
    assert s.bytes.tolist() == [5, 12, 13] and s.cur == {2: [0]}


def test_a_swap_takes_the_receivers_smallest_replica_an_empty_one_before_one_of_a_byte() -> None:
    # In bytes, counts locked at 2..2, tolerance 0: 5 + 4 against 0 + 1, target 5. No single move keeps the counts;
    # the receiver gives its smallest, the empty t-2, and takes the one nearest 4 + 0: t-1. 5 / 5.
    s = in_bytes({0: [5, 4], 1: [0, 1]}, counts_veto=True, byte_tolerance=0.0)
    assert s.bytes.tolist() == [5, 5] and s.cur == {1: [1], 2: [0]}


def test_the_count_veto_asked_for_the_brokers_alone_lets_a_donor_above_its_floor_give() -> None:
    # 8 GiB in three replicas (6 + 1 + 1) against 2 in two, target 5, band [4.5, 5.5]; counts 3 / 2 against 2..3.
    # Broker 0 may give one replica: the one nearest min(3, 3) = 3, a 1 GiB one (6 is 3 away, 1 is 2; going down, t-2
    # before t-1), 7 / 3. Then 0 is at its floor and swaps find nothing that helps: 1 for 1 changes nothing, 6 for 1
    # overshoots (2 / 8).
    s = balanced([0, 1], {0: [6, 1, 1], 1: [1, 1]}, counts_veto=True)
    assert loads(s) == [7, 3] and s.counts.tolist() == [2, 3] and s.cur == {2: [1]}


def test_a_mirror_in_gib_is_no_improvement_either() -> None:
    # test_a_move_must_bring_the_pair_closer_to_their_bands_a_mirror_is_not_enough at GiB scale, where 1e-9 is below
    # the rounding of the distances (so the strict < alone refuses the mirror): 12 / 4 GiB, band [6, 10]; moving
    # t-0 (8 GiB) gives 4 / 12, as far outside.
    parts = [part("t", 0, [0], size_bytes=8 * GiB), part("x", 0, [0], size_bytes=4 * GiB), part("y", 0, [1], size_bytes=4 * GiB)]
    s = planner_state([0, 1], parts, targets=True, byte_tolerance=0.25, exclude_topics=("x", "y"))
    goal = ByteBalanceGoal()
    goal.upper, goal.lower = s.byte_hi, s.byte_lo
    goal._in_rack = goal._rack_bound(s)
    assert not goal._improve(s, 0, [1], heavy=True)
    assert loads(s) == [12, 4] and s.cur == {}


def test_under_the_move_cap_a_band_left_short_lifts_the_cap_by_one_step() -> None:
    # Three 3 GiB replicas over two brokers, target 4.5, band [4.05, 4.95]: no split reaches it (3 or 6), and no
    # proof says so (each 3 fits a band). An earlier goal moved t-2 to broker 1 (6 / 3), then the cap: t-2 may gain
    # no other new replica. 6 / 3 is as near as whole replicas get (moving a 3 mirrors it), so the band stays
    # short and the goal lifts the cap one step for the partitions moved before it (t-2: 2); the others keep 1.
    s = planner_state([0, 1], [part("t", i, [0], size_bytes=3 * GiB) for i in range(3)], targets=True)
    s.move(2, 0, 1)
    s.cap_moves()
    assert s.move_cap is not None and s.move_cap.tolist() == [1, 1, 1]
    ByteBalanceGoal().optimize(s)
    assert loads(s) == [6, 3] and s.move_cap.tolist() == [1, 1, 2]


def test_under_the_move_cap_a_band_proven_out_of_reach_keeps_the_cap() -> None:
    # t-0 (9 GiB) on broker 0, t-1..t-3 (3 GiB each) on broker 1, broker 2 empty: target 6, band [5.4, 6.6]. t-0 is too
    # big for any broker's band, a proof: broker 0 is held where it stands. An earlier goal moved t-3 to broker 2
    # (9 / 6 / 3), then the cap. Broker 2 stays short (9 overshoots, another 3 from 1 mirrors 1 and 2), but where a
    # band is out of reach no second copy buys every band: the cap stays.
    s = planner_state([0, 1, 2], [part("t", 0, [0], size_bytes=9 * GiB)] + [part("t", i, [1], size_bytes=3 * GiB) for i in (1, 2, 3)],
                      targets=True)
    s.move(3, 1, 2)
    s.cap_moves()
    ByteBalanceGoal().optimize(s)
    assert loads(s) == [9, 6, 3] and s.cur == {3: [2]}
    assert s.move_cap is not None and s.move_cap.tolist() == [1, 1, 1, 1]
