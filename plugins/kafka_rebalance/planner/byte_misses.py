"""Which eligible brokers a plan leaves outside their byte band, and why (``summary.targets.byte_misses``).

A reason is only given when the state proves it holds for EVERY plan, not just this one:

* unmovable load: the broker's replicas of partitions the plan may not move (excluded
  topics, leaderless partitions, partitions producing at or above the throttle) already
  exceed the band's top;
* a partition too big for the band: the broker holds a movable partition larger than what
  any broker that may hold it can take and stay in its band (the band's top less that
  broker's unmovable load). Where rack safety pins its replicas to racks (its RF a multiple
  of the rack count, so each rack keeps exactly RF / racks replicas of it), only the
  brokers of its rack count; otherwise every eligible broker;
* too little that fits: below the band, even every partition the broker could hold
  without going over its band's top (one replica of each) adds up to less than the band's
  bottom, together with its unmovable load.

Anything else is "not reached by the heuristic" (or "by the exact model within its work
limit", when its plan is used): a shortfall of the planner, to be reported. Where another
broker's miss is proven (so no plan reaches every band), that reason follows in brackets: the
planner chose where the unavoidable imbalance lands.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from kafka_rebalance.planner.state import ClusterState
from kafka_rebalance.units import human_bytes

SLACK = 1e-6  # the same float slack ``summary.targets.bytes_reached`` allows
HEURISTIC = "not reached by the heuristic"


def _size(n: float) -> str:
    """Exact bytes below a MiB (where one decimal of KiB would blur the comparison), else binary units."""
    return f"{int(n):,} bytes" if abs(n) < 1024 * 1024 else human_bytes(n)


def byte_band(state: ClusterState, b: int) -> tuple[int, int]:
    """Broker index ``b``'s byte band in whole bytes, as ``bytes_reached`` checks it."""
    t = float(state.byte_target[b])
    tol = state.options.byte_tolerance
    return math.ceil(t - tol * t - SLACK), math.floor(t + tol * t + SLACK)


def byte_misses(state: ClusterState, by_exact: bool = False) -> list[dict[str, Any]]:
    """One entry per eligible broker outside its band, by broker id. ``by_exact``: the exact model's
    plan is the one judged (an unproven miss is then its shortfall, not the heuristic's)."""
    tol = state.options.byte_tolerance
    outside = [
        b for b in state.eligible_idx
        if abs(float(state.bytes[b]) - float(state.byte_target[b])) > tol * float(state.byte_target[b]) + SLACK
    ]
    if not outside:
        return []
    F = state.final_rows()
    stay = state.frozen | state.hot
    on = F >= 0
    owners = F[on]
    sizes_rep = np.broadcast_to(state.sizes[:, None], F.shape)[on]
    stay_rep = np.broadcast_to(stay[:, None], F.shape)[on]
    unmovable = np.bincount(owners[stay_rep], weights=sizes_rep[stay_rep], minlength=state.n_brokers)
    bands = {b: byte_band(state, b) for b in state.eligible_idx}
    room = np.full(state.n_brokers, -np.inf)  # most one more partition may add to a broker in its band
    for b in state.eligible_idx:
        room[b] = bands[b][1] - unmovable[b]
    elig = np.asarray(state.eligible_idx, dtype=np.int64)
    rack = np.asarray(state.rack, dtype=np.int64)
    movable = ~stay
    # Replicas that cannot change racks: RF a multiple of the rack count keeps exactly RF / racks in each.
    pinned = (state.rf_target % max(state.n_racks, 1) == 0) & bool(state.has_racks and (rack[elig] >= 0).all())
    movable_sizes = np.sort(state.sizes[movable].astype(np.float64))
    prefix = np.concatenate(([0.0], np.cumsum(movable_sizes)))
    reasons = {}
    for b in outside:
        low, high = bands[b]
        if int(state.bytes[b]) > high:
            reasons[b] = _above(state, b, F, stay, unmovable, room, high, pinned, rack, elig)
        else:
            reasons[b] = _below(state, b, unmovable, room, low, movable_sizes, prefix)
    # A broker whose own miss is not proven, in a cluster where some other broker's is: the
    # heuristic chose where the imbalance no plan can avoid lands, so say both.
    proven = [b for b in outside if reasons[b] != HEURISTIC]
    shortfall = "not reached by the exact model within its work limit" if by_exact else HEURISTIC
    out = []
    for b in outside:
        reason = reasons[b]
        if reason == HEURISTIC:
            reason = shortfall
            if proven:
                reason = (f"{shortfall}, in a cluster where no plan reaches every band (broker {state.bid(proven[0])}: "
                          f"{reasons[proven[0]]})")
        low, high = bands[b]
        out.append({"broker_id": state.bid(b), "bytes": int(state.bytes[b]), "low": low, "high": high, "reason": reason})
    return out


