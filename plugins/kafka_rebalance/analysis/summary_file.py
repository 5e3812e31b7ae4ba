"""``summary.json``, the analysis' per-cluster verdicts, and ``broker_metrics.parquet``, its per-broker rows: their
names, and the one reader of each.

The Spark job writes it (analysis/job.py); the planner reads a cluster's threshold from it, and
the DAGs read "balanced?" and the fleet's table from it. A missing file, a file that is not a
summary, or a cluster it does not name is one error line naming the file, never a KeyError.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kafka_rebalance.userinput import InputError, read_json

SUMMARY_FILE = "summary.json"
BROKER_METRICS_FILE = "broker_metrics.parquet"


def read_summaries(analysis_dir: str | Path) -> list[dict[str, Any]]:
    """The ``clusters`` list of an analysis directory's summary.json (entries that are not objects left out)."""
    path = Path(analysis_dir) / SUMMARY_FILE
    if not path.exists():
        raise InputError(f"{analysis_dir}: no {SUMMARY_FILE} (give the Spark job's output directory)")
    raw = read_json(path, "analysis summary")
    clusters = raw.get("clusters") if isinstance(raw, dict) else None
    if not isinstance(clusters, list):
        raise InputError(f"{path}: field 'clusters' must be a list")
    return [entry for entry in clusters if isinstance(entry, dict)]


def cluster_entry(analysis_dir: str | Path, cluster_id: str) -> tuple[dict[str, Any], str]:
    """One cluster's entry, and where it is (for an error about one of its fields)."""
    path = Path(analysis_dir) / SUMMARY_FILE
    for entry in read_summaries(analysis_dir):
        if entry.get("cluster_id") == cluster_id:
            return entry, f"{path}: clusters[cluster_id={cluster_id}]"
    raise InputError(f"{path}: no entry for cluster_id {cluster_id!r} in 'clusters'")


def read_broker_metrics(analysis_dir: str | Path, cluster_id: str) -> list[dict[str, Any]]:
    """One cluster's rows of an analysis directory's broker_metrics.parquet, by broker id; [] without the file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(analysis_dir) / BROKER_METRICS_FILE
    if not path.is_file():
        return []
    try:
        rows = pq.read_table(path).to_pylist()
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"{path}: not a readable Parquet file: {str(exc)[:200]}") from None
    return sorted((r for r in rows if r.get("cluster_id") == cluster_id), key=lambda r: r.get("broker_id") or 0)
