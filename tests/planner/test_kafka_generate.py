"""The --generate baseline (planner/kafka_generate.py): what Kafka's own tool would copy.

Kafka draws each topic's start index and shift at random; every expectation here holds for any
draw (the brokers offered, or the replication factor, leave no choice), so the figures are worked
out by hand rather than read back from the code.
"""

from __future__ import annotations

from kafka_rebalance.planner.kafka_generate import generate_moves
from tests.support.clusters import GiB, part, snapshot


def test_kafka_generate_baseline_counts_only_new_replicas() -> None:
    # Two brokers, RF 2: whatever start/shift Kafka draws, every partition keeps both brokers.
    snap = snapshot([0, 1], [part("t", i, [0, 1]) for i in range(5)])
    assert generate_moves(snap, seed=1)["replica_moves"] == 0
    # One partition on broker 0 only, brokers 0..2, RF 1, start index drawn: moves are 0 or 1 per partition.
    res = generate_moves(snapshot([0, 1, 2], [part("u", i, [0]) for i in range(3)]), seed=0)
    assert res["replica_moves"] == 2  # round-robin puts exactly one of the 3 partitions on broker 0


def test_onto_new_brokers_only_every_replica_is_a_copy() -> None:
    # Topic t (RF 2, 3 and 5 GiB) and u (RF 1, 7 GiB) on brokers 0 and 1, regenerated over 2 and 3 only.
    snap = snapshot([0, 1, 2, 3], [part("t", 0, [0, 1], size_bytes=3 * GiB), part("t", 1, [1, 0], size_bytes=5 * GiB),
                                   part("u", 0, [0], size_bytes=7 * GiB)])
    assert generate_moves(snap, broker_ids=[2, 3], seed=5) == {
        "replica_moves": 5, "bytes_moved": (2 * 3 + 2 * 5 + 7) * GiB, "partitions_changed": 3,
    }


def test_the_replication_factor_of_partition_0_is_the_topics() -> None:
    # t-0 has RF 2, t-1 RF 1: --generate gives both two replicas, so on new brokers t-1 copies twice.
    snap = snapshot([0, 1, 2, 3], [part("t", 0, [0, 1]), part("t", 1, [1])])
    assert generate_moves(snap, broker_ids=[2, 3])["replica_moves"] == 4
    # Without a partition 0 listed, the first listed partition's factor is used (here 1).
    snap = snapshot([0, 1, 2, 3], [part("t", 1, [0]), part("t", 2, [0, 1])])
    assert generate_moves(snap, broker_ids=[2, 3])["replica_moves"] == 2


def test_by_default_only_live_brokers_receive_and_unknown_sizes_count_no_bytes() -> None:
    # Broker 1 is dead: RF 1 over the one live broker puts every partition on 0.
    snap = snapshot([0, (1, None, False)], [part("t", 0, [0], size_bytes=2 * GiB), part("t", 1, [1], size_bytes=3 * GiB),
                                            part("t", 2, [1], size=None, size_bytes=None)])
    assert generate_moves(snap) == {"replica_moves": 2, "bytes_moved": 3 * GiB, "partitions_changed": 2}


def test_a_reordered_replica_list_is_a_change_but_not_a_copy() -> None:
    # RF 2 on two brokers: each partition gets [0, 1] or [1, 0]. Kafka's round robin gives consecutive
    # partitions different first replicas, so of t-0 and t-1 (both [0, 1] today) exactly one is reordered.
    snap = snapshot([0, 1], [part("t", 0, [0, 1]), part("t", 1, [0, 1])])
    for seed in range(4):
        assert generate_moves(snap, seed=seed) == {"replica_moves": 0, "bytes_moved": 0, "partitions_changed": 1}
