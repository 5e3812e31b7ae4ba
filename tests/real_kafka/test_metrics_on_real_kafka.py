"""`sandbox up --brokers 4 --log-dirs 2 --metrics` and `gather --metrics prometheus=URL`, on real Kafka and a real
Prometheus: issue #40's sandbox scenario.

One sandbox for the module (4 nodes, 2 log dirs each, every broker with the JMX exporter agent and Debian's
Prometheus scraping them every second). A producer writes one topic ten times faster than another at rates the
test sets, every partition of the hot topic on one broker, and a consumer reads the hot topic as it is written.
Sampling (`--rate-window`) and Prometheus (`--metrics`) must both measure the produce rates within ±15 % of
what the producer wrote, and Prometheus the consumer's rate too. The plan made from Prometheus' figures with the
network-in and topic-spread goals spreads the hot topic, brings every broker's network in within its tolerance,
and its replicas land on the log dirs it names (Kafka's `kafka-log-dirs --describe`).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafka_rebalance.snapshot import MetricMethod, load_snapshot
from kafka_rebalance.snapshot.model import MetricsSourceKind
from tests.real_kafka.test_gather_measures_on_real_kafka import TOLERANCE, PacedProducer, _create
from tests.real_kafka.test_log_dirs_on_real_kafka import execute, kafka_log_dirs, named_dirs
from tests.support.kafka import cli, plan_validate_and_approve

pytestmark = [pytest.mark.kafka, pytest.mark.slow]
KIB = 1024
WINDOW = 15.0  # long enough that a producer slowed by a loaded machine still averages out


@pytest.fixture(scope="module")
def metrics_sandbox(tmp_path_factory):
    """Started and stopped through the CLI, as an operator would (stopped by the pids sandbox.json records)."""
    from kafka_rebalance.sandbox import cluster

    directory = tmp_path_factory.mktemp("metrics") / "sandbox"
    up = cli("sandbox", "up", "--dir", str(directory), "--brokers", "4", "--log-dirs", "2", "--metrics")
    try:
        assert up.returncode == 0, up.stderr[-3000:]
        yield cluster.read_sandbox(directory)
    finally:
        if (directory / "sandbox.json").exists():
            cluster.down(directory)


# A consumer in its own process: decoding records in Python would otherwise take the GIL from the producer.
CONSUMER = """
import sys
from kafka import KafkaConsumer, TopicPartition
consumer = KafkaConsumer(bootstrap_servers=sys.argv[1], enable_auto_commit=False, fetch_max_wait_ms=100)
parts = [TopicPartition(sys.argv[2], p) for p in sorted(consumer.partitions_for_topic(sys.argv[2]) or ())]
consumer.assign(parts)
consumer.seek_to_end(*parts)
for tp in parts:
    consumer.position(tp)
print("ready", flush=True)
received = 0
import select
while not select.select([sys.stdin], [], [], 0)[0]:
    for records in consumer.poll(timeout_ms=200).values():
        received += sum(len(r.value) for r in records)
print(received, flush=True)
"""


class TailingConsumer:
    """Reads a topic from its end as it is written, counting the bytes of the values it receives."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", CONSUMER, bootstrap, topic], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if line != "ready":
            self.proc.kill()
            raise AssertionError(f"the consumer did not start: {line} {self.proc.communicate(timeout=30)[1][-2000:]}")

    def stop(self) -> int:
        """The value bytes it received."""
        out, err = self.proc.communicate("stop\n", timeout=60)
        assert self.proc.returncode == 0, err[-2000:]
        return int(out.strip())


def _gather(sandbox, out: Path, *extra: str) -> dict:
    done = cli("gather", "--bootstrap-server", sandbox.bootstrap_servers, "--cluster-id", "sandbox", "--out", str(out),
               *extra)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())


def _topic_rate(snap, topic: str, field: str = "bytes_in_per_sec") -> float:
    rates = [getattr(p, field) for p in snap.partitions if p.topic == topic]
    assert rates and all(r is not None for r in rates), (topic, field, rates)
    return sum(rates)


