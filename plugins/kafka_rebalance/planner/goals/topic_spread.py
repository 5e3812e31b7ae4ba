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

import weakref
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from kafka_rebalance.balance import count_bounds, placement_targets
from kafka_rebalance.planner.goals.base import Goal
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
_Pairs = list[tuple[tuple[int, int], ...]]
_fixed: weakref.WeakKeyDictionary[ClusterState, tuple[_Pairs, _Pairs]] = weakref.WeakKeyDictionary()
_bands: weakref.WeakKeyDictionary[ClusterState, tuple[np.ndarray, np.ndarray]] = weakref.WeakKeyDictionary()


def topic_codes(state: ClusterState) -> tuple[list[str], np.ndarray]:
    """The topics by name, and each partition's topic as an index into them (computed once per state)."""
    # (Equivalent mutant: skipping the cache recomputes the same. By a dict, not np.unique over an object array: a
    # third of the time at a million partitions.)
    got = _codes.get(state)
    if got is None:
        topics = [p.topic for p in state.parts]
        names = sorted(set(topics))
        code = {t: k for k, t in enumerate(names)}
        got = _codes[state] = (names, np.fromiter(map(code.__getitem__, topics), dtype=np.int64, count=len(topics)))
    return got


def _pairs(m: np.ndarray, ids: np.ndarray) -> list[tuple[tuple[int, int], ...]]:
    """Per row of ``m``, its nonzero entries as (ids[column], value), in column order. One ``nonzero`` over the whole
    matrix: per row, at a thousand topics of a view, it was most of ``topic_loads``' time."""
    t, b = np.nonzero(m)
    pairs = list(zip(ids[b].tolist(), m[t, b].tolist(), strict=True))
    cuts = np.searchsorted(t, np.arange(m.shape[0] + 1)).tolist()
    return [tuple(pairs[i:j]) for i, j in zip(cuts[:-1], cuts[1:], strict=True)]


def topic_matrix(state: ClusterState, rows: np.ndarray) -> np.ndarray:
    """Per topic and broker index, the replicas ``rows`` (partition x slot, -1 padded) put there."""
    names, topic = topic_codes(state)
    n = state.n_brokers
    valid = rows >= 0
    t = np.broadcast_to(topic[:, None], rows.shape)[valid]
    return np.bincount(t * n + rows[valid], minlength=len(names) * n).reshape(len(names), n)


def _fixed_loads(state: ClusterState) -> tuple[_Pairs, _Pairs]:
    """Per topic, what its bands are computed from (``TopicLoad.by_rf`` and ``.fixed``): the snapshot's and the
    options' alone, so computed once per state."""
    got = _fixed.get(state)
    if got is None:
        names, topic = topic_codes(state)
        n_t = len(names)
        elig = state.eligible_index_arr
        ids = np.asarray(state.broker_ids, dtype=np.int64)[elig]
        frozen_rows = np.where(state.frozen[:, None], state.R, -1)  # any negative pad is "no replica" (-2: equivalent)
        fixed = topic_matrix(state, frozen_rows)[:, elig]
        movable = ~state.frozen
        # A wider rf_max (+ 2) only adds zero columns, which _pairs drops; with no partitions there is no topic to read it.
        rf_max = int(state.rf_target.max()) + 1 if state.n_parts else 1
        by_rf = np.bincount(topic[movable] * rf_max + state.rf_target[movable], minlength=n_t * rf_max).reshape(n_t, rf_max)
        got = _fixed[state] = (_pairs(by_rf, np.arange(rf_max, dtype=np.int64)), _pairs(fixed, ids))
    return got


def topic_loads(state: ClusterState, rows: np.ndarray, first: np.ndarray) -> tuple[TopicLoad, ...]:
    """Every topic's loads over the eligible brokers, for a view: ``rows`` the assignment (partition x
    slot, broker index, -1 padded), ``first`` each partition's first replica (broker index, -1 none)."""
    names, topic = topic_codes(state)
    n, n_t = state.n_brokers, len(names)
    elig = state.eligible_index_arr
    ids = np.asarray(state.broker_ids, dtype=np.int64)[elig]
    held = topic_matrix(state, rows)[:, elig]
    has = first >= 0
    pref = np.bincount(topic[has] * n + first[has], minlength=n_t * n).reshape(n_t, n)[:, elig]
    by_rf, fixed = _fixed_loads(state)
    return tuple(map(TopicLoad, names, by_rf, fixed, _pairs(held, ids), _pairs(pref, ids)))


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
    They depend on the snapshot and options only, not on any move: computed once per state (read only)."""
    got = _bands.get(state)
    if got is None:
        names, _ = topic_codes(state)
        racks = view_racks(state)
        elig = state.eligible_index_arr
        ids = [state.bid(b) for b in elig.tolist()]
        lo = np.zeros((len(names), state.n_brokers), dtype=np.int64)
        hi = np.zeros((len(names), state.n_brokers), dtype=np.int64)
        if len(names) and len(ids):
            # Float tallies (dtype None) hold the same small integers and compare alike: equivalent mutants.
            bands = np.array([[bands[b] for b in ids] for bands in
                              map(replica_bands, *_fixed_loads(state), [racks] * len(names))], dtype=np.int64)
            lo[:, elig], hi[:, elig] = bands[:, :, 0], bands[:, :, 1]
        lo.flags.writeable = hi.flags.writeable = False
        got = _bands[state] = (lo, hi)
    return got


def leader_band(load: TopicLoad, brokers: int) -> tuple[int, int]:
    """floor..ceil of the topic's first replicas on eligible brokers over those brokers."""
    return count_bounds(sum(n for _, n in load.preferred), brokers)


