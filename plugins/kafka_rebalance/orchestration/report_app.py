"""A small web app, mounted in Airflow's API server by the plugin, that serves staged plans.

Routes (under the plugin's prefix, ``/kafka-rebalance``):
* ``/``                              every staged plan the caller may see, newest first, with its verdicts;
* ``/fleet``                         every configured cluster the caller may see: its last analysis (per-broker
  leader imbalance against the threshold, bytes), its imbalance over time, its plans staged, executing and done
  with their progress (report/fleet_view.py);
* ``/plans/{cluster}/{plan}/{file}`` a file of a staged plan (report.html, RUNBOOK.md, Data Docs...);
* ``/runs/{dag_id}/{run_id}``        the report of the plan a DAG run staged (the run's "Rebalance
  report" tab in the Airflow UI points here);
* ``/control/{cluster}/{plan}``      the plan's execution page: its progress (executor/progress.py, the model
  ``status`` prints), who asked to pause, resume or stop, holds (windows, pauses); it reloads itself
  (meta refresh, no script) until the execution ends, and offers only the buttons that apply: Pause
  and Resume POST to
* ``/control/{cluster}/{plan}/{pause|resume|stop}`` (also the API: JSON back when asked for JSON;
  refused with 409 once the plan finished), and Stop first GETs
* ``/control/{cluster}/{plan}/stop``  the confirmation step, whose form POSTs the stop;
* ``/trigger/{cluster}``             a trigger form of the cluster's DAG that explains itself: every field of the DAG's
  form, checked by the product's own validators on POST, each bad field with its reason (all of them) and nothing
  changed; a valid form creates one run (Airflow's trigger_dag) and leaves a paused DAG paused unless asked.

Security. Airflow does not authenticate plugin apps (a mounted app inherits none of the core
API's dependencies), so every route here depends on Airflow's own ``get_user`` (the auth
manager's JWT from ``Authorization: Bearer`` or the UI's ``_token`` cookie: 401 without one,
403 for an invalid one) and on Airflow's authorization for reading DAG runs, checked against
the DAG of the plan's cluster (``requires_access_dag("GET", DagAccessEntity.RUN)``, the check
Airflow's own DAG-run endpoints make). Pause, resume and stop need the right to change that
DAG's runs (``requires_access_dag("PUT", DagAccessEntity.RUN)``); the trigger page the right to create
them (``requires_access_dag("POST", DagAccessEntity.RUN)``, as Airflow's own trigger endpoint). A POST
authenticated by the UI's cookie must come from this origin (``Origin``/``Referer``), on top of the cookie's
SameSite=Lax, so another site cannot pause or trigger a rebalance through a visitor's browser. Every value
put into HTML is escaped; every response carries a Content-Security-Policy that allows no
scripts, no plugins, forms only to this origin and no third-party resources, plus
``X-Content-Type-Options: nosniff``. Only files inside the staging root are served; the only
writes are the control request (control.json, through kafka_rebalance.executor.control) and a trigger's DAG
run (Airflow's own trigger_dag; the DAG unpaused only when the form's "unpause" is ticked). Unreadable or
malformed files never end in a 500: they give a 4xx, or an "unreadable" cell in the plan list.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.executor.control import ControlAction, read_control
from kafka_rebalance.executor.control import request as control_request
from kafka_rebalance.executor.progress import FINAL_STATES, ExecState, applicable_actions, control_refusal, read_progress
from kafka_rebalance.orchestration.staging import REPORTS_URL_PREFIX, data_root, run_dir_path
from kafka_rebalance.plan_dir import (
    APPROVAL_FILE,
    LEDGER_FILE,
    PLAN_FILE,
    VERIFICATION_FILE,
    PlanDirError,
    read_approval,
    require_approved,
    validation_status,
)
from kafka_rebalance.plan_manifest import load_plan
from kafka_rebalance.report.progress_view import headline
from kafka_rebalance.report.templating import environment

PREFIX = REPORTS_URL_PREFIX
# The execution page reloads itself (a meta refresh: no script) this often while anything may still change.
REFRESH_SECONDS = 5

# No scripts at all (the report is static SVG and CSS by design); styles and images only from
# this origin (report.html and the plan list use inline <style>); framing only by Airflow's own
# UI (the "Rebalance report" tab is an iframe). Great Expectations' Data Docs pull CSS and JS
# from CDNs: served here they render unstyled, which is the price of not running third-party
# scripts on Airflow's origin.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; "
    "frame-ancestors 'self'; base-uri 'none'; form-action 'self'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


class SecurityHeaders:
    """Adds SECURITY_HEADERS to every response of the app, errors and 401s included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name for name, _ in SECURITY_HEADERS}
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message = {**message, "headers": kept + SECURITY_HEADERS}
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def airflow_user(request: Request) -> Any:
    """The caller as Airflow's own ``get_user`` resolves it (401 without a token, 403 for a bad one).

    Imported on first request, not with the module: every task process loads plugins, and
    Airflow's API security module would pull the whole API server into each of them.
    """
    from airflow.api_fastapi.core_api.security import bearer_scheme, get_user

    return await get_user(request, None, await bearer_scheme(request))


