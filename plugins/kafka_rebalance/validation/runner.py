"""Run the three suites on a plan directory, record the verdict, build Data Docs.

``validate_plan`` is what both ``kafka-rebalance validate`` and the DAG call. It
returns an outcome with the exit code the CLI uses: 0 every expectation holds,
1 some fail, 2 the input cannot be read (``ValidationInputError`` is raised for
that; the plan is then marked failed if its own files are at fault).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.plan_dir import (
    DATA_DOCS_DIR,
    PLAN_FILE,
    VALIDATION_ATTEMPTS,
    VALIDATION_RESULT,
    PlanDirError,
    atomic_write_json,
    plan_hash_of,
    read_validation_verdict,
    write_validation_verdict,
)
from kafka_rebalance.snapshot import load_snapshot
from kafka_rebalance.validation import gx_context
from kafka_rebalance.validation.inputs import RawPlan, RawSnapshot, ValidationInputError, read_raw_plan, read_raw_snapshot
from kafka_rebalance.validation.projection import balance_table
from kafka_rebalance.validation.report import Failure, format_report, row_message
from kafka_rebalance.validation.rows import plan_eligible, plan_table, snapshot_table
from kafka_rebalance.validation.suites import SUITE_NAMES, build_suite
from kafka_rebalance.validation.table import Table

ENGINES = ("pandas", "spark")
RESULT_FILE = VALIDATION_RESULT
DOCS_DIR = DATA_DOCS_DIR


@dataclass
class Outcome:
    status: str  # passed | failed
    suites: list[dict[str, Any]]
    failures: list[Failure] = field(default_factory=list)
    result_path: Path | None = None
    docs_index: Path | None = None
    # Said before any suite: the snapshot given is not the plan's (its fingerprint differs from plan.json's).
    mismatch: str | None = None
    # Where this validation was written when the plan already holds a passed verdict for the same hash: beside it,
    # never over it (validation/attempts/NNN/); None when it is the plan's verdict.
    kept_beside: Path | None = None

    @property
    def exit_code(self) -> int:
        return 0 if self.status == "passed" else 1

    def report(self) -> str:
        first = []
        if self.mismatch is not None:
            first.append(f"validation failed: {self.mismatch}")
        if self.kept_beside is not None:
            first.append(f"the plan's passed verdict for this hash stands; this validation was written beside it, to "
                         f"{self.kept_beside}")
        return "\n".join([*first, format_report(self.status, self.suites, self.failures)])

    def failed_expectations(self) -> set[str]:
        return {f"{f.suite}.{f.expectation}" for f in self.failures}


def _spark_session() -> Any:
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    return SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()


def _run_suite(table: Table, engine: str, spark: Any, extra: dict[str, Any]) -> tuple[dict[str, Any], list[Failure], Any]:
    suite = build_suite(table.suite)
    vd = gx_context.validation_definition(engine, suite)
    frame = table.to_spark(spark or _spark_session()) if engine == "spark" else table.to_pandas()
    result = vd.run(
        batch_parameters={"dataframe": frame},
        expectation_parameters=table.parameters,
        result_format={"result_format": "COMPLETE", "unexpected_index_column_names": ["row"],
                       "partial_unexpected_count": 0, "return_unexpected_index_query": False},
    )
    failures: list[Failure] = []
    expectations = []
    for r in result.results:
        cfg = r.expectation_config
        meta = cfg.meta or {}
        rows: list[str] = []
        count = 0
        if not r.success:
            indices = (r.result or {}).get("unexpected_index_list") or []
            count = int((r.result or {}).get("unexpected_count") or len(indices))
            column = cfg.kwargs.get("column")
            for idx in indices:
                row = dict(table.rows[int(idx["row"])])
                row.update(extra, _p=table.parameters, _column=column)
                rows.append(row_message(cfg.type, row))
            failures.append(Failure(table.suite, cfg.type, meta.get("description", ""), count, rows))
        expectations.append({
            "type": cfg.type,
            "kwargs": {k: v for k, v in cfg.kwargs.items() if k != "batch_id"},
            "description": meta.get("description", ""),
            "success": bool(r.success),
            "unexpected_count": count,
            "offending_rows": rows,
        })
    summary = {
        "suite": table.suite,
        "success": bool(result.success),
        "evaluated": len(expectations),
        "passed": sum(1 for e in expectations if e["success"]),
        "rows": len(table.rows),
        "parameters": table.parameters,
        "expectations": expectations,
    }
    return summary, failures, result


def _why_ineligible(snap: RawSnapshot, plan: RawPlan) -> Any:
    known, alive = snap.broker_ids, snap.alive_ids
    decommission = set(plan.options.get("decommission_brokers") or [])

    def why(b: int) -> str:
        if b not in known:
            return "not a known broker"
        if b not in alive:
            return "not alive"
        if b in decommission:
            return "being decommissioned"
        return ""

    return why


def run_suites(tables: list[Table], engine: str = "pandas", spark: Any = None, extra: dict[str, Any] | None = None,
               docs_dir: Path | None = None, begin: Callable[[str], None] = lambda _name: None) -> Outcome:
    """``begin(name)``: told as each stage starts (``stage_names``), for a progress display."""
    if engine not in ENGINES:
        raise ValidationInputError(f"--engine: must be one of {', '.join(ENGINES)}, got {engine!r}")
    ctx = gx_context.reset_for_run(docs_dir) if docs_dir else gx_context.context()
    suites, failures = [], []
    for table in tables:
        begin(f"suite {table.suite}")
        summary, fails, _ = _run_suite(table, engine, spark, extra or {})
        suites.append(summary)
        failures.extend(fails)
    outcome = Outcome("passed" if all(s["success"] for s in suites) else "failed", suites, failures)
    if docs_dir:
        begin(DOCS_STAGE)
        ctx.build_data_docs(site_names=[gx_context.SITE])
        outcome.docs_index = docs_dir / "index.html"
    return outcome


def _write_json(path: Path, value: Any) -> None:
    atomic_write_json(path, json.loads(json.dumps(value, default=str)))


def mark_plan(plan_dir: Path, status: str, plan_hash: Any, reason: str | None = None) -> None:
    """Record the verdict in validation/verdict.json (never in plan.json, which stays as planned)."""
    write_validation_verdict(plan_dir, status, plan_hash, reason)


DOCS_STAGE = "building Data Docs"


def stage_names() -> list[str]:
    """The stages ``validate_plan`` reports to its ``begin``, in order."""
    return [f"suite {name}" for name in SUITE_NAMES] + [DOCS_STAGE]


def validate_plan(plan_dir: str | Path, snapshot_path: str | Path, engine: str = "pandas", spark: Any = None,
                  begin: Callable[[str], None] = lambda _name: None) -> Outcome:
    """Validate a staged plan against the snapshot it was made from (see module doc); ``begin``: see run_suites."""
    d = Path(plan_dir).resolve()  # GX's file store wants an absolute Data Docs directory
    snap = read_raw_snapshot(snapshot_path)
    try:
        plan = read_raw_plan(d)
    except ValidationInputError as exc:
        if exc.plan_unusable and (d / PLAN_FILE).is_file():
            (d / RESULT_FILE).unlink(missing_ok=True)  # an older result must not outlive a failed verdict
            mark_plan(d, "failed", None, reason=str(exc))
        raise
    # The verdict names the hash of what was judged, recomputed, not what plan.json claims.
    try:
        judged_hash: str | None = plan_hash_of(plan.manifest)
    except ValueError:
        judged_hash = None
    # A plan that passed for this very hash keeps that verdict (it may be approved, executing or done): a later
    # validation, passed or failed, is written beside it.
    out_dir = _attempt_dir(d) if judged_hash is not None and _passed_for(d, judged_hash) else None
    tables = [snapshot_table(snap), plan_table(snap, plan), balance_table(snap, plan)]
    extra = {"_known": snap.broker_ids, "_why": _why_ineligible(snap, plan)}
    outcome = run_suites(tables, engine, spark, extra,
                         docs_dir=(out_dir / "data_docs") if out_dir is not None else d / DOCS_DIR, begin=begin)
    outcome.mismatch = _snapshot_mismatch(plan, Path(snapshot_path))
    if outcome.mismatch is not None:
        outcome.status = "failed"
    result = {
        "status": outcome.status,
        "plan_hash": judged_hash,
        "snapshot": str(snapshot_path),
        "engine": engine,
        "eligible_brokers": sorted(plan_eligible(snap, plan)),
        "suites": outcome.suites,
        "data_docs": f"{DOCS_DIR}/index.html" if out_dir is None else f"{out_dir.relative_to(d).as_posix()}/data_docs/index.html",
        "snapshot_mismatch": outcome.mismatch,
    }
    if out_dir is not None:
        outcome.kept_beside = out_dir
        outcome.result_path = out_dir / "result.json"
        _write_json(outcome.result_path, result)
        return outcome
    outcome.result_path = d / RESULT_FILE
    _write_json(outcome.result_path, result)
    mark_plan(d, outcome.status, judged_hash, reason=outcome.mismatch)
    return outcome


def _passed_for(plan_dir: Path, plan_hash: str) -> bool:
    try:
        verdict = read_validation_verdict(plan_dir)
    except PlanDirError:
        return False  # unreadable: the new verdict replaces it (a corrupt verdict never let anything run)
    return verdict is not None and verdict.status == "passed" and verdict.plan_hash == plan_hash


def _attempt_dir(plan_dir: Path) -> Path:
    """The first free validation/attempts/NNN/ (created, so two validations never share one)."""
    root = plan_dir / VALIDATION_ATTEMPTS
    root.mkdir(parents=True, exist_ok=True)
    n = 1
    while True:
        candidate = root / f"{n:03d}"
        try:
            candidate.mkdir()
        except FileExistsError:
            n += 1
            continue
        return candidate


def _snapshot_mismatch(plan: RawPlan, snapshot_path: Path) -> str | None:
    """Why ``snapshot_path`` is not the snapshot the plan was made from, None when it is (or cannot be told)."""
    raw = plan.manifest.get("snapshot")
    recorded = raw.get("sha256") if isinstance(raw, dict) else None
    if not isinstance(recorded, str) or not recorded:
        return None
    try:
        actual = load_snapshot(snapshot_path).fingerprint()
    except RebalanceError:
        return None  # the snapshot suite says what is wrong with it
    if actual == recorded:
        return None
    return (f"{snapshot_path}: not the snapshot this plan was made from (its fingerprint is {actual[:12]}..., "
            f"plan.json's snapshot.sha256 is {recorded[:12]}...); validate against the plan's own snapshot")


def validate_snapshot(snapshot_path: str | Path, engine: str = "pandas", spark: Any = None) -> Outcome:
    """The ``snapshot`` suite alone, e.g. right after gathering, before planning."""
    snap = read_raw_snapshot(snapshot_path)
    return run_suites([snapshot_table(snap)], engine, spark, {"_known": snap.broker_ids})


__all__ = ["Outcome", "SUITE_NAMES", "validate_plan", "validate_snapshot", "mark_plan"]
