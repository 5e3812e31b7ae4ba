"""An execution interrupted at every point where it acts, then run again: the plan finishes exactly.

The executor acts in five ways: it saves its ledger, writes a config (a throttle), asks Kafka for reassignments,
names log dirs, and requests elections. Each sweep interrupts a run just before its k-th act, for every k (or every
few) of an uninterrupted run, on two scenarios (a rebalance whose partitions move in two steps, a JBOD
decommission) in both modes:

- killed (a child process on the persisted simulator dies with os._exit, as kill -9: no finally), once or twice,
  with or without maintenance windows;
- an operator's pause or stop, then a resume;
- the broker receiving the most moves dies (its moves stall and are cancelled), then comes back;
- another tool starts a reassignment of a partition the plan does not move;
- one cluster call fails (a timeout while the controller moves).

Every time: no move copies outside the throttle at any moment, nothing a run finished is submitted again, every
partition ends at its target in its named log dirs and led as elected, every throttle value (an operator's prior
ones included) comes back exactly, and a run says complete only when Kafka shows it.
"""

from __future__ import annotations

import functools
import json
import multiprocessing
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kafka_rebalance.cluster.admin import TP, ClusterError
from kafka_rebalance.cluster.sim_admin import SimAdmin, read_state, write_state
from kafka_rebalance.cluster.simulator import Simulator
from kafka_rebalance.executor.autothrottle import auto_throttle
from kafka_rebalance.executor.control import request
from kafka_rebalance.executor.executor import Executor
from kafka_rebalance.executor.gate import ExecutionGate
from kafka_rebalance.executor.ledger import Ledger
from kafka_rebalance.executor.settings import ExecSettings
from kafka_rebalance.executor.windows import Window, policy
from kafka_rebalance.generate import ClusterSpec, generate_snapshot
from kafka_rebalance.plan_manifest import Plan, load_plan
from kafka_rebalance.planner import PlanOptions, make_plan, write_plan
from kafka_rebalance.snapshot import Snapshot, snapshot_from_dict
from kafka_rebalance.snapshot.capacity import read_capacity_map
from tests.support.clusters import part
from tests.support.plans import approve, judge
from tests.support.throttles import ThrottleWatch, sim_configs, unthrottled_copies

PRIOR_BROKER = {"follower.replication.throttled.rate": "12345"}  # an operator's values that must come back
PRIOR_TOPIC = {"leader.replication.throttled.replicas": "7:1"}


def _snapshot() -> Snapshot:
    snap = generate_snapshot(ClusterSpec(brokers=5, racks=1, topics=2, partitions=16, new_brokers=1,
                                         mean_partition_mb=256, seed=3))
    brokers = tuple(replace(b, configs=dict(PRIOR_BROKER)) if b.id == snap.brokers[0].id else b for b in snap.brokers)
    first = sorted(snap.topics)[0]
    topics = {t: {**v, "configs": dict(PRIOR_TOPIC)} if t == first else v for t, v in snap.topics.items()}
    return replace(snap, brokers=brokers, topics=topics)


GIB = 1024**3


def _jbod() -> Snapshot:
    """Two log dirs per broker, broker 2 decommissioned: moves between brokers into named dirs, moves between the
    dirs of one broker (AlterReplicaLogDirs), and preferred-leader elections after them."""
    dirs = [{"path": "/a", "total_bytes": 16 * GIB}, {"path": "/b", "total_bytes": 16 * GIB}]
    parts = [part("t", i, [0, 1], size_bytes=GIB, log_dirs=["/a", "/a"]) for i in range(6)]
    parts += [part("t", 6, [1, 0], size_bytes=GIB, log_dirs=["/b", "/a"]),
              part("u", 0, [1, 2], size_bytes=GIB, log_dirs=["/a", "/a"]),
              part("v", 0, [2, 0], size_bytes=GIB, log_dirs=["/a", "/b"]),
              part("v", 1, [2, 1], size_bytes=2 * GIB, log_dirs=["/b", "/a"])]
    parts = [{"leader": p["replicas"][0], "isr": list(p["replicas"]), **p} for p in parts]
    return snapshot_from_dict({"cluster_id": "jbod", "brokers": [{"id": b, "log_dirs": [dict(d) for d in dirs]}
                                                                 for b in (0, 1, 2, 3)], "partitions": parts})


