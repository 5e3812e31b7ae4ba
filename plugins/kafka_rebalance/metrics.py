"""Per-broker load of one snapshot, in plain Python.

The Spark job computes the same figures at fleet scale; this is the in-process
version the CLI's ``describe``, the planner and the tests use. Definitions follow
Kafka's controller (KafkaController.checkAndTriggerAutoLeaderRebalance):
the preferred replica is the FIRST broker of the replica list, and a broker's
leader imbalance ratio is (its preferred partitions not led by it) / (its
preferred partitions), undefined when it has none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kafka_rebalance.snapshot import THRESHOLD_CONFIG, Snapshot
from kafka_rebalance.userinput import InputError, finite_number

DEFAULT_THRESHOLD_PERCENTAGE = 10


@dataclass(slots=True)
class BrokerLoad:
    broker_id: int
    rack: str | None
    alive: bool
    replicas: int = 0
    leaders: int = 0
    preferred_partitions: int = 0
    preferred_not_led: int = 0
    size_bytes: int = 0
    leader_bytes_in_per_sec: float = 0.0

    @property
    def imbalance_ratio(self) -> float | None:
        if self.preferred_partitions == 0:
            return None
        return self.preferred_not_led / self.preferred_partitions


def broker_loads(snapshot: Snapshot) -> list[BrokerLoad]:
    """One row per broker of the snapshot, sorted by id."""
    loads = {b.id: BrokerLoad(b.id, b.rack, b.alive) for b in snapshot.brokers}
    for p in snapshot.partitions:
        size = p.size_bytes or 0
        for r in p.replicas:
            load = loads[r]
            load.replicas += 1
            load.size_bytes += size
        pref = loads[p.replicas[0]]
        pref.preferred_partitions += 1
        if p.leader != p.replicas[0]:  # no leader (-1) counts as not led
            pref.preferred_not_led += 1
        if p.leader >= 0:
            loads[p.leader].leaders += 1
            loads[p.leader].leader_bytes_in_per_sec += p.bytes_in_per_sec or 0.0
    return [loads[b] for b in sorted(loads)]


def is_over_threshold(ratio: float | None, threshold_pct: float) -> bool:
    """Kafka's controller rebalances a broker when its ratio is strictly above the threshold."""
    return ratio is not None and ratio > threshold_pct / 100


def brokers_over_threshold(loads: list[BrokerLoad], threshold_pct: float) -> list[int]:
    """Live brokers over the leader imbalance threshold (a dead broker leads nothing by definition)."""
    return [b.broker_id for b in loads if b.alive and is_over_threshold(b.imbalance_ratio, threshold_pct)]


def check_threshold_setting(value: float | None) -> None:
    """The operator's --threshold-percentage / threshold_percentage setting: a finite 0..100."""
    if value is not None and not finite_number(value, 0, 100):
        raise InputError(f"--threshold-percentage: must be a percentage within 0..100, got {value:g}")


def threshold_percentage(snapshot: Snapshot, setting: float | None = None) -> tuple[float, str]:
    """The leader imbalance threshold that applies, and where it came from.

    KRaft controllers dropped the config (KAFKA-18743), so the cluster may not report
    it; then the pipeline's setting (default 10) is the policy.
    """
    check_threshold_setting(setting)
    return threshold_from_configs(snapshot.configs, setting)


def threshold_from_configs(configs: Mapping[str, str], setting: float | None = None) -> tuple[float, str]:
    """The threshold rule itself, over a cluster's configs: the cluster's value, else the setting, else 10."""
    raw = configs.get(THRESHOLD_CONFIG)
    if raw is not None:  # snapshot loading already checked that it parses
        return float(raw), "cluster"
    if setting is not None:
        return float(setting), "setting"
    return float(DEFAULT_THRESHOLD_PERCENTAGE), "default"
