"""The executor over both backends: the simulator in-process, and the real kafka-python
client talking to the Kafka-protocol test server (backed by a simulator) over TCP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kafka_rebalance.cluster.admin import TP, ClusterAdmin, ClusterError
from kafka_rebalance.cluster.connection import ConnectionSettings
from kafka_rebalance.cluster.live import LiveAdmin
from kafka_rebalance.cluster.sim_admin import SimAdmin
from kafka_rebalance.cluster.simulator import Simulator
from kafka_rebalance.executor.executor import Executor
from kafka_rebalance.executor.settings import ExecSettings, ExecutionRefused
from kafka_rebalance.plan_manifest import load_plan
from kafka_rebalance.snapshot import load_snapshot
from kafka_rebalance.testing.testserver import KafkaTestServer
from tests.support.plans import move_one_replica, read_json, write_plan
from tests.support.throttles import sim_configs

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "sample-cluster.json"
RATE = 50 * 1024 * 1024
PRIOR_BROKER = {"follower.replication.throttled.rate": "12345"}  # an operator's throttle that must survive
PRIOR_TOPIC = {"leader.replication.throttled.replicas": "7:5", "retention.ms": "3600000"}


class Backend:
    """One cluster, reachable through a ClusterAdmin, with fault injection on its simulator."""

    def __init__(self, kind: str, sim: Simulator) -> None:
        self.kind, self.sim, self.server = kind, sim, None
        if kind == "server":
            # 400 virtual seconds per wall second: a 20 s batch takes ~50 ms of polling.
            self.server = KafkaTestServer(sim, time_scale=400).start()

    def admin(self) -> ClusterAdmin:
        if self.server is None:
            return SimAdmin(self.sim)
        return LiveAdmin(ConnectionSettings(self.server.bootstrap_servers, bootstrap_timeout_ms=5000), quiet=True)

    def settings(self, **kw) -> ExecSettings:
        # These cases test wave execution (batches); tests/executor/test_continuous.py the continuous mode.
        base = {"poll_interval": 10.0, "stall_seconds": 120.0, "mode": "batches"} if self.server is None else \
            {"poll_interval": 0.05, "stall_seconds": 0.5, "batch_timeout": 20.0, "mode": "batches"}
        return ExecSettings(**{**base, **kw})

    def fault(self, fn, *args) -> None:
        if self.server is None:
            fn(*args)
        else:
            with self.server.lock:
                fn(*args)

    def close(self) -> None:
        if self.server is not None:
            self.server.stop()


@pytest.fixture
def snap():
    base = load_snapshot(SAMPLE)
    from dataclasses import replace
    brokers = tuple(replace(b, configs=dict(PRIOR_BROKER)) if b.id == 0 else b for b in base.brokers)
    topics = {t: {"configs": dict(PRIOR_TOPIC) if t == "topic-000" else {}} for t in base.topics}
    return replace(base, brokers=brokers, topics=topics)


# Over real sockets these cases run against real Apache Kafka (tests/real_kafka); here the simulator
# gives them a virtual clock and faults on demand. The wire-protocol test server is kept for SASL
# and protocol errors only (tests/cli/test_plan_and_execute_over_the_wire.py, tests/cluster/test_simulator_and_connection.py).
@pytest.fixture(params=["sim"])
def backend(request, snap):
    b = Backend(request.param, Simulator.from_snapshot(snap))
    yield b
    b.close()


def _plan(tmp_path: Path, snap, batches) -> Path:
    return write_plan(tmp_path / "plan", snap, batches, rate=RATE)


def test_full_plan_reaches_target_and_restores_prior_throttles_exactly(tmp_path, snap, backend):
    b1, b2 = move_one_replica(snap, 6), move_one_replica(snap, 6, skip=6)
    plan = load_plan(_plan(tmp_path, snap, [b1, b2]))
    before_configs = sim_configs(backend.sim)
    seen_during: list[tuple[dict, dict]] = []
    admin = backend.admin()
    ex = Executor(plan, admin, backend.settings(), progress=lambda line: seen_during.append(sim_configs(backend.sim)))
    report = ex.run(final_snapshot=tmp_path / "final.json").to_dict()
    admin.close()

    assert report["status"] == "complete", report
    state = {tp: tuple(p.replicas) for tp, p in backend.sim.partitions.items()}
    for tp, target in {**b1, **b2}.items():
        assert state[tp] == target
        assert set(backend.sim.partitions[tp].isr) == set(target)
    # Throttles were really in force during the run, and the prior values are back exactly afterwards.
    brokers_during, topics_during = seen_during[0]
    assert any(c.get("leader.replication.throttled.rate") == str(RATE) for c in brokers_during.values())
    assert brokers_during[0]["follower.replication.throttled.rate"] == str(RATE)
    assert "7:5" in topics_during["topic-000"]["leader.replication.throttled.replicas"]
    assert sim_configs(backend.sim) == before_configs
    final = read_json(tmp_path / "final.json")
    assert final["brokers"][0]["configs"] == PRIOR_BROKER
    assert final["topics"]["topic-000"]["configs"] == PRIOR_TOPIC
    ledger = read_json(plan.path / "ledger.json")
    assert {b: v["state"] for b, v in ledger["batches"].items()} == {"001": "finished", "002": "finished"}
    assert all(v["throttles_restored"] for v in ledger["batches"].values())
    assert [b["predicted_seconds"] for b in report["batches"]] == [m["estimated_seconds"] for m in plan.manifest["batches"]]
    assert all(b["actual_seconds"] > 0 for b in report["batches"])
    # Elections ran: every plan partition is led by its preferred replica.
    for tp in plan.elections:
        p = backend.sim.partitions[tp]
        assert p.leader == p.replicas[0]
    # ... and the executor saw that in the metadata before the final snapshot, which shows the same leaders.
    assert report["elections"]["settle"] == "settled" and report["elections"]["not_led_by_preferred"] == []
    assert ledger["elections"]["settle"] == "settled"
    leaders = {(p["topic"], p["partition"]): (p["leader"], p["replicas"][0]) for p in final["partitions"]}
    assert all(leaders[(tp.topic, tp.partition)][0] == leaders[(tp.topic, tp.partition)][1] for tp in plan.elections)
    # A re-run of the finished plan says it is complete and changes nothing: no batch, no election requested again.
    elected: list = []

    class CountsElections(SimAdmin):
        def elect_preferred(self, tps):
            elected.extend(tps)
            return super().elect_preferred(tps)

    configs = sim_configs(backend.sim)
    again = Executor(plan, CountsElections(backend.sim), backend.settings()).run().to_dict()
    assert again["status"] == "complete" and again["already_complete"] is True
    assert again["batches"] == [] and again["elections"] is None and elected == []
    assert again["verification"]["status"] == "complete"
    assert sim_configs(backend.sim) == configs


class PreferredLeaderDiesAfterTheElections(SimAdmin):
    """The simulator with one fault: a broker dies the moment the elections are answered, so the
    partitions it was just elected to lead fail over and the metadata never shows it leading."""

    def __init__(self, sim: Simulator, victim: int) -> None:
        super().__init__(sim)
        self.victim = victim

    def elect_preferred(self, partitions):
        out = super().elect_preferred(partitions)
        self.sim.kill_broker(self.victim)
        return out


def test_elections_the_metadata_does_not_show_within_the_settle_time_are_said_and_recorded(tmp_path, snap):
    targets = move_one_replica(snap, 6)
    plan = load_plan(_plan(tmp_path, snap, [targets]))
    first = plan.elections[0]
    victim = targets[first][0]
    lines: list[str] = []
    sim = Simulator.from_snapshot(snap)
    report = Executor(plan, PreferredLeaderDiesAfterTheElections(sim, victim), ExecSettings(poll_interval=10.0, mode="batches"),
                      progress=lines.append).run(final_snapshot=tmp_path / "final.json").to_dict()

    lagging = sorted(str(tp) for tp in plan.elections if targets.get(tp, ())[:1] == (victim,))
    elections = report["elections"]
    assert elections["settle"] == "not_settled" and elections["not_led_by_preferred"] == lagging and str(first) in lagging
    assert 15.0 <= elections["waited_seconds"] <= 16.0  # METADATA_SETTLE_SECONDS, polled once a second
    said = [line for line in lines if "still not led by their preferred leader" in line]
    assert len(said) == 1 and f"{len(lagging)} of {len(plan.elections)} elected partition(s)" in said[0]
    assert read_json(plan.path / "ledger.json")["elections"]["not_led_by_preferred"] == lagging


def test_broker_dying_mid_batch_fails_cleanly_with_throttles_restored(tmp_path, snap, backend):
    from dataclasses import replace

    # Move the largest partitions, so the copies are still running when the broker dies
    # (small ones can finish between two polls of the real-time protocol server).
    largest_first = replace(snap, partitions=tuple(sorted(snap.partitions, key=lambda p: (-(p.size_bytes or 0), p.name))))
    batch = move_one_replica(largest_first, 6)
    victim = next(iter(batch.values()))[-1]  # destination of the first move
    plan = load_plan(_plan(tmp_path, snap, [batch]))
    before_configs = sim_configs(backend.sim)
    killed: list[bool] = []
    in_flight_at_kill: set[str] = set()

    def kill() -> None:
        # Moves that finished before the kill (possible on the real-time server) are not cancelled.
        in_flight_at_kill.update(str(tp) for tp in backend.sim.list_reassignments())
        backend.sim.kill_broker(victim)

    def progress(line: str) -> None:
        if not killed:
            killed.append(True)
            backend.fault(kill)

    admin = backend.admin()
    report = Executor(plan, admin, backend.settings(), progress=progress).run().to_dict()
    admin.close()
    # Moves to the dead broker stall and are cancelled; the run goes on (on_stall=continue) and
    # cannot end "complete". Whether the batch counts as failed or incomplete depends on timing.
    assert report["status"] in ("failed", "incomplete")
    result = report["batches"][0]
    moving_to_victim = sorted(str(tp) for tp, t in batch.items() if victim in t and victim not in snap.partitions[0].replicas
                              and victim not in next(p for p in snap.partitions if (p.topic, p.partition) == tp).replicas
                              and str(tp) in in_flight_at_kill)
    assert moving_to_victim and set(moving_to_victim) <= set(result["cancelled"])
    assert any(f"broker(s) [{victim}] down" in p for p in result["problems"]) or result["cancelled"]
    for name in result["cancelled"]:
        topic, _, part = name.rpartition("-")
        tp = TP(topic, int(part))
        assert tuple(backend.sim.partitions[tp].replicas) == next(
            p.replicas for p in snap.partitions if (p.topic, p.partition) == tp)
    # As on real Kafka, a broker's own configs are only reachable through it: everything else is
    # restored now, the dead broker's rate stays pending in the ledger ...
    brokers_after, topics_after = sim_configs(backend.sim)
    brokers_before, topics_before = before_configs
    assert topics_after == topics_before
    assert {b: c for b, c in brokers_after.items() if b != victim} == {b: c for b, c in brokers_before.items() if b != victim}
    entry = json.loads((plan.path / "ledger.json").read_text())["batches"][result["id"]]
    assert entry["restore_pending"] == [f"broker:{victim}"] and entry["throttles_restored"] is False
    assert backend.sim.list_reassignments() == {}
    # ... and the next run puts it back once the broker is up again.
    backend.fault(backend.sim.start_broker, victim)
    admin = backend.admin()
    assert Executor(plan, admin, backend.settings()).restore_leftover_throttles() == [result["id"]]
    admin.close()
    assert sim_configs(backend.sim) == before_configs


def test_stalled_move_is_cancelled_and_the_rest_finishes(tmp_path, snap, backend):
    batch = move_one_replica(snap, 4)
    stuck_tp = sorted(batch)[1]
    dest = [r for r in batch[stuck_tp] if r not in backend.sim.partitions[stuck_tp].replicas][0]
    backend.sim.never_catch_up(stuck_tp, dest)
    plan = load_plan(_plan(tmp_path, snap, [batch]))
    before_configs = sim_configs(backend.sim)
    admin = backend.admin()
    report = Executor(plan, admin, backend.settings(on_stall="continue")).run().to_dict()
    admin.close()
    result = report["batches"][0]
    assert result["cancelled"] == [str(stuck_tp)]
    # A batch with a partition not at its target is never recorded finished: a re-run would skip it.
    assert result["state"] == "cancelled" and report["status"] == "incomplete"
    assert read_json(plan.path / "ledger.json")["batches"][result["id"]]["state"] == "cancelled"
    admin = backend.admin()
    again = Executor(plan, admin, backend.settings(on_stall="continue")).run().to_dict()
    admin.close()
    assert again["batches"][0]["skipped"] is False and again["batches"][0]["cancelled"] == [str(stuck_tp)]
    assert tuple(backend.sim.partitions[stuck_tp].replicas) == plan.batches[0].before[stuck_tp]
    for tp, target in batch.items():
        if tp != stuck_tp:
            assert tuple(backend.sim.partitions[tp].replicas) == target
    assert sim_configs(backend.sim) == before_configs


def test_produce_rate_above_throttle_hits_the_time_limit(tmp_path, snap, backend):
    batch = move_one_replica(snap, 2)
    hot = sorted(batch)[0]
    backend.sim.set_produce_rate(hot, 2 * RATE)
    plan = load_plan(_plan(tmp_path, snap, [batch]))
    before_configs = sim_configs(backend.sim)
    timeout = 600.0 if backend.server is None else 1.5
    admin = backend.admin()
    report = Executor(plan, admin, backend.settings(batch_timeout=timeout, stall_seconds=6e5)).run().to_dict()
    admin.close()
    result = report["batches"][0]
    assert report["status"] == "failed"
    assert str(hot) in result["cancelled"]
    assert any("time limit" in p for p in result["problems"])
    assert sim_configs(backend.sim) == before_configs


def test_exception_between_setting_and_restoring_throttles_still_restores(tmp_path, snap, backend):
    plan = load_plan(_plan(tmp_path, snap, [move_one_replica(snap, 3)]))
    before_configs = sim_configs(backend.sim)

    def boom(line: str) -> None:
        raise RuntimeError("operator pressed ctrl-c")

    admin = backend.admin()
    with pytest.raises(RuntimeError):
        Executor(plan, admin, backend.settings(), progress=boom).run().to_dict()
    assert sim_configs(backend.sim) == before_configs
    ledger = read_json(plan.path / "ledger.json")
    assert ledger["batches"]["001"]["state"] == "failed" and ledger["batches"]["001"]["throttles_restored"]
    # The moves were submitted and keep running; the next run adopts them and finishes.
    report = Executor(plan, admin, backend.settings()).run().to_dict()
    admin.close()
    assert report["status"] == "complete"
    assert sim_configs(backend.sim) == before_configs


KILL_SCRIPT = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from kafka_rebalance.plan_manifest import load_plan
    from kafka_rebalance.executor.executor import Executor
    from kafka_rebalance.executor.settings import ExecSettings
    plan = load_plan(sys.argv[1])
    if sys.argv[2] == "sim":
        from kafka_rebalance.cluster.sim_admin import SimAdmin, read_state
        path = Path(sys.argv[3])
        admin = SimAdmin(read_state(path), path)
        settings = ExecSettings(poll_interval=10, stall_seconds=120, mode="batches")
    else:
        from kafka_rebalance.cluster.connection import ConnectionSettings
        from kafka_rebalance.cluster.live import LiveAdmin
        admin = LiveAdmin(ConnectionSettings(sys.argv[3]), quiet=True)
        settings = ExecSettings(poll_interval=0.05, stall_seconds=0.5, batch_timeout=20, mode="batches")
    # Like SIGKILL: no finally, no atexit, right after the throttles are set and the moves submitted.
    Executor(plan, admin, settings, progress=lambda line: os._exit(9)).run().to_dict()
""")


