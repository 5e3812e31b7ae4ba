"""Grouping steps into batches that run one after another.

Reorders (metadata only) come first, in batches of ``max_partitions_per_batch``.
Data moves follow; a batch takes steps in the ordering strategy's order while:
* it holds at most ``max_partitions_per_batch`` partitions;
* no broker has more than ``max_moves_per_broker`` replica moves into or out of it
  (a new replica counts on its destination, a leaving one on its source);
* the produce rates of the partitions a broker receives (or, as leader, sends) stay
  below the throttle, so the batch can finish;
* a partition's next step waits for a later batch than its previous one;
* each destination with a disk limit has room for every replica the batch brings it,
  at its bytes when the batch starts (the earlier batches' arrivals in, their departures
  out: Kafka deletes a replica only once its move completed; planner/peaks.py).
A step that does not fit stays at its place in the queue for the next batch. To
keep planning linear, a batch stops looking after a window of refusals. An empty batch
takes the first step with disk room even if it alone breaks another limit; when no step
has disk room, no order does and planning stops (``DiskLedger.stuck``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from kafka_rebalance.options import PlanOptions
from kafka_rebalance.planner.dispatch import Columns, columns, heap_pop, heap_put, new_heap
from kafka_rebalance.planner.estimate import waves_seconds
from kafka_rebalance.planner.peaks import DiskLedger, DiskRoom, ledger_add, ledger_full
from kafka_rebalance.planner.steps import Step, step_fields, topic_ranks

# A batch of moves between the log dirs of a broker: same replicas, named dirs (AlterReplicaLogDirs).
LOG_DIR_BATCH = "log-dirs"


@dataclass(slots=True)
class PlannedBatch:
    kind: str  # "reorder" | "log-dirs" | "move"
    steps: list[Step]
    seconds: float = 0.0  # as a wave, unrounded (plan.json's figures: estimate.step_figures)

    @property
    def replica_moves(self) -> int:
        return sum(len(s.adds) for s in self.steps)

    @property
    def bytes(self) -> int:
        return sum(len(s.adds) * s.size for s in self.steps)


class OrderKey:
    """The ordering strategy's order of steps (``--ordering``): a step's sort key, and ``order`` for many at once."""

    def __init__(self, ordering: str, under_replicated: Callable[[int], bool]) -> None:
        self.ordering = ordering
        self.under_replicated = under_replicated

    def __call__(self, s: Step) -> tuple:
        if self.ordering == "large-first":
            return (-s.size, s.topic, s.partition, s.seq)
        if self.ordering == "under-replicated-first":
            return (not self.under_replicated(s.p), s.size, s.topic, s.partition, s.seq)
        return (s.size, s.topic, s.partition, s.seq)

    def order(self, steps: Sequence[Step]) -> np.ndarray:
        """Indexes of ``steps`` sorted by their keys (stably): what ``sorted`` with this key gives, without building
        and comparing a tuple per step (at a million steps that sort was 2 s)."""
        f = step_fields(steps, "size", "seq", "partition", "topic", "p")
        size = np.array(f["size"], dtype=np.int64)
        keys = [np.array(f["seq"], dtype=np.int64), np.array(f["partition"], dtype=np.int64), topic_ranks(f["topic"])]
        if self.ordering == "large-first":
            keys.append(-size)
        elif self.ordering == "under-replicated-first":
            urp = np.fromiter(map(self.under_replicated, f["p"]), dtype=bool, count=len(steps))
            keys.extend([size, ~urp])
        else:
            keys.append(size)
        return np.lexsort(keys)


def order_key(options: PlanOptions, under_replicated: Callable[[int], bool]) -> OrderKey:
    return OrderKey(options.ordering, under_replicated)


@dataclass(frozen=True)
class Batching:
    batches: list[PlannedBatch]
    # the batch (index into ``batches``) of each step of the moves' chains, read in chain order: steps sit in memory
    # in that order, so arrays of their fields are read much faster in it than in the batches' (steps.step_fields)
    moved_in: np.ndarray
    # the moves' steps as arrays, in chain order: the continuous schedule reads them too (``schedule.simulate``)
    columns: Columns


def make_batches(reorders: list[Step], moves: list[list[Step]], options: PlanOptions, key: OrderKey,
                 disk: DiskRoom | None = None, within: Sequence[Step] = ()) -> list[PlannedBatch]:  # fmt: skip
    return batch_steps(reorders, moves, options, key, disk, within).batches


def batch_steps(reorders: list[Step], moves: list[list[Step]], options: PlanOptions, key: OrderKey,
                disk: DiskRoom | None = None, within: Sequence[Step] = ()) -> Batching:  # fmt: skip
    """Reorder batches, then the log-dir batches (``within``: moves between the dirs of a broker, before any move
    so the room they make is there for the moves), then the move batches; one disk ledger through all of them."""
    cap = options.max_partitions_per_batch
    batches: list[PlannedBatch] = []
    reorders = [reorders[i] for i in key.order(reorders).tolist()]
    for i in range(0, len(reorders), cap):
        batches.append(PlannedBatch("reorder", reorders[i : i + cap]))
    ledger = DiskLedger(disk) if disk is not None else None
    batches.extend(_within_batches(sorted(within, key=key), cap, ledger))
    moving, moved_in, c = _move_batches(moves, options, key, ledger)
    return Batching(batches + moving, moved_in + len(batches), c)


def _within_batches(steps: list[Step], cap: int, ledger: DiskLedger | None) -> list[PlannedBatch]:
    """Log-dir batches in order, each closed early where its broker or dir has no room for the next step until
    the batch's own moves have ended (a replica moving between dirs is on its broker twice until then)."""
    out: list[PlannedBatch] = []
    taken: list[Step] = []

    def close() -> None:
        for t in taken:
            if ledger is not None:
                ledger.finish(t)
        out.append(PlannedBatch(LOG_DIR_BATCH, list(taken)))
        taken.clear()

    for s in steps:
        if ledger is not None and ledger.blocker(s) is not None:
            if not taken:
                raise ledger.stuck([s])
            close()
            if ledger.blocker(s) is not None:
                raise ledger.stuck([s])
        taken.append(s)
        if ledger is not None:
            ledger.start(s)
        if len(taken) == cap:
            close()
    if taken:
        close()
    return out


