"""The Kafka version matrix (`make test-matrix`, not part of `make test`): the operator's whole path on each release.

For every Kafka release operators run (3.7 to the newest 4.x, and 3.x in ZooKeeper mode), a sandbox of
that release is started with the product's own code, seeded with skewed topics and real bytes, then
gathered, planned, validated, approved, executed and verified through our command line, and stopped by
pid. Kafka's own tools of the same release are the oracles: `kafka-topics --describe` (targets, ISR,
leaders), `kafka-configs --describe` (the throttles an operator had set come back exactly, nothing of
ours is left) and `kafka-log-dirs --describe` (every new replica holds the bytes: data really moved).

Each case costs one to three minutes on 2 cores; `scripts/test-matrix.sh` runs them all and prints the
table that docs/KAFKA.md records. `-k 3.7.2-zookeeper` runs one.
"""

from __future__ import annotations

import json
import time

import pytest

from kafka_rebalance.sandbox import cluster
from kafka_rebalance.sandbox.cluster import pid_alive
from kafka_rebalance.sandbox.runtime import resolve_runtime
from kafka_rebalance.sandbox.seed import SeedSpec, seed
from kafka_rebalance.snapshot import load_snapshot
from tests.support.kafka import (
    admin,
    cli,
    describe_partitions,
    final_targets,
    gather,
    plan_validate_and_approve,
    snapshot_partitions,
    throttles_anywhere,
    tool,
)

pytestmark = pytest.mark.matrix
MIB = 1024 * 1024
PREFIX = "matrix"
MB_PER_PARTITION = 1.0

# (release, mode): the newest patch of each line Maven Central serves at the time of writing.
MATRIX = [
    ("3.7.2", "zookeeper"), ("3.8.1", "zookeeper"), ("3.9.1", "zookeeper"),
    ("3.7.2", "kraft"), ("3.8.1", "kraft"), ("3.9.1", "kraft"),
    ("4.0.2", "kraft"), ("4.1.1", "kraft"), ("4.4.0", "kraft"),
]  # fmt: skip


def _log_dir_sizes(sandbox) -> dict[tuple[str, int, int], int]:
    """Kafka's own kafka-log-dirs --describe: bytes of each (topic, partition) replica on each broker."""
    brokers = ",".join(str(n.node_id) for n in sandbox.nodes)
    out = tool(sandbox, "kafka-log-dirs", "--bootstrap-server", sandbox.bootstrap_servers, "--describe",
               "--broker-list", brokers, timeout=60).stdout
    sizes: dict[tuple[str, int, int], int] = {}
    for entry in json.loads(next(line for line in out.splitlines() if line.startswith("{")))["brokers"]:
        for d in entry["logDirs"]:
            for p in d["partitions"]:
                topic, _, partition = p["partition"].rpartition("-")
                sizes[(topic, int(partition), entry["broker"])] = p["size"]
    return sizes


def _broker_version(sandbox) -> str:
    """The release kafka-python (our client) infers from the brokers' ApiVersions: what it picks request versions by."""
    client = admin(sandbox)
    try:
        return ".".join(str(x) for x in client._client.check_version())
    finally:
        client.close()


def _configs(sandbox, entity_type: str, name: str, change: str) -> None:
    tool(sandbox, "kafka-configs", "--bootstrap-server", sandbox.bootstrap_servers, "--alter", "--entity-type", entity_type,
         "--entity-name", name, *change.split(" ", 1))


