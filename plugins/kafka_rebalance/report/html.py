"""``report.html``: one static, offline file that shows what a plan does to a cluster.

Inputs are the plan directory (docs/PLAN_FORMAT.md), the snapshot it was planned from,
and optionally the snapshot taken after execution and the executor's batch times. The
page holds per-broker bars before / projected / after (replicas, leaders, preferred
leaders, bytes), Kafka's leader imbalance ratio per broker against the threshold, the
batch timeline, moves and bytes against their lower bounds, and the validation verdict
with a relative link to the Data Docs. Charts are inline SVG, styles inline, no script
and no network: the file can be mailed, attached to a ticket or opened from a share.

Same inputs give byte-identical output (no clock, no random ids).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from markupsafe import Markup

from kafka_rebalance.atomic import atomic_write
from kafka_rebalance.balance import count_bounds
from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.estimates import (
    DEFAULT_MODE,
    MODE_LABELS,
    TENTHS,
    PlanEstimate,
    gap_line,
    mode_that_runs,
    plan_estimate,
    run_facts,
    tenths,
)
from kafka_rebalance.executor.autothrottle import rate_history
from kafka_rebalance.executor.control import read_control
from kafka_rebalance.executor.progress import read_progress
from kafka_rebalance.metrics import BrokerLoad, broker_loads
from kafka_rebalance.plan_dir import (
    DATA_DOCS_DIR,
    LEDGER_FILE,
    PLAN_FILE,
    REPORT_FILE,
    PlanDirError,
    read_manifest,
    read_validation_verdict,
)
from kafka_rebalance.plan_dir import VALIDATION_RESULT as _RESULT
from kafka_rebalance.plan_manifest import Plan, load_plan
from kafka_rebalance.report import charts
from kafka_rebalance.report.templating import environment
from kafka_rebalance.snapshot import Snapshot, load_snapshot
from kafka_rebalance.units import human_rate, human_seconds
from kafka_rebalance.userinput import InputError, check_output_file, finite_number, read_json

DATA_DOCS = Path(DATA_DOCS_DIR) / "index.html"
VALIDATION_RESULT = Path(_RESULT)
METRICS = ("replicas", "leaders", "preferred_leaders", "size_bytes")


class ReportError(RebalanceError):
    """An input of the report is missing or malformed."""


# --------------------------------------------------------------------------- inputs


def _read_json(path: Path, what: str) -> Any:
    try:
        return read_json(path, what)
    except InputError as exc:
        raise ReportError(str(exc)) from None


def _field(obj: Any, key: str, where: str, source: Path, kind: type | tuple[type, ...]) -> Any:
    value = obj.get(key) if isinstance(obj, dict) else None
    ok = isinstance(value, kind) and not (isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)))
    if not ok:
        want = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise ReportError(f"{source}: {where}{key}: expected {want}, got {json.dumps(value, default=str)}")
    return value


def _number(obj: Any, key: str, where: str, source: Path) -> float:
    value = _field(obj, key, where, source, (int, float))
    if isinstance(value, float) and not math.isfinite(value) or value < 0:
        raise ReportError(f"{source}: {where}{key}: expected a non-negative number, got {value}")
    return float(value)


@dataclass(frozen=True, slots=True)
class Figures:
    """What plan.json's summary says the plan does, checked: the numbers the page draws."""

    summary: dict[str, Any]
    projected: dict[int, dict[str, int]]  # broker id -> METRICS after the plan


def load_report_plan(plan_dir: Path) -> tuple[Plan, Figures]:
    """The plan (hash verified, as the executor reads it; any verdict) and its summary's figures."""
    try:
        plan = load_plan(plan_dir, require_passed=False)
    except PlanDirError as exc:
        raise ReportError(str(exc)) from None
    src = plan_dir / PLAN_FILE
    summary = _field(plan.manifest, "summary", "", src, dict)
    for key in ("replica_moves", "bytes_moved", "estimated_seconds"):
        _number(summary, key, "summary.", src)
    bounds = _field(summary, "lower_bounds", "summary.", src, dict)
    for key in ("replica_moves", "bytes_moved"):
        _number(bounds, key, "summary.lower_bounds.", src)
    projected: dict[int, dict[str, int]] = {}
    for i, row in enumerate(_field(summary, "projected", "summary.", src, list)):
        where = f"summary.projected[{i}]."
        bid = _field(row, "broker_id", where, src, int)
        if bid in projected:
            raise ReportError(f"{src}: {where}broker_id: broker {bid} is listed twice")
        projected[bid] = {m: int(_number(row, m, where, src)) for m in METRICS}
    for i, b in enumerate(plan.batches):
        if b.estimated_seconds is None or b.bytes is None:
            raise ReportError(f"{src}: batches[{i}]: estimated_seconds and bytes must be numbers")
    return plan, Figures(summary, projected)