# Authentication for every route, whatever its own dependencies say.
app = FastAPI(
    title="kafka-rebalance plans and reports", docs_url=None, redoc_url=None, openapi_url=None,
    dependencies=[Depends(airflow_user)],
)  # fmt: skip
app.add_middleware(SecurityHeaders)

User = Annotated[Any, Depends(airflow_user)]


def _plans_root() -> Path:
    return (data_root() / "plans").resolve()


def _check_segment(value: str, what: str) -> str:
    # A NUL byte makes every os call raise ValueError; control characters have no business in a
    # plan path either. Refuse them before touching the file system.
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        raise HTTPException(status_code=400, detail=f"{what}: control characters are not allowed")
    return value


def _inside(root: Path, *parts: str) -> Path:
    try:
        path = root.joinpath(*parts).resolve()
    except (OSError, RuntimeError):  # name too long, symlink loop
        raise HTTPException(status_code=404, detail="not found") from None
    if root != path and root not in path.parents:
        raise HTTPException(status_code=404, detail="not found")
    return path


@dataclass(frozen=True)
class JsonFile:
    """A small JSON object file as the pages see it: its content, or why it cannot be read."""

    value: dict[str, Any] | None
    problem: str | None = None


def _read_object(path: Path) -> JsonFile:
    try:
        value = json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return JsonFile(None)
    except OSError as exc:
        return JsonFile(None, f"unreadable ({exc.strerror or type(exc).__name__})")
    except UnicodeDecodeError:
        return JsonFile(None, "unreadable (not UTF-8)")
    except json.JSONDecodeError as exc:
        return JsonFile(None, f"unreadable (not valid JSON: {exc.msg} at line {exc.lineno})")
    except (ValueError, RecursionError):  # huge integers, absurd nesting
        return JsonFile(None, "unreadable (not usable JSON)")
    if not isinstance(value, dict):
        return JsonFile(None, "unreadable (not a JSON object)")
    return JsonFile(value)


def _text(value: Any) -> str:
    """One escaped table cell: scalars as themselves, anything else is not what the page expects."""
    if value is None:
        return "-"
    if isinstance(value, (str, int, float, bool)):
        return html.escape(str(value))
    return "unreadable"


def _field(doc: JsonFile, *keys: str) -> str:
    if doc.problem:
        return html.escape(doc.problem)
    value: Any = doc.value
    for key in keys:
        if value is None:
            return "-"
        if not isinstance(value, dict):
            return "unreadable"
        value = value.get(key)
    return _text(value)


def _dag_ids_by_cluster() -> dict[str, str] | None:
    """cluster id -> its DAG id, or None when the clusters file cannot be read."""
    from kafka_rebalance.orchestration.clusters_config import clusters_file, load_clusters

    try:
        return {c.cluster_id: c.dag_id for c in load_clusters(clusters_file()).clusters}
    except (RebalanceError, OSError, ValueError):
        return None


def _may_read_runs(request: Request, user: Any, dag_id: str | None) -> None:
    """Airflow's own check for reading DAG runs (403 when refused); dag_id None means all DAGs."""
    from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity
    from airflow.api_fastapi.core_api.security import requires_access_dag

    requires_access_dag("GET", DagAccessEntity.RUN, param_dag_id=dag_id)(request, user)


def _authorize_all_runs(request: Request, user: User) -> None:
    _may_read_runs(request, user, None)


