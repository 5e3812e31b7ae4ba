"""Disk room while a plan runs: each broker's bytes at every step, not only after the plan.

Kafka copies a new replica before it deletes the old one: a broker holds a partition it receives from
the moment the copy starts, and frees one it sends only when that step has completed. The disk-capacity
goal holds every broker under its limit after the plan; a broker that both receives and sends goes over
it mid-plan if its arrivals run before its departures. The batcher (batching.py) and the continuous
schedule's ``Dispatcher`` (schedule.py, also the executor's) keep a ``DiskLedger`` and start a step only
when every destination has room for it: arrivals count from their start, departures from their end.

Each log dir of a broker with several is held the same way (``DiskRoom.dirs``): a replica arrives in the dir
its step names from the step's start and leaves the dir it was in (``Step.sources``) at the step's end; a
replica moving between the dirs of its broker (AlterReplicaLogDirs) is on the broker twice until then. A broker
or dir whose size is unknown has no limit and is not in the ledger. Without any limit the ledger is absent and
nothing changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kafka_rebalance.errors import PlanError
from kafka_rebalance.planner.steps import Step

SLACK_BYTES = 0.5  # whole bytes: a broker at its limit to the byte is within it


Dir = tuple[int, str]  # (broker id, log dir path)


@dataclass(frozen=True)
class DiskRoom:
    """Per broker id with a known limit: its partition bytes before the plan and the bytes of partition data
    it may hold (``state.disk_limits``); per log dir of a broker with several (``dirs``), the same: its bytes
    (as the log-dir batches leave them, in the continuous schedule) and its limit."""

    start: Mapping[int, float]
    limit: Mapping[int, float]
    dirs: Mapping[Dir, tuple[float, float]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, dict[str, int]]:
        """schedule.json's ``disk_room``: whole bytes per broker id (the executor's ledger starts from these)."""
        return {str(b): {"bytes": round(self.start[b]), "limit_bytes": round(self.limit[b])} for b in sorted(self.limit)}

    def dirs_dict(self) -> dict[str, dict[str, dict[str, int]]]:
        """schedule.json's ``dir_room``: whole bytes per broker id and dir (only where a broker has several)."""
        out: dict[str, dict[str, dict[str, int]]] = {}
        for (b, d), (start, limit) in sorted(self.dirs.items()):
            out.setdefault(str(b), {})[d] = {"bytes": round(start), "limit_bytes": round(limit)}
        return out

    @classmethod
    def of(cls, rows: Iterable[tuple[int, int, int]], dir_rows: Iterable[tuple[int, str, int, int]] = ()) -> DiskRoom | None:
        """From (broker id, bytes, limit) rows (``PlanSchedule.disk_room``) and (broker id, dir, bytes, limit) rows
        (``PlanSchedule.dir_room``); None when there are none."""
        rows = list(rows)
        if not rows:
            return None
        return cls({b: float(start) for b, start, _ in rows}, {b: float(limit) for b, _, limit in rows},
                   {(b, d): (float(start), float(limit)) for b, d, start, limit in dir_rows})

    def after(self, steps: Iterable[Step]) -> DiskRoom:
        """The room once ``steps`` (the log-dir batches, which run before any move) have completed."""
        ledger = DiskLedger(self)
        for s in steps:
            ledger.start(s)
            ledger.finish(s)
        return DiskRoom({b: ledger.load[b] for b in self.start}, self.limit,
                        {k: (ledger.dir_load[k], lim) for k, (_, lim) in self.dirs.items()})


class DiskLedger:
    """Each limited broker's and dir's bytes as steps start and end: an arrival counts from its step's start, a
    departure from its step's end (``finish``); a step that will not complete takes its arrivals back."""

    def __init__(self, room: DiskRoom) -> None:
        self.load = dict(room.start)
        self.limit = room.limit
        self.dir_load = {k: start for k, (start, _) in room.dirs.items()}
        self.dir_limit = {k: limit for k, (_, limit) in room.dirs.items()}
        self.dir_brokers = {b for b, _ in room.dirs}

    def blocker(self, s: Step) -> int | None:
        """The first broker of ``s`` without room for it now (on the broker or in the dir it names), else None."""
        full = self._full(s)
        return full[0] if full is not None else None

    def _full(self, s: Step) -> tuple[int, str | None] | None:
        """What ``blocker`` found: the broker, and the dir when the dir is what lacks room. A replica moving between
        the dirs of a broker whose dirs the ledger holds is held by its dirs alone: each within its own volume's
        limit is the broker within theirs (a broker above its limit at the start may so relieve a dir)."""
        for b in (*s.adds, *(b for b in s.within if b not in self.dir_brokers)):
            lim = self.limit.get(b)
            if lim is not None and self.load[b] + s.size > lim + SLACK_BYTES:
                return b, None
        for k in s.dir_arrivals() if self.dir_limit else ():
            lim = self.dir_limit.get(k)
            if lim is not None and self.dir_load[k] + s.size > lim + SLACK_BYTES:
                return k
        return None

    def start(self, s: Step) -> None:
        self._add(s, 1.0)

    def _add(self, s: Step, sign: float) -> None:
        for b in (*s.adds, *s.within):
            if b in self.limit:
                self.load[b] += sign * s.size
        for k in s.dir_arrivals() if self.dir_limit else ():
            if k in self.dir_limit:
                self.dir_load[k] += sign * s.size

    def finish(self, s: Step) -> None:
        for b in (*s.removes, *s.within):
            if b in self.limit:
                self.load[b] -= s.size
        for k in s.dir_departures() if self.dir_limit else ():
            if k in self.dir_limit:
                self.dir_load[k] -= s.size

    def abandon(self, s: Step) -> None:
        """A cancelled reassignment deletes the replicas it was adding; the ones it was to replace stay."""
        self._add(s, -1.0)

    def stuck(self, blocked: Iterable[Step]) -> PlanError:
        """The error when no remaining step fits: its room comes only from steps that wait themselves (full
        brokers swapping replicas)."""
        return PlanError(
            f"no order of the plan's moves keeps every disk under --max-disk-usage: {self.waiting(blocked)}. Their room "
            "comes only from moves that wait themselves (full brokers swapping replicas); raise --max-disk-usage or "
            "free space on one of them"
        )

    def waiting(self, blocked: Iterable[Step]) -> str:
        """Each blocked destination (broker, or log dir) with its bytes, its limit and the smallest replica it waits for."""
        waits: dict[tuple[int, str], list[Step]] = {}
        for s in blocked:
            full = self._full(s)
            if full is not None:
                waits.setdefault((full[0], full[1] or ""), []).append(s)
        parts = []
        for (b, d), steps in sorted(waits.items()):
            small = min(steps, key=lambda s: (s.size, s.topic, s.partition))
            held, lim = (self.load[b], self.limit[b]) if not d else (self.dir_load[(b, d)], self.dir_limit[(b, d)])
            where = f"broker {b}" if not d else f"broker {b} log dir {d}"
            parts.append(f"{where} holds {held:,.0f} of its {lim:,.0f} bytes and must first receive "
                         f"{small.topic}-{small.partition} ({small.size:,} bytes)")
        return "; ".join(parts[:5]) + (f"; and {len(parts) - 5} more brokers" if len(parts) > 5 else "")
