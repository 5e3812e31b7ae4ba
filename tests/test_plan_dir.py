"""The one owner of the plan directory: canonical JSON, the plan hash, output-path checks."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from kafka_rebalance.plan_dir import PlanDirError, canonical_json, check_output, plan_hash_of, read_json, seal


def test_canonical_json_is_the_same_in_memory_and_after_a_file_round_trip() -> None:
    value = {"summary": {"targets": {10: [1, 2], 2: (3, 4)}}, "topic": "zählerstände-€"}
    from_file = json.loads(json.dumps(value, indent=2, ensure_ascii=False))
    assert canonical_json(value) == canonical_json(from_file)
    assert canonical_json(value) == (b'{"summary":{"targets":{"10":[1,2],"2":[3,4]}},'
                                     b'"topic":"z\\u00e4hlerst\\u00e4nde-\\u20ac"}')
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


def test_plan_hash_covers_every_field_but_the_snapshot_path() -> None:
    manifest = seal({"format_version": 2, "options": {"exclude_topics": ["zählerstände-€"]}, "batches": [{"id": "001"}],
                     "files": {"a": "0" * 64}, "snapshot": {"sha256": "s", "path": "/run/1/snap.json"}})
    expected = {k: hashlib.sha256(json.dumps(v, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
                for k, v in {"format_version": 2, "options": {"exclude_topics": ["zählerstände-€"]},
                             "batches": [{"id": "001"}], "files": {"a": "0" * 64}, "snapshot": {"sha256": "s"}}.items()}
    assert manifest["field_sha256"] == expected
    assert manifest["plan_hash"] == hashlib.sha256(json.dumps(expected, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    moved = {**manifest, "snapshot": {"sha256": "s", "path": "/run/2/snap.json"}}
    assert plan_hash_of(moved) == manifest["plan_hash"]
    for key, value in [("batches", []), ("future_field", 1), ("files", {"a": "1" * 64})]:
        assert plan_hash_of({**manifest, key: value}) != manifest["plan_hash"], key


def test_read_json_refuses_duplicate_keys_and_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text('{"batches": [1], "batches": []}')
    with pytest.raises(PlanDirError, match=r"plan.json: duplicate key \"batches\" in one object"):
        read_json(path)


def test_check_output_refuses_inputs_and_plan_files_but_allows_owned_names(tmp_path: Path) -> None:
    plan = tmp_path / "plan"
    (plan / "batches").mkdir(parents=True)
    (plan / "plan.json").write_text("{}")
    snap = tmp_path / "snap.json"
    snap.write_text("{}")
    with pytest.raises(PlanDirError, match="is the --snapshot this command reads"):
        check_output(snap, "--out", inputs=[("--snapshot", snap)])
    with pytest.raises(PlanDirError, match="where ledger.json belongs to the 'execute' step; --out may write only report.html"):
        check_output(plan / "ledger.json", "--out", may_write=("report.html",))
    with pytest.raises(PlanDirError, match="where plan.json belongs to the 'plan' step"):
        check_output(plan / "plan.json", "--out")
    assert check_output(plan / "report.html", "--out", may_write=("report.html",)) == plan / "report.html"
    assert check_output(tmp_path / "elsewhere.html", "--out") == tmp_path / "elsewhere.html"
