"""The exact mode (MILP through HiGHS) against optima worked out by hand and by enumeration,
and the heuristic's balance rules over generated clusters."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from fractions import Fraction
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kafka_rebalance.balance import placement_targets
from kafka_rebalance.generate import ClusterSpec, generate_snapshot
from kafka_rebalance.planner import PlanError, PlanOptions, exact, make_plan
from kafka_rebalance.planner.core import Plan
from kafka_rebalance.planner.exact import ExactResult, ExactStatus
from kafka_rebalance.planner.state import ClusterState
from kafka_rebalance.snapshot import Snapshot
from tests.support.clusters import GiB, pareto_decommission, part, planner_state, snapshot
from tests.support.load import cpu_burners


def final_rows(plan: Plan) -> dict[tuple[str, int], list[int]]:
    rows = {(p.topic, p.partition): list(p.replicas) for p in plan.snapshot.partitions}
    for batch in plan.batches:
        for step in batch.steps:
            assert rows[(step.topic, step.partition)] == list(step.before)
            rows[(step.topic, step.partition)] = list(step.after)
    return rows


def moved_bytes(snap: Snapshot, rows: dict[tuple[str, int], list[int]]) -> int:
    return sum(p.size_bytes * len(set(rows[(p.topic, p.partition)]) - set(p.replicas)) for p in snap.partitions)


def test_subset_sum_the_smallest_replicas_cannot_solve() -> None:
    # Broker 0 holds six partitions of 7, 6, 5, 4, 4, 4 GiB, broker 1 is new. Counts: 3 each. Bytes: 15 GiB
    # each within 10 %, i.e. [13.5, 16.5]. The three smallest (4+4+4 = 12) miss the band; the fewest bytes that
    # reach it are 14 GiB (4+4+6 or 4+5+5).
    sizes = [7, 6, 5, 4, 4, 4]
    snap = snapshot([0, 1], [part("t", i, [0], size_bytes=s * GiB) for i, s in enumerate(sizes)])
    plan = make_plan(snap, PlanOptions(optimizer="exact"))
    rows = final_rows(plan)
    on_1 = [sizes[i] for i in range(6) if rows[("t", i)] == [1]]
    assert len(on_1) == 3 and sum(on_1) == 14
    opt = plan.summary["optimizer"]
    assert (opt["requested"], opt["used"], opt["exact_status"]) == ("exact", "exact", "optimal")
    assert opt["bytes_moved"] == plan.summary["bytes_moved"] == 14 * GiB
    assert 14 * GiB * (1 - exact.MIP_GAP) <= opt["bytes_bound"] <= 14 * GiB
    assert opt["band_widened_bytes"] == 0


def test_unreachable_band_is_widened_as_little_as_possible_then_bytes_minimised() -> None:
    # One 100 GiB partition and three of 1 GiB on broker 0, broker 1 empty: 2 replicas each. No split reaches
    # 51.5 GiB +-10 %; the closest with two each is {100, 1} / {1, 1}, reached by moving two 1 GiB replicas.
    sizes = [100, 1, 1, 1]
    snap = snapshot([0, 1], [part("t", i, [0], size_bytes=s * GiB) for i, s in enumerate(sizes)])
    plan = make_plan(snap, PlanOptions(optimizer="exact"))
    rows = final_rows(plan)
    assert rows[("t", 0)] == [0]
    assert sorted(sizes[i] for i in range(4) if rows[("t", i)] == [1]) == [1, 1]
    opt = plan.summary["optimizer"]
    assert opt["used"] == "exact" and opt["bytes_moved"] == 2 * GiB
    # the band [46.35, 56.65] GiB had to reach 101 GiB: widened by 44.35 GiB
    assert math.isclose(opt["band_widened_bytes"], 44.35 * GiB, rel_tol=1e-4)


def test_rack_safety_forces_the_dearer_move() -> None:
    # Racks a = {0, 1}, b = {2, 3}; RF 2. Broker 3 is new. The cheapest replicas to move onto broker 3 are
    # those whose other replica is already in rack b (t-0, t-1, 1 GiB each): moving them would put both
    # replicas in rack b. So the two moves must come from partitions that keep one replica in rack a.
    snap = snapshot(
        [(0, "a"), (1, "a"), (2, "b"), (3, "b")],
        [part("t", 0, [0, 2], size_bytes=GiB), part("t", 1, [1, 2], size_bytes=GiB),
         part("u", 0, [2, 0], size_bytes=3 * GiB), part("u", 1, [2, 1], size_bytes=3 * GiB),
         part("u", 2, [0, 2], size_bytes=3 * GiB), part("u", 3, [1, 2], size_bytes=3 * GiB)],
    )
    plan = make_plan(snap, PlanOptions(optimizer="exact", byte_tolerance=10.0))
    rows = final_rows(plan)
    rack = {0: "a", 1: "a", 2: "b", 3: "b"}
    for key, row in rows.items():
        assert {rack[b] for b in row} == {"a", "b"}, (key, row)
    counts = {b: sum(b in r for r in rows.values()) for b in rack}
    assert counts == {0: 3, 1: 3, 2: 3, 3: 3}
    # broker 2 holds 6 replicas and must give 3 of them to broker 3 (same rack): the three cheapest are
    # 1 + 1 + 3 GiB; rack a's replicas stay.
    assert plan.summary["bytes_moved"] == 5 * GiB
    assert plan.summary["optimizer"]["exact_status"] == "optimal"


# --------------------------------------------------------------------------- against enumeration


def brute_force(snap: Snapshot, tolerance: float) -> tuple[float | Fraction, int]:
    """(smallest total distance outside the byte bands reachable, summed over brokers; fewest bytes moved
    at it) over every assignment with balanced counts, rack safety and the partitions' replication
    factors, for clusters without fixed partitions."""
    brokers = [b.id for b in snap.brokers]
    rack = {b.id: b.rack for b in snap.brokers}
    racked = any(r is not None for r in rack.values())
    racks = {r for r in rack.values()}
    total = sum(len(p.replicas) for p in snap.partitions)
    lo, hi = total // len(brokers), -(-total // len(brokers))
    # exact rationals: a load exactly on the band's edge (69 GiB of a 230 GiB / 3 mean at 10 %) is in the band
    mean = Fraction(sum(p.size_bytes * len(p.replicas) for p in snap.partitions), len(brokers))
    choices = []
    for p in snap.partitions:
        rf = len(p.replicas)
        opts = []
        for row in itertools.combinations(brokers, rf):
            if racked:
                per = [sum(rack[b] == g for b in row) for g in racks]
                if max(per) > -(-rf // len(racks)) or sum(1 for n in per if n) < min(rf, len(racks)):
                    continue
            opts.append((row, p.size_bytes * len(set(row) - set(p.replicas))))
        choices.append((p.size_bytes, opts))
    best: tuple[float | Fraction, int] = (math.inf, 0)
    for combo in itertools.product(*(c[1] for c in choices)):
        count = dict.fromkeys(brokers, 0)
        load = dict.fromkeys(brokers, 0)
        for (size, _), (row, _cost) in zip(choices, combo):
            for b in row:
                count[b] += 1
                load[b] += size
        if not all(lo <= count[b] <= hi for b in brokers):
            continue
        widen = outside_bands(load, mean, tolerance)
        cost = sum(c for _, c in combo)
        best = min(best, (widen, cost))
    return best


def outside_bands(load: dict[int, int], mean: Fraction, tolerance: float) -> Fraction:
    """Bytes outside the band [mean -/+ tolerance], summed over the brokers."""
    return sum((max(Fraction(0), abs(x - mean) - Fraction(str(tolerance)) * mean) for x in load.values()), Fraction(0))


@st.composite
def tiny_clusters(draw: st.DrawFn) -> Snapshot:
    n = draw(st.integers(2, 4))
    racked = n == 4 and draw(st.booleans())
    brokers: list[Any] = [(b, "ab"[b % 2]) for b in range(n)] if racked else list(range(n))
    rf = draw(st.integers(1, min(2, n)))
    partitions = []
    for i in range(draw(st.integers(2, 5))):
        row = draw(st.permutations(range(n)))[:rf]
        if racked and rf == 2 and draw(st.booleans()):
            row = [row[0], (row[0] + 2) % 4]  # rack-unsafe today: the plan must repair it
        partitions.append(part("t", i, list(row), size_bytes=draw(st.integers(1, 40)) * GiB))
    return snapshot(brokers, partitions)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_clusters())
# found by a random draw: HiGHS's presolve ended the widening model in "Solve error" and exact said infeasible
@example(snapshot([0, 1, 2, 3], [part("t", i, [0], size_bytes=s * GiB) for i, s in enumerate([3, 25, 23, 6, 8])]))
# a load exactly on the band's edge: 69 GiB on broker 2 is 10 % under the 76.67 GiB mean
@example(snapshot([0, 1, 2], [part("t", i, [0, 1], size_bytes=s * GiB) for i, s in enumerate([12, 33, 34, 36])]))
def test_exact_matches_enumeration(snap: Snapshot) -> None:
    widen, fewest = brute_force(snap, 0.10)
    plan = make_plan(snap, PlanOptions(optimizer="exact"))
    opt = plan.summary["optimizer"]
    assert opt["used"] == "exact"
    assert moved_bytes(snap, final_rows(plan)) == plan.summary["bytes_moved"]
    rows = final_rows(plan)
    load = {b.id: 0 for b in snap.brokers}
    for p in snap.partitions:
        for b in rows[(p.topic, p.partition)]:
            load[b] += p.size_bytes
    mean = Fraction(sum(load.values()), len(load))
    if widen == 0:
        assert opt["band_widened_bytes"] == 0
    else:
        assert opt["band_widened_bytes"] > 0
    assert math.isclose(float(outside_bands(load, mean, 0.10)), float(widen), rel_tol=1e-5, abs_tol=2 * len(load))
    assert fewest <= plan.summary["bytes_moved"] <= fewest * (1 + exact.MIP_GAP)
    assert opt["bytes_bound"] <= fewest


# --------------------------------------------------------------------------- issue #31: decommissioning


# The fewest bytes that empty brokers 9, 10 and 11 of pareto_decommission(12) within every balance rule, replica
# counts held to floor..ceil exactly (--replica-tolerance 0, as when the figure was computed):
# 88,942,974,478 (to within the one-byte tie-break per new replica). Computed once, offline, with HiGHS
# 1.15.1: RF 3 over 3 racks allows one replica per rack, so every partition keeps exactly one replica in
# each rack and the model (all of whose other rows are per broker) splits into one model per rack; each
# of the three was solved to a proven optimum (relative gap 0, no node limit, 5 to 12 s each) with the
# other racks fixed, and the three optima add up to the whole one.
PARETO_12_OPTIMUM = 88_942_974_478


@pytest.mark.slow
def test_decommissioning_three_brokers_of_a_heavy_tailed_cluster_moves_near_the_fewest_bytes() -> None:
    # 240 partitions of Pareto(1.3) sizes on 12 brokers in 3 racks, brokers 9..11 decommissioned, planned on
    # a busy machine (two CPU-bound processes beside the planner). The heuristic reaches every rule but moves
    # 95.25 GB. Before the solver was bounded by work, a 30 s time limit cut it here (issue #31: a plan of
    # 1.93x the optimum on a busy machine, another plan on a quiet one); now the node limit ends it, the same
    # on any machine, and its plan, started from the heuristic's and polished, is within 5 % of the optimum.
    snap = pareto_decommission(12)
    options = PlanOptions(optimizer="auto", decommission_brokers=(9, 10, 11), replica_tolerance=0.0)
    heuristic = make_plan(snap, replace(options, optimizer="heuristic"))
    with cpu_burners(2):
        plan = make_plan(snap, options)
    opt = plan.summary["optimizer"]
    assert (opt["used"], opt["time_limited"]) == ("exact", False)
    assert plan.summary["targets"]["replicas_reached"] and plan.summary["targets"]["bytes_reached"]
    rows = final_rows(plan)
    assert not any({9, 10, 11} & set(row) for row in rows.values())
    assert moved_bytes(snap, rows) == plan.summary["bytes_moved"]
    assert PARETO_12_OPTIMUM <= plan.summary["bytes_moved"] <= 1.05 * PARETO_12_OPTIMUM
    assert plan.summary["bytes_moved"] <= heuristic.summary["bytes_moved"]
    assert opt["bytes_bound"] <= PARETO_12_OPTIMUM


@pytest.mark.slow
def test_exact_starts_from_the_heuristic_plan_and_never_ends_above_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # pareto_decommission(12): the heuristic's plan reaches every rule (95.25 GB), so it is the solver's first
    # incumbent, and `--optimizer exact` (which never falls back to it) moves no more. The branch-and-bound
    # alone, without the polishing exchanges, ends its 100 nodes at 111.2 GB when it starts from nothing.
    monkeypatch.setattr(exact, "POLISH_PASSES", 0)
    snap = pareto_decommission(12)
    options = PlanOptions(optimizer="exact", decommission_brokers=(9, 10, 11), replica_tolerance=0.0)
    heuristic = make_plan(snap, replace(options, optimizer="heuristic")).summary
    assert heuristic["targets"]["replicas_reached"] and heuristic["targets"]["bytes_reached"]
    solved = make_plan(snap, options).summary
    assert (solved["optimizer"]["used"], solved["optimizer"]["work_limited"]) == ("exact", True)
    assert PARETO_12_OPTIMUM <= solved["bytes_moved"] <= heuristic["bytes_moved"]


def test_a_solve_past_the_safety_limit_fails_the_plan_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    # Nothing cut by the clock becomes a plan: a solver still running at the safety limit fails it, for
    # auto as for exact. (A limit of a nanosecond stands for a solver that ran too long.)
    monkeypatch.setattr(exact, "SAFETY_SECONDS", 1e-9)
    snap = pareto_decommission(0, partitions=30)
    for optimizer in ("auto", "exact"):
        with pytest.raises(PlanError, match=rf"^--optimizer {optimizer}: the solver ran past its 1e-09 s safety limit on "
                           r"pareto-decommission; a plan cut by time would depend on machine load, so none is made; "
                           r"use --optimizer heuristic$"):
            make_plan(snap, PlanOptions(optimizer=optimizer, decommission_brokers=(9, 10, 11)))


# --------------------------------------------------------------------------- options and limits


def test_exact_beyond_its_limit_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    snap = snapshot([0, 1, 2], [part("t", i, [i % 3]) for i in range(6)])
    monkeypatch.setattr(exact, "HARD_LIMIT", 10)
    with pytest.raises(PlanError, match=r"--optimizer exact: the model of test needs 18 variables"):
        make_plan(snap, PlanOptions(optimizer="exact"))
    monkeypatch.setattr(exact, "MAX_VARIABLES", 10)
    assert make_plan(snap, PlanOptions(optimizer="auto")).summary["optimizer"]["used"] == "heuristic"


def test_a_solver_that_finds_no_plan_is_named_as_such(monkeypatch: pytest.MonkeyPatch) -> None:
    # The solver's own failure (HiGHS status 4 twice, or a limit hit before any plan) is not "infeasible".
    snap = snapshot([0, 1], [part("t", i, [0], size_bytes=(i + 1) * GiB) for i in range(4)])
    monkeypatch.setattr(exact, "_milp", lambda *args: exact._Run(None, False, False, False, None))
    with pytest.raises(PlanError, match=r"^--optimizer exact: no-solution: the solver stopped before finding any "
                       r"plan for test \(its limit: 100 nodes\); --optimizer heuristic plans without it$"):
        make_plan(snap, PlanOptions(optimizer="exact"))
    assert make_plan(snap, PlanOptions(optimizer="auto")).summary["optimizer"]["used"] == "heuristic"


def test_unknown_optimizer_is_refused() -> None:
    with pytest.raises(PlanError, match="--optimizer must be one of auto, exact, heuristic, got 'fastest'"):
        make_plan(snapshot([0, 1], [part("t", 0, [0])]), PlanOptions(optimizer="fastest"))


def test_optimizer_is_part_of_the_options_the_plan_hash_covers() -> None:
    snap = snapshot([0, 1], [part("t", i, [0]) for i in range(4)])
    assert make_plan(snap, PlanOptions(optimizer="heuristic")).options.manifest()["optimizer"] == "heuristic"
    assert PlanOptions().optimizer == "auto"


# --------------------------------------------------------------------------- the heuristic's rules


@st.composite
def clusters(draw: st.DrawFn) -> tuple[ClusterSpec, dict[str, Any]]:
    racks = draw(st.sampled_from([0, 2, 3]))
    new = draw(st.integers(0, 3))
    brokers = draw(st.integers(max(3, racks, new + 1), 10))
    rf = draw(st.integers(1, min(3, brokers - new)))
    cluster = ClusterSpec(
        cluster_id="prop", brokers=brokers, racks=racks, topics=3, partitions=draw(st.sampled_from([30, 60, 120])),
        replication_factor=rf, replica_skew=draw(st.sampled_from([0.0, 1.0, 2.0])), new_brokers=new,
        seed=draw(st.integers(0, 50)),
    )
    options: dict[str, Any] = {}
    if draw(st.booleans()) and brokers - new > rf + 1:
        options["decommission_brokers"] = (0,)
    return cluster, options


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_heuristic_never_breaks_a_balance_rule(case: tuple[ClusterSpec, dict[str, Any]]) -> None:
    cluster, options = case
    snap = generate_snapshot(cluster)
    plan = make_plan(snap, PlanOptions(optimizer="heuristic", **options))
    rows = final_rows(plan)
    gone = set(options.get("decommission_brokers", ())) | {b.id for b in snap.brokers if not b.alive}
    eligible = {b.id: b.rack for b in snap.brokers if b.id not in gone}
    by_rf: dict[int, tuple[int, int]] = {}
    for p in snap.partitions:
        n, size = by_rf.get(len(p.replicas), (0, 0))
        by_rf[len(p.replicas)] = (n + 1, size + p.size_bytes)
    targets = placement_targets(eligible, by_rf, replica_tolerance=plan.options.replica_tolerance)
    count = dict.fromkeys(eligible, 0)
    for key, row in rows.items():
        assert not set(row) & gone, key
        racks = {eligible[b] for b in row}
        if None not in racks:
            assert len(racks) == min(len(row), len(set(eligible.values()))), (key, row)
        for b in row:
            count[b] += 1
    for b, n in count.items():
        lo, hi = targets.replicas[b]
        assert lo <= n <= hi, (b, n, lo, hi)


def test_a_bound_never_exceeds_the_optimum_by_a_rounding_error() -> None:
    # Byte targets of whole GiB come out of float arithmetic a few millionths of a byte high; rounded
    # up, the lower bound claimed 16106127361 bytes were unavoidable where the optimum moves 15 GiB.
    snap = snapshot([0, 1, 2], [part("t", i, [0, 1], size_bytes=s * GiB) for i, s in enumerate((7, 8, 10))])
    plan = make_plan(snap, PlanOptions(optimizer="exact"))
    assert plan.summary["bytes_moved"] == 15 * GiB
    assert plan.summary["lower_bounds"]["bytes_moved"] <= 15 * GiB
    assert plan.summary["optimizer"]["bytes_bound"] <= 15 * GiB
    assert plan.summary["optimizer"]["gap_percent"] >= 0


def test_exact_never_gives_a_partition_producing_at_the_throttle_a_new_replica() -> None:
    # Broker 0: a (1 GiB, producing 20 MiB/s against a 10 MiB/s throttle), d (2), b (4), c (4); broker 1 new.
    # Two each, 5.5 GiB +- 10 %: a + b (5 GiB) would be cheapest, but a could never catch up; d + b or d + c
    # (6 GiB) is the best the rest allows.
    MiB = 1024**2
    snap = snapshot([0, 1], [part("a", 0, [0], size_bytes=GiB, bytes_in_per_sec=20 * MiB),
                             part("b", 0, [0], size_bytes=4 * GiB), part("c", 0, [0], size_bytes=4 * GiB),
                             part("d", 0, [0], size_bytes=2 * GiB)])
    plan = make_plan(snap, PlanOptions(optimizer="exact", throttle_bytes_per_sec=10 * MiB))
    rows = final_rows(plan)
    assert rows[("a", 0)] == [0] and rows[("d", 0)] == [1]
    assert plan.summary["bytes_moved"] == 6 * GiB and plan.summary["optimizer"]["exact_status"] == "optimal"


def test_exact_moves_nothing_on_a_balanced_cluster_not_even_empty_partitions() -> None:
    # Every replica costs its bytes plus one: an empty partition is not moved for nothing.
    snap = snapshot([0, 1], [part("e", 0, [0], size_bytes=0), part("a", 0, [0], size_bytes=2 * GiB),
                             part("b", 0, [1], size_bytes=2 * GiB)])
    plan = make_plan(snap, PlanOptions(optimizer="exact"))
    assert plan.summary["replica_moves"] == 0 and plan.batches == []
    assert plan.summary["optimizer"]["used"] == "exact"


# --------------------------------------------------------------------------- the model, solved directly
#
# ``_solve`` on hand-built states, compared as whole ExactResults. HiGHS proves these tiny optima, so its
# dual bound is the objective itself: the bytes of the new replicas plus one byte per new replica (the
# tie-break), read back as floor(objective * (1 - 1e-9)) and capped at the bytes moved. HiGHS's bound is the
# objective up to its float tolerance (about 1e-10, a byte or so at GiB scale), hence ``proven``.


def proven(bound_bytes: int) -> Any:
    return pytest.approx(bound_bytes, abs=2)


def subset_sum_state() -> ClusterState:
    # Broker 0 holds t-0..t-5 of 10, 8, 6, 3, 2, 1 GiB (30 GiB), broker 1 is new: 3 replicas each, 15 GiB
    # +- 10 % = [13.5, 16.5] GiB each. Three partitions of 14..16 GiB, fewest bytes: {10, 3, 1} = 14 is the
    # only triple of 14 (13 = {10, 2, 1} misses the band), so t-0, t-3 and t-5 move.
    return planner_state([0, 1], [part("t", i, [0], size_bytes=g * GiB) for i, g in enumerate([10, 8, 6, 3, 2, 1])],
                         targets=True)


SUBSET_ROWS = {0: [1], 3: [1], 5: [1]}
# (14 GiB + 3 one-byte tie-breaks) * (1 - 1e-9) = 15032385539 - 15.03 = 15032385523.97, floored
SUBSET_BOUND = proven(15032385523)


def test_solve_within_the_tolerance_band_is_the_whole_hand_worked_result() -> None:
    state = subset_sum_state()
    assert exact._solve(state, widen=0.0) == ExactResult(ExactStatus.OPTIMAL, SUBSET_ROWS, 14 * GiB, SUBSET_BOUND,
                                                        True, 0.0, False, 0.0)
    # A band widened by one byte changes no choice, but it is no longer the strict band, and says by how much.
    assert exact._solve(state, widen=1.0) == ExactResult(ExactStatus.OPTIMAL, SUBSET_ROWS, 14 * GiB, SUBSET_BOUND,
                                                        False, 0.0, False, 1.0)


def test_widening_reached_is_zero_inside_the_band_and_the_worst_excess_outside() -> None:
    state = subset_sum_state()
    # after the plan: 16 and 14 GiB, 1 GiB off 15 where 1.5 GiB is allowed: nothing to widen
    assert exact._widening_reached(state, SUBSET_ROWS).max() == 0.0
    # t-5 alone moves: 29 and 1 GiB, 14 GiB off 15, 12.5 GiB beyond the 1.5 GiB allowed
    assert exact._widening_reached(state, {5: [1]}).max() == pytest.approx(12.5 * GiB, rel=1e-12)
    # nothing moves: 30 and 0 GiB, 15 - 1.5 = 13.5 GiB beyond
    assert exact._widening_reached(state, {}).max() == pytest.approx(13.5 * GiB, rel=1e-12)


def widened_state() -> ClusterState:
    # t-0..t-3 of 100, 1, 2, 3 GiB on broker 0, broker 1 new: 2 replicas each, 53 GiB +- 5.3. The broker with
    # the 100 GiB partition holds at least 101 GiB (with the 1 GiB one), the other at most 5 GiB: both 48 GiB
    # off target, 48 - 5.3 = 42.7 GiB beyond the band, 85.4 GiB in all. Keeping {100, 1} on broker 0 moves
    # 2 + 3 = 5 GiB (the other way round would move 101); every other split lies further out.
    return planner_state([0, 1], [part("t", i, [0], size_bytes=g * GiB) for i, g in enumerate([100, 1, 2, 3])],
                         targets=True)


def test_an_unreachable_band_is_infeasible_and_the_widening_model_finds_the_smallest_widening() -> None:
    state = widened_state()
    assert exact._solve(state, widen=0.0) == ExactResult(ExactStatus.INFEASIBLE, {}, 0, 0, True, 0.0, False, 0.0)
    found = exact._solve(state, widen=None)
    # the widening model only reports the widening (within HiGHS's feasibility tolerance), no rows
    assert replace(found, widening=0.0) == ExactResult(ExactStatus.OPTIMAL, {}, 0, 0, False, 0.0, False, 0.0)
    assert found.widening == pytest.approx(2 * 42.7 * GiB, rel=1e-6)


def fake_clock(monkeypatch: pytest.MonkeyPatch, *readings: float) -> None:
    monkeypatch.setattr(exact, "time", SimpleNamespace(monotonic=iter(readings).__next__))


def test_solve_widens_then_minimises_bytes_and_reports_the_exact_widening(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_clock(monkeypatch, 100.0, 101.23456)  # 1.23456 s, rounded to the millisecond
    # (5 GiB + 2 tie-breaks) * (1 - 1e-9) = 5368709122 - 5.37 = 5368709116.63, floored; the widening is
    # recomputed from the loads: |101 - 53| - 5.3 GiB on broker 0, |5 - 53| - 5.3 GiB on broker 1
    assert exact.solve(widened_state()) == ExactResult(
        ExactStatus.OPTIMAL, {2: [1], 3: [1]}, 5 * GiB, proven(5368709116), False, 1.235, False,
        pytest.approx(2 * (48 * GiB - 0.1 * 53 * GiB), rel=1e-12))


def test_solve_widens_by_the_widening_found_plus_the_slack_for_the_solvers_tolerance(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # x-0 (8 GiB, excluded: frozen) and t-0 (2 GiB), t-1 (1 GiB) on broker 0, broker 1 new. Targets with the
    # frozen 8 GiB: 11 GiB share as max(level, 8) + max(level, 0) = 11: level 3, targets 8 and 3 GiB.
    state = planner_state([0, 1], [part("t", 0, [0], size_bytes=2 * GiB), part("t", 1, [0], size_bytes=GiB),
                                   part("x", 0, [0], size_bytes=8 * GiB)], targets=True, exclude_topics=("x",))
    calls: list[float | None] = []

    def fake_solve(_state: ClusterState, widen: float | None, goals: object = None, starts: Any = ()) -> ExactResult:
        calls.append(widen)
        if widen == 0.0:
            return ExactResult(ExactStatus.INFEASIBLE, {}, 0, 0, True, 0.0, False)
        if widen is None:
            return ExactResult(ExactStatus.OPTIMAL, {}, 0, 0, False, 0.0, False, 1_000_000.0)
        return ExactResult(ExactStatus.FEASIBLE, {0: [1]}, 2 * GiB, GiB, False, 99.0, False, widen)

    monkeypatch.setattr(exact, "_solve", fake_solve)
    fake_clock(monkeypatch, 7.0, 7.5)
    # t-0 on broker 1: 9 and 2 GiB. The mean is 5.5 GiB; both targets lie beyond its band [4.95, 6.05], so
    # broker 0's top is 8 x 1.05 = 8.4 and broker 1's bottom 3 x 0.95 = 2.85: 0.6 + 0.85 GiB outside the bands
    assert exact.solve(state) == ExactResult(ExactStatus.FEASIBLE, {0: [1]}, 2 * GiB, GiB, False, 0.5, False,
                                             pytest.approx((9 - 8.4 + 2.85 - 2) * GiB, rel=1e-12))
    # 1e6 * (1 + 1e-6) + 1e-5 * 2 GiB (the largest MOVABLE partition, not the frozen 8 GiB) per broker, for 2:
    # 1000001 + 42949.67296
    assert calls == [0.0, None, pytest.approx(1_042_950.67296, abs=1e-6)]

    # partitions of at most one byte: the slack is 1e-5 * max(1, 1) per broker, 2e-5
    tiny = planner_state([0, 1], [part("t", 0, [0], size_bytes=1), part("t", 1, [0], size_bytes=0)], targets=True)
    calls.clear()
    fake_clock(monkeypatch, 0.0, 0.0)
    exact.solve(tiny)
    assert calls == [0.0, None, pytest.approx(1_000_001.00002, abs=1e-9)]


def test_solve_hands_back_the_widening_models_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    results = iter([ExactResult(ExactStatus.INFEASIBLE, {}, 0, 0, True, 0.0, False),
                    ExactResult(ExactStatus.NO_SOLUTION, {}, 0, 7, False, 0.0, True)])
    monkeypatch.setattr(exact, "_solve", lambda _state, widen, goals=None, starts=(): next(results))
    fake_clock(monkeypatch, 1.0, 3.0)
    assert exact.solve(subset_sum_state()) == ExactResult(ExactStatus.NO_SOLUTION, {}, 0, 7, False, 2.0, True)


def test_frozen_replicas_count_against_their_brokers_replica_range() -> None:
    # x-0 (excluded) is frozen on broker 0. 8 replicas over 3 brokers: [2, 3] each; broker 0 holds x-0, t-0
    # (1 GiB, also on broker 1), t-1 (5) and t-2 (6): 4, one too many. The cheapest to shed is t-0, and only
    # broker 2 can take it (broker 1 holds its other replica). Bytes are left free (tolerance 10).
    state = planner_state([0, 1, 2], [part("t", 0, [0, 1], size_bytes=GiB), part("t", 1, [0], size_bytes=5 * GiB),
                                      part("t", 2, [0], size_bytes=6 * GiB), part("u", 0, [1], size_bytes=GiB),
                                      part("v", 0, [2], size_bytes=GiB), part("v", 1, [2], size_bytes=GiB),
                                      part("x", 0, [0], size_bytes=GiB)],
                          targets=True, exclude_topics=("x",), byte_tolerance=10.0)
    # (1 GiB + 1) * (1 - 1e-9) = 1073741825 - 1.07 = 1073741823.93, floored
    assert exact._solve(state, widen=0.0) == ExactResult(ExactStatus.OPTIMAL, {0: [1, 2]}, GiB, proven(1073741823),
                                                        True, 0.0, False, 0.0)


def test_frozen_bytes_count_against_their_brokers_byte_band() -> None:
    # x-0 (4 GiB, excluded) is frozen on broker 0 with t-0 (1 GiB, also on broker 1) and t-1 (2): 7 GiB;
    # broker 1: t-0, u-0 (4.5): 5.5 GiB; broker 2: v-0 (3.5), v-1 (2): 5.5 GiB. 18 GiB: 6 each, [5.4, 6.6].
    # Counts (7 replicas: [2, 3]) hold, and only broker 0 is out of its band: it must keep 1.4..2.6 GiB
    # besides x-0, i.e. t-1 alone (no partition is 0.4..1.6 GiB to swap in): t-0 goes, to broker 2 (6.5 GiB).
    state = planner_state([0, 1, 2], [part("t", 0, [0, 1], size_bytes=GiB), part("t", 1, [0], size_bytes=2 * GiB),
                                      part("u", 0, [1], size_bytes=9 * GiB // 2), part("v", 0, [2], size_bytes=7 * GiB // 2),
                                      part("v", 1, [2], size_bytes=2 * GiB), part("x", 0, [0], size_bytes=4 * GiB)],
                          targets=True, exclude_topics=("x",))
    assert exact._solve(state, widen=0.0) == ExactResult(ExactStatus.OPTIMAL, {0: [1, 2]}, GiB, proven(1073741823),
                                                        True, 0.0, False, 0.0)


def test_a_frozen_partition_of_a_larger_replication_factor_than_every_movable_one() -> None:
    # x-0 (RF 2, excluded) on brokers 0 and 1; t-0 (1 GiB) and t-1 (2 GiB) on broker 0; broker 2 new. No movable
    # partition has a second replica (the replica matrix's second column is padding for all of them).
    # 4 replicas: [1, 2] each, x-0 counting 1 on brokers 0 and 1: broker 2 needs one, the cheaper t-0.
    # Bytes are left free (tolerance 10).
    state = planner_state([0, 1, 2], [part("t", 0, [0], size_bytes=GiB), part("t", 1, [0], size_bytes=2 * GiB),
                                      part("x", 0, [0, 1], size_bytes=GiB)],
                          targets=True, exclude_topics=("x",), byte_tolerance=10.0)
    assert exact._solve(state, widen=0.0) == ExactResult(ExactStatus.OPTIMAL, {0: [2]}, GiB, proven(1073741823),
                                                        True, 0.0, False, 0.0)


def test_the_widening_model_counts_frozen_bytes_above_the_band() -> None:
    # x-0 (1 GiB, frozen) and t-0 (20 GiB) on broker 0, u-0 and v-0 (1 GiB) on brokers 1 and 2. 4 replicas:
    # [1, 2] each; 23 GiB: 23/3 each, band [20.7/3, 25.3/3] GiB. Wherever t-0 goes, its broker is over by at
    # least 20 - 25.3/3 = 34.7/3 GiB (on broker 0, with x-0, by one more). The other two share the 3 GiB of
    # x-0, u-0 and v-0 at best as 2 and 1: 4.9 and 5.9 GiB short. In all 34.7/3 + 10.8 GiB.
    state = planner_state([0, 1, 2], [part("t", 0, [0], size_bytes=20 * GiB), part("u", 0, [1], size_bytes=GiB),
                                      part("v", 0, [2], size_bytes=GiB), part("x", 0, [0], size_bytes=GiB)],
                          targets=True, exclude_topics=("x",))
    found = exact._solve(state, widen=None)
    assert replace(found, widening=0.0) == ExactResult(ExactStatus.OPTIMAL, {}, 0, 0, False, 0.0, False, 0.0)
    assert found.widening == pytest.approx((34.7 / 3 + 10.8) * GiB, rel=1e-6)


def test_the_widening_model_counts_frozen_bytes_below_the_band(monkeypatch: pytest.MonkeyPatch) -> None:
    # x-0 (1 GiB, frozen) fills broker 0's one replica (3 replicas: 1 each); t-0, t-1 (10 GiB) stay on 1 and 2.
    # 21 GiB: 7 each, [6.3, 7.7]: broker 0 is 6.3 - 1 = 5.3 GiB short, the others 10 - 7.7 = 2.3 over: 9.9 in all.
    state = planner_state([0, 1, 2], [part("t", 0, [1], size_bytes=10 * GiB), part("t", 1, [2], size_bytes=10 * GiB),
                                      part("x", 0, [0], size_bytes=GiB)], targets=True, exclude_topics=("x",))
    found = exact._solve(state, widen=None)
    assert replace(found, widening=0.0) == ExactResult(ExactStatus.OPTIMAL, {}, 0, 0, False, 0.0, False, 0.0)
    assert found.widening == pytest.approx(9.9 * GiB, rel=1e-6)
    # Within that widening nothing needs to move: 0 bytes, proven optimal (0 - 0 <= 1e-4 * 0).
    fake_clock(monkeypatch, 0.0, 0.25)
    assert exact.solve(state) == ExactResult(ExactStatus.OPTIMAL, {}, 0, 0, False, 0.25, False,
                                             pytest.approx(6 * GiB - 0.1 * 7 * GiB + 2 * (3 * GiB - 0.1 * 7 * GiB), rel=1e-12))


def test_a_partition_producing_at_the_throttle_keeps_its_replicas_and_gains_none() -> None:
    # Broker 0: a (1 GiB, 20 MiB/s against a 10 MiB/s throttle), b (4), c (5), d (2.5); broker 1 new. Two
    # each, 6.25 GiB +- 0.625. Pairs for broker 1 within the band (their complement then is too): {a, c}
    # (6 GiB) and {b, d} (6.5). a cannot gain a replica: b and d move.
    MiB = 1024**2
    state = planner_state([0, 1], [part("a", 0, [0], size_bytes=GiB, bytes_in_per_sec=20 * MiB),
                                   part("b", 0, [0], size_bytes=4 * GiB), part("c", 0, [0], size_bytes=5 * GiB),
                                   part("d", 0, [0], size_bytes=5 * GiB // 2)],
                          targets=True, throttle_bytes_per_sec=10 * MiB)
    # (6.5 GiB + 2) * (1 - 1e-9) = 6979321858 - 6.98 = 6979321851.02, floored
    assert exact._solve(state, widen=0.0) == ExactResult(ExactStatus.OPTIMAL, {1: [1], 3: [1]}, 13 * GiB // 2,
                                                        proven(6979321851), True, 0.0, False, 0.0)


def rf4_over_3_racks(tolerance: float, p_size: int, q_size: int) -> ClusterState:
    # Racks a = {0, 1}, b = {2, 3}, c = {4}. p-0 (RF 4) sits on [0, 1, 2, 3]: at most ceil(4/3) = 2 per rack,
    # which it keeps, but it must span min(4, 3) = 3 racks, so one replica goes to broker 4. q-0 (RF 1) shares
    # broker 0. 5 replicas over 5 brokers: exactly 1 each (rack totals 2, 2, 1 are within rack safety's).
    return planner_state([(0, "a"), (1, "a"), (2, "b"), (3, "b"), (4, "c")],
                         [part("p", 0, [0, 1, 2, 3], size_bytes=p_size), part("q", 0, [0], size_bytes=q_size)],
                         targets=True, byte_tolerance=tolerance)


def test_a_partition_must_span_as_many_racks_as_it_can() -> None:
    # Broker 0 holds two and broker 4 none: moving q-0 there (1 byte) would settle the counts, but p-0 needs
    # broker 4, so p-0's replica leaves broker 0 for it: 1 GiB. Bytes are left free (tolerance 10).
    state = rf4_over_3_racks(10.0, GiB, 1)
    assert exact._solve(state, widen=0.0) == ExactResult(ExactStatus.OPTIMAL, {0: [1, 2, 3, 4]}, GiB, proven(1073741823),
                                                        True, 0.0, False, 0.0)


def test_the_widening_model_with_rack_spread_variables() -> None:
    # p-0 of 5 GiB, q-0 of 1 GiB: 21 GiB. Rack c can only hold p-0's replica (5 GiB: rack safety's floor for it),
    # so its target is clamped to 5 GiB and the other four share 16: 4 GiB each. The mean is 4.2 GiB: the four
    # are held to its band [3.78, 4.62], broker 4 to [3.78, 5.25] (its share within half the tolerance). One of
    # the four holds q-0: 3.78 - 1 = 2.78 GiB short; the three holding p-0 are 5 - 4.62 = 0.38 over: 3.92 GiB.
    state = rf4_over_3_racks(0.1, 5 * GiB, GiB)
    found = exact._solve(state, widen=None)
    assert replace(found, widening=0.0) == ExactResult(ExactStatus.OPTIMAL, {}, 0, 0, False, 0.0, False, 0.0)
    assert found.widening == pytest.approx((2.78 + 3 * 0.38) * GiB, rel=1e-6)


def test_bytes_come_first_and_each_new_replica_costs_only_one_byte_more() -> None:
    # Broker 0: t-0 (5 bytes), t-1 and t-2 (1 byte); broker 1: w-0 (empty). 2 replicas each; 7 bytes, 3.5 each
    # +- 50 % = [1.75, 5.25]. Broker 1 ends with {t-0, w-0} (5 bytes: one copy of 5) or {t-1, t-2} (2 bytes: two
    # copies of 1 and w-0 to broker 0); every other pair holds 1 or 6 bytes. Fewest bytes: the three copies,
    # 2 + 3 = 5 against 5 + 1 = 6 with the tie-break (at two bytes a copy the single copy would win, 7 < 8).
    state = planner_state([0, 1], [part("t", 0, [0], size_bytes=5), part("t", 1, [0], size_bytes=1),
                                   part("t", 2, [0], size_bytes=1), part("w", 0, [1], size_bytes=0)],
                          targets=True, byte_tolerance=0.5)
    # the bound (5 * (1 - 1e-9), floored: 4) is capped at the 2 bytes moved
    assert exact._solve(state, widen=0.0) == ExactResult(ExactStatus.OPTIMAL, {1: [1], 2: [1], 3: [0]}, 2, 2,
                                                        True, 0.0, False, 0.0)


def test_a_balanced_cluster_moves_nothing_not_even_an_empty_partition() -> None:
    # e-0 (empty) and a-0 (2 GiB) on broker 0, b-0 (2 GiB) on broker 1: counts [1, 2] allow e-0 on either
    # broker, but a new replica costs its bytes plus one, so e-0 stays. 0 bytes: proven optimal (0 <= 0).
    state = planner_state([0, 1], [part("a", 0, [0], size_bytes=2 * GiB), part("b", 0, [1], size_bytes=2 * GiB),
                                   part("e", 0, [0], size_bytes=0)], targets=True)
    assert exact._solve(state, widen=0.0) == ExactResult(ExactStatus.OPTIMAL, {}, 0, 0, True, 0.0, False, 0.0)


# --------------------------------------------------------------------------- reading the solver's answer


def fake_milp(monkeypatch: pytest.MonkeyPatch, x: np.ndarray | None, optimal: bool = False, infeasible: bool = False,
              work_limited: bool = False, bound: float | None = None) -> None:
    monkeypatch.setattr(exact, "_milp", lambda *args: exact._Run(x, optimal, infeasible, work_limited, bound))


def test_a_node_limit_without_a_plan_is_no_solution_and_keeps_the_proven_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    state = subset_sum_state()  # scale: the largest partition, 10 GiB
    fake_milp(monkeypatch, None, work_limited=True, bound=0.5)
    # 0.5 * 10 GiB * (1 - 1e-9) = 5368709120 - 5.37 = 5368709114.63, floored
    assert exact._solve(state, widen=0.0) == ExactResult(ExactStatus.NO_SOLUTION, {}, 0, 5368709114, True, 0.0, True)
    # infeasible; no bound, or a non-finite or negative one, is reported as 0
    for bound in (None, math.inf, math.nan, 0.0, -0.25):
        fake_milp(monkeypatch, None, infeasible=True, bound=bound)
        assert exact._solve(state, widen=0.0) == ExactResult(ExactStatus.INFEASIBLE, {}, 0, 0, True, 0.0, False), bound
    fake_milp(monkeypatch, None)  # HiGHS failed twice: no plan, no bound
    assert exact._solve(state, widen=5.0) == ExactResult(ExactStatus.NO_SOLUTION, {}, 0, 0, False, 0.0, False)


def test_a_plan_cut_by_the_node_limit_is_feasible_even_when_its_bound_meets_it(monkeypatch: pytest.MonkeyPatch) -> None:
    state = subset_sum_state()
    # x[p, b] for p = t-0..t-5 and b = 0, 1: t-0, t-3, t-5 on broker 1, the rest stay on broker 0
    x = np.asarray([0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1], dtype=np.float64)
    # bound 2.0 * 10 GiB (20 GiB) is capped at the 14 GiB moved: no gap, but not proven by the solver
    fake_milp(monkeypatch, x, work_limited=True, bound=2.0)
    assert exact._solve(state, widen=0.0) == ExactResult(ExactStatus.FEASIBLE, SUBSET_ROWS, 14 * GiB, 14 * GiB,
                                                        True, 0.0, True, 0.0)
    # the same answer by a finished solve with a bound 1 % under: 13.86 GiB = 14882061680.64, less 1e-9 of
    # it (14.88): 14882061665.76, floored. A gap of 1 % > 0.01 %: feasible
    fake_milp(monkeypatch, x, optimal=True, bound=1.386)
    assert exact._solve(state, widen=0.0) == ExactResult(ExactStatus.FEASIBLE, SUBSET_ROWS, 14 * GiB,
                                                        14882061665, True, 0.0, False, 0.0)
    # the widening model: one w per broker after the 12 x, (0.2 + 0.1) * 10 GiB in all, cut by the node limit
    fake_milp(monkeypatch, np.append(x, [0.2, 0.1]), work_limited=True, bound=0.1)
    assert exact._solve(state, widen=None) == ExactResult(ExactStatus.FEASIBLE, {}, 0, 0, False, 0.0, True,
                                                         pytest.approx(3 * GiB, rel=1e-12))


# --------------------------------------------------------------------------- apply


def test_apply_replaces_each_leaving_replica_in_place_same_rack_first() -> None:
    # Racks a = {0, 1}, b = {2, 3}.
    state = planner_state([(0, "a"), (1, "a"), (2, "b"), (3, "b")],
                          [part("t", 0, [2, 0], size_bytes=GiB), part("t", 1, [0, 1, 2], size_bytes=2 * GiB),
                           part("t", 2, [1], size_bytes=4 * GiB)])
    exact.apply(state, {0: [1, 3], 1: [3], 2: [1, 2]})
    # t-0: 2 (rack b) is replaced by 3 (rack b) in place, then 0 by 1: [3, 1], not [1, 3]
    # t-1: RF 3 -> 1: 0 is replaced by 3 (no rack-a broker joins), then 1 and 2 are dropped
    # t-2: RF 1 -> 2: 2 is added
    assert [state.row(p) for p in range(3)] == [[3, 1], [3], [1, 2]]
    # before: 0: t-0, t-1; 1: t-1, t-2; 2: t-0, t-1; 3: none. After: 1: t-0, t-2; 2: t-2; 3: t-0, t-1
    assert state.counts.tolist() == [0, 2, 1, 2]
    assert state.bytes.tolist() == [0, 5 * GiB, 4 * GiB, 3 * GiB]


@pytest.mark.parametrize("optimizer", ["auto", "exact"])
def test_a_cluster_with_nothing_movable_plans_nothing_instead_of_failing(optimizer: str) -> None:
    # Every topic excluded, or every partition leaderless: no variable is left for the solver (HiGHS
    # refuses an empty model, and make_plan used to end in its ValueError). The snapshot's assignment
    # is the only one: 2 replicas on broker 0 and none on 1 are then each broker's fixed load.
    excluded = snapshot([0, 1], [part("x", 0, [0]), part("x", 1, [0])])
    plan = make_plan(excluded, PlanOptions(optimizer=optimizer, exclude_topics=("x",)))
    assert (plan.summary["replica_moves"], plan.batches, plan.elections) == (0, [], [])
    assert plan.summary["optimizer"]["exact_status"] == "optimal"
    leaderless = snapshot([0, 1], [part("x", 0, [0], leader=-1, isr=[]), part("x", 1, [1], leader=-1, isr=[])])
    assert make_plan(leaderless, PlanOptions(optimizer=optimizer)).summary["replica_moves"] == 0


def test_nothing_movable_is_judged_as_it_stands() -> None:
    state = planner_state([0, 1], [part("x", 0, [0]), part("x", 1, [1])], targets=True, exclude_topics=("x",))
    assert exact._solve(state, widen=0.0) == ExactResult(ExactStatus.OPTIMAL, {}, 0, 0, True, 0.0, False, 0.0)
    # The widening model: nothing outside the band, so no widening.
    assert exact._solve(state, widen=None) == ExactResult(ExactStatus.OPTIMAL, {}, 0, 0, False, 0.0, False, 0.0)
