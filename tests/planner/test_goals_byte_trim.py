"""The byte-trim pass (planner/goals/byte_trim.py): a moved replica swapped for a smaller one from the
same donor when both brokers stay in the band. Brokers 0..n-1 are their own indexes."""

from __future__ import annotations

from typing import Any

from kafka_rebalance.options import PlanOptions
from kafka_rebalance.planner.goals.base import Goal
from kafka_rebalance.planner.goals.byte_trim import ByteTrimGoal
from kafka_rebalance.planner.goals.replica_count import ReplicaCountGoal
from kafka_rebalance.planner.state import ClusterState
from kafka_rebalance.planner.targets import set_targets
from kafka_rebalance.snapshot import snapshot_from_dict
from tests.support.clusters import GiB, part, planner_state


def moved_4_gib(**options) -> ClusterState:
    # Broker 0: a (4 GiB), b (3), c (1); broker 1: d (2). 10 GiB, 5 each. The plan so far moved a to 1.
    s = planner_state([0, 1], [part("a", 0, [0], size_bytes=4 * GiB), part("b", 0, [0], size_bytes=3 * GiB),
                               part("c", 0, [0], size_bytes=GiB), part("d", 0, [1], size_bytes=2 * GiB)], targets=True, **options)
    s.move(0, 0, 1)
    return s


def test_a_move_is_swapped_for_the_smallest_replica_that_keeps_both_brokers_in_the_band() -> None:
    # After a's move: 4 / 6 GiB. The band (10 % less the 0.5 % edge) is [4.5025, 5.4975]: a replacement
    # of at least 4 - 1.4975 GiB keeps both inside; b (3 GiB) is the smallest such. 5 / 5 and 1 GiB saved.
    s = moved_4_gib()
    ByteTrimGoal().optimize(s)
    assert [s.row(p) for p in range(4)] == [[0], [1], [0], [1]]
    assert s.moved_bytes() == 3 * GiB and not s.touched[0] and 0 not in s.cur


def test_a_receiver_still_below_the_band_keeps_the_larger_move() -> None:
    # Broker 0: a (4), b (3), c (3); broker 1: d (empty). After a's move 6 / 4 GiB: broker 1 is below the band,
    # so a smaller replica would only leave it further below.
    s = planner_state([0, 1], [part("a", 0, [0], size_bytes=4 * GiB), part("b", 0, [0], size_bytes=3 * GiB),
                               part("c", 0, [0], size_bytes=3 * GiB), part("d", 0, [1], size_bytes=0)], targets=True)
    s.move(0, 0, 1)
    ByteTrimGoal().optimize(s)
    assert s.moved_bytes() == 4 * GiB and s.row(0) == [1]


def test_a_goal_optimised_earlier_may_veto_the_smaller_replica() -> None:
    class NoB(Goal):
        def accept_move(self, state, p, src, dst):
            return p != 1

    s = moved_4_gib()
    s.vetoes = [NoB()]
    ByteTrimGoal().optimize(s)
    assert s.moved_bytes() == 4 * GiB and s.row(1) == [0]


def cluster(layout: dict[int, dict[str, int]], unit: int = GiB, **options) -> ClusterState:
    """``layout``: broker -> {topic: size in ``unit``}, one single-replica partition per topic; partitions
    are indexed in topic order, so tests move them by name."""
    parts = [part(t, 0, [b], size_bytes=size * unit) for b, topics in layout.items() for t, size in topics.items()]
    return planner_state(list(layout), sorted(parts, key=lambda p: p["topic"]), targets=True, **options)


def move(s: ClusterState, topic: str, src: int, dst: int) -> None:
    s.move(index(s, topic), src, dst)


def index(s: ClusterState, topic: str) -> int:
    return [p.topic for p in s.parts].index(topic)


def where(s: ClusterState) -> dict[str, int]:
    """Each (single-replica) partition's broker, by topic."""
    return {s.parts[p].topic: s.row(p)[0] for p in range(s.n_parts)}


def test_the_trim_stops_short_of_the_band_edge() -> None:
    # Target 100 GiB each; the band less the 0.5 % edge is [90.05, 109.95]. After p (20) moves, both hold
    # 100: slack 9.95, so a replacement must be at least 10.05 GiB. q (10) would leave broker 1 at exactly
    # 90, the plain 10 % band's edge, where the gate's exact check must not hinge on rounding: p stays.
    s = cluster({0: {"p": 20, "q": 10, "f0": 90}, 1: {"f1": 80}})
    move(s, "p", 0, 1)
    ByteTrimGoal().optimize(s)
    assert where(s) == {"f0": 0, "f1": 1, "p": 1, "q": 0}
    assert s.moved_bytes() == 20 * GiB


