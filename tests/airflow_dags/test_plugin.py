"""The Airflow plugin: loaded by Airflow, its pages served by the real API server app, behind Airflow's login.

The app is Airflow's own (``create_app``) with the plugin loaded and the simple auth manager
in its normal mode (not all-admins, which would log every request in as admin); tokens are
minted by the auth manager itself.
"""

from __future__ import annotations

import html
import json
import os
import shutil
from pathlib import Path

import pytest

from kafka_rebalance.orchestration.staging import run_dir_path
from tests.support.airflow_api import airflow_app

PLANS = Path(os.environ["KAFKA_REBALANCE_HOME"]) / "plans"
# In the test clusters file (DAG kafka_rebalance_demo_eu_1), and no DAG test stages plans for it:
# the hand-made plans below are removed again after this module.
CLUSTER = "demo-eu-1"
XSS_STATUS = "<script>alert('status')</script>"
XSS_MOVES = "<img src=x onerror=alert('moves')>"
XSS_DIR = "<b>x"


@pytest.fixture(scope="module")
def api(airflow_db):
    from fastapi.testclient import TestClient

    with airflow_app() as (app, token):
        yield app, TestClient, token
    shutil.rmtree(PLANS / CLUSTER, ignore_errors=True)
    for run in ("manual__broken", "manual__good"):
        shutil.rmtree(run_dir_path("balanced", run), ignore_errors=True)


def stage(cluster: str, name: str, files: dict[str, str | bytes]) -> Path:
    plan = PLANS / cluster / name
    plan.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        (plan / rel).parent.mkdir(parents=True, exist_ok=True)
        data = content.encode() if isinstance(content, str) else content
        (plan / rel).write_bytes(data)
    return plan


GOOD = {"plan.json": json.dumps({"summary": {"replica_moves": 7}, "validation": {"status": "passed"}}),
        "report.html": "<html>the report</html>", "RUNBOOK.md": "# runbook\n"}  # fmt: skip

PAGES = ["/kafka-rebalance/", f"/kafka-rebalance/plans/{CLUSTER}/abcdef0123456789/report.html",
         "/kafka-rebalance/runs/kafka_rebalance_balanced/manual__nothing"]  # fmt: skip


def assert_security_headers(r) -> None:
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp and "frame-ancestors 'self'" in csp
    assert r.headers["x-content-type-options"] == "nosniff"


def test_pages_need_an_airflow_token(api) -> None:
    app, TestClient, token = api
    stage(CLUSTER, "abcdef0123456789", GOOD)
    anonymous = TestClient(app)
    for page in PAGES:
        r = anonymous.get(page)
        assert r.status_code == 401, (page, r.status_code, r.text)
        assert "the report" not in r.text and "abcdef0123456789" not in r.text
        assert_security_headers(r)
        # A token that is not the auth manager's is refused, in the header and in the cookie.
        forged = anonymous.get(page, headers={"Authorization": "Bearer eyJhbGciOiJIUzUxMiJ9.e30.AAAA"})
        assert forged.status_code in (401, 403) and "the report" not in forged.text
        assert TestClient(app, cookies={"_token": "not-a-jwt"}).get(page).status_code in (401, 403)
    # Authenticated but without the right to read DAG runs (a user with no role): 403.
    for page in PAGES:
        r = anonymous.get(page, headers={"Authorization": f"Bearer {token(None)}"})
        assert r.status_code == 403 and "the report" not in r.text and "abcdef0123456789" not in r.text, page
    # Airflow's own API answers the same way: this is its login, not a parallel one.
    assert anonymous.get("/api/v2/dags").status_code == 401


def test_pages_open_with_a_token_in_the_header_or_the_ui_cookie(api) -> None:
    app, TestClient, token = api
    stage(CLUSTER, "abcdef0123456789", GOOD)
    viewer = token("viewer")
    for client in (TestClient(app, headers={"Authorization": f"Bearer {viewer}"}),
                   TestClient(app, cookies={"_token": viewer})):  # fmt: skip
        index = client.get("/kafka-rebalance/")
        assert index.status_code == 200 and "abcdef0123456789" in index.text and "<td>7</td>" in index.text
        assert_security_headers(index)
        report = client.get(f"/kafka-rebalance/plans/{CLUSTER}/abcdef0123456789/report.html")
        assert report.status_code == 200 and report.text == "<html>the report</html>"
        assert_security_headers(report)
        runbook = client.get(f"/kafka-rebalance/plans/{CLUSTER}/abcdef0123456789/RUNBOOK.md")
        assert runbook.headers["content-type"].startswith("text/plain")
        r = client.get("/kafka-rebalance/runs/kafka_rebalance_balanced/manual__nothing")
        assert r.status_code == 200 and "staged no plan" in r.text
        # An encoded ../ reaches the route (a plain one is normalised away by the client) and is refused.
        escape = client.get(f"/kafka-rebalance/plans/{CLUSTER}/abcdef0123456789/..%2F..%2F..%2F..%2F..%2F..%2Fetc%2Fpasswd")
        assert escape.status_code == 404 and "root:" not in escape.text
        assert client.get(f"/kafka-rebalance/plans/{CLUSTER}/abcdef0123456789/nope.html").status_code == 404
    views = TestClient(app, headers={"Authorization": f"Bearer {viewer}"}).get("/api/v2/plugins").json()
    mine = next(p for p in views["plugins"] if p["name"] == "kafka_rebalance")
    assert {v["destination"] for v in mine["external_views"]} == {"dag_run", "nav"}


