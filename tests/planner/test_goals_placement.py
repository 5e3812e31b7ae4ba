"""The hard goals of planner/goals/placement.py on a ClusterState, one rule at a time.

Broker ids below equal their index in the state (brokers 0..n-1), so rows read as broker ids.
The per-broker targets (``lo``/``hi``) stay at zero unless a test sets them: then the
"least loaded" order is by replica count, then bytes, then broker id.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kafka_rebalance.balance import rack_unsafe
from kafka_rebalance.planner import PlanError
from kafka_rebalance.planner.goals.placement import PlacementGoal, RackSafetyGoal, best_destination
from kafka_rebalance.planner.state import ClusterState
from tests.support.clusters import GiB, part, planner_state


def state(brokers: list[Any], partitions: list[dict[str, Any]], **options: Any) -> ClusterState:
    return planner_state(brokers, partitions, **options)


def rows(s: ClusterState) -> list[list[int]]:
    """Rows in the state's partition order: by topic, then partition."""
    return [s.row(p) for p in range(s.n_parts)]


def index(s: ClusterState, topic: str, partition: int) -> int:
    return next(i for i, p in enumerate(s.parts) if (p.topic, p.partition) == (topic, partition))


# --------------------------------------------------------------------------- best_destination


def test_destination_is_under_its_replica_ceiling_then_fewest_bytes_over_its_target_then_lowest_id() -> None:
    # Bytes: 0 holds 6 GiB (t-0, t-1), 1 holds 5 GiB (t-0), 2 and 3 hold 1 GiB each.
    s = state([0, 1, 2, 3], [part("t", 0, [0, 1], size_bytes=5 * 2**30), part("t", 1, [0, 2]), part("t", 2, [3])])
    assert best_destination(s, 2, [3], None, 2) == 2          # every broker at its (zero) ceiling: fewest bytes
    s.byte_target[:] = [0, 5 * 2**30, 0, 0]
    assert best_destination(s, 2, [3], None, 2) == 1          # 1 holds exactly its target; 2 is 1 GiB over
    s.hi[:] = [9, 0, 9, 9]
    assert best_destination(s, 2, [3], None, 2) == 2          # 1 is at its replica ceiling, 0 and 2 are under it
    s.byte_target[:] = [5 * 2**30, 0, 0, 0]
    assert best_destination(s, 2, [3], None, 2) == 0          # 0 and 2 both 1 GiB over: the lower id
    assert best_destination(s, 0, [0, 3], 0, 2) == 2          # never a broker of the row: 3 is skipped


def test_a_replica_leaving_a_crowded_partition_goes_to_the_rack_it_misses_so_no_repair_follows() -> None:
    # t-0 on 0 and 1 (rack a, crowded) and 3 (rack b); 1 is decommissioned. Broker 2 (rack a) is empty and 5 (rack c)
    # the fullest, yet 5 takes it: the move that must happen anyway also mends the rack, saving the repair's move.
    s = state([(0, "a"), (1, "a"), (2, "a"), (3, "b"), (4, "b"), (5, "c")],
              [part("t", 0, [0, 1, 3]), part("u", 0, [5]), part("u", 1, [5])], decommission_brokers=(1,))
    assert best_destination(s, 0, [0, 1, 3], 1, 3) == 5
    PlacementGoal().optimize(s)
    assert rows(s)[0] == [0, 5, 3] and RackSafetyGoal().violations(s).tolist() == []
    # A rack-safe row keeps the plain order: the empty broker 2, in the leaving replica's own rack.
    s = state([(0, "a"), (1, "a"), (2, "a"), (3, "b"), (4, "b"), (5, "c")],
              [part("t", 0, [1, 3, 5]), part("u", 0, [0]), part("u", 1, [4])], decommission_brokers=(1,))
    assert best_destination(s, 0, [1, 3, 5], 1, 3) == 2


def test_a_crowded_partitions_leaving_replica_ranks_racks_by_the_replicas_that_stay() -> None:
    # RF 4 over racks a (0, 1, 2), b (3, 4) and c (5): at most 2 per rack. t-0 on 0, 1, 2 (a) and 3 (b); 0 leaves. The
    # replicas that stay: a 2, b 1, c 0, so c's 5 comes first though 4 (rack b, empty) leads the plain order and rack b
    # could take it (1 < 2). Counting the leaving replica's rack alone would rank b with c and send it to 4.
    s = state([(0, "a"), (1, "a"), (2, "a"), (3, "b"), (4, "b"), (5, "c")], [part("t", 0, [0, 1, 2, 3]), part("u", 0, [5])],
              decommission_brokers=(0,))
    assert best_destination(s, 0, [0, 1, 2, 3], 0, 4) == 5


def test_the_largest_replicas_that_must_leave_are_placed_first() -> None:
    # Broker 2 leaves with a-0 (1 GiB) and b-0 (5 GiB); 0 holds 3 GiB, 1 nothing. The 5 GiB replica takes the empty
    # broker and the 1 GiB one the other: 4 and 5 GiB. In partition order both would land on 1 (6 and 3 GiB).
    s = state([0, 1, 2], [part("a", 0, [2]), part("b", 0, [2], size_bytes=5 * 2**30),
                          part("x", 0, [0], size_bytes=3 * 2**30)], decommission_brokers=(2,))
    PlacementGoal().optimize(s)
    assert rows(s)[:2] == [[0], [1]]
    assert s.bytes.tolist() == [4 * 2**30, 5 * 2**30, 0]


