"""The executor's typed view of a plan directory (docs/PLAN_FORMAT.md).

Nothing is parsed until ``plan_dir.verify_plan`` has proved every hashed field and
file unchanged, and (unless asked otherwise) ``validation/verdict.json`` says the
plan passed for that very hash.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_rebalance.cluster.admin import BROKER_RATE_KEYS, TOPIC_THROTTLE_KEYS, TP
from kafka_rebalance.plan_dir import (
    BATCH_FILE_KINDS,
    ELECTION_FILE,
    PLAN_FILE,
    SCHEDULE_FILE,
    PlanDirError,
    batch_file,
    read_json,
    require_approved,
    require_validated,
    verify_plan,
)
from kafka_rebalance.throttle_model import (
    MAX_MOVE_FIXED_SECONDS,
    MIN_THROTTLE_BYTES_PER_SEC,
    MIN_THROTTLE_EFFICIENCY,
    delivered_rate,
)
from kafka_rebalance.userinput import INT32_MAX, INT64_MAX, finite_number, int_in, is_ascii_digits, topic_name_problem


@dataclass(frozen=True, slots=True)
class Throttles:
    rate_bytes_per_sec: int | None
    brokers: dict[int, dict[str, str]] = field(default_factory=dict)
    topics: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.brokers and not self.topics


@dataclass(frozen=True, slots=True)
class Batch:
    id: str
    kind: str
    targets: dict[TP, tuple[int, ...]]
    before: dict[TP, tuple[int, ...]]
    throttles: Throttles
    estimated_seconds: float | None
    bytes: int | None
    # The log dir the reassignment names for a replica, (partition, broker) -> absolute path; only where one
    # is named ("any" elsewhere: the broker chooses).
    dirs: dict[tuple[TP, int], str] = field(default_factory=dict)

    def named_dirs(self, tp: TP) -> dict[int, str]:
        """broker -> log dir this batch names for ``tp``'s replicas (empty: none named)."""
        return {b: d for (t, b), d in self.dirs.items() if t == tp} if self.dirs else {}

    @property
    def partitions(self) -> int:
        return len(self.targets)

    @property
    def replica_moves(self) -> int:
        """New replicas the batch creates (a reorder creates none)."""
        return sum(len(set(replicas) - set(self.before[tp])) for tp, replicas in self.targets.items())

    @property
    def topics(self) -> tuple[tuple[str, int], ...]:
        """(topic, partitions of it in this batch), by topic."""
        return tuple(sorted(Counter(tp.topic for tp in self.targets).items()))


@dataclass(frozen=True, slots=True)
class ScheduledMove:
    """One step of schedule.json: a partition from ``before`` to ``replicas``, after step ``after``."""

    id: int
    tp: TP
    batch: str
    before: tuple[int, ...]
    replicas: tuple[int, ...]
    adds: tuple[int, ...]
    removes: tuple[int, ...]
    after: int | None
    leader: int
    bytes: int
    produce_bytes_per_sec: float
    estimated_start_s: float
    estimated_end_s: float
    # The log dir of each replica in ``before`` ("any": not known), where the plan knows one on a broker with
    # several dirs (the disk ledger frees it when the step ends: planner/peaks.py); empty: none known.
    sources: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PlanSchedule:
    throttle_bytes_per_sec: int
    max_moves_per_broker: int
    max_in_flight: int
    estimated_seconds: float
    physical_bound_seconds: float
    moves: tuple[ScheduledMove, ...]
    throttle_efficiency: float = 1.0  # absent from plans made before the option existed
    move_fixed_seconds: float = 0.0  # absent from plans made before the fixed cost was modelled: they had none
    # (broker id, partition bytes before the plan, limit) per broker with a known disk size (planner/peaks.py);
    # empty: no limit (a plan without capacities, or made before the field existed).
    disk_room: tuple[tuple[int, int, int], ...] = ()
    # (broker id, log dir, partition bytes as the log-dir batches leave it, limit) per dir of a broker with several
    # dirs of known size; empty: none (a plan without such brokers, or made before the field existed).
    dir_room: tuple[tuple[int, str, int, int], ...] = ()

    @property
    def delivered_rate(self) -> float:
        """The rate the schedule was simulated with: the dispatcher must use the same one."""
        return delivered_rate(self.throttle_bytes_per_sec, self.throttle_efficiency)


