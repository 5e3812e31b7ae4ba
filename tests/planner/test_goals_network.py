"""Broker capacity and the network goals: figures worked out by hand, capacity-weighted targets on a cluster
with 1x and 2x disks, network in brought within its tolerance on a cluster with hot topics, and the
capacity map's errors (one line naming file, field and value)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.generate import ClusterSpec, generate_snapshot
from kafka_rebalance.planner import PlanOptions, make_plan
from kafka_rebalance.planner.judge import snapshot_checks
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
