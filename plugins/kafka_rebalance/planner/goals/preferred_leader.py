"""Preferred leaders: who is FIRST in each replica list, and so who leads after an election.

Runs on the assignment the replica goals produced. A partition's first replica
may only become a broker that is eligible and in the ISR (or a new replica, which
is in the ISR once its move completes), so the election after the plan succeeds.
Steps: (1) partitions whose first replica could not lead get one that can;
(2) brokers above ceil give preferred leadership to fellow replicas below floor
(then below ceil), and brokers below floor take it from ones above ceil (then
above floor). Among candidates it prefers the partition's current leader (no
election needed) and partitions that move anyway (no extra reassignment).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

import numpy as np

from kafka_rebalance.balance import count_bounds
from kafka_rebalance.planner.goals.base import Goal
from kafka_rebalance.planner.goals.view import BalanceView, GoalCheck
from kafka_rebalance.planner.state import ClusterState


def preferred_band(preferred_total: int, eligible_brokers: int, replica_tolerance: float) -> tuple[int, int]:
    """The preferred-leader goal's band: floor..ceil of the partitions whose first replica is on an eligible
    broker, per eligible broker, widened by the plan's replica tolerance. The planner, the snapshot's and
    the fleet's "needs a plan?" and the quality gate all take their bounds from here."""
    return count_bounds(preferred_total, eligible_brokers, replica_tolerance)


def preferred_bounds(state: ClusterState, first: np.ndarray) -> tuple[int, int]:
    """``preferred_band`` for these first replicas of the planner's state."""
    # `if state.n_parts or True` is equivalent: no partitions, no first replicas, a sum of 0.
    on_eligible = int(state.eligible_arr[first].sum()) if state.n_parts else 0
    return preferred_band(on_eligible, len(state.eligible_idx), state.options.replica_tolerance)


def electable_matrix(state: ClusterState, final_rows: np.ndarray) -> np.ndarray:
    """electable[p, j]: could broker final_rows[p, j] win a preferred election once the plan has run?"""
    # Equivalent mutants below: fromiter's count only presizes; the dtypes (ids, the ISR, the matrix) only need to
    # hold small integers exactly; any negative filler but -1 (a padding slot) matches nothing; with no partitions
    # iw = 1 gives an empty matrix all the same.
    parts = state.parts
    n_p = state.n_parts
    valid = final_rows >= 0
    isr_len = np.fromiter((len(p.isr) for p in parts), dtype=np.int64, count=n_p)
    iw = int(isr_len.max()) if n_p else 0
    in_isr = np.zeros(final_rows.shape, dtype=bool)
    if iw:
        ids = np.asarray(state.broker_ids, dtype=np.int64)
        flat = np.fromiter(chain.from_iterable(p.isr for p in parts), dtype=np.int64, count=int(isr_len.sum()))
        flat = np.searchsorted(ids, flat)
        rows = np.repeat(np.arange(n_p), isr_len)
        cols = np.arange(len(flat)) - np.repeat(np.cumsum(isr_len) - isr_len, isr_len)
        isr_matrix = np.full((n_p, iw), -2, dtype=np.int64)
        isr_matrix[rows, cols] = flat
        for k in range(iw):
            in_isr |= final_rows == isr_matrix[:, k : k + 1]
    is_new = valid.copy()
    for k in range(state.rf_max):
        is_new &= final_rows != state.R[:, k : k + 1]
    return valid & state.eligible_arr[np.maximum(final_rows, 0)] & (in_isr | is_new)


def keep_leader_columns(state: ClusterState, final_rows: np.ndarray, electable: np.ndarray) -> np.ndarray:
    """Per partition, the slot its first replica starts from: its current leader's, where the partition's
    replica set changes anyway and that leader stays in it and can lead; else slot 0 (the row as moved).

    A move replaces a replica in place, so moving the first replica away would put the new broker
    first and elect it although the old leader still holds a replica: a leader change no goal asked
    for. The reassignment is made anyway, so ordering it with the leader first is free. Untouched
    partitions keep their order (reordering one is a reassignment of its own).
    """
    n_p = state.n_parts
    col = np.zeros(n_p, dtype=np.int64)
    if not n_p:
        return col
    # Equivalent mutants: astype(None) (a float compares alike), and any(axis=None): where a row has no lead,
    # argmax of its all-False row is slot 0 anyway.
    leads = (final_rows == state.leader[:, None].astype(final_rows.dtype)) & (final_rows >= 0) & electable
    keep = state.touched & ~state.frozen & leads.any(axis=1)
    col[keep] = np.argmax(leads[keep], axis=1)
    return col


