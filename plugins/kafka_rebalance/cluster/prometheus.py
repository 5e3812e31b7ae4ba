"""``gather --metrics prometheus=URL``: traffic and log sizes from a Prometheus that scrapes the brokers' JMX exporter.

Kafka exports produce (BytesInPerSec) and consumer (BytesOutPerSec, replication excluded) traffic per
topic, not per partition, and each broker counts only what its leaders serve: a topic's rate is the
sum over brokers of PromQL ``rate()`` over the window. A partition's share of it is its share of the
log end offsets written in the same window (``delta()`` of Kafka's LogEndOffset gauge, which
retention never lowers), or an even share when none moved; each partition records which. The
metric names are those ``config/jmx-exporter.yml`` exports.

The HTTP call is the edge; ``split_traffic`` is the pure rule.
"""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, replace

from kafka_rebalance.cluster.admin import TP, ClusterError
from kafka_rebalance.snapshot import MetricMethod, MetricsSource, MetricsSourceKind, Partition, Snapshot
from kafka_rebalance.userinput import InputError

BYTES_IN = "kafka_server_brokertopicmetrics_bytesinpersec_total"
BYTES_OUT = "kafka_server_brokertopicmetrics_bytesoutpersec_total"
LOG_SIZE = "kafka_log_log_size"
LOG_END_OFFSET = "kafka_log_log_logendoffset"
# Without --rate-window, the window of the rates read from Prometheus (docs/KAFKA.md's suggested minute).
DEFAULT_PROMETHEUS_WINDOW_SECONDS = 60.0
METRICS_HELP = ("Read traffic from Prometheus instead of sampling: prometheus=URL (the brokers scraped with "
                "config/jmx-exporter.yml); rates over --rate-window, 60 s if 0")


@dataclass(frozen=True)
class PrometheusSource:
    url: str  # scheme://host[:port][/path], no credentials, no trailing slash


