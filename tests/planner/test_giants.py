"""Giant partitions (issue #42): seeded corpus draws given one to three partitions far bigger than a
broker's share of the bytes. Planned with the bytes goal alone, no partition's replica set changes in more
than one step (no broker leaves or dies in these draws and no rack is crowded, so nothing forces a second
copy of any partition); with the default goals, no partition gets more than one new replica beyond what
the count goal's own plan gave it (the byte goals' one step). Every broker that holds a partition bigger than any band of the brokers that may
take it, which no plan brings into its band, is reported in ``summary.targets.byte_misses`` with a reason
naming that partition.

The corpus' giants are doubled here, so that they fit no band. They are recomputed here from plan.json's
own bands and the snapshot's sizes, not by the planner's proofs (planner/byte_misses.py). Eight draws of
at most 12 brokers and 240 partitions, planned by the heuristic (the exact model may need a second copy
of a partition to reach the bands: docs/PLANNER.md, "A partition moves once in the byte goals"): a few
seconds.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from kafka_rebalance.planner import PlanOptions, make_plan
from kafka_rebalance.planner.core import Plan
from kafka_rebalance.snapshot import Snapshot
from kafka_rebalance.testing import corpus

Key = tuple[str, int]

SEEDS = range(8)


def giant_recipe(seed: int) -> corpus.Recipe:
    recipe = corpus.draw_recipe(seed, max_brokers=12, max_partitions=240, min_brokers=4)
    # Nobody leaves, nothing crowds a rack: any second copy of a partition would be the balance goals'.
    return replace(recipe, giants=1 + seed % 3, dead=0, decommission=0.0, rack_unaware=0.0)


def set_changes(snapshot: Snapshot, plan: Plan) -> tuple[dict[Key, int], dict[Key, int]]:
    """Per partition, the steps that change its replica set, and the new replicas its final list has."""
    changes: dict[Key, int] = {}
    rows = {(p.topic, p.partition): tuple(p.replicas) for p in snapshot.partitions}
    for batch in plan.batches:
        for step in batch.steps:
            key = (step.topic, step.partition)
            if set(step.after) != set(rows[key]):
                changes[key] = changes.get(key, 0) + 1
            rows[key] = step.after
    start = {(p.topic, p.partition): set(p.replicas) for p in snapshot.partitions}
    return changes, {k: len(set(row) - start[k]) for k, row in rows.items()}


@pytest.mark.parametrize("seed", SEEDS)
def test_a_partition_changes_once_and_every_giant_is_named_for_its_broker(seed: int) -> None:
    snapshot, options = corpus.build(giant_recipe(seed), f"giants-{seed}")
    # The corpus' giants are one broker's share of the other partitions' bytes: twice that is more than any
    # band of the cluster's mean can hold.
    biggest = max(int(p.size_bytes or 0) for p in snapshot.partitions)
    snapshot = replace(snapshot, partitions=tuple(
        replace(p, size_bytes=2 * biggest) if p.size_bytes == biggest else p for p in snapshot.partitions))
    heuristic = {**options, "optimizer": "heuristic"}

    alone, _ = set_changes(snapshot, make_plan(snapshot, PlanOptions(**heuristic, goals=("bytes",))))
    twice = {k: n for k, n in alone.items() if n > 1}
    assert not twice, f"seed {seed}: the bytes goal changed replica sets in more than one step: {twice}"

    _, counted = set_changes(snapshot, make_plan(snapshot, PlanOptions(**heuristic, goals=("replica-count",))))
    plan = make_plan(snapshot, PlanOptions(**heuristic))
    _, copies = set_changes(snapshot, plan)
    # The byte goals add at most one step to any partition: one new replica where the count goal gave it
    # none, one more where it did (only where the cap left a band short: docs/PLANNER.md).
    more = {k: (n, counted[k]) for k, n in copies.items() if n > counted[k] + 1}
    assert not more, f"seed {seed}: (new replicas, the count goal's alone) beyond one more than the count goal's: {more}"
    rows = {(p.topic, p.partition): tuple(p.replicas) for p in snapshot.partitions}
    for batch in plan.batches:
        for step in batch.steps:
            rows[(step.topic, step.partition)] = step.after

    targets = plan.summary["targets"]
    bands = {int(b): hi for b, (_, hi) in targets["byte_bands"].items()}
    size = {(p.topic, p.partition): int(p.size_bytes or 0) for p in snapshot.partitions}
    misses = {m["broker_id"]: m["reason"] for m in targets["byte_misses"]}
    racked = any(b.rack for b in snapshot.brokers)
    rack = {b.id: b.rack for b in snapshot.brokers}
    n_racks = len({rack[b] for b in bands})
    # Without excluded topics or hot partitions every replica may move: a broker's room is its band's top.
    assert not options.get("exclude_topics")
    for key, row in rows.items():
        rf = len(row)
        # Rack safety keeps RF / racks replicas in each rack when RF is a multiple of the rack count.
        pinned = racked and rf % n_racks == 0
        for b in row:
            hosts = [x for x in bands if not pinned or rack[x] == rack[b]]
            if size[key] > max(bands[x] for x in hosts) + 1:
                name = f"{key[0]}-{key[1]}"
                assert b in misses, f"seed {seed}: broker {b} holds {name}, too big for every band, and is no miss"
                assert name in misses[b], f"seed {seed}: broker {b}'s miss does not name {name}: {misses[b]}"
    # Every miss names its cause (a partition, load that may not move, or too little that fits under its
    # top), or says it is the planner's shortfall.
    names = {f"{t}-{p} (" for t, p in size}
    for b, reason in misses.items():
        named = any(n in reason for n in names)
        assert named or reason.startswith(("not reached by", "every partition it could hold")) \
            or "the plan may not move" in reason, f"seed {seed}: broker {b}: {reason}"
