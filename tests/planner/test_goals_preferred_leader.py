"""The preferred-leader goal (planner/goals/preferred_leader.py) on a ClusterState, one rule at a time.

Broker ids equal their index in the state (brokers 0..n-1), and partitions are listed in the
state's order (by topic, then partition), so the expectations read as broker ids. Every case is
small enough to follow by hand; the comments give the counts of preferred leaderships (first
replicas) per broker before and after.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kafka_rebalance.planner.goals.preferred_leader import PreferredLeaderGoal, electable_matrix
from kafka_rebalance.planner.state import ClusterState
from tests.support.clusters import part, planner_state


def state(brokers: list[Any], partitions: list[dict[str, Any]], **options: Any) -> ClusterState:
    return planner_state(brokers, partitions, **options)


def preferred(brokers: list[Any], partitions: list[dict[str, Any]], **options: Any) -> tuple[list[int], list[int], tuple[int, int]]:
    """(each partition's final first replica, the slot it comes from, the floor..ceil) after the goal."""
    goal = PreferredLeaderGoal()
    goal.optimize(state(brokers, partitions, **options))
    choice = goal.choice()
    return choice.preferred.tolist(), choice.column.tolist(), choice.bounds


# --------------------------------------------------------------------------- who may lead


def test_electable_means_eligible_and_in_the_isr_or_new() -> None:
    # Broker 3 is dead, 2 is being decommissioned, 4 is where t-1's replica on 1 moves to.
    s = state([0, 1, 2, (3, None, False), 4], [
        part("t", 0, [0, 1, 2]),                       # 2 is leaving: it may not lead
        part("t", 1, [1, 0], isr=[1]),                 # 0 is out of the ISR
        part("t", 2, [3, 0], leader=0, isr=[0]),       # 3 is dead
        part("t", 3, [0]),                             # replication factor 1: the row is padded with -1
    ], decommission_brokers=(2,))
    s.move(1, 1, 4)                                    # t-1: [1, 0] -> [4, 0]; 4 is new, so it is in sync once the move ends
    rows = s.final_rows()
    assert rows.tolist() == [[0, 1, 2], [4, 0, -1], [3, 0, -1], [0, -1, -1]]
    assert electable_matrix(s, rows).tolist() == [
        [True, True, False],
        [True, False, False],
        [False, True, False],
        [True, False, False],
    ]


def test_an_out_of_sync_replica_that_was_moved_away_and_back_is_not_new() -> None:
    # t-0 [0, 1] with 1 out of the ISR: 1 is "new" only if it was not a replica before the plan.
    s = state([0, 1, 2], [part("t", 0, [0, 1], isr=[0])])
    s.move(0, 0, 2)
    assert electable_matrix(s, s.final_rows()).tolist() == [[True, False]]


# --------------------------------------------------------------------------- (1) a first replica that cannot lead


def test_a_first_replica_out_of_the_isr_hands_over_to_the_electable_replica_with_fewest_leaderships() -> None:
    # a-0's first replica 0 is out of the ISR. Before: 0 leads a-0 and d-0 (2), 1 leads b-0 (1), 2 leads c-0 (1).
    # Candidates 1 and 2 both have one: the earlier slot (1) wins. After: 1, 2, 1, within floor 1..ceil 2.
    parts = [part("a", 0, [0, 1, 2], leader=1, isr=[1, 2]), part("b", 0, [1, 0, 2]), part("c", 0, [2, 0, 1]),
             part("d", 0, [0, 1, 2])]
    assert preferred([0, 1, 2], parts) == ([1, 1, 2, 0], [1, 0, 0, 0], (1, 2))
    # c-0 now starts with 0 instead: 0 leads three, 1 one, 2 none, so a-0 goes to 2 (slot 2).
    parts[2] = part("c", 0, [0, 2, 1])
    assert preferred([0, 1, 2], parts) == ([2, 1, 0, 0], [2, 0, 0, 0], (1, 2))


def test_a_first_replica_that_cannot_lead_stays_when_no_replica_can() -> None:
    # Only 0 is in sync and 0 is being decommissioned: nobody can lead t-0 afterwards, so the row stays.
    parts = [part("t", 0, [1, 0], leader=0, isr=[0]), part("t", 1, [1, 2])]
    prefs, cols, _ = preferred([0, 1, 2], parts, decommission_brokers=(0,))
    assert (prefs[0], cols[0]) == (1, 0)


def test_excluded_topics_keep_their_first_replica_even_when_it_cannot_lead() -> None:
    parts = [part("x", 0, [0, 1], leader=1, isr=[1]), part("y", 0, [0, 1]), part("y", 1, [1, 0])]
    assert preferred([0, 1], parts, exclude_topics=("x",))[0] == [0, 0, 1]
    assert preferred([0, 1], parts)[0] == [1, 0, 1]


# --------------------------------------------------------------------------- (2) give and take


def test_a_broker_above_ceil_gives_first_to_partitions_it_does_not_lead_and_to_the_current_leader() -> None:
    # 0 is the first replica of all three; floor = ceil = 1. Partitions 0 does not lead today go first
    # (p-1, led by 2), and the hand-over prefers the replica that leads already (2: no election needed).
    # Then p-0 goes to 1, the only broker still below the bound; p-2 stays on 0.
    parts = [part("p", 0, [0, 1, 2]), part("p", 1, [0, 1, 2], leader=2), part("p", 2, [0, 2, 1])]
    assert preferred([0, 1, 2], parts) == ([1, 2, 0], [1, 2, 0], (1, 1))


def test_a_broker_below_floor_takes_first_what_it_leads_already() -> None:
    # 0 and 1 lead two each, 2 none; floor 1, ceil 2, so nobody is above ceil and 2 must take one.
    # p-1 is led by 2 already (its preferred replica is 0): taking it needs no leader change.
    parts = [part("p", 0, [0, 1, 2]), part("p", 1, [0, 2, 1], leader=2), part("p", 2, [1, 0, 2]), part("p", 3, [1, 2, 0])]
    assert preferred([0, 1, 2], parts) == ([0, 2, 1, 1], [0, 1, 0, 0], (1, 2))


def test_a_broker_below_floor_takes_only_partitions_where_it_could_win_the_election() -> None:
    # As above, but nobody leads p-1 from 2; 2 is out of p-0's ISR, so p-1 is the one it takes.
    parts = [part("p", 0, [0, 1, 2], isr=[0, 1]), part("p", 1, [0, 2, 1]), part("p", 2, [1, 0, 2]), part("p", 3, [1, 2, 0])]
    assert preferred([0, 1, 2], parts) == ([0, 2, 1, 1], [0, 1, 0, 0], (1, 2))


def test_leadership_moves_along_a_chain_when_no_direct_hand_over_exists() -> None:
    # 0 leads p-0 and p-1 (both [0, 1]), 1 leads p-2 [1, 2], 2 leads nothing; floor = ceil = 1.
    # 0 cannot give to 2 (not a replica), 1 is at the bound: one leadership moves 0 -> 1 and one 1 -> 2.
    parts = [part("p", 0, [0, 1]), part("p", 1, [0, 1]), part("p", 2, [1, 2])]
    prefs, cols, bounds = preferred([0, 1, 2], parts)
    assert bounds == (1, 1)
    assert np.bincount(prefs, minlength=3).tolist() == [1, 1, 1]
    assert (prefs, cols) == ([0, 1, 2], [0, 1, 1])


def test_a_longer_chain_and_counts_that_stay_within_floor_and_ceil() -> None:
    # Racks equal to the replication factor leave each broker one partner: 0-1, 1-2, 2-3. 0 leads three,
    # 3 none. The goal reaches 1..1 (or floor..ceil) for every broker, moving only along the chain.
    parts = [part("p", 0, [0, 1]), part("p", 1, [0, 1]), part("p", 2, [0, 1]), part("p", 3, [1, 2]), part("p", 4, [2, 3])]
    prefs, _, (lo, hi) = preferred([0, 1, 2, 3], parts)
    assert (lo, hi) == (1, 2)
    counts = np.bincount(prefs, minlength=4)
    assert ((counts >= lo) & (counts <= hi)).all(), counts
    assert prefs[4] == 3  # 3's only partition


def test_dead_and_decommissioned_brokers_get_no_preferred_leadership_and_bounds_count_eligible_brokers() -> None:
    # 2 is decommissioned: it leads nothing afterwards (its partitions' other replicas lead), and the
    # bounds are over the two eligible brokers.
    parts = [part("p", 0, [2, 0], isr=[2, 0]), part("p", 1, [2, 1]), part("p", 2, [0, 1]), part("p", 3, [1, 0])]
    prefs, _, bounds = preferred([0, 1, 2], parts, decommission_brokers=(2,))
    assert 2 not in prefs
    assert bounds == (2, 2)
    assert np.bincount(prefs, minlength=3).tolist() == [2, 2, 0]
