"""The balance a plan projects: each partition's replicas and leader after every batch and election, per broker,
against the targets the planner was held to (the `projected_balance` suite's rows)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from kafka_rebalance.balance import (
    byte_band,
    byte_centres,
    capacity_weights,
    configured_disk,
    count_bounds,
    placement_targets,
    rack_unsafe,
)
from kafka_rebalance.metrics import threshold_from_configs
from kafka_rebalance.planner.goals.byte_balance import ByteBalanceGoal
from kafka_rebalance.planner.goals.disk_capacity import DiskCapacityGoal
from kafka_rebalance.planner.goals.leader_imbalance import LeaderImbalanceGoal
from kafka_rebalance.planner.goals.network import NetworkGoal, NetworkInGoal, NetworkOutGoal
from kafka_rebalance.planner.goals.placement import PlacementGoal, RackSafetyGoal
from kafka_rebalance.planner.goals.preferred_leader import PreferredLeaderGoal, preferred_band
from kafka_rebalance.planner.goals.registry import goal_class, selected
from kafka_rebalance.planner.goals.replica_count import ReplicaCountGoal
from kafka_rebalance.planner.goals.topic_spread import TopicSpreadGoal
from kafka_rebalance.planner.goals.view import BalanceView, BrokerView, TopicLoad
from kafka_rebalance.planner.judge import judge
from kafka_rebalance.validation.inputs import RawPlan, RawSnapshot
from kafka_rebalance.validation.rows import (
    PartitionState,
    plan_eligible,
)
from kafka_rebalance.validation.table import (
    Table,
)


def project(snap: RawSnapshot, plan: RawPlan) -> dict[tuple[str, int], PartitionState]:
    """The cluster after every batch and the preferred election, as Kafka would leave it.

    A moved partition's new replicas are in sync once the move completes; if its
    leader left, Kafka's controller picks the first live in-sync replica of the new
    list. The election then moves leadership to the preferred (first) replica where
    that broker is alive and in sync (KIP-460).
    """
    alive = snap.alive_ids
    state = {(p.topic, p.partition): PartitionState(p.replicas, p.leader, p.isr) for p in snap.partitions}
    for batch in plan.batches:
        for m in batch.moves:
            key = (m["topic"], m["partition"])
            cur = state.get(key)
            if cur is None:
                continue  # reported by expect_partition_in_snapshot
            new = tuple(m["replicas"])
            if set(new) == set(cur.replicas):
                state[key] = PartitionState(new, cur.leader, cur.isr)
                continue
            isr = tuple(b for b in new if b in alive)
            leader = cur.leader if cur.leader in new and cur.leader in alive else (isr[0] if isr else -1)
            state[key] = PartitionState(new, leader, isr)
    for key in plan.election:
        cur = state.get(key)
        if cur is not None and cur.replicas and cur.replicas[0] in alive and cur.replicas[0] in cur.isr:
            state[key] = PartitionState(cur.replicas, cur.replicas[0], cur.isr)
    return state


def _per_broker(state: dict[tuple[str, int], PartitionState], sizes: dict[tuple[str, int], float]) -> dict[str, Counter[int]]:
    c: dict[str, Counter[int]] = {k: Counter() for k in ("replicas", "preferred", "preferred_not_led", "leaders", "bytes")}
    for key, s in state.items():
        for b in s.replicas:
            c["replicas"][b] += 1
            c["bytes"][b] += int(sizes.get(key) or 0)
        if s.replicas:
            c["preferred"][s.replicas[0]] += 1
            if s.leader != s.replicas[0]:
                c["preferred_not_led"][s.replicas[0]] += 1
        if s.leader >= 0:
            c["leaders"][s.leader] += 1
    return c


def threshold(snap: RawSnapshot, plan: RawPlan) -> float:
    """The threshold the plan recorded (the one the planner was held to), else the cluster's rule."""
    pct: Any = plan.options.get("threshold_percentage")
    return float(pct) if pct is not None else threshold_from_configs(snap.configs)[0]


def _stuck(snap: RawSnapshot, plan: RawPlan) -> set[tuple[str, int]]:
    """Partitions no plan may move: excluded topics and partitions without a leader to copy from."""
    excluded = set(plan.options.get("exclude_topics") or [])
    return {(p.topic, p.partition) for p in snap.partitions if p.topic in excluded or p.leader < 0}


def replica_tolerance(plan: RawPlan) -> float:
    """The plan's replica-count band (plans made before it existed held counts to floor..ceil)."""
    return float(plan.options.get("replica_tolerance", 0.0) or 0.0)


