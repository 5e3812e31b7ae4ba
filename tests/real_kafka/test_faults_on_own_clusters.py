"""Faults that take a node or a disk down mid-move, on real Apache Kafka clusters of each test's own.

As in test_faults_on_real_kafka.py, a real ``kafka-rebalance execute`` keeps its moves in flight under a
low throttle while the fault comes, and Kafka's own tools judge the end. These faults (the active
controller killed, a log dir failed) are no state to leave for other tests, so each test starts and stops
a cluster of its own; in a module of their own they are scheduled apart from the shared sandbox's long
queue of tests (tests/conftest.py groups modules by whether they use it).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

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
        proc = execute_in_background(sandbox, plan_dir)
        try:
            wait_for(lambda: proc.poll() is not None or bool(in_flight(sandbox, prefix)), 60, "moves in flight")
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
            reap(proc)
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
        assert in_flight(sandbox, prefix) == set()
        assert throttles_anywhere(sandbox, prefix) == {}
        print(f"\nactive controller {victim} killed mid-move; execute exited {proc.returncode}", file=sys.stderr)
    finally:
        cluster.down(directory)


def _log_dirs(sandbox, broker: int) -> dict[str, dict]:
    """Kafka's own kafka-log-dirs --describe of one broker: per log dir, its error (None while it serves) and partitions."""
    out = tool(sandbox, "kafka-log-dirs", "--bootstrap-server", sandbox.bootstrap_servers, "--describe",
               "--broker-list", str(broker), timeout=60).stdout
    (entry,) = json.loads(next(line for line in out.splitlines() if line.startswith("{")))["brokers"]
    return {d["logDir"]: {"error": d["error"], "partitions": sorted(p["partition"] for p in d["partitions"])}
            for d in entry["logDirs"]}


def _two_disks_on(node_id: int, directory: Path):
    """JBOD on one node: two log dirs for partitions, the KRaft metadata log on a third (the node's usual data
    directory), for ``cluster.up``'s ``node_properties``: the node is formatted and started that way, so no
    restart is needed. The metadata log stays off the two disks: a failed metadata log directory shuts a KRaft
    broker down (KIP-858), while a failed data directory is only taken offline.
    """
    node_dir = directory.resolve() / f"node-{node_id}"  # where ``up`` puts that node
    disks = [node_dir / "disk-a", node_dir / "disk-b"]

    def properties(nid: int, _port: int, _controller_port: int) -> dict[str, str]:
        if nid != node_id:
            return {}
        return {"log.dirs": ",".join(map(str, disks)), "metadata.log.dir": str(node_dir / "data")}

    return properties, disks


