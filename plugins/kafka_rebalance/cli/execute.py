"""``execute``, ``verify`` and ``cancel``: run an approved plan directory against a cluster or the simulator."""

from __future__ import annotations

import sys
import time
from contextlib import closing
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated

import typer

from kafka_rebalance.cli._app import app, emit_json, fail, stderr
from kafka_rebalance.cli.meter import follow
from kafka_rebalance.cluster.admin import ClusterAdmin
from kafka_rebalance.executor.autothrottle import AUTO, THROTTLE_MODES, auto_throttle
from kafka_rebalance.executor.control import RunState, read_control
from kafka_rebalance.executor.executor import Executor, acting_on, unchecked_identity_note
from kafka_rebalance.executor.gate import ExecutionGate, Hold
from kafka_rebalance.executor.interrupt import StopRequest, StopSignal, stop_message, stop_on_signals
from kafka_rebalance.executor.progress import read_progress
from kafka_rebalance.executor.rearm import rearm as rearm_plan
from kafka_rebalance.executor.results import RunStatus
from kafka_rebalance.executor.settings import MAX_WAIT_SECONDS, ExecSettings, parse_batch_selection
from kafka_rebalance.executor.windows import WindowPolicy, policy
from kafka_rebalance.orchestration.clusters_config import clusters_file, load_clusters
from kafka_rebalance.plan_dir import FINAL_SNAPSHOT_FILES, LEDGER_FILE, SIM_STATE_FILE, PlanDirError, check_output
from kafka_rebalance.plan_manifest import Plan, load_plan
from kafka_rebalance.snapshot import load_snapshot
from kafka_rebalance.snapshot.capacity import read_capacity_file
from kafka_rebalance.units import parse_bytes
from kafka_rebalance.userinput import check_output_file

SIM_STATE = SIM_STATE_FILE
EXIT_HELD = 3
MAX_CONNECT_TIMEOUT = 3600.0

PlanOpt = Annotated[Path, typer.Option("--plan", help="Plan directory (plan.json, batches/, election.json)")]
BootstrapOpt = Annotated[str | None, typer.Option("--bootstrap-server", help="HOST:PORT of a broker")]
CommandConfigOpt = Annotated[Path | None, typer.Option("--command-config", help="Client properties file (security settings)")]
SimulateOpt = Annotated[
    Path | None,
    typer.Option("--simulate", help=f"Snapshot to simulate; the simulated cluster persists in DIR/{SIM_STATE}"),
]


AllowUnidentifiedOpt = Annotated[bool, typer.Option(
    "--allow-unidentified-cluster", help="Act although the plan records no Kafka cluster id, so the cluster cannot be "
    "checked to be the plan's (recorded in the ledger)")]
TakeOverOpt = Annotated[bool, typer.Option(
    "--take-over-lease", help="Take the plan over from a run on another host that is known to be gone")]
ConnectTimeoutOpt = Annotated[
    float, typer.Option(help="Seconds to wait for the first broker connection", min=0.001, max=MAX_CONNECT_TIMEOUT)
]


def _identity_note(plan: Plan) -> None:
    note = unchecked_identity_note(plan)
    if note is not None:
        _progress(note)


def admin_from_flags(plan_dir: Path, bootstrap: str | None, command_config: Path | None, simulate: Path | None,
                     connect_timeout: float = 15.0) -> ClusterAdmin:
    """The cluster named on the command line: exactly one of --bootstrap-server or --simulate."""
    if (bootstrap is None) == (simulate is None):
        fail("give exactly one of --bootstrap-server HOST:PORT or --simulate SNAPSHOT")
    if simulate is not None:
        if command_config is not None:
            fail("--command-config applies to --bootstrap-server, not --simulate")
        from kafka_rebalance.cluster.sim_admin import SimAdmin

        return SimAdmin.open(load_snapshot(simulate), plan_dir / SIM_STATE)
    from kafka_rebalance.cluster.connection import ConnectionSettings, settings_from_properties
    from kafka_rebalance.cluster.live import LiveAdmin

    assert bootstrap is not None
    settings = settings_from_properties(command_config, bootstrap) if command_config else ConnectionSettings(bootstrap, source="--bootstrap-server")
    return LiveAdmin(settings.with_timeouts(bootstrap_timeout_ms=int(connect_timeout * 1000)), quiet=True)


def _snapshot_inputs(plan: Plan, simulate: Path | None) -> list[tuple[str, Path | None]]:
    """Snapshots an execute run was given or planned from: never overwritten by its output."""
    planned = (plan.manifest.get("snapshot") or {}).get("path")
    return [("--simulate snapshot", simulate),
            ("snapshot the plan was made from", Path(planned) if isinstance(planned, str) and planned else None)]


