"""The vetoes as the kernels read them (goals/compiled_state.py) against the goals' own ``accept_move``."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pytest

from kafka_rebalance.errors import PlanError
from kafka_rebalance.planner.goals.compiled_state import (
    F_NET,
    F_NET_TOP,
    F_PYTHON,
    F_SPREAD,
    T_HEAD,
    accepts,
    board_arrays,
    follow_dirs,
    kernel_records,
    move_on_board,
    network_ok,
    spread_ok,
    tally_views,
    veto_arrays,
)
from kafka_rebalance.planner.goals.network import NetworkInGoal
from kafka_rebalance.planner.goals.topic_spread import TopicSpreadGoal
from kafka_rebalance.planner.state import ClusterState
from tests.support.clusters import drawn_cluster, state_before

GOALS = ("replica-count", "bytes", "topic-spread", "network-in")


def vetoing(seeds: range, relieve: bool) -> Iterator[tuple[int, ClusterState, TopicSpreadGoal, NetworkInGoal]]:
    """Each drawn cluster a plan fits, every replica goal optimised and vetoing (``relieve``: network in's veto in
    relief mode, every capacity taken as known)."""
    for seed in seeds:
        snap, options = drawn_cluster(seed)
        try:
            state = state_before(snap, replace(options, goals=GOALS), "")
        except PlanError:
            continue
        spread = next(g for g in state.vetoes if isinstance(g, TopicSpreadGoal))
        net = next(g for g in state.vetoes if isinstance(g, NetworkInGoal))
        if relieve:
            net._setup(state)
            net.capacities_known = True
            state.options = replace(state.options, relieve=True)
        yield seed, state, spread, net


@pytest.mark.parametrize("relieve", [False, True])
def test_the_vetoes_in_arrays_answer_as_the_goals_do_move_after_move(relieve: bool) -> None:
    # Random moves (most refused by some goal) asked of the arrays and of the state, and now and then an allowed one
    # made on both: the same answers throughout, overall and goal by goal, and the tallies kept alike (the same floats).
    rng = random.Random(7)
    planned = refused_spread = refused_net = made = 0
    for seed, state, spread, net in vetoing(range(80), relieve):
        flags, veto, dirs, asked = veto_arrays(state)
        assert asked is None and not flags[F_PYTHON] and flags[F_SPREAD] and flags[F_NET], seed
        assert flags[F_NET_TOP] == relieve
        board = board_arrays(state, np.zeros(state.n_parts, dtype=np.int64), flags)
        records = kernel_records(board, veto, dirs)  # (as the kernels take them: the same arrays)
        planned += 1
        for _ in range(80):
            p = rng.randrange(state.n_parts)
            row = state.row(p)
            src, dst = rng.choice(row), rng.randrange(state.n_brokers)
            for neutral in (False, True):
                assert accepts(p, src, dst, neutral, flags, *records) == \
                    state.accepts(p, src, dst, count_neutral=neutral), (seed, p, src, dst, neutral)
            by_spread = spread.accept_move(state, p, src, dst)
            by_net = net.accept_move(state, p, src, dst)
            assert spread_ok(p, src, dst, board[7], board[13]) == by_spread, (seed, p, src, dst)
            assert network_ok(p, src, dst, board[7], relieve, board[13]) == by_net, (seed, p, src, dst)
            refused_spread += not by_spread
            refused_net += not by_net
            # p's replica moved, now and then, to a broker every veto allows where there is one (most random moves are
            # refused), else anywhere: the tallies follow any move
            others = [b for b in range(state.n_brokers) if b not in row]
            to = next((b for b in others if state.accepts(p, src, b)), rng.choice(others) if others else None)
            if to is not None and rng.random() < 0.3:
                state.move(p, src, to)
                j = move_on_board(p, src, to, records[0])
                board[3][p] = True  # (touched, and the log dirs followed: as ``donor_arrays.move_tracked``)
                follow_dirs(p, j, src, to, int(board[4][p]), board[1], board[2], records[2])
                made += 1
        spread._sync(state)
        net._sync(state)
        tallies = tally_views(board)
        assert tallies["held"].tolist() == spread.held.astype(float).tolist(), seed
        assert tallies["load"].tolist() == net.load.tolist(), seed
    assert planned >= 50 and refused_spread >= 100 and refused_net >= 100 and made >= 200, \
        (planned, refused_spread, refused_net, made)


def test_relief_without_every_network_capacity_known_vetoes_nothing_in_arrays_as_in_python() -> None:
    seed, state, _, net = next(vetoing(range(80), False))
    state.options = replace(state.options, relieve=True)
    assert not net.capacities_known
    flags, _, _, _ = veto_arrays(state)
    assert flags[F_SPREAD] and not flags[F_NET], seed


def test_the_bands_edges_are_inside_in_arrays_as_in_the_goals() -> None:
    # Two brokers, one partition of topic 0 at rate 2.0: a move may end a broker exactly at its band's edge (the goals'
    # ``<=`` and ``>=``), not a step beyond it.
    eligible = np.array([True, True])

    def spread(held: list[int], lo: list[int], hi: list[int]) -> np.ndarray:
        return np.array([T_HEAD, -1.0, 1.0, *held, *lo, *hi, 0.0])  # header, then one topic's rows and p's topic

    assert spread_ok(0, 0, 1, eligible, spread([3, 1], [2, 0], [3, 2]))  # 0 ends at its floor 2, 1 at its ceiling 2
    assert not spread_ok(0, 0, 1, eligible, spread([3, 2], [2, 0], [3, 2]))  # 1 would end above its ceiling
    assert not spread_ok(0, 0, 1, eligible, spread([2, 1], [2, 0], [3, 2]))  # 0 would end below its floor
    assert spread_ok(0, 0, 1, np.array([False, True]), spread([2, 1], [2, 0], [3, 2]))  # unless it is leaving

    def net(load: list[float], lo: list[float], hi: list[float], top_only: bool = False) -> bool:
        return network_ok(0, 0, 1, eligible, top_only, np.array([-1.0, T_HEAD, 0.0, *load, *lo, *hi, 2.0]))

    assert net([5.0, 1.0], [3.0, 0.0], [9.0, 3.0])  # 0 ends at 3.0, its floor; 1 at 3.0, its top
    assert not net([5.0, 1.5], [3.0, 0.0], [9.0, 3.0])
    assert not net([4.5, 1.0], [3.0, 0.0], [9.0, 3.0])
    assert net([4.5, 1.0], [3.0, 0.0], [9.0, 3.0], top_only=True)  # relief mode: the top alone binds
