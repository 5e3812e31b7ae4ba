"""One progress model of a plan's execution, computed from the plan and its ledger alone.

``progress(plan, ledger, control)`` is pure: no clock, no cluster, no file reads. Everything it
says comes from what the executor recorded (ledger.json) and what the operator requested
(control.json), so ``kafka-rebalance status`` and anything else that shows progress agree, and a
finished plan's progress never changes.

A *move* is one data move of the plan: a step of schedule.json (one partition's new replicas), or,
for a plan without a schedule, the data-moving partitions of a batch counted together. Its bytes
are the partition's size times the replicas it adds, as the plan's ``bytes_moved`` counts them. A
move's bytes count as done when the move finished: the ledger records no partial copies, so a move
in flight counts as left. Metadata-only reorders and leader elections move no bytes and are not
moves; elections are reported on their own.

The rate is measured, never assumed: bytes copied over the time the copies took, on the cluster
admin's clock (the ledger's ``*_clock`` figures). That is the simulator's own clock under
``--simulate``, where an hour of copying passes in a second of wall time: the ledger's ISO
timestamps are wall-clock, and dividing by them made a 4 MiB/s throttle look like 1.8 GB/s. For a
continuous run, the moves overlap: the bytes of the moves the latest run started and finished, over
the time from that run's start to its last finished move. Batches run one after another, each in
one run: their bytes over the sum of their own times, so the hours between two runs count for none.
A run before the admin's clock was recorded has no rate. The ETA is that rate applied to the bytes
left, counted from the last finished move (``eta_at``), so it too is read from the ledger and not
from a clock.

Each batch of plan.json gets a row (``BatchProgress``): its state, partitions done, start and end.
A batch run as a wave has them in its ledger entry; a batch of a continuous run has them in its
steps (first start, last end), since the run marks the batch itself only when it ends.

JSON: ``as_json`` / ``from_json`` (the ``status --json`` contract, docs/KAFKA.md). ``read_progress``
is the one reader of a plan directory's progress: ``status``, the execution page, the plans list
and the report all call it, so they cannot disagree. ``action_refusal`` says which of pause,
resume and stop no longer applies (nothing is left to steer once the plan finished).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeGuard

from kafka_rebalance.estimates import mode_that_runs, plan_estimate
from kafka_rebalance.executor.control import Control, ControlAction, RunState, read_control
from kafka_rebalance.executor.lease import lease_abandoned
from kafka_rebalance.executor.ledger import (
    CANCELLED,
    CONTINUOUS,
    FAILED,
    FINISHED,
    PENDING,
    SUBMITTED,
    THROTTLED,
    THROTTLES_RECORDED,
    Ledger,
)
from kafka_rebalance.plan_dir import LEDGER_FILE, PlanDirError
from kafka_rebalance.plan_manifest import Plan, load_plan

# 2: per-batch rows (``batches``) and the execution window the executor last recorded (``window``, ``next_window``).
# 3: the headline estimate (``estimated_seconds``, ``estimate_of``, ``other_*``) and each batch's part of it.
PROGRESS_VERSION = 3
READS_VERSIONS = (2, 3)


class ExecState(StrEnum):
    NOT_STARTED = "not-started"
    RUNNING = "running"
    PAUSED = "paused"
    FINISHED = "finished"
    FAILED = "failed"
    STOPPED = "stopped"
    # The run that acted on the plan was killed (its lease is recorded for a process of this host that no longer
    # exists) before the plan finished, and none acts now. Moves it submitted may still be copying in Kafka; a re-run
    # resumes it. Only a crash leaves this: a run that ends cleanly (a closed window, a deferral) clears its lease.
    INTERRUPTED = "interrupted"


# The states in which nothing runs any more and nothing will until an operator acts: the page stops refreshing.
FINAL_STATES = frozenset({ExecState.FINISHED, ExecState.FAILED, ExecState.STOPPED})


class BatchState(StrEnum):
    PENDING = "pending"
    RUNNING = "running"  # a wave under way, or a step of the batch in flight
    PARTIAL = "partial"  # some of its continuous steps finished, the others not started (a held or ended run)
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"  # its moves were cancelled (a stop, a stall, a time limit): a re-run starts them again


# Fields version 3 added: optional when reading, so version 2 documents still read.
_ADDED = frozenset({"estimated_seconds", "estimate_of", "other_estimated_seconds", "other_estimate_of"})


@dataclass(frozen=True, slots=True)
class BatchProgress:
    """One batch of plan.json as the ledger records it."""

    id: str
    kind: str
    state: BatchState
    partitions: int
    partitions_done: int
    bytes: int
    started_at: str | None  # the wave's start, or its first step's (ISO 8601)
    ended_at: str | None  # once it finished, failed or was cancelled: the wave's end, or its last step's
    seconds: float | None  # the time it took on the cluster admin's clock, once finished
    estimated_seconds: float | None = None  # its part of the headline estimate (estimates.py); None: not recorded

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "state": self.state.value}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> BatchProgress:
        names = set(cls.__dataclass_fields__) - _ADDED
        missing = sorted(names - set(raw))
        if missing:
            raise ValueError(f"progress: batches: missing field(s) {', '.join(missing)}")
        return cls(**{**{k: raw[k] for k in names | (_ADDED & set(raw))}, "state": BatchState(raw["state"])})


@dataclass(frozen=True, slots=True)
class Progress:
    plan_hash: str
    state: ExecState
    moves_total: int
    moves_done: int
    moves_in_flight: int
    moves_pending: int
    moves_failed: int
    bytes_total: int
    bytes_done: int
    bytes_left: int
    percent_bytes: float  # 0..100, of bytes_total (100 when the plan moves no bytes and every move is done)
    elections_total: int
    elections_requested: int
    started_at: str | None  # the first move's start in the ledger (ISO 8601)
    updated_at: str | None  # the latest time the ledger records
    rate_bytes_per_sec: float | None  # measured over the latest run; None until a move of it finished
    eta_seconds: float | None  # bytes_left at the measured rate, from eta_from; only while running
    eta_at: str | None  # eta_from + eta_seconds (ISO 8601)
    batches: tuple[BatchProgress, ...] = ()
    window: str | None = None  # the windows the executor last ran under, as it described them
    next_window: str | None = None  # the next opening it recorded (None: unrestricted, or none left)
    version: int = PROGRESS_VERSION
    # The headline estimate of the mode that runs (the one the ledger shows, else the executor's default) and the
    # other mode's figure: estimates.plan_estimate, as plan.json, approve, the approval text and the report say it.
    estimated_seconds: float | None = None
    estimate_of: str | None = None
    other_estimated_seconds: float | None = None
    other_estimate_of: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "state": self.state.value, "batches": [b.as_json() for b in self.batches]}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Progress:
        if raw.get("version") not in READS_VERSIONS:
            raise ValueError(f"progress version {raw.get('version')!r}: this tool reads versions "
                             f"{', '.join(map(str, READS_VERSIONS))}")
        names = set(cls.__dataclass_fields__) - _ADDED
        missing = sorted(names - set(raw))
        if missing:
            raise ValueError(f"progress: missing field(s) {', '.join(missing)}")
        return cls(**{**{k: raw[k] for k in names | (_ADDED & set(raw))}, "state": ExecState(raw["state"]),
                      "batches": tuple(BatchProgress.from_json(b) for b in raw["batches"])})


@dataclass(frozen=True, slots=True)
class _Move:
    key: str  # the ledger's key for it: a schedule step id, or a batch id for a plan without a schedule
    batch: str
    bytes: int


def _moves(plan: Plan) -> list[_Move]:
    if plan.schedule is not None:
        return [_Move(str(m.id), m.batch, m.bytes * len(m.adds)) for m in plan.schedule.moves if m.adds]
    return [_Move(b.id, b.id, b.bytes or 0) for b in plan.batches if b.replica_moves]


def _time(raw: Any) -> datetime | None:
    if not isinstance(raw, str):
        return None
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.isoformat(timespec="milliseconds")


_STARTED = (THROTTLES_RECORDED, THROTTLED, SUBMITTED)


def progress(plan: Plan, ledger: Mapping[str, Any] | None, control: Control | None = None, *,
             holder_gone: bool = False) -> Progress:
    """The execution's progress as the ledger (None: no run yet) and the operator's requests record it.

    ``holder_gone``: the lease the ledger records is proven abandoned (``lease_abandoned``), so a plan that would read
    as running reads as interrupted."""
    ledger = ledger or {}
    batches: Mapping[str, Any] = ledger.get("batches") or {}
    cont: Mapping[str, Any] = ledger.get(CONTINUOUS) or {}
    steps: Mapping[str, Any] = cont.get("steps") or {}
    moves = _moves(plan)
    done = in_flight = failed = 0
    bytes_done = 0
    times: list[datetime] = []
    run_start = _time(cont.get("started_at"))
    run_bytes, run_last_end = 0, None
    run_clocks: list[float] = []  # the admin's clock at the latest run's start (if recorded) and its moves' starts
    run_last_clock: float | None = None
    if _number(cont.get("started_clock")):
        run_clocks.append(float(cont["started_clock"]))
    for m in moves:
        step = steps.get(m.key) if plan.schedule is not None else None
        batch: Mapping[str, Any] = batches.get(m.batch) or {}
        entry: Mapping[str, Any] = step if isinstance(step, Mapping) else {}
        state = entry.get("state")
        if state is None:
            # Not started continuously. A batch run as a wave (batch mode) holds its moves' state; a batch the
            # continuous run touched is marked submitted as soon as any one of its steps starts, so not this one.
            entry = batch
            state = PENDING if batch.get("mode") == CONTINUOUS else batch.get("state", PENDING)
        started, ended = _time(entry.get("started_at")), _time(entry.get("ended_at"))
        times.extend(t for t in (started, ended) if t is not None)
        if state == FINISHED:
            done += 1
            bytes_done += m.bytes
            if (entry is not batch and run_start is not None and started is not None and started >= run_start and ended
                    and _number(entry.get("started_clock")) and _number(entry.get("ended_clock"))):
                run_bytes += m.bytes
                run_last_end = ended if run_last_end is None else max(run_last_end, ended)
                run_clocks.append(float(entry["started_clock"]))
                end_clock = float(entry["ended_clock"])
                run_last_clock = end_clock if run_last_clock is None else max(run_last_clock, end_clock)
        elif state in _STARTED:
            in_flight += 1
        elif state == FAILED:
            failed += 1
        # cancelled moves (a stop, a stall) are pending again: the next run starts them afresh
    copy_seconds = None if run_last_clock is None else run_last_clock - min(run_clocks)
    if run_last_end is None:
        run_bytes, copy_seconds, run_last_end = _batch_copies(plan, batches)
    total = sum(m.bytes for m in moves)
    elections = ledger.get("elections") or {}
    requested = int(elections.get("requested", 0)) if elections.get("done") else 0
    # The run's own times and its holds say the ledger was written then, not that a move started.
    written = list(times)
    written.extend(t for t in (_time(cont.get("started_at")), _time(cont.get("ended_at"))) if t is not None)
    holds = ledger.get("holds")
    if isinstance(holds, list):
        written.extend(t for h in holds if isinstance(h, Mapping) and (t := _time(h.get("at"))) is not None)
    all_done = done == len(moves) and cont.get("state", FINISHED) == FINISHED and (requested or not plan.elections)
    run_state = control.state if control is not None else RunState.RUNNING
    if all_done and ledger:
        state_ = ExecState.FINISHED
    elif run_state is RunState.STOPPED:
        state_ = ExecState.STOPPED
    elif run_state is RunState.PAUSED:
        state_ = ExecState.PAUSED
    elif not in_flight and _run_failed(cont, batches, ledger.get("holds")):
        state_ = ExecState.FAILED
    elif not times:
        state_ = ExecState.NOT_STARTED
    else:
        state_ = ExecState.INTERRUPTED if holder_gone else ExecState.RUNNING
    rate = None
    if copy_seconds is not None and copy_seconds > 0 and run_bytes > 0:
        rate = run_bytes / copy_seconds
    left = total - bytes_done
    eta_seconds = eta_at = None
    if state_ is ExecState.RUNNING and rate and run_last_end is not None:
        eta_seconds = round(left / rate, 1)
        eta_at = _iso(run_last_end + timedelta(seconds=eta_seconds))
    percent = round(100.0 * bytes_done / total, 2) if total else (100.0 if done == len(moves) and ledger else 0.0)
    recorded = ledger.get("progress")
    recorded = recorded if isinstance(recorded, Mapping) else {}
    estimate = plan_estimate(plan.manifest, mode_that_runs(ledger, [b.id for b in plan.batches if b.kind == "move"]))
    parts = {s.id: s.seconds for s in estimate.steps}
    return Progress(
        plan_hash=plan.plan_hash, state=state_, moves_total=len(moves), moves_done=done, moves_in_flight=in_flight,
        moves_pending=len(moves) - done - in_flight - failed, moves_failed=failed, bytes_total=total,
        bytes_done=bytes_done, bytes_left=left, percent_bytes=percent, elections_total=len(plan.elections),
        elections_requested=requested, started_at=_iso(min(times)) if times else None,
        updated_at=_iso(max(written)) if written else None,
        rate_bytes_per_sec=None if rate is None else round(rate, 1), eta_seconds=eta_seconds, eta_at=eta_at,
        batches=tuple(replace(r, estimated_seconds=parts.get(r.id)) for r in batch_rows(plan, batches, steps)),
        window=_str(recorded.get("window")), next_window=_str(recorded.get("next_window")),
        estimated_seconds=estimate.seconds, estimate_of=estimate.mode, other_estimated_seconds=estimate.other_seconds,
        other_estimate_of=estimate.other_mode,
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


_BATCH_STATE = {PENDING: BatchState.PENDING, THROTTLES_RECORDED: BatchState.RUNNING, THROTTLED: BatchState.RUNNING,
                SUBMITTED: BatchState.RUNNING, FINISHED: BatchState.FINISHED, FAILED: BatchState.FAILED,
                CANCELLED: BatchState.CANCELLED}


def batch_rows(plan: Plan, batches: Mapping[str, Any], steps: Mapping[str, Any]) -> tuple[BatchProgress, ...]:
    """A row per batch of the plan, from its wave's ledger entry or from its continuous steps."""
    step_ids: dict[str, list[int]] = defaultdict(list)
    for m in plan.schedule.moves if plan.schedule is not None else ():
        step_ids[m.batch].append(m.id)
    rows = []
    for b in plan.batches:
        raw = batches.get(b.id)
        entry: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        ids = step_ids.get(b.id, [])
        as_wave = entry.get("mode") != CONTINUOUS and entry.get("state", PENDING) != PENDING
        if ids and not as_wave and any(str(i) in steps for i in ids):
            rows.append(_continuous_row(plan, b.id, ids, steps))
            continue
        state = _BATCH_STATE.get(entry.get("state", PENDING), BatchState.PENDING)
        completed = entry.get("completed")
        done = b.partitions if state is BatchState.FINISHED else len(completed) if isinstance(completed, list) else 0
        took = entry.get("actual_seconds")
        seconds = round(float(took), 3) if state is BatchState.FINISHED and _number(took) else None
        ended = _time(entry.get("ended_at")) if state in _BATCH_ENDED else None
        rows.append(BatchProgress(
            id=b.id, kind=b.kind, state=state, partitions=b.partitions, partitions_done=min(done, b.partitions),
            bytes=b.bytes or 0, started_at=_iso(_time(entry.get("started_at"))), ended_at=_iso(ended),
            seconds=seconds))
    return tuple(rows)


