"""Each broker's ``DonorIndex`` (goals/base.py) as the compiled goals hold it (numba), and the search on it.

A broker's index is its movable replicas by (size, partition): a main list, a side list of replicas of partitions the
plan changed, and the replicas that arrived on the broker (``state.arrivals``), taken into the side list by a search
allowing changed ones. Here a replica leaving the main list is marked gone instead of deleted (the list compacted every
``COMPACT``), so that no search shifts a 7,500-entry list. ``find`` is ``DonorIndex.find``, ``insert`` its
``put_back``: the same searches, the same answers, and the indexes left as the Python lists would be (``indexes_of``
reads them from the state, ``leave_indexes`` writes them back). The replica counts' transfers (replica_count_moves.py)
and the bytes goal's (byte_balance_moves.py) search these.
"""

from __future__ import annotations

import math
from collections import namedtuple
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
from numba import njit, types
from numba.experimental import structref
from numba.typed import List

from kafka_rebalance.planner.goals.compiled_state import (
    F_CAP,
    F_GUARD,
    F_PYTHON,
    counts_within,
    follow_dirs,
    held_before,
    holds,
    move_on_board,
    new_replicas,
    veto_flags,
    vetoes_accept,
)
from kafka_rebalance.planner.structs import Fields, register_positional

if TYPE_CHECKING:
    from kafka_rebalance.planner.state import ClusterState

# ``ix`` (the donor indexes) slots
MP, MS, MGONE, MN, MHEAD, SP, SS, SN, AP, AN, FED, CREATED, MDEAD, PARKED, PLOG = range(15)
# The same as the kernels take it (``index_record``): a struct read by position. Handed as a tuple of fifteen lists and
# arrays, every search (``nearest``, ``find``, ``insert``: millions of calls) raised and lowered fifteen counts.
Index = namedtuple("Index", ["main_parts", "main_sizes", "main_gone", "main_n", "main_head", "side_parts", "side_sizes",
                             "side_n", "arrived", "arrived_n", "fed", "created", "main_dead", "parked", "parking_log"])


class IndexType(Fields):
    pass


class IndexRef(structref.StructRefProxy):
    pass


register_positional(Index, IndexType, IndexRef)
# Gone entries a main list may hold before it is compacted: a search walks over them (found replicas cluster around
# the sizes wanted, so without compaction each search crossed every earlier one's).
COMPACT = 64
# ``okp`` (``candidate_ok``): the move searched for (from, to), two replicas excluded, and what is asked besides the
# vetoes (the count goal's bytes rule and shedding, rack safety's shortcut, the byte goal's ``better``, no count veto,
# the leader keeper's rule)
O_SRC, O_DST, O_EXCL, O_EXCL2, O_BYTES, O_SHED, O_BOUND, O_BETTER, O_NEUTRAL, O_KEEP = range(10)
# ``fit`` from F_BH (``better``): h's bytes, r's, their distance outside before, the size coming back, then the bands
F_BH, F_BR, F_BEFORE, F_SQ, F_BAND = 5, 6, 7, 8, 9
# ``fit`` for O_KEEP (``keeps``; O_EXCL is the leader's replica it replaces): the donor's bytes, the receiver's, the
# fullest eligible broker's, the donor's disk limit, the two bands (lower, upper) and how far outside them each is
K_BD, K_BR, K_TOP, K_LIMIT, K_LO_D, K_HI_D, K_LO_R, K_HI_R, K_FAR_D, K_FAR_R = range(10)
FIT = 13  # ``fit``'s length


@njit(cache=True)
def search_params(src: int, dst: int) -> np.ndarray:
    """``okp`` for a search of moves src -> dst that asks the vetoes only."""
    okp = np.zeros(10, np.int64)
    okp[O_SRC], okp[O_DST], okp[O_EXCL], okp[O_EXCL2] = src, dst, -1, -1
    return okp


# ---------------------------------------------------------------------------------------------------- the indexes


@njit(cache=True)
def _before(s1: int, p1: int, s2: int, p2: int) -> bool:
    return s1 < s2 or (s1 == s2 and p1 < p2)


