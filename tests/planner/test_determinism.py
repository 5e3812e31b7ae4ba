"""The same snapshot and options give the same plan, byte for byte, on a quiet machine and on a busy
one: the exact mode's solver is bounded by work (branch-and-bound nodes, one thread, a fixed seed),
never by the clock."""

from __future__ import annotations

from pathlib import Path

from kafka_rebalance.planner import PlanOptions, make_plan, write_plan
from tests.support.clusters import pareto_decommission
from tests.support.load import cpu_burners


def all_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_busy_machine_gets_the_same_plan_as_a_quiet_one(tmp_path: Path) -> None:
    # 130 heavy-tailed partitions on 12 brokers, 3 of them decommissioned: no assignment reaches the byte
    # band, and the search branches until the node limit ends it, so a solver stopped by the clock would
    # hand back whatever it had found by then. (Counts held exactly, as when this cluster was chosen for
    # branching that long.)
    snap = pareto_decommission(6, partitions=130)
    options = PlanOptions(optimizer="auto", decommission_brokers=(9, 10, 11), replica_tolerance=0.0)
    quiet_plan = make_plan(snap, options)
    quiet, _ = write_plan(quiet_plan, tmp_path / "quiet", "snapshot.json")
    with cpu_burners(2):
        busy, _ = write_plan(make_plan(snap, options), tmp_path / "busy", "snapshot.json")
    opt = quiet_plan.summary["optimizer"]
    assert (opt["used"], opt["work_limited"], opt["time_limited"]) == ("exact", True, False)
    assert opt["band_widened_bytes"] > 0
    assert busy["plan_hash"] == quiet["plan_hash"]
    assert all_files(tmp_path / "busy") == all_files(tmp_path / "quiet")
