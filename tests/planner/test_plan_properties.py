"""Properties every plan keeps, on random corpus draws (issue #42): no partition moves twice, and the
summary's leader changes are the ones the plan's files make.

Each draw is planned with the heuristic on a small cluster (at most 12 brokers, 240 partitions), so
the 12 draws stay cheap; the figures are recomputed here from the snapshot, the plan's steps in batch
order and its election list, as Kafka would apply them (validation/projection.py's rules: a moved
partition keeps its leader while it stays a live replica, else the first live replica of the new list
leads; an election hands leadership to the first replica when it is alive and in sync).
"""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from kafka_rebalance.balance import leader_changes
from kafka_rebalance.planner import PlanOptions, make_plan
from kafka_rebalance.testing import corpus

draws = settings(max_examples=12, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
                 suppress_health_check=[HealthCheck.too_slow])


@draws
@given(seed=st.integers(0, 2**31 - 1))
def test_no_partition_moves_twice_and_leader_changes_match_the_summary(seed: int) -> None:
    snapshot, options = corpus.draw(seed, max_brokers=12, max_partitions=240)
    plan = make_plan(snapshot, PlanOptions(**{**options, "optimizer": "heuristic"}))
    alive = {b.id for b in snapshot.brokers if b.alive}
    start = {(p.topic, p.partition): p for p in snapshot.partitions}
    rows = {key: tuple(p.replicas) for key, p in start.items()}
    isr = {key: set(p.isr) for key, p in start.items()}
    leader = {key: p.leader for key, p in start.items()}
    copies: dict[tuple[str, int], int] = {}
    batches_of: dict[tuple[str, int], list[int]] = {}
    for n, batch in enumerate(plan.batches):
        for step in batch.steps:
            key = (step.topic, step.partition)
            assert step.before == rows[key], f"seed {seed}: {key} step {step.seq} starts from a list it is not at"
            new = step.after
            if set(new) != set(rows[key]):
                batches_of.setdefault(key, []).append(n)
                copies[key] = copies.get(key, 0) + len(set(new) - set(rows[key]))
                isr[key] = {b for b in new if b in alive}
                if leader[key] not in new or leader[key] not in alive:
                    leader[key] = next((b for b in new if b in alive), -1)
            rows[key] = new
    for key, seen in batches_of.items():
        original = set(start[key].replicas)
        # Every copy is a net one: no replica lands on a broker and leaves it again, nor goes back.
        assert copies[key] == len(set(rows[key]) - original), f"seed {seed}: {key} moves twice ({copies[key]} copies)"
        # One chain: its steps in successive batches, each at most once per batch.
        assert seen == sorted(set(seen)), f"seed {seed}: {key} changes twice in one batch"
    for key in plan.elections:
        first = rows[key][0]
        if first in alive and first in isr[key]:
            leader[key] = first
    keys = list(start)
    counted = leader_changes([start[k].leader for k in keys], [leader[k] for k in keys])
    assert plan.summary["leader_changes"] == counted, f"seed {seed}"
    assert plan.summary["leader_imbalance"]["brokers_over_threshold_after_election"] == [], f"seed {seed}"