@njit(cache=True)
def slot(parts: np.ndarray, sizes: np.ndarray, n: int, size: int, p: int) -> int:
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
def insert(ix: tuple, side: bool, b: int, size: int, p: int) -> None:
    """(size, p) into b's side list, or its main list (where it left a gone entry of its own: that entry is back)."""
    if side:
        parts, sizes, n = ix[SP][b], ix[SS][b], ix[SN]
    else:
        parts, sizes, n = ix[MP][b], ix[MS][b], ix[MN]
    k = n[b]
    i = slot(parts, sizes, k, size, p)
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
    # (shifted in place, from the end: a copy of the tail per insert, allocated and freed, cost more than the move)
    for x in range(k, i, -1):
        parts[x], sizes[x] = parts[x - 1], sizes[x - 1]
    parts[i], sizes[i] = p, size
    if not side:
        gone = ix[MGONE][b]
        for x in range(k, i, -1):
            gone[x] = gone[x - 1]
        gone[i] = False
        ix[MHEAD][b] = min(ix[MHEAD][b], i)
    n[b] = k + 1


@njit(cache=True)
def side_delete(ix: tuple, b: int, i: int) -> None:
    parts, sizes, n = ix[SP][b], ix[SS][b], ix[SN]
    k = n[b]
    for x in range(i, k - 1):
        parts[x], sizes[x] = parts[x + 1], sizes[x + 1]
    n[b] = k - 1


@njit(cache=True)
def created(ix: tuple, b: int, start: np.ndarray, owned: np.ndarray, sizes: np.ndarray) -> None:
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
def smallest(ix: tuple, b: int, allow_touched: bool, sizes: np.ndarray) -> float:
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
def take_arrivals(ix: tuple, b: int, sizes: np.ndarray) -> None:
    """``DonorIndex._take_arrivals``: the replicas moved onto b since join its side list."""
    arr = ix[AP][b]
    for i in range(ix[FED][b], ix[AN][b]):
        insert(ix, True, b, sizes[arr[i]], arr[i])
    ix[FED][b] = ix[AN][b]


@njit(cache=True, inline="always")
def fits(size: float, fit: np.ndarray) -> bool:
    """The count goal's ``fits``: neither broker ends worse off in bytes (``fit``: r's bytes, d's, r's allowed top,
    d's allowed bottom, whether d is held to it)."""
    return fit[0] + size <= fit[2] and (not fit[4] or fit[1] - size >= fit[3])


@njit(cache=True, inline="always")
def outside(x: float, upper: float, lower: float) -> float:
    """How far bytes ``x`` are outside the band [lower, upper] (``ByteBalanceGoal._viol``)."""
    return max(0.0, x - upper) + max(0.0, lower - x)


@njit(cache=True, inline="always")
def better(s: float, fit: np.ndarray) -> bool:
    """The byte goal's ``better``: s bytes moved from h to r bring the two closer to their bands (``fit`` from F_BH:
    h's bytes, r's, their distance outside before, the size coming back, h's band, r's band)."""
    after = outside(fit[F_BH] - s, fit[F_BAND], fit[F_BAND + 1]) + outside(fit[F_BR] + s, fit[F_BAND + 2],
                                                                            fit[F_BAND + 3])  # fmt: skip
    return after < fit[F_BEFORE] - 1e-9


@njit(cache=True, inline="always")
def far(x: float, lower: float, upper: float) -> float:
    """How far ``x`` lies outside [lower, upper] (``leader_keep._distance``: the larger side where lower > upper)."""
    return max(0.0, x - upper, lower - x)


@njit(cache=True, inline="always")
def keeps(q: int, okp: np.ndarray, fit: np.ndarray, sizes: np.ndarray, leader: np.ndarray) -> bool:
    """The leader keeper's rule (``leader_keep._replacement_rule``'s ``ok`` but for the vetoes): q, a follower on
    the donor, moving in place of the leader's replica O_EXCL leaves neither broker further outside its band, above
    the fullest eligible broker, or (the donor) above its disk limit."""
    if leader[q] == okp[O_SRC]:
        return False
    g = float(sizes[okp[O_EXCL]] - sizes[q])
    bd, br = fit[K_BD] + g, fit[K_BR] - g
    if max(bd, br) > fit[K_TOP] or bd > fit[K_LIMIT]:
        return False
    return far(bd, fit[K_LO_D], fit[K_HI_D]) <= fit[K_FAR_D] and far(br, fit[K_LO_R], fit[K_HI_R]) <= fit[K_FAR_R]


