"""The steps of the rebalance DAGs as plain functions: paths in, paths (or small dicts) out.

The DAG files only wire these together, so every step is testable without a scheduler
and the same code runs from ``dag.test()``, ``airflow dags test`` and a real deployment.
Large data never travels through XCom: each step writes files under the run directory
or the staged plan directory and returns their paths.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kafka_rebalance.cluster.gather import gather_snapshot
from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.orchestration.clusters_config import ClusterConfig, ClustersFile, PlannerDefaults
from kafka_rebalance.orchestration.staging import REPORTS_URL_PREFIX, record_decision, run_dir, simulated_state_dir, stage_plan
from kafka_rebalance.plan_dir import (
    DATA_DOCS_DIR,
    FINAL_SNAPSHOT_STEM,
    LEDGER_FILE,
    REPORT_FILE,
    RUNBOOK_FILE,
    VERIFICATION_FILE,
    atomic_write_json,
    read_manifest,
    validation_status,
)
from kafka_rebalance.snapshot import load_snapshot, write_snapshot

log = logging.getLogger("kafka_rebalance.orchestration.pipeline")

MIB = 1024 * 1024
PARQUET_ABOVE_PARTITIONS = 50_000
SIM_STATE_FILE = "state.json"


# ----------------------------------------------------------------------------- cluster access


def cluster_admin(cfg: ClustersFile, cluster: ClusterConfig):
    """The cluster behind ``source``: the persistent simulator, or a live cluster via an Airflow connection."""
    if cluster.simulated:
        from kafka_rebalance.cluster.simulator import SimAdmin

        # The simulated cluster persists between runs, so a second run sees what the first one executed.
        state = simulated_state_dir(cluster.cluster_id) / SIM_STATE_FILE
        return SimAdmin.open(load_snapshot(cfg.simulated_snapshot(cluster)), state)
    from kafka_rebalance.cluster.connection import settings_from_airflow_connection
    from kafka_rebalance.cluster.live import LiveAdmin

    return LiveAdmin(settings_from_airflow_connection(cluster.source))


def _write_cluster_snapshot(snapshot, directory: Path, name: str = "snapshot") -> Path:
    suffix = ".parquet" if len(snapshot.partitions) > PARQUET_ABOVE_PARTITIONS else ".json"
    return write_snapshot(snapshot, directory / f"{name}{suffix}")


def gather(cfg: ClustersFile, cluster: ClusterConfig, run_id: str) -> dict[str, str]:
    """Describe the cluster into a snapshot file in this run's directory."""
    directory = run_dir(cluster.cluster_id, run_id)
    admin = cluster_admin(cfg, cluster)
    try:
        # Everything downstream (analysis, plans, staging) is keyed by the configured id.
        snapshot = gather_snapshot(admin, cluster.cluster_id)
    finally:
        admin.close()
    path = _write_cluster_snapshot(snapshot, directory)
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


def _cluster_summary(analysis_dir: str | Path, cluster_id: str) -> dict[str, Any]:
    path = Path(analysis_dir) / "summary.json"
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RebalanceError(f"{path}: the Spark analysis wrote no summary") from None
    for entry in summary.get("clusters", []):
        if entry.get("cluster_id") == cluster_id:
            return entry
    raise RebalanceError(f"{path}: no entry for cluster {cluster_id!r}")


def is_balanced(run: Mapping[str, str]) -> bool:
    entry = _cluster_summary(run["analysis"], run["cluster_id"])
    log.info("analysis of %s: balanced=%s, brokers over threshold %s (threshold %s%% from %s)", run["cluster_id"],
             entry.get("balanced"), entry.get("brokers_over_threshold"), entry.get("threshold_percentage"),
             entry.get("threshold_source"))  # fmt: skip
    return bool(entry.get("balanced"))


def needs_plan(run: Mapping[str, str], params: Mapping[str, Any], defaults: PlannerDefaults | None = None) -> bool:
    """The "balanced?" branch: plan when the analysis finds the cluster unbalanced or the
    operator asked for something the cluster does not have yet (kafka_rebalance.orchestration.plan_decision)."""
    from kafka_rebalance.orchestration.plan_decision import plan_decision

    balanced = is_balanced(run)
    leaving = [int(b) for b in params.get("decommission_brokers") or []]
    if balanced and not leaving:
        return False
    decision = plan_decision(load_snapshot(run["snapshot"]), balanced, decommission_brokers=leaving,
                             exclude_topics=_setting(params, defaults, "exclude_topics") or [])  # fmt: skip
    log.info("plan needed: %s", "; ".join(decision.reasons) if decision.plan else "no: balanced and nothing requested")
    return decision.plan


