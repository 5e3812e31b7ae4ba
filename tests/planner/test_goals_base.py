"""The donor index of planner/goals/base.py: a broker's movable replicas by size, searched outward
from a wanted size. Brokers 0..n-1 are their own indexes; partition indexes follow (topic, partition)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from kafka_rebalance.planner.goals.base import (
    DonorIndex,
    Goal,
    bound_for,
    donor_index,
    outward,
    rack_bound,
    slot,
    soft_vetoes,
    tallies_accept,
    trade_back,
)
from kafka_rebalance.planner.goals.placement import PlacementGoal, RackSafetyGoal
from kafka_rebalance.planner.goals.view import GoalCheck
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
    # Left: 1 GiB and 5 GiB. Where none lies in [floor, below), a search could find none: callers skip it.
    assert [idx.any_between(lo * GiB, hi * GiB) for lo, hi in ((2, 5), (2, 6), (5, 6), (0, 1), (0, 2), (6, 9))] == [
        False, True, True, False, True, False]


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


def test_moves_made_at_once_release_parked_replicas_as_moves_made_one_by_one() -> None:
    # ``move_all`` (a compiled goal's moves replayed) against ``move`` per move, from the same states with replicas
    # parked at the cap: the same rows, tallies, records, donor indexes and parked replicas, drawn over many batches
    # (a partition moved twice in one batch, parked ones among them).
    from tests.support.clusters import indexes, same_state

    rng = np.random.default_rng(7)
    for trial in range(30):
        sizes = [int(x) for x in rng.integers(1, 9, size=24)]
        parts = [part("t", i, [i % 4, (i + 1) % 4], size_bytes=g * GiB) for i, g in enumerate(sizes)]
        one, many = (planner_state([0, 1, 2, 3, 4, 5], parts) for _ in range(2))
        for s in (one, many):
            for p in range(0, 24, 3):
                s.move(p, p % 4, 4 + p % 2)
            s.cap_moves()
            for b in range(4):  # every original replica of a moved partition passed by and parked
                donor_index(s, b).find(0.0, lambda p: False, 64, allow_touched=True)
        assert one.parked and one.parked == many.parked, trial
        rows, moves = many.now.copy(), []
        for _ in range(int(rng.integers(1, 12))):
            p = int(rng.integers(24))
            row = [b for b in rows[p].tolist() if b >= 0]
            free = [b for b in range(6) if b not in row]
            src, dst = row[int(rng.integers(len(row)))], free[int(rng.integers(len(free)))]
            rows[p, row.index(src)] = dst
            moves.append((p, src, dst))
        for p, src, dst in moves:
            one.move(p, src, dst)
        many.move_all(np.array(moves, dtype=np.int64), rows)
        assert same_state(one, many), trial
        assert indexes(one) == indexes(many) and one.parked == many.parked, trial


def test_an_arrival_joins_the_side_list_from_the_first_one_on() -> None:
    # t-0 (1 GiB) on broker 0, t-1 (5 GiB) on broker 1. t-1 moves onto 0 after 0's index was built: wanting 5 GiB
    # with touched ones allowed, the arrival (0 away) beats t-0 (4 away).
    s = state([part("t", 0, [0], size_bytes=GiB), part("t", 1, [1], size_bytes=5 * GiB)])
    idx = donor_index(s, 0)
    s.move(1, 1, 0)
    assert idx.find(5 * GiB, always) == 0 and idx.find(5 * GiB, always, allow_touched=True) == 1


def test_put_back_places_a_replica_after_its_equals_of_lower_partition_and_before_larger_sizes() -> None:
    idx = DonorIndex(state(sized(2, 2, 2, 2, 7)), 0)
    assert idx.find(2 * GiB, lambda p: p == 2) == 2
    idx.put_back(2)  # past t-0 and t-1 (equal size, lower partitions), before t-3
    assert idx.parts == [0, 1, 2, 3, 4]
    assert idx.find(2 * GiB, lambda p: p == 1) == 1
    idx.put_back(1)  # past t-0 only
    assert idx.parts == [0, 1, 2, 3, 4]
    # t-0 is 5 GiB, t-1 1, t-2 2: sorted t-1, t-2, t-0. t-2 goes back before the larger t-0, whatever its number.
    idx = DonorIndex(state(sized(5, 1, 2)), 0)
    assert idx.find(2 * GiB, always) == 2 and idx.parts == [1, 0]
    idx.put_back(2)
    assert idx.parts == [1, 2, 0]


def test_a_search_accepts_only_sizes_strictly_inside_its_window() -> None:
    idx = DonorIndex(state(sized(1, 3, 5, 8)), 0)
    assert idx.find(5 * GiB, always, window=(0, 5 * GiB)) == 1  # 5 is the window's edge: 3 is the nearest inside
    assert idx.find(8 * GiB, always, window=(3 * GiB, 7 * GiB)) == 2
    assert idx.find(8 * GiB, always, window=(8 * GiB, 9 * GiB)) is None
    # the side list alike: t-1 (3 GiB) set aside as touched, then searched with touched ones allowed
    s = state(sized(1, 3, 9, replicas=[0, 1]))
    idx = donor_index(s, 0)
    s.move(1, 1, 2)
    assert idx.find(3 * GiB, lambda p: p == 2) == 2 and idx.side_parts == [1]
    assert idx.find(3 * GiB, always, allow_touched=True, window=(1 * GiB, 3 * GiB)) is None
    assert idx.find(3 * GiB, always, allow_touched=True, window=(2 * GiB, 4 * GiB)) == 1


def test_with_touched_allowed_a_tie_between_the_lists_goes_to_the_main_one() -> None:
    # t-0 (1 GiB, touched: on the side list) and t-2 (5 GiB) are both 2 GiB from 3: the main list's wins.
    s = state(sized(1, 9, 5, replicas=[0, 1]))
    idx = donor_index(s, 0)
    s.move(0, 1, 2)
    assert idx.find(0, lambda p: p == 2) == 2 and idx.side_parts == [0]
    idx.put_back(2)
    assert idx.find(3 * GiB, always, allow_touched=True) == 2 and idx.side_parts == [0]


def test_smallest_untouched_counts_every_check_and_stops_at_the_end_of_the_list() -> None:
    idx = DonorIndex(state(sized(1, 2, 3, 4)), 0)
    assert idx.smallest_untouched(0, 10 * GiB, lambda p: p == 3, limit=3) is None  # 1, 2, 3 refused: the limit
    assert idx.smallest_untouched(0, 10 * GiB, lambda p: False, limit=10) is None  # every one refused: the end
    assert idx.smallest_untouched(0, 10 * GiB, lambda p: p == 3, limit=4) == 3


def test_a_side_list_entry_that_went_home_is_dropped_though_untouched() -> None:
    # t-0 arrives on broker 0 and joins its side list, then goes home and its change is forgotten: untouched,
    # but no longer on 0. A search of the side list drops it instead of handing it out.
    s = state(sized(4, replicas=[1]))
    idx = donor_index(s, 0)
    s.move(0, 1, 0)
    assert idx.find(0, lambda p: False, allow_touched=True) is None and idx.side_parts == [0]
    s.move(0, 0, 1)
    s.restore(0)
    assert not s.touched[0]
    assert idx.find(0, always, allow_touched=True) is None and idx.side_parts == []


def test_outward_takes_the_lower_of_two_at_the_window_floor_and_walks_every_index() -> None:
    assert list(outward([3, 9], 4)) == [0, 1]  # 3 (1 away) before 9 (5 away), 3 being the first index
    assert list(outward([1, 2, 3], 10)) == [2, 1, 0]
    assert list(outward([1, 2, 3, 4], 2.5, above=1, below=4)) == [1, 2]  # of two equally near, the smaller


class Refuses(Goal):
    """A goal that refuses every move (as is: one keeping tallies of its own)."""

    def accept_move(self, state: ClusterState, p: int, src: int, dst: int) -> bool:
        return False


class HardRefuses(Refuses):
    hard = True


class CountRefuses(Refuses):
    count_goal = True


def test_tallies_accept_asks_only_the_soft_goals_that_are_not_count_goals() -> None:
    s = state(sized(1))
    s.vetoes = [HardRefuses(), CountRefuses()]
    assert tallies_accept(s, 0, 0, 1)  # the caller asks those itself
    s.vetoes = [HardRefuses(), CountRefuses(), Refuses()]
    assert not tallies_accept(s, 0, 0, 1)
    asked: list[tuple[ClusterState, int, int, int]] = []

    class Asks(Goal):
        def accept_move(self, state: ClusterState, p: int, src: int, dst: int) -> bool:
            asked.append((state, p, src, dst))
            return True

    s.vetoes = [Asks()]
    assert tallies_accept(s, 0, 0, 1) and asked == [(s, 0, 0, 1)]


def test_soft_vetoes_are_the_soft_goals_with_a_veto_of_their_own_and_a_loop_may_pass_them() -> None:
    s = state(sized(1))

    class Silent(Goal):  # no accept_move of its own: it accepts every move
        pass

    soft = Refuses()
    s.vetoes = [HardRefuses(), CountRefuses(), Silent(), soft]
    assert soft_vetoes(s) == [soft]
    assert not tallies_accept(s, 0, 0, 1, [soft]) and tallies_accept(s, 0, 0, 1, [])
    s.vetoes = [Silent()]
    assert soft_vetoes(s) == [] and tallies_accept(s, 0, 0, 1)


def test_trade_back_returns_a_moved_replica_and_sends_another_in_its_place() -> None:
    # t-0 (3 GiB) moved from 0 to 1 earlier (taken from 0's index); t-1 (1 GiB), also on 0, goes instead.
    s = state(sized(3, 1, 2))
    idx = donor_index(s, 0)
    assert idx.find(3 * GiB, lambda p: p == 0) == 0 and idx.find(GiB, lambda p: p == 1) == 1
    s.move(0, 0, 1)
    trade_back(s, 0, 1, 0, 1)
    assert [s.row(p) for p in range(3)] == [[0], [1], [0]]
    assert s.cur == {1: [1]} and s.touched.tolist() == [False, True, False]
    assert s.counts.tolist() == [2, 1, 0] and s.bytes.tolist() == [5 * GiB, GiB, 0]
    assert idx.parts == [2, 0] and idx.side_parts == []  # t-0 back in 0's index, untouched


def test_a_goal_without_rules_of_its_own_allows_every_move_and_has_no_band_nor_approval_line() -> None:
    s = state(sized(1))
    assert Goal().accept_move(s, 0, 0, 1)
    assert Goal().approval_line({}) == ""
    excess = Goal().band_excess(s, np.zeros(3))
    assert excess.tolist() == [0.0, 0.0, 0.0]


def test_a_verdict_carries_the_goals_name_hardness_and_rule() -> None:
    class Rule(Goal):
        name, hard, target = "rule", True, "no broker over 1"

    assert Rule().verdict(2.5, False, (4,), {4: 2.5}) == GoalCheck("rule", True, "no broker over 1", 2.5, False, (4,), {4: 2.5})
    assert Rule().verdict(0.0, True) == GoalCheck("rule", True, "no broker over 1", 0.0, True, (), {})


def test_smallest_bounds_what_a_search_could_return() -> None:
    # Broker 0 holds 2, 5 and 9 GiB (RF 2 with broker 1); broker 2 gets a 1 GiB replica during planning.
    s = state(sized(2, 5, 9, replicas=[0, 1]) + [part("u", 0, [2], size_bytes=1 * GiB)])
    idx = donor_index(s, 0)
    assert idx.smallest() == idx.smallest(True) == 2 * GiB
    s.move(3, 2, 0)  # an arrival, not yet in any list: only a search allowing touched replicas meets it
    assert idx.smallest() == 2 * GiB and idx.smallest(True) == 1 * GiB
    assert idx.find(0, always, allow_touched=True) == 3  # fed and found: it left the index
    s.move(0, 1, 2)  # t-0 touched: the next search sets its 2 GiB replica aside
    assert idx.find(6 * GiB, always) == 1  # 5 GiB; 2 GiB was not passed on the way
    assert idx.find(0, lambda p: False) is None and idx.side_parts == [0]  # passing it sets it aside
    assert idx.smallest() == 9 * GiB and idx.smallest(True) == 2 * GiB
    assert DonorIndex(state([]), 0).smallest(True) == math.inf


# --------------------------------------------------------------------------- rack_bound, bound_for


def test_partitions_bound_to_their_racks_are_the_rack_safe_ones_with_rf_a_multiple_of_the_racks() -> None:
    # Racks a = {0, 1}, b = {2, 3}, c = {4}. t-0: RF 3, one per rack: bound. u-0: RF 2, may take rack c: free.
    # v-0: RF 3, two in rack a: not rack-safe, so a replica may leave rack a: free. w-0: bound like t-0. x-0: RF 3 now,
    # asked for 2 (--replication-factor 2 is not a multiple of 3 racks): free. RF 6 over 3 racks, two per rack: bound.
    brokers = [(0, "a"), (1, "a"), (2, "b"), (3, "b"), (4, "c"), (5, "c")]
    s = planner_state(brokers, [part("t", 0, [0, 2, 4]), part("u", 0, [0, 2]), part("v", 0, [0, 1, 2]),
                                part("w", 0, [1, 3, 4]), part("y", 0, [0, 1, 2, 3, 4, 5])])
    s.vetoes = [PlacementGoal(), RackSafetyGoal()]
    assert rack_bound(s).tolist() == [True, False, False, True, True]
    shrinking = planner_state(brokers, [part("x", 0, [0, 2, 4])], replication_factor=2)
    assert rack_bound(shrinking).tolist() == [False]
    # Wherever the shortcut says "bound" for a move across racks, the vetoes refuse that move.
    bound = rack_bound(s)
    refused = 0
    for p in range(s.n_parts):
        for src in s.row(p):
            for dst in range(6):
                skip = bound_for(bound, s, src, dst)
                if skip is not None and skip[p]:
                    refused += 1
                    assert not s.accepts(p, src, dst), (p, src, dst)
    # t-0 and w-0: each replica to the 4 brokers outside its rack (3 replicas x 4); y-0 holds every broker (0 free).
    assert refused == 2 * 3 * 4 + 6 * 4
    # Within a rack there is no shortcut: the vetoes decide (t-0's replica 0 -> 1 is allowed).
    assert bound_for(bound, s, 0, 1) is None and s.accepts(0, 0, 1)


def test_no_racks_binds_nothing_and_across_known_racks_the_bound_applies() -> None:
    s = planner_state([0, 1, 2], [part("t", 0, [0, 1, 2])])
    assert rack_bound(s).tolist() == [False]
    racked = planner_state([(0, "a"), (1, "b"), (2, "c"), (3, "a")], [part("t", 0, [0, 1, 2])])
    bound = rack_bound(racked)
    assert bound.tolist() == [True]
    assert bound_for(bound, racked, 0, 1) is bound       # a -> b: another rack
    assert bound_for(bound, racked, 0, 3) is None        # a -> a: the same rack


def test_slot_is_the_place_in_size_then_partition_order_and_finds_a_listed_entry() -> None:

    @given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 40)), unique_by=lambda e: e[1], max_size=30),
           st.integers(0, 3), st.integers(0, 40))
    def check(entries: list[tuple[int, int]], size: int, p: int) -> None:
        entries.sort()
        sizes, parts = [e[0] for e in entries], [e[1] for e in entries]
        k = slot(sizes, parts, size, p)
        if (size, p) in entries:
            assert (sizes[k], parts[k]) == (size, p)
        else:  # the first entry that sorts after it (a run of equal sizes is ordered by partition too)
            assert k == sum(1 for e in entries if e < (size, p))

    check()
