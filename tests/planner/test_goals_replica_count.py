"""The replica-count goal (planner/goals/replica_count.py): the size it asks for, its veto, and
its moves, on clusters small enough to work out by hand. Brokers 0..n-1 are their own indexes."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from kafka_rebalance.options import PlanOptions
from kafka_rebalance.planner import make_plan
from kafka_rebalance.planner.byte_misses import HostRoom, held_above
from kafka_rebalance.planner.goals.base import Goal, donor_index, rack_bound
from kafka_rebalance.planner.goals.placement import PlacementGoal, RackSafetyGoal
from kafka_rebalance.planner.goals.replica_count import ReplicaCountGoal, byte_need, desired_size
from kafka_rebalance.planner.goals.view import BalanceView, BrokerView
from kafka_rebalance.planner.state import ClusterState
from tests.support.clusters import GiB, part, planner_state, snapshot


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


def test_a_donor_under_more_pressure_than_the_receiver_sets_the_size() -> None:
    # Counts 3 / 1 / 2 of a range 2..2; bytes 9 / 4 / 2 GiB of a 5 GiB target, band aimed at 7.5 %.
    # Donor 0: 9 - 5.375 to shed over 3 - 2 = 1 move: 3.625 GiB. Receiver 1: 4.625 - 4 over 2 - 1 = 1 move:
    # 0.625 GiB. The donor's 3.625 wins.
    s = state([0, 1, 2], [part("a", 0, [0], size_bytes=5 * GiB), part("a", 1, [0], size_bytes=2 * GiB),
                          part("a", 2, [0], size_bytes=2 * GiB), part("b", 0, [1], size_bytes=4 * GiB),
                          part("c", 0, [2], size_bytes=GiB), part("c", 1, [2], size_bytes=GiB)])
    assert (s.lo.tolist(), s.hi.tolist()) == ([2, 2, 2], [2, 2, 2])
    assert desired_size(s, 0, 1) == pytest.approx(3.625 * GiB)


def test_a_receiver_one_move_short_asks_for_its_whole_need_in_that_move() -> None:
    # Counts 3 / 1 / 2 of 2..2; bytes 6 / 1 / 8 GiB of 5. Donor 0: 6 - 5.375 = 0.625 over 1 move; receiver 1:
    # 4.625 - 1 = 3.625 GiB over its single missing move.
    s = state([0, 1, 2], [part("a", i, [0], size_bytes=2 * GiB) for i in range(3)]
              + [part("b", 0, [1], size_bytes=GiB), part("c", 0, [2], size_bytes=4 * GiB), part("c", 1, [2], size_bytes=4 * GiB)])
    assert desired_size(s, 0, 1) == pytest.approx(3.625 * GiB)


def test_an_emptied_broker_with_a_receiver_inside_the_band_asks_for_the_smallest() -> None:
    # Broker 2 is decommissioned; 0 and 1 share 11 GiB: 5.5 each, band bottom 5.5 * 0.925 = 5.0875.
    # Receiver 1 already holds 6: nothing wanted either way, so 0 (the smallest there is).
    s = state([0, 1, 2], [part("t", 0, [0], size_bytes=4 * GiB), part("t", 1, [1], size_bytes=6 * GiB),
                          part("t", 2, [2], size_bytes=GiB)], decommission_brokers=(2,))
    assert desired_size(s, 2, 1) == 0.0


def test_byte_need_of_a_target_under_one_byte_is_measured_in_bytes() -> None:
    # 2 bytes over two brokers: targets of 1 byte each. 0 holds 2 (one over), 1 holds none (one short);
    # divided by the target itself, 1.
    s = state([0, 1], [part("t", 0, [0], size_bytes=2), part("t", 1, [1], size_bytes=0)])
    assert byte_need(s, np.asarray([0, 1])).tolist() == [-1.0, 1.0]


def moves(s: ClusterState) -> list[tuple[int, int]]:
    """(from, to) of every single-replica partition that moved, in partition order."""
    return [(s.original_row(p)[0], s.row(p)[0]) for p in range(s.n_parts) if s.row(p) != s.original_row(p)]


def test_a_donor_feeds_only_brokers_below_their_range_while_there_are_some() -> None:
    # 7 equal replicas over 3 brokers: range 2..3. Counts 5 / 1 / 1: 2 above on 0, 1 below on 1 and on 2.
    # One move to each (the lower id first, all else equal): 2 moves, the max(excess, deficit) bound.
    s = state([0, 1, 2], [part("t", i, [0]) for i in range(5)] + [part("u", 0, [1]), part("v", 0, [2])])
    assert (s.lo.tolist(), s.hi.tolist()) == ([2, 2, 2], [3, 3, 3])
    ReplicaCountGoal().optimize(s)
    assert s.counts.tolist() == [3, 2, 2] and moves(s) == [(0, 1), (0, 2)]


def test_a_receiver_takes_one_from_each_donor_above_its_floor() -> None:
    # 9 equal replicas over 4 brokers: range 2..3. Counts 3 / 3 / 3 / 0: nobody above, 3 is 2 below. Each donor
    # may give one (down to its floor of 2): from 0, then 1 (all equally loaded: by id).
    s = state([0, 1, 2, 3], [part(t, i, [b]) for b, t in enumerate("abc") for i in range(3)])
    ReplicaCountGoal().optimize(s)
    assert s.counts.tolist() == [2, 2, 3, 2] and sorted(moves(s)) == [(0, 3), (1, 3)]


def test_a_donor_one_above_gives_one_replica_to_each_broker_one_below() -> None:
    # 10 equal replicas over 4 brokers: range 2..3. Counts 4 / 4 / 1 / 1: 0 and 1 are one above, 2 and 3 one
    # below. Each move pairs one above with one below: two moves, none through a broker in range.
    s = state([0, 1, 2, 3], [part("a", i, [0]) for i in range(4)] + [part("b", i, [1]) for i in range(4)]
              + [part("c", 0, [2]), part("d", 0, [3])])
    ReplicaCountGoal().optimize(s)
    assert s.counts.tolist() == [3, 3, 2, 2] and sorted(b for _, b in moves(s)) == [2, 3]
    assert sorted(a for a, _ in moves(s)) == [0, 1]


def test_a_light_receiver_takes_from_the_donor_holding_most_beyond_its_target() -> None:
    # Ranges by hand: 0 at 2..2 holds three of 2 GiB (one above), 1 and 2 at 1..2 hold two of 1 GiB and two of
    # 3 GiB, 3 at 2..2 holds none (two below, more than anyone is above: it picks its donors). Byte targets
    # are 14 / 4 = 3.5 GiB. First the one above its range: 0 gives a 2 GiB replica. Then only brokers above their
    # floor: 1 (2 GiB, needs +0.43) and 2 (6 GiB, needs -0.71). 3 is light, so it takes from the donor holding
    # most beyond its target: a 3 GiB replica from 2. Bytes 4 / 2 / 3 / 5 GiB.
    s = state([0, 1, 2, 3], [part("a", i, [0], size_bytes=2 * GiB) for i in range(3)]
              + [part("b", i, [1], size_bytes=GiB) for i in range(2)] + [part("c", i, [2], size_bytes=3 * GiB) for i in range(2)])
    s.lo[:] = [2, 1, 1, 2]
    s.hi[:] = [2, 2, 2, 2]
    ReplicaCountGoal().optimize(s)
    assert s.counts.tolist() == [2, 2, 1, 2] and [b / GiB for b in s.bytes.tolist()] == [4, 2, 3, 5]


def test_a_donor_gives_first_to_the_receiver_with_most_room_when_their_bytes_need_the_same() -> None:
    # Ranges by hand: 0 holds four (1..1), 1 and 2 none (1..1 and 2..2); 1 and 2 hold no bytes, so they need
    # the same. 0 is 3 above, 2 is 2 below: 0 gives 2 two (its first two in size order, p-0 and p-1: sizes are
    # equal), then 1 one.
    s = state([0, 1, 2], [part("t", i, [0], size_bytes=GiB) for i in range(4)])
    s.lo[:] = [1, 1, 2]
    s.hi[:] = [1, 1, 2]
    ReplicaCountGoal().optimize(s)
    assert s.counts.tolist() == [1, 1, 2] and [s.row(p) for p in range(2)] == [[2], [2]]


def test_a_broker_nobody_can_relieve_is_set_aside_and_the_goal_ends() -> None:
    # 0 holds p-0 and p-1, one above its range 1..1 by hand; 1 holds a replica of both: no move is allowed.
    s = state([0, 1], [part("p", i, [0, 1]) for i in range(2)])
    s.lo[:] = [1, 1]
    s.hi[:] = [1, 3]
    s.vetoes = [PlacementGoal()]
    ReplicaCountGoal().optimize(s)
    assert s.counts.tolist() == [2, 2] and not s.touched.any()


def test_the_veto_refuses_a_destination_at_its_ceiling() -> None:
    # Ranges 1..2 by hand: 0 holds three, 1 two (its ceiling), 2 none.
    s = state([0, 1, 2], [part("t", i, [0]) for i in range(3)] + [part("u", i, [1]) for i in range(2)])
    s.lo[:] = [1, 1, 1]
    s.hi[:] = [2, 2, 2]
    goal = ReplicaCountGoal()
    assert not goal.accept_move(s, 0, 0, 1)
    assert goal.accept_move(s, 0, 0, 2)


def test_the_verdict_counts_each_broker_below_or_above_its_range_by_how_far() -> None:
    def view(counts: dict[int, tuple[int, int, int]]) -> BalanceView:
        brokers = tuple(BrokerView(b, n, lo, hi, 0.0, 0.0, 0.1, 0, 0, 0) for b, (n, lo, hi) in counts.items())
        return BalanceView(brokers, (), 0.1, 10.0, (0, 0))

    check = ReplicaCountGoal().check(view({0: (1, 3, 4), 1: (7, 3, 4), 2: (3, 3, 4)}))
    assert (check.value, check.reached, check.offenders) == (3, False, (0, 1))
    assert check.per_broker == {0: 2.0, 1: 3.0, 2: 0.0}
    empty = ReplicaCountGoal().check(view({}))
    assert (empty.value, empty.reached, empty.offenders) == (0, True, ())


def test_a_heavy_donor_feeds_the_receiver_that_needs_bytes_most() -> None:
    # 5 replicas over 3 brokers: range 1..2. Broker 0 holds three of 3 GiB (one above its range);
    # nobody is below, so any broker with room may take it: 1 (1 GiB) and 2 (5 GiB). The mean is
    # 15 / 3 = 5 GiB: broker 0 is heavy, broker 1 lacks 4 GiB (need 0.8), broker 2 lacks nothing.
    # The 3 GiB replica goes to broker 1: loads 6 / 4 / 5 GiB, not 6 / 1 / 8.
    s = state([0, 1, 2], [part("a", i, [0], size_bytes=3 * GiB) for i in range(3)]
              + [part("b", 0, [1], size_bytes=GiB), part("c", 0, [2], size_bytes=5 * GiB)])
    assert (s.lo.tolist(), s.hi.tolist()) == ([1, 1, 1], [2, 2, 2])
    ReplicaCountGoal().optimize(s)
    assert s.counts.tolist() == [2, 2, 1] and [b / GiB for b in s.bytes.tolist()] == [6, 4, 5]


def test_a_light_donor_feeds_the_receiver_that_needs_bytes_least() -> None:
    # The mirror image: broker 0 holds three of 1 GiB (3 GiB, one above the 1..2 range) of a
    # (3 + 6 + 3) / 3 = 4 GiB mean: light. Broker 1 (6 GiB) needs -0.5, broker 2 (3 GiB) needs 0.25;
    # the light donor's replica goes to the one needing least, broker 1: 2 / 7 / 3 GiB. (A 60 % band, up to 6.4 GiB:
    # b-0 fits it, so 1 is no giant's host, which would take the replica only to pass it on to 2.)
    s = state([0, 1, 2], [part("a", i, [0], size_bytes=GiB) for i in range(3)]
              + [part("b", 0, [1], size_bytes=6 * GiB), part("c", 0, [2], size_bytes=3 * GiB)], byte_tolerance=0.6)
    ReplicaCountGoal().optimize(s)
    assert s.counts.tolist() == [2, 2, 1] and [b / GiB for b in s.bytes.tolist()] == [2, 7, 3]


def test_rack_safety_refusing_hundreds_of_nearer_replicas_does_not_leave_counts_unreached() -> None:
    # Racks a (0, 1), b (2, 3), c (4, 5). 620 RF-3 partitions of 1 byte, one replica per rack (s-* on 0/1,
    # 2/3 and 5; t-* on 0/1, 2/3 and 4), and 20 RF-2 ones of 2 bytes on 5 and on 2 or 3 (u-*). 1,900
    # replicas over 6 brokers: [316, 317] each (counts held exactly: --replica-tolerance 0). Rack a holds 310 + 310 and must gain 12; only an RF-2
    # replica can change racks. Each donor asks for the smallest replica: its 300-odd 1-byte ones come
    # first, and rack safety refuses every one of them (rack a holds a replica already). Looking at the
    # 256 nearest only, every broker was set aside and nothing moved. Looking further: broker 4 (only
    # RF-3 replicas) passes three to 5, and 5, 2 and 3 send 12 RF-2 replicas to rack a: 15 moves, as few
    # as can be (12 into rack a, and 4's three can only go through 5).
    racks = [(0, "a"), (1, "a"), (2, "b"), (3, "b"), (4, "c"), (5, "c")]
    parts = [part("s", i, [i % 2 ^ 1, 3 - i % 2, 5], size_bytes=1) for i in range(300)]
    parts += [part("t", i, [i % 2, 2 + i % 2, 4], size_bytes=1) for i in range(320)]
    parts += [part("u", i, [5, 3 - i % 2], size_bytes=2) for i in range(20)]
    s = state(racks, parts, replica_tolerance=0.0)
    assert (s.lo.tolist(), s.hi.tolist()) == ([316] * 6, [317] * 6)
    assert s.counts.tolist() == [310, 310, 320, 320, 320, 320]
    s.vetoes = [PlacementGoal(), RackSafetyGoal()]
    ReplicaCountGoal().optimize(s)
    assert s.counts.tolist() == [316, 316, 317, 317, 317, 317]
    moved = {s.parts[p].name: (s.original_row(p), s.row(p)) for p in s.cur}
    assert len(moved) == 15
    assert sorted(n for n in moved if n.startswith("t")) == ["t-0", "t-1", "t-2"]
    assert all(after[2] == 5 for n, (_, after) in moved.items() if n.startswith("t"))
    assert sum(1 for n in moved if n.startswith("u")) == 12


# --------------------------------------------------------------------------- chains through a broker in range


def chain_cluster(q_size: int = 1) -> ClusterState:
    """Racks a = {0}, b = {1, 2}, c = {3}; ranges set by hand: 0 holds 2 of 1..1, 2 holds 0 of 1..1, 1 and 3 are
    full (2 of 2..2, 1 of 1..1). Both of 0's partitions (p-0 of 1 GiB, p-1 of 2 GiB) have a replica on 1, so
    rack safety refuses every direct move from 0 to 2 (rack b twice). 3 holds q-0 (``q_size`` GiB), alone."""
    s = state([(0, "a"), (1, "b"), (2, "b"), (3, "c")],
              [part("p", 0, [0, 1], size_bytes=GiB), part("p", 1, [0, 1], size_bytes=2 * GiB),
               part("q", 0, [3], size_bytes=q_size * GiB)])
    s.lo[:] = [1, 2, 1, 1]
    s.hi[:] = [1, 2, 1, 1]
    s.vetoes = [PlacementGoal(), RackSafetyGoal()]
    return s


def test_a_chain_through_a_full_broker_of_another_rack_fixes_what_no_direct_move_can() -> None:
    # 0 -> 2 is refused for both of 0's partitions. Through 1: 1 could pass p-0 or p-1 on to 2 (rack a and b), but
    # 0 could then only send 1 the other one, which 1 holds already. Through 3: q-0 goes 3 -> 2, then one of 0's
    # partitions 0 -> 3; 1's replicas stay. 3's count ends as it started.
    s = chain_cluster()
    ReplicaCountGoal().optimize(s)
    assert s.counts.tolist() == [1, 2, 1, 1]
    assert s.row(2) == [2]
    assert sorted([s.row(0), s.row(1)]) == sorted([[0, 1], [3, 1]])


def test_a_chain_is_tried_directly_with_each_donor_receiver_and_middle_broker() -> None:
    goal = ReplicaCountGoal()
    s = chain_cluster()
    elig = np.asarray(s.eligible_idx, dtype=np.int64)
    # No middle broker but the two ends: nothing to do.
    assert not goal._chain(s, np.asarray([0, 2]), [0], [2])
    assert s.counts.tolist() == [2, 2, 0, 1]
    # Through 1 only: 1 may pass either replica on to 2, but 0 can then send 1 nothing it does not hold.
    assert not goal._chain(s, np.asarray([0, 1, 2]), [0], [2])
    assert s.counts.tolist() == [2, 2, 0, 1] and not s.touched.any()
    assert goal._chain(s, elig, [0], [2])
    assert s.counts.tolist() == [1, 2, 1, 1]
    assert s.row(2) == [2] and [0, 1] in (s.row(0), s.row(1)) and [3, 1] in (s.row(0), s.row(1))


def test_the_solver_counts_the_replicas_it_may_not_move_toward_each_range() -> None:
    # x is excluded: its two replicas stay on 0. 4 replicas over 2 brokers: 2..2 each, so 0 keeps none of t's
    # (its fixed two fill its range) and the solver, not a fallback, moves both to 1.
    snap = snapshot([0, 1], [part("x", i, [0]) for i in range(2)] + [part("t", i, [0]) for i in range(2)])
    summary = make_plan(snap, PlanOptions(optimizer="exact", goals=("replica-count",), exclude_topics=("x",))).summary
    assert summary["optimizer"]["used"] == "exact"
    assert [(r["broker_id"], r["replicas"]) for r in summary["projected"]] == [(0, 2), (1, 2)]
    assert summary["replica_moves"] == 2


def test_a_middle_broker_with_nothing_to_pass_on_is_skipped_for_the_next() -> None:
    # chain_cluster's brokers plus 4 (rack d), whose only replica z-0 [4, 2] cannot go to 2 (2 holds it). Tried in the
    # order 1, 4, 3: 1 passes on but 0 can send it nothing, 4 has nothing to pass on, 3 passes q-0 to 2.
    s = state([(0, "a"), (1, "b"), (2, "b"), (3, "c"), (4, "d")],
              [part("p", 0, [0, 1], size_bytes=GiB), part("p", 1, [0, 1], size_bytes=2 * GiB),
               part("q", 0, [3], size_bytes=GiB), part("z", 0, [4, 2], size_bytes=GiB)])
    s.vetoes = [PlacementGoal(), RackSafetyGoal()]
    assert ReplicaCountGoal()._chain(s, np.asarray([0, 1, 2, 4, 3]), [0], [2])
    assert s.row(2) == [2] and s.row(3) == [4, 2]


# --------------------------------------------------------------------------- tie-breaks, rooms and searches, one rule at a time


def test_the_solver_holds_a_broker_with_fixed_replicas_to_its_ceiling() -> None:
    # x is excluded: its two replicas stay on 0. 12 replicas over 3 brokers at --replica-tolerance 0.25: 4 each, 3..5.
    # 0 may keep 5 - 2 = 3 of t's ten, so 7 move (1 and 2 end with 3 and 4); keeping a fourth would take 0 to 6.
    snap = snapshot([0, 1, 2], [part("x", i, [0]) for i in range(2)] + [part("t", i, [0]) for i in range(10)])
    options = PlanOptions(optimizer="exact", goals=("replica-count",), exclude_topics=("x",), replica_tolerance=0.25)
    summary = make_plan(snap, options).summary
    assert summary["optimizer"]["used"] == "exact"
    counts = {r["broker_id"]: r["replicas"] for r in summary["projected"]}
    assert counts[0] == 5 and sorted([counts[1], counts[2]]) == [3, 4]
    assert summary["replica_moves"] == 7


def test_the_verdict_counts_a_broker_inside_its_range_as_zero_off() -> None:
    brokers = (BrokerView(0, 3, 2, 4, 0.0, 0.0, 0.1, 0, 0, 0), BrokerView(1, 2, 2, 4, 0.0, 0.0, 0.1, 0, 0, 0))
    check = ReplicaCountGoal().check(BalanceView(brokers, (), 0.1, 10.0, (0, 0)))
    assert (check.value, check.reached, check.offenders, check.per_broker) == (0, True, (), {0: 0.0, 1: 0.0})


def test_where_the_largest_excess_equals_the_largest_deficit_the_donor_chooses() -> None:
    # Ranges by hand: 0 holds three of 3 GiB (2..2: one above), 1 one of 5 GiB and 2 one of 1 GiB (both 2..2: one
    # below), 3 three of 1 GiB (2..3). Targets 18 / 4 = 4.5 GiB. One above, one below: the donor 0 (heavy) chooses,
    # and feeds 2, which needs bytes (1 holds more than its target). Then 1 takes from 3, the only broker above its
    # floor. Were the receiver 1 (the first found) to choose, it would take 0's replica and 2 one of 3's.
    s = state([0, 1, 2, 3], [part("a", i, [0], size_bytes=3 * GiB) for i in range(3)]
              + [part("b", 0, [1], size_bytes=5 * GiB), part("c", 0, [2], size_bytes=GiB)]
              + [part("d", i, [3], size_bytes=GiB) for i in range(3)])
    s.lo[:] = [2, 2, 2, 2]
    s.hi[:] = [2, 2, 2, 3]
    ReplicaCountGoal().optimize(s)
    assert s.counts.tolist() == [2, 2, 2, 2]
    assert sorted((s.original_row(p)[0], s.row(p)[0]) for p in s.cur) == [(0, 2), (3, 1)]


def test_a_donor_gives_a_broker_with_room_no_more_than_its_room() -> None:
    # Ranges by hand: 0 holds four (2..2: two above), 1 and 2 one each (1..2: room for one). Nobody is below: 0 gives
    # one to each, two moves; none goes above its ceiling and comes back.
    s = state([0, 1, 2], [part("t", i, [0]) for i in range(4)] + [part("u", 0, [1]), part("v", 0, [2])])
    s.lo[:] = [2, 1, 1]
    s.hi[:] = [2, 2, 2]
    ReplicaCountGoal().optimize(s)
    assert s.counts.tolist() == [2, 2, 2] and s.moved_replicas() == 2


def test_a_donor_fills_the_receiver_with_most_room_first() -> None:
    # Ranges by hand: 0 holds three (1..1: two above), 1 none (1..1) and 2 none (2..2); equal bytes needed. 0's two go
    # to 2, the one with most room; 1 stays one short (nobody else is above its floor). Filling 1 first would have
    # left 2 one short instead.
    s = state([0, 1, 2], [part("t", i, [0]) for i in range(3)])
    s.lo[:] = [1, 1, 2]
    s.hi[:] = [1, 1, 2]
    ReplicaCountGoal().optimize(s)
    assert s.counts.tolist() == [1, 0, 2]


def test_a_donor_exactly_at_its_byte_target_feeds_the_receiver_that_needs_bytes_least() -> None:
    # 0 holds three of 2 GiB (6 GiB, one above the 1..2 range), 1 one of 9 GiB, 2 one of 3 GiB: target 18 / 3 = 6 GiB,
    # so 0 is neither heavy nor light and counts as light: its replica goes to 1 (need -0.5), not 2 (+0.5). (A 60 %
    # band, up to 9.6 GiB: b-0 fits it, so 1 is no giant's host.)
    s = state([0, 1, 2], [part("a", i, [0], size_bytes=2 * GiB) for i in range(3)]
              + [part("b", 0, [1], size_bytes=9 * GiB), part("c", 0, [2], size_bytes=3 * GiB)], byte_tolerance=0.6)
    assert (s.lo.tolist(), s.hi.tolist()) == ([1, 1, 1], [2, 2, 2])
    ReplicaCountGoal().optimize(s)
    assert [b / GiB for b in s.bytes.tolist()] == [4, 11, 3]


def test_a_receiver_exactly_at_its_byte_target_takes_from_the_donor_holding_least_beyond_its_target() -> None:
    # Ranges by hand: 2 holds one of 6 GiB (2..2: one below), 0 three of 1 GiB and 1 three of 3 GiB (both 1..3: above
    # their floor). Target 18 / 3 = 6 GiB: 2 is exactly at it, so counts as heavy and takes from the donor holding
    # least beyond its target: 0 (need +0.5), not 1 (-0.5). Bytes 2 / 9 / 7 GiB.
    s = state([0, 1, 2], [part("a", i, [0], size_bytes=GiB) for i in range(3)]
              + [part("b", i, [1], size_bytes=3 * GiB) for i in range(3)] + [part("c", 0, [2], size_bytes=6 * GiB)])
    s.lo[:] = [1, 1, 2]
    s.hi[:] = [3, 3, 2]
    ReplicaCountGoal().optimize(s)
    assert s.counts.tolist() == [2, 3, 2] and [b / GiB for b in s.bytes.tolist()] == [2, 9, 7]


def bare(brokers: list[Any], partitions: list[dict[str, Any]], **options: Any) -> ClusterState:
    """A state without targets: every range and band is 0, so a donor asks for its mean replica size."""
    return planner_state(brokers, partitions, **options)


@pytest.mark.parametrize(("donor_floor", "receiver_top", "taken"), [
    # 0 holds 1, 2, 3 and 4 GiB (10): asked for 2.5 GiB, the nearest are 2 and 3 (the smaller first).
    (9, None, 1),      # 0 may not fall below 9 GiB: only the 1 GiB replica keeps it there, exactly at its floor
    (None, 1, 1),      # 1 may not rise above 1 GiB: only the 1 GiB replica, exactly at its top
    (9.5, None, 2),    # nothing keeps 0 at 9.5 GiB: the nearest to the size asked for goes all the same
])
def test_a_count_move_takes_a_replica_that_keeps_both_brokers_bytes_where_one_exists(
        donor_floor: float | None, receiver_top: float | None, taken: int) -> None:  # fmt: skip
    s = bare([0, 1], [part("t", i, [0], size_bytes=(i + 1) * GiB) for i in range(4)])
    s.byte_allowed_lo[0] = (donor_floor or 0) * GiB
    s.byte_allowed_hi[1] = (receiver_top or 100) * GiB
    assert ReplicaCountGoal()._transfer(s, 0, 1, 1) == 1
    assert [p + 1 for p in range(4) if s.row(p) == [1]] == [taken]


def test_a_broker_being_emptied_may_fall_below_its_byte_floor() -> None:
    # Broker 0 is decommissioned: its floor of 9 GiB does not bind. 1's band starts at 10 GiB (by hand), so it asks
    # for 10 GiB in its one move: the 4 GiB replica, the nearest, goes, though it takes 0 down to 6 GiB.
    s = bare([0, 1], [part("t", i, [0], size_bytes=(i + 1) * GiB) for i in range(4)], decommission_brokers=(0,))
    s.byte_lo[1] = 10 * GiB
    s.byte_allowed_lo[0] = 9 * GiB
    s.byte_allowed_hi[1] = 100 * GiB
    assert ReplicaCountGoal()._transfer(s, 0, 1, 1) == 1
    assert s.row(3) == [1] and s.counts.tolist() == [3, 1]


def test_a_count_move_takes_an_untouched_replica_before_a_nearer_one_the_plan_brought() -> None:
    # 0 holds a-0 (1 GiB) and c-0 (6 GiB), and b-0 (5 GiB), which the plan moved there from 2: 4 GiB asked for. b-0
    # is nearest, but c-0, untouched, goes first; with only b-0 left, b-0 goes on.
    s = bare([0, 1, 2], [part("a", 0, [0], size_bytes=GiB), part("b", 0, [2], size_bytes=5 * GiB),
                         part("c", 0, [0], size_bytes=6 * GiB)])
    s.move(1, 2, 0)
    goal = ReplicaCountGoal()
    assert goal._transfer(s, 0, 1, 1) == 1 and s.row(2) == [1]
    s2 = bare([0, 1, 2], [part("b", 0, [2], size_bytes=5 * GiB)])
    s2.move(0, 2, 0)
    assert goal._transfer(s2, 0, 1, 1) == 1 and s2.row(0) == [1]


def test_the_second_search_looks_at_every_replica_of_the_donor() -> None:
    # 300 partitions: 299 of 1 byte on 0 and 1 (1 may take none of them), z-0 of 2 bytes on 0 alone. Ranges by hand:
    # 0 one above (299..299), 1 one below (300..300). The first search stops after 256 refusals; the second must
    # reach the 300th replica, z-0, which alone may go. No third broker: no chain either.
    s = state([0, 1], [part("t", i, [0, 1], size_bytes=1) for i in range(299)] + [part("z", 0, [0], size_bytes=2)])
    s.lo[:] = [299, 300]
    s.hi[:] = [299, 300]
    s.vetoes = [PlacementGoal()]
    ReplicaCountGoal().optimize(s)
    assert s.counts.tolist() == [299, 300] and s.row(299) == [1] and s.moved_replicas() == 1


def test_a_chain_may_pass_on_a_replica_the_plan_brought_to_the_middle_broker() -> None:
    # chain_cluster's brokers, with q-0 brought to 3 from 4 (rack c, 0..0) earlier in the plan: it passes on to 2.
    s = state([(0, "a"), (1, "b"), (2, "b"), (3, "c"), (4, "c")],
              [part("p", 0, [0, 1], size_bytes=GiB), part("p", 1, [0, 1], size_bytes=2 * GiB),
               part("q", 0, [4], size_bytes=GiB)])
    s.move(2, 4, 3)
    s.vetoes = [PlacementGoal(), RackSafetyGoal()]
    assert ReplicaCountGoal()._chain(s, np.asarray([0, 1, 2, 3, 4]), [0], [2])
    assert s.row(2) == [2] and [3, 1] in (s.row(0), s.row(1))


def test_a_chain_may_send_on_a_replica_the_plan_brought_to_the_donor() -> None:
    # chain_cluster's brokers, with p-0 and p-1 brought to 0 from 5 (rack a, 0..0) earlier in the plan: one goes to 3.
    s = state([(0, "a"), (1, "b"), (2, "b"), (3, "c"), (5, "a")],
              [part("p", 0, [5, 1], size_bytes=GiB), part("p", 1, [5, 1], size_bytes=2 * GiB),
               part("q", 0, [3], size_bytes=GiB)])
    s.move(0, 4, 0)
    s.move(1, 4, 0)
    s.vetoes = [PlacementGoal(), RackSafetyGoal()]
    assert ReplicaCountGoal()._chain(s, np.asarray([0, 1, 2, 3, 4]), [0], [2])
    assert s.row(2) == [2] and [3, 1] in (s.row(0), s.row(1))


def test_a_donor_with_nobody_below_chains_to_a_broker_with_room() -> None:
    # chain_cluster, but 2 may hold 0..1: nobody is below a range, and 2 (room for one) is reached only through 3.
    # 1 and 3 are at their ceilings: passing a replica to either would take it above.
    s = chain_cluster()
    s.lo[2] = 0
    ReplicaCountGoal().optimize(s)
    assert s.counts.tolist() == [1, 2, 1, 1] and s.row(2) == [2] and s.moved_replicas() == 2


def test_a_receiver_with_nobody_above_chains_from_a_broker_above_its_floor() -> None:
    # chain_cluster, but 0 may hold 1..2: nobody is above a range, and 2 (one below) is reached from 0 only through 3.
    s = chain_cluster()
    s.hi[0] = 2
    ReplicaCountGoal().optimize(s)
    assert s.counts.tolist() == [1, 2, 1, 1] and s.row(2) == [2] and s.moved_replicas() == 2


def test_a_receiver_takes_from_a_broker_above_its_range_before_one_with_more_to_spare() -> None:
    # Ranges by hand: 0 holds three (2..2: one above), 1 three (1..3: two above its floor), 2 none (2..2: two below,
    # more than anyone is above: it picks its donors). Equal sizes, so 0 and 1 need the same bytes. 2 takes one from
    # 0, the broker above its range, though 1 could give it both; then, nobody being above, its second from 1. Two
    # moves; taking both from 1 would have left 0 above its range, a third move.
    s = state([0, 1, 2], [part("t", i, [0]) for i in range(3)] + [part("u", i, [1]) for i in range(3)])
    s.lo[:] = [2, 1, 2]
    s.hi[:] = [2, 3, 2]
    ReplicaCountGoal().optimize(s)
    assert s.counts.tolist() == [2, 2, 2] and moves(s) == [(0, 2), (1, 2)]


def test_a_receiver_chains_from_the_broker_above_its_range_first() -> None:
    # Racks a = {0, 1}, b = {2, 3}, c = {4}. Ranges by hand: 0 holds e-0, e-1 (1..2: at its top, above its floor), 1
    # holds d-0, d-1 (1..1: one above), 2 none (2..2: two below, more than anyone is above: 2 picks), 3 a replica of
    # each of those four (4..4), 4 q-0 and q-1 (2..2). Every e and d partition has its other replica on 3 (rack b):
    # no direct move to 2. A chain through 4 works from 0 or 1: q-* 4 -> 2, then an e or d partition -> 4 (through
    # 3 none: 3 holds them all already). 2 chains first from 1, the one above its range; then, nobody being above,
    # from 0, the one above its floor: 4 moves, each of 0 and 1 ending at 1. Chaining from 0 first (the lower id)
    # would leave 1 above, to give 0 a replica, and 0 to chain once more: 5 moves.
    s = state([(0, "a"), (1, "a"), (2, "b"), (3, "b"), (4, "c")],
              [part("e", i, [0, 3]) for i in range(2)] + [part("d", i, [1, 3]) for i in range(2)]
              + [part("q", i, [4]) for i in range(2)])
    s.lo[:] = [1, 1, 2, 4, 2]
    s.hi[:] = [2, 1, 2, 4, 2]
    s.vetoes = [PlacementGoal(), RackSafetyGoal()]
    ReplicaCountGoal().optimize(s)
    assert s.counts.tolist() == [1, 1, 2, 4, 2] and s.moved_replicas() == 4
    assert s.row(4) == [2] and s.row(5) == [2]
    assert sorted(s.parts[p].topic for p in range(4) if s.row(p)[0] == 4) == ["d", "e"]


def test_a_count_move_that_only_a_replica_the_plan_brought_keeps_in_bytes_takes_that_one() -> None:
    # 0 holds c-0 (6 GiB) and b-0 (1 GiB), which the plan moved there from 2. 1 may rise to 1 GiB only: b-0 alone keeps
    # its bytes, so b-0 goes, though c-0 is untouched (untouched replicas come first only among those keeping bytes).
    s = bare([0, 1, 2], [part("b", 0, [2], size_bytes=GiB), part("c", 0, [0], size_bytes=6 * GiB)])
    s.move(0, 2, 0)
    s.byte_allowed_hi[1] = GiB
    assert ReplicaCountGoal()._transfer(s, 0, 1, 1) == 1
    assert s.row(0) == [1] and s.row(1) == [0]


def test_the_second_search_of_a_chain_looks_at_every_replica_of_the_donor() -> None:
    # Racks a = {0}, b = {1, 2}, c = {3}. t-0..t-298 (2 bytes) are on 0, 1 and 3; p-0 (1 byte) on 0 and 1; q-0 (1,000
    # bytes) on 3 alone. Ranges by hand: 0 one above (299..299), 2 one below (1..1), 1 and 3 full (300..300). No direct
    # move to 2 (rack b holds a replica of each of 0's). Through 1: 0 can send it nothing (1 holds them all). Through
    # 3: q-0 goes on to 2, and 0 sends 3 p-0, the only one 3 lacks. Without targets 0 asks for its mean size and more
    # (599 bytes), so its 299 t's, nearer, come before p-0: the first search stops after 256 refusals; the second must
    # reach the 300th.
    s = bare([(0, "a"), (1, "b"), (2, "b"), (3, "c")],
             [part("t", i, [0, 1, 3], size_bytes=2) for i in range(299)]
             + [part("p", 0, [0, 1], size_bytes=1), part("q", 0, [3], size_bytes=1000)])
    s.lo[:] = [299, 300, 1, 300]
    s.hi[:] = [299, 300, 1, 300]
    s.vetoes = [PlacementGoal(), RackSafetyGoal()]
    ReplicaCountGoal().optimize(s)
    assert s.counts.tolist() == [299, 300, 1, 300]
    assert {s.parts[p].name: s.row(p) for p in s.cur} == {"p-0": [3, 1], "q-0": [2]}


class Asks(Goal):
    """A veto that allows every move and records (partition, source, destination) of each it is asked about."""

    def __init__(self, asked: list[tuple[int, int, int]]) -> None:
        self.asked = asked

    def accept_move(self, state: ClusterState, p: int, src: int, dst: int) -> bool:
        self.asked.append((p, src, dst))
        return True


def test_a_transfer_across_racks_never_asks_the_vetoes_about_a_partition_bound_to_its_racks() -> None:
    # Racks a = {0}, b = {1}, c = {2, 3}. t-0 and t-1 (RF 3, one replica per rack) are bound to their racks: rack
    # safety refuses any of their replicas leaving its rack. u-0 (RF 1) is not. From 0 to 3 (rack a to c) only u-0
    # is asked about, and goes; from 2 to 3 (within rack c) t-0, the smallest, is asked about first, and goes.
    asked: list[tuple[int, int, int]] = []
    s = bare([(0, "a"), (1, "b"), (2, "c"), (3, "c")],
             [part("t", i, [0, 1, 2], size_bytes=GiB) for i in range(2)] + [part("u", 0, [0], size_bytes=2 * GiB)])
    s.vetoes = [Asks(asked), PlacementGoal(), RackSafetyGoal()]
    goal = ReplicaCountGoal()
    assert goal._transfer(s, 0, 3, 1) == 1
    assert asked == [(2, 0, 3)] and s.row(2) == [3]
    asked.clear()
    assert goal._transfer(s, 2, 3, 1) == 1
    assert asked == [(0, 2, 3)] and s.row(0) == [0, 1, 3]


def giant_cluster() -> ClusterState:
    """No racks. Broker 0 holds g-0 (1,000 bytes) and a-0..a-3 (50, 40, 30, 20); 1 holds b-0..b-3 (1, 2, 3, 60) and
    x-0 (0 bytes, an excluded topic: it may not move); 2 holds c-0..c-3 (4, 5, 6, 70). 1,291 bytes over 3 brokers:
    a mean of 430.3, a band of [387.3, 473.4] at the default 10 %. g-0 fits no band: broker 0 is a giant's host,
    above its band whatever it holds. 14 replicas: 4..5 each."""
    parts = [part("g", 0, [0], size_bytes=1000)]
    parts += [part("a", i, [0], size_bytes=s) for i, s in enumerate([50, 40, 30, 20])]
    parts += [part("b", i, [1], size_bytes=s) for i, s in enumerate([1, 2, 3, 60])]
    parts += [part("c", i, [2], size_bytes=s) for i, s in enumerate([4, 5, 6, 70])]
    parts += [part("x", 0, [1], size_bytes=0)]
    return state([0, 1, 2], parts, exclude_topics=("x",))


def test_a_giants_host_ends_at_its_count_floor_with_the_smallest_replicas_it_may_hold() -> None:
    # Counts 5 / 5 / 4 are in range: no count move. Then the giant-host rule, for broker 0 (1,140 bytes):
    # * down to its floor of 4 with its largest other replica, a-0 (50), to the lightest broker below its top:
    #   1 (66 bytes) is at its top of 5, so 2 (85 -> 135).
    # * then its larger replicas, largest first, traded for the cluster's smallest it may hold (x-0, 0 bytes,
    #   may not move): a-1 (40) for b-0 (1), on 1; the lightest broker is 1 (66 -> 105 against 2's 135), the
    #   one giving b-0, so the trade is a swap there. a-2 (30) for b-1 (2): 1 (105 -> 133) is still the lightest.
    #   a-3 (20) for b-2 (3): 1 at 133 against 2's 135. g-0 never moves.
    # Broker 0 ends with g-0 and the three smallest replicas that may move: 1,006 bytes, 4 replicas (1,140 before).
    s = giant_cluster()
    assert (s.lo.tolist(), s.hi.tolist()) == ([4, 4, 4], [5, 5, 5])
    assert s.byte_hi[0] == pytest.approx(1291 / 3 * 1.1)
    ReplicaCountGoal().optimize(s)
    name = s.name
    assert [(name(p), a, b) for p, a, b in s.changes] == [
        ("a-0", 0, 2), ("b-0", 1, 0), ("a-1", 0, 1), ("b-1", 1, 0), ("a-2", 0, 1), ("b-2", 1, 0), ("a-3", 0, 1)]
    assert sorted(name(p) for p in range(s.n_parts) if 0 in s.row(p)) == ["b-0", "b-1", "b-2", "g-0"]
    assert s.counts.tolist() == [4, 5, 5] and s.bytes.tolist() == [1006, 150, 135]


def test_a_giants_host_above_its_count_range_sheds_its_largest_other_replicas_first() -> None:
    # No racks. Broker 0 holds g-0 (1,000 bytes) and a-0..a-5 (10..60); 1 holds b-0 (5), 2 c-0 (7). 1,222 bytes: a
    # mean of 407.3, a band top of 448.1, which g-0 alone passes. 9 replicas: 3..3 each. Broker 0 gives its largest
    # that fit a band first (never g-0), 60 and 50 to 1 (the neediest in bytes), then 40 and 30 to 2; then, holding
    # g-0 with 10 and 20, trades 20 for 1's b-0 (5; 2, lighter at 77, is at its top of 3, so a swap with 1) and 10
    # for 2's c-0 (7; 2 the lightest, a swap there). It ends with g-0, b-0 and c-0: the smallest there are.
    s = state([0, 1, 2], [part("g", 0, [0], size_bytes=1000)]
              + [part("a", i, [0], size_bytes=10 * (i + 1)) for i in range(6)]
              + [part("b", 0, [1], size_bytes=5), part("c", 0, [2], size_bytes=7)])
    assert (s.lo.tolist(), s.hi.tolist()) == ([3, 3, 3], [3, 3, 3])
    ReplicaCountGoal().optimize(s)
    assert [(s.name(p), a, b) for p, a, b in s.changes] == [
        ("a-5", 0, 1), ("a-4", 0, 1), ("a-3", 0, 2), ("a-2", 0, 2), ("b-0", 1, 0), ("a-1", 0, 1), ("c-0", 2, 0),
        ("a-0", 0, 2)]
    assert s.counts.tolist() == [3, 3, 3] and s.bytes.tolist() == [1012, 130, 80]


def test_the_giant_host_rule_asks_a_host_for_its_largest_replica_a_band_holds_and_gives_it_the_smallest() -> None:
    # giant_cluster: no replica that may not move has bytes (x-0 has none), so a band's whole top, 473 (the whole
    # bytes up to 1,291 / 3 * 1.1 = 473.4), is the room for one more replica anywhere. Only broker 0 (g-0) is a
    # giant's host. From 0 the rule asks for 473, sizes below 474; to 0 for 0 bytes, any size; between 1 and 2 it is
    # desired_size's. 0 sheds no giant (g-0); a-0 (50) is fine; any other broker sheds what ``ok`` allows.
    s = giant_cluster()
    goal = ReplicaCountGoal()
    goal.optimize(s)
    assert goal._want(s, 0, 1) == (473.0, (-math.inf, 474.0))
    assert goal._want(s, 2, 0) == (0.0, (-math.inf, math.inf))
    assert goal._want(s, 1, 2) == (desired_size(s, 1, 2), (-math.inf, math.inf))
    ok = goal._shedding(s, 0, lambda p: True)
    ix = {s.name(p): p for p in range(s.n_parts)}
    assert not ok(ix["g-0"]) and ok(ix["a-0"])
    assert goal._shedding(s, 1, ok) is ok


def test_a_giants_host_above_its_count_range_with_only_giants_sheds_giants() -> None:
    # No racks. Broker 0 holds g-0, h-0 and i-0 (1,000 bytes each); 1..3 nothing. A mean of 750, a band top of 825:
    # all three are giants. 3 replicas over 4 brokers: 0..1 each. The rule finds nothing 0 may shed (every replica
    # is a giant), so the counts come first: two giants go, and 0 ends at its top of 1.
    s = state([0, 1, 2, 3], [part(t, 0, [0], size_bytes=1000) for t in "ghi"])
    assert (s.lo.tolist(), s.hi.tolist()) == ([0, 0, 0, 0], [1, 1, 1, 1])
    ReplicaCountGoal().optimize(s)
    assert s.counts[0] == 1 and s.moved_replicas() == 2


def test_a_chains_search_on_a_giants_host_takes_the_rules_find_and_else_any_replica_touched_too() -> None:
    # giant_cluster, broker 0 the giant's host. The rule's search finds a-0 (50, the largest a band holds, nearest
    # to 473) and that is the answer, though desired_size (677: 1,140 - 462.7 over one move) is nearer g-0.
    s = giant_cluster()
    goal = ReplicaCountGoal()
    hosts, goal._room = held_above(s)
    assert hosts == [0]
    goal._hosts = np.asarray([True, False, False])
    assert s.name(goal._find(s, donor_index(s, 0), 0, 1, lambda p: True)) == "a-0"
    # Where ``ok`` allows only the giant g-0, and the plan has moved it (1 -> 0 -> 1 -> 0), the rule finds nothing
    # and the second search, touched replicas too, takes it.
    g = next(p for p in range(s.n_parts) if s.name(p) == "g-0")
    s.move(g, 0, 1)
    s.move(g, 1, 0)
    assert goal._find(s, donor_index(s, 0), 0, 1, lambda p: p == g) == g


class Refuses(Goal):
    """A veto refusing the moves (partition, destination) it is given; destination -1: any."""

    def __init__(self, *refused: tuple[int, int]) -> None:
        self.refused = set(refused)

    def accept_move(self, state: ClusterState, p: int, src: int, dst: int) -> bool:
        return (p, dst) not in self.refused and (p, -1) not in self.refused


def host_goal(s: ClusterState, hosts: list[int], anywhere: float = 500.0) -> ReplicaCountGoal:
    """A count goal set up as ``optimize`` would for these giants' hosts, a replica up to ``anywhere`` fitting a band."""
    goal = ReplicaCountGoal()
    goal._hosts = np.zeros(s.n_brokers, dtype=bool)
    goal._hosts[hosts] = True
    goal._room = HostRoom(anywhere, {}, np.zeros(s.n_parts, dtype=bool))
    goal._in_rack = rack_bound(s)
    return goal


