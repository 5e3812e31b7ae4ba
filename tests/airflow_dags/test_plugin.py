"""The Airflow plugin: loaded by Airflow, its pages served by the real API server app."""

from __future__ import annotations

import json
import os
from pathlib import Path


def test_plugin_registers_views_and_serves_staged_plans(airflow_db, tmp_path: Path) -> None:  # noqa: ANN001
    from airflow import plugins_manager
    from airflow.api_fastapi.app import create_app
    from fastapi.testclient import TestClient

    names = [p.name for p in plugins_manager.get_plugins()] if hasattr(plugins_manager, "get_plugins") else None
    if names is not None:
        assert "kafka_rebalance" in names
    plans = Path(os.environ["KAFKA_REBALANCE_HOME"]) / "plans" / "c1" / "abcdef0123456789"
    plans.mkdir(parents=True, exist_ok=True)
    (plans / "plan.json").write_text(json.dumps({"summary": {"replica_moves": 7}, "validation": {"status": "passed"}}))
    (plans / "report.html").write_text("<html>the report</html>")
    client = TestClient(create_app())
    index = client.get("/kafka-rebalance/")
    assert index.status_code == 200 and "abcdef0123456789" in index.text and "<td>7</td>" in index.text
    report = client.get("/kafka-rebalance/plans/c1/abcdef0123456789/report.html")
    assert report.status_code == 200 and "the report" in report.text
    # An encoded ../ reaches our route (a plain one is normalised away by the client) and is refused.
    escape = client.get("/kafka-rebalance/plans/c1/abcdef0123456789/..%2F..%2F..%2F..%2F..%2F..%2Fetc%2Fpasswd")
    assert escape.status_code == 404 and "root:" not in escape.text
    assert client.get("/kafka-rebalance/plans/c1/abcdef0123456789/nope.html").status_code == 404
    # The run view for a run that staged nothing says so instead of failing.
    r = client.get("/kafka-rebalance/runs/kafka_rebalance_balanced/manual__nothing")
    assert r.status_code == 200 and "staged no plan" in r.text
    views = client.get("/api/v2/plugins").json()
    mine = next(p for p in views["plugins"] if p["name"] == "kafka_rebalance")
    assert {v["destination"] for v in mine["external_views"]} == {"dag_run", "nav"}