@pytest.mark.parametrize(("version", "mode"), MATRIX, ids=[f"{v}-{m}" for v, m in MATRIX])
def test_the_operators_path_on_this_release(version, mode, tmp_path, request):
    row = {"version": version, "mode": mode, "notes": ""}
    request.node.user_properties.append(("matrix", row))
    directory = tmp_path / "sandbox"
    sandbox = cluster.up(directory, brokers=3, racks=3, kafka_version=version, mode=mode, timeout=180)
    try:
        assert sandbox.kafka_version == version and sandbox.mode == mode
        differences = [f"client sees {_broker_version(sandbox)}"]
        if mode == "zookeeper":
            assert sandbox.zookeeper is not None and pid_alive(sandbox.zookeeper.pid)
            jars = sorted(resolve_runtime(version, fetch=False).lib.glob("zookeeper-3*.jar"))
            differences.append(f"ZooKeeper {jars[0].stem.removeprefix('zookeeper-')} from kafka_2.13's dependencies")
        seeded = seed(sandbox, SeedSpec(topics=2, partitions=6, mb_per_partition=MB_PER_PARTITION, skew=0.9, seed=3,
                                        topic_prefix=PREFIX))
        topic = f"{PREFIX}-0"
        # Values an operator had set before the run, with this release's own kafka-configs: they must come back exactly.
        _configs(sandbox, "brokers", "2", "--add-config leader.replication.throttled.rate=987654321")
        _configs(sandbox, "topics", topic, "--add-config follower.replication.throttled.replicas=[0:3]")
        before = throttles_anywhere(sandbox, PREFIX)
        assert before == {"broker 2": {"leader.replication.throttled.rate": "987654321"},
                          f"topic {topic}": {"follower.replication.throttled.replicas": "0:3"}}

        snap_path = gather(sandbox, tmp_path / "before.json", PREFIX, cluster_id=f"matrix-{version}-{mode}")
        original = snapshot_partitions(load_snapshot(snap_path))
        assert len(original) == seeded.partitions
        plan_dir = tmp_path / "plan"
        manifest = plan_validate_and_approve(snap_path, plan_dir, "--throttle", str(10 * MIB))
        assert manifest["summary"]["replica_moves"] > 0

        started = time.monotonic()
        done = cli("execute", "--plan", str(plan_dir), "--bootstrap-server", sandbox.bootstrap_servers,
                   "--poll-interval", "1", "--final-snapshot", str(tmp_path / "after.json"))
        executed = time.monotonic() - started
        assert done.returncode == 0, done.stderr[-3000:]
        assert json.loads(done.stdout)["status"] == "complete"
        verified = cli("verify", "--plan", str(plan_dir), "--bootstrap-server", sandbox.bootstrap_servers)
        assert verified.returncode == 0, verified.stdout[-2000:] + verified.stderr[-2000:]
        assert json.loads(verified.stdout)["status"] == "complete"

        # Kafka's own tools of this release: targets reached, ISR full, preferred leaders.
        now = describe_partitions(sandbox, PREFIX)
        targets = final_targets(plan_dir)
        for tp, target in targets.items():
            assert now[tp]["replicas"] == target, tp
        for tp, p in now.items():
            assert sorted(p["isr"]) == sorted(p["replicas"]), f"{tp} ISR {p['isr']} is not full"
            assert p["leader"] == p["replicas"][0], f"{tp} led by {p['leader']}, preferred {p['replicas'][0]}"
        # Real data moved: every replica a partition gained holds all its bytes on its new broker.
        sizes = _log_dir_sizes(sandbox)
        gained = [(t, p, b) for (t, p), target in targets.items() for b in target if b not in original[(t, p)]]
        assert gained, "the plan moved no replica to a new broker"
        for key in gained:
            assert sizes.get(key, 0) >= MB_PER_PARTITION * MIB, f"replica {key} holds {sizes.get(key)} bytes"
        # Exactly the operator's throttles, nothing of ours left behind.
        assert throttles_anywhere(sandbox, PREFIX) == before
        row["notes"] = "; ".join([f"up {sandbox.start_seconds:.0f}s, {len(gained)} replicas moved "
                                  f"({len(gained) * MB_PER_PARTITION:.0f} MiB), execute {executed:.0f}s, throttles restored",
                                  *differences])
    finally:
        stopped = cluster.down(directory)
        assert not any(pid_alive(pid) for pid in stopped)
