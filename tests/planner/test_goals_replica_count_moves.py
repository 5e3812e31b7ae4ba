"""The replica counts' compiled transfers (goals/replica_count_moves.py) against the goal's Python methods."""

from __future__ import annotations

import copy
from collections.abc import Iterator

import numpy as np
import pytest

from kafka_rebalance.errors import PlanError
from kafka_rebalance.planner.goals import replica_count
from kafka_rebalance.planner.goals.base import donor_index
from kafka_rebalance.planner.goals.byte_balance import ByteBalanceGoal
from kafka_rebalance.planner.goals.donor_arrays import kernel_reads
from kafka_rebalance.planner.goals.replica_count import ReplicaCountGoal
from kafka_rebalance.planner.state import ClusterState
from tests.support.clusters import drawn_cluster, indexes, same_state, state_before


def both(state: ClusterState, monkeypatch: pytest.MonkeyPatch) -> tuple[ClusterState, ClusterState]:
    """The count goal on ``state`` compiled, and on a copy through its Python methods."""
    plain = copy.deepcopy(state)
    assert kernel_reads(state)
    ReplicaCountGoal().optimize(state)
    with monkeypatch.context() as m:
        m.setattr(replica_count, "kernel_reads", lambda s: False)
        ReplicaCountGoal().optimize(plain)
    return state, plain


def drawn_states(seeds: range) -> Iterator[tuple[int, ClusterState]]:
    """Each drawn cluster a plan fits, as the count goal receives it (the hard goals optimised, vetoing)."""
    for seed in seeds:
        snap, options = drawn_cluster(seed)
        try:
            yield seed, state_before(snap, options, ReplicaCountGoal.name)
        except PlanError:
            continue


def assert_same(state: ClusterState, monkeypatch: pytest.MonkeyPatch, seed: int) -> ClusterState:
    compiled, plain = both(state, monkeypatch)
    assert same_state(compiled, plain), f"seed {seed}"
    assert indexes(compiled) == indexes(plain), f"seed {seed}"
    return compiled


@pytest.mark.parametrize("limit", [replica_count.SEARCH_LIMIT, 2])
def test_compiled_transfers_are_the_moves_the_goals_python_methods_make(limit: int,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # Drawn clusters (racks or none, log dirs with and without sizes, decommissions, removed dirs, tight disks, a
    # raised RF) as the hard goals leave them: the same moves in the same order, and every donor index left as the
    # Python search leaves it (the byte goal and the trims read them next). With a search limit of 2 the searches
    # stop short, so the whole-index retry and the chains through a third broker run too.
    monkeypatch.setattr(replica_count, "SEARCH_LIMIT", limit)
    planned = moved = 0
    for seed, state in drawn_states(range(120)):
        seen = len(state.changes)
        compiled = assert_same(state, monkeypatch, seed)
        planned += 1
        moved += len(compiled.changes) > seen
    assert planned >= 80 and moved >= 50, (planned, moved)


def test_the_giant_host_rule_runs_the_same_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every draw with a broker held above its band whatever the plan (``held_above``): its shedding and taking the
    # smallest happen inside the compiled transfers.
    found = 0
    for seed, state in drawn_states(range(400)):
        if replica_count.held_above(state)[0]:
            assert_same(state, monkeypatch, seed)
            found += 1
    assert found >= 5, found


def test_indexes_the_earlier_goals_built_are_read_and_left_as_python_leaves_them(
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    # Indexes searches before the counts used (touched replicas set aside to the side lists, arrivals taken in): the
    # compiled search starts from them, not from fresh ones.
    sided = 0
    for seed, state in drawn_states(range(60)):
        for b in state.eligible_idx:
            donor_index(state, b).find(0.0, lambda p: False, 4)
            donor_index(state, b).find(0.0, lambda p: False, 4, allow_touched=True)
        sided += any(idx.side_parts for idx in state.donor_indexes.values())
        assert_same(state, monkeypatch, seed)
    assert sided >= 10, sided


def drawn_state(seed: int) -> ClusterState:
    """The first drawn cluster from ``seed`` on that a plan fits, as the count goal receives it."""
    while True:
        snap, options = drawn_cluster(seed)
        try:
            return state_before(snap, options, ReplicaCountGoal.name)
        except PlanError:
            seed += 1


def test_a_veto_the_kernel_does_not_read_sends_the_goal_to_its_python_methods() -> None:
    state = drawn_state(3)
    assert kernel_reads(state)
    state.vetoes.append(ByteBalanceGoal())
    assert not kernel_reads(state)
    state.vetoes.pop()
    state.cap_moves()
    assert not kernel_reads(state)


def test_the_compiled_transfers_bring_every_count_into_range() -> None:
    state = drawn_state(7)
    ReplicaCountGoal().optimize(state)
    elig = np.asarray(state.eligible_idx)
    assert state.counts_reached(), (state.counts[elig], state.lo[elig], state.hi[elig])
