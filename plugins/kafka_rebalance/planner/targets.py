"""Per-broker targets: replica-count ranges and byte targets, rack-aware.

The definition lives in ``kafka_rebalance.balance.placement_targets`` so that the
quality gate checks the very targets the planner aims at: [floor, ceil] of one
common level for every eligible broker, unless rack safety forces rack totals
apart (e.g. RF 3 over 3 racks of 4, 4 and 3 brokers); then each such rack's total
is clamped to what rack safety allows and its brokers share it evenly. The plan
says so in ``summary.targets.clamped_racks``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kafka_rebalance.balance import band_deviation, byte_band, capacity_weights, configured_disk, placement_targets
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
    state.byte_centre = np.zeros(state.n_brokers, dtype=np.float64)
    for b in elig:
        bid = state.bid(b)
        state.lo[b], state.hi[b] = t.replicas[bid]
        state.byte_target[b] = t.byte_mean[bid]
        state.byte_centre[b] = t.byte_centre[bid]
    state.byte_mean = float(state.byte_target[elig].mean()) if len(elig) else 0.0
    state.clamped_racks = list(t.clamped_racks)
    tol = state.options.byte_tolerance
    band = byte_band(state.byte_target, state.byte_centre, tol, state.options.byte_tolerance_low)
    state.byte_lo, state.byte_hi = (np.asarray(x, dtype=np.float64) for x in band)
    # What the quality gate allows each broker: no further outside its band than before, beyond the
    # tolerance (the before state measured against the same bands scaled to its total).
    aimed = float(state.byte_target[elig].sum())
    scale = float(state.bytes[elig].sum()) / aimed if aimed else 0.0
    dev0 = band_deviation(state.bytes.astype(np.float64), state.byte_centre * scale, state.byte_lo * scale,
                          state.byte_hi * scale, tol)
    extra = (ByteBalanceGoal.gate_allowance(dev0, tol) - tol) * state.byte_centre
    state.byte_allowed_hi = state.byte_hi + extra
    state.byte_allowed_lo = state.byte_lo - extra


def forced_shares(state: ClusterState) -> list[dict[str, Any]]:
    """``summary.targets.forced_shares``: the brokers whose byte band is their forced share rather than the
    mean's (rack safety clamps their rack's total, or they hold more than the mean that no plan may move),
    grouped by rack and share; ``bound``: the share is a floor (above the mean) or a ceiling (below it).
    The mean is each broker's own (``byte_centre``: its capacity-weighted share where disks differ)."""
    tol = state.options.byte_tolerance
    groups: dict[tuple[str | None, float, float, str], list[int]] = {}
    for b in state.eligible_idx:
        mean = float(state.byte_centre[b])
        if state.byte_hi[b] > mean * (1 + tol):
            side = "floor"
        elif state.byte_lo[b] < mean * (1 - state.options.byte_tolerance_low):
            side = "ceiling"
        else:
            continue
        rack = state.rack_names[int(state.rack[b])] if state.has_racks and state.rack[b] >= 0 else None
        share = float(state.byte_target[b])
        groups.setdefault((rack, round(share, 1), round(share / mean, 4) if mean else 0.0, side), []).append(state.bid(b))
    return [{"rack": rack, "brokers": ids, "share": share, "share_over_mean": ratio if ratio else None, "bound": side}
            for (rack, share, ratio, side), ids in sorted(groups.items(), key=lambda kv: (kv[1][0], kv[0][3]))]


def disk_weights(state: ClusterState) -> dict[int, int] | None:
    """Per eligible broker id, the weight of its replica and byte shares: its configured disk capacity where the
    brokers' capacities differ (``balance.capacity_weights``), else None (even shares)."""
    return capacity_weights({state.bid(b): configured_disk(state.snapshot.brokers[b]) for b in state.eligible_idx})
