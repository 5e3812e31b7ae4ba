"""The outward walk of planner/goals/size_walk.py: a pool in no order gives the partitions a walk over it sorted
gives, in the same order."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_rebalance.planner.goals.size_walk import nearest_unsorted, walk_from, walk_next


def walked(sp: float, parts: np.ndarray, sizes: np.ndarray, m: int) -> list[int]:
    """The first m partitions of the walk from sp over the pool sorted by (size, partition)."""
    order = np.lexsort((parts, sizes))
    ps, ss = parts[order], sizes[order].astype(np.float64)
    at, out = walk_from(sp, ss), []
    while len(out) < m:
        j = walk_next(sp, ss, ps, at)
        if j < 0:
            break
        out.append(int(ps[j]))
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=0, max_size=80), st.integers(0, 13), st.integers(1, 20),
       st.randoms(use_true_random=False))  # fmt: skip
def test_a_pool_in_no_order_gives_the_walks_partitions_in_its_order(sizes: list[int], at: int, m: int,
                                                                   rnd: object) -> None:  # fmt: skip
    # Few distinct sizes, so that gaps tie above and below sp and runs of one size cross the cut at m; the pool
    # lists partitions shuffled, with a tail past n (the nearest of all, partition -1) that must not be read.
    n = len(sizes)
    parts = np.array(rnd.sample(range(1000), n), dtype=np.int64)  # type: ignore[attr-defined]
    size_arr = np.array(sizes, dtype=np.float64)
    padded_p = np.concatenate([parts, np.full(3, -1, dtype=np.int64)])
    padded_s = np.concatenate([size_arr, np.full(3, float(at))])
    for sp in (float(at), at + 0.5):
        out = np.empty(m, dtype=np.int64)
        k = nearest_unsorted(sp, padded_p, padded_s, n, out)
        assert out[:k].tolist() == walked(sp, parts, size_arr, m)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 60)), unique_by=lambda e: e[1], max_size=40),
       st.integers(0, 13), st.integers(1, 12), st.randoms(use_true_random=False))  # fmt: skip
def test_the_nearest_are_the_ones_a_full_sort_by_gap_and_partition_lists_first(
        entries: list[tuple[int, int]], twice_sp: int, k: int, rnd: object) -> None:  # fmt: skip
    # Many equal sizes (0..6) and a wanted size on them or halfway between: ties on both sides at once, broken by
    # partition wherever the k-th falls; the pool in any order.
    rnd.shuffle(entries)  # type: ignore[attr-defined]
    sizes = np.asarray([float(s) for s, _ in entries], dtype=np.float64)
    parts = np.asarray([p for _, p in entries], dtype=np.int64)
    sp = twice_sp / 2
    out = np.empty(k, dtype=np.int64)
    got = out[: nearest_unsorted(sp, parts, sizes, len(entries), out)].tolist()
    assert got == [p for _, p in sorted((abs(s - sp), p) for s, p in entries)][:k]
