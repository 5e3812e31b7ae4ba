"""Topic spread's replica moves, compiled (numba): the heuristic of ``TopicSpreadGoal.optimize``.

The rule (``TopicSpreadGoal``'s docstring): topic by topic, while an eligible broker holds more of the topic than its
band allows (or fewer, and another more than its floor), one replica of the topic goes from a donor to a receiver:

* Donors most over (or, with nobody over, most above their floor) first, the first ``PARTNERS``; receivers most under
  (else with most room) first; per donor, the first ``PARTNERS`` receivers of its own rack, then of the others.
* Per (donor, receiver) pair, the topic's replicas the goal may move off the donor (``movable``: replicas the plan
  brought there first, then the partitions the plan has not changed, each group smallest first) that the receiver
  does not hold: the first that every earlier goal's veto and the byte guard accept moves alone, where the count
  goal's veto allows a move between the pair; else the first of the first ``SWAP_TRIES`` that swaps with the first
  acceptable of the receiver's ``SEARCH`` partitions nearest it in size (then by partition) of a topic both brokers'
  bands of that topic allow to change (the receiver's unchanged partitions, and those the plan sent on to it).
* Where no pair has one, a chain through a third broker for the first ``CHAIN_PAIRS`` pairs: a replica of the topic
  from the third broker to the receiver, then one from the donor to the third broker.
* A pair that failed is skipped until a change touches a partition on one of its brokers (its answer cannot differ).

The vetoes of the goals that run before topic spread (placement, rack safety, disk capacity with its log dirs, the
replica counts, and the bytes goal's band through ``ByteGuard``'s rule) are read here from the arrays their owners keep
(``ClusterState``, ``DirTally``; ``veto_arrays``). Any other goal's veto is asked in Python (``_ASKED``).

The kernel works on copies and returns every ``ClusterState.move`` it made, in order (trial moves of a chain that was
put back included): replayed through ``ClusterState.move``/``restore`` (``spread``) they leave the state, and every
index that follows its changes, as the Python loop did. In Python this was 57 s of the 400-broker plan with every goal
on; compiled, 15 s; with its swap pools read by topic (``_pool``), 12.7 s. ``tests/planner/test_goals_topic_spread.py``
holds it to the rule read plainly.
"""

from __future__ import annotations

from collections import namedtuple
from typing import TYPE_CHECKING

import numpy as np
from numba import njit, objmode, types
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.experimental import structref
from numba.typed import List

from kafka_rebalance.planner.goals.compiled_state import (
    _ASKED,
    F_GUARD,
    F_PYTHON,
    _python_move,
    _python_restore,
    accepts,
    at_original,
    board_arrays,
    counts_ok,
    follow_dirs,
    held_before,
    holds,
    kernel_records,
    move_on_board,
    row_width,
    veto_arrays,
)
from kafka_rebalance.planner.goals.donor_arrays import pairs
from kafka_rebalance.planner.goals.size_walk import nearest_unsorted
from kafka_rebalance.planner.structs import Fields, register_positional

if TYPE_CHECKING:
    from kafka_rebalance.planner.state import ClusterState

__all__ = ["CHAIN_PAIRS", "PARTNERS", "SEARCH", "SWAP_TRIES", "spread", "spread_replicas"]

PARTNERS = 8  # brokers tried on each side of a topic's transfer before the topic counts as stuck
SWAP_TRIES = 16  # a topic's smallest replicas on the donor tried for a swap
SEARCH = 64  # replicas of the receiver examined per swap
CHAIN_PAIRS = 4  # (donor, receiver) pairs a chain through a third broker is looked for between

# The kernel's records, as structs read by position as the tuples they were (``structs.register_positional``): a tuple
# handed to a compiled function that is not inlined has each of its arrays' counts of references raised and lowered at
# every call, and the kernel's helpers are called millions of times at 400 brokers / 1M partitions. ``Spread``: what a
# topic's spreading keeps (``spread_replicas``); ``Pools``: where a swap looks for what goes back (``_pools``); ``Sent``:
# what the plan sent on to each broker (``_sent``); ``Buffers``: scratch space (``spread_replicas``).
Spread = namedtuple("Spread", ["held", "version", "sent", "moves", "rank", "arrived", "topic", "lo", "hi", "held_by",
                               "lo_by", "hi_by", "give", "take", "live", "at"])  # fmt: skip
Pools = namedtuple("Pools", ["start", "by_topic", "rank", "by", "at", "topic_at"])
Sent = namedtuple("Sent", ["parts", "sizes", "n", "topics", "rows", "ids", "stored"])
Buffers = namedtuple("Buffers", ["near", "seen", "stamp", "from_a", "from_x", "judged", "pool_p", "pool_s", "pair_a",
                                 "pair_r"])  # fmt: skip


class SpreadType(Fields):
    pass


class PoolsType(Fields):
    pass


class SentType(Fields):
    pass


class BuffersType(Fields):
    pass


class SpreadRef(structref.StructRefProxy):
    pass


class PoolsRef(structref.StructRefProxy):
    pass


class SentRef(structref.StructRefProxy):
    pass


class BuffersRef(structref.StructRefProxy):
    pass


