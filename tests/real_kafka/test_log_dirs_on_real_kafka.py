"""JBOD on real Kafka: plans that name log dirs execute, and Kafka's own `kafka-log-dirs --describe` shows
every replica in the dir the plan named; `--remove-log-dir` empties a dir.

One sandbox for the module: 2 nodes with 2 log dirs each (`sandbox up --log-dirs 2`), small topics of
replication factor 1 so that replicas change broker and dir.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from kafka_rebalance.sandbox import cluster as sandbox_cluster
from kafka_rebalance.sandbox.cluster import Sandbox
from kafka_rebalance.sandbox.seed import SeedSpec, seed
from kafka_rebalance.snapshot import load_snapshot
from tests.support.kafka import cli, gather, plan_validate_and_approve, tool

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


@pytest.fixture(scope="module")
def jbod_sandbox(tmp_path_factory):
    directory = tmp_path_factory.mktemp("jbod") / "sandbox"
    sandbox = sandbox_cluster.up(directory, brokers=2, racks=1, log_dirs=2)
    try:
        yield sandbox
    finally:
        sandbox_cluster.down(directory)


def kafka_log_dirs(sandbox: Sandbox, prefix: str) -> dict[tuple[str, int], dict[int, str]]:
    """Kafka's `kafka-log-dirs --describe`: per partition of this test, broker -> the log dir holding it (no
    replica is still moving: a future replica would show as a second entry)."""
    out = tool(sandbox, "kafka-log-dirs", "--bootstrap-server", sandbox.bootstrap_servers, "--describe").stdout
    doc = json.loads(next(line for line in out.splitlines() if line.startswith("{")))
    found: dict[tuple[str, int], dict[int, str]] = {}
    for broker in doc["brokers"]:
        for d in broker["logDirs"]:
            for p in d["partitions"]:
                topic, _, part = p["partition"].rpartition("-")
                if not topic.startswith(prefix):
                    continue
                assert not p["isFuture"], f"{p['partition']} on broker {broker['broker']} still moving to {d['logDir']}"
                found.setdefault((topic, int(part)), {})[broker["broker"]] = d["logDir"]
    return found


def named_dirs(plan_dir: Path) -> dict[tuple[str, int], dict[int, str]]:
    """The dirs the plan's reassignment files name, the last batch naming a replica winning."""
    manifest = json.loads((plan_dir / "plan.json").read_text())
    out: dict[tuple[str, int], dict[int, str]] = {}
    for b in manifest["batches"]:
        for e in json.loads((plan_dir / "batches" / b["id"] / "reassignment.json").read_text())["partitions"]:
            named = out.setdefault((e["topic"], e["partition"]), {})
            for broker in [x for x in named if x not in e["replicas"]]:
                del named[broker]
            named.update({r: d for r, d in zip(e["replicas"], e["log_dirs"]) if d != "any"})
    return {k: v for k, v in out.items() if v}


def execute(sandbox: Sandbox, plan_dir: Path) -> None:
    done = cli("execute", "--plan", str(plan_dir), "--bootstrap-server", sandbox.bootstrap_servers, "--poll-interval", "1")
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["status"] == "complete", done.stdout[-3000:]
    verified = cli("verify", "--plan", str(plan_dir), "--bootstrap-server", sandbox.bootstrap_servers)
    assert verified.returncode == 0, verified.stdout[-2000:] + verified.stderr[-2000:]


def test_replicas_land_on_the_log_dirs_the_plan_names_and_a_removed_dir_is_emptied(jbod_sandbox, tmp_path):
    prefix = "jbod"
    # One topic, RF 1, 6 partitions on one broker and 2 on the other: the plan moves replicas to the other and names their dirs, and
    # empties a dir of that other broker, the receiving one, onto its other dir (one plan: the gate runs once).
    seed(jbod_sandbox, SeedSpec(topics=1, partitions=8, mb_per_partition=0.25, skew=0.3, seed=3, replication_factor=1,
                                topic_prefix=prefix))
    snap_path = gather(jbod_sandbox, tmp_path / "before.json", prefix)
    snap = load_snapshot(snap_path)
    assert all(len(b.log_dirs) == 2 for b in snap.brokers)
    per_broker = Counter(p.replicas[0] for p in snap.partitions)
    broker = min(per_broker, key=lambda b: (per_broker[b], b))
    held = Counter(p.log_dirs[0] for p in snap.partitions if p.replicas[0] == broker)
    removed, count = max(held.items(), key=lambda kv: (kv[1], kv[0] or ""))
    assert count > 0 and removed is not None and per_broker[broker] < len(snap.partitions) / 2
    plan_dir = tmp_path / "plan"
    manifest = plan_validate_and_approve(snap_path, plan_dir, "--max-moves-per-broker", "10",
                                         "--remove-log-dir", f"{broker}:{removed}")
    named = named_dirs(plan_dir)
    dirs = manifest["summary"]["log_dirs"]
    assert manifest["summary"]["replica_moves"] > 0 and dirs["named_for_new_replicas"] > 0, manifest["summary"]
    assert dirs["unplaced"] == [] and dirs["moves_between_dirs"] >= count  # they stay on their receiving broker
    assert all(removed not in d.values() for d in named.values())
    execute(jbod_sandbox, plan_dir)
    now = kafka_log_dirs(jbod_sandbox, prefix)
    for tp, want in named.items():
        for b, path in want.items():
            assert now[tp].get(b) == path, (tp, b, path, now[tp])
    assert not [tp for tp, d in now.items() if d.get(broker) == removed], now
    assert sorted(now) == sorted((p.topic, p.partition) for p in snap.partitions)  # every replica still there
