"""Maintenance windows on real Apache Kafka: a throttled plan that spans at least three short windows.

Windows open for 30 s at the start of every minute. Kafka's own tools are the oracles between
windows: ReassignPartitionsCommand --list shows nothing in flight and ConfigCommand shows no
throttle. The executor is killed with SIGKILL mid-window once and resumes from its ledger.

The plan is three batches, and the window margin is set so that a batch may start only in the first
START_WITHIN seconds of a window: no batch lands that soon, so each window runs exactly one batch and the
plan needs three windows, never a fourth (each costs a minute of wall time).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest

from kafka_rebalance.executor.windows import Window, policy
from kafka_rebalance.sandbox.seed import SeedSpec, seed
from tests.support.kafka import (
    ROOT,
    THROTTLE_KEYS,
    cli,
    config_describe,
    describe_partitions,
    final_targets,
    gather,
    plan_validate_and_approve,
    tool,
)

pytestmark = [pytest.mark.kafka, pytest.mark.slow]
WINDOW = Window("* * * * *", timedelta(seconds=30))
GRACE = 8.0
# A batch starts at most this long after its window opens: the executor, held outside the windows, starts one as a
# window opens, and no batch (throttles set, moves submitted, polled every 0.5 s until in sync) lands that soon.
START_WITHIN = 1.5



def _kafka_view_between_windows(sandbox, prefix: str) -> tuple[str, dict]:
    """Kafka's own listing of reassignments in flight, and every throttle config of ours.

    The three tools run side by side: the look must end inside the gap, and each is a JVM start.
    """
    with ThreadPoolExecutor(3) as pool:
        listing = pool.submit(tool, sandbox, "kafka-reassign-partitions", "--bootstrap-server", sandbox.bootstrap_servers,
                              "--list")
        configs = {kind: pool.submit(config_describe, sandbox, kind) for kind in ("brokers", "topics")}
        listed = listing.result().stdout
    throttles = {}
    for kind in ("brokers", "topics"):
        for name, cfg in configs[kind].result().items():
            hits = {k: v for k, v in cfg.items() if k in THROTTLE_KEYS}
            if hits and (kind == "brokers" or name.startswith(prefix)):
                throttles[f"{kind} {name}"] = hits
    return "\n".join(line for line in listed.splitlines() if prefix in line), throttles


def test_a_plan_runs_only_inside_windows_across_a_kill(kafka_sandbox, topic_prefix, tmp_path):
    # 5 x 5 MiB packed on brokers 1 and 2: three one-move batches of 5 MiB at 256 KiB/s (about 20 s each, well
    # inside a window; the kill below needs a batch in flight).
    seed(kafka_sandbox, SeedSpec(topics=1, partitions=5, mb_per_partition=5, skew=1.0, seed=5, topic_prefix=topic_prefix))
    snap_path = gather(kafka_sandbox, tmp_path / "before.json", topic_prefix)
    plan_dir = tmp_path / "plan"
    manifest = plan_validate_and_approve(snap_path, plan_dir, "--throttle", str(256 * 1024), "--max-moves-per-broker", "1",
                                 "--ordering", "large-first")
    moving = [b for b in manifest["batches"] if b["bytes"] > 0]
    estimates = [b["estimated_seconds"] for b in moving]
    assert len(moving) >= 3 and max(estimates) - min(estimates) < 0.5, manifest["batches"]
    # A batch starts only if its estimate ends the margin before the window closes: only in its first START_WITHIN s.
    margin = WINDOW.duration.total_seconds() - START_WITHIN - max(estimates)
    assert margin > 0, manifest["batches"]
    clusters = tmp_path / "clusters.yaml"
    clusters.write_text("clusters:\n  - cluster_id: sandbox\n    source: kafka_sandbox\n    windows:\n"
                        "      - {cron: '* * * * *', duration: 30s, timezone: UTC}\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins"), "KAFKA_REBALANCE_CLUSTERS": str(clusters)}
    command = [sys.executable, "-m", "kafka_rebalance.cli", "execute", "--plan", str(plan_dir),
               "--bootstrap-server", kafka_sandbox.bootstrap_servers, "--poll-interval", "0.5",
               "--window", "configured", "--window-margin", f"{margin:.3f}", "--window-grace", str(GRACE), "--wait"]
    windows = policy("configured", [WINDOW])
    ledger_path = plan_dir / "ledger.json"
    samples: list[tuple[str, dict]] = []
    looks: list[str] = []  # when each look between windows began and ended
    killed = False
    launched = datetime.now(UTC)
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 420
        while proc.poll() is None and time.monotonic() < deadline:
            now = datetime.now(UTC)
            ledger = json.loads(ledger_path.read_text()) if ledger_path.exists() else {"batches": {}}
            states = {v.get("state") for v in ledger["batches"].values()}
            if not killed and "finished" in states and {"throttled", "submitted"} & states:
                proc.send_signal(signal.SIGKILL)  # mid-window, mid-batch
                proc.wait(timeout=30)
                killed = True
                proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                continue
            window = windows.current(now)
            last_end = now.replace(second=30, microsecond=0) if now.second >= 30 else None
            if window is None and last_end is not None and now >= last_end + timedelta(seconds=GRACE + 1) and now.second < 52:
                view = _kafka_view_between_windows(kafka_sandbox, topic_prefix)
                ended = datetime.now(UTC)
                looks.append(f"{now:%H:%M:%S}-{ended:%H:%M:%S}")
                if ended < now.replace(second=59):  # the look ended before the next window
                    samples.append(view)
                time.sleep(max(0.0, 60 - datetime.now(UTC).second))
                continue
            time.sleep(0.5)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err[-3000:]
    assert json.loads(out)["status"] == "complete"
    assert killed, "the executor was never seen mid-batch after a finished batch"
    ledger = json.loads(ledger_path.read_text())
    timeline = [(bid, e.get("started_at"), e.get("finished_at"), e.get("state")) for bid, e in ledger["batches"].items()]
    print(f"\nexecute launched {launched:%H:%M:%S}; batches (id, started, finished, state): {timeline}; "
          f"looks between windows {looks}", file=sys.stderr)
    # Between windows Kafka itself shows no move of ours in flight and no throttle set.
    assert len(samples) >= 2, f"looked between windows only {len(samples)} time(s) in time: {looks}; {timeline}"
    for listed, throttles in samples:
        assert listed == "" and throttles == {}, (listed, throttles)
    starts = []
    for bid, entry in ledger["batches"].items():
        started = datetime.fromisoformat(entry["started_at"])
        assert windows.current(started) is not None, f"batch {bid} started outside a window at {started}"
        assert entry["state"] == "finished"
        starts.append(started)
    used = {windows.current(s).start for s in starts}
    assert len(used) >= 3, f"the plan ran in {len(used)} window(s)"
    assert any(h["reason"] in ("outside-window", "window-too-short") for h in ledger["holds"])
    now = describe_partitions(kafka_sandbox, topic_prefix)
    for tp, target in final_targets(plan_dir).items():
        assert now[tp]["replicas"] == target
    verified = cli("verify", "--plan", str(plan_dir), "--bootstrap-server", kafka_sandbox.bootstrap_servers)
    assert verified.returncode == 0, verified.stdout[-2000:]
    report = json.loads(verified.stdout)
    assert report["status"] == "complete" and report["throttles_left"] == [] and report["problems"] == []