def test_replicas_of_equal_size_that_must_leave_are_placed_in_partition_order() -> None:
    # Broker 2 leaves with t-0..t-7: the odd ones 2 GiB, the even ones 1 GiB. Largest first, ties in partition order:
    # t-1, t-3, t-5, t-7, then t-0, t-2, t-4, t-6, each to the emptier of 0 and 1 (the lower id on a tie), so they
    # alternate 0, 1, 0, 1: t-1, t-5, t-0, t-4 on 0 and t-3, t-7, t-2, t-6 on 1. (An unstable sort may order ties
    # differently from one machine to the next: the plan would too.)
    s = state([0, 1, 2], [part("t", i, [2], size_bytes=(1 + i % 2) * 2**30) for i in range(8)], decommission_brokers=(2,))
    PlacementGoal().optimize(s)
    assert rows(s) == [[0], [0], [1], [1], [0], [0], [1], [1]]
    assert s.bytes.tolist() == [6 * 2**30, 6 * 2**30, 0]


def test_destination_skips_ineligible_brokers_and_rack_unsafe_ones() -> None:
    s = state([(0, "a"), (1, "a"), (2, "b", False), (3, "b")], [part("t", 0, [0, 3]), part("t", 1, [3, 0])],
              decommission_brokers=(1,))
    # Only 0 and 3 are eligible; both are in t-0's row.
    assert best_destination(s, 0, [0, 3], 0, 2) is None
    s2 = state([(0, "a"), (1, "a"), (2, "b"), (3, "c")], [part("t", 0, [0, 2])])
    # Replacing 2 (rack b): 1 is the emptiest but shares rack a with 0; 3 (rack c) is safe.
    assert best_destination(s2, 0, [0, 2], 2, 2) == 3
    # Replacing 0 (rack a) by 1 stays in rack a, which is allowed; with other_rack it is not.
    assert best_destination(s2, 0, [0, 2], 0, 2) == 1
    assert best_destination(s2, 0, [0, 2], 0, 2, other_rack=True) == 3


def test_a_replica_leaving_a_rack_no_eligible_broker_is_in_may_go_to_a_rack_that_already_holds_one() -> None:
    # RF 4 over the eligible racks a (brokers 0, 1, 2), b (3) and c (4): at most ceil(4/3) = 2 per rack. Broker 5 (rack
    # d) is dead: d is not a rack the replicas must span, so its replica goes to a second broker of rack a. (Found by
    # a corpus draw: seed 1000 of tests/planner/test_plan_properties.py was refused as impossible.)
    s = state([(0, "a"), (1, "a"), (2, "a"), (3, "b"), (4, "c"), (5, "d", False)], [part("t", 0, [4, 5, 3, 0])])
    assert s.n_racks == 3
    assert best_destination(s, 0, [4, 5, 3, 0], 5, 4) == 1
    PlacementGoal().optimize(s)
    assert sorted(s.row(0)) == [0, 1, 3, 4] and s.rack_safe(s.row(0))
    # A rack an eligible broker is in must still not be left empty: replacing 3 (rack b's only replica) by a broker
    # of rack a would leave the row over two racks.
    s2 = state([(0, "a"), (1, "a"), (2, "a"), (3, "b"), (4, "c")], [part("t", 0, [4, 2, 3, 0])])
    assert not s2.rack_ok([4, 2, 3, 0], 3, 1, 4)


# --------------------------------------------------------------------------- PlacementGoal


def test_accept_move_only_to_an_eligible_broker_outside_the_row_of_a_movable_partition() -> None:
    s = state([0, 1, 2, 3], [part("t", 0, [0, 1]), part("x", 0, [0, 1]), part("h", 0, [0, 1], bytes_in_per_sec=5000.0)],
              decommission_brokers=(3,), exclude_topics=("x",), throttle_bytes_per_sec=5000)
    goal = PlacementGoal()
    t, x, h = index(s, "t", 0), index(s, "x", 0), index(s, "h", 0)
    assert goal.accept_move(s, t, 0, 2)
    assert not goal.accept_move(s, t, 0, 3)   # decommissioned
    assert not goal.accept_move(s, t, 0, 1)   # already a replica
    assert not goal.accept_move(s, x, 0, 2)   # excluded topic
    assert not goal.accept_move(s, h, 0, 2)   # produce rate at the throttle


def test_dead_broker_replica_moves_to_the_least_loaded_eligible_broker() -> None:
    s = state([0, 1, 2, (3, None, False)], [part("t", 0, [3, 0]), part("t", 1, [1, 2]), part("t", 2, [1, 0])])
    PlacementGoal().optimize(s)
    # Eligible counts before: 0:2, 1:2, 2:1 -> broker 2 takes it, in 3's place (position kept).
    assert rows(s) == [[2, 0], [1, 2], [1, 0]]
    assert s.counts.tolist() == [2, 2, 2, 0]