register_positional(Spread, SpreadType, SpreadRef)
register_positional(Pools, PoolsType, PoolsRef)
register_positional(Sent, SentType, SentRef)
register_positional(Buffers, BuffersType, BuffersRef)


@njit(cache=True)
def _off(b: int, x: float, veto: tuple) -> float:
    return max(0.0, max(x - veto[2][b], veto[3][b] - x))


@njit(cache=True)
def _guard(b: int, d: float, flags: np.ndarray, nbytes: np.ndarray, veto: tuple) -> bool:
    """``ByteGuard.allows`` for one broker: its bytes changed by d end no further outside the byte band."""
    if not flags[F_GUARD]:
        return True
    now = float(nbytes[b])
    return _off(b, now + d, veto) <= _off(b, now, veto) + 0.5


# ---------------------------------------------------------------------------------------------------- changes


@njit(cache=True)
def _slack_bits(b: int, u: int, spread: tuple) -> None:
    """Broker b's bits of topic u: may it give one (above its floor of u), may it take one (below its ceiling)?"""
    held, lo_u, hi_u, give, take = spread[9], spread[10], spread[11], spread[12], spread[13]
    w, bit = u >> 6, np.uint64(1) << np.uint64(u & 63)
    give[b, w] = give[b, w] | bit if held[b, u] > lo_u[b, u] else give[b, w] & ~bit
    take[b, w] = take[b, w] | bit if held[b, u] < hi_u[b, u] else take[b, w] & ~bit


@njit(cache=True)
def _move(p: int, src: int, dst: int, board: tuple, dirs: tuple, spread: tuple) -> None:
    """``ClusterState.move`` on the copies, with what follows it: the topic tallies, the brokers' versions, the
    arrivals, the log dirs' tally (``DirTally.catch_up``), and the record of moves."""
    now, R, rf, touched, sizes = board[0], board[1], board[2], board[3], board[4]
    topic = board[10]
    held, version, sent, moves = spread[0], spread[1], spread[2], spread[3]
    j = move_on_board(p, src, dst, board)
    size = sizes[p]
    _set_touched(p, True, touched, spread)
    u = topic[p]
    held[u, src] -= 1
    held[u, dst] += 1
    spread[9][src, u] -= 1
    spread[9][dst, u] += 1
    _slack_bits(src, u, spread)
    _slack_bits(dst, u, spread)
    version[src] += 1
    for k in range(row_width(now, p)):
        version[now[p, k]] += 1
    if not board[11][p]:  # the partitions sent on to each broker (``_arrive``): p leaves src's, joins dst's
        if held_before(R, rf, p, src) < 0:
            _unlist(sent, src, p, float(size), u)
        if held_before(R, rf, p, dst) < 0:
            _arrive(sent, dst, p, float(size), u, now[p])
    if u == spread[6][0] and not board[9][p]:  # the topic being spread: the brokers p arrived on (``_movable``)
        if held_before(R, rf, p, src) < 0:
            _unrank(spread[5], src, p, spread[4])
        if held_before(R, rf, p, dst) < 0:
            _rank(spread[5], dst, p, spread[4])
    follow_dirs(p, j, src, dst, size, R, rf, dirs)
    moves.append(p)
    moves.append(src)
    moves.append(dst)
    if spread[6][1]:
        with objmode():
            _python_move(p, src, dst)


@njit(cache=True)
def _restore(p: int, board: tuple, spread: tuple) -> None:
    """``ClusterState.restore``: a row back to its original order is no change."""
    now, R, rf, touched = board[0], board[1], board[2], board[3]
    if spread[6][1]:
        with objmode():
            _python_restore(p)
    if at_original(now, R, rf, p):
        _set_touched(p, False, touched, spread)


@njit(cache=True)
def _set_touched(p: int, value: bool, touched: np.ndarray, spread: tuple) -> None:
    """p changed by the plan (or back as it was), and its entries in the swap pools with it (``spread[14]``, by the
    positions ``spread[15]``): a pool reads them in order, where ``touched`` of each entry's partition was a random
    read."""
    touched[p] = value
    live, at = spread[14], spread[15]
    for j in range(at.shape[1]):
        if at[p, j] >= 0:
            live[at[p, j]] = not value


# ---------------------------------------------------------------------------------------------------- the searches


@njit(cache=True)
def _ranked(parts: np.ndarray, k: int, p: int, rank: np.ndarray) -> int:
    lo, hi = 0, k
    while lo < hi:
        mid = (lo + hi) // 2
        if rank[parts[mid]] < rank[p]:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def _rank(arrived: tuple, b: int, p: int, rank: np.ndarray) -> None:
    """p (of the topic being spread) arrived on b: listed there by its rank in the topic."""
    parts, n = arrived[0][b], arrived[1]
    k = n[b]
    if k == parts.shape[0]:
        grown = np.empty(2 * k + 8, np.int64)
        grown[:k] = parts[:k]
        arrived[0][b] = grown
        parts = grown
    i = _ranked(parts, k, p, rank)
    for x in range(k, i, -1):
        parts[x] = parts[x - 1]
    parts[i] = p
    n[b] = k + 1


