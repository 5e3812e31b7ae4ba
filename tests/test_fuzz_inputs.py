"""Property-based fuzzing of every input edge: no traceback, no hang, whatever the input (issue 14).

Fixed, derandomized profile so CI sees the same examples every run; the whole module
takes ~30 s. Each edge may accept (a valid snapshot/plan) or refuse with a
``RebalanceError``; anything else (a traceback) or a call past its time limit fails.
"""

from __future__ import annotations

import json
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kafka_rebalance.cli import app
from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.plan_manifest import load_plan
from kafka_rebalance.report.html import load_report_plan
from kafka_rebalance.snapshot import load_snapshot, snapshot_from_dict, write_snapshot
from kafka_rebalance.topics_describe import parse_topics_describe
from tests.support.clusters import part, snapshot
from tests.support.plans import plan_dir

FUZZ = settings(derandomize=True, deadline=None, database=None, max_examples=60,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])  # fmt: skip
PER_CALL_SECONDS = 20


@contextmanager
def time_limit(seconds: int = PER_CALL_SECONDS) -> Iterator[None]:
    """A hang fails the test instead of stalling CI (SIGALRM: the tests run in the main thread)."""

    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError(f"no answer within {seconds}s: a hang")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def accepted_or_refused(call: Any, *args: Any) -> Any:
    with time_limit():
        try:
            return call(*args)
        except RebalanceError as exc:
            assert str(exc)  # a message an operator can act on
            return None


def usable(snap: Any) -> None:
    """What the loader accepts, describe, the report and the planner must take without a crash."""
    if snap is None:
        return
    from kafka_rebalance.metrics import broker_loads
    from kafka_rebalance.planner import PlanOptions, make_plan

    broker_loads(snap)
    accepted_or_refused(make_plan, snap, PlanOptions())


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
GOOD = {
    "cluster_id": "c",
    "configs": {"leader.imbalance.per.broker.percentage": "10"},
    "brokers": [{"id": 0, "rack": "a"}, {"id": 1, "rack": "b"}, {"id": 2, "rack": "a"}],
    "topics": {"t": {"configs": {}}},
    "partitions": [
        {"topic": "t", "partition": 0, "replicas": [0, 1], "leader": 0, "isr": [0, 1], "size_bytes": 10, "bytes_in_per_sec": 1.0},
        {"topic": "t", "partition": 1, "replicas": [1, 2], "leader": -1, "isr": [1], "offline_replicas": [2]},
    ],
}
PATHS = [("cluster_id",), ("controller",), ("captured_at",), ("configs",), ("configs", "leader.imbalance.per.broker.percentage"),
         ("brokers",), ("brokers", 0), ("brokers", 1, "id"), ("brokers", 0, "rack"), ("brokers", 2, "alive"),
         ("topics",), ("topics", "t"), ("partitions",), ("partitions", 0), ("partitions", 0, "topic"),
         ("partitions", 0, "partition"), ("partitions", 0, "replicas"), ("partitions", 0, "leader"), ("partitions", 1, "isr"),
         ("partitions", 0, "size_bytes"), ("partitions", 0, "bytes_in_per_sec"), ("partitions", 1, "offline_replicas")]  # fmt: skip


def mutated(base: Any, path: tuple[Any, ...], value: Any) -> Any:
    doc = json.loads(json.dumps(base))
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


@FUZZ
@given(st.sampled_from(PATHS), json_values)
def test_snapshot_loader_json_fields(path: tuple[Any, ...], value: Any) -> None:
    usable(accepted_or_refused(snapshot_from_dict, mutated(GOOD, path, value), "fuzz"))


@FUZZ
@given(st.one_of(st.text(max_size=200), st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
                 st.integers(1, 3000).map(lambda n: '{"cluster_id": ' + "[" * n + "]" * n + "}"),
                 st.sampled_from(PATHS).flatmap(lambda p: json_values.map(lambda v: json.dumps(mutated(GOOD, p, v))))))
