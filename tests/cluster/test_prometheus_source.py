"""`gather --metrics prometheus=URL`: the option's refusals, and the rule that splits a topic's rate over its partitions.

The HTTP side runs against a real Prometheus in tests/real_kafka/test_metrics_on_real_kafka.py; here
the readings are written by hand and every expected figure is worked out in the test.
"""

from __future__ import annotations

import pytest

from kafka_rebalance.cluster.admin import TP
from kafka_rebalance.cluster.prometheus import PrometheusSource, TrafficReadings, parse_metrics_option, split_traffic
from kafka_rebalance.snapshot import Broker, MetricMethod, MetricsSourceKind, Partition, Snapshot
from kafka_rebalance.userinput import InputError


def test_a_prometheus_url_is_taken_without_its_trailing_slash():
    assert parse_metrics_option("prometheus=http://127.0.0.1:9090/") == PrometheusSource("http://127.0.0.1:9090")
    assert parse_metrics_option("prometheus=https://prom.example/prefix") == PrometheusSource("https://prom.example/prefix")


@pytest.mark.parametrize(("value", "message"), [
    ("http://127.0.0.1:9090", "--metrics 'http://127.0.0.1:9090': expected prometheus=URL, e.g. prometheus=http://127.0.0.1:9090"),
    ("graphite=http://g", "--metrics 'graphite=http://g': expected prometheus=URL"),
    ("prometheus=ftp://h", "--metrics prometheus='ftp://h': expected an http:// or https:// URL with a host"),
    ("prometheus=http://", "--metrics prometheus='http://': expected an http:// or https:// URL with a host"),
    ("prometheus=http://h:port", "--metrics prometheus='http://h:port': not a URL"),
    ("prometheus=http://u:secret@h:9090", "--metrics prometheus=URL: give the URL without user:password"),
    ("prometheus=http://h:9090/?x=1", "--metrics prometheus='http://h:9090/?x=1': the URL takes no ?query"),
])  # fmt: skip
def test_a_bad_metrics_option_is_one_line_naming_it(value, message):
    with pytest.raises(InputError) as err:
        parse_metrics_option(value)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)
    assert "secret" not in str(err.value)


SNAP = Snapshot("c", (Broker(1), Broker(2)), (
    Partition("hot", 0, (1,), 1, (1,), size_bytes=100),
    Partition("hot", 1, (2,), 2, (2,), size_bytes=None),
    Partition("hot", 2, (1,), 1, (1,), size_bytes=50),
    Partition("idle", 0, (2,), 2, (2,), size_bytes=10),
))  # fmt: skip


def test_a_topics_rate_is_split_by_the_offsets_each_partition_wrote():
    readings = TrafficReadings(
        window_seconds=30.0, bytes_in={"hot": 900.0}, bytes_out={"hot": 300.0},
        offsets_written={TP("hot", 0): 60.0, TP("hot", 1): 30.0, TP("hot", 2): -5.0},  # -5: a truncated log
        sizes={TP("hot", 0): 999, TP("hot", 1): 77})
    snap = split_traffic(SNAP, readings, "http://p:9090")
    got = {p.name: (p.bytes_in_per_sec, p.bytes_out_per_sec, p.bytes_in_method, p.size_bytes, p.size_method)
           for p in snap.partitions}
    by_offsets, evenly = MetricMethod.PROMETHEUS_TOPIC_BY_OFFSETS, MetricMethod.PROMETHEUS_TOPIC_EVENLY
    assert got == {
        # 60 of the 90 offsets written; the Admin API's size stays, Prometheus' fills only a missing one.
        "hot-0": (600.0, 200.0, by_offsets, 100, None),
        "hot-1": (300.0, 100.0, by_offsets, 77, MetricMethod.PROMETHEUS_PARTITION),
        "hot-2": (0.0, 0.0, by_offsets, 50, None),
        # No series at all for the topic: nothing produced or fetched, split evenly.
        "idle-0": (0.0, 0.0, evenly, 10, None),
    }
    assert snap.rate_window_seconds == 30.0
    assert snap.metrics_source is not None and snap.metrics_source.kind is MetricsSourceKind.PROMETHEUS
    assert (snap.metrics_source.url, snap.metrics_source.bytes_out) == ("http://p:9090", "prometheus")


def test_without_offsets_the_split_is_even_and_unexported_consumer_traffic_is_said_so():
    readings = TrafficReadings(window_seconds=60.0, bytes_in={"hot": 90.0}, bytes_out=None, offsets_written={}, sizes={})
    snap = split_traffic(SNAP, readings, "http://p:9090")
    hot = [p for p in snap.partitions if p.topic == "hot"]
    assert [(p.bytes_in_per_sec, p.bytes_in_method) for p in hot] == [(30.0, MetricMethod.PROMETHEUS_TOPIC_EVENLY)] * 3
    assert all(p.bytes_out_per_sec is None and p.bytes_out_method is None for p in snap.partitions)
    assert snap.metrics_source is not None and snap.metrics_source.bytes_out.startswith(
        "not exported: no kafka_server_brokertopicmetrics_bytesoutpersec_total series")
