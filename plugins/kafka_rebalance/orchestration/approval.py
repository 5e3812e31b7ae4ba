"""The approval step: Airflow's HITL ApprovalOperator, plus a record of the decision, after the approval policy.

On Reject, ApprovalOperator skips its downstream tasks and leaves no return value, so
nothing later in the run could tell a rejection from a dry run. This subclass pushes the
decision (option chosen, who chose it) to XCom under ``decision`` before the stock
behaviour runs, so the run's last task can mark the staged plan rejected.

When the cluster's approval policy approved the plan (the ``policy`` task, which recorded the
approval in approval.json through plan_approval.decide), the step asks nobody: it pushes the same
decision, with the policy's approver (``policy:<rule>``), and the run goes on as after a person's
Approve. A plan the policy held is asked about as always, its body saying why it was held.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow.providers.standard.operators.hitl import ApprovalOperator


class PlanApprovalOperator(ApprovalOperator):
    def __init__(self, *, policy_task_id: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.policy_task_id = policy_task_id

    def execute(self, context: Any) -> Any:
        verdict = context["ti"].xcom_pull(task_ids=self.policy_task_id) if self.policy_task_id else None
        if isinstance(verdict, Mapping) and verdict.get("approved_by"):
            by = str(verdict["approved_by"])
            decision = {"chosen_options": [self.APPROVE], "responded_by": {"id": by, "name": by}}
            context["ti"].xcom_push(key="decision", value=decision)
            self.log.info("Approved by the approval policy (%s); nobody is asked", verdict.get("text"))
            return decision
        if isinstance(verdict, Mapping) and verdict.get("text"):
            self.body = f"{self.body or ''}\n\n**Approval policy:** {verdict['text']}"
        return super().execute(context)

    def execute_complete(self, context: Any, event: dict[str, Any]) -> Any:
        if "error" not in event:
            user = event.get("responded_by_user") or {}
            context["ti"].xcom_push(
                key="decision",
                value={
                    "chosen_options": list(event.get("chosen_options") or []),
                    "responded_by": {k: user.get(k) for k in ("id", "name")} if isinstance(user, Mapping) else str(user),
                },
            )
        return super().execute_complete(context=context, event=event)
