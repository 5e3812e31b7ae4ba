"""``report``: one static HTML page (inline SVG charts, readable offline) for a plan."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from kafka_rebalance.cli._app import app, stderr


def ledger_times(plan_dir: Path) -> dict[str, dict[str, float]] | None:
    """Batch start/finish on the executor's clock, from DIR/ledger.json when the plan ran."""
    path = plan_dir / "ledger.json"
    if not path.exists():
        return None
    batches = json.loads(path.read_text(encoding="utf-8")).get("batches", {})
    return {
        bid: {"started_at": e["started_clock"], "finished_at": e["started_clock"] + e["actual_seconds"]}
        for bid, e in batches.items()
        if e.get("started_clock") is not None and e.get("actual_seconds") is not None
    }


@app.command()
def report(
    plan: Annotated[Path, typer.Option("--plan", help="Plan directory")],
    snapshot: Annotated[Path, typer.Option(help="The snapshot the plan was made from")],
    final_snapshot: Annotated[Optional[Path], typer.Option(help="Snapshot taken after execution")] = None,
    out: Annotated[Optional[Path], typer.Option(help="Output file (default PLAN/report.html)")] = None,
) -> None:
    """Write report.html: per-broker bars before/after with the threshold, batch timeline, bounds, validation."""
    from kafka_rebalance.report import write_report

    path = write_report(plan, snapshot, out_path=out, final_snapshot_path=final_snapshot, ledger=ledger_times(plan))
    stderr.print(f"wrote {path}")
