"""The plugin's trigger page: every bad field refused with its reason, nothing changed; a valid form creates one run.

Served by Airflow's own API server app with the plugin loaded, behind its login (tests/support/airflow_api.py);
the cluster's DAG is parsed into the test session's Airflow DB as the DAG processor would, and the DAG's paused
state and its runs are read back from that DB.
"""

from __future__ import annotations

import html
import re
import shutil
from urllib.parse import unquote

import pytest

from kafka_rebalance.orchestration.staging import run_dir
from kafka_rebalance.snapshot import load_snapshot
from kafka_rebalance.units import MIB, parse_bytes
from tests.support.airflow_api import airflow_app

# In the test clusters file; no other test triggers its DAG.
CLUSTER = "demo-eu-1"
DAG_ID = "kafka_rebalance_demo_eu_1"
URL = f"/kafka-rebalance/trigger/{CLUSTER}"


@pytest.fixture(scope="module")
def dag_in_db(airflow_db) -> str:
    """The DAG as the DAG processor writes it (serialized, with its DagModel), paused as a new DAG is."""
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.dag_processing.dagbag import BundleDagBag, sync_bag_to_db
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session

    manager = DagBundlesManager()
    manager.sync_bundles_to_db()
    for bundle in manager.get_all_dag_bundles():
        if not bundle.is_initialized:
            bundle.initialize()
        # Only the per-cluster DAGs' file: the fleet DAG's adds seconds and nothing this page needs.
        bag = BundleDagBag(dag_folder=bundle.path / "kafka_rebalance.py", bundle_path=bundle.path, bundle_name=bundle.name)
        sync_bag_to_db(bag, bundle.name, bundle.version)
    with create_session() as session:
        model = session.get(DagModel, DAG_ID)
        assert model is not None, "the DAG was not parsed into the DB"
        model.is_paused = True
    return DAG_ID


@pytest.fixture(scope="module")
def api(dag_in_db):
    from fastapi.testclient import TestClient

    with airflow_app() as (app, token):

        def client(role: str | None, origin: str = "http://testserver", **kwargs) -> TestClient:
            return TestClient(app, cookies={"_token": token(role)}, headers={"Origin": origin}, **kwargs)

        yield client, TestClient(app)


def dag_state() -> tuple[bool, list]:
    """(is the DAG paused, its runs' (run_id, conf)), from Airflow's DB."""
    from airflow.models.dag import DagModel
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        model = session.get(DagModel, DAG_ID)
        assert model is not None
        runs = [(r.run_id, r.conf) for r in session.scalars(select(DagRun).where(DagRun.dag_id == DAG_ID))]
        return bool(model.is_paused), runs


def form(**changes: str | list[str]) -> dict[str, str | list[str]]:
    """A valid submission, as the page's defaults would send it, with ``changes``."""
    base: dict[str, str | list[str]] = {
        "mode": "dry-run", "throttle": "50MiB/s", "max_partitions_per_batch": "50", "max_moves_per_broker": "5",
        "ordering": "small-first", "max_disk_usage": "0.85", "threshold_percentage": "", "goals": "",
        "optimizer": "auto", "window": "configured",
    }  # fmt: skip
    return {**base, **changes}


def error_of(page: str, name: str) -> str | None:
    found = re.search(rf'<p class="error" id="error-{name}">([^<]*)</p>', page)
    return html.unescape(found.group(1)) if found else None


def test_the_page_shows_every_field_of_the_dags_form_with_the_clusters_defaults(api, sample_snapshot_path) -> None:
    client, _ = api
    page = client("user").get(URL)
    assert page.status_code == 200, page.text
    # No snapshot gathered yet: the brokers and topics are typed, comma-separated.
    assert '<input type="text" id="input-decommission_brokers"' in page.text
    # The last gathered snapshot's brokers and topics to choose from, once a run gathered one.
    snap = load_snapshot(sample_snapshot_path)
    gathered = run_dir(CLUSTER, "manual__trigger-page-test")
    shutil.copy(sample_snapshot_path, gathered / "snapshot.json")
    try:
        page = client("user").get(URL)
    finally:
        shutil.rmtree(gathered)
    brokers = re.search(r'<select id="input-decommission_brokers" name="decommission_brokers" multiple[^>]*>(.*?)</select>',
                        page.text, re.S)
    assert brokers and re.findall(r'<option value="(\d+)"', brokers.group(1)) == [str(b) for b in sorted(snap.broker_ids)]
    topics = re.search(r'<select id="input-exclude_topics" name="exclude_topics" multiple[^>]*>(.*?)</select>', page.text, re.S)
    assert topics and set(re.findall(r'<option value="([^"]+)"', topics.group(1))) == {p.topic for p in snap.partitions}
    assert page.status_code == 200, page.text
    for name in ("mode", "throttle", "max_partitions_per_batch", "max_moves_per_broker", "ordering", "exclude_topics",
                 "decommission_brokers", "max_disk_usage", "relieve", "threshold_percentage", "goals", "optimizer", "window",
                 "rearm"):
        assert f'name="{name}"' in page.text, name
    assert 'name="throttle" value="50MiB/s"' in page.text  # the CLI's unit, not MB/s
    assert "1.0 KiB/s to 8.0 EiB/s" in page.text  # the range as a person writes it
    assert "one or more of: placement, rack-safety," in page.text  # the goals a list may name
    assert 'name="unpause"' in page.text  # the DAG is paused: unpausing is asked, never done unseen
    assert "<script" not in page.text.lower() and "script-src" not in page.headers["content-security-policy"]
    listed = client("viewer").get("/kafka-rebalance/").text
    assert f'href="{URL}"' in listed


