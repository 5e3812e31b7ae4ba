"""The minimal-movement planner: ``make_plan`` (pure) and ``write_plan`` (the plan directory)."""

# First: where numba caches the kernels the modules below define (kernel_cache.py).
from kafka_rebalance.planner import kernel_cache  # noqa: F401  # isort: skip
from kafka_rebalance.errors import PlanError
from kafka_rebalance.options import PlanOptions
from kafka_rebalance.planner.core import Plan, make_plan
from kafka_rebalance.planner.files import write_plan

__all__ = ["Plan", "PlanError", "PlanOptions", "make_plan", "write_plan"]
