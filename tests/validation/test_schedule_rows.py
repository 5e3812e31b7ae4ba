"""The schedule rows of the reassignment_plan suite (``expect_schedule_matches_batches``), row by row.

Whole plans go through Great Expectations in test_real_plans.py; this checks the row builder's
verdict on each way a step can disagree with its batch, without a validation run per case.
"""

from __future__ import annotations

from typing import Any

import pytest

from kafka_rebalance.validation.rows import _schedule_problems

MOVES = {("001", "t", 0): ((1, 2), (3, 2)), ("002", "t", 0): ((3, 2), (3, 4)), ("001", "u", 5): ((1, 2, 3), (1, 2))}


def rows() -> list[dict[str, Any]]:
    return [
        {"id": 0, "batch": "001", "topic": "t", "partition": 0, "before": [1, 2], "replicas": [3, 2], "adds": [3],
         "removes": [1], "after": None},
        {"id": 1, "batch": "001", "topic": "u", "partition": 5, "before": [1, 2, 3], "replicas": [1, 2], "adds": [],
         "removes": [3], "after": None},
        {"id": 2, "batch": "002", "topic": "t", "partition": 0, "before": [3, 2], "replicas": [3, 4], "adds": [4],
         "removes": [2], "after": 0},
    ]


def test_a_schedule_that_is_its_batches_has_no_problem() -> None:
    assert [problem for _, problem in _schedule_problems(rows(), MOVES)] == [None, None, None]


@pytest.mark.parametrize("field, value, says", [
    ("adds", [5], "not the difference"),           # a lane on a broker the move never touches
    ("adds", [3, 3], "not the difference"),
    ("adds", ["3"], "not the difference"),          # wrong type: a problem, never a comparison error
    ("removes", [], "not the difference"),
    ("adds", None, "not the difference"),
    ("replicas", [3, 1], "but batch 001 moves"),
    ("after", 1, "previous step"),
    ("id", 7, "expected 0"),
])
def test_each_disagreement_with_the_batch_is_named(field: str, value: Any, says: str) -> None:
    steps = rows()
    steps[0][field] = value
    problems = [problem for _, problem in _schedule_problems(steps, MOVES)]
    assert problems[0] is not None and says in problems[0], problems


def test_a_move_missing_from_the_schedule_is_named() -> None:
    out = _schedule_problems(rows()[:2], MOVES)
    assert ("batch 002 t-0", "this data move is missing from schedule.json") in out