@njit(cache=True, inline="always")
def candidate_ok(p: int, okp: np.ndarray, fit: np.ndarray, flags: np.ndarray, board: tuple, veto: tuple, dirs: tuple,
                 in_rack: np.ndarray, pinned: np.ndarray, limits: np.ndarray, leader: np.ndarray) -> bool:  # fmt: skip
    """What a goal's search asks of a candidate (``okp`` says which): the replicas it excludes, the count goal's
    ``keeps_bytes`` and ``_shedding``'s room, rack safety's shortcut (``rack_bound``), the byte goal's ``better``, the
    leader keeper's rule (``leader``: each partition's leader); then ``ClusterState.accepts`` (the vetoes in arrays;
    the counts' unless the move is half of a count-neutral swap)."""
    sizes = board[4]
    if p == okp[O_EXCL] or p == okp[O_EXCL2]:
        return False
    if okp[O_BYTES] and not fits(sizes[p], fit):
        return False
    if okp[O_SHED]:
        limit = limits[board[8][okp[O_SRC]] + 2] if pinned[p] else limits[0]
        if not float(sizes[p]) <= limit:
            return False
    if okp[O_BOUND] and in_rack[p]:
        return False
    if okp[O_BETTER] and not better(float(sizes[p]) - fit[F_SQ], fit):
        return False
    if okp[O_KEEP] and not keeps(p, okp, fit, sizes, leader):
        return False
    src, dst = okp[O_SRC], okp[O_DST]
    if not vetoes_accept(p, src, dst, flags, board, veto, dirs):
        return False
    return bool(okp[O_NEUTRAL]) or counts_within(src, dst, flags, board, veto)


@njit(cache=True)
def park(ix: tuple, p: int, b: int) -> None:
    """b's index sets p aside at the move cap (``DonorIndex.parked``, ``ClusterState.parked``): logged as (partition,
    broker, p's entry before, still parked), p's last entry at ``ix[PARKED][p]``. (An index may list p twice, an
    original replica and an arrival: it is parked twice, and put back twice, as the Python lists do.)"""
    log = ix[PLOG]
    e = len(log) // 4
    log.append(p)
    log.append(b)
    log.append(ix[PARKED][p])
    log.append(1)
    ix[PARKED][p] = e


@njit(cache=True)
def parking_log(log: List) -> np.ndarray:
    """``park``'s log as rows (partition, broker, entry before, still parked), in the order parked."""
    out = np.empty(len(log), np.int64)
    for i in range(len(log)):
        out[i] = log[i]
    return out.reshape(-1, 4)


@njit(cache=True)
def release(ix: tuple, p: int, size: int) -> None:
    """``ClusterState._release``: p changed, so its replicas parked at the cap are back in their indexes (each in its
    side list: ``DonorIndex.unpark`` of a changed partition)."""
    log = ix[PLOG]
    e = ix[PARKED][p]
    while e >= 0:
        insert(ix, True, log[4 * e + 1], size, p)
        log[4 * e + 3] = 0
        e = log[4 * e + 2]
    ix[PARKED][p] = -1


@njit(cache=True, inline="always")
def capped(p: int, b: int, now: np.ndarray, R: np.ndarray, rf: np.ndarray, touched: np.ndarray,
           cap: np.ndarray) -> bool:  # fmt: skip
    """``ClusterState.capped``: b's replica of p is an original one, and p's new replicas are at the cap."""
    return bool(touched[p]) and held_before(R, rf, p, b) >= 0 and new_replicas(now, R, rf, touched, p) >= cap[p]


