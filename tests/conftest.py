"""Session-wide fixtures. Heavy components (Spark, Airflow DB) are started once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "sample-cluster.json"


@pytest.fixture(scope="session")
def sample_snapshot_path() -> Path:
    return SAMPLE
