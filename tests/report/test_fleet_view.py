"""The fleet page's view, without Airflow: every configured cluster, its last analysis as the Spark job's writer
left it on disk, its imbalance over time, and its staged plans grouped by their real progress (a plan run on the
simulator, one left unapproved, one whose ledger is corrupt)."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafka_rebalance.analysis.job import AnalysisResult, write_outputs
from kafka_rebalance.cluster.sim_admin import SimAdmin
from kafka_rebalance.executor.executor import Executor
from kafka_rebalance.executor.settings import ExecSettings
from kafka_rebalance.plan_dir import SIM_STATE_FILE
from kafka_rebalance.plan_manifest import load_plan
from kafka_rebalance.planner import PlanOptions, make_plan, write_plan
from kafka_rebalance.report.fleet_view import FleetView, PlanGroup, fleet_view, read_fleet
from kafka_rebalance.report.templating import environment
from kafka_rebalance.snapshot import snapshot_from_dict, write_snapshot
from tests.support.plans import approve, judge, small_snapshot


@dataclass(frozen=True)
class Entry:  # a clusters.yaml entry as read_fleet needs it
    cluster_id: str
    dag_id: str
    source: str


def broker(cluster: str, broker_id: int, preferred: int, not_led: int, size: int) -> dict:
    ratio = not_led / preferred if preferred else None
    return {"cluster_id": cluster, "broker_id": broker_id, "rack": None, "alive": True, "preferred_partitions": preferred,
            "preferred_not_led": not_led, "imbalance_ratio": ratio, "threshold_percentage": 10.0,
            "threshold_source": "kafka-default", "exceeds_threshold": ratio is not None and ratio > 0.10,
            "replicas": preferred * 2, "leaders": preferred - not_led, "size_bytes": size,
            "leader_bytes_in_per_sec": 0.0, "under_replicated_partitions": 0, "could_lead_after_election": not_led}


def entry(cluster: str, max_ratio: float, over: list[int]) -> dict:
    return {"cluster_id": cluster, "balanced": not over,
            "goals": [{"name": "leader-imbalance", "reached": not over, "offenders": over},
                      {"name": "bytes", "reached": True, "offenders": []}], "threshold_percentage": 10.0, "max_imbalance_ratio": max_ratio,
            "brokers_over_threshold": over, "live_brokers": 3, "partitions": 12,
            "byte_spread": {"mean": 1.5 * 2**30, "tolerance": 0.1}}


def analysis(directory: Path, mtime: float, rows: list[dict], entries: list[dict]) -> None:
    """An analysis directory as the Spark job writes it (its own writer), dated ``mtime``."""
    write_outputs(AnalysisResult(rows, {"clusters": entries}), directory)
    os.utime(directory / "summary.json", (mtime, mtime))


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fleet")
    t0 = 1_790_000_000.0  # 2026-09-21T14:13:20Z
    # Oldest: a fleet run over both clusters; then the cluster DAG's own run; newest: a fleet run after a rebalance.
    analysis(root / "runs/_fleet/scheduled__1/analysis", t0,
             [broker("east", b, 4, n, 1) for b, n in ((1, 3), (2, 0), (3, 0))] + [broker("west", 1, 4, 0, 1)],
             [entry("east", 0.75, [1]), entry("west", 0.0, [])])
    analysis(root / "runs/east/manual__2/analysis", t0 + 600, [broker("east", b, 4, n, 1) for b, n in ((1, 2), (2, 0), (3, 0))],
             [entry("east", 0.5, [1])])
    analysis(root / "runs/_fleet/scheduled__3/analysis", t0 + 1200,
             [broker("east", 1, 4, 0, 3 * 2**30), broker("east", 2, 4, 1, 2**30), broker("east", 3, 4, 0, 2**29)],
             [entry("east", 0.25, [2])])  # west could not be gathered by this run

    snap = snapshot_from_dict(small_snapshot(), "test")
    snapshot = write_snapshot(snap, root / "snapshot.json")
    plan = make_plan(snap, PlanOptions(threshold_percentage=10.0, threshold_source="setting", max_partitions_per_batch=2))

    def stage(cluster: str, name: str) -> Path:
        out = root / "plans" / cluster / name
        write_plan(plan, out, str(snapshot))
        judge(out, "passed")
        return out

    finished = approve(stage("east", "finishedplan0001"))
    Executor(load_plan(finished, require_approval=True), SimAdmin.open(snap, finished / SIM_STATE_FILE),
             ExecSettings(poll_interval=5.0)).run()
    stage("east", "waitingplan00002")
    corrupt = stage("east", "corruptplan00003")
    (corrupt / "ledger.json").write_text("{not json")
    return root


CLUSTERS = [Entry("east", "kafka_rebalance_east", "kafka_east"), Entry("west", "kafka_rebalance_west", "kafka_west"),
            Entry("north", "kafka_rebalance_north", "simulated:north.json")]


@pytest.fixture(scope="module")
def view(root) -> FleetView:
    return fleet_view(read_fleet(root, CLUSTERS))


def test_each_cluster_gets_its_last_analysis_its_history_and_its_plans_by_progress(view) -> None:
    assert [c.cluster_id for c in view.clusters] == ["east", "west", "north"]  # the clusters file's order
    east, west, north = view.clusters

    # The newest analysis is the last fleet run's; its per-broker bars and the threshold line are drawn.
    assert east.last is not None and east.last.run == "fleet run scheduled__3"
    assert east.verdict == ("NOT balanced (goals not met: leader-imbalance): largest broker leader imbalance 25.0 % "
                            "against the threshold 10 %; "
                            "brokers over it: 2 (fleet run scheduled__3, 2026-09-21 14:33:20 UTC)")
    assert east.imbalance_chart is not None and east.bytes_chart is not None
    for b in (1, 2, 3):
        assert f'id="fleet-east-imbalance-bar-analysis-{b}"' in east.imbalance_chart
        assert f'id="fleet-east-bytes-bar-analysis-{b}"' in east.bytes_chart
    assert 'id="fleet-east-imbalance-threshold-line"' in east.imbalance_chart
    assert [">0.0%<", ">25.0%<", ">0.0%<"] == re.findall(r">\d+\.\d%<", east.imbalance_chart)  # each bar's value
    assert "threshold 10%" in east.imbalance_chart and ">GiB<" in east.bytes_chart
    assert 'id="fleet-east-bytes-target-band"' in east.bytes_chart and "mean ± 10%" in east.bytes_chart

    # Over time: the three analyses of east, oldest first (75 %, 50 %, 25 %), both DAGs' runs, with the threshold.
    assert east.analyses == 3 and east.history_chart is not None
    assert 'id="fleet-east-history-threshold-line"' in east.history_chart
    assert re.findall(r">(09-21 14:\d\d)<", east.history_chart) == ["09-21 14:13", "09-21 14:23", "09-21 14:33"]

    # West: the oldest fleet run is its last analysis (the newest could not gather it); north: none, in one line.
    assert west.last is not None and west.last.run == "fleet run scheduled__1" and west.last.balanced is True
    assert west.verdict.startswith("balanced: largest broker leader imbalance 0.0 %")
    assert north.last is None and north.imbalance_chart is north.history_chart is None
    assert north.verdict == ("No analysis of north yet: the fleet DAG (kafka_fleet_imbalance) or the cluster's own DAG "
                             "writes one.")
    assert all(rows == () for rows in north.plans.values())

    # Plans by their progress: the one run on the simulator is done, the unapproved one staged, the corrupt one said.
    done = east.plans[PlanGroup.DONE]
    assert [(r.plan, r.state, r.headline, r.percent, r.decision) for r in done] == [
        ("finishedplan0001", "finished", "finished, 100.0 % of bytes", 100.0, "approved")]
    staged = {r.plan: r for r in east.plans[PlanGroup.STAGED]}
    assert staged["waitingplan00002"].headline == "not-started, 0.0 % of bytes"
    assert staged["waitingplan00002"].decision == "not decided"
    assert staged["corruptplan00003"].state == "unreadable" and "ledger" in staged["corruptplan00003"].headline
    assert east.plans[PlanGroup.EXECUTING] == ()


def test_the_page_renders_every_cluster_with_inline_svg_and_no_script(view) -> None:
    page = environment().get_template("fleet.html.j2").render(
        view=view, index_link="/kafka-rebalance/", plan_base="/kafka-rebalance",
        trigger_links={c.cluster_id: f"/kafka-rebalance/trigger/{c.cluster_id}" for c in CLUSTERS})
    assert "<script" not in page.lower()
    assert page.count("<svg ") == 6  # three charts for each cluster with an analysis
    assert 'id="verdict-north">No analysis of north yet' in page
    assert 'href="/kafka-rebalance/control/east/finishedplan0001"' in page
    ids = re.findall(r' id="([^"]+)"', page)
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


def test_an_unreadable_summary_is_said_and_the_older_analysis_shown(tmp_path) -> None:
    analysis(tmp_path / "runs/_fleet/a/analysis", 1_790_000_000.0, [broker("east", 1, 4, 0, 1)], [entry("east", 0.0, [])])
    bad = tmp_path / "runs/east/b/analysis"
    bad.mkdir(parents=True)
    (bad / "summary.json").write_text(json.dumps({"clusters": "not a list"}))
    [east] = fleet_view(read_fleet(tmp_path, CLUSTERS[:1])).clusters
    assert east.last is not None and east.last.run == "fleet run a"
    assert east.problems == (f"east run b: {bad / 'summary.json'}: field 'clusters' must be a list",)
