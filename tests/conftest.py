"""Session-wide fixtures. Heavy components (Spark, Airflow DB) are started once per session.

Airflow reads its configuration from the environment at import time, so the
test session's Airflow home (a fresh SQLite database, this checkout's dags/ and
plugins/) is set here, before anything imports airflow.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import sys
import tempfile
from functools import cache
from pathlib import Path

import pytest
from hypothesis import settings

from tests.support.interrupt import pytest_configure  # noqa: F401 - SIGTERM tears the session's fixtures down
from tests.support.spark_standalone import spark_standalone  # noqa: F401 - a session fixture for every test package

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "sample-cluster.json"

# `make test` draws the same property-test examples on every run and every machine, so a red
# run is reproducible and a green one does not depend on luck; a new random example that fails
# is found by exploring (HYPOTHESIS_PROFILE=explore, README "Tests") and then pinned with @example.
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

_AIRFLOW_HOME = Path(tempfile.mkdtemp(prefix="kafka-rebalance-airflow-"))
# Removed when the process ends (each xdist worker has its own): thousands of mutation runs left them all behind.
atexit.register(shutil.rmtree, _AIRFLOW_HOME, ignore_errors=True)
# Spark's own defaults file for every spark-submit of the session (the DAGs' SparkSubmitOperator above all: each
# run is a new driver JVM, 25-60 s of a DAG test on 2 busy cores). A short-lived JVM spends its first seconds
# compiling: C1 only and the serial collector (as scripts/kafka-tool and the sandbox's JVMs) about halve a
# submit; no UI; the shuffle width of the session's own SparkSession (fixture `spark`). Explicit --conf and
# build_session's settings still win; the job's output bytes are the same.
_SPARK_CONF = _AIRFLOW_HOME / "spark-conf"
_SPARK_CONF.mkdir()
(_SPARK_CONF / "spark-defaults.conf").write_text(
    "spark.driver.extraJavaOptions -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:CICompilerCount=1\n"
    "spark.executor.extraJavaOptions -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:CICompilerCount=1\n"
    "spark.ui.enabled false\n"
    "spark.sql.shuffle.partitions 2\n"
)
os.environ.update(
    {
        "AIRFLOW_HOME": str(_AIRFLOW_HOME),
        "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "dags"),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(ROOT / "plugins"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
        "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
        "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[2]"}),
        "SPARK_CONF_DIR": str(_SPARK_CONF),
        "KAFKA_REBALANCE_HOME": str(_AIRFLOW_HOME / "data"),
        "KAFKA_REBALANCE_CLUSTERS": str(_AIRFLOW_HOME / "clusters.yaml"),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        # spark-submit (from pyspark) lives beside this interpreter.
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
)



def _write_test_clusters(home: Path) -> None:
    """The DAGs under test: one cluster per scenario, so simulated clusters never share state."""
    racks = {b: f"rack-{b % 3}" for b in range(6)}
    # Kafka's rack-aware placement of 12 partitions, RF 3, start index 0 over these brokers, written
    # out: conftest runs no package code at import (a mutation-testing run would break every test).
    placement = {
        0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 5], 4: [4, 5, 0], 5: [5, 0, 1],
        6: [0, 4, 5], 7: [1, 5, 0], 8: [2, 0, 1], 9: [3, 1, 2], 10: [4, 2, 3], 11: [5, 3, 4],
    }  # fmt: skip
    balanced = {
        "cluster_id": "balanced",
        "brokers": [{"id": b, "rack": r} for b, r in racks.items()],
        "partitions": [
            {"topic": "orders", "partition": p, "replicas": r, "leader": r[0], "isr": r, "size_bytes": 1 << 30}
            for p, r in placement.items()
        ],
    }
    (home / "balanced-cluster.json").write_text(json.dumps(balanced))
    # The same cluster after a scale-out: broker 6 joined (rack-0) and, as in Kafka, holds nothing yet.
    scaled = {**balanced, "brokers": [*balanced["brokers"], {"id": 6, "rack": "rack-0"}]}
    (home / "scaled-cluster.json").write_text(json.dumps(scaled))
    scenarios = ["demo-dry", "demo-exec", "demo-reject", "demo-fail"]
    # Pause and windows in a DAG run: polls (and the paused task's trigger) every second.
    lines_window = [f"  - {{cluster_id: demo-window, source: 'simulated:{SAMPLE}', schedule: null, "
                    "executor: {poll_interval_seconds: 1, window_margin_seconds: 0}}"]
    lines = ["clusters:", f"  - {{cluster_id: balanced, source: 'simulated:{home / 'balanced-cluster.json'}', schedule: null}}"]
    lines += [f"  - {{cluster_id: {c}, source: 'simulated:{SAMPLE}', schedule: null}}" for c in scenarios]
    lines += lines_window
    # Decommissioning on a balanced cluster; its byte_tolerance shows clusters.yaml reaching the planner.
    lines += [f"  - {{cluster_id: decom-balanced, source: 'simulated:{home / 'balanced-cluster.json'}', schedule: null, "
              "defaults: {byte_tolerance: 0.2}}"]
    # A scale-out under an approval policy that allows the plan it needs (about 5 GiB to copy): approved by the
    # policy, not by a person (tests/orchestration/test_approval_policy.py has the held case).
    lines += [f"  - {{cluster_id: scale-policy, source: 'simulated:{home / 'scaled-cluster.json'}', schedule: null, "
              "approval_policy: {rules: [{name: leaders-only, when: {max_replica_moves: 0}}, "
              "{name: small-moves, when: {max_bytes: 20GiB}}]}}"]
    lines += [f"  - {{cluster_id: demo-eu-1, source: 'simulated:{SAMPLE}'}}"]
    # The real Kafka sandbox (fixture kafka_sandbox sets the connection); polls fast for tests.
    lines += ["  - {cluster_id: real-kafka, source: kafka_sandbox, schedule: null, "
              "executor: {poll_interval_seconds: 1, stall_seconds: 60}}"]
    (home / "clusters.yaml").write_text("\n".join(lines) + "\n")


_write_test_clusters(_AIRFLOW_HOME)


@pytest.fixture(scope="session")
def sample_snapshot_path() -> Path:
    return SAMPLE


@pytest.fixture(scope="session")
def balanced_snapshot_path() -> Path:
    """6 brokers over 3 racks, 12 equal partitions placed as Kafka would: every goal is met."""
    return _AIRFLOW_HOME / "balanced-cluster.json"


@pytest.fixture(scope="session")
def airflow_db() -> Path:
    """One Airflow metadata DB (SQLite) for the whole session."""
    from airflow.utils import db

    db.initdb()
    return _AIRFLOW_HOME


@pytest.fixture(scope="session")
def spark():
    """ONE local SparkSession for the whole test session: a JVM start costs seconds."""
    from kafka_rebalance.analysis.job import build_session

    session = build_session(
        "local[2]",
        app_name="kafka-rebalance-tests",
        conf={"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2", "spark.ui.enabled": "false"},
    )
    yield session
    session.stop()


@pytest.fixture(scope="session")
def kafka_sandbox(tmp_path_factory):
    """ONE real Apache Kafka cluster for the session: 3 combined KRaft nodes on 3 racks, on 127.0.0.1.

    Started with `kafka-rebalance sandbox`'s own code and stopped by pid at the end. The DAG under
    test reaches it through the Airflow connection `kafka_sandbox` (cluster `real-kafka`).
    """
    from kafka_rebalance.sandbox import cluster
    from kafka_rebalance.sandbox.disk import SandboxDiskError, plan_disk_limit

    directory = tmp_path_factory.mktemp("kafka") / "sandbox"
    # Every sandbox broker reports the host's filesystem as its disk: the tests' plans take a disk limit above
    # what the host holds (tests/support/kafka.py, disk_limit_args); a host too full for any is one line here.
    try:
        plan_disk_limit(directory.parent)
    except SandboxDiskError as exc:
        pytest.fail(str(exc), pytrace=False)
    sandbox = cluster.up(directory, brokers=3, racks=3)
    print(f"\nkafka sandbox: Kafka {sandbox.kafka_version}, 3 nodes up in {sandbox.start_seconds:.1f}s "
          f"({sandbox.bootstrap_servers})", file=sys.stderr)
    os.environ["AIRFLOW_CONN_KAFKA_SANDBOX"] = json.dumps(
        {"conn_type": "kafka", "extra": {"bootstrap.servers": sandbox.bootstrap_servers}})
    yield sandbox
    # Tests may have restarted a node: stop what sandbox.json records now.
    cluster.down(directory)


@pytest.fixture
def topic_prefix(request, kafka_sandbox):
    """A topic prefix of this test's own; its topics are deleted afterwards."""
    from tests.support.kafka import delete_topics

    prefix = "".join(c if c.isalnum() else "-" for c in request.node.name.removeprefix("test_"))[:40].strip("-")
    delete_topics(kafka_sandbox, prefix)
    yield prefix
    delete_topics(kafka_sandbox, prefix)


