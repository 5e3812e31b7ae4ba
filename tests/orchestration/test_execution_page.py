"""The execution page, the plans list, report.html and ``status`` show one progress for one plan directory.

Each state comes from a real run of a real plan (the planner's, on the sample cluster) on the simulator:
not approved, caught running (the plan directory copied while moves were in flight), paused and stopped
by an operator mid-run, failed (every move over its time limit) and finished. The pages are served by
Airflow's own API server app with the plugin loaded, behind its login, as in tests/airflow_dags/test_plugin.py.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from kafka_rebalance.cluster.sim_admin import SimAdmin
from kafka_rebalance.executor.control import request
from kafka_rebalance.executor.executor import Executor
from kafka_rebalance.executor.progress import read_progress
from kafka_rebalance.executor.settings import ExecSettings
from kafka_rebalance.plan_dir import SIM_STATE_FILE
from kafka_rebalance.plan_manifest import load_plan
from kafka_rebalance.planner import PlanOptions, make_plan, write_plan
from kafka_rebalance.report.html import write_report
from kafka_rebalance.snapshot import snapshot_from_dict, write_snapshot
from kafka_rebalance.units import human_bytes
from tests.support.airflow_api import airflow_app
from tests.support.cli_inprocess import run_cli
from tests.support.plans import approve, judge, small_snapshot

PLANS = Path(os.environ["KAFKA_REBALANCE_HOME"]) / "plans"
# Clusters of their own (not in the test clusters file: reading their plans needs the right to read every DAG's runs).
STATES = ("not-started", "running", "paused", "stopped", "failed", "finished")
CLUSTER = {state: f"xp-{state}" for state in STATES}


@pytest.fixture(scope="module")
def api(airflow_db):
    from fastapi.testclient import TestClient

    with airflow_app() as (app, token):

        def client(role: str, **kwargs) -> TestClient:
            return TestClient(app, cookies={"_token": token(role)}, headers={"Origin": "http://testserver"}, **kwargs)

        yield client


@pytest.fixture(scope="module")
def snapshot_path(tmp_path_factory) -> Path:
    """A small cluster (six brokers, a few partitions to move): each run takes a fraction of a second."""
    return write_snapshot(snapshot_from_dict(small_snapshot(), "test"), tmp_path_factory.mktemp("xp") / "snapshot.json")


@pytest.fixture(scope="module")
def plans(snapshot_path) -> dict[str, Path]:
    """One staged plan directory per state, all of the same plan (so under a cluster directory each)."""
    snap = snapshot_from_dict(small_snapshot(), "test")
    # Two partitions a batch, so the batches of one plan end at different times; one move per broker at a time,
    # so a pause or stop after the first move leaves moves that never started.
    plan = make_plan(snap, PlanOptions(threshold_percentage=10.0, threshold_source="setting", max_partitions_per_batch=2,
                                         max_moves_per_broker=1))

    def stage(state: str) -> Path:
        writing = PLANS / CLUSTER[state] / ".writing"
        shutil.rmtree(writing.parent, ignore_errors=True)
        write_plan(plan, writing, str(snapshot_path))
        staged = writing.rename(writing.parent / json.loads((writing / "plan.json").read_text())["plan_hash"][:16])
        judge(staged, "passed")
        return staged

    def run(path: Path, settings: ExecSettings, at_first_move=None) -> None:
        """Execute on the simulator; ``at_first_move(path)`` once a move finished while others are in flight."""
        pending = [at_first_move] if at_first_move else []

        def seen(_line: str) -> None:
            if pending:
                p = read_progress(path)
                if p.moves_done >= 1 and p.moves_in_flight >= 1:
                    pending.pop()(path)

        approve(path)
        Executor(load_plan(path, require_approval=True), SimAdmin.open(snap, path / SIM_STATE_FILE), settings,
                 progress=seen).run()

    out = {state: stage(state) for state in STATES}
    running = out.pop("running")
    shutil.rmtree(running)

    def catch_running(path: Path) -> None:
        shutil.copytree(path, running)

    run(out["finished"], ExecSettings(poll_interval=5.0), catch_running)
    out["running"] = running
    run(out["paused"], ExecSettings(poll_interval=5.0), lambda path: request(path, "pause", by="alice"))
    run(out["stopped"], ExecSettings(poll_interval=5.0), lambda path: request(path, "stop", by="bob"))
    run(out["failed"], ExecSettings(poll_interval=0.001, batch_timeout=0.001))
    yield out
    for cluster in CLUSTER.values():
        shutil.rmtree(PLANS / cluster, ignore_errors=True)


def figures_in(page: str) -> dict[str, str]:
    """The progress figures of a page: the rows of its ``progress-figures`` table, by key."""
    table = re.search(r'<table id="progress-figures">(.*?)</table>', page, re.S)
    assert table, page[:2000]
    return {k: html.unescape(v) for k, v in re.findall(r'<tr id="progress-figure-([\w-]+)"><td>[^<]*</td><td>([^<]*)</td></tr>',
                                                        table.group(1))}


def batches_in(page: str) -> list[tuple[str, str, str, str]]:
    """(batch, state, started, ended) per row of a page's ``progress-batches`` table."""
    return re.findall(r'<tr data-progress-batch="([^"]+)">.*?class="xp-badge xp-([\w-]+)">.*?</td><td>[^<]*</td><td>[^<]*</td>'
                      r'<td class="l">([^<]*)</td><td class="l">([^<]*)</td>', page)