_BATCH_ENDED = frozenset({BatchState.FINISHED, BatchState.FAILED, BatchState.CANCELLED})


def _continuous_row(plan: Plan, batch_id: str, ids: list[int], steps: Mapping[str, Any]) -> BatchProgress:
    batch = plan.batch(batch_id)
    assert plan.schedule is not None
    by_id = {m.id: m for m in plan.schedule.moves}
    entries = [e if isinstance(e := steps.get(str(i)), Mapping) else {} for i in ids]
    states = [e.get("state", PENDING) for e in entries]
    if all(st == FINISHED for st in states):
        state = BatchState.FINISHED
    elif any(st in _STARTED for st in states):
        state = BatchState.RUNNING
    elif FAILED in states:
        state = BatchState.FAILED
    elif CANCELLED in states:
        state = BatchState.CANCELLED
    elif FINISHED in states:
        state = BatchState.PARTIAL
    else:
        state = BatchState.PENDING
    # A partition may take several steps (one per replica set on its way): done when all of them are.
    unfinished = {by_id[i].tp for i, st in zip(ids, states) if st != FINISHED}
    done = len({by_id[i].tp for i in ids} - unfinished)
    starts = [t for e in entries if (t := _time(e.get("started_at"))) is not None]
    ends = [t for e in entries if (t := _time(e.get("ended_at"))) is not None]
    seconds = None
    if state is BatchState.FINISHED:
        start_clocks = [float(e["started_clock"]) for e in entries if _number(e.get("started_clock"))]
        end_clocks = [float(e["ended_clock"]) for e in entries if _number(e.get("ended_clock"))]
        if len(start_clocks) == len(end_clocks) == len(entries):
            seconds = round(max(end_clocks) - min(start_clocks), 3)
    return BatchProgress(
        id=batch_id, kind=batch.kind, state=state, partitions=batch.partitions, partitions_done=done,
        bytes=batch.bytes or 0, started_at=_iso(min(starts)) if starts else None,
        ended_at=_iso(max(ends)) if ends and state in _BATCH_ENDED else None, seconds=seconds)


