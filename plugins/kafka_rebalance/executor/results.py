"""What the executor reports per partition and per batch: typed, turned into text only at the edges."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

from kafka_rebalance.cluster.admin import TP


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
