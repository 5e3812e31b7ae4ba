"""An approved plan is exactly what runs: every edit is refused, no output flag writes over a plan,
completed partitions are counted per partition, a plan can be re-armed (audited), and a corrupt
ledger or simulator state gives one error line."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kafka_rebalance.cluster.admin import TP
from kafka_rebalance.cluster.sim_admin import SimAdmin
from kafka_rebalance.cluster.simulator import Simulator
from kafka_rebalance.executor.executor import Executor
from kafka_rebalance.executor.ledger import Ledger
from kafka_rebalance.executor.results import PartitionState
from kafka_rebalance.executor.settings import ExecSettings
from kafka_rebalance.plan_dir import dump, file_sha256, record_approval, seal, write_validation_verdict
from kafka_rebalance.plan_manifest import load_plan
from kafka_rebalance.snapshot import load_snapshot, snapshot_from_dict, write_snapshot
from tests.support.plans import approve, judge, move_one_replica, read_json, restamp, write_plan

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "sample-cluster.json"


def run_cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    """The real entry point (``kafka-rebalance``), in-process: exit code, stdout, stderr."""
    from kafka_rebalance.cli import main

    argv, sys.argv = sys.argv, ["kafka-rebalance", *map(str, args)]
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = argv
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def snap():
    return load_snapshot(SAMPLE)


@pytest.fixture
def plan(tmp_path, snap) -> Path:
    batches = [move_one_replica(snap, 3), move_one_replica(snap, 3, skip=3), move_one_replica(snap, 3, skip=6)]
    return approve(write_plan(tmp_path / "plan", snap, batches))


# ----------------------------------------------------------------------------- every edit is refused


def _edit_json(path: Path, change: Callable[[dict], None]) -> None:
    value = read_json(path)
    change(value)
    path.write_text(json.dumps(value, indent=2, sort_keys=True) + "\n")


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def _reseal_without_last_batch(d: Path) -> None:
    # Cut a batch AND re-record every hash with the project's own functions: the verdict still names the old plan.
    m = read_json(d / "plan.json")
    last = m["batches"].pop()["id"]
    m["files"] = {k: v for k, v in m["files"].items() if not k.startswith(f"batches/{last}/")}
    for f in (d / "batches" / last).iterdir():
        f.unlink()
    (d / "batches" / last).rmdir()
    (d / "plan.json").write_text(dump(seal(m)).decode())


def _forged(d: Path, change: Callable[[Path], None]) -> None:
    """Change a plan file AND re-record every hash, a passing verdict and an approval for the result, as
    someone with write access to the plan directory could: only the executor's own checks stand in the way."""
    change(d)
    restamp(d)
    judge(d, "passed")
    (d / "approval.json").unlink(missing_ok=True)
    approve(d)


def _renumbered(schedule: dict, steps: list[dict]) -> None:
    """``steps`` as schedule.json's, ids and each partition's ``after`` made consistent again."""
    last: dict[tuple[str, int], int] = {}
    for n, st in enumerate(steps):
        st["id"], st["after"] = n, last.get((st["topic"], st["partition"]))
        last[(st["topic"], st["partition"])] = n
    schedule["steps"] = steps


def _drop_step(n: int) -> Callable[[dict], None]:
    return lambda sched: _renumbered(sched, [st for i, st in enumerate(sched["steps"]) if i != n])


def _repeat_step(n: int) -> Callable[[dict], None]:
    return lambda sched: _renumbered(sched, [*sched["steps"], dict(sched["steps"][n])])


def _set_rate(value: int | str) -> Callable[[dict], None]:
    def change(t: dict) -> None:
        t["rate_bytes_per_sec"] = value
        for cfg in t["brokers"].values():
            cfg.update({k: str(value) for k in cfg})
    return change