def record_balanced(run: Mapping[str, str]) -> str:
    path = Path(run["run_dir"]) / "balanced.json"
    entry = _cluster_summary(run["analysis"], run["cluster_id"])
    path.write_text(json.dumps({"balanced": True, "analysis": entry}, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return str(path)


# ----------------------------------------------------------------------------- fleet


def gather_fleet(cfg: ClustersFile, run_id: str) -> dict[str, str]:
    """One snapshot per configured cluster, in one directory: the Spark job reads it as a fleet."""
    directory = run_dir("_fleet", run_id)
    snapshots = directory / "snapshots"
    snapshots.mkdir(exist_ok=True)
    failed = []
    for cluster in cfg.clusters:
        try:
            admin = cluster_admin(cfg, cluster)
            try:
                # The fleet summary is keyed by the configured id, whatever the cluster calls itself.
                snap = gather_snapshot(admin, cluster.cluster_id)
            finally:
                admin.close()
        except RebalanceError as exc:
            # One unreachable cluster must not hide the state of the others: record and go on.
            log.error("cluster %s: cannot gather: %s", cluster.cluster_id, exc)
            failed.append({"cluster_id": cluster.cluster_id, "error": str(exc)})
            continue
        _write_cluster_snapshot(snap, snapshots, cluster.cluster_id)
    (directory / "gather_errors.json").write_text(json.dumps(failed, indent=2) + "\n", encoding="utf-8")
    if len(failed) == len(cfg.clusters):
        raise RebalanceError(f"no cluster could be gathered: {failed}")
    return {"run_dir": str(directory), "snapshots": str(snapshots), "analysis": str(directory / "analysis")}


def fleet_summary(fleet: Mapping[str, str]) -> list[str]:
    """Write fleet_summary.json and return the clusters that need a plan."""
    summary = json.loads((Path(fleet["analysis"]) / "summary.json").read_text(encoding="utf-8"))
    rows = [
        {"cluster_id": c["cluster_id"], "balanced": c.get("balanced"), "threshold_percentage": c.get("threshold_percentage"),
         "brokers_over_threshold": c.get("brokers_over_threshold", []), "max_imbalance_ratio": c.get("max_imbalance_ratio")}
        for c in summary.get("clusters", [])
    ]  # fmt: skip
    need = sorted(r["cluster_id"] for r in rows if not r["balanced"])
    out = Path(fleet["run_dir"]) / "fleet_summary.json"
    out.write_text(json.dumps({"clusters": rows, "need_plan": need}, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    log.info("fleet: %d cluster(s), %d need a plan: %s", len(rows), len(need), ", ".join(need) or "none")
    return need


# ----------------------------------------------------------------------------- plan, validate, stage


def _setting(params: Mapping[str, Any], defaults: PlannerDefaults | None, name: str) -> Any:
    """A planner setting: the run's parameter (the trigger form), else the cluster's entry in clusters.yaml."""
    if name in params:
        return params[name]
    return getattr(defaults or PlannerDefaults(), name)


def plan_options(snapshot, params: Mapping[str, Any], analysis_dir: Path | None,
                 defaults: PlannerDefaults | None = None):  # fmt: skip
    """PlanOptions from the run's parameters over the cluster's clusters.yaml defaults.

    Every PlannerDefaults field reaches the planner this way; those the trigger form does
    not show (byte_tolerance, throttle_efficiency) come from clusters.yaml alone.
    """
    from kafka_rebalance.planner import PlanOptions
    from kafka_rebalance.planner.options import resolve_threshold

    def get(name: str) -> Any:
        return _setting(params, defaults, name)

    threshold, source = resolve_threshold(snapshot, get("threshold_percentage"), analysis_dir)
    return PlanOptions(
        throttle_bytes_per_sec=int(round(float(get("throttle_mb_per_sec")) * MIB)),
        max_partitions_per_batch=int(get("max_partitions_per_batch")),
        max_moves_per_broker=int(get("max_moves_per_broker")),
        ordering=str(get("ordering")),
        optimizer=str(get("optimizer")),
        exclude_topics=tuple(sorted(set(get("exclude_topics") or []))),
        decommission_brokers=tuple(sorted({int(b) for b in params.get("decommission_brokers") or []})),
        byte_tolerance=float(get("byte_tolerance")),
        throttle_efficiency=float(get("throttle_efficiency")),
        threshold_percentage=threshold,
        threshold_source=source,
    )


def make_plan(run: Mapping[str, str], params: Mapping[str, Any], defaults: PlannerDefaults | None = None) -> str:
    from kafka_rebalance.planner import make_plan as plan_cluster
    from kafka_rebalance.planner import write_plan

    snapshot = load_snapshot(run["snapshot"])
    options = plan_options(snapshot, params, Path(run["analysis"]), defaults)
    result = plan_cluster(snapshot, options)
    out = Path(run["run_dir"]) / "plan"
    manifest, status = write_plan(result, out, run["snapshot"])
    s = manifest["summary"]
    log.info("plan %s (%s): %d batches, %d replica moves, %s bytes, %d elections, ~%.0fs", manifest["plan_hash"][:16],
             status, len(manifest["batches"]), s["replica_moves"], f"{s['bytes_moved']:,}", s["leader_elections"],
             s["estimated_seconds"])  # fmt: skip
    return str(out)


def validate_plan(run: Mapping[str, str], plan_dir: str) -> str:
    """The GX plan suites on the files as written; a failing plan is marked failed and the run stops."""
    from kafka_rebalance.validation import validate_plan as run_gate

    outcome = run_gate(plan_dir, run["snapshot"])
    log.info("plan quality gate: %s\n%s", outcome.status, outcome.report())
    if outcome.status != "passed":
        raise RebalanceError(f"{plan_dir}: plan failed validation and is marked rejected\n{outcome.report()}")
    return plan_dir


def _optimizer_line(summary: Mapping[str, Any]) -> str:
    """The proven distance from the fewest bytes, for plans that carry it (format 2 plans may not)."""
    opt = summary.get("optimizer")
    if not isinstance(opt, Mapping):
        return ""
    gap = "unknown (bound 0)" if opt.get("gap_percent") is None else f"at most {opt['gap_percent']:.2f} %"
    return (
        f"- Bytes above the fewest that reach this balance: {gap} "
        f"(certified bound {opt['bytes_bound'] / MIB:,.1f} MiB; optimizer {opt['used']}, {opt['exact_status']})\n"
    )


def _duration_line(summary: Mapping[str, Any], efficiency: float) -> str:
    """How long the continuous schedule should take against what physics allows (plans that carry it)."""
    c = summary.get("continuous")
    if not isinstance(c, Mapping):
        return ""
    rate = "throttle" if efficiency == 1 else f"throttle x {efficiency:g} delivered"
    return (
        f"- Continuous schedule (schedule.json): about {c['estimated_seconds'] / 60:,.1f} minutes; physical bound "
        f"{c['physical_bound_seconds'] / 60:,.1f} minutes (busiest broker's bytes / {rate}), ratio {c['ratio_to_bound']}\n"
    )


def approval_body(staged: Path, manifest: Mapping[str, Any]) -> str:
    s = manifest["summary"]
    minutes = s["estimated_seconds"] / 60
    lb = s["lower_bounds"]
    rows = "\n".join(
        f"| {b['id']} | {b['kind']} | {b['partitions']} | {b['replica_moves']} | {b['bytes'] / MIB:,.1f} MiB | "
        f"{b['estimated_seconds']:,.0f} s |"
        for b in manifest["batches"][:20]
    )
    more = f"\n\n…and {len(manifest['batches']) - 20} more batches." if len(manifest["batches"]) > 20 else ""
    throttle = manifest["options"]["throttle_bytes_per_sec"] / MIB
    validation = validation_status(staged)
    base = f"{REPORTS_URL_PREFIX}/plans/{staged.parent.name}/{staged.name}"
    return (
        f"**Plan {manifest['plan_hash'][:16]}** for cluster `{manifest['cluster_id']}` — validation **{validation}**\n\n"
        f"- {s['replica_moves']} replica moves (lower bound {lb['replica_moves']}), "
        f"{s['bytes_moved'] / MIB:,.1f} MiB to copy (lower bound {lb['bytes_moved'] / MIB:,.1f} MiB)\n"
        f"{_optimizer_line(s)}"
        f"- {s['reorders']} metadata-only reorders, {s['leader_elections']} preferred leader elections\n"
        f"- {len(manifest['batches'])} batches at {throttle:,.0f} MiB/s per broker: about {minutes:,.1f} minutes\n"
        f"{_duration_line(s, manifest['options'].get('throttle_efficiency', 1.0))}"
        f"- Report: [{REPORT_FILE}]({base}/{REPORT_FILE}) · "
        f"[Data Docs]({base}/{DATA_DOCS_DIR}/index.html) · "
        f"[{RUNBOOK_FILE}]({base}/{RUNBOOK_FILE})\n"
        f"- Plan files: `{staged}`\n\n"
        f"| batch | kind | partitions | moves | bytes | estimate |\n|---|---|---|---|---|---|\n{rows}{more}\n\n"
        "Approve to execute it (by default continuously, following schedule.json; throttles are always restored); "
        "Reject keeps the plan as rejected."
    )


def write_plan_report(staged: Path, final_snapshot: Path | None = None) -> Path:
    """report.html beside the plan: projected before execution, with the final state and batch times after."""
    from kafka_rebalance.cli.report import ledger_times
    from kafka_rebalance.report.html import write_report

    snapshot = read_manifest(staged)["snapshot"]["path"]
    return write_report(staged, snapshot, final_snapshot_path=final_snapshot,
                        ledger=ledger_times(staged) if final_snapshot else None)  # fmt: skip


def stage(cluster_id: str, plan_dir: str, outlet_events: Any = None) -> dict[str, str]:
    staged = stage_plan(Path(plan_dir), cluster_id)
    manifest = read_manifest(staged)
    write_plan_report(staged)
    if outlet_events is not None:
        outlet_events.extra = {"plan_dir": str(staged), "plan_hash": manifest["plan_hash"]}
    # The run remembers what it staged (the run's "Rebalance report" view in the UI reads this).
    (Path(plan_dir).parent / "staged.json").write_text(json.dumps({"dir": str(staged)}) + "\n", encoding="utf-8")
    log.info("staged plan %s at %s", manifest["plan_hash"][:16], staged)
    return {"dir": str(staged), "plan_hash": manifest["plan_hash"], "body": approval_body(staged, manifest)}


def wants_execution(run_type: Any, params: Mapping[str, Any]) -> bool:
    """Only a manual trigger asking for execute mode executes; scheduled and asset runs are dry runs."""
    kind = getattr(run_type, "value", run_type)
    return str(kind) == "manual" and params.get("mode") == "execute"


# ----------------------------------------------------------------------------- execute


def window_policy(cluster: ClusterConfig, window: str | None):
    """The run's windows: the trigger form's ``window`` (now / configured / an ISO interval) over the cluster's."""
    from kafka_rebalance.executor.windows import policy

    return policy(window, cluster.configured_windows(), field="window")


def _executor(cfg: ClustersFile, cluster: ClusterConfig, staged_dir: str, require_passed: bool = True,
              window: str | None = None):
    from datetime import timedelta

    from kafka_rebalance.executor.executor import ExecSettings, Executor
    from kafka_rebalance.executor.gate import ExecutionGate
    from kafka_rebalance.plan_manifest import load_plan

    # Whatever acts on the cluster needs the plan unchanged, validated AND approved, all for this hash.
    plan = load_plan(Path(staged_dir), require_passed=require_passed, require_approval=require_passed)
    settings = ExecSettings(poll_interval=cluster.executor.poll_interval_seconds, stall_seconds=cluster.executor.stall_seconds,
                            mode=cluster.executor.mode)
    gate = ExecutionGate(plan.path, plan.plan_hash, window_policy(cluster, window),
                         margin=timedelta(seconds=cluster.executor.window_margin_seconds),
                         grace=timedelta(seconds=cluster.executor.window_grace_seconds))
    return Executor(plan, cluster_admin(cfg, cluster), settings, progress=log.info, gate=gate)


def preflight(cfg: ClustersFile, cluster: ClusterConfig, staged_dir: str, approval: Mapping[str, Any] | None,
              rearm: bool = False, run_id: str | None = None, window: str | None = None) -> dict:
    """Record the approval; re-arm if asked; restore throttles a killed run left; refuse a changed cluster or a foreign move."""
    from kafka_rebalance.executor.executor import rearm as rearm_plan
    from kafka_rebalance.plan_manifest import load_plan

    window_policy(cluster, window)  # a malformed window fails here, before anything touches the cluster
    by = _responder(approval)
    record_decision(Path(staged_dir), "approved", by)
    if rearm:
        admin = cluster_admin(cfg, cluster)
        try:
            out = rearm_plan(load_plan(Path(staged_dir), require_approval=True), admin, by=by, run=run_id, progress=log.info)
        finally:
            admin.close()
        log.info("re-arm: %s", out)
    ex = _executor(cfg, cluster, staged_dir)
    try:
        checked = ex.preflight()
    finally:
        ex.admin.close()
    log.info("preflight: batches to run %s; restored throttles left by an earlier run: %s",
             checked["batches_to_run"], checked["restored_throttles_of"] or "none")  # fmt: skip
    return checked


def execute(cfg: ClustersFile, cluster: ClusterConfig, staged_dir: str, window: str | None = None) -> dict[str, Any]:
    """Run every batch not yet finished, in order, while the gate allows; a finished batch is never resubmitted.

    Returns ``{"ledger", "hold", "progress"}``. ``hold`` is None when every batch finished; otherwise
    the run stopped starting work (paused, stopped, or outside its window) with nothing in flight and
    throttles restored, and the caller comes back at ``hold["resume_at"]`` or after a resume.
    """
    from kafka_rebalance.executor.ledger import FINISHED

    ex = _executor(cfg, cluster, staged_dir, window=window)
    try:
        ex.check_mode(None)
        todo = ex.preflight()["batches_to_run"]
        log.info("executing %d batch(es) (%s): %s; window: %s", len(todo), ex.settings.mode,
                 ", ".join(todo) or "none (all finished earlier)", ex.gate.policy.describe())
        results, cont = ex.run_selected(todo)
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
                                     + "; ".join([*cont.failed, *cont.cancelled, *cont.problems][:5]) + "; see the ledger")
        progress = ex.record_progress()
    finally:
        ex.admin.close()
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
    if not (Path(staged_dir) / LEDGER_FILE).exists():
        return "nothing executed"
    ex = _executor(cfg, cluster, staged_dir, require_passed=False)
    try:
        restored = ex.restore_leftover_throttles()
    finally:
        ex.admin.close()
    log.info("restored throttles of batches: %s", restored or "none needed")
    return ",".join(restored)


def elections(cfg: ClustersFile, cluster: ClusterConfig, staged_dir: str) -> str:
    ex = _executor(cfg, cluster, staged_dir)
    try:
        out = ex.elections()
    finally:
        ex.admin.close()
    if out["failed"]:
        log.warning("%d preferred election(s) did not succeed: %s", len(out["failed"]), out["failed"])
    return json.dumps(out, sort_keys=True)


def final_verify(cfg: ClustersFile, cluster: ClusterConfig, run: Mapping[str, str], staged_dir: str) -> str:
    """Gather again, check every partition reached its target, compare predicted and actual durations."""
    from kafka_rebalance.balance import counts_balanced
    from kafka_rebalance.metrics import broker_loads, brokers_over_threshold, threshold_percentage

    ex = _executor(cfg, cluster, staged_dir)
    try:
        verdict = ex.verify()
        final = ex.final_snapshot(None)
    finally:
        ex.admin.close()
    final_path = _write_cluster_snapshot(final, Path(staged_dir), FINAL_SNAPSHOT_STEM)
    manifest = read_manifest(Path(staged_dir))
    threshold, source = threshold_percentage(final, manifest["options"].get("threshold_percentage"))
    loads = [b for b in broker_loads(final) if b.alive]
    over = brokers_over_threshold(loads, threshold)
    ledger = ex.ledger.data
    durations = [
        {"batch": b["id"], "estimated_seconds": b["estimated_seconds"],
         "actual_seconds": ledger["batches"].get(b["id"], {}).get("actual_seconds")}
        for b in manifest["batches"]
    ]  # fmt: skip
    report = {
        **verdict,
        "final_snapshot": str(final_path),
        "threshold_percentage": threshold,
        "threshold_source": source,
        "brokers_over_threshold": over,
        "replicas_balanced": counts_balanced([b.replicas for b in loads]),
        "durations": durations,
    }
    path = atomic_write_json(Path(staged_dir) / VERIFICATION_FILE, report)
    log.info("final verification: %s; brokers over threshold: %s; durations: %s", verdict["status"], over, durations)
    if verdict["status"] != "complete":
        raise RebalanceError(f"final verification failed: {'; '.join(verdict['problems'][:10])}; see {path}")
    return str(path)


def _responder(decision: Mapping[str, Any] | None) -> str:
    if not decision:
        return "unknown"
    user = decision.get("responded_by") or {}
    if isinstance(user, Mapping):
        return str(user.get("name") or user.get("id") or "unknown")
    return str(user)


def finish(run: Mapping[str, str], staged_dir: str | None, decision: Mapping[str, Any] | None) -> dict[str, Any]:
    """Always runs: records a Reject beside the plan and says where everything is."""
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
            out["report"] = str(write_plan_report(staged, Path(final)))
    else:
        out["outcome"] = "staged (dry run)"
    log.info("run finished: %s", out)
    return out
