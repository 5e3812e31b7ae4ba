"""What every time estimate uses: how much of a replication throttle the brokers deliver, and
what each move costs besides its bytes.

Under a KIP-73 throttle, Kafka's replica fetchers copy in chunks (replica.fetch.max.bytes per
partition) and, once the quota's rate is exceeded, skip the throttled partitions and back off
for replica.fetch.backoff.ms. The brokers therefore deliver a fraction of the configured rate:
0.7-0.8 on the 3-broker sandbox (docs/PERFORMANCE.md). The fraction is a property of the cluster,
so it is an option: 1.0 models the throttle as fully used, and ``execute`` prints the figure a
cluster showed so the next plan can use it. The throttle written to Kafka is never scaled.

A move also costs time that no throttle explains: the controller's metadata reaching the brokers, the
new replica's fetcher starting, its joining the ISR, and the executor's poll that sees it landed. On
small moves that is all the time there is (a plan of 4 MiB moves estimated at 1.5 s took 45-62 s), so
every estimate adds ``move_fixed_seconds`` to each move, and ``execute`` measures it separately from
the efficiency. The default is what the 3-broker sandbox showed (docs/PERFORMANCE.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

DEFAULT_THROTTLE_EFFICIENCY = 1.0
MIN_THROTTLE_EFFICIENCY = 0.05  # below this an estimate is a guess, not a model
# Under 1 KB/s a throttle is a typo, not a policy: the planner refuses it, and the executor refuses a
# plan file that holds one (0 would stop replication; Kafka reads a negative rate as no limit).
MIN_THROTTLE_BYTES_PER_SEC = 1024
DEFAULT_MOVE_FIXED_SECONDS = 2.0
MAX_MOVE_FIXED_SECONDS = 600.0  # ten minutes per move is a stuck cluster, not a cost to plan with


def delivered_rate(throttle_bytes_per_sec: int, efficiency: float) -> float:
    """Bytes/s one broker is expected to move under the throttle."""
    if efficiency == 1:
        return throttle_bytes_per_sec  # the exact integer: the same figures as before the option existed
    return throttle_bytes_per_sec * efficiency


# A run within this fraction of its estimate confirms the plan's figures: nothing to advise.
ESTIMATE_TOLERANCE = 0.25
# Copies planned shorter than this say nothing about the delivered rate: Kafka's quota averages over
# 11 one-second samples, and the executor polls at least a second apart.
MIN_MEASURABLE_COPY_SECONDS = 2.0


class EstimateMiss(str, Enum):
    """What a whole run's time says about the plan's two figures."""

    HELD = "held"  # within ESTIMATE_TOLERANCE of the estimate
    FIXED_COST = "fixed_cost"  # the moves' fixed cost was off (their copying was too short to say anything of the rate)
    THROUGHPUT = "throughput"  # the delivered rate was off (the copying dominated the moves)


@dataclass(frozen=True, slots=True)
class RunMeasure:
    # Each figure only when the run's moves can show it: None when they cannot (see measure_run).
    efficiency: float | None  # the fraction of the throttle the run's copies got
    move_fixed_seconds: float | None  # what each move took besides copying
    miss: EstimateMiss


def measure_run(steps: Sequence[tuple[float, float]], efficiency: float, fixed_seconds: float,
                estimated: float, actual: float) -> RunMeasure | None:
    """What a run showed, from each move's (planned seconds, actual seconds).

    A move's planned time is the plan's fixed cost plus its copying at the plan's efficiency. When the
    moves' copying is short (under the fixed cost, or under MIN_MEASURABLE_COPY_SECONDS), their time is
    their fixed cost and says nothing of the rate: the fixed cost is the mean time less the mean copying.
    Otherwise the copying dominates and the fixed cost is within its noise: the efficiency is the planned
    copying over the copying seen (each move's time less the plan's fixed cost). Moves that share a
    throttle do not share it in the real order the plan simulated, so per-move figures are averaged,
    never fitted one by one.
    """
    if not steps or actual <= 0:
        return None
    n = len(steps)
    copy = sum(max(0.0, planned - fixed_seconds) for planned, _ in steps) / n
    took = sum(a for _, a in steps) / n
    held = abs(actual - estimated) <= ESTIMATE_TOLERANCE * actual
    if copy <= max(fixed_seconds, MIN_MEASURABLE_COPY_SECONDS):
        return RunMeasure(None, round(max(0.0, took - copy), 2), EstimateMiss.HELD if held else EstimateMiss.FIXED_COST)
    eff = round(efficiency * copy / max(took - fixed_seconds, 1e-3), 3)
    return RunMeasure(eff, None, EstimateMiss.HELD if held else EstimateMiss.THROUGHPUT)
