"""From an original and a final replica list to the reassignment steps that get there.

A partition whose replica SET is unchanged needs one metadata-only reorder. One
whose set changes gets as many steps as ``--max-new-replicas-per-partition``
requires: each step adds at most that many new replicas in place of leaving ones
(the leader leaves last), and the last step lands on the final order.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Step:
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

    @property
    def reorder(self) -> bool:
        return not self.adds and not self.removes


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
) -> list[Step]:
    adds = [b for b in final if b not in original]
    removes = [b for b in original if b not in final]
    removes.sort(key=lambda b: b == leader)  # stable: the leader leaves last
    if not adds and not removes:
        return [Step(p, topic, partition, tuple(original), tuple(final), (), (), 0, leader, size, rate)]
    steps: list[Step] = []
    cur = list(original)
    seq = 0
    while True:
        take_adds = adds[:max_new]
        adds = adds[max_new:]
        last = not adds
        take_removes = removes if last else removes[: len(take_adds)]
        removes = [] if last else removes[len(take_adds) :]
        if last:
            nxt = list(final)
        else:
            nxt = list(cur)
            for a, r in zip(take_adds, take_removes):
                nxt[nxt.index(r)] = a
            nxt.extend(take_adds[len(take_removes) :])
        steps.append(Step(p, topic, partition, tuple(cur), tuple(nxt), tuple(take_adds), tuple(take_removes), seq, leader, size, rate))
        if leader not in nxt:  # the controller hands leadership to the first surviving replica
            kept = [b for b in nxt if b in cur]
            leader = kept[0] if kept else nxt[0]
        cur = nxt
        seq += 1
        if last:
            return steps
