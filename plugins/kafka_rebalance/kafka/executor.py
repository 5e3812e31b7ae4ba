"""The executor: runs an approved plan directory against a ``ClusterAdmin``, batch by batch, safely.

Safety rules (docs/KAFKA.md):
* refuse a plan that did not pass validation, whose files or plan hash changed, whose
  "before" assignment no longer matches the cluster, or while a reassignment the plan
  did not start is in flight (unless ``additional``);
* per batch: record the throttle configs that exist, then set the batch's throttles,
  submit, poll (progress line: partitions done, bytes left, ETA) until done, a time
  limit, or a stall (no progress on a partition for ``stall_seconds``: cancel it);
  verify; restore exactly the recorded values in ``finally``;
* the ledger is written before every step that changes the cluster, so a killed run's
  throttles are restored by the next run and finished batches are not run again.

The DAG calls the steps one by one: ``preflight``, ``run_batch``, ``elections``,
``final_snapshot``; the CLI calls ``run``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.kafka.admin import (
    BROKER,
    FOLLOWER_REPLICAS,
    LEADER_REPLICAS,
    TOPIC,
    TP,
    ClusterAdmin,
    Reassignment,
    format_throttled_replicas,
    parse_throttled_replicas,
)
from kafka_rebalance.kafka.ledger import (
    CANCELLED,
    FAILED,
    FINISHED,
    PENDING,
    SUBMITTED,
    THROTTLED,
    THROTTLES_RECORDED,
    Ledger,
)
from kafka_rebalance.plan_manifest import Batch, Plan
from kafka_rebalance.snapshot import Snapshot, write_snapshot
from kafka_rebalance.units import human_bytes, human_seconds
from kafka_rebalance.userinput import finite_number, is_ascii_digits

ON_STALL = ("continue", "stop")
# Upper bounds of the time settings: past them a value is a typo (or inf), and a poll
# interval of nan/inf would sleep forever after throttles were already set.
MAX_POLL_INTERVAL = 3600.0
MAX_WAIT_SECONDS = 7 * 86400.0


class ExecutionRefused(RebalanceError):
    """The executor will not start: the plan or the cluster is not in the state the plan assumes."""


@dataclass(frozen=True, slots=True)
class ExecSettings:
    poll_interval: float = 10.0  # seconds on the admin's clock between progress polls
    stall_seconds: float = 300.0  # no byte of progress on a partition for this long: cancel it
    batch_timeout: float | None = None  # None: 3 x the plan's estimate + 10 minutes (6 h without an estimate)
    on_stall: str = "continue"  # after cancelling stalled moves: "continue" with the plan or "stop"
    additional: bool = False  # allow starting while other reassignments are in flight

    def __post_init__(self) -> None:
        if self.on_stall not in ON_STALL:
            raise RebalanceError(f"on_stall: expected one of {', '.join(ON_STALL)}, got {self.on_stall!r}")
        problems = []
        if not (finite_number(self.poll_interval, 0, MAX_POLL_INTERVAL) and self.poll_interval > 0):
            problems.append(f"--poll-interval must be within 0..{MAX_POLL_INTERVAL:g} seconds (exclusive of 0), got {self.poll_interval}")
        if not (finite_number(self.stall_seconds, 0, MAX_WAIT_SECONDS) and self.stall_seconds > 0):
            problems.append(f"--stall-seconds must be within 0..{MAX_WAIT_SECONDS:g} seconds (exclusive of 0), got {self.stall_seconds}")
        if self.batch_timeout is not None and not (finite_number(self.batch_timeout, 0, MAX_WAIT_SECONDS) and self.batch_timeout > 0):
            problems.append(f"--batch-timeout must be within 0..{MAX_WAIT_SECONDS:g} seconds (exclusive of 0), got {self.batch_timeout}")
        if problems:
            raise RebalanceError("; ".join(problems))

    def timeout_for(self, batch: Batch) -> float:
        if self.batch_timeout is not None:
            return self.batch_timeout
        if batch.estimated_seconds:
            return 3 * batch.estimated_seconds + 600
        return 6 * 3600.0


@dataclass(slots=True)
class BatchResult:
    id: str
    state: str
    partitions: int
    completed: list[str] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    estimated_seconds: float | None = None
    actual_seconds: float | None = None
    skipped: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def merge_throttle(key: str, planned: str, existing: str | None) -> str:
    """The value to set: the plan's, joined with a throttled-replica list already there (``*`` stays ``*``)."""
    if key not in (LEADER_REPLICAS, FOLLOWER_REPLICAS) or not existing:
        return planned
    old, new = parse_throttled_replicas(existing), parse_throttled_replicas(planned)
    if old == "*" or new == "*":
        return "*"
    assert not isinstance(old, str) and not isinstance(new, str)
    return format_throttled_replicas(old | new)


