"""Topic spread: each topic's replicas, and its preferred (first) replicas, spread evenly over the eligible brokers.

A broker holding many replicas of one topic serves that topic's produce and fetch traffic out of
proportion: the load a topic puts on the cluster lands on few brokers even when replica counts and
bytes are even overall (Cruise Control's TopicReplicaDistributionGoal and its leader counterpart).

The band: for each topic, each eligible broker holds floor..ceil of its share of the topic's
replicas. The share is ``balance.placement_targets`` of the topic alone (tolerance 0), so where rack
safety forces a topic's rack totals apart (RF 3 over racks of 4, 4 and 3 brokers: each rack holds
one replica of every partition) a broker's share is its rack's, and replicas no plan may move
(excluded topics, leaderless partitions) stay in the share of the broker they sit on: the band is
what rack safety and the fixed load allow. Preferred leaders: floor..ceil of the topic's first
replicas over the eligible brokers (a first replica may be any replica, so racks do not bind it).

The figure: replicas and first replicas outside their bands, summed over topics (per broker, and
for the cluster). Its heuristic runs on what the earlier goals left: per topic, from a broker above
its band to one below it (else one with room), the smallest replica of the topic that every earlier
goal's veto accepts and that leaves neither broker's bytes further outside the byte band, moved
alone where counts have slack, else swapped for a replica of another topic of close size that both
brokers' bands of that topic allow. It moves only partitions no goal has moved yet. Then, on the
final replica sets, the first replicas: reordered (metadata only) within each partition towards
the brokers below the topic's leader band, to electable replicas only. Its veto keeps every later
move from pushing a topic's count on a broker outside its band, and its exact-model rows hold the
solver to the same bands (where no assignment meets them with the other goals' rows, the model is
infeasible and ``auto`` keeps the heuristic's plan).
"""

from __future__ import annotations

import bisect
import weakref
from functools import lru_cache
from itertools import islice
from typing import TYPE_CHECKING

import numpy as np

from kafka_rebalance.balance import count_bounds, placement_targets
from kafka_rebalance.planner import rows as matrix
from kafka_rebalance.planner.goals.base import Goal, nearest
from kafka_rebalance.planner.goals.byte_balance import ByteGuard
from kafka_rebalance.planner.goals.preferred_leader import LeaderChoice
from kafka_rebalance.planner.goals.view import BalanceView, GoalCheck, TopicLoad
from kafka_rebalance.planner.state import ClusterState

if TYPE_CHECKING:
    from kafka_rebalance.planner.exact import ExactModel

PARTNERS = 8  # brokers tried on each side of a topic's transfer before the topic counts as stuck
SWAP_TRIES = 16  # a topic's smallest replicas on the donor tried for a swap
SEARCH = 64  # replicas of the receiver examined per swap
CHAIN_PAIRS = 4  # (donor, receiver) pairs a chain through a third broker is looked for between

# A receiver's swap partners (``SwapPools.at``): partitions, their topics, sizes (floats), slots, and which are live.
Pool = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]

_codes: weakref.WeakKeyDictionary[ClusterState, tuple[list[str], np.ndarray]] = weakref.WeakKeyDictionary()


def topic_codes(state: ClusterState) -> tuple[list[str], np.ndarray]:
    """The topics by name, and each partition's topic as an index into them (computed once per state)."""
    # Equivalent mutants: skipping the cache recomputes the same; topic names are str, so a str array (dtype None)
    # sorts and groups them as the object array does.
    got = _codes.get(state)
    if got is None:
        names, codes = np.unique(np.asarray([p.topic for p in state.parts], dtype=object), return_inverse=True)
        got = _codes[state] = ([str(t) for t in names], codes.astype(np.int64).ravel())
    return got


def _pairs(row: np.ndarray, ids: list[int]) -> tuple[tuple[int, int], ...]:
    nz = np.flatnonzero(row)
    return tuple((ids[i], int(row[i])) for i in nz.tolist())


def topic_matrix(state: ClusterState, rows: np.ndarray) -> np.ndarray:
    """Per topic and broker index, the replicas ``rows`` (partition x slot, -1 padded) put there."""
    names, topic = topic_codes(state)
    n = state.n_brokers
    valid = rows >= 0
    t = np.broadcast_to(topic[:, None], rows.shape)[valid]
    return np.bincount(t * n + rows[valid], minlength=len(names) * n).reshape(len(names), n)


