"""Network out's hand-overs of first replicas, compiled (numba): the whole loop of ``NetworkOutGoal.lead``.

The rule (docs/PLANNER.md, "Network in and out"): while an eligible broker's network out is above its band, take
the brokers above it, furthest above first (ties in broker order), and from the first of them that has one make
one hand-over. A broker's first replicas are read in its list's order (hottest first as the goal began, then each
one handed to it appended in turn), each partition's slots left to right; a slot takes the lead where its broker
is eligible, may lead (electable) and is not the giver, the partition sends something, and its traffic is under
twice the smaller of the giver's excess over its share and the taker's room under its share. It takes it directly
where the giver stays at or above the preferred-leader floor and the taker at or below the ceiling; else only where
the taker is first of a cooler partition the giver could lead, and the first such partition of the taker's list
goes back to the giver (both counts unchanged).

In Python (with an index sparing most re-reads) this loop took 20 s of the 400-broker plan with every goal on.
Compiled, it keeps the same skips in arrays (``hand_overs``' docstring). Every figure is the same float64 arithmetic
in the same order as the Python loop's, so the hand-overs are the ones it made. numba caches the machine code beside
this file (in its user-wide cache where that is read-only, or NUMBA_CACHE_DIR): the first run on a machine compiles
it (about 5 s of CPU here); later runs load it (about 1.4 s with numba's own import).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["hand_overs"]

# A list is linked through ``nxt``/``prv`` (-1: none) with per-list ``head``/``tail``. Each broker's first replicas are
# one list of partitions; each (broker, fellow broker) pair one list of slots (partition x width + slot) of the
# broker's partitions that have a replica on the fellow, in the same order.


@njit(cache=True, inline="always")
def _splice(i: int, owner: int, join: bool, nxt: np.ndarray, prv: np.ndarray, head: np.ndarray,
            tail: np.ndarray) -> None:  # fmt: skip
    """Node i joins the end of ``owner``'s list (``join``), or leaves it."""
    if join:
        prv[i], nxt[i] = tail[owner], -1
        if tail[owner] >= 0:
            nxt[tail[owner]] = i
        else:
            head[owner] = i
        tail[owner] = i
        return
    if prv[i] >= 0:
        nxt[prv[i]] = nxt[i]
    else:
        head[owner] = nxt[i]
    if nxt[i] >= 0:
        prv[nxt[i]] = prv[i]
    else:
        tail[owner] = prv[i]
    nxt[i] = prv[i] = -1


@njit(cache=True, inline="always")
def _relist(p: int, a: int, b: int, rows: np.ndarray, lists: tuple, rank: np.ndarray, ranks: int) -> int:
    """p leaves a's lists (its first replicas, and the pair lists of each of its slots; a -1: none) and joins the end
    of b's; returns the next rank."""
    nxt, prv, head, tail, snxt, sprv, shead, stail = lists
    n, width = head.shape[0], rows.shape[1]
    for owner, join in ((a, False), (b, True)):
        if owner < 0:
            continue
        _splice(p, owner, join, nxt, prv, head, tail)
        for k in range(width):
            if rows[p, k] >= 0:
                _splice(p * width + k, owner * n + rows[p, k], join, snxt, sprv, shead, stail)
    rank[p] = ranks
    return ranks + 1


@njit(cache=True, inline="always")
def _coolest(b: int, x: int, width: int, electable: np.ndarray, sent: np.ndarray, lists: tuple) -> float:
    """The least traffic among the partitions first on b that x could lead (inf: none)."""
    snxt, shead = lists[4], lists[6]
    best = np.inf
    i = shead[b * lists[2].shape[0] + x]
    while i >= 0:
        q, k = i // width, i % width
        if sent[q] < best and electable[q, k]:
            best = sent[q]
        i = snxt[i]
    return best


