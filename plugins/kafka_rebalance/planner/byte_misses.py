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
from dataclasses import dataclass
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
    return math.ceil(float(state.byte_lo[b]) - SLACK), math.floor(float(state.byte_hi[b]) + SLACK)


@dataclass(frozen=True)
class _Facts:
    """What every proof reads: the state's rows, what may not move, each band and the room above it."""

    F: np.ndarray
    stay: np.ndarray
    unmovable: np.ndarray
    bands: dict[int, tuple[int, int]]
    room: np.ndarray
    pinned: np.ndarray
    rack: np.ndarray
    elig: np.ndarray
    movable_sizes: np.ndarray
    prefix: np.ndarray

    @classmethod
    def of(cls, state: ClusterState) -> _Facts:
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
        # Replicas that cannot change racks: RF a multiple of the rack count keeps exactly RF / racks in each.
        pinned = (state.rf_target % max(state.n_racks, 1) == 0) & bool(state.has_racks and (rack[elig] >= 0).all())
        movable_sizes = np.sort(state.sizes[~stay].astype(np.float64))
        prefix = np.concatenate(([0.0], np.cumsum(movable_sizes)))
        return cls(F, stay, unmovable, bands, room, pinned, rack, elig, movable_sizes, prefix)


@dataclass(frozen=True)
class Unreachable:
    """One broker's band no plan reaches: why, on which side, and (below it) the most it can hold."""

    reason: str
    above: bool
    most: float = 0.0


def out_of_reach(state: ClusterState) -> dict[int, Unreachable]:
    """Eligible brokers (index) whose band no plan reaches while they hold what they hold now, each with
    its proof: more load that may not move than its band's top, a partition no broker that may hold it
    can take in band (whoever holds it is out), or too little that fits to reach its bottom. The bytes
    goal stops searching for these at once (every action on them would be spent in vain)."""
    return _out_of_reach(state, _Facts.of(state))


@dataclass(frozen=True)
class HostRoom:
    """The largest replica some broker that may take it can hold and stay in its band (``_above``'s test):
    ``anywhere`` for a partition free to change racks, ``in_rack[r]`` for one rack safety pins to rack r."""

    anywhere: float
    in_rack: dict[int, float]
    pinned: np.ndarray

    def fits(self, state: ClusterState, p: int, b: int) -> bool:
        """Could ``p``'s replica on broker ``b`` go to a broker whose band holds it (else it is a giant: whoever
        holds it ends above its band)?"""
        limit = self.in_rack.get(int(state.rack[b]), -math.inf) if self.pinned[p] else self.anywhere
        return float(state.sizes[p]) <= limit


def held_above(state: ClusterState) -> tuple[list[int], HostRoom]:
    """The eligible brokers (index order) no plan brings down into their band while they hold what they hold
    (``out_of_reach``, above), and where a replica still fits: what the count goal's giant-host rule reads."""
    facts = _Facts.of(state)
    above = [b for b, why in _out_of_reach(state, facts).items() if why.above]
    elig, rack = facts.elig, facts.rack
    in_rack = {int(r): float(facts.room[elig[rack[elig] == r]].max()) for r in np.unique(rack[elig]).tolist()}
    return sorted(above), HostRoom(float(facts.room[elig].max()) if len(elig) else -math.inf, in_rack, facts.pinned)


def _out_of_reach(state: ClusterState, facts: _Facts) -> dict[int, Unreachable]:
    # Only a broker whose largest movable replica exceeds some broker's room can hold a partition too big
    # for every host: the others skip ``_above``'s search of their rows (a million partitions, 400 brokers).
    movable = ~facts.stay[:, None] & (facts.F >= 0)
    largest = np.zeros(state.n_brokers)
    np.maximum.at(largest, facts.F[movable], np.broadcast_to(state.sizes[:, None], facts.F.shape)[movable])
    least_room = float(facts.room[facts.elig].min()) if len(facts.elig) else 0.0
    out = {}
    for b in state.eligible_idx:
        low, high = facts.bands[b]
        if facts.unmovable[b] > high or largest[b] > least_room:
            reason = _above(state, b, facts, high)
            if reason != HEURISTIC:
                out[b] = Unreachable(reason, True)
                continue
        reason = _below(state, b, facts, low)
        if reason != HEURISTIC:
            out[b] = Unreachable(reason, False, _most(facts, b))
    return out


def _most(facts: _Facts, b: int) -> float:
    """The most broker ``b`` can hold without going over its band's top: its unmovable load and one replica
    of every partition that fits under that top (``_below``'s bound)."""
    room = facts.room[b]
    fit = int(np.searchsorted(facts.movable_sizes, room, side="right")) if room >= 0 else 0
    return float(facts.unmovable[b]) + float(facts.prefix[fit])