def validation_verdict(plan: Plan) -> dict[str, Any]:
    """The verdict's status, and whether it judged this plan (a verdict for an edited plan.json does not count)."""
    try:
        verdict = read_validation_verdict(plan.path)
    except PlanDirError:
        return {"status": "unreadable", "for_this_plan": False}
    if verdict is None:
        return {"status": "pending", "for_this_plan": False}
    return {"status": verdict.status, "for_this_plan": verdict.plan_hash == plan.plan_hash}


def _seconds(value: Any, where: str) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    raise ReportError(f"ledger: {where}: expected an ISO-8601 time or epoch seconds, got {json.dumps(value, default=str)}")


def actual_batch_times(ledger: Mapping[str, Any] | None, batch_ids: Sequence[str]) -> dict[str, tuple[float, float]] | None:
    """(start, duration) per finished batch, in seconds from the first batch's start.

    Accepts ``{batch_id: {"started_at": ..., "finished_at": ...}}`` or a whole executor
    ledger whose ``batches`` holds such entries; batches without both times are left out.
    """
    if not ledger:
        return None
    entries: Mapping[str, Any] = ledger["batches"] if isinstance(ledger.get("batches"), Mapping) else ledger
    times: dict[str, tuple[float, float]] = {}
    for bid in batch_ids:
        entry = entries.get(bid)
        if not isinstance(entry, Mapping) or entry.get("started_at") is None or entry.get("finished_at") is None:
            continue
        start = _seconds(entry["started_at"], f"{bid}.started_at")
        end = _seconds(entry["finished_at"], f"{bid}.finished_at")
        if end < start:
            raise ReportError(f"ledger: {bid}.finished_at: {entry['finished_at']} is before started_at {entry['started_at']}")
        times[bid] = (start, end - start)
    if not times:
        return None
    origin = min(s for s, _ in times.values())
    return {b: (s - origin, d) for b, (s, d) in times.items()}


def read_execution(plan_dir: Path, plan: Plan) -> dict[str, Any]:
    """The execution so far: its progress (executor/progress.py, as status and the execution page read it),
    the operators' requests (control.json) and the holds (ledger.json).

    What cannot be read is said on the page ("unreadable: ..."), never a failed report: the report
    is most needed when something went wrong.
    """
    # A staged plan (plans/<cluster>/<hash16>/) is served by the plugin at .../plans/<cluster>/<hash16>/report.html,
    # beside its execution page at .../control/<cluster>/<hash16>.
    staged = re.fullmatch(r"[0-9a-f]{16}", plan_dir.name) is not None and plan.plan_hash.startswith(plan_dir.name)
    link = f"../../../control/{quote(plan_dir.parent.name)}/{plan_dir.name}" if staged else None
    out: dict[str, Any] = {"requests": [], "holds": [], "progress": None, "problem": None, "control_link": link,
                           "ledger": None}
    try:
        out["progress"] = read_progress(plan_dir, plan)
        out["requests"] = [r.as_json() for r in read_control(plan_dir, plan.plan_hash).requests]
    except PlanDirError as exc:
        out["problem"] = f"unreadable: {exc}"
    ledger_path = plan_dir / LEDGER_FILE
    if ledger_path.exists():
        try:
            ledger = read_json(ledger_path, LEDGER_FILE)
        except InputError as exc:
            out["problem"] = f"ledger unreadable: {exc}"
            return out
        if isinstance(ledger, dict):
            out["holds"] = [h for h in ledger.get("holds") or [] if isinstance(h, dict)]
            out["ledger"] = ledger
    return out


