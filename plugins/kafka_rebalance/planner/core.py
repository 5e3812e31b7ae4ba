"""The planner: snapshot + options -> Plan, a pure function (files.py writes it out).

Order of work: targets and lower bounds from the untouched snapshot; the selected goals
(planner/goals/registry.py) in priority order: the hard ones, the replica goals, the exact
model where it does better, the leader goals on the final replica sets; then steps,
batches, throttles, estimates and the summary, where every goal judges the plan.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy.sparse import coo_matrix

from kafka_rebalance.balance import leader_changes
from kafka_rebalance.errors import PlanError
from kafka_rebalance.estimates import DEFAULT_MODE, TENTHS, tenths
from kafka_rebalance.metrics import is_over_threshold, threshold_percentage
from kafka_rebalance.options import PlanOptions
from kafka_rebalance.planner import exact, lower_bounds
from kafka_rebalance.planner.batching import LOG_DIR_BATCH, PlannedBatch, batch_steps, order_key
from kafka_rebalance.planner.byte_misses import byte_misses
from kafka_rebalance.planner.dispatch import Columns
from kafka_rebalance.planner.estimate import step_figures
from kafka_rebalance.planner.goals.base import Goal
from kafka_rebalance.planner.goals.byte_balance import ByteBalanceGoal
from kafka_rebalance.planner.goals.disk_capacity import (
    dir_room,
    dirs_within,
    disk_room,
    plan_log_dirs,
    within_seconds,
    within_steps,
    within_throttles,
)
from kafka_rebalance.planner.goals.leader_imbalance import LeaderImbalanceGoal
from kafka_rebalance.planner.goals.leader_keep import keep_leaders
from kafka_rebalance.planner.goals.placement import RackSafetyGoal
from kafka_rebalance.planner.goals.preferred_leader import LeaderChoice, PreferredLeaderGoal, preferred_bounds
from kafka_rebalance.planner.goals.registry import goal_class, replica_goals, selected
from kafka_rebalance.planner.goals.replica_count import ReplicaCountGoal
from kafka_rebalance.planner.goals.view import BalanceView
from kafka_rebalance.planner.judge import judge, state_view
from kafka_rebalance.planner.peaks import DiskRoom
from kafka_rebalance.planner.relief import disk_fill, spread
from kafka_rebalance.planner.schedule import Schedule, simulate
from kafka_rebalance.planner.state import ClusterState
from kafka_rebalance.planner.steps import Step, direct_steps, partition_steps, step_fields
from kafka_rebalance.planner.targets import forced_shares, set_targets
from kafka_rebalance.planner.throttles import batches_throttles
from kafka_rebalance.snapshot import Snapshot


@dataclass
class Plan:
    snapshot: Snapshot
    options: PlanOptions
    batches: list[PlannedBatch]
    elections: list[tuple[str, int]]
    summary: dict[str, Any]
    throttles: list[dict[str, Any]]
    schedule: Schedule


def _broker_rows(state: ClusterState, replicas: np.ndarray, leaders: np.ndarray, preferred: np.ndarray, size: np.ndarray) -> list[dict[str, int]]:
    return [
        {
            "broker_id": state.bid(b),
            "replicas": int(replicas[b]),
            "leaders": int(leaders[b]),
            "preferred_leaders": int(preferred[b]),
            "size_bytes": int(size[b]),
        }
        for b in range(state.n_brokers)
    ]


def _ratio(value: float, bound: float) -> float | None:
    if bound <= 0:
        return 1.0 if value <= 0 else None
    return round(value / bound, 4)


def step_rules(state: ClusterState, original: list[int], final_idx: list[int]) -> Callable[[Sequence[int]], bool]:
    """Which intermediate replica lists (broker ids) a partition may pass through (see steps.py):
    live brokers only; rack-safe if its final list is; no decommissioned broker either, unless
    the partition has more replicas on decommissioned brokers than one step may replace (then
    they leave one step at a time: they are alive and in sync, so each step can complete)."""
    index_of = state.index_of
    rules: list[tuple[Any, bool]] = []  # (the brokers a list may hold, whether it must be rack-safe): on first use

    def valid(row: Sequence[int]) -> bool:
        # (worked out on the first call: most partitions reach their final list in one step and never ask)
        if not rules:
            ok = state.alive
            leaving = sum(1 for b in original if state.decommissioned[index_of[b]])
            if leaving <= state.options.max_new_replicas_per_partition:
                ok = state.eligible
            rules.append((ok, state.has_racks and state.rack_safe(final_idx)))
        ok, racks = rules[0]
        idx = [index_of[b] for b in row]
        return all(ok[i] for i in idx) and (not racks or state.rack_safe(idx))

    return valid


def _reaches_all(state: ClusterState, unrepaired: list[str], widening: float = 0.0,
                 goals: Sequence[Goal] | None = None) -> bool:  # fmt: skip
    """Does ``state`` meet every replica goal's rule, with no rack violation left unrepaired? Where
    the exact model had to widen the byte bands by ``widening`` bytes in all, the bands are judged
    by the same measure: the bytes the brokers lie outside them, summed, at most that."""
    goals = replica_goals() if goals is None else goals
    if not widening:
        return all(c.reached for c in judge(goals, state_view(state))) and not unrepaired
    outside = sum(float(g.band_excess(state, state.bytes.astype(np.float64)).sum()) for g in goals)
    rules = all(c.reached for c in judge(goals, state_view(state, byte_slack=math.inf)))
    return rules and not unrepaired and outside <= widening + 1e-6  # the goals' own rounding slack


def _exact_if_better(
    snapshot: Snapshot, options: PlanOptions, heuristic: ClusterState, unrepaired: list[str],
    goals: Sequence[Goal] | None = None,
) -> tuple[ClusterState, exact.ExactResult | None]:
    """The exact mode's state when it is asked for; under ``auto``, when the model fits and the
    heuristic's plan is not at least as good. Otherwise the heuristic's state, with the solver's
    result (for its bound) carrying ``rows`` None."""
    if options.optimizer == "heuristic":
        return heuristic, None
    goals = replica_goals(options.goals) if goals is None else goals
    size = exact.variables(heuristic)
    if options.optimizer == "exact" and size > exact.HARD_LIMIT:
        raise PlanError(
            f"--optimizer exact: the model of {snapshot.cluster_id} needs {size:,} variables (partitions x eligible "
            f"brokers), more than the {exact.HARD_LIMIT:,} it can hold; use --optimizer auto or heuristic"
        )
    if options.optimizer == "auto" and size > exact.MAX_VARIABLES:
        return heuristic, None
    fresh = ClusterState(snapshot, options)
    set_targets(fresh)
    # The heuristic's plan is the solver's first incumbent wherever it meets the model's rules.
    result = exact.solve(fresh, goals, start=[heuristic.row(p) for p in range(heuristic.n_parts)])
    heuristic_bytes = heuristic.moved_bytes()
    rows = result.rows if result.status in (exact.ExactStatus.OPTIMAL, exact.ExactStatus.FEASIBLE) else None
    usable = rows is not None
    # Under auto the heuristic's plan stays only if it is at least as good: it reaches every
    # rule the solved one reaches, and moves fewer bytes, or fewer replicas for bytes within the
    # promise (BYTES_PROMISE of the proven fewest): the solver minimises bytes and would spend
    # dozens of extra moves to save a fraction of a percent. Exact asked for is exact given.
    fewer_moves = (rows is not None and heuristic.moved_replicas() < exact.moves_of(fresh, rows)
                   and heuristic_bytes <= exact.BYTES_PROMISE * result.bound_bytes)  # fmt: skip
    as_good = _reaches_all(heuristic, unrepaired, result.widening, goals) and (
        heuristic_bytes < result.bytes_moved or fewer_moves)
    if rows is not None and (options.optimizer == "exact" or not as_good):
        exact.apply(fresh, rows)
        # The model holds brokers, not log dirs: under auto, a solved plan no dir can hold is not taken.
        if options.optimizer == "exact" or dirs_within(fresh):
            return fresh, result
    if options.optimizer == "exact" and not usable:
        if result.status is exact.ExactStatus.NO_SOLUTION:
            raise PlanError(
                f"--optimizer exact: no-solution: the solver stopped before finding any plan for {snapshot.cluster_id} "
                f"(its limit: {exact.NODE_LIMIT} nodes); --optimizer heuristic plans without it"
            )
        raise PlanError(
            f"--optimizer exact: {result.status.value}: no assignment of {snapshot.cluster_id} meets every goal "
            f"({', '.join(g.name for g in goals)}); --optimizer heuristic plans the closest it can reach"
        )
    return heuristic, replace(result, rows=None)


def _optimizer_summary(options: PlanOptions, solved: exact.ExactResult | None, moved: int, certified: int, reached: bool) -> dict[str, Any]:
    """How the replica sets were chosen, and how far their bytes can be from the fewest possible."""
    used = "exact" if solved is not None and solved.rows is not None else "heuristic"
    bound = certified
    status = "heuristic"
    if solved is not None:
        status = solved.status.value
        # HiGHS's bound holds for every plan meeting the model's constraints (counts, rack safety,
        # the byte band widened by what no assignment can avoid): the solved plan does by
        # construction; a heuristic plan kept instead does when it reaches the unwidened band.
        holds = used == "exact" or (solved.strict_band and reached)
        if holds and solved.status in (exact.ExactStatus.OPTIMAL, exact.ExactStatus.FEASIBLE):
            bound = max(bound, min(solved.bound_bytes, moved))
    gap = None if bound == 0 and moved else round(100.0 * (moved - bound) / bound, 2) if bound else 0.0
    return {
        "requested": options.optimizer,
        "used": used,
        "exact_status": status,
        "time_limited": False,  # the solver is bounded by work only: a time limit never cuts a plan
        "work_limited": bool(solved is not None and solved.work_limited),
        "bytes_moved": moved,
        "bytes_bound": bound,
        "gap_percent": gap,
        # the widest any one broker's band had to be widened
        "band_widened_bytes": int(round(max(solved.widenings, default=0.0))) if used == "exact" and solved is not None else 0,
    }


def make_plan(snapshot: Snapshot, options: PlanOptions) -> Plan:
    """The plan for ``snapshot`` under ``options``, with Python's cycle collector paused while it is made.

    A plan allocates millions of short-lived objects; each of those allocations counts towards the collector's
    next pass, and its full passes walk every object alive, the snapshot's hundreds of thousands of partitions
    included, again and again: at 200 brokers / 200,000 partitions, 12 full passes took 10 % of planning. The
    planner's own cycles (a state and its donor indexes, which point back at it) are few, garbage only once the
    plan is made, and the collector takes them at its next pass after that (the peak memory was the same either
    way). No result depends on when the collector runs. Paused only if it was running (a caller that turned it
    off keeps it off), and resumed however planning ends."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _make_plan(snapshot, options)
    finally:
        if was_enabled:
            gc.enable()


