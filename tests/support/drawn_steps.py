"""Drawn reassignment steps for the oracle tests of the compiled dispatcher and batcher (tests/planner/test_dispatch.py,
test_batching.py)."""

from __future__ import annotations

import random

from kafka_rebalance.planner.peaks import DiskRoom
from kafka_rebalance.planner.steps import Step

DIRS = ("/a", "/b")


def draw_steps(seed: int) -> tuple[list[list[Step]], int, int, float, float, DiskRoom | None]:
    """Partitions of one to three steps over a few brokers (ids with gaps), some with produce rates near the throttle,
    some dropping replicas only, some naming log dirs; the limits and, half the time, disk room (tight or not)."""
    rnd = random.Random(seed)
    brokers = sorted(rnd.sample(range(1, 40), rnd.randint(2, 9)))
    throttle = rnd.choice([5e7, 1e8, 1e9])
    named = rnd.random() < 0.3
    chains = []
    for p in range(rnd.randint(1, 70)):
        row = rnd.sample(brokers, rnd.randint(1, min(3, len(brokers))))
        dirs = {b: rnd.choice(DIRS) for b in row}
        size = rnd.choice([0, rnd.randint(1, 10**6), rnd.randint(10**8, 10**10)])
        rate = rnd.choice([0.0, 0.0, rnd.uniform(0, throttle / 3), rnd.uniform(throttle / 2, 1.2 * throttle)])
        chain = []
        for seq in range(rnd.choice([1, 1, 1, 2, 3])):
            free = [b for b in brokers if b not in row]
            new = list(row)
            if len(row) > 1 and rnd.random() < 0.15:
                new.remove(rnd.choice(row))  # drops a replica only: nothing to copy
            elif free:
                # one new replica, or two at once (a step adding several: a leader sending to each)
                for k, b in zip(rnd.sample(range(len(new)), min(len(new), rnd.choice([1, 1, 2]))), rnd.sample(free, len(free)),
                                strict=False):  # fmt: skip
                    new[k] = b
            else:
                break
            moved_dirs = {b: dirs.get(b, rnd.choice(DIRS)) if b in row else rnd.choice(DIRS) for b in new}
            chain.append(Step(
                p, f"t{p % 4}", p, tuple(row), tuple(new), tuple(b for b in new if b not in row),
                tuple(b for b in row if b not in new), seq, rnd.choice([row[0], row[0], -1]), size, rate,
                tuple(moved_dirs[b] for b in new) if named else (), tuple(dirs[b] for b in row) if named else (),
            ))
            row, dirs = new, moved_dirs
        if chain:
            chains.append(chain)
    disk = None
    if rnd.random() < 0.5:
        start = {b: float(rnd.randint(0, 10**10)) for b in brokers}
        limit = {b: start[b] + rnd.choice([0.0, 5e9, 5e10, 1e13]) for b in brokers if rnd.random() < 0.8}
        dir_room = {(b, d): (start[b] / 2, start[b] / 2 + rnd.choice([0.0, 5e9, 1e13])) for b in limit for d in DIRS
                    if named and rnd.random() < 0.5}  # fmt: skip
        disk = DiskRoom({b: start[b] for b in limit}, limit, dir_room)
    return chains, rnd.randint(1, 4), rnd.randint(1, 25), throttle, rnd.choice([0.0, 0.0, 2.0]), disk
