"""The byte goal (planner/goals/byte_balance.py) on its own, on clusters small enough to follow by hand.

Targets come from planner/targets.py; the count goal is a veto only where a test adds it (as the
planner does after optimising counts). Brokers 0..n-1 are their own indexes; loads are in GiB.
"""

from __future__ import annotations

from collections.abc import Callable
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


def partners_of(state: ClusterState, elig: np.ndarray, key: np.ndarray, me: int, pinned: bool,
                held: np.ndarray) -> list[int]:  # fmt: skip
    from kafka_rebalance.planner.goals.byte_balance import PARTNERS
    from kafka_rebalance.planner.goals.byte_focus import partners

    out = np.empty(2 * PARTNERS, dtype=np.int64)
    n = partners(elig.astype(np.int64), key.astype(np.float64), me, np.asarray(state.rack, dtype=np.int64),
                 bool(state.has_racks), pinned, held, PARTNERS, out)  # fmt: skip
    return out[:n].tolist()


def test_partners_are_the_lowest_in_key_and_as_many_of_the_brokers_own_rack_held_then_own_rack_first() -> None:
    # Twelve brokers, even ones in rack a, odd in b; the key falls with the broker id, so 11 is lowest.
    racked = planner_state([(b, "ab"[b % 2]) for b in range(12)], [part("t", 0, [0])])
    elig = np.arange(12)
    key = np.arange(12, 0, -1).astype(float)
    none = np.zeros(12, dtype=bool)
    # The 8 lowest (11 down to 4) and broker 0's own rack (10, 8, 6, 4 and 2: all 5 of them): the own rack
    # first, then the others, each in key order.
    assert partners_of(racked, elig, key, 0, False, none) == [10, 8, 6, 4, 2, 11, 9, 7, 5]
    assert partners_of(racked, elig, key, 0, True, none) == [10, 8, 6, 4, 2]
    # A broker held above its band comes first (7, of the other rack), then the same order.
    held = none.copy()
    held[7] = True
    assert partners_of(racked, elig, key, 0, False, held) == [7, 10, 8, 6, 4, 2, 11, 9, 5]
    plain = planner_state(list(range(12)), [part("t", 0, [0])])
    assert partners_of(plain, elig, key, 0, False, none) == [11, 10, 9, 8, 7, 6, 5, 4]
    assert partners_of(plain, elig, np.zeros(12), 3, False, none) == [0, 1, 2, 4, 5, 6, 7, 8]  # ties by id


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


def test_the_check_counts_bytes_exactly_at_its_rounding_margin_as_inside() -> None:
    from kafka_rebalance.planner.goals.view import BalanceView, BrokerView

    def broker(bid: int, size: float) -> BrokerView:
        return BrokerView(bid, 1, 0, 9, size, 100.0, 0.1, 0, 0, 0, 1, None, 50.0, 70.0, 55.0)

    # Band [50, 70], no slack: the check lets bytes lie up to 1e-6 past either edge. 70 + 1e-6 and 50 - 1e-6 lie exactly
    # there (the same float sums the margin is): inside; 70 + 2e-6 and 50 - 2e-6 are beyond it.
    at = (broker(1, 70.0 + 1e-6), broker(2, 50.0 - 1e-6))
    assert ByteBalanceGoal().check(BalanceView(at, (), 0.1, 10.0, (0, 9))).offenders == ()
    beyond = (broker(1, 70.0 + 2e-6), broker(2, 50.0 - 2e-6))
    assert ByteBalanceGoal().check(BalanceView(beyond, (), 0.1, 10.0, (0, 9))).offenders == (1, 2)


def test_a_partner_no_further_above_its_target_than_the_giver_is_passed_over_however_wide_its_band() -> None:
    # In bytes, every target 20 (set by hand). Broker 1 holds 20 + 4 = 24, 2 above its band [18, 22]. Broker 0 holds 24
    # too, inside its wide band [18, 30]: taking 4 would leave both inside, but it is as far above its target (4) as
    # the giver, so it is no receiver. Broker 2 (12, 6 below [18, 22]) is: min(4, 8) = 4 wanted, the 4 byte replica.
    parts = [part("t", i, [b], size_bytes=g) for i, (b, g) in enumerate([(0, 24), (1, 20), (1, 4), (2, 12)])]
    s = planner_state([0, 1, 2], parts)
    s.byte_target = np.full(3, 20.0)
    goal = ByteBalanceGoal()
    goal.upper, goal.lower = np.asarray([30.0, 22.0, 22.0]), np.full(3, 18.0)
    goal._in_rack = goal._rack_bound(s)
    assert goal._improve(s, 1, [0, 2], heavy=True)
    assert s.bytes.tolist() == [24, 20, 16] and s.cur == {2: [2]}



