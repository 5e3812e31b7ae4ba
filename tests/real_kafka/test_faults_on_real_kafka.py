"""Faults production brings, mid-move, on real Apache Kafka; judged by Kafka's own tools.

Each test runs a real ``kafka-rebalance execute`` process whose moves are kept in flight by a low
throttle, brings a fault while they are, and then asks Kafka: ``kafka-topics --describe`` for where
every partition is, ``kafka-configs --describe`` for throttles left, ``ListPartitionReassignments`` for
moves left running. Nothing may be lost, no throttle left, and the next run finishes the work.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from kafka_rebalance.sandbox.seed import SeedSpec, seed
from tests.support.kafka import (
    ROOT,
    admin,
    cli,
    describe_partitions,
    final_targets,
    gather,
    plan_validate_and_approve,
    throttles_anywhere,
    tool,
    wait_for,
)

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


def _in_flight(sandbox, prefix: str) -> set[tuple[str, int]]:
    """The partitions of this test's topics that Kafka is reassigning now."""
    client = admin(sandbox)
    try:
        return {(tp.topic, tp.partition) for tp in client.list_partition_reassignments() if tp.topic.startswith(prefix)}
    finally:
        client.close()


def _execute(sandbox, plan_dir: Path, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    return subprocess.Popen([sys.executable, "-m", "kafka_rebalance.cli", "execute", "--plan", str(plan_dir),
                             "--bootstrap-server", sandbox.bootstrap_servers, "--poll-interval", "0.5", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


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

    proc = _execute(kafka_sandbox, plan_dir)
    try:
        wait_for(lambda: proc.poll() is not None or len({t for t, _ in _in_flight(kafka_sandbox, topic_prefix)}) == 2,
                 60, "moves of both topics in flight")
        assert proc.poll() is None, "execute ended before its moves were in flight"
        moving = _in_flight(kafka_sandbox, topic_prefix)
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
        if proc.poll() is None:  # pragma: no cover - only when an assertion above failed or the run hung
            proc.kill()
            proc.communicate()

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
    assert _in_flight(kafka_sandbox, topic_prefix) == set()
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


def _quorum_leader(sandbox) -> int | None:
    """The active controller, as Kafka's own kafka-metadata-quorum reports it (None while it cannot say)."""
    # kafka-metadata-quorum's main class (bin/kafka-metadata-quorum.sh runs it).
    done = tool(sandbox, "org.apache.kafka.tools.MetadataQuorumCommand", "--bootstrap-server", sandbox.bootstrap_servers,
                "describe", "--status", check=False, timeout=60)
    for line in done.stdout.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "LeaderId" and value.strip().lstrip("-").isdigit():
            return int(value)
    return None


def test_the_active_controller_killed_mid_move(tmp_path):
    """kill -9 of the active controller of a 3-controller quorum (combined nodes: it is a broker of the moves too),
    mid-move; restarted a few seconds later. The run rides it out or ends cleanly; either way no throttle is left
    and a re-run finishes the plan, by kafka-topics --describe and kafka-configs --describe.

    The session's sandbox must not be left with a node down for other tests: this test runs its own.
    """
    from kafka_rebalance.sandbox import cluster

    directory = tmp_path / "sb"
    sandbox = cluster.up(directory, brokers=3, racks=3)
    try:
        prefix = "ctl"
        # 6 x 1 MiB packed on brokers 1 and 2, two moves per broker at a time under 128 KiB/s: the moves outlast the
        # failover and the restart, so every broker answers when the run ends.
        seed(sandbox, SeedSpec(topics=1, partitions=6, mb_per_partition=1, skew=1.0, seed=5, topic_prefix=prefix))
        snap_path = gather(sandbox, tmp_path / "before.json", prefix)
        plan_dir = tmp_path / "plan"
        plan_validate_and_approve(snap_path, plan_dir, "--throttle", str(128 * 1024), "--max-moves-per-broker", "2")
        targets = final_targets(plan_dir)
        proc = _execute(sandbox, plan_dir)
        try:
            wait_for(lambda: proc.poll() is not None or bool(_in_flight(sandbox, prefix)), 60, "moves in flight")
            assert proc.poll() is None, "execute ended before its moves were in flight"
            victim = _quorum_leader(sandbox)
            assert victim is not None
            cluster.kill_node(sandbox, victim)  # by the pid sandbox.json records, checked to be that node's
            assert not cluster.pid_alive(sandbox.node(victim).pid)
            # Kafka's own account that the quorum failed over to another controller.
            wait_for(lambda: _quorum_leader(sandbox) not in (None, victim), 60, "a new active controller", poll=1)
            assert proc.poll() is None, "execute ended while the controller was down"
            cluster.restart_node(sandbox, victim)  # its own config and data; sandbox.json gets the new pid
            out, err = proc.communicate(timeout=180)
        finally:
            if proc.poll() is None:  # pragma: no cover - only when an assertion above failed or the run hung
                proc.kill()
                proc.communicate()
        assert "Traceback" not in err, err[-3000:]
        # Either it rode the failover out, or it ended cleanly as failed/incomplete; never with a throttle left.
        assert proc.returncode in (0, 1), err[-3000:]
        status = json.loads(out)["status"]
        assert status == ("complete" if proc.returncode == 0 else status) and status in ("complete", "failed", "incomplete")
        assert throttles_anywhere(sandbox, prefix) == {}, f"victim {victim}, exit {proc.returncode}: {err[-4000:]}"
        again = cli("execute", "--plan", str(plan_dir), "--bootstrap-server", sandbox.bootstrap_servers, "--poll-interval", "1")
        assert again.returncode == 0, again.stderr[-3000:]
        if proc.returncode == 0:  # a re-run of a finished plan says so and changes nothing
            assert "is already complete" in again.stderr, again.stderr[-3000:]
        now = describe_partitions(sandbox, prefix)
        for tp, target in targets.items():
            assert now[tp]["replicas"] == target, (tp, now[tp])
            assert set(now[tp]["isr"]) == set(target), (tp, now[tp])
        assert _in_flight(sandbox, prefix) == set()
        assert throttles_anywhere(sandbox, prefix) == {}
        print(f"\nactive controller {victim} killed mid-move; execute exited {proc.returncode}", file=sys.stderr)
    finally:
        cluster.down(directory)
