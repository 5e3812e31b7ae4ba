"""The disk limit for plans on a sandbox, whose brokers all report the host's one filesystem as their disk."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kafka_rebalance.errors import PlanError
from kafka_rebalance.options import PlanOptions
from kafka_rebalance.planner import make_plan
from kafka_rebalance.sandbox.disk import SandboxDiskError, disk_limit_for, plan_disk_limit
from kafka_rebalance.snapshot import snapshot_from_dict
from tests.support.clusters import part

GIB = 1024**3


@pytest.mark.parametrize(("usage", "limit"), [
    (0.0, 0.85), (0.81, 0.85),  # the default while the host leaves the run its headroom under it
    (0.8101, 0.86), (0.852, 0.90), (0.88, 0.92), (0.94, 0.98),
])  # fmt: skip
def test_the_limit_is_the_default_or_the_hosts_usage_and_headroom_rounded_up(usage: float, limit: float) -> None:
    assert disk_limit_for(usage, Path("/tmp")) == limit


def test_a_host_too_full_for_any_limit_is_one_line_naming_it() -> None:
    with pytest.raises(SandboxDiskError) as err:
        disk_limit_for(0.9401, Path("/var/sandbox"))
    assert str(err.value) == (
        "/var/sandbox: its filesystem is 94.0% full as Kafka counts it (1 - usable / total): every sandbox broker "
        "shares it, and a plan run would need --max-disk-usage 0.99, above 0.98; free space there")


def test_the_host_limit_lies_above_what_the_host_holds(tmp_path: Path) -> None:
    disk = shutil.disk_usage(tmp_path)
    limit = plan_disk_limit(tmp_path)
    assert limit >= 0.85 and limit >= 1 - disk.free / disk.total + 0.03 and round(limit * 100) == limit * 100


def test_a_plan_on_brokers_sharing_a_full_host_runs_at_the_limit_and_is_refused_at_the_default() -> None:
    # Three brokers on one 100 GiB filesystem 88 % full (12 GiB usable), as Kafka reports it to each; broker 1 holds
    # the six partitions of 100 MiB: the default limit refuses every broker, the sandbox's limit plans a balance.
    parts = [part("t", i, [1], size_bytes=100 * 2**20) for i in range(6)]
    brokers = [{"id": b, "rack": f"r{b}", "log_dirs": [{"path": f"/host/{b}", "total_bytes": 100 * GIB,
                                                         "usable_bytes": 12 * GIB}]} for b in (1, 2, 3)]
    snap = snapshot_from_dict({"cluster_id": "shared-host", "brokers": brokers,
                               "partitions": [{"leader": 1, "isr": [1], **p} for p in parts]})
    with pytest.raises(PlanError, match=r"^broker 1: its disks hold 87\.4 GiB besides partitions, above "
                                        r"--max-disk-usage 0\.85 of its 100\.0 GiB"):
        make_plan(snap, PlanOptions())
    summary = make_plan(snap, PlanOptions(max_disk_usage=disk_limit_for(0.88, Path("/host")))).summary
    assert summary["replica_moves"] == 4