HOT, COLD = "metrics-hot", "metrics-cold"
# The hot topic at 10x the cold one: four partitions at 60 KiB/s, all on broker 1; the cold topic's two at 12 KiB/s,
# both on broker 2. Even network in is 66 KiB/s a broker: one hot partition each and a cold one on two of them
# (72/72/60/60, within 10 %), which only a plan that spreads the hot topic reaches.
RATES = {**{(HOT, p): 60.0 * KIB for p in range(4)}, **{(COLD, p): 12.0 * KIB for p in range(2)}}


@pytest.fixture(scope="module")
def measured(metrics_sandbox, tmp_path_factory):
    """Both snapshots gathered while the producer and the consumer run, and what they wrote and read."""
    sb = metrics_sandbox
    assert sb.metrics is not None
    out = tmp_path_factory.mktemp("measured")
    _create(sb, HOT, {p: [1] for p in range(4)})
    _create(sb, COLD, {p: [2] for p in range(2)})
    consumer = TailingConsumer(sb.bootstrap_servers, HOT)
    producer = PacedProducer(sb.bootstrap_servers, RATES)
    producer.start()
    try:
        time.sleep(2)  # the producer is steady before the first sample
        _gather(sb, out / "sampled.json", "--rate-window", f"{WINDOW:g}")
        raw = _gather(sb, out / "prometheus.json", "--rate-window", f"{WINDOW:g}",
                      "--metrics", f"prometheus={sb.metrics.prometheus_url}")
    finally:
        producer.stop()
        received = consumer.stop()
    return out, raw, producer, received


def test_sampling_and_prometheus_measure_the_produce_rates_written(metrics_sandbox, measured):
    out, raw, producer, received = measured
    hot, cold, rates = HOT, COLD, RATES
    sampled, prom = load_snapshot(out / "sampled.json"), load_snapshot(out / "prometheus.json")

    written = {tp: producer.achieved(tp) for tp in rates}
    for tp, rate in rates.items():
        # What was written is the reference; a producer far off its pace would say the machine is overloaded.
        assert abs(written[tp] - rate) <= 0.05 * rate, f"the producer wrote {tp} at {written[tp]:,.0f} B/s, not {rate:,.0f}"
    per_topic = {t: sum(w for (topic, _), w in written.items() if topic == t) for t in (hot, cold)}
    print()
    for name, snap in (("sampling", sampled), ("prometheus", prom)):
        parts = {(p.topic, p.partition): p for p in snap.partitions}
        for tp in rates:
            got = parts[tp].bytes_in_per_sec
            print(f"{name:10s} {tp[0]}-{tp[1]}: written {written[tp]:9,.0f} B/s, measured {got or 0:9,.0f} B/s")
            assert got is not None and abs(got - written[tp]) <= TOLERANCE * written[tp], (name, tp, got)
        for topic, total in per_topic.items():
            assert abs(_topic_rate(snap, topic) - total) <= TOLERANCE * total, (name, topic)

    # Each snapshot says where its figures came from.
    assert sampled.metrics_source is not None and sampled.metrics_source.kind is MetricsSourceKind.SAMPLING
    assert {parts.bytes_in_method for parts in sampled.partitions} == {MetricMethod.SAMPLED}
    assert all(p.bytes_out_per_sec is None for p in sampled.partitions)
    assert raw["metrics"]["source"] == "prometheus" and raw["metrics"]["url"] == metrics_sandbox.metrics.prometheus_url
    assert raw["metrics"]["bytes_out"] == "prometheus" and raw["rate_window_seconds"] == WINDOW
    mine = [p for p in prom.partitions if p.topic in (hot, cold)]
    assert {p.bytes_in_method for p in mine} == {MetricMethod.PROMETHEUS_TOPIC_BY_OFFSETS}

    # Consumer traffic: the hot topic's readers, from the brokers' BytesOutPerSec; nobody reads the cold one.
    consumed = received / producer.elapsed
    sent = _topic_rate(prom, hot, "bytes_out_per_sec")
    print(f"prometheus {hot} bytes out: consumed {consumed:9,.0f} B/s, measured {sent:9,.0f} B/s")
    assert abs(sent - consumed) <= TOLERANCE * consumed, (sent, consumed)
    assert _topic_rate(prom, cold, "bytes_out_per_sec") == 0.0


