"""Pipeline rules that need no scheduler: only a manual execute-mode trigger may execute."""

from __future__ import annotations

import pytest

from kafka_rebalance.orchestration.pipeline import wants_execution


@pytest.mark.parametrize(
    ("run_type", "mode", "expected"),
    [
        ("manual", "execute", True),
        ("manual", "dry-run", False),
        ("scheduled", "execute", False),  # scheduled runs are dry runs whatever the defaults say
        ("asset_triggered", "execute", False),  # so are runs started by the fleet DAG's asset events
        ("backfill", "execute", False),
    ],
)
def test_only_manual_execute_runs_execute(run_type: str, mode: str, expected: bool) -> None:
    assert wants_execution(run_type, {"mode": mode}) is expected


def test_run_type_enum_is_understood() -> None:
    from airflow.utils.types import DagRunType

    assert wants_execution(DagRunType.MANUAL, {"mode": "execute"}) is True
    assert wants_execution(DagRunType.SCHEDULED, {"mode": "execute"}) is False


# --------------------------------------------------------------------------- clusters.yaml -> planner

import json  # noqa: E402
from pathlib import Path  # noqa: E402

from kafka_rebalance.orchestration.clusters_config import load_clusters  # noqa: E402
from kafka_rebalance.orchestration.pipeline import make_plan, needs_plan  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "sample-cluster.json"


def _run(tmp_path: Path, balanced: bool = False) -> dict[str, str]:
    """A run directory as gather and the Spark job leave it (the summary as the job writes it)."""
    analysis = tmp_path / "analysis"
    analysis.mkdir()
    (analysis / "summary.json").write_text(json.dumps(
        {"clusters": [{"cluster_id": "demo-eu-1", "threshold_percentage": 10.0, "balanced": balanced}]}))
    return {"cluster_id": "demo-eu-1", "run_dir": str(tmp_path), "snapshot": str(SAMPLE), "analysis": str(analysis)}


def _clusters(tmp_path: Path) -> Path:
    f = tmp_path / "clusters.yaml"
    f.write_text(
        "defaults: {byte_tolerance: 0.25, throttle: 20MiB/s, max_partitions_per_batch: 7, max_moves_per_broker: 3,\n"
        "           ordering: large-first, exclude_topics: [topic-003], optimizer: heuristic, throttle_efficiency: 0.8}\n"
        f"clusters:\n  - {{cluster_id: demo-eu-1, source: 'simulated:{SAMPLE}', defaults: {{byte_tolerance: 0.3}}}}\n"
    )
    return f


def test_every_clusters_yaml_planner_setting_reaches_plan_json(tmp_path: Path) -> None:
    cfg = load_clusters(_clusters(tmp_path))
    defaults = cfg.effective_defaults(cfg.clusters[0])
    options = json.loads((Path(make_plan(_run(tmp_path), {}, defaults)) / "plan.json").read_text())["options"]
    assert options["byte_tolerance"] == 0.3  # the cluster's own entry over the file's defaults
    assert options["throttle_bytes_per_sec"] == 20 * 1048576
    assert options["max_partitions_per_batch"] == 7 and options["max_moves_per_broker"] == 3
    assert options["ordering"] == "large-first" and options["exclude_topics"] == ["topic-003"]
    assert options["optimizer"] == "heuristic"
    assert options["throttle_efficiency"] == 0.8


def test_byte_tolerance_changes_the_plan(tmp_path: Path) -> None:
    cfg = load_clusters(_clusters(tmp_path))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    tolerant = json.loads((Path(make_plan(_run(tmp_path / "a"), {}, cfg.effective_defaults(cfg.clusters[0]))) / "plan.json").read_text())
    default = json.loads((Path(make_plan(_run(tmp_path / "b"), {})) / "plan.json").read_text())
    assert tolerant["summary"]["targets"]["byte_tolerance"] == 0.3 and default["summary"]["targets"]["byte_tolerance"] == 0.1
    assert tolerant["plan_hash"] != default["plan_hash"]