def searching(brokers: list[int], layout: list[tuple[int, list[int]]], costly_swaps: int = 64) -> tuple[ClusterState, ByteBalanceGoal]:
    """A state of partitions t-0, t-1, ... (``layout``: (size in bytes, row) each) with the placement veto, and a goal
    ready for its searches to be called directly (as ``optimize`` leaves it)."""
    s = planner_state(brokers, [part("t", i, row, size_bytes=g) for i, (g, row) in enumerate(layout)])
    s.vetoes = [PlacementGoal()]
    goal = ByteBalanceGoal(costly_swaps=costly_swaps)
    goal._in_rack = goal._rack_bound(s)
    goal._costly = np.zeros(s.n_brokers, dtype=np.int64)
    return s, goal


def helps_below(limit: float) -> Callable[[float], bool]:
    """The judge ``_improve`` hands its searches: whether moving a net ``d`` bytes from giver to receiver helps
    (here: sizes strictly between 0 and ``limit``)."""
    return lambda d: 0 < d < limit


def test_a_swap_tries_the_receivers_smaller_touched_replica_where_its_smallest_untouched_one_fails() -> None:
    # In bytes, giver 0 holds t-0 (10), t-1 (9) and t-4 (1); receiver 1 holds t-2 (12), t-3 (5) and t-4 (1, on both: the
    # placement veto refuses it either way). t-3's other replica moved 2 -> 3: touched. Nets in (0, 6) help, 3 wanted.
    # The smallest untouched small, t-2 (12), leaves no giver replica in the window (11, 19); the smaller touched t-3 (5)
    # does: 9 in (4, 12), the nearest 3 + 5 = 8, net 4. t-2 was taken from 1's index on the way and is put back.
    s, goal = searching([0, 1, 2, 3], [(10, [0]), (9, [0]), (12, [1]), (5, [1, 2]), (1, [0, 1])])
    s.move(3, 2, 3)
    assert goal._swap(s, 0, 1, 3.0, helps_below(6), (-1.0, 7.0))
    assert s.cur == {1: [1], 3: [0, 3]} and s.bytes.tolist() == [16, 22, 0, 5]
    from kafka_rebalance.planner.goals.base import donor_index

    assert donor_index(s, 1).find(12.0, lambda p: True) == 2
    # An arrival on the receiver is tried before a smaller touched replica of its own: t-3 (5) arrived on 1 from 2, and
    # t-4 (1) on 1 is touched (its replica on 2 moved to 3). t-2 (12) fails as above, the arrival t-3 (5) takes t-1 (9),
    # though t-4, smaller, would leave nothing in (0, 8).
    s, goal = searching([0, 1, 2, 3], [(10, [0]), (9, [0]), (12, [1]), (5, [2]), (1, [1, 2])])
    s.move(3, 2, 1)
    s.move(4, 2, 3)
    assert goal._swap(s, 0, 1, 3.0, helps_below(6), (-1.0, 7.0))
    assert s.cur == {1: [1], 3: [0], 4: [1, 3]} and s.bytes.tolist() == [15, 22, 0, 1]
    # A touched replica larger than the untouched small that failed is not tried: 1 (t-2) leaves nothing in (0, 8); the
    # touched t-3 (5) would (9 for it), but it is no smaller, so nothing moves.
    s, goal = searching([0, 1, 2, 3], [(10, [0]), (9, [0]), (1, [1]), (5, [1, 2])])
    s.move(3, 2, 3)
    assert not goal._swap(s, 0, 1, 3.0, helps_below(6), (-1.0, 7.0))
    assert s.cur == {3: [1, 3]}