def _clock(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def step_actuals(plan: Plan, ledger: Mapping[str, Any] | None, mode: str) -> dict[str, float]:
    """Each batch's actual counterpart of its part of the headline (estimates.StepEstimate), on the admin's clock.

    As waves: the wave's own time. Continuously: how much later the run's latest finished move ended after this
    batch's last move than before it, from the run's start (the estimate's share, measured the same way). Only
    batches whose moves all finished in the ledger have one."""
    if not ledger:
        return {}
    raw = ledger.get("batches")
    entries: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    if mode == "batches":
        return {b.id: float(e["actual_seconds"]) for b in plan.batches
                if isinstance(e := entries.get(b.id), Mapping) and e.get("state") == "finished"
                and _clock(e.get("actual_seconds")) is not None}
    cont = ledger.get("continuous")
    start = _clock(cont.get("started_clock")) if isinstance(cont, Mapping) else None
    if plan.schedule is None or start is None or not isinstance(cont, Mapping):
        return {}
    steps: Mapping[str, Any] = cont.get("steps") or {}
    ends: dict[str, float | None] = {b.id: 0.0 for b in plan.batches}
    for m in plan.schedule.moves:
        e = steps.get(str(m.id))
        end = _clock(e.get("ended_clock")) if isinstance(e, Mapping) and e.get("state") == "finished" else None
        prev = ends.get(m.batch)
        ends[m.batch] = None if end is None or prev is None else max(prev, end - start)
    out, latest = {}, 0
    for b in plan.batches:
        end = ends.get(b.id)
        if end is None:
            continue
        t = max(latest, tenths(end))
        out[b.id] = (t - latest) / TENTHS
        latest = t
    return out


def estimate_gap(plan: Plan, estimate: PlanEstimate, ledger: Mapping[str, Any] | None, actuals: Mapping[str, float]) -> str | None:
    """One line on a large gap between the headline and what the finished run took, from the run's records."""
    if not ledger or estimate.seconds is None or not estimate.steps or len(actuals) < len(estimate.steps):
        return None
    raw = ledger.get("batches")
    batches: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    cont = ledger.get("continuous")
    if estimate.mode == "continuous" and isinstance(cont, Mapping):
        entries: list[Mapping[str, Any]] = [cont]
        actual = _clock(cont.get("actual_seconds"))
        waves = 0
    else:
        entries = [e for b in plan.batches if isinstance(e := batches.get(b.id), Mapping)]
        actual = sum(actuals.values())
        waves = sum(1 for b in plan.batches if b.kind == "move")
    if actual is None:
        return None
    moved = sum(b.bytes or 0 for b in plan.batches)
    return gap_line(estimate.seconds, actual, moved, run_facts(entries, plan.options), waves)


def read_validation(plan_dir: Path, plan: Plan) -> dict[str, Any]:
    """What validate recorded: validation/verdict.json and, when present, result.json's suites."""
    out: dict[str, Any] = {**validation_verdict(plan), "suites": [], "failures": []}
    result_path = plan_dir / VALIDATION_RESULT
    if result_path.is_file():
        result = _read_json(result_path, "validation result")
        suites = result.get("suites") if isinstance(result, dict) else None
        for s in suites if isinstance(suites, list) else []:
            if not isinstance(s, dict):
                continue
            out["suites"].append({
                "name": str(s.get("suite", "?")), "success": bool(s.get("success")),
                "evaluated": s.get("evaluated", "?"), "passed": s.get("passed", "?"),
            })
            for e in s.get("expectations") or []:
                if isinstance(e, dict) and not e.get("success", True):
                    rows = [str(r) for r in (e.get("offending_rows") or [])]
                    out["failures"].append({
                        "suite": str(s.get("suite", "?")), "type": str(e.get("type", "?")),
                        "description": str(e.get("description", "")), "count": e.get("unexpected_count", len(rows)),
                        "rows": rows[:10], "more": max(0, len(rows) - 10),
                    })
    return out


# --------------------------------------------------------------------------- figures


@dataclass(slots=True)
class BrokerRow:
    broker_id: int
    rack: str | None
    alive: bool | None
    before: dict[str, int] = field(default_factory=dict)
    projected: dict[str, int] | None = None
    final: dict[str, int] | None = None
    ratio_before: float | None = None
    ratio_final: float | None = None


def _metrics(load: BrokerLoad) -> dict[str, int]:
    return {"replicas": load.replicas, "leaders": load.leaders,
            "preferred_leaders": load.preferred_partitions, "size_bytes": load.size_bytes}


def broker_rows(snapshot: Snapshot, projected: Mapping[int, dict[str, int]], final: Snapshot | None) -> list[BrokerRow]:
    before = {b.broker_id: b for b in broker_loads(snapshot)}
    after = {b.broker_id: b for b in broker_loads(final)} if final is not None else {}
    ids = sorted(set(before) | set(projected) | set(after))
    rows = []
    for bid in ids:
        b, a = before.get(bid), after.get(bid)
        rows.append(BrokerRow(
            broker_id=bid,
            rack=b.rack if b else (a.rack if a else None),
            alive=b.alive if b else (a.alive if a else None),
            before=_metrics(b) if b else dict.fromkeys(METRICS, 0),
            projected=projected.get(bid),
            final=_metrics(a) if a else (dict.fromkeys(METRICS, 0) if final is not None else None),
            ratio_before=b.imbalance_ratio if b else None,
            ratio_final=a.imbalance_ratio if a else None,
        ))
    return rows


def _continuous_caption(summary: dict[str, Any], efficiency: float) -> str:
    c = summary.get("continuous")
    if not isinstance(c, dict):
        return ""
    rate = "the throttle" if efficiency == 1 else f"the {efficiency:g} of the throttle the brokers deliver"
    return (f" The continuous schedule (schedule.json) is estimated at {human_seconds(float(c['estimated_seconds']))}"
            f" against a physical bound of {human_seconds(float(c['physical_bound_seconds']))}"
            f" (the busiest broker's bytes at {rate}): {c['ratio_to_bound']}x.")


def byte_unit(max_bytes: float) -> tuple[float, str]:
    for power, unit in ((4, "TiB"), (3, "GiB"), (2, "MiB"), (1, "KiB")):
        if max_bytes >= 1024**power:
            return float(1024**power), unit
    return 1.0, "bytes"


def _eligible(rows: list[BrokerRow], plan: Plan) -> list[BrokerRow]:
    decommission = set(plan.options.get("decommission_brokers") or [])
    return [r for r in rows if r.alive is not False and r.broker_id not in decommission]


def goal_charts(summary: Mapping[str, Any], final: Snapshot | None) -> list[dict[str, Any]]:
    """The charts each goal of the plan draws itself (``Goal.report_charts``, from its ``summary.goals`` entry)."""
    from kafka_rebalance.planner.goals.registry import goal_class, names

    known = set(names())
    entries = summary.get("goals")
    out: list[dict[str, Any]] = []
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, Mapping) and entry.get("name") in known:
            out.extend(goal_class(str(entry["name"])).report_charts(entry, final, summary))
    return out


