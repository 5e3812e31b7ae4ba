"""`reassignment_plan` and `projected_balance`: each corruption of a plan trips its expectation, by name.

Corruptions edit the staged files as an operator or a bug would, then re-record the
hashes (``restamp``) so that only the rule under test is broken; the hash tests do not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kafka_rebalance.validation import validate_plan
from tests.support.plans import restamp, small_plan, small_plan_moves, small_snapshot, write_gate_plan, write_json

RP = "reassignment_plan."
PB = "projected_balance."


def load(path: Path) -> Any:
    return json.loads(path.read_text())


def edit_batch(plan: Path, batch: str, fn, name: str = "reassignment.json", stamp: bool = True) -> None:
    path = plan / "batches" / batch / name
    doc = load(path)
    fn(doc)
    write_json(path, doc)
    if stamp:
        restamp(plan)


def set_replicas(index: int, replicas: list[int]):
    def fn(doc):
        doc["partitions"][index]["replicas"] = replicas
        doc["partitions"][index]["log_dirs"] = ["any"] * len(replicas)
    return fn


def failed(plan: Path, snapshot: Path) -> set[str]:
    outcome = validate_plan(plan, snapshot)
    assert outcome.status == "failed"
    assert load(plan / "validation" / "verdict.json")["status"] == "failed"
    return outcome.failed_expectations()


def rows_of(plan: Path, snapshot: Path, expectation: str) -> list[str]:
    outcome = validate_plan(plan, snapshot)
    return [r for f in outcome.failures if f"{f.suite}.{f.expectation}" == expectation for r in f.rows]


def test_untouched_plan_passes_and_is_marked(good_plan) -> None:
    plan, snapshot = good_plan
    outcome = validate_plan(plan, snapshot)
    assert outcome.status == "passed", outcome.report()
    assert outcome.exit_code == 0
    assert [s["suite"] for s in outcome.suites] == ["snapshot", "reassignment_plan", "projected_balance"]
    manifest = load(plan / "plan.json")
    verdict = load(plan / "validation" / "verdict.json")
    assert {k: verdict[k] for k in ("status", "plan_hash", "result")} == {
        "status": "passed", "plan_hash": manifest["plan_hash"], "result": "validation/result.json"}
    assert "validation" not in manifest  # plan.json stays as planned
    result = load(plan / "validation" / "result.json")
    assert result["status"] == "passed"
    assert all(e["success"] for s in result["suites"] for e in s["expectations"])


# --------------------------------------------------------------------------- reassignment_plan


def test_partition_not_in_snapshot(good_plan) -> None:
    plan, snapshot = good_plan
    edit_batch(plan, "001", lambda d: d["partitions"][0].update(topic="ghost"))
    assert RP + "expect_partition_in_snapshot" in failed(plan, snapshot)
    assert rows_of(plan, snapshot, RP + "expect_partition_in_snapshot") == [
        "batch 001 ghost-2: is not a partition of the snapshot"]


def test_partition_twice_in_a_batch(tmp_path) -> None:
    moves = small_plan_moves()
    moves[0].append(moves[0][0])
    plan, snapshot = small_plan(tmp_path, moves=moves, max_partitions_per_batch=3)
    assert failed(plan, snapshot) == {RP + "expect_compound_columns_to_be_unique"}


def test_replica_list_repeats_broker(good_plan) -> None:
    plan, snapshot = good_plan
    edit_batch(plan, "002", set_replicas(0, [0, 0]))
    assert RP + "expect_replica_list_without_repeats" in failed(plan, snapshot)
    assert "batch 002 orders-4: replicas [0, 0] repeat broker 0" in rows_of(plan, snapshot, RP + "expect_replica_list_without_repeats")


def test_replication_factor_changed(good_plan) -> None:
    plan, snapshot = good_plan
    edit_batch(plan, "001", set_replicas(0, [2, 3, 1]))
    assert RP + "expect_replication_factor_unchanged" in failed(plan, snapshot)


def test_replication_factor_change_asked_for_is_accepted(tmp_path) -> None:
    """With options.replication_factor = 3 the same RF-3 list is what was asked."""
    moves = [[("audit", 1, [1, 2, 3])]]
    plan, snapshot = small_plan(tmp_path, moves=moves, replication_factor=3, exclude_topics=[])
    assert RP + "expect_replication_factor_unchanged" not in validate_plan(plan, snapshot).failed_expectations()
    plan2, snapshot2 = small_plan(tmp_path / "b", moves=moves, exclude_topics=[])
    assert RP + "expect_replication_factor_unchanged" in validate_plan(plan2, snapshot2).failed_expectations()


@pytest.mark.parametrize("case", ["unknown", "dead", "decommissioned"])
def test_target_broker_not_eligible(tmp_path, case: str) -> None:
    snap = small_snapshot()
    options: dict[str, Any] = {}
    moves = small_plan_moves()
    if case == "unknown":
        moves[0][0] = ("orders", 2, [2, 9])
    elif case == "dead":
        snap["brokers"][3]["alive"] = False
    else:
        options["decommission_brokers"] = [3]
    plan, snapshot = small_plan(tmp_path, snapshot=snap, moves=moves, **options)
    assert RP + "expect_target_brokers_eligible" in failed(plan, snapshot)
    why = {"unknown": "broker 9 is not a known broker", "dead": "broker 3 is not alive",
           "decommissioned": "broker 3 is being decommissioned"}[case]
    assert any(why in r for r in rows_of(plan, snapshot, RP + "expect_target_brokers_eligible"))


def test_partition_on_one_rack(good_plan) -> None:
    plan, snapshot = good_plan
    edit_batch(plan, "001", set_replicas(0, [2, 0]))  # brokers 0 and 2 are both rack-a
    assert RP + "expect_partition_spread_over_min_rf_racks" in failed(plan, snapshot)
    assert rows_of(plan, snapshot, RP + "expect_partition_spread_over_min_rf_racks") == [
        "batch 001 orders-2: replicas [2, 0] span 1 rack(s), need 2"]
    # The projection judges the cluster the plan leads to by the rack-safety goal's own count, too.
    assert PB + "expect_partitions_rack_safe" in failed(plan, snapshot)


def test_batch_over_partition_limit(tmp_path) -> None:
    moves = small_plan_moves()
    plan, snapshot = small_plan(tmp_path, moves=[moves[0] + moves[1]])
    assert failed(plan, snapshot) == {RP + "expect_batch_partition_count_within_limit"}


def test_broker_over_moves_per_batch(tmp_path) -> None:
    plan, snapshot = small_plan(tmp_path, max_moves_per_broker=1)
    assert failed(plan, snapshot) == {RP + "expect_broker_moves_per_batch_within_limit"}
    assert "batch 001 broker 1: 2 replica moves in or out, limit 1" in rows_of(
        plan, snapshot, RP + "expect_broker_moves_per_batch_within_limit")


@pytest.mark.parametrize("rate", [512, 52428801, "fast"])
def test_throttle_rate_out_of_bounds(good_plan, rate) -> None:
    plan, snapshot = good_plan
    edit_batch(plan, "002", lambda d: d["brokers"]["1"].update({"leader.replication.throttled.rate": str(rate)}),
               name="throttles.json")
    assert failed(plan, snapshot) == {RP + "expect_throttle_rate_within_bounds"}


def test_excluded_topic_reassigned(tmp_path) -> None:
    moves = small_plan_moves() + [[("audit", 1, [2, 1])]]  # a reorder of an excluded topic
    plan, snapshot = small_plan(tmp_path, moves=moves)
    assert RP + "expect_excluded_topics_untouched" in failed(plan, snapshot)


def test_staged_file_changed_after_planning(good_plan) -> None:
    plan, snapshot = good_plan
    edit_batch(plan, "002", set_replicas(1, [2, 3]), stamp=False)  # hand-edited after planning
    assert RP + "expect_plan_files_match_manifest" in failed(plan, snapshot)
    assert any(r.startswith("batches/002/reassignment.json: sha256") for r in
               rows_of(plan, snapshot, RP + "expect_plan_files_match_manifest"))


def test_unlisted_file_and_forged_plan_hash(good_plan) -> None:
    plan, snapshot = good_plan
    write_json(plan / "batches" / "002" / "extra.json", {"version": 1, "partitions": []})
    manifest = load(plan / "plan.json")
    manifest["options"]["max_moves_per_broker"] = 50  # loosen a limit without re-planning
    write_json(plan / "plan.json", manifest)
    rows = rows_of(plan, snapshot, RP + "expect_plan_files_match_manifest")
    assert [r.split(":")[0] for r in rows] == ["batches/002/extra.json", "plan.json plan_hash"]


def test_plan_checked_against_another_snapshot(good_plan, tmp_path) -> None:
    plan, _ = good_plan
    other = small_snapshot()
    other["captured_at"] = "2026-02-01T00:00:00Z"
    write_json(tmp_path / "other.json", other)
    rows = rows_of(plan, tmp_path / "other.json", RP + "expect_plan_files_match_manifest")
    assert [r.split(":")[0] for r in rows] == ["snapshot fingerprint"]


# --------------------------------------------------------------------------- projected_balance


def test_election_missing_leaves_leader_imbalance(tmp_path) -> None:
    plan, snapshot = small_plan(tmp_path, exclude_topics=[])  # audit, led by its second replicas, is the plan's to fix
    election = load(plan / "election.json")
    election["partitions"] = [p for p in election["partitions"] if p["topic"] != "audit"]
    write_json(plan / "election.json", election)
    restamp(plan)
    assert failed(plan, snapshot) == {PB + "expect_broker_leader_imbalance_within_threshold"}
    assert "broker 0: leader imbalance 33.3% after the election, threshold 10.0%" in rows_of(
        plan, snapshot, PB + "expect_broker_leader_imbalance_within_threshold")


def test_unfinished_plan_leaves_replica_counts_out_of_bounds(tmp_path) -> None:
    plan, snapshot = small_plan(tmp_path, moves=small_plan_moves()[:1])
    assert PB + "expect_broker_replica_count_within_bounds" in failed(plan, snapshot)
    assert "broker 1: 8 replicas after the plan (was 10), bounds 6..6" in rows_of(
        plan, snapshot, PB + "expect_broker_replica_count_within_bounds")


def test_reorder_skews_preferred_leaders(tmp_path) -> None:
    moves = small_plan_moves() + [[("orders", 1, [2, 1])]]  # broker 2 becomes preferred of one more
    plan, snapshot = small_plan(tmp_path, moves=moves)
    assert failed(plan, snapshot) == {PB + "expect_broker_preferred_leader_count_within_bounds"}


def test_swap_leaves_broker_bytes_worse_off(tmp_path) -> None:
    # orders-0 (1 unit) and orders-6 (2 units) trade brokers 0 and 2: every count stays, bytes do not.
    moves = small_plan_moves() + [[("orders", 0, [2, 1]), ("orders", 6, [0, 1])]]
    plan, snapshot = small_plan(tmp_path, moves=moves)
    assert failed(plan, snapshot) == {PB + "expect_broker_bytes_not_worse_off"}


def test_excluded_topic_leadership_is_not_the_plans_to_fix(good_plan) -> None:
    """audit is excluded and led by its second replicas: without its elections (the planner never
    elects an excluded topic) broker 0 leads none of its preferred audit partition, and that is
    still no failure of the plan."""
    plan, snapshot = good_plan
    election = load(plan / "election.json")
    election["partitions"] = [p for p in election["partitions"] if p["topic"] != "audit"]
    write_json(plan / "election.json", election)
    restamp(plan)
    outcome = validate_plan(plan, snapshot)
    assert outcome.status == "passed", outcome.report()


# --------------------------------------------------------------------------- dead and decommissioned brokers


def snapshot_file(tmp: Path, brokers: list[tuple[int, str | None, bool]], partitions: list[tuple[int, list[int], int]]) -> Path:
    """brokers: (id, rack, alive); partitions of topic t: (partition, replicas, leader); ISR = the live replicas."""
    alive = {b for b, _, up in brokers if up}
    path = tmp / "snapshot.json"
    write_json(path, {
        "cluster_id": "test-2", "captured_at": "2026-01-01T00:00:00Z", "controller": "kraft", "configs": {},
        "brokers": [{"id": b, "rack": r, "alive": up, "configs": {}} for b, r, up in brokers],
        "topics": {"t": {"configs": {}}},
        "partitions": [{"topic": "t", "partition": p, "replicas": reps, "leader": leader,
                        "isr": [b for b in reps if b in alive], "size_bytes": SIZE_T, "bytes_in_per_sec": 10.0}
                       for p, reps, leader in partitions],
    })
    return path


SIZE_T = 1_000_000
# Brokers 2 and 3 leave. t-0 sits on both: with one new replica per partition and step it
# needs two steps, and after the first its list [0, 3] still names broker 3.
DECOMMISSION_BROKERS = [(0, None, True), (1, None, True), (2, None, True), (3, None, True)]
DECOMMISSION_PARTS = [(0, [2, 3], 2), (1, [0, 1], 0), (2, [1, 0], 1), (3, [2, 0], 2)]
DECOMMISSION_MOVES = [[("t", 0, [0, 3]), ("t", 3, [1, 0])], [("t", 0, [0, 1])]]


def decommission_plan(tmp: Path, moves: list[list[Any]]) -> tuple[Path, Path]:
    snapshot = snapshot_file(tmp, DECOMMISSION_BROKERS, DECOMMISSION_PARTS)
    election = sorted({(t, p) for batch in moves for t, p, _ in batch})
    return write_gate_plan(tmp / "plan", snapshot, moves, election, decommission_brokers=[2, 3],
                      max_new_replicas_per_partition=1), snapshot


def test_decommission_two_replicas_of_one_partition_step_by_step_passes(tmp_path) -> None:
    plan, snapshot = decommission_plan(tmp_path, DECOMMISSION_MOVES)
    outcome = validate_plan(plan, snapshot)
    assert outcome.status == "passed", outcome.report()


def test_batch_adding_a_replica_onto_a_decommissioned_broker_fails(tmp_path) -> None:
    moves = [[("t", 0, [0, 3]), ("t", 3, [3, 0])], [("t", 0, [0, 1]), ("t", 3, [1, 0])]]  # t-3 gains broker 3
    plan, snapshot = decommission_plan(tmp_path, moves)
    assert RP + "expect_target_brokers_eligible" in failed(plan, snapshot)
    assert rows_of(plan, snapshot, RP + "expect_target_brokers_eligible") == [
        "batch 001 t-3: replicas [3, 0]: broker 3 is being decommissioned but gets a new replica"]


def test_batch_adding_a_replica_onto_a_dead_broker_fails(tmp_path) -> None:
    brokers = [(0, None, True), (1, None, True), (2, None, True), (3, None, False)]
    snapshot = snapshot_file(tmp_path, brokers, [(0, [0, 1], 0), (1, [1, 2], 1), (2, [2, 0], 2)])
    plan = write_gate_plan(tmp_path / "plan", snapshot, [[("t", 0, [0, 3])]], [("t", 0)])
    assert rows_of(plan, snapshot, RP + "expect_target_brokers_eligible") == [
        "batch 001 t-0: replicas [0, 3]: broker 3 is not alive but gets a new replica"]


def test_decommissioned_broker_left_holding_a_replica_fails(tmp_path) -> None:
    """Stopping after the first step leaves t-0 on broker 3: each batch alone is acceptable, the end state is not."""
    plan, snapshot = decommission_plan(tmp_path, DECOMMISSION_MOVES[:1])
    assert PB + "expect_leaving_brokers_emptied" in failed(plan, snapshot)
    assert rows_of(plan, snapshot, PB + "expect_leaving_brokers_emptied") == [
        "broker 3: still holds 1 replica(s) after the plan that it could have moved off"]


# Rack c's only broker (3) is dead: RF 3 can span only racks a and b from now on.
DEAD_RACK_BROKERS = [(0, "a", True), (1, "a", True), (2, "b", True), (3, "c", False)]
DEAD_RACK_PARTS = [(0, [0, 2, 3], 0), (1, [1, 0, 2], 1), (2, [2, 3, 1], 2)]


def test_rack_with_only_dead_brokers_is_not_required(tmp_path) -> None:
    snapshot = snapshot_file(tmp_path, DEAD_RACK_BROKERS, DEAD_RACK_PARTS)
    moves = [[("t", 0, [0, 2, 1]), ("t", 2, [2, 1, 0])]]
    plan = write_gate_plan(tmp_path / "plan", snapshot, moves, [("t", 0), ("t", 2)])
    outcome = validate_plan(plan, snapshot)
    assert outcome.status == "passed", outcome.report()


def test_rack_spread_over_live_racks_is_still_required(tmp_path) -> None:
    snapshot = snapshot_file(tmp_path, DEAD_RACK_BROKERS + [(4, "a", True)], DEAD_RACK_PARTS)
    plan = write_gate_plan(tmp_path / "plan", snapshot, [[("t", 0, [0, 1, 4])]], [("t", 0)])
    assert rows_of(plan, snapshot, RP + "expect_partition_spread_over_min_rf_racks") == [
        "batch 001 t-0: replicas [0, 1, 4] span 1 rack(s), need 2"]


def test_a_plan_filling_a_disk_past_its_limit_fails_and_one_within_it_passes(tmp_path) -> None:
    """Broker 2's disk holds 2.2 MB: at max_disk_usage 0.85, 1.87 MB of partitions. One 1 MB replica fits, two do not.
    Broker 1 records no capacity (no disk figure): no limit, no row."""
    path = tmp_path / "snapshot.json"
    write_json(path, {
        "cluster_id": "disks", "captured_at": "2026-01-01T00:00:00Z", "controller": "kraft", "configs": {},
        "brokers": [{"id": 0, "log_dirs": [{"path": "/d", "total_bytes": 100 * SIZE_T}]}, {"id": 1},
                    {"id": 2, "log_dirs": [{"path": "/d1", "total_bytes": SIZE_T}, {"path": "/d2", "total_bytes": 1_200_000}]}],
        "topics": {"t": {"configs": {}}},
        "partitions": [{"topic": "t", "partition": p, "replicas": [b], "leader": b, "isr": [b], "size_bytes": SIZE_T}
                       for p, b in ((0, 0), (1, 0), (2, 1))],
    })
    within = write_gate_plan(tmp_path / "within", path, [[("t", 0, [2])]], [])
    assert PB + "expect_broker_disk_within_limit" not in validate_plan(within, path).failed_expectations()
    over = write_gate_plan(tmp_path / "over", path, [[("t", 0, [2]), ("t", 1, [2])]], [])
    assert rows_of(over, path, PB + "expect_broker_disk_within_limit") == [
        "broker 2: 2,000,000 bytes after the plan, 130,000 above its disk limit of 1,870,000 bytes (max_disk_usage of "
        "its log dirs' capacity)"]
    # The plan's own max_disk_usage is the limit: at 1.0, 2.2 MB hold both.
    roomy = write_gate_plan(tmp_path / "roomy", path, [[("t", 0, [2]), ("t", 1, [2])]], [], max_disk_usage=1.0)
    assert PB + "expect_broker_disk_within_limit" not in validate_plan(roomy, path).failed_expectations()


def test_a_later_validation_never_overwrites_a_passed_verdict_for_the_same_plan(good_plan, tmp_path) -> None:
    """Validated, approved (and perhaps executed), then validated again against the wrong snapshot: the passed
    verdict and its result stay byte for byte; the new one is written beside them, and its report names the
    mismatch on its first line, before any suite."""
    from kafka_rebalance.plan_dir import record_approval
    from kafka_rebalance.plan_manifest import load_plan

    plan, snapshot = good_plan
    assert validate_plan(plan, snapshot).status == "passed"
    record_approval(plan, "approved", "alice")
    kept = {name: (plan / "validation" / name).read_bytes() for name in ("verdict.json", "result.json")}
    other = small_snapshot()
    other["captured_at"] = "2026-02-01T00:00:00Z"
    write_json(tmp_path / "other.json", other)

    outcome = validate_plan(plan, tmp_path / "other.json")

    assert outcome.status == "failed" and outcome.exit_code == 1
    first = outcome.report().splitlines()[0]
    assert first.startswith("validation failed: ") and "not the snapshot this plan was made from" in first
    assert outcome.kept_beside == plan / "validation" / "attempts" / "001"
    assert load(outcome.kept_beside / "result.json")["status"] == "failed"
    assert {name: (plan / "validation" / name).read_bytes() for name in kept} == kept
    assert load_plan(plan, require_approval=True).plan_hash == load(plan / "plan.json")["plan_hash"]
    # A second one goes to the next free attempt.
    assert validate_plan(plan, snapshot).kept_beside == plan / "validation" / "attempts" / "002"


# --------------------------------------------------------------------------- topic spread

SIZE_1MB = 1_000_000
SPREAD_GOALS = ["replica-count", "bytes", "topic-spread", "preferred-leader", "leader-imbalance"]


def spread_plan(tmp: Path, moves: list[tuple[str, int, list[int]]], goals: list[str]) -> tuple[Path, Path]:
    """Brokers 0..3 without racks; topics a and b of 8 single-replica 1 MB partitions each, partition i on
    broker i % 4: every broker holds 2 of each topic (the share 8 / 4) and is first replica of them, so
    every topic-spread figure is 0 before the plan. ``moves``: one batch; every moved partition elected."""
    parts = [{"topic": t, "partition": i, "replicas": [i % 4], "leader": i % 4, "isr": [i % 4], "size_bytes": SIZE_1MB}
             for t in "ab" for i in range(8)]
    snap = {"cluster_id": "spread", "captured_at": "2026-01-01T00:00:00Z", "controller": "kraft", "configs": {},
            "brokers": [{"id": b, "rack": None, "alive": True, "configs": {}} for b in range(4)],
            "topics": {"a": {"configs": {}}, "b": {"configs": {}}}, "partitions": parts}
    path = tmp / "snapshot.json"
    write_json(path, snap)
    election = [(t, p) for t, p, _ in moves]
    return write_gate_plan(tmp / "plan", path, [moves], election, goals=goals), path



def test_a_plan_keeping_each_topics_spread_passes(tmp_path) -> None:
    # a-0 (broker 0) and a-1 (broker 1) trade brokers: every count, byte and topic count stays.
    plan, snapshot = spread_plan(tmp_path, [("a", 0, [1]), ("a", 1, [0])], SPREAD_GOALS)
    outcome = validate_plan(plan, snapshot)
    assert outcome.status == "passed", outcome.report()


def test_a_plan_breaking_the_spread_fails_the_topic_spread_expectation(tmp_path) -> None:
    # a-0 (broker 0) and b-2 (broker 2) trade brokers: counts, bytes and first-replica counts stay, but broker 0
    # ends with 1 of a and 3 of b against 2..2 each, replicas and first replicas alike: 4 outside, was 0.
    moves = [("a", 0, [2]), ("b", 2, [0])]
    plan, snapshot = spread_plan(tmp_path, moves, SPREAD_GOALS)
    assert failed(plan, snapshot) == {PB + "expect_broker_topic_spread_not_worse_off"}
    assert rows_of(plan, snapshot, PB + "expect_broker_topic_spread_not_worse_off") == [
        "broker 0: 4 replicas and first replicas outside their topics' bands after the plan (was 0)",
        "broker 2: 4 replicas and first replicas outside their topics' bands after the plan (was 0)"]
    # A plan that left the goal out is not held to it: the column is empty, the expectation passes.
    other = tmp_path / "without"
    other.mkdir()
    plan, snapshot = spread_plan(other, moves, ["replica-count", "bytes", "preferred-leader", "leader-imbalance"])
    assert validate_plan(plan, snapshot).status == "passed"


# --------------------------------------------------------------------------- network in

NETWORK_GOALS = ["replica-count", "bytes", "network-in", "preferred-leader", "leader-imbalance"]


def test_a_plan_moving_a_hot_partition_onto_a_cool_broker_fails_the_network_in_expectation(tmp_path) -> None:
    # Topic a: 8 single-replica 1 MB partitions, a-i on broker i % 4, each producing 10 B/s but a-0 at 100.
    # In: broker 0 = 110, the others 20; share 170 / 4 = 42.5. a-0 and a-1 trade brokers: counts, bytes and
    # first replicas stay, broker 0 drops to 20 (52.9 % off, was 158.8 %) but broker 1 rises to 110: 158.8 %
    # off against the 52.9 % it started at.
    parts = [{"topic": "a", "partition": i, "replicas": [i % 4], "leader": i % 4, "isr": [i % 4], "size_bytes": SIZE_1MB,
              "bytes_in_per_sec": 100.0 if i == 0 else 10.0} for i in range(8)]
    snap = {"cluster_id": "net", "captured_at": "2026-01-01T00:00:00Z", "controller": "kraft", "configs": {},
            "brokers": [{"id": b, "rack": None, "alive": True, "configs": {}} for b in range(4)],
            "topics": {"a": {"configs": {}}}, "partitions": parts}
    path = tmp_path / "snapshot.json"
    write_json(path, snap)
    moves = [("a", 0, [1]), ("a", 1, [0])]
    plan = write_gate_plan(tmp_path / "plan", path, [moves], [("a", 0), ("a", 1)], goals=NETWORK_GOALS)
    assert failed(plan, path) == {PB + "expect_broker_network_in_not_worse_off"}
    assert rows_of(plan, path, PB + "expect_broker_network_in_not_worse_off") == [
        "broker 1: network in 158.8% from its share after the plan (allowed 52.9%)"]
