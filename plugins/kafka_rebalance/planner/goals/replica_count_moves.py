"""The replica counts' transfers, compiled (numba): ``ReplicaCountGoal.optimize``'s loop up to the giant-host trades.

The same moves, in the same order, as the goal's Python methods (``_first_transfer``, ``_transfer``, ``_chain``,
``_searched``, ``_want``, ``_shedding``) make with ``DonorIndex`` (goals/base.py), and the donor indexes left as
those would be: each broker's index here is its ``DonorIndex`` as arrays (main list, side list, the arrivals it took
in), a replica leaving the main list marked gone instead of deleted, so that no search shifts a 7,500-entry list. At
400 brokers / 1M partitions the goal asked 2.7 million candidates for 375,000 moves, nine in ten refused by rack
safety: in Python that was 12-15 s.

The kernel reads the vetoes the goals before it keep in arrays (``compiled_state``); where another veto holds (a goal
``--goals`` orders before the counts), the move cap is set, or an index holds parked replicas, the goal runs its Python
methods instead (``replica_count_kernel_reads``). ``tests/planner/test_goals_replica_count_moves.py`` holds the two
to the same moves and the same indexes.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numba import njit, types
from numba.typed import List

from kafka_rebalance.planner.goals.compiled_state import (
    F_CAP,
    F_GUARD,
    F_PYTHON,
    board_arrays,
    counts_within,
    follow_dirs,
    holds,
    move_on_board,
    veto_arrays,
    veto_flags,
    vetoes_accept,
)

if TYPE_CHECKING:
    from kafka_rebalance.planner.byte_misses import HostRoom
    from kafka_rebalance.planner.state import ClusterState

# ``ix`` (the donor indexes) slots
MP, MS, MGONE, MN, MHEAD, SP, SS, SN, AP, AN, FED, CREATED, MDEAD = range(13)
# Gone entries a main list may hold before it is compacted: a search walks over them (found replicas cluster around
# the sizes wanted, so without compaction each search crossed every earlier one's).
COMPACT = 64
# ``ok`` parameters (``_ok``): what a search's candidate must pass besides the vetoes
O_SRC, O_DST, O_EXCL, O_BYTES, O_SHED, O_BOUND = range(6)


# ---------------------------------------------------------------------------------------------------- the indexes


@njit(cache=True)
def _before(s1: int, p1: int, s2: int, p2: int) -> bool:
    return s1 < s2 or (s1 == s2 and p1 < p2)


@njit(cache=True)
def _slot(parts: np.ndarray, sizes: np.ndarray, n: int, size: int, p: int) -> int:
    """``goals.base.slot``: where (size, p) sits, or would, among the first n entries kept by (size, partition)."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if _before(sizes[mid], parts[mid], size, p):
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def _insert(ix: tuple, side: bool, b: int, size: int, p: int) -> None:
    """(size, p) into b's side list, or its main list (where it left a gone entry of its own: that entry is back)."""
    if side:
        parts, sizes, n = ix[SP][b], ix[SS][b], ix[SN]
    else:
        parts, sizes, n = ix[MP][b], ix[MS][b], ix[MN]
    k = n[b]
    i = _slot(parts, sizes, k, size, p)
    if not side and i < k and parts[i] == p and sizes[i] == size and ix[MGONE][b][i]:
        ix[MGONE][b][i] = False
        ix[MHEAD][b] = min(ix[MHEAD][b], i)
        ix[MDEAD][b] -= 1
        return
    if k == parts.shape[0]:
        grown_p, grown_s = np.empty(2 * k + 8, np.int64), np.empty(2 * k + 8, np.int64)
        grown_p[:k], grown_s[:k] = parts[:k], sizes[:k]
        parts, sizes = grown_p, grown_s
        if side:
            ix[SP][b], ix[SS][b] = parts, sizes
        else:
            grown_g = np.zeros(2 * k + 8, np.bool_)
            grown_g[:k] = ix[MGONE][b][:k]
            ix[MP][b], ix[MS][b], ix[MGONE][b] = parts, sizes, grown_g
    parts[i + 1:k + 1] = parts[i:k].copy()
    sizes[i + 1:k + 1] = sizes[i:k].copy()
    parts[i], sizes[i] = p, size
    if not side:
        gone = ix[MGONE][b]
        gone[i + 1:k + 1] = gone[i:k].copy()
        gone[i] = False
        ix[MHEAD][b] = min(ix[MHEAD][b], i)
    n[b] = k + 1