def topic_loads(state: ClusterState, rows: np.ndarray, first: np.ndarray) -> tuple[TopicLoad, ...]:
    """Every topic's loads over the eligible brokers, for a view: ``rows`` the assignment (partition x
    slot, broker index, -1 padded), ``first`` each partition's first replica (broker index, -1 none)."""
    names, topic = topic_codes(state)
    n, n_t = state.n_brokers, len(names)
    elig = state.eligible_index_arr
    ids = [state.bid(b) for b in elig.tolist()]
    held = topic_matrix(state, rows)[:, elig]
    frozen_rows = np.where(state.frozen[:, None], state.R, -1)  # any negative pad is "no replica" (-2: equivalent)
    fixed = topic_matrix(state, frozen_rows)[:, elig]
    has = first >= 0
    pref = np.bincount(topic[has] * n + first[has], minlength=n_t * n).reshape(n_t, n)[:, elig]
    movable = ~state.frozen
    # A wider rf_max (+ 2) only adds zero columns, which _pairs drops; with no partitions there is no topic to read it.
    rf_max = int(state.rf_target.max()) + 1 if state.n_parts else 1
    by_rf = np.bincount(topic[movable] * rf_max + state.rf_target[movable], minlength=n_t * rf_max).reshape(n_t, rf_max)
    return tuple(
        TopicLoad(names[t], _pairs(by_rf[t], list(range(rf_max))), _pairs(fixed[t], ids), _pairs(held[t], ids),
                  _pairs(pref[t], ids))
        for t in range(n_t)
    )


def view_racks(state: ClusterState) -> tuple[tuple[int, str | None], ...]:
    # Without racks every broker's rack is None: reading it anyway (`or True`) is an equivalent mutant.
    return tuple((state.bid(b), state.snapshot.brokers[b].rack if state.has_racks else None) for b in state.eligible_idx)


@lru_cache(maxsize=8192)
def replica_bands(by_rf: tuple[tuple[int, int], ...], fixed: tuple[tuple[int, int], ...],
                  racks: tuple[tuple[int, str | None], ...]) -> dict[int, tuple[int, int]]:  # fmt: skip
    """Per eligible broker id, floor..ceil of its share of one topic's replicas: the cluster's own
    rack-aware share (``balance.placement_targets``) applied to the topic alone. Where no rack-safe
    placement of the topic exists the planner refuses anyway; the even share then stands."""
    fixed_map = {b: (n, 0) for b, n in fixed}
    try:
        return placement_targets(dict(racks), {rf: (n, 0) for rf, n in by_rf}, fixed_map, 0.0).replicas
    except ValueError:
        total = sum(rf * n for rf, n in by_rf) + sum(n for _, n in fixed)
        band = count_bounds(total, len(racks))
        return {b: band for b, _ in racks}


def band_matrices(state: ClusterState) -> tuple[np.ndarray, np.ndarray]:
    """Per topic and broker index, the replica band's floor and ceiling (0 for a broker not eligible).
    They depend on the snapshot and options only, not on any move."""
    names, _ = topic_codes(state)
    # Float tallies (dtype None) hold the same small integers and compare alike: equivalent mutants. ``first`` feeds
    # only topic_loads' first-replica counts, which the bands do not read, so its mutants are equivalent too.
    lo = np.zeros((len(names), state.n_brokers), dtype=np.int64)
    hi = np.zeros((len(names), state.n_brokers), dtype=np.int64)
    racks = view_racks(state)
    R = state.R
    first = R[:, 0].astype(np.int64) if state.n_parts else np.zeros(0, dtype=np.int64)
    elig = state.eligible_idx
    for t, load in enumerate(topic_loads(state, R, first)):
        bands = replica_bands(load.by_rf, load.fixed, racks)
        for b in elig:
            lo[t, b], hi[t, b] = bands[state.bid(b)]
    return lo, hi


def leader_band(load: TopicLoad, brokers: int) -> tuple[int, int]:
    """floor..ceil of the topic's first replicas on eligible brokers over those brokers."""
    return count_bounds(sum(n for _, n in load.preferred), brokers)


def _outside(count: int, band: tuple[int, int]) -> int:
    # Bands are floor..ceil (one wide at most): one of the two differences is >= 0, so the 0 is an equivalent mutant.
    return max(0, band[0] - count, count - band[1])


