"""From an original and a final replica list to the reassignment steps that get there.

A partition whose replica SET is unchanged needs one metadata-only reorder. One
whose set changes gets as many steps as ``--max-new-replicas-per-partition``
requires. Batches run in order, so every step's target is a state the cluster
really passes through; each must therefore be safe on its own (``valid``):

* no dead broker in it (Kafka would wait forever for it to join the ISR);
* rack-safe whenever the final list is (the gate checks every batch's target);
* the final replication factor from the first step on.

A step adds at most ``max_new`` new replicas, except the first one when fewer
cannot reach a safe state (a partition that starts on a dead broker, crowded into
one rack, or with another replication factor is made safe in its first step).
Among the orders with the fewest steps, replicas on ineligible brokers leave first
and the leader leaves last; the last step lands on the final order.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from itertools import chain, combinations, repeat
from operator import itemgetter
from typing import Any, NamedTuple

import numpy as np

# kafka-reassign-partitions.sh's word for "the broker chooses the log dir" (ReassignPartitionsCommand.ANY_LOG_DIR).
ANY_LOG_DIR = "any"


class Step(NamedTuple):
    """One reassignment of one partition: immutable. (A named tuple: a plan at a million partitions makes close to a
    million steps, and a frozen dataclass's ``__init__``, one ``object.__setattr__`` per field, cost 2.5 us each.)"""

    p: int  # partition index
    topic: str
    partition: int
    before: tuple[int, ...]  # broker ids
    after: tuple[int, ...]
    adds: tuple[int, ...]  # new destinations (not replicas before)
    removes: tuple[int, ...]  # replicas that leave
    seq: int  # 0-based step number within the partition
    leader: int  # broker id leading while this step runs (-1 unknown)
    size: int
    rate: float  # produce rate, 0 when unknown
    # The log dir of each replica in ``after`` ("any": the broker chooses); empty: "any" for every replica.
    # Named for the replicas a step adds on a broker with several dirs, and for a replica moving between
    # the dirs of its broker (planner/goals/disk_capacity.py).
    dirs: tuple[str, ...] = ()
    # The log dir of each replica in ``before`` ("any": not known), where a broker of the step has several dirs:
    # what the disk ledger frees when the step ends (planner/peaks.py). Empty: none known.
    sources: tuple[str, ...] = ()

    def dir_arrivals(self) -> list[tuple[int, str]]:
        """(broker id, dir) of each replica the step puts in a named dir: a new one, or one moving between the
        dirs of its broker (both copies are on the broker until the step ends)."""
        if not self.dirs:
            return []
        src = dict(zip(self.before, self.sources or (ANY_LOG_DIR,) * len(self.before)))
        return [(b, d) for b, d in zip(self.after, self.dirs)
                if d != ANY_LOG_DIR and (b not in src or src[b] != d) and (b in self.adds or b in src)]

    def dir_departures(self) -> list[tuple[int, str]]:
        """(broker id, dir) of each replica in a known dir that the step takes out of it: one leaving its broker,
        or one moving to another dir of it."""
        if not self.sources:
            return []
        named = dict(zip(self.after, self.log_dirs))
        return [(b, d) for b, d in zip(self.before, self.sources)
                if d != ANY_LOG_DIR and (b not in named or named[b] not in (ANY_LOG_DIR, d))]

    @property
    def within(self) -> tuple[int, ...]:
        """Brokers a replica of the step moves between the dirs of: held twice there until the step ends."""
        if not self.dirs:
            return ()
        src = dict(zip(self.before, self.sources or (ANY_LOG_DIR,) * len(self.before)))
        return tuple(b for b, d in zip(self.after, self.dirs) if d != ANY_LOG_DIR and b in src and src[b] != d)

    @property
    def involved(self) -> tuple[int, ...]:
        """Brokers whose per-broker move limit this step uses: each new replica's destination and
        as many leaving replicas' sources (a replica in and one out are one move each)."""
        return self.adds + self.removes[: len(self.adds)]

    @property
    def reorder(self) -> bool:
        return not self.adds and not self.removes

    @property
    def log_dirs(self) -> tuple[str, ...]:
        """The reassignment JSON's ``log_dirs``: one per replica of ``after``."""
        return self.dirs or (ANY_LOG_DIR,) * len(self.after)


Valid = Callable[[Sequence[int]], bool]


def step_fields(steps: Sequence[Step], *names: str) -> dict[str, list[Any]]:
    """The named fields of ``steps``, each as one list over them, read in one pass over the steps. Steps sit in memory
    where they were made, so in a batch's or the schedule's order nearly every step read is a cache miss: at a million
    steps a pass in that order costs 0.35 s, in the order they were made 0.05 s; reading field by field made a miss
    per field (and transposing them all, ``zip(*steps)``, cost more still)."""
    at = [Step._fields.index(n) for n in names]
    if len(at) == 1:
        return {names[0]: list(map(itemgetter(at[0]), steps))}
    rows = list(map(itemgetter(*at), steps))  # (new tuples, side by side: the passes below read them in order)
    return {n: list(map(itemgetter(k), rows)) for k, n in enumerate(names)}


def ragged(rows: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ints (a field of the steps, e.g. their ``adds``) as (offsets, values): row i is values[at[i]:at[i + 1]]."""
    at = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, rows), dtype=np.int64, count=len(rows)), out=at[1:])
    return at, np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=int(at[-1]))


def topic_ranks(topics: Sequence[str]) -> np.ndarray:
    """Each topic's place among the distinct ones in Python's string order: the steps' sort by topic as integers."""
    rank = {t: k for k, t in enumerate(sorted(set(topics)))}
    return np.fromiter(map(rank.__getitem__, topics), dtype=np.int64, count=len(topics))


def _rows(m: np.ndarray, keep: np.ndarray) -> list[tuple[int, ...]]:
    """Each row of ``m`` as a tuple of its entries where ``keep``, in order (rows grouped by length, each group's
    tuples made by ``zip`` over its columns: one ``tolist`` per column instead of a slice, a list and a tuple per
    row)."""
    at = np.argsort(~keep, axis=1, kind="stable")  # kept entries first, in order
    packed = np.take_along_axis(m, at, axis=1)
    n = keep.sum(axis=1)
    lengths = np.unique(n).tolist()
    if len(lengths) == 1:  # (most often: every row as long)
        k = lengths[0]
        return list(zip(*(packed[:, j].tolist() for j in range(k)), strict=True)) if k else [()] * len(m)
    out: list[tuple[int, ...]] = [()] * len(m)
    for k in lengths:
        if k:
            rows = np.flatnonzero(n == k)
            for i, row in zip(rows.tolist(), zip(*(packed[rows, j].tolist() for j in range(k)), strict=True),
                              strict=True):  # fmt: skip
                out[i] = row
    return out


def direct_steps(parts: Sequence[int], topics: Sequence[str], partitions: Sequence[int], before: np.ndarray,
                 after: np.ndarray, early: np.ndarray, leaders: np.ndarray, sizes: Sequence[int], rates: Sequence[float],
                 max_new: int) -> list[Step | None]:  # fmt: skip
    """``partition_steps`` for many partitions at once, where one step reaches the final list (no more than
    ``max_new`` new replicas); None for the others. ``before``/``after``: each partition's original and final lists
    of broker ids, one row each, -1 past its end; ``early``: beside ``before``, the replicas that leave first
    (``leave_first`` 0). At 400 brokers / 1M partitions the steps took 4.7 s of a plan made partition by partition,
    3.2 s with this (those needing several steps still one by one)."""
    width = max(before.shape[1], after.shape[1])
    before = np.pad(before, ((0, 0), (0, width - before.shape[1])), constant_values=-1)
    after = np.pad(after, ((0, 0), (0, width - after.shape[1])), constant_values=-1)
    early = np.pad(early, ((0, 0), (0, width - early.shape[1])))
    adds = (after >= 0) & ~(after[:, :, None] == before[:, None, :]).any(axis=2)
    removes = (before >= 0) & ~(before[:, :, None] == after[:, None, :]).any(axis=2)
    one = adds.sum(axis=1) <= max_new
    # The leaving replicas in partition_steps' order: those that leave first, then the others, the leader last.
    order = np.argsort(np.where(removes, (~early) * 2 + (before == leaders[:, None]), 4), axis=1, kind="stable")
    gone = np.take_along_axis(before, order, axis=1)
    rows = [_rows(m, k) for m, k in ((before, before >= 0), (after, after >= 0), (after, adds),
                                     (gone, np.take_along_axis(removes, order, axis=1)))]  # fmt: skip
    # (made as tuple.__new__ makes them, from zip's rows: Step(...) per partition, a Python call each, cost three times
    # as much)
    made = map(tuple.__new__, repeat(Step), zip(parts, topics, partitions, *rows, repeat(0), leaders.tolist(), sizes,
                                                 rates, repeat(()), repeat(()), strict=False))  # fmt: skip
    return [s if ok else None for s, ok in zip(made, one.tolist(), strict=True)]


def partition_steps(
    p: int,
    topic: str,
    partition: int,
    original: list[int],
    final: list[int],
    leader: int,
    size: int,
    rate: float,
    max_new: int,
    valid: Valid | None = None,
    leave_first: Callable[[int], int] | None = None,
) -> list[Step]:
    """``valid(list)``: may the cluster pass through this replica list? ``leave_first(b)``: a
    smaller value makes replica ``b`` leave earlier (e.g. 0 for a dead or decommissioned broker)."""
    adds = [b for b in final if b not in original]
    removes = [b for b in original if b not in final]
    rank = leave_first or (lambda b: 1)
    removes.sort(key=lambda b: (rank(b), b == leader))  # stable: the leader leaves last
    if not adds and not removes:
        return [Step(p, topic, partition, tuple(original), tuple(final), (), (), 0, leader, size, rate)]
    if len(adds) <= max_new:
        path = [(tuple(adds), tuple(removes))]
    else:
        path = _safe_path(original, final, adds, removes, max_new, valid or (lambda row: True))
    steps: list[Step] = []
    cur = list(original)
    for seq, (take_adds, take_removes) in enumerate(path):
        last = seq == len(path) - 1
        nxt = list(final) if last else _apply(cur, take_adds, take_removes)
        steps.append(Step(p, topic, partition, tuple(cur), tuple(nxt), take_adds, take_removes, seq, leader, size, rate))
        if leader not in nxt:  # the controller hands leadership to the first surviving replica
            kept = [b for b in nxt if b in cur]
            leader = kept[0] if kept else nxt[0]
        cur = nxt
    return steps


def _apply(cur: list[int], adds: Sequence[int], removes: Sequence[int]) -> list[int]:
    nxt = list(cur)
    for a, r in zip(adds, removes):
        nxt[nxt.index(r)] = a
    for r in removes[len(adds) :]:
        nxt.remove(r)
    nxt.extend(adds[len(removes) :])
    return nxt


def _safe_path(
    original: list[int], final: list[int], adds: list[int], removes: list[int], max_new: int, valid: Valid
) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """The fewest steps whose every intermediate list is ``valid``; the first step grows
    beyond ``max_new`` only as far as needed (at worst it is the whole change)."""
    if max_new == 1 and len(adds) == len(removes) == 2:
        return _two_swaps(original, adds, removes, valid)
    return _searched_path(original, adds, removes, max_new, valid)


def _two_swaps(original: list[int], adds: list[int], removes: list[int],
               valid: Valid) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:  # fmt: skip
    """``_searched_path`` where two replicas are replaced one at a time (the common case: 30,000 partitions at 400
    brokers / 1M, where the search cost 75 us each): its first level's swaps in its order, the first valid one and
    then the other two; none valid, the whole change at once."""
    for ai in (0, 1):
        for ri in (0, 1):
            step = ((adds[ai],), (removes[ri],))
            if valid(_apply(original, *step)):
                return [step, ((adds[1 - ai],), (removes[1 - ri],))]
    return [(tuple(adds), tuple(removes))]


def _searched_path(
    original: list[int], adds: list[int], removes: list[int], max_new: int, valid: Valid
) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    delta = len(adds) - len(removes)  # replication factor change, done in the first step
    for first_cap in range(max_new, len(adds) + 1):
        path = _bfs(original, adds, removes, delta, max_new, first_cap, valid)
        if path is not None:
            return path
    return [(tuple(adds), tuple(removes))]  # unreachable: one step straight to the final list


def _bfs(
    original: list[int], adds: list[int], removes: list[int], delta: int, max_new: int, first_cap: int, valid: Valid
) -> list[tuple[tuple[int, ...], tuple[int, ...]]] | None:
    n_a, n_r = len(adds), len(removes)
    full = ((1 << n_a) - 1, (1 << n_r) - 1)
    start = (0, 0)
    queue: deque[tuple[tuple[int, int], list[int], list[tuple[tuple[int, ...], tuple[int, ...]]]]] = deque()
    queue.append((start, list(original), []))
    seen = {start}
    while queue:
        (am, rm), cur, path = queue.popleft()
        first = not path
        cap = first_cap if first else max_new
        free_a = [i for i in range(n_a) if not am >> i & 1]
        free_r = [i for i in range(n_r) if not rm >> i & 1]
        for k in range(min(cap, len(free_a)), -1, -1):  # big steps first: fewest steps
            j = k - delta if first else k
            if j < 0 or j > len(free_r) or (k == 0 and j == 0):
                continue
            for ai in combinations(free_a, k):
                for ri in combinations(free_r, j):
                    nam = am | sum(1 << i for i in ai)
                    nrm = rm | sum(1 << i for i in ri)
                    if (nam, nrm) in seen:
                        continue
                    step = (tuple(adds[i] for i in ai), tuple(removes[i] for i in ri))
                    if (nam, nrm) == full:
                        return path + [step]
                    nxt = _apply(cur, *step)
                    if not valid(nxt):
                        continue
                    seen.add((nam, nrm))
                    queue.append(((nam, nrm), nxt, path + [step]))
    return None
