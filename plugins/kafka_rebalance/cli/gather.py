"""``gather``: a snapshot of a live cluster through the Admin API, the same code path as the DAG's gather step."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import Annotated

import typer

from kafka_rebalance.cli._app import app, fail, stderr
from kafka_rebalance.cli.meter import meter, stages
from kafka_rebalance.cluster.gather import gather_snapshot
from kafka_rebalance.cluster.prometheus import METRICS_HELP, parse_metrics_option
from kafka_rebalance.options import DEFAULT_RATE_WINDOW_SECONDS, MAX_RATE_WINDOW_SECONDS, RATE_WINDOW
from kafka_rebalance.snapshot import write_snapshot
from kafka_rebalance.units import human_bytes
from kafka_rebalance.userinput import check_cluster_id, finite_number


@app.command()
def gather(
    bootstrap_server: Annotated[str, typer.Option("--bootstrap-server", help="HOST:PORT[,HOST:PORT...] of the cluster")],
    cluster_id: Annotated[str, typer.Option(help="Your name for the cluster (plans and reports are keyed by it)")],
    out: Annotated[Path, typer.Option(help="Snapshot to write: .json, or .parquet for large clusters")],
    command_config: Annotated[
        Path | None, typer.Option("--command-config", help="Client properties file (security.protocol, sasl.*, ssl.*)")
    ] = None,
    connect_timeout: Annotated[float, typer.Option(help="Seconds to wait for the first broker connection", min=0.1, max=600)] = 15.0,
    rate_window: Annotated[float, typer.Option(RATE_WINDOW.flag, help=f"{RATE_WINDOW.help} "
                                               f"[0..{MAX_RATE_WINDOW_SECONDS:g} s]")] = DEFAULT_RATE_WINDOW_SECONDS,
    metrics: Annotated[str | None, typer.Option("--metrics", help=METRICS_HELP)] = None,
) -> None:
    """Snapshot a live cluster: brokers, racks, liveness, partitions, leaders, ISR, replica sizes, dynamic configs."""
    from kafka_rebalance.cluster.connection import ConnectionSettings, settings_from_properties
    from kafka_rebalance.cluster.live import LiveAdmin

    if out.suffix not in (".json", ".parquet"):
        fail(f"--out {out}: the snapshot must end in .json or .parquet")
    if out.exists() and out.is_dir():
        fail(f"--out {out}: is a directory")
    check_cluster_id(cluster_id, "--cluster-id")
    if not finite_number(rate_window, 0, MAX_RATE_WINDOW_SECONDS):
        fail(f"{RATE_WINDOW.flag} must be within 0..{MAX_RATE_WINDOW_SECONDS:g} seconds, got {rate_window}")
    source = parse_metrics_option(metrics) if metrics is not None else None
    settings = (settings_from_properties(command_config, bootstrap_server) if command_config
                else ConnectionSettings(bootstrap_server, source="--bootstrap-server"))
    with stages("gather", ["connecting"]) as begin:
        # Up to --connect-timeout when nothing answers: a spinner on a terminal says what it waits for.
        begin(f"connecting to {settings.describe()} (up to {connect_timeout:g} s)")
        live = LiveAdmin(settings.with_timeouts(bootstrap_timeout_ms=int(connect_timeout * 1000)), quiet=True)
    with closing(live) as admin:
        with meter(f"measuring produce rates over {rate_window:g} s", rate_window if source is None else 0.0,
                   unit="seconds") as waited:
            snap = gather_snapshot(admin, cluster_id, rate_window, source, waited)
    write_snapshot(snap, out)
    alive = sum(b.alive for b in snap.brokers)
    size = sum(p.size_bytes or 0 for p in snap.partitions)
    stderr.print(f"wrote {out}: {len(snap.brokers)} brokers ({alive} alive), {len(snap.partitions)} partitions, "
                 f"{human_bytes(size)} (leader replicas)")
    if snap.rate_window_seconds is not None:
        measured = [p.bytes_in_per_sec for p in snap.partitions if p.bytes_in_per_sec is not None]
        how = f"from {snap.metrics_source.url}" if snap.metrics_source and snap.metrics_source.url else "sampled"
        stderr.print(f"produce rates over {snap.rate_window_seconds:g} s ({how}): {len(measured)} of {len(snap.partitions)} "
                     f"partitions measured, {human_bytes(sum(measured))}/s in all")
        if snap.metrics_source is not None:
            out_rates = [p.bytes_out_per_sec for p in snap.partitions if p.bytes_out_per_sec is not None]
            stderr.print(f"consumer rates: {human_bytes(sum(out_rates)) + '/s in all' if out_rates else snap.metrics_source.bytes_out}")