def test_the_donors_room_under_the_band_top_limits_the_saving() -> None:
    # Target 100 GiB each. After p (20) moves 0 -> 1: 105 / 100 / 95. Slack: broker 1 can lose 100 - 90.05 =
    # 9.95, broker 0 gain only 109.95 - 105 = 4.95; so the replacement is at least 20 - 4.95 = 15.05 GiB:
    # q16, not q12 (which would push broker 0 to 113). A second pass finds nothing: 0 is then at 109.
    s = cluster({0: {"p": 20, "q12": 12, "q16": 16, "f0": 77}, 1: {"f1": 80}, 2: {"f2": 95}})
    move(s, "p", 0, 1)
    ByteTrimGoal().optimize(s)
    assert where(s) == {"f0": 0, "f1": 1, "f2": 2, "p": 0, "q12": 0, "q16": 1}
    assert s.moved_bytes() == 16 * GiB


def test_the_largest_move_is_trimmed_first() -> None:
    # Target 100 GiB each. b (10) and m (20) moved 0 -> 1: 100 / 96 / 104. Slack 96 - 90.05 = 5.95 (0 has
    # 9.95). Largest first: m is swapped for q15 (>= 14.05, saves 5), leaving 0.95 of slack, too little for
    # b (nothing on 0 in [9.05, 10)). Smallest first would have spent it on b -> q6 (saves only 4).
    s = cluster({0: {"b": 10, "m": 20, "q15": 15, "q6": 6, "f0": 79}, 1: {"f1": 66}, 2: {"f2": 104}})
    move(s, "b", 0, 1)
    move(s, "m", 0, 1)
    ByteTrimGoal().optimize(s)
    assert where(s) == {"b": 1, "f0": 0, "f1": 1, "f2": 2, "m": 0, "q15": 1, "q6": 0}
    assert s.moved_bytes() == 25 * GiB


def test_moves_of_the_same_size_are_trimmed_in_partition_order() -> None:
    # Target 100 GiB each. a (20) moved 1 -> 2 and b (20) moved 0 -> 2: 102 / 102 / 96. The receiver's slack,
    # 96 - 90.05 = 5.95, is enough for one swap: a comes first (partition order), swapped for broker 1's
    # q1 (15); then broker 2 holds 91 and b keeps its move.
    s = cluster({0: {"b": 20, "q0": 15, "f0": 87}, 1: {"a": 20, "q1": 15, "f1": 87}, 2: {"f2": 56}})
    move(s, "a", 1, 2)
    move(s, "b", 0, 2)
    ByteTrimGoal().optimize(s)
    assert where(s) == {"a": 1, "b": 2, "f0": 0, "f1": 1, "f2": 2, "q0": 0, "q1": 2}


# In bytes, target 1000 per broker, band [900.5, 1099.5]. a (90) moved 0 -> 1, b (10) moved 1 -> 2, so
# 1000 / 950 / 1050 (with_c: c (5) moved 2 -> 0 too, 1085 - 90 + 5 = 1000 / 950 / 1045 - 5 + 10 = 1050).
# Pass 1, largest first: a needs a replacement >= 90 - (950 - 900.5) = 40.5, and qa is 40: kept. b is swapped
# for qb (9; 1 has 149.5 of room), which adds 1 to broker 1: 951; with_c, c is swapped for qc (4) as well.
# A second pass would now find qa (>= 90 - 50.5 = 39.5): it runs only if the first saved MORE than 1 % of
# the bytes moved.
def layout_for_second_pass(with_c: bool) -> ClusterState:
    if with_c:
        layout = {0: {"a": 90, "qa": 40, "f0": 955}, 1: {"b": 10, "qb": 9, "f1": 851}, 2: {"c": 5, "qc": 4, "f2": 1036}}
    else:
        layout = {0: {"a": 90, "qa": 40, "f0": 960}, 1: {"b": 10, "qb": 9, "f1": 851}, 2: {"f2": 1040}}
    s = cluster(layout, unit=1)
    move(s, "a", 0, 1)
    move(s, "b", 1, 2)
    if with_c:
        move(s, "c", 2, 0)
    return s


def test_a_first_pass_saving_exactly_one_percent_is_the_last() -> None:
    # 100 bytes moved, 1 saved: exactly 1 %, not more. a keeps its move: 90 + 9 bytes moved.
    s = layout_for_second_pass(with_c=False)
    ByteTrimGoal().optimize(s)
    assert where(s) == {"a": 1, "b": 1, "f0": 0, "f1": 1, "f2": 2, "qa": 0, "qb": 2}
    assert s.moved_bytes() == 99