def test_replication_factor_decrease_drops_an_ineligible_replica_first() -> None:
    s = state([0, 1, 2, 3], [part("t", 0, [0, 1, 3])], replication_factor=2, decommission_brokers=(3,))
    PlacementGoal().optimize(s)
    assert rows(s) == [[0, 1]]


def test_replication_factor_decrease_drops_the_fullest_broker_then_a_follower_then_the_lowest_id() -> None:
    # x-0 and x-1 (excluded, so left at RF 1) load broker 2.
    s = state([0, 1, 2], [part("t", 0, [0, 1, 2], leader=1), part("x", 0, [2]), part("x", 1, [2])],
              replication_factor=2, exclude_topics=("x",))
    PlacementGoal().optimize(s)
    assert rows(s)[0] == [0, 1]
    # Equal counts: the leader (1) stays, and of the followers 0 and 2 the lower id goes.
    s = state([0, 1, 2], [part("t", 0, [0, 1, 2], leader=1)], replication_factor=2)
    PlacementGoal().optimize(s)
    assert rows(s) == [[1, 2]]
    # Broker counts minus their ceiling decide before leadership.
    s = state([0, 1, 2], [part("t", 0, [0, 1, 2], leader=1)], replication_factor=2)
    s.hi[:] = [1, 0, 1]
    PlacementGoal().optimize(s)
    assert rows(s) == [[0, 2]]


def test_replication_factor_increase_adds_on_the_least_loaded_broker() -> None:
    s = state([0, 1, 2, 3], [part("t", 0, [0]), part("x", 0, [1]), part("x", 1, [2])], replication_factor=2,
              exclude_topics=("x",))
    PlacementGoal().optimize(s)
    assert rows(s) == [[0, 3], [1], [2]]
    assert s.counts.tolist() == [1, 1, 1, 1]


def test_partitions_already_right_are_untouched() -> None:
    s = state([0, 1, 2], [part("t", 0, [0, 1]), part("t", 1, [1, 2])])
    PlacementGoal().optimize(s)
    assert not s.touched.any() and s.cur == {}


def test_no_eligible_destination_names_the_partition_broker_and_constraint() -> None:
    s = state([0, (1, None, False)], [part("t", 0, [0, 1])])
    with pytest.raises(PlanError) as err:
        PlacementGoal().optimize(s)
    assert str(err.value) == ("partition t-0: no eligible broker can take its replica from broker 1 without breaking "
                              "rack safety or doubling a replica (1 eligible brokers, replication factor 2)")


def test_replication_factor_increase_without_a_rack_safe_broker_is_refused() -> None:
    s = state([(0, "a"), (1, "a")], [part("t", 0, [0])], replication_factor=2)
    s.n_racks = 2  # as if a second rack existed: rack a may then hold only one replica
    with pytest.raises(PlanError) as err:
        PlacementGoal().optimize(s)
    assert str(err.value) == "--replication-factor 2: partition t-0 cannot get another rack-safe replica (2 eligible brokers)"


def test_hot_partition_that_must_move_is_refused_with_the_reason() -> None:
    s = state([0, 1, 2], [part("t", 0, [2, 0], bytes_in_per_sec=8000.0)], decommission_brokers=(2,),
              throttle_bytes_per_sec=8000)
    with pytest.raises(PlanError) as err:
        PlacementGoal().optimize(s)
    assert str(err.value) == ("partition t-0 must move (broker 2 is decommissioned) but its produce rate 8,000 B/s is at "
                              "or above the throttle 8,000 B/s, so its new replica could never catch up; raise --throttle "
                              "above 8,000")
    s = state([0, 1, (2, None, False)], [part("t", 0, [2, 0], bytes_in_per_sec=9000.0)], throttle_bytes_per_sec=8000)
    with pytest.raises(PlanError, match=r"must move \(broker 2 is dead\)"):
        PlacementGoal().optimize(s)
    s = state([0, 1, 2], [part("t", 0, [0], bytes_in_per_sec=9000.0)], throttle_bytes_per_sec=8000, replication_factor=2)
    with pytest.raises(PlanError, match=r"must move \(--replication-factor 2\)"):
        PlacementGoal().optimize(s)


def test_a_frozen_partition_on_a_decommissioned_broker_makes_decommissioning_impossible() -> None:
    s = state([0, 1, 2], [part("x", 0, [2, 0])], decommission_brokers=(2,), exclude_topics=("x",))
    with pytest.raises(PlanError) as err:
        PlacementGoal().optimize(s)
    assert str(err.value) == ("cannot decommission broker 2: partition x-0 has a replica there and cannot move "
                              "(its topic is in --exclude-topics)")
    s = state([0, 1, 2], [part("t", 0, [2, 0], leader=-1)], decommission_brokers=(2,))
    with pytest.raises(PlanError, match=r"partition t-0 has a replica there and cannot move \(it has no leader to copy from\)"):
        PlacementGoal().optimize(s)


def test_a_frozen_partition_on_a_dead_broker_stays_without_error() -> None:
    s = state([0, 1, (2, None, False)], [part("t", 0, [2, 0], leader=-1), part("u", 0, [2, 1])])
    PlacementGoal().optimize(s)
    assert rows(s) == [[2, 0], [0, 1]]


