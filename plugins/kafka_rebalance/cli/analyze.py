"""``analyze``: per-broker leader imbalance and skew of one cluster or a fleet, on Spark."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kafka_rebalance.cli._app import app, stderr


@app.command()
def analyze(
    snapshot: Annotated[Path, typer.Option(help="Snapshot file (.json/.parquet) or a directory of them (a fleet)")],
    out: Annotated[Path, typer.Option(help="Directory for broker_metrics.parquet and summary.json")],
    master: Annotated[str, typer.Option(help="Spark master: local[*], local[N] or spark://host:7077")] = "local[*]",
    threshold_percentage: Annotated[
        float | None,
        typer.Option(help="leader.imbalance.per.broker.percentage for clusters whose snapshot does not report it [default: 10]"),
    ] = None,
) -> None:
    """Kafka's per-broker leader imbalance ratio, replica/leader/byte skew, rack violations (Spark job)."""
    from kafka_rebalance.analysis.job import build_session, run
    from kafka_rebalance.analysis.summary import describe_cluster
    from kafka_rebalance.cli.meter import stages
    from kafka_rebalance.metrics import check_threshold_setting
    from kafka_rebalance.plan_dir import check_output
    from kafka_rebalance.snapshot import snapshot_files
    from kafka_rebalance.userinput import check_output_dir

    # Cheap input checks before a JVM starts.
    check_threshold_setting(threshold_percentage)
    check_output_dir(out, "--out")
    snapshot_files(snapshot)
    check_output(out, "--out", inputs=[("--snapshot", snapshot)], directory=True)
    from pyspark.sql import SparkSession

    owned = SparkSession.getActiveSession() is None
    with stages("analyze", ("starting Spark", "computing the per-broker figures")) as begin:
        begin("starting Spark")
        spark = build_session(master)
        try:
            begin("computing the per-broker figures")
            result = run(spark, snapshot, out, threshold_percentage)
        finally:
            if owned:  # a session we were handed (tests, notebooks) stays up
                spark.stop()
    for entry in result.summary["clusters"]:
        stderr.print(describe_cluster(entry), markup=False, soft_wrap=True)
    stderr.print(f"wrote {out / 'broker_metrics.parquet'} and {out / 'summary.json'}", markup=False, soft_wrap=True)
