"""The executor acts only on what its plan owns, judged by Kafka's own tools on real Apache Kafka.

A run is stopped with its moves in flight (kept slow by an operator's own throttle, which the run restores);
then Kafka's own ``kafka-reassign-partitions`` re-targets one of those moves and moves an unrelated partition.
``kafka-rebalance cancel`` must cancel only the moves this plan submitted to its own targets, and Kafka's
``--verify`` must still show the other tool's reassignments in progress.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from kafka_rebalance.plan_manifest import load_plan
from kafka_rebalance.sandbox.seed import SeedSpec, seed
from kafka_rebalance.snapshot import load_snapshot
from tests.support.kafka import (
    ROOT,
    admin,
    cli,
    describe_partitions,
    disk_limit_args,
    gather,
    plan_validate_and_approve,
    tool,
    wait_for,
)

pytestmark = [pytest.mark.kafka, pytest.mark.slow]
SLOW = "1024"  # bytes/s: the operator's throttle that keeps every move in flight for the test's length


def _configs(sandbox, entity_type: str, name: str, add: str | None = None, delete: str | None = None,
             check: bool = True) -> None:
    args = ["--bootstrap-server", sandbox.bootstrap_servers, "--alter", "--entity-type", entity_type, "--entity-name", name]
    tool(sandbox, "kafka-configs", *args, *(["--add-config", add] if add else []), *(["--delete-config", delete] if delete else []),
         check=check)


def _reassignments(sandbox) -> dict[tuple[str, int], dict]:
    """Kafka's answer to ListPartitionReassignments."""
    client = admin(sandbox)
    try:
        return {(tp.topic, tp.partition): r for tp, r in client.list_partition_reassignments().items()}
    finally:
        client.close()


def _in_flight(sandbox) -> dict[tuple[str, int], tuple[int, ...]]:
    """Each partition in flight and its target."""
    return {tp: tuple(b for b in r["replicas"] if b not in r["removing_replicas"]) for tp, r in _reassignments(sandbox).items()}


def _only_theirs_carry_on(sandbox, theirs: dict[tuple[str, int], tuple[int, ...]], prefix: str) -> None:
    """Nothing but the other tool's reassignments is in flight, and none of them was cancelled: each is still in
    flight to its target or has reached it. (Kafka's throttle lets a burst through whenever its rate window has
    room, so on a slow machine even a 1 KiB/s copy of a 1 MiB partition can end while the test runs.)"""
    flying = _in_flight(sandbox)
    assert set(flying) <= set(theirs), flying
    described = describe_partitions(sandbox, prefix)
    for tp, target in theirs.items():
        assert flying.get(tp) == target or tuple(described[tp]["replicas"]) == target, (tp, target, flying, described.get(tp))


