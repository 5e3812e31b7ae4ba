"""The operator's flow in a real browser: log in, trigger with the plugin's form, approve, watch the execution
run on a real Kafka, see it finished, then the fleet page.

`airflow standalone` (api-server, scheduler with LocalExecutor, dag-processor, triggerer)
runs on 127.0.0.1 with this project's DAGs, as `make ui` starts it; Debian's chromium is
driven by Playwright (never a browser download). Two clusters are configured: ``ui-sandbox``, a real
two-node Apache Kafka sandbox of this module's own (kafka_rebalance.sandbox) whose skewed topic the flow
rebalances, and ``ui-demo``, the simulated sample cluster. Screenshots of every step are saved under
test-artifacts/ (git-ignored).

The rebalance is sized to be watched: six 1 MiB partitions all on broker 1, so the plan moves three of them to
broker 2, one at a time (max_moves_per_broker 1) at a 100 KiB/s throttle, fetched in 256 KiB chunks: about 10 s a
move, so the execution page can be loaded while a move finished and another runs, and again after the next one.

Every process the module starts is stopped by pid, and checked gone from /proc: Airflow in a
session of its own, every process group of which is stopped when the module ends (its tasks run in
groups of their own, which stopping the server's group alone left running: a scheduler and its
LocalExecutor worker were found 35 minutes after a test session); the Kafka nodes by the sandbox's own
``down`` (by the pids sandbox.json records), after Airflow; the browser's processes are recorded while it runs
and checked gone once Playwright has closed it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from kafka_rebalance.orchestration.staging import run_dir_path
from kafka_rebalance.sandbox.cluster import free_ports
from tests.support.kafka import sandbox_disk_limit
from tests.support.processes import ProcessSessions, alive, descendants, read_proc

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = Path("/usr/bin/chromium")
DAG_ID = "kafka_rebalance_ui_demo"  # the simulated sample cluster
CLUSTER = "ui-sandbox"  # the real Kafka sandbox
KAFKA_DAG_ID = "kafka_rebalance_ui_sandbox"
SUBJECT = f"Rebalance {CLUSTER}: approve the staged plan?"
TOPIC = "ui-skewed-0"
PARTITIONS, PARTITION_MIB, THROTTLE = 6, 1.0, "100KiB/s"
SCREENSHOTS = ("ui-1-trigger-refused.png", "ui-2-triggered-run.png", "ui-3-approval.png", "ui-4-execution-running.png",
               "ui-5-execution-later.png", "ui-6-stop-confirm.png", "ui-7-run-finished.png",
               "ui-8-execution-finished.png", "ui-9-plans.png", "ui-10-fleet.png")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]  # fmt: skip

# One API call can take tens of seconds while the scheduler, a Spark job and the API server
# share a busy 2-core machine; a timeout here is not what this test is about.
API_TIMEOUT = 120

pytestmark = pytest.mark.slow


def _ensure_chromium() -> None:
    if CHROMIUM.exists():
        return
    # The test installs what it needs; on Debian, chromium is one apt package.
    subprocess.run(["apt-get", "install", "-y", "chromium"], check=True, capture_output=True, timeout=900)
    assert CHROMIUM.exists(), "apt-get install chromium did not provide /usr/bin/chromium"


def _free_port() -> int:
    return free_ports(1)[0]


class Airflow:
    def __init__(self, base: str, home: Path, user: str, password: str) -> None:
        self.base, self.home, self.user, self.password = base, home, user, password
        self._token: str | None = None

    def api(self, method: str, path: str, **kw) -> httpx.Response:
        if self._token is None:
            r = httpx.post(f"{self.base}/auth/token", json={"username": self.user, "password": self.password}, timeout=API_TIMEOUT)
            r.raise_for_status()
            self._token = r.json()["access_token"]
        return httpx.request(method, f"{self.base}{path}", headers={"Authorization": f"Bearer {self._token}"},
                             timeout=API_TIMEOUT, **kw)  # fmt: skip

    def log(self) -> str:
        """What `airflow standalone` (scheduler, triggerer, API server, dag-processor) has logged so far."""
        return (self.home / "standalone.log").read_text(encoding="utf-8", errors="replace")


@pytest.fixture(scope="module")
def sessions():
    """The module's servers; at its end every process they started is stopped, and none may be left."""
    started = ProcessSessions()
    yield started
    started.stop(timeout=60)
    left = started.survivors()
    assert not left, "still running after the module stopped them:\n" + "\n".join(map(str, left))


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    """The module's own Kafka: two combined KRaft nodes, one skewed topic (every partition on broker 1, no
    replica to spare). Stopped by the pids its sandbox.json records, and each of those checked gone."""
    from kafka_rebalance.sandbox import cluster
    from kafka_rebalance.sandbox.seed import RECORD_BYTES, SeedSpec, seed

    directory = tmp_path_factory.mktemp("kafka-ui") / "sandbox"
    # A throttled fetch still copies a whole replica.fetch.max.bytes (1 MiB by default: a partition here) before the
    # quota holds it back; a seeded record batch's size instead, so the throttle paces each move.
    kafka = cluster.up(directory, brokers=2, racks=0, properties={"replica.fetch.max.bytes": str(RECORD_BYTES)})
    nodes = [p for n in kafka.nodes if (p := read_proc(n.pid)) is not None]
    try:
        assert len(nodes) == 2, f"a Kafka node exited at once; see {directory}"
        seeded = seed(kafka, SeedSpec(topics=1, partitions=PARTITIONS, mb_per_partition=PARTITION_MIB, skew=1.0,
                                      replication_factor=1, topic_prefix="ui-skewed"))
        assert seeded.topics == [TOPIC]
        yield kafka
    finally:
        cluster.down(directory)
        left = [p for p in nodes if alive(p)]
        assert not left, "Kafka nodes still running after the sandbox was stopped:\n" + "\n".join(map(str, left))