def test_a_swaps_smallest_touched_replica_is_the_emptiest_and_so_is_its_smallest_arrival() -> None:
    # In bytes, giver 0 holds t-0 (4) and t-1 (5); nets in (0, 5) help, 4 wanted. Receiver 1's untouched t-2 (12) leaves
    # nothing in (11, 18); its touched t-3 (0 bytes) and t-4 (1 byte) (their other replicas moved 2 -> 3): the emptiest,
    # t-3, is tried, and t-0 (4, the nearest 4 + 0) goes for it. Starting from 1 byte, t-4 and t-1 (5) would go.
    s, goal = searching([0, 1, 2, 3], [(4, [0]), (5, [0]), (12, [1]), (0, [1, 2]), (1, [1, 2])])
    s.move(3, 2, 3)
    s.move(4, 2, 3)
    assert goal._swap(s, 0, 1, 4.0, helps_below(5), (-1.0, 6.0))
    assert s.cur == {0: [1], 3: [0, 3], 4: [1, 3]}
    # The same with t-3 and t-4 arrivals on 1 (from 2) and nothing untouched there: the emptiest arrival goes, t-3.
    s, goal = searching([0, 1, 2], [(4, [0]), (5, [0]), (0, [2]), (1, [2])])
    s.move(2, 2, 1)
    s.move(3, 2, 1)
    assert goal._swap(s, 0, 1, 4.0, helps_below(5), (-1.0, 6.0))
    assert s.cur == {0: [1], 2: [0], 3: [1]}


def test_a_search_gives_up_after_64_replicas_refused() -> None:
    # In bytes: t-0..t-64 (5 each) sit on both 0 and 1, so the placement veto refuses every one from 0 to 1; t-65 (20)
    # is on 0 alone. Nets in (0, 30) help, 5 wanted: the 65 refused are nearer than t-65, and a search stops after 64
    # refusals (SEARCH), untouched or with touched ones: nothing moves.
    s, goal = searching([0, 1], [(5, [0, 1])] * 65 + [(20, [0])])
    assert not goal._single(s, 0, 1, 5.0, helps_below(30), (-1.0, 31.0))
    assert s.cur == {}
    # A swap's search for the receiver's small one likewise: t-0..t-64 (1 each) on both, t-65 (3) on 1 alone, t-66 (20)
    # on 0 alone: from 0 bytes up the 65 refused come first, so no small one is found and nothing moves.
    s, goal = searching([0, 1], [(1, [0, 1])] * 65 + [(3, [1]), (20, [0])])
    assert not goal._swap(s, 0, 1, 10.0, helps_below(30), (-1.0, 31.0))
    assert s.cur == {}


def test_a_single_move_takes_an_arrival_before_a_touched_replica_of_the_givers_own_and_that_when_nothing_else_helps() -> None:
    # In bytes: t-0 (4) on 0 and 2, its replica on 2 moved to 3 (so 0's is touched); nets in (0, 6) help, 4 wanted.
    # Nothing untouched or arrived on 0 helps, so the touched t-0 goes to 1.
    s, goal = searching([0, 1, 2, 3], [(4, [0, 2])])
    s.move(0, 2, 3)
    assert goal._single(s, 0, 1, 4.0, helps_below(6), (-1.0, 7.0))
    assert s.cur == {0: [1, 3]}
    # With t-1 (2) arrived on 0 (from 2) as well: the arrival goes, though t-0 is nearer 4 (moving an arrival on adds no move).
    s, goal = searching([0, 1, 2, 3], [(4, [0, 2]), (2, [2])])
    s.move(0, 2, 3)
    s.move(1, 2, 0)
    assert goal._single(s, 0, 1, 4.0, helps_below(6), (-1.0, 7.0))
    assert s.cur == {0: [0, 3], 1: [1]}


def test_a_costly_swap_with_none_left_takes_no_arrival_either() -> None:
    # In bytes, costly budget 0: 0 holds t-0 (3), arrived from 2; 1 holds t-1 (2). Nets in (0, 3) help, 1 wanted. 3 for 2
    # copies 5 bytes to shed 1: costly (for a small of 2, only a replica above 2 x 2 - 1 = 3 bytes is cheap), so the
    # search's window (3, 6) holds no size, arrivals included: nothing moves.
    s, goal = searching([0, 1, 2], [(3, [2]), (2, [1])], costly_swaps=0)
    s.move(0, 2, 0)
    assert not goal._swap(s, 0, 1, 1.0, helps_below(3), (-1.0, 4.0))
    assert s.cur == {0: [0]}


