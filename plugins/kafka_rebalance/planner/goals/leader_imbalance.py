"""Kafka's own rule: no broker's leader imbalance ratio above leader.imbalance.per.broker.percentage.

The controller's ratio for a broker is (partitions it is preferred for but does not lead) /
(partitions it is preferred for), and it rebalances leadership only when a broker's ratio
exceeds the percentage (ratio > pct / 100). The goal's action is the plan's election file:
every partition whose final first replica can lead and does not is elected (planner/core.py
``_elections``), so after the plan only partitions with no electable preferred replica can
leave a broker over the threshold. Measured over the partitions a plan may touch (an
excluded topic's leadership is the operator's to keep) and the eligible brokers (a dead or
leaving broker cannot be elected).
"""

from __future__ import annotations

from kafka_rebalance.metrics import is_over_threshold
from kafka_rebalance.planner.goals.base import Goal
from kafka_rebalance.planner.goals.view import BalanceView, GoalCheck
from kafka_rebalance.planner.state import ClusterState


class LeaderImbalanceGoal(Goal):
    name = "leader-imbalance"
    priority = 60
    leader_goal = True
    target = "no broker's leader imbalance ratio above leader.imbalance.per.broker.percentage (Kafka's rule)"

    def optimize(self, state: ClusterState) -> None:
        """Nothing to move: the elections follow from the preferred leaders chosen before it."""

    def check(self, view: BalanceView) -> GoalCheck:
        pct = view.threshold_percentage
        # Eligible brokers only: a dead or leaving broker cannot be elected, so no plan changes its ratio.
        every = view.brokers
        ratio = {b.broker_id: b.preferred_not_led / b.led_preferred for b in every if b.led_preferred}
        over = tuple(b for b, r in ratio.items() if is_over_threshold(r, pct))
        return self.verdict(max(ratio.values(), default=0.0), not over, over, ratio)
