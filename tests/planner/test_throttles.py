"""KIP-73 throttles per batch (planner/throttles.py): a hand example, and every batch of drawn plans against the rule
read plainly, whatever order the steps come in."""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest

from kafka_rebalance.cluster.admin import FOLLOWER_RATE, FOLLOWER_REPLICAS, LEADER_RATE, LEADER_REPLICAS
from kafka_rebalance.planner.steps import Step
from kafka_rebalance.planner.throttles import batch_throttles, batches_throttles
from tests.support.drawn_steps import draw_steps


def rule(steps: list[Step], rate: int) -> dict[str, Any]:
    """The module docstring's rule, one step at a time."""
    leader: dict[str, set[tuple[int, int]]] = {}
    follower: dict[str, set[tuple[int, int]]] = {}
    brokers: set[int] = set()
    for s in steps:
        if not s.adds and not s.removes:
            continue
        leader.setdefault(s.topic, set()).update((s.partition, b) for b in s.before)
        new = [(s.partition, b) for b in s.after if b not in s.before]
        if new:
            follower.setdefault(s.topic, set()).update(new)
        brokers |= set(s.before) | set(s.after)
    topics = {}
    for t in sorted(leader):
        topics[t] = {LEADER_REPLICAS: ",".join(f"{p}:{b}" for p, b in sorted(leader[t]))}
        if t in follower:
            topics[t][FOLLOWER_REPLICAS] = ",".join(f"{p}:{b}" for p, b in sorted(follower[t]))
    return {"rate_bytes_per_sec": rate, "brokers": {str(b): {FOLLOWER_RATE: str(rate), LEADER_RATE: str(rate)}
                                                    for b in sorted(brokers)}, "topics": topics}  # fmt: skip


def test_a_batch_throttles_every_replica_before_and_each_new_one() -> None:
    steps = [
        Step(0, "orders", 3, (1, 2), (1, 5), (5,), (2,), 0, 1, 10, 0.0),
        Step(1, "orders", 1, (2, 10), (10, 2), (), (), 0, 2, 10, 0.0),  # a reorder: nothing throttled
        Step(2, "audit", 0, (10,), (2, 10), (2,), (), 0, 10, 10, 0.0),  # grows: 2 is new
    ]
    both = {FOLLOWER_RATE: "100", LEADER_RATE: "100"}
    assert batch_throttles(steps, 100) == {
        "rate_bytes_per_sec": 100,
        "brokers": {"1": both, "10": both, "2": both, "5": both},  # by id, written as text
        "topics": {
            "audit": {LEADER_REPLICAS: "0:10", FOLLOWER_REPLICAS: "0:2"},
            "orders": {LEADER_REPLICAS: "3:1,3:2", FOLLOWER_REPLICAS: "3:5"},
        },
    }
    assert batch_throttles([steps[1]], 7) == {"rate_bytes_per_sec": 7, "brokers": {}, "topics": {}}
    assert batch_throttles([], 7) == {"rate_bytes_per_sec": 7, "brokers": {}, "topics": {}}


@pytest.mark.parametrize("seed", range(60))
def test_every_batch_is_the_rule_in_any_order_of_steps(seed: int) -> None:
    rnd = random.Random(seed)
    chains = draw_steps(seed)[0]
    steps = [s for chain in chains for s in chain]
    # reorders among them, ids far apart (0, a million) and topics out of order by name
    steps += [Step(500 + k, rnd.choice(["Z", "a", "é", "t1"]), k, (0, 1_000_000), (1_000_000, 0), (), (), 0, 0, 1, 0.0)
              for k in range(rnd.randint(0, 3))]  # fmt: skip
    steps += [Step(600, "a", 7, (0,), (1_000_000,), (1_000_000,), (0,), 0, 0, 1, 0.0)]
    if seed % 2:  # Kafka's largest partition number and broker id: keys too wide to sort as one (the other path)
        top = 2**31 - 1
        steps += [Step(601, "t1", top, (0, 5), (5, top), (top,), (0,), 0, 0, 1, 0.0)]
    n_batches = rnd.randint(1, 6)
    batch = [rnd.randrange(n_batches) for _ in steps]
    order = list(range(len(steps)))
    rnd.shuffle(order)
    got = batches_throttles([steps[i] for i in order], np.array([batch[i] for i in order], dtype=np.int64), n_batches,
                            1234)  # fmt: skip
    want = [rule([s for s, g in zip(steps, batch, strict=True) if g == n], 1234) for n in range(n_batches)]
    assert json.dumps(got) == json.dumps(want)  # (as written to throttles.json: keys in the same order too)