@njit(cache=True, inline="always")
def _takes(p: int, j: int, a: int, rows: np.ndarray, electable: np.ndarray, sent: np.ndarray, eligible: np.ndarray,
           load: np.ndarray, target: np.ndarray, count: np.ndarray, excess: float, a_gives: bool, g_hi: int,
           coolest: np.ndarray) -> int:  # fmt: skip
    """Whether a's slot (p, j) takes the lead: 0 no, 1 directly, 2 with a cooler partition going back."""
    b = rows[p, j]
    s = sent[p]
    if b < 0 or b == a or not electable[p, j] or not eligible[b] or not 0 < s:
        return 0
    if not s < 2 * min(excess, target[b] - load[b]):
        return 0
    if a_gives and count[b] + 1 <= g_hi:
        return 1
    return 2 if coolest[b, a] < s else 0


@njit(cache=True, inline="always")
def _switch(p: int, j: int, a: int, rows: np.ndarray, electable: np.ndarray, sent: np.ndarray, load: np.ndarray,
            count: np.ndarray, first: np.ndarray, lists: tuple, rank: np.ndarray, ranks: int,
            coolest: np.ndarray) -> int:  # fmt: skip
    """p's first replica goes from a to its slot j: the loads, counts, lists and coolest partitions follow. Returns
    the next rank."""
    b = rows[p, j]
    width = rows.shape[1]
    first[p] = b
    load[a] -= sent[p]
    load[b] += sent[p]
    count[a] -= 1
    count[b] += 1
    ranks = _relist(p, a, b, rows, lists, rank, ranks)
    for k in range(width):
        x = rows[p, k]
        if x < 0 or not electable[p, k]:
            continue
        if x != a and sent[p] <= coolest[a, x]:  # (p was not a's coolest for x: the others' least stands)
            coolest[a, x] = _coolest(a, x, width, electable, sent, lists)
        if x != b and sent[p] < coolest[b, x]:
            coolest[b, x] = sent[p]
    return ranks


