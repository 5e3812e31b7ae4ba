"""Relief mode, ``plan --relieve`` (planner/relief.py; issue #40): only what brings every broker and log dir under
--max-disk-usage moves, fewest bytes first. Clusters built by hand; the fewest bytes are enumerated here.

Sizes in GiB. Every broker has 100 GiB of disk unless a case says otherwise, so its limit at 0.85 is 85 GiB.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from kafka_rebalance.errors import PlanError
from kafka_rebalance.options import PlanOptions
from kafka_rebalance.planner import make_plan, write_plan
from kafka_rebalance.planner.core import Plan
from kafka_rebalance.planner.relief import fewest_bytes
from kafka_rebalance.snapshot import Snapshot, snapshot_from_dict, write_snapshot
from kafka_rebalance.snapshot.capacity import CapacityMap
from kafka_rebalance.snapshot.model import Capacity
from kafka_rebalance.validation import validate_plan
from tests.support.clusters import part, snapshot

GIB = 1024**3
ROOT = Path(__file__).resolve().parents[2]
RACK = {0: "a", 1: "a", 2: "b", 3: "b", 4: "c", 5: "c"}
# Broker 0's replicas: 92 GiB on a 100 GiB disk, 7 GiB above its 85 GiB limit. The smallest replica that
# covers 7 GiB alone is the 8 GiB one; 5 + 2 and 5 + 1.5 + 0.5 are exactly 7 GiB, the fewest bytes there are.
HOT = [20, 15, 12, 10, 9, 8, 6, 5, 3, 2, 1.5, 0.5]
FEWEST = 7 * GIB


def six_brokers() -> Snapshot:
    """Six brokers over racks a, b, c (two each). Broker 0 at 92 %: RF 2 partitions, each with its other replica
    on broker 2..5 in turn (led by broker 0 every other one); single-replica fillers put brokers 1..5 at 84 %
    (broker 1: right under the limit), 60, 50, 70 and 45 %."""
    parts: list[dict[str, Any]] = []
    load = dict.fromkeys(range(6), 0.0)
    for i, size in enumerate(HOT):
        other = 2 + i % 4  # another rack than broker 0's: the cluster starts rack-safe
        replicas = [0, other] if i % 2 == 0 else [other, 0]
        parts.append({"topic": "hot", "partition": i, "replicas": replicas, "size_bytes": int(size * GIB)})
        for b in replicas:
            load[b] += size
    aim = {1: 84, 2: 60, 3: 50, 4: 70, 5: 45}
    n = 0
    for b, target in aim.items():
        while load[b] < target:  # single-replica fillers of up to 10 GiB
            size = min(10.0, target - load[b])
            parts.append({"topic": "fill", "partition": n, "replicas": [b], "size_bytes": int(size * GIB)})
            load[b] += size
            n += 1
    brokers = [{"id": b, "rack": RACK[b], "log_dirs": [{"path": f"/data/{b}", "total_bytes": 100 * GIB}]}
               for b in range(6)]
    rows = [{"leader": p["replicas"][0], "isr": list(p["replicas"]), **p} for p in parts]
    return snapshot_from_dict({"cluster_id": "relief", "captured_at": "2026-01-01T00:00:00Z", "brokers": brokers,
                               "partitions": rows})


def loads(snap: Snapshot) -> dict[int, float]:
    out = dict.fromkeys((b.id for b in snap.brokers), 0.0)
    for p in snap.partitions:
        for b in p.replicas:
            out[b] += float(p.size_bytes or 0)
    return out


def every_step(plan: Plan, snap: Snapshot) -> list[dict[int, float]]:
    """Each broker's bytes after each step's new replicas land (a broker receives before it sends), in plan order."""
    size = {(p.topic, p.partition): float(p.size_bytes or 0) for p in snap.partitions}
    now = loads(snap)
    seen = []
    for batch in plan.batches:
        for s in batch.steps:
            for b in s.adds:
                now[b] += size[(s.topic, s.partition)]
            seen.append(dict(now))
            for b in s.removes:
                now[b] -= size[(s.topic, s.partition)]
    seen.append(dict(now))
    return seen


def enumerated_fewest(sizes: list[float], need: float) -> float:
    """The fewest bytes of any subset of ``sizes`` reaching ``need``, by trying every subset."""
    return min(sum(c) for k in range(1, len(sizes) + 1) for c in combinations(sizes, k) if sum(c) >= need)


def test_the_cluster_is_the_issues() -> None:
    before = loads(six_brokers())
    assert {b: round(x / GIB, 1) for b, x in before.items()} == {0: 92.0, 1: 84.0, 2: 60.0, 3: 50.0, 4: 70.0, 5: 45.0}
    assert enumerated_fewest([s * GIB for s in HOT], 7 * GIB) == FEWEST


@pytest.mark.parametrize("optimizer", ["heuristic", "auto"])
def test_one_broker_at_92_percent_is_brought_under_85_by_the_fewest_bytes_and_nothing_else_moves(optimizer: str) -> None:
    snap = six_brokers()
    plan = make_plan(snap, PlanOptions(relieve=True, optimizer=optimizer))
    s = plan.summary
    assert [g["name"] for g in s["goals"]] == ["placement", "rack-safety", "disk-capacity"]  # no balancing goal
    assert s["bytes_moved"] <= 1.05 * FEWEST
    assert s["bytes_moved"] == FEWEST  # the grid's subset sum finds it; the exact model proves it under auto
    limit = 0.85 * 100 * GIB
    before = loads(snap)
    for step in every_step(plan, snap):  # no step takes a broker past its limit, or broker 0 above where it was
        assert all(x <= max(limit, before[b]) for b, x in step.items()), step
    after = {r["broker_id"]: r["size_bytes"] for r in s["projected"]}
    assert all(x <= limit for x in after.values()), after
    # Brokers under the limit send nothing; broker 0 receives nothing.
    senders = {b for batch in plan.batches for st in batch.steps for b in st.removes}
    receivers = {b for batch in plan.batches for st in batch.steps for b in st.adds}
    assert senders == {0} and 0 not in receivers
    # Nobody near the limit is a destination: broker 1 (84 %) takes nothing, every destination ends below 75 %.
    assert 1 not in receivers and all(after[b] <= 0.75 * 100 * GIB for b in receivers)
    # No leader changes but a moved leader's, no reorders, no elections.
    moved = {(st.topic, st.partition): st for batch in plan.batches for st in batch.steps}
    led_by_0 = sum(1 for (t, p), st in moved.items() if st.before[0] == 0 and st.leader == 0)
    assert (s["reorders"], s["leader_elections"]) == (0, 0)
    assert s["leader_changes"] == led_by_0
    # Without --relieve the same snapshot is balanced: several times the bytes.
    assert make_plan(snap, PlanOptions(optimizer=optimizer)).summary["bytes_moved"] > 3 * FEWEST


def test_a_relief_plan_passes_the_gate_which_reads_relief_mode_back(tmp_path: Path) -> None:
    snap = six_brokers()
    plan = make_plan(snap, PlanOptions(relieve=True))
    snapshot_path = write_snapshot(snap, tmp_path / "snap.json")
    manifest, _ = write_plan(plan, tmp_path / "plan", str(snapshot_path))
    assert manifest["options"]["relieve"] is True
    outcome = validate_plan(tmp_path / "plan", snapshot_path)
    assert outcome.status == "passed", outcome.report()


def test_the_pick_is_within_the_promise_of_the_fewest_bytes_on_every_small_case() -> None:
    # Heavy-tailed sizes, excesses from a sliver to half the broker: every pick against every subset.
    import random

    rng = random.Random(40)
    worst = 1.0
    for _ in range(300):
        sizes = [float(int(rng.paretovariate(1.2) * 100)) for _ in range(rng.randint(1, 12))]
        need = rng.uniform(0.01, 0.5) * sum(sizes)
        pick = fewest_bytes(sizes, sizes, need)
        assert pick is not None and sum(sizes[i] for i in pick) >= need
        worst = max(worst, sum(sizes[i] for i in pick) / enumerated_fewest(sizes, need))
    assert worst <= 1.05
    assert fewest_bytes([1.0, 2.0], [1.0, 2.0], 4.0) is None  # all of them fall short


def test_a_balanced_cluster_under_its_limits_gets_an_empty_relief() -> None:
    snap = six_brokers()
    plan = make_plan(snap, PlanOptions(relieve=True, max_disk_usage=0.95))
    assert (plan.summary["replica_moves"], plan.summary["leader_elections"], plan.summary["reorders"]) == (0, 0, 0)


def jbod(a_bytes: list[float], b_bytes: list[float]) -> Snapshot:
    """Broker 0: dirs /a and /b of 50 GiB each (limit 42.5 GiB each) holding single-replica partitions of the given
    sizes; brokers 1 and 2: one empty 100 GiB dir each."""
    brokers = [{"id": 0, "log_dirs": [{"path": "/a", "total_bytes": 50 * GIB}, {"path": "/b", "total_bytes": 50 * GIB}]},
               *({"id": b, "log_dirs": [{"path": f"/d{b}", "total_bytes": 100 * GIB}]} for b in (1, 2))]
    parts = [{"topic": d, "partition": i, "replicas": [0], "leader": 0, "isr": [0], "log_dirs": [f"/{d}"],
              "size_bytes": int(s * GIB)} for d, sizes in (("a", a_bytes), ("b", b_bytes)) for i, s in enumerate(sizes)]
    return snapshot_from_dict({"cluster_id": "jbod", "brokers": brokers, "partitions": parts})


def dirs_after(plan: Plan) -> dict[str, float]:
    return {d["path"]: d["after_bytes"] / GIB for d in plan.summary["log_dirs"]["dirs"]}


def test_a_full_log_dir_is_relieved_into_its_brokers_other_dir_without_network() -> None:
    # /a at 46 GiB (92 %), /b at 10 GiB: the broker (56 of 100 GiB) is under its limit, /a is 3.5 GiB above its
    # own. /b has room, so the fewest bytes go there (a copy within the broker: no network, no cross-broker bytes).
    a = [20, 12, 6, 3, 2.5, 1.5, 1]
    snap = jbod(a, [10])
    plan = make_plan(snap, PlanOptions(relieve=True))
    s = plan.summary
    assert (s["replica_moves"], s["bytes_moved"]) == (0, 0)
    assert s["log_dirs"]["bytes_between_dirs"] == enumerated_fewest([x * GIB for x in a], 3.5 * GIB) == 3.5 * GIB
    assert dirs_after(plan)["/a"] <= 42.5 and dirs_after(plan)["/b"] <= 42.5
    assert [b.kind for b in plan.batches] == ["log-dirs"]


def test_a_full_dir_whose_brother_has_too_little_room_sends_the_rest_off_the_broker() -> None:
    # /a at 46 GiB (3.5 GiB above), /b at 41 GiB (1.5 GiB of room): at least 2 GiB of /a's replicas leave broker 0.
    snap = jbod([20, 12, 6, 4, 2, 1.5, 0.5], [41])
    plan = make_plan(snap, PlanOptions(relieve=True))
    s = plan.summary
    assert s["bytes_moved"] == 2 * GIB  # the 2 GiB replica of /a, to broker 1 or 2
    assert dirs_after(plan)["/a"] <= 42.5 and dirs_after(plan)["/b"] <= 42.5
    assert s["log_dirs"]["bytes_between_dirs"] == 1.5 * GIB  # the rest within the broker


def test_limits_no_plan_can_meet_are_one_error_line_naming_the_broker() -> None:
    # Three brokers of 10 GiB (limit 8.5 GiB), 1 GiB replicas: broker 0 at 10 GiB, the others at 8: any replica
    # sent takes its receiver to 9 GiB.
    brokers = [{"id": b, "log_dirs": [{"path": "/d", "total_bytes": 10 * GIB}]} for b in range(3)]
    parts = [{"topic": f"t{b}", "partition": i, "replicas": [b], "leader": b, "isr": [b], "size_bytes": GIB}
             for b, n in ((0, 10), (1, 8), (2, 8)) for i in range(n)]
    snap = snapshot_from_dict({"cluster_id": "full", "brokers": brokers, "partitions": parts})
    with pytest.raises(PlanError) as err:
        make_plan(snap, PlanOptions(relieve=True, optimizer="heuristic"))
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("--relieve: broker 0: 10.0 GiB of partitions after the plan against its limit 8.5 GiB")
    assert "no eligible broker (or other log dir) can take enough of its replicas" in message


def test_network_in_relief_sends_the_fewest_bytes_whose_rates_bring_the_broker_under_its_band() -> None:
    # Four brokers, network in capacity 100 B/s each: shares of the 220 B/s are 55, the band's top 60.5. Broker 0
    # takes 130 B/s: p0 60 B/s in 10 GiB, p1 30 in 1 GiB, p2 30 in 2 GiB, p3 10 in 0.1 GiB; 69.5 B/s must go.
    # p0 + p3 (10.1 GiB) or p1 + p2 + p3 (3.1 GiB, each to its own broker at 30 B/s) cover it: the latter.
    parts = [part("t", 0, [0], rate=60.0, size=10 * GIB), part("t", 1, [0], rate=30.0, size=GIB),
             part("t", 2, [0], rate=30.0, size=2 * GIB), part("t", 3, [0], rate=10.0, size=GIB // 10),
             *(part("u", b, [b], rate=30.0, size=GIB) for b in (1, 2, 3))]
    snap = snapshot([0, 1, 2, 3], parts)
    caps = CapacityMap(Capacity(network_in_bytes_per_sec=100))
    plan = make_plan(snap, PlanOptions(relieve=True, goals=("network-in", "bytes"), capacity=caps,
                                       optimizer="heuristic"))  # fmt: skip
    s = plan.summary
    assert [g["name"] for g in s["goals"]] == ["placement", "rack-safety", "disk-capacity", "network-in"]  # no bytes
    assert s["bytes_moved"] == GIB + 2 * GIB + GIB // 10
    moved = {(st.topic, st.partition): st.after for batch in plan.batches for st in batch.steps}
    assert set(moved) == {("t", 1), ("t", 2), ("t", 3)}
    assert len({row[0] for row in moved.values()}) == 3  # each to its own broker: none past 60.5 B/s
    # Without capacities there is no network limit to relieve: nothing moves.
    assert make_plan(snap, PlanOptions(relieve=True, goals=("network-in",))).summary["replica_moves"] == 0


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'plugins'}{os.pathsep}{ROOT}"}
    return subprocess.run([sys.executable, "-m", "kafka_rebalance.cli", *args], capture_output=True, text=True, env=env,
                          timeout=120)  # fmt: skip


def test_plan_relieve_on_the_command_line(tmp_path: Path) -> None:
    path = write_snapshot(six_brokers(), tmp_path / "snap.json")
    done = cli("plan", "--snapshot", str(path), "--out", str(tmp_path / "plan"), "--relieve", "--optimizer", "heuristic")
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "plan" / "plan.json").read_text())
    assert manifest["options"]["relieve"] is True and manifest["options"]["max_disk_usage"] == 0.85
    assert manifest["summary"]["bytes_moved"] == FEWEST
    assert [g["name"] for g in manifest["summary"]["goals"]] == ["placement", "rack-safety", "disk-capacity"]
    disk = manifest["summary"]["goals"][2]
    assert (disk["before"]["offenders"], disk["after"]["offenders"], disk["reached"]) == ([0], [], True)
    refused = cli("plan", "--snapshot", str(path), "--out", str(tmp_path / "none"), "--relieve", "--max-disk-usage", "0.5")
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "--relieve: broker 0: " in refused.stderr
    assert not (tmp_path / "none").exists()