@njit(cache=True)
def _side_delete(ix: tuple, b: int, i: int) -> None:
    parts, sizes, n = ix[SP][b], ix[SS][b], ix[SN]
    k = n[b]
    parts[i:k - 1] = parts[i + 1:k].copy()
    sizes[i:k - 1] = sizes[i + 1:k].copy()
    n[b] = k - 1


@njit(cache=True)
def _created(ix: tuple, b: int, start: np.ndarray, owned: np.ndarray, sizes: np.ndarray) -> None:
    """``donor_index``: b's index, built on first use from its original movable replicas by (size, partition)."""
    if ix[CREATED][b]:
        return
    ix[CREATED][b] = True
    ps = owned[start[b]:start[b + 1]]
    order = np.argsort(sizes[ps], kind="mergesort")  # (stable: ps is in partition order)
    ix[MP][b] = ps[order].copy()
    ix[MS][b] = sizes[ps][order].copy()
    ix[MGONE][b] = np.zeros(ps.shape[0], np.bool_)
    ix[MN][b] = ps.shape[0]
    ix[MHEAD][b] = 0


@njit(cache=True)
def _smallest(ix: tuple, b: int, allow_touched: bool, sizes: np.ndarray) -> float:
    """``DonorIndex.smallest``."""
    gone, n = ix[MGONE][b], ix[MN][b]
    h = ix[MHEAD][b]
    while h < n and gone[h]:
        h += 1
    ix[MHEAD][b] = h
    low = float(ix[MS][b][h]) if h < n else math.inf
    if allow_touched:
        if ix[SN][b] > 0:
            low = min(low, float(ix[SS][b][0]))
        arr, an, fed = ix[AP][b], ix[AN][b], ix[FED][b]
        if an > fed:
            least = sizes[arr[fed]]
            for i in range(fed + 1, an):
                least = min(least, sizes[arr[i]])
            low = min(low, float(least))
    return low


@njit(cache=True)
def _take_arrivals(ix: tuple, b: int, sizes: np.ndarray) -> None:
    """``DonorIndex._take_arrivals``: the replicas moved onto b since join its side list."""
    arr = ix[AP][b]
    for i in range(ix[FED][b], ix[AN][b]):
        _insert(ix, True, b, sizes[arr[i]], arr[i])
    ix[FED][b] = ix[AN][b]


@njit(cache=True, inline="always")
def _fits(size: float, fit: np.ndarray) -> bool:
    """``_transfer``'s ``fits``: neither broker ends worse off in bytes (``fit``: r's bytes, d's, r's allowed top,
    d's allowed bottom, whether d is held to it)."""
    return fit[0] + size <= fit[2] and (not fit[4] or fit[1] - size >= fit[3])


@njit(cache=True, inline="always")
def _ok(p: int, okp: np.ndarray, fit: np.ndarray, flags: np.ndarray, board: tuple, veto: tuple, dirs: tuple,
        in_rack: np.ndarray, pinned: np.ndarray, limits: np.ndarray) -> bool:  # fmt: skip
    """What the goal's search asks of a candidate: ``_transfer``'s ``keeps_bytes`` and rack-bound shortcut,
    ``_shedding``'s room, ``_chain``'s other replica, then ``ClusterState.accepts`` (the vetoes in arrays)."""
    sizes = board[4]
    if p == okp[O_EXCL]:
        return False
    if okp[O_BYTES] and not _fits(sizes[p], fit):
        return False
    if okp[O_SHED]:
        limit = limits[board[8][okp[O_SRC]] + 2] if pinned[p] else limits[0]
        if not float(sizes[p]) <= limit:
            return False
    if okp[O_BOUND] and in_rack[p]:
        return False
    src, dst = okp[O_SRC], okp[O_DST]
    return vetoes_accept(p, src, dst, flags, board, veto, dirs) and counts_within(src, dst, flags, board, veto)


