"""Hard goals: where a replica may live (placement) and rack safety.

PlacementGoal empties dead and decommissioned brokers and applies a replication
factor change; RackSafetyGoal repairs partitions with too many replicas in one
rack. Both veto any later move to a dead, decommissioned or already-used broker,
or one that would put too many replicas of a partition in one rack.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

import numpy as np

from kafka_rebalance.balance import rack_unsafe_rows
from kafka_rebalance.errors import PlanError
from kafka_rebalance.planner.goals.base import Goal
from kafka_rebalance.planner.goals.disk_capacity import has_room
from kafka_rebalance.planner.goals.view import BalanceView, GoalCheck
from kafka_rebalance.planner.state import ClusterState

if TYPE_CHECKING:
    from kafka_rebalance.planner.exact import ExactModel


def _hot_error(state: ClusterState, p: int, why: str) -> PlanError:
    rate = state.rates[p]
    needed = rate / state.options.throttle_efficiency
    return PlanError(
        f"partition {state.name(p)} must move ({why}) but its produce rate {rate:,.0f} B/s is at or above "
        f"{state.options.rate_text()}, so its new replica could never catch up; raise --throttle above {needed:,.0f}"
    )


def destination_order(state: ClusterState) -> list[int]:
    """Eligible brokers in the order a forced move (an evacuation, a new replica, a rack repair) tries them:
    under their replica ceiling first, then furthest below their byte target, then the lowest id. Bytes
    before counts: a forced replica lands where the later goals need it least moved again, and a replica
    left over a count ceiling costs the count goal one small move where bytes left over a band may cost
    the byte goal many (and an evacuation planned with a wide tolerance is then already even)."""
    elig = state.eligible_index_arr
    room = state.bytes[elig] - state.byte_target[elig]
    return elig[np.lexsort((elig, room, state.counts[elig] >= state.hi[elig]))].tolist()


class DestinationOrder:
    """``destination_order`` kept current across moves: each move changes two brokers' keys only, so they are put
    back in place (a sort of every eligible broker per forced move was half the rack repair's time at 400 brokers /
    1M partitions, 44,000 repairs). ``moved`` after every move of the state; iterate for the brokers in order."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self.key = {b: self._key(b) for b in state.eligible_index_arr.tolist()}
        self.keys = sorted(self.key.values())

    def _key(self, b: int) -> tuple[bool, float, int]:
        # destination_order's lexsort keys, most significant first
        s = self.state
        return bool(s.counts[b] >= s.hi[b]), float(s.bytes[b] - s.byte_target[b]), b

    def moved(self, *brokers: int) -> None:
        for b in brokers:
            old = self.key.get(b)
            if old is not None:
                del self.keys[bisect_left(self.keys, old)]
                self.key[b] = new = self._key(b)
                insort(self.keys, new)

    def __iter__(self) -> Iterator[int]:
        return (b for _, _, b in self.keys)


def best_destination(state: ClusterState, p: int, row: list[int], src: int | None, rf: int, other_rack: bool = False) -> int | None:
    """The first broker of ``destination_order`` that may take a replica of ``p`` (replacing ``src``): one
    with disk room first; a replica that must leave its broker goes to one without room only when none has
    any (the disk-capacity goal's check then names the broker)."""
    order = destination_order(state)
    rack = state.rack
    if state.has_racks and not state.rack_safe(row):
        # A partition already crowding a rack: the replica that must move anyway goes to the emptiest rack first,
        # so the rack-safety goal has one move fewer to make (or none) for this partition. (``or`` for the ``and`` alike:
        # rack_safe holds without racks. Only the order of the counts matters: a rack's first replica counted as 2, or
        # each as 2, sorts the same, since a missing rack stays at 0.)
        per: dict[int, int] = {}
        for x in row:
            if x != src:
                per[rack[x]] = per.get(rack[x], 0) + 1
        order.sort(key=lambda b: per.get(rack[b], 0))
    fallback = None
    for b in order:
        if b in row:
            continue
        if other_rack and src is not None and rack[b] == rack[src]:
            continue
        if state.rack_ok(row, src, b, rf):
            if has_room(state, p, b):
                return b
            fallback = b if fallback is None else fallback
    return fallback


