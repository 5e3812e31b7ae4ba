"""What the product promises about Kafka, proven on real Apache Kafka brokers (the session sandbox).

Kafka's own tools are the oracles: TopicCommand's describe, ConfigCommand, ReassignPartitionsCommand
--verify / --execute, and LeaderElectionCommand.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafka_rebalance.sandbox import cluster as sandbox_cluster
from kafka_rebalance.sandbox.seed import SeedSpec, seed
from kafka_rebalance.snapshot import load_snapshot
from tests.support.kafka import (
    ROOT,
    admin,
    assert_leaders_as_planned,
    cli,
    config_describe,
    describe_partitions,
    final_targets,
    gather,
    plan_validate_and_approve,
    throttles_anywhere,
    tool,
    wait_for,
)

pytestmark = [pytest.mark.kafka, pytest.mark.slow]
MIB = 1024 * 1024



def test_gather_agrees_with_kafka_topics_describe(kafka_sandbox, topic_prefix, tmp_path):
    seed(kafka_sandbox, SeedSpec(topics=3, partitions=8, mb_per_partition=0.25, skew=0.8, seed=7, topic_prefix=topic_prefix))
    snap = load_snapshot(gather(kafka_sandbox, tmp_path / "gathered.json", topic_prefix))

    described = tool(kafka_sandbox, "kafka-topics", "--bootstrap-server", kafka_sandbox.bootstrap_servers, "--describe").stdout
    (tmp_path / "describe.txt").write_text(described)
    racks = {str(n.node_id): n.rack for n in kafka_sandbox.nodes}
    (tmp_path / "racks.json").write_text(json.dumps(racks))
    cli("import-describe", "--input", str(tmp_path / "describe.txt"), "--cluster-id", "sandbox",
        "--rack-map", str(tmp_path / "racks.json"), "--out", str(tmp_path / "imported.json"), check=True)
    imported = load_snapshot(tmp_path / "imported.json")

    def view(s):
        return {(p.topic, p.partition): (p.replicas, p.leader, tuple(sorted(p.isr)))
                for p in s.partitions if p.topic.startswith(topic_prefix)}

    assert len(view(snap)) == 24
    assert view(snap) == view(imported)
    # Racks: gather reads them from the brokers; the expectation comes from each node's server.properties.
    configured = {}
    for n in kafka_sandbox.nodes:
        props = (Path(n.directory) / "server.properties").read_text().splitlines()
        configured[n.node_id] = next(line.split("=", 1)[1] for line in props if line.startswith("broker.rack="))
    assert {b.id: b.rack for b in snap.brokers} == configured
    assert all(b.alive for b in snap.brokers)
    # Replica sizes come from DescribeLogDirs: every partition holds the 256 KiB produced into it.
    assert all(p.size_bytes is not None and p.size_bytes >= 256 * 1024 for p in snap.partitions)


def test_real_rebalance_reaches_targets_and_restores_prior_throttles(kafka_sandbox, topic_prefix, tmp_path):
    seed(kafka_sandbox, SeedSpec(topics=2, partitions=9, mb_per_partition=0.5, skew=0.9, seed=3, topic_prefix=topic_prefix))
    topic = f"{topic_prefix}-0"
    # Values an operator had set before the run: they must come back exactly, not be deleted.
    tool(kafka_sandbox, "kafka-configs", "--bootstrap-server", kafka_sandbox.bootstrap_servers, "--alter",
         "--entity-type", "brokers", "--entity-name", "2", "--add-config", "leader.replication.throttled.rate=987654321")
    tool(kafka_sandbox, "kafka-configs", "--bootstrap-server", kafka_sandbox.bootstrap_servers, "--alter",
         "--entity-type", "topics", "--entity-name", topic, "--add-config", "follower.replication.throttled.replicas=[0:3]")
    try:
        before = throttles_anywhere(kafka_sandbox, topic_prefix)
        assert before == {"broker 2": {"leader.replication.throttled.rate": "987654321"},
                          f"topic {topic}": {"follower.replication.throttled.replicas": "0:3"}}
        snap_path = gather(kafka_sandbox, tmp_path / "before.json", topic_prefix)
        plan_dir = tmp_path / "plan"
        manifest = plan_validate_and_approve(snap_path, plan_dir, "--throttle", str(20 * MIB), "--max-moves-per-broker", "10")
        assert manifest["summary"]["replica_moves"] > 0

        done = cli("execute", "--plan", str(plan_dir), "--bootstrap-server", kafka_sandbox.bootstrap_servers,
                   "--poll-interval", "1", "--final-snapshot", str(tmp_path / "after.json"))
        assert done.returncode == 0, done.stderr[-3000:]
        assert json.loads(done.stdout)["status"] == "complete"

        now = assert_leaders_as_planned(kafka_sandbox, topic_prefix, plan_dir)
        for tp, target in final_targets(plan_dir).items():
            assert now[tp]["replicas"] == target, tp
        for tp, p in now.items():
            assert sorted(p["isr"]) == sorted(p["replicas"]), f"{tp} ISR {p['isr']} is not full"
        # Kafka's ConfigCommand: exactly the operator's values, nothing of ours left behind.
        assert throttles_anywhere(kafka_sandbox, topic_prefix) == before
    finally:
        tool(kafka_sandbox, "kafka-configs", "--bootstrap-server", kafka_sandbox.bootstrap_servers, "--alter",
             "--entity-type", "brokers", "--entity-name", "2", "--delete-config", "leader.replication.throttled.rate")


@pytest.mark.quiet  # copy times against the estimate: run alone, not beside the parallel suite
def test_the_throttle_is_real_and_the_estimate_holds(kafka_sandbox, topic_prefix, tmp_path):
    """Six 4 MiB replicas leave broker 1 at 1 MiB/s, executed continuously: at most 5 moves in flight
    out of broker 1 share its leader throttle, the sixth starts when one lands: 24 s of physics."""
    size, rate, count = 4 * MIB, 1 * MIB, 6
    client = admin(kafka_sandbox)
    topic = f"{topic_prefix}-big"
    try:
        from kafka.admin import NewTopic

        client.create_topics([NewTopic(topic, replica_assignments={p: [1] for p in range(count)})])
        wait_for(lambda: all(p["leader_id"] == 1 for p in client.describe_topics([topic])[0]["partitions"]), 30, "leaders")
    finally:
        client.close()
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=kafka_sandbox.bootstrap_servers, acks=1, batch_size=300_000,
                             max_request_size=400_000)
    payload = os.urandom(256 * 1024)
    for p in range(count):
        for _ in range(size // len(payload)):
            producer.send(topic, payload, partition=p)
    producer.flush()
    producer.close()

    snap_path = gather(kafka_sandbox, tmp_path / "before.json", topic_prefix)
    snap = load_snapshot(snap_path)
    # Emptying broker 1 moves every replica off it, through the planner and the gate.
    manifest = plan_validate_and_approve(snap_path, tmp_path / "plan", "--throttle", str(rate), "--decommission-brokers", "1")
    assert manifest["summary"]["replica_moves"] == count
    actual_bytes = sum(p.size_bytes for p in snap.partitions)
    estimate = manifest["summary"]["continuous"]["estimated_seconds"]

    started = time.monotonic()
    done = cli("execute", "--plan", str(tmp_path / "plan"), "--bootstrap-server", kafka_sandbox.bootstrap_servers,
               "--poll-interval", "0.5")
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    now = describe_partitions(kafka_sandbox, topic_prefix)
    assert all(1 not in p["replicas"] for p in now.values())
    # The moves themselves: from the first submission to the last move in sync, as the executor timed
    # them (the command's wall time adds interpreter start, preflight, elections and the final describe).
    report = json.loads(done.stdout)
    assert report["mode"] == "continuous" and report["continuous"]["finished"] == count
    moved = report["continuous"]["actual_seconds"]
    print(f"\nthrottled moves: {count} x {size / MIB:.0f} MiB ({actual_bytes / MIB:.1f} MiB) out of broker 1 at "
          f"{rate / MIB:.0f} MiB/s: physics {actual_bytes / rate:.1f}s, our estimate {estimate:.1f}s, actual {moved:.1f}s "
          f"(whole execute command {elapsed:.1f}s)", file=sys.stderr)
    # Kafka's replication quota averages over 11 one-second windows: allow that much slack below size/rate.
    assert moved >= actual_bytes / rate - 11, "the moves finished faster than the throttle allows"
    # Kafka's quota delivers 70-85 % of the configured rate on this 2-core sandbox (Kafka's own tool takes as
    # long: docs/PERFORMANCE.md), so the model's estimate runs short here; 30 % is what it holds.
    assert abs(estimate - moved) <= 0.30 * moved, f"estimate {estimate:.1f}s vs actual {moved:.1f}s"
    # What the brokers delivered and what each move cost besides copying are measured for the cluster's next
    # plan (--throttle-efficiency, --move-fixed-seconds); only a figure that explains a miss is advised.
    cont = report["continuous"]
    measured, fixed, miss = cont["measured_efficiency"], cont["measured_move_fixed_seconds"], cont["estimate_miss"]
    print(f"measured: efficiency {measured}, fixed cost per move {fixed} (s), estimate {miss}", file=sys.stderr)
    # 4 MiB moves copy for seconds: they measure the rate, not a fixed cost. Above 1 is possible: Kafka's quota
    # averages over at least 10 one-second samples, so copies starting on idle brokers run ahead of the rate for a
    # few seconds (1.104 seen once on 24 s of physics); 1.25 is a quarter of the run ahead, which no throttle allows.
    assert 0.5 <= measured <= 1.25 and fixed is None, cont
    advised = f"--throttle-efficiency {min(1.0, measured):g} " in done.stderr
    assert advised == (miss == "throughput"), (miss, done.stderr[-2000:])
    assert ("the estimate held within 25%" in done.stderr) == (miss == "held")


def test_our_files_are_kafkas_files(kafka_sandbox, topic_prefix, tmp_path):
    seed(kafka_sandbox, SeedSpec(topics=2, partitions=6, mb_per_partition=0.25, skew=0.9, seed=11, topic_prefix=topic_prefix))
    snap_path = gather(kafka_sandbox, tmp_path / "before.json", topic_prefix)
    plan_dir = tmp_path / "plan"
    manifest = plan_validate_and_approve(snap_path, plan_dir, "--throttle", str(20 * MIB), "--max-moves-per-broker", "4")
    batch_ids = [b["id"] for b in manifest["batches"]]
    assert len(batch_ids) >= 2
    bs = kafka_sandbox.bootstrap_servers

    # Batch 1 by Kafka's own tool (--execute --throttle, then --verify until complete) ...
    first = plan_dir / "batches" / batch_ids[0] / "reassignment.json"
    tool(kafka_sandbox, "kafka-reassign-partitions", "--bootstrap-server", bs, "--reassignment-json-file", str(first),
         "--execute", "--throttle", str(20 * MIB))

    def verified() -> bool:
        out = tool(kafka_sandbox, "kafka-reassign-partitions", "--bootstrap-server", bs,
                   "--reassignment-json-file", str(first), "--verify").stdout
        return "is still in progress" not in out and "is complete" in out

    wait_for(verified, 120, "Kafka's tool to finish batch 1", poll=1)
    now = describe_partitions(kafka_sandbox, topic_prefix)
    for p in json.loads(first.read_text())["partitions"]:
        assert now[(p["topic"], p["partition"])]["replicas"] == tuple(p["replicas"])

    # ... the rest by our executor; after each batch Kafka's --verify calls every partition complete.
    for batch in batch_ids[1:]:
        done = cli("execute", "--plan", str(plan_dir), "--bootstrap-server", bs, "--poll-interval", "1", "--batches", batch)
        # One batch of several: the plan is still incomplete (exit 1), the batch itself finished.
        report = json.loads(done.stdout)
        assert report["batches"][0]["state"] == "finished", done.stderr[-3000:]
        assert done.returncode == (0 if report["status"] == "complete" else 1)
        out = tool(kafka_sandbox, "kafka-reassign-partitions", "--bootstrap-server", bs, "--reassignment-json-file",
                   str(plan_dir / "batches" / batch / "reassignment.json"), "--verify", "--preserve-throttles").stdout
        lines = [line for line in out.splitlines() if line.startswith("Status of partition reassignment")
                 or "Reassignment of partition" in line]
        assert lines and all("is complete" in line for line in lines if "Reassignment of partition" in line), out
        parts = json.loads((plan_dir / "batches" / batch / "reassignment.json").read_text())["partitions"]
        assert sum("is complete" in line for line in lines) == len(parts), out

    # Kafka's LeaderElectionCommand takes our election.json as it is.
    elected = tool(kafka_sandbox, "kafka-leader-election", "--bootstrap-server", bs, "--election-type", "PREFERRED",
                   "--path-to-json-file", str(plan_dir / "election.json"), check=False)
    assert elected.returncode == 0, elected.stderr
    assert "Successfully completed leader election" in elected.stdout or "Valid replica already elected" in elected.stdout
    assert_leaders_as_planned(kafka_sandbox, topic_prefix, plan_dir)


def test_foreign_reassignment_is_refused_unless_additional(kafka_sandbox, topic_prefix, tmp_path):
    seed(kafka_sandbox, SeedSpec(topics=1, partitions=6, mb_per_partition=2, skew=1.0, seed=5, topic_prefix=topic_prefix))
    snap_path = gather(kafka_sandbox, tmp_path / "before.json", topic_prefix)
    plan_validate_and_approve(snap_path, tmp_path / "plan", "--throttle", str(20 * MIB))
    bs = kafka_sandbox.bootstrap_servers
    topic = f"{topic_prefix}-0"
    current = describe_partitions(kafka_sandbox, topic_prefix)[(topic, 0)]["replicas"]
    spare = next(b for b in (1, 2, 3) if b not in current)
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": topic, "partition": 0, "replicas": [current[0], spare]}]}))
    # A crawl (1 KiB/s) keeps the foreign move in flight for the whole test.
    tool(kafka_sandbox, "kafka-reassign-partitions", "--bootstrap-server", bs, "--reassignment-json-file", str(foreign),
         "--execute", "--throttle", "1024")
    try:
        done = cli("execute", "--plan", str(tmp_path / "plan"), "--bootstrap-server", bs, "--poll-interval", "1")
        assert done.returncode == 2
        assert "in flight" in done.stderr and f"{topic}-0" in done.stderr and "--additional" in done.stderr, done.stderr
        assert not (tmp_path / "plan" / "ledger.json").exists() or "finished" not in (tmp_path / "plan" / "ledger.json").read_text()
    finally:
        tool(kafka_sandbox, "kafka-reassign-partitions", "--bootstrap-server", bs, "--reassignment-json-file",
             str(foreign), "--cancel")


def test_killed_executor_resumes_without_resubmitting_finished_or_running_moves(kafka_sandbox, topic_prefix, tmp_path):
    seed(kafka_sandbox, SeedSpec(topics=2, partitions=6, mb_per_partition=1, skew=0.9, seed=21, topic_prefix=topic_prefix))
    snap_path = gather(kafka_sandbox, tmp_path / "before.json", topic_prefix)
    plan_dir = tmp_path / "plan"
    manifest = plan_validate_and_approve(snap_path, plan_dir, "--throttle", str(512 * 1024), "--max-moves-per-broker", "2",
                                 "--ordering", "large-first")
    assert manifest["summary"]["replica_moves"] >= 4
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    proc = subprocess.Popen([sys.executable, "-m", "kafka_rebalance.cli", "execute", "--plan", str(plan_dir),
                             "--bootstrap-server", kafka_sandbox.bootstrap_servers, "--poll-interval", "0.5"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    ledger_path = plan_dir / "ledger.json"

    def one_finished_one_in_flight() -> bool:
        if not ledger_path.exists():
            return False
        steps = json.loads(ledger_path.read_text()).get("continuous", {}).get("steps", {})
        states = {v.get("state") for v in steps.values()}
        return "finished" in states and "submitted" in states

    try:
        wait_for(one_finished_one_in_flight, 180, "a finished move and one in flight", poll=0.2)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    client = admin(kafka_sandbox)
    try:
        in_flight = {f"{tp.topic}-{tp.partition}" for tp in client.list_partition_reassignments()}
    finally:
        client.close()
    steps = json.loads(ledger_path.read_text())["continuous"]["steps"]
    finished_at = {i: json.dumps(e, sort_keys=True) for i, e in steps.items() if e["state"] == "finished"}
    running = {i for i, e in steps.items() if e["state"] == "submitted" and e["tp"] in in_flight}
    assert throttles_anywhere(kafka_sandbox, topic_prefix), "the killed run should have left its throttles set"
    # Nothing acts on the plan now: status must not say running.
    status = cli("status", "--plan", str(plan_dir), "--json")
    assert status.returncode == 0, status.stderr[-2000:]
    assert json.loads(status.stdout)["state"] == "interrupted", status.stdout

    again = cli("execute", "--plan", str(plan_dir), "--bootstrap-server", kafka_sandbox.bootstrap_servers, "--poll-interval", "1")
    assert again.returncode == 0, again.stderr[-3000:]
    steps = json.loads(ledger_path.read_text())["continuous"]["steps"]
    for i, before in finished_at.items():
        # Not submitted again: its ledger entry is exactly what the killed run wrote.
        assert json.dumps(steps[i], sort_keys=True) == before
    for i in running:
        # Still moving when the run died: watched to its end by the next run, never submitted again.
        assert steps[i]["state"] == "finished" and "earlier" not in steps[i], steps[i]
    assert all(v["state"] == "finished" for v in steps.values())
    assert throttles_anywhere(kafka_sandbox, topic_prefix) == {}
    now = describe_partitions(kafka_sandbox, topic_prefix)
    for tp, target in final_targets(plan_dir).items():
        assert now[tp]["replicas"] == target


def test_destination_broker_killed_mid_move(kafka_sandbox, topic_prefix, tmp_path):
    """kill -9 of a destination broker: stall detected, moves cancelled, throttles restored, ledger says so;
    after the broker is back, a re-run completes the plan."""
    seed(kafka_sandbox, SeedSpec(topics=1, partitions=6, mb_per_partition=4, skew=1.0, seed=9, topic_prefix=topic_prefix))
    snap_path = gather(kafka_sandbox, tmp_path / "before.json", topic_prefix)
    plan_dir = tmp_path / "plan"
    manifest = plan_validate_and_approve(snap_path, plan_dir, "--throttle", str(256 * 1024), "--ordering", "large-first")
    first = json.loads((plan_dir / "batches" / manifest["batches"][0]["id"] / "reassignment.json").read_text())
    before = {(p.topic, p.partition): p.replicas for p in load_snapshot(snap_path).partitions}
    victim = next(b for p in first["partitions"] for b in p["replicas"] if b not in before[(p["topic"], p["partition"])])
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    proc = subprocess.Popen([sys.executable, "-m", "kafka_rebalance.cli", "execute", "--plan", str(plan_dir),
                             "--bootstrap-server", kafka_sandbox.bootstrap_servers, "--poll-interval", "0.5",
                             "--stall-seconds", "8", "--on-stall", "stop"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    client = admin(kafka_sandbox)
    try:
        wait_for(lambda: bool(client.list_partition_reassignments()), 60, "the first moves to be in flight", poll=0.2)
        crashed = cli("sandbox", "crash", "--dir", kafka_sandbox.directory, "--node", str(victim))
        assert crashed.returncode == 0, crashed.stderr
        out, err = proc.communicate(timeout=300)
    finally:
        client.close()
        if proc.poll() is None:
            proc.kill()
    try:
        assert proc.returncode != 0, err[-2000:]
        ledger = json.loads((plan_dir / "ledger.json").read_text())
        text = json.dumps(ledger)
        assert "cancel" in text or "stall" in text, text[:2000] + err[-2000:]
        assert not throttles_anywhere_live(kafka_sandbox, topic_prefix, skip=victim)
    finally:
        back = cli("sandbox", "restart", "--dir", kafka_sandbox.directory, "--node", str(victim))
        assert back.returncode == 0, back.stderr
        restarted = sandbox_cluster.read_sandbox(Path(kafka_sandbox.directory))
    assert restarted.node(victim).pid != kafka_sandbox.node(victim).pid
    again = cli("execute", "--plan", str(plan_dir), "--bootstrap-server", kafka_sandbox.bootstrap_servers,
                "--poll-interval", "1")
    assert again.returncode == 0, again.stderr[-3000:]
    assert throttles_anywhere(kafka_sandbox, topic_prefix) == {}
    now = describe_partitions(kafka_sandbox, topic_prefix)
    for tp, target in final_targets(plan_dir).items():
        assert now[tp]["replicas"] == target


def throttles_anywhere_live(sandbox, prefix: str, skip: int) -> dict:
    """Throttles on the live brokers and on the topics (the killed broker cannot be asked)."""
    left = {}
    for n in sandbox.nodes:
        if n.node_id == skip:
            continue
        cfg = config_describe(sandbox, "brokers", str(n.node_id)).get(str(n.node_id), {})
        hits = {k: v for k, v in cfg.items() if "throttled" in k}
        if hits:
            left[f"broker {n.node_id}"] = hits
    for topic, cfg in config_describe(sandbox, "topics").items():
        hits = {k: v for k, v in cfg.items() if "throttled" in k}
        if topic.startswith(prefix) and hits:
            left[f"topic {topic}"] = hits
    return left


def test_the_final_snapshot_shows_the_elected_leaders(kafka_sandbox, topic_prefix, tmp_path):
    """Every replica list is [1, 2] and broker 1 leads all 52 partitions: balancing moves replicas to broker 3
    and spreads the first replicas, and since leading is load, broker 1 must end leading no more than the
    preferred-leader goal's ceil, so many partitions are elected to a new leader after the moves (the plan
    elects only where a leader goal needs it, issue #42). The final snapshot, taken right after the
    elections, must show the elected ones led by their preferred replica and every broker's leaders within
    the goal's bounds: the brokers' metadata follows the controller's elections a moment later."""
    client = admin(kafka_sandbox)
    topics = [f"{topic_prefix}-{t}" for t in range(2)]
    try:
        from kafka.admin import NewTopic

        client.create_topics([NewTopic(t, replica_assignments={p: [1, 2] for p in range(26)}) for t in topics])
        wait_for(lambda: all(p["leader_id"] == 1 for d in client.describe_topics(topics) for p in d["partitions"])
                  and sum(len(d["partitions"]) for d in client.describe_topics(topics)) == 52, 30, "leaders on broker 1")
    finally:
        client.close()
    snap_path = gather(kafka_sandbox, tmp_path / "before.json", topic_prefix)
    plan_dir = tmp_path / "plan"
    plan_validate_and_approve(snap_path, plan_dir)
    elected = {(p["topic"], p["partition"]) for p in json.loads((plan_dir / "election.json").read_text())["partitions"]}
    # 52 partitions over 3 brokers is 17.33 each; the default --replica-tolerance of 10 % of it widens
    # floor..ceil 17..18 by one whole partition each side: 16..19. Broker 1 leads all 52, so at least
    # 52 - 19 = 33 of them must change leader, and the plan elects every partition whose leader it changes.
    floor, ceil = 16, 19
    assert len(elected) >= 52 - ceil, f"broker 1 can lead at most {ceil} of the 52, yet only {len(elected)} are elected"
    preferred = {tp: replicas[0] for tp, replicas in final_targets(plan_dir).items()}
    assert elected <= set(preferred)
    assert 1 not in {preferred[tp] for tp in elected}  # broker 1 led them all before: the elections move leaders

    done = cli("execute", "--plan", str(plan_dir), "--bootstrap-server", kafka_sandbox.bootstrap_servers,
               "--poll-interval", "1", "--final-snapshot", str(tmp_path / "after.json"))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["status"] == "complete"
    assert report["elections"]["requested"] == len(elected) and report["elections"]["failed"] == {}
    assert report["elections"]["settle"] == "settled", report["elections"]

    final = {(p.topic, p.partition): p for p in load_snapshot(tmp_path / "after.json").partitions}
    wrong = {f"{t}-{p}": (final[(t, p)].leader, preferred[(t, p)]) for t, p in sorted(elected)
             if final[(t, p)].leader != preferred[(t, p)]}
    assert not wrong, f"final snapshot leader vs the plan's preferred leader: {wrong}"
    leads = {b: sum(1 for p in final.values() if p.topic in topics and p.leader == b) for b in (1, 2, 3)}
    assert all(floor <= n <= ceil for n in leads.values()), f"leaders per broker after the plan: {leads}"
    # Kafka's own view agrees.
    now = describe_partitions(kafka_sandbox, topic_prefix)
    assert all(now[tp]["leader"] == preferred[tp] for tp in elected)