MiB = 1024 * 1024


def _traffic(sim: Simulator) -> None:
    """Every broker's NIC 40 MiB/s each way; one partition's producers change speed while the plan runs, so an auto
    throttle lowers and raises the rates of the brokers it leads and follows on."""
    for b in sim.brokers:
        sim.set_network_capacity(b, 40 * MiB, 40 * MiB)
    hot = min(sim.partitions)
    for at, rate in ((0.0, 4 * MiB), (8.0, 12 * MiB), (20.0, 1 * MiB), (40.0, 10 * MiB)):
        sim.schedule_rates(at, hot, rate, rate / 2)


@dataclass(frozen=True)
class Scenario:
    snapshot: Callable[[], Snapshot]
    options: PlanOptions
    traffic: Callable[[Simulator], None] | None = None  # NICs and producers: what `--throttle auto` reads
    auto: bool = False  # `execute --throttle auto`, floor 2 MiB/s, ceiling the plan's throttle


SCENARIOS = {
    # several moves per broker at once, partitions moved in two steps: steps overlap, batches hold a few moves
    "rebalance": Scenario(_snapshot, PlanOptions(throttle_bytes_per_sec=20 * MiB, max_moves_per_broker=2,
                                                 move_fixed_seconds=0)),
    "jbod-decommission": Scenario(_jbod, PlanOptions(throttle_bytes_per_sec=200 * MiB, decommission_brokers=(2,),
                                                     goals=("preferred-leader",), optimizer="heuristic",
                                                     move_fixed_seconds=0)),
    "auto-throttle": Scenario(_snapshot, PlanOptions(throttle_bytes_per_sec=20 * MiB, max_moves_per_broker=2,
                                                     move_fixed_seconds=0), _traffic, auto=True),
}
# Every sweep runs the first two; the auto throttle's (its rates and their restore across a kill) only the kill sweep.
BASIC = ["jbod-decommission", "rebalance"]
CAPACITY = read_capacity_map({"default": {"network_in_bytes_per_sec": 40 * MiB, "network_out_bytes_per_sec": 40 * MiB}},
                             "test capacity")


UNTHROTTLED = 5  # a child's exit code: a move copied outside the throttle while it ran


class _Acts:
    """Counts the executor's acts in this process; ``at(n)`` runs just before act number n."""

    def __init__(self, sim: Simulator) -> None:
        self.sim, self.count = sim, 0

    def tick(self) -> None:
        self.at(self.count)
        self.count += 1

    def at(self, n: int) -> None:
        """Nothing: an uninterrupted run, counted."""


class _DiesAt(_Acts):
    """Dies just before act ``die_at``, leaving the simulated cluster as it was then (the only moment another process
    reads it: written once, not at every call); dies sooner if a move copies outside the throttle."""

    def __init__(self, sim: Simulator, die_at: int | None, state: Path) -> None:
        super().__init__(sim)
        self.die_at, self.state = die_at, state

    def at(self, n: int) -> None:
        if unthrottled_copies(self.sim):
            os._exit(UNTHROTTLED)
        if n == self.die_at:
            write_state(self.sim, self.state)
            os._exit(137)


class _BrokerDiesAt(_Acts):
    """The broker receiving the most of the plan's new replicas dies just before act ``k`` (kill -9: it neither
    copies nor answers), and stays down for the rest of the run."""

    def __init__(self, sim: Simulator, k: int, broker: int) -> None:
        super().__init__(sim)
        self.k, self.broker = k, broker

    def at(self, n: int) -> None:
        if n == self.k:
            self.sim.kill_broker(self.broker)