def _partitions_by_broker(kafka) -> dict[int, int]:
    """Kafka's metadata (a plain Kafka client's view): how many of the topic's partitions each broker holds."""
    from kafka.admin import KafkaAdminClient

    client = KafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers, request_timeout_ms=30000)
    try:
        [topic] = client.describe_topics([TOPIC])
    finally:
        client.close()
    counts: dict[int, int] = {}
    for part in topic["partitions"]:
        for broker in part["replica_nodes"]:
            counts[broker] = counts.get(broker, 0) + 1
    return counts


@pytest.fixture(scope="module")
def airflow(tmp_path_factory, sessions, sandbox):
    home = tmp_path_factory.mktemp("airflow-ui")
    port = _free_port()
    # The sandbox: polled every second, one move per broker at a time, at a throttle that makes each move last ~10 s;
    # its brokers report the host's filesystem as their disk (tests/support/kafka.py, sandbox_disk_limit).
    (home / "clusters.yaml").write_text(
        "clusters:\n"
        f"  - {{cluster_id: {CLUSTER}, source: kafka_ui_sandbox, schedule: null, executor: {{poll_interval_seconds: 1}},\n"
        f"     defaults: {{throttle: {THROTTLE}, max_moves_per_broker: 1, max_disk_usage: {sandbox_disk_limit():.2f}}}}}\n"
        f"  - {{cluster_id: ui-demo, source: 'simulated:{ROOT / 'samples' / 'sample-cluster.json'}', schedule: null}}\n"
    )
    venv_bin = Path(sys.executable).parent
    env = {
        **os.environ,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "dags"),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(ROOT / "plugins"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": str(port),
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{port}/execution/",
        # Airflow's advice for timeouts "under high load": the first task's calls can wait tens of
        # seconds for the API server on a shared 2-core machine, and the default 5 s kills the task.
        "AIRFLOW__WORKERS__EXECUTION_API_TIMEOUT": str(API_TIMEOUT),
        "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
        "AIRFLOW__SCHEDULER__MIN_FILE_PROCESS_INTERVAL": "5",
        "AIRFLOW__LOGGING__LOGGING_LEVEL": "INFO",
        # This checkout's package, not whatever copy the virtualenv has installed (an editable
        # install of another checkout would otherwise serve its pages and run its tasks).
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "plugins"), os.environ.get("PYTHONPATH")])),
        "KAFKA_REBALANCE_HOME": str(home / "data"),
        "KAFKA_REBALANCE_CLUSTERS": str(home / "clusters.yaml"),
        "AIRFLOW_CONN_KAFKA_UI_SANDBOX": json.dumps({"conn_type": "kafka", "extra": {"bootstrap.servers": sandbox.bootstrap_servers}}),
        "PATH": f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    log = (home / "standalone.log").open("w")
    proc = sessions.start([str(venv_bin / "airflow"), "standalone"], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        passwords = home / "simple_auth_manager_passwords.json.generated"
        deadline = time.monotonic() + 300
        while True:
            assert proc.poll() is None, f"airflow standalone exited; see {home / 'standalone.log'}"
            assert time.monotonic() < deadline, f"airflow standalone did not come up; see {home / 'standalone.log'}"
            try:
                if passwords.exists() and httpx.get(f"{base}/api/v2/version", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(2)
        user, password = next(iter(json.loads(passwords.read_text()).items()))
        af = Airflow(base, home, user, password)
        for dag_id in (KAFKA_DAG_ID, DAG_ID):
            while af.api("GET", f"/api/v2/dags/{dag_id}").status_code != 200:  # the dag-processor has parsed it
                assert time.monotonic() < deadline + 120, f"{dag_id} never appeared; see {home / 'standalone.log'}"
                time.sleep(2)
        yield af
    finally:
        # Stopped here, not only at the module's end, so the log is complete when it is closed.
        sessions.stop(timeout=60)
        log.close()


def _wait(predicate, timeout: float, what: str, every: float = 3.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def _browser_processes(sessions: ProcessSessions, before: set) -> list:
    """This test process's descendants that appeared since ``before`` outside the Airflow sessions: Playwright's
    driver and the browser (not the session's Spark or Kafka, started by other fixtures earlier)."""
    airflow = {(p.pid, p.start) for p in sessions.members()}
    return [p for p in descendants([os.getpid()]) if (p.pid, p.start) not in airflow | before]


def _figure(page, key: str) -> str:
    """A figure of the execution page's progress table (report/progress_view.py), by key; "" when not shown."""
    row = page.locator(f"#progress-figure-{key} td:nth-child(2)")
    return row.inner_text() if row.count() else ""


def _percent(page) -> float:
    return float(page.locator("#progress-bar").get_attribute("value"))


def test_trigger_approve_watch_and_see_the_fleet_in_the_browser(airflow, sessions, sandbox) -> None:
    from playwright.sync_api import sync_playwright

    _ensure_chromium()
    ARTIFACTS.mkdir(exist_ok=True)
    assert _partitions_by_broker(sandbox) == {1: PARTITIONS}
    browser_procs = []
    before = {(p.pid, p.start) for p in descendants([os.getpid()])}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(60_000)
        page.set_default_navigation_timeout(API_TIMEOUT * 1000)  # the API server stalls for a minute under load

        page.goto(f"{airflow.base}/")
        page.get_by_label("Username").fill(airflow.user)
        page.get_by_label("Password").fill(airflow.password)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(lambda url: "/auth/login" not in url)

        # The plugin's own trigger page: two bad values, each refused beside its field; nothing triggered and the
        # DAG as it was, paused (Airflow's form shows one "Bad Request", and unpaused the DAG even then).
        assert airflow.api("GET", f"/api/v2/dags/{KAFKA_DAG_ID}").json()["is_paused"] is True
        page.goto(f"{airflow.base}/kafka-rebalance/trigger/{CLUSTER}")
        page.locator("#input-mode").select_option("execute")
        page.locator("#input-throttle").fill("0")
        page.locator("#input-window").fill("2026-11-25T01:00/PT4H")
        page.locator("#field-unpause input").check()
        page.locator("#trigger-submit").click()
        page.locator("#error-window").wait_for()
        assert "1.0 KiB/s to 8.0 EiB/s" in page.locator("#error-throttle").inner_text()
        assert "has no time zone" in page.locator("#error-window").inner_text()
        page.screenshot(path=str(ARTIFACTS / "ui-1-trigger-refused.png"), full_page=True)
        assert airflow.api("GET", f"/api/v2/dags/{KAFKA_DAG_ID}").json()["is_paused"] is True
        assert airflow.api("GET", f"/api/v2/dags/{KAFKA_DAG_ID}/dagRuns").json()["total_entries"] == 0

        # The same form corrected: an execute run on the real sandbox, the DAG unpaused as asked.
        page.locator("#input-throttle").fill(THROTTLE)
        page.locator("#input-window").fill("configured")  # the form's default: the cluster's windows (none: any time)
        assert page.locator("#field-unpause input").is_checked()
        # On to Airflow's page of the new run (its scripts may take a while to load on a busy machine: the URL is enough).
        with page.expect_navigation(wait_until="commit"):
            page.locator("#trigger-submit").click()
        assert f"/dags/{KAFKA_DAG_ID}/runs/" in page.url, page.locator("#trigger-errors").inner_text()
        page.get_by_text("gather").first.wait_for()
        page.screenshot(path=str(ARTIFACTS / "ui-2-triggered-run.png"), full_page=True)
        [run] = airflow.api("GET", f"/api/v2/dags/{KAFKA_DAG_ID}/dagRuns").json()["dag_runs"]
        run_id = run["dag_run_id"]
        assert run["conf"]["mode"] == "execute" and run["conf"]["throttle"] == THROTTLE
        assert airflow.api("GET", f"/api/v2/dags/{KAFKA_DAG_ID}").json()["is_paused"] is False

        # The approval, in the UI's Required Actions view.
        def approval_listed() -> bool:
            page.goto(f"{airflow.base}/required_actions")
            try:
                page.get_by_role("link", name=SUBJECT).first.wait_for(timeout=5_000)
                return True
            except Exception:  # not there yet (or the run failed: checked below)
                state = airflow.api("GET", f"/api/v2/dags/{KAFKA_DAG_ID}/dagRuns/{run_id}").json()["state"]
                assert state in ("queued", "running"), f"run ended {state} before asking for approval"
                return False

        _wait(approval_listed, 600, "the approval request", every=1)
        # Answer only once the scheduler has seen the approve task's worker exit after deferring. An answer
        # before that resumes the task while the exit's "success" event is still unread, and Airflow then
        # fails the resumed attempt as "killed externally" (the race apache/airflow#71579 describes).
        deferred_exit = ("Received executor event with state success for task instance", "task_id='approve'", run_id)
        _wait(lambda: any(all(k in line for k in deferred_exit) for line in airflow.log().splitlines()), 300,
              "the scheduler to see the approval task defer", every=1)
        page.get_by_role("link", name=SUBJECT).first.click()
        approve = page.get_by_role("button", name="Approve")
        approve.wait_for()
        page.get_by_text("replica moves").first.wait_for()  # the plan summary is in the request's body
        # Airflow's pages scroll inside their own frame, out of a full-page screenshot's reach: a taller window
        # shows the request down to its buttons.
        page.set_viewport_size({"width": 1400, "height": 1250})
        page.screenshot(path=str(ARTIFACTS / "ui-3-approval.png"))
        page.set_viewport_size({"width": 1400, "height": 1000})
        approve.click()

        # The execution page during the run: loaded until a move finished while others are left, then until the
        # next one finished: the percent rises between two loads, with an ETA at the measured rate.
        [staged] = [m.parent for m in (airflow.home / "data" / "plans" / CLUSTER).glob("*/plan.json")]
        control = f"{airflow.base}/kafka-rebalance/control/{CLUSTER}/{staged.name}"

        def running_at(above: float) -> float | None:
            page.goto(control)
            state, percent = page.locator("#progress-state").inner_text(), _percent(page)
            assert state in ("not-started", "running"), f"the execution is {state} at {percent} %, not running"
            return percent if state == "running" and above < percent < 100 else None

        first = _wait(lambda: running_at(0.0), 600, "a first finished move", every=0.5)
        eta = _figure(page, "eta")
        page.screenshot(path=str(ARTIFACTS / "ui-4-execution-running.png"), full_page=True)
        second = _wait(lambda: running_at(first), 120, "the next finished move", every=0.5)
        assert first < second < 100
        assert "at the measured rate" in eta and "at the measured rate" in _figure(page, "eta"), eta
        assert page.locator("#progress-figure-rate td:nth-child(2)").inner_text().endswith("KiB/s")
        assert {page.locator("#action-pause").count(), page.locator("#action-stop").count()} == {1}
        assert page.locator('meta[http-equiv="refresh"]').count() == 1
        page.screenshot(path=str(ARTIFACTS / "ui-5-execution-later.png"), full_page=True)

        # Stop asks first; going back stops nothing.
        page.locator("#action-stop").click()
        page.locator("#confirm-stop").wait_for()
        assert page.url.split("?")[0] == f"{control}/stop"  # a GET: asking records nothing
        assert page.get_by_role("button", name="Yes, stop it").count() == 1
        page.screenshot(path=str(ARTIFACTS / "ui-6-stop-confirm.png"), full_page=True)
        page.get_by_role("link", name="No, go back").click()
        page.wait_for_url(control)
        assert page.locator("#progress-state").inner_text() in ("running", "finished")
        assert page.locator("#requests").inner_text().count("stop") == 0

        def finished() -> str | None:
            state = airflow.api("GET", f"/api/v2/dags/{KAFKA_DAG_ID}/dagRuns/{run_id}").json()["state"]
            return state if state in ("success", "failed") else None

        final = _wait(finished, 900, "the run to finish", every=5)
        page.goto(f"{airflow.base}/dags/{KAFKA_DAG_ID}/runs/{run_id}")
        page.screenshot(path=str(ARTIFACTS / "ui-7-run-finished.png"), full_page=True)

        # The execution page once the run ended: finished, every batch with its end, no button, no reload.
        execution = page.goto(control)
        assert execution is not None and execution.status == 200
        assert page.locator("#progress-state").inner_text() == "finished"
        assert page.locator("#progress-headline").inner_text() == "finished, 100.0 % of bytes"
        ended = page.locator("tr[data-progress-batch] td:nth-child(7)").all_inner_texts()
        assert ended and "–" not in ended, ended
        assert page.locator("form").count() == 0 and page.locator('meta[http-equiv="refresh"]').count() == 0
        page.screenshot(path=str(ARTIFACTS / "ui-8-execution-finished.png"), full_page=True)

        # The plugin's pages open with the login's _token cookie, in the UI's frame and on their own.
        page.goto(f"{airflow.base}/plugin/rebalance_plans")
        page.frame_locator("iframe").get_by_role("heading", name="Staged rebalance plans").wait_for()
        listing = page.goto(f"{airflow.base}/kafka-rebalance/")
        headers = listing.all_headers()  # .headers leaves out security-related headers
        assert listing.status == 200 and headers["x-content-type-options"] == "nosniff"
        assert "default-src 'none'" in headers["content-security-policy"]
        page.screenshot(path=str(ARTIFACTS / "ui-9-plans.png"), full_page=True)

        # The fleet page, from the plans list: both clusters; the sandbox's last analysis (its run's, before the
        # rebalance: broker 1 leads all six partitions, broker 2 none) drawn, and its plan done.
        page.locator("#fleet-link").click()
        page.wait_for_url(f"{airflow.base}/kafka-rebalance/fleet")
        section = page.locator(f"#cluster-{CLUSTER}")
        assert page.locator("section[data-cluster]").evaluate_all("s => s.map(e => e.dataset.cluster)") == [CLUSTER, "ui-demo"]
        run_dir = run_dir_path(CLUSTER, run_id, airflow.home / "data").name
        verdict = section.locator(f"#verdict-{CLUSTER}").inner_text()
        assert verdict.startswith("NOT balanced (goals not met: ") and f"{CLUSTER} run {run_dir}" in verdict, verdict
        for figure in ("imbalance", "bytes", "history"):
            assert section.locator(f'figure[data-figure="{figure}"] svg').count() == 1, figure
        assert section.locator(f"#fleet-{CLUSTER}-imbalance-threshold-line").count() == 1
        assert section.locator(f"#fleet-{CLUSTER}-bytes-bar-analysis-1").count() == 1
        done = section.locator(f'table[data-plans="done"] tr[data-plan="{staged.name}"]')
        assert "finished, 100.0 % of bytes" in done.inner_text()
        assert page.locator("#verdict-ui-demo").inner_text().startswith("No analysis of ui-demo yet")
        assert page.locator("script").count() == 0
        page.screenshot(path=str(ARTIFACTS / "ui-10-fleet.png"), full_page=True)
        report = page.goto(f"{airflow.base}/kafka-rebalance/runs/{KAFKA_DAG_ID}/{run_id}")
        assert report.status == 200 and page.url.endswith("/report.html"), page.url
        page.get_by_text("replica moves").first.wait_for()
        browser_procs = _browser_processes(sessions, before)
        browser.close()
    assert browser_procs
    try:  # the browser's helpers exit a moment after it closes
        _wait(lambda: not any(alive(p) for p in browser_procs), 30, "the browser's processes to exit", every=0.5)
    except AssertionError:
        left = [p for p in browser_procs if alive(p)]
        raise AssertionError("browser processes left after Playwright closed it:\n" + "\n".join(map(str, left))) from None

    # Without the login, the same pages are refused.
    for path in ("/kafka-rebalance/", "/kafka-rebalance/fleet", f"/kafka-rebalance/runs/{KAFKA_DAG_ID}/{run_id}"):
        assert httpx.get(f"{airflow.base}{path}", timeout=API_TIMEOUT, follow_redirects=False).status_code == 401

    tis = airflow.api("GET", f"/api/v2/dags/{KAFKA_DAG_ID}/dagRuns/{run_id}/taskInstances").json()["task_instances"]
    states = {t["task_id"]: t["state"] for t in tis}
    assert final == "success", states
    assert states["approve"] == "success" and states["execute"] == "success" and states["final_verify"] == "success"
    verdict = json.loads((staged / "verification.json").read_text())
    assert verdict["status"] == "complete" and verdict["throttles_left"] == []
    plan = json.loads((staged / "plan.json").read_text())
    assert plan["options"]["throttle_bytes_per_sec"] == 100 * 1024
    assert _partitions_by_broker(sandbox) == {1: PARTITIONS // 2, 2: PARTITIONS // 2}  # Kafka's own word
    for shot in SCREENSHOTS:
        assert (ARTIFACTS / shot).stat().st_size > 20_000, shot
    shutil.copy(staged / "verification.json", ARTIFACTS / "ui-verification.json")


def test_stopping_airflow_stops_its_tasks_process_groups(airflow, sessions) -> None:
    """A dry run's tasks run in process groups of their own, under the scheduler's LocalExecutor
    workers: the processes the server's group alone did not reach. This leaves one running; the
    module's end stops it all and finds nothing left (the ``sessions`` fixture)."""
    # A new DAG is paused, and a run of a paused DAG waits; the UI's Trigger unpauses it, the API does not.
    assert airflow.api("PATCH", f"/api/v2/dags/{DAG_ID}", json={"is_paused": False}).status_code == 200
    r = airflow.api("POST", f"/api/v2/dags/{DAG_ID}/dagRuns", json={"logical_date": None, "conf": {"mode": "dry-run"}})
    assert r.status_code == 200, r.text
    server_group = {p.pgid for p in sessions.members() if p.pid == p.sid}
    # Of Airflow's processes, only a task's supervisor puts its task in a process group of its own.
    task_groups = _wait(lambda: sessions.process_groups() - server_group, 600, "a task in a process group of its own", every=0.2)
    assert task_groups and not task_groups & server_group