def test_a_broker_set_aside_is_tried_again_once_another_brokers_action_made_room() -> None:
    # In bytes, every target 10; bands set by hand: 0 [0, 10], 1 [5, 8], 2 [0, 12]. 0 holds t-0 (14), 4 above; 1 holds
    # t-1 (4), 1 below; 2 holds t-2 (10) and t-3 (2), at its top. 0 goes first and nothing helps: 14 overshoots 1 (to
    # 18) and 2; a swap with 1 (14 for 4) leaves 1 at 14, one with 2 (14 for 10) 2 at 16, as far out as 0 was. Set
    # aside. 1 (1 below) asks 2: min(2, 6) = 2 wanted, t-3: 1 at 6, 2 at 10. Everyone else inside, 0 is tried again:
    # now 14 for 10 with 2 leaves 0 at 10 and 2 at 14, 2 outside instead of 4. 2 then finds nothing (14 overshoots 1; 14
    # for 0's 10 mirrors them): 10 / 6 / 14. Without the second try 0 would have stayed at 14.
    s, goal = searching([0, 1, 2], [(14, [0]), (4, [1]), (10, [2]), (2, [2])])
    s.byte_target = np.full(3, 10.0)
    upper, lower = np.asarray([10.0, 8.0, 12.0]), np.asarray([0.0, 5.0, 0.0])
    s.byte_hi, s.byte_lo = upper.copy(), lower.copy()
    goal._run(s, np.arange(3), upper, lower)
    assert s.bytes.tolist() == [10, 6, 14]
    assert s.cur == {0: [2], 2: [0], 3: [1]}


def hand_run(layout: list[tuple[int, list[int]]], targets: list[float], upper: list[float], lower: list[float],
             byte_hi: list[float] | None = None, rack: str | None = None) -> ClusterState:  # fmt: skip
    """One ``_run`` of the goal over brokers 0..n-1 (all in ``rack``, if given) with targets and bands set by hand
    (``byte_hi``: the tolerance band's tops, where ``upper`` raised some: those brokers are held, as ``optimize`` holds
    one proven out of reach)."""
    n = len(targets)
    s, goal = searching([(b, rack) for b in range(n)] if rack else list(range(n)), layout)
    s.byte_target = np.asarray(targets, dtype=np.float64)
    s.byte_hi, s.byte_lo = np.asarray(byte_hi or upper, dtype=np.float64), np.asarray(lower, dtype=np.float64)
    goal._run(s, np.arange(n), np.asarray(upper, dtype=np.float64), np.asarray(lower, dtype=np.float64))
    return s


def test_a_heavy_broker_gives_to_the_partner_furthest_below_its_own_target_not_the_lightest_in_bytes() -> None:
    # In bytes, targets 10 / 12 / 6, bands [8, 12], [5, 14], [5, 8]. 0 holds t-0 (10) and t-1 (4), 2 above; the others
    # are inside. Its partners, furthest below their own targets first: 1 (6 against 12: -6), then 2 (5 against 6: -1).
    # 1 takes min(4, 6) = 4, t-1: 10 / 10 / 5, every broker inside. (2 first would take t-1 too, and end 1 above.)
    s = hand_run([(10, [0]), (4, [0]), (6, [1]), (5, [2])], [10, 12, 6], [12, 14, 8], [8, 5, 5])
    assert s.bytes.tolist() == [10, 10, 5] and s.cur == {1: [1]}


def test_of_a_broker_above_and_one_below_their_bands_by_as_much_the_one_above_goes_first() -> None:
    # In bytes, targets 10 / 10 / 18, bands [8, 12], [5, 15], [9, 20]. 0 holds 10 + 4 (2 above), 1 holds 3 (2 below),
    # 2 holds 8 + 2 (inside). 0 goes first: its partners, furthest below their targets first, are 2 (-8) and 1 (-7);
    # 2 takes min(4, 8) = 4, t-1. 1, still 2 below, asks 0 (0 against its target) and then 2 (-4): 0's 10 overshoots
    # either way, and 2 gives half the gap, (-4 + 7) / 2 = 1.5, its own t-4 (2): 10 / 5 / 12. (1 first would have taken
    # t-1 from 0: 10 / 7 / 10.)
    s = hand_run([(10, [0]), (4, [0]), (3, [1]), (8, [2]), (2, [2])], [10, 10, 18], [12, 15, 20], [8, 5, 9])
    assert s.bytes.tolist() == [10, 5, 12] and s.cur == {1: [2], 4: [1]}


