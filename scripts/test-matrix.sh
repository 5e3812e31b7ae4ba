#!/usr/bin/env bash
# `make test-matrix`: the operator's whole path (sandbox, seed, gather, plan, validate, approve, execute,
# verify, stop by pid) on every Kafka release of tests/matrix/test_version_matrix.py, KRaft and ZooKeeper
# mode; prints the table docs/KAFKA.md records. Not part of `make test`: minutes per release on 2 cores.
#   scripts/test-matrix.sh                      every release
#   scripts/test-matrix.sh -k 3.7.2-zookeeper   one (any pytest arguments pass through)
# Each release's jars are resolved from Maven Central once (scripts/kafka-classpath.sh VERSION), first.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${VENV_BIN:-.venv/bin}"
versions=$(grep -o '("[0-9.]*", "[a-z]*")' tests/matrix/test_version_matrix.py | cut -d'"' -f2 | sort -u)
for v in $versions; do
  scripts/kafka-classpath.sh "$v"
done
exec "$BIN/python" -m pytest tests/matrix -m matrix --durations=0 "$@"
