"""The cluster as the planner sees it: arrays indexed by partition and by broker.

Brokers are addressed by their index in id order (``0..n-1``), partitions by their
index in the snapshot's (topic, partition) order. The original assignment lives in
one padded NumPy matrix; only partitions the planner changes get a Python list in
``cur``, so a million untouched partitions cost no Python objects beyond the
snapshot's own.
"""

from __future__ import annotations

import math
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

from kafka_rebalance.balance import rack_unsafe, rack_unsafe_rows
from kafka_rebalance.errors import PlanError
from kafka_rebalance.options import PlanOptions
from kafka_rebalance.planner import rows as matrix
from kafka_rebalance.snapshot import Snapshot

if TYPE_CHECKING:
    from kafka_rebalance.planner.goals.base import DonorIndex
    from kafka_rebalance.planner.goals.disk_capacity import DirTally


class ClusterState:
    def __init__(self, snapshot: Snapshot, options: PlanOptions) -> None:
        self.snapshot = snapshot
        self.options = options
        parts = snapshot.partitions
        self.parts = parts
        self.n_parts = n_p = len(parts)
        brokers = snapshot.brokers
        self.broker_ids = [b.id for b in brokers]
        self.n_brokers = n_b = len(brokers)
        if n_b == 0:
            raise PlanError(f"snapshot of {snapshot.cluster_id} lists no brokers; nothing to plan")
        self.index_of = {bid: i for i, bid in enumerate(self.broker_ids)}
        rack_names = sorted({b.rack for b in brokers if b.rack is not None})
        self.rack_names = rack_names
        code = {r: i for i, r in enumerate(rack_names)}
        self.rack = [code[b.rack] if b.rack is not None else -1 for b in brokers]
        self.has_racks = bool(rack_names)
        self.alive = [b.alive for b in brokers]
        decommission = set(options.decommission_brokers)
        self.decommissioned = [b.id in decommission for b in brokers]
        self.eligible = [b.alive and b.id not in decommission for b in brokers]
        self.eligible_idx = [i for i in range(n_b) if self.eligible[i]]
        if not self.eligible_idx:
            raise PlanError(
                f"no eligible broker left: every broker of {snapshot.cluster_id} is dead or in --decommission-brokers"
            )
        self.eligible_arr = np.asarray(self.eligible, dtype=bool)
        self.eligible_index_arr = np.asarray(self.eligible_idx, dtype=np.int64)
        # Each broker's replicas by size, built on first use by the goals (goals/base.donor_index).
        self.donor_indexes: dict[int, DonorIndex] = {}
        self.eligible_racks = {self.rack[i] for i in self.eligible_idx} if self.has_racks else set()
        self.n_racks = len(self.eligible_racks)

        # Replica matrix, padded with -1 where replication factors differ.
        rf = np.fromiter((len(p.replicas) for p in parts), dtype=np.int64, count=n_p)
        self.rf = rf
        self._rf_list: list[int] = rf.tolist()  # (rows are padded at the end: a slice is a row, cheaper than a filter)
        self.rf_max = rf_max = int(rf.max()) if n_p else 1
        total = int(rf.sum())
        flat_ids = np.fromiter(chain.from_iterable(p.replicas for p in parts), dtype=np.int64, count=total)
        ids_arr = np.asarray(self.broker_ids, dtype=np.int64)
        flat = np.searchsorted(ids_arr, flat_ids).astype(np.int32)
        self.uniform = bool(n_p == 0 or (rf == rf_max).all())
        if self.uniform:
            self.R = flat.reshape(n_p, rf_max)
        else:
            self.R = np.full((n_p, rf_max), -1, dtype=np.int32)
            starts = np.repeat(np.cumsum(rf) - rf, rf)
            cols = np.arange(total) - starts
            self.R[np.repeat(np.arange(n_p), rf), cols] = flat
        self.sizes = np.fromiter((p.size_bytes or 0 for p in parts), dtype=np.int64, count=n_p)
        self.rates = np.fromiter(
            (p.bytes_in_per_sec if p.bytes_in_per_sec is not None else math.nan for p in parts),
            dtype=np.float64,
            count=n_p,
        )
        leaders = np.fromiter((p.leader for p in parts), dtype=np.int64, count=n_p)
        self.leader = np.where(leaders >= 0, np.searchsorted(ids_arr, leaders), -1).astype(np.int32)
        excluded_topics = set(options.exclude_topics)
        self.excluded = np.fromiter((p.topic in excluded_topics for p in parts), dtype=bool, count=n_p)
        # A partition without a leader cannot be copied from; it stays where it is.
        self.frozen = self.excluded | (self.leader < 0)
        # A partition whose produce rate is at or above the delivered rate could never catch up.
        self.hot = np.nan_to_num(self.rates, nan=0.0) >= options.delivered_rate
        # The same as Python lists, for the vetoes and searches that read one partition at a time (hundreds of
        # thousands of times per plan at 200,000 partitions, where indexing a NumPy array costs several times more).
        self.size_of: list[int] = self.sizes.tolist()
        self.unmovable: list[bool] = (self.frozen | self.hot).tolist()
        if options.replication_factor is not None:
            self.rf_target = np.where(self.frozen, rf, options.replication_factor)
        else:
            self.rf_target = rf.copy()

        valid = self.R >= 0
        self.counts = np.bincount(self.R[valid], minlength=n_b).astype(np.int64)
        self.bytes = np.bincount(
            self.R[valid], weights=np.broadcast_to(self.sizes[:, None], self.R.shape)[valid], minlength=n_b
        ).astype(np.int64)
        self.start_bytes = self.bytes.copy()  # before the plan (state.bytes follows every change)
        # The disks' own limits, as found; ``disk_limit`` is what the plan must end under (lower where
        # --remove-log-dir takes dirs away), ``volume_limit`` what a step may never pass (peaks.py).
        self.volume_limit = disk_limits(snapshot, self.bytes, options.max_disk_usage)
        self.disk_limit = self.volume_limit
        if options.remove_log_dirs:
            # The disk goal owns the rule; imported here, as it imports this module.
            from kafka_rebalance.planner.goals.disk_capacity import without_removed_dirs

            self.disk_limit = without_removed_dirs(snapshot, options, self.disk_limit)
        self.dir_tally: DirTally | None = None  # the disk goal's per-dir tally, built on first use (disk_capacity.dir_tally)
        self.cur: dict[int, list[int]] = {}
        # Every partition's row now as one matrix (-1 padded), kept with ``cur``: "which of these partitions have a
        # replica on b" asked of thousands at once (``on``) instead of row by row in Python.
        self.now = np.full((n_p, max(self.rf_max, int(self.rf_target.max()) if n_p else 1)), -1, dtype=self.R.dtype)
        self.now[:, : self.rf_max] = self.R
        self._orig: dict[int, list[int]] = {}  # original rows asked for (``row``, ``within_cap``, the tallies)
        self._orig_unsafe: np.ndarray | None = None  # per partition, its original row breaks rack safety
        self._new_replicas = 0  # replicas on a broker that did not hold them before the plan (``moved_replicas``)
        self._new_bytes = 0
        self.arrivals: dict[int, list[int]] = {}  # broker -> partitions it received (may move on, at no extra cost)
        # Every replica change in order, (partition, from, to) with -1 for none: a goal keeping its own
        # per-broker tallies (topic spread) catches up from here instead of rescanning the assignment.
        self.changes: list[tuple[int, int, int]] = []
        self.touched = np.zeros(n_p, dtype=bool)
        # partition -> brokers whose donor index set its replica aside at the move cap (goals.base.DonorIndex):
        # any change to the partition, or a lifted cap, hands them back
        self.parked: dict[int, list[int]] = {}
        self._broker_parts: list[np.ndarray] | None = None
        self.lo = np.zeros(n_b, dtype=np.int64)
        self.hi = np.zeros(n_b, dtype=np.int64)
        self.byte_mean = 0.0  # mean of the eligible brokers' byte targets (reported)
        self.byte_target = np.zeros(n_b, dtype=np.float64)  # bytes each eligible broker should hold
        # The mean each eligible broker's band is centred on: the cluster's, or its capacity-weighted share
        # where the disks differ (balance.byte_centres).
        self.byte_centre = np.zeros(n_b, dtype=np.float64)
        self.clamped_racks: list[str] = []
        # Each eligible broker's byte band (balance.byte_band): the mean within the tolerance, its forced
        # share where that binds. The byte goal, the exact model and the lower bounds all read these.
        self.byte_lo = np.zeros(n_b, dtype=np.float64)
        self.byte_hi = np.zeros(n_b, dtype=np.float64)
        self.byte_allowed_hi = np.zeros(n_b, dtype=np.float64)  # beyond these a broker ends worse off than before
        self.byte_allowed_lo = np.zeros(n_b, dtype=np.float64)
        self.vetoes: list = []  # goals already optimised: they may veto later goals' moves
        # Per partition, the most new replicas the balance goals may leave it with (``cap_moves``); None: no cap.
        self.move_cap: np.ndarray | None = None
        self.forced_new = np.zeros(0, dtype=np.int64)  # per partition, its new replicas when the cap was set

    # ------------------------------------------------------------------ access

    def row(self, p: int) -> list[int]:
        """``p``'s replicas now (broker indexes). The list is the state's own: read it, never change it in place."""
        r = self.cur.get(p)
        if r is None:
            # An untouched row comes from the cache of original rows (``original_row``, inlined: the searches ask for
            # rows about 3 million times at 200 brokers / 200,000 partitions, 1.4 million of them untouched, and a fresh
            # list each time was 7 % of a plan).
            r = self._orig.get(p)
            if r is None:
                r = self._orig[p] = self._read_original(p)
        return r

    def original_row(self, p: int) -> list[int]:
        """``p``'s replicas before the plan (broker indexes), kept once read: the move cap and the indexes goals
        follow through the plan's changes ask for the same changed partitions' rows again and again. The list is
        the state's own: read it, never change it."""
        orig = self._orig.get(p)
        if orig is None:
            orig = self._orig[p] = self._read_original(p)
        return orig

    def _read_original(self, p: int) -> list[int]:
        if self.uniform:
            return self.R[p].tolist()
        return self.R[p].tolist()[: self._rf_list[p]]

    def rack_cap(self, rf: int) -> int:
        """Most replicas of one partition a rack may hold: spread over as many racks as exist."""
        if not self.has_racks or self.n_racks == 0:
            return rf
        return -(-rf // self.n_racks)

    def broker_parts(self, b: int) -> np.ndarray:
        """Partitions with a replica on broker ``b`` in the ORIGINAL assignment, in partition order."""
        if self._broker_parts is None:
            flat = self.R.ravel()
            order = np.argsort(flat, kind="stable")
            keep = order[flat[order] >= 0]
            owners = flat[keep]
            bounds = np.searchsorted(owners, np.arange(self.n_brokers + 1))
            pidx = (keep // self.rf_max).astype(np.int64)
            self._broker_parts = [pidx[bounds[i] : bounds[i + 1]] for i in range(self.n_brokers)]
        return self._broker_parts[b]

    # ------------------------------------------------------------------ changes

    def move(self, p: int, src: int, dst: int) -> None:
        row = list(self.row(p))
        row[row.index(src)] = dst
        self._set_row(p, row)
        size = int(self.sizes[p])
        orig = self.original_row(p)
        self._tally_new(size, (dst not in orig) - (src not in orig))
        self.counts[src] -= 1
        self.counts[dst] += 1
        self.bytes[src] -= size
        self.bytes[dst] += size
        self.touched[p] = True
        self.arrivals.setdefault(dst, []).append(p)
        self.changes.append((p, src, dst))
        if p in self.parked:
            self._release(p)

    def move_all(self, moves: np.ndarray, rows: np.ndarray) -> None:
        """``move`` for each (p, src, dst) row of ``moves``, in order, where a compiled goal made them on a copy whose
        rows (``now``) ended as ``rows``: the same state, tallies and records, without 375,000 calls of ``move`` (2 s
        at 400 brokers / 1M partitions). A partition parked at the move cap is released as ``move`` does it."""
        if not len(moves):
            return
        p, src, dst = (np.ascontiguousarray(moves[:, k]) for k in range(3))
        orig = self.R[p]
        size = self.sizes[p]
        change = (~(orig == dst[:, None]).any(axis=1)).astype(np.int64) - (~(orig == src[:, None]).any(axis=1))
        self._new_replicas += int(change.sum())
        self._new_bytes += int((size * change).sum())
        np.subtract.at(self.counts, src, 1)
        np.add.at(self.counts, dst, 1)
        np.subtract.at(self.bytes, src, size)
        np.add.at(self.bytes, dst, size)
        self.touched[p] = True
        first = list(dict.fromkeys(p.tolist()))  # first moved first, as ``move`` adds them to ``cur``
        # (the rows written at once: ``_set_row`` per partition was most of this at 300,000 partitions)
        block = rows[first]
        self._widen(block.shape[1])
        self.now[first, : block.shape[1]] = block
        self.now[first, block.shape[1] :] = -1
        cur = self.cur
        for q, row in zip(first, block.tolist()):
            cur[q] = [b for b in row if b >= 0]
        listed = moves.tolist()
        arrivals = self.arrivals
        for q, _, d in listed:
            arrivals.setdefault(d, []).append(q)
        self.changes.extend(map(tuple, listed))
        if self.parked:
            # released in the order of their first move, as ``move`` does it (what ``unpark`` reads, the partition
            # being touched, is the same then and now)
            for q in first:
                if q in self.parked:
                    self._release(q)

    def _set_row(self, p: int, row: list[int]) -> None:
        self.cur[p] = row
        self._widen(len(row))
        out = self.now[p]
        out[: len(row)] = row
        out[len(row) :] = -1

    def _widen(self, width: int) -> None:
        """Room in ``now`` for rows of ``width`` (a row in the middle of growing past every target)."""
        if width > self.now.shape[1]:
            self.now = np.pad(self.now, ((0, 0), (0, width - self.now.shape[1])), constant_values=-1)

    def on(self, parts: np.ndarray, b: int) -> np.ndarray:
        """Per partition of ``parts`` (an int array), has it a replica on broker ``b`` now?"""
        return matrix.holding(matrix.take(self.now, parts), b)

    def changed_since(self, seen: int) -> tuple[list[int], int]:
        """The partitions changed since the first ``seen`` changes, each once, in partition order, and how many
        changes there are now: what an index a goal follows through the plan reads at each ``sync``."""
        return sorted({p for p, _, _ in self.changes[seen:]}), len(self.changes)

    def restore(self, p: int) -> None:
        """Forget ``p``'s change if its row is back to the original (a cancelled move costs nothing)."""
        if self.cur.get(p) == self.original_row(p):
            del self.cur[p]
            self.touched[p] = False

    def add(self, p: int, dst: int) -> None:
        row = list(self.row(p))
        row.append(dst)
        self._set_row(p, row)
        self._tally_new(int(self.sizes[p]), int(dst not in self.original_row(p)))
        self.counts[dst] += 1
        self.bytes[dst] += int(self.sizes[p])
        self.touched[p] = True
        self.changes.append((p, -1, dst))
        if p in self.parked:
            self._release(p)

    def remove(self, p: int, src: int) -> None:
        row = list(self.row(p))
        row.remove(src)
        self._set_row(p, row)
        self._tally_new(int(self.sizes[p]), -int(src not in self.original_row(p)))
        self.counts[src] -= 1
        self.bytes[src] -= int(self.sizes[p])
        self.touched[p] = True
        self.changes.append((p, src, -1))
        if p in self.parked:
            self._release(p)

    def _tally_new(self, size: int, change: int) -> None:
        self._new_replicas += change
        self._new_bytes += size * change

    def _release(self, p: int) -> None:
        for b in self.parked.pop(p):
            self.donor_indexes[b].unpark(p)

    # ------------------------------------------------------------------ vetoes

    def rack_ok(self, row: list[int], src: int | None, dst: int, rf: int) -> bool:
        """Would ``dst`` joining (in place of ``src``) keep the partition rack-safe?"""
        if not self.has_racks:
            return True
        rack = self.rack
        target = rack[dst]
        if src is not None and rack[src] == target:
            return True
        same = 0
        for b in row:
            if b != src and rack[b] == target:
                same += 1
        if same >= self.rack_cap(rf):
            return False
        # Two or more per rack: src must not leave its rack empty, where that rack is one the replicas must span
        # (an eligible broker's; a rack only dead or leaving brokers are in is not one of the n_racks).
        if rf > self.n_racks and src is not None and rack[src] in self.eligible_racks:
            return any(b != src and rack[b] == rack[src] for b in row)
        return True

    def rack_safe(self, row: list[int]) -> bool:
        """At most ceil(RF / racks) replicas in one rack, and over min(RF, racks) racks (what the gate checks)."""
        return not self.has_racks or not rack_unsafe([self.rack[b] for b in row], self.n_racks)

    def originally_unsafe(self) -> np.ndarray:
        """Per partition: was its row rack-unsafe before the plan? One vectorised pass over the whole assignment,
        kept (the byte trim and the leader keeper ask it for every changed partition)."""
        if self._orig_unsafe is None:
            self._orig_unsafe = rack_unsafe_rows(self.R, self.rack, self.n_racks) if self.has_racks else np.zeros(self.n_parts, dtype=bool)
        return self._orig_unsafe

    def new_replicas(self, p: int) -> int:
        """Replicas of ``p`` on a broker that did not hold it before the plan."""
        row = self.cur.get(p)
        if row is None:
            return 0
        orig = self.original_row(p)
        return sum(1 for b in row if b not in orig)

    def cap_moves(self) -> None:
        """From here on no partition gains a new replica beyond what the goals so far gave it, and at most
        one where they gave it none: the byte goals move a partition once, never a second replica of it
        (two steps, two copies, two leader hand-offs for one partition's worth of balance). The hard goals
        and the count goal run before: 3 brokers added to 3 that hold every replica must take half of
        them, more than one replica of some partitions."""
        # ``new_replicas`` of every changed partition at once, from ``now``: row by row it was 1.2 s at 400 brokers /
        # 1M partitions, where 400,000 partitions have moved before the cap.
        parts = np.flatnonzero(self.touched)  # (the partitions in ``cur``: ``touched`` is kept with it)
        now, orig = self.now[parts], self.R[parts]
        new = (now >= 0) & ~(now[:, :, None] == orig[:, None, :]).any(axis=2)
        forced = np.zeros(self.n_parts, dtype=np.int64)
        forced[parts] = new.sum(axis=1)
        self.forced_new = forced
        self.move_cap = np.maximum(forced, 1)

    def one_more_move(self) -> None:
        """Lift the cap by one step for the partitions the goals before the cap already moved: each may
        gain one more new replica (one more step), the others still one. For the byte goal when the cap
        leaves a band short that no proof puts out of reach (docs/PLANNER.md, "A partition moves once")."""
        if self.move_cap is not None:
            self.move_cap = np.where(self.forced_new > 0, self.forced_new + 1, 1)
            for p in sorted(self.parked):
                self._release(p)

    def within_cap(self, p: int, src: int, dst: int) -> bool:
        """Would moving ``p``'s replica from ``src`` to ``dst`` keep it within ``move_cap``? Only a move
        from one of its original brokers to a new one adds a copy; an arrival moving on or a replica
        going home does not."""
        if self.move_cap is None or not self.touched[p]:
            return True
        return dst in self.original_row(p) or not self.capped(p, src)

    def capped(self, p: int, b: int) -> bool:
        """Is ``b``'s replica of ``p`` one of its original ones, with the partition's new replicas at the cap?
        Then it may move only into a place the partition left, which a search for a donor's replica can skip."""
        return (self.move_cap is not None and bool(self.touched[p]) and b in self.original_row(p)
                and self.new_replicas(p) >= int(self.move_cap[p]))

    def accepts(self, p: int, src: int, dst: int, count_neutral: bool = False) -> bool:
        """May replica ``src`` of partition ``p`` move to ``dst``? Every optimised goal may veto, and no
        partition moves beyond its cap (``cap_moves``).

        ``count_neutral``: the move is half of a swap that leaves every count as it was.
        """
        if p >= 0 and not self.within_cap(p, src, dst):
            return False
        for goal in self.vetoes:
            if count_neutral and goal.count_goal:
                continue
            if not goal.accept_move(self, p, src, dst):
                return False
        return True

    def counts_accept(self, src: int, dst: int) -> bool:
        """The count goals' vetoes on any move from ``src`` to ``dst``: they read the two brokers' counts only, never
        the partition (-1 here), so a search asks once per pair and skips every candidate when they refuse."""
        return all(goal.accept_move(self, -1, src, dst) for goal in self.vetoes if goal.count_goal)

    def final_rows(self) -> np.ndarray:
        """Padded matrix of the assignment after the replica goals (order as moved, before reorders), as wide as the
        longest row or replication factor target: the matrix may have widened for a row that has since shrunk."""
        width = max(self.rf_max, int(self.rf_target.max()) if self.n_parts else 1)
        if (self.now[:, width:] >= 0).any():
            width = self.now.shape[1]
        return self.now[:, :width].copy()

    def single_moves(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(p, removed, added) for every changed partition whose row differs from its original by exactly one
        broker (the same replication factor, one replica moved), in partition order: three int64 arrays (the broker
        that left is the first in the original row's order, the one that came the first in the row's). One compiled
        pass over the changed rows (``compiled_state.single_moved``), and arrays out: the byte trim and the leader
        keeper ask for these several times per plan and filter them by partition and broker; at a million partitions
        row by row took seconds each time, and NumPy's comparisons of every row with every row a quarter second."""
        if not self.cur:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty
        from kafka_rebalance.planner.goals.compiled_state import single_moved  # (numba: imported where it is needed)

        parts = np.flatnonzero(self.touched)  # (the partitions in ``cur``, in order: ``touched`` is kept with it)
        return single_moved(self.now[parts].astype(np.int64), self.R[parts].astype(np.int64), parts.astype(np.int64))

    def counts_reached(self) -> bool:
        """Is every eligible broker's replica count within its target range?"""
        elig = np.asarray(self.eligible_idx, dtype=np.int64)
        return bool(((self.counts[elig] >= self.lo[elig]) & (self.counts[elig] <= self.hi[elig])).all())

    def moved_replicas(self) -> int:
        """Replicas that are new on their broker (the plan's data copies). Kept as the changes come (the planner
        asks before and after every goal; summing over every changed partition was 6 % of planning at 200,000)."""
        return self._new_replicas

    def moved_bytes(self) -> int:
        """Bytes of every replica that is new on its broker (what the plan copies)."""
        return self._new_bytes

    def name(self, p: int) -> str:
        return self.parts[p].name

    def bid(self, b: int) -> int:
        return self.broker_ids[b]


def disk_limits(snapshot: Snapshot, data: np.ndarray, max_usage: float) -> np.ndarray:
    """Per broker (index), the bytes of partition data it may hold after a plan: ``max_usage`` of its capacity
    (its log dirs' total bytes) less what its disks hold besides the partitions the snapshot sizes (``data``:
    other files, indexes, a replica larger than its leader's size), which a plan cannot move. inf: capacity unknown.

    Besides-the-partitions is total - usable - data as the snapshot found them, never below 0: where
    usable is not reported it counts as 0, and the limit is then max_usage of the capacity.
    """
    out = np.full(len(snapshot.brokers), np.inf)
    for i, b in enumerate(snapshot.brokers):
        capacity = b.capacity_bytes
        if capacity is None:
            continue
        usable = b.usable_bytes
        other = max(0.0, float(capacity - usable) - float(data[i])) if usable is not None else 0.0
        out[i] = max_usage * capacity - other
    return out