def test_a_first_pass_saving_more_than_one_percent_earns_a_second() -> None:
    # 105 bytes moved, 1 + 1 saved (more than 1.05): the second pass swaps a for qa (b1 = 951 - 50 = 901,
    # still in the band). Moved: qa 40 + qb 9 + qc 4.
    s = layout_for_second_pass(with_c=True)
    ByteTrimGoal().optimize(s)
    assert where(s) == {"a": 0, "b": 1, "c": 2, "f0": 0, "f1": 1, "f2": 2, "qa": 1, "qb": 2, "qc": 0}
    assert s.moved_bytes() == 53


def test_a_move_with_no_slack_is_skipped_and_the_next_one_still_trimmed() -> None:
    # No tolerance: targets are exactly 1000 bytes. a (50) moved 0 -> 1 and b (10) moved 2 -> 1: 1000 / 1001 / 999.
    # a first: slack min(1001 - 1000, 1000 - 1000) = 0, skipped. b: slack exactly 1, so qb (9 = 10 - 1) fits
    # and leaves all three at 1000.
    s = cluster({0: {"a": 50, "f0": 1000}, 1: {"f1": 941}, 2: {"b": 10, "qb": 9, "f2": 990}}, unit=1, byte_tolerance=0.0)
    move(s, "a", 0, 1)
    move(s, "b", 2, 1)
    ByteTrimGoal().optimize(s)
    assert where(s) == {"a": 1, "b": 2, "f0": 0, "f1": 1, "f2": 2, "qb": 1}
    assert s.bytes.tolist() == [1000, 1000, 1000]


def test_a_partition_whose_replication_factor_changed_does_not_end_the_sweep() -> None:
    # "_rf" (empty, sorted first) gained a replica: not a single move, passed over; a is still trimmed as in
    # the first test (b instead of a).
    s = planner_state([0, 1], [part("_rf", 0, [1], size_bytes=0), part("a", 0, [0], size_bytes=4 * GiB),
                               part("b", 0, [0], size_bytes=3 * GiB), part("c", 0, [0], size_bytes=GiB),
                               part("d", 0, [1], size_bytes=2 * GiB)], targets=True)
    s.add(0, 0)
    s.move(1, 0, 1)
    ByteTrimGoal().optimize(s)
    assert [s.row(p) for p in range(5)] == [[1, 0], [0], [1], [0], [1]]


def test_the_swap_keeps_counts_so_the_count_goal_does_not_veto_it() -> None:
    # 4 replicas over 2 brokers: each must hold exactly 2. Moving b alone from 0 (2 left) would break that,
    # but a swap (a back, b over) does not: the count goal is asked as for a count-neutral move.
    s = moved_4_gib()
    s.vetoes = [ReplicaCountGoal()]
    ByteTrimGoal().optimize(s)
    assert [s.row(p) for p in range(4)] == [[0], [1], [0], [1]]


# --------------------------------------------------------------------------- after the leader-keeping pass


def test_after_the_leader_swaps_a_followers_move_is_trimmed_for_a_smaller_follower_never_for_a_leader() -> None:
    # f (4 GiB, led by 2) moved from 0 to 1. On 0, l (3, led by 0) and s (3, led by 2): equal sizes, l first in
    # the index. Bytes 6 / 6 / 12, band at 50 % about 4..12: l would fit, but it would move 0's leadership.
    s = planner_state([0, 1, 2], [part("f", 0, [2, 0], size_bytes=4 * GiB), part("l", 0, [0, 2], size_bytes=3 * GiB),
                                  part("s", 0, [2, 0], size_bytes=3 * GiB), part("g", 0, [1, 2], size_bytes=2 * GiB)],
                      targets=True, byte_tolerance=0.5)
    s.move(0, 0, 1)
    ByteTrimGoal(followers_only=True).optimize(s)
    assert [s.row(p) for p in range(4)] == [[2, 0], [1, 2], [0, 2], [2, 1]]  # f, g, l, s (topic order)
    assert s.moved_bytes() == 3 * GiB and s.moved_replicas() == 1