def _make_plan(snapshot: Snapshot, options: PlanOptions) -> Plan:
    options.check()
    options.check_against(snapshot)
    if options.threshold_percentage is None:
        value, source = threshold_percentage(snapshot)
        options = replace(options, threshold_percentage=value, threshold_source=source)
    original, snapshot = snapshot, options.planned_snapshot(snapshot)
    state = ClusterState(snapshot, options)
    set_targets(state)
    bounds = lower_bounds.terms(state)
    before = _Loads.of(state, np.bincount(state.R[:, 0], minlength=state.n_brokers) if state.n_parts
                       else np.zeros(state.n_brokers, int))  # fmt: skip
    names = selected(options.goals, options.relieve)
    first = state.R[:, 0].astype(np.int64) if state.n_parts else np.zeros(0, dtype=np.int64)
    before_view = state_view(state, first, preferred_bounds=preferred_bounds(state, first))
    state, solved, unrepaired, spent = _balance(snapshot, options, state, names)
    leaders = PreferredLeaderGoal(balance=PreferredLeaderGoal.name in names)
    leaders.optimize(state)
    choice = leaders.choice()
    for name in names:
        goal_class(name)().lead(state, choice)
    reorders, moves = _steps(state, choice, options)
    dirs = plan_log_dirs(state, moves)
    if options.relieve:
        _relieved_or_refused(state, dirs.unrelieved, after=state_view(state))
    moves = [[dirs.named(s) for s in chain] for chain in moves]
    elections, final_leader = _elections(state, choice, elect=LeaderImbalanceGoal.name in names)
    after_view = state_view(state, choice.preferred, final_leader, choice.bounds)
    room = disk_room(state, dirs)
    within = within_steps(state, dirs, reorders)
    batches, throttles, made = _batches(state, reorders, moves, options, within, room)
    # The executor runs the log-dir batches before the continuous schedule: its dirs start where they leave them.
    schedule = simulate(moves, options.max_moves_per_broker, options.max_partitions_per_batch, options.delivered_rate,
                        options.move_fixed_seconds, room.after(within) if room is not None and within else room, made)
    summary = _summary(state, options, choice, bounds, before, final_leader, batches, schedule, solved, unrepaired,
                       after_view, made)
    summary["reorders"], summary["leader_elections"] = len(reorders), len(elections)
    summary["leader_changes"] = leader_changes(state.leader.tolist(), final_leader.tolist())
    summary["goals"] = _goal_entries(names, before_view, after_view, spent, solved)
    if dirs.dirs:  # only where brokers have several log dirs: other plans are the plans they were
        summary["log_dirs"] = dirs.summary()
    return Plan(original, options, batches, elections, summary, throttles, schedule)


