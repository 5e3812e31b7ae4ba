"""``execute --throttle auto`` on the simulator's virtual clock: rates follow each broker's headroom.

The cluster: broker 1 sends four 256 MiB partitions to broker 2, which leads a hot partition (followed by broker
3) whose producer changes speed at set moments. Every broker's NIC is 100 MiB/s each way; the plan's throttle,
the ceiling, is 40 MiB/s; the floor 4 MiB/s. The expected rates are worked out here from that schedule
(capacity less the hot partition's produce rate), never taken from the code under test.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kafka_rebalance.cluster.admin import BROKER, FOLLOWER_RATE, TP
from kafka_rebalance.cluster.sim_admin import SimAdmin
from kafka_rebalance.cluster.simulator import Simulator
from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.executor.autothrottle import AutoThrottle, auto_throttle, rate_history
from kafka_rebalance.executor.executor import Executor
from kafka_rebalance.executor.gate import ExecutionGate, HoldReason
from kafka_rebalance.executor.settings import ExecSettings
from kafka_rebalance.executor.windows import Window, policy
from kafka_rebalance.plan_manifest import Plan, load_plan
from kafka_rebalance.report.html import auto_throttle_charts
from kafka_rebalance.snapshot import Snapshot
from kafka_rebalance.snapshot.capacity import read_capacity_map
from tests.support.clusters import part, snapshot
from tests.support.plans import approve, write_plan

MiB = 1024 * 1024
NIC = 100 * MiB
CEILING = 40 * MiB
FLOOR = 4 * MiB
POLL = 2.0
EPOCH = datetime(2026, 11, 24, 0, 0, 0, tzinfo=UTC)  # the simulator's clock 0, for the windows' gate
HOT = TP("hot", 0)
MOVING = [TP("bulk", i) for i in range(4)]
PRIOR_BROKER = {FOLLOWER_RATE: "12345"}  # an operator's own value on broker 1: back exactly afterwards
CAPACITY = read_capacity_map({"default": {"network_in_bytes_per_sec": NIC, "network_out_bytes_per_sec": NIC}}, "test capacity")
# (from this second on the virtual clock, the hot partition's produce rate)
RISING_AND_FALLING = [(0.0, 80 * MiB), (10.0, 30 * MiB), (20.0, 97 * MiB), (40.0, 0.0)]
ONLY_FALLING = [(0.0, 30 * MiB), (12.0, 70 * MiB), (24.0, 90 * MiB)]


def _snapshot() -> Snapshot:
    parts = [part("bulk", tp.partition, [1], size=256 * MiB) for tp in MOVING]
    parts.append(part("hot", 0, [2, 3], size=MiB))
    snap = snapshot([1, 2, 3], parts)
    return replace(snap, brokers=tuple(replace(b, configs=dict(PRIOR_BROKER)) if b.id == 1 else b for b in snap.brokers))


def _plan(tmp_path: Path, name: str) -> Plan:
    snap = _snapshot()
    out = write_plan(tmp_path / name, snap, [{tp: (2,) for tp in MOVING}], rate=CEILING)
    return load_plan(approve(out), require_approval=True)


class Recording(SimAdmin):
    """The simulator's admin, remembering every broker rate written (when, which broker, which values)."""

    def __init__(self, sim: Simulator) -> None:
        super().__init__(sim)
        self.rates: list[tuple[float, int, dict[str, str | None]]] = []

    def alter_configs(self, resource_type, name, changes):
        if resource_type == BROKER:
            self.rates.append((self.now(), int(name), dict(changes)))
        super().alter_configs(resource_type, name, changes)


def _cluster(profile: list[tuple[float, float]]) -> Recording:
    sim = Simulator.from_snapshot(_snapshot())
    for b in (1, 2, 3):
        sim.set_network_capacity(b, NIC, NIC)
    for at, rate in profile:
        sim.schedule_rates(at, HOT, rate)
    return Recording(sim)


def _produce_at(profile: list[tuple[float, float]], t: float) -> float:
    return [rate for at, rate in profile if at <= t][-1]


def _expected_follower(profile, t: float) -> int:
    """Broker 2 receives the hot partition's producers: its headroom in is the NIC less their rate."""
    return int(min(CEILING, max(FLOOR, NIC - _produce_at(profile, t))))


