"""No step of any plan fills a broker or a log dir past --max-disk-usage (issue #40).

Kafka copies a new replica before it deletes the old one, so a broker that both receives and sends holds
both while its moves run. The disk-capacity goal holds each broker under its limit after the plan; this
test holds every plan of the corpus to it at every step, in both execution modes, from the plan's own
files (plan.json's batches, each batch's reassignment and rollback, schedule.json) and the snapshot:

* batches run one after another, the steps of a batch side by side: for every batch, each broker's
  bytes at the batch's start plus every replica the batch brings it is within its limit, and likewise
  for each log dir (a replica moving between the dirs of its broker arrives in the one it names);
* the continuous schedule starts steps as capacity frees: at every start, each broker holds its bytes
  before the plan, plus every replica whose step has started, less every replica whose step has ended.

A broker's ceiling is its limit, or its bytes after the whole plan where the plan leaves it above its limit
(placement forced more onto it than its disk holds; the disk-capacity goal must then say it is unreached,
naming the broker): no step takes a broker beyond the larger of the two. A log dir's ceiling is its limit, or
its bytes before the plan where it started above (it may end no fuller than it started): where placement
forces a replica onto a broker none of whose dirs can hold it, the plan refuses in one line naming the dir.

The capacities are the test's: each broker's disk is its bytes before the plan / 0.80, scaled by a factor
in 0.95..1.5 drawn from its position (an empty broker takes the mean's), every third broker's disk split
over two log dirs. At 0.85 the fullest brokers start a few percent under their limit, so a broker that
receives before it sends goes over it.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from dataclasses import replace
from functools import cache
from typing import Any

import numpy as np
import pytest

from kafka_rebalance.errors import PlanError
from kafka_rebalance.planner import PlanOptions, make_plan
from kafka_rebalance.planner.batching import make_batches, order_key
from kafka_rebalance.planner.files import render
from kafka_rebalance.planner.goals.disk_capacity import disk_room
from kafka_rebalance.planner.peaks import DiskRoom
from kafka_rebalance.planner.schedule import Dispatcher, simulate
from kafka_rebalance.planner.state import ClusterState
from kafka_rebalance.planner.steps import Step
from kafka_rebalance.snapshot import Snapshot
from kafka_rebalance.snapshot.model import Capacity, LogDir
from kafka_rebalance.testing import corpus

MIB = 1024**2
MAX_USAGE = 0.85
START_FILL = 0.80
DIRS = ("/data/a", "/data/b")
SLACK = 1.0  # bytes: a broker at its limit to the byte is within it

# Small and medium members (the ones the corpus test plans); planned with the heuristic, a few seconds in all.
# (tiny-3b-rf3 moves nothing, one-broker-rack-rf4 cannot be planned, decom25-uneven-16b costs 7 s alone.)
MEMBERS = [n for n in corpus.small_members(40, 2_000) if n not in ("tiny-3b-rf3", "one-broker-rack-rf4", "decom25-uneven-16b")]

# And random draws of the corpus' features (corpus.draw), small: 20 of them cost about 2 s.
DRAWS = [f"draw-{seed}" for seed in range(20)]

# Plans that must refuse: decommissioning three of twelve brokers (or replacing a dead one) leaves some replica
# no broker with a dir that holds it (every other broker is at its limit, or the replica is larger than any dir
# of the broker placement must put it on). test_a_replica_no_log_dir_can_hold_stops_the_plan_in_one_line checks
# each refusal against the test's own limits.
REFUSED = ("pareto-12b-433-decom25", "draw-5", "draw-7", "draw-10", "draw-13", "draw-15")
PLANNED = [n for n in MEMBERS + DRAWS if n not in REFUSED]

Key = tuple[str, int]


def with_disks(snapshot: Snapshot) -> Snapshot:
    """``snapshot`` with the test's disks: see the module's docstring."""
    data: dict[int, float] = defaultdict(float)
    for p in snapshot.partitions:
        for b in p.replicas:
            data[b] += p.size_bytes or 0
    mean = sum(data.values()) / max(1, sum(1 for v in data.values() if v))
    rng = np.random.default_rng([40, len(snapshot.brokers), len(snapshot.partitions)])
    factors = rng.uniform(0.95, 1.5, size=len(snapshot.brokers))
    jbod = {b.id for i, b in enumerate(snapshot.brokers) if i % 3 == 0}
    # Each JBOD broker's replicas alternate between its dirs (in partition order), each dir sized the same way.
    dir_of: dict[tuple[Key, int], str] = {}
    dir_data: dict[tuple[int, str], float] = defaultdict(float)
    turn: dict[int, int] = defaultdict(int)
    for p in snapshot.partitions:
        for b in p.replicas:
            if b in jbod:
                d = DIRS[turn[b] % 2]
                turn[b] += 1
                dir_of[((p.topic, p.partition), b)] = d
                dir_data[(b, d)] += p.size_bytes or 0
    brokers = []
    for i, b in enumerate(snapshot.brokers):
        f = float(factors[i])
        if b.id in jbod:
            dirs = tuple(LogDir(d, int(max(dir_data[(b.id, d)], mean / 2) / START_FILL * f)) for d in DIRS)
            total = sum(d.total_bytes or 0 for d in dirs)
            brokers.append(replace(b, log_dirs=dirs, capacity=Capacity(disk_bytes=total)))
        else:
            brokers.append(replace(b, capacity=Capacity(disk_bytes=int((data[b.id] or mean) / START_FILL * f))))
    parts = tuple(replace(p, log_dirs=tuple(dir_of.get(((p.topic, p.partition), b)) for b in p.replicas))
                  if any(b in jbod for b in p.replicas) else p for p in snapshot.partitions)
    return replace(snapshot, brokers=tuple(brokers), partitions=parts)


def member(name: str) -> tuple[Snapshot, PlanOptions]:
    """The member (or draw) with the test's disks, and the options it is planned with."""
    if name.startswith("draw-"):
        snapshot, options = corpus.draw(int(name.removeprefix("draw-")), max_brokers=12, max_partitions=240)
    else:
        snapshot, options = corpus.member(name)
    return with_disks(snapshot), PlanOptions(optimizer="heuristic", max_disk_usage=MAX_USAGE, **options)


