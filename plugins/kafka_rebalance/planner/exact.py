"""The exact mode: the fewest bytes moved, as a MILP solved by HiGHS (through SciPy).

One binary ``x[p, b]`` per movable partition and eligible broker: does broker b hold a
replica of p after the plan? The objective is the bytes of every replica that is new on
its broker (plus one byte per new replica, so that among equal-byte plans the one with
fewer moves wins, and empty partitions do not move for nothing). Dead and decommissioned
brokers get no variable (they end empty); nor do excluded topics and leaderless partitions
(they stay as they are, their load counted as fixed).

The constraints are the goals' own: each selected replica goal adds its rule through
``Goal.exact_terms`` (placement: the replication factor and no new replica for a partition
producing at the throttle; rack safety; replica counts; the byte band). A goal the operator
leaves out adds nothing, so the exact plan and the heuristic's answer to the same rules.
When no assignment reaches a goal's band (one partition larger than a broker's share), a
first solve finds the smallest widening W of every band that some assignment reaches, and
the bytes are minimised within the bands widened by W: the best reachable balance first,
then the fewest bytes for it.

Leaders are not in the model: they stay metadata-only and the leader goals run on the
solved replica sets, as in the heuristic.

The solver stops at ``NODE_LIMIT`` branch-and-bound nodes, a deterministic limit, so the
same snapshot gives the same plan; ``TIME_LIMIT`` is only a guard against a pathological
instance (a plan cut by it is reported as such). It reports the incumbent's bytes and the
proven bound; the gap between them is the most the plan can be above the optimum.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import Enum

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, OptimizeResult, milp
from scipy.sparse import coo_matrix

from kafka_rebalance.planner.goals.base import Goal
from kafka_rebalance.planner.goals.registry import replica_goals
from kafka_rebalance.planner.judge import judge, state_view
from kafka_rebalance.planner.state import ClusterState

# `auto` solves exactly up to this many variables (partitions x eligible brokers): about
# 300 partitions on 12 brokers, solved in seconds on one core. `--optimizer exact` goes
# up to HARD_LIMIT; beyond it the model alone would not fit the machine.
MAX_VARIABLES = 10_000
HARD_LIMIT = 200_000
NODE_LIMIT = 500
TIME_LIMIT = 30.0
# HiGHS stops once its plan is proven within 1 % of the optimum: the bytes goal is 5 %, and
# closing the last percent costs several times the solve (3 s against 12 s at 200 x 9).
MIP_GAP = 1e-2
# Only a plan proven within this relative gap is called optimal; any other is "feasible".
OPTIMAL_GAP = 1e-4
# scipy.optimize.milp's status for "the solver failed" (not infeasible, not a limit reached).
_SOLVER_ERROR = 4


class ExactStatus(str, Enum):
    OPTIMAL = "optimal"  # proven: no plan reaching the same balance moves 0.01 % fewer bytes
    FEASIBLE = "feasible"  # a plan and a proven bound (within MIP_GAP, or cut by the node or time limit)
    INFEASIBLE = "infeasible"  # no assignment meets every rule (the heuristic's plan is used)
    NO_SOLUTION = "no-solution"  # stopped before any plan was found


@dataclass(frozen=True)
class ExactResult:
    status: ExactStatus
    # partition -> broker indices after the plan, only those that change; None once the heuristic's plan was kept
    rows: dict[int, list[int]] | None
    bytes_moved: int
    bound_bytes: int  # proven lower bound for plans meeting the same constraints
    strict_band: bool  # the byte constraint was the tolerance band (not the gate's fallback band)
    seconds: float
    time_limited: bool
    widening: float = 0.0  # bytes the tolerance band had to be widened by (0: the band itself)


def variables(state: ClusterState) -> int:
    return int((~state.frozen).sum()) * len(state.eligible_idx)


def solve(state: ClusterState, goals: Sequence[Goal] | None = None) -> ExactResult:
    """Solve on a state whose targets are set and whose assignment is still the snapshot's,
    under the constraints of ``goals`` (the selected replica goals, hard ones included; every
    registered one when None)."""
    goals = replica_goals() if goals is None else goals
    started = time.monotonic()
    result = _solve(state, widen=0.0, goals=goals)
    if result.status is ExactStatus.INFEASIBLE:
        widen = _solve(state, widen=None, goals=goals)
        if widen.status is ExactStatus.NO_SOLUTION:
            # some assignment always exists once the band may widen: none found is the solver's limit
            result = widen
        elif widen.status in (ExactStatus.OPTIMAL, ExactStatus.FEASIBLE):
            # The widening found, plus slack for the solver's feasibility tolerance (1e-6 of the
            # model's unit, the largest partition): without it the rounded assignment that
            # reached the widening can miss the band by a few kilobytes and come out infeasible.
            slack = 1e-5 * max(1.0, float(state.sizes[~state.frozen].max(initial=1)))
            result = _solve(state, widen=widen.widening * (1 + 1e-6) + slack, goals=goals)
            if result.status in (ExactStatus.OPTIMAL, ExactStatus.FEASIBLE) and result.rows is not None:
                result = replace(result, widening=_widening_reached(state, result.rows, goals))
    return replace(result, seconds=round(time.monotonic() - started, 3))


def _widening_reached(state: ClusterState, rows: dict[int, list[int]], goals: Sequence[Goal] | None = None) -> float:
    """How far (bytes) the assignment with ``rows`` changed lies outside the goals' bands, at
    most, computed exactly rather than read back from the solver's floating-point widening."""
    load = state.bytes.astype(np.float64).copy()
    for p, new in rows.items():
        size = float(state.sizes[p])
        for b in state.original_row(p):
            load[b] -= size
        for b in new:
            load[b] += size
    return max((g.band_excess(state, load) for g in (replica_goals() if goals is None else goals)), default=0.0)