def _authorize_run(request: Request, user: User, dag_id: str) -> None:
    _may_read_runs(request, user, dag_id)


def _authorize_plan(request: Request, user: User, cluster: str) -> None:
    # A plan of a cluster the clusters file does not (or no longer) name, or any plan while
    # that file is unreadable, needs the right to read the runs of every DAG.
    dag_ids = _dag_ids_by_cluster() or {}
    _may_read_runs(request, user, dag_ids.get(cluster))


def _row_visible(user: Any, dag_id: str | None) -> bool:
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity, DagDetails
    from airflow.models.dag import DagModel

    if dag_id is None:  # the index route already checked access to every DAG's runs
        return True
    team = DagModel.get_team_name(dag_id)
    return get_auth_manager().is_authorized_dag(
        method="GET", access_entity=DagAccessEntity.RUN, details=DagDetails(id=dag_id, team_name=team), user=user
    )


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


@app.get("/", response_class=HTMLResponse, dependencies=[Depends(_authorize_all_runs)])
def index(request: Request, user: User) -> str:
    root = _plans_root()
    base = request.scope.get("root_path", "")
    dag_ids = _dag_ids_by_cluster() or {}
    manifests = [p for p in root.glob(f"*/*/{PLAN_FILE}") if not p.parent.name.startswith(".")] if root.is_dir() else []
    manifests.sort(key=_mtime, reverse=True)
    rows = []
    for manifest_path in manifests:
        plan = manifest_path.parent
        cluster = plan.parent.name
        if not _row_visible(user, dag_ids.get(cluster)):
            continue
        m = _read_object(manifest_path)
        approval = _read_object(plan / APPROVAL_FILE)
        verification = _read_object(plan / VERIFICATION_FILE)
        link = html.escape(f"{base}/plans/{quote(cluster)}/{quote(plan.name)}")
        if m.value is None:
            problem = html.escape(m.problem or "unreadable (plan.json vanished)")
            cells = f"<td colspan=2>plan.json {problem}</td>"
        else:
            cells = f"<td>{_field(m, 'summary', 'replica_moves')}</td><td>{html.escape(validation_status(plan))}</td>"
        rows.append(
            f"<tr><td>{html.escape(cluster)}</td><td><a href=\"{link}/report.html\">{html.escape(plan.name)}</a></td>"
            f"{cells}<td>{_field(approval, 'decision')}</td><td class=execution>{html.escape(_execution_cell(plan))}</td>"
            f"<td>{_field(verification, 'status')}</td>"
            f"<td><a href=\"{html.escape(f'{base}/control/{quote(cluster)}/{quote(plan.name)}')}\">execution</a> · "
            f"<a href=\"{link}/RUNBOOK.md\">runbook</a> · "
            f"<a href=\"{link}/validation/data_docs/index.html\">data docs</a></td></tr>"
        )
    body = "".join(rows) or "<tr><td colspan=8>No plan staged yet.</td></tr>"
    triggers = " · ".join(f"<a id=\"trigger-{html.escape(c)}\" href=\"{html.escape(f'{base}/trigger/{quote(c)}')}\">"
                          f"{html.escape(c)}</a>" for c in sorted(dag_ids))  # fmt: skip
    return (
        "<!doctype html><meta charset=utf-8><title>Kafka rebalance plans</title>"
        "<style>body{font:14px/1.5 Inter,system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1a202c;margin:20px 28px}"
        "h1{font-size:20px;font-weight:600}table{border-collapse:collapse;font-size:13px}"
        "td,th{padding:6px 10px;text-align:left;border-bottom:1px solid #edf2f7}th{color:#4a5568;background:#f7fafc}"
        "a{color:#017cee}</style>"
        f"<h1>Staged rebalance plans</h1><p id=triggers>Trigger a rebalance: {triggers or 'no cluster configured'}</p>"
        f"<p><a id=fleet-link href=\"{html.escape(base)}/fleet\">The fleet</a>: every configured cluster's last "
        "analysis, its imbalance over time and its plans.</p>"
        "<table><tr><th>cluster</th><th>plan</th><th>moves</th><th>validation</th>"
        f"<th>decision</th><th>execution</th><th>verification</th><th>files</th></tr>{body}</table>"
    )


