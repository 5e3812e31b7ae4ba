"""The plan directory as a whole: determinism, atomic writing, the CLI, batch limits, balance."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from kafka_rebalance.generate import ClusterSpec, generate, generate_snapshot
from kafka_rebalance.plan_dir import plan_hash_of
from kafka_rebalance.plan_dir import sha256_bytes as sha256
from kafka_rebalance.planner.kafka_generate import generate_moves
from kafka_rebalance.snapshot import write_snapshot
from tests.support.bands import bytes_in_band, counts_in_band
from tests.support.clusters import part, snapshot
from tests.support.plans import batches, final_assignment, plan_dir, read

ROOT = Path(__file__).resolve().parents[2]
SKEWED = ClusterSpec(
    cluster_id="skewed", brokers=9, racks=3, topics=6, partitions=600, replica_skew=1.0, leader_skew=0.2,
    new_brokers=3, under_replicated=0.05, mean_partition_mb=64, seed=3,
)


@pytest.fixture(scope="module")
def skewed():
    return generate_snapshot(SKEWED)


@pytest.fixture(scope="module")
def default_plan(skewed, tmp_path_factory) -> tuple[dict, Path]:
    """The skewed cluster planned once with default options, for the tests that only read it.

    Planning it takes ~2.5 s (the exact optimizer runs at this size); sharing it keeps the
    module fast, and with it every mutant of ``make mutate`` that reaches the planner.
    """
    out = tmp_path_factory.mktemp("default") / "p"
    return plan_dir(skewed, out), out


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    return subprocess.run([sys.executable, "-m", "kafka_rebalance.cli", *args], capture_output=True, text=True, env=env)


def all_files(d: Path) -> dict[str, bytes]:
    return {str(f.relative_to(d)): f.read_bytes() for f in sorted(d.rglob("*")) if f.is_file()}


def test_planning_twice_gives_byte_identical_directories(skewed, default_plan, tmp_path: Path) -> None:
    a, first = default_plan
    b = plan_dir(skewed, tmp_path / "b")
    fa, fb = all_files(first), all_files(tmp_path / "b")
    assert fa.keys() == fb.keys() and len(fa) > 10
    assert all(fa[k] == fb[k] for k in fa)
    assert a["plan_hash"] == b["plan_hash"]


def test_manifest_hashes_every_file_and_the_plan_hash_recomputes(skewed, default_plan) -> None:
    m, out = default_plan
    on_disk = all_files(out)
    assert set(m["files"]) == set(on_disk) - {"plan.json"}
    for rel, digest in m["files"].items():
        assert sha256(on_disk[rel]) == digest
    assert m["plan_hash"] == plan_hash_of(json.loads(on_disk["plan.json"]))
    assert m["snapshot"]["sha256"] == skewed.fingerprint()
    # Verdicts live in their own files: a fresh plan has none, and plan.json has no verdict field.
    assert "validation" not in m and not (out / "validation").exists()
    width = {len(b["id"]) for b in m["batches"]}
    assert width == {max(3, len(str(len(m["batches"]))))}
    kinds = [b["kind"] for b in m["batches"]]
    assert kinds == sorted(kinds, key=lambda k: k != "reorder"), "reorders run before moves"


def test_final_state_is_balanced_and_rack_safe(skewed, default_plan) -> None:
    m, out = default_plan
    final = final_assignment(skewed, out)
    sizes = {(p.topic, p.partition): p.size_bytes for p in skewed.partitions}
    brokers = skewed.broker_ids
    replicas, preferred, size = Counter(), Counter(), Counter()
    for key, reps in final.items():
        preferred[reps[0]] += 1
        for b in reps:
            replicas[b] += 1
            size[b] += sizes[key]
    assert counts_in_band([replicas[b] for b in brokers])
    assert counts_in_band([preferred[b] for b in brokers])
    assert bytes_in_band([size[b] for b in brokers])
    rack = skewed.rack_of
    assert all(len({rack[b] for b in reps}) == len(reps) for reps in final.values())
    # the manifest's projection is what applying the batches gives
    assert {r["broker_id"]: r["replicas"] for r in m["summary"]["projected"]} == {b: replicas[b] for b in brokers}
    # 570 moves against a bound of 541 with the default 10 % count band (1.054); 621 of 621 at exact counts
    assert m["summary"]["ratio_to_lower_bound"]["replica_moves"] <= 1.06
    # after the elections no broker is over the leader-imbalance threshold
    assert m["summary"]["leader_imbalance"]["brokers_over_threshold_after_election"] == []
    # and it moves fewer replicas than Kafka's --generate
    assert m["summary"]["replica_moves"] < generate_moves(skewed)["replica_moves"]


def test_batch_limits_are_honoured(skewed, tmp_path: Path) -> None:
    # Limits are batching, the same whatever chose the moves: the heuristic is 10x quicker here.
    plan_dir(skewed, tmp_path / "p", max_partitions_per_batch=7, max_moves_per_broker=2, optimizer="heuristic")
    bs = batches(tmp_path / "p")
    assert any(b["kind"] == "move" for b in bs)
    for b in bs:
        assert len(b["reassignment"]) <= 7
        assert len({(e["topic"], e["partition"]) for e in b["reassignment"]}) == len(b["reassignment"])
        load = Counter()
        for before, after in zip(b["rollback"], b["reassignment"]):
            new = [x for x in after["replicas"] if x not in before["replicas"]]
            gone = [x for x in before["replicas"] if x not in after["replicas"]]
            assert len(new) <= 1  # --max-new-replicas-per-partition 1
            load.update(new)
            load.update(gone)
            if b["kind"] == "reorder":
                assert sorted(before["replicas"]) == sorted(after["replicas"])
        assert all(v <= 2 for v in load.values()), f"batch {b['id']}: {load}"


def test_orderings(skewed, tmp_path: Path) -> None:
    sizes = {(p.topic, p.partition): p.size_bytes for p in skewed.partitions}
    firsts = {}
    for ordering in ("small-first", "large-first"):
        # Orderings are batching, the same whatever chose the moves: the heuristic is 10x quicker here.
        plan_dir(skewed, tmp_path / ordering, ordering=ordering, optimizer="heuristic")
        moves = [b for b in batches(tmp_path / ordering) if b["kind"] == "move"]
        entries = [sizes[(e["topic"], e["partition"])] for e in moves[0]["reassignment"]]
        assert entries == sorted(entries, reverse=ordering == "large-first")
        firsts[ordering] = entries
    assert max(firsts["small-first"]) < min(firsts["large-first"])


def test_under_replicated_first(tmp_path: Path) -> None:
    snap = snapshot(
        [0, 1, 2, 3],
        [part("t", i, r, isr=r[:1] if i == 5 else r, size_bytes=100 + i) for i, r in
         enumerate([[0, 1], [1, 2], [2, 0], [0, 1], [1, 2], [2, 0]])],
    )
    plan_dir(snap, tmp_path / "p", ordering="under-replicated-first", max_partitions_per_batch=1)
    moves = [b for b in batches(tmp_path / "p") if b["kind"] == "move"]
    first = moves[0]["reassignment"][0]
    moved = {(e["topic"], e["partition"]) for b in moves for e in b["reassignment"]}
    if ("t", 5) in moved:
        assert (first["topic"], first["partition"]) == ("t", 5)


def test_cli_writes_plan_and_refuses_a_different_existing_one(tmp_path: Path) -> None:
    snap_path = tmp_path / "c.json"
    generate(ClusterSpec(brokers=6, racks=3, partitions=60, new_brokers=1, seed=1), snap_path)
    out = tmp_path / "plan"
    r = cli("plan", "--snapshot", str(snap_path), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "written" in r.stderr and (out / "plan.json").is_file()
    before = all_files(out)
    r2 = cli("plan", "--snapshot", str(snap_path), "--out", str(out))
    assert r2.returncode == 0 and "unchanged" in r2.stderr
    assert all_files(out) == before
    r3 = cli("plan", "--snapshot", str(snap_path), "--out", str(out), "--max-moves-per-broker", "1")
    assert r3.returncode == 2 and "not empty and does not hold this plan" in r3.stderr
    assert all_files(out) == before
    assert r3.stderr.count("\n") == 1 and "Traceback" not in r3.stderr


def test_failed_plan_leaves_no_directory(tmp_path: Path) -> None:
    snap = snapshot([0, 1, 2], [part("hot", 0, [2, 0], bytes_in_per_sec=80_000_000.0), part("t", 0, [0, 1])])
    snap_path = write_snapshot(snap, tmp_path / "s.json")
    out = tmp_path / "plans" / "p"
    out.parent.mkdir()
    r = cli("plan", "--snapshot", str(snap_path), "--out", str(out), "--decommission-brokers", "2")
    assert r.returncode == 2
    assert "hot-0" in r.stderr and "80,000,000 B/s" in r.stderr and "52,428,800 B/s" in r.stderr
    assert list(out.parent.iterdir()) == []  # neither DIR nor a temporary sibling


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--throttle", "1023"], "--throttle must be within 1.0 KiB/s to 8.0 EiB/s"),
        (["--ordering", "random"], "--ordering must be one of"),
        (["--decommission-brokers", "x"], "--decommission-brokers: x is not a broker id"),
        (["--max-partitions-per-batch", "0"], "--max-partitions-per-batch must be at least 1"),
    ],
)
def test_cli_rejects_bad_options(tmp_path: Path, flags: list[str], message: str) -> None:
    snap_path = write_snapshot(snapshot([0, 1], [part("t", 0, [0, 1])]), tmp_path / "s.json")
    r = cli("plan", "--snapshot", str(snap_path), "--out", str(tmp_path / "p"), *flags)
    assert r.returncode == 2 and message in r.stderr
    assert not (tmp_path / "p").exists()


def test_threshold_from_analysis_summary(tmp_path: Path) -> None:
    snap_path = write_snapshot(snapshot([0, 1], [part("t", 0, [0, 1])], cluster_id="prod"), tmp_path / "s.json")
    analysis = tmp_path / "analysis"
    analysis.mkdir()
    (analysis / "summary.json").write_text(json.dumps(
        {"clusters": [{"cluster_id": "other", "threshold_percentage": 5},
                      {"cluster_id": "prod", "threshold_percentage": 25, "threshold_source": "setting"}]}
    ))
    r = cli("plan", "--snapshot", str(snap_path), "--out", str(tmp_path / "p"), "--analysis", str(analysis))
    assert r.returncode == 0, r.stderr
    opts = read(tmp_path / "p", "plan.json")["options"]
    assert (opts["threshold_percentage"], opts["threshold_source"]) == (25, "analysis")
    r = cli("plan", "--snapshot", str(snap_path), "--out", str(tmp_path / "q"), "--threshold-percentage", "15")
    opts = read(tmp_path / "q", "plan.json")["options"]
    assert (opts["threshold_percentage"], opts["threshold_source"]) == (15, "setting")
    (analysis / "summary.json").write_text(json.dumps({"clusters": []}))
    r = cli("plan", "--snapshot", str(snap_path), "--out", str(tmp_path / "z"), "--analysis", str(analysis))
    assert r.returncode == 2 and "no entry for cluster_id 'prod'" in r.stderr


def test_runbook_has_kafka_commands_for_every_batch(default_plan) -> None:
    m, out = default_plan
    text = (out / "RUNBOOK.md").read_text()
    for b in m["batches"]:
        f = f"batches/{b['id']}/reassignment.json"
        assert f"--reassignment-json-file {f} --verify" in text
        throttle = " --throttle 52428800" if b["kind"] == "move" else ""
        assert f"--reassignment-json-file {f} --execute{throttle}\n" in text
    assert "kafka-leader-election.sh" in text and "--election-type PREFERRED" in text


def test_fast_reassignment_writer_matches_json_dumps() -> None:
    from kafka_rebalance.planner.files import _entries, dump, reassignment_bytes
    from kafka_rebalance.planner.steps import partition_steps

    steps = partition_steps(0, 'we"ird\u00e9', 3, [1, 2, 3], [4, 2, 3], 1, 10, 0.0, 1) + partition_steps(
        1, "orders", 12, [7], [8], 7, 5, 0.0, 1
    )
    for which in ("before", "after"):
        assert reassignment_bytes(steps, which) == dump(_entries(steps, which))
    assert reassignment_bytes([], "after") == dump(_entries([], "after"))


def test_fast_json_layout_matches_json_dumps_on_a_whole_plan(default_plan) -> None:
    _, out = default_plan
    for f in sorted(out.rglob("*.json")):
        value = json.loads(f.read_text())
        if f.name == "schedule.json":  # compact by design: one step per line, ~150,000 lines at 1M partitions
            lines = f.read_text().splitlines()
            assert len(lines) == len(value["steps"]) + 2 and lines[-1] == "]}"
            for line, step in zip(lines[1:-1], value["steps"]):
                assert line.rstrip(",") == json.dumps(step, sort_keys=True, separators=(",", ":"))
            continue
        assert f.read_text() == json.dumps(value, sort_keys=True, indent=2) + "\n", f
    odd = {"b": [1.5, None, True, {}, [], "é\"\n"], "a": {"z": 1e16, "y": -0.0}, "c": []}
    from kafka_rebalance.planner.files import dump

    assert dump(odd).decode() == json.dumps(odd, sort_keys=True, indent=2) + "\n"