def test_after_the_leader_swaps_no_donor_is_trimmed_above_the_fullest_broker() -> None:
    # f (4, led by 2) moved from 0 to 1: 8 / 7 / 6 GiB, 0 the fullest. The band (mean 7 at 50 %) lets s (2 GiB)
    # stand in for f, which the plain trim does (0 ends at 10); the follower trim keeps 0 at 8, max/mean unchanged.
    def moved() -> ClusterState:
        s = planner_state([0, 1, 2], [part("f", 0, [2, 0], size_bytes=4 * GiB), part("s", 0, [2, 0], size_bytes=2 * GiB),
                                      part("h", 0, [0], size_bytes=6 * GiB), part("g", 0, [1], size_bytes=3 * GiB)],
                          targets=True, byte_tolerance=0.5)
        s.move(0, 0, 1)
        return s

    plain, followers = moved(), moved()
    ByteTrimGoal().optimize(plain)
    ByteTrimGoal(followers_only=True).optimize(followers)
    assert plain.row(3) == [2, 1] and plain.bytes[0] == 10 * GiB  # s (partitions in topic order: f, g, h, s)
    assert followers.row(0) == [2, 1] and followers.row(3) == [2, 0] and followers.bytes[0] == 8 * GiB


# --------------------------------------------------------------------------- the limits of a swap


def test_the_donor_may_not_take_back_more_than_the_band_less_its_edge() -> None:
    # test_the_donors_room_under_the_band_top_limits_the_saving with q15 in q12's place: broker 0 may gain 109.95 -
    # 105 = 4.95 GiB, so the replacement is at least 15.05: q16. q15 would end broker 0 at 110, the plain band's top.
    s = cluster({0: {"p": 20, "q15": 15, "q16": 16, "f0": 74}, 1: {"f1": 80}, 2: {"f2": 95}})
    move(s, "p", 0, 1)
    ByteTrimGoal().optimize(s)
    assert where(s) == {"f0": 0, "f1": 1, "f2": 2, "p": 0, "q15": 0, "q16": 1}


def test_the_donors_disk_limit_bounds_what_it_takes_back() -> None:
    # moved_4_gib (4 / 6 GiB after a's move), but broker 0's disks hold at most 4.5 GiB: it may take back 0.5, so a
    # replacement must be at least 3.5 GiB; b (3) and c (1) are smaller: a keeps its move.
    s = moved_4_gib()
    s.disk_limit[:] = [4.5 * GiB, float("inf")]
    ByteTrimGoal().optimize(s)
    assert s.row(0) == [1] and s.moved_bytes() == 4 * GiB


def test_a_move_that_repaired_a_rack_violation_is_never_undone() -> None:
    # Rack a: 0, 1; rack b: 2. p (20 GiB) on 0 and 1 crowded rack a; its replica on 1 went to 2. 100 / 80 / 100 GiB,
    # band [84, 102.67] less its edge: q (12) could stand in for p (>= 4.05), but p back on 1 is the unsafe row again.
    s = planner_state([(0, "a"), (1, "a"), (2, "b")],
                      [part("f0", 0, [0], size_bytes=80 * GiB), part("f1", 0, [1], size_bytes=68 * GiB),
                       part("f2", 0, [2], size_bytes=80 * GiB), part("p", 0, [0, 1], size_bytes=20 * GiB),
                       part("q", 0, [1], size_bytes=12 * GiB)], targets=True)
    s.move(3, 1, 2)
    ByteTrimGoal().optimize(s)
    assert s.row(3) == [0, 2] and s.row(4) == [1] and s.moved_bytes() == 20 * GiB


def test_a_move_a_tally_refuses_to_undo_is_passed_over_and_the_next_one_trimmed() -> None:
    # test_the_largest_move_is_trimmed_first, but a goal keeping tallies of its own refuses m back on 0: b is
    # trimmed instead, for q6 (>= 10 - 5.95 = 4.05, the smallest such).
    class KeepM(Goal):
        def accept_move(self, state, p, src, dst):
            return not (state.parts[p].topic == "m" and dst == 0)

    s = cluster({0: {"b": 10, "m": 20, "q15": 15, "q6": 6, "f0": 79}, 1: {"f1": 66}, 2: {"f2": 104}})
    move(s, "b", 0, 1)
    move(s, "m", 0, 1)
    s.vetoes = [KeepM()]
    ByteTrimGoal().optimize(s)
    assert where(s) == {"b": 0, "f0": 0, "f1": 1, "f2": 2, "m": 1, "q15": 0, "q6": 1}


