#!/usr/bin/env bash
# `make demo`: the pipeline on the bundled sample cluster, no Kafka needed.
set -euo pipefail
cd "$(dirname "$0")/.."
K=".venv/bin/kafka-rebalance"
SNAP="samples/sample-cluster.json"
OUT="${DEMO_OUT:-demo-output}"
mkdir -p "$OUT"

echo "== 1. The sample cluster ($SNAP): per-broker load and Kafka's leader imbalance ratio"
$K describe --snapshot "$SNAP"

echo
echo "== 2. Where Kafka itself would place a new 12-partition topic on these brokers (rack-aware)"
$K assign --brokers "$(.venv/bin/python -c "
import json; s = json.load(open('$SNAP'))
print(','.join(f\"{b['id']}:{b['rack']}\" for b in s['brokers']))")" --partitions 12 --replication-factor 3 --seed 1 --topic new-topic > "$OUT/new-topic-assignment.json"
echo "wrote $OUT/new-topic-assignment.json"
