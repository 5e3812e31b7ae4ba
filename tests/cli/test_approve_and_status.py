"""`kafka-rebalance approve` (what is approved, and when approval is refused) and `kafka-rebalance status`
(the progress model read from the ledger) before, during and after a simulated execution."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kafka_rebalance.cluster.sim_admin import SimAdmin
from kafka_rebalance.executor.executor import Executor
from kafka_rebalance.executor.progress import Progress
from kafka_rebalance.executor.results import RunStatus
from kafka_rebalance.executor.settings import ExecSettings
from kafka_rebalance.plan_dir import SIM_STATE_FILE
from kafka_rebalance.plan_manifest import load_plan
from kafka_rebalance.snapshot import load_snapshot, snapshot_from_dict, write_snapshot
from tests.support.cli_inprocess import run_cli
from tests.support.plans import approve, move_one_replica, write_plan

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "sample-cluster.json"
DOCS = ROOT / "docs" / "KAFKA.md"


def snapshot_gathered(tmp_path: Path, at: datetime | None) -> Path:
    """The sample cluster as if gathered at ``at`` (None: a snapshot that records no gather time)."""
    raw = json.loads(SAMPLE.read_text())
    if at is None:
        raw.pop("captured_at", None)
    else:
        raw["captured_at"] = at.strftime("%Y-%m-%dT%H:%M:%SZ")
    return write_snapshot(snapshot_from_dict(raw, "test"), tmp_path / "snapshot.json")


def hand_plan(tmp_path: Path, snap_path: Path, status: str = "passed") -> Path:
    snap = load_snapshot(snap_path)
    return write_plan(tmp_path / "plan", snap, [move_one_replica(snap, 4), move_one_replica(snap, 4, skip=4)], status=status)


def one_error(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.code == 2 and len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


# ----------------------------------------------------------------------------- approve


def test_approve_shows_the_plan_and_records_the_decision_bound_to_its_hash(tmp_path):
    gathered = datetime.now(UTC) - timedelta(hours=2)
    snap_path = snapshot_gathered(tmp_path, gathered)
    plan = hand_plan(tmp_path, snap_path)
    manifest = json.loads((plan / "plan.json").read_text())
    r = run_cli("approve", "--plan", str(plan), "--by", "alice", "--note", "change 42")
    assert r.code == 0, r.stderr
    # What the operator saw: the hash, the snapshot's age, the 8 moves of the two batches of 4.
    assert manifest["plan_hash"] in r.stderr and "validation: passed" in r.stderr
    assert "snapshot age: 2h00m" in r.stderr or "snapshot age: 2h01m" in r.stderr, r.stderr
    assert "8 replica moves in 2 batches" in r.stderr
    recorded = json.loads((plan / "approval.json").read_text())
    assert recorded == json.loads(r.stdout)
    assert (recorded["decision"], recorded["by"], recorded["note"]) == ("approved", "alice", "change 42")
    assert recorded["plan_hash"] == manifest["plan_hash"]
    assert recorded["snapshot_captured_at"] == gathered.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert 7200 <= recorded["snapshot_age_seconds"] <= 7200 + 120 and recorded["max_plan_age_seconds"] == 24 * 3600
    # Written once: the same decision again changes nothing; a different one is refused.
    before = (plan / "approval.json").read_bytes()
    assert run_cli("approve", "--plan", str(plan), "--by", "alice").code == 0
    line = one_error(run_cli("approve", "--plan", str(plan), "--by", "mallory", "--reject"))
    assert "was already approved by alice; not recording 'rejected'" in line
    assert (plan / "approval.json").read_bytes() == before
    assert load_plan(plan, require_approval=True).plan_hash == manifest["plan_hash"]


def test_a_plan_older_than_the_maximum_age_is_not_approved(tmp_path):
    plan = hand_plan(tmp_path, snapshot_gathered(tmp_path, datetime(2026, 1, 1, tzinfo=UTC)))
    line = one_error(run_cli("approve", "--plan", str(plan), "--by", "alice"))
    assert "captured_at 2026-01-01T00:00:00Z" in line and "over the maximum plan age of 24h00m" in line
    assert "gather a fresh snapshot and re-plan" in line
    assert not (plan / "approval.json").exists()
    # The limit is the operator's to set: 30 hours admits a snapshot gathered 26 hours ago.
    young = tmp_path / "young"
    young.mkdir()
    plan = hand_plan(young, snapshot_gathered(young, datetime.now(UTC) - timedelta(hours=26)))
    assert "over the maximum plan age of 24h00m" in one_error(run_cli("approve", "--plan", str(plan), "--by", "alice"))
    r = run_cli("approve", "--plan", str(plan), "--by", "alice", "--max-plan-age", "30")
    assert r.code == 0, r.stderr
    assert json.loads((plan / "approval.json").read_text())["max_plan_age_seconds"] == 30 * 3600


def test_a_snapshot_gathered_in_the_future_cannot_be_approved(tmp_path):
    """A gather time past the allowed clock skew (5 minutes) makes the age meaningless: refused, not a negative age."""
    plan = hand_plan(tmp_path, snapshot_gathered(tmp_path, datetime(2999, 1, 1, tzinfo=UTC)))
    line = one_error(run_cli("approve", "--plan", str(plan), "--by", "alice"))
    assert "snapshot.captured_at: 2999-01-01T00:00:00Z is" in line and "in the future" in line and "s ago" not in line
    assert not (plan / "approval.json").exists()
    # Within the skew a slightly fast gathering clock is fine.
    near = tmp_path / "near"
    near.mkdir()
    plan = hand_plan(near, snapshot_gathered(near, datetime.now(UTC) + timedelta(minutes=2)))
    assert run_cli("approve", "--plan", str(plan), "--by", "alice").code == 0


def test_execution_does_not_start_once_the_plan_is_older_than_its_approved_limit(tmp_path):
    """Approved young, executed late: the age is checked again when execution starts, against the approval's limit."""
    gathered = datetime.now(UTC) - timedelta(hours=2)
    plan = hand_plan(tmp_path, snapshot_gathered(tmp_path, gathered))
    r = run_cli("approve", "--plan", str(plan), "--by", "alice", "--max-plan-age", "3")
    assert r.code == 0, r.stderr
    approval = json.loads((plan / "approval.json").read_text())
    # Time passes: the approval's limit is now behind the snapshot (rewritten as if approved with a 1 hour limit).
    approval["max_plan_age_seconds"] = 3600
    (plan / "approval.json").write_text(json.dumps(approval))
    line = one_error(run_cli("execute", "--plan", str(plan), "--simulate", str(SAMPLE)))
    assert "not started:" in line and "over the maximum plan age of 1h00m" in line
    assert not (plan / "ledger.json").exists() or json.loads((plan / "ledger.json").read_text())["batches"] == {}


