"""The approval step: Airflow's HITL ApprovalOperator, plus a record of the decision.

On Reject, ApprovalOperator skips its downstream tasks and leaves no return value, so
nothing later in the run could tell a rejection from a dry run. This subclass pushes the
decision (option chosen, who chose it) to XCom under ``decision`` before the stock
behaviour runs, so the run's last task can mark the staged plan rejected.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow.providers.standard.operators.hitl import ApprovalOperator


class PlanApprovalOperator(ApprovalOperator):
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