def test_snapshot_loader_json_text(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.json"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        usable(accepted_or_refused(load_snapshot, path))


@pytest.fixture(scope="module")
def parquet_bytes(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = write_snapshot(snapshot_from_dict(GOOD), tmp_path_factory.mktemp("pq") / "s.parquet")
    return path.read_bytes()


@FUZZ
@given(st.data())
def test_snapshot_loader_damaged_parquet(parquet_bytes: bytes, data: st.DataObject) -> None:
    raw = bytearray(parquet_bytes)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(4, len(raw)))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.parquet"
        path.write_bytes(bytes(raw[:cut]))
        usable(accepted_or_refused(load_snapshot, path))


ids_text = st.lists(st.sampled_from(["0", "1", "2", "-1", "", " ", "١", "²", "99999999999", "x", "none"]), max_size=4).map(",".join)
describe_line = st.builds(
    lambda topic, p, leader, reps, isr, extra: f"\tTopic: {topic}\tPartition: {p}\tLeader: {leader}\tReplicas: {reps}\tIsr: {isr}{extra}",
    st.sampled_from(["t", "a b", "..", "", "x" * 250]), st.sampled_from(["0", "1", "-1", "١", "2147483648", ""]),
    st.sampled_from(["0", "1", "none", "-1", "", "x"]), ids_text, ids_text,
    st.sampled_from(["", "\tElr: \tLastKnownElr: ", "\tElr: N/A\tLastKnownElr: N/A", "\tOffline: 2", "\tElr: 1,"]),
)


@FUZZ
@given(st.lists(describe_line | st.text(max_size=60), min_size=1, max_size=6))
def test_describe_importer(lines: list[str]) -> None:
    usable(accepted_or_refused(parse_topics_describe, "\n".join(lines), "c"))


@pytest.fixture(scope="module")
def plan_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("plan") / "p"
    snap = snapshot([0, 1, 2], [part("t", 0, [0, 1]), part("t", 1, [0, 1]), part("t", 2, [0, 1])])
    plan_dir(snap, out)
    return {str(p.relative_to(out)): p.read_text() for p in out.rglob("*") if p.is_file()}


def _edited(files: dict[str, str], rel: str, text: str) -> Path:
    root = Path(tempfile.mkdtemp())
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text if name == rel else content)
    return root


@FUZZ
@given(st.data())
def test_plan_readers(plan_files: dict[str, str], data: st.DataObject) -> None:
    rel = data.draw(st.sampled_from(sorted(n for n in plan_files if n.endswith(".json"))))
    doc = json.loads(plan_files[rel])
    if isinstance(doc, dict) and doc and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(doc)))
        text = json.dumps({**doc, key: data.draw(json_values)})
    else:
        text = data.draw(st.one_of(st.text(max_size=80), json_values.map(json.dumps)))
    root = _edited(plan_files, rel, text)
    accepted_or_refused(load_plan, root, False)
    accepted_or_refused(load_report_plan, root)


# --------------------------------------------------------------------------- every numeric CLI flag

NUMBERS = st.one_of(
    st.sampled_from(["nan", "inf", "-inf", "-1", "0", "1", "1e400", "١", "²", "", " ", "1.5", "abc", "-0", "0x10", "1_0"]),
    st.sampled_from([2**31 - 1, 2**31, 2**63 - 1, 2**63, 2**64, 2**70, -(2**63) - 1]).map(str),
    st.integers(-10, 10).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)
FLAGS = {
    "assign": ["--partitions", "--replication-factor", "--start-index", "--replica-shift", "--start-partition-id", "--seed"],
    "add-partitions": ["--partitions"],
    "describe": ["--threshold-percentage"],
    "generate-cluster": ["--brokers", "--racks", "--topics", "--partitions", "--replication-factor", "--replica-skew",
                         "--leader-skew", "--new-brokers", "--dead-brokers", "--under-replicated", "--offline-replicas",
                         "--leaderless", "--mean-partition-mb", "--threshold-percentage", "--seed"],
    "plan": ["--max-partitions-per-batch", "--max-moves-per-broker", "--max-new-replicas-per-partition", "--throttle",
             "--replication-factor", "--byte-tolerance", "--election-batch-size", "--threshold-percentage",
             "--throttle-efficiency"],
    "execute": ["--connect-timeout", "--poll-interval", "--stall-seconds", "--batch-timeout", "--window-margin",
                "--window-grace"],
    "verify": ["--connect-timeout"],
    "cancel": ["--connect-timeout"],
}  # fmt: skip
FLAG_CASES = [(cmd, flag) for cmd, flags in FLAGS.items() for flag in flags]


