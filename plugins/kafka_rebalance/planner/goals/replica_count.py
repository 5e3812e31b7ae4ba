"""Replica counts: every eligible broker within its [lo, hi] target, in the fewest moves.

Each move goes from a broker above its range to one below it while both exist, so
every move shrinks both the excess and the deficit: the plan meets the
max(excess, deficit) lower bound unless rack safety blocks a pair. Which replica
moves is chosen by size, to bring bytes toward the mean at the same time.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from kafka_rebalance.planner.byte_misses import HostRoom, held_above
from kafka_rebalance.planner.goals.base import SEARCH_LIMIT, DonorIndex, Goal, bound_for, donor_index, rack_bound
from kafka_rebalance.planner.goals.donor_arrays import kernel_reads
from kafka_rebalance.planner.goals.replica_count_moves import transfer_counts
from kafka_rebalance.planner.goals.view import BalanceView, GoalCheck
from kafka_rebalance.planner.state import ClusterState

if TYPE_CHECKING:
    from kafka_rebalance.planner.exact import ExactModel

# Aim inside the tolerance band by this fraction of it, so that the sizes actually found
# (the nearest to the wanted one) leave the byte goal nothing to repair.
BAND_MARGIN = 0.25
ANY_SIZE = (-math.inf, math.inf)
# Receivers asked per replica a giant's host sheds (``_hold_least``), lightest first, and the cluster's smallest
# replicas looked at per trade before its larger replica stays.
HOST_PARTNERS = 16


def desired_size(state: ClusterState, d: int, r: int) -> float:
    """The smallest replica size that still lets both brokers end inside the byte band.

    Bytes moved are what the operator pays for, so a count move carries no more bytes
    than the band needs: the donor must shed enough to end under the band's top, the
    receiver must gain enough to end above its bottom, each over its remaining moves.
    With neither under pressure the smallest replica goes.
    """
    margin = BAND_MARGIN * state.options.byte_tolerance
    mid_d = (state.lo[d] + state.hi[d]) / 2
    mid_r = (state.lo[r] + state.hi[r]) / 2
    bottom_r = state.byte_lo[r] + margin * state.byte_centre[r]
    want_d = 0.0  # a dead or decommissioned broker sheds everything, whatever the sizes
    if state.eligible[d]:
        top_d = state.byte_hi[d] - margin * state.byte_centre[d]
        want_d = (state.bytes[d] - top_d) / max(1.0, state.counts[d] - mid_d)
    want_r = (bottom_r - state.bytes[r]) / max(1.0, mid_r - state.counts[r])
    return max(0.0, want_d, want_r)


def byte_need(state: ClusterState, b: np.ndarray) -> np.ndarray:
    """Bytes each broker lacks (+) or holds beyond (-) its target, relative to the target."""
    t = np.maximum(state.byte_target[b], 1.0)
    return (state.byte_target[b] - state.bytes[b]) / t


class ReplicaCountGoal(Goal):
    name = "replica-count"
    count_goal = True
    priority = 30
    target = ("every eligible broker's replica count within its range: floor..ceil of its share (or its rack's "
              "share where rack safety forces rack totals apart), widened by --replica-tolerance")
    limit = SEARCH_LIMIT  # candidates each search examines (see ``_searched``)
    _in_rack: np.ndarray | None = None  # ``rack_bound`` of the state being optimised (set by ``optimize``)
    # The giants' hosts of the state being optimised (``_hold_least``), per broker, and where a replica still fits
    # a band: set by ``optimize``; None, no broker is one.
    _hosts: np.ndarray | None = None
    _room: HostRoom | None = None

    def accept_move(self, state: ClusterState, p: int, src: int, dst: int) -> bool:
        src_ok = not state.eligible[src] or state.counts[src] > state.lo[src]
        return src_ok and state.counts[dst] < state.hi[dst]

    def exact_terms(self, model: ExactModel) -> None:
        state, elig = model.state, model.elig
        model.add(model.b_of, model.var.ravel(), np.ones(model.nx), state.lo[elig] - model.fixed_count,
                  state.hi[elig] - model.fixed_count)

    def check(self, view: BalanceView) -> GoalCheck:
        off = {b.broker_id: max(0, b.replica_lo - b.replicas, b.replicas - b.replica_hi) for b in view.brokers}
        offenders = tuple(b for b, n in off.items() if n)
        return self.verdict(max(off.values(), default=0), not offenders, offenders, {b: float(n) for b, n in off.items()})

    def optimize(self, state: ClusterState) -> None:
        # Without the dtypes (equivalent mutants): non-empty lists of ints are int64 anyway (ClusterState refuses
        # a cluster with no eligible broker).
        elig = np.asarray(state.eligible_idx, dtype=np.int64)
        rack = np.asarray(state.rack, dtype=np.int64)
        # Equivalent mutants: None here, or `or True` in _transfer, recompute rack_bound there: the same moves, only slower.
        # A bound row stays bound (rack safety, a hard veto, refuses its replicas any other rack), and a row made
        # rack-safe since, which the cached one does not skip, that veto refuses across racks all the same.
        self._in_rack = rack_bound(state)
        # The giant-host rule (``_hold_least``): brokers no plan brings down into their byte band.
        hosts, self._room = held_above(state)
        self._hosts = None
        if hosts:
            # Without the dtype (equivalent mutants): floats 0.0 / 1.0 are read only for their truth.
            self._hosts = np.zeros(state.n_brokers, dtype=bool)
            self._hosts[hosts] = True
        if kernel_reads(state):
            transfer_counts(state, self._in_rack, self._hosts, self._room, SEARCH_LIMIT)
        else:
            self._transfer_all(state, elig, rack)
        if self._hosts is not None:
            small = self._smallest_first(state)
            for g in hosts:
                self._hold_least(state, elig, g, small)

    def _transfer_all(self, state: ClusterState, elig: np.ndarray, rack: np.ndarray) -> None:
        """Until every broker is in range or stuck: the broker furthest out of range trades with the first partner,
        tier by tier, that takes any (else through a third broker). Compiled in replica_count_moves.py, which runs
        wherever it reads every veto in force; this is the rule read plainly, and runs where it does not."""
        stuck = np.zeros(state.n_brokers, dtype=bool)
        while True:
            c = state.counts[elig]
            over = c - state.hi[elig]
            under = state.lo[elig] - c
            live = ~stuck[elig]
            ov = np.where(live, over, 0)
            un = np.where(live, under, 0)
            io, iu = int(np.argmax(ov)), int(np.argmax(un))
            if ov[io] <= 0 and un[iu] <= 0:
                break
            if ov[io] >= un[iu]:
                d = int(elig[io])
                # Brokers below their range first (one move fixes two brokers); then, where rack
                # safety blocks every such pair, any broker with room: a two-move chain through it.
                # `under >= 0` and `c <= hi` are equivalent: a partner with no room is offered 0 replicas, and
                # moving none is a failed transfer, so the search goes on to the next as if it were not there.
                tiers = [(under > 0, under), (c < state.hi[elig], state.hi[elig] - c)]
                heavy = byte_need(state, np.asarray([d]))[0] < 0
                receivers = elig[under > 0] if (under > 0).any() else elig[c < state.hi[elig]]
                stuck[d] = not self._searched(
                    lambda: self._first_transfer(state, elig, rack, tiers, d, lambda r: (d, r), heavy, int(ov[io]))  # noqa: B023 - called within this iteration
                    or self._chain(state, elig, [d], receivers.tolist()),  # noqa: B023
                    state,
                )
            else:
                r = int(elig[iu])
                tiers = [(over > 0, over), (c > state.lo[elig], c - state.lo[elig])]  # `>=` either: as above
                light = byte_need(state, np.asarray([r]))[0] > 0
                donors = elig[over > 0] if (over > 0).any() else elig[c > state.lo[elig]]
                stuck[r] = not self._searched(
                    lambda: self._first_transfer(state, elig, rack, tiers, r, lambda d: (d, r), not light, int(un[iu]))  # noqa: B023 - called within this iteration
                    or self._chain(state, elig, donors.tolist(), [r]),  # noqa: B023
                    state,
                )

    def _want(self, state: ClusterState, d: int, r: int) -> tuple[float, tuple[float, float]]:
        """The size a move from ``d`` to ``r`` asks for, and the sizes it may take (``DonorIndex.find``'s window).
        A giant's host (``_hold_least``) takes the smallest replica there is, and sheds its largest that some band
        can hold (not a giant: that would only make its receiver the giant's host); otherwise ``desired_size``."""
        if self._hosts is not None and self._room is not None:
            if self._hosts[r]:
                return 0.0, ANY_SIZE
            if self._hosts[d]:
                top = self._room.anywhere
                return top, (-math.inf, top + 1.0)
        return desired_size(state, d, r), ANY_SIZE

    def _shedding(self, state: ClusterState, d: int, ok: Callable[[int], bool]) -> Callable[[int], bool]:
        """``ok`` for the replicas ``d`` gives away, and, where ``d`` is a giant's host, for no giant of it
        (moving one only makes its receiver the giant's host, for the giant's bytes copied)."""
        room = self._room
        if self._hosts is None or room is None or not self._hosts[d]:
            return ok
        return lambda p: room.fits(state, p, d) and ok(p)

    @staticmethod
    def _smallest_first(state: ClusterState) -> np.ndarray:
        """The partitions whose replicas may move, smallest first (ties by partition)."""
        order = np.lexsort((np.arange(state.n_parts), state.sizes))
        return order[~(state.frozen | state.hot)[order]]

    def _hold_least(self, state: ClusterState, elig: np.ndarray, g: int, small: np.ndarray) -> None:
        """The giant-host rule. A broker proven above its byte band whatever the plan (``held_above``: it holds a
        partition too big for any band that may take it, or more load that may not move than its band's top) ends
        above it in every plan, and every byte it holds beside what forces it there adds to the plan's worst broker
        (byte max/mean is set by such a host). So, while the counts are balanced, such a host sheds its largest
        replicas and takes the smallest (``_want``); once they are, it goes down to its count floor with its
        largest, then trades its larger replicas, largest first, for the smallest of the whole cluster that it may
        hold, while that lowers it. All this before the byte goals' move cap: their cap has none of it left to
        undo, and the byte goal holds such a host where it stands (byte_balance.py), so nothing moves onto it
        again. Its partners are the lightest brokers; a trade's two moves either meet on one broker or keep both
        other brokers in their count ranges."""
        room = self._room
        assert room is not None
        sizes, row = state.sizes, state.row
        mine = [p for p in state.broker_parts(g).tolist() + state.arrivals.get(g, []) if g in row(p)]
        mine = sorted({p for p in mine if not (state.frozen[p] or state.hot[p]) and room.fits(state, p, g)},
                      key=lambda p: (-int(sizes[p]), p))
        kept: list[int] = []
        for p in mine:  # down to the count floor, largest first
            if state.counts[g] <= state.lo[g]:
                kept.append(p)
                continue
            y = self._host_receiver(state, elig, p, g, -1)  # any x < 0 is equivalent: none
            if y is None:
                kept.append(p)
            else:
                state.move(p, g, y)
        j = 0  # the smallest replicas before ``j`` are on g already, or may not join it
        for p in kept:  # trades, largest first
            sp = int(sizes[p])
            done = False  # None is equivalent: read only for its truth
            k, looked = j, 0
            # `k <= len(small)` is equivalent: p itself is in small (it may move) and stops the walk before its end
            while k < len(small) and looked < HOST_PARTNERS:
                q = int(small[k])
                if int(sizes[q]) >= sp:
                    break  # nothing smaller is left to take for p
                k += 1
                if g in row(q):
                    # Never moving j on here (`k + 1 == j`) is equivalent: a replica on g smaller than p stays there
                    # while the walk can reach it (only kept ones leave g, largest first, and later ones are smaller).
                    if k - 1 == j:
                        j = k
                    continue
                xs = [x for x in row(q) if x != g and state.accepts(q, x, g)]
                if not xs:
                    if k - 1 == j:
                        j = k
                    continue
                looked += 1
                for x in xs:
                    y = self._host_receiver(state, elig, p, g, x)
                    if y is not None:
                        state.move(q, x, g)
                        state.move(p, g, y)
                        done = True
                        break
                if done:
                    break

    def _host_receiver(self, state: ClusterState, elig: np.ndarray, p: int, g: int, x: int) -> int | None:
        """The lightest broker (bytes above its target, then index) that may take ``p`` from the giant's host ``g``
        while ``x`` (-1: none) gives one to ``g``: ``x`` itself, or one below its count range's top while ``x``
        (if any) stays above its bottom. Not another giant's host. Among the ``HOST_PARTNERS`` lightest that
        rack safety does not refuse at once."""
        hosts = self._hosts
        assert hosts is not None
        key = state.bytes[elig] - state.byte_target[elig]
        bound = self._in_rack
        row = state.row(p)
        x_gives = x < 0 or state.counts[x] > state.lo[x]
        looked = 0
        for y in elig[np.lexsort((elig, key))].tolist():
            if y == g or hosts[y] or y in row:
                continue
            if y != x and not (x_gives and state.counts[y] < state.hi[y]):
                continue
            if bound is not None and bound[p] and state.rack[y] != state.rack[g]:
                continue
            looked += 1
            if state.accepts(p, g, y):
                return int(y)
            if looked >= HOST_PARTNERS:
                break
        return None

    def _searched(self, attempt: Callable[[], bool], state: ClusterState) -> bool:
        """``attempt`` with each search looking at its ``SEARCH_LIMIT`` nearest candidates; where that
        finds nothing, once more looking at every replica before the broker counts as stuck. The
        limit keeps the common search short, but rack safety can refuse hundreds of a donor's
        replicas in a row (RF 3 over 3 racks leaves a broker of a small rack only the few
        replicas of lower RF to give away), and a broker set aside too early ends out of range."""
        self.limit = SEARCH_LIMIT
        if attempt():
            return True
        self.limit = state.n_parts + 1  # + 2 is equivalent: a broker holds at most n_parts replicas to look at
        try:
            return attempt()
        finally:
            self.limit = SEARCH_LIMIT

    def _first_transfer(
        self, state: ClusterState, elig: np.ndarray, rack: np.ndarray, tiers: list[tuple[np.ndarray, np.ndarray]],
        me: int, pair: Callable[[int], tuple[int, int]], neediest_first: bool, amount: int,
    ) -> bool:
        """Moves up to ``amount`` replicas between ``me`` and the first partner, tier by tier, that takes any.

        A donor heavy in bytes feeds the receivers that need bytes most, a light one those
        needing least (``neediest_first``: the donor is heavy); a receiver light in bytes takes
        from the donors holding most beyond their target, a heavy one from those holding least
        (``neediest_first``: the receiver is heavy). Same-rack partners first, as they never
        break rack safety.
        """
        for mask, room in tiers:
            cand, cand_room = elig[mask], room[mask]
            if cand.size == 0:
                continue
            # Equivalent mutants: `/` for `*`, or -2 / 2 for -1 / 1: any factor of the same sign keeps the order.
            need = byte_need(state, cand) * (-1 if neediest_first else 1)
            order = np.lexsort((cand, -cand_room, need, rack[cand] != rack[me]))
            for k in order.tolist():
                d, r = pair(int(cand[k]))
                if self._transfer(state, d, r, min(amount, int(cand_room[k]))):
                    return True
        return False

    def _chain(self, state: ClusterState, elig: np.ndarray, donors: list[int], receivers: list[int]) -> bool:
        """One replica from a donor to a receiver through a third broker, whose count ends unchanged.

        Rack safety can forbid every direct move between the brokers out of range (say, every
        partition on the donor has a replica in the receiver's rack), while it allows d -> x and
        x -> r with different partitions. Two moves then fix what one could not. The later
        move is made first, so no broker ever leaves its range on the way.
        """
        for d in donors:
            for r in receivers:
                for x in elig.tolist():
                    if x in (d, r):
                        continue
                    onward = donor_index(state, x)
                    q = self._find(state, onward, x, r, lambda q: state.accepts(q, x, r))  # noqa: B023 - called within this iteration
                    if q is None:
                        continue
                    inward = donor_index(state, d)
                    p = self._find(state, inward, d, x, lambda p: p != q and state.accepts(p, d, x))  # noqa: B023 - called within this iteration
                    if p is None:
                        onward.put_back(q)
                        continue
                    state.move(q, x, r)
                    state.move(p, d, x)
                    return True
        return False

    def _find(self, state: ClusterState, idx: DonorIndex, d: int, r: int, ok: Callable[[int], bool]) -> int | None:
        """A chain's search of ``d``'s replicas (touched ones too) for one to move to ``r``: the giant-host rule's
        (``_want``) first; where that finds nothing, the counts still come first (``desired_size``, any replica)."""
        want, window = self._want(state, d, r)
        p = idx.find(want, self._shedding(state, d, ok), self.limit, allow_touched=True, window=window)
        if p is None and self._hosts is not None and self._hosts[d]:
            p = idx.find(desired_size(state, d, r), ok, self.limit, allow_touched=True)
        return p

    def _transfer(self, state: ClusterState, d: int, r: int, amount: int) -> int:
        idx = donor_index(state, d)
        moved = 0
        size_of = state.size_of
        hi_r, lo_d, check_d = float(state.byte_allowed_hi[r]), float(state.byte_allowed_lo[d]), bool(state.eligible[d])
        # r's bytes and d's, as Python ints (exact below 2**53, as numpy's float compare is), per move; set before each
        # search, so any start is equivalent
        room = [0, 0]

        def fits(size: float) -> bool:  # neither broker ends worse off in bytes than it started
            return room[0] + size <= hi_r and (not check_d or room[1] - size >= lo_d)

        def keeps_bytes(p: int) -> bool:
            return fits(size_of[p])

        # The rack-bound shortcut first: across racks most of a donor's replicas are refused by rack safety.
        # (`or True`, recomputing it, is equivalent: see optimize.)
        bound = bound_for(rack_bound(state) if self._in_rack is None else self._in_rack, state, d, r)
        if bound is None:
            free = lambda p: state.accepts(p, d, r)  # noqa: E731
        else:
            free = lambda p: not bound[p] and state.accepts(p, d, r)  # noqa: E731
        def pick(want: float, window: tuple[float, float], free: Callable[[int], bool]) -> int | None:
            for ok, bytes_kept in ((lambda p: keeps_bytes(p) and free(p), True), (free, False)):
                for touched in (False, True):
                    # Where even the smallest replica the search could meet breaks keeps_bytes (larger ones break it
                    # more), it would only walk its limit and fail: most of this goal's checks at 200 brokers. (So
                    # False for the first True above is equivalent: the search runs and finds nothing, only slower.)
                    if bytes_kept and not fits(idx.smallest(touched)):
                        continue
                    p = idx.find(want, ok, self.limit, allow_touched=touched, window=window)
                    if p is not None:
                        return p
            return None

        ruled = self._shedding(state, d, free)
        while moved < amount:
            room[:] = int(state.bytes[r]), int(state.bytes[d])
            p = pick(*self._want(state, d, r), ruled)
            if p is None and self._hosts is not None and self._hosts[d]:
                p = pick(desired_size(state, d, r), ANY_SIZE, free)  # the giant-host rule found none: counts first
            if p is None:
                break
            state.move(p, d, r)
            moved += 1
        return moved
