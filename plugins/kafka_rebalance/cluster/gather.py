"""A snapshot of a live cluster: the one code path behind ``kafka-rebalance gather`` and the DAG's gather step."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

from kafka_rebalance.cluster.admin import TP, ClusterAdmin, ClusterError
from kafka_rebalance.cluster.prometheus import (
    DEFAULT_PROMETHEUS_WINDOW_SECONDS,
    PrometheusSource,
    read_traffic,
    split_traffic,
)
from kafka_rebalance.options import MAX_RATE_WINDOW_SECONDS
from kafka_rebalance.snapshot import MetricMethod, MetricsSource, MetricsSourceKind, Snapshot

# Sampling reads log ends, which consumers do not move; consumer groups' committed offsets show what they read.
SAMPLING_BYTES_OUT = "not measured: sampling sees produce traffic only (use --metrics prometheus=URL)"
GROUPS_BYTES_OUT = ("estimated from consumer groups' committed offsets: the offsets each group committed in the window "
                    "times the log's bytes per offset (consumers outside a group, or committing less often than the "
                    "window, are not seen)")
NO_GROUPS_BYTES_OUT = ("not measured: no consumer group committed offsets in both samples (consumers outside a group "
                       "are not seen; use --metrics prometheus=URL)")


GroupOffsets = Mapping[tuple[str, "TP"], int]  # (group, partition) -> the group's committed offset


@dataclass(frozen=True, slots=True)
class GroupsUnread:
    """Why the consumer groups' offsets could not be read (refused, or the calls failed): consumer traffic is then
    not measured, and the snapshot says why; a produce-rate sample never fails for it."""

    reason: str


@dataclass(frozen=True, slots=True)
class LogEnd:
    """One partition's log at one moment: its leader's first and next offsets (ListOffsets) and the
    leader replica's bytes on disk (DescribeLogDirs; None when the leader did not report it)."""

    start_offset: int
    end_offset: int
    size_bytes: int | None


@runtime_checkable
class RateSampler(Protocol):
    """An admin that can sample log ends: a live cluster (the simulator reports its rates itself)."""

    def log_ends(self) -> dict[TP, LogEnd]:
        ...


@runtime_checkable
class GroupOffsetSampler(Protocol):
    """An admin that can read every consumer group's committed offsets (a live cluster)."""

    def group_offsets(self) -> GroupOffsets | GroupsUnread:
        """Every group's committed offset of every partition it committed, or why they could not be read."""
        ...


def consumer_rates(first: GroupOffsets, second: GroupOffsets, ends: Mapping[TP, LogEnd], seconds: float) -> dict[TP, float | None]:
    """Bytes/s consumers read from each partition of ``ends`` between two samples ``seconds`` apart, from the
    offsets each consumer group committed in between times the log's bytes per offset (``ends``: the second
    sample's log ends). A group counts where it committed the partition in both samples: one that appeared
    in between read from an offset nobody recorded. A committed offset that went back (a reset) leaves the
    partition unknown (None), and so does one consumed from a log whose bytes per offset cannot be known
    (empty, or its size unreported). 0.0 where no group moved."""
    if seconds <= 0:
        return dict.fromkeys(ends)
    consumed: dict[TP, int] = {}
    unknown: set[TP] = set()
    for (group, tp), offset in second.items():
        before = first.get((group, tp))
        if before is None or tp not in ends:
            continue
        if offset < before:
            unknown.add(tp)
        elif offset > before:
            consumed[tp] = consumed.get(tp, 0) + offset - before
    rates: dict[TP, float | None] = {}
    for tp, end in ends.items():
        if tp in unknown:
            rates[tp] = None
        elif tp not in consumed:
            rates[tp] = 0.0
        else:
            held = end.end_offset - end.start_offset
            rates[tp] = None if end.size_bytes is None or held <= 0 else consumed[tp] * (end.size_bytes / held) / seconds
    return rates


def produce_rate(first: LogEnd, second: LogEnd, seconds: float) -> float | None:
    """Bytes/s written to a partition between two samples ``seconds`` apart; None when it cannot be known.

    The size delta is the figure while nothing left the log in between. When the log start moved
    (retention deleted a segment, or DeleteRecords) or the size shrank (compaction), the delta is
    what was written minus what was removed, and can be anything down to negative: then the offsets
    written in between, times the average bytes per offset of the log as the second sample holds it,
    stand in. That is an estimate (records written now may be larger or smaller than the log's
    average), but never negative and exact for uniform records. Compaction that removes less than
    was written in between is not visible in either sample and is counted as the size delta.
    """
    if seconds <= 0 or first.size_bytes is None or second.size_bytes is None:
        return None
    if second.end_offset < first.end_offset:
        return None  # the log was truncated (an unclean election) or the topic re-created: no honest figure
    if second.start_offset == first.start_offset and second.size_bytes >= first.size_bytes:
        return (second.size_bytes - first.size_bytes) / seconds
    written = second.end_offset - first.end_offset
    if written == 0:
        return 0.0
    held = second.end_offset - second.start_offset
    if held <= 0 or second.size_bytes == 0:
        return None  # everything written was deleted already: no bytes per offset to go by
    return written * (second.size_bytes / held) / seconds