# --------------------------------------------------------------------------- RackSafetyGoal

RACKS = [(0, "a"), (1, "a"), (2, "b"), (3, "b"), (4, "c")]


def test_violations_are_crowded_racks_and_too_few_racks() -> None:
    s = state(RACKS, [
        part("t", 0, [0, 1]),            # two in rack a (cap 1 of 3 racks): crowded
        part("t", 1, [0, 2]),            # a, b: fine
        part("t", 2, [0, 2, 4]),         # a, b, c: fine
        part("t", 3, [0, 1, 2, 3]),      # a, a, b, b: cap 2 holds, but only 2 of 3 racks
        part("t", 4, [0, 2, 4, 1]),      # a, b, c, a: fine
        part("t", 5, [0]),
    ])
    assert RackSafetyGoal().violations(s).tolist() == [0, 3]


def test_the_vectorised_violations_agree_with_the_one_rule_on_every_row() -> None:
    """``violations`` is ``balance.rack_unsafe`` over the whole state; the veto and the gate ask the rule itself."""
    rng = np.random.default_rng(7)
    brokers = [(0, "a"), (1, "a"), (2, "b"), (3, "b"), (4, "c"), (5, "a"), (6, "c")]
    parts = [part("t", i, [int(b) for b in rng.choice(7, size=int(rng.integers(1, 6)), replace=False)]) for i in range(400)]
    s = state(brokers, parts)
    by_rule = [i for i, row in enumerate(rows(s)) if rack_unsafe([s.rack[b] for b in row], s.n_racks)]
    assert RackSafetyGoal().violations(s).tolist() == by_rule
    assert 0 < len(by_rule) < 400  # both kinds of rows were drawn
    assert [i for i, row in enumerate(rows(s)) if not s.rack_safe(row)] == by_rule
    assert np.flatnonzero(s.originally_unsafe()).tolist() == by_rule  # (nothing moved: the rows are the original)


def test_no_racks_means_no_violations_and_no_repair() -> None:
    s = state([0, 1, 2], [part("t", 0, [0, 1])])
    goal = RackSafetyGoal()
    assert goal.violations(s).tolist() == []
    goal.optimize(s)
    assert goal.unrepaired == [] and s.cur == {}


def test_repair_moves_a_follower_of_the_crowded_rack_to_the_least_loaded_broker_of_a_free_rack() -> None:
    s = state(RACKS, [part("t", 0, [0, 1], leader=0), part("u", 0, [2]), part("u", 1, [2])])
    goal = RackSafetyGoal()
    goal.optimize(s)
    # Broker 1 (follower) leaves rack a; 2, 3 (rack b) and 4 (rack c) may take it; 3 and 4 are
    # empty, and 3 has the lower id.
    assert rows(s)[0] == [0, 3] and goal.unrepaired == []
    s = state(RACKS, [part("t", 0, [0, 1], leader=1)])
    RackSafetyGoal().optimize(s)
    assert rows(s)[0] == [2, 1]   # the leader stays; the follower 0 goes
    # Both crowded brokers over their (zero) replica ceilings: the one holding more bytes over its target gives,
    # before replica counts or leadership are asked. 0 holds 6 GiB in two replicas, 1 holds 1 GiB and 2 MiB in
    # three: the leader 0 goes.
    crowded = [part("t", 0, [0, 1], leader=0), part("u", 0, [0], size_bytes=5 * 2**30),
               part("v", 0, [1], size_bytes=2**20), part("v", 1, [1], size_bytes=2**20)]
    s = state(RACKS, crowded)
    RackSafetyGoal().optimize(s)
    assert rows(s)[0] == [2, 1]
    s = state(RACKS, crowded)
    s.hi[:] = [5, 0, 5, 5, 5]                                # over its replica ceiling comes first: 1 goes
    RackSafetyGoal().optimize(s)
    assert rows(s)[0] == [0, 2]


def test_repair_victim_is_over_its_ceiling_strictly_then_furthest_over_its_byte_target() -> None:
    # t-0 crowds rack a on 0 (the leader, 1 replica) and 1 (2 replicas, with v-0), 1 GiB each.
    # 0 holds exactly its ceiling of 1, 1 is under its ceiling of 5: neither is over, so bytes decide: 1 (2 GiB) gives,
    # to rack b's empty 2 (under its ceiling, the lowest id).
    s = state(RACKS, [part("t", 0, [0, 1], leader=0), part("v", 0, [1])])
    s.hi[:] = [1, 5, 5, 5, 5]
    RackSafetyGoal().optimize(s)
    assert rows(s)[0] == [0, 2]
    # Bytes over the target, not bytes: 0 holds 2 GiB (t-0, u-0) against a target of 0, 1 holds 1 GiB against 3 GiB:
    # 0 is 2 GiB over, 1 is 2 GiB under, so the leader 0 gives (to 2).
    s = state(RACKS, [part("t", 0, [0, 1], leader=0), part("u", 0, [0])])
    s.byte_target[:] = [0, 3 * 2**30, 0, 0, 0]
    RackSafetyGoal().optimize(s)
    assert rows(s)[0] == [2, 1]