def test_a_broker_held_above_its_band_is_asked_before_the_others() -> None:
    # In bytes, one rack; targets 10 / 8 / 18; bands [5, 15], [4, 16], and for 2 the tolerance band [10, 18] raised to
    # [10, 20], where it stands (held: as optimize holds a broker proven out of reach above its band). 0 holds 3 (2
    # below); 1 holds 12 + 2, 6 above its target; 2 holds 18 + 2, 2 above. 1 is further above its target, but the held 2
    # is asked first: min(2, 7) = 2 wanted, its t-4 (2): 5 / 14 / 18. (1 would have given its own t-2: 5 / 12 / 20.)
    s = hand_run([(3, [0]), (12, [1]), (2, [1]), (18, [2]), (2, [2])], [10, 8, 18], [15, 16, 20], [5, 4, 10],
                 byte_hi=[15, 16, 18], rack="a")  # fmt: skip
    assert s.bytes.tolist() == [5, 14, 18] and s.cur == {4: [0]}


def test_a_broker_below_its_band_asks_the_partner_furthest_above_its_own_target_first_not_the_heaviest() -> None:
    # In bytes, targets 10 / 8 / 19, bands [5, 15], [4, 16], [15, 25]. 0 holds 3, 2 below; 1 holds 12 + 2 (6 above its
    # target, inside); 2 holds 18 + 2 (1 above its target, inside, the heaviest). 0 asks 1 first: min(6, 7) = 6 wanted,
    # t-2 (2) the nearest: 5 / 12 / 20. (2 first would have given its t-4: 5 / 14 / 18.)
    s = hand_run([(3, [0]), (12, [1]), (2, [1]), (18, [2]), (2, [2])], [10, 8, 19], [15, 16, 25], [5, 4, 15])
    assert s.bytes.tolist() == [5, 12, 20] and s.cur == {2: [0]}


def test_the_solver_sheds_what_a_brokers_excluded_bytes_leave_no_room_for() -> None:
    from kafka_rebalance.planner import exact

    # x-0 (5 GiB, excluded) and t-0 (6) on broker 0, t-1 (2) and t-2 (4) on 1, t-3 (3) and t-4 (4) on 2: 24 GiB, target
    # 8, band [6, 10] (tolerance 0.25), and two replicas a broker. 1 (6) and 2 (7) are inside; 0 (11) is not, and its band
    # leaves its movable replicas 10 - 5 = 5 GiB: t-0 goes, and for the count one of at least 1 GiB comes back. Sent
    # to 1, t-0 leaves room for at most 10 - 6 - 4 = 0 of 1's own plus t-1 (2) back (0 at 7, 1 at 10): 8 GiB moved; to 2,
    # t-3 (3) back (0 at 8, 2 at 10): 9. The fewest: t-0 to 1, t-1 to 0. The same with the band widened by up to 0.5 GiB.
    parts = [part("t", i, [b], size_bytes=g * GiB) for i, (b, g) in enumerate([(0, 6), (1, 2), (1, 4), (2, 3), (2, 4)])]
    state = planner_state([0, 1, 2], parts + [part("x", 0, [0], size_bytes=5 * GiB)], targets=True, exclude_topics=("x",),
                          byte_tolerance=0.25)  # fmt: skip
    for widen in (0.0, 0.5 * GiB):
        found = exact._solve(state, widen=widen)
        assert found.status in (exact.ExactStatus.OPTIMAL, exact.ExactStatus.FEASIBLE)
        assert (found.rows, found.bytes_moved) == ({0: [1], 1: [0]}, 8 * GiB)


def test_the_solver_widens_by_the_least_sum_in_bytes_and_a_budget_of_one_byte_is_a_widening() -> None:
    from kafka_rebalance.planner import exact

    # In bytes, tolerance 0: t-0 (3) and t-1 (2) on broker 0, broker 1 empty, target 2.5 each. No split meets the bands;
    # 3 / 2 lies 0.5 + 0.5 = 1 byte beyond them, the least (5 / 0 lies 5). Within that 1 byte the fewest bytes: t-1 moves.
    state = planner_state([0, 1], [part("t", 0, [0], size_bytes=3), part("t", 1, [0], size_bytes=2)], targets=True,
                          byte_tolerance=0.0)  # fmt: skip
    assert exact._solve(state, widen=None).widening == pytest.approx(1.0, abs=1e-6)
    found = exact._solve(state, widen=1.0)
    assert found.status in (exact.ExactStatus.OPTIMAL, exact.ExactStatus.FEASIBLE)
    assert (found.rows, found.bytes_moved) == ({1: [1]}, 2)



