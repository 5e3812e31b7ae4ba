"""``ledger.json`` in the plan directory: what the executor set and what finished.

Written atomically (temp file + fsync + rename) after every step, so a run killed at
any moment leaves a ledger that tells the next run which throttle values to put back
and which batches are done. A ledger is never deleted: re-arming a plan (running it
afresh) archives it as ``ledger.<n>.json`` and records who did it and when.
"""

from __future__ import annotations

import getpass
import json
import os
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from kafka_rebalance.atomic import atomic_write
from kafka_rebalance.plan_dir import LEDGER_ARCHIVE, LEDGER_FILE, PlanDirError, read_json
from kafka_rebalance.userinput import is_ascii_digits

LEDGER_VERSION = 1


class MoveState(StrEnum):
    """Where a batch (all of these, in this order) or a schedule step (submitted onwards) stands.

    The values are what ledger.json holds; a StrEnum compares equal to them.
    """

    PENDING = "pending"
    THROTTLES_RECORDED = "throttles_recorded"
    THROTTLED = "throttled"
    SUBMITTED = "submitted"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"


PENDING, THROTTLES_RECORDED, THROTTLED, SUBMITTED, FINISHED, FAILED, CANCELLED = MoveState
STATES = tuple(MoveState)
# Continuous execution (executor/continuous.py) keeps its throttle record and one entry per schedule step
# under this key; ``unrestored`` names it beside the batch ids (which are digits, so never collide).
CONTINUOUS = "continuous"
STEP_STATES = (MoveState.SUBMITTED, MoveState.FINISHED, MoveState.FAILED, MoveState.CANCELLED)


class CorruptLedger(PlanDirError):
    """ledger.json exists but cannot be trusted; it is kept as it is."""


def _corrupt(path: Path, detail: str) -> CorruptLedger:
    return CorruptLedger(
        f"{path}: corrupt ledger ({detail}); it records throttle values to restore, so it is kept: compare the "
        "throttle configs it lists with the cluster's, then run afresh with `execute --rearm` (archives it as ledger.N.json)")


