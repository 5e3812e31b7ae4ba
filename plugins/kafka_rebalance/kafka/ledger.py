"""``ledger.json`` in the plan directory: what the executor set and what finished.

Written atomically (temp file + rename) after every step, so a run killed at any
moment leaves a ledger that tells the next run which throttle values to put back
and which batches are done.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from kafka_rebalance.plan_manifest import LEDGER_FILE, PlanError

LEDGER_VERSION = 1
# Batch states, in the order a batch goes through them.
PENDING, THROTTLES_RECORDED, THROTTLED, SUBMITTED, FINISHED, FAILED, CANCELLED = (
    "pending", "throttles_recorded", "throttled", "submitted", "finished", "failed", "cancelled")


class Ledger:
    def __init__(self, path: Path, data: dict[str, Any]) -> None:
        self.path = path
        self.data = data

    @classmethod
    def open(cls, plan_dir: Path, plan_hash: str) -> Ledger:
        path = plan_dir / LEDGER_FILE
        if not path.exists():
            return cls(path, {"version": LEDGER_VERSION, "plan_hash": plan_hash, "batches": {}, "elections": {}, "events": []})
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise PlanError(f"{path}: unreadable ledger ({exc}); it records throttles to restore, so fix it rather than delete it") from None
        if not isinstance(data, dict) or data.get("plan_hash") != plan_hash:
            raise PlanError(
                f"{path}: plan_hash: the ledger belongs to plan {data.get('plan_hash') if isinstance(data, dict) else '?'}, "
                f"not {plan_hash}")
        data.setdefault("batches", {})
        data.setdefault("elections", {})
        data.setdefault("events", [])
        return cls(path, data)

    def save(self) -> None:
        fd, tmp = tempfile.mkstemp(prefix=".ledger.", suffix=".tmp", dir=self.path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(self.data, fh, sort_keys=True, indent=2)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)

    def batch(self, batch_id: str) -> dict[str, Any]:
        return self.data["batches"].setdefault(batch_id, {"state": PENDING})

    def state(self, batch_id: str) -> str:
        return str(self.data["batches"].get(batch_id, {}).get("state", PENDING))

    def event(self, text: str) -> None:
        self.data["events"].append(text)

    def unrestored(self) -> list[str]:
        """Batches whose recorded throttle values have not been written back yet."""
        return sorted(b for b, v in self.data["batches"].items() if v.get("throttles_before") is not None and not v.get("throttles_restored"))
