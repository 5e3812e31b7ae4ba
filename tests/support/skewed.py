"""Clusters the generator does not make: heavy-tailed sizes, racks of unequal sizes, skewed placement.

``kafka_rebalance.generate`` places replicas rack-interlaced over equal racks with a mild
skew; operators' clusters drift further. This maker builds ``Snapshot`` objects directly:

* racks of unequal sizes (``rack_shares``, e.g. 45 / 35 / 20 % of the brokers);
* a per-broker pull drawn log-normal (``skew`` is its sigma), so a few brokers attract far
  more partitions than the rest, and big partitions favour the heavy brokers even more
  (the pull is raised to 1 + the partition's size rank, in [0, 1]);
* sizes log-normal (``sizes="lognormal"``, sigma 1.5) or Pareto (``sizes="pareto"``,
  alpha 1.3, capped at 2,000x the median): a few huge partitions, many small ones;
* a mix of replication factors (``rf_mix``: RF -> share of topics), each partition
  rack-safe (at most ceil(RF / racks) per rack, over min(RF, racks) racks);
* ``new_brokers`` empty brokers, the last of each rack in turn (a fresh scale-out).

Everything derives from ``seed``: the same arguments give the same snapshot.
"""

from __future__ import annotations

import numpy as np

from kafka_rebalance.snapshot import Broker, Partition, Snapshot


def skewed_snapshot(
    brokers: int,
    partitions: int,
    *,
    rack_shares: tuple[float, ...] = (0.45, 0.35, 0.20),
    rf_mix: dict[int, float] | None = None,
    sizes: str = "lognormal",
    skew: float = 0.5,
    new_brokers: int = 0,
    topics: int | None = None,
    mean_bytes: float = 256 * 2**20,
    seed: int = 0,
) -> Snapshot:
    rng = np.random.default_rng(seed)
    rf_mix = rf_mix or {3: 1.0}
    n_racks = len(rack_shares)
    # Rack of each broker: contiguous blocks of the given shares (at least one broker per rack).
    per_rack = np.maximum(1, np.floor(np.asarray(rack_shares) / sum(rack_shares) * brokers).astype(int))
    per_rack[0] += brokers - per_rack.sum()
    rack_of = np.repeat(np.arange(n_racks), per_rack)
    # New brokers: the last of each rack in turn, never a rack's only broker.
    new = np.zeros(brokers, dtype=bool)
    for k in range(new_brokers):
        g = k % n_racks
        left = np.flatnonzero((rack_of == g) & ~new)
        if len(left) > 1:
            new[left[-1]] = True
    pull = rng.lognormal(0.0, skew, brokers)
    pull[new] = 0.0

    n_topics = topics or max(5, partitions // 500)
    tw = rng.lognormal(0.0, 1.0, n_topics)
    counts = np.maximum(1, np.floor(tw / tw.sum() * partitions).astype(np.int64))
    counts[int(np.argmax(counts))] += partitions - counts.sum()
    rfs = sorted(rf_mix)
    topic_rf = rng.choice(rfs, size=n_topics, p=np.asarray([rf_mix[r] for r in rfs]) / sum(rf_mix.values()))
    topic_scale = rng.lognormal(0.0, 1.0, n_topics)

    if sizes == "pareto":
        raw = (rng.pareto(1.3, partitions) + 1.0)
        raw = np.minimum(raw, 2000.0 * np.median(raw))
    else:
        raw = rng.lognormal(0.0, 1.5, partitions)
    topic_idx = np.repeat(np.arange(n_topics), counts)
    raw = raw * topic_scale[topic_idx]
    size_arr = np.maximum(1, (raw / raw.mean() * mean_bytes)).astype(np.int64)
    # Big partitions lean harder on the heavy brokers: pull ** (1 + size rank in [0, 1]).
    rank = np.argsort(np.argsort(size_arr)) / max(partitions - 1, 1)

    members = [np.flatnonzero((rack_of == g) & ~new) for g in range(n_racks)]
    parts: list[Partition] = []
    p_in_topic = 0
    prev_topic = -1
    for i in range(partitions):
        t = int(topic_idx[i])
        p_in_topic = p_in_topic + 1 if t == prev_topic else 0
        prev_topic = t
        rf = int(topic_rf[t])
        cap = -(-rf // n_racks)
        spread = min(rf, n_racks)
        # Racks: first `spread` distinct racks (by size-weighted draw), then the rest up to the cap.
        rack_w = np.asarray([len(m) for m in members], dtype=np.float64)
        chosen_racks = list(rng.choice(n_racks, size=spread, replace=False, p=rack_w / rack_w.sum()))
        per: dict[int, int] = {g: 1 for g in chosen_racks}
        while sum(per.values()) < rf:
            room = [g for g in range(n_racks) if per.get(g, 0) < min(cap, len(members[g]))]
            g = int(rng.choice(room))
            per[g] = per.get(g, 0) + 1
        reps: list[int] = []
        power = 1.0 + rank[i]
        for g, k in per.items():
            w = pull[members[g]] ** power
            picks = rng.choice(members[g], size=k, replace=False, p=w / w.sum())
            reps.extend(int(b) for b in picks)
        rng.shuffle(reps)
        parts.append(Partition(
            topic=f"topic-{t:04d}", partition=p_in_topic, replicas=tuple(reps), leader=reps[0], isr=tuple(reps),
            size_bytes=int(size_arr[i]), bytes_in_per_sec=round(float(size_arr[i]) / 604_800.0, 1),
        ))
    parts.sort(key=lambda p: (p.topic, p.partition))
    broker_list = tuple(Broker(id=b, rack=f"rack-{chr(97 + int(rack_of[b]))}") for b in range(brokers))
    return Snapshot(
        cluster_id=f"skewed-{brokers}-{partitions}-{sizes}-{seed}", brokers=broker_list, partitions=tuple(parts),
        captured_at="2026-01-01T00:00:00Z",
    )
