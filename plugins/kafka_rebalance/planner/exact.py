"""The exact mode: the fewest bytes moved, as a MILP solved by HiGHS (through SciPy).

One binary ``x[p, b]`` per movable partition and eligible broker: does broker b hold a
replica of p after the plan? The objective is the bytes of every replica that is new on
its broker (plus one byte per new replica, so that among equal-byte plans the one with
fewer moves wins, and empty partitions do not move for nothing). The constraints are the
balance rules the heuristic promises:

* every partition has its target replication factor;
* every eligible broker ends within its replica-count range [lo, hi];
* every eligible broker ends within the byte tolerance of its target. When no assignment
  reaches that (one partition larger than a broker's share), a first solve finds the
  smallest widening W of every broker's band that some assignment reaches, and the
  bytes are minimised within the band widened by W: the best reachable byte balance
  first, then the fewest bytes for it;
* no rack holds more than ceil(RF / racks) replicas of a partition, and a partition spans
  min(RF, racks) racks;
* dead and decommissioned brokers end empty (they get no variable); excluded topics and
  leaderless partitions stay as they are (no variable either); a partition producing at
  or above the throttle may only drop replicas, never gain one.

Leaders are not in the model: they stay metadata-only and the preferred-leader goal runs on
the solved replica sets, as in the heuristic.

The solver stops at ``NODE_LIMIT`` branch-and-bound nodes, a deterministic limit, so the
same snapshot gives the same plan; ``TIME_LIMIT`` is only a guard against a pathological
instance (a plan cut by it is reported as such). It reports the incumbent's bytes and the
proven bound; the gap between them is the most the plan can be above the optimum.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from enum import Enum

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, OptimizeResult, milp
from scipy.sparse import coo_matrix

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


def solve(state: ClusterState) -> ExactResult:
    """Solve on a state whose targets are set and whose assignment is still the snapshot's."""
    started = time.monotonic()
    result = _solve(state, widen=0.0)
    if result.status is ExactStatus.INFEASIBLE:
        widen = _solve(state, widen=None)
        if widen.status is ExactStatus.NO_SOLUTION:
            # some assignment always exists once the band may widen: none found is the solver's limit
            result = widen
        elif widen.status in (ExactStatus.OPTIMAL, ExactStatus.FEASIBLE):
            # The widening found, plus slack for the solver's feasibility tolerance (1e-6 of the
            # model's unit, the largest partition): without it the rounded assignment that
            # reached the widening can miss the band by a few kilobytes and come out infeasible.
            slack = 1e-5 * max(1.0, float(state.sizes[~state.frozen].max(initial=1)))
            result = _solve(state, widen=widen.widening * (1 + 1e-6) + slack)
            if result.status in (ExactStatus.OPTIMAL, ExactStatus.FEASIBLE) and result.rows is not None:
                result = replace(result, widening=_widening_reached(state, result.rows))
    return replace(result, seconds=round(time.monotonic() - started, 3))


def _widening_reached(state: ClusterState, rows: dict[int, list[int]]) -> float:
    """How far (bytes) the solved assignment's loads lie outside the tolerance band, at most,
    computed exactly rather than read back from the solver's floating-point widening."""
    load = state.bytes.astype(np.float64).copy()
    for p, new in rows.items():
        size = float(state.sizes[p])
        for b in state.original_row(p):
            load[b] -= size
        for b in new:
            load[b] += size
    elig = np.asarray(state.eligible_idx, dtype=np.int64)
    target = state.byte_target[elig]
    excess = np.abs(load[elig] - target) - state.options.byte_tolerance * target
    return float(max(0.0, excess.max(initial=0.0)))


