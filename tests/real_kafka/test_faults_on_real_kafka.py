"""Faults production brings, mid-move, on real Apache Kafka; judged by Kafka's own tools.

Each test runs a real ``kafka-rebalance execute`` process whose moves are kept in flight by a low
throttle, brings a fault while they are, and then asks Kafka: ``kafka-topics --describe`` for where
every partition is, ``kafka-configs --describe`` for throttles left, ``ListPartitionReassignments`` for
moves left running. Nothing may be lost, no throttle left, and the next run finishes the work.
Faults that take a node or a disk down run on clusters of their own: test_faults_on_own_clusters.py.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from kafka_rebalance.sandbox.seed import SeedSpec, seed
from tests.support.kafka import (
    cli,
    describe_partitions,
    execute_in_background,
    final_targets,
    gather,
    in_flight,
    plan_validate_and_approve,
    reap,
    throttles_anywhere,
    tool,
    wait_for,
)

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


def test_someone_elects_a_leader_and_deletes_a_partition_mid_move(kafka_sandbox, topic_prefix, tmp_path):
    """Someone runs a preferred election over every partition and deletes a topic the plan is moving.

    The run watches its other moves to their end, fails the deleted topic's moves by name, restores
    every throttle (the deleted topic's went with it) and exits 1. The plan cannot finish any more: the
    next run refuses in one line naming the partitions that no longer exist and saying to re-plan, and
    changes nothing. A plan made from a fresh snapshot then finishes.
    """
    # 2 topics of 4 x 1 MiB partitions packed on brokers 1 and 2; every move is in flight at once under 256 KiB/s.
    seed(kafka_sandbox, SeedSpec(topics=2, partitions=4, mb_per_partition=1, skew=1.0, seed=5, topic_prefix=topic_prefix))
    snap_path = gather(kafka_sandbox, tmp_path / "before.json", topic_prefix)
    plan_dir = tmp_path / "plan"
    plan_validate_and_approve(snap_path, plan_dir, "--throttle", str(256 * 1024), "--max-moves-per-broker", "8")
    targets = final_targets(plan_dir)
    assert len({t for t, _ in targets}) == 2, targets
    bs = kafka_sandbox.bootstrap_servers

    proc = execute_in_background(kafka_sandbox, plan_dir)
    try:
        wait_for(lambda: proc.poll() is not None or len({t for t, _ in in_flight(kafka_sandbox, topic_prefix)}) == 2,
                 60, "moves of both topics in flight")
        assert proc.poll() is None, "execute ended before its moves were in flight"
        moving = in_flight(kafka_sandbox, topic_prefix)
        victim = Counter(t for t, _ in moving).most_common(1)[0][0]
        lost = sorted(tp for tp in targets if tp[0] == victim)
        survivors = sorted(tp for tp in moving if tp[0] != victim)
        assert set(lost) <= moving and survivors, (moving, targets)
        # A preferred election over every partition (those mid-move whose preferred leader is still catching up
        # are refused by Kafka, so the tool exits 1), then the topic is deleted.
        elected = tool(kafka_sandbox, "kafka-leader-election", "--bootstrap-server", bs, "--election-type", "PREFERRED",
                       "--all-topic-partitions", check=False)
        assert "Successfully completed leader election (PREFERRED)" in elected.stdout, elected.stdout + elected.stderr
        tool(kafka_sandbox, "kafka-topics", "--bootstrap-server", bs, "--delete", "--topic", victim)
        out, err = proc.communicate(timeout=120)
    finally:
        reap(proc)

    assert proc.returncode == 1, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    assert err.rstrip().splitlines()[-1] == f"error: execution failed: see the batch report above and {plan_dir / 'ledger.json'}"
    report = json.loads(out)
    assert report["status"] == "failed"
    for topic, partition in lost:
        assert f"{topic}-{partition} failed: the partition disappeared" in err, err[-3000:]
    assert sorted(report["continuous"]["failed"]) == sorted(
        f"step {s['id']} {s['topic']}-{s['partition']}: the partition disappeared"
        for s in json.loads((plan_dir / "schedule.json").read_text())["steps"] if s["topic"] == victim)
    # Kafka's own view: the topic is gone, the other moves in flight landed, nothing left running or throttled.
    now = describe_partitions(kafka_sandbox, topic_prefix)
    assert not any(t == victim for t, _ in now), now
    for tp in survivors:
        assert now[tp]["replicas"] == targets[tp], (tp, now[tp])
    assert in_flight(kafka_sandbox, topic_prefix) == set()
    assert throttles_anywhere(kafka_sandbox, topic_prefix) == {}
    # ... and our verify agrees: nothing of this plan is left throttled; the lost partitions do not exist.
    verified = cli("verify", "--plan", str(plan_dir), "--bootstrap-server", bs)
    verdict = json.loads(verified.stdout)
    assert verified.returncode == 1 and verdict["throttles_left"] == [], verified.stderr[-2000:]
    assert sorted(verdict["problems"]) == sorted(f"{t}-{p}: does not exist" for t, p in lost)

    # The next run refuses, in one line that names what is gone and what to do, and touches nothing.
    again = cli("execute", "--plan", str(plan_dir), "--bootstrap-server", bs, "--poll-interval", "1")
    lines = again.stderr.strip().splitlines()
    assert again.returncode == 2 and len(lines) == 1, again.stderr[-3000:]
    assert lines[0].startswith(f"error: {plan_dir}: the cluster changed since planning ({len(lost)} partition(s)): ")
    assert lines[0].endswith("; re-plan from a fresh snapshot"), lines[0]
    for topic, partition in lost:
        assert f"{topic}-{partition} no longer exists" in lines[0], lines[0]
    assert describe_partitions(kafka_sandbox, topic_prefix) == now  # (a throttle it set would fail the last check)

    # What the operator does next: a plan from a fresh snapshot, which finishes.
    fresh = gather(kafka_sandbox, tmp_path / "after.json", topic_prefix)
    replan = tmp_path / "replan"
    plan_validate_and_approve(fresh, replan, "--throttle", str(4 << 20))
    done = cli("execute", "--plan", str(replan), "--bootstrap-server", bs, "--poll-interval", "1")
    assert done.returncode == 0, done.stderr[-3000:]
    now = describe_partitions(kafka_sandbox, topic_prefix)
    for tp, target in final_targets(replan).items():
        assert now[tp]["replicas"] == target, (tp, now[tp])
    assert throttles_anywhere(kafka_sandbox, topic_prefix) == {}
