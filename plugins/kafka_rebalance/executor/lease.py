"""One run per plan: a lease, recorded in the ledger, that every command acting on the cluster holds.

Two ``execute`` runs of one plan would both restore "leftover" throttles while the other is still
moving, and both submit; a ``cancel`` beside a run would undo it under its feet. So a command that
acts on the cluster holds the plan's lease for as long as it runs:

* an exclusive ``flock`` on the plan directory's lease file: the kernel releases it when its holder
  exits, however it exits (SIGKILL included), so on this host a lease whose lock is free is proven
  abandoned, and a lock that is taken is proven held;
* the holder (host, pid, command, and for an Airflow task its task instance) written to the ledger,
  so a refusal names it, ``status`` can show it, and a holder on another host sharing the directory is
  seen. That one cannot be proven gone from here: it is taken over only by the same Airflow task
  instance (a deferred task resumed by a new worker) or when the operator says so (``take_over``).
"""

from __future__ import annotations

import fcntl
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.executor.ledger import Ledger
from kafka_rebalance.plan_dir import LEASE_FILE


class LeaseHeld(RebalanceError):
    """Another run holds the plan: the message names it."""


@dataclass(frozen=True, slots=True)
class Holder:
    host: str
    pid: int
    command: str
    since: str
    owner: str | None = None  # an Airflow task instance (dag/run/task): the same one may resume elsewhere

    def to_dict(self) -> dict[str, Any]:
        return {"host": self.host, "pid": self.pid, "command": self.command, "since": self.since, "owner": self.owner}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Holder:
        owner = raw.get("owner")
        return cls(str(raw["host"]), int(raw["pid"]), str(raw.get("command", "?")), str(raw.get("since", "?")),
                   owner if isinstance(owner, str) else None)

    def describe(self) -> str:
        who = f" ({self.owner})" if self.owner else ""
        return f"`{self.command}` (pid {self.pid} on {self.host}{who}, since {self.since})"


def lease_abandoned(raw: Any) -> bool:
    """Whether a ledger's recorded lease (its ``lease`` field) is proven abandoned without acquiring anything.

    Proof needs the holder to be of this host and its pid to name no process: a run that exits cleanly clears its
    record, so this is a crash (SIGKILL, a lost worker). A pid that names a live process reads as held, even if the
    number was reused: never report a run gone that may not be. A holder on another host cannot be judged here.
    """
    if not isinstance(raw, dict):
        return False
    try:
        holder = Holder.from_dict(raw)
    except (KeyError, TypeError, ValueError):
        return False
    if holder.host != socket.gethostname():
        return False
    try:
        os.kill(holder.pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # another user's live process
        return False
    return False


def _recorded(plan_dir: Path, plan_hash: str) -> Holder | None:
    try:
        raw = Ledger.open(plan_dir, plan_hash).data.get("lease")
    except RebalanceError:
        return None
    return Holder.from_dict(raw) if isinstance(raw, dict) else None


@contextmanager
def plan_lease(plan_dir: Path, plan_hash: str, command: str, *, owner: str | None = None,
               take_over: bool = False) -> Iterator[Holder]:
    """Hold the plan's lease for the block; LeaseHeld (one line naming the holder) when another run holds it."""
    plan_dir = Path(plan_dir)
    fd = os.open(plan_dir / LEASE_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _recorded(plan_dir, plan_hash)
            raise LeaseHeld(f"{plan_dir}: in use by {holder.describe() if holder else 'another run on this host'}; "
                            "one run acts on a plan at a time: wait for it to end, or stop it "
                            f"(kafka-rebalance stop --plan {plan_dir})") from None
        me = Holder(socket.gethostname(), os.getpid(), command, datetime.now(UTC).isoformat(timespec="seconds"), owner)
        ledger = Ledger.open(plan_dir, plan_hash)
        previous = _recorded(plan_dir, plan_hash) if ledger.path.exists() else None
        if previous is not None:
            same_task = owner is not None and previous.owner == owner
            if previous.host != me.host and not same_task and not take_over:
                raise LeaseHeld(f"{plan_dir}: in use by {previous.describe()}, on another host, which this host cannot "
                                "prove gone; if it is, run again with --take-over-lease")
            # On this host the free lock proves the holder exited; elsewhere, the same task or the operator says so.
            why = "it exited" if previous.host == me.host else ("the same task resumed" if same_task else "taken over")
            ledger.event(f"{me.since} lease of {previous.describe()} taken by {me.describe()}: {why}")
        ledger.data["lease"] = me.to_dict()
        ledger.save()
        try:
            yield me
        finally:
            # Read again: the run saved its own ledger (or a re-arm started a new one) meanwhile. A ledger that
            # cannot be read now keeps its record; the free lock tells the next run on this host it ended.
            try:
                ledger = Ledger.open(plan_dir, plan_hash)
            except RebalanceError:
                pass
            else:
                current = ledger.data.get("lease")
                if isinstance(current, dict) and current.get("pid") == me.pid and current.get("host") == me.host:
                    ledger.data["lease"] = None
                    ledger.save()
    finally:
        os.close(fd)  # releases the flock