class TopicSpreadGoal(Goal):
    name = "topic-spread"
    priority = 45  # after the replica counts and bytes (it moves within what they leave), before the leader goals
    view_topics = True
    default = False  # opt-in: on the corpus it moves far more than 5 % more bytes (docs/PLANNER.md, "Topic spread")
    target = ("each topic's replicas and preferred (first) replicas on every eligible broker within floor..ceil of "
              "the topic's share (its rack's share where rack safety forces it), where reachable")

    def __init__(self) -> None:
        self.ready = False

    # ------------------------------------------------------------------ check

    def check(self, view: BalanceView) -> GoalCheck:
        """Replicas and first replicas outside their topics' bands, summed over topics: per broker, and
        the cluster's total as the figure. A view without topic loads (a goal left out) judges nothing."""
        per = {b.broker_id: 0 for b in view.brokers}
        n = len(view.brokers)
        for load in view.topics:
            have = dict(load.replicas)
            for b, band in replica_bands(load.by_rf, load.fixed, view.racks).items():
                per[b] += _outside(have.get(b, 0), band)
            led = dict(load.preferred)
            band = leader_band(load, n)
            for b in per:
                per[b] += _outside(led.get(b, 0), band)
        offenders = tuple(b for b, x in per.items() if x)
        return self.verdict(float(sum(per.values())), not offenders, offenders, {b: float(x) for b, x in per.items()})

    # ------------------------------------------------------------------ tallies

    def _setup(self, state: ClusterState) -> None:
        """Per topic and broker index: the replicas now (kept current from ``state.changes``) and the band."""
        if self.ready:
            return
        names, self.topic = topic_codes(state)
        rows = state.final_rows()
        self.held = topic_matrix(state, rows)
        self.version = [0] * state.n_brokers  # per broker, changes to partitions it holds or held (see _transfer)
        self.failed: dict[tuple[int, int, int], tuple[int, int]] = {}  # (topic, donor, receiver) -> versions at failure
        self.seen = len(state.changes)
        self.lo, self.hi = band_matrices(state)
        # The same tallies and bands per broker and topic: a swap reads two brokers' columns of every topic, strided reads
        # of the matrices above.
        self.by_broker, self.lo_by, self.hi_by = self.held.T.copy(), self.lo.T.copy(), self.hi.T.copy()
        self.racks = np.asarray(state.rack, dtype=np.int64)
        order = np.lexsort((np.arange(state.n_parts), state.sizes, self.topic))
        cuts = np.searchsorted(self.topic[order], np.arange(len(names) + 1))  # (a cut past the last: never read)
        self.by_topic = [order[cuts[t] : cuts[t + 1]] for t in range(len(names))]  # each topic's partitions, smallest first
        self.ready = True  # False: recounted from the current rows each time, the same tallies (equivalent)

    def _sync(self, state: ClusterState) -> None:
        changes = state.changes
        for p, src, dst in changes[self.seen :]:
            t = self.topic[p]
            if src >= 0:
                self.held[t, src] -= 1
                self.by_broker[src, t] -= 1
                self.version[src] += 1
            if dst >= 0:
                self.held[t, dst] += 1
                self.by_broker[dst, t] += 1
            for b in state.row(p):  # dst, and the brokers whose replica of p may now move elsewhere rack-safely
                self.version[b] += 1
        self.seen = len(changes)

    def accept_move(self, state: ClusterState, p: int, src: int, dst: int) -> bool:
        """A later goal's move may not take a topic above its band on the receiver, nor below it on an
        eligible sender."""
        self._setup(state)
        self._sync(state)
        t = self.topic[p]
        if self.held[t, dst] + 1 > self.hi[t, dst]:
            return False
        return not state.eligible[src] or self.held[t, src] - 1 >= self.lo[t, src]

    # ------------------------------------------------------------------ exact model

    def exact_terms(self, model: ExactModel) -> None:
        """Per topic and eligible broker: its fixed replicas + the model's replicas of the topic within the band."""
        state = model.state
        band_lo, band_hi = band_matrices(state)
        _, topic = topic_codes(state)
        # Only topics with a partition in the model: a topic the plan may not move has nothing to hold.
        present, local = np.unique(topic[model.parts], return_inverse=True)
        frozen_rows = np.where(state.frozen[:, None], state.R, -1)  # -2, or astype(None) below: equivalent
        fixed = topic_matrix(state, frozen_rows)[present][:, model.elig]
        rows = local.ravel()[model.p_of] * model.n_e + model.b_of
        lo = (band_lo[present][:, model.elig] - fixed).ravel().astype(np.float64)
        hi = (band_hi[present][:, model.elig] - fixed).ravel().astype(np.float64)
        model.add(rows, model.var.ravel(), np.ones(model.nx), lo, hi)

    # ------------------------------------------------------------------ heuristic

    def optimize(self, state: ClusterState) -> None:
        self._setup(state)
        self._sync(state)
        elig = state.eligible_index_arr
        self._indexes(state)
        lo, hi = self.lo[:, elig], self.hi[:, elig]
        held = self.held[:, elig]
        # `<=` / `>=` are equivalent: a topic only at its band's edges leaves _spread at once.
        for t in np.flatnonzero(((held < lo) | (held > hi)).any(axis=1)).tolist():
            self._spread(state, t, elig)

    def _indexes(self, state: ClusterState) -> None:
        """The byte guard, and the indexes a swap reads, followed through the plan's changes from here on."""
        self.guard = ByteGuard(state)
        self.swap_pools = SwapPools(state, self.topic)

    def _spread(self, state: ClusterState, t: int, elig: np.ndarray) -> None:
        """Bring one topic into its band, one transfer at a time; each lowers the topic's total distance
        outside its band by one and raises no other topic's, so it ends."""
        movable = MovableReplicas(state, self.by_topic[t])
        lo, hi = self.lo[t][elig], self.hi[t][elig]  # (the band never changes)
        while True:
            self._sync(state)
            movable.sync(state)
            self.swap_pools.sync(state)
            c = self.held[t][elig]
            over, under = c - hi, lo - c
            # Brokers by need, most first, then by index (elig is in index order and the sorts are stable).
            if (over > 0).any():
                donors = _neediest(elig, over, over > 0)
                receivers = _neediest(elig, hi - c, under > 0 if (under > 0).any() else c < hi)
            elif (under > 0).any():  # `>= 0` is equivalent: with nobody under, no receiver, and _transfer fails
                receivers = _neediest(elig, under, under > 0)
                # With nobody over, every donor has c - lo = 1 (lo < c <= hi <= lo + 1): `+(c - lo)` and `-(c + lo)` (the
                # same key for every donor) are equivalent.
                donors = _neediest(elig, c - lo, c > lo)
            else:
                return
            if not self._transfer(state, t, donors[:PARTNERS].tolist(), receivers, movable):
                return

    def _transfer(self, state: ClusterState, t: int, donors: list[int], receivers: np.ndarray | list[int],
                  movable: MovableReplicas) -> bool:  # fmt: skip
        """One replica of topic t from a donor to a receiver (``receivers`` in order: per donor, the first
        of its rack, then the first of the others): alone, in a swap for another topic's replica, or, where
        neither works, through a third broker (two moves, its count unchanged). ``movable``: topic t's
        replicas this goal may move, as the state stands."""
        receivers = np.asarray(receivers, dtype=np.int64)
        rack = self.racks[receivers]
        pairs = []
        near_of: dict[int, list[int]] = {}  # per donor's rack: its receivers (hundreds at 400 brokers, a few kept)
        for a in donors:
            x = state.rack[a]
            near = near_of.get(x)
            if near is None:
                same = receivers[rack == x][:PARTNERS].tolist()
                near = near_of[x] = same + receivers[rack != x][: PARTNERS - len(same)].tolist()
            pairs += [(a, r) for r in near]
        version, failed = self.version, self.failed
        for a, r in pairs:
            # A pair that failed fails again until a change touches a partition on one of its brokers: a single move or
            # a swap between them reads both brokers' counts, bytes and loads, and the rows (rack safety, caps) of the
            # partitions on them (``version``, bumped in _sync). Skipping it gives the same plan; most tries were such
            # repeats (at 50 brokers 27,221 tries for 901 transfers, 9,377 with the skip). Equivalent mutants: any
            # stamp that still changes with every such change (another step, more brokers bumped, no record or no skip
            # at all) gives the same plan, only slower.
            stamp = (version[a], version[r])
            if failed.get((t, a, r)) == stamp:
                continue
            cand = [p for p in movable.get(a) if r not in state.row(p)]
            if self._single(state, cand, a, r) or self._swap(state, t, cand[:SWAP_TRIES], a, r):
                return True
            failed[(t, a, r)] = stamp
        # Chains cost a search per third broker: only between the neediest pairs.
        return any(self._chain(state, t, a, r, movable) for a, r in pairs[:CHAIN_PAIRS])

    def _chain(self, state: ClusterState, t: int, a: int, r: int, movable: MovableReplicas) -> bool:
        """q (topic t) x -> r, then p (topic t) a -> x: a loses one of t, r gains one, x ends as it was.
        The later move is made first, so no broker's count leaves its range on the way."""
        from_a = movable.get(a)
        guard, sizes, row = self.guard, state.sizes, state.row
        # The guard's test is per broker: a's part depends on p alone and r's on q alone, so each is asked once per
        # replica (the same answers as asking all three together for every (q, p)), and with no p that a may give
        # there is no chain. Nothing moves until a chain is found (a trial is put back), so the answers hold.
        a_ok = {p: guard.allows(state, {a: -float(sizes[p])}) for p in from_a}
        if not any(a_ok.values()):
            return False
        r_ok: dict[int, bool] = {}
        for x in state.eligible_idx:
            # (q moves x -> r first: where the count goals refuse that pair, every q is refused.)
            if x in (a, r) or not state.counts_accept(x, r):
                continue
            inward = [p for p in islice((p for p in from_a if x not in row(p)), SWAP_TRIES) if a_ok[p]]
            if not inward:
                continue
            for q in islice((q for q in movable.get(x) if r not in row(q)), SWAP_TRIES):
                sq = float(sizes[q])
                ok = r_ok.get(q)
                if ok is None:
                    ok = r_ok[q] = guard.allows(state, {r: sq})
                if not ok or not state.accepts(q, x, r):
                    continue
                for p in inward:
                    sp = float(sizes[p])
                    if p == q or not guard.allows(state, {x: sp - sq}):
                        continue
                    state.move(q, x, r)
                    if state.accepts(p, a, x):
                        state.move(p, a, x)
                        state.restore(p)
                        state.restore(q)
                        self._sync(state)
                        return True
                    state.move(q, r, x)  # p may not follow: q goes back, and the plan is as it was
                    state.restore(q)
                    break
        return False

    @staticmethod
    def _once(state: ClusterState, p: int, src: int) -> bool:
        """Moving p's replica off ``src`` keeps p at one change: p is untouched, or ``src`` is where the
        plan brings it (the replica is sent on instead)."""
        return not state.touched[p] or src not in state.original_row(p)

    def _single(self, state: ClusterState, cand: list[int], a: int, r: int) -> bool:
        if not cand or not state.counts_accept(a, r):
            return False
        # The byte guard (moving p leaves neither broker further outside the byte band) judges every candidate; the
        # vetoes then go through the ones it allows, in order.
        for p in self.guard.allowed(state, a, r, cand):
            if state.accepts(p, a, r):
                state.move(p, a, r)
                state.restore(p)  # sent back where it came from: no move at all
                return True
        return False

    def _swap(self, state: ClusterState, t: int, cand: list[int], a: int, r: int) -> bool:
        """p (topic t) a -> r and q (another topic u) r -> a: counts unchanged, u's bands kept on both.
        q is looked for among r's replicas of the topics with room on both sides (a's count of u below
        its ceiling, r's above its floor), closest in size to p first (``SwapPools``)."""
        held = self.by_broker
        slack = (held[r] > self.lo_by[r]) & (held[a] < self.hi_by[a])
        slack[t] = False  # (None stores False in a bool array: equivalent)
        if not slack.any():
            return False
        # Most swaps fail on the byte guard: a p with no replica of r's in the guard's span of sizes is skipped at once,
        # before the vetoes are asked about it (the same answers in either order: both only read the state). The span
        # holds every amount allows_each passes, so it only spares asking: no span (None) is equivalent, and so is any
        # test skipping less (searching for the text "right", which sorts after every number: always the end).
        span = self.guard.moved_span(state, a, r)
        if span is not None:
            # First against every size r's pool has held (``SwapPools.near_any``): where none is near any p's, no swap
            # is, and the pool is not filtered (at 400 brokers, 87 % of the swaps asked failed so, on a filtered pool
            # of 620 entries on average out of 4,900; the sizes alone ruled out 63 % of them).
            own = state.sizes[np.asarray(cand, dtype=np.int64)].astype(np.float64)
            if not self.swap_pools.near_any(r, own - span[1], own - span[0]).any():
                return False
        on_r, topics, sizes, slots, live = self.swap_pools.at(r)
        keep = slack[topics] & live & ~matrix.slots_holding(slots, a)
        pool, sizes = on_r[keep], sizes[keep]
        if pool.size == 0:
            return False
        if span is not None:  # every candidate's test at once
            ordered = np.sort(sizes)
            # (Side "left" in the second search, equivalent, loses only a size of exactly sp - span[0]: it would move
            # span[0], more than a byte short of anything allows_each passes.)
            hopeless = np.searchsorted(ordered, own - span[1]) == np.searchsorted(ordered, own - span[0], "right")
            cand = np.asarray(cand, dtype=np.int64)[~hopeless].tolist()
        # The vetoes (at 200 brokers rack safety refuses most of a cross-rack pair's candidates).
        cand = [p for p in cand if state.accepts(p, a, r, count_neutral=True)]
        for p in cand:
            sp = float(state.sizes[p])
            near = nearest(pool, np.abs(sizes - sp), SEARCH)
            # astype(None) is float64 too: equivalent.
            fine = self.guard.allows_each(state, a, r, sp - state.sizes[near].astype(np.float64))
            for q in near[fine].tolist():
                if state.accepts(q, r, a, count_neutral=True):
                    state.move(p, a, r)
                    state.move(q, r, a)
                    state.restore(p)
                    state.restore(q)
                    self._sync(state)
                    return True
        return False

    def lead(self, state: ClusterState, choice: LeaderChoice) -> None:
        """First replicas, once the preferred-leader goal chose them: within each partition, from a broker
        above the topic's leader band (or above its floor while another broker is below it) to an
        electable fellow replica below it (``choice`` changed in place; the same replica sets). Every
        broker's preferred count stays within the preferred-leader goal's bounds: where the hand-over
        alone would break them, a partition of another topic that the receiver is first of and the
        giver can lead goes back the other way (both topics' bands kept), so the counts do not change.
        A partition whose current leader is the new first replica goes first: it needs no election.
        Each change lowers the topic's distance outside its band and raises no other's, so it ends.

        Handing over topic by topic within the bounds can block where the bounds bind in between (a
        broker at its floor must give one topic's leadership to take another's): so first every topic
        is spread with the bounds unheld, and that is kept when it ends within them; else the choice is
        put back and spread within them at every step."""
        self._setup(state)
        pref, col = choice.preferred.copy(), choice.column.copy()
        # Unbounded. Equivalent mutants: -2 below or 2^63 above (no count reaches them), and 1 below: an eligible
        # broker gives only while first of more of the topic than its bound, which is >= 1 (the ceil of a topic first
        # on it, or a floor someone is under), so it is first of 2 or more and keeps 1.
        self._lead(state, choice, (-1, 1 << 62))
        lo, hi = choice.bounds
        held = np.bincount(choice.preferred[choice.preferred >= 0], minlength=state.n_brokers)[state.eligible_index_arr]
        if ((held >= lo) & (held <= hi)).all():
            return
        choice.preferred[:], choice.column[:] = pref, col
        self._lead(state, choice, choice.bounds)

    def _lead(self, state: ClusterState, choice: LeaderChoice, bounds: tuple[int, int]) -> None:
        """The hand-overs within ``bounds`` (``topic_spread_leaders``, compiled), on ``choice`` in place."""
        from kafka_rebalance.planner.goals.topic_spread_leaders import spread_leaders  # (numba: imported where needed)

        names, topic = topic_codes(state)
        order = np.concatenate([*self.by_topic, np.zeros(0, dtype=np.int64)]).astype(np.int64)
        cuts = np.concatenate([[0], np.cumsum([len(x) for x in self.by_topic])]).astype(np.int64)
        pref, col = choice.preferred.astype(np.int64), choice.column.astype(np.int64)
        spread_leaders(topic.astype(np.int64), order, cuts, choice.final_rows.astype(np.int64),
                       choice.electable.astype(bool), state.frozen.astype(bool), state.eligible_arr.astype(bool),
                       state.eligible_index_arr.astype(np.int64), state.leader.astype(np.int64), pref, col, len(names),
                       int(bounds[0]), int(bounds[1]))  # fmt: skip
        choice.preferred[:], choice.column[:] = pref, col