def test_killed_run_is_cleaned_up_by_the_next_run(tmp_path, snap, backend):
    from kafka_rebalance.cluster.sim_admin import read_state, write_state

    plan = load_plan(_plan(tmp_path, snap, [move_one_replica(snap, 4)]))
    before_configs = sim_configs(backend.sim)
    state = tmp_path / "sim.json"
    if backend.server is None:
        write_state(backend.sim, state)
        target = str(state)
    else:
        target = backend.server.bootstrap_servers
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "plugins"), str(ROOT)])}
    proc = subprocess.run([sys.executable, "-c", KILL_SCRIPT, str(plan.path), backend.kind, target],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 9, proc.stderr
    sim = read_state(state) if backend.server is None else backend.sim
    ledger = read_json(plan.path / "ledger.json")
    assert ledger["batches"]["001"]["throttles_restored"] is False
    assert sim_configs(sim) != before_configs  # the throttles are left behind by the killed run
    admin = SimAdmin(sim, state) if backend.server is None else backend.admin()
    report = Executor(plan, admin, backend.settings()).run().to_dict()
    admin.close()
    assert report["status"] == "complete"
    assert sim_configs(sim) == before_configs
    assert any("interrupted run" in e for e in read_json(plan.path / "ledger.json")["events"])


def test_changed_cluster_and_foreign_reassignment_are_refused(tmp_path, snap, backend):
    batch = move_one_replica(snap, 3)
    plan = load_plan(_plan(tmp_path, snap, [batch]))
    outsider = TP(snap.partitions[-1].topic, snap.partitions[-1].partition)
    assert outsider not in batch
    spare = [b for b in backend.sim.brokers if b not in backend.sim.partitions[outsider].replicas][0]
    backend.fault(backend.sim.alter_reassignments, {outsider: (spare, *backend.sim.partitions[outsider].replicas[1:])})
    backend.sim.never_catch_up(outsider, spare)
    admin = backend.admin()
    with pytest.raises(ExecutionRefused, match="not started by this plan are in flight.*--additional"):
        Executor(plan, admin, backend.settings()).run().to_dict()
    backend.fault(backend.sim.alter_reassignments, {outsider: None})
    first = sorted(batch)[0]
    other = [b for b in backend.sim.brokers if b not in backend.sim.partitions[first].replicas and b not in batch[first]][0]
    changed = (other, *backend.sim.partitions[first].replicas[1:])
    backend.fault(backend.sim.alter_reassignments, {first: changed})
    backend.fault(backend.sim.advance, 3600)
    with pytest.raises(ExecutionRefused, match=f"{first} has replicas"):
        Executor(plan, admin, backend.settings()).run().to_dict()
    admin.close()
    assert not (plan.path / "ledger.json").exists() or not read_json(plan.path / "ledger.json")["batches"]


def test_cancel_restores_throttles_and_reverts_moves(tmp_path, snap):
    sim = Simulator.from_snapshot(snap)
    batch = move_one_replica(snap, 3)
    plan = load_plan(_plan(tmp_path, snap, [batch]))
    before_configs = sim_configs(sim)
    for tp, target in batch.items():
        sim.never_catch_up(tp, [r for r in target if r not in sim.partitions[tp].replicas][0])
    admin = SimAdmin(sim)
    with pytest.raises(RuntimeError):
        Executor(plan, admin, ExecSettings(mode="batches"), progress=lambda line: (_ for _ in ()).throw(RuntimeError("stop"))).run().to_dict()
    assert set(sim.list_reassignments()) == set(batch)
    outcome = Executor(plan, admin, ExecSettings(mode="batches")).cancel()
    assert sorted(outcome.cancelled) == sorted(batch)
    assert outcome.left_alone == ()
    assert sim.list_reassignments() == {}
    assert sim_configs(sim) == before_configs
    for tp in batch:
        assert tuple(sim.partitions[tp].replicas) == plan.batches[0].before[tp]


def test_cancel_leaves_reassignments_it_did_not_submit_alone(tmp_path, snap):
    """Another tool moves one of the plan's partitions to another target, and an unrelated partition: cancel
    cancels neither (the plan never submitted them) and reports the one on the plan's partition."""
    sim = Simulator.from_snapshot(snap)
    batch = move_one_replica(snap, 3)
    plan = load_plan(_plan(tmp_path, snap, [batch]))
    theirs, ours = sorted(batch)[0], sorted(batch)[1:]
    unrelated = next(tp for tp in sorted(sim.partitions) if tp not in batch)
    foreign = {}
    for tp in (theirs, unrelated):
        current = tuple(sim.partitions[tp].replicas)
        spare = next(b for b in sorted(sim.brokers) if b not in current and (tp != theirs or b not in batch[tp]))
        foreign[tp] = (spare, *current[1:])
        sim.never_catch_up(tp, spare)
    for tp in ours:
        sim.never_catch_up(tp, [r for r in batch[tp] if r not in sim.partitions[tp].replicas][0])
    admin = SimAdmin(sim)
    # Our run submits only the partitions nobody else is moving (--additional lets it start beside them).
    with pytest.raises(RuntimeError):
        Executor(plan, admin, ExecSettings(mode="batches", additional=True),
                 progress=lambda line: (_ for _ in ()).throw(RuntimeError("stop"))).run().to_dict()
    sim.alter_reassignments(foreign)
    assert {tp: r.target for tp, r in sim.list_reassignments().items()} == {
        **{tp: batch[tp] for tp in ours}, **foreign}

    outcome = Executor(plan, admin, ExecSettings(mode="batches")).cancel()

    assert sorted(outcome.cancelled) == sorted(ours)
    assert outcome.left_alone == (theirs,)
    assert {tp: r.target for tp, r in sim.list_reassignments().items()} == foreign


class _FailsFirst(SimAdmin):
    """The simulator, except that the first `failures` cancel requests (``cancels``) or submissions fail as a call
    routed to a just-killed controller does on real Kafka (NodeNotReadyError, nothing changed), and take a virtual
    second each; ``calls`` counts those requests."""

    def __init__(self, sim: Simulator, failures: int, cancels: bool = True) -> None:
        super().__init__(sim)
        self.failures, self.cancels, self.calls = failures, cancels, 0

    def alter_reassignments(self, targets):
        if all((t is None) == self.cancels for t in targets.values()):
            self.calls += 1
            if self.failures:
                self.failures -= 1
                self.sim.advance(1.0)
                raise ClusterError("127.0.0.1:9092: alter partition reassignments failed: NodeNotReadyError: 3")
        return super().alter_reassignments(targets)


def test_a_stalled_move_is_still_cancelled_when_the_first_cancel_is_not_answered(tmp_path, snap):
    sim = Simulator.from_snapshot(snap)
    batch = move_one_replica(snap, 3)
    stuck_tp = sorted(batch)[0]
    sim.never_catch_up(stuck_tp, [r for r in batch[stuck_tp] if r not in sim.partitions[stuck_tp].replicas][0])
    plan = load_plan(_plan(tmp_path, snap, [batch]))
    before_configs = sim_configs(sim)
    admin = _FailsFirst(sim, failures=2)
    report = Executor(plan, admin, ExecSettings(poll_interval=10.0, stall_seconds=120.0, on_stall="continue", mode="batches")).run().to_dict()
    assert admin.calls == 3  # two unanswered, the third reaches the controller
    assert report["batches"][0]["cancelled"] == [str(stuck_tp)]
    assert tuple(sim.partitions[stuck_tp].replicas) == plan.batches[0].before[stuck_tp]
    assert sim_configs(sim) == before_configs


@pytest.mark.parametrize("mode", ["batches", "continuous"])
def test_a_submission_not_answered_while_the_controller_moves_is_asked_again_and_the_plan_finishes(tmp_path, snap, mode):
    sim = Simulator.from_snapshot(snap)
    batch = move_one_replica(snap, 2)
    plan = load_plan(_plan(tmp_path, snap, [batch]))
    before_configs = sim_configs(sim)
    admin = _FailsFirst(sim, failures=2, cancels=False)
    report = Executor(plan, admin, ExecSettings(poll_interval=10.0, stall_seconds=120.0, mode=mode)).run().to_dict()
    assert admin.calls == 3  # two unanswered, the third reaches the controller
    assert report["status"] == "complete", report
    assert {tp: tuple(sim.partitions[tp].replicas) for tp in batch} == {tp: tuple(r) for tp, r in batch.items()}
    assert sim_configs(sim) == before_configs


def test_a_submission_unanswered_for_a_stall_time_gives_up_with_the_cluster_error(tmp_path, snap):
    sim = Simulator.from_snapshot(snap)
    batch = move_one_replica(snap, 2)
    plan = load_plan(_plan(tmp_path, snap, [batch]))
    before = {tp: tuple(p.replicas) for tp, p in sim.partitions.items()}
    before_configs = sim_configs(sim)
    admin = _FailsFirst(sim, failures=10**6, cancels=False)
    with pytest.raises(ClusterError, match="NodeNotReadyError"):
        Executor(plan, admin, ExecSettings(poll_interval=10.0, stall_seconds=120.0, mode="batches")).run()
    # One attempt per 10 s poll plus the failed call's 1 s, until 120 s have passed since the first: 0, 11, ..., 121.
    assert admin.calls == 12
    assert {tp: tuple(p.replicas) for tp, p in sim.partitions.items()} == before and sim_configs(sim) == before_configs


def test_a_cancel_unanswered_for_a_stall_time_gives_up_with_the_cluster_error(tmp_path, snap):
    sim = Simulator.from_snapshot(snap)
    batch = move_one_replica(snap, 1)
    (tp, target), = batch.items()
    sim.never_catch_up(tp, [r for r in target if r not in sim.partitions[tp].replicas][0])
    plan = load_plan(_plan(tmp_path, snap, [batch]))
    admin = _FailsFirst(sim, failures=10**6)
    with pytest.raises(ClusterError, match="NodeNotReadyError"):
        Executor(plan, admin, ExecSettings(poll_interval=10.0, stall_seconds=120.0, on_stall="continue", mode="batches")).run().to_dict()
    # 120 s of stall before the first cancel, then one attempt per 10 s poll plus the failed call's 1 s,
    # until 120 s have passed since the first failure: attempts at 0, 11, ..., 121 → 12 calls.
    assert admin.calls == 12
