"""``describe``, ``generate-cluster`` and ``import-describe``: getting a snapshot and reading it."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from kafka_rebalance.cli._app import app, emit_json, stderr, stdout
from kafka_rebalance.generate import ClusterSpec, generate
from kafka_rebalance.metrics import broker_loads, is_over_threshold, threshold_percentage
from kafka_rebalance.plan_dir import check_output
from kafka_rebalance.snapshot import load_snapshot, write_snapshot
from kafka_rebalance.topics_describe import parse_rack_map, parse_topics_describe
from kafka_rebalance.units import human_bytes
from kafka_rebalance.userinput import check_cluster_id, read_text


@app.command()
def describe(
    snapshot: Annotated[Path, typer.Option(help="Cluster snapshot (.json or .parquet)")],
    threshold_percentage_setting: Annotated[
        float | None, typer.Option("--threshold-percentage", help="Used when the cluster does not report one")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table")] = False,
) -> None:
    """Per-broker table: replicas, leaders, preferred leaders, leader imbalance, bytes, rack."""
    snap = load_snapshot(snapshot)
    loads = broker_loads(snap)
    threshold, source = threshold_percentage(snap, threshold_percentage_setting)
    if as_json:
        emit_json(
            {
                "cluster_id": snap.cluster_id,
                "threshold_percentage": threshold,
                "threshold_source": source,
                "brokers": [
                    {
                        "broker_id": b.broker_id, "rack": b.rack, "alive": b.alive, "replicas": b.replicas,
                        "leaders": b.leaders, "preferred_partitions": b.preferred_partitions,
                        "preferred_not_led": b.preferred_not_led, "imbalance_ratio": b.imbalance_ratio,
                        "size_bytes": b.size_bytes,
                    }
                    for b in loads
                ],
            }
        )
        return
    table = Table(
        title=f"{snap.cluster_id}: {len(snap.brokers)} brokers, {len(snap.partitions):,} partitions "
        f"(threshold {threshold:g}% from {source})"
    )
    for col in ("broker", "rack", "alive", "replicas", "leaders", "preferred", "not led", "imbalance", "bytes"):
        table.add_column(col, justify="left" if col in ("rack", "alive") else "right")
    for b in loads:
        ratio = b.imbalance_ratio
        over = is_over_threshold(ratio, threshold)
        table.add_row(
            str(b.broker_id), b.rack or "-", "yes" if b.alive else "[red]NO[/]", f"{b.replicas:,}", f"{b.leaders:,}",
            f"{b.preferred_partitions:,}", f"{b.preferred_not_led:,}",
            "-" if ratio is None else (f"[red]{ratio:.1%}[/]" if over else f"{ratio:.1%}"),
            human_bytes(b.size_bytes),
        )
    stdout.print(table)


_G = ClusterSpec()  # every flag's default is the spec's own


@app.command("generate-cluster")
def generate_cluster(
    out: Annotated[Path, typer.Option(help="Output file: .parquet (large) or .json (small)")],
    cluster_id: Annotated[str, typer.Option(help="cluster_id to write")] = _G.cluster_id,
    brokers: Annotated[int, typer.Option(help="Brokers in all, new ones included")] = _G.brokers,
    racks: Annotated[int, typer.Option(help="Racks (0 = no rack information)")] = _G.racks,
    topics: Annotated[int, typer.Option(help="Topics")] = _G.topics,
    partitions: Annotated[int, typer.Option(help="Partitions in all")] = _G.partitions,
    replication_factor: Annotated[int, typer.Option(help="Replication factor")] = _G.replication_factor,
    replica_skew: Annotated[float, typer.Option(help="0 = even; 1 = first brokers get ~2x the replicas")] = _G.replica_skew,
    leader_skew: Annotated[float, typer.Option(help="Share of partitions led by a non-preferred replica")] = _G.leader_skew,
    new_brokers: Annotated[int, typer.Option(help="Brokers (highest ids) that hold nothing yet")] = _G.new_brokers,
    dead_brokers: Annotated[int, typer.Option(help="Existing brokers marked not alive")] = _G.dead_brokers,
    under_replicated: Annotated[float, typer.Option(help="Share of partitions with one follower out of ISR (out of sync)")] = _G.under_replicated,
    offline_replicas: Annotated[float, typer.Option(help="Share of partitions with one follower offline (failed log dir)")] = _G.offline_replicas,
    leaderless: Annotated[float, typer.Option(help="Share of partitions without a leader (-1)")] = _G.leaderless,
    mean_partition_mb: Annotated[float, typer.Option(help="Typical partition size in MiB")] = _G.mean_partition_mb,
    controller: Annotated[str, typer.Option(help="kraft or zookeeper")] = _G.controller,
    threshold_percentage: Annotated[
        int | None, typer.Option(help="Write leader.imbalance.per.broker.percentage into the snapshot")
    ] = _G.threshold_percentage,
    seed: Annotated[int, typer.Option(help="Random seed: same seed, same file")] = _G.seed,
) -> None:
    """Make a realistic synthetic cluster snapshot for demos, tests and benchmarks."""
    spec = ClusterSpec(
        cluster_id=cluster_id, brokers=brokers, racks=racks, topics=topics, partitions=partitions,
        replication_factor=replication_factor, replica_skew=replica_skew, leader_skew=leader_skew,
        new_brokers=new_brokers, dead_brokers=dead_brokers, under_replicated=under_replicated,
        offline_replicas=offline_replicas, leaderless=leaderless,
        mean_partition_mb=mean_partition_mb, controller=controller,
        threshold_percentage=threshold_percentage, seed=seed,
    )
    check_output(out, "--out")
    started = time.perf_counter()
    path = generate(spec, out)
    stderr.print(
        f"wrote {path}: {brokers} brokers, {partitions:,} partitions, "
        f"{partitions * replication_factor:,} replicas in {time.perf_counter() - started:.2f}s"
    )


@app.command("import-describe")
def import_describe(
    input: Annotated[Path, typer.Option("--input", help="Saved `kafka-topics.sh --describe` output, or - for stdin")],
    cluster_id: Annotated[str, typer.Option(help="cluster_id to record")],
    out: Annotated[Path, typer.Option(help="Snapshot to write (.json or .parquet)")],
    rack_map: Annotated[Path | None, typer.Option(help="Broker racks: JSON {\"0\": \"rack-a\"} or '0 rack-a' lines")] = None,
) -> None:
    """Turn `kafka-topics.sh --describe` output into a snapshot."""
    check_cluster_id(cluster_id, "--cluster-id")
    check_output(out, "--out", inputs=[("--input", None if str(input) == "-" else input), ("--rack-map", rack_map)])
    if str(input) == "-":
        text, source = sys.stdin.read(), "<stdin>"
    else:
        text, source = read_text(input, "describe output"), str(input)
    racks = parse_rack_map(rack_map) if rack_map else None
    snap = parse_topics_describe(text, cluster_id, racks, source)
    write_snapshot(snap, out)
    stderr.print(f"wrote {out}: {len(snap.brokers)} brokers, {len(snap.partitions)} partitions")
