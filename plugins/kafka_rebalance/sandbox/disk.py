"""The disk a sandbox's brokers report, and the disk limit a plan on them needs.

Every sandbox broker keeps its log dirs on the host's one filesystem, and Kafka reports that filesystem
(DescribeLogDirs' total and usable bytes) as each broker's disk. On a host that is fuller than the default
``--max-disk-usage``, every broker therefore starts above its limit, and ``plan`` rightly refuses: moving
replicas between brokers that share one filesystem frees nothing on it. A plan on the sandbox then needs a
limit above what the host already holds, with room for what the run itself writes. The demo and the tests
ask this module for it; ``sandbox up`` says so when the host is that full.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.options import DEFAULT_MAX_DISK_USAGE

# What a demo or a test run writes to the sandbox (seeded topics, copies in flight, logs) is well under 2 % of
# any disk CI or a laptop has; 4 % leaves room for other work on the host during the run.
RUN_HEADROOM = 0.04
# Above this a broker may fill its disk mid-run (Kafka stops a log dir on the first failed write): no limit
# is a safe one.
MAX_SANDBOX_DISK_USAGE = 0.98


class SandboxDiskError(RebalanceError):
    """The host's filesystem is too full for a sandbox to run a plan on."""


def host_usage(directory: Path) -> float:
    """How full the filesystem under ``directory`` is as Kafka counts it: 1 - usable / total."""
    disk = shutil.disk_usage(directory)
    return 1 - disk.free / disk.total


def plan_disk_limit(directory: Path) -> float:
    """The ``--max-disk-usage`` for plans on a sandbox whose brokers keep their logs under ``directory``."""
    return disk_limit_for(host_usage(directory), directory)


def disk_limit_for(usage: float, directory: Path) -> float:
    """The default where the host (``usage`` full) is emptier than it by the headroom; else the usage plus the
    headroom, rounded up to a hundredth (a limit an operator can type)."""
    if usage + RUN_HEADROOM <= DEFAULT_MAX_DISK_USAGE:
        return DEFAULT_MAX_DISK_USAGE
    # round() first: 0.81 + 0.04 is 0.8500000000000001 in floats, and the limit for it is 0.85, not 0.86.
    limit = math.ceil(round((usage + RUN_HEADROOM) * 100, 6)) / 100
    if limit > MAX_SANDBOX_DISK_USAGE:
        raise SandboxDiskError(
            f"{directory}: its filesystem is {usage:.1%} full as Kafka counts it (1 - usable / total): every sandbox "
            f"broker shares it, and a plan run would need --max-disk-usage {limit:.2f}, above {MAX_SANDBOX_DISK_USAGE}; "
            "free space there")
    return limit