def test_values_from_plan_files_come_back_escaped(api) -> None:
    app, TestClient, token = api
    evil = {"summary": {"replica_moves": XSS_MOVES}}
    stage(CLUSTER, XSS_DIR, {"plan.json": json.dumps(evil), "approval.json": json.dumps({"decision": "<i>ok</i>"}),
                             "validation/verdict.json": json.dumps({"status": XSS_STATUS, "plan_hash": "x"})})
    client = TestClient(app, headers={"Authorization": f"Bearer {token('viewer')}"})
    index = client.get("/kafka-rebalance/")
    assert index.status_code == 200
    for raw in (XSS_MOVES, XSS_DIR, "<i>ok</i>"):
        assert raw not in index.text
        assert html.escape(raw) in index.text
    # A verdict whose status is not one of ours is shown as unreadable, never echoed.
    assert XSS_STATUS not in index.text and "unreadable" in index.text
    assert "<script" not in index.text.lower() and "<img" not in index.text.lower()
    # The run page echoes the run id: escaped too.
    r = client.get("/kafka-rebalance/runs/kafka_rebalance_balanced/<svg onload=alert(1)>")
    assert r.status_code == 200 and "<svg" not in r.text and "&lt;svg onload=alert(1)&gt;" in r.text


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"[1, 2]", b"\xff\xfe not utf-8", b"[" * 100_000 + b"]" * 100_000, b'{"summary": "moves"}',
     b'{"summary": {"replica_moves": {"nested": 1}}, "validation": []}', b'{"summary": {"replica_moves": 1' + b"0" * 5000 + b"}}"],
    ids=["broken", "list", "binary", "deep", "summary-string", "wrong-shapes", "huge-int"],
)  # fmt: skip
def test_malformed_plan_json_is_an_unreadable_row_not_a_500(api, content: bytes) -> None:
    app, TestClient, token = api
    stage(CLUSTER, "0000malformed000", {"plan.json": content, "approval.json": b"\x00\x01", "verification.json": b"7"})
    client = TestClient(app, headers={"Authorization": f"Bearer {token('viewer')}"}, raise_server_exceptions=False)
    index = client.get("/kafka-rebalance/")
    assert index.status_code == 200, index.text
    row = next(r for r in index.text.split("<tr>") if "0000malformed000" in r)
    assert "unreadable" in row
    # The file itself is still served as text (an operator may want to see what is wrong with it).
    raw = client.get(f"/kafka-rebalance/plans/{CLUSTER}/0000malformed000/plan.json")
    assert raw.status_code == 200 and raw.content == content and raw.headers["content-type"].startswith("text/plain")


def test_nul_bytes_and_broken_run_files_give_4xx(api) -> None:
    from kafka_rebalance.orchestration.staging import run_dir

    app, TestClient, token = api
    client = TestClient(app, headers={"Authorization": f"Bearer {token('viewer')}"}, raise_server_exceptions=False)
    for url in (f"/kafka-rebalance/plans/{CLUSTER}/abcdef0123456789/report%00.html",
                f"/kafka-rebalance/plans/{CLUSTER}%00/abcdef0123456789/report.html",
                "/kafka-rebalance/runs/kafka_rebalance_balanced/run%00id",
                f"/kafka-rebalance/plans/{CLUSTER}/abcdef0123456789/" + "a" * 5000):  # fmt: skip
        r = client.get(url)
        assert 400 <= r.status_code < 500, (url, r.status_code)
        assert_security_headers(r)
    for staged, expected in (
        ('{"dir": ', 422),  # truncated
        ('{"dir": 7}', 422),  # not a path
        ('{"dir": "/etc"}', 404),  # outside the staging root
        (json.dumps({"dir": str(PLANS.parent)}), 404),
        (json.dumps({"dir": str(PLANS / CLUSTER)}), 422),  # inside, but not a plan directory
    ):
        (run_dir("balanced", "manual__broken") / "staged.json").write_text(staged)
        r = client.get("/kafka-rebalance/runs/kafka_rebalance_balanced/manual__broken", follow_redirects=False)
        assert r.status_code == expected, (staged, r.status_code, r.text)
    (run_dir("balanced", "manual__good") / "staged.json").write_text(json.dumps({"dir": str(PLANS / CLUSTER / "abcdef0123456789")}))
    r = client.get("/kafka-rebalance/runs/kafka_rebalance_balanced/manual__good", follow_redirects=False)
    assert r.status_code == 307 and r.headers["location"] == f"/kafka-rebalance/plans/{CLUSTER}/abcdef0123456789/report.html"
    assert client.get("/kafka-rebalance/runs/not_a_rebalance_dag/x").status_code == 404


