"""Kafka's replica assignment algorithms, exactly as AdminUtils / AdminZkClient do them.

Pure functions. Same inputs, same output (and same errors) as Kafka:

* ``assign_replicas_to_brokers`` = ``AdminUtils.assignReplicasToBrokers`` (rack-unaware
  and rack-aware with the rack-interlaced broker list);
* ``create_new_partitions_assignment`` = ``AdminZkClient.createNewPartitionsAssignment``
  (adding partitions to an existing topic; existing partitions never move);
* ``parse_replica_assignment`` / ``validate_replica_assignment`` = what
  ``kafka-topics.sh --replica-assignment 0:1:2,0:1:2`` checks.

The only deliberate difference: Kafka draws the random start index and shift from
``java.util.Random``; we draw them from a seedable ``random.Random`` so a run can
be reproduced. Given the start index and shift explicitly, output is identical.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kafka_rebalance.errors import AssignmentError
from kafka_rebalance.placement.java_collections import java_string_sort_key

_INVALID_PARTITIONS = "InvalidPartitionsException"
_INVALID_RF = "InvalidReplicationFactorException"


@dataclass(frozen=True, slots=True)
class BrokerMetadata:
    id: int
    rack: str | None = None


def _replica_index(first_replica_index: int, second_replica_shift: int, replica_index: int, n_brokers: int) -> int:
    shift = 1 + (second_replica_shift + replica_index) % (n_brokers - 1)
    return (first_replica_index + shift) % n_brokers


def rack_alternated_broker_list(broker_rack: Mapping[int, str]) -> list[int]:
    """Kafka's getRackAlternatedBrokerList: racks sorted by name, brokers by id, round-robin over racks.

    Names sort as Java's ``String.compareTo`` does (UTF-16 code units), which differs from
    Python's code-point order once a name has characters outside the Basic Multilingual Plane.
    """
    by_rack: dict[str, list[int]] = {}
    for broker, rack in broker_rack.items():
        by_rack.setdefault(rack, []).append(broker)
    racks = sorted(by_rack, key=java_string_sort_key)
    iterators = {rack: iter(sorted(by_rack[rack])) for rack in racks}
    result: list[int] = []
    rack_index = 0
    while len(result) < len(broker_rack):
        nxt = next(iterators[racks[rack_index]], None)
        if nxt is not None:
            result.append(nxt)
        rack_index = (rack_index + 1) % len(racks)
    return result


def _resolve_start(
    n: int, start_index: int | None, replica_shift: int | None, rng: random.Random | None
) -> tuple[int, int]:
    # Kafka's fixedStartIndex >= 0 fixes BOTH values; we also accept them separately
    # (seed 002's topic-test2 output needs startIndex=2 and shift=2 given independently).
    rng = rng or random.Random()
    if start_index is not None and start_index < 0:
        start_index = None
    if replica_shift is not None and replica_shift < 0:
        replica_shift = None
    if start_index is not None and replica_shift is None:
        replica_shift = start_index
    start = start_index if start_index is not None else rng.randrange(n)
    shift = replica_shift if replica_shift is not None else rng.randrange(n)
    return start, shift


def assign_replicas_to_brokers(
    brokers: Sequence[BrokerMetadata],
    n_partitions: int,
    replication_factor: int,
    *,
    start_index: int | None = None,
    replica_shift: int | None = None,
    start_partition_id: int = -1,
    rng: random.Random | None = None,
) -> dict[int, list[int]]:
    """AdminUtils.assignReplicasToBrokers. Broker order matters, as in Kafka (callers sort by id)."""
    if n_partitions <= 0:
        raise AssignmentError("Number of partitions must be larger than 0.", kafka_exception=_INVALID_PARTITIONS)
    if replication_factor <= 0:
        raise AssignmentError("Replication factor must be larger than 0.", kafka_exception=_INVALID_RF)
    if replication_factor > len(brokers):
        raise AssignmentError(
            f"Replication factor: {replication_factor} larger than available brokers: {len(brokers)}.",
            kafka_exception=_INVALID_RF,
        )
    if all(b.rack is None for b in brokers):
        return _assign_rack_unaware(
            n_partitions, replication_factor, [b.id for b in brokers], start_index, replica_shift, start_partition_id, rng
        )
    if any(b.rack is None for b in brokers):
        raise AssignmentError("Not all brokers have rack information for replica rack aware assignment.")
    return _assign_rack_aware(
        n_partitions, replication_factor, brokers, start_index, replica_shift, start_partition_id, rng
    )


def _assign_rack_unaware(
    n_partitions: int,
    replication_factor: int,
    broker_list: list[int],
    start_index: int | None,
    replica_shift: int | None,
    start_partition_id: int,
    rng: random.Random | None,
) -> dict[int, list[int]]:
    n = len(broker_list)
    start, next_replica_shift = _resolve_start(n, start_index, replica_shift, rng)
    current = max(0, start_partition_id)
    ret: dict[int, list[int]] = {}
    for _ in range(n_partitions):
        if current > 0 and current % n == 0:
            next_replica_shift += 1
        first = (current + start) % n
        replicas = [broker_list[first]]
        for j in range(replication_factor - 1):
            replicas.append(broker_list[_replica_index(first, next_replica_shift, j, n)])
        ret[current] = replicas
        current += 1
    return ret


def _assign_rack_aware(
    n_partitions: int,
    replication_factor: int,
    brokers: Sequence[BrokerMetadata],
    start_index: int | None,
    replica_shift: int | None,
    start_partition_id: int,
    rng: random.Random | None,
) -> dict[int, list[int]]:
    broker_rack = {b.id: b.rack for b in brokers if b.rack is not None}
    num_racks = len(set(broker_rack.values()))
    arranged = rack_alternated_broker_list(broker_rack)
    n = len(arranged)
    start, next_replica_shift = _resolve_start(n, start_index, replica_shift, rng)
    current = max(0, start_partition_id)
    ret: dict[int, list[int]] = {}
    for _ in range(n_partitions):
        if current > 0 and current % n == 0:
            next_replica_shift += 1
        first = (current + start) % n
        leader = arranged[first]
        replicas = [leader]
        racks_with = {broker_rack[leader]}
        brokers_with = {leader}
        k = 0
        for _ in range(replication_factor - 1):
            while True:
                broker = arranged[_replica_index(first, next_replica_shift * num_racks, k, n)]
                rack = broker_rack[broker]
                k += 1
                # Skip a broker whose rack already has a replica while some rack has none,
                # or that already has a replica while some broker has none.
                if (rack not in racks_with or len(racks_with) == num_racks) and (
                    broker not in brokers_with or len(brokers_with) == n
                ):
                    replicas.append(broker)
                    racks_with.add(rack)
                    brokers_with.add(broker)
                    break
        ret[current] = replicas
        current += 1
    return ret


def create_new_partitions_assignment(
    topic: str,
    existing: Mapping[int, Sequence[int]],
    all_brokers: Sequence[BrokerMetadata],
    num_partitions: int,
    replica_assignment: Mapping[int, Sequence[int]] | None = None,
) -> dict[int, list[int]]:
    """AdminZkClient.createNewPartitionsAssignment: only the NEW partitions, existing ones never move.

    ``all_brokers`` is sorted by id, as Kafka's getBrokerMetadatas returns them.
    """
    if 0 not in existing:
        raise AssignmentError(
            f"Unexpected existing replica assignment for topic '{topic}', partition id 0 is missing. "
            f"Assignment: {dict(sorted(existing.items()))}"
        )
    partition0 = list(existing[0])
    to_add = num_partitions - len(existing)
    if to_add <= 0:
        raise AssignmentError(
            f"The number of partitions for a topic can only be increased. Topic {topic} currently has "
            f"{len(existing)} partitions, {num_partitions} would not be an increase.",
            kafka_exception=_INVALID_PARTITIONS,
        )
    if replica_assignment is not None:
        validate_replica_assignment(replica_assignment, len(partition0), {b.id for b in all_brokers})
        return {p: list(r) for p, r in replica_assignment.items()}
    sorted_brokers = sorted(all_brokers, key=lambda b: b.id)
    start = next((i for i, b in enumerate(sorted_brokers) if b.id >= partition0[0]), 0)
    return assign_replicas_to_brokers(
        sorted_brokers, to_add, len(partition0), start_index=start, start_partition_id=len(existing)
    )


def parse_replica_assignment(text: str) -> dict[int, list[int]]:
    """Parse kafka-topics.sh's ``--replica-assignment 0:1:2,0:1:2`` (TopicCommand.parseReplicaAssignment)."""
    ret: dict[int, list[int]] = {}
    for i, chunk in enumerate(text.split(",")):
        try:
            broker_list = [int(s.strip()) for s in chunk.split(":")]
        except ValueError:
            raise AssignmentError(
                f"replica assignment '{text}': partition {i} '{chunk}' is not a ':'-separated list of broker ids"
            ) from None
        dupes = sorted({b for b in broker_list if broker_list.count(b) > 1})
        if dupes:
            raise AssignmentError(
                f"Partition replica lists may not contain duplicate entries: {','.join(map(str, dupes))}"
            )
        ret[i] = broker_list
        if len(ret[i]) != len(ret[0]):
            raise AssignmentError(f"Partition {i} has different replication factor: {broker_list}")
    return ret


def validate_replica_assignment(
    assignment: Mapping[int, Sequence[int]], expected_replication_factor: int, available_broker_ids: set[int]
) -> None:
    """AdminZkClient.validateReplicaAssignment: raises on the first problem, with Kafka's wording."""
    for partition_id, replicas in sorted(assignment.items()):
        if not replicas:
            raise AssignmentError(f"Cannot have replication factor of 0 for partition id {partition_id}.")
        if len(replicas) != len(set(replicas)):
            raise AssignmentError(
                "Duplicate brokers not allowed in replica assignment: "
                f"{', '.join(map(str, replicas))} for partition id {partition_id}."
            )
        if not set(replicas) <= available_broker_ids:
            raise AssignmentError(
                f"Some brokers specified for partition id {partition_id} are not available. "
                f"Specified brokers: {', '.join(map(str, replicas))}, "
                f"available brokers: {', '.join(map(str, sorted(available_broker_ids)))}."
            )
        if len(replicas) != expected_replication_factor:
            raise AssignmentError(
                "Inconsistent replication factor between partitions, "
                f"partition 0 has {expected_replication_factor} while partition {partition_id} has "
                f"{len(replicas)} replicas."
            )