@dataclass(frozen=True, slots=True)
class Plan:
    path: Path
    manifest: dict[str, Any]
    plan_hash: str
    cluster_id: str
    options: dict[str, Any]
    batches: tuple[Batch, ...]
    elections: tuple[TP, ...]
    schedule: PlanSchedule | None = None  # None: a plan written before schedule.json existed

    @property
    def kafka_cluster_id(self) -> str | None:
        """Kafka's own id of the cluster the plan was made for (under the plan hash); None if unknown."""
        found = self.manifest.get("kafka_cluster_id")
        return found if isinstance(found, str) and found else None

    @property
    def snapshot_sha256(self) -> str:
        """The fingerprint of the snapshot the plan was made from."""
        snapshot = self.manifest.get("snapshot")
        return str(snapshot.get("sha256", "")) if isinstance(snapshot, dict) else ""

    @property
    def election_batch_size(self) -> int:
        size = self.options.get("election_batch_size", 1000)
        return size if isinstance(size, int) and size > 0 else 1000

    @property
    def brokers_touched(self) -> frozenset[int]:
        """Every broker a move of the plan involves (before or after): the only brokers it may throttle."""
        return frozenset(r for b in self.batches for tp in b.targets for r in (*b.before[tp], *b.targets[tp]))

    @property
    def topics_touched(self) -> frozenset[str]:
        """Every topic with a partition the plan moves: the only topics it may throttle."""
        return frozenset(tp.topic for b in self.batches for tp in b.targets)

    @property
    def final_dirs(self) -> dict[tuple[TP, int], str]:
        """(partition, broker) -> the log dir the plan last named for that replica, for the replicas still there
        once the whole plan ran: what ``verify`` reads back from DescribeLogDirs."""
        out: dict[tuple[TP, int], str] = {}
        for b in self.batches:
            for tp, target in b.targets.items():
                for key in [k for k in out if k[0] == tp and k[1] not in target]:
                    del out[key]
            out.update(b.dirs)
        return out

    @property
    def final_targets(self) -> dict[TP, tuple[int, ...]]:
        """Each moved partition's replicas once the whole plan ran (its last batch's target)."""
        out: dict[TP, tuple[int, ...]] = {}
        for b in self.batches:
            out.update(b.targets)
        return out

    def batch(self, batch_id: str) -> Batch:
        for b in self.batches:
            if b.id == batch_id or (is_ascii_digits(batch_id) and is_ascii_digits(b.id) and int(b.id) == int(batch_id)):
                return b
        raise PlanDirError(f"{self.path / PLAN_FILE}: batches: no batch {batch_id!r} (plan has {', '.join(b.id for b in self.batches)})")


def _read_json(path: Path, rel: str) -> Any:
    return read_json(path, f"plan file {rel}")


def _log_dirs(raw: Any, path: Path) -> dict[tuple[TP, int], str]:
    """The dirs a reassignment JSON names (Kafka's rule: ``log_dirs``, when present, holds one entry per replica,
    each "any" or an absolute path); refused in one line naming the entry otherwise."""
    out: dict[tuple[TP, int], str] = {}
    for i, p in enumerate(raw["partitions"]):
        dirs = p.get("log_dirs")
        if dirs is None:
            continue
        if not isinstance(dirs, list) or len(dirs) != len(p["replicas"]) \
                or not all(isinstance(d, str) and (d == "any" or d.startswith("/")) for d in dirs):
            raise PlanDirError(f"{path}: partitions[{i}].log_dirs: expected one entry per replica, each \"any\" or an "
                               f"absolute path, got {json.dumps(dirs)[:200]}")
        tp = TP(p["topic"], p["partition"])
        out.update({(tp, b): d for b, d in zip(p["replicas"], dirs) if d != "any"})
    return out


