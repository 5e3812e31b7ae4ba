"""The gate on REAL plans: `kafka_rebalance.planner` output from a small generated cluster.

The untouched plan passes; each corruption below edits the staged files (or the
manifest) the way a bug or a hand edit would, re-records the hashes where the
corruption is not about hashes, and the expectation guarding against it fails by name.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from kafka_rebalance.generate import ClusterSpec, generate
from kafka_rebalance.planner import PlanOptions, make_plan, write_plan
from kafka_rebalance.snapshot import load_snapshot
from kafka_rebalance.validation import validate_plan
from tests.support.plans import restamp, write_json

SPEC = ClusterSpec(cluster_id="real-1", brokers=6, racks=3, topics=4, partitions=40, new_brokers=1,
                   leader_skew=0.2, seed=1)


@pytest.fixture(scope="module")
def planned(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("real")
    snapshot = generate(SPEC, root / "snapshot.json")
    write_plan(make_plan(load_snapshot(snapshot), PlanOptions(max_partitions_per_batch=10)), root / "plan", str(snapshot))
    return root / "plan", snapshot


@pytest.fixture
def real_plan(planned, tmp_path) -> tuple[Path, Path]:
    plan, snapshot = planned
    shutil.copytree(plan, tmp_path / "plan")
    return tmp_path / "plan", snapshot


def load(path: Path) -> Any:
    return json.loads(path.read_text())


def first_move(plan: Path) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    path = plan / "batches" / "001" / "reassignment.json"
    doc = load(path)
    return path, doc, doc["partitions"][0]


def schedule_retargeted(plan, snap):
    # The continuous schedule sends a move somewhere its batch does not: the batches alone would pass.
    path = plan / "schedule.json"
    doc = load(path)
    step = doc["steps"][0]
    step["replicas"] = list(reversed(step["replicas"]))[:-1] + [next(b for b in sorted(racks(snap)) if b not in step["replicas"])]
    path.write_text(json.dumps(doc))


def schedule_drops_a_move(plan, snap):
    path = plan / "schedule.json"
    doc = load(path)
    doc["steps"].pop()
    path.write_text(json.dumps(doc))


def racks(snapshot: Path) -> dict[int, str]:
    return {b["id"]: b["rack"] for b in load(snapshot)["brokers"]}


def set_option(plan: Path, **values: Any) -> None:
    manifest = load(plan / "plan.json")
    manifest["options"].update(values)
    write_json(plan / "plan.json", manifest)


# Each corruption returns nothing; it edits files in place.
def dup_in_batch(plan, snap):
    path, doc, move = first_move(plan)
    doc["partitions"].append(dict(move))
    write_json(path, doc)
    set_option(plan, max_partitions_per_batch=11)


def not_in_snapshot(plan, snap):
    path, doc, move = first_move(plan)
    move["topic"] = "no-such-topic"
    write_json(path, doc)


def repeat_broker(plan, snap):
    path, doc, move = first_move(plan)
    move["replicas"][1] = move["replicas"][0]
    write_json(path, doc)


def rf_changed(plan, snap):
    path, doc, move = first_move(plan)
    spare = next(b for b in sorted(racks(snap)) if b not in move["replicas"])
    move["replicas"].append(spare)
    move["log_dirs"].append("any")
    write_json(path, doc)


def unknown_target(plan, snap):
    path, doc, move = first_move(plan)
    move["replicas"][-1] = 99
    write_json(path, doc)


def decommissioned_target(plan, snap):
    # A broker the move newly places a replica on: replicas already on a leaving
    # broker may stay for a step, new ones never may.
    before = {(p["topic"], p["partition"]): p["replicas"] for p in load(snap)["partitions"]}
    moves = [m for f in sorted(plan.glob("batches/*/reassignment.json")) for m in load(f)["partitions"]]
    target = next(b for m in moves for b in m["replicas"] if b not in before[m["topic"], m["partition"]])
    set_option(plan, decommission_brokers=[target])


def one_rack(plan, snap):
    path, doc, move = first_move(plan)
    rack_of = racks(snap)
    first = move["replicas"][0]
    same = [b for b in sorted(rack_of) if rack_of[b] == rack_of[first] and b != first]
    move["replicas"][1] = same[0]
    write_json(path, doc)


def batch_too_big(plan, snap):
    set_option(plan, max_partitions_per_batch=3)


def too_many_moves(plan, snap):
    set_option(plan, max_moves_per_broker=1)


def throttle_too_low(plan, snap):
    path = plan / "batches" / "001" / "throttles.json"
    doc = load(path)
    doc["rate_bytes_per_sec"] = 100
    write_json(path, doc)


def excluded_topic_moved(plan, snap):
    _, _, move = first_move(plan)
    set_option(plan, exclude_topics=[move["topic"]])


def drop_last_batch(plan, snap):
    manifest = load(plan / "plan.json")
    last = manifest["batches"].pop()
    shutil.rmtree(plan / "batches" / last["id"])
    write_json(plan / "plan.json", manifest)


def drop_election(plan, snap):
    write_json(plan / "election.json", {"partitions": []})


CASES = [
    (dup_in_batch, "reassignment_plan.expect_compound_columns_to_be_unique"),
    (not_in_snapshot, "reassignment_plan.expect_partition_in_snapshot"),
    (repeat_broker, "reassignment_plan.expect_replica_list_without_repeats"),
    (rf_changed, "reassignment_plan.expect_replication_factor_unchanged"),
    (unknown_target, "reassignment_plan.expect_target_brokers_eligible"),
    (decommissioned_target, "reassignment_plan.expect_target_brokers_eligible"),
    (one_rack, "reassignment_plan.expect_partition_spread_over_min_rf_racks"),
    (batch_too_big, "reassignment_plan.expect_batch_partition_count_within_limit"),
    (too_many_moves, "reassignment_plan.expect_broker_moves_per_batch_within_limit"),
    (throttle_too_low, "reassignment_plan.expect_throttle_rate_within_bounds"),
    (excluded_topic_moved, "reassignment_plan.expect_excluded_topics_untouched"),
    (schedule_retargeted, "reassignment_plan.expect_schedule_matches_batches"),
    (schedule_drops_a_move, "reassignment_plan.expect_schedule_matches_batches"),
    (drop_last_batch, "projected_balance.expect_broker_replica_count_within_bounds"),
    (drop_election, "projected_balance.expect_broker_leader_imbalance_within_threshold"),
]


def test_untouched_real_plan_passes(real_plan) -> None:
    plan, snapshot = real_plan
    outcome = validate_plan(plan, snapshot)
    assert outcome.status == "passed", outcome.report()
    assert load(plan / "validation" / "verdict.json")["status"] == "passed"


@pytest.mark.parametrize("corrupt, expectation", CASES, ids=[c[0].__name__ for c in CASES])
def test_real_plan_corruption_fails_by_name(real_plan, corrupt, expectation: str) -> None:
    plan, snapshot = real_plan
    corrupt(plan, snapshot)
    restamp(plan)
    outcome = validate_plan(plan, snapshot)
    assert outcome.status == "failed"
    assert expectation in outcome.failed_expectations(), outcome.report()
    assert load(plan / "validation" / "verdict.json")["status"] == "failed"


def test_real_plan_edited_after_planning_fails_hash(real_plan) -> None:
    plan, snapshot = real_plan
    repeat_broker(plan, snapshot)  # and no restamp: the files no longer match plan.json
    outcome = validate_plan(plan, snapshot)
    assert "reassignment_plan.expect_plan_files_match_manifest" in outcome.failed_expectations()


def test_a_looser_floor_moves_fewer_bytes_and_the_gate_holds_the_plan_to_its_own_floor(tmp_path) -> None:
    """--byte-tolerance-below: the band's lower side on its own. Filling two new brokers only to 30 % under the
    mean moves fewer bytes than filling them to 5 % under, the fullest broker stays within 5 % above either way,
    and the gate judges the plan by the floor it was made with: the same plan claiming the symmetric band fails."""
    spec = ClusterSpec(cluster_id="floor", brokers=8, racks=0, topics=4, partitions=80, replication_factor=2,
                       new_brokers=2, seed=3)
    snapshot = generate(spec, tmp_path / "snapshot.json")
    snap = load_snapshot(snapshot)
    even = make_plan(snap, PlanOptions(byte_tolerance=0.05))
    loose = make_plan(snap, PlanOptions(byte_tolerance=0.05, byte_tolerance_below=0.3))
    for plan, below in ((even, 0.05), (loose, 0.3)):
        sizes = [r["size_bytes"] for r in plan.summary["projected"]]
        mean = sum(sizes) / len(sizes)
        assert max(sizes) <= 1.05 * mean + 1 and min(sizes) >= (1 - below) * mean - 1, (below, sizes, mean)
        assert plan.summary["targets"]["bytes_reached"]
    assert loose.summary["bytes_moved"] < even.summary["bytes_moved"]
    assert loose.summary["targets"]["byte_tolerance_below"] == 0.3 and "byte_tolerance_below" not in even.summary["targets"]
    # Some broker ends below the symmetric band: what the looser floor saved.
    low = {b: lo for b, (lo, _) in even.summary["targets"]["byte_bands"].items()}
    assert any(r["size_bytes"] < low[str(r["broker_id"])] for r in loose.summary["projected"])

    write_plan(loose, tmp_path / "plan", str(snapshot))
    assert validate_plan(tmp_path / "plan", snapshot).status == "passed"
    # The same plan, its options claiming the band a symmetric tolerance makes (hashes re-recorded): refused.
    manifest = load(tmp_path / "plan" / "plan.json")
    del manifest["options"]["byte_tolerance_below"]
    write_json(tmp_path / "plan" / "plan.json", manifest)
    restamp(tmp_path / "plan")
    outcome = validate_plan(tmp_path / "plan", snapshot)
    assert outcome.status == "failed", outcome.report()
    assert outcome.failed_expectations() == {"projected_balance.expect_broker_bytes_not_worse_off"}, outcome.report()
