"""The preferred-leader goal (planner/goals/preferred_leader.py) on a ClusterState, one rule at a time.

Broker ids equal their index in the state (brokers 0..n-1), and partitions are listed in the
state's order (by topic, then partition), so the expectations read as broker ids. Every case is
small enough to follow by hand; the comments give the counts of preferred leaderships (first
replicas) per broker before and after.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kafka_rebalance.planner.goals.preferred_leader import PreferredLeaderGoal, electable_matrix, keep_leader_columns, preferred_band
from kafka_rebalance.planner.goals.view import BalanceView, BrokerView
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



def test_a_link_through_a_replica_that_cannot_lead_is_no_link() -> None:
    # Counts 2 / 0 in a band of 1..1, but 1 is out of both partitions' ISR: no chain reaches it, nothing moves.
    parts = [part("p", i, [0, 1], isr=[0]) for i in range(2)]
    assert augmented([0, 1], parts, 1, 1) == ([0, 0], [0, 0])


def test_a_broker_reached_from_two_sources_takes_the_first_sources_chain() -> None:
    # Counts 2 / 2 / 1 / 0 in a band of 1..1: 0 and 1 are above, 3 below, and both reach 3 only through 2
    # (p-0, p-1 [0, 2]; p-2, p-3 [1, 2]; p-4 [2, 3]). The search reaches 2 from 0 first: 0 -> 2 -> 3 (p-1, p-4);
    # then nobody is below the band and 1 stays above it.
    parts = [part("p", i, [0, 2]) for i in (0, 1)] + [part("p", i, [1, 2]) for i in (2, 3)] + [part("p", 4, [2, 3])]
    assert augmented([0, 1, 2, 3], parts, 1, 1) == ([0, 2, 1, 1, 3], [0, 1, 0, 0, 1])


def test_a_link_hands_over_its_last_listed_partition_though_other_links_sort_before_it() -> None:
    # p-0, p-1 [1, 2] and p-2, p-3 [0, 1]: counts 2 / 2 / 0 in a band of 1..1. 1 is one link from 2 and hands
    # over p-1, the last listed of its link (links are listed by partition whichever pair sorts first); then
    # nobody is below the band, and 0 stays above it.
    parts = [part("p", i, [1, 2]) for i in (0, 1)] + [part("p", i, [0, 1]) for i in (2, 3)]
    assert augmented([0, 1, 2], parts, 1, 1) == ([1, 2, 0, 0], [0, 1, 0, 0])


# --------------------------------------------------------------------------- give and take, one call at a time


def handed(brokers: list[Any], partitions: list[dict[str, Any]], lo: int, hi: int, step: str,
           **options: Any) -> tuple[list[int], list[int]]:  # fmt: skip
    """(each partition's first replica, its slot) after ``step`` ("give" or "take") alone, called with the bound
    ``optimize`` calls it with first (give: floor, then ceil; take: ceil, then floor), floor..ceil set by hand."""
    s = state(brokers, partitions, **options)
    goal = PreferredLeaderGoal(balance=False)
    goal.optimize(s)
    goal.floor, goal.ceil = lo, hi
    elig, n_p = np.asarray(s.eligible_idx, dtype=np.int64), s.n_parts
    if step == "give":
        # As optimize orders a donor's partitions: led elsewhere first, then ones the plan moves anyway.
        tier = (s.leader == goal.pref).astype(np.int64) * 2 + (~s.touched).astype(np.int64)
        by_pref = goal._lists(goal.pref[None, :].T, n_p)
        for bound in (lo, hi):
            goal._give(s, elig, by_pref, tier, ~s.frozen, bound=bound)
    else:
        by_replica = goal._lists(goal.final_rows, n_p)
        for bound in (hi, lo):
            goal._take(s, elig, by_replica, ~s.frozen, bound=bound)
    choice = goal.choice()
    assert np.bincount(choice.preferred, minlength=len(brokers)).tolist() == goal.pc.tolist()
    return choice.preferred.tolist(), choice.column.tolist()


def test_a_broker_above_ceil_gives_to_the_current_leader_then_the_fewest_led_then_the_earliest_slot() -> None:
    # Band 1..2. Counts 1 / 4 / 0 / 1 / 1: 1 is above. Its partitions led elsewhere go first: p-3 [1, 2, 4], led by 4.
    # Below the floor (1) only 2 is a candidate (4 has one): p-3 -> 2. Nothing else of 1's has a replica under
    # the floor. Below the ceil: p-1 [1, 0, 3] -> 0 (0 and 3 lead one each, 0's slot is earlier); 1 is at
    # the ceil then and keeps p-2 and p-4. Broker 0 within the band gives nothing.
    parts = [part("p", 0, [0, 4]), part("p", 1, [1, 0, 3]), part("p", 2, [1, 2, 3]), part("p", 3, [1, 2, 4], leader=4),
             part("p", 4, [1, 4]), part("p", 5, [4, 0]), part("p", 6, [3, 0])]
    assert handed([0, 1, 2, 3, 4], parts, 1, 2, "give") == ([0, 0, 1, 2, 1, 4, 3], [0, 1, 0, 1, 0, 0, 0])


def test_a_donor_gives_the_replica_that_leads_today_before_one_leading_fewer() -> None:
    # Band 0..1, counts 3 / 0 / 0 / 0: 0 gives p-0 [0, 1, 2] to 2, which leads it (no election), not to the
    # earlier slot's 1; then p-1 [0, 1, 3] to 1, the earlier of two slots leading none; 0, at the ceil, keeps p-2.
    parts = [part("p", 0, [0, 1, 2], leader=2), part("p", 1, [0, 1, 3]), part("p", 2, [0, 3])]
    assert handed([0, 1, 2, 3], parts, 0, 1, "give") == ([2, 1, 0], [2, 1, 0])


def test_a_broker_below_floor_takes_what_it_leads_then_in_partition_order_from_donors_above_the_bound() -> None:
    # Band 2..3. Counts 7 / 0 / 1 (x is excluded: its x-0 [0, 1] is 0's for good, although 1 leads it). 1 takes
    # p-4 first (it leads it), skips a-0 (2 is not above the bound) and takes p-0, the first listed: 2 then.
    parts = [part("a", 0, [2, 1]), *(part("p", i, [0, 1]) for i in range(4)), part("p", 4, [0, 1], leader=1),
             part("p", 5, [0]), part("x", 0, [0, 1], leader=1)]
    assert handed([0, 1, 2], parts, 2, 3, "take", exclude_topics=("x",)) == ([2, 1, 0, 0, 0, 1, 0, 0], [0, 1, 0, 0, 0, 1, 0, 0])


def test_broker_0_takes_and_gives_like_any_other() -> None:
    # Band 1..2: 0 leads nothing and takes p-0 from 1 (3, above the ceil); then, 0 above the ceil, it gives.
    parts = [part("p", i, [1, 0]) for i in range(3)]
    assert handed([0, 1], parts, 1, 2, "take") == ([0, 1, 1], [1, 0, 0])
    parts = [part("p", i, [0, 1]) for i in range(3)]
    assert handed([0, 1], parts, 1, 2, "give") == ([1, 0, 0], [1, 0, 0])


# --------------------------------------------------------------------------- who goes first after a move, and the verdict


def test_a_moved_partition_starts_from_its_leader_and_an_untouched_one_keeps_its_order() -> None:
    s = state([0, 1, 2, 3], [part("t", 0, [0, 1, 2], leader=1), part("t", 1, [0, 1], leader=1), part("t", 2, [0, 1, 2]),
                             part("t", 3, [1, 0], leader=0)])
    s.move(0, 0, 3)  # t-0 [3, 1, 2]: its leader 1 stays, so it goes first (slot 1)
    s.move(2, 0, 3)  # t-2 [3, 1, 2]: its leader 0 left: the row as moved (slot 0)
    s.move(3, 1, 2)  # t-3 [2, 0]: its leader 0 stays: slot 1
    rows = s.final_rows()  # t-1 is untouched: slot 0, though 1 leads it
    assert keep_leader_columns(s, rows, electable_matrix(s, rows)).tolist() == [1, 0, 0, 1]
    empty = state([0, 1], [])
    assert keep_leader_columns(empty, empty.final_rows(), electable_matrix(empty, empty.final_rows())).tolist() == []


def test_the_verdict_counts_each_broker_below_the_floor_or_above_the_ceil_by_how_far() -> None:
    def view(preferred: dict[int, int]) -> BalanceView:
        brokers = tuple(BrokerView(b, 0, 0, 0, 0.0, 0.0, 0.1, n, 0, 0) for b, n in preferred.items())
        return BalanceView(brokers, (), 0.1, 10.0, (2, 3))

    check = PreferredLeaderGoal().check(view({0: 0, 1: 5, 2: 2, 3: 3}))
    assert (check.value, check.reached, check.offenders) == (2, False, (0, 1))
    assert check.per_broker == {0: 0.0, 1: 5.0, 2: 2.0, 3: 3.0}
    check = PreferredLeaderGoal().check(view({0: 1}))
    assert (check.value, check.reached, check.offenders) == (1, False, (0,))
    empty = PreferredLeaderGoal().check(view({}))
    assert (empty.value, empty.reached, empty.offenders) == (0, True, ())


def test_a_cluster_without_partitions_has_no_first_replicas_and_a_band_of_nothing() -> None:
    assert preferred([0, 1], []) == ([], [], (0, 0))


def test_the_band_is_widened_by_the_replica_tolerance() -> None:
    # 10 partitions over 2 brokers: 5 each; 20 % of 5 either side is 4..6.
    assert preferred_band(10, 2, 0.0) == (5, 5)
    assert preferred_band(10, 2, 0.2) == (4, 6)


def test_each_broker_below_floor_takes_in_turn_while_a_donor_is_above_the_ceil() -> None:
    # Band 1..2. Counts 5 / 0 / 0 / 2. 1 takes p-0 from 0 (5, above the ceil) and, at its floor, leaves p-6. 2 then
    # skips p-1 (3 holds 2, not above the ceil) and takes p-2 from 0 (4): in the pass with the ceil as bound, before
    # 3 could give it p-1.
    parts = [part("p", 0, [0, 1]), part("p", 1, [3, 2]), part("p", 2, [0, 2]), part("p", 3, [0]), part("p", 4, [0]),
             part("p", 5, [3]), part("p", 6, [0, 1])]
    assert handed([0, 1, 2, 3], parts, 1, 2, "take") == ([1, 3, 2, 0, 0, 3, 0], [1, 0, 1, 0, 0, 0, 0])


def test_every_donor_above_the_ceil_gives_not_only_the_first() -> None:
    # Band 1..2. Counts 3 / 3 / 0 / 1 / 0. With the floor as bound: 0 gives a-0 [0, 2] to 2 and stops at the ceil;
    # then 1 gives b-0 [1, 3, 4] (led by 3) to 4, the one below the floor, not to its leader 3 (at the floor).
    parts = [part("a", 0, [0, 2]), part("a", 1, [0]), part("a", 2, [0]), part("b", 0, [1, 3, 4], leader=3),
             part("b", 1, [1]), part("b", 2, [1]), part("c", 0, [3])]
    assert handed([0, 1, 2, 3, 4], parts, 1, 2, "give") == ([2, 0, 0, 4, 1, 1, 3], [1, 0, 0, 2, 0, 0, 0])


def test_a_donor_gives_first_what_it_does_not_lead_then_what_the_plan_moves_anyway() -> None:
    def after(leader_of_p0: int) -> tuple[list[int], list[int]]:
        # p-0 [0, 1] untouched; p-1 [0, 1] moves to [0, 2], 0 leading it still; p-2 [3]. 3 partitions over 4 brokers:
        # band 0..1, and 0 (two) gives one away.
        s = state([0, 1, 2, 3], [part("p", 0, [0, 1], leader=leader_of_p0), part("p", 1, [0, 1]), part("p", 2, [3])])
        s.move(1, 1, 2)
        goal = PreferredLeaderGoal()
        goal.optimize(s)
        return goal.choice().preferred.tolist(), goal.choice().column.tolist()

    # Both led by 0: p-1 goes (its reassignment is made anyway), to 2.
    assert after(0) == ([0, 2, 3], [0, 1, 0])
    # p-0 led by 1: it goes first, to its leader, though p-1 moves.
    assert after(1) == ([1, 0, 3], [1, 0, 0])


def test_a_donor_of_many_partitions_gives_them_in_partition_order_within_a_tier() -> None:
    # 0 is first of p-0..p-19 [0, 1], the odd ones led by 1 (given first: no election); 2 is first of 25 partitions
    # of its own (RF 1). 45 over 3 brokers at --replica-tolerance 0: 15..15. 0 gives 5 to 1: the first 5 odd ones.
    parts = [part("p", i, [0, 1], leader=1 if i % 2 else 0) for i in range(20)] + [part("r", i, [2]) for i in range(25)]
    prefs, _, bounds = preferred([0, 1, 2], parts, replica_tolerance=0.0)
    assert bounds == (15, 15)
    assert [i for i in range(20) if prefs[i] == 1] == [1, 3, 5, 7, 9]


def test_a_leadership_handed_over_on_a_chain_is_a_link_for_the_next_chain() -> None:
    # Band 1..1. 0 is first of p-0 [0, 1, 2] and p-1 [0]; 3 of q-0 [3, 1] and q-1 [3]; 1 and 2 of nothing. The first
    # chain hands p-0 to 1 (the first below the band 0 reaches); then 3 reaches 2 only through 1, and p-0 (now 1's)
    # is that link: q-0 goes to 1 and p-0 on to 2.
    parts = [part("p", 0, [0, 1, 2]), part("p", 1, [0]), part("q", 0, [3, 1]), part("q", 1, [3])]
    assert augmented([0, 1, 2, 3], parts, 1, 1) == ([2, 0, 1, 3], [2, 0, 1, 0])


def test_a_broker_below_floor_takes_only_partitions_it_holds_a_replica_of() -> None:
    # Band 1..2. 2 is first of p-0..p-2 [2, 1] (3, above the ceil), 1 of p-3 [1], 0 of nothing and no replica of any:
    # 0 has nothing to take, and nothing changes.
    parts = [part("p", i, [2, 1]) for i in range(3)] + [part("p", 3, [1])]
    assert handed([0, 1, 2], parts, 1, 2, "take") == ([2, 2, 2, 1], [0, 0, 0, 0])


def test_a_second_round_gives_what_the_first_rounds_take_made_room_for() -> None:
    # 0 is first of p-0..p-2 [0, 1]; 1 of b-0, b-1 [1, 2]; 2 of nothing: 5 over 3 brokers, 1..2. Round one: 0 (above
    # the ceil) has only 1 to give to, at the ceil; then 2 (below the floor) takes b-0 from 1. Round two: 0 gives
    # p-0, its first, to 1. (The chain search would hand over the last listed, p-2.)
    parts = [part("b", i, [1, 2]) for i in range(2)] + [part("p", i, [0, 1]) for i in range(3)]
    assert preferred([0, 1, 2], parts) == ([2, 1, 1, 0, 0], [1, 0, 1, 0, 0], (1, 2))


def test_the_verdict_counts_a_broker_inside_the_band_as_zero_off() -> None:
    brokers = (BrokerView(0, 0, 0, 0, 0.0, 0.0, 0.1, 3, 0, 0), BrokerView(1, 0, 0, 0, 0.0, 0.0, 0.1, 2, 0, 0))
    check = PreferredLeaderGoal().check(BalanceView(brokers, (), 0.1, 10.0, (2, 4)))
    assert (check.value, check.reached, check.offenders) == (0, True, ())


def test_a_round_that_changes_every_count_is_followed_by_another() -> None:
    # 1 is first of b-0, b-1 [1, 2]; 0 of p-0..p-2 [0, 1] and p-3 [0, 3]; 2 and 3 of nothing: 4 / 2 / 0 / 0, and 6 over
    # 4 brokers is 1..2. Round one: 0 gives p-3 to 3 (below the floor; 1 is at the ceil), then 2 takes b-0 from 1
    # (above the floor): 3 / 1 / 1 / 1, every count changed and 0 still above the ceil. Round two: 0 gives p-0, its
    # first, to 1 (now below the ceil): 2 / 2 / 1 / 1. (The chain search would hand over p-2, the last listed.)
    parts = [part("b", i, [1, 2]) for i in range(2)] + [part("p", i, [0, 1]) for i in range(3)] + [part("p", 3, [0, 3])]
    assert preferred([0, 1, 2, 3], parts) == ([2, 1, 1, 0, 0, 3], [1, 0, 1, 0, 0, 1], (1, 2))


def test_a_third_round_still_passes_leadership_on_and_then_the_chain_search_takes_over() -> None:
    # 0 is first of a-0..a-3 [0, 1] and z-0..z-2 [0] (7); 1 of b-0, b-1 [1, 2], b-2 [1, 3] (3); 3 of c-0 [3] (1); 2 of
    # nothing: 11 over 4 brokers is 2..3. 0 can give only to 1, and only while 1 is below the ceil; 2 and 3 can take
    # only from 1, and only while 1 is above the floor. Round one: 2 takes b-0 (7 / 2 / 1 / 1). Round two: 0 gives
    # a-0 to 1, 2 takes b-1 (6 / 2 / 2 / 1). Round three: 0 gives a-1, 3 takes b-2 (5 / 2 / 2 / 2). After three rounds
    # the chain search hands 1 a leadership of 0's: a-3, the last listed (a fourth round would give a-2, the first).
    parts = ([part("a", i, [0, 1]) for i in range(4)] + [part("b", 0, [1, 2]), part("b", 1, [1, 2]), part("b", 2, [1, 3]),
             part("c", 0, [3])] + [part("z", i, [0]) for i in range(3)])
    assert preferred([0, 1, 2, 3], parts) == ([1, 1, 0, 1, 2, 2, 3, 3, 0, 0, 0], [1, 1, 0, 1, 1, 1, 1, 0, 0, 0, 0], (2, 3))


# --------------------------------------------------------------------------- chains: the count of each link stays exact


def test_a_link_used_up_by_a_chain_is_no_link_for_the_next() -> None:
    # Band 1..2. 2 is first of p-0..p-3 [2, 1] (4), 1 of q-0 [1, 0] and q-1 [1] (2), 0 of nothing; only q-0 links 1 to 0.
    # Above the ceil to below the floor: 2 -> 1 -> 0 hands p-3 (the last listed) to 1 and q-0 to 0: 1 / 2 / 3.
    # Above the ceil to below it: 0 (1) is below the ceil, but its one link from 1, q-0, is 0's own now, and 1 is at
    # the ceil (no destination): nothing more moves, and 2 stays above the ceil.
    parts = [part("p", i, [2, 1]) for i in range(4)] + [part("q", 0, [1, 0]), part("q", 1, [1])]
    assert augmented([0, 1, 2], parts, 1, 2) == ([2, 2, 2, 1, 0, 1], [0, 0, 0, 1, 1, 0])


def test_a_partition_handed_over_on_a_chain_links_its_new_first_replica_to_broker_0() -> None:
    # Band 1..2. 1 is first of p-0 [1, 2], p-1 [1, 2, 0], p-2, p-3 [1] (4); 2 of q-0 [2, 3], q-1 [2] (2); 0 of r-0 [0]
    # (1); 3 of nothing. Below the floor there is only 3: 1 -> 2 -> 3 hands p-1 (the last listed on 1-2) to 2 and q-0
    # to 3: 1 / 3 / 2 / 1. Below the ceil then: 0 and 3. 1 reaches 2 through p-0 (no more to 0: p-1 is 2's), 2 is at
    # the ceil, and 2 reaches 0 through p-1, its new partition (3 no more: q-0 is 3's): 1 -> 2 -> 0 hands p-0 to 2
    # and p-1 on to 0: 2 / 2 / 2 / 1.
    parts = [part("p", 0, [1, 2]), part("p", 1, [1, 2, 0]), part("p", 2, [1]), part("p", 3, [1]), part("q", 0, [2, 3]),
             part("q", 1, [2]), part("r", 0, [0])]
    assert augmented([0, 1, 2, 3], parts, 1, 2) == ([2, 0, 1, 1, 3, 2, 0], [1, 2, 0, 0, 1, 0, 0])


def test_a_replica_out_of_the_isr_is_no_link_after_its_partition_changes_hands() -> None:
    # Band 1..1. 0 is first of p-0 [0, 1], p-1, p-2 [0] and p-3 [0, 1, 2] with 2 out of the ISR: 4 / 0 / 0. 0 -> 1
    # hands p-3 (the last listed on 0-1) to 1. 2 is still below the floor but can lead nothing (only p-3 holds it,
    # out of sync): p-3 does not go on to 2, and nothing more moves.
    parts = [part("p", 0, [0, 1]), part("p", 1, [0]), part("p", 2, [0]), part("p", 3, [0, 1, 2], isr=[0, 1])]
    assert augmented([0, 1, 2], parts, 1, 1) == ([0, 0, 0, 1], [0, 0, 0, 1])


def test_handing_over_a_partition_with_a_replica_out_of_the_isr_keeps_the_donors_link_to_that_replica() -> None:
    # Band 1..1. 0 is first of p-0 [0, 2], p-1 [0, 1, 2] with 2 out of the ISR, and p-2 [0]: 3 / 0 / 0. 0 -> 1 through
    # p-1 (1 is found first), then 0 -> 2 through p-0: 0's link to 2 is p-0's alone, p-1's 2 never counted.
    parts = [part("p", 0, [0, 2]), part("p", 1, [0, 1, 2], isr=[0, 1]), part("p", 2, [0])]
    assert augmented([0, 1, 2], parts, 1, 1) == ([2, 1, 0], [1, 1, 0])


def test_a_link_a_hand_over_added_to_counts_one_partition() -> None:
    # Band 3..3. 0 is first of p-0..p-2 [0, 1], p-3 [0, 1, 2], p-4..p-7 [0] (8); 1 of q-0 [1, 2], q-1 [1] (2); 2 of
    # nothing. 0 -> 1 hands p-3 (the last listed on 0-1; 1 is below the band) to 1: 7 / 3 / 0, and 1 now links to 2
    # through q-0 and p-3. 0 -> 1 -> 2: p-2 to 1, p-3 (the last added) on to 2; again: p-1 to 1, q-0 to 2: 5 / 3 / 2.
    # Both links from 1 to 2 are used up: 2 stays below the band, and p-0 stays 0's.
    parts = ([part("p", i, [0, 1]) for i in range(3)] + [part("p", 3, [0, 1, 2])] + [part("p", i, [0]) for i in range(4, 8)]
             + [part("q", 0, [1, 2]), part("q", 1, [1])])
    assert augmented([0, 1, 2], parts, 3, 3) == ([0, 1, 1, 2, 0, 0, 0, 0, 2, 1], [0, 1, 1, 2, 0, 0, 0, 0, 1, 0])
