"""`kafka-rebalance validate` as an operator runs it: exit codes, report, files, no tracebacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.plans import restamp, small_plan, write_json

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    return subprocess.run([sys.executable, "-m", "kafka_rebalance.cli", "validate", *args],
                          capture_output=True, text=True, env=env, timeout=300)


def test_pass_then_fail_with_readable_report(tmp_path: Path) -> None:
    plan, snapshot = small_plan(tmp_path)
    ok = cli("--plan", str(plan), "--snapshot", str(snapshot))
    assert ok.returncode == 0, ok.stderr
    assert "validation passed" in ok.stdout
    assert "Skipping registering" not in ok.stdout + ok.stderr  # GX's chatter is silenced
    assert "Calculating Metrics" not in ok.stdout + ok.stderr
    docs = plan / "validation" / "data_docs" / "index.html"
    assert docs.is_file() and (plan / "validation" / "result.json").is_file()

    path = plan / "batches" / "002" / "reassignment.json"
    doc = json.loads(path.read_text())
    doc["partitions"][0]["replicas"] = [0, 0]
    write_json(path, doc)
    restamp(plan)
    bad = cli("--plan", str(plan), "--snapshot", str(snapshot))
    assert bad.returncode == 1, bad.stderr
    assert "FAILED reassignment_plan.expect_replica_list_without_repeats" in bad.stdout
    assert "batch 002 orders-4: replicas [0, 0] repeat broker 0" in bad.stdout
    assert "Traceback" not in bad.stdout + bad.stderr
    assert json.loads((plan / "validation" / "verdict.json").read_text())["status"] == "failed"


def test_unusable_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    plan, snapshot = small_plan(tmp_path)
    missing = cli("--plan", str(plan), "--snapshot", str(tmp_path / "nope.json"))
    assert missing.returncode == 2
    assert missing.stderr.strip() == f"error: {tmp_path / 'nope.json'}: snapshot file does not exist"

    (plan / "batches" / "001" / "reassignment.json").write_text('{"version": 1, "partitions": [')
    broken = cli("--plan", str(plan), "--snapshot", str(snapshot))
    assert broken.returncode == 2
    assert "Traceback" not in broken.stderr
    assert len(broken.stderr.strip().splitlines()) == 1
    assert "batches/001/reassignment.json: not valid JSON" in broken.stderr
    # the plan's own files are unusable: it is rejected, so it can never be executed
    assert json.loads((plan / "validation" / "verdict.json").read_text())["status"] == "failed"

    nodir = cli("--plan", str(tmp_path / "absent"), "--snapshot", str(snapshot))
    assert nodir.returncode == 2 and "plan directory does not exist" in nodir.stderr
