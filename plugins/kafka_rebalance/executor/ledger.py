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
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kafka_rebalance.atomic import atomic_write
from kafka_rebalance.cluster.admin import BROKER_RATE_KEYS
from kafka_rebalance.executor.moves import (
    CANCELLED,
    FAILED,
    FINISHED,
    PENDING,
    STATES_OF,
    SUBMITTED,
    THROTTLED,
    THROTTLES_RECORDED,
    IllegalTransition,
    Kind,
    MoveState,
    check_transition,
)
from kafka_rebalance.plan_dir import LEDGER_ARCHIVE, LEDGER_FILE, PlanDirError, read_json
from kafka_rebalance.plan_manifest import Plan, throttle_value_problem
from kafka_rebalance.userinput import is_ascii_digits

__all__ = ["CANCELLED", "CONTINUOUS", "FAILED", "FINISHED", "PENDING", "SUBMITTED", "THROTTLED", "THROTTLES_RECORDED",
           "CorruptLedger", "Ledger", "MoveState", "Owned"]

# 2: states change only through the transition table (executor/moves.py); every recorded throttle value is
# checked (the four KIP-73 keys, on the plan's own brokers and topics); a run's lease and the operator's
# leave to run on a cluster without an id are recorded. A version-1 ledger is migrated when opened.
LEDGER_VERSION = 2
STATES = tuple(MoveState)
# Continuous execution (executor/engine.py) keeps its throttle record and one entry per schedule step
# under this key; ``unrestored`` names it beside the batch ids (which are digits, so never collide).
CONTINUOUS = "continuous"
STEP_STATES = tuple(STATES_OF[Kind.STEP] - {PENDING})


class CorruptLedger(PlanDirError):
    """ledger.json exists but cannot be trusted; it is kept as it is."""


def _corrupt(path: Path, detail: str) -> CorruptLedger:
    return CorruptLedger(
        f"{path}: corrupt ledger ({detail}); it records throttle values to restore, so it is kept: compare the "
        "throttle configs it lists with the cluster's, then run afresh with `execute --rearm` (archives it as ledger.N.json)")


@dataclass(frozen=True, slots=True)
class Owned:
    """What a plan may touch: the brokers and topics its moves involve (``Plan.brokers_touched``/``topics_touched``)."""

    brokers: frozenset[int]
    topics: frozenset[str]

    @classmethod
    def of(cls, plan: Plan) -> Owned:
        return cls(plan.brokers_touched, plan.topics_touched)


def _check_recorded(path: Path, where: str, before: Any, owned: Owned | None) -> None:
    """A record of throttle values before a run: the only values a restore ever writes, so checked like input."""
    if not (isinstance(before, dict) and all(isinstance(before.get(k, {}), dict) for k in ("brokers", "topics"))):
        raise _corrupt(path, f"{where}.throttles_before is not the recorded broker and topic configs")
    for kind, resources in (("brokers", before.get("brokers", {})), ("topics", before.get("topics", {}))):
        for name, values in resources.items():
            at = f"{where}.throttles_before.{kind}.{name}"
            if kind == "brokers" and not (is_ascii_digits(name) and len(name) <= 10):
                raise _corrupt(path, f"{at}: {name!r} is not a broker id")
            if owned is not None and (int(name) not in owned.brokers if kind == "brokers" else name not in owned.topics):
                raise _corrupt(path, f"{at}: the plan moves nothing on {'broker' if kind == 'brokers' else 'topic'} "
                                     f"{name!r}, so no run of it recorded its throttles")
            if not isinstance(values, dict):
                raise _corrupt(path, f"{at} is not an object of config values")
            for key, value in values.items():
                problem = throttle_value_problem(key, value)
                if problem is None and (key in BROKER_RATE_KEYS) != (kind == "brokers"):
                    problem = f"a {'topic' if kind == 'brokers' else 'broker'} config"
                if problem is not None:
                    raise _corrupt(path, f"{at}.{key}: {problem}")


def _migrate(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """Bring a ledger written by an earlier version to this one (kept in memory; saved by the next write)."""
    version = data.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool):
        raise _corrupt(path, f"version is {json.dumps(version)[:40]}")
    if version > LEDGER_VERSION:
        raise PlanDirError(f"{path}: version {version}: written by a newer kafka-rebalance (this one reads up to "
                           f"{LEDGER_VERSION}); run that version")
    if version < LEDGER_VERSION:
        # 1 -> 2: the same states and records; the lease and the leave for an unidentified cluster are new.
        data["version"] = LEDGER_VERSION
        data.setdefault("lease", None)
        data.setdefault("unidentified_cluster", None)
        data.setdefault("events", []).append(f"migrated from ledger version {version} to {LEDGER_VERSION}")
    return data


