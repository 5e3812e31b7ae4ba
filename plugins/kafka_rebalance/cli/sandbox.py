"""``sandbox up|seed|status|crash|restart|down``: a real local Apache Kafka cluster (KRaft, or ZooKeeper mode for 3.x; Maven Central jars)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from kafka_rebalance.cli._app import app, fail, stderr, stdout
from kafka_rebalance.cli.meter import meter
from kafka_rebalance.options import DEFAULT_MAX_DISK_USAGE
from kafka_rebalance.sandbox import cluster as sandbox_cluster
from kafka_rebalance.sandbox.cluster import SandboxMode
from kafka_rebalance.sandbox.disk import SandboxDiskError, disk_limit_for, host_usage, plan_disk_limit
from kafka_rebalance.sandbox.runtime import DEFAULT_KAFKA_VERSION
from kafka_rebalance.sandbox.seed import SeedSpec, seed
from kafka_rebalance.units import human_bytes

sandbox_app = typer.Typer(help="A real local Apache Kafka cluster for demos and tests.", no_args_is_help=True)
app.add_typer(sandbox_app, name="sandbox")

DirOpt = Annotated[Path, typer.Option("--dir", help="The sandbox's directory (sandbox.json, node data and logs)")]


def _say(line: str) -> None:
    stderr.print(line)


@sandbox_app.command()
def up(
    dir: DirOpt,
    brokers: Annotated[int, typer.Option(help="Combined broker+controller KRaft nodes", min=1, max=9)] = 3,
    racks: Annotated[int | None, typer.Option(
        help="Racks the brokers are spread over (0 = no broker.rack) [default: 3, or --brokers if fewer]", min=0, max=9)] = None,
    kafka_version: Annotated[str, typer.Option(help="Apache Kafka release (resolved from Maven Central once)")] = DEFAULT_KAFKA_VERSION,
    auto_leader_rebalance: Annotated[bool, typer.Option("--auto-leader-rebalance", help="Let the controller move leaders back itself")] = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for every broker to register", min=5, max=900)] = 120.0,
    override: Annotated[list[str] | None, typer.Option(
        "--override", help="Extra server.properties line KEY=VALUE for every node (repeatable)")] = None,
    log_dirs: Annotated[int, typer.Option(
        help="Log dirs per broker (JBOD: log.dirs lists that many directories)", min=1, max=sandbox_cluster.MAX_LOG_DIRS)] = 1,
    metrics: Annotated[bool, typer.Option(
        "--metrics", help="Run each broker with the Prometheus JMX exporter and a Prometheus scraping them "
                          "(for `gather --metrics prometheus=URL`)")] = False,
    zookeeper: Annotated[bool, typer.Option("--zookeeper", help="ZooKeeper mode (Kafka 3.x): N brokers and one ZooKeeper "
                                            "server instead of KRaft nodes")] = False,
) -> None:
    """Start N KRaft nodes (or, with --zookeeper, N brokers and a ZooKeeper) on 127.0.0.1 (free ports) and wait until
    every broker is registered."""
    properties = {}
    for item in override or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or any(c in item for c in "\n\r"):
            fail(f"--override {item!r}: expected KEY=VALUE, e.g. --override log.retention.hours=1")
        properties[key.strip()] = value.strip()
    sb = sandbox_cluster.up(dir, brokers, min(3, brokers) if racks is None else racks, kafka_version, auto_leader_rebalance, timeout, progress=_say,
                            properties=properties, log_dirs=log_dirs, metrics=metrics,
                            mode=SandboxMode.ZOOKEEPER if zookeeper else SandboxMode.KRAFT)
    nodes = ", ".join(f"{n.node_id}@{n.bootstrap} ({n.rack or 'no rack'})" for n in sb.nodes)
    stderr.print(f"sandbox up in {sb.start_seconds:.1f}s: Kafka {sb.kafka_version} ({sb.mode.value}), nodes {nodes}")
    if sb.metrics is not None:
        stderr.print(f"prometheus at {sb.metrics.prometheus_url} (pid {sb.metrics.prometheus_pid}), scraping every broker's "
                     f"JMX exporter: gather --metrics prometheus={sb.metrics.prometheus_url}")
    _note_disk(dir)
    stdout.print(sb.bootstrap_servers)


def _note_disk(directory: Path) -> None:
    """Every sandbox broker reports the host's filesystem as its disk: on a full host, say what plans need."""
    usage = host_usage(directory)
    try:
        limit = disk_limit_for(usage, directory)
    except SandboxDiskError as exc:
        stderr.print(f"warning: {exc}")
        return
    if limit > DEFAULT_MAX_DISK_USAGE:
        stderr.print(f"note: every broker reports this host's filesystem ({usage:.1%} full) as its disk: plan with "
                     f"--max-disk-usage {limit:.2f} (the default {DEFAULT_MAX_DISK_USAGE} refuses every broker as over it)")


