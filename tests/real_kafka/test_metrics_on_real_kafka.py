"""`sandbox up --log-dirs 2 --metrics` and `gather --metrics prometheus=URL`, on real Kafka and a real Prometheus.

One sandbox for the module (2 nodes, 2 log dirs each, every broker with the JMX exporter agent and
Debian's Prometheus scraping them every second). A producer writes one topic ten times faster than
another at rates the test sets, and a consumer reads the hot topic as it is written; sampling
(`--rate-window`) and Prometheus (`--metrics`) must both measure the produce rates within ±15 % of
what the producer wrote, and Prometheus the consumer's rate too.
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
from tests.support.kafka import cli

pytestmark = [pytest.mark.kafka, pytest.mark.slow]
KIB = 1024
WINDOW = 15.0  # long enough that a producer slowed by a loaded machine still averages out


@pytest.fixture(scope="module")
def metrics_sandbox(tmp_path_factory):
    """Started and stopped through the CLI, as an operator would (stopped by the pids sandbox.json records)."""
    from kafka_rebalance.sandbox import cluster

    directory = tmp_path_factory.mktemp("metrics") / "sandbox"
    up = cli("sandbox", "up", "--dir", str(directory), "--brokers", "2", "--log-dirs", "2", "--metrics")
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


def test_sampling_and_prometheus_measure_the_produce_rates_written(metrics_sandbox, tmp_path):
    sb = metrics_sandbox
    assert sb.metrics is not None
    hot, cold = "metrics-hot", "metrics-cold"
    _create(sb, hot, {0: [1], 1: [2]})
    _create(sb, cold, {0: [1]})
    # The hot topic at 10x the cold one, and its two partitions at 2:1 (Prometheus only knows the topic's rate).
    rates = {(hot, 0): 200.0 * KIB, (hot, 1): 100.0 * KIB, (cold, 0): 30.0 * KIB}
    consumer = TailingConsumer(sb.bootstrap_servers, hot)
    producer = PacedProducer(sb.bootstrap_servers, rates)
    producer.start()
    try:
        time.sleep(2)  # the producer is steady before the first sample
        _gather(sb, tmp_path / "sampled.json", "--rate-window", f"{WINDOW:g}")
        raw = _gather(sb, tmp_path / "prometheus.json", "--rate-window", f"{WINDOW:g}",
                      "--metrics", f"prometheus={sb.metrics.prometheus_url}")
    finally:
        producer.stop()
        received = consumer.stop()
    sampled, prom = load_snapshot(tmp_path / "sampled.json"), load_snapshot(tmp_path / "prometheus.json")

    written = {tp: producer.achieved(tp) for tp in rates}
    for tp, rate in rates.items():
        # What was written is the reference; a producer far off its pace would say the machine is overloaded.
        assert abs(written[tp] - rate) <= 0.05 * rate, f"the producer wrote {tp} at {written[tp]:,.0f} B/s, not {rate:,.0f}"
    per_topic = {t: sum(w for (topic, _), w in written.items() if topic == t) for t in (hot, cold)}
    print()
    for name, snap in (("sampling", sampled), ("prometheus", prom)):
        parts = {(p.topic, p.partition): p for p in snap.partitions}
        for tp in rates:
            measured = parts[tp].bytes_in_per_sec
            print(f"{name:10s} {tp[0]}-{tp[1]}: written {written[tp]:9,.0f} B/s, measured {measured or 0:9,.0f} B/s")
            assert measured is not None and abs(measured - written[tp]) <= TOLERANCE * written[tp], (name, tp, measured)
        for topic, total in per_topic.items():
            assert abs(_topic_rate(snap, topic) - total) <= TOLERANCE * total, (name, topic)

    # Each snapshot says where its figures came from.
    assert sampled.metrics_source is not None and sampled.metrics_source.kind is MetricsSourceKind.SAMPLING
    assert {parts.bytes_in_method for parts in sampled.partitions} == {MetricMethod.SAMPLED}
    assert all(p.bytes_out_per_sec is None for p in sampled.partitions)
    assert raw["metrics"]["source"] == "prometheus" and raw["metrics"]["url"] == sb.metrics.prometheus_url
    assert raw["metrics"]["bytes_out"] == "prometheus" and raw["rate_window_seconds"] == WINDOW
    mine = [p for p in prom.partitions if p.topic in (hot, cold)]
    assert {p.bytes_in_method for p in mine} == {MetricMethod.PROMETHEUS_TOPIC_BY_OFFSETS}

    # Consumer traffic: the hot topic's readers, from the brokers' BytesOutPerSec; nobody reads the cold one.
    consumed = received / producer.elapsed
    out = _topic_rate(prom, hot, "bytes_out_per_sec")
    print(f"prometheus {hot} bytes out: consumed {consumed:9,.0f} B/s, measured {out:9,.0f} B/s")
    assert abs(out - consumed) <= TOLERANCE * consumed, (out, consumed)
    assert _topic_rate(prom, cold, "bytes_out_per_sec") == 0.0


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