def ids(s: ClusterState) -> dict[str, int]:
    return {s.name(p): p for p in range(s.n_parts)}


def test_a_giants_host_gives_to_the_lightest_broker_not_another_host_and_through_one_at_its_floor_only_to_it() -> None:
    # No targets. 1 is a giant's host with p-0 (10) to give; 2 is another host, lightest by bytes above its target
    # (900 - 1,000). Then 4 (40 - 30), 3 (20), 0 (50). So p-0 goes to 4, the lightest not a host. Through 0 (giving
    # one to 1), at its floor of 1: only 0 itself may take p-0.
    s = bare([0, 1, 2, 3, 4], [part("a", 0, [0], size_bytes=50), part("g", 0, [1], size_bytes=1000),
                               part("p", 0, [1], size_bytes=10), part("h", 0, [2], size_bytes=900),
                               part("c", 0, [3], size_bytes=20), part("d", 0, [4], size_bytes=40)])
    s.lo[:] = 1
    s.hi[:] = 3
    s.byte_target[:] = [0, 0, 1000, 0, 30]
    goal = host_goal(s, [1, 2])
    elig = np.arange(5)
    p = ids(s)["p-0"]
    assert goal._host_receiver(s, elig, p, 1, -1) == 4
    assert goal._host_receiver(s, elig, p, 1, 0) == 0


