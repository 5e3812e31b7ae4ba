"""The leader-imbalance job end to end: snapshots in, ``broker_metrics.parquet`` and ``summary.json`` out.

Shared by ``spark_jobs/leader_imbalance.py`` (spark-submit) and ``kafka-rebalance analyze``.
Results are small (one row per broker), so they are collected to the driver and written
there as ONE Parquet file and one JSON file: deterministic bytes, no part-files.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_rebalance.analysis import imbalance
from kafka_rebalance.analysis.load import Fleet, load_fleet
from kafka_rebalance.analysis.summary import fleet_summary
from kafka_rebalance.balance import Tolerances
from kafka_rebalance.errors import RebalanceError, SnapshotError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

BROKER_METRICS_FILE = "broker_metrics.parquet"
SUMMARY_FILE = "summary.json"
LOG4J_CONFIG = Path(__file__).with_name("log4j2.properties")
DEFAULT_MASTER = "local[*]"


def broker_metrics_schema():  # noqa: ANN201 - pyarrow is imported lazily
    import pyarrow as pa

    return pa.schema(
        [
            ("cluster_id", pa.string()),
            ("broker_id", pa.int32()),
            ("rack", pa.string()),
            ("alive", pa.bool_()),
            ("preferred_partitions", pa.int64()),
            ("preferred_not_led", pa.int64()),
            ("imbalance_ratio", pa.float64()),
            ("threshold_percentage", pa.float64()),
            ("threshold_source", pa.string()),
            ("exceeds_threshold", pa.bool_()),
            ("replicas", pa.int64()),
            ("leaders", pa.int64()),
            ("size_bytes", pa.int64()),
            ("leader_bytes_in_per_sec", pa.float64()),
            ("under_replicated_partitions", pa.int64()),
            ("could_lead_after_election", pa.int64()),
        ]
    )


@dataclass(frozen=True)
class AnalysisResult:
    broker_rows: list[dict[str, Any]]  # sorted by (cluster_id, broker_id)
    summary: dict[str, Any]


def build_session(master: str | None = DEFAULT_MASTER, app_name: str = "kafka-rebalance-analyze",
                  conf: Mapping[str, str] | None = None) -> SparkSession:
    """A SparkSession with Spark's logging at WARN; reuses the active one if there is one.

    ``master=None`` leaves the master to spark-submit (its ``--master``), or local[*]
    when plain Python starts the JVM.
    """
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    # spark-submit starts the JVM before our code runs and hands it over through this variable.
    launching_jvm = "PYSPARK_GATEWAY_PORT" not in os.environ and SparkContext._active_spark_context is None
    if master is None and launching_jvm:
        master = DEFAULT_MASTER
    if master is not None and master.startswith("local"):
        # Avoids the "hostname resolves to a loopback address" warning and any DNS trouble.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Python on executors is only needed if a plan ever ships Python; match the driver's.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    builder = builder.config("spark.ui.showConsoleProgress", "false")
    if launching_jvm:
        builder = builder.config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={LOG4J_CONFIG.as_uri()}")
        if master is not None and master.startswith("local"):
            builder = builder.config("spark.ui.enabled", "false")
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _check_problems(fleet: Fleet, flagged, stats: Sequence[Mapping[str, Any]], aggregates) -> None:  # noqa: ANN001
    """Turn counted malformed rows into a SnapshotError naming the file and example partitions."""
    for row in stats:
        problems = []
        for flag, what in imbalance.PROBLEM_FLAGS.items():
            count = row[flag]
            if not count:
                continue
            examples = imbalance.problem_examples(flagged.where(flagged.cluster_id == row["cluster_id"]), flag).collect()
            shown = "; ".join(
                f"{e.topic}-{e.partition} (replicas {e.replicas}, leader {e.leader}, isr {e.isr})" for e in examples
            )
            problems.append(f"{count} partition row(s): {what}, e.g. {shown}")
        if problems:
            raise SnapshotError(fleet.source_of(row["cluster_id"]), problems)
    if any(row["unknown_broker_replicas"] for row in stats):
        unknown = imbalance.unknown_brokers(aggregates, fleet.brokers).limit(20).collect()
        cid = unknown[0].cluster_id
        ids = [u.broker_id for u in unknown if u.cluster_id == cid]
        raise SnapshotError(
            fleet.source_of(cid),
            [f"replicas name broker(s) {', '.join(map(str, ids))} that are not in the snapshot's brokers"],
        )
    # JSON snapshots were checked row by row by load_snapshot; Parquet rows only here, at a shuffle's cost.
    if fleet.parquet_cluster_ids:
        scanned = fleet.partitions.where(fleet.partitions.cluster_id.isin(fleet.parquet_cluster_ids))
        dupes = imbalance.duplicate_partitions(scanned).limit(5).collect()
        if dupes:
            cid = dupes[0].cluster_id
            shown = ", ".join(f"{d.topic}-{d.partition} ({d['count']} times)" for d in dupes if d.cluster_id == cid)
            raise SnapshotError(fleet.source_of(cid), [f"duplicate partition rows: {shown}"])


def analyze(
    spark: SparkSession,
    snapshot: str | Path,
    threshold_setting: float | None = None,
    tolerances: Tolerances = Tolerances(),
) -> AnalysisResult:
    """Run the analysis on one snapshot file or a fleet directory; nothing is written."""
    from py4j.protocol import Py4JJavaError
    from pyspark import StorageLevel
    from pyspark.errors import PySparkException

    fleet = load_fleet(spark, snapshot, threshold_setting)
    flagged = imbalance.partition_flags(fleet.partitions, fleet.settings)
    # The aggregate has one row per broker: a few partitions are plenty, and cached data keeps its
    # partitioning (AQE does not coalesce it), so 200 shuffle partitions would mean 200 tasks per query.
    parts = max(1, spark.sparkContext.defaultParallelism)
    aggregates = imbalance.broker_aggregates(flagged).coalesce(parts).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        stats = [r.asDict() for r in imbalance.cluster_partition_stats(aggregates, fleet.brokers).collect()]
        _check_problems(fleet, flagged, stats, aggregates)
        rows = [r.asDict() for r in imbalance.broker_metrics(aggregates, fleet.brokers, fleet.settings).collect()]
    except RebalanceError:
        raise
    except (PySparkException, Py4JJavaError) as exc:  # e.g. a value Spark cannot read mid-scan: one line, no JVM trace
        sources = ", ".join(c.source for c in fleet.clusters)
        raise RebalanceError(f"{snapshot}: Spark failed reading the snapshot(s) ({sources}): {_first_line(exc)}") from None
    finally:
        aggregates.unpersist()
    return AnalysisResult(rows, fleet_summary(fleet.clusters, rows, stats, tolerances))


def write_outputs(result: AnalysisResult, out: str | Path) -> tuple[Path, Path]:
    """Write both files, each through a temporary name, so a failure never leaves a valid-looking half."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise RebalanceError(f"--out {out}: exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    metrics_path, summary_path = out / BROKER_METRICS_FILE, out / SUMMARY_FILE
    if metrics_path.is_dir():
        raise RebalanceError(f"{metrics_path}: is a directory (left by another tool?); remove it")
    schema = broker_metrics_schema()
    table = pa.Table.from_pylist([{f.name: r[f.name] for f in schema} for r in result.broker_rows], schema=schema)
    tmp_metrics, tmp_summary = metrics_path.with_name(".broker_metrics.tmp"), summary_path.with_name(".summary.tmp")
    pq.write_table(table, tmp_metrics, compression="zstd")
    tmp_summary.write_text(json.dumps(result.summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp_metrics, metrics_path)
    os.replace(tmp_summary, summary_path)
    return metrics_path, summary_path


def run(
    spark: SparkSession,
    snapshot: str | Path,
    out: str | Path,
    threshold_setting: float | None = None,
    tolerances: Tolerances = Tolerances(),
) -> AnalysisResult:
    result = analyze(spark, snapshot, threshold_setting, tolerances)
    write_outputs(result, out)
    return result
