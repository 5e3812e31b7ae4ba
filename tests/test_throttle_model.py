"""What a run's move times say about the plan's two figures, on cases worked out by hand."""

from __future__ import annotations

import pytest

from kafka_rebalance.throttle_model import EstimateMiss, RunMeasure, measure_run


def test_small_moves_that_took_long_are_a_fixed_cost_not_a_slow_throttle() -> None:
    # The cluster: 4 MiB moves at 50 MiB/s, planned at 0.08 s each with no fixed cost, took 45-62 s
    # (i % 18 spreads them over 45..62; their mean is 53.23). Nothing is said of the rate.
    steps = [(0.08, 45.0 + i % 18) for i in range(52)]
    mean = sum(45.0 + i % 18 for i in range(52)) / 52
    assert measure_run(steps, 1.0, 0.0, estimated=1.5, actual=55.0) == RunMeasure(None, round(mean - 0.08, 2),
                                                                                  EstimateMiss.FIXED_COST)


def test_large_moves_that_took_twice_as_long_are_a_slow_throttle() -> None:
    # Five moves of 100 s of copying plus 2 s fixed took 202 s each: the copying took 200 s, half the rate.
    assert measure_run([(102.0, 202.0)] * 5, 1.0, 2.0, estimated=102.0, actual=202.0) == \
        RunMeasure(0.5, None, EstimateMiss.THROUGHPUT)


def test_moves_that_share_a_throttle_out_of_the_planned_order_are_averaged() -> None:
    # The real-Kafka case: five 20 s copies and one 4 s copy planned (2 s fixed), the short one sharing the
    # throttle in reality: 26 s each and 17 s. Mean copy 17.33 s against 24.5 - 2 s seen: 0.77 of the rate.
    m = measure_run([(22.0, 26.0)] * 5 + [(6.0, 17.0)], 1.0, 2.0, estimated=28.0, actual=31.7)
    assert m == RunMeasure(0.77, None, EstimateMiss.HELD)


def test_a_run_within_a_quarter_of_its_estimate_held() -> None:
    m = measure_run([(2.1, 2.06)] * 12, 1.0, 2.0, estimated=6.1, actual=6.4)
    assert m == RunMeasure(None, 1.96, EstimateMiss.HELD)  # 2.06 s per move: its planned copying (0.1 s) and 1.96 s


@pytest.mark.parametrize("steps", [[], [(1.0, 2.0)]])
def test_nothing_to_measure_without_moves_or_time(steps) -> None:
    assert measure_run(steps, 1.0, 2.0, estimated=1.0, actual=0.0) is None
