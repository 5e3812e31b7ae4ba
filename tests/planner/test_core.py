"""The planner's assembly (planner/core.py): plan.json's summary, the optimizer's account of itself,
the elections and the rules a partition's intermediate steps follow, worked out by hand on clusters
of three or four brokers."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from kafka_rebalance.planner import PlanError, PlanOptions, core, make_plan
from kafka_rebalance.planner.exact import ExactResult, ExactStatus
from kafka_rebalance.planner.goals.preferred_leader import LeaderChoice, electable_matrix
from tests.support.clusters import part, planner_state, snapshot

# 3,000 B/s delivered: a 1,000-byte replica takes 1/3 s, which the summary rounds to 0.3; plus 2 s of
# fixed cost per move (a batch's moves pay it once, side by side).
TINY_RATE = {"throttle_bytes_per_sec": 3000, "throttle_efficiency": 1.0, "move_fixed_seconds": 2.0}


def one_move_cluster() -> list[dict[str, Any]]:
    """a-0 and a-1 (1,000 B each) on broker 0, a-2 (1,001 B) on broker 1, nothing on broker 2: one of
    the a-0/a-1 pair must move to broker 2, and which one is a tie the summary does not show."""
    return [part("a", 0, [0], size_bytes=1000), part("a", 1, [0], size_bytes=1000),
            part("a", 2, [1], size_bytes=1001)]


def test_the_summary_of_a_one_move_plan_field_by_field() -> None:
    plan = make_plan(snapshot([0, 1, 2], one_move_cluster()), PlanOptions(optimizer="heuristic", **TINY_RATE))
    s = plan.summary
    # 3 replicas on 3 brokers: one each. 3,001 bytes: mean 1,000.33, every band +-10 % of it.
    assert s["replica_moves"] == 1 and s["bytes_moved"] == 1000
    # Broker 0 holds one replica too many, and the lightest it can give away is 1,000 bytes.
    assert s["lower_bounds"] == {"replica_moves": 1, "bytes_moved": 1000}
    assert s["ratio_to_lower_bound"] == {"replica_moves": 1.0, "bytes_moved": 1.0}
    # 1,000 bytes at 3,000 B/s, and the move's fixed 2 s; the one move is one batch too, so both modes agree.
    assert (s["estimated_seconds"], s["estimate_of"], s["estimated_seconds_batches"]) == (2.3, "continuous", 2.3)
    # The physical bound is bytes over the rate: 1/3 s, and 2.333 / 0.333 = 7.0.
    assert s["continuous"] == {"estimated_seconds": 2.3, "physical_bound_seconds": 0.3, "ratio_to_bound": 7.0,
                               "batched_ratio_to_bound": 7.0}
    assert s["before"] == [
        {"broker_id": 0, "replicas": 2, "leaders": 2, "preferred_leaders": 2, "size_bytes": 2000},
        {"broker_id": 1, "replicas": 1, "leaders": 1, "preferred_leaders": 1, "size_bytes": 1001},
        {"broker_id": 2, "replicas": 0, "leaders": 0, "preferred_leaders": 0, "size_bytes": 0},
    ]
    # The moved single replica leads on broker 2 once it is the only replica.
    assert s["projected"] == [
        {"broker_id": 0, "replicas": 1, "leaders": 1, "preferred_leaders": 1, "size_bytes": 1000},
        {"broker_id": 1, "replicas": 1, "leaders": 1, "preferred_leaders": 1, "size_bytes": 1001},
        {"broker_id": 2, "replicas": 1, "leaders": 1, "preferred_leaders": 1, "size_bytes": 1000},
    ]
    assert s["targets"] == {
        "replicas": {"0": [1, 1], "1": [1, 1], "2": [1, 1]},
        "preferred_leaders": [1, 1],
        "byte_mean": 1000.3,  # 3001 / 3 = 1000.333...
        "byte_targets": {"0": 1000.3, "1": 1000.3, "2": 1000.3},
        "byte_bands": {"0": [900.3, 1100.4], "1": [900.3, 1100.4], "2": [900.3, 1100.4]},  # the mean +- 10 %
        "forced_shares": [],
        "clamped_racks": [],
        "replicas_reached": True,
        "bytes_reached": True,
        "byte_tolerance": 0.1,
        "byte_misses": [],
    }
    assert s["leader_imbalance"] == {"threshold_percentage": 10.0, "brokers_over_threshold_after_election": []}
    assert s["optimizer"] == {"requested": "heuristic", "used": "heuristic", "exact_status": "heuristic",
                              "time_limited": False, "work_limited": False, "bytes_moved": 1000, "bytes_bound": 1000,
                              "gap_percent": 0.0, "band_widened_bytes": 0}
    assert s["rack_violations_unrepaired"] == [] and s["steps_beyond_max_new_replicas"] == 0
    # The move of a single replica needs no reorder. Its leader was broker 0 and its preferred replica
    # will be broker 2, so it is on the election list ("might not lead yet"; a no-op if it already does).
    assert (s["reorders"], s["leader_elections"]) == (0, 1)
    # Its leader changes (0 -> 2, the moved replica was the only one); the other two keep theirs.
    assert s["leader_changes"] == 1
    assert list(s) == ["replica_moves", "bytes_moved", "lower_bounds", "ratio_to_lower_bound", "estimated_seconds",
                       "estimate_of", "estimated_seconds_batches", "continuous", "before", "projected", "targets", "leader_imbalance", "optimizer",
                       "rack_violations_unrepaired", "steps_beyond_max_new_replicas", "reorders", "leader_elections",
                       "leader_changes", "goals"]
    # Every goal judges the cluster before and the plan after. Before: counts 2/1/0 against 1..1 (brokers
    # 0 and 2 one off), bytes 2000/1001/0 against 1000.33 (broker 2 is 100 % off, broker 0 99.93 %),
    # first replicas 2/1/0 against 1..1, every partition led by its first replica. After: one each,
    # bytes 1000/1001/1000 (broker 1 is 0.67/1000.33 = 0.000666 off). The one move is the count goal's.
    goals = {g["name"]: {k: v for k, v in g.items() if k != "target"} for g in s["goals"]}
    clean = {"value": 0.0, "reached": True, "offenders": []}
    assert [g["name"] for g in s["goals"]] == ["placement", "rack-safety", "disk-capacity", "replica-count", "bytes",
                                               "preferred-leader", "leader-imbalance"]
    assert goals == {
        "placement": {"name": "placement", "hard": True, "before": clean, "after": clean, "reached": True,
                      "moves": 0, "bytes": 0},
        "rack-safety": {"name": "rack-safety", "hard": True, "before": clean, "after": clean, "reached": True,
                        "moves": 0, "bytes": 0},
        # no broker records its disks' size: none is held to a limit
        "disk-capacity": {"name": "disk-capacity", "hard": True, "before": clean, "after": clean, "reached": True,
                          "moves": 0, "bytes": 0},
        "replica-count": {"name": "replica-count", "hard": False, "before": {"value": 1.0, "reached": False,
                          "offenders": [0, 2]}, "after": clean, "reached": True, "moves": 1, "bytes": 1000},
        "bytes": {"name": "bytes", "hard": False, "before": {"value": 1.0, "reached": False, "offenders": [0, 2]},
                  "after": {"value": 0.000666, "reached": True, "offenders": []}, "reached": True, "moves": 0,
                  "bytes": 0},
        "preferred-leader": {"name": "preferred-leader", "hard": False, "before": {"value": 1.0, "reached": False,
                             "offenders": [0, 2]}, "after": clean, "reached": True, "moves": 0, "bytes": 0},
        "leader-imbalance": {"name": "leader-imbalance", "hard": False, "before": clean, "after": clean,
                             "reached": True, "moves": 0, "bytes": 0},
    }
    assert all(g["target"] for g in s["goals"])


def test_bytes_outside_the_band_are_reported_unreached() -> None:
    # 1,000 / 2,000 / 3,000 bytes on three brokers that must hold one replica each: the counts are
    # reached whatever the planner does, the bytes (a 2,000 +-200 band) never are. Nothing moves:
    # any permutation leaves the same three loads.
    parts = [part("a", 0, [0], size_bytes=1000), part("a", 1, [1], size_bytes=2000),
             part("a", 2, [2], size_bytes=3000)]
    s = make_plan(snapshot([0, 1, 2], parts), PlanOptions(optimizer="heuristic", **TINY_RATE)).summary
    assert (s["replica_moves"], s["bytes_moved"]) == (0, 0)
    assert (s["targets"]["replicas_reached"], s["targets"]["bytes_reached"]) == (True, False)
    assert s["targets"]["byte_mean"] == 2000.0
    # Broker 2's miss is proven: no broker can hold a-2 (3,000 bytes) inside a band topped at 2,200. So is
    # broker 0's, by a-2 too: whoever holds it, the other two share 3,000 bytes, below their bottoms' 3,600.
    big = "holds a-2 (3,000 bytes), more than any eligible broker can take and stay in its band (at most 2,200 bytes)"
    short = ("the cluster holds at most 6,000 bytes; whichever 1 broker holds a-2 (3,000 bytes), the other 2 share at "
             "most 3,000 bytes, below the bottoms of their bands summed (3,600 bytes): no plan puts every broker of "
             "the cluster in its band")
    assert s["targets"]["byte_misses"] == [
        {"broker_id": 0, "bytes": 1000, "low": 1800, "high": 2200, "reason": short},
        {"broker_id": 2, "bytes": 3000, "low": 1800, "high": 2200, "reason": big},
    ]
    # Nothing to move and nothing moved: the ratios of 0 to 0 are 1, not undefined.
    assert s["ratio_to_lower_bound"] == {"replica_moves": 1.0, "bytes_moved": 1.0}
    assert s["estimated_seconds"] == 0.0


def test_a_broker_below_its_range_gets_one_replica_and_no_more() -> None:
    # Two RF-2 partitions on brokers 0 and 1: 4 replicas on 3 brokers -> range [1, 2] each. Broker 2
    # holds 0 < 1: one replica moves there, and one is enough.
    parts = [part("a", 0, [0, 1]), part("a", 1, [0, 1])]
    s = make_plan(snapshot([0, 1, 2], parts), PlanOptions(optimizer="heuristic")).summary
    assert s["targets"]["replicas"] == {"0": [1, 2], "1": [1, 2], "2": [1, 2]}
    assert s["targets"]["replicas_reached"] is True and s["replica_moves"] == 1


def leadership_cluster() -> list[dict[str, Any]]:
    """x-0: preferred 0, no leader and an empty ISR (it stays as it is, with no leader); b-1: led by 1,
    preferred 0 in sync (elected); b-2: led by its preferred 1 (nothing to do); b-3: led by 0,
    preferred 1 in sync (elected). Each broker is preferred for two: nothing to reorder."""
    return [part("x", 0, [0, 1], leader=-1, isr=[]), part("b", 1, [0, 1], leader=1), part("b", 2, [1, 0]),
            part("b", 3, [1, 0], leader=0)]


def test_leaders_over_the_threshold_after_the_elections() -> None:
    # After the elections broker 0 leads b-1 but not x-0: 1 of its 2 preferred not led = 50 %.
    # Over a 40 % threshold, not over 50 % (the controller's rule is "more than").
    cluster = snapshot([0, 1], leadership_cluster())
    over = make_plan(cluster, PlanOptions(optimizer="heuristic", threshold_percentage=40)).summary["leader_imbalance"]
    assert over == {"threshold_percentage": 40.0, "brokers_over_threshold_after_election": [0]}
    at = make_plan(cluster, PlanOptions(optimizer="heuristic", threshold_percentage=50)).summary["leader_imbalance"]
    assert at == {"threshold_percentage": 50.0, "brokers_over_threshold_after_election": []}
    # An excluded topic's leadership is never the plan's to elect, so it does not count: 0 of 1.
    excluded = make_plan(cluster, PlanOptions(optimizer="heuristic", threshold_percentage=40, exclude_topics=("x",)))
    assert excluded.summary["leader_imbalance"]["brokers_over_threshold_after_election"] == []


def test_the_threshold_comes_from_the_cluster_when_not_given() -> None:
    cluster = snapshot([0, 1], [part("b", 0, [0, 1])])
    cluster = replace(cluster, configs={"leader.imbalance.per.broker.percentage": "25"})
    plan = make_plan(cluster, PlanOptions(optimizer="heuristic"))
    assert plan.options.threshold_percentage == 25.0 and plan.options.threshold_source != "default"
    assert plan.summary["leader_imbalance"]["threshold_percentage"] == 25.0
    # Given, it wins over the cluster's setting.
    given = make_plan(cluster, PlanOptions(optimizer="heuristic", threshold_percentage=30))
    assert given.options.threshold_percentage == 30 and given.summary["leader_imbalance"]["threshold_percentage"] == 30.0


@pytest.mark.parametrize(("value", "bound", "ratio"), [
    (3, 2, 1.5),
    (1, 7, 0.1429),  # 0.142857... to 4 places
    (0.5, 1, 0.5),  # a bound of exactly 1 is a bound, not "none"
    (0, 0, 1.0),  # nothing needed, nothing done
    (0.5, 0, None),  # something done where nothing was needed: no ratio
    (1, 0, None),
    (0, -1, 1.0),
])
def test_ratio(value: float, bound: float, ratio: float | None) -> None:
    assert core._ratio(value, bound) == ratio


def result(status: ExactStatus, rows: dict[int, list[int]] | None = None, *, moved: int = 0, bound: int = 0,
           strict: bool = True, limited: bool = False, widening: float = 0.0,
           widenings: tuple[float, ...] = ()) -> ExactResult:  # fmt: skip
    return ExactResult(status, rows, moved, bound, strict, 1.25, limited, widening, widenings)


def test_optimizer_summary_of_the_heuristic_alone() -> None:
    # No solver: the bound is the certified lower bound. 1,000 moved against 300: (1000-300)/300 = 233.33 %.
    got = core._optimizer_summary(PlanOptions(optimizer="heuristic"), None, 1000, 300, True)
    assert got == {"requested": "heuristic", "used": "heuristic", "exact_status": "heuristic", "time_limited": False,
                   "work_limited": False, "bytes_moved": 1000, "bytes_bound": 300, "gap_percent": 233.33, "band_widened_bytes": 0}
    # Moving something against a bound of 0 has no finite gap; moving nothing against 0 has none.
    assert core._optimizer_summary(PlanOptions(), None, 5, 0, True)["gap_percent"] is None
    assert core._optimizer_summary(PlanOptions(), None, 0, 0, True)["gap_percent"] == 0.0
    # 1,001 against 1,000: 0.1 %.
    assert core._optimizer_summary(PlanOptions(), None, 1001, 1000, True)["gap_percent"] == 0.1


def test_optimizer_summary_of_a_solved_plan() -> None:
    # The solver's plan is used: its proven bound (900) lifts the certified one (300), capped by what
    # moved (1,000): gap (1000-900)/900 = 11.11 %. The widest any broker's band had to widen is reported,
    # rounded; so is the node limit that ended its search. A time limit never cuts a plan: time_limited stays false.
    solved = result(ExactStatus.OPTIMAL, {0: [1]}, moved=1000, bound=900, limited=True, widening=1500.1,
                    widenings=(0.0, 1234.6, 265.5))
    got = core._optimizer_summary(PlanOptions(optimizer="exact"), solved, 1000, 300, False)
    assert got == {"requested": "exact", "used": "exact", "exact_status": "optimal", "time_limited": False, "work_limited": True,
                   "bytes_moved": 1000, "bytes_bound": 900, "gap_percent": 11.11, "band_widened_bytes": 1235}
    # A bound above what moved is capped at what moved (gap 0), never a negative gap.
    over = result(ExactStatus.FEASIBLE, {0: [1]}, moved=1000, bound=1200)
    assert core._optimizer_summary(PlanOptions(optimizer="exact"), over, 1000, 300, False)["bytes_bound"] == 1000


def test_optimizer_summary_when_the_heuristic_plan_was_kept() -> None:
    kept = result(ExactStatus.OPTIMAL, None, moved=1100, bound=900, widening=50.0)
    # The solver's bound holds for the heuristic's plan only if that plan reaches the unwidened band.
    reached = core._optimizer_summary(PlanOptions(), kept, 1000, 300, True)
    assert reached == {"requested": "auto", "used": "heuristic", "exact_status": "optimal", "time_limited": False,
                       "work_limited": False, "bytes_moved": 1000, "bytes_bound": 900, "gap_percent": 11.11,
                       "band_widened_bytes": 0}
    assert core._optimizer_summary(PlanOptions(), kept, 1000, 300, False)["bytes_bound"] == 300
    # ... and only if the solver's band was the tolerance band itself.
    loose = result(ExactStatus.OPTIMAL, None, moved=1100, bound=900, strict=False)
    assert core._optimizer_summary(PlanOptions(), loose, 1000, 300, True)["bytes_bound"] == 300
    # An infeasible model proves nothing about the heuristic's plan.
    infeasible = result(ExactStatus.INFEASIBLE, None, bound=900)
    got = core._optimizer_summary(PlanOptions(), infeasible, 1000, 300, True)
    assert (got["exact_status"], got["bytes_bound"], got["used"]) == ("infeasible", 300, "heuristic")


def test_reaches_all() -> None:
    # Broker 0 holds a-0 (3 GiB), broker 1 a-1 (1 GiB): one replica each is in range, but each is
    # 1 GiB off the 2 GiB target, whose band is +-0.2 GiB: 0.8 GiB outside it, 1.6 GiB for the two.
    gib = 1024**3
    state = planner_state([0, 1], [part("a", 0, [0], size_bytes=3 * gib), part("a", 1, [1], size_bytes=gib)],
                          targets=True)
    assert not core._reaches_all(state, [])
    # Widened by the missing 1.6 GiB in all it is reached, by a byte less it is not.
    assert core._reaches_all(state, [], widening=1.6 * gib)
    assert not core._reaches_all(state, [], widening=1.6 * gib - 1)
    balanced = planner_state([0, 1], [part("a", 0, [0]), part("a", 1, [1])], targets=True)
    assert core._reaches_all(balanced, [])
    # A rack violation left unrepaired is never "all".
    assert not core._reaches_all(balanced, ["a-0"])
    # Counts off: both partitions on broker 0.
    stacked = planner_state([0, 1], [part("a", 0, [0]), part("a", 1, [0])], targets=True)
    assert not core._reaches_all(stacked, [], widening=10.0 * gib)


def test_step_rules_keep_racks_safe_and_skip_dead_and_leaving_brokers() -> None:
    # Racks: 0,1 in r1; 2,3 in r2; broker 3 is decommissioned. The partition goes [0,2] -> [1,2].
    state = planner_state([(0, "r1"), (1, "r1"), (2, "r2"), (3, "r2")], [part("a", 0, [0, 2])],
                          decommission_brokers=(3,))
    valid = core.step_rules(state, [0, 2], [state.index_of[1], state.index_of[2]])
    assert valid([1, 2]) is True and valid([0, 2]) is True and valid([0, 2, 1]) is True  # 3 over 2 racks: 2+1
    assert valid([0, 1]) is False  # both in r1
    assert valid([1, 3]) is False  # rack-safe, but 3 is leaving
    # A rack-unsafe final list lifts the rack rule for the steps on the way, not the leaving rule.
    unsafe_final = core.step_rules(state, [0, 2], [state.index_of[0], state.index_of[1]])
    assert unsafe_final([0, 1]) is True and unsafe_final([0, 3]) is False


def test_step_rules_let_a_partition_leave_decommissioned_brokers_one_step_at_a_time() -> None:
    # Both replicas of [2,3] are on decommissioned brokers and one step may add only one replica:
    # the steps must pass through lists that still hold one of them.
    state = planner_state([0, 1, 2, 3], [part("a", 0, [2, 3])], decommission_brokers=(2, 3),
                          max_new_replicas_per_partition=1)
    valid = core.step_rules(state, [2, 3], [0, 1])
    assert valid([2, 3, 0]) is True
    # With two new replicas per step allowed they leave at once, and a list keeping one is invalid.
    state2 = planner_state([0, 1, 2, 3], [part("a", 0, [2, 3])], decommission_brokers=(2, 3),
                           max_new_replicas_per_partition=2)
    assert core.step_rules(state2, [2, 3], [0, 1])([2, 3, 0]) is False
    # One leaving replica with one new replica per step is within the limit: leaving brokers are barred.
    state3 = planner_state([0, 1, 2, 3], [part("a", 0, [2, 0])], decommission_brokers=(2,),
                           max_new_replicas_per_partition=1)
    assert core.step_rules(state3, [2, 0], [1, 0])([2, 0, 1]) is False


def test_elections_only_where_the_preferred_replica_can_lead() -> None:
    # The choice that keeps every first replica (the goal itself would rather reorder b-1 and b-3 to
    # their current leaders; here the elections are what is tested).
    state = planner_state([0, 1], leadership_cluster(), targets=True)
    rows = state.final_rows()
    choice = LeaderChoice(rows, electable_matrix(state, rows), rows[:, 0].astype(np.int64).copy(),
                          np.zeros(4, dtype=np.int64), (2, 2))
    elections, final = core._elections(state, choice)
    assert elections == [("b", 1), ("b", 3)]
    # In the state's (topic, partition) order b-1, b-2, b-3, x-0: the elected ones are led by their
    # preferred replica, b-2 keeps its leader and x-0 keeps none.
    assert [state.parts[p].name for p in range(4)] == ["b-1", "b-2", "b-3", "x-0"]
    assert final.tolist() == [0, 1, 1, -1]


def test_exact_if_better_runs_the_solver_only_when_asked() -> None:
    parts = [part("a", 0, [0]), part("a", 1, [0])]
    exact_state = planner_state([0, 1], parts, targets=True, optimizer="exact")
    assert core._exact_if_better(snapshot([0, 1], parts), exact_state.options, exact_state, [])[1] is not None
    heuristic = planner_state([0, 1], parts, targets=True, optimizer="heuristic")
    assert core._exact_if_better(snapshot([0, 1], parts), heuristic.options, heuristic, []) == (heuristic, None)


def test_exact_if_better_names_the_model_size_when_it_is_too_big(monkeypatch: pytest.MonkeyPatch) -> None:
    parts = [part("a", i, [0]) for i in range(3)]
    state = planner_state([0, 1], parts, targets=True, optimizer="exact")
    monkeypatch.setattr(core.exact, "HARD_LIMIT", 5)  # 3 x 2 = 6 variables
    with pytest.raises(PlanError, match=r"needs 6 variables \(partitions x eligible brokers\), more than the 5 it"):
        core._exact_if_better(snapshot([0, 1], parts), state.options, state, [])
    # Under auto a model over the soft limit is skipped, not refused.
    monkeypatch.setattr(core.exact, "MAX_VARIABLES", 5)
    auto = planner_state([0, 1], parts, targets=True, optimizer="auto")
    assert core._exact_if_better(snapshot([0, 1], parts), auto.options, auto, []) == (auto, None)


def test_auto_keeps_the_heuristic_plan_only_when_it_moves_strictly_less() -> None:
    # The one-move cluster: both find a 1,000-byte plan. Not strictly less: the solved plan is used.
    cluster = snapshot([0, 1, 2], one_move_cluster())
    plan = make_plan(cluster, PlanOptions(optimizer="auto", **TINY_RATE))
    assert plan.summary["optimizer"]["used"] == "exact"
    assert plan.summary["optimizer"]["exact_status"] == "optimal"
    assert plan.summary["bytes_moved"] == 1000 and plan.summary["rack_violations_unrepaired"] == []


def test_broker_rows_name_every_field() -> None:
    state = planner_state([4, 7], [part("a", 0, [4])])
    rows = core._broker_rows(state, np.array([1, 0]), np.array([1, 0]), np.array([1, 0]), np.array([10, 0]))
    assert rows == [{"broker_id": 4, "replicas": 1, "leaders": 1, "preferred_leaders": 1, "size_bytes": 10},
                    {"broker_id": 7, "replicas": 0, "leaders": 0, "preferred_leaders": 0, "size_bytes": 0}]


def test_the_byte_bound_keeps_the_brokers_the_plan_brings_into_their_band() -> None:
    # 3,000 + 1,000 + 1,000 bytes on broker 0, 1,000 on broker 1, broker 2 empty: target 2,000, band [1,800,
    # 2,200]; 4 replicas, counts [1, 2]. a-0 (3,000) fits no band, so no plan reaches every band; the plan
    # moves two 1,000s (0 -> 1 and 0 -> 2): 3,000 / 2,000 / 1,000, broker 1 in its band.
    # Counts alone: broker 2 needs one replica (the smallest, 1,000 in), broker 0 sheds one (1,000 out).
    # Any plan that also brings broker 1 into its band gives it at least 1,800 - 1,000 = 800 more: in =
    # 800 + 1,000 = 1,800. The old bound dropped every byte term once one band was missed: 1,000.
    parts = [part("a", 0, [0], size_bytes=3000), part("a", 1, [0], size_bytes=1000),
             part("a", 2, [0], size_bytes=1000), part("a", 3, [1], size_bytes=1000)]
    s = make_plan(snapshot([0, 1, 2], parts), PlanOptions(optimizer="heuristic", **TINY_RATE)).summary
    assert [r["size_bytes"] for r in s["projected"]] == [3000, 2000, 1000]
    assert not s["targets"]["bytes_reached"] and s["targets"]["replicas_reached"]
    assert s["lower_bounds"] == {"replica_moves": 2, "bytes_moved": 1800}
    assert (s["bytes_moved"], s["optimizer"]["gap_percent"]) == (2000, 11.11)


def test_the_summarys_moves_and_bytes_are_the_batches_new_replicas_and_their_sizes() -> None:
    # The summary counts the move batches' new replicas from the batcher's arrays and the other batches' from their
    # steps: every batch's steps, read one by one, add up to the same figures.
    from tests.support.clusters import drawn_cluster

    planned = log_dir_batches = 0
    for seed in range(60):
        snap, options = drawn_cluster(seed)
        try:
            plan = make_plan(snap, options)
        except PlanError:
            continue
        steps = [s for b in plan.batches for s in b.steps]
        assert plan.summary["replica_moves"] == sum(len(s.adds) for s in steps), seed
        assert plan.summary["bytes_moved"] == sum(len(s.adds) * s.size for s in steps), seed
        planned += plan.summary["replica_moves"] > 0
        log_dir_batches += any(b.kind != "move" for b in plan.batches)
    assert planned > 20 and log_dir_batches > 5, (planned, log_dir_batches)