def _relieved_or_refused(state: ClusterState, dirs_left: Sequence[str], after: BalanceView) -> None:
    """Relief mode's promise: every broker and log dir under its limits; else one PlanError line naming each
    broker or dir left above and why, and no plan (a relief that relieves nothing is no plan to approve)."""
    left = [f"broker {bid}: {why}" for name in selected(state.options.goals, relieve=True)
            for bid, why in goal_class(name)().relief_left(after).items()]
    left.extend(dirs_left)
    if left:
        raise PlanError(f"--relieve: {'; '.join(left)}: no eligible broker (or other log dir) can take enough of its "
                        "replicas within its own limits and rack safety; raise --max-disk-usage, add capacity or "
                        "brokers, or free space")


@dataclass(frozen=True)
class _Loads:
    """Per broker index: replicas, leaders, preferred leaderships and bytes."""

    replicas: np.ndarray
    leaders: np.ndarray
    preferred: np.ndarray
    size: np.ndarray

    @classmethod
    def of(cls, state: ClusterState, preferred: np.ndarray, leader: np.ndarray | None = None) -> _Loads:
        lead = state.leader if leader is None else leader
        return cls(state.counts.copy(), np.bincount(lead[lead >= 0], minlength=state.n_brokers), preferred,
                   state.bytes.copy())

    def rows(self, state: ClusterState) -> list[dict[str, int]]:
        return _broker_rows(state, self.replicas, self.leaders, self.preferred, self.size)


