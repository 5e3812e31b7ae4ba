"""`kafka-rebalance analyze`, and the spark-submit job on a real standalone cluster."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_rebalance.analysis.job import LOG4J_CONFIG, run
from kafka_rebalance.generate import ClusterSpec, generate
from tests.support.clusters import dead_broker_cluster, thresholds_cluster, write

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
JOB = ROOT / "spark_jobs" / "leader_imbalance.py"


def _env() -> dict[str, str]:
    # The worktree's package first, whatever copy the venv has installed.
    path = os.pathsep.join(p for p in (str(ROOT / "plugins"), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}


def test_cli_analyze_writes_outputs_and_prints_per_cluster(spark, tmp_path: Path, monkeypatch, capsys) -> None:
    from kafka_rebalance.cli import main

    write(thresholds_cluster("c1"), tmp_path / "fleet" / "c1.json")
    write(dead_broker_cluster("c2"), tmp_path / "fleet" / "c2.parquet")
    monkeypatch.setattr(sys, "argv", ["kafka-rebalance", "analyze", "--snapshot", str(tmp_path / "fleet"),
                                      "--out", str(tmp_path / "out"), "--threshold-percentage", "24"])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code == 0
    err = capsys.readouterr().err
    assert "c1: 4 brokers (4 live), 23 partitions; threshold 24% (setting)" in err
    assert "over threshold: 2;" in err
    assert "c2: 3 brokers (2 live)" in err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert [c["brokers_over_threshold"] for c in summary["clusters"]] == [[2], [2]]
    assert (tmp_path / "out" / "broker_metrics.parquet").is_file()
    assert spark.range(1).count() == 1  # the CLI left the session it was handed running


def test_cli_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    for args, expected in (
        (["--snapshot", str(bad)], "bad.json: invalid snapshot (1 problem(s)): not valid JSON"),
        (["--snapshot", str(bad), "--threshold-percentage", "150"], "--threshold-percentage: must be a percentage within 0..100"),
    ):
        proc = subprocess.run([sys.executable, "-m", "kafka_rebalance.cli", "analyze", *args, "--out", str(tmp_path / "o")],
                              capture_output=True, text=True, env=_env(), timeout=120)
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        assert proc.returncode == 2, proc.stderr
        assert lines[-1].startswith("error: ") and expected in lines[-1], proc.stderr
        assert "Traceback" not in proc.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_spark_submit_on_standalone_cluster_equals_local(spark, spark_standalone, tmp_path: Path) -> None:
    fleet = tmp_path / "fleet"
    generate(ClusterSpec(cluster_id="gen-x", brokers=12, racks=3, partitions=3000, replica_skew=0.8,
                         leader_skew=0.2, dead_brokers=1, new_brokers=2, seed=5), fleet / "gen-x.parquet")
    generate(ClusterSpec(cluster_id="gen-y", brokers=6, racks=0, partitions=900, replication_factor=2,
                         leader_skew=0.1, threshold_percentage=15, seed=6), fleet / "gen-y.parquet")
    write(thresholds_cluster("hand"), fleet / "hand.json")

    local = tmp_path / "local"
    run(spark, fleet, local, threshold_setting=12)

    remote = tmp_path / "remote"
    # The standalone cluster is shared by the session: count only the application this test submits.
    before = {a["id"] for a in spark_standalone.state()["completedapps"]}
    proc = subprocess.run(
        [str(spark_standalone.bin_dir / "spark-submit"), "--master", spark_standalone.url,
         "--name", "kafka-rebalance-leader-imbalance",
         "--conf", "spark.ui.enabled=false", "--conf", "spark.cores.max=2", "--conf", "spark.executor.memory=512m",
         "--conf", f"spark.driver.extraJavaOptions=-Dlog4j2.configurationFile={LOG4J_CONFIG.as_uri()}",
         str(JOB), "--snapshot", str(fleet), "--out", str(remote), "--threshold-percentage", "12"],
        capture_output=True, text=True, env=_env(), timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    # spark-submit's PythonRunner merges the script's stderr into its own stdout.
    assert "gen-x: 12 brokers (11 live), 3,000 partitions" in proc.stdout + proc.stderr
    for name in ("broker_metrics.parquet", "summary.json"):
        assert (remote / name).read_bytes() == (local / name).read_bytes(), name
    # It really ran on the cluster: the master lists it as a finished application with one 1-core
    # executor on each of the two workers.
    apps = [a for a in spark_standalone.state()["completedapps"]
            if a["name"] == "kafka-rebalance-leader-imbalance" and a["id"] not in before]
    assert len(apps) == 1
    assert apps[0]["cores"] == 2