def byte_misses(state: ClusterState, by_exact: bool = False) -> list[dict[str, Any]]:
    """One entry per eligible broker outside its band, by broker id. ``by_exact``: the exact model's
    plan is the one judged (an unproven miss is then its shortfall, not the heuristic's)."""
    outside = [
        b for b in state.eligible_idx
        if float(state.bytes[b]) > float(state.byte_hi[b]) + SLACK or float(state.bytes[b]) < float(state.byte_lo[b]) - SLACK
    ]
    if not outside:
        return []
    facts = _Facts.of(state)
    reasons = {}
    for b in outside:
        low, high = facts.bands[b]
        if int(state.bytes[b]) > high:
            reasons[b] = _above(state, b, facts, high)
        else:
            reasons[b] = _below(state, b, facts, low)
            if reasons[b] == HEURISTIC:
                reasons[b] = _group_short(state, b, facts)
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
        low, high = facts.bands[b]
        out.append({"broker_id": state.bid(b), "bytes": int(state.bytes[b]), "low": low, "high": high, "reason": reason})
    return out


GROUP_GIANTS = 8  # the largest replicas a group proof tries to set on brokers of their own


def _group_short(state: ClusterState, b: int, facts: _Facts) -> str:
    """Broker ``b`` is below its band: is that forced on its group (its rack, where rack safety pins the
    partitions to racks; the whole cluster without racks) by its largest replicas? The group holds at
    most T bytes. If the k largest replicas it must hold are each bigger than any band's top less the
    next one (no two fit one broker in band), k brokers hold them and the other n - k share at most T
    less their sizes; below the smallest n - k bottoms summed, some broker of the group misses, whichever
    holds what. Names those replicas' partitions: they make the group's bands unreachable."""
    elig, rack = facts.elig, facts.rack
    movable = ~facts.stay
    if state.has_racks:
        g = int(rack[b])
        members = elig[rack[elig] == g]
        keep = movable & facts.pinned
        per = state.rf_target // max(state.n_racks, 1)
        # at most what the rack may hold: its own unmovable load, its pinned replicas, and of every other
        # movable partition as many replicas as rack safety lets one rack hold
        free = movable & ~facts.pinned
        caps = np.minimum(-(-state.rf_target // max(state.n_racks, 1)), state.rf_target)
        total = float(facts.unmovable[members].sum() + (state.sizes[keep] * per[keep]).sum()
                      + (state.sizes[free] * caps[free]).sum())
        parts = np.flatnonzero(keep)
        copies = per[parts]
        where = f"rack {state.rack_names[g]}"
    else:
        members = elig
        parts = np.flatnonzero(movable)
        copies = state.rf_target[parts]
        total = float(facts.unmovable[members].sum() + (state.sizes[parts] * copies).sum())
        where = "the cluster"
    if not len(parts) or len(members) < 2:
        return HEURISTIC
    top = parts[np.lexsort((parts, -state.sizes[parts]))][:GROUP_GIANTS]
    each = copies[np.searchsorted(parts, top)]  # ``parts`` is in partition order
    sizes = [int(state.sizes[p]) for p, c in zip(top.tolist(), each.tolist(), strict=True) for _ in range(int(c))]
    highest = max(facts.bands[int(x)][1] for x in members.tolist())
    lows = sorted(facts.bands[int(x)][0] for x in members.tolist())
    n = len(members)
    for k in range(1, min(len(sizes), n - 1) + 1):
        if k > 1 and sizes[k - 2] + sizes[k - 1] <= highest:
            break  # two of them could share a broker in band: the argument stops here
        rest = total - sum(sizes[:k])
        need = float(sum(lows[: n - k]))
        if rest < need:
            return (
                f"{where} holds at most {_size(total)}; whichever {k} broker{'s hold' if k != 1 else ' holds'} "
                f"{_partitions_of(state, top, each, k)}, the other {n - k} share at most {_size(max(rest, 0.0))}, "
                f"below the bottoms of their bands summed ({_size(need)}): no plan puts every broker of {where} "
                "in its band"
            )
    return HEURISTIC


def _partitions_of(state: ClusterState, top: np.ndarray, each: np.ndarray, k: int) -> str:
    """The partitions (with sizes, and replicas where more than one) of the ``k`` largest replicas."""
    shown: list[str] = []
    left = k
    for p, n in zip(top.tolist(), each.tolist(), strict=True):
        if left <= 0:
            break
        take = min(int(n), left)
        shown.append(f"{state.name(p)} ({_size(int(state.sizes[p]))}{f' x {take}' if take > 1 else ''})")
        left -= take
    return ", ".join(shown)


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


def _above(state: ClusterState, b: int, facts: _Facts, high: int) -> str:
    F, stay, unmovable, room, pinned, rack, elig = (facts.F, facts.stay, facts.unmovable, facts.room, facts.pinned,
                                                    facts.rack, facts.elig)  # fmt: skip
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


def _below(state: ClusterState, b: int, facts: _Facts, low: int) -> str:
    room, movable_sizes = facts.room, facts.movable_sizes
    fit = int(np.searchsorted(movable_sizes, room[b], side="right")) if room[b] >= 0 else 0
    most = _most(facts, b)
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
