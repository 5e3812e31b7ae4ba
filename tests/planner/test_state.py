"""The planner's view of the cluster (planner/state.py): the arrays it builds from a snapshot, the
bookkeeping of each change, and the rack rules the goals ask it. Brokers 0..n-1 are their own
indexes; partitions are indexed in (topic, partition) order."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from kafka_rebalance.planner import PlanError, PlanOptions
from kafka_rebalance.planner.goals.base import Goal
from kafka_rebalance.planner.state import ClusterState
from tests.support.clusters import GiB, part, planner_state, snapshot

MiB = 1024**2


def state(brokers: list[Any], partitions: list[dict[str, Any]], **options: Any) -> ClusterState:
    return planner_state(brokers, partitions, **options)


def test_mixed_replication_factors_are_padded_and_counted_once_per_replica() -> None:
    s = state([0, 1, 2], [part("t", 0, [2, 0, 1], size_bytes=3 * GiB), part("t", 1, [1], size_bytes=5 * GiB),
                          part("u", 0, [0, 2], size_bytes=7 * GiB)])
    assert not s.uniform and s.rf_max == 3 and s.rf.tolist() == [3, 1, 2]
    assert s.R.tolist() == [[2, 0, 1], [1, -1, -1], [0, 2, -1]]
    assert [s.row(p) for p in range(3)] == [[2, 0, 1], [1], [0, 2]]
    assert [s.original_row(p) for p in range(3)] == [[2, 0, 1], [1], [0, 2]]
    assert s.counts.tolist() == [2, 2, 2]
    assert (s.bytes // GiB).tolist() == [10, 8, 10]
    assert [s.broker_parts(b).tolist() for b in range(3)] == [[0, 2], [0, 1], [0, 2]]


def test_broker_ids_that_are_not_indexes_are_mapped_in_id_order() -> None:
    s = state([5, 10, 7], [part("t", 0, [10, 5], leader=5), part("t", 1, [7])])
    assert s.broker_ids == [5, 7, 10] and s.index_of == {5: 0, 7: 1, 10: 2}
    assert s.R.tolist() == [[2, 0], [1, -1]] and s.leader.tolist() == [0, 1]
    assert (s.bid(2), s.name(0)) == (10, "t-0")


def test_frozen_hot_and_eligible() -> None:
    rate = 10 * MiB
    parts = [part("t", 0, [0], leader=-1, isr=[]),            # leaderless: frozen
             part("x", 0, [1]),                                # excluded: frozen
             part("t", 1, [1], rate=rate),                     # produces exactly the delivered rate: hot
             part("t", 2, [1], rate=rate - 1)]                 # just below: not hot
    s = state([0, 1, (2, None, False), 3], parts, exclude_topics=("x",), throttle_bytes_per_sec=rate,
              decommission_brokers=(3,))
    # partition order: t-0, t-1, t-2, x-0
    assert s.leader.tolist() == [-1, 1, 1, 1]
    assert s.frozen.tolist() == [True, False, False, True]
    assert s.hot.tolist() == [False, True, False, False]
    assert (s.alive, s.decommissioned, s.eligible_idx) == ([True, True, False, True], [False, False, False, True], [0, 1])
    assert s.eligible_arr.tolist() == [True, True, False, False]
    # half the throttle delivered: the same partition at half the rate is hot too
    assert state([0, 1], [part("t", 0, [1], rate=rate / 2)], throttle_bytes_per_sec=rate, throttle_efficiency=0.5).hot.tolist() == [True]


def test_a_replication_factor_change_leaves_frozen_partitions_alone() -> None:
    s = state([0, 1, 2], [part("t", 0, [0]), part("x", 0, [1]), part("t", 1, [2, 0])], exclude_topics=("x",),
              replication_factor=3)
    assert s.rf_target.tolist() == [3, 3, 1]  # t-0, t-1, x-0
    rows = s.final_rows()
    assert rows.shape == (3, 3) and rows.tolist() == [[0, -1, -1], [2, 0, -1], [1, -1, -1]]


def test_racks_are_coded_in_name_order_and_counted_over_eligible_brokers() -> None:
    s = state([(0, "z"), (1, "a"), (2, "m", False)], [part("t", 0, [0, 1])])
    assert s.rack_names == ["a", "m", "z"] and s.rack == [2, 0, 1] and s.has_racks
    assert s.n_racks == 2  # the dead broker's rack has nobody eligible
    assert state([0, 1], [part("t", 0, [0])]).n_racks == 0


def test_moves_adds_and_removals_keep_counts_bytes_and_touched() -> None:
    s = state([0, 1, 2], [part("t", 0, [0, 1], size_bytes=2 * GiB), part("t", 1, [0], size_bytes=3 * GiB)])
    s.move(0, 0, 2)
    assert s.row(0) == [2, 1] and s.original_row(0) == [0, 1]
    assert s.counts.tolist() == [1, 1, 1] and (s.bytes // GiB).tolist() == [3, 2, 2]
    assert s.touched.tolist() == [True, False] and s.arrivals == {2: [0]}
    assert s.moved_bytes() == 2 * GiB
    s.add(1, 1)
    assert s.row(1) == [0, 1] and s.counts.tolist() == [1, 2, 1] and (s.bytes // GiB).tolist() == [3, 5, 2]
    s.remove(1, 0)
    assert s.row(1) == [1] and s.counts.tolist() == [0, 2, 1] and (s.bytes // GiB).tolist() == [0, 5, 2]
    assert s.moved_bytes() == 5 * GiB
    assert s.final_rows().tolist() == [[2, 1], [1, -1]]
    assert s.broker_parts(0).tolist() == [0, 1]  # the ORIGINAL assignment


def test_restore_forgets_a_change_only_when_the_row_is_back() -> None:
    s = state([0, 1, 2], [part("t", 0, [0, 1])])
    s.move(0, 0, 2)
    s.restore(0)
    assert s.row(0) == [2, 1] and s.touched[0]
    s.move(0, 2, 0)
    s.restore(0)
    assert 0 not in s.cur and not s.touched[0] and s.moved_bytes() == 0
    s.move(0, 0, 2)
    s.move(0, 1, 0)
    s.move(0, 2, 1)  # [1, 0]: the same replicas, another order
    s.restore(0)
    assert s.row(0) == [1, 0] and s.touched[0]


def test_new_replicas_and_their_bytes_follow_every_kind_of_change() -> None:
    # t-0 (2 GiB) on [0, 1], t-1 (3 GiB) on [0]; brokers 2 and 3 hold nothing.
    s = state([0, 1, 2, 3], [part("t", 0, [0, 1], size_bytes=2 * GiB), part("t", 1, [0], size_bytes=3 * GiB)])
    figures = lambda: (s.moved_replicas(), s.moved_bytes() // GiB)  # noqa: E731
    s.move(0, 0, 2)
    assert figures() == (1, 2)   # 2 is new to t-0
    s.move(0, 2, 3)
    assert figures() == (1, 2)   # the arrival moved on: still one new replica
    s.move(0, 1, 0)
    assert figures() == (1, 2)   # 0 held t-0 before the plan: going there adds nothing
    s.move(0, 3, 1)
    assert figures() == (0, 0)   # back on its own brokers, in another order
    s.add(1, 2)
    assert figures() == (1, 3)   # t-1 is 3 GiB
    s.add(1, 3)
    assert figures() == (2, 6)
    s.remove(1, 2)
    assert figures() == (1, 3)   # a new replica taken away
    s.remove(1, 0)
    assert figures() == (1, 3)   # an original one taken away copies nothing


def test_single_moves_are_the_changed_rows_one_broker_away_from_their_original() -> None:
    s = state([0, 1, 2, 3, 4], [part("t", i, [0, 1]) for i in range(5)] + [part("u", 0, [0, 1, 2])])
    s.move(0, 0, 2)               # t-0: one replica moved, 0 -> 2
    s.move(1, 0, 2)
    s.move(1, 1, 3)               # t-1: two moved
    s.add(2, 4)                   # t-2: a replica added (RF 2 -> 3)
    s.move(3, 1, 4)
    s.move(3, 4, 1)               # t-3: moved and back, still in ``cur``
    s.move(5, 2, 3)
    s.move(5, 0, 2)               # u-0: [2, 1, 3] from [0, 1, 2]: 0 left and 3 came, 2 stayed (another slot)
    s.move(4, 1, 3)               # t-4: 1 -> 3
    parts, removed, added = s.single_moves()
    assert (parts.tolist(), removed.tolist(), added.tolist()) == ([0, 4, 5], [0, 1, 0], [2, 3, 3])
    assert [a.tolist() for a in state([0, 1], [part("t", 0, [0, 1])]).single_moves()] == [[], [], []]


def test_touched_marks_exactly_the_partitions_with_a_changed_row() -> None:
    """``single_moves`` reads the changed partitions off ``touched``: after any mix of moves, additions, removals,
    restores and compiled goals' moves (``move_all``), it marks exactly the partitions in ``cur``."""
    rng = np.random.default_rng(3)
    s = state(list(range(6)), [part("t", i, [i % 6, (i + 1) % 6]) for i in range(40)])
    for _ in range(400):
        p = int(rng.integers(40))
        row, kind = s.row(p), int(rng.integers(5))
        free = [b for b in range(6) if b not in row]
        if kind == 0 and free:
            s.move(p, row[int(rng.integers(len(row)))], free[0])
        elif kind == 1 and free and len(row) < 4:
            s.add(p, free[-1])
        elif kind == 2 and len(row) > 1:
            s.remove(p, row[-1])
        elif kind == 3:
            s.restore(p)
        elif free:
            rows = s.now.copy()
            rows[p, rows[p].tolist().index(row[0])] = free[0]
            s.move_all(np.array([[p, row[0], free[0]]]), rows)
        assert np.flatnonzero(s.touched).tolist() == sorted(s.cur)


