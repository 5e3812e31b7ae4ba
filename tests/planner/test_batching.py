"""Grouping steps into batches (planner/batching.py), on queues small enough to follow by hand."""

from __future__ import annotations

import heapq
import random
from collections import defaultdict, deque
from collections.abc import Callable

import pytest

from kafka_rebalance.errors import PlanError
from kafka_rebalance.options import ORDERINGS
from kafka_rebalance.planner import PlanOptions
from kafka_rebalance.planner.batching import PlannedBatch, make_batches, order_key
from kafka_rebalance.planner.peaks import DiskLedger
from kafka_rebalance.planner.steps import Step
from tests.support.drawn_steps import draw_steps

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


def test_a_batch_stops_looking_after_its_window_of_refusals() -> None:
    # Two partitions per batch, one move per broker: the first step into broker 9 is taken and every later one into 9 is
    # refused. The window is 4 x 2 + 100 = 108 refusals: a step into broker 8 right after 108 of them is left for the next
    # batch, one after 107 joins the first.
    for refused, joins in ((107, True), (108, False)):
        into_9 = [[step(p, (p + 10,), (9,), MiB + p)] for p in range(refused + 1)]
        into_8 = [step(500, (600,), (8,), 10 * MiB)]
        first = batches([*into_9, into_8], max_partitions_per_batch=2, max_moves_per_broker=1)[0]
        assert first == ([(0, 0), (500, 0)] if joins else [(0, 0)])


# ------------------------------------------------------------------------------- the compiled batcher, held to the rule

def plain_move_batches(moves: list[list[Step]], options: PlanOptions, key: Callable[[Step], tuple],
                       ledger: DiskLedger | None = None) -> list[PlannedBatch]:  # fmt: skip
    """``batching._move_batches`` as it was written in Python: the batching rule read plainly."""
    cap, per_broker, rate = options.max_partitions_per_batch, options.max_moves_per_broker, options.delivered_rate
    window = 4 * cap + 100
    following = {(chain[0].p, s.seq): chain[i + 1] for chain in moves for i, s in enumerate(chain[:-1])}
    queue = deque(sorted((chain[0] for chain in moves if chain), key=key))
    # The steps that follow taken ones, a heap by key, read in one order with the queue (keys are unique): merging
    # them into the queue after every batch cost the whole queue each time (8 % of planning 100,000 moves).
    later: list[tuple[tuple, Step]] = []

    def next_step() -> Step:
        if later and (not queue or later[0][0] < key(queue[0])):
            return heapq.heappop(later)[1]
        return queue.popleft()

    out: list[PlannedBatch] = []
    while queue or later:
        taken: list[Step] = []
        skipped: list[Step] = []
        load: dict[int, int] = defaultdict(int)
        inflow: dict[int, float] = defaultdict(float)
        outflow: dict[int, float] = defaultdict(float)
        refusals = 0
        while (queue or later) and len(taken) < cap and refusals < window:
            s = next_step()
            if ledger is not None and ledger.blocker(s) is not None:
                # No room until earlier batches' departures free it: never taken, not even alone.
                skipped.append(s)
                refusals += 1 if taken else 0
                continue
            n_new = len(s.adds)
            involved = s.involved
            fits = True
            for b in involved:
                if load[b] >= per_broker:
                    fits = False
                    break
            if fits and n_new and s.rate:
                fits = all(inflow[b] + s.rate < rate for b in s.adds) and outflow[s.leader] + s.rate * n_new < rate
            if not fits and taken:
                skipped.append(s)
                refusals += 1
                continue
            # An empty batch takes the head even if it alone breaks a limit: otherwise it could never run.
            taken.append(s)
            for b in involved:
                load[b] += 1
            for b in s.adds:
                inflow[b] += s.rate
            outflow[s.leader] += s.rate * n_new
            if ledger is not None:
                ledger.start(s)
        if not taken and ledger is not None:
            raise ledger.stuck(skipped)
        if ledger is not None:
            for s in taken:
                ledger.finish(s)
        queue.extendleft(reversed(skipped))  # read before everything left: each came before it
        for s in taken:
            succ = following.get((s.p, s.seq))
            if succ is not None:
                heapq.heappush(later, (key(succ), succ))
        out.append(PlannedBatch("move", sorted(taken, key=key)))
    return out


@pytest.mark.parametrize("seed", range(200))
def test_the_compiled_batches_are_the_ones_the_rule_read_plainly_makes(seed: int) -> None:
    # planner/batching.py's move batches are compiled; the Python loop they replaced is the oracle: the same batches,
    # in the same order, for every ordering, limit and disk room drawn (or the same error naming the same brokers).
    chains, per_broker, cap, throttle, _, disk = draw_steps(seed)
    rnd = random.Random(seed)
    opts = PlanOptions(max_partitions_per_batch=cap, max_moves_per_broker=per_broker,
                       throttle_bytes_per_sec=int(throttle), ordering=rnd.choice(ORDERINGS))  # fmt: skip
    key = order_key(opts, lambda p: p % 3 == 0)
    runs: list[Callable[[], list[PlannedBatch]]] = [
        lambda: plain_move_batches(chains, opts, key, DiskLedger(disk) if disk is not None else None),
        lambda: make_batches([], chains, opts, key, disk),
    ]
    outcomes: list[object] = []
    for run in runs:
        try:
            outcomes.append([[(s.p, s.seq) for s in b.steps] for b in run()])
        except PlanError as e:
            outcomes.append(str(e))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("seed", range(40))
def test_the_order_of_many_steps_is_the_sort_by_their_keys(seed: int) -> None:
    rnd = random.Random(seed)
    steps = [s for chain in draw_steps(seed)[0] for s in chain]
    # equal sizes, topics whose order by name is not by first letter's case or by length, partitions across topics
    steps = [s._replace(topic=rnd.choice(["Z", "a", "é", "ab", "a-"]), size=rnd.choice([s.size, 5]),
                        partition=rnd.randint(0, 3)) for s in steps]  # fmt: skip
    for name in ORDERINGS:
        key = order_key(PlanOptions(ordering=name), lambda p: p % 3 == 0)
        assert key.order(steps).tolist() == sorted(range(len(steps)), key=lambda i: key(steps[i])), name