@app.get("/fleet", response_class=HTMLResponse, dependencies=[Depends(_authorize_all_runs)])
def fleet(request: Request, user: User) -> str:
    from kafka_rebalance.orchestration.clusters_config import clusters_file, load_clusters
    from kafka_rebalance.report.fleet_view import fleet_view, read_fleet

    try:
        configured = load_clusters(clusters_file()).clusters
    except (RebalanceError, OSError, ValueError) as exc:
        raise HTTPException(status_code=409, detail=f"the clusters file cannot be read: {exc}") from None
    visible = [c for c in configured if _row_visible(user, c.dag_id)]
    base = request.scope.get("root_path", "")
    return environment().get_template("fleet.html.j2").render(
        view=fleet_view(read_fleet(data_root(), visible)), index_link=f"{base}/", plan_base=base,
        trigger_links={c.cluster_id: f"{base}/trigger/{quote(c.cluster_id)}" for c in visible},
    )


def _execution_cell(plan_dir: Path) -> str:
    """The plan's progress in one phrase, as status and the execution page word it; why not, when unreadable."""
    try:
        return headline(read_progress(plan_dir))
    except (RebalanceError, OSError, ValueError) as exc:
        return f"unreadable ({str(exc)[:200]})"


@app.get("/plans/{cluster}/{plan}/{file_path:path}", dependencies=[Depends(_authorize_plan)])
def plan_file(cluster: str, plan: str, file_path: str) -> FileResponse:
    for value, what in ((cluster, "cluster"), (plan, "plan"), (file_path, "file")):
        _check_segment(value, what)
    path = _inside(_plans_root(), cluster, plan, file_path or "report.html")
    try:
        found = path.is_file()
    except OSError:
        found = False
    if not found:
        raise HTTPException(status_code=404, detail=f"{cluster}/{plan}/{file_path} not found")
    try:  # FileResponse opens the file only while sending, too late for a clear error
        path.open("rb").close()
    except OSError as exc:
        raise HTTPException(status_code=404, detail=f"{cluster}/{plan}/{file_path} cannot be read ({exc.strerror})") from None
    # JSON and Markdown are shown as text: a browser must never render a plan file as a page.
    media = "text/plain; charset=utf-8" if path.suffix in (".md", ".json") else None
    return FileResponse(path, media_type=media)


@app.get("/runs/{dag_id}/{run_id}", dependencies=[Depends(_authorize_run)])
def run_report(request: Request, dag_id: str, run_id: str):
    _check_segment(dag_id, "dag_id")
    _check_segment(run_id, "run_id")
    dag_ids = _dag_ids_by_cluster()
    if dag_ids is None:
        from kafka_rebalance.orchestration.clusters_config import clusters_file

        raise HTTPException(status_code=404, detail=f"{dag_id}: the clusters file {clusters_file()} cannot be read")
    cluster_id = next((c for c, d in dag_ids.items() if d == dag_id), None)
    if cluster_id is None:
        raise HTTPException(status_code=404, detail=f"{dag_id} is not a rebalance DAG")
    base = request.scope.get("root_path", "")
    staged_file = _read_object(run_dir_path(cluster_id, run_id) / "staged.json")
    if staged_file.problem:
        raise HTTPException(status_code=422, detail=f"staged.json of run {run_id}: {staged_file.problem}")
    staged = (staged_file.value or {}).get("dir")
    if not staged:
        return HTMLResponse(
            f"<!doctype html><meta charset=utf-8><p>Run {html.escape(run_id)} of {html.escape(cluster_id)} staged no "
            "plan (the cluster was balanced, or the run stopped before staging). "
            f"<a href=\"{html.escape(base)}/\">All staged plans</a></p>"
        )
    if not isinstance(staged, str) or "\0" in staged:
        raise HTTPException(status_code=422, detail=f"staged.json of run {run_id}: 'dir' is not a path")
    plan = _inside(_plans_root(), staged)
    if plan.parent.parent != _plans_root():
        raise HTTPException(status_code=422, detail=f"staged.json of run {run_id}: 'dir' is not a staged plan")
    return RedirectResponse(f"{base}/plans/{quote(plan.parent.name)}/{quote(plan.name)}/report.html")


# ----------------------------------------------------------------------------- execution control