def test_a_giants_host_gives_a_partition_bound_to_its_racks_only_within_its_own_rack() -> None:
    # Racks a = {0, 4}, b = {1}, c = {2, 3}. t-0 (RF 3, one replica per rack) is bound to its racks; u-0 (RF 1) is
    # not. Host 2 (rack c) gives t-0 to 3, the only broker of its rack, though 4 (rack a, empty) is lighter; the
    # vetoes are not asked about 4. u-0 goes to 4.
    asked: list[tuple[int, int, int]] = []
    s = bare([(0, "a"), (1, "b"), (2, "c"), (3, "c"), (4, "a")],
             [part("t", 0, [0, 1, 2], size_bytes=1), part("u", 0, [2], size_bytes=1),
              part("w", 0, [3], size_bytes=100)])
    s.hi[:] = 5
    s.vetoes = [Asks(asked), PlacementGoal(), RackSafetyGoal()]
    goal = host_goal(s, [2])
    elig = np.arange(5)
    t, u = ids(s)["t-0"], ids(s)["u-0"]
    assert goal._host_receiver(s, elig, t, 2, -1) == 3
    assert asked == [(t, 2, 3)]
    assert goal._host_receiver(s, elig, u, 2, -1) == 4


@pytest.mark.parametrize(("refused", "taker"), [(15, 16), (16, None)])
def test_a_giants_host_asks_at_most_sixteen_brokers(refused: int, taker: int | None) -> None:
    # Host 0 holds p-0 (1 byte); 1..17 are empty, equally light, asked in index order. With 1..15 refusing it the
    # 16th takes it; with 1..16 refusing, 17 is never asked.
    s = bare(list(range(18)), [part("p", 0, [0], size_bytes=1)])
    s.hi[:] = 5
    s.vetoes = [Refuses(*[(0, b) for b in range(1, refused + 1)])]
    goal = host_goal(s, [0])
    assert goal._host_receiver(s, np.arange(18), 0, 0, -1) == taker


