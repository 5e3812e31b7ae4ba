"""Per-broker targets on a ClusterState (planner/targets.py): replica-count ranges, byte targets and
the byte band the gate allows, worked out by hand for small clusters."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_rebalance.planner import PlanError
from kafka_rebalance.planner.state import ClusterState
from tests.support.clusters import GiB, part, planner_state


def targeted(brokers: list[Any], partitions: list[dict[str, Any]], **options: Any) -> ClusterState:
    return planner_state(brokers, partitions, targets=True, **options)


def gib(values: Any) -> list[float]:
    return [round(float(v) / GiB, 6) for v in values]


def test_one_common_level_for_counts_and_bytes() -> None:
    # Six single-replica partitions of 1..6 GiB on broker 0 of three: 2 replicas and 7 GiB each.
    s = targeted([0, 1, 2], [part("t", i, [0], size_bytes=(i + 1) * GiB) for i in range(6)])
    assert (s.lo.tolist(), s.hi.tolist()) == ([2, 2, 2], [2, 2, 2])
    assert gib(s.byte_target) == [7, 7, 7] and s.byte_mean == 7 * GiB
    assert s.clamped_racks == []


def test_a_total_that_does_not_divide_gives_floor_and_ceil() -> None:
    s = targeted([0, 1, 2], [part("t", i, [0]) for i in range(7)])
    assert (s.lo.tolist(), s.hi.tolist()) == ([2, 2, 2], [3, 3, 3])


def test_partitions_that_stay_count_where_they_are() -> None:
    # x is excluded and sits on broker 1 (two replicas, 2 GiB); y-1 has no leader and sits on 0.
    # 5 replicas, 5 GiB... plus the two movable t partitions: 7 replicas on 3 brokers, and broker 1's
    # fixed two already reach the level of the others.
    parts = [part("x", 0, [1]), part("x", 1, [1]), part("y", 1, [0], leader=-1, isr=[]),
             part("t", 0, [0]), part("t", 1, [0]), part("t", 2, [0]), part("t", 3, [0])]
    s = targeted([0, 1, 2], parts, exclude_topics=("x",))
    assert (s.lo.tolist(), s.hi.tolist()) == ([2, 2, 2], [3, 3, 3])
    assert gib(s.byte_target) == pytest.approx([7 / 3] * 3)
    # A fixed load above the common level is that broker's target: 4 excluded replicas on broker 1.
    parts = [part("x", i, [1]) for i in range(4)] + [part("t", i, [0]) for i in range(2)]
    s = targeted([0, 1, 2], parts, exclude_topics=("x",))
    assert (s.lo.tolist(), s.hi.tolist()) == ([1, 4, 1], [1, 4, 1])
    assert gib(s.byte_target) == [1, 4, 1]


def test_dead_and_decommissioned_brokers_get_no_target_and_the_mean_is_over_eligible_brokers() -> None:
    parts = [part("t", i, [i % 4]) for i in range(8)]
    s = targeted([0, 1, (2, None, False), 3], parts, decommission_brokers=(3,))
    assert (s.lo.tolist(), s.hi.tolist()) == ([4, 4, 0, 0], [4, 4, 0, 0])
    assert gib(s.byte_target) == [4, 4, 0, 0] and s.byte_mean == 4 * GiB


def test_rack_safety_clamps_the_small_rack() -> None:
    # RF 3 over racks of 4, 4 and 3 brokers puts one replica of each of the 12 partitions in every rack:
    # a broker of rack c holds 12 / 3 = 4, one of a or b 12 / 4 = 3.
    brokers = [(b, "a") for b in range(4)] + [(b, "b") for b in range(4, 8)] + [(b, "c") for b in range(8, 11)]
    parts = [part("t", i, [i % 4, 4 + i % 4, 8 + i % 3]) for i in range(12)]
    s = targeted(brokers, parts)
    assert s.lo.tolist() == s.hi.tolist() == [3] * 8 + [4] * 3
    assert gib(s.byte_target) == [3] * 8 + [4] * 3
    assert s.byte_mean == pytest.approx(36 / 11 * GiB)
    # Every rack sits off the level it would have without racks (36 / 11 per broker): all are named.
    assert s.clamped_racks == ["a", "b", "c"]
    # Racks of equal size are not clamped: 4 + 4 + 4 brokers hold 3 each.
    even = [(b, "abc"[b // 4]) for b in range(12)]
    s = targeted(even, [part("t", i, [i % 4, 4 + i % 4, 8 + i % 4]) for i in range(12)])
    assert s.lo.tolist() == s.hi.tolist() == [3] * 12 and s.clamped_racks == []


def test_a_replication_factor_change_aims_at_the_new_totals() -> None:
    # RF 1 -> 2: four 1 GiB partitions become 8 replicas, 4 per broker.
    s = targeted([0, 1], [part("t", i, [0]) for i in range(4)], replication_factor=2)
    assert (s.lo.tolist(), s.hi.tolist()) == ([4, 4], [4, 4])
    assert gib(s.byte_target) == [4, 4]


def test_the_byte_band_is_the_tolerance_or_how_far_a_broker_is_today_whichever_is_wider() -> None:
    # 3 GiB on 0, 1 GiB on 1: both are 50 % off the 2 GiB target today.
    parts = [part("t", 0, [0], size_bytes=3 * GiB), part("t", 1, [1], size_bytes=GiB)]
    s = targeted([0, 1], parts)
    assert gib(s.byte_allowed_hi) == [3, 3] and gib(s.byte_allowed_lo) == [1, 1]
    s = targeted([0, 1], parts, byte_tolerance=0.6)
    assert gib(s.byte_allowed_hi) == [3.2, 3.2] and gib(s.byte_allowed_lo) == pytest.approx([0.8, 0.8])
    # Balanced today: the band is the tolerance alone.
    s = targeted([0, 1], [part("t", 0, [0], size_bytes=2 * GiB), part("t", 1, [1], size_bytes=2 * GiB)], byte_tolerance=0.1)
    assert gib(s.byte_allowed_hi) == [2.2, 2.2] and gib(s.byte_allowed_lo) == [1.8, 1.8]


def test_today_is_measured_against_the_targets_scaled_to_todays_total() -> None:
    # RF 1 -> 2 doubles the targets (4 GiB each); today's 3 + 1 GiB are measured against 2 GiB each,
    # so the band is still 50 %: 6 GiB and 2 GiB around the new target.
    parts = [part("t", 0, [0], size_bytes=3 * GiB), part("t", 1, [1], size_bytes=GiB)]
    s = targeted([0, 1], parts, replication_factor=2)
    assert gib(s.byte_target) == [4, 4]
    assert gib(s.byte_allowed_hi) == [6, 6] and gib(s.byte_allowed_lo) == [2, 2]


def test_an_empty_broker_set_of_sizes_has_a_zero_band() -> None:
    s = targeted([0, 1], [part("t", 0, [0], size_bytes=0), part("t", 1, [1], size_bytes=0)])
    assert gib(s.byte_target) == [0, 0]
    assert gib(s.byte_allowed_hi) == [0, 0] and gib(s.byte_allowed_lo) == [0, 0]


def test_an_impossible_replication_factor_is_a_plan_error() -> None:
    with pytest.raises(PlanError, match=r"^replication factor 3 needs 3 eligible brokers, only 2 are live and not decommissioned$"):
        targeted([0, 1, 2], [part("t", 0, [0, 1, 2])], decommission_brokers=(2,))


def test_a_lower_side_of_its_own_widens_only_the_floor() -> None:
    # Balanced today (2 GiB each): 10 % above the mean, 30 % below it.
    parts = [part("t", 0, [0], size_bytes=2 * GiB), part("t", 1, [1], size_bytes=2 * GiB)]
    s = targeted([0, 1], parts, byte_tolerance=0.1, byte_tolerance_below=0.3)
    assert gib(s.byte_hi) == [2.2, 2.2] and gib(s.byte_lo) == [1.4, 1.4]
    assert gib(s.byte_allowed_hi) == [2.2, 2.2] and gib(s.byte_allowed_lo) == [1.4, 1.4]
    # 0 is a floor of its own too (the mean itself), not "none given".
    s = targeted([0, 1], parts, byte_tolerance=0.1, byte_tolerance_below=0.0)
    assert gib(s.byte_hi) == [2.2, 2.2] and gib(s.byte_lo) == [2, 2]
