"""Continuous execution of an approved plan's ``schedule.json``: every broker's pipe stays full.

Batches run as waves: each waits for its slowest move while the other brokers idle. Here the
executor submits moves through the planner's ``Dispatcher`` (``planner/schedule.py``), the
same one whose simulation produced the plan's estimate: it keeps up to the per-broker cap of
moves in flight and adds the next one as soon as one completes (AlterPartitionReassignments
accepts additions while others run). A partition's next step waits for its previous one, so
at most one step's new replicas per partition are ever in flight.

Throttles follow the moves in flight (KIP-73, as ``kafka-reassign-partitions.sh`` sets them):

* the first time a broker or topic is touched, its current values are recorded in the
  ledger (saved before anything is set), exactly as a batch records them;
* brokers get the rate when a move involving them starts and keep it until the end;
* a topic's throttled-replica lists are always its recorded value joined with the replicas of
  its moves in flight: a completed move's replicas leave the list, and a topic with nothing in
  flight is back at its recorded value;
* at the end, in ``finally``, every recorded value is written back exactly.

The ledger's ``continuous.steps`` records each step's submission and completion (or
cancellation), saved before each submission and after each poll that changed something. A
re-run resumes exactly: finished steps are never resubmitted; steps a killed run left in flight
are watched to their end, not submitted again; steps that never reached Kafka start afresh.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kafka_rebalance.cluster.admin import (
    BROKER,
    BROKER_THROTTLE_KEYS,
    TOPIC,
    TOPIC_THROTTLE_KEYS,
    TP,
    ClusterError,
)
from kafka_rebalance.executor.ledger import CANCELLED, CONTINUOUS, FAILED, FINISHED, SUBMITTED
from kafka_rebalance.executor.moves import MoveState, landed
from kafka_rebalance.executor.settings import METADATA_SETTLE_SECONDS
from kafka_rebalance.executor.throttles import topic_gone
from kafka_rebalance.plan_manifest import PlanSchedule, ScheduledMove
from kafka_rebalance.planner.schedule import Dispatcher
from kafka_rebalance.planner.steps import Step
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
class ContinuousResult:
    state: MoveState  # FINISHED when every step finished; else FAILED
    steps: int
    finished: int = 0
    cancelled: list[str] = field(default_factory=list)  # "step N topic-p: why"
    failed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    estimated_seconds: float = 0.0
    actual_seconds: float = 0.0
    resumed_in_flight: int = 0  # steps a killed run had submitted, watched here instead of resubmitted
    # The throttle efficiency and the per-move fixed cost this cluster showed (throttle_model.measure_run),
    # and which of the two explains a miss. Only for a run that executed the whole schedule from its first
    # step, the one the estimate describes.
    measured_efficiency: float | None = None
    measured_move_fixed_seconds: float | None = None
    estimate_miss: EstimateMiss | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__slots__}
        out["estimate_miss"] = self.estimate_miss.value if self.estimate_miss is not None else None
        return out


@dataclass(slots=True)
class _Track:
    """What the executor knows of one step in flight."""

    started: float  # admin clock
    deadline: float
    expected_end: float  # admin clock: the schedule's duration for the step, then its observed rate
    copied: int = -1
    last_change: float = 0.0
    left: int = 0
    gone_since: float | None = None  # no longer listed by the controller; metadata may lag


def schedule_steps(schedule: PlanSchedule) -> tuple[list[Step], list[int | None]]:
    """schedule.json's moves as the planner's steps (priority order kept) and their predecessors."""
    index: dict[TP, int] = {}
    seq: dict[TP, int] = defaultdict(int)
    steps: list[Step] = []
    for m in schedule.moves:
        p = index.setdefault(m.tp, len(index))
        steps.append(Step(p, m.tp.topic, m.tp.partition, m.before, m.replicas, m.adds, m.removes, seq[m.tp], m.leader,
                          m.bytes, m.produce_bytes_per_sec))
        seq[m.tp] += 1
    return steps, [m.after for m in schedule.moves]


class ContinuousRun:
    """One run over the schedule; ``run()`` returns when every step ended, or on a hold or a failure."""

    def __init__(self, ex: Executor) -> None:
        if ex.plan.schedule is None:
            raise ValueError("plan has no schedule")  # the caller checks and says what to do
        self.ex = ex
        self.schedule: PlanSchedule = ex.plan.schedule
        self.moves: tuple[ScheduledMove, ...] = self.schedule.moves
        self.steps, self.after = schedule_steps(self.schedule)
        self.entry = ex.ledger.continuous()
        self.throttles = ex.throttle_record(CONTINUOUS)
        self.rate = str(self.schedule.throttle_bytes_per_sec)
        self.tracks: dict[int, _Track] = {}
        self.by_topic: dict[str, set[int]] = defaultdict(set)  # topic -> steps in flight
        self.written: dict[str, dict[str, str | None]] = {}  # topic -> the list values last written
        self.stop_starting = False  # a hold, a failure or on_stall=stop: no new submissions
        self.result = ContinuousResult(FAILED, len(self.moves), estimated_seconds=self.schedule.estimated_seconds)
        self.unreachable_since: float | None = None
        self.started = 0.0  # admin clock at the first submission of this run
        self.copied = 0  # bytes of the moves that finished in this run: the observed rate behind the ETA
        self.waiting = 0  # bytes of the steps not started yet
        self.dirty = False  # ledger entries changed since the last save
        self.dropped: set[int] = set()
        self.rate_set: set[int] = set()  # brokers given the throttle rate by this run
        self.unreachable: set[int] = set()

    # ------------------------------------------------------------------ ledger

    def _say(self, line: str) -> None:
        self.ex.progress(f"continuous: {line}")

    def _resume(self) -> tuple[set[int], set[int]]:
        """(finished, still in flight) steps from the ledger, checked against the cluster."""
        done = {int(k) for k, e in self.entry["steps"].items() if e["state"] == FINISHED and int(k) < len(self.moves)}
        # A batch that finished as a wave (--mode batches) finished its steps too.
        done |= {m.id for m in self.moves if self.ex.ledger.state(m.batch) == FINISHED}
        submitted = sorted(int(k) for k, e in self.entry["steps"].items() if e["state"] == SUBMITTED and int(k) < len(self.moves))
        if not submitted:
            return done, set()
        admin = self.ex.admin
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
                    self.ex.ledger.set_step(str(i), FINISHED, ended_at=self._iso(), note="finished while no executor watched it")
                    done.add(i)
                    unsettled.remove(i)
            if not unsettled or admin.now() >= deadline:
                break
            self.ex.sleep(min(1.0, self.ex.settings.poll_interval))
        for i in unsettled:
            # Never reached Kafka, or was cancelled since: it starts afresh, and the ledger says so.
            self.ex.ledger.set_step(str(i), CANCELLED, ended_at=self._iso(), problems=["not in flight when the run resumed; started again"])
        self.result.resumed_in_flight = len(running)
        if running:
            starts = [s for s in (self.entry["steps"][str(i)].get("started_at") for i in running) if isinstance(s, str)]
            self.ex.gate.watch_in_flight(datetime.fromisoformat(min(starts)) if starts else None)
            self._say(f"{len(running)} step(s) a previous run submitted are still moving: watching them, not resubmitting")
        return done, running

    def _iso(self) -> str:
        return self.ex.gate.clock().isoformat(timespec="milliseconds")

    def _track(self, m: ScheduledMove, now: float) -> _Track:
        return _Track(now, now + self._timeout(m), now + max(0.0, m.estimated_end_s - m.estimated_start_s), last_change=now)

    def _next_poll(self, now: float) -> float:
        """Seconds to sleep: until the first move in flight is expected to land, within [1 s, poll_interval]; a
        second when a move has copied its bytes and only has to land.

        A pipe stays empty from a move's completion until the poll that notices it: waiting a fixed
        interval would cost half of it per move, which adds up on the busiest broker's long chain
        of moves. The expectation comes from the move's observed copy rate (the schedule's estimate
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

    def _timeout(self, m: ScheduledMove) -> float:
        if self.ex.settings.batch_timeout is not None:
            return self.ex.settings.batch_timeout
        return 3 * max(0.0, m.estimated_end_s - m.estimated_start_s) + 600

    # ------------------------------------------------------------------ throttles

    def _throttle(self, new: list[int]) -> None:
        """Record (and save) the values of resources touched for the first time, then set the throttles for ``new``."""
        admin = self.ex.admin
        brokers = sorted({b for i in new for b in (*self.moves[i].before, *self.moves[i].replicas)} - self.rate_set)
        fresh_brokers: list[int] = []
        for b in brokers:
            try:
                self.throttles.record_broker(b, BROKER_THROTTLE_KEYS)  # kept if an earlier run's restore is pending
                fresh_brokers.append(b)
            except ClusterError as exc:
                # A broker that is down serves no replication and can only be configured through itself;
                # it is asked again when a later move involves it.
                if b not in self.unreachable:
                    self.unreachable.add(b)
                    self.ex.ledger.event(f"continuous: broker {b} did not answer ({exc}); its throttle rate is neither "
                                         "set nor restored while it does not")
        for topic in sorted({self.moves[i].tp.topic for i in new}):
            self.throttles.record_topic(topic, TOPIC_THROTTLE_KEYS)
        self.throttles.save()  # the old values are on disk before anything is set
        for b in fresh_brokers:
            admin.alter_configs(BROKER, str(b), {k: self.rate for k in BROKER_THROTTLE_KEYS})
            self.rate_set.add(b)
        for i in new:
            self.by_topic[self.moves[i].tp.topic].add(i)
        self._write_topic_throttles({self.moves[i].tp.topic for i in new})

    def _write_topic_throttles(self, topics: set[str]) -> None:
        for topic in sorted(topics):
            original = self.throttles.recorded["topics"][topic]  # recorded before its first move started
            planned = batch_throttles((self.steps[i] for i in sorted(self.by_topic.get(topic, ()))), 0)["topics"].get(topic, {})
            merged = self.throttles.merged(topic, planned)
            want = {k: merged[k] if k in merged else original.get(k) for k in TOPIC_THROTTLE_KEYS}
            if self.written.get(topic) != want:
                try:
                    self.ex.admin.alter_configs(TOPIC, topic, want)
                except ClusterError:
                    # Deleted by someone while its moves ran (they fail as "the partition disappeared"): its
                    # throttles went with it. Anything else is the caller's to handle.
                    if not topic_gone(self.ex.admin, topic):
                        raise
                self.written[topic] = want

    # ------------------------------------------------------------------ the loop

    def run(self) -> ContinuousResult:
        ex, admin = self.ex, self.ex.admin
        # First, before anything is read or set: a run whose ledger cannot start again is refused untouched.
        ex.ledger.set_run(SUBMITTED, started_at=self._iso(), estimated_seconds=self.schedule.estimated_seconds)
        done, running = self._resume()
        dispatcher = Dispatcher(self.steps, self.after, self.schedule.max_moves_per_broker, self.schedule.max_in_flight,
                                self.schedule.delivered_rate, done=done, running=running)
        self.waiting = sum(self._bytes(i) for i in range(len(self.moves)) if i not in done and i not in running)
        started = self.started = admin.now()
        # started_clock: the admin's clock, which progress measures the copying rate on (the wall clock of
        # started_at is not the simulator's). A field beside the run's state, not a state.
        self.entry["started_clock"] = round(started, 3)
        self._say(f"{len(done)}/{len(self.moves)} steps finished earlier; estimated {human_seconds(self.schedule.estimated_seconds)} "
                  f"for the whole schedule (physical bound {human_seconds(self.schedule.physical_bound_seconds)})")
        ended: float | None = None
        self.throttles.begin()
        try:
            # Inside the block whose finally restores: moves a killed run left in flight are throttled again.
            if running:
                self._throttle(sorted(running))
            ex.ledger.save()
            while True:
                if not self.stop_starting:
                    ex.check_stop()
                    new = dispatcher.start(allow=self._allow)
                    if new:
                        self._submit(new, dispatcher)
                        self.dirty = False
                if self.dirty:
                    ex.ledger.save()
                    self.dirty = False
                if not dispatcher.in_flight:
                    break
                ex.sleep(self._next_poll(admin.now()))
                self._poll(dispatcher)
            ended = admin.now()  # the moves' time: the estimate's counterpart (restoring throttles is not in it)
        except BaseException:
            ex.ledger.set_run(FAILED)
            raise
        finally:
            ex.ledger.save()
            pending = self.throttles.restore()
            self.written.clear()
        r = self.result
        r.finished = len(dispatcher.completed)
        r.actual_seconds = round((ended if ended is not None else admin.now()) - started, 3)
        if pending:
            r.problems.append(f"throttles not yet restored on {', '.join(pending)}: the resource did not answer")
        r.state = FINISHED if r.finished == len(self.moves) and not pending else FAILED
        whole_run = not done and not running and r.state == FINISHED
        measure = self._measure(r) if whole_run and r.estimated_seconds > 0 else None
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
            self._say(self._advice(measure))
        return r

    def _measure(self, r: ContinuousResult) -> RunMeasure | None:
        """What this cluster showed, from each move's planned and actual seconds."""
        pairs = []
        for m in self.moves:
            e = self.entry["steps"].get(str(m.id), {})
            if isinstance(e.get("seconds"), (int, float)):
                pairs.append((max(0.0, m.estimated_end_s - m.estimated_start_s), float(e["seconds"])))
        return measure_run(pairs, self.schedule.throttle_efficiency, self.schedule.move_fixed_seconds,
                           r.estimated_seconds, r.actual_seconds)

    def _advice(self, measure: RunMeasure) -> str:
        """One line: what the cluster showed against the plan's figure, and the flag to change for the next plan."""
        sched = self.schedule
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

    def _bytes(self, i: int) -> int:
        return self.moves[i].bytes * len(self.moves[i].adds)

    def _allow(self, i: int) -> bool:
        m = self.moves[i]
        hold = self.ex.gate.before_move(max(0.0, m.estimated_end_s - m.estimated_start_s))
        if hold is None:
            return True
        self.stop_starting = True
        self.ex._held(hold, f"continuous: step {i} ({m.tp}) not started")
        return False

    def _submit(self, new: list[int], dispatcher: Dispatcher) -> None:
        ex, now, at = self.ex, self.ex.admin.now(), self._iso()
        for i in new:
            m = self.moves[i]
            self.waiting -= self._bytes(i)
            # A retried step (cancelled or failed earlier) keeps its earlier attempts in the ledger.
            ex.ledger.set_step(str(i), SUBMITTED, tp=str(m.tp), batch=m.batch, started_at=at, started_clock=round(now, 3))
            self.tracks[i] = self._track(m, now)
            if ex.ledger.state(m.batch) != SUBMITTED:
                ex.ledger.set_batch(m.batch, SUBMITTED, mode=CONTINUOUS, started_at=at)
        self._throttle(new)  # saves the ledger (steps included) before setting anything
        # A stop asked for while the throttles were being set: nothing is submitted (the finally restores them;
        # the steps recorded above are not in flight, so a re-run starts them afresh).
        ex.check_stop()
        errors = {tp: e for tp, e in ex.admin.alter_reassignments({self.moves[i].tp: self.moves[i].replicas for i in new}).items() if e}
        for i in new:
            err = errors.get(self.moves[i].tp)
            if err:
                self._end(i, dispatcher, FAILED, f"reassignment refused by the cluster ({err})")
        if errors:
            self.stop_starting = True
            self._write_topic_throttles({self.moves[i].tp.topic for i in new})
            ex.ledger.save()
        self._say(f"started {len(new)} step(s); {len(dispatcher.in_flight)} in flight")

    def _end(self, i: int, dispatcher: Dispatcher, state: MoveState, why: str | None = None) -> None:
        m, t = self.moves[i], self.tracks.pop(i)
        self.by_topic[m.tp.topic].discard(i)
        now = self.ex.admin.now()
        e = self.ex.ledger.set_step(str(i), state, ended_at=self._iso(), ended_clock=round(now, 3), seconds=round(now - t.started, 3))
        if state == FINISHED:
            self.copied += self._bytes(i)
            dispatcher.finish(i)
            return
        dispatcher.abandon(i)
        for j in dispatcher.abandoned - self.dropped - {i}:  # the partition's later steps, dropped with it
            self.waiting -= self._bytes(j)
        self.dropped |= dispatcher.abandoned
        e["problems"] = [why or state]
        (self.result.cancelled if state == CANCELLED else self.result.failed).append(f"step {i} {m.tp}: {why}")
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
            ex._held(hold, "continuous: moves in flight cancelled")
        else:
            if stalled:
                self._cancel(stalled, dispatcher, f"no progress for {human_seconds(s.stall_seconds)}", touched)
                if s.on_stall == "stop":
                    self.stop_starting = True
                    self._cancel(sorted(dispatcher.in_flight), dispatcher, "stopping after a stall", touched)
            late = [i for i in late if i in dispatcher.in_flight]
            if late:
                self._cancel(late, dispatcher, "its time limit was reached", touched)
        if touched:
            self._write_topic_throttles(touched)
            # Saved by the next submission (before it changes the cluster) or at the next poll: a run
            # killed before that finds these moves at their targets and records them then.
            self.dirty = True
        left = sum(t.left for t in self.tracks.values())
        waiting = self.waiting
        elapsed = now - self.started
        rate = self.copied / elapsed if self.copied > 0 and elapsed > 0 else None
        eta = f"ETA {human_seconds((left + waiting) / rate)}" if rate else "ETA unknown until a move lands"
        self._say(f"{len(dispatcher.completed)}/{len(self.moves)} steps done, {len(dispatcher.in_flight)} in flight "
                  f"({human_bytes(left)} left in them, {human_bytes(waiting)} not started), {eta}")

    def _land(self, gone: list[int], dispatcher: Dispatcher, now: float, touched: set[str]) -> None:
        parts = self.ex.admin.partitions([self.moves[i].tp for i in gone])
        for i in gone:
            m, t = self.moves[i], self.tracks[i]
            p = parts.get(m.tp)
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
        cancelled = self.ex.cancel_moves(sorted(tps), "continuous", why)
        for tp, i in sorted(tps.items()):
            if tp in cancelled:
                self._end(i, dispatcher, CANCELLED, why)
                touched.add(tp.topic)
            # Not cancelled: it finished between poll and cancel; the next poll lands it.

    def _mark_batches(self) -> None:
        """Batch states from their steps, so verify, the report and progress read one ledger."""
        by_batch: dict[str, list[int]] = defaultdict(list)
        for m in self.moves:
            by_batch[m.batch].append(m.id)
        for bid, ids in sorted(by_batch.items()):
            states = [self.entry["steps"].get(str(i), {}).get("state") for i in ids]
            # Finished means every partition of the batch file at its target, not only every step the
            # schedule lists (the plan loader refuses a schedule that lacks one; this never trusts it).
            at_target = {self.moves[i].tp for i, st in zip(ids, states) if st == FINISHED}
            if all(st == FINISHED for st in states) and at_target >= set(self.ex.plan.batch(bid).targets):
                entry = self.ex.ledger.set_batch(bid, FINISHED, mode=CONTINUOUS, completed=sorted({str(self.moves[i].tp) for i in ids}))
                steps = [self.entry["steps"].get(str(i), {}) for i in ids]
                starts = [e["started_clock"] for e in steps if isinstance(e.get("started_clock"), (int, float))]
                ends = [e["ended_clock"] for e in steps if isinstance(e.get("ended_clock"), (int, float))]
                if len(starts) == len(ends) == len(ids):
                    # On the admin's clock, as a wave's: the report draws the batch from its first step's
                    # start to its last step's end (batches overlap when they run continuously).
                    entry.update(started_clock=min(starts), actual_seconds=round(max(ends) - min(starts), 3))
            elif any(st in (FAILED, CANCELLED) for st in states):
                self.ex.ledger.set_batch(bid, FAILED, mode=CONTINUOUS)
