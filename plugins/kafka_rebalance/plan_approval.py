"""Approving a plan: what the approver is shown, and the checks before the decision is written.

The decision itself is ``plan_dir.record_approval``'s (approval.json, written once, bound to the
plan hash); this module decides whether an approval may be recorded at all. A plan is approved
against the cluster as it was gathered, so its age is measured from the snapshot's own gather
time, ``snapshot.captured_at`` in plan.json (hashed with the plan; the gatherer stamps it), never
from when the plan or its files were written. A plan whose snapshot has no gather time cannot
show its age and is not approved: gather a fresh snapshot and re-plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kafka_rebalance.estimates import PlanEstimate, plan_estimate
from kafka_rebalance.plan_dir import (
    APPROVAL_FILE,
    PLAN_FILE,
    PlanDirError,
    read_approval,
    record_approval,
    require_validated,
    validation_status,
    verify_plan,
)
from kafka_rebalance.units import human_bytes, human_seconds


def leader_changes_text(summary: Mapping[str, Any]) -> str:
    """", N leader changes" for a summary that counts them (plans made before it did show nothing)."""
    n = summary.get("leader_changes")
    return f", {int(n):,} leader changes" if isinstance(n, int) else ""


@dataclass(frozen=True, slots=True)
class PlanFacts:
    """What an approver is shown about a plan, read from its verified plan.json and verdict."""

    plan_hash: str
    cluster_id: str
    validation: str  # passed | failed | pending | unreadable
    snapshot_captured_at: str | None
    snapshot_age_seconds: float | None  # None: the snapshot records no (readable) gather time
    replica_moves: int
    bytes_moved: int
    leader_elections: int
    batches: int
    estimated_seconds: float | None
    estimate_of: str  # the schedule the estimate is for: continuous (schedule.json) or batches
    other_estimated_seconds: float | None  # the other mode's figure, labelled as such
    other_estimate_of: str
    goals_reached: tuple[str, ...]
    goals_missed: tuple[str, ...]
    leader_changes: int | None = None  # None: a plan made before the summary counted them


def captured_at(manifest: Mapping[str, Any]) -> datetime | None:
    """The snapshot's gather time recorded in plan.json, None when absent or not an ISO-8601 time."""
    snapshot = manifest.get("snapshot")
    raw = snapshot.get("captured_at") if isinstance(snapshot, Mapping) else None
    if not isinstance(raw, str):
        return None
    try:
        when = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def plan_facts(plan_dir: Path, now: datetime, mode: str | None = None) -> PlanFacts:
    """The facts of the plan in ``plan_dir`` (proved unchanged first), its snapshot's age taken at ``now``;
    ``mode``: the executor mode configured for it (None: execute's default), whose estimate is the headline."""
    manifest, plan_hash = verify_plan(plan_dir)
    raw_summary = manifest.get("summary")
    summary: Mapping[str, Any] = raw_summary if isinstance(raw_summary, Mapping) else {}
    batches = [b for b in manifest.get("batches") or [] if isinstance(b, Mapping)]
    when = captured_at(manifest)
    estimate = plan_estimate(manifest, mode)
    goals = [g for g in summary.get("goals") or [] if isinstance(g, Mapping)]
    raw_snapshot = manifest.get("snapshot")
    snapshot: Mapping[str, Any] = raw_snapshot if isinstance(raw_snapshot, Mapping) else {}
    return PlanFacts(
        plan_hash=plan_hash,
        cluster_id=str(manifest.get("cluster_id", "")),
        validation=validation_status(plan_dir),
        snapshot_captured_at=snapshot.get("captured_at") if isinstance(snapshot.get("captured_at"), str) else None,
        snapshot_age_seconds=(now - when).total_seconds() if when is not None else None,
        replica_moves=int(summary.get("replica_moves", sum(int(b.get("replica_moves", 0)) for b in batches))),
        bytes_moved=int(summary.get("bytes_moved", sum(int(b.get("bytes", 0)) for b in batches))),
        leader_elections=int(summary.get("leader_elections", 0)),
        leader_changes=summary.get("leader_changes") if isinstance(summary.get("leader_changes"), int) else None,
        batches=len(batches),
        estimated_seconds=estimate.seconds,
        estimate_of=estimate.mode,
        other_estimated_seconds=estimate.other_seconds,
        other_estimate_of=estimate.other_mode,
        goals_reached=tuple(str(g.get("name")) for g in goals if g.get("reached")),
        goals_missed=tuple(str(g.get("name")) for g in goals if not g.get("reached")),
    )


# Clocks of the gathering host and this one may differ a little; a snapshot gathered further in the future
# than this was stamped by a wrong clock (or by hand), and its age says nothing.
MAX_CLOCK_SKEW_SECONDS = 300.0


