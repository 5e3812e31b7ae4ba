"""Every step the DAGs call, as plain functions on the embedded simulator: no scheduler, seconds each.

The DAG tests (tests/airflow_dags) run the same steps through ``dag.test()``; these pin what each
step writes and returns, so a broken step fails here, fast, with its own name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_rebalance.errors import PlanError, RebalanceError
from kafka_rebalance.metrics import broker_loads
from kafka_rebalance.orchestration import fleet, pipeline
from kafka_rebalance.orchestration.clusters_config import ClustersFile
from kafka_rebalance.plan_dir import VERIFICATION_FILE, read_manifest
from kafka_rebalance.snapshot import load_snapshot
from tests.support.bands import counts_in_band

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "sample-cluster.json"
APPROVED = {"chosen_options": ["Approve"], "responded_by": {"name": "alice"}}


def _config(*sources: tuple[str, str]) -> ClustersFile:
    return ClustersFile.model_validate({"clusters": [{"cluster_id": c, "source": s} for c, s in sources]})


def _analysis(run: dict[str, str], balanced: bool) -> None:
    """What the Spark job leaves for the branch (its summary.json, as tests/analysis pin it)."""
    Path(run["analysis"]).mkdir(parents=True, exist_ok=True)
    (Path(run["analysis"]) / "summary.json").write_text(json.dumps(
        {"clusters": [{"cluster_id": run["cluster_id"], "threshold_percentage": 10.0, "balanced": balanced}]}))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KAFKA_REBALANCE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_a_cluster_goes_from_gather_to_a_verified_report_step_by_step(home: Path) -> None:
    cfg = _config(("demo", f"simulated:{SAMPLE}"))
    cluster = cfg.clusters[0]

    run = pipeline.gather(cfg, cluster, "manual__1")
    gathered = load_snapshot(run["snapshot"])
    assert gathered.cluster_id == "demo" and Path(run["run_dir"]).parent == home / "runs" / "demo"
    assert len(gathered.partitions) == len(load_snapshot(SAMPLE).partitions)
    assert json.loads(Path(pipeline.snapshot_gate(run)).read_text())["status"] == "passed"

    _analysis(run, balanced=False)
    assert pipeline.needs_plan(run, {}) is True
    plan_dir = pipeline.make_plan(run, {"throttle": "20MiB/s"})
    assert read_manifest(Path(plan_dir))["options"]["throttle_bytes_per_sec"] == 20 * 1024 * 1024
    assert pipeline.validate_plan(run, plan_dir) == plan_dir

    staged = pipeline.stage("demo", plan_dir)
    manifest = read_manifest(Path(staged["dir"]))
    assert Path(staged["dir"]) == home / "plans" / "demo" / manifest["plan_hash"][:16]
    assert staged["plan_hash"] == manifest["plan_hash"] and f"**Plan {manifest['plan_hash'][:16]}**" in staged["body"]
    assert (Path(staged["dir"]) / "report.html").is_file()

    checked = pipeline.preflight(cfg, cluster, staged["dir"], APPROVED)
    assert checked["batches_to_run"] == [b["id"] for b in manifest["batches"]]
    executed = pipeline.execute(cfg, cluster, staged["dir"])
    assert executed["hold"] is None and executed["plan_hash"] == manifest["plan_hash"]
    assert pipeline.restore_throttles(cfg, cluster, staged["dir"]) == ""  # the run restored its own
    elected = json.loads(pipeline.elections(cfg, cluster, staged["dir"]))
    assert elected["failed"] == {} and elected["requested"] == len(json.loads((Path(staged["dir"]) / "election.json").read_text())["partitions"])
    verification = json.loads(Path(pipeline.final_verify(cfg, cluster, run, staged["dir"])).read_text())
    assert verification["status"] == "complete" and verification["replicas_balanced"] is True

    done = pipeline.finish(run, staged["dir"], APPROVED)
    assert done["outcome"] == "executed" and done["verification"] == str(Path(staged["dir"]) / VERIFICATION_FILE)
    assert Path(done["report"]).is_file()
    # The simulated cluster kept what was executed: the next run gathers the balanced cluster.
    again = load_snapshot(pipeline.gather(cfg, cluster, "manual__2")["snapshot"])
    assert counts_in_band([b.replicas for b in broker_loads(again) if b.alive])


def test_a_bad_throttle_fails_the_run_at_gather_before_the_cluster_is_read(home: Path) -> None:
    cfg = _config(("demo", f"simulated:{SAMPLE}"))
    with pytest.raises(PlanError) as err:
        pipeline.gather(cfg, cfg.clusters[0], "manual__1", {"throttle": "0", "mode": "execute"})
    assert str(err.value) == ("run parameters: throttle must be within 1.0 KiB/s to 8.0 EiB/s "
                              "(1024..9223372036854775807 bytes/s; a Java long), got 0")
    assert not (home / "runs").exists()


def test_a_balanced_cluster_is_recorded_and_finishes_with_nothing_to_do(home: Path, balanced_snapshot_path: Path) -> None:
    cfg = _config(("demo", f"simulated:{balanced_snapshot_path}"))
    run = pipeline.gather(cfg, cfg.clusters[0], "scheduled__1")
    _analysis(run, balanced=True)
    assert pipeline.needs_plan(run, {}) is False
    pipeline.record_balanced(run)
    assert pipeline.finish(run, None, None)["outcome"] == "balanced: nothing to do"


def test_a_rejected_plan_is_recorded_and_nothing_runs(home: Path) -> None:
    cfg = _config(("demo", f"simulated:{SAMPLE}"))
    run = pipeline.gather(cfg, cfg.clusters[0], "manual__1")
    _analysis(run, balanced=False)
    staged = pipeline.stage("demo", pipeline.validate_plan(run, pipeline.make_plan(run, {})))
    done = pipeline.finish(run, staged["dir"], {"chosen_options": ["Reject"], "responded_by": {"name": "bob"}})
    assert done["outcome"] == "rejected: nothing executed"
    assert not (Path(staged["dir"]) / "ledger.json").exists()
    with pytest.raises(RebalanceError):  # a rejected plan can never be executed
        pipeline.preflight(cfg, cfg.clusters[0], staged["dir"], APPROVED)


def test_the_fleet_gathers_every_cluster_it_can_and_names_those_that_need_a_plan(home: Path) -> None:
    cfg = _config(("eu", f"simulated:{SAMPLE}"), ("us", "simulated:/nonexistent/us.json"))
    gathered = fleet.gather_fleet(cfg, "scheduled__1")
    assert sorted(p.name for p in Path(gathered["snapshots"]).iterdir()) == ["eu.json"]
    errors = json.loads((Path(gathered["run_dir"]) / "gather_errors.json").read_text())
    assert [e["cluster_id"] for e in errors] == ["us"] and "/nonexistent/us.json" in errors[0]["error"]

    Path(gathered["analysis"]).mkdir()
    (Path(gathered["analysis"]) / "summary.json").write_text(json.dumps({"clusters": [
        {"cluster_id": "eu", "balanced": False, "threshold_percentage": 10.0, "brokers_over_threshold": [1],
         "max_imbalance_ratio": 0.5}]}))
    assert fleet.fleet_summary(gathered) == ["eu"]
    written = json.loads((Path(gathered["run_dir"]) / "fleet_summary.json").read_text())
    assert written["need_plan"] == ["eu"] and written["clusters"][0]["brokers_over_threshold"] == [1]


def test_a_fleet_where_no_cluster_answers_fails(home: Path) -> None:
    with pytest.raises(RebalanceError, match="no cluster could be gathered"):
        fleet.gather_fleet(_config(("us", "simulated:/nonexistent/us.json")), "scheduled__1")


def test_a_cluster_set_to_throttle_auto_executes_with_rates_from_its_headroom(home: Path) -> None:
    from kafka_rebalance.executor.autothrottle import rate_history

    mib = 1024 * 1024
    cfg = ClustersFile.model_validate({
        "clusters": [{"cluster_id": "auto", "source": f"simulated:{SAMPLE}",
                      "executor": {"throttle": "auto", "throttle_floor": "2MiB/s", "throttle_ceiling": "16MiB/s",
                                   "poll_interval_seconds": 5}}]})  # fmt: skip
    cluster = cfg.clusters[0]
    run = pipeline.gather(cfg, cluster, "manual__1")
    _analysis(run, balanced=False)
    # The network capacities the plan is made with (the trigger form's field, as clusters.yaml's) are auto's figures.
    nic = {"default": {"network_in_bytes_per_sec": "30MiB/s", "network_out_bytes_per_sec": "30MiB/s"}}
    plan_dir = pipeline.make_plan(run, {"throttle": "20MiB/s", "capacity": nic})
    pipeline.validate_plan(run, plan_dir)
    staged = pipeline.stage("auto", plan_dir)
    pipeline.preflight(cfg, cluster, staged["dir"], APPROVED)
    assert pipeline.execute(cfg, cluster, staged["dir"])["hold"] is None
    assert pipeline.restore_throttles(cfg, cluster, staged["dir"]) == ""  # the run restored its own
    history = rate_history(json.loads((Path(staged["dir"]) / "ledger.json").read_text()))
    assert history is not None and (history.floor, history.ceiling) == (2 * mib, 16 * mib)
    rates = [r for changes in history.brokers.values() for _, *pair in changes for r in pair]
    assert rates and all(2 * mib <= r <= 16 * mib for r in rates)


@pytest.mark.parametrize(("executor", "message"), [
    ({"throttle": "auto", "throttle_floor": "lots"}, "throttle_floor: 'lots'"),
    ({"throttle_ceiling": "10MiB/s"}, "throttle_floor and throttle_ceiling apply to throttle: auto"),
    ({"throttle": "fast"}, "throttle"),
])
def test_a_bad_auto_throttle_setting_is_refused_naming_it(executor: dict, message: str) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match=message):
        ClustersFile.model_validate({"clusters": [{"cluster_id": "a", "source": "x", "executor": executor}]})


def test_throttle_auto_on_a_plan_without_network_capacity_is_refused_before_anything_runs(home: Path) -> None:
    cfg = ClustersFile.model_validate({"clusters": [{"cluster_id": "nocap", "source": f"simulated:{SAMPLE}",
                                                     "executor": {"throttle": "auto"}}]})
    cluster = cfg.clusters[0]
    run = pipeline.gather(cfg, cluster, "manual__1")
    _analysis(run, balanced=False)
    plan_dir = pipeline.make_plan(run, {})
    pipeline.validate_plan(run, plan_dir)
    staged = pipeline.stage("nocap", plan_dir)
    # Refused at the first step that acts (preflight), and again by execute, whatever ran before.
    for step in (lambda: pipeline.preflight(cfg, cluster, staged["dir"], APPROVED),
                 lambda: pipeline.execute(cfg, cluster, staged["dir"])):
        with pytest.raises(RebalanceError, match=r"--throttle auto: broker \d+ \(moved by the plan\) has no "
                                                 r"network_in_bytes_per_sec"):
            step()
    ledger = json.loads((Path(staged["dir"]) / "ledger.json").read_text()) if (Path(staged["dir"]) / "ledger.json").exists() else {}
    assert not ledger.get("batches") and not ledger.get("continuous")