def read_progress(plan_dir: Path, plan: Plan | None = None) -> Progress:
    """The progress of the plan in ``plan_dir`` (hash verified, any verdict) from its ledger and control file.

    Raises PlanDirError (a changed plan, a corrupt ledger or control file), never guesses.
    """
    plan_dir = Path(plan_dir)
    plan = plan if plan is not None else load_plan(plan_dir, require_passed=False)
    ledger = Ledger.open(plan_dir, plan.plan_hash).data if (plan_dir / LEDGER_FILE).exists() else None
    return progress(plan, ledger, read_control(plan_dir, plan.plan_hash),
                    holder_gone=ledger is not None and lease_abandoned(ledger.get("lease")))


def action_refusal(p: Progress, action: ControlAction) -> str | None:
    """Why ``action`` must not be recorded for a plan at ``p`` (None: it may). A finished plan has nothing
    left to pause or stop, and a stop recorded after the fact would make it read as stopped."""
    if p.state is ExecState.FINISHED:
        return (f"plan {p.plan_hash[:16]} finished (every move done); there is nothing to {action.value}: "
                "a new rebalance needs a new plan")
    return None


def control_refusal(plan_dir: Path, action: ControlAction) -> str | None:
    """``action_refusal`` for the plan in ``plan_dir``, for the pause, resume and stop commands and buttons.

    A ledger or plan that cannot be read refuses nothing here: a request never touches the cluster, so it stays
    possible whatever state the ledger is in (the run judges the ledger; control.request judges the plan).
    """
    try:
        p = read_progress(plan_dir)
    except PlanDirError:
        return None
    return action_refusal(p, action)


