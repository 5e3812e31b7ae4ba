"""kafka_rebalance.balance's scalar rules, by hand (the rack-aware targets are covered in tests/planner)."""

from __future__ import annotations

import pytest

from kafka_rebalance.balance import FORCED_SHARE_ROOM, Tolerances, byte_band, byte_deviation, count_bounds, count_spread, share_range


def test_count_spread_by_hand() -> None:
    # 3 + 5 + 4 + 8 = 20 over 4 brokers: ideal 5, floor = ceil = 5; 3, 4 and 8 are outside.
    assert count_spread([3, 5, 4, 8]) == {"ideal": 5.0, "min": 3, "max": 8, "floor": 5, "ceil": 5, "brokers_outside": 3}
    # 10 over 4: ideal 2.5, floor 2, ceil 3; only 4 and 1 are outside [2, 3].
    assert count_spread([4, 2, 3, 1]) == {"ideal": 2.5, "min": 1, "max": 4, "floor": 2, "ceil": 3, "brokers_outside": 2}
    # Exactly at floor and ceil counts as inside.
    assert count_spread([2, 3, 3, 2])["brokers_outside"] == 0
    assert count_spread([]) == {"ideal": 0.0, "min": 0, "max": 0, "floor": 0, "ceil": 0, "brokers_outside": 0}


def test_count_bounds() -> None:
    assert count_bounds(10, 4) == (2, 3) and count_bounds(8, 4) == (2, 2) and count_bounds(5, 0) == (0, 0)


def test_a_band_widens_by_the_whole_replicas_it_covers() -> None:
    # share 2.5: 10 % of it is 0.25, no whole replica: still 2..3
    assert count_bounds(10, 4, 0.1) == (2, 3)
    # share 1 stays 1..1 at 10 % (rounding outward would let a broker of a small cluster sit empty)
    assert share_range(1, 0.1) == (1, 1)
    # share 100: 10 replicas each way; share 105.5: floor(10.55) = 10 -> 95..116
    assert share_range(100, 0.1) == (90, 110) and count_bounds(211, 2, 0.1) == (95, 116)
    # share 19.99...: floor(1.999) = 1 -> 18..21; exact arithmetic, no float rounding at the edge
    assert count_bounds(1999, 100, 0.1) == (18, 21) and count_bounds(2000, 100, 0.1) == (18, 22)
    assert share_range(3, 1.0) == (0, 6)


def test_byte_deviation_by_hand() -> None:
    # mean 100; |60 - 100| / 100 = 0.4 is the largest deviation.
    assert byte_deviation([60, 120, 120]) == pytest.approx(0.4)
    assert byte_deviation([100, 100]) == 0.0
    assert byte_deviation([]) == 0.0 and byte_deviation([0, 0]) == 0.0
    # Above the mean counts as much as below: mean 100, |150 - 100| / 100 = 0.5.
    assert byte_deviation([50, 150]) == pytest.approx(0.5)


def test_the_default_tolerances_and_the_replica_range() -> None:
    assert Tolerances().replica_tolerance == 0.1 and Tolerances().byte_tolerance == 0.1
    with pytest.raises(ValueError, match="replica_tolerance must be within 0..1"):
        Tolerances(replica_tolerance=1.5)


@pytest.mark.parametrize("bad", [-0.01, 10.01])
def test_tolerances_are_checked(bad: float) -> None:
    with pytest.raises(ValueError, match=f"byte_tolerance must be within 0..10 \\(a fraction of the mean\\), got {bad}"):
        Tolerances(byte_tolerance=bad)


@pytest.mark.parametrize("edge", [0, 10])
def test_tolerance_edges_are_allowed(edge: float) -> None:
    assert Tolerances(byte_tolerance=edge).byte_tolerance == edge


def test_the_byte_band_takes_a_lower_side_of_its_own_and_widens_each_side_for_a_forced_share_by_its_tolerance() -> None:
    assert byte_band(100.0, 100.0, 0.1) == pytest.approx((90.0, 110.0))
    assert byte_band(100.0, 100.0, 0.1, below=0.3) == pytest.approx((70.0, 110.0))
    assert byte_band(100.0, 100.0, 0.1, below=None) == pytest.approx((90.0, 110.0))
    # A forced share below the mean (a ceiling) is widened by the lower side's tolerance, one above by the upper's.
    assert byte_band(50.0, 100.0, 0.1, below=0.3)[0] == pytest.approx(50.0 * (1 - FORCED_SHARE_ROOM * 0.3))
    assert byte_band(150.0, 100.0, 0.1, below=0.3)[1] == pytest.approx(150.0 * (1 + FORCED_SHARE_ROOM * 0.1))


def test_levels_of_alike_brokers_equal_those_of_brokers_all_weighing_one() -> None:
    from fractions import Fraction

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from kafka_rebalance.balance import _levels

    # Alike brokers (no weights) take shortcuts, a rack with no fixed load most of all; weights of 1 take the general
    # sums. Both must give the same exact levels and clamped racks.
    racks = st.dictionaries(st.sampled_from("abcd"), st.lists(st.integers(0, 6) | st.just(0), min_size=1, max_size=5),
                            min_size=1)

    @settings(max_examples=200, deadline=None)
    @given(racks, st.data())
    def check(floors: dict[str, list[int]], data: st.DataObject) -> None:
        lo = {g: sum(fs) + data.draw(st.integers(0, 6)) for g, fs in floors.items()}
        hi = {g: lo[g] + data.draw(st.integers(0, 12)) for g in floors}
        total = data.draw(st.integers(sum(lo.values()), sum(hi.values())))
        ones = {g: [Fraction(1)] * len(fs) for g, fs in floors.items()}
        assert _levels(floors, lo, hi, total) == _levels(floors, lo, hi, total, ones)

    check()