def test_a_repair_spreading_a_partition_takes_from_a_rack_holding_two_even_where_another_is_heavier() -> None:
    # RF 5 over racks a (0, 1), b (2, 3), c (4, 5) and d (6): 2 + 2 + 1 spans three of four racks. Broker 4 (rack c's
    # one replica) is the heaviest (u-0, 5 GiB), but giving it would leave c empty: a follower of a rack holding two
    # gives, the lowest id (1), to rack d's 6, in one move.
    s = state([(0, "a"), (1, "a"), (2, "b"), (3, "b"), (4, "c"), (5, "c"), (6, "d")],
              [part("t", 0, [0, 1, 2, 3, 4], leader=0), part("u", 0, [4], size_bytes=5 * 2**30)])
    RackSafetyGoal().optimize(s)
    assert rows(s)[0] == [0, 6, 2, 3, 4] and s.changes == [(0, 1, 6)]


def test_repair_spreads_a_partition_over_the_missing_rack() -> None:
    s = state(RACKS, [part("t", 0, [0, 1, 2, 3], leader=0)])
    RackSafetyGoal().optimize(s)
    row = rows(s)[0]
    assert sorted({s.rack[b] for b in row}) == [0, 1, 2]
    # Every broker holds one replica, so a follower goes, the lowest id first: 1, to rack c's 4.
    assert row == [0, 4, 2, 3]


def test_frozen_or_unrepairable_partitions_are_listed_not_moved() -> None:
    s = state([(0, "a"), (1, "a"), (2, "b")], [part("x", 0, [0, 1]), part("t", 0, [0, 1])], exclude_topics=("x",),
              decommission_brokers=(2,))
    s.n_racks = 2  # rack b exists but its only broker is leaving: nowhere to repair to
    goal = RackSafetyGoal()
    goal.optimize(s)
    assert goal.unrepaired == ["t-0", "x-0"]
    assert rows(s) == [[0, 1], [0, 1]]


def test_hot_partition_needing_repair_is_refused() -> None:
    s = state(RACKS, [part("t", 0, [0, 1], bytes_in_per_sec=6000.0)], throttle_bytes_per_sec=6000)
    with pytest.raises(PlanError, match=r"partition t-0 must move \(rack-safety repair\)"):
        RackSafetyGoal().optimize(s)


def test_rack_safety_vetoes_moves_that_crowd_a_rack() -> None:
    s = state(RACKS, [part("t", 0, [0, 2])])
    goal = RackSafetyGoal()
    assert goal.accept_move(s, 0, 2, 4)       # b -> c
    assert goal.accept_move(s, 0, 2, 3)       # b -> b
    assert not goal.accept_move(s, 0, 2, 1)   # b -> a, which already holds 0


def test_destination_of_a_repair_respects_the_rack_cap() -> None:
    s = state(RACKS, [part("t", 0, [0, 1])])
    per = {0: 2}
    assert RackSafetyGoal._destination(s, 0, [0, 1], 1, per, 1, False) == 2
    assert RackSafetyGoal._destination(s, 0, [0, 1], 1, {0: 2, 1: 1, 2: 1}, 1, False) is None
    # Cap 2: rack b (one replica) may take it, but rack c holds none: c first, so the span needs no second move.
    assert RackSafetyGoal._destination(s, 0, [0, 1], 1, {0: 2, 1: 1}, 2, False) == 4
    assert RackSafetyGoal._destination(s, 0, [0, 1], 1, {0: 2, 1: 1, 2: 1}, 2, False) == 2  # both hold one: the order
    s.byte_target[:] = [0, 0, 0, 0, 2**30]                  # 4 is the one below its byte target
    assert RackSafetyGoal._destination(s, 0, [0, 1], 1, per, 1, False) == 4
    s.hi[:] = [0, 0, 0, 5, 0]                               # 3 is the one under its replica ceiling
    assert RackSafetyGoal._destination(s, 0, [0, 1], 1, per, 1, False) == 3
    assert isinstance(RackSafetyGoal().violations(s), np.ndarray)


def test_the_destination_of_a_repair_is_never_a_broker_of_the_row_in_a_rack_under_its_cap() -> None:
    # RF 4 over racks a (0, 1, 2), b (3) and c (4): cap 2. Rack b holds one (3), under the cap, and 3 is lighter than 4
    # (u-0, u-1), but 3 holds a replica already: 4 takes the follower 1.
    s = state([(0, "a"), (1, "a"), (2, "a"), (3, "b"), (4, "c")], [part("t", 0, [0, 1, 2, 3]), part("u", 0, [4]), part("u", 1, [4])])
    assert RackSafetyGoal._destination(s, 0, [0, 1, 2, 3], 1, {0: 3, 1: 1}, 2, False) == 4


def test_the_judges_view_of_a_cluster_without_racks_counts_no_rack_violation() -> None:
    # Without racks ``violations`` is empty, and the judge indexes the movable partitions with it.
    from kafka_rebalance.planner.judge import state_view

    s = state([0, 1, 2], [part("t", 0, [0, 1]), part("t", 1, [1, 2])])
    assert state_view(s).rack_violations == 0