def _assignment(raw: Any, path: Path) -> dict[TP, tuple[int, ...]]:
    if not isinstance(raw, dict) or raw.get("version") != 1 or not isinstance(raw.get("partitions"), list):
        raise PlanDirError(f"{path}: expected Kafka's reassignment JSON {{\"version\": 1, \"partitions\": [...]}}")
    out: dict[TP, tuple[int, ...]] = {}
    for i, p in enumerate(raw["partitions"]):
        topic, part, replicas = (p.get("topic"), p.get("partition"), p.get("replicas")) if isinstance(p, dict) else (None,) * 3
        if not isinstance(topic, str) or not int_in(part, 0, INT32_MAX) or not isinstance(replicas, list) or not replicas \
                or not all(int_in(r, 0, INT32_MAX) for r in replicas):
            raise PlanDirError(f"{path}: partitions[{i}]: needs topic (string), partition (int32) and replicas (non-empty broker id list), "
                               f"got {json.dumps(p)[:200]}")
        if topic_name_problem(topic):
            raise PlanDirError(f"{path}: partitions[{i}].topic: {topic_name_problem(topic)}")
        if len(set(replicas)) != len(replicas):
            raise PlanDirError(f"{path}: partitions[{i}] {topic}-{part}: replicas {replicas} name a broker twice")
        tp = TP(topic, part)
        if tp in out:
            raise PlanDirError(f"{path}: partitions[{i}]: {tp} listed twice")
        out[tp] = tuple(replicas)
    return out


def _rate_problem(value: Any) -> str | None:
    """Why ``value`` is no throttle rate the executor may write (None: it is one)."""
    if isinstance(value, str) and is_ascii_digits(value) and len(value) <= 19:
        value = int(value)
    if int_in(value, MIN_THROTTLE_BYTES_PER_SEC, INT64_MAX):
        return None
    return f"expected a whole number of bytes/s within {MIN_THROTTLE_BYTES_PER_SEC}..{INT64_MAX}, got {json.dumps(value)[:60]}"


def _replica_list_problem(value: str) -> str | None:
    """Why ``value`` is no throttled-replica list (``*``, or PARTITION:BROKER entries joined by commas)."""
    if value.strip() in ("*", ""):  # every replica; none (a value Kafka accepts and a ledger may record)
        return None
    entries = value.split(",")
    for entry in entries:
        part, sep, broker = entry.strip().partition(":")
        if not (sep and is_ascii_digits(part) and is_ascii_digits(broker) and len(part) <= 10 and len(broker) <= 10):
            return f"{entry!r} is not PARTITION:BROKER"
    return None


def throttle_value_problem(key: str, value: Any) -> str | None:
    """Why a ledger's recorded ``value`` may not be written back under ``key`` (None: it may; None deletes the config).

    A restore writes back what the cluster held before a run: only the four KIP-73 keys, a rate Kafka
    accepts (a whole number of bytes/s, 0..2^63-1: an operator's own throttle may be below what a plan
    sets) or a throttled-replica list. A batch's own throttles.json is held to the stricter plan rules.
    """
    if key not in BROKER_RATE_KEYS + TOPIC_THROTTLE_KEYS:
        return f"not a throttle config (expected one of {', '.join(BROKER_RATE_KEYS + TOPIC_THROTTLE_KEYS)})"
    if value is None:
        return None
    if not isinstance(value, str):
        return f"expected a string or null, got {json.dumps(value)[:60]}"
    if key in BROKER_RATE_KEYS:
        if is_ascii_digits(value) and len(value) <= 19 and int(value) <= INT64_MAX:
            return None
        return f"expected a whole number of bytes/s within 0..{INT64_MAX}, got {json.dumps(value)[:60]}"
    return _replica_list_problem(value)