def _change_at_random(s: ClusterState, rng: np.random.Generator, n_parts: int, n_brokers: int) -> None:
    """One change drawn at random: a move, an addition (rows up to 5 replicas), a removal, or a restore."""
    p = int(rng.integers(n_parts))
    row, kind = s.row(p), int(rng.integers(4))
    free = [b for b in range(n_brokers) if b not in row]
    if kind in (0, 1) and free:
        s.move(p, row[int(rng.integers(len(row)))], free[int(rng.integers(len(free)))])
    elif kind == 2 and free and len(row) < 5:
        s.add(p, free[0])
    elif kind == 3 and len(row) > 1:
        s.remove(p, row[int(rng.integers(len(row)))])
    else:
        s.restore(p)


def test_single_moves_after_random_changes_are_the_rows_one_broker_away_read_plainly() -> None:
    # Moves, additions, removals and restores drawn at random over rows of one to four replicas: the compiled pass
    # finds exactly the changed rows as long as before with one broker out and one in, each the first in its row.
    rng = np.random.default_rng(11)
    s = state(list(range(8)), [part("t", i, [(i + k) % 8 for k in range(1 + i % 4)]) for i in range(60)])
    found = 0
    for step in range(600):
        _change_at_random(s, rng, 60, 8)
        want = []
        for q in sorted(s.cur):
            now, before = s.row(q), s.original_row(q)
            came, left = [b for b in now if b not in before], [b for b in before if b not in now]
            if len(now) == len(before) and len(came) == len(left) == 1:
                want.append((q, left[0], came[0]))
        assert list(zip(*(a.tolist() for a in s.single_moves()))) == want, step
        found += len(want)
    assert found >= 3000, found  # (after the first few dozen changes, ten or more rows one broker away at every step)