def test_an_unreadable_clusters_file_is_a_clear_4xx(api, tmp_path: Path, monkeypatch) -> None:
    app, TestClient, token = api
    broken = tmp_path / "clusters.yaml"
    broken.write_text("clusters: [\n")
    monkeypatch.setenv("KAFKA_REBALANCE_CLUSTERS", str(broken))
    client = TestClient(app, headers={"Authorization": f"Bearer {token('viewer')}"}, raise_server_exceptions=False)
    r = client.get("/kafka-rebalance/runs/kafka_rebalance_balanced/manual__nothing")
    assert r.status_code == 404 and f"the clusters file {broken} cannot be read" in r.json()["detail"]
    # Plans stay reachable for users who may read every DAG's runs (a viewer, under the simple auth manager).
    stage(CLUSTER, "abcdef0123456789", GOOD)
    assert client.get("/kafka-rebalance/").status_code == 200
    assert client.get(f"/kafka-rebalance/plans/{CLUSTER}/abcdef0123456789/report.html").status_code == 200


@pytest.fixture
def staged_real_plan():
    """A real plan directory (hash-checked by the control routes) staged under the test cluster."""
    from kafka_rebalance.snapshot import load_snapshot
    from tests.support.plans import approve, move_one_replica, write_plan

    root = Path(__file__).resolve().parents[2]
    snap = load_snapshot(root / "samples" / "sample-cluster.json")
    written = write_plan(PLANS / CLUSTER / ".writing", snap, [move_one_replica(snap, 2)])
    # Staged plans are named after their hash (plan_dir.verify_plan checks it).
    plan = written.rename(PLANS / CLUSTER / json.loads((written / "plan.json").read_text())["plan_hash"][:16])
    approve(plan)  # pause, resume and stop steer only a plan that may run at all
    yield plan
    shutil.rmtree(plan, ignore_errors=True)


def test_pause_resume_stop_through_the_api(api, staged_real_plan) -> None:
    app, TestClient, token = api
    url = f"/kafka-rebalance/control/{CLUSTER}/{staged_real_plan.name}"
    anonymous = TestClient(app)
    assert anonymous.get(url).status_code == 401
    assert anonymous.post(f"{url}/pause").status_code == 401
    viewer = TestClient(app, headers={"Authorization": f"Bearer {token('viewer')}"})
    page = viewer.get(url)
    assert page.status_code == 200 and '<strong id="progress-headline">not-started, 0.0 % of bytes</strong>' in page.text
    assert_security_headers(page)
    assert "form-action 'self'" in page.headers["content-security-policy"]
    assert viewer.post(f"{url}/pause").status_code == 403  # may read runs, may not change them
    assert not (staged_real_plan / "control.json").exists()
    admin = TestClient(app, headers={"Authorization": f"Bearer {token('admin')}", "Accept": "application/json"})
    for action, state in (("pause", "paused"), ("stop", "stopped"), ("resume", "running")):
        r = admin.post(f"{url}/{action}")
        assert r.status_code == 200, r.text
        assert r.json()["state"] == state and r.json()["request"]["by"] == "user-admin" and r.json()["request"]["via"] == "ui"
    recorded = json.loads((staged_real_plan / "control.json").read_text())["requests"]
    assert [(q["action"], q["by"]) for q in recorded] == [("pause", "user-admin"), ("stop", "user-admin"), ("resume", "user-admin")]
    assert admin.post(f"{url}/halt").status_code == 404
    assert admin.post(f"/kafka-rebalance/control/{CLUSTER}/ffffffffffffffff/pause").status_code == 404
    assert admin.post(f"/kafka-rebalance/control/{CLUSTER}/..%2F..%2Fetc/pause").status_code == 404


def test_the_plan_page_buttons_work_with_the_ui_cookie_from_this_origin_only(api, staged_real_plan) -> None:
    app, TestClient, token = api
    url = f"/kafka-rebalance/control/{CLUSTER}/{staged_real_plan.name}"
    browser = TestClient(app, cookies={"_token": token("admin")}, follow_redirects=False)
    page = browser.get(url)
    assert f'<form method="post" action="{url}/pause">' in page.text and f'<form method="get" action="{url}/stop">' in page.text
    # A form on another site posting with the visitor's cookie: refused, nothing recorded.
    forged = browser.post(f"{url}/pause", headers={"Origin": "https://evil.example"})
    assert forged.status_code == 403 and "cross-site" in forged.text
    assert browser.post(f"{url}/pause").status_code == 403  # no Origin or Referer at all
    assert not (staged_real_plan / "control.json").exists()
    ok = browser.post(f"{url}/pause", headers={"Origin": "http://testserver"})
    assert ok.status_code == 303 and ok.headers["location"] == url
    page = browser.get(url)
    assert 'id="progress-state">paused<' in page.text and '<td class="l">user-admin</td>' in page.text
