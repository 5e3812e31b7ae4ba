"""The text an approver reads before a plan runs (Markdown, as Airflow's HITL form renders it)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from kafka_rebalance.estimates import DEFAULT_MODE, MODE_LABELS, PlanEstimate, plan_estimate
from kafka_rebalance.options import DEFAULT_MAX_PLAN_AGE_HOURS
from kafka_rebalance.orchestration.staging import REPORTS_URL_PREFIX
from kafka_rebalance.plan_approval import captured_at, leader_changes_text
from kafka_rebalance.plan_dir import DATA_DOCS_DIR, REPORT_FILE, RUNBOOK_FILE, validation_status
from kafka_rebalance.units import human_bytes, human_rate, human_seconds


def optimizer_line(summary: Mapping[str, Any]) -> str:
    """The proven distance from the fewest bytes, for plans that carry it (format 2 plans may not)."""
    opt = summary.get("optimizer")
    if not isinstance(opt, Mapping):
        return ""
    gap = "unknown (bound 0)" if opt.get("gap_percent") is None else f"at most {opt['gap_percent']:.2f} %"
    return (
        f"- Bytes above the fewest that reach this balance: {gap} "
        f"(certified bound {human_bytes(opt['bytes_bound'])}; optimizer {opt['used']}, {opt['exact_status']})\n"
    )


def relief_line(manifest: Mapping[str, Any]) -> str:
    """Relief mode in the approver's words (plan.json records ``relieve`` only when set)."""
    options = manifest.get("options") or {}
    if not options.get("relieve"):
        return ""
    return (f"- **Relief mode** (`--relieve`): only what brings every broker and log dir under "
            f"{100 * float(options['max_disk_usage']):g} % of its disk (and under the selected network limits) moves, "
            "fewest bytes first; no balancing goal ran, brokers under their limits only receive, and no leader "
            "changes but a moved leader's\n")


def goal_lines(summary: Mapping[str, Any]) -> str:
    """Each goal the plan ran, its figure before and after and whether it is met (plans that carry them)."""
    goals = summary.get("goals")
    if not isinstance(goals, list):
        return ""
    out = []
    for g in goals:
        after = g["after"]
        verdict = "met" if g["reached"] else f"NOT met (brokers {', '.join(map(str, after['offenders'])) or '-'})"
        out.append(f"- Goal {g['name']}{' (hard)' if g['hard'] else ''}: {g['before']['value']:g} -> {after['value']:g}, "
                   f"{verdict}\n")
        line = _goal_line(g)
        if line:
            out.append(f"  - {line}\n")
    return "".join(out)


def _goal_line(entry: Mapping[str, Any]) -> str:
    """The goal's own words for the approver (``Goal.approval_line``), for goals this version knows."""
    from kafka_rebalance.planner.goals.registry import goal_class, names

    return goal_class(entry["name"]).approval_line(entry) if entry.get("name") in names() else ""


def duration_line(manifest: Mapping[str, Any], mode: str) -> str:
    """How long the run should take: the figure of the mode that runs first, the other mode's labelled, and
    what physics allows (plans that carry a continuous schedule)."""
    summary, options, batches = manifest["summary"], manifest["options"], len(manifest["batches"])
    estimate = plan_estimate(manifest, mode)
    throttle = human_rate(options["throttle_bytes_per_sec"])
    efficiency = options.get("throttle_efficiency", 1.0)
    fixed = options.get("move_fixed_seconds")
    model = f"{throttle} per broker" + ("" if efficiency == 1 else f" x {efficiency:g} delivered") + \
        ("" if fixed is None else f", {fixed:g} s fixed per move")
    line = f"- Estimated duration: **{estimate.text()}**; {batches} batches, at {model}\n"
    c = summary.get("continuous")
    if isinstance(c, Mapping):
        line += (f"- Physical bound: {human_seconds(float(c['physical_bound_seconds']))} (busiest broker's bytes at the "
                 f"delivered rate); the continuous schedule is {c['ratio_to_bound']}x of it\n")
    return line


SHOWN_STEPS = 20


