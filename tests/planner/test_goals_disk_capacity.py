"""The disk-capacity goal (planner/goals/disk_capacity.py): no broker's disks filled past --max-disk-usage.

Clusters worked out by hand. Sizes in GiB; a broker's capacity is its log dirs' total bytes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kafka_rebalance.errors import PlanError
from kafka_rebalance.options import PlanOptions
from kafka_rebalance.planner import make_plan
from kafka_rebalance.planner.goals.disk_capacity import DiskCapacityGoal
from kafka_rebalance.planner.goals.placement import PlacementGoal, RackSafetyGoal
from kafka_rebalance.planner.goals.registry import selected
from kafka_rebalance.planner.goals.view import BalanceView, BrokerView
from kafka_rebalance.planner.state import ClusterState
from kafka_rebalance.snapshot import Snapshot, snapshot_from_dict
from tests.support.clusters import part

GIB = 1024**3


def disk_cluster(capacity: dict[int, int | None], partitions: list[dict[str, Any]],
                 usable: dict[int, int] | None = None, configured: bool = False) -> Snapshot:  # fmt: skip
    """Brokers with one log dir each of ``capacity`` bytes (None: a broker that reports no size); ``configured``:
    each broker's ``capacity.disk_bytes`` says the same (what targets are weighed by)."""
    brokers = []
    for b, total in capacity.items():
        d: dict[str, Any] = {"path": f"/data/{b}"}
        if total is not None:
            d["total_bytes"] = total
        if usable and b in usable:
            d["usable_bytes"] = usable[b]
        broker: dict[str, Any] = {"id": b, "log_dirs": [d]}
        if configured and total is not None:
            broker["capacity"] = {"disk_bytes": total}
        brokers.append(broker)
    parts = [{"leader": p["replicas"][0], "isr": list(p["replicas"]), **p} for p in partitions]
    return snapshot_from_dict({"cluster_id": "disks", "brokers": brokers, "partitions": parts})


