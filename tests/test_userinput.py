"""Bad input at every edge: one ``error:`` line naming file, field and value, exit 2 (issue 14).

Each case is one class of the issue's list of tracebacks, silent acceptance and hangs; the
CLI runs in-process (Typer's CliRunner) exactly as the console entry point runs it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kafka_rebalance import userinput
from kafka_rebalance.cli import app
from kafka_rebalance.cluster.connection import settings_from_properties
from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.executor.settings import parse_batch_selection
from kafka_rebalance.plan_manifest import Batch, Plan, Throttles
from kafka_rebalance.snapshot import load_snapshot, write_snapshot
from kafka_rebalance.userinput import loads_json, parse_int, topic_name_problem

GOOD = {
    "cluster_id": "c",
    "brokers": [{"id": 0}, {"id": 1}],
    "partitions": [{"topic": "t", "partition": 0, "replicas": [0, 1], "leader": 0, "isr": [0, 1]}],
}


def run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(app, list(args))
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output
    return r.exit_code, r.stderr.strip()


def snap_file(tmp_path: Path, name: str = "s.json", **change: Any) -> Path:
    raw = json.loads(json.dumps(GOOD))
    for key, value in change.items():
        if key == "topic":
            raw["partitions"][0]["topic"] = value
        elif key == "broker_id":
            raw["brokers"][1]["id"] = value
        elif key == "size":
            raw["partitions"][0]["size_bytes"] = value
        else:
            raw[key] = value
    path = tmp_path / name
    path.write_text(json.dumps(raw))
    return path


# --------------------------------------------------------------------------- ASCII digits only


def test_unicode_digits_are_not_broker_ids(tmp_path: Path) -> None:
    assert run("assign", "--brokers", "0,١", "--partitions", "1", "--replication-factor", "1") == (
        2, "error: --brokers: '١' is not a broker id (expected 0,1,2 or 0:rack-a,1:rack-b)")
    good = snap_file(tmp_path)
    assert run("plan", "--snapshot", str(good), "--out", str(tmp_path / "p"), "--decommission-brokers", "²") == (
        2, "error: --decommission-brokers: ² is not a broker id (expected e.g. 3,7)")
    rack = tmp_path / "rack.txt"
    rack.write_text("١ rack-a\n")
    desc = tmp_path / "d.txt"
    desc.write_text("Topic: t\tPartition: 0\tLeader: 1\tReplicas: 1,²\tIsr: 1\n")
    assert run("import-describe", "--input", str(desc), "--cluster-id", "c", "--out", str(tmp_path / "o.json"),
               "--rack-map", str(rack)) == (2, f"error: {rack}:1: expected '<broker id> <rack>', got '١ rack-a'")
    assert run("import-describe", "--input", str(desc), "--cluster-id", "c", "--out", str(tmp_path / "o.json")) == (
        2, f"error: {desc}:1: Replicas: expected comma-separated broker ids, got '1,²'")
    thr = snap_file(tmp_path, configs={"leader.imbalance.per.broker.percentage": "١٠"})
    assert run("describe", "--snapshot", str(thr)) == (
        2, f"error: {thr}: invalid snapshot (1 problem(s)): configs.leader.imbalance.per.broker.percentage: "
           'must be an integer percentage 0..100, got "\\u0661\\u0660"')


def _plan(ids: list[str]) -> Plan:
    batches = tuple(Batch(i, "move", {}, {}, Throttles(None), None, None) for i in ids)
    return Plan(Path("p"), {}, "h", "c", {}, batches, ())


def test_batch_selection_ascii_and_no_huge_ranges() -> None:
    plan = _plan(["001", "002", "003"])
    assert parse_batch_selection("1-2,3", plan) == ["001", "002", "003"]
    with pytest.raises(RebalanceError) as err:
        parse_batch_selection("١", plan)
    assert str(err.value) == "--batches: '١' is not N or N-M (e.g. 1-3)"
    with pytest.raises(RebalanceError) as err:  # used to build a 400-million-element set
        parse_batch_selection("1-400000000", plan)
    assert str(err.value) == "--batches: plan p has batches 001..003, not 4 (asked for 1..400000000)"


# --------------------------------------------------------------------------- files


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    assert run("describe", "--snapshot", str(tmp_path)) == (
        2, f"error: {tmp_path}: invalid snapshot (1 problem(s)): is a directory; give one snapshot file (.json or .parquet)")
    binary = tmp_path / "b.json"
    binary.write_bytes(b"\x00\x01PK\xff")
    assert run("describe", "--snapshot", str(binary)) == (
        2, f"error: {binary}: invalid snapshot (1 problem(s)): snapshot file (JSON or Parquet) is binary (holds NUL bytes), "
           "expected UTF-8 text")
    good = snap_file(tmp_path)
    assert run("generate-cluster", "--out", str(good / "x.json")) == (
        2, f"error: --out {good}/x.json: {good} is a file, not a directory")
    assert run("plan", "--snapshot", str(good), "--out", str(good / "plan")) == (
        2, f"error: --out {good}/plan: {good} is a file, not a directory")


def _without_root_file_access() -> None:
    """In the child before exec: drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from the bounding set.

    Root reads files whatever their mode only through these two capabilities; without them uid 0
    gets the owner's permission bits like anyone else (prctl PR_CAPBSET_DROP = 24).
    """
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):
        if libc.prctl(24, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def test_unreadable_file(tmp_path: Path) -> None:
    """A file whose mode forbids reading. CI runs as root, which reads any file: there the command runs
    without the capabilities that let root ignore file modes, as an operator's account would."""
    import subprocess
    import sys

    good = snap_file(tmp_path)
    good.chmod(0)
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-m", "kafka_rebalance.cli", "describe", "--snapshot", str(good)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(root / "plugins")},
                          preexec_fn=_without_root_file_access if os.geteuid() == 0 else None)
    # The flag's own check answers first (typer's readable=True), naming the flag and the file.
    assert (done.returncode, done.stderr.strip()) == (
        2, f"error: Invalid value for '--snapshot': path '{good}' is not readable."), done.stderr
    # The loader, which every other entry point (the DAG's steps, plan files) goes through, says why.
    loaded = subprocess.run([sys.executable, "-c", "import sys\nfrom kafka_rebalance.snapshot import load_snapshot\n"
                             "try:\n    load_snapshot(sys.argv[1])\nexcept Exception as e:\n    print(type(e).__name__, e)", str(good)],
                            capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(root / "plugins")},
                            preexec_fn=_without_root_file_access if os.geteuid() == 0 else None)
    assert loaded.stdout.strip() == f"SnapshotError {good}: invalid snapshot (1 problem(s)): cannot read (Permission denied)"


