"""Per-broker targets: replica-count ranges and byte targets, rack-aware.

The definition lives in ``kafka_rebalance.balance.placement_targets`` so that the
quality gate checks the very targets the planner aims at: [floor, ceil] of one
common level for every eligible broker, unless rack safety forces rack totals
apart (e.g. RF 3 over 3 racks of 4, 4 and 3 brokers); then each such rack's total
is clamped to what rack safety allows and its brokers share it evenly. The plan
says so in ``summary.targets.clamped_racks``.
"""

from __future__ import annotations

import numpy as np

from kafka_rebalance.balance import capacity_weights, configured_disk, placement_targets
from kafka_rebalance.errors import PlanError
from kafka_rebalance.planner.goals.byte_balance import ByteBalanceGoal
from kafka_rebalance.planner.state import ClusterState


def set_targets(state: ClusterState) -> None:
    elig = state.eligible_idx
    movable = ~state.frozen
    rf_t = state.rf_target[movable]
    sizes = state.sizes[movable]
    by_rf = {}
    for r in np.unique(rf_t).tolist():
        sel = rf_t == r
        by_rf[int(r)] = (int(sel.sum()), int(sizes[sel].sum()))
    fixed_rows = state.R[state.frozen]
    on = fixed_rows >= 0
    owners = fixed_rows[on]
    fixed_sizes = np.broadcast_to(state.sizes[state.frozen][:, None], fixed_rows.shape)[on]
    fixed_counts = np.bincount(owners, minlength=state.n_brokers)
    fixed_bytes = np.bincount(owners, weights=fixed_sizes, minlength=state.n_brokers)
    fixed = {state.bid(b): (int(fixed_counts[b]), int(fixed_bytes[b])) for b in elig if fixed_counts[b]}
    racks = {state.bid(b): state.snapshot.brokers[b].rack if state.has_racks else None for b in elig}
    try:
        t = placement_targets(racks, by_rf, fixed, state.options.replica_tolerance, disk_weights(state))
    except ValueError as exc:
        raise PlanError(str(exc)) from None
    state.byte_target = np.zeros(state.n_brokers, dtype=np.float64)
    for b in elig:
        bid = state.bid(b)
        state.lo[b], state.hi[b] = t.replicas[bid]
        state.byte_target[b] = t.byte_mean[bid]
    state.byte_mean = float(state.byte_target[elig].mean())
    state.clamped_racks = list(t.clamped_racks)
    # What the quality gate allows each broker: no further from its target than before, beyond
    # the tolerance (the before state measured against the same targets scaled to its total).
    aimed = float(state.byte_target[elig].sum())
    scale = float(state.bytes[elig].sum()) / aimed if aimed else 0.0
    tol = state.options.byte_tolerance
    with np.errstate(divide="ignore", invalid="ignore"):
        dev0 = np.where(state.byte_target > 0, np.abs(state.bytes - state.byte_target * scale) / np.maximum(state.byte_target * scale, 1e-9), 0.0)
    band = ByteBalanceGoal.gate_allowance(dev0, tol)
    state.byte_allowed_hi = state.byte_target * (1 + band)
    state.byte_allowed_lo = state.byte_target * (1 - band)


def disk_weights(state: ClusterState) -> dict[int, int] | None:
    """Per eligible broker id, the weight of its replica and byte shares: its configured disk capacity where the
    brokers' capacities differ (``balance.capacity_weights``), else None (even shares)."""
    return capacity_weights({state.bid(b): configured_disk(state.snapshot.brokers[b]) for b in state.eligible_idx})
