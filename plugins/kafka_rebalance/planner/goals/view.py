"""What every goal's check reads, and what it returns.

A goal judges a ``BalanceView``: per eligible broker, its loads and the targets it is held
to. The planner builds one from its own state (before and after the plan), the DAG's
"needs a plan?" from the snapshot, and the quality gate from its own projection of the
plan's files: so a balance rule is written once, in its goal's ``check``, and all three
read the same verdict. Pure data, no NumPy, so the gate and the DAG read it cheaply.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class BrokerView:
    """One eligible broker, as the goals see it."""

    broker_id: int
    replicas: int
    replica_lo: int
    replica_hi: int
    bytes: float
    byte_target: float
    # The band the gate allows: no further from the target than before, beyond the tolerance.
    byte_allowed: float
    preferred: int  # partitions whose first replica it is
    # Over the partitions a plan may touch (an excluded topic's leadership is the operator's):
    # the partitions it is preferred for, and of those the ones it does not lead.
    led_preferred: int
    preferred_not_led: int
    movable_replicas: int = 0  # replicas a plan may move (not of excluded topics, not leaderless)
    # Bytes of partition data its disks may hold under --max-disk-usage; None: its capacity is unknown.
    disk_limit: float | None = None
    # Its byte band and the mean it is centred on (balance.byte_band: the cluster's mean, or its
    # capacity-weighted share); None: its target within the tolerance (a view that knows no forced
    # shares: the fleet analysis).
    byte_lo: float | None = None
    byte_hi: float | None = None
    byte_mean: float | None = None
    # Traffic in bytes/s (planner/goals/network.py: its loads, its capacity-weighted share, the configured
    # capacity or None), filled by ``network.view_fields``.
    network_in: float = 0.0
    network_in_target: float = 0.0
    network_in_capacity: float | None = None
    network_out: float = 0.0
    network_out_target: float = 0.0
    network_out_capacity: float | None = None

    def byte_band(self, tolerance: float) -> tuple[float, float, float]:
        """lo, hi and the mean the deviation is measured from."""
        if self.byte_lo is None or self.byte_hi is None or self.byte_mean is None:
            t = self.byte_target
            return t * (1 - tolerance), t * (1 + tolerance), t
        return self.byte_lo, self.byte_hi, self.byte_mean


@dataclass(frozen=True)
class TopicLoad:
    """One topic over the eligible brokers: where its replicas and first replicas sit, and what its
    share is computed from (the topic-spread goal's input; broker ids throughout)."""

    topic: str
    by_rf: tuple[tuple[int, int], ...]  # (target replication factor, partitions a plan may move)
    fixed: tuple[tuple[int, int], ...]  # (eligible broker, replicas of partitions no plan may move), nonzero
    replicas: tuple[tuple[int, int], ...]  # (eligible broker, replicas of the topic), nonzero
    preferred: tuple[tuple[int, int], ...]  # (eligible broker, partitions it is first replica of), nonzero


@dataclass(frozen=True)
class BalanceView:
    brokers: tuple[BrokerView, ...]  # eligible brokers, by id
    leaving: tuple[BrokerView, ...]  # dead and decommissioned brokers, by id (targets 0)
    byte_tolerance: float
    threshold_percentage: float
    preferred_bounds: tuple[int, int]  # floor..ceil of preferred partitions per eligible broker
    rf_off_target: int = 0  # movable partitions not at the replication factor asked for
    rack_violations: int = 0  # movable partitions crowding a rack, or spanning too few
    byte_slack: float = 0.0  # bytes a broker may lie beyond its band (the exact model's widening)
    network_tolerance: float = 0.1  # the network goals' band, a fraction of each broker's share
    # Filled only when a selected goal reads them (``Goal.view_topics``): per topic, its loads, and
    # each eligible broker's rack (None: no rack information), which the topic's share depends on.
    topics: tuple[TopicLoad, ...] = ()
    racks: tuple[tuple[int, str | None], ...] = ()


@dataclass(frozen=True)
class GoalCheck:
    """One goal's verdict on one view: plan.json's summary, the gate and "needs a plan?" read it."""

    name: str
    hard: bool
    target: str  # the rule, for an operator
    value: float  # the goal's figure: 0 (or within its tolerance) when reached
    reached: bool
    offenders: tuple[int, ...] = ()  # brokers breaking the rule (or, for cluster-wide rules, none)
    # Per broker id, the figure the gate's expectation checks (None where the goal has none).
    per_broker: dict[int, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return {"value": round(float(self.value), 6), "reached": self.reached, "offenders": list(self.offenders)}