@njit(cache=True)
def hand_overs(elig: np.ndarray, rows: np.ndarray, electable: np.ndarray, sent: np.ndarray, eligible: np.ndarray,
               first: np.ndarray, listed: np.ndarray, load: np.ndarray, target: np.ndarray, hi: np.ndarray,
               count: np.ndarray, g_lo: int, g_hi: int, rounds: int) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Run the hand-overs until no broker above its band (``hi``) has one, or for ``rounds`` of them.

    ``elig`` the eligible broker indexes in order; ``rows``/``electable`` partition x slot (broker index, -1 padded);
    ``sent`` each partition's traffic out as leader; ``first`` each partition's first replica (changed in place);
    ``listed`` the partitions that may change hands, in their lists' order (each under its first replica's broker);
    ``load``/``count`` each broker's traffic out and first replicas (changed in place); ``target`` its share;
    ``g_lo``..``g_hi`` the preferred-leader bounds. Returns every switch made, in order: (partition, slot).

    What a broker's scan may skip: a slot reads its giver's load and count and its fellow's load, count and coolest
    partitions, and a switch changes them for its two brokers alone. So where a broker's rows ranked below
    ``clean[a]`` had no slot to use after switch ``since[a]`` (it found none, or gave from the row after them), and it
    took part in no switch since, only those rows' slots on a broker that took part in one since (``touched``) are
    read again, through the pair lists. Giving only lowers the giver's load and never raises its count, and it drops
    the row given and appends any taken back, so the rows before stay the first rows and their giver's side of every
    test only stricter."""
    n = load.shape[0]
    n_p, width = rows.shape
    lists = (np.full(n_p, -1, np.int64), np.full(n_p, -1, np.int64), np.full(n, -1, np.int64),
             np.full(n, -1, np.int64), np.full(n_p * width, -1, np.int64), np.full(n_p * width, -1, np.int64),
             np.full(n * n, -1, np.int64), np.full(n * n, -1, np.int64))  # fmt: skip
    nxt, prv, head, tail, snxt, sprv, shead, stail = lists
    rank = np.zeros(n_p, np.int64)
    ranks = 0
    for p in listed:
        ranks = _relist(p, -1, first[p], rows, lists, rank, ranks)
    coolest = np.full((n, n), np.inf)
    for p in listed:
        b = first[p]
        for k in range(width):
            x = rows[p, k]
            if x >= 0 and x != b and electable[p, k] and sent[p] < coolest[b, x]:
                coolest[b, x] = sent[p]
    touched = np.full(n, -1, np.int64)  # per broker, the last switch it took part in
    clean = np.zeros(n, np.int64)  # per broker, the rank its unread rows start at (0: read every row)
    after = np.full(n, -1, np.int64)  # per broker, its last clean row (-1: none, the unread rows start at its head)
    since = np.zeros(n, np.int64)
    made_p = np.empty(2 * rounds, np.int64)
    made_j = np.empty(2 * rounds, np.int64)
    made = 0
    over = np.empty(elig.shape[0], np.int64)
    for _ in range(rounds):
        # The brokers above the band, furthest first, ties in broker order (an insertion sort: a few each round).
        k = 0
        for a in elig:
            if load[a] > hi[a]:
                i = k
                while i > 0 and -(load[over[i - 1]] - hi[over[i - 1]]) > -(load[a] - hi[a]):
                    over[i] = over[i - 1]
                    i -= 1
                over[i] = a
                k += 1
        taken_p = -1
        for a in over[:k]:
            excess = load[a] - target[a]
            a_gives = count[a] - 1 >= g_lo
            taken_p, taken_j, how = -1, -1, 0
            if clean[a] > 0:  # the clean rows: only the slots on a broker touched since, the first in row order
                for x in range(n):
                    if x == a or touched[x] < since[a]:
                        continue
                    i_s = shead[a * n + x]
                    while i_s >= 0:
                        p, j = i_s // width, i_s % width
                        if rank[p] >= clean[a] or (taken_p >= 0 and (rank[p], j) > (rank[taken_p], taken_j)):
                            break
                        got = _takes(p, j, a, rows, electable, sent, eligible, load, target, count, excess, a_gives,
                                     g_hi, coolest)  # fmt: skip
                        if got:
                            taken_p, taken_j, how = p, j, got
                            break
                        i_s = snxt[i_s]
            if taken_p < 0:  # the unread rows, every slot
                p = head[a] if after[a] < 0 or clean[a] == 0 else nxt[after[a]]
                while p >= 0 and taken_p < 0:
                    for j in range(width):
                        got = _takes(p, j, a, rows, electable, sent, eligible, load, target, count, excess, a_gives,
                                     g_hi, coolest)  # fmt: skip
                        if got:
                            taken_p, taken_j, how = p, j, got
                            break
                    if taken_p < 0:
                        p = nxt[p]
            if taken_p < 0:  # none: every row is clean as things stand
                clean[a], after[a], since[a] = ranks, tail[a], made
                continue
            p, j = taken_p, taken_j
            b = rows[p, j]
            before, row_after, clean_rank = made, prv[p], rank[p]
            ranks = _switch(p, j, a, rows, electable, sent, load, count, first, lists, rank, ranks, coolest)
            made_p[made], made_j[made] = p, j
            made += 1
            if how == 2:  # the first of b's partitions cooler than p that a can lead goes back
                s = sent[p]
                # Through the (b, a) pair list, in b's list order: b's whole list puts its coolest last.
                i_s = shead[b * n + a]
                while i_s >= 0 and not (sent[i_s // width] < s and electable[i_s // width, i_s % width]):
                    i_s = snxt[i_s]
                if i_s < 0:  # pragma: no cover - coolest said there is one
                    raise AssertionError("network out: no cooler partition to give back")
                q, jq = i_s // width, i_s % width
                ranks = _switch(q, jq, b, rows, electable, sent, load, count, first, lists, rank, ranks, coolest)
                made_p[made], made_j[made] = q, jq
                made += 1
            touched[a] = touched[b] = made - 1
            clean[b] = 0
            clean[a], after[a], since[a] = clean_rank, row_after, before
            break
        if taken_p < 0:
            break
    return made_p[:made], made_j[:made]