def step_rows(batches: list[Mapping[str, Any]], estimate: PlanEstimate) -> tuple[str, str]:
    """The batch table (the first ``SHOWN_STEPS``) with each batch's part of the headline, and the line for the rest.

    The estimates column adds up to the headline, shown on the last row (a plan made before the parts were
    recorded to sum shows each batch's figure as a wave, labelled so)."""
    parts = {p.id: p for p in estimate.steps}
    column = f"estimate ({estimate.step_label})" if parts else "estimate (as a wave)"
    # "done by": the parts' running sum, when the batch's last move is expected to end (a share of 0 s is a batch
    # whose moves all end while earlier batches' still run).
    out = [f"| batch | kind | partitions | moves | bytes | {column} | done by |", "|---|---|---|---|---|---|---|"]
    for b in batches[:SHOWN_STEPS]:
        part = parts.get(b["id"])
        seconds = part.seconds if part is not None else b["estimated_seconds"]
        done_by = human_seconds(part.done_by) if part is not None else "–"
        out.append(f"| {b['id']} | {b['kind']} | {b['partitions']} | {b['replica_moves']} | {human_bytes(b['bytes'])} | "
                   f"{seconds:,.1f} s | {done_by} |")
    rest = batches[SHOWN_STEPS:]
    more = ""
    if rest:
        hidden = sum(parts[b["id"]].seconds if parts else b["estimated_seconds"] for b in rest)
        more = f"\n\n…and {len(rest)} more batches ({hidden:,.1f} s of the estimate)."
    if parts and estimate.seconds is not None:
        out.append(f"| all | | | | | **{estimate.seconds:,.1f} s** ({MODE_LABELS[estimate.mode]}) | "
                   f"{human_seconds(estimate.seconds)} |")
    return "\n".join(out), more


def snapshot_age_line(manifest: Mapping[str, Any], now: datetime,
                      max_age_seconds: float | None = DEFAULT_MAX_PLAN_AGE_HOURS * 3600) -> str:
    """The snapshot's gather time, its age at ``now`` (when staged), and until when approval accepts it: the
    same limit ``kafka-rebalance approve`` and the DAG's approval check, so the text never promises what they
    refuse. ``max_age_seconds`` None: a simulated cluster, whose clock does not age in wall time (no limit)."""
    when = captured_at(manifest)
    if when is None:
        return ("- **Snapshot age unknown**: the snapshot records no gather time (plan.json snapshot.captured_at); "
                "`kafka-rebalance approve` refuses such a plan: gather again before approving\n")
    age = (now - when).total_seconds()
    line = f"- Snapshot gathered {manifest['snapshot']['captured_at']}, {human_seconds(age)} before this plan was staged"
    if max_age_seconds is None:
        return f"{line}; a simulated cluster changes only under its own plans, so no plan-age limit applies\n"
    limit = human_seconds(max_age_seconds)
    if age > max_age_seconds:
        return (f"{line}: **STALE**, over the maximum plan age of {limit}; the cluster has likely changed since, and "
                "approval is refused here and by `kafka-rebalance approve`: reject, gather again and re-plan\n")
    deadline = (when + timedelta(seconds=max_age_seconds)).astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    return f"{line}; approvable until {deadline} (the maximum plan age of {limit}, here and in `kafka-rebalance approve`)\n"


def approval_body(staged: Path, manifest: Mapping[str, Any], now: datetime | None = None, mode: str = DEFAULT_MODE,
                  max_age_seconds: float | None = DEFAULT_MAX_PLAN_AGE_HOURS * 3600, window: str | None = None) -> str:
    """What the approver reads in Airflow's HITL form: the plan's figures, links, and its first batches.

    ``now``: when the form is made (staging time), for the snapshot's age. ``mode``: the cluster's executor
    mode, whose estimate is the headline. ``window``: when the run may move data (``WindowPolicy.describe``),
    so the approver knows when what they approve will happen.
    """
    s = manifest["summary"]
    lb = s["lower_bounds"]
    estimate = plan_estimate(manifest, mode)
    rows, more = step_rows(manifest["batches"], estimate)
    validation = validation_status(staged)
    base = f"{REPORTS_URL_PREFIX}/plans/{staged.parent.name}/{staged.name}"
    return (
        f"**Plan {manifest['plan_hash'][:16]}** for cluster `{manifest['cluster_id']}` — validation **{validation}**\n\n"
        f"- {s['replica_moves']} replica moves (lower bound {lb['replica_moves']}), "
        f"{human_bytes(s['bytes_moved'])} to copy (lower bound {human_bytes(lb['bytes_moved'])})\n"
        f"{snapshot_age_line(manifest, now or datetime.now(UTC), max_age_seconds)}"
        f"{optimizer_line(s)}"
        f"{relief_line(manifest)}"
        f"{goal_lines(s)}"
        f"- {s['reorders']} metadata-only reorders, {s['leader_elections']} preferred leader elections"
        f"{leader_changes_text(s)}\n"
        f"{duration_line(manifest, mode)}"
        f"{f'- Execution window: {window}' + chr(10) if window else ''}"
        f"- Report: [{REPORT_FILE}]({base}/{REPORT_FILE}) · "
        f"[Data Docs]({base}/{DATA_DOCS_DIR}/index.html) · "
        f"[{RUNBOOK_FILE}]({base}/{RUNBOOK_FILE})\n"
        f"- Plan files: `{staged}`\n\n"
        f"{rows}{more}\n\n"
        f"Approve to execute it ({'continuously, following schedule.json' if estimate.mode == 'continuous' else 'batch by batch, as waves'}; "
        "throttles are always restored); "
        "Reject keeps the plan as rejected."
    )
