"""A pool kept by (size, partition), walked outward from a size (numba): by gap from it, ties by partition.

``goals.base.nearest``'s order for a pool held as sorted arrays: a gap at a time, the run of equal size below the size
and the run above it (each by partition) merged by partition. Topic spread's swaps (``nearest_by_size``) and network
in's (``network_search.nearest_cooler``) walk their pools this way; each stops after the entries it takes.
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
