"""Helpers for tests against the session's real Apache Kafka sandbox (see tests/conftest.py).

Each test works on its own topics (a unique prefix) and deletes them afterwards, so that every
test sees a cluster holding only what it created. Kafka's own tools are the oracles: what they
print is parsed here, never what our code prints.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from functools import cache
from pathlib import Path

from kafka_rebalance.sandbox.cluster import Sandbox
from kafka_rebalance.sandbox.disk import plan_disk_limit
from kafka_rebalance.sandbox.runtime import resolve_runtime
from kafka_rebalance.snapshot import Snapshot, load_snapshot, write_snapshot

ROOT = Path(__file__).resolve().parents[2]
THROTTLE_KEYS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
                 "leader.replication.throttled.replicas", "follower.replication.throttled.replicas")  # fmt: skip


@cache
def sandbox_disk_limit() -> float:
    """The disk limit for a plan on a sandbox of this test session: every sandbox broker reports the host's
    filesystem as its disk, so on a host fuller than the default every broker starts above it
    (kafka_rebalance.sandbox.disk). Taken once per worker, so that every plan of a test agrees."""
    return plan_disk_limit(Path(tempfile.gettempdir()))


def disk_limit_args() -> tuple[str, str]:
    """`plan`'s flag for `sandbox_disk_limit`."""
    return ("--max-disk-usage", f"{sandbox_disk_limit():.2f}")


def cli(*args: str, timeout: float = 600, check: bool = False) -> subprocess.CompletedProcess[str]:
    """Our command line, as an operator runs it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    done = subprocess.run([sys.executable, "-m", "kafka_rebalance.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)
    if check and done.returncode != 0:
        raise AssertionError(f"kafka-rebalance {' '.join(args)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return done


def tool(sandbox: Sandbox, name: str, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """One of Kafka's own command-line tools, from the sandbox's Kafka version."""
    return resolve_runtime(sandbox.kafka_version, fetch=False).tool(name, list(args), check=check, timeout=timeout)


def admin(sandbox: Sandbox):
    from kafka.admin import KafkaAdminClient

    return KafkaAdminClient(bootstrap_servers=sandbox.bootstrap_servers, request_timeout_ms=30000)


def delete_topics(sandbox: Sandbox, prefix: str) -> None:
    client = admin(sandbox)
    try:
        mine = [t for t in client.list_topics() if t.startswith(prefix)]
        if mine:
            client.delete_topics(mine)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and any(t.startswith(prefix) for t in client.list_topics()):
            time.sleep(0.3)
    finally:
        client.close()


def gather(sandbox: Sandbox, out: Path, prefix: str, cluster_id: str = "sandbox") -> Path:
    """`kafka-rebalance gather`, narrowed to this test's topics (other tests' topics may come and go)."""
    cli("gather", "--bootstrap-server", sandbox.bootstrap_servers, "--cluster-id", cluster_id, "--out", str(out), check=True)
    snap = load_snapshot(out)
    mine = replace(snap, partitions=tuple(p for p in snap.partitions if p.topic.startswith(prefix)),
                   topics={t: v for t, v in snap.topics.items() if t.startswith(prefix)})
    write_snapshot(mine, out)
    return out


def plan_validate_and_approve(snapshot: Path, plan_dir: Path, *extra: str) -> dict:
    """The operator's path to an executable plan: plan, validate, approve (the snapshot was just gathered).

    None of the three talks to Kafka, so they run in-process (the same command line, without an interpreter
    start each; tests/cli runs them as subprocesses); what acts on Kafka runs as its own process.
    """
    from tests.support.cli_inprocess import run_cli

    limit = () if "--max-disk-usage" in extra else disk_limit_args()
    for args in (("plan", "--snapshot", str(snapshot), "--out", str(plan_dir), *limit, *extra),
                 ("validate", "--plan", str(plan_dir), "--snapshot", str(snapshot)),
                 ("approve", "--plan", str(plan_dir), "--by", "real-kafka-test")):
        done = run_cli(*args)
        if done.code != 0:
            raise AssertionError(f"kafka-rebalance {' '.join(args)} exited {done.code}:\n{done.stderr[-3000:]}")
    return json.loads((plan_dir / "plan.json").read_text())


def describe_partitions(sandbox: Sandbox, prefix: str) -> dict[tuple[str, int], dict]:
    """Kafka's own `kafka-topics --describe`, parsed: replicas, leader and ISR per partition."""
    out = tool(sandbox, "kafka-topics", "--bootstrap-server", sandbox.bootstrap_servers, "--describe").stdout
    parts: dict[tuple[str, int], dict] = {}
    for line in out.splitlines():
        if "Partition:" not in line:
            continue
        fields = {}
        for chunk in line.strip().split("\t"):
            key, _, value = chunk.partition(":")
            fields[key.strip()] = value.strip()
        if not fields["Topic"].startswith(prefix):
            continue
        ints = lambda v: tuple(int(x) for x in v.split(",") if x)  # noqa: E731
        parts[(fields["Topic"], int(fields["Partition"]))] = {
            "replicas": ints(fields["Replicas"]), "leader": int(fields["Leader"]), "isr": ints(fields["Isr"])}
    return parts


