"""Staged plans are durable: idempotent re-staging, never overwritten, decisions recorded once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.staging import record_decision, stage_plan


def make_plan(d: Path, plan_hash: str, body: str = "a") -> Path:
    (d / "batches" / "001").mkdir(parents=True)
    (d / "batches" / "001" / "reassignment.json").write_text(body)
    (d / "plan.json").write_text(json.dumps({"plan_hash": plan_hash, "files": {"batches/001/reassignment.json": body}}))
    return d


def test_stage_is_idempotent_and_keeps_later_records(tmp_path: Path) -> None:
    plan = make_plan(tmp_path / "p", "ab" * 32)
    staged = stage_plan(plan, "c1", root=tmp_path / "root")
    assert staged == tmp_path / "root" / "plans" / "c1" / ("ab" * 8)
    assert (staged / "batches" / "001" / "reassignment.json").read_text() == "a"
    record_decision(staged, "approved", "alice")
    # A retried run stages the same plan again: same directory, approval kept.
    again = stage_plan(plan, "c1", root=tmp_path / "root")
    assert again == staged and json.loads((staged / "approval.json").read_text())["by"] == "alice"
    assert [p.name for p in staged.parent.iterdir()] == [staged.name]  # no temp leftovers


def test_different_plan_on_the_same_hash_is_refused(tmp_path: Path) -> None:
    stage_plan(make_plan(tmp_path / "p1", "cd" * 32, "a"), "c1", root=tmp_path / "root")
    with pytest.raises(RebalanceError, match="already holds a different plan"):
        stage_plan(make_plan(tmp_path / "p2", "cd" * 32, "b"), "c1", root=tmp_path / "root")


def test_decision_cannot_be_flipped(tmp_path: Path) -> None:
    staged = stage_plan(make_plan(tmp_path / "p", "ef" * 32), "c1", root=tmp_path / "root")
    record_decision(staged, "rejected", "bob", "too big")
    record_decision(staged, "rejected", "bob")  # same decision again: fine
    with pytest.raises(RebalanceError, match="plan was already rejected by bob"):
        record_decision(staged, "approved", "mallory")


def test_not_a_plan_directory(tmp_path: Path) -> None:
    with pytest.raises(RebalanceError, match="not a plan directory"):
        stage_plan(tmp_path, "c1", root=tmp_path / "root")
