"""Synthetic clusters: reproducible, valid, and shaped as asked."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.generate import ClusterSpec, generate, generate_snapshot
from kafka_rebalance.metrics import broker_loads


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    spec = ClusterSpec(brokers=9, racks=3, topics=5, partitions=300, replica_skew=1.0, leader_skew=0.2, seed=3)
    a = generate(spec, tmp_path / "a.parquet").read_bytes()
    b = generate(spec, tmp_path / "b.parquet").read_bytes()
    assert a == b
    c = generate(ClusterSpec(**{**spec.__dict__, "seed": 4}), tmp_path / "c.parquet").read_bytes()
    assert a != c


def test_shape_follows_the_spec() -> None:
    spec = ClusterSpec(brokers=12, racks=3, topics=7, partitions=3000, replication_factor=3,
                       leader_skew=0.25, new_brokers=3, seed=1)  # fmt: skip
    snap = generate_snapshot(spec)
    assert len(snap.partitions) == 3000 and len({p.topic for p in snap.partitions}) == 7
    racks = snap.rack_of
    # Rack-safe: every partition on 3 distinct racks (racks divide the 9 existing brokers).
    assert all(len({racks[b] for b in p.replicas}) == 3 for p in snap.partitions)
    loads = {b.broker_id: b for b in broker_loads(snap)}
    assert all(loads[b].replicas == 0 for b in (9, 10, 11))
    not_preferred = sum(p.leader != p.replicas[0] for p in snap.partitions) / 3000
    assert 0.22 < not_preferred < 0.28
    # Heavy tail: the biggest partition dwarfs the median.
    sizes = sorted(p.size_bytes for p in snap.partitions)
    assert sizes[-1] > 20 * sizes[len(sizes) // 2]


def test_replica_skew_loads_some_brokers_more() -> None:
    even = broker_loads(generate_snapshot(ClusterSpec(brokers=6, racks=3, partitions=3000, seed=2)))
    skewed = broker_loads(generate_snapshot(ClusterSpec(brokers=6, racks=3, partitions=3000, replica_skew=2.0, seed=2)))
    spread = lambda loads: max(b.replicas for b in loads) / min(b.replicas for b in loads)  # noqa: E731
    assert spread(skewed) > 1.3 > spread(even)


def test_dead_brokers_leave_the_isr_and_lose_leadership() -> None:
    snap = generate_snapshot(ClusterSpec(brokers=6, racks=3, partitions=600, dead_brokers=1, seed=5))
    dead = [b.id for b in snap.brokers if not b.alive]
    assert dead == [5]
    assert all(5 not in p.isr and p.leader != 5 for p in snap.partitions)
    assert Counter(5 in p.replicas for p in snap.partitions)[True] > 0


def test_bad_specs_are_refused_with_the_flag_named(tmp_path: Path) -> None:
    with pytest.raises(RebalanceError, match=r"--replication-factor must be 1..2 \(existing brokers\), got 3"):
        generate(ClusterSpec(brokers=4, new_brokers=2, replication_factor=3), tmp_path / "x.parquet")
    with pytest.raises(RebalanceError, match="output must end in .json or .parquet"):
        generate(ClusterSpec(), tmp_path / "x.csv")


def test_more_replicas_than_racks_never_repeats_a_broker() -> None:
    snap = generate_snapshot(ClusterSpec(brokers=8, racks=2, partitions=2000, replication_factor=4, replica_skew=1.0))
    assert all(len(set(p.replicas)) == 4 for p in snap.partitions)
    assert all(len({snap.rack_of[b] for b in p.replicas}) == 2 for p in snap.partitions)
