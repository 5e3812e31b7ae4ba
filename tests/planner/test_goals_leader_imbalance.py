"""Kafka's leader imbalance rule as a goal's check (planner/goals/leader_imbalance.py), on hand-built views."""

from __future__ import annotations

from kafka_rebalance.planner.goals.leader_imbalance import LeaderImbalanceGoal
from kafka_rebalance.planner.goals.view import BalanceView, BrokerView


def broker(bid: int, led_preferred: int, preferred_not_led: int) -> BrokerView:
    return BrokerView(bid, 4, 0, 9, 0.0, 0.0, 0.1, led_preferred, led_preferred, preferred_not_led)


def view(*brokers: BrokerView, pct: float = 10.0) -> BalanceView:
    return BalanceView(brokers, (), 0.1, pct, (0, 9))


def test_a_broker_whose_ratio_is_strictly_above_the_percentage_is_an_offender() -> None:
    # Ratios 1/10 (exactly the 10 % threshold: Kafka leaves it), 2/10 (above) and 0/5; a broker preferred for
    # nothing has no ratio at all.
    check = LeaderImbalanceGoal().check(view(broker(1, 10, 1), broker(2, 10, 2), broker(3, 5, 0), broker(4, 0, 0)))
    assert (check.reached, check.offenders, check.value) == (False, (2,), 0.2)
    assert check.per_broker == {1: 0.1, 2: 0.2, 3: 0.0}
    assert LeaderImbalanceGoal().check(view(broker(1, 10, 1), broker(3, 5, 0))).reached


def test_a_view_where_no_broker_is_preferred_for_anything_is_balanced_at_0() -> None:
    check = LeaderImbalanceGoal().check(view(broker(1, 0, 0), broker(2, 0, 0)))
    assert (check.reached, check.offenders, check.value, check.per_broker) == (True, (), 0.0, {})
    assert LeaderImbalanceGoal().check(view()).value == 0.0
