"""The transition table, every pair of states of every kind, and the one definition of a landed move."""

from __future__ import annotations

import itertools

import pytest

from kafka_rebalance.cluster.admin import PartitionView
from kafka_rebalance.executor.moves import (
    STATES_OF,
    IllegalTransition,
    Kind,
    MoveState,
    allowed,
    check_transition,
    landing_problem,
)

S = MoveState
# Written out by hand from the design (docs/ARCHITECTURE.md, "Move states"), not read from the table.
EXPECTED = {
    Kind.BATCH: {
        (S.PENDING, S.THROTTLES_RECORDED), (S.PENDING, S.SUBMITTED),
        (S.THROTTLES_RECORDED, S.THROTTLED), (S.THROTTLES_RECORDED, S.SUBMITTED), (S.THROTTLES_RECORDED, S.FAILED),
        (S.THROTTLES_RECORDED, S.CANCELLED),
        (S.THROTTLED, S.THROTTLES_RECORDED), (S.THROTTLED, S.SUBMITTED), (S.THROTTLED, S.FAILED), (S.THROTTLED, S.CANCELLED),
        (S.SUBMITTED, S.THROTTLES_RECORDED), (S.SUBMITTED, S.FINISHED), (S.SUBMITTED, S.FAILED), (S.SUBMITTED, S.CANCELLED),
        (S.FAILED, S.THROTTLES_RECORDED), (S.FAILED, S.SUBMITTED), (S.FAILED, S.FINISHED), (S.FAILED, S.CANCELLED),
        (S.CANCELLED, S.THROTTLES_RECORDED), (S.CANCELLED, S.SUBMITTED), (S.CANCELLED, S.FINISHED), (S.CANCELLED, S.FAILED),
    },
    Kind.STEP: {
        (S.PENDING, S.SUBMITTED), (S.SUBMITTED, S.FINISHED), (S.SUBMITTED, S.FAILED), (S.SUBMITTED, S.CANCELLED),
        (S.FAILED, S.SUBMITTED), (S.CANCELLED, S.SUBMITTED),
    },
    Kind.RUN: {(S.PENDING, S.SUBMITTED), (S.SUBMITTED, S.FINISHED), (S.SUBMITTED, S.FAILED), (S.FAILED, S.SUBMITTED)},
}
STATES = {
    Kind.BATCH: set(S),
    Kind.STEP: {S.PENDING, S.SUBMITTED, S.FINISHED, S.FAILED, S.CANCELLED},
    Kind.RUN: {S.PENDING, S.SUBMITTED, S.FINISHED, S.FAILED},
}


@pytest.mark.parametrize(("kind", "current", "new"), [
    (kind, a, b) for kind in Kind for a, b in itertools.product(S, S)])
def test_every_pair_of_states_is_allowed_or_refused_as_designed(kind, current, new):
    valid = current in STATES[kind] and new in STATES[kind] and (current == new or (current, new) in EXPECTED[kind])
    assert allowed(kind, current, new) is valid
    if valid:
        assert check_transition(kind, "x", current.value, new) is new
    else:
        with pytest.raises(IllegalTransition, match=f"{kind.value} x: "):
            check_transition(kind, "x", current.value, new)


def test_the_states_of_each_kind_are_the_designed_ones():
    assert {k: set(v) for k, v in STATES_OF.items()} == STATES


def test_finished_is_final_and_an_unknown_state_is_refused():
    for kind in Kind:
        assert not any(allowed(kind, S.FINISHED, new) for new in S if new != S.FINISHED)
    with pytest.raises(IllegalTransition, match="unknown state 'done'"):
        check_transition(Kind.STEP, "step 3", "done", S.FINISHED)


@pytest.mark.parametrize(("view", "problem"), [
    (PartitionView((1, 2, 3), (3, 1, 2), 1), None),
    (None, "does not exist"),
    (PartitionView((2, 1, 3), (1, 2, 3), 1), "replicas [2, 1, 3], target [1, 2, 3]"),
    (PartitionView((1, 2, 3, 4), (1, 2, 3, 4), 1), "replicas [1, 2, 3, 4], target [1, 2, 3]"),
    (PartitionView((1, 2, 3), (1, 2), 1), "ISR [1, 2] lacks [3]"),
    (PartitionView((1, 2, 3), (1, 2, 3), -1), "has no leader"),
    (PartitionView((1, 2, 3), (1, 2, 3), 4), "led by broker 4, which is not a target replica"),
])
def test_a_move_has_landed_only_with_target_replicas_a_full_isr_and_a_leader_among_them(view, problem):
    assert landing_problem(view, (1, 2, 3)) == problem
