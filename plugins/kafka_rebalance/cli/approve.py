"""``approve``: a human's decision on a validated plan, recorded once in approval.json, bound to the plan hash."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from kafka_rebalance.cli._app import app, emit_json, stderr
from kafka_rebalance.options import DEFAULT_MAX_PLAN_AGE_HOURS, MAX_PLAN_AGE_LIMIT_HOURS
from kafka_rebalance.plan_approval import decide, describe


@app.command()
def approve(
    plan: Annotated[Path, typer.Option("--plan", help="Plan directory to approve (validated: validation/verdict.json passed)")],
    by: Annotated[str, typer.Option("--by", help="Who decides: recorded in approval.json")],
    note: Annotated[str, typer.Option("--note", help="Why, for the record")] = "",
    reject: Annotated[bool, typer.Option("--reject", help="Record a rejection instead: the plan never runs")] = False,
    max_plan_age: Annotated[float, typer.Option(
        "--max-plan-age", help="Refuse to approve a plan whose snapshot was gathered more than this many hours ago",
        min=0.001, max=MAX_PLAN_AGE_LIMIT_HOURS)] = DEFAULT_MAX_PLAN_AGE_HOURS,
) -> None:
    """Approve (or --reject) a plan so that execute may run it: shows what is approved, then records the
    decision in PLAN/approval.json, bound to the plan hash.

    Approval is refused for a plan that did not pass validation and for one whose snapshot is older than
    --max-plan-age. approval.json is written once: the same decision again changes nothing, a different one
    is refused.
    """
    decision = "rejected" if reject else "approved"
    # Every check runs before anything is printed or written: a refusal is one error line.
    facts, recorded = decide(plan, decision, by, note, max_age_seconds=max_plan_age * 3600, now=datetime.now(UTC))
    for line in describe(facts):
        stderr.print(line, markup=False, soft_wrap=True)
    if recorded.get("by") != by or recorded.get("decision") != decision:
        stderr.print(f"already {recorded['decision']} by {recorded.get('by')} at {recorded.get('at', 'an earlier run')}; "
                     "kept as it was", markup=False)
    else:
        stderr.print(f"{decision} plan {str(recorded['plan_hash'])[:16]} by {by}", markup=False)
    emit_json(recorded)