def _run(plan: Plan, admin: Recording, auto: AutoThrottle | None):
    return Executor(plan, admin, ExecSettings(poll_interval=POLL, stall_seconds=600.0, auto_throttle=auto)).run()


@pytest.fixture
def auto(tmp_path: Path) -> AutoThrottle:
    return auto_throttle(_plan(tmp_path, "bounds"), FLOOR, None, CAPACITY)


def test_rates_follow_the_headroom_within_floor_and_ceiling_each_change_in_the_ledger_and_restored_exactly(tmp_path, auto):
    plan = _plan(tmp_path, "auto")
    admin = _cluster(RISING_AND_FALLING)
    before = {b.id: dict(b.configs) for b in admin.sim.brokers.values()}
    outcome = _run(plan, admin, auto)
    assert outcome.status.value == "complete", outcome.to_dict()

    # What broker 2 was given, in order: the headroom left by each producer phase, clamped to floor..ceiling.
    given = [(t, cfg[FOLLOWER_RATE]) for t, b, cfg in admin.rates if b == 2 and cfg.get(FOLLOWER_RATE) is not None]
    assert [int(v) for _, v in given] == [20 * MiB, CEILING, FLOOR, CEILING], given
    for t, value in given:
        assert int(value) == _expected_follower(RISING_AND_FALLING, t), (t, value)
    # Each change came at the first poll after the producer changed: never later than a poll interval.
    changes_at = [t for t, _ in given[1:]]
    for (at, _), t in zip(RISING_AND_FALLING[1:], changes_at):
        assert at <= t <= at + POLL + 1e-6, (at, t)
    # Every rate written stayed within floor..ceiling, and only changed values were written.
    per_broker: dict[int, list[dict]] = {}
    for _, b, cfg in admin.rates:
        per_broker.setdefault(b, []).append(cfg)
    assert sorted(per_broker) == [1, 2]  # the plan's brokers only
    for b, cfgs in per_broker.items():
        settings = cfgs[:-1]  # the last write is the restore
        assert settings and all(FLOOR <= int(v) <= CEILING for cfg in settings for v in cfg.values()), (b, settings)
        for earlier, later in zip(settings, settings[1:]):
            assert all(earlier.get(k) != v for k, v in later.items()), (b, earlier, later)

    # The ledger has each change, on the simulator's clock, with the traffic behind it.
    ledger = Executor(plan, admin, ExecSettings()).ledger.data["continuous"]
    block = ledger["auto_throttle"]
    assert block["floor"] == FLOOR and block["ceiling"] == CEILING and block["traffic"].startswith("simulated")
    mine = [c for c in block["changes"] if c["broker"] == 2]
    assert [c["follower_rate"] for c in mine] == [int(v) for _, v in given]
    assert [c["clock"] for c in mine] == pytest.approx([t for t, _ in given], abs=1e-3)
    assert [c["traffic_in"] for c in mine] == [_produce_at(RISING_AND_FALLING, t) for t, _ in given]
    # The report draws those rates over time, a step per recorded change.
    history = rate_history(Executor(plan, admin, ExecSettings()).ledger.data)
    assert history is not None and [f for _, f, _ in history.brokers[2]] == [int(v) for _, v in given]
    assert history.brokers[2][0][0] == 0.0 and (history.floor, history.ceiling) == (FLOOR, CEILING)
    (chart,) = auto_throttle_charts(Executor(plan, admin, ExecSettings()).ledger.data)
    assert chart["id"] == "auto-throttle"
    assert all(f'id="auto-throttle-throttle-{b}-{k}"' in chart["svg"] for b in (1, 2) for k in ("follower", "leader"))
    # Restored exactly: the operator's value on broker 1, nothing anywhere else.
    assert {b.id: dict(b.configs) for b in admin.sim.brokers.values()} == before
    assert ledger["throttles_restored"] is True


def _seconds(outcome) -> float:
    assert outcome.status.value == "complete", outcome.to_dict()
    return outcome.continuous.actual_seconds


