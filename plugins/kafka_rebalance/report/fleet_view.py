"""The fleet page's view: every configured cluster with its last analysis, its imbalance over time and its plans.

``read_fleet`` is the I/O edge: it finds each cluster's analyses (the Spark job's summary.json and
broker_metrics.parquet, analysis/summary_file.py) under the data root, and its staged plans with their progress
(``read_progress``, the one progress model). ``fleet_view`` is pure: those inputs in, typed rows and inline SVG
charts (report/charts.py) out, for ``templates/fleet.html.j2``.

An analysis is one entry of a summary.json: the fleet DAG's (``runs/_fleet/<run>/analysis``: every cluster at once)
or a cluster DAG's own (``runs/<cluster>/<run>/analysis``: the same Spark job on that cluster alone, before it
plans). Leaving the latter out would say "no analysis yet" of a cluster its own DAG analysed an hour ago. An
analysis is dated by its summary.json's write: the file records no time of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from kafka_rebalance.analysis.summary_file import SUMMARY_FILE, read_broker_metrics, read_summaries
from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.executor.progress import ExecState, Progress, read_progress
from kafka_rebalance.plan_dir import PLAN_FILE, read_approval
from kafka_rebalance.report.progress_view import eta_text, headline

FLEET_RUNS = "_fleet"  # runs/_fleet/<run>: the fleet DAG's run directories (orchestration/fleet.py)
HISTORY_LIMIT = 48  # analyses drawn over time per cluster (a day of half-hourly runs)
DONE_LIMIT = 10  # finished, failed or stopped plans listed per cluster, newest first


@dataclass(frozen=True, slots=True)
class BrokerLoad:
    """One broker's row of the analysis (broker_metrics.parquet)."""

    broker_id: int
    alive: bool
    replicas: int
    leaders: int
    size_bytes: int
    imbalance_ratio: float | None  # Kafka's: preferred partitions it does not lead / its preferred partitions
    exceeds_threshold: bool


@dataclass(frozen=True, slots=True)
class Analysis:
    """One cluster's entry of one summary.json."""

    run: str  # where it comes from: "fleet run <id>" or "<cluster> run <id>"
    written_at: datetime  # UTC, when the Spark job wrote the summary
    balanced: bool | None
    threshold_percentage: float | None
    max_imbalance_ratio: float | None
    brokers_over_threshold: tuple[int, ...]
    live_brokers: int | None
    partitions: int | None
    goals_not_met: tuple[str, ...] = ()  # the goals the analysis judged unmet (why it is not balanced)
    byte_mean: float | None = None  # the live brokers' mean bytes
    byte_tolerance: float | None = None  # the fraction of the mean a broker may be off by (the bytes goal's)
    brokers: tuple[BrokerLoad, ...] = ()  # read for the newest analysis only


@dataclass(frozen=True, slots=True)
class StagedPlan:
    """A staged plan directory as read: its progress (None when unreadable, with why)."""

    plan: str  # the directory's name (the plan hash's first 16 hex digits)
    progress: Progress | None
    decision: str | None  # approval.json's: approved, rejected, or None (not decided)
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class ClusterInputs:
    cluster_id: str
    dag_id: str
    source: str
    analyses: tuple[Analysis, ...]  # newest first
    plans: tuple[StagedPlan, ...]  # newest first
    problems: tuple[str, ...] = ()  # analyses that could not be read, said once each


class PlanGroup(StrEnum):
    STAGED = "staged"  # not started (waiting for approval, or approved and not run yet)
    EXECUTING = "executing"  # running or paused
    DONE = "done"  # finished, failed or stopped: nothing runs until someone acts


_GROUP = {ExecState.NOT_STARTED: PlanGroup.STAGED, ExecState.RUNNING: PlanGroup.EXECUTING,
          ExecState.PAUSED: PlanGroup.EXECUTING, ExecState.FINISHED: PlanGroup.DONE,
          ExecState.FAILED: PlanGroup.DONE, ExecState.STOPPED: PlanGroup.DONE}  # fmt: skip


@dataclass(frozen=True, slots=True)
class PlanRow:
    plan: str
    state: str  # the progress state, or "unreadable"
    headline: str  # progress_view.headline, or why the plan cannot be read
    percent: float | None
    eta: str | None
    decision: str


@dataclass(frozen=True, slots=True)
class ClusterView:
    cluster_id: str
    dag_id: str
    source: str
    last: Analysis | None
    verdict: str  # one line: the last analysis' verdict, or that there is none yet
    imbalance_chart: str | None  # per-broker leader imbalance with the threshold line (SVG)
    bytes_chart: str | None  # per-broker bytes (SVG)
    history_chart: str | None  # the largest broker imbalance of each past analysis, with the threshold (SVG)
    analyses: int  # how many analyses the history chart draws
    plans: Mapping[PlanGroup, tuple[PlanRow, ...]]
    problems: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FleetView:
    clusters: tuple[ClusterView, ...]


