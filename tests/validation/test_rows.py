"""The facts the GX suites judge, computed by ``validation.rows`` without GX.

Each case is small enough that every expected value is worked out by hand in the test.
The suites' verdicts over these facts are tested end to end in ``test_plan_suites.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kafka_rebalance.validation import projection, rows
from kafka_rebalance.validation.inputs import RawBatch, RawBroker, RawPartition, RawPlan, RawSnapshot
from kafka_rebalance.validation.table import Table, _spark_value


def snapshot(partitions: list[tuple[str, int, tuple[int, ...], int, tuple[int, ...], float]],
             brokers: list[tuple[int, str | None, bool]] | None = None, configs: dict[str, str] | None = None) -> RawSnapshot:
    brokers = brokers if brokers is not None else [(1, "a", True), (2, "b", True), (3, "c", True)]
    return RawSnapshot(
        source="mem", cluster_id="c1", configs=configs or {},
        brokers=[RawBroker(i, rack, alive) for i, rack, alive in brokers],
        partitions=[RawPartition(i, t, p, r, leader, isr, size, None) for i, (t, p, r, leader, isr, size) in enumerate(partitions)],
    )


def plan(tmp_path: Path, batches: list[list[tuple[str, int, list[int]]]], throttles: list[dict[str, Any]] | None = None,
         election: list[tuple[str, int]] | None = None, **options: Any) -> RawPlan:
    return RawPlan(
        dir=tmp_path, manifest={"options": options, "files": {}, "batches": []},
        batches=[RawBatch(f"{i + 1:03d}", [{"topic": t, "partition": p, "replicas": r} for t, p, r in moves],
                          (throttles or [{}] * len(batches))[i]) for i, moves in enumerate(batches)],
        election=election or [],
    )


def of_kind(table: Table, kind: str) -> list[dict[str, Any]]:
    return [r for r in table.rows if r["kind"] == kind]


# --------------------------------------------------------------------------- the table itself


def test_table_numbers_rows_and_refuses_undeclared_columns() -> None:
    t = Table("s")
    t.add("broker", "broker 1", broker_id=1)
    t.add("broker", "broker 2", broker_id=2)
    assert [r["row"] for r in t.rows] == [0, 1]
    with pytest.raises(KeyError, match="brokerid"):
        t.add("broker", "broker 3", brokerid=3)


def test_table_columns_follow_the_declared_order_and_include_declared_empty_ones() -> None:
    t = Table("s", declared=("schedule_consistent",))
    t.add("x", "w", size_bytes=1.5, topic="t")
    assert t.columns == ["row", "kind", "where", "topic", "size_bytes", "schedule_consistent"]
    frame = t.to_pandas()
    assert list(frame.columns) == t.columns
    assert str(frame["row"].dtype) == "Int64" and str(frame["schedule_consistent"].dtype) == "boolean"
    assert frame["schedule_consistent"].isna().all()
    assert t.spark_schema() == "`row` bigint, `kind` string, `where` string, `topic` string, `size_bytes` double, " \
                               "`schedule_consistent` boolean"


def test_spark_values_are_coerced_to_the_column_type() -> None:
    assert _spark_value(None, "double") is None
    assert _spark_value(3, "double") == 3.0 and isinstance(_spark_value(3, "double"), float)
    assert _spark_value((1, 2), "array<bigint>") == [1, 2]
    assert _spark_value("x", "string") == "x"


# --------------------------------------------------------------------------- snapshot suite


def test_snapshot_rows_state_each_partition_fact() -> None:
    snap = snapshot([
        ("ok", 0, (1, 2), 1, (2, 1), 10.0),
        ("dup", 0, (1, 1), 1, (1,), 0.0),
        ("unknown", 0, (1, 9), -1, (), 0.0),       # no leader is fine; broker 9 is unknown
        ("badleader", 0, (1, 2), 3, (1, 2), 0.0),
        ("isrout", 0, (1, 2), 1, (1, 3), 0.0),      # ISR member outside the replicas
        ("isrdup", 0, (1, 2), 1, (1, 1), 0.0),      # ISR with a repeat
        ("empty", 0, (), -1, (), 0.0),
    ])
    facts = {r["topic"]: r for r in of_kind(rows.snapshot_table(snap), "partition")}
    pick = lambda t: (facts[t]["replicas_nonempty"], facts[t]["replicas_distinct"], facts[t]["replicas_known"],  # noqa: E731
                      facts[t]["leader_ok"], facts[t]["isr_subset"])
    assert pick("ok") == (True, True, True, True, True)
    assert pick("dup") == (True, False, True, True, True)
    assert pick("unknown") == (True, True, False, True, True)
    assert pick("badleader") == (True, True, True, False, True)
    assert pick("isrout") == (True, True, True, True, False)
    assert pick("isrdup") == (True, True, True, True, False)
    assert pick("empty") == (False, True, True, True, True)
    assert facts["ok"]["where"] == "ok-0" and facts["ok"]["replicas"] == [1, 2] and facts["ok"]["isr"] == [2, 1]
    assert [r["broker_id"] for r in of_kind(rows.snapshot_table(snap), "broker")] == [1, 2, 3]


# --------------------------------------------------------------------------- plan facts

FOUR_RACKS = [(1, "a", True), (2, "b", True), (3, "c", True), (4, "c", True), (5, "d", False)]


def test_move_rows_count_racks_over_live_brokers_only(tmp_path: Path) -> None:
    snap = snapshot([("t", 0, (1, 2, 3), 1, (1, 2, 3), 0.0)], brokers=FOUR_RACKS)
    table = rows.plan_table(snap, plan(tmp_path, [[("t", 0, [1, 3, 4])]]))
    (move,) = of_kind(table, "move")
    # Racks a, c, c: two spanned. Rack d has only a dead broker, so 3 racks can be required.
    assert (move["racks_spanned"], move["racks_required"]) == (2, 3)
    assert (move["replica_count"], move["rf_expected"], move["in_snapshot"], move["replicas_distinct"]) == (3, 3, True, True)
    assert move["replicas_before"] == [1, 2, 3] and move["where"] == "batch 001 t-0"


def test_racks_required_is_capped_by_distinct_replicas(tmp_path: Path) -> None:
    snap = snapshot([("t", 0, (1, 2), 1, (1, 2), 0.0)], brokers=FOUR_RACKS)
    (move,) = of_kind(rows.plan_table(snap, plan(tmp_path, [[("t", 0, [1, 1])]])), "move")
    assert (move["racks_required"], move["replicas_distinct"]) == (1, False)


def test_no_rack_information_means_no_rack_facts(tmp_path: Path) -> None:
    snap = snapshot([("t", 0, (1, 2), 1, (1, 2), 0.0)], brokers=[(1, None, True), (2, None, True), (3, None, True)])
    (move,) = of_kind(rows.plan_table(snap, plan(tmp_path, [[("t", 0, [1, 3])]])), "move")
    assert move["racks_spanned"] is None and move["racks_required"] is None


def test_decommissioned_broker_may_keep_but_never_receive_a_replica(tmp_path: Path) -> None:
    brokers = [(1, "a", True), (2, "b", True), (3, "c", True), (4, "a", True)]
    snap = snapshot([("t", 0, (1, 2), 1, (1, 2), 0.0), ("t", 1, (2, 3), 2, (2, 3), 0.0)], brokers=brokers)
    p = plan(tmp_path, [[("t", 0, [4, 2]), ("t", 1, [1, 3])]], decommission_brokers=[1])
    moves = {r["partition"]: r for r in of_kind(rows.plan_table(snap, p), "move")}
    assert moves[0]["targets_eligible"] is True    # broker 1 leaves, 4 arrives
    assert moves[1]["targets_eligible"] is False   # broker 1 receives a replica
    assert rows._new_replicas_eligible([1, 4], (1, 2), {2, 3, 4}) is True   # 1 only stays
    assert rows._new_replicas_eligible([1, 4], None, {2, 3, 4}) is False


def test_replication_factor_option_sets_the_expected_count(tmp_path: Path) -> None:
    snap = snapshot([("t", 0, (1, 2), 1, (1, 2), 0.0)])
    (move,) = of_kind(rows.plan_table(snap, plan(tmp_path, [[("t", 0, [1, 2, 3])]], replication_factor=3)), "move")
    assert (move["replica_count"], move["rf_expected"]) == (3, 3)
    (move,) = of_kind(rows.plan_table(snap, plan(tmp_path, [[("t", 0, [1, 2, 3])]])), "move")
    assert (move["replica_count"], move["rf_expected"]) == (3, 2)


def test_unknown_partition_is_reported_not_in_snapshot(tmp_path: Path) -> None:
    snap = snapshot([("t", 0, (1, 2), 1, (1, 2), 0.0)])
    (move,) = of_kind(rows.plan_table(snap, plan(tmp_path, [[("ghost", 5, [1, 2])]])), "move")
    assert (move["in_snapshot"], move["replicas_before"], move["rf_expected"]) == (False, None, None)


def test_broker_moves_count_arrivals_and_departures_per_batch_against_the_state_so_far(tmp_path: Path) -> None:
    snap = snapshot([("t", 0, (1, 2), 1, (1, 2), 0.0), ("t", 1, (1, 3), 1, (1, 3), 0.0)])
    # Batch 1: t-0 1,2 -> 3,2 (1 leaves, 3 arrives); t-1 reordered only (no data move).
    # Batch 2: t-0 3,2 -> 3,1 (2 leaves, 1 arrives): judged against batch 1's result.
    p = plan(tmp_path, [[("t", 0, [3, 2]), ("t", 1, [3, 1])], [("t", 0, [3, 1])]])
    table = rows.plan_table(snap, p)
    per = {(r["batch"], r["broker_id"]): r["broker_moves"] for r in of_kind(table, "broker_batch")}
    assert per == {("001", 1): 1, ("001", 3): 1, ("002", 1): 1, ("002", 2): 1}
    assert {r["batch"]: r["batch_partitions"] for r in of_kind(table, "batch")} == {"001": 2, "002": 1}
    second = [r for r in of_kind(table, "move") if r["batch"] == "002"][0]
    assert second["replicas_before"] == [3, 2]


def test_plan_parameters_come_from_the_options(tmp_path: Path) -> None:
    snap = snapshot([("t", 0, (1, 2), 1, (1, 2), 0.0)])
    p = plan(tmp_path, [], max_partitions_per_batch=7, max_moves_per_broker=3, throttle_bytes_per_sec=1000,
             exclude_topics=["x"])
    assert rows.plan_table(snap, p).parameters == {
        "max_partitions_per_batch": 7, "max_moves_per_broker": 3, "throttle_max_bytes_per_sec": 1000,
        "exclude_topics": ["x"],
    }


def test_throttle_rows_for_the_rate_and_each_broker_rate_in_numeric_broker_order() -> None:
    throttles = {
        "rate_bytes_per_sec": 100,
        "brokers": {
            "10": {"leader.replication.throttled.rate": "5", "unrelated": "x"},
            "2": {"follower.replication.throttled.rate": "abc", "leader.replication.throttled.rate": "7"},
        },
    }
    assert rows._throttle_rates(throttles) == [
        ("rate_bytes_per_sec", 100.0),
        ("broker 2 follower.replication.throttled.rate", -1.0),
        ("broker 2 leader.replication.throttled.rate", 7.0),
        ("broker 10 leader.replication.throttled.rate", 5.0),
    ]
    assert rows._throttle_rates({}) == []
    assert rows._rate("1.5") == -1.0 and rows._rate(" 12") == 12.0


def test_throttle_rows_are_named_after_their_batch(tmp_path: Path) -> None:
    snap = snapshot([("t", 0, (1, 2), 1, (1, 2), 0.0)])
    p = plan(tmp_path, [[("t", 0, [3, 2])]], throttles=[{"rate_bytes_per_sec": "42"}])
    (row,) = of_kind(rows.plan_table(snap, p), "throttle")
    assert (row["where"], row["throttle_field"], row["throttle_rate"]) == ("batch 001 throttles.json rate_bytes_per_sec",
                                                                           "rate_bytes_per_sec", 42.0)


def test_file_rows_compare_recorded_and_actual_hashes(tmp_path: Path) -> None:
    snap = snapshot([("t", 0, (1, 2), 1, (1, 2), 0.0)])
    snap.fingerprint = "f" * 64
    (tmp_path / "batches" / "001").mkdir(parents=True)
    (tmp_path / "batches" / "001" / "reassignment.json").write_text("{}")
    p = plan(tmp_path, [])
    p.manifest["files"] = {"batches/001/reassignment.json": "recorded", "election.json": "gone"}
    p.manifest["snapshot"] = {"sha256": "f" * 64}
    files = {r["path"]: (r["recorded_sha256"], r["actual_sha256"]) for r in of_kind(rows.plan_table(snap, p), "file")}
    assert files["batches/001/reassignment.json"] == ("recorded", rows.sha256_file(tmp_path / "batches/001/reassignment.json"))
    assert files["election.json"] == ("gone", None)  # listed, not on disk
    assert files["snapshot fingerprint"] == ("f" * 64, "f" * 64)
    assert files["plan.json plan_hash"][0] is None and files["plan.json plan_hash"][1] == rows.plan_hash(p.manifest)


def test_unhashable_manifest_gives_no_hash() -> None:
    assert rows.plan_hash({"options": {"x": float("nan")}}) is None


# --------------------------------------------------------------------------- schedule


MOVES = {("001", "t", 0): ((1, 2), (3, 2)), ("002", "t", 0): ((3, 2), (3, 1))}


def step(n: int, batch: str, before: list[int], after_replicas: list[int], adds: list[int], removes: list[int],
         after: int | None) -> dict[str, Any]:
    return {"id": n, "batch": batch, "topic": "t", "partition": 0, "before": before, "replicas": after_replicas,
            "adds": adds, "removes": removes, "after": after}


GOOD = [step(0, "001", [1, 2], [3, 2], [3], [1], None), step(1, "002", [3, 2], [3, 1], [1], [2], 0)]


def test_a_schedule_matching_the_batches_has_no_problem() -> None:
    assert rows._schedule_problems(GOOD, MOVES) == [("schedule.json step 0 t-0", None), ("schedule.json step 1 t-0", None)]


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda s: s[1].update(id=5), "id 5, expected 1 (steps are numbered in order)"),
        (lambda s: s[1].update(batch="003"), "batch 003 has no data move of this partition"),
        (lambda s: s[1].update(replicas=[3, 4]), "[3, 2] -> [3, 4], but batch 002 moves [3, 2] -> [3, 1]"),
        (lambda s: s[1].update(adds=[4]), "adds [4] / removes [2] are not the difference between [3, 2] and [3, 1]"),
        (lambda s: s[1].update(removes="2"), "adds [1] / removes 2 are not the difference between [3, 2] and [3, 1]"),
        (lambda s: s[1].update(after=None), "after None, but the partition's previous step is 0"),
    ],
)
def test_each_schedule_edit_is_named(edit: Any, problem: str) -> None:
    steps = [dict(s) for s in GOOD]
    edit(steps)
    out = rows._schedule_problems(steps, MOVES)
    assert out[0] == ("schedule.json step 0 t-0", None)
    assert out[1] == ("schedule.json step 1 t-0", problem)


def test_a_repeated_step_and_a_missing_move_are_both_reported() -> None:
    steps = [GOOD[0], dict(GOOD[0], id=1)]
    out = rows._schedule_problems(steps, MOVES)
    assert out[1] == ("schedule.json step 1 t-0", "repeats batch 001's move")
    assert out[2] == ("batch 002 t-0", "this data move is missing from schedule.json")
    assert len(out) == 3


def test_id_list_accepts_only_lists_of_ints() -> None:
    assert rows._id_list([3, 1]) == [1, 3]
    assert rows._id_list([1, True]) is None and rows._id_list("1") is None and rows._id_list([1.0]) is None


def test_schedule_rows_are_in_the_plan_table(tmp_path: Path) -> None:
    snap = snapshot([("t", 0, (1, 2), 1, (1, 2), 0.0)])
    p = plan(tmp_path, [[("t", 0, [3, 2])]])
    p.schedule = [step(0, "001", [1, 2], [3, 2], [3], [1], None)]
    (row,) = of_kind(rows.plan_table(snap, p), "schedule")
    assert (row["schedule_consistent"], row["schedule_problem"]) == (True, None)
    p.schedule = []
    (row,) = of_kind(rows.plan_table(snap, p), "schedule")
    assert (row["where"], row["schedule_consistent"]) == ("batch 001 t-0", False)


# --------------------------------------------------------------------------- projected state


def test_project_follows_kafka_leadership_rules(tmp_path: Path) -> None:
    brokers = [(1, "a", True), (2, "b", True), (3, "c", True), (4, "a", False)]
    snap = snapshot([
        ("stay", 0, (1, 2), 2, (1, 2), 0.0),     # leader 2 stays a replica: keeps leading
        ("left", 0, (1, 2), 1, (1, 2), 0.0),     # leader 1 leaves: first live new replica leads
        ("dead", 0, (1, 2), 1, (1, 2), 0.0),     # new list starts on dead broker 4
        ("order", 0, (1, 2), 2, (2,), 0.0),      # reorder only: leader and ISR unchanged
        ("elect", 0, (1, 2), 2, (1, 2), 0.0),    # election to preferred 1 (alive, in sync)
        ("noelect", 0, (4, 2), 2, (2,), 0.0),    # preferred 4 is dead: no election
        ("notsync", 0, (1, 2), 2, (2,), 0.0),    # preferred 1 is out of sync: no election
    ], brokers=brokers)
    p = plan(tmp_path, [[("stay", 0, [3, 2]), ("left", 0, [3, 2]), ("dead", 0, [4, 3]), ("order", 0, [2, 1]),
                         ("ghost", 0, [1, 2])]],
             election=[("elect", 0), ("noelect", 0), ("notsync", 0), ("ghost", 1)])
    state = projection.project(snap, p)
    assert state[("stay", 0)] == rows.PartitionState((3, 2), 2, (3, 2))
    assert state[("left", 0)] == rows.PartitionState((3, 2), 3, (3, 2))
    assert state[("dead", 0)] == rows.PartitionState((4, 3), 3, (3,))
    assert state[("order", 0)] == rows.PartitionState((2, 1), 2, (2,))
    assert state[("elect", 0)].leader == 1
    assert state[("noelect", 0)].leader == 2
    assert state[("notsync", 0)].leader == 2
    assert ("ghost", 0) not in state and ("ghost", 1) not in state


def test_a_move_onto_dead_brokers_only_leaves_the_partition_offline(tmp_path: Path) -> None:
    snap = snapshot([("t", 0, (1, 2), 1, (1, 2), 0.0)], brokers=[(1, "a", True), (2, "b", True), (3, "c", False)])
    assert projection.project(snap, plan(tmp_path, [[("t", 0, [3])]]))[("t", 0)] == rows.PartitionState((3,), -1, ())


def test_per_broker_counts() -> None:
    state = {("t", 0): rows.PartitionState((1, 2), 2, (1, 2)), ("t", 1): rows.PartitionState((1, 3), -1, ()),
             ("t", 2): rows.PartitionState((), -1, ())}
    c = projection._per_broker(state, {("t", 0): 10.0, ("t", 1): 5.0})
    assert c["replicas"] == {1: 2, 2: 1, 3: 1}
    assert c["bytes"] == {1: 15, 2: 10, 3: 5}
    assert c["preferred"] == {1: 2}
    assert c["preferred_not_led"] == {1: 2}   # led by 2, and leaderless
    assert c["leaders"] == {2: 1}


def test_threshold_option_then_broker_config_then_kafka_default(tmp_path: Path) -> None:
    snap = snapshot([], configs={"leader.imbalance.per.broker.percentage": "25"})
    assert projection.threshold(snap, plan(tmp_path, [], threshold_percentage=5)) == 5.0
    assert projection.threshold(snap, plan(tmp_path, [])) == 25.0
    assert projection.threshold(snapshot([]), plan(tmp_path, [])) == 10.0


def test_targets_need_an_eligible_broker(tmp_path: Path) -> None:
    snap = snapshot([("t", 0, (1,), 1, (1,), 0.0)], brokers=[(1, "a", True)])
    assert projection.targets(snap, plan(tmp_path, [], decommission_brokers=[1])) is None


def test_targets_are_none_when_no_placement_can_be_rack_safe(tmp_path: Path) -> None:
    snap = snapshot([("t", 0, (1, 2), 1, (1, 2), 0.0)], brokers=[(1, "a", True), (2, "b", True)])
    assert projection.targets(snap, plan(tmp_path, [], replication_factor=3)) is None


def test_targets_split_replicas_and_bytes_over_eligible_brokers(tmp_path: Path) -> None:
    # Six RF-2 partitions of 100 bytes over three brokers in three racks: 4 replicas and
    # 400 bytes each. The excluded topic's replica on broker 1 is fixed load there.
    parts = [("t", i, (1 + i % 3, 1 + (i + 1) % 3), 1 + i % 3, (1 + i % 3,), 100.0) for i in range(6)]
    snap = snapshot([*parts, ("x", 0, (1,), 1, (1,), 60.0)])
    ranges, byte_mean = projection.targets(snap, plan(tmp_path, [], exclude_topics=["x"]))
    assert sum(lo for lo, _ in ranges.values()) <= 13 <= sum(hi for _, hi in ranges.values())
    assert sorted(ranges) == [1, 2, 3] and sorted(byte_mean) == [1, 2, 3]
    assert sum(byte_mean.values()) == pytest.approx(1260.0)


# --------------------------------------------------------------------------- projected balance


def test_balance_rows_after_a_plan(tmp_path: Path) -> None:
    # Broker 1 holds every replica's preferred slot and broker 3 is empty. The plan moves one
    # replica of each of t-0..t-2 from broker 2 to broker 3 and elects nothing.
    snap = snapshot([("t", i, (1, 2), 1, (1, 2), 100.0) for i in range(3)])
    p = plan(tmp_path, [[("t", 0, [1, 3]), ("t", 1, [1, 3])]], byte_tolerance=0.1)
    table = projection.balance_table(snap, p)
    by = {r["broker_id"]: r for r in of_kind(table, "broker")}
    # 6 replicas over 3 brokers: 2 each; 1 has 3, 2 has 1, 3 has 2.
    assert {b: r["replicas_after"] for b, r in by.items()} == {1: 3, 2: 1, 3: 2}
    assert {b: (r["replica_lo"], r["replica_hi"]) for b, r in by.items()} == {1: (2, 2), 2: (2, 2), 3: (2, 2)}
    assert {b: r["replicas_off_target"] for b, r in by.items()} == {1: 1, 2: 1, 3: 0}
    assert {b: r["replica_count_before"] for b, r in by.items()} == {1: 3, 2: 3, 3: 0}
    assert {b: (r["size_before"], r["size_after"]) for b, r in by.items()} == {1: (300, 300), 2: (300, 100), 3: (0, 200)}
    assert {b: r["byte_target"] for b, r in by.items()} == {1: 200.0, 2: 200.0, 3: 200.0}
    assert by[1]["byte_deviation_after"] == pytest.approx(0.5)
    assert by[2]["byte_deviation_after"] == pytest.approx(0.5)
    assert by[3]["byte_deviation_after"] == 0.0
    # Before: 600 bytes on the eligible brokers, the same as the targets' total (scale 1).
    assert by[1]["byte_deviation_before"] == pytest.approx(0.5) and by[3]["byte_deviation_before"] == pytest.approx(1.0)
    assert by[3]["byte_deviation_allowed"] == pytest.approx(1.0 + 1e-9)
    assert by[2]["byte_deviation_allowed"] == pytest.approx(0.5 + 1e-9)
    assert (by[1]["preferred_after"], by[1]["leaders_after"], by[1]["imbalance_ratio_after"]) == (3, 3, 0.0)
    assert by[2]["imbalance_ratio_after"] is None   # prefers nothing
    assert table.parameters == {"threshold_ratio": 0.1, "replica_floor": 2, "replica_ceil": 2,
                                "preferred_floor": 1, "preferred_ceil": 1}
    assert of_kind(table, "leaving_broker") == []


def test_the_cluster_row_counts_partitions_off_their_rf_and_partitions_breaking_rack_safety(tmp_path: Path) -> None:
    # Racks: 1 and 2 in a, 3 and 4 in b. The plan puts t-0 on one rack (1, 2: a rack violation), gives t-1 a
    # third replica with no replication_factor asked (RF 3 against the 2 it had), and moves t-2 rack-safely.
    # x-0 sits on one rack too, but its topic is excluded: the plan may not move it, so it counts nowhere.
    brokers = [(1, "a", True), (2, "a", True), (3, "b", True), (4, "b", True)]
    parts = [("t", 0, (1, 3), 1, (1, 3), 0.0), ("t", 1, (1, 3), 1, (1, 3), 0.0), ("t", 2, (2, 4), 2, (2, 4), 0.0),
             ("x", 0, (1, 2), 1, (1, 2), 0.0)]
    moved = [[("t", 0, [1, 2]), ("t", 1, [1, 3, 4]), ("t", 2, [2, 3])]]
    (row,) = of_kind(projection.balance_table(snapshot(parts, brokers), plan(tmp_path, moved, exclude_topics=["x"])), "cluster")
    assert (row["rf_off_target_after"], row["rack_violations_after"]) == (1, 1)
    # Asked for RF 3, t-1 is on target and the two others are not; [1, 3, 4] spans both racks (cap 2 per rack).
    (row,) = of_kind(projection.balance_table(snapshot(parts, brokers), plan(tmp_path / "rf3", moved, exclude_topics=["x"],
                                                                        replication_factor=3)), "cluster")
    assert (row["rf_off_target_after"], row["rack_violations_after"]) == (2, 1)


def test_byte_tolerance_is_the_floor_of_the_allowed_deviation(tmp_path: Path) -> None:
    snap = snapshot([("t", i, (1 + i % 3,), 1 + i % 3, (1 + i % 3,), 100.0) for i in range(3)])
    by = {r["broker_id"]: r for r in of_kind(projection.balance_table(snap, plan(tmp_path, [], byte_tolerance=0.25)), "broker")}
    assert {b: r["byte_deviation_before"] for b, r in by.items()} == {1: 0.0, 2: 0.0, 3: 0.0}
    assert by[1]["byte_deviation_allowed"] == pytest.approx(0.25 + 1e-9)
    by = {r["broker_id"]: r for r in of_kind(projection.balance_table(snap, plan(tmp_path, [])), "broker")}
    assert by[1]["byte_deviation_allowed"] == pytest.approx(0.1 + 1e-9)   # the default tolerance


def test_imbalance_counts_only_topics_the_plan_may_touch(tmp_path: Path) -> None:
    # Broker 1 prefers t-0 (led by 2) and x-0 (led by 2, excluded): ratio 1/1, not 2/2 or 1/2.
    snap = snapshot([("t", 0, (1, 2), 2, (1, 2), 0.0), ("x", 0, (1, 3), 3, (1, 3), 0.0), ("t", 1, (2, 3), 2, (2, 3), 0.0)])
    by = {r["broker_id"]: r for r in of_kind(projection.balance_table(snap, plan(tmp_path, [], exclude_topics=["x"])), "broker")}
    assert by[1]["imbalance_ratio_after"] == 1.0
    assert by[1]["preferred_after"] == 2 and by[1]["preferred_before"] == 2
    by = {r["broker_id"]: r for r in of_kind(projection.balance_table(snap, plan(tmp_path, [])), "broker")}
    assert by[1]["imbalance_ratio_after"] == 1.0 and by[2]["imbalance_ratio_after"] == 0.0


def test_leaving_brokers_count_the_replicas_any_plan_could_have_moved(tmp_path: Path) -> None:
    brokers = [(1, "a", True), (2, "b", True), (3, "c", True), (4, "a", True), (5, "b", False)]
    snap = snapshot([
        ("t", 0, (4, 2), 4, (4, 2), 10.0),      # on decommissioned 4, movable, moved off below
        ("t", 1, (4, 3), 4, (4, 3), 10.0),      # on 4, movable, left there
        ("x", 0, (4, 1), 4, (4, 1), 10.0),      # excluded topic: stays, not counted
        ("t", 2, (5, 1), -1, (), 10.0),         # dead 5 without a leader: cannot move
    ], brokers=brokers)
    p = plan(tmp_path, [[("t", 0, [1, 2])]], decommission_brokers=[4], exclude_topics=["x"])
    table = projection.balance_table(snap, p)
    assert {r["broker_id"]: r["movable_replicas_after"] for r in of_kind(table, "leaving_broker")} == {4: 1, 5: 0}
    assert sorted(r["broker_id"] for r in of_kind(table, "broker")) == [1, 2, 3]
    # The stuck replicas on 4 and 5 (x-0, t-2) count in no total: 8 replicas - 2 = 6 over 3,
    # the two stuck replicas on broker 1 included.
    assert (table.parameters["replica_floor"], table.parameters["replica_ceil"]) == (2, 2)


def test_plain_bounds_when_the_plan_changes_totals_the_options_do_not_ask_for(tmp_path: Path) -> None:
    # The plan raises t-0 to three replicas though no replication factor is asked: the rack
    # targets (for RF 2) no longer add up, so the bounds are [floor, ceil] of 7 over 3.
    snap = snapshot([("t", i, (1 + i % 3, 1 + (i + 1) % 3), 1 + i % 3, (1 + i % 3,), 100.0) for i in range(3)])
    table = projection.balance_table(snap, plan(tmp_path, [[("t", 0, [1, 2, 3])]]))
    by = {r["broker_id"]: r for r in of_kind(table, "broker")}
    assert {b: (r["replica_lo"], r["replica_hi"]) for b, r in by.items()} == {1: (2, 3), 2: (2, 3), 3: (2, 3)}
    assert {b: r["byte_target"] for b, r in by.items()} == {b: 700 / 3 for b in (1, 2, 3)}


def test_projection_goes_on_past_an_unknown_partition_and_a_reorder_in_one_batch(tmp_path: Path) -> None:
    snap = snapshot([("t", 0, (1, 2), 1, (1, 2), 1.0), ("t", 1, (1, 2), 1, (1, 2), 1.0)])
    p = plan(tmp_path, [[("gone", 0, [1]), ("t", 0, [2, 1]), ("t", 1, [3, 2])]])
    state = projection.project(snap, p)
    assert state[("t", 0)] == rows.PartitionState((2, 1), 1, (1, 2))  # a reorder keeps leader and ISR
    # The leader left: Kafka elects the first live in-sync replica of the new list.
    assert state[("t", 1)] == rows.PartitionState((3, 2), 3, (3, 2))


def test_the_election_needs_the_preferred_replica_alive_and_in_sync(tmp_path: Path) -> None:
    brokers = [(1, "a", True), (2, "b", True), (3, "c", False)]
    snap = snapshot([
        ("t", 0, (3, 1), 1, (3, 1), 1.0),  # preferred 3 is dead (its ISR entry is stale): no election
        ("t", 1, (2, 1), 1, (1,), 1.0),  # preferred 2 is out of sync: no election
        ("t", 2, (2, 1), 1, (2, 1), 1.0),  # elected
    ], brokers)
    state = projection.project(snap, plan(tmp_path, [], election=[("t", 0), ("t", 1), ("t", 2)]))
    assert state[("t", 0)] == rows.PartitionState((3, 1), 1, (3, 1))
    assert state[("t", 1)] == rows.PartitionState((2, 1), 1, (1,))
    assert state[("t", 2)] == rows.PartitionState((2, 1), 2, (2, 1))


def test_leaderless_partitions_count_no_leader_and_stay_where_they_are(tmp_path: Path) -> None:
    state = {("t", 0): rows.PartitionState((1, 2), -1, ()), ("t", 1): rows.PartitionState((0, 1), 0, (0, 1))}
    c = projection._per_broker(state, {("t", 0): 10.0})
    assert dict(c["leaders"]) == {0: 1}
    assert dict(c["bytes"]) == {1: 10, 2: 10, 0: 0}
    assert dict(c["preferred_not_led"]) == {1: 1}
