"""A real Spark standalone cluster (one master, two 1-core workers) on 127.0.0.1, once per test session.

Shared by the analysis tests and the DAG tests (registered in tests/conftest.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kafka_rebalance.sandbox.cluster import free_ports

# --------------------------------------------------------------------------- standalone cluster

WORKERS = 2


def _free_port() -> int:
    return free_ports(1)[0]


@dataclass
class Standalone:
    url: str
    webui: str
    bin_dir: Path
    port: int

    def state(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.webui}/json/", timeout=5) as resp:
            return json.load(resp)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)  # its own process group: the JVM and what it forked
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


@pytest.fixture(scope="session")
def spark_standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Standalone]:
    """A real master and TWO workers (1 core, 1 GiB each) started with the pinned pyspark's spark-class.

    Free ports only (other Spark users may share the machine); every process is stopped by its
    own process group at the end of the session.
    """
    import pyspark

    bin_dir = Path(pyspark.__file__).parent / "bin"
    work = tmp_path_factory.mktemp("spark-standalone")
    # The master and workers idle through the session: C1 and the serial collector start them sooner on 2 cores.
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable,
           "SPARK_LOG_DIR": str(work), "SPARK_WORKER_DIR": str(work / "work"),
           "SPARK_DAEMON_JAVA_OPTS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"}
    port, webui_port = _free_port(), _free_port()
    url, webui = f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{webui_port}"
    started: list[subprocess.Popen] = []

    def launch(name: str, *args: str) -> subprocess.Popen:
        log = (work / f"{name}.log").open("wb")
        proc = subprocess.Popen([str(bin_dir / "spark-class"), *args], env=env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        started.append(proc)
        return proc

    try:
        launch("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
               "--port", str(port), "--webui-port", str(webui_port))
        for i in range(WORKERS):
            launch(f"worker-{i}", "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                   "--port", str(_free_port()), "--cores", "1", "--memory", "1g", "--webui-port", str(_free_port()),
                   "--work-dir", str(work / f"work-{i}"))
        cluster = Standalone(url, webui, bin_dir, port)
        deadline = time.monotonic() + 90
        while True:
            dead = [p for p in started if p.poll() is not None]
            if dead:
                logs = "\n".join(p.read_text(errors="replace")[-2000:] for p in sorted(work.glob("*.log")))
                pytest.fail(f"spark-class exited early:\n{logs}")
            try:
                if cluster.state().get("aliveworkers", 0) >= WORKERS:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"{WORKERS} workers did not register with {url} within 90 s; logs in {work}")
            time.sleep(0.5)
        yield cluster
    finally:
        for proc in reversed(started):
            _stop(proc)