def _balance(snapshot: Snapshot, options: PlanOptions, state: ClusterState,
             names: Sequence[str]) -> tuple[ClusterState, exact.ExactResult | None, list[str], dict[str, tuple[int, int]]]:  # fmt: skip
    """The selected replica goals in order (hard ones veto every later move), then the exact model where it does better.

    Returns the final state, the exact result (if it ran), the rack violations left unrepaired,
    and per goal the replica moves and bytes its heuristic actions added.
    """
    goals: list[Goal] = [goal_class(n)() for n in names if not goal_class(n).leader_goal]
    # In relief mode every selected goal is a limit: each vetoes every move from the start, the hard goals' too.
    state.vetoes = [g for g in goals if g.hard or options.relieve]
    spent: dict[str, tuple[int, int]] = {}
    for goal in goals:
        if not (goal.hard or goal.count_goal) and state.move_cap is None:
            state.cap_moves()
        moves, moved = state.moved_replicas(), state.moved_bytes()
        goal.optimize(state)
        spent[goal.name] = (state.moved_replicas() - moves, state.moved_bytes() - moved)
        if goal not in state.vetoes:
            state.vetoes.append(goal)
    rack = next((g for g in goals if isinstance(g, RackSafetyGoal)), None)
    unrepaired = sorted(rack.unrepaired) if rack is not None else []
    state, solved = _exact_if_better(snapshot, options, state, unrepaired, goals)
    if solved is not None and solved.rows is not None:
        unrepaired = []
        if options.relieve:
            spread(state, disk_fill(state), dir_room(state))
    elif not options.relieve:  # relief picks followers before leaders among equal sizes, and never trades bytes
        # Leader changes are the last cost, after bytes and moves (the exact model's choice is made on
        # those): the heuristic's balance with followers moved in place of leaders where sizes allow.
        keep_leaders(state)
    return state, solved, unrepaired, spent