def planned_snapshot(snap: RawSnapshot, plan: RawPlan) -> RawSnapshot:
    """The snapshot as the plan saw it: the capacities its options name over the brokers' own (the planner's
    ``PlanOptions.planned_snapshot``). A map the gate cannot use (a hand-edited plan.json) adds nothing."""
    from kafka_rebalance.snapshot.capacity import CapacityError, read_capacity_map

    try:
        per = read_capacity_map(plan.options.get("capacity"), "options.capacity").resolve(snap.broker_ids)
    except CapacityError:
        return snap
    if not per:
        return snap
    return replace(snap, brokers=[b.with_capacity(per.get(b.id)) for b in snap.brokers])


def disk_weights(snap: RawSnapshot, plan: RawPlan, eligible: set[int]) -> dict[int, int] | None:
    """The eligible brokers' capacity weights as the planner had them (``balance.capacity_weights``)."""
    return capacity_weights({b.id: configured_disk(b) for b in planned_snapshot(snap, plan).brokers if b.id in eligible})


def targets(snap: RawSnapshot, plan: RawPlan) -> tuple[dict[int, tuple[int, int]], dict[int, float]] | None:
    """Rack-aware replica ranges and byte targets per eligible broker (kafka_rebalance.balance), or
    None when no plan could be rack-safe (the planner refuses such input)."""
    eligible = plan_eligible(snap, plan)
    if not eligible:
        return None
    rack_of = snap.rack_of
    stuck = _stuck(snap, plan)
    wanted_rf = plan.options.get("replication_factor")
    by_rf: dict[int, tuple[int, int]] = {}
    fixed: dict[int, tuple[int, int]] = {}
    for p in snap.partitions:
        size = int(p.size_bytes or 0)
        if (p.topic, p.partition) in stuck:
            for b in p.replicas:
                if b in eligible:
                    n, total = fixed.get(b, (0, 0))
                    fixed[b] = (n + 1, total + size)
            continue
        rf = int(wanted_rf) if wanted_rf is not None else len(p.replicas)
        n, total = by_rf.get(rf, (0, 0))
        by_rf[rf] = (n + 1, total + size)
    try:
        t = placement_targets({b: rack_of.get(b) for b in sorted(eligible)}, by_rf, fixed, replica_tolerance(plan),
                              disk_weights(snap, plan, eligible))
    except ValueError:
        return None
    return t.replicas, t.byte_mean


def disk_limits(snap: RawSnapshot, plan: RawPlan, data: Counter[int]) -> dict[int, float]:
    """Per broker whose capacity the snapshot records, the bytes of partition data it may hold under the
    plan's max_disk_usage: the planner's rule (planner/state.disk_limits), recomputed from the files."""
    from kafka_rebalance.options import DEFAULT_MAX_DISK_USAGE

    usage = float(plan.options.get("max_disk_usage", DEFAULT_MAX_DISK_USAGE) or DEFAULT_MAX_DISK_USAGE)
    out: dict[int, float] = {}
    for b in snap.brokers:
        if b.capacity_bytes is None:
            continue
        other = max(0.0, float(b.capacity_bytes - b.usable_bytes) - float(data[b.id])) if b.usable_bytes is not None else 0.0
        out[b.id] = usage * b.capacity_bytes - other
    return out


def placement_counts(snap: RawSnapshot, plan: RawPlan, after: dict[tuple[str, int], PartitionState]) -> tuple[int, int]:
    """(partitions off their target replication factor, partitions breaking rack safety) after the plan, over
    the partitions a plan may move, as the planner counts them for its own view (planner/judge.py): the
    placement and rack-safety goals' figures. The target RF is the plan's ``replication_factor``, else each
    partition's RF before the plan; the rack rule is ``balance.rack_unsafe``."""
    stuck = _stuck(snap, plan)
    wanted: Any = plan.options.get("replication_factor")
    before_rf = {(p.topic, p.partition): len(p.replicas) for p in snap.partitions}
    rack_of = snap.rack_of
    names = sorted({r for r in rack_of.values() if r is not None})
    code = {name: i for i, name in enumerate(names)}
    n_racks = len({rack_of.get(b) for b in plan_eligible(snap, plan) if rack_of.get(b) is not None}) if names else 0
    rf_off = unsafe = 0
    for key, state in after.items():
        if key in stuck:
            continue
        target = int(wanted) if wanted is not None else before_rf.get(key, len(state.replicas))
        rf_off += len(state.replicas) != target
        racks = [code[r] if (r := rack_of.get(b)) is not None else -1 for b in state.replicas]
        unsafe += rack_unsafe(racks, n_racks)
    return rf_off, unsafe