def _ratio_text(ratio: float | None) -> str:
    return "-" if ratio is None else f"{100 * ratio:.1f} %"


def _verdict(cluster_id: str, a: Analysis | None) -> str:
    if a is None:
        return f"No analysis of {cluster_id} yet: the fleet DAG (kafka_fleet_imbalance) or the cluster's own DAG writes one."
    over = ", ".join(map(str, a.brokers_over_threshold)) or "none"
    balanced = {True: "balanced", False: "NOT balanced", None: "balance unknown"}[a.balanced]
    if a.goals_not_met:
        balanced += f" (goals not met: {', '.join(a.goals_not_met)})"
    threshold = "-" if a.threshold_percentage is None else f"{a.threshold_percentage:g} %"
    return (f"{balanced}: largest broker leader imbalance {_ratio_text(a.max_imbalance_ratio)} against the threshold "
            f"{threshold}; brokers over it: {over} ({a.run}, {a.written_at:%Y-%m-%d %H:%M:%S} UTC)")


def _plan_row(p: StagedPlan) -> tuple[PlanGroup, PlanRow]:
    decision = p.decision or "not decided"
    if p.progress is None:
        return PlanGroup.STAGED, PlanRow(p.plan, "unreadable", p.problem or "unreadable", None, None, decision)
    return _GROUP[p.progress.state], PlanRow(p.plan, p.progress.state.value, headline(p.progress),
                                             p.progress.percent_bytes, eta_text(p.progress), decision)


def cluster_view(c: ClusterInputs) -> ClusterView:
    """One cluster's section of the page."""
    from kafka_rebalance.report import charts
    from kafka_rebalance.report.html import byte_unit

    last = c.analyses[0] if c.analyses else None
    imbalance = sizes = history = None
    slug = "".join(ch if ch.isalnum() else "-" for ch in c.cluster_id)
    if last is not None and last.brokers:
        ids = [b.broker_id for b in last.brokers]
        threshold = last.threshold_percentage if last.threshold_percentage is not None else 0.0
        imbalance = charts.imbalance_ratios(f"fleet-{slug}-imbalance", ids,
                                            [charts.Series("analysis", [b.imbalance_ratio for b in last.brokers])],
                                            threshold, value_labels=True)  # fmt: skip
        mean, tol = last.byte_mean, last.byte_tolerance
        band = None if mean is None or tol is None else (mean * (1 - tol), mean * (1 + tol))
        divisor, unit = byte_unit(max([b.size_bytes for b in last.brokers] + [band[1] if band else 0]))
        sizes = charts.broker_bars(f"fleet-{slug}-bytes", "Bytes per broker (replicas' log size)", ids,
                                   [charts.Series("analysis", [b.size_bytes for b in last.brokers])], band,
                                   f"mean ± {tol:.0%}" if tol is not None else "", divisor, unit)  # fmt: skip
    drawn = [a for a in reversed(c.analyses[:HISTORY_LIMIT]) if a.max_imbalance_ratio is not None]
    if drawn:
        thresholds = [a.threshold_percentage for a in drawn if a.threshold_percentage is not None]
        history = charts.imbalance_over_time(
            f"fleet-{slug}-history", [f"{a.written_at:%m-%d %H:%M}" for a in drawn],
            [100.0 * (a.max_imbalance_ratio or 0.0) for a in drawn], thresholds[-1] if thresholds else None)
    groups: dict[PlanGroup, list[PlanRow]] = {g: [] for g in PlanGroup}
    for p in c.plans:
        group, row = _plan_row(p)
        groups[group].append(row)
    return ClusterView(
        cluster_id=c.cluster_id, dag_id=c.dag_id, source=c.source, last=last, verdict=_verdict(c.cluster_id, last),
        imbalance_chart=imbalance, bytes_chart=sizes, history_chart=history, analyses=len(drawn),
        plans={g: tuple(rows[:DONE_LIMIT] if g is PlanGroup.DONE else rows) for g, rows in groups.items()},
        problems=c.problems,
    )


def fleet_view(clusters: Sequence[ClusterInputs]) -> FleetView:
    """The page: the clusters in the order the clusters file lists them."""
    return FleetView(tuple(cluster_view(c) for c in clusters))


