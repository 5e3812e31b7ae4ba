"""The bytes goal's actions, compiled (numba): ``ByteBalanceGoal._run``.

The same moves, in the same order, as the goal's Python methods (``_run``, ``_improve``, ``_reach``, ``_single``,
``_swap``, ``_pick``, ``_arrival``), with each broker's ``DonorIndex`` searched as arrays (donor_arrays.py) and the
goal's ``ArrivalIndex`` of each broker held as a side list of the same form. At 400 brokers / 1M partitions the goal
made about 72,000 actions, mostly swaps, each searching two or three indexes: 12 s of Python.

The kernel reads the vetoes the goals before it keep in arrays (``compiled_state``); where another veto holds, the
move cap is set, or an index holds parked replicas, the goal runs its Python methods (``donor_arrays.kernel_reads``).
``tests/planner/test_goals_byte_balance_moves.py`` holds the two to the same moves and the same indexes.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numba import njit, types
from numba.typed import List

from kafka_rebalance.planner.goals.byte_focus import next_focus
from kafka_rebalance.planner.goals.compiled_state import board_arrays, counts_ok, kernel_records, veto_arrays
from kafka_rebalance.planner.goals.donor_arrays import (
    AN,
    AP,
    F_BAND,
    F_BEFORE,
    F_BH,
    F_BR,
    F_SQ,
    FED,
    FIT,
    O_BETTER,
    O_BOUND,
    O_EXCL,
    O_EXCL2,
    O_NEUTRAL,
    SN,
    SP,
    SS,
    created,
    empty_indexes,
    exported,
    find,
    index_record,
    indexes_of,
    insert,
    leave_indexes,
    move_tracked,
    nearest,
    original_movable,
    outside,
    pairs,
    search_params,
    side_lists_in,
    slot,
)

if TYPE_CHECKING:
    from kafka_rebalance.planner.goals.byte_balance import ArrivalIndex
    from kafka_rebalance.planner.state import ClusterState

# ``knobs``: the goal's constants (passed, not read as globals: numba would keep a global's value in its cache)
K_PARTNERS, K_SEARCH, K_COSTLY, K_ROUNDS = range(4)


# ---------------------------------------------------------------------------------------------------- arrivals


@njit(cache=True)
def guard_each(now_a: float, now_r: float, band: np.ndarray, limit_a: float, limit_r: float,
               moved: np.ndarray) -> np.ndarray:  # fmt: skip
    """``ByteGuard.allows_each`` once the guard holds: per x of ``moved``, do a's bytes less x and r's plus x end no
    further outside the band (``band``: a's top and bottom, r's) than ``limit_a``/``limit_r`` (the same floats)."""
    out = np.empty(moved.shape[0], np.bool_)
    up_a, low_a, up_r, low_r = band[0], band[1], band[2], band[3]
    for i in range(moved.shape[0]):
        x = now_a + -moved[i]
        y = now_r + moved[i]
        out[i] = max(0.0, max(x - up_a, low_a - x)) <= limit_a and max(0.0, max(y - up_r, low_r - y)) <= limit_r
    return out


@njit(cache=True)
def _feed(ax: tuple, ix: tuple, b: int, sizes: np.ndarray) -> None:
    """``ArrivalIndex._feed``: the replicas moved onto b since join b's arrival list (its side list in ``ax``), once."""
    arrived = ix[AP][b]
    for i in range(ax[FED][b], ix[AN][b]):
        p = arrived[i]
        k = slot(ax[SP][b], ax[SS][b], ax[SN][b], sizes[p], p)
        if k < ax[SN][b] and ax[SP][b][k] == p:
            continue  # listed already (``seen``)
        insert(ax, True, b, sizes[p], p)
    ax[FED][b] = ix[AN][b]


@njit(cache=True)
def _arrival(x: int, desired: float, above: float, below: float, okp: np.ndarray, fit: np.ndarray, ix: tuple,
             ax: tuple, ctx: tuple, knobs: np.ndarray, scratch: np.ndarray) -> int:  # fmt: skip
    """``ByteBalanceGoal._arrival`` (``ArrivalIndex.find``): the arrival still on x nearest ``desired`` that the search
    accepts (-1: none); it stays listed."""
    _feed(ax, ix, x, ctx[1][4])
    j = nearest(ax, x, True, desired, above, below, knobs[K_SEARCH], True, okp, fit, ctx, scratch, False)
    return ax[SP][x][j] if j >= 0 else -1


# ---------------------------------------------------------------------------------------------------- the goal


