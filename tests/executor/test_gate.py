"""The execution gate's answers (kafka_rebalance.executor.gate), on a clock the test sets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kafka_rebalance.executor.control import request
from kafka_rebalance.executor.gate import ExecutionGate, HoldReason
from kafka_rebalance.executor.windows import Window, policy
from kafka_rebalance.plan_dir import verify_plan
from kafka_rebalance.snapshot import load_snapshot
from tests.support.plans import approve, move_one_replica, write_plan

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "sample-cluster.json"
UTC = UTC
HOURLY = [Window("0 * * * *", timedelta(minutes=30))]  # hh:00-hh:30


class Clock:
    def __init__(self, at: str) -> None:
        self.now = datetime.fromisoformat(at).replace(tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    snap = load_snapshot(SAMPLE)
    return approve(write_plan(tmp_path / "plan", snap, [move_one_replica(snap, 1)]))


def gate(plan: Path, clock: Clock, windows=HOURLY, margin: int = 60, grace: int = 120) -> ExecutionGate:
    return ExecutionGate(plan, verify_plan(plan)[1], policy("configured", windows), margin=timedelta(seconds=margin),
                         grace=timedelta(seconds=grace), clock=clock)


def test_inside_a_window_with_room_nothing_holds(plan: Path) -> None:
    g = gate(plan, Clock("2026-11-24T10:00:00"))
    assert g.before_move(1740) is None  # 29 min + 1 min margin = exactly the 30-minute window


def test_outside_a_window_the_hold_names_the_next_opening(plan: Path) -> None:
    hold = gate(plan, Clock("2026-11-24T10:45:00")).before_move(60)
    assert hold is not None and hold.reason is HoldReason.OUTSIDE_WINDOW
    assert hold.resume_at == datetime(2026, 11, 24, 11, 0, tzinfo=UTC)
    assert hold.detail == "no window open (configured: 0 * * * * for 30m (UTC)); next opens 2026-11-24T11:00:00Z"
    assert not hold.waits_for_operator


def test_too_short_a_rest_of_window_waits_for_the_next(plan: Path) -> None:
    hold = gate(plan, Clock("2026-11-24T10:20:00")).before_move(600)  # 10 min + 1 min margin > 10 min left
    assert hold is not None and hold.reason is HoldReason.WINDOW_TOO_SHORT
    assert hold.resume_at == datetime(2026, 11, 24, 11, 0, tzinfo=UTC)
    assert hold.detail == ("the window closes 2026-11-24T10:30:00Z and the next move needs about 10m00s plus a 1m00s "
                           "margin; next window opens 2026-11-24T11:00:00Z")


def test_a_move_longer_than_the_next_window_is_not_waited_for(plan: Path) -> None:
    hold = gate(plan, Clock("2026-11-24T10:20:00")).before_move(1800)  # 30 min + margin never fits
    assert hold is not None and hold.resume_at is None
    assert "longer than the next window (2026-11-24T11:00:00Z/2026-11-24T11:30:00Z)" in hold.detail


def test_operator_requests_come_first_and_name_who(plan: Path) -> None:
    g = gate(plan, Clock("2026-11-24T10:00:00"))
    request(plan, "pause", by="ann", now=datetime(2026, 11, 24, 9, 59, tzinfo=UTC))
    hold = g.before_move(1)
    assert hold is not None and hold.reason is HoldReason.PAUSED and hold.waits_for_operator
    assert hold.detail == "pause by ann at 2026-11-24T09:59:00+00:00 (via cli); waiting for a resume"
    assert g.while_moving() is None  # a pause lets the moves in flight finish
    request(plan, "stop", by="bob")
    assert g.before_move(1).reason is HoldReason.STOPPED
    assert g.while_moving().reason is HoldReason.STOPPED  # a stop cancels them
    request(plan, "resume", by="ann")
    assert g.before_move(1) is None and g.while_moving() is None


def test_overrun_counts_from_the_window_the_moves_started_in_plus_the_grace(plan: Path) -> None:
    clock = Clock("2026-11-24T10:00:00")
    g = gate(plan, clock)
    assert g.before_move(60) is None
    clock.now = datetime(2026, 11, 24, 10, 32, tzinfo=UTC)  # closed at 10:30, grace until 10:32
    assert g.while_moving() is None
    clock.now += timedelta(seconds=1)
    hold = g.while_moving()
    assert hold is not None and hold.reason is HoldReason.WINDOW_OVERRUN
    assert hold.detail == "the window closed 2026-11-24T10:30:00Z and the 2m00s grace period has passed"


def test_moves_a_killed_run_started_are_watched_from_their_own_window(plan: Path) -> None:
    clock = Clock("2026-11-24T10:31:00")
    g = gate(plan, clock)
    g.watch_in_flight(datetime(2026, 11, 24, 10, 5, tzinfo=UTC))  # started in the 10:00-10:30 window
    assert g.while_moving() is None  # 10:31 is within the grace
    clock.now = datetime(2026, 11, 24, 10, 33, tzinfo=UTC)
    assert g.while_moving().reason is HoldReason.WINDOW_OVERRUN
    g.watch_in_flight(None)  # start unknown: the grace counts from now
    assert g.while_moving() is None


def test_without_windows_only_operators_hold(plan: Path) -> None:
    g = ExecutionGate.unrestricted(plan, verify_plan(plan)[1])
    assert g.before_move(10**9) is None and g.while_moving() is None
