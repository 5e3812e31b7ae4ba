"""Maintenance windows: when an execution may start moves.

A cluster's windows come from ``config/clusters.yaml`` (each a cron expression for its start, a
duration and a time zone: ``{cron: "0 1 * * 1-5", duration: 4h, timezone: UTC}`` is weekdays
01:00-05:00 UTC). A run may override them with ``now`` (any time), ``configured`` (the file's
windows; none configured means any time) or one explicit ISO 8601 interval
(``2026-11-25T01:00Z/2026-11-25T05:00Z`` or ``2026-11-25T01:00Z/PT4H``).

Overlapping or touching windows form one interval: a move may run across the seam. Cron is
evaluated in the window's own time zone, so "01:00 Europe/Berlin" stays 01:00 local across DST.
Everything here is pure; the executor asks ``may_start`` before each move and the DAG asks
``next_opening`` for when to come back.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import Enum
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterBadDateError, croniter
from pydantic import TypeAdapter, ValidationError

from kafka_rebalance.errors import RebalanceError

UTC = UTC

# An interval is merged with the next one only up to this span: windows that cover all time (a
# per-minute cron with a minute's duration) would otherwise be merged forever. No single move runs
# for a week, so a longer open stretch is reported in week-long pieces.
MAX_SPAN = timedelta(days=8)
MAX_DURATION = timedelta(days=366)
# How far ahead to look for the next window: a yearly cron (Feb 29) is the sparsest that matters.
HORIZON = timedelta(days=5 * 366)
FOREVER = datetime(9999, 12, 31, tzinfo=UTC)
# Explicit instants stay far from datetime's limits, so adding a window's duration cannot overflow.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9000, 1, 1, tzinfo=UTC)
_COMPACT = re.compile(r"(?:(\d{1,6})d)?(?:(\d{1,6})h)?(?:(\d{1,7})m)?(?:(\d{1,9})s)?")


class WindowError(RebalanceError):
    """A window, a duration or a window override is malformed; the message names field and value."""


def parse_duration(text: object, field: str) -> timedelta:
    """``4h``, ``90m``, ``1h30m``, ``45s``, ``2d`` or ISO 8601 (``PT4H``); strictly positive."""
    if not isinstance(text, str) or not text.strip():
        raise WindowError(f"{field}: expected a duration such as 4h, 90m or PT4H, got {text!r}")
    value = text.strip()
    m = _COMPACT.fullmatch(value)
    if m and any(m.groups()):
        d, h, mi, s = (int(g or 0) for g in m.groups())
        delta = timedelta(days=d, hours=h, minutes=mi, seconds=s)
    elif value.upper().startswith("P"):
        try:
            delta = TypeAdapter(timedelta).validate_python(value.upper())
        except ValidationError:
            raise WindowError(f"{field}: not an ISO 8601 duration: {text!r}") from None
    else:
        raise WindowError(f"{field}: expected a duration such as 4h, 90m or PT4H, got {text!r}")
    if delta <= timedelta(0):
        raise WindowError(f"{field}: a duration must be positive, got {text!r}")
    if delta > MAX_DURATION:
        raise WindowError(f"{field}: at most 366 days, got {text!r}")
    return delta


def parse_instant(text: str, field: str) -> datetime:
    """An ISO 8601 instant with an explicit offset or ``Z`` (a naive time would be a silent guess)."""
    try:
        at = datetime.fromisoformat(text.strip())
    except ValueError:
        raise WindowError(f"{field}: not an ISO 8601 date-time: {text!r}") from None
    if at.tzinfo is None:
        raise WindowError(f"{field}: {text!r} has no time zone; add Z or an offset such as +01:00")
    try:
        utc = at.astimezone(UTC)
        if not EARLIEST <= utc <= LATEST:
            raise OverflowError
    except OverflowError:
        raise WindowError(f"{field}: {text!r} is out of range (years 1970 to 9000)") from None
    return utc


def zone(name: object, field: str) -> ZoneInfo:
    if not isinstance(name, str) or not name:
        raise WindowError(f"{field}: expected an IANA time zone such as UTC or Europe/Berlin, got {name!r}")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise WindowError(f"{field}: unknown time zone {name!r} (use an IANA name such as UTC or Europe/Berlin)") from None


def check_cron(expr: object, field: str) -> str:
    if not isinstance(expr, str) or len(expr.split()) != 5 or not croniter.is_valid(expr):
        raise WindowError(f"{field}: not a 5-field cron expression: {expr!r}")
    try:  # valid syntax that never fires (Feb 31st) would otherwise fail only when a run asks for a window
        croniter(expr, datetime(2000, 1, 1, tzinfo=UTC)).get_next(datetime)
    except CroniterBadDateError:
        raise WindowError(f"{field}: {expr!r} never fires (no such date)") from None
    return expr


@dataclass(frozen=True)
class Window:
    """Windows open at each cron time (in ``timezone``) and stay open for ``duration``."""

    cron: str
    duration: timedelta
    timezone: str = "UTC"

    def starts(self, after: datetime) -> Iterator[datetime]:
        """Start times strictly after ``after`` (UTC), in order, up to the horizon."""
        tz = ZoneInfo(self.timezone)
        it = croniter(self.cron, after.astimezone(tz))
        limit = after + HORIZON
        while True:
            try:
                start = it.get_next(datetime).astimezone(UTC)
            except CroniterBadDateError:  # no further date (checked when the window was configured)
                return
            if start > limit:
                return
            yield start

    def describe(self) -> str:
        return f"{self.cron} for {_human(self.duration)} ({self.timezone})"


@dataclass(frozen=True)
class Interval:
    start: datetime
    end: datetime

    def iso(self) -> str:
        return f"{_iso(self.start)}/{_iso(self.end)}"


class WindowMode(str, Enum):
    NOW = "now"
    CONFIGURED = "configured"
    INTERVAL = "interval"


@dataclass(frozen=True)
class Eta:
    """When the remaining work would finish if each window were used to its end less the margin."""

    windows: int | None  # how many windows it needs (the current one counts); None: not within the horizon
    finish: datetime | None


@dataclass(frozen=True)
class WindowPolicy:
    mode: WindowMode
    windows: tuple[Window, ...] = ()
    interval: Interval | None = None

    @property
    def unrestricted(self) -> bool:
        return self.mode is WindowMode.NOW or (self.mode is WindowMode.CONFIGURED and not self.windows)

    def intervals(self, at: datetime) -> Iterator[Interval]:
        """The open intervals that end after ``at``, in order (the first may already be open)."""
        if self.unrestricted:
            yield Interval(at, FOREVER)
        elif self.mode is WindowMode.INTERVAL:
            assert self.interval is not None
            if self.interval.end > at:
                yield self.interval
        else:
            yield from _merged(self.windows, at)

    def current(self, at: datetime) -> Interval | None:
        """The interval open at ``at``, if any."""
        first = next(self.intervals(at), None)
        return first if first is not None and first.start <= at else None

    def next_opening(self, at: datetime) -> Interval | None:
        """The interval open now, or else the next one to open; None if none ever will."""
        return next(self.intervals(at), None)

    def may_start(self, at: datetime, seconds: float, margin: timedelta) -> bool:
        """A move estimated at ``seconds`` may start at ``at`` if it ends ``margin`` before the window closes."""
        now = self.current(at)
        return now is not None and at + timedelta(seconds=max(0.0, seconds)) + margin <= now.end

    def eta(self, at: datetime, seconds: float, margin: timedelta) -> Eta:
        left = timedelta(seconds=max(0.0, seconds))
        if left == timedelta(0):
            return Eta(0, at)
        for count, iv in enumerate(self.intervals(at), start=1):
            begin = max(iv.start, at)
            usable = iv.end - margin - begin
            if usable >= left:
                return Eta(count, begin + left)
            left -= max(usable, timedelta(0))
            if count >= 10_000:
                break
        return Eta(None, None)

    def describe(self) -> str:
        if self.mode is WindowMode.NOW:
            return "now (no window restriction)"
        if self.mode is WindowMode.INTERVAL:
            assert self.interval is not None
            return f"interval {self.interval.iso()}"
        if not self.windows:
            return "configured: no windows, so any time"
        return "configured: " + "; ".join(w.describe() for w in self.windows)


def _merged(windows: Iterable[Window], at: datetime) -> Iterator[Interval]:
    # Each window's starts from (at - its duration) on catch a window already open at `at`; a
    # heap-merge of all windows' (start, end) pairs in start order lets touching ones join.
    streams = [_spans(w, at) for w in windows]
    current: list[datetime] | None = None
    for start, end in heapq.merge(*streams):
        if end <= at:
            continue
        if current is None:
            current = [start, end]
        elif start <= current[1] and current[1] - current[0] < MAX_SPAN:
            current[1] = max(current[1], end)
        else:
            yield Interval(current[0], current[1])
            current = [start, end]
    if current is not None:
        yield Interval(current[0], current[1])


def _spans(window: Window, at: datetime) -> Iterator[tuple[datetime, datetime]]:
    for start in window.starts(at - window.duration):
        yield start, start + window.duration


def window_from_config(raw: object, field: str) -> Window:
    """One entry of a cluster's ``windows:`` list (already a mapping from YAML)."""
    if not isinstance(raw, dict):
        raise WindowError(f"{field}: expected {{cron, duration, timezone}}, got {raw!r}")
    unknown = sorted(set(raw) - {"cron", "duration", "timezone"})
    if unknown:
        raise WindowError(f"{field}: unknown key(s) {', '.join(map(str, unknown))} (allowed: cron, duration, timezone)")
    for key in ("cron", "duration"):
        if key not in raw:
            raise WindowError(f"{field}.{key}: missing")
    tz = raw.get("timezone", "UTC")
    zone(tz, f"{field}.timezone")
    return Window(check_cron(raw["cron"], f"{field}.cron"), parse_duration(raw["duration"], f"{field}.duration"), tz)