def buttons_in(page: str, url: str) -> set[str]:
    return {a for a in ("pause", "resume", "stop") if f'action="{url}/{a}"' in page}


@pytest.mark.parametrize("state", STATES)
def test_the_page_the_report_the_list_and_status_show_one_progress(api, plans, snapshot_path, state) -> None:
    path = plans[state]
    status = run_cli("status", "--plan", str(path), "--json")
    assert status.code == 0, status.stderr
    js = json.loads(status.stdout)
    assert js["state"] == state, js  # the state each run ended in (or was caught in)
    url = f"/kafka-rebalance/control/{CLUSTER[state]}/{path.name}"
    viewer = api("viewer")
    page = viewer.get(url)
    assert page.status_code == 200, page.text
    report = write_report(path, snapshot_path).read_text()
    listed = viewer.get("/kafka-rebalance/").text
    human = run_cli("status", "--plan", str(path)).stdout

    # One headline: state and percent, as status --json gives them.
    headline = f"{state}, {js['percent_bytes']:.1f} % of bytes"
    assert f'<strong id="progress-headline">{headline}</strong>' in page.text
    assert f'<strong id="progress-headline">{headline}</strong>' in report
    row = next(r for r in listed.split("<tr>") if f">{path.name}</a>" in r and CLUSTER[state] in r)
    assert f"<td class=execution>{headline}</td>" in row
    assert human.splitlines()[0] == f"plan {js['plan_hash'][:16]}: {headline}"

    for text in (page.text, report):  # ids a browser test can find one element by
        ids = re.findall(r' id="([^"]+)"', text)
        assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)

    # The same figures on the page and in the report, and in status's own lines.
    shown = figures_in(page.text)
    assert shown == figures_in(report)
    assert shown["moves"].startswith(f"{js['moves_done']} done, {js['moves_in_flight']} in flight, "
                                     f"{js['moves_pending']} pending")
    assert shown["bytes"] == (f"{human_bytes(js['bytes_done'])} done, {human_bytes(js['bytes_left'])} left "
                              f"(of {human_bytes(js['bytes_total'])})")
    for key, value in shown.items():
        if key not in ("state", "percent"):
            assert f": {value}" in human, (key, value, human)
    assert ("eta" in shown) == (state == "running")
    if state == "running":
        assert js["eta_at"] is not None and shown["eta"].startswith(js["eta_at"]) and js["rate_bytes_per_sec"] > 0
        assert 0 < js["percent_bytes"] < 100

    # One row per batch, with the times the ledger holds; every batch of a finished plan has ended.
    rows = [(b["id"], b["state"], b["started_at"] or "–", b["ended_at"] or "–") for b in js["batches"]]
    assert batches_in(page.text) == rows and batches_in(report) == rows and rows
    if state == "finished":
        assert all(b["state"] == "finished" and b["ended_at"] for b in js["batches"])

    # Buttons only where they apply (not before approval, none once the execution ended); the page
    # reloads itself only while something may still change.
    expected = {"not-started": set(), "running": {"pause", "stop"}, "paused": {"resume", "stop"}}.get(state, set())
    assert buttons_in(page.text, url) == expected
    assert ('http-equiv="refresh"' in page.text) == (state in ("not-started", "running", "paused"))
    assert "<script" not in page.text.lower() and "script-src" not in page.headers["content-security-policy"]
    if state == "not-started":
        assert "Not approved yet" in page.text


