"""The exact mode: the fewest bytes moved, as a MILP solved by HiGHS (through highspy).

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
first solve finds the smallest total W by which the brokers' bands must widen (each broker
its own widening: the bytes it lies outside its band) that some assignment reaches, and the
bytes are minimised among the assignments whose widenings sum to at most W: the best reachable
balance first (brokers that can reach their band still do), then the fewest bytes for it.

Leaders are not in the model: they stay metadata-only and the leader goals run on the
solved replica sets, as in the heuristic.

The solver is bounded by work, never by the clock: ``NODE_LIMIT`` branch-and-bound nodes, one
thread, a fixed random seed, so the same snapshot gives the same plan on a quiet machine and a
busy one. It starts from the heuristic's plan wherever that plan meets the model's rules (and the
bytes model after a widening from the widening model's own assignment), so its plan is never
worse than that start; its plan is then polished by exchanges between pairs of brokers, each a
small model solved within ``POLISH_NODE_LIMIT`` nodes. ``SAFETY_SECONDS`` is only a guard: a solve
still running then fails the plan with one error line instead of handing back whatever the clock
cut. It reports the plan's bytes and the proven bound; the gap between them is the most the plan
can be above the optimum.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import Enum

import highspy
import numpy as np
from scipy.sparse import coo_matrix, csr_matrix, vstack

from kafka_rebalance.errors import PlanError
from kafka_rebalance.planner.goals.base import Goal
from kafka_rebalance.planner.goals.registry import replica_goals
from kafka_rebalance.planner.judge import judge, state_view
from kafka_rebalance.planner.state import ClusterState

# `auto` solves exactly up to this many variables (partitions x eligible brokers): about
# 800 partitions on 12 brokers, solved within the node limit in seconds to tens of seconds of
# CPU (see docs/PLANNER.md). `--optimizer exact` goes up to HARD_LIMIT;
# beyond it the model alone would not fit the machine.
MAX_VARIABLES = 10_000
HARD_LIMIT = 200_000
NODE_LIMIT = 100
# Only a guard: a solve still running after this long fails the plan (one PlanError line), for a
# plan cut by time would depend on the machine's load. Under `auto` the node limit ends every
# model of at most MAX_VARIABLES long before it, even on a busy machine: the slowest measured,
# 600 heavy-tailed partitions on 9 brokers, takes 25 s of CPU, 115 s beside two CPU burners on 2 cores.
SAFETY_SECONDS = 600.0
RANDOM_SEED = 0
# The exchanges between two brokers that polish the solved plan (see _polish).
POLISH_PASSES = 3
POLISH_NODE_LIMIT = 100
# Bytes moved within this factor of the proven fewest count as the fewest: inside it, fewer
# replica moves decide (each move has a fixed cost of its own: metadata, a fetcher, joining the ISR).
BYTES_PROMISE = 1.05
# HiGHS stops once its plan is proven within 1 % of the optimum: the bytes goal is 5 %, and
# closing the last percent costs several times the solve (3 s against 12 s at 200 x 9).
MIP_GAP = 1e-2
# Only a plan proven within this relative gap is called optimal; any other is "feasible".
OPTIMAL_GAP = 1e-4
# HiGHS's options: bounded by work (branch-and-bound nodes), on one thread with a fixed seed, so
# the same model gives the same answer on a quiet machine and a busy one.
OPTIONS: dict[str, bool | int | float | str] = {
    "output_flag": False,
    "threads": 1,
    "random_seed": RANDOM_SEED,
    "mip_rel_gap": MIP_GAP,
}


class ExactStatus(str, Enum):
    OPTIMAL = "optimal"  # proven: no plan reaching the same balance moves 0.01 % fewer bytes
    FEASIBLE = "feasible"  # a plan and a proven bound (within MIP_GAP, or cut by the node limit)
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
    seconds: float  # wall-clock time of the solve: for logs and benchmarks, never in the plan
    work_limited: bool  # the node limit ended the search before the plan was proven within MIP_GAP
    widening: float = 0.0  # bytes the bands had to be widened by, summed over brokers (0: the bands themselves)
    # per eligible broker (state.eligible_idx order), bytes it lies outside its band; () when none was widened
    widenings: tuple[float, ...] = field(default=(), compare=False, repr=False)
    # the widening model's assignment (partition -> broker indices, those that change), which starts the
    # bytes model within that widening; not compared: many assignments reach the same widening
    reached: dict[int, list[int]] | None = field(default=None, compare=False, repr=False)


def variables(state: ClusterState) -> int:
    return int((~state.frozen).sum()) * len(state.eligible_idx)


def solve(state: ClusterState, goals: Sequence[Goal] | None = None,
          start: Sequence[Sequence[int]] | None = None) -> ExactResult:  # fmt: skip
    """Solve on a state whose targets are set and whose assignment is still the snapshot's, under the
    constraints of ``goals`` (the selected replica goals, hard ones included; every registered one when None).

    ``start``: every partition's broker indices in another plan (the heuristic's), handed to the
    solver as its first incumbent in each model it satisfies, so the solved plan is never worse.
    """
    goals = replica_goals() if goals is None else goals
    started = time.monotonic()
    starts = () if start is None else (start,)
    result = _solve(state, widen=0.0, goals=goals, starts=starts)
    if result.status is ExactStatus.INFEASIBLE:
        widen = _solve(state, widen=None, goals=goals, starts=starts)
        if widen.status is ExactStatus.NO_SOLUTION:
            # some assignment always exists once the band may widen: none found is the solver's limit
            result = widen
        elif widen.status in (ExactStatus.OPTIMAL, ExactStatus.FEASIBLE):
            # The widening found, plus slack for the solver's feasibility tolerance (1e-6 of the
            # model's unit, the largest partition): without it the rounded assignment that
            # reached the widening can miss the band by a few kilobytes and come out infeasible.
            slack = 1e-5 * max(1.0, float(state.sizes[~state.frozen].max(initial=1))) * len(state.eligible_idx)
            reached = widen.reached or {}
            starts = (*starts, [reached.get(p, state.row(p)) for p in range(state.n_parts)])
            result = _solve(state, widen=widen.widening * (1 + 1e-6) + slack, goals=goals, starts=starts)
            if result.status in (ExactStatus.OPTIMAL, ExactStatus.FEASIBLE) and result.rows is not None:
                outside = _widening_reached(state, result.rows, goals)
                result = replace(result, widening=float(outside.sum()), widenings=tuple(float(w) for w in outside))
            # a widening found by a search the node limit ended may not be the smallest
            result = replace(result, work_limited=result.work_limited or widen.work_limited)
    return replace(result, seconds=round(time.monotonic() - started, 3))


def _widening_reached(state: ClusterState, rows: dict[int, list[int]], goals: Sequence[Goal] | None = None) -> np.ndarray:
    """How far (bytes) each eligible broker lies outside the goals' bands once ``rows`` changed,
    computed exactly rather than read back from the solver's floating-point widenings."""
    load = state.bytes.astype(np.float64).copy()
    for p, new in rows.items():
        size = float(state.sizes[p])
        for b in state.original_row(p):
            load[b] -= size
        for b in new:
            load[b] += size
    outside = np.zeros(len(state.eligible_idx))
    for g in replica_goals() if goals is None else goals:
        outside = np.maximum(outside, g.band_excess(state, load))
    return outside