def _same_origin(request: Request) -> None:
    """A request authenticated by the UI's cookie must come from this origin: a browser could be sending the
    cookie for another site (on top of its SameSite=Lax). A bearer token is never sent by a browser on its own."""
    if "authorization" not in request.headers:
        origin = request.headers.get("origin") or request.headers.get("referer") or ""
        own = f"{request.url.scheme}://{request.url.netloc}"
        if origin != own and not origin.startswith(own + "/"):
            raise HTTPException(status_code=403, detail="cross-site request refused: Origin/Referer is not this server")


def _authorize_plan_change(request: Request, user: User, cluster: str) -> None:
    """Changing a plan's execution needs the right to change its DAG's runs, and no cross-site request."""
    from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity
    from airflow.api_fastapi.core_api.security import requires_access_dag

    dag_ids = _dag_ids_by_cluster() or {}
    requires_access_dag("PUT", DagAccessEntity.RUN, param_dag_id=dag_ids.get(cluster))(request, user)
    _same_origin(request)


def _staged_plan(cluster: str, plan: str) -> Path:
    _check_segment(cluster, "cluster")
    _check_segment(plan, "plan")
    path = _inside(_plans_root(), cluster, plan)
    if not (path / PLAN_FILE).is_file():
        raise HTTPException(status_code=404, detail=f"{cluster}/{plan}: no staged plan")
    return path


def _user_name(user: Any) -> str:
    name = getattr(user, "get_name", None)
    return str(name() if callable(name) else getattr(user, "username", "unknown"))


def _plain(value: Any) -> str:
    """A ledger value for a template (which escapes it): scalars as themselves, anything else is unreadable."""
    if value is None:
        return "-"
    return str(value) if isinstance(value, (str, int, float, bool)) else "unreadable"


def _approval_line(path: Path, plan_hash: str) -> tuple[str, bool]:
    """What the approval record says, and whether it lets the plan run."""
    try:
        approval = read_approval(path)
        if approval is None:
            return "Not approved yet: nothing runs until someone approves it.", False
        if approval.get("decision") == "rejected":
            return f"Rejected by {_plain(approval.get('by'))}: this plan never runs.", False
        require_approved(path, plan_hash)
    except PlanDirError as exc:
        return f"Approval not usable: {exc}", False
    return f"Approved by {_plain(approval.get('by'))}.", True


_NO_ACTIONS = {
    ExecState.FINISHED: "The execution finished: nothing is left to pause or stop.",
    ExecState.FAILED: "The execution failed (see the holds and the Airflow task log); running it again resumes from the ledger.",
    ExecState.STOPPED: "Stopped: nothing runs until someone resumes it (kafka-rebalance resume --plan DIR).",
}


def _execution_page(request: Request, cluster: str, plan: str, *, confirm_stop: bool = False) -> str:
    path = _staged_plan(cluster, plan)
    try:
        the_plan = load_plan(path, require_passed=False)
        p = read_progress(path, the_plan)
        control = read_control(path, the_plan.plan_hash)
    except (RebalanceError, OSError, ValueError) as exc:  # a changed plan, a corrupt ledger: said, never a 500
        raise HTTPException(status_code=409, detail=str(exc)) from None
    approval, approved = _approval_line(path, the_plan.plan_hash)
    actions = applicable_actions(p, approved)
    if confirm_stop and ControlAction.STOP not in actions:
        raise HTTPException(status_code=409, detail=f"{cluster}/{plan}: {p.state.value}; there is nothing to stop")
    ledger = _read_object(path / LEDGER_FILE)
    raw_holds = (ledger.value or {}).get("holds")
    holds = [{k: _plain(h.get(k)) for k in ("at", "reason", "detail", "resume_at")}
             for h in reversed(raw_holds[-20:] if isinstance(raw_holds, list) else []) if isinstance(h, dict)]
    base = request.scope.get("root_path", "")
    page_link = f"{base}/control/{quote(cluster)}/{quote(plan)}"
    live = p.state not in FINAL_STATES or p.moves_in_flight > 0
    return environment().get_template("execution.html.j2").render(
        p=p, plan=plan, cluster=cluster, approval=approval, actions=actions, confirm_stop=confirm_stop,
        no_actions=_NO_ACTIONS.get(p.state, "No actions before the plan is approved."),
        refresh_seconds=REFRESH_SECONDS if live and not confirm_stop else None,
        action_base=page_link, page_link=page_link, index_link=f"{base}/",
        report_link=f"{base}/plans/{quote(cluster)}/{quote(plan)}/report.html",
        requests=list(reversed(control.requests)), holds=holds,
    )