def test_stop_asks_first_and_is_refused_once_the_plan_finished(api, plans) -> None:
    admin = api("admin", follow_redirects=False)
    finished, running = plans["finished"], plans["running"]
    url = f"/kafka-rebalance/control/{CLUSTER['finished']}/{finished.name}"
    assert admin.get(f"{url}/stop").status_code == 409  # no confirmation to give
    refused = admin.post(f"{url}/stop")
    assert refused.status_code == 409 and "finished" in refused.json()["detail"]
    assert not (finished / "control.json").exists()
    assert json.loads(run_cli("status", "--plan", str(finished), "--json").stdout)["state"] == "finished"
    cli = run_cli("stop", "--plan", str(finished))
    assert cli.code == 2 and "finished" in cli.stderr and not (finished / "control.json").exists()

    url = f"/kafka-rebalance/control/{CLUSTER['running']}/{running.name}"
    page = admin.get(url).text
    assert f'<form method="get" action="{url}/stop">' in page  # the Stop button only opens the question
    ask = admin.get(f"{url}/stop")
    assert ask.status_code == 200 and "Stop this execution?" in ask.text
    assert f'<form method="post" action="{url}/stop">' in ask.text and 'http-equiv="refresh"' not in ask.text
    assert not (running / "control.json").exists()  # asking recorded nothing
    done = admin.post(f"{url}/stop")
    assert done.status_code == 303 and done.headers["location"] == url
    after = admin.get(url).text
    assert 'id="progress-state">stopped<' in after and buttons_in(after, url) == set()
    assert json.loads(run_cli("status", "--plan", str(running), "--json").stdout)["state"] == "stopped"


def test_a_corrupt_ledger_is_said_on_the_page_and_in_the_list_never_a_500(api, plans) -> None:
    path = plans["not-started"]
    (path / "ledger.json").write_text('{"version": 2, "plan_hash": ')
    try:
        viewer = api("viewer", raise_server_exceptions=False)
        page = viewer.get(f"/kafka-rebalance/control/{CLUSTER['not-started']}/{path.name}")
        assert page.status_code == 409 and "ledger.json" in page.json()["detail"]
        row = next(r for r in viewer.get("/kafka-rebalance/").text.split("<tr>") if CLUSTER["not-started"] in r)
        assert "<td class=execution>unreadable (" in row and "ledger.json" in row
    finally:
        (path / "ledger.json").unlink()


def test_the_fleet_page_lists_every_configured_cluster_behind_the_login(api) -> None:
    from kafka_rebalance.orchestration.clusters_config import clusters_file, load_clusters

    configured = [c.cluster_id for c in load_clusters(clusters_file()).clusters]
    viewer = api("viewer")
    assert 'id=fleet-link href="/kafka-rebalance/fleet"' in viewer.get("/kafka-rebalance/").text
    page = viewer.get("/kafka-rebalance/fleet")
    assert page.status_code == 200 and "default-src 'none'" in page.headers["content-security-policy"]
    assert re.findall(r'<section class="card" id="cluster-[^"]+" data-cluster="([^"]+)">', page.text) == configured
    assert "<script" not in page.text.lower()
    from fastapi.testclient import TestClient

    assert TestClient(viewer.app).get("/kafka-rebalance/fleet").status_code == 401  # no login cookie
