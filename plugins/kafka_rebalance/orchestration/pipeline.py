"""The steps of the rebalance DAGs as plain functions: paths in, paths (or small dicts) out.

The DAG files only wire these together, so every step is testable without a scheduler
and the same code runs from ``dag.test()``, ``airflow dags test`` and a real deployment.
Large data never travels through XCom: each step writes files under the run directory
or the staged plan directory and returns their paths.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_rebalance.analysis.summary_file import cluster_entry
from kafka_rebalance.cluster.gather import gather_snapshot
from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.estimates import DEFAULT_MODE, plan_estimate
from kafka_rebalance.options import DEFAULT_MAX_PLAN_AGE_HOURS
from kafka_rebalance.orchestration.approval_policy import ApprovalPolicy
from kafka_rebalance.orchestration.approval_text import approval_body
from kafka_rebalance.orchestration.cluster_access import admin_session
from kafka_rebalance.orchestration.clusters_config import ClusterConfig, ClustersFile, PlannerDefaults
from kafka_rebalance.orchestration.plan_params import plan_options, planner_values
from kafka_rebalance.orchestration.scale import ScaleEvent, scale_event
from kafka_rebalance.orchestration.staging import record_decision, run_dir, stage_plan, write_cluster_snapshot
from kafka_rebalance.plan_approval import leader_changes_text
from kafka_rebalance.plan_dir import (
    FINAL_SNAPSHOT_STEM,
    LEDGER_FILE,
    VERIFICATION_FILE,
    atomic_write_json,
    read_manifest,
)
from kafka_rebalance.snapshot import load_snapshot

if TYPE_CHECKING:
    from kafka_rebalance.executor.executor import Executor
    from kafka_rebalance.executor.interrupt import StopRequest

log = logging.getLogger("kafka_rebalance.orchestration.pipeline")


class ExecutionStopped(RebalanceError):
    """The execute task was killed: its throttles are restored and the stop is in the ledger; the next run resumes."""


def gather(cfg: ClustersFile, cluster: ClusterConfig, run_id: str, params: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Describe the cluster into a snapshot file in this run's directory.

    ``params``: the run's; a bad planner setting (a throttle of 0) fails the run here, before the cluster
    is read and minutes before the plan task would refuse it.
    """
    if params is not None:
        planner_values(params, cfg.effective_defaults(cluster))
    directory = run_dir(cluster.cluster_id, run_id)
    with admin_session(cfg, cluster) as admin:
        # Everything downstream (analysis, plans, staging) is keyed by the configured id.
        snapshot = gather_snapshot(admin, cluster.cluster_id, cluster.rate_window_seconds)
    path = write_cluster_snapshot(snapshot, directory)
    log.info("gathered %s: %d brokers, %d partitions -> %s", cluster.cluster_id, len(snapshot.brokers),
             len(snapshot.partitions), path)
    return {"cluster_id": cluster.cluster_id, "run_dir": str(directory), "snapshot": str(path),
            "analysis": str(directory / "analysis")}  # fmt: skip


def snapshot_gate(run: Mapping[str, str]) -> str:
    """The GX `snapshot` suite on the gathered metadata; anything wrong stops the run here."""
    from kafka_rebalance.validation import validate_snapshot

    outcome = validate_snapshot(run["snapshot"])
    result = Path(run["run_dir"]) / "snapshot_validation.json"
    result.write_text(json.dumps({"status": outcome.status, "suites": outcome.suites}, indent=2, sort_keys=True,
                                 default=str) + "\n", encoding="utf-8")  # fmt: skip
    log.info("snapshot quality gate: %s\n%s", outcome.status, outcome.report())
    if outcome.status != "passed":
        raise RebalanceError(f"{run['snapshot']}: snapshot failed its quality gate; see {result}\n{outcome.report()}")
    return str(result)


def is_balanced(run: Mapping[str, str]) -> bool:
    entry = cluster_entry(run["analysis"], run["cluster_id"])[0]
    log.info("analysis of %s: balanced=%s, brokers over threshold %s (threshold %s%% from %s)", run["cluster_id"],
             entry.get("balanced"), entry.get("brokers_over_threshold"), entry.get("threshold_percentage"),
             entry.get("threshold_source"))  # fmt: skip
    return bool(entry.get("balanced"))