def test_the_solver_finds_the_least_widening_and_within_a_budget_moves_the_fewest_bytes_whatever_it_widens() -> None:
    from kafka_rebalance.planner import exact

    # In bytes, tolerance 0: t-0..t-3 (7, 5, 3, 1) on broker 0 of three, target 16 / 3 each. The least sum beyond the
    # bands: 7 / 5 / 3 + 1, 5/3 + 1/3 + 4/3 = 10/3 (7 / 5 + 1 / 3 lies 14/3, 7 + 1 / 5 / 3 lies 16/3).
    state = planner_state([0, 1, 2], [part("t", i, [0], size_bytes=g) for i, g in enumerate([7, 5, 3, 1])], targets=True,
                          byte_tolerance=0.0)  # fmt: skip
    assert exact._solve(state, widen=None).widening == pytest.approx(10 / 3, abs=1e-6)
    # t-0 (4) and t-1 (3) on broker 0, u-0 and u-1 (empty) on 1, target 3.5: as they stand they lie 3.5 + 3.5 = 7 beyond
    # the bands. Allowed 7.5, the fewest bytes is none moved, though swapping t-1 for an empty one would bring the sum to 1.
    state = planner_state([0, 1], [part("t", 0, [0], size_bytes=4), part("t", 1, [0], size_bytes=3),
                                   part("u", 0, [1], size_bytes=0), part("u", 1, [1], size_bytes=0)],
                          targets=True, byte_tolerance=0.0)  # fmt: skip
    found = exact._solve(state, widen=7.5)
    assert found.status in (exact.ExactStatus.OPTIMAL, exact.ExactStatus.FEASIBLE)
    assert (found.rows, found.bytes_moved) == ({}, 0)


def test_a_broker_proven_out_of_reach_above_its_band_is_asked_first_even_from_another_rack() -> None:
    # Racks a = {0, 1}, b = {2, 3, 4}; RF 1, so replicas may change racks. 500 GiB over five brokers: target 100, band
    # [90, 110]. 2 holds t-3 (111), larger than any broker's band top: proven out of reach, held where it stands (114).
    # 0 (88) is the only broker out, 2 below. Its partners: the held 2 first, then its own rack's 1 (110 = 107 + 3), then
    # the rest. 2 gives min(14, 12) = 12 wanted, t-4 (3) the nearest: 91 / 110 / 111. (1 first would have given t-2.)
    layout = [(88, 0), (107, 1), (3, 1), (111, 2), (3, 2), (94, 3), (94, 4)]
    s = planner_state([(0, "a"), (1, "a"), (2, "b"), (3, "b"), (4, "b")],
                      [part("t", i, [b], size_bytes=g * GiB) for i, (g, b) in enumerate(layout)], targets=True)
    ByteBalanceGoal().optimize(s)
    assert loads(s) == [91, 110, 111, 94, 94] and s.cur == {4: [0]}


def test_the_search_windows_end_where_sizes_stop_helping_so_refusals_beyond_them_use_up_no_search() -> None:
    # In bytes, bands and targets set by hand. 0 holds sixty-four 13s and a 1 (833), 1 above its band's top 832; 1 holds
    # nothing, band [0, 11]: sizes in (0, 12) help (at 12, 1 lies 1 above instead). Wanted: min(833 - 820, 13 - 0) = 13.
    # The 13s are nearest but one byte past the window's top (13, exclusive), so the search goes on to the 1: 832 / 1.
    s, goal = searching([0, 1], [(13, [0])] * 64 + [(1, [0])])
    s.byte_target = np.asarray([820.0, 13.0])
    goal.upper, goal.lower = np.asarray([832.0, 11.0]), np.asarray([0.0, 0.0])
    assert goal._improve(s, 0, [1], heavy=True)
    assert s.bytes.tolist() == [832, 1] and s.cur == {64: [1]}
    # A swap's window likewise ends a byte below the small one's size. 0 holds sixty-four 9s and a 12 (588), 1.5 above
    # 586.5; 1 holds a 10, band [0, 11.5]: nets in (0, 3) help, 0.4 wanted (targets 587.6 and 10.4). No single size
    # helps; for 1's 10, the 9s are nearest 10.4 but at or below 10 - 1, outside the window (9, 14): the 12 goes, net 2.
    s, goal = searching([0, 1], [(9, [0])] * 64 + [(12, [0]), (10, [1])])
    s.byte_target = np.asarray([587.6, 10.4])
    goal.upper, goal.lower = np.asarray([586.5, 11.5]), np.asarray([0.0, 0.0])
    assert goal._improve(s, 0, [1], heavy=True)
    assert s.bytes.tolist() == [586, 12] and s.cur == {64: [1], 65: [0]}


