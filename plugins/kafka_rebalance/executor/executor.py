"""The executor: runs an approved plan directory against a ``ClusterAdmin``, safely.

One engine moves the partitions (``executor/engine.py``, ``MoveRun``): the planner's dispatcher, one
poll loop. Two modes (``ExecSettings.mode``): ``continuous`` (default) runs the reorder batches, then
the plan's ``schedule.json``; ``batches`` runs the batch files, a barrier after each (every move of a
batch at once, the next batch once all ended and the batch verified). This module holds what comes
before and after the moves: the checks, the run's outcome, verify, elections, cancel.

Safety rules (docs/KAFKA.md):
* refuse a plan that did not pass validation, whose files or plan hash changed, whose
  "before" assignment no longer matches the cluster, or while a reassignment the plan
  did not start is in flight (unless ``additional``);
* record the throttle configs that exist before setting any, restore exactly the recorded
  values in ``finally``; poll (progress line: moves done, bytes left, ETA) until done, a time
  limit, or a stall (no progress on a partition for ``stall_seconds``: cancel it); verify;
* the ledger is written before every step that changes the cluster, so a killed run's
  throttles are restored by the next run and finished batches are not run again.

The DAG calls the steps one by one: ``preflight``, ``run_selected``, ``elections``,
``final_snapshot``; the CLI calls ``run``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kafka_rebalance.cluster.admin import (
    TP,
    AccessChecked,
    ClusterAdmin,
    ClusterDenied,
    ClusterError,
    PartitionView,
    Reassignment,
)
from kafka_rebalance.cluster.failures import Role
from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.estimates import plan_estimate
from kafka_rebalance.executor.engine import MoveRun
from kafka_rebalance.executor.gate import ExecutionGate, Hold, HoldReason
from kafka_rebalance.executor.interrupt import StopRequest, signal_name
from kafka_rebalance.executor.lease import Holder, plan_lease
from kafka_rebalance.executor.ledger import (
    CANCELLED,
    FAILED,
    FINISHED,
    PENDING,
    SUBMITTED,
    THROTTLED,
    THROTTLES_RECORDED,
    Ledger,
    Owned,
)
from kafka_rebalance.executor.ledger import (
    CONTINUOUS as CONTINUOUS_KEY,
)
from kafka_rebalance.executor.moves import dir_problem, landing_problem
from kafka_rebalance.executor.results import (
    BatchResult,
    CancelOutcome,
    ContinuousResult,
    ElectionSettle,
    ElectionsResult,
    Preflight,
    RunOutcome,
    RunStatus,
    StopReport,
    Verification,
)
from kafka_rebalance.executor.settings import METADATA_SETTLE_SECONDS, ExecSettings, ExecutionRefused
from kafka_rebalance.executor.throttles import ThrottleRecord, label, restore_leftovers
from kafka_rebalance.plan_manifest import Batch, Plan
from kafka_rebalance.snapshot import Snapshot, write_snapshot
from kafka_rebalance.units import human_seconds

# A run that stopped starting work because of a hold ends with one of these statuses; a later run
# (or the DAG's deferred task) continues from the ledger.
HELD_STATUS = {
    HoldReason.PAUSED: RunStatus.PAUSED,
    HoldReason.STOPPED: RunStatus.STOPPED,
    HoldReason.OUTSIDE_WINDOW: RunStatus.WAITING_FOR_WINDOW,
    HoldReason.WINDOW_TOO_SHORT: RunStatus.WAITING_FOR_WINDOW,
    HoldReason.WINDOW_OVERRUN: RunStatus.WAITING_FOR_WINDOW,
}


def check_cluster_identity(plan: Plan, admin: ClusterAdmin) -> None:
    """Refuse, in one line, when the plan records a Kafka cluster id and the connected cluster reports another."""
    planned = plan.kafka_cluster_id
    if planned is None:
        return
    actual = admin.kafka_cluster_id()
    if actual != planned:
        raise ExecutionRefused(
            f"{plan.path}: the plan was made for Kafka cluster {planned!r} ({plan.cluster_id!r}), but the connected "
            f"cluster reports {'no id' if actual is None else repr(actual)}; refusing to act on another cluster")


def has_started(ledger: Ledger) -> bool:
    """Whether any run of the plan got as far as recording a throttle or a state (a resume, not a start)."""
    return any(ledger.state(bid) != PENDING or e.get("throttles_before") is not None
               for bid, e in ledger.data["batches"].items()) or CONTINUOUS_KEY in ledger.data


@contextmanager
def acting_on(plan: Plan, admin: ClusterAdmin, command: str, *, starting: bool = False, owner: str | None = None,
              take_over: bool = False, allow_unidentified: bool = False, simulated: bool = False) -> Iterator[Holder]:
    """What every command that changes the cluster needs first (the CLI's, the DAG's steps, the operator's), then
    the plan's lease for the block.

    * the connected cluster is the plan's (its Kafka cluster id); a plan that records none runs on a real
      cluster only when the operator says so (``allow_unidentified``), and the ledger keeps who allowed it;
    * ``starting``: a plan that has not started yet starts only while its snapshot is younger than the age
      limit it was approved under (a resumed run goes on: its moves are part-way);
    * the principal holds the execute role's ACLs on the cluster and the plan's topics (docs/KAFKA.md), so a
      missing one is named before a throttle is set or a move submitted;
    * one run per plan (``executor/lease.py``).
    """
    check_cluster_identity(plan, admin)
    if isinstance(admin, AccessChecked):
        admin.require(Role.EXECUTE, plan.topics_touched, command)
    ledger = Ledger.open(plan.path, plan.plan_hash, Owned.of(plan))
    unidentified = plan.kafka_cluster_id is None and not simulated
    if unidentified and not allow_unidentified and ledger.data.get("unidentified_cluster") is None:
        raise ExecutionRefused(
            f"{plan.path}: the plan records no Kafka cluster id (its snapshot had none), so which cluster this is cannot "
            f"be checked; re-plan from a snapshot gathered by kafka-rebalance gather, or pass --allow-unidentified-cluster")
    if starting and not has_started(ledger):
        from kafka_rebalance.plan_approval import start_problem

        problem = start_problem(plan.path, datetime.now(UTC))
        if problem is not None:
            raise ExecutionRefused(problem)
    with plan_lease(plan.path, plan.plan_hash, command, owner=owner, take_over=take_over) as holder:
        if unidentified and allow_unidentified:
            ledger = Ledger.open(plan.path, plan.plan_hash, Owned.of(plan))
            if ledger.data.get("unidentified_cluster") is None:
                ledger.data["unidentified_cluster"] = {"allowed_by": holder.describe(), "at": holder.since}
                ledger.event(f"{holder.since} run on a cluster the plan cannot identify, allowed by {holder.describe()}")
                ledger.save()
        yield holder


def unchecked_identity_note(plan: Plan) -> str | None:
    """The one line saying a plan's cluster cannot be checked, or None when it can."""
    if plan.kafka_cluster_id is not None:
        return None
    return (f"note: the plan for {plan.cluster_id!r} records no Kafka cluster id (its snapshot had none), "
            "so which cluster this is was not checked")


class Executor:
    def __init__(
        self,
        plan: Plan,
        admin: ClusterAdmin,
        settings: ExecSettings = ExecSettings(),
        progress: Callable[[str], None] | None = None,
        ledger: Ledger | None = None,
        gate: ExecutionGate | None = None,
        stop: StopRequest | None = None,
    ) -> None:
        self.plan = plan
        self.admin = admin
        self.settings = settings
        self.progress = progress or (lambda line: None)
        self.ledger = ledger if ledger is not None else Ledger.open(plan.path, plan.plan_hash, Owned.of(plan))
        # Operators' pause/stop requests always apply; windows only when the caller configures them.
        self.gate = gate if gate is not None else ExecutionGate.unrestricted(plan.path, plan.plan_hash)
        self.hold: Hold | None = None  # why the last run stopped starting work, if it did
        # SIGTERM/SIGINT, when the caller listens for them: acted on between Kafka calls, never inside one.
        self.stop = stop
        self._identity_checked = False
        self._foreign_seen: set[TP] = set()  # other tools' reassignments already noted (note_foreign)
        self._kept_said: set[str] = set()  # throttle records already reported kept for moves in flight

    def sleep(self, seconds: float) -> None:
        """The admin's sleep between polls: where a stop asked for by a signal takes effect at once."""
        if self.stop is None:
            self.admin.sleep(seconds)
        else:
            self.stop.sleep(self.admin.sleep, seconds)

    def clock_facts(self) -> dict[str, Any]:
        """What a run records beside its times so that a gap to the estimate can be explained (estimates.gap_line):
        the longest wait between polls, and whether the clock was the simulator's virtual one."""
        return {"poll_interval_seconds": self.settings.poll_interval,
                "simulated_clock": bool(getattr(self.admin, "simulated", False))}

    def check_stop(self) -> None:
        """Before anything new is submitted: a stop asked for meanwhile ends the run here (StopSignal)."""
        if self.stop is not None:
            self.stop.check()

    # ------------------------------------------------------------------ windows, pause, stop

    def run_batches(self, batch_ids: Iterable[str]) -> list[BatchResult]:
        """Run these batches in order, a barrier after each, while the gate allows; stop at a hold or at a batch
        that did not finish (executor/engine.py)."""
        ids = list(batch_ids)
        return MoveRun.batches(self, ids).run_batches(ids)

    def _goes_on_after(self, r: BatchResult) -> bool:
        """Whether the next batch may start after ``r``: it finished, or only lost stalled moves and
        ``on_stall`` says continue (the batch stays unfinished, so a re-run runs it again)."""
        if r.state == FINISHED:
            return True
        return r.state == CANCELLED and self.settings.on_stall == "continue"

    def _held(self, hold: Hold, what: str) -> None:
        self.hold = hold
        self.ledger.event(f"{self.gate.clock().isoformat(timespec='seconds')} {what}: {hold.reason.value}: {hold.detail}")
        self.ledger.data.setdefault("holds", []).append({"at": self.gate.clock().isoformat(timespec="seconds"), "what": what,
                                                         **hold.to_dict()})
        self.ledger.save()
        self.progress(f"{what}: {hold.reason.value}: {hold.detail}")

    def record_progress(self) -> dict[str, Any]:
        """``progress_summary`` kept in the ledger as ``progress``, where the report and the plan page read it."""
        summary = self.progress_summary()
        self.ledger.data["progress"] = {**summary, "at": self.gate.clock().isoformat(timespec="seconds")}
        self.ledger.save()
        return summary

    def progress_summary(self) -> dict[str, Any]:
        """Done and remaining batches, and when the rest would finish given the windows (the report shows it)."""
        remaining = [b for b in self.plan.batches if self.ledger.state(b.id) != FINISHED]
        # Each batch's part of the headline of the mode this run uses (estimates.py); a plan that does not record
        # the parts of the continuous schedule counts its batches as waves.
        parts = {p.id: p.seconds for p in plan_estimate(self.plan.manifest, self.settings.mode).steps}
        seconds = sum(parts.get(b.id, b.estimated_seconds or 0.0) for b in remaining)
        eta = self.gate.policy.eta(self.gate.clock(), seconds, self.gate.margin)
        nxt = self.gate.policy.next_opening(self.gate.clock())
        return {
            "batches_done": len(self.plan.batches) - len(remaining),
            "batches_remaining": [b.id for b in remaining],
            "remaining_estimated_seconds": round(seconds, 3),
            "window": self.gate.policy.describe(),
            "next_window": nxt.iso() if nxt is not None and not self.gate.policy.unrestricted else None,
            "eta_windows": eta.windows,
            "eta": eta.finish.isoformat(timespec="seconds") if eta.finish else None,
        }

    # ------------------------------------------------------------------ throttles

    def throttle_record(self, key: str) -> ThrottleRecord:
        """The throttle values recorded under ``key`` (a batch id or the continuous run)."""
        return ThrottleRecord(self.admin, self.ledger, key, self.progress)

    def restore_leftover_throttles(self) -> list[str]:
        """Put back throttle values a killed or failed run left set, but for records whose moves Kafka still
        runs (this run resumes them under the same record); returns the keys restored."""
        self.check_cluster_identity()
        return restore_leftovers(self.admin, self.ledger, self.progress, self.records_in_flight(self.admin.list_reassignments()),
                                 self._kept_said)

    def records_in_flight(self, inflight: Mapping[TP, Reassignment]) -> dict[str, int]:
        """Unrestored throttle records (a batch id, or the continuous run) with moves of theirs in flight in Kafka,
        and how many: a partition being reassigned to the target the record's batch or schedule gives it, or a
        replica being copied into the log dir its batch names."""
        out: dict[str, int] = {}
        for key in self.ledger.unrestored():
            dirs: dict[tuple[TP, int], str] = {}
            if key == CONTINUOUS_KEY:
                moves = [(m.tp, m.replicas) for m in self.plan.schedule.moves] if self.plan.schedule is not None else []
            else:
                batch = next((b for b in self.plan.batches if b.id == key), None)
                moves = sorted(batch.targets.items()) if batch is not None else []
                dirs = dict(batch.dirs) if batch is not None else {}
            moving = {tp for tp, target in moves if tp in inflight and inflight[tp].target == tuple(target)}
            if dirs:
                # A move between the log dirs of one broker (AlterReplicaLogDirs) is not a reassignment: Kafka's
                # DescribeLogDirs shows it as the replica's future copy in the dir the batch names.
                found = self.admin.replica_dirs(sorted({tp for tp, _ in dirs}))
                moving |= {tp for (tp, b), d in dirs.items() if (r := found.get((tp, b))) is not None and r.future == d}
            if moving:
                out[key] = len(moving)
        return out

    # ------------------------------------------------------------------ checks

    def _resumable(self, batch_id: str) -> bool:
        return self.ledger.state(batch_id) in (THROTTLES_RECORDED, THROTTLED, SUBMITTED, FAILED, CANCELLED)

    def _check_batches(self, batches: Iterable[Batch], current: dict[TP, tuple[int, ...]],
                       inflight: dict[TP, Reassignment], registered: set[int] | None = None) -> list[str]:
        """What no longer holds of the plan's starting state for these batches (empty: they still apply).

        ``registered``: the broker ids the cluster knows now. A destination that left the cluster (a
        broker replaced under a new id, or removed) makes Kafka refuse the move. A registered broker that
        is merely down is the stall handling's business: it may come back within the stall time.
        """
        problems: list[str] = []
        seen: set[TP] = set()
        ours = self._ours(finished=True)
        for b in batches:
            resumable = self._resumable(b.id)
            for tp, before in sorted(b.before.items()):
                if tp in seen:
                    continue
                seen.add(tp)
                cur = current.get(tp)
                target = b.targets[tp]
                # Where a resumed run may find the partition: at the target of any batch of it that started (a
                # partition moved in steps, each its own batch, has finished some in continuous mode), or moving
                # to one; Kafka's metadata can still show the merged list of a move that just finished.
                started = ours.get(tp, set()) if resumable else set()
                gone = sorted(set(target) - set(before) - registered) if registered is not None and cur is not None else []
                if cur is None:
                    problems.append(f"{tp} no longer exists (batch {b.id})")
                elif gone and cur not in started:
                    problems.append(f"{tp} would move to broker(s) {gone}, which the cluster no longer has (batch {b.id})")
                elif tp in inflight:
                    if inflight[tp].target not in started:
                        problems.append(f"{tp} is being reassigned to {list(inflight[tp].target)} by someone else")
                # Kafka's cancel restores the replica SET (old replicas in the merged list's order),
                # not necessarily the original order: a resumed batch accepts that as its start.
                elif cur != before and not (cur in started or (started and sorted(cur) == sorted(before))
                                            or any(set(cur) == set(x) | set(y) for x in {before, *started} for y in started)):
                    problems.append(f"{tp} has replicas {list(cur)} but batches/{b.id}/rollback.json expects {list(before)}")
        return problems

    def _ours(self, finished: bool = False) -> dict[TP, set[tuple[int, ...]]]:
        """Per partition, the targets of every batch of it that a run started and did not finish (``finished``: or
        did finish: in continuous mode a partition's later step can finish, and its batch with it, while the batch of
        its first step still waits for another partition)."""
        ours: dict[TP, set[tuple[int, ...]]] = defaultdict(set)
        for b in self.plan.batches:
            if self._resumable(b.id) or (finished and self.ledger.state(b.id) == FINISHED):
                for tp, target in b.targets.items():
                    ours[tp].add(target)
        return ours

    def _foreign(self, inflight: dict[TP, Reassignment]) -> dict[TP, Reassignment]:
        # Every target of a started batch: a partition moved in two steps (two batches, both started in
        # continuous mode) may be in flight to either.
        ours = self._ours()
        return {tp: r for tp, r in inflight.items() if r.target not in ours.get(tp, ())}

    def note_foreign(self, inflight: dict[TP, Reassignment]) -> None:
        """Say once (progress and ledger) which reassignments of other tools appeared in flight during the run."""
        for tp, r in sorted(self._foreign(inflight).items()):
            if tp not in self._foreign_seen:
                self._foreign_seen.add(tp)
                line = (f"another tool's reassignment of {tp} (to {list(r.target)}) is in flight; this plan does not move it "
                        "and leaves it alone")
                self.progress(line)
                self.ledger.event(line)

    def _refuse_foreign(self, inflight: dict[TP, Reassignment]) -> None:
        foreign = self._foreign(inflight)
        if foreign and not self.settings.additional:
            shown = ", ".join(f"{tp} -> {list(r.target)}" for tp, r in sorted(foreign.items())[:5])
            raise ExecutionRefused(
                f"{len(foreign)} reassignment(s) not started by this plan are in flight ({shown}"
                f"{', ...' if len(foreign) > 5 else ''}); wait for them, cancel them, or pass --additional")

    def _refuse_moved_back(self, current: dict[TP, tuple[int, ...]], inflight: dict[TP, Reassignment]) -> None:
        """The ledger says a partition's last move finished (its batch, or its last schedule step), but the
        partition is no longer where the plan put it: the run must not count it as done."""
        last: dict[TP, tuple[str, tuple[int, ...]]] = {}
        for b in self.plan.batches:
            for tp, target in b.targets.items():
                last[tp] = (b.id, target)
        final_step: dict[TP, int] = {}
        for m in self.plan.schedule.moves if self.plan.schedule is not None else ():
            final_step[m.tp] = m.id
        finished = {tp for tp, (bid, _) in last.items() if self.ledger.state(bid) == FINISHED}
        finished |= {tp for tp, sid in final_step.items() if self.ledger.step_state(str(sid)) == FINISHED}
        moved = sorted(f"{tp} (batch {last[tp][0]}: replicas {list(current.get(tp, ()))}, target {list(last[tp][1])})"
                       for tp in finished if tp not in inflight and current.get(tp) != last[tp][1])
        if moved:
            raise ExecutionRefused(
                f"{self.ledger.path}: records finished batches whose partitions are no longer at their targets: "
                + "; ".join(moved[:5]) + ("; ..." if len(moved) > 5 else "")
                + "; the cluster moved since the plan ran. To run this plan again from the start, re-arm it "
                  "(`execute --rearm`, or the DAG's rearm parameter); the old ledger is archived, not deleted")

    def check_cluster_identity(self) -> None:
        """Refuse a plan made for another Kafka cluster, before anything is read from or done to this one.

        The plan's Kafka cluster id is under its hash; a plan made from a snapshot without one (written
        by hand, generated, or gathered before the id was recorded) is not checked: the caller says so
        once (``unchecked_identity_note``), after the command, so that progress lines stay batch progress.
        """
        if not self._identity_checked:
            check_cluster_identity(self.plan, self.admin)
            self._identity_checked = True

    def preflight(self, batch_ids: Iterable[str] | None = None) -> Preflight:
        """Refuse another cluster; restore leftover throttles; refuse if the cluster is not where the plan starts."""
        self.check_cluster_identity()
        restored = self.restore_leftover_throttles()
        wanted = set(batch_ids) if batch_ids is not None else {b.id for b in self.plan.batches}
        todo = [b for b in self.plan.batches if b.id in wanted and self.ledger.state(b.id) != FINISHED]
        inflight = self.admin.list_reassignments()
        self._refuse_foreign(inflight)
        snap = self.admin.describe()
        current = {TP(p.topic, p.partition): p.replicas for p in snap.partitions}
        self._refuse_moved_back(current, inflight)
        problems = self._check_batches(todo, current, inflight, {b.id for b in snap.brokers})
        if problems:
            raise ExecutionRefused(
                f"{self.plan.path}: the cluster changed since planning ({len(problems)} partition(s)): "
                + "; ".join(problems[:10]) + ("; ..." if len(problems) > 10 else "") + "; re-plan from a fresh snapshot")
        return Preflight(tuple(b.id for b in todo), tuple(restored))

    # ------------------------------------------------------------------ one batch

    def run_batch(self, batch_id: str) -> BatchResult:
        """One batch as a wave, without asking the gate: the engine's barrier mode for that batch alone."""
        self._refuse_foreign(self.admin.list_reassignments())  # a run of its own: refused as a run's start is
        return MoveRun.batches(self, [batch_id]).run_batch(batch_id)

    def cancel_moves(self, tps: list[TP], label: str, why: str) -> set[TP]:
        """Cancel these moves; returns those Kafka cancelled (the others had just finished)."""
        outcome = self.reassign({tp: None for tp in tps}, label, "cancel")
        cancelled = {tp for tp in tps if outcome.get(tp) is None}
        for tp in sorted(cancelled):
            self.progress(f"{label}: cancelled {tp}: {why}")
        # NO_REASSIGNMENT_IN_PROGRESS: it finished between poll and cancel; verification judges it.
        return cancelled

    def reassign(self, targets: Mapping[TP, tuple[int, ...] | None], label: str, what: str) -> dict[TP, str | None]:
        """AlterPartitionReassignments (None cancels), asked again each poll while the cluster does not answer, for
        up to a stall's time; Kafka's answer per partition.

        A submission or a cancel is most needed when a broker has just died, which is also when the call can land
        on that broker (kafka-python routes it to the controller id Metadata named a moment ago, and answers
        NodeNotReadyError). Asking again is safe: the same targets twice are one reassignment to Kafka, and a
        cancel of a finished move is NO_REASSIGNMENT_IN_PROGRESS. A refusal by the authorizer is final.
        """
        first_failure: float | None = None
        while True:
            try:
                return self.admin.alter_reassignments(targets)
            except ClusterDenied:
                raise
            except ClusterError as exc:
                now = self.admin.now()
                first_failure = now if first_failure is None else first_failure
                if now - first_failure >= self.settings.stall_seconds:
                    raise
                self.progress(f"{label}: {what} not answered ({exc}); retrying")
                self.sleep(self.settings.poll_interval)

    # ------------------------------------------------------------------ after the batches

    def elections(self) -> ElectionsResult:
        self.check_cluster_identity()
        size = self.plan.election_batch_size
        tps = list(self.plan.elections)
        failed: dict[str, str] = {}
        for i in range(0, len(tps), size):
            chunk = tps[i:i + size]
            for tp, err in sorted(self.admin.elect_preferred(chunk).items()):
                if err:
                    failed[str(tp)] = err
            self.progress(f"elections: {min(i + size, len(tps))}/{len(tps)} partitions requested")
        elected = [tp for tp in tps if str(tp) not in failed]
        settle, lagging, waited = self._await_elected(elected)
        if lagging:
            shown = ", ".join(lagging[:5]) + (", ..." if len(lagging) > 5 else "")
            self.progress(f"elections: {len(lagging)} of {len(elected)} elected partition(s) still not led by their "
                          f"preferred leader in the metadata after {human_seconds(waited)} ({shown}); a snapshot taken "
                          "now may show their old leaders")
        out = ElectionsResult(len(tps), -(-len(tps) // size) if tps else 0, failed, settle, tuple(lagging), waited)
        self.ledger.data["elections"] = {**out.to_dict(), "done": True}
        self.ledger.save()
        return out

    def _await_elected(self, elected: list[TP]) -> tuple[ElectionSettle, list[str], float]:
        """Wait, within the metadata's settle time, until every elected partition's metadata names its
        preferred leader: the controller answers ElectLeaders before the brokers' metadata caches follow,
        and a final snapshot taken in between records the old leaders."""
        if not elected:
            return ElectionSettle.NOTHING_TO_WAIT_FOR, [], 0.0
        started = self.admin.now()
        deadline = started + METADATA_SETTLE_SECONDS
        while True:
            parts = {TP(p.topic, p.partition): p for p in self.admin.describe().partitions}
            lagging = sorted(str(tp) for tp in elected
                             if tp in parts and parts[tp].replicas and parts[tp].leader != parts[tp].replicas[0])
            waited = round(self.admin.now() - started, 3)
            if not lagging:
                return ElectionSettle.SETTLED, [], waited
            if self.admin.now() >= deadline:
                return ElectionSettle.NOT_SETTLED, lagging, waited
            self.sleep(min(1.0, self.settings.poll_interval))

    def final_snapshot(self, path: Path | None) -> Snapshot:
        from kafka_rebalance.cluster.gather import gather_snapshot

        # Recorded under the plan's cluster name, so the final snapshot compares with the gathered one.
        snap = gather_snapshot(self.admin, self.plan.cluster_id)
        if path is not None:
            write_snapshot(snap, path)
        return snap

    def all_finished(self) -> bool:
        return all(self.ledger.state(b.id) == FINISHED for b in self.plan.batches)

    def check_mode(self, batch_ids: list[str] | None) -> None:
        """Refuse a selection or a ledger that does not fit the mode, before anything touches the cluster."""
        if self.settings.mode != "continuous":
            if any(e.get("state") == SUBMITTED for e in self.ledger.continuous()["steps"].values()):
                raise ExecutionRefused(f"{self.ledger.path}: a continuous run left moves in flight; resume it with "
                                       "--mode continuous (or `cancel` them) before running batches")
            return
        if batch_ids is not None:
            raise RebalanceError("--batches selects batches to run as waves: it needs --mode batches")
        if self.plan.schedule is None:
            raise ExecutionRefused(f"{self.plan.path}: has no schedule.json (planned by an older version): "
                                   "execute it with --mode batches, or re-plan")

    def run_selected(self, batch_ids: list[str]) -> tuple[list[BatchResult], ContinuousResult | None]:
        """The mode's way through the plan: the batches with a barrier after each, or the reorder batches then
        the continuous schedule."""
        if self.settings.mode != "continuous":
            return self.run_batches(batch_ids), None
        results = self.run_batches([b.id for b in self.plan.batches if b.kind != "move" and b.id in batch_ids])
        if self.hold is not None or any(r.state != FINISHED for r in results):
            return results, None
        if all(self.ledger.state(b.id) == FINISHED for b in self.plan.batches if b.kind == "move"):
            return results, None
        return results, MoveRun.schedule(self).run_schedule()

    def already_complete(self) -> Verification | None:
        """The verification of a plan that ran to its end earlier and whose partitions Kafka still shows at their
        targets, led as its elections left them (a re-run then changes nothing); None when there is work left, or the
        cluster moved since."""
        elections = self.ledger.data["elections"]
        if not (self.all_finished() and elections.get("done")) or elections.get("failed"):
            return None  # an election that failed (its preferred leader was down, say) is requested again
        verdict = self.verify()
        # Leaders the plan elected that Kafka no longer shows preferred (a broker died since): elected again.
        return verdict if verdict.complete and not verdict.not_led_by_preferred else None

    def run(self, batch_ids: list[str] | None = None, final_snapshot: Path | None = None) -> RunOutcome:
        self.check_mode(batch_ids)
        done = self.already_complete()
        if done is not None:
            self.progress(f"plan {self.plan.plan_hash[:12]} is already complete: every partition is at its target "
                          "and its elections were requested by an earlier run; nothing to do")
            snap = self.final_snapshot(final_snapshot) if final_snapshot is not None else None
            return RunOutcome(self.plan.plan_hash, RunStatus.COMPLETE, self.settings.mode, (), None, None,
                              final_snapshot if snap is not None else None, None, done, True, self.record_progress())
        selected = batch_ids if batch_ids is not None else [b.id for b in self.plan.batches]
        self.preflight(selected)
        results, cont = self.run_selected(selected)
        held = self.hold is not None
        stopped = not held and bool(results) and not self._goes_on_after(results[-1])
        if cont is not None and not held:
            stopped = stopped or bool(cont.failed) or bool(cont.cancelled and self.settings.on_stall == "stop")
        elections = self.elections() if not stopped and not held and self.all_finished() else None
        snap = self.final_snapshot(final_snapshot) if final_snapshot is not None else None
        cancelled = any(r.cancelled for r in results) or (cont is not None and bool(cont.cancelled))
        status: RunStatus
        if self.hold is not None:
            status = HELD_STATUS[self.hold.reason]
        elif stopped:
            status = RunStatus.FAILED
        else:
            status = RunStatus.COMPLETE if self.all_finished() and not cancelled else RunStatus.INCOMPLETE
        if status is RunStatus.COMPLETE and elections and elections.failed:
            status = RunStatus.INCOMPLETE
        # Complete is what the cluster shows, never only what the ledger says: every partition landed now.
        verification = self.verify() if status is RunStatus.COMPLETE else None
        if verification is not None and not verification.complete:
            status = RunStatus.INCOMPLETE
            for problem in verification.problems[:10] + verification.throttles_left:
                self.progress(f"not complete: {problem}")
        return RunOutcome(self.plan.plan_hash, status, self.settings.mode, tuple(results), cont, elections,
                          final_snapshot if snap is not None else None, self.hold, verification, False,
                          self.record_progress())

    # ------------------------------------------------------------------ verify / cancel

    def verify(self) -> Verification:
        self.check_cluster_identity()
        snap = self.admin.describe()
        parts = {TP(p.topic, p.partition): p for p in snap.partitions}
        inflight = self.admin.list_reassignments()
        final_target = self.plan.final_targets
        named: dict[TP, dict[int, str]] = defaultdict(dict)
        for (tp, b), d in self.plan.final_dirs.items():
            named[tp][b] = d
        # Where each named replica lives, as Kafka's DescribeLogDirs reports it.
        found = self.admin.replica_dirs(sorted(named)) if named else {}
        problems, at_target = [], 0
        for tp, target in sorted(final_target.items()):
            p = parts.get(tp)
            if p is not None and tp in inflight:
                problems.append(f"{tp}: still moving ({list(inflight[tp].adding)} catching up)")
            elif (problem := landing_problem(None if p is None else PartitionView(p.replicas, p.isr, p.leader), target)):
                problems.append(f"{tp}: {problem}")
            elif tp in named and (problem := dir_problem(found, tp, named[tp])):
                problems.append(f"{tp}: {problem}")
            else:
                at_target += 1
        return Verification(
            plan_hash=self.plan.plan_hash,
            partitions=len(final_target),
            at_target=at_target,
            problems=tuple(problems),
            throttles_left=tuple(f"{label(key)}: throttles set and not yet restored" for key in self.ledger.unrestored()),
            batches={b.id: self.ledger.state(b.id).value for b in self.plan.batches},
            not_led_by_preferred=tuple(tp for tp in self.plan.elections if tp in parts and parts[tp].leader != parts[tp].replicas[0]),
            other_reassignments_in_flight=tuple(sorted(tp for tp in inflight if tp not in final_target)),
        )

    def after_stop(self, signum: int) -> StopReport:
        """After a signal stopped the run (its ``finally`` blocks restored throttles): restore any record
        still set, record the stop in the ledger, and say what is done and what Kafka still runs.

        Moves in flight are left to Kafka, not cancelled: the next run watches them to their end
        (``continuous.steps`` and the batch entries say they were submitted), and ``cancel`` reverts them.
        """
        for key in self.ledger.unrestored():
            self.throttle_record(key).restore()
        pending = tuple(f"{label(key)}: {', '.join(self.ledger.throttle_entry(key).get('restore_pending', [])) or 'not restored'}"
                        for key in self.ledger.unrestored())
        ours = {tp for b in self.plan.batches for tp in b.targets}
        in_flight: tuple[TP, ...] | None
        try:
            in_flight = tuple(sorted(tp for tp in self.admin.list_reassignments() if tp in ours))
        except ClusterError:
            in_flight = None
        if self.settings.mode == "continuous" and self.plan.schedule is not None:
            steps = self.ledger.continuous()["steps"]
            moves = self.plan.schedule.moves
            done = sum(1 for m in moves if steps.get(str(m.id), {}).get("state") == FINISHED
                       or self.ledger.state(m.batch) == FINISHED)
            unit, total = "steps", len(moves)
        else:
            unit, total = "batches", len(self.plan.batches)
            done = sum(1 for b in self.plan.batches if self.ledger.state(b.id) == FINISHED)
        report = StopReport(signal_name(signum), unit, done, total, in_flight, pending)
        at = self.gate.clock().isoformat(timespec="seconds")
        self.ledger.data.setdefault("stops", []).append({"at": at, **report.to_dict()})
        self.ledger.event(f"{at} stopped by {report.signal} after {done}/{total} {unit}; "
                          f"{'throttles restored' if not pending else 'throttles pending: ' + '; '.join(pending)}; "
                          f"{'unknown' if in_flight is None else len(in_flight)} move(s) left in flight")
        self.ledger.save()
        return report

    def owned_in_flight(self, inflight: Mapping[TP, Reassignment]) -> dict[TP, Reassignment]:
        """The reassignments in flight that this plan submitted: the ledger records the move as submitted (or
        about to be: a run killed between the submission and the ledger's next write) and Kafka is moving the
        partition to exactly that move's target. Anything else in flight is someone else's."""
        mine: dict[TP, set[tuple[int, ...]]] = defaultdict(set)
        for b in self.plan.batches:
            if self.ledger.state(b.id) in (THROTTLED, SUBMITTED, FAILED):
                for tp, target in b.targets.items():
                    mine[tp].add(target)
        if self.plan.schedule is not None:
            for m in self.plan.schedule.moves:
                if self.ledger.step_state(str(m.id)) == SUBMITTED:
                    mine[m.tp].add(m.replicas)
        return {tp: r for tp, r in inflight.items() if r.target in mine.get(tp, ())}

    def cancel(self) -> CancelOutcome:
        """Cancel the moves this plan has in flight (only those: see ``owned_in_flight``) and restore the
        throttle values its runs recorded. Reassignments of anyone else, on the plan's partitions or not, are
        reported and left alone."""
        self.check_cluster_identity()
        inflight = self.admin.list_reassignments()
        owned = self.owned_in_flight(inflight)
        plan_tps = set(self.plan.final_targets)
        others = tuple(sorted(tp for tp in inflight if tp not in owned and tp in plan_tps))
        to_cancel = sorted(owned)
        outcome = self.admin.alter_reassignments({tp: None for tp in to_cancel}) if to_cancel else {}
        restored = self.ledger.unrestored()
        for key in restored:
            self.throttle_record(key).restore()
        for b in self.plan.batches:
            if self.ledger.state(b.id) not in (FINISHED, PENDING):
                self.ledger.set_batch(b.id, CANCELLED)
        for m in self.plan.schedule.moves if self.plan.schedule is not None else ():
            if self.ledger.step_state(str(m.id)) == SUBMITTED:
                self.ledger.set_step(str(m.id), CANCELLED, problems=["cancelled by `cancel`"])
        self.ledger.event(f"cancelled {len(to_cancel)} in-flight move(s) of this plan; left {len(others)} reassignment(s) "
                          f"of the plan's partitions by someone else alone; restored throttles of {restored or 'no batch'}")
        self.ledger.save()
        return CancelOutcome(
            plan_hash=self.plan.plan_hash,
            cancelled=tuple(tp for tp in to_cancel if outcome.get(tp) is None),
            not_cancelled={tp: str(outcome[tp]) for tp in to_cancel if outcome.get(tp)},
            left_alone=others,
            restored_throttles_of=tuple(restored),
        )