@dataclass(frozen=True)
class LeaderChoice:
    """What the goal decided, for the steps and the summary: each partition's final row and its first replica."""

    final_rows: np.ndarray  # partition x slot: broker index of each final replica, -1 past the row's end
    electable: np.ndarray  # partition x slot: that replica may lead (alive, and in the ISR or new)
    preferred: np.ndarray  # per partition: broker index of the final first replica
    column: np.ndarray  # per partition: the slot of final_rows it comes from
    bounds: tuple[int, int]  # floor..ceil of preferred partitions per eligible broker


class PreferredLeaderGoal(Goal):
    name = "preferred-leader"
    priority = 50
    leader_goal = True
    target = "every eligible broker first replica of floor..ceil of the even share of partitions"

    def __init__(self, balance: bool = True) -> None:
        # Left out by --goals, the goal still makes every first replica one that can win the
        # election (step 1): that is what makes a plan's leadership valid, not a balance rule.
        self.balance = balance

    def check(self, view: BalanceView) -> GoalCheck:
        lo, hi = view.preferred_bounds
        off = {b.broker_id: max(0, lo - b.preferred, b.preferred - hi) for b in view.brokers}
        offenders = tuple(b for b, n in off.items() if n)
        return self.verdict(max(off.values(), default=0), not offenders, offenders,
                            {b.broker_id: float(b.preferred) for b in view.brokers})

    def choice(self) -> LeaderChoice:
        """The decision, once ``optimize`` ran."""
        return LeaderChoice(self.final_rows, self.electable, self.pref, self.col, (self.floor, self.ceil))

    def optimize(self, state: ClusterState) -> None:
        final_rows = state.final_rows()
        electable = electable_matrix(state, final_rows)
        n_p, width = final_rows.shape
        changeable = ~state.frozen
        col = keep_leader_columns(state, final_rows, electable)
        # `if n_p or True` is equivalent: with no partitions the indexing gives the same empty int64 array.
        pref = final_rows[np.arange(n_p), col].astype(np.int64) if n_p else np.zeros(0, dtype=np.int64)
        pc = np.bincount(pref, minlength=state.n_brokers).astype(np.int64)  # any dtype: small counts (equivalent)
        leader = state.leader
        self.final_rows, self.electable, self.pref, self.col, self.pc = final_rows, electable, pref, col, pc

        # (1) a first replica that cannot lead gets replaced by one that can
        for p in np.flatnonzero(~electable[:, 0] & changeable).tolist():
            row, er = final_rows[p].tolist(), electable[p].tolist()
            # range(width) is equivalent: slot 0 is the one that cannot lead (er[0] is False).
            options = [(int(pc[row[j]]), j) for j in range(1, width) if row[j] >= 0 and er[j]]
            if options:
                self._switch(p, min(options)[1])

        elig = np.asarray(state.eligible_idx, dtype=np.int64)  # equivalent without the dtype: a non-empty list of ints
        self.floor, self.ceil = preferred_bounds(state, pref)
        lo, hi = self.floor, self.ceil
        if not self.balance:
            return
        by_pref = self._lists(pref[None, :].T, n_p)
        by_replica = self._lists(final_rows, n_p)
        # Any factor above 1 for the first term (3: equivalent), or either term as float, keeps the order: led
        # elsewhere first, then moving anyway.
        tier = (leader == pref).astype(np.int64) * 2 + (~state.touched).astype(np.int64)
        # Equivalent mutants of the stopping rules: a round that changes nothing, or starts with every count in the
        # band, changes nothing (give acts above the ceil, take below the floor, and _augment finds no source or no
        # destination), so stopping later (`and`, `> lo`, `< hi`, before = None) or augmenting anyway (`> lo`, `< hi`)
        # ends alike.
        for _ in range(3):
            before = pc.copy()
            self._give(state, elig, by_pref, tier, changeable, bound=lo)
            self._give(state, elig, by_pref, tier, changeable, bound=hi)
            self._take(state, elig, by_replica, changeable, bound=hi)
            self._take(state, elig, by_replica, changeable, bound=lo)
            if (pc == before).all() or ((pc[elig] >= lo) & (pc[elig] <= hi)).all():
                break
        if not ((pc[elig] >= lo) & (pc[elig] <= hi)).all():
            self._augment(state, elig, changeable)

    def _augment(self, state: ClusterState, elig: np.ndarray, changeable: np.ndarray) -> None:
        """Shift leadership along chains a -> b -> c when no direct hand-over exists (e.g. racks == RF).

        W[(a, b)] holds partitions preferred on a in which b could lead; C counts them.
        Each augmenting path found by BFS moves one preferred leadership per edge, so
        only the path's ends change their counts.
        """
        final_rows, electable, pref, pc = self.final_rows, self.electable, self.pref, self.pc
        n_b = state.n_brokers
        eligible = state.eligible_arr
        W: dict[tuple[int, int], list[int]] = {}
        # Any numeric dtype serves (mutation testing: float64 is equivalent): C holds small counts, compared with 0.
        C = np.zeros((n_b, n_b), dtype=np.int64)
        rows = np.flatnonzero(changeable)
        for j in range(final_rows.shape[1]):
            ok = electable[rows, j] & (final_rows[rows, j] != pref[rows]) & (final_rows[rows, j] >= 0)
            ps = rows[ok]
            a, b = pref[ps], final_rows[ps, j].astype(np.int64)
            np.add.at(C, (a, b), 1)
            keys = a * n_b + b
            order = np.argsort(keys, kind="stable")
            keys, ps = keys[order], ps[order]
            cuts = np.flatnonzero(np.diff(keys)) + 1
            for chunk_k, chunk_p in zip(np.split(keys, cuts), np.split(ps, cuts)):
                if len(chunk_k):
                    k = int(chunk_k[0])
                    W.setdefault((k // n_b, k % n_b), []).extend(chunk_p.tolist())

        def shift(p: int, a: int, b: int) -> None:
            row, er = final_rows[p].tolist(), electable[p].tolist()
            for x, e in zip(row, er):
                if x >= 0 and e and x != a:
                    C[a, x] -= 1
                if x >= 0 and e and x != b:
                    C[b, x] += 1
                    W.setdefault((b, x), []).append(p)
            self._switch(p, row.index(b))

        def pop(a: int, b: int) -> int | None:
            lst = W.get((a, b), [])  # a default of None is equivalent: `while lst` reads it as empty
            while lst:
                p = lst.pop()
                if pref[p] == a and b in final_rows[p].tolist():
                    return p
            return None

        def paths(src_ok: np.ndarray, dst_ok: np.ndarray) -> bool:
            # Equivalent mutants: any negative start (only `>= 0` reads it), any dtype (small ints, read via int()).
            parent = np.full(n_b, -1, dtype=np.int64)
            seen = np.zeros(n_b, dtype=bool)
            frontier = [int(x) for x in np.flatnonzero(src_ok & eligible)]
            seen[frontier] = True
            while frontier:
                nxt = []
                for a in frontier:
                    for b in np.flatnonzero((C[a] > 0) & ~seen & eligible).tolist():
                        seen[b] = True
                        parent[b] = a
                        if dst_ok[b]:
                            chain = [b]
                            while parent[chain[-1]] >= 0:
                                chain.append(int(parent[chain[-1]]))
                            chain.reverse()
                            for x, y in zip(chain, chain[1:]):
                                p = pop(x, y)
                                # Unreachable while ``shift`` keeps C exact (C counts the live entries of W), so
                                # `C[x, y] = 1` or `return False` here are equivalent mutants.
                                if p is None:  # stale count: repair it and retry
                                    C[x, y] = 0
                                    return True
                                shift(p, x, y)
                            return True
                        nxt.append(b)
                frontier = nxt
            return False  # True is equivalent: nothing changed, so the loop's next tries find nothing either

        lo, hi = self.floor, self.ceil
        for src_bound, dst_bound in ((hi, lo), (hi, hi), (lo, lo)):
            # The bound never binds (equivalent mutants: - 1, + 2, `pc + `, `* 2`, `lo - hi`, `/ 3`): a path moves one
            # from a source above src_bound to a destination below dst_bound <= src_bound, so a phase finds at most
            # min(the sources' excess, the destinations' shortfall) paths, and the sum of |pc - m| is at least that
            # for any m (m <= src_bound or m >= dst_bound), one more for m = (lo + hi) / 2.
            for _ in range(int(np.abs(pc[elig] - (lo + hi) / 2).sum()) + 1):
                src_ok = pc > src_bound
                dst_ok = (pc < dst_bound) & eligible
                # `and` for the first `or` is equivalent: with no source or no destination ``paths`` finds none.
                if not src_ok.any() or not dst_ok.any() or not paths(src_ok, dst_ok):
                    break

    @staticmethod
    def _lists(M: np.ndarray, n_p: int) -> tuple[np.ndarray, np.ndarray]:
        flat = M.ravel()
        order = np.argsort(flat, kind="stable")
        order = order[flat[order] >= 0]
        owners = flat[order]
        return (order // M.shape[1]).astype(np.int64), owners  # order >= 0: `/` then astype truncates alike (equivalent)

    def _switch(self, p: int, j: int) -> None:
        b = int(self.final_rows[p, j])
        d = int(self.pref[p])
        self.pref[p] = b
        self.col[p] = j
        self.pc[d] -= 1
        self.pc[b] += 1

    def _give(self, state, elig, by_pref, tier, changeable, bound: int) -> None:
        """Brokers above ceil hand partitions to a fellow replica below ``bound``."""
        pc, pref, final_rows, electable, leader = self.pc, self.pref, self.final_rows, self.electable, state.leader
        parts, owners = by_pref
        for d in elig.tolist():
            if pc[d] <= self.ceil:  # `<` is equivalent: at the ceil the loop below breaks before any switch
                continue
            # d + 2 is equivalent: other owners' partitions are skipped below (pref[p] != d), and the stable
            # sort by tier keeps d's own in order.
            a, b = np.searchsorted(owners, [d, d + 1])
            mine = parts[a:b]
            mine = mine[changeable[mine]]
            mine = mine[np.argsort(tier[mine], kind="stable")]
            for p in mine.tolist():
                if pc[d] <= self.ceil:
                    break
                if pref[p] != d:
                    continue
                row, er, lp = final_rows[p].tolist(), electable[p].tolist(), int(leader[p])
                best = None
                for j in range(len(row)):
                    x = row[j]
                    # Equivalent as `x < 0 and x == d or ...`: a padding slot is never electable, and d is above the
                    # ceil, so at or above any bound.
                    if x < 0 or x == d or not er[j] or pc[x] >= bound:
                        continue
                    key = (x != lp, int(pc[x]), j)
                    if best is None or key < best:  # `<=` is equivalent: keys differ in their slot j
                        best = key
                if best is not None:
                    self._switch(p, best[2])

    def _take(self, state, elig, by_replica, changeable, bound: int) -> None:
        """Brokers below floor take partitions they replicate from a preferred leader above ``bound``."""
        pc, pref, final_rows, leader = self.pc, self.pref, self.final_rows, state.leader
        parts, owners = by_replica
        for r in elig.tolist():
            if pc[r] >= self.floor:  # `>` is equivalent: at the floor the loop below breaks before any switch
                continue
            a, b = np.searchsorted(owners, [r, r + 1])
            mine = parts[a:b]
            mine = mine[changeable[mine] & (pref[mine] != r)]
            # astype(None) (float64 0/1) is equivalent: the stable sort orders it alike.
            mine = mine[np.argsort((leader[mine] != r).astype(np.int64), kind="stable")]
            for p in mine.tolist():
                if pc[r] >= self.floor:
                    break
                d = int(pref[p])
                if pc[d] <= bound or d == r:
                    continue
                row = final_rows[p].tolist()
                j = row.index(r)
                if self.electable[p, j]:
                    self._switch(p, j)