def policy(override: str | None, configured: Iterable[Window], field: str = "window") -> WindowPolicy:
    """A run's window policy: ``now``, ``configured`` (also when empty or None) or ``START/END|DURATION``."""
    text = (override or "").strip()
    if text in ("", WindowMode.CONFIGURED.value):
        return WindowPolicy(WindowMode.CONFIGURED, tuple(configured))
    if text == WindowMode.NOW.value:
        return WindowPolicy(WindowMode.NOW)
    if "/" not in text:
        raise WindowError(f"{field}: expected 'now', 'configured' or an ISO interval START/END or START/DURATION, got {text!r}")
    first, second = (part.strip() for part in text.split("/", 1))
    start = parse_instant(first, f"{field} (start)")
    end = start + parse_duration(second, f"{field} (duration)") if second.upper().startswith("P") else parse_instant(second, f"{field} (end)")
    if end <= start:
        raise WindowError(f"{field}: the interval ends ({_iso(end)}) before it starts ({_iso(start)})")
    return WindowPolicy(WindowMode.INTERVAL, interval=Interval(start, end))


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _human(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    parts = [(seconds // 86400, "d"), (seconds % 86400 // 3600, "h"), (seconds % 3600 // 60, "m"), (seconds % 60, "s")]
    return "".join(f"{n}{u}" for n, u in parts if n) or "0s"