# A parameter (or argument) named after a fixture on the session's one Kafka sandbox, not a keyword of that name
# (`SeedSpec(topic_prefix="s")` seeds a cluster of the test's own): such a module runs in the sandbox's group.
_SANDBOX_FIXTURE = re.compile(r"(?<![\w.])(kafka_sandbox|topic_prefix)\s*[,)]")


@cache
def _uses_the_sandbox(module: str) -> bool:
    return bool(_SANDBOX_FIXTURE.search((ROOT / module).read_text(encoding="utf-8")))


def _group(nodeid: str) -> str:
    """The worker group of a test under `make test`'s pytest-xdist run: its module, so module-scoped fixtures (a
    planned cluster, an Airflow API server, a Kafka cluster of its own) are built once; every module on the session's
    shared Kafka sandbox one group, so the sandbox starts once. From the node id alone: the controller, which
    schedules, collects nothing. (Two sandbox groups on four workers ran longer: 24:49 against 22:38 for this
    phase, the two cores overloaded.)"""
    module = nodeid.split("::", 1)[0]
    return "kafka-sandbox" if module.endswith(".py") and _uses_the_sandbox(module) else module


# Groups are handed out in collection order (--no-loadscope-reorder): the longest in wall time first, so no worker
# starts a quarter-hour of Kafka waits when the others are nearly done, and the modules of a minute or more of
# planning before the many short ones, which then even out the workers' ends (at the last four of the list's place
# in file order, the three workers ended 40 s apart).
_FIRST = ("kafka-sandbox", "tests/real_kafka/", "tests/ui/", "tests/airflow_dags/", "tests/sandbox/", "tests/analysis/",
          "tests/validation/", "tests/planner/test_corpus.py", "tests/executor/test_crash_points.py",
          "tests/planner/test_plans_pass_the_gate.py", "tests/planner/test_exact.py")


