"""Re-arming a plan: run it afresh after the cluster moved back, without losing its history."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafka_rebalance.cluster.admin import ClusterAdmin
from kafka_rebalance.executor.ledger import CorruptLedger, Ledger, Owned, archive_ledger, rearm_record
from kafka_rebalance.executor.throttles import label, restore_leftovers
from kafka_rebalance.plan_manifest import Plan


def rearm(plan: Plan, admin: ClusterAdmin, by: str | None = None, run: str | None = None,
          progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run the plan afresh: restore throttles the old ledger left set, archive it (ledger.<n>.json), start a new one.

    Audited: the new ledger's ``rearms`` lists every re-arm (who, when, which archive, which run).
    Idempotent per run: a run that already re-armed this plan does not archive its own ledger again.
    """
    say = progress or (lambda line: None)
    old: Ledger | None = None
    history: list[dict[str, Any]] = []
    try:
        old = Ledger.open(plan.path, plan.plan_hash, Owned.of(plan))
    except CorruptLedger as exc:
        say(f"re-arm: {exc}; archiving it unread, its throttle values could not be restored automatically")
    if old is not None:
        history = list(old.data.get("rearms", []))
        if run is not None and any(r.get("run") == run for r in history):
            say(f"re-arm: already done by run {run}; keeping its ledger")
            return {"rearmed": False, "archived_as": None, "reason": "already re-armed by this run"}
        if not old.path.exists():
            return {"rearmed": False, "archived_as": None, "reason": "nothing ran yet"}
        restore_leftovers(admin, old, say)
    archived = archive_ledger(plan.path)
    record = rearm_record(by, archived, run, "re-armed: run the plan afresh from its first batch")
    fresh = Ledger.fresh(plan.path, plan.plan_hash)
    fresh.data["rearms"] = [*history, record]
    if old is not None:
        # What the old ledger still owes the cluster goes on: throttle values not yet written back (a broker
        # that was down) stay recorded, so the next run or `cancel` restores them; the run's lease stays held.
        fresh.data["lease"] = old.data.get("lease")
        for key in old.unrestored():
            kept = {k: v for k, v in old.throttle_entry(key).items()
                    if k in ("throttles_before", "throttles_restored", "restored", "restore_pending")}
            fresh.throttle_entry(key).update(kept)
            fresh.event(f"re-arm: kept the throttle values {label(key)} has not restored yet "
                        f"({', '.join(kept.get('restore_pending') or []) or 'not restored'})")
    fresh.event(f"re-armed by {record['by']} at {record['at']}; previous ledger kept as {record['archived_as']}")
    fresh.save()
    say(f"re-armed plan {plan.plan_hash[:16]}: previous ledger kept as {record['archived_as']}")
    return {"rearmed": True, **record}
