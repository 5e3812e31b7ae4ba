"""ZooKeeper mode (Kafka 3.x): N brokers registered in one standalone ZooKeeper instead of a KRaft quorum.

Many 3.x clusters in production still run ZooKeeper. Kafka 3.x's broker (kafka_2.13) depends on
org.apache.zookeeper:zookeeper, so the classpath ``scripts/kafka-classpath.sh`` resolves from Maven
Central already holds the server: ``ZooKeeperServerMain`` runs from it, no ZooKeeper tarball needed.
Kafka 4.0 removed ZooKeeper mode, so a 4.x version is refused with one line.

Differences from KRaft that the sandbox handles here: no ``kafka-storage format`` (a ZooKeeper-mode
broker creates its log dir and takes the cluster id ZooKeeper holds), ``broker.id`` and
``zookeeper.connect`` instead of ``process.roles``/``node.id``/``controller.quorum.voters``, no
controller listener (one broker is elected controller through ZooKeeper), and another start-up line
in the log (``ZK_STARTED_MARK``). The ZooKeeper server is stopped by pid after the brokers.
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from kafka_rebalance.sandbox.cluster import (
    NODE_JVM_OPTS,
    SANDBOX_FILE,
    Node,
    Sandbox,
    SandboxError,
    SandboxMode,
    ZooKeeperServer,
    _is_our_process,
    _stop_pids,
    _tail,
    _write_json,
    broker_tuning,
    free_ports,
    log_config_opts,
    pid_alive,
    rack_of,
    start_node,
    wait_until_registered,
    write_log_configs,
)
from kafka_rebalance.sandbox.runtime import KafkaRuntime, quiet_kafka_client, resolve_runtime

ZK_CONFIG = "zookeeper.properties"
ZK_MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"
# One small standalone server: a few znodes, three clients.
ZK_JVM_OPTS = ("-Xms32m", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true")


def supports_zookeeper(version: str) -> bool:
    """ZooKeeper mode exists up to Kafka 3.9; 4.0 removed it (KIP-500's end)."""
    return int(version.split(".", 1)[0]) < 4


def zookeeper_properties(data_dir: Path, port: int) -> str:
    props = {
        "dataDir": data_dir,
        "clientPort": port,
        "clientPortAddress": "127.0.0.1",
        "tickTime": 2000,
        "maxClientCnxns": 0,
        # ZooKeeper 3.5+ starts an HTTP admin server on port 8080 by default: a clash with anything else there.
        "admin.enableServer": "false",
    }
    return "".join(f"{k}={v}\n" for k, v in props.items())


def broker_properties(node_id: int, port: int, zk_connect: str, data_dir: Path, rack: str | None, brokers: int,
                      auto_leader_rebalance: bool, extra: Mapping[str, str] | None = None) -> str:
    props: dict[str, object] = {
        "broker.id": node_id,
        "zookeeper.connect": zk_connect,
        "listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT",
        "log.dirs": str(data_dir),
        **broker_tuning(brokers, auto_leader_rebalance),
        # A killed broker's session expires within seconds (KRaft's broker.session.timeout.ms in the other mode).
        "zookeeper.session.timeout.ms": 9000,
    }
    if rack:
        props["broker.rack"] = rack
    props.update(extra or {})
    return "".join(f"{k}={v}\n" for k, v in props.items())


def start(runtime: KafkaRuntime, directory: Path, port: int, timeout: float) -> ZooKeeperServer:
    """Start the standalone ZooKeeper in its own session and wait until it accepts connections."""
    (directory / "logs").mkdir(parents=True)
    (directory / ZK_CONFIG).write_text(zookeeper_properties(directory / "data", port))
    log_file = directory / "logs" / "zookeeper.log"
    write_log_configs(directory, log_file)
    cmd = runtime.command(ZK_MAIN, [str(directory / ZK_CONFIG)], (*ZK_JVM_OPTS, *log_config_opts(directory)))
    with open(directory / "logs" / "stdout.log", "ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, cwd=directory)
    zk = ZooKeeperServer(proc.pid, port, str(directory), str(log_file))
    deadline = time.monotonic() + timeout
    while True:
        if not pid_alive(zk.pid):
            raise SandboxError(f"ZooKeeper exited during start-up; last lines of {log_file}:\n{_tail(log_file)}\n"
                               f"{_tail(directory / 'logs' / 'stdout.log', 5)}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return zk
        except OSError:
            pass
        if time.monotonic() > deadline:
            stop(zk, grace=5)
            raise SandboxError(f"ZooKeeper did not accept connections on 127.0.0.1:{port} within {timeout:.0f}s; "
                               f"last lines of {log_file}:\n{_tail(log_file)}")
        time.sleep(0.2)


def stop(zk: ZooKeeperServer, grace: float) -> list[int]:
    return _stop_pids([zk], grace, config=ZK_CONFIG)


def still_running(zk: ZooKeeperServer) -> list[int]:
    return [zk.pid] if pid_alive(zk.pid) and _is_our_process(zk.pid, zk.directory, ZK_CONFIG) else []


def _cluster_id(bootstrap: str) -> str:
    """The id the first broker wrote to ZooKeeper (/cluster/id): a ZooKeeper-mode cluster is not formatted with one."""
    from kafka.admin import KafkaAdminClient

    with quiet_kafka_client():
        client = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
        try:
            return str(client.describe_cluster()["cluster_id"])
        finally:
            client.close()


def up(directory: Path, brokers: int, racks: int, kafka_version: str, auto_leader_rebalance: bool, timeout: float,
       progress: Callable[[str], None], properties: Mapping[str, str] | None,
       sasl_plain_users: Mapping[str, str] | None) -> Sandbox:
    """``cluster.up(mode="zookeeper")``: a ZooKeeper, then ``brokers`` brokers; on any failure stop what was started."""
    if sasl_plain_users:
        raise SandboxError("SASL users: the sandbox's SASL listener is for KRaft mode only; start without --zookeeper")
    runtime = resolve_runtime(kafka_version)
    if not supports_zookeeper(runtime.version):
        raise SandboxError(f"--zookeeper: Kafka {runtime.version} has no ZooKeeper mode (removed in 4.0); "
                           "use a 3.x release such as 3.9.1, or KRaft mode")
    started = time.monotonic()
    directory.mkdir(parents=True, exist_ok=True)
    ports = free_ports(brokers + 1)
    progress(f"starting ZooKeeper (from Kafka {runtime.version}'s classpath) on 127.0.0.1:{ports[-1]}")
    zk = start(runtime, directory / "zookeeper", ports[-1], timeout)
    nodes: list[Node] = []
    try:
        layout = []
        for k, node_id in enumerate(range(1, brokers + 1)):
            node_dir = directory / f"node-{node_id}"
            (node_dir / "logs").mkdir(parents=True)
            rack = rack_of(k, racks)
            (node_dir / "server.properties").write_text(broker_properties(
                node_id, ports[k], zk.connect, node_dir / "data", rack, brokers, auto_leader_rebalance, properties))
            (node_dir / "server.properties").chmod(0o600)
            write_log_configs(node_dir, node_dir / "logs" / "server.log")
            layout.append((node_id, rack, ports[k], node_dir))
        for node_id, rack, port, node_dir in layout:
            pid = start_node(runtime, node_dir, NODE_JVM_OPTS)
            # No controller listener in ZooKeeper mode: controller_port 0.
            nodes.append(Node(node_id, rack, port, 0, pid, str(node_dir), str(node_dir / "logs" / "server.log")))
        sandbox = Sandbox(str(directory), runtime.version, "", auto_leader_rebalance, tuple(nodes),
                          time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), 0.0, mode=SandboxMode.ZOOKEEPER, zookeeper=zk)
        # Written before the wait, so that even an interrupted start can be brought down by pid.
        _write_json(directory / SANDBOX_FILE, sandbox.to_json())
        progress(f"started brokers {[n.node_id for n in nodes]} (pids {[n.pid for n in nodes]}); waiting for registration")
        wait_until_registered(nodes, timeout)
        sandbox = replace(sandbox, cluster_uuid=_cluster_id(sandbox.bootstrap_servers),
                          start_seconds=round(time.monotonic() - started, 1))
    except BaseException:
        _stop_pids(nodes, grace=10.0)
        stop(zk, grace=10.0)
        raise
    _write_json(directory / SANDBOX_FILE, sandbox.to_json())
    return sandbox
