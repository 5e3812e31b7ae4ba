#!/usr/bin/env bash
# `make demo`: the whole rebalance DAG, end to end, on the bundled sample cluster.
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
python - "$KAFKA_REBALANCE_HOME" <<'PY'
import json, sys
from pathlib import Path
root = Path(sys.argv[1])
plans = sorted((root / "plans" / "demo-eu-1").glob("*/plan.json"), key=lambda p: p.stat().st_mtime)
if not plans:
    sys.exit("error: no staged plan found")
staged = plans[-1].parent
m = json.loads((staged / "plan.json").read_text())
s = m["summary"]
v = json.loads((staged / "verification.json").read_text())
print(f"plan            {staged}")
print(f"                {s['replica_moves']} replica moves (lower bound {s['lower_bounds']['replica_moves']}), "
      f"{s['bytes_moved'] / 2**20:,.0f} MiB, {len(m['batches'])} batches, estimated {s['estimated_seconds']:,.0f}s")
verdict = json.loads((staged / "validation" / "verdict.json").read_text())
print(f"validation      {verdict['status']} for plan {verdict['plan_hash'][:16]}  -> {staged / 'validation' / 'verdict.json'}")
print(f"                Data Docs: {staged / 'validation' / 'data_docs' / 'index.html'}")
print(f"verification    {v['status']}; brokers over threshold: {v['brokers_over_threshold'] or 'none'}; "
      f"throttles left: {v['throttles_left'] or 'none'}  -> {staged / 'verification.json'}")
report = staged / "report.html"
if report.exists():
    print(f"report          {report}")
print(f"final snapshot  {v['final_snapshot']}")
PY
echo
echo "== The simulated cluster after the rebalance"
kafka-rebalance describe --snapshot "$(python -c "import json,sys; print(json.load(open(sys.argv[1]))['final_snapshot'])" "$(ls -t "$KAFKA_REBALANCE_HOME"/plans/demo-eu-1/*/verification.json | head -1)")"