@njit(cache=True)
def _nearest(ix: tuple, b: int, side: bool, desired: float, above: float, below: float, limit: int,
             allow_touched: bool, okp: np.ndarray, fit: np.ndarray, ctx: tuple, scratch: np.ndarray) -> int:  # fmt: skip
    """``DonorIndex._nearest`` on b's main or side list: the index of the found entry (-1: none), replicas that moved
    away dropped and (main list, touched ones not wanted) set aside to the side list."""
    flags, board, veto, dirs, in_rack, (pinned, limits) = ctx
    now, touched = board[0], board[3]
    gone = ix[MGONE][b]  # (main list only: side entries are deleted at once)
    if side:
        parts, sizes, n = ix[SP][b], ix[SS][b], ix[SN][b]
    else:
        parts, sizes, n = ix[MP][b], ix[MS][b], ix[MN][b]
    if scratch.shape[0] < n:  # (every entry of the list could be dropped; numba checks no bounds)
        scratch = np.empty(n, np.int64)
    desired = min(max(desired, above), below)
    view = sizes[:n]
    i = int(np.searchsorted(view, desired))
    end = int(np.searchsorted(view, below))
    first = int(np.searchsorted(view, above, "right"))
    lo, hi = min(i - 1, end - 1), max(i, first)
    checks = 0
    n_out = 0  # dropped or set aside: scratch[:n_out], with the set aside flagged by + n (side lists drop only)
    found = -1
    while lo >= first or hi < end:
        if not side and lo >= first and gone[lo]:
            lo -= 1
            continue
        if not side and hi < end and gone[hi]:
            hi += 1
            continue
        if checks >= limit:
            break
        if hi >= end or (lo >= first and desired - sizes[lo] <= sizes[hi] - desired):
            j = lo
            lo -= 1
        else:
            j = hi
            hi += 1
        p = parts[j]
        moved = touched[p]
        if (moved or side) and not holds(now, p, b):
            scratch[n_out] = j
            n_out += 1
            continue
        if moved and not allow_touched:
            scratch[n_out] = j + n
            n_out += 1
            continue
        checks += 1
        if _ok(p, okp, fit, flags, board, veto, dirs, in_rack, pinned, limits):
            found = j
            break
    if side:
        drop = np.sort(scratch[:n_out])
        for k in range(n_out - 1, -1, -1):
            _side_delete(ix, b, drop[k])
        if found >= 0:
            for k in range(n_out):
                if drop[k] < found:
                    found -= 1
    else:
        for k in range(n_out):
            j = scratch[k]
            if j >= n:
                j -= n
                _insert(ix, True, b, sizes[j], parts[j])
            gone[j] = True
        ix[MDEAD][b] += n_out
    return found


@njit(cache=True)
def _find(ix: tuple, b: int, desired: float, above: float, below: float, limit: int, allow_touched: bool,
          okp: np.ndarray, fit: np.ndarray, ctx: tuple, scratch: np.ndarray) -> int:  # fmt: skip
    """``DonorIndex.find``: the partition found (-1: none); it leaves b's index."""
    sizes = ctx[1][4]
    j = _nearest(ix, b, False, desired, above, below, limit, allow_touched, okp, fit, ctx, scratch)
    found = ix[MP][b][j] if j >= 0 else -1
    if allow_touched:
        _take_arrivals(ix, b, sizes)
        k = _nearest(ix, b, True, desired, above, below, limit, True, okp, fit, ctx, scratch)
        if k >= 0:
            q = ix[SP][b][k]
            if found < 0 or abs(float(sizes[q]) - desired) < abs(float(sizes[found]) - desired):
                _side_delete(ix, b, _slot(ix[SP][b], ix[SS][b], ix[SN][b], sizes[q], q))
                return q
    if j >= 0:
        ix[MGONE][b][j] = True
        ix[MDEAD][b] += 1
    if ix[MDEAD][b] >= COMPACT:
        _compact(ix, b)
    return found