@njit(cache=True)
def _reach(h: int, r: int, bh: float, br: float, upper: np.ndarray, lower: np.ndarray) -> tuple[float, float]:
    """``ByteBalanceGoal._reach``: the open interval of sizes moved from h to r that lower the two brokers' distance
    outside their bands (lo >= hi: none)."""
    before = outside(bh, upper[h], lower[h]) + outside(br, upper[r], lower[r])
    goal = before - 1e-9
    edges = np.array([bh - upper[h], bh - lower[h], upper[r] - br, lower[r] - br])
    kinks = np.unique(edges[edges > 0])
    m = kinks.shape[0]
    points = np.empty(m + 2)
    values = np.empty(m + 2)
    points[0], values[0] = 0.0, before
    for i in range(m):
        x = kinks[i]
        points[i + 1] = x
        values[i + 1] = outside(bh - x, upper[h], lower[h]) + outside(br + x, upper[r], lower[r])
    last, f_last = float(points[m]), float(values[m])
    step = max(1.0, last)
    ahead = last + step
    slope = (outside(bh - ahead, upper[h], lower[h]) + outside(br + ahead, upper[r], lower[r]) - f_last) / step
    if f_last < goal and slope > 0:
        points[m + 1] = last + (goal - f_last) / slope
        values[m + 1] = goal
    else:
        points[m + 1] = last + step
        x = points[m + 1]
        values[m + 1] = outside(bh - x, upper[h], lower[h]) + outside(br + x, upper[r], lower[r])
    lo, hi = math.inf, -math.inf
    for i in range(m + 1):
        s0, s1, f0, f1 = points[i], points[i + 1], values[i], values[i + 1]
        if f0 >= goal and f1 >= goal:
            continue
        a = s0 if f0 < goal else s0 + (f0 - goal) / (f0 - f1) * (s1 - s0)
        b = s1 if f1 < goal else s0 + (goal - f0) / (f1 - f0) * (s1 - s0)
        lo, hi = min(lo, a), max(hi, b)
    return lo, hi


@njit(cache=True)
def _pick(x: int, desired: float, above: float, below: float, okp: np.ndarray, fit: np.ndarray, ix: tuple,
          ax: tuple, ctx: tuple, shape: tuple, knobs: np.ndarray, scratch: np.ndarray) -> int:  # fmt: skip
    """``ByteBalanceGoal._pick``: x's unchanged replicas, then its arrivals, then any (-1: none found)."""
    created(ix, x, shape[0], shape[1], ctx[1][4])
    limit = knobs[K_SEARCH]
    p = find(ix, x, desired, above, below, limit, False, okp, fit, ctx, scratch)
    if p < 0:
        p = _arrival(x, desired, above, below, okp, fit, ix, ax, ctx, knobs, scratch)
    if p < 0:
        p = find(ix, x, desired, above, below, limit, True, okp, fit, ctx, scratch)
    return p


@njit(cache=True)
def _single(h: int, r: int, desired: float, above: float, below: float, fit: np.ndarray, ix: tuple, ax: tuple,
            ctx: tuple, shape: tuple, knobs: np.ndarray, moves: List, scratch: np.ndarray) -> bool:  # fmt: skip
    """``ByteBalanceGoal._single``: one replica from h to r."""
    flags, board, veto, dirs = ctx[0], ctx[1], ctx[2], ctx[3]
    if not counts_ok(h, r, flags, board, veto):
        return False
    rack = board[8]
    okp = search_params(h, r)
    okp[O_BOUND] = rack[h] != rack[r] and rack[r] >= 0
    okp[O_BETTER] = 1
    fit[F_SQ] = 0.0
    p = _pick(h, desired, above, below, okp, fit, ix, ax, ctx, shape, knobs, scratch)
    if p < 0:
        return False
    move_tracked(p, h, r, board, dirs, ix, moves)
    return True