class ExactModel:
    """The MILP under construction: one binary ``x[p, b]`` per movable partition and eligible
    broker, the objective (bytes new on their broker, plus one byte per new replica), and the
    rows the goals add through ``exact_terms``. Bytes are in units of the largest partition
    inside the model, so HiGHS's absolute tolerances stay meaningful.

    ``widen`` is the byte band's state for the goal that owns a band: the bytes by which the
    brokers' bands may widen, summed over brokers (0: the bands themselves), or None when the
    solve looks for the smallest such sum some assignment reaches (then it is the objective).
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
        self.widening_cols: np.ndarray | None = None  # one per eligible broker, when widen is None
        # indicator columns (a rack spanned) and the x columns they sum: a start sets each to min(1, sum)
        self.indicators: list[tuple[int, np.ndarray]] = []
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

    def indicator(self, column: int, members: np.ndarray) -> None:
        """Column ``column`` may be 1 only if one of ``members`` is (its row is the goal's): what a
        start assignment sets it to."""
        self.indicators.append((column, members))

    def forbid(self, mask: np.ndarray) -> None:
        """x[p, b] = 0 wherever ``mask`` (partition x eligible broker) holds."""
        self._upper[0][mask.ravel()] = 0.0

    def arrays(self) -> tuple[np.ndarray, csr_matrix, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """cost, A, row bounds, column upper bounds and the integrality mask, as HiGHS takes them."""
        A = coo_matrix((np.concatenate(self._vals), (np.concatenate(self._rows), np.concatenate(self._cols))),
                       shape=(self.n_rows, self.n_cols)).tocsr()  # fmt: skip
        return (np.concatenate(self._cost), A, np.concatenate(self._lo), np.concatenate(self._hi),
                np.concatenate(self._upper), np.concatenate(self._integer) > 0)


def _solve(state: ClusterState, widen: float | None, goals: Sequence[Goal] | None = None,
           starts: Sequence[Sequence[Sequence[int]]] = ()) -> ExactResult:  # fmt: skip
    """``widen`` None: find the smallest total band widening (bytes, summed over the eligible brokers)
    any assignment reaches; else minimise bytes moved with the bands widened by at most ``widen``
    bytes in all. The constraints are
    the goals' own (``Goal.exact_terms``). ``starts``: assignments (every partition's broker
    indices) the solver may start from: the cheapest of those that meet every constraint."""
    strict = widen == 0.0
    goals = replica_goals() if goals is None else goals
    if not (~state.frozen).any():
        return _nothing_movable(state, goals, widen)
    model = ExactModel(state, widen)
    for goal in goals:
        goal.exact_terms(model)
    if widen is None and model.widening_cols is None:
        # no goal has a band to widen: the rules themselves cannot all be met
        return ExactResult(ExactStatus.INFEASIBLE, {}, 0, 0, False, 0.0, False)
    c, A, row_lo, row_hi, ub, integer = model.arrays()
    x0 = None
    for start in starts:
        x = _start_vector(model, start, A, row_lo, row_hi, ub)
        if x is not None and (x0 is None or float(c @ x) < float(c @ x0)):
            x0 = x
    run = _milp(state, c, A, row_lo, row_hi, np.zeros(len(c)), ub, integer, x0, NODE_LIMIT)
    if run.x is not None and widen is not None:
        run = replace(run, x=_polish(state, model, c, A, row_lo, row_hi, ub, integer, run.x))
    nx, scale, parts, elig = model.nx, model.scale, model.parts, model.elig
    bound_bytes = max(0, int(np.floor(run.bound * scale * (1 - 1e-9)))) if run.bound is not None and np.isfinite(run.bound) else 0
    if run.x is not None and widen is not None:
        run = replace(run, x=_fewer_moves(state, model, A, row_lo, row_hi, ub, integer, run.x, bound_bytes))
    if run.x is None:
        status = ExactStatus.INFEASIBLE if run.infeasible else ExactStatus.NO_SOLUTION
        return ExactResult(status, {}, 0, bound_bytes, strict, 0.0, run.work_limited)
    X = np.rint(run.x[:nx]).astype(bool).reshape(model.n_p, model.n_e)
    rows: dict[int, list[int]] = {}
    moved = 0
    for i in np.flatnonzero((X != model.on).any(axis=1)).tolist():
        p = int(parts[i])
        new = set(elig[X[i]].tolist())
        rows[p] = sorted(new)
        moved += int(state.sizes[p]) * len(new - set(state.original_row(p)))
    if widen is None:
        assert model.widening_cols is not None
        found = np.maximum(0.0, run.x[model.widening_cols]) * scale
        return ExactResult(ExactStatus.OPTIMAL if run.optimal else ExactStatus.FEASIBLE, {}, 0, 0, False, 0.0,
                           run.work_limited, float(found.sum()), tuple(float(w) for w in found), reached=rows)
    bound_bytes = min(bound_bytes, moved)
    optimal = run.optimal and moved - bound_bytes <= OPTIMAL_GAP * moved
    return ExactResult(ExactStatus.OPTIMAL if optimal else ExactStatus.FEASIBLE, rows, moved, bound_bytes,
                       strict, 0.0, run.work_limited, widen)


def _fewer_moves(state: ClusterState, model: ExactModel, A: csr_matrix, row_lo: np.ndarray, row_hi: np.ndarray,
                 ub: np.ndarray, integer: np.ndarray, x: np.ndarray, bound_bytes: int) -> np.ndarray:
    """The fewest new replicas among the assignments within the bytes promise: bytes at most
    BYTES_PROMISE times the proven fewest (``bound_bytes``), or ``x``'s own bytes if more. Bytes are
    what the operator waits for, but every move has a fixed cost too (metadata, a fetcher, joining
    the ISR), and the bytes model alone spends dozens of extra moves to save a fraction of a percent.
    Started from ``x`` (it meets the budget), bounded by the same node limit; ``x`` is kept unless
    the answer moves strictly fewer replicas. Among equal counts, fewer bytes (a weight of 1e-3 per
    largest partition, less than one move in all)."""
    nx, n = model.nx, len(x)
    new = np.zeros(n)
    new[:nx] = (~model.on).ravel()
    byte_cost = np.zeros(n)
    byte_cost[:nx] = np.where(model.on, 0.0, model.sizes[:, None] / model.scale).ravel()
    budget = max(float(byte_cost @ x), BYTES_PROMISE * bound_bytes / model.scale)
    cols = np.flatnonzero(byte_cost)
    A2 = vstack([A, csr_matrix((byte_cost[cols], (np.zeros(len(cols), dtype=np.int64), cols)), shape=(1, n))]).tocsr()
    lo2 = np.append(row_lo, -np.inf)
    hi2 = np.append(row_hi, budget * (1 + 1e-9))
    run = _milp(state, new + 1e-3 * byte_cost, A2, lo2, hi2, np.zeros(n), ub, integer, x, NODE_LIMIT)
    if run.x is None:
        return x
    found = np.where(integer, np.rint(run.x), run.x)
    return found if float(new @ found) < float(new @ x) - 0.5 else x


def _start_vector(model: ExactModel, start: Sequence[Sequence[int]], A: csr_matrix, row_lo: np.ndarray,
                  row_hi: np.ndarray, ub: np.ndarray) -> np.ndarray | None:
    """The model's variables for the assignment ``start`` (x, each indicator, the widening w), or None
    when that assignment breaks one of the model's constraints (a replica left on a broker without a
    variable, a count, a band, a rack): HiGHS is only handed a start it can keep."""
    col = {int(b): j for j, b in enumerate(model.elig.tolist())}
    nx = model.nx
    x = np.zeros(model.n_cols)
    for i, p in enumerate(model.parts.tolist()):
        for b in start[p]:
            j = col.get(int(b))
            if j is None:
                return None
            x[model.var[i, j]] = 1.0
    for y, members in model.indicators:
        x[y] = min(1.0, float(x[members].sum()))
    if model.widening_cols is not None:
        # each w_b is its broker's miss of its band: the smallest w_b its two rows allow
        for w in model.widening_cols.tolist():
            w_rows = A[:, w].toarray().ravel() != 0
            load = A[w_rows][:, :nx] @ x[:nx]
            x[w] = max(0.0, float(np.max(np.where(np.isfinite(row_hi[w_rows]), load - row_hi[w_rows], row_lo[w_rows] - load))))
    rows = A @ x
    tol = 1e-9 * (1.0 + np.abs(rows))
    if (x > ub).any() or (rows < row_lo - tol).any() or (rows > row_hi + tol).any():
        return None
    return x


def _nothing_movable(state: ClusterState, goals: Sequence[Goal], widen: float | None) -> ExactResult:
    """Every partition is frozen (excluded or leaderless): the snapshot's assignment is the only one,
    so the goals judge it directly; HiGHS refuses a model without variables."""
    outside = _widening_reached(state, {}, goals)
    # every rule but the bands (judged by ``outside``)
    rules = all(c.reached for c in judge(goals, state_view(state, byte_slack=math.inf)))
    per_broker = tuple(float(w) for w in outside)
    if widen is None:
        status = ExactStatus.OPTIMAL if rules else ExactStatus.INFEASIBLE
        return ExactResult(status, {}, 0, 0, False, 0.0, False, float(outside.sum()), per_broker)
    status = ExactStatus.OPTIMAL if rules and outside.sum() <= widen else ExactStatus.INFEASIBLE
    return ExactResult(status, {}, 0, 0, widen == 0.0, 0.0, False, widen, per_broker if widen else ())


@dataclass(frozen=True)
class _Run:
    """What HiGHS answered: its best assignment (None: none found), whether it is proven within
    MIP_GAP, whether no assignment exists, whether the node limit cut the search, its dual bound."""

    x: np.ndarray | None
    optimal: bool
    infeasible: bool
    work_limited: bool
    bound: float | None


_FAILED = (highspy.HighsModelStatus.kSolveError, highspy.HighsModelStatus.kPresolveError,
           highspy.HighsModelStatus.kPostsolveError)


def _polish(state: ClusterState, model: ExactModel, c: np.ndarray, A: csr_matrix, row_lo: np.ndarray, row_hi: np.ndarray,
            ub: np.ndarray, integer: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Improve a solved assignment ``x`` of the bytes model by exchanges between two brokers: for each
    pair of eligible brokers in turn, every variable stays fixed but where the partitions on either of
    the two sit among those two (and the rack-spread indicators), and HiGHS finds the fewest bytes of
    that small model, ``x`` being its first incumbent. The branch-and-bound's incumbent on a model of
    this size can lie well above the optimum where its bound does not; these exchanges (a replica sent
    back where it was, another sent in its place, any number of them between the two brokers) close
    most of that. Up to POLISH_PASSES passes over the pairs, fewer once a pass changes nothing; each
    small model bounded by POLISH_NODE_LIMIT nodes: work, not time. ``on``: the snapshot's placement
    (partition x broker); a pair is only tried when it can save bytes, i.e. some partition has a new
    replica on one of the two and could go back to the other, where it was."""
    var, on = model.var, model.on
    n_e = var.shape[1]
    x = np.where(integer, np.rint(x), x)
    free_y = integer.copy()  # the integer columns beyond the x's: the goals' indicators
    free_y[: var.size] = False
    for _ in range(POLISH_PASSES):
        changed = False
        for a in range(n_e):
            for b in range(a + 1, n_e):
                X = x[: var.size].reshape(var.shape) > 0.5
                back = (X[:, a] & ~on[:, a] & ~X[:, b] & on[:, b]) | (X[:, b] & ~on[:, b] & ~X[:, a] & on[:, a])
                if not back.any():
                    continue  # every exchange between the two moves as many bytes or more
                here = np.flatnonzero(X[:, a] | X[:, b])
                free = free_y.copy()
                free[var[here, a]] = free[var[here, b]] = True
                lo = np.where(free, 0.0, x)
                hi = np.where(free, ub, x)
                run = _milp(state, c, A, row_lo, row_hi, lo, hi, integer, x, POLISH_NODE_LIMIT)
                if run.x is not None and float(c @ run.x) < float(c @ x) - 1e-9 * (1.0 + abs(float(c @ x))):
                    x = np.where(integer, np.rint(run.x), run.x)
                    changed = True
        if not changed:
            break
    return x