def _goal_entries(names: Sequence[str], before: Any, after: Any, spent: dict[str, tuple[int, int]],
                  solved: exact.ExactResult | None) -> list[dict[str, Any]]:  # fmt: skip
    """plan.json's ``summary.goals``: one entry per selected goal, in priority order, with its verdict
    before and after the plan and what its own actions cost. When the exact model's plan was taken,
    the moves are the solver's, not any one goal's: ``moves`` and ``bytes`` are then null."""
    by_exact = solved is not None and solved.rows is not None
    out = []
    for name in names:
        goal = goal_class(name)()
        was, now = goal.check(before), goal.check(after)
        moves, moved = spent.get(name, (0, 0))
        out.append({
            "name": name, "hard": goal.hard, "target": goal.target,
            "before": was.as_dict(), "after": now.as_dict(), "reached": now.reached,
            "moves": None if by_exact and not goal.leader_goal else moves,
            "bytes": None if by_exact and not goal.leader_goal else moved,
        })  # fmt: skip
        figures = goal.broker_figures(before, after)
        if figures is not None:  # absent for the goals without: their plans hash as they did
            out[-1]["brokers"] = figures
    return out


def _steps(state: ClusterState, choice: LeaderChoice, options: PlanOptions) -> tuple[list[Step], list[list[Step]]]:
    """Each changed partition's path from its replicas to its final row: reorders, and chains of moves."""
    ids = np.asarray(state.broker_ids, dtype=np.int64)
    todo = np.flatnonzero(state.touched | (choice.column != 0))
    parts = [state.parts[p] for p in todo.tolist()]
    # Final rows: the preferred replica first, the others in the order the goals left them.
    now = state.now[todo].astype(np.int64)
    pref = choice.preferred[todo].astype(np.int64)
    final = np.take_along_axis(now, np.argsort(np.where(now == pref[:, None], 0, np.where(now >= 0, 1, 2)), axis=1,
                                               kind="stable"), axis=1)  # fmt: skip
    # (a row without its preferred replica, should one come, takes the path per partition below: it puts it first)
    listed = (now == pref[:, None]).any(axis=1).tolist()
    orig = state.R[todo].astype(np.int64)
    sizes = [part.size_bytes or 0 for part in parts]
    rates = [part.bytes_in_per_sec or 0.0 for part in parts]
    direct = direct_steps(
        todo.tolist(), [part.topic for part in parts], [part.partition for part in parts],
        np.where(orig >= 0, ids[orig], -1), np.where(final >= 0, ids[final], -1), ~state.eligible_arr[orig] & (orig >= 0),
        np.fromiter((part.leader for part in parts), dtype=np.int64, count=len(parts)), sizes, rates,
        options.max_new_replicas_per_partition,
    )  # fmt: skip

    def leave_rank(bid: int) -> int:
        return 1 if state.eligible[state.index_of[bid]] else 0

    reorders: list[Step] = []
    moves: list[list[Step]] = []
    limit = options.delivered_rate
    for k, (p, step) in enumerate(zip(todo.tolist(), direct, strict=True)):
        if step is None or not listed[k]:  # more new replicas than one step may add: the fewest safe steps
            part = parts[k]
            b = int(pref[k])
            final_idx = [b] + [x for x in state.row(p) if x != b]
            original = list(part.replicas)
            chain = partition_steps(
                p, part.topic, part.partition, original, [int(ids[x]) for x in final_idx], part.leader, sizes[k],
                rates[k], options.max_new_replicas_per_partition, valid=step_rules(state, original, final_idx),
                leave_first=leave_rank,
            )  # fmt: skip
        else:
            chain = [step]
        if rates[k] >= limit and not chain[0].reorder:
            raise PlanError(
                f"partition {parts[k].name} would move but its produce rate {rates[k]:,.0f} B/s is at or above "
                f"{options.rate_text()}, so it could never catch up; raise --throttle"
            )
        if chain[0].reorder:
            reorders.extend(chain)
        else:
            moves.append(chain)
    return reorders, moves