@cache
def planned(name: str) -> tuple[Snapshot, dict[str, Any]]:
    """The member with the test's disks and its plan directory's files (relative path -> parsed JSON)."""
    snapshot, options = member(name)
    plan = make_plan(snapshot, options)
    files, _ = render(plan, "snapshot.json")
    return snapshot, {path: json.loads(data) for path, data in files.items() if path.endswith(".json")}


def limits(snapshot: Snapshot) -> tuple[dict[int, float], dict[tuple[int, str], float]]:
    """Each broker's and each log dir's limit: max_disk_usage of its disk (the test gives no usable figures, so
    nothing besides the partitions counts)."""
    broker = {b.id: MAX_USAGE * (sum(d.total_bytes or 0 for d in b.log_dirs) if b.log_dirs else b.capacity.disk_bytes)
              for b in snapshot.brokers if b.capacity is not None and b.capacity.disk_bytes is not None}
    dirs = {(b.id, d.path): MAX_USAGE * (d.total_bytes or 0) for b in snapshot.brokers for d in b.log_dirs}
    return broker, dirs


class Disks:
    """Bytes per broker and per log dir, replica by replica, as the plan's steps run."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.size = {(p.topic, p.partition): p.size_bytes or 0 for p in snapshot.partitions}
        self.broker: dict[int, float] = defaultdict(float)
        self.dir: dict[tuple[int, str], float] = defaultdict(float)
        self.where: dict[tuple[Key, int], str | None] = {}  # (partition, broker) -> its dir (None: one-dir broker)
        self.jbod = {b.id for b in snapshot.brokers if len(b.log_dirs) > 1}
        for p in snapshot.partitions:
            key = (p.topic, p.partition)
            for i, b in enumerate(p.replicas):
                d = p.log_dirs[i] if p.log_dirs else None
                self.arrive(key, b, d)

    def arrive(self, key: Key, b: int, d: str | None) -> None:
        self.broker[b] += self.size[key]
        self.where[(key, b)] = d
        if d is not None:
            self.dir[(b, d)] += self.size[key]

    def leave(self, key: Key, b: int) -> None:
        self.broker[b] -= self.size[key]
        d = self.where.pop((key, b))
        if d is not None:
            self.dir[(b, d)] -= self.size[key]

    def shift(self, key: Key, b: int, d: str) -> None:
        """Replica ``key`` moved from its dir on broker ``b`` to dir ``d`` of the same broker."""
        old = self.where[(key, b)]
        if old is not None:
            self.dir[(b, old)] -= self.size[key]
        self.dir[(b, d)] += self.size[key]
        self.where[(key, b)] = d


def final_bytes(snapshot: Snapshot, files: dict[str, Any]) -> dict[int, float]:
    """Each broker's bytes after every batch."""
    rows = {(p.topic, p.partition): list(p.replicas) for p in snapshot.partitions}
    for row in files["plan.json"]["batches"]:
        for e in files[f"batches/{row['id']}/reassignment.json"]["partitions"]:
            rows[(e["topic"], e["partition"])] = e["replicas"]
    size = {(p.topic, p.partition): p.size_bytes or 0 for p in snapshot.partitions}
    out: dict[int, float] = defaultdict(float)
    for key, replicas in rows.items():
        for b in replicas:
            out[b] += size[key]
    return out


