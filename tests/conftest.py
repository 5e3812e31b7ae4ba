"""Session-wide fixtures. Heavy components (Spark, Airflow DB) are started once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "sample-cluster.json"


@pytest.fixture(scope="session")
def sample_snapshot_path() -> Path:
    return SAMPLE


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
