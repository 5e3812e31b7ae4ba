"""Pause, resume and stop: an operator's requests to a (running or future) execution of a plan.

Requests are appended to ``control.json`` in the plan directory (``plan_dir.CONTROL_FILE``), each
with who asked, when, and through what (the CLI's OS user, or the Airflow user of the plan page).
The file names the plan hash it speaks for, as verdicts do, so a file copied from another plan
is refused rather than obeyed. The executor reads the latest request before it starts a move:

* ``pause``: start no new move; moves in flight finish; throttles are restored; the run ends as
  ``paused`` and a later run (or the deferred task) continues from the ledger once resumed;
* ``stop``: as pause, but the moves in flight are cancelled first (Kafka reverts them);
* ``resume``: moves may start again.

Nothing here touches the cluster: requesting is always safe, at any moment, mid-move included.
"""

from __future__ import annotations

import fcntl
import getpass
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import Any

from kafka_rebalance.plan_dir import CONTROL_FILE, PlanDirError, atomic_write_json, read_json, verify_plan

MAX_REQUESTS = 10_000  # a runaway script must not grow the file without bound
_MAX_NAME = 200


class ControlAction(str, Enum):
    PAUSE = "pause"
    RESUME = "resume"
    STOP = "stop"


class RunState(str, Enum):
    """What the latest request asks of an execution."""

    RUNNING = "running"
    PAUSED = "paused"
    STOPPED = "stopped"


_STATE_AFTER = {ControlAction.PAUSE: RunState.PAUSED, ControlAction.RESUME: RunState.RUNNING, ControlAction.STOP: RunState.STOPPED}


@dataclass(frozen=True)
class ControlRequest:
    action: ControlAction
    by: str
    at: str  # ISO 8601, UTC
    via: str  # "cli" or "ui"

    def as_json(self) -> dict[str, str]:
        return {**asdict(self), "action": self.action.value}


@dataclass(frozen=True)
class Control:
    plan_hash: str | None
    requests: tuple[ControlRequest, ...] = ()

    @property
    def state(self) -> RunState:
        return _STATE_AFTER[self.requests[-1].action] if self.requests else RunState.RUNNING

    @property
    def last(self) -> ControlRequest | None:
        return self.requests[-1] if self.requests else None


def os_user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return f"uid {os.getuid()}"


def read_control(plan_dir: Path, plan_hash: str) -> Control:
    """The requests recorded for this plan; none recorded means ``running``."""
    path = Path(plan_dir) / CONTROL_FILE
    if not path.exists():
        return Control(plan_hash)
    raw = read_json(path, "control file")
    if not isinstance(raw, dict) or not isinstance(raw.get("requests"), list):
        raise PlanDirError(f"{path}: expected {{\"plan_hash\": ..., \"requests\": [...]}}; the control file is corrupt "
                           "(move it aside and pause or resume again)")
    if raw.get("plan_hash") != plan_hash:
        raise PlanDirError(f"{path}: plan_hash: the requests are for plan {raw.get('plan_hash')!r}, but this directory's "
                           f"plan hashes to {plan_hash}; refusing to obey another plan's requests")
    requests = []
    for i, item in enumerate(raw["requests"]):
        try:
            action = ControlAction(item["action"])
            fields = {k: item[k] for k in ("by", "at", "via")}
        except (TypeError, KeyError, ValueError):
            raise PlanDirError(f"{path}: requests[{i}]: expected action pause|resume|stop with by, at and via, got {item!r}; "
                               "the control file is corrupt") from None
        if not all(isinstance(v, str) for v in fields.values()):
            raise PlanDirError(f"{path}: requests[{i}]: by, at and via must be strings; the control file is corrupt")
        requests.append(ControlRequest(action, **fields))
    return Control(plan_hash, tuple(requests))


@contextmanager
def _locked(plan_dir: Path) -> Iterator[None]:
    # Two operators clicking at once must both be recorded: serialise read-append-replace on the
    # plan directory itself (no lock file to leave behind).
    fd = os.open(plan_dir, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def request(plan_dir: Path, action: ControlAction | str, by: str | None = None, via: str = "cli",
            now: datetime | None = None) -> Control:
    """Record a request for the plan in ``plan_dir`` (whose integrity is checked first)."""
    plan_dir = Path(plan_dir)
    try:
        action = ControlAction(action)
    except ValueError:
        raise PlanDirError(f"action: expected pause, resume or stop, got {action!r}") from None
    who = " ".join((by or os_user()).split())[:_MAX_NAME] or "unknown"
    # The plan as planned (a request for an edited plan steers nothing). Not its approval: an operator may pause a
    # plan before approving it, so that it waits once approved; a request never touches the cluster itself.
    _, plan_hash = verify_plan(plan_dir)
    at = (now or datetime.now(UTC)).astimezone(UTC).isoformat(timespec="seconds")
    with _locked(plan_dir):
        current = read_control(plan_dir, plan_hash)
        if len(current.requests) >= MAX_REQUESTS:
            raise PlanDirError(f"{plan_dir / CONTROL_FILE}: already holds {MAX_REQUESTS} requests; refusing more")
        updated = Control(plan_hash, (*current.requests, ControlRequest(action, who, at, via)))
        atomic_write_json(plan_dir / CONTROL_FILE, _as_json(updated))
    return updated


def _as_json(control: Control) -> dict[str, Any]:
    return {"plan_hash": control.plan_hash, "requests": [r.as_json() for r in control.requests]}
