"""Registers the rebalance plan/report pages with Airflow (the only thing that must be a plugin).

* a FastAPI app under /kafka-rebalance in the API server, serving staged plans read-only to users
  Airflow authenticates and allows to read the DAG runs (see report_app);
* a "Rebalance report" tab on every DAG run (it opens the report of the plan that run staged);
* a "Kafka rebalance plans" entry in the navigation listing every staged plan.
"""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from kafka_rebalance.orchestration.report_app import PREFIX, app


class KafkaRebalancePlugin(AirflowPlugin):
    name = "kafka_rebalance"
    fastapi_apps = [{"app": app, "url_prefix": PREFIX, "name": "Kafka rebalance plans and reports"}]
    external_views = [
        {"name": "Rebalance report", "href": f"{PREFIX}/runs/{{DAG_ID}}/{{RUN_ID}}", "destination": "dag_run",
         "url_route": "rebalance_report"},
        {"name": "Kafka rebalance plans", "href": f"{PREFIX}/", "destination": "nav", "url_route": "rebalance_plans"},
    ]  # fmt: skip