class ExactModel:
    """The MILP under construction: one binary ``x[p, b]`` per movable partition and eligible
    broker, the objective (bytes new on their broker, plus one byte per new replica), and the
    rows the goals add through ``exact_terms``. Bytes are in units of the largest partition
    inside the model, so HiGHS's absolute tolerances stay meaningful.

    ``widen`` is the byte band's state for the goal that owns a band: a number of bytes every
    band is widened by, or None when the solve looks for the smallest widening some
    assignment reaches (then the objective is that widening alone).
    """

    def __init__(self, state: ClusterState, widen: float | None) -> None:
        self.state, self.widen = state, widen
        self.parts = parts = np.flatnonzero(~state.frozen)
        self.elig = elig = np.asarray(state.eligible_idx, dtype=np.int64)
        self.n_p, self.n_e = n_p, n_e = len(parts), len(elig)
        self.nx = nx = n_p * n_e
        col = {int(b): j for j, b in enumerate(elig.tolist())}
        R = state.R[parts]
        self.on = on = np.zeros((n_p, n_e), dtype=bool)  # replica there today
        for i in range(R.shape[1]):
            owners = R[:, i]
            ok = owners >= 0
            cols = np.asarray([col.get(int(b), -1) for b in owners[ok].tolist()], dtype=np.int64)
            keep = cols >= 0
            on[np.flatnonzero(ok)[keep], cols[keep]] = True
        self.sizes = sizes = state.sizes[parts].astype(np.float64)
        self.scale = max(1.0, float(sizes.max()) if n_p else 1.0)
        self.var = np.arange(nx).reshape(n_p, n_e)
        self.p_of = np.repeat(np.arange(n_p), n_e)
        self.b_of = np.tile(np.arange(n_e), n_p)
        x_cost = np.where(on, 0.0, (sizes[:, None] + 1.0) / self.scale).ravel()
        self._cost = [x_cost if widen is not None else np.zeros(nx)]
        self._upper = [np.ones(nx)]
        self._integer = [np.ones(nx)]
        self.n_cols = nx
        self.widening_col: int | None = None
        # Frozen partitions still occupy the brokers they sit on.
        fixed = state.R[state.frozen]
        f_on = fixed >= 0
        f_owner = fixed[f_on]
        f_size = np.broadcast_to(state.sizes[state.frozen][:, None], fixed.shape)[f_on]
        self.fixed_count = np.bincount(f_owner, minlength=state.n_brokers)[elig].astype(np.float64)
        self.fixed_bytes = np.bincount(f_owner, weights=f_size, minlength=state.n_brokers)[elig].astype(np.float64)
        self._rows: list[np.ndarray] = []
        self._cols: list[np.ndarray] = []
        self._vals: list[np.ndarray] = []
        self._lo: list[np.ndarray] = []
        self._hi: list[np.ndarray] = []
        self.n_rows = 0

    def add(self, r: np.ndarray, c: np.ndarray, v: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        """Rows ``lo <= A x <= hi``; ``r`` numbers this call's rows from 0."""
        self._rows.append(r + self.n_rows)
        self._cols.append(c)
        self._vals.append(v)
        self._lo.append(lo)
        self._hi.append(hi)
        self.n_rows += len(lo)

    def columns(self, n: int, upper: float = 1.0, integer: bool = True, cost: float = 0.0) -> np.ndarray:
        """``n`` new variables beyond the x's, in [0, upper]; their indices."""
        start = self.n_cols
        self._cost.append(np.full(n, cost))
        self._upper.append(np.full(n, upper))
        self._integer.append(np.full(n, 1.0 if integer else 0.0))
        self.n_cols += n
        return np.arange(start, start + n)

    def forbid(self, mask: np.ndarray) -> None:
        """x[p, b] = 0 wherever ``mask`` (partition x eligible broker) holds."""
        self._upper[0][mask.ravel()] = 0.0

    def solve(self) -> OptimizeResult:
        total = self.n_cols
        A = coo_matrix((np.concatenate(self._vals), (np.concatenate(self._rows), np.concatenate(self._cols))),
                       shape=(self.n_rows, total)).tocsr()  # fmt: skip
        return _milp(np.concatenate(self._cost), LinearConstraint(A, np.concatenate(self._lo), np.concatenate(self._hi)),
                     np.concatenate(self._integer), Bounds(np.zeros(total), np.concatenate(self._upper)))


def _solve(state: ClusterState, widen: float | None, goals: Sequence[Goal] | None = None) -> ExactResult:
    """``widen`` None: find the smallest band widening (bytes) any assignment reaches;
    else minimise bytes moved within the band widened by ``widen`` bytes. The constraints are
    the goals' own (``Goal.exact_terms``)."""
    strict = widen == 0.0
    goals = replica_goals() if goals is None else goals
    if not (~state.frozen).any():
        return _nothing_movable(state, goals, widen)
    model = ExactModel(state, widen)
    for goal in goals:
        goal.exact_terms(model)
    if widen is None and model.widening_col is None:
        # no goal has a band to widen: the rules themselves cannot all be met
        return ExactResult(ExactStatus.INFEASIBLE, {}, 0, 0, False, 0.0, False)
    res = model.solve()
    nx, scale, parts, elig = model.nx, model.scale, model.parts, model.elig
    time_limited = "time limit" in str(res.message).lower()
    bound = getattr(res, "mip_dual_bound", None)
    bound_bytes = max(0, int(np.floor(float(bound) * scale * (1 - 1e-9)))) if bound is not None and np.isfinite(bound) else 0
    if res.x is None:
        status = ExactStatus.INFEASIBLE if res.status == 2 else ExactStatus.NO_SOLUTION
        return ExactResult(status, {}, 0, bound_bytes, strict, 0.0, time_limited)
    optimal = res.status == 0
    if widen is None:
        assert model.widening_col is not None
        return ExactResult(ExactStatus.OPTIMAL if optimal else ExactStatus.FEASIBLE, {}, 0, 0, False, 0.0, time_limited,
                           float(res.x[model.widening_col]) * scale)
    X = np.rint(res.x[:nx]).astype(bool).reshape(model.n_p, model.n_e)
    rows: dict[int, list[int]] = {}
    moved = 0
    for i in np.flatnonzero((X != model.on).any(axis=1)).tolist():
        p = int(parts[i])
        new = set(elig[X[i]].tolist())
        rows[p] = sorted(new)
        moved += int(state.sizes[p]) * len(new - set(state.original_row(p)))
    bound_bytes = min(bound_bytes, moved)
    optimal = optimal and moved - bound_bytes <= OPTIMAL_GAP * moved
    return ExactResult(ExactStatus.OPTIMAL if optimal else ExactStatus.FEASIBLE, rows, moved, bound_bytes,
                       strict, 0.0, time_limited, widen)


def _nothing_movable(state: ClusterState, goals: Sequence[Goal], widen: float | None) -> ExactResult:
    """Every partition is frozen (excluded or leaderless): the snapshot's assignment is the only one,
    so the goals judge it directly; HiGHS refuses a model without variables."""
    outside = _widening_reached(state, {}, goals)
    # every rule but the bands (judged by ``outside``)
    rules = all(c.reached for c in judge(goals, state_view(state, byte_slack=math.inf)))
    if widen is None:
        status = ExactStatus.OPTIMAL if rules else ExactStatus.INFEASIBLE
        return ExactResult(status, {}, 0, 0, False, 0.0, False, outside)
    status = ExactStatus.OPTIMAL if rules and outside <= widen else ExactStatus.INFEASIBLE
    return ExactResult(status, {}, 0, 0, widen == 0.0, 0.0, False, widen)


def _milp(c: np.ndarray, constraints: LinearConstraint, integrality: np.ndarray, bounds: Bounds) -> OptimizeResult:
    """HiGHS with presolve, and once more without it when HiGHS itself fails: its presolve
    ends some small feasible models in "Solve error" (status 4), e.g. the widening model of five
    single-replica partitions of 3, 25, 23, 6 and 8 GiB on four brokers, which solves without it."""
    for presolve in (True, False):
        res = milp(c, constraints=constraints, integrality=integrality, bounds=bounds,
                   options={"node_limit": NODE_LIMIT, "time_limit": TIME_LIMIT, "mip_rel_gap": MIP_GAP, "presolve": presolve})
        if res.status != _SOLVER_ERROR:
            break
    return res


def moves_of(state: ClusterState, rows: dict[int, list[int]]) -> int:
    """Replicas new on their broker in the solved replica sets ``rows``."""
    return sum(len(set(new) - set(state.original_row(p))) for p, new in rows.items())


def apply(state: ClusterState, rows: dict[int, list[int]]) -> None:
    """Turn the solved replica sets into moves on ``state``: each leaving replica is replaced in
    place by a new one, same rack first (so the list's order, and leadership, change least)."""
    rack = state.rack
    for p in sorted(rows):
        orig = state.original_row(p)
        new = rows[p]
        adds = [b for b in new if b not in orig]
        removes = [b for b in orig if b not in new]
        for src in list(removes):
            if not adds:
                break
            same = [b for b in adds if rack[b] == rack[src]]
            dst = same[0] if same else adds[0]
            state.move(p, src, dst)
            adds.remove(dst)
            removes.remove(src)
        for dst in adds:
            state.add(p, dst)
        for src in removes:
            state.remove(p, src)