def test_a_snapshot_without_a_gather_time_cannot_be_approved(tmp_path):
    plan = hand_plan(tmp_path, snapshot_gathered(tmp_path, None))
    line = one_error(run_cli("approve", "--plan", str(plan), "--by", "alice"))
    assert "snapshot.captured_at: the snapshot records no gather time" in line
    assert not (plan / "approval.json").exists()


@pytest.mark.parametrize(("status", "message"), [
    ("failed", 'status is "failed"; only a plan that passed validation can run'),
    ("pending", "missing; the plan was never validated"),
])
def test_a_plan_that_did_not_pass_validation_is_not_approved(tmp_path, status, message):
    plan = hand_plan(tmp_path, snapshot_gathered(tmp_path, datetime.now(UTC)), status=status)
    assert message in one_error(run_cli("approve", "--plan", str(plan), "--by", "alice"))
    assert not (plan / "approval.json").exists()


def test_a_rejection_is_recorded_for_any_plan_and_then_it_never_runs(tmp_path):
    snap_path = snapshot_gathered(tmp_path, datetime(2026, 1, 1, tzinfo=UTC))
    plan = hand_plan(tmp_path, snap_path)
    r = run_cli("approve", "--plan", str(plan), "--by", "bob", "--reject", "--note", "stale")
    assert r.code == 0, r.stderr
    assert json.loads((plan / "approval.json").read_text())["decision"] == "rejected"
    line = one_error(run_cli("execute", "--plan", str(plan), "--simulate", str(snap_path)))
    assert 'approval.json: decision is "rejected" (by bob)' in line
    assert not (plan / SIM_STATE_FILE).exists()


