"""Maintenance windows (kafka_rebalance.executor.windows): every expected instant below is worked out by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kafka_rebalance.executor.windows import (
    Eta,
    Interval,
    Window,
    WindowError,
    WindowMode,
    parse_duration,
    policy,
    window_from_config,
)

UTC = UTC
WEEKDAYS = Window("0 1 * * 1-5", timedelta(hours=4))  # Mon-Fri 01:00-05:00 UTC


def t(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


# 2026-11-24 is a Tuesday; 2026-11-27 a Friday, 2026-11-30 a Monday.
@pytest.mark.parametrize(("at", "open_now", "next_start", "next_end"), [
    ("2026-11-24T00:59:59", False, "2026-11-24T01:00:00", "2026-11-24T05:00:00"),
    ("2026-11-24T01:00:00", True, "2026-11-24T01:00:00", "2026-11-24T05:00:00"),
    ("2026-11-24T04:59:59", True, "2026-11-24T01:00:00", "2026-11-24T05:00:00"),
    ("2026-11-24T05:00:00", False, "2026-11-25T01:00:00", "2026-11-25T05:00:00"),  # the end is exclusive
    ("2026-11-27T06:00:00", False, "2026-11-30T01:00:00", "2026-11-30T05:00:00"),  # Friday evening: Monday
])
def test_weekday_window(at, open_now, next_start, next_end) -> None:
    p = policy("configured", [WEEKDAYS])
    assert (p.current(t(at)) is not None) is open_now
    assert p.next_opening(t(at)) == Interval(t(next_start), t(next_end))


def test_cron_is_read_in_the_windows_own_time_zone_across_dst() -> None:
    berlin = Window("0 1 * * *", timedelta(hours=2), "Europe/Berlin")
    p = policy(None, [berlin])
    # 01:00 CET (UTC+1) before 2027-03-28, 01:00 CEST (UTC+2) after.
    assert p.next_opening(t("2027-03-27T12:00:00")).start == t("2027-03-28T00:00:00")
    assert p.next_opening(t("2027-03-28T12:00:00")).start == t("2027-03-28T23:00:00")


def test_touching_and_overlapping_windows_are_one_interval() -> None:
    a = Window("0 1 * * *", timedelta(hours=2))   # 01:00-03:00
    b = Window("0 3 * * *", timedelta(hours=1))   # 03:00-04:00, touches a
    c = Window("30 3 * * *", timedelta(hours=1))  # 03:30-04:30, overlaps b
    p = policy("configured", [a, b, c])
    assert p.current(t("2026-11-24T02:00:00")) == Interval(t("2026-11-24T01:00:00"), t("2026-11-24T04:30:00"))


def test_windows_covering_all_time_do_not_loop_forever() -> None:
    p = policy("configured", [Window("* * * * *", timedelta(minutes=1))])
    iv = p.current(t("2026-11-24T00:00:30"))
    assert iv is not None and iv.start == t("2026-11-24T00:00:00") and iv.end - iv.start >= timedelta(days=8)


def test_may_start_only_if_the_move_ends_a_margin_before_the_window_closes() -> None:
    p = policy("configured", [WEEKDAYS])
    margin = timedelta(minutes=5)
    at = t("2026-11-24T04:00:00")  # 60 minutes left; 55 usable after the margin
    assert p.may_start(at, 55 * 60, margin)
    assert not p.may_start(at, 55 * 60 + 1, margin)
    assert not p.may_start(t("2026-11-24T06:00:00"), 1, margin)  # closed


def test_eta_counts_windows_and_uses_each_to_its_end_less_the_margin() -> None:
    p = policy("configured", [WEEKDAYS])
    margin = timedelta(minutes=10)
    # From Tue 04:00: 50 min usable today, then 3h50m on Wed. 5 hours of work = 50m + 3h50m + 20m:
    # Tuesday, Wednesday, and Thursday 01:00 + 20 min.
    assert p.eta(t("2026-11-24T04:00:00"), 5 * 3600, margin) == Eta(3, t("2026-11-26T01:20:00"))
    assert p.eta(t("2026-11-24T04:00:00"), 0, margin) == Eta(0, t("2026-11-24T04:00:00"))


def test_now_and_an_empty_configuration_are_unrestricted() -> None:
    at = t("2026-11-24T12:00:00")
    for p in (policy("now", [WEEKDAYS]), policy("configured", []), policy(None, [])):
        assert p.unrestricted and p.may_start(at, 10 * 86400, timedelta(hours=1))
    assert policy("now", [WEEKDAYS]).mode is WindowMode.NOW


@pytest.mark.parametrize(("text", "start", "end"), [
    ("2026-11-25T01:00:00Z/2026-11-25T05:00:00Z", "2026-11-25T01:00:00", "2026-11-25T05:00:00"),
    ("2026-11-25T02:00:00+01:00/PT4H", "2026-11-25T01:00:00", "2026-11-25T05:00:00"),
    (" 2026-11-25T01:00Z / 2026-11-25T01:01Z ", "2026-11-25T01:00:00", "2026-11-25T01:01:00"),
])
def test_explicit_interval(text, start, end) -> None:
    p = policy(text, [WEEKDAYS])
    assert p.mode is WindowMode.INTERVAL and p.interval == Interval(t(start), t(end))
    assert p.next_opening(t(end)) is None  # it never opens again


@pytest.mark.parametrize(("text", "message"), [
    ("later", "window: expected 'now', 'configured' or an ISO interval START/END or START/DURATION, got 'later'"),
    ("2026-11-25T01:00/PT1H", "window (start): '2026-11-25T01:00' has no time zone; add Z or an offset such as +01:00"),
    ("2026-11-25T05:00Z/2026-11-25T01:00Z", "window: the interval ends (2026-11-25T01:00:00Z) before it starts (2026-11-25T05:00:00Z)"),
    ("2026-13-25T01:00Z/PT1H", "window (start): not an ISO 8601 date-time: '2026-13-25T01:00Z'"),
    ("2026-11-25T01:00Z/PT0S", "window (duration): a duration must be positive, got 'PT0S'"),
    ("9999-12-31T23:59Z/PT1H", "window (start): '9999-12-31T23:59Z' is out of range (years 1970 to 9000)"),
    ("2026-11-25T01:00Z/0001-01-01T00:30+01:00", "window (end): '0001-01-01T00:30+01:00' is out of range (years 1970 to 9000)"),
])
def test_bad_overrides_are_one_line_naming_the_value(text, message) -> None:
    with pytest.raises(WindowError) as err:
        policy(text, [])
    assert str(err.value) == message


@pytest.mark.parametrize(("text", "seconds"), [
    ("4h", 4 * 3600), ("90m", 5400), ("1h30m", 5400), ("45s", 45), ("2d", 172800), ("PT4H", 14400), ("pt1m", 60),
])
def test_durations(text, seconds) -> None:
    assert parse_duration(text, "d") == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "4", "h", "-1h", "4 hours", "0m", "367d", "P1Y2"])
def test_bad_durations(text) -> None:
    with pytest.raises(WindowError, match="^d: "):
        parse_duration(text, "d")


@pytest.mark.parametrize(("raw", "message"), [
    ({"cron": "0 1 * *", "duration": "1h"}, "windows[0].cron: not a 5-field cron expression: '0 1 * *'"),
    ({"cron": "0 25 * * *", "duration": "1h"}, "windows[0].cron: not a 5-field cron expression: '0 25 * * *'"),
    ({"cron": "0 1 * * *"}, "windows[0].duration: missing"),
    ({"cron": "0 0 31 2 *", "duration": "1h"}, "windows[0].cron: '0 0 31 2 *' never fires (no such date)"),
    ("0 1 * * *", "windows[0]: expected {cron, duration, timezone}, got '0 1 * * *'"),
    ({"cron": "0 1 * * *", "duration": "1h", "timezone": 3}, "windows[0].timezone: expected an IANA time zone such as UTC or Europe/Berlin, got 3"),
    ({"cron": "0 1 * * *", "duration": "1h", "timezone": "Mars/Base"},
     "windows[0].timezone: unknown time zone 'Mars/Base' (use an IANA name such as UTC or Europe/Berlin)"),
    ({"cron": "0 1 * * *", "duration": "1h", "tz": "UTC"}, "windows[0]: unknown key(s) tz (allowed: cron, duration, timezone)"),
])
def test_bad_window_entries(raw, message) -> None:
    with pytest.raises(WindowError) as err:
        window_from_config(raw, "windows[0]")
    assert str(err.value) == message


def test_a_good_window_entry() -> None:
    assert window_from_config({"cron": "0 1 * * 1-5", "duration": "4h"}, "w") == WEEKDAYS


def test_descriptions_for_people() -> None:
    at = t("2026-11-24T00:00:00")
    assert policy("now", [WEEKDAYS]).describe() == "now (no window restriction)"
    assert policy("configured", []).describe() == "configured: no windows, so any time"
    assert policy("2026-11-25T01:00Z/PT1H30M", []).describe() == "interval 2026-11-25T01:00:00Z/2026-11-25T02:30:00Z"
    both = policy("configured", [WEEKDAYS, Window("30 22 * * 6", timedelta(days=1, hours=2, minutes=3, seconds=4), "Europe/Berlin")])
    assert both.describe() == "configured: 0 1 * * 1-5 for 4h (UTC); 30 22 * * 6 for 1d2h3m4s (Europe/Berlin)"
    assert Window("* * * * *", timedelta(seconds=45)).describe() == "* * * * * for 45s (UTC)"
    assert both.next_opening(at) == Interval(t("2026-11-24T01:00:00"), t("2026-11-24T05:00:00"))


def test_a_window_ending_exactly_now_is_closed_and_a_later_one_is_next() -> None:
    p = policy("configured", [Window("0 1 * * *", timedelta(hours=1)), Window("0 3 * * *", timedelta(hours=1))])
    assert p.current(t("2026-11-24T02:00:00")) is None
    assert p.next_opening(t("2026-11-24T02:00:00")) == Interval(t("2026-11-24T03:00:00"), t("2026-11-24T04:00:00"))
    assert [iv.start for iv in list(_first(p, t("2026-11-24T00:30:00"), 3))] == [
        t("2026-11-24T01:00:00"), t("2026-11-24T03:00:00"), t("2026-11-25T01:00:00")]


def _first(p, at, n):
    it = p.intervals(at)
    return [next(it) for _ in range(n)]


def test_eta_when_the_margin_eats_a_whole_window() -> None:
    # 10-minute windows every hour with a 15-minute margin: no window is usable, so no ETA.
    p = policy("configured", [Window("0 * * * *", timedelta(minutes=10))])
    assert p.eta(t("2026-11-24T00:00:00"), 60, timedelta(minutes=15)) == Eta(None, None)
    # A 5-minute margin leaves 5 usable minutes per window: 12 minutes of work need 3 windows,
    # the last one used for 2 minutes.
    assert p.eta(t("2026-11-24T00:00:00"), 12 * 60, timedelta(minutes=5)) == Eta(3, t("2026-11-24T02:02:00"))
    # Starting inside a window with less than the margin left: that window counts but gives nothing.
    assert p.eta(t("2026-11-24T00:08:00"), 60, timedelta(minutes=5)) == Eta(2, t("2026-11-24T01:01:00"))


def test_may_start_at_the_exact_boundaries() -> None:
    p = policy("2026-11-25T01:00Z/PT1H", [])
    assert not p.may_start(t("2026-11-25T00:59:59"), 1, timedelta(0))
    assert p.may_start(t("2026-11-25T01:00:00"), 3600, timedelta(0))
    assert not p.may_start(t("2026-11-25T01:00:00"), 3600.001, timedelta(0))
    assert p.may_start(t("2026-11-25T01:30:00"), -5, timedelta(0))  # a negative estimate counts as zero


def test_override_text_is_trimmed_and_case_sensitive() -> None:
    assert policy("  now ", [WEEKDAYS]).mode is WindowMode.NOW
    assert policy("", [WEEKDAYS]).windows == (WEEKDAYS,)
    with pytest.raises(WindowError):
        policy("NOW", [])


def test_touching_windows_merge_into_spans_of_eight_days_at_most() -> None:
    # A 24-hour window every midnight: back to back forever. Intervals are cut at 8 days so that a
    # plan always sees an end; the next interval starts where the previous stopped.
    p = policy("configured", [Window("0 0 * * *", timedelta(hours=24))])
    first, second = _first(p, t("2026-01-01T01:00:00"), 2)
    assert first == Interval(t("2026-01-01T00:00:00"), t("2026-01-09T00:00:00"))
    assert second.start == t("2026-01-09T00:00:00")


def test_the_last_window_within_the_horizon_is_not_lost() -> None:
    # Once a year for an hour: the five openings within five years, the last one included.
    starts = [iv.start for iv in policy("configured", [Window("0 0 1 1 *", timedelta(hours=1))]).intervals(t("2026-06-01T00:00:00"))]
    assert starts == [t(f"{y}-01-01T00:00:00") for y in range(2027, 2032)]


def test_an_eta_that_exactly_fills_a_window_ends_in_it() -> None:
    p = policy("2026-11-25T01:00Z/PT1H", [])
    assert p.eta(t("2026-11-25T01:00:00"), 3600, timedelta(0)) == Eta(1, t("2026-11-25T02:00:00"))
    assert p.eta(t("2026-11-25T01:00:00"), 3601, timedelta(0)) == Eta(None, None)


def test_a_zero_estimate_may_start_up_to_the_margin_before_the_close() -> None:
    p = policy("2026-11-25T01:00Z/PT1H", [])
    assert p.may_start(t("2026-11-25T01:30:00"), 0, timedelta(minutes=30))
    assert not p.may_start(t("2026-11-25T01:30:01"), 0, timedelta(minutes=30))


@pytest.mark.parametrize(("delta", "text"), [
    (timedelta(days=1), "1d"), (timedelta(hours=24, seconds=1), "1d1s"), (timedelta(hours=23, minutes=59, seconds=59), "23h59m59s"),
    (timedelta(minutes=60), "1h"), (timedelta(seconds=59), "59s"), (timedelta(0), "0s"),
])
def test_durations_for_people(delta: timedelta, text: str) -> None:
    assert Window("* * * * *", delta).describe() == f"* * * * * for {text} (UTC)"


def test_the_longest_duration_and_the_edges_of_time() -> None:
    assert parse_duration("366d", "d") == timedelta(days=366)
    with pytest.raises(WindowError, match=r"^d: at most 366 days, got '366d1s'$"):
        parse_duration("366d1s", "d")
    with pytest.raises(WindowError, match=r"^d: expected a duration such as 4h, 90m or PT4H, got None$"):
        parse_duration(None, "d")
    assert policy("1970-01-01T00:00:00Z/PT1H", []).interval == Interval(t("1970-01-01T00:00:00"), t("1970-01-01T01:00:00"))
    assert policy("2026-01-01T00:00:00Z/9000-01-01T00:00:00Z", []).interval.end == t("9000-01-01T00:00:00")
    for text, which in (("1969-12-31T23:59:59Z/PT1H", "start"), ("2026-01-01T00:00Z/9000-01-01T00:00:01Z", "end")):
        with pytest.raises(WindowError, match=rf"^window \({which}\): .* is out of range \(years 1970 to 9000\)$"):
            policy(text, [])


def test_an_interval_is_split_at_its_first_slash_and_may_not_be_empty() -> None:
    with pytest.raises(WindowError, match=r"^window \(duration\): not an ISO 8601 duration: 'PT1H/PT1H'$"):
        policy("2026-11-25T01:00Z/PT1H/PT1H", [])
    with pytest.raises(WindowError, match=r"^window: the interval ends \(2026-11-25T01:00:00Z\) before it starts \(2026-11-25T01:00:00Z\)$"):
        policy("2026-11-25T01:00Z/2026-11-25T01:00Z", [])


def test_window_entries_name_every_unknown_key_and_the_field_of_a_bad_value() -> None:
    with pytest.raises(WindowError, match=r"^w: unknown key\(s\) tz, zone \(allowed: cron, duration, timezone\)$"):
        window_from_config({"cron": "0 1 * * *", "duration": "1h", "zone": "UTC", "tz": "UTC"}, "w")
    with pytest.raises(WindowError, match=r"^w\.duration: expected a duration such as 4h, 90m or PT4H, got 'soon'$"):
        window_from_config({"cron": "0 1 * * *", "duration": "soon"}, "w")
    with pytest.raises(WindowError, match=r"^w\.cron: not a 5-field cron expression: 5$"):
        window_from_config({"cron": 5, "duration": "1h"}, "w")