@pytest.mark.parametrize(("refused", "traded"), [(15, 16), (16, None)])
def test_a_giants_host_looks_at_sixteen_smaller_replicas_to_trade_for(refused: int, traded: int | None) -> None:
    # Host 0 holds g-0 (1,000, no band holds it) and p-0 (100), at its floor of 2. Brokers 1..17 each hold one q (q-i
    # of i bytes on broker i), at their floor of 1: each may only swap, and p-0 may not go to 1..``refused``. The
    # smallest first: q-1 .. q-15 are refused; q-16 is the 16th looked at, so with 15 refused 0 swaps p-0 for it, and
    # with 16 refused q-17, the 17th, is never looked at.
    s = bare(list(range(18)), [part("g", 0, [0], size_bytes=1000), part("p", 0, [0], size_bytes=100)]
             + [part(f"q{i:02d}", 0, [i], size_bytes=i) for i in range(1, 18)])
    s.lo[:] = 1
    s.lo[0] = 2
    s.hi[:] = 5
    p = ids(s)["p-0"]
    s.vetoes = [Refuses(*[(p, b) for b in range(1, refused + 1)])]
    goal = host_goal(s, [0])
    goal._hold_least(s, np.arange(18), 0, goal._smallest_first(s))
    if traded is None:
        assert s.changes == []
    else:
        assert [(s.name(q), a, b) for q, a, b in s.changes] == [(f"q{traded:02d}-0", traded, 0), ("p-0", 0, traded)]


