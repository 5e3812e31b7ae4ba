"""gather's produce rate from two samples of a log, and consumer traffic from two samples of the groups' committed
offsets, worked by hand (the real-Kafka measurement is in
tests/real_kafka/test_gather_measures_on_real_kafka.py)."""

from __future__ import annotations

import pytest

from kafka_rebalance.cluster.admin import TP, ClusterError
from kafka_rebalance.cluster.gather import (
    GROUPS_BYTES_OUT,
    NO_GROUPS_BYTES_OUT,
    SAMPLING_BYTES_OUT,
    GroupsUnread,
    LogEnd,
    consumer_rates,
    consumer_reads,
    gather_snapshot,
    produce_rate,
)
from kafka_rebalance.cluster.sim_admin import SimAdmin
from kafka_rebalance.snapshot import load_snapshot


@pytest.mark.parametrize(
    ("first", "second", "seconds", "rate"),
    [
        # Nothing left the log: the size delta. 6,000 bytes in 10 s.
        (LogEnd(0, 100, 10_000), LogEnd(0, 160, 16_000), 10.0, 600.0),
        # Idle: nothing written, nothing deleted.
        (LogEnd(5, 100, 10_000), LogEnd(5, 100, 10_000), 10.0, 0.0),
        # Retention deleted the first segment (offsets 0..49, 5,000 bytes) while 60 offsets were written:
        # the size delta says 1,000 bytes; 60 offsets x 100 bytes per offset (11,000 bytes over 110 offsets) is right.
        (LogEnd(0, 100, 10_000), LogEnd(50, 160, 11_000), 10.0, 600.0),
        # ...and when more was deleted than written the delta is negative; the offsets still count what was written.
        (LogEnd(0, 100, 10_000), LogEnd(80, 120, 4_000), 4.0, 500.0),
        # Compaction shrank the log without moving its start: 20 offsets written, at the bytes per offset
        # of the second sample (6,000 bytes over 120 offsets = 50 bytes per offset).
        (LogEnd(0, 100, 10_000), LogEnd(0, 120, 6_000), 2.0, 500.0),
        # Retention ran on an idle log: nothing written.
        (LogEnd(0, 100, 10_000), LogEnd(50, 100, 5_000), 10.0, 0.0),
    ],
    ids=["growing", "idle", "retention-while-writing", "retention-beyond-writing", "compacted", "retention-idle"],
)  # fmt: skip
def test_the_rate_is_what_was_written(first: LogEnd, second: LogEnd, seconds: float, rate: float) -> None:
    assert produce_rate(first, second, seconds) == pytest.approx(rate)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (LogEnd(0, 100, None), LogEnd(0, 160, 16_000)),  # the leader did not report its size
        (LogEnd(0, 100, 10_000), LogEnd(0, 90, 9_000)),  # truncated: an unclean election, or the topic re-created
        (LogEnd(0, 100, 10_000), LogEnd(160, 160, 0)),  # everything written was deleted already
    ],
    ids=["no-size", "truncated", "all-deleted"],
)
def test_a_rate_that_cannot_be_known_is_unknown_never_negative(first: LogEnd, second: LogEnd) -> None:
    assert produce_rate(first, second, 10.0) is None


def test_a_simulated_cluster_is_not_sampled(sample_snapshot_path) -> None:
    admin = SimAdmin.open(load_snapshot(sample_snapshot_path), None)
    with pytest.raises(ClusterError, match=r"^--rate-window: this cluster cannot be sampled \(a simulated cluster"):
        gather_snapshot(admin, "sim", 10)
    assert gather_snapshot(admin, "sim").rate_window_seconds is None


A, B = TP("orders", 0), TP("orders", 1)
# Both logs hold 100 bytes per offset: 20,000 bytes over offsets 100..300.
ENDS = {A: LogEnd(100, 300, 20_000), B: LogEnd(100, 300, 20_000)}


def test_consumer_traffic_is_the_offsets_each_group_committed_times_the_logs_bytes_per_offset() -> None:
    # Group g1 read 50 offsets of A and g2 30 of A in 10 s: 80 x 100 bytes / 10 s = 800 B/s. Nobody moved on B.
    first = {("g1", A): 150, ("g2", A): 200, ("g1", B): 120}
    second = {("g1", A): 200, ("g2", A): 230, ("g1", B): 120}
    assert consumer_rates(first, second, ENDS, 10.0) == {A: 800.0, B: 0.0}


def test_a_group_seen_in_one_sample_only_is_not_counted_and_a_reset_leaves_the_partition_unknown() -> None:
    # g3 committed A for the first time in the window: where it started is not known, so it adds nothing;
    # g1 reset B back to 110: what it re-read is not known, so B is unknown rather than guessed.
    first = {("g1", A): 150, ("g1", B): 150}
    second = {("g1", A): 160, ("g3", A): 290, ("g1", B): 110}
    assert consumer_rates(first, second, ENDS, 2.0) == {A: 500.0, B: None}


def test_a_read_from_a_log_without_a_known_size_or_offsets_is_unknown_never_guessed() -> None:
    ends = {A: LogEnd(100, 300, None), B: LogEnd(300, 300, 0)}  # A's size unreported; B emptied by retention
    first = {("g1", A): 150, ("g1", B): 250}
    second = {("g1", A): 160, ("g1", B): 300}
    assert consumer_rates(first, second, ends, 1.0) == {A: None, B: None}
    # ...while a partition nobody read stays 0 whatever its log, and no window knows nothing.
    assert consumer_rates({("g1", A): 150}, {("g1", A): 150}, ends, 1.0) == {A: 0.0, B: 0.0}
    assert consumer_rates(first, second, ENDS, 0.0) == {A: None, B: None}


def test_what_the_snapshot_says_of_consumer_traffic_for_each_way_the_groups_answer() -> None:
    first, second = {("g1", A): 150}, {("g1", A): 160}
    assert consumer_reads(first, second, ENDS, 1.0) == ({A: 1000.0, B: 0.0}, GROUPS_BYTES_OUT)
    # An admin that cannot list groups (the simulator): sampling's own words, nothing per partition.
    assert consumer_reads(None, None, ENDS, 1.0) == ({}, SAMPLING_BYTES_OUT)
    # Groups that could not be read at either sample: not measured, and why; the produce rates still stand.
    failed = GroupsUnread("reading consumer groups failed: a broker is down")
    assert consumer_reads(first, failed, ENDS, 1.0) == (
        {}, "not measured: reading consumer groups failed: a broker is down (use --metrics prometheus=URL)")
    # No group committed in both samples: nothing to go by.
    assert consumer_reads({}, second, ENDS, 1.0) == ({}, NO_GROUPS_BYTES_OUT)