def test_trigger_form_values_win_over_clusters_yaml(tmp_path: Path) -> None:
    cfg = load_clusters(_clusters(tmp_path))
    params = {"max_moves_per_broker": 4, "exclude_topics": [], "decommission_brokers": [5], "throttle": "30MB/s"}
    options = json.loads((Path(make_plan(_run(tmp_path), params, cfg.effective_defaults(cfg.clusters[0]))) / "plan.json").read_text())["options"]
    assert (options["max_moves_per_broker"], options["exclude_topics"], options["decommission_brokers"]) == (4, [], [5])
    assert options["throttle_bytes_per_sec"] == 30 * 1000**2  # the form's 30MB/s over clusters.yaml's 20MiB/s
    assert options["byte_tolerance"] == 0.3
    assert options["optimizer"] == "heuristic"
    params["optimizer"] = "exact"
    (tmp_path / "again").mkdir()
    manifest = json.loads((Path(make_plan(_run(tmp_path / "again"), params, cfg.effective_defaults(cfg.clusters[0]))) / "plan.json").read_text())
    assert manifest["options"]["optimizer"] == "exact" and manifest["summary"]["optimizer"]["used"] == "exact"


def test_approval_text_states_the_byte_bound_and_gap() -> None:
    from kafka_rebalance.orchestration.approval_text import approval_body

    summary = {"replica_moves": 3, "bytes_moved": 3 * 1048576, "reorders": 0, "leader_elections": 1, "estimated_seconds": 60.0,
               "lower_bounds": {"replica_moves": 3, "bytes_moved": 1048576},
               "optimizer": {"used": "exact", "exact_status": "optimal", "bytes_bound": 2 * 1048576, "gap_percent": 50.0}}
    manifest = {"plan_hash": "ab" * 32, "cluster_id": "c1", "summary": summary, "batches": [],
                "options": {"throttle_bytes_per_sec": 1048576}}
    text = approval_body(Path("/nonexistent/run/plan"), manifest)
    assert "- Bytes above the fewest that reach this balance: at most 50.00 % (certified bound 2.0 MiB; optimizer exact, optimal)" in text
    del summary["optimizer"]  # plans staged before the optimizer was reported still render
    assert "Bytes above the fewest" not in approval_body(Path("/nonexistent/run/plan"), manifest)
    assert "- Goal " not in approval_body(Path("/nonexistent/run/plan"), manifest)


def test_approval_text_gives_each_goal_before_and_after() -> None:
    from kafka_rebalance.orchestration.approval_text import approval_body

    goal = {"name": "bytes", "hard": False, "target": "t", "before": {"value": 0.31, "reached": False, "offenders": [3]},
            "reached": False, "moves": 2, "bytes": 9, "after": {"value": 0.12, "reached": False, "offenders": [3, 5]}}
    hard = {**goal, "name": "placement", "hard": True, "reached": True,
            "before": {"value": 4, "reached": False, "offenders": [7]}, "after": {"value": 0, "reached": True, "offenders": []}}
    summary = {"replica_moves": 3, "bytes_moved": 3, "reorders": 0, "leader_elections": 0, "estimated_seconds": 1.0,
               "lower_bounds": {"replica_moves": 3, "bytes_moved": 3}, "goals": [hard, goal]}
    manifest = {"plan_hash": "ab" * 32, "cluster_id": "c1", "summary": summary, "batches": [],
                "options": {"throttle_bytes_per_sec": 1048576}}
    text = approval_body(Path("/nonexistent/run/plan"), manifest)
    assert "- Goal placement (hard): 4 -> 0, met\n- Goal bytes: 0.31 -> 0.12, NOT met (brokers 3, 5)\n" in text


