"""`sandbox up --log-dirs/--metrics`: refusals before anything starts, and sandbox.json files written before them.

The sandbox itself, with its exporters and Prometheus, runs in tests/real_kafka/test_metrics_on_real_kafka.py.
"""

from __future__ import annotations

import pytest

from kafka_rebalance.sandbox.cluster import Node, Sandbox, SandboxError, up
from kafka_rebalance.sandbox.metrics import SandboxMetrics, prometheus_config


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"log_dirs": 0}, "--log-dirs: 0 is outside 1..8"),
    ({"log_dirs": 2, "properties": {"log.dirs": "/a,/b"}},
     "--log-dirs and --override log.dirs=... both set the log dirs; give one of them"),
])  # fmt: skip
def test_bad_log_dirs_are_refused_before_anything_starts(tmp_path, kwargs, message):
    with pytest.raises(SandboxError) as err:
        up(tmp_path / "x", brokers=1, **kwargs)
    assert str(err.value) == message and not (tmp_path / "x").exists()


OLD = {"directory": "/s", "kafka_version": "4.1.1", "cluster_uuid": "u", "auto_leader_rebalance": False,
       "started_at": "T", "start_seconds": 1.0,
       "nodes": [{"node_id": 1, "rack": None, "port": 1, "controller_port": 2, "pid": 3, "directory": "/s/node-1",
                  "log_file": "/s/node-1/logs/server.log"}]}  # fmt: skip


def test_a_sandbox_json_from_before_log_dirs_and_metrics_still_reads():
    sb = Sandbox.from_json(OLD, "sandbox.json")
    assert sb.nodes == (Node(1, None, 1, 2, 3, "/s/node-1", "/s/node-1/logs/server.log"),) and sb.metrics is None


def test_log_dirs_and_metrics_survive_sandbox_json():
    metrics = SandboxMetrics("/j.jar", "/c.yml", 9, 9090, "/s/prometheus")
    sb = Sandbox.from_json(OLD, "x")
    node = Node(1, None, 1, 2, 3, "/s/node-1", "/s/node-1/logs/server.log", None, ("/s/d1", "/s/d2"), 7001)
    sb = Sandbox(sb.directory, sb.kafka_version, sb.cluster_uuid, False, (node,), "T", 1.0, metrics=metrics)
    data = sb.to_json()
    assert data["prometheus_url"] == "http://127.0.0.1:9090"
    assert Sandbox.from_json(data, "x") == sb


def test_prometheus_scrapes_every_exporter_each_second_labelled_by_broker():
    assert prometheus_config([(1, 7001), (2, 7002)]) == (
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: kafka\n    static_configs:\n"
        "      - targets: ['127.0.0.1:7001']\n        labels: {broker: '1'}\n"
        "      - targets: ['127.0.0.1:7002']\n        labels: {broker: '2'}\n")