@app.get("/control/{cluster}/{plan}", response_class=HTMLResponse, dependencies=[Depends(_authorize_plan)])
def control_page(request: Request, cluster: str, plan: str) -> str:
    return _execution_page(request, cluster, plan)


@app.get("/control/{cluster}/{plan}/stop", response_class=HTMLResponse, dependencies=[Depends(_authorize_plan)])
def confirm_stop(request: Request, cluster: str, plan: str) -> str:
    """The Stop button's confirmation step: the page again, asking, with the form that records the stop."""
    return _execution_page(request, cluster, plan, confirm_stop=True)


@app.post("/control/{cluster}/{plan}/{action}", dependencies=[Depends(_authorize_plan_change)])
def control_action(request: Request, user: User, cluster: str, plan: str, action: str):
    try:
        wanted = ControlAction(action)
    except ValueError:
        raise HTTPException(status_code=404, detail=f"{action}: expected pause, resume or stop") from None
    path = _staged_plan(cluster, plan)
    try:
        refusal = control_refusal(path, wanted)
        if refusal is not None:
            raise HTTPException(status_code=409, detail=refusal)
        control = control_request(path, wanted, by=_user_name(user), via="ui")
    except PlanDirError as exc:
        raise HTTPException(status_code=409, detail=str(exc)) from None
    last = control.last
    assert last is not None
    if "application/json" in request.headers.get("accept", ""):
        from fastapi.responses import JSONResponse

        return JSONResponse({"plan_hash": control.plan_hash, "state": control.state.value, "request": last.as_json()})
    base = request.scope.get("root_path", "")
    return RedirectResponse(f"{base}/control/{quote(cluster)}/{quote(plan)}", status_code=303)


# ----------------------------------------------------------------------------- the trigger page


def _cluster_config(cluster: str) -> tuple[Any, Any]:
    """(the clusters file, the cluster's entry): 404 for a cluster it does not name, 409 when it cannot be read."""
    from kafka_rebalance.orchestration.clusters_config import clusters_file, load_clusters

    _check_segment(cluster, "cluster")
    try:
        cfg = load_clusters(clusters_file())
    except (RebalanceError, OSError, ValueError) as exc:
        raise HTTPException(status_code=409, detail=f"the clusters file cannot be read: {exc}") from None
    entry = next((c for c in cfg.clusters if c.cluster_id == cluster), None)
    if entry is None:
        raise HTTPException(status_code=404, detail=f"{cluster}: not a cluster of the clusters file")
    return cfg, entry


def _authorize_trigger(request: Request, user: User, cluster: str) -> None:
    """Airflow's own check for triggering the cluster's DAG (its trigger endpoint's: POST on the DAG's runs)."""
    from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity
    from airflow.api_fastapi.core_api.security import requires_access_dag

    _, entry = _cluster_config(cluster)
    requires_access_dag("POST", DagAccessEntity.RUN, param_dag_id=entry.dag_id)(request, user)


def _authorize_trigger_post(request: Request, user: User, cluster: str) -> None:
    _authorize_trigger(request, user, cluster)
    _same_origin(request)


def _last_snapshot(cluster: str) -> tuple[list[int], list[str], str | None]:
    """(brokers, topics, the snapshot file) of the cluster's newest gathered snapshot; empty lists without one.

    The newest of its runs' snapshots (runs/<cluster>/<run>/snapshot.*): what the planner saw last.
    """
    from kafka_rebalance.orchestration.staging import data_root
    from kafka_rebalance.snapshot import load_snapshot

    runs = data_root() / "runs" / cluster
    found = sorted(runs.glob("*/snapshot.*"), key=_mtime, reverse=True) if runs.is_dir() else []
    for path in found:
        try:
            snap = load_snapshot(path)
        except (RebalanceError, OSError, ValueError):
            continue  # a half-written or corrupt one: the next newest
        topics = sorted({p.topic for p in snap.partitions} | set(snap.topics))
        return sorted(snap.broker_ids), topics, path.parent.name
    return [], [], None