def test_within_a_widening_budget_the_solver_moves_the_fewest_bytes_not_the_least_widening() -> None:
    from kafka_rebalance.planner import exact

    # In bytes, tolerance 0, counts locked at 4..4 (so every move is a swap): t-0 (6) and t-1..t-3 (2 each) on broker 0,
    # u-0..u-3 (empty) on 1, target 6 each. As they stand they lie 6 + 6 = 12 beyond the bands; allowed 9: swapping a 2
    # for an empty one lies 4 + 4 = 8 beyond (2 bytes), two such swaps 2 + 2 (4 bytes), t-0 for an empty one 0 (6
    # bytes). The fewest bytes: one 2-byte swap, though the widening it leaves is the largest allowed.
    parts = [part("t", i, [0], size_bytes=g) for i, g in enumerate([6, 2, 2, 2])] + [part("u", i, [1], size_bytes=0) for i in range(4)]
    state = planner_state([0, 1], parts, targets=True, byte_tolerance=0.0)
    found = exact._solve(state, widen=9.0)
    assert found.status in (exact.ExactStatus.OPTIMAL, exact.ExactStatus.FEASIBLE)
    assert found.bytes_moved == 2 and found.rows is not None and len(found.rows) == 2
    (t, t_row), (u, u_row) = sorted(found.rows.items())
    assert t in (1, 2, 3) and t_row == [1] and u in (4, 5, 6, 7) and u_row == [0]


def test_the_byte_guard_judges_many_transfers_at_once_as_it_judges_one() -> None:
    from kafka_rebalance.planner.goals.byte_balance import ByteGuard

    # Band 5..10 GiB on both brokers. Broker 0 holds 12 GiB (2 GiB over), broker 1 holds 6 GiB (inside). Moving x
    # from 0 to 1 may leave each at most half a byte further outside than it is:
    # 1 GiB: 0 at 11 (1 over), 1 at 7: yes. 5 GiB: 1 at 11, 1 GiB over: no. -1 GiB: 0 at 13, 3 over: no.
    # 4 GiB: 1 at exactly 10: yes; half a byte more: 1 is half a byte over: yes; one byte more: no.
    s = planner_state([0, 1], [part("t", 0, [0], size_bytes=12 * GiB), part("t", 1, [1], size_bytes=6 * GiB)])
    s.byte_hi[:] = 10 * GiB
    s.byte_lo[:] = 5 * GiB
    moved = np.array([1 * GiB, 5 * GiB, -1 * GiB, 4 * GiB, 4 * GiB + 0.5, 4 * GiB + 1], dtype=np.float64)
    expected = [True, False, False, True, True, False]
    s.vetoes = [ByteBalanceGoal()]
    guard = ByteGuard(s)
    assert guard.allows_each(s, 0, 1, moved).tolist() == expected
    assert [guard.allows(s, {0: -float(x), 1: float(x)}) for x in moved] == expected
    # Before the bytes goal has run (it is no veto yet) the guard is off: everything passes.
    s.vetoes = []
    assert ByteGuard(s).allows_each(s, 0, 1, moved).tolist() == [True] * 6