def followers(lead_f_by: int, with_e: bool = False) -> ClusterState:
    """test_after_the_leader_swaps_a_followers_move_is_trimmed_for_a_smaller_follower_never_for_a_leader's cluster:
    f (4 GiB) on 2 and 0 (or 0 and 2 when led by 0) moved from 0 to 1; ``with_e``: e (1 GiB, on 0 and 2, led by 0)
    moved from 0 to 1 as well."""
    f = part("f", 0, [2, 0] if lead_f_by == 2 else [0, 2], size_bytes=4 * GiB)
    parts = [f, part("l", 0, [0, 2], size_bytes=3 * GiB), part("s", 0, [2, 0], size_bytes=3 * GiB),
             part("g", 0, [1, 2], size_bytes=2 * GiB)]
    if with_e:
        parts.append(part("e", 0, [0, 2], size_bytes=GiB))
    s = planner_state([0, 1, 2], parts, targets=True, byte_tolerance=0.5)
    for p in range(s.n_parts):
        if s.parts[p].topic in ("e", "f"):
            s.move(p, 0, 1)
    return s


def test_after_the_leader_swaps_a_move_off_the_leader_is_not_trimmed_back_onto_it() -> None:
    # f led by 0, its original first replica: taking f back onto 0 for s would leave f's leadership to elect again.
    s = followers(lead_f_by=0)
    ByteTrimGoal(followers_only=True).optimize(s)
    assert s.row(0) == [1, 2] and s.moved_bytes() == 4 * GiB  # f is partition 0 (topic order f, g, l, s)


def test_after_the_leader_swaps_a_move_passed_over_does_not_end_the_sweep() -> None:
    # e (topic order first) moved off its leader 0: passed over. f is still trimmed for s: 6 / 7 / 13 GiB at 50 %
    # (band about 4.33..13, less the edge) lets broker 1 lose 4 - 1.35 GiB; s (3, led by 2) is the smallest that fits.
    s = followers(lead_f_by=2, with_e=True)
    ByteTrimGoal(followers_only=True).optimize(s)
    assert [s.parts[p].topic for p in range(s.n_parts)] == ["e", "f", "g", "l", "s"]
    assert [s.row(p) for p in range(s.n_parts)] == [[1, 2], [2, 0], [1, 2], [0, 2], [2, 1]]


def test_a_move_whose_log_dir_can_no_longer_hold_it_is_passed_over_and_the_next_one_trimmed() -> None:
    # test_the_largest_move_is_trimmed_first, with broker 0's data in two log dirs (disks filled to 100 %): /a of 84
    # GiB holds m and f0 (79), /b of 41 holds b, q15 and q6 (31); 1 and 2 have one dir of 125 GiB each. b and m moved
    # 0 -> 1 and x (20) 2 -> 0: 100 / 96 / 104 GiB of 100 each, band less its edge [90.05, 109.95]. x landed in /a,
    # then the roomiest (84 - 59 = 25 GiB free, /b 41 - 21 = 20): /a has 5 left, too little to take m (20) back.
    # So m keeps its move (x, next, has nothing on 2 in [14.05, 20) to stand in), and b, which /b takes back, is
    # swapped for q6 (>= 10 - 5.95 = 4.05, the smallest such), as where a tally refused m.
    def dirs(b: int) -> list[dict[str, Any]]:
        return [{"path": "/a", "total_bytes": 84 * GiB}, {"path": "/b", "total_bytes": 41 * GiB}] if b == 0 else \
            [{"path": "/d", "total_bytes": 125 * GiB}]

    layout = {0: {"b": (10, "/b"), "f0": (59, "/a"), "m": (20, "/a"), "q15": (15, "/b"), "q6": (6, "/b")},
              1: {"f1": (66, "/d")}, 2: {"f2": (104, "/d"), "x": (20, "/d")}}
    parts = sorted(({"topic": t, "partition": 0, "replicas": [b], "leader": b, "isr": [b], "size_bytes": size * GiB,
                     "log_dirs": [path]} for b, topics in layout.items() for t, (size, path) in topics.items()),
                   key=lambda p: p["topic"])
    snap = snapshot_from_dict({"cluster_id": "jbod", "brokers": [{"id": b, "log_dirs": dirs(b)} for b in layout],
                               "partitions": parts})
    s = ClusterState(snap, PlanOptions(max_disk_usage=1.0))
    set_targets(s)
    move(s, "b", 0, 1)
    move(s, "m", 0, 1)
    move(s, "x", 2, 0)
    assert s.bytes.tolist() == [100 * GiB, 96 * GiB, 104 * GiB]
    ByteTrimGoal().optimize(s)
    assert where(s) == {"b": 0, "f0": 0, "f1": 1, "f2": 2, "m": 1, "q15": 0, "q6": 1, "x": 0}
