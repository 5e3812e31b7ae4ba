"""The snapshot's model: brokers, partitions and the cluster, immutable and sorted; its fingerprint."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

CONTROLLERS = ("kraft", "zookeeper")
THRESHOLD_CONFIG = "leader.imbalance.per.broker.percentage"
PARQUET_META_KEY = b"kafka_rebalance.snapshot"
FORMAT_VERSION = 1
SNAPSHOT_SUFFIXES = (".json", ".parquet")
# The per-partition method fields (each a MetricMethod value, or absent).
METHOD_FIELDS = ("bytes_in_method", "bytes_out_method", "size_method")


class MetricMethod(str, Enum):
    """How one partition's traffic or size figure was produced (gather's ``--rate-window`` / ``--metrics``)."""

    # Two samples of the partition's log end offset and size through the Admin API (cluster/gather.py).
    SAMPLED = "sampled-log-ends"
    # Prometheus: the topic's rate (Kafka's BrokerTopicMetrics are per topic), split over its partitions by
    # each one's share of the log end offsets written in the window, or evenly when none moved.
    PROMETHEUS_TOPIC_BY_OFFSETS = "prometheus-topic-split-by-offsets"
    PROMETHEUS_TOPIC_EVENLY = "prometheus-topic-split-evenly"
    # Prometheus: the partition's own series (kafka.log Log Size), where the Admin API reported no size.
    PROMETHEUS_PARTITION = "prometheus-partition"
    # Consumer traffic: two samples of every consumer group's committed offsets, the offsets consumed in between
    # times the log's bytes per offset (cluster/gather.py).
    SAMPLED_GROUP_OFFSETS = "sampled-group-offsets"


class MetricsSourceKind(str, Enum):
    SAMPLING = "sampling"
    PROMETHEUS = "prometheus"


@dataclass(frozen=True, slots=True)
class MetricsSource:
    """Where a snapshot's traffic figures came from, for the whole snapshot.

    ``url`` is the Prometheus server read (never with credentials); ``bytes_out`` says whether consumer
    traffic was measured, and if not, why (sampling cannot see it; an exporter may not export it).
    """

    kind: MetricsSourceKind
    bytes_out: str
    url: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.kind.value}
        if self.url is not None:
            out["url"] = self.url
        out["bytes_out"] = self.bytes_out
        return out


@dataclass(frozen=True, slots=True)
class LogDir:
    """One of a broker's log directories (JBOD: several per broker), as DescribeLogDirs reports it.

    ``total_bytes`` and ``usable_bytes`` are the volume's size and free space (Kafka 3.3+,
    DescribeLogDirs v4); an older broker does not report them and they stay None, never guessed.
    """

    path: str
    total_bytes: int | None = None
    usable_bytes: int | None = None


# A broker's capacity fields, in the order the format writes them (snapshot ``brokers[].capacity``, a
# ``--capacity`` file, clusters.yaml's ``capacity``, the trigger form's): bytes, bytes/s, bytes/s.
CAPACITY_FIELDS = ("disk_bytes", "network_in_bytes_per_sec", "network_out_bytes_per_sec")


@dataclass(frozen=True, slots=True)
class Capacity:
    """What an operator says one broker can hold and carry; None: not configured (never guessed).

    ``disk_bytes`` stands in only where the broker's log dirs do not report their volumes' size
    (``Broker.capacity_bytes``: what Kafka reports wins); the network figures are the broker's NIC (or
    its share of it) in each direction, which Kafka does not report at all.
    """

    disk_bytes: int | None = None
    network_in_bytes_per_sec: int | None = None
    network_out_bytes_per_sec: int | None = None

    def to_dict(self) -> dict[str, int]:
        return {k: v for k in CAPACITY_FIELDS if (v := getattr(self, k)) is not None}

    def over(self, base: Capacity | None) -> Capacity:
        """This capacity with ``base``'s figures where this one has none."""
        if base is None:
            return self
        return Capacity(*(getattr(self, k) if getattr(self, k) is not None else getattr(base, k) for k in CAPACITY_FIELDS))

    @property
    def empty(self) -> bool:
        return all(getattr(self, k) is None for k in CAPACITY_FIELDS)