def test_approve_with_an_empty_name_is_refused(tmp_path):
    plan = hand_plan(tmp_path, snapshot_gathered(tmp_path, datetime.now(UTC)))
    assert "--by: name who decides" in one_error(run_cli("approve", "--plan", str(plan), "--by", " "))
    assert not (plan / "approval.json").exists()


def test_execute_names_the_command_that_approves(tmp_path):
    snap_path = snapshot_gathered(tmp_path, datetime.now(UTC))
    plan = hand_plan(tmp_path, snap_path)
    line = one_error(run_cli("execute", "--plan", str(plan), "--simulate", str(snap_path)))
    assert line == (f"error: {plan / 'approval.json'}: missing; nobody approved this plan "
                    f"(approve it: kafka-rebalance approve --plan {plan} --by NAME)")
    assert run_cli("approve", "--plan", str(plan), "--by", "alice").code == 0
    r = run_cli("execute", "--plan", str(plan), "--simulate", str(snap_path), "--poll-interval", "60")
    assert r.code == 0, r.stderr
    assert json.loads(r.stdout)["status"] == "complete"


# ----------------------------------------------------------------------------- status


def _status(plan: Path) -> dict:
    r = run_cli("status", "--plan", str(plan), "--json")
    assert r.code == 0, r.stderr
    return json.loads(r.stdout)


def _expected_totals(plan: Path, snap_path: Path) -> tuple[int, int]:
    """Moves and bytes of the plan, from schedule.json's steps and the snapshot's partition sizes."""
    sizes = {(p.topic, p.partition): p.size_bytes or 0 for p in load_snapshot(snap_path).partitions}
    steps = [s for s in json.loads((plan / "schedule.json").read_text())["steps"] if s["adds"]]
    return len(steps), sum(sizes[(s["topic"], s["partition"])] * len(s["adds"]) for s in steps)


def test_status_before_between_and_after_a_simulated_execution(tmp_path):
    snap_path = snapshot_gathered(tmp_path, datetime.now(UTC))
    plan = approve(hand_plan(tmp_path, snap_path))
    moves, total = _expected_totals(plan, snap_path)
    assert moves == 8 and total > 0
    batch_bytes = [b["bytes"] for b in json.loads((plan / "plan.json").read_text())["batches"]]
    assert sum(batch_bytes) == total

    before = _status(plan)
    assert before["state"] == "not-started" and before["version"] == 3
    assert (before["moves_total"], before["moves_done"], before["moves_in_flight"], before["moves_pending"]) == (8, 0, 0, 8)
    assert (before["bytes_total"], before["bytes_done"], before["bytes_left"], before["percent_bytes"]) == (total, 0, total, 0.0)
    assert before["eta_seconds"] is None and before["started_at"] is None

    # Batch 1 of 2 as a wave: the run ends incomplete, half the moves done.
    r = run_cli("execute", "--plan", str(plan), "--simulate", str(snap_path), "--mode", "batches", "--batches", "1")
    assert r.code == 1, r.stderr
    between = _status(plan)
    assert between["state"] == "running"
    assert (between["moves_done"], between["moves_in_flight"], between["moves_pending"]) == (4, 0, 4)
    assert between["bytes_done"] == batch_bytes[0] and between["bytes_left"] == batch_bytes[1]
    assert between["percent_bytes"] == round(100 * batch_bytes[0] / total, 2)
    assert between["rate_bytes_per_sec"] > 0 and between["eta_seconds"] == round(batch_bytes[1] / between["rate_bytes_per_sec"], 1)
    assert between["eta_at"] is not None

    r = run_cli("execute", "--plan", str(plan), "--simulate", str(snap_path), "--poll-interval", "60")
    assert r.code == 0, r.stderr
    after = _status(plan)
    assert after["state"] == "finished"
    assert (after["moves_done"], after["moves_in_flight"], after["moves_pending"], after["moves_failed"]) == (8, 0, 0, 0)
    assert (after["bytes_done"], after["bytes_left"], after["percent_bytes"]) == (total, 0, 100.0)
    assert after["elections_requested"] == after["elections_total"] == 8
    assert after["eta_seconds"] is None and after["eta_at"] is None
    # Read twice, the same: status depends on the plan directory alone.
    assert _status(plan) == after
    assert Progress.from_json(after).as_json() == after
    human = run_cli("status", "--plan", str(plan))
    assert human.code == 0 and human.stdout.splitlines()[0] == f"plan {after['plan_hash'][:16]}: finished, 100.0 % of bytes"