def test_a_replica_that_must_leave_goes_to_a_broker_with_disk_room_first() -> None:
    # Broker 1 is the least loaded but its disk limit leaves no room for a 1 GiB replica; broker 2 has room.
    s = state([0, 1, 2], [part("t", 0, [0]), part("u", 0, [2]), part("u", 1, [2])])
    s.disk_limit[:] = [np.inf, 0.5 * 2**30, np.inf]
    assert best_destination(s, 0, [0], 0, 1) == 2
    # With no broker left with room, the replica still leaves (the disk-capacity goal's check names the broker).
    s.disk_limit[:] = [np.inf, 0.5 * 2**30, 0.5 * 2**30]
    assert best_destination(s, 0, [0], 0, 1) == 1


# --------------------------------------------------------------------------- more of the rules, one case each


def test_a_dead_broker_0s_only_replica_moves_too() -> None:
    # Broker 0 (index 0, the matrix's first column value) is dead and holds t-0 alone: it goes to the least loaded.
    s = state([(0, None, False), 1, 2], [part("t", 0, [0]), part("u", 0, [1])])
    PlacementGoal().optimize(s)
    assert rows(s) == [[2], [1]]


def test_replication_factor_decrease_drops_a_follower_before_the_leader_even_at_a_lower_id() -> None:
    # Equal counts: the leader 0 stays though its id is the lowest; of the followers 1 and 2, 1 goes.
    s = state([0, 1, 2], [part("t", 0, [0, 1, 2], leader=0)], replication_factor=2)
    PlacementGoal().optimize(s)
    assert rows(s) == [[0, 2]]


def test_replication_factor_decrease_drops_the_decommissioned_replica_not_an_eligible_one() -> None:
    # u-0 (excluded: left at RF 1) loads broker 1, so were an eligible replica dropped and 3's then replaced, broker 2
    # would take it.
    s = state([0, 1, 2, 3], [part("t", 0, [0, 1, 3]), part("u", 0, [1])], replication_factor=2, decommission_brokers=(3,),
              exclude_topics=("u",))
    PlacementGoal().optimize(s)
    assert rows(s) == [[0, 1], [1]]


def test_a_dead_brokers_replica_may_go_to_its_own_rack() -> None:
    # Rack a: 0 (dead) and 1; rack b: 2 and 3. t-0 on 0 and 2: 0's replica may go to 1, in the rack it leaves.
    s = state([(0, "a", False), (1, "a"), (2, "b"), (3, "b")], [part("t", 0, [0, 2])])
    PlacementGoal().optimize(s)
    assert rows(s) == [[1, 2]]


def test_the_hot_error_names_the_throttle_its_rate_needs_at_the_throttles_efficiency() -> None:
    # 9,000 B/s at an efficiency of 0.9 needs a throttle above 10,000.
    s = state([0, 1, 2], [part("t", 0, [2, 0], bytes_in_per_sec=9000.0)], decommission_brokers=(2,),
              throttle_bytes_per_sec=8000, throttle_efficiency=0.9)
    with pytest.raises(PlanError, match=r"raise --throttle above 10,000$"):
        PlacementGoal().optimize(s)


def test_placements_check_counts_movable_replicas_left_on_leaving_brokers_and_partitions_off_their_rf() -> None:
    from kafka_rebalance.planner.goals.view import BalanceView, BrokerView

    def leaving(bid: int, movable: int) -> BrokerView:
        return BrokerView(bid, movable, 0, 0, 0.0, 0.0, 0.0, 0, 0, 0, movable)

    check = PlacementGoal().check(BalanceView((), (leaving(7, 3), leaving(8, 0)), 0.1, 10.0, (0, 0), rf_off_target=2))
    assert (check.value, check.reached, check.offenders, check.per_broker) == (5, False, (7,), {7: 3.0, 8: 0.0})
    assert check.name == "placement" and check.hard
    check = PlacementGoal().check(BalanceView((), (leaving(8, 0),), 0.1, 10.0, (0, 0)))
    assert (check.value, check.reached, check.offenders) == (0, True, ())
    check = PlacementGoal().check(BalanceView((), (), 0.1, 10.0, (0, 0), rf_off_target=1))
    assert (check.value, check.reached) == (1, False)


def test_rack_safetys_check_is_the_number_of_violations() -> None:
    from kafka_rebalance.planner.goals.view import BalanceView

    check = RackSafetyGoal().check(BalanceView((), (), 0.1, 10.0, (0, 0), rack_violations=2))
    assert (check.name, check.hard, check.value, check.reached) == ("rack-safety", True, 2, False)
    assert RackSafetyGoal().check(BalanceView((), (), 0.1, 10.0, (0, 0))).reached


def test_in_one_rack_no_partition_violates_rack_safety() -> None:
    s = state([(0, "a"), (1, "a"), (2, "a")], [part("t", 0, [0, 1]), part("t", 1, [0, 1, 2])])
    assert RackSafetyGoal().violations(s).tolist() == []


def test_a_frozen_violation_does_not_end_the_repairs_of_the_others() -> None:
    # a-0 (excluded, first in order) and t-0 both crowd rack a; a-0 is listed, t-0 still repaired (its follower 1 to
    # rack b's 2).
    s = state(RACKS, [part("a", 0, [0, 1]), part("t", 0, [0, 1])], exclude_topics=("a",))
    goal = RackSafetyGoal()
    goal.optimize(s)
    assert goal.unrepaired == ["a-0"] and rows(s) == [[0, 1], [0, 2]]


