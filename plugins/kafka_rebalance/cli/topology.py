"""``assign`` and ``add-partitions``: Kafka's own placement, reproducible."""

from __future__ import annotations

import enum
import random
import sys
from pathlib import Path
from typing import Annotated

import typer

from kafka_rebalance.assignment import (
    BrokerMetadata,
    assign_replicas_to_brokers,
    create_new_partitions_assignment,
)
from kafka_rebalance.cli._app import app, emit_json, fail
from kafka_rebalance.placement import JavaRandom, UsableBroker, place_striped
from kafka_rebalance.snapshot import load_snapshot
from kafka_rebalance.userinput import INT32_MAX, INT64_MAX, check_topic_name, is_ascii_digits

# Placing more partitions than this in one call is a typo, and would take minutes to print.
MAX_PARTITIONS = 1_000_000


def parse_brokers(text: str) -> list[BrokerMetadata]:
    """``0,1,2`` or ``0:rack1,1:rack3``; sorted by id, as Kafka's getBrokerMetadatas returns them."""
    brokers: dict[int, BrokerMetadata] = {}
    for item in (x.strip() for x in text.split(",")):
        if not item:
            continue
        bid_txt, _, rack = item.partition(":")
        if not is_ascii_digits(bid_txt.strip()) or int(bid_txt) > INT32_MAX:
            fail(f"--brokers: '{item}' is not a broker id (expected 0,1,2 or 0:rack-a,1:rack-b)")
        bid = int(bid_txt)
        if bid in brokers:
            fail(f"--brokers: broker {bid} is listed twice")
        if ":" in item and not rack.strip():
            fail(f"--brokers: '{item}' has an empty rack")
        brokers[bid] = BrokerMetadata(bid, rack.strip() or None)
    if not brokers:
        fail("--brokers: no broker ids given")
    return [brokers[b] for b in sorted(brokers)]


class Placer(str, enum.Enum):
    adminutils = "adminutils"
    striped = "striped"


_JAVA_LONG = (-(1 << 63), (1 << 63) - 1)


def parse_fenced(text: str, brokers: list[BrokerMetadata]) -> set[int]:
    known = {b.id for b in brokers}
    fenced: set[int] = set()
    for item in (x.strip() for x in text.split(",")):
        if not item:
            continue
        if not item.isdigit():
            fail(f"--fenced: '{item}' is not a broker id")
        if int(item) not in known:
            fail(f"--fenced: broker {item} is not in --brokers")
        fenced.add(int(item))
    return fenced


def reassignment_json(topic: str, assignment: dict[int, list[int]]) -> dict:
    return {
        "version": 1,
        "partitions": [
            {"topic": topic, "partition": p, "replicas": r, "log_dirs": ["any"] * len(r)}
            for p, r in sorted(assignment.items())
        ],
    }


