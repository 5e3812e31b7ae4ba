"""Grouping steps into batches (planner/batching.py), on queues small enough to follow by hand."""

from __future__ import annotations

from kafka_rebalance.planner import PlanOptions
from kafka_rebalance.planner.batching import PlannedBatch, make_batches, order_key
from kafka_rebalance.planner.steps import Step

MiB = 1024**2


def step(p: int, before: tuple[int, ...], after: tuple[int, ...], size: int, seq: int = 0, rate: float = 0.0,
         topic: str = "t") -> Step:
    adds = tuple(b for b in after if b not in before)
    removes = tuple(b for b in before if b not in after)
    return Step(p, topic, p, before, after, adds, removes, seq, before[0], size, rate)


def batches(moves: list[list[Step]], reorders: list[Step] = (), **options) -> list[list[tuple[int, int]]]:
    opts = PlanOptions(**options)
    out = make_batches(list(reorders), moves, opts, order_key(opts, lambda p: p == 99))
    return [[(s.p, s.seq) for s in b.steps] for b in out]


def test_orderings() -> None:
    steps = [step(0, (1,), (2,), 30, topic="b"), step(1, (1,), (2,), 10, topic="a"), step(2, (1,), (2,), 30, topic="a"),
             step(99, (1,), (2,), 50, topic="z")]
    def order(name: str) -> list[int]:
        return [s.p for s in sorted(steps, key=order_key(PlanOptions(ordering=name), lambda p: p == 99))]
    assert order("small-first") == [1, 2, 0, 99]         # size, then topic
    assert order("large-first") == [99, 2, 0, 1]
    assert order("under-replicated-first") == [99, 1, 2, 0]


def test_reorders_come_first_in_batches_of_the_partition_cap() -> None:
    reorders = [step(p, (1, 2), (2, 1), 10 * (5 - p)) for p in range(5)]
    move = [step(9, (1,), (3,), 1)]
    assert batches([move], reorders, max_partitions_per_batch=2) == [[(4, 0), (3, 0)], [(2, 0), (1, 0)], [(0, 0)], [(9, 0)]]


def test_a_broker_takes_at_most_its_moves_per_batch_and_others_keep_their_place() -> None:
    # Three moves into broker 9 and one into 8 (all from distinct sources), two moves per broker per batch:
    # the third into 9 waits; the one into 8 fills the first batch.
    moves = [[step(p, (p + 10,), (9,), p + 1)] for p in range(3)] + [[step(3, (13,), (8,), 4)]]
    assert batches(moves, max_moves_per_broker=2) == [[(0, 0), (1, 0), (3, 0)], [(2, 0)]]


def test_a_partitions_next_step_goes_in_a_later_batch_in_order_of_the_key() -> None:
    chain = [step(0, (1, 2), (3, 2), 5, seq=0), step(0, (3, 2), (3, 4), 5, seq=1)]
    other = [step(1, (5,), (6,), 7)]
    assert batches([chain, other]) == [[(0, 0), (1, 0)], [(0, 1)]]


def test_the_partition_cap_and_a_full_batch_waiting_for_the_next() -> None:
    moves = [[step(p, (p + 10,), (p + 20,), p)] for p in range(5)]
    assert batches(moves, max_partitions_per_batch=2) == [[(0, 0), (1, 0)], [(2, 0), (3, 0)], [(4, 0)]]


def test_produce_rates_into_one_broker_stay_below_the_throttle() -> None:
    # Throttle 10 MiB/s: 4 + 5 MiB/s into broker 9 fit (9 < 10), a third of 1 MiB/s would reach 10: next batch.
    moves = [[step(p, (p + 10,), (9,), p + 1, rate=r * MiB)] for p, r in enumerate([4, 5, 1])]
    assert batches(moves, throttle_bytes_per_sec=10 * MiB) == [[(0, 0), (1, 0)], [(2, 0)]]
    # As leader, one broker sends to every new replica: 2 x 3 MiB/s to 8 and 9 from leader 1, plus 5 more.
    moves = [[step(0, (1, 2), (8, 9), 1, rate=3 * MiB)], [step(1, (1, 3), (1, 7), 2, rate=5 * MiB)]]
    assert batches(moves, throttle_bytes_per_sec=10 * MiB) == [[(0, 0)], [(1, 0)]]


def test_an_empty_batch_takes_a_step_that_alone_breaks_a_limit() -> None:
    moves = [[step(0, (1,), (9,), 1, rate=20 * MiB)], [step(1, (2,), (9,), 2)]]
    assert batches(moves, throttle_bytes_per_sec=10 * MiB) == [[(0, 0), (1, 0)]]


def test_batch_figures() -> None:
    b = PlannedBatch("move", [step(0, (1, 2), (3, 4), 5), step(1, (1,), (2,), 7), step(2, (1, 2), (2, 1), 9)])
    assert (b.replica_moves, b.bytes) == (3, 2 * 5 + 7)