@njit(cache=True)
def nearest(ix: tuple, b: int, side: bool, desired: float, above: float, below: float, limit: int,
            allow_touched: bool, okp: np.ndarray, fit: np.ndarray, ctx: tuple, scratch: np.ndarray,
            parks: bool = True) -> int:  # fmt: skip
    """``DonorIndex._nearest`` on b's main or side list: the index of the found entry (-1: none), replicas that moved
    away dropped, those at the move cap parked (``parks``; ``DonorIndex.parked``) and (main list, touched ones not
    wanted) set aside to the side list."""
    flags, board, veto, dirs, in_rack, (pinned, limits, leader) = ctx
    now, R, rf, touched = board[0], board[1], board[2], board[3]
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
        # (at 200 brokers most of the byte goal's checks were replicas the cap refused, search after search)
        if (moved or side) and parks and flags[F_CAP] and capped(p, b, now, R, rf, touched, veto[5]):
            scratch[n_out] = j
            n_out += 1
            park(ix, p, b)
            continue
        if moved and not allow_touched:
            scratch[n_out] = j + n
            n_out += 1
            continue
        checks += 1
        if candidate_ok(p, okp, fit, flags, board, veto, dirs, in_rack, pinned, limits, leader):
            found = j
            break
    if side:
        drop = np.sort(scratch[:n_out])
        for k in range(n_out - 1, -1, -1):
            side_delete(ix, b, drop[k])
        if found >= 0:  # (each drop before it moves it one down: counted against where it was found)
            found -= int(np.searchsorted(drop, found))
    else:
        for k in range(n_out):
            j = scratch[k]
            if j >= n:
                j -= n
                insert(ix, True, b, sizes[j], parts[j])
            gone[j] = True
        ix[MDEAD][b] += n_out
    return found


@njit(cache=True)
def find(ix: tuple, b: int, desired: float, above: float, below: float, limit: int, allow_touched: bool,
          okp: np.ndarray, fit: np.ndarray, ctx: tuple, scratch: np.ndarray) -> int:  # fmt: skip
    """``DonorIndex.find``: the partition found (-1: none); it leaves b's index."""
    sizes = ctx[1][4]
    j = nearest(ix, b, False, desired, above, below, limit, allow_touched, okp, fit, ctx, scratch)
    found = ix[MP][b][j] if j >= 0 else -1
    if allow_touched:
        take_arrivals(ix, b, sizes)
        k = nearest(ix, b, True, desired, above, below, limit, True, okp, fit, ctx, scratch)
        if k >= 0:
            q = ix[SP][b][k]
            if found < 0 or abs(float(sizes[q]) - desired) < abs(float(sizes[found]) - desired):
                side_delete(ix, b, slot(ix[SP][b], ix[SS][b], ix[SN][b], sizes[q], q))
                return q
    if j >= 0:
        ix[MGONE][b][j] = True
        ix[MDEAD][b] += 1
    if ix[MDEAD][b] >= COMPACT:
        compact(ix, b)
    return found


@njit(cache=True)
def compact(ix: tuple, b: int) -> None:
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


@njit(cache=True)
def move_tracked(p: int, src: int, dst: int, board: tuple, dirs: tuple, ix: tuple, moves: List) -> None:
    """``ClusterState.move`` on the copies: the row, counts, bytes, the arrivals, the log dirs' tally, and p's
    replicas parked at the cap released (``ClusterState._release``: back in their indexes' side lists)."""
    R, rf, touched, sizes = board[1], board[2], board[3], board[4]
    j = move_on_board(p, src, dst, board)
    size = sizes[p]
    touched[p] = True
    if ix[PARKED].shape[0]:
        release(ix, p, size)
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


# ---------------------------------------------------------------------------------------------------- from Python


def index_record(ix: tuple) -> Any:
    """``ix`` as the kernels take it (``IndexRef``: the same lists and arrays, what a kernel changes the tuple's
    readers see)."""
    return _record(ix)


@njit(cache=True)
def _record(ix: tuple) -> Any:
    """(Built in a kernel, compiled once and cached: the constructor called from Python compiles in every process.)"""
    return IndexRef(*ix)