class _OtherToolAt(_Acts):
    """Another tool starts a reassignment of a partition the plan does not move just before act ``k``: one replica to
    a broker it is not on, a copy that never catches up (it is still in flight when the plan ends)."""

    def __init__(self, sim: Simulator, k: int, theirs: TP) -> None:
        super().__init__(sim)
        self.k, self.theirs = k, theirs
        replicas = list(sim.partitions[theirs].replicas)
        spare = min(b for b in sim.brokers if b not in replicas)
        self.target = (*replicas[:-1], spare)

    def at(self, n: int) -> None:
        if n == self.k:
            self.sim.alter_reassignments({self.theirs: self.target})
            self.sim.never_catch_up(self.theirs, self.target[-1])


class _FailsOnceAt(_Acts):
    """The cluster call numbered ``k`` fails (a controller moving, a request timing out): ClusterError, once."""

    def __init__(self, sim: Simulator, k: int) -> None:
        super().__init__(sim)
        self.k = k

    def at(self, n: int) -> None:
        if n == self.k:
            raise ClusterError("injected: the request timed out while the controller moved")


class _AsksAt(_Acts):
    """An operator's request (pause, stop) recorded just before act ``k``."""

    def __init__(self, sim: Simulator, k: int, plan_dir: Path, action: str) -> None:
        super().__init__(sim)
        self.k, self.plan_dir, self.action = k, plan_dir, action

    def at(self, n: int) -> None:
        if n == self.k:
            request(self.plan_dir, self.action, by="ops", via="test")


class _Submitted(ThrottleWatch):
    def __init__(self, sim: Simulator) -> None:
        super().__init__(sim)
        self.submitted: list[tuple[TP, tuple[int, ...]]] = []

    def alter_reassignments(self, targets):
        self.submitted += [(tp, tuple(t)) for tp, t in sorted(targets.items()) if t is not None]
        # (every list the executor asked for, cancellations apart)
        return super().alter_reassignments(targets)


def _acting_admin(acts: _Acts, base: type[SimAdmin] = SimAdmin):
    class Acting(base):  # type: ignore[valid-type,misc]
        def alter_configs(self, resource_type, name, changes):
            acts.tick()
            return super().alter_configs(resource_type, name, changes)

        def alter_reassignments(self, targets):
            acts.tick()
            return super().alter_reassignments(targets)

        def alter_replica_log_dirs(self, dirs):
            acts.tick()
            return super().alter_replica_log_dirs(dirs)

        def elect_preferred(self, partitions):
            acts.tick()
            return super().elect_preferred(partitions)

    return Acting


EPOCH = datetime(2026, 11, 24, 0, 0, 0, tzinfo=UTC)  # the simulator's clock 0, for the windows' gate
# Open for 40 s at the start of each minute: the rebalance scenario (moves of up to 35 s) runs in several windows.
WINDOWS = policy("configured", [Window("* * * * *", timedelta(seconds=40))])


def _gate(plan: Plan, admin: SimAdmin) -> ExecutionGate:
    return ExecutionGate(plan.path, plan.plan_hash, WINDOWS, margin=timedelta(seconds=2), grace=timedelta(seconds=5),
                         clock=lambda: EPOCH + timedelta(seconds=admin.now()))


def _run_waiting(plan: Plan, admin: SimAdmin, settings: ExecSettings, windows: bool,
                 between: Callable[[], None] = lambda: None) -> dict:
    """Run the plan as `execute --wait` does: after a window hold, sleep (on the simulator's clock) until the window
    opens and run again; ``between`` is called at each hold."""
    while True:
        report = Executor(plan, admin, settings, gate=_gate(plan, admin) if windows else None).run().to_dict()
        hold = report.get("hold")
        if report["status"] == "complete" or not windows or not hold:
            return report
        between()
        if hold["reason"] == "window-overrun":
            # Moves outlived their window (an auto throttle slowed them below the plan's rate): cancelled, and the
            # run ends; the operator runs it again, here at the next window.
            opening = WINDOWS.next_opening(EPOCH + timedelta(seconds=admin.now()))
            assert opening is not None
            resume = opening.start
        elif hold.get("resume_at"):
            resume = datetime.fromisoformat(hold["resume_at"])
        else:
            return report
        admin.sleep((resume - EPOCH).total_seconds() - admin.now())


