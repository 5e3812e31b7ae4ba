"""``plan``: snapshot in, plan directory out (see docs/PLANNER.md and docs/PLAN_FORMAT.md)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from kafka_rebalance.cli._app import app, stderr
from kafka_rebalance.planner import PlanOptions, make_plan, write_plan
from kafka_rebalance.planner.options import OPTIMIZERS, ORDERINGS, parse_list, resolve_threshold
from kafka_rebalance.snapshot import load_snapshot
from kafka_rebalance.throttle_model import MIN_THROTTLE_EFFICIENCY
from kafka_rebalance.userinput import check_output_dir

_D = PlanOptions()  # every flag's default is the option's own


@app.command()
def plan(
    snapshot: Annotated[Path, typer.Option(help="Cluster snapshot (.json or .parquet)")],
    out: Annotated[Path, typer.Option(help="Plan directory to create (must be new, empty, or hold this same plan)")],
    max_partitions_per_batch: Annotated[int, typer.Option(help="Partitions per batch")] = _D.max_partitions_per_batch,
    max_moves_per_broker: Annotated[int, typer.Option(help="Replica moves into or out of one broker per batch")] = _D.max_moves_per_broker,
    max_new_replicas_per_partition: Annotated[int, typer.Option(help="New replicas of one partition per batch")] = _D.max_new_replicas_per_partition,
    throttle: Annotated[int, typer.Option(help="Replication throttle in bytes/s per broker (KIP-73), >= 1024")] = _D.throttle_bytes_per_sec,
    ordering: Annotated[str, typer.Option(help=" | ".join(ORDERINGS))] = _D.ordering,
    exclude_topics: Annotated[str | None, typer.Option(help="Comma-separated topics never touched")] = None,
    decommission_brokers: Annotated[str | None, typer.Option(help="Comma-separated broker ids to empty")] = None,
    replication_factor: Annotated[int | None, typer.Option(help="Change every non-excluded topic to this RF")] = None,
    byte_tolerance: Annotated[float, typer.Option(help="Allowed byte deviation from the mean, as a fraction")] = _D.byte_tolerance,
    election_batch_size: Annotated[int, typer.Option(help="Partitions per preferred-leader election call")] = _D.election_batch_size,
    threshold_percentage: Annotated[
        float | None,
        typer.Option(help="leader.imbalance.per.broker.percentage to apply when the snapshot does not report it"),
    ] = None,
    analysis: Annotated[Path | None, typer.Option(help="Spark analysis output directory (reads summary.json)")] = None,
    optimizer: Annotated[
        str, typer.Option(help=" | ".join(OPTIMIZERS) + ": exact = fewest bytes (MILP), auto = exact where the cluster is small enough")
    ] = _D.optimizer,
    throttle_efficiency: Annotated[
        float, typer.Option(help=f"Fraction of --throttle the brokers deliver, {MIN_THROTTLE_EFFICIENCY}..1, for the time "
                                 "estimates (execute prints the figure a cluster showed)")
    ] = _D.throttle_efficiency,
) -> None:
    """Plan a minimal-movement, rack-safe, throttled rebalance in Kafka's own file formats."""
    started = time.perf_counter()
    check_output_dir(out, "--out")
    snap = load_snapshot(snapshot)
    loaded = time.perf_counter()
    threshold, source = resolve_threshold(snap, threshold_percentage, analysis)
    options = PlanOptions(
        throttle_bytes_per_sec=throttle,
        max_partitions_per_batch=max_partitions_per_batch,
        max_moves_per_broker=max_moves_per_broker,
        max_new_replicas_per_partition=max_new_replicas_per_partition,
        ordering=ordering,
        exclude_topics=parse_list(exclude_topics, "--exclude-topics"),
        decommission_brokers=parse_list(decommission_brokers, "--decommission-brokers", as_int=True),
        replication_factor=replication_factor,
        byte_tolerance=byte_tolerance,
        election_batch_size=election_batch_size,
        threshold_percentage=threshold,
        threshold_source=source,
        optimizer=optimizer,
        throttle_efficiency=throttle_efficiency,
    )
    result = make_plan(snap, options)
    planned = time.perf_counter()
    manifest, status = write_plan(result, out, str(snapshot))
    s = manifest["summary"]
    ratio = s["ratio_to_lower_bound"]["replica_moves"]
    stderr.print(
        f"{status} {out}: plan {manifest['plan_hash'][:16]}, {len(manifest['batches'])} batches, "
        f"{s['replica_moves']} replica moves (lower bound {s['lower_bounds']['replica_moves']}, ratio {ratio}), "
        f"{s['bytes_moved']:,} bytes (certified bound {s['optimizer']['bytes_bound']:,}, gap {s['optimizer']['gap_percent']} %, "
        f"{s['optimizer']['used']}), {s['reorders']} reorders, {s['leader_elections']} elections, "
        f"~{s['estimated_seconds']:,.0f}s in batches, ~{s['continuous']['estimated_seconds']:,.0f}s continuous "
        f"(physical bound {s['continuous']['physical_bound_seconds']:,.0f}s) at {throttle:,} B/s "
        f"(load {loaded - started:.2f}s, plan {planned - loaded:.2f}s, write {time.perf_counter() - planned:.2f}s)"
    )