def test_status_during_a_continuous_execution_rises_to_finished(tmp_path):
    """Read from disk at every progress line the executor prints while the moves run."""
    snap_path = snapshot_gathered(tmp_path, datetime.now(UTC))
    snap = load_snapshot(snap_path)
    plan = approve(write_plan(tmp_path / "plan", snap, [move_one_replica(snap, 6), move_one_replica(snap, 6, skip=6)]))
    _, total = _expected_totals(plan, snap_path)
    seen: list[dict] = []
    the_plan = load_plan(plan, require_approval=True)
    admin = SimAdmin.open(snap, plan / SIM_STATE_FILE)
    outcome = Executor(the_plan, admin, ExecSettings(poll_interval=5.0), progress=lambda _line: seen.append(_status(plan))).run()
    assert outcome.status is RunStatus.COMPLETE
    final = _status(plan)
    percents = [s["percent_bytes"] for s in seen] + [final["percent_bytes"]]
    assert percents == sorted(percents), percents  # never goes back
    during = [s for s in seen if s["moves_in_flight"] > 0]
    assert during and all(s["state"] == "running" for s in during)
    assert any(0 < s["percent_bytes"] < 100 for s in seen)
    assert final["state"] == "finished" and final["bytes_done"] == total and final["percent_bytes"] == 100.0


@pytest.mark.parametrize("mode", ["continuous", "batches"])
def test_the_measured_rate_is_bytes_copied_over_the_time_they_took_within_every_brokers_throttle(tmp_path, mode):
    """The simulator runs on its own clock (an hour of copying in a second): the rate must be measured
    on that clock, not on the wall clock the ledger's timestamps are written in (which made it 14 GB/s)."""
    snap_path = snapshot_gathered(tmp_path, datetime.now(UTC))
    snap = load_snapshot(snap_path)
    rate = 4 * 1024 * 1024  # slow enough that the copying, not the simulator's poll steps, sets the time
    plan = approve(write_plan(tmp_path / "plan", snap, [move_one_replica(snap, 6), move_one_replica(snap, 6, skip=6)], rate=rate))
    r = run_cli("execute", "--plan", str(plan), "--simulate", str(snap_path), "--mode", mode, "--poll-interval", "1")
    assert r.code == 0, r.stderr
    status = _status(plan)
    assert status["state"] == "finished" and status["bytes_done"] > 0
    # No schedule copies faster than every broker receiving at its throttle at once.
    assert 0 < status["rate_bytes_per_sec"] <= rate * len(snap.brokers), status
    # And it is the simulated time the copies took: the ledger's own figure for the run or its batches.
    ledger = json.loads((plan / "ledger.json").read_text())
    took = (ledger["continuous"]["actual_seconds"] if mode == "continuous"
            else sum(b["actual_seconds"] for b in ledger["batches"].values()))
    assert took > 10 and status["rate_bytes_per_sec"] >= status["bytes_done"] / took * 0.99, (took, status)


def test_status_of_a_run_whose_moves_overran_their_time_limit_is_failed_until_a_rerun_finishes(tmp_path):
    snap_path = snapshot_gathered(tmp_path, datetime.now(UTC))
    plan = approve(hand_plan(tmp_path, snap_path))
    _, total = _expected_totals(plan, snap_path)
    r = run_cli("execute", "--plan", str(plan), "--simulate", str(snap_path), "--batch-timeout", "0.001",
                "--poll-interval", "0.001")
    assert r.code == 1, r.stderr
    steps = json.loads((plan / "ledger.json").read_text())["continuous"]["steps"]
    cancelled = [e for e in steps.values() if e["state"] == "cancelled"]
    assert cancelled, steps  # the time limit cancelled moves: the run did not finish
    failed = _status(plan)
    assert failed["state"] == "failed" and failed["moves_in_flight"] == 0 and failed["moves_failed"] == 0
    assert failed["moves_pending"] == len(cancelled) and failed["bytes_left"] > 0
    assert failed["eta_seconds"] is None and failed["eta_at"] is None
    r = run_cli("execute", "--plan", str(plan), "--simulate", str(snap_path), "--poll-interval", "60")
    assert r.code == 0, r.stderr
    assert (_status(plan)["state"], _status(plan)["bytes_done"]) == ("finished", total)