def applicable_actions(p: Progress, approved: bool) -> tuple[ControlAction, ...]:
    """The buttons an operator is offered: pause and stop while the plan runs or waits to, resume once paused;
    none before approval or once the execution ended (finished, failed or stopped)."""
    if not approved or p.state in FINAL_STATES:
        return ()
    if p.state is ExecState.PAUSED:
        return (ControlAction.RESUME, ControlAction.STOP)
    return (ControlAction.PAUSE, ControlAction.STOP)


def _run_failed(cont: Mapping[str, Any], batches: Mapping[str, Any], holds: Any) -> bool:
    """Whether the latest run ended failed, rather than held (paused, stopped, out of its window: it resumes).

    The executor marks a held run failed too (it did not finish); what tells them apart is a hold it
    recorded (ledger ``holds``) since that run started. A cancelled move (a stall, a time limit) in a run
    that was not held leaves the run failed although the move itself is pending again.
    """
    held_at = [t for h in holds if isinstance(h, Mapping) and (t := _time(h.get("at"))) is not None] \
        if isinstance(holds, list) else []

    def held_since(start: datetime | None) -> bool:
        # hold times are recorded to the second, run starts to the millisecond
        return start is not None and any(t >= start - timedelta(seconds=1) for t in held_at)

    if cont.get("state") == FAILED and cont.get("ended_at") and not held_since(_time(cont.get("started_at"))):
        return True
    return any(isinstance(e, Mapping) and e.get("state") == FAILED and e.get("mode") != CONTINUOUS
               and not held_since(_time(e.get("started_at"))) for e in batches.values())


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _batch_copies(plan: Plan, batches: Mapping[str, Any]) -> tuple[int, float | None, datetime | None]:
    """For batch-mode runs: the bytes of the finished batches, the admin-clock seconds they took between
    them (``actual_seconds``), and the last one's end (wall clock, for ``eta_at``)."""
    moved, seconds, end = 0, 0.0, None
    for b in plan.batches:
        entry = batches.get(b.id) or {}
        if entry.get("state") != FINISHED or entry.get("mode") == CONTINUOUS or not b.replica_moves:
            continue
        e = _time(entry.get("ended_at"))
        if e is None or not _number(entry.get("actual_seconds")):
            continue
        end = e if end is None else max(end, e)
        moved += b.bytes or 0
        seconds += float(entry["actual_seconds"])
    return moved, (seconds if end is not None else None), end