@dataclass(frozen=True, slots=True)
class Broker:
    id: int
    rack: str | None = None
    alive: bool = True
    configs: dict[str, str] = field(default_factory=dict)
    # Empty: not recorded (a hand-written or simulated snapshot, or one gathered before the field existed).
    log_dirs: tuple[LogDir, ...] = ()
    # Configured capacity (brokers[].capacity); None: none configured.
    capacity: Capacity | None = None

    @property
    def capacity_bytes(self) -> int | None:
        """The sum of its log dirs' volume sizes where every dir reports one, else the configured
        ``capacity.disk_bytes``; None when neither is known."""
        if not self.log_dirs or any(d.total_bytes is None for d in self.log_dirs):
            return self.capacity.disk_bytes if self.capacity is not None else None
        return sum(d.total_bytes or 0 for d in self.log_dirs)

    @property
    def usable_bytes(self) -> int | None:
        """Free space as the log dirs report it (None where they do not, a configured disk included)."""
        if not self.log_dirs or any(d.usable_bytes is None for d in self.log_dirs):
            return None
        if any(d.total_bytes is None for d in self.log_dirs):
            return None
        return sum(d.usable_bytes or 0 for d in self.log_dirs)



@dataclass(frozen=True, slots=True)
class Partition:
    topic: str
    partition: int
    replicas: tuple[int, ...]
    leader: int  # -1: no leader
    isr: tuple[int, ...]
    size_bytes: int | None = None
    bytes_in_per_sec: float | None = None
    offline_replicas: tuple[int, ...] = ()
    # The log dir holding each replica, in ``replicas`` order (None: that broker did not report it);
    # empty: not recorded.
    log_dirs: tuple[str | None, ...] = ()
    # Consumer traffic (fetches by clients, not replication), bytes/s; None: not measured.
    bytes_out_per_sec: float | None = None
    # How bytes_in_per_sec, bytes_out_per_sec and size_bytes were produced; None: not recorded (for size_bytes:
    # the Admin API's DescribeLogDirs, as always).
    bytes_in_method: MetricMethod | None = None
    bytes_out_method: MetricMethod | None = None
    size_method: MetricMethod | None = None

    @property
    def has_metric_fields(self) -> bool:
        return not (self.bytes_out_per_sec is None and self.bytes_in_method is None and self.bytes_out_method is None
                    and self.size_method is None)

    @property
    def metric_fields(self) -> dict[str, Any]:
        """The traffic fields beyond bytes_in_per_sec that are set, as the format writes them."""
        out: dict[str, Any] = {}
        if self.bytes_out_per_sec is not None:
            out["bytes_out_per_sec"] = self.bytes_out_per_sec
        for name in METHOD_FIELDS:
            method = getattr(self, name)
            if method is not None:
                out[name] = method.value
        return out

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"

    @property
    def preferred(self) -> int:
        return self.replicas[0]