@njit(cache=True)
def _compact(ix: tuple, b: int) -> None:
    """b's main list without its gone entries (as the Python list, which deletes them at once)."""
    parts, sizes, gone = ix[MP][b], ix[MS][b], ix[MGONE][b]
    k = 0
    for i in range(ix[MN][b]):
        if not gone[i]:
            parts[k], sizes[k], gone[k] = parts[i], sizes[i], False
            k += 1
    ix[MN][b] = k
    ix[MHEAD][b] = 0
    ix[MDEAD][b] = 0


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
def _move(p: int, src: int, dst: int, board: tuple, dirs: tuple, ix: tuple, moves: List) -> None:
    """``ClusterState.move`` on the copies: the row, counts, bytes, the arrivals, the log dirs' tally."""
    R, rf, touched, sizes = board[1], board[2], board[3], board[4]
    j = move_on_board(p, src, dst, board)
    size = sizes[p]
    touched[p] = True
    arr, an = ix[AP][dst], ix[AN]
    if an[dst] == arr.shape[0]:
        grown = np.empty(2 * an[dst] + 8, np.int64)
        grown[:an[dst]] = arr[:an[dst]]
        ix[AP][dst] = grown
        arr = grown
    arr[an[dst]] = p
    an[dst] += 1
    follow_dirs(p, j, src, dst, size, R, rf, dirs)
    moves.append(p)
    moves.append(src)
    moves.append(dst)


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
    _created(ix, d, shape[0], shape[1], board[4])
    fit = np.array([0.0, 0.0, bands[4][r], bands[5][d], 1.0 if eligible[d] else 0.0])
    okp = np.array([d, r, -1, 0, 0, 0])
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
                        low = _smallest(ix, d, touched, board[4])
                        if not _fits(low, fit):
                            continue
                    okp[O_BYTES] = bytes_kept
                    found = _find(ix, d, want, -math.inf, top, limit, touched, okp, fit, ctx, scratch)
                    if found >= 0:
                        break
                if found >= 0:
                    break
            if found >= 0:
                break
        if found < 0:
            break
        _move(found, d, r, board, dirs, ix, moves)
        moved += 1
    return moved


