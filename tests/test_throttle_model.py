"""What a run's move times say about the plan's two figures, on cases worked out by hand."""

from __future__ import annotations

import pytest

from kafka_rebalance.throttle_model import EstimateMiss, RunMeasure, measure_run


def test_small_moves_that_took_long_are_a_fixed_cost_not_a_slow_throttle() -> None:
    # The cluster: 4 MiB moves at 50 MiB/s, planned at 0.08 s each with no fixed cost, took 45-62 s.
    steps = [(0.08, 45.0 + i % 18) for i in range(52)]
    m = measure_run(steps, 1.0, 0.0, estimated=1.5, actual=55.0)
    assert m is not None and (m.miss, m.efficiency) == (EstimateMiss.FIXED_COST, 1.0)
    assert 45 <= m.move_fixed_seconds <= 62


def test_large_moves_that_took_twice_as_long_are_a_slow_throttle() -> None:
    # Five moves of 100 s of copying plus 2 s fixed took 202 s each: the copying took 200 s, half the rate.
    m = measure_run([(102.0, 202.0)] * 5, 1.0, 2.0, estimated=102.0, actual=202.0)
    assert m == RunMeasure(0.5, 2.0, EstimateMiss.THROUGHPUT)


def test_moves_of_different_sizes_separate_the_two() -> None:
    # Copies of 2, 10 and 20 s planned with 1 s fixed; each took 5 s + twice its copy: efficiency 0.5, fixed 5 s.
    m = measure_run([(3.0, 9.0), (11.0, 25.0), (21.0, 45.0)], 1.0, 1.0, estimated=21.0, actual=45.0)
    assert m == RunMeasure(0.5, 5.0, EstimateMiss.BOTH)


def test_a_run_within_a_quarter_of_its_estimate_held() -> None:
    m = measure_run([(12.0, 13.0)] * 4, 1.0, 2.0, estimated=48.0, actual=52.0)
    assert m is not None and m.miss is EstimateMiss.HELD


@pytest.mark.parametrize("steps", [[], [(1.0, 2.0)]])
def test_nothing_to_measure_without_moves_or_time(steps) -> None:
    assert measure_run(steps, 1.0, 2.0, estimated=1.0, actual=0.0) is None