def test_approval_text_gives_the_snapshots_age_and_flags_a_stale_plan() -> None:
    from datetime import UTC, datetime

    from kafka_rebalance.orchestration.approval_text import approval_body

    summary = {"replica_moves": 3, "bytes_moved": 5 * 1024**3, "reorders": 0, "leader_elections": 0, "estimated_seconds": 1.0,
               "lower_bounds": {"replica_moves": 3, "bytes_moved": 5 * 1024**3}}
    manifest = {"plan_hash": "ab" * 32, "cluster_id": "c1", "summary": summary, "batches": [],
                "options": {"throttle_bytes_per_sec": 50 * 1048576},
                "snapshot": {"sha256": "00" * 32, "captured_at": "2026-11-20T08:00:00Z"}}
    fresh = approval_body(Path("/nonexistent/run/plan"), manifest, now=datetime(2026, 11, 20, 11, 30, tzinfo=UTC))
    # Gathered at 08:00 with a 24 h limit: approvable until 08:00 the next day, the deadline approve enforces.
    assert ("- Snapshot gathered 2026-11-20T08:00:00Z, 3h30m before this plan was staged; approvable until "
            "2026-11-21T08:00:00Z (the maximum plan age of 24h00m, here and in `kafka-rebalance approve`)\n") in fresh
    assert "STALE" not in fresh
    # A simulated cluster's clock does not age: the text says no limit applies instead of calling it stale.
    simulated = approval_body(Path("/nonexistent/run/plan"), manifest, now=datetime(2026, 11, 26, 8, 0, tzinfo=UTC),
                              max_age_seconds=None)
    assert "STALE" not in simulated and "no plan-age limit applies" in simulated
    assert "5.0 GiB to copy" in fresh and "at 50.0 MiB/s per broker" in fresh
    stale = approval_body(Path("/nonexistent/run/plan"), manifest, now=datetime(2026, 11, 26, 8, 0, tzinfo=UTC))
    assert ("- Snapshot gathered 2026-11-20T08:00:00Z, 6d00h before this plan was staged: **STALE**, over the maximum "
            "plan age of 24h00m") in stale
    del manifest["snapshot"]
    assert "**Snapshot age unknown**" in approval_body(Path("/nonexistent/run/plan"), manifest)


def test_approval_text_headlines_the_estimate_of_the_mode_that_runs() -> None:
    from kafka_rebalance.orchestration.approval_text import approval_body

    # 78 s continuously, 108 s as waves (the "1.3 minutes" and "1.8 minutes").
    summary = {"replica_moves": 3, "bytes_moved": 3, "reorders": 0, "leader_elections": 0, "estimated_seconds": 78.0,
               "estimate_of": "continuous", "estimated_seconds_batches": 108.0,
               "continuous": {"estimated_seconds": 78.0, "physical_bound_seconds": 60.0, "ratio_to_bound": 1.3},
               "lower_bounds": {"replica_moves": 3, "bytes_moved": 3}}
    batches = [{"id": f"{i:03d}", "kind": "move", "partitions": 1, "replica_moves": 1, "bytes": 1, "estimated_seconds": 9.0}
               for i in range(1, 13)]
    manifest = {"plan_hash": "ab" * 32, "cluster_id": "c1", "summary": summary, "batches": batches,
                "options": {"throttle_bytes_per_sec": 1048576, "move_fixed_seconds": 2.0}}
    text = approval_body(Path("/nonexistent/run/plan"), manifest)
    assert ("- Estimated duration: **about 1m18s (continuous schedule, the mode that runs); 1m48s if run as batches as "
            "waves**; 12 batches, at 1.0 MiB/s per broker, 2 s fixed per move\n") in text
    assert "- Physical bound: 1m00s (busiest broker's bytes at the delivered rate); the continuous schedule is 1.3x of it\n" in text
    waves = approval_body(Path("/nonexistent/run/plan"), manifest, mode="batches")
    assert "**about 1m48s (batches as waves, the mode that runs); 1m18s if run as continuous schedule**" in waves
    assert "Approve to execute it (batch by batch, as waves;" in waves
    assert text.count("1m48s") == 1 and "minutes" not in text  # one figure per mode, said once


def test_balanced_cluster_with_a_broker_to_decommission_needs_a_plan(tmp_path: Path, balanced_snapshot_path: Path) -> None:
    run = {**_run(tmp_path, balanced=True), "snapshot": str(balanced_snapshot_path), "cluster_id": "balanced"}
    (tmp_path / "analysis" / "summary.json").write_text(json.dumps(
        {"clusters": [{"cluster_id": "balanced", "threshold_percentage": 10.0, "balanced": True}]}))
    assert needs_plan(run, {"decommission_brokers": []}) is False
    assert needs_plan(run, {"decommission_brokers": [3]}) is True


