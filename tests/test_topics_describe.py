"""Importing `kafka-topics.sh --describe` output (seed 002 shows the old layout)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_rebalance.errors import RebalanceError, SnapshotError
from kafka_rebalance.topics_describe import parse_rack_map, parse_topics_describe

SEED_002 = """\
Topic:topic-test2   PartitionCount:6    ReplicationFactor:3 Configs:
    Topic: topic-test2  Partition: 0    Leader: 2   Replicas: 2,0,1 Isr: 2,0,1
    Topic: topic-test2  Partition: 1    Leader: 0   Replicas: 0,1,2 Isr: 0,1,2
    Topic: topic-test2  Partition: 2    Leader: 1   Replicas: 1,2,0 Isr: 1,2,0
    Topic: topic-test2  Partition: 3    Leader: 2   Replicas: 2,1,0 Isr: 2,1,0
    Topic: topic-test2  Partition: 4    Leader: 0   Replicas: 0,2,1 Isr: 0,2,1
    Topic: topic-test2  Partition: 5    Leader: 1   Replicas: 1,0,2 Isr: 1,0,2
"""

KAFKA_3 = (
    "Topic: orders\tTopicId: 3gVc5bYfS1uT2m4GSpaY2w\tPartitionCount: 3\tReplicationFactor: 2\t"
    "Configs: min.insync.replicas=2,follower.replication.throttled.replicas=0:1,1:2,segment.bytes=1073741824\n"
    "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\tElr: \tLastKnownElr: \n"
    "\tTopic: orders\tPartition: 1\tLeader: none\tReplicas: 3,2\tIsr: \tOffline: 3,2\tElr: \tLastKnownElr: \n"
    "\tTopic: orders\tPartition: 2\tLeader: 2\tReplicas: 2,1\tIsr: 2\tOffline: \tElr: \tLastKnownElr: \n"
)


def test_seed_002_output_imports() -> None:
    snap = parse_topics_describe(SEED_002, "seed")
    assert [b.id for b in snap.brokers] == [0, 1, 2]
    assert [p.replicas for p in snap.partitions] == [(2, 0, 1), (0, 1, 2), (1, 2, 0), (2, 1, 0), (0, 2, 1), (1, 0, 2)]
    assert [p.leader for p in snap.partitions] == [2, 0, 1, 2, 0, 1]
    assert snap.topic_configs("topic-test2") == {}


def test_kafka_3_layout_with_topic_ids_elr_and_offline() -> None:
    snap = parse_topics_describe(KAFKA_3, "prod", {1: "a", 2: "b", 3: "c"})
    p0, p1, p2 = snap.partitions
    assert p1.leader == -1 and p1.isr == () and p1.offline_replicas == (3, 2)
    assert p2.isr == (2,)
    # Config values containing commas survive.
    assert snap.topic_configs("orders")["follower.replication.throttled.replicas"] == "0:1,1:2"
    assert snap.topic_configs("orders")["segment.bytes"] == "1073741824"
    # Broker 3 appears only as offline: it is down. Broker 2 leads a partition: alive.
    assert {b.id: (b.rack, b.alive) for b in snap.brokers} == {1: ("a", True), 2: ("b", True), 3: ("c", False)}


def test_rack_map_formats(tmp_path: Path) -> None:
    (tmp_path / "racks.json").write_text('{"0": "rack-a", "1": "rack-b"}')
    (tmp_path / "racks.txt").write_text("# broker rack\n0 rack-a\n1:rack-b\n")
    assert parse_rack_map(tmp_path / "racks.json") == parse_rack_map(tmp_path / "racks.txt") == {0: "rack-a", 1: "rack-b"}
    (tmp_path / "bad.txt").write_text("zero rack-a\n")
    with pytest.raises(RebalanceError, match=r"bad.txt:1: expected '<broker id> <rack>', got 'zero rack-a'"):
        parse_rack_map(tmp_path / "bad.txt")


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("racks.txt", "0 rack-a\n1 rack-b\n2 rack-c\n0 rack-c\n", "broker 0 is listed in two racks: 'rack-a' (line 1) and 'rack-c' (line 4)"),
        ("racks.json", '{"0": "rack-a", "1": "rack-b", "2": "rack-c", "00": "rack-b"}',
         "broker 0 is listed in two racks: 'rack-a' (key \"0\") and 'rack-b' (key \"00\")"),
    ],
)
def test_import_describe_refuses_a_broker_in_two_racks(tmp_path: Path, name: str, text: str, problem: str) -> None:
    from tests.support.cli_inprocess import run_cli

    racks = tmp_path / name
    racks.write_text(text)
    (tmp_path / "topics.txt").write_text(SEED_002)
    out = tmp_path / "snap.json"
    r = run_cli("import-describe", "--input", str(tmp_path / "topics.txt"), "--cluster-id", "seed", "--rack-map", str(racks),
                "--out", str(out))
    assert (r.code, r.stderr) == (2, f"error: {racks}: {problem}\n")
    assert not out.exists()


def test_a_broker_repeated_in_its_own_rack_is_one_entry(tmp_path: Path) -> None:
    (tmp_path / "racks.txt").write_text("0 rack-a\n1 rack-b\n0:rack-a\n")
    assert parse_rack_map(tmp_path / "racks.txt") == {0: "rack-a", 1: "rack-b"}


def test_partial_rack_map_is_the_mixed_rack_error() -> None:
    with pytest.raises(SnapshotError, match="some brokers have a rack and some do not"):
        parse_topics_describe(SEED_002, "seed", {0: "a"})


def test_garbage_lines_are_named() -> None:
    with pytest.raises(RebalanceError, match=r"out.txt:2: not a line of kafka-topics.sh --describe output"):
        parse_topics_describe(SEED_002.splitlines()[0] + "\nhello world\n", "x", source="out.txt")
    with pytest.raises(RebalanceError, match="no partition lines found"):
        parse_topics_describe("", "x")
    with pytest.raises(RebalanceError, match="Leader: expected a broker id or 'none', got 'two'"):
        parse_topics_describe("Topic: t Partition: 0 Leader: two Replicas: 1 Isr: 1", "x")