def _neediest(ids: np.ndarray, need: np.ndarray, among: np.ndarray) -> np.ndarray:
    """``ids`` where ``among``, by ``need`` there, most first (stable: ties keep the order of ``ids``)."""
    return ids[among][np.argsort(-need[among], kind="stable")]


class MovableReplicas:
    """Per broker, one topic's partitions whose replica there the topic-spread goal may move: replicas the plan
    already brings there first (sent on instead, they cost no move), then the replicas of partitions the plan
    has not changed, each group smallest first. A partition the plan changes already never moves twice.

    Built once per topic and followed through the plan's changes (``sync``): rebuilt for every transfer, a pass
    over every partition of the topic, it was most of the goal's time at 200 brokers."""

    def __init__(self, state: ClusterState, by_size: np.ndarray) -> None:
        ps = by_size[~state.frozen[by_size] & ~state.hot[by_size]].tolist()
        self.rank = {p: i for i, p in enumerate(ps)}  # smallest first (the topic's order), frozen and hot left out
        self.parts = ps
        self.arrived: dict[int, list[int]] = {}  # broker -> ranks of changed partitions it receives
        self.kept: dict[int, list[int]] = {}  # broker -> ranks of unchanged partitions on it
        self.member: dict[int, tuple[bool, list[int]]] = {}  # partition -> (changed, the brokers it is listed under)
        self.seen = len(state.changes)
        self.lists: dict[int, list[int]] = {}
        for p in ps:
            self._enter(state, p)

    def _enter(self, state: ClusterState, p: int) -> None:
        changed = bool(state.touched[p])
        if changed:
            orig = state.original_row(p)
            brokers = [b for b in state.row(p) if b not in orig]
        else:
            brokers = [b for b in state.row(p) if b >= 0]
        into = self.arrived if changed else self.kept
        r = self.rank[p]
        for b in brokers:
            bisect.insort(into.setdefault(b, []), r)
            self.lists.pop(b, None)
        self.member[p] = (changed, brokers)

    def sync(self, state: ClusterState) -> None:
        moved, self.seen = state.changed_since(self.seen)
        for p in (p for p in moved if p in self.rank):
            changed, brokers = self.member[p]
            into = self.arrived if changed else self.kept
            r = self.rank[p]
            for b in brokers:
                into[b].remove(r)
                self.lists.pop(b, None)
            self._enter(state, p)

    def get(self, b: int) -> list[int]:
        """Broker b's movable partitions, in order (the list is this object's: read it, never change it)."""
        got = self.lists.get(b)  # (None, rebuilt every time: the same list, and callers only read it; equivalent)
        if got is None:
            got = self.lists[b] = [self.parts[r] for r in self.arrived.get(b, []) + self.kept.get(b, [])]
        return got