def settled_partitions(sandbox: Sandbox, prefix: str, within: float = 30.0) -> dict[tuple[str, int], dict]:
    """``describe_partitions`` once every partition's ISR is full, or after ``within`` seconds: a follower dropped
    from the ISR by a slow moment rejoins on its own, and a broker's metadata cache follows the controller's by a
    moment. Leaders do not settle (the sandbox runs no automatic leader rebalance), so the wait hides no election."""
    deadline = time.monotonic() + within
    while True:
        parts = describe_partitions(sandbox, prefix)
        if all(sorted(p["isr"]) == sorted(p["replicas"]) for p in parts.values()) or time.monotonic() >= deadline:
            return parts
        time.sleep(1.0)


def controller_imbalance(parts: dict[tuple[str, int], dict]) -> dict[int, float]:
    """Kafka's controller's leader imbalance per broker, from Kafka's own listing (written here, not taken from the
    package under test): of the partitions whose preferred (first) replica is the broker, the share it does not lead.
    The controller elects when a broker's share exceeds leader.imbalance.per.broker.percentage."""
    preferred: dict[int, int] = {}
    not_led: dict[int, int] = {}
    for p in parts.values():
        b = p["replicas"][0]
        preferred[b] = preferred.get(b, 0) + 1
        not_led[b] = not_led.get(b, 0) + (p["leader"] != b)
    return {b: not_led[b] / n for b, n in preferred.items()}


def assert_leaders_as_planned(sandbox: Sandbox, prefix: str, plan_dir: Path) -> dict[tuple[str, int], dict]:
    """After a plan's elections, Kafka's own view: every partition the plan elected is led by its preferred replica,
    and no broker is above the plan's leader-imbalance threshold by the controller's measure, over the whole cluster.
    The plan elects only what that rule needs (other tests' partitions share the brokers), so a partition it did not
    elect may rightly stay off its preferred replica. Returns Kafka's view of the ``prefix`` partitions."""
    now = settled_partitions(sandbox, prefix)
    elected = {(e["topic"], e["partition"]) for e in json.loads((plan_dir / "election.json").read_text())["partitions"]}
    off = {tp: now[tp] for tp in elected & set(now) if now[tp]["leader"] != now[tp]["replicas"][0]}
    assert off == {}, f"elected but not led by their preferred replica: {off}"
    threshold = json.loads((plan_dir / "plan.json").read_text())["options"]["threshold_percentage"]
    imbalance = controller_imbalance(describe_partitions(sandbox, ""))
    assert max(imbalance.values(), default=0.0) <= threshold / 100, (threshold, imbalance)
    return now


