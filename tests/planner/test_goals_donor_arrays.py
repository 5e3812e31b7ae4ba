"""The donor indexes as the compiled goals search them (goals/donor_arrays.py), against ``DonorIndex``."""

from __future__ import annotations

import copy
import math

import numpy as np

from kafka_rebalance.planner.goals.base import donor_index
from kafka_rebalance.planner.goals.compiled_state import board_arrays, kernel_records, veto_arrays
from kafka_rebalance.planner.goals.donor_arrays import (
    FIT,
    SN,
    SP,
    created,
    find,
    indexes_of,
    leave_indexes,
    original_movable,
    pairs,
    parking_log,
    search_params,
)
from kafka_rebalance.planner.state import ClusterState
from tests.support.clusters import MiB, indexes, part, planner_state


def arrived_and_left(n_gone: int) -> tuple[ClusterState, int]:
    """Broker 0 took in ``n_gone`` replicas that moved on again, the smallest, and two larger ones that stayed (and
    the smaller of those)."""
    parts = [part("t", i, [1], size_bytes=(i + 1) * MiB) for i in range(n_gone + 2)]
    parts.append(part("home", 0, [0], size_bytes=64 * MiB))
    state = planner_state([0, 1, 2], parts)
    moving = sorted(np.flatnonzero(state.R[:, 0] == 1).tolist(), key=lambda p: int(state.sizes[p]))
    for p in moving:
        state.move(p, 1, 0)
    for p in moving[:n_gone]:
        state.move(p, 0, 2)
    donor_index(state, 0)  # built before: its main list holds broker 0's own replica only
    return state, moving[n_gone]


def compiled_find(state: ClusterState, b: int, dst: int, desired: float = 0.0) -> int:
    """``find`` on b's index as the kernels hold it (changed ones allowed, nearest ``desired`` first); the indexes left
    in ``state`` as the kernel leaves them."""
    flags, veto, dirs, _ = veto_arrays(state)
    board = board_arrays(state, np.zeros(state.n_parts, dtype=np.int64), flags)
    ctx = (flags, *kernel_records(board, veto, dirs), np.zeros(state.n_parts, dtype=bool),
           (np.zeros(0, dtype=bool), np.zeros(1), np.zeros(0, dtype=np.int64)))
    ix = indexes_of(state, state.n_brokers)
    created(ix, b, *original_movable(state), board[4])  # (``donor_index``: built on first use)
    p = find(ix, b, desired, -math.inf, math.inf, 64, True, search_params(b, dst), np.zeros(FIT), ctx,
             np.empty(1, dtype=np.int64))  # fmt: skip
    assert len(ix[SP][b]) >= ix[SN][b]
    leave_indexes(state, ix)
    return p


def test_a_side_list_search_past_replicas_that_moved_away_returns_the_one_it_accepted() -> None:
    # The side list (arrivals) holds replicas that moved on: the search drops them and returns the first still there.
    # With two or more dropped before it, the found entry's place must move down by all of them (a search once
    # counted them against its already lowered place, and handed out the replica after the one it had checked).
    for n_gone in (1, 2, 3, 5):
        state, stayed = arrived_and_left(n_gone)
        plain = copy.deepcopy(state)
        expected = donor_index(plain, 0).find(0.0, lambda p: True, 64, allow_touched=True)
        assert expected == stayed
        assert compiled_find(state, 0, 2) == expected, n_gone
        assert indexes(state) == indexes(plain), n_gone


def test_of_two_replicas_equally_near_the_size_wanted_the_smaller_is_found() -> None:
    # 10 and 30 MiB around a wanted 20 MiB: ``outward``'s order, the smaller first (ties by size, then partition).
    parts = [part("t", i, [0], size_bytes=s * MiB) for i, s in enumerate((30, 10, 30, 50))]
    state = planner_state([0, 1], parts)
    plain = copy.deepcopy(state)
    expected = donor_index(plain, 0).find(20.0 * MiB, lambda p: True, 64)
    assert int(state.sizes[expected]) == 10 * MiB
    assert compiled_find(state, 0, 1, 20.0 * MiB) == expected
    # 30 (twice) and 50 MiB around a wanted 40 MiB: a 30, the one walked first down from 40 (the later partition)
    plain = copy.deepcopy(state)
    expected = donor_index(plain, 0).find(40.0 * MiB, lambda p: True, 64)
    assert expected == max(p for p in range(4) if state.sizes[p] == 30 * MiB)
    assert compiled_find(state, 0, 1, 40.0 * MiB) == expected
    assert indexes(state) == indexes(plain)


def test_the_parking_log_keeps_the_order_replicas_were_parked_in() -> None:
    from kafka_rebalance.planner.goals.donor_arrays import PARKED, PLOG, empty_indexes, park, release

    none = np.zeros(0, dtype=np.int64)
    ix = empty_indexes(3, none, none, 4)
    for p, b in ((2, 1), (0, 2), (2, 0), (3, 1)):
        park(ix, p, b)
    release(ix, 2, 7)
    assert parking_log(ix[PLOG])[:, [0, 1, 3]].tolist() == [[2, 1, 0], [0, 2, 1], [2, 0, 0], [3, 1, 1]]
    assert ix[PARKED].tolist() == [1, -1, -1, 3]
    assert sorted(ix[SP][b][: ix[SN][b]].tolist() for b in range(3)) == [[], [2], [2]]


def test_pairs_lists_each_value_beside_its_key_in_order() -> None:
    # Keys with one value, none and many (the parked partitions', the arrivals' and the indexes' shapes), lists and
    # arrays alike.
    lists = [(7, [3]), (2, []), (9, np.array([5, 1, 5])), (0, [4, 4])]
    keys, values = pairs(iter(lists))
    assert keys.dtype == values.dtype == np.int64
    assert list(zip(keys.tolist(), values.tolist())) == [(7, 3), (9, 5), (9, 1), (9, 5), (0, 4), (0, 4)]
    assert [a.tolist() for a in pairs([])] == [[], []]