class SentOn:
    """Per broker, the partitions the plan moved a replica of onto it that are still there (and not hot), in
    partition order: the replicas a swap may send on at no extra move. Followed through the plan's changes
    (``sync``), each change updating only its partition's entries (Python lists: kept as arrays through every change,
    an insert into thousands of rows each, it was a sixth of planning at 400 brokers)."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self.ever = {r: set(ps) for r, ps in state.arrivals.items()}  # only moves arrive: an added replica does not
        self.listed: dict[int, list[int]] = {}  # broker -> its partitions, in order
        self.where: dict[int, list[int]] = {}  # partition -> the brokers it is listed under
        self.seen = len(state.changes)
        for p in sorted(set().union(*self.ever.values())) if self.ever else []:  # (the empty union alike: equivalent)
            here = self._here(state, p)
            if here:
                self.where[p] = here
            for r in here:
                self.listed.setdefault(r, []).append(p)

    def _here(self, state: ClusterState, p: int) -> list[int]:
        """The brokers p is listed under: ones the plan moved a replica of p onto that still hold it (none if p is hot)."""
        if state.hot[p]:
            return []
        orig = state.original_row(p)
        return [r for r in state.row(p) if r not in orig and p in self.ever.get(r, ())]

    def _enter(self, state: ClusterState, p: int) -> None:
        before = self.where.pop(p, [])
        here = self._here(state, p)
        for r in set(before) | set(here):
            listed = self.listed.setdefault(r, [])
            i = bisect.bisect_left(listed, p)
            there = i < len(listed) and listed[i] == p
            if r not in here:
                del listed[i]
            elif not there:
                listed.insert(i, p)
        if here:
            self.where[p] = here

    def sync(self, state: ClusterState) -> list[int]:
        """Follow the changes since the last sync; the partitions they changed, in order."""
        changes = state.changes
        moved = set()
        for p, src, dst in changes[self.seen :]:
            if src >= 0 and dst >= 0:
                self.ever.setdefault(dst, set()).add(p)
            moved.add(p)
        self.seen = len(changes)
        ordered = sorted(moved)
        for p in ordered:
            self._enter(state, p)
        return ordered

    def parts(self, r: int) -> np.ndarray:
        """r's partitions sent on to it, in partition order."""
        return np.asarray(self.listed.get(r, []), dtype=np.int64)

    def at(self, r: int) -> tuple[np.ndarray, np.ndarray]:
        """``parts(r)`` and their rows now (-1 padded)."""
        parts = self.parts(r)
        return parts, matrix.take(self.state.now, parts)