def test_the_move_cap_is_each_partitions_new_replicas_read_plainly_after_random_changes() -> None:
    # cap_moves counts every changed row's new replicas at once: after moves, additions, removals (rows widening past
    # the original width) and restores it is, per partition, its brokers not in its original row, counted one by one.
    rng = np.random.default_rng(5)
    s = state(list(range(9)), [part("t", i, [(i + k) % 9 for k in range(1 + i % 3)]) for i in range(50)])
    for step in range(300):
        _change_at_random(s, rng, 50, 9)
        if step % 10 == 0:
            s.cap_moves()
            plain = [sum(1 for b in s.row(q) if b not in s.original_row(q)) for q in range(50)]
            assert s.forced_new.tolist() == plain, step
            assert s.move_cap.tolist() == [max(x, 1) for x in plain], step
    assert s.forced_new.max() >= 2  # (some rows gained more than one new replica: the count is not a flag)


def test_rack_cap_without_racks_is_the_replication_factor() -> None:
    assert state([0, 1, 2], [part("t", 0, [0])]).rack_cap(3) == 3


def test_rack_ok_keeps_a_rack_that_must_hold_two_from_being_emptied() -> None:
    # Racks a = {0, 1}, b = {2, 3}, c = {4}; RF 4 over 3 racks: at most 2 per rack, and every rack kept.
    s = state([(0, "a"), (1, "a"), (2, "b"), (3, "b"), (4, "c")], [part("t", 0, [0, 2, 3, 4])])
    assert s.rack_ok([0, 2, 3, 4], 0, 1, 4)       # within rack a: always fine
    assert not s.rack_ok([0, 2, 3, 4], 4, 1, 4)   # c's only replica to a: c would be empty
    assert s.rack_ok([0, 2, 3, 4], 3, 1, 4)       # one of b's two to a: b keeps one, a gets its second
    assert s.rack_ok([0, 1, 2, 3], 2, 4, 4)       # one of b's two to c
    # with RF <= racks no rack needs two, so emptying one is fine as long as the cap holds
    s3 = state([(0, "a"), (1, "a"), (2, "b"), (3, "c")], [part("t", 0, [0, 2])])
    assert s3.rack_ok([0, 2], 2, 3, 2) and not s3.rack_ok([0, 2], 2, 1, 2)
    assert state([0, 1, 2], [part("t", 0, [0, 1])]).rack_ok([0, 1], None, 0, 2)  # no racks: anything goes


