"""The plan names the Kafka cluster it was made for (Kafka's own cluster id), and no other cluster runs it.

Gathered from the sandbox, planned, then a copy of the plan with the recorded id altered and re-hashed
(a forgery every integrity check accepts) is refused by execute, verify and cancel before anything
moved; the unaltered plan runs to the end.
"""

from __future__ import annotations

import json
import shutil

import pytest

from kafka_rebalance.plan_dir import seal
from kafka_rebalance.sandbox.seed import SeedSpec, seed
from kafka_rebalance.snapshot import load_snapshot
from tests.support.kafka import cli, describe_partitions, gather, plan_validate_and_approve, throttles_anywhere
from tests.support.plans import approve, judge

pytestmark = [pytest.mark.kafka, pytest.mark.slow]
MIB = 1024 * 1024


def test_plan_for_another_kafka_cluster_is_refused_and_the_right_one_runs(kafka_sandbox, topic_prefix, tmp_path):
    seed(kafka_sandbox, SeedSpec(topics=1, partitions=6, mb_per_partition=0.25, skew=1.0, seed=5, topic_prefix=topic_prefix))
    snap_path = gather(kafka_sandbox, tmp_path / "before.json", topic_prefix)
    snap = load_snapshot(snap_path)
    assert snap.cluster_id == "sandbox" and snap.kafka_cluster_id == kafka_sandbox.cluster_uuid
    plan = tmp_path / "plan"
    manifest = plan_validate_and_approve(snap_path, plan, "--throttle", str(20 * MIB))
    assert manifest["kafka_cluster_id"] == kafka_sandbox.cluster_uuid and manifest["summary"]["replica_moves"] > 0

    forged = tmp_path / "forged"
    shutil.copytree(plan, forged)
    altered = json.loads((forged / "plan.json").read_text())
    altered["kafka_cluster_id"] = "AAAAAAAAAAAAAAAAAAAAAA"
    (forged / "plan.json").write_text(json.dumps(seal(altered)))
    judge(forged, "passed")
    (forged / "approval.json").unlink()  # the forger approves the altered plan too
    approve(forged)

    bs = kafka_sandbox.bootstrap_servers
    before = describe_partitions(kafka_sandbox, topic_prefix)
    for command in ("execute", "verify", "cancel"):
        done = cli(command, "--plan", str(forged), "--bootstrap-server", bs, "--poll-interval", "1"
                   ) if command == "execute" else cli(command, "--plan", str(forged), "--bootstrap-server", bs)
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert done.returncode == 2 and lines == [
            f"error: {forged}: the plan was made for Kafka cluster 'AAAAAAAAAAAAAAAAAAAAAA' ('sandbox'), but the connected "
            f"cluster reports {kafka_sandbox.cluster_uuid!r}; refusing to act on another cluster"], (command, done.stderr)
    assert describe_partitions(kafka_sandbox, topic_prefix) == before  # nothing moved
    assert throttles_anywhere(kafka_sandbox, topic_prefix) == {}  # nothing throttled
    assert not (forged / "ledger.json").exists()

    done = cli("execute", "--plan", str(plan), "--bootstrap-server", bs, "--poll-interval", "1")
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["status"] == "complete"
    assert "records no Kafka cluster id" not in done.stderr
    verified = cli("verify", "--plan", str(plan), "--bootstrap-server", bs)
    assert verified.returncode == 0 and json.loads(verified.stdout)["status"] == "complete", verified.stderr