def test_cancel_cancels_only_this_plans_moves_and_leaves_another_tools_alone(kafka_sandbox, topic_prefix, tmp_path):
    # 2 MiB partitions at 256 KiB/s: about 8 s a move, so the run is stopped with moves in flight, and the
    # re-run after the fault finishes the plan in seconds.
    seed(kafka_sandbox, SeedSpec(topics=1, partitions=6, mb_per_partition=2, skew=0.9, seed=5, topic_prefix=topic_prefix))
    other = f"{topic_prefix}-other"
    first, second = sorted(n.node_id for n in kafka_sandbox.nodes)[:2]
    client = admin(kafka_sandbox)
    try:
        from kafka.admin import NewTopic

        client.create_topics([NewTopic(other, replica_assignments={0: [first]})])
    finally:
        client.close()
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=kafka_sandbox.bootstrap_servers, acks=1, max_request_size=400_000)
    for _ in range(8):
        producer.send(other, os.urandom(128 * 1024), partition=0)
    producer.flush()
    producer.close()

    snap_path = gather(kafka_sandbox, tmp_path / "before.json", f"{topic_prefix}-0")
    plan_dir = tmp_path / "plan"
    manifest = plan_validate_and_approve(snap_path, plan_dir, "--throttle", str(256 * 1024), "--max-moves-per-broker", "6")
    assert manifest["summary"]["replica_moves"] >= 3
    brokers = [str(n.node_id) for n in kafka_sandbox.nodes]
    foreign_json = tmp_path / "foreign.json"
    try:
        # The operator's own throttle, on every broker and on both topics: the run records it, overrides it while it
        # runs and puts it back, so the moves it leaves in flight crawl on.
        for b in brokers:
            _configs(kafka_sandbox, "brokers", b, add=f"leader.replication.throttled.rate={SLOW},follower.replication.throttled.rate={SLOW}")
        for t in (f"{topic_prefix}-0", other):
            _configs(kafka_sandbox, "topics", t, add="leader.replication.throttled.replicas=*,follower.replication.throttled.replicas=*")

        env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
        proc = subprocess.Popen([sys.executable, "-m", "kafka_rebalance.cli", "execute", "--plan", str(plan_dir),
                                 "--bootstrap-server", kafka_sandbox.bootstrap_servers, "--poll-interval", "0.5"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        try:
            wait_for(lambda: proc.poll() is not None or len([tp for tp in _in_flight(kafka_sandbox) if tp[0] != other]) >= 2,
                      120, "two of the plan's moves in flight")
            assert proc.poll() is None, "execute ended before its moves were in flight"
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:  # pragma: no cover - only when an assertion above failed
                proc.kill()
                proc.communicate()
        assert proc.returncode == 143, err[-3000:]
        ours = _in_flight(kafka_sandbox)
        assert len(ours) >= 2, ours

        # Kafka's own tool re-targets one of our moves (to its copying replica and the one ours removes: a target
        # that still needs the copy, so it stays in flight) and moves an unrelated partition.
        # The largest of them: at the operator's 1 KiB/s its copy cannot end while the test runs (a small partition's
        # can, between two looks: the plan picks which partitions move, and sizes are skewed).
        size = {(p.topic, p.partition): p.size_bytes or 0 for p in load_snapshot(snap_path).partitions}
        retargeted = max(sorted(ours), key=lambda tp: size.get(tp, 0))
        current = _reassignments(kafka_sandbox)[retargeted]
        elsewhere = [*current["adding_replicas"], *current["removing_replicas"]][:len(ours[retargeted])]
        assert set(elsewhere) != set(ours[retargeted]), current
        rf = len(elsewhere)
        foreign = {"version": 1, "partitions": [
            {"topic": retargeted[0], "partition": retargeted[1], "replicas": elsewhere, "log_dirs": ["any"] * rf},
            {"topic": other, "partition": 0, "replicas": [second], "log_dirs": ["any"]}]}
        foreign_json.write_text(json.dumps(foreign))
        started = tool(kafka_sandbox, "kafka-reassign-partitions", "--bootstrap-server", kafka_sandbox.bootstrap_servers,
                       "--reassignment-json-file", str(foreign_json), "--execute", "--additional")
        theirs = {(retargeted[0], retargeted[1]): tuple(elsewhere), (other, 0): (second,)}
        try:
            wait_for(lambda: all(_in_flight(kafka_sandbox).get(tp) == t for tp, t in theirs.items()), 30, "the other tool's moves")
        except AssertionError as exc:
            raise AssertionError(f"{exc}: {theirs} wanted, {_in_flight(kafka_sandbox)} in flight; the tool said "
                                 f"{started.stdout[-2000:]} {started.stderr[-2000:]}") from None

        done = cli("cancel", "--plan", str(plan_dir), "--bootstrap-server", kafka_sandbox.bootstrap_servers)
        assert done.returncode == 0, done.stderr[-3000:]
        outcome = json.loads(done.stdout)
        mine = sorted(f"{t}-{p}" for (t, p) in ours if (t, p) != retargeted)
        assert sorted(outcome["cancelled"]) == mine
        assert outcome["left_alone"] == [f"{retargeted[0]}-{retargeted[1]}"]
        assert "left 1 reassignment(s) of this plan's partitions alone" in done.stderr

        # Kafka's own verdict: the other tool's two reassignments are still running, ours are gone.
        verify = tool(kafka_sandbox, "kafka-reassign-partitions", "--bootstrap-server", kafka_sandbox.bootstrap_servers,
                      "--reassignment-json-file", str(foreign_json), "--verify", "--preserve-throttles", check=False).stdout
        for tp in theirs:
            assert (f"Reassignment of partition {tp[0]}-{tp[1]} is still in progress" in verify
                    or f"Reassignment of partition {tp[0]}-{tp[1]} is completed" in verify), verify
        _only_theirs_carry_on(kafka_sandbox, theirs, topic_prefix)

        # A plan that was never validated or approved cancels nothing: refused before the cluster is touched.
        unapproved = tmp_path / "unapproved"
        cli("plan", "--snapshot", str(snap_path), "--out", str(unapproved), "--throttle", str(256 * 1024),
            *disk_limit_args(), check=True)
        refused = cli("cancel", "--plan", str(unapproved), "--bootstrap-server", kafka_sandbox.bootstrap_servers)
        assert refused.returncode == 2 and "never validated" in refused.stderr, refused.stderr
        _only_theirs_carry_on(kafka_sandbox, theirs, topic_prefix)

        # After the fault: the other tool cancels its reassignments, and a re-run of the same plan finishes it.
        tool(kafka_sandbox, "kafka-reassign-partitions", "--bootstrap-server", kafka_sandbox.bootstrap_servers,
             "--reassignment-json-file", str(foreign_json), "--cancel", "--preserve-throttles")
        wait_for(lambda: not _in_flight(kafka_sandbox), 60, "no reassignment in flight")
        # Kafka's replication quota lets a fetch through whenever its rate window has room, so on a loaded machine the
        # other tool's copy of our partition can land before its cancel: then the plan no longer matches the cluster,
        # and the re-run refuses it in one line naming that partition; the operator plans afresh, and that plan runs.
        now = describe_partitions(kafka_sandbox, f"{topic_prefix}-0")[retargeted]["replicas"]
        landed = set(now) == set(elsewhere)
        rerun = cli("execute", "--plan", str(plan_dir), "--bootstrap-server", kafka_sandbox.bootstrap_servers,
                    "--poll-interval", "0.5")
        if landed:
            lines = rerun.stderr.strip().splitlines()
            assert rerun.returncode == 2 and len(lines) == 1, rerun.stderr[-3000:]
            assert "the cluster changed since planning (1 partition(s))" in lines[0], lines[0]
            assert f"{retargeted[0]}-{retargeted[1]} has replicas {list(now)}" in lines[0], lines[0]
            fresh = gather(kafka_sandbox, tmp_path / "after.json", f"{topic_prefix}-0")
            plan_dir = tmp_path / "replan"
            plan_validate_and_approve(fresh, plan_dir, "--throttle", str(256 * 1024), "--max-moves-per-broker", "6")
            rerun = cli("execute", "--plan", str(plan_dir), "--bootstrap-server", kafka_sandbox.bootstrap_servers,
                        "--poll-interval", "0.5")
        assert rerun.returncode == 0, rerun.stderr[-3000:]
        assert cli("verify", "--plan", str(plan_dir), "--bootstrap-server", kafka_sandbox.bootstrap_servers).returncode == 0
        described = tool(kafka_sandbox, "kafka-topics", "--bootstrap-server", kafka_sandbox.bootstrap_servers,
                         "--describe", "--topic", f"{topic_prefix}-0").stdout
        targets = {(tp.topic, tp.partition): list(r) for tp, r in load_plan(plan_dir).final_targets.items()}
        seen = set()
        for line in described.splitlines():
            fields = dict(f.split(": ", 1) for f in line.strip().split("\t") if ": " in f)
            if "Partition" in fields and (key := (fields["Topic"], int(fields["Partition"]))) in targets:
                assert [int(b) for b in fields["Replicas"].split(",")] == targets[key], line
                assert sorted(fields["Isr"].split(",")) == sorted(fields["Replicas"].split(",")), line
                seen.add(key)
        assert seen == set(targets), described
        # The operator's own throttle is back as it was before either run.
        rates = tool(kafka_sandbox, "kafka-configs", "--bootstrap-server", kafka_sandbox.bootstrap_servers, "--describe",
                     "--entity-type", "brokers", "--entity-name", brokers[0]).stdout
        assert f"leader.replication.throttled.rate={SLOW}" in rates, rates
    finally:
        if foreign_json.exists():
            tool(kafka_sandbox, "kafka-reassign-partitions", "--bootstrap-server", kafka_sandbox.bootstrap_servers,
                 "--reassignment-json-file", str(foreign_json), "--cancel", check=False)
        for b in brokers:
            _configs(kafka_sandbox, "brokers", b, delete="leader.replication.throttled.rate,follower.replication.throttled.rate",
                     check=False)  # Kafka's --cancel may have removed them already