@njit(cache=True)
def _unrank(arrived: tuple, b: int, p: int, rank: np.ndarray) -> None:
    parts, n = arrived[0][b], arrived[1]
    k = n[b]
    i = _ranked(parts, k, p, rank)
    if i < k and parts[i] == p:
        for x in range(i, k - 1):
            parts[x] = parts[x + 1]
        n[b] = k - 1


@njit(cache=True)
def _movable(b: int, part: np.ndarray, kept_start: np.ndarray, kept: np.ndarray, board: tuple, spread: tuple,
             out: np.ndarray) -> int:  # fmt: skip
    """Topic t's replicas on b the goal may move, in order, into ``out``: arrivals (changed partitions b holds and
    did not before, kept by ``_rank``) first, then b's unchanged partitions, each smallest first. Returns how many."""
    touched = board[3]
    n = spread[5][1][b]
    out[:n] = spread[5][0][b][:n]
    for i in range(kept_start[b], kept_start[b + 1]):
        p = part[kept[i]]
        if not touched[p]:
            out[n] = p
            n += 1
    return n


@njit(cache=True)
def _single(cand: np.ndarray, k: int, a: int, r: int, flags: np.ndarray, board: tuple, veto: tuple, dirs: tuple,
            spread: tuple) -> bool:  # fmt: skip
    if k == 0 or not counts_ok(a, r, flags, board, veto):
        return False
    sizes, nbytes = board[4], board[6]
    for i in range(k):
        p = cand[i]
        x = float(sizes[p])
        if _guard(a, -x, flags, nbytes, veto) and _guard(r, x, flags, nbytes, veto) and \
                accepts(p, a, r, False, flags, board, veto, dirs):
            _move(p, a, r, board, dirs, spread)
            _restore(p, board, spread)
            return True
    return False


@njit(cache=True)
def _span(a: int, r: int, nbytes: np.ndarray, veto: tuple) -> tuple[float, float]:
    """``ByteGuard.moved_span``: bytes moved from a to r outside this span are never allowed (a byte and a billionth
    wider, so rounding only lets more through)."""
    upper, lower = veto[2], veto[3]
    now_a, now_r = float(nbytes[a]), float(nbytes[r])
    c_a, c_r = _off(a, now_a, veto) + 0.5, _off(r, now_r, veto) + 0.5
    lo = max(now_a - upper[a] - c_a, lower[r] - c_r - now_r)
    hi = min(now_a - lower[a] + c_a, upper[r] + c_r - now_r)
    slack = 1.0 + 1e-9 * max(max(abs(now_a), abs(now_r)), max(abs(upper[a]), abs(upper[r])))
    return lo - slack, hi + slack


@njit(cache=True)
def _slot(parts: np.ndarray, sizes: np.ndarray, topics: np.ndarray, n: int, p: int, size: float, u: int) -> int:
    """Where p (of ``size``, topic u) sits, or would, among the first n of lists kept by (topic, size, partition)."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if topics[mid] < u or (topics[mid] == u and (sizes[mid] < size or (sizes[mid] == size and parts[mid] < p))):
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def _arrive(sent: tuple, b: int, p: int, size: float, u: int, row: np.ndarray) -> None:
    """p (of topic u, row now ``row``) joins the partitions sent on to broker b (``spread_replicas``; once)."""
    parts, sizes, n = sent[0][b], sent[1][b], sent[2]
    k = n[b]
    i = _slot(parts, sizes, sent[3][b], k, p, size, u)
    if i < k and parts[i] == p:
        return
    if k == parts.shape[0]:  # full: twice the room
        room = 2 * k + 8
        grown_p, grown_s, grown_t = np.empty(room, np.int64), np.empty(room, np.float64), np.empty(room, np.int64)
        grown_i = np.empty(room, np.int64)
        grown_p[:k], grown_s[:k], grown_t[:k], grown_i[:k] = parts[:k], sizes[:k], sent[3][b][:k], sent[5][b][:k]
        sent[0][b], sent[1][b], sent[3][b], sent[5][b] = grown_p, grown_s, grown_t, grown_i
        parts, sizes = grown_p, grown_s
    rows, stored = sent[4][b], sent[6]
    if stored[b] == rows.shape[0]:
        grown_r = np.full((2 * rows.shape[0] + 8, row.shape[0]), -1, np.int64)
        grown_r[:stored[b]] = rows[:stored[b]]
        sent[4][b] = grown_r
        rows = grown_r
    topics, ids = sent[3][b], sent[5][b]
    for x in range(k, i, -1):
        parts[x], sizes[x], topics[x], ids[x] = parts[x - 1], sizes[x - 1], topics[x - 1], ids[x - 1]
    parts[i], sizes[i], topics[i], ids[i] = p, size, u, stored[b]
    for j in range(rows.shape[1]):
        rows[stored[b], j] = row[j]
    stored[b] += 1
    n[b] = k + 1


@njit(cache=True)
def _unlist(sent: tuple, b: int, p: int, size: float, u: int) -> None:
    parts, sizes, topics, ids, n = sent[0][b], sent[1][b], sent[3][b], sent[5][b], sent[2]
    k = n[b]
    i = _slot(parts, sizes, topics, k, p, size, u)
    if i < k and parts[i] == p:
        for x in range(i, k - 1):
            parts[x], sizes[x], topics[x], ids[x] = parts[x + 1], sizes[x + 1], topics[x + 1], ids[x + 1]
        n[b] = k - 1


@njit(cache=True, inline="always")
def _first_of(keys: np.ndarray, lo: int, hi: int, u: int) -> int:
    """The first of ``keys[lo:hi]`` (sorted) not below u, hi where none: ``searchsorted`` without the slice (a view
    raises and lowers its array's count of references)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if keys[mid] < u:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def _pool(t: int, a: int, r: int, pools: tuple, sent: tuple, spread: tuple, out_p: np.ndarray,
          out_s: np.ndarray) -> int:  # fmt: skip
    """r's partitions that may go back to a in a swap for topic t and their sizes, into ``out_p``/``out_s``, in no
    order (``nearest_unsorted`` reads them so): its unchanged partitions (``pools[1]``) and
    those sent on to it (``sent``), each of a topic both brokers' bands allow to change and not on a already. Returns
    how many.

    Few topics have such slack on both brokers (at 400 brokers / 1M partitions, 3 % of r's partitions passed). They are
    read off bits kept per broker (``_slack_bits``), both lists are read by topic for those topics only (``pools[1]``,
    r's entries by topic, each topic's found through ``pools[5]``; the sent ones are kept by topic): scanning r's whole
    pool per swap was a third of the kernel's time. Most pools serve only to show that nothing is within the byte guard's reach (``_swap``)."""
    t_part, t_rows, t_size = pools[1][1], pools[1][2], pools[1][3]
    topic_at = pools[5]
    n_t = topic_at.shape[1] - 1
    live = spread[14]
    give, take = spread[12][r], spread[13][a]
    n_sent = sent[2][r]
    sent_p, sent_s, sent_t, sent_r, sent_i = sent[0][r], sent[1][r], sent[3][r], sent[4][r], sent[5][r]
    n = 0
    for w in range(give.shape[0]):
        both = give[w] & take[w]
        while both:
            u = (w << 6) + trailing_zeros(both)  # type: ignore[call-arg]  # (a numba intrinsic: its typing context is implicit)
            both &= both - np.uint64(1)
            if u == t:
                continue
            if u < n_t:
                for i in range(topic_at[r, u], topic_at[r, u + 1]):
                    if live[i] and not holds(t_rows, i, a):
                        out_p[n], out_s[n] = t_part[i], t_size[i]
                        n += 1
            y = _first_of(sent_t, 0, n_sent, u)
            while y < n_sent and sent_t[y] == u:
                if not holds(sent_r, sent_i[y], a):
                    out_p[n], out_s[n] = sent_p[y], sent_s[y]
                    n += 1
                y += 1
    return n