def batch_sides(files: dict[str, Any], row: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[Key, list[int]]]:
    """A batch's entries (reassignment.json) and each partition's replicas before it (rollback.json)."""
    after = files[f"batches/{row['id']}/reassignment.json"]["partitions"]
    before = {(e["topic"], e["partition"]): e["replicas"] for e in files[f"batches/{row['id']}/rollback.json"]["partitions"]}
    return after, before


def batch_ends(disks: Disks, after: list[dict[str, Any]], before: dict[Key, list[int]]) -> None:
    """A batch ended: every replica it moved is where it names, the ones it replaced are gone."""
    for e in after:
        key = (e["topic"], e["partition"])
        for b, d in zip(e["replicas"], e["log_dirs"]):
            named = None if d == "any" else d
            if b not in before[key]:
                disks.arrive(key, b, named)
            elif named is not None and named != disks.where[(key, b)]:
                disks.shift(key, b, named)
        for b in before[key]:
            if b not in e["replicas"]:
                disks.leave(key, b)


def ceilings(snapshot: Snapshot, files: dict[str, Any]) -> tuple[dict[int, float], dict[tuple[int, str], float]]:
    """Each broker's and each log dir's ceiling. A broker's: its limit, or its bytes after the whole plan where the
    plan leaves it above (the disk-capacity goal then says it is unreached, naming it). A dir's: its limit, or its
    bytes before the plan where it started above (summary.log_dirs.over_limit lists it if it ends above its limit)."""
    broker_limit, dir_limit = limits(snapshot)
    final = final_bytes(snapshot, files)
    above = sorted(b for b, lim in broker_limit.items() if final[b] > lim + SLACK)
    if above:
        goal = next(g for g in files["plan.json"]["summary"]["goals"] if g["name"] == "disk-capacity")
        assert not goal["reached"] and goal["after"]["offenders"] == above
    start = dict(Disks(snapshot).dir)
    disks = Disks(snapshot)
    for row in files["plan.json"]["batches"]:
        batch_ends(disks, *batch_sides(files, row))
    over = [k for k, lim in sorted(dir_limit.items()) if disks.dir[k] > lim + SLACK]
    listed = files["plan.json"]["summary"].get("log_dirs", {}).get("over_limit", [])
    assert [line.split(":")[0] for line in listed] == [f"broker {b} log dir {d}" for b, d in over]
    ceiling = {k: max(lim, start.get(k, 0.0)) for k, lim in dir_limit.items()}
    assert [k for k in over if disks.dir[k] > ceiling[k] + SLACK] == [], "a dir ends fuller than its ceiling"
    return {b: max(lim, final[b]) for b, lim in broker_limit.items()}, ceiling