def gather_snapshot(admin: ClusterAdmin, cluster_id: str, rate_window: float = 0.0,
                    metrics: PrometheusSource | None = None, waited: Callable[[float], None] = lambda _: None) -> Snapshot:
    """Brokers, racks, liveness, partitions, leaders, ISR, offline replicas, replica sizes, log dirs and
    dynamic configs; with ``rate_window`` > 0, each partition's produce rate measured over that many seconds.
    With ``metrics``, produce and consumer rates over the window (a minute when 0) are read from Prometheus
    instead, and nothing is sampled (cluster/prometheus.py).

    The snapshot is recorded under ``cluster_id`` (the operator's name for the cluster), not the
    cluster's own UUID: plans, staging and reports are keyed by that name. ``waited(seconds)`` is told of
    each second of the sampling window as it passes, for a progress bar.
    """
    if not 0 <= rate_window <= MAX_RATE_WINDOW_SECONDS:
        raise ClusterError(f"--rate-window must be within 0..{MAX_RATE_WINDOW_SECONDS:g} s, got {rate_window}")
    if metrics is not None:
        snapshot = admin.describe()
        window = rate_window or DEFAULT_PROMETHEUS_WINDOW_SECONDS
        snapshot = split_traffic(snapshot, read_traffic(metrics, window), metrics.url)
        return snapshot if snapshot.cluster_id == cluster_id else replace(snapshot, cluster_id=cluster_id)
    rates: dict[TP, float | None] = {}
    reads: dict[TP, float | None] = {}
    bytes_out = SAMPLING_BYTES_OUT
    seconds = 0.0
    if rate_window > 0:
        if not isinstance(admin, RateSampler):
            raise ClusterError("--rate-window: this cluster cannot be sampled (a simulated cluster reports its own "
                               "produce rates); use 0")
        # Each sample's moment is the middle of the calls taking it: the window is what lies between them.
        groups = admin if isinstance(admin, GroupOffsetSampler) else None
        t0 = admin.now()
        first = admin.log_ends()
        first_groups = groups.group_offsets() if groups is not None else None
        t1 = admin.now()
        left = rate_window
        while left > 0:  # in steps of a second, so a bar can follow the window
            step = min(1.0, left)
            admin.sleep(step)
            waited(step)
            left -= step
        t2 = admin.now()
        second = admin.log_ends()
        second_groups = groups.group_offsets() if groups is not None else None
        t3 = admin.now()
        seconds = round((t2 + t3) / 2 - (t0 + t1) / 2, 3)
        rates = {tp: produce_rate(first[tp], end, seconds) for tp, end in second.items() if tp in first}
        reads, bytes_out = consumer_reads(first_groups, second_groups, second, seconds)
    snapshot = admin.describe()
    if rate_window > 0:
        parts = tuple(replace(p, bytes_in_per_sec=rate, bytes_in_method=None if rate is None else MetricMethod.SAMPLED,
                              bytes_out_per_sec=read,
                              bytes_out_method=None if read is None else MetricMethod.SAMPLED_GROUP_OFFSETS)
                      for p in snapshot.partitions
                      for rate, read in ((rates.get(TP(p.topic, p.partition)), reads.get(TP(p.topic, p.partition))),))
        snapshot = replace(snapshot, partitions=parts, rate_window_seconds=seconds,
                           metrics_source=MetricsSource(MetricsSourceKind.SAMPLING, bytes_out))
    if snapshot.cluster_id != cluster_id:
        snapshot = replace(snapshot, cluster_id=cluster_id)
    return snapshot


def consumer_reads(first: GroupOffsets | GroupsUnread | None, second: GroupOffsets | GroupsUnread | None,
                   ends: Mapping[TP, LogEnd], seconds: float) -> tuple[dict[TP, float | None], str]:
    """Each partition's consumer traffic from the groups' two samples (None: this admin cannot list groups), and
    what the snapshot says of how it was measured: nothing per partition where the groups could not be asked or
    read, or no group committed in both."""
    if first is None or second is None:
        return {}, SAMPLING_BYTES_OUT
    if isinstance(first, GroupsUnread):
        return {}, f"not measured: {first.reason} (use --metrics prometheus=URL)"
    if isinstance(second, GroupsUnread):
        return {}, f"not measured: {second.reason} (use --metrics prometheus=URL)"
    if not {key for key in second if key in first}:
        return {}, NO_GROUPS_BYTES_OUT
    return consumer_rates(first, second, ends, seconds), GROUPS_BYTES_OUT
