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

import numpy as np
from numba import njit

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
        load, dir_load = ledger.load, ledger.dir_load
        return DiskRoom({b: load[b] for b in self.start}, self.limit,
                        {k: (dir_load[k], lim) for k, (_, lim) in self.dirs.items()})


class DiskLedger:
    """Each limited broker's and dir's bytes as steps start and end: an arrival counts from its step's start, a
    departure from its step's end (``finish``); a step that will not complete takes its arrivals back.

    The brokers and dirs are one array of resources, bytes and limits. ``entries`` says which of them a step reads
    and changes; the compiled functions below do the arithmetic, for the batcher (through the methods here) and for
    the continuous schedule's dispatcher (planner/dispatch.py) alike."""

    def __init__(self, room: DiskRoom) -> None:
        self.room = room
        brokers, dirs = sorted(room.limit), sorted(room.dirs)
        self.broker_res = {b: k for k, b in enumerate(brokers)}
        self.dir_res = {key: len(brokers) + k for k, key in enumerate(dirs)}
        self.keys: list[tuple[int, str | None]] = [(b, None) for b in brokers] + [(b, d) for b, d in dirs]
        self.res_load = np.array([float(room.start[b]) for b in brokers] + [float(room.dirs[k][0]) for k in dirs],
                                 dtype=np.float64)
        self.res_limit = np.array([float(room.limit[b]) for b in brokers] + [float(room.dirs[k][1]) for k in dirs],
                                  dtype=np.float64)
        self.dir_brokers = {b for b, _ in room.dirs}

    @property
    def load(self) -> dict[int, float]:
        """Each broker's bytes now (those without a limit as they started)."""
        return {**self.room.start, **{b: float(self.res_load[k]) for b, k in self.broker_res.items()}}

    @property
    def dir_load(self) -> dict[Dir, float]:
        return {key: float(self.res_load[k]) for key, k in self.dir_res.items()}

    def entries(self, s: Step) -> tuple[list[int], list[int], list[int]]:
        """The resources step ``s`` must have room on (in the order a blocker is named), those its start adds to
        (and its abandoning takes back from), and those its end frees. A replica moving between the dirs of a broker
        whose dirs the ledger holds is held by its dirs alone: each within its own volume's limit is the broker
        within theirs (a broker above its limit at the start may so relieve a dir)."""
        res = self.broker_res
        check = [res[b] for b in (*s.adds, *(b for b in s.within if b not in self.dir_brokers)) if b in res]
        add = [res[b] for b in (*s.adds, *s.within) if b in res]
        free = [res[b] for b in (*s.removes, *s.within) if b in res]
        if self.dir_res:
            arrive = [self.dir_res[k] for k in s.dir_arrivals() if k in self.dir_res]
            check += arrive
            add += arrive
            free += [self.dir_res[k] for k in s.dir_departures() if k in self.dir_res]
        return check, add, free

    def blocker(self, s: Step) -> int | None:
        """The first broker of ``s`` without room for it now (on the broker or in the dir it names), else None."""
        k = self._full(s)
        return self.keys[k][0] if k >= 0 else None

    def _full(self, s: Step) -> int:
        """What ``blocker`` found: the resource lacking room (-1: none)."""
        check, _, _ = self.entries(s)
        return ledger_full(self.res_load, self.res_limit, np.asarray(check, dtype=np.int64), float(s.size))

    def start(self, s: Step) -> None:
        ledger_add(self.res_load, np.asarray(self.entries(s)[1], dtype=np.int64), float(s.size))

    def finish(self, s: Step) -> None:
        ledger_add(self.res_load, np.asarray(self.entries(s)[2], dtype=np.int64), -float(s.size))

    def abandon(self, s: Step) -> None:
        """A cancelled reassignment deletes the replicas it was adding; the ones it was to replace stay."""
        ledger_add(self.res_load, np.asarray(self.entries(s)[1], dtype=np.int64), -float(s.size))

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
            k = self._full(s)
            if k >= 0:
                b, d = self.keys[k]
                waits.setdefault((b, d or ""), []).append(s)
        parts = []
        for (b, d), steps in sorted(waits.items()):
            small = min(steps, key=lambda s: (s.size, s.topic, s.partition))
            k = self.dir_res[(b, d)] if d else self.broker_res[b]
            held, lim = float(self.res_load[k]), float(self.res_limit[k])
            where = f"broker {b}" if not d else f"broker {b} log dir {d}"
            parts.append(f"{where} holds {held:,.0f} of its {lim:,.0f} bytes and must first receive "
                         f"{small.topic}-{small.partition} ({small.size:,} bytes)")
        return "; ".join(parts[:5]) + (f"; and {len(parts) - 5} more brokers" if len(parts) > 5 else "")


@njit(cache=True)
def ledger_full(load: np.ndarray, limit: np.ndarray, check: np.ndarray, size: float) -> int:
    """The first of the resources ``check`` without room for ``size`` more bytes (-1: every one has room)."""
    for r in check:
        if load[r] + size > limit[r] + SLACK_BYTES:
            return r
    return -1


@njit(cache=True)
def ledger_add(load: np.ndarray, res: np.ndarray, amount: float) -> None:
    for r in res:
        load[r] += amount