@pytest.mark.quiet  # copy times against the estimate: run alone, not beside the parallel suite
def test_small_moves_land_within_a_quarter_of_their_estimate(kafka_sandbox, topic_prefix, tmp_path):
    """Twelve 256 KiB replicas leave broker 1 at the default 50 MiB/s: the copying takes milliseconds, so
    the time is each move's fixed cost (metadata, fetcher start, ISR join, the poll that sees it land).
    Planned with the defaults and executed with the executor's default poll interval, as an operator would."""
    count = 12
    client = admin(kafka_sandbox)
    topic = f"{topic_prefix}-small"
    try:
        from kafka.admin import NewTopic

        client.create_topics([NewTopic(topic, replica_assignments={p: [1] for p in range(count)})])
        wait_for(lambda: all(p["leader_id"] == 1 for p in client.describe_topics([topic])[0]["partitions"]), 30, "leaders")
    finally:
        client.close()
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=kafka_sandbox.bootstrap_servers, acks=1)
    payload = os.urandom(64 * 1024)
    for p in range(count):
        for _ in range(4):
            producer.send(topic, payload, partition=p)
    producer.flush()
    producer.close()

    snap_path = gather(kafka_sandbox, tmp_path / "before.json", topic_prefix)
    manifest = plan_validate_and_approve(snap_path, tmp_path / "plan", "--decommission-brokers", "1")
    assert manifest["summary"]["replica_moves"] == count
    assert manifest["summary"]["continuous"]["physical_bound_seconds"] < 0.5  # the bytes are no part of the time
    done = cli("execute", "--plan", str(tmp_path / "plan"), "--bootstrap-server", kafka_sandbox.bootstrap_servers)
    assert done.returncode == 0, done.stderr[-3000:]
    cont = json.loads(done.stdout)["continuous"]
    estimate, moved = cont["estimated_seconds"], cont["actual_seconds"]
    print(f"\nsmall moves: {count} x 256 KiB out of broker 1: estimate {estimate:.1f}s, actual {moved:.1f}s; measured "
          f"{cont['measured_move_fixed_seconds']}s fixed per move", file=sys.stderr)
    assert cont["measured_efficiency"] is None  # 256 KiB at 50 MiB/s says nothing of the rate
    assert abs(estimate - moved) <= 0.25 * moved, f"estimate {estimate:.1f}s vs actual {moved:.1f}s"
    assert cont["estimate_miss"] == "held" and "--throttle-efficiency" not in done.stderr, done.stderr[-2000:]
