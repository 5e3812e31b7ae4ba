"""Row extraction: snapshot and plan files -> one table of typed rows per suite.

A GX suite runs on one batch, so each suite gets one table whose rows have a
``kind`` (``partition``/``broker`` for the snapshot; ``move``/``batch``/
``broker_batch``/``throttle``/``file`` for the plan; ``broker`` for the projected
balance). Columns belong to one kind and are null on the others, and GX's column
expectations skip nulls, so each expectation sees exactly its rows. ``row`` is a
unique id (GX reports offending rows by it) and ``where`` names the row for an
operator (``batch 002 orders-3``).

The columns hold facts (``racks_spanned``, ``broker_moves``, ``actual_sha256``);
the verdicts (``>= racks_required``, ``<= max_moves_per_broker``, ``== recorded``)
live in the suites.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from kafka_rebalance.balance import count_bounds, placement_targets
from kafka_rebalance.metrics import DEFAULT_THRESHOLD_PERCENTAGE
from kafka_rebalance.plan_dir import BATCHES_DIR, ELECTION_FILE, SCHEDULE_FILE, plan_hash_of
from kafka_rebalance.snapshot import THRESHOLD_CONFIG
from kafka_rebalance.validation.inputs import RawPlan, RawSnapshot, sha256_file

# Column -> Spark SQL type; pandas dtypes follow from it (see ``to_pandas``).
COLUMN_TYPES: dict[str, str] = {
    "row": "bigint", "kind": "string", "where": "string",
    # snapshot
    "topic": "string", "partition": "bigint", "replicas": "array<bigint>", "leader": "bigint", "isr": "array<bigint>",
    "replicas_nonempty": "boolean", "replicas_distinct": "boolean", "replicas_known": "boolean",
    "leader_ok": "boolean", "isr_subset": "boolean", "size_bytes": "double", "bytes_in_per_sec": "double",
    "broker_id": "bigint",
    # plan
    "batch": "string", "replicas_before": "array<bigint>", "replica_count": "bigint", "rf_expected": "bigint",
    "in_snapshot": "boolean", "targets_eligible": "boolean", "racks_spanned": "bigint", "racks_required": "bigint",
    "moved_topic": "string", "batch_partitions": "bigint", "broker_moves": "bigint", "throttle_rate": "double",
    "throttle_field": "string", "schedule_consistent": "boolean", "schedule_problem": "string", "path": "string",
    "recorded_sha256": "string", "actual_sha256": "string",
    # projected balance
    "replicas_after": "bigint", "replica_lo": "bigint", "replica_hi": "bigint", "replicas_off_target": "bigint",
    "byte_target": "double", "preferred_after": "bigint", "leaders_after": "bigint",
    "replica_count_before": "bigint", "preferred_before": "bigint", "imbalance_ratio_after": "double",
    "size_before": "bigint", "size_after": "bigint", "byte_deviation_before": "double",
    "byte_deviation_after": "double", "byte_deviation_allowed": "double", "movable_replicas_after": "bigint",
}

_PANDAS = {"bigint": "Int64", "double": "float64", "boolean": "boolean", "string": "object"}


@dataclass
class Table:
    """Rows for one suite plus the values its ``$PARAMETER`` references resolve to."""

    suite: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    parameters: dict[str, Any] = field(default_factory=dict)
    # Columns an expectation reads even when no row of their kind exists (an all-null column
    # passes; a missing one is an error in GX).
    declared: tuple[str, ...] = ()

    def add(self, kind: str, where: str, **values: Any) -> None:
        unknown = set(values) - set(COLUMN_TYPES)
        if unknown:  # a typo here would silently make an expectation see only nulls
            raise KeyError(f"undeclared row column(s): {sorted(unknown)}")
        self.rows.append({"row": len(self.rows), "kind": kind, "where": where, **values})

    @property
    def columns(self) -> list[str]:
        present = {k for r in self.rows for k in r}
        return [c for c in COLUMN_TYPES if c in present or c in ("row", "kind", "where") or c in self.declared]

    def to_pandas(self) -> pd.DataFrame:
        cols = self.columns
        data = {c: [r.get(c) for r in self.rows] for c in cols}
        frame = pd.DataFrame({c: pd.Series(data[c], dtype=_PANDAS.get(COLUMN_TYPES[c], "object")) for c in cols})
        return frame

    def spark_schema(self) -> str:
        return ", ".join(f"`{c}` {COLUMN_TYPES[c]}" for c in self.columns)

    def to_spark(self, spark: Any) -> Any:
        cols = self.columns
        tuples = [tuple(_spark_value(r.get(c), COLUMN_TYPES[c]) for c in cols) for r in self.rows]
        return spark.createDataFrame(tuples, schema=self.spark_schema())


def _spark_value(v: Any, kind: str) -> Any:
    if v is None:
        return None
    if kind == "double":
        return float(v)
    if kind.startswith("array"):
        return [int(x) for x in v]
    return v


# --------------------------------------------------------------------------- snapshot suite


def snapshot_table(snap: RawSnapshot) -> Table:
    t = Table("snapshot")
    known = snap.broker_ids
    for p in snap.partitions:
        t.add(
            "partition", p.name, topic=p.topic, partition=p.partition, replicas=list(p.replicas), leader=p.leader,
            isr=list(p.isr), replicas_nonempty=bool(p.replicas), replicas_distinct=len(set(p.replicas)) == len(p.replicas),
            replicas_known=all(r in known for r in p.replicas), leader_ok=p.leader == -1 or p.leader in p.replicas,
            isr_subset=set(p.isr) <= set(p.replicas) and len(set(p.isr)) == len(p.isr),
            size_bytes=p.size_bytes, bytes_in_per_sec=p.bytes_in_per_sec,
        )
    for b in snap.brokers:
        t.add("broker", f"broker {b.id}", broker_id=b.id)
    return t


# --------------------------------------------------------------------------- plan facts


@dataclass
class PartitionState:
    replicas: tuple[int, ...]
    leader: int
    isr: tuple[int, ...]


def plan_eligible(snap: RawSnapshot, plan: RawPlan) -> set[int]:
    decommission = set(plan.options.get("decommission_brokers") or [])
    return {b.id for b in snap.brokers if b.alive and b.id not in decommission}


def plan_table(snap: RawSnapshot, plan: RawPlan) -> Table:
    opts = plan.options
    t = Table("reassignment_plan", declared=("schedule_consistent",))  # plans from before schedule.json have none
    t.parameters = {
        "max_partitions_per_batch": opts.get("max_partitions_per_batch"),
        "max_moves_per_broker": opts.get("max_moves_per_broker"),
        "throttle_max_bytes_per_sec": opts.get("throttle_bytes_per_sec"),
        "exclude_topics": list(opts.get("exclude_topics") or []),
    }
    eligible = plan_eligible(snap, plan)
    rack_of = snap.rack_of
    # Only racks a replica can still be placed on: a rack whose brokers are all dead or
    # being decommissioned cannot be required of any partition.
    racks = {rack_of[b] for b in eligible if rack_of.get(b) is not None}
    wanted_rf = opts.get("replication_factor")
    state = {(p.topic, p.partition): p.replicas for p in snap.partitions}
    data_moves: dict[tuple[str, str, int], tuple[tuple[int, ...], tuple[int, ...]]] = {}
    for batch in plan.batches:
        label = f"batch {batch.id}"
        moves: Counter[int] = Counter()
        for m in batch.moves:
            key = (m["topic"], m["partition"])
            new = list(m["replicas"])
            before = state.get(key)
            rf_expected = wanted_rf if wanted_rf is not None else (len(before) if before is not None else None)
            t.add(
                "move", f"{label} {m['topic']}-{m['partition']}", batch=batch.id, topic=m["topic"],
                partition=m["partition"], replicas=new, replicas_before=None if before is None else list(before),
                replica_count=len(new), rf_expected=rf_expected, in_snapshot=before is not None,
                replicas_distinct=len(set(new)) == len(new), targets_eligible=_new_replicas_eligible(new, before, eligible),
                racks_spanned=len({rack_of.get(b) for b in new if rack_of.get(b) is not None}) if racks else None,
                racks_required=min(len(set(new)), len(racks)) if racks else None, moved_topic=m["topic"],
            )
            if before is not None:
                for b in set(new) ^ set(before):  # a replica arriving on or leaving b
                    moves[b] += 1
                if set(new) != set(before):
                    data_moves[(batch.id, m["topic"], m["partition"])] = (tuple(before), tuple(new))
                state[key] = tuple(new)
        t.add("batch", label, batch=batch.id, batch_partitions=len(batch.moves))
        for b in sorted(moves):
            t.add("broker_batch", f"{label} broker {b}", batch=batch.id, broker_id=b, broker_moves=moves[b])
        for name, value in _throttle_rates(batch.throttles):
            t.add("throttle", f"{label} throttles.json {name}", batch=batch.id, throttle_field=name, throttle_rate=value)
    if plan.schedule is not None:
        for where, problem in _schedule_problems(plan.schedule, data_moves):
            t.add("schedule", where, schedule_consistent=problem is None, schedule_problem=problem)
    for path, recorded, actual in _file_hashes(snap, plan):
        t.add("file", path, path=path, recorded_sha256=recorded, actual_sha256=actual)
    return t


def _schedule_problems(
    steps: list[dict[str, Any]], data_moves: dict[tuple[str, str, int], tuple[tuple[int, ...], tuple[int, ...]]]
) -> list[tuple[str, str | None]]:
    """One (where, problem or None) per schedule step, and one per batch data move it lacks."""
    out: list[tuple[str, str | None]] = []
    seen: set[tuple[str, str, int]] = set()
    last_of: dict[tuple[str, int], int] = {}  # partition -> its latest step's id so far
    for n, st in enumerate(steps):
        where = f"schedule.json step {n} {st.get('topic')}-{st.get('partition')}"
        key = (str(st.get("batch")), st.get("topic"), st.get("partition"))
        problem = None
        expected = data_moves.get(key)  # type: ignore[arg-type]
        if st.get("id") != n:
            problem = f"id {st.get('id')!r}, expected {n} (steps are numbered in order)"
        elif expected is None:
            problem = f"batch {st.get('batch')} has no data move of this partition"
        elif key in seen:
            problem = f"repeats batch {st.get('batch')}'s move"
        elif (tuple(st.get("before") or ()), tuple(st.get("replicas") or ())) != expected:
            problem = (f"{st.get('before')} -> {st.get('replicas')}, but batch {st.get('batch')} moves "
                       f"{list(expected[0])} -> {list(expected[1])}")
        elif _id_list(st.get("adds")) != sorted(set(expected[1]) - set(expected[0])) \
                or _id_list(st.get("removes")) != sorted(set(expected[0]) - set(expected[1])):
            problem = (f"adds {st.get('adds')} / removes {st.get('removes')} are not the difference between "
                       f"{list(expected[0])} and {list(expected[1])}")
        elif st.get("after") != last_of.get((st["topic"], st["partition"])):
            problem = (f"after {st.get('after')!r}, but the partition's previous step is "
                       f"{last_of.get((st['topic'], st['partition']))!r}")
        seen.add(key)  # type: ignore[arg-type]
        if expected is not None:
            last_of[(st["topic"], st["partition"])] = n
        out.append((where, problem))
    for key in sorted(set(data_moves) - seen):
        out.append((f"batch {key[0]} {key[1]}-{key[2]}", "this data move is missing from schedule.json"))
    return out


def _id_list(value: Any) -> list[int] | None:
    """A list of broker ids, sorted; None for anything else (never a comparison error on mixed types)."""
    return sorted(value) if isinstance(value, list) and all(type(x) is int for x in value) else None


def _new_replicas_eligible(new: list[int], before: tuple[int, ...] | None, eligible: set[int]) -> bool:
    """Only replicas a batch ADDS must land on eligible brokers. A replica already on a
    decommissioned broker may stay for a step: a partition with more replicas there than one
    step may replace leaves it one step at a time (the projected suite checks it ends empty)."""
    kept = set(before or ())
    return all(b in eligible for b in new if b not in kept)


def _rate(value: Any) -> float:
    try:
        return float(int(str(value)))
    except ValueError:
        return -1.0  # not a number of bytes: below any sane minimum, so it is reported


def _throttle_rates(throttles: dict[str, Any]) -> list[tuple[str, float]]:
    out: list[tuple[str, float]] = []
    if "rate_bytes_per_sec" in throttles:
        out.append(("rate_bytes_per_sec", _rate(throttles["rate_bytes_per_sec"])))
    brokers = throttles.get("brokers") or {}
    for broker in sorted(brokers, key=lambda b: (len(str(b)), str(b))):
        cfg = brokers[broker] or {}
        for key in sorted(cfg):
            if key.endswith("throttled.rate"):
                out.append((f"broker {broker} {key}", _rate(cfg[key])))
    return out


def plan_hash(manifest: dict[str, Any]) -> str | None:
    try:
        return plan_hash_of(manifest)
    except ValueError:
        return None  # a value JSON cannot hash (NaN): reported as a hash mismatch


def _file_hashes(snap: RawSnapshot, plan: RawPlan) -> list[tuple[str, str | None, str | None]]:
    recorded: dict[str, Any] = plan.manifest["files"]
    on_disk = {name for name in (ELECTION_FILE, SCHEDULE_FILE) if (plan.dir / name).is_file()}
    if (plan.dir / BATCHES_DIR).is_dir():
        on_disk |= {f.relative_to(plan.dir).as_posix() for f in (plan.dir / BATCHES_DIR).rglob("*") if f.is_file()}
    out = [(path, recorded.get(path), sha256_file(plan.dir / path)) for path in sorted(set(recorded) | on_disk)]
    out.append(("plan.json plan_hash", plan.manifest.get("plan_hash"), plan_hash(plan.manifest)))
    out.append(("snapshot fingerprint", (plan.manifest.get("snapshot") or {}).get("sha256"), snap.fingerprint))
    return [(p, r if isinstance(r, str) else None if r is None else str(r), a) for p, r, a in out]


# --------------------------------------------------------------------------- projected balance


def project(snap: RawSnapshot, plan: RawPlan) -> dict[tuple[str, int], PartitionState]:
    """The cluster after every batch and the preferred election, as Kafka would leave it.

    A moved partition's new replicas are in sync once the move completes; if its
    leader left, Kafka's controller picks the first live in-sync replica of the new
    list. The election then moves leadership to the preferred (first) replica where
    that broker is alive and in sync (KIP-460).
    """
    alive = snap.alive_ids
    state = {(p.topic, p.partition): PartitionState(p.replicas, p.leader, p.isr) for p in snap.partitions}
    for batch in plan.batches:
        for m in batch.moves:
            key = (m["topic"], m["partition"])
            cur = state.get(key)
            if cur is None:
                continue  # reported by expect_partition_in_snapshot
            new = tuple(m["replicas"])
            if set(new) == set(cur.replicas):
                state[key] = PartitionState(new, cur.leader, cur.isr)
                continue
            isr = tuple(b for b in new if b in alive)
            leader = cur.leader if cur.leader in new and cur.leader in alive else (isr[0] if isr else -1)
            state[key] = PartitionState(new, leader, isr)
    for key in plan.election:
        cur = state.get(key)
        if cur is not None and cur.replicas and cur.replicas[0] in alive and cur.replicas[0] in cur.isr:
            state[key] = PartitionState(cur.replicas, cur.replicas[0], cur.isr)
    return state


def _per_broker(state: dict[tuple[str, int], PartitionState], sizes: dict[tuple[str, int], float]) -> dict[str, Counter[int]]:
    c: dict[str, Counter[int]] = {k: Counter() for k in ("replicas", "preferred", "preferred_not_led", "leaders", "bytes")}
    for key, s in state.items():
        for b in s.replicas:
            c["replicas"][b] += 1
            c["bytes"][b] += int(sizes.get(key) or 0)
        if s.replicas:
            c["preferred"][s.replicas[0]] += 1
            if s.leader != s.replicas[0]:
                c["preferred_not_led"][s.replicas[0]] += 1
        if s.leader >= 0:
            c["leaders"][s.leader] += 1
    return c


def threshold(snap: RawSnapshot, plan: RawPlan) -> float:
    pct: Any = plan.options.get("threshold_percentage")
    if pct is None:
        pct = snap.configs.get(THRESHOLD_CONFIG, DEFAULT_THRESHOLD_PERCENTAGE)
    return float(pct)


def _stuck(snap: RawSnapshot, plan: RawPlan) -> set[tuple[str, int]]:
    """Partitions no plan may move: excluded topics and partitions without a leader to copy from."""
    excluded = set(plan.options.get("exclude_topics") or [])
    return {(p.topic, p.partition) for p in snap.partitions if p.topic in excluded or p.leader < 0}


def targets(snap: RawSnapshot, plan: RawPlan) -> tuple[dict[int, tuple[int, int]], dict[int, float]] | None:
    """Rack-aware replica ranges and byte targets per eligible broker (kafka_rebalance.balance), or
    None when no plan could be rack-safe (the planner refuses such input)."""
    eligible = plan_eligible(snap, plan)
    if not eligible:
        return None
    rack_of = snap.rack_of
    stuck = _stuck(snap, plan)
    wanted_rf = plan.options.get("replication_factor")
    by_rf: dict[int, tuple[int, int]] = {}
    fixed: dict[int, tuple[int, int]] = {}
    for p in snap.partitions:
        size = int(p.size_bytes or 0)
        if (p.topic, p.partition) in stuck:
            for b in p.replicas:
                if b in eligible:
                    n, total = fixed.get(b, (0, 0))
                    fixed[b] = (n + 1, total + size)
            continue
        rf = int(wanted_rf) if wanted_rf is not None else len(p.replicas)
        n, total = by_rf.get(rf, (0, 0))
        by_rf[rf] = (n + 1, total + size)
    try:
        t = placement_targets({b: rack_of.get(b) for b in sorted(eligible)}, by_rf, fixed)
    except ValueError:
        return None
    return t.replicas, t.byte_mean


def balance_table(snap: RawSnapshot, plan: RawPlan) -> Table:
    """One row per eligible broker after the plan.

    Replica counts must lie within the rack-aware targets of ``kafka_rebalance.balance``
    (plain [floor, ceil] of the ideal unless rack safety forces rack totals apart), and
    bytes are measured against the same per-broker byte targets. Replicas of partitions
    no plan can move (excluded topics, no leader) that sit on dead or decommissioned
    brokers are load no eligible broker can take, so they count in no total.

    Kafka's leader imbalance ratio is measured over the partitions the plan may touch: an
    excluded topic's leadership is the operator's to keep, and no election of the plan changes it.
    One more row per dead or decommissioned broker counts the replicas any plan could have
    moved off it that are still there after the plan: it must be none.
    """
    eligible = sorted(plan_eligible(snap, plan))
    sizes = {(p.topic, p.partition): float(p.size_bytes or 0) for p in snap.partitions}
    before_state = {(p.topic, p.partition): PartitionState(p.replicas, p.leader, p.isr) for p in snap.partitions}
    after_state = project(snap, plan)
    before, after = _per_broker(before_state, sizes), _per_broker(after_state, sizes)
    stuck = _stuck(snap, plan)
    elig_set = set(eligible)
    stuck_away = _per_broker({k: s for k, s in after_state.items() if k in stuck}, sizes)
    excluded = set(plan.options.get("exclude_topics") or [])
    led = _per_broker({k: s for k, s in after_state.items() if k[0] not in excluded}, sizes)
    movable_after = _per_broker({k: s for k, s in after_state.items() if k not in stuck}, sizes)["replicas"]
    n = len(eligible)
    tolerance = float(plan.options.get("byte_tolerance", 0.1) or 0.0)

    def movable_total(kind: str) -> int:
        return sum(after[kind].values()) - sum(v for b, v in stuck_away[kind].items() if b not in elig_set)

    rep_total = movable_total("replicas")
    pref_total = movable_total("preferred")
    rep_lo, rep_hi = count_bounds(rep_total, n)
    pref_lo, pref_hi = count_bounds(pref_total, n)
    aimed = targets(snap, plan)
    if aimed is not None and sum(lo for lo, _ in aimed[0].values()) <= rep_total <= sum(hi for _, hi in aimed[0].values()):
        ranges, byte_target = aimed
    else:  # RF or totals differ from what the options ask: plain bounds around the mean
        ranges = {b: (rep_lo, rep_hi) for b in eligible}
        mean = sum(after["bytes"][b] for b in eligible) / n if n else 0.0
        byte_target = {b: mean for b in eligible}
    t = Table("projected_balance", declared=("movable_replicas_after",))
    t.parameters = {
        "threshold_ratio": threshold(snap, plan) / 100,
        "replica_floor": min((lo for lo, _ in ranges.values()), default=rep_lo),
        "replica_ceil": max((hi for _, hi in ranges.values()), default=rep_hi),
        "preferred_floor": pref_lo, "preferred_ceil": pref_hi,
    }
    # The before state is measured against the same shape of targets, scaled to the bytes
    # the eligible brokers held then (dead brokers' data not yet re-created).
    aimed_total = sum(byte_target.values())
    scale = sum(before["bytes"][b] for b in eligible) / aimed_total if aimed_total else 0.0

    def dev(value: float, mean: float) -> float:
        return abs(value - mean) / mean if mean else 0.0

    for b in eligible:
        pref = after["preferred"][b]
        pref_led = led["preferred"][b]
        lo, hi = ranges[b]
        replicas = after["replicas"][b]
        dev_before = dev(before["bytes"][b], byte_target[b] * scale)
        t.add(
            "broker", f"broker {b}", broker_id=b, replicas_after=replicas, replica_lo=lo, replica_hi=hi,
            replicas_off_target=max(0, lo - replicas, replicas - hi), byte_target=byte_target[b],
            preferred_after=pref, leaders_after=after["leaders"][b], replica_count_before=before["replicas"][b],
            preferred_before=before["preferred"][b],
            imbalance_ratio_after=led["preferred_not_led"][b] / pref_led if pref_led else None,
            size_before=before["bytes"][b], size_after=after["bytes"][b], byte_deviation_before=dev_before,
            byte_deviation_after=dev(after["bytes"][b], byte_target[b]),
            # 1e-9: the same bytes must compare equal whatever the float rounding
            byte_deviation_allowed=max(dev_before, tolerance) + 1e-9,
        )
    for b in sorted(snap.broker_ids - elig_set):
        t.add("leaving_broker", f"broker {b}", broker_id=b, movable_replicas_after=movable_after[b])
    return t

