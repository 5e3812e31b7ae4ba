"""Network in's searches, compiled (numba): the replicas a transfer tries, in the order the goal tries them.

Both read one rule, ``better``: moving traffic x from donor a to receiver r is better when the two brokers' distances
outside their bands, summed, fall below a limit (the distance now less the slack). They judge one replica at a time and
stop as soon as they hold ``len(out)`` replicas: at 400 brokers the goal judged all of a broker's ~7,500 replicas as one
NumPy array for every candidate (and sorted those that passed), to use 64 of them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kafka_rebalance.planner.goals.size_walk import walk_from, walk_next


@njit(cache=True, inline="always")
def better(x: float, la: float, lo_a: float, hi_a: float, lr: float, lo_r: float, hi_r: float, limit: float) -> bool:
    """Does moving traffic x from a (load la, band lo_a..hi_a) to r bring the two nearer their bands, in sum, by
    more than the slack (``limit``: the distance outside now less the slack, ``NetworkInGoal._band``)?"""
    on_a = la - x
    on_r = lr + x
    return max(0.0, max(on_a - hi_a, lo_a - on_a)) + max(0.0, max(on_r - hi_r, lo_r - on_r)) < limit


@njit(cache=True)
def closest_to_need(parts: np.ndarray, rates: np.ndarray, skip: np.ndarray, need: float, band: np.ndarray,
                    out: np.ndarray) -> int:  # fmt: skip
    """Of ``parts`` (rates alike) not marked in ``skip``, those whose own move from a to r is better, the first
    ``len(out)`` by (|rate - need|, partition), into ``out``; returns how many. ``band``: la, lo_a, hi_a, lr, lo_r,
    hi_r, limit."""
    k = out.shape[0]
    keys = np.empty(k)
    n = 0
    for i in range(parts.shape[0]):
        if skip[i] or not better(rates[i], band[0], band[1], band[2], band[3], band[4], band[5], band[6]):
            continue
        key, p = abs(rates[i] - need), parts[i]
        if n == k and (key > keys[n - 1] or (key == keys[n - 1] and p > out[n - 1])):
            continue
        j = n if n < k else k - 1  # the last slot is dropped when full
        while j > 0 and (keys[j - 1] > key or (keys[j - 1] == key and out[j - 1] > p)):
            if j < k:
                keys[j], out[j] = keys[j - 1], out[j - 1]
            j -= 1
        keys[j], out[j] = key, p
        n = min(n + 1, k)
    return n


@njit(cache=True)
def nearest_cooler(sp: float, rp: float, parts: np.ndarray, sizes: np.ndarray, rates: np.ndarray, skip: np.ndarray,
                   band: np.ndarray, out: np.ndarray) -> int:  # fmt: skip
    """Of ``parts`` sorted by (size, partition) (sizes and rates alike), not marked in ``skip``, those whose swap
    for a replica of size ``sp`` and rate ``rp`` is better (traffic ``rp - rate`` from a to r), the first
    ``len(out)`` by (|size - sp|, partition) (``size_walk``), into ``out``; returns how many."""
    at = walk_from(sp, sizes)
    n = 0
    while n < out.shape[0]:
        j = walk_next(sp, sizes, parts, at)
        if j < 0:
            break
        if not skip[j] and better(rp - rates[j], band[0], band[1], band[2], band[3], band[4], band[5], band[6]):
            out[n] = parts[j]
            n += 1
    return n
