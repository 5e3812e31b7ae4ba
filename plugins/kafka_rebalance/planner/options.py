"""Planner options: the flags of ``kafka-rebalance plan``, checked once, recorded in plan.json."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_rebalance.balance import DEFAULT_BYTE_TOLERANCE
from kafka_rebalance.metrics import threshold_percentage
from kafka_rebalance.planner.errors import PlanError
from kafka_rebalance.snapshot import THRESHOLD_CONFIG, Snapshot
from kafka_rebalance.throttle_model import DEFAULT_THROTTLE_EFFICIENCY, MIN_THROTTLE_EFFICIENCY, delivered_rate
from kafka_rebalance.units import MIB
from kafka_rebalance.userinput import INT32_MAX, INT64_MAX, InputError, finite_number, is_ascii_digits, read_json

# 50 MiB/s, the figure the plan-format contract shows; kafka-reassign-partitions takes bytes/s.
DEFAULT_THROTTLE = 50 * MIB
MIN_THROTTLE = 1024  # under 1 KB/s a throttle is a typo, not a policy
MAX_THROTTLE = INT64_MAX  # Kafka's *.replication.throttled.rate is a Java long
ORDERINGS = ("small-first", "large-first", "under-replicated-first")
# exact: the MILP (planner/exact.py); heuristic: the goals; auto: exact where the model is small enough.
OPTIMIZERS = ("auto", "exact", "heuristic")


@dataclass(frozen=True)
class PlanOptions:
    throttle_bytes_per_sec: int = DEFAULT_THROTTLE
    max_partitions_per_batch: int = 50
    max_moves_per_broker: int = 5
    max_new_replicas_per_partition: int = 1
    ordering: str = "small-first"
    exclude_topics: tuple[str, ...] = ()
    decommission_brokers: tuple[int, ...] = ()
    replication_factor: int | None = None
    byte_tolerance: float = DEFAULT_BYTE_TOLERANCE
    election_batch_size: int = 1000
    threshold_percentage: float | None = None
    threshold_source: str = "default"
    optimizer: str = "auto"
    throttle_efficiency: float = DEFAULT_THROTTLE_EFFICIENCY

    @property
    def delivered_rate(self) -> float:
        """Bytes/s a broker is expected to move under the throttle: what every duration is computed with."""
        return delivered_rate(self.throttle_bytes_per_sec, self.throttle_efficiency)

    def rate_text(self) -> str:
        """The delivered rate for an error message: the throttle, and the efficiency when it is not 1."""
        if self.throttle_efficiency == 1:
            return f"the throttle {self.throttle_bytes_per_sec:,} B/s"
        return (f"the delivered rate {self.delivered_rate:,.0f} B/s ({self.throttle_efficiency:g} of the throttle "
                f"{self.throttle_bytes_per_sec:,} B/s)")

    def check(self) -> None:
        problems = []
        if self.throttle_bytes_per_sec < MIN_THROTTLE:
            problems.append(f"--throttle must be at least {MIN_THROTTLE} bytes/s, got {self.throttle_bytes_per_sec}")
        elif self.throttle_bytes_per_sec > MAX_THROTTLE:
            problems.append(f"--throttle must be at most {MAX_THROTTLE} bytes/s (a Java long), got {self.throttle_bytes_per_sec}")
        for flag, value in (
            ("--max-partitions-per-batch", self.max_partitions_per_batch),
            ("--max-moves-per-broker", self.max_moves_per_broker),
            ("--max-new-replicas-per-partition", self.max_new_replicas_per_partition),
            ("--election-batch-size", self.election_batch_size),
        ):
            if value < 1:
                problems.append(f"{flag} must be at least 1, got {value}")
            elif value > INT32_MAX:
                problems.append(f"{flag} must be at most {INT32_MAX}, got {value}")
        if self.ordering not in ORDERINGS:
            problems.append(f"--ordering must be one of {', '.join(ORDERINGS)}, got {self.ordering!r}")
        if self.optimizer not in OPTIMIZERS:
            problems.append(f"--optimizer must be one of {', '.join(OPTIMIZERS)}, got {self.optimizer!r}")
        if self.replication_factor is not None and not 1 <= self.replication_factor <= INT32_MAX:
            problems.append(f"--replication-factor must be 1..{INT32_MAX}, got {self.replication_factor}")
        if not finite_number(self.byte_tolerance, 0, 10):
            problems.append(f"--byte-tolerance must be within 0..10 (a fraction of the mean), got {self.byte_tolerance}")
        if not finite_number(self.throttle_efficiency, MIN_THROTTLE_EFFICIENCY, 1):
            problems.append(f"--throttle-efficiency must be within {MIN_THROTTLE_EFFICIENCY}..1 (the fraction of the throttle "
                            f"the brokers deliver), got {self.throttle_efficiency}")
        if self.threshold_percentage is not None and not finite_number(self.threshold_percentage, 0, 100):
            problems.append(f"--threshold-percentage must be within 0..100, got {self.threshold_percentage}")
        if problems:
            raise PlanError("plan: " + "; ".join(problems))

    def check_against(self, snapshot: Snapshot) -> None:
        known_topics = {p.topic for p in snapshot.partitions} | set(snapshot.topics)
        unknown = [t for t in self.exclude_topics if t not in known_topics]
        if unknown:
            raise PlanError(f"--exclude-topics: topic(s) {', '.join(unknown)} not in snapshot of {snapshot.cluster_id}")
        ids = set(snapshot.broker_ids)
        stray = [b for b in self.decommission_brokers if b not in ids]
        if stray:
            raise PlanError(
                f"--decommission-brokers: broker(s) {', '.join(map(str, stray))} not in snapshot of {snapshot.cluster_id} "
                f"(brokers: {', '.join(map(str, sorted(ids)))})"
            )

    def manifest(self) -> dict[str, Any]:
        """The options block of plan.json (part of the plan hash)."""
        return {
            "throttle_bytes_per_sec": self.throttle_bytes_per_sec,
            "max_partitions_per_batch": self.max_partitions_per_batch,
            "max_moves_per_broker": self.max_moves_per_broker,
            "max_new_replicas_per_partition": self.max_new_replicas_per_partition,
            "ordering": self.ordering,
            "exclude_topics": sorted(self.exclude_topics),
            "decommission_brokers": sorted(self.decommission_brokers),
            "byte_tolerance": self.byte_tolerance,
            "election_batch_size": self.election_batch_size,
            "threshold_percentage": self.threshold_percentage,
            "threshold_source": self.threshold_source,
            "replication_factor": self.replication_factor,
            "optimizer": self.optimizer,
            "throttle_efficiency": self.throttle_efficiency,
        }


def parse_list(text: str | None, flag: str, as_int: bool = False) -> tuple[Any, ...]:
    """``a,b,c`` -> sorted unique tuple; ints when ``as_int``."""
    if not text:
        return ()
    items = [t.strip() for t in text.split(",") if t.strip()]
    if as_int:
        bad = [t for t in items if not (is_ascii_digits(t) and int(t) <= INT32_MAX)]
        if bad:
            raise PlanError(f"{flag}: {', '.join(bad)} is not a broker id (expected e.g. 3,7)")
        return tuple(sorted({int(t) for t in items}))
    return tuple(sorted(set(items)))


def resolve_threshold(snapshot: Snapshot, setting: float | None, analysis_dir: Path | None) -> tuple[float, str]:
    """The leader-imbalance threshold: the cluster's config, else the Spark analysis, else the setting/default."""
    if THRESHOLD_CONFIG in snapshot.configs or analysis_dir is None:
        return threshold_percentage(snapshot, setting)
    summary = Path(analysis_dir) / "summary.json"
    if not summary.exists():
        raise PlanError(f"--analysis {analysis_dir}: no summary.json (give the Spark job's output directory)")
    try:
        raw = read_json(summary, "analysis summary")
    except InputError as exc:
        raise PlanError(str(exc)) from None
    clusters = raw.get("clusters") if isinstance(raw, dict) else None
    if not isinstance(clusters, list):
        raise PlanError(f"{summary}: field 'clusters' must be a list")
    for entry in clusters:
        if isinstance(entry, dict) and entry.get("cluster_id") == snapshot.cluster_id:
            value = entry.get("threshold_percentage")
            if not finite_number(value, 0, 100):
                raise PlanError(
                    f"{summary}: clusters[cluster_id={snapshot.cluster_id}].threshold_percentage must be 0..100, got {value!r}"
                )
            return float(value), "analysis"
    raise PlanError(f"{summary}: no entry for cluster_id {snapshot.cluster_id!r} in 'clusters'")