def test_a_destination_log_dir_failing_mid_move(tmp_path):
    """JBOD: the log dir receiving a moved replica fails mid-move (the directory is replaced by a file, which stops
    root as well as anyone: Kafka's next checkpoint write into it fails and the broker takes the directory offline,
    KIP-112), while the broker and its other disk go on serving.

    The run does not hang: the move into the dead disk makes no progress and is cancelled by name (Kafka puts the
    partition back on its old replicas), the move into the healthy disk lands, every throttle is restored, and every
    partition keeps its full ISR. The operator repairs the disk and restarts the broker; a re-run finishes the plan.
    Its own sandbox: a node with a failed disk is no state to leave for other tests.
    """
    from kafka_rebalance.sandbox import cluster

    directory = tmp_path / "sb"
    two_disks, disks = _two_disks_on(3, directory)
    sandbox = cluster.up(directory, brokers=3, racks=3, node_properties=two_disks)
    failed: tuple[Path, Path] | None = None  # (the disk, where its directory was moved aside)
    try:
        assert sandbox.node(3).log_dirs == tuple(map(str, disks)), sandbox.node(3)
        assert {d: e["error"] for d, e in _log_dirs(sandbox, 3).items()} == {str(d): None for d in disks}
        prefix = "jbod"
        # 3 x 1 MiB packed on brokers 1 and 2: the plan adds one replica of two partitions to broker 3, both moves in
        # flight at once (Kafka gives each new log the disk holding fewer). Under 128 KiB/s Kafka's replication quota
        # lets the first fetches through and then holds every move for its ~11 s window: the moves are in flight while
        # the disk fails, and a healthy move's pause stays well inside the 20 s stall limit (10 s would cancel it too).
        seed(sandbox, SeedSpec(topics=1, partitions=3, mb_per_partition=1, skew=1.0, seed=5, topic_prefix=prefix))
        before = describe_partitions(sandbox, prefix)
        snap_path = gather(sandbox, tmp_path / "before.json", prefix)
        plan_dir = tmp_path / "plan"
        plan_validate_and_approve(snap_path, plan_dir, "--throttle", str(128 * 1024), "--max-moves-per-broker", "2")
        targets = final_targets(plan_dir)
        adds = {tp: set(t) - set(before[tp]["replicas"]) for tp, t in targets.items()}
        assert {b for a in adds.values() for b in a} == {3} and len([a for a in adds.values() if a]) == 2, (before, targets)
        moving = {f"{t}-{p}": (t, p) for (t, p), a in adds.items() if a}
        throttles_before = throttles_anywhere(sandbox, prefix)
        bs = sandbox.bootstrap_servers

        proc = execute_in_background(sandbox, plan_dir, "--stall-seconds", "20")
        try:
            def first_log() -> tuple[Path, tuple[str, int]] | None:
                for d in disks:
                    for child in d.iterdir():
                        if child.name in moving:
                            return d, moving[child.name]
                return None

            wait_for(lambda: proc.poll() is not None or first_log() is not None, 60, "a moved replica's log on broker 3")
            assert proc.poll() is None, "execute ended before its moves were in flight"
            found = first_log()
            assert found is not None
            disk, victim = found
            # The disk fails: its directory goes away and a file takes its place.
            aside = disk.with_name(disk.name + ".failed")
            os.rename(disk, aside)
            failed = (disk, aside)
            disk.write_text("this disk failed\n")
            # Kafka's own account: the directory is offline (its error is the storage exception), the other serves,
            # and the move into it is still in flight.
            wait_for(lambda: _log_dirs(sandbox, 3)[str(disk)]["error"] is not None, 30, f"{disk} offline", poll=0.5)
            dirs = _log_dirs(sandbox, 3)
            assert dirs[str(disk)]["error"] == "org.apache.kafka.common.errors.KafkaStorageException", dirs
            assert all(e["error"] is None for d, e in dirs.items() if d != str(disk)), dirs
            assert victim in in_flight(sandbox, prefix), "the move into the failed disk ended before the disk failed"
            assert proc.poll() is None, "execute ended while the disk failed"
            out, err = proc.communicate(timeout=120)
        finally:
            reap(proc)

        # The run ended by itself, cleanly, naming the move that could not finish.
        assert "Traceback" not in err, err[-3000:]
        assert proc.returncode == 1, err[-3000:]
        assert err.rstrip().splitlines()[-1] == f"error: execution incomplete: see the batch report above and {plan_dir / 'ledger.json'}"
        report = json.loads(out)
        assert report["status"] == "incomplete"
        steps = json.loads((plan_dir / "schedule.json").read_text())["steps"]
        (victim_step,) = [s["id"] for s in steps if (s["topic"], s["partition"]) == victim]
        name = f"{victim[0]}-{victim[1]}"
        assert report["continuous"]["cancelled"] == [f"step {victim_step} {name}: no progress for 20s"], err[-3000:]
        assert report["continuous"]["failed"] == [], err[-3000:]
        assert f"continuous: cancelled {name}: no progress for 20s" in err, err[-3000:]
        # Kafka's view: the victim is back on its replicas, everything else at its target, every ISR full; nothing left
        # running or throttled; the disk stays offline (a broker takes a failed directory back only when restarted).
        now = describe_partitions(sandbox, prefix)
        for tp, target in targets.items():
            if tp == victim:
                assert sorted(now[tp]["replicas"]) == sorted(before[tp]["replicas"]), (tp, now[tp])
            else:
                assert now[tp]["replicas"] == target, (tp, now[tp])
        for tp, p in now.items():
            assert len(p["replicas"]) == 2 and set(p["isr"]) == set(p["replicas"]), (tp, p)
        assert in_flight(sandbox, prefix) == set()
        assert throttles_anywhere(sandbox, prefix) == throttles_before
        dirs = _log_dirs(sandbox, 3)
        assert dirs[str(disk)]["error"] is not None, dirs
        landed = sorted(f"{t}-{p}" for (t, p), a in adds.items() if a and (t, p) != victim)
        assert [p for d, e in dirs.items() if d != str(disk) for p in e["partitions"]] == landed, dirs

        # The operator replaces the disk (here: the directory comes back) and restarts the broker.
        disk.unlink()
        os.rename(aside, disk)
        failed = None
        cluster.kill_node(sandbox, 3)
        sandbox = cluster.restart_node(sandbox, 3)  # its own config and data; sandbox.json gets the new pid
        assert all(e["error"] is None for e in _log_dirs(sandbox, 3).values())
        again = cli("execute", "--plan", str(plan_dir), "--bootstrap-server", bs, "--poll-interval", "0.5",
                    "--stall-seconds", "20", timeout=120)
        assert again.returncode == 0, again.stderr[-3000:]
        assert "Traceback" not in again.stderr
        now = describe_partitions(sandbox, prefix)
        for tp, target in targets.items():
            assert now[tp]["replicas"] == target, (tp, now[tp])
            assert set(now[tp]["isr"]) == set(target), (tp, now[tp])
        assert in_flight(sandbox, prefix) == set()
        assert throttles_anywhere(sandbox, prefix) == throttles_before
        print(f"\n{name}'s new replica on {disk} (failed mid-move); execute exited {proc.returncode}, the re-run 0",
              file=sys.stderr)
    finally:
        if failed is not None:  # the directory comes back before the sandbox goes down
            disk_path, aside_path = failed
            if disk_path.is_file():
                disk_path.unlink()
            if aside_path.exists() and not disk_path.exists():
                os.rename(aside_path, disk_path)
        cluster.down(directory)