def _trigger_page(request: Request, cluster: str, *, submitted: dict[str, list[str]] | None = None,
                  errors: dict[str, str] | None = None, unpause: bool = False) -> str:
    from kafka_rebalance.orchestration.trigger_form import form_fields, trigger_form

    cfg, entry = _cluster_config(cluster)
    brokers, topics, snapshot_run = _last_snapshot(cluster)
    fields = form_fields(trigger_form(cfg, entry), brokers=brokers, topics=topics, submitted=submitted, errors=errors)
    base = request.scope.get("root_path", "")
    return environment().get_template("trigger.html.j2").render(
        cluster=cluster, dag_id=entry.dag_id, fields=fields, errors=errors or {},
        paused=_dag_paused(entry.dag_id), unpause=unpause, snapshot_run=snapshot_run,
        action=f"{base}/trigger/{quote(cluster)}", index_link=f"{base}/",
    )


def _dag_paused(dag_id: str) -> bool | None:
    """Whether the DAG is paused; None when Airflow has not parsed it (yet)."""
    from airflow.models.dag import DagModel

    model = DagModel.get_dagmodel(dag_id)
    return None if model is None else bool(model.is_paused)


@app.get("/trigger/{cluster}", response_class=HTMLResponse, dependencies=[Depends(_authorize_trigger)])
def trigger_page(request: Request, cluster: str) -> str:
    return _trigger_page(request, cluster)


@app.post("/trigger/{cluster}", dependencies=[Depends(_authorize_trigger_post)])
async def trigger_submit(request: Request, user: User, cluster: str):
    """Every field checked; any bad one re-renders the form with each reason beside its field (422) and changes
    nothing. A valid form creates one manual run through Airflow's own trigger_dag, with the checked conf.

    A paused DAG stays paused unless the operator ticked "unpause" (which needs the right to change the DAG,
    as Airflow's pause switch does): the run then waits, queued, until someone unpauses it. Airflow's own form
    unpauses on every trigger, even a failed one, which also lets the scheduler start a scheduled run.
    """
    from kafka_rebalance.orchestration.trigger_form import read_submission, trigger_form

    cfg, entry = _cluster_config(cluster)
    form = await request.form()
    raw = {k: [str(v) for v in form.getlist(k)] for k in form.keys()}
    unpause = "unpause" in raw
    params = trigger_form(cfg, entry)
    submitted = read_submission(params, raw, cfg, entry)
    if submitted.errors:
        page = _trigger_page(request, cluster, submitted=raw, errors=submitted.errors, unpause=unpause)
        return HTMLResponse(page, status_code=422)
    if unpause:
        from airflow.api_fastapi.core_api.security import requires_access_dag

        requires_access_dag("PUT", param_dag_id=entry.dag_id)(request, user)  # Airflow's own pause switch's check
    run_id = _create_run(entry.dag_id, submitted.conf, _user_name(user), unpause)
    root = str(request.scope.get("root_path", ""))
    airflow_root = root[: -len(PREFIX)] if root.endswith(PREFIX) else ""
    return RedirectResponse(f"{airflow_root}/dags/{quote(entry.dag_id)}/runs/{quote(run_id)}", status_code=303)


def _create_run(dag_id: str, conf: dict[str, Any], by: str, unpause: bool) -> str:
    """One manual run of the DAG with ``conf``, through Airflow's own trigger_dag; unpaused only when asked."""
    from airflow.api.common.trigger_dag import trigger_dag
    from airflow.exceptions import AirflowException
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session
    from airflow.utils.types import DagRunTriggeredByType

    try:
        run = trigger_dag(dag_id, conf=conf, triggered_by=DagRunTriggeredByType.UI, triggering_user_name=by)
    except (AirflowException, ValueError) as exc:
        raise HTTPException(status_code=409, detail=f"{dag_id}: not triggered: {exc}") from None
    if run is None:
        raise HTTPException(status_code=409, detail=f"{dag_id}: not triggered")
    if unpause:  # as Airflow's pause switch (PATCH /dags/{dag_id}) does it
        with create_session() as session:
            model = session.get(DagModel, dag_id)
            if model is not None:
                model.is_paused = False
    return str(run.run_id)