def test_rack_safe_is_the_gates_rule() -> None:
    s = state([(0, "a"), (1, "a"), (2, "b"), (3, "b"), (4, "c")], [part("t", 0, [0, 2])])
    assert s.rack_safe([0, 2, 4]) and s.rack_safe([0, 1, 2, 4])
    assert not s.rack_safe([0, 1, 2])      # RF 3 over 3 racks: one per rack
    assert not s.rack_safe([0, 1])         # two in a
    assert not s.rack_safe([0, 1, 2, 3])   # RF 4: at most 2 per rack, but only 2 of the 3 racks used
    assert s.rack_safe([]) and state([0, 1], [part("t", 0, [0])]).rack_safe([0, 0])


class Veto(Goal):
    def __init__(self, refuse: tuple[int, int, int], count_goal: bool) -> None:
        self.refuse, self.count_goal = refuse, count_goal

    def accept_move(self, state: ClusterState, p: int, src: int, dst: int) -> bool:
        return (p, src, dst) != self.refuse


def test_every_optimised_goal_may_veto_and_count_goals_let_count_neutral_swaps_pass() -> None:
    s = state([0, 1], [part("t", 0, [0])])
    assert s.accepts(0, 0, 1)
    s.vetoes = [Veto((0, 0, 1), count_goal=True)]
    assert not s.accepts(0, 0, 1) and s.accepts(0, 0, 1, count_neutral=True) and s.accepts(0, 1, 0)
    s.vetoes.append(Veto((0, 0, 1), count_goal=False))
    assert not s.accepts(0, 0, 1, count_neutral=True)


def test_a_snapshot_without_brokers_or_without_an_eligible_one_is_a_plan_error() -> None:
    snap = snapshot([0, 1], [part("t", 0, [0])])
    with pytest.raises(PlanError, match=r"^snapshot of test lists no brokers; nothing to plan$"):
        ClusterState(replace(snap, brokers=(), partitions=()), PlanOptions())
    with pytest.raises(PlanError, match=r"^no eligible broker left: every broker of test is dead or in --decommission-brokers$"):
        ClusterState(snap, PlanOptions(decommission_brokers=(0, 1)))


