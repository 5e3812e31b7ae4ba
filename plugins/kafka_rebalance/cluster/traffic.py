"""Each broker's live network traffic apart from a reassignment's copying: what ``execute --throttle auto``
re-reads at every poll (executor/autothrottle.py).

One definition, whatever the source: a partition written at R bytes/s brings R into its leader (the
producers) and R into each other in-sync replica (their fetches), and sends R out of its leader to each
of those followers, plus what its consumers read (where known). A replica that a reassignment is adding
is not in the ISR until it has caught up, so the copying the throttle governs is never counted as traffic;
once it joins, it fetches like any follower.

Two sources:

* the simulator knows every partition's produce and consume rate exactly (``TrafficReporter``);
* a live cluster is sampled as ``gather --rate-window`` samples it: log-end offsets and the leader's
  size (``RateSampler.log_ends``) at one poll and the next, the rate between them by ``gather.produce_rate``,
  ISR and leaders from Metadata. Log ends do not show what consumers read; where the cluster lists its
  consumer groups, their committed offsets at each poll do (``gather.consumer_rates``), and a leader's
  bytes out count them (``SAMPLED_GROUPS``). Consumers outside a group are never seen.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Protocol, runtime_checkable

from kafka_rebalance.cluster.admin import TP, ClusterAdmin
from kafka_rebalance.cluster.gather import (
    GroupOffsets,
    GroupOffsetSampler,
    GroupsUnread,
    LogEnd,
    RateSampler,
    consumer_rates,
    produce_rate,
)


class TrafficMethod(str, Enum):
    """Where a run's traffic figures come from (recorded in the ledger beside the rates they gave)."""

    SIMULATED = "simulated: the simulator's produce and consume rates"
    SAMPLED = "sampled: log-end offsets and sizes between polls (produce and ISR replication; consumers not seen)"
    SAMPLED_GROUPS = ("sampled: log-end offsets and sizes, and consumer groups' committed offsets, between polls (produce, "
                      "ISR replication and the groups' consumers; consumers outside a group not seen)")


@dataclass(frozen=True, slots=True)
class BrokerTraffic:
    bytes_in: float  # produce into its leaders + ISR fetches into its followers
    bytes_out: float  # its leaders' bytes to in-sync followers + consumers where known


@dataclass(frozen=True, slots=True)
class PartitionTraffic:
    leader: int  # -1: none (nothing flows)
    isr: tuple[int, ...]
    produce_bytes_per_sec: float
    consume_bytes_per_sec: float = 0.0


def broker_traffic(partitions: Iterable[PartitionTraffic]) -> dict[int, BrokerTraffic]:
    """Per broker, the traffic the module docstring defines (brokers with none are absent)."""
    bytes_in: dict[int, float] = {}
    bytes_out: dict[int, float] = {}
    for p in partitions:
        if p.leader < 0 or (p.produce_bytes_per_sec <= 0 and p.consume_bytes_per_sec <= 0):
            continue
        followers = [b for b in p.isr if b != p.leader]
        for b in (p.leader, *followers):
            bytes_in[b] = bytes_in.get(b, 0.0) + p.produce_bytes_per_sec
        bytes_out[p.leader] = bytes_out.get(p.leader, 0.0) + p.produce_bytes_per_sec * len(followers) + p.consume_bytes_per_sec
    return {b: BrokerTraffic(bytes_in.get(b, 0.0), bytes_out.get(b, 0.0)) for b in sorted(set(bytes_in) | set(bytes_out))}


@runtime_checkable
class TrafficReporter(Protocol):
    """An admin that knows its brokers' traffic itself (the simulator)."""

    def broker_traffic(self) -> dict[int, BrokerTraffic]:
        ...


class TrafficSource(Protocol):
    method: TrafficMethod

    def read(self) -> dict[int, BrokerTraffic] | None:
        """Each broker's traffic now; None while it cannot be known yet (a sampler's first sample)."""
        ...


class _Reported:
    method = TrafficMethod.SIMULATED

    def __init__(self, admin: TrafficReporter) -> None:
        self.admin = admin

    def read(self) -> dict[int, BrokerTraffic] | None:
        return self.admin.broker_traffic()


class _Sampled:
    """Two consecutive reads a poll apart give the rates of the interval between them."""

    def __init__(self, admin: ClusterAdmin, sampler: RateSampler, groups: GroupOffsetSampler | None) -> None:
        self.admin, self.sampler, self.groups = admin, sampler, groups
        self.method = TrafficMethod.SAMPLED if groups is None else TrafficMethod.SAMPLED_GROUPS
        self.last: tuple[float, Mapping[TP, LogEnd], GroupOffsets | GroupsUnread | None] | None = None

    def read(self) -> dict[int, BrokerTraffic] | None:
        t0 = self.admin.now()
        ends = self.sampler.log_ends()
        offsets = self.groups.group_offsets() if self.groups is not None else None
        at = (t0 + self.admin.now()) / 2  # the sample's moment: the middle of the calls taking it
        previous, self.last = self.last, (at, ends, offsets)
        if previous is None or at <= previous[0]:
            return None
        seconds = at - previous[0]
        views = self.admin.partitions(ends)
        # (groups unread at either poll count no consumer: what sampling alone sees)
        before = previous[2]
        reads = (consumer_rates(before, offsets, ends, seconds)
                 if isinstance(before, Mapping) and isinstance(offsets, Mapping) else {})
        rows = []
        for tp, end in ends.items():
            first, view = previous[1].get(tp), views.get(tp)
            rate = produce_rate(first, end, seconds) if first is not None else None
            if view is not None and rate is not None:
                rows.append(PartitionTraffic(view.leader, view.isr, rate, reads.get(tp) or 0.0))
        return broker_traffic(rows)


def traffic_source(admin: ClusterAdmin) -> TrafficSource | None:
    """How this cluster's traffic can be read at each poll; None: it cannot (auto throttling is refused)."""
    if isinstance(admin, TrafficReporter):
        return _Reported(admin)
    if isinstance(admin, RateSampler):
        return _Sampled(admin, admin, admin if isinstance(admin, GroupOffsetSampler) else None)
    return None
