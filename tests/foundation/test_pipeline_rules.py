"""Pipeline rules that need no scheduler: only a manual execute-mode trigger may execute."""

from __future__ import annotations

import pytest

from kafka_rebalance.pipeline import wants_execution


@pytest.mark.parametrize(
    ("run_type", "mode", "expected"),
    [
        ("manual", "execute", True),
        ("manual", "dry-run", False),
        ("scheduled", "execute", False),  # scheduled runs are dry runs whatever the defaults say
        ("asset_triggered", "execute", False),  # so are runs started by the fleet DAG's asset events
        ("backfill", "execute", False),
    ],
)
def test_only_manual_execute_runs_execute(run_type: str, mode: str, expected: bool) -> None:
    assert wants_execution(run_type, {"mode": mode}) is expected


def test_run_type_enum_is_understood() -> None:
    from airflow.utils.types import DagRunType

    assert wants_execution(DagRunType.MANUAL, {"mode": "execute"}) is True
    assert wants_execution(DagRunType.SCHEDULED, {"mode": "execute"}) is False