def _bytes_done(plan_dir: Path, plan: Plan) -> float:
    """Bytes the ledger records as copied, for the bar; an unreadable ledger shows as none (the run itself says why),
    since drawing the bar must never stop a run."""
    try:
        return float(read_progress(plan_dir, plan).bytes_done)
    except PlanDirError:
        return 0.0


def _progress(line: str) -> None:
    stderr.print(line, markup=False, soft_wrap=True)


def window_policy_of(window: str, cluster_id: str | None) -> WindowPolicy:
    """``--window``: now, an ISO interval, or ``configured``: the clusters file's windows for the plan's cluster."""
    configured: tuple = ()
    if window == "configured" and cluster_id is not None:
        cfg = load_clusters(clusters_file())
        cluster = next((c for c in cfg.clusters if c.cluster_id == cluster_id), None)
        if cluster is None:
            fail(f"--window configured: cluster {cluster_id} (the plan's) is not listed in {cfg.path}")
        configured = cluster.configured_windows()
    return policy(window, configured, field="--window")


def _wait_for(gate: ExecutionGate, hold: Hold, poll_interval: float, stop: StopRequest) -> None:
    """Sleep until the window opens, or until the plan is resumed (polling its control file); a signal ends the wait."""
    if hold.waits_for_operator:
        _progress(f"waiting for a resume of plan {gate.plan_hash[:12]} (kafka-rebalance resume --plan {gate.plan_dir})")
        while read_control(gate.plan_dir, gate.plan_hash).state is not RunState.RUNNING:
            stop.sleep(time.sleep, poll_interval)
        return
    assert hold.resume_at is not None  # RunOutcome.waits: a window hold waits only for a known opening
    _progress(f"waiting until the window opens at {hold.resume_at.isoformat(timespec='seconds')}")
    while (left := (hold.resume_at - datetime.now(UTC)).total_seconds()) > 0:
        stop.sleep(time.sleep, min(left, poll_interval))