def test_a_giants_host_passes_a_replica_no_one_may_swap_or_that_may_not_join_it() -> None:
    # Host 0 holds g-0 (1,000) and p-0 (100), at its floor of 2. The smallest replicas: a-0 (1) on 1 and z-0 (2) on
    # 2, both at their floor of 1 (so only a swap with them), c-0 (3) on 3, above its floor of 0. p-0 may not go to
    # 1; z-0 may not go to 0. So a-0 and z-0 are passed over, and p-0 is swapped for c-0 with 4 (empty, lightest).
    s = bare([0, 1, 2, 3, 4], [part("g", 0, [0], size_bytes=1000), part("p", 0, [0], size_bytes=100),
                               part("a", 0, [1], size_bytes=1), part("z", 0, [2], size_bytes=2),
                               part("c", 0, [3], size_bytes=3)])
    s.lo[:] = [2, 1, 1, 0, 0]
    s.hi[:] = 5
    i = ids(s)
    s.vetoes = [Refuses((i["p-0"], 1), (i["z-0"], 0))]
    goal = host_goal(s, [0])
    goal._hold_least(s, np.arange(5), 0, goal._smallest_first(s))
    assert [(s.name(q), a, b) for q, a, b in s.changes] == [("c-0", 3, 0), ("p-0", 0, 4)]


