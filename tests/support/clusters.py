"""Hand-built clusters for tests: partitions, brokers, snapshot dicts and Snapshots, and named clusters
small enough to compute by hand."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_rebalance.snapshot import Snapshot, snapshot_from_dict, write_snapshot

if TYPE_CHECKING:
    from kafka_rebalance.options import PlanOptions

GiB = 1024**3
MiB = 1024**2


def part(topic: str, partition: int, replicas: list[int], leader: int | None = None, isr: list[int] | None = None,
         size: int | None = None, rate: float | None = None, **fields: Any) -> dict[str, Any]:
    """One partition row: led by its first replica with a full ISR unless told otherwise; a size and a
    produce rate only when given (``fields`` may also name ``size_bytes`` directly)."""
    row: dict[str, Any] = {"topic": topic, "partition": partition, "replicas": replicas,
                           "leader": replicas[0] if leader is None else leader,
                           "isr": list(replicas) if isr is None else isr}
    if size is not None:
        row["size_bytes"] = size
    if rate is not None:
        row["bytes_in_per_sec"] = rate
    return {**row, **fields}


def brokers(*ids: int, racks: list[str] | None = None, dead: tuple[int, ...] = ()) -> list[dict[str, Any]]:
    return [{"id": b, "rack": racks[i] if racks else None, "alive": b not in dead} for i, b in enumerate(ids)]


def cluster(cluster_id: str, brokers: list[dict[str, Any]], partitions: list[dict[str, Any]],
            configs: dict[str, str] | None = None) -> dict[str, Any]:
    """A snapshot as a dict (what the analysis reads from a file)."""
    return {"cluster_id": cluster_id, "controller": "kraft", "configs": configs or {},
            "brokers": brokers, "partitions": partitions}


def snapshot(brokers: list[Any], partitions: list[dict[str, Any]], cluster_id: str = "test") -> Snapshot:
    """A Snapshot for the planner. brokers: ids, or (id, rack) / (id, rack, alive) tuples; partitions are
    dicts with at least topic/partition/replicas, led by their first replica with a full ISR and 1 GiB
    unless they say otherwise."""
    bl = []
    for b in brokers:
        if isinstance(b, int):
            bl.append({"id": b})
        else:
            bid, rack, *rest = b
            bl.append({"id": bid, "rack": rack, "alive": rest[0] if rest else True})
    parts = [{"leader": p["replicas"][0], "isr": list(p["replicas"]), "size_bytes": GiB, **p} for p in partitions]
    return snapshot_from_dict(
        {"cluster_id": cluster_id, "captured_at": "2026-01-01T00:00:00Z", "brokers": bl, "partitions": parts}
    )


def write(raw: dict[str, Any], path: Path) -> Path:
    """Write a hand-built cluster as JSON or Parquet (by suffix), through the strict loader."""
    return write_snapshot(snapshot_from_dict(raw, str(path)), path)


def thresholds_cluster(cluster_id: str = "thresholds", configs: dict[str, str] | None = None) -> dict[str, Any]:
    """Broker 0: 1 of 10 preferred not led (exactly 10 %); broker 1: 1 of 9 (11.1 %);
    broker 2: 1 of 4, that one with no leader and an empty ISR (25 %); broker 3: no
    preferred partitions, but a follower of all 23."""
    parts = [part("t0", i, [0, 3], 3 if i == 9 else 0, size=100, rate=1.5) for i in range(10)]
    parts += [part("t1", i, [1, 3], 3 if i == 8 else 1, size=200, rate=2.0) for i in range(9)]
    parts += [part("t2", i, [2, 3], -1 if i == 3 else 2, isr=[] if i == 3 else None, size=300, rate=0.25)
              for i in range(4)]
    return cluster(cluster_id, brokers(0, 1, 2, 3), parts, configs)


def dead_broker_cluster(cluster_id: str = "dead-broker") -> dict[str, Any]:
    """Broker 2 is dead; its two preferred partitions are led elsewhere."""
    return cluster(cluster_id, brokers(0, 1, 2, racks=["a", "b", "c"], dead=(2,)), [
        part("p", 0, [2, 0], 0, isr=[0], size=10),
        part("p", 1, [0, 1], 0, size=20),
        part("p", 2, [1, 2], 1, isr=[1], size=30),
        part("p", 3, [2, 1], 1, isr=[1], size=40),
    ])


def rack_cluster(cluster_id: str = "racks") -> dict[str, Any]:
    """Two racks: [0,1] and [2,3] put both replicas in one rack (violations); [0,2] is fine;
    RF 3 > 2 racks cannot be spread, so [0,2,1] is no violation; RF 1 never is."""
    return cluster(cluster_id, brokers(0, 1, 2, 3, racks=["r1", "r1", "r2", "r2"]), [
        part("a", 0, [0, 1], 0), part("a", 1, [0, 2], 0), part("a", 2, [2, 3], 2),
        part("b", 0, [0, 2, 1], 0), part("c", 0, [3], 3),
    ])




def fleet_member(i: int) -> dict[str, Any]:
    """Cluster i of a 100-cluster fleet. Round-robin placement over 6 brokers in 3 racks makes
    every cluster balanced by construction (30 replicas, 10 preferred partitions and equal bytes
    per broker); i % 4 == 0 then moves leadership of 2 of broker (i % 6)'s 10 preferred partitions
    (20 % > the default 10 %), and i % 4 == 1 makes one partition 100x bigger (bytes skewed)."""
    kind = ("leaders", "bytes", "even", "even")[i % 4]
    parts = []
    for p in range(60):
        reps = [(p + j) % 6 for j in range(3)]
        leader = reps[1] if kind == "leaders" and reps[0] == i % 6 and p < 12 else reps[0]
        size = 100_000 if kind == "bytes" and p == 0 else 1_000
        parts.append(part(f"t{p % 5}", p // 5, reps, leader, size=size))
    return cluster(f"fleet-{i:03d}", brokers(*range(6), racks=[f"r{b % 3}" for b in range(6)]), parts)


def long_replicas_cluster(cluster_id: str = "long") -> dict[str, Any]:
    """Replica lists longer than the analysis' unrolled checks. Five racks; brokers 0 and 5 share r0.
    Violations: [5, 1, 2, 3, 0] (RF 5, two in r0) and [0, 5] (RF 2); [0..4] is spread, and RF 6
    exceeds the 5 racks, so [0..5] is no violation."""
    return cluster(cluster_id, brokers(0, 1, 2, 3, 4, 5, racks=["r0", "r1", "r2", "r3", "r4", "r0"]), [
        part("a", 0, [0, 1, 2, 3, 4], 0), part("a", 1, [5, 1, 2, 3, 0], 5), part("a", 2, [1, 2, 3, 4, 5], 1),
        part("b", 0, [0, 1, 2, 3, 4, 5], 0), part("c", 0, [0, 5], 0),
    ])


def planner_state(brokers: list[Any], partitions: list[dict[str, Any]], targets: bool = False, **options: Any):
    """The planner's ClusterState of a hand-built snapshot (see ``snapshot``), with ``PlanOptions(**options)``;
    ``targets``: with the per-broker targets set, as the planner sets them before its goals run."""
    from kafka_rebalance.planner import PlanOptions
    from kafka_rebalance.planner.state import ClusterState
    from kafka_rebalance.planner.targets import set_targets

    state = ClusterState(snapshot(brokers, partitions), PlanOptions(**options))
    if targets:
        set_targets(state)
    return state


def pareto_decommission(seed: int, partitions: int = 240, cluster_id: str = "pareto-decommission") -> Snapshot:
    """12 brokers in 3 racks (broker b in rack "r{b % 3}"), ``partitions`` partitions of RF 3, each with
    one replica in every rack on a broker drawn uniformly from it, sized (Pareto(1.3) + 1) x 32 MiB, a
    heavy tail (mean about 139 MiB, the largest hundreds of times the smallest). Plan it with brokers 9,
    10 and 11 (one per rack) decommissioned."""
    import numpy as np

    rng = np.random.default_rng(seed)
    parts = []
    for i in range(partitions):
        size = int((rng.pareto(1.3) + 1.0) * 32 * 2**20)
        row = [int(3 * rng.integers(0, 4) + r) for r in rng.permutation(3)]
        parts.append(part(f"t{i % 8}", i // 8, row, size_bytes=size))
    return snapshot([(b, f"r{b % 3}") for b in range(12)], parts, cluster_id)


def drawn_cluster(seed: int, big: bool = False) -> tuple[Snapshot, PlanOptions]:
    """A small cluster drawn from ``seed``: brokers with racks or none, one to three log dirs each with or without a
    size, topics piled onto some brokers, sizes that tie, hot and leaderless partitions, and options that decommission,
    remove a log dir, tighten the disks or raise the replication factor. ``big``: few brokers holding hundreds of
    partitions each, more than a swap reads (``SEARCH``)."""
    import random

    from kafka_rebalance.options import PlanOptions

    rng = random.Random(seed)
    n = 4 if big else rng.randint(3, 9)
    racks = rng.choice([0, 2] if big else [0, 2, 3])
    dirs = {b: rng.choice([1, 2, 2, 3]) for b in range(n)}
    rf = rng.randint(1, min(3, n))
    piled = rng.sample(range(n), max(rf, n // 2))
    parts, load = [], [dict.fromkeys(range(dirs[b]), 0) for b in range(n)]
    for t in range(rng.randint(6, 10) if big else rng.randint(1, 5)):
        for i in range(rng.randint(20, 40) if big else rng.randint(2, 14)):
            replicas = rng.sample(piled if rng.random() < 0.7 else list(range(n)), rf)
            size = rng.choice([0, 1, 2, 5, 10, 10, 40]) * MiB + rng.choice([0, 0, rng.randint(1, 999)])
            where = [rng.randrange(dirs[b]) for b in replicas]
            for b, d in zip(replicas, where):
                load[b][d] += size
            parts.append({"topic": f"t{t}", "partition": i, "replicas": replicas, "isr": list(replicas),
                          "leader": -1 if rng.random() < 0.05 else replicas[0], "size_bytes": size,
                          "bytes_in_per_sec": 1e9 if rng.random() < 0.05 else rng.random() * 1e5,
                          "log_dirs": [f"/d{d}" for d in where]})  # fmt: skip
    scale = rng.choice([None, 1.2, 2.0, 4.0])
    brokers = [{"id": b, "rack": f"r{b % racks}" if racks else None,
                "log_dirs": [{"path": f"/d{d}", "total_bytes": None if scale is None else int(max(used, 64 * MiB) * scale)}
                             for d, used in load[b].items()]} for b in range(n)]  # fmt: skip
    options: dict[str, Any] = {"goals": ("replica-count", "bytes", "topic-spread")}
    if big:  # (what a plan of four brokers can always meet)
        return snapshot_from_dict({"cluster_id": f"drawn-{seed}", "brokers": brokers, "partitions": parts}), \
            PlanOptions(**options)
    if rng.random() < 0.25:
        options["decommission_brokers"] = (rng.randrange(n),)
    if rng.random() < 0.25 and dirs[0] > 1:
        options["remove_log_dirs"] = ("0:/d0",)
    if rng.random() < 0.25:
        options["max_disk_usage"] = rng.choice([0.6, 0.8])
    if rng.random() < 0.15 and n > rf:
        options["replication_factor"] = rf + 1
    return snapshot_from_dict({"cluster_id": f"drawn-{seed}", "brokers": brokers, "partitions": parts}), \
        PlanOptions(**options)


def state_before(snap: Snapshot, options: Any, name: str) -> Any:
    """The planner's ClusterState as the goal ``name`` receives it: targets set and every replica goal before it
    optimised, in order, each then vetoing (as ``core._balance`` runs them)."""
    from kafka_rebalance.planner.goals.registry import goal_class, selected
    from kafka_rebalance.planner.state import ClusterState
    from kafka_rebalance.planner.targets import set_targets

    state = ClusterState(snap, options)
    set_targets(state)
    goals = [goal_class(n)() for n in selected(options.goals) if not goal_class(n).leader_goal]
    state.vetoes = [g for g in goals if g.hard]
    for goal in goals:
        if goal.name == name:
            break
        if not (goal.hard or goal.count_goal) and state.move_cap is None:
            state.cap_moves()
        goal.optimize(state)
        if goal not in state.vetoes:
            state.vetoes.append(goal)
    return state


def indexes(state: Any) -> dict[int, tuple[Any, ...]]:
    """Every donor index of ``state``, as lists."""
    return {b: (idx.parts, idx.sizes, idx.side_parts, idx.side_sizes, idx.fed, sorted(idx.parked))
            for b, idx in sorted(state.donor_indexes.items())}


def same_state(a: Any, b: Any, cur_order: bool = True) -> bool:
    """Everything ``ClusterState.move`` keeps, alike (``move_all`` replays the kernel's moves at once). ``cur_order``:
    the changed rows in the same order too (no plan reads it: where a partition put back as it was moves again, the
    Python moves list it last and ``move_all`` where it was)."""
    cur = list(a.cur.items()) == list(b.cur.items()) if cur_order else a.cur == b.cur
    return (a.changes == b.changes and a.arrivals == b.arrivals and cur
            and a.now.tolist() == b.now.tolist() and a.counts.tolist() == b.counts.tolist()
            and a.bytes.tolist() == b.bytes.tolist() and a.touched.tolist() == b.touched.tolist()
            and (a.moved_replicas(), a.moved_bytes()) == (b.moved_replicas(), b.moved_bytes()))


def python_veto() -> Any:
    """A goal with a veto of its own that no kernel reads (it accepts every move): with it in force the compiled goals
    run their Python methods."""
    from kafka_rebalance.planner.goals.base import Goal

    class PythonVeto(Goal):
        def accept_move(self, state: Any, p: int, src: int, dst: int) -> bool:
            return True

    return PythonVeto()


def searched_before(state: Any) -> bool:
    """Every eligible broker's donor index searched once as an earlier goal would (nothing taken: touched replicas set
    aside to the side list, replicas at the move cap parked); whether any index now holds such entries."""
    from kafka_rebalance.planner.goals.base import donor_index

    for b in state.eligible_idx:
        donor_index(state, b).find(0.0, lambda p: False, 4)
        donor_index(state, b).find(0.0, lambda p: False, 4, allow_touched=True)
    return any(idx.side_parts or idx.parked for idx in state.donor_indexes.values())