def test_status_while_waiting_for_a_window_is_not_failed(tmp_path):
    snap_path = snapshot_gathered(tmp_path, datetime.now(UTC))
    plan = approve(hand_plan(tmp_path, snap_path))
    r = run_cli("execute", "--plan", str(plan), "--simulate", str(snap_path), "--window", "2999-01-01T00:00Z/PT1H")
    assert r.code == 3, r.stderr
    assert json.loads((plan / "ledger.json").read_text())["holds"]
    assert _status(plan)["state"] == "not-started"


@pytest.mark.parametrize(("action", "state"), [("pause", "paused"), ("stop", "stopped")])
def test_status_reports_the_operators_request(tmp_path, action, state):
    plan = approve(hand_plan(tmp_path, snapshot_gathered(tmp_path, datetime.now(UTC))))
    assert run_cli(action, "--plan", str(plan)).code == 0
    assert _status(plan)["state"] == state
    assert run_cli("resume", "--plan", str(plan)).code == 0
    assert _status(plan)["state"] == "not-started"


def test_status_of_a_missing_plan_is_one_line(tmp_path):
    assert "not a plan directory" in one_error(run_cli("status", "--plan", str(tmp_path / "none")))


def test_every_status_json_field_is_documented(tmp_path):
    plan = hand_plan(tmp_path, snapshot_gathered(tmp_path, datetime.now(UTC)))
    text = DOCS.read_text()
    section = text[text.index("### `status --json`"):]
    missing = [k for k in _status(plan) if f"`{k}`" not in section]
    assert not missing, f"docs/KAFKA.md does not document {missing}"


# ----------------------------------------------------------------------------- signed approvals


def test_with_an_approval_key_only_a_signed_unaltered_approval_runs(tmp_path, monkeypatch):
    """Write access to the plan directory is not enough: with a key configured, approve signs, and execute refuses
    an approval written by hand, altered after signing, or signed with another key."""
    from kafka_rebalance.approval_key import APPROVAL_KEY_ENV, fingerprint

    key = "k" * 64
    monkeypatch.setenv(APPROVAL_KEY_ENV, key)
    plan = hand_plan(tmp_path, snapshot_gathered(tmp_path, datetime.now(UTC) - timedelta(hours=1)))
    hand_written = {"decision": "approved", "by": "mallory", "note": "", "plan_hash": json.loads((plan / "plan.json").read_text())["plan_hash"]}
    (plan / "approval.json").write_text(json.dumps(hand_written))
    line = one_error(run_cli("execute", "--plan", str(plan), "--simulate", str(SAMPLE)))
    assert "approval.json: signature: not signed, but this process has an approval key" in line
    (plan / "approval.json").unlink()

    assert run_cli("approve", "--plan", str(plan), "--by", "alice").code == 0
    recorded = json.loads((plan / "approval.json").read_text())
    assert recorded["signature"]["key"] == fingerprint(key.encode()) and key not in (plan / "approval.json").read_text()
    altered = {**recorded, "by": "mallory"}
    (plan / "approval.json").write_text(json.dumps(altered))
    assert "it was altered after it was signed" in one_error(run_cli("execute", "--plan", str(plan), "--simulate", str(SAMPLE)))
    (plan / "approval.json").write_text(json.dumps(recorded))

    monkeypatch.setenv(APPROVAL_KEY_ENV, "z" * 64)
    assert "signed with key" in one_error(run_cli("execute", "--plan", str(plan), "--simulate", str(SAMPLE)))
    monkeypatch.setenv(APPROVAL_KEY_ENV, key)
    r = run_cli("execute", "--plan", str(plan), "--simulate", str(SAMPLE), "--poll-interval", "60")
    assert r.code == 0, r.stderr


def test_a_short_approval_key_is_refused_in_one_line(tmp_path, monkeypatch):
    from kafka_rebalance.approval_key import APPROVAL_KEY_ENV

    monkeypatch.setenv(APPROVAL_KEY_ENV, "short")
    plan = hand_plan(tmp_path, snapshot_gathered(tmp_path, datetime.now(UTC) - timedelta(hours=1)))
    line = one_error(run_cli("approve", "--plan", str(plan), "--by", "alice"))
    assert "KAFKA_REBALANCE_APPROVAL_KEY: the approval key is 5 bytes; use at least 32" in line
    assert not (plan / "approval.json").exists()