def test_a_repair_moves_a_replica_of_the_crowded_rack_only() -> None:
    # t-0 on 0 and 1 (rack a, crowded) and 2 (rack b, at its cap of 1). Broker 2 is the fullest (u-0, u-1), yet only
    # rack a gives: its follower 1 goes to rack c's 4 (3, the least loaded, is in rack b, at its cap).
    s = state(RACKS, [part("t", 0, [0, 1, 2]), part("u", 0, [2]), part("u", 1, [2])])
    RackSafetyGoal().optimize(s)
    assert rows(s)[0] == [0, 4, 2]


def test_a_repair_never_sends_a_replica_to_a_broker_of_its_own_row() -> None:
    # RF 4 over racks a (0, 1, 2), b (3) and c (4): 3 + 1 crowds rack a (cap 2). Broker 3, in the row, is lighter
    # than 4 (which holds u-0 and u-1) and its rack is under the cap, but it holds a replica already: 4 takes the
    # follower 1 (followers before the leader, the lower id first).
    s = state([(0, "a"), (1, "a"), (2, "a"), (3, "b"), (4, "c")],
              [part("t", 0, [0, 1, 2, 3]), part("u", 0, [4]), part("u", 1, [4])])
    RackSafetyGoal().optimize(s)
    assert rows(s)[0] == [0, 4, 2, 3]


def test_a_repair_spreading_a_partition_sends_it_to_a_rack_it_misses() -> None:
    # RF 5 over racks a (0, 1), b (2, 3), c (4, 5) and d (6): 2 + 2 + 1 spans three of four racks. A follower of a
    # rack holding two (1) goes to rack d's 6, though 5 is lighter (rack c already holds one, as 6 holds u-0).
    s = state([(0, "a"), (1, "a"), (2, "b"), (3, "b"), (4, "c"), (5, "c"), (6, "d")],
              [part("t", 0, [0, 1, 2, 3, 4]), part("u", 0, [6])])
    RackSafetyGoal().optimize(s)
    assert rows(s)[0] == [0, 6, 2, 3, 4]


def test_a_repair_passes_over_the_least_loaded_broker_when_it_is_in_the_victims_rack() -> None:
    # Rack a: 0, 1 and 2 (empty, the least loaded); rack b: 3, holding u-0. t-0 crowds rack a: its follower goes to 3.
    s = state([(0, "a"), (1, "a"), (2, "a"), (3, "b")], [part("t", 0, [0, 1]), part("u", 0, [3])])
    RackSafetyGoal().optimize(s)
    assert rows(s) == [[0, 3], [3]]


def test_a_repair_with_no_disk_room_anywhere_goes_to_the_first_broker_in_order() -> None:
    # t-0 crowds rack a; rack b's 2 and 3 may take its follower, neither with room: the first in order (2) takes it.
    s = state(RACKS, [part("t", 0, [0, 1])])
    s.disk_limit[:] = [np.inf, np.inf, 0.5 * 2**30, 0.5 * 2**30, 0.5 * 2**30]
    assert RackSafetyGoal._destination(s, 0, [0, 1], 1, {0: 2}, 1, False) == 2


def test_the_exact_model_keeps_every_partition_at_its_replication_factor_and_gives_a_hot_one_no_replica() -> None:
    from kafka_rebalance.planner import exact

    GiB = 2**30
    s = state([0, 1, 2], [part("t", 0, [0], size_bytes=GiB), part("t", 1, [1], size_bytes=2 * GiB)], replication_factor=2)
    found = exact._solve(s, 0.0, goals=[PlacementGoal()])
    # each keeps its replica (free) and gains one (its size): 3 GiB
    assert found.status is exact.ExactStatus.OPTIMAL and found.bytes_moved == 3 * GiB
    assert len(found.rows[0]) == 2 and 0 in found.rows[0] and len(found.rows[1]) == 2 and 1 in found.rows[1]
    s = state([0, 1, 2], [part("t", 0, [0, 1], size_bytes=GiB)], replication_factor=1)
    found = exact._solve(s, 0.0, goals=[PlacementGoal()])
    assert found.bytes_moved == 0 and len(found.rows[0]) == 1 and found.rows[0][0] in (0, 1)
    s = state([0, 1, 2], [part("t", 0, [0], size_bytes=GiB, bytes_in_per_sec=9000.0)], replication_factor=2,
              throttle_bytes_per_sec=8000)
    assert exact._solve(s, 0.0, goals=[PlacementGoal()]).status is exact.ExactStatus.INFEASIBLE


