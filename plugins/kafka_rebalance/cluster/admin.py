"""The one interface through which the pipeline touches a cluster, and its data types.

Two implementations: ``live.LiveAdmin`` (kafka-python's KafkaAdminClient) and
``simulator.SimAdmin`` (an in-process cluster with a virtual clock). The executor
only ever sees ``ClusterAdmin``, so what runs against production is what the tests
run against the simulator and, through the protocol test server, over real sockets.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Protocol, runtime_checkable

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.snapshot import Snapshot

if TYPE_CHECKING:
    from kafka_rebalance.cluster.failures import ConnectFailure, Denial, Role

BROKER = "broker"
TOPIC = "topic"

LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
BROKER_THROTTLE_KEYS = (FOLLOWER_RATE, LEADER_RATE)
# Kafka's throttle on copying a replica between the log dirs of its broker (AlterReplicaLogDirs): a plan's
# log-dir batches set it where replicas move within a broker.
LOG_DIR_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"
# Every broker rate a plan may set and a ledger may record and restore.
BROKER_RATE_KEYS = (*BROKER_THROTTLE_KEYS, LOG_DIR_RATE)
TOPIC_THROTTLE_KEYS = (FOLLOWER_REPLICAS, LEADER_REPLICAS)


class TP(NamedTuple):
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True, slots=True)
class Reassignment:
    """One in-flight move as ListPartitionReassignments reports it (KIP-455)."""

    replicas: tuple[int, ...]  # the full set during the move: target + old not in target
    adding: tuple[int, ...]
    removing: tuple[int, ...]

    @property
    def target(self) -> tuple[int, ...]:
        return tuple(r for r in self.replicas if r not in self.removing)


@dataclass(frozen=True, slots=True)
class ReplicaDir:
    """Where one replica lives, as DescribeLogDirs reports it: its log dir, and the dir its future copy is being
    written to while it moves between dirs (None: not moving)."""

    path: str
    future: str | None = None


@dataclass(frozen=True, slots=True)
class PartitionView:
    """One partition as Metadata reports it: what verification after a move needs, nothing more."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int  # -1: none


class ClusterError(RebalanceError):
    """The cluster refused or could not answer; the message says which call and why."""


class ClusterConnectionError(ClusterError):
    """Could not connect or authenticate: one line naming the server and the cause.

    ``failure`` is the typed cause when one was classified.
    """

    def __init__(self, message: str, failure: ConnectFailure | None = None) -> None:
        super().__init__(message)
        self.failure = failure


class ClusterDenied(ClusterError):
    """The authorizer refused a call: ``denial`` names the principal, the operation and the resource."""

    def __init__(self, message: str, denial: Denial) -> None:
        super().__init__(message)
        self.denial = denial


@runtime_checkable
class AccessChecked(Protocol):
    """An admin that can tell, before it changes anything, whether its principal holds a role's ACLs
    (a live cluster under an authorizer; the simulator has none)."""

    def require(self, role: Role, topics: Iterable[str], call: str) -> None:
        """ClusterDenied naming the first ACL of ``role`` missing on the cluster or on one of ``topics``."""
        ...


@runtime_checkable
class ClusterAdmin(Protocol):
    """Everything the pipeline does to a cluster.

    Config maps use ``None`` for "not set dynamically" (reading) and "delete the
    dynamic value" (writing), so recorded values can be written back verbatim.
    """

    def now(self) -> float:
        """Seconds on this cluster's clock (wall clock live, virtual in the simulator)."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait; the simulator advances its virtual clock instead."""
        ...

    def describe(self) -> Snapshot:
        """Brokers, racks, controller, partitions, replica sizes and configs as a snapshot."""
        ...

    def kafka_cluster_id(self) -> str | None:
        """The id the cluster reports as its own (DescribeCluster), None if it reports none."""
        ...

    def partitions(self, tps: Iterable[TP]) -> dict[TP, PartitionView]:
        """Replicas, ISR and leader of these partitions (absent: no such partition), from one Metadata
        request for their topics: cheap enough to ask on every poll, unlike ``describe``."""
        ...

    def dynamic_configs(self, resource_type: str, name: str, keys: Iterable[str]) -> dict[str, str | None]:
        """The dynamic (non-default, non-static) value of each key, None where not set."""
        ...

    def alter_configs(self, resource_type: str, name: str, changes: Mapping[str, str | None]) -> None:
        """Incrementally set (str) or delete (None) dynamic configs on one resource."""
        ...

    def list_reassignments(self) -> dict[TP, Reassignment]:
        ...

    def alter_reassignments(self, targets: Mapping[TP, tuple[int, ...] | None]) -> dict[TP, str | None]:
        """Submit (a replica list) or cancel (None) moves; per-partition error name or None."""
        ...

    def replica_sizes(self, partitions: Iterable[TP]) -> dict[tuple[TP, int], int]:
        """Bytes on disk of each replica of the given partitions (DescribeLogDirs)."""
        ...

    def elect_preferred(self, partitions: Iterable[TP]) -> dict[TP, str | None]:
        """Preferred leader election; per-partition error name or None (already preferred counts as done)."""
        ...

    def alter_replica_log_dirs(self, dirs: Mapping[tuple[TP, int], str]) -> dict[tuple[TP, int], str | None]:
        """AlterReplicaLogDirs: move (or, for a replica its broker does not hold yet, place) each replica in the
        named log dir; per replica the error name or None."""
        ...

    def replica_dirs(self, partitions: Iterable[TP]) -> dict[tuple[TP, int], ReplicaDir]:
        """The log dir of each replica of the given partitions (DescribeLogDirs), with its future dir while it moves."""
        ...

    def close(self) -> None:
        ...


def parse_throttled_replicas(value: str | None) -> set[tuple[int, int]] | str:
    """``"0:1,3:4"`` -> {(0, 1), (3, 4)}; ``"*"`` stays "*"; empty or None -> empty set."""
    if value is None or not value.strip():
        return set()
    if value.strip() == "*":
        return "*"
    out: set[tuple[int, int]] = set()
    for item in value.split(","):
        item = item.strip().strip("[]")
        if not item:
            continue
        part, _, broker = item.partition(":")
        if not part.strip().isdigit() or not broker.strip().isdigit():
            raise RebalanceError(f"throttled replica list: {item!r} is not partition:broker (in {value!r})")
        out.add((int(part), int(broker)))
    return out


def format_throttled_replicas(entries: set[tuple[int, int]] | str) -> str:
    if entries == "*":
        return "*"
    assert not isinstance(entries, str)
    return ",".join(f"{p}:{b}" for p, b in sorted(entries))


def merge_throttle(key: str, planned: str, existing: str | None) -> str:
    """The value to set: the plan's, joined with a throttled-replica list already there (``*`` stays ``*``)."""
    if key not in (LEADER_REPLICAS, FOLLOWER_REPLICAS) or not existing:
        return planned
    old, new = parse_throttled_replicas(existing), parse_throttled_replicas(planned)
    if old == "*" or new == "*":
        return "*"
    assert not isinstance(old, str) and not isinstance(new, str)
    return format_throttled_replicas(old | new)
