"""May the executor start a move now? The operator's requests (control.py) and the windows (windows.py).

The executor asks ``before_move(estimated_seconds)`` before it starts work (a batch, or one move of
a continuous schedule) and ``while_moving()`` on every progress poll. The answer is a typed ``Hold``
or None (go on). The gate never touches the cluster; the executor decides what a hold means:

* before a move: PAUSED, STOPPED, OUTSIDE_WINDOW or WINDOW_TOO_SHORT all mean "start nothing, let what
  runs finish, restore throttles, record progress, and come back at ``resume_at`` (a window) or after
  an operator's resume";
* while moving: STOPPED means cancel the moves in flight; WINDOW_OVERRUN (the window closed more than
  the grace period ago) means cancel them as a stall is cancelled. A pause lets them finish.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import Enum
from pathlib import Path
from typing import Any

from kafka_rebalance.executor.control import RunState, read_control
from kafka_rebalance.executor.windows import WindowMode, WindowPolicy
from kafka_rebalance.units import human_seconds


class HoldReason(str, Enum):
    PAUSED = "paused"
    STOPPED = "stopped"
    OUTSIDE_WINDOW = "outside-window"  # no window is open now
    WINDOW_TOO_SHORT = "window-too-short"  # a window is open, but the move would not end before it closes
    WINDOW_OVERRUN = "window-overrun"  # moves still in flight past the window's end plus the grace period


@dataclass(frozen=True)
class Hold:
    reason: HoldReason
    detail: str  # for people: who paused, which window, when it reopens
    resume_at: datetime | None = None  # the next window's opening; None: when an operator resumes (or never)

    @property
    def waits_for_operator(self) -> bool:
        return self.reason in (HoldReason.PAUSED, HoldReason.STOPPED)

    def to_dict(self) -> dict[str, Any]:
        return {"reason": self.reason.value, "detail": self.detail,
                "resume_at": self.resume_at.isoformat(timespec="seconds") if self.resume_at else None}


def wall_clock() -> datetime:
    return datetime.now(UTC)


class ExecutionGate:
    def __init__(self, plan_dir: Path, plan_hash: str, policy: WindowPolicy, *, margin: timedelta = timedelta(minutes=5),
                 grace: timedelta = timedelta(minutes=10), clock: Callable[[], datetime] = wall_clock) -> None:
        self.plan_dir, self.plan_hash, self.policy = Path(plan_dir), plan_hash, policy
        self.margin, self.grace, self.clock = margin, grace, clock
        self._window_end: datetime | None = None  # the end of the window the moves in flight started in

    @classmethod
    def unrestricted(cls, plan_dir: Path, plan_hash: str) -> ExecutionGate:
        """Operators' requests only: any time is inside the window."""
        return cls(plan_dir, plan_hash, WindowPolicy(WindowMode.NOW))

    def _operator_hold(self) -> Hold | None:
        control = read_control(self.plan_dir, self.plan_hash)
        last = control.last
        if control.state is RunState.RUNNING or last is None:
            return None
        reason = HoldReason.STOPPED if control.state is RunState.STOPPED else HoldReason.PAUSED
        return Hold(reason, f"{last.action.value} by {last.by} at {last.at} (via {last.via}); waiting for a resume")

    def before_move(self, estimated_seconds: float | None) -> Hold | None:
        hold = self._operator_hold()
        if hold is not None:
            return hold
        now = self.clock()
        seconds = float(estimated_seconds or 0.0)
        if self.policy.may_start(now, seconds, self.margin):
            window = self.policy.current(now)
            self._window_end = None if window is None or self.policy.unrestricted else window.end
            return None
        current = self.policy.current(now)
        if current is None:
            nxt = self.policy.next_opening(now)
            when = nxt.start if nxt else None
            return Hold(HoldReason.OUTSIDE_WINDOW, f"no window open ({self.policy.describe()}); "
                        + (f"next opens {_iso(when)}" if when else "no window opens again"), when)
        # Open, but too short for this move: wait for the window after this one.
        later = next((iv for iv in self.policy.intervals(now) if iv.start > current.end), None)
        need = f"about {human_seconds(seconds)} plus a {human_seconds(self.margin.total_seconds())} margin"
        if later is not None and later.start + timedelta(seconds=seconds) + self.margin > later.end:
            # Waiting would not help: the executor reports this instead of deferring forever.
            return Hold(HoldReason.WINDOW_TOO_SHORT, f"the next move needs {need}, longer than the next window "
                        f"({later.iso()}); lengthen the windows, lower the batch size or run with window=now")
        when = later.start if later else None
        return Hold(HoldReason.WINDOW_TOO_SHORT, f"the window closes {_iso(current.end)} and the next move needs {need}; "
                    + (f"next window opens {_iso(when)}" if when else "no window opens again"), when)

    def watch_in_flight(self, started_at: datetime | None) -> None:
        """Moves a killed run submitted are resumed, not started: the overrun check counts from the end of
        the window they started in (from now when that is unknown or there are no windows)."""
        window = self.policy.current(started_at) if started_at is not None else None
        self._window_end = None if self.policy.unrestricted else (window.end if window is not None else self.clock())

    def while_moving(self) -> Hold | None:
        control = read_control(self.plan_dir, self.plan_hash)
        if control.state is RunState.STOPPED and control.last is not None:
            last = control.last
            return Hold(HoldReason.STOPPED, f"stop by {last.by} at {last.at} (via {last.via})")
        if self._window_end is not None and self.clock() > self._window_end + self.grace:
            return Hold(HoldReason.WINDOW_OVERRUN, f"the window closed {_iso(self._window_end)} and the "
                        f"{human_seconds(self.grace.total_seconds())} grace period has passed")
        return None


def _iso(at: datetime | None) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if at else "never"