def test_broken_parquet_header_and_metadata(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    whole = write_snapshot(load_snapshot(snap_file(tmp_path)), tmp_path / "g.parquet")
    data = whole.read_bytes()
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(data[: len(data) // 2])
    assert run("describe", "--snapshot", str(cut)) == (
        2, f"error: {cut}: invalid snapshot (1 problem(s)): unreadable Parquet footer: Parquet magic bytes not found in "
           "footer. Either the file is corrupted or this is not a parquet file.")
    table = pq.read_table(whole)
    meta = dict(table.schema.metadata)
    meta[b"kafka_rebalance.snapshot"] = b'{"cluster_id": "c",'
    bad = tmp_path / "meta.parquet"
    pq.write_table(table.replace_schema_metadata(meta), bad)
    assert run("describe", "--snapshot", str(bad)) == (
        2, f"error: {bad}: invalid snapshot (1 problem(s)): metadata kafka_rebalance.snapshot: not valid JSON: "
           "Expecting property name enclosed in double quotes at line 1 column 20")


# --------------------------------------------------------------------------- integer ranges


def test_integers_beyond_kafkas_types(tmp_path: Path) -> None:
    big = snap_file(tmp_path, broker_id=2**64)
    assert run("describe", "--snapshot", str(big)) == (
        2, f"error: {big}: invalid snapshot (2 problem(s)): brokers[1]: id must be a broker id 0..2147483647, got "
           "18446744073709551616; partitions[0] t-0: replica 1 is not a known broker")
    size = snap_file(tmp_path, "size.json", size=2**63)
    assert run("describe", "--snapshot", str(size)) == (
        2, f"error: {size}: invalid snapshot (1 problem(s)): partitions[0] t-0: size_bytes must be an integer "
           "0..9223372036854775807, got 9223372036854775808")
    assert run("assign", "--brokers", "0,1", "--partitions", str(2**70), "--replication-factor", "1") == (
        2, "error: Invalid value for '--partitions': Input should be less than or equal to 1000000")
    assert run("plan", "--snapshot", str(snap_file(tmp_path)), "--out", str(tmp_path / "p"), "--throttle", str(2**70)) == (
        2, "error: plan: --throttle must be within 1.0 KiB/s to 8.0 EiB/s (1024..9223372036854775807 bytes/s; a Java long), "
           "got 1180591620717411303424")
    with pytest.raises(RebalanceError) as err:
        parse_int("99999999999", "x: partition")
    assert str(err.value) == "x: partition: 99999999999 is outside 0..2147483647"


# --------------------------------------------------------------------------- strict JSON


def test_deep_json_and_duplicate_keys(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert run("describe", "--snapshot", str(deep)) == (
        2, f"error: {deep}: invalid snapshot (1 problem(s)): JSON nested deeper than 64 levels")
    dup = tmp_path / "dup.json"
    dup.write_text(json.dumps(GOOD)[:-1] + ', "partitions": []}')  # the second would empty the cluster
    assert run("describe", "--snapshot", str(dup)) == (
        2, f'error: {dup}: invalid snapshot (1 problem(s)): duplicate key "partitions" in one object (JSON keys must be unique)')
    with pytest.raises(RebalanceError) as err:
        loads_json('{"a": NaN}', "f.json")
    assert str(err.value) == "f.json: NaN is not a JSON number"


def test_plan_files_refuse_duplicate_keys(tmp_path: Path) -> None:
    from kafka_rebalance.plan_manifest import load_plan

    (tmp_path / "plan.json").write_text('{"format_version": 1, "format_version": 1}')
    with pytest.raises(RebalanceError) as err:
        load_plan(tmp_path)
    assert str(err.value).startswith(f'{tmp_path}/plan.json: duplicate key "format_version" in one object (JSON keys must be unique)')


# --------------------------------------------------------------------------- describe text


def test_truncated_describe_lines(tmp_path: Path) -> None:
    desc = tmp_path / "d.txt"
    desc.write_text("Topic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2,\tIsr: 1,2\n")
    assert run("import-describe", "--input", str(desc), "--cluster-id", "c", "--out", str(tmp_path / "o.json")) == (
        2, f"error: {desc}:1: Replicas: expected comma-separated broker ids, got '1,2,'")
    desc.write_text("Topic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2\n")
    assert run("import-describe", "--input", str(desc), "--cluster-id", "c", "--out", str(tmp_path / "o.json")) == (
        2, f"error: {desc}:1: partition line without Isr: (truncated?)")


def test_kafka_41_describe_with_elr_parses() -> None:
    from kafka_rebalance.topics_describe import parse_topics_describe

    text = (
        "Topic: t\tTopicId: 3Ax\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: min.insync.replicas=1\n"
        "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\tElr: \tLastKnownElr: \n"
        "\tTopic: t\tPartition: 1\tLeader: none\tReplicas: 2,1\tIsr: 2\tElr: N/A\tLastKnownElr: N/A\n"
    )
    snap = parse_topics_describe(text, "c")
    assert [(p.partition, p.leader, p.isr) for p in snap.partitions] == [(0, 1, (1, 2)), (1, -1, (2,))]


# --------------------------------------------------------------------------- topic names


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("..", 'topic name cannot be "." or "..", got ".."'),
        ("a b", 'topic name "a b" has characters outside [a-zA-Z0-9._-]'),
        ("a\nb", 'topic name "a\\nb" has characters outside [a-zA-Z0-9._-]'),
        ("x" * 250, 'topic name is 250 characters, Kafka allows at most 249: "' + "x" * 40 + '"...'),
    ],
)
def test_topic_names_kafka_rejects(tmp_path: Path, name: str, problem: str) -> None:
    bad = snap_file(tmp_path, topic=name)
    assert run("describe", "--snapshot", str(bad)) == (2, f"error: {bad}: invalid snapshot (1 problem(s)): partitions[0].topic: {problem}")


def test_topic_names_kafka_accepts() -> None:
    assert [topic_name_problem(n) for n in ("a", "A.b_c-9", "x" * 249, "...")] == [None] * 4


# --------------------------------------------------------------------------- cluster ids

HOSTILE_ID = "prod\n$(touch CANARY)"
HOSTILE_SHOWN = "'prod\\n$(touch CANARY)' has characters outside [a-zA-Z0-9._-]"


def test_a_cluster_id_holding_a_shell_line_is_refused_wherever_it_enters(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    out = tmp_path / "o.json"
    as_json = snap_file(tmp_path, "bad.json", cluster_id=HOSTILE_ID)
    # A Parquet snapshot keeps its header as JSON in the file's metadata.
    table = pq.read_table(write_snapshot(load_snapshot(snap_file(tmp_path)), tmp_path / "g.parquet"))
    meta = dict(table.schema.metadata)
    head = json.loads(meta[b"kafka_rebalance.snapshot"])
    assert head["cluster_id"] == "c"
    meta[b"kafka_rebalance.snapshot"] = json.dumps({**head, "cluster_id": HOSTILE_ID}).encode()
    as_parquet = tmp_path / "bad.parquet"
    pq.write_table(table.replace_schema_metadata(meta), as_parquet)
    for bad in (as_json, as_parquet):
        expected = f"error: {bad}: invalid snapshot (1 problem(s)): cluster_id: {HOSTILE_SHOWN}"
        assert run("describe", "--snapshot", str(bad)) == (2, expected)
        assert run("plan", "--snapshot", str(bad), "--out", str(tmp_path / "p")) == (2, expected)
        assert not (tmp_path / "p").exists()
    desc = tmp_path / "d.txt"
    desc.write_text("Topic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\n")
    assert run("import-describe", "--input", str(desc), "--cluster-id", HOSTILE_ID, "--out", str(out)) == (
        2, f"error: --cluster-id: {HOSTILE_SHOWN}")
    assert run("gather", "--bootstrap-server", "127.0.0.1:9", "--cluster-id", HOSTILE_ID, "--out", str(out)) == (
        2, f"error: --cluster-id: {HOSTILE_SHOWN}")
    assert run("generate-cluster", "--cluster-id", HOSTILE_ID, "--out", str(out)) == (
        2, f"error: generate-cluster: --cluster-id: {HOSTILE_SHOWN}")
    assert not out.exists()
    # The same names pass.
    assert run("import-describe", "--input", str(desc), "--cluster-id", "prod-eu_1.a", "--out", str(out))[0] == 0
    assert load_snapshot(out).cluster_id == "prod-eu_1.a"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("", "must be a non-empty string, got ''"),
        (None, "must be a non-empty string, got None"),
        (".", "cannot be \".\" or \"..\", got '.'"),
        ("a/b", "'a/b' has characters outside [a-zA-Z0-9._-]"),
        ("zählerstände", "'zählerstände' has characters outside [a-zA-Z0-9._-]"),
        ("c" * 250, f"is 250 characters, Kafka allows at most 249: {'c' * 40!r}..."),
    ],
)
def test_cluster_ids_kafka_would_not_accept_as_a_name(value: Any, problem: str) -> None:
    assert userinput.cluster_id_problem(value) == problem
    with pytest.raises(userinput.InputError) as err:
        userinput.check_cluster_id(value, "--cluster-id")
    assert str(err.value) == f"--cluster-id: {problem}"


def test_cluster_ids_kafka_would_accept() -> None:
    assert [userinput.cluster_id_problem(n) for n in ("a", "A.b_c-9", "c" * 249, "...")] == [None] * 4


# --------------------------------------------------------------------------- flags


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["generate-cluster", "--replica-skew", "nan"], "error: generate-cluster: --replica-skew must be within 0..100, got nan"),
        (["generate-cluster", "--seed", "-1"], "error: generate-cluster: --seed must be within 0..9223372036854775807, got -1"),
        (["describe", "--threshold-percentage", "nan"], "error: --threshold-percentage: must be a percentage within 0..100, got nan"),
        (["describe", "--threshold-percentage", "-5"], "error: --threshold-percentage: must be a percentage within 0..100, got -5"),
        (["plan", "--byte-tolerance", "nan"], "error: plan: --byte-tolerance must be within 0..10 (a fraction of the mean), got nan"),
        (["plan", "--throttle-efficiency", "0"],
         "error: plan: --throttle-efficiency must be within 0.05..1 (the fraction of the throttle the brokers deliver), got 0.0"),
        (["execute", "--poll-interval", "nan"], "error: --poll-interval must be within 0..3600 seconds (exclusive of 0), got nan"),
        (["execute", "--poll-interval", "inf"], "error: --poll-interval must be within 0..3600 seconds (exclusive of 0), got inf"),
        (["execute", "--batch-timeout", "-5"], "error: --batch-timeout must be within 0..604800 seconds (exclusive of 0), got -5.0"),
        (["execute", "--connect-timeout", "nan"], "error: Invalid value for '--connect-timeout': Input should be less than or equal to 3600"),
    ],
)
def test_numeric_flags_are_range_checked(tmp_path: Path, args: list[str], line: str) -> None:
    good = snap_file(tmp_path)
    extra = {
        "generate-cluster": ["--out", str(tmp_path / "g.json")],
        "describe": ["--snapshot", str(good)],
        "plan": ["--snapshot", str(good), "--out", str(tmp_path / "p")],
        "execute": ["--plan", str(tmp_path / "p"), "--simulate", str(good)],  # flags are checked before the plan is read
    }[args[0]]
    assert run(*args, *extra) == (2, line)
    assert not (tmp_path / "g.json").exists() and not (tmp_path / "p").exists()


