"""The replica counts' transfers, compiled (numba): ``ReplicaCountGoal.optimize``'s loop up to the giant-host trades.

The same moves, in the same order, as the goal's Python methods (``_first_transfer``, ``_transfer``, ``_chain``,
``_searched``, ``_want``, ``_shedding``) make with ``DonorIndex`` (goals/base.py), searched as arrays
(donor_arrays.py) and left as the Python search leaves them. At 400 brokers / 1M partitions the goal asked 2.7
million candidates for 375,000 moves, nine in ten refused by rack safety: in Python that was 12-15 s.

The kernel reads the vetoes the goals before it keep in arrays (``compiled_state``); where another veto holds (a goal
``--goals`` orders before the counts), the move cap is set, or an index holds parked replicas, the goal runs its Python
methods instead (``donor_arrays.kernel_reads``). ``tests/planner/test_goals_replica_count_moves.py`` holds the two
to the same moves and the same indexes.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numba import njit, types
from numba.typed import List

from kafka_rebalance.planner.goals.compiled_state import board_arrays, kernel_records, veto_arrays
from kafka_rebalance.planner.goals.donor_arrays import (
    FIT,
    O_BOUND,
    O_BYTES,
    O_EXCL,
    O_SHED,
    created,
    find,
    fits,
    index_record,
    indexes_of,
    insert,
    leave_indexes,
    move_tracked,
    original_movable,
    search_params,
    smallest,
)

if TYPE_CHECKING:
    from kafka_rebalance.planner.byte_misses import HostRoom
    from kafka_rebalance.planner.state import ClusterState


# ---------------------------------------------------------------------------------------------------- the goal


@njit(cache=True)
def _desired(d: int, r: int, board: tuple, veto: tuple, bands: tuple) -> float:
    """``replica_count.desired_size``."""
    counts, nbytes, eligible = board[5], board[6], board[7]
    lo, hi = veto[0], veto[1]
    byte_lo, byte_hi, centre, margin = bands[0], bands[1], bands[2], bands[6][0]
    mid_d = (lo[d] + hi[d]) / 2
    mid_r = (lo[r] + hi[r]) / 2
    bottom_r = byte_lo[r] + margin * centre[r]
    want_d = 0.0
    if eligible[d]:
        top_d = byte_hi[d] - margin * centre[d]
        want_d = (nbytes[d] - top_d) / max(1.0, counts[d] - mid_d)
    want_r = (bottom_r - nbytes[r]) / max(1.0, mid_r - counts[r])
    return max(0.0, max(want_d, want_r))


@njit(cache=True)
def _need(b: int, board: tuple, bands: tuple) -> float:
    """``replica_count.byte_need`` of one broker."""
    target = bands[3][b]
    return (target - board[6][b]) / max(target, 1.0)


@njit(cache=True)
def _want(d: int, r: int, board: tuple, veto: tuple, bands: tuple, hosts: np.ndarray) -> tuple[float, float]:
    """``ReplicaCountGoal._want``: the size wanted and the top of the window (its bottom is always -inf)."""
    if hosts.shape[0]:
        if hosts[r]:
            return 0.0, math.inf
        if hosts[d]:
            top = bands[7][0]
            return top, top + 1.0
    return _desired(d, r, board, veto, bands), math.inf


@njit(cache=True)
def _transfer(d: int, r: int, amount: int, limit: int, ix: tuple, ctx: tuple, bands: tuple, hosts: np.ndarray,
              shape: tuple, moves: List, scratch: np.ndarray) -> int:  # fmt: skip
    """``ReplicaCountGoal._transfer``: up to ``amount`` replicas from d to r; how many moved."""
    board, veto, dirs = ctx[1], ctx[2], ctx[3]
    nbytes, eligible, rack = board[6], board[7], board[8]
    created(ix, d, shape[0], shape[1], board[4])
    fit = np.zeros(FIT)
    fit[2], fit[3], fit[4] = bands[4][r], bands[5][d], 1.0 if eligible[d] else 0.0
    okp = search_params(d, r)
    okp[O_BOUND] = rack[d] != rack[r] and rack[r] >= 0
    shed = hosts.shape[0] > 0 and hosts[d]
    moved = 0
    while moved < amount:
        fit[0], fit[1] = float(nbytes[r]), float(nbytes[d])
        found = -1
        for attempt in range(2):  # the giant-host rule's want, then (where it found none) the counts' own
            if attempt == 0:
                want, top = _want(d, r, board, veto, bands, hosts)
                okp[O_SHED] = shed
            elif shed:
                want, top = _desired(d, r, board, veto, bands), math.inf
                okp[O_SHED] = 0
            else:
                break
            for bytes_kept in (1, 0):
                for touched in (False, True):
                    if bytes_kept:
                        low = smallest(ix, d, touched, board[4])
                        if not fits(low, fit):
                            continue
                    okp[O_BYTES] = bytes_kept
                    found = find(ix, d, want, -math.inf, top, limit, touched, okp, fit, ctx, scratch)
                    if found >= 0:
                        break
                if found >= 0:
                    break
            if found >= 0:
                break
        if found < 0:
            break
        move_tracked(found, d, r, board, dirs, ix, moves)
        moved += 1
    return moved


@njit(cache=True)
def _chain_find(b: int, dst: int, excl: int, limit: int, ix: tuple, ctx: tuple, bands: tuple, hosts: np.ndarray,
                shape: tuple, scratch: np.ndarray) -> int:  # fmt: skip
    """``ReplicaCountGoal._find``: a chain's search of b's replicas (touched ones too) for one to move to dst."""
    board, veto = ctx[1], ctx[2]
    created(ix, b, shape[0], shape[1], board[4])
    fit = np.zeros(FIT)
    okp = search_params(b, dst)
    okp[O_EXCL] = excl
    shed = hosts.shape[0] > 0 and hosts[b]
    want, top = _want(b, dst, board, veto, bands, hosts)
    okp[O_SHED] = shed
    p = find(ix, b, want, -math.inf, top, limit, True, okp, fit, ctx, scratch)
    if p < 0 and shed:
        okp[O_SHED] = 0
        p = find(ix, b, _desired(b, dst, board, veto, bands), -math.inf, math.inf, limit, True, okp, fit, ctx,
                  scratch)
    return p


@njit(cache=True)
def _chain(donors: np.ndarray, receivers: np.ndarray, limit: int, ix: tuple, ctx: tuple, bands: tuple,
           hosts: np.ndarray, shape: tuple, moves: List, scratch: np.ndarray) -> bool:  # fmt: skip
    """``ReplicaCountGoal._chain``: one replica from a donor to a receiver through a third broker."""
    board, dirs = ctx[1], ctx[3]
    elig = board[12]
    for d in donors:
        for r in receivers:
            for x in elig:
                if x == d or x == r:
                    continue
                q = _chain_find(x, r, -1, limit, ix, ctx, bands, hosts, shape, scratch)
                if q < 0:
                    continue
                p = _chain_find(d, x, q, limit, ix, ctx, bands, hosts, shape, scratch)
                if p < 0:
                    insert(ix, bool(board[3][q]), x, board[4][q], q)  # ``DonorIndex.put_back``
                    continue
                move_tracked(q, x, r, board, dirs, ix, moves)
                move_tracked(p, d, x, board, dirs, ix, moves)
                return True
    return False


@njit(cache=True)
def _next_partner(tried: np.ndarray, cand: np.ndarray, room: np.ndarray, need: np.ndarray, apart: np.ndarray) -> int:
    """The first untried candidate in ``np.lexsort((cand, -room, need, apart))``'s order (-1: none left): a
    transfer nearly always succeeds with its first partner, so the partners are picked one at a time, not sorted."""
    best = -1
    for i in range(cand.shape[0]):
        if tried[i]:
            continue
        if best < 0:
            best = i
            continue
        if apart[i] != apart[best]:
            if apart[i] < apart[best]:
                best = i
        elif need[i] != need[best]:
            if need[i] < need[best]:
                best = i
        elif room[i] != room[best]:
            if room[i] > room[best]:
                best = i
        elif cand[i] < cand[best]:
            best = i
    return best


@njit(cache=True)
def _first_transfer(tier_masks: np.ndarray, tier_rooms: np.ndarray, me: int, me_gives: bool, neediest_first: bool,
                    amount: int, limit: int, ix: tuple, ctx: tuple, bands: tuple, hosts: np.ndarray, shape: tuple,
                    moves: List, scratch: np.ndarray) -> bool:  # fmt: skip
    """``ReplicaCountGoal._first_transfer``: up to ``amount`` between ``me`` and the first partner, tier by tier,
    that takes any."""
    board = ctx[1]
    elig, rack = board[12], board[8]
    for t in range(2):
        mask = tier_masks[t]
        cand, cand_room = elig[mask], tier_rooms[t][mask]
        if cand.shape[0] == 0:
            continue
        need = np.empty(cand.shape[0])
        for i in range(cand.shape[0]):
            need[i] = _need(cand[i], board, bands) * (-1 if neediest_first else 1)
        apart = rack[cand] != rack[me]
        tried = np.zeros(cand.shape[0], np.bool_)
        while True:
            k = _next_partner(tried, cand, cand_room, need, apart)
            if k < 0:
                break
            tried[k] = True
            other = cand[k]
            d, r = (me, other) if me_gives else (other, me)
            if _transfer(d, r, min(amount, cand_room[k]), limit, ix, ctx, bands, hosts, shape, moves, scratch):
                return True
    return False


@njit(cache=True)
def count_moves(ctx: tuple, bands: tuple, hosts: np.ndarray, shape: tuple, ix: tuple, limits: np.ndarray) -> np.ndarray:
    """The goal's loop (``ReplicaCountGoal.optimize`` before ``_hold_least``): the moves made, in order, as rows of
    (partition, from, to). ``ctx``: flags, board, vetoes and dirs (copies: changed here), ``rack_bound`` and the
    giant-host rule's room; ``bands``: the byte band; ``shape``: each broker's original movable replicas (start, parts);
    ``ix``: the donor indexes (changed here); ``limits``: the search limit, then the whole-index one."""
    board, veto = ctx[1], ctx[2]
    counts, elig = board[5], board[12]
    lo, hi = veto[0][elig], veto[1][elig]
    stuck = np.zeros(counts.shape[0], np.bool_)
    moves = List.empty_list(types.int64)
    scratch = np.empty(max(1, shape[1].shape[0] + board[0].shape[0]), np.int64)
    masks = np.zeros((2, elig.shape[0]), np.bool_)
    rooms = np.zeros((2, elig.shape[0]), np.int64)
    while True:
        c = counts[elig]
        over, under = c - hi, lo - c
        live = ~stuck[elig]
        ov, un = np.where(live, over, 0), np.where(live, under, 0)
        io, iu = np.argmax(ov), np.argmax(un)
        if ov[io] <= 0 and un[iu] <= 0:
            break
        if ov[io] >= un[iu]:
            me = elig[io]
            masks[0] = under > 0
            rooms[0] = under
            masks[1] = c < hi
            rooms[1] = hi - c
            neediest = _need(me, board, bands) < 0
            others = elig[under > 0] if (under > 0).any() else elig[c < hi]
            gives, amount = True, ov[io]
        else:
            me = elig[iu]
            masks[0] = over > 0
            rooms[0] = over
            masks[1] = c > lo
            rooms[1] = c - lo
            neediest = not _need(me, board, bands) > 0
            others = elig[over > 0] if (over > 0).any() else elig[c > lo]
            gives, amount = False, un[iu]
        done = False
        for limit in limits:  # ``_searched``: the search limit, then every replica
            if _first_transfer(masks, rooms, me, gives, neediest, amount, limit, ix, ctx, bands, hosts, shape, moves,
                               scratch):  # fmt: skip
                done = True
            elif gives:
                done = _chain(np.array([me]), others, limit, ix, ctx, bands, hosts, shape, moves, scratch)
            else:
                done = _chain(others, np.array([me]), limit, ix, ctx, bands, hosts, shape, moves, scratch)
            if done:
                break
        stuck[me] = not done
    out = np.empty(len(moves), np.int64)
    for i in range(len(moves)):
        out[i] = moves[i]
    return out.reshape(-1, 3)


# ---------------------------------------------------------------------------------------------------- from Python


def transfer_counts(state: ClusterState, in_rack: np.ndarray, hosts: np.ndarray | None, room: HostRoom,
                    limit: int) -> None:  # fmt: skip
    """Run the kernel on ``state`` and make its moves there; the donor indexes it used are left in
    ``state.donor_indexes`` as the Python search would have left them."""
    flags, veto, dirs, _ = veto_arrays(state)
    board = board_arrays(state, np.zeros(state.n_parts, dtype=np.int64), flags)
    n_b = state.n_brokers
    # the giant-host rule's room: anywhere, then by rack code + 2 (-1: no rack)
    limits_by_rack = np.full(int(np.max(state.rack, initial=-1)) + 3, -np.inf)
    limits_by_rack[0] = room.anywhere
    for r, v in room.in_rack.items():
        if 0 <= r + 2 < len(limits_by_rack):
            limits_by_rack[r + 2] = v
    hosts_room = (np.asarray(room.pinned, dtype=bool), limits_by_rack, np.zeros(0, dtype=np.int64))  # (no leader rule)
    ctx = (flags, *kernel_records(board, veto, dirs), in_rack.astype(bool), hosts_room)
    from kafka_rebalance.planner.goals.replica_count import BAND_MARGIN
    bands = tuple(np.asarray(x, dtype=np.float64) for x in (
        state.byte_lo, state.byte_hi, state.byte_centre, state.byte_target, state.byte_allowed_hi,
        state.byte_allowed_lo, [BAND_MARGIN * state.options.byte_tolerance], [room.anywhere]))  # fmt: skip
    start, owned = original_movable(state)
    ix = indexes_of(state, n_b)
    out = count_moves(ctx, bands, np.zeros(0, dtype=bool) if hosts is None else hosts, (start, owned), index_record(ix),
                      np.array([limit, state.n_parts + 1], dtype=np.int64))
    state.move_all(out, board[0])
    leave_indexes(state, ix)
