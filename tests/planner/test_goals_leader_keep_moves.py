"""The leader keeper's compiled pass (goals/leader_keep_moves.py) against its Python loop (``leader_keep._keep``)."""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np
import pytest

from kafka_rebalance.errors import PlanError
from kafka_rebalance.options import PlanOptions
from kafka_rebalance.planner.goals import byte_trim, leader_keep
from kafka_rebalance.planner.goals.leader_keep import _keep, _leaders_moves, keep_leaders
from kafka_rebalance.planner.goals.leader_keep_moves import keep_compiled
from kafka_rebalance.planner.state import ClusterState
from kafka_rebalance.testing import corpus
from tests.support.clusters import drawn_cluster, indexes, python_veto, same_state, searched_before, state_before

EVERY_REPLICA_GOAL = ("replica-count", "bytes", "topic-spread", "network-in")


def band(state: ClusterState) -> tuple[np.ndarray, np.ndarray]:
    edge = byte_trim.EDGE * state.options.byte_tolerance * state.byte_centre
    return state.byte_lo + edge, state.byte_hi - edge


def kept_both_ways(state: ClusterState, seed: int | str) -> int:
    """The keeper's pass on ``state`` compiled and on a copy through its Python loop: the same swaps in the same order,
    and every donor index and parked replica left alike. Returns how many it swapped."""
    assert byte_trim.compiled(state), seed
    plain = copy.deepcopy(state)
    todo = _leaders_moves(state)
    lower, upper = band(state)
    swapped = keep_compiled(state, todo, lower, upper, leader_keep.SEARCH)
    assert _keep(plain, todo, (lower, upper)) == swapped, f"seed {seed}"
    assert state.changes == plain.changes, f"seed {seed}"
    assert same_state(state, plain, cur_order=False), f"seed {seed}"  # (a trade's p may be a later trade's q)
    assert indexes(state) == indexes(plain), f"seed {seed}"
    assert list(state.parked.items()) == list(plain.parked.items()), f"seed {seed}"
    return swapped


def planned(seeds: range, big: bool = False, searched: bool = False, **changes: object) -> tuple[int, int, int]:
    """Drawn clusters after their replica goals (their options with ``changes``), kept both ways: how many a plan fits,
    how many of those swapped, and how many indexes had been searched before (``searched``)."""
    fits = swapped = sided = 0
    for seed in seeds:
        snap, options = drawn_cluster(seed, big=big)
        try:
            state = state_before(snap, replace(options, **changes), "")
        except PlanError:
            continue
        if searched:
            sided += searched_before(state)
        fits += 1
        swapped += kept_both_ways(state, seed) > 0
    return fits, swapped, sided


def test_the_compiled_pass_makes_the_swaps_the_python_loop_makes() -> None:
    # Drawn clusters (racks or none, log dirs with and without sizes, decommissions, removed dirs, tight disks, a
    # raised RF) as the replica goals leave them: the same swaps, indexes and parked replicas. The byte goals leave
    # little room for a swap in small clusters: few brokers holding hundreds of partitions, in a wider band, swap.
    fits, _, _ = planned(range(100))
    assert fits >= 60, fits
    fits, swapped, _ = planned(range(60), big=True, byte_tolerance=0.3)
    assert fits >= 40 and swapped >= 8, (fits, swapped)


def test_big_brokers_and_indexes_searched_before_are_kept_the_same_way(monkeypatch: pytest.MonkeyPatch) -> None:
    # Searches stopping at a low limit, from indexes an earlier goal searched (touched replicas set aside, replicas
    # parked at the cap).
    monkeypatch.setattr(leader_keep, "SEARCH", 8)  # (fewer swaps than at 64: searches do stop at it)
    fits, swapped, sided = planned(range(60), big=True, searched=True, byte_tolerance=0.3)
    assert fits >= 40 and swapped >= 5 and sided >= 5, (fits, swapped, sided)


def test_with_every_replica_goal_vetoing_the_pass_asks_them_as_the_python_loop_does() -> None:
    fits, _, _ = planned(range(80), goals=EVERY_REPLICA_GOAL)
    assert fits >= 30, fits


def test_a_corpus_members_leaders_are_kept_the_same_way() -> None:
    # 50 brokers and 20,000 partitions, every replica goal vetoing: thousands of leaders' moves looked at.
    snap, options = corpus.member("50b-20k-7-5")
    state = state_before(snap, PlanOptions(**{**options, "goals": EVERY_REPLICA_GOAL}), "")
    assert kept_both_ways(state, "50b-20k-7-5") >= 10


def test_keep_leaders_runs_the_kernel_where_it_reads_every_veto_and_the_loop_where_not(
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    runs: list[str] = []
    monkeypatch.setattr(leader_keep, "keep_compiled", lambda *a: runs.append("kernel") or 0)
    monkeypatch.setattr(leader_keep, "_keep", lambda *a: runs.append("python") or 0)
    for seed in range(3, 50):
        snap, options = drawn_cluster(seed)
        try:
            state = state_before(snap, options, "")
        except PlanError:
            continue
        keep_leaders(state)
        state.vetoes.append(python_veto())
        keep_leaders(state)
        break
    assert runs == ["kernel", "python"]
