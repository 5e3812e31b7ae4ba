"""The leader-keeping pass (planner/goals/leader_keep.py): a move of a leader's replica swapped for a
follower's of close size on the same donor, counts unchanged. Brokers 0..n-1 are their own indexes."""

from __future__ import annotations

import numpy as np
import pytest

from kafka_rebalance.planner.goals.base import Goal
from kafka_rebalance.planner.goals.leader_keep import _replacement_rule, keep_leaders
from kafka_rebalance.planner.goals.placement import PlacementGoal
from kafka_rebalance.planner.goals.replica_count import ReplicaCountGoal
from kafka_rebalance.planner.state import ClusterState
from tests.support.clusters import GiB, part, planner_state


def three_brokers(follower_gib: int, **options) -> ClusterState:
    """a (4 GiB) led by 0; f (``follower_gib``) on 0 as a follower, led by 2; fillers for the bytes. Then the
    plan so far moved a's replica from 0 (its leader) to 1."""
    s = planner_state([0, 1, 2], [
        part("a", 0, [0, 2], size_bytes=4 * GiB),
        part("f", 0, [2, 0], size_bytes=follower_gib * GiB),
        part("g", 0, [1, 2], size_bytes=20 * GiB),
        part("h", 0, [0, 2], size_bytes=20 * GiB),
    ], targets=True, **options)
    s.move(0, 0, 1)
    return s


def test_a_leaders_move_becomes_a_followers_move_of_the_same_size() -> None:
    s = three_brokers(4)
    counts, held = s.counts.copy(), s.bytes.copy()
    assert keep_leaders(s) == 1
    assert s.row(0) == [0, 2] and not s.touched[0]  # a is back where it was: its leader stays
    assert s.row(1) == [2, 1]  # f's replica on 0, a follower there, went to 1 instead
    assert (s.counts == counts).all() and (s.bytes == held).all()
    assert s.moved_bytes() == 4 * GiB and s.moved_replicas() == 1


def test_a_larger_follower_is_taken_only_while_both_brokers_stay_in_the_band() -> None:
    # Bytes after a's move: 0: 5 + 20 = 25, 1: 20 + 4 = 24, 2: 49 GiB (mean 32.67, band about 29.4..35.9). f (5)
    # in place of a (4) takes 1 GiB more off 0, which is below its band already: no swap.
    s = three_brokers(5)
    assert keep_leaders(s) == 0 and s.row(0) == [1, 2] and s.row(1) == [2, 0]


def test_a_larger_follower_that_evens_the_bytes_is_taken_at_its_cost() -> None:
    # The same, with a band of 50 % (about 16.4..49): f in place of a leaves 0 and 1 at 24 and 25 GiB, both
    # inside it and under the fullest broker (2, 49): the swap is made, for 1 GiB more moved.
    s = three_brokers(5, byte_tolerance=0.5)
    assert keep_leaders(s) == 1
    assert s.row(0) == [0, 2] and s.row(1) == [2, 1]
    assert s.moved_bytes() == 5 * GiB and s.moved_replicas() == 1


def test_a_goal_optimised_earlier_may_veto_the_follower() -> None:
    class NoF(Goal):
        def accept_move(self, state, p, src, dst):
            return p != 1

    s = three_brokers(4)
    s.vetoes = [NoF()]
    assert keep_leaders(s) == 0 and s.row(0) == [1, 2]


def test_a_leaving_brokers_leaders_move_as_planned() -> None:
    # Broker 0 is decommissioned: every replica on it leaves, leaders included; nothing to swap.
    s = three_brokers(4, decommission_brokers=[0])
    assert keep_leaders(s) == 0 and s.row(0) == [1, 2]


def test_a_partition_the_broker_leads_is_never_the_replacement() -> None:
    # The only other replica on 0 of a's size is one 0 leads too: moving it would change its leader instead.
    s = planner_state([0, 1, 2], [
        part("a", 0, [0, 2], size_bytes=4 * GiB),
        part("b", 0, [0, 2], size_bytes=4 * GiB),
        part("g", 0, [1, 2], size_bytes=20 * GiB),
    ], targets=True)
    s.move(0, 0, 1)
    assert keep_leaders(s) == 0 and s.row(0) == [1, 2] and s.row(1) == [0, 2]


# --------------------------------------------------------------------------- which follower may stand in