@njit(cache=True)
def _swap(h: int, r: int, desired: float, above: float, below: float, fit: np.ndarray, copies: float, ix: tuple,
          ax: tuple, ctx: tuple, shape: tuple, knobs: np.ndarray, costly: np.ndarray, moves: List,
          scratch: np.ndarray) -> bool:  # fmt: skip
    """``ByteBalanceGoal._swap``: a replica from h to r and a smaller one from r to h, counts unchanged (``copies``:
    ``SWAP_COPIES``)."""
    board, dirs = ctx[1], ctx[3]
    sizes, touched, rack = board[4], board[3], board[8]
    limit = knobs[K_SEARCH]
    okq = search_params(r, h)
    okq[O_BOUND] = rack[r] != rack[h] and rack[h] >= 0
    okq[O_NEUTRAL] = 1
    created(ix, r, shape[0], shape[1], sizes)
    taken = np.full(2, -1, np.int64)  # found in r's index, to put back unless moved
    smalls = np.full(3, -1, np.int64)
    n_taken = n_small = 0
    q = find(ix, r, 0.0, -math.inf, math.inf, limit, False, okq, fit, ctx, scratch)
    if q >= 0:
        taken[n_taken], smalls[n_small] = q, q
        n_taken += 1
        n_small += 1
    a = _arrival(r, 0.0, -math.inf, math.inf, okq, fit, ix, ax, ctx, knobs, scratch)
    if a >= 0 and (n_small == 0 or sizes[a] < sizes[smalls[n_small - 1]]):
        smalls[n_small] = a
        n_small += 1
    okq[O_EXCL], okq[O_EXCL2] = smalls[0], smalls[1]
    t = find(ix, r, 0.0, -math.inf, math.inf, limit, True, okq, fit, ctx, scratch)
    if t >= 0:
        taken[n_taken] = t
        n_taken += 1
        least = sizes[t] + 1
        for i in range(n_small):
            least = min(least, sizes[smalls[i]])
        if n_small == 0 or sizes[t] < least:
            smalls[n_small] = t
            n_small += 1
    okp = search_params(h, r)
    okp[O_BOUND] = rack[h] != rack[r] and rack[r] >= 0
    okp[O_BETTER] = 1
    okp[O_NEUTRAL] = 1
    done = False
    for i in range(n_small):
        q = smalls[i]
        sq = float(sizes[q])
        # cheap: sizes[p] - sq >= (sizes[p] + sq) / copies (the window is open: one byte wider)
        cheap = sq * (copies + 1) / (copies - 1) - 1.0
        costly_ok = costly[h] < knobs[K_COSTLY] and costly[r] < knobs[K_COSTLY]
        okp[O_EXCL] = q
        fit[F_SQ] = sq
        lo = above + sq if costly_ok else max(above + sq, cheap)
        p = _pick(h, desired + sq, lo, below + sq, okp, fit, ix, ax, ctx, shape, knobs, scratch)
        if p >= 0:
            if float(sizes[p]) <= cheap:
                costly[h] += 1
                costly[r] += 1
            move_tracked(p, h, r, board, dirs, ix, moves)
            move_tracked(q, r, h, board, dirs, ix, moves)
            for k in range(n_taken):
                if taken[k] == q:
                    taken[k] = -1
            done = True
            break
    for k in range(n_taken):
        x = taken[k]
        if x >= 0:
            insert(ix, bool(touched[x]), r, sizes[x], x)  # ``DonorIndex.put_back``: still on r
    return done


@njit(cache=True)
def _improve(focus: int, partners: np.ndarray, heavy: bool, band: tuple, ix: tuple, ax: tuple, ctx: tuple,
             shape: tuple, knobs: np.ndarray, costly: np.ndarray, moves: List, scratch: np.ndarray) -> bool:  # fmt: skip
    """``ByteBalanceGoal._improve``: the first partner with which a single move or a swap brings both closer."""
    nbytes = ctx[1][6]
    upper, lower, target, copies = band[0], band[1], band[2], band[3][0]
    fit = np.zeros(FIT)
    for other in partners:
        h, r = (focus, other) if heavy else (other, focus)
        bh, br = float(nbytes[h]), float(nbytes[r])
        th, tr = target[h], target[r]
        if bh - th <= br - tr:
            continue
        lo, hi = _reach(h, r, bh, br, upper, lower)
        if not lo < hi:
            continue
        before = outside(bh, upper[h], lower[h]) + outside(br, upper[r], lower[r])
        desired = max(0.0, min(bh - th, tr - br))
        if desired == 0.0:  # (Python's ``or``: a zero is falsy)
            desired = ((bh - th) - (br - tr)) / 2
        fit[F_BH], fit[F_BR], fit[F_BEFORE] = bh, br, before
        fit[F_BAND], fit[F_BAND + 1], fit[F_BAND + 2], fit[F_BAND + 3] = upper[h], lower[h], upper[r], lower[r]
        # ``better`` judges; the window (one byte wider, for rounding) only ends searches
        if _single(h, r, desired, lo - 1.0, hi + 1.0, fit, ix, ax, ctx, shape, knobs, moves, scratch):
            return True
        if _swap(h, r, desired, lo - 1.0, hi + 1.0, fit, copies, ix, ax, ctx, shape, knobs, costly, moves, scratch):
            return True
    return False