class PlacementGoal(Goal):
    name = "placement"
    hard = True
    priority = 10
    target = ("no movable replica on a dead or decommissioned broker, every partition at its target "
              "replication factor")

    def accept_move(self, state: ClusterState, p: int, src: int, dst: int) -> bool:
        return state.eligible[dst] and not state.unmovable[p] and dst not in state.row(p)

    def exact_terms(self, model: ExactModel) -> None:
        # Every partition at its target RF; one producing at the throttle gains no replica.
        rf = model.state.rf_target[model.parts].astype(np.float64)  # (astype(None) is float64 as well)
        model.add(model.p_of, model.var.ravel(), np.ones(model.nx), rf, rf)
        model.forbid(model.state.hot[model.parts][:, None] & ~model.on)

    def check(self, view: BalanceView) -> GoalCheck:
        stranded = {b.broker_id: b.movable_replicas for b in view.leaving}
        left = sum(stranded.values()) + view.rf_off_target
        return self.verdict(left, left == 0, tuple(b for b, n in stranded.items() if n),
                            {b: float(n) for b, n in stranded.items()})

    def optimize(self, state: ClusterState) -> None:
        R = state.R
        valid = R >= 0
        on_inelig = (~state.eligible_arr[np.maximum(R, 0)]) & valid
        # (A partition listed that needs nothing is left as it is by _fix, so a wider list, e.g. every valid cell or
        # any(axis=None), is alike; _check_frozen raises only for a decommissioned broker in a row, listed either way.)
        needs = (on_inelig.any(axis=1) | (state.rf_target != state.rf)) & ~state.frozen
        self._check_frozen(state, on_inelig)
        self.warnings: list[str] = []
        fix = np.flatnonzero(needs)
        # Largest first, as a bin packer does: the big replicas take the emptiest brokers while they are empty.
        for p in fix[np.argsort(-state.sizes[fix], kind="stable")].tolist():
            self._fix(state, p)

    def _check_frozen(self, state: ClusterState, on_inelig: np.ndarray) -> None:
        # (any(axis=None) alike: it adds frozen rows with no ineligible replica, and so none decommissioned, which the
        # loop below raises for only)
        stuck = np.flatnonzero(on_inelig.any(axis=1) & state.frozen)
        for p in stuck.tolist():
            for b in state.row(p):
                if state.decommissioned[b]:
                    why = "its topic is in --exclude-topics" if state.excluded[p] else "it has no leader to copy from"
                    raise PlanError(
                        f"cannot decommission broker {state.bid(b)}: partition {state.name(p)} has a replica there "
                        f"and cannot move ({why})"
                    )

    def _fix(self, state: ClusterState, p: int) -> None:
        target = int(state.rf_target[p])
        leader = int(state.leader[p])
        row = state.row(p)
        while len(row) > target:  # replication factor decrease: drop the replicas we would move anyway
            victim = max(
                row,
                key=lambda b: (not state.eligible[b], int(state.counts[b] - state.hi[b]), b != leader, -b),
            )
            state.remove(p, victim)
            row = state.row(p)
        for b in [x for x in row if not state.eligible[x]]:
            if state.hot[p]:
                raise _hot_error(state, p, f"broker {state.bid(b)} is {'decommissioned' if state.decommissioned[b] else 'dead'}")
            dst = best_destination(state, p, row, b, target)
            if dst is None:
                raise PlanError(
                    f"partition {state.name(p)}: no eligible broker can take its replica from broker {state.bid(b)} "
                    f"without breaking rack safety or doubling a replica ({len(state.eligible_idx)} eligible brokers, "
                    f"replication factor {target})"
                )
            state.move(p, b, dst)
            row = state.row(p)
        while len(row) < target:
            if state.hot[p]:
                raise _hot_error(state, p, f"--replication-factor {target}")
            dst = best_destination(state, p, row, None, target)
            if dst is None:
                raise PlanError(
                    f"--replication-factor {target}: partition {state.name(p)} cannot get another rack-safe replica "
                    f"({len(state.eligible_idx)} eligible brokers)"
                )
            state.add(p, dst)
            row = state.row(p)