def test_the_byte_guard_passes_the_partitions_it_allows_one_by_one_or_all_at_once_alike() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from kafka_rebalance.planner.goals.byte_balance import FEW, ByteGuard

    # Worked by hand first: band 5..10 on 0 and 5..9.5 on 1; broker 0 counted at 12 bytes (2 over), 1 at 6 (inside).
    # Partitions of 1, 5, 4 and 3 bytes on 0: 1 (0 at 11, 1 at 7), 4 (1 at 10, exactly the half byte over it may end)
    # and 3 may go; 5 may not (1 would end 1.5 bytes over).
    s = planner_state([0, 1], [part("t", i, [0], size_bytes=x) for i, x in enumerate([1, 5, 4, 3])]
                      + [part("u", 0, [1], size_bytes=6)])  # fmt: skip
    s.bytes[0], s.byte_lo[:], s.byte_hi[:] = 12, [5, 5], [10, 9.5]
    s.vetoes = [ByteBalanceGoal()]
    assert ByteGuard(s).allowed(s, 0, 1, [0, 1, 2, 3]) == [0, 2, 3]
    # The giver's side at its edge too: 0 at 6 bytes with its band from 5.5 may give 1 byte (ending half a byte under
    # it, as much as it may), not 3.
    s.bytes[0], s.byte_lo[0] = 6, 5.5
    assert ByteGuard(s).allowed(s, 0, 1, [0, 3]) == [0]

    @settings(max_examples=200, deadline=None)
    @given(st.integers(0, 10**12), st.integers(0, 10**12), st.integers(0, 10**12), st.integers(0, 10**12),
           st.lists(st.integers(0, 10**12), min_size=1, max_size=2 * FEW + 2), st.booleans())
    def check(a: int, r: int, lo_edge: int, width: int, sizes: list[int], active: bool) -> None:
        s = planner_state([0, 1], [part("t", i, [0], size_bytes=x) for i, x in enumerate(sizes)]
                          + [part("u", 0, [1], size_bytes=r)])  # fmt: skip
        s.bytes[0] = a
        s.byte_lo[:], s.byte_hi[:] = [lo_edge / 2, lo_edge / 4], [(lo_edge + width) / 2, (lo_edge + width) / 4]
        s.vetoes = [ByteBalanceGoal()] if active else []
        guard = ByteGuard(s)
        parts = list(range(len(sizes)))
        moved = np.asarray(sizes, dtype=np.float64)
        want = [p for p, ok in zip(parts, guard.allows_each(s, 0, 1, moved).tolist()) if ok]
        assert guard.allowed(s, 0, 1, parts) == want
        assert guard.allowed(s, 0, 1, parts[:FEW]) == [p for p in want if p < FEW]

    check()


def test_the_byte_guards_span_holds_every_moved_amount_it_allows_and_is_tight() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from kafka_rebalance.planner.goals.byte_balance import ByteGuard

    # 12 bytes on 0 (band [5, 10]: 2 above), 4 on 1 (band [5, 10]: 1 below). Moving m from 0 to 1: 0 may end at most
    # 2.5 outside ([2.5, 12.5]: m in [-0.5, 9.5]), 1 at most 1.5 ([3.5, 11.5]: m in [-0.5, 7.5]): allowed for m in
    # [-0.5, 7.5], and the span is that widened by a byte and a billionth.
    s = planner_state([0, 1], [part("t", 0, [0], size_bytes=12), part("t", 1, [1], size_bytes=4)])
    s.byte_lo[:], s.byte_hi[:] = [5, 5], [10, 10]
    s.vetoes = [ByteBalanceGoal()]
    guard = ByteGuard(s)
    lo, hi = guard.moved_span(s, 0, 1)
    assert lo == pytest.approx(-1.5) and hi == pytest.approx(8.5)
    assert guard.allows_each(s, 0, 1, np.asarray([-0.5, 7.5])).tolist() == [True, True]
    assert guard.allows_each(s, 0, 1, np.asarray([-0.51, 7.51])).tolist() == [False, False]

    @settings(max_examples=200, deadline=None)
    @given(st.integers(0, 10**12), st.integers(0, 10**12), st.integers(0, 10**12), st.integers(0, 10**12),
           st.lists(st.floats(-2e12, 2e12, allow_nan=False), min_size=1, max_size=20))
    def check(a: int, r: int, lo_edge: int, width: int, moved: list[float]) -> None:
        s = planner_state([0, 1], [part("t", 0, [0], size_bytes=a), part("t", 1, [1], size_bytes=r)])
        s.byte_lo[:], s.byte_hi[:] = [lo_edge, lo_edge], [lo_edge + width, lo_edge + width]
        s.vetoes = [ByteBalanceGoal()]
        guard = ByteGuard(s)
        span = guard.moved_span(s, 0, 1)
        assert span is not None
        xs = np.asarray(moved)
        allowed = guard.allows_each(s, 0, 1, xs)
        assert ((xs[allowed] >= span[0]) & (xs[allowed] <= span[1])).all()
        assert not guard.allows_each(s, 0, 1, np.asarray([span[0] - 1.0, span[1] + 1.0])).any()  # and no wider

    check()
    s.vetoes = []  # the guard off: no span
    assert ByteGuard(s).moved_span(s, 0, 1) is None