@lru_cache(maxsize=8192)
def _band_rows(by_rf: tuple[tuple[int, int], ...], fixed: tuple[tuple[int, int], ...],
               racks: tuple[tuple[int, str | None], ...], ids: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``replica_bands`` as floors and ceilings in the order of ``ids`` (read only); a broker without a band has
    0..2^62, inside whatever it holds."""
    bands = replica_bands(by_rf, fixed, racks)
    lo = np.array([bands[b][0] if b in bands else 0 for b in ids], dtype=np.int64)
    hi = np.array([bands[b][1] if b in bands else 1 << 62 for b in ids], dtype=np.int64)
    lo.flags.writeable = hi.flags.writeable = False
    return lo, hi


def _counts(per_topic: list[tuple[tuple[int, int], ...]], col: dict[int, int]) -> np.ndarray:
    """Per topic and broker (``col``: its column), the topic's (broker, count) pairs as a matrix (a broker outside
    ``col`` left out)."""
    out = np.zeros((len(per_topic), len(col)), dtype=np.int64)
    cells = [(t, col[b], x) for t, pairs in enumerate(per_topic) for b, x in pairs if b in col]
    if cells:
        t, b, x = np.array(cells, dtype=np.int64).T
        out[t, b] = x
    return out


def _outside(count: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """How far each count lies outside lo..hi. (Bands are floor..ceil, one wide at most: one of the two differences
    is >= 0, so the 0 is an equivalent mutant.)"""
    return np.maximum(0, np.maximum(lo - count, count - hi))


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
        the cluster's total as the figure. A view without topic loads (a goal left out) judges nothing.
        (As matrices, topic by broker: a count and a band per topic and broker in Python was 1.2 s of a plan at
        400 brokers / 1M partitions, which judges two views.)"""
        ids = tuple(b.broker_id for b in view.brokers)
        col = {b: i for i, b in enumerate(ids)}
        n, n_t = len(ids), len(view.topics)
        lo, hi = np.zeros((n_t, n), dtype=np.int64), np.zeros((n_t, n), dtype=np.int64)
        lead = np.zeros((n_t, 2), dtype=np.int64)
        for t, load in enumerate(view.topics):
            lo[t], hi[t] = _band_rows(load.by_rf, load.fixed, view.racks, ids)
            lead[t] = leader_band(load, n)
        have = _counts([load.replicas for load in view.topics], col)
        led = _counts([load.preferred for load in view.topics], col)
        per_broker = (_outside(have, lo, hi) + _outside(led, lead[:, :1], lead[:, 1:])).sum(axis=0).tolist()
        per = dict(zip(ids, per_broker, strict=True))
        offenders = tuple(b for b, x in per.items() if x)
        return self.verdict(float(sum(per_broker)), not offenders, offenders, {b: float(x) for b, x in per.items()})

    # ------------------------------------------------------------------ tallies

    def _setup(self, state: ClusterState) -> None:
        """Per topic and broker index: the replicas now (kept current from ``state.changes``) and the band."""
        if self.ready:
            return
        names, self.topic = topic_codes(state)
        rows = state.final_rows()
        self.held = topic_matrix(state, rows)
        self.seen = len(state.changes)
        self.lo, self.hi = band_matrices(state)
        # Each topic's partitions, smallest first (then by partition): topic t's are order[cuts[t]:cuts[t + 1]].
        self.order = np.lexsort((np.arange(state.n_parts), state.sizes, self.topic)).astype(np.int64)
        self.cuts = np.searchsorted(self.topic[self.order], np.arange(len(names) + 1)).astype(np.int64)
        self.ready = True  # False: recounted from the current rows each time, the same tallies (equivalent)

    def _sync(self, state: ClusterState) -> None:
        changes = state.changes
        for p, src, dst in changes[self.seen :]:
            t = self.topic[p]
            if src >= 0:
                self.held[t, src] -= 1
            if dst >= 0:
                self.held[t, dst] += 1
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
        """Each topic outside its band, in topic order, spread into it (``topic_spread_moves``, compiled), and the
        moves it made replayed on ``state``."""
        # (numba: imported where needed)
        from kafka_rebalance.planner.goals.topic_spread_moves import spread

        self._setup(state)
        self._sync(state)
        elig = state.eligible_index_arr
        lo, hi = self.lo[:, elig], self.hi[:, elig]
        held = self.held[:, elig]
        # `<=` / `>=` are equivalent: a topic only at its band's edges is left at once.
        todo = np.flatnonzero(((held < lo) | (held > hi)).any(axis=1)).astype(np.int64)
        if not todo.size:
            return
        spread(state, todo, self.order, self.cuts, self.topic, self.held, self.lo, self.hi)
        self._sync(state)

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
        pref, col = choice.preferred.astype(np.int64), choice.column.astype(np.int64)
        spread_leaders(topic.astype(np.int64), self.order, self.cuts, choice.final_rows.astype(np.int64),
                       choice.electable.astype(bool), state.frozen.astype(bool), state.eligible_arr.astype(bool),
                       state.eligible_index_arr.astype(np.int64), state.leader.astype(np.int64), pref, col, len(names),
                       int(bounds[0]), int(bounds[1]))  # fmt: skip
        choice.preferred[:], choice.column[:] = pref, col