def _run_until(plan_dir: Path, state: Path, settings: ExecSettings, die_at: int | None, windows: bool = False) -> int:
    """Run the plan in a child on the persisted simulator; returns its exit code (137: killed at ``die_at``), or,
    with ``die_at`` None, the number of acts of the whole run."""
    ctx = multiprocessing.get_context("fork")
    counted = ctx.Value("i", -1)

    def child() -> None:
        sim = read_state(state)
        acts = _DiesAt(sim, die_at, state)
        save = Ledger.save

        def saving(self, *a, **k):
            acts.tick()
            return save(self, *a, **k)

        Ledger.save = saving  # this child's class only: the parent is another process
        admin = _acting_admin(acts)(sim)
        sleep = admin.sleep

        def sleeping(seconds: float) -> None:
            if unthrottled_copies(sim):
                os._exit(UNTHROTTLED)
            sleep(seconds)

        admin.sleep = sleeping  # type: ignore[method-assign]
        report = _run_waiting(load_plan(plan_dir), admin, settings, windows)
        counted.value = acts.count
        os._exit(0 if report["status"] == "complete" else 3)

    proc = ctx.Process(target=child)
    proc.start()
    proc.join(120)
    assert proc.exitcode != UNTHROTTLED, f"a move copied outside the throttle in a run to be killed before act {die_at}"
    assert proc.exitcode in (0, 137), f"the run ended with exit code {proc.exitcode} (killed before act {die_at})"
    return counted.value if die_at is None else proc.exitcode


@pytest.fixture(scope="module")
def approved(request, tmp_path_factory) -> tuple[Scenario, Snapshot, Path]:
    scenario = SCENARIOS[request.param]
    snap = scenario.snapshot()
    out = tmp_path_factory.mktemp(request.param) / "plan"
    write_plan(make_plan(snap, scenario.options), out, "snapshot.json")
    judge(out, "passed")
    return scenario, snap, approve(out)


