"""Rebalance on scale, within a policy: a scale event noticed in a snapshot, clusters.yaml's approval policy read
strictly, and a simulated cluster's scale-out staged, then approved by the policy or held for a person.

The steps are the DAG's own functions (orchestration/pipeline.py) on the embedded simulator, as in test_steps.py;
tests/airflow_dags/test_rebalance_dag.py runs the policy's approval through the DAG itself.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from kafka_rebalance.approval_key import APPROVAL_KEY_ENV, fingerprint
from kafka_rebalance.cluster.sim_admin import read_state, write_state
from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.executor.windows import policy as window_policy
from kafka_rebalance.orchestration import fleet, pipeline
from kafka_rebalance.orchestration.approval_policy import ApprovalPolicy, Outcome, PlanFigures, judge, window_seconds
from kafka_rebalance.orchestration.cluster_access import admin_session
from kafka_rebalance.orchestration.clusters_config import ClusterConfig, ClustersFile, load_clusters
from kafka_rebalance.orchestration.scale import ScaleEvent, scale_event
from kafka_rebalance.orchestration.staging import simulated_state_file
from kafka_rebalance.plan_dir import PlanDirError, read_manifest
from kafka_rebalance.snapshot import Broker, load_snapshot

GATHERED = "2026-01-01T00:00:00Z"
KEY = "k" * 64  # an approval key: approvals are signed with it and checked against it
ALLOWS = {"rules": [{"name": "leaders-only", "when": {"max_replica_moves": 0}},
                    {"name": "small-moves", "when": {"max_bytes": "20GiB"}}]}
REFUSES = {"rules": [{"name": "leaders-only", "when": {"max_replica_moves": 0}},
                     {"name": "small-moves", "when": {"max_bytes": "1GiB"}}], "otherwise": "human"}


# ----------------------------------------------------------------------------- scale events


def test_a_balanced_cluster_has_no_scale_event(balanced_snapshot_path: Path) -> None:
    assert scale_event(load_snapshot(balanced_snapshot_path)) == ScaleEvent((), ())


def test_an_empty_new_broker_is_an_added_broker(balanced_snapshot_path: Path) -> None:
    snap = load_snapshot(balanced_snapshot_path)
    grown = replace(snap, brokers=(*snap.brokers, Broker(6, "rack-0"), Broker(7, "rack-1", alive=False)))
    event = scale_event(grown)
    # A dead broker holding nothing is a failure, not a scale-out: only the live one was added.
    assert event == ScaleEvent(added=(6,), leaving=()) and event.any
    assert event.describe() == "broker(s) 6 added (holding almost no replicas)"


def test_a_broker_far_below_its_share_is_added_and_one_that_lost_a_little_is_not(balanced_snapshot_path: Path) -> None:
    snap = load_snapshot(balanced_snapshot_path)  # 36 replicas on 6 brokers: 6 each
    seven = replace(snap, brokers=(*snap.brokers, Broker(6, "rack-0")))  # share 36 / 7 = 5.1: a quarter is 1.3
    first = snap.partitions[0]
    holds_one = replace(seven, partitions=(replace(first, replicas=(6, *first.replicas[1:]), leader=6,
                                                   isr=(6, *first.replicas[1:])), *seven.partitions[1:]))
    assert scale_event(holds_one).added == (6,)
    # Broker 0 gave that replica up and holds 5 of its 5.1: no event for it.
    assert 0 not in scale_event(holds_one).added


def test_brokers_marked_for_removal_are_leaving_until_empty(balanced_snapshot_path: Path) -> None:
    snap = load_snapshot(balanced_snapshot_path)
    assert scale_event(snap, marked_for_removal=[4, 9]) == ScaleEvent((), (4,))  # 9 is not in the cluster
    emptied = replace(snap, partitions=tuple(replace(p, replicas=tuple(r for r in p.replicas if r != 4))
                                             for p in snap.partitions))
    assert scale_event(emptied, marked_for_removal=[4]) == ScaleEvent((), ())


# ----------------------------------------------------------------------------- the decision


def _figures(moves: int = 5, gib: float = 5, elections: int = 3, seconds: float | None = 3600,
             window: float | None = None) -> PlanFigures:
    return PlanFigures(replica_moves=moves, bytes_moved=int(gib * 2**30), leader_elections=elections,
                       estimated_seconds=seconds, estimate_of="continuous", window_seconds=window)


def test_the_first_rule_the_plan_stays_within_approves_it() -> None:
    policy = ApprovalPolicy.model_validate(ALLOWS)
    verdict = judge(policy, _figures(moves=0, gib=0))
    assert (verdict.outcome, verdict.approver) == (Outcome.APPROVED, "policy:leaders-only")
    verdict = judge(policy, _figures())
    assert (verdict.outcome, verdict.approver) == (Outcome.APPROVED, "policy:small-moves")
    assert verdict.misses == ("rule leaders-only: 5 replica moves > max_replica_moves 0",)


def test_a_plan_no_rule_allows_is_held_with_every_reason() -> None:
    verdict = judge(ApprovalPolicy.model_validate(REFUSES), _figures(gib=2.5))
    assert verdict.outcome is Outcome.HELD and verdict.approver is None
    assert verdict.describe() == ("held for a person: rule leaders-only: 5 replica moves > max_replica_moves 0; "
                                  "rule small-moves: 2.5 GiB to copy > max_bytes 1.0 GiB")
    assert judge(ApprovalPolicy(), _figures()).describe() == "held for a person: the policy has no rules"


def test_within_window_needs_a_window_the_estimate_fits_in() -> None:
    from kafka_rebalance.executor.windows import Window

    policy = ApprovalPolicy.model_validate({"rules": [{"name": "night", "when": {"within_window": True, "max_bytes": "10GiB"}}]})
    four_hours = window_policy("configured", [Window("0 1 * * *", timedelta(hours=4))])
    assert window_seconds(four_hours, 300) == 4 * 3600 - 300
    assert window_seconds(window_policy("now", [Window("0 1 * * *", timedelta(hours=4))]), 300) is None
    assert window_seconds(window_policy("2026-11-25T01:00Z/PT2H", []), 0) == 7200
    assert judge(policy, _figures(seconds=3600, window=4 * 3600 - 300)).outcome is Outcome.APPROVED
    assert judge(policy, _figures(seconds=5 * 3600, window=4 * 3600 - 300)).misses == (
        "rule night: within_window: estimated 5h00m > the longest window less its margin, 3h55m",)
    assert judge(policy, _figures(window=None)).misses == (
        "rule night: within_window: moves may start at any time (no maintenance window configured, or the run's "
        "window is 'now')",)
    assert judge(policy, _figures(seconds=None, window=3600)).misses == (
        "rule night: within_window: the plan has no time estimate to fit in a window",)


# ----------------------------------------------------------------------------- clusters.yaml


def test_a_policy_in_clusters_yaml(tmp_path: Path) -> None:
    f = tmp_path / "clusters.yaml"
    f.write_text("clusters:\n  - cluster_id: a\n    source: kafka_a\n    defaults: {decommission_brokers: [5, 4]}\n"
                 "    approval_policy:\n      rules:\n        - {name: leaders-only, when: {max_replica_moves: 0}}\n"
                 "        - {name: small-moves, when: {max_bytes: 50GiB, within_window: true}}\n"
                 "        - {name: exact-bytes, when: {max_bytes: 1000000, max_leader_elections: 10}}\n"
                 "      otherwise: human\n  - {cluster_id: b, source: kafka_b}\n")
    cfg = load_clusters(f)
    policy = cfg.clusters[0].approval_policy
    assert policy is not None and [r.name for r in policy.rules] == ["leaders-only", "small-moves", "exact-bytes"]
    assert policy.rules[1].when.max_bytes == 50 * 2**30 and policy.rules[1].when.within_window is True
    assert (policy.rules[2].when.max_bytes, policy.rules[2].when.max_leader_elections) == (1_000_000, 10)
    assert cfg.clusters[1].approval_policy is None
    # The brokers marked for removal reach the planner as the run's decommission_brokers (the form starts from them).
    from kafka_rebalance.orchestration.plan_params import planner_values

    assert planner_values({}, cfg.effective_defaults(cfg.clusters[0]))["decommission_brokers"] == (4, 5)


CLUSTER = "clusters:\n  - cluster_id: a\n    source: kafka_a\n    approval_policy: "


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        ("{rules: [{name: Leaders Only, when: {max_replica_moves: 0}}]}",
         "clusters.0.approval_policy.rules.0.name (cluster a): Value error, 'Leaders Only' is no rule name; use lowercase "
         "letters, digits and single hyphens"),
        ("{rules: [{name: 'policy:x', when: {max_replica_moves: 0}}]}",
         "clusters.0.approval_policy.rules.0.name (cluster a): Value error, 'policy:x' is no rule name"),
        ("{rules: [{name: 7, when: {max_replica_moves: 0}}]}",
         "clusters.0.approval_policy.rules.0.name (cluster a): Value error, 7 is no rule name"),
        ("{rules: [{name: a, when: {max_replica_moves: 0}}, {name: a, when: {max_bytes: 1GiB}}]}",
         "clusters.0.approval_policy (cluster a): Value error, rule name 'a' used more than once"),
        ("{rules: [{name: small, when: {max_byte: 50GiB}}]}",
         "clusters.0.approval_policy.rules.0.when (cluster a): Value error, unknown key 'max_byte' (value '50GiB'); "
         "the keys are max_replica_moves, max_bytes, max_leader_elections, within_window"),
        ("{rules: [{name: small, when: {max_bytes: 1GiB}, unless: friday}]}",
         "clusters.0.approval_policy.rules.0 (cluster a): Value error, unknown key 'unless' (value 'friday'); the keys are "
         "name, when"),
        ("{rulez: []}", "clusters.0.approval_policy (cluster a): Value error, unknown key 'rulez' (value [])"),
        ("{rules: [{name: small, when: {max_bytes: 50 gigs}}]}",
         "clusters.0.approval_policy.rules.0.when.max_bytes (cluster a): Value error, '50 gigs' is not a size or rate"),
        ("{rules: [{name: small, when: {max_bytes: 50Gb}}]}",
         "clusters.0.approval_policy.rules.0.when.max_bytes (cluster a): Value error, '50Gb' is ambiguous: a lowercase b "
         "means bits"),
        ("{rules: [{name: small, when: {max_bytes: 50GiB/s}}]}",
         "clusters.0.approval_policy.rules.0.when.max_bytes (cluster a): Value error, '50GiB/s' is a rate; max_bytes is a "
         "size such as 50GiB"),
        ("{rules: [{name: small, when: {max_bytes: -1}}]}",
         "clusters.0.approval_policy.rules.0.when.max_bytes (cluster a): Value error, -1 is negative"),
        ("{rules: [{name: small, when: {max_bytes: 1.5}}]}",
         "clusters.0.approval_policy.rules.0.when.max_bytes (cluster a): Value error, expected bytes or a size such as "
         "50GiB, got 1.5"),
        ("{rules: [{name: few, when: {max_replica_moves: -1}}]}",
         "clusters.0.approval_policy.rules.0.when.max_replica_moves (cluster a): Input should be greater than or equal "
         "to 0, got -1"),
        ("{rules: [{name: few, when: {max_replica_moves: '5'}}]}",
         "clusters.0.approval_policy.rules.0.when.max_replica_moves (cluster a): Input should be a valid integer, got '5'"),
        ("{rules: [{name: night, when: {within_window: maybe}}]}",
         "clusters.0.approval_policy.rules.0.when.within_window (cluster a): Input should be a valid boolean, unable to interpret input, "
         "got 'maybe'"),
        ("{rules: [{name: all, when: {}}]}",
         "clusters.0.approval_policy.rules.0.when (cluster a): Value error, a rule needs at least one condition"),
        ("{rules: [{name: all}]}", "clusters.0.approval_policy.rules.0.when (cluster a): Field required"),
        ("{rules: [], otherwise: auto}",
         "clusters.0.approval_policy.otherwise (cluster a): Input should be 'human', got 'auto'"),
        ("[leaders-only]", "clusters.0.approval_policy (cluster a): Value error, expected a mapping of rules, otherwise, "
         "got ['leaders-only']"),
    ],
)
def test_a_bad_policy_is_one_line_naming_the_file_the_field_and_the_value(tmp_path: Path, policy: str, message: str) -> None:
    f = tmp_path / "clusters.yaml"
    f.write_text(CLUSTER + policy + "\n")
    with pytest.raises(RebalanceError) as err:
        load_clusters(f)
    assert str(err.value).startswith(f"{f}: ") and "\n" not in str(err.value)
    assert message in str(err.value)


def test_every_bad_field_of_a_policy_is_named_at_once(tmp_path: Path) -> None:
    f = tmp_path / "clusters.yaml"
    f.write_text(CLUSTER + "{rules: [{name: Big, when: {max_bytes: lots}}, {name: ok, when: {max_replica_moves: x}}]}\n")
    with pytest.raises(RebalanceError) as err:
        load_clusters(f)
    assert str(err.value).count("; clusters.0.approval_policy.rules.") == 2  # three fields, three clauses, one line


def test_brokers_are_marked_for_removal_per_cluster_never_file_wide(tmp_path: Path) -> None:
    f = tmp_path / "clusters.yaml"
    f.write_text("defaults: {decommission_brokers: [3]}\nclusters:\n  - {cluster_id: a, source: kafka_a}\n")
    with pytest.raises(RebalanceError) as err:
        load_clusters(f)
    assert str(err.value) == (f"{f}: defaults: Value error, decommission_brokers: [3] would mark the same broker ids for "
                              "removal in every cluster; mark them in that cluster's own defaults")


# ----------------------------------------------------------------------------- a scale-out, end to end


def _scaled_out(cfg: ClustersFile, cluster: ClusterConfig) -> None:
    """Start the simulated cluster, then add broker 6: it joins empty, as a new Kafka broker does."""
    with admin_session(cfg, cluster):
        pass  # the simulator's state, started from the snapshot
    path = simulated_state_file(cluster.cluster_id)
    sim = read_state(path)
    sim.add_broker(6, "rack-0")
    write_state(sim, path)


@pytest.fixture(scope="module")
def scaled(tmp_path_factory: pytest.TempPathFactory, balanced_snapshot_path: Path):
    """Two simulated clusters scaled out by one broker, each with a plan staged by a scheduled run as the DAG runs
    it (the analysis as the Spark job leaves it): one under a policy that allows the plan, one under one that does
    not. Staged once for the module: planning and validating cost seconds."""
    tmp = tmp_path_factory.mktemp("scale")
    source = tmp / "cluster.json"
    source.write_text(json.dumps({**json.loads(balanced_snapshot_path.read_text()), "captured_at": GATHERED}))
    cfg = ClustersFile.model_validate({"clusters": [
        {"cluster_id": "grow-ok", "source": f"simulated:{source}", "approval_policy": ALLOWS},
        {"cluster_id": "grow-held", "source": f"simulated:{source}", "approval_policy": REFUSES},
    ]})
    with pytest.MonkeyPatch.context() as env:
        env.setenv("KAFKA_REBALANCE_HOME", str(tmp / "home"))
        env.setenv(APPROVAL_KEY_ENV, KEY)
        runs = {}
        for cluster in cfg.clusters:
            _scaled_out(cfg, cluster)
            run = pipeline.gather(cfg, cluster, "scheduled__1")
            Path(run["analysis"]).mkdir(parents=True)
            (Path(run["analysis"]) / "summary.json").write_text(json.dumps(
                {"clusters": [{"cluster_id": cluster.cluster_id, "threshold_percentage": 10.0, "balanced": True}]}))
            staged = pipeline.stage(cluster.cluster_id, pipeline.validate_plan(run, pipeline.make_plan(run, {})))
            runs[cluster.cluster_id] = (run, staged["dir"])
        yield cfg, runs


def test_a_scheduled_run_that_finds_the_scale_out_goes_on_to_the_policy(scaled) -> None:
    cfg, runs = scaled
    run, _ = runs["grow-ok"]
    assert pipeline.scale_event_of(run, {}) == ScaleEvent(added=(6,), leaving=())
    assert pipeline.needs_plan(run, {}) is True  # the analysis called it balanced: the goals see broker 6 empty
    cluster = cfg.clusters[0]
    assert pipeline.run_executes(cluster, run, "scheduled", {}) is True
    assert pipeline.run_executes(cluster, run, "asset_triggered", {}) is True
    # Without a policy, or without a scale event, a scheduled run stays a dry run.
    assert pipeline.run_executes(cluster.model_copy(update={"approval_policy": None}), run, "scheduled", {}) is False
    assert pipeline.wants_execution("scheduled", {}, ScaleEvent((), ()), cluster.approval_policy) is False
    assert pipeline.run_executes(cluster, run, "manual", {"mode": "dry-run"}) is False


def test_a_scale_out_is_approved_by_a_policy_that_allows_it_and_executes(scaled, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg, runs = scaled
    cluster, (run, staged) = cfg.clusters[0], runs["grow-ok"]
    monkeypatch.setenv("KAFKA_REBALANCE_HOME", str(Path(run["run_dir"]).parents[2]))
    monkeypatch.setenv(APPROVAL_KEY_ENV, KEY)
    manifest = read_manifest(Path(staged))
    moves, copied = manifest["summary"]["replica_moves"], manifest["summary"]["bytes_moved"]
    assert 0 < copied <= 20 * 2**30

    verdict = pipeline.apply_policy(cluster, staged, "configured")
    assert verdict is not None and verdict["outcome"] == "approved" and verdict["approved_by"] == "policy:small-moves"
    approval = json.loads((Path(staged) / "approval.json").read_text())
    assert (approval["decision"], approval["by"], approval["plan_hash"]) == ("approved", "policy:small-moves",
                                                                             manifest["plan_hash"])
    assert approval["policy"]["rule"] == "small-moves" and approval["policy"]["when"] == {"max_bytes": 20 * 2**30}
    assert (approval["policy"]["figures"]["replica_moves"], approval["policy"]["figures"]["bytes_moved"]) == (moves, copied)
    assert approval["snapshot_captured_at"] == GATHERED  # decide's record, as for a person's approval
    assert approval["signature"]["key"] == fingerprint(KEY.encode())

    # The approval step asks nobody and hands preflight the policy's decision (PlanApprovalOperator).
    decision = {"chosen_options": ["Approve"], "responded_by": {"id": "policy:small-moves", "name": "policy:small-moves"}}
    assert pipeline.preflight(cfg, cluster, staged, decision)["batches_to_run"]
    executed = pipeline.execute(cfg, cluster, staged)
    assert executed["hold"] is None and executed["plan_hash"] == manifest["plan_hash"]
    after = load_snapshot(pipeline.gather(cfg, cluster, "scheduled__2")["snapshot"])
    assert sum(6 in p.replicas for p in after.partitions) == moves  # every move went to the new broker
    assert scale_event(after) == ScaleEvent((), ())


def test_a_scale_out_is_held_for_a_person_by_a_policy_that_does_not_allow_it(scaled, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg, runs = scaled
    cluster, (run, staged) = cfg.clusters[1], runs["grow-held"]
    monkeypatch.setenv("KAFKA_REBALANCE_HOME", str(Path(run["run_dir"]).parents[2]))
    monkeypatch.setenv(APPROVAL_KEY_ENV, KEY)
    verdict = pipeline.apply_policy(cluster, staged, "configured")
    assert verdict is not None and verdict["outcome"] == "held" and verdict["approved_by"] is None
    assert verdict["misses"][0].startswith("rule leaders-only: ") and verdict["misses"][1].startswith("rule small-moves: ")
    assert not (Path(staged) / "approval.json").exists()
    # Nothing runs without a person's approval: preflight and execute both refuse.
    with pytest.raises(RebalanceError, match="the approval step records no approver"):
        pipeline.preflight(cfg, cluster, staged, None)
    with pytest.raises(PlanDirError, match="approval.json: missing; nobody approved this plan"):
        pipeline.execute(cfg, cluster, staged)
    assert scale_event(load_snapshot(pipeline.gather(cfg, cluster, "scheduled__2")["snapshot"])).added == (6,)


def test_a_policy_approval_meets_the_plan_age_limit_like_a_persons(scaled) -> None:
    """A plan the policy allows, on a real (non-simulated) cluster, judged four days after its snapshot was gathered."""
    _, runs = scaled
    run, staged = runs["grow-held"]  # never approved: its approval.json is still to be written
    real = ClusterConfig.model_validate({"cluster_id": "grow-ok", "source": "kafka_prod", "approval_policy": ALLOWS})
    late = datetime.fromisoformat(GATHERED.replace("Z", "+00:00")) + timedelta(days=4)
    with pytest.raises(PlanDirError, match=r"not approved: the plan's snapshot was gathered 4d00h ago \(captured_at "
                                           r"2026-01-01T00:00:00Z\), over the maximum plan age of 24h00m"):
        pipeline.apply_policy(real, staged, "configured", now=late)
    assert not (Path(staged) / "approval.json").exists()


def test_the_fleet_names_a_cluster_with_a_scale_event_as_needing_a_plan(scaled, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    cfg, _ = scaled
    monkeypatch.setenv("KAFKA_REBALANCE_HOME", str(tmp_path))  # clusters of its own, scaled out and never planned
    for cluster in cfg.clusters:
        _scaled_out(cfg, cluster)
    gathered = fleet.gather_fleet(cfg, "scheduled__1")
    Path(gathered["analysis"]).mkdir()
    # Leader imbalance alone calls both clusters balanced: only the scale event makes them need a plan.
    (Path(gathered["analysis"]) / "summary.json").write_text(json.dumps({"clusters": [
        {"cluster_id": c.cluster_id, "balanced": True, "threshold_percentage": 10.0} for c in cfg.clusters]}))
    assert fleet.fleet_summary(gathered) == []
    assert fleet.fleet_summary(gathered, cfg) == ["grow-held", "grow-ok"]
    written = json.loads((Path(gathered["run_dir"]) / "fleet_summary.json").read_text())
    assert [r["scale_event"] for r in written["clusters"]] == [{"added": [6], "leaving": []}] * 2