class Unchanged:
    """Per broker, the partitions on it that the plan has not changed (and that may move: not frozen, not hot), in
    partition order, with their rows (the original ones, as they are unchanged): what a swap may send back at one
    move."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state

    def parts(self, b: int) -> np.ndarray:
        state = self.state
        ps = state.broker_parts(b)
        return ps[~state.frozen[ps] & ~state.hot[ps] & ~state.touched[ps]]

    def at(self, b: int) -> tuple[np.ndarray, np.ndarray]:
        parts = self.parts(b)
        return parts, matrix.take(self.state.R, parts)


class SwapPools:
    """Per receiver, what it may send back in a swap whatever the donor: its unchanged partitions and those sent on
    to it (``Unchanged``, ``SentOn``), with their topics, sizes and brokers now, in one set of arrays read when a swap
    first asks for the receiver. From then on each change marks its partition's entries dead and queues the live ones,
    appended at the receiver's next ask (``sync``, ``at``), so an ask copies nothing: patched and joined again at every
    ask after a change, the pools were 3 % of the 400-broker plan. The entries' order is no contract: a swap takes the
    nearest by size, then by partition. Dead entries are dropped when they outnumber the live ones. ``near_any`` tests
    sizes against every entry held since, live or dead, kept sorted."""

    compact_at = 64  # entries a pool holds before its dead ones are dropped (fewer: not worth a copy)

    def __init__(self, state: ClusterState, topic: np.ndarray) -> None:
        self.state, self.topic = state, topic
        self.sizes = state.sizes.astype(np.float64)
        self.sent_on, self.unchanged = SentOn(state), Unchanged(state)
        self.arrays: dict[int, list[np.ndarray]] = {}  # receiver -> [parts, topics, sizes, rows, live], with room
        self.used: dict[int, int] = {}  # receiver -> entries used in its arrays
        self.dead: dict[int, int] = {}  # receiver -> entries of those no longer live
        self.slot: dict[int, dict[int, int]] = {}  # receiver -> partition -> its live entry
        self.holders: dict[int, set[int]] = {}  # partition -> receivers with a live entry of it
        # receiver -> its entries' sizes sorted (live or dead: a superset of any pool), and how many entries that covers
        self.ordered: dict[int, tuple[np.ndarray, int]] = {}
        # Live entries not appended yet: receiver -> partitions, appended at its next ask (most receivers see several
        # changes between two asks, and an append is a dozen NumPy calls); partition -> receivers it was queued for.
        self.waiting: dict[int, dict[int, None]] = {}
        self.queued: dict[int, set[int]] = {}

    def sync(self, state: ClusterState) -> None:
        frozen, hot, touched, built = state.frozen, state.hot, state.touched, self.arrays
        for p in self.sent_on.sync(state):
            members = set(self.sent_on.where.get(p, ()))
            if not (touched[p] or frozen[p] or hot[p]):
                members.update(state.original_row(p))
            for r in self.holders.pop(p, set()):
                built[r][4][self.slot[r].pop(p)] = False
                self.dead[r] += 1
                if 2 * self.dead[r] > self.used[r] > self.compact_at:
                    self._compact(r)
            for r in self.queued.pop(p, ()):  # (where r has appended it since, nothing waits)
                self.waiting.get(r, {}).pop(p, None)
            # (A row changes only with a change, which queues the partition afresh: appended later, it reads the same row.)
            joins = {r for r in members if r in built}
            for r in joins:
                self.waiting.setdefault(r, {})[p] = None
            if joins:
                self.queued[p] = joins

    def _append(self, r: int, parts: np.ndarray) -> None:
        arrays, n, k = self.arrays[r], self.used[r], len(parts)
        rows = matrix.take(self.state.now, parts)
        if rows.shape[1] > len(arrays[3]):  # a row grew past every other: the pool's slots grow with it
            arrays[3] = np.pad(arrays[3], ((0, rows.shape[1] - len(arrays[3])), (0, 0)), constant_values=-1)
        if n + k > len(arrays[0]):
            room = max(2 * (n + k), 16)
            for i, x in enumerate(arrays):
                if i == 3:  # slot-major
                    grown = np.zeros((len(x), room), dtype=x.dtype)
                    grown[:, :n] = x[:, :n]
                else:
                    grown = np.zeros(room, dtype=x.dtype)
                    grown[:n] = x[:n]
                arrays[i] = grown
        arrays[0][n : n + k] = parts
        arrays[1][n : n + k] = self.topic[parts]
        arrays[2][n : n + k] = self.sizes[parts]
        arrays[3][:, n : n + k] = -1
        arrays[3][: rows.shape[1], n : n + k] = rows.T
        arrays[4][n : n + k] = True
        slot = self.slot[r]
        for i, p in enumerate(parts.tolist()):
            slot[p] = n + i
            self.holders.setdefault(p, set()).add(r)
        self.used[r] = n + k

    def near_any(self, r: int, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Per window [lo[i], hi[i]], whether an entry r's pool has held since it last dropped its dead ones (live or
        not) has its size within it: False means no partition r may send back has. The sizes are sorted again only
        once more than ``compact_at`` entries joined since; those that joined since are compared directly."""
        self.at(r)
        n, sizes = self.used[r], self.arrays[r][2]
        ordered, covered = self.ordered.get(r, (sizes[:0], 0))
        if n - covered > self.compact_at:
            ordered, covered = np.sort(sizes[:n]), n
            self.ordered[r] = (ordered, covered)
        hit = np.searchsorted(ordered, lo) != np.searchsorted(ordered, hi, "right")
        if covered < n:
            tail = sizes[covered:n]
            hit |= ((tail >= lo[:, None]) & (tail <= hi[:, None])).any(axis=1)
        return hit

    def _compact(self, r: int) -> None:
        n, arrays = self.used[r], self.arrays[r]
        live = np.flatnonzero(arrays[4][:n])
        self.arrays[r] = [np.take(x, live, axis=1) if i == 3 else x[live] for i, x in enumerate(arrays)]
        self.used[r], self.dead[r] = len(live), 0
        self.ordered.pop(r, None)  # sorted afresh from the live entries: the dead ones' sizes go with them
        self.slot[r] = {p: i for i, p in enumerate(self.arrays[r][0].tolist())}

    def at(self, r: int) -> Pool:
        """r's pool: partitions, their topics, sizes (floats), slots (slot x entry, -1 padded: a test for a broker
        reads each slot contiguously) and which entries are live (views into arrays a later ``sync`` changes: read
        them before the next)."""
        if r not in self.arrays:
            width = self.state.now.shape[1]
            self.arrays[r] = [np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64),
                              np.zeros((width, 0), self.state.now.dtype), np.zeros(0, bool)]  # fmt: skip
            self.used[r], self.dead[r], self.slot[r] = 0, 0, {}
            parts = np.concatenate([self.unchanged.parts(r), self.sent_on.parts(r)])
            self._append(r, parts)
        waiting = self.waiting.pop(r, None)
        if waiting:
            self._append(r, np.asarray(list(waiting), dtype=np.int64))
        n = self.used[r]
        parts, topics, sizes, slots, live = self.arrays[r]
        return parts[:n], topics[:n], sizes[:n], slots[:, :n], live[:n]
