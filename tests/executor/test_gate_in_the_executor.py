"""Windows, pause, resume and stop in the executor, on the simulator's virtual clock.

The gate's wall clock is the simulator's clock read as seconds after EPOCH, so an hour of windows
runs in milliseconds. Real Kafka runs the same code in tests/real_kafka.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kafka_rebalance.cluster.sim_admin import SimAdmin
from kafka_rebalance.cluster.simulator import Simulator
from kafka_rebalance.executor.control import request
from kafka_rebalance.executor.executor import Executor
from kafka_rebalance.executor.gate import ExecutionGate, HoldReason
from kafka_rebalance.executor.settings import ExecSettings
from kafka_rebalance.executor.windows import Window, policy
from kafka_rebalance.plan_manifest import load_plan
from kafka_rebalance.snapshot import load_snapshot
from tests.support.plans import approve, move_one_replica, write_plan
from tests.support.throttles import ThrottleWatch, sim_configs

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "sample-cluster.json"
EPOCH = datetime(2026, 11, 24, 0, 0, 0, tzinfo=UTC)  # the simulator's clock 0
RATE = 50 * 1024 * 1024
SETTINGS = ExecSettings(poll_interval=5.0, stall_seconds=600.0, mode="batches")  # waves; continuous: tests/kafka


@pytest.fixture
def sim_and_plan(tmp_path: Path):
    snap = load_snapshot(SAMPLE)
    # 10 GiB partitions: a batch of two moves takes about 410 s at 50 MiB/s, so pauses land mid-move.
    snap = replace(snap, partitions=tuple(replace(p, size_bytes=10 * 1024**3) for p in snap.partitions))
    batches = [move_one_replica(snap, 2, skip=2 * i) for i in range(4)]
    plan = load_plan(approve(write_plan(tmp_path / "plan", snap, batches, rate=RATE)))
    return Simulator.from_snapshot(snap), plan, batches


def _clock(admin: SimAdmin):
    return lambda: EPOCH + timedelta(seconds=admin.now())


def _throttled(sim: Simulator) -> bool:
    brokers, topics = sim_configs(sim)
    return any(k.endswith("throttled.rate") for c in brokers.values() for k in c) or \
        any(k.endswith("throttled.replicas") for c in topics.values() for k in c)


def test_a_pause_before_the_start_starts_nothing_and_a_resume_finishes(sim_and_plan) -> None:
    sim, plan, batches = sim_and_plan
    request(plan.path, "pause", by="alice")
    admin = SimAdmin(sim)
    report = Executor(plan, admin, SETTINGS).run().to_dict()
    assert report["status"] == "paused" and report["batches"] == []
    assert report["hold"]["reason"] == "paused" and "pause by alice" in report["hold"]["detail"]
    assert sim.list_reassignments() == {} and not _throttled(sim)
    assert report["progress"]["batches_done"] == 0 and len(report["progress"]["batches_remaining"]) == 4
    request(plan.path, "resume", by="bob")
    assert Executor(plan, admin, SETTINGS).run().to_dict()["status"] == "complete"
    for targets in batches:
        for tp, target in targets.items():
            assert tuple(sim.partitions[tp].replicas) == target


def test_pause_mid_move_lets_the_batch_finish_and_starts_no_other(sim_and_plan) -> None:
    sim, plan, _ = sim_and_plan
    before = sim_configs(sim)
    admin = SimAdmin(sim)
    asked: list[bool] = []

    def progress(line: str) -> None:
        if line.startswith("batch 001: 0/2") and not asked:  # batch 1 is moving
            asked.append(True)
            request(plan.path, "pause", by="carol")

    report = Executor(plan, admin, SETTINGS, progress=progress).run().to_dict()
    assert asked and report["status"] == "paused"
    assert [b["id"] for b in report["batches"]] == ["001"] and report["batches"][0]["state"] == "finished"
    assert report["batches"][0]["cancelled"] == []
    assert sim.list_reassignments() == {} and sim_configs(sim) == before
    ledger = json.loads((plan.path / "ledger.json").read_text())
    assert ledger["batches"]["001"]["state"] == "finished" and "002" not in ledger["batches"]
    assert [h["reason"] for h in ledger["holds"]] == ["paused"]


def test_stop_mid_move_cancels_what_is_in_flight_and_a_resume_redoes_it(sim_and_plan) -> None:
    sim, plan, batches = sim_and_plan
    before = sim_configs(sim)
    admin = SimAdmin(sim)
    asked: list[bool] = []

    def progress(line: str) -> None:
        if line.startswith("batch 002: 0/2") and not asked:
            asked.append(True)
            request(plan.path, "stop", by="dave")

    report = Executor(plan, admin, SETTINGS, progress=progress).run().to_dict()
    assert report["status"] == "stopped" and report["hold"]["reason"] == "stopped"
    assert sorted(report["batches"][1]["cancelled"]) == sorted(str(tp) for tp in batches[1])
    for tp in batches[1]:  # Kafka reverts a cancelled move to its old replica set
        assert sorted(sim.partitions[tp].replicas) == sorted(plan.batches[1].before[tp])
    assert sim.list_reassignments() == {} and sim_configs(sim) == before
    request(plan.path, "resume", by="dave")
    final = Executor(plan, admin, SETTINGS).run().to_dict()
    assert final["status"] == "complete"
    assert [b["id"] for b in final["batches"] if not b["skipped"]] == ["002", "003", "004"]  # batch 1 is not resubmitted


def test_moves_start_only_inside_windows_and_throttles_are_gone_between_them(sim_and_plan) -> None:
    sim, plan, batches = sim_and_plan
    before = sim_configs(sim)
    admin = SimAdmin(sim)
    # A 10-minute window every 15 minutes; each batch needs ~410 s (estimate) + a 60 s margin, so
    # one batch fits per window (two would need 940 s): four windows for four batches.
    windows = policy("configured", [Window("*/15 * * * *", timedelta(minutes=10))])
    gate = ExecutionGate(plan.path, plan.plan_hash, windows, margin=timedelta(seconds=60), grace=timedelta(seconds=300),
                         clock=_clock(admin))
    sim.advance(26 * 60)  # 00:26: outside the 00:15-00:25 window
    runs = []
    for _ in range(10):
        ex = Executor(plan, admin, SETTINGS, gate=gate)
        report = ex.run().to_dict()
        runs.append(report["status"])
        if report["status"] == "complete":
            break
        assert report["status"] == "waiting-for-window"
        assert sim.list_reassignments() == {} and sim_configs(sim) == before  # nothing in flight, no throttle between windows
        resume_at = datetime.fromisoformat(report["hold"]["resume_at"])
        assert resume_at > _clock(admin)()
        sim.advance((resume_at - _clock(admin)()).total_seconds())
    assert runs[-1] == "complete" and runs.count("waiting-for-window") >= 4
    ledger = json.loads((plan.path / "ledger.json").read_text())
    for bid, entry in ledger["batches"].items():
        started = datetime.fromisoformat(entry["started_at"])
        ended = datetime.fromisoformat(entry["ended_at"])
        window = windows.current(started)
        assert window is not None, f"batch {bid} started outside a window at {started}"
        assert ended <= window.end, f"batch {bid} ran past its window's end"
    for targets in batches:
        for tp, target in targets.items():
            assert tuple(sim.partitions[tp].replicas) == target


def test_a_batch_longer_than_every_window_is_reported_not_waited_for(sim_and_plan) -> None:
    sim, plan, _ = sim_and_plan
    admin = SimAdmin(sim)
    gate = ExecutionGate(plan.path, plan.plan_hash, policy("configured", [Window("*/15 * * * *", timedelta(minutes=2))]),
                         margin=timedelta(seconds=60), clock=_clock(admin))
    report = Executor(plan, admin, SETTINGS, gate=gate).run().to_dict()
    assert report["status"] == "waiting-for-window" and report["hold"]["resume_at"] is None
    assert "longer than the next window" in report["hold"]["detail"]


def test_a_window_overrun_past_the_grace_period_cancels_as_a_stall(sim_and_plan) -> None:
    sim, plan, batches = sim_and_plan
    before = sim_configs(sim)
    admin = SimAdmin(sim)
    tp = sorted(batches[0])[0]
    sim.set_produce_rate(tp, RATE * 0.9)  # replication crawls at a tenth of the estimate
    gate = ExecutionGate(plan.path, plan.plan_hash, policy("configured", [Window("0 * * * *", timedelta(minutes=10))]),
                         margin=timedelta(seconds=60), grace=timedelta(seconds=120), clock=_clock(admin))
    report = Executor(plan, admin, SETTINGS, gate=gate).run().to_dict()
    assert report["status"] == "waiting-for-window" and report["hold"]["reason"] == HoldReason.WINDOW_OVERRUN.value
    assert str(tp) in report["batches"][0]["cancelled"]
    ended = datetime.fromisoformat(json.loads((plan.path / "ledger.json").read_text())["batches"]["001"]["ended_at"])
    assert ended - EPOCH <= timedelta(minutes=10, seconds=120 + SETTINGS.poll_interval + 1)
    assert sim.list_reassignments() == {} and sim_configs(sim) == before


# ----------------------------------------------------------------------------- the CLI


def _cli(capsys, *args: object) -> tuple[int, str, str]:
    from tests.executor.test_plan_integrity import run_cli

    return run_cli(capsys, *args)


@pytest.fixture
def cli_plan(tmp_path: Path) -> tuple[Path, Path]:
    snap = load_snapshot(SAMPLE)
    return approve(write_plan(tmp_path / "plan", snap, [move_one_replica(snap, 2), move_one_replica(snap, 2, skip=2)])), SAMPLE


def test_cli_execute_of_a_paused_plan_exits_3_with_nothing_done(cli_plan, capsys) -> None:
    plan, snap = cli_plan
    assert _cli(capsys, "pause", "--plan", plan)[0] == 0
    code, out, err = _cli(capsys, "execute", "--plan", plan, "--simulate", snap)
    assert code == 3
    report = json.loads(out)
    assert report["status"] == "paused" and report["batches"] == [] and report["progress"]["batches_done"] == 0
    assert "held: paused: pause by" in err and "0 batch(es) done, 2 remaining" in err
    assert _cli(capsys, "resume", "--plan", plan)[0] == 0
    code, out, _ = _cli(capsys, "execute", "--plan", plan, "--simulate", snap)
    assert code == 0 and json.loads(out)["status"] == "complete"


def test_cli_execute_before_an_explicit_window_waits_for_it(cli_plan, capsys) -> None:
    plan, snap = cli_plan
    code, out, err = _cli(capsys, "execute", "--plan", plan, "--simulate", snap, "--window", "2999-01-01T00:00Z/PT1H")
    assert code == 3
    report = json.loads(out)
    assert report["status"] == "waiting-for-window" and report["hold"]["resume_at"] == "2999-01-01T00:00:00+00:00"
    assert report["progress"]["next_window"] == "2999-01-01T00:00:00Z/2999-01-01T01:00:00Z"


def test_cli_execute_after_its_only_window_is_an_error(cli_plan, capsys) -> None:
    plan, snap = cli_plan
    code, _, err = _cli(capsys, "execute", "--plan", plan, "--simulate", snap, "--window", "2001-01-01T00:00Z/PT1H")
    assert code == 1
    assert err.strip().splitlines()[-1].startswith("error: execution cannot go on: no window open (interval ")


@pytest.mark.parametrize(("flags", "message"), [
    (("--window", "tonight"), "error: --window: expected 'now', 'configured' or an ISO interval START/END or START/DURATION, got 'tonight'"),
    (("--window", "2026-11-25T01:00/PT1H"), "error: --window (start): '2026-11-25T01:00' has no time zone; add Z or an offset such as +01:00"),
    (("--window-margin", "nan"), "error: Invalid value for '--window-margin': Input should be less than or equal to 86400"),
    (("--window-grace", "-1"), "error: Invalid value for '--window-grace': Input should be greater than or equal to 0"),
])
def test_cli_execute_bad_window_flags_are_one_line(cli_plan, capsys, flags, message) -> None:
    plan, snap = cli_plan
    code, out, err = _cli(capsys, "execute", "--plan", plan, "--simulate", snap, *flags)
    assert code == 2 and out == "" and err.strip() == message
    assert not (plan / "ledger.json").exists()


# ----------------------------------------------------------------------------- drift between windows


def _two_window_plan(tmp_path: Path):
    """Broker 9 is new and empty (rack-0). Batch 1 moves topic-000-0; batch 2 moves topic-000-1 onto
    broker 9 and topic-001-0 elsewhere. One batch fits in each 10-minute window."""
    from kafka_rebalance.cluster.admin import TP
    from kafka_rebalance.snapshot import Broker

    snap = load_snapshot(SAMPLE)
    snap = replace(snap, brokers=(*snap.brokers, Broker(9, "rack-0", True, {})),
                   partitions=tuple(replace(p, size_bytes=10 * 1024**3) for p in snap.partitions))
    parts = {TP(p.topic, p.partition): tuple(p.replicas) for p in snap.partitions}
    a, b, c = TP("topic-000", 0), TP("topic-000", 1), TP("topic-001", 0)
    spare = lambda tp: next(x for x in range(6) if x not in parts[tp])  # noqa: E731
    batches = [{a: parts[a][:2] + (spare(a),)}, {b: parts[b][:2] + (9,), c: parts[c][:2] + (spare(c),)}]
    plan = load_plan(approve(write_plan(tmp_path / "plan", snap, batches, rate=RATE)))
    sim = Simulator.from_snapshot(snap)
    admin = SimAdmin(sim)
    gate = ExecutionGate(plan.path, plan.plan_hash, policy("configured", [Window("0 * * * *", timedelta(minutes=10))]),
                         margin=timedelta(seconds=60), clock=_clock(admin))
    report = Executor(plan, admin, SETTINGS, gate=gate).run().to_dict()
    assert report["status"] == "waiting-for-window" and [r["id"] for r in report["batches"]] == ["001"]
    return sim, admin, plan, gate, (a, b, c)


def _refused_with_nothing_executed(sim, admin, plan, gate, match: str) -> None:
    from kafka_rebalance.executor.settings import ExecutionRefused

    before = (sim_configs(sim), json.loads((plan.path / "ledger.json").read_text())["batches"])
    sim.advance(3600 - admin.now())  # the next window, 01:00
    with pytest.raises(ExecutionRefused, match=match):
        Executor(plan, admin, SETTINGS, gate=gate).run().to_dict()
    assert sim.list_reassignments() == {}
    assert (sim_configs(sim), json.loads((plan.path / "ledger.json").read_text())["batches"]) == before


def test_a_topic_deleted_between_windows_is_refused_and_nothing_runs(tmp_path) -> None:
    sim, admin, plan, gate, (_, _, c) = _two_window_plan(tmp_path)
    for tp in [tp for tp in sim.partitions if tp.topic == c.topic]:
        del sim.partitions[tp]
    _refused_with_nothing_executed(sim, admin, plan, gate, r"changed since planning .*topic-001-0 no longer exists \(batch 002\).*re-plan")


def test_a_broker_replaced_between_windows_is_refused_and_nothing_runs(tmp_path) -> None:
    from kafka_rebalance.cluster.simulator import SimBroker

    sim, admin, plan, gate, (_, b, _) = _two_window_plan(tmp_path)
    old = sim.brokers.pop(9)  # broker 9 replaced by broker 10 on the same rack
    sim.brokers[10] = SimBroker(10, old.rack)
    _refused_with_nothing_executed(sim, admin, plan, gate,
                                   rf"{b} would move to broker\(s\) \[9\], which the cluster no longer has \(batch 002\)")


# ----------------------------------------------------------------------------- a killed run's batch


def _killed_mid_batch(sim_and_plan, grace_s: float, before_recording: bool = False):
    """A child process runs the plan on the persisted simulator and dies (os._exit) mid-batch: no
    finally, no throttle restore, exactly what kill -9 leaves. The parent carries on from the state.

    ``before_recording``: it dies the moment Kafka accepted the batch's moves, before the ledger says so."""
    import multiprocessing
    import os

    from kafka_rebalance.cluster.sim_admin import read_state, write_state

    sim, plan, batches = sim_and_plan
    # One move of batch 001 crawls (produce rate at 90 % of the throttle): it is still in flight long
    # after the window, as a big partition on a busy topic would be.
    sim.set_produce_rate(sorted(batches[0])[0], RATE * 0.9)
    state = plan.path.parent / "sim-state.json"
    write_state(sim, state)
    windows = policy("configured", [Window("0 * * * *", timedelta(minutes=10))])  # 00:00-00:10 each hour

    def gate_for(admin: SimAdmin) -> ExecutionGate:
        return ExecutionGate(plan.path, plan.plan_hash, windows, margin=timedelta(seconds=60),
                             grace=timedelta(seconds=grace_s), clock=_clock(admin))

    class DiesOnSubmit(SimAdmin):
        def alter_reassignments(self, targets):
            super().alter_reassignments(targets)
            os._exit(137)

    def child() -> None:
        admin = (DiesOnSubmit if before_recording else SimAdmin)(read_state(state), state)

        def die(line: str) -> None:
            if line.startswith("batch 001: 0/2"):
                os._exit(137)

        Executor(plan, admin, SETTINGS, progress=die, gate=gate_for(admin)).run().to_dict()
        os._exit(0)

    proc = multiprocessing.get_context("fork").Process(target=child)
    proc.start()
    proc.join(60)
    assert proc.exitcode == 137
    expected = "throttled" if before_recording else "submitted"
    assert json.loads((plan.path / "ledger.json").read_text())["batches"]["001"]["state"] == expected
    admin = ThrottleWatch(read_state(state), state)
    assert set(admin.list_reassignments()) == set(batches[0]) and _throttled(admin.sim)
    return admin.sim, admin, plan, gate_for(admin), batches


