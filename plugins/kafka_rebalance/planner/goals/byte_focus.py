"""The byte goal's choice of the next broker to fix and of its partners, compiled (numba).

``ByteBalanceGoal._run`` makes this choice once per action: at 400 brokers / 1M partitions about 72,000 times, each
a dozen NumPy calls over the eligible brokers (a sort among them) costing more than the action's own search where
the first partner takes. Same choices as the NumPy form: the first broker furthest outside its band (above wins a
tie), and its partners (``partners``).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def partners(order: np.ndarray, key: np.ndarray, me: int, rack: np.ndarray, has_racks: bool, pinned: bool,
             held: np.ndarray, k: int, out: np.ndarray) -> int:  # fmt: skip
    """The ``k`` brokers lowest in ``key`` (lightest for a heavy broker, heaviest for a light one), and as many of
    ``me``'s own rack, into ``out`` (room for 2 k); returns how many. ``order``: the eligible brokers ascending, ``key``
    alike. Where partitions keep one replica per rack (RF 3 over 3 racks), only a broker of the same rack can take or
    give one, and the lightest of the whole cluster may all sit in other racks. ``pinned`` (every movable partition's
    RF a multiple of the rack count, so no replica can change racks): the same rack only.

    Order: the ``held`` ones first (proven out of reach above their band: the cluster's fullest, which only a
    partner's search lowers), then ``me``'s rack, then the others, each in ``key`` order, ties by broker. Same-rack
    partners before the others: a swap across racks needs both replicas free to change racks, and at 200 brokers /
    200,000 partitions 96 % of those tried first failed, 25 of the goal's 30 s."""
    by = order[np.argsort(key, kind="mergesort")]  # by key, ties by broker (``order`` ascending, the sort stable)
    n = 0
    if not has_racks:
        for b in by:
            if b != me and n < k:
                out[n] = b
                n += 1
        return n
    picked = np.zeros(by.shape[0], np.bool_)
    own = 0
    rank = 0  # place among the brokers other than me
    for j in range(by.shape[0]):
        b = by[j]
        if b == me:
            continue
        if rack[b] == rack[me] and own < k:
            picked[j] = True
            own += 1
        elif not pinned and rank < k:
            picked[j] = True
        rank += 1
    # ``me``'s rack first, then the others, each in key order; then the held ones moved first (stable)
    for held_pass in (True, False):
        for first in (True, False):
            for j in range(by.shape[0]):
                b = by[j]
                if picked[j] and (rack[b] == rack[me]) == first and held[b] == held_pass:
                    out[n] = b
                    n += 1
    return n


@njit(cache=True)
def next_focus(nbytes: np.ndarray, elig: np.ndarray, upper: np.ndarray, lower: np.ndarray, target: np.ndarray,
               stuck: np.ndarray, rack: np.ndarray, has_racks: bool, pinned: bool, held: np.ndarray, k: int,
               out: np.ndarray) -> tuple[int, bool, int]:  # fmt: skip
    """The broker to fix next, whether it is above its band, and its partners (``partners``, into ``out``, how many);
    broker -1 when no broker not ``stuck`` is outside its band. ``upper``/``lower`` per eligible broker (``elig``
    ascending), the rest per broker."""
    n = elig.shape[0]
    ih = il = 0
    top_hi = top_lo = 0.0
    for i in range(n):
        b = elig[i]
        x = float(nbytes[b])
        above = x - upper[i] if not stuck[b] else 0.0
        below = lower[i] - x if not stuck[b] else 0.0
        if i == 0 or above > top_hi:
            ih, top_hi = i, above
        if i == 0 or below > top_lo:
            il, top_lo = i, below
    if top_hi <= 0 and top_lo <= 0:
        return -1, False, 0
    heavy = top_hi >= top_lo
    key = np.empty(n)
    for i in range(n):
        rel = float(nbytes[elig[i]]) - target[elig[i]]  # above (+) or below (-) its own target
        key[i] = rel if heavy else -rel
    focus = elig[ih] if heavy else elig[il]
    return focus, heavy, partners(elig, key, focus, rack, has_racks, pinned, held, k, out)