EDITS: dict[str, tuple[Callable[[Path], None], str]] = {
    "delete one batch from the list": (
        lambda d: _edit_json(d / "plan.json", lambda m: m["batches"].pop(1)), "plan.json: batches: changed since planning"),
    "reorder the batch list": (
        lambda d: _edit_json(d / "plan.json", lambda m: m["batches"].reverse()), "plan.json: batches: changed since planning"),
    "a batch's estimate": (
        lambda d: _edit_json(d / "plan.json", lambda m: m["batches"][0].update(estimated_seconds=1e9)), "plan.json: batches: changed"),
    "the options": (
        lambda d: _edit_json(d / "plan.json", lambda m: m["options"].update(throttle_bytes_per_sec=1)), "plan.json: options: changed"),
    "a verdict put back into plan.json": (
        lambda d: _edit_json(d / "plan.json", lambda m: m.update(validation={"status": "passed"})), "plan.json: validation: added"),
    "the recorded plan hash": (
        lambda d: _edit_json(d / "plan.json", lambda m: m.update(plan_hash="0" * 64)), "plan.json: plan_hash: recorded"),
    "a batch file": (
        lambda d: _edit_json(d / "batches/002/throttles.json", lambda t: t.update(rate_bytes_per_sec=1)),
        "batches/002/throttles.json: changed since planning"),
    "a reassignment file": (
        lambda d: _edit_json(d / "batches/001/reassignment.json", lambda r: r["partitions"].pop()),
        "batches/001/reassignment.json: changed since planning"),
    "election.json": (
        lambda d: _edit_json(d / "election.json", lambda e: e["partitions"].pop()), "election.json: changed since planning"),
    "RUNBOOK.md": (lambda d: _append(d / "RUNBOOK.md", "\nrm -rf /\n"), "RUNBOOK.md: changed since planning"),
    "an unlisted batch file": (
        lambda d: (d / "batches/002/extra.json").write_text("{}\n"), "batches/002/extra.json: not listed in plan.json files"),
    "a batch cut and every hash re-recorded": (
        _reseal_without_last_batch, "validation/verdict.json: plan_hash: the verdict judged plan"),
    "the verdict naming another plan": (
        lambda d: _edit_json(d / "validation/verdict.json", lambda v: v.update(plan_hash="f" * 64)),
        "validation/verdict.json: plan_hash: the verdict judged plan"),
    "the verdict deleted": (
        lambda d: (d / "validation/verdict.json").unlink(), "validation/verdict.json: missing; the plan was never validated"),
    "the verdict's result edited": (
        lambda d: _edit_json(d / "validation/result.json", lambda r: r.update(engine="edited")),
        "validation/result.json: differs from what validation/verdict.json recorded"),
    # Forged: every hash re-recorded and a passing verdict written for the result.
    "a schedule step removed": (
        lambda d: _forged(d, lambda d: _edit_json(d / "schedule.json", _drop_step(4))),
        "schedule.json: {tp4}: batches/002/reassignment.json moves it {before4} -> {target4}, and no step of the schedule does"),
    "a schedule step repeated": (
        lambda d: _forged(d, lambda d: _edit_json(d / "schedule.json", _repeat_step(1))),
        "schedule.json: steps[9]: {tp1} repeats steps[1] (both batch 001)"),
    "batch 002's throttle rate set to 0": (
        lambda d: _forged(d, lambda d: _edit_json(d / "batches/002/throttles.json", _set_rate(0))),
        "batches/002/throttles.json: rate_bytes_per_sec: expected a whole number of bytes/s within 1024..9223372036854775807, got 0"),
    "batch 002's broker throttle rates set to -1": (
        lambda d: _forged(d, lambda d: _edit_json(d / "batches/002/throttles.json",
                                                   lambda t: [cfg.update({k: "-1" for k in cfg}) for cfg in t["brokers"].values()])),
        'batches/002/throttles.json: brokers.{broker2}.follower.replication.throttled.rate: expected a whole number of bytes/s '
        'within 1024..9223372036854775807, got "-1"'),
    "the verdict not JSON": (
        lambda d: (d / "validation/verdict.json").write_text("passed"), "validation/verdict.json: not valid JSON"),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_execute_refuses_any_edit_of_what_it_reads(plan, capsys, edit):
    assert run_cli(capsys, "verify", "--plan", plan, "--simulate", SAMPLE)[0] == 1  # untouched: loads fine
    (plan / "simulator-state.json").unlink()
    change, message = EDITS[edit]
    schedule = read_json(plan / "schedule.json")["steps"]
    step = {n: (f"{st['topic']}-{st['partition']}", st["before"], st["replicas"]) for n, st in enumerate(schedule)}
    first_broker = min(int(b) for b in read_json(plan / "batches/002/throttles.json")["brokers"])
    message = message.format(tp4=step[4][0], before4=step[4][1], target4=step[4][2], tp1=step[1][0], broker2=first_broker)
    change(plan)
    code, out, err = run_cli(capsys, "execute", "--plan", plan, "--simulate", SAMPLE)
    assert code == 2 and out == ""
    assert message in one_error_line(err)
    assert not (plan / "simulator-state.json").exists() and not (plan / "ledger.json").exists()  # the cluster was never touched


def test_a_failed_verdict_flipped_to_passed_is_refused(tmp_path, snap, capsys):
    # A plan with a duplicate-broker batch that the gate failed; its verdict is then edited to "passed".
    bad = {TP(p.topic, p.partition): (p.replicas[0], p.replicas[0], *p.replicas[2:]) for p in snap.partitions[:2]}
    plan = write_plan(tmp_path / "plan", snap, [bad], status="failed")
    _edit_json(plan / "validation/verdict.json", lambda v: v.update(status="passed"))
    code, _, err = run_cli(capsys, "execute", "--plan", plan, "--simulate", SAMPLE)
    assert code == 2 and "validation/verdict.json: status: says 'passed' but validation/result.json says 'failed'" in one_error_line(err)
    # Forging result.json as well is caught by the executor's own check of the replica lists.
    judge(plan, "passed")
    approve(plan)
    code, _, err = run_cli(capsys, "execute", "--plan", plan, "--simulate", SAMPLE)
    assert code == 2 and "name a broker twice" in one_error_line(err)


def test_a_file_listed_by_a_later_format_is_covered_without_code_changes(plan, capsys):
    # e.g. a file of windows: listed in `files`, it is hashed like every other plan file.
    (plan / "windows.json").write_text('{"windows": []}\n')
    m = read_json(plan / "plan.json")
    m["files"]["windows.json"] = file_sha256(plan / "windows.json")
    (plan / "plan.json").write_text(dump(seal(m)).decode())
    judge(plan, "passed")
    assert load_plan(plan).plan_hash == m["plan_hash"]
    (plan / "windows.json").write_text('{"windows": [{"from": "00:00"}]}\n')
    code, _, err = run_cli(capsys, "execute", "--plan", plan, "--simulate", SAMPLE)
    assert code == 2 and "windows.json: changed since planning" in one_error_line(err)


def test_non_ascii_plan_validates_then_executes(tmp_path, capsys):
    """One hash everywhere: planner, gate and executor agree on a plan made from non-ASCII text.

    Kafka's name rule keeps topic names and the cluster id ASCII; rack names are free text and go
    into the snapshot's fingerprint, the snapshot's file name into plan.json, the approver into
    approval.json.
    """
    raw = json.loads(SAMPLE.read_text())
    assert all(b.get("rack") for b in raw["brokers"])
    for b in raw["brokers"]:
        b["rack"] = f"zählerstände-€-{b['rack']}"
    raw["captured_at"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")  # gathered now: young enough to approve
    snap_path = write_snapshot(snapshot_from_dict(raw, "test"), tmp_path / "zählerstände.json")
    plan = tmp_path / "plan"
    code, _, err = run_cli(capsys, "plan", "--snapshot", snap_path, "--out", plan)
    assert code == 0, err
    assert read_json(plan / "plan.json")["snapshot"]["path"].endswith("zählerstände.json")
    code, out, err = run_cli(capsys, "validate", "--plan", plan, "--snapshot", snap_path)
    assert code == 0, out + err
    code, out, err = run_cli(capsys, "approve", "--plan", plan, "--by", "zoë")
    assert code == 0, err
    assert json.loads(out)["plan_hash"] == read_json(plan / "plan.json")["plan_hash"]
    code, out, err = run_cli(capsys, "execute", "--plan", plan, "--simulate", snap_path, "--poll-interval", "60")
    assert code == 0, err
    assert json.loads(out)["status"] == "complete"


def test_a_resealed_plan_with_a_shell_line_in_its_cluster_id_is_refused(plan, capsys):
    # The hashes prove only that plan.json agrees with itself: one rewritten by hand is resealed in a line.
    m = read_json(plan / "plan.json")
    m["cluster_id"] = "prod\n$(touch CANARY)"
    (plan / "plan.json").write_text(dump(seal(m)).decode())
    for command in ("execute", "verify"):
        code, _, err = run_cli(capsys, command, "--plan", plan, "--simulate", SAMPLE)
        assert code == 2 and one_error_line(err) == (
            f"error: {plan / 'plan.json'}: cluster_id: 'prod\\n$(touch CANARY)' has characters outside [a-zA-Z0-9._-]")


# ----------------------------------------------------------------------------- no output flag overwrites a plan


PLAN_FILES = ["plan.json", "election.json", "RUNBOOK.md", "batches/001/reassignment.json", "validation/verdict.json",
              "validation/result.json", "approval.json", "ledger.json"]


def _collect(plan: Path, snap) -> Path:
    """Give a plan everything a plan directory collects: verdict (already there), approval, ledger."""
    record_approval(plan, "approved", "alice")
    Ledger.fresh(plan, read_json(plan / "plan.json")["plan_hash"]).save()
    write_snapshot(snap, plan.parent / "snapshot.json")
    (plan.parent / "topics.txt").write_text("Topic: t\tTopicId: x\tPartitionCount: 1\tReplicationFactor: 1\tConfigs:\n"
                                            "\tTopic: t\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0\n")
    return plan


@pytest.fixture
def full_plan(plan, snap) -> Path:
    return _collect(plan, snap)


@pytest.fixture(scope="module")
def shared_plan(tmp_path_factory) -> Path:
    """One plan for the commands x files matrix: each case must leave it byte for byte as it was."""
    snap = load_snapshot(SAMPLE)
    return _collect(write_plan(tmp_path_factory.mktemp("shared") / "plan", snap, [move_one_replica(snap, 3)]), snap)


COMMANDS: dict[str, Callable[[Path, Path], list[object]]] = {
    "report --out": lambda plan, target: ["report", "--plan", plan, "--snapshot", plan.parent / "snapshot.json", "--out", target],
    "execute --final-snapshot": lambda plan, target: ["execute", "--plan", plan, "--simulate", SAMPLE, "--final-snapshot", target],
    "generate-cluster --out": lambda plan, target: ["generate-cluster", "--out", target, "--partitions", "12"],
    "import-describe --out": lambda plan, target: ["import-describe", "--input", plan.parent / "topics.txt", "--cluster-id", "c",
                                                   "--out", target],
    "analyze --out": lambda plan, target: ["analyze", "--snapshot", plan.parent / "snapshot.json", "--out", target],
    "plan --out": lambda plan, target: ["plan", "--snapshot", plan.parent / "snapshot.json", "--out", target],
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("victim", PLAN_FILES)
def test_no_output_flag_can_write_over_a_plan_file(shared_plan, capsys, command, victim):
    full_plan = shared_plan
    before = {f.relative_to(full_plan).as_posix(): f.read_bytes() for f in full_plan.rglob("*") if f.is_file()}
    target = full_plan / victim
    code, _, err = run_cli(capsys, *COMMANDS[command](full_plan, target))
    line = one_error_line(err)
    assert code == 2
    assert (f"inside plan directory {full_plan}" in line or "refusing to overwrite it" in line
            or (command in ("plan --out", "analyze --out") and ("is not a directory" in line or "is a file, expected a directory" in line))), line
    after = {f.relative_to(full_plan).as_posix(): f.read_bytes() for f in full_plan.rglob("*") if f.is_file()}
    assert after == before  # not one byte of the plan directory changed


def test_execute_final_snapshot_never_overwrites_its_input_snapshot(plan, tmp_path, snap, capsys):
    source = write_snapshot(snap, tmp_path / "source.json")
    original = source.read_bytes()
    code, _, err = run_cli(capsys, "execute", "--plan", plan, "--simulate", source, "--final-snapshot", source)
    assert code == 2 and "--final-snapshot" in one_error_line(err) and "--simulate snapshot" in err
    assert source.read_bytes() == original and not (plan / "ledger.json").exists()


def test_owned_outputs_inside_a_plan_are_still_written(tmp_path, capsys):
    full_plan = tmp_path / "plan"
    assert run_cli(capsys, "plan", "--snapshot", SAMPLE, "--out", full_plan)[0] == 0
    judge(full_plan, "passed")  # stands in for the gate
    approve(full_plan)
    code, _, err = run_cli(capsys, "report", "--plan", full_plan, "--snapshot", SAMPLE)
    assert code == 0, err
    assert (full_plan / "report.html").is_file()
    code, _, err = run_cli(capsys, "execute", "--plan", full_plan, "--simulate", SAMPLE, "--poll-interval", "60",
                           "--final-snapshot", full_plan / "final-snapshot.json")
    assert code == 0, err
    assert load_snapshot(full_plan / "final-snapshot.json").cluster_id


# ----------------------------------------------------------------------------- completed partitions


def test_completed_partitions_are_decided_per_partition_not_by_name_matching(tmp_path):
    raw = json.loads(SAMPLE.read_text())
    brokers = [b["id"] for b in raw["brokers"]]
    raw["partitions"] = [{"topic": "orders", "partition": i, "replicas": brokers[:2], "leader": brokers[0],
                          "isr": brokers[:2], "size_bytes": 1000} for i in range(11)]
    raw["topics"] = {"orders": {"configs": {}}}
    snap = snapshot_from_dict(raw, "test")
    spare = brokers[2]
    # orders-1 moves normally; the cluster refuses orders-10's move (as Kafka answers a reassignment it
    # rejects, e.g. INVALID_REPLICA_ASSIGNMENT; a destination broker the cluster does not have at all is
    # refused before anything is submitted: tests/executor/test_gate_in_the_executor.py).
    batch = {TP("orders", 1): (brokers[0], spare), TP("orders", 10): (brokers[0], spare)}
    plan_dir = write_plan(tmp_path / "plan", snap, [batch])

    class RefusesOrders10(SimAdmin):
        def alter_reassignments(self, targets):
            refused = {tp: "INVALID_REPLICA_ASSIGNMENT" for tp in targets if tp == TP("orders", 10) and targets[tp] is not None}
            return {**super().alter_reassignments({tp: t for tp, t in targets.items() if tp not in refused}), **refused}

    plan = load_plan(plan_dir)
    result = Executor(plan, RefusesOrders10(Simulator.from_snapshot(snap)), ExecSettings(poll_interval=5)).run_batch("001")
    assert result.state == "failed"
    assert result.completed == [TP("orders", 1)]  # "orders-10: ..." in the problems must not hide orders-1
    assert any(p.startswith("orders-10: reassignment refused") for p in result.problems)
    states = read_json(plan.path / "ledger.json")["batches"]["001"]["partition_states"]
    assert states == {"orders-1": PartitionState.AT_TARGET.value, "orders-10": PartitionState.REFUSED.value}


# ----------------------------------------------------------------------------- re-arm


def test_rearm_runs_an_executed_plan_again_and_keeps_the_old_ledger(plan, capsys):
    code, _, err = run_cli(capsys, "execute", "--plan", plan, "--simulate", SAMPLE, "--poll-interval", "60")
    assert code == 0, err
    old_ledger = (plan / "ledger.json").read_bytes()
    (plan / "simulator-state.json").unlink()  # the cluster is back where the plan started
    code, _, err = run_cli(capsys, "execute", "--plan", plan, "--simulate", SAMPLE, "--poll-interval", "60")
    line = one_error_line(err)
    assert code == 2 and "no longer at their targets" in line and "--rearm" in line
    code, out, err = run_cli(capsys, "execute", "--plan", plan, "--simulate", SAMPLE, "--poll-interval", "60",
                             "--rearm", "--rearm-by", "alice")
    assert code == 0, err
    assert json.loads(out)["status"] == "complete" and not any(b["skipped"] for b in json.loads(out)["batches"])
    # Archived as it was, but for the lease the re-arming run held on it while archiving.
    archived_bytes = (plan / "ledger.1.json").read_bytes()
    archived = json.loads(archived_bytes)
    assert archived.pop("lease")["command"] == "execute"
    assert json.loads(old_ledger).pop("lease") is None
    assert archived == {k: v for k, v in json.loads(old_ledger).items() if k != "lease"}
    ledger = read_json(plan / "ledger.json")
    assert [(r["by"], r["archived_as"]) for r in ledger["rearms"]] == [("alice", "ledger.1.json")]
    assert {b["state"] for b in ledger["batches"].values()} == {"finished"}
    # A second re-arm archives the second ledger under the next free name.
    (plan / "simulator-state.json").unlink()
    assert run_cli(capsys, "execute", "--plan", plan, "--simulate", SAMPLE, "--poll-interval", "60", "--rearm")[0] == 0
    assert (plan / "ledger.1.json").read_bytes() == archived_bytes and (plan / "ledger.2.json").is_file()
    assert [r["archived_as"] for r in read_json(plan / "ledger.json")["rearms"]] == ["ledger.1.json", "ledger.2.json"]


def test_rearm_from_the_pipeline_step_is_audited_and_once_per_run(plan, snap, tmp_path, monkeypatch):
    from kafka_rebalance.orchestration import pipeline
    from kafka_rebalance.orchestration.clusters_config import ClustersFile
    from kafka_rebalance.orchestration.staging import simulated_state_file

    monkeypatch.setenv("KAFKA_REBALANCE_HOME", str(tmp_path / "home"))
    cfg = ClustersFile.model_validate({"clusters": [{"cluster_id": snap.cluster_id, "source": f"simulated:{SAMPLE}"}]})
    cluster = cfg.clusters[0]
    approval = {"chosen_options": ["Approve"], "responded_by": {"name": "bob"}}
    pipeline.preflight(cfg, cluster, str(plan), approval)
    pipeline.execute(cfg, cluster, str(plan))
    state = simulated_state_file(snap.cluster_id, tmp_path / "home")
    state.unlink()  # the cluster moved back
    with pytest.raises(Exception, match="no longer at their targets.*rearm"):
        pipeline.preflight(cfg, cluster, str(plan), approval)
    pipeline.preflight(cfg, cluster, str(plan), approval, rearm=True, run_id="manual__2")
    pipeline.preflight(cfg, cluster, str(plan), approval, rearm=True, run_id="manual__2")  # a retried task: no second archive
    pipeline.execute(cfg, cluster, str(plan))
    assert sorted(p.name for p in plan.glob("ledger*.json")) == ["ledger.1.json", "ledger.json"]
    rearms = read_json(plan / "ledger.json")["rearms"]
    assert [(r["by"], r["run"], r["archived_as"]) for r in rearms] == [("bob", "manual__2", "ledger.1.json")]
    assert {b["state"] for b in read_json(plan / "ledger.json")["batches"].values()} == {"finished"}


# ----------------------------------------------------------------------------- corrupt ledger and state


CORRUPT_LEDGERS = {"not JSON": "{\"batches\": ", "batches not an object": None, "unknown state": None}


@pytest.mark.parametrize("kind", list(CORRUPT_LEDGERS))
@pytest.mark.parametrize("command", ["execute", "cancel", "report"])
def test_corrupt_ledger_is_one_line_naming_the_file(full_plan, capsys, kind, command):
    ledger = full_plan / "ledger.json"
    plan_hash = read_json(full_plan / "plan.json")["plan_hash"]
    if kind == "not JSON":
        ledger.write_text(CORRUPT_LEDGERS[kind])
    elif kind == "batches not an object":
        ledger.write_text(json.dumps({"plan_hash": plan_hash, "batches": []}))
    else:
        ledger.write_text(json.dumps({"plan_hash": plan_hash, "batches": {"001": {"state": "exploded"}}}))
    corrupt = ledger.read_bytes()
    args = {"execute": ["--simulate", SAMPLE], "cancel": ["--simulate", SAMPLE],
            "report": ["--snapshot", full_plan.parent / "snapshot.json"]}[command]
    code, _, err = run_cli(capsys, command, "--plan", full_plan, *args)
    line = one_error_line(err)
    assert code == 2 and f"{ledger}: corrupt ledger" in line and "--rearm" in line
    assert ledger.read_bytes() == corrupt  # kept as it is


@pytest.mark.parametrize("content", ["{\"format\": ", "[]", "{\"format\": \"kafka-rebalance-simulator\", \"version\": 1}"])
@pytest.mark.parametrize("command", ["execute", "cancel", "verify"])
def test_corrupt_simulator_state_is_one_line_naming_the_file(plan, capsys, content, command):
    (plan / "simulator-state.json").write_text(content)
    code, _, err = run_cli(capsys, command, "--plan", plan, "--simulate", SAMPLE)
    line = one_error_line(err)
    assert code == 2 and f"{plan / 'simulator-state.json'}: corrupt simulator state" in line and "delete it" in line


def test_verdict_written_by_validation_is_what_execute_checks(plan):
    # The contract's shape, from the writer's side.
    write_validation_verdict(plan, "passed", read_json(plan / "plan.json")["plan_hash"])
    verdict = read_json(plan / "validation/verdict.json")
    assert verdict["result"] == "validation/result.json"
    assert verdict["result_sha256"] == file_sha256(plan / "validation/result.json")
