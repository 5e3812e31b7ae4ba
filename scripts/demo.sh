#!/usr/bin/env bash
# `make demo`: the rebalance DAG end to end against a REAL Apache Kafka cluster.
#   1. `kafka-rebalance sandbox up` (3 KRaft nodes on 3 racks, from Maven Central jars) and `seed`
#      (deliberately unbalanced topics, real bytes in them);
#   2. the rebalance DAG through `airflow dags test` in execute mode, reaching the cluster through an
#      Airflow connection of type `kafka`: gather -> snapshot gate -> Spark -> plan -> GX gate ->
#      stage -> approval (answered through Airflow's REST API by a demo helper) -> throttled
#      execution -> elections -> final verification -> report;
#   3. the cluster before and after, as Kafka's own `kafka-topics --describe` and as our table;
#   4. `sandbox down` (always, also when something fails).
# `make demo SIMULATED=1` runs the same DAG on the embedded simulator instead (scripts/demo-simulated.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
DEMO_STARTED=${DEMO_STARTED:-$(date +%s)}
source scripts/demo-lib.sh
demo_env
SANDBOX="$KAFKA_REBALANCE_HOME/sandbox"
CLUSTER=sandbox-demo
DAG=kafka_rebalance_sandbox_demo

cleanup() {
  if [ -f "$SANDBOX/sandbox.json" ]; then
    echo "== kafka-rebalance sandbox down"
    kafka-rebalance sandbox down --dir "$SANDBOX" || true
  fi
}
trap cleanup EXIT

echo "== kafka-rebalance sandbox up: 3 KRaft nodes, 3 racks, Apache Kafka from Maven Central"
BOOTSTRAP=$(kafka-rebalance sandbox up --dir "$SANDBOX" --brokers 3 --racks 3)
echo "== kafka-rebalance sandbox seed: skewed topics with real data"
kafka-rebalance sandbox seed --dir "$SANDBOX" --topics 6 --partitions 12 --mb-per-partition "${DEMO_MB_PER_PARTITION:-2}" --skew 0.8 --seed 1

show_cluster() {
  echo "-- Kafka's own view (kafka-topics --describe), first topic of $(grep -c 'PartitionCount' "$1"):"
  awk '/^Topic: skewed-0\t/,0' "$1" | grep -E "^\s*Topic: skewed-0\b" | cut -f1-5
  echo "-- per broker (kafka-rebalance gather + describe):"
  kafka-rebalance describe --snapshot "$2"
}

scripts/kafka-tool kafka-topics --bootstrap-server "$BOOTSTRAP" --describe > "$KAFKA_REBALANCE_HOME/describe-before.txt"
kafka-rebalance gather --bootstrap-server "$BOOTSTRAP" --cluster-id "$CLUSTER" --out "$KAFKA_REBALANCE_HOME/before.json"
echo
echo "== The cluster before rebalancing"
show_cluster "$KAFKA_REBALANCE_HOME/describe-before.txt" "$KAFKA_REBALANCE_HOME/before.json"

# The DAG reaches the sandbox through an Airflow connection of type `kafka`, like any real cluster.
export AIRFLOW_CONN_KAFKA_SANDBOX="{\"conn_type\": \"kafka\", \"extra\": {\"bootstrap.servers\": \"$BOOTSTRAP\"}}"
export KAFKA_REBALANCE_CLUSTERS="$KAFKA_REBALANCE_HOME/clusters.yaml"
cat > "$KAFKA_REBALANCE_CLUSTERS" <<EOF
clusters:
  - cluster_id: $CLUSTER
    source: kafka_sandbox
    schedule: null
    executor: {poll_interval_seconds: 1, stall_seconds: 120}
EOF

# Every sandbox broker reports this host's filesystem as its disk: on a host fuller than the default
# --max-disk-usage the plan takes a limit above what the host holds (kafka_rebalance/sandbox/disk.py).
DISK_LIMIT=$(kafka-rebalance sandbox disk-limit --dir "$SANDBOX")
echo
demo_run_dag "$DAG" "{\"mode\": \"execute\", \"throttle\": \"40MiB/s\", \"max_moves_per_broker\": 12, \"max_disk_usage\": $DISK_LIMIT}"
python scripts/demo_summary.py "$KAFKA_REBALANCE_HOME" "$CLUSTER"

scripts/kafka-tool kafka-topics --bootstrap-server "$BOOTSTRAP" --describe > "$KAFKA_REBALANCE_HOME/describe-after.txt"
kafka-rebalance gather --bootstrap-server "$BOOTSTRAP" --cluster-id "$CLUSTER" --out "$KAFKA_REBALANCE_HOME/after.json"
echo
echo "== The cluster after rebalancing"
show_cluster "$KAFKA_REBALANCE_HOME/describe-after.txt" "$KAFKA_REBALANCE_HOME/after.json"
echo "-- throttle configs left on the cluster (Kafka's own kafka-configs --describe):"
{ scripts/kafka-tool kafka-configs --bootstrap-server "$BOOTSTRAP" --describe --entity-type brokers --all;
  scripts/kafka-tool kafka-configs --bootstrap-server "$BOOTSTRAP" --describe --entity-type topics; } 2>/dev/null \
  | grep -E "replication\.throttled\.(rate|replicas)=[^ ]" | grep -v "DEFAULT_CONFIG" || echo "   none"
echo
echo "== make demo took $(( $(date +%s) - DEMO_STARTED ))s in all (full Kafka describe output: $KAFKA_REBALANCE_HOME/describe-{before,after}.txt)"
