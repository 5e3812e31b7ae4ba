"""Per-broker targets: replica-count ranges (rack-aware) and the byte mean.

Without racks, or when racks leave room, every eligible broker's target is
[floor, ceil] of total / eligible brokers (kafka_rebalance.balance). When racks
force uneven totals (e.g. RF 3 over 3 racks of 67, 67 and 66 brokers: each rack
holds exactly one replica of every partition), each rack's total is clamped to
what rack safety allows and its brokers share that total evenly: the tightest
balance that never needs a rack violation.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from kafka_rebalance.planner.errors import PlanError
from kafka_rebalance.planner.state import ClusterState


def _floor_ceil(x: Fraction) -> tuple[int, int]:
    return x.numerator // x.denominator, -(-x.numerator // x.denominator)


def set_targets(state: ClusterState) -> None:
    elig = np.asarray(state.eligible_idx)
    n = len(elig)
    movable = ~state.frozen
    rf_t = state.rf_target[movable]
    fixed_rows = state.R[state.frozen]
    fixed_on = fixed_rows[fixed_rows >= 0]
    fixed_on = fixed_on[state.eligible_arr[fixed_on]]
    total = int(rf_t.sum()) + len(fixed_on)

    if not state.has_racks:
        too_big = rf_t > n
        if too_big.any():
            r = int(rf_t[too_big].max())
            raise PlanError(f"replication factor {r} needs {r} eligible brokers, only {n} are live and not decommissioned")
        lo, hi = _floor_ceil(Fraction(total, n))
        state.lo[elig], state.hi[elig] = lo, hi
    else:
        _rack_targets(state, elig, rf_t, fixed_on, total)

    sizes = state.sizes[movable]
    byte_total = int((sizes * rf_t).sum()) + int(
        np.broadcast_to(state.sizes[state.frozen][:, None], fixed_rows.shape)[
            (fixed_rows >= 0) & state.eligible_arr[np.maximum(fixed_rows, 0)]
        ].sum()
    )
    state.byte_mean = byte_total / n


def _rack_targets(state: ClusterState, elig: np.ndarray, rf_t: np.ndarray, fixed_on: np.ndarray, total: int) -> None:
    racks = sorted({state.rack[b] for b in elig})
    n_g = {g: sum(1 for b in elig if state.rack[b] == g) for g in racks}
    fixed_g = {g: 0 for g in racks}
    rack_arr = np.asarray(state.rack)
    for g, c in zip(*np.unique(rack_arr[fixed_on], return_counts=True)):
        fixed_g[int(g)] += int(c)
    lo_g = dict(fixed_g)
    hi_g = dict(fixed_g)
    for r, count in zip(*np.unique(rf_t, return_counts=True)):
        r, count = int(r), int(count)
        cap = state.rack_cap(r)
        caps = {g: min(cap, n_g[g]) for g in racks}
        room = sum(caps.values())
        if r > room:
            raise PlanError(
                f"replication factor {r} cannot be rack-safe: eligible brokers over {len(racks)} rack(s) "
                f"({', '.join(f'{state.rack_names[g]}: {n_g[g]}' for g in racks)}) allow at most {room} replicas "
                f"per partition with at most {cap} per rack"
            )
        for g in racks:
            lo_g[g] += count * max(0, r - (room - caps[g]))
            hi_g[g] += count * caps[g]

    def filled(x: float) -> float:
        return sum(min(max(x * n_g[g], lo_g[g]), hi_g[g]) for g in racks)

    a, b = 0.0, max(hi_g[g] / n_g[g] for g in racks) + 1.0
    for _ in range(200):
        mid = (a + b) / 2
        if filled(mid) < total:
            a = mid
        else:
            b = mid
    x = (a + b) / 2
    share: dict[int, Fraction] = {}
    free = []
    rest = total
    for g in racks:
        v = x * n_g[g]
        eps = 1e-9 * max(1.0, v)
        if v < lo_g[g] - eps:
            share[g] = Fraction(lo_g[g], n_g[g])
            rest -= lo_g[g]
        elif v > hi_g[g] + eps:
            share[g] = Fraction(hi_g[g], n_g[g])
            rest -= hi_g[g]
        else:
            free.append(g)
    if free:
        per = Fraction(rest, sum(n_g[g] for g in free))
        for g in free:
            share[g] = per
    for b in elig:
        lo, hi = _floor_ceil(share[state.rack[b]])
        state.lo[b], state.hi[b] = lo, hi