def _elections(state: ClusterState, choice: LeaderChoice, elect: bool = True) -> tuple[list[tuple[str, int]], np.ndarray]:
    """The preferred-leader elections (the leader-imbalance goal's action; none when it is left
    out), and every partition's leader once they ran (-1: none).

    A partition whose leader leaves its replica set changes leader anyway: it is elected, so it
    ends led by its preferred replica. One whose leader stays is elected only where the goals need
    it, each election a leader change clients see: the fewest (``_fewest_elections``) that leave no
    broker over Kafka's threshold (ratio > pct / 100 of the partitions it is preferred for but does
    not lead; below it the controller leaves leadership alone too) and every broker's leaders within
    the preferred-leader goal's floor..ceil."""
    pref = choice.preferred
    n_p = state.n_parts
    electable_pref = choice.electable[np.arange(n_p), choice.column] if n_p else np.zeros(0, bool)
    leader = state.leader.astype(np.int64)
    final_leader = np.where(leader >= 0, leader, -1).astype(np.int64)
    stays = (choice.final_rows == leader[:, None]).any(axis=1) & (leader >= 0) if n_p else np.zeros(0, bool)
    if n_p:
        stays &= np.asarray(state.alive, dtype=bool)[np.maximum(leader, 0)]
    # Every changeable partition whose final first replica can lead and does not (or might not) yet.
    candidates = ~state.frozen & electable_pref & (leader != pref) & elect
    need = candidates & ~stays
    final_leader[need] = pref[need]
    # Partitions not elected keep their leader if it is still a live replica, else the first live one.
    kept = np.flatnonzero(state.touched & ~need)
    rows, was = choice.final_rows[kept].astype(np.int64), final_leader[kept]
    alive = np.asarray(state.alive, dtype=bool)
    lost = (was < 0) | ~(rows == was[:, None]).any(axis=1) | ~alive[np.maximum(was, 0)]
    rows = rows[lost]
    live = (rows >= 0) & alive[np.maximum(rows, 0)]
    final_leader[kept[lost]] = np.where(live.any(axis=1), rows[np.arange(len(rows)), live.argmax(axis=1)], -1)
    optional = candidates & stays
    if optional.any():
        touchable = ~state.excluded
        n_b = state.n_brokers
        preferred_for = np.bincount(pref[touchable & (pref >= 0)], minlength=n_b)
        not_led = np.bincount(pref[touchable & (pref >= 0) & (final_leader != pref)], minlength=n_b)
        pct = float(state.options.threshold_percentage or 0.0)
        leads = np.bincount(final_leader[final_leader >= 0], minlength=n_b)
        required = np.zeros(n_b, dtype=np.int64)
        for b in state.eligible_idx:
            allowed = int(math.floor(pct * int(preferred_for[b]) / 100))
            while allowed > 0 and is_over_threshold(allowed / int(preferred_for[b]), pct):
                allowed -= 1
            required[b] = max(0, int(not_led[b]) - allowed)
        elected = np.asarray(_fewest_elections(state, optional, final_leader, pref, leads, required, choice.bounds),
                             dtype=np.int64)
        need[elected] = True
        final_leader[elected] = pref[elected]
    elections = sorted((state.parts[p].topic, state.parts[p].partition) for p in np.flatnonzero(need).tolist())
    return elections, final_leader