def parse_batch_selection(spec: str | None, plan: Plan) -> list[str]:
    """``1-3``, ``2``, ``1,3-4`` -> batch ids of the plan; None -> all."""
    ids = [b.id for b in plan.batches]
    if spec is None or not spec.strip():
        return ids
    numbers = {int(i) for i in ids}
    wanted: set[int] = set()
    for part in spec.split(","):
        part = part.strip()
        lo, sep, hi = part.partition("-")
        if not is_ascii_digits(lo) or (sep and not is_ascii_digits(hi)) or len(lo) > 9 or len(hi) > 9:
            raise RebalanceError(f"--batches: {part!r} is not N or N-M (e.g. 1-3)")
        a, b = int(lo), int(hi) if sep else int(lo)
        if a > b:
            raise RebalanceError(f"--batches: {part!r} runs backwards")
        # Compare against the plan's batches, never materialise the range: 1-400000000 must not hang.
        inside = {n for n in numbers if a <= n <= b}
        if len(inside) != b - a + 1:
            first_missing = next(n for n in range(a, b + 1) if n not in inside)
            raise RebalanceError(
                f"--batches: plan {plan.path} has batches {ids[0] if ids else '-'}..{ids[-1] if ids else '-'}, "
                f"not {first_missing}" + (f" (asked for {a}..{b})" if a != b else "")
            )
        wanted |= inside
    return [i for i in ids if int(i) in wanted]


