"""The planner's one error type: a constraint that cannot be met, named in the message."""

from __future__ import annotations

from kafka_rebalance.errors import RebalanceError


class PlanError(RebalanceError):
    """The snapshot cannot be balanced under the options given (or an option is unusable)."""