def build_charts(rows: list[BrokerRow], plan: Plan, summary: dict[str, Any], threshold: float,
                 actual: dict[str, tuple[float, float]] | None, has_final: bool,
                 estimate: PlanEstimate | None = None, final: Snapshot | None = None) -> list[dict[str, Any]]:
    ids = [r.broker_id for r in rows]
    eligible = _eligible(rows, plan)
    out: list[dict[str, Any]] = []

    def series(metric: str) -> list[charts.Series]:
        s = [charts.Series("before", [r.before[metric] for r in rows]),
             charts.Series("projected", [r.projected[metric] if r.projected else None for r in rows])]
        if has_final:
            s.append(charts.Series("final", [r.final[metric] if r.final else None for r in rows]))
        return s

    for metric, title in (("replicas", "Replicas per broker"), ("leaders", "Leaders per broker"),
                          ("preferred_leaders", "Preferred leaders per broker (first replica)")):
        total = sum(r.before[metric] for r in rows)
        lo, hi = count_bounds(total, len(eligible))
        out.append({"id": metric.replace("_", "-"), "title": title,
                    "caption": f"Shaded: the balanced range [{lo}, {hi}] per eligible broker.",
                    "svg": charts.broker_bars(metric.replace("_", "-"), title, ids, series(metric), (lo, hi),
                                              "balanced range")})
    sizes = [r.before["size_bytes"] for r in eligible]
    tolerance = float(plan.options.get("byte_tolerance", 0.1) or 0.0)
    below_given = plan.options.get("byte_tolerance_below")
    below = tolerance if below_given is None else float(below_given)
    band = f"mean ± {tolerance:.0%}" if below == tolerance else f"mean - {below:.0%} .. + {tolerance:.0%}"
    mean = sum(r.before["size_bytes"] for r in rows) / len(eligible) if eligible else 0.0
    div, unit = byte_unit(max([mean] + sizes + [r.projected["size_bytes"] for r in rows if r.projected]))
    out.append({"id": "bytes", "title": "Bytes per broker",
                "caption": f"Shaded: {band} (the byte tolerance).",
                "svg": charts.broker_bars("bytes", "Bytes per broker", ids, series("size_bytes"),
                                          (mean * (1 - below), mean * (1 + tolerance)), band, div, unit)})
    ratio_series = [charts.Series("before", [r.ratio_before for r in rows])]
    if has_final:
        ratio_series.append(charts.Series("final", [r.ratio_final for r in rows]))
    out.append({"id": "imbalance", "title": "Leader imbalance ratio per broker",
                "caption": f"Dashed line: the threshold ({threshold:g}%). Kafka elects preferred leaders on a broker "
                           "whose ratio exceeds it; brokers without preferred partitions show no bar.",
                "svg": charts.imbalance_ratios("imbalance", ids, ratio_series, threshold)})
    if plan.batches:
        start, estimated = 0.0, []
        parts = {s.id: s.seconds for s in estimate.steps} if estimate is not None else {}
        for b in plan.batches:
            seconds = parts.get(b.id, b.estimated_seconds or 0.0)  # load_report_plan made sure each batch has one
            estimated.append((start, seconds))
            start += seconds
        act = [actual.get(b.id) for b in plan.batches] if actual else None
        what = ("each batch's share of the continuous schedule (how much later the run's last move ends after the "
                "batch's), back to back" if parts and estimate is not None and estimate.mode == "continuous"
                else "batches back to back at the throttle rate")
        out.append({"id": "timeline", "title": "Batch timeline",
                    "caption": f"Estimated: {what}."
                               + _continuous_caption(summary, float(plan.options.get("throttle_efficiency", 1.0)))
                               + (" Actual: from the executor's ledger." if actual else " Not executed yet."),
                    "svg": charts.batch_timeline("timeline", [b.id for b in plan.batches], estimated, act)})
    out.extend(goal_charts(summary, final))
    s, lb = summary, summary["lower_bounds"]
    byte_bound, caption = int(lb["bytes_moved"]), "Lower bound: what any plan reaching balance must move at least."
    opt = s.get("optimizer")
    if isinstance(opt, dict) and isinstance(opt.get("bytes_bound"), int):
        byte_bound = max(byte_bound, opt["bytes_bound"])
        gap = "unknown" if opt.get("gap_percent") is None else f"at most {float(opt['gap_percent']):.2f} %"
        caption += f" Bytes: {gap} above the fewest possible (optimizer {opt.get('used')}, {opt.get('exact_status')})."
    out.append({"id": "lower-bounds", "title": "Moves and bytes against their lower bounds",
                "caption": caption,
                "svg": charts.against_lower_bounds("lower-bounds", (int(s["replica_moves"]), int(lb["replica_moves"])),
                                                   (int(s["bytes_moved"]), byte_bound),
                                                   byte_unit(max(s["bytes_moved"], byte_bound)))})
    for c in out:
        c["svg"] = Markup(c["svg"])  # matplotlib escapes its own text; nothing user-supplied is drawn
    return out


