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
from dataclasses import dataclass
from typing import Any

from kafka_rebalance.plan_dir import BATCHES_DIR, ELECTION_FILE, SCHEDULE_FILE, editor_litter, plan_hash_of
from kafka_rebalance.validation.inputs import RawPlan, RawSnapshot, sha256_file
from kafka_rebalance.validation.table import (
    Table,
)

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
    # Plans from before schedule.json have no schedule rows; a plan without data moves between brokers (reorders,
    # moves between log dirs) has no broker_batch rows: each column is there, empty, and its check holds.
    t = Table("reassignment_plan", declared=("schedule_consistent", "broker_moves"))
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
        on_disk |= {f.relative_to(plan.dir).as_posix() for f in (plan.dir / BATCHES_DIR).rglob("*")
                    if f.is_file() and not editor_litter(f.name)}
    out = [(path, recorded.get(path), sha256_file(plan.dir / path)) for path in sorted(set(recorded) | on_disk)]
    out.append(("plan.json plan_hash", plan.manifest.get("plan_hash"), plan_hash(plan.manifest)))
    out.append(("snapshot fingerprint", (plan.manifest.get("snapshot") or {}).get("sha256"), snap.fingerprint))
    return [(p, r if isinstance(r, str) else None if r is None else str(r), a) for p, r, a in out]