@dataclass(frozen=True, slots=True)
class Snapshot:
    cluster_id: str
    brokers: tuple[Broker, ...]
    partitions: tuple[Partition, ...]
    controller: str = "kraft"
    captured_at: str | None = None
    configs: dict[str, str] = field(default_factory=dict)
    topics: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    # Kafka's own cluster id (DescribeCluster / Metadata), beside the operator's label in cluster_id.
    # None: the snapshot was written by hand, by the simulator's generator, or before the field existed.
    kafka_cluster_id: str | None = None
    # Seconds between the two samples gather took to measure bytes_in_per_sec (``--rate-window``);
    # None: the rates were not measured by gather (absent, simulated or written by hand).
    rate_window_seconds: float | None = None
    # Where the traffic figures came from; None: not measured by gather (or gathered before the field existed).
    metrics_source: MetricsSource | None = None

    @property
    def broker_ids(self) -> list[int]:
        return [b.id for b in self.brokers]

    @property
    def live_broker_ids(self) -> list[int]:
        return [b.id for b in self.brokers if b.alive]

    def broker(self, broker_id: int) -> Broker:
        for b in self.brokers:
            if b.id == broker_id:
                return b
        raise KeyError(broker_id)

    @property
    def rack_of(self) -> dict[int, str | None]:
        return {b.id: b.rack for b in self.brokers}

    @property
    def has_racks(self) -> bool:
        return any(b.rack is not None for b in self.brokers)

    def topic_configs(self, topic: str) -> dict[str, str]:
        return self.topics.get(topic, {}).get("configs", {})

    def header_dict(self) -> dict[str, Any]:
        """Everything but the partitions, in the JSON field order of the format."""
        out: dict[str, Any] = {"cluster_id": self.cluster_id}
        if self.kafka_cluster_id is not None:  # absent, not null: fingerprints of snapshots without it stay as they were
            out["kafka_cluster_id"] = self.kafka_cluster_id
        if self.captured_at is not None:
            out["captured_at"] = self.captured_at
        if self.rate_window_seconds is not None:
            out["rate_window_seconds"] = self.rate_window_seconds
        if self.metrics_source is not None:
            out["metrics"] = self.metrics_source.to_dict()
        out["controller"] = self.controller
        out["configs"] = dict(sorted(self.configs.items()))
        out["brokers"] = [_broker_dict(b) for b in self.brokers]
        out["topics"] = {t: {"configs": dict(sorted(v.get("configs", {}).items()))} for t, v in sorted(self.topics.items())}
        return out

    def to_dict(self) -> dict[str, Any]:
        out = self.header_dict()
        out["partitions"] = [_partition_dict(p) for p in self.partitions]
        return out

    def fingerprint(self) -> str:
        """sha256 of the canonical JSON form: equal for equal content, whatever the file format."""
        digest = hashlib.sha256()
        digest.update(json.dumps(self.header_dict(), sort_keys=True, separators=(",", ":")).encode())
        # One JSON array of fixed-order rows: the C encoder does it in one call (10x faster
        # than a document per partition at a million partitions).
        # Replica log dirs join a row only where recorded: fingerprints of snapshots without them stay as they were.
        rows = [
            [p.topic, p.partition, p.replicas, p.leader, p.isr, p.size_bytes, p.bytes_in_per_sec, p.offline_replicas]
            + ([p.log_dirs] if p.log_dirs else [])
            + ([p.metric_fields] if p.has_metric_fields else [])
            for p in self.partitions
        ]
        digest.update(json.dumps(rows, separators=(",", ":")).encode())
        return digest.hexdigest()


def _broker_dict(b: Broker) -> dict[str, Any]:
    out: dict[str, Any] = {"id": b.id, "rack": b.rack, "alive": b.alive, "configs": dict(sorted(b.configs.items()))}
    if b.log_dirs:  # absent, not []: fingerprints of snapshots without them stay as they were
        out["log_dirs"] = [_log_dir_dict(d) for d in b.log_dirs]
    if b.capacity is not None and not b.capacity.empty:  # absent too: fingerprints stay as they were
        out["capacity"] = b.capacity.to_dict()
    return out


def _log_dir_dict(d: LogDir) -> dict[str, Any]:
    out: dict[str, Any] = {"path": d.path}
    if d.total_bytes is not None:
        out["total_bytes"] = d.total_bytes
    if d.usable_bytes is not None:
        out["usable_bytes"] = d.usable_bytes
    return out


def _partition_dict(p: Partition) -> dict[str, Any]:
    out: dict[str, Any] = {
        "topic": p.topic,
        "partition": p.partition,
        "replicas": list(p.replicas),
        "leader": p.leader,
        "isr": list(p.isr),
        "size_bytes": p.size_bytes,
        "bytes_in_per_sec": p.bytes_in_per_sec,
    }
    if p.offline_replicas:
        out["offline_replicas"] = list(p.offline_replicas)
    if p.log_dirs:
        out["log_dirs"] = list(p.log_dirs)
    out.update(p.metric_fields)
    return out