@njit(cache=True)
def _within(sizes: np.ndarray, n: int, lo: float, hi: float) -> bool:
    for i in range(n):
        if lo <= sizes[i] <= hi:
            return True
    return False


@njit(cache=True)
def _swap(t: int, cand: np.ndarray, k: int, a: int, r: int, flags: np.ndarray, board: tuple, veto: tuple,
          dirs: tuple, spread: tuple, pools: tuple, buf: tuple) -> bool:  # fmt: skip
    """p (topic t) a -> r and q (another topic) r -> a, counts unchanged: q among r's partitions nearest p in size."""
    sizes, nbytes = board[4], board[6]
    qs, pool_p, pool_s = buf[0], buf[6], buf[7]
    n_pool = -1  # r's partitions that may go back (``_pool``), read for the first candidate that needs them
    span_lo, span_hi = _span(a, r, nbytes, veto) if flags[F_GUARD] else (-np.inf, np.inf)
    for i in range(k):
        p = cand[i]
        sp = float(sizes[p])
        # No partition that may go back within the guard's reach of p: none passes it (the answer, sooner). Once the
        # pool is read that test comes first: it turns down nineteen in twenty of the candidates the vetoes accept
        # (their 835,000 calls were a fifth of the kernel's time at 400 brokers / 1M partitions).
        if n_pool < 0:
            if not accepts(p, a, r, True, flags, board, veto, dirs):
                continue
            n_pool = _pool(t, a, r, pools, spread[2], spread, pool_p, pool_s)
            if flags[F_GUARD] and not _within(pool_s, n_pool, sp - span_hi, sp - span_lo):
                continue
        elif (flags[F_GUARD] and not _within(pool_s, n_pool, sp - span_hi, sp - span_lo)) or \
                not accepts(p, a, r, True, flags, board, veto, dirs):
            continue
        n = nearest_unsorted(sp, pool_p, pool_s, n_pool, qs)
        for q in qs[:n]:
            m = sp - float(sizes[q])
            if not (_guard(a, -m, flags, nbytes, veto) and _guard(r, m, flags, nbytes, veto)):
                continue
            if accepts(q, r, a, True, flags, board, veto, dirs):
                _move(p, a, r, board, dirs, spread)
                _move(q, r, a, board, dirs, spread)
                _restore(p, board, spread)
                _restore(q, board, spread)
                return True
    return False


@njit(cache=True)
def _first_off(items: np.ndarray, n: int, b: int, now: np.ndarray, out: np.ndarray) -> int:
    """The indexes of the first ``SWAP_TRIES`` of ``items[:n]`` that broker b does not hold, into ``out``; how many."""
    k = 0
    for i in range(n):
        if k == SWAP_TRIES:
            break
        if not holds(now, items[i], b):
            out[k] = i
            k += 1
    return k


