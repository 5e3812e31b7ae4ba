"""What the executor reports per partition and per batch: typed, turned into text only at the edges."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

from kafka_rebalance.cluster.admin import TP
from kafka_rebalance.executor.moves import MoveState


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
