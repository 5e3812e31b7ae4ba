"""The one owner of move states: what a batch, a schedule step and a run may become, and when a move landed.

Cruise Control's ``ExecutionTask`` checks every state change against a table of valid transitions;
so does this module. The ledger (``executor/ledger.py``) is the only writer of states, and it asks
``check_transition`` before every change: an impossible change (a finished move going back to
submitted, a step finishing that was never submitted) is refused and logged, never written.

``landing_problem`` is the one definition of "landed", used by execution (wave and continuous),
resume, verify and the report: the replicas are the target in its order, every target replica is
in the ISR, and the leader is one of them. Anything else is a move that has not landed, whatever
a ledger says.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from kafka_rebalance.cluster.admin import TP, PartitionView, ReplicaDir
from kafka_rebalance.errors import RebalanceError


class MoveState(StrEnum):
    """Where a batch (all of these), a schedule step or a run (pending, submitted onwards) stands.

    The values are what ledger.json holds; a StrEnum compares equal to them.
    """

    PENDING = "pending"
    THROTTLES_RECORDED = "throttles_recorded"
    THROTTLED = "throttled"
    SUBMITTED = "submitted"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"


class Kind(StrEnum):
    """What a state belongs to: each has its own table."""

    BATCH = "batch"  # a batch file: a wave in batch mode, a group of steps in continuous mode
    STEP = "step"  # one step of schedule.json (continuous mode)
    RUN = "run"  # the continuous run as a whole


PENDING, THROTTLES_RECORDED, THROTTLED, SUBMITTED, FINISHED, FAILED, CANCELLED = MoveState

# The changes each kind may make; a state not listed as a source has no way out. Re-runs are the
# reason unfinished states may go back to THROTTLES_RECORDED (a wave starts again) or SUBMITTED (a
# continuous run resubmits); FINISHED is final: a partition that left its target after it finished
# is reported (and the plan re-armed), never silently counted as moving again.
TRANSITIONS: dict[Kind, dict[MoveState, frozenset[MoveState]]] = {
    Kind.BATCH: {
        PENDING: frozenset({THROTTLES_RECORDED, SUBMITTED}),
        THROTTLES_RECORDED: frozenset({THROTTLED, SUBMITTED, FAILED, CANCELLED}),
        THROTTLED: frozenset({THROTTLES_RECORDED, SUBMITTED, FAILED, CANCELLED}),
        SUBMITTED: frozenset({THROTTLES_RECORDED, FINISHED, FAILED, CANCELLED}),
        # A batch whose moves landed while no executor watched (seen by a later run) finishes from here.
        FAILED: frozenset({THROTTLES_RECORDED, SUBMITTED, FINISHED, CANCELLED}),
        CANCELLED: frozenset({THROTTLES_RECORDED, SUBMITTED, FINISHED, FAILED}),
        FINISHED: frozenset(),
    },
    Kind.STEP: {
        PENDING: frozenset({SUBMITTED}),
        SUBMITTED: frozenset({FINISHED, FAILED, CANCELLED}),
        FAILED: frozenset({SUBMITTED}),
        CANCELLED: frozenset({SUBMITTED}),
        FINISHED: frozenset(),
    },
    Kind.RUN: {
        PENDING: frozenset({SUBMITTED}),
        SUBMITTED: frozenset({FINISHED, FAILED}),
        FAILED: frozenset({SUBMITTED}),
        FINISHED: frozenset(),
    },
}
# The states each kind can be in at all (a step is never "throttled": its throttles are the run's).
STATES_OF: dict[Kind, frozenset[MoveState]] = {kind: frozenset(table) for kind, table in TRANSITIONS.items()}


class IllegalTransition(RebalanceError):
    """A state change the table does not allow: a bug or a ledger edited by hand; nothing was written."""


def allowed(kind: Kind, current: MoveState, new: MoveState) -> bool:
    """Whether ``current`` may become ``new``; staying in the same state is no change and always allowed."""
    if current not in STATES_OF[kind] or new not in STATES_OF[kind]:
        return False
    return current == new or new in TRANSITIONS[kind][current]


def check_transition(kind: Kind, name: str, current: str, new: MoveState) -> MoveState:
    """``new`` if ``current`` may become it; else IllegalTransition naming the thing, both states and the ways out."""
    try:
        cur = MoveState(current)
    except ValueError:
        raise IllegalTransition(f"{kind.value} {name}: unknown state {current!r}") from None
    if not allowed(kind, cur, new):
        ways = ", ".join(sorted(TRANSITIONS[kind].get(cur, frozenset()))) or "none (it is final)"
        raise IllegalTransition(f"{kind.value} {name}: {cur.value} -> {new.value} is not a valid transition "
                                f"(from {cur.value}: {ways})")
    return new


def landing_problem(p: PartitionView | None, target: tuple[int, ...]) -> str | None:
    """Why a partition has not landed on ``target`` (None: it has). The one definition of a landed move."""
    if p is None:
        return "does not exist"
    if p.replicas != target:
        return f"replicas {list(p.replicas)}, target {list(target)}"
    missing = sorted(set(target) - set(p.isr))
    if missing:
        return f"ISR {list(p.isr)} lacks {missing}"
    if p.leader == -1:
        return "has no leader"
    if p.leader not in target:
        return f"led by broker {p.leader}, which is not a target replica"
    return None


def landed(p: PartitionView | None, target: tuple[int, ...]) -> bool:
    return landing_problem(p, target) is None


def dir_problem(found: Mapping[tuple[TP, int], ReplicaDir], tp: TP, named: Mapping[int, str]) -> str | None:
    """Why ``tp``'s replicas are not all in the log dirs the plan names for them (None: they are), from
    DescribeLogDirs (``found``). A replica still copying to its future dir has not landed."""
    for b, want in sorted(named.items()):
        r = found.get((tp, b))
        if r is None:
            return f"no log dir of broker {b} reports its replica (named: {want})"
        if r.path != want or r.future is not None:
            moving = f", moving to {r.future}" if r.future is not None else ""
            return f"its replica on broker {b} is in {r.path}{moving}, not in {want}"
    return None