def _milp(state: ClusterState, c: np.ndarray, A: csr_matrix, row_lo: np.ndarray, row_hi: np.ndarray, col_lo: np.ndarray,
          col_hi: np.ndarray, integer: np.ndarray, x0: np.ndarray | None, node_limit: int) -> _Run:
    """HiGHS on min c.x, row_lo <= A x <= row_hi, col_lo <= x <= col_hi, the variables of ``integer``
    integer; ``x0`` its first incumbent. Bounded by work only (``node_limit`` nodes, see ``OPTIONS``); a solve that runs past
    SAFETY_SECONDS is refused, never cut. With presolve, and once more without it when HiGHS itself
    fails: its presolve ended some small feasible models in "Solve error", e.g. the widening model of
    five single-replica partitions of 3, 25, 23, 6 and 8 GiB on four brokers, which solves without it."""
    for presolve in ("on", "off"):
        h = highspy.Highs()
        for name, value in {**OPTIONS, "mip_max_nodes": node_limit, "presolve": presolve, "time_limit": SAFETY_SECONDS}.items():
            h.setOptionValue(name, value)
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = A.shape[1], A.shape[0]
        lp.col_cost_, lp.col_lower_, lp.col_upper_ = c, col_lo, col_hi
        lp.row_lower_, lp.row_upper_ = row_lo, row_hi
        lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
        lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = A.shape[1], A.shape[0]
        lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
        lp.integrality_ = [highspy.HighsVarType.kInteger if i else highspy.HighsVarType.kContinuous for i in integer.tolist()]
        h.passModel(lp)
        if x0 is not None:
            solution = highspy.HighsSolution()
            solution.col_value = x0.tolist()
            solution.value_valid = True
            h.setSolution(solution)
        h.run()
        status = h.getModelStatus()
        if status not in _FAILED:
            break
    if status == highspy.HighsModelStatus.kTimeLimit:
        raise PlanError(
            f"--optimizer {state.options.optimizer}: the solver ran past its {SAFETY_SECONDS:g} s safety limit on "
            f"{state.snapshot.cluster_id}; a plan cut by time would depend on machine load, so none is made; "
            "use --optimizer heuristic"
        )
    info = h.getInfo()
    found = info.primal_solution_status == 2  # kSolutionStatusFeasible
    x = np.asarray(h.getSolution().col_value, dtype=np.float64) if found else None
    bound = float(info.mip_dual_bound) if found or status == highspy.HighsModelStatus.kSolutionLimit else None
    return _Run(x, status == highspy.HighsModelStatus.kOptimal, status == highspy.HighsModelStatus.kInfeasible,
                status == highspy.HighsModelStatus.kSolutionLimit, bound)


def solve_milp(state: ClusterState, c: np.ndarray, A: csr_matrix, row_lo: np.ndarray, row_hi: np.ndarray,
               col_lo: np.ndarray, col_hi: np.ndarray, integer: np.ndarray, x0: np.ndarray | None) -> _Run:
    """``_milp`` with this module's options and node limit, for the planner's other small models."""
    return _milp(state, c, A, row_lo, row_hi, col_lo, col_hi, integer, x0, NODE_LIMIT)


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