class Executor:
    def __init__(
        self,
        plan: Plan,
        admin: ClusterAdmin,
        settings: ExecSettings = ExecSettings(),
        progress: Callable[[str], None] | None = None,
    ) -> None:
        self.plan = plan
        self.admin = admin
        self.settings = settings
        self.progress = progress or (lambda line: None)
        self.ledger = Ledger.open(plan.path, plan.plan_hash)

    # ------------------------------------------------------------------ throttles

    def _record_throttles(self, batch: Batch) -> dict[str, dict[str, dict[str, str | None]]]:
        out: dict[str, dict[str, dict[str, str | None]]] = {"brokers": {}, "topics": {}}
        for bid, cfg in sorted(batch.throttles.brokers.items()):
            out["brokers"][str(bid)] = self.admin.dynamic_configs(BROKER, str(bid), sorted(cfg))
        for topic, cfg in sorted(batch.throttles.topics.items()):
            out["topics"][topic] = self.admin.dynamic_configs(TOPIC, topic, sorted(cfg))
        return out

    def _set_throttles(self, batch: Batch, before: dict[str, dict[str, dict[str, str | None]]]) -> None:
        for bid, cfg in sorted(batch.throttles.brokers.items()):
            self.admin.alter_configs(BROKER, str(bid), dict(sorted(cfg.items())))
        for topic, cfg in sorted(batch.throttles.topics.items()):
            old = before["topics"].get(topic, {})
            self.admin.alter_configs(TOPIC, topic, {k: merge_throttle(k, v, old.get(k)) for k, v in sorted(cfg.items())})

    def _restore(self, batch_id: str) -> None:
        entry = self.ledger.batch(batch_id)
        before = entry.get("throttles_before")
        if before is None or entry.get("throttles_restored"):
            return
        for bid, values in sorted(before.get("brokers", {}).items()):
            self.admin.alter_configs(BROKER, bid, values)
        for topic, values in sorted(before.get("topics", {}).items()):
            self.admin.alter_configs(TOPIC, topic, values)
        entry["throttles_restored"] = True
        self.ledger.save()

    def restore_leftover_throttles(self) -> list[str]:
        """Put back throttle values a killed or failed run left set; returns the batches concerned."""
        leftover = self.ledger.unrestored()
        for bid in leftover:
            self.progress(f"batch {bid}: restoring the throttle values recorded before an interrupted run")
            self._restore(bid)
            self.ledger.event(f"restored throttles left by an interrupted run of batch {bid}")
            self.ledger.save()
        return leftover

    # ------------------------------------------------------------------ checks

    def _resumable(self, batch_id: str) -> bool:
        return self.ledger.state(batch_id) in (THROTTLES_RECORDED, THROTTLED, SUBMITTED, FAILED, CANCELLED)

    def _check_batches(self, batches: Iterable[Batch], current: dict[TP, tuple[int, ...]],
                       inflight: dict[TP, Reassignment]) -> list[str]:
        problems: list[str] = []
        seen: set[TP] = set()
        for b in batches:
            resumable = self._resumable(b.id)
            for tp, before in sorted(b.before.items()):
                if tp in seen:
                    continue
                seen.add(tp)
                cur = current.get(tp)
                target = b.targets[tp]
                if cur is None:
                    problems.append(f"{tp} no longer exists (batch {b.id})")
                elif tp in inflight:
                    if not (resumable and inflight[tp].target == target):
                        problems.append(f"{tp} is being reassigned to {list(inflight[tp].target)} by someone else")
                elif cur != before and not (resumable and cur == target):
                    problems.append(f"{tp} has replicas {list(cur)} but batches/{b.id}/rollback.json expects {list(before)}")
        return problems

    def _foreign(self, inflight: dict[TP, Reassignment]) -> dict[TP, Reassignment]:
        ours: dict[TP, tuple[int, ...]] = {}
        for b in self.plan.batches:
            if self._resumable(b.id):
                ours.update(b.targets)
        return {tp: r for tp, r in inflight.items() if ours.get(tp) != r.target}

    def _refuse_foreign(self, inflight: dict[TP, Reassignment]) -> None:
        foreign = self._foreign(inflight)
        if foreign and not self.settings.additional:
            shown = ", ".join(f"{tp} -> {list(r.target)}" for tp, r in sorted(foreign.items())[:5])
            raise ExecutionRefused(
                f"{len(foreign)} reassignment(s) not started by this plan are in flight ({shown}"
                f"{', ...' if len(foreign) > 5 else ''}); wait for them, cancel them, or pass --additional")

    def preflight(self, batch_ids: Iterable[str] | None = None) -> dict[str, Any]:
        """Restore leftover throttles, then refuse if the cluster is not where the plan starts."""
        restored = self.restore_leftover_throttles()
        wanted = set(batch_ids) if batch_ids is not None else {b.id for b in self.plan.batches}
        todo = [b for b in self.plan.batches if b.id in wanted and self.ledger.state(b.id) != FINISHED]
        inflight = self.admin.list_reassignments()
        self._refuse_foreign(inflight)
        snap = self.admin.describe()
        current = {TP(p.topic, p.partition): p.replicas for p in snap.partitions}
        problems = self._check_batches(todo, current, inflight)
        if problems:
            raise ExecutionRefused(
                f"{self.plan.path}: the cluster changed since planning ({len(problems)} partition(s)): "
                + "; ".join(problems[:10]) + ("; ..." if len(problems) > 10 else "") + "; re-plan from a fresh snapshot")
        if snap.cluster_id != self.plan.cluster_id:
            self.progress(f"note: cluster reports id {snap.cluster_id!r}, the plan was made for {self.plan.cluster_id!r}")
        return {"batches_to_run": [b.id for b in todo], "restored_throttles_of": restored}

    # ------------------------------------------------------------------ one batch

    def run_batch(self, batch_id: str) -> BatchResult:
        batch = self.plan.batch(batch_id)
        entry = self.ledger.batch(batch.id)
        if entry.get("state") == FINISHED:
            return BatchResult(batch.id, FINISHED, len(batch.targets), entry.get("completed", []), entry.get("cancelled", []),
                               entry.get("problems", []), batch.estimated_seconds, entry.get("actual_seconds"), skipped=True)
        self.restore_leftover_throttles()
        inflight = self.admin.list_reassignments()
        self._refuse_foreign(inflight)
        current = {TP(p.topic, p.partition): p.replicas for p in self.admin.describe().partitions}
        problems = self._check_batches([batch], current, inflight)
        if problems:
            raise ExecutionRefused(f"batch {batch.id}: the cluster is not where this batch starts: " + "; ".join(problems[:10]))
        result = BatchResult(batch.id, FAILED, len(batch.targets), estimated_seconds=batch.estimated_seconds)
        start = self.admin.now()
        entry.update(state=THROTTLES_RECORDED, throttles_before=None, throttles_restored=False, started_clock=start)
        entry["throttles_before"] = self._record_throttles(batch)
        # The ledger holds the old values BEFORE anything is set: a kill from here on is recoverable.
        self.ledger.save()
        try:
            self._set_throttles(batch, entry["throttles_before"])
            entry["state"] = THROTTLED
            self.ledger.save()
            to_submit = {tp: t for tp, t in sorted(batch.targets.items())
                         if current[tp] != t and not (tp in inflight and inflight[tp].target == t)}
            errors = {tp: e for tp, e in self.admin.alter_reassignments(to_submit).items() if e}
            entry["state"] = SUBMITTED
            self.ledger.save()
            for tp, err in sorted(errors.items()):
                result.problems.append(f"{tp}: reassignment refused by the cluster ({err})")
            timed_out, stopped = self._poll(batch, set(batch.targets) - set(errors), result, start)
            result.problems.extend(self._verify_batch(batch, set(result.cancelled) | set(errors)))
            ok = not result.problems and not timed_out and not (stopped and result.cancelled)
            result.state = FINISHED if ok else FAILED
        except BaseException:
            entry["state"] = FAILED
            raise
        finally:
            self.ledger.save()
            self._restore(batch.id)
        result.actual_seconds = round(self.admin.now() - start, 3)
        done = set(batch.targets) - {TP(*_split(c)) for c in result.cancelled}
        result.completed = sorted(str(tp) for tp in done if not any(str(tp) in p for p in result.problems))
        entry.update(state=result.state, completed=result.completed, cancelled=result.cancelled, problems=result.problems,
                     actual_seconds=result.actual_seconds, estimated_seconds=batch.estimated_seconds)
        self.ledger.save()
        self.progress(
            f"batch {batch.id}: {result.state}, {len(result.completed)}/{len(batch.targets)} partitions at target, "
            f"{len(result.cancelled)} cancelled, took {human_seconds(result.actual_seconds)} "
            f"(estimated {human_seconds(batch.estimated_seconds)})")
        for problem in result.problems:
            self.progress(f"batch {batch.id}: {problem}")
        return result

    def _poll(self, batch: Batch, pending: set[TP], result: BatchResult, start: float) -> tuple[bool, bool]:
        """Poll until done, stalled or timed out; returns (timed_out, stopped_on_stall)."""
        s = self.settings
        timeout = s.timeout_for(batch)
        total = len(batch.targets)
        marker: dict[TP, int] = {}
        last_change: dict[TP, float] = {}
        last_left: dict[TP, int] = {}
        moved = 0.0
        rate_hint = batch.throttles.rate_bytes_per_sec
        while True:
            inflight = self.admin.list_reassignments()
            now = self.admin.now()
            for tp in sorted(pending):
                if tp not in inflight:
                    moved += last_left.pop(tp, 0)
                    pending.discard(tp)
            sizes = self.admin.replica_sizes(sorted(pending)) if pending else {}
            left_total, stalled = 0, []
            for tp in sorted(pending):
                r = inflight[tp]
                source = max((sizes.get((tp, x), 0) for x in r.replicas if x not in r.adding), default=0)
                left = sum(max(0, source - sizes.get((tp, x), 0)) for x in r.adding)
                copied = sum(sizes.get((tp, x), 0) for x in r.adding)
                if tp not in marker or copied > marker[tp]:
                    marker[tp], last_change[tp] = copied, now
                elif now - last_change[tp] >= s.stall_seconds:
                    stalled.append(tp)
                if tp in last_left and left < last_left[tp]:
                    moved += last_left[tp] - left
                last_left[tp] = left
                left_total += left
            elapsed = now - start
            rate = moved / elapsed if moved > 0 and elapsed > 0 else rate_hint
            eta = left_total / rate if rate else None
            done = total - len(pending) - len(result.cancelled)
            self.progress(f"batch {batch.id}: {done}/{total} partitions done, {human_bytes(left_total)} left, "
                          f"ETA {human_seconds(eta) if pending else '0s'}")
            if stalled:
                self._cancel(stalled, pending, result, f"no progress for {human_seconds(s.stall_seconds)}")
                if s.on_stall == "stop":
                    if pending:
                        self._cancel(sorted(pending), pending, result, "stopping the batch after a stall")
                    return False, True
            if not pending:
                return False, False
            if elapsed >= timeout:
                self._cancel(sorted(pending), pending, result, f"batch time limit {human_seconds(timeout)} reached")
                result.problems.append(f"time limit {human_seconds(timeout)} reached; unfinished moves were cancelled")
                return True, False
            self.admin.sleep(s.poll_interval)

    def _cancel(self, tps: list[TP], pending: set[TP], result: BatchResult, why: str) -> None:
        outcome = self.admin.alter_reassignments({tp: None for tp in tps})
        for tp in tps:
            pending.discard(tp)
            if outcome.get(tp) is None:
                result.cancelled.append(str(tp))
                self.progress(f"batch {result.id}: cancelled {tp}: {why}")
            # NO_REASSIGNMENT_IN_PROGRESS: it finished between poll and cancel; verification judges it.

    def _verify_batch(self, batch: Batch, cancelled: set[TP] | set[str]) -> list[str]:
        snap = self.admin.describe()
        parts = {TP(p.topic, p.partition): p for p in snap.partitions}
        alive = {b.id for b in snap.brokers if b.alive}
        cancelled_names = {str(c) for c in cancelled}
        problems = []
        for tp, target in sorted(batch.targets.items()):
            p = parts.get(tp)
            if p is None:
                problems.append(f"{tp}: disappeared during the batch")
            elif str(tp) in cancelled_names:
                if p.replicas != batch.before[tp]:
                    problems.append(f"{tp}: cancelled, but replicas are {list(p.replicas)}, not back to {list(batch.before[tp])}")
            elif p.replicas != target:
                problems.append(f"{tp}: replicas {list(p.replicas)} differ from the target {list(target)}")
            elif not set(target) <= set(p.isr):
                missing = sorted(set(target) - set(p.isr))
                dead = [m for m in missing if m not in alive]
                problems.append(f"{tp}: ISR {list(p.isr)} lacks {missing}" + (f" (broker(s) {dead} down)" if dead else ""))
            elif p.leader == -1:
                problems.append(f"{tp}: has no leader")
        return problems

    # ------------------------------------------------------------------ after the batches

    def elections(self) -> dict[str, Any]:
        size = self.plan.election_batch_size
        tps = list(self.plan.elections)
        failed: dict[str, str] = {}
        for i in range(0, len(tps), size):
            chunk = tps[i:i + size]
            for tp, err in sorted(self.admin.elect_preferred(chunk).items()):
                if err:
                    failed[str(tp)] = err
            self.progress(f"elections: {min(i + size, len(tps))}/{len(tps)} partitions requested")
        out = {"requested": len(tps), "chunks": -(-len(tps) // size) if tps else 0, "failed": failed}
        self.ledger.data["elections"] = {**out, "done": True}
        self.ledger.save()
        return out

    def final_snapshot(self, path: Path | None) -> Snapshot:
        snap = self.admin.describe()
        if path is not None:
            write_snapshot(snap, path)
        return snap

    def all_finished(self) -> bool:
        return all(self.ledger.state(b.id) == FINISHED for b in self.plan.batches)

    def run(self, batch_ids: list[str] | None = None, final_snapshot: Path | None = None) -> dict[str, Any]:
        selected = batch_ids if batch_ids is not None else [b.id for b in self.plan.batches]
        self.preflight(selected)
        results: list[BatchResult] = []
        stopped = False
        for bid in selected:
            r = self.run_batch(bid)
            results.append(r)
            if r.state != FINISHED or (r.cancelled and self.settings.on_stall == "stop"):
                stopped = True
                break
        elections = self.elections() if not stopped and self.all_finished() else None
        snap = self.final_snapshot(final_snapshot) if final_snapshot is not None else None
        cancelled = sum(len(r.cancelled) for r in results)
        status = "failed" if stopped else ("complete" if self.all_finished() and not cancelled else "incomplete")
        if status == "complete" and elections and elections["failed"]:
            status = "incomplete"
        return {
            "plan_hash": self.plan.plan_hash,
            "status": status,
            "batches": [
                {**r.to_dict(), "predicted_seconds": r.estimated_seconds} for r in results
            ],
            "elections": elections,
            "final_snapshot": str(final_snapshot) if snap is not None else None,
        }

    # ------------------------------------------------------------------ verify / cancel

    def verify(self) -> dict[str, Any]:
        snap = self.admin.describe()
        parts = {TP(p.topic, p.partition): p for p in snap.partitions}
        inflight = self.admin.list_reassignments()
        plan_tps = {tp for b in self.plan.batches for tp in b.targets}
        final_target: dict[TP, tuple[int, ...]] = {}
        for b in self.plan.batches:
            final_target.update(b.targets)
        problems, at_target = [], 0
        for tp, target in sorted(final_target.items()):
            p = parts.get(tp)
            if p is None:
                problems.append(f"{tp}: does not exist")
            elif tp in inflight:
                problems.append(f"{tp}: still moving ({list(inflight[tp].adding)} catching up)")
            elif p.replicas != target:
                problems.append(f"{tp}: replicas {list(p.replicas)}, target {list(target)}")
            elif not set(target) <= set(p.isr):
                problems.append(f"{tp}: ISR {list(p.isr)} incomplete")
            elif p.leader == -1:
                problems.append(f"{tp}: no leader")
            else:
                at_target += 1
        throttles_left = []
        for b in self.plan.batches:
            entry = self.ledger.data["batches"].get(b.id, {})
            if entry.get("throttles_before") is not None and not entry.get("throttles_restored"):
                throttles_left.append(f"batch {b.id}: throttles set and not yet restored")
        not_preferred = [str(tp) for tp in self.plan.elections if tp in parts and parts[tp].leader != parts[tp].replicas[0]]
        foreign = sorted(str(tp) for tp in inflight if tp not in plan_tps)
        complete = not problems and not throttles_left
        return {
            "plan_hash": self.plan.plan_hash,
            "status": "complete" if complete else "incomplete",
            "partitions": len(final_target),
            "at_target": at_target,
            "problems": problems,
            "throttles_left": throttles_left,
            "batches": {b.id: self.ledger.state(b.id) for b in self.plan.batches},
            "not_led_by_preferred": not_preferred,
            "other_reassignments_in_flight": foreign,
        }

    def cancel(self) -> dict[str, Any]:
        inflight = self.admin.list_reassignments()
        ours = {tp: t for b in self.plan.batches for tp, t in b.targets.items()}
        to_cancel = sorted(tp for tp, r in inflight.items() if tp in ours)
        outcome = self.admin.alter_reassignments({tp: None for tp in to_cancel}) if to_cancel else {}
        restored = self.ledger.unrestored()
        for bid in restored:
            self._restore(bid)
        for b in self.plan.batches:
            if self.ledger.state(b.id) not in (FINISHED, PENDING):
                self.ledger.batch(b.id)["state"] = CANCELLED
        self.ledger.event(f"cancelled {len(to_cancel)} in-flight move(s); restored throttles of {restored or 'no batch'}")
        self.ledger.save()
        return {
            "plan_hash": self.plan.plan_hash,
            "cancelled": [str(tp) for tp in to_cancel if outcome.get(tp) is None],
            "not_cancelled": {str(tp): outcome[tp] for tp in to_cancel if outcome.get(tp)},
            "restored_throttles_of": restored,
        }


def _split(name: str) -> tuple[str, int]:
    topic, _, part = name.rpartition("-")
    return topic, int(part)
