"""The `kafka-rebalance` CLI as operators run it: a real subprocess, JSON on stdout, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    return subprocess.run(
        [sys.executable, "-m", "kafka_rebalance.cli", *args], capture_output=True, text=True, env=env, input=stdin,
        timeout=120,
    )


def test_assign_prints_kafkas_placement() -> None:
    r = cli("assign", "--brokers", "0,1,2,3,4", "--partitions", "10", "--replication-factor", "3", "--start-index", "0")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {
        "0": [0, 1, 2], "1": [1, 2, 3], "2": [2, 3, 4], "3": [3, 4, 0], "4": [4, 0, 1],
        "5": [0, 2, 3], "6": [1, 3, 4], "7": [2, 4, 0], "8": [3, 0, 1], "9": [4, 1, 2],
    }  # fmt: skip


def test_assign_with_topic_prints_reassignment_json() -> None:
    r = cli("assign", "--brokers", "0,1,2", "--partitions", "2", "--replication-factor", "2",
            "--start-index", "0", "--topic", "orders")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {
        "version": 1,
        "partitions": [
            {"topic": "orders", "partition": 0, "replicas": [0, 1], "log_dirs": ["any", "any"]},
            {"topic": "orders", "partition": 1, "replicas": [1, 2], "log_dirs": ["any", "any"]},
        ],
    }


def test_assign_racks_and_seed() -> None:
    args = ("assign", "--brokers", "0:r1,1:r3,2:r3,3:r2,4:r2,5:r1", "--partitions", "12", "--replication-factor", "3")
    a, b = cli(*args, "--seed", "9"), cli(*args, "--seed", "9")
    assert a.returncode == 0 and a.stdout == b.stdout
    racks = {0: "r1", 1: "r3", 2: "r3", 3: "r2", 4: "r2", 5: "r1"}
    assert all(len({racks[x] for x in r}) == 3 for r in json.loads(a.stdout).values())
    mixed = cli("assign", "--brokers", "0:r1,1,2", "--partitions", "3", "--replication-factor", "2")
    assert mixed.returncode == 2
    assert mixed.stderr.strip() == "error: Not all brokers have rack information for replica rack aware assignment."
    ok = cli("assign", "--brokers", "0:r1,1,2", "--partitions", "3", "--replication-factor", "2", "--disable-rack-aware")
    assert ok.returncode == 0, ok.stderr


def test_errors_are_one_line_and_exit_2() -> None:
    r = cli("assign", "--brokers", "0,1", "--partitions", "3", "--replication-factor", "3")
    assert r.returncode == 2
    assert r.stderr.strip() == "error: Replication factor: 3 larger than available brokers: 2."
    assert "Traceback" not in r.stderr
    r = cli("assign", "--brokers", "0,x", "--partitions", "3", "--replication-factor", "1")
    assert r.returncode == 2 and r.stderr.strip().startswith("error: --brokers: 'x' is not a broker id")


def test_add_partitions_prints_only_new_ones(tmp_path: Path) -> None:
    from kafka_rebalance.snapshot import write_snapshot
    from kafka_rebalance.topics_describe import parse_topics_describe
    from tests.test_topics_describe import SEED_002

    write_snapshot(parse_topics_describe(SEED_002, "seed"), tmp_path / "s.json")
    r = cli("add-partitions", "--snapshot", str(tmp_path / "s.json"), "--topic", "topic-test2", "--partitions", "8")
    assert r.returncode == 0, r.stderr
    # Continues topic-test2's sequence (start index 2, shift 2): partitions 6 and 7.
    assert json.loads(r.stdout) == {"6": [2, 1, 0], "7": [0, 2, 1]}
    shrink = cli("add-partitions", "--snapshot", str(tmp_path / "s.json"), "--topic", "topic-test2", "--partitions", "3")
    assert shrink.returncode == 2 and "can only be increased" in shrink.stderr
    missing = cli("add-partitions", "--snapshot", str(tmp_path / "s.json"), "--topic", "nope", "--partitions", "3")
    assert missing.returncode == 2 and "topic 'nope' does not exist" in missing.stderr


def test_bad_snapshot_gives_located_message(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"cluster_id": "c", "brokers": [{"id": 0}],
                               "partitions": [{"topic": "orders", "partition": 3, "replicas": [0, 9], "leader": 0}]}))  # fmt: skip
    r = cli("describe", "--snapshot", str(bad))
    assert r.returncode == 2
    assert "partitions[0] orders-3: replica 9 is not a known broker" in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_describe_table_and_json(sample_snapshot_path: Path) -> None:
    r = cli("describe", "--snapshot", str(sample_snapshot_path))
    assert r.returncode == 0, r.stderr
    assert "demo-eu-1" in r.stdout and "threshold 10% from default" in r.stdout
    j = cli("describe", "--snapshot", str(sample_snapshot_path), "--json")
    data = json.loads(j.stdout)
    assert [b["broker_id"] for b in data["brokers"]] == [0, 1, 2, 3, 4, 5]
    assert sum(b["replicas"] for b in data["brokers"]) == 96 * 3
    assert data["brokers"][5]["imbalance_ratio"] is None


def test_generate_then_import_describe_roundtrip(tmp_path: Path) -> None:
    r = cli("generate-cluster", "--out", str(tmp_path / "g.parquet"), "--brokers", "9", "--partitions", "90", "--seed", "1")
    assert r.returncode == 0, r.stderr and (tmp_path / "g.parquet").exists()
    from tests.test_topics_describe import SEED_002

    out = tmp_path / "imported.json"
    r = cli("import-describe", "--input", "-", "--cluster-id", "old", "--out", str(out), stdin=SEED_002)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["cluster_id"] == "old"


def test_an_out_path_that_cannot_be_created_is_named_as_given(sample_snapshot_path: Path) -> None:
    r = cli("plan", "--snapshot", str(sample_snapshot_path), "--out", "/proc/kafka-rebalance-plan")
    assert r.returncode == 2
    assert r.stderr.strip() == "error: /proc/kafka-rebalance-plan: No such file or directory"