@pytest.mark.parametrize(("loads", "disk_d", "accepted", "window"), [
    # loads of d (0), r (1) and the fullest eligible broker (2), GiB; bands: d 7..13, r 6..14. g = 4 - size(q)
    # moves onto d and off r. Each case names the bound that ends the window on each side (gain, loss).
    # d's disk holds 12.5: g <= 2.5 (q of 1 GiB passes both bands and is refused for the disk alone); g >= -3
    # from d's band bottom. gain = min(10, 2.5, 3, 3), loss = min(11, 5, 3).
    ((10, 9, 20), 12.5, [2, 3, 4, 5, 6, 7], (2.5, 3)),
    # r at 7: g <= 1 from r's band bottom (2 GiB fits d's band and is refused for r's alone). gain = min(10, 3, 1).
    ((10, 7, 20), None, [3, 4, 5, 6, 7], (1, 3)),
    # the fullest at 11: 10 + g <= 11 and 9 - g <= 11 (2 and 7 GiB fit both bands, refused for the top alone).
    ((10, 9, 11), None, [3, 4, 5, 6], (1, 2)),
    # r at 12: 12 - g <= 14, g >= -2 (7 GiB fits d's band, refused for r's top alone). loss = min(8, 2, 3).
    ((10, 12, 20), None, [1, 2, 3, 4, 5, 6], (3, 2)),
    # d already 2 GiB below its band: it may stay as far, not go further (g >= 0, so 4 GiB, g = 0, passes), and
    # nothing bounds the loss but that: loss = max(0, 5 - 7) = 0.
    ((5, 9, 20), None, [1, 2, 3, 4], (3, 0)),
    # d's disk holds 12 exactly: g <= 2 (q of 2 GiB ends d at its limit itself, which it may). gain = min(10, 2, 3, 3).
    ((10, 9, 20), 12, [2, 3, 4, 5, 6, 7], (2, 3)),
    # d at its band top: g <= 0 (nothing more on d), g >= -5 (r to 14). gain = max(0, 13 - 13) = 0, loss = min(11, 5, 6).
    ((13, 9, 20), None, [4, 5, 6, 7, 8], (0, 5)),
    # r at its band bottom: g <= 0 (nothing more off r), g >= -3 (d to 7). gain = max(0, 6 - 6) = 0, loss = min(14, 8, 3).
    ((10, 6, 20), None, [4, 5, 6, 7], (0, 3)),
    # r at its band top: g >= 0 (nothing more onto r), g <= 3 (d to 13). gain = min(10, 3, 8) = 3, loss = max(0, 14 - 14) = 0.
    ((10, 14, 20), None, [1, 2, 3, 4], (3, 0)),
])
def test_a_follower_stands_in_only_where_both_brokers_stay_in_their_band_under_the_fullest_and_the_disk(
        loads: tuple[int, int, int], disk_d: float | None, accepted: list[int], window: tuple[float, float]) -> None:  # fmt: skip
    # p (4 GiB) is the leader's replica to be replaced; candidates q-1..q-8 of 1..8 GiB on 0, each a follower
    # (led by 2); l-0 (4 GiB) is one 0 leads, never a candidate; x-0 (3 GiB) is on r already (placement vetoes
    # it); broker 3 is decommissioned and holds 50 GiB, more than the fullest eligible broker.
    parts = [part("p", 0, [1, 0], size_bytes=4 * GiB)]
    parts += [part("q", s, [2, 0], size_bytes=s * GiB) for s in range(1, 9)]
    parts += [part("l", 0, [0, 2], size_bytes=4 * GiB), part("x", 0, [2, 0, 1], size_bytes=3 * GiB)]
    s = planner_state([0, 1, 2, 3], parts, decommission_brokers=(3,))
    s.bytes[:] = [b * GiB for b in (*loads, 50)]
    if disk_d is not None:
        s.disk_limit[0] = disk_d * GiB
    # The count goal vetoes every move here (no range set), but a swap leaves counts as they are: it is not asked.
    s.vetoes = [PlacementGoal(), ReplicaCountGoal()]
    band = (np.asarray([7, 6, 0, 0]) * GiB, np.asarray([13, 14, 99, 99]) * GiB)
    ok, (low, high) = _replacement_rule(s, 0, 0, 1, band)
    assert [int(s.sizes[q] // GiB) for q in range(s.n_parts) if ok(q)] == accepted
    gain, loss = window
    assert (low, high) == (4 * GiB - gain * GiB - 1, 4 * GiB + loss * GiB + 1)


def test_the_leaders_moves_are_the_partitions_that_moved_one_replica_off_an_eligible_leader() -> None:
    from kafka_rebalance.planner.goals.leader_keep import _leaders_moves

    # a: its leader 0's replica to 2 (one); b: a follower's (not); c: two replicas (not); d: led by broker 4, which
    # leaves (its replicas all go: not); e: its leader 1's to 3 (one).
    s = planner_state([0, 1, 2, 3, 4], [part("a", 0, [0, 1]), part("b", 0, [0, 1]), part("c", 0, [0, 1]),
                                        part("d", 0, [4, 1]), part("e", 0, [1, 0])], decommission_brokers=(4,))
    s.move(0, 0, 2)
    s.move(1, 1, 2)
    s.move(2, 0, 2)
    s.move(2, 1, 3)
    s.move(3, 4, 2)
    s.move(4, 1, 3)
    assert _leaders_moves(s).tolist() == [[0, 0, 2], [4, 1, 3]]


def test_a_partition_whose_replica_count_changed_is_no_leaders_move_and_the_later_ones_still_are() -> None:
    from kafka_rebalance.planner.goals.leader_keep import _leaders_moves

    # a gained a replica (a replication-factor change), b moved its leader 0's replica to 2.
    s = planner_state([0, 1, 2, 3], [part("a", 0, [0, 1]), part("b", 0, [0, 1])])
    s.add(0, 3)
    s.move(1, 0, 2)
    assert _leaders_moves(s).tolist() == [[1, 0, 2]]


def test_an_empty_cluster_swaps_nothing() -> None:
    assert keep_leaders(planner_state([0, 1], [])) == 0


def test_a_refused_or_unmatched_leaders_move_does_not_end_the_pass() -> None:
    # a (0 -> 2): the tallying goal refuses a's way back. b (1 -> 2): 1 holds no follower. c (0 -> 1): fa, a follower
    # on 0 of c's size, goes instead. e (3 -> 2): a follower on 3 of e's size goes instead: c (back as it was, so
    # untouched again) before fe, by partition order. All 4 GiB: no byte changes anywhere, so only the two swaps
    # and their count are in question.
    class KeepA(Goal):
        def accept_move(self, state, p, src, dst):
            return p != 0

    s = planner_state([0, 1, 2, 3], [
        part("a", 0, [0, 3], size_bytes=4 * GiB),
        part("b", 0, [1, 3], size_bytes=4 * GiB),
        part("c", 0, [0, 3], size_bytes=4 * GiB),
        part("fa", 0, [3, 0], size_bytes=4 * GiB),
        part("e", 0, [3, 1], size_bytes=4 * GiB),
        part("fe", 0, [0, 3], size_bytes=4 * GiB),
    ], targets=True)
    for p, d, r in [(0, 0, 2), (1, 1, 2), (2, 0, 1), (3, 3, 2)]:  # partitions in topic order: a b c e fa fe
        s.move(p, d, r)
    s.vetoes = [KeepA()]
    assert keep_leaders(s) == 2
    assert [s.row(p) for p in range(6)] == [[2, 3], [2, 3], [0, 2], [3, 1], [3, 1], [0, 3]]


MiB = 2**20


def d_r_and_a_third(loads: tuple[int, int, int], follower: int) -> ClusterState:
    """a (4 GiB) led by 0 and f (``follower`` bytes) on 0 as a follower, both with a replica on 2; one-replica
    fillers (each led by its broker: never a candidate) make the loads ``loads`` GiB once a's replica moved from 0
    to 1. 300 GiB in all: centre 100, band 90..110 GiB at the 10 % tolerance, less the trim's edge of
    0.005 x 0.1 x 100 GiB = 51.2 MiB on each side (90 GiB + 51.2 MiB .. 110 GiB - 51.2 MiB)."""
    d, r, o = (x * GiB for x in loads)
    s = planner_state([0, 1, 2], [
        part("a", 0, [0, 2], size_bytes=4 * GiB),
        part("f", 0, [2, 0], size_bytes=follower),
        part("h", 0, [0], size_bytes=d - follower),
        part("h", 1, [1], size_bytes=r - 4 * GiB),
        part("h", 2, [2], size_bytes=o - 4 * GiB - follower),
    ], targets=True)
    s.move(0, 0, 1)
    return s


@pytest.mark.parametrize(("loads", "follower", "swapped"), [
    # f in place of a takes 1 GiB - 20 MiB more off 0 (91 GiB): 90 GiB + 20 MiB is inside the band but within its
    # edge (51.2 MiB): refused. 1 GiB - 100 MiB leaves 0 at 90 GiB + 100 MiB, past the edge: taken.
    ((91, 95, 114), 5 * GiB - 20 * MiB, False),
    ((91, 95, 114), 5 * GiB - 100 * MiB, True),
    # The same at the top for 1 (109 GiB; 0, above the band at 115, comes nearer it): 110 GiB - 20 MiB is within the
    # edge, refused; 110 GiB - 100 MiB is not, taken.
    ((115, 109, 76), 5 * GiB - 20 * MiB, False),
    ((115, 109, 76), 5 * GiB - 100 * MiB, True),
])
def test_a_swap_keeps_both_brokers_inside_the_band_less_the_trims_edge(
        loads: tuple[int, int, int], follower: int, swapped: bool) -> None:  # fmt: skip
    s = d_r_and_a_third(loads, follower)
    assert keep_leaders(s) == int(swapped)
    assert s.row(0) == ([0, 2] if swapped else [1, 2]) and s.row(1) == ([2, 1] if swapped else [2, 0])
    cost = follower - 4 * GiB if swapped else 0
    assert s.bytes[0] == loads[0] * GiB - cost and s.bytes[1] == loads[1] * GiB + cost


@pytest.mark.parametrize(("offset", "veto", "swapped"), [
    # 64 followers of a's very size, each refused by a goal: the search stops at 64 candidates, before w.
    (0, True, False),
    # 64 followers 1 byte smaller than a: each would put 1 byte more on 0, already above its band (so the window's
    # lower end is a's size less 1 byte, which excludes them). They are nearer a's size than w (2 bytes larger), and
    # would spend the 64 candidates; the window skips them and w is taken.
    (-1, False, True),
])
def test_the_search_for_a_follower_ends_after_64_candidates_and_skips_sizes_outside_its_window(
        offset: int, veto: bool, swapped: bool) -> None:  # fmt: skip
    class NoV(Goal):
        def accept_move(self, state, p, src, dst):
            return not (veto and 1 <= p <= 64)

    # a (1 GiB), led by 0, moved to 1; v-0..v-63 and w (a's size + 2 bytes, after them by partition) are followers
    # on 0 led by 2. 0 holds about 65 GiB, 1 1 GiB, 2 66 GiB: 0 far above the band, 1 far below.
    parts = [part("a", 0, [0, 2], size_bytes=GiB)]
    parts += [part("v", i, [2, 0], size_bytes=GiB + offset) for i in range(64)]
    parts += [part("w", 0, [2, 0], size_bytes=GiB + 2)]
    s = planner_state([0, 1, 2], parts, targets=True)
    s.move(0, 0, 1)
    s.vetoes = [NoV()]
    assert keep_leaders(s) == int(swapped)
    assert s.row(65) == ([2, 1] if swapped else [2, 0]) and s.row(0) == ([0, 2] if swapped else [1, 2])


def test_a_broker_at_its_band_edge_may_not_go_one_byte_past_it() -> None:
    # Band of 0: 7..13 GiB, as given; 0 holds exactly 7 GiB. q (4 GiB + 1 byte) in place of p (4 GiB) leaves it 1 byte
    # below: refused. With 0 one byte higher it ends at the edge itself: taken.
    s = planner_state([0, 1, 2], [part("p", 0, [1, 0], size_bytes=4 * GiB), part("q", 0, [2, 0], size_bytes=4 * GiB + 1)])
    band = (np.asarray([7, 6, 0]) * GiB, np.asarray([13, 14, 99]) * GiB)
    for extra, accepted in ((0, False), (1, True)):
        s.bytes[:] = [7 * GiB + extra, 9 * GiB, 20 * GiB]
        ok, _ = _replacement_rule(s, 0, 0, 1, band)
        assert ok(1) is accepted
