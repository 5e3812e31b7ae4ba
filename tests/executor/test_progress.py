"""The progress model (executor/progress.py) over ledgers in each state, written through the ledger's own API
(the transition table checks every change, as in a run), with the operator's requests of control.json.

The plan: two batches of two data moves each, one schedule step per move, on the sample cluster. The times
are fixed here, so every expected value below is read off the ledger these tests write.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_rebalance.executor.control import Control, ControlAction, ControlRequest
from kafka_rebalance.executor.ledger import CANCELLED, FAILED, FINISHED, SUBMITTED, THROTTLES_RECORDED, Ledger
from kafka_rebalance.executor.progress import (
    BatchState,
    ExecState,
    Progress,
    action_refusal,
    applicable_actions,
    progress,
    read_progress,
)
from kafka_rebalance.plan_manifest import Plan, load_plan
from kafka_rebalance.snapshot import load_snapshot
from tests.support.plans import move_one_replica, write_plan

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "sample-cluster.json"
T0 = "2026-11-28T10:00:00.000+00:00"


def at(second: int) -> str:
    return f"2026-11-28T10:00:{second:02d}.000+00:00"


@pytest.fixture(scope="module")
def plan(tmp_path_factory) -> Plan:
    snap = load_snapshot(SAMPLE)
    path = write_plan(tmp_path_factory.mktemp("progress") / "plan", snap,
                      [move_one_replica(snap, 2), move_one_replica(snap, 2, skip=2)])
    return load_plan(path)


def ids(plan: Plan) -> tuple[str, str]:
    one, two = (b.id for b in plan.batches)
    return one, two


def control(plan: Plan, *actions: ControlAction) -> Control:
    return Control(plan.plan_hash, tuple(ControlRequest(a, "alice", T0, "cli") for a in actions))


def step_ids(plan: Plan, batch: str) -> list[str]:
    assert plan.schedule is not None
    return [str(m.id) for m in plan.schedule.moves if m.batch == batch]


def bytes_of(plan: Plan, batch: str) -> int:
    assert plan.schedule is not None
    return sum(m.bytes * len(m.adds) for m in plan.schedule.moves if m.batch == batch)


def continuous(plan: Plan, *, finished: int, in_flight: int = 0, cancelled: int = 0, failed: int = 0,
               run: str | None = None, elections: bool = False) -> Ledger:
    """A continuous run: ``finished`` steps done (one second of admin clock each, back to back), then
    ``in_flight`` submitted, then ``cancelled`` and ``failed`` ended so; ``run``: how the run ended."""
    ledger = Ledger.fresh(plan.path, plan.plan_hash)
    ledger.set_run(SUBMITTED, started_at=T0, started_clock=100.0)
    one, two = ids(plan)
    ends = [FINISHED] * finished + [None] * in_flight + [CANCELLED] * cancelled + [FAILED] * failed
    for n, (sid, end) in enumerate(zip(step_ids(plan, one) + step_ids(plan, two), ends)):
        batch = one if sid in step_ids(plan, one) else two
        ledger.set_step(sid, SUBMITTED, batch=batch, started_at=at(n), started_clock=100.0 + n)
        if ledger.state(batch) != SUBMITTED:
            ledger.set_batch(batch, SUBMITTED, mode="continuous", started_at=at(n))
        if end is not None:
            ledger.set_step(sid, end, ended_at=at(n + 1), ended_clock=101.0 + n)
    if run is not None:
        ledger.set_run(FINISHED if run == "finished" else FAILED, ended_at=at(30))
    if elections:
        ledger.data["elections"] = {"done": True, "requested": len(plan.elections)}
    return ledger


def test_before_any_run_nothing_has_started_and_every_batch_is_pending(plan) -> None:
    p = progress(plan, None, control(plan))
    assert p.state is ExecState.NOT_STARTED
    assert (p.moves_total, p.moves_pending, p.bytes_done, p.percent_bytes) == (4, 4, 0, 0.0)
    one, two = ids(plan)
    assert [(b.id, b.state, b.started_at, b.ended_at) for b in p.batches] == [
        (one, BatchState.PENDING, None, None), (two, BatchState.PENDING, None, None)]
    assert [b.bytes for b in p.batches] == [bytes_of(plan, one), bytes_of(plan, two)]
    # Not approved: no buttons at all; approved: it may be paused or stopped before it starts.
    assert applicable_actions(p, approved=False) == ()
    assert applicable_actions(p, approved=True) == (ControlAction.PAUSE, ControlAction.STOP)


def test_while_running_the_finished_batch_has_its_end_and_the_eta_is_measured(plan) -> None:
    p = progress(plan, continuous(plan, finished=3, in_flight=1).data, control(plan))
    assert p.state is ExecState.RUNNING
    assert (p.moves_done, p.moves_in_flight, p.moves_pending) == (3, 1, 0)
    one, two = ids(plan)
    third = plan.schedule.moves[2]  # type: ignore[union-attr]
    done = bytes_of(plan, one) + third.bytes * len(third.adds)
    assert (p.bytes_done, p.bytes_left) == (done, bytes_of(plan, one) + bytes_of(plan, two) - done)
    # Three moves in three seconds of the admin's clock, from the run's start at 100.0.
    assert p.rate_bytes_per_sec == round(done / 3.0, 1)
    assert p.eta_seconds == round(p.bytes_left / (done / 3.0), 1) and p.eta_at is not None
    one, two = p.batches
    assert (one.state, one.partitions_done, one.started_at, one.ended_at, one.seconds) == (
        BatchState.FINISHED, 2, at(0), at(2), 2.0)
    assert (two.state, two.partitions_done, two.started_at, two.ended_at) == (BatchState.RUNNING, 1, at(2), None)
    assert applicable_actions(p, approved=True) == (ControlAction.PAUSE, ControlAction.STOP)


def test_a_finished_run_is_finished_with_every_batch_ended_and_refuses_every_request(plan) -> None:
    ledger = continuous(plan, finished=4, run="finished", elections=True).data
    p = progress(plan, ledger, control(plan))
    assert p.state is ExecState.FINISHED and p.percent_bytes == 100.0 and p.eta_at is None
    assert [(b.state, b.ended_at) for b in p.batches] == [(BatchState.FINISHED, at(2)), (BatchState.FINISHED, at(4))]
    assert applicable_actions(p, approved=True) == ()
    for action in ControlAction:
        assert action_refusal(p, action) is not None
    # A stop recorded after the end (as the page once allowed) does not make a finished plan read as stopped.
    assert progress(plan, ledger, control(plan, ControlAction.STOP)).state is ExecState.FINISHED


def test_a_paused_run_is_paused_and_only_resume_or_stop_apply(plan) -> None:
    p = progress(plan, continuous(plan, finished=1, run="failed").data | {"holds": [{"at": at(29), "reason": "paused"}]},
                 control(plan, ControlAction.PAUSE))
    assert p.state is ExecState.PAUSED and p.eta_at is None
    assert [b.state for b in p.batches] == [BatchState.PARTIAL, BatchState.PENDING]
    assert p.batches[0].ended_at is None
    assert applicable_actions(p, approved=True) == (ControlAction.RESUME, ControlAction.STOP)
    assert action_refusal(p, ControlAction.RESUME) is None


def test_a_stopped_run_is_stopped_with_its_cancelled_batch_ended(plan) -> None:
    p = progress(plan, continuous(plan, finished=2, cancelled=1, run="failed").data | {"holds": [{"at": at(29)}]},
                 control(plan, ControlAction.PAUSE, ControlAction.STOP))
    assert p.state is ExecState.STOPPED and p.moves_pending == 2
    assert [(b.state, b.ended_at) for b in p.batches] == [(BatchState.FINISHED, at(2)), (BatchState.CANCELLED, at(3))]
    assert applicable_actions(p, approved=True) == ()


def test_a_failed_run_is_failed(plan) -> None:
    p = progress(plan, continuous(plan, finished=2, failed=1, run="failed").data, control(plan))
    assert p.state is ExecState.FAILED and p.moves_failed == 1 and p.eta_at is None
    assert [b.state for b in p.batches] == [BatchState.FINISHED, BatchState.FAILED]
    assert applicable_actions(p, approved=True) == ()


def test_batches_run_as_waves_carry_their_own_times(plan) -> None:
    one, two = ids(plan)
    ledger = Ledger.fresh(plan.path, plan.plan_hash)
    ledger.set_batch(one, THROTTLES_RECORDED, started_at=at(0), started_clock=100.0)
    ledger.set_batch(one, SUBMITTED)
    ledger.set_batch(one, FINISHED, ended_at=at(9), actual_seconds=8.5, completed=["a", "b"])
    ledger.set_batch(two, THROTTLES_RECORDED, started_at=at(10), started_clock=110.0)
    p = progress(plan, ledger.data, control(plan))
    assert p.state is ExecState.RUNNING and p.moves_in_flight == 2
    assert p.rate_bytes_per_sec == round(bytes_of(plan, one) / 8.5, 1)
    assert [(b.state, b.partitions_done, b.started_at, b.ended_at, b.seconds) for b in p.batches] == [
        (BatchState.FINISHED, 2, at(0), at(9), 8.5), (BatchState.RUNNING, 0, at(10), None, None)]


def test_the_json_contract_round_trips_with_its_batches(plan) -> None:
    p = progress(plan, continuous(plan, finished=3, in_flight=1).data, control(plan))
    raw = p.as_json()
    assert raw["version"] == 3 and raw["batches"][0]["state"] == "finished"
    assert Progress.from_json(raw) == p
    # A version 2 document (before the estimate fields) still reads, without them.
    old = {k: v for k, v in raw.items() if k not in ("estimated_seconds", "estimate_of", "other_estimated_seconds",
                                                     "other_estimate_of")}
    old["version"], old["batches"] = 2, [{k: v for k, v in b.items() if k != "estimated_seconds"} for b in raw["batches"]]
    read = Progress.from_json(old)
    assert read.estimated_seconds is None and read.batches[0].estimated_seconds is None
    assert read.moves_done == p.moves_done and read.batches[0].state == p.batches[0].state


def test_read_progress_reads_the_plan_directory_as_status_does(plan, tmp_path) -> None:
    ledger = continuous(plan, finished=4, run="finished", elections=True)
    assert read_progress(plan.path).state is ExecState.NOT_STARTED  # nothing written yet
    ledger.save()
    try:
        assert read_progress(plan.path) == progress(plan, Ledger.open(plan.path, plan.plan_hash).data, control(plan))
        assert read_progress(plan.path).state is ExecState.FINISHED
    finally:
        ledger.path.unlink()


def test_a_run_killed_mid_move_reads_interrupted_and_a_live_one_running(plan) -> None:
    # A process of this host that exited (reaped, so its pid names nothing) left its lease recorded, as SIGKILL does.
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    dead_pid = int(gone.stdout)
    ledger = continuous(plan, finished=1, in_flight=1)
    try:
        for pid, expected in ((dead_pid, ExecState.INTERRUPTED), (os.getpid(), ExecState.RUNNING)):
            ledger.data["lease"] = {"host": socket.gethostname(), "pid": pid, "command": "execute", "since": T0}
            ledger.save()
            p = read_progress(plan.path)
            assert p.state is expected, pid
            assert (p.moves_done, p.moves_in_flight) == (1, 1)
        # A holder on another host cannot be proven gone from here: it reads as running.
        ledger.data["lease"] = {"host": "elsewhere.invalid", "pid": dead_pid, "command": "execute", "since": T0}
        ledger.save()
        assert read_progress(plan.path).state is ExecState.RUNNING
        # A run that ended cleanly cleared its lease: nothing is proven about it, so it is not called interrupted.
        ledger.data["lease"] = None
        ledger.save()
        assert read_progress(plan.path).state is ExecState.RUNNING
    finally:
        ledger.path.unlink()
