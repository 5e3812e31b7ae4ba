"""Topic spread's hand-overs of first replicas, compiled (numba): the loop of ``TopicSpreadGoal.lead`` for one set
of bounds.

The rule (``TopicSpreadGoal.lead``): topic by topic, each topic's first replicas on every eligible broker within
floor..ceil of the topic's even share. First, twice over the topic's partitions in its order (smallest first), the
first time only to a replica that leads already (no election): a partition first on a broker above the bound (the
floor while any eligible broker is below it, else the ceiling) goes to the fellow replica below it that may lead,
the one first of fewest partitions first (then by broker, then by slot); directly where both stay within the
preferred-leader bounds (an ineligible giver has none), else with a partition of another topic going back, the first
the taker is first of (among the first ``PARTNER_READS`` it was ever listed first of) that the giver may lead and
whose topic's band both keep. Then, while the topic is still outside its band, chains: breadth first from the
brokers above the bound (within the bounds when giving one), each link a partition first on one broker that the next
may lead, to a broker below the bound that may take one; the chain's partitions each move one link.

In Python this was 7 s of the 400-broker plan with every goal on. Every comparison is on the same integers, so the
hand-overs are the ones the Python loop made (``tests/planner/test_goals_topic_spread.py`` holds it to the rule read
plainly). numba caches the machine code as for ``hand_overs``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["PARTNER_READS", "spread_leaders"]

PARTNER_READS = 256  # of the partitions a broker was ever listed first of, the first ones a partner is looked for in


@njit(cache=True)
def _switch(p: int, j: int, topic: np.ndarray, rows: np.ndarray, pref: np.ndarray, col: np.ndarray, per: np.ndarray,
            total: np.ndarray, listed: np.ndarray, n_listed: np.ndarray) -> None:  # fmt: skip
    a, b, u = pref[p], rows[p, j], topic[p]
    pref[p], col[p] = b, j
    per[u, a] -= 1
    per[u, b] += 1
    total[a] -= 1
    total[b] += 1
    if n_listed[b] < listed.shape[1]:
        listed[b, n_listed[b]] = p
    n_listed[b] += 1


@njit(cache=True)
def _outside(per: np.ndarray, t: int, elig: np.ndarray, lo: int, hi: int) -> tuple[bool, bool]:
    under = over = False
    for b in elig:
        under |= per[t, b] < lo
        over |= per[t, b] > hi
    return under, over


@njit(cache=True)
def _partner(t: int, a: int, b: int, topic: np.ndarray, rows: np.ndarray, electable: np.ndarray, pref: np.ndarray,
             per: np.ndarray, floor: np.ndarray, ceil: np.ndarray, listed: np.ndarray,
             n_listed: np.ndarray) -> tuple[int, int]:  # fmt: skip
    """A partition of another topic u first on b that a may lead, u's band kept on both: (partition, a's slot), or
    (-1, -1)."""
    for i in range(min(n_listed[b], listed.shape[1])):
        q = listed[b, i]
        u = topic[q]
        if pref[q] != b or u == t or per[u, b] - 1 < floor[u] or per[u, a] + 1 > ceil[u]:
            continue
        for k in range(rows.shape[1]):
            if rows[q, k] == a:
                if electable[q, k]:
                    return q, k
                break
    return -1, -1


@njit(cache=True)
def _chain(t: int, part: np.ndarray, lo: int, hi: int, topic: np.ndarray, rows: np.ndarray, electable: np.ndarray,
           frozen: np.ndarray, elig: np.ndarray, pref: np.ndarray, col: np.ndarray, per: np.ndarray, total: np.ndarray,
           g_lo: int, g_hi: int, listed: np.ndarray, n_listed: np.ndarray) -> bool:  # fmt: skip
    """One chain of topic t's first replicas (breadth first; see the module's docstring), True where one was made.
    ``part``: t's partitions in its order."""
    n, width = total.shape[0], rows.shape[1]
    under, over = _outside(per, t, elig, lo, hi)
    if not under and not over:
        return False
    bound = lo if under else hi
    # Each broker's first replicas of t, in t's order (a counting sort by broker): the lists the search walks.
    start = np.zeros(n + 1, np.int64)
    for p in part:
        if not frozen[p] and pref[p] >= 0:
            start[pref[p] + 1] += 1
    for b in range(n):
        start[b + 1] += start[b]
    fill = start[:-1].copy()
    first_on = np.empty(start[n], np.int64)
    for p in part:
        if not frozen[p] and pref[p] >= 0:
            first_on[fill[pref[p]]] = p
            fill[pref[p]] += 1
    seen = np.zeros(n, np.bool_)
    via_b = np.full(n, -1, np.int64)  # per broker reached: the broker before it, the partition and the slot
    via_p = np.full(n, -1, np.int64)
    via_j = np.full(n, -1, np.int64)
    frontier = np.empty(n, np.int64)
    k = 0
    for b in elig:
        if per[t, b] > bound and total[b] - 1 >= g_lo:
            frontier[k] = b
            seen[b] = True
            k += 1
    following = np.empty(n, np.int64)
    while k:
        m = 0
        for x in frontier[:k]:
            for i in range(start[x], start[x + 1]):
                p = first_on[i]
                for j in range(width):
                    y = rows[p, j]
                    if y < 0 or seen[y] or not electable[p, j]:
                        continue
                    seen[y] = True
                    via_b[y], via_p[y], via_j[y] = x, p, j
                    if per[t, y] < bound and total[y] + 1 <= g_hi:
                        while via_b[y] >= 0:
                            x = via_b[y]
                            _switch(via_p[y], via_j[y], topic, rows, pref, col, per, total, listed, n_listed)
                            y = x
                        return True
                    following[m] = y
                    m += 1
        frontier, following = following, frontier
        k = m
    return False