def new_small_broker(capacity_2: int | None, configured: bool = False) -> Snapshot:
    """Brokers 0 and 1 hold three 3 GiB and three 1 GiB replicas each (12 GiB, 6 replicas); broker 2 is new
    and empty. Even shares are 4 replicas and 8 GiB each: the byte goal would put 8 GiB on broker 2 (two of
    each size). Broker 2's disk of 8 GiB at 0.85 holds 6.8 GiB: at 4 replicas, at most one 3 GiB among them."""
    parts = [part("a", i, [i // 3], size_bytes=3 * GIB) for i in range(6)]
    parts += [part("b", i, [i // 3], size_bytes=GIB) for i in range(6)]
    return disk_cluster({0: 100 * GIB, 1: 100 * GIB, 2: capacity_2}, parts, configured=configured)


def projected(summary: dict, broker: int) -> int:
    return next(r["size_bytes"] for r in summary["projected"] if r["broker_id"] == broker)


@pytest.mark.parametrize("optimizer", ["heuristic", "exact"])
def test_the_byte_goal_does_not_fill_a_small_disk_past_its_limit(optimizer: str) -> None:
    limit = 0.85 * 8 * GIB
    # The cluster bites: with broker 2's capacity unknown, the plan puts more than 6.8 GiB there.
    unknown = make_plan(new_small_broker(None), PlanOptions(optimizer=optimizer)).summary
    assert projected(unknown, 2) > limit
    disk = next(g for g in unknown["goals"] if g["name"] == "disk-capacity")
    assert disk["reached"] is True and disk["after"]["offenders"] == []  # unknown capacity: unconstrained

    summary = make_plan(new_small_broker(8 * GIB), PlanOptions(optimizer=optimizer)).summary
    assert projected(summary, 2) <= limit
    assert projected(summary, 2) == 6 * GIB  # one 3 GiB and three 1 GiB: the fullest its limit allows at 4 replicas
    assert summary["targets"]["replicas_reached"] is True
    disk = next(g for g in summary["goals"] if g["name"] == "disk-capacity")
    assert disk["hard"] is True and disk["reached"] is True and disk["after"]["offenders"] == []
    assert summary["optimizer"]["used"] == optimizer  # the solver's own plan, held to the goal's rows


def test_where_configured_disks_differ_each_byte_band_is_centred_on_the_brokers_capacity_weighted_share() -> None:
    # 24 GiB over configured disks of 100, 100 and 8 GiB: each broker's mean is 24 x 100 / 208 or 24 x 8 / 208 GiB,
    # its band that mean +- 10 % (no rack, no load that may not move: no forced share); not the cluster's 8 GiB.
    # Log dirs' reported sizes alone weigh nothing (balance.configured_disk): the test above plans even shares.
    summary = make_plan(new_small_broker(8 * GIB, configured=True), PlanOptions(optimizer="heuristic")).summary
    centre = {0: 24 * GIB * 100 / 208, 1: 24 * GIB * 100 / 208, 2: 24 * GIB * 8 / 208}
    bands = {int(b): band for b, band in summary["targets"]["byte_bands"].items()}
    assert bands == {b: [pytest.approx(0.9 * c, abs=0.1), pytest.approx(1.1 * c, abs=0.1)] for b, c in centre.items()}
    assert summary["targets"]["forced_shares"] == []


@pytest.mark.parametrize("optimizer", ["heuristic", "exact"])
def test_a_broker_above_its_limit_is_relieved_even_when_no_soft_goal_is_chosen(optimizer: str) -> None:
    # Broker 0: nine 1 GiB replicas on a 10 GiB disk, limit 8.5 GiB; broker 1 is empty with room.
    snap = disk_cluster({0: 10 * GIB, 1: 100 * GIB}, [part("t", i, [0], size_bytes=GIB) for i in range(9)])
    summary = make_plan(snap, PlanOptions(optimizer=optimizer, goals=("preferred-leader",))).summary
    before = next(g for g in summary["goals"] if g["name"] == "disk-capacity")["before"]
    assert before == {"value": 9 * GIB - 0.85 * 10 * GIB, "reached": False, "offenders": [0]}
    assert summary["optimizer"]["used"] == optimizer
    # One 1 GiB replica is the fewest bytes that bring it under: 8 GiB <= 8.5 GiB.
    assert (summary["replica_moves"], summary["bytes_moved"]) == (1, GIB)
    assert projected(summary, 0) == 8 * GIB
    assert next(g for g in summary["goals"] if g["name"] == "disk-capacity")["after"]["offenders"] == []


@pytest.mark.parametrize("relieve", [False, True])
def test_a_broker_that_other_files_hold_above_its_limit_is_refused_in_one_line_not_emptied(relieve: bool) -> None:
    # Broker 0: a 100 GiB disk, 5 GiB free, 4 GiB of partitions: 91 GiB of other files, above 0.85 x 100 GiB whatever
    # moves. Broker 1 has room for everything: emptying broker 0 would still leave it above its limit.
    snap = disk_cluster({0: 100 * GIB, 1: 100 * GIB}, [part("t", i, [0], size_bytes=GIB) for i in range(4)],
                        usable={0: 5 * GIB, 1: 100 * GIB})  # fmt: skip
    with pytest.raises(PlanError) as err:
        make_plan(snap, PlanOptions(relieve=relieve))
    assert str(err.value) == (
        "broker 0: its disks hold 91.0 GiB besides partitions, above --max-disk-usage 0.85 of its 100.0 GiB (that "
        "needs at least 0.910): no plan can bring it under its disk limit; free space on its disks or raise "
        "--max-disk-usage")
    # Just under what it needs, still refused; with its partitions excluded, they count too.
    with pytest.raises(PlanError, match=r"broker 0: its disks hold 90\.9 GiB besides partitions and 4\.0 GiB of "
                                        r"partitions no plan may move, .*needs at least 0\.949\)"):
        make_plan(disk_cluster({0: 100 * GIB, 1: 100 * GIB}, [part("t", i, [0], size_bytes=GIB) for i in range(4)],
                               usable={0: int(5.1 * GIB), 1: 100 * GIB}),
                  PlanOptions(max_disk_usage=0.92, exclude_topics=("t",)))
    # At what it needs, a plan: the other files fit and every partition moves off.
    summary = make_plan(snap, PlanOptions(max_disk_usage=0.91, relieve=relieve)).summary
    assert projected(summary, 0) == 0 and summary["replica_moves"] == 4


def test_the_refusal_names_every_broker_a_removed_dir_and_a_disk_without_size_and_spares_one_within_the_half_byte() -> None:
    # Brokers 0 and 1 hold 2 GiB of an excluded topic each on 1 GiB disks; broker 2 a 0-byte disk under 1 byte of it;
    # broker 3 has room. Every one is named, in broker order, joined by "; ".
    parts = [part("x", 0, [0], size_bytes=2 * GIB), part("x", 1, [1], size_bytes=2 * GIB), part("x", 2, [2], size_bytes=1)]
    snap = disk_cluster({0: GIB, 1: GIB, 2: 0, 3: 100 * GIB}, parts)
    with pytest.raises(PlanError) as err:
        make_plan(snap, PlanOptions(exclude_topics=("x",)))
    assert str(err.value) == (
        "broker 0: its disks hold 0 B besides partitions and 2.0 GiB of partitions no plan may move, above "
        "--max-disk-usage 0.85 of its 1.0 GiB (that needs at least 2.000); broker 1: its disks hold 0 B besides "
        "partitions and 2.0 GiB of partitions no plan may move, above --max-disk-usage 0.85 of its 1.0 GiB (that needs "
        "at least 2.000); broker 2: its disks hold 0 B besides partitions and 1 B of partitions no plan may move, above "
        "--max-disk-usage 0.85 of its 0 B (its disks report no size): no plan can bring it under its disk limit; free "
        "space on its disks or raise --max-disk-usage")
    # A dir --remove-log-dir empties takes its room away: broker 0's limit becomes /b's 8.5 GiB, under the 10 GiB of
    # the excluded topic in /a (25.5 GiB of room without the removal).
    jbod = jbod_cluster({0: {"/a": 20 * GIB, "/b": 10 * GIB}, 1: {"/a": 100 * GIB}},
                        [part("t", i, [0], size_bytes=2 * GIB, log_dirs=["/a"]) for i in range(5)])
    with pytest.raises(PlanError, match=r"^broker 0: its disks hold 0 B besides partitions and 10\.0 GiB of partitions "
                                        r"no plan may move and log dirs --remove-log-dir empties, above"):
        make_plan(jbod, PlanOptions(exclude_topics=("t",), remove_log_dirs=("0:/a",)))
    make_plan(jbod, PlanOptions(exclude_topics=("t",)))
    # Within the half byte of slack the veto and the relief allow, no refusal: 86 bytes against 0.855 x 100 = 85.5.
    edge = disk_cluster({0: 100, 1: 100 * GIB}, [part("x", 0, [0], size_bytes=86)])
    make_plan(edge, PlanOptions(exclude_topics=("x",), max_disk_usage=0.855))
    with pytest.raises(PlanError, match="^broker 0: "):
        make_plan(edge, PlanOptions(exclude_topics=("x",), max_disk_usage=0.854))


def test_the_limit_is_the_fraction_of_the_capacity_less_what_the_disk_holds_besides_the_partitions() -> None:
    # Broker 0: a 100 GiB disk with 40 GiB free and 50 GiB of partitions: 10 GiB of other files.
    # Broker 1: no usable figure: the limit is the fraction of the capacity. Broker 2: no capacity at all.
    snap = disk_cluster({0: 100 * GIB, 1: 100 * GIB, 2: None},
                        [part("t", 0, [0], size_bytes=50 * GIB), part("t", 1, [1], size_bytes=GIB)],
                        usable={0: 40 * GIB})  # fmt: skip
    state = ClusterState(snap, PlanOptions(max_disk_usage=0.85))
    assert state.disk_limit.tolist() == [0.85 * 100 * GIB - 10 * GIB, 0.85 * 100 * GIB, np.inf]


def test_the_check_names_brokers_over_their_limit_and_leaves_unknown_ones_out() -> None:
    def broker(bid: int, size: float, limit: float | None) -> BrokerView:
        return BrokerView(bid, 1, 0, 9, size, size, 0.1, 0, 0, 0, 1, limit)

    view = BalanceView((broker(1, 120.0, 100.0), broker(2, 80.0, 100.0), broker(3, 10**12, None)), (), 0.1, 10.0,
                       (0, 9))  # fmt: skip
    check = DiskCapacityGoal().check(view)
    assert (check.value, check.reached, check.offenders) == (20.0, False, (1,))
    assert check.per_broker == {1: 20.0, 2: 0.0}


def test_it_is_hard_and_cannot_be_dropped() -> None:
    assert DiskCapacityGoal.hard and "disk-capacity" in selected(("bytes",))
    assert selected(("bytes",))[:3] == ("placement", "rack-safety", "disk-capacity")


# ---------------------------------------------------------------------------- JBOD: each log dir on its own


def jbod_cluster(dirs: dict[int, dict[str, int | None]], partitions: list[dict[str, Any]]) -> Snapshot:
    """Brokers with several log dirs (path -> total bytes, None: no size); each partition names its replicas' dirs (``dirs``)."""
    brokers = [{"id": b, "log_dirs": [{"path": p, "total_bytes": t} for p, t in sorted(ds.items())]} for b, ds in dirs.items()]
    parts = [{"leader": p["replicas"][0], "isr": list(p["replicas"]), **p} for p in partitions]
    return snapshot_from_dict({"cluster_id": "jbod", "brokers": brokers, "partitions": parts})


def reassignments(plan) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """Every entry each batch writes for a partition, as (kind, replicas, log_dirs)."""
    import json

    from kafka_rebalance.planner.files import reassignment_bytes

    out: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for batch in plan.batches:
        for e in json.loads(reassignment_bytes(batch.steps, "after"))["partitions"]:
            out.setdefault((e["topic"], e["partition"]), []).append({"kind": batch.kind, **e})
    return out


def test_a_new_replica_lands_on_the_least_full_dir_that_holds_it_and_a_full_dir_is_relieved_within_its_broker() -> None:
    # Broker 0 has two 10 GiB dirs: /a holds nine 1 GiB replicas (limit 8.5 GiB: over), /b one. Broker 1 (two
    # dirs of 10 GiB: /a 4 GiB, /b 1 GiB) gets a replica from decommissioned broker 2.
    parts = [part("t", i, [0], size_bytes=GIB, log_dirs=["/a"]) for i in range(9)]
    parts += [part("t", 9, [0], size_bytes=GIB, log_dirs=["/b"])]
    parts += [part("u", i, [1], size_bytes=GIB, log_dirs=["/a"]) for i in range(4)]
    parts += [part("u", 4, [1], size_bytes=GIB, log_dirs=["/b"])]
    parts += [part("v", 0, [2], size_bytes=2 * GIB, log_dirs=["/a"])]
    d = {"/a": 10 * GIB, "/b": 10 * GIB}
    snap = jbod_cluster({0: dict(d), 1: dict(d), 2: dict(d)}, parts)
    plan = make_plan(snap, PlanOptions(decommission_brokers=(2,), goals=("preferred-leader",), optimizer="heuristic"))
    entries = reassignments(plan)
    # v-0 leaves broker 2 for broker 1 (the only eligible broker with room: broker 0's disks are fuller), named /b.
    assert entries[("v", 0)] == [{"kind": "move", "topic": "v", "partition": 0, "replicas": [1], "log_dirs": ["/b"]}]
    # Broker 0's /a is over its limit, /b nearly empty: replicas move from /a to /b, within the broker, in a
    # log-dir batch (same replicas, /b named), until both are within 10 % of their share (5 GiB each).
    within = [e for es in entries.values() for e in es if e["kind"] == "log-dirs"]
    assert within and all(e["replicas"] == [0] and e["log_dirs"] == ["/b"] for e in within)
    assert len(within) == 4  # /a 9 -> 5 GiB, /b 1 -> 5 GiB
    figures = {(r["broker_id"], r["path"]): r for r in plan.summary["log_dirs"]["dirs"]}
    assert figures[(0, "/a")]["after_bytes"] == 5 * GIB and figures[(0, "/b")]["after_bytes"] == 5 * GIB
    assert plan.summary["log_dirs"]["unplaced"] == []
    # Kafka's intra-broker throttle on the broker whose replicas move between dirs, and nothing else.
    log_dir_batches = [(b, t) for b, t in zip(plan.batches, plan.throttles) if b.kind == "log-dirs"]
    assert [t["brokers"] for _, t in log_dir_batches] == [
        {"0": {"replica.alter.log.dirs.io.max.bytes.per.second": str(PlanOptions().throttle_bytes_per_sec)}}]
    # Log-dir batches run after the reorders and before the moves; the runbook runs them with Kafka's own flag.
    kinds = [b.kind for b in plan.batches]
    assert kinds == sorted(kinds, key=["reorder", "log-dirs", "move"].index)
    from kafka_rebalance.planner.files import render

    runbook = render(plan, "snapshot.json")[0]["RUNBOOK.md"].decode()
    first = kinds.index("log-dirs") + 1
    assert (f"--reassignment-json-file batches/{first:03d}/reassignment.json --execute --replica-alter-log-dirs-throttle "
            f"{PlanOptions().throttle_bytes_per_sec}") in runbook


def test_a_dir_is_chosen_at_its_peak_else_once_its_departures_ended() -> None:
    # Broker 1's dirs: /a 10 GiB holding 7 GiB (limit 8.5), /b 4 GiB holding 2 GiB (limit 3.4). Broker 1 sends a
    # 2 GiB replica from /a away and receives a 2 GiB one. While the new replica copies the old one is still there:
    # /a at its peak holds 9 GiB, over its limit. With /b at 1 GiB the new replica goes to /b (3 of 3.4 GiB at its
    # peak). With /b at 2 GiB (4 at its peak) it goes to /a, which holds it once the 2 GiB replica has left, and
    # the batches start it only then (the ledger holds each dir as each broker).
    def snap(b_bytes: int) -> Snapshot:
        parts = [part("t", 0, [1], size_bytes=2 * GIB, log_dirs=["/a"]), part("t", 1, [1], size_bytes=5 * GIB, log_dirs=["/a"]),
                 part("t", 2, [1], size_bytes=b_bytes, log_dirs=["/b"]), part("n", 0, [0], size_bytes=2 * GIB, log_dirs=["/a"])]
        return jbod_cluster({0: {"/a": 10 * GIB, "/b": 10 * GIB}, 1: {"/a": 10 * GIB, "/b": 4 * GIB}}, parts)

    from kafka_rebalance.planner.batching import make_batches, order_key
    from kafka_rebalance.planner.goals.disk_capacity import disk_room, plan_log_dirs
    from kafka_rebalance.planner.steps import partition_steps

    for b_bytes, expected, batches in ((1 * GIB, "/b", [[0, 1]]), (2 * GIB, "/a", [[1], [0]])):
        s = snap(b_bytes)
        opts = PlanOptions()
        state = ClusterState(s, opts)
        # Partitions in (topic, partition) order: n-0 is 0, t-0 is 1. t-0 leaves broker 1 for broker 0; n-0
        # leaves broker 0 for broker 1.
        state.move(1, 1, 0)
        state.move(0, 0, 1)
        moves = [partition_steps(1, "t", 0, [1], [0], 1, 2 * GIB, 0.0, 1), partition_steps(0, "n", 0, [0], [1], 0, 2 * GIB, 0.0, 1)]
        dirs = plan_log_dirs(state, moves)
        assert dirs.new.get((0, 1)) == expected and dirs.unplaced == [] and dirs.over == []
        named = [[dirs.named(st) for st in chain] for chain in moves]
        got = make_batches([], named, opts, order_key(opts, lambda p: False), disk_room(state, dirs))
        assert [sorted(st.p for st in b.steps) for b in got] == batches


def test_remove_log_dir_empties_it_onto_the_other_dir_or_other_brokers() -> None:
    # Broker 0: /a holds 3 x 2 GiB, /b (10 GiB, limit 8.5) holds 4 GiB. /b can take one more 2 GiB replica at its
    # limit... and a second: 8 GiB <= 8.5; not the third. The broker's limit without /a is 8.5 GiB, so 2 GiB leaves
    # the broker (to broker 1, which has room), and the other two go to /b.
    parts = [part("t", i, [0], size_bytes=2 * GIB, log_dirs=["/a"]) for i in range(3)]
    parts += [part("u", i, [0], size_bytes=2 * GIB, log_dirs=["/b"]) for i in range(2)]
    parts += [part("w", 0, [1], size_bytes=GIB, log_dirs=["/a"])]
    snap = jbod_cluster({0: {"/a": 10 * GIB, "/b": 10 * GIB}, 1: {"/a": 100 * GIB, "/b": 100 * GIB}}, parts)
    for optimizer in ("heuristic", "exact"):
        plan = make_plan(snap, PlanOptions(remove_log_dirs=("0:/a",), goals=("preferred-leader",), optimizer=optimizer))
        figures = {(r["broker_id"], r["path"]): r for r in plan.summary["log_dirs"]["dirs"]}
        assert figures[(0, "/a")]["removed"] is True and figures[(0, "/a")]["after_bytes"] == 0
        assert figures[(0, "/a")]["limit_bytes"] == 0
        assert figures[(0, "/b")]["peak_bytes"] <= 0.85 * 10 * GIB
        assert plan.summary["log_dirs"]["unplaced"] == []
        entries = reassignments(plan)
        moved_away = [k for k in entries if entries[k][-1]["replicas"] == [1]]
        within = [k for k, es in entries.items() for e in es if e["kind"] == "log-dirs" and e["log_dirs"] == ["/b"]]
        assert len(moved_away) == 1 and len(within) == 2 and set(moved_away).isdisjoint(within)
        assert {k[0] for k in moved_away + within} == {"t"}
        assert plan.options.manifest()["remove_log_dirs"] == ["0:/a"]


@pytest.mark.parametrize(("entry", "message"), [
    ("7:/a", "--remove-log-dir 7:/a: broker 7 not in snapshot of jbod (brokers: 0, 1)"),
    ("0:/c", "--remove-log-dir 0:/c: broker 0 has no log dir '/c' in snapshot of jbod (its log dirs: /a, /b)"),
    ("0/a", "--remove-log-dir 0/a: expected BROKER:PATH, a broker id and an absolute log dir path (e.g. 3:/var/lib/kafka/data-2)"),
])
def test_remove_log_dir_refuses_an_unknown_broker_or_dir_in_one_line(entry: str, message: str) -> None:
    from kafka_rebalance.errors import PlanError

    snap = jbod_cluster({0: {"/a": GIB, "/b": GIB}, 1: {"/a": GIB, "/b": GIB}}, [part("t", 0, [0], size_bytes=1, log_dirs=["/a"])])
    with pytest.raises(PlanError) as err:
        make_plan(snap, PlanOptions(remove_log_dirs=(entry,)))
    assert str(err.value) == message


def test_a_cluster_with_one_log_dir_per_broker_names_no_dir() -> None:
    plan = make_plan(new_small_broker(8 * GIB), PlanOptions())
    assert "log_dirs" not in plan.summary
    assert all(e["log_dirs"] == ["any"] * len(e["replicas"]) for es in reassignments(plan).values() for e in es)
    assert "remove_log_dirs" not in plan.options.manifest()


def test_plan_takes_remove_log_dir_once_per_dir_and_refuses_a_bad_one_in_one_line(tmp_path) -> None:
    import json

    from kafka_rebalance.snapshot import write_snapshot
    from tests.support.cli_inprocess import run_cli

    parts = [part("t", i, [i % 2], size_bytes=GIB, log_dirs=["/a" if i < 4 else "/b"]) for i in range(8)]
    snap = jbod_cluster({0: {"/a": 100 * GIB, "/b": 100 * GIB}, 1: {"/a": 100 * GIB, "/b": 100 * GIB}}, parts)
    write_snapshot(snap, tmp_path / "snap.json")
    done = run_cli("plan", "--snapshot", str(tmp_path / "snap.json"), "--out", str(tmp_path / "plan"),
                   "--remove-log-dir", "1:/a", "--remove-log-dir", "0:/a")
    assert done.code == 0, done.stderr
    manifest = json.loads((tmp_path / "plan" / "plan.json").read_text())
    assert manifest["options"]["remove_log_dirs"] == ["0:/a", "1:/a"]
    figures = {(r["broker_id"], r["path"]): r["after_bytes"] for r in manifest["summary"]["log_dirs"]["dirs"]}
    assert figures[(0, "/a")] == figures[(1, "/a")] == 0
    bad = run_cli("plan", "--snapshot", str(tmp_path / "snap.json"), "--out", str(tmp_path / "bad"), "--remove-log-dir", "1:/c")
    assert (bad.code, bad.stderr) == (2, "error: --remove-log-dir 1:/c: broker 1 has no log dir '/c' in snapshot of jbod "
                                         "(its log dirs: /a, /b)\n")
    assert not (tmp_path / "bad").exists()


# ---------------------------------------------------------------------------- where a relieved replica goes


def destination_state(racks: bool = False) -> ClusterState:
    """Limits at half the capacity. Broker 0: 1000 GiB holding 3 (fill 0.006); 1: 40 GiB holding 4 (0.2);
    2: 40 GiB holding 2 (0.1); 3: capacity unknown, empty; 4 and 5: 20 GiB holding 1 each (0.1). Least full
    first, then fewest bytes, then lowest id: 0, 4, 5, 2, 1, and 3 (no limit) last. With ``racks``, 4 and 5
    share a rack, every other broker has its own."""
    capacity = {0: 1000, 1: 40, 2: 40, 3: None, 4: 20, 5: 20}
    brokers: list[dict[str, Any]] = [{"id": b, "log_dirs": [{"path": "/d"} if c is None else {"path": "/d", "total_bytes": c * GIB}]}
                                     for b, c in capacity.items()]  # fmt: skip
    if racks:
        for b in brokers:
            b["rack"] = "r45" if b["id"] in (4, 5) else f"r{b['id']}"
    parts = [part("a", 0, [0], size_bytes=GIB), part("b", 0, [0, 4], size_bytes=GIB), part("c", 0, [0, 5], size_bytes=GIB),
             part("e", 0, [0, 4, 5], size_bytes=0), part("d", 0, [0, 4, 5, 2], size_bytes=0),
             part("f", 0, [0, 4, 5, 2, 1], size_bytes=0), part("g", 0, [2], size_bytes=2 * GIB), part("h", 0, [1], size_bytes=4 * GIB)]
    rows = [{"leader": p["replicas"][0], "isr": list(p["replicas"]), **p} for p in parts]
    snap = snapshot_from_dict({"cluster_id": "destinations", "brokers": brokers, "partitions": rows})
    return ClusterState(snap, PlanOptions(max_disk_usage=0.5))


def test_a_relieved_replica_goes_to_the_least_full_broker_by_fraction_then_bytes_then_id_and_unknown_last() -> None:
    s = destination_state()
    assert s.disk_limit.tolist() == [500 * GIB, 20 * GIB, 20 * GIB, np.inf, 10 * GIB, 10 * GIB]
    assert (s.bytes / GIB).tolist() == [3, 4, 2, 0, 1, 1]
    where = {s.parts[p].topic: DiskCapacityGoal._destination(s, p, 0) for p in range(6)}
    # a: 4 (as full as 5 and 2, fewest bytes with 5, lower id); b holds 4: 5; c holds 5: 4; e holds both: 2
    # (as full, more bytes); d holds 2 as well: 1 (0.2); f holds every limited broker: 3, whose size is unknown.
    assert where == {"a": 4, "b": 5, "c": 4, "e": 2, "d": 1, "f": 3}
    # From broker 1, the least full of all (0) takes h.
    assert DiskCapacityGoal._destination(s, 7, 1) == 0


def test_a_relieved_replica_skips_a_broker_the_hard_goals_refuse() -> None:
    # 4 and 5 share a rack: b (on 0 and 4) may not go to 5, so it goes to 2, the next least full.
    s = destination_state(racks=True)
    s.vetoes = [PlacementGoal(), RackSafetyGoal()]
    assert [DiskCapacityGoal._destination(s, p, 0) for p in range(3)] == [4, 2, 2]


def test_the_report_draws_each_log_dir_before_projected_final_its_peak_and_its_limit() -> None:
    from kafka_rebalance.report.html import goal_charts

    # Broker 0: /a 10 GiB holding six 1 GiB replicas (limit 8.5 GiB), /b 10 GiB holding none; broker 1: /a and /b,
    # /b removed. The chart is the disk-capacity goal's, from summary.log_dirs.dirs.
    parts = [part("t", i, [0], size_bytes=GIB, log_dirs=["/a"]) for i in range(6)]
    parts += [part("u", 0, [1], size_bytes=GIB, log_dirs=["/b"])]
    d = {"/a": 10 * GIB, "/b": 10 * GIB}
    snap = jbod_cluster({0: dict(d), 1: dict(d)}, parts)
    plan = make_plan(snap, PlanOptions(goals=("preferred-leader",), remove_log_dirs=("1:/b",), optimizer="heuristic"))
    charts = [c for c in goal_charts(plan.summary, snap) if c["id"] == "log-dirs"]
    assert len(charts) == 1
    svg, caption = charts[0]["svg"], charts[0]["caption"]
    for dir_id in ("0.0", "0.1", "1.0", "1.1"):  # broker.dir, the dirs of each broker in path order
        for label in ("before", "projected", "final"):
            assert f'id="log-dirs-bar-{label}-{dir_id}"' in svg
        assert f'id="log-dirs-mark-{dir_id}"' in svg
    # A removed dir has no limit to draw; the others' is 0.85 x 10 GiB.
    assert 'id="log-dirs-limit-0.0"' in svg and 'id="log-dirs-limit-1.1"' not in svg
    assert "Dirs: 0:0 = /a; 0:1 = /b; 1:0 = /a; 1:1 = /b." in caption
    assert "GiB" in svg
    # A plan on single-dir brokers draws none.
    single = make_plan(disk_cluster({0: 10 * GIB, 1: 10 * GIB}, [part("t", 0, [0], size_bytes=GIB)]),
                       PlanOptions(optimizer="heuristic"))
    assert not [c for c in goal_charts(single.summary, None) if c["id"] == "log-dirs"]


# ---------------------------------------------------------------------------- relief mode's donors and dir room


def relief_state(b_total: int | None = 50 * GIB, c_dir: bool = True) -> ClusterState:
    """Broker 0: /a 50 GiB (limit 42.5) holding 46 GiB, /b ``b_total`` (None: no size) holding 41 GiB, /c (no size,
    only with ``c_dir``) holding 1 GiB; broker 1: one 10 GiB dir (limit 8.5) holding nine 1 GiB replicas; broker 2: one 100 GiB dir holding a
    30.5 and a 31 GiB replica. Partitions in topic order: a-0..a-6 (0..6), b-0 (7), c-0 (8), m-0..m-8 (9..17),
    z-0 and z-1 (18, 19)."""
    dirs0: list[dict[str, Any]] = [{"path": "/a", "total_bytes": 50 * GIB}, {"path": "/b"}] + ([{"path": "/c"}] if c_dir else [])
    if b_total is not None:
        dirs0[1]["total_bytes"] = b_total
    brokers = [{"id": 0, "log_dirs": dirs0}, {"id": 1, "log_dirs": [{"path": "/d", "total_bytes": 10 * GIB}]},
               {"id": 2, "log_dirs": [{"path": "/d", "total_bytes": 100 * GIB}]}]
    parts = [part("a", i, [0], size_bytes=int(s * GIB), log_dirs=["/a"]) for i, s in enumerate([20, 12, 6, 4, 2, 1.5, 0.5])]
    parts += [part("b", 0, [0], size_bytes=41 * GIB, log_dirs=["/b"])]
    parts += [part("c", 0, [0], size_bytes=GIB, log_dirs=["/c"])] if c_dir else [part("c", 0, [2], size_bytes=GIB, log_dirs=["/d"])]
    parts += [part("m", i, [1], size_bytes=GIB, log_dirs=["/d"]) for i in range(9)]
    parts += [part("z", 0, [2], size_bytes=int(30.5 * GIB), log_dirs=["/d"]), part("z", 1, [2], size_bytes=31 * GIB, log_dirs=["/d"])]
    rows = [{"leader": p["replicas"][0], "isr": list(p["replicas"]), **p} for p in parts]
    snap = snapshot_from_dict({"cluster_id": "relief", "brokers": brokers, "partitions": rows})
    return ClusterState(snap, PlanOptions(relieve=True))


def test_relief_donors_are_brokers_above_their_limit_then_dirs_their_brothers_cannot_relieve() -> None:
    from kafka_rebalance.planner.goals.disk_capacity import relief_donors
    from kafka_rebalance.planner.relief import Donor

    # Broker 0's /c has no size, so broker 0 has no limit: no whole donor. Broker 1: 9 GiB against 8.5, 0.5 GiB
    # above (less the half byte of slack). /a is 3.5 GiB above its 42.5; /b has 1.5 GiB of room and /c, with no
    # size, counts for none: /a needs 2 GiB more than its brothers take. Single-dir broker 1 is no dir donor.
    donors = relief_donors(relief_state())
    assert donors == [Donor(1, 0.5 * GIB - 0.5, tuple(range(9, 18))),
                      Donor(0, 2 * GIB - 0.5, tuple(range(7)), whole=False, where="/a")]
    # /b at 100 GiB (85 of room): the brothers relieve /a, which is still listed, needing nothing.
    donors = relief_donors(relief_state(100 * GIB))
    assert donors[1] == Donor(0, 0.0, tuple(range(7)), whole=False, where="/a") and len(donors) == 2


def test_relief_dir_room_is_the_roomiest_dirs_room_less_what_has_arrived_on_the_broker_once() -> None:
    from kafka_rebalance.planner.goals.disk_capacity import dir_room

    # /b at 100 GiB: its room is 85 - 41 = 44 GiB, /a's -3.5; /c has no size: its room is unbounded.
    assert dir_room(relief_state(100 * GIB, c_dir=True))(19, 0)
    s = relief_state(100 * GIB, c_dir=False)
    fits = dir_room(s)
    assert fits(19, 0) and fits(19, 1)  # 31 GiB into /b's 44; broker 1 has one dir: not this check's to refuse
    s.move(18, 2, 0)  # z-0, 30.5 GiB, arrives: 13.5 GiB left
    assert not fits(19, 0) and fits(9, 0)
    s.move(18, 0, 2)  # and leaves again: it takes no room
    assert fits(19, 0)
    s.move(18, 2, 0)  # back on broker 0, listed twice among its arrivals: counted once
    assert not fits(19, 0) and fits(9, 0)


def test_relief_sends_a_full_dirs_fewest_bytes_to_its_brother_and_names_a_dir_left_above_its_limit() -> None:
    from kafka_rebalance.planner.goals.disk_capacity import DirMove, plan_log_dirs
    from kafka_rebalance.units import human_bytes

    # /a is 3.5 GiB above its 42.5; /b (100 GiB) has 44 of room: 2 + 1.5 GiB (a-4, a-5) are the fewest bytes, the
    # larger placed first. No balance between dirs in relief mode: /b ends at 44.5 GiB against /a's 42.5.
    out = plan_log_dirs(relief_state(100 * GIB, c_dir=False), [])
    assert out.within == [DirMove(4, 0, "/b", "/a", 2 * GIB), DirMove(5, 0, "/b", "/a", int(1.5 * GIB))]
    assert out.unrelieved == [] and out.unplaced == []
    assert [(d["path"], d["before_bytes"], d["peak_bytes"], d["after_bytes"]) for d in out.dirs] == [
        ("/a", 46 * GIB, 46 * GIB, int(42.5 * GIB)), ("/b", 41 * GIB, int(44.5 * GIB), int(44.5 * GIB))]
    # /b at 50 GiB has 1.5 GiB of room: the 2 GiB of the first pick does not fit (nothing of it is placed), nor do
    # the 4, 6, 12 or 20 GiB picks after it, and 1.5 + 0.5 GiB is too little: /a stays as it is, and is named.
    out = plan_log_dirs(relief_state(c_dir=False), [])
    assert out.within == []
    assert out.unrelieved == [f"broker 0 log dir /a: {human_bytes(46 * GIB)} of partitions after the plan against its limit "
                              f"{human_bytes(42.5 * GIB)} (--max-disk-usage 0.85 of its volume, less what else it holds)"]


def test_log_dir_batches_entries_throttles_and_seconds_worked_by_hand() -> None:
    from kafka_rebalance.planner.goals.disk_capacity import DirMove, LogDirPlan, within_seconds, within_steps, within_throttles
    from kafka_rebalance.planner.steps import Step

    # t-0 on brokers 0 and 1 (dirs /a, /a), 5 bytes at 2.5 B/s, led by 0; u-0 on 1 and 2, 7 bytes. Broker 1's replica
    # of t-0 moves to /b after a reorder that puts broker 1 first; u-0's move both of its replicas.
    snap = jbod_cluster({b: {"/a": GIB, "/b": GIB} for b in (0, 1, 2)},
                        [part("t", 0, [0, 1], size_bytes=5, bytes_in_per_sec=2.5, log_dirs=["/a", "/a"]),
                         part("u", 0, [1, 2], size_bytes=7, log_dirs=["/a", "/a"])])
    state = ClusterState(snap, PlanOptions())
    dir_plan = LogDirPlan(within=[DirMove(0, 1, "/b", "/a", 5), DirMove(1, 2, "/b", "/a", 7), DirMove(1, 1, "/b", "/a", 7)])
    reorder = Step(0, "t", 0, (0, 1), (1, 0), (), (), 0, 0, 5, 2.5)
    steps = within_steps(state, dir_plan, [reorder])
    assert steps == [Step(0, "t", 0, (1, 0), (1, 0), (), (), 0, 0, 5, 2.5, ("/b", "any")),
                     Step(1, "u", 0, (1, 2), (1, 2), (), (), 0, 1, 7, 0.0, ("/b", "/b"))]
    assert within_throttles(steps, 100) == {"rate_bytes_per_sec": 100, "topics": {}, "brokers": {
        "1": {"replica.alter.log.dirs.io.max.bytes.per.second": "100"},
        "2": {"replica.alter.log.dirs.io.max.bytes.per.second": "100"}}}
    # Broker 1 copies 5 + 7 bytes, broker 2 7: the busiest's 12 bytes at 4 B/s, plus 3 s.
    assert within_seconds(steps, 4.0, 3.0) == 12 / 4 + 3
    assert within_seconds([], 4.0, 3.0) == 0.0
    assert within_seconds([reorder], 4.0, 3.0) == 3.0  # no dir named: nothing copied, the fixed cost alone


def test_a_step_is_named_with_the_dirs_of_the_replicas_it_adds_only() -> None:
    from kafka_rebalance.planner.goals.disk_capacity import DirMove, LogDirPlan
    from kafka_rebalance.planner.steps import Step

    dir_plan = LogDirPlan(new={(3, 2): "/x", (3, 0): "/y"}, within=[DirMove(1, 0, "/b", "/a", 10), DirMove(2, 0, "/b", "/a", 4)])
    step = Step(3, "t", 0, (0, 1), (0, 2), (2,), (1,), 0, 0, 9, 0.0)
    assert dir_plan.named(step).dirs == ("any", "/x")  # (3, 0) is not added by this step: broker 0 chooses
    other = Step(4, "t", 1, (0, 1), (0, 2), (2,), (1,), 0, 0, 9, 0.0)
    assert dir_plan.named(other) is other
    # Broker 0's replica of t-0 stays in its known dir /a; the one leaving broker 1 is in no known dir: the step
    # frees no named dir, so it carries no sources (the ledger would otherwise free /a of broker 0 at its end).
    dir_plan.where[(3, 0)] = "/a"
    assert dir_plan.named(step).sources == () and dir_plan.named(step).dirs == ("any", "/x")
    assert dir_plan.summary() == {"named_for_new_replicas": 2, "moves_between_dirs": 2, "bytes_between_dirs": 14,
                                  "unplaced": [], "over_limit": [], "dirs": []}


def test_disk_room_is_each_brokers_bytes_before_the_plan_and_its_disks_limit_or_where_the_plan_leaves_it() -> None:
    from kafka_rebalance.planner.goals.disk_capacity import disk_room
    from kafka_rebalance.planner.peaks import DiskRoom

    # Broker 0: 10 GiB holding nine 1 GiB (limit 8.5); broker 1: 10 GiB with 6 free holding 2 GiB, so 2 GiB of
    # other files (limit 8.5 - 2), counted from the bytes before the plan; broker 2: no size, not in the room.
    def state() -> ClusterState:
        parts = [part("t", i, [0], size_bytes=GIB) for i in range(9)] + [part("u", 0, [1], size_bytes=2 * GIB)]
        return ClusterState(disk_cluster({0: 10 * GIB, 1: 10 * GIB, 2: None}, parts, usable={1: 6 * GIB}), PlanOptions())

    s = state()
    s.move(0, 0, 1)
    assert disk_room(s) == DiskRoom({0: 9 * GIB, 1: 2 * GIB}, {0: 8.5 * GIB, 1: 6.5 * GIB})
    # A broker the plan leaves above its limit is held to where it ends.
    assert disk_room(state()) == DiskRoom({0: 9 * GIB, 1: 2 * GIB}, {0: 9 * GIB, 1: 6.5 * GIB})
    assert disk_room(ClusterState(disk_cluster({0: None}, [part("t", 0, [0], size_bytes=GIB)]), PlanOptions())) is None


def test_a_dirs_limit_is_the_fraction_of_its_volume_less_its_other_files() -> None:
    from kafka_rebalance.planner.goals.disk_capacity import dir_limit
    from kafka_rebalance.snapshot import LogDir

    assert dir_limit(LogDir("/a", 100, 40), 50.0, 0.8) == 80 - 10  # 60 used, 50 of them partitions
    assert dir_limit(LogDir("/a", 100, 80), 50.0, 0.8) == 80  # more partition bytes than used: no other files
    assert dir_limit(LogDir("/a", 100), 50.0, 0.8) == 80
    assert dir_limit(LogDir("/a"), 50.0, 0.8) == np.inf


def test_remove_log_dir_lowers_the_brokers_limit_to_its_other_dirs_and_keeps_their_replicas_in_place() -> None:
    from kafka_rebalance.planner.goals.disk_capacity import kept_replicas

    # Broker 0: /a (removed) holds t-0..t-2, 2 GiB each; /b (10 GiB, limit 8.5) u-0 and u-1; broker 1: /a and /b of
    # 100 GiB, w-0 in /a. Partitions: t-0..t-2 are 0..2, u-0 and u-1 3 and 4, w-0 5.
    parts = [part("t", i, [0], size_bytes=2 * GIB, log_dirs=["/a"]) for i in range(3)]
    parts += [part("u", i, [0], size_bytes=2 * GIB, log_dirs=["/b"]) for i in range(2)]
    parts += [part("w", 0, [1], size_bytes=GIB, log_dirs=["/a"])]
    snap = jbod_cluster({0: {"/a": 10 * GIB, "/b": 10 * GIB}, 1: {"/a": 100 * GIB, "/b": 100 * GIB}}, parts)
    state = ClusterState(snap, PlanOptions(remove_log_dirs=("0:/a",)))
    assert state.disk_limit.tolist() == [8.5 * GIB, 170 * GIB]
    assert kept_replicas(state) == {(3, 0), (4, 0)}
    goal = DiskCapacityGoal()
    assert goal.accept_move(state, 0, 0, 1) and not goal.accept_move(state, 3, 0, 1)  # u-0 stays in /b
    assert not goal.accept_move(state, 5, 1, 0)  # broker 0 holds 10 GiB against 8.5
    plain = ClusterState(snap, PlanOptions())
    assert plain.disk_limit.tolist() == [17 * GIB, 170 * GIB] and goal.accept_move(plain, 3, 0, 1)


def test_relief_mode_optimize_sends_the_fewest_bytes_off_a_full_broker_and_names_what_is_left_above() -> None:
    # Broker 1 is 0.5 GiB above its limit: one 1 GiB replica (m-0, the first of equals) goes, to broker 2, the only
    # broker not sending (broker 0 is a donor for its dir /a). /a's brother relieves it: no move off broker 0.
    s = relief_state(100 * GIB, c_dir=False)
    goal = DiskCapacityGoal()
    goal.optimize(s)
    assert s.changes == [(9, 1, 2)] and goal.unrelieved == []

    def broker(bid: int, size: float, limit: float | None) -> BrokerView:
        return BrokerView(bid, 1, 0, 9, size, size, 0.1, 0, 0, 0, 1, limit)

    view = BalanceView((broker(1, 3 * GIB, 2 * GIB), broker(2, GIB, 2 * GIB), broker(3, GIB, None)), (), 0.1, 10.0, (0, 9))
    from kafka_rebalance.units import human_bytes

    assert goal.relief_left(view) == {1: f"{human_bytes(3 * GIB)} of partitions after the plan against its limit "
                                         f"{human_bytes(2 * GIB)} (--max-disk-usage of its capacity, less what else its "
                                         "disks hold)"}


@pytest.mark.parametrize("optimizer", ["heuristic", "exact"])
def test_relief_plans_off_a_full_broker_and_a_full_dir_beyond_its_brothers_room(optimizer: str) -> None:
    # Broker 0 holds 87 GiB against 85: its 2 GiB replica a-4 (from /a) leaves, to broker 2 (the only broker no
    # donor); broker 1 sends one 1 GiB replica. /a, now at 44 GiB, needs no more than /b's 1.5 GiB of room: a-5
    # fills /b to its limit. (The dir's need counts what its broker sent from it: a-5 and a-6 went off the broker too.)
    snap = relief_state(c_dir=False).snapshot
    plan = make_plan(snap, PlanOptions(relieve=True, optimizer=optimizer))
    s = plan.summary
    assert s["optimizer"]["used"] == optimizer
    assert (s["replica_moves"], s["bytes_moved"]) == (2, 3 * GIB)
    assert s["log_dirs"]["bytes_between_dirs"] == 1.5 * GIB
    assert {(b, d["path"]): d["after_bytes"] for b, d in ((d["broker_id"], d) for d in s["log_dirs"]["dirs"])} == {
        (0, "/a"): 42.5 * GIB, (0, "/b"): 42.5 * GIB}


def test_the_log_dir_chart_scales_to_its_largest_figure_and_labels_each_dir_by_its_brokers_order() -> None:
    import re

    def texts(svg: str) -> list[str]:
        return re.findall(r"<text[^>]*>([^<]*)</text>", svg)

    mib = 2**20
    # The largest figure is /a's limit, 1 MiB exactly: the axis is in MiB, 0.0 to 1.0. /b is removed (no limit
    # drawn), /z has no size (no limit).
    rows = [{"broker_id": 0, "path": "/a", "removed": False, "limit_bytes": mib, "before_bytes": mib // 2, "peak_bytes": mib // 2,
             "after_bytes": mib // 4},
            {"broker_id": 0, "path": "/b", "removed": True, "limit_bytes": 0, "before_bytes": mib // 4, "peak_bytes": mib // 4,
             "after_bytes": 0},
            {"broker_id": 1, "path": "/z", "removed": False, "limit_bytes": None, "before_bytes": 0, "peak_bytes": 0, "after_bytes": 0}]
    chart, = DiskCapacityGoal.report_charts({}, None, {"log_dirs": {"dirs": rows}})
    assert (chart["id"], chart["title"]) == ("log-dirs", "Partition bytes per log dir")
    assert texts(chart["svg"]) == ["0:0", "0:1 (removed)", "1:0", "broker:dir", "0.0", "0.2", "0.4", "0.6", "0.8", "1.0", "MiB",
                                   "Partition bytes per log dir", "peak during the plan", "limit (--max-disk-usage)", "before",
                                   "projected"]
    assert 'id="log-dirs-limit-0.0"' in chart["svg"] and "log-dirs-limit-0.1" not in chart["svg"]
    assert chart["caption"] == (
        "Each log dir's partition bytes before, after the plan and (after execution) as Kafka reports them. Black ticks: "
        "the most the dir holds at any step (every replica arriving before any leaves); red dashes: its limit, "
        "--max-disk-usage of its volume less what else the volume holds. Dirs: 0:0 = /a; 0:1 = /b; 1:0 = /z.")
    # Under a KiB the axis is in bytes; a final snapshot adds its bars (a dir it holds nothing in at 0).
    small = [{**r, "limit_bytes": None, "before_bytes": 100, "peak_bytes": 100, "after_bytes": 50} for r in rows[:2]]
    final = jbod_cluster({0: {"/a": GIB, "/b": GIB}}, [part("t", 0, [0], size_bytes=80, log_dirs=["/a"])])
    chart, = DiskCapacityGoal.report_charts({}, final, {"log_dirs": {"dirs": small}})
    assert texts(chart["svg"])[:3] == ["0:0", "0:1 (removed)", "broker:dir"] and "bytes" in texts(chart["svg"])
    assert "100" in texts(chart["svg"]) and "final" in texts(chart["svg"])
    assert 'id="log-dirs-bar-final-0.1"' in chart["svg"]
    assert DiskCapacityGoal.report_charts({}, None, {"log_dirs": {"dirs": []}}) == []
    assert DiskCapacityGoal.report_charts({}, None, None) == []


def test_dirs_within_a_broker_are_balanced_by_their_limits_share_the_replica_nearest_the_gap_first() -> None:
    from kafka_rebalance.planner.goals.disk_capacity import DirMove, plan_log_dirs

    # Broker 0: /a 10 GiB (limit 8.5) holds a-0..a-3 (4, 2, 1, 1 GiB), /b 30 GiB (limit 25.5) b-0 (2 GiB); broker 1
    # has one dir. Shares of the 10 GiB by limit: /a 2.5, /b 7.5 (band +- 10 %). /a gives the replica nearest
    # min(5.5, 5.5): 4 GiB (4 / 6); then nearest 1.5: the first 1 GiB (3 / 7; the 2 GiB is as near, not nearer);
    # then only a replica under 0.5 + 0.5 GiB would bring both nearer: none, /a stays above its band.
    parts = [part("a", i, [0], size_bytes=s * GIB, log_dirs=["/a"]) for i, s in enumerate([4, 2, 1, 1])]
    parts += [part("b", 0, [0], size_bytes=2 * GIB, log_dirs=["/b"]), part("c", 0, [1], size_bytes=GIB, log_dirs=["/d"])]
    # Broker 1's /e has no size: its dirs are not balanced, and /e has no limit.
    snap = jbod_cluster({0: {"/a": 10 * GIB, "/b": 30 * GIB}, 1: {"/d": 10 * GIB, "/e": None}}, parts)
    out = plan_log_dirs(ClusterState(snap, PlanOptions(byte_tolerance=0.1)), [])
    assert out.within == [DirMove(0, 0, "/b", "/a", 4 * GIB), DirMove(2, 0, "/b", "/a", GIB)]
    assert [(d["path"], d["limit_bytes"], d["peak_bytes"], d["after_bytes"]) for d in out.dirs] == [
        ("/a", round(8.5 * GIB), 8 * GIB, 3 * GIB), ("/b", round(25.5 * GIB), 7 * GIB, 7 * GIB),
        ("/d", round(8.5 * GIB), GIB, GIB), ("/e", None, 0, 0)]
    # At 20 % the first move leaves /a at 4 against 2.5 x 1.2 = 3: one more; at 70 %, /a's 4.25 GiB ceiling
    # holds 4 GiB and /b's floor of 2.25 its 6: done after one.
    assert len(plan_log_dirs(ClusterState(snap, PlanOptions(byte_tolerance=0.2)), []).within) == 2
    assert len(plan_log_dirs(ClusterState(snap, PlanOptions(byte_tolerance=0.7)), []).within) == 1


# ---------------------------------------------------------------------------- edges worked to the byte
#
# Limits at half the capacity (--max-disk-usage 0.5) and sizes in bytes, so a limit can end in half a byte and a
# broker or dir can sit exactly at its limit plus the half byte of slack (SLACK_BYTES), which is within it.


def dirs_cluster(brokers: dict[int, list[dict[str, Any]]], partitions: list[dict[str, Any]]) -> Snapshot:
    """Brokers with the log dirs given as snapshot rows (path, total_bytes, usable_bytes)."""
    rows = [{"leader": p["replicas"][0], "isr": list(p["replicas"]), **p} for p in partitions]
    return snapshot_from_dict({"cluster_id": "edges", "brokers": [{"id": b, "log_dirs": ds} for b, ds in brokers.items()],
                               "partitions": rows})


def index(state: ClusterState) -> dict[str, int]:
    return {f"{p.topic}-{p.partition}": i for i, p in enumerate(state.parts)}


def test_a_broker_at_its_limit_plus_the_half_byte_is_within_it_for_the_veto_the_relief_and_relief_mode() -> None:
    from kafka_rebalance.planner.goals.disk_capacity import relief_donors

    # Broker 0's 201 bytes hold 100.5, broker 1's 1000 hold 500. a-0 (61 bytes) on 0; b-0 (40) and b-1 (41) on 1.
    snap = disk_cluster({0: 201, 1: 1000}, [part("a", 0, [0], size_bytes=61), part("b", 0, [1], size_bytes=40),
                                            part("b", 1, [1], size_bytes=41)])
    s = ClusterState(snap, PlanOptions(max_disk_usage=0.5))
    assert s.disk_limit.tolist() == [100.5, 500.0]
    goal = DiskCapacityGoal()
    assert goal.accept_move(s, 1, 1, 0)  # 61 + 40 = 101 = 100.5 + 0.5
    assert not goal.accept_move(s, 2, 1, 0)  # 102
    s.move(1, 1, 0)
    goal.optimize(s)
    assert s.changes == [(1, 1, 0)] and goal.unrelieved == []  # at 101 broker 0 is not relieved
    relief = ClusterState(snap, PlanOptions(max_disk_usage=0.5, relieve=True))
    relief.move(1, 1, 0)
    assert relief_donors(relief) == []


def test_the_check_counts_a_broker_above_its_slack_by_its_own_excess_below_a_byte() -> None:
    def broker(bid: int, size: float, limit: float | None) -> BrokerView:
        return BrokerView(bid, 1, 0, 9, size, size, 0.1, 0, 0, 0, 1, limit)

    # 0.5 above: within; 0.75 above: an offender by 0.75 (not rounded up to a byte).
    check = DiskCapacityGoal().check(BalanceView((broker(1, 100.5, 100.0), broker(2, 100.75, 100.0)), (), 0.1, 10.0, (0, 9)))
    assert (check.value, check.offenders) == (0.75, (2,))
    # A broker whose limit is 0 bytes is named against 0 B.
    from kafka_rebalance.units import human_bytes

    left = DiskCapacityGoal().relief_left(BalanceView((broker(1, 10.0, 0.0),), (), 0.1, 10.0, (0, 9)))
    assert left == {1: f"{human_bytes(10.0)} of partitions after the plan against its limit {human_bytes(0.0)} "
                       "(--max-disk-usage of its capacity, less what else its disks hold)"}


def test_relief_goes_furthest_above_first_and_a_broker_left_as_it_is_stops_no_other() -> None:
    # Broker 0 (limit 5) holds a-0, 9 bytes: 4 above. Broker 1 (limit 20) holds b-0, 21: 1 above (but more bytes
    # and a larger limit). Broker 2 (limit 22) holds c-0, 1 byte: room for a-0 or b-0, not both.
    snap = disk_cluster({0: 10, 1: 40, 2: 44}, [part("a", 0, [0], size_bytes=9), part("b", 0, [1], size_bytes=21),
                                                part("c", 0, [2], size_bytes=1)])
    s = ClusterState(snap, PlanOptions(max_disk_usage=0.5))
    goal = DiskCapacityGoal()
    s.vetoes = [goal]  # as in a plan: its own veto holds its relief's destinations
    goal.optimize(s)
    # a-0 goes to broker 2 (the least full); then b-0 fits neither broker 0 (limit 5) nor broker 2 (31 bytes).
    assert s.changes == [(0, 0, 2)] and goal.unrelieved == [1]
    # Broker 0 now holds a-0 of 30 bytes, which fits nowhere: left as it is; broker 1 (b-0 15 and b-1 6 bytes, 1
    # above) still sends its replica nearest 1 byte, b-1, to broker 2.
    snap = disk_cluster({0: 10, 1: 40, 2: 44}, [part("a", 0, [0], size_bytes=30), part("b", 0, [1], size_bytes=15),
                                                part("b", 1, [1], size_bytes=6), part("c", 0, [2], size_bytes=1)])
    s = ClusterState(snap, PlanOptions(max_disk_usage=0.5))
    s.vetoes = [goal]
    goal.optimize(s)
    assert s.changes == [(2, 1, 2)] and goal.unrelieved == [0]


def test_relief_may_send_back_a_replica_the_plan_brought() -> None:
    # Broker 0 (limit 5) holds a-0 (4 bytes); b-0 (3 bytes) arrives from broker 1: 7 bytes, 2 above. The replica
    # nearest 2 bytes is the one that arrived: it goes back to broker 1, now the least full.
    snap = disk_cluster({0: 10, 1: 100}, [part("a", 0, [0], size_bytes=4), part("b", 0, [1], size_bytes=3)])
    s = ClusterState(snap, PlanOptions(max_disk_usage=0.5))
    s.move(1, 1, 0)
    DiskCapacityGoal().optimize(s)
    assert s.bytes.tolist() == [4, 3] and list(s.row(1)) == [1]


def test_relief_dir_room_to_the_byte_counting_an_empty_dirs_other_files() -> None:
    from kafka_rebalance.planner.goals.disk_capacity import dir_room

    # Broker 0: /a (100 bytes, limit 50) holds x-0 (60); /b (201 bytes, 151 usable, empty: 50 bytes of other files)
    # has a limit of 100.5 - 50 = 50.5, all of it room. Broker 1's one dir holds y-0 (51) and y-1 (52).
    snap = dirs_cluster({0: [{"path": "/a", "total_bytes": 100}, {"path": "/b", "total_bytes": 201, "usable_bytes": 151}],
                         1: [{"path": "/d", "total_bytes": 1000}]},
                        [part("x", 0, [0], size_bytes=60, log_dirs=["/a"]), part("y", 0, [1], size_bytes=51, log_dirs=["/d"]),
                         part("y", 1, [1], size_bytes=52, log_dirs=["/d"])])
    fits = dir_room(ClusterState(snap, PlanOptions(max_disk_usage=0.5, relieve=True)))
    assert fits(1, 0) and not fits(2, 0)  # 51 <= 50.5 + 0.5; 52 is not


def test_relief_donors_by_need_then_dirs_beyond_their_brothers_room_to_the_half_byte() -> None:
    from kafka_rebalance.planner.goals.disk_capacity import relief_donors
    from kafka_rebalance.planner.relief import Donor

    # Limits at half: broker 0 (one dir, limit 50) holds 60: need 10 - 0.5; broker 1 (limit 50) holds 55: 4.5.
    # Broker 2: /a (101 bytes, limit 50.5) holds 51, 0.5 above: within; /b (limit 50) holds 100: 50 above; /c (100
    # bytes, 90 usable, empty: limit 50 - 10) has 40 of room; /e has no size (so neither has the broker): /b needs
    # 50 - 40 - 0.5. Broker 3: /a (limit 50) holds 70, /z no size: 19.5. Dirs by need: broker 3's first.
    snap = dirs_cluster({0: [{"path": "/d", "total_bytes": 100}], 1: [{"path": "/d", "total_bytes": 100}],
                         2: [{"path": "/a", "total_bytes": 101}, {"path": "/b", "total_bytes": 100},
                             {"path": "/c", "total_bytes": 100, "usable_bytes": 90}, {"path": "/e"}],
                         3: [{"path": "/a", "total_bytes": 100}, {"path": "/z"}]},
                        [part("a", 0, [0], size_bytes=30, log_dirs=["/d"]), part("a", 1, [0], size_bytes=30, log_dirs=["/d"]),
                         part("b", 0, [1], size_bytes=55, log_dirs=["/d"]), part("c", 0, [2], size_bytes=51, log_dirs=["/a"]),
                         part("d", 0, [2], size_bytes=100, log_dirs=["/b"]), part("e", 0, [3], size_bytes=70, log_dirs=["/a"])])
    s = ClusterState(snap, PlanOptions(max_disk_usage=0.5, relieve=True))
    i = index(s)
    assert relief_donors(s) == [Donor(0, 9.5, (i["a-0"], i["a-1"])), Donor(1, 4.5, (i["b-0"],)),
                                Donor(3, 19.5, (i["e-0"],), whole=False, where="/a"),
                                Donor(2, 9.5, (i["d-0"],), whole=False, where="/b")]


def test_remove_log_dir_limits_each_broker_to_its_staying_dirs_and_one_that_loses_all_to_nothing() -> None:
    from dataclasses import replace

    from kafka_rebalance.planner.goals.disk_capacity import dir_data, dir_room, without_removed_dirs

    # Broker 0 removes nothing. Broker 1 removes /a; /b (300 bytes, 250 usable, empty) holds 150 - 50. Broker 2
    # removes both its dirs. Limits given as 1000 each; c-0 has no size: it counts 0 bytes in its dir.
    snap = dirs_cluster({0: [{"path": "/d", "total_bytes": 100}],
                         1: [{"path": "/a", "total_bytes": 100}, {"path": "/b", "total_bytes": 300, "usable_bytes": 250}],
                         2: [{"path": "/a", "total_bytes": 100}, {"path": "/b", "total_bytes": 100}]},
                        [part("a", 0, [1], size_bytes=10, log_dirs=["/a"]), part("c", 0, [2], log_dirs=["/a"]),
                         part("d", 0, [0], size_bytes=1, log_dirs=["/d"])])
    options = PlanOptions(max_disk_usage=0.5, remove_log_dirs=("1:/a", "2:/a", "2:/b"))
    assert without_removed_dirs(snap, options, np.full(3, 1000.0)).tolist() == [1000.0, 100.0, 0.0]
    assert dir_data(snap) == {(1, "/a"): 10.0, (2, "/a"): 0.0, (0, "/d"): 1.0}
    # In relief mode broker 2 has no dir to put a replica in: not even d-0's 1 byte fits (0 + 0.5 of slack).
    assert not dir_room(ClusterState(snap, replace(options, relieve=True)))(2, 2)


def test_a_log_dir_step_of_a_partition_without_a_size_carries_0_bytes() -> None:
    from kafka_rebalance.planner.goals.disk_capacity import DirMove, LogDirPlan, within_steps

    snap = jbod_cluster({0: {"/a": 100, "/b": 100}}, [part("t", 0, [0], log_dirs=["/a"])])
    steps = within_steps(ClusterState(snap, PlanOptions()), LogDirPlan(within=[DirMove(0, 0, "/b", "/a", 0)]), [])
    assert [s.size for s in steps] == [0]


@pytest.mark.parametrize(("top", "unit"), [(1024, "KiB"), (1024**3, "GiB"), (1024**4, "TiB")])
def test_the_log_dir_chart_switches_unit_at_exactly_1024_of_the_smaller(top: int, unit: str) -> None:
    import re

    rows = [{"broker_id": 0, "path": "/a", "removed": False, "limit_bytes": None, "before_bytes": top, "peak_bytes": top,
             "after_bytes": top}]
    chart, = DiskCapacityGoal.report_charts({}, None, {"log_dirs": {"dirs": rows}})
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", chart["svg"])
    assert unit in texts and "1.0" in texts  # the top at 1.0 of the unit


def test_the_log_dir_chart_draws_a_dir_the_final_snapshot_holds_nothing_in_as_one_holding_0_bytes() -> None:
    rows = [{"broker_id": 0, "path": p, "removed": False, "limit_bytes": None, "before_bytes": 100, "peak_bytes": 100,
             "after_bytes": 50} for p in ("/a", "/b")]
    empty = jbod_cluster({0: {"/a": GIB, "/b": GIB}}, [part("t", 0, [0], size_bytes=80, log_dirs=["/a"])])
    zero = jbod_cluster({0: {"/a": GIB, "/b": GIB}}, [part("t", 0, [0], size_bytes=80, log_dirs=["/a"]),
                                                      part("u", 0, [0], size_bytes=0, log_dirs=["/b"])])
    a, = DiskCapacityGoal.report_charts({}, empty, {"log_dirs": {"dirs": rows}})
    b, = DiskCapacityGoal.report_charts({}, zero, {"log_dirs": {"dirs": rows}})
    assert a["svg"] == b["svg"]


def test_a_removed_dirs_replicas_go_largest_first_and_one_too_large_leaves_the_rest_placed() -> None:
    from kafka_rebalance.planner.goals.disk_capacity import DirMove, plan_log_dirs

    # Broker 0 removes /a, which holds a-0 (1 byte), b-0 (3) and c-0 (6); /b (19 bytes, 14 usable, empty: 5 bytes of
    # other files) takes 9.5 - 5 = 4.5 (+ 0.5 of slack). c-0 fits nowhere; then b-0 and a-0 fill /b to 4 bytes.
    snap = dirs_cluster({0: [{"path": "/a", "total_bytes": 100}, {"path": "/b", "total_bytes": 19, "usable_bytes": 14}],
                         1: [{"path": "/d", "total_bytes": 1000}]},
                        [part(t, 0, [0], size_bytes=n, log_dirs=["/a"]) for t, n in (("a", 1), ("b", 3), ("c", 6))]
                        + [part("z", 0, [1], size_bytes=1, log_dirs=["/d"])])
    out = plan_log_dirs(ClusterState(snap, PlanOptions(max_disk_usage=0.5, remove_log_dirs=("0:/a",))), [])
    assert out.within == [DirMove(1, 0, "/b", "/a", 3), DirMove(0, 0, "/b", "/a", 1)]
    assert out.unplaced == ["c-0 on broker 0 (6 bytes) in removed dir /a"]
    assert [(d["path"], d["removed"], d["limit_bytes"], d["before_bytes"], d["peak_bytes"], d["after_bytes"]) for d in out.dirs] == [
        ("/a", True, 0, 10, 10, 6), ("/b", False, round(4.5), 0, 4, 4)]


def test_a_new_replica_goes_to_the_least_full_dir_by_its_limits_fraction_an_unsized_dir_first() -> None:
    from kafka_rebalance.planner.goals.disk_capacity import plan_log_dirs
    from kafka_rebalance.planner.steps import Step

    # Brokers 0 and 1: /a (limit 100) holds 10 bytes (0.1 full), /b (limit 10) 2 bytes (0.2); broker 0's /u has no
    # size (0 full) and holds 50. Broker 2 has one dir. Broker 3: /a (limit 100.5) holds 100, /b (limit 10) 10.
    ab = [{"path": "/a", "total_bytes": 200}, {"path": "/b", "total_bytes": 20}]
    snap = dirs_cluster({0: [*ab, {"path": "/u"}], 1: ab, 2: [{"path": "/d", "total_bytes": 10**6}],
                         3: [{"path": "/a", "total_bytes": 201}, {"path": "/b", "total_bytes": 20}]},
                        [part("a", b, [b], size_bytes=10, log_dirs=["/a"]) for b in (0, 1)]
                        + [part("b", b, [b], size_bytes=2, log_dirs=["/b"]) for b in (0, 1)]
                        + [part("f", 0, [3], size_bytes=100, log_dirs=["/a"]), part("g", 0, [3], size_bytes=10, log_dirs=["/b"]),
                           part("u", 0, [0], size_bytes=50, log_dirs=["/u"]), part("w", 0, [2], size_bytes=11),
                           part("x", 0, [2], size_bytes=1)])
    state = ClusterState(snap, PlanOptions(max_disk_usage=0.5))
    i = index(state)
    # x-0 (1 byte) is added on 2 (one dir: nothing to name), 0, 1 and 3; then w-0 (11 bytes) on 3 and 1.
    x = Step(i["x-0"], "x", 0, (2,), (2, 0, 1, 3), (2, 0, 1, 3), (), 0, 2, 1, 0.0)
    w = Step(i["w-0"], "w", 0, (2,), (2, 3, 1), (3, 1), (), 0, 2, 11, 0.0)
    out = plan_log_dirs(state, [[x]])
    # x-0: broker 0's /u, broker 1's /a, broker 3's /a (101 bytes: its limit and the slack).
    assert out.new == {(i["x-0"], 0): "/u", (i["x-0"], 1): "/a", (i["x-0"], 3): "/a"}
    assert out.unplaced == []
    # w-0 fits neither of broker 3's dirs (/a would hold 111 or more of its 100, /b 21 of 10): no plan, one line,
    # naming the roomier dir (/a: 100.5 - 100 + 0.5 = 1 against /b's 0.5) with its 100 + 11 bytes against its limit
    # (100.5 printed to the byte, rounding half to even); the exact model's plan says what the solver cannot see.
    line = ("broker 3 log dir /a: 111 bytes of partitions after the plan against its limit 100: no log dir of broker 3 "
            "holds w-0 (11 bytes), which the replica goals put there; give its disks room (a higher --max-disk-usage) "
            "or the partition another broker")
    exact = " (--optimizer exact holds each broker to its limit, not each log dir: --optimizer auto or heuristic plans around it)"
    for optimizer, tail in (("heuristic", ""), ("auto", ""), ("exact", exact)):
        with pytest.raises(PlanError) as refused:
            plan_log_dirs(ClusterState(snap, PlanOptions(max_disk_usage=0.5, optimizer=optimizer)), [[x], [w]])
        assert str(refused.value) == line + tail


def test_dirs_are_balanced_to_the_edges_of_their_band_with_a_replica_above_0_bytes_that_the_lower_dir_holds_at_its_peak() -> None:
    from kafka_rebalance.planner.goals.disk_capacity import DirMove, plan_log_dirs
    from kafka_rebalance.planner.steps import Step

    # Equal limits (1000) unless said; 10 % of tolerance. Broker 0 has a dir with no size: not balanced.
    # Broker 1: /a 6 (a-0 5, a-1 1), /b 4: shares 5, band edges 5.5 + 0.5 and 4.5 - 0.5: within, no move.
    # Broker 2: /a 7 (c-0 0 bytes, c-1 1, c-2 6), /b 3: c-1 (1 byte, nearest 2 under 4) brings them to 6 and 4.
    # Broker 3: /a 7 (e-0 0 bytes, e-1 7), /b 3: a replica of 0 bytes helps nothing, 7 overshoots: no move.
    # Broker 5: /a (100 bytes, 50 usable, empty) has a limit of 0: its dirs are not balanced.
    # Broker 6: /a (limit 20) j-0 8, j-1 2; /b (limit 20.5) k-1 4, and k-0 (15) that leaves the broker: 19 at its
    # peak. Shares of 14 by limits: /a 6.91, /b 7.09; j-1 (2 bytes) fits /b's room of 20.5 - 19 + 0.5 exactly.
    # Broker 8: as broker 6 with /b's limit 20 and j-1 of 3 bytes: room 1.5, no move.
    big = [{"path": "/a", "total_bytes": 2000}, {"path": "/b", "total_bytes": 2000}]
    rows = [("s", 0, 0, "/a", 3), ("a", 0, 1, "/a", 5), ("a", 1, 1, "/a", 1), ("b", 0, 1, "/b", 4),
            ("c", 0, 2, "/a", 0), ("c", 1, 2, "/a", 1), ("c", 2, 2, "/a", 6), ("d", 0, 2, "/b", 3),
            ("e", 0, 3, "/a", 0), ("e", 1, 3, "/a", 7), ("f", 0, 3, "/b", 3), ("h", 0, 5, "/b", 10),
            ("j", 0, 6, "/a", 8), ("j", 1, 6, "/a", 2), ("k", 0, 6, "/b", 15), ("k", 1, 6, "/b", 4),
            ("m", 0, 8, "/a", 8), ("m", 1, 8, "/a", 3), ("n", 0, 8, "/b", 15), ("n", 1, 8, "/b", 4)]
    snap = dirs_cluster({0: [{"path": "/a", "total_bytes": 2000}, {"path": "/u"}], 1: big, 2: big, 3: big,
                         5: [{"path": "/a", "total_bytes": 100, "usable_bytes": 50}, {"path": "/b", "total_bytes": 100}],
                         6: [{"path": "/a", "total_bytes": 40}, {"path": "/b", "total_bytes": 41}],
                         7: [{"path": "/d", "total_bytes": 10**6}],
                         8: [{"path": "/a", "total_bytes": 40}, {"path": "/b", "total_bytes": 40}]},
                        [part(t, n, [b], size_bytes=size, log_dirs=[d]) for t, n, b, d, size in rows])
    state = ClusterState(snap, PlanOptions(max_disk_usage=0.5, byte_tolerance=0.1))
    i = index(state)
    steps = []
    for name, b in (("k-0", 6), ("n-0", 8)):
        p = i[name]
        state.move(p, state.index_of[b], state.index_of[7])
        steps.append([Step(p, name[0], 0, (b,), (7,), (7,), (b,), 0, b, 15, 0.0)])
    out = plan_log_dirs(state, steps)
    assert out.within == [DirMove(i["c-1"], 2, "/b", "/a", 1), DirMove(i["j-1"], 6, "/b", "/a", 2)]


def test_relief_between_dirs_stops_at_the_limit_plus_the_half_byte_and_tries_the_next_pick_when_one_fits_nowhere() -> None:
    from kafka_rebalance.planner.goals.disk_capacity import DirMove, plan_log_dirs

    # Broker 0: /a (limit 100.5) holds m-0 100, m-1 9, m-2 1: 110, 9 above its limit and slack. m-1 alone is the
    # fewest bytes: /a ends at 101, its limit and slack, and is not named. Broker 1: /a (limit 25.5) holds n-0 4,
    # n-1 3, n-2 3, n-3 20: 4 above; /b and /c (limit 2.5 each, empty) take 3 bytes at most: n-0 fits neither, so
    # the next fewest, n-1 and n-2, go one to each.
    snap = dirs_cluster({0: [{"path": "/a", "total_bytes": 201}, {"path": "/b", "total_bytes": 1000}],
                         1: [{"path": "/a", "total_bytes": 51}, {"path": "/b", "total_bytes": 5}, {"path": "/c", "total_bytes": 5}]},
                        [part("m", n, [0], size_bytes=s, log_dirs=["/a"]) for n, s in enumerate([100, 9, 1])]
                        + [part("n", n, [1], size_bytes=s, log_dirs=["/a"]) for n, s in enumerate([4, 3, 3, 20])])
    state = ClusterState(snap, PlanOptions(max_disk_usage=0.5, relieve=True))
    i = index(state)
    out = plan_log_dirs(state, [])
    assert out.within == [DirMove(i["m-1"], 0, "/b", "/a", 9), DirMove(i["n-1"], 1, "/b", "/a", 3),
                          DirMove(i["n-2"], 1, "/c", "/a", 3)]
    assert out.unrelieved == [] and out.unplaced == []


def test_a_removed_dirs_replica_of_a_partition_the_plan_changed_elsewhere_still_leaves_the_dir() -> None:
    from kafka_rebalance.planner.goals.disk_capacity import DirMove, plan_log_dirs
    from kafka_rebalance.planner.steps import Step

    # t-0 on brokers 0 (in /a, removed) and 1; its replica on 1 moves to 2. The one on 0 stays on the broker: to /b.
    snap = dirs_cluster({0: [{"path": "/a", "total_bytes": 1000}, {"path": "/b", "total_bytes": 1000}],
                         1: [{"path": "/d", "total_bytes": 1000}], 2: [{"path": "/d", "total_bytes": 1000}]},
                        [part("t", 0, [0, 1], size_bytes=5, log_dirs=["/a", "/d"])])
    state = ClusterState(snap, PlanOptions(remove_log_dirs=("0:/a",)))
    state.move(0, 1, 2)
    out = plan_log_dirs(state, [[Step(0, "t", 0, (0, 1), (0, 2), (2,), (1,), 0, 0, 5, 0.0)]])
    assert out.within == [DirMove(0, 0, "/b", "/a", 5)]


# ---------------------------------------------------------------------------- the solver's rows


def test_the_solver_moves_the_removed_dirs_replica_off_the_broker_not_a_smaller_one_the_broker_keeps() -> None:
    # Broker 0 removes /a (t-0, 3 GiB); /b (10 GiB, limit 8.5) holds u-0 (2 GiB) and w-0 (5 GiB): 10 GiB against
    # 8.5. Sending u-0 away would be fewer bytes, but u-0 and w-0 stay (kept_replicas): t-0 goes to broker 1.
    snap = jbod_cluster({0: {"/a": 10 * GIB, "/b": 10 * GIB}, 1: {"/a": 100 * GIB, "/b": 100 * GIB}},
                        [part("t", 0, [0], size_bytes=3 * GIB, log_dirs=["/a"]), part("u", 0, [0], size_bytes=2 * GIB, log_dirs=["/b"]),
                         part("w", 0, [0], size_bytes=5 * GIB, log_dirs=["/b"])])
    s = make_plan(snap, PlanOptions(remove_log_dirs=("0:/a",), goals=("preferred-leader",), optimizer="exact")).summary
    assert s["optimizer"]["used"] == "exact"
    assert (s["replica_moves"], s["bytes_moved"]) == (1, 3 * GIB)


def test_the_solver_sheds_a_full_dirs_need_where_its_brother_has_no_known_room() -> None:
    # Relief mode. Broker 0: /a (10 GiB, limit 8.5) holds a-0 6, a-1 2 and a-2 1.5 GiB, 1 GiB above; /u has no size
    # (no room counted, and no broker limit). Broker 1: 10 GiB (limit 8.5) holding nine 1 GiB: 0.5 GiB above.
    # Broker 2 has room. The fewest bytes: a-2 (1.5 GiB) and one 1 GiB replica of broker 1, both to broker 2.
    snap = dirs_cluster({0: [{"path": "/a", "total_bytes": 10 * GIB}, {"path": "/u"}],
                         1: [{"path": "/d", "total_bytes": 10 * GIB}], 2: [{"path": "/d", "total_bytes": 100 * GIB}]},
                        [part("a", n, [0], size_bytes=int(s * GIB), log_dirs=["/a"]) for n, s in enumerate([6, 2, 1.5])]
                        + [part("m", n, [1], size_bytes=GIB, log_dirs=["/d"]) for n in range(9)])
    s = make_plan(snap, PlanOptions(relieve=True, optimizer="exact")).summary
    assert s["optimizer"]["used"] == "exact"
    assert (s["replica_moves"], s["bytes_moved"]) == (2, int(2.5 * GIB))


def test_the_solver_counts_a_brokers_excluded_bytes_against_its_limit() -> None:
    # new_small_broker with an excluded 1 GiB topic on broker 2 (8 GiB, limit 6.8): 5.8 GiB of room for the
    # rest, where the byte goal would take it to 25 / 3 GiB.
    snap = new_small_broker(8 * GIB)
    rows = [{"topic": p.topic, "partition": p.partition, "replicas": list(p.replicas), "leader": p.leader, "isr": list(p.isr),
             "size_bytes": p.size_bytes} for p in snap.partitions]
    rows.append({"topic": "x", "partition": 0, "replicas": [2], "leader": 2, "isr": [2], "size_bytes": GIB})
    snap = snapshot_from_dict({"cluster_id": "disks", "brokers": [{"id": b.id, "log_dirs": [{"path": d.path, "total_bytes": d.total_bytes}
                                                                                           for d in b.log_dirs]} for b in snap.brokers],
                               "partitions": rows})
    s = make_plan(snap, PlanOptions(optimizer="exact", exclude_topics=("x",))).summary
    assert s["optimizer"]["used"] == "exact"
    assert 5 * GIB < projected(s, 2) <= 0.85 * 8 * GIB


def test_brokers_equally_far_above_their_limits_are_relieved_in_broker_order_among_17() -> None:
    # 17 brokers of 20 bytes (limit 10), each holding one replica of 10 + x bytes: brokers 5 and 6 are 1 byte above,
    # and their 11 bytes fit nowhere. Both are named, in broker order (at 17 items an unstable sort swaps these two).
    x = [-1, -1, -5, 0, -3, 1, 1, -5, -3, -1, -4, -2, -3, -1, 0, 0, -3]
    snap = disk_cluster(dict.fromkeys(range(17), 20), [part(f"t{b:02d}", 0, [b], size_bytes=10 + x[b]) for b in range(17)])
    s = ClusterState(snap, PlanOptions(max_disk_usage=0.5))
    goal = DiskCapacityGoal()
    s.vetoes = [goal]
    goal.optimize(s)
    assert s.changes == [] and goal.unrelieved == [5, 6]


def test_a_relieved_replica_ranks_a_broker_by_the_fraction_of_its_limit_even_below_2_bytes() -> None:
    # Broker 1's limit is 1 byte, holding 1: full (1.0). Broker 2 (limit 10) holds 6: 0.6. p-0 on broker 0 goes to 2.
    snap = disk_cluster({0: 100, 1: 2, 2: 20}, [part("p", 0, [0], size_bytes=1), part("q", 0, [1], size_bytes=1),
                                                 part("r", 0, [2], size_bytes=6)])
    assert DiskCapacityGoal._destination(ClusterState(snap, PlanOptions(max_disk_usage=0.5)), 0, 0) == 2


# ---------------------------------------------------------------------------- a new replica's dir, path by path


def test_a_new_replica_no_dir_holds_makes_room_by_moving_the_smallest_staying_replica_large_enough_within_its_broker() -> None:
    from kafka_rebalance.planner.goals.disk_capacity import DirMove, plan_log_dirs
    from kafka_rebalance.planner.steps import Step

    # Limits at half the volume, 0.5 byte of slack. n-0 (6 bytes) and m-0 (5) leave broker 1 (one dir) for 0 and 3.
    # Broker 0: /a (limit 13) a-0 9; /b (limit 10.5) b-0 4, c-0 2, d-0 1. n-0 fits neither dir at its peak (15 of
    # 13.5, 13 of 11) and nothing leaves. /a's room is 13 - 9 + 0.5 = 4.5: it needs a replica of 1.5 bytes out, and
    # its only one, a-0 (9), fits nowhere else (/b 16 of 11). /b's room is 4: it needs 2 out; d-0 (1) is too small,
    # c-0 (2) is the smallest large enough and /a holds it (11 of 13.5; by its fraction /a's 9/13 is above /b's
    # 7/10.5: c-0 is not put back where it is). So c-0 goes /b -> /a and n-0 to /b (11 of 11).
    # Broker 2: z-0 (2 bytes) in its /a: another broker's replica, never a candidate for broker 0's dirs.
    # Broker 3: /a (limit 10) e-0 3, f-0 5; /b (limit 10) g-0 3, h-0 5; /c (limit 7.5) k-0 4. m-0 fits no dir at its
    # peak (13 of 10.5, 13, 9 of 8); /a and /b each need 2.5 out, and e-0 and g-0 (3) each fit /c (7 of 8): equally
    # small, the first dir's is kept (e-0). /c needs 1 out: k-0 (4) fits neither /a nor /b (12 of 10.5).
    def dirs(*sized: tuple[str, int]) -> list[dict[str, Any]]:
        return [{"path": p, "total_bytes": t} for p, t in sized]

    rows = [("a", 0, "/a", 9), ("b", 0, "/b", 4), ("c", 0, "/b", 2), ("d", 0, "/b", 1), ("e", 3, "/a", 3), ("f", 3, "/a", 5),
            ("g", 3, "/b", 3), ("h", 3, "/b", 5), ("k", 3, "/c", 4), ("m", 1, "/d", 5), ("n", 1, "/d", 6), ("z", 2, "/a", 2)]
    snap = dirs_cluster({0: dirs(("/a", 26), ("/b", 21)), 1: dirs(("/d", 10**6)), 2: dirs(("/a", 1000), ("/b", 1000)),
                         3: dirs(("/a", 20), ("/b", 20), ("/c", 15))},
                        [part(t, 0, [b], size_bytes=n, log_dirs=[d]) for t, b, d, n in rows])
    state = ClusterState(snap, PlanOptions(max_disk_usage=0.5, byte_tolerance=0.5))  # wide bands: no balancing moves
    i = index(state)
    steps = []
    for name, b, n in (("n-0", 0, 6), ("m-0", 3, 5)):
        state.move(i[name], state.index_of[1], state.index_of[b])
        steps.append([Step(i[name], name[0], 0, (1,), (b,), (b,), (1,), 0, 1, n, 0.0)])
    out = plan_log_dirs(state, steps)
    assert out.within == [DirMove(i["c-0"], 0, "/a", "/b", 2), DirMove(i["e-0"], 3, "/c", "/a", 3)]
    assert out.new == {(i["n-0"], 0): "/b", (i["m-0"], 3): "/a"}
    assert out.unplaced == [] and out.over == []
    # Broker 0's dirs at their peaks: /a 9 + 2; /b 7 less c-0 (its log-dir batch ends before any move) + 6.
    assert [(d["path"], d["before_bytes"], d["peak_bytes"], d["after_bytes"]) for d in out.dirs if d["broker_id"] == 0] == [
        ("/a", 9, 11, 11), ("/b", 7, 11, 11)]


def test_a_new_replica_goes_where_it_fits_at_its_peak_else_to_the_least_full_dir_after_the_departures() -> None:
    from kafka_rebalance.planner.goals.disk_capacity import plan_log_dirs
    from kafka_rebalance.planner.steps import Step

    # Limits at half the volume less other files; 0.5 byte of slack. Each new replica comes from broker 1 (one dir).
    # Broker 0: /a (limit 40) a-0 9, a-1 23; /c (limit 10) c-0 15, c-1 5: 20, above its limit, so it may hold up to
    # the 20 it holds before the plan. a-0 and c-0 leave for broker 1. n-0 (9) fits neither at its peak (41 of
    # 40.5, 29 of 20.5); after the departures /a has 40 - 23 + 0.5 = 17.5 of room and /c 20 - 5 + 0.5 = 15.5: both
    # hold it, /c the least full of its limit (5/10 against 23/40), though /a is the roomier (the veto's tally).
    # Broker 2: /a (limit 20) g-0 10; /b (limit 20) h-0 8 (leaving for broker 1), h-1 4. m-0 (2) fits both at its
    # peak: /a 10/20 is less full than /b 12/20 at their peaks, though /b ends less full (4/20): /a.
    # Broker 3: /a (limit 10) r-0 4 (leaving), r-1 2; /b (limit 100) s-0 80 (leaving), s-1 15. t-0 (6) fits neither
    # at its peak (12 of 10.5, 101 of 100.5); after, both: /b ends the less full of its limit (15/100 against 2/10).
    # Broker 4: /a (limit 1) empty, /b (limit 500) q-0 400, /c (100 bytes, 50 usable, empty: limit 50 - 50 = 0).
    # y-0 (0 bytes) fits all three at its peak: /a (0 of 1) the least full; /c's limit of 0 makes it the fullest.
    # Broker 5: /a (100 bytes, 45 usable) holds u-0 5, leaving: its other files are 100 - 45 - 5 = 50, its limit
    # 50 - 50 = 0, below the 5 it starts with; /b (limit 500) v-0 496 and v-1 2, leaving. o-0 (3) fits neither at
    # its peak (8 of 5.5, 501 of 500.5); after, /a holds it (5.5 of room) and /b (4.5): /a's limit of 0 puts it
    # last, /b (496/500). Broker 6: as 5 with 46 usable: /a's limit is 1, its fraction after 0/1: /a holds o-0 there.
    # Broker 7: /a (limit 10.5) w-7 3 (leaving), w-8 5; /b (limit 20) x-7 3 (leaving), x-8 12. k-7 (6) fits neither
    # at its peak (14 of 11, 21 of 20.5); after, /a's room is 10.5 - 5 + 0.5 = 6, exactly k-7, and /b's 8.5: /a,
    # the less full (5/10.5 against 12/20).
    # Broker 8: /a (limit 10) and /b (limit 5), empty, receive f-8 (2) and l-8 (8): the largest first, l-8 to /a
    # (both empty: by path), then f-8 to /b (0/5 against 8/10). (f-8 first would leave l-8 only /a: 10 of 10.5.)
    rows = [("a", 0, 0, "/a", 9), ("a", 1, 0, "/a", 23), ("c", 0, 0, "/c", 15), ("c", 1, 0, "/c", 5),
            ("g", 0, 2, "/a", 10), ("h", 0, 2, "/b", 8), ("h", 1, 2, "/b", 4), ("q", 0, 4, "/b", 400),
            ("r", 0, 3, "/a", 4), ("r", 1, 3, "/a", 2), ("s", 0, 3, "/b", 80), ("s", 1, 3, "/b", 15),
            ("u", 5, 5, "/a", 5), ("u", 6, 6, "/a", 5), ("v", 5, 5, "/b", 496), ("v", 6, 6, "/b", 496),
            ("v", 15, 5, "/b", 2), ("v", 16, 6, "/b", 2),
            ("m", 0, 1, "/d", 2), ("n", 0, 1, "/d", 9), ("o", 5, 1, "/d", 3), ("o", 6, 1, "/d", 3), ("t", 0, 1, "/d", 6),
            ("y", 0, 1, "/d", 0), ("w", 7, 7, "/a", 3), ("w", 8, 7, "/a", 5), ("x", 7, 7, "/b", 3), ("x", 8, 7, "/b", 12),
            ("k", 7, 1, "/d", 6), ("f", 8, 1, "/d", 2), ("l", 8, 1, "/d", 8)]
    snap = dirs_cluster({0: [{"path": "/a", "total_bytes": 80}, {"path": "/c", "total_bytes": 20}],
                         1: [{"path": "/d", "total_bytes": 10**6}],
                         2: [{"path": "/a", "total_bytes": 40}, {"path": "/b", "total_bytes": 40}],
                         3: [{"path": "/a", "total_bytes": 20}, {"path": "/b", "total_bytes": 200}],
                         4: [{"path": "/a", "total_bytes": 2}, {"path": "/b", "total_bytes": 1000},
                             {"path": "/c", "total_bytes": 100, "usable_bytes": 50}],
                         5: [{"path": "/a", "total_bytes": 100, "usable_bytes": 45}, {"path": "/b", "total_bytes": 1000}],
                         6: [{"path": "/a", "total_bytes": 100, "usable_bytes": 46}, {"path": "/b", "total_bytes": 1000}],
                         7: [{"path": "/a", "total_bytes": 21}, {"path": "/b", "total_bytes": 40}],
                         8: [{"path": "/a", "total_bytes": 20}, {"path": "/b", "total_bytes": 10}]},
                        [part(t, n, [b], size_bytes=s, log_dirs=[d]) for t, n, b, d, s in rows])
    state = ClusterState(snap, PlanOptions(max_disk_usage=0.5, byte_tolerance=0.9))  # wide bands: no balancing moves
    i = index(state)
    steps = []
    for name, src, dst, n in (("a-0", 0, 1, 9), ("c-0", 0, 1, 15), ("h-0", 2, 1, 8), ("r-0", 3, 1, 4), ("s-0", 3, 1, 80),
                              ("u-5", 5, 1, 5), ("u-6", 6, 1, 5), ("v-15", 5, 1, 2), ("v-16", 6, 1, 2),
                              ("n-0", 1, 0, 9), ("m-0", 1, 2, 2), ("t-0", 1, 3, 6), ("y-0", 1, 4, 0), ("o-5", 1, 5, 3),
                              ("o-6", 1, 6, 3), ("w-7", 7, 1, 3), ("x-7", 7, 1, 3), ("k-7", 1, 7, 6), ("f-8", 1, 8, 2),
                              ("l-8", 1, 8, 8)):
        topic, number = name.split("-")
        state.move(i[name], state.index_of[src], state.index_of[dst])
        steps.append([Step(i[name], topic, int(number), (src,), (dst,), (dst,), (src,), 0, src, n, 0.0)])
    out = plan_log_dirs(state, steps)
    assert out.new == {(i["n-0"], 0): "/c", (i["m-0"], 2): "/a", (i["t-0"], 3): "/b", (i["y-0"], 4): "/a",
                       (i["o-5"], 5): "/b", (i["o-6"], 6): "/a", (i["k-7"], 7): "/a", (i["l-8"], 8): "/a", (i["f-8"], 8): "/b"}
    assert out.within == [] and out.unplaced == []
    # The ledger's room of an empty dir: 0 bytes before the plan, its limit (broker 4's /c: 50 - (100 - 50 - 0) = 0).
    assert (out.room[(4, "/c")], out.room[(8, "/a")], out.room[(8, "/b")]) == ((0.0, 0.0), (0.0, 10.0), (0.0, 5.0))
    # Broker 0's /c ends at 5 + 9 = 14 of its 10, broker 6's /a at 3 of its 1: above their limits, though below
    # the 20 and 5 they started at (a dir that starts above its limit may end no fuller).
    assert out.over == ["broker 0 log dir /c: 14 bytes of partitions after the plan against its limit 10",
                        "broker 6 log dir /a: 3 bytes of partitions after the plan against its limit 1"]


def test_the_veto_tally_counts_each_arrival_in_its_home_else_the_roomiest_dir_that_holds_it_and_a_forced_one_roomiest() -> None:
    from kafka_rebalance.planner.goals.disk_capacity import dir_tally

    # Broker 0: /a (limit 10.5) empty, /b (limit 5.5) a-0 4; broker 1 (one dir) holds c-0 6, f-0 2, g-0 5, h-0 6.
    # Rooms are limit - bytes + 0.5: /a 11, /b 2.
    snap = dirs_cluster({0: [{"path": "/a", "total_bytes": 21}, {"path": "/b", "total_bytes": 11}],
                         1: [{"path": "/d", "total_bytes": 10**6}]},
                        [part("a", 0, [0], size_bytes=4, log_dirs=["/b"])]
                        + [part(t, 0, [1], size_bytes=n, log_dirs=["/d"]) for t, n in (("c", 6), ("f", 2), ("g", 5), ("h", 6))])
    state = ClusterState(snap, PlanOptions(max_disk_usage=0.5))
    i, b0, b1 = index(state), state.index_of[0], state.index_of[1]
    tally = dir_tally(state)
    assert tally.pick(state, i["c-0"], b0) == "/a"  # the roomiest (/b, last by path, holds 2 of its 6)
    state.move(i["a-0"], b0, b1)  # /b empties: rooms /a 11, /b 6
    state.move(i["c-0"], b1, b0)  # the roomiest, /a: rooms 5 and 6
    state.move(i["f-0"], b1, b0)  # the roomiest, /b: rooms 5 and 4
    tally = dir_tally(state)
    assert tally.load == {(b0, "/a"): 6.0, (b0, "/b"): 2.0}
    assert tally.pick(state, i["a-0"], b0) == "/b"  # back to its home dir, which holds it exactly (4 of 4)
    assert tally.pick(state, i["g-0"], b0) == "/a"  # the roomiest holds it exactly (5 of 5)
    assert tally.pick(state, i["h-0"], b0) is None  # none holds 6
    state.move(i["h-0"], b1, b0)  # forced (placement, the solver): the roomiest, /a, 12 of its 10.5
    state.move(i["a-0"], b1, b0)  # home: /b
    tally = dir_tally(state)
    assert tally.load == {(b0, "/a"): 12.0, (b0, "/b"): 6.0}
    assert {k: d for k, d in tally.where.items() if k[1] == b0} == {
        (i["c-0"], b0): "/a", (i["f-0"], b0): "/b", (i["h-0"], b0): "/a", (i["a-0"], b0): "/b"}
    assert tally.pick(state, i["a-0"], b0) is None  # asked again: its home has 5.5 - 6 + 0.5 = 0 left for its 4


def test_a_dir_a_forced_arrival_filled_past_its_ceiling_sends_the_replica_nearest_its_excess_off_the_broker() -> None:
    # Broker 0: /a (limit 10.5) a-0 10, a-1 1: 11, above its limit, so its ceiling is the 11 it holds; /b (limit
    # 5.5) c-0 2, x-0 1. h-0 (4) is forced from broker 1 onto broker 0: neither dir has room for it (/a 0.5, /b 3),
    # the tally counts it in the roomiest, /b: 7, 1 byte above 5.5 and the half byte. Its replicas at least as large
    # as the excess, nearest first: x-0 (1, exactly the excess), c-0 (2), h-0 (4); x-0 goes to the least full broker
    # that takes it: brokers 1, 2 and 3 are all empty by then, so by index, broker 1. Then /b is within its ceiling.
    snap = dirs_cluster({0: [{"path": "/a", "total_bytes": 21}, {"path": "/b", "total_bytes": 11}],
                         1: [{"path": "/d", "total_bytes": 1000}], 2: [{"path": "/d", "total_bytes": 100}],
                         3: [{"path": "/d", "total_bytes": 1000}]},
                        [part("a", 0, [0], size_bytes=10, log_dirs=["/a"]), part("a", 1, [0], size_bytes=1, log_dirs=["/a"]),
                         part("c", 0, [0], size_bytes=2, log_dirs=["/b"]), part("h", 0, [1], size_bytes=4, log_dirs=["/d"]),
                         part("x", 0, [0], size_bytes=1, log_dirs=["/b"])])
    state = ClusterState(snap, PlanOptions(max_disk_usage=0.5))
    i, b0, b1 = index(state), state.index_of[0], state.index_of[1]
    state.move(i["h-0"], b1, b0)
    from kafka_rebalance.planner.goals.disk_capacity import dir_tally, dirs_within

    assert dir_tally(state).over((b0, "/b")) == 1.0 and not dirs_within(state)
    DiskCapacityGoal()._relieve_dirs(state)
    assert state.changes == [(i["h-0"], b1, b0), (i["x-0"], b0, b1)]
    assert dir_tally(state).over((b0, "/b")) == 0.0 and dirs_within(state)  # at its ceiling and slack: within