class RackSafetyGoal(Goal):
    name = "rack-safety"
    hard = True
    priority = 20
    target = "at most ceil(RF / racks) replicas of a partition in one rack, over min(RF, racks) racks"

    def accept_move(self, state: ClusterState, p: int, src: int, dst: int) -> bool:
        row = state.row(p)
        return state.rack_ok(row, src, dst, len(row))

    def exact_terms(self, model: ExactModel) -> None:
        state = model.state
        # (or alike: with racks every eligible broker's rack, -1 included, counts, so n_racks >= 1; without, both are falsy)
        if not (state.has_racks and state.n_racks):
            return
        parts, elig, var, n_p, nx = model.parts, model.elig, model.var, model.n_p, model.nx
        rack = np.asarray([state.rack[b] for b in elig.tolist()], dtype=np.int64)  # (ints: int64 without the dtype too)
        racks = np.unique(rack)
        cap = -(-state.rf_target[parts] // state.n_racks)
        g_of = np.searchsorted(racks, rack)[model.b_of]
        # one row per (partition, rack): sum over the rack's brokers <= cap
        model.add(model.p_of * len(racks) + g_of, var.ravel(), np.ones(nx), np.zeros(n_p * len(racks)),
                  np.repeat(cap, len(racks)).astype(np.float64))  # (astype(None) alike)
        # Which partitions need the span rows: >= 1 or > 2 for ``spread`` alike (RF 1 needs one rack, RF 2 has cap 1 over
        # two or more racks); need >= 1 or > 2 below alike (one rack is always spanned; over two racks a cap of
        # ceil(RF / 2) < RF forces both); cap >= 1 alike (the comment there). Each only adds rows every assignment meets.
        spread = np.flatnonzero(state.rf_target[parts] > 1)
        need = np.minimum(state.rf_target[parts], len(racks))
        wide = spread[need[spread] > 1]
        wide = wide[(cap[wide] > 1)]  # with cap 1 the cap alone forces RF distinct racks
        if not len(wide):
            return
        # y[p, g] <= sum_{b in g} x[p, b]; sum_g y[p, g] >= min(RF, racks)
        y = model.columns(len(wide) * len(racks)).reshape(len(wide), len(racks))
        member = [np.flatnonzero(np.searchsorted(racks, rack) == g) for g in range(len(racks))]
        for k, p in enumerate(wide.tolist()):
            for g in range(len(racks)):
                members = var[p, member[g]]
                # (any members alike for a start that meets the rows: there every rack of a wide partition is spanned;
                # the row numbers' dtype None alike, here and below: whole floats, which coo_matrix casts to its index type)
                model.indicator(int(y[k, g]), members)
                model.add(np.zeros(len(members) + 1, dtype=np.int64), np.concatenate([[y[k, g]], members]),
                          np.concatenate([[1.0], -np.ones(len(members))]), np.asarray([-np.inf]), np.asarray([0.0]))
            model.add(np.zeros(len(racks), dtype=np.int64), y[k], np.ones(len(racks)), np.asarray([float(need[p])]),
                      np.asarray([np.inf]))

    def check(self, view: BalanceView) -> GoalCheck:
        return self.verdict(view.rack_violations, view.rack_violations == 0)

    def violations(self, state: ClusterState) -> np.ndarray:
        """Partitions (indices) whose replicas crowd one rack beyond the cap."""
        if not state.has_racks:
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(rack_unsafe_rows(state.final_rows(), state.rack, state.n_racks))

    def optimize(self, state: ClusterState) -> None:
        self.unrepaired: list[str] = []
        if not state.has_racks:
            return
        order = DestinationOrder(state)
        for p in self.violations(state).tolist():
            if state.frozen[p]:
                self.unrepaired.append(state.name(p))
                continue
            self._repair(state, p, order)

    def _repair(self, state: ClusterState, p: int, order: DestinationOrder) -> None:
        rack = state.rack
        leader = int(state.leader[p])
        while True:
            row = state.row(p)
            if state.rack_safe(row):
                return
            cap = state.rack_cap(len(row))
            per: dict[int, int] = {}
            for b in row:
                per[rack[b]] = per.get(rack[b], 0) + 1
            crowded = [b for b in row if per[rack[b]] > cap]
            spread = not crowded  # too few racks: a rack holding two gives one to a missing rack
            if spread:
                crowded = [b for b in row if per[rack[b]] > 1]
            # The crowded broker furthest over its replica ceiling, then its byte target, gives (the mirror of
            # destination_order); a follower before the leader only where bytes tie.
            victim = max(crowded, key=lambda b: (bool(state.counts[b] > state.hi[b]),
                                                 float(state.bytes[b] - state.byte_target[b]), b != leader, -b))
            if state.hot[p]:
                raise _hot_error(state, p, "rack-safety repair")
            dst = self._destination(state, p, row, victim, per, cap, spread, order)
            if dst is None:
                self.unrepaired.append(state.name(p))
                return
            state.move(p, victim, dst)
            order.moved(victim, dst)

    @staticmethod
    def _destination(state: ClusterState, p: int, row: list[int], victim: int, per: dict[int, int], cap: int,
                     spread: bool, order: Iterable[int] | None = None) -> int | None:  # fmt: skip
        """As ``best_destination``: a broker with disk room first, one without only when none has any; and of the
        racks that may take the replica, one holding the fewest of the partition's replicas (a missing rack first).
        A rack under the cap but already spanned leaves the span short where a missing one was free: RF 4 on three
        racks, 3 + 1 + 0, moved into the rack of 1, is 2 + 2 + 0 and needs a second move (1,191 extra moves on
        200b-200k-skewed-3r before this order)."""
        rack = state.rack
        limit = 1 if spread else cap
        best: tuple[int, int] | None = None  # (its rack's replicas of p, destination), with disk room
        fallback: tuple[int, int] | None = None
        for b in destination_order(state) if order is None else order:
            g = rack[b]
            held = per.get(g, 0)
            if b in row or g == rack[victim] or held >= limit:
                continue
            if has_room(state, p, b):
                if best is None or held < best[0]:
                    best = (held, b)
                    if held == 0:
                        break
            elif fallback is None or held < fallback[0]:
                fallback = (held, b)
        chosen = best if best is not None else fallback
        return None if chosen is None else chosen[1]