def test_two_bad_values_are_each_refused_on_their_field_and_nothing_changes(api) -> None:
    client, _ = api
    before = dag_state()
    r = client("user").post(URL, data=form(throttle="0", window="2026-11-25T01:00/PT4H", max_moves_per_broker="x"))
    assert r.status_code == 422, r.text
    throttle, window, moves = (error_of(r.text, n) for n in ("throttle", "window", "max_moves_per_broker"))
    assert throttle and "throttle must be within 1.0 KiB/s to 8.0 EiB/s" in throttle and throttle.endswith("got 0")
    assert window and "window" in window and "has no time zone" in window
    assert moves and "expected a whole number" in moves
    assert error_of(r.text, "mode") is None and error_of(r.text, "max_partitions_per_batch") is None
    # What was typed stays, to be corrected; the paused DAG stays paused and no run exists.
    assert 'name="window" value="2026-11-25T01:00/PT4H"' in r.text
    assert dag_state() == before and before[0] is True


def test_a_valid_form_creates_one_run_with_the_checked_conf_and_leaves_the_dag_paused(api) -> None:
    client, _ = api
    paused, runs = dag_state()
    r = client("user", follow_redirects=False).post(
        URL, data=form(mode="execute", throttle="20MiB/s", decommission_brokers=["3", "1"], window="2026-11-25T01:00Z/PT4H",
                       threshold_percentage="12.5", goals="bytes, replica-count", relieve="on"))
    assert r.status_code == 303, r.text
    after_paused, after = dag_state()
    new = [run for run in after if run not in runs]
    assert len(new) == 1 and after_paused is True  # no "unpause" ticked: still paused
    run_id, conf = new[0]
    assert unquote(r.headers["location"]) == f"/dags/{DAG_ID}/runs/{run_id}"  # the run in Airflow's UI
    assert conf["mode"] == "execute" and parse_bytes(conf["throttle"], "throttle") == 20 * MIB
    assert conf["decommission_brokers"] == [3, 1] and conf["threshold_percentage"] == 12.5
    assert conf["window"] == "2026-11-25T01:00Z/PT4H" and conf["max_moves_per_broker"] == 5 and conf["rearm"] is False
    assert conf["goals"] == ["bytes", "replica-count"] and conf["exclude_topics"] == []
    assert conf["relieve"] is True  # the relief checkbox, ticked


def test_only_a_signed_in_user_allowed_to_trigger_from_this_site_may(api) -> None:
    client, anonymous = api
    before = dag_state()
    assert anonymous.get(URL).status_code == 401
    assert anonymous.post(URL, data=form()).status_code == 401
    assert client("viewer").get(URL).status_code == 403  # may read runs, not create them
    assert client("viewer").post(URL, data=form()).status_code == 403
    assert client("user", origin="https://evil.example").post(URL, data=form()).status_code == 403
    assert dag_state() == before
    assert client("user").get("/kafka-rebalance/trigger/no-such-cluster").status_code == 404


def test_unpause_is_done_only_when_ticked_after_the_run_is_created(api) -> None:
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session

    client, _ = api
    _, runs = dag_state()
    try:
        r = client("user", follow_redirects=False).post(URL, data={**form(), "unpause": "on"})
        assert r.status_code == 303, r.text
        paused, after = dag_state()
        assert paused is False and len(after) == len(runs) + 1
    finally:
        with create_session() as session:
            model = session.get(DagModel, DAG_ID)
            assert model is not None
            model.is_paused = True