def test_the_goals_decide_whatever_the_analysis_flag_says(tmp_path: Path) -> None:
    # The sample cluster is skewed: its goals are not met, even if an analysis called it balanced.
    assert needs_plan(_run(tmp_path, balanced=True), {"decommission_brokers": []}) is True


# --------------------------------------------------------------------------- the cluster's identity

def test_dag_steps_refuse_a_plan_made_for_another_kafka_cluster(tmp_path: Path) -> None:
    """preflight (approval recorded, then every step that acts) refuses before the simulated cluster is touched."""
    from dataclasses import replace

    from kafka_rebalance.executor.settings import ExecutionRefused
    from kafka_rebalance.orchestration import pipeline
    from kafka_rebalance.snapshot import load_snapshot, write_snapshot
    from tests.support.plans import move_one_replica, write_plan

    made_for = replace(load_snapshot(SAMPLE), cluster_id="identity-check", kafka_cluster_id="cluster-A")
    other = write_snapshot(replace(made_for, kafka_cluster_id="cluster-B"), tmp_path / "other.json")
    staged = write_plan(tmp_path / "plan", made_for, [move_one_replica(made_for, 3)])
    (tmp_path / "clusters.yaml").write_text(
        f"clusters:\n  - {{cluster_id: identity-check, source: 'simulated:{other}', schedule: null}}\n")
    cfg = load_clusters(tmp_path / "clusters.yaml")
    cluster = cfg.clusters[0]
    expected = (f"{staged}: the plan was made for Kafka cluster 'cluster-A' ('identity-check'), but the connected "
                "cluster reports 'cluster-B'; refusing to act on another cluster")
    with pytest.raises(ExecutionRefused) as info:
        pipeline.preflight(cfg, cluster, str(staged), {"responded_by": {"name": "ops"}})
    assert str(info.value) == expected
    for step in (pipeline.execute, pipeline.elections):
        with pytest.raises(ExecutionRefused, match="refusing to act on another cluster"):
            step(cfg, cluster, str(staged))
    assert not (staged / "ledger.json").exists()
    from kafka_rebalance.cluster.sim_admin import read_state
    from kafka_rebalance.orchestration.staging import simulated_state_file

    # The simulated cluster (persisted when the step connected) as it was: nothing moved, no throttle set.
    assert read_state(simulated_state_file(cluster.cluster_id)).describe() == load_snapshot(other)


def test_the_approval_text_says_when_the_run_may_move_data(tmp_path: Path) -> None:
    from kafka_rebalance.errors import RebalanceError
    from kafka_rebalance.orchestration.approval_text import approval_body
    from kafka_rebalance.orchestration.pipeline import window_text

    f = tmp_path / "clusters.yaml"
    f.write_text(f"clusters:\n  - {{cluster_id: c1, source: 'simulated:{SAMPLE}',\n"
                 "      windows: [{cron: '0 1 * * 1-5', duration: 4h, timezone: Europe/Paris}]}\n")
    cluster = load_clusters(f).clusters[0]
    configured = window_text(cluster, None)
    assert configured.startswith("configured: ") and "0 1 * * 1-5" in configured and "Europe/Paris" in configured
    # The trigger's window wins over the configured ones; a malformed one fails before anyone is asked.
    assert window_text(cluster, "2026-12-01T01:00:00Z/PT2H") == "interval 2026-12-01T01:00:00Z/2026-12-01T03:00:00Z"
    with pytest.raises(RebalanceError, match="has no time zone"):
        window_text(cluster, "2026-12-01T01:00/PT2H")
    summary = {"replica_moves": 3, "bytes_moved": 3, "reorders": 0, "leader_elections": 0,
               "lower_bounds": {"replica_moves": 3, "bytes_moved": 3}}
    manifest = {"plan_hash": "ab" * 32, "cluster_id": "c1", "summary": summary, "options": {"throttle_bytes_per_sec": 1048576},
                "batches": [{"id": "001", "kind": "move", "partitions": 1, "replica_moves": 1, "bytes": 3, "estimated_seconds": 9.0}]}
    text = approval_body(Path("/nonexistent/run/plan"), manifest, window=configured)
    assert f"- Execution window: {configured}\n" in text
    assert "Execution window" not in approval_body(Path("/nonexistent/run/plan"), manifest)
