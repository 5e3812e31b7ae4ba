"""The plan directory's files as written (docs/PLAN_FORMAT.md): schedule.json byte for byte, the
manifest's fields, and ``write_plan``'s refusals, on a two-step plan built by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_rebalance import __version__
from kafka_rebalance.cluster.admin import TP
from kafka_rebalance.errors import PlanError
from kafka_rebalance.plan_manifest import PlanSchedule, ScheduledMove, load_plan
from kafka_rebalance.planner import PlanOptions
from kafka_rebalance.planner.batching import PlannedBatch
from kafka_rebalance.planner.core import Plan
from kafka_rebalance.planner.files import render, schedule_bytes, write_plan
from kafka_rebalance.planner.schedule import Schedule, ScheduledStep
from kafka_rebalance.planner.steps import Step
from tests.support.clusters import part, snapshot

# t-0 goes [0, 1] -> [2, 1] -> [2, 3] in two steps of 1000 bytes each, producing 2.5 B/s. Leader 0
# leaves in the first step, so broker 1 (the first replica kept) leads the second.
FIRST = Step(0, "t", 0, (0, 1), (2, 1), (2,), (0,), 0, 0, 1000, 2.5)
SECOND = Step(0, "t", 0, (2, 1), (2, 3), (3,), (1,), 1, 1, 1000, 2.5)
BATCH_OF = {(0, 0): "001", (0, 1): "002"}
# Times chosen so that one decimal, two decimals and none all differ: 0.04 -> 0.0, 1.26 -> 1.3,
# 2.51 -> 2.5, 1.84 -> 1.8 (and 1.24 -> 1.2 for the second batch's estimate).
SCHEDULE = Schedule([ScheduledStep(FIRST, None, 0.04, 1.26), ScheduledStep(SECOND, 0, 1.26, 2.51)], 2.51, 1.84, 5, 50)


def plan(first_batch_seconds: float = 1.26, schedule: Schedule = SCHEDULE) -> Plan:
    snap = snapshot([0, 1, 2, 3], [part("t", 0, [0, 1], size=1000)])
    throttles = {"rate_bytes_per_sec": 52428800, "brokers": {}, "topics": {}}
    summary = {"replica_moves": 2, "bytes_moved": 2000, "reorders": 0, "leader_elections": 1, "estimated_seconds": 2.5}
    return Plan(snap, PlanOptions(), [PlannedBatch("move", [FIRST], first_batch_seconds), PlannedBatch("move", [SECOND], 1.24)],
                [("t", 0)], summary, [throttles, throttles], schedule)


def test_schedule_json_byte_for_byte() -> None:
    # The head's keys sorted, then "steps" last; one compact step per line, keys sorted; times to one decimal.
    expected = (
        '{"estimated_seconds":2.5,"max_in_flight":50,"max_moves_per_broker":5,"move_fixed_seconds":2.0,"physical_bound_seconds":1.8,'
        '"throttle_bytes_per_sec":52428800,"throttle_efficiency":1.0,"version":1,"steps":[\n'
        '{"adds":[2],"after":null,"batch":"001","before":[0,1],"bytes":1000,"estimated_end_s":1.3,'
        '"estimated_start_s":0.0,"id":0,"leader":0,"partition":0,"produce_bytes_per_sec":2.5,"removes":[0],'
        '"replicas":[2,1],"topic":"t"},\n'
        '{"adds":[3],"after":0,"batch":"002","before":[2,1],"bytes":1000,"estimated_end_s":2.5,'
        '"estimated_start_s":1.3,"id":1,"leader":1,"partition":0,"produce_bytes_per_sec":2.5,"removes":[1],'
        '"replicas":[2,3],"topic":"t"}\n'
        ']}\n'
    )
    assert schedule_bytes(plan(), BATCH_OF).decode("utf-8") == expected


def test_a_schedule_without_steps_is_still_one_json_document() -> None:
    empty = plan(schedule=Schedule([], 0.0, 0.0, 5, 50))
    text = schedule_bytes(empty, {}).decode("utf-8")
    assert text == (
        '{"estimated_seconds":0.0,"max_in_flight":50,"max_moves_per_broker":5,"move_fixed_seconds":2.0,"physical_bound_seconds":0.0,'
        '"throttle_bytes_per_sec":52428800,"throttle_efficiency":1.0,"version":1,"steps":[\n]}\n'
    )
    assert json.loads(text)["steps"] == []


def test_render_lists_every_file_and_the_manifest_fields() -> None:
    p = plan()
    files, manifest = render(p, "snaps/s.json")
    assert sorted(files) == [
        "RUNBOOK.md", "batches/001/reassignment.json", "batches/001/rollback.json", "batches/001/throttles.json",
        "batches/002/reassignment.json", "batches/002/rollback.json", "batches/002/throttles.json",
        "election.json", "plan.json", "schedule.json",
    ]
    assert manifest["tool_version"] == __version__
    assert manifest["snapshot"] == {"sha256": p.snapshot.fingerprint(), "captured_at": "2026-01-01T00:00:00Z",
                                    "path": "snaps/s.json"}
    # bytes: one new replica of 1000 bytes each; estimates to one decimal (1.26 -> 1.3, 1.24 -> 1.2); the
    # continuous shares: batch 002's move ends 1.2 s after batch 001's (schedule.json ends 1.3 and 2.5)
    assert manifest["batches"] == [
        {"id": "001", "kind": "move", "partitions": 1, "replica_moves": 1, "bytes": 1000, "estimated_seconds": 1.3,
         "estimated_seconds_continuous": 1.3},
        {"id": "002", "kind": "move", "partitions": 1, "replica_moves": 1, "bytes": 1000, "estimated_seconds": 1.2,
         "estimated_seconds_continuous": 1.2},
    ]
    # Kafka's reassignment JSON for the first batch, as kafka-reassign-partitions.sh reads it.
    assert files["batches/001/reassignment.json"].decode("utf-8") == (
        '{\n  "partitions": [\n    {\n      "log_dirs": [\n        "any",\n        "any"\n      ],\n'
        '      "partition": 0,\n      "replicas": [\n        2,\n        1\n      ],\n      "topic": "t"\n'
        '    }\n  ],\n  "version": 1\n}\n'
    )
    assert json.loads(files["batches/002/rollback.json"])["partitions"][0]["replicas"] == [2, 1]
    assert files["schedule.json"] == schedule_bytes(p, BATCH_OF)


def test_write_plan_writes_then_finds_the_same_plan_unchanged(tmp_path: Path) -> None:
    out = tmp_path / "p"
    manifest, status = write_plan(plan(), out, "snaps/s.json")
    assert status == "written"
    files, _ = render(plan(), "snaps/s.json")
    on_disk = {f.relative_to(out).as_posix(): f.read_bytes() for f in out.rglob("*") if f.is_file()}
    assert on_disk == files
    again, status = write_plan(plan(), out, "elsewhere/s.json")  # the snapshot's path is outside the hash
    assert status == "unchanged" and again["plan_hash"] == manifest["plan_hash"]


def test_the_schedule_written_is_the_schedule_the_executor_reads(tmp_path: Path) -> None:
    write_plan(plan(), tmp_path / "p", "snaps/s.json")
    read = load_plan(tmp_path / "p", require_passed=False).schedule
    assert read == PlanSchedule(52428800, 5, 50, 2.5, 1.8, (
        ScheduledMove(0, TP("t", 0), "001", (0, 1), (2, 1), (2,), (0,), None, 0, 1000, 2.5, 0.0, 1.3),
        ScheduledMove(1, TP("t", 0), "002", (2, 1), (2, 3), (3,), (1,), 0, 1, 1000, 2.5, 1.3, 2.5),
    ), 1.0, 2.0)


def test_write_plan_refuses_a_directory_holding_another_plan(tmp_path: Path) -> None:
    out = tmp_path / "p"
    write_plan(plan(), out, "snaps/s.json")
    before = {f: f.read_bytes() for f in out.rglob("*") if f.is_file()}
    other = plan(first_batch_seconds=2.0)  # another estimate: another plan hash
    other_hash = render(other, "snaps/s.json")[1]["plan_hash"]
    with pytest.raises(PlanError) as err:
        write_plan(other, out, "snaps/s.json")
    assert str(err.value) == (f"--out {out}: directory is not empty and does not hold this plan (plan_hash {other_hash[:16]}); "
                              "choose a new directory or remove it")
    assert {f: f.read_bytes() for f in out.rglob("*") if f.is_file()} == before


def test_write_plan_refuses_a_file_and_a_directory_inside_a_plan(tmp_path: Path) -> None:
    afile = tmp_path / "f"
    afile.write_text("x")
    with pytest.raises(PlanError) as err:
        write_plan(plan(), afile, "snaps/s.json")
    assert str(err.value) == f"--out {afile}: exists and is not a directory"
    outer = tmp_path / "p"
    write_plan(plan(), outer, "snaps/s.json")
    nested = outer / "nested"
    with pytest.raises(PlanError) as err:
        write_plan(plan(), nested, "snaps/s.json")
    assert str(err.value) == (f"--out {nested}: inside plan directory {outer.resolve()}; "
                              "a plan is never written into another plan's directory")
    assert not nested.exists()