def topic_loads(snap: RawSnapshot, plan: RawPlan, state: dict[tuple[str, int], PartitionState]) -> tuple[TopicLoad, ...]:
    """Every topic's loads over the plan's eligible brokers in ``state``, as the planner's view carries them
    (planner/goals/topic_spread.topic_loads): the topic-spread goal's input. Partitions no plan may move are
    fixed load where they sit; the others count at the plan's replication factor, else their own."""
    eligible = plan_eligible(snap, plan)
    stuck = _stuck(snap, plan)
    wanted: Any = plan.options.get("replication_factor")
    per: dict[str, dict[str, Counter[int]]] = {}
    for p in snap.partitions:
        key = (p.topic, p.partition)
        c = per.setdefault(p.topic, {k: Counter() for k in ("rf", "fixed", "replicas", "preferred")})
        if key in stuck:
            c["fixed"].update(b for b in p.replicas if b in eligible)
        else:
            c["rf"][int(wanted) if wanted is not None else len(p.replicas)] += 1
        now = state.get(key)
        row = now.replicas if now is not None else ()
        c["replicas"].update(b for b in row if b in eligible)
        if row and row[0] in eligible:
            c["preferred"][row[0]] += 1
    kinds = ("rf", "fixed", "replicas", "preferred")
    return tuple(TopicLoad(t, *(tuple(sorted((k, v) for k, v in c[kind].items() if v)) for kind in kinds))
                 for t, c in sorted(per.items()))


def view_racks(snap: RawSnapshot, plan: RawPlan) -> tuple[tuple[int, str | None], ...]:
    """Each eligible broker's rack as the planner reads it: None for all when no broker has one."""
    racked = any(r is not None for r in snap.rack_of.values())
    return tuple((b, snap.rack_of.get(b) if racked else None) for b in sorted(plan_eligible(snap, plan)))


def network_fields(snap: RawSnapshot, eligible: list[int],
                   state: dict[tuple[str, int], PartitionState]) -> dict[int, dict[str, float | None]]:  # fmt: skip
    """Each eligible broker's network figures in ``state`` (planner/goals/network.py's loads and shares; leaders
    as projected), by broker id."""
    import numpy as np

    from kafka_rebalance.planner.goals.network import traffic, view_fields

    ids = sorted(snap.broker_ids | {b for s in state.values() for b in s.replicas} | {s.leader for s in state.values()
                                                                                         if s.leader >= 0})  # fmt: skip
    index = {b: i for i, b in enumerate(ids)}
    keys = [(p.topic, p.partition) for p in snap.partitions]
    width = max((len(s.replicas) for s in state.values()), default=1) or 1
    rows = np.full((len(keys), width), -1, dtype=np.int64)
    leader = np.full(len(keys), -1, dtype=np.int64)
    for i, key in enumerate(keys):
        s = state[key]
        rows[i, : len(s.replicas)] = [index[b] for b in s.replicas]
        leader[i] = index[s.leader] if s.leader >= 0 else -1
    rate_in = np.asarray([p.bytes_in_per_sec or 0.0 for p in snap.partitions], dtype=np.float64)
    rate_out = np.asarray([p.bytes_out_per_sec or 0.0 for p in snap.partitions], dtype=np.float64)
    net_in, net_out = traffic(rows, leader, rate_in, rate_out, len(ids))
    caps = {b.id: b.capacity for b in snap.brokers}

    def cap(b: int, key: str) -> float | None:
        c = caps.get(b)
        v = None if c is None else getattr(c, key)
        return None if v is None else float(v)

    out = view_fields([float(net_in[index[b]]) for b in eligible], [float(net_out[index[b]]) for b in eligible],
                      [cap(b, "network_in_bytes_per_sec") for b in eligible],
                      [cap(b, "network_out_bytes_per_sec") for b in eligible])
    return dict(zip(eligible, out))