@app.command()
def execute(
    plan: PlanOpt,
    bootstrap_server: BootstrapOpt = None,
    command_config: CommandConfigOpt = None,
    simulate: SimulateOpt = None,
    connect_timeout: ConnectTimeoutOpt = 15.0,
    final_snapshot: Annotated[Path | None, typer.Option(help="Write the cluster after execution here (snapshot format)")] = None,
    batches: Annotated[str | None, typer.Option(help="Batches to run, e.g. 1-3 (default: all not yet finished)")] = None,
    additional: Annotated[bool, typer.Option("--additional", help="Start even while other reassignments are in flight")] = False,
    poll_interval: Annotated[float, typer.Option(help="Longest wait between progress polls (continuous mode polls "
                                                 "sooner when a move is due to land)")] = 10.0,
    stall_seconds: Annotated[float, typer.Option(help="Cancel a move that made no progress for this long")] = 300.0,
    batch_timeout: Annotated[float | None, typer.Option(help="Seconds per batch (continuous mode: per move) before "
                                                           "unfinished moves are cancelled")] = None,
    on_stall: Annotated[str, typer.Option(help="After cancelling a stalled move: continue or stop")] = "continue",
    mode: Annotated[str | None, typer.Option(help="continuous (default): moves start as soon as capacity frees, "
                                                "following schedule.json; batches: one wave per batch file (default "
                                                "when --batches is given)")] = None,
    rearm: Annotated[bool, typer.Option("--rearm", help="Run the plan afresh: archive its ledger as ledger.N.json "
                                        "(kept, with who and when) after restoring throttles it left set")] = False,
    rearm_by: Annotated[str | None, typer.Option(help="Who re-arms, for the audit record (default: the OS user)")] = None,
    window: Annotated[str, typer.Option(help="When batches may start: now, configured (the plan's cluster's windows in "
                                        "the clusters file) or an ISO interval START/END or START/DURATION")] = "now",
    window_margin: Annotated[float, typer.Option(help="A batch starts only if its estimate ends this many seconds "
                                                 "before the window closes", min=0, max=86400)] = 300.0,
    window_grace: Annotated[float, typer.Option(help="Moves still running this many seconds after the window closed "
                                                "are cancelled", min=0, max=MAX_WAIT_SECONDS)] = 600.0,
    wait: Annotated[bool, typer.Option("--wait", help="When held (paused, stopped, outside the window), wait and go on "
                                       "instead of exiting with code 3")] = False,
    allow_unidentified_cluster: AllowUnidentifiedOpt = False,
    take_over_lease: TakeOverOpt = False,
    throttle: Annotated[str, typer.Option(help="plan: the plan's throttle, fixed, as approved; auto: each broker's "
                                          "replication rate follows its network capacity less its live traffic, "
                                          "re-read every poll, within --throttle-floor..--throttle-ceiling")] = "plan",
    throttle_floor: Annotated[str | None, typer.Option(help="--throttle auto: the lowest rate per broker, e.g. 5MiB/s "
                                                       "(default: a tenth of the ceiling)")] = None,
    throttle_ceiling: Annotated[str | None, typer.Option(help="--throttle auto: the highest rate per broker, at most "
                                                         "the plan's approved throttle (its default)")] = None,
    capacity: Annotated[Path | None, typer.Option(help="--throttle auto: broker network capacities (JSON or YAML, as "
                                                  "plan --capacity), over those the plan was made with")] = None,
) -> None:
    """Execute an approved plan: throttle, submit and verify moves as capacity frees (or per batch), restore
    throttles; then elect leaders.

    Only a plan validated and approved for its hash runs (kafka-rebalance approve), on a cluster and with
    --simulate alike; kafka-rebalance status shows its progress.

    Exit codes: 0 complete; 1 failed or incomplete; 2 unusable input; 3 held (paused, stopped or waiting for a
    window: nothing in flight, throttles restored; run it again, or pass --wait); 143 stopped by SIGTERM, 130 by
    SIGINT (nothing more submitted, throttles restored, moves in flight left to Kafka; run it again to resume).
    """
    # Every flag is checked before the plan is loaded or the cluster touched.
    if mode == "continuous" and batches is not None:
        fail("--batches selects batches to run as waves: it needs --mode batches")
    settings = ExecSettings(poll_interval, stall_seconds, batch_timeout, on_stall, additional,
                            mode or ("batches" if batches is not None else "continuous"))
    if throttle not in THROTTLE_MODES:
        fail(f"--throttle: expected one of {', '.join(THROTTLE_MODES)}, got {throttle!r} (the rate itself is the "
             "plan's: plan --throttle)")
    if throttle != AUTO and (throttle_floor, throttle_ceiling, capacity) != (None, None, None):
        fail("--throttle-floor, --throttle-ceiling and --capacity apply to --throttle auto")
    try:
        floor = parse_bytes(throttle_floor, "--throttle-floor") if throttle_floor is not None else None
        ceiling = parse_bytes(throttle_ceiling, "--throttle-ceiling") if throttle_ceiling is not None else None
    except ValueError as exc:
        fail(str(exc))
    capacities = read_capacity_file(str(capacity)) if capacity is not None else None
    if window not in ("now", "configured"):
        window_policy_of(window, None)
    if final_snapshot is not None:
        check_output_file(final_snapshot, "--final-snapshot")
    # Real cluster or simulator alike: only a plan someone approved (kafka-rebalance approve) runs.
    the_plan = load_plan(plan, require_approval=True)
    if final_snapshot is not None:
        check_output(final_snapshot, "--final-snapshot", may_write=FINAL_SNAPSHOT_FILES,
                     inputs=_snapshot_inputs(the_plan, simulate))
    selection = parse_batch_selection(batches, the_plan) if batches is not None else None
    if throttle == AUTO:
        settings = replace(settings, auto_throttle=auto_throttle(the_plan, floor, ceiling, capacities))
    gate = ExecutionGate(the_plan.path, the_plan.plan_hash, window_policy_of(window, the_plan.cluster_id),
                         margin=timedelta(seconds=window_margin), grace=timedelta(seconds=window_grace))
    total = sum(b.bytes or 0 for b in the_plan.batches)
    with closing(admin_from_flags(plan, bootstrap_server, command_config, simulate, connect_timeout)) as admin, \
            stop_on_signals(StopRequest(_progress)) as stop, \
            acting_on(the_plan, admin, "execute", starting=not rearm, allow_unidentified=allow_unidentified_cluster,
                      take_over=take_over_lease, simulated=simulate is not None), \
            follow(f"plan {the_plan.plan_hash[:12]}", total, lambda: _bytes_done(plan, the_plan)) as refresh:
        # The plan's cluster, its age and its lease were checked before a re-arm or anything else touches the cluster.
        ex: Executor | None = None

        def said(line: str) -> None:
            _progress(line)
            refresh()  # the executor speaks after each poll: the ledger it saved then says how far it is

        try:
            if rearm:
                rearm_plan(the_plan, admin, by=rearm_by, progress=_progress)
            while True:
                ex = Executor(the_plan, admin, settings, said, gate=gate, stop=stop)
                report = ex.run(selection, final_snapshot)
                if report.hold is None or not wait or not report.waits:
                    break  # nothing to wait for when held without a known end: the message says why
                _wait_for(gate, report.hold, poll_interval, stop)
            stop.check()  # a signal during the last Kafka calls: the run still ends as stopped
        except StopSignal as signalled:
            # The executor's finally blocks restored what they had set; this restores any record still
            # set, notes the stop in the ledger and says what Kafka still runs.
            if ex is None:  # stopped while re-arming: the ledger on disk is the one to record the stop in
                ex = Executor(the_plan, admin, settings, _progress, gate=gate)
            print(stop_message(ex.after_stop(signalled.signum), str(plan)), file=sys.stderr)
            raise typer.Exit(signalled.exit_code) from None
    emit_json(report.to_dict())
    _identity_note(the_plan)
    for b in report.batches:
        _progress(f"batch {b.id}: predicted {b.estimated_seconds}s, actual {b.actual_seconds}s, {b.state}")
    if (c := report.continuous) is not None:
        _progress(f"continuous: {c.finished}/{c.steps} steps, predicted {c.estimated_seconds}s for the schedule, "
                  f"actual {c.actual_seconds}s this run, {c.state}")
    if report.hold is not None and not report.waits:
        fail(f"execution cannot go on: {report.hold.detail}", code=1)
    if report.hold is not None:
        p = report.progress
        print(f"held: {report.status.value}: {report.hold.detail}; {p['batches_done']} batch(es) done, "
              f"{len(p['batches_remaining'])} remaining; ETA {p['eta'] or 'unknown'} "
              f"({p['eta_windows'] if p['eta_windows'] is not None else '?'} window(s)); run execute again or pass --wait",
              file=sys.stderr)
        raise typer.Exit(EXIT_HELD)
    if report.status is not RunStatus.COMPLETE:
        print(f"error: execution {report.status.value}: see the batch report above and {plan / LEDGER_FILE}", file=sys.stderr)
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
    with closing(admin_from_flags(plan, bootstrap_server, command_config, simulate, connect_timeout)) as admin:
        verdict = Executor(the_plan, admin, ExecSettings(), _progress).verify()
    emit_json(verdict.to_dict())
    _identity_note(the_plan)
    if not verdict.complete:
        raise typer.Exit(1)


