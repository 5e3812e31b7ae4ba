"""The goal registry: which goals exist, which always apply, and in what order a plan runs them."""

from __future__ import annotations

import pytest

from kafka_rebalance.errors import PlanError
from kafka_rebalance.planner import PlanOptions, make_plan
from kafka_rebalance.planner.goals.base import Goal
from kafka_rebalance.planner.goals.registry import _subclasses, hard_names, names, replica_goals, selected, soft_names
from tests.support.clusters import part, snapshot

GIB = 1024**3


def test_every_goal_is_registered_once_in_priority_order() -> None:
    assert names() == ("placement", "rack-safety", "disk-capacity", "replica-count", "bytes", "topic-spread",
                       "network-in", "network-out", "preferred-leader", "leader-imbalance")
    assert hard_names() == ("placement", "rack-safety", "disk-capacity")


def test_hard_goals_always_apply_and_the_soft_ones_follow_the_selection() -> None:
    # none named: every goal but the opt-in ones (topic-spread, network-in, network-out)
    assert selected(()) == tuple(n for n in names() if n not in ("topic-spread", "network-in", "network-out"))
    # the operator's order among replica goals is kept; leader goals run on the final replica sets, last
    assert selected(("leader-imbalance", "bytes", "replica-count")) == (
        "placement", "rack-safety", "disk-capacity", "bytes", "replica-count", "leader-imbalance")
    # naming a hard goal changes nothing: it cannot be dropped nor moved
    assert selected(("bytes", "placement")) == ("placement", "rack-safety", "disk-capacity", "bytes")
    assert [g.name for g in replica_goals(("preferred-leader", "bytes"))] == ["placement", "rack-safety", "disk-capacity",
                                                                             "bytes"]


def test_an_unknown_goal_is_one_error_naming_the_known_ones() -> None:
    with pytest.raises(PlanError) as err:
        selected(("bytes", "cpu"))
    assert str(err.value) == ("--goals: unknown goal(s) cpu (goals: placement, rack-safety, disk-capacity, replica-count, "
                              "bytes, topic-spread, network-in, network-out, preferred-leader, leader-imbalance)")


def skewed_counts() -> list:
    """Broker 0 holds three 1 GiB replicas, broker 1 one 3 GiB replica: bytes are even (3 GiB each,
    mean 3), counts are not (3 and 1 against 2..2)."""
    return [part("a", 0, [0], size_bytes=GIB), part("a", 1, [0], size_bytes=GIB), part("a", 2, [0], size_bytes=GIB),
            part("b", 0, [1], size_bytes=3 * GIB)]


@pytest.mark.parametrize("optimizer", ["heuristic", "exact"])
def test_a_goal_left_out_is_neither_optimised_nor_constrained(optimizer: str) -> None:
    snap = snapshot([0, 1], skewed_counts())
    # Every goal: counts must go 2/2, so one 1 GiB replica moves to broker 1; bytes are then 2 and 4 GiB, outside
    # +-10 % of 3, and no assignment meets both (the count goal ranks first; the exact model widens the band).
    full = make_plan(snap, PlanOptions(optimizer=optimizer)).summary
    assert full["targets"]["replicas_reached"] is True and full["replica_moves"] == 1
    # Without the replica-count goal, bytes are already even: nothing moves, in the heuristic and the exact
    # model alike (exact.py takes its constraints from the selected goals only).
    bytes_only = make_plan(snap, PlanOptions(optimizer=optimizer, goals=("bytes",))).summary
    assert bytes_only["replica_moves"] == 0 and bytes_only["targets"]["bytes_reached"] is True
    assert bytes_only["targets"]["replicas_reached"] is False  # still reported, no longer promised
    assert [g["name"] for g in bytes_only["goals"]] == ["placement", "rack-safety", "disk-capacity", "bytes"]


def test_the_soft_goals_are_every_goal_but_the_hard_ones() -> None:
    assert soft_names() == ("replica-count", "bytes", "topic-spread", "network-in", "network-out", "preferred-leader",
                            "leader-imbalance")


def test_unknown_goals_are_all_named_in_the_one_error() -> None:
    with pytest.raises(PlanError, match=r"^--goals: unknown goal\(s\) cpu, disk \(goals: "):
        selected(("cpu", "bytes", "disk"))


def test_relief_mode_keeps_the_hard_goals_and_only_the_selected_goals_with_a_limit_to_relieve() -> None:
    # network-in has a limit to relieve; bytes and network-out do not, and naming a hard goal adds nothing.
    assert selected(("bytes", "network-in", "network-out", "placement"), relieve=True) == (
        "placement", "rack-safety", "disk-capacity", "network-in")
    assert [g.name for g in replica_goals(("bytes", "network-in"), relieve=True)] == [
        "placement", "rack-safety", "disk-capacity", "network-in"]


def test_subclasses_are_found_at_every_depth() -> None:
    class A(Goal):
        pass

    class B(A):
        pass

    class C(B):
        pass

    class D(A):
        pass

    assert _subclasses(A) == [B, C, D]