@njit(cache=True)
def _chain_find(b: int, dst: int, excl: int, limit: int, ix: tuple, ctx: tuple, bands: tuple, hosts: np.ndarray,
                shape: tuple, scratch: np.ndarray) -> int:  # fmt: skip
    """``ReplicaCountGoal._find``: a chain's search of b's replicas (touched ones too) for one to move to dst."""
    board, veto = ctx[1], ctx[2]
    _created(ix, b, shape[0], shape[1], board[4])
    fit = np.zeros(5)
    okp = np.array([b, dst, excl, 0, 0, 0])
    shed = hosts.shape[0] > 0 and hosts[b]
    want, top = _want(b, dst, board, veto, bands, hosts)
    okp[O_SHED] = shed
    p = _find(ix, b, want, -math.inf, top, limit, True, okp, fit, ctx, scratch)
    if p < 0 and shed:
        okp[O_SHED] = 0
        p = _find(ix, b, _desired(b, dst, board, veto, bands), -math.inf, math.inf, limit, True, okp, fit, ctx,
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
                    _insert(ix, bool(board[3][q]), x, board[4][q], q)  # ``DonorIndex.put_back``
                    continue
                _move(q, x, r, board, dirs, ix, moves)
                _move(p, d, x, board, dirs, ix, moves)
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


def replica_count_kernel_reads(state: ClusterState) -> bool:
    """Does the kernel read every veto in force, with no move cap and no parked replica (else the goal's Python
    methods run)?"""
    flags, _ = veto_flags(state)
    return not (flags[F_PYTHON] or flags[F_CAP] or flags[F_GUARD]) and not state.parked and \
        not any(idx.parked for idx in state.donor_indexes.values())


def transfer_counts(state: ClusterState, in_rack: np.ndarray, hosts: np.ndarray | None, room: HostRoom,
                    limit: int) -> None:  # fmt: skip
    """Run the kernel on ``state`` and make its moves there; the donor indexes it used are left in
    ``state.donor_indexes`` as the Python search would have left them."""
    from kafka_rebalance.planner.goals.base import DonorIndex

    flags, veto, dirs, _ = veto_arrays(state)
    board = board_arrays(state, np.zeros(state.n_parts, dtype=np.int64))
    n_b = state.n_brokers
    # the giant-host rule's room: anywhere, then by rack code + 2 (-1: no rack)
    limits_by_rack = np.full(int(np.max(state.rack, initial=-1)) + 3, -np.inf)
    limits_by_rack[0] = room.anywhere
    for r, v in room.in_rack.items():
        if 0 <= r + 2 < len(limits_by_rack):
            limits_by_rack[r + 2] = v
    hosts_room = (np.asarray(room.pinned, dtype=bool), limits_by_rack)
    ctx = (flags, board, veto, dirs, in_rack.astype(bool), hosts_room)
    from kafka_rebalance.planner.goals.replica_count import BAND_MARGIN
    bands = tuple(np.asarray(x, dtype=np.float64) for x in (
        state.byte_lo, state.byte_hi, state.byte_centre, state.byte_target, state.byte_allowed_hi,
        state.byte_allowed_lo, [BAND_MARGIN * state.options.byte_tolerance], [room.anywhere]))  # fmt: skip
    # each broker's original movable replicas, in partition order (what a new index sorts)
    movable = ~(state.frozen | state.hot)
    per = [state.broker_parts(b) for b in range(n_b)]
    per = [ps[movable[ps]] for ps in per]
    start = np.zeros(n_b + 1, dtype=np.int64)
    start[1:] = np.cumsum([len(ps) for ps in per])
    owned = np.concatenate(per).astype(np.int64) if per else np.zeros(0, dtype=np.int64)
    ix = _indexes(state, n_b)
    out = count_moves(ctx, bands, np.zeros(0, dtype=bool) if hosts is None else hosts, (start, owned), ix,
                      np.array([limit, state.n_parts + 1], dtype=np.int64))
    state.move_all(out, board[0])
    for b in np.flatnonzero(ix[CREATED]).tolist():
        keep = ~ix[MGONE][b][: ix[MN][b]]
        old = state.donor_indexes.get(b)
        idx = old if old is not None else DonorIndex.__new__(DonorIndex)
        idx.state, idx.broker = state, b
        idx.parts = ix[MP][b][: ix[MN][b]][keep].tolist()
        idx.sizes = ix[MS][b][: ix[MN][b]][keep].tolist()
        idx.side_parts = ix[SP][b][: ix[SN][b]].tolist()
        idx.side_sizes = ix[SS][b][: ix[SN][b]].tolist()
        idx.fed = int(ix[FED][b])
        if old is None:
            idx.parked = set()
        state.donor_indexes[b] = idx


def _indexes(state: ClusterState, n_b: int) -> tuple:
    """The donor indexes as the kernel holds them (``ix``): those ``state`` has, copied; the others built on first
    use in the kernel. Each broker's arrivals so far beside them."""
    arrived = [(b, p) for b, ps in sorted(state.arrivals.items()) for p in ps]
    ix = _empty_indexes(n_b, np.fromiter((b for b, _ in arrived), dtype=np.int64, count=len(arrived)),
                        np.fromiter((p for _, p in arrived), dtype=np.int64, count=len(arrived)))
    spare = [0] * 8
    for b, idx in state.donor_indexes.items():
        ix[CREATED][b] = True
        ix[MP][b], ix[MS][b] = np.asarray(idx.parts, dtype=np.int64), np.asarray(idx.sizes, dtype=np.int64)
        ix[MGONE][b] = np.zeros(len(idx.parts), dtype=bool)
        ix[MN][b] = len(idx.parts)
        ix[SP][b] = np.asarray(idx.side_parts + spare, dtype=np.int64)
        ix[SS][b] = np.asarray(idx.side_sizes + spare, dtype=np.int64)
        ix[SN][b] = len(idx.side_parts)
        ix[FED][b] = idx.fed
    return ix


@njit(cache=True)
def _empty_indexes(n_b: int, arrived_b: np.ndarray, arrived_p: np.ndarray) -> tuple:
    """Every broker's index unbuilt, and its arrivals (``arrived_b``/``arrived_p``: pairs, by broker, in order)."""
    ints, flags = types.int64[::1], types.boolean[::1]
    mp, ms, sp, ss, ap = (List.empty_list(ints), List.empty_list(ints), List.empty_list(ints), List.empty_list(ints),
                          List.empty_list(ints))
    mg = List.empty_list(flags)
    an = np.zeros(n_b, np.int64)
    for b in arrived_b:
        an[b] += 1
    at = 0
    for b in range(n_b):
        mp.append(np.empty(0, np.int64))
        ms.append(np.empty(0, np.int64))
        mg.append(np.zeros(0, np.bool_))
        sp.append(np.empty(8, np.int64))
        ss.append(np.empty(8, np.int64))
        arr = np.empty(an[b] + 8, np.int64)
        arr[:an[b]] = arrived_p[at:at + an[b]]
        at += an[b]
        ap.append(arr)
    zeros = np.zeros(n_b, np.int64)
    return (mp, ms, mg, zeros.copy(), zeros.copy(), sp, ss, zeros.copy(), ap, an, zeros.copy(),
            np.zeros(n_b, np.bool_), zeros.copy())
