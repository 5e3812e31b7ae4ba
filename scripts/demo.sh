#!/usr/bin/env bash
set -euo pipefail
cd "$(dirname "$0")/.."
K=".venv/bin/kafka-rebalance"
$K describe --snapshot samples/sample-cluster.json