def test_client_properties_timeout_must_be_a_number(tmp_path: Path) -> None:
    props = tmp_path / "client.properties"
    props.write_text("request.timeout.ms=abc\n")
    with pytest.raises(RebalanceError) as err:
        settings_from_properties(props, "localhost:9092")
    assert str(err.value) == f'{props}: request.timeout.ms: expected milliseconds (ASCII digits), got "abc"'


# --------------------------------------------------------------------------- the helpers themselves


@pytest.mark.parametrize(
    ("text", "depth"),
    [("", 0), ("1", 0), ("[]", 1), ('{"a": [1, {"b": []}]}', 4), ('["[[[", "]"]', 1), ('[[]] [[[]]]', 3),
     ('{"a\\"[[[": [1]}', 2), ('["\\\\", [[]]]', 3), ('"]]]]" [', 1)],
)
def test_json_depth_counts_brackets_outside_strings_only(text: str, depth: int) -> None:
    assert userinput.json_depth(text) == depth


def test_json_nesting_limit_is_exactly_64_levels() -> None:
    assert userinput.loads_json("[" * 64 + "]" * 64, "s") == userinput.loads_json("[" * 64 + "]" * 64, "s")
    with pytest.raises(userinput.InputError) as err:
        userinput.loads_json("[" * 65 + "]" * 65, "snap.json")
    assert str(err.value) == "snap.json: JSON nested deeper than 64 levels"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1,}', "s.json: not valid JSON: Expecting property name enclosed in double quotes at line 1 column 9"),
        ('{"a": 1,\n "a": 2}', 's.json: duplicate key "a" in one object (JSON keys must be unique)'),
        ("[NaN]", "s.json: NaN is not a JSON number"),
        ("[-Infinity]", "s.json: -Infinity is not a JSON number"),
        ("1" * 5000, "s.json: not usable JSON: Exceeds the limit (4300 digits) for integer string conversion"),
    ],
)
def test_json_problems_are_one_line_naming_the_source(text: str, message: str) -> None:
    with pytest.raises(userinput.InputError) as err:
        userinput.loads_json(text, "s.json")
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_objects_with_distinct_keys_parse() -> None:
    assert userinput.loads_json('{"b": 1, "a": {"b": 2}}', "s") == {"b": 1, "a": {"b": 2}}


