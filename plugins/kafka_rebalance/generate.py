"""Synthetic clusters for demos, tests and benchmarks.

Vectorised with NumPy and written straight to Arrow, so 1,000 brokers and
2 million partitions take seconds. Everything derives from one seed: the same
parameters give byte-identical files.

Shape of what it makes, and why:
* brokers get racks round-robin (``rack-0``, ``rack-1``...), so the rack-interlaced
  broker list has equal racks, like a well-run fleet;
* replicas of a partition sit on consecutive positions of that list plus a random
  multiple of the rack count: distinct racks whenever racks >= RF and racks divide
  the existing broker count, as Kafka's rack-aware placement gives;
* ``replica_skew`` biases where partitions start, so some brokers carry more
  replicas and more preferred leaderships (the drift a real cluster accumulates);
* ``leader_skew`` is the fraction of partitions currently led by a non-preferred
  replica (what a restart without auto leader rebalance leaves behind);
* ``new_brokers`` are added with no replicas at all (a fresh scale-out);
* ``under_replicated`` drops a follower out of the ISR (an out-of-sync follower),
  ``offline_replicas`` marks a follower offline (a failed log dir: out of the ISR and
  listed in ``offline_replicas``), ``leaderless`` leaves a partition without a leader
  (-1, only the preferred replica remembered in the ISR), as real clusters have. These
  draw from their own random stream, so at 0 (the default) files stay byte-identical;
* sizes are log-normal per topic and per partition: a few huge partitions, many
  small ones, which is what makes "move the fewest bytes" matter.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.snapshot import (
    Snapshot,
    partition_schema,
    snapshot_from_dict,
    write_parquet,
)
from kafka_rebalance.userinput import INT64_MAX, check_output_file, cluster_id_problem, finite_number, int_in

MAX_REPLICA_SKEW = 100.0  # 100: the first brokers get ~100x the replicas; more is a typo
MAX_PARTITION_MB = 1024.0 * 1024  # 1 TiB per partition


@dataclass(frozen=True)
class ClusterSpec:
    cluster_id: str = "synthetic"
    brokers: int = 6
    racks: int = 3
    topics: int = 10
    partitions: int = 120
    replication_factor: int = 3
    replica_skew: float = 0.0
    leader_skew: float = 0.0
    new_brokers: int = 0
    dead_brokers: int = 0
    under_replicated: float = 0.0
    offline_replicas: float = 0.0
    leaderless: float = 0.0
    mean_partition_mb: float = 256.0
    controller: str = "kraft"
    threshold_percentage: int | None = None
    seed: int = 0

    def check(self) -> None:
        problems = []
        existing = self.brokers - self.new_brokers
        if self.brokers < 1 or self.brokers > 10_000:
            problems.append(f"--brokers must be 1..10000, got {self.brokers}")
        if self.racks < 0 or self.racks > self.brokers:
            problems.append(f"--racks must be 0 (no racks) .. brokers ({self.brokers}), got {self.racks}")
        if self.new_brokers < 0 or existing < 1:
            problems.append(f"--new-brokers must leave at least one existing broker, got {self.new_brokers} of {self.brokers}")
        if self.replication_factor < 1 or self.replication_factor > max(existing, 0):
            problems.append(
                f"--replication-factor must be 1..{existing} (existing brokers), got {self.replication_factor}"
            )
        if self.topics < 1 or self.partitions < self.topics:
            problems.append(f"--partitions ({self.partitions}) must be >= --topics ({self.topics}) >= 1")
        if self.partitions > 5_000_000:
            problems.append(f"--partitions must be at most 5,000,000, got {self.partitions}")
        for name, v in (("--leader-skew", self.leader_skew), ("--under-replicated", self.under_replicated),
                        ("--offline-replicas", self.offline_replicas), ("--leaderless", self.leaderless)):
            if not finite_number(v, 0.0, 1.0):
                problems.append(f"{name} must be within 0..1, got {v}")
        if not finite_number(self.replica_skew, 0.0, MAX_REPLICA_SKEW):
            problems.append(f"--replica-skew must be within 0..{MAX_REPLICA_SKEW:g}, got {self.replica_skew}")
        if not (finite_number(self.mean_partition_mb, 0.0, MAX_PARTITION_MB) and self.mean_partition_mb > 0):
            problems.append(f"--mean-partition-mb must be within 0..{MAX_PARTITION_MB:g} (exclusive of 0), got {self.mean_partition_mb}")
        if not int_in(self.seed, 0, INT64_MAX):
            problems.append(f"--seed must be within 0..{INT64_MAX}, got {self.seed}")
        if self.threshold_percentage is not None and not int_in(self.threshold_percentage, 0, 100):
            problems.append(f"--threshold-percentage must be within 0..100, got {self.threshold_percentage}")
        bad_id = cluster_id_problem(self.cluster_id)
        if bad_id:
            problems.append(f"--cluster-id: {bad_id}")
        if not 0 <= self.dead_brokers < existing:
            problems.append(f"--dead-brokers must be 0..{existing - 1}, got {self.dead_brokers}")
        if self.controller not in ("kraft", "zookeeper"):
            problems.append(f"--controller must be kraft or zookeeper, got {self.controller}")
        if problems:
            raise RebalanceError("generate-cluster: " + "; ".join(problems))


def _arrays(spec: ClusterSpec) -> dict[str, Any]:
    rng = np.random.default_rng(spec.seed)
    n_b, rf, n_p = spec.brokers, spec.replication_factor, spec.partitions
    existing = n_b - spec.new_brokers
    racks = [f"rack-{i % spec.racks}" for i in range(n_b)] if spec.racks else [None] * n_b

    # Rack-interlaced order of the existing brokers (ids 0..existing-1).
    if spec.racks:
        order = sorted(range(existing), key=lambda b: (b // spec.racks, racks[b]))
    else:
        order = list(range(existing))
    order_arr = np.asarray(order, dtype=np.int32)

    # Partitions per topic: heavy-tailed, every topic at least one partition.
    weights = rng.lognormal(0.0, 1.0, spec.topics)
    counts = np.maximum(1, np.floor(weights / weights.sum() * (n_p - spec.topics)).astype(np.int64) + 1)
    counts[-1] += n_p - counts.sum()
    if counts[-1] < 1:  # rounding pushed the last topic under one partition
        counts = np.full(spec.topics, n_p // spec.topics, dtype=np.int64)
        counts[: n_p % spec.topics] += 1
    topic_idx = np.repeat(np.arange(spec.topics), counts)
    part_ids = np.arange(n_p) - np.repeat(np.cumsum(counts) - counts, counts)

    # Where each partition starts in the interlaced list; skew favours the front.
    pos = np.arange(existing, dtype=np.float64)
    w = 1.0 + spec.replica_skew * (1.0 - pos / max(existing - 1, 1))
    first = rng.choice(existing, size=n_p, p=w / w.sum())
    # Followers: same rack slot as "first + j" (so racks differ), in a group of brokers
    # drawn with the same skew, so replica counts are skewed too, not just leaders.
    step = max(spec.racks, 1)
    groups = max(existing // step, 1)
    gpos = np.arange(groups, dtype=np.float64)
    gw = 1.0 + spec.replica_skew * (1.0 - gpos / max(groups - 1, 1))
    group = rng.choice(groups, size=(n_p, rf), p=gw / gw.sum())
    idx = group * step + (first[:, None] + np.arange(rf)[None, :]) % step
    idx[:, 0] = first
    idx = np.where(idx < existing, idx, (first[:, None] + np.arange(rf)[None, :]) % existing)
    # More replicas than racks can land two on one broker: use consecutive positions there.
    collide = np.zeros(n_p, dtype=bool)
    for a in range(rf):
        for b in range(a + 1, rf):
            collide |= idx[:, a] == idx[:, b]
    idx[collide] = (first[collide, None] + np.arange(rf)[None, :]) % existing
    replicas = order_arr[idx]

    # Current leader: preferred replica, except a leader_skew share led by the 2nd replica.
    led_by_other = (rng.random(n_p) < spec.leader_skew) & (rf > 1)
    leader = np.where(led_by_other, replicas[:, min(1, rf - 1)], replicas[:, 0]).astype(np.int32)

    # ISR: all replicas, but an under_replicated share has lost its last replica.
    isr_len = np.full(n_p, rf, dtype=np.int64)
    if rf > 1:
        isr_len[rng.random(n_p) < spec.under_replicated] = rf - 1
    dead = set(range(existing - spec.dead_brokers, existing))
    topic_scale = rng.lognormal(np.log(spec.mean_partition_mb * 2**20), 1.0, spec.topics)
    sizes = (topic_scale[topic_idx] * rng.lognormal(-0.5, 1.0, n_p)).astype(np.int64)
    # A day's retention-ish: produce rate proportional to size with noise.
    rates = np.round(sizes / 86_400.0 * rng.lognormal(0.0, 0.5, n_p), 1)

    isr_rows = replicas.copy()
    if dead:
        dead_mask = np.isin(replicas, list(dead))
        # A dead broker drops out of the ISR; a dead leader hands leadership to a live ISR member.
        leader_dead = np.isin(leader, list(dead))
        alt = np.where(~dead_mask, replicas, -1).max(axis=1)
        leader = np.where(leader_dead, alt, leader).astype(np.int32)
    else:
        dead_mask = np.zeros_like(replicas, dtype=bool)
    keep = np.arange(rf)[None, :] < isr_len[:, None]
    # The dropped replica (last) never is the leader unless rf==1.
    keep &= ~dead_mask
    keep |= (isr_rows == leader[:, None]) & ~dead_mask
    offline = np.zeros_like(replicas, dtype=bool)
    if spec.offline_replicas or spec.leaderless:
        # Own stream: the draws above (and so every default file) stay exactly as they were.
        extra = np.random.default_rng([spec.seed, 1])
        if spec.offline_replicas and rf > 1:
            # A follower's log dir failed: it leaves the ISR and is listed offline; never the leader.
            hit = (extra.random(n_p) < spec.offline_replicas) & (replicas[:, rf - 1] != leader)
            offline[hit, rf - 1] = True
            keep &= ~offline
        if spec.leaderless:
            # No replica could take over (unclean election off): no leader, the ISR remembers the
            # preferred replica only, as Kafka keeps the last ISR member.
            hit = extra.random(n_p) < spec.leaderless
            leader = np.where(hit, -1, leader).astype(np.int32)
            first_only = (np.arange(rf)[None, :] == 0) & ~dead_mask & ~offline
            keep = np.where(hit[:, None], first_only, keep)
    return {
        "racks": racks,
        "dead": dead,
        "topic_idx": topic_idx,
        "part_ids": part_ids.astype(np.int32),
        "replicas": replicas.astype(np.int32),
        "leader": leader,
        "isr_mask": keep,
        "offline_mask": offline,
        "sizes": sizes,
        "rates": rates,
    }


def _header(spec: ClusterSpec, racks: list[str | None], dead: set[int]) -> dict[str, Any]:
    configs: dict[str, str] = {}
    if spec.threshold_percentage is not None:
        configs["leader.imbalance.per.broker.percentage"] = str(spec.threshold_percentage)
    return {
        "cluster_id": spec.cluster_id,
        "captured_at": "2026-01-01T00:00:00Z",
        "controller": spec.controller,
        "configs": configs,
        "brokers": [
            {"id": b, "rack": racks[b], "alive": b not in dead, "configs": {}} for b in range(spec.brokers)
        ],
        "topics": {_topic_name(t, spec.topics): {"configs": {}} for t in range(spec.topics)},
    }


def _topic_name(t: int, n: int) -> str:
    return f"topic-{t:0{max(3, len(str(n - 1)))}d}"


def generate(spec: ClusterSpec, out: str | Path) -> Path:
    """Write a synthetic snapshot; ``.parquet`` for big clusters, ``.json`` for small ones."""
    import pyarrow as pa

    spec.check()
    out = check_output_file(out, "--out")
    a = _arrays(spec)
    names = np.asarray([_topic_name(t, spec.topics) for t in range(spec.topics)], dtype=object)
    n_p, rf = len(a["leader"]), spec.replication_factor
    offsets = pa.array(np.arange(0, (n_p + 1) * rf, rf, dtype=np.int32))
    replicas = pa.ListArray.from_arrays(offsets, pa.array(a["replicas"].ravel()))
    mask = a["isr_mask"]
    isr_offsets = np.concatenate([[0], np.cumsum(mask.sum(axis=1))]).astype(np.int32)
    isr = pa.ListArray.from_arrays(pa.array(isr_offsets), pa.array(a["replicas"][mask].ravel()))
    off = a["offline_mask"]
    off_offsets = np.concatenate([[0], np.cumsum(off.sum(axis=1))]).astype(np.int32)
    offline = pa.ListArray.from_arrays(pa.array(off_offsets), pa.array(a["replicas"][off].ravel(), pa.int32()))
    table = pa.table(
        {
            "topic": pa.DictionaryArray.from_arrays(pa.array(a["topic_idx"].astype(np.int32)), pa.array(names)).cast(pa.string()),
            "partition": pa.array(a["part_ids"]),
            "replicas": replicas,
            "leader": pa.array(a["leader"]),
            "isr": isr,
            "size_bytes": pa.array(a["sizes"]),
            "bytes_in_per_sec": pa.array(a["rates"]),
            "offline_replicas": offline,
        },
        schema=partition_schema(),
    )
    header = _header(spec, a["racks"], a["dead"])
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix == ".parquet":
        write_parquet(table, header, out)
    elif out.suffix == ".json":
        if n_p > 200_000:
            raise RebalanceError(f"{out}: {n_p} partitions is too many for JSON; write .parquet")
        from kafka_rebalance.snapshot import write_snapshot

        rows = table.to_pylist()
        for r in rows:
            if not r["offline_replicas"]:
                r.pop("offline_replicas")
        write_snapshot(snapshot_from_dict({**header, "partitions": rows}, str(out)), out)
    else:
        raise RebalanceError(f"{out}: output must end in .json or .parquet")
    return out


def generate_snapshot(spec: ClusterSpec) -> Snapshot:
    """In-memory variant for tests and the simulator (small clusters)."""
    import tempfile

    from kafka_rebalance.snapshot import load_snapshot

    with tempfile.TemporaryDirectory() as tmp:
        path = generate(spec, Path(tmp) / "cluster.parquet")
        return load_snapshot(path)
