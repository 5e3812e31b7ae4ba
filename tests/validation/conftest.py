"""Fixtures for the quality-gate tests: a known-good small plan, and one local SparkSession."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.validation.plan_helper import small_plan


@pytest.fixture
def good_plan(tmp_path: Path) -> tuple[Path, Path]:
    """(plan dir, snapshot path) of a hand-built plan that passes every expectation."""
    return small_plan(tmp_path)


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession
    session = (
        SparkSession.builder.master("local[1]")
        .appName("kafka-rebalance-validation-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .getOrCreate()
    )
    yield session
    session.stop()
