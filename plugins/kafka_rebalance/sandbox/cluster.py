"""A real local KRaft cluster: N combined broker+controller nodes of Apache Kafka on 127.0.0.1.

(``mode="zookeeper"``: N brokers and one ZooKeeper server instead, for Kafka 3.x; see sandbox/zookeeper.py.)

``up`` formats and starts the nodes (static quorum, free ports, ``broker.rack`` spread over the
racks, small heaps so that 3 nodes, Spark and Airflow fit on 2 cores), waits until every broker is
registered and unfenced, and records everything in ``DIR/sandbox.json``. ``down`` stops exactly
the processes ``up`` started (by pid; SIGTERM for a clean shutdown first, SIGKILL after a grace
period), then removes DIR. Nothing here ever looks a process up by name.
"""

from __future__ import annotations

import base64
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from enum import Enum
from pathlib import Path

from kafka_rebalance.atomic import atomic_write
from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.sandbox import metrics as sandbox_metrics
from kafka_rebalance.sandbox.runtime import DEFAULT_KAFKA_VERSION, KafkaRuntime, java_error_line, quiet_kafka_client, resolve_runtime
from kafka_rebalance.userinput import InputError, read_json

SANDBOX_FILE = "sandbox.json"
MAX_LOG_DIRS = 8
STARTED_MARK = "Kafka Server started"
# What a ZooKeeper-mode broker (Kafka 3.x, kafka.server.KafkaServer) logs instead, in our log layout.
ZK_STARTED_MARK = "] started (kafka.server.KafkaServer)"


class SandboxMode(str, Enum):
    KRAFT = "kraft"
    ZOOKEEPER = "zookeeper"  # Kafka 3.x only

