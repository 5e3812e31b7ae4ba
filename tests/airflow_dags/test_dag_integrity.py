"""Every DAG file parses with no import errors, and every DAG has tags, an owner's retries and a form."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dagbag(airflow_db):
    from airflow.dag_processing.dagbag import DagBag

    return DagBag(dag_folder=str(ROOT / "dags"))


def test_no_import_errors(dagbag) -> None:
    assert dagbag.import_errors == {}


def test_expected_dags(dagbag) -> None:
    assert {"kafka_rebalance_demo_eu_1", "kafka_fleet_imbalance"} <= set(dagbag.dag_ids)


def test_every_dag_has_tags_and_one_active_run(dagbag) -> None:
    for dag_id in dagbag.dag_ids:
        dag = dagbag.get_dag(dag_id)
        assert dag.tags, dag_id
        assert dag.max_active_runs == 1, dag_id
        assert all(t.retries is not None for t in dag.tasks), dag_id


def test_cluster_dag_trigger_form(dagbag) -> None:
    dag = dagbag.get_dag("kafka_rebalance_demo_eu_1")
    params = dag.params
    assert set(params.keys()) == {
        "mode", "threshold_percentage", "max_partitions_per_batch", "max_moves_per_broker", "throttle",
        "ordering", "optimizer", "goals", "exclude_topics", "decommission_brokers", "max_disk_usage", "relieve", "rearm",
        "window",
        "capacity",
    }  # fmt: skip
    # broker capacities: a JSON object over the snapshot's (empty: none), refused when it is no object
    assert params["capacity"] is None
    assert params.get_param("capacity").resolve({"default": {"disk_bytes": "1TB"}}) == {"default": {"disk_bytes": "1TB"}}
    assert params["window"] == "configured"
    for good in ("now", "configured", "2026-11-25T01:00Z/PT4H", "2026-11-25T01:00:00+01:00/2026-11-25T05:00:00+01:00"):
        assert params.get_param("window").resolve(good) == good
    # Re-arming (archive the ledger, run afresh) is an explicit choice, off unless asked for.
    assert params["rearm"] is False
    assert params.get_param("rearm").schema["type"] == "boolean"
    assert params.get_param("mode").schema["enum"] == ["dry-run", "execute"]
    assert params.get_param("optimizer").schema["enum"] == ["auto", "exact", "heuristic"]
    # the goals: a list of the registered goals' names, empty (every goal) unless the cluster says otherwise
    assert params["goals"] == []
    assert params.get_param("goals").resolve(["bytes", "replica-count"]) == ["bytes", "replica-count"]
    # Each field refuses bad values (the REST trigger test shows the API refusing them too).
    from airflow.sdk.exceptions import ParamValidationError

    for name, bad in [("max_moves_per_broker", 0), ("mode", "yolo"), ("throttle", "-5MiB/s"), ("throttle", "fast"),
                      ("throttle", "50Mb/s"), ("throttle", 52428800),
                      ("ordering", "random"), ("optimizer", "fastest"), ("decommission_brokers", ["x"]), ("threshold_percentage", 150),
                      ("rearm", "yes"), ("window", "tonight"), ("window", "2026-11-25T01:00Z"), ("goals", ["cpu"]),
                      ("capacity", [1])]:
        with pytest.raises(ParamValidationError):
            params.get_param(name).resolve(bad)
    # The throttle is text in the CLI's spellings, so the form's input never clamps it; its range is
    # checked when the run starts (tests/test_options.py), with a line naming the field.
    assert params["throttle"] == "50MiB/s"
    for good in ("75MiB/s", "75MB", "78643200", "0"):
        assert params.get_param("throttle").resolve(good) == good
    assert params.get_param("threshold_percentage").resolve(None) is None
