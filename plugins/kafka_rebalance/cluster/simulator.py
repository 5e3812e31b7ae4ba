"""An in-process Kafka cluster with a virtual clock, for demos, tests and what-if runs.

What it models (see docs/KAFKA.md for the honest limits):

* brokers with racks and liveness; partitions with a size and a produce rate that
  grows them as virtual time passes;
* a reassignment as the controller runs it (KafkaController.onPartitionReassignment,
  docs/KAFKA.md, and KIP-455): the replica set becomes target + old (AR = RAR + OAR), each
  new replica copies from the leader until it has caught up with a log that keeps
  growing, then joins the ISR; once every target replica is in the ISR the leader
  moves if it is not in the target (first target replica alive and in ISR), the old
  replicas are dropped and the replica set becomes the target;
* replication speed limited only by throttles that are actually set (KIP-73):
  a copy into broker B of partition P is follower-throttled when ``P:B`` (or ``*``)
  is in the topic's follower.replication.throttled.replicas and B has a
  follower.replication.throttled.rate; the leader side likewise. A broker's rate is
  shared equally by the throttled copies it serves; unthrottled copies run at
  ``replication_bytes_per_sec``;
* preferred election succeeds only where the preferred replica is alive and in ISR;
* faults: a broker dies (leaves every ISR, its leaderships fail over), a destination
  never catches up, a partition's produce rate rises above the throttle;
* client traffic (for ``execute --throttle auto``): produce rates, consume rates, changes of either at set
  moments (``schedule_rates``), and optionally each broker's network capacity in and out: then a copy
  gets only what the clients leave of the NIC on both ends (``cluster/traffic.py`` defines the clients'
  traffic), shared equally by the copies on that NIC, as a throttle is. Clients first is a simplification
  (on a saturated NIC Kafka's fetchers and clients contend), and it is what a throttle at the headroom
  aims for. These knobs live in memory only: a persisted state does not keep them.

Time advances in exact steps from one catch-up event to the next (rates are
constant in between), so hours of virtual replication cost microseconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from kafka_rebalance.cluster.admin import (
    BROKER,
    FOLLOWER_RATE,
    FOLLOWER_REPLICAS,
    LEADER_RATE,
    LEADER_REPLICAS,
    TOPIC,
    TP,
    ClusterError,
    Reassignment,
    ReplicaDir,
    parse_throttled_replicas,
)
from kafka_rebalance.cluster.traffic import BrokerTraffic, PartitionTraffic, broker_traffic
from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.snapshot import Broker, Partition, Snapshot, snapshot_from_dict

STATE_FORMAT = "kafka-rebalance-simulator"
DEFAULT_REPLICATION_BYTES_PER_SEC = 100 * 1024 * 1024
UNLIMITED_RATE = "9223372036854775807"  # Long.MAX_VALUE: Kafka's default for the throttle rates

# Defaults the simulated brokers report for DescribeConfigs(all); dynamic values override them.
BROKER_DEFAULTS: dict[str, str] = {
    FOLLOWER_RATE: UNLIMITED_RATE,
    LEADER_RATE: UNLIMITED_RATE,
    "auto.leader.rebalance.enable": "true",
    "leader.imbalance.check.interval.seconds": "300",
}
TOPIC_DEFAULTS: dict[str, str] = {
    FOLLOWER_REPLICAS: "",
    LEADER_REPLICAS: "",
    "retention.ms": "604800000",
    "cleanup.policy": "delete",
}

ERR_UNKNOWN_PARTITION = "UNKNOWN_TOPIC_OR_PARTITION"
ERR_INVALID_ASSIGNMENT = "INVALID_REPLICA_ASSIGNMENT"
ERR_NO_REASSIGNMENT = "NO_REASSIGNMENT_IN_PROGRESS"
ERR_PREFERRED_NOT_AVAILABLE = "PREFERRED_LEADER_NOT_AVAILABLE"
ERR_ELECTION_NOT_NEEDED = "ELECTION_NOT_NEEDED"


@dataclass(slots=True)
class SimBroker:
    id: int
    rack: str | None
    alive: bool = True
    configs: dict[str, str] = field(default_factory=dict)  # dynamic configs only


@dataclass(slots=True)
class SimPartition:
    tp: TP
    replicas: list[int]
    leader: int
    isr: list[int]
    size: float
    rate: float
    rate_known: bool
    original: list[int] | None = None  # OAR while a reassignment runs
    target: list[int] | None = None  # RAR while a reassignment runs
    copied: dict[int, float] = field(default_factory=dict)  # bytes held by adding replicas not yet in ISR
    grown_at: float = 0.0  # ``size`` includes produce traffic up to this moment (see Simulator._grow)
    retained: float | None = None  # while a move runs: the log's size when it started (retention's level)
    consume_rate: float = 0.0  # bytes/s its consumers read from the leader

    @property
    def adding(self) -> list[int]:
        if self.target is None or self.original is None:
            return []
        return [r for r in self.target if r not in self.original]

    @property
    def removing(self) -> list[int]:
        if self.target is None or self.original is None:
            return []
        return [r for r in self.original if r not in self.target]


class Simulator:
    """The simulated cluster's state and the controller's rules. Not thread-safe: callers lock."""

    def __init__(
        self,
        cluster_id: str,
        brokers: Iterable[SimBroker],
        partitions: Iterable[SimPartition],
        *,
        controller_kind: str = "kraft",
        cluster_configs: Mapping[str, str] | None = None,
        topic_configs: Mapping[str, Mapping[str, str]] | None = None,
        captured_at: str | None = None,
        replication_bytes_per_sec: float = DEFAULT_REPLICATION_BYTES_PER_SEC,
        now: float = 0.0,
        kafka_cluster_id: str | None = None,
    ) -> None:
        self.cluster_id = cluster_id
        # The id the simulated cluster reports as its own: the one of the snapshot it was made from.
        self.kafka_cluster_id = kafka_cluster_id
        self.brokers: dict[int, SimBroker] = {b.id: b for b in sorted(brokers, key=lambda b: b.id)}
        self.partitions: dict[TP, SimPartition] = {p.tp: p for p in sorted(partitions, key=lambda p: p.tp)}
        self.controller_kind = controller_kind
        self.cluster_configs = dict(cluster_configs or {})
        self.topics: dict[str, dict[str, str]] = {t: dict(c) for t, c in (topic_configs or {}).items()}
        for tp in self.partitions:
            self.topics.setdefault(tp.topic, {})
        self.captured_at = captured_at
        self.replication_bytes_per_sec = float(replication_bytes_per_sec)
        self.now = float(now)
        self.stuck: set[tuple[TP, int]] = set()
        # Log dirs named through AlterReplicaLogDirs, per replica; a move between dirs is instant here (the
        # simulator models replication between brokers, not disks).
        self.dirs: dict[tuple[TP, int], str] = {}
        # Partitions with a reassignment in flight: the only ones time has to walk through event by
        # event, and the only ones whose size changes (``_grow``), so a poll costs what moves.
        self.moving: dict[TP, SimPartition] = {tp: p for tp, p in self.partitions.items() if p.target is not None}
        for p in self.partitions.values():
            p.grown_at = self.now
        # Client traffic knobs (module docstring): broker -> (network in, network out) bytes/s, and rate changes
        # due at set moments, (when, partition, produce bytes/s, consume bytes/s), soonest first.
        self.network: dict[int, tuple[float, float]] = {}
        self.rate_changes: list[tuple[float, TP, float, float]] = []

    def _grow(self, p: SimPartition) -> None:
        """Retention holds a log at its size: produce traffic only matters to a replica catching up.

        While a move runs, the log end advances at the produce rate and the new replica must copy
        that too; when the move ends, retention trims the log back to its steady size. (Growing
        every log without bound would make a plan of hours look a quarter slower than Kafka.)
        """
        if p.rate and p.target is not None:
            p.size += p.rate * (self.now - p.grown_at)
        p.grown_at = self.now

    @staticmethod
    def _settle_size(p: SimPartition) -> None:
        if p.retained is not None:
            p.size, p.retained = p.retained, None

    def _grow_all(self) -> None:
        for p in self.partitions.values():
            self._grow(p)

    # ------------------------------------------------------------------ snapshots

    @classmethod
    def from_snapshot(cls, snap: Snapshot, replication_bytes_per_sec: float = DEFAULT_REPLICATION_BYTES_PER_SEC) -> Simulator:
        brokers = [SimBroker(b.id, b.rack, b.alive, dict(b.configs)) for b in snap.brokers]
        parts = [
            SimPartition(
                TP(p.topic, p.partition), list(p.replicas), p.leader, list(p.isr), float(p.size_bytes or 0),
                float(p.bytes_in_per_sec or 0.0), p.bytes_in_per_sec is not None,
            )
            for p in snap.partitions
        ]
        return cls(
            snap.cluster_id, brokers, parts, controller_kind=snap.controller, cluster_configs=snap.configs,
            topic_configs={t: v.get("configs", {}) for t, v in snap.topics.items()}, captured_at=snap.captured_at,
            replication_bytes_per_sec=replication_bytes_per_sec, kafka_cluster_id=snap.kafka_cluster_id,
        )

    def _captured_at(self) -> str | None:
        if self.captured_at is None or self.now == 0:
            return self.captured_at
        try:
            start = datetime.fromisoformat(self.captured_at.replace("Z", "+00:00"))
        except ValueError:
            return self.captured_at
        moment = start + timedelta(seconds=round(self.now, 3))
        if moment.tzinfo is not None:
            moment = moment.astimezone(UTC)
            return moment.strftime("%Y-%m-%dT%H:%M:%S") + (f".{moment.microsecond // 1000:03d}" if moment.microsecond else "") + "Z"
        return moment.isoformat()

    def describe(self) -> Snapshot:
        self._grow_all()
        brokers = tuple(Broker(b.id, b.rack, b.alive, dict(b.configs)) for b in self.brokers.values())
        parts = []
        for p in self.partitions.values():
            dead = tuple(r for r in p.replicas if not self.brokers[r].alive)
            parts.append(
                Partition(
                    p.tp.topic, p.tp.partition, tuple(p.replicas), p.leader, tuple(p.isr), int(p.size),
                    p.rate if p.rate_known or p.rate else None, dead,
                )
            )
        return Snapshot(
            cluster_id=self.cluster_id, brokers=brokers, partitions=tuple(parts), controller=self.controller_kind,
            captured_at=self._captured_at(), configs=dict(self.cluster_configs),
            topics={t: {"configs": dict(c)} for t, c in sorted(self.topics.items())},
            kafka_cluster_id=self.kafka_cluster_id,
        )

    def to_state(self) -> dict[str, Any]:
        snap = self.describe().to_dict()
        snap["captured_at"] = self.captured_at
        return {
            "format": STATE_FORMAT,
            "version": 1,
            "now": self.now,
            "replication_bytes_per_sec": self.replication_bytes_per_sec,
            "snapshot": snap,
            # Exact floats: sizes in the snapshot part are rounded to whole bytes.
            "sizes": {f"{tp.topic}\t{tp.partition}": p.size for tp, p in self.partitions.items()},
            "reassignments": [
                {"topic": tp.topic, "partition": tp.partition, "original": p.original, "target": p.target,
                 "retained": p.retained,
                 "copied": {str(b): v for b, v in sorted(p.copied.items())}}
                for tp, p in self.partitions.items() if p.target is not None
            ],
            "stuck": sorted([tp.topic, tp.partition, b] for tp, b in self.stuck),
            # Only when set, so states of simulators that named no dir are what they were.
            **({"log_dirs": sorted([tp.topic, tp.partition, b, d] for (tp, b), d in self.dirs.items())} if self.dirs else {}),
            # The traffic model (`execute --throttle auto` reads it), likewise only when set.
            **({"network": {str(b): list(v) for b, v in sorted(self.network.items())}} if self.network else {}),
            **({"rate_changes": [[at, tp.topic, tp.partition, produce, consume] for at, tp, produce, consume in self.rate_changes]}
               if self.rate_changes else {}),
            **({"consume_rates": sorted([tp.topic, tp.partition, p.consume_rate] for tp, p in self.partitions.items()
                                        if p.consume_rate)} if any(p.consume_rate for p in self.partitions.values()) else {}),
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any], source: str = "simulator state") -> Simulator:
        if state.get("format") != STATE_FORMAT:
            raise RebalanceError(f"{source}: format: expected {STATE_FORMAT!r}, got {state.get('format')!r}")
        sim = cls.from_snapshot(snapshot_from_dict(state["snapshot"], source), state["replication_bytes_per_sec"])
        sim.now = float(state["now"])
        for key, size in state.get("sizes", {}).items():
            topic, _, part = key.rpartition("\t")
            sim.partitions[TP(topic, int(part))].size = float(size)
        for p in sim.partitions.values():
            p.grown_at = sim.now
        for r in state.get("reassignments", []):
            p = sim.partitions[TP(r["topic"], r["partition"])]
            p.original, p.target = list(r["original"]), list(r["target"])
            p.copied = {int(b): float(v) for b, v in r["copied"].items()}
            p.retained = float(r["retained"]) if r.get("retained") is not None else p.size
            sim.moving[p.tp] = p
        sim.stuck = {(TP(t, p), b) for t, p, b in state.get("stuck", [])}
        sim.dirs = {(TP(t, p), b): d for t, p, b, d in state.get("log_dirs", [])}
        sim.network = {int(b): (float(v[0]), float(v[1])) for b, v in state.get("network", {}).items()}
        sim.rate_changes = [(float(at), TP(t, int(p)), float(produce), float(consume))
                            for at, t, p, produce, consume in state.get("rate_changes", [])]
        for t, p, rate in state.get("consume_rates", []):
            sim.partitions[TP(t, int(p))].consume_rate = float(rate)
        return sim

    # ------------------------------------------------------------------ faults

    def kill_broker(self, broker_id: int) -> None:
        b = self._broker(broker_id)
        b.alive = False
        for p in self.partitions.values():
            if broker_id in p.isr and len(p.isr) > 1:
                p.isr.remove(broker_id)
            if p.leader == broker_id:
                p.leader = self._elect(p.replicas, p.isr)

    def start_broker(self, broker_id: int) -> None:
        """Bring a broker back. Limit: its old replicas rejoin the ISR at once."""
        self._broker(broker_id).alive = True
        for p in self.partitions.values():
            if broker_id in p.replicas and broker_id not in p.isr and broker_id not in p.copied:
                p.isr.append(broker_id)
            if p.leader == -1:
                p.leader = self._elect(p.replicas, p.isr)

    def add_broker(self, broker_id: int, rack: str | None = None) -> None:
        """A new broker joins (a scale-out). As in Kafka, no existing replica moves to it by itself: it starts empty."""
        if broker_id in self.brokers:
            raise ClusterError(f"broker {broker_id} is already in the cluster")
        self.brokers[broker_id] = SimBroker(broker_id, rack)
        self.brokers = dict(sorted(self.brokers.items()))

    def never_catch_up(self, tp: TP, broker_id: int) -> None:
        """The copy of ``tp`` into ``broker_id`` makes no progress (a stuck fetcher, a full disk)."""
        self.stuck.add((tp, broker_id))

    def set_produce_rate(self, tp: TP, bytes_per_sec: float) -> None:
        p = self._partition(tp)
        self._grow(p)  # what was written at the old rate first
        p.rate, p.rate_known = float(bytes_per_sec), True

    def set_consume_rate(self, tp: TP, bytes_per_sec: float) -> None:
        self._partition(tp).consume_rate = float(bytes_per_sec)

    def schedule_rates(self, at: float, tp: TP, produce: float, consume: float = 0.0) -> None:
        """At ``at`` seconds on the virtual clock, ``tp`` is written at ``produce`` and read at ``consume`` bytes/s."""
        self._partition(tp)
        self.rate_changes = sorted([*self.rate_changes, (float(at), tp, float(produce), float(consume))])

    def set_network_capacity(self, broker_id: int, bytes_in: float, bytes_out: float) -> None:
        """The broker's NIC: copies into and out of it get what its clients leave (module docstring)."""
        self._broker(broker_id)
        self.network[broker_id] = (float(bytes_in), float(bytes_out))

    def broker_traffic(self) -> dict[int, BrokerTraffic]:
        """Each live broker's client and ISR traffic now (cluster/traffic.py), as its network would measure it."""
        self._apply_rate_changes()  # a change due now has happened, whether or not the clock moved since
        return broker_traffic(PartitionTraffic(p.leader, tuple(r for r in p.isr if self.brokers[r].alive), p.rate, p.consume_rate)
                              for p in self.partitions.values() if p.leader != -1 and self.brokers[p.leader].alive)

    def _apply_rate_changes(self) -> None:
        while self.rate_changes and self.rate_changes[0][0] <= self.now + 1e-12:
            _, tp, produce, consume = self.rate_changes.pop(0)
            self.set_produce_rate(tp, produce)
            self.set_consume_rate(tp, consume)

    # ------------------------------------------------------------------ admin operations

    @property
    def controller_id(self) -> int:
        alive = [b for b in self.brokers if self.brokers[b].alive]
        return alive[0] if alive else -1

    def dynamic_configs(self, resource_type: str, name: str) -> dict[str, str]:
        return dict(self._config_dict(resource_type, name))

    def alter_configs(self, resource_type: str, name: str, changes: Mapping[str, str | None]) -> None:
        self.advance(0)
        current = self._config_dict(resource_type, name)
        for key, value in changes.items():
            if key in (FOLLOWER_REPLICAS, LEADER_REPLICAS) and value is not None:
                parse_throttled_replicas(value)  # Kafka rejects a malformed list: so do we
            if key in (FOLLOWER_RATE, LEADER_RATE) and value is not None and not value.strip().isdigit():
                raise ClusterError(f"{resource_type} {name}: {key}={value!r} is not a non-negative integer (INVALID_CONFIG)")
            if value is None:
                current.pop(key, None)
            else:
                current[key] = value

    def _config_dict(self, resource_type: str, name: str) -> dict[str, str]:
        if resource_type == BROKER:
            broker = self._broker(int(name))
            # As on real Kafka: a broker's configs are read and written through that broker.
            if not broker.alive:
                raise ClusterError(f"broker {name} is not available: its configs are served by the broker itself")
            return broker.configs
        if resource_type == TOPIC:
            if name not in self.topics:
                raise ClusterError(f"topic {name!r} does not exist ({ERR_UNKNOWN_PARTITION})")
            return self.topics[name]
        raise ClusterError(f"unknown config resource type {resource_type!r}")

    def list_reassignments(self) -> dict[TP, Reassignment]:
        return {
            tp: Reassignment(tuple(p.replicas), tuple(p.adding), tuple(p.removing))
            for tp, p in sorted(self.moving.items())
        }

    def alter_reassignments(self, targets: Mapping[TP, Iterable[int] | None]) -> dict[TP, str | None]:
        self.advance(0)
        results: dict[TP, str | None] = {}
        for tp, target in targets.items():
            p = self.partitions.get(tp)
            if p is None:
                results[tp] = ERR_UNKNOWN_PARTITION
                continue
            if target is None:
                if p.target is None:
                    results[tp] = ERR_NO_REASSIGNMENT
                    continue
                self._cancel(p)
                results[tp] = None
                continue
            new = list(target)
            if not new or len(set(new)) != len(new) or any(r not in self.brokers for r in new):
                results[tp] = ERR_INVALID_ASSIGNMENT
                continue
            original = p.original if p.original is not None else list(p.replicas)
            self._grow(p)
            if new == original:
                if p.target is not None:
                    self._cancel(p)
                results[tp] = None
                continue
            p.original, p.target = original, new
            p.replicas = new + [r for r in original if r not in new]
            p.isr = [r for r in p.isr if r in p.replicas]
            p.copied = {r: p.copied.get(r, 0.0) for r in p.adding if r not in p.isr}
            if tp not in self.moving:
                p.retained = p.size
            self.moving[tp] = p
            results[tp] = None
        self._complete_ready()
        return results

    def _cancel(self, p: SimPartition) -> None:
        assert p.original is not None
        p.replicas = list(p.original)
        p.isr = [r for r in p.isr if r in p.replicas] or p.isr[:1]
        if p.leader not in p.replicas or p.leader == -1:
            p.leader = self._elect(p.replicas, p.isr)
        p.original = p.target = None
        p.copied = {}
        self.moving.pop(p.tp, None)
        self._settle_size(p)

    def elect_preferred(self, partitions: Iterable[TP]) -> dict[TP, str | None]:
        self.advance(0)
        results: dict[TP, str | None] = {}
        for tp in partitions:
            p = self.partitions.get(tp)
            if p is None:
                results[tp] = ERR_UNKNOWN_PARTITION
                continue
            preferred = p.replicas[0]
            if p.leader == preferred:
                results[tp] = ERR_ELECTION_NOT_NEEDED
            elif self.brokers[preferred].alive and preferred in p.isr:
                p.leader = preferred
                results[tp] = None
            else:
                results[tp] = ERR_PREFERRED_NOT_AVAILABLE
        return results

    def alter_replica_log_dirs(self, dirs: Mapping[tuple[TP, int], str]) -> dict[tuple[TP, int], str | None]:
        """Kafka's rule: the dir is recorded either way (a replica created later goes there); a broker that does
        not hold the replica yet answers REPLICA_NOT_AVAILABLE."""
        out: dict[tuple[TP, int], str | None] = {}
        for (tp, b), d in dirs.items():
            self.dirs[(tp, b)] = d
            p = self.partitions.get(tp)
            out[(tp, b)] = None if p is not None and b in p.replicas else "REPLICA_NOT_AVAILABLE"
        return out

    def replica_dirs(self, partitions: Iterable[TP]) -> dict[tuple[TP, int], ReplicaDir]:
        out: dict[tuple[TP, int], ReplicaDir] = {}
        for tp in partitions:
            p = self.partitions.get(tp)
            for b in p.replicas if p is not None else ():
                if (tp, b) in self.dirs:
                    out[(tp, b)] = ReplicaDir(self.dirs[(tp, b)])
        return out

    def replica_sizes(self, partitions: Iterable[TP] | None = None) -> dict[tuple[TP, int], int]:
        """What DescribeLogDirs would report: live brokers only."""
        out: dict[tuple[TP, int], int] = {}
        wanted = self.partitions.keys() if partitions is None else partitions
        for tp in wanted:
            p = self.partitions.get(tp)
            if p is None:
                continue
            self._grow(p)
            for r in p.replicas:
                if not self.brokers[r].alive:
                    continue
                out[(tp, r)] = int(p.copied[r]) if r in p.copied else int(p.size)
        return out

    # ------------------------------------------------------------------ time

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError(f"cannot go back in time ({seconds} s)")
        end = self.now + seconds
        self._apply_rate_changes()
        self._complete_ready()
        while True:
            flows = self._flows()
            dt = end - self.now
            if self.rate_changes:  # rates are constant only up to the next change
                dt = min(dt, max(0.0, self.rate_changes[0][0] - self.now))
            for p, r, rate in flows:
                net = rate - p.rate
                if net > 0:
                    dt = min(dt, max(0.0, (p.size - p.copied[r]) / net))
            self.now += dt
            for p in self.moving.values():
                self._grow(p)
            for p, r, rate in flows:
                p.copied[r] = min(p.size, p.copied[r] + rate * dt)
            self._apply_rate_changes()
            joined = False
            for p, r, _ in flows:
                if p.copied[r] >= p.size - max(1e-6, 1e-12 * p.size):
                    del p.copied[r]
                    p.isr.append(r)
                    joined = True
            if joined:
                self._complete_ready()
            if self.now >= end - 1e-12 and not joined:
                self.now = max(self.now, end)
                break

    def _flows(self) -> list[tuple[SimPartition, int, float]]:
        """Every copy in progress with its rate (bytes/s) under the throttles now set."""
        candidates: list[tuple[SimPartition, int, tuple[str, int] | None, tuple[str, int] | None]] = []
        for p in self.moving.values():
            if p.target is None or p.leader == -1 or not self.brokers[p.leader].alive:
                continue
            for r in p.copied:
                if not self.brokers[r].alive or (p.tp, r) in self.stuck:
                    continue
                follower = ("F", r) if self._throttled(p.tp, r, FOLLOWER_REPLICAS, FOLLOWER_RATE) else None
                leader = ("L", p.leader) if self._throttled(p.tp, p.leader, LEADER_REPLICAS, LEADER_RATE) else None
                candidates.append((p, r, follower, leader))
        sharing: dict[tuple[str, int], int] = {}
        for _, _, f, lead in candidates:
            for key in (f, lead):
                if key is not None:
                    sharing[key] = sharing.get(key, 0) + 1
        flows = []
        for p, r, f, lead in candidates:
            rate = self.replication_bytes_per_sec
            if f is not None:
                rate = min(rate, self._rate(f[1], FOLLOWER_RATE) / sharing[f])
            if lead is not None:
                rate = min(rate, self._rate(lead[1], LEADER_RATE) / sharing[lead])
            flows.append((p, r, rate))
        return self._within_network(flows) if self.network else flows

    def _within_network(self, flows: list[tuple[SimPartition, int, float]]) -> list[tuple[SimPartition, int, float]]:
        """Each copy limited to an equal share of what clients leave of the receiving and the sending NIC."""
        traffic = self.broker_traffic()
        idle = BrokerTraffic(0.0, 0.0)
        into: dict[int, int] = {}
        out_of: dict[int, int] = {}
        for p, r, _ in flows:
            into[r] = into.get(r, 0) + 1
            out_of[p.leader] = out_of.get(p.leader, 0) + 1
        limited = []
        for p, r, rate in flows:
            if r in self.network:
                rate = min(rate, max(0.0, self.network[r][0] - traffic.get(r, idle).bytes_in) / into[r])
            if p.leader in self.network:
                rate = min(rate, max(0.0, self.network[p.leader][1] - traffic.get(p.leader, idle).bytes_out) / out_of[p.leader])
            limited.append((p, r, rate))
        return limited

    def _throttled(self, tp: TP, broker: int, list_key: str, rate_key: str) -> bool:
        if rate_key not in self.brokers[broker].configs:
            return False
        entries = parse_throttled_replicas(self.topics.get(tp.topic, {}).get(list_key))
        return entries == "*" or (tp.partition, broker) in entries

    def _rate(self, broker: int, key: str) -> float:
        return float(self.brokers[broker].configs[key])

    def _complete_ready(self) -> None:
        for p in list(self.moving.values()):
            if p.target is None or not all(r in p.isr for r in p.target):
                continue
            if p.leader not in p.target:
                p.leader = self._elect(p.target, p.isr)
            p.replicas = list(p.target)
            p.isr = [r for r in p.isr if r in p.target]
            p.original = p.target = None
            p.copied = {}
            del self.moving[p.tp]
            self._settle_size(p)

    # ------------------------------------------------------------------ helpers

    def _elect(self, candidates: Iterable[int], isr: Iterable[int]) -> int:
        in_sync = set(isr)
        for r in candidates:
            if self.brokers[r].alive and r in in_sync:
                return r
        return -1

    def _broker(self, broker_id: int) -> SimBroker:
        if broker_id not in self.brokers:
            raise ClusterError(f"broker {broker_id} is not in the cluster")
        return self.brokers[broker_id]

    def _partition(self, tp: TP) -> SimPartition:
        if tp not in self.partitions:
            raise ClusterError(f"partition {tp} does not exist")
        return self.partitions[tp]

    def all_configs(self, resource_type: str, name: str) -> dict[str, tuple[str, int, bool]]:
        """Every config with (value, Kafka config source, read-only) as DescribeConfigs(all) reports it."""
        out: dict[str, tuple[str, int, bool]] = {}
        if resource_type == BROKER:
            out.update({k: (v, 5, False) for k, v in BROKER_DEFAULTS.items()})
            out["broker.id"] = (name, 4, True)
            rack = self._broker(int(name)).rack
            if rack is not None:
                out["broker.rack"] = (rack, 4, True)
            out.update({k: (v, 4, False) for k, v in self.cluster_configs.items()})
            out.update({k: (v, 2, False) for k, v in self._broker(int(name)).configs.items()})
        else:
            out.update({k: (v, 5, False) for k, v in TOPIC_DEFAULTS.items()})
            out.update({k: (v, 1, False) for k, v in self._config_dict(TOPIC, name).items()})
        return out
