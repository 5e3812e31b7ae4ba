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

import heapq
from bisect import insort
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kafka_rebalance.planner.peaks import DiskLedger, DiskRoom
from kafka_rebalance.planner.steps import Step


@dataclass(frozen=True, slots=True)
class ScheduledStep:
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
    """Every step, largest first, and each one's predecessor index (the partition's previous step)."""
    order = sorted((s for chain in chains for s in chain), key=lambda s: (-s.size, s.topic, s.partition, s.seq))
    index = {(s.p, s.seq): i for i, s in enumerate(order)}
    after = [index.get((s.p, s.seq - 1)) if s.seq else None for s in order]
    return order, after


NO_LANE = -1  # steps that only drop replicas: nothing to copy
CANDIDATES = 8  # steps of a lane looked at before the lane waits for capacity elsewhere


class Dispatcher:
    """Which steps to start now, given what is in flight. Pure bookkeeping, no clock, no I/O.

    Every step belongs to the lane of the broker receiving its (first) new replica. The next
    step comes from the lane with the fewest moves in flight and, among those, the most bytes
    still to receive: every receiving broker gets a move before any gets a second, and the
    brokers that bound the plan are served first. Within a lane, the largest step that fits
    goes first (longest first). ``start()`` returns the steps to submit now and counts them as
    in flight; ``finish(i)`` records a completion, ``abandon(i)`` a step that will not complete
    (it and the partition's later steps are dropped). A lane that cannot start anything waits
    on the broker that blocked it, so a dispatch costs a few heap operations.

    Resuming: ``done`` are steps already completed, ``running`` steps already in flight (a
    killed executor submitted them); neither is started again.

    ``disk``: each limited broker's bytes before the plan and its limit. A lane whose steps lack
    disk room waits on that broker until a step sending from it completes.
    """

    def __init__(self, steps: Sequence[Step], after: Sequence[int | None], max_moves_per_broker: int,
                 max_in_flight: int, throttle: float, done: Iterable[int] = (), running: Iterable[int] = (),
                 disk: DiskRoom | None = None) -> None:  # fmt: skip
        self.steps = steps
        # Read once per step: a dispatch asks for them about ten times per step started (200 brokers: a million times).
        self.involved = [s.involved for s in steps]
        self.lanes_of = [s.adds[0] if s.adds else NO_LANE for s in steps]
        self.per_broker = max_moves_per_broker
        self.max_in_flight = max_in_flight
        self.throttle = throttle
        self.completed: set[int] = set(done)
        self.in_flight: set[int] = set()
        self.busy: dict[int, int] = defaultdict(int)
        self.inflow: dict[int, float] = defaultdict(float)
        self.outflow: dict[int, float] = defaultdict(float)
        self.receiving: dict[int, int] = defaultdict(int)  # new replicas in flight into a broker
        self.left: dict[int, int] = defaultdict(int)  # bytes a lane has not started yet
        # Each lane's startable steps, sorted (lowest index: highest priority). A dispatch reads a lane's first
        # CANDIDATES in place: a heap had it pop and push back each one it could not start, a million times at 200 brokers.
        self.lane_ready: dict[int, list[int]] = defaultdict(list)
        self.waiting_for: dict[int, list[int]] = defaultdict(list)  # predecessor -> successors
        self.waiting_on: dict[int, set[int]] = defaultdict(set)  # blocking broker -> lanes
        self.lanes: list[tuple[int, int, int, int]] = []  # (in flight, -bytes left, lane, version)
        self.version: dict[int, int] = defaultdict(int)
        self.disk = DiskLedger(disk) if disk is not None else None
        self.waiting_on_disk: dict[int, set[int]] = defaultdict(set)  # full broker -> lanes
        running = set(running) - self.completed
        self.abandoned: set[int] = set()
        for i, s in enumerate(steps):
            if i in self.completed:
                if self.disk is not None:
                    self.disk.start(s)
                    self.disk.finish(s)
                continue
            lane = self.lane(i)
            self.left[lane] += s.size * len(s.adds)
            if i in running:
                self._launch(i)
                continue
            prev = after[i]
            if prev is None or prev in self.completed:
                self.lane_ready[lane].append(i)
            else:
                self.waiting_for[prev].append(i)
        for lane in sorted(self.lane_ready):  # each lane's steps in index order already
            self._offer(lane)

    def lane(self, i: int) -> int:
        return self.lanes_of[i]

    @property
    def finished(self) -> bool:
        return not self.in_flight and not any(self.lane_ready.values()) and not self.waiting_for

    def _offer(self, lane: int) -> None:
        """(Re)queue a lane under its current key; older entries of it become stale."""
        if not self.lane_ready.get(lane):
            return
        self.version[lane] += 1
        heapq.heappush(self.lanes, (self.receiving[lane], -self.left[lane], lane, self.version[lane]))

    def _blocker(self, i: int) -> int | None:
        """The first broker that keeps step i from starting now, else None."""
        busy, per_broker = self.busy, self.per_broker
        for b in self.involved[i]:
            if busy[b] >= per_broker:
                return b
        s = self.steps[i]
        if s.rate and s.adds:
            for b in s.adds:
                if self.inflow[b] + s.rate >= self.throttle:
                    return b
            if self.outflow[s.leader] + s.rate * len(s.adds) >= self.throttle:
                return s.leader
        return None

    def start(self, allow: Callable[[int], bool] | None = None) -> list[int]:
        """Steps to submit now; ``allow(i)`` False for the next step stops this dispatch (a hold)."""
        started: list[int] = []
        lanes, versions, lane_ready, in_flight, disk = self.lanes, self.version, self.lane_ready, self.in_flight, self.disk
        while len(in_flight) < self.max_in_flight and lanes:
            _, _, lane, version = heapq.heappop(lanes)
            ready = lane_ready.get(lane)
            if version != versions[lane] or not ready:
                continue
            chosen = None
            at = 0  # chosen's place in ``ready``
            blocker = None
            full = None
            for k, i in enumerate(ready[:CANDIDATES]):
                b = self._blocker(i)
                # With nothing in flight a step starts even if it alone breaks a limit: it could never run otherwise.
                if b is None or not (in_flight or started):
                    d = disk.blocker(self.steps[i]) if disk is not None else None
                    if d is None:
                        chosen, at = i, k
                        break
                    full = d if full is None else full
                else:
                    blocker = b if blocker is None else blocker
            if chosen is None:
                if blocker is None and full is not None:
                    self.waiting_on_disk[full].add(lane)
                else:
                    self.waiting_on[blocker if blocker is not None else lane].add(lane)
                continue
            if allow is not None and not allow(chosen):
                self._offer(lane)
                break
            del ready[at]
            self._launch(chosen)
            started.append(chosen)
            self._offer(lane)
        if self.disk is not None and not self.in_flight and not started and self.waiting_on_disk:
            # Every lane waits for disk room and nothing runs to free it: a smaller step beyond a lane's
            # first candidates may still fit. Look at every ready step once (rare: the plan is nearly stuck).
            fit = next((j for lane in sorted(self.lane_ready) for j in sorted(self.lane_ready[lane])
                        if self.disk.blocker(self.steps[j]) is None), None)
            if fit is not None and (allow is None or allow(fit)):
                self.lane_ready[self.lane(fit)].remove(fit)
                self._launch(fit)
                started.append(fit)
                self._offer(self.lane(fit))
        return started

    def disk_blocked(self) -> list[Step]:
        """Ready steps that wait for disk room (for the error when nothing else can run)."""
        return [self.steps[i] for lane in sorted(self.lane_ready) for i in sorted(self.lane_ready[lane])
                if self.disk is not None and self.disk.blocker(self.steps[i]) is not None]

    def _launch(self, i: int) -> None:
        s = self.steps[i]
        for b in self.involved[i]:
            self.busy[b] += 1
        for b in s.adds:
            self.inflow[b] += s.rate
            self.receiving[b] += 1
        self.outflow[s.leader] += s.rate * len(s.adds)
        self.left[self.lane(i)] -= s.size * len(s.adds)
        self.in_flight.add(i)
        if self.disk is not None:
            self.disk.start(s)

    def _land(self, i: int) -> set[int]:
        """Release what in-flight step i held; returns the lanes that may now start something."""
        self.in_flight.discard(i)
        s = self.steps[i]
        for b in self.involved[i]:
            self.busy[b] -= 1
        for b in s.adds:
            self.inflow[b] -= s.rate
            self.receiving[b] -= 1
        self.outflow[s.leader] -= s.rate * len(s.adds)
        return {self.lane(i), *s.adds}

    def abandon(self, i: int) -> None:
        """In-flight step i will not complete (cancelled, refused): drop it and its partition's later steps."""
        lanes = self._land(i)
        self.abandoned.add(i)
        if self.disk is not None:
            self.disk.abandon(self.steps[i])
            for b in self.steps[i].adds:
                lanes |= self.waiting_on_disk.pop(b, set())
        stack = list(self.waiting_for.pop(i, ()))
        while stack:
            j = stack.pop()
            self.abandoned.add(j)
            self.left[self.lane(j)] -= self.steps[j].size * len(self.steps[j].adds)
            stack.extend(self.waiting_for.pop(j, ()))
        self._wake(lanes, i)

    def finish(self, i: int) -> None:
        lanes = self._land(i)
        self.completed.add(i)
        s = self.steps[i]
        if self.disk is not None:
            self.disk.finish(s)
            for b in s.removes:
                lanes |= self.waiting_on_disk.pop(b, set())
        for j in self.waiting_for.pop(i, ()):
            insort(self.lane_ready[self.lane(j)], j)
            lanes.add(self.lane(j))
        self._wake(lanes, i)

    def _wake(self, lanes: set[int], i: int) -> None:
        """Step i completed or was dropped: the lanes that waited on a broker it held may start something."""
        s = self.steps[i]
        for b in {*self.involved[i], *s.adds, s.leader}:
            waiting = self.waiting_on.pop(b, None)
            if waiting:
                lanes |= waiting
        if not self.in_flight:
            # Nothing runs: a step blocked by its own produce rate (at or above the throttle on its
            # own) waits on a broker that will never free. Alone, it may start (see ``start``).
            for waiting in self.waiting_on.values():
                lanes |= waiting
            self.waiting_on.clear()
            # Lanes waiting for disk room look once more (``start`` then looks past their first candidates).
            for waiting in self.waiting_on_disk.values():
                lanes |= waiting
            self.waiting_on_disk.clear()
        for lane in sorted(lanes):
            self._offer(lane)