@njit(cache=True)
def _chain(t: int, a: int, r: int, flags: np.ndarray, board: tuple, veto: tuple, dirs: tuple, spread: tuple,
           topic_lists: tuple, buf: tuple) -> bool:  # fmt: skip
    """q (topic t) x -> r, then p (topic t) a -> x: a loses one of t, r gains one, x ends as it was. The later move
    is made first, so no broker's count leaves its range on the way; where p may not follow, q goes back."""
    now, sizes, nbytes, elig = board[0], board[4], board[6], board[12]
    part, kept_start, kept = topic_lists
    from_a, from_x = buf[3], buf[4]
    n_a = _movable(a, part, kept_start, kept, board, spread, from_a)
    a_ok = np.zeros(n_a, np.bool_)
    for i in range(n_a):
        a_ok[i] = _guard(a, -float(sizes[from_a[i]]), flags, nbytes, veto)
    if not a_ok.any():
        return False
    buf[2][0] += 1
    stamp = buf[2][0]
    r_seen, r_val = buf[1], buf[5]
    inward = np.empty(SWAP_TRIES, np.int64)
    picked = np.empty(SWAP_TRIES, np.int64)
    for x in elig:
        if x == a or x == r or not counts_ok(x, r, flags, board, veto):
            continue
        m = 0
        for i in picked[:_first_off(from_a, n_a, x, now, picked)]:
            if a_ok[i]:
                inward[m] = from_a[i]
                m += 1
        if m == 0:
            continue
        n_x = _movable(x, part, kept_start, kept, board, spread, from_x)
        for i in picked[:_first_off(from_x, n_x, r, now, picked)]:
            q = from_x[i]
            sq = float(sizes[q])
            if r_seen[q] != stamp:
                r_seen[q] = stamp
                r_val[q] = _guard(r, sq, flags, nbytes, veto)
            if not r_val[q] or not accepts(q, x, r, False, flags, board, veto, dirs):
                continue
            for p in inward[:m]:
                if p == q or not _guard(x, float(sizes[p]) - sq, flags, nbytes, veto):
                    continue
                _move(q, x, r, board, dirs, spread)
                if accepts(p, a, x, False, flags, board, veto, dirs):
                    _move(p, a, x, board, dirs, spread)
                    _restore(p, board, spread)
                    _restore(q, board, spread)
                    return True
                _move(q, r, x, board, dirs, spread)
                _restore(q, board, spread)
                break
    return False


@njit(cache=True)
def _neediest(elig: np.ndarray, need: np.ndarray, among: np.ndarray, out: np.ndarray, start: np.ndarray) -> int:
    """``elig`` where ``among``, by ``need`` there, most first (ties in the order of ``elig``), into ``out``; how many.
    A counting sort, the needs being counts of one topic's replicas (a stable sort per transfer was a tenth of the
    kernel's time), into buffers the caller keeps (``start``: the counts, grown here where too short): the arrays a
    transfer's two rankings allocated were a fifth of it at 400 brokers / 1M partitions."""
    n = 0
    top, low = 0, 0
    for i in range(elig.shape[0]):
        if among[i]:
            x = need[i]
            if n == 0 or x > top:
                top = x
            if n == 0 or x < low:
                low = x
            n += 1
    if n == 0:
        return 0
    span = top - low + 2
    if span > start.shape[0]:
        start = np.zeros(span, np.int64)
    else:
        start[:span] = 0
    for i in range(elig.shape[0]):
        if among[i]:
            start[top - need[i] + 1] += 1
    for k in range(1, span):
        start[k] += start[k - 1]
    for i in range(elig.shape[0]):
        if among[i]:
            k = top - need[i]
            out[start[k]] = elig[i]
            start[k] += 1
    return n


@njit(cache=True)
def _neediest_first(elig: np.ndarray, need: np.ndarray, among: np.ndarray, out: np.ndarray, m: int) -> int:
    """The first m of ``_neediest``'s ranking into ``out`` (an insertion into m places per broker that ranks: donors
    are read no further than ``PARTNERS``); how many."""
    n = 0
    for i in range(elig.shape[0]):
        if not among[i]:
            continue
        x = need[i]
        if n == m and need[out[n - 1]] >= x:
            continue
        j = n if n < m else m - 1  # (``out`` holds indexes into elig while it ranks)
        while j > 0 and need[out[j - 1]] < x:
            out[j] = out[j - 1]
            j -= 1
        out[j] = i
        n = min(n + 1, m)
    for j in range(n):
        out[j] = elig[out[j]]
    return n