def test_an_empty_cluster_has_empty_arrays() -> None:
    s = state([0, 1], [])
    assert s.n_parts == 0 and s.R.shape == (0, 1) and s.counts.tolist() == [0, 0] and s.final_rows().shape == (0, 1)
    assert np.asarray(s.broker_parts(1)).tolist() == []


def test_array_types_are_the_compact_ones_the_goals_index_with() -> None:
    # The replica matrix is int32 (half the memory at a million partitions) whether padded or not; sizes,
    # counts and bytes are exact integers, never floats that round at petabyte totals.
    mixed = state([0, 1, 2], [part("t", 0, [2, 0, 1]), part("t", 1, [1])])
    uniform = state([0, 1], [part("t", 0, [1, 0]), part("t", 1, [0, 1])])
    assert uniform.uniform and not mixed.uniform
    for s in (mixed, uniform):
        assert (s.R.dtype, s.sizes.dtype, s.counts.dtype, s.bytes.dtype) == (np.int32, np.int64, np.int64, np.int64)
    assert uniform.R.tolist() == [[1, 0], [0, 1]]
    # before the targets are set, every target is zero
    assert mixed.byte_mean == 0.0 and mixed.byte_target.tolist() == [0.0, 0.0, 0.0]


def test_a_broker_without_a_rack_is_coded_minus_one_and_a_partition_without_a_size_weighs_nothing() -> None:
    # The snapshot loader refuses a mix of racked and rackless brokers, so the mix is made by hand: the
    # rackless broker must not share a code with a real rack (a = 0, b = 1).
    snap = snapshot([(0, "a"), (1, "a"), (2, "b")], [part("t", 0, [0, 1], size_bytes=None), part("t", 1, [2], size_bytes=5)])
    snap = replace(snap, brokers=(snap.brokers[0], replace(snap.brokers[1], rack=None), snap.brokers[2]))
    s = ClusterState(snap, PlanOptions())
    assert s.rack == [0, -1, 1] and s.rack_names == ["a", "b"]
    assert s.sizes.tolist() == [0, 5] and s.bytes.tolist() == [0, 0, 5]


def test_a_partition_without_a_known_rate_is_never_hot_even_at_a_throttle_of_one_byte() -> None:
    # Delivered rate 1 B/s: a known 1 B/s is hot (at the rate), an unknown one counts as 0 B/s.
    s = state([0, 1], [part("t", 0, [0]), part("t", 1, [1], rate=1.0)], throttle_bytes_per_sec=1, throttle_efficiency=1.0)
    assert s.hot.tolist() == [False, True]


def test_removing_from_an_untouched_partition_marks_it_touched() -> None:
    s = state([0, 1], [part("t", 0, [0, 1]), part("t", 1, [1])])
    s.remove(0, 1)
    assert s.touched.tolist() == [True, False] and s.row(0) == [0] and s.counts.tolist() == [1, 1]


def test_broker_parts_lists_partitions_in_order_on_a_cluster_big_enough_for_an_unstable_sort() -> None:
    # 300 partitions, RF 3 over 4 brokers: partition i lives on every broker but i % 4. Each broker's list
    # must be its partitions in increasing order (the donor index and the goals rely on it), which a
    # non-stable argsort of the 900 entries would scramble.
    parts = [part("t", i, [b for b in range(4) if b != i % 4]) for i in range(300)]
    s = state([0, 1, 2, 3], parts)
    # partitions are in (topic, partition) order, so index i is partition t-i
    for b in range(4):
        assert s.broker_parts(b).tolist() == [i for i in range(300) if i % 4 != b]


def test_with_as_many_racks_as_replicas_a_lone_replica_may_leave_its_rack() -> None:
    # Racks a = {0, 1}, b = {2}, c = {3}; RF 3 over 3 racks: at most one per rack, no rack must hold two.
    # [0, 1, 2] has two in a; moving b's only replica to c keeps the cap (c had none), so it is allowed.
    s = state([(0, "a"), (1, "a"), (2, "b"), (3, "c")], [part("t", 0, [0, 1, 2])])
    assert s.rack_ok([0, 1, 2], 2, 3, 3)


