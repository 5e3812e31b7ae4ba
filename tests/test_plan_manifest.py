"""plan_manifest: the executor's typed view of a plan, and the exact refusal for each malformed file.

The parsers run only after the plan hash proved the files unchanged, so a malformed file here
is one the planner itself wrote wrongly (or a hand-made plan): each must still be one clear
error naming the file and the entry, never a traceback or a silently different plan.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from kafka_rebalance import plan_manifest as pm
from kafka_rebalance.cluster.admin import TP
from kafka_rebalance.plan_dir import PlanDirError
from tests.support.clusters import part, snapshot
from tests.support.plans import plan_dir, read

PATH = Path("/plans/p/batches/001/reassignment.json")


def test_assignment_is_typed_in_file_order() -> None:
    raw = {"version": 1, "partitions": [{"topic": "b", "partition": 1, "replicas": [3, 1]},
                                        {"topic": "a", "partition": 0, "replicas": [2]}]}
    assert list(pm._assignment(raw, PATH).items()) == [(TP("b", 1), (3, 1)), (TP("a", 0), (2,))]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"version": 2, "partitions": []}, "expected Kafka's reassignment JSON"),
        ({"version": 1, "partitions": {}}, "expected Kafka's reassignment JSON"),
        ([], "expected Kafka's reassignment JSON"),
        ({"version": 1, "partitions": ["x"]}, "partitions[0]: needs topic (string), partition (int32)"),
        ({"version": 1, "partitions": [{"topic": "t", "partition": 2**31, "replicas": [1]}]}, "partitions[0]: needs topic"),
        ({"version": 1, "partitions": [{"topic": "t", "partition": -1, "replicas": [1]}]}, "partitions[0]: needs topic"),
        ({"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": []}]}, "partitions[0]: needs topic"),
        ({"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, -2]}]}, "partitions[0]: needs topic"),
        ({"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, True]}]}, "partitions[0]: needs topic"),
        ({"version": 1, "partitions": [{"topic": 5, "partition": 0, "replicas": [1]}]}, "partitions[0]: needs topic"),
        ({"version": 1, "partitions": [{"topic": "a b", "partition": 0, "replicas": [1]}]}, "partitions[0].topic: "),
        ({"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 1]}]},
         "partitions[0] t-0: replicas [1, 1] name a broker twice"),
        ({"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1]},
                                       {"topic": "t", "partition": 0, "replicas": [2]}]}, "partitions[1]: t-0 listed twice"),
    ],
)
def test_each_malformed_assignment_is_one_error_naming_the_file_and_entry(raw: Any, message: str) -> None:
    with pytest.raises(PlanDirError) as err:
        pm._assignment(raw, PATH)
    assert str(err.value).startswith(f"{PATH}: ")
    assert message in str(err.value)


def test_assignment_error_quotes_at_most_200_characters_of_the_entry() -> None:
    entry = {"topic": "t", "partition": "x" * 1000, "replicas": [1]}
    with pytest.raises(PlanDirError) as err:
        pm._assignment({"version": 1, "partitions": [entry]}, PATH)
    assert str(err.value).endswith("got " + json.dumps(entry)[:200])


# One batch's move, t-0 from brokers 1, 2 to 1, 3: its throttles may name brokers 1, 2 and 3 only.
BEFORE = {TP("t", 0): (1, 2)}
TARGETS = {TP("t", 0): (1, 3)}
RATES = {"leader.replication.throttled.rate": "1048576", "follower.replication.throttled.rate": "1048576"}
LISTS = {"leader.replication.throttled.replicas": "0:1,0:2", "follower.replication.throttled.replicas": "0:3"}


def _throttles(raw: Any) -> pm.Throttles:
    return pm._throttles(raw, PATH, BEFORE, TARGETS)


def test_throttles_are_typed() -> None:
    t = _throttles({"rate_bytes_per_sec": 1048576, "brokers": {"2": RATES}, "topics": {"t": LISTS}})
    assert t == pm.Throttles(1048576, {2: RATES}, {"t": LISTS})
    assert not t.empty
    assert _throttles({}) == pm.Throttles(None, {}, {}) and _throttles({}).empty
    assert _throttles({"rate_bytes_per_sec": None}).rate_bytes_per_sec is None
    assert not pm.Throttles(None, {}, {"t": {}}).empty and not pm.Throttles(None, {1: {}}, {}).empty


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([], "expected an object with rate_bytes_per_sec, brokers and topics"),
        ({"brokers": []}, "brokers and topics must be objects"),
        ({"topics": "x"}, "brokers and topics must be objects"),
        ({"brokers": {"b1": {}}}, "brokers.b1: expected a broker id"),
        ({"brokers": {"٣": {}}}, "brokers.٣: expected a broker id"),
        ({"brokers": {"2147483648": {}}}, "brokers.2147483648: expected a broker id"),
        ({"brokers": {"1": []}}, "brokers.1: expected a broker id"),
        ({"brokers": {"1": {"k": 5}}}, "brokers.1: expected a broker id"),
        ({"topics": {"t": []}}, "topics.t: expected config names mapping to string values"),
        ({"topics": {"t": {"k": None}}}, "topics.t: expected config names mapping to string values"),
        # Values the executor would write to the cluster: refused at load, for every batch, before any move.
        ({"rate_bytes_per_sec": 0}, "rate_bytes_per_sec: expected a whole number of bytes/s within 1024..9223372036854775807, got 0"),
        ({"rate_bytes_per_sec": -1}, "rate_bytes_per_sec: expected a whole number of bytes/s within 1024..9223372036854775807, got -1"),
        ({"rate_bytes_per_sec": 1023}, "rate_bytes_per_sec: expected a whole number of bytes/s within 1024..9223372036854775807, got 1023"),
        ({"rate_bytes_per_sec": "10"}, "rate_bytes_per_sec: expected a whole number of bytes/s within 1024"),
        ({"rate_bytes_per_sec": 1.5e6}, "rate_bytes_per_sec: expected a whole number of bytes/s within 1024"),
        ({"rate_bytes_per_sec": True}, "rate_bytes_per_sec: expected a whole number of bytes/s within 1024"),
        ({"brokers": {"1": {**RATES, "leader.replication.throttled.rate": "0"}}},
         'brokers.1.leader.replication.throttled.rate: expected a whole number of bytes/s within 1024..9223372036854775807, got 0'),
        ({"brokers": {"1": {**RATES, "follower.replication.throttled.rate": "-1"}}},
         'brokers.1.follower.replication.throttled.rate: expected a whole number of bytes/s within 1024..9223372036854775807, got "-1"'),
        ({"brokers": {"1": {**RATES, "follower.replication.throttled.rate": "9223372036854775808"}}},
         "brokers.1.follower.replication.throttled.rate: expected a whole number of bytes/s within 1024"),
        ({"brokers": {"1": {"min.insync.replicas": "1"}}}, "brokers.1.min.insync.replicas: not a throttle config"),
        ({"brokers": {"7": RATES}}, "brokers.7: broker 7 is not a replica of any partition this batch moves (its brokers are [1, 2, 3])"),
        ({"topics": {"t": {"retention.ms": "1"}}}, "topics.t.retention.ms: not a throttle config"),
        ({"topics": {"t": {"leader.replication.throttled.replicas": "0:1,x"}}},
         "topics.t.leader.replication.throttled.replicas: 'x' is not PARTITION:BROKER"),
        ({"topics": {"t": {"leader.replication.throttled.replicas": "*"}}},
         "topics.t.leader.replication.throttled.replicas: '*': a batch throttles exactly the replicas it moves"),
        ({"topics": {"t": {"follower.replication.throttled.replicas": "1:3"}}},
         "topics.t.follower.replication.throttled.replicas: t-1 is not a partition of this batch"),
        ({"topics": {"u": {"follower.replication.throttled.replicas": "0:3"}}},
         "topics.u: topic 'u' has no partition this batch moves"),
        # An empty value or an empty mapping names a topic as surely as a list does (issue #39: it was altered).
        ({"topics": {"u": {"leader.replication.throttled.replicas": ""}}}, "topics.u: topic 'u' has no partition this batch moves"),
        ({"topics": {"u": {}}}, "topics.u: topic 'u' has no partition this batch moves"),
        ({"topics": {"t": {"leader.replication.throttled.replicas": ""}}},
         "topics.t.leader.replication.throttled.replicas: '': a batch throttles exactly the replicas it moves"),
        ({"topics": {"t": {"follower.replication.throttled.replicas": "0:9"}}},
         "topics.t.follower.replication.throttled.replicas: broker 9 is not a replica of t-0 before or after its move"),
    ],
)
def test_each_malformed_throttles_file_is_one_error(raw: Any, message: str) -> None:
    with pytest.raises(PlanDirError) as err:
        _throttles(raw)
    assert str(err.value).startswith(f"{PATH}: {message}")


def test_throttle_rates_at_the_limits_are_accepted() -> None:
    low = {"leader.replication.throttled.rate": "1024", "follower.replication.throttled.rate": "9223372036854775807"}
    assert _throttles({"rate_bytes_per_sec": 1024, "brokers": {"3": low}}).brokers == {3: low}


def test_broker_id_at_the_int32_limit_is_accepted() -> None:
    wide = {TP("t", 0): (2147483647,)}
    assert pm._throttles({"brokers": {"2147483647": {}}}, PATH, {TP("t", 0): (1,)}, wide).brokers == {2147483647: {}}


# --------------------------------------------------------------------------- schedule


BATCH = pm.Batch("001", "move", {TP("t", 0): (3, 2), TP("t", 1): (1, 3)}, {TP("t", 0): (1, 2), TP("t", 1): (1, 2)},
                 pm.Throttles(None), None, None)


def step(n: int, topic_partition: int, before: list[int], replicas: list[int], adds: list[int], removes: list[int],
         after: int | None = None, **over: Any) -> dict[str, Any]:
    return {"id": n, "topic": "t", "partition": topic_partition, "batch": "001", "before": before, "replicas": replicas,
            "adds": adds, "removes": removes, "after": after, "leader": before[0], "bytes": 100,
            "produce_bytes_per_sec": 1.5, "estimated_start_s": 0, "estimated_end_s": 2.5, **over}


SCHEDULE = {"version": 1, "throttle_bytes_per_sec": 51200, "max_moves_per_broker": 2, "max_in_flight": 4,
            "estimated_seconds": 10, "physical_bound_seconds": 8.5,
            "steps": [step(0, 0, [1, 2], [3, 2], [3], [1]), step(1, 1, [1, 2], [1, 3], [3], [2])]}


def test_schedule_is_typed() -> None:
    s = pm._schedule(SCHEDULE, PATH, {"001": BATCH})
    assert (s.throttle_bytes_per_sec, s.max_moves_per_broker, s.max_in_flight) == (51200, 2, 4)
    assert (s.estimated_seconds, s.physical_bound_seconds) == (10.0, 8.5)
    assert s.moves[0] == pm.ScheduledMove(0, TP("t", 0), "001", (1, 2), (3, 2), (3,), (1,), None, 1, 100, 1.5, 0.0, 2.5)
    assert [m.tp for m in s.moves] == [TP("t", 0), TP("t", 1)]
    # Made before --throttle-efficiency existed: the throttle fully delivered, as it was simulated.
    assert (s.throttle_efficiency, s.delivered_rate) == (1.0, 51200)
    assert pm._schedule({**SCHEDULE, "throttle_efficiency": 0.5}, PATH, {"001": BATCH}).delivered_rate == 25600.0
    # Without disk sizes (or made before the field existed): no broker's disk room to keep.
    assert s.disk_room == ()
    room = {"3": {"bytes": 900, "limit_bytes": 1000}, "1": {"bytes": 0, "limit_bytes": 5}}
    assert pm._schedule({**SCHEDULE, "disk_room": room}, PATH, {"001": BATCH}).disk_room == ((1, 0, 5), (3, 900, 1000))
    # Per log dir of a broker with several, and each step's replicas' dirs before it (absent: none known).
    assert s.dir_room == () and s.moves[0].sources == ()
    dirs = {"3": {"/b": {"bytes": 9, "limit_bytes": 10}, "/a": {"bytes": 0, "limit_bytes": 10}}}
    steps = [{**SCHEDULE["steps"][0], "sources": ["/x", "any"]}, SCHEDULE["steps"][1]]
    got = pm._schedule({**SCHEDULE, "dir_room": dirs, "steps": steps}, PATH, {"001": BATCH})
    assert got.dir_room == ((3, "/a", 0, 10), (3, "/b", 9, 10)) and got.moves[0].sources == ("/x", "any")


LATER = pm.Batch("002", "move", {TP("t", 0): (3, 1)}, {TP("t", 0): (3, 2)}, pm.Throttles(None), None, None)
REORDER = pm.Batch("003", "reorder", {TP("t", 1): (3, 1)}, {TP("t", 1): (1, 3)}, pm.Throttles(None), None, None)


def _two_batches() -> dict[str, Any]:
    raw = copy.deepcopy(SCHEDULE)
    raw["steps"].append(step(2, 0, [3, 2], [3, 1], [1], [2], after=0, batch="002"))
    return raw


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        # Every hash could be re-recorded and a verdict forged: the schedule must still be its batch files.
        (lambda r: r["steps"].pop(), "t-0: batches/002/reassignment.json moves it [3, 2] -> [3, 1], and no step of the schedule does"),
        (lambda r: r.update(steps=[r["steps"][0], {**r["steps"][2], "id": 1}]),
         "t-1: batches/001/reassignment.json moves it [1, 2] -> [1, 3], and no step of the schedule does"),
        (lambda r: r["steps"].append(step(3, 1, [1, 2], [1, 3], [3], [2], after=1)), "steps[3]: t-1 repeats steps[1] (both batch 001)"),
    ],
)
def test_a_schedule_that_is_not_its_batch_files_is_one_error(edit: Any, message: str) -> None:
    raw = _two_batches()
    batches = {"001": BATCH, "002": LATER, "003": REORDER}
    assert len(pm._schedule(raw, PATH, batches).moves) == 3
    edit(raw)
    with pytest.raises(PlanDirError) as err:
        pm._schedule(raw, PATH, batches)
    assert str(err.value) == f"{PATH}: {message}"


def test_a_partition_s_steps_follow_its_batches_order() -> None:
    # t-0 moves in 001 then in 002; listed the other way round (each step still a move of its batch).
    first = pm.Batch("001", "move", {TP("t", 0): (3, 1)}, {TP("t", 0): (3, 2)}, pm.Throttles(None), None, None)
    second = pm.Batch("002", "move", {TP("t", 0): (3, 2)}, {TP("t", 0): (1, 2)}, pm.Throttles(None), None, None)
    raw = {**SCHEDULE, "steps": [step(0, 0, [1, 2], [3, 2], [3], [1], batch="002"),
                                 step(1, 0, [3, 2], [3, 1], [1], [2], after=0, batch="001")]}
    with pytest.raises(PlanDirError) as err:
        pm._schedule(raw, PATH, {"001": first, "002": second})
    assert str(err.value) == (f"{PATH}: steps[1]: t-0 moves in batch 001 after its step 0 of batch 002, "
                              "but the batch files run batch 001 first")


def test_a_step_of_a_reorder_batch_is_refused() -> None:
    raw = _two_batches()
    raw["steps"].append(step(3, 1, [1, 3], [3, 1], [], [], after=1, batch="003"))
    with pytest.raises(PlanDirError) as err:
        pm._schedule(raw, PATH, {"001": BATCH, "002": LATER, "003": REORDER})
    assert str(err.value) == f"{PATH}: steps[3]: t-1 is in batch 003, a reorder batch, which runs before the schedule"


def test_a_partition_with_two_steps_names_its_previous_step() -> None:
    later = pm.Batch("002", "move", {TP("t", 0): (3, 1)}, {TP("t", 0): (3, 2)}, pm.Throttles(None), None, None)
    raw = copy.deepcopy(SCHEDULE)
    raw["steps"].append(step(2, 0, [3, 2], [3, 1], [1], [2], after=0, batch="002"))
    assert pm._schedule(raw, PATH, {"001": BATCH, "002": later}).moves[2].after == 0
    raw["steps"][2]["after"] = None
    with pytest.raises(PlanDirError, match=r"steps\[2\]: after must be 0, the partition's previous step"):
        pm._schedule(raw, PATH, {"001": BATCH, "002": later})


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda r: r.update(steps={}), 'expected {"version": 1, ..., "steps": [...]}'),
        (lambda r: r.update(version=2), "version: expected 1 (this tool's schedule layout), got 2"),
        (lambda r: r.pop("version"), "version: expected 1 (this tool's schedule layout), got null"),
        (lambda r: r.update(version=True), "version: expected 1 (this tool's schedule layout), got true"),
        (lambda r: r.update(throttle_bytes_per_sec=0), "throttle_bytes_per_sec: expected an integer within 1024..9223372036854775807, got 0"),
        (lambda r: r.update(throttle_bytes_per_sec=1023), "throttle_bytes_per_sec: expected an integer within 1024..9223372036854775807, got 1023"),
        (lambda r: r.update(max_moves_per_broker=2**31), "max_moves_per_broker: expected an integer within 1..2147483647"),
        (lambda r: r.pop("max_in_flight"), "max_in_flight: expected an integer within 1..2147483647, got null"),
        (lambda r: r.update(estimated_seconds=-1), "estimated_seconds: expected a number >= 0, got -1"),
        (lambda r: r.update(physical_bound_seconds="NaN"), "physical_bound_seconds: expected a number >= 0"),
        (lambda r: r.update(throttle_efficiency=0), "throttle_efficiency: expected a number within 0.05..1, got 0"),
        (lambda r: r.update(throttle_efficiency=True), "throttle_efficiency: expected a number within 0.05..1, got true"),
        (lambda r: r.update(throttle_efficiency=1.5), "throttle_efficiency: expected a number within 0.05..1, got 1.5"),
        (lambda r: r.update(disk_room=[]), 'disk_room: expected an object of broker id -> {"bytes": ..., "limit_bytes": ...}, got []'),
        (lambda r: r.update(disk_room={"x": {"bytes": 1, "limit_bytes": 2}}), "disk_room.x: not a broker id"),
        (lambda r: r.update(disk_room={"1": {"bytes": -1, "limit_bytes": 2}}),
         'disk_room.1: expected {"bytes": ..., "limit_bytes": ...}, whole bytes >= 0, got {"bytes": -1, "limit_bytes": 2}'),
        (lambda r: r.update(disk_room={"1": {"bytes": 1}}), 'disk_room.1: expected {"bytes": ..., "limit_bytes": ...}'),
        (lambda r: r.update(dir_room=[]), "dir_room: expected an object of broker id -> log dir -> "),
        (lambda r: r.update(dir_room={"x": {}}), "dir_room.x: not a broker id"),
        (lambda r: r.update(dir_room={"1": []}), "dir_room.1: expected an object of log dir -> "),
        (lambda r: r.update(dir_room={"1": {"a": {"bytes": 1, "limit_bytes": 2}}}), "dir_room.1.a: not an absolute path"),
        (lambda r: r.update(dir_room={"1": {"/a": {"bytes": 1}}}), 'dir_room.1./a: expected {"bytes": ..., "limit_bytes": ...}'),
        (lambda r: r["steps"][0].update(sources=["/a"]), 'steps[0]: sources: expected one entry per replica of before'),
        (lambda r: r["steps"][0].update(sources=["a", "any"]), 'steps[0]: sources: expected one entry per replica of before'),
        (lambda r: r["steps"].__setitem__(0, 7), "steps[0]: expected an object"),
        (lambda r: r["steps"][0].update(adds=[-1]), "steps[0]: before, replicas, adds and removes must be lists of broker ids"),
        (lambda r: r["steps"][0].update(before=None), "steps[0]: before, replicas, adds and removes must be lists"),
        (lambda r: r["steps"][0].update(id=1), "steps[0]: needs id 0, topic, partition, batch"),
        (lambda r: r["steps"][0].update(leader=-2), "steps[0]: needs id 0"),
        (lambda r: r["steps"][0].update(bytes=-1), "steps[0]: needs id 0"),
        (lambda r: r["steps"][0].update(batch=1), "steps[0]: needs id 0"),
        (lambda r: r["steps"][0].update(produce_bytes_per_sec=float("inf")), "steps[0]: needs id 0"),
        (lambda r: r["steps"][0].update(estimated_end_s=-0.5), "steps[0]: needs id 0"),
        (lambda r: r["steps"][0].update(batch="002"), "steps[0]: t-0 [1, 2] -> [3, 2] is not a move of batch '002'"),
        (lambda r: r["steps"][0].update(replicas=[3, 1]), "steps[0]: t-0 [1, 2] -> [3, 1] is not a move of batch '001'"),
        (lambda r: r["steps"][0].update(before=[2, 1]), "steps[0]: t-0 [2, 1] -> [3, 2] is not a move of batch '001'"),
        (lambda r: r["steps"][0].update(adds=[3, 2]), "steps[0]: adds/removes are not the difference between before and replicas"),
        (lambda r: r["steps"][0].update(removes=[]), "steps[0]: adds/removes are not the difference"),
        (lambda r: r["steps"][1].update(after=0), "steps[1]: after must be None, the partition's previous step"),
    ],
)
def test_each_malformed_schedule_is_one_error(edit: Any, message: str) -> None:
    raw = copy.deepcopy(SCHEDULE)
    edit(raw)
    with pytest.raises(PlanDirError) as err:
        pm._schedule(raw, PATH, {"001": BATCH})
    assert str(err.value).startswith(f"{PATH}: {message}")


# --------------------------------------------------------------------------- a real plan directory


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    snap = snapshot([(b, f"r{b % 3}") for b in range(6)],
                    [part("orders", i, [0, 1, 2] if i % 2 else [1, 0, 2]) for i in range(12)]
                    + [part("logs", i, [3, 4, 5]) for i in range(12)])  # fmt: skip
    out = tmp_path_factory.mktemp("manifest") / "plan"
    manifest = plan_dir(snap, out, max_partitions_per_batch=3, election_batch_size=7)
    return out, manifest


def test_load_plan_reads_back_what_the_planner_wrote(written: tuple[Path, dict[str, Any]]) -> None:
    out, manifest = written
    plan = pm.load_plan(out, require_passed=False)
    assert plan.plan_hash == manifest["plan_hash"] and plan.cluster_id == "test"
    assert [b.id for b in plan.batches] == [b["id"] for b in manifest["batches"]]
    assert [b.kind for b in plan.batches] == [b["kind"] for b in manifest["batches"]]
    for b in plan.batches:
        reassignment = read(out, f"batches/{b.id}/reassignment.json")["partitions"]
        rollback = read(out, f"batches/{b.id}/rollback.json")["partitions"]
        assert b.targets == {TP(p["topic"], p["partition"]): tuple(p["replicas"]) for p in reassignment}
        assert b.before == {TP(p["topic"], p["partition"]): tuple(p["replicas"]) for p in rollback}
        assert b.throttles.rate_bytes_per_sec == read(out, f"batches/{b.id}/throttles.json").get("rate_bytes_per_sec")
    assert plan.elections == tuple(TP(p["topic"], p["partition"]) for p in read(out, "election.json")["partitions"])
    assert plan.election_batch_size == 7
    assert plan.schedule is not None
    assert len(plan.schedule.moves) == len(read(out, "schedule.json")["steps"])


def test_batches_are_found_by_id_with_or_without_leading_zeros(written: tuple[Path, dict[str, Any]]) -> None:
    out, _ = written
    plan = pm.load_plan(out, require_passed=False)
    first = plan.batches[0]
    assert plan.batch(first.id) is first
    assert plan.batch(str(int(first.id))) is first
    with pytest.raises(PlanDirError, match=r"batches: no batch '999' \(plan has 001"):
        plan.batch("999")
    with pytest.raises(PlanDirError, match="no batch '١'"):
        plan.batch("١")  # a Unicode digit is not a batch number


def test_unvalidated_plan_is_refused_unless_asked_not_to(written: tuple[Path, dict[str, Any]]) -> None:
    out, _ = written
    with pytest.raises(PlanDirError):
        pm.load_plan(out)


@pytest.mark.parametrize(("value", "expected"), [(None, 1000), (0, 1000), (-3, 1000), ("5", 1000), (5, 5)])
def test_election_batch_size_falls_back_to_kafkas_default(value: Any, expected: int) -> None:
    options = {} if value is None else {"election_batch_size": value}
    assert pm.Plan(Path("."), {}, "h", "c", options, (), ()).election_batch_size == expected


def test_batches_carry_the_manifests_figures_and_their_own_counts(written: tuple[Path, dict[str, Any]]) -> None:
    out, manifest = written
    plan = pm.load_plan(out, require_passed=False)
    for b, entry in zip(plan.batches, manifest["batches"], strict=True):
        assert (b.kind, b.estimated_seconds, b.bytes) == (entry["kind"], float(entry["estimated_seconds"]), entry["bytes"])
        assert (b.partitions, b.replica_moves) == (entry["partitions"], entry["replica_moves"])
        reassignment = read(out, f"batches/{b.id}/reassignment.json")["partitions"]
        topics: dict[str, int] = {}
        for p in reassignment:
            topics[p["topic"]] = topics.get(p["topic"], 0) + 1
        assert b.topics == tuple(sorted(topics.items()))
    ids = ", ".join(b["id"] for b in manifest["batches"])
    with pytest.raises(PlanDirError) as err:
        plan.batch("999")
    assert str(err.value) == f"{out / 'plan.json'}: batches: no batch '999' (plan has {ids})"


@pytest.fixture()
def plan_copy(written: tuple[Path, dict[str, Any]], tmp_path: Path) -> Path:
    import shutil

    return Path(shutil.copytree(written[0], tmp_path / "plan"))


def test_a_verdict_counts_only_for_the_plan_hash_it_names(plan_copy: Path) -> None:
    from tests.support.plans import judge

    plan_hash = json.loads((plan_copy / "plan.json").read_text())["plan_hash"]
    judge(plan_copy, "passed", plan_hash="0" * 64)
    with pytest.raises(PlanDirError, match="validation"):
        pm.load_plan(plan_copy)
    judge(plan_copy, "passed")
    assert pm.load_plan(plan_copy).plan_hash == plan_hash


def test_approval_is_required_when_asked_and_bound_to_the_plan_hash(plan_copy: Path) -> None:
    from kafka_rebalance.plan_dir import record_approval
    from tests.support.plans import judge

    judge(plan_copy, "passed")
    with pytest.raises(PlanDirError, match="approv"):
        pm.load_plan(plan_copy, require_approval=True)
    record_approval(plan_copy, "approved", "alice")
    plan = pm.load_plan(plan_copy, require_approval=True)
    manifest = json.loads((plan_copy / "plan.json").read_text())
    assert plan.plan_hash == manifest["plan_hash"]
    approval = json.loads((plan_copy / "approval.json").read_text())
    (plan_copy / "approval.json").write_text(json.dumps({**approval, "plan_hash": "0" * 64}))
    with pytest.raises(PlanDirError, match="approv"):
        pm.load_plan(plan_copy, require_approval=True)


def _resealed(plan_copy: Path, rel: str, value: Any) -> Path:
    """A file changed and the plan's hashes recorded again: only load_plan's own checks can object."""
    from tests.support.plans import restamp

    (plan_copy / rel).write_text(value if isinstance(value, str) else json.dumps(value))
    restamp(plan_copy)
    return plan_copy


@pytest.mark.parametrize(
    ("rel", "value", "message"),
    [
        ("election.json", {"elections": []}, 'election.json: expected {"partitions": [{"topic": ..., "partition": ...}]}'),
        ("election.json", [], 'election.json: expected {"partitions": [{"topic": ..., "partition": ...}]}'),
        ("election.json", {"partitions": [{"topic": 5, "partition": 0}]},
         "election.json: every entry needs topic (string) and partition (int32)"),
        ("election.json", {"partitions": [{"topic": "t", "partition": -1}]},
         "election.json: every entry needs topic (string) and partition (int32)"),
        ("election.json", {"partitions": ["t-0"]}, "election.json: every entry needs topic (string) and partition (int32)"),
        ("batches/001/rollback.json", {"version": 1, "partitions": []},
         "batches/001/rollback.json: partitions differ from batches/001/reassignment.json"),
        ("batches/001/reassignment.json", "{not json",
         "batches/001/reassignment.json: not valid JSON: Expecting property name enclosed in double quotes at line 1 "
         "column 2 (the plan file batches/001/reassignment.json is corrupt or ambiguous)"),
        ("batches/001/rollback.json", "[1,",
         "batches/001/rollback.json: not valid JSON: Expecting value at line 1 column 4 (the plan file "
         "batches/001/rollback.json is corrupt or ambiguous)"),
        ("batches/001/throttles.json", "",
         "batches/001/throttles.json: not valid JSON: Expecting value at line 1 column 1 (the plan file "
         "batches/001/throttles.json is corrupt or ambiguous)"),
        ("election.json", "nul", "election.json: not valid JSON: Expecting value at line 1 column 1 (the plan file "
                                 "election.json is corrupt or ambiguous)"),
    ],
)
def test_each_malformed_plan_file_that_still_hashes_is_one_error(plan_copy: Path, rel: str, value: Any, message: str) -> None:
    with pytest.raises(PlanDirError) as err:
        pm.load_plan(_resealed(plan_copy, rel, value), require_passed=False)
    assert str(err.value) == f"{plan_copy}/{message}"


def test_manifest_figures_that_are_not_numbers_read_as_unknown_and_kind_defaults_to_move(plan_copy: Path) -> None:
    from kafka_rebalance.plan_dir import seal

    manifest = json.loads((plan_copy / "plan.json").read_text())
    first = manifest["batches"][0]
    del first["kind"]
    first["estimated_seconds"], first["bytes"] = True, 1.5
    manifest["batches"][1]["estimated_seconds"], manifest["batches"][1]["bytes"] = 7, 9
    (plan_copy / "plan.json").write_text(json.dumps(seal(manifest)))
    plan = pm.load_plan(plan_copy, require_passed=False)
    assert (plan.batches[0].kind, plan.batches[0].estimated_seconds, plan.batches[0].bytes) == ("move", None, None)
    assert (plan.batches[1].estimated_seconds, plan.batches[1].bytes) == (7.0, 9)
    assert isinstance(plan.batches[1].estimated_seconds, float)


@pytest.mark.parametrize(
    ("rel", "value", "message"),
    [
        ("batches/001/reassignment.json", {"version": 2, "partitions": []}, "expected Kafka's reassignment JSON"),
        ("batches/001/rollback.json", {"version": 2, "partitions": []}, "expected Kafka's reassignment JSON"),
        ("batches/001/throttles.json", [], "expected"),
        ("schedule.json", {"version": 1}, ""),
    ],
)
def test_a_malformed_file_is_named_by_its_own_path(plan_copy: Path, rel: str, value: Any, message: str) -> None:
    with pytest.raises(PlanDirError) as err:
        pm.load_plan(_resealed(plan_copy, rel, value), require_passed=False)
    assert str(err.value).startswith(f"{plan_copy / rel}: ") and message in str(err.value)


def test_a_plan_without_a_schedule_or_elections_reads_as_none_and_empty(tmp_path: Path) -> None:
    from tests.support.plans import move_one_replica, write_plan

    snap = snapshot([0, 1, 2, 3], [part("t", i, [0, 1]) for i in range(4)])
    out = write_plan(tmp_path / "plan", snap, [move_one_replica(snap, 2)], schedule=False)
    plan = pm.load_plan(out)
    assert plan.schedule is None
    assert plan.manifest == json.loads((out / "plan.json").read_text())
    assert plan.elections == (TP("t", 0), TP("t", 1))