def test_the_plan_from_prometheus_spreads_the_hot_topic_within_network_in_and_lands_on_its_log_dirs(
        metrics_sandbox, measured, tmp_path):  # fmt: skip
    sb = metrics_sandbox
    out, _raw, _producer, _received = measured
    snap_path = out / "prometheus.json"
    before = {(p.topic, p.partition): p.replicas for p in load_snapshot(snap_path).partitions if p.topic in (HOT, COLD)}
    assert {r[0] for (t, _), r in before.items() if t == HOT} == {1}  # the hot topic starts on one broker
    plan_dir = tmp_path / "plan"
    manifest = plan_validate_and_approve(snap_path, plan_dir, "--goals", "network-in,topic-spread",
                                         "--network-tolerance", "0.1", "--max-moves-per-broker", "10")
    goals = {g["name"]: g for g in manifest["summary"]["goals"]}
    assert goals["network-in"]["before"]["reached"] is False and goals["network-in"]["reached"] is True, goals
    assert goals["topic-spread"]["reached"] is True, goals["topic-spread"]
    named = named_dirs(plan_dir)
    assert named and manifest["summary"]["log_dirs"]["unplaced"] == [], manifest["summary"]["log_dirs"]
    execute(sb, plan_dir)

    # What Kafka shows: the hot topic on every broker, each broker's produce traffic within 10 % of the mean by
    # the rates the producer was set to write, and every moved replica in the log dir the plan named.
    now = kafka_log_dirs(sb, "metrics-")
    holders = {tp: sorted(dirs) for tp, dirs in now.items() if tp[0] in (HOT, COLD)}
    assert sorted(b for (t, _), bs in holders.items() if t == HOT for b in bs) == [1, 2, 3, 4], holders
    load = {n.node_id: 0.0 for n in sb.nodes}
    for tp, brokers in holders.items():
        for b in brokers:
            load[b] += RATES[tp]
    mean = sum(load.values()) / len(load)
    assert all(abs(x - mean) <= 0.1 * mean for x in load.values()), load
    for tp, want in named.items():
        for b, path in want.items():
            assert now[tp].get(b) == path, (tp, b, path, now[tp])


def test_every_broker_has_its_log_dirs_in_the_snapshot(metrics_sandbox, tmp_path):
    sb = metrics_sandbox
    for n in sb.nodes:
        assert len(n.log_dirs) == 2 and len(set(n.log_dirs)) == 2, n.log_dirs
        props = (Path(n.directory) / "server.properties").read_text().splitlines()
        assert f"log.dirs={','.join(n.log_dirs)}" in props
        assert all(Path(d, "meta.properties").exists() for d in n.log_dirs), "Kafka formatted every log dir"
    _gather(sb, tmp_path / "dirs.json")
    snap = load_snapshot(tmp_path / "dirs.json")
    assert {b.id: sorted(d.path for d in b.log_dirs) for b in snap.brokers} == {
        n.node_id: sorted(n.log_dirs) for n in sb.nodes}
    assert all(b.capacity_bytes for b in snap.brokers)


def test_a_url_that_is_not_prometheus_is_one_line(metrics_sandbox, tmp_path):
    sb = metrics_sandbox
    # A malformed --metrics is refused before any connection (tests/cluster/test_prometheus_source.py).
    # A broker's exporter port answers HTTP, but it is not Prometheus' API.
    exporter = f"http://127.0.0.1:{sb.nodes[0].metrics_port}"
    wrong = cli("gather", "--bootstrap-server", sb.bootstrap_servers, "--cluster-id", "s", "--out", str(tmp_path / "b.json"),
                "--metrics", f"prometheus={exporter}")
    assert wrong.returncode == 2 and len(wrong.stderr.strip().splitlines()) == 1, wrong.stderr
    assert wrong.stderr.startswith(f"error: --metrics prometheus={exporter}: "), wrong.stderr
    assert not (tmp_path / "b.json").exists()
