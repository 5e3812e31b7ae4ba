"""`kafka-rebalance sandbox`: a real KRaft node started, reported, refused and stopped by pid only."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_rebalance.sandbox.cluster import Node, Sandbox, SandboxMode, ZooKeeperServer, pid_alive
from kafka_rebalance.sandbox.seed import SeedSpec, skewed_assignment
from tests.support.kafka import cli

pytestmark = pytest.mark.slow


def test_up_status_down_stops_exactly_its_own_processes(tmp_path):
    directory = tmp_path / "one"
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        up = cli("sandbox", "up", "--dir", str(directory), "--brokers", "1", "--racks", "1")
        assert up.returncode == 0, up.stderr[-2000:]
        info = json.loads((directory / "sandbox.json").read_text())
        [node] = info["nodes"]
        assert up.stdout.strip() == f"127.0.0.1:{node['port']}" == info["bootstrap_servers"]
        assert info["kafka_version"] == "4.1.1" and info["racks"] == {"1": "rack-1"} and pid_alive(node["pid"])
        assert "Kafka Server started" in Path(node["log_file"]).read_text()

        status = cli("sandbox", "status", "--dir", str(directory), "--json")
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["status"] == [{"node_id": 1, "alive": True, "registered": True}]

        again = cli("sandbox", "up", "--dir", str(directory))
        assert again.returncode == 2 and "a sandbox already lives here" in again.stderr

        # The node reports the host's filesystem as its disk: the limit plans need lies above what the host holds,
        # and `up` names it where the default would not do.
        limit = cli("sandbox", "disk-limit", "--dir", str(directory))
        disk = shutil.disk_usage(directory)
        assert limit.returncode == 0, limit.stderr
        assert float(limit.stdout) >= max(0.85, 1 - disk.free / disk.total + 0.03)
        assert ("note: every broker reports this host's filesystem" in up.stderr) == (float(limit.stdout) > 0.85)

        down = cli("sandbox", "down", "--dir", str(directory))
        assert down.returncode == 0, down.stderr
        assert not pid_alive(node["pid"]) and not directory.exists()
        gone = cli("sandbox", "disk-limit", "--dir", str(directory))
        assert gone.returncode == 2 and len(gone.stderr.strip().splitlines()) == 1 and str(directory) in gone.stderr
        assert bystander.poll() is None, "down must never touch another process"
    finally:
        bystander.kill()
        bystander.wait()


def test_a_node_that_cannot_start_is_reported_with_its_log_and_stopped(tmp_path):
    import socket

    directory = tmp_path / "bad"
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port, cport = taken.getsockname()[1], free.getsockname()[1]
    free.close()
    try:
        # The broker's listener port is held by someone else: the node exits at start-up.
        r = cli("sandbox", "up", "--dir", str(directory), "--brokers", "1", "--racks", "0", "--timeout", "90",
                "--override", f"listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{cport}",
                "--override", f"advertised.listeners=PLAINTEXT://127.0.0.1:{port}",
                "--override", f"controller.quorum.voters=1@127.0.0.1:{cport}")
    finally:
        taken.close()
    assert r.returncode == 2
    assert "node 1 exited during start-up" in r.stderr and "Address already in use" in r.stderr, r.stderr[-3000:]
    assert "Traceback" not in r.stderr
    pid = json.loads((directory / "sandbox.json").read_text())["nodes"][0]["pid"]
    assert not pid_alive(pid)


def test_a_config_kafka_refuses_is_one_line(tmp_path):
    r = cli("sandbox", "up", "--dir", str(tmp_path / "bad"), "--brokers", "1", "--override", "num.network.threads=0")
    assert r.returncode == 2
    assert "error: formatting node 1 failed: ConfigException: Invalid value 0 for configuration num.network.threads" in r.stderr
    assert "Traceback" not in r.stderr and "\tat " not in r.stderr


@pytest.mark.parametrize("args, message", [
    (["--kafka-version", "4.1"], "--kafka-version: '4.1' is not a Kafka release"),
    (["--brokers", "0"], "--brokers"),
    (["--override", "novalue"], "--override 'novalue': expected KEY=VALUE"),
    # The default release is 4.x, which has no ZooKeeper mode: refused before anything starts.
    (["--zookeeper"], "--zookeeper: Kafka 4.1.1 has no ZooKeeper mode (removed in 4.0)"),
])
def test_bad_up_arguments_get_one_line(tmp_path, args, message):
    r = cli("sandbox", "up", "--dir", str(tmp_path / "x"), *args)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr


def test_status_and_seed_without_a_sandbox_say_how_to_start_one(tmp_path):
    for command in ("status", "seed", "down"):
        r = cli("sandbox", command, "--dir", str(tmp_path / "none"))
        assert r.returncode == 2
        assert "no sandbox here" in r.stderr and "sandbox up" in r.stderr, r.stderr


def test_seed_layout_is_skewed_rack_safe_and_reproducible():
    racks = {1: "rack-1", 2: "rack-2", 3: "rack-3", 4: "rack-1", 5: "rack-2", 6: "rack-3"}
    spec = SeedSpec(topics=4, partitions=30, skew=0.8, seed=3, replication_factor=3, topic_prefix="s")
    created, reorder = skewed_assignment(list(racks), racks, spec)
    assert (created, reorder) == skewed_assignment(list(racks), racks, spec)
    replicas = [r for t in created.values() for r in t.values()]
    assert all(len(r) == 3 and len(set(r)) == 3 and len({racks[b] for b in r}) == 3 for r in replicas)
    per_broker = {b: sum(b in r for r in replicas) for b in racks}
    assert max(per_broker.values()) >= 2 * min(per_broker.values())  # deliberately unbalanced
    preferred = {b: sum(r[0] == b for r in replicas) for b in racks}
    assert preferred[1] > len(replicas) / 2  # preferred leaders packed onto the first broker
    # Reordered partitions: same replica set, another first replica.
    for topic, parts in reorder.items():
        for p, order in parts.items():
            assert sorted(order) == sorted(created[topic][p]) and order[0] != created[topic][p][0]


def test_a_zookeeper_sandbox_description_reads_back_and_an_older_one_is_kraft():
    node = Node(1, "rack-1", 9092, 0, 123, "/s/node-1", "/s/node-1/logs/server.log")
    zk = ZooKeeperServer(456, 2181, "/s/zookeeper", "/s/zookeeper/logs/zookeeper.log")
    sandbox = Sandbox("/s", "3.7.2", "abc", False, (node,), "2026-01-01T00:00:00Z", 9.5, mode=SandboxMode.ZOOKEEPER, zookeeper=zk)
    assert Sandbox.from_json(json.loads(json.dumps(sandbox.to_json())), "sandbox.json") == sandbox
    older = {k: v for k, v in sandbox.to_json().items() if k not in ("mode", "zookeeper")}
    read = Sandbox.from_json(older, "sandbox.json")
    assert read.mode is SandboxMode.KRAFT and read.zookeeper is None