@njit(cache=True)
def byte_moves(ctx: tuple, runs: np.ndarray, held: np.ndarray, target: np.ndarray, copies: float, pinned: bool,
               has_racks: bool, shape: tuple, ix: tuple, ax: tuple, knobs: np.ndarray,
               costly: np.ndarray) -> np.ndarray:  # fmt: skip
    """``ByteBalanceGoal._run`` once per band of ``runs`` (``runs[k]``: the upper and lower bytes per broker;
    ``held[k]``: the brokers proven out of reach above their band): the moves made, in order, as rows of (partition,
    from, to). ``ctx``: flags, board, vetoes and dirs (copies: changed here), ``rack_bound`` and a placeholder;
    ``shape``: each broker's original movable replicas (start, parts); ``ix``, ``ax``: the donor indexes and the
    arrival lists (changed here); ``costly``: the costly swaps each broker took part in (changed here)."""
    board = ctx[1]
    nbytes, rack, elig = board[6], board[8], board[12]
    moves = List.empty_list(types.int64)
    scratch = np.empty(max(1, shape[1].shape[0] + board[0].shape[0]), np.int64)
    found = np.empty(2 * knobs[K_PARTNERS], np.int64)
    stuck = np.zeros(nbytes.shape[0], np.bool_)
    for k in range(runs.shape[0]):
        upper, lower = runs[k, 0], runs[k, 1]
        band = (upper, lower, target, np.array([copies]))
        up_e, lo_e = upper[elig], lower[elig]
        stuck[:] = False
        acted = False
        for _ in range(knobs[K_ROUNDS]):
            focus, heavy, n = next_focus(nbytes, elig, up_e, lo_e, target, stuck, rack, has_racks, pinned, held[k],
                                         knobs[K_PARTNERS], found)  # fmt: skip
            if focus < 0:
                if not (acted and stuck.any()):
                    break
                stuck[:] = False
                acted = False
                continue
            if _improve(focus, found[:n].copy(), heavy, band, ix, ax, ctx, shape, knobs, costly, moves, scratch):
                acted = True
            else:
                stuck[focus] = True
    out = np.empty(len(moves), np.int64)
    for i in range(len(moves)):
        out[i] = moves[i]
    return out.reshape(-1, 3)


# ---------------------------------------------------------------------------------------------------- from Python


def balance_bytes(state: ClusterState, runs: list[tuple[np.ndarray, np.ndarray]], in_rack: np.ndarray,
                  pinned: bool, arrivals: dict[int, ArrivalIndex], costly: np.ndarray, copies: float,
                  knobs: tuple[int, int, int, int]) -> None:  # fmt: skip
    """Run the kernel on ``state`` (``ByteBalanceGoal._run`` once per (upper, lower) of ``runs``) and make its moves
    there; the donor indexes it used are left in ``state.donor_indexes`` and the arrival lists in ``arrivals`` as the
    Python methods would have left them, and ``costly`` counts the costly swaps."""
    from kafka_rebalance.planner.goals.byte_balance import ArrivalIndex

    flags, veto, dirs, _ = veto_arrays(state)
    board = board_arrays(state, np.zeros(state.n_parts, dtype=np.int64), flags)
    n_b = state.n_brokers
    ctx = (flags, *kernel_records(board, veto, dirs), in_rack.astype(bool),
           (np.zeros(0, dtype=bool), np.zeros(1), np.zeros(0, dtype=np.int64)))  # fmt: skip
    ix = indexes_of(state, n_b)
    none = np.zeros(0, dtype=np.int64)
    ax = empty_indexes(n_b, none, none, 0)
    listed = list(arrivals.items())
    side_lists_in(ax, np.asarray([b for b, _ in listed], dtype=np.int64),
                  *pairs((i, idx.parts) for i, (_, idx) in enumerate(listed)),
                  pairs((i, idx.sizes) for i, (_, idx) in enumerate(listed))[1],
                  np.asarray([idx.fed for _, idx in listed], dtype=np.int64))  # fmt: skip
    bands = np.asarray([[np.asarray(u, dtype=np.float64), np.asarray(lo, dtype=np.float64)] for u, lo in runs])
    held = np.asarray([np.asarray(u, dtype=np.float64) > state.byte_hi for u, _ in runs])
    out = byte_moves(ctx, bands, held, np.asarray(state.byte_target, dtype=np.float64), float(copies), pinned,
                     bool(state.has_racks), original_movable(state), index_record(ix), index_record(ax),
                     np.asarray(knobs, dtype=np.int64),
                     costly)  # fmt: skip
    # The kernel released every parked replica its moves touched (``release``), and ``leave_indexes`` writes the parked
    # ones back: ``move_all`` must not release them again (it would replay move by move to do so).
    state.parked = {}
    state.move_all(out, board[0])
    leave_indexes(state, ix)
    _, _, _, s_at, sp, ss = exported(ax, np.arange(n_b, dtype=np.int64))
    for b in range(n_b):
        if ax[FED][b] == 0 and ax[SN][b] == 0 and b not in arrivals:
            continue
        idx = arrivals.get(b) or ArrivalIndex(state, b)
        idx.parts = sp[s_at[b] : s_at[b + 1]].tolist()
        idx.sizes = ss[s_at[b] : s_at[b + 1]].tolist()
        idx.seen = set(idx.parts)
        idx.fed = int(ax[FED][b])
        arrivals[b] = idx
