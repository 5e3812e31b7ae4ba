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


# --------------------------------------------------------------------------- chains, one phase at a time


def augmented(brokers: list[Any], partitions: list[dict[str, Any]], lo: int, hi: int, **options: Any) -> tuple[list[int], list[int]]:
    """(each partition's first replica, its slot) after the chain search alone, with floor..ceil set by hand
    (no hand-over before it), so each case reaches exactly the phase it names."""
    s = state(brokers, partitions, **options)
    goal = PreferredLeaderGoal(balance=False)
    goal.optimize(s)
    goal.floor, goal.ceil = lo, hi
    goal._augment(s, np.asarray(s.eligible_idx, dtype=np.int64), ~s.frozen)
    choice = goal.choice()
    assert np.bincount(choice.preferred, minlength=len(brokers)).tolist() == goal.pc.tolist()
    return choice.preferred.tolist(), choice.column.tolist()


def test_a_chain_from_above_ceil_to_below_floor_hands_over_one_leadership_per_link() -> None:
    # Counts 3 / 2 / 1 / 0 in a band of 1..2: 0 is above, 3 below. 0 shares only with 1 (p-0..2), 1 only with
    # 2 (p-3, p-4), 2 only with 3 (p-5): 0 -> 1 -> 2 -> 3, the last partition listed on each link moving.
    # After: 2 / 2 / 1 / 1; 1 and 2 keep their counts.
    parts = [part("p", i, [0, 1]) for i in range(3)] + [part("p", i, [1, 2]) for i in (3, 4)] + [part("p", 5, [2, 3])]
    assert augmented([0, 1, 2, 3], parts, 1, 2) == ([0, 0, 1, 1, 2, 3], [0, 0, 1, 0, 1, 1])


def test_with_nobody_below_floor_a_broker_above_ceil_hands_over_to_one_below_ceil() -> None:
    # Counts 3 / 2 / 1 in a band of 1..2: nobody below the floor, 0 above the ceil, 2 below it. 0 -> 1 -> 2.
    parts = [part("p", i, [0, 1]) for i in range(3)] + [part("p", i, [1, 2]) for i in (3, 4)] + [part("p", 5, [2, 0])]
    assert augmented([0, 1, 2], parts, 1, 2) == ([0, 0, 1, 1, 2, 2], [0, 0, 1, 0, 1, 0])


def test_with_nobody_above_ceil_a_broker_below_floor_takes_from_one_above_floor() -> None:
    # Counts 2 / 2 / 0 in a band of 1..2: 2 is below the floor and only 1 shares with it (p-2, p-3).
    parts = [part("p", i, [0, 1]) for i in range(2)] + [part("p", i, [1, 2]) for i in (2, 3)]
    assert augmented([0, 1, 2], parts, 1, 2) == ([0, 0, 1, 2], [0, 0, 0, 1])


def test_chains_repeat_until_every_count_is_in_the_band_and_skip_partitions_already_handed_over() -> None:
    # Counts 4 / 0 / 0 in a band of 1..2; every partition is [0, 1, 2]. First 0 -> 1 (1 is the first below the
    # floor found): the last listed, p-3. Then 0 -> 2: p-3 is listed for 2 as well but is 1's now, so p-2 goes.
    # 2 / 1 / 1 is in the band: nothing more moves in any phase.
    parts = [part("p", i, [0, 1, 2]) for i in range(4)]
    assert augmented([0, 1, 2], parts, 1, 2) == ([0, 0, 2, 1], [0, 0, 2, 1])


def test_a_chain_may_end_on_the_first_broker() -> None:
    # Counts 0 / 3 / 1 in a band of 1..2: 1 above, 0 below, and only 2 shares with 0 (p-3 [2, 0]): 1 -> 2 -> 0.
    parts = [part("p", i, [1, 2]) for i in range(3)] + [part("p", 3, [2, 0])]
    assert augmented([0, 1, 2], parts, 1, 2) == ([1, 1, 2, 0], [0, 0, 1, 1])