def batch_peaks(snapshot: Snapshot, files: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Every broker and log dir that a batch takes over its ceiling (bytes at the batch's start plus every
    arrival), and every new replica on a broker with several dirs that the plan puts in no named dir."""
    broker_limit, dir_limit = ceilings(snapshot, files)
    disks = Disks(snapshot)
    over: list[str] = []
    unnamed: list[str] = []
    for row in files["plan.json"]["batches"]:
        after, before = batch_sides(files, row)
        peak_b = dict(disks.broker)
        peak_d = dict(disks.dir)
        for e in after:
            key = (e["topic"], e["partition"])
            for b, d in zip(e["replicas"], e["log_dirs"]):
                named = None if d == "any" else d
                if b not in before[key]:  # a new replica on b
                    if named is None and b in disks.jbod:
                        unnamed.append(f"batch {row['id']}: {key[0]}-{key[1]} lands on broker {b} in no named dir")
                    peak_b[b] = peak_b.get(b, 0.0) + disks.size[key]
                    if named is not None:
                        peak_d[(b, named)] = peak_d.get((b, named), 0.0) + disks.size[key]
                elif named is not None and named != disks.where[(key, b)]:  # between the dirs of b
                    peak_b[b] = peak_b.get(b, 0.0) + disks.size[key]
                    peak_d[(b, named)] = peak_d.get((b, named), 0.0) + disks.size[key]
        for b, v in sorted(peak_b.items()):
            if b in broker_limit and v > broker_limit[b] + SLACK:
                over.append(f"batch {row['id']} ({row['kind']}): broker {b} at {v:,.0f} > {broker_limit[b]:,.0f}")
        for k, v in sorted(peak_d.items()):
            if k in dir_limit and v > dir_limit[k] + SLACK:
                over.append(f"batch {row['id']} ({row['kind']}): dir {k} at {v:,.0f} > {dir_limit[k]:,.0f}")
        batch_ends(disks, after, before)
    return over, unnamed


def schedule_peaks(snapshot: Snapshot, files: dict[str, Any]) -> list[str]:
    """Every broker and log dir a start of the continuous schedule takes over its ceiling: bytes as the batches
    that run before it leave them (reorders, moves between dirs) + replicas whose steps have started - replicas
    whose steps have ended by then (an end and a start at the same simulated time: the end first, as the
    dispatcher starts what a completion frees). A new replica is in the dir its batch's reassignment names."""
    broker_limit, dir_limit = ceilings(snapshot, files)
    disks = Disks(snapshot)
    named: dict[tuple[str, Key], list[str]] = {}
    for row in files["plan.json"]["batches"]:
        after, before = batch_sides(files, row)
        if row["kind"] != "move":
            batch_ends(disks, after, before)
        named.update({(row["id"], (e["topic"], e["partition"])): e["log_dirs"] for e in after})
    steps = files["schedule.json"]["steps"]
    ends = sorted(steps, key=lambda s: (s["estimated_end_s"], s["id"]))
    starts = sorted(steps, key=lambda s: (s["estimated_start_s"], s["id"]))
    over: list[str] = []
    e = 0
    for s in starts:
        t = s["estimated_start_s"]
        while e < len(ends) and ends[e]["estimated_end_s"] <= t:
            key = (ends[e]["topic"], ends[e]["partition"])
            for b in ends[e]["removes"]:
                disks.leave(key, b)
            e += 1
        key = (s["topic"], s["partition"])
        # The dir each leaving replica is in, as the executor's ledger frees it at the step's end.
        sources = s.get("sources") or ["any"] * len(s["before"])
        for b, d in zip(s["before"], sources):
            known = disks.where[(key, b)]
            if (d != "any" or b in s["removes"]) and d != (known or "any"):
                over.append(f"step {s['id']} ({s['topic']}-{s['partition']}): replica on broker {b} in {known}, sources "
                            f"say {d}")
        for b, d in zip(s["replicas"], named[(s["batch"], key)]):
            if b not in s["adds"]:
                continue
            disks.arrive(key, b, None if d == "any" else d)
            if b in broker_limit and disks.broker[b] > broker_limit[b] + SLACK:
                over.append(f"step {s['id']} ({s['topic']}-{s['partition']}) at {t} s: broker {b} at "
                            f"{disks.broker[b]:,.0f} > {broker_limit[b]:,.0f}")
            k = (b, d)
            if k in dir_limit and disks.dir[k] > dir_limit[k] + SLACK:
                over.append(f"step {s['id']} ({s['topic']}-{s['partition']}) at {t} s: dir {k} at "
                            f"{disks.dir[k]:,.0f} > {dir_limit[k]:,.0f}")
    return over


@pytest.mark.parametrize("name", PLANNED)
def test_no_batch_takes_a_broker_or_a_log_dir_over_its_limit(name: str) -> None:
    snapshot, files = planned(name)
    if name in MEMBERS:
        assert any(row["kind"] == "move" for row in files["plan.json"]["batches"]), f"{name}: nothing moves, nothing tested"
    assert batch_peaks(snapshot, files)[0] == []


@pytest.mark.parametrize("name", PLANNED)
def test_no_start_of_the_continuous_schedule_takes_a_broker_or_a_log_dir_over_its_limit(name: str) -> None:
    snapshot, files = planned(name)
    if name in MEMBERS:
        assert files["schedule.json"]["steps"]
    assert schedule_peaks(snapshot, files) == []
    # What the executor's dispatcher holds each broker to (under the plan hash): its bytes and its ceiling.
    ceiling, _ = ceilings(snapshot, files)
    start = Disks(snapshot).broker
    assert files["schedule.json"]["disk_room"] == {str(b): {"bytes": round(start[b]), "limit_bytes": round(ceiling[b])}
                                                   for b in sorted(ceiling)}
    # ... and each log dir (dir_room): its bytes as the log-dir batches leave them, and its limit, or its bytes after
    # the plan where it ends above (a dir that started above may end no fuller than it started).
    _, dir_limits = limits(snapshot)
    disks = Disks(snapshot)
    for row in files["plan.json"]["batches"]:
        if row["kind"] != "move":
            batch_ends(disks, *batch_sides(files, row))
    before_moves = dict(disks.dir)
    for row in files["plan.json"]["batches"]:
        if row["kind"] == "move":
            batch_ends(disks, *batch_sides(files, row))
    want: dict[str, dict[str, dict[str, int]]] = {}
    for (b, d), lim in sorted(dir_limits.items()):
        want.setdefault(str(b), {})[d] = {"bytes": round(before_moves.get((b, d), 0.0)),
                                          "limit_bytes": round(max(lim, disks.dir[(b, d)]))}
    assert files["schedule.json"].get("dir_room", {}) == want


@pytest.mark.parametrize("name", PLANNED)
def test_every_new_replica_on_a_broker_with_several_log_dirs_lands_in_a_named_dir(name: str) -> None:
    snapshot, files = planned(name)
    assert batch_peaks(snapshot, files)[1] == []
    assert files["plan.json"]["summary"].get("log_dirs", {}).get("unplaced", []) == []


@pytest.mark.parametrize("name", REFUSED)
def test_a_replica_no_log_dir_can_hold_stops_the_plan_in_one_line(name: str) -> None:
    snapshot, options = member(name)
    with pytest.raises(PlanError) as refused:
        make_plan(snapshot, options)
    message = str(refused.value)
    assert "\n" not in message
    got = re.fullmatch(r"broker (\d+) log dir (\S+): ([\d,]+) bytes of partitions after the plan against its limit "
                       r"([\d,]+): no log dir of broker \1 holds (\S+) \(([\d,]+) bytes\), which the replica goals put there; .+",
                       message)
    assert got is not None, message
    b, d = int(got[1]), got[2]
    held, limit, size = (int(got[i].replace(",", "")) for i in (3, 4, 6))
    # The dir and its limit as the test computes them (or its bytes before the plan, had it started above).
    _, dir_limits = limits(snapshot)
    start = Disks(snapshot).dir.get((b, d), 0.0)
    assert limit == round(max(dir_limits[(b, d)], start))
    assert held > limit + SLACK and 0 < size <= held
    sizes = {p.name: p.size_bytes for p in snapshot.partitions}
    assert sizes[got[5]] == size


# ------------------------------------------------------------------------------------------------ worked by hand

GIB = 1024**3


def hand_step(p: int, before: tuple[int, ...], after: tuple[int, ...], size_gib: float, seq: int = 0) -> Step:
    adds = tuple(b for b in after if b not in before)
    removes = tuple(b for b in before if b not in after)
    return Step(p, "t", p, before, after, adds, removes, seq, before[0], int(size_gib * GIB), 0.0)


# Broker 1 holds 9 GiB of its 10 GiB limit: it receives 2 GiB from broker 0 (step 0) and sends 2 GiB to
# broker 2 (step 1). After the plan it holds 9 GiB again; while both copy it would hold 11.
RECEIVES_AND_SENDS = [[hand_step(0, (0,), (1,), 2)], [hand_step(1, (1,), (2,), 2)]]
ROOM = DiskRoom({0: 5 * GIB, 1: 9 * GIB, 2: 0.0}, {0: 10 * GIB, 1: 10 * GIB, 2: 10 * GIB})


def test_a_batch_takes_an_arrival_only_once_the_brokers_departures_made_room() -> None:
    opts = PlanOptions()
    key = order_key(opts, lambda p: False)
    assert [[s.p for s in b.steps] for b in make_batches([], RECEIVES_AND_SENDS, opts, key)] == [[0, 1]]
    assert [[s.p for s in b.steps] for b in make_batches([], RECEIVES_AND_SENDS, opts, key, ROOM)] == [[1], [0]]


def test_the_continuous_schedule_starts_an_arrival_once_the_brokers_departure_ended() -> None:
    free = simulate(RECEIVES_AND_SENDS, 5, 50, 100 * MIB)
    assert [round(s.start, 6) for s in free.steps] == [0.0, 0.0]
    held = simulate(RECEIVES_AND_SENDS, 5, 50, 100 * MIB, disk=ROOM)
    (first, second) = sorted(held.steps, key=lambda s: s.start)
    assert first.step.p == 1 and second.step.p == 0 and second.start == first.end > 0


def test_full_brokers_swapping_replicas_stop_the_plan_with_one_line_naming_them() -> None:
    # Brokers 0 and 1 each hold 9 of 10 GiB and swap 2 GiB replicas: each must receive before the other sends.
    swap = [[hand_step(0, (0,), (1,), 2)], [hand_step(1, (1,), (0,), 2)]]
    room = DiskRoom({0: 9 * GIB, 1: 9 * GIB}, {0: 10 * GIB, 1: 10 * GIB})
    opts = PlanOptions()
    with pytest.raises(PlanError) as batched:
        make_batches([], swap, opts, order_key(opts, lambda p: False), room)
    with pytest.raises(PlanError) as continuous:
        simulate(swap, 5, 50, 100 * MIB, disk=room)
    for exc in (batched, continuous):
        message = str(exc.value)
        assert "\n" not in message
        assert (f"broker 0 holds {9 * GIB:,} of its {10 * GIB:,} bytes and must first receive t-1 ({2 * GIB:,} bytes); "
                f"broker 1 holds {9 * GIB:,} of its {10 * GIB:,} bytes and must first receive t-0") in message


def test_with_nothing_in_flight_the_dispatcher_looks_past_a_lanes_first_candidates_for_one_that_fits() -> None:
    # Broker 9 has 1 GiB of room. Nine 2 GiB steps into it (its lane's first candidates, largest first) do not
    # fit, and nothing runs that could free room; the 1 GiB step behind them does.
    steps = [hand_step(p, (1,), (9,), 2) for p in range(9)] + [hand_step(9, (1,), (9,), 1)]
    room = DiskRoom({9: 0.0}, {9: 1 * GIB})
    dispatcher = Dispatcher(steps, [None] * len(steps), 5, 50, math.inf, disk=room)
    assert dispatcher.start() == [9]
    dispatcher.finish(9)
    assert dispatcher.start() == [] and [s.p for s in dispatcher.disk_blocked()] == list(range(9))


def test_a_resumed_dispatcher_counts_what_completed_and_what_runs_and_an_abandoned_step_gives_its_room_back() -> None:
    # Broker 1 (9 of 10 GiB) sent 2 GiB (step 1, done): step 0's 2 GiB fits. Broker 2 (limit 3 GiB) has step 2's
    # 2 GiB in flight: step 3's 2 GiB waits until step 2 is abandoned (its copy deleted).
    steps = [hand_step(0, (0,), (1,), 2), hand_step(1, (1,), (3,), 2), hand_step(2, (0,), (2,), 2), hand_step(3, (3,), (2,), 2)]
    room = DiskRoom({0: 0.0, 1: 9 * GIB, 2: 0.0, 3: 0.0}, {0: GIB, 1: 10 * GIB, 2: 3 * GIB, 3: 10 * GIB})
    dispatcher = Dispatcher(steps, [None] * 4, 5, 50, math.inf, done=[1], running=[2], disk=room)
    assert dispatcher.start() == [0]
    dispatcher.abandon(2)
    assert dispatcher.start() == [3]


def test_a_plan_on_a_cluster_without_capacities_has_no_disk_room() -> None:
    snapshot, options = corpus.member("no-racks-5b-rf-mixed")
    state = ClusterState(snapshot, PlanOptions(**options))
    assert disk_room(state) is None
    with_room = disk_room(ClusterState(with_disks(snapshot), PlanOptions(**options)))
    assert with_room is not None and sorted(with_room.limit) == sorted(b.id for b in snapshot.brokers)


@pytest.mark.parametrize("name", PLANNED)
def test_the_schedule_reads_the_batchers_step_arrays_as_it_would_make_them(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The plan simulates its schedule on the arrays the batcher made of the moves' steps (under the disk room before
    # the log-dir batches), not on arrays of its own (under the room after them): which brokers and dirs are limited
    # is the same, so the arrays are, and so is the schedule.
    from kafka_rebalance.planner import core
    from kafka_rebalance.planner.dispatch import columns
    from kafka_rebalance.planner.peaks import DiskLedger
    from kafka_rebalance.planner.schedule import simulate

    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(core, "simulate", lambda *a: calls.append(a) or simulate(*a))
    snapshot, options = member(name)
    make_plan(snapshot, options)
    (chains, per_broker, in_flight, rate, fixed, disk, made), = calls
    assert made is not None
    own = columns([s for chain in chains for s in chain], DiskLedger(disk) if disk is not None else None)
    assert all(np.array_equal(x, y) for x, y in zip(made, own, strict=True))
    assert simulate(chains, per_broker, in_flight, rate, fixed, disk, made) == simulate(chains, per_broker, in_flight, rate, fixed, disk)