def parse_metrics_option(text: str) -> PrometheusSource:
    """``--metrics prometheus=URL``; one InputError line naming the value otherwise."""
    kind, sep, url = text.partition("=")
    if kind.strip() != "prometheus" or not sep:
        raise InputError(f"--metrics {text!r}: expected prometheus=URL, e.g. prometheus=http://127.0.0.1:9090")
    url = url.strip()
    try:
        parts = urllib.parse.urlsplit(url)
        host, _port = parts.hostname, parts.port  # a port that is not a number raises here
    except ValueError as exc:
        raise InputError(f"--metrics prometheus={url!r}: not a URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not host:
        raise InputError(f"--metrics prometheus={url!r}: expected an http:// or https:// URL with a host")
    if parts.username is not None or parts.password is not None:
        # The URL is recorded in the snapshot: credentials there would leak.
        raise InputError("--metrics prometheus=URL: give the URL without user:password (it is recorded in the snapshot)")
    if parts.query or parts.fragment:
        raise InputError(f"--metrics prometheus={url!r}: the URL takes no ?query or #fragment")
    return PrometheusSource(url.rstrip("/"))


@dataclass(frozen=True)
class TrafficReadings:
    """What Prometheus answered, by topic and partition; ``bytes_out`` None when no series was exported."""

    window_seconds: float
    bytes_in: Mapping[str, float]
    bytes_out: Mapping[str, float] | None
    offsets_written: Mapping[TP, float]
    sizes: Mapping[TP, int]


def _query(source: PrometheusSource, promql: str, timeout: float) -> list[tuple[dict[str, str], float]]:
    """One instant query through /api/v1/query: (labels, value) per series of the vector answered."""
    where = f"--metrics prometheus={source.url}"
    url = f"{source.url}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            body = resp.read()
    except urllib.error.HTTPError as exc:
        try:
            detail = json.loads(exc.read()).get("error") or exc.reason
        except (ValueError, AttributeError):
            detail = exc.reason
        raise ClusterError(f"{where}: query {promql!r} refused (HTTP {exc.code}: {detail})") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ClusterError(f"{where}: cannot reach Prometheus ({reason})") from None
    try:
        answer = json.loads(body)
        if answer.get("status") != "success":
            raise ClusterError(f"{where}: query {promql!r} failed: {answer.get('error', 'no error given')}")
        data = answer["data"]
        if data.get("resultType") != "vector":
            raise ClusterError(f"{where}: query {promql!r} answered a {data.get('resultType')}, not a vector")
        return [(dict(r["metric"]), float(r["value"][1])) for r in data["result"]]
    except (ValueError, KeyError, TypeError, AttributeError, IndexError):
        raise ClusterError(f"{where}: not a Prometheus HTTP API answer (is the URL Prometheus itself?)") from None


def _by_topic(rows: list[tuple[dict[str, str], float]]) -> dict[str, float]:
    return {m["topic"]: v for m, v in rows if "topic" in m and math.isfinite(v)}


def _by_partition(rows: list[tuple[dict[str, str], float]]) -> dict[TP, float]:
    out: dict[TP, float] = {}
    for m, v in rows:
        if "topic" in m and m.get("partition", "").isdigit() and math.isfinite(v):
            out[TP(m["topic"], int(m["partition"]))] = v
    return out


def read_traffic(source: PrometheusSource, window_seconds: float, timeout: float = 30.0) -> TrafficReadings:
    """Per-topic bytes in and out over the window, offsets written and log sizes per partition, from Prometheus."""
    window = f"{round(window_seconds * 1000)}ms"
    bytes_in = _query(source, f'sum by (topic) (rate({BYTES_IN}{{topic!=""}}[{window}]))', timeout)
    if not bytes_in:
        raise ClusterError(f"--metrics prometheus={source.url}: no {BYTES_IN} series over the last {window_seconds:g} s; "
                           "scrape the brokers with the JMX exporter and config/jmx-exporter.yml (or widen --rate-window)")
    bytes_out = _query(source, f'sum by (topic) (rate({BYTES_OUT}{{topic!=""}}[{window}]))', timeout)
    offsets = _query(source, f"max by (topic, partition) (delta({LOG_END_OFFSET}[{window}]))", timeout)
    sizes = _query(source, f"max by (topic, partition) ({LOG_SIZE})", timeout)
    return TrafficReadings(window_seconds, _by_topic(bytes_in), _by_topic(bytes_out) if bytes_out else None,
                           _by_partition(offsets), {tp: int(v) for tp, v in _by_partition(sizes).items() if v >= 0})


def split_traffic(snapshot: Snapshot, readings: TrafficReadings, url: str) -> Snapshot:
    """Each partition's bytes in and out: its topic's rate split by its share of the offsets written (evenly when
    none moved); sizes from Prometheus only where the Admin API reported none. The snapshot records each method."""
    by_topic: dict[str, list[Partition]] = {}
    for p in snapshot.partitions:
        by_topic.setdefault(p.topic, []).append(p)
    figures: dict[TP, Partition] = {}
    for topic, parts in by_topic.items():
        # Negative deltas (a truncated log) move nothing forward: they count as none.
        written = [max(0.0, readings.offsets_written.get(TP(topic, p.partition), 0.0)) for p in parts]
        total = sum(written)
        if total > 0:
            shares, method = [w / total for w in written], MetricMethod.PROMETHEUS_TOPIC_BY_OFFSETS
        else:
            shares, method = [1 / len(parts)] * len(parts), MetricMethod.PROMETHEUS_TOPIC_EVENLY
        # No series for a topic: its meter was never created on any broker, i.e. nothing was produced or fetched.
        rate_in = readings.bytes_in.get(topic, 0.0)
        rate_out = None if readings.bytes_out is None else readings.bytes_out.get(topic, 0.0)
        for p, share in zip(parts, shares):
            tp = TP(topic, p.partition)
            size, size_method = p.size_bytes, p.size_method
            if size is None and tp in readings.sizes:
                size, size_method = readings.sizes[tp], MetricMethod.PROMETHEUS_PARTITION
            figures[tp] = replace(
                p, bytes_in_per_sec=rate_in * share, bytes_in_method=method,
                bytes_out_per_sec=None if rate_out is None else rate_out * share,
                bytes_out_method=None if rate_out is None else method, size_bytes=size, size_method=size_method)
    bytes_out = ("prometheus" if readings.bytes_out is not None else
                 f"not exported: no {BYTES_OUT} series (the exporter does not export BytesOutPerSec, "
                 "or no consumer fetched since the brokers started)")
    return replace(snapshot, partitions=tuple(figures[TP(p.topic, p.partition)] for p in snapshot.partitions),
                   rate_window_seconds=readings.window_seconds,
                   metrics_source=MetricsSource(MetricsSourceKind.PROMETHEUS, bytes_out, url))