def physical_bound(steps: Iterable[Step], throttle: float) -> float:
    recv: dict[int, int] = defaultdict(int)
    send: dict[int, int] = defaultdict(int)
    for s in steps:
        for b in s.adds:
            recv[b] += s.size
            send[s.leader] += s.size
    busiest = max([*recv.values(), *send.values()], default=0)
    return busiest / throttle if throttle else 0.0


def simulate(chains: Sequence[Sequence[Step]], max_moves_per_broker: int, max_in_flight: int, throttle: float,
             fixed_seconds: float = 0.0, disk: DiskRoom | None = None) -> Schedule:
    """The schedule of these partitions' steps and its simulated duration under ``throttle`` B/s, each
    step taking ``fixed_seconds`` on top of its copying; ``disk``: the brokers' disk room (``Dispatcher``)."""
    order, after = priority_order(chains)
    dispatcher = Dispatcher(order, after, max_moves_per_broker, max_in_flight, throttle, disk=disk)
    start = [0.0] * len(order)
    end = [0.0] * len(order)
    # A flow is one new replica being copied: (step index, destination). A step ends with its last flow.
    remaining: dict[tuple[int, int], float] = {}
    rate: dict[tuple[int, int], float] = {}
    since: dict[tuple[int, int], float] = {}
    version: dict[tuple[int, int], int] = {}
    open_flows: dict[int, int] = {}
    into: dict[int, dict[tuple[int, int], None]] = defaultdict(dict)
    out_of: dict[int, dict[tuple[int, int], None]] = defaultdict(dict)
    produce_in: dict[int, float] = defaultdict(float)
    produce_out: dict[int, float] = defaultdict(float)
    events: list[tuple[float, int, int, int]] = []  # (time, step, destination, version)
    now = 0.0

    def share(flows: dict, produce: float) -> float:
        return (throttle - produce) / len(flows) if flows else float(throttle)

    def reprice(flows: Iterable[tuple[int, int]]) -> None:
        recv: dict[int, float] = {}
        send: dict[int, float] = {}
        for f in flows:
            i, dst = f
            leader = order[i].leader
            r = recv.get(dst)
            if r is None:
                r = recv[dst] = share(into[dst], produce_in[dst])
            o = send.get(leader)
            if o is None:
                o = send[leader] = share(out_of[leader], produce_out[leader])
            new = max(min(r, o), throttle * 1e-9)  # a move alone above the throttle still ends (see Dispatcher.start)
            if new == rate[f]:
                continue  # its completion event still stands
            remaining[f] -= rate[f] * (now - since[f])
            rate[f], since[f] = new, now
            version[f] += 1
            heapq.heappush(events, (now + max(remaining[f], 0.0) / new, i, dst, version[f]))

    def launch(ids: list[int], touched: set[int]) -> None:
        for i in ids:
            s = order[i]
            start[i] = now
            if not s.adds:  # leaves only: nothing to copy, only the fixed cost
                end[i] = now + fixed_seconds
                heapq.heappush(events, (now + fixed_seconds, i, -1, 0))
                continue
            open_flows[i] = len(s.adds)
            for dst in s.adds:
                f = (i, dst)
                remaining[f], rate[f], since[f], version[f] = float(s.size), 0.0, now, 0  # 0: never a real rate, so priced below
                into[dst][f] = None
                out_of[s.leader][f] = None
                produce_in[dst] += s.rate
                produce_out[s.leader] += s.rate
                touched.update((dst, s.leader))
        _reprice_around(touched)  # once per instant: completions and starts at the same time share it

    def _reprice_around(brokers: Iterable[int]) -> None:
        flows: dict[tuple[int, int], None] = {}  # insertion order: deterministic, as the events are
        for b in sorted(brokers):
            flows.update(into[b])
            flows.update(out_of[b])
        reprice(flows)

    launch(dispatcher.start(), set())
    while events:
        t, i, dst, v = heapq.heappop(events)
        if dst >= 0 and version.get((i, dst)) != v:
            continue  # superseded by a new rate
        now = t
        s = order[i]
        if dst >= 0:
            f = (i, dst)
            del into[dst][f], out_of[s.leader][f]
            produce_in[dst] -= s.rate
            produce_out[s.leader] -= s.rate
            open_flows[i] -= 1
            if open_flows[i]:
                _reprice_around((dst, s.leader))
                continue
            if fixed_seconds:
                # Copied: its bandwidth goes to the others now, its place in flight after the fixed cost.
                _reprice_around((dst, s.leader))
                heapq.heappush(events, (now + fixed_seconds, i, -1, 0))
                continue
        end[i] = now
        dispatcher.finish(i)
        launch(dispatcher.start(), {dst, s.leader} if dst >= 0 else set())
    if not dispatcher.finished and dispatcher.disk is not None and dispatcher.disk_blocked():
        raise dispatcher.disk.stuck(dispatcher.disk_blocked())
    if not dispatcher.finished:  # pragma: no cover - a dispatcher bug, never a user error
        raise RuntimeError("continuous schedule stalled with steps left")
    steps = [ScheduledStep(s, after[i], start[i], end[i]) for i, s in enumerate(order)]
    return Schedule(steps, max(end, default=0.0), physical_bound(order, throttle), max_moves_per_broker, max_in_flight, disk)