def config_describe(sandbox: Sandbox, entity_type: str, name: str | None = None) -> dict[str, dict[str, str]]:
    """Kafka's own `kafka-configs --describe`: dynamic configs per entity (brokers or topics)."""
    args = ["--bootstrap-server", sandbox.bootstrap_servers, "--describe", "--entity-type", entity_type]
    if name is not None:
        args += ["--entity-name", name]
    out = tool(sandbox, "kafka-configs", *args).stdout
    found: dict[str, dict[str, str]] = {}
    current = None
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("Dynamic configs for") or line.startswith("Default configs for"):
            # "Dynamic configs for broker 1 are:" / "Dynamic configs for topic t are:"
            current = line.split(" for ", 1)[1].rsplit(" are:", 1)[0].split(" ", 1)[1]
            found.setdefault(current, {})
        elif current is not None and "=" in line:
            key, _, rest = line.partition("=")
            found[current][key.strip()] = rest.split(" sensitive=")[0].strip()
    return found


def throttles_anywhere(sandbox: Sandbox, prefix: str) -> dict[str, dict[str, str]]:
    """Every throttle config Kafka's ConfigCommand shows on any broker or on this test's topics."""
    left: dict[str, dict[str, str]] = {}
    # One ConfigCommand run describes every live broker (a JVM start each is seconds on a busy machine); a node
    # it does not list could not be asked, as a describe of that node alone would fail.
    brokers = config_describe(sandbox, "brokers")
    unasked = sorted(n.node_id for n in sandbox.nodes if str(n.node_id) not in brokers)
    assert not unasked, f"kafka-configs --describe listed no configs for broker(s) {unasked}: {sorted(brokers)}"
    for n in sandbox.nodes:
        hits = {k: v for k, v in brokers[str(n.node_id)].items() if k in THROTTLE_KEYS}
        if hits:
            left[f"broker {n.node_id}"] = hits
    for topic, cfg in config_describe(sandbox, "topics").items():
        hits = {k: v for k, v in cfg.items() if k in THROTTLE_KEYS}
        if topic.startswith(prefix) and hits:
            left[f"topic {topic}"] = hits
    return left


def snapshot_partitions(snapshot: Snapshot) -> dict[tuple[str, int], tuple[int, ...]]:
    return {(p.topic, p.partition): p.replicas for p in snapshot.partitions}


def final_targets(plan_dir: Path) -> dict[tuple[str, int], tuple[int, ...]]:
    """The replica list each partition ends with: the last batch of the plan that names it wins."""
    targets = {}
    for b in json.loads((plan_dir / "plan.json").read_text())["batches"]:
        for p in json.loads((plan_dir / "batches" / b["id"] / "reassignment.json").read_text())["partitions"]:
            targets[(p["topic"], p["partition"])] = tuple(p["replicas"])
    return targets


def wait_for(predicate, timeout: float, what: str, poll: float = 0.2) -> None:
    """Poll ``predicate`` until it holds; an AssertionError naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def in_flight(sandbox: Sandbox, prefix: str) -> set[tuple[str, int]]:
    """The partitions of this test's topics that Kafka is reassigning now (ListPartitionReassignments)."""
    client = admin(sandbox)
    try:
        return {(tp.topic, tp.partition) for tp in client.list_partition_reassignments() if tp.topic.startswith(prefix)}
    finally:
        client.close()


def execute_in_background(sandbox: Sandbox, plan_dir: Path, *extra: str) -> subprocess.Popen[str]:
    """`kafka-rebalance execute` as its own process, polling every half second: the test brings a fault meanwhile."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    return subprocess.Popen([sys.executable, "-m", "kafka_rebalance.cli", "execute", "--plan", str(plan_dir),
                             "--bootstrap-server", sandbox.bootstrap_servers, "--poll-interval", "0.5", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def reap(proc: subprocess.Popen) -> None:
    """In a ``finally``: a process a test started and still running (an assertion failed, or it hung) is killed by pid."""
    if proc.poll() is None:
        proc.kill()
        proc.communicate()
