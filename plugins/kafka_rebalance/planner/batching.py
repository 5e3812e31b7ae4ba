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

import heapq
from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kafka_rebalance.options import PlanOptions
from kafka_rebalance.planner.peaks import DiskLedger, DiskRoom
from kafka_rebalance.planner.steps import Step

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


def order_key(options: PlanOptions, under_replicated: Callable[[int], bool]) -> Callable[[Step], tuple]:
    if options.ordering == "large-first":
        return lambda s: (-s.size, s.topic, s.partition, s.seq)
    if options.ordering == "under-replicated-first":
        return lambda s: (not under_replicated(s.p), s.size, s.topic, s.partition, s.seq)
    return lambda s: (s.size, s.topic, s.partition, s.seq)


def make_batches(reorders: list[Step], moves: list[list[Step]], options: PlanOptions, key: Callable[[Step], tuple],
                 disk: DiskRoom | None = None, within: Sequence[Step] = ()) -> list[PlannedBatch]:  # fmt: skip
    """Reorder batches, then the log-dir batches (``within``: moves between the dirs of a broker, before any move
    so the room they make is there for the moves), then the move batches; one disk ledger through all of them."""
    cap = options.max_partitions_per_batch
    batches: list[PlannedBatch] = []
    reorders = sorted(reorders, key=key)
    for i in range(0, len(reorders), cap):
        batches.append(PlannedBatch("reorder", reorders[i : i + cap]))
    ledger = DiskLedger(disk) if disk is not None else None
    batches.extend(_within_batches(sorted(within, key=key), cap, ledger))
    batches.extend(_move_batches(moves, options, key, ledger))
    return batches


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


def _move_batches(moves: list[list[Step]], options: PlanOptions, key: Callable[[Step], tuple],
                  ledger: DiskLedger | None = None) -> list[PlannedBatch]:  # fmt: skip
    cap, per_broker, rate = options.max_partitions_per_batch, options.max_moves_per_broker, options.delivered_rate
    window = 4 * cap + 100
    following = {(chain[0].p, s.seq): chain[i + 1] for chain in moves for i, s in enumerate(chain[:-1])}
    queue = deque(sorted((chain[0] for chain in moves if chain), key=key))
    # The steps that follow taken ones, a heap by key, read in one order with the queue (keys are unique): merging
    # them into the queue after every batch cost the whole queue each time (8 % of planning 100,000 moves).
    later: list[tuple[tuple, Step]] = []

    def next_step() -> Step:
        if later and (not queue or later[0][0] < key(queue[0])):
            return heapq.heappop(later)[1]
        return queue.popleft()

    out: list[PlannedBatch] = []
    while queue or later:
        taken: list[Step] = []
        skipped: list[Step] = []
        load: dict[int, int] = defaultdict(int)
        inflow: dict[int, float] = defaultdict(float)
        outflow: dict[int, float] = defaultdict(float)
        refusals = 0
        while (queue or later) and len(taken) < cap and refusals < window:
            s = next_step()
            if ledger is not None and ledger.blocker(s) is not None:
                # No room until earlier batches' departures free it: never taken, not even alone.
                skipped.append(s)
                refusals += 1 if taken else 0
                continue
            n_new = len(s.adds)
            involved = s.involved
            fits = True
            for b in involved:
                if load[b] >= per_broker:
                    fits = False
                    break
            if fits and n_new and s.rate:
                fits = all(inflow[b] + s.rate < rate for b in s.adds) and outflow[s.leader] + s.rate * n_new < rate
            if not fits and taken:
                skipped.append(s)
                refusals += 1
                continue
            # An empty batch takes the head even if it alone breaks a limit: otherwise it could never run.
            taken.append(s)
            for b in involved:
                load[b] += 1
            for b in s.adds:
                inflow[b] += s.rate
            outflow[s.leader] += s.rate * n_new
            if ledger is not None:
                ledger.start(s)
        if not taken and ledger is not None:
            raise ledger.stuck(skipped)
        if ledger is not None:
            for s in taken:
                ledger.finish(s)
        queue.extendleft(reversed(skipped))  # read before everything left: each came before it
        for s in taken:
            succ = following.get((s.p, s.seq))
            if succ is not None:
                heapq.heappush(later, (key(succ), succ))
        out.append(PlannedBatch("move", sorted(taken, key=key)))
    return out
