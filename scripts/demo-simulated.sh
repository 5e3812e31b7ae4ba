#!/usr/bin/env bash
# `make demo SIMULATED=1`: the whole rebalance DAG, end to end, on the bundled sample cluster.
# Airflow on SQLite in a project-local AIRFLOW_HOME, Spark in local mode, Great
# Expectations, and the embedded Kafka simulator (no Kafka anywhere). The approval is
# answered through Airflow's REST API by a demo-only helper.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/demo-lib.sh
demo_env
DAG=kafka_rebalance_demo_eu_1

echo "== The sample cluster (samples/sample-cluster.json) before rebalancing"
kafka-rebalance describe --snapshot samples/sample-cluster.json

echo
demo_run_dag "$DAG" '{"mode": "execute"}'
python scripts/demo_summary.py "$KAFKA_REBALANCE_HOME" demo-eu-1
echo
echo "== The simulated cluster after the rebalance"
kafka-rebalance describe --snapshot "$(python -c "import json,sys; print(json.load(open(sys.argv[1]))['final_snapshot'])" "$(ls -t "$KAFKA_REBALANCE_HOME"/plans/demo-eu-1/*/verification.json | head -1)")"
