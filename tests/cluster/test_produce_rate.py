"""gather's produce rate from two samples of a log, worked by hand (the real-Kafka measurement is in
tests/real_kafka/test_gather_measures_on_real_kafka.py)."""

from __future__ import annotations

import pytest

from kafka_rebalance.cluster.admin import ClusterError
from kafka_rebalance.cluster.gather import LogEnd, gather_snapshot, produce_rate
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
