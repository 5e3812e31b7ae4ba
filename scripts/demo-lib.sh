# Sourced by scripts/demo.sh and scripts/demo-simulated.sh: what both demos share.
# demo_env: Airflow on SQLite in a project-local AIRFLOW_HOME, Spark local, a fresh data directory.
# demo_run_dag DAG CONF: migrate the DB, run the DAG with `airflow dags test` while a demo-only
# helper answers the approval through Airflow's REST API, then show the pipeline's own log lines.

demo_env() {
  ROOT="$PWD"
  export PATH="$ROOT/.venv/bin:$PATH"
  export AIRFLOW_HOME="$ROOT/.airflow"
  export AIRFLOW__CORE__DAGS_FOLDER="$ROOT/dags"
  export AIRFLOW__CORE__PLUGINS_FOLDER="$ROOT/plugins"
  export AIRFLOW__CORE__LOAD_EXAMPLES=False
  export AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS=True
  export AIRFLOW_CONN_SPARK_DEFAULT='{"conn_type": "spark", "host": "local[*]"}'
  # Each demo gets its own data directory: no earlier demo's staged plan, approval or ledger is
  # touched (a repeated plan would otherwise resume from that ledger with every batch finished).
  export KAFKA_REBALANCE_HOME="${KAFKA_REBALANCE_HOME:-$ROOT/var/demo-$(date -u +%Y%m%dT%H%M%SZ)}"
  export PYSPARK_PYTHON="$ROOT/.venv/bin/python" PYSPARK_DRIVER_PYTHON="$ROOT/.venv/bin/python"
  # Approvals are signed (plugins/kafka_rebalance/approval_key.py): the demo makes its own key, never printed.
  export KAFKA_REBALANCE_APPROVAL_KEY="${KAFKA_REBALANCE_APPROVAL_KEY:-$("$ROOT/.venv/bin/python" -c 'import secrets; print(secrets.token_hex(32))')}"
  LOG="$KAFKA_REBALANCE_HOME/demo.log"
  mkdir -p "$KAFKA_REBALANCE_HOME"
}

demo_run_dag() {
  local dag="$1" conf="$2" started approver
  echo "== Preparing Airflow's metadata DB in $AIRFLOW_HOME (SQLite)"
  airflow db migrate > "$LOG" 2>&1 || { tail -20 "$LOG"; exit 1; }
  echo "== Running DAG $dag in execute mode (airflow dags test; full log: $LOG)"
  # The approver's in-process API server logs every poll: keep that in the log file.
  AIRFLOW__LOGGING__LOGGING_LEVEL=WARNING python scripts/demo_approve.py "$dag" 2>>"$LOG" &
  approver=$!
  started=$(date +%s)
  if ! airflow dags test "$dag" --conf "$conf" >> "$LOG" 2>&1; then
    kill "$approver" 2>/dev/null || true
    echo "error: the DAG run failed; last lines of $LOG:" >&2
    tail -30 "$LOG" >&2
    exit 1
  fi
  wait "$approver" || { echo "error: the approval was not answered" >&2; exit 1; }
  # What the pipeline and the executor said, without Airflow's own chatter.
  grep -E "\[kafka_rebalance\.(orchestration\.pipeline|executor\.executor)\]|\[DAG TEST\] end task" "$LOG" \
    | sed -E 's/^[0-9T:.-]+Z \[[a-z ]+\] //; s/ +\[(kafka_rebalance|airflow)[^]]*\].*$//' | cut -c1-160 || true
  echo "== DAG run finished in $(( $(date +%s) - started ))s"
}
