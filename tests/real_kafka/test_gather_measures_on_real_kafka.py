"""`gather` measures what makes a broker hot, from the cluster itself: produce rates over a window, and the disks.

A producer in a thread writes at rates set by the test while `kafka-rebalance gather --rate-window`
samples the cluster; the rates it records are compared with what the producer wrote, and the consumer
traffic it estimates from a consumer group's committed offsets with what the group read. A small sandbox
of one node with two log dirs (JBOD) shows each replica's disk and each disk's size, checked against
the filesystem, and a topic whose segments retention deletes during the window is still measured at
the rate written (the size alone would say about nothing is written).
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import pytest

from kafka_rebalance.snapshot import load_snapshot
from tests.support.kafka import admin, cli, tool

pytestmark = [pytest.mark.kafka, pytest.mark.slow]
KIB = 1024
VALUE = 4 * KIB  # on disk each record adds ~10 bytes and each batch ~61 to this: under 2 %
TOLERANCE = 0.15  # the bar for a measured rate


class PacedProducer(threading.Thread):
    """Writes each partition at its own steady rate (bytes of values per second) until stopped."""

    def __init__(self, bootstrap: str, rates: dict[tuple[str, int], float]) -> None:
        super().__init__(daemon=True)
        self.bootstrap, self.rates = bootstrap, rates
        self.sent = dict.fromkeys(rates, 0)
        self.stopping = threading.Event()
        self.failure: BaseException | None = None
        self.elapsed = 0.0

    def run(self) -> None:
        from kafka import KafkaProducer

        try:
            producer = KafkaProducer(bootstrap_servers=self.bootstrap, acks=1, linger_ms=5)
            payload = b"x" * VALUE
            started = time.monotonic()
            while not self.stopping.is_set():
                now = time.monotonic() - started
                for (topic, partition), rate in self.rates.items():
                    while self.sent[(topic, partition)] + VALUE <= rate * now:
                        producer.send(topic, payload, partition=partition)
                        self.sent[(topic, partition)] += VALUE
                time.sleep(0.005)
            producer.flush()
            self.elapsed = time.monotonic() - started
            producer.close()
        except BaseException as exc:  # surfaced by the test, not lost in the thread
            self.failure = exc

    def achieved(self, tp: tuple[str, int]) -> float:
        return self.sent[tp] / self.elapsed

    def stop(self) -> None:
        self.stopping.set()
        self.join(60)
        assert not self.is_alive(), "the producer did not stop"
        if self.failure is not None:
            raise self.failure


def _create(sandbox, topic: str, assignment: dict[int, list[int]], configs: dict[str, str] | None = None) -> None:
    from kafka.admin import NewTopic

    client = admin(sandbox)
    try:
        client.create_topics([NewTopic(topic, replica_assignments=assignment, topic_configs=configs or {})])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = client.describe_topics([topic])[0]
            if not found.get("error_code") and len(found["partitions"]) == len(assignment) and all(
                    p["leader_id"] >= 0 for p in found["partitions"]):
                return
            time.sleep(0.2)
        raise AssertionError(f"{topic}: no leaders within 30 s")
    finally:
        client.close()


def _gather(bootstrap: str, out: Path, window: float) -> dict:
    done = cli("gather", "--bootstrap-server", bootstrap, "--cluster-id", "sandbox", "--out", str(out),
               "--rate-window", f"{window:g}")
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())


def _within(measured: float | None, written: float) -> bool:
    return measured is not None and abs(measured - written) <= TOLERANCE * written


def test_gather_measures_each_partitions_produce_rate(kafka_sandbox, topic_prefix, tmp_path):
    hot, idle = f"{topic_prefix}-hot", f"{topic_prefix}-idle"
    _create(kafka_sandbox, hot, {0: [1, 2], 1: [2, 3]})
    _create(kafka_sandbox, idle, {0: [3, 1]})
    rates = {(hot, 0): 256.0 * KIB, (hot, 1): 64.0 * KIB}
    # The idle topic holds data written before the window: its size is not its rate.
    seed = PacedProducer(kafka_sandbox.bootstrap_servers, {(idle, 0): 512.0 * KIB})
    seed.start()
    time.sleep(1)
    seed.stop()
    producer = PacedProducer(kafka_sandbox.bootstrap_servers, rates)
    producer.start()
    try:
        time.sleep(2)  # the producer is steady before the first sample
        raw = _gather(kafka_sandbox.bootstrap_servers, tmp_path / "rates.json", 10)
    finally:
        producer.stop()
    snap = load_snapshot(tmp_path / "rates.json")
    assert raw["rate_window_seconds"] == snap.rate_window_seconds and 10 <= snap.rate_window_seconds <= 15
    measured = {(p.topic, p.partition): p for p in snap.partitions if p.topic.startswith(topic_prefix)}
    for tp, rate in rates.items():
        written = producer.achieved(tp)
        assert abs(written - rate) <= 0.02 * rate, f"the producer wrote {tp} at {written:,.0f} B/s, not {rate:,.0f}"
        assert _within(measured[tp].bytes_in_per_sec, written), (tp, measured[tp].bytes_in_per_sec, written)
        print(f"\n{tp[0]}-{tp[1]}: written {written:,.0f} B/s, measured {measured[tp].bytes_in_per_sec:,.0f} B/s "
              f"over {snap.rate_window_seconds:g} s", end="")
    assert seed.sent[(idle, 0)] > 0 and measured[(idle, 0)].size_bytes >= seed.sent[(idle, 0)]
    assert measured[(idle, 0)].bytes_in_per_sec == 0.0


def test_gather_without_a_window_measures_nothing_and_a_bad_window_is_one_line(kafka_sandbox, topic_prefix, tmp_path):
    _create(kafka_sandbox, f"{topic_prefix}-t", {0: [1]})
    out = tmp_path / "plain.json"
    done = cli("gather", "--bootstrap-server", kafka_sandbox.bootstrap_servers, "--cluster-id", "s", "--out", str(out))
    assert done.returncode == 0, done.stderr
    raw = json.loads(out.read_text())
    assert "rate_window_seconds" not in raw
    assert all(p["bytes_in_per_sec"] is None for p in raw["partitions"])
    bad = cli("gather", "--bootstrap-server", kafka_sandbox.bootstrap_servers, "--cluster-id", "s", "--out",
              str(tmp_path / "bad.json"), "--rate-window", "7200")
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "error: --rate-window must be within 0..3600 seconds, got 7200.0"]
    assert not (tmp_path / "bad.json").exists()


class GroupConsumer(threading.Thread):
    """Reads topics as consumer group ``group`` (committing every 200 ms) until stopped; counts the value bytes it read."""

    def __init__(self, bootstrap: str, group: str, topics: list[str]) -> None:
        super().__init__(daemon=True)
        self.bootstrap, self.group, self.topics = bootstrap, group, topics
        self.read = 0
        self.stopping = threading.Event()
        self.failure: BaseException | None = None

    def run(self) -> None:
        from kafka import KafkaConsumer

        try:
            consumer = KafkaConsumer(*self.topics, bootstrap_servers=self.bootstrap, group_id=self.group,
                                     auto_offset_reset="earliest", enable_auto_commit=True, auto_commit_interval_ms=200)
            while not self.stopping.is_set():
                for records in consumer.poll(timeout_ms=100).values():
                    self.read += sum(len(r.value) for r in records)
            consumer.close()  # commits what it read
        except BaseException as exc:  # surfaced by the test, not lost in the thread
            self.failure = exc

    def stop(self) -> None:
        self.stopping.set()
        self.join(60)
        assert not self.is_alive(), "the consumer did not stop"
        if self.failure is not None:
            raise self.failure


def test_gather_estimates_consumer_traffic_from_the_offsets_consumer_groups_commit(kafka_sandbox, topic_prefix, tmp_path):
    read, idle = f"{topic_prefix}-read", f"{topic_prefix}-idle"
    _create(kafka_sandbox, read, {0: [1, 2], 1: [2, 3]})
    _create(kafka_sandbox, idle, {0: [3, 1]})
    rates = {(read, 0): 128.0 * KIB, (read, 1): 32.0 * KIB, (idle, 0): 64.0 * KIB}
    group = f"{topic_prefix}-group"
    producer = PacedProducer(kafka_sandbox.bootstrap_servers, rates)
    consumer = GroupConsumer(kafka_sandbox.bootstrap_servers, group, [read])  # nobody reads the idle topic
    producer.start()
    consumer.start()
    try:
        time.sleep(4)  # the group has joined, caught up and committed before the first sample
        raw = _gather(kafka_sandbox.bootstrap_servers, tmp_path / "reads.json", 10)
    finally:
        producer.stop()
        consumer.stop()
        client = admin(kafka_sandbox)
        try:
            client.delete_groups([group])  # the shared sandbox's later gathers see no group of this test
        finally:
            client.close()
    assert consumer.read > 0
    assert raw["metrics"]["bytes_out"].startswith("estimated from consumer groups' committed offsets")
    snap = load_snapshot(tmp_path / "reads.json")
    measured = {(p.topic, p.partition): p for p in snap.partitions if p.topic.startswith(topic_prefix)}
    # One group reads everything written to `read`: its consumer traffic is the produce rate, within the bar.
    for tp in [(read, 0), (read, 1)]:
        written = producer.achieved(tp)
        assert _within(measured[tp].bytes_out_per_sec, written), (tp, measured[tp].bytes_out_per_sec, written)
        assert _raw_method(raw, tp) == "sampled-group-offsets"
        print(f"\n{tp[0]}-{tp[1]}: written {written:,.0f} B/s, read by one group {measured[tp].bytes_out_per_sec:,.0f} B/s",
              end="")
    assert _within(measured[(idle, 0)].bytes_in_per_sec, producer.achieved((idle, 0)))
    assert measured[(idle, 0)].bytes_out_per_sec == 0.0


def _raw_method(raw: dict, tp: tuple[str, int]) -> str | None:
    row = next(p for p in raw["partitions"] if (p["topic"], p["partition"]) == tp)
    return row.get("bytes_out_method")


def _partition_dirs(disk: Path, topic: str) -> set[int]:
    names = [d.name.removeprefix(f"{topic}-") for d in disk.iterdir() if d.is_dir() and d.name.startswith(f"{topic}-")]
    return {int(n) for n in names if n.isdigit()}


@pytest.mark.quiet  # a rate measured against a paced producer: run alone, not beside the parallel suite
def test_jbod_disks_and_a_rate_under_retention_on_a_two_disk_node(tmp_path):
    """One node, log.dirs of two directories, retention checked every second from the start (its own sandbox,
    stopped by pid)."""
    from kafka_rebalance.sandbox import cluster

    directory = tmp_path / "jbod"
    disks = [directory / "node-1" / "disk-a", directory / "node-1" / "disk-b"]
    sandbox = cluster.up(directory, brokers=1, racks=0, properties={
        "log.dirs": ",".join(str(d) for d in disks), "log.retention.check.interval.ms": "1000",
        "log.initial.task.delay.ms": "0"})  # retention's first check comes 30 s after start by default
    try:
        spread, trimmed = "jbod-spread", "jbod-trimmed"
        _create(sandbox, spread, {p: [1] for p in range(4)})
        # Segments roll every half second and live three: retention deletes some between the samples.
        _create(sandbox, trimmed, {0: [1]}, {"segment.ms": "500", "retention.ms": "3000"})
        rate = 128.0 * KIB
        producer = PacedProducer(sandbox.bootstrap_servers, {(trimmed, 0): rate})
        producer.start()
        try:
            time.sleep(5)  # past the first deletions: the log is at its steady size
            _gather(sandbox.bootstrap_servers, tmp_path / "jbod.json", 8)
        finally:
            producer.stop()
        start = tool(sandbox, "org.apache.kafka.tools.GetOffsetShell", "--bootstrap-server", sandbox.bootstrap_servers,
                     "--topic", trimmed, "--time", "-2").stdout.strip()
        on_disk = {str(d): _partition_dirs(d, spread) for d in disks}
    finally:
        cluster.down(directory)
    snap = load_snapshot(tmp_path / "jbod.json")
    parts = {(p.topic, p.partition): p for p in snap.partitions}

    # Kafka's own offsets say retention deleted the log's start; the rate is still what was written.
    assert int(start.rsplit(":", 1)[1]) > 0, start
    written = producer.achieved((trimmed, 0))
    assert _within(parts[(trimmed, 0)].bytes_in_per_sec, written), (parts[(trimmed, 0)].bytes_in_per_sec, written)
    # The log holds less than the window's writes: a size delta (at most the size) could not have read this rate.
    assert snap.rate_window_seconds is not None
    assert parts[(trimmed, 0)].size_bytes < (1 - TOLERANCE) * written * snap.rate_window_seconds
    print(f"\nunder retention: written {written:,.0f} B/s, measured {parts[(trimmed, 0)].bytes_in_per_sec:,.0f} B/s",
          end="")

    (broker,) = snap.brokers
    assert [d.path for d in broker.log_dirs] == sorted(str(d) for d in disks)
    for d in broker.log_dirs:
        # Both directories sit on tmp_path's filesystem: its size, and a free space the tests leave about as it was.
        usage = shutil.disk_usage(tmp_path)
        assert d.total_bytes == usage.total
        assert d.usable_bytes is not None and abs(d.usable_bytes - usage.free) <= 0.05 * usage.total
    assert broker.capacity_bytes == 2 * usage.total
    # Each replica's disk as the filesystem holds it (Kafka spreads a topic's partitions over the disks).
    assert all(on_disk.values()), on_disk
    for p in range(4):
        assert parts[(spread, p)].log_dirs == (next(d for d, held in on_disk.items() if p in held),)