def indexes_of(state: ClusterState, n_b: int) -> tuple:
    """The donor indexes as the kernel holds them (``ix``): those ``state`` has, copied; the others built on first
    use in the kernel. Each broker's arrivals so far beside them."""
    ix = empty_indexes(n_b, *pairs(sorted(state.arrivals.items())), state.n_parts)
    park_all(ix, *pairs(state.parked.items()))
    held = list(state.donor_indexes.items())
    _imported(ix, np.asarray([b for b, _ in held], dtype=np.int64), *pairs((i, idx.parts) for i, (_, idx) in enumerate(held)),
              pairs((i, idx.sizes) for i, (_, idx) in enumerate(held))[1],
              *pairs((i, idx.side_parts) for i, (_, idx) in enumerate(held)),
              pairs((i, idx.side_sizes) for i, (_, idx) in enumerate(held))[1],
              np.asarray([idx.fed for _, idx in held], dtype=np.int64))  # fmt: skip
    return ix


@njit(cache=True)
def _imported(ix: tuple, brokers: np.ndarray, m_of: np.ndarray, mp: np.ndarray, ms: np.ndarray, s_of: np.ndarray,
              sp: np.ndarray, ss: np.ndarray, fed: np.ndarray) -> None:  # fmt: skip
    """Broker brokers[i]'s index from the Python one: its main list (the entries of ``mp``/``ms`` whose ``m_of`` is i,
    in order) and its side list and arrivals taken in (``side_lists_in``). (Here, not from Python: a typed list's item
    set from Python compiles its setter in every process.)"""
    m_at = np.searchsorted(m_of, np.arange(brokers.shape[0] + 1))
    for i in range(brokers.shape[0]):
        b = brokers[i]
        ix[CREATED][b] = True
        ix[MP][b], ix[MS][b] = mp[m_at[i]:m_at[i + 1]].copy(), ms[m_at[i]:m_at[i + 1]].copy()
        ix[MGONE][b] = np.zeros(m_at[i + 1] - m_at[i], np.bool_)
        ix[MN][b] = m_at[i + 1] - m_at[i]
    side_lists_in(ix, brokers, s_of, sp, ss, fed)


@njit(cache=True)
def side_lists_in(ix: tuple, brokers: np.ndarray, s_of: np.ndarray, sp: np.ndarray, ss: np.ndarray,
                  fed: np.ndarray) -> None:  # fmt: skip
    """Broker brokers[i]'s side list (the entries of ``sp``/``ss`` whose ``s_of`` is i, in order, with room for 8
    more) and how many of its arrivals it took in (``fed[i]``)."""
    s_at = np.searchsorted(s_of, np.arange(brokers.shape[0] + 1))
    for i in range(brokers.shape[0]):
        b = brokers[i]
        k = s_at[i + 1] - s_at[i]
        side_p, side_s = np.zeros(k + 8, np.int64), np.zeros(k + 8, np.int64)
        side_p[:k], side_s[:k] = sp[s_at[i]:s_at[i + 1]], ss[s_at[i]:s_at[i + 1]]
        ix[SP][b], ix[SS][b] = side_p, side_s
        ix[SN][b] = k
        ix[FED][b] = fed[i]


@njit(cache=True)
def exported(ix: tuple, brokers: np.ndarray) -> tuple:
    """The main lists' entries still there (not gone) and the side lists of ``brokers``, each concatenated, with where
    each broker's start: (main at, parts, sizes, side at, parts, sizes). (Read here: a typed list's item read from
    Python compiles its getter in every process.)"""
    n = brokers.shape[0]
    m_at, s_at = np.zeros(n + 1, np.int64), np.zeros(n + 1, np.int64)
    for i in range(n):
        b = brokers[i]
        m_at[i + 1] = m_at[i] + ix[MN][b] - np.count_nonzero(ix[MGONE][b][:ix[MN][b]])
        s_at[i + 1] = s_at[i] + ix[SN][b]
    mp, ms = np.empty(m_at[n], np.int64), np.empty(m_at[n], np.int64)
    sp, ss = np.empty(s_at[n], np.int64), np.empty(s_at[n], np.int64)
    for i in range(n):
        b = brokers[i]
        parts, sizes, gone = ix[MP][b], ix[MS][b], ix[MGONE][b]
        k = m_at[i]
        for j in range(ix[MN][b]):
            if not gone[j]:
                mp[k], ms[k] = parts[j], sizes[j]
                k += 1
        sp[s_at[i]:s_at[i + 1]] = ix[SP][b][:ix[SN][b]]
        ss[s_at[i]:s_at[i + 1]] = ix[SS][b][:ix[SN][b]]
    return m_at, mp, ms, s_at, sp, ss


