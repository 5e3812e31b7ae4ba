"""Answer a pending Airflow approval (human-in-the-loop) through Airflow's own REST API.

Used by ``make demo`` (which must reach final verification without a person at the
keyboard) and by the DAG tests. The API app runs in-process against the same metadata
database, and the call is exactly the one the UI's Required Actions page makes:
``PATCH /api/v2/dags/{dag}/dagRuns/{run}/taskInstances/{task}/{map_index}/hitlDetails``.
It needs an auth manager that lets the caller in (the simple auth manager with
``simple_auth_manager_all_admins``, as the demo and the tests configure).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any


def _client():
    from airflow.api_fastapi.app import create_app
    from fastapi.testclient import TestClient

    return TestClient(create_app())


# The states in which Airflow's HITL endpoint resumes the task it answers. The operator writes its request while still
# running and parks the task after: a response recorded before that is stored, but nothing resumes the task, and the
# run waits forever (seen once: answered 57 ms after the request appeared, the task still running).
PARKED = ("awaiting_input", "deferred")


def pending_requests(client: Any, dag_id: str) -> list[dict[str, Any]]:
    """The DAG's unanswered approval requests whose task is parked waiting for the answer."""
    r = client.get(f"/api/v2/dags/{dag_id}/dagRuns/~/hitlDetails")
    r.raise_for_status()
    return [d for d in r.json().get("hitl_details", [])
            if not d.get("response_received") and (d.get("task_instance") or {}).get("state") in PARKED]


def answer(client: Any, detail: dict[str, Any], choice: str) -> dict[str, Any]:
    ti = detail["task_instance"]
    url = (f"/api/v2/dags/{ti['dag_id']}/dagRuns/{ti['dag_run_id']}/taskInstances/"
           f"{ti['task_id']}/{ti['map_index']}/hitlDetails")  # fmt: skip
    resp = client.patch(url, json={"chosen_options": [choice]})
    resp.raise_for_status()
    return resp.json()


class Approver(threading.Thread):
    """Waits for the DAG's approval request and answers it with ``choice`` (Approve or Reject)."""

    def __init__(self, dag_id: str, choice: str, before_answer: Callable[[dict[str, Any]], None] | None = None,
                 timeout: float = 900, log: Callable[[str], None] | None = None) -> None:  # fmt: skip
        super().__init__(daemon=True, name=f"approver-{dag_id}")
        self.dag_id, self.choice, self.before_answer, self.timeout = dag_id, choice, before_answer, timeout
        self.log = log or (lambda line: None)
        self.response: dict[str, Any] | None = None
        self.detail: dict[str, Any] | None = None
        self.error: BaseException | None = None
        self._stopping = threading.Event()

    def stop(self) -> None:
        """Stop waiting (a watchdog whose run ended without asking anybody); returns once the thread has ended."""
        self._stopping.set()
        self.join(10)

    def run(self) -> None:
        try:
            client = _client()
            deadline = time.monotonic() + self.timeout
            choice: str | None = None
            last: BaseException | None = None
            while time.monotonic() < deadline and not self._stopping.is_set():
                # The API shares the metadata database (SQLite in tests and the demo) with the running DAG:
                # a call can meet a locked database. Retry until the deadline instead of dying silently
                # and leaving the run parked on an approval nobody answers.
                try:
                    pending = pending_requests(client, self.dag_id)
                    if pending:
                        self.detail = pending[0]
                        if choice is None:
                            choice = self.choice
                            if self.before_answer:
                                try:
                                    self.before_answer(self.detail)
                                except BaseException as exc:
                                    # Never leave the run parked forever: reject it, and report the error.
                                    self.error, choice = exc, "Reject"
                        self.response = answer(client, self.detail, choice)
                        self.log(f"answered '{self.detail.get('subject')}' with {choice} through the REST API")
                        return
                except Exception as exc:
                    last = exc
                self._stopping.wait(0.5)
            if self._stopping.is_set():
                return
            raise TimeoutError(f"no approval request for {self.dag_id} answered within {self.timeout:.0f}s"
                               + (f" (last error: {last})" if last else ""))
        except BaseException as exc:  # reported by the caller, which runs the DAG in the main thread
            self.error = exc
