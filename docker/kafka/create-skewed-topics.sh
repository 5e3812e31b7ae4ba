#!/usr/bin/env bash
# One-shot: create topics whose replicas and leaders are deliberately piled onto broker 1,
# then write some data, so the live path (gather -> analyze -> plan -> execute) has real work.
# Idempotent: existing topics are left as they are (--if-not-exists); re-running only adds data.
#
# --replica-assignment lists each partition's replicas, comma between partitions, colon
# between replicas; the FIRST replica is the preferred leader. Broker ids are 1, 2, 3
# (racks rack-a, rack-b, rack-c).
set -euo pipefail
BOOTSTRAP="${BOOTSTRAP:-kafka-1:19092,kafka-2:19092,kafka-3:19092}"
RECORDS="${SEED_RECORDS:-20000}"
BIN=/opt/kafka/bin

create() {  # topic assignment
  "$BIN/kafka-topics.sh" --bootstrap-server "$BOOTSTRAP" --create --if-not-exists \
    --topic "$1" --replica-assignment "$2"
}

# Every preferred leader on broker 1: leader imbalance (replica counts stay even at RF 3).
create orders   "1:2:3,1:3:2,1:2:3,1:3:2,1:2:3,1:3:2"
# RF 2 on brokers 1 and 2 only: broker 3 (rack-c) holds none of it; broker 1 leads most.
create clicks   "1:2,1:2,1:2,1:2,2:1,1:2,1:2,2:1"
# RF 1, everything on broker 1: bytes skew (the producer below fills it).
create audit-log "1,1,1,1"

for topic in clicks audit-log; do
  "$BIN/kafka-producer-perf-test.sh" --topic "$topic" --num-records "$RECORDS" --record-size 1000 \
    --throughput -1 --producer-props bootstrap.servers="$BOOTSTRAP" acks=1 >/dev/null
done
"$BIN/kafka-topics.sh" --bootstrap-server "$BOOTSTRAP" --describe --topic 'orders|clicks|audit-log'
echo "skewed topics ready"