def _check(path: Path, data: Any, plan_hash: str, owned: Owned | None = None) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise _corrupt(path, "top level is not an object")
    if data.get("plan_hash") != plan_hash:
        raise PlanDirError(f"{path}: plan_hash: the ledger belongs to plan {data.get('plan_hash')}, not {plan_hash}")
    data = _migrate(path, data)
    for key, kind in (("batches", dict), ("elections", dict), ("events", list), ("rearms", list)):
        if not isinstance(data.setdefault(key, kind()), kind):
            raise _corrupt(path, f"{key} is not a{'n object' if kind is dict else ' list'}")
    lease = data.setdefault("lease", None)
    if lease is not None and not (isinstance(lease, dict) and isinstance(lease.get("host"), str)
                                  and isinstance(lease.get("pid"), int) and not isinstance(lease.get("pid"), bool)):
        raise _corrupt(path, f"lease is {json.dumps(lease)[:80]}, not a holder with host and pid")
    cont = data.get(CONTINUOUS)
    if cont is not None:
        if not isinstance(cont, dict) or not isinstance(cont.setdefault("steps", {}), dict):
            raise _corrupt(path, f"{CONTINUOUS} is not an object with a steps object")
        if cont.get("state", PENDING) not in STATES_OF[Kind.RUN]:
            raise _corrupt(path, f"{CONTINUOUS}.state is {json.dumps(cont.get('state'))[:40]}")
        if cont.get("throttles_before") is not None:
            _check_recorded(path, CONTINUOUS, cont["throttles_before"], owned)
        for sid, entry in cont["steps"].items():
            if not (is_ascii_digits(sid) and isinstance(entry, dict) and entry.get("state") in STEP_STATES):
                raise _corrupt(path, f"{CONTINUOUS}.steps.{sid} is {json.dumps(entry)[:80]}")
    for bid, entry in data["batches"].items():
        if not isinstance(entry, dict) or entry.get("state", PENDING) not in STATES:
            raise _corrupt(path, f"batches.{bid}.state is {json.dumps(entry.get('state') if isinstance(entry, dict) else entry)}")
        if entry.get("throttles_before") is not None:
            _check_recorded(path, f"batches.{bid}", entry["throttles_before"], owned)
    return data


class Ledger:
    def __init__(self, path: Path, data: dict[str, Any]) -> None:
        self.path = path
        self.data = data
        self._lines: dict[str, str] = {}  # continuous step id -> its encoded line, until ``step_changed``

    @classmethod
    def fresh(cls, plan_dir: Path, plan_hash: str) -> Ledger:
        return cls(Path(plan_dir) / LEDGER_FILE,
                   {"version": LEDGER_VERSION, "plan_hash": plan_hash, "batches": {}, "elections": {}, "events": [],
                    "rearms": [], "lease": None, "unidentified_cluster": None})

    @classmethod
    def open(cls, plan_dir: Path, plan_hash: str, owned: Owned | None = None) -> Ledger:
        """The plan's ledger, checked (and migrated from an earlier version); ``owned``: also refuse recorded
        throttle values on a broker or topic the plan does not move, which no run of it could have recorded."""
        path = Path(plan_dir) / LEDGER_FILE
        if not path.exists():
            return cls.fresh(plan_dir, plan_hash)
        try:
            data = read_json(path, "ledger")
        except PlanDirError as exc:
            raise _corrupt(path, str(exc).removeprefix(f"{path}: ")) from None
        return cls(path, _check(path, data, plan_hash, owned))

    def save(self) -> None:
        atomic_write(self.path, ledger_bytes(self.data, self._lines))

    # ------------------------------------------------------------------ states: the only writer

    def _refuse(self, exc: IllegalTransition) -> IllegalTransition:
        self.event(f"refused: {exc}")
        self.save()
        return exc

    def _move(self, kind: Kind, name: str, entry: dict[str, Any], new: MoveState, fields: dict[str, Any]) -> dict[str, Any]:
        try:
            check_transition(kind, name, str(entry.get("state", PENDING)), new)
        except IllegalTransition as exc:
            raise self._refuse(exc) from None
        entry.update(fields, state=new.value)
        return entry

    def set_batch(self, batch_id: str, new: MoveState, **fields: Any) -> dict[str, Any]:
        """Move a batch to ``new`` (checked against the table) and record ``fields`` beside it."""
        return self._move(Kind.BATCH, batch_id, self.batch(batch_id), new, fields)

    def set_step(self, step_id: str, new: MoveState, **fields: Any) -> dict[str, Any]:
        """Move a schedule step to ``new``; a step submitted again keeps its earlier attempts under ``earlier``."""
        steps = self.continuous()["steps"]
        old = steps.get(step_id)
        try:
            check_transition(Kind.STEP, f"step {step_id}", str(old["state"]) if old else PENDING, new)
        except IllegalTransition as exc:
            raise self._refuse(exc) from None
        self.step_changed(step_id)
        if new == SUBMITTED:
            earlier = [*old.pop("earlier", []), old] if old else []
            steps[step_id] = {**fields, "state": new.value, **({"earlier": earlier} if earlier else {})}
        else:
            assert old is not None  # the table lets only SUBMITTED leave PENDING
            old.update(fields, state=new.value)
        return steps[step_id]

    def set_run(self, new: MoveState, **fields: Any) -> dict[str, Any]:
        """Move the continuous run as a whole to ``new``."""
        return self._move(Kind.RUN, CONTINUOUS, self.continuous(), new, fields)

    def step_state(self, step_id: str) -> MoveState:
        entry = self.continuous()["steps"].get(step_id)
        return MoveState(entry["state"]) if entry else PENDING

    # ------------------------------------------------------------------ records

    def batch(self, batch_id: str) -> dict[str, Any]:
        return self.data["batches"].setdefault(batch_id, {"state": PENDING.value})

    def step_changed(self, step_id: str) -> None:
        """Call after changing a continuous step's entry: its line is encoded again at the next save."""
        self._lines.pop(step_id, None)

    def continuous(self) -> dict[str, Any]:
        return self.data.setdefault(CONTINUOUS, {"steps": {}})

    def throttle_entry(self, key: str) -> dict[str, Any]:
        """Where the throttle values recorded under ``key`` (a batch id or CONTINUOUS) live."""
        return self.continuous() if key == CONTINUOUS else self.batch(key)

    def state(self, batch_id: str) -> MoveState:
        return MoveState(self.data["batches"].get(batch_id, {}).get("state", PENDING))

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
