"""Pause, resume and stop requests (kafka_rebalance.executor.control) and their CLI commands."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kafka_rebalance.executor.control import ControlAction, RunState, os_user, read_control, request
from kafka_rebalance.plan_dir import CONTROL_FILE, PlanDirError, check_output, verify_plan
from kafka_rebalance.snapshot import load_snapshot
from tests.support.cli_inprocess import run_cli
from tests.support.plans import approve, move_one_replica, write_plan

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "sample-cluster.json"


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    snap = load_snapshot(SAMPLE)
    return approve(write_plan(tmp_path / "plan", snap, [move_one_replica(snap, 2)]))


def test_no_request_means_running(plan: Path) -> None:
    _, h = verify_plan(plan)
    control = read_control(plan, h)
    assert control.state is RunState.RUNNING and control.last is None


def test_requests_are_recorded_in_order_with_who_when_and_how(plan: Path) -> None:
    at = datetime(2026, 11, 24, 21, 0, 5, tzinfo=UTC)
    assert request(plan, "pause", by="alice", via="ui", now=at).state is RunState.PAUSED
    assert request(plan, ControlAction.RESUME, by="bob", now=at).state is RunState.RUNNING
    assert request(plan, "stop", now=at).state is RunState.STOPPED
    raw = json.loads((plan / CONTROL_FILE).read_text())
    assert raw == {"plan_hash": verify_plan(plan)[1], "requests": [
        {"action": "pause", "by": "alice", "at": "2026-11-24T21:00:05+00:00", "via": "ui"},
        {"action": "resume", "by": "bob", "at": "2026-11-24T21:00:05+00:00", "via": "cli"},
        {"action": "stop", "by": os_user(), "at": "2026-11-24T21:00:05+00:00", "via": "cli"},
    ]}


def test_concurrent_requests_are_all_kept(plan: Path) -> None:
    threads = [threading.Thread(target=request, args=(plan, "pause" if i % 2 else "resume"), kwargs={"by": f"u{i}"})
               for i in range(16)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    control = read_control(plan, verify_plan(plan)[1])
    assert sorted(r.by for r in control.requests) == sorted(f"u{i}" for i in range(16))


def test_another_plans_requests_are_refused(plan: Path) -> None:
    request(plan, "pause")
    raw = json.loads((plan / CONTROL_FILE).read_text())
    (plan / CONTROL_FILE).write_text(json.dumps({**raw, "plan_hash": "0" * 64}))
    h = verify_plan(plan)[1]
    with pytest.raises(PlanDirError, match=f"plan_hash: the requests are for plan '{'0' * 64}', but this directory's plan hashes to {h}"):
        read_control(plan, h)


@pytest.mark.parametrize("content", ['[]', '{"plan_hash": "x"}', "{",
                                     '{"plan_hash": "H", "requests": [{"action": "halt", "by": "a", "at": "t", "via": "cli"}]}',
                                     '{"plan_hash": "H", "requests": [{"action": "pause", "by": 7, "at": "t", "via": "cli"}]}'])
def test_a_corrupt_control_file_is_named(plan: Path, content: str) -> None:
    h = verify_plan(plan)[1]
    (plan / CONTROL_FILE).write_text(content.replace('"H"', json.dumps(h)))
    with pytest.raises(PlanDirError, match=f"^{plan / CONTROL_FILE}: .*corrupt"):
        read_control(plan, h)


def test_an_edited_plan_cannot_be_controlled(plan: Path) -> None:
    (plan / "RUNBOOK.md").write_text("edited")
    with pytest.raises(PlanDirError, match="RUNBOOK.md"):
        request(plan, "pause")
    assert not (plan / CONTROL_FILE).exists()


def test_no_other_output_flag_may_write_the_control_file(plan: Path) -> None:
    with pytest.raises(PlanDirError, match="control.json belongs to the 'control' step"):
        check_output(plan / CONTROL_FILE, "--out")


@pytest.mark.parametrize(("command", "state"), [("pause", "paused"), ("stop", "stopped"), ("resume", "running")])
def test_cli_commands(plan: Path, command: str, state: str) -> None:
    result = run_cli(command, "--plan", str(plan))
    assert result.code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["state"] == state and out["request"]["action"] == command and out["request"]["via"] == "cli"
    assert out["request"]["by"] == os_user()
    assert f"{command} recorded for plan {verify_plan(plan)[1][:12]} by {os_user()}" in result.stderr


def test_cli_on_a_missing_plan_is_one_error_line(tmp_path: Path) -> None:
    result = run_cli("pause", "--plan", str(tmp_path / "nope"))
    assert result.code == 2
    assert result.stderr == f"error: {tmp_path / 'nope'}: not a plan directory (does not exist or is a file)\n"
