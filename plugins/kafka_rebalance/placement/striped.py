"""Kafka's KRaft placer, ``org.apache.kafka.metadata.placement.StripedReplicaPlacer``, reproduced exactly.

A KRaft controller places new topics and partitions with it, and so does
``kafka-reassign-partitions.sh --generate`` since 4.1. Replicas go round-robin over racks (sorted,
starting at a random rack, one rack further for each partition), and round-robin over the brokers
of each rack (sorted, from a random offset); unfenced brokers come before fenced ones and a leader
is never fenced. After as many partitions as there are unfenced brokers, racks and brokers are
shuffled. Every random choice comes from the ``java.util.Random`` the placer is given, so the
same seed gives the same placement as Kafka's own code (checked against kafka-metadata 4.1.1 in
tests/placement/test_striped_oracle.py).

The order in which brokers are given matters only where Java's order does: it decides which rack
is created first in a ``HashMap`` bucket shared by two rack names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kafka_rebalance.errors import AssignmentError
from kafka_rebalance.placement.java_collections import (
    hashmap_iteration_order,
    java_optional_string_hash,
    sorted_like_java,
)
from kafka_rebalance.placement.java_random import JavaRandom, java_shuffle

INVALID_REPLICATION_FACTOR = "InvalidReplicationFactorException"
# Not a Kafka exception: where Kafka's loop would spin forever, we stop with this instead.
NON_TERMINATION = "NonTermination"


@dataclass(frozen=True, slots=True)
class UsableBroker:
    """``UsableBroker``: a registered broker not in controlled shutdown."""

    id: int
    rack: str | None = None
    fenced: bool = False


@dataclass(slots=True)
class _BrokerList:
    brokers: list[int] = field(default_factory=list)
    index: int = 0  # brokers handed out in the current epoch
    offset: int = 0
    epoch: int = 0

    def initialize(self, rnd: JavaRandom) -> None:
        if self.brokers:
            self.brokers.sort()
            self.offset = rnd.next_int(len(self.brokers))

    def next(self, epoch: int) -> int:
        """Next broker of this epoch, or -1 once every broker was handed out in it."""
        if not self.brokers:
            return -1
        if self.epoch != epoch:
            self.epoch = epoch
            self.index = 0
            self.offset = (self.offset + 1) % len(self.brokers)
        if self.index >= len(self.brokers):
            return -1
        broker = self.brokers[(self.index + self.offset) % len(self.brokers)]
        self.index += 1
        return broker


@dataclass(slots=True)
class _Rack:
    fenced: _BrokerList = field(default_factory=_BrokerList)
    unfenced: _BrokerList = field(default_factory=_BrokerList)

    def next(self, epoch: int) -> int:
        broker = self.unfenced.next(epoch)
        return broker if broker >= 0 else self.fenced.next(epoch)


def _check_positive(replication_factor: int) -> None:
    if replication_factor <= 0:
        raise AssignmentError(
            f"Invalid replication factor {replication_factor}: the replication factor must be positive.",
            kafka_exception=INVALID_REPLICATION_FACTOR,
        )


def _check_some_unfenced(unfenced: int) -> None:
    if unfenced == 0:
        raise AssignmentError("All brokers are currently fenced.", kafka_exception=INVALID_REPLICATION_FACTOR)


def _check_enough_brokers(replication_factor: int, total: int) -> None:
    if replication_factor > total:
        raise AssignmentError(
            f"The target replication factor of {replication_factor} cannot be reached because only "
            f"{total} broker(s) are registered.",
            kafka_exception=INVALID_REPLICATION_FACTOR,
        )


class _RackList:
    def __init__(self, rnd: JavaRandom, brokers: Sequence[UsableBroker]) -> None:
        self._rnd = rnd
        self._racks: dict[str | None, _Rack] = {}
        for broker in brokers:
            rack = self._racks.setdefault(broker.rack, _Rack())
            (rack.fenced if broker.fenced else rack.unfenced).brokers.append(broker.id)
        self.total = len(brokers)
        self.unfenced = sum(1 for b in brokers if not b.fenced)
        # Racks draw their start offsets in Java's HashMap order, not in name order.
        self._map_order = hashmap_iteration_order(self._racks, java_optional_string_hash)
        for name in self._map_order:
            self._racks[name].fenced.initialize(rnd)
            self._racks[name].unfenced.initialize(rnd)
        self._names = sorted_like_java(list(self._racks))
        self._by_name_order = [self._racks[name] for name in self._names]
        self._epoch = 0
        self._offset = rnd.next_int(len(self._names)) if self._names else 0

    def _shuffle(self) -> None:
        java_shuffle(self._names, self._rnd)
        self._by_name_order = [self._racks[name] for name in self._names]
        for name in self._map_order:
            java_shuffle(self._racks[name].fenced.brokers, self._rnd)
            java_shuffle(self._racks[name].unfenced.brokers, self._rnd)

    def _stuck(self, role: str) -> AssignmentError:
        # Kafka's loop would spin forever here (every list of this epoch is used up); say so instead.
        return AssignmentError(
            f"StripedReplicaPlacer finds no {role} in epoch {self._epoch}: every broker list is used up "
            "(Kafka's placer would never return)",
            kafka_exception=NON_TERMINATION,
        )

    def place(self, replication_factor: int) -> list[int]:
        _check_positive(replication_factor)
        _check_enough_brokers(replication_factor, self.total)
        _check_some_unfenced(self.unfenced)
        # After as many partitions as unfenced brokers, reshuffle to avoid repeating the same
        # stripes; never with one unfenced broker, whose epoch must keep advancing.
        if self._epoch == self.unfenced and self.unfenced > 1:
            self._shuffle()
            self._epoch = 0
        if self._offset == len(self._names):
            self._offset = 0
        racks = self._by_name_order
        epoch = self._epoch
        n = len(racks)
        first_rack = self._offset
        misses = 0
        while True:
            leader = racks[first_rack].unfenced.next(epoch)
            if leader >= 0:
                break
            misses += 1
            if misses > n:
                raise self._stuck("leader")
            first_rack = (first_rack + 1) % n
        replicas = [leader]
        rack_index = self._offset
        for _ in range(1, replication_factor):
            misses = 0
            while True:
                result = -1
                if rack_index == first_rack:
                    # The leader's rack is passed over once, so followers start on other racks.
                    first_rack = -1
                else:
                    result = racks[rack_index].next(epoch)
                rack_index = (rack_index + 1) % n
                if result >= 0:
                    break
                misses += 1
                if misses > n + 1:
                    raise self._stuck("follower")
            replicas.append(result)
        self._epoch += 1
        self._offset += 1
        return replicas


def place_striped(
    brokers: Sequence[UsableBroker],
    num_partitions: int,
    replication_factor: int,
    rnd: JavaRandom,
) -> list[list[int]]:
    """``new StripedReplicaPlacer(rnd).place(new PlacementSpec(start, num_partitions, rf), cluster)``.

    ``brokers`` in the order the ClusterDescriber iterates them; ids must be distinct. Returns the
    replica lists of partitions start, start+1, ... (the placement does not depend on start).
    ``rnd`` advances exactly as Kafka's Random would, so one generator can place several topics
    in sequence, as a controller does.
    """
    if not -(1 << 15) <= replication_factor < (1 << 15):
        raise AssignmentError(f"replication factor {replication_factor} does not fit Kafka's int16 field")
    ids = [b.id for b in brokers]
    if len(set(ids)) != len(ids):
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        raise AssignmentError(f"broker ids listed more than once: {dupes}")
    racks = _RackList(rnd, brokers)
    _check_positive(replication_factor)
    _check_some_unfenced(racks.unfenced)
    _check_enough_brokers(replication_factor, racks.total)
    if num_partitions < 0:
        # Kafka sizes its result list with numPartitions before placing anything.
        raise AssignmentError(f"Illegal Capacity: {num_partitions}", kafka_exception="IllegalArgumentException")
    return [racks.place(replication_factor) for _ in range(num_partitions)]