def _check(path: Path, data: Any, plan_hash: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise _corrupt(path, "top level is not an object")
    if data.get("plan_hash") != plan_hash:
        raise PlanDirError(f"{path}: plan_hash: the ledger belongs to plan {data.get('plan_hash')}, not {plan_hash}")
    for key, kind in (("batches", dict), ("elections", dict), ("events", list), ("rearms", list)):
        if not isinstance(data.setdefault(key, kind()), kind):
            raise _corrupt(path, f"{key} is not a{'n object' if kind is dict else ' list'}")
    cont = data.get(CONTINUOUS)
    if cont is not None:
        if not isinstance(cont, dict) or not isinstance(cont.setdefault("steps", {}), dict):
            raise _corrupt(path, f"{CONTINUOUS} is not an object with a steps object")
        before = cont.get("throttles_before")
        if before is not None and not (isinstance(before, dict) and all(isinstance(before.get(k, {}), dict) for k in ("brokers", "topics"))):
            raise _corrupt(path, f"{CONTINUOUS}.throttles_before is not the recorded broker and topic configs")
        for sid, entry in cont["steps"].items():
            if not (is_ascii_digits(sid) and isinstance(entry, dict) and entry.get("state") in STEP_STATES):
                raise _corrupt(path, f"{CONTINUOUS}.steps.{sid} is {json.dumps(entry)[:80]}")
    for bid, entry in data["batches"].items():
        if not isinstance(entry, dict) or entry.get("state", PENDING) not in STATES:
            raise _corrupt(path, f"batches.{bid}.state is {json.dumps(entry.get('state') if isinstance(entry, dict) else entry)}")
        before = entry.get("throttles_before")
        if before is not None and not (isinstance(before, dict) and all(isinstance(before.get(k, {}), dict) for k in ("brokers", "topics"))):
            raise _corrupt(path, f"batches.{bid}.throttles_before is not the recorded broker and topic configs")
    return data


class Ledger:
    def __init__(self, path: Path, data: dict[str, Any]) -> None:
        self.path = path
        self.data = data
        self._lines: dict[str, str] = {}  # continuous step id -> its encoded line, until ``step_changed``

    @classmethod
    def fresh(cls, plan_dir: Path, plan_hash: str) -> Ledger:
        return cls(Path(plan_dir) / LEDGER_FILE,
                   {"version": LEDGER_VERSION, "plan_hash": plan_hash, "batches": {}, "elections": {}, "events": [], "rearms": []})

    @classmethod
    def open(cls, plan_dir: Path, plan_hash: str) -> Ledger:
        path = Path(plan_dir) / LEDGER_FILE
        if not path.exists():
            return cls.fresh(plan_dir, plan_hash)
        try:
            data = read_json(path, "ledger")
        except PlanDirError as exc:
            raise _corrupt(path, str(exc).removeprefix(f"{path}: ")) from None
        return cls(path, _check(path, data, plan_hash))

    def save(self) -> None:
        atomic_write(self.path, ledger_bytes(self.data, self._lines))

    def batch(self, batch_id: str) -> dict[str, Any]:
        return self.data["batches"].setdefault(batch_id, {"state": PENDING})

    def step_changed(self, step_id: str) -> None:
        """Call after changing a continuous step's entry: its line is encoded again at the next save."""
        self._lines.pop(step_id, None)

    def continuous(self) -> dict[str, Any]:
        return self.data.setdefault(CONTINUOUS, {"steps": {}})

    def throttle_entry(self, key: str) -> dict[str, Any]:
        """Where the throttle values recorded under ``key`` (a batch id or CONTINUOUS) live."""
        return self.continuous() if key == CONTINUOUS else self.batch(key)

    def state(self, batch_id: str) -> str:
        return str(self.data["batches"].get(batch_id, {}).get("state", PENDING))

    def event(self, text: str) -> None:
        self.data["events"].append(text)

    def unrestored(self) -> list[str]:
        """Batches whose recorded throttle values have not been written back yet."""
        out = sorted(b for b, v in self.data["batches"].items() if v.get("throttles_before") is not None and not v.get("throttles_restored"))
        cont = self.data.get(CONTINUOUS) or {}
        if cont.get("throttles_before") is not None and not cont.get("throttles_restored"):
            out.append(CONTINUOUS)
        return out


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def ledger_bytes(data: dict[str, Any], cache: dict[str, str] | None = None) -> bytes:
    """The ledger as JSON with one top-level key, batch and continuous step per line.

    It is rewritten after every poll that changed something, and a continuous run of a large plan
    holds one entry per step: json's C encoder per entry keeps that cheap (the canonical indented
    form costs tens of milliseconds per thousand steps), and one line per entry keeps it readable.
    """

    def block(mapping: dict[str, Any], indent: str, memo: dict[str, str] | None = None) -> str:
        if not mapping:
            return "{}"
        rows = []
        for k in sorted(mapping, key=lambda k: (len(k), k)):
            row = memo.get(k) if memo is not None else None
            if row is None:
                row = f"{indent}  {json.dumps(k)}: {_compact(mapping[k])}"
                if memo is not None:
                    memo[k] = row
            rows.append(row)
        return "{\n" + ",\n".join(rows) + f"\n{indent}}}"

    lines = []
    for key, value in sorted(data.items()):
        if key == "batches" and isinstance(value, dict):
            text = block(value, "  ")
        elif key == CONTINUOUS and isinstance(value, dict):
            inner = [f"    {json.dumps(k)}: {block(v, '    ', cache) if k == 'steps' and isinstance(v, dict) else _compact(v)}"
                     for k, v in sorted(value.items())]
            text = "{\n" + ",\n".join(inner) + "\n  }"
        else:
            text = _compact(value)
        lines.append(f"  {json.dumps(key)}: {text}")
    return ("{\n" + ",\n".join(lines) + "\n}\n").encode("utf-8")


def archive_ledger(plan_dir: Path) -> Path | None:
    """Move ledger.json to the first free ledger.<n>.json (never over an existing one); None if there is none."""
    path = Path(plan_dir) / LEDGER_FILE
    if not path.exists():
        return None
    n = 1
    while True:
        archived = Path(plan_dir) / LEDGER_ARCHIVE.format(n=n)
        try:
            os.link(path, archived)  # fails if the name is taken: an archive is never overwritten
        except FileExistsError:
            n += 1
            continue
        break
    os.unlink(path)
    return archived


def _user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"


def rearm_record(by: str | None, archived: Path | None, run: str | None, reason: str) -> dict[str, Any]:
    return {
        "by": by or _user(),
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "archived_as": archived.name if archived else None,
        "run": run,
        "reason": reason,
    }