def _fewest_elections(state: ClusterState, optional: np.ndarray, leader: np.ndarray, pref: np.ndarray,
                      leads: np.ndarray, required: np.ndarray, bounds: tuple[int, int]) -> list[int]:
    """The fewest optional elections (``optional``: partitions whose leader stays, each election a leader change
    clients see) that leave every eligible broker (1) within Kafka's threshold: at least ``required[b]`` of the
    partitions it is preferred for but does not lead elected to it, as many as there are where fewer, and
    (2) leading within the preferred-leader goal's [floor, ceil] (leading is the load), widened to the count
    electing everything would give (the rule before issue #42), so no broker ends out of the band where
    electing everything kept it in.

    An election hands one leadership from a partition's leader ``a`` to its preferred replica ``b``: it is
    flow along the edge a -> b of a graph on the brokers, so the fewest elections are a minimum-cost flow
    (each broker's threshold row read as an arc into it, a network flow: HiGHS's LP optimum is integral,
    proven the fewest). Electing everything is
    one feasible flow, its first incumbent. Choosing (1) and (2) together, not one after the other, is
    what saves elections: a threshold election that also moves leadership toward the band counts for
    both. Within an edge the lowest partition indexes are elected (any would do: the counts decide)."""
    cand = np.flatnonzero(optional)
    if not len(cand):
        return []
    n_b = state.n_brokers
    full = leads.copy()
    np.subtract.at(full, leader[cand], 1)
    np.add.at(full, pref[cand], 1)
    lo, hi = bounds
    elig = state.eligible_index_arr
    key = leader[cand] * n_b + pref[cand]
    order = np.lexsort((cand, key))
    cand, key = cand[order], key[order]
    edges, start, cap = np.unique(key, return_index=True, return_counts=True)
    tail, head = edges // n_b, edges % n_b
    need = np.minimum(required, np.bincount(head, weights=cap, minlength=n_b).astype(np.int64))
    band_lo, band_hi = np.minimum(lo, full[elig]), np.maximum(hi, full[elig])
    if not need[elig].any() and ((leads[elig] >= band_lo) & (leads[elig] <= band_hi)).all():
        return []
    n_e = len(edges)
    row_of = np.full(n_b, -1, dtype=np.int64)
    row_of[elig] = np.arange(len(elig))
    cols = np.arange(n_e)
    # Rows 0..len(elig)-1: a broker's net leaderships gained; then one row per broker owed threshold elections.
    owed = elig[need[elig] > 0]
    owed_row = np.full(n_b, -1, dtype=np.int64)
    owed_row[owed] = len(elig) + np.arange(len(owed))
    entries = [(row_of[head], cols, 1.0), (row_of[tail], cols, -1.0), (owed_row[head], cols, 1.0)]
    r = np.concatenate([rows for rows, _, _ in entries])
    c = np.concatenate([cs for _, cs, _ in entries])
    v = np.concatenate([np.full(len(cs), val) for _, cs, val in entries])
    keep = r >= 0
    A = coo_matrix((v[keep], (r[keep], c[keep])), shape=(len(elig) + len(owed), n_e)).tocsr()
    row_lo = np.concatenate([band_lo - leads[elig], need[owed]]).astype(np.float64)
    row_hi = np.concatenate([band_hi - leads[elig], np.full(len(owed), np.inf)]).astype(np.float64)
    ub = cap.astype(np.float64)
    run = exact.solve_milp(state, np.ones(n_e), A, row_lo, row_hi, np.zeros(n_e), ub, np.ones(n_e, dtype=bool), ub)
    # Without a solution (HiGHS failed), electing everything: the plan before issue #42, always valid.
    x = np.rint(run.x).astype(np.int64) if run.x is not None else cap
    return sorted(int(p) for i in np.flatnonzero(x).tolist() for p in cand[start[i] : start[i] + x[i]].tolist())


def _batches(state: ClusterState, reorders: list[Step], moves: list[list[Step]], options: PlanOptions,
             within: Sequence[Step] = (), disk: DiskRoom | None = None,
             ) -> tuple[list[PlannedBatch], list[dict[str, Any]], Columns]:  # fmt: skip
    """The batches in the chosen order, each with its duration and KIP-73 throttles, and the moves' steps as arrays
    (chain order: ``simulate`` reads them). Moves between the log dirs of a broker (``within``) form the log-dir
    batches, after the reorders and before the moves (make_batches)."""
    urp = np.fromiter((len(p.isr) < len(p.replicas) for p in state.parts), dtype=bool, count=state.n_parts)
    key = order_key(options, lambda p: bool(urp[p]))
    batching = batch_steps(reorders, moves, options, key, disk, within)
    batches = batching.batches
    for batch in batches:  # (a move batch's seconds are the batcher's: batching.waves_seconds)
        if batch.kind == "move" and math.isinf(batch.seconds):
            s = max(batch.steps, key=lambda s: s.rate)
            raise PlanError(
                f"a batch cannot finish: produce traffic into moving partitions (e.g. {s.topic}-{s.partition} "
                f"at {s.rate:,.0f} B/s) reaches {options.rate_text()} on one broker; "
                "raise --throttle or lower --max-moves-per-broker"
            )
    rate = options.throttle_bytes_per_sec
    # every batch's (none for a reorder batch), the moves' read in chain order
    throttles = batches_throttles([s for chain in moves for s in chain], batching.moved_in, len(batches), rate)
    for n, batch in enumerate(batches):
        if batch.kind == LOG_DIR_BATCH:
            batch.seconds = within_seconds(batch.steps, options.delivered_rate, options.move_fixed_seconds)
            throttles[n] = within_throttles(batch.steps, rate)
    return batches, throttles, batching.columns