def age_problem(facts: PlanFacts, max_age_seconds: float) -> str | None:
    """Why the plan is too old (or its gather time unusable) to approve or start, None when it is young enough."""
    if facts.snapshot_age_seconds is not None and facts.snapshot_age_seconds < -MAX_CLOCK_SKEW_SECONDS:
        return (f"{PLAN_FILE}: snapshot.captured_at: {facts.snapshot_captured_at} is "
                f"{human_seconds(-facts.snapshot_age_seconds)} in the future (more than the "
                f"{human_seconds(MAX_CLOCK_SKEW_SECONDS)} of clock skew allowed), so the plan's age is unknown; "
                "check the gathering host's clock, gather a fresh snapshot and re-plan")
    if facts.snapshot_age_seconds is None:
        got = "" if facts.snapshot_captured_at is None else f" (it holds {facts.snapshot_captured_at!r})"
        return (f"{PLAN_FILE}: snapshot.captured_at: the snapshot records no gather time{got}, so the plan's age is "
                "unknown; gather a fresh snapshot and re-plan")
    if facts.snapshot_age_seconds > max_age_seconds:
        return (f"the plan's snapshot was gathered {human_seconds(facts.snapshot_age_seconds)} ago "
                f"(captured_at {facts.snapshot_captured_at}), over the maximum plan age of {human_seconds(max_age_seconds)}; "
                "the cluster has likely changed since: gather a fresh snapshot and re-plan")
    return None


def describe(facts: PlanFacts) -> list[str]:
    """The plan's facts as lines for a terminal (approve prints them before recording the decision)."""
    age = "unknown (no gather time)" if facts.snapshot_age_seconds is None else \
        f"{human_seconds(facts.snapshot_age_seconds)} (gathered {facts.snapshot_captured_at})"
    goals = ", ".join(facts.goals_reached) or "none"
    missed = f"; NOT reached: {', '.join(facts.goals_missed)}" if facts.goals_missed else ""
    estimate = PlanEstimate(facts.estimate_of, facts.estimated_seconds, facts.other_estimate_of,
                            facts.other_estimated_seconds).text()
    return [
        f"plan {facts.plan_hash} for cluster {facts.cluster_id}",
        f"  validation: {facts.validation}",
        f"  snapshot age: {age}",
        f"  {facts.replica_moves} replica moves in {facts.batches} batches, {human_bytes(facts.bytes_moved)} to copy, "
        f"{facts.leader_elections} leader elections{leader_changes_text({'leader_changes': facts.leader_changes})}",
        f"  estimate: {estimate}",
        f"  goals reached: {goals}{missed}",
    ]


def decide(plan_dir: Path, decision: str, by: str, note: str, *, max_age_seconds: float | None,
           now: datetime, details: Mapping[str, Any] | None = None) -> tuple[PlanFacts, dict[str, Any]]:
    """Record ``decision`` (approved | rejected) on the plan in ``plan_dir``; return the facts it was taken on
    and what approval.json holds.

    An approval is refused for a plan that did not pass validation for this very hash, and for a
    plan whose snapshot is older than ``max_age_seconds`` (or of unknown age). ``max_age_seconds`` None: a
    simulated cluster, whose clock is virtual and whose age means nothing. A rejection is always
    recorded: refusing to run a plan needs no proof that it could run. ``details``: more of what the decision
    was taken on, kept in approval.json (an approval policy's rule and the figures it judged).
    """
    if decision not in ("approved", "rejected"):
        raise ValueError(f"decision must be approved or rejected, got {decision!r}")
    if not by.strip():
        raise PlanDirError("--by: name who decides (it is recorded in approval.json)")
    plan_dir = Path(plan_dir)
    facts = plan_facts(plan_dir, now)
    if decision == "approved":
        require_validated(plan_dir, facts.plan_hash)
        problem = age_problem(facts, max_age_seconds) if max_age_seconds is not None else None
        if problem is not None:
            raise PlanDirError(f"{plan_dir}: not approved: {problem}")
    record_approval(plan_dir, decision, by, note, details={
        **(details or {}),
        "at": now.astimezone(UTC).isoformat(timespec="seconds"),
        "snapshot_captured_at": facts.snapshot_captured_at,
        "snapshot_age_seconds": None if facts.snapshot_age_seconds is None else round(facts.snapshot_age_seconds),
        "max_plan_age_seconds": None if max_age_seconds is None else round(max_age_seconds),
    })
    recorded = read_approval(plan_dir)
    assert recorded is not None, f"{plan_dir / APPROVAL_FILE} was just written"
    return facts, recorded


def start_problem(plan_dir: Path, now: datetime) -> str | None:
    """Why an approved plan may not start executing now: its snapshot aged past the limit it was approved
    under (or its gather time is unusable). Checked when execution starts, not while a started run resumes."""
    approval = read_approval(plan_dir) or {}
    limit = approval.get("max_plan_age_seconds")
    if limit is None:
        # Written before approvals recorded their limit (or by hand, which no check here can stop: signed
        # approvals are what would). Its approval was checked as it was then.
        return None
    if not isinstance(limit, (int, float)) or isinstance(limit, bool) or limit <= 0:
        return (f"{Path(plan_dir) / APPROVAL_FILE}: max_plan_age_seconds: {limit!r} is no plan age limit; "
                "approve the plan again (kafka-rebalance approve)")
    problem = age_problem(plan_facts(plan_dir, now), float(limit))
    return None if problem is None else f"{plan_dir}: not started: {problem}"
