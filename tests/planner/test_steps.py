"""From an original to a final replica list (planner/steps.py): the steps, worked out by hand.

Broker ids are plain numbers; ``dead`` marks brokers a step may not pass through."""

from __future__ import annotations

import numpy as np

from kafka_rebalance.planner.steps import Step, _apply, direct_steps, partition_steps


def plan(original: list[int], final: list[int], max_new: int, leader: int | None = None,
         dead: tuple[int, ...] = (), first_out: tuple[int, ...] = ()) -> list[Step]:
    return partition_steps(7, "t", 3, original, final, original[0] if leader is None else leader, 100, 1.5, max_new,
                           valid=lambda row: not set(row) & set(dead), leave_first=lambda b: 0 if b in first_out else 1)


def shape(steps: list[Step]) -> list[tuple]:
    return [(s.before, s.after, s.adds, s.removes, s.seq, s.leader) for s in steps]


def test_a_reorder_is_one_metadata_only_step() -> None:
    (s,) = plan([1, 2, 3], [2, 1, 3], max_new=1)
    assert s == Step(7, "t", 3, (1, 2, 3), (2, 1, 3), (), (), 0, 1, 100, 1.5)
    assert s.reorder and s.involved == ()


def test_within_the_limit_one_step_and_the_leader_leaves_last() -> None:
    (s,) = plan([1, 2, 3], [4, 5, 3], max_new=2)
    assert (s.adds, s.removes, s.after) == ((4, 5), (2, 1), (4, 5, 3))
    assert s.involved == (4, 5, 2, 1) and not s.reorder


def test_one_new_replica_per_step_ends_on_the_final_order() -> None:
    assert shape(plan([1, 2, 3], [4, 5, 3], max_new=1)) == [
        ((1, 2, 3), (1, 4, 3), (4,), (2,), 0, 1),
        ((1, 4, 3), (4, 5, 3), (5,), (1,), 1, 1),
    ]


def test_a_dead_replica_leaves_first_and_no_step_passes_through_a_dead_broker() -> None:
    assert shape(plan([1, 2, 3], [1, 4, 5], max_new=1, dead=(3,), first_out=(3,))) == [
        ((1, 2, 3), (1, 2, 4), (4,), (3,), 0, 1),
        ((1, 2, 4), (1, 4, 5), (5,), (2,), 1, 1),
    ]


def test_the_first_step_grows_past_the_limit_only_when_no_smaller_one_is_safe() -> None:
    # Two dead replicas: replacing one leaves the other, so the first (and only) step replaces both.
    assert shape(plan([1, 2, 3], [1, 4, 5], max_new=1, dead=(2, 3), first_out=(2, 3))) == [
        ((1, 2, 3), (1, 4, 5), (4, 5), (2, 3), 0, 1),
    ]


def test_a_replication_factor_increase_happens_in_the_first_step() -> None:
    assert shape(plan([1, 2], [3, 4, 5], max_new=1)) == [
        ((1, 2), (1, 2, 3), (3,), (), 0, 1),
        ((1, 2, 3), (1, 4, 3), (4,), (2,), 1, 1),
        ((1, 4, 3), (3, 4, 5), (5,), (1,), 2, 1),
    ]


def test_leadership_follows_the_first_surviving_replica_from_step_to_step() -> None:
    # The leader (1) is decommissioned, so it leaves first; the controller then hands leadership to the
    # first replica that stayed (2), and after 2 leaves, to 4.
    assert [s.leader for s in plan([1, 2, 3], [4, 5, 6], max_new=1, first_out=(1,))] == [1, 2, 4]


def test_applying_a_step_replaces_in_place_and_appends_or_drops_the_rest() -> None:
    assert _apply([1, 2, 3], (4,), (2, 3)) == [1, 4]
    assert _apply([1, 2], (3, 4), (2,)) == [1, 3, 4]
    assert _apply([1, 2, 3], (5, 6), (3, 1)) == [6, 2, 5]


def test_direct_steps_are_partition_steps_for_many_partitions_at_once() -> None:
    """Drawn rows of mixed lengths (replication factor changes both ways, reorders, the leader leaving or not, replicas
    that leave first, broker ids 0 and 1,000,000): every partition one step reaches gets exactly the step
    ``partition_steps`` makes; the others get None."""
    rng = np.random.default_rng(5)
    brokers = [0, 1, 2, 3, 4, 5, 6, 1_000_000]
    rows: list[tuple[list[int], list[int], int]] = []
    for _ in range(3000):
        original = rng.choice(brokers, int(rng.integers(1, 5)), replace=False).tolist()
        kind = int(rng.integers(4))
        if kind == 0:  # a reorder
            final = rng.permutation(original).tolist()
        else:
            final = rng.choice(brokers, int(rng.integers(1, 5)), replace=False).tolist()
        leader = original[int(rng.integers(len(original)))] if kind != 3 else -1
        rows.append((original, final, leader))
    width = 4

    def matrix(lists: list[list[int]]) -> np.ndarray:
        return np.array([x + [-1] * (width - len(x)) for x in lists], dtype=np.int64)

    for max_new in (1, 2, 3):
        before = matrix([r[0] for r in rows])
        got = direct_steps(
            list(range(len(rows))), [f"t{k % 7}é" for k in range(len(rows))], [k % 11 for k in range(len(rows))],
            before, matrix([r[1] for r in rows]), np.isin(before, [0, 1_000_000]) & (before >= 0),
            np.array([r[2] for r in rows], dtype=np.int64), [10 * k for k in range(len(rows))],
            [0.5 * k for k in range(len(rows))], max_new,
        )
        singles = 0
        for k, ((original, final, leader), step) in enumerate(zip(rows, got, strict=True)):
            want = partition_steps(k, f"t{k % 7}é", k % 11, original, final, leader, 10 * k, 0.5 * k, max_new,
                                   leave_first=lambda b: 0 if b in (0, 1_000_000) else 1)  # fmt: skip
            if len(want) == 1 and len(set(final) - set(original)) <= max_new:
                assert step == want[0], (k, original, final, leader)
                assert all(type(x) is type(y) for x, y in zip(step, want[0], strict=True))
                singles += 1
            else:
                assert step is None, (k, original, final, max_new)
        assert 1000 < singles < len(rows)


def test_two_replicas_replaced_one_at_a_time_take_the_path_the_search_finds() -> None:
    # ``_two_swaps`` answers for the breadth-first search where two replicas are replaced one per step: the same
    # path for every rule of which lists are safe (each drawn as a random set of the lists a first swap passes).
    import random
    from functools import partial
    from itertools import product

    from kafka_rebalance.planner.steps import _searched_path, _two_swaps

    rng = random.Random(7)
    paths = set()
    for _ in range(400):
        rf = rng.choice([2, 3, 4])
        brokers = rng.sample(range(20), rf + 2)
        original, adds = brokers[:rf], brokers[rf:]
        removes = rng.sample(original, 2)
        firsts = [tuple(_apply(original, (a,), (r,))) for a, r in product(adds, removes)]
        safe = {row for row in firsts if rng.random() < 0.4}
        valid = partial(lambda row, safe: tuple(row) in safe, safe=frozenset(safe))
        got = _two_swaps(original, adds, removes, valid)
        assert got == _searched_path(original, adds, removes, 1, valid)
        paths.add(len(got))
    assert paths == {1, 2}  # some with no safe first swap: the whole change at once
