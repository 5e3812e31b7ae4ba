"""``report``: one static HTML page (inline SVG charts, readable offline) for a plan."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kafka_rebalance.cli._app import app, stderr
from kafka_rebalance.plan_dir import LEDGER_FILE, REPORT_FILE, check_output


@app.command()
def report(
    plan: Annotated[Path, typer.Option("--plan", help="Plan directory")],
    snapshot: Annotated[Path, typer.Option(help="The snapshot the plan was made from")],
    final_snapshot: Annotated[Path | None, typer.Option(help="Snapshot taken after execution")] = None,
    out: Annotated[Path | None, typer.Option(help="Output file (default PLAN/report.html)")] = None,
) -> None:
    """Write report.html: per-broker bars before/after with the threshold, batch timeline, bounds, validation."""
    from kafka_rebalance.report.html import ledger_times, write_report

    inputs = [("--snapshot", snapshot), ("--final-snapshot", final_snapshot), ("ledger", plan / LEDGER_FILE)]
    check_output(out if out is not None else plan / REPORT_FILE, "--out", may_write=(REPORT_FILE,), inputs=inputs)
    path = write_report(plan, snapshot, out_path=out, final_snapshot_path=final_snapshot, ledger=ledger_times(plan))
    stderr.print(f"wrote {path}")
