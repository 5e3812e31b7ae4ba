"""How long a batch takes under the throttle.

Each broker receives its new replicas' bytes through its follower throttle and each
leader sends them through its leader throttle, both at ``rate`` bytes/s. While a
replica catches up, the partition keeps receiving produce traffic at
``bytes_in_per_sec``, which the new replica must also copy: a broker receiving S
bytes of partitions whose produce rates sum to P needs S / (rate - P) seconds
(never, when P >= rate). The batch lasts as long as its slowest broker, plus one move's fixed
cost (``move_fixed_seconds``, throttle_model.py): a batch's moves are submitted together, so their
metadata rounds, fetcher starts and ISR joins overlap rather than add up.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kafka_rebalance.estimates import running_shares, split_tenths
from kafka_rebalance.planner.batching import PlannedBatch
from kafka_rebalance.planner.schedule import Schedule
from kafka_rebalance.planner.steps import Step


def batch_seconds(steps: Iterable[Step], rate: float, fixed_seconds: float = 0.0) -> float:
    recv: dict[int, float] = defaultdict(float)
    recv_rate: dict[int, float] = defaultdict(float)
    send: dict[int, float] = defaultdict(float)
    send_rate: dict[int, float] = defaultdict(float)
    copies = False
    for s in steps:
        copies = copies or bool(s.adds)
        for b in s.adds:
            recv[b] += s.size
            recv_rate[b] += s.rate
            send[s.leader] += s.size
            send_rate[s.leader] += s.rate
    worst = 0.0
    for side, flow in ((recv, recv_rate), (send, send_rate)):
        for b, size in side.items():
            headroom = rate - flow[b]
            if headroom <= 0:
                return float("inf")
            worst = max(worst, size / headroom)
    return worst + fixed_seconds if copies else worst


@dataclass(frozen=True, slots=True)
class StepFigures:
    """plan.json's figure per batch for each mode, to a tenth of a second, adding up exactly to that mode's headline."""

    waves: list[float]  # each batch run as a wave
    shares: list[float]  # each batch's share of the continuous schedule (estimates.running_shares)


def step_figures(batches: Sequence[PlannedBatch], schedule: Schedule) -> StepFigures:
    batch_of = {(s.p, s.seq): n for n, b in enumerate(batches) for s in b.steps}
    ends = [0.0] * len(batches)
    for item in schedule.steps:
        n = batch_of[(item.step.p, item.step.seq)]
        ends[n] = max(ends[n], item.end)
    return StepFigures(split_tenths([b.seconds for b in batches]), running_shares(ends))
