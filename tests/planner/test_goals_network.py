"""Broker capacity and the network goals: figures worked out by hand, capacity-weighted targets on a cluster
with 1x and 2x disks, network in brought within its tolerance on a cluster with hot topics, and the
capacity map's errors (one line naming file, field and value)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.generate import ClusterSpec, generate_snapshot
from kafka_rebalance.planner import PlanOptions, make_plan
from kafka_rebalance.planner.goals.view import BalanceView, BrokerView
from kafka_rebalance.planner.judge import snapshot_checks
from kafka_rebalance.planner.state import ClusterState
from kafka_rebalance.snapshot import Snapshot, snapshot_from_dict
from kafka_rebalance.snapshot.capacity import CapacityError, CapacityMap, read_capacity_file, read_capacity_map
from kafka_rebalance.snapshot.model import Capacity
from tests.support.clusters import part, snapshot
from tests.support.plans import final_rows

NETWORK_GOALS = ("replica-count", "bytes", "network-in", "network-out", "preferred-leader", "leader-imbalance")
TB = 10**12


def per_broker(snap: Snapshot, rows: dict[tuple[str, int], tuple[int, ...]], what: str) -> dict[int, float]:
    out = {b.id: 0.0 for b in snap.brokers}
    for p in snap.partitions:
        for b in rows[(p.topic, p.partition)]:
            out[b] += float(getattr(p, what) or 0)
    return out


def test_network_figures_of_a_cluster_worked_by_hand() -> None:
    # t-0 on 0, 1 (led by 0) produces 100 B/s and is consumed at 50; t-1 on 1, 2 and t-2 on 2, 0 produce 10.
    # In: 0 = 100 + 10, 1 = 100 + 10, 2 = 10 + 10; total 240, share 80: 0.375, 0.375, 0.75 off.
    # Out (as leader): 0 = 100 x 1 + 50 = 150, 1 = 10, 2 = 10; total 170, share 56.67: 0 is 1.647 off.
    snap = snapshot([0, 1, 2], [part("t", 0, [0, 1], rate=100.0, bytes_out_per_sec=50.0),
                                part("t", 1, [1, 2], rate=10.0), part("t", 2, [2, 0], rate=10.0)])
    checks = {c.name: c for c in snapshot_checks(snap, PlanOptions(goals=("network-in", "network-out")))}
    assert checks["network-in"].per_broker == pytest.approx({0: 0.375, 1: 0.375, 2: 0.75})
    assert checks["network-in"].offenders == (0, 1, 2)
    assert checks["network-out"].value == pytest.approx((150 - 170 / 3) / (170 / 3))
    # With network-in capacities 1:1:2 the shares are 60, 60, 120: 2 sits 100 below its 120.
    caps = CapacityMap(Capacity(network_in_bytes_per_sec=100), ((2, Capacity(network_in_bytes_per_sec=200)),))
    weighted = snapshot_checks(snap, PlanOptions(goals=("network-in",), capacity=caps))
    assert next(c for c in weighted if c.name == "network-in").per_broker == pytest.approx(
        {0: 50 / 60, 1: 50 / 60, 2: 100 / 120})
    # No rates at all: nothing to balance, both hold.
    cold = snapshot([0, 1, 2], [part("t", 0, [0, 1])])
    assert all(c.reached for c in snapshot_checks(cold, PlanOptions(goals=("network-in", "network-out"))))


def two_tier(racks: int = 0, partitions: int = 150) -> tuple[Snapshot, CapacityMap]:
    """6 brokers, 2 of them new and empty; brokers 4 and 5 have twice the disk and network of 0..3."""
    snap = generate_snapshot(ClusterSpec(brokers=6, racks=racks, partitions=partitions, topics=10, new_brokers=2, seed=3))
    one = Capacity(disk_bytes=TB, network_in_bytes_per_sec=10**8, network_out_bytes_per_sec=10**8)
    two = Capacity(disk_bytes=2 * TB, network_in_bytes_per_sec=2 * 10**8, network_out_bytes_per_sec=2 * 10**8)
    return snap, CapacityMap(one, ((4, two), (5, two)))


@pytest.mark.parametrize("optimizer", ["heuristic", "auto"])
def test_a_cluster_with_1x_and_2x_disks_ends_with_bytes_proportional_to_capacity(optimizer: str) -> None:
    snap, caps = two_tier()
    plan = make_plan(snap, PlanOptions(capacity=caps, optimizer=optimizer))
    held = per_broker(snap, final_rows(plan), "size_bytes")
    total = sum(held.values())
    weight = {0: 1, 1: 1, 2: 1, 3: 1, 4: 2, 5: 2}
    for b, x in held.items():
        share = total * weight[b] / 8
        assert abs(x - share) <= 0.10 * share + 1, (b, x / share)
    # The same cluster without capacities is planned as before: even shares.
    even = per_broker(snap, final_rows(make_plan(snap, PlanOptions(optimizer=optimizer))), "size_bytes")
    assert max(even.values()) <= 1.1 * sum(even.values()) / 6 + 1


def test_identical_capacities_plan_exactly_as_none() -> None:
    snap, _ = two_tier(racks=3)
    same = CapacityMap(Capacity(disk_bytes=TB))
    a, b = make_plan(snap, PlanOptions(optimizer="heuristic")), make_plan(snap, PlanOptions(optimizer="heuristic", capacity=same))
    assert final_rows(a) == final_rows(b)
    assert a.summary["projected"] == b.summary["projected"]


def hot(snap: Snapshot, topics: int = 2, factor: float = 20.0) -> Snapshot:
    names = sorted({p.topic for p in snap.partitions})[:topics]
    return replace(snap, partitions=tuple(replace(p, bytes_in_per_sec=(p.bytes_in_per_sec or 0.0) * factor)
                                          if p.topic in names else p for p in snap.partitions))


@pytest.mark.parametrize("optimizer", ["heuristic", "auto"])
def test_hot_topics_network_in_ends_within_its_capacity_weighted_share(optimizer: str) -> None:
    base, caps = two_tier(partitions=300)
    snap = hot(base)
    plan = make_plan(snap, PlanOptions(capacity=caps, optimizer=optimizer, goals=NETWORK_GOALS))
    rates = per_broker(snap, final_rows(plan), "bytes_in_per_sec")
    before = per_broker(snap, {(p.topic, p.partition): p.replicas for p in snap.partitions}, "bytes_in_per_sec")
    total = sum(rates.values())
    weight = {0: 1, 1: 1, 2: 1, 3: 1, 4: 2, 5: 2}

    def worst(load: dict[int, float]) -> float:
        return max(abs(x - total * weight[b] / 8) / (total * weight[b] / 8) for b, x in load.items())

    assert worst(before) > 1.0  # the new brokers carry nothing
    assert worst(rates) <= 0.10 + 1e-6  # within the tolerance of each broker's capacity-weighted share
    entry = next(g for g in plan.summary["goals"] if g["name"] == "network-in")
    assert entry["after"]["value"] == pytest.approx(worst(rates), abs=1e-6)


def test_capacity_in_the_snapshot_format_round_trips_and_a_bad_value_is_named() -> None:
    raw = {"cluster_id": "c", "brokers": [{"id": 0, "capacity": {"disk_bytes": 5, "network_in_bytes_per_sec": 7}}, {"id": 1}],
           "partitions": []}
    snap = snapshot_from_dict(raw)
    assert snap.brokers[0].capacity == Capacity(5, 7, None)
    assert snap.brokers[0].capacity_bytes == 5  # no log dirs: the configured disk
    assert snapshot_from_dict(snap.to_dict()) == snap
    assert "capacity" not in snap.to_dict()["brokers"][1]
    raw["brokers"][0]["capacity"] = {"disk_bytes": 0}
    with pytest.raises(RebalanceError, match=r"brokers\[0\] broker 0: capacity.disk_bytes: must be at least 1 byte .* got 0"):
        snapshot_from_dict(raw)


@pytest.mark.parametrize(("text", "message"), [
    ("default: {disk_bytes: 2TiB}\nbrokers: {3: {network_in_bytes_per_sec: 12Mb/s}}",
     r"capacity.brokers.3.network_in_bytes_per_sec: '12Mb/s' is ambiguous"),
    ("default: {disk: 1}", r"capacity.default.disk: unknown field"),
    ("brokers: {x: {disk_bytes: 1}}", r"capacity.brokers.x: not a broker id"),
    ("default: {disk_bytes: -1}", r"capacity.default.disk_bytes: must be at least 1 byte"),
    ("[1, 2]", r"capacity: must be an object with 'default' and/or 'brokers'"),
    ("{a: [", r"not JSON or YAML"),
])
def test_a_bad_capacity_file_is_one_line_naming_file_field_and_value(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "cap.yaml"
    path.write_text(text)
    with pytest.raises(CapacityError, match=message) as info:
        read_capacity_file(str(path))
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_a_capacity_map_naming_a_broker_the_snapshot_lacks_is_refused() -> None:
    snap = snapshot([0, 1], [part("t", 0, [0])])
    caps = read_capacity_map({"brokers": {"7": {"disk_bytes": "1TB"}}}, "clusters.yaml prod.capacity")
    with pytest.raises(CapacityError, match=r"^clusters.yaml prod.capacity.brokers.7: broker 7 is not in the snapshot"):
        make_plan(snap, PlanOptions(capacity=caps))


def test_the_plan_records_its_capacities_and_reads_them_back() -> None:
    snap, caps = two_tier()
    plan = make_plan(snap, PlanOptions(capacity=caps, optimizer="heuristic"))
    block = plan.options.manifest()
    assert block["capacity"]["brokers"]["4"] == {"disk_bytes": 2 * TB, "network_in_bytes_per_sec": 2 * 10**8,
                                                 "network_out_bytes_per_sec": 2 * 10**8}
    assert PlanOptions.from_manifest(block) == plan.options
    assert "capacity" not in PlanOptions().manifest()


ENTRY = {"name": "network-in", "brokers": {"ids": [0, 1, 2], "before": [3 * 2**20, 2**20, 0.0],
                                           "after": [2**20, 2**20, 2**21], "share": [2**20, 2**20, 2**21],
                                           "capacity": [10 * 2**20, 10 * 2**20, None]}}


def test_the_network_chart_draws_before_projected_final_the_share_and_the_capacity() -> None:
    from kafka_rebalance.planner.goals.network import NetworkInGoal

    final = snapshot([0, 1, 2], [part("t", 0, [2, 0], rate=float(2**20))])  # after execution: 2 and 0 take 1 MiB/s each
    (chart,) = NetworkInGoal.report_charts(ENTRY, final)
    svg = chart["svg"]
    assert chart["id"] == "network-in" and 'data-chart="network-in"' in svg
    for b in (0, 1, 2):
        for label in ("before", "projected", "final"):
            assert f'id="network-in-bar-{label}-{b}"' in svg
        assert f'id="network-in-mark-{b}"' in svg
    assert 'id="network-in-limit-0"' in svg and 'id="network-in-limit-2"' not in svg  # no capacity configured for 2
    assert "MiB/s" in svg
    assert NetworkInGoal.report_charts({"name": "network-in"}) == []  # a plan made before the figures existed


def test_the_approver_reads_the_busiest_broker_against_its_share_and_capacity() -> None:
    from kafka_rebalance.orchestration.approval_text import goal_lines

    entry = {**ENTRY, "hard": False, "before": {"value": 2.0, "offenders": [0, 2]}, "after": {"value": 0.0, "offenders": []},
             "reached": True}
    assert goal_lines({"goals": [entry]}) == (
        "- Goal network-in: 2 -> 0, met\n"
        "  - network in: busiest broker 0 at 3.0 MiB/s before, busiest after 2 at 2.0 MiB/s (its share 2.0 MiB/s); "
        "the most loaded broker at 3.00 -> 1.00x its share\n")


def test_the_network_in_veto_keeps_receivers_under_and_eligible_senders_over_their_band() -> None:
    from kafka_rebalance.planner.goals.network import NetworkInGoal
    from tests.support.clusters import planner_state

    # In: 0 = 60 + 30, 1 = 30, 2 = 0 (t-3 is cold); share 40, band [36, 44] at 10 %.
    s = planner_state([0, 1, 2], [part("t", 0, [0], rate=60.0), part("t", 1, [0], rate=30.0), part("t", 2, [1], rate=30.0),
                                  part("t", 3, [2])], network_tolerance=0.1)
    goal = NetworkInGoal()
    assert goal.accept_move(s, 1, 0, 2)  # 0 -> 60, 2 -> 30
    assert not goal.accept_move(s, 0, 0, 2)  # 2 would take 60, above 44
    assert not goal.accept_move(s, 2, 1, 2)  # 1 would fall to 0, below 36
    assert goal.accept_move(s, 3, 2, 0)  # no traffic: any move
    s.move(1, 0, 2)  # the veto follows the plan's moves: 2 now holds 30
    assert not goal.accept_move(s, 0, 0, 1) and goal.accept_move(s, 3, 2, 1)
    # The band's edges widened by a millionth either way (rounding): 44 (1 + 1e-6) and 36 (1 - 1e-6).
    assert (goal.load.tolist(), goal.hi.tolist()) == ([60.0, 30.0, 30.0], pytest.approx([44.0 * (1 + 1e-6)] * 3, rel=1e-12))
    assert goal.lo.tolist() == pytest.approx([36.0 * (1 - 1e-6)] * 3, rel=1e-12)


def test_network_out_hands_a_first_replica_over_that_fits_twice_the_smaller_of_excess_and_room() -> None:
    import numpy as np

    from kafka_rebalance.planner.goals.network import NetworkOutGoal

    # Broker 0 leads p0 (sends 30) and p1 (10): 40 against a share of 15, 25 over; broker 1 leads p2 (5), 10 of
    # room; broker 2 none, 15 of room. p0 is too hot for anyone (30 >= 2 x min(25, 15)); p1 fits broker 2.
    def case(p1_row: list[int], bounds: tuple[int, int]) -> tuple[bool, list[tuple[int, int]]]:
        rows = np.asarray([[0, 1], p1_row, [1, 0]])
        calls: list[tuple[int, int]] = []
        done = NetworkOutGoal._hand_over([0], rows, np.ones((3, 2), dtype=bool), np.asarray([30.0, 10.0, 5.0]),
                                         np.asarray([40.0, 5.0, 0.0]), np.full(3, 15.0), np.asarray([2, 1, 0]),
                                         {0: [0, 1], 1: [2]}, lambda p, j: calls.append((p, j)), bounds,
                                         np.ones(3, dtype=bool))  # fmt: skip
        return done, calls

    assert case([0, 2], (0, 5)) == (True, [(1, 1)])
    # Broker 0 may not fall below 2 first replicas: broker 2 leads nothing to give back.
    assert case([0, 2], (2, 5)) == (False, [])
    # On broker 1 instead (10 < 2 x 10), which gives back p2 (cooler: 5 < 10) to broker 0 (slot 1 of p2).
    assert case([0, 1], (2, 5)) == (True, [(1, 1), (2, 1)])


def test_shares_go_by_capacity_only_when_every_broker_has_one() -> None:
    from kafka_rebalance.planner.goals.network import NetworkInGoal, shares
    from kafka_rebalance.planner.goals.view import BalanceView, BrokerView

    assert shares(120.0, [100.0, 100.0, 200.0]) == [30.0, 30.0, 60.0]
    assert shares(120.0, [100.0, None, 200.0]) == [40.0, 40.0, 40.0]
    assert shares(120.0, [100.0, 0.0, 200.0]) == [40.0, 40.0, 40.0]
    assert shares(120.0, []) == []

    def broker(bid: int, load: float, target: float) -> BrokerView:
        return BrokerView(bid, 1, 0, 9, 0.0, 0.0, 0.1, 0, 0, 0, network_in=load, network_in_target=target)

    # 0.2 off, 0.1 off (the tolerance: within), no share at all (0).
    view = BalanceView((broker(1, 48.0, 40.0), broker(2, 36.0, 40.0), broker(3, 5.0, 0.0)), (), 0.1, 10.0, (0, 9),
                       network_tolerance=0.1)
    check = NetworkInGoal().check(view)
    assert (check.value, check.reached, check.offenders) == (pytest.approx(0.2), False, (1,))
    assert check.per_broker == pytest.approx({1: 0.2, 2: 0.1, 3: 0.0})
    assert NetworkInGoal.gate_allowance(0.05, 0.1) == 0.1 and NetworkInGoal.gate_allowance(0.3, 0.1) == 0.3


# --------------------------------------------------------------------------- figures for the report, by hand


def network_view(*brokers: tuple[int, float, float, float | None]) -> BalanceView:

    views = tuple(BrokerView(b, 1, 0, 9, 0.0, 0.0, 0.1, 0, 0, 0, network_in=load, network_in_target=target,
                             network_in_capacity=cap) for b, load, target, cap in brokers)  # fmt: skip
    return BalanceView(views, (), 0.1, 10.0, (0, 9), network_tolerance=0.1)


def test_the_broker_figures_are_each_brokers_load_before_and_after_its_share_and_capacity_to_the_thousandth() -> None:
    from kafka_rebalance.planner.goals.network import NetworkInGoal

    before = network_view((0, 30.12345, 1.0, 99.0), (1, 5.0, 2.0, None))
    after = network_view((0, 20.00049, 17.55551, 100.0), (1, 15.5, 17.5, None))
    assert NetworkInGoal().broker_figures(before, after) == {
        "ids": [0, 1], "before": [30.123, 5.0], "after": [20.0, 15.5], "share": [17.556, 17.5], "capacity": [100.0, None]}


def test_the_approval_line_names_the_busiest_broker_after_with_its_share_and_capacity() -> None:
    from kafka_rebalance.planner.goals.network import NetworkInGoal

    M = float(2**20)
    # After: 0 is the busiest (2 MiB/s, share 1, capacity 10): 2.00x its share; before 0 at 3 MiB/s, 3.00x. Broker 2
    # has no share (0): left out of the ratio (it has a capacity, which does not count).
    entry = {"brokers": {"ids": [0, 1, 2], "before": [3 * M, M, M / 2], "after": [2 * M, M, 1.5 * M],
                         "share": [M, 2 * M, 0.0], "capacity": [10 * M, None, 5 * M]}}
    assert NetworkInGoal.approval_line(entry) == (
        "network in: busiest broker 0 at 3.0 MiB/s before, busiest after 0 at 2.0 MiB/s (its share 1.0 MiB/s, "
        "capacity 10.0 MiB/s); the most loaded broker at 3.00 -> 2.00x its share")
    # No broker with a share: the ratio is 0.
    none = {"brokers": {"ids": [0], "before": [M], "after": [M], "share": [0.0], "capacity": [None]}}
    assert NetworkInGoal.approval_line(none).endswith("at 0.00 -> 0.00x its share")
    assert NetworkInGoal.approval_line({"name": "network-in"}) == ""  # a plan made before the figures existed
    # Columns of different lengths are a broken entry, not a shorter table.
    broken = {"brokers": {"ids": [0, 1], "before": [M], "after": [M, M], "share": [M, M], "capacity": [None, None]}}
    with pytest.raises(ValueError):
        NetworkInGoal.approval_line(broken)


# --------------------------------------------------------------------------- network in: the veto, the band, the moves


def in_state(rates: list[tuple[int, float]], caps: tuple[float, ...] | None = None, **options: Any) -> ClusterState:
    """Partition i (topic t, RF 1, 1 GiB) on broker ``rates[i][0]`` producing ``rates[i][1]`` B/s, 3 brokers; with
    network-in capacities ``caps`` where given."""
    snap = snapshot([0, 1, 2], [part("t", i, [b], rate=r) for i, (b, r) in enumerate(rates)])
    capacity = None if caps is None else CapacityMap(Capacity(), tuple((b, Capacity(network_in_bytes_per_sec=c))
                                                                      for b, c in enumerate(caps)))  # fmt: skip
    opts = PlanOptions(network_tolerance=0.1, **({"capacity": capacity} if capacity else {}), **options)
    return ClusterState(opts.planned_snapshot(snap), opts)


def test_the_veto_refuses_a_receiver_above_its_band_even_where_the_sender_stays_in_its_own() -> None:
    from kafka_rebalance.planner.goals.network import NetworkInGoal

    # In: 0 = 50 + 40 + 0.5 = 90.5, 1 = 30, 2 = 0; share 40.17, band about 36.2..44.2. t-1 (40) 0 -> 2: 0 keeps
    # 50.5, 2 takes 40: allowed. t-0 (50) 0 -> 2: 0 keeps 40.5 (inside), but 2 would take 50: refused. t-3 (30) 1 -> 2:
    # 2 takes it inside, but 1 falls to 0, below its floor: refused.
    s = in_state([(0, 50.0), (0, 40.0), (0, 0.5), (1, 30.0)])
    goal = NetworkInGoal()
    assert goal.accept_move(s, 1, 0, 2) and not goal.accept_move(s, 0, 0, 2)
    assert not goal.accept_move(s, 3, 1, 2)
    # A trickle counts: t-2 (0.5 B/s) onto 1 is fine, onto 0's band top it is not (0 at 90.5 already).
    s.move(2, 0, 1)
    assert not goal.accept_move(s, 2, 1, 0)
    s.move(2, 1, 0)  # the veto follows moves onto broker 0 as well
    assert goal.accept_move(s, 1, 0, 2) and goal.load.tolist() == [90.5, 30.0, 0.0]


@pytest.mark.parametrize(("caps", "allowed"), [
    # Relief mode, every capacity known (100, 100, 100: share 40, top 44): only the receiver's top binds.
    ((100.0, 100.0, 100.0), [True, False, True]),
    # A capacity unknown: relief has no limits to keep, anything goes.
    (None, [True, True, True]),
])
def test_in_relief_mode_the_veto_keeps_only_the_receivers_top_and_only_where_capacities_are_known(
        caps: tuple[float, ...] | None, allowed: list[bool]) -> None:  # fmt: skip
    from kafka_rebalance.planner.goals.network import NetworkInGoal

    # In: 0 = 60 + 30, 1 = 30, 2 = 0; share 40. t-1 (30) 0 -> 2: 2 at 30. t-0 (60) 0 -> 2: 2 at 60, above 44.
    # t-2 (30) 1 -> 2: 1 falls to 0, below any floor, which relief mode does not keep.
    s = in_state([(0, 60.0), (0, 30.0), (1, 30.0)], caps, relieve=True)
    goal = NetworkInGoal()
    assert [goal.accept_move(s, 1, 0, 2), goal.accept_move(s, 0, 0, 2), goal.accept_move(s, 2, 1, 2)] == allowed


def test_how_far_outside_its_band_a_broker_is_and_whether_a_transfer_brings_two_nearer() -> None:
    from kafka_rebalance.planner.goals.network import NetworkInGoal

    # In: 0 = 90, 1 = 30, 2 = 0; share 40, band 36 (1 - 1e-6) .. 44 (1 + 1e-6).
    s = in_state([(0, 60.0), (0, 30.0), (1, 30.0)])
    goal = NetworkInGoal()
    goal._setup(s)
    lo, hi = 36.0 * (1 - 1e-6), 44.0 * (1 + 1e-6)
    assert [goal._off(0, x) for x in (40.0, 50.0, 30.0)] == [0.0, 50.0 - hi, lo - 30.0]
    # 30: 0 to 60 and 2 to 30, 16 + 6 outside instead of 46 + 36. 90: 0 to 0 and 2 to 90, the same 82 outside, the
    # other way round. 1e-5 B/s off 0 onto 2 brings them 2e-5 nearer: less than a millionth of the 82 outside.
    assert goal._better_each(0, 2, np.array([30.0, 90.0, 1e-5])).tolist() == [True, False, False]


def test_network_in_sheds_the_replica_nearest_half_the_gap_to_the_broker_with_most_room() -> None:
    from kafka_rebalance.planner.goals.network import NetworkInGoal

    # In: 0 = 50 + 30 + 5 = 85, 1 = 35, 2 = 0 (t-4 is cold); share 40, band 36..44. 0 is 45 over its share, 2 has the
    # most room (40): half the gap is (45 + 40) / 2 = 42.5. Each of 0's replicas brings 0 and 2 nearer their bands
    # (77 outside now: t-0 leaves 1 + 6, t-1 11 + 6, t-2 36 + 31); t-0 (50) is nearest 42.5 and goes to 2. Then 2 (50)
    # is over: t-0 back to 0 or on to 1 takes either further out, and no swap brings them nearer (t-0 for t-1 leaves
    # 6 + 11 outside for 6 + 1 now, for t-3 on 1 the same 7), so 2 is stuck; 0 and 1 (35) are under but only 2 is
    # above its share: done.
    s = in_state([(0, 50.0), (0, 30.0), (0, 5.0), (1, 35.0), (2, 0.0)])
    NetworkInGoal().optimize(s)
    assert [s.row(p) for p in range(5)] == [[2], [0], [0], [1], [2]]


def test_the_exact_rows_hold_each_brokers_movable_traffic_to_its_band_less_what_cannot_move() -> None:
    from kafka_rebalance.planner.exact import ExactModel
    from kafka_rebalance.planner.goals.network import NetworkInGoal
    from kafka_rebalance.planner.targets import set_targets

    # In: 0 = 60 + 40 (t-2, leaderless: it cannot move), 1 = 20, 2 = 0; share 40, band 36 (1 - 1e-6) .. 44 (1 + 1e-6).
    # The rows are scaled by the hottest movable rate (60): each variable's rate / 60, each bound less the fixed
    # traffic (40 on 0), / 60.
    snap = snapshot([0, 1, 2], [part("t", 0, [0], rate=60.0), part("t", 1, [1], rate=20.0),
                                part("t", 2, [0], rate=40.0, leader=-1), part("t", 3, [2], rate=0.0)])  # fmt: skip
    opts = PlanOptions(network_tolerance=0.1, goals=("replica-count", "network-in"))
    s = ClusterState(snap, opts)
    set_targets(s)
    model = ExactModel(s, 0.0)
    NetworkInGoal().exact_terms(model)
    rates = {0: 60.0, 1: 20.0, 3: 0.0}
    assert model._vals[-1].tolist() == pytest.approx([rates[p] / 60 for p in model.parts.tolist() for _ in range(3)])
    lo, hi = 36.0 * (1 - 1e-6), 44.0 * (1 + 1e-6)
    assert model._lo[-1].tolist() == pytest.approx([(lo - 40) / 60, lo / 60, lo / 60], rel=1e-12)
    assert model._hi[-1].tolist() == pytest.approx([(hi - 40) / 60, hi / 60, hi / 60], rel=1e-12)


def test_a_brokers_candidates_are_its_untouched_and_arrived_replicas_hottest_first_then_the_plans_others() -> None:
    from kafka_rebalance.planner.goals.network import NetworkInGoal

    # On 0: p0 (0.5 B/s), p1 (cold), p2 (30, leaderless: never moves), p4 (50, RF 2: its replica on 1 moved to 2, so
    # the plan changed it), p5 (40, moved on to 2). p3 (20) came from 1 to 0; p6 (5) came to 0 and went on to 2.
    snap = snapshot([0, 1, 2], [part("t", 0, [0], rate=0.5), part("t", 1, [0], rate=0.0), part("t", 2, [0], rate=30.0, leader=-1),
                                part("t", 3, [1], rate=20.0), part("t", 4, [0, 1], rate=50.0), part("t", 5, [0], rate=40.0),
                                part("t", 6, [1], rate=5.0)])  # fmt: skip
    s = ClusterState(snap, PlanOptions())
    for p, src, dst in [(3, 1, 0), (4, 1, 2), (5, 0, 2), (6, 1, 0), (6, 0, 2)]:
        s.move(p, src, dst)
    goal = NetworkInGoal()
    goal._setup(s)
    assert goal._candidates(s, 0) == [3, 0, 4]  # p3 and p0 hottest first, then p4, which the plan changed already
    assert goal._candidates(s, 0, hot_only=False) == [3, 0, 1, 4]  # the cold p1 too (a swap may send it back)


def test_with_nobody_above_the_band_the_broker_most_above_its_share_lifts_one_below() -> None:
    from kafka_rebalance.planner.goals.network import NetworkInGoal

    # In: 0 = 40 + 4 = 44, 1 = 40 + 2 = 42, 2 = 34; share 40, band 36..44: nobody above 44 (0 is just inside), 2
    # is under. 0, the most above its share (4 against 1's 2), gives t-1 (4 B/s): 0 to 40, 2 to 38, all inside.
    s = in_state([(0, 40.0), (0, 4.0), (1, 40.0), (1, 2.0), (2, 34.0)])
    NetworkInGoal().optimize(s)
    assert [s.row(p) for p in range(5)] == [[0], [2], [1], [1], [2]]


# --------------------------------------------------------------------------- network out: first replicas handed over


def out_firsts(bounds: tuple[int, int]) -> list[int]:
    """Each partition's first replica after network out's hand-over, within the preferred-leader ``bounds`` given.
    Out, as leader (rate x (RF - 1) + consumer traffic): 0 leads p0 (30), p1 (10), p2 (5): 45; 1 leads p3 (3 + 2
    consumed: 5); 2 leads p4 only, of RF 1 (it sends nothing). Total 50, share 16.67, top 18.33 at 10 %."""
    from kafka_rebalance.planner.goals.network import NetworkOutGoal
    from kafka_rebalance.planner.goals.preferred_leader import PreferredLeaderGoal
    from tests.support.clusters import planner_state

    s = planner_state([0, 1, 2], [part("t", 0, [0, 1], rate=30.0), part("t", 1, [0, 2], rate=10.0), part("t", 2, [0, 1], rate=5.0),
                                  part("t", 3, [1, 2], rate=3.0, bytes_out_per_sec=2.0), part("t", 4, [2], rate=20.0)],
                      network_tolerance=0.1)  # fmt: skip
    leaders = PreferredLeaderGoal(balance=False)
    leaders.optimize(s)
    choice = replace(leaders.choice(), bounds=bounds)
    NetworkOutGoal().lead(s, choice)
    return choice.preferred.tolist()


def test_network_out_hands_the_hottest_first_replica_that_fits_to_a_fellow_below_its_share() -> None:
    # 0 is 28.33 over its share. p0 (30) does not fit 1's room (11.67: 30 >= 2 x 11.67); p1 (10) fits 2's (16.67): to
    # 2. Then 0 (35) is 18.33 over: p0 still fits nobody, p2 (5) fits 1's 11.67: to 1. Then 0 (30) is 13.33 over and
    # p0 fits nobody: done (0 leads p0, 30, above its top: moving replicas is network in's).
    assert out_firsts((0, 5)) == [0, 2, 1, 1, 2]
    # Bounds 2..2 first replicas each: 0 (3) may give one, to 2 (1), not a second.
    assert out_firsts((2, 2)) == [0, 2, 0, 1, 2]


def test_traffic_shares_and_deviation_at_their_edges() -> None:
    import numpy as np

    from kafka_rebalance.planner.goals.network import NetworkInGoal, shares, traffic
    from kafka_rebalance.planner.goals.view import BalanceView

    # p0 on 0, 1 (led by 0): 10 B/s in, 1 consumed; p1 on 2 alone (RF 1): 20 in, 2 consumed. In: 10, 10, 20. Out: 0
    # sends 10 x 1 + 1 = 11; 2 sends its consumers' 2 only (no follower to replicate to).
    net_in, net_out = traffic(np.asarray([[0, 1], [2, -1]]), np.asarray([0, 2]), np.asarray([10.0, 20.0]),
                              np.asarray([1.0, 2.0]), 3)  # fmt: skip
    assert (net_in.tolist(), net_out.tolist()) == ([10.0, 10.0, 20.0], [11.0, 0.0, 2.0])
    assert shares(120.0, [1.0, 1.0, 2.0]) == [30.0, 30.0, 60.0]  # capacities of 1 B/s are capacities too
    # A share below 1 B/s is a share: 1 against 0.5 is 1.0 off.
    b = BrokerView(0, 1, 0, 9, 0.0, 0.0, 0.1, 0, 0, 0, network_in=1.0, network_in_target=0.5)
    assert NetworkInGoal.deviation(b) == 1.0
    empty = NetworkInGoal().check(BalanceView((), (), 0.1, 10.0, (0, 9), network_tolerance=0.1))
    assert (empty.value, empty.reached) == (0.0, True)


def test_the_configured_network_out_capacities_are_read() -> None:
    from kafka_rebalance.planner.goals.network import network_capacities

    caps = CapacityMap(Capacity(network_out_bytes_per_sec=100), ((1, Capacity(network_in_bytes_per_sec=5)),))
    opts = PlanOptions(capacity=caps)
    s = ClusterState(opts.planned_snapshot(snapshot([0, 1], [part("t", 0, [0])])), opts)
    assert network_capacities(s) == ([None, 5.0], [100.0, 100.0])


@pytest.mark.parametrize(("p1_row", "load1", "bounds", "first_of_1", "sent2", "expected"), [
    # As the test above (0 over by 25; p1, 10, fits 2's room of 15), bounds binding exactly: 0 may drop to 1
    # first replica, 2 rise to 1.
    ([0, 2, -1], 5.0, (1, 5), [2], 5.0, (True, [(1, 1)])),
    ([0, 2, -1], 5.0, (0, 1), [2], 5.0, (True, [(1, 1)])),
    # 2 may lead none: nothing of 2's to give back.
    ([0, 2, -1], 5.0, (0, 0), [2], 5.0, (False, [])),
    # p1 on 0, 1, 2 with 1 near its share (12: room 3, 10 >= 6): 1 is passed over and 2 takes it.
    ([0, 1, 2], 12.0, (0, 5), [2], 5.0, (True, [(1, 2)])),
    # p1 to 1 (room 10) where 1 is at its ceiling: of 1's, p2 as hot as p1 (10) does not go back, p3 (4, cooler) does.
    ([0, 1, -1], 5.0, (0, 1), [2, 3], 10.0, (True, [(1, 1), (3, 1)])),
])
def test_a_hand_over_keeps_the_bounds_and_gives_back_only_a_cooler_partition(
        p1_row: list[int], load1: float, bounds: tuple[int, int], first_of_1: list[int], sent2: float,
        expected: tuple[bool, list[tuple[int, int]]]) -> None:  # fmt: skip
    import numpy as np

    from kafka_rebalance.planner.goals.network import NetworkOutGoal

    # Broker 0 leads p0 (30) and p1 (10): 40 against a share of 15; 1 leads p2 (``sent2``) and p3 (4, on 1 and 0).
    rows = np.asarray([[0, 1, -1], p1_row, [1, 0, -1], [1, 0, -1]])
    calls: list[tuple[int, int]] = []
    count = np.asarray([2, len(first_of_1), 0])
    done = NetworkOutGoal._hand_over([0], rows, np.ones((4, 3), dtype=bool), np.asarray([30.0, 10.0, sent2, 4.0]),
                                     np.asarray([40.0, load1, 0.0]), np.full(3, 15.0), count, {0: [0, 1], 1: first_of_1},
                                     lambda p, j: calls.append((p, j)), bounds, np.ones(3, dtype=bool))  # fmt: skip
    assert (done, calls) == expected
