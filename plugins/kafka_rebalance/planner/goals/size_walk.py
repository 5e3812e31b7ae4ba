"""A pool kept by (size, partition), walked outward from a size (numba): by gap from it, ties by partition.

``goals.base.nearest``'s order for a pool held as sorted arrays: a gap at a time, the run of equal size below the size
and the run above it (each by partition) merged by partition. Network in's swaps (``network_search.nearest_cooler``)
walk their pools this way, stopping after the entries they take. Topic spread's swaps read the same order off a pool in
no order (``nearest_unsorted``): most of its pools are read once, and sorting them was a sixth of its kernel's time.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# ``at`` (the walk's place): the next below, the next above, the current run below [a0, a1) and above [b0, b1)
SL, SR, A0, A1, B0, B1 = range(6)


@njit(cache=True, inline="always")
def walk_from(sp: float, sizes: np.ndarray) -> np.ndarray:
    """The place of a walk outward from ``sp`` over ``sizes`` (ascending), before its first entry."""
    at = np.empty(6, np.int64)
    at[SL] = np.searchsorted(sizes, sp) - 1
    at[SR] = at[SL] + 1
    at[A0] = at[A1] = at[B0] = at[B1] = 0
    return at


@njit(cache=True, inline="always")
def walk_next(sp: float, sizes: np.ndarray, parts: np.ndarray, at: np.ndarray) -> int:
    """The position of the walk's next entry (-1: none left), ``at`` moved past it."""
    if at[A0] >= at[A1] and at[B0] >= at[B1]:  # both runs taken: the next gap's
        hi = sizes.shape[0]
        sl, sr = at[SL], at[SR]
        if sl < 0 and sr >= hi:
            return -1
        g = min(sp - sizes[sl] if sl >= 0 else np.inf, sizes[sr] - sp if sr < hi else np.inf)
        at[A0] = at[A1] = sl + 1
        if sl >= 0 and sp - sizes[sl] == g:
            at[A0] = np.searchsorted(sizes[:sl + 1], sizes[sl])
            at[SL] = at[A0] - 1
        at[B0] = at[B1] = sr
        if sr < hi and sizes[sr] - sp == g:
            at[B1] = sr + np.searchsorted(sizes[sr:hi], sizes[sr], "right")
            at[SR] = at[B1]
    if at[B0] >= at[B1] or (at[A0] < at[A1] and parts[at[A0]] < parts[at[B0]]):
        at[A0] += 1
        return at[A0] - 1
    at[B0] += 1
    return at[B0] - 1


@njit(cache=True, inline="always")
def _less(g: float, p: int, h: float, q: int) -> bool:
    """Is (gap g, partition p) taken before (h, q)?"""
    return g < h or (g == h and p < q)


@njit(cache=True)
def nearest_unsorted(sp: float, parts: np.ndarray, sizes: np.ndarray, n: int, out: np.ndarray) -> int:
    """The first ``len(out)`` partitions a walk from ``sp`` takes (by gap from sp, then partition: ``walk_next``'s
    order) of a pool in no order, its first n entries (``parts``, of ``sizes``), into ``out``; returns how many. A
    bounded heap with the farthest kept on top: one comparison for most entries, where a sort takes a dozen."""
    m = out.shape[0]
    h_g, h_p = np.empty(m, np.float64), np.empty(m, np.int64)
    k = 0
    for i in range(n):
        s = sizes[i]
        g = sp - s if s < sp else s - sp
        if k == m and g > h_g[0]:
            continue
        p = parts[i]
        if k < m:  # joins the heap: up while its parent is taken before it
            j = k
            k += 1
            while j > 0 and _less(h_g[(j - 1) >> 1], h_p[(j - 1) >> 1], g, p):
                h_g[j], h_p[j] = h_g[(j - 1) >> 1], h_p[(j - 1) >> 1]
                j = (j - 1) >> 1
            h_g[j], h_p[j] = g, p
            continue
        if not _less(g, p, h_g[0], h_p[0]):
            continue
        j = 0  # replaces the farthest: down while a child is taken after it
        while True:
            c = 2 * j + 1
            if c >= m:
                break
            if c + 1 < m and _less(h_g[c], h_p[c], h_g[c + 1], h_p[c + 1]):
                c += 1
            if not _less(g, p, h_g[c], h_p[c]):
                break
            h_g[j], h_p[j] = h_g[c], h_p[c]
            j = c
        h_g[j], h_p[j] = g, p
    for i in range(1, k):  # nearest first (an insertion sort of at most len(out))
        g, p = h_g[i], h_p[i]
        j = i
        while j > 0 and _less(g, p, h_g[j - 1], h_p[j - 1]):
            h_g[j], h_p[j] = h_g[j - 1], h_p[j - 1]
            j -= 1
        h_g[j], h_p[j] = g, p
    out[:k] = h_p[:k]
    return k