class _Sweep:
    """One scenario in one mode: fresh copies of the approved plan and the simulated cluster, runs killed at chosen
    acts, and the checks on the run that finishes the plan."""

    def __init__(self, approved: tuple[Scenario, Snapshot, Path], mode: str, tmp_path: Path, windows: bool = False) -> None:
        self.scenario, self.snap, self.pristine = approved
        self.mode, self.tmp_path, self.windows = mode, tmp_path, windows
        plan = load_plan(self.pristine)
        auto = auto_throttle(plan, 2 * MiB, None, CAPACITY) if self.scenario.auto else None
        self.settings = ExecSettings(poll_interval=2.0, stall_seconds=120.0, mode=mode, auto_throttle=auto)
        self.before = sim_configs(self.new_sim())
        self.targets, self.dirs = plan.final_targets, plan.final_dirs
        self.whole = _run_until(*self.fresh("whole"), self.settings, None, windows)
        assert self.whole > 20 and len(self.targets) >= 4, (self.whole, len(self.targets))

    @functools.cache  # noqa: B019 - one sweep object per test
    def cluster_calls(self) -> int:
        """How many calls that change the cluster an uninterrupted run makes, counted in this process (where the
        ledger's saves are not counted: the in-process sweeps interrupt at cluster calls only)."""
        plan_dir, _ = self.fresh("counted")
        counted = _Acts(self.new_sim())
        report = _run_waiting(load_plan(plan_dir), _acting_admin(counted)(counted.sim), self.settings, False)
        assert report["status"] == "complete", report
        return counted.count

    def new_sim(self) -> Simulator:
        sim = Simulator.from_snapshot(self.snap)
        if self.scenario.traffic is not None:
            self.scenario.traffic(sim)
        return sim

    def fresh(self, name: str) -> tuple[Path, Path]:
        plan_dir = shutil.copytree(self.pristine, self.tmp_path / name / "plan")
        state = self.tmp_path / name / "sim.json"
        write_state(self.new_sim(), state)
        return plan_dir, state

    def killed_then_finished(self, kills: list[int]) -> None:
        """Runs killed before the acts ``kills`` names (each counted from that run's start; a run that ends first is
        let end), then one that must finish the plan exactly."""
        where = f"killed before acts {kills} ({self.mode}; {self.whole} acts in a whole run)"
        plan_dir, state = self.fresh("-".join(map(str, kills)))
        for k in kills:
            if _run_until(plan_dir, state, self.settings, k, self.windows) == 0:
                break
        self.finished_exactly(load_plan(plan_dir), _Submitted(read_state(state)), where)

    def interrupted_then_finished(self, action: str, k: int) -> bool:
        """An operator's ``action`` (pause or stop) requested just before act ``k``; once the run has held, nothing
        of the plan is in flight and every throttle value is as it was; then a resume, and the plan finishes.
        Whether the run held (a request after its last move started is not seen before it ends)."""
        where = f"{action} requested before act {k} ({self.mode}; {self.whole} acts in a whole run)"
        plan_dir, _ = self.fresh(f"{action}-{k}")
        plan = load_plan(plan_dir)
        asked = _AsksAt(self.new_sim(), k, plan_dir, action)
        admin = _acting_admin(asked)(asked.sim)
        report = _run_waiting(plan, admin, self.settings, self.windows)
        if report["status"] == "complete":
            return False  # asked after the run's last start: nothing was left to hold
        assert report["status"] in ("paused", "stopped"), (where, report["status"], report.get("problems"))
        assert admin.sim.list_reassignments() == {} and sim_configs(admin.sim) == self.before, where
        assert unthrottled_copies(admin.sim) == [], where
        request(plan_dir, "resume", by="ops", via="test")
        self.finished_exactly(plan, _Submitted(admin.sim), where)
        return True

    def broker_lost_then_finished(self, k: int) -> bool:
        """A destination broker dies just before act ``k``; the run ends (its moves stall and are cancelled) saying
        no more than the cluster shows; the broker comes back and a run finishes the plan exactly. Whether the death
        changed the first run's outcome."""
        plan_dir, _ = self.fresh(f"broker-{k}")
        plan = load_plan(plan_dir)
        gains: dict[int, int] = {}
        for tp, target in sorted(self.targets.items()):
            before = next(p.replicas for p in self.snap.partitions if TP(p.topic, p.partition) == tp)
            for b in set(target) - set(before):
                gains[b] = gains.get(b, 0) + 1
        broker = max(sorted(gains), key=lambda b: gains[b])
        where = f"broker {broker} killed before act {k} ({self.mode})"
        dies = _BrokerDiesAt(self.new_sim(), k, broker)
        admin = _acting_admin(dies)(dies.sim)
        report = _run_waiting(plan, admin, self.settings, self.windows)
        verdict = Executor(plan, admin, self.settings).verify()
        # What the run reports is what Kafka shows: complete only if every partition is at its target.
        assert (report["status"] == "complete") == verdict.complete, (where, report["status"], verdict.problems[:3])
        if dies.count <= k:
            return False  # the run ended before the broker died
        assert {tp for tp in admin.sim.list_reassignments() if tp in self.targets} == set() or report["status"] != "complete"
        dies.sim.start_broker(broker)
        dies.sim.advance(1.0)
        self.finished_exactly(plan, _Submitted(dies.sim), where)
        return report["status"] != "complete"

    def failed_call_then_finished(self, k: int) -> bool:
        """Cluster call ``k`` fails once: the run carries on or ends with that error (never another exception),
        restoring what it set; the next run finishes the plan exactly. Whether the failure ended the run."""
        plan_dir, _ = self.fresh(f"fails-{k}")
        plan = load_plan(plan_dir)
        where = f"cluster call {k} failed ({self.mode})"
        fails = _FailsOnceAt(self.new_sim(), k)
        admin = _acting_admin(fails)(fails.sim)
        try:
            report = _run_waiting(plan, admin, self.settings, self.windows)
        except ClusterError as exc:
            assert "injected" in str(exc), (where, exc)
            # What it set is back, or (the failed call was a restore) recorded for the next run to put back.
            pending = Executor(plan, SimAdmin(fails.sim), self.settings).ledger.unrestored()
            assert sim_configs(fails.sim) == self.before or pending, where
        else:
            assert report["status"] in ("complete", "failed", "incomplete"), (where, report["status"])
            if report["status"] == "complete":
                return False
        self.finished_exactly(plan, _Submitted(fails.sim), where)
        return True

    def alongside_another_tool(self, k: int) -> bool:
        """Another tool's reassignment starts mid-run: the plan finishes as if alone, and that reassignment is neither
        cancelled, nor resubmitted, nor throttled by the plan. Whether it started before the run ended."""
        plan_dir, _ = self.fresh(f"other-{k}")
        plan = load_plan(plan_dir)
        theirs = next(TP(p.topic, p.partition) for p in self.snap.partitions if TP(p.topic, p.partition) not in self.targets)
        other = _OtherToolAt(self.new_sim(), k, theirs)
        admin = _acting_admin(other, _Submitted)(other.sim)
        lists: list[str] = []
        watch = admin.alter_configs

        def configs(resource_type, name, changes):
            lists.extend(v for v in changes.values() if v and v != "*" and f"{theirs.partition}:" in v and name == theirs.topic)
            return watch(resource_type, name, changes)

        admin.alter_configs = configs  # type: ignore[method-assign]
        report = _run_waiting(plan, admin, self.settings, self.windows)
        where = f"another tool's reassignment started before act {k} ({self.mode})"
        assert report["status"] == "complete", (where, report.get("problems"))
        assert {tp for tp, _ in admin.submitted} <= set(self.targets), where
        if other.count <= k:
            return False
        assert admin.sim.list_reassignments()[theirs].target == other.target, where  # still theirs, still moving
        assert lists == [], (where, lists[:3])  # their partition was never named in a throttled-replica list of ours
        verdict = Executor(plan, admin, self.settings).verify()
        assert verdict.complete and verdict.other_reassignments_in_flight == (theirs,), (where, verdict)
        return True

    def finished_exactly(self, plan: Plan, admin: _Submitted, where: str) -> None:
        """Run the plan to its end on ``admin`` (waiting for windows): it must finish it exactly."""
        ledger = json.loads((plan.path / "ledger.json").read_text()) if (plan.path / "ledger.json").exists() else {}
        steps = ledger.get("continuous", {}).get("steps", {})
        moves = plan.schedule.moves if plan.schedule is not None else ()
        landed = {(moves[int(i)].tp, moves[int(i)].replicas) for i, e in steps.items() if e["state"] == "finished"}
        finished = {b.id for b in plan.batches if ledger.get("batches", {}).get(b.id, {}).get("state") == "finished"}
        landed |= {(tp, t) for b in plan.batches if b.id in finished for tp, t in b.targets.items()}
        # A log-dir batch still to run submits the lists it names dirs for (a reordered partition's, say) again.
        landed -= {(tp, t) for b in plan.batches if b.id not in finished and b.kind != "move" for tp, t in b.targets.items()}
        holds: list[str] = []

        def between() -> None:
            # Outside the windows Kafka shows no move of the plan in flight and every throttle value as it was.
            if admin.sim.list_reassignments() or sim_configs(admin.sim) != self.before:
                holds.append(f"at {admin.now():.0f}s: in flight {sorted(map(str, admin.sim.list_reassignments()))}")

        report = _run_waiting(plan, admin, self.settings, self.windows, between)

        assert report["status"] == "complete", (where, report.get("problems"), report.get("hold"))
        assert admin.unthrottled == [], (where, admin.unthrottled[:3])
        assert holds == [], (where, holds[:3])
        assert not landed & set(admin.submitted), (where, sorted(landed & set(admin.submitted))[:3])
        assert {tp: tuple(admin.sim.partitions[tp].replicas) for tp in self.targets} == self.targets, where
        assert {k: v for k, v in admin.sim.dirs.items() if k in self.dirs} == self.dirs, where
        assert all(admin.sim.partitions[tp].leader == admin.sim.partitions[tp].replicas[0] for tp in plan.elections), where
        assert sim_configs(admin.sim) == self.before, where
        verdict = Executor(plan, admin, self.settings).verify()
        assert verdict.complete and verdict.throttles_left == (), (where, verdict.problems[:3], verdict.throttles_left)


