"""One estimate: the figure of the schedule the executor will run, the other mode's figure beside it.

A plan carries two durations: its moves submitted continuously as schedule.json orders them (the
executor's default mode) and its batches run as waves (``execute --mode batches``, the runbook, or
Kafka's own tool). Every output headlines the figure of the mode that will run and labels the other,
read from plan.json through ``plan_estimate`` so that no two outputs pick differently.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafka_rebalance.units import human_seconds

# The executor's modes (executor/settings.py checks a configured one against these); the first is its default.
MODES = ("continuous", "batches")
DEFAULT_MODE = MODES[0]
MODE_LABELS = {"continuous": "continuous schedule", "batches": "batches as waves"}


@dataclass(frozen=True, slots=True)
class PlanEstimate:
    mode: str  # the mode that will run
    seconds: float | None  # its figure; None when the plan has none for it (a plan without schedule.json)
    other_mode: str
    other_seconds: float | None

    def text(self, why: str = "the mode that runs") -> str:
        """``about 1m18s (continuous schedule, the mode that runs); 1m48s if run as batches as waves``."""
        head = "unknown" if self.seconds is None else f"about {human_seconds(self.seconds)}"
        other = "" if self.other_seconds is None else \
            f"; {human_seconds(self.other_seconds)} if run as {MODE_LABELS[self.other_mode]}"
        return f"{head} ({MODE_LABELS[self.mode]}, {why}){other}"


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def mode_seconds(summary: Mapping[str, Any]) -> dict[str, float | None]:
    """Each mode's estimate in plan.json's summary.

    Plans written before ``estimated_seconds_batches`` existed hold the batch figure in
    ``estimated_seconds``; later ones hold it in ``estimated_seconds_batches`` and the continuous
    figure (also ``continuous.estimated_seconds``) in ``estimated_seconds``.
    """
    c = summary.get("continuous")
    continuous = _number(c.get("estimated_seconds")) if isinstance(c, Mapping) else None
    batches = _number(summary["estimated_seconds_batches"]) if "estimated_seconds_batches" in summary \
        else _number(summary.get("estimated_seconds"))
    return {"continuous": continuous, "batches": batches}


def plan_estimate(summary: Mapping[str, Any], mode: str = DEFAULT_MODE) -> PlanEstimate:
    """The figure of ``mode`` (the mode the executor is configured with) and the other mode's."""
    figures = mode_seconds(summary)
    other = next(m for m in MODES if m != mode)
    return PlanEstimate(mode, figures[mode], other, figures[other])