def auto_throttle_charts(ledger: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The rates ``execute --throttle auto`` used over time, per broker, when the ledger records any."""
    history = rate_history(ledger)
    if history is None:
        return []
    svg = charts.throttle_over_time("auto-throttle", history.brokers, history.floor, history.ceiling, None,
                                    byte_unit(max(history.ceiling, 1)))
    return [{"id": "auto-throttle", "title": "Replication throttle over time (--throttle auto)",
             "caption": f"Each broker's rate follows its network capacity less its live traffic ({history.traffic}), "
                        f"within the floor {human_rate(history.floor)} and the ceiling {human_rate(history.ceiling)} "
                        "(the plan's approved throttle at most); a step is a change recorded in the ledger.",
             "svg": Markup(svg)}]


# --------------------------------------------------------------------------- page


def write_report(
    plan_dir: str | Path,
    snapshot_path: str | Path,
    out_path: str | Path | None = None,
    final_snapshot_path: str | Path | None = None,
    ledger: Mapping[str, Any] | None = None,
    mode: str = DEFAULT_MODE,
) -> Path:
    """Write the report (default ``PLAN_DIR/report.html``) and return its path.

    ``ledger``: ``{batch_id: {"started_at": ISO-8601 or epoch, "finished_at": ...}}``,
    or an executor ledger with those entries under ``batches``. ``mode``: the executor mode configured,
    whose estimate is the headline until the ledger shows the mode the plan ran in.
    """
    plan_dir = Path(plan_dir)
    plan, figures = load_report_plan(plan_dir)
    snapshot = load_snapshot(snapshot_path)
    if snapshot.fingerprint() != plan.snapshot_sha256:
        raise ReportError(
            f"{snapshot_path}: not the snapshot this plan was made from (fingerprint {snapshot.fingerprint()[:16]}…, "
            f"{plan_dir / PLAN_FILE} snapshot.sha256 {plan.snapshot_sha256[:16]}…)")
    final = load_snapshot(final_snapshot_path) if final_snapshot_path is not None else None
    out = check_output_file(out_path, "--out") if out_path is not None else plan_dir / REPORT_FILE
    threshold = plan.options.get("threshold_percentage")
    if not finite_number(threshold, 0, 100):
        raise ReportError(f"{plan_dir / PLAN_FILE}: options.threshold_percentage: expected a number 0..100, got {json.dumps(threshold)}")
    rows = broker_rows(snapshot, figures.projected, final)
    actual = actual_batch_times(ledger, [b.id for b in plan.batches])
    docs = plan_dir / DATA_DOCS
    execution = read_execution(plan_dir, plan)
    estimate = plan_estimate(plan.manifest, mode_that_runs(execution["ledger"], [b.id for b in plan.batches if b.kind == "move"],
                                                           mode))
    step_actual = step_actuals(plan, execution["ledger"], estimate.mode)
    out.parent.mkdir(parents=True, exist_ok=True)
    page = environment().get_template("report.html.j2").render(
        plan=plan,
        summary=figures.summary,
        snapshot=snapshot,
        final=final,
        rows=rows,
        threshold=float(threshold),
        charts=build_charts(rows, plan, figures.summary, float(threshold), actual, final is not None, estimate, final)
        + auto_throttle_charts(execution["ledger"]),
        actual=actual or {},
        validation=read_validation(plan_dir, plan),
        execution=execution,
        estimate=estimate,
        step_estimates={s.id: s for s in estimate.steps},
        step_actual=step_actual,
        estimate_gap=estimate_gap(plan, estimate, execution["ledger"], step_actual),
        mode_labels=MODE_LABELS,
        data_docs=Path(os.path.relpath(docs.resolve(), out.parent.resolve())).as_posix() if docs.is_file() else None,
        metrics=METRICS,
    )
    atomic_write(out, page.encode("utf-8"))
    return out


def ledger_times(plan_dir: Path) -> dict[str, dict[str, float]] | None:
    """Batch start/finish on the executor's clock, from DIR/ledger.json when the plan ran."""
    from kafka_rebalance.executor.ledger import Ledger

    if not (plan_dir / LEDGER_FILE).exists():
        return None
    ledger = Ledger.open(plan_dir, str(read_manifest(plan_dir).get("plan_hash") or ""))
    number = (int, float)
    return {
        bid: {"started_at": e["started_clock"], "finished_at": e["started_clock"] + e["actual_seconds"]}
        for bid, e in ledger.data["batches"].items()
        if isinstance(e.get("started_clock"), number) and isinstance(e.get("actual_seconds"), number)
    }