def test_the_exact_model_caps_each_rack_and_spreads_a_partition_over_as_many_racks_as_it_must() -> None:
    from kafka_rebalance.planner import exact

    GiB = 2**30
    # RACKS: a = 0, 1; b = 2, 3; c = 4. t-0 (1 GiB, RF 2) crowds rack a: one replica leaves it. u-0 (2 GiB, RF 4) is 2 + 2
    # over racks a and b: at most ceil(4 / 3) = 2 per rack, but over min(4, 3) = 3 racks, so one replica goes to 4.
    s = state(RACKS, [part("t", 0, [0, 1], size_bytes=GiB), part("u", 0, [0, 1, 2, 3], size_bytes=2 * GiB)])
    found = exact._solve(s, 0.0, goals=[PlacementGoal(), RackSafetyGoal()])
    assert found.status is exact.ExactStatus.OPTIMAL and found.bytes_moved == 3 * GiB
    t0, u0 = found.rows[0], found.rows[1]
    assert len(t0) == 2 and len({s.rack[b] for b in t0}) == 2
    assert len(u0) == 4 and 4 in u0 and sorted(s.rack[b] for b in u0).count(0) <= 2 and sorted(s.rack[b] for b in u0).count(1) <= 2
    # Without racks nothing crowds: nothing moves.
    s = state([0, 1, 2], [part("t", 0, [0, 1], size_bytes=GiB)])
    assert exact._solve(s, 0.0, goals=[PlacementGoal(), RackSafetyGoal()]).rows == {}


def test_a_repair_fills_a_missing_rack_first_and_makes_the_fewest_moves() -> None:
    # RF 4 over racks a (0, 1, 2), b (3, 5) and c (4): cap 2, three racks to span. t-0 holds 0, 1, 2 in a and 3 in b.
    # One move from a into c (2 + 1 + 1) repairs it; into b (2 + 2 + 0) would leave c unspanned and need a second.
    # Broker 5 (rack b) is the emptiest, first in the destination order: the rack count must decide, not the order.
    s = state([(0, "a"), (1, "a"), (2, "a"), (3, "b"), (4, "c"), (5, "b")],
              [part("t", 0, [0, 1, 2, 3]), part("u", 0, [4], size_bytes=4 * GiB), part("u", 1, [4], size_bytes=4 * GiB)])
    RackSafetyGoal().optimize(s)
    row = s.row(0)
    assert sorted(s.rack[b] for b in row) == sorted([s.rack[0], s.rack[0], s.rack[3], s.rack[4]]), row
    assert len(set(row) - {0, 1, 2, 3}) == 1 and 4 in row, row


def test_a_repair_never_picks_a_broker_of_the_row_where_no_rack_is_missing() -> None:
    # RF 5 over racks a (0, 1, 2), b (3, 5) and c (4, 6): cap 2, all three spanned as 3 + 1 + 1. Racks b and c may
    # take a's extra replica; 3 is the lightest broker of b but holds a replica already: 5 (lighter than 6) takes it.
    s = state([(0, "a"), (1, "a"), (2, "a"), (3, "b"), (4, "c"), (5, "b"), (6, "c")],
              [part("t", 0, [0, 1, 2, 3, 4]), part("u", 0, [5], size_bytes=GiB), part("u", 1, [6], size_bytes=2 * GiB)])
    a, b, c = (s.rack[x] for x in (0, 3, 4))
    assert RackSafetyGoal._destination(s, 0, [0, 1, 2, 3, 4], 1, {a: 3, b: 1, c: 1}, 2, False) == 5


def test_a_missing_rack_without_disk_room_is_still_the_only_place_a_spreading_repair_may_use() -> None:
    # RF 5 over racks a (0, 1), b (2, 3), c (4, 7) and d (5): cap 2, four racks to span, 2 + 2 + 1 + 0. Only rack d
    # widens the span; its one broker has no disk room, yet it is the answer (the disk goal names it), never 7 in c,
    # which has room but would leave d unspanned.
    s = state([(0, "a"), (1, "a"), (2, "b"), (3, "b"), (4, "c"), (5, "d"), (7, "c")], [part("t", 0, [0, 1, 2, 3, 4])])
    s.disk_limit[:] = np.inf
    s.disk_limit[5] = 0.0  # broker 5 (index 5; broker 7 is index 6): no room
    racks = {x: s.rack[x] for x in range(7)}
    per = {racks[0]: 2, racks[2]: 2, racks[4]: 1}
    assert RackSafetyGoal._destination(s, 0, [0, 1, 2, 3, 4], 1, per, 2, True) == 5


@pytest.mark.parametrize("seed", range(40))
def test_the_destination_order_kept_across_moves_is_the_order_sorted_afresh(seed: int) -> None:
    # The rack repair keeps ``destination_order`` current by re-placing the two brokers each move changes.
    import random

    from kafka_rebalance.planner.goals.placement import DestinationOrder, destination_order
    from kafka_rebalance.planner.targets import set_targets
    from tests.support.clusters import drawn_cluster

    snap, options = drawn_cluster(seed)
    s = ClusterState(snap, options)
    set_targets(s)
    kept = DestinationOrder(s)
    assert list(kept) == destination_order(s)
    rng = random.Random(seed)
    for _ in range(30):
        p = rng.randrange(s.n_parts)
        row = s.row(p)
        free = [b for b in range(s.n_brokers) if b not in row]
        if not row or not free:
            continue
        src, dst = rng.choice(row), rng.choice(free)
        s.move(p, src, dst)
        kept.moved(src, dst)
        assert list(kept) == destination_order(s)
