"""Staged plans are durable: idempotent re-staging, never overwritten, decisions recorded once."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.orchestration.staging import record_decision, stage_plan
from kafka_rebalance.snapshot import load_snapshot
from tests.support.plans import move_one_replica, write_plan

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "sample-cluster.json"


def make_plan(d: Path, partitions: int = 2) -> Path:
    snap = load_snapshot(SAMPLE)
    return write_plan(d, snap, [move_one_replica(snap, partitions)])


def plan_hash(d: Path) -> str:
    return json.loads((d / "plan.json").read_text())["plan_hash"]


def test_stage_is_idempotent_and_keeps_later_records(tmp_path: Path) -> None:
    plan = make_plan(tmp_path / "p")
    staged = stage_plan(plan, "c1", root=tmp_path / "root")
    assert staged == tmp_path / "root" / "plans" / "c1" / plan_hash(plan)[:16]
    assert (staged / "batches" / "001" / "reassignment.json").read_bytes() == (plan / "batches/001/reassignment.json").read_bytes()
    record_decision(staged, "approved", "alice")
    # A retried run stages the same plan again: same directory, approval kept.
    again = stage_plan(plan, "c1", root=tmp_path / "root")
    assert again == staged and json.loads((staged / "approval.json").read_text())["by"] == "alice"
    assert json.loads((staged / "approval.json").read_text())["plan_hash"] == plan_hash(plan)
    assert [p.name for p in staged.parent.iterdir()] == [staged.name]  # no temp leftovers


def test_different_plan_under_the_same_name_is_refused(tmp_path: Path) -> None:
    p1, p2 = make_plan(tmp_path / "p1", 2), make_plan(tmp_path / "p2", 3)
    squatter = tmp_path / "root" / "plans" / "c1" / plan_hash(p2)[:16]
    shutil.copytree(p1, squatter)
    with pytest.raises(RebalanceError, match="already holds a different plan"):
        stage_plan(p2, "c1", root=tmp_path / "root")


def test_edited_plan_is_never_staged(tmp_path: Path) -> None:
    plan = make_plan(tmp_path / "p")
    manifest = json.loads((plan / "plan.json").read_text())
    manifest["batches"] = []
    (plan / "plan.json").write_text(json.dumps(manifest))
    with pytest.raises(RebalanceError, match="plan.json: batches: changed since planning"):
        stage_plan(plan, "c1", root=tmp_path / "root")
    assert not (tmp_path / "root" / "plans" / "c1").exists() or not any((tmp_path / "root" / "plans" / "c1").iterdir())


def test_decision_cannot_be_flipped(tmp_path: Path) -> None:
    staged = stage_plan(make_plan(tmp_path / "p"), "c1", root=tmp_path / "root")
    record_decision(staged, "rejected", "bob", "too big")
    record_decision(staged, "rejected", "bob")  # same decision again: fine
    with pytest.raises(RebalanceError, match="was already rejected by bob"):
        record_decision(staged, "approved", "mallory")


def test_not_a_plan_directory(tmp_path: Path) -> None:
    with pytest.raises(RebalanceError, match="plan.json: plan manifest does not exist"):
        stage_plan(tmp_path, "c1", root=tmp_path / "root")
