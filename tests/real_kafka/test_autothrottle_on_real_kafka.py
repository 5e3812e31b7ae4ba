"""`execute --throttle auto` on real Apache Kafka: broker 2's replication rate follows its headroom.

Two nodes. Broker 1 sends two partitions of 6 MiB each to broker 2 under a plan approved at 1 MiB/s (the
ceiling). Broker 2 leads a hot partition that a producer in a thread writes at 512 KiB/s, then stops.
Every broker's network is configured at 1280 KiB/s each way, so broker 2 can spare 768 KiB/s for copying
while the producer runs and the whole ceiling once it stops. Kafka's own view (DescribeConfigs through
kafka-python, ConfigCommand at the end) is the oracle: the rate it shows on broker 2 while the producer runs
and after it stopped, the ledger's record of each change, and no throttle left after the run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from kafka_rebalance.cluster.admin import TP
from kafka_rebalance.executor.autothrottle import CHANGE_FRACTION
from kafka_rebalance.plan_dir import record_approval
from kafka_rebalance.sandbox import cluster as sandbox_cluster
from kafka_rebalance.snapshot import load_snapshot
from tests.real_kafka.test_gather_measures_on_real_kafka import VALUE, GroupConsumer, PacedProducer, _create
from tests.support.kafka import ROOT, admin, gather, reap, throttles_anywhere
from tests.support.plans import write_plan

# Rates followed and runs timed against each other: run alone (`quiet`), not beside the parallel suite.
pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.quiet]
KIB = 1024
MIB = 1024 * KIB
CEILING = MIB
FLOOR = 64 * KIB
NIC = 1280 * KIB
PRODUCE = 512 * KIB
TOLERANCE = 0.15  # sampled traffic: the bar for a measured rate
FOLLOWER_RATE = "follower.replication.throttled.rate"
LEADER_RATE = "leader.replication.throttled.rate"


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    directory = tmp_path_factory.mktemp("auto") / "sandbox"
    sandbox = sandbox_cluster.up(directory, brokers=2, racks=1)
    try:
        yield sandbox
    finally:
        sandbox_cluster.down(directory)


def _fill(bootstrap: str, topic: str, partitions: int, nbytes: int) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=20, batch_size=256 * KIB)
    payload = b"y" * VALUE
    for p in range(partitions):
        for _ in range(nbytes // VALUE):
            producer.send(topic, payload, partition=p)
    producer.flush()
    producer.close()


def _follower_rate(client, broker: int, key: str = FOLLOWER_RATE) -> int | None:
    from kafka.admin import ConfigResource, ConfigResourceType

    found = client.describe_configs([ConfigResource(ConfigResourceType.BROKER, str(broker))])
    value = found.get("broker", {}).get(str(broker), {}).get(key, {}).get("value")
    return int(value) if value is not None else None


def _execute_auto(pair, plan_dir, capacity) -> subprocess.Popen:
    """`execute --throttle auto` of the plan in a subprocess, polling each second, with the test's floor."""
    command = [sys.executable, "-m", "kafka_rebalance.cli", "execute", "--plan", str(plan_dir), "--bootstrap-server",
               pair.bootstrap_servers, "--poll-interval", "1", "--throttle", "auto", "--capacity", str(capacity),
               "--throttle-floor", str(FLOOR)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _each_rate_is_its_headroom_or_kept(changes: list[dict], rate: str, traffic: str, judged: list[dict]) -> None:
    """Each record of ``judged`` (one broker's changes, in order) shows a ``rate`` that is NIC less the ``traffic`` it
    records (written then), or the one before it (left as it was: a record is made when either of a broker's two
    rates changes, and the other is rewritten only past the change fraction, which its headroom is within)."""
    before = None
    for c in changes:
        if c in judged:
            headroom = NIC - c[traffic]
            written = abs(c[rate] - headroom) <= 1
            kept = c[rate] == before and abs(headroom - before) <= CHANGE_FRACTION * before
            assert written or kept, (c, before)
        before = c[rate]


def test_auto_throttle_follows_broker_headroom_on_real_kafka(pair, tmp_path):
    bulk, hot = "auto-bulk", "auto-hot"
    _create(pair, bulk, {0: [1], 1: [1]})
    _create(pair, hot, {0: [2]})
    _fill(pair.bootstrap_servers, bulk, 2, 6 * MIB)
    snap_path = gather(pair, tmp_path / "before.json", "auto-")
    snap = load_snapshot(snap_path)
    plan_dir = write_plan(tmp_path / "plan", snap, [{TP(bulk, 0): (2,), TP(bulk, 1): (2,)}], rate=CEILING)
    record_approval(plan_dir, "approved", "real-kafka-test")
    capacity = tmp_path / "capacity.json"
    capacity.write_text(json.dumps({"default": {"network_in_bytes_per_sec": NIC, "network_out_bytes_per_sec": NIC}}))

    producer = PacedProducer(pair.bootstrap_servers, {(hot, 0): float(PRODUCE)})
    producer.start()
    time.sleep(2)  # the producer at its pace before the first sample
    proc = _execute_auto(pair, plan_dir, capacity)
    client = admin(pair)
    seen: list[tuple[float, bool, int | None]] = []  # (seconds, producer running, broker 2's follower rate)
    started = time.monotonic()
    try:
        producing = True
        while proc.poll() is None and time.monotonic() - started < 120:
            rate = _follower_rate(client, 2)
            seen.append((round(time.monotonic() - started, 1), producing, rate))
            # Stop the producer once Kafka has shown the headroom's rate for a few looks: the rest runs unloaded.
            if producing and sum(1 for _, p, r in seen if p and r is not None and FLOOR < r < CEILING) >= 2:
                producer.stop()
                producing = False
            time.sleep(0.5)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        if producer.is_alive():
            producer.stop()
        client.close()
    assert proc.returncode == 0, err[-3000:]
    assert json.loads(out)["status"] == "complete", out[-2000:]

    print(f"\nauto throttle: broker 2 follower rate as Kafka showed it: {seen}", file=sys.stderr)
    loaded = [r for _, p, r in seen if p and r is not None]
    unloaded = [r for _, p, r in seen if not p and r is not None]
    ledger = json.loads((plan_dir / "ledger.json").read_text())["continuous"]
    block = ledger["auto_throttle"]
    assert block["traffic"].startswith("sampled") and block["ceiling"] == CEILING and block["floor"] == FLOOR
    changes = [c for c in block["changes"] if c["broker"] == 2]
    # Every value Kafka showed was recorded in the ledger before it was written.
    assert set(loaded + unloaded) <= {c["follower_rate"] for c in changes}, (seen, changes)
    # While the producer ran, Kafka showed broker 2 receiving at its headroom: below the ceiling, above the floor, and
    # exactly its network in less the traffic measured then, which was what the producer wrote (a loaded machine
    # may slow the producer below its 512 KiB/s: what it achieved is the reference, and then 768 KiB/s is not).
    written = producer.achieved((hot, 0))
    assert abs(written - PRODUCE) <= 0.5 * PRODUCE, f"the producer wrote {written:,.0f} B/s of {PRODUCE:,}: overloaded"
    headroom = [c for c in changes if c["follower_rate"] in loaded and FLOOR < c["follower_rate"] < CEILING]
    assert headroom, (seen, changes)
    for c in headroom:
        assert c["traffic_in"] is not None and abs(c["traffic_in"] - written) <= TOLERANCE * written, (c, written)
    _each_rate_is_its_headroom_or_kept(changes, "follower_rate", "traffic_in", headroom)
    # Once it stopped, the whole ceiling: the headroom is larger than the approval allows.
    assert CEILING in unloaded, seen
    assert all(FLOOR <= r <= CEILING for r in loaded + unloaded), seen
    assert ledger["throttles_restored"] is True
    # Kafka's own ConfigCommand: no throttle left on any broker or on the test's topics.
    assert throttles_anywhere(pair, "auto-") == {}


def test_auto_throttle_counts_what_consumer_groups_read_from_the_sending_broker_on_real_kafka(pair, tmp_path):
    """Broker 1 sends 12 MiB to broker 2 and leads a partition a producer writes at 512 KiB/s and a consumer group
    reads as fast. Its network out, 1280 KiB/s, can spare 768 KiB/s for copying: the leader rate Kafka shows on it
    must say so. Log ends alone see no consumer, and would leave it at the 1 MiB/s ceiling."""
    bulk, hot = "auto-read-bulk", "auto-read-hot"
    _create(pair, bulk, {0: [1], 1: [1]})
    _create(pair, hot, {0: [1]})
    _fill(pair.bootstrap_servers, bulk, 2, 6 * MIB)
    snap = load_snapshot(gather(pair, tmp_path / "before.json", "auto-read-"))
    plan_dir = write_plan(tmp_path / "plan", snap, [{TP(bulk, 0): (2,), TP(bulk, 1): (2,)}], rate=CEILING)
    record_approval(plan_dir, "approved", "real-kafka-test")
    capacity = tmp_path / "capacity.json"
    capacity.write_text(json.dumps({"default": {"network_in_bytes_per_sec": NIC, "network_out_bytes_per_sec": NIC}}))

    group = "auto-read-group"
    producer = PacedProducer(pair.bootstrap_servers, {(hot, 0): float(PRODUCE)})
    consumer = GroupConsumer(pair.bootstrap_servers, group, [hot])
    producer.start()
    consumer.start()
    time.sleep(4)  # the group has joined, caught up and committed before the first sample
    proc = _execute_auto(pair, plan_dir, capacity)
    client = admin(pair)
    seen: list[int | None] = []  # broker 1's leader rate as Kafka showed it, while the group read
    try:
        started = time.monotonic()
        while proc.poll() is None and time.monotonic() - started < 120:
            seen.append(_follower_rate(client, 1, LEADER_RATE))
            time.sleep(0.5)
        out, err = proc.communicate(timeout=60)
    finally:
        reap(proc)
        producer.stop()
        consumer.stop()
        try:
            client.delete_groups([group])
        finally:
            client.close()
    assert proc.returncode == 0 and json.loads(out)["status"] == "complete", err[-3000:]
    print(f"\nauto throttle: broker 1 leader rate as Kafka showed it while a group read: {seen}", file=sys.stderr)
    block = json.loads((plan_dir / "ledger.json").read_text())["continuous"]["auto_throttle"]
    assert block["traffic"].startswith("sampled: log-end offsets and sizes, and consumer groups' committed offsets")
    read = consumer.read / (time.monotonic() - started)  # about what it read while the run went on
    changes = [c for c in block["changes"] if c["broker"] == 1 and c["traffic_out"] is not None]
    assert changes, block["changes"]
    # Broker 1's network out is what the group read from it (the partition has no follower): on average within the
    # bar; each poll's figure within 40 %, as a 1 s poll sees the group's 200 ms commits land a commit early or late.
    written = producer.achieved((hot, 0))
    outs = [c["traffic_out"] for c in changes]
    assert abs(sum(outs) / len(outs) - written) <= TOLERANCE * written, (outs, written, read)
    for c in changes:
        assert abs(c["traffic_out"] - written) <= 0.4 * written, (c, written)
        # ...and its leader rate is below the ceiling it would have kept without the group.
        assert FLOOR < c["leader_rate"] < CEILING, c
    # Each leader rate is the headroom its traffic leaves (or one kept, that headroom being within the change fraction).
    _each_rate_is_its_headroom_or_kept(changes, "leader_rate", "traffic_out", changes)
    # Kafka showed that rate on broker 1 while the run went on.
    assert {c["leader_rate"] for c in changes} & set(seen), (seen, changes)
    assert throttles_anywhere(pair, "auto-read-") == {}


def _replicas(client, topic: str) -> dict[int, list[int]]:
    found = client.describe_topics([topic])[0]
    return {p["partition_index"]: sorted(p["replica_nodes"]) for p in found["partitions"]}


def _run_until_kafka_shows_it_done(pair, plan_dir, topic: str, *extra: str) -> float:
    """Seconds from the executor's start until Kafka's metadata shows every partition of ``topic`` on broker 2 alone
    (read every 0.1 s: the executor's own polls would round both runs up to its poll interval)."""
    command = [sys.executable, "-m", "kafka_rebalance.cli", "execute", "--plan", str(plan_dir), "--bootstrap-server",
               pair.bootstrap_servers, "--poll-interval", str(COMPARE_POLL), *extra]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    client = admin(pair)
    started = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    done = None
    try:
        while time.monotonic() - started < 120:
            if done is None and all(r == [2] for r in _replicas(client, topic).values()):
                done = time.monotonic() - started
            if done is not None and proc.poll() is not None:
                break
            time.sleep(0.1)
        out, err = proc.communicate(timeout=60)
    finally:
        reap(proc)
        client.close()
    assert proc.returncode == 0 and json.loads(out)["status"] == "complete", err[-3000:]
    assert done is not None, f"{topic} never showed on broker 2 alone"
    return done


COMPARE_POLL = 5.0  # the floor before the first two samples would have cost up to 0.9 x this: measurable


def test_auto_ends_no_later_than_the_fixed_throttle_at_the_same_ceiling_on_real_kafka(pair, tmp_path):
    # A producer runs through both runs, writing 128 KiB/s to broker 2: its headroom (1280 - 128 KiB/s) stays above
    # the 1 MiB/s ceiling, so auto must copy as the fixed throttle does, from the first second to the last: 12 MiB
    # from broker 1 at 1 MiB/s, about 12 s each.
    hot = "cmp-hot"
    _create(pair, hot, {0: [2]})
    runs = {"fixed": "cmp-fixed", "auto": "cmp-auto"}
    for topic in runs.values():
        _create(pair, topic, {0: [1], 1: [1]})
        _fill(pair.bootstrap_servers, topic, 2, 6 * MIB)
    snap = load_snapshot(gather(pair, tmp_path / "before.json", "cmp-"))
    plans = {}
    for name, topic in runs.items():
        plans[name] = write_plan(tmp_path / name, snap, [{TP(topic, 0): (2,), TP(topic, 1): (2,)}], rate=CEILING)
        record_approval(plans[name], "approved", "real-kafka-test")
    capacity = tmp_path / "capacity.json"
    capacity.write_text(json.dumps({"default": {"network_in_bytes_per_sec": NIC, "network_out_bytes_per_sec": NIC}}))
    producer = PacedProducer(pair.bootstrap_servers, {(hot, 0): float(128 * KIB)})
    producer.start()
    try:
        time.sleep(2)
        fixed = _run_until_kafka_shows_it_done(pair, plans["fixed"], runs["fixed"])
        auto = _run_until_kafka_shows_it_done(pair, plans["auto"], runs["auto"], "--throttle", "auto", "--capacity",
                                              str(capacity))
    finally:
        producer.stop()
    print(f"\nfixed throttle {fixed:.1f} s, auto {auto:.1f} s", file=sys.stderr)
    assert fixed > 8, fixed  # the throttle really held the copy (12 MiB at 1 MiB/s)
    # No later, within what a run's end can be read to: Kafka's quota windows (1 s) and this test's 0.1 s reads.
    assert auto <= fixed + 1.5, (auto, fixed)
    changes = json.loads((plans["auto"] / "ledger.json").read_text())["continuous"]["auto_throttle"]["changes"]
    # From its first write on, auto gave broker 2 the ceiling: the headroom never fell below it.
    assert changes and {c["follower_rate"] for c in changes if c["broker"] == 2} == {CEILING}, changes
    assert throttles_anywhere(pair, "cmp-") == {}