def _unmovable_text(state: ClusterState, parts: np.ndarray) -> str:
    excluded = sorted({state.parts[p].topic for p in parts.tolist() if state.excluded[p]})
    leaderless = int(((state.leader[parts] < 0) & ~state.excluded[parts]).sum())
    hot = int((state.hot[parts] & ~state.frozen[parts]).sum())
    what = []
    if excluded:
        shown = ", ".join(excluded[:3]) + (f" and {len(excluded) - 3} more" if len(excluded) > 3 else "")
        what.append(f"excluded topics {shown}")
    if leaderless:
        what.append(f"{leaderless} leaderless partition{'s' if leaderless != 1 else ''}")
    if hot:
        what.append(f"{hot} partition{'s' if hot != 1 else ''} producing at or above the throttle")
    return "; ".join(what)


def _above(state: ClusterState, b: int, F: np.ndarray, stay: np.ndarray, unmovable: np.ndarray, room: np.ndarray,
           high: int, pinned: np.ndarray, rack: np.ndarray, elig: np.ndarray) -> str:  # fmt: skip
    held = np.flatnonzero((F == b).any(axis=1))
    if unmovable[b] > high:
        return (
            f"holds {_size(unmovable[b])} the plan may not move ({_unmovable_text(state, held[stay[held]])}), "
            f"above its band's top {_size(high)}"
        )
    mine = held[~stay[held]]
    if len(mine):
        p = int(mine[np.lexsort((mine, -state.sizes[mine]))][0])  # the largest, ties by partition
        size = int(state.sizes[p])
        if pinned[p]:
            hosts = elig[rack[elig] == rack[b]]
            fits = float(room[hosts].max())
            if size > fits:
                name = state.rack_names[int(rack[b])]
                per = int(state.rf_target[p]) // max(state.n_racks, 1)
                return (
                    f"holds {state.name(p)} ({_size(size)}), more than any broker of rack {name} can take and "
                    f"stay in its band (at most {_size(max(fits, 0.0))}); rack safety keeps {per} replica"
                    f"{'s' if per != 1 else ''} of it in each of the {state.n_racks} racks, so it cannot leave {name}"
                )
        else:
            fits = float(room[elig].max())
            if size > fits:
                return (
                    f"holds {state.name(p)} ({_size(size)}), more than any eligible broker can take and stay "
                    f"in its band (at most {_size(max(fits, 0.0))})"
                )
    return HEURISTIC


def _below(state: ClusterState, b: int, unmovable: np.ndarray, room: np.ndarray, low: int, movable_sizes: np.ndarray,
           prefix: np.ndarray) -> str:  # fmt: skip
    fit = int(np.searchsorted(movable_sizes, room[b], side="right")) if room[b] >= 0 else 0
    most = float(unmovable[b]) + float(prefix[fit])
    if most < low:
        bigger = len(movable_sizes) - fit
        rest = ""
        if bigger:
            rest = "; the other partition would take it over its band's top" if bigger == 1 else (
                f"; each of the other {bigger} partitions would take it over its band's top")
        return (
            f"every partition it could hold without going over its band's top adds up to {_size(most)} "
            f"with its unmovable load, below its band's bottom {_size(low)}{rest}"
        )
    return HEURISTIC