@pytest.mark.parametrize("approved", sorted(SCENARIOS), indirect=True)
@pytest.mark.parametrize("mode", ["continuous", "batches"])
def test_a_run_killed_before_any_of_its_acts_is_finished_exactly_by_the_next(approved, mode, tmp_path) -> None:
    sweep = _Sweep(approved, mode, tmp_path)
    # Every act; the auto throttle's runs (its rates taken over and restored) at every second one.
    for k in range(0, sweep.whole, 2 if sweep.scenario.auto else 1):
        sweep.killed_then_finished([k])


@pytest.mark.parametrize("approved", BASIC, indirect=True)
@pytest.mark.parametrize("mode", ["continuous", "batches"])
def test_a_resumed_run_killed_again_is_finished_exactly_by_the_next(approved, mode, tmp_path) -> None:
    """The run that resumes a killed one is killed too, early (while it takes the first one's moves and throttles
    over) or later; every eighth first kill point."""
    sweep = _Sweep(approved, mode, tmp_path)
    for k in range(0, sweep.whole, 8):
        for j in (1, 6):
            sweep.killed_then_finished([k, j])


@pytest.mark.parametrize("approved", BASIC, indirect=True)
@pytest.mark.parametrize("mode", ["continuous", "batches"])
def test_a_run_in_windows_killed_before_any_of_its_acts_is_finished_exactly_by_the_next(approved, mode, tmp_path) -> None:
    """As above with maintenance windows: runs hold between windows and go on in the next; every third kill point,
    and between windows nothing of the plan is in flight and no throttle is set."""
    sweep = _Sweep(approved, mode, tmp_path, windows=True)
    for k in range(0, sweep.whole, 3):
        sweep.killed_then_finished([k])