@njit(cache=True)
def _transfer(t: int, donors: np.ndarray, receivers: np.ndarray, flags: np.ndarray, board: tuple, veto: tuple,
              dirs: tuple, spread: tuple, pools: tuple, topic_lists: tuple, buf: tuple,
              failed: dict) -> bool:  # fmt: skip
    """One replica of topic t from a donor to a receiver: alone, in a swap, or through a third broker."""
    now, rack = board[0], board[8]
    version = spread[1]
    part, kept_start, kept = topic_lists
    n_b = rack.shape[0]
    pair_a, pair_r = buf[8], buf[9]
    n = 0
    for a in donors:
        taken = 0
        for r in receivers:  # its own rack's receivers first, then the others', PARTNERS in all
            if taken == PARTNERS:
                break
            if rack[r] == rack[a]:
                pair_a[n], pair_r[n] = a, r
                n += 1
                taken += 1
        for r in receivers:
            if taken == PARTNERS:
                break
            if rack[r] != rack[a]:
                pair_a[n], pair_r[n] = a, r
                n += 1
                taken += 1
    from_a, cand = buf[3], buf[4]
    for i in range(n):
        a, r = pair_a[i], pair_r[i]
        key = a * n_b + r
        stamp = (version[a] << 32) | version[r]
        if key in failed and failed[key] == stamp:
            continue
        n_a = _movable(a, part, kept_start, kept, board, spread, from_a)
        k = 0
        for j in range(n_a):
            if not holds(now, from_a[j], r):
                cand[k] = from_a[j]
                k += 1
        if _single(cand, k, a, r, flags, board, veto, dirs, spread) or \
                _swap(t, cand, min(k, SWAP_TRIES), a, r, flags, board, veto, dirs, spread, pools, buf):
            return True
        failed[key] = stamp
    for i in range(min(n, CHAIN_PAIRS)):
        if _chain(t, pair_a[i], pair_r[i], flags, board, veto, dirs, spread, topic_lists, buf):
            return True
    return False


@njit(cache=True)
def _topic_lists(t: int, order: np.ndarray, cuts: np.ndarray, board: tuple, spread: tuple) -> tuple:
    """Topic t's movable partitions in its order (smallest first), with the ranks per broker of its original rows (a
    counting sort); each one's rank and, per broker, the changed ones that arrived there are set in ``spread``."""
    now, R, rf, touched, unmovable = board[0], board[1], board[2], board[3], board[9]
    n_b = board[5].shape[0]
    rank = spread[4]
    spread[6][0] = t
    spread[5][1][:] = 0
    ps = order[cuts[t]:cuts[t + 1]]
    part = ps[~unmovable[ps]]
    kept_start = np.zeros(n_b + 1, np.int64)
    for i in range(part.shape[0]):
        p = part[i]
        rank[p] = i
        for j in range(rf[p]):
            kept_start[R[p, j] + 1] += 1
        if touched[p]:
            for j in range(row_width(now, p)):
                if held_before(R, rf, p, now[p, j]) < 0:
                    _rank(spread[5], now[p, j], p, rank)
    for b in range(n_b):
        kept_start[b + 1] += kept_start[b]
    fill = kept_start[:-1].copy()
    kept = np.empty(kept_start[n_b], np.int64)
    for i in range(part.shape[0]):
        p = part[i]
        for j in range(rf[p]):
            kept[fill[R[p, j]]] = i
            fill[R[p, j]] += 1
    return part, kept_start, kept


@njit(cache=True)
def _pools(R: np.ndarray, rf: np.ndarray, sizes: np.ndarray, topic: np.ndarray, unmovable: np.ndarray,
           n_b: int) -> tuple:  # fmt: skip
    """Where a swap looks for what goes back: per broker ([0], where each one's entries start), the movable partitions
    of its original rows by (topic, size, partition), with their topics, rows and sizes beside them ([1]); [2] each
    partition's rank by (size, partition), [3] the partitions in that order; [4], per partition and slot of its
    original row, where its entry in [1] is (-1: none); and [5], per broker and topic, where its entries of the topic
    start in [1] (a topic's end: the next topic's start)."""
    by = np.argsort(sizes, kind="mergesort")  # (stable: by size, then partition)
    rank = np.empty(sizes.shape[0], np.int64)
    rank[by] = np.arange(sizes.shape[0])
    start = np.zeros(n_b + 1, np.int64)
    for p in range(R.shape[0]):
        if not unmovable[p]:
            for j in range(rf[p]):
                start[R[p, j] + 1] += 1
    for b in range(n_b):
        start[b + 1] += start[b]
    fill = start[:-1].copy()
    parts = np.empty(start[n_b], np.int64)
    rows = np.full((start[n_b], R.shape[1]), -1, R.dtype)
    for p in by:
        if not unmovable[p]:
            for j in range(rf[p]):
                x = fill[R[p, j]]
                parts[x] = p
                rows[x, :rf[p]] = R[p, :rf[p]]
                fill[R[p, j]] += 1
    # each broker's entries by topic (a stable counting sort within its range: by (size, partition) within a topic)
    n_t = int(topic.max()) + 1 if topic.shape[0] else 1
    by_t = np.empty(start[n_b], np.int64)
    topic_at = np.empty((n_b, n_t + 1), np.int64)  # broker b's entries of topic u: topic_at[b, u] to topic_at[b, u + 1]
    for b in range(n_b):
        count = np.zeros(n_t + 1, np.int64)
        for x in range(start[b], start[b + 1]):
            count[topic[parts[x]] + 1] += 1
        for u in range(n_t):
            count[u + 1] += count[u]
        topic_at[b] = start[b] + count
        for x in range(start[b], start[b + 1]):
            u = topic[parts[x]]
            by_t[start[b] + count[u]] = x
            count[u] += 1
    by_topic = (topic[parts[by_t]], parts[by_t], rows[by_t], sizes[parts[by_t]].astype(np.float64))
    at = np.full(R.shape, -1, np.int64)  # per partition and slot of its original row, its entry in [1]
    for b in range(n_b):
        for i in range(start[b], start[b + 1]):
            p = by_topic[1][i]
            for j in range(rf[p]):
                if R[p, j] == b:
                    at[p, j] = i
    return start, by_topic, rank, by, at, topic_at