def pairs(lists: Iterable[tuple[int, list[int]]]) -> tuple[np.ndarray, np.ndarray]:
    """(key, value) for every value of each key's list, in order, as two arrays (keys, values). One list extended and
    converted once: two arrays per key cost most of a second where the keys are the 53,000 partitions parked at the
    move cap (``ClusterState.parked``) at 400 brokers / 1M partitions."""
    keys: list[int] = []
    lengths: list[int] = []
    values: list[int] = []
    for k, vs in lists:
        keys.append(k)
        lengths.append(len(vs))
        values.extend(vs)
    return (np.repeat(np.asarray(keys, dtype=np.int64), np.asarray(lengths, dtype=np.int64)),
            np.asarray(values, dtype=np.int64))  # fmt: skip


@njit(cache=True)
def park_all(ix: tuple, ps: np.ndarray, bs: np.ndarray) -> None:
    """``park`` each (ps[i], bs[i]), in order."""
    for i in range(ps.shape[0]):
        park(ix, ps[i], bs[i])


@njit(cache=True)
def empty_indexes(n_b: int, arrived_b: np.ndarray, arrived_p: np.ndarray, n_p: int) -> tuple:
    """Every broker's index unbuilt, and its arrivals (``arrived_b``/``arrived_p``: pairs, by broker, in order); no
    replica parked (``park``) of ``n_p`` partitions (0: the lists never park)."""
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
            np.zeros(n_b, np.bool_), zeros.copy(), np.full(n_p, -1, np.int64), List.empty_list(types.int64))


def kernel_reads(state: ClusterState, cap: bool = False) -> bool:
    """Does a compiled goal read every veto in force, with no byte guard (and unless it reads the move cap, ``cap``:
    with no cap and no parked replica)? Else the goal runs its Python methods."""
    flags, _ = veto_flags(state)
    if flags[F_PYTHON] or flags[F_GUARD]:
        return False
    return cap or not (flags[F_CAP] or state.parked or any(idx.parked for idx in state.donor_indexes.values()))


def original_movable(state: ClusterState) -> tuple[np.ndarray, np.ndarray]:
    """Each broker's original movable replicas in partition order (what ``created`` sorts into a new index), as where
    each broker's start and the partitions."""
    movable = ~(state.frozen | state.hot)
    per = [state.broker_parts(b) for b in range(state.n_brokers)]
    per = [ps[movable[ps]] for ps in per]
    start = np.zeros(state.n_brokers + 1, dtype=np.int64)
    start[1:] = np.cumsum([len(ps) for ps in per])
    owned = np.concatenate(per).astype(np.int64) if per else np.zeros(0, dtype=np.int64)
    return start, owned


def leave_indexes(state: ClusterState, ix: tuple) -> None:
    """The indexes a kernel used, back in ``state.donor_indexes`` as the Python search would have left them."""
    from kafka_rebalance.planner.goals.base import DonorIndex

    created = np.flatnonzero(ix[CREATED]).astype(np.int64)
    m_at, mp, ms, s_at, sp, ss = exported(ix, created)
    fed = ix[FED]
    for i, b in enumerate(created.tolist()):
        old = state.donor_indexes.get(b)
        idx = old if old is not None else DonorIndex.__new__(DonorIndex)
        idx.state, idx.broker = state, b
        idx.parts, idx.sizes = mp[m_at[i] : m_at[i + 1]].tolist(), ms[m_at[i] : m_at[i + 1]].tolist()
        idx.side_parts, idx.side_sizes = sp[s_at[i] : s_at[i + 1]].tolist(), ss[s_at[i] : s_at[i + 1]].tolist()
        idx.fed = int(fed[b])
        idx.parked = set()
        state.donor_indexes[b] = idx
    log = parking_log(ix[PLOG])
    state.parked = {}
    for p, b, _, live in log.tolist():
        if live:
            state.parked.setdefault(p, []).append(b)
            state.donor_indexes[b].parked.add(p)
