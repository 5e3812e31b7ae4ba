"""The bytes goal's compiled actions (goals/byte_balance_moves.py) against the goal's Python methods."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from kafka_rebalance.errors import PlanError
from kafka_rebalance.options import PlanOptions
from kafka_rebalance.planner.goals import byte_balance
from kafka_rebalance.planner.goals.byte_balance import ByteBalanceGoal
from kafka_rebalance.planner.goals.donor_arrays import kernel_reads
from kafka_rebalance.planner.state import ClusterState
from tests.support.clusters import MiB, drawn_cluster, indexes, part, python_veto, same_state, searched_before, snapshot, state_before


def arrivals(goal: ByteBalanceGoal) -> dict[int, tuple[list[int], list[int], int]]:
    """The goal's arrival lists that hold anything or took anything in."""
    return {b: (idx.parts, idx.sizes, idx.fed) for b, idx in sorted(goal._arrivals.items()) if idx.parts or idx.fed}


def both(state: ClusterState, monkeypatch: pytest.MonkeyPatch,
         costly: int = byte_balance.COSTLY_SWAPS) -> tuple[Any, Any]:  # fmt: skip
    """The bytes goal (without its trim) on ``state`` compiled, and on a copy through its Python methods."""
    plain = copy.deepcopy(state)
    out = []
    for s, compiled in ((state, True), (plain, False)):
        goal = ByteBalanceGoal(costly)
        with monkeypatch.context() as m:
            m.setattr(byte_balance.ByteTrimGoal, "optimize", lambda self, st: None)
            if not compiled:
                m.setattr(byte_balance, "kernel_reads", lambda st, cap=False: False)
            goal.optimize(s)
        out.append((s, goal))
    return out[0], out[1]


def assert_same(state: ClusterState, monkeypatch: pytest.MonkeyPatch, seed: int, **kw: Any) -> ClusterState:
    assert kernel_reads(state, cap=True), seed
    (compiled, goal_c), (plain, goal_p) = both(state, monkeypatch, **kw)
    assert same_state(compiled, plain), f"seed {seed}"
    assert indexes(compiled) == indexes(plain), f"seed {seed}"
    assert list(compiled.parked.items()) == list(plain.parked.items()), f"seed {seed}"
    assert arrivals(goal_c) == arrivals(goal_p), f"seed {seed}"
    assert goal_c._costly.tolist() == goal_p._costly.tolist(), f"seed {seed}"
    return compiled


def drawn_states(seeds: range, big: bool = False, cap: bool = True) -> Iterator[tuple[int, ClusterState]]:
    """Each drawn cluster a plan fits, as the bytes goal receives it: the goals before it optimised and vetoing,
    and (``cap``) the move cap set, as ``core._balance`` sets it before the first goal after the counts."""
    for seed in seeds:
        snap, options = drawn_cluster(seed, big=big)
        try:
            state = state_before(snap, options, ByteBalanceGoal.name)
        except PlanError:
            continue
        if cap and state.move_cap is None:
            state.cap_moves()
        yield seed, state


@pytest.mark.parametrize("cap", [True, False])
def test_compiled_actions_are_the_moves_the_goals_python_methods_make(cap: bool,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # Drawn clusters (racks or none, log dirs with and without sizes, decommissions, removed dirs, tight disks, a
    # raised RF) as the count goal leaves them: the same moves in the same order, every donor index, parked replica
    # and arrival list left as the Python methods leave them, and the same costly swaps counted.
    planned = moved = parked = 0
    for seed, state in drawn_states(range(150), cap=cap):
        seen = len(state.changes)
        compiled = assert_same(state, monkeypatch, seed)
        planned += 1
        moved += len(compiled.changes) > seen
        parked += bool(compiled.parked)
    assert planned >= 100 and moved >= 50, (planned, moved)
    assert not cap or parked >= 5, parked


def test_big_brokers_searches_stop_short_and_swaps_run_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    # Four brokers of hundreds of partitions each: searches end at their limit, swaps and the arrival lists do the
    # work; with at most one costly swap per broker the cheap-swap window binds too.
    swaps = 0
    for seed, state in drawn_states(range(40), big=True):
        for costly in (byte_balance.COSTLY_SWAPS, 1):
            compiled = assert_same(copy.deepcopy(state), monkeypatch, seed, costly=costly)
            swaps += sum(1 for i in range(1, len(compiled.changes))
                         if compiled.changes[i][1] == compiled.changes[i - 1][2])  # fmt: skip
    assert swaps >= 20, swaps


def test_indexes_and_arrivals_an_earlier_search_left_are_read_as_they_were(monkeypatch: pytest.MonkeyPatch) -> None:
    # Indexes searched before (touched replicas set aside, arrivals taken in, replicas parked at the cap) and a goal
    # whose arrival lists were fed already: the compiled run starts from them.
    sided = 0
    for seed, state in drawn_states(range(60)):
        sided += searched_before(state)
        assert_same(state, monkeypatch, seed)
    assert sided >= 10, sided


def test_a_veto_the_kernel_does_not_read_sends_the_goal_to_its_python_methods() -> None:
    _, state = next(drawn_states(range(3, 50)))
    assert kernel_reads(state, cap=True)
    state.vetoes.append(python_veto())
    assert not kernel_reads(state, cap=True)
    state.vetoes.pop()
    state.vetoes.append(ByteBalanceGoal())  # a goal after the bytes keeps them by ``ByteGuard``, which it does not read
    assert not kernel_reads(state, cap=True)


def test_the_compiled_run_brings_every_broker_into_its_band() -> None:
    # Two brokers of four hold everything, one of them the large replicas: the counts even out first, then the bytes
    # goal's compiled moves and swaps bring every broker within its band.
    parts = [part("big", i, [0], size_bytes=10 * MiB) for i in range(60)]
    parts += [part("small", i, [1], size_bytes=1 * MiB) for i in range(60)]
    state = state_before(snapshot([0, 1, 2, 3], parts), PlanOptions(goals=("replica-count", "bytes")),
                         ByteBalanceGoal.name)  # fmt: skip
    state.cap_moves()
    assert kernel_reads(state, cap=True)
    elig = np.asarray(state.eligible_idx)
    assert (state.bytes[elig] > state.byte_hi[elig]).any()
    ByteBalanceGoal().optimize(state)
    assert ((state.bytes[elig] <= state.byte_hi[elig]) & (state.bytes[elig] >= state.byte_lo[elig])).all(), \
        (state.bytes[elig], state.byte_lo[elig], state.byte_hi[elig])