@pytest.mark.parametrize("profile", [ONLY_FALLING, RISING_AND_FALLING], ids=["headroom-only-falls", "headroom-rises-twice"])
def test_the_run_ends_no_later_than_a_fixed_throttle_at_the_ceiling(tmp_path, auto, profile):
    fixed = _seconds(_run(_plan(tmp_path, "fixed"), _cluster(profile), None))
    adaptive = _seconds(_run(_plan(tmp_path, "auto"), _cluster(profile), auto))
    # Both copy within what the clients leave of the NIC. Where the headroom only falls the two are the same
    # run; where it rises, auto holds the lower rate until its next poll: at most a poll interval per rise.
    rises = sum(1 for (_, a), (_, b) in zip(profile, profile[1:]) if b < a)
    assert adaptive <= fixed + rises * POLL + 1e-6, (adaptive, fixed)
    assert fixed > 20  # the producers really held the copy back (1 GiB at 40 MiB/s alone is 25.6 s)


def test_auto_is_refused_in_one_line_without_capacities_or_above_the_approved_rate(tmp_path):
    plan = _plan(tmp_path, "refused")
    with pytest.raises(RebalanceError, match=r"^--throttle auto: broker 1 \(moved by the plan\) has no network_in_bytes_per_sec"):
        auto_throttle(plan, None, None, None)
    partial = read_capacity_map({"default": {"network_in_bytes_per_sec": NIC}}, "partial")
    with pytest.raises(RebalanceError, match="broker 1 .* has no network_out_bytes_per_sec"):
        auto_throttle(plan, None, None, partial)
    with pytest.raises(RebalanceError, match=r"--throttle-ceiling 50.0 MiB/s .* above the plan's approved throttle 40.0 MiB/s"):
        auto_throttle(plan, None, 50 * MiB, CAPACITY)
    with pytest.raises(RebalanceError, match="--throttle-floor .* is above the ceiling"):
        auto_throttle(plan, 30 * MiB, 20 * MiB, CAPACITY)
    defaulted = auto_throttle(plan, None, None, CAPACITY)
    assert (defaulted.floor, defaulted.ceiling) == (CEILING // 10, CEILING)


def test_before_the_traffic_is_known_a_broker_gets_the_ceiling_a_fixed_throttle_would_hold() -> None:
    # A sampled source knows no traffic until its second sample (the first poll). The floor there would start every
    # auto run a poll interval behind the fixed throttle; the ceiling is the rate the approver accepted.
    from kafka_rebalance.executor.autothrottle import BrokerRates, broker_rates

    bounds = AutoThrottle(FLOOR, CEILING, CAPACITY.resolve([2]))
    assert broker_rates(bounds, 2, None) == BrokerRates(CEILING, CEILING, None, None)


@pytest.mark.parametrize("mode", ["continuous", "batches"])
def test_a_window_is_weighed_at_the_rates_the_traffic_leaves_not_at_the_ceiling(tmp_path, auto, mode):
    """The plan's estimate is made at the ceiling. With the hot producer writing 80 MiB/s into broker 2, auto gives
    copies into it 20 MiB/s: the gigabyte that fits a 40 s window at the ceiling does not at that rate, so nothing
    starts and the run holds saying the window is too short, instead of starting a copy that would outlive its
    window and be cancelled at its end. With the producer quiet the same plan runs in the same window."""
    windows = policy("configured", [Window("* * * * *", timedelta(seconds=40))])
    margin = timedelta(seconds=5)

    def run(name: str, produce: float):
        plan = _plan(tmp_path, f"{name}-{mode}")
        admin = _cluster([(0.0, produce)])
        gate = ExecutionGate(plan.path, plan.plan_hash, windows, margin=margin, grace=timedelta(seconds=5),
                             clock=lambda: EPOCH + timedelta(seconds=admin.now()))
        settings = ExecSettings(poll_interval=POLL, stall_seconds=600.0, auto_throttle=auto, mode=mode)
        return plan, admin, Executor(plan, admin, settings, gate=gate).run()

    plan, admin, busy = run("busy", 80 * MiB)
    estimate = max(b.estimated_seconds for b in plan.batches)
    assert estimate + margin.total_seconds() < 40 < 2 * estimate + margin.total_seconds(), estimate
    assert busy.hold is not None and busy.hold.reason is HoldReason.WINDOW_TOO_SHORT, busy.to_dict()
    assert admin.sim.list_reassignments() == {} and all(admin.sim.partitions[tp].replicas == [1] for tp in MOVING)
    _, admin, quiet = run("quiet", 0.0)
    assert quiet.status.value == "complete", quiet.to_dict()
