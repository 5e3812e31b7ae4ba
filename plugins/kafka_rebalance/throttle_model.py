"""How much of a replication throttle the brokers deliver: the rate every time estimate uses.

Under a KIP-73 throttle, Kafka's replica fetchers copy in chunks (replica.fetch.max.bytes per
partition) and, once the quota's rate is exceeded, skip the throttled partitions and back off
for replica.fetch.backoff.ms. The brokers therefore deliver a fraction of the configured rate:
0.7-0.8 on the 3-broker sandbox (docs/PERFORMANCE.md). The fraction is a property of the cluster,
so it is an option: 1.0 models the throttle as fully used, and ``execute`` prints the figure a
cluster showed so the next plan can use it. The throttle written to Kafka is never scaled.
"""

from __future__ import annotations

DEFAULT_THROTTLE_EFFICIENCY = 1.0
MIN_THROTTLE_EFFICIENCY = 0.05  # below this an estimate is a guess, not a model
# Under 1 KB/s a throttle is a typo, not a policy: the planner refuses it, and the executor refuses a
# plan file that holds one (0 would stop replication; Kafka reads a negative rate as no limit).
MIN_THROTTLE_BYTES_PER_SEC = 1024


def delivered_rate(throttle_bytes_per_sec: int, efficiency: float) -> float:
    """Bytes/s one broker is expected to move under the throttle."""
    if efficiency == 1:
        return throttle_bytes_per_sec  # the exact integer: the same figures as before the option existed
    return throttle_bytes_per_sec * efficiency