@app.command()
def cancel(
    plan: PlanOpt,
    bootstrap_server: BootstrapOpt = None,
    command_config: CommandConfigOpt = None,
    simulate: SimulateOpt = None,
    connect_timeout: ConnectTimeoutOpt = 15.0,
    allow_unidentified_cluster: AllowUnidentifiedOpt = False,
    take_over_lease: TakeOverOpt = False,
) -> None:
    """Abort cleanly: cancel the moves this plan has in flight and restore the throttle values its runs recorded.

    Only what the plan owns is touched: a reassignment someone else started (of the plan's partitions or
    others) is reported and left alone. Like execute, it needs the plan unchanged, validated and approved;
    when the plan directory is damaged, `kafka-rebalance restore` still puts back the recorded throttles.
    """
    the_plan = load_plan(plan, require_approval=True)
    with closing(admin_from_flags(plan, bootstrap_server, command_config, simulate, connect_timeout)) as admin, \
            acting_on(the_plan, admin, "cancel", allow_unidentified=allow_unidentified_cluster, take_over=take_over_lease,
                      simulated=simulate is not None):
        outcome = Executor(the_plan, admin, ExecSettings(), _progress).cancel()
    emit_json(outcome.to_dict())
    if outcome.left_alone:
        shown = ", ".join(str(tp) for tp in outcome.left_alone[:5]) + (", ..." if len(outcome.left_alone) > 5 else "")
        _progress(f"cancel: left {len(outcome.left_alone)} reassignment(s) of this plan's partitions alone: not started "
                  f"by this plan ({shown}); cancel them with Kafka's own tool if they should stop")
    _identity_note(the_plan)


@app.command()
def restore(
    plan: PlanOpt,
    bootstrap_server: BootstrapOpt = None,
    command_config: CommandConfigOpt = None,
    simulate: SimulateOpt = None,
    connect_timeout: ConnectTimeoutOpt = 15.0,
    take_over_lease: TakeOverOpt = False,
) -> None:
    """Put back the throttle values runs of this plan recorded and left set (a killed run, a broker that was down).

    Works when the plan directory no longer verifies (a file edited after a run was killed): then only the
    throttle values its ledger recorded are written back, each checked; no move is cancelled or started.
    Exit 0 when nothing is left to restore, 1 when a resource did not answer (run it again).
    """
    from kafka_rebalance.executor.lease import plan_lease
    from kafka_rebalance.executor.recovery import recovery_target, restore_recorded

    target = recovery_target(plan)
    with closing(admin_from_flags(plan, bootstrap_server, command_config, simulate, connect_timeout)) as admin, \
            plan_lease(plan, target.plan_hash, "restore", take_over=take_over_lease):
        outcome = restore_recorded(target, admin, _progress)
    emit_json(outcome.to_dict())
    if outcome.still_pending:
        print(f"error: throttles of {', '.join(outcome.still_pending)} not yet restored: a resource did not answer; "
              "run restore again", file=sys.stderr)
        raise typer.Exit(1)