def needs_plan(run: Mapping[str, str], params: Mapping[str, Any], defaults: PlannerDefaults | None = None) -> bool:
    """The "balanced?" branch: plan when a selected goal is not met by the snapshot, an
    operator's request (brokers to empty) included (kafka_rebalance.orchestration.plan_decision).
    The analysis' own flag is logged beside it, as a figure."""
    from kafka_rebalance.orchestration.plan_decision import plan_decision

    is_balanced(run)
    snapshot = load_snapshot(run["snapshot"])
    decision = plan_decision(snapshot, plan_options(snapshot, params, Path(run["analysis"]), defaults))
    log.info("plan needed: %s", "; ".join(decision.reasons) if decision.plan else "no: every goal is met")
    return decision.plan


def record_balanced(run: Mapping[str, str]) -> str:
    path = Path(run["run_dir"]) / "balanced.json"
    entry = cluster_entry(run["analysis"], run["cluster_id"])[0]
    path.write_text(json.dumps({"balanced": True, "analysis": entry}, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return str(path)


# ----------------------------------------------------------------------------- plan, validate, stage


def make_plan(run: Mapping[str, str], params: Mapping[str, Any], defaults: PlannerDefaults | None = None,
              mode: str = DEFAULT_MODE) -> str:
    """``mode``: the cluster's executor mode, whose estimate the log line headlines."""
    from kafka_rebalance.planner import make_plan as plan_cluster
    from kafka_rebalance.planner import write_plan

    snapshot = load_snapshot(run["snapshot"])
    options = plan_options(snapshot, params, Path(run["analysis"]), defaults)
    result = plan_cluster(snapshot, options)
    out = Path(run["run_dir"]) / "plan"
    manifest, status = write_plan(result, out, run["snapshot"])
    s = manifest["summary"]
    log.info("plan %s (%s): %d batches, %d replica moves, %s bytes, %d elections%s, estimated %s", manifest["plan_hash"][:16],
             status, len(manifest["batches"]), s["replica_moves"], f"{s['bytes_moved']:,}", s["leader_elections"],
             leader_changes_text(s),
             plan_estimate(manifest, mode).text())  # fmt: skip
    return str(out)


def validate_plan(run: Mapping[str, str], plan_dir: str) -> str:
    """The GX plan suites on the files as written; a failing plan is marked failed and the run stops."""
    from kafka_rebalance.validation import validate_plan as run_gate

    outcome = run_gate(plan_dir, run["snapshot"])
    log.info("plan quality gate: %s\n%s", outcome.status, outcome.report())
    if outcome.status != "passed":
        raise RebalanceError(f"{plan_dir}: plan failed validation and is marked rejected\n{outcome.report()}")
    return plan_dir


def write_plan_report(staged: Path, final_snapshot: Path | None = None, mode: str = DEFAULT_MODE) -> Path:
    """report.html beside the plan: projected before execution, with the final state and batch times after.
    ``mode``: the cluster's executor mode, whose estimate the report headlines."""
    from kafka_rebalance.report.html import ledger_times, write_report

    snapshot = read_manifest(staged)["snapshot"]["path"]
    return write_report(staged, snapshot, final_snapshot_path=final_snapshot,
                        ledger=ledger_times(staged) if final_snapshot else None, mode=mode)  # fmt: skip


def stage(cluster_id: str, plan_dir: str, outlet_events: Any = None, mode: str = DEFAULT_MODE,
          max_age_seconds: float | None = DEFAULT_MAX_PLAN_AGE_HOURS * 3600, window: str | None = None) -> dict[str, str]:
    """``mode``: the cluster's executor mode, whose estimate the report and the approval text headline;
    ``max_age_seconds``: the plan age its approval is checked against (``approval_age_limit``); ``window``: the
    run's execution window as the approver should read it (``window_text``)."""
    staged = stage_plan(Path(plan_dir), cluster_id)
    manifest = read_manifest(staged)
    write_plan_report(staged, mode=mode)
    if outlet_events is not None:
        outlet_events.extra = {"plan_dir": str(staged), "plan_hash": manifest["plan_hash"]}
    # The run remembers what it staged (the run's "Rebalance report" view in the UI reads this).
    (Path(plan_dir).parent / "staged.json").write_text(json.dumps({"dir": str(staged)}) + "\n", encoding="utf-8")
    log.info("staged plan %s at %s", manifest["plan_hash"][:16], staged)
    return {"dir": str(staged), "plan_hash": manifest["plan_hash"],
            "body": approval_body(staged, manifest, mode=mode, max_age_seconds=max_age_seconds, window=window)}


def scale_event_of(run: Mapping[str, str], params: Mapping[str, Any], defaults: PlannerDefaults | None = None) -> ScaleEvent:
    """The run's scale event: brokers its snapshot shows added, and those marked for removal (the run's
    decommission_brokers, which start from the cluster's clusters.yaml entry) that still hold replicas."""
    marked = planner_values(params, defaults)["decommission_brokers"]
    return scale_event(load_snapshot(run["snapshot"]), marked)


def wants_execution(run_type: Any, params: Mapping[str, Any], scale: ScaleEvent | None = None,
                    policy: ApprovalPolicy | None = None) -> bool:
    """A manual trigger asking for execute mode executes. A scheduled or asset-triggered run executes only for a
    scale event on a cluster with an approval policy (which, or a person, then approves); otherwise it is a dry run."""
    kind = str(getattr(run_type, "value", run_type))
    if kind == "manual":
        return params.get("mode") == "execute"
    return kind in ("scheduled", "asset_triggered") and policy is not None and scale is not None and scale.any


def run_executes(cluster: ClusterConfig, run: Mapping[str, str], run_type: Any, params: Mapping[str, Any],
                 defaults: PlannerDefaults | None = None) -> bool:
    """The DAG's "execute?" branch after staging: ``wants_execution`` on this run's scale event."""
    scale = scale_event_of(run, params, defaults)
    executes = wants_execution(run_type, params, scale, cluster.approval_policy)
    log.info("scale event: %s; approval policy: %s; this run %s", scale.describe(),
             "configured" if cluster.approval_policy is not None else "none",
             "executes once approved" if executes else "is a dry run")  # fmt: skip
    return executes


def approval_age_limit(cluster: ClusterConfig) -> float | None:
    """The plan age an approval on ``cluster`` is checked against, a person's or a policy's. A simulated cluster's
    clock is virtual (its snapshot's gather time onwards): it does not age in wall time."""
    return None if cluster.simulated else DEFAULT_MAX_PLAN_AGE_HOURS * 3600


def apply_policy(cluster: ClusterConfig, staged_dir: str, window: str | None = None,
                 now: datetime | None = None) -> dict[str, Any] | None:
    """The cluster's approval policy on a staged plan about to execute (None: the cluster has none).

    An approval the policy allows is recorded here, through ``plan_approval.decide`` like a person's (validated
    for this hash, young enough, signed when an approval key is configured), with the approver
    ``policy:<rule>`` and the rule and figures in approval.json; a plan no rule approves is held for the
    approval step. ``window``: the run's (the trigger form's), which ``within_window`` judges.
    """
    from kafka_rebalance.orchestration.approval_policy import PlanFigures, judge, window_seconds
    from kafka_rebalance.plan_approval import decide, plan_facts

    policy = cluster.approval_policy
    if policy is None:
        log.info("approval policy: none configured for %s; a person approves", cluster.cluster_id)
        return None
    now = now or datetime.now(UTC)
    facts = plan_facts(Path(staged_dir), now, cluster.executor.mode)
    figures = PlanFigures(
        replica_moves=facts.replica_moves, bytes_moved=facts.bytes_moved, leader_elections=facts.leader_elections,
        estimated_seconds=facts.estimated_seconds, estimate_of=facts.estimate_of,
        window_seconds=window_seconds(window_policy(cluster, window), cluster.executor.window_margin_seconds))
    verdict = judge(policy, figures)
    log.info("approval policy on plan %s: %s", facts.plan_hash[:16], verdict.describe())
    if verdict.approver is not None:
        decide(Path(staged_dir), "approved", verdict.approver, verdict.describe(), now=now,
               max_age_seconds=approval_age_limit(cluster), details={"policy": verdict.record()})
    return {**verdict.to_dict(), "plan_hash": facts.plan_hash}


# ----------------------------------------------------------------------------- execute


def window_text(cluster: ClusterConfig, window: str | None) -> str:
    """The run's execution window as the approver reads it: the trigger's window over the cluster's configured
    ones (a malformed one fails here, before anyone is asked to approve)."""
    return window_policy(cluster, window).describe()


def window_policy(cluster: ClusterConfig, window: str | None):
    """The run's windows: the trigger form's ``window`` (now / configured / an ISO interval) over the cluster's."""
    from kafka_rebalance.executor.windows import policy

    return policy(window, cluster.configured_windows(), field="window")


@contextmanager
def _executor(cfg: ClustersFile, cluster: ClusterConfig, staged_dir: str, command: str, require_passed: bool = True,
              window: str | None = None, stop: StopRequest | None = None, starting: bool = False,
              owner: str | None = None) -> Iterator[Executor]:
    """The executor for a staged plan on its cluster, holding the plan's lease, the cluster closed however the block
    ends (``command``: the DAG step, for the lease's record)."""
    from kafka_rebalance.executor.executor import Executor, acting_on
    from kafka_rebalance.executor.gate import ExecutionGate
    from kafka_rebalance.plan_manifest import load_plan

    # Whatever acts on the cluster needs the plan unchanged, validated AND approved, all for this hash.
    plan = load_plan(Path(staged_dir), require_passed=require_passed, require_approval=require_passed)
    settings = cluster.executor.settings()
    bounds = cluster.executor.auto_bounds()
    if bounds is not None:
        from kafka_rebalance.executor.autothrottle import auto_throttle

        # The plan's capacities (made with the cluster's) are the network figures; a plan without them is refused here.
        settings = replace(settings, auto_throttle=auto_throttle(plan, *bounds, None))
    gate = ExecutionGate(plan.path, plan.plan_hash, window_policy(cluster, window),
                         margin=timedelta(seconds=cluster.executor.window_margin_seconds),
                         grace=timedelta(seconds=cluster.executor.window_grace_seconds))
    with admin_session(cfg, cluster) as admin, \
            acting_on(plan, admin, command, starting=starting, owner=owner, simulated=cluster.simulated,
                      allow_unidentified=cluster.allow_unidentified_cluster):
        # Every DAG task that acts on the cluster checked the cluster, the plan's age and its lease first.
        yield Executor(plan, admin, settings, progress=log.info, gate=gate, stop=stop)


def preflight(cfg: ClustersFile, cluster: ClusterConfig, staged_dir: str, approval: Mapping[str, Any] | None,
              rearm: bool = False, run_id: str | None = None, window: str | None = None) -> dict:
    """Record the approval; re-arm if asked; restore throttles a killed run left; refuse a changed cluster or a foreign move."""
    from kafka_rebalance.executor.rearm import rearm as rearm_plan
    from kafka_rebalance.plan_approval import decide
    from kafka_rebalance.plan_dir import read_approval
    from kafka_rebalance.plan_manifest import load_plan

    window_policy(cluster, window)  # a malformed window fails here, before anything touches the cluster
    by = _responder(approval)
    if by == "unknown":
        # The approval task was marked success by hand, or its answer named nobody: an approval names a person.
        recorded = read_approval(Path(staged_dir))
        if recorded is None or recorded.get("decision") != "approved":
            raise RebalanceError(f"{staged_dir}: the approval step records no approver (was it marked success by hand?); "
                                 "approve the plan in the Airflow UI's approval form or with kafka-rebalance approve")
        by = str(recorded.get("by"))
    else:
        # The same checks as `kafka-rebalance approve`: validated for this hash, and young enough.
        decide(Path(staged_dir), "approved", by, "", now=datetime.now(UTC), max_age_seconds=approval_age_limit(cluster))
    if rearm:
        from kafka_rebalance.executor.executor import acting_on

        plan = load_plan(Path(staged_dir), require_approval=True)
        with admin_session(cfg, cluster) as admin, \
                acting_on(plan, admin, "re-arm", simulated=cluster.simulated, allow_unidentified=cluster.allow_unidentified_cluster):
            out = rearm_plan(plan, admin, by=by, run=run_id, progress=log.info)
        log.info("re-arm: %s", out)
    with _executor(cfg, cluster, staged_dir, "preflight", starting=True) as ex:
        checked = ex.preflight()
    from kafka_rebalance.executor.executor import unchecked_identity_note

    note = unchecked_identity_note(ex.plan)
    if note is not None:
        log.warning("%s", note)
    log.info("preflight: batches to run %s; restored throttles left by an earlier run: %s",
             list(checked.batches_to_run), list(checked.restored_throttles_of) or "none")  # fmt: skip
    return checked.to_dict()  # the task's XCom: JSON


def execute(cfg: ClustersFile, cluster: ClusterConfig, staged_dir: str, window: str | None = None,
            stop: StopRequest | None = None, owner: str | None = None) -> dict[str, Any]:
    """Run every batch not yet finished, in order, while the gate allows; a finished batch is never resubmitted.

    Returns ``{"ledger", "hold", "progress"}``. ``hold`` is None when every batch finished; otherwise
    the run stopped starting work (paused, stopped, or outside its window) with nothing in flight and
    throttles restored, and the caller comes back at ``hold["resume_at"]`` or after a resume.
    ``stop``: asked to stop (the task killed), the run restores its throttles, records the stop in the
    ledger and raises ``ExecutionStopped``.
    """
    from kafka_rebalance.executor.interrupt import StopSignal, stop_message
    from kafka_rebalance.executor.ledger import FINISHED

    with _executor(cfg, cluster, staged_dir, "execute", window=window, stop=stop, owner=owner, starting=True) as ex:
        ex.check_mode(None)
        todo = list(ex.preflight().batches_to_run)
        log.info("executing %d batch(es) (%s): %s; window: %s", len(todo), ex.settings.mode,
                 ", ".join(todo) or "none (all finished earlier)", ex.gate.policy.describe())
        try:
            results, cont = ex.run_selected(todo)
        except StopSignal as signalled:
            raise ExecutionStopped(stop_message(ex.after_stop(signalled.signum), staged_dir)) from None
        for result in results:
            log.info("batch %s: %s in %s s (estimated %s s)", result.id, result.state, result.actual_seconds,
                     result.estimated_seconds)  # fmt: skip
            if ex.hold is None and result.state != FINISHED:
                raise RebalanceError(f"batch {result.id} ended {result.state}: {'; '.join(result.problems) or 'see the ledger'}")
        if cont is not None:
            log.info("continuous: %s, %d/%d steps in %s s (estimated %s s)", cont.state, cont.finished, cont.steps,
                     cont.actual_seconds, cont.estimated_seconds)  # fmt: skip
            if ex.hold is None and cont.state != FINISHED:
                raise RebalanceError(f"continuous execution ended {cont.state}: "
                                     + "; ".join([*map(str, cont.failed), *map(str, cont.cancelled), *cont.problems][:5]) + "; see the ledger")
        progress = ex.record_progress()
    # The figures of status, the execution page and the report, in the words they use there.
    from kafka_rebalance.executor.progress import read_progress
    from kafka_rebalance.report.progress_view import figures

    log.info("progress: %s", "; ".join(f"{f.label}: {f.value}" for f in figures(read_progress(Path(staged_dir)))))
    hold = ex.hold
    if hold is not None and not hold.waits_for_operator and hold.resume_at is None:
        raise RebalanceError(f"execution cannot go on: {hold.detail}")
    if hold is not None:
        log.info("held (%s): %s; done %d, remaining %s, ETA %s in %s window(s)", hold.reason.value, hold.detail,
                 progress["batches_done"], progress["batches_remaining"], progress["eta"], progress["eta_windows"])
    return {"ledger": str(ex.ledger.path), "hold": hold.to_dict() if hold else None, "progress": progress,
            "plan_hash": ex.plan.plan_hash}


def restore_throttles(cfg: ClustersFile, cluster: ClusterConfig, staged_dir: str) -> str:
    """Teardown: put back every throttle value a failed or killed batch left set."""
    from kafka_rebalance.executor.lease import plan_lease
    from kafka_rebalance.executor.recovery import recovery_target, restore_recorded

    if not (Path(staged_dir) / LEDGER_FILE).exists():
        return "nothing executed"
    # Recovery: possible even when the plan no longer verifies (executor/recovery.py), never blocked by it.
    target = recovery_target(Path(staged_dir))
    with admin_session(cfg, cluster) as admin, plan_lease(target.path, target.plan_hash, "restore throttles"):
        outcome = restore_recorded(target, admin, log.info)
    log.info("restored throttles of: %s", ", ".join(outcome.restored_throttles_of) or "none needed")
    if outcome.still_pending:
        raise RebalanceError(f"throttles of {', '.join(outcome.still_pending)} not yet restored: a resource did not "
                             f"answer; run `kafka-rebalance restore --plan {staged_dir}` once it is back")
    return ",".join(outcome.restored_throttles_of)


def elections(cfg: ClustersFile, cluster: ClusterConfig, staged_dir: str) -> str:
    from kafka_rebalance.executor.settings import ExecutionRefused

    with _executor(cfg, cluster, staged_dir, "elections") as ex:
        if not ex.all_finished():
            # Elections follow the moves: leaders chosen for replicas that are not there yet are the wrong leaders.
            raise ExecutionRefused(f"{staged_dir}: elections: not every batch of the plan finished (ledger: "
                                   f"{', '.join(f'{b.id} {ex.ledger.state(b.id)}' for b in ex.plan.batches)}); execute it first")
        out = ex.elections()
    if out.failed:
        log.warning("%d preferred election(s) did not succeed: %s", len(out.failed), out.failed)
    if out.not_led_by_preferred:
        log.warning("%d elected partition(s) not yet led by their preferred leader in the metadata after %.1fs: %s",
                    len(out.not_led_by_preferred), out.waited_seconds, list(out.not_led_by_preferred))
    return json.dumps(out.to_dict(), sort_keys=True)


def final_verify(cfg: ClustersFile, cluster: ClusterConfig, run: Mapping[str, str], staged_dir: str) -> str:
    """Gather again, check every partition reached its target, compare predicted and actual durations."""
    from kafka_rebalance.metrics import broker_loads, brokers_over_threshold, threshold_percentage
    from kafka_rebalance.options import PlanOptions
    from kafka_rebalance.planner.judge import snapshot_checks

    with _executor(cfg, cluster, staged_dir, "final verify") as ex:
        verdict = ex.verify()
        final = ex.final_snapshot(None)
    final_path = write_cluster_snapshot(final, Path(staged_dir), FINAL_SNAPSHOT_STEM)
    manifest = read_manifest(Path(staged_dir))
    threshold, source = threshold_percentage(final, manifest["options"].get("threshold_percentage"))
    loads = [b for b in broker_loads(final) if b.alive]
    over = brokers_over_threshold(loads, threshold)
    checks = {c.name: c for c in snapshot_checks(final, PlanOptions.from_manifest(manifest["options"]))}
    ledger = ex.ledger.data
    durations = [
        {"batch": b["id"], "estimated_seconds": b["estimated_seconds"],
         "actual_seconds": ledger["batches"].get(b["id"], {}).get("actual_seconds")}
        for b in manifest["batches"]
    ]  # fmt: skip
    report = {
        **verdict.to_dict(),
        "final_snapshot": str(final_path),
        "threshold_percentage": threshold,
        "threshold_source": source,
        "brokers_over_threshold": over,
        # the plan's own goals judge the cluster it left, with the options it was made with
        "replicas_balanced": checks["replica-count"].reached if "replica-count" in checks else None,
        "goals": {name: c.reached for name, c in checks.items()},
        "durations": durations,
    }
    path = atomic_write_json(Path(staged_dir) / VERIFICATION_FILE, report)
    log.info("final verification: %s; brokers over threshold: %s; durations: %s", report["status"], over, durations)
    if not verdict.complete:
        raise RebalanceError(f"final verification failed: {'; '.join(verdict.problems[:10] + verdict.throttles_left)}; see {path}")
    return str(path)


def _responder(decision: Mapping[str, Any] | None) -> str:
    if not decision:
        return "unknown"
    user = decision.get("responded_by") or {}
    if isinstance(user, Mapping):
        return str(user.get("name") or user.get("id") or "unknown")
    return str(user)


def finish(run: Mapping[str, str], staged_dir: str | None, decision: Mapping[str, Any] | None,
           mode: str = DEFAULT_MODE) -> dict[str, Any]:
    """Always runs: records a Reject beside the plan and says where everything is (``mode``: the cluster's
    executor mode, whose estimate the report headlines)."""
    out: dict[str, Any] = {"run_dir": run["run_dir"], "analysis": run["analysis"]}
    if staged_dir is None:
        out["outcome"] = "balanced: nothing to do" if (Path(run["run_dir"]) / "balanced.json").exists() else "no plan staged"
        return out
    staged = Path(staged_dir)
    out["plan"] = staged_dir
    chosen = (decision or {}).get("chosen_options") or []
    if "Reject" in chosen:
        record_decision(staged, "rejected", _responder(decision))
        out["outcome"] = "rejected: nothing executed"
    elif "Approve" in chosen:
        verified = staged / VERIFICATION_FILE
        out["outcome"] = "executed" if verified.exists() else "approved, execution did not finish"
        out["verification"] = str(verified) if verified.exists() else None
        if verified.exists():
            final = json.loads(verified.read_text(encoding="utf-8"))["final_snapshot"]
            out["report"] = str(write_plan_report(staged, Path(final), mode))
    else:
        out["outcome"] = "staged (dry run)"
    log.info("run finished: %s", out)
    if out["outcome"] == "approved, execution did not finish":
        # This is the run's last task: failing it is what makes the run show failed, not a green success over a
        # preflight, an execution or a verification that failed (their own logs say why).
        raise RebalanceError(f"{staged_dir}: approved, but the execution did not finish and verify; see the failed "
                             "task's log (preflight, execute, elections or final_verify) and the plan's ledger.json")
    return out