def balance_table(snap: RawSnapshot, plan: RawPlan) -> Table:
    """One row per eligible broker after the plan.

    Replica counts must lie within the rack-aware targets of ``kafka_rebalance.balance``
    (plain [floor, ceil] of the ideal unless rack safety forces rack totals apart), and
    bytes are measured against the same per-broker byte targets. Replicas of partitions
    no plan can move (excluded topics, no leader) that sit on dead or decommissioned
    brokers are load no eligible broker can take, so they count in no total.

    Kafka's leader imbalance ratio is measured over the partitions the plan may touch: an
    excluded topic's leadership is the operator's to keep, and no election of the plan changes it.
    One more row per dead or decommissioned broker counts the replicas any plan could have
    moved off it that are still there after the plan: it must be none.
    """
    snap = planned_snapshot(snap, plan)
    eligible = sorted(plan_eligible(snap, plan))
    sizes = {(p.topic, p.partition): float(p.size_bytes or 0) for p in snap.partitions}
    before_state = {(p.topic, p.partition): PartitionState(p.replicas, p.leader, p.isr) for p in snap.partitions}
    after_state = project(snap, plan)
    before, after = _per_broker(before_state, sizes), _per_broker(after_state, sizes)
    stuck = _stuck(snap, plan)
    elig_set = set(eligible)
    stuck_away = _per_broker({k: s for k, s in after_state.items() if k in stuck}, sizes)
    excluded = set(plan.options.get("exclude_topics") or [])
    led = _per_broker({k: s for k, s in after_state.items() if k[0] not in excluded}, sizes)
    movable_after = _per_broker({k: s for k, s in after_state.items() if k not in stuck}, sizes)["replicas"]
    n = len(eligible)
    tolerance = float(plan.options.get("byte_tolerance", 0.1) or 0.0)
    below = plan.options.get("byte_tolerance_below")  # absent: the same tolerance on both sides

    def movable_total(kind: str) -> int:
        return sum(after[kind].values()) - sum(v for b, v in stuck_away[kind].items() if b not in elig_set)

    rep_total = movable_total("replicas")
    pref_total = movable_total("preferred")
    rep_lo, rep_hi = count_bounds(rep_total, n, replica_tolerance(plan))
    pref_lo, pref_hi = preferred_band(pref_total, n, replica_tolerance(plan))
    aimed = targets(snap, plan)
    weights = disk_weights(snap, plan, elig_set)
    if aimed is not None and sum(lo for lo, _ in aimed[0].values()) <= rep_total <= sum(hi for _, hi in aimed[0].values()):
        ranges, byte_target = aimed
    else:  # RF or totals differ from what the options ask: plain bounds around the (weighted) mean
        ranges = {b: (rep_lo, rep_hi) for b in eligible}
        byte_target = byte_centres(float(sum(after["bytes"][b] for b in eligible)), eligible, weights)
    t = Table("projected_balance", declared=("movable_replicas_after", "disk_over_limit_bytes", "rf_off_target_after",
                                             "rack_violations_after", "topic_spread_before", "topic_spread_after",
                                             "network_in_allowed", "network_in_after", "network_out_allowed",
                                             "network_out_after"))
    t.parameters = {
        "threshold_ratio": threshold(snap, plan) / 100,
        "replica_floor": min((lo for lo, _ in ranges.values()), default=rep_lo),
        "replica_ceil": max((hi for _, hi in ranges.values()), default=rep_hi),
        "preferred_floor": pref_lo, "preferred_ceil": pref_hi,
    }
    # The before state is measured against the same shape of targets, scaled to the bytes
    # the eligible brokers held then (dead brokers' data not yet re-created).
    aimed_total = sum(byte_target.values())
    scale = sum(before["bytes"][b] for b in eligible) / aimed_total if aimed_total else 0.0
    centre = byte_centres(aimed_total, eligible, weights)
    bands = {b: byte_band(byte_target[b], centre[b], tolerance, None if below is None else float(below)) for b in eligible}

    limits = disk_limits(snap, plan, before["bytes"])
    rf_off_target, rack_violations = placement_counts(snap, plan, after_state)

    goals = [goal_class(n)() for n in selected(plan.options.get("goals") or (), bool(plan.options.get("relieve")))]
    topical = any(g.view_topics for g in goals)
    networked = any(isinstance(g, NetworkGoal) for g in goals)
    net_before = network_fields(snap, eligible, before_state) if networked else {}
    net_after = network_fields(snap, eligible, after_state) if networked else {}
    network_tolerance = float(plan.options.get("network_tolerance", 0.1) or 0.0)
    racks = view_racks(snap, plan) if topical else ()

    def view(loads: dict[str, Counter[int]], target_scale: float, placed: tuple[int, int] = (0, 0),
             topics: tuple[TopicLoad, ...] = (), net: dict[int, dict[str, float | None]] | None = None) -> BalanceView:  # fmt: skip
        net = net or {}
        return BalanceView(
            brokers=tuple(BrokerView(b, loads["replicas"][b], ranges[b][0], ranges[b][1], float(loads["bytes"][b]),
                                     byte_target[b] * target_scale, tolerance, loads["preferred"][b],
                                     led["preferred"][b], led["preferred_not_led"][b], disk_limit=limits.get(b),
                                     byte_lo=float(bands[b][0]) * target_scale, byte_hi=float(bands[b][1]) * target_scale,
                                     byte_mean=centre[b] * target_scale, **net.get(b, {}))  # type: ignore[arg-type]
                          for b in eligible),
            leaving=tuple(BrokerView(b, 0, 0, 0, 0.0, 0.0, tolerance, 0, 0, 0, movable_after[b])
                          for b in sorted(snap.broker_ids - elig_set)),
            byte_tolerance=tolerance, threshold_percentage=threshold(snap, plan), preferred_bounds=(pref_lo, pref_hi),
            rf_off_target=placed[0], rack_violations=placed[1], topics=topics, racks=racks,
            network_tolerance=network_tolerance)

    # Each column is its goal's own figure (planner/goals); a goal the plan left out has none, and
    # its expectation passes on empty values.
    after_topics = topic_loads(snap, plan, after_state) if topical else ()
    after_checks = {c.name: c for c in judge(goals, view(after, 1.0, (rf_off_target, rack_violations), after_topics,
                                                         net_after))}
    # A broker's traffic may end no further from its share than before, beyond the tolerance (the bytes rule).
    net_allowed = {g.name: {b: g.gate_allowance(d, network_tolerance) + 1e-9
                            for b, d in g.check(view(before, scale, net=net_before)).per_broker.items()}
                   for g in goals if isinstance(g, NetworkGoal)}
    before_bytes = ByteBalanceGoal().check(view(before, scale)).per_broker
    # A broker may end no further outside its topics' bands than it started (the bytes goal's rule, for spread).
    spread_before = (TopicSpreadGoal().check(view(before, scale, topics=topic_loads(snap, plan, before_state))).per_broker
                     if TopicSpreadGoal.name in after_checks else {})  # fmt: skip

    def figure(goal: str, b: int) -> float | None:
        check = after_checks.get(goal)
        return None if check is None else check.per_broker.get(b)

    for b in eligible:
        lo, hi = ranges[b]
        dev_before = before_bytes[b]
        off = figure(ReplicaCountGoal.name, b)
        byte_dev = figure(ByteBalanceGoal.name, b)
        t.add(
            "broker", f"broker {b}", broker_id=b, replicas_after=after["replicas"][b], replica_lo=lo, replica_hi=hi,
            replicas_off_target=None if off is None else int(off), byte_target=byte_target[b],
            preferred_after=after["preferred"][b] if PreferredLeaderGoal.name in after_checks else None,
            leaders_after=after["leaders"][b], replica_count_before=before["replicas"][b],
            preferred_before=before["preferred"][b],
            imbalance_ratio_after=figure(LeaderImbalanceGoal.name, b),
            size_before=before["bytes"][b], size_after=after["bytes"][b], byte_deviation_before=dev_before,
            byte_deviation_after=byte_dev,
            # 1e-9: the same bytes must compare equal whatever the float rounding
            byte_deviation_allowed=None if byte_dev is None else ByteBalanceGoal.gate_allowance(dev_before, tolerance) + 1e-9,
            disk_limit=limits.get(b), disk_over_limit_bytes=figure(DiskCapacityGoal.name, b),
            topic_spread_before=spread_before.get(b), topic_spread_after=figure(TopicSpreadGoal.name, b),
            network_in_allowed=net_allowed.get(NetworkInGoal.name, {}).get(b), network_in_after=figure(NetworkInGoal.name, b),
            network_out_allowed=net_allowed.get(NetworkOutGoal.name, {}).get(b),
            network_out_after=figure(NetworkOutGoal.name, b),
        )
    placement = after_checks[PlacementGoal.name].per_broker
    for b in sorted(snap.broker_ids - elig_set):
        t.add("leaving_broker", f"broker {b}", broker_id=b, movable_replicas_after=int(placement.get(b, 0)))
    # The cluster-wide figures of the two hard goals: what the placement goal counts beyond the leaving
    # brokers (partitions off their target RF), and the rack-safety goal's own figure.
    rack = after_checks.get(RackSafetyGoal.name)
    t.add("cluster", "cluster", rf_off_target_after=rf_off_target if PlacementGoal.name in after_checks else None,
          rack_violations_after=None if rack is None else int(rack.value))
    return t
