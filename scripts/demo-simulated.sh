#!/usr/bin/env bash
# `make demo SIMULATED=1`: the whole rebalance DAG, end to end, on the bundled sample cluster.
# Airflow on SQLite in a project-local AIRFLOW_HOME, Spark in local mode, Great
# Expectations, and the embedded Kafka simulator (no Kafka anywhere). The approval is
# answered through Airflow's REST API by a demo-only helper.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
export PATH="$ROOT/.venv/bin:$PATH"
export AIRFLOW_HOME="$ROOT/.airflow"
export AIRFLOW__CORE__DAGS_FOLDER="$ROOT/dags"
export AIRFLOW__CORE__PLUGINS_FOLDER="$ROOT/plugins"
export AIRFLOW__CORE__LOAD_EXAMPLES=False
export AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS=True
export AIRFLOW_CONN_SPARK_DEFAULT='{"conn_type": "spark", "host": "local[*]"}'
# Each demo gets its own data directory: a fresh simulated cluster from the sample, and no
# earlier demo's staged plan, approval or ledger is touched (a repeated plan would otherwise
# resume from that ledger with every batch already finished).
export KAFKA_REBALANCE_HOME="${KAFKA_REBALANCE_HOME:-$ROOT/var/demo-$(date -u +%Y%m%dT%H%M%SZ)}"
export PYSPARK_PYTHON="$ROOT/.venv/bin/python" PYSPARK_DRIVER_PYTHON="$ROOT/.venv/bin/python"
DAG=kafka_rebalance_demo_eu_1
LOG="$KAFKA_REBALANCE_HOME/demo.log"
mkdir -p "$KAFKA_REBALANCE_HOME"

echo "== The sample cluster (samples/sample-cluster.json) before rebalancing"
kafka-rebalance describe --snapshot samples/sample-cluster.json

echo
echo "== Preparing Airflow's metadata DB in $AIRFLOW_HOME (SQLite)"
airflow db migrate > "$LOG" 2>&1 || { tail -20 "$LOG"; exit 1; }

echo "== Running DAG $DAG in execute mode (airflow dags test; full log: $LOG)"
# The approver's in-process API server logs every poll: keep that in the log file.
AIRFLOW__LOGGING__LOGGING_LEVEL=WARNING python scripts/demo_approve.py "$DAG" 2>>"$LOG" &
APPROVER=$!
started=$(date +%s)
if ! airflow dags test "$DAG" --conf '{"mode": "execute"}' >> "$LOG" 2>&1; then
  kill "$APPROVER" 2>/dev/null || true
  echo "error: the DAG run failed; last lines of $LOG:" >&2
  tail -30 "$LOG" >&2
  exit 1
fi
wait "$APPROVER" || { echo "error: the approval was not answered" >&2; exit 1; }
# What the pipeline and the executor said, without Airflow's own chatter.
grep -E "\[kafka_rebalance\.(pipeline|kafka\.executor)\]|\[DAG TEST\] end task" "$LOG" \
  | sed -E 's/^[0-9T:.-]+Z \[[a-z ]+\] //; s/ +\[(kafka_rebalance|airflow)[^]]*\].*$//' | cut -c1-160 || true
echo "== DAG run finished in $(( $(date +%s) - started ))s"
python scripts/demo_summary.py "$KAFKA_REBALANCE_HOME" demo-eu-1
echo
echo "== The simulated cluster after the rebalance"
kafka-rebalance describe --snapshot "$(python -c "import json,sys; print(json.load(open(sys.argv[1]))['final_snapshot'])" "$(ls -t "$KAFKA_REBALANCE_HOME"/plans/demo-eu-1/*/verification.json | head -1)")"