def _summary(state: ClusterState, options: PlanOptions, choice: LeaderChoice, bounds: lower_bounds.Terms, before: _Loads,
             final_leader: np.ndarray, batches: list[PlannedBatch], schedule: Schedule, solved: exact.ExactResult | None,
             unrepaired: list[str], after_view: BalanceView, made: Columns) -> dict[str, Any]:  # fmt: skip
    """plan.json's summary: what the plan moves against its lower bounds, the loads before and after, its targets.
    ``made``: the move batches' steps as arrays (``batching.Batching.columns``)."""
    ids, pref = state.broker_ids, choice.preferred
    after = _Loads.of(state, np.bincount(pref, minlength=state.n_brokers) if state.n_parts else before.preferred,
                      final_leader)  # fmt: skip
    # The goals judge the plan, whether or not they were selected: the targets block reports both rules.
    byte_check = ByteBalanceGoal().check(after_view)
    balanced_bytes = byte_check.reached
    counts_reached = ReplicaCountGoal().check(after_view).reached
    out_of_band = set(byte_check.offenders)
    in_band = np.asarray([state.bid(b) not in out_of_band for b in state.eligible_idx], dtype=bool)
    # The byte terms of the brokers this plan brings into their band bind every plan that does as much.
    reached_bounds = lower_bounds.finish(lower_bounds.summed(bounds, in_band), counts_reached, True)
    # The move batches' new replicas from their arrays (every step of the moves is in one), the other batches' (none,
    # as things stand: reorders and moves between the dirs of a broker) from their steps.
    f = step_fields([s for b in batches if b.kind != "move" for s in b.steps], "adds", "size")
    n_adds = np.concatenate([np.fromiter(map(len, f["adds"]), dtype=np.int64, count=len(f["adds"])), np.diff(made.adds_at)])
    sizes = np.concatenate([np.array(f["size"], dtype=np.int64), made.size])
    replica_moves = int(n_adds.sum())
    bytes_moved = int((n_adds * sizes).sum())
    threshold = float(options.threshold_percentage or 0.0)
    over_threshold = list(LeaderImbalanceGoal().check(after_view).offenders)
    return {
        "replica_moves": replica_moves,
        "bytes_moved": bytes_moved,
        "lower_bounds": reached_bounds,
        "ratio_to_lower_bound": {
            "replica_moves": _ratio(replica_moves, reached_bounds["replica_moves"]),
            "bytes_moved": _ratio(bytes_moved, reached_bounds["bytes_moved"]),
        },
        # The headline: the figure of the executor's default mode (estimates.py), the batches' beside it.
        "estimated_seconds": tenths(schedule.seconds) / TENTHS,
        "estimate_of": DEFAULT_MODE,
        # The batches' own figures add up to it exactly (estimates.split_tenths).
        "estimated_seconds_batches": sum(tenths(w) for w in step_figures(batches, schedule).waves) / TENTHS,
        "continuous": {
            "estimated_seconds": tenths(schedule.seconds) / TENTHS,
            "physical_bound_seconds": round(schedule.bound_seconds, 1),
            "ratio_to_bound": _ratio(schedule.seconds, schedule.bound_seconds),
            "batched_ratio_to_bound": _ratio(sum(b.seconds for b in batches), schedule.bound_seconds),
        },
        "before": before.rows(state),
        "projected": after.rows(state),
        "targets": {
            "replicas": {str(ids[b]): [int(state.lo[b]), int(state.hi[b])] for b in state.eligible_idx},
            "preferred_leaders": list(choice.bounds),
            "byte_mean": round(state.byte_mean, 1),
            "byte_targets": {str(ids[b]): round(float(state.byte_target[b]), 1) for b in state.eligible_idx},
            # [lo, hi] per broker: the mean within the tolerance, or the forced share where it binds
            "byte_bands": {str(ids[b]): [round(float(state.byte_lo[b]), 1), round(float(state.byte_hi[b]), 1)]
                           for b in state.eligible_idx},
            "forced_shares": forced_shares(state),
            "clamped_racks": state.clamped_racks,
            "replicas_reached": counts_reached,
            "bytes_reached": bool(balanced_bytes),
            "byte_tolerance": options.byte_tolerance,
            **({"byte_tolerance_below": options.byte_tolerance_below} if options.byte_tolerance_below is not None else {}),
            "byte_misses": byte_misses(state, by_exact=solved is not None and solved.rows is not None),
        },
        "leader_imbalance": {
            "threshold_percentage": threshold,
            "brokers_over_threshold_after_election": over_threshold,
        },
        "optimizer": _optimizer_summary(options, solved, bytes_moved, reached_bounds["bytes_moved"], counts_reached and balanced_bytes),
        "rack_violations_unrepaired": unrepaired,
        "steps_beyond_max_new_replicas": int((n_adds > options.max_new_replicas_per_partition).sum()),
    }
