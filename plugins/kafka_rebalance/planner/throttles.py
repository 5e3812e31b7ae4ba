"""KIP-73 throttle configs for one batch, as ``kafka-reassign-partitions.sh --execute --throttle`` sets them.

* topic config ``leader.replication.throttled.replicas``: every replica BEFORE the move, ``partition:broker``;
* topic config ``follower.replication.throttled.replicas``: destinations that were not replicas;
* broker configs ``leader.replication.throttled.rate`` and ``follower.replication.throttled.rate``
  on every broker that is a replica before or after the move.
Entries are sorted by partition then broker. A reorder-only batch sets nothing.
"""

from __future__ import annotations

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
    # (strings made once per broker, not per entry: at a million partitions two million entries)
    entry_broker = (brokers % width).tolist()
    id_text = {b: str(b + base) for b in set(entry_broker)}  # (every broker of a step is in some batch's list)
    starts = np.searchsorted(brokers // width, np.arange(n_batches + 1)).tolist()
    listed_ids = list(map(id_text.__getitem__, entry_broker))
    # Every broker's rates are the same two texts: one dict shared by every entry (the plan's throttles are only read
    # and written out), not two million alike.
    rates = {FOLLOWER_RATE: value, LEADER_RATE: value}
    for g in np.flatnonzero(np.diff(starts)).tolist():
        out[g]["brokers"] = dict.fromkeys(listed_ids[starts[g] : starts[g + 1]], rates)
    n_t = len(names)
    (lead_groups, lead_lists), (follow_groups, follow_lists) = (
        _replica_lists(batch[rows] * n_t + topic[rows], part[rows], ids + base)
        for rows, ids in ((of_before[lead], before[lead]), (of_after[follow], after[follow])))  # fmt: skip
    # Every moving step has replicas before, so each (batch, topic) with new replicas has a leader list too.
    at = np.minimum(np.searchsorted(lead_groups, follow_groups), max(len(lead_groups) - 1, 0))
    kept = lead_groups[at] == follow_groups if len(lead_groups) else np.zeros(len(follow_groups), dtype=bool)
    follows = np.full(len(lead_groups), None, dtype=object)
    follows[at[kept]] = np.array(follow_lists, dtype=object)[kept]
    values = [{LEADER_REPLICAS: a} if b is None else {LEADER_REPLICAS: a, FOLLOWER_REPLICAS: b}
              for a, b in zip(lead_lists, follows.tolist(), strict=True)]  # fmt: skip
    group_names = list(map(names.__getitem__, (lead_groups % n_t).tolist()))
    bounds = np.searchsorted(lead_groups // n_t, np.arange(n_batches + 1)).tolist()
    for g in np.flatnonzero(np.diff(bounds)).tolist():  # (groups sorted by batch, then topic: each batch's a slice)
        lo, hi = bounds[g], bounds[g + 1]
        out[g]["topics"] = dict(zip(group_names[lo:hi], values[lo:hi], strict=True))
    return out


def _replica_lists(group: np.ndarray, part: np.ndarray, broker: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """The distinct groups (sorted) and each one's ``partition:broker`` list, its distinct entries sorted by partition
    then broker and joined by commas."""
    if not len(group):
        return group, []
    pair_width = int(broker.max()) + 1
    pair = part * pair_width + broker
    span = int(pair.max()) + 1
    if int(group.max()) < 2**62 // span:  # one key to sort (a lexsort of two is two stable sorts)
        both = np.sort(group * span + pair)
        both = both[np.r_[True, both[1:] != both[:-1]]]
        group, pair = both // span, both % span
    else:
        by = np.lexsort((pair, group))
        group, pair = group[by], pair[by]
        keep = np.r_[True, (group[1:] != group[:-1]) | (pair[1:] != pair[:-1])]
        group, pair = group[keep], pair[keep]
    last = np.r_[group[1:] != group[:-1], True]
    lists = _texts(pair // pair_width, pair % pair_width, last)
    return group[last], lists


def _texts(part: np.ndarray, broker: np.ndarray, last: np.ndarray) -> list[str]:
    """The entries ``partition:broker`` (non-negative ints), joined by commas up to each ``last`` entry: one list per
    run. Written as ASCII digits into one buffer by NumPy, a pass per digit: a Python string per entry and a join over
    two million of them took a second at a million partitions."""
    if min(int(part.min()), int(broker.min())) < 0:  # (the snapshot refuses them: a caller's bug)
        raise ValueError("throttles: a negative partition number or broker id")
    p_digits, b_digits = _digits(part), _digits(broker)
    end = np.cumsum(p_digits + b_digits + 2)
    start = end - (p_digits + b_digits + 2)
    text = np.empty(int(end[-1]), dtype=np.uint8)
    _write(text, start + p_digits - 1, part, p_digits)
    text[start + p_digits] = ord(":")
    _write(text, end - 2, broker, b_digits)
    text[end - 1] = np.where(last, 0, ord(","))  # (NUL: where a list ends, to split on)
    return text.tobytes().decode("ascii").split("\0")[:-1]


def _digits(x: np.ndarray) -> np.ndarray:
    """The number of decimal digits of each non-negative int."""
    n = np.ones(len(x), dtype=np.int64)
    rest = x // 10
    while rest.any():
        n += rest > 0
        rest //= 10
    return n


def _write(text: np.ndarray, last_at: np.ndarray, x: np.ndarray, digits: np.ndarray) -> None:
    """Each ``x`` in decimal into ``text``, its last digit at ``last_at``."""
    rest = x.copy()
    for k in range(int(digits.max(initial=0))):
        on = digits > k
        text[last_at[on] - k] = ord("0") + rest[on] % 10
        rest //= 10