def _throttles(raw: Any, path: Path, before: dict[TP, tuple[int, ...]], targets: dict[TP, tuple[int, ...]]) -> Throttles:
    """throttles.json, typed, every value checked against the batch's own moves.

    The executor writes these configs to the cluster as they are, so nothing but the KIP-73 keys is
    accepted, every rate is a sane positive number of bytes/s, and every broker (in a rate, or in a
    throttled-replica list) is one a move of this batch involves: checked for all batches at load,
    before the first move, not by Kafka halfway through the plan.
    """
    if not isinstance(raw, dict):
        raise PlanDirError(f"{path}: expected an object with rate_bytes_per_sec, brokers and topics")
    brokers_raw, topics_raw = raw.get("brokers", {}), raw.get("topics", {})
    if not isinstance(brokers_raw, dict) or not isinstance(topics_raw, dict):
        raise PlanDirError(f"{path}: brokers and topics must be objects")
    rate = raw.get("rate_bytes_per_sec")
    if rate is not None and (problem := _rate_problem(rate)) is not None:
        raise PlanDirError(f"{path}: rate_bytes_per_sec: {problem}")
    involved: dict[TP, set[int]] = {tp: set(before[tp]) | set(targets[tp]) for tp in targets}
    brokers_of_batch = set().union(*involved.values()) if involved else set()
    brokers: dict[int, dict[str, str]] = {}
    for bid, cfg in brokers_raw.items():
        if not (is_ascii_digits(bid) and int(bid) <= INT32_MAX) or not isinstance(cfg, dict) \
                or not all(isinstance(v, str) for v in cfg.values()):
            raise PlanDirError(f"{path}: brokers.{bid}: expected a broker id mapping config names to string values")
        if int(bid) not in brokers_of_batch:
            raise PlanDirError(f"{path}: brokers.{bid}: broker {bid} is not a replica of any partition this batch moves "
                               f"(its brokers are {sorted(brokers_of_batch)})")
        for key, value in sorted(cfg.items()):
            if key not in BROKER_RATE_KEYS:
                raise PlanDirError(f"{path}: brokers.{bid}.{key}: not a throttle config (expected {' or '.join(BROKER_RATE_KEYS)})")
            if (problem := _rate_problem(value)) is not None:
                raise PlanDirError(f"{path}: brokers.{bid}.{key}: {problem}")
        brokers[int(bid)] = dict(cfg)
    topics: dict[str, dict[str, str]] = {}
    topics_of_batch = {tp.topic for tp in targets}
    for name, cfg in topics_raw.items():
        if not isinstance(cfg, dict) or not all(isinstance(v, str) for v in cfg.values()):
            raise PlanDirError(f"{path}: topics.{name}: expected config names mapping to string values")
        # Checked for the topic itself, not only for the entries of its lists: an empty list or an empty
        # mapping would otherwise name (and alter) a topic this batch does not move.
        if name not in topics_of_batch:
            raise PlanDirError(f"{path}: topics.{name}: topic {name!r} has no partition this batch moves")
        for key, value in sorted(cfg.items()):
            if key not in TOPIC_THROTTLE_KEYS:
                raise PlanDirError(f"{path}: topics.{name}.{key}: not a throttle config (expected {' or '.join(TOPIC_THROTTLE_KEYS)})")
            if value.strip() in ("*", ""):
                raise PlanDirError(f"{path}: topics.{name}.{key}: {value!r}: a batch throttles exactly the replicas it moves")
            if (problem := _replica_list_problem(value)) is not None:
                raise PlanDirError(f"{path}: topics.{name}.{key}: {problem}")
            for entry in value.split(","):
                part, _, broker = entry.strip().partition(":")
                tp = TP(name, int(part))
                if tp not in involved:
                    raise PlanDirError(f"{path}: topics.{name}.{key}: {tp} is not a partition of this batch")
                if int(broker) not in involved[tp]:
                    raise PlanDirError(f"{path}: topics.{name}.{key}: broker {broker} is not a replica of {tp} before or "
                                       f"after its move (those are {sorted(involved[tp])})")
        topics[name] = dict(cfg)
    return Throttles(rate, brokers, topics)


