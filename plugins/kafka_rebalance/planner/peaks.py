"""Disk room while a plan runs: each broker's bytes at every step, not only after the plan.

Kafka copies a new replica before it deletes the old one: a broker holds a partition it receives from
the moment the copy starts, and frees one it sends only when that step has completed. The disk-capacity
goal holds every broker under its limit after the plan; a broker that both receives and sends goes over
it mid-plan if its arrivals run before its departures. The batcher (batching.py) and the continuous
schedule's ``Dispatcher`` (schedule.py, also the executor's) keep a ``DiskLedger`` and start a step only
when every destination has room for it: arrivals count from their start, departures from their end.

Brokers with several log dirs are also held per dir by the goal at their peak (every arrival, no
departure), so no order takes a dir over; a broker whose disk size is unknown has no limit and is not in
the ledger. Without any limit the ledger is absent and nothing changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kafka_rebalance.errors import PlanError
from kafka_rebalance.planner.steps import Step

SLACK_BYTES = 0.5  # whole bytes: a broker at its limit to the byte is within it


@dataclass(frozen=True)
class DiskRoom:
    """Per broker id with a known limit: its partition bytes before the plan and the bytes of partition data
    it may hold (``state.disk_limits``)."""

    start: Mapping[int, float]
    limit: Mapping[int, float]

    def to_dict(self) -> dict[str, dict[str, int]]:
        """schedule.json's ``disk_room``: whole bytes per broker id (the executor's ledger starts from these)."""
        return {str(b): {"bytes": round(self.start[b]), "limit_bytes": round(self.limit[b])} for b in sorted(self.limit)}

    @classmethod
    def of(cls, rows: Iterable[tuple[int, int, int]]) -> DiskRoom | None:
        """From (broker id, bytes, limit) rows (``PlanSchedule.disk_room``); None when there are none."""
        rows = list(rows)
        if not rows:
            return None
        return cls({b: float(start) for b, start, _ in rows}, {b: float(limit) for b, _, limit in rows})


class DiskLedger:
    """Each limited broker's bytes as steps start and end: an arrival counts from its step's start, a
    departure from its step's end (``finish``); a step that will not complete takes its arrivals back."""

    def __init__(self, room: DiskRoom) -> None:
        self.load = dict(room.start)
        self.limit = room.limit

    def blocker(self, s: Step) -> int | None:
        """The first destination of ``s`` without room for it now, else None."""
        for b in s.adds:
            lim = self.limit.get(b)
            if lim is not None and self.load[b] + s.size > lim + SLACK_BYTES:
                return b
        return None

    def start(self, s: Step) -> None:
        for b in s.adds:
            if b in self.limit:
                self.load[b] += s.size

    def finish(self, s: Step) -> None:
        for b in s.removes:
            if b in self.limit:
                self.load[b] -= s.size

    def abandon(self, s: Step) -> None:
        """A cancelled reassignment deletes the replicas it was adding; the ones it was to replace stay."""
        for b in s.adds:
            if b in self.limit:
                self.load[b] -= s.size

    def stuck(self, blocked: Iterable[Step]) -> PlanError:
        """The error when no remaining step fits: its room comes only from steps that wait themselves (full
        brokers swapping replicas)."""
        return PlanError(
            f"no order of the plan's moves keeps every disk under --max-disk-usage: {self.waiting(blocked)}. Their room "
            "comes only from moves that wait themselves (full brokers swapping replicas); raise --max-disk-usage or "
            "free space on one of them"
        )

    def waiting(self, blocked: Iterable[Step]) -> str:
        """Each blocked destination with its bytes, its limit and the smallest replica it waits for."""
        waits: dict[int, list[Step]] = {}
        for s in blocked:
            b = self.blocker(s)
            if b is not None:
                waits.setdefault(b, []).append(s)
        parts = []
        for b, steps in sorted(waits.items()):
            small = min(steps, key=lambda s: (s.size, s.topic, s.partition))
            parts.append(f"broker {b} holds {self.load[b]:,.0f} of its {self.limit[b]:,.0f} bytes and must first receive "
                         f"{small.topic}-{small.partition} ({small.size:,} bytes)")
        return "; ".join(parts[:5]) + (f"; and {len(parts) - 5} more brokers" if len(parts) > 5 else "")
