"""The minimal-movement planner: ``make_plan`` (pure) and ``write_plan`` (the plan directory)."""

from kafka_rebalance.planner.core import Plan, make_plan
from kafka_rebalance.planner.errors import PlanError
from kafka_rebalance.planner.files import write_plan
from kafka_rebalance.planner.options import PlanOptions

__all__ = ["Plan", "PlanError", "PlanOptions", "make_plan", "write_plan"]
