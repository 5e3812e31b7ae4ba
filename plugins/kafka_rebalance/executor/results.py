"""What the executor reports per partition and per batch: typed, turned into text only at the edges."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from kafka_rebalance.cluster.admin import TP
from kafka_rebalance.executor.gate import Hold
from kafka_rebalance.executor.moves import MoveState
from kafka_rebalance.throttle_model import EstimateMiss


class PartitionState(str, Enum):
    """Where one partition of a batch ended up, decided per partition (never by matching messages)."""

    AT_TARGET = "at_target"  # target replicas, full ISR, a leader
    CANCELLED = "cancelled"  # its move was cancelled and it is back on its old replicas
    REFUSED = "refused"  # the cluster refused the reassignment
    NOT_AT_TARGET = "not_at_target"  # anything else: see the problem


@dataclass(frozen=True, slots=True)
class PartitionOutcome:
    tp: TP
    state: PartitionState
    problems: tuple[str, ...] = ()


@dataclass(slots=True)
class BatchResult:
    id: str
    state: MoveState
    partitions: int
    completed: list[TP] = field(default_factory=list)
    cancelled: list[TP] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    estimated_seconds: float | None = None
    actual_seconds: float | None = None
    skipped: bool = False

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(state=self.state.value, completed=[str(tp) for tp in self.completed],
                   cancelled=[str(tp) for tp in self.cancelled])
        return out


@dataclass(frozen=True, slots=True)
class CancelOutcome:
    """What ``cancel`` did: only the plan's own moves are cancelled; others' are reported, never touched."""

    plan_hash: str
    cancelled: tuple[TP, ...]  # this plan's moves Kafka cancelled
    not_cancelled: dict[TP, str]  # this plan's moves Kafka did not cancel, with its error (they had just finished)
    left_alone: tuple[TP, ...]  # reassignments of the plan's partitions that someone else started
    restored_throttles_of: tuple[str, ...]  # the throttle records written back (batch ids, or "continuous")

    def to_dict(self) -> dict[str, Any]:
        return {"plan_hash": self.plan_hash, "cancelled": [str(tp) for tp in self.cancelled],
                "not_cancelled": {str(tp): e for tp, e in sorted(self.not_cancelled.items())},
                "left_alone": [str(tp) for tp in self.left_alone],
                "restored_throttles_of": list(self.restored_throttles_of)}


@dataclass(frozen=True, slots=True)
class StopReport:
    """What a run stopped by a signal did before exiting (executor/interrupt.py)."""

    signal: str  # SIGTERM, SIGINT
    unit: str  # "steps" (continuous) or "batches"
    done: int
    total: int
    in_flight: tuple[TP, ...] | None  # the plan's moves Kafka still runs; None: the cluster did not answer
    throttles_pending: tuple[str, ...] = ()  # throttle records not restored (a resource did not answer)

    def to_dict(self) -> dict[str, Any]:
        return {"signal": self.signal, "unit": self.unit, "done": self.done, "total": self.total,
                "in_flight": None if self.in_flight is None else [str(tp) for tp in self.in_flight],
                "throttles_pending": list(self.throttles_pending)}


class ElectionSettle(str, Enum):
    """Whether the metadata showed the requested elections before the final snapshot is taken."""

    SETTLED = "settled"  # every partition elected without error is led by its preferred leader
    NOT_SETTLED = "not_settled"  # some still showed another leader when the bound ran out
    NOTHING_TO_WAIT_FOR = "nothing_to_wait_for"  # no election requested, or every one failed


@dataclass(frozen=True, slots=True)
class ElectionsResult:
    requested: int
    chunks: int
    failed: dict[str, str]  # partition -> Kafka's error name
    settle: ElectionSettle
    # Elected partitions whose metadata still named another leader when the wait ended.
    not_led_by_preferred: tuple[str, ...] = ()
    waited_seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"requested": self.requested, "chunks": self.chunks, "failed": dict(self.failed),
                "settle": self.settle.value, "not_led_by_preferred": list(self.not_led_by_preferred),
                "waited_seconds": self.waited_seconds}


@dataclass(frozen=True, slots=True)
class Verification:
    """What ``verify`` found on the cluster: the plan is complete only when every partition landed (executor/moves.py,
    ``landing_problem``), none is still moving and no throttle of its runs is left set."""

    plan_hash: str
    partitions: int
    at_target: int
    problems: tuple[str, ...]  # one per partition not landed, naming why
    throttles_left: tuple[str, ...]  # throttle records of this plan's runs not yet restored
    batches: dict[str, str]  # batch id -> its state in the ledger
    not_led_by_preferred: tuple[TP, ...]  # elected partitions whose leader is not (yet) their preferred replica
    other_reassignments_in_flight: tuple[TP, ...]  # reassignments of partitions the plan does not move

    @property
    def complete(self) -> bool:
        return not self.problems and not self.throttles_left

    def to_dict(self) -> dict[str, Any]:
        return {"plan_hash": self.plan_hash, "status": "complete" if self.complete else "incomplete",
                "partitions": self.partitions, "at_target": self.at_target, "problems": list(self.problems),
                "throttles_left": list(self.throttles_left), "batches": dict(self.batches),
                "not_led_by_preferred": [str(tp) for tp in self.not_led_by_preferred],
                "other_reassignments_in_flight": [str(tp) for tp in self.other_reassignments_in_flight]}


@dataclass(frozen=True, slots=True)
class Preflight:
    """What ``preflight`` checked and did before a run: the batches left to run, and the throttle records of an
    interrupted run it restored."""

    batches_to_run: tuple[str, ...]
    restored_throttles_of: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"batches_to_run": list(self.batches_to_run), "restored_throttles_of": list(self.restored_throttles_of)}


@dataclass(frozen=True, slots=True)
class StepIssue:
    """A schedule step that ended without landing: which step, which partition, why."""

    step: int
    tp: TP
    why: str

    def __str__(self) -> str:
        return f"step {self.step} {self.tp}: {self.why}"


@dataclass(slots=True)
class ContinuousResult:
    state: MoveState  # FINISHED when every step finished; else FAILED
    steps: int
    finished: int = 0
    cancelled: list[StepIssue] = field(default_factory=list)
    failed: list[StepIssue] = field(default_factory=list)
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
        out.update(state=self.state.value, cancelled=[str(i) for i in self.cancelled], failed=[str(i) for i in self.failed],
                   cancelled_partitions=[str(i.tp) for i in self.cancelled],
                   failed_partitions=[str(i.tp) for i in self.failed],
                   estimate_miss=self.estimate_miss.value if self.estimate_miss is not None else None)
        return out


class RunStatus(str, Enum):
    """How ``execute`` ended. ``complete`` only when verify found every partition landed at that moment."""

    COMPLETE = "complete"
    INCOMPLETE = "incomplete"  # something was cancelled, or the cluster does not show every partition landed
    FAILED = "failed"  # a batch or step failed and the run stopped
    PAUSED = "paused"
    STOPPED = "stopped"
    WAITING_FOR_WINDOW = "waiting-for-window"


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """What one ``execute`` run did and what the cluster showed at its end: the one result the CLI reads."""

    plan_hash: str
    status: RunStatus
    mode: str  # "batches" or "continuous"
    batches: tuple[BatchResult, ...]
    continuous: ContinuousResult | None
    elections: ElectionsResult | None
    final_snapshot: Path | None
    hold: Hold | None
    verification: Verification | None
    already_complete: bool
    progress: dict[str, Any]  # Executor.progress_summary: batches done and remaining, ETA under the windows

    @property
    def cancelled(self) -> frozenset[TP]:
        """Every partition whose move this run cancelled, in batches or schedule steps."""
        steps = self.continuous.cancelled if self.continuous is not None else []
        return frozenset(tp for b in self.batches for tp in b.cancelled) | {i.tp for i in steps}

    @property
    def failed(self) -> frozenset[TP]:
        """Partitions of schedule steps that failed (a batch's failures are in its problems)."""
        return frozenset(i.tp for i in self.continuous.failed) if self.continuous is not None else frozenset()

    @property
    def waits(self) -> bool:
        """Held with something to wait for: an operator's resume or the next window's opening."""
        return self.hold is not None and (self.hold.waits_for_operator or self.hold.resume_at is not None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "plan_hash": self.plan_hash,
            "status": self.status.value,
            "mode": self.mode,
            "batches": [{**r.to_dict(), "predicted_seconds": r.estimated_seconds} for r in self.batches],
            "continuous": self.continuous.to_dict() if self.continuous is not None else None,
            "elections": self.elections.to_dict() if self.elections is not None else None,
            "final_snapshot": str(self.final_snapshot) if self.final_snapshot is not None else None,
            "hold": self.hold.to_dict() if self.hold is not None else None,
            "verification": self.verification.to_dict() if self.verification is not None else None,
            "already_complete": self.already_complete,
            "progress": self.progress,
        }