@pytest.mark.parametrize("approved", BASIC, indirect=True)
@pytest.mark.parametrize("action", ["pause", "stop"])
@pytest.mark.parametrize("mode", ["continuous", "batches"])
def test_a_pause_or_stop_asked_before_any_act_holds_cleanly_and_a_resume_finishes_exactly(approved, mode, action,
                                                                                        tmp_path) -> None:
    """An operator's request arrives at any moment of a run: just before every second call that changes the cluster."""
    sweep = _Sweep(approved, mode, tmp_path)
    held = [k for k in range(0, sweep.cluster_calls(), 2) if sweep.interrupted_then_finished(action, k)]
    assert len(held) >= 3, (held, sweep.cluster_calls())


@pytest.mark.parametrize("approved", BASIC, indirect=True)
@pytest.mark.parametrize("mode", ["continuous", "batches"])
def test_a_destination_broker_lost_before_any_act_is_reported_as_kafka_shows_and_a_rerun_finishes(approved, mode,
                                                                                                   tmp_path) -> None:
    """A broker dies at any moment of a run (just before every second cluster call): its moves stall and are
    cancelled after --stall-seconds, the run never says complete while Kafka does not show it, and once the broker
    is back a run finishes the plan exactly, the throttle values the dead broker could not take back included."""
    sweep = _Sweep(approved, mode, tmp_path)
    hurt = [k for k in range(0, sweep.cluster_calls(), 2) if sweep.broker_lost_then_finished(k)]
    assert len(hurt) >= 3, (hurt, sweep.cluster_calls())