def test_a_giants_host_trades_a_smaller_replica_for_what_its_larger_one_could_not() -> None:
    # Host 0 holds g-0 (1,000), p-1 (100) and p-0 (50), at its floor of 3. The smallest: a-0 (1) on 1 (above its
    # floor of 0), z-0 (2) on 2, which may not join 0; p-1 may go nowhere. p-1, the largest, finds no trade (a-0 is
    # refused it, z-0 may not come, p-0 is on 0). p-0 then trades for a-0 all the same, with 3 (empty, lightest).
    s = bare([0, 1, 2, 3], [part("g", 0, [0], size_bytes=1000), part("p", 1, [0], size_bytes=100),
                            part("p", 0, [0], size_bytes=50), part("a", 0, [1], size_bytes=1),
                            part("z", 0, [2], size_bytes=2)])
    s.lo[:] = [3, 0, 0, 0]
    s.hi[:] = 5
    i = ids(s)
    s.vetoes = [Refuses((i["p-1"], -1), (i["z-0"], 0))]
    goal = host_goal(s, [0])
    goal._hold_least(s, np.arange(4), 0, goal._smallest_first(s))
    assert [(s.name(q), a, b) for q, a, b in s.changes] == [("a-0", 1, 0), ("p-0", 0, 3)]


def test_a_giants_host_never_trades_a_replica_that_may_not_move() -> None:
    # Host 0 holds g-0 (1,000), x-0 (6, an excluded topic) and a-0 (5), at its floor of 3; 1 holds b-0 (1), above its
    # floor of 0. a-0, not x-0, is traded for b-0, with 2 (empty, the lightest).
    s = bare([0, 1, 2], [part("g", 0, [0], size_bytes=1000), part("x", 0, [0], size_bytes=6),
                         part("a", 0, [0], size_bytes=5), part("b", 0, [1], size_bytes=1)], exclude_topics=("x",))
    s.lo[:] = [3, 0, 0]
    s.hi[:] = 5
    goal = host_goal(s, [0])
    goal._hold_least(s, np.arange(3), 0, goal._smallest_first(s))
    assert [(s.name(q), a, b) for q, a, b in s.changes] == [("b-0", 1, 0), ("a-0", 0, 2)]