@njit(cache=True)
def _sent(arrived_b: np.ndarray, arrived_p: np.ndarray, board: tuple, rank: np.ndarray, ranked: np.ndarray,
          n_b: int) -> tuple:  # fmt: skip
    """Per broker, the partitions the plan sent on to it (moved there, still there, not its own before the plan, not
    hot) by (topic, size, partition), with their sizes and topics, and how many ([0] to [3]); [4], [5], [6]: per
    broker, the rows as they were on arrival, each entry's row there, and how many rows are kept. Where a swap also
    looks for what goes back. Built at once from every move onto a broker so far (``arrived_b``/``arrived_p``): by
    broker, then by topic and rank (inserted one by one, the lists' shifting was a sixth of the kernel's time at 400
    brokers / 1M partitions). The rows stay where they were written and an entry keeps its row's index: shifting them
    with the entries was 8 % of the kernel's time."""
    now, R, rf, sizes, hot, topic = board[0], board[1], board[2], board[4], board[11], board[10]
    keep = np.zeros(arrived_b.shape[0], np.bool_)
    count = np.zeros(n_b + 1, np.int64)
    for i in range(arrived_b.shape[0]):
        b, p = arrived_b[i], arrived_p[i]
        if not hot[p] and holds(now, p, b) and held_before(R, rf, p, b) < 0:
            keep[i] = True
            count[b + 1] += 1
    for b in range(n_b):
        count[b + 1] += count[b]
    n_p = rank.shape[0]
    by_b = np.empty(count[n_b], np.int64)  # the kept as topic * n_p + rank, by broker
    fill = count[:-1].copy()
    for i in range(arrived_b.shape[0]):
        if keep[i]:
            by_b[fill[arrived_b[i]]] = topic[arrived_p[i]] * n_p + rank[arrived_p[i]]
            fill[arrived_b[i]] += 1
    parts = List()
    sizes_l = List()
    topics = List()
    rows = List()
    ids = List()
    n = np.zeros(n_b, np.int64)
    for b in range(n_b):
        ranks = np.sort(by_b[count[b]:count[b + 1]])
        room = ranks.shape[0] + 8
        bp, bs, bt, br = np.empty(room, np.int64), np.empty(room, np.float64), np.empty(room, np.int64), \
            np.full((room, now.shape[1]), -1, np.int64)
        k = 0
        for i in range(ranks.shape[0]):
            if i > 0 and ranks[i] == ranks[i - 1]:  # listed once (a partition may arrive twice)
                continue
            p = ranked[ranks[i] % n_p]
            bp[k], bs[k], bt[k] = p, float(sizes[p]), topic[p]
            br[k] = now[p]
            k += 1
        parts.append(bp)
        sizes_l.append(bs)
        topics.append(bt)
        rows.append(br)
        ids.append(np.arange(room))
        n[b] = k
    return parts, sizes_l, n, topics, rows, ids, n.copy()


