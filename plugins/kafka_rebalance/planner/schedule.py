"""Continuous execution: moves start as soon as capacity frees, and how long that takes.

Batches run as waves: each waits for its slowest move while the other brokers idle. The
continuous schedule instead keeps every broker's pipe full. It is one list of steps in
priority order; the ``Dispatcher`` starts the first steps of that list that fit, and
whenever a step completes, starts the next ones that fit. A step fits when:

* its partition's previous step has completed (one new replica per partition at a time,
  as the batches have it);
* each broker it involves (``Step.involved``) has fewer than ``max_moves_per_broker``
  steps in flight, and at most ``max_partitions_per_batch`` partitions are in flight;
* the produce rates of the partitions in flight into each receiving broker, and out of
  each leader, stay below the throttle (so every move can finish);
* each destination with a disk limit has room for it, counting the replicas in flight into
  it as already there and the ones leaving it only once their steps completed
  (planner/peaks.py). Unlike the other limits, a step never starts without that room, even
  alone; when no step has it and none is in flight, no order does (``DiskLedger.stuck``).

Priority: the step whose busiest broker has the most bytes to move goes first, largest
first, so the brokers that bound the whole plan never wait for work.

The executor and the simulator share the ``Dispatcher``, so the estimate describes the
order in which the executor really submits moves. The simulator uses the throttle model
of ``estimate.py`` per move: every receiving broker shares its follower throttle, every
leader its leader throttle, equally among the moves in flight there, after the produce
traffic of those partitions; a move copies at the smaller of its two shares. After its last
byte, a move holds its place (not its bandwidth) for ``fixed_seconds`` more: the fixed cost of
a move (metadata propagation, fetcher start, ISR join, the executor seeing it land;
throttle_model.py), which small moves spend most of their time on. The
physical bound is the busiest broker's bytes in or out divided by the throttle: no
schedule under that throttle can finish sooner.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import NamedTuple

import numpy as np

from kafka_rebalance.planner import dispatch
from kafka_rebalance.planner.peaks import DiskLedger, DiskRoom
from kafka_rebalance.planner.steps import Step, step_fields, topic_ranks


class ScheduledStep(NamedTuple):
    """(A named tuple: a plan at a million partitions schedules close to a million steps; see ``Step``.)"""

    step: Step
    after: int | None  # index (in the schedule) of the partition's previous step
    start: float  # simulated seconds from the first submission
    end: float


@dataclass(frozen=True)
class Schedule:
    steps: list[ScheduledStep]  # priority order: the dispatcher's order of preference
    seconds: float  # simulated duration
    bound_seconds: float  # physical bound: the busiest broker's bytes in or out / throttle
    max_moves_per_broker: int
    max_in_flight: int
    disk: DiskRoom | None = None  # the brokers' disk room it was dispatched with (schedule.json's disk_room)


def priority_order(chains: Sequence[Sequence[Step]]) -> tuple[list[Step], list[int | None]]:
    """Every step, largest first (then by topic, partition and step), and each one's predecessor index (the partition's
    previous step)."""
    steps = [s for chain in chains for s in chain]
    by, after = _priority(steps)
    return [steps[i] for i in by.tolist()], after


def _priority(steps: Sequence[Step]) -> tuple[np.ndarray, list[int | None]]:
    """``priority_order`` of the steps of the chains in chain order: where each step of that order is among them."""
    n = len(steps)
    f = step_fields(steps, "p", "seq", "partition", "topic", "size")
    p, seq = np.array(f["p"], dtype=np.int64), np.array(f["seq"], dtype=np.int64)
    by = np.lexsort((seq, np.array(f["partition"], dtype=np.int64), topic_ranks(f["topic"]),
                     -np.array(f["size"], dtype=np.int64)))
    p, seq = p[by], seq[by]
    # a step's predecessor: the step of its partition numbered one less, next to it in (partition, step) order
    pairs = np.lexsort((seq, p))
    prev, nxt = pairs[:-1], pairs[1:]
    follows = (p[prev] == p[nxt]) & (seq[nxt] == seq[prev] + 1)
    after = np.full(n, -1, dtype=np.int64)
    after[nxt[follows]] = prev[follows]
    return by, [None if a < 0 else a for a in after.tolist()]


class Dispatcher:
    """Which steps to start now, given what is in flight. Pure bookkeeping, no clock, no I/O.

    Every step belongs to the lane of the broker receiving its (first) new replica. The next
    step comes from the lane with the fewest moves in flight and, among those, the most bytes
    still to receive: every receiving broker gets a move before any gets a second, and the
    brokers that bound the plan are served first. Within a lane, the largest step that fits
    goes first (longest first), among the lane's first ``dispatch.CANDIDATES`` ready steps. ``start()``
    returns the steps to submit now and counts them as in flight; ``finish(i)`` records a completion,
    ``abandon(i)`` a step that will not complete (it and the partition's later steps are dropped). A lane
    that cannot start anything waits on the broker that blocked it, so a dispatch costs a few heap operations.

    Resuming: ``done`` are steps already completed, ``running`` steps already in flight (a
    killed executor submitted them); neither is started again.

    ``disk``: each limited broker's bytes before the plan and its limit. A lane whose steps lack
    disk room waits on that broker until a step sending from it completes.

    The rule itself is compiled (planner/dispatch.py): this class holds its arrays and asks it, and
    ``simulate`` runs a whole plan through the same functions.
    """

    def __init__(self, steps: Sequence[Step], after: Sequence[int | None], max_moves_per_broker: int,
                 max_in_flight: int, throttle: float, done: Iterable[int] = (), running: Iterable[int] = (),
                 disk: DiskRoom | None = None, made: tuple[Sequence[Step], np.ndarray] | None = None,
                 made_columns: dispatch.Columns | None = None) -> None:  # fmt: skip
        """``made``: the same steps in the order they were made and where each of ``steps`` is among them
        (``steps[i] is made[0][made[1][i]]``), where the caller has them: their arrays are read in that order, which
        is faster (``steps.step_fields``); ``made_columns``: those arrays (``dispatch.columns`` of ``made[0]``), where
        the caller has them."""
        self.steps = steps
        self.disk = DiskLedger(disk) if disk is not None else None
        done = set(done)
        self.table, self.live, self._t, self._lv = dispatch.build(
            steps, after, max_moves_per_broker, max_in_flight, throttle, self.disk, done, set(running) - done, made,
            made_columns)
        self._sync()

    def _sync(self) -> None:
        """The sets callers read, from the arrays (after a construction or a whole simulation)."""
        self.in_flight: set[int] = set(np.flatnonzero(self.live.in_flight).tolist())
        self.completed: set[int] = set(np.flatnonzero(self.live.completed).tolist())
        self.abandoned: set[int] = set(np.flatnonzero(self.live.abandoned).tolist())

    def lane(self, i: int) -> int:
        """The broker id of step i's lane (``dispatch.NO_LANE`` for a step that adds no replica)."""
        return int(self.table.ids[self.table.lane[i]])

    def _by_id(self, values: np.ndarray) -> dict[int, int]:
        return {int(b): int(v) for b, v in zip(self.table.ids.tolist(), values.tolist(), strict=True)}

    @property
    def inflow(self) -> dict[int, float]:
        """Per broker id, the produce rates of the partitions in flight into it."""
        return dict(zip(self.table.ids.tolist(), self.live.inflow.tolist(), strict=True))

    @property
    def outflow(self) -> dict[int, float]:
        """Per broker id, the produce rates it sends as leader to the new replicas in flight."""
        return dict(zip(self.table.ids.tolist(), self.live.outflow.tolist(), strict=True))

    @property
    def lane_ready(self) -> dict[int, list[int]]:
        """Per lane (broker id), its steps ready to start, in priority order."""
        t, lv = self.table, self.live
        return {int(t.ids[k]): lv.ready[t.lane_at[k] : t.lane_at[k] + lv.n_ready[k]][::-1].tolist()
                for k in range(len(lv.n_ready)) if lv.n_ready[k]}

    @property
    def busy(self) -> dict[int, int]:
        """Per broker id, its steps in flight (``Step.involved``)."""
        return self._by_id(self.live.busy)

    @property
    def receiving(self) -> dict[int, int]:
        """Per broker id, the new replicas in flight into it."""
        return self._by_id(self.live.receiving)

    @property
    def left(self) -> dict[int, int]:
        """Per lane (broker id) of some step, the bytes it has not started yet."""
        lanes = np.flatnonzero(np.diff(self.table.lane_at))
        return {int(self.table.ids[k]): int(self.live.left[k]) for k in lanes.tolist()}

    @property
    def waiting_on(self) -> dict[int, set[int]]:
        """Per blocking broker id, the lanes (broker ids) waiting for it to free a move."""
        ids = self.table.ids
        return {int(ids[k]): {int(ids[x]) for x in lanes} for k, lanes in enumerate(self.live.wait_on) if len(lanes)}

    @property
    def finished(self) -> bool:
        return not self.in_flight and not self.live.n_ready.any() and not self.live.counts[1]

    def start(self, allow: Callable[[int], bool] | None = None) -> list[int]:
        """Steps to submit now; ``allow(i)`` False for the next step stops this dispatch (a hold)."""
        t, lv = self._t, self._lv
        started: list[int] = []
        while True:
            i, lane, k = dispatch.choose(t, lv)
            if i < 0:
                break
            if allow is not None and not allow(i):
                dispatch.requeue(t, lv, lane)
                break
            dispatch.take(t, lv, i, lane, k)
            started.append(i)
        if not started:
            i, lane, k = dispatch.fit(t, lv)
            if i >= 0 and (allow is None or allow(i)):
                dispatch.take(t, lv, i, lane, k)
                started.append(i)
        self.in_flight.update(started)
        return started

    def disk_blocked(self) -> list[Step]:
        """Ready steps that wait for disk room (for the error when nothing else can run)."""
        if self.disk is None:
            return []
        t, lv = self._t, self._lv
        return [self.steps[i] for ready in self.lane_ready.values() for i in ready if dispatch.disk_full(t, lv, i) >= 0]

    def abandon(self, i: int) -> None:
        """In-flight step i will not complete (cancelled, refused): drop it and its partition's later steps."""
        dispatch.abandon(self._t, self._lv, i)
        self.in_flight.discard(i)
        self.abandoned = set(np.flatnonzero(self.live.abandoned).tolist())

    def finish(self, i: int) -> None:
        dispatch.finish(self._t, self._lv, i)
        self.in_flight.discard(i)
        self.completed.add(i)

    def run(self, fixed_seconds: float) -> tuple[list[float], list[float]]:
        """Every step dispatched and simulated (``simulate``): each one's start and end, in seconds."""
        start, end = dispatch.simulate_steps(self._t, self._lv, fixed_seconds)
        self._sync()
        return start.tolist(), end.tolist()


def physical_bound(steps: Sequence[Step], throttle: float) -> float:
    """The busiest broker's bytes in (its new replicas) or out (as leader, to each new replica) at the throttle: no
    schedule under that throttle finishes sooner."""
    ids = np.unique(np.fromiter(chain.from_iterable((*s.adds, s.leader) for s in steps), dtype=np.int64))
    adds = [np.searchsorted(ids, s.adds) for s in steps]
    return _bound(len(ids), np.concatenate([[], *adds]).astype(np.int64), np.searchsorted(ids, [s.leader for s in steps]),
                  np.array([s.size for s in steps], dtype=np.int64), np.array([len(a) for a in adds], dtype=np.int64),
                  throttle)  # fmt: skip


def _bound(n_ids: int, adds: np.ndarray, leader: np.ndarray, size: np.ndarray, n_adds: np.ndarray,
           throttle: float) -> float:  # fmt: skip
    """``physical_bound`` from the steps' arrays (dense broker indexes: every add, each step's leader, size, adds)."""
    recv = np.zeros(n_ids, dtype=np.int64)
    np.add.at(recv, adds, np.repeat(size, n_adds))
    send = np.zeros(n_ids, dtype=np.int64)
    np.add.at(send, leader, size * n_adds)
    busiest = int(max(recv.max(initial=0), send.max(initial=0)))
    return busiest / throttle if throttle else 0.0


def simulate(chains: Sequence[Sequence[Step]], max_moves_per_broker: int, max_in_flight: int, throttle: float,
             fixed_seconds: float = 0.0, disk: DiskRoom | None = None, made: dispatch.Columns | None = None) -> Schedule:
    """The schedule of these partitions' steps and its simulated duration under ``throttle`` B/s, each
    step taking ``fixed_seconds`` on top of its copying; ``disk``: the brokers' disk room (``Dispatcher``); ``made``:
    the steps' arrays in chain order where the caller has them (the batcher's, ``batching.Batching.columns``: they
    depend on which brokers and dirs ``disk`` limits, not on their room)."""
    steps_made = [s for chain in chains for s in chain]
    by, after = _priority(steps_made)
    order = [steps_made[i] for i in by.tolist()]
    dispatcher = Dispatcher(order, after, max_moves_per_broker, max_in_flight, throttle, disk=disk,
                            made=(steps_made, by), made_columns=made)
    start, end = dispatcher.run(fixed_seconds)
    if not dispatcher.finished and dispatcher.disk is not None and dispatcher.disk_blocked():
        raise dispatcher.disk.stuck(dispatcher.disk_blocked())
    if not dispatcher.finished:  # pragma: no cover - a dispatcher bug, never a user error
        raise RuntimeError("continuous schedule stalled with steps left")
    t = dispatcher.table
    bound = _bound(len(t.ids), t.adds, t.leader, t.size, t.n_adds, throttle)
    steps = list(map(ScheduledStep, order, after, start, end))
    return Schedule(steps, max(end, default=0.0), bound, max_moves_per_broker, max_in_flight, disk)
