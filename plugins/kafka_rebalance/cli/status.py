"""``status``: where a plan's execution stands, read from its ledger (kafka_rebalance.executor.progress)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from kafka_rebalance.cli._app import app, emit_json
from kafka_rebalance.executor.progress import Progress, read_progress
from kafka_rebalance.report.progress_view import figures, headline
from kafka_rebalance.units import human_seconds


def render(p: Progress, now: datetime) -> list[str]:
    """The progress for a terminal, in the words of every other surface (report/progress_view.py); the only
    place that looks at the clock (how far off the ETA is now)."""
    lines = [f"plan {p.plan_hash[:16]}: {headline(p)}"]
    for f in figures(p):
        if f.key in ("state", "percent"):
            continue  # the headline says them
        value = f.value
        if f.key == "eta" and p.eta_at is not None:
            left = max(0.0, (datetime.fromisoformat(p.eta_at) - now).total_seconds())
            value += f", in {human_seconds(left)} from now"
        lines.append(f"  {f.label}: {value}")
    for b in p.batches:
        lines.append(f"  batch {b.id} ({b.kind}): {b.state.value}, {b.partitions_done}/{b.partitions} partitions"
                     + (f", {b.started_at} to {b.ended_at or '...'}" if b.started_at else "")
                     + (f", estimated {b.estimated_seconds:,.1f} s" if b.estimated_seconds is not None else ""))
    return lines


@app.command()
def status(
    plan: Annotated[Path, typer.Option("--plan", help="Plan directory (reads plan.json, ledger.json, control.json)")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the progress as JSON (fields: docs/KAFKA.md)")] = False,
) -> None:
    """Where the plan's execution stands: state, moves done/in flight/pending, bytes done and left, percent, and
    while running an ETA from the rate measured so far. Reads the plan directory only; never touches the cluster.
    """
    p = read_progress(plan)
    if as_json:
        emit_json(p.as_json())
        return
    print("\n".join(render(p, datetime.now(UTC))))