@njit(cache=True)
def spread_leaders(topic: np.ndarray, order: np.ndarray, cuts: np.ndarray, rows: np.ndarray, electable: np.ndarray,
                   frozen: np.ndarray, eligible: np.ndarray, elig: np.ndarray, leader: np.ndarray, pref: np.ndarray,
                   col: np.ndarray, n_topics: int, g_lo: int, g_hi: int) -> None:  # fmt: skip
    """Run the hand-overs on ``pref``/``col`` (each partition's first replica, broker index, and its slot; changed in
    place) within the preferred-leader bounds ``g_lo``..``g_hi``. ``topic``: each partition's topic index; topic t's
    partitions are ``order[cuts[t]:cuts[t + 1]]``, in its order; ``rows``/``electable`` partition x slot (broker index,
    -1 padded); ``frozen`` partitions no plan may change; ``eligible`` per broker, ``elig`` the eligible indexes in
    order; ``leader`` each partition's current leader (broker index)."""
    n_p, width = rows.shape
    n = eligible.shape[0]
    per = np.zeros((n_topics, n), np.int64)
    total = np.zeros(n, np.int64)
    listed = np.full((n, PARTNER_READS), -1, np.int64)  # per broker, the partitions it was listed first of, in order
    n_listed = np.zeros(n, np.int64)
    for p in range(n_p):
        if pref[p] >= 0:
            per[topic[p], pref[p]] += 1
            total[pref[p]] += 1
            if not frozen[p]:
                if n_listed[pref[p]] < PARTNER_READS:
                    listed[pref[p], n_listed[pref[p]]] = p
                n_listed[pref[p]] += 1
    k = elig.shape[0]
    floor = np.zeros(n_topics, np.int64)
    ceil = np.zeros(n_topics, np.int64)
    for t in range(n_topics):
        on = 0
        for b in elig:
            on += per[t, b]
        floor[t], ceil[t] = on // k, -(-on // k)
    options = np.empty((width, 3), np.int64)
    for t in range(n_topics):
        lo, hi = floor[t], ceil[t]
        part = order[cuts[t] : cuts[t + 1]]
        stale = True  # a switch since the band was last read
        under = over = False
        for no_election in (True, False):
            for p in part:
                if stale:  # (read every time, the same answers: a pass over the brokers per partition)
                    under, over = _outside(per, t, elig, lo, hi)
                    stale = False
                if not under and not over:
                    break
                a = pref[p]
                bound = lo if under else hi
                if frozen[p] or a < 0 or per[t, a] <= bound:
                    continue
                # The fellows below the bound that may lead, by (first replicas held, broker, slot): an insertion sort.
                m = 0
                for j in range(width):
                    b = rows[p, j]
                    if b < 0 or b == a or not electable[p, j] or not per[t, b] < bound:
                        continue
                    if no_election and leader[p] != b:
                        continue
                    i = m
                    while i > 0 and (options[i - 1, 0], options[i - 1, 1]) > (total[b], b):
                        options[i] = options[i - 1]
                        i -= 1
                    options[i, 0], options[i, 1], options[i, 2] = total[b], b, j
                    m += 1
                for i in range(m):
                    b, j = options[i, 1], options[i, 2]
                    if (not eligible[a] or total[a] - 1 >= g_lo) and total[b] + 1 <= g_hi:
                        _switch(p, j, topic, rows, pref, col, per, total, listed, n_listed)
                        stale = True
                        break
                    q, jq = _partner(t, a, b, topic, rows, electable, pref, per, floor, ceil, listed, n_listed)
                    if q >= 0:
                        _switch(p, j, topic, rows, pref, col, per, total, listed, n_listed)
                        _switch(q, jq, topic, rows, pref, col, per, total, listed, n_listed)
                        stale = True
                        break
        while _chain(t, part, lo, hi, topic, rows, electable, frozen, elig, pref, col, per, total, g_lo, g_hi, listed,
                     n_listed):  # fmt: skip
            pass