# ----------------------------------------------------------------------------- reading (the I/O edge)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _analysis(entry: Mapping[str, Any], run: str, written_at: datetime) -> Analysis:
    over = entry.get("brokers_over_threshold")
    balanced = entry.get("balanced")
    raw_spread = entry.get("byte_spread")
    spread: Mapping[str, Any] = raw_spread if isinstance(raw_spread, Mapping) else {}
    raw_goals = entry.get("goals")
    goals: list[Any] = raw_goals if isinstance(raw_goals, list) else []
    return Analysis(
        run=run, written_at=written_at, balanced=balanced if isinstance(balanced, bool) else None,
        threshold_percentage=_number(entry.get("threshold_percentage")),
        max_imbalance_ratio=_number(entry.get("max_imbalance_ratio")),
        brokers_over_threshold=tuple(b for b in over if _int(b) is not None) if isinstance(over, list) else (),
        live_brokers=_int(entry.get("live_brokers")), partitions=_int(entry.get("partitions")),
        byte_mean=_number(spread.get("mean")), byte_tolerance=_number(spread.get("tolerance")),
        goals_not_met=tuple(str(g.get("name")) for g in goals if isinstance(g, Mapping) and g.get("reached") is False),
    )


def _broker(row: Mapping[str, Any]) -> BrokerLoad:
    return BrokerLoad(broker_id=int(row["broker_id"]), alive=bool(row.get("alive")), replicas=int(row.get("replicas") or 0),
                      leaders=int(row.get("leaders") or 0), size_bytes=int(row.get("size_bytes") or 0),
                      imbalance_ratio=_number(row.get("imbalance_ratio")),
                      exceeds_threshold=bool(row.get("exceeds_threshold")))  # fmt: skip


def _summaries(runs: Path, cluster_id: str) -> list[tuple[Path, str, float]]:
    """(analysis dir, what ran it, mtime) of every summary.json that may hold the cluster's analysis."""
    found = []
    for owner, label in ((FLEET_RUNS, "fleet run"), (cluster_id, f"{cluster_id} run")):
        for summary in (runs / owner).glob(f"*/analysis/{SUMMARY_FILE}") if (runs / owner).is_dir() else ():
            try:
                found.append((summary.parent, f"{label} {summary.parent.parent.name}", summary.stat().st_mtime))
            except OSError:
                continue  # removed while listed
    return found


def read_cluster(data_root: Path, cluster_id: str, dag_id: str, source: str) -> ClusterInputs:
    """One cluster's analyses (newest first, at most HISTORY_LIMIT) and staged plans (newest first)."""
    analyses: list[Analysis] = []
    problems: list[str] = []
    for directory, run, mtime in sorted(_summaries(data_root / "runs", cluster_id), key=lambda s: s[2], reverse=True):
        if len(analyses) == HISTORY_LIMIT:
            break
        try:
            entry = next((e for e in read_summaries(directory) if e.get("cluster_id") == cluster_id), None)
            if entry is None:
                continue  # a fleet run that could not gather this cluster
            analysis = _analysis(entry, run, datetime.fromtimestamp(mtime, UTC))
            if not analyses:  # the bars are drawn for the newest analysis only
                brokers = tuple(_broker(r) for r in read_broker_metrics(directory, cluster_id))
                analysis = replace(analysis, brokers=brokers)
        except (RebalanceError, OSError, ValueError, KeyError, TypeError) as exc:
            problems.append(f"{run}: {str(exc)[:300]}")
            continue
        analyses.append(analysis)
    plans_dir = data_root / "plans" / cluster_id
    staged = [p.parent for p in plans_dir.glob(f"*/{PLAN_FILE}") if not p.parent.name.startswith(".")] \
        if plans_dir.is_dir() else []  # fmt: skip
    staged.sort(key=_mtime, reverse=True)
    return ClusterInputs(cluster_id, dag_id, source, tuple(analyses), tuple(_staged(p) for p in staged), tuple(problems))


def _mtime(path: Path) -> float:
    try:
        return (path / PLAN_FILE).stat().st_mtime
    except OSError:
        return 0.0


def _staged(path: Path) -> StagedPlan:
    try:
        approval = read_approval(path)
        decision = approval.get("decision") if approval else None
        return StagedPlan(path.name, read_progress(path), decision if isinstance(decision, str) else None)
    except (RebalanceError, OSError, ValueError) as exc:  # a changed plan, a corrupt ledger: said in its row
        return StagedPlan(path.name, None, None, f"unreadable ({str(exc)[:200]})")


def read_fleet(data_root: Path, clusters: Sequence[Any]) -> list[ClusterInputs]:
    """``clusters``: the clusters file's entries (cluster_id, dag_id, source), in its order."""
    return [read_cluster(data_root, c.cluster_id, c.dag_id, c.source) for c in clusters]