def test_a_replica_its_larger_one_could_not_trade_for_stays_on_offer_past_one_already_on_the_host() -> None:
    # Host 0 holds g-0 (1,000), p-1 (100) and p-0 (50), at its floor of 3; 1 holds a-0 (1), above its floor of 0.
    # p-1 may go nowhere: it looks at a-0 in vain, then passes p-0 (on 0 already). p-0 then trades for a-0, with 2
    # (empty, lightest).
    s = bare([0, 1, 2], [part("g", 0, [0], size_bytes=1000), part("p", 1, [0], size_bytes=100),
                         part("p", 0, [0], size_bytes=50), part("a", 0, [1], size_bytes=1)])
    s.lo[:] = [3, 0, 0]
    s.hi[:] = 5
    s.vetoes = [Refuses((ids(s)["p-1"], -1))]
    goal = host_goal(s, [0])
    goal._hold_least(s, np.arange(3), 0, goal._smallest_first(s))
    assert [(s.name(q), a, b) for q, a, b in s.changes] == [("a-0", 1, 0), ("p-0", 0, 2)]


def test_a_replica_that_could_not_join_a_giants_host_is_not_offered_again() -> None:
    # Host 0 holds g-0 (1,000), p-1 (100) and p-0 (50): 1,150 bytes, at its floor of 3. The smallest: z-0 (1) on 2,
    # a-0 (2) on 1, b-0 (3) on 3, all above their floor of 0; 4 is empty. A veto refuses z-0 to 0 while 0 holds
    # more than 1,100 bytes. p-1 passes z-0 and trades for a-0, with 4 (lightest): 0 holds 1,052. z-0 may join now,
    # but it was passed over for good: p-0 trades for b-0, with 1 (empty since a-0 left).
    class Full(Goal):
        def accept_move(self, state: ClusterState, p: int, src: int, dst: int) -> bool:
            return not (state.name(p) == "z-0" and dst == 0 and state.bytes[0] > 1100)

    s = bare([0, 1, 2, 3, 4], [part("g", 0, [0], size_bytes=1000), part("p", 1, [0], size_bytes=100),
                               part("p", 0, [0], size_bytes=50), part("z", 0, [2], size_bytes=1),
                               part("a", 0, [1], size_bytes=2), part("b", 0, [3], size_bytes=3)])
    s.lo[:] = [3, 0, 0, 0, 0]
    s.hi[:] = 5
    s.vetoes = [Full()]
    goal = host_goal(s, [0])
    goal._hold_least(s, np.arange(5), 0, goal._smallest_first(s))
    assert [(s.name(q), a, b) for q, a, b in s.changes] == [
        ("a-0", 1, 0), ("p-1", 0, 4), ("b-0", 3, 0), ("p-0", 0, 1)]


