"""Data Docs list every suite; the Spark engine reaches the same verdicts as pandas."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kafka_rebalance.validation import validate_plan
from kafka_rebalance.validation.suites import SUITE_NAMES
from tests.support.plans import restamp, small_plan, write_json


def test_data_docs_index_lists_every_suite_and_custom_names(good_plan) -> None:
    plan, snapshot = good_plan
    outcome = validate_plan(plan, snapshot)
    index = outcome.docs_index
    assert index == plan / "validation" / "data_docs" / "index.html"
    html = index.read_text()
    assert html.lstrip().lower().startswith("<!doctype html") or "<html" in html[:500].lower()
    for suite in SUITE_NAMES:
        assert (index.parent / "expectations" / f"{suite}.html").is_file()
        assert f"expectations/{suite}.html" in html
        assert re.search(rf"validations/{suite}/", html), f"no validation result page for {suite}"
    page = (index.parent / "expectations" / "reassignment_plan.html").read_text()
    assert "expect_partition_spread_over_min_rf_racks" in page
    assert "expect_broker_moves_per_batch_within_limit" in page


def test_second_run_docs_show_only_this_plan(tmp_path: Path) -> None:
    first, snap1 = small_plan(tmp_path / "a")
    second, snap2 = small_plan(tmp_path / "b")
    validate_plan(first, snap1)
    validate_plan(second, snap2)
    pages = list((second / "validation" / "data_docs" / "validations").rglob("*.html"))
    assert len(pages) == len(SUITE_NAMES)


@pytest.mark.spark
@pytest.mark.slow
def test_spark_engine_same_verdicts(tmp_path: Path, spark) -> None:
    plan, snapshot = small_plan(tmp_path)
    passed = validate_plan(plan, snapshot, engine="spark", spark=spark)
    assert passed.status == "passed", passed.report()
    assert json.loads((plan / "validation" / "result.json").read_text())["engine"] == "spark"

    path = plan / "batches" / "001" / "reassignment.json"
    doc = json.loads(path.read_text())
    doc["partitions"][0]["replicas"] = [2, 0]  # both rack-a
    write_json(path, doc)
    restamp(plan)
    spark_out = validate_plan(plan, snapshot, engine="spark", spark=spark)
    pandas_out = validate_plan(plan, snapshot, engine="pandas")
    assert "reassignment_plan.expect_partition_spread_over_min_rf_racks" in spark_out.failed_expectations()
    assert spark_out.failed_expectations() == pandas_out.failed_expectations()
    assert [f.rows for f in spark_out.failures] == [f.rows for f in pandas_out.failures]
