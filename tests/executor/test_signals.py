"""SIGTERM and SIGINT stop a run at a safe point, with its throttles restored and the stop in the ledger.

Real signals to this process for the handler (``stop_on_signals``); the simulator for the run, where a
stop is asked for in the middle of a Kafka call (from the progress line a submission prints) and must
take effect at the next safe point. tests/real_kafka/test_signals_on_real_kafka.py sends the signals to
a real ``kafka-rebalance execute`` process on real Kafka.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from kafka_rebalance.cluster.sim_admin import SimAdmin
from kafka_rebalance.cluster.simulator import Simulator
from kafka_rebalance.executor.executor import Executor
from kafka_rebalance.executor.interrupt import StopRequest, StopSignal, stop_on_signals
from kafka_rebalance.executor.settings import ExecSettings
from kafka_rebalance.plan_manifest import load_plan
from kafka_rebalance.snapshot import load_snapshot
from tests.support.plans import move_one_replica, read_json, write_plan
from tests.support.throttles import sim_configs

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "sample-cluster.json"


def _signal_self_after(seconds: float, signum: int) -> threading.Thread:
    t = threading.Timer(seconds, os.kill, (os.getpid(), signum))
    t.start()
    return t


@pytest.mark.parametrize("mode", ["batches", "continuous"])
def test_a_stop_while_throttles_are_being_set_submits_nothing(tmp_path, mode):
    """The signal lands during the config calls that set the throttles: in both modes the submission that would
    follow never happens, every throttle set is restored, and a re-run submits the moves afresh and finishes."""
    snap = load_snapshot(SAMPLE)
    sim = Simulator.from_snapshot(snap)
    moves = move_one_replica(snap, 3)
    plan = load_plan(write_plan(tmp_path / "plan", snap, [moves]))
    before = sim_configs(sim)
    submitted: list[int] = []
    stop = StopRequest(lambda line: None)

    class SignalledWhileThrottling(SimAdmin):
        def alter_configs(self, resource_type, name, changes):
            if any(v is not None for v in changes.values()) and not stop.requested:
                stop.request(signal.SIGTERM)  # a Kafka call is running: remembered, acted on at the next safe point
            return super().alter_configs(resource_type, name, changes)

        def alter_reassignments(self, targets):
            submitted.extend(1 for t in targets.values() if t is not None)
            return super().alter_reassignments(targets)

    ex = Executor(plan, SignalledWhileThrottling(sim), ExecSettings(mode=mode), stop=stop)
    with pytest.raises(StopSignal):
        ex.run().to_dict()
    assert submitted == [] and sim.list_reassignments() == {}
    assert sim_configs(sim) == before
    again = Executor(plan, SimAdmin(sim), ExecSettings(mode=mode)).run().to_dict()
    assert again["status"] == "complete"
    assert sim_configs(sim) == before


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_a_sleep_stops_at_once_and_a_second_one_is_reported_not_obeyed(signum):
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    notes: list[str] = []
    stop = StopRequest(notes.append)
    with stop_on_signals(stop):
        timer = _signal_self_after(0.2, signum)
        started = time.monotonic()
        with pytest.raises(StopSignal) as raised:
            stop.sleep(time.sleep, 30)
        timer.join()
        assert time.monotonic() - started < 5
        assert raised.value.signum == signum and raised.value.exit_code == 128 + signum
        # The cleanup that follows is not interrupted by another signal, nor by the next safe point.
        os.kill(os.getpid(), signal.SIGTERM)
        stop.check()
        stop.sleep(time.sleep, 0.01)
    assert len(notes) == 1 and notes[0].startswith(f"execute: SIGTERM received while stopping after {signal.Signals(signum).name}: "
                                                    "still restoring the throttles this run set")
    assert {s: signal.getsignal(s) for s in before} == before  # the previous handlers are back


def test_a_signal_during_a_kafka_call_waits_for_the_next_safe_point():
    stop = StopRequest(lambda line: None)
    stop.request(signal.SIGTERM)  # from the handler, while no sleep runs: only remembered
    assert stop.requested
    with pytest.raises(StopSignal):
        stop.check()
    stop.check()  # once


@pytest.mark.parametrize("mode", ["batches", "continuous"])
def test_a_stopped_run_submits_nothing_more_restores_throttles_records_the_stop_and_a_rerun_finishes(tmp_path, mode):
    snap = load_snapshot(SAMPLE)
    sim = Simulator.from_snapshot(snap)
    # Two batches on the same partitions: in either mode batch 2's moves can only start after batch 1's.
    first = move_one_replica(snap, 3)
    alive = sorted(b.id for b in snap.brokers if b.alive)
    second = {tp: (next(b for b in alive if b not in r), *r[1:]) for tp, r in first.items()}
    plan = load_plan(write_plan(tmp_path / "plan", snap, [first, second]))
    before = sim_configs(sim)
    submitted: list[tuple[str, ...]] = []

    class Recording(SimAdmin):
        def alter_reassignments(self, targets):
            if any(t is not None for t in targets.values()):
                submitted.append(tuple(sorted(str(tp) for tp in targets)))
            return super().alter_reassignments(targets)

    stop = StopRequest(lambda line: None)

    def progress(line: str) -> None:
        # The first progress line after batch 1's submission: the signal lands while a Kafka call runs.
        if submitted and not stop.requested:
            stop.request(signal.SIGTERM)

    ex = Executor(plan, Recording(sim), ExecSettings(poll_interval=10.0, stall_seconds=600.0, mode=mode), progress, stop=stop)
    with pytest.raises(StopSignal):
        ex.run().to_dict()
    assert submitted == [tuple(sorted(str(tp) for tp in first))]  # nothing after the stop
    assert sim_configs(sim) == before  # every throttle this run set is back as it was
    report = ex.after_stop(signal.SIGTERM)
    assert (report.signal, report.done, report.throttles_pending) == ("SIGTERM", 0, ())
    assert (report.unit, report.total) == (("steps", 6) if mode == "continuous" else ("batches", 2))
    assert report.in_flight == tuple(sorted(first))  # left to Kafka, not cancelled
    ledger = read_json(plan.path / "ledger.json")
    assert ledger["stops"][-1]["signal"] == "SIGTERM" and ledger["stops"][-1]["in_flight"] == [str(tp) for tp in sorted(first)]
    assert any("stopped by SIGTERM after 0/" in e for e in ledger["events"])
    assert ledger["batches"].get("002", {"state": "pending"})["state"] == "pending"

    # A re-run watches the moves left in flight (not resubmitted) and finishes the plan.
    submitted.clear()
    again = Executor(plan, Recording(sim), ExecSettings(poll_interval=10.0, stall_seconds=600.0, mode=mode)).run().to_dict()
    assert again["status"] == "complete"
    assert submitted == [tuple(sorted(str(tp) for tp in second))]
    for tp, target in second.items():
        assert tuple(sim.partitions[tp].replicas) == target
    assert sim_configs(sim) == before


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_outside_execute_a_signal_unwinds_the_command_with_the_shells_code(signum, capsys):
    from kafka_rebalance.executor.interrupt import exit_on_signals

    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    unwound = []
    with pytest.raises(SystemExit) as ended, exit_on_signals():
        stop = StopRequest(lambda line: None)
        with stop_on_signals(stop):  # execute's run: the signal is only remembered there
            os.kill(os.getpid(), signum)
            time.sleep(0.1)
        assert stop.signum == signum
        try:
            os.kill(os.getpid(), signum)
            time.sleep(5)
        finally:
            unwound.append(True)  # what removes key material: finally blocks, then atexit
    assert ended.value.code == 128 + signum and unwound == [True]
    assert capsys.readouterr().err == f"stopped by {signal.Signals(signum).name}\n"
    assert {s: signal.getsignal(s) for s in before} == before