@app.command()
def assign(
    brokers: Annotated[str, typer.Option(help="Broker ids, optionally with racks: 0,1,2 or 0:rack1,1:rack3")],
    partitions: Annotated[int, typer.Option(help="Number of partitions to place", min=-INT32_MAX - 1, max=MAX_PARTITIONS)],
    replication_factor: Annotated[int, typer.Option(help="Replicas per partition", min=-INT32_MAX - 1, max=INT32_MAX)],
    start_index: Annotated[
        int | None, typer.Option(help="Kafka's fixedStartIndex; alone it also fixes the shift (adminutils)", min=0, max=INT32_MAX)
    ] = None,
    replica_shift: Annotated[
        int | None, typer.Option(help="nextReplicaShift, independently of --start-index (adminutils)", min=0, max=INT32_MAX)
    ] = None,
    start_partition_id: Annotated[
        int, typer.Option(help="First partition id (adding partitions)", min=-1, max=INT32_MAX - MAX_PARTITIONS)
    ] = -1,
    seed: Annotated[int | None, typer.Option(
        help="adminutils: seed for the random start index / shift; striped: the java.util.Random seed (a Java long)",
        min=-INT64_MAX - 1, max=INT64_MAX)] = None,
    disable_rack_aware: Annotated[bool, typer.Option(help="Ignore racks, as kafka-topics.sh --disable-rack-aware")] = False,
    topic: Annotated[str | None, typer.Option(help="Print kafka-reassign-partitions JSON for this topic")] = None,
    placer: Annotated[Placer, typer.Option(
        help="adminutils: AdminUtils (ZooKeeper-era, --generate before 4.1); striped: the KRaft controller's StripedReplicaPlacer",
    )] = Placer.adminutils,
    fenced: Annotated[str | None, typer.Option(help="Fenced broker ids, e.g. 3,4 (striped only: never leaders, used last)")] = None,
) -> None:
    """Place partitions exactly as Kafka does: AdminUtils.assignReplicasToBrokers, or the KRaft StripedReplicaPlacer."""
    metas = parse_brokers(brokers)
    if topic is not None:
        check_topic_name(topic, "--topic")
    if disable_rack_aware:
        metas = [BrokerMetadata(b.id) for b in metas]
    if placer is Placer.striped:
        result = _assign_striped(metas, partitions, replication_factor, start_index, replica_shift,
                                 start_partition_id, seed, fenced)
    else:
        if fenced is not None:
            fail("--fenced applies only to --placer striped (AdminUtils places on every broker it is given)")
        if start_index is not None and not 0 <= start_index:
            fail(f"--start-index must be >= 0, got {start_index}")
        if replica_shift is not None and not 0 <= replica_shift:
            fail(f"--replica-shift must be >= 0, got {replica_shift}")
        result = assign_replicas_to_brokers(
            metas,
            partitions,
            replication_factor,
            start_index=start_index,
            replica_shift=replica_shift,
            start_partition_id=start_partition_id,
            rng=random.Random(seed),
        )
    emit_json(reassignment_json(topic, result) if topic else {str(p): r for p, r in sorted(result.items())})


def _assign_striped(
    metas: list[BrokerMetadata],
    partitions: int,
    replication_factor: int,
    start_index: int | None,
    replica_shift: int | None,
    start_partition_id: int,
    seed: int | None,
    fenced: str | None,
) -> dict[int, list[int]]:
    for flag, value in (("--start-index", start_index), ("--replica-shift", replica_shift)):
        if value is not None:
            fail(f"{flag} does not apply to --placer striped: StripedReplicaPlacer draws its starting points from --seed")
    if partitions <= 0:
        # What the controller answers before it calls the placer.
        fail(f"--partitions must be at least 1, got {partitions}")
    fenced_ids = parse_fenced(fenced, metas) if fenced is not None else set()
    if seed is None:
        # Kafka seeds its Random from the clock; we draw one and say which, so the run can be repeated.
        seed = random.SystemRandom().randint(*_JAVA_LONG)
        print(f"striped placer: --seed {seed}", file=sys.stderr)
    elif not _JAVA_LONG[0] <= seed <= _JAVA_LONG[1]:
        fail(f"--seed must fit a Java long (-2^63 .. 2^63-1), got {seed}")
    # Brokers by id: the order a controller's HashMap of (small) broker ids iterates in.
    usable = [UsableBroker(b.id, b.rack, b.id in fenced_ids) for b in metas]
    placed = place_striped(usable, partitions, replication_factor, JavaRandom(seed))
    first = max(0, start_partition_id)
    return {first + i: replicas for i, replicas in enumerate(placed)}


@app.command("add-partitions")
def add_partitions(
    snapshot: Annotated[Path, typer.Option(help="Cluster snapshot (.json or .parquet)")],
    topic: Annotated[str, typer.Option(help="Existing topic to grow")],
    partitions: Annotated[
        int, typer.Option(help="New TOTAL partition count, as kafka-topics.sh --alter --partitions", min=1, max=MAX_PARTITIONS)
    ],
    disable_rack_aware: Annotated[bool, typer.Option(help="Ignore racks")] = False,
) -> None:
    """Print the placement Kafka would give the NEW partitions of a topic (existing ones never move)."""
    snap = load_snapshot(snapshot)
    existing = {p.partition: list(p.replicas) for p in snap.partitions if p.topic == topic}
    if not existing:
        fail(f"{snapshot}: topic '{topic}' does not exist in the snapshot")
    live = [BrokerMetadata(b.id, None if disable_rack_aware else b.rack) for b in snap.brokers if b.alive]
    result = create_new_partitions_assignment(topic, existing, live, partitions)
    emit_json({str(p): r for p, r in sorted(result.items())})