@pytest.mark.parametrize("approved", BASIC, indirect=True)
@pytest.mark.parametrize("mode", ["continuous", "batches"])
def test_another_tools_reassignment_started_before_any_act_is_left_alone(approved, mode, tmp_path) -> None:
    """The executor acts only on what the plan owns, whenever another tool's reassignment appears during its run."""
    sweep = _Sweep(approved, mode, tmp_path)
    seen = [k for k in range(0, sweep.cluster_calls(), 2) if sweep.alongside_another_tool(k)]
    assert len(seen) >= 3, (seen, sweep.cluster_calls())


@pytest.mark.parametrize("approved", BASIC, indirect=True)
@pytest.mark.parametrize("mode", ["continuous", "batches"])
def test_a_cluster_call_failing_once_ends_the_run_cleanly_and_a_rerun_finishes(approved, mode, tmp_path) -> None:
    """Any one of a run's cluster calls fails (ClusterError, as a timeout while the controller moves): the run rides
    it out or ends with that error after restoring what it set, and a run after it finishes the plan exactly."""
    sweep = _Sweep(approved, mode, tmp_path)
    ended = [k for k in range(0, sweep.cluster_calls(), 2) if sweep.failed_call_then_finished(k)]
    assert ended, sweep.cluster_calls()


class _CopyingBetweenDirs(SimAdmin):
    """The simulator moves replicas between dirs at once; this admin reports the named ones as still copying
    (DescribeLogDirs' future replica), as a real broker does while AlterReplicaLogDirs works."""

    def __init__(self, sim: Simulator, copying: dict[tuple[TP, int], str]) -> None:
        super().__init__(sim)
        self.copying = copying

    def replica_dirs(self, partitions):
        found = super().replica_dirs(partitions)
        return {k: replace(r, path="/a", future=self.copying[k]) if k in self.copying else r for k, r in found.items()}


@pytest.mark.parametrize("approved", ["jbod-decommission"], indirect=True)
def test_a_killed_runs_copy_between_log_dirs_keeps_its_throttle_record(approved, tmp_path) -> None:
    """A move between the dirs of one broker is no reassignment: the record of a killed log-dir batch still copying
    is taken over by the next run, not restored under the copy."""
    sweep = _Sweep(approved, "batches", tmp_path)
    plan = load_plan(sweep.pristine)
    (dir_batch,) = [b for b in plan.batches if b.kind == "log-dirs"]

    def killed_at(k: int) -> tuple[Path, Path, str | None]:
        plan_dir, state = sweep.fresh(f"dirs-{k}")
        assert _run_until(plan_dir, state, sweep.settings, k) == 137
        ledger = plan_dir / "ledger.json"
        batches = json.loads(ledger.read_text())["batches"] if ledger.exists() else {}
        return plan_dir, state, batches.get(dir_batch.id, {}).get("state")

    # The first kill point after the log-dir batch recorded its submission: its copies between dirs have started.
    plan_dir, state = next((d, st) for d, st, batch_state in map(killed_at, range(sweep.whole)) if batch_state == "submitted")
    killed = load_plan(plan_dir)
    copying = {key: d for key, d in dir_batch.dirs.items()}
    admin = _CopyingBetweenDirs(read_state(state), copying)
    ex = Executor(killed, admin, sweep.settings)
    assert dir_batch.id in ex.ledger.unrestored()
    assert ex.records_in_flight(admin.list_reassignments()) == {dir_batch.id: len({tp for tp, _ in copying})}
    # Copied: nothing in flight, so the record is restored as any a killed run left.
    assert Executor(killed, SimAdmin(read_state(state)), sweep.settings).records_in_flight({}) == {}