def _move_batches(moves: list[list[Step]], options: PlanOptions, key: OrderKey,
                  ledger: DiskLedger | None = None) -> tuple[list[PlannedBatch], np.ndarray, Columns]:  # fmt: skip
    """The move batches, the one of each step of ``moves`` in chain order, and those steps' arrays (``columns``)."""
    steps = [s for chain in moves for s in chain]
    # each step's successor in its partition's chain (-1: none), the chains' first steps, and every step's place in the
    # ordering strategy's order
    lengths = np.fromiter((len(chain) for chain in moves), dtype=np.int64, count=len(moves))
    lengths = lengths[lengths > 0]
    ends = np.cumsum(lengths)
    succ = np.arange(1, len(steps) + 1, dtype=np.int64)
    succ[ends - 1] = -1
    firsts = ends - lengths
    by = key.order(steps)
    rank = np.empty(len(steps), dtype=np.int64)
    rank[by] = np.arange(len(steps))
    queue = firsts[np.argsort(rank[firsts])]
    c = columns(steps, ledger)
    cap = options.max_partitions_per_batch
    batch_of, n_batches, stuck = _batch_moves(
        queue, succ, rank, len(c.ids), c.size, c.rate, c.leader, c.adds_at, c.adds, c.inv_at, c.inv, c.check_at, c.check,
        c.add_at, c.add, c.free_at, c.free, ledger is not None,
        ledger.res_load if ledger is not None else np.zeros(0), ledger.res_limit if ledger is not None else np.zeros(0),
        cap, options.max_moves_per_broker, float(options.delivered_rate), 4 * cap + 100,
    )
    if len(stuck):
        assert ledger is not None  # (only disk room stops a batch from taking any step)
        raise ledger.stuck([steps[j] for j in stuck.tolist()])
    placed = np.flatnonzero(batch_of >= 0)
    placed = placed[np.lexsort((rank[placed], batch_of[placed]))]
    group_at = np.zeros(n_batches + 1, dtype=np.int64)
    np.cumsum(np.bincount(batch_of[placed], minlength=n_batches), out=group_at[1:])
    seconds = waves_seconds(c, placed, group_at, options.delivered_rate, options.move_fixed_seconds)
    # (every batch holds a step: ``_batch_moves`` stops at the first that cannot take one)
    batches = [PlannedBatch("move", [steps[j] for j in placed[group_at[g]:group_at[g + 1]].tolist()], float(seconds[g]))
               for g in range(n_batches)]
    return batches, batch_of, c


