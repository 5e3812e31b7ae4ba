"""A small web app, mounted in Airflow's API server by the plugin, that serves staged plans.

Routes (under the plugin's prefix, ``/kafka-rebalance``):
* ``/``                              every staged plan, newest first, with its verdicts;
* ``/plans/{cluster}/{plan}/{file}`` a file of a staged plan (report.html, RUNBOOK.md, Data Docs...);
* ``/runs/{dag_id}/{run_id}``        the report of the plan a DAG run staged (the run's "Rebalance
  report" tab in the Airflow UI points here).
Only files inside the staging root are served; everything is read-only.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from fastapi import FastAPI, HTTPException
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse

from kafka_rebalance.plan_dir import APPROVAL_FILE, PLAN_FILE, VERIFICATION_FILE, validation_status
from kafka_rebalance.staging import REPORTS_URL_PREFIX, data_root, run_dir_path

app = FastAPI(title="kafka-rebalance plans and reports", docs_url=None, redoc_url=None)
PREFIX = REPORTS_URL_PREFIX


def _plans_root() -> Path:
    return (data_root() / "plans").resolve()


def _inside(root: Path, *parts: str) -> Path:
    path = root.joinpath(*parts).resolve()
    if root != path and root not in path.parents:
        raise HTTPException(status_code=404, detail="not found")
    return path


def _json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}


@app.get("/", response_class=HTMLResponse)
def index() -> str:
    root = _plans_root()
    rows = []
    manifests = sorted(root.glob(f"*/*/{PLAN_FILE}"), key=lambda p: p.stat().st_mtime, reverse=True) if root.exists() else []
    for manifest_path in manifests:
        plan = manifest_path.parent
        m = _json(manifest_path)
        s = m.get("summary", {})
        decision = _json(plan / APPROVAL_FILE).get("decision", "-")
        verified = _json(plan / VERIFICATION_FILE).get("status", "-")
        link = f"{PREFIX}/plans/{html.escape(plan.parent.name)}/{html.escape(plan.name)}"
        rows.append(
            f"<tr><td>{html.escape(plan.parent.name)}</td><td><a href='{link}/report.html'>{html.escape(plan.name)}</a></td>"
            f"<td>{s.get('replica_moves', '-')}</td><td>{html.escape(validation_status(plan))}</td>"
            f"<td>{html.escape(str(decision))}</td><td>{html.escape(str(verified))}</td>"
            f"<td><a href='{link}/RUNBOOK.md'>runbook</a> · <a href='{link}/validation/data_docs/index.html'>data docs</a></td></tr>"
        )
    body = "".join(rows) or "<tr><td colspan=7>No plan staged yet.</td></tr>"
    return (
        "<!doctype html><meta charset=utf-8><title>Kafka rebalance plans</title>"
        "<style>body{font-family:sans-serif;margin:2em}td,th{padding:4px 10px;text-align:left}</style>"
        "<h1>Staged rebalance plans</h1><table><tr><th>cluster</th><th>plan</th><th>moves</th><th>validation</th>"
        f"<th>decision</th><th>verification</th><th>files</th></tr>{body}</table>"
    )


@app.get("/plans/{cluster}/{plan}/{file_path:path}")
def plan_file(cluster: str, plan: str, file_path: str) -> FileResponse:
    path = _inside(_plans_root(), cluster, plan, file_path or "report.html")
    if not path.is_file():
        raise HTTPException(status_code=404, detail=f"{cluster}/{plan}/{file_path} not found")
    media = "text/plain; charset=utf-8" if path.suffix in (".md", ".json") else None
    return FileResponse(path, media_type=media)


@app.get("/runs/{dag_id}/{run_id}")
def run_report(dag_id: str, run_id: str):  # noqa: ANN201
    from kafka_rebalance.clusters_config import clusters_file, load_clusters

    cfg = load_clusters(clusters_file())
    cluster = next((c for c in cfg.clusters if c.dag_id == dag_id), None)
    if cluster is None:
        raise HTTPException(status_code=404, detail=f"{dag_id} is not a rebalance DAG")
    staged = _json(run_dir_path(cluster.cluster_id, run_id) / "staged.json").get("dir")
    if not staged:
        return HTMLResponse(
            f"<p>Run {html.escape(run_id)} of {html.escape(cluster.cluster_id)} staged no plan "
            "(the cluster was balanced, or the run stopped before staging). "
            f"<a href='{PREFIX}/'>All staged plans</a></p>"
        )
    plan = Path(staged)
    return RedirectResponse(f"{PREFIX}/plans/{plan.parent.name}/{plan.name}/report.html")
