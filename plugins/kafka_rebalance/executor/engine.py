"""The move engine: one dispatcher, one poll loop, for both ways of running a plan.

Every run is a list of steps (one partition from its replicas before to a target) fed to the
planner's ``Dispatcher`` (``planner/schedule.py``), the same one whose simulation produced the plan's
estimate. The engine submits what the dispatcher starts, polls the cluster, lands what finished (the
one "landed" predicate, ``moves.landing_problem``), cancels what stalled, overran its time limit or
was stopped, and hands the dispatcher back what ended. There is one implementation of the poll, the
stall, the hold and the unreachable cluster; two modes choose the steps, the throttles and what
happens when a group of steps ends:

* **continuous** (``barrier=False``): the steps are ``schedule.json``'s; the dispatcher keeps up to
  the plan's per-broker cap of moves in flight and adds the next as soon as one lands
  (AlterPartitionReassignments accepts additions while others run). A partition's next step waits
  for its previous one. The gate is asked before each step.
* **batches** (``barrier=True``): the steps are the batch files' (``steps_from_batches``: one per
  partition per batch, in batch order), and the dispatcher only ever holds the current batch's,
  all at once, as Kafka's own tool submits a batch file. The next batch starts at the barrier: when
  every step of the current one ended, the batch is verified against the cluster (FINISHED only
  with every partition landed; CANCELLED when it only lost cancelled moves; FAILED otherwise), its
  ledger entry written, and the run goes on only if ``Executor._goes_on_after`` says so. The gate
  is asked once before each batch. Reorder batches (same replicas, new order) and plans without a
  schedule run this way.

Throttles (KIP-73, as ``kafka-reassign-partitions.sh`` sets them) are recorded in the ledger before
anything is set and restored exactly in ``finally``:

* batches: the batch's ``throttles.json`` under a record keyed by the batch id, set when the batch
  starts and restored at its barrier;
* continuous: one record for the run; brokers get the rate when a move involving them starts and
  keep it to the end; a topic's throttled-replica lists are its recorded value joined with the
  replicas of its moves in flight, so a landed move's replicas leave the list.

The ledger is written before every change to the cluster. A re-run resumes exactly: finished steps
(continuous: ``continuous.steps``) and batches are never resubmitted; moves a killed run left in
flight are watched to their end, not submitted again; steps that never reached Kafka start afresh.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kafka_rebalance.cluster.admin import (
    BROKER_THROTTLE_KEYS,
    TOPIC,
    TOPIC_THROTTLE_KEYS,
    TP,
    ClusterError,
    PartitionView,
)
from kafka_rebalance.cluster.traffic import traffic_source
from kafka_rebalance.executor.autothrottle import AutoRates
from kafka_rebalance.executor.ledger import (
    CANCELLED,
    CONTINUOUS,
    FAILED,
    FINISHED,
    SUBMITTED,
    THROTTLED,
    THROTTLES_RECORDED,
)
from kafka_rebalance.executor.moves import MoveState, dir_problem, landed, landing_problem
from kafka_rebalance.executor.results import BatchResult, ContinuousResult, PartitionOutcome, PartitionState, StepIssue
from kafka_rebalance.executor.settings import METADATA_SETTLE_SECONDS, ExecutionRefused
from kafka_rebalance.executor.throttles import set_broker_throttle, topic_gone
from kafka_rebalance.plan_manifest import Batch, Plan, PlanSchedule, ScheduledMove
from kafka_rebalance.planner.peaks import DiskRoom
from kafka_rebalance.planner.schedule import Dispatcher
from kafka_rebalance.planner.steps import ANY_LOG_DIR, Step
from kafka_rebalance.planner.throttles import batch_throttles
from kafka_rebalance.throttle_model import (
    ESTIMATE_TOLERANCE,
    MAX_MOVE_FIXED_SECONDS,
    MIN_THROTTLE_EFFICIENCY,
    EstimateMiss,
    RunMeasure,
    measure_run,
)
from kafka_rebalance.units import human_bytes, human_seconds

if TYPE_CHECKING:
    from kafka_rebalance.executor.executor import Executor


@dataclass(slots=True)
class _Track:
    """What the engine knows of one step in flight."""

    started: float  # admin clock
    deadline: float
    expected_end: float  # admin clock: the plan's duration for the step, then its observed rate
    copied: int = -1
    last_change: float = 0.0
    left: int = 0
    gone_since: float | None = None  # no longer listed by the controller; metadata may lag


@dataclass(slots=True)
class _Barrier:
    """What one batch's wave did, judged at its barrier."""

    batch: Batch
    ids: list[int]
    cancelled: list[TP] = field(default_factory=list)
    refused: dict[TP, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    timed_out: bool = False
    interrupted: bool = False  # a hold while moving, or a stall with on_stall=stop: the rest was cancelled
    submitted: bool = False


def steps_from_batches(plan: Plan, batch_ids: Iterable[str] | None = None) -> tuple[ScheduledMove, ...]:
    """The batch files as steps: one per partition per batch, in batch order; ``after`` is the same
    partition's step in an earlier batch. Bytes are the schedule's for the same move when the plan has
    one, else the batch's bytes (plan.json) spread over its new replicas, else 0; a step's expected
    duration is its batch's estimate (a wave lasts as long as its slowest move)."""
    wanted = None if batch_ids is None else set(batch_ids)
    scheduled = {(m.batch, m.tp): m.bytes for m in plan.schedule.moves} if plan.schedule is not None else {}
    last: dict[TP, int] = {}
    out: list[ScheduledMove] = []
    for b in plan.batches:
        if wanted is not None and b.id not in wanted:
            continue
        per_replica = (b.bytes or 0) // b.replica_moves if b.replica_moves else 0
        for tp, target in sorted(b.targets.items()):
            before = b.before[tp]
            adds = tuple(r for r in target if r not in before)
            removes = tuple(r for r in before if r not in target)
            size = scheduled.get((b.id, tp), per_replica)
            out.append(ScheduledMove(len(out), tp, b.id, before, target, adds, removes, last.get(tp),
                                     before[0] if before else -1, size, 0.0, 0.0, b.estimated_seconds or 0.0))
            last[tp] = len(out) - 1
    return tuple(out)


def planner_steps(moves: Sequence[ScheduledMove], named: Mapping[int, Mapping[int, str]] | None = None,
                  ) -> tuple[list[Step], list[int | None]]:  # fmt: skip
    """Moves as the planner's steps (their order kept) and their predecessors: what the Dispatcher takes. ``named``:
    per move id, the log dir its batch names for each new replica (broker -> path), and each move's ``sources``
    (schedule.json): the disk ledger holds each dir by them as the planner's did."""
    index: dict[TP, int] = {}
    seq: dict[TP, int] = defaultdict(int)
    steps: list[Step] = []
    for m in moves:
        p = index.setdefault(m.tp, len(index))
        dirs = (named or {}).get(m.id, {})
        steps.append(Step(p, m.tp.topic, m.tp.partition, m.before, m.replicas, m.adds, m.removes, seq[m.tp], m.leader,
                          m.bytes, m.produce_bytes_per_sec,
                          tuple(dirs.get(b, ANY_LOG_DIR) if b in m.adds else ANY_LOG_DIR for b in m.replicas) if dirs else (),
                          m.sources))
        seq[m.tp] += 1
    return steps, [m.after for m in moves]


def batch_state(outcomes: Iterable[PartitionOutcome], ok: bool) -> MoveState:
    """A batch is FINISHED only with every partition at its target. One that lost moves to cancellation
    (and nothing else) is CANCELLED: never skipped by a re-run, which starts those moves again."""
    states = [o.state for o in outcomes]
    if ok and all(st is PartitionState.AT_TARGET for st in states):
        return FINISHED
    if ok and all(st in (PartitionState.AT_TARGET, PartitionState.CANCELLED) for st in states):
        return CANCELLED
    return FAILED


# ---------------------------------------------------------------------------- throttles


class _BatchThrottles:
    """A batch's throttles.json: recorded and set when its wave starts, restored at its barrier."""

    def __init__(self, ex: Executor, batch: Batch, down: set[int], auto: AutoRates | None) -> None:
        self.ex, self.batch, self.auto = ex, batch, auto
        self.record = ex.throttle_record(batch.id)
        # A broker's rate can only be read or written through that broker, and a broker that is down
        # serves no replication anyway: it is neither recorded nor set.
        self.brokers = [(int(bid), cfg) for bid, cfg in sorted(batch.throttles.brokers.items()) if int(bid) not in down]

    def begin(self) -> None:
        self.record.begin()
        for bid, cfg in self.brokers:
            self.record.record_broker(bid, cfg)
        for topic, cfg in sorted(self.batch.throttles.topics.items()):
            self.record.record_topic(topic, cfg)
        # The ledger holds the old values BEFORE anything is set: a kill from here on is recoverable.
        self.record.save()

    def apply(self) -> None:
        auto: dict[int, dict[str, str]] = {}
        if self.auto is not None:
            # The batch's rates (its throttles.json, as approved) give way to the headroom's, never above them.
            self.auto.start(self.ex.ledger.throttle_entry(self.batch.id))
            auto = self.auto.want(self.rated())
            self.ex.ledger.save()
        for bid, cfg in self.brokers:
            if not set_broker_throttle(self.ex.admin, bid, dict(sorted({**cfg, **auto.get(bid, {})}.items()))):
                # Died since the batch started: its moves stall (the stall handling cancels them); its recorded values
                # stay pending until it answers again.
                self.ex.ledger.event(f"batch {self.batch.id}: broker {bid} stopped answering before its throttle rate was set")
        for topic, cfg in sorted(self.batch.throttles.topics.items()):
            self.ex.admin.alter_configs(TOPIC, topic, self.record.merged(topic, cfg))

    def follow(self, new: list[int]) -> None:
        """Moves start: a batch's throttles cover all of its moves from the start."""

    def moved(self, topics: set[str]) -> None:
        """Moves ended: a batch's throttles stay until its barrier."""

    def rated(self) -> list[int]:
        """Brokers whose replication rate this record set."""
        return [bid for bid, cfg in self.brokers if set(cfg) & set(BROKER_THROTTLE_KEYS)]

    def restore(self) -> list[str]:
        return self.record.restore()


class _FollowingThrottles:
    """The continuous run's: throttles follow the moves in flight, recorded the first time a resource is touched."""

    def __init__(self, run: MoveRun, schedule: PlanSchedule) -> None:
        self.run = run
        self.record = run.ex.throttle_record(CONTINUOUS)
        self.rate = str(schedule.throttle_bytes_per_sec)
        self.written: dict[str, dict[str, str | None]] = {}  # topic -> the list values last written
        self.rate_set: set[int] = set()  # brokers given the throttle rate by this run
        self.unreachable: set[int] = set()

    def begin(self) -> None:
        self.record.begin()
        if self.run.auto is not None:
            self.run.auto.start(self.run.ex.ledger.throttle_entry(CONTINUOUS))

    def rated(self) -> list[int]:
        return sorted(self.rate_set)

    def follow(self, new: list[int]) -> None:
        """Record (and save) the values of resources touched for the first time, then set the throttles for ``new``."""
        ex, moves = self.run.ex, self.run.moves
        brokers = sorted({b for i in new for b in (*moves[i].before, *moves[i].replicas)} - self.rate_set)
        fresh_brokers: list[int] = []
        for b in brokers:
            try:
                self.record.record_broker(b, BROKER_THROTTLE_KEYS)  # kept if an earlier run's restore is pending
                fresh_brokers.append(b)
            except ClusterError as exc:
                # A broker that is down serves no replication and can only be configured through itself;
                # it is asked again when a later move involves it.
                if b not in self.unreachable:
                    self.unreachable.add(b)
                    ex.ledger.event(f"continuous: broker {b} did not answer ({exc}); its throttle rate is neither "
                                    "set nor restored while it does not")
        for topic in sorted({moves[i].tp.topic for i in new}):
            self.record.record_topic(topic, TOPIC_THROTTLE_KEYS)
        auto = self.run.auto.want(fresh_brokers) if self.run.auto is not None else {}
        self.record.save()  # the old values (and any auto rate about to be set) are on disk before anything is set
        for b in fresh_brokers:
            if set_broker_throttle(ex.admin, b, auto.get(b) or {k: self.rate for k in BROKER_THROTTLE_KEYS}):
                self.rate_set.add(b)
            else:  # died since it was recorded: its moves stall; asked again when a later move involves it
                self.unreachable.add(b)
                ex.ledger.event(f"continuous: broker {b} stopped answering before its throttle rate was set")
        self.moved({moves[i].tp.topic for i in new})

    def moved(self, topics: set[str]) -> None:
        """Write the lists of these topics: their recorded values joined with the moves in flight now."""
        run = self.run
        for topic in sorted(topics):
            original = self.record.recorded["topics"][topic]  # recorded before its first move started
            planned = batch_throttles((run.steps[i] for i in sorted(run.by_topic.get(topic, ()))), 0)["topics"].get(topic, {})
            merged = self.record.merged(topic, planned)
            want = {k: merged[k] if k in merged else original.get(k) for k in TOPIC_THROTTLE_KEYS}
            if self.written.get(topic) != want:
                try:
                    run.ex.admin.alter_configs(TOPIC, topic, want)
                except ClusterError:
                    # Deleted by someone while its moves ran (they fail as "the partition disappeared"): its
                    # throttles went with it. Anything else is the caller's to handle.
                    if not topic_gone(run.ex.admin, topic):
                        raise
                self.written[topic] = want

    def restore(self) -> list[str]:
        pending = self.record.restore()
        self.written.clear()
        return pending


# ---------------------------------------------------------------------------- the engine


class MoveRun:
    """One run of steps through the dispatcher: ``schedule(ex)`` for continuous mode, ``batches(ex, ids)`` for
    batch mode (a barrier after each batch)."""

    def __init__(self, ex: Executor, moves: Sequence[ScheduledMove], *, barrier: bool) -> None:
        self.ex = ex
        self.barrier = barrier
        self.moves: tuple[ScheduledMove, ...] = tuple(moves)
        self.by_batch: dict[str, list[int]] = defaultdict(list)
        for m in self.moves:
            self.by_batch[m.batch].append(m.id)
        # The log dirs each move names for its replicas (broker -> path), from its batch's reassignment JSON.
        batches = {b.id: b for b in ex.plan.batches}
        self.named: dict[int, dict[int, str]] = {
            m.id: batches[m.batch].named_dirs(m.tp) for m in self.moves if m.batch in batches and batches[m.batch].dirs}
        self.steps, self.after = planner_steps(self.moves, self.named)
        self.label = CONTINUOUS  # what progress lines and cancellations are said of: a batch, or the continuous run
        auto = ex.settings.auto_throttle
        source = traffic_source(ex.admin) if auto is not None else None
        if auto is not None and source is None:
            raise ExecutionRefused("--throttle auto: this cluster's traffic cannot be read at each poll")
        self.auto: AutoRates | None = AutoRates(ex, auto, source) if auto is not None and source is not None else None
        self.throttles: _BatchThrottles | _FollowingThrottles | None = None
        self.wave: _Barrier | None = None  # batch mode: the batch running now
        self.result: ContinuousResult | None = None  # continuous mode
        self.entry: dict[str, Any] = {}  # continuous mode: the ledger's continuous entry
        self._reset()

    @classmethod
    def schedule(cls, ex: Executor) -> MoveRun:
        if ex.plan.schedule is None:
            raise ValueError("plan has no schedule")  # the caller checks and says what to do
        return cls(ex, ex.plan.schedule.moves, barrier=False)

    @classmethod
    def batches(cls, ex: Executor, batch_ids: Iterable[str]) -> MoveRun:
        return cls(ex, steps_from_batches(ex.plan, batch_ids), barrier=True)

    def _reset(self) -> None:
        self.tracks: dict[int, _Track] = {}
        self.by_topic: dict[str, set[int]] = defaultdict(set)  # topic -> steps in flight
        self.stop_starting = False  # a hold, a failure or on_stall=stop: no new submissions
        self.unreachable_since: float | None = None
        self.started = 0.0  # admin clock at the start of this run (or wave)
        self.copied = 0  # bytes of the moves that finished in this run: the observed rate behind the ETA
        self.waiting = 0  # bytes of the steps not started yet
        self.dirty = False  # ledger entries changed since the last save
        self.dropped: set[int] = set()

    # ------------------------------------------------------------------ helpers

    def _say(self, line: str) -> None:
        self.ex.progress(f"{self.label}: {line}")

    def _iso(self) -> str:
        return self.ex.gate.clock().isoformat(timespec="milliseconds")

    def _bytes(self, i: int) -> int:
        return self.moves[i].bytes * len(self.moves[i].adds)

    def _timeout(self, m: ScheduledMove) -> float:
        if self.wave is not None:
            return self.ex.settings.timeout_for(self.wave.batch)
        if self.ex.settings.batch_timeout is not None:
            return self.ex.settings.batch_timeout
        return 3 * max(0.0, m.estimated_end_s - m.estimated_start_s) + 600

    def _track(self, m: ScheduledMove, now: float) -> _Track:
        return _Track(now, now + self._timeout(m), now + max(0.0, m.estimated_end_s - m.estimated_start_s), last_change=now)

    def _next_poll(self, now: float) -> float:
        """Seconds to sleep: until the first move in flight is expected to land, within [1 s, poll_interval]; a
        second when a move has copied its bytes and only has to land.

        A pipe stays empty from a move's completion until the poll that notices it: waiting a fixed
        interval would cost half of it per move, which adds up on the busiest broker's long chain
        of moves. The expectation comes from the move's observed copy rate (the plan's estimate
        until there is one); ``poll_interval`` stays the longest wait, so stalls are still seen.
        """
        longest = self.ex.settings.poll_interval
        # An overdue move is looked at again after as long as it is overdue (1, 2, 4 ... s, up to the poll
        # interval): one that is merely late (its fixed cost longer than planned) is seen landing a moment
        # later instead of a whole interval later, and one that stopped soon gets the interval.
        soonest = min((t.expected_end if t.expected_end > now else now + max(0.0, now - t.expected_end)
                       for t in self.tracks.values()), default=now + longest)
        # A move that has copied everything (or left the controller's list) lands within its fixed cost.
        if any(t.gone_since is not None or (t.copied >= 0 and t.left == 0) for t in self.tracks.values()):
            soonest = min(soonest, now)
        return min(longest, max(min(1.0, longest), soonest - now + 0.05))

    def _dir_problems(self, ids: Iterable[int], nudge: bool) -> dict[int, str]:
        """Per move naming log dirs whose replicas are not all in them yet, why (DescribeLogDirs). ``nudge``: ask
        again (AlterReplicaLogDirs) for the replicas not in or moving to their dir, as Kafka's own tool retries
        until the broker holds the replica; set before the reassignment, the dir is where a new replica is
        created, and a broker that did not hold the replica then answers with an error."""
        named = {i: self.named[i] for i in ids if self.named.get(i)}
        if not named:
            return {}
        admin = self.ex.admin
        found = admin.replica_dirs(sorted({self.moves[i].tp for i in named}))
        if nudge:
            again = {(self.moves[i].tp, b): d for i, dirs in named.items() for b, d in dirs.items()
                     if (r := found.get((self.moves[i].tp, b))) is None or d not in (r.path, r.future)}
            if again:
                admin.alter_replica_log_dirs(again)
        return {i: p for i, dirs in named.items() if (p := dir_problem(found, self.moves[i].tp, dirs)) is not None}

    # ------------------------------------------------------------------ the loop: one implementation for both modes

    def _dispatch(self, dispatcher: Dispatcher) -> None:
        """Start what the dispatcher allows, poll, land, cancel; return when nothing is in flight."""
        ex, admin = self.ex, self.ex.admin
        while True:
            if not self.stop_starting:
                ex.check_stop()
                new = dispatcher.start(allow=self._allow)
                if new or (self.wave is not None and not self.wave.submitted):
                    self._submit(new, dispatcher)
                    self.dirty = False
            if self.dirty:
                ex.ledger.save()
                self.dirty = False
            if not dispatcher.in_flight:
                return
            ex.sleep(self._next_poll(admin.now()))
            self._poll(dispatcher)

    def _allow(self, i: int) -> bool:
        if self.barrier:
            return True  # the gate was asked once for the whole batch
        m = self.moves[i]
        seconds = max(0.0, m.estimated_end_s - m.estimated_start_s)
        if self.auto is not None and m.adds:
            seconds *= self.auto.slowdown([m.leader], m.adds)  # the estimate is at the ceiling: at today's rates
        hold = self.ex.gate.before_move(seconds)
        if hold is None:
            return True
        self.stop_starting = True
        self.ex._held(hold, f"continuous: step {i} ({m.tp}) not started")
        return False

    def _submit(self, new: list[int], dispatcher: Dispatcher) -> None:
        ex, now, at = self.ex, self.ex.admin.now(), self._iso()
        assert self.throttles is not None
        for i in new:
            m = self.moves[i]
            self.waiting -= self._bytes(i)
            self.by_topic[m.tp.topic].add(i)
            if self.wave is None:
                # A retried step (cancelled or failed earlier) keeps its earlier attempts in the ledger.
                ex.ledger.set_step(str(i), SUBMITTED, tp=str(m.tp), batch=m.batch, started_at=at, started_clock=round(now, 3))
                if ex.ledger.state(m.batch) != SUBMITTED:
                    ex.ledger.set_batch(m.batch, SUBMITTED, mode=CONTINUOUS, started_at=at)
            self.tracks[i] = self._track(m, now)
        self.throttles.follow(new)  # continuous: saves the ledger (steps included) before setting anything
        # A stop asked for while the throttles were being set: nothing is submitted (the finally restores them;
        # steps recorded above are not in flight, so a re-run starts them afresh).
        ex.check_stop()
        targets = {self.moves[i].tp: self.moves[i].replicas for i in new}
        dirs = {(self.moves[i].tp, b): d for i in new for b, d in self.named.get(i, {}).items()}
        if dirs:
            # Before the reassignment: the broker records the dir and creates a new replica there (its answer for
            # a replica it does not hold yet is an error; _land asks again once it does).
            ex.admin.alter_replica_log_dirs(dirs)
        errors = {tp: e for tp, e in ex.reassign(targets, self.label, "submission").items() if e} if targets else {}
        if self.wave is not None:
            self.wave.submitted = True
            self.wave.refused.update(errors)
            ex.ledger.set_batch(self.wave.batch.id, SUBMITTED)
            ex.ledger.save()
        for i in new:
            err = errors.get(self.moves[i].tp)
            if err:
                self._end(i, dispatcher, FAILED, f"reassignment refused by the cluster ({err})")
        if errors:
            self.stop_starting = True
            self.throttles.moved({self.moves[i].tp.topic for i in new})
            ex.ledger.save()
        self._say(f"started {len(new)} step(s); {len(dispatcher.in_flight)} in flight")

    def _end(self, i: int, dispatcher: Dispatcher, state: MoveState, why: str | None = None) -> None:
        m, t = self.moves[i], self.tracks.pop(i)
        self.by_topic[m.tp.topic].discard(i)
        now = self.ex.admin.now()
        step = None
        if self.wave is None:
            step = self.ex.ledger.set_step(str(i), state, ended_at=self._iso(), ended_clock=round(now, 3),
                                           seconds=round(now - t.started, 3))
        if state == FINISHED:
            self.copied += self._bytes(i)
            dispatcher.finish(i)
            return
        dispatcher.abandon(i)
        for j in dispatcher.abandoned - self.dropped - {i}:  # the partition's later steps, dropped with it
            self.waiting -= self._bytes(j)
        self.dropped |= dispatcher.abandoned
        if self.wave is not None:
            if state == CANCELLED:
                self.wave.cancelled.append(m.tp)
            return  # the barrier judges the batch's partitions on the cluster
        assert step is not None and self.result is not None
        step["problems"] = [why or state]
        (self.result.cancelled if state == CANCELLED else self.result.failed).append(StepIssue(i, m.tp, why or state.value))
        self._say(f"step {i} {m.tp} {state}: {why}")

    def _poll(self, dispatcher: Dispatcher) -> None:
        ex, admin, s = self.ex, self.ex.admin, self.ex.settings
        ids = sorted(dispatcher.in_flight)
        try:
            inflight = admin.list_reassignments()
            listed = [self.moves[i].tp for i in ids if self.moves[i].tp in inflight]
            sizes = admin.replica_sizes(listed) if listed else {}
        except ClusterError as exc:
            # A broker dying (the controller, perhaps) makes calls fail until the quorum fences it:
            # keep watching the moves in flight; give up only after a stall's time.
            now = admin.now()
            self.unreachable_since = now if self.unreachable_since is None else self.unreachable_since
            if now - self.unreachable_since >= s.stall_seconds:
                raise
            self._say(f"cluster not answering ({exc}); retrying")
            return
        self.unreachable_since = None
        now = admin.now()
        touched: set[str] = set()
        stalled: list[int] = []
        late: list[int] = []
        gone: list[int] = []
        for i in ids:
            m, t = self.moves[i], self.tracks[i]
            r = inflight.get(m.tp)
            if r is None or r.target != m.replicas:
                gone.append(i)
                continue
            source = max((sizes.get((m.tp, x), 0) for x in r.replicas if x not in r.adding), default=0)
            copied = sum(sizes.get((m.tp, x), 0) for x in r.adding)
            t.left = sum(max(0, source - sizes.get((m.tp, x), 0)) for x in r.adding)
            if copied > t.copied:
                if t.copied >= 0 and now > t.last_change:
                    t.expected_end = now + t.left * (now - t.last_change) / (copied - t.copied)
                t.copied, t.last_change = copied, now
            elif now - t.last_change >= s.stall_seconds:
                stalled.append(i)
            if now >= t.deadline:
                late.append(i)
        if gone:
            self._land(gone, dispatcher, now, touched)
        hold = ex.gate.while_moving() if dispatcher.in_flight else None
        if hold is not None:
            # Stop, or the window closed and the grace passed: cancel what is in flight (Kafka reverts it).
            self.stop_starting = True
            self._cancel(sorted(dispatcher.in_flight), dispatcher, f"{hold.reason.value}: {hold.detail}", touched)
            if self.wave is not None:
                self.wave.interrupted = True
                self.wave.problems.append(f"{hold.reason.value}: {hold.detail}; moves in flight were cancelled")
                ex._held(hold, f"batch {self.wave.batch.id} interrupted")
            else:
                ex._held(hold, "continuous: moves in flight cancelled")
        else:
            if stalled:
                self._cancel(stalled, dispatcher, f"no progress for {human_seconds(s.stall_seconds)}", touched)
                if s.on_stall == "stop":
                    self.stop_starting = True
                    if self.wave is not None:
                        self.wave.interrupted = True
                    self._cancel(sorted(dispatcher.in_flight), dispatcher,
                                 "stopping the batch after a stall" if self.barrier else "stopping after a stall", touched)
            late = [i for i in late if i in dispatcher.in_flight]
            if late:
                if self.wave is not None:
                    timeout = human_seconds(self._timeout(self.moves[late[0]]))
                    if not self.wave.timed_out:
                        self.wave.problems.append(f"time limit {timeout} reached; unfinished moves were cancelled")
                    self.wave.timed_out = True
                    self._cancel(late, dispatcher, f"batch time limit {timeout} reached", touched)
                else:
                    self._cancel(late, dispatcher, "its time limit was reached", touched)
        if touched:
            assert self.throttles is not None
            self.throttles.moved(touched)
            # Saved by the next submission (before it changes the cluster) or at the next poll: a run
            # killed before that finds these moves at their targets and records them then.
            self.dirty = True
        if self.auto is not None and self.throttles is not None and dispatcher.in_flight:
            self.auto.poll(self.throttles.rated())  # saves the ledger (the changes, and anything dirty) first
        self._report(dispatcher, now)

    def _report(self, dispatcher: Dispatcher, now: float) -> None:
        """The progress line of a poll."""
        left = sum(t.left for t in self.tracks.values())
        if self.wave is not None:
            done = len(dispatcher.completed.intersection(self.wave.ids))
            # A wave ends with its slowest move: each move's expected end comes from its observed rate.
            eta = max((t.expected_end for t in self.tracks.values()), default=now) - now
            self._say(f"{done}/{len(self.wave.ids)} partitions done, {human_bytes(left)} left, "
                      f"ETA {human_seconds(max(0.0, eta)) if dispatcher.in_flight else '0s'}")
            return
        elapsed = now - self.started
        rate = self.copied / elapsed if self.copied > 0 and elapsed > 0 else None
        eta_text = f"ETA {human_seconds((left + self.waiting) / rate)}" if rate else "ETA unknown until a move lands"
        self._say(f"{len(dispatcher.completed)}/{len(self.moves)} steps done, {len(dispatcher.in_flight)} in flight "
                  f"({human_bytes(left)} left in them, {human_bytes(self.waiting)} not started), {eta_text}")

    def _land(self, gone: list[int], dispatcher: Dispatcher, now: float, touched: set[str]) -> None:
        parts = self.ex.admin.partitions([self.moves[i].tp for i in gone])
        misplaced = self._dir_problems([i for i in gone if landed(parts.get(self.moves[i].tp), self.moves[i].replicas)], True)
        for i in gone:
            m, t = self.moves[i], self.tracks[i]
            p = parts.get(m.tp)
            if landed(p, m.replicas) and i in misplaced:
                # On its brokers, not yet in its log dirs: a copy between dirs runs until the move's time limit.
                t.gone_since = now if t.gone_since is None else t.gone_since
                if now < t.deadline:
                    continue
                self._end(i, dispatcher, FAILED, misplaced[i])
                self.stop_starting = True
                touched.add(m.tp.topic)
                continue
            if landed(p, m.replicas):
                self._end(i, dispatcher, FINISHED)
                touched.add(m.tp.topic)
                continue
            t.gone_since = now if t.gone_since is None else t.gone_since
            if now - t.gone_since < METADATA_SETTLE_SECONDS:  # the views may not agree yet
                continue
            if p is None:
                why = "the partition disappeared"
            elif sorted(p.replicas) == sorted(m.before):
                why = f"cancelled outside this run: replicas are back at {list(p.replicas)}"
            else:
                why = f"replicas {list(p.replicas)}, ISR {list(p.isr)}, leader {p.leader}; target {list(m.replicas)}"
            self._end(i, dispatcher, FAILED, why)
            self.stop_starting = True
            touched.add(m.tp.topic)

    def _cancel(self, ids: list[int], dispatcher: Dispatcher, why: str, touched: set[str]) -> None:
        tps = {self.moves[i].tp: i for i in ids}
        cancelled = self.ex.cancel_moves(sorted(tps), self.label, why)
        for tp, i in sorted(tps.items()):
            if tp in cancelled:
                self._end(i, dispatcher, CANCELLED, why)
                touched.add(tp.topic)
            # Not cancelled: it finished between poll and cancel; the next poll lands it.

    # ------------------------------------------------------------------ batch mode: a barrier after each batch

    def run_batches(self, batch_ids: Iterable[str]) -> list[BatchResult]:
        """Run these batches in order while the gate allows; stop at a hold or at a batch that did not finish."""
        ex = self.ex
        ex.hold = None
        results: list[BatchResult] = []
        for bid in batch_ids:
            ex.check_stop()
            if ex.ledger.state(bid) != FINISHED and self._hold_before(ex.plan.batch(bid)):
                break
            r = self.run_batch(bid)
            results.append(r)
            if ex.hold is not None or not ex._goes_on_after(r):
                break
        return results

    def _hold_before(self, batch: Batch) -> bool:
        """Whether the gate holds ``batch`` back now; a hold is recorded in the ledger and remembered.

        A batch a killed run had already submitted is in flight in Kafka whatever the gate says: it is
        watched to its end (a stop, or the end of the window it started in plus the grace, cancels it
        there), never left running unwatched.
        """
        ex = self.ex
        state = ex.ledger.state(batch.id)
        # Killed between submitting and recording it: Kafka's list says whether its moves are in flight.
        if state == SUBMITTED or (state in (THROTTLES_RECORDED, THROTTLED)
                                  and batch.id in ex.records_in_flight(ex.admin.list_reassignments())):
            started = ex.ledger.batch(batch.id).get("started_at")
            ex.gate.watch_in_flight(datetime.fromisoformat(started) if isinstance(started, str) else None)
            return False
        seconds = batch.estimated_seconds
        if self.auto is not None:  # the estimate is at the ceiling: at the rates the traffic gives its brokers now
            self.auto.read()
            copies = [self.moves[i] for i in self.by_batch[batch.id] if self.moves[i].adds]
            if copies and seconds is not None:  # (a reorder or log-dir batch copies nothing between brokers)
                seconds *= self.auto.slowdown({m.leader for m in copies}, {b for m in copies for b in m.adds})
        hold = ex.gate.before_move(seconds)
        if hold is not None:
            ex._held(hold, f"batch {batch.id} not started")
        return hold is not None

    def run_batch(self, batch_id: str) -> BatchResult:
        """One batch as a wave: every step submitted at once, then the barrier (verify, record, restore)."""
        ex, admin = self.ex, self.ex.admin
        batch = ex.plan.batch(batch_id)
        entry = ex.ledger.batch(batch.id)
        if entry.get("state") == FINISHED:
            # FINISHED means every partition landed (batch_state): the plan's own partitions, typed, are the list.
            return BatchResult(batch.id, FINISHED, len(batch.targets), sorted(batch.targets), [],
                               entry.get("problems", []), batch.estimated_seconds, entry.get("actual_seconds"), skipped=True)
        ex.restore_leftover_throttles()  # checks the cluster's identity first
        inflight = admin.list_reassignments()
        # The run's start refused other tools' reassignments (unless --additional); one that started since, on a
        # partition this batch does not move, is left alone and noted (on one it moves, the check below refuses).
        ex.note_foreign(inflight)
        snap = admin.describe()
        current = {TP(p.topic, p.partition): p.replicas for p in snap.partitions}
        down = {b.id for b in snap.brokers if not b.alive}
        skipped = sorted(int(b) for b in batch.throttles.brokers if int(b) in down)
        if skipped:
            ex.ledger.event(f"batch {batch.id}: brokers {skipped} are down; their throttle rates are neither set nor restored")
        problems = ex._check_batches([batch], current, inflight, {b.id for b in snap.brokers})
        if problems:
            raise ExecutionRefused(f"batch {batch.id}: the cluster is not where this batch starts: " + "; ".join(problems[:10]))
        ids = self.by_batch[batch.id]
        # Resuming: a move already at its target is not submitted again (the barrier verifies it), and one a
        # killed run left in flight to its target is watched, not resubmitted.
        at_target = {i for i in ids if current.get(self.moves[i].tp) == self.moves[i].replicas}
        at_target -= set(self._dir_problems(at_target, False))  # on its brokers, not yet in its named dirs
        running = {i for i in ids if i not in at_target and self.moves[i].tp in inflight
                   and inflight[self.moves[i].tp].target == self.moves[i].replicas}
        self._reset()
        self.label = f"batch {batch.id}"
        self.wave = wave = _Barrier(batch, ids)
        result = BatchResult(batch.id, FAILED, len(batch.targets), estimated_seconds=batch.estimated_seconds)
        start = self.started = admin.now()
        ex.ledger.set_batch(batch.id, THROTTLES_RECORDED, started_clock=start, started_at=self._iso(), **ex.clock_facts())
        self.throttles = throttles = _BatchThrottles(ex, batch, down, self.auto)
        throttles.begin()
        try:
            throttles.apply()
            ex.ledger.set_batch(batch.id, THROTTLED)
            ex.ledger.save()
            # Only this batch's steps: the others count as done for this wave (earlier batches ended at their
            # barriers, later ones wait for theirs); no cap beyond the batch itself.
            cap = max(1, len(ids))
            others = set(range(len(self.moves))) - set(ids)
            dispatcher = Dispatcher(self.steps, self.after, cap, cap, float("inf"), done=others | at_target, running=running)
            for i in sorted(running):
                self.tracks[i] = self._track(self.moves[i], start)
                self.by_topic[self.moves[i].tp.topic].add(i)
            self.waiting = sum(self._bytes(i) for i in ids if i not in at_target and i not in running)
            self._dispatch(dispatcher)
            outcomes = self._verify_batch(batch, set(wave.cancelled), wave.refused)
            result.cancelled = list(wave.cancelled)
            result.problems = [*wave.problems, *(p for o in outcomes.values() for p in o.problems)]
            ok = not result.problems and not wave.timed_out and not (wave.interrupted and wave.cancelled)
            result.state = batch_state(outcomes.values(), ok)
        except BaseException:
            ex.ledger.set_batch(batch.id, FAILED)
            raise
        finally:
            ex.ledger.save()
            pending = throttles.restore()
            self.wave = None
        if pending:
            result.state = FAILED
            result.problems.append(f"throttles not yet restored on {', '.join(pending)}: the resource did not answer")
        result.actual_seconds = round(admin.now() - start, 3)
        result.completed = [tp for tp, o in sorted(outcomes.items()) if o.state is PartitionState.AT_TARGET]
        ex.ledger.set_batch(batch.id, result.state, completed=[str(tp) for tp in result.completed],
                            cancelled=[str(tp) for tp in result.cancelled], problems=result.problems,
                            partition_states={str(tp): o.state.value for tp, o in sorted(outcomes.items())},
                            actual_seconds=result.actual_seconds, estimated_seconds=batch.estimated_seconds,
                            ended_at=self._iso())
        ex.ledger.save()
        ex.progress(
            f"batch {batch.id}: {result.state}, {len(result.completed)}/{len(batch.targets)} partitions at target, "
            f"{len(result.cancelled)} cancelled, took {human_seconds(result.actual_seconds)} "
            f"(estimated {human_seconds(batch.estimated_seconds)})")
        for problem in result.problems:
            ex.progress(f"batch {batch.id}: {problem}")
        return result

    def _verify_batch(self, batch: Batch, cancelled: set[TP], refused: dict[TP, str]) -> dict[TP, PartitionOutcome]:
        """The barrier's verdict per partition, waiting up to the metadata's settle time for the views to agree."""
        deadline = self.ex.admin.now() + METADATA_SETTLE_SECONDS
        while True:
            out = self._batch_outcomes(batch, cancelled, refused)
            if not any(o.problems for o in out.values()) or self.ex.admin.now() >= deadline:
                return out
            self.ex.sleep(min(1.0, self.ex.settings.poll_interval))

    def _batch_outcomes(self, batch: Batch, cancelled: set[TP], refused: dict[TP, str]) -> dict[TP, PartitionOutcome]:
        """Each partition's state after the batch, with the problems that keep it from counting as done."""
        snap = self.ex.admin.describe()
        parts = {TP(p.topic, p.partition): p for p in snap.partitions}
        alive = {b.id for b in snap.brokers if b.alive}
        named = {tp: batch.named_dirs(tp) for tp in {tp for tp, _ in batch.dirs}}
        found = self.ex.admin.replica_dirs(sorted(named)) if named else {}
        out: dict[TP, PartitionOutcome] = {}
        for tp, target in sorted(batch.targets.items()):
            p = parts.get(tp)
            before = batch.before[tp]
            if p is None:
                out[tp] = PartitionOutcome(tp, PartitionState.NOT_AT_TARGET, (f"{tp}: disappeared during the batch",))
            elif tp in refused or tp in cancelled:
                problems = [f"{tp}: reassignment refused by the cluster ({refused[tp]})"] if tp in refused else []
                # Kafka's cancel restores the old replica set, not necessarily its order.
                if sorted(p.replicas) != sorted(before):
                    problems.append(f"{tp}: {'refused' if tp in refused else 'cancelled'}, but replicas are "
                                    f"{list(p.replicas)}, not back to {list(before)}")
                state = PartitionState.REFUSED if tp in refused else PartitionState.CANCELLED
                out[tp] = PartitionOutcome(tp, state, tuple(problems))
            elif (problem := landing_problem(PartitionView(p.replicas, p.isr, p.leader), target)) is not None:
                dead = sorted(set(target) - set(p.isr) - alive)
                out[tp] = PartitionOutcome(tp, PartitionState.NOT_AT_TARGET, (
                    f"{tp}: {problem}" + (f" (broker(s) {dead} down)" if dead else ""),))
            elif tp in named and (problem := dir_problem(found, tp, named[tp])) is not None:
                out[tp] = PartitionOutcome(tp, PartitionState.NOT_AT_TARGET, (f"{tp}: {problem}",))
            else:
                out[tp] = PartitionOutcome(tp, PartitionState.AT_TARGET)
        return out

    # ------------------------------------------------------------------ continuous mode: the schedule

    def run_schedule(self) -> ContinuousResult:
        """The schedule in one run; returns when every step ended, or on a hold or a failure."""
        ex, admin = self.ex, self.ex.admin
        schedule = ex.plan.schedule
        assert schedule is not None
        self._reset()
        self.label = CONTINUOUS
        self.entry = ex.ledger.continuous()
        self.result = r = ContinuousResult(FAILED, len(self.moves), estimated_seconds=schedule.estimated_seconds)
        # First, before anything is read or set: a run whose ledger cannot start again is refused untouched.
        ex.ledger.set_run(SUBMITTED, started_at=self._iso(), estimated_seconds=schedule.estimated_seconds)
        done, running = self._resume()
        # The plan's disk room (schedule.json, under the plan hash): a move starts only into a broker whose load as
        # the plan knows it (bytes before + arrivals started - departures finished) leaves room for it. The
        # schedule never waits on it when moves finish as estimated; when they finish in another order, it holds.
        # Each log dir of a broker with several is held the same way (dir_room: as the log-dir batches leave it; a
        # move's new replicas arrive in the dirs its batch names, its replicas leave the dirs its ``sources`` name).
        dispatcher = Dispatcher(self.steps, self.after, schedule.max_moves_per_broker, schedule.max_in_flight,
                                schedule.delivered_rate, done=done, running=running, disk=DiskRoom.of(schedule.disk_room, schedule.dir_room))
        self.waiting = sum(self._bytes(i) for i in range(len(self.moves)) if i not in done and i not in running)
        started = self.started = admin.now()
        # started_clock: the admin's clock, which progress measures the copying rate on (the wall clock of
        # started_at is not the simulator's). A field beside the run's state, not a state.
        self.entry["started_clock"] = round(started, 3)
        self.entry.update(ex.clock_facts())
        self._say(f"{len(done)}/{len(self.moves)} steps finished earlier; estimated {human_seconds(schedule.estimated_seconds)} "
                  f"for the whole schedule (physical bound {human_seconds(schedule.physical_bound_seconds)})")
        ended: float | None = None
        self.throttles = throttles = _FollowingThrottles(self, schedule)
        throttles.begin()
        try:
            # Inside the block whose finally restores: moves a killed run left in flight are throttled again.
            if running:
                throttles.follow(sorted(running))
            ex.ledger.save()
            self._dispatch(dispatcher)
            ended = admin.now()  # the moves' time: the estimate's counterpart (restoring throttles is not in it)
        except BaseException:
            ex.ledger.set_run(FAILED)
            raise
        finally:
            ex.ledger.save()
            pending = throttles.restore()
        r.finished = len(dispatcher.completed)
        r.actual_seconds = round((ended if ended is not None else admin.now()) - started, 3)
        disk = dispatcher.disk
        blocked = dispatcher.disk_blocked() if disk is not None and not self.stop_starting else []
        if disk is not None and blocked:
            r.problems.append(f"{len(blocked)} step(s) not started: no order of the rest keeps every disk under the plan's "
                              f"limit ({disk.waiting(blocked)})")
        if pending:
            r.problems.append(f"throttles not yet restored on {', '.join(pending)}: the resource did not answer")
        r.state = FINISHED if r.finished == len(self.moves) and not pending else FAILED
        whole_run = not done and not running and r.state == FINISHED
        measure = self._measure(r, schedule) if whole_run and r.estimated_seconds > 0 else None
        if measure is not None:
            r.measured_efficiency, r.measured_move_fixed_seconds, r.estimate_miss = (
                measure.efficiency, measure.move_fixed_seconds, measure.miss)
        ex.ledger.set_run(r.state, actual_seconds=r.actual_seconds, ended_at=self._iso(),
                          measured_efficiency=r.measured_efficiency, measured_move_fixed_seconds=r.measured_move_fixed_seconds,
                          estimate_miss=r.estimate_miss.value if r.estimate_miss is not None else None)
        self._mark_batches()
        ex.ledger.save()
        self._say(f"{r.state}: {r.finished}/{len(self.moves)} steps finished, {len(r.cancelled)} cancelled, "
                  f"{len(r.failed)} failed; took {human_seconds(r.actual_seconds)} of this run "
                  f"(the whole schedule was estimated at {human_seconds(r.estimated_seconds)})")
        if measure is not None:
            self._say(self._advice(measure, schedule))
        return r

    def _resume(self) -> tuple[set[int], set[int]]:
        """(finished, still in flight) steps from the ledger, checked against the cluster."""
        ex = self.ex
        done = {int(k) for k, e in self.entry["steps"].items() if e["state"] == FINISHED and int(k) < len(self.moves)}
        # A batch that finished as a wave (--mode batches) finished its steps too.
        done |= {m.id for m in self.moves if ex.ledger.state(m.batch) == FINISHED}
        submitted = sorted(int(k) for k, e in self.entry["steps"].items() if e["state"] == SUBMITTED and int(k) < len(self.moves))
        if not submitted:
            return done, set()
        admin = ex.admin
        inflight = admin.list_reassignments()
        running = {i for i in submitted if self.moves[i].tp in inflight and inflight[self.moves[i].tp].target == self.moves[i].replicas}
        now = admin.now()
        for i in sorted(running):
            self.tracks[i] = self._track(self.moves[i], now)
            self.by_topic[self.moves[i].tp.topic].add(i)
        # Not in flight: finished, or never reached Kafka, or cancelled since. The controller answers
        # the reassignment list, brokers the metadata a moment later (see _land), so a move that just
        # finished can still show its old or its in-transition replicas: wait for the views to agree.
        unsettled = [i for i in submitted if i not in running]
        deadline = now + METADATA_SETTLE_SECONDS
        while unsettled:
            current = admin.partitions([self.moves[i].tp for i in unsettled])
            for i in list(unsettled):
                m, p = self.moves[i], current.get(self.moves[i].tp)
                if landed(p, m.replicas):
                    ex.ledger.set_step(str(i), FINISHED, ended_at=self._iso(), note="finished while no executor watched it")
                    done.add(i)
                    unsettled.remove(i)
            if not unsettled or admin.now() >= deadline:
                break
            ex.sleep(min(1.0, ex.settings.poll_interval))
        for i in unsettled:
            # Never reached Kafka, or was cancelled since: it starts afresh, and the ledger says so.
            ex.ledger.set_step(str(i), CANCELLED, ended_at=self._iso(), problems=["not in flight when the run resumed; started again"])
        assert self.result is not None
        self.result.resumed_in_flight = len(running)
        if running:
            starts = [s for s in (self.entry["steps"][str(i)].get("started_at") for i in running) if isinstance(s, str)]
            ex.gate.watch_in_flight(datetime.fromisoformat(min(starts)) if starts else None)
            self._say(f"{len(running)} step(s) a previous run submitted are still moving: watching them, not resubmitting")
        return done, running

    def _measure(self, r: ContinuousResult, schedule: PlanSchedule) -> RunMeasure | None:
        """What this cluster showed, from each move's planned and actual seconds."""
        pairs = []
        for m in self.moves:
            e = self.entry["steps"].get(str(m.id), {})
            if isinstance(e.get("seconds"), (int, float)):
                pairs.append((max(0.0, m.estimated_end_s - m.estimated_start_s), float(e["seconds"])))
        return measure_run(pairs, schedule.throttle_efficiency, schedule.move_fixed_seconds,
                           r.estimated_seconds, r.actual_seconds)

    @staticmethod
    def _advice(measure: RunMeasure, sched: PlanSchedule) -> str:
        """One line: what the cluster showed against the plan's figure, and the flag to change for the next plan."""
        if measure.efficiency is not None:
            shown = (f"this cluster delivered {measure.efficiency:g} of the throttle to the schedule's copying (the plan "
                     f"assumed {sched.throttle_efficiency:g})")
            flag = (f"--throttle-efficiency {min(1.0, max(MIN_THROTTLE_EFFICIENCY, measure.efficiency)):g} "
                    "(clusters.yaml: throttle_efficiency)")
        else:
            fixed = measure.move_fixed_seconds or 0.0
            shown = (f"this cluster took {fixed:g}s per move besides copying, whose bytes were too few to measure a rate "
                     f"(the plan assumed {sched.move_fixed_seconds:g}s)")
            flag = f"--move-fixed-seconds {min(MAX_MOVE_FIXED_SECONDS, fixed):g} (clusters.yaml: move_fixed_seconds)"
        if measure.miss is EstimateMiss.HELD:
            return f"{shown}; the estimate held within {ESTIMATE_TOLERANCE:.0%}"
        return f"{shown}; plan its next rebalance with {flag} for estimates that match it"

    def _mark_batches(self) -> None:
        """Batch states from their steps, so verify, the report and progress read one ledger."""
        for bid, ids in sorted(self.by_batch.items()):
            states = [self.entry["steps"].get(str(i), {}).get("state") for i in ids]
            # Finished means every partition of the batch file at its target, not only every step the
            # schedule lists (the plan loader refuses a schedule that lacks one; this never trusts it).
            at_target = {self.moves[i].tp for i, st in zip(ids, states) if st == FINISHED}
            if all(st == FINISHED for st in states) and at_target >= set(self.ex.plan.batch(bid).targets):
                entry = self.ex.ledger.set_batch(bid, FINISHED, mode=CONTINUOUS, completed=sorted({str(self.moves[i].tp) for i in ids}))
                steps = [self.entry["steps"].get(str(i), {}) for i in ids]
                ended = [e["ended_at"] for e in steps if isinstance(e.get("ended_at"), str)]
                if ended:  # ISO 8601 UTC, all written by _iso: the greatest string is the latest time
                    entry["ended_at"] = max(ended)
                starts = [e["started_clock"] for e in steps if isinstance(e.get("started_clock"), (int, float))]
                ends = [e["ended_clock"] for e in steps if isinstance(e.get("ended_clock"), (int, float))]
                if len(starts) == len(ends) == len(ids):
                    # On the admin's clock, as a wave's: the report draws the batch from its first step's
                    # start to its last step's end (batches overlap when they run continuously).
                    entry.update(started_clock=min(starts), actual_seconds=round(max(ends) - min(starts), 3))
            elif any(st in (FAILED, CANCELLED) for st in states):
                self.ex.ledger.set_batch(bid, FAILED, mode=CONTINUOUS)