def _schedule(raw: Any, path: Path, batches: dict[str, Batch]) -> PlanSchedule:
    """schedule.json, typed; every step must be exactly its batch's move (the executor acts on these)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("steps"), list):
        raise PlanDirError(f"{path}: expected {{\"version\": 1, ..., \"steps\": [...]}}")
    if raw.get("version") != 1 or isinstance(raw.get("version"), bool):
        # a later layout read as this one would schedule the wrong moves; refuse it by name
        raise PlanDirError(f"{path}: version: expected 1 (this tool's schedule layout), got {json.dumps(raw.get('version'))[:60]}")
    head: dict[str, Any] = {}
    for key, lo, hi in (("throttle_bytes_per_sec", MIN_THROTTLE_BYTES_PER_SEC, INT64_MAX), ("max_moves_per_broker", 1, INT32_MAX),
                        ("max_in_flight", 1, INT32_MAX)):
        if not int_in(raw.get(key), lo, hi):
            raise PlanDirError(f"{path}: {key}: expected an integer within {lo}..{hi}, got {json.dumps(raw.get(key))[:60]}")
        head[key] = raw[key]
    for key in ("estimated_seconds", "physical_bound_seconds"):
        if not finite_number(raw.get(key), 0):
            raise PlanDirError(f"{path}: {key}: expected a number >= 0, got {json.dumps(raw.get(key))[:60]}")
        head[key] = float(raw[key])
    efficiency = raw.get("throttle_efficiency", 1.0)
    if not finite_number(efficiency, MIN_THROTTLE_EFFICIENCY, 1):
        raise PlanDirError(f"{path}: throttle_efficiency: expected a number within {MIN_THROTTLE_EFFICIENCY}..1, "
                           f"got {json.dumps(efficiency)[:60]}")
    fixed = raw.get("move_fixed_seconds", 0.0)
    if not finite_number(fixed, 0, MAX_MOVE_FIXED_SECONDS):
        raise PlanDirError(f"{path}: move_fixed_seconds: expected a number within 0..{MAX_MOVE_FIXED_SECONDS:g}, "
                           f"got {json.dumps(fixed)[:60]}")
    room = _disk_room(raw.get("disk_room", {}), path)
    dir_room = _dir_room(raw.get("dir_room", {}), path)
    moves: list[ScheduledMove] = []
    last: dict[TP, int] = {}
    for n, st in enumerate(raw["steps"]):
        where = f"{path}: steps[{n}]"
        if not isinstance(st, dict):
            raise PlanDirError(f"{where}: expected an object")
        ids: dict[str, Any] = {k: st.get(k) for k in ("before", "replicas", "adds", "removes")}
        if not all(isinstance(v, list) and all(int_in(x, 0, INT32_MAX) for x in v) for v in ids.values()):
            raise PlanDirError(f"{where}: before, replicas, adds and removes must be lists of broker ids")
        if not (st.get("id") == n and isinstance(st.get("topic"), str) and int_in(st.get("partition"), 0, INT32_MAX)
                and isinstance(st.get("batch"), str) and int_in(st.get("leader"), -1, INT32_MAX)
                and int_in(st.get("bytes"), 0, INT64_MAX) and finite_number(st.get("produce_bytes_per_sec"), 0)
                and finite_number(st.get("estimated_start_s"), 0) and finite_number(st.get("estimated_end_s"), 0)):
            raise PlanDirError(f"{where}: needs id {n}, topic, partition, batch, leader, bytes, produce_bytes_per_sec and "
                               f"estimated_start_s/_end_s of the right types, got {json.dumps(st)[:200]}")
        tp = TP(st["topic"], st["partition"])
        before, replicas = tuple(ids["before"]), tuple(ids["replicas"])
        sources = st.get("sources", [])
        if not (isinstance(sources, list) and len(sources) in (0, len(before))
                and all(isinstance(d, str) and (d == "any" or d.startswith("/")) for d in sources)):
            raise PlanDirError(f"{where}: sources: expected one entry per replica of before, each \"any\" or an absolute "
                               f"path, got {json.dumps(sources)[:200]}")
        batch = batches.get(st["batch"])
        if batch is None or batch.before.get(tp) != before or batch.targets.get(tp) != replicas:
            raise PlanDirError(f"{where}: {tp} {list(before)} -> {list(replicas)} is not a move of batch {st['batch']!r}")
        if sorted(ids["adds"]) != sorted(set(replicas) - set(before)) or sorted(ids["removes"]) != sorted(set(before) - set(replicas)):
            raise PlanDirError(f"{where}: adds/removes are not the difference between before and replicas")
        if st.get("after") != last.get(tp):
            raise PlanDirError(f"{where}: after must be {last.get(tp)!r}, the partition's previous step")
        last[tp] = n
        moves.append(ScheduledMove(n, tp, st["batch"], before, replicas, tuple(ids["adds"]), tuple(ids["removes"]),
                                   st["after"], st["leader"], st["bytes"], float(st["produce_bytes_per_sec"]),
                                   float(st["estimated_start_s"]), float(st["estimated_end_s"]), tuple(sources)))
    problem = schedule_mismatch(moves, batches)
    if problem is not None:
        raise PlanDirError(f"{path}: {problem}")
    return PlanSchedule(head["throttle_bytes_per_sec"], head["max_moves_per_broker"], head["max_in_flight"],
                        head["estimated_seconds"], head["physical_bound_seconds"], tuple(moves), float(efficiency),
                        float(fixed), room, dir_room)


def _room_broker(key: Any, where: str, path: Path) -> int:
    """A broker id key of ``disk_room`` / ``dir_room``."""
    if not (isinstance(key, str) and is_ascii_digits(key) and int_in(int(key), 0, INT32_MAX)):
        raise PlanDirError(f"{path}: {where}: not a broker id")
    return int(key)


def _room_entry(v: Any, where: str, path: Path) -> tuple[int, int]:
    """``{"bytes": ..., "limit_bytes": ...}``, whole bytes >= 0: one broker's or dir's room."""
    if not (isinstance(v, dict) and set(v) == {"bytes", "limit_bytes"} and int_in(v["bytes"], 0, INT64_MAX)
            and int_in(v["limit_bytes"], 0, INT64_MAX)):
        raise PlanDirError(f"{path}: {where}: expected {{\"bytes\": ..., \"limit_bytes\": ...}}, whole bytes >= 0, "
                           f"got {json.dumps(v)[:80]}")
    return v["bytes"], v["limit_bytes"]


def _disk_room(raw: Any, path: Path) -> tuple[tuple[int, int, int], ...]:
    """schedule.json's ``disk_room``: per broker id, ``bytes`` (its partition bytes before the plan) and
    ``limit_bytes``, whole bytes >= 0."""
    if not isinstance(raw, dict):
        raise PlanDirError(f"{path}: disk_room: expected an object of broker id -> {{\"bytes\": ..., \"limit_bytes\": ...}}, "
                           f"got {json.dumps(raw)[:60]}")
    return tuple(sorted((_room_broker(key, f"disk_room.{key}", path), *_room_entry(v, f"disk_room.{key}", path))
                        for key, v in raw.items()))


def _dir_room(raw: Any, path: Path) -> tuple[tuple[int, str, int, int], ...]:
    """schedule.json's ``dir_room``: per broker id, per log dir (an absolute path), ``bytes`` and ``limit_bytes`` as in
    ``disk_room``."""
    if not isinstance(raw, dict):
        raise PlanDirError(f"{path}: dir_room: expected an object of broker id -> log dir -> {{\"bytes\": ..., "
                           f"\"limit_bytes\": ...}}, got {json.dumps(raw)[:60]}")
    out = []
    for key, dirs in raw.items():
        broker = _room_broker(key, f"dir_room.{key}", path)
        if not isinstance(dirs, dict):
            raise PlanDirError(f"{path}: dir_room.{key}: expected an object of log dir -> {{\"bytes\": ..., "
                               f"\"limit_bytes\": ...}}, got {json.dumps(dirs)[:60]}")
        for d, v in dirs.items():
            if not d.startswith("/"):
                raise PlanDirError(f"{path}: dir_room.{key}.{d}: not an absolute path")
            out.append((broker, d, *_room_entry(v, f"dir_room.{key}.{d}", path)))
    return tuple(sorted(out))


def schedule_mismatch(moves: list[ScheduledMove] | tuple[ScheduledMove, ...], batches: dict[str, Batch]) -> str | None:
    """How the schedule's steps differ from the move batches they were derived from (None: they agree).

    The planner writes one step per batch entry that changes a replica set (reorders run before the
    schedule, as waves) and a partition's steps in the order of its batches. Each step is already known to be a
    move of the batch it names; this checks the other direction, so a step removed, repeated or put
    out of its batches' order is refused before anything runs, not found by ``verify`` afterwards.
    """
    order = {bid: i for i, bid in enumerate(batches)}
    seen: dict[tuple[str, TP], int] = {}
    previous: dict[TP, ScheduledMove] = {}
    for m in moves:
        if batches[m.batch].kind != "move":
            return f"steps[{m.id}]: {m.tp} is in batch {m.batch}, a {batches[m.batch].kind} batch, which runs before the schedule"
        if (m.batch, m.tp) in seen:
            return f"steps[{m.id}]: {m.tp} repeats steps[{seen[(m.batch, m.tp)]}] (both batch {m.batch})"
        seen[(m.batch, m.tp)] = m.id
        prior = previous.get(m.tp)
        if prior is not None and order[prior.batch] > order[m.batch]:
            return (f"steps[{m.id}]: {m.tp} moves in batch {m.batch} after its step {prior.id} of batch {prior.batch}, "
                    f"but the batch files run batch {m.batch} first")
        previous[m.tp] = m
    for bid, b in batches.items():
        for tp, target in sorted(b.targets.items()):
            # A replica set left as it is needs no data copied: a reorder, run before the schedule.
            if set(target) != set(b.before[tp]) and (bid, tp) not in seen:
                return (f"{tp}: {batch_file(bid, 'reassignment')} moves it {list(b.before[tp])} -> {list(target)}, "
                        "and no step of the schedule does")
    return None


def load_plan(plan_dir: Path | str, require_passed: bool = True, require_approval: bool = False) -> Plan:
    """The plan, once ``verify_plan`` proved every byte unchanged and (by default) validation passed for it."""
    plan_dir = Path(plan_dir)
    manifest, plan_hash = verify_plan(plan_dir)
    if require_passed:
        require_validated(plan_dir, plan_hash)
    if require_approval:
        require_approved(plan_dir, plan_hash)
    files = manifest["files"]
    batches = []
    for b in manifest["batches"]:
        bid = b["id"]
        rels = {kind: batch_file(bid, kind) for kind in BATCH_FILE_KINDS}
        raw_targets = _read_json(plan_dir / rels["reassignment"], rels["reassignment"])
        targets = _assignment(raw_targets, plan_dir / rels["reassignment"])
        before = _assignment(_read_json(plan_dir / rels["rollback"], rels["rollback"]), plan_dir / rels["rollback"])
        if set(before) != set(targets):
            raise PlanDirError(f"{plan_dir / rels['rollback']}: partitions differ from {rels['reassignment']}")
        est = b.get("estimated_seconds")
        batches.append(
            Batch(bid, str(b.get("kind", "move")), targets, before,
                  _throttles(_read_json(plan_dir / rels["throttles"], rels["throttles"]), plan_dir / rels["throttles"],
                             before, targets),
                  float(est) if isinstance(est, (int, float)) and not isinstance(est, bool) else None,
                  b.get("bytes") if isinstance(b.get("bytes"), int) else None,
                  _log_dirs(raw_targets, plan_dir / rels["reassignment"]))
        )
    elections: tuple[TP, ...] = ()
    if ELECTION_FILE in files:
        raw = _read_json(plan_dir / ELECTION_FILE, ELECTION_FILE)
        parts = raw.get("partitions") if isinstance(raw, dict) else None
        if not isinstance(parts, list):
            raise PlanDirError(f"{plan_dir / ELECTION_FILE}: expected {{\"partitions\": [{{\"topic\": ..., \"partition\": ...}}]}}")
        if not all(isinstance(p, dict) and isinstance(p.get("topic"), str) and int_in(p.get("partition"), 0, INT32_MAX)
                   for p in parts):
            raise PlanDirError(f"{plan_dir / ELECTION_FILE}: every entry needs topic (string) and partition (int32)")
        elections = tuple(TP(p["topic"], p["partition"]) for p in parts)
    schedule = None
    if SCHEDULE_FILE in files:
        schedule = _schedule(_read_json(plan_dir / SCHEDULE_FILE, SCHEDULE_FILE), plan_dir / SCHEDULE_FILE,
                             {b.id: b for b in batches})
    options = manifest.get("options") or {}
    return Plan(plan_dir, manifest, plan_hash, str(manifest.get("cluster_id", "")), dict(options), tuple(batches), elections,
                schedule)