# Per node: the heap the bin/ scripts would give (1 GiB) is more than 3 nodes on a small machine
# need; C1-only JIT and the serial GC keep CPU for the replication the tests measure.
NODE_JVM_OPTS = ("-Xms128m", "-Xmx448m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                 "-XX:+ExitOnOutOfMemoryError", "-Djava.awt.headless=true")


class SandboxError(RebalanceError):
    """The sandbox could not be started, read or stopped; the message says which node and why."""


class PortTaken(SandboxError):
    """A node could not bind a port found free a moment before: another process took it in between."""


# What Kafka logs when a listener's port is taken ("Socket server failed to bind to 127.0.0.1:N: Address already in use").
_BIND_FAILED = "Address already in use"
PORT_ATTEMPTS = 3  # starts with fresh ports before `up` gives up on a port race


@dataclass(frozen=True)
class Node:
    node_id: int
    rack: str | None
    port: int
    controller_port: int
    pid: int
    directory: str
    log_file: str
    sasl_port: int | None = None  # a SASL_PLAINTEXT (PLAIN) listener beside PLAINTEXT, when `up` was given users
    log_dirs: tuple[str, ...] = ()  # its log.dirs, in order (empty: recorded before the field existed)
    metrics_port: int | None = None  # where its JMX exporter agent serves /metrics (`up --metrics`)

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"


@dataclass(frozen=True)
class ZooKeeperServer:
    """The standalone ZooKeeper a ZooKeeper-mode sandbox runs (stopped by pid after the brokers)."""

    pid: int
    port: int
    directory: str
    log_file: str

    @property
    def connect(self) -> str:
        return f"127.0.0.1:{self.port}"


@dataclass(frozen=True)
class Sandbox:
    directory: str
    kafka_version: str
    cluster_uuid: str
    auto_leader_rebalance: bool
    nodes: tuple[Node, ...]
    started_at: str
    start_seconds: float
    java_opts: tuple[str, ...] = field(default=NODE_JVM_OPTS)
    metrics: sandbox_metrics.SandboxMetrics | None = None  # `up --metrics`: the exporter and Prometheus
    mode: SandboxMode = SandboxMode.KRAFT
    zookeeper: ZooKeeperServer | None = None

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(n.bootstrap for n in self.nodes)

    def node(self, node_id: int) -> Node:
        for n in self.nodes:
            if n.node_id == node_id:
                return n
        raise SandboxError(f"{self.directory}: no node {node_id} (nodes: {[n.node_id for n in self.nodes]})")

    def to_json(self) -> dict:
        out = asdict(self)
        out["bootstrap_servers"] = self.bootstrap_servers
        out["node_ids"] = [n.node_id for n in self.nodes]
        out["racks"] = {str(n.node_id): n.rack for n in self.nodes}
        if self.metrics is not None:
            out["prometheus_url"] = self.metrics.prometheus_url
        return out

    @staticmethod
    def from_json(data: dict, source: str) -> Sandbox:
        try:
            optional = {"sasl_port", "log_dirs", "metrics_port"}
            nodes = tuple(replace(Node(**{k: n[k] for k in Node.__dataclass_fields__ if k in n or k not in optional}),
                                  log_dirs=tuple(n.get("log_dirs") or ()))
                          for n in data["nodes"])
            metrics = data.get("metrics")
            return Sandbox(directory=data["directory"], kafka_version=data["kafka_version"],
                           cluster_uuid=data["cluster_uuid"], auto_leader_rebalance=bool(data["auto_leader_rebalance"]),
                           nodes=nodes, started_at=data["started_at"], start_seconds=float(data["start_seconds"]),
                           java_opts=tuple(data.get("java_opts") or NODE_JVM_OPTS),
                           metrics=sandbox_metrics.SandboxMetrics(**metrics) if metrics else None,
                           mode=SandboxMode(data.get("mode", "kraft")),
                           zookeeper=ZooKeeperServer(**data["zookeeper"]) if data.get("zookeeper") else None)
        except (KeyError, TypeError, ValueError) as exc:
            raise SandboxError(f"{source}: not a sandbox description ({type(exc).__name__}: {exc})") from None


# Listeners bind below the kernel's ephemeral range: a port the kernel handed out and we released is soon the local
# port of some client's outgoing connection (Kafka clients, Airflow, Spark on the same host), and the node that then
# binds it dies with "Address already in use" (seen with three test workers). Ports under the range are only ever
# taken by an explicit bind, which the probe below sees.
_PORT_FLOOR = 10000


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = (int(x) for x in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default; elsewhere only a starting point for the probe
    return low, high


def free_ports(count: int) -> list[int]:
    """``count`` distinct ports free on 127.0.0.1 now, below the ephemeral range where it leaves room (else the
    kernel's own choice); held open together while probing so that they are distinct."""
    low, _ = _ephemeral_range()
    candidates = list(range(_PORT_FLOOR, low)) if low - _PORT_FLOOR >= 1000 else []
    random.SystemRandom().shuffle(candidates)  # two sandboxes starting at once rarely probe the same ports
    socks: list[socket.socket] = []
    try:
        for port in candidates:
            if len(socks) == count:
                break
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                s.close()
                continue
            socks.append(s)
        while len(socks) < count:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def kafka_uuid(draw: Callable[[], bytes] = lambda: uuid.uuid4().bytes) -> str:
    """A Kafka cluster id: 16 random bytes, URL-safe base64 without padding (what StorageTool's random-uuid prints).

    Like Kafka's own ``Uuid.randomUuid()``, an id starting with ``-`` is drawn again: one in 64 ids
    would otherwise be read as an option by ``kafka-storage format -t <id>`` and the sandbox would not start.
    """
    while True:
        text = base64.urlsafe_b64encode(draw()).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def rack_of(index: int, racks: int) -> str | None:
    return None if racks == 0 else f"rack-{index % racks + 1}"


def sasl_plain_properties(port: int, controller_port: int, sasl_port: int, users: Mapping[str, str]) -> dict[str, str]:
    """A SASL_PLAINTEXT listener with PLAIN and these users beside PLAINTEXT (which brokers keep using among themselves)."""
    accounts = " ".join(f'user_{u}="{p}"' for u, p in users.items())
    return {
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config":
            f"org.apache.kafka.common.security.plain.PlainLoginModule required {accounts};",
    }


def server_properties(node_id: int, port: int, controller_port: int, voters: str, data_dir: Path, rack: str | None,
                      brokers: int, auto_leader_rebalance: bool, extra: dict[str, str] | None = None) -> str:
    props: dict[str, object] = {
        "process.roles": "broker,controller",
        "node.id": node_id,
        # A static quorum: every release from 3.7 to 4.x accepts it (controller.quorum.bootstrap.servers,
        # the dynamic quorum, exists only from 3.9 on).
        "controller.quorum.voters": voters,
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "inter.broker.listener.name": "PLAINTEXT",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": str(data_dir),
        **broker_tuning(brokers, auto_leader_rebalance),
        # A killed broker is fenced within seconds, as in production defaults.
        "broker.session.timeout.ms": 9000,
        "broker.heartbeat.interval.ms": 2000,
    }
    if rack:
        props["broker.rack"] = rack
    props.update(extra or {})
    return "".join(f"{k}={v}\n" for k, v in props.items())


def broker_tuning(brokers: int, auto_leader_rebalance: bool) -> dict[str, object]:
    """What every sandbox broker sets, KRaft or ZooKeeper mode: internal topics' RF and a small machine's threads."""
    rf = min(3, brokers)
    return {
        "offsets.topic.replication.factor": rf,
        "transaction.state.log.replication.factor": rf,
        "transaction.state.log.min.isr": min(2, rf),
        "share.coordinator.state.topic.replication.factor": rf,
        "share.coordinator.state.topic.min.isr": min(2, rf),
        "auto.leader.rebalance.enable": str(auto_leader_rebalance).lower(),
        # Small machine: few threads, small buffers.
        "num.network.threads": 2,
        "num.io.threads": 2,
        "background.threads": 2,
        "num.replica.fetchers": 1,
        "num.recovery.threads.per.data.dir": 1,
        "log.cleaner.threads": 1,
        "log.cleaner.dedupe.buffer.size": 8 * 1024 * 1024,
        "group.initial.rebalance.delay.ms": 0,
        "log.segment.bytes": 64 * 1024 * 1024,
    }


def log4j1_properties(log_file: Path) -> str:
    """The same file and layout for log4j 1 (reload4j): Kafka 3.x ships slf4j-reload4j beside our log4j2
    binding, and SLF4J takes whichever binding comes first on the classpath."""
    return (
        "log4j.rootLogger=INFO, F\n"
        "log4j.appender.F=org.apache.log4j.FileAppender\n"
        f"log4j.appender.F.File={log_file}\n"
        "log4j.appender.F.layout=org.apache.log4j.PatternLayout\n"
        "log4j.appender.F.layout.ConversionPattern=[%d] %p %m (%c)%n\n"
        "log4j.logger.state.change.logger=WARN\nlog4j.logger.kafka.request.logger=WARN\n"
    )


def log_config_opts(directory: Path) -> tuple[str, ...]:
    """JVM options naming both log configurations of a process directory (log4j2 for 4.x, log4j 1 for 3.x)."""
    return (f"-Dlog4j2.configurationFile={directory / 'log4j2.properties'}",
            f"-Dlog4j.configuration=file:{directory / 'log4j.properties'}")


def write_log_configs(directory: Path, log_file: Path) -> None:
    (directory / "log4j2.properties").write_text(log4j_properties(log_file))
    (directory / "log4j.properties").write_text(log4j1_properties(log_file))


def log4j_properties(log_file: Path) -> str:
    return (
        "status = warn\n"
        "appender.f.type = File\nappender.f.name = F\n"
        f"appender.f.fileName = {log_file}\n"
        "appender.f.layout.type = PatternLayout\nappender.f.layout.pattern = [%d] %p %m (%c)%n\n"
        "rootLogger.level = INFO\nrootLogger.appenderRef.f.ref = F\n"
        # The state-change and request loggers are the chatty ones.
        "logger.sc.name = state.change.logger\nlogger.sc.level = WARN\n"
        "logger.req.name = kafka.request.logger\nlogger.req.level = WARN\n"
    )


def read_sandbox(directory: Path) -> Sandbox:
    path = Path(directory) / SANDBOX_FILE
    if not path.exists():
        raise SandboxError(f"{path}: no sandbox here (start one with `kafka-rebalance sandbox up --dir {directory}`)")
    try:
        data = read_json(path, "sandbox description")
    except InputError as exc:
        raise SandboxError(f"{exc} (an unreadable sandbox description)") from None
    if not isinstance(data, dict):
        raise SandboxError(f"{path}: not a sandbox description (expected a JSON object)")
    return Sandbox.from_json(data, str(path))


def _write_json(path: Path, data: dict) -> None:
    atomic_write(path, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8"))


def _tail(path: Path, lines: int = 15) -> str:
    """The first ERROR/FATAL lines (why it stopped) and the last lines (how far it got)."""
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    errors: list[str] = []
    for i, line in enumerate(text):
        if (" ERROR " in line or " FATAL " in line) and len(errors) < 6:
            errors.append(line)
            # The exception that explains it is on the next line, before the stack trace.
            if i + 1 < len(text) and not text[i + 1].startswith("["):
                errors.append("    " + text[i + 1].strip())
    tail = [line for line in text[-lines:] if line not in errors]
    return "\n".join(errors + (["..."] if errors and tail else []) + tail)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours counts as dead.
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][:1] != "Z"
    except OSError:
        return True


def _is_our_process(pid: int, node_dir: str, config: str = "server.properties") -> bool:
    """Never signal a pid that was reused by something else: it must still run our node's config."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return str(Path(node_dir) / config).encode() in cmdline


def node_jvm_opts(java_opts: tuple[str, ...], node: Node, agent_jar: str | None) -> tuple[str, ...]:
    """The node's JVM options: the sandbox's, plus the JMX exporter agent where the node serves metrics."""
    if agent_jar is None or node.metrics_port is None:
        return java_opts
    return (*java_opts, sandbox_metrics.agent_option(agent_jar, node.metrics_port, str(sandbox_metrics.EXPORTER_CONFIG)))


def start_node(runtime: KafkaRuntime, node_dir: Path, jvm_opts: tuple[str, ...] = NODE_JVM_OPTS) -> int:
    """Start one formatted node in its own session (so a Ctrl-C to us does not kill it half-way)."""
    log_file = node_dir / "logs" / "server.log"
    if not (node_dir / "log4j.properties").exists():  # a node of a sandbox started before log4j 1 was configured
        write_log_configs(node_dir, log_file)
    cmd = runtime.command("kafka.Kafka", [str(node_dir / "server.properties")],
                          (*jvm_opts, *log_config_opts(node_dir), f"-Dkafka.logs.dir={log_file.parent}"))
    with open(node_dir / "logs" / "stdout.log", "ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, cwd=node_dir)
    return proc.pid


def _registered_brokers(bootstrap: str) -> set[int]:
    from kafka.admin import KafkaAdminClient

    client = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000, bootstrap_timeout_ms=3000)
    try:
        cluster = client.describe_cluster()
        return {b["broker_id"] for b in cluster["brokers"] if not b.get("is_fenced")}
    finally:
        client.close()


def wait_until_registered(nodes: list[Node], timeout: float, expect: set[int] | None = None) -> None:
    """Every node logged that it started and the controller lists every broker unfenced."""
    deadline = time.monotonic() + timeout
    expect = expect if expect is not None else {n.node_id for n in nodes}
    pending = list(nodes)
    while pending:
        for n in list(pending):
            if not pid_alive(n.pid):
                tail = _tail(Path(n.log_file))
                error = PortTaken if _BIND_FAILED in tail else SandboxError
                raise error(f"node {n.node_id} exited during start-up; last lines of {n.log_file}:\n"
                            f"{tail}\n{_tail(Path(n.directory) / 'logs' / 'stdout.log', 5)}")
            try:
                text = Path(n.log_file).read_text(errors="replace")
                if STARTED_MARK in text or ZK_STARTED_MARK in text:
                    pending.remove(n)
            except OSError:
                pass
        if time.monotonic() > deadline:
            n = pending[0]
            raise SandboxError(f"node {n.node_id} did not start within {timeout:.0f}s; last lines of {n.log_file}:\n"
                               f"{_tail(Path(n.log_file))}")
        if pending:
            time.sleep(0.3)
    last: set[int] = set()
    while time.monotonic() < deadline:
        try:
            with quiet_kafka_client():
                last = _registered_brokers(",".join(n.bootstrap for n in nodes))
            if expect <= last:
                return
        except Exception:
            pass
        time.sleep(0.5)
    raise SandboxError(f"brokers {sorted(expect - last)} did not register with the controller within {timeout:.0f}s")


def up(directory: Path, brokers: int = 3, racks: int = 3, kafka_version: str = DEFAULT_KAFKA_VERSION,
       auto_leader_rebalance: bool = False, timeout: float = 120.0,
       progress: Callable[[str], None] = lambda _: None, properties: dict[str, str] | None = None,
       sasl_plain_users: Mapping[str, str] | None = None,
       node_properties: Callable[[int, int, int], Mapping[str, str]] | None = None,
       format_args: Sequence[str] = (), log_dirs: int = 1, metrics: bool = False,
       mode: SandboxMode | str = SandboxMode.KRAFT) -> Sandbox:
    """Format and start ``brokers`` combined KRaft nodes (``mode="zookeeper"``: brokers and a ZooKeeper);
    on any failure stop what was started.

    ``node_properties(node_id, port, controller_port)`` adds to (or overrides) one node's properties once
    its ports are known (listeners of its own, sandbox/security.py); ``format_args`` go to
    ``kafka-storage format`` (``--add-scram ...``). ``log_dirs`` > 1 gives each node that many log dirs
    (JBOD); ``metrics`` starts each node with the JMX exporter agent and a Prometheus scraping them
    (sandbox/metrics.py). ZooKeeper mode takes none of these four.
    """
    if not 1 <= brokers <= 9:
        raise SandboxError(f"--brokers: {brokers} is outside 1..9 (a sandbox is for one machine)")
    if not 1 <= log_dirs <= MAX_LOG_DIRS:
        raise SandboxError(f"--log-dirs: {log_dirs} is outside 1..{MAX_LOG_DIRS}")
    if log_dirs > 1 and "log.dirs" in (properties or {}):
        raise SandboxError("--log-dirs and --override log.dirs=... both set the log dirs; give one of them")
    if not 0 <= racks <= brokers:
        raise SandboxError(f"--racks: {racks} is outside 0..{brokers} (0 = no broker.rack)")
    if mode not in tuple(SandboxMode):
        raise SandboxError(f"mode: {mode!r} is not one of {', '.join(m.value for m in SandboxMode)}")
    directory = Path(directory).resolve()
    if (directory / SANDBOX_FILE).exists():
        raise SandboxError(f"{directory / SANDBOX_FILE}: a sandbox already lives here; "
                           f"`kafka-rebalance sandbox down --dir {directory}` first, or pick another --dir")
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise SandboxError(f"--dir {directory}: exists and is not an empty directory; `down` removes DIR, so give a new one")
    if mode == SandboxMode.ZOOKEEPER:
        from kafka_rebalance.sandbox import zookeeper

        if log_dirs > 1 or metrics or node_properties is not None or format_args:
            raise SandboxError("--zookeeper: a ZooKeeper-mode sandbox takes no --log-dirs, --metrics or extra listeners")

        return zookeeper.up(directory, brokers, racks, kafka_version, auto_leader_rebalance, timeout, progress, properties,
                            sasl_plain_users)
    runtime = resolve_runtime(kafka_version)
    agent = sandbox_metrics.resolve_agent() if metrics else None
    started = time.monotonic()
    # Ports are probed free, released, then bound by the nodes: another process (a second sandbox starting beside this
    # one) may take one in between. The directory was empty, so a start that lost that race is wiped and started again
    # on fresh ports.
    def start() -> Sandbox:
        directory.mkdir(parents=True, exist_ok=True)
        return _start_kraft(directory, brokers, racks, runtime, auto_leader_rebalance, timeout, progress, properties,
                            sasl_plain_users, node_properties, format_args, log_dirs, agent, started)

    for attempt in range(2, PORT_ATTEMPTS + 1):
        try:
            return start()
        except PortTaken:
            progress(f"a port found free was taken before a node bound it; starting again on new ports "
                     f"(attempt {attempt} of {PORT_ATTEMPTS})")
            for child in directory.iterdir():
                if child.is_dir():
                    shutil.rmtree(child)
                else:
                    child.unlink()
    return start()  # the last attempt: a port race now fails as any other start does


def _start_kraft(directory: Path, brokers: int, racks: int, runtime: KafkaRuntime, auto_leader_rebalance: bool,
                 timeout: float, progress: Callable[[str], None], properties: dict[str, str] | None,
                 sasl_plain_users: Mapping[str, str] | None,
                 node_properties: Callable[[int, int, int], Mapping[str, str]] | None, format_args: Sequence[str],
                 log_dirs: int, agent: Path | None, started: float) -> Sandbox:
    """One start of ``up``'s KRaft nodes (and Prometheus) in the empty ``directory``; on failure, what it started
    is stopped."""
    metrics = agent is not None
    base = 3 * brokers if sasl_plain_users else 2 * brokers
    # One call for every port, so that they are distinct: each node's exporter, then Prometheus.
    ports = free_ports(base + (brokers + 1 if metrics else 0))
    ids = list(range(1, brokers + 1))
    voters = ",".join(f"{i}@127.0.0.1:{ports[2 * k + 1]}" for k, i in enumerate(ids))
    cluster_uuid = kafka_uuid()
    layout = []
    for k, node_id in enumerate(ids):
        node_dir = directory / f"node-{node_id}"
        (node_dir / "logs").mkdir(parents=True)
        rack = rack_of(k, racks)
        node_props = dict(properties or {})
        sasl_port = ports[2 * brokers + k] if sasl_plain_users else None
        if sasl_port is not None and sasl_plain_users:
            node_props.update(sasl_plain_properties(ports[2 * k], ports[2 * k + 1], sasl_port, sasl_plain_users))
        if node_properties is not None:
            node_props.update(node_properties(node_id, ports[2 * k], ports[2 * k + 1]))
        if log_dirs > 1:
            node_props["log.dirs"] = ",".join(str(node_dir / f"data-{d}") for d in range(1, log_dirs + 1))
        dirs = tuple(str(node_props.get("log.dirs") or node_dir / "data").split(","))
        metrics_port = ports[base + k] if metrics else None
        (node_dir / "server.properties").write_text(server_properties(
            node_id, ports[2 * k], ports[2 * k + 1], voters, node_dir / "data", rack, brokers, auto_leader_rebalance,
            node_props))
        (node_dir / "server.properties").chmod(0o600)  # it may hold the SASL users' passwords
        write_log_configs(node_dir, node_dir / "logs" / "server.log")
        layout.append((node_id, rack, ports[2 * k], ports[2 * k + 1], node_dir, sasl_port, dirs, metrics_port))
    progress(f"formatting {brokers} KRaft node(s) for Kafka {runtime.version} in {directory}")
    # Formatting is a JVM start per node: run them side by side.
    formats = [subprocess.Popen(runtime.command("kafka.tools.StorageTool",
                                                ["format", "-t", cluster_uuid, "-c", str(d / "server.properties"),
                                                 *format_args]),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
               for *_, d, _sasl, _dirs, _mport in layout]
    for (node_id, *_), proc in zip(layout, formats):
        out, _ = proc.communicate(timeout=120)
        if proc.returncode != 0:
            raise SandboxError(f"formatting node {node_id} failed: {java_error_line(out)}")
    nodes: list[Node] = []
    prometheus: sandbox_metrics.SandboxMetrics | None = None
    try:
        for node_id, rack, port, cport, node_dir, sasl_port, dirs, metrics_port in layout:
            node = Node(node_id, rack, port, cport, 0, str(node_dir), str(node_dir / "logs" / "server.log"),
                        sasl_port, dirs, metrics_port)
            opts = node_jvm_opts(NODE_JVM_OPTS, node, str(agent) if agent else None)
            nodes.append(replace(node, pid=start_node(runtime, node_dir, opts)))
        sandbox = Sandbox(str(directory), runtime.version, cluster_uuid, auto_leader_rebalance, tuple(nodes),
                          time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), 0.0)
        # Written before the wait, so that even an interrupted start can be brought down by pid.
        _write_json(directory / SANDBOX_FILE, sandbox.to_json())
        progress(f"started nodes {[n.node_id for n in nodes]} (pids {[n.pid for n in nodes]}); waiting for registration")
        wait_until_registered(nodes, timeout)
        if agent is not None:
            prom_dir = directory / "prometheus"
            pid = sandbox_metrics.start_prometheus(prom_dir, [(n.node_id, n.metrics_port or 0) for n in nodes],
                                                   ports[base + brokers])
            prometheus = sandbox_metrics.SandboxMetrics(str(agent), str(sandbox_metrics.EXPORTER_CONFIG), pid,
                                                        ports[base + brokers], str(prom_dir))
            sandbox = replace(sandbox, metrics=prometheus)
            _write_json(directory / SANDBOX_FILE, sandbox.to_json())
            progress(f"started prometheus (pid {pid}) at {prometheus.prometheus_url}; waiting until it scrapes every broker")
            sandbox_metrics.wait_until_scraping(prometheus.prometheus_url, pid, prom_dir / "prometheus.log", len(nodes))
    except BaseException:
        if prometheus is not None:
            sandbox_metrics.stop_prometheus(prometheus.prometheus_pid, prometheus.prometheus_config)
        _stop_pids(nodes, grace=10.0)
        raise
    sandbox = replace(sandbox, start_seconds=round(time.monotonic() - started, 1))
    _write_json(directory / SANDBOX_FILE, sandbox.to_json())
    return sandbox


def _stop_pids(nodes: Sequence[Node | ZooKeeperServer], grace: float, config: str = "server.properties") -> list[int]:
    """SIGTERM (Kafka's clean shutdown), then SIGKILL what is left after ``grace`` seconds."""
    ours = [n for n in nodes if pid_alive(n.pid) and _is_our_process(n.pid, n.directory, config)]
    for n in ours:
        try:
            os.kill(n.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(pid_alive(n.pid) for n in ours):
        _reap()
        time.sleep(0.2)
    for n in ours:
        if pid_alive(n.pid):
            try:
                os.kill(n.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    for _ in range(50):
        _reap()
        if not any(pid_alive(n.pid) for n in ours):
            break
        time.sleep(0.1)
    return [n.pid for n in ours]


def _reap() -> None:
    """Collect exited children of ours (nodes started in this process) so they do not linger as zombies."""
    try:
        while True:
            pid, _ = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                return
    except ChildProcessError:
        return


def kill_node(sandbox: Sandbox, node_id: int) -> None:
    """``kill -9`` one node: a crash, for fault tests."""
    n = sandbox.node(node_id)
    if pid_alive(n.pid) and _is_our_process(n.pid, n.directory):
        os.kill(n.pid, signal.SIGKILL)
        for _ in range(100):
            _reap()
            if not pid_alive(n.pid):
                return
            time.sleep(0.05)


def restart_node(sandbox: Sandbox, node_id: int, timeout: float = 90.0) -> Sandbox:
    """Start a stopped node again with its own config and data; sandbox.json gets the new pid."""
    n = sandbox.node(node_id)
    if pid_alive(n.pid) and _is_our_process(n.pid, n.directory):
        raise SandboxError(f"node {node_id} is still running (pid {n.pid})")
    runtime = resolve_runtime(sandbox.kafka_version, fetch=False)
    log = Path(n.log_file)
    # Start-up is detected from the log: move the old one aside.
    if log.exists():
        log.rename(log.with_name(f"server.log.{int(time.time() * 1000)}"))
    agent = sandbox.metrics.agent_jar if sandbox.metrics else None
    pid = start_node(runtime, Path(n.directory), node_jvm_opts(sandbox.java_opts, n, agent))
    fresh = replace(n, pid=pid)
    nodes = tuple(fresh if m.node_id == node_id else m for m in sandbox.nodes)
    updated = replace(sandbox, nodes=nodes)
    _write_json(Path(sandbox.directory) / SANDBOX_FILE, updated.to_json())
    wait_until_registered([fresh], timeout, expect={m.node_id for m in nodes})
    return updated


@dataclass(frozen=True)
class NodeStatus:
    node: Node
    alive: bool
    registered: bool | None


def status(directory: Path) -> tuple[Sandbox, list[NodeStatus]]:
    sandbox = read_sandbox(directory)
    registered: set[int] | None
    try:
        registered = _registered_brokers(sandbox.bootstrap_servers) if any(pid_alive(n.pid) for n in sandbox.nodes) else set()
    except Exception:
        registered = None
    return sandbox, [NodeStatus(n, pid_alive(n.pid) and _is_our_process(n.pid, n.directory),
                                None if registered is None else n.node_id in registered) for n in sandbox.nodes]


def down(directory: Path, grace: float = 30.0) -> list[int]:
    """Stop exactly the nodes recorded in DIR/sandbox.json, then remove DIR. Returns the pids stopped."""
    sandbox = read_sandbox(directory)
    m = sandbox.metrics
    prometheus = [m.prometheus_pid] if m and sandbox_metrics.stop_prometheus(m.prometheus_pid, m.prometheus_config) else []
    stopped = prometheus + _stop_pids(sandbox.nodes, grace)
    still = [n.pid for n in sandbox.nodes if pid_alive(n.pid) and _is_our_process(n.pid, n.directory)]
    if m and sandbox_metrics.is_our_prometheus(m.prometheus_pid, m.prometheus_config) and pid_alive(m.prometheus_pid):
        still.append(m.prometheus_pid)
    if sandbox.zookeeper is not None and not still:
        # After the brokers: they deregister from ZooKeeper on a clean shutdown.
        from kafka_rebalance.sandbox import zookeeper

        stopped += zookeeper.stop(sandbox.zookeeper, grace)
        still += zookeeper.still_running(sandbox.zookeeper)
    if still:
        raise SandboxError(f"pids {still} did not stop; {directory} is kept")
    shutil.rmtree(directory)
    return stopped