@njit(cache=True)
def spread_replicas(todo: np.ndarray, order: np.ndarray, cuts: np.ndarray, flags: np.ndarray, board: tuple,
                    veto: tuple, dirs: tuple, held: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                    arrived_b: np.ndarray, arrived_p: np.ndarray) -> np.ndarray:  # fmt: skip
    """Spread each topic of ``todo`` (topic indexes, in order) into its band; the moves made, in order, as rows of
    (partition, from, to). ``order[cuts[t]:cuts[t + 1]]``: topic t's partitions by (size, partition). ``board``,
    ``veto`` and ``dirs`` (copies: changed here) as ``board_arrays`` and ``veto_arrays`` build them; ``held``,
    ``lo``, ``hi``: per topic and broker, its replicas (changed here) and band; ``arrived_b``/``arrived_p``: every
    move onto a broker so far (``ClusterState.arrivals``), as pairs."""
    R, rf, sizes, counts, elig = board[1], board[2], board[4], board[5], board[12]
    n_p, n_b = R.shape[0], counts.shape[0]
    # (the proxies are the kernels' structs: typed as the namedtuples they are read as)
    pools: Pools = PoolsRef(*_pools(R, rf, sizes, board[10], board[9], n_b))  # type: ignore[assignment]
    sent: Sent = SentRef(*_sent(arrived_b, arrived_p, board, pools[2], pools[3], n_b))  # type: ignore[assignment]
    moves = List.empty_list(types.int64)
    # The topic being spread: each partition's rank in it, and per broker the changed ones that arrived there.
    arrived_on = List()
    for _ in range(n_b):
        arrived_on.append(np.empty(8, np.int64))
    # The topic counts and bands (by topic, and by broker: a swap reads two brokers' counts of many topics), the
    # brokers' versions (``_transfer``), what was sent on to each broker (``_arrive``), the moves made, the topic being
    # spread (ranks, arrivals; ``_topic_lists``), [6]: that topic, and whether the state follows every move, and [12],
    # [13]: per broker, the topics it may give one of and take one of, as bits (``_slack_bits``); [14], [15]: which
    # entries of the swap pools are of partitions the plan has not changed, and where each partition's are.
    words = (held.shape[0] + 63) // 64
    spread: Spread = SpreadRef(  # type: ignore[assignment]
        held, np.zeros(n_b, np.int64), sent, moves, np.zeros(n_p, np.int64), (arrived_on, np.zeros(n_b, np.int64)),
        np.array([-1, flags[F_PYTHON]]), lo, hi, held.T.copy(), lo.T.copy(), hi.T.copy(), np.zeros((n_b, words), np.uint64),
        np.zeros((n_b, words), np.uint64), ~board[3][pools[1][1]], pools[4])
    for b in range(n_b):
        for u in range(held.shape[0]):
            _slack_bits(b, u, spread)
    width = max(1, int((cuts[1:] - cuts[:-1]).max()) if cuts.shape[0] > 1 else 1)
    # a swap's nearest partners, the chain's marks of replicas judged and a stamp, two lists of movable replicas, the
    # chain's judgements, a swap's pool (partitions, sizes), and a transfer's (donor, receiver) pairs
    buf: Buffers = BuffersRef(  # type: ignore[assignment]
        np.empty(SEARCH, np.int64), np.zeros(n_p, np.int64), np.zeros(1, np.int64), np.empty(width, np.int64),
        np.empty(width, np.int64), np.zeros(n_p, np.bool_), np.empty(n_p, np.int64), np.empty(n_p, np.float64),
        np.empty(PARTNERS * PARTNERS, np.int64), np.empty(PARTNERS * PARTNERS, np.int64))
    # the rankings' buffers (``_neediest``): per eligible broker a need and whether it ranks, for donors and receivers,
    # the two rankings, and the counting sort's counts
    n_e = elig.shape[0]
    need_d, need_r = np.empty(n_e, np.int64), np.empty(n_e, np.int64)
    among_d, among_r = np.empty(n_e, np.bool_), np.empty(n_e, np.bool_)
    donors, receivers, counts_buf = np.empty(n_e, np.int64), np.empty(n_e, np.int64), np.zeros(64, np.int64)
    for t in todo:
        topic_lists = _topic_lists(t, order, cuts, board, spread)
        failed = dict()
        failed[-1] = -1
        lo_t, hi_t = lo[t][elig], hi[t][elig]
        while True:
            # Donors most over the band (with nobody over, most above their floor) first; receivers most under
            # (else with most room) first: each as ``need`` and ``among`` of ``_neediest``.
            over = under = False
            for i in range(n_e):
                x = held[t, elig[i]]
                over |= x > hi_t[i]
                under |= x < lo_t[i]
            if not (over or under):
                break
            for i in range(n_e):
                x = held[t, elig[i]]
                if over:
                    need_d[i], among_d[i] = x - hi_t[i], x > hi_t[i]
                    need_r[i], among_r[i] = hi_t[i] - x, x < lo_t[i] if under else x < hi_t[i]
                else:
                    need_d[i], among_d[i] = x - lo_t[i], x > lo_t[i]
                    need_r[i], among_r[i] = lo_t[i] - x, x < lo_t[i]
            n_d = _neediest_first(elig, need_d, among_d, donors, PARTNERS)
            n_r = _neediest(elig, need_r, among_r, receivers, counts_buf)
            if not _transfer(t, donors[:n_d], receivers[:n_r], flags, board, veto, dirs, spread, pools,
                             topic_lists, buf, failed):  # fmt: skip
                break
    out = np.empty(len(moves), np.int64)
    for i in range(len(moves)):
        out[i] = moves[i]
    return out.reshape(-1, 3)


# ---------------------------------------------------------------------------------------------------- from Python

def spread(state: ClusterState, todo: np.ndarray, order: np.ndarray, cuts: np.ndarray, topic: np.ndarray,
           held: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:  # fmt: skip
    """Run the kernel on ``state`` (see ``spread_replicas``) and make its moves there."""
    flags, veto, dirs, asked = veto_arrays(state)
    arrived_b, arrived_p = pairs(sorted(state.arrivals.items()))
    board = board_arrays(state, topic, flags)
    args = (todo.astype(np.int64), order, cuts, flags, *kernel_records(board, veto, dirs), held.astype(np.int64),
            lo.astype(np.int64), hi.astype(np.int64), arrived_b, arrived_p)  # fmt: skip
    if asked is not None:  # the state made every move as the kernel did
        _ASKED.append(asked)
        try:
            spread_replicas(*args)
        finally:
            _ASKED.pop()
        return
    moves = spread_replicas(*args)
    # Every move at once, where the kernel left the rows (``board[0]``, its copy of ``state.now``), then each moved
    # partition back as it was forgotten (a swap back, or a chain put back, is no change): the state ``move`` and
    # ``restore`` per move leave, without 280,000 calls of each at 400 brokers / 1M partitions.
    state.move_all(moves, board[0])
    for p in dict.fromkeys(moves[:, 0].tolist()):
        state.restore(p)
