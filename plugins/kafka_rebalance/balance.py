"""What "balanced" means: one definition shared by the analysis, the planner and the quality gate.

A cluster is balanced when
* no broker's leader imbalance ratio exceeds the threshold (Kafka's rule, ratio > pct/100);
* every eligible broker's replica count and preferred-leader count lies within
  [floor, ceil] of the ideal (total / eligible brokers), the tightest spread integers allow;
* every eligible broker's bytes lie within ``byte_tolerance`` (default 10 %) of the mean.

Eligible brokers are the live ones that are not being decommissioned.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_BYTE_TOLERANCE = 0.10


@dataclass(frozen=True, slots=True)
class Tolerances:
    byte_tolerance: float = DEFAULT_BYTE_TOLERANCE

    def __post_init__(self) -> None:
        if not 0 <= self.byte_tolerance <= 10:
            raise ValueError(f"byte_tolerance must be within 0..10 (a fraction of the mean), got {self.byte_tolerance}")


def count_bounds(total: int, brokers: int) -> tuple[int, int]:
    """[floor, ceil] of the ideal per-broker count."""
    if brokers <= 0:
        return (0, 0)
    return (total // brokers, math.ceil(total / brokers))


def count_spread(counts: Sequence[int]) -> dict[str, float]:
    """How far counts are from ideal: max/min, the ideal, and brokers outside [floor, ceil]."""
    total, n = sum(counts), len(counts)
    lo, hi = count_bounds(total, n)
    return {
        "ideal": total / n if n else 0.0,
        "min": min(counts) if counts else 0,
        "max": max(counts) if counts else 0,
        "floor": lo,
        "ceil": hi,
        "brokers_outside": sum(1 for c in counts if c < lo or c > hi),
    }


def counts_balanced(counts: Sequence[int]) -> bool:
    lo, hi = count_bounds(sum(counts), len(counts))
    return all(lo <= c <= hi for c in counts)


def byte_deviation(sizes: Sequence[int]) -> float:
    """Largest |bytes - mean| / mean over brokers; 0 for an empty or all-empty cluster."""
    if not sizes:
        return 0.0
    mean = sum(sizes) / len(sizes)
    if mean == 0:
        return 0.0
    return max(abs(s - mean) for s in sizes) / mean


def bytes_balanced(sizes: Sequence[int], tolerances: Tolerances = Tolerances()) -> bool:
    return byte_deviation(sizes) <= tolerances.byte_tolerance
