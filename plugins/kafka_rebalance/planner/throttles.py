"""KIP-73 throttle configs for one batch, as ``kafka-reassign-partitions.sh --execute --throttle`` sets them.

* topic config ``leader.replication.throttled.replicas``: every replica BEFORE the move, ``partition:broker``;
* topic config ``follower.replication.throttled.replicas``: destinations that were not replicas;
* broker configs ``leader.replication.throttled.rate`` and ``follower.replication.throttled.rate``
  on every broker that is a replica before or after the move.
Entries are sorted by partition then broker. A reorder-only batch sets nothing.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from kafka_rebalance.cluster.admin import FOLLOWER_RATE, FOLLOWER_REPLICAS, LEADER_RATE, LEADER_REPLICAS
from kafka_rebalance.planner.steps import Step, ragged, step_fields, topic_ranks


def batch_throttles(steps: Iterable[Step], rate: int) -> dict[str, Any]:
    steps = list(steps)
    return batches_throttles(steps, np.zeros(len(steps), dtype=np.int64), 1, rate)[0]


def batches_throttles(steps: Sequence[Step], batch: np.ndarray, n_batches: int, rate: int) -> list[dict[str, Any]]:
    """``batch_throttles`` of each of ``n_batches`` batches, step i in batch ``batch[i]``, in one pass over the steps
    (in any order: the order they were made in reads fastest, ``steps.step_fields``). A plan at a million partitions
    throttles two million replicas in some 15,000 batches: a set and a sort per batch and topic cost seconds."""
    n = len(steps)
    f = step_fields(steps, "adds", "removes", "topic", "partition", "before", "after")
    moving = (np.fromiter(map(len, f["adds"]), dtype=np.int64, count=n) > 0) | (
        np.fromiter(map(len, f["removes"]), dtype=np.int64, count=n) > 0)  # (not ``Step.reorder``)
    names = sorted(set(f["topic"]))
    topic, part = topic_ranks(f["topic"]), np.array(f["partition"], dtype=np.int64)
    before_at, before = ragged(f["before"])
    after_at, after = ragged(f["after"])
    of_before = np.repeat(np.arange(n, dtype=np.int64), np.diff(before_at))
    of_after = np.repeat(np.arange(n, dtype=np.int64), np.diff(after_at))
    # brokers as 0.. (any ids) and each step's brokers as keys step * width + broker
    base = int(min(before.min(initial=0), after.min(initial=0)))
    before, after = before - base, after - base
    width = int(max(before.max(initial=0), after.max(initial=0))) + 1
    held = np.sort(of_before * width + before)
    wanted = of_after * width + after
    found = held[np.minimum(np.searchsorted(held, wanted), len(held) - 1)] == wanted if len(held) else wanted < 0
    lead = moving[of_before]
    follow = moving[of_after] & ~found  # a destination: not a replica before
    value = str(rate)
    out: list[dict[str, Any]] = [{"rate_bytes_per_sec": rate, "brokers": {}, "topics": {}} for _ in range(n_batches)]
    listed = moving[of_after]
    # (sorted, not np.unique: its hash table took 3 s for the two million keys of a million-partition plan)
    brokers = np.sort(np.concatenate([batch[of_before[lead]] * width + before[lead],
                                      batch[of_after[listed]] * width + after[listed]]))  # fmt: skip
    brokers = brokers[np.r_[True, brokers[1:] != brokers[:-1]]] if len(brokers) else brokers
    # (strings made once per broker and per partition, not per entry: at a million partitions two million entries)
    entry_broker = (brokers % width).tolist()
    id_text = {b: str(b + base) for b in set(entry_broker)}  # (every broker of a step is in some batch's list)
    starts = np.searchsorted(brokers // width, np.arange(n_batches + 1)).tolist()
    listed_ids = list(map(id_text.__getitem__, entry_broker))
    for g in np.flatnonzero(np.diff(starts)).tolist():
        out[g]["brokers"] = {b: {FOLLOWER_RATE: value, LEADER_RATE: value} for b in listed_ids[starts[g] : starts[g + 1]]}
    n_t = len(names)
    for key, rows, ids in ((LEADER_REPLICAS, of_before[lead], before[lead]),
                           (FOLLOWER_REPLICAS, of_after[follow], after[follow])):  # fmt: skip
        # (batch, topic) then (partition, broker), each pair as one key: two keys to sort, not four
        group, pair = batch[rows] * n_t + topic[rows], part[rows] * width + ids
        if not len(group):
            continue
        span = int(pair.max()) + 1
        if (n_batches * n_t) < 2**62 // span:  # one key to sort (a lexsort of two is two stable sorts)
            both = np.sort(group * span + pair)
            both = both[np.r_[True, both[1:] != both[:-1]]]
            group, pair = both // span, both % span
        else:
            by = np.lexsort((pair, group))
            group, pair = group[by], pair[by]
            keep = np.r_[True, (group[1:] != group[:-1]) | (pair[1:] != pair[:-1])]
            group, pair = group[keep], pair[keep]
        # Each group's list made by one join over every entry, each entry's broker followed by "," or, where its
        # group ends, "\0" to split on (a join per group cost more than the strings: hundreds of thousands of groups)
        last = np.r_[group[1:] != group[:-1], True]
        partitions = (pair // width).tolist()
        prefix = {x: f"{x}:" for x in set(partitions)}
        suffix = {2 * b + end: f"{text}{sep}" for b, text in id_text.items() for end, sep in ((0, ","), (1, "\0"))}
        lists = "".join(map(operator.add, map(prefix.__getitem__, partitions),
                            map(suffix.__getitem__, (pair % width * 2 + last).tolist()))).split("\0")  # fmt: skip
        for gt, text in zip(group[last].tolist(), lists, strict=False):  # (``lists`` ends with the empty string)
            topics, name = out[gt // n_t]["topics"], names[gt % n_t]
            if key == LEADER_REPLICAS:
                topics[name] = {key: text}
            elif name in topics:  # (every moving step has replicas before: its topic is listed)
                topics[name][key] = text
    return out