# xdist gives a worker its next group once two of its tests are left: the sandbox group's last test waited four minutes
# for its windows, and the worker took a two-minute module when it began, ending a minute after the others. The
# group's long sleepers go first.
_SLEEPERS = ("tests/real_kafka/test_windows_on_real_kafka.py",)


def _start_rank(group: str) -> int:
    return next((i for i, prefix in enumerate(_FIRST) if group.startswith(prefix)), len(_FIRST))


def _order(nodeid: str) -> tuple[int, bool]:
    return _start_rank(_group(nodeid)), not nodeid.startswith(_SLEEPERS)


def pytest_xdist_make_scheduler(config, log):
    """xdist's own --dist loadgroup reads marks it turns into node-id suffixes that pytest 9 no longer keeps (every
    test became its own group): this scheduler groups by ``_group`` instead."""
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _group(nodeid)

    return ByGroup(config, log)


def pytest_collection_modifyitems(config, items):
    if hasattr(config, "workerinput"):  # an xdist worker: every worker collects, and sorts, alike
        items.sort(key=lambda item: _order(item.nodeid))  # stable: file order within a rank
    _cheapest_first_under_mutation(items)


def _cheapest_first_under_mutation(items) -> None:
    """Under `make mutate` only: run a mutant's tests cheapest first, so a killed mutant stops (mutmut
    runs pytest with -x) at its cheapest failing test, not at the first in file order. Cheapest: no
    fixture shared beyond the test (whose set-up, e.g. a planned 600-partition cluster, mutmut's
    durations do not count), then the shortest call in mutmut's clean run. Ordinary runs keep the file order."""
    if "__mutmut_" not in os.environ.get("MUTANT_UNDER_TEST", ""):
        return
    stats = Path("mutmut-stats.json")  # mutmut runs the tests from its mutants/ directory
    durations = json.loads(stats.read_text())["duration_by_test"] if stats.exists() else {}

    def shares_a_fixture(item) -> bool:
        defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        return any(d[-1].scope != "function" and d[-1].baseid.startswith("tests") for d in defs.values() if d)

    items.sort(key=lambda item: (shares_a_fixture(item), durations.get(item.nodeid, float("inf"))))