@njit(cache=True)
def _batch_moves(queue: np.ndarray, succ: np.ndarray, rank: np.ndarray, n_ids: int, size: np.ndarray, rate: np.ndarray,
                 leader: np.ndarray, adds_at: np.ndarray, adds: np.ndarray, inv_at: np.ndarray, inv: np.ndarray,
                 check_at: np.ndarray, check: np.ndarray, add_at: np.ndarray, add: np.ndarray, free_at: np.ndarray,
                 free: np.ndarray, has_disk: bool, res_load: np.ndarray, res_limit: np.ndarray, cap: int,
                 per_broker: int, limit: float, window: int) -> tuple[np.ndarray, int, np.ndarray]:  # fmt: skip
    """The move batches (module docstring), compiled: each step's batch number (-1: none) and how many batches; where a
    batch can take no step for want of disk room, the steps it skipped (else none). ``queue``: the chains' first steps
    in order; a step's successor joins the candidates once it was taken, in ``rank`` order with the rest (the queue's
    head and the successors' heap read as one sorted list); a step that does not fit goes back to the queue's head."""
    m = size.shape[0]
    batch_of = np.full(m, -1, np.int64)
    ring = np.empty(max(m, 1), np.int64)  # the queue, as a ring: skipped steps go back to its head
    size_ring = ring.shape[0]
    ring[:queue.shape[0]] = queue
    head, count = 0, queue.shape[0]
    later = new_heap(max(m, 1))  # successors of taken steps, by rank
    load = np.zeros(n_ids, np.int64)
    inflow, outflow = np.zeros(n_ids), np.zeros(n_ids)
    taken, skipped = np.empty(max(m, 1), np.int64), np.empty(max(m, 1), np.int64)
    n_batches = 0
    while count > 0 or later.n[0] > 0:
        n_taken = n_skipped = refusals = 0
        load[:] = 0
        inflow[:] = 0.0
        outflow[:] = 0.0
        while (count > 0 or later.n[0] > 0) and n_taken < cap and refusals < window:
            if later.n[0] > 0 and (count == 0 or later.x[later.heap[0]] < rank[ring[head]]):
                s = heap_pop(later)
            else:
                s = ring[head]
                head = (head + 1) % size_ring
                count -= 1
            if has_disk and ledger_full(res_load, res_limit, check[check_at[s]:check_at[s + 1]], float(size[s])) >= 0:
                # No room until earlier batches' departures free it: never taken, not even alone.
                skipped[n_skipped] = s
                n_skipped += 1
                if n_taken:
                    refusals += 1
                continue
            n_new = adds_at[s + 1] - adds_at[s]
            fits = True
            for x in range(inv_at[s], inv_at[s + 1]):
                if load[inv[x]] >= per_broker:
                    fits = False
                    break
            if fits and n_new and rate[s] != 0.0:
                for x in range(adds_at[s], adds_at[s + 1]):
                    if not inflow[adds[x]] + rate[s] < limit:
                        fits = False
                        break
                fits = fits and outflow[leader[s]] + rate[s] * n_new < limit
            if not fits and n_taken:
                skipped[n_skipped] = s
                n_skipped += 1
                refusals += 1
                continue
            # An empty batch takes the head even if it alone breaks a limit: otherwise it could never run.
            taken[n_taken] = s
            n_taken += 1
            for x in range(inv_at[s], inv_at[s + 1]):
                load[inv[x]] += 1
            for x in range(adds_at[s], adds_at[s + 1]):
                inflow[adds[x]] += rate[s]
            outflow[leader[s]] += rate[s] * n_new
            if has_disk:
                ledger_add(res_load, add[add_at[s]:add_at[s + 1]], float(size[s]))
        if n_taken == 0:
            return batch_of, n_batches, skipped[:n_skipped].copy()
        for k in range(n_taken):
            s = taken[k]
            if has_disk:
                ledger_add(res_load, free[free_at[s]:free_at[s + 1]], -float(size[s]))
            batch_of[s] = n_batches
        for k in range(n_skipped - 1, -1, -1):  # back at the head, in the order they came: each came before the rest
            head = (head - 1) % size_ring
            ring[head] = skipped[k]
            count += 1
        for k in range(n_taken):
            nxt = succ[taken[k]]
            if nxt >= 0:
                heap_put(later, nxt, float(rank[nxt]), 0, 0)
        n_batches += 1
    return batch_of, n_batches, np.empty(0, np.int64)
