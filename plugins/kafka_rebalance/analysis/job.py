"""The leader-imbalance job end to end: snapshots in, ``broker_metrics.parquet`` and ``summary.json`` out.

Shared by ``spark_jobs/leader_imbalance.py`` (spark-submit) and ``kafka-rebalance analyze``.
Results are small (one row per broker), so they are collected to the driver and written
there as ONE Parquet file and one JSON file: deterministic bytes, no part-files.
On clean input the analysis is one Spark job for the data (see ``imbalance``), plus a
broadcast of the per-cluster settings table for each of its two scans.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_rebalance.analysis import imbalance, summary
from kafka_rebalance.analysis.load import Fleet, load_fleet
from kafka_rebalance.analysis.summary_file import BROKER_METRICS_FILE, SUMMARY_FILE
from kafka_rebalance.atomic import atomic_write
from kafka_rebalance.balance import Tolerances
from kafka_rebalance.errors import RebalanceError, SnapshotError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

LOG4J_CONFIG = Path(__file__).with_name("log4j2.properties")
DEFAULT_MASTER = "local[*]"
DEFAULT_DRIVER_MEMORY = "1g"  # Spark's own default, stated so that -Xms can match it


def broker_metrics_schema():
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
    # PySpark otherwise records the Python call site of every DataFrame call, three JVM round
    # trips each: 70 % of the ~4,300 round trips that build the analysis query, 0.15 s of a
    # 0.6 s fixed cost. Our errors name the input, not a line of this package.
    builder = builder.config("spark.python.sql.dataFrameDebugging.enabled", "false")
    if launching_jvm:
        # The throughput collector with the heap sized up front: the analysis is one batch
        # query whose per-task buffers are short-lived, and G1's concurrent work and heap
        # growth cost 0.5-1 s of a 10M-row run on 2 cores (docs/PERFORMANCE.md). Only when we
        # start the JVM: under spark-submit the operator's own options stand.
        heap = (conf or {}).get("spark.driver.memory", DEFAULT_DRIVER_MEMORY)
        builder = builder.config("spark.driver.memory", heap)
        builder = builder.config(
            "spark.driver.extraJavaOptions",
            f"-Dlog4j2.configurationFile={LOG4J_CONFIG.as_uri()} -XX:+UseParallelGC -Xms{heap}",
        )
        builder = builder.config("spark.executor.extraJavaOptions", "-XX:+UseParallelGC")
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


# Settings for the analysis' query shape (one scan, one small aggregation), applied around the
# query and restored after, so a session handed in by the caller keeps its own settings.
#  * AQE off: the plan has one exchange whose output (one row per broker) is known to be tiny,
#    so there is nothing to re-plan; with AQE each exchange becomes its own Spark job and the
#    final stage is re-optimised and re-compiled, which is most of a small input's cost.
#  * Shuffle partitions: sized to the data by ``shuffle_partitions``, not the default 200
#    (200 reduce tasks and 200 shuffle files per map task for a few thousand rows).
#  * The file index lists paths on the driver: a fleet of more than 32 files would otherwise
#    start a Spark job just to list them.
#  * The Parquet vectorised reader (nested columns included) and broadcast of the small
#    settings table are Spark's defaults and are kept: both are set here so that a session
#    configured otherwise does not silently lose them.
def query_conf(partition_rows: int, parallelism: int) -> dict[str, str]:
    return {
        "spark.sql.adaptive.enabled": "false",
        "spark.sql.shuffle.partitions": str(shuffle_partitions(partition_rows, parallelism)),
        "spark.sql.sources.parallelPartitionDiscovery.threshold": "100000",
        "spark.sql.parquet.enableVectorizedReader": "true",
        "spark.sql.parquet.enableNestedColumnVectorizedReader": "true",
        "spark.sql.autoBroadcastJoinThreshold": "10485760",
    }


# Rows reaching the final aggregation: brokers, plus one duplicate-check group per 64 partition
# numbers of a topic. A reduce task keeps its groups in memory: this many per task is a few MB.
GROUPS_PER_REDUCE_TASK = 250_000


def shuffle_partitions(partition_rows: int, parallelism: int) -> int:
    """One reduce task per core, more only when the duplicate-check groups would crowd a task."""
    groups = partition_rows // imbalance.KEY_BITS
    return max(1, parallelism, -(-groups // GROUPS_PER_REDUCE_TASK))


@contextmanager
def _session_conf(spark: SparkSession, conf: Mapping[str, str]) -> Iterator[None]:
    old: dict[str, str | None] = {key: spark.conf.get(key, None) for key in conf}
    for key, value in conf.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, previous in old.items():
            if previous is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, previous)


def _check_problems(fleet: Fleet, flagged, stats: Sequence[Mapping[str, Any]], suspect_keys: set[int]) -> None:
    """Turn counted malformed rows into a SnapshotError naming the file and example partitions.

    Extra Spark queries run here only when a count says there is something to report.
    """
    for no, (info, row) in enumerate(zip(fleet.clusters, stats)):
        problems = []
        for flag, what in imbalance.PROBLEM_FLAGS.items():
            count = row[flag]
            if not count:
                continue
            examples = imbalance.problem_examples(flagged.where(flagged.cluster_no == no), flag).collect()
            shown = "; ".join(
                f"{e.topic}-{e.partition} (replicas {e.replicas}, leader {e.leader}, isr {e.isr})" for e in examples
            )
            problems.append(f"{count} partition row(s): {what}, e.g. {shown}")
        if problems:
            raise SnapshotError(info.source, problems)
    for info, row in zip(fleet.clusters, stats):
        if row["unknown_brokers"]:
            ids = sorted(row["unknown_brokers"])[:20]
            raise SnapshotError(
                info.source, [f"replicas name broker(s) {', '.join(map(str, ids))} that are not in the snapshot's brokers"]
            )
    # The cheap check (bits per 64 partition numbers, inside the one aggregation) failed for these
    # clusters: a duplicate, or two topic names with the same hash. The exact report decides.
    for no in sorted(suspect_keys):
        rows = fleet.partitions.where(fleet.partitions.cluster_no == no)
        dupes = imbalance.duplicate_partitions(rows).limit(5).collect()
        if dupes:
            shown = ", ".join(f"{d.topic}-{d.partition} ({d['count']} times)" for d in dupes)
            raise SnapshotError(fleet.clusters[no].source, [f"duplicate partition rows: {shown}"])


def analyze(
    spark: SparkSession,
    snapshot: str | Path,
    threshold_setting: float | None = None,
    tolerances: Tolerances = Tolerances(),
) -> AnalysisResult:
    """Run the analysis on one snapshot file or a fleet directory; nothing is written.

    One Spark job on clean input (the aggregation's collect); more only to explain bad input.
    """
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    conf = query_conf(0, spark.sparkContext.defaultParallelism)
    with _session_conf(spark, conf):
        fleet = load_fleet(spark, snapshot, threshold_setting)
    conf = query_conf(fleet.partition_rows, spark.sparkContext.defaultParallelism)
    suspect_keys: set[int] = set()
    with _session_conf(spark, conf):
        try:
            flagged = imbalance.partition_flags(fleet.partitions)
            groups: list[list[Any]] = [[] for _ in fleet.clusters]
            for row in imbalance.aggregate(flagged).collect():
                if row["key_hash"] is None:
                    groups[row["cluster_no"]].append(row)
                else:
                    suspect_keys.add(row["cluster_no"])
            by_cluster = [imbalance.broker_figures(g) for g in groups]
            stats = [{"cluster_id": c.cluster_id, **summary.partition_stats(c, aggs)}
                     for c, aggs in zip(fleet.clusters, by_cluster)]  # fmt: skip
            _check_problems(fleet, flagged, stats, suspect_keys)
            if any(s["long_replicas"] for s in stats):  # replica lists the one pass does not rack-check
                for row in imbalance.long_rack_violations(flagged).collect():
                    stats[row["cluster_no"]]["rack_violations"] += int(row["rack_violations"])
        except RebalanceError:
            raise
        except (PySparkException, Py4JJavaError) as exc:  # e.g. a value Spark cannot read mid-scan: one line, no JVM trace
            sources = ", ".join(c.source for c in fleet.clusters)
            raise RebalanceError(f"{snapshot}: Spark failed reading the snapshot(s) ({sources}): {_first_line(exc)}") from None
    rows = [row for c, aggs in zip(fleet.clusters, by_cluster) for row in summary.broker_metrics(c, aggs)]
    return AnalysisResult(rows, summary.fleet_summary(fleet.clusters, rows, stats, tolerances))


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
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    atomic_write(metrics_path, sink.getvalue().to_pybytes())
    atomic_write(summary_path, (json.dumps(result.summary, indent=2, sort_keys=True) + "\n").encode("utf-8"))
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
