"""``execute``, ``verify`` and ``cancel``: run an approved plan directory against a cluster or the simulator."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from kafka_rebalance.cli._app import app, emit_json, fail, stderr
from kafka_rebalance.kafka.admin import ClusterAdmin
from kafka_rebalance.kafka.executor import ExecSettings, Executor, parse_batch_selection, rearm as rearm_plan
from kafka_rebalance.plan_dir import FINAL_SNAPSHOT_FILES, LEDGER_FILE, SIM_STATE_FILE, check_output
from kafka_rebalance.plan_manifest import Plan, load_plan
from kafka_rebalance.snapshot import load_snapshot
from kafka_rebalance.userinput import check_output_file

SIM_STATE = SIM_STATE_FILE
MAX_CONNECT_TIMEOUT = 3600.0

PlanOpt = Annotated[Path, typer.Option("--plan", help="Plan directory (plan.json, batches/, election.json)")]
BootstrapOpt = Annotated[Optional[str], typer.Option("--bootstrap-server", help="HOST:PORT of a broker")]
CommandConfigOpt = Annotated[Optional[Path], typer.Option("--command-config", help="Client properties file (security settings)")]
SimulateOpt = Annotated[
    Optional[Path],
    typer.Option("--simulate", help=f"Snapshot to simulate; the simulated cluster persists in DIR/{SIM_STATE}"),
]


ConnectTimeoutOpt = Annotated[
    float, typer.Option(help="Seconds to wait for the first broker connection", min=0.001, max=MAX_CONNECT_TIMEOUT)
]


def open_admin(plan_dir: Path, bootstrap: str | None, command_config: Path | None, simulate: Path | None,
               connect_timeout: float = 15.0) -> ClusterAdmin:
    """The cluster named on the command line: exactly one of --bootstrap-server or --simulate."""
    if (bootstrap is None) == (simulate is None):
        fail("give exactly one of --bootstrap-server HOST:PORT or --simulate SNAPSHOT")
    if simulate is not None:
        if command_config is not None:
            fail("--command-config applies to --bootstrap-server, not --simulate")
        from kafka_rebalance.kafka.simulator import SimAdmin

        return SimAdmin.open(load_snapshot(simulate), plan_dir / SIM_STATE)
    from kafka_rebalance.kafka.connection import ConnectionSettings, settings_from_properties
    from kafka_rebalance.kafka.live import LiveAdmin

    assert bootstrap is not None
    settings = settings_from_properties(command_config, bootstrap) if command_config else ConnectionSettings(bootstrap, source="--bootstrap-server")
    return LiveAdmin(settings.with_timeouts(bootstrap_timeout_ms=int(connect_timeout * 1000)), quiet=True)


def _snapshot_inputs(plan: Plan, simulate: Path | None) -> list[tuple[str, Path | None]]:
    """Snapshots an execute run was given or planned from: never overwritten by its output."""
    planned = (plan.manifest.get("snapshot") or {}).get("path")
    return [("--simulate snapshot", simulate),
            ("snapshot the plan was made from", Path(planned) if isinstance(planned, str) and planned else None)]


def _progress(line: str) -> None:
    stderr.print(line, markup=False, soft_wrap=True)


@app.command()
def execute(
    plan: PlanOpt,
    bootstrap_server: BootstrapOpt = None,
    command_config: CommandConfigOpt = None,
    simulate: SimulateOpt = None,
    connect_timeout: ConnectTimeoutOpt = 15.0,
    final_snapshot: Annotated[Optional[Path], typer.Option(help="Write the cluster after execution here (snapshot format)")] = None,
    batches: Annotated[Optional[str], typer.Option(help="Batches to run, e.g. 1-3 (default: all not yet finished)")] = None,
    additional: Annotated[bool, typer.Option("--additional", help="Start even while other reassignments are in flight")] = False,
    poll_interval: Annotated[float, typer.Option(help="Seconds between progress polls")] = 10.0,
    stall_seconds: Annotated[float, typer.Option(help="Cancel a move that made no progress for this long")] = 300.0,
    batch_timeout: Annotated[Optional[float], typer.Option(help="Seconds per batch before unfinished moves are cancelled")] = None,
    on_stall: Annotated[str, typer.Option(help="After cancelling a stalled move: continue or stop")] = "continue",
    rearm: Annotated[bool, typer.Option("--rearm", help="Run the plan afresh: archive its ledger as ledger.N.json "
                                        "(kept, with who and when) after restoring throttles it left set")] = False,
    rearm_by: Annotated[Optional[str], typer.Option(help="Who re-arms, for the audit record (default: the OS user)")] = None,
) -> None:
    """Execute an approved plan: per batch throttle, submit, poll, verify, restore throttles; then elect leaders."""
    # Every flag is checked before the plan is loaded or the cluster touched.
    settings = ExecSettings(poll_interval, stall_seconds, batch_timeout, on_stall, additional)
    if final_snapshot is not None:
        check_output_file(final_snapshot, "--final-snapshot")
    the_plan = load_plan(plan)
    if final_snapshot is not None:
        check_output(final_snapshot, "--final-snapshot", may_write=FINAL_SNAPSHOT_FILES,
                     inputs=_snapshot_inputs(the_plan, simulate))
    selection = parse_batch_selection(batches, the_plan)
    admin = open_admin(plan, bootstrap_server, command_config, simulate, connect_timeout)
    try:
        if rearm:
            rearm_plan(the_plan, admin, by=rearm_by, progress=_progress)
        report = Executor(the_plan, admin, settings, _progress).run(selection, final_snapshot)
    finally:
        admin.close()
    emit_json(report)
    for b in report["batches"]:
        _progress(f"batch {b['id']}: predicted {b['predicted_seconds']}s, actual {b['actual_seconds']}s, {b['state']}")
    if report["status"] != "complete":
        print(f"error: execution {report['status']}: see the batch report above and {plan / LEDGER_FILE}", file=sys.stderr)
        raise typer.Exit(1)


@app.command()
def verify(
    plan: PlanOpt,
    bootstrap_server: BootstrapOpt = None,
    command_config: CommandConfigOpt = None,
    simulate: SimulateOpt = None,
    connect_timeout: ConnectTimeoutOpt = 15.0,
) -> None:
    """Check every plan partition is at its target with a full ISR and a leader, and no throttle is left."""
    the_plan = load_plan(plan)
    admin = open_admin(plan, bootstrap_server, command_config, simulate, connect_timeout)
    try:
        report = Executor(the_plan, admin, ExecSettings(), _progress).verify()
    finally:
        admin.close()
    emit_json(report)
    if report["status"] != "complete":
        raise typer.Exit(1)


@app.command()
def cancel(
    plan: PlanOpt,
    bootstrap_server: BootstrapOpt = None,
    command_config: CommandConfigOpt = None,
    simulate: SimulateOpt = None,
    connect_timeout: ConnectTimeoutOpt = 15.0,
) -> None:
    """Abort cleanly: cancel the plan's in-flight moves and restore the recorded throttle values."""
    the_plan = load_plan(plan, require_passed=False)
    admin = open_admin(plan, bootstrap_server, command_config, simulate, connect_timeout)
    try:
        report = Executor(the_plan, admin, ExecSettings(), _progress).cancel()
    finally:
        admin.close()
    emit_json(report)
