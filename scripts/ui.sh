#!/usr/bin/env bash
# `make ui`: Airflow standalone on 127.0.0.1 with this project's DAGs, the embedded
# simulated demo cluster and Spark in local mode. Open http://127.0.0.1:${UI_PORT:-8080}.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
PORT="${UI_PORT:-8080}"
export PATH="$ROOT/.venv/bin:$PATH"
export AIRFLOW_HOME="${AIRFLOW_HOME:-$ROOT/.airflow}"
export AIRFLOW__CORE__DAGS_FOLDER="$ROOT/dags"
export AIRFLOW__CORE__PLUGINS_FOLDER="$ROOT/plugins"
export AIRFLOW__CORE__LOAD_EXAMPLES=False
export AIRFLOW__API__HOST=127.0.0.1
export AIRFLOW__API__PORT="$PORT"
# Task processes report to the API server: it must be the port chosen above.
export AIRFLOW__CORE__EXECUTION_API_SERVER_URL="http://127.0.0.1:$PORT/execution/"
export AIRFLOW_CONN_SPARK_DEFAULT="${AIRFLOW_CONN_SPARK_DEFAULT:-{\"conn_type\": \"spark\", \"host\": \"local[*]\"\}}"
export KAFKA_REBALANCE_HOME="${KAFKA_REBALANCE_HOME:-$ROOT/var}"
export PYSPARK_PYTHON="$ROOT/.venv/bin/python" PYSPARK_DRIVER_PYTHON="$ROOT/.venv/bin/python"
echo "Airflow UI: http://127.0.0.1:$PORT  (user admin; password in $AIRFLOW_HOME/simple_auth_manager_passwords.json.generated)"
exec airflow standalone