def _solve(state: ClusterState, widen: float | None) -> ExactResult:
    """``widen`` None: find the smallest band widening (bytes) any assignment reaches;
    else minimise bytes moved within the tolerance band widened by ``widen`` bytes."""
    strict = widen == 0.0
    parts = np.flatnonzero(~state.frozen)
    elig = np.asarray(state.eligible_idx, dtype=np.int64)
    n_p, n_e = len(parts), len(elig)
    if n_p == 0:
        return _nothing_movable(state, widen)
    nx = n_p * n_e
    col = {int(b): j for j, b in enumerate(elig.tolist())}
    R = state.R[parts]
    on = np.zeros((n_p, n_e), dtype=bool)  # replica there today
    for i in range(R.shape[1]):
        owners = R[:, i]
        ok = owners >= 0
        cols = np.asarray([col.get(int(b), -1) for b in owners[ok].tolist()], dtype=np.int64)
        keep = cols >= 0
        on[np.flatnonzero(ok)[keep], cols[keep]] = True
    sizes = state.sizes[parts].astype(np.float64)
    # Bytes in GiB inside the model so HiGHS's absolute tolerances stay meaningful.
    scale = max(1.0, float(sizes.max()) if n_p else 1.0)
    cost = np.where(on, 0.0, (sizes[:, None] + 1.0) / scale).ravel()
    upper_var = np.ones(nx)
    hot = state.hot[parts]
    upper_var[np.where(hot[:, None] & ~on, True, False).ravel()] = 0.0

    rows_i: list[np.ndarray] = []
    cols_i: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    lo_c: list[np.ndarray] = []
    hi_c: list[np.ndarray] = []
    n_rows = 0

    def add(r: np.ndarray, c: np.ndarray, v: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        nonlocal n_rows
        rows_i.append(r + n_rows)
        cols_i.append(c)
        vals.append(v)
        lo_c.append(lo)
        hi_c.append(hi)
        n_rows += len(lo)

    var = np.arange(nx).reshape(n_p, n_e)
    p_of = np.repeat(np.arange(n_p), n_e)
    b_of = np.tile(np.arange(n_e), n_p)
    rf = state.rf_target[parts].astype(np.float64)
    add(p_of, var.ravel(), np.ones(nx), rf, rf)
    # Frozen partitions still occupy the brokers they sit on.
    fixed = state.R[state.frozen]
    f_on = fixed >= 0
    f_owner = fixed[f_on]
    f_size = np.broadcast_to(state.sizes[state.frozen][:, None], fixed.shape)[f_on]
    fixed_count = np.bincount(f_owner, minlength=state.n_brokers)[elig].astype(np.float64)
    fixed_bytes = np.bincount(f_owner, weights=f_size, minlength=state.n_brokers)[elig].astype(np.float64)
    add(b_of, var.ravel(), np.ones(nx), state.lo[elig] - fixed_count, state.hi[elig] - fixed_count)
    tol = state.options.byte_tolerance
    low_b, high_b = state.byte_target[elig] * (1 - tol), state.byte_target[elig] * (1 + tol)
    load = np.repeat(sizes, n_e) / scale
    if widen is not None:
        add(b_of, var.ravel(), load, (low_b - widen - fixed_bytes) / scale, (high_b + widen - fixed_bytes) / scale)
    n_y = 0
    if state.has_racks and state.n_racks:
        rack = np.asarray([state.rack[b] for b in elig.tolist()], dtype=np.int64)
        racks = np.unique(rack)
        cap = -(-state.rf_target[parts] // state.n_racks)
        g_of = np.searchsorted(racks, rack)[b_of]
        # one row per (partition, rack): sum over the rack's brokers <= cap
        add(p_of * len(racks) + g_of, var.ravel(), np.ones(nx), np.zeros(n_p * len(racks)), np.repeat(cap, len(racks)).astype(np.float64))
        spread = np.flatnonzero(state.rf_target[parts] > 1)
        need = np.minimum(state.rf_target[parts], len(racks))
        wide = spread[need[spread] > 1]
        wide = wide[(cap[wide] > 1)]  # with cap 1 the cap alone forces RF distinct racks
        if len(wide):
            # y[p, g] <= sum_{b in g} x[p, b]; sum_g y[p, g] >= min(RF, racks)
            n_y = len(wide) * len(racks)
            y = nx + np.arange(n_y).reshape(len(wide), len(racks))
            for k, p in enumerate(wide.tolist()):
                for g in range(len(racks)):
                    members = var[p, np.flatnonzero(np.searchsorted(racks, rack) == g)]
                    add(np.zeros(len(members) + 1, dtype=np.int64), np.concatenate([[y[k, g]], members]),
                        np.concatenate([[1.0], -np.ones(len(members))]), np.asarray([-np.inf]), np.asarray([0.0]))
                add(np.zeros(len(racks), dtype=np.int64), y[k], np.ones(len(racks)), np.asarray([float(need[p])]), np.asarray([np.inf]))
    n_w = 0
    if widen is None:
        # one continuous w >= 0 widening every band: load - w <= high, load + w >= low; minimise w
        n_w = 1
        wcol = np.full(n_e, nx + n_y)
        brokers = np.arange(n_e)
        add(np.concatenate([b_of, brokers]), np.concatenate([var.ravel(), wcol]), np.concatenate([load, -np.ones(n_e)]),
            np.full(n_e, -np.inf), (high_b - fixed_bytes) / scale)
        add(np.concatenate([b_of, brokers]), np.concatenate([var.ravel(), wcol]), np.concatenate([load, np.ones(n_e)]),
            (low_b - fixed_bytes) / scale, np.full(n_e, np.inf))
    total = nx + n_y + n_w
    A = coo_matrix((np.concatenate(vals), (np.concatenate(rows_i), np.concatenate(cols_i))), shape=(n_rows, total)).tocsr()
    c = np.concatenate([cost if widen is not None else np.zeros(nx), np.zeros(n_y), np.ones(n_w)])
    ub = np.concatenate([upper_var, np.ones(n_y), np.full(n_w, np.inf)])
    res = _milp(c, LinearConstraint(A, np.concatenate(lo_c), np.concatenate(hi_c)),
                np.concatenate([np.ones(nx + n_y), np.zeros(n_w)]), Bounds(np.zeros(total), ub))
    time_limited = "time limit" in str(res.message).lower()
    bound = getattr(res, "mip_dual_bound", None)
    bound_bytes = max(0, int(np.floor(float(bound) * scale * (1 - 1e-9)))) if bound is not None and np.isfinite(bound) else 0
    if res.x is None:
        status = ExactStatus.INFEASIBLE if res.status == 2 else ExactStatus.NO_SOLUTION
        return ExactResult(status, {}, 0, bound_bytes, strict, 0.0, time_limited)
    optimal = res.status == 0
    if widen is None:
        return ExactResult(ExactStatus.OPTIMAL if optimal else ExactStatus.FEASIBLE, {}, 0, 0, False, 0.0, time_limited,
                           float(res.x[nx + n_y]) * scale)
    X = np.rint(res.x[:nx]).astype(bool).reshape(n_p, n_e)
    rows: dict[int, list[int]] = {}
    moved = 0
    for i in np.flatnonzero((X != on).any(axis=1)).tolist():
        p = int(parts[i])
        new = set(elig[X[i]].tolist())
        rows[p] = sorted(new)
        moved += int(state.sizes[p]) * len(new - set(state.original_row(p)))
    bound_bytes = min(bound_bytes, moved)
    optimal = optimal and moved - bound_bytes <= OPTIMAL_GAP * moved
    return ExactResult(ExactStatus.OPTIMAL if optimal else ExactStatus.FEASIBLE, rows, moved, bound_bytes,
                       strict, 0.0, time_limited, widen)


def _nothing_movable(state: ClusterState, widen: float | None) -> ExactResult:
    """Every partition is frozen (excluded or leaderless): the snapshot's assignment is the only one,
    so judge it directly; HiGHS refuses a model without variables."""
    counts = state.counts_reached()
    outside = _widening_reached(state, {})
    if widen is None:
        status = ExactStatus.OPTIMAL if counts else ExactStatus.INFEASIBLE
        return ExactResult(status, {}, 0, 0, False, 0.0, False, outside)
    status = ExactStatus.OPTIMAL if counts and outside <= widen else ExactStatus.INFEASIBLE
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
