"""The planner's state as the goals see it (a ``BalanceView``), and the goals' verdicts on it.

The planner judges the snapshot (before) and its plan (after); the DAG's "needs a plan?"
judges the snapshot alone (``snapshot_checks``). Both go through the goals' own ``check``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from kafka_rebalance.options import PlanOptions
from kafka_rebalance.planner.goals.base import Goal
from kafka_rebalance.planner.goals.network import NetworkGoal, network_capacities, state_traffic, view_fields
from kafka_rebalance.planner.goals.placement import RackSafetyGoal
from kafka_rebalance.planner.goals.registry import goal_class, selected
from kafka_rebalance.planner.goals.topic_spread import topic_loads, view_racks
from kafka_rebalance.planner.goals.view import BalanceView, BrokerView, GoalCheck
from kafka_rebalance.planner.state import ClusterState
from kafka_rebalance.planner.targets import set_targets
from kafka_rebalance.snapshot import Snapshot


def state_view(state: ClusterState, preferred: np.ndarray | None = None, leader: np.ndarray | None = None,
               preferred_bounds: tuple[int, int] = (0, 0), byte_slack: float = 0.0) -> BalanceView:  # fmt: skip
    """The view of ``state`` as it stands (its moves applied). ``preferred``: each partition's
    first replica (broker index; default the current rows' first); ``leader``: each partition's
    leader (default the snapshot's)."""
    F = state.final_rows()
    valid = F >= 0
    movable = ~state.frozen
    first = F[:, 0].astype(np.int64) if state.n_parts else np.zeros(0, dtype=np.int64)
    pref = first if preferred is None else preferred
    lead = state.leader if leader is None else leader
    touchable = ~state.excluded
    n = state.n_brokers
    pref_count = np.bincount(pref[pref >= 0], minlength=n)
    led_pref = np.bincount(pref[touchable & (pref >= 0)], minlength=n)
    not_led = np.bincount(pref[touchable & (pref >= 0) & (lead != pref)], minlength=n)
    movable_on = np.bincount(F[valid & movable[:, None]], minlength=n)
    rf_now = valid.sum(axis=1)
    tol = state.options.byte_tolerance
    threshold = float(state.options.threshold_percentage or 0.0)

    # Traffic only when a selected goal reads it: at a million partitions the rates cost a fraction of a second.
    net: dict[int, dict[str, float | None]] = {}
    if any(issubclass(goal_class(g), NetworkGoal) for g in selected(state.options.goals, state.options.relieve)):
        net_in, net_out = state_traffic(state, F, lead)
        cap_in, cap_out = network_capacities(state)
        elig = state.eligible_idx
        net = dict(zip(elig, view_fields([net_in[b] for b in elig], [net_out[b] for b in elig],
                                         [cap_in[b] for b in elig], [cap_out[b] for b in elig])))  # fmt: skip

    def broker(b: int) -> BrokerView:
        target = float(state.byte_target[b])
        allowed = (float(state.byte_allowed_hi[b]) - target) / target if target else tol
        limit = float(state.disk_limit[b])
        return BrokerView(state.bid(b), int(state.counts[b]), int(state.lo[b]), int(state.hi[b]), float(state.bytes[b]),
                          target, allowed, int(pref_count[b]), int(led_pref[b]), int(not_led[b]), int(movable_on[b]),
                          limit if math.isfinite(limit) else None, float(state.byte_lo[b]), float(state.byte_hi[b]),
                          float(state.byte_centre[b]), **net.get(b, {}))  # type: ignore[arg-type]

    violations = RackSafetyGoal().violations(state)
    # Per-topic loads only when a selected goal reads them: at a million partitions they cost a second.
    topical = any(goal_class(g).view_topics for g in selected(state.options.goals, state.options.relieve))
    return BalanceView(
        brokers=tuple(broker(b) for b in state.eligible_idx),
        leaving=tuple(broker(b) for b in range(n) if not state.eligible[b]),
        byte_tolerance=tol,
        threshold_percentage=threshold,
        preferred_bounds=preferred_bounds,
        rf_off_target=int((movable & (rf_now != state.rf_target)).sum()),
        rack_violations=int(movable[violations].sum()),
        byte_slack=byte_slack,
        network_tolerance=state.options.network_tolerance,
        topics=topic_loads(state, F, pref) if topical else (),
        racks=view_racks(state) if topical else (),
    )


def judge(goals: Sequence[Goal], view: BalanceView) -> list[GoalCheck]:
    return [g.check(view) for g in goals]


def snapshot_checks(snapshot: Snapshot, options: PlanOptions) -> list[GoalCheck]:
    """The selected goals' verdicts on the snapshot as it is: "does this cluster need a plan?".

    Preferred-leader bounds are those of the snapshot's first replicas over the eligible brokers,
    as the planner aims at them.
    """
    from kafka_rebalance.metrics import threshold_percentage
    from kafka_rebalance.planner.goals.preferred_leader import preferred_bounds

    if options.threshold_percentage is None:
        value, source = threshold_percentage(snapshot)
        options = replace(options, threshold_percentage=value, threshold_source=source)
    state = ClusterState(options.planned_snapshot(snapshot), options)
    set_targets(state)
    first = state.R[:, 0].astype(np.int64) if state.n_parts else np.zeros(0, dtype=np.int64)
    goals = [goal_class(name)() for name in selected(options.goals, options.relieve)]
    return judge(goals, state_view(state, first, preferred_bounds=preferred_bounds(state, first)))
