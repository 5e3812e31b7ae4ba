"""How the executor runs a plan (``ExecSettings``), each limit checked once, and which batches it runs."""

from __future__ import annotations

from dataclasses import dataclass

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.estimates import DEFAULT_MODE, MODES
from kafka_rebalance.executor.autothrottle import AutoThrottle
from kafka_rebalance.plan_manifest import Batch, Plan
from kafka_rebalance.userinput import finite_number, is_ascii_digits

ON_STALL = ("continue", "stop")
# MODES (estimates.py, beside the figure each mode is estimated at): continuous: reorder batches, then
# schedule.json through the dispatcher (executor/engine.py); batches: every batch as a wave, as Kafka's own
# tool would run the batch files (the same engine, with a barrier after each batch).
# Upper bounds of the time settings: past them a value is a typo (or inf), and a poll
# interval of nan/inf would sleep forever after throttles were already set.
MAX_POLL_INTERVAL = 3600.0
MAX_WAIT_SECONDS = 7 * 86400.0
# Real Kafka: the controller answers ListPartitionReassignments, brokers answer Metadata from a
# cache that follows the controller's log a moment later. A move the controller calls done can
# still show its old (or in-transition) replicas for a second or two, so whoever judges a move
# that left the reassignment list waits up to this long for the two views to agree.
METADATA_SETTLE_SECONDS = 15.0


class ExecutionRefused(RebalanceError):
    """The executor will not start: the plan or the cluster is not in the state the plan assumes."""


@dataclass(frozen=True, slots=True)
class ExecSettings:
    poll_interval: float = 10.0  # seconds on the admin's clock between progress polls
    stall_seconds: float = 300.0  # no byte of progress on a partition for this long: cancel it
    batch_timeout: float | None = None  # None: 3 x the plan's estimate + 10 minutes (6 h without an estimate)
    on_stall: str = "continue"  # after cancelling stalled moves: "continue" with the plan or "stop"
    additional: bool = False  # allow starting while other reassignments are in flight
    mode: str = DEFAULT_MODE
    auto_throttle: AutoThrottle | None = None  # --throttle auto: rates follow each broker's headroom (autothrottle.py)

    def __post_init__(self) -> None:
        if self.on_stall not in ON_STALL:
            raise RebalanceError(f"on_stall: expected one of {', '.join(ON_STALL)}, got {self.on_stall!r}")
        if self.mode not in MODES:
            raise RebalanceError(f"--mode: expected one of {', '.join(MODES)}, got {self.mode!r}")
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