def base_args(cmd: str, tmp: Path, snap: Path) -> list[str]:
    return {
        "assign": ["--brokers", "0,1,2", "--partitions", "3", "--replication-factor", "2"],
        "add-partitions": ["--snapshot", str(snap), "--topic", "t"],
        "describe": ["--snapshot", str(snap)],
        "generate-cluster": ["--out", str(tmp / "g.json"), "--partitions", "30"],
        "plan": ["--snapshot", str(snap), "--out", str(tmp / "p")],
        "execute": ["--plan", str(tmp / "none"), "--simulate", str(snap)],
        "verify": ["--plan", str(tmp / "none"), "--simulate", str(snap)],
        "cancel": ["--plan", str(tmp / "none"), "--simulate", str(snap)],
    }[cmd]


@FUZZ
@given(st.sampled_from(FLAG_CASES), NUMBERS)
def test_numeric_flags_never_crash(case: tuple[str, str], value: str) -> None:
    cmd, flag = case
    with tempfile.TemporaryDirectory() as tmp:
        snap = Path(tmp) / "s.json"
        snap.write_text(json.dumps(GOOD))
        args = base_args(cmd, Path(tmp), snap)
        if flag in args:  # the fuzzed flag replaces the base value
            i = args.index(flag)
            args = args[:i] + args[i + 2 :]
        with time_limit():
            r = CliRunner().invoke(app, [cmd, *args, flag, value])
    assert r.exit_code in (0, 1, 2), (cmd, flag, value, r.output)
    assert r.exception is None or isinstance(r.exception, SystemExit), (cmd, flag, value, repr(r.exception))
    assert "Traceback" not in r.output
    if r.exit_code == 2:
        assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, r.stderr


WINDOW_TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["now", "configured", "2026-11-25T01:00Z/PT4H", "2026-11-25T01:00Z/2026-11-25T00:00Z", "x/y", "/",
                     "2026-11-25T01:00/PT1H", "2026-11-25T01:00Z/P9999999D", "2026-11-25T01:00Z/PT1H/PT1H",
                     "9999-12-31T23:59Z/PT1H", "0001-01-01T00:00Z/PT1H", "2026-11-25T01:00Z/-PT1H", "2026-11-25T01:00Z/\x00"]),
    st.builds(lambda a, b: f"{a}/{b}", st.text(max_size=25), st.text(max_size=12)),
)


EDGE_WINDOWS = ["9999-12-31T23:59Z/PT1H", "0001-01-01T00:30+01:00/PT1H", "8999-12-31T23:59Z/P366D",
                "2026-11-25T01:00Z/99999999999h", "2026-11-25T01:00Z/PT99999999999999H", "1969-12-31T23:59Z/PT1H"]


@pytest.mark.parametrize("text", EDGE_WINDOWS)
def test_window_extremes_are_one_error_or_a_policy(text: str) -> None:
    _policy_or_one_error(text, "0 1 * * *", "1h")


@FUZZ
@given(WINDOW_TEXT, st.text(max_size=20), st.text(max_size=20))
def test_window_inputs_are_a_policy_or_one_error(text: str, cron: str, duration: str) -> None:
    _policy_or_one_error(text, cron, duration)


def _policy_or_one_error(text: str, cron: str, duration: str) -> None:
    """The trigger form's window, and a clusters file's cron and duration: a policy, or a WindowError."""
    from datetime import datetime

    from kafka_rebalance.executor.windows import WindowError, policy, window_from_config

    for call in (lambda: policy(text, []), lambda: window_from_config({"cron": cron, "duration": duration}, "w")):
        try:
            result = call()
        except WindowError as exc:
            assert "\n" not in str(exc) and str(exc)
            continue
        if hasattr(result, "next_opening"):
            result.next_opening(datetime(2026, 11, 24, tzinfo=UTC))
