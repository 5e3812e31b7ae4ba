"""Quality gates: Great Expectations suites on snapshots and staged plans (docs/VALIDATION.md)."""

from __future__ import annotations

from kafka_rebalance.validation.inputs import ValidationInputError
from kafka_rebalance.validation.runner import Outcome, validate_plan, validate_snapshot

__all__ = ["Outcome", "ValidationInputError", "validate_plan", "validate_snapshot"]