def test_read_text_names_each_file_problem(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text('{"é": 1}', encoding="utf-8")
    assert userinput.read_text(good) == '{"é": 1}'
    assert userinput.read_json(good) == {"é": 1}
    cases = {
        tmp_path / "missing": f"{tmp_path / 'missing'}: snapshot does not exist",
        tmp_path: f"{tmp_path}: is a directory, expected a snapshot",
    }
    for path, message in cases.items():
        with pytest.raises(userinput.InputError) as err:
            userinput.read_text(path, "snapshot")
        assert str(err.value) == message
    (tmp_path / "nul").write_bytes(b"ab\x00c")
    with pytest.raises(userinput.InputError) as err:
        userinput.read_text(tmp_path / "nul", "snapshot")
    assert str(err.value) == f"{tmp_path / 'nul'}: snapshot is binary (holds NUL bytes), expected UTF-8 text"
    (tmp_path / "latin").write_bytes(b"ab\xe9c")
    with pytest.raises(userinput.InputError) as err:
        userinput.read_text(tmp_path / "latin", "snapshot")
    assert str(err.value) == f"{tmp_path / 'latin'}: snapshot is not UTF-8 text (invalid continuation byte at byte 2)"
    (tmp_path / "f").write_text("x")
    with pytest.raises(userinput.InputError) as err:
        userinput.read_text(tmp_path / "f" / "under", "snapshot")
    assert str(err.value) == f"{tmp_path / 'f' / 'under'}: cannot read snapshot (Not a directory)"
    with pytest.raises(userinput.InputError) as err:
        userinput.read_json(tmp_path / "missing")
    assert str(err.value) == f"{tmp_path / 'missing'}: JSON file does not exist"


def test_parse_int_accepts_ascii_within_range_only() -> None:
    assert userinput.parse_int(" 42 ", "--x") == 42
    assert userinput.parse_int("-5", "--x", lo=-10) == -5
    assert userinput.parse_int("2147483647", "--x") == 2**31 - 1
    for text, message in [
        ("4 2", '--x: expected an integer (ASCII digits), got "4 2"'),
        ("٤٢", '--x: expected an integer (ASCII digits), got "\\u0664\\u0662"'),
        ("1" * 21, f'--x: expected an integer (ASCII digits), got "{"1" * 21}"'),
        ("2147483648", "--x: 2147483648 is outside 0..2147483647"),
        ("-1", "--x: -1 is outside 0..2147483647"),
    ]:
        with pytest.raises(userinput.InputError) as err:
            userinput.parse_int(text, "--x")
        assert str(err.value) == message
    with pytest.raises(userinput.InputError, match=r"--seed: expected a seed \(ASCII digits\)"):
        userinput.parse_int("x", "--seed", what="a seed")
    assert userinput.parse_int("1" * 20, "--x", hi=10**20) == int("1" * 20)


def test_output_paths_refuse_directories_and_files_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    (tmp_path / "dir").mkdir()
    assert userinput.check_output_file(tmp_path / "new" / "out.html", "--out") == tmp_path / "new" / "out.html"
    assert userinput.check_output_dir(tmp_path / "dir", "--out") == tmp_path / "dir"
    assert userinput.check_output_dir(tmp_path / "a" / "b", "--out") == tmp_path / "a" / "b"
    for check, path, message in [
        (userinput.check_output_file, tmp_path / "dir", f"--out {tmp_path / 'dir'}: is a directory, expected a file name"),
        (userinput.check_output_file, tmp_path / "file" / "x" / "y",
         f"--out {tmp_path / 'file' / 'x' / 'y'}: {tmp_path / 'file'} is a file, not a directory"),
        (userinput.check_output_dir, tmp_path / "file", f"--out {tmp_path / 'file'}: is a file, expected a directory"),
        (userinput.check_output_dir, tmp_path / "file" / "x",
         f"--out {tmp_path / 'file' / 'x'}: {tmp_path / 'file'} is a file, not a directory"),
    ]:
        with pytest.raises(userinput.InputError) as err:
            check(path, "--out")
        assert str(err.value) == message


def test_check_topic_name_returns_a_legal_name_and_names_an_illegal_one() -> None:
    assert userinput.check_topic_name("orders.v2_x-y", "f.json: topic") == "orders.v2_x-y"
    with pytest.raises(userinput.InputError) as err:
        userinput.check_topic_name("..", "f.json: partitions[3].topic")
    assert str(err.value) == f"f.json: partitions[3].topic: {userinput.topic_name_problem('..')}"
