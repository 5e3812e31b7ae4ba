"""The byte trim's compiled pass (goals/byte_trim_moves.py) against its Python loop (``ByteTrimGoal._pass``)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import replace

import pytest

from kafka_rebalance.errors import PlanError
from kafka_rebalance.options import PlanOptions
from kafka_rebalance.planner.goals import byte_balance, byte_trim
from kafka_rebalance.planner.goals.byte_balance import ByteBalanceGoal
from kafka_rebalance.planner.goals.byte_trim import ByteTrimGoal
from kafka_rebalance.planner.state import ClusterState
from kafka_rebalance.testing import corpus
from tests.support.clusters import drawn_cluster, indexes, python_veto, same_state, searched_before, state_before

EVERY_REPLICA_GOAL = ("replica-count", "bytes", "topic-spread", "network-in")


def untrimmed(seeds: range, big: bool = False) -> Iterator[tuple[int, ClusterState]]:
    """Each drawn cluster a plan fits, as the bytes goal leaves it before its trim (the move cap set, as
    ``core._balance`` sets it before the first goal after the counts)."""
    for seed in seeds:
        snap, options = drawn_cluster(seed, big=big)
        try:
            state = state_before(snap, options, ByteBalanceGoal.name)
        except PlanError:
            continue
        if state.move_cap is None:
            state.cap_moves()
        with pytest.MonkeyPatch.context() as m:
            m.setattr(byte_balance.ByteTrimGoal, "optimize", lambda self, st: None)
            ByteBalanceGoal().optimize(state)
        yield seed, state


def trimmed_both_ways(state: ClusterState, followers_only: bool, seed: int) -> ClusterState:
    """The trim on ``state`` compiled and on a copy through its Python loop: the same swaps in the same order, and
    every donor index and parked replica left alike. Returns the compiled one."""
    assert byte_trim.compiled(state), seed
    plain = copy.deepcopy(state)
    ByteTrimGoal(followers_only=followers_only).optimize(state)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(byte_trim, "compiled", lambda st: False)
        ByteTrimGoal(followers_only=followers_only).optimize(plain)
    assert state.changes == plain.changes, f"seed {seed}"
    assert same_state(state, plain), f"seed {seed}"
    assert indexes(state) == indexes(plain), f"seed {seed}"
    assert list(state.parked.items()) == list(plain.parked.items()), f"seed {seed}"
    assert state.touched.tolist() == plain.touched.tolist(), f"seed {seed}"
    return state


def swaps(state: ClusterState, seen: int) -> int:
    return (len(state.changes) - seen) // 2


def test_the_compiled_pass_makes_the_swaps_the_python_loop_makes() -> None:
    # Drawn clusters (racks or none, log dirs with and without sizes, decommissions, removed dirs, tight disks, a
    # raised RF) as the bytes goal leaves them, trimmed, and trimmed for followers only (as after the leader keeper):
    # the same swaps, and the indexes, parked replicas and restored partitions alike.
    planned = trimmed = for_followers = 0
    for seed, state in untrimmed(range(150)):
        seen = len(state.changes)
        followers = copy.deepcopy(state)
        trimmed_both_ways(state, False, seed)
        trimmed_both_ways(followers, True, seed)
        planned += 1
        trimmed += swaps(state, seen) > 0
        for_followers += swaps(followers, seen) > 0
    assert planned >= 100 and trimmed >= 25 and for_followers >= 10, (planned, trimmed, for_followers)


@pytest.mark.parametrize("limit", [byte_trim.SEARCH, 2, 1])
def test_big_brokers_searches_stop_at_their_limit_the_same_way(limit: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Hundreds of partitions per broker: searches pass touched replicas (set aside) and, with a low limit, stop at it.
    monkeypatch.setattr(byte_trim, "SEARCH", limit)
    trimmed = 0
    for seed, state in untrimmed(range(40), big=True):
        seen = len(state.changes)
        trimmed_both_ways(state, False, seed)
        trimmed += swaps(state, seen)
    assert trimmed >= 50, trimmed


def test_indexes_an_earlier_search_left_are_read_as_they_were() -> None:
    # Indexes searched before (touched replicas set aside, replicas parked at the cap): the compiled pass starts
    # from them.
    sided = 0
    for seed, state in untrimmed(range(60)):
        sided += searched_before(state)
        trimmed_both_ways(state, False, seed)
    assert sided >= 10, sided


def test_after_every_replica_goal_the_trims_ask_topic_spread_and_network_in_as_the_python_loop_does() -> None:
    # The trims where topic spread and network in veto too (their tallies read in arrays), on the state every replica
    # goal left with the bytes goal's own trim held back (so that there is something to trim): the followers' trim, as
    # after the leader keeper, and the first one.
    planned = trimmed = 0
    for seed in range(120):
        snap, options = drawn_cluster(seed)
        try:
            with pytest.MonkeyPatch.context() as m:
                m.setattr(byte_balance.ByteTrimGoal, "optimize", lambda self, st: None)
                state = state_before(snap, replace(options, goals=EVERY_REPLICA_GOAL), "")
        except PlanError:
            continue
        for followers_only in (True, False):
            one = copy.deepcopy(state)
            seen = len(one.changes)
            trimmed_both_ways(one, followers_only, seed)
            trimmed += swaps(one, seen) > 0
        planned += 1
    assert planned >= 50 and trimmed >= 2, (planned, trimmed)


def test_a_corpus_members_trims_after_every_replica_goal_are_the_python_loops() -> None:
    # 50 brokers and 20,000 partitions, every replica goal vetoing and the bytes goal's own trim held back: both trims
    # swap a few replicas (topic spread and network in refuse most), the same in arrays as in Python.
    snap, options = corpus.member("50b-20k-7-5")
    with pytest.MonkeyPatch.context() as m:
        m.setattr(byte_balance.ByteTrimGoal, "optimize", lambda self, st: None)
        state = state_before(snap, PlanOptions(**{**options, "goals": EVERY_REPLICA_GOAL}), "")
    seen = len(state.changes)
    for followers_only in (False, True):
        one = copy.deepcopy(state)
        trimmed_both_ways(one, followers_only, 0)
        assert swaps(one, seen) >= 10, (followers_only, swaps(one, seen))


def test_a_veto_the_kernel_does_not_read_sends_the_trim_to_its_python_loop() -> None:
    _, state = next(untrimmed(range(3, 50)))
    assert byte_trim.compiled(state)
    state.vetoes.append(python_veto())
    assert not byte_trim.compiled(state)
