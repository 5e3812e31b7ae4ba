"""``status``: where a plan's execution stands, read from its ledger (kafka_rebalance.executor.progress)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from kafka_rebalance.cli._app import app, emit_json
from kafka_rebalance.executor.control import read_control
from kafka_rebalance.executor.ledger import Ledger
from kafka_rebalance.executor.progress import ExecState, Progress, progress
from kafka_rebalance.plan_dir import LEDGER_FILE
from kafka_rebalance.plan_manifest import load_plan
from kafka_rebalance.units import human_bytes, human_rate, human_seconds


def render(p: Progress, now: datetime) -> list[str]:
    """The progress for a terminal; the only place status looks at the clock (how far off the ETA is now)."""
    lines = [
        f"plan {p.plan_hash[:16]}: {p.state.value}, {p.percent_bytes:.1f} % of bytes",
        f"  moves: {p.moves_done} done, {p.moves_in_flight} in flight, {p.moves_pending} pending"
        + (f", {p.moves_failed} failed" if p.moves_failed else "") + f" (of {p.moves_total})",
        f"  bytes: {human_bytes(p.bytes_done)} done, {human_bytes(p.bytes_left)} left (of {human_bytes(p.bytes_total)})",
    ]
    if p.elections_total:
        lines.append(f"  leader elections: {p.elections_requested}/{p.elections_total} requested")
    if p.rate_bytes_per_sec is not None:
        lines.append(f"  measured rate: {human_rate(p.rate_bytes_per_sec)}")
    if p.state is ExecState.RUNNING:
        if p.eta_at is None:
            lines.append("  ETA: unknown until a move of this run finishes")
        else:
            left = max(0.0, (datetime.fromisoformat(p.eta_at) - now).total_seconds())
            lines.append(f"  ETA: {p.eta_at} (in {human_seconds(left)}, at the measured rate)")
    if p.updated_at is not None:
        lines.append(f"  ledger last updated {p.updated_at}")
    return lines


@app.command()
def status(
    plan: Annotated[Path, typer.Option("--plan", help="Plan directory (reads plan.json, ledger.json, control.json)")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the progress as JSON (fields: docs/KAFKA.md)")] = False,
) -> None:
    """Where the plan's execution stands: state, moves done/in flight/pending, bytes done and left, percent, and
    while running an ETA from the rate measured so far. Reads the plan directory only; never touches the cluster.
    """
    the_plan = load_plan(plan, require_passed=False)
    ledger = Ledger.open(plan, the_plan.plan_hash).data if (plan / LEDGER_FILE).exists() else None
    p = progress(the_plan, ledger, read_control(plan, the_plan.plan_hash))
    if as_json:
        emit_json(p.as_json())
        return
    print("\n".join(render(p, datetime.now(UTC))))