def test_rack_safe_refuses_a_rack_over_its_cap_even_when_every_rack_is_used() -> None:
    # Racks a = {0, 1, 2}, b = {3}, c = {4}; RF 5 over 3 racks: at most ceil(5 / 3) = 2 per rack. [0..4]
    # uses all three racks but puts three in a.
    s = state([(0, "a"), (1, "a"), (2, "a"), (3, "b"), (4, "c")], [part("t", 0, [0])])
    assert not s.rack_safe([0, 1, 2, 3, 4])
    assert s.rack_safe([0, 1, 3, 4])  # RF 4: cap 2, three racks


def test_final_rows_widened_for_a_replication_factor_change_stay_int32() -> None:
    s = state([0, 1, 2], [part("t", 0, [0])], replication_factor=2)
    s.add(0, 1)
    rows = s.final_rows()
    assert rows.dtype == np.int32 and rows.tolist() == [[0, 1]]


def test_the_rows_matrix_follows_every_change_and_widens_for_a_row_past_every_target() -> None:
    s = state([0, 1, 2, 3], [part("t", 0, [0, 1]), part("t", 1, [2])])
    assert s.now.tolist() == [[0, 1], [2, -1]] and s.on(np.arange(2), 2).tolist() == [False, True]
    s.move(0, 1, 3)
    s.add(1, 0)
    assert s.now.tolist() == [[0, 3], [2, 0]] and s.on(np.arange(2), 0).tolist() == [True, True]
    s.add(0, 2)  # a row in the middle of growing: three replicas where every target is two
    assert s.now.tolist() == [[0, 3, 2], [2, 0, -1]]
    s.remove(0, 0)
    s.move(1, 0, 1)
    s.remove(1, 2)
    assert s.now.tolist() == [[3, 2, -1], [1, -1, -1]] and s.on(np.arange(2), 3).tolist() == [True, False]
    assert s.final_rows().tolist() == [[3, 2], [1, -1]]  # as wide as the targets again, once no row is longer
    s.add(0, 1)
    assert s.final_rows().tolist() == [[3, 2, 1], [1, -1, -1]]


def test_counts_reached_only_when_every_eligible_broker_is_in_its_range() -> None:
    # 4 replicas on 2 brokers: range 2..2 each. 3 / 1 is not reached, 2 / 2 is; a decommissioned
    # broker (range 0..0, not eligible) holding one does not count against it.
    assert not planner_state([0, 1], [part("t", i, [0 if i < 3 else 1]) for i in range(4)], targets=True).counts_reached()
    assert planner_state([0, 1], [part("t", i, [i % 2]) for i in range(4)], targets=True).counts_reached()
    leaving = planner_state([0, 1, 2], [part("t", i, [i % 2]) for i in range(4)] + [part("u", 0, [2])], targets=True,
                            decommission_brokers=(2,))
    assert (leaving.lo.tolist(), leaving.hi.tolist()) == ([2, 2, 0], [3, 3, 0]) and leaving.counts_reached()


def test_counts_accept_is_the_count_goals_veto_on_every_partition_between_two_brokers() -> None:
    from kafka_rebalance.planner.goals.replica_count import ReplicaCountGoal

    s = state([0, 1, 2], [part("t", 0, [0, 1]), part("t", 1, [0, 1]), part("t", 2, [0, 2])])
    assert s.counts.tolist() == [3, 2, 1]
    assert s.counts_accept(1, 0)  # no count goal vetoes yet: every pair passes
    s.vetoes = [ReplicaCountGoal()]
    # The bands the count goal keeps (its optimize sets them): broker 0 may give but not take, 1 both, 2 only take.
    s.lo[:], s.hi[:] = [2, 1, 1], [3, 3, 2]
    verdicts = {(a, b): s.counts_accept(a, b) for a in range(3) for b in range(3) if a != b}
    assert verdicts == {(0, 1): True, (0, 2): True, (1, 0): False, (1, 2): True, (2, 0): False, (2, 1): False}
    for (a, b), ok in verdicts.items():
        assert all(s.accepts(p, a, b) == ok for p in range(3) if a in s.row(p) and b not in s.row(p)), (a, b)
