"""What the goals read and return (planner/goals/view.py): a broker's byte band, and a verdict as plan.json holds it."""

from __future__ import annotations

from kafka_rebalance.planner.goals.view import BrokerView, GoalCheck


def broker(byte_lo: float | None = None, byte_hi: float | None = None, byte_mean: float | None = None) -> BrokerView:
    return BrokerView(1, 4, 0, 9, 95.0, 100.0, 0.1, 0, 0, 0, byte_lo=byte_lo, byte_hi=byte_hi, byte_mean=byte_mean)


def test_a_broker_with_its_band_uses_it_and_one_without_is_held_to_its_target_within_the_tolerance() -> None:
    assert broker(80.0, 130.0, 105.0).byte_band(0.1) == (80.0, 130.0, 105.0)
    assert broker().byte_band(0.25) == (75.0, 125.0, 100.0)
    # a band known only in part is no band: the target's
    assert broker(80.0, None, 105.0).byte_band(0.25) == (75.0, 125.0, 100.0)
    assert broker(80.0, 130.0, None).byte_band(0.25) == (75.0, 125.0, 100.0)
    assert broker(None, 130.0, 105.0).byte_band(0.25) == (75.0, 125.0, 100.0)


def test_a_verdict_as_plan_json_holds_it_rounds_its_value_to_six_places() -> None:
    check = GoalCheck("bytes", False, "rule", 0.12345678, False, (3, 4), {3: 1.0})
    assert check.as_dict() == {"value": 0.123457, "reached": False, "offenders": [3, 4]}
    assert GoalCheck("bytes", False, "rule", 2, True).as_dict() == {"value": 2.0, "reached": True, "offenders": []}