def test_a_killed_runs_batch_restarted_outside_its_window_is_cancelled_after_the_grace(sim_and_plan) -> None:
    sim, admin, plan, gate, batches = _killed_mid_batch(sim_and_plan, grace_s=60)
    sim.advance(15 * 60)  # restarted at 00:15: the window closed at 00:10, the grace ended at 00:11
    assert set(sim.list_reassignments()) & set(batches[0])  # still moving
    report = Executor(plan, admin, SETTINGS, gate=gate).run().to_dict()
    assert report["status"] == "waiting-for-window" and report["hold"]["reason"] == "window-overrun"
    crawler = sorted(batches[0])[0]
    assert report["batches"][0]["cancelled"] == [str(crawler)]  # the other move of the batch had finished
    assert sim.list_reassignments() == {} and not _throttled(sim)
    sim.advance(3600 - admin.now())  # 01:00, the next window: batch 001 starts again from where it is
    Executor(plan, admin, SETTINGS, gate=gate).run().to_dict()
    entry = json.loads((plan.path / "ledger.json").read_text())["batches"]["001"]
    assert datetime.fromisoformat(entry["started_at"]) - EPOCH >= timedelta(hours=1)


@pytest.mark.parametrize("before_recording", [False, True], ids=["recorded-as-submitted", "killed-before-recording"])
def test_a_killed_runs_batch_restarted_within_the_grace_is_watched_to_its_end(sim_and_plan, before_recording) -> None:
    sim, admin, plan, gate, batches = _killed_mid_batch(sim_and_plan, grace_s=3 * 3600, before_recording=before_recording)
    sim.advance(11 * 60)  # 00:11: the window has closed, but the grace has not passed
    assert set(sim.list_reassignments()) & set(batches[0])  # still moving
    report = Executor(plan, admin, SETTINGS, gate=gate).run().to_dict()
    first = report["batches"][0]
    assert first["id"] == "001" and first["state"] == "finished", (first["problems"], first["cancelled"], report["hold"])
    assert report["batches"][0]["cancelled"] == []
    # Taken over, not restored and set again: the killed run's throttles held its moves at every moment.
    assert admin.unthrottled == []
    assert sum("kept the throttles an interrupted run of batch 001 set" in e  # once, not again at the batch's start
               for e in json.loads((plan.path / "ledger.json").read_text())["events"]) == 1
    assert report["status"] == "waiting-for-window"  # batch 002 waits for a window it fits in
    assert sim.list_reassignments() == {} and not _throttled(sim)
    for tp, target in batches[0].items():
        assert tuple(sim.partitions[tp].replicas) == target
