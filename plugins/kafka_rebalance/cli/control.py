"""``pause``, ``resume`` and ``stop``: an operator's requests to a plan's execution (kafka_rebalance.executor.control)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kafka_rebalance.cli._app import app, emit_json, stderr
from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.executor.control import Control, ControlAction, request
from kafka_rebalance.executor.progress import control_refusal

PlanDirOpt = Annotated[Path, typer.Option("--plan", help="Plan directory whose execution to control")]

_EFFECT = {
    ControlAction.PAUSE: "no new move starts; moves in flight finish; throttles are restored",
    ControlAction.STOP: "moves in flight are cancelled; no new move starts; throttles are restored",
    ControlAction.RESUME: "moves may start again (in the next allowed window)",
}


def _record(plan: Path, action: ControlAction) -> None:
    refusal = control_refusal(plan, action)
    if refusal is not None:
        raise RebalanceError(f"{plan}: {refusal}")
    control: Control = request(plan, action, via="cli")
    last = control.last
    assert last is not None
    stderr.print(f"{action.value} recorded for plan {str(control.plan_hash)[:12]} by {last.by} at {last.at}: {_EFFECT[action]}")
    emit_json({"plan_hash": control.plan_hash, "state": control.state.value, "request": last.as_json()})


@app.command()
def pause(plan: PlanDirOpt) -> None:
    """Pause the plan's execution: in-flight moves finish, no new ones start, throttles are restored."""
    _record(plan, ControlAction.PAUSE)


@app.command()
def resume(plan: PlanDirOpt) -> None:
    """Resume a paused or stopped execution (the next run or the deferred task continues from the ledger)."""
    _record(plan, ControlAction.RESUME)


@app.command()
def stop(plan: PlanDirOpt) -> None:
    """Stop the plan's execution: in-flight moves are cancelled, then as pause."""
    _record(plan, ControlAction.STOP)
