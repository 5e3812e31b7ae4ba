"""A run's planner options: the trigger form's values over the cluster's clusters.yaml defaults.

The form speaks MB/s (1 MB = 1,048,576 bytes, as the form says); the planner takes bytes/s.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_rebalance.orchestration.clusters_config import PlannerDefaults
from kafka_rebalance.snapshot import Snapshot
from kafka_rebalance.units import MIB

if TYPE_CHECKING:
    from kafka_rebalance.planner import PlanOptions


def setting(params: Mapping[str, Any], defaults: PlannerDefaults | None, name: str) -> Any:
    """A planner setting: the run's parameter (the trigger form), else the cluster's entry in clusters.yaml."""
    if name in params:
        return params[name]
    return getattr(defaults or PlannerDefaults(), name)


def plan_options(snapshot: Snapshot, params: Mapping[str, Any], analysis_dir: Path | None,
                 defaults: PlannerDefaults | None = None) -> PlanOptions:  # fmt: skip
    """PlanOptions from the run's parameters over the cluster's clusters.yaml defaults.

    Every PlannerDefaults field reaches the planner this way; those the trigger form does
    not show (byte_tolerance, throttle_efficiency) come from clusters.yaml alone.
    """
    from kafka_rebalance.planner import PlanOptions
    from kafka_rebalance.planner.options import resolve_threshold

    def get(name: str) -> Any:
        return setting(params, defaults, name)

    threshold, source = resolve_threshold(snapshot, get("threshold_percentage"), analysis_dir)
    return PlanOptions(
        throttle_bytes_per_sec=int(round(float(get("throttle_mb_per_sec")) * MIB)),
        max_partitions_per_batch=int(get("max_partitions_per_batch")),
        max_moves_per_broker=int(get("max_moves_per_broker")),
        ordering=str(get("ordering")),
        optimizer=str(get("optimizer")),
        exclude_topics=tuple(sorted(set(get("exclude_topics") or []))),
        decommission_brokers=tuple(sorted({int(b) for b in params.get("decommission_brokers") or []})),
        byte_tolerance=float(get("byte_tolerance")),
        throttle_efficiency=float(get("throttle_efficiency")),
        threshold_percentage=threshold,
        threshold_source=source,
    )
