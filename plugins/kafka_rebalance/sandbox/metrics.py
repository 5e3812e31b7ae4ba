"""``sandbox up --metrics``: each broker with the Prometheus JMX exporter agent, and a real Prometheus scraping them.

The agent (``io.prometheus.jmx:jmx_prometheus_javaagent``, one shaded jar from Maven Central,
resolved once by ``scripts/jmx-exporter.sh``) serves the figures ``config/jmx-exporter.yml`` selects
on a port of its own per broker. Prometheus is Debian's ``prometheus`` package, installed here when
missing (the sandbox is for a developer's or CI's machine, where we are root); it runs with its
config and data inside the sandbox directory and is stopped by pid like the nodes.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.paths import PROJECT_ROOT

# The newest 1.x release Maven Central serves here.
JMX_EXPORTER_VERSION = "1.0.1"
EXPORTER_CONFIG = PROJECT_ROOT / "config" / "jmx-exporter.yml"
# Short, so that a rate over a window of seconds has samples enough (Prometheus' default is a minute).
SCRAPE_INTERVAL_SECONDS = 1


class MetricsSetupError(RebalanceError):
    """The exporter agent or Prometheus could not be had or started; the message says which and why."""


@dataclass(frozen=True)
class SandboxMetrics:
    """What ``--metrics`` started beside the nodes: the agent every node runs and the Prometheus process."""

    agent_jar: str
    exporter_config: str
    prometheus_pid: int
    prometheus_port: int
    prometheus_dir: str

    @property
    def prometheus_url(self) -> str:
        return f"http://127.0.0.1:{self.prometheus_port}"

    @property
    def prometheus_config(self) -> str:
        return str(Path(self.prometheus_dir) / "prometheus.yml")


def resolve_agent(version: str = JMX_EXPORTER_VERSION) -> Path:
    """The agent jar, resolved from Maven Central into ``.kafka/jmx-exporter/<version>/`` once."""
    from kafka_rebalance.sandbox.runtime import kafka_home

    home = kafka_home()
    jar = home / "jmx-exporter" / version / f"jmx_prometheus_javaagent-{version}.jar"
    if jar.exists() and (jar.parent / ".resolved").exists():
        return jar
    script = PROJECT_ROOT / "scripts" / "jmx-exporter.sh"
    done = subprocess.run([str(script), version], capture_output=True, text=True,
                          env={**os.environ, "KAFKA_REBALANCE_KAFKA_DIR": str(home)})
    if done.returncode != 0 or not jar.exists():
        lines = [line for line in done.stderr.strip().splitlines() if line.startswith("error: ")]
        raise MetricsSetupError(lines[0].removeprefix("error: ") if lines
                                else f"could not resolve the JMX exporter {version} into {jar.parent}")
    return jar


def agent_option(agent_jar: str, port: int, config: str) -> str:
    """The JVM option that starts the exporter inside a broker, serving /metrics on 127.0.0.1:``port``."""
    return f"-javaagent:{agent_jar}=127.0.0.1:{port}:{config}"


def prometheus_binary() -> str:
    """Debian's prometheus, installed with apt-get when it is missing (as the UI tests install chromium)."""
    found = shutil.which("prometheus")
    if found:
        return found
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        raise MetricsSetupError("--metrics needs Prometheus and no 'prometheus' is on PATH "
                                "(Debian/Ubuntu: sudo apt-get install -y prometheus)")
    done = subprocess.run(["apt-get", "install", "-y", "prometheus"], capture_output=True, text=True, timeout=900,
                          env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    if done.returncode != 0:
        # An old package list may not know it yet.
        subprocess.run(["apt-get", "update"], capture_output=True, timeout=600)
        done = subprocess.run(["apt-get", "install", "-y", "prometheus"], capture_output=True, text=True, timeout=900,
                              env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    found = shutil.which("prometheus")
    if done.returncode != 0 or not found:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise MetricsSetupError(f"--metrics: apt-get install -y prometheus failed: {last}")
    return found


def prometheus_config(targets: Sequence[tuple[int, int]]) -> str:
    """Scrape each (node id, exporter port); the node id becomes the ``broker`` label."""
    lines = ["global:", f"  scrape_interval: {SCRAPE_INTERVAL_SECONDS}s", f"  scrape_timeout: {SCRAPE_INTERVAL_SECONDS}s",
             "scrape_configs:", "  - job_name: kafka", "    static_configs:"]
    for node_id, port in targets:
        lines += [f"      - targets: ['127.0.0.1:{port}']", f"        labels: {{broker: '{node_id}'}}"]
    return "\n".join(lines) + "\n"


def _up_targets(url: str) -> int:
    with urllib.request.urlopen(f"{url}/api/v1/query?query=sum(up)", timeout=3) as resp:
        result = json.load(resp)["data"]["result"]
    return int(float(result[0]["value"][1])) if result else 0


def start_prometheus(directory: Path, targets: Sequence[tuple[int, int]], port: int, timeout: float = 60.0) -> int:
    """Start Prometheus in its own session with config and data under ``directory``; wait until it
    scrapes every target. Returns its pid (the caller records it before anything else can fail)."""
    binary = prometheus_binary()
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "prometheus.yml"
    config.write_text(prometheus_config(targets))
    cmd = [binary, f"--config.file={config}", f"--storage.tsdb.path={directory / 'data'}",
           f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=1d"]
    with open(directory / "prometheus.log", "ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, cwd=directory)
    return proc.pid


def wait_until_scraping(url: str, pid: int, log: Path, targets: int, timeout: float = 60.0) -> None:
    from kafka_rebalance.sandbox.cluster import pid_alive

    deadline = time.monotonic() + timeout
    up = 0
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            tail = log.read_text(errors="replace").strip().splitlines()[-3:] if log.exists() else []
            raise MetricsSetupError(f"prometheus (pid {pid}) exited during start-up: {' | '.join(tail) or 'no output'}")
        try:
            up = _up_targets(url)
            if up >= targets:
                return
        except (OSError, ValueError, KeyError, urllib.error.URLError):
            pass
        time.sleep(0.5)
    raise MetricsSetupError(f"prometheus at {url} scraped {up} of {targets} exporters within {timeout:.0f}s; see {log}")


def is_our_prometheus(pid: int, config: str) -> bool:
    """Never signal a reused pid: it must still run our config."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return f"--config.file={config}".encode() in cmdline


def stop_prometheus(pid: int, config: str, grace: float = 15.0) -> bool:
    """SIGTERM, then SIGKILL after ``grace``; True when it was ours and running."""
    from kafka_rebalance.sandbox.cluster import _reap, pid_alive

    if not (pid_alive(pid) and is_our_prometheus(pid, config)):
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and pid_alive(pid):
        _reap()
        time.sleep(0.1)
    if pid_alive(pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for _ in range(50):
            _reap()
            if not pid_alive(pid):
                break
            time.sleep(0.1)
    return True