_S = SeedSpec()  # every flag's default is the spec's own


@sandbox_app.command("seed")
def seed_cmd(
    dir: DirOpt,
    topics: Annotated[int, typer.Option(help="Topics to create", min=1, max=1000)] = _S.topics,
    partitions: Annotated[int, typer.Option(help="Partitions per topic", min=1, max=1000)] = _S.partitions,
    mb_per_partition: Annotated[float, typer.Option(help="MiB of records produced into each partition", min=0, max=1024)] = _S.mb_per_partition,
    skew: Annotated[float, typer.Option(help="Share of partitions packed onto the first brokers (0..1)", min=0.0, max=1.0)] = _S.skew,
    seed_: Annotated[int, typer.Option("--seed", help="Random seed: same seed, same layout", min=0, max=2**63 - 1)] = _S.seed,
    replication_factor: Annotated[int, typer.Option(help="Replicas per partition", min=1, max=9)] = _S.replication_factor,
) -> None:
    """Create deliberately unbalanced topics (explicit assignments) and fill them with real data."""
    sb = sandbox_cluster.read_sandbox(dir)
    spec = SeedSpec(topics, partitions, mb_per_partition, skew, seed_, replication_factor)
    with meter("producing", spec.produce_bytes) as produced:
        result = seed(sb, spec, progress=_say, produced_bytes=produced)
    stderr.print(f"seeded {len(result.topics)} topics, {result.partitions} partitions "
                 f"({result.off_preferred} led off their preferred replica), {human_bytes(result.bytes_produced)} "
                 f"produced in {result.seconds:.1f}s")


@sandbox_app.command()
def status(dir: DirOpt, as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False) -> None:
    """Nodes, racks, ports, pids, and whether each is alive and registered."""
    sb, nodes = sandbox_cluster.status(dir)
    if as_json:
        out = sb.to_json()
        out["status"] = [{"node_id": s.node.node_id, "alive": s.alive, "registered": s.registered} for s in nodes]
        stdout.print_json(json.dumps(out))
        return
    table = Table(title=f"sandbox {sb.directory} (Kafka {sb.kafka_version}, started in {sb.start_seconds:.1f}s)")
    for col in ("node", "rack", "listener", "pid", "process", "registered", "log"):
        table.add_column(col)
    for s in nodes:
        table.add_row(str(s.node.node_id), s.node.rack or "-", s.node.bootstrap, str(s.node.pid),
                      "live" if s.alive else "[red]dead[/red]",
                      "?" if s.registered is None else ("yes" if s.registered else "[red]no[/red]"), s.node.log_file)
    stdout.print(table)


NodeOpt = Annotated[int, typer.Option("--node", help="The node id (see `sandbox status`)", min=0)]


@sandbox_app.command("disk-limit")
def disk_limit(dir: DirOpt) -> None:
    """Print the --max-disk-usage a plan on this sandbox needs: every broker reports the host's filesystem as its
    disk, so on a host fuller than the default every broker starts above it."""
    sandbox_cluster.read_sandbox(dir)
    stdout.print(f"{plan_disk_limit(dir):.2f}")


@sandbox_app.command()
def crash(dir: DirOpt, node: NodeOpt) -> None:
    """Kill one node with SIGKILL, as a crash would: rehearse a broker failure in the middle of a rebalance."""
    sb = sandbox_cluster.read_sandbox(dir)
    sandbox_cluster.kill_node(sb, node)
    stderr.print(f"node {node} (pid {sb.node(node).pid}) killed; `sandbox restart --node {node}` brings it back")


@sandbox_app.command()
def restart(
    dir: DirOpt,
    node: NodeOpt,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for it to register again", min=5, max=900)] = 90.0,
) -> None:
    """Start a crashed or stopped node again with its own config and data, and wait until it is registered."""
    sb = sandbox_cluster.restart_node(sandbox_cluster.read_sandbox(dir), node, timeout)
    stderr.print(f"node {node} is back (pid {sb.node(node).pid})")


@sandbox_app.command()
def down(dir: DirOpt) -> None:
    """Stop exactly the processes `up` started (clean shutdown first), then remove DIR."""
    pids = sandbox_cluster.down(dir)
    stderr.print(f"stopped pids {pids}; removed {dir}")