def test_a_giants_host_finds_its_largest_replica_a_band_holds_past_more_giants_than_a_search_looks_at() -> None:
    # Host 0 holds g-0..g-256 (501..757 bytes: giants, a band holding up to 500) and a-0 (10). The rule asks for
    # 500, and only sizes up to 501 count: the 257 giants, all nearer 500 than a-0, are not looked at, so the first
    # search (256 replicas at most) finds a-0, both for a move and for a chain.
    def host_with_giants() -> tuple[ClusterState, ReplicaCountGoal, int]:
        s = bare([0, 1], [part("g", i, [0], size_bytes=501 + i) for i in range(257)] + [part("a", 0, [0], size_bytes=10)])
        return s, host_goal(s, [0]), ids(s)["a-0"]

    s, goal, a = host_with_giants()
    assert goal._transfer(s, 0, 1, 1) == 1 and s.changes == [(a, 0, 1)]
    s, goal, a = host_with_giants()
    assert goal._find(s, donor_index(s, 0), 0, 1, lambda p: True) == a


def test_a_broker_above_its_range_chains_to_no_broker_at_its_top() -> None:
    # Ranges 0..1 each: 0 holds p-0 and p-1 (one above), 1 holds b-0 and 2 c-0 (both at their top). The vetoes allow
    # only c-0 to 1 and p-0 to 2, a chain 0 -> 2 -> 1 that would leave 1 above its top instead: nothing has room, so
    # nothing moves and 0 is set aside.
    class Only(Goal):
        def accept_move(self, state: ClusterState, p: int, src: int, dst: int) -> bool:
            return (state.name(p), dst) in {("c-0", 1), ("p-0", 2)}

    s = state([0, 1, 2], [part("p", 0, [0], size_bytes=1), part("p", 1, [0], size_bytes=1),
                          part("b", 0, [1], size_bytes=1), part("c", 0, [2], size_bytes=1)])
    s.lo[:] = 0
    s.hi[:] = 1
    s.vetoes = [Only()]
    ReplicaCountGoal().optimize(s)
    assert s.changes == [] and s.counts.tolist() == [2, 1, 1]
