"""Recovery: put back the throttle values a run of this plan recorded, even when the plan no longer verifies.

Restoring throttles is the one thing that must stay possible whatever happened to the plan directory:
a file edited by mistake after a run was killed must not leave replication throttled on production
brokers. So recovery trusts the plan as far as it can and no further:

* a plan that verifies: the ledger is checked against it (only the brokers and topics it moves);
* a plan that does not: the ledger must still name plan.json's recorded hash, and every value is
  still checked (the four KIP-73 keys, values a broker accepts); nothing else is done: no move is
  cancelled or submitted, which needs the plan's full integrity (``cancel``, ``execute``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_rebalance.cluster.admin import ClusterAdmin
from kafka_rebalance.executor.ledger import Ledger, Owned
from kafka_rebalance.executor.settings import ExecutionRefused
from kafka_rebalance.executor.throttles import restore_leftovers
from kafka_rebalance.plan_dir import LEDGER_FILE, PlanDirError, read_manifest
from kafka_rebalance.plan_manifest import load_plan


@dataclass(frozen=True, slots=True)
class RecoveryOutcome:
    plan_hash: str
    restored_throttles_of: tuple[str, ...]  # the records written back (batch ids, or "continuous")
    still_pending: tuple[str, ...]  # records a resource did not answer for: the next restore tries again
    plan_damaged: str | None  # why the plan no longer verifies (recovery went on), None when it does

    def to_dict(self) -> dict[str, Any]:
        return {"plan_hash": self.plan_hash, "restored_throttles_of": list(self.restored_throttles_of),
                "still_pending": list(self.still_pending), "plan_damaged": self.plan_damaged}


@dataclass(frozen=True, slots=True)
class RecoveryTarget:
    """What recovery knows of the plan: its hash, its Kafka cluster id and what it may touch, as far as trusted."""

    path: Path
    plan_hash: str
    kafka_cluster_id: str | None
    owned: Owned | None  # None: the plan is damaged, so only the ledger's own checks apply
    damaged: str | None


def recovery_target(plan_dir: Path) -> RecoveryTarget:
    plan_dir = Path(plan_dir)
    try:
        plan = load_plan(plan_dir, require_passed=False)
    except PlanDirError as exc:
        manifest = read_manifest(plan_dir)
        recorded = manifest.get("plan_hash")
        if not isinstance(recorded, str) or not recorded:
            raise
        cid = manifest.get("kafka_cluster_id")
        return RecoveryTarget(plan_dir, recorded, cid if isinstance(cid, str) and cid else None, None, str(exc))
    return RecoveryTarget(plan_dir, plan.plan_hash, plan.kafka_cluster_id, Owned.of(plan), None)


def restore_recorded(target: RecoveryTarget, admin: ClusterAdmin, progress: Callable[[str], None]) -> RecoveryOutcome:
    """Write back every throttle record a run of the plan left set (checked first; see the module doc)."""
    if target.kafka_cluster_id is not None:
        actual = admin.kafka_cluster_id()
        if actual != target.kafka_cluster_id:
            raise ExecutionRefused(f"{target.path}: the plan was made for Kafka cluster {target.kafka_cluster_id!r}, but the "
                                   f"connected cluster reports {'no id' if actual is None else repr(actual)}; refusing "
                                   "to act on another cluster")
    if not (target.path / LEDGER_FILE).exists():
        return RecoveryOutcome(target.plan_hash, (), (), target.damaged)
    if target.damaged is not None:
        progress(f"restore: the plan no longer verifies ({target.damaged}); restoring only the throttle values its "
                 "ledger recorded")
    ledger = Ledger.open(target.path, target.plan_hash, target.owned)
    keys = restore_leftovers(admin, ledger, progress)
    pending = tuple(ledger.unrestored())
    return RecoveryOutcome(target.plan_hash, tuple(k for k in keys if k not in pending), pending, target.damaged)
