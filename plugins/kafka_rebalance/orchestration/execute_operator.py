"""The DAG's execute step as a deferrable operator: between windows, and while paused, it holds no worker slot.

``pipeline.execute`` runs batches while the gate allows. When it comes back held, this operator
defers: to Airflow's ``DateTimeTrigger`` until the next window opens, or to ``PlanResumedTrigger``
(below) until an operator resumes a paused or stopped plan. On wake-up it runs ``execute`` again,
which resumes from the ledger, so a killed worker, scheduler or triggerer loses nothing either.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import Any

from airflow.sdk import BaseOperator
from airflow.triggers.base import BaseTrigger, TriggerEvent

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.executor.control import RunState, read_control
from kafka_rebalance.executor.interrupt import StopRequest


class PlanResumedTrigger(BaseTrigger):
    """Fires once the latest request in the plan's control.json is a resume (or it is corrupt: execute reports that)."""

    def __init__(self, plan_dir: str, plan_hash: str, poll_seconds: float = 10.0) -> None:
        super().__init__()
        self.plan_dir, self.plan_hash, self.poll_seconds = plan_dir, plan_hash, poll_seconds

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (f"{type(self).__module__}.{type(self).__qualname__}",
                {"plan_dir": self.plan_dir, "plan_hash": self.plan_hash, "poll_seconds": self.poll_seconds})

    def _state(self) -> str:
        try:
            return read_control(Path(self.plan_dir), self.plan_hash).state.value
        except Exception as exc:
            return f"unreadable: {exc}"

    async def run(self) -> AsyncIterator[TriggerEvent]:
        while True:
            state = await asyncio.to_thread(self._state)
            if state not in (RunState.PAUSED.value, RunState.STOPPED.value):
                yield TriggerEvent({"state": state})
                return
            await asyncio.sleep(self.poll_seconds)


class ExecutePlanOperator(BaseOperator):
    """Execute the staged plan of ``cluster_id`` within its windows, deferring while held."""

    template_fields = ("staged_dir", "window")

    def __init__(self, *, cluster_id: str, staged_dir: str, window: str = "configured", resume_poll_seconds: float = 10.0,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cluster_id, self.staged_dir, self.window = cluster_id, staged_dir, window
        self.resume_poll_seconds = resume_poll_seconds
        self._stop: StopRequest | None = None  # set while pipeline.execute runs

    def on_kill(self) -> None:
        """Stop starting moves and restore this run's throttles: at once when the run is between polls, or at its
        next safe point when a Kafka call is in progress (pipeline.execute then raises ExecutionStopped)."""
        if self._stop is not None:
            self._stop.request(signal.SIGTERM)

    def execute(self, context: Any, event: dict[str, Any] | None = None) -> str:
        from airflow.providers.standard.triggers.temporal import DateTimeTrigger

        from kafka_rebalance.orchestration import pipeline
        from kafka_rebalance.orchestration.clusters_config import clusters_file, load_clusters

        if event is not None:
            self.log.info("resumed after a hold: %s", event)
        cfg = load_clusters(clusters_file())
        cluster = next((c for c in cfg.clusters if c.cluster_id == self.cluster_id), None)
        if cluster is None:
            raise RebalanceError(f"{cfg.path}: cluster {self.cluster_id} is no longer listed")
        # Airflow's task runner answers SIGTERM (the task killed, or timed out) by calling on_kill from
        # the signal handler and lets execute go on until SIGKILL: on_kill must stop the run itself.
        self._stop = StopRequest(self.log.warning)
        try:
            # The lease's owner is this task instance: a deferred task resumed by another worker takes it over.
            ti = context["ti"] if "ti" in context else None
            owner = f"{ti.dag_id}/{ti.run_id}/{ti.task_id}" if ti is not None else None
            outcome = pipeline.execute(cfg, cluster, self.staged_dir, window=self.window, stop=self._stop, owner=owner)
        finally:
            self._stop = None
        hold = outcome["hold"]
        if hold is None:
            return outcome["ledger"]
        if hold["reason"] in ("paused", "stopped"):
            self.log.info("deferring until the plan is resumed (%s)", hold["detail"])
            self.defer(trigger=PlanResumedTrigger(self.staged_dir, outcome["plan_hash"], self.resume_poll_seconds),
                       method_name="execute")
        self.log.info("deferring until the next window opens at %s (%s)", hold["resume_at"], hold["detail"])
        self.defer(trigger=DateTimeTrigger(moment=datetime.fromisoformat(hold["resume_at"])), method_name="execute")
        raise AssertionError("unreachable: defer raises")  # pragma: no cover
