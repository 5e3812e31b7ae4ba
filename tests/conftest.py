"""Session-wide fixtures. Heavy components (Spark, Airflow DB) are started once per session.

Airflow reads its configuration from the environment at import time, so the
test session's Airflow home (a fresh SQLite database, this checkout's dags/ and
plugins/) is set here, before anything imports airflow.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support.spark_standalone import spark_standalone  # noqa: F401 - a session fixture for every test package

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "sample-cluster.json"

_AIRFLOW_HOME = Path(tempfile.mkdtemp(prefix="kafka-rebalance-airflow-"))
os.environ.update(
    {
        "AIRFLOW_HOME": str(_AIRFLOW_HOME),
        "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "dags"),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(ROOT / "plugins"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
        "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
        "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[2]"}),
        "KAFKA_REBALANCE_HOME": str(_AIRFLOW_HOME / "data"),
        "KAFKA_REBALANCE_CLUSTERS": str(_AIRFLOW_HOME / "clusters.yaml"),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        # spark-submit (from pyspark) lives beside this interpreter.
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
)



def _write_test_clusters(home: Path) -> None:
    """The DAGs under test: one cluster per scenario, so simulated clusters never share state."""
    from kafka_rebalance.assignment import BrokerMetadata, assign_replicas_to_brokers

    racks = {b: f"rack-{b % 3}" for b in range(6)}
    placement = assign_replicas_to_brokers([BrokerMetadata(b, r) for b, r in racks.items()], 12, 3, start_index=0)
    balanced = {
        "cluster_id": "balanced",
        "brokers": [{"id": b, "rack": r} for b, r in racks.items()],
        "partitions": [
            {"topic": "orders", "partition": p, "replicas": r, "leader": r[0], "isr": r, "size_bytes": 1 << 30}
            for p, r in placement.items()
        ],
    }
    (home / "balanced-cluster.json").write_text(json.dumps(balanced))
    scenarios = ["demo-dry", "demo-exec", "demo-reject", "demo-fail"]
    lines = ["clusters:", f"  - {{cluster_id: balanced, source: 'simulated:{home / 'balanced-cluster.json'}', schedule: null}}"]
    lines += [f"  - {{cluster_id: {c}, source: 'simulated:{SAMPLE}', schedule: null}}" for c in scenarios]
    lines += [f"  - {{cluster_id: demo-eu-1, source: 'simulated:{SAMPLE}'}}"]
    (home / "clusters.yaml").write_text("\n".join(lines) + "\n")


_write_test_clusters(_AIRFLOW_HOME)


@pytest.fixture(scope="session")
def sample_snapshot_path() -> Path:
    return SAMPLE


@pytest.fixture(scope="session")
def airflow_db() -> Path:
    """One Airflow metadata DB (SQLite) for the whole session."""
    from airflow.utils import db

    db.initdb()
    return _AIRFLOW_HOME


@pytest.fixture(scope="session")
def spark():
    """ONE local SparkSession for the whole test session: a JVM start costs seconds."""
    from kafka_rebalance.analysis.job import build_session

    session = build_session(
        "local[2]",
        app_name="kafka-rebalance-tests",
        conf={"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2", "spark.ui.enabled": "false"},
    )
    yield session
    session.stop()
