"""The byte goal's choice of the next broker to fix and of its partners, compiled (numba).

``ByteBalanceGoal._run`` makes this choice once per action: at 400 brokers / 1M partitions about 72,000 times, each
a dozen NumPy calls over the eligible brokers (a sort among them) costing more than the action's own search where
the first partner takes. Same choices as the NumPy form: the first broker furthest outside its band (above wins a
tie), and its partners (``partners``).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def _first(key_a: float, i_a: int, key_b: float, i_b: int) -> bool:
    """(key, position) a before b: by key, ties by position (a stable sort's order)."""
    return key_a < key_b or (key_a == key_b and i_a < i_b)


@njit(cache=True)
def _lowest(order: np.ndarray, key: np.ndarray, me: int, rack: np.ndarray, own_rack: bool, k: int,
            out: np.ndarray) -> int:  # fmt: skip
    """The positions in ``order`` of the ``k`` brokers other than ``me`` (``own_rack``: of its rack only) lowest in
    ``key``, ties by position, in that order, into ``out``; returns how many. (A stable sort of every broker per
    action was a fifth of the compiled byte goal's time: here k insertions into a short list.)"""
    n = 0
    for i in range(order.shape[0]):
        b = order[i]
        if b == me or (own_rack and rack[b] != rack[me]):
            continue
        if n == k and not _first(key[i], i, key[out[n - 1]], out[n - 1]):
            continue
        if n < k:
            n += 1
        j = n - 1
        while j > 0 and _first(key[i], i, key[out[j - 1]], out[j - 1]):
            out[j] = out[j - 1]
            j -= 1
        out[j] = i
    return n


@njit(cache=True)
def partners(order: np.ndarray, key: np.ndarray, me: int, rack: np.ndarray, has_racks: bool, pinned: bool,
             held: np.ndarray, k: int, out: np.ndarray) -> int:  # fmt: skip
    """The ``k`` brokers lowest in ``key`` (lightest for a heavy broker, heaviest for a light one), and as many of
    ``me``'s own rack, into ``out`` (room for 2 k); returns how many. ``order``: the eligible brokers ascending, ``key``
    alike; ties go to the lower broker. Where partitions keep one replica per rack (RF 3 over 3 racks), only a broker
    of the same rack can take or give one, and the lightest of the whole cluster may all sit in other racks.
    ``pinned`` (every movable partition's RF a multiple of the rack count, so no replica can change racks): the same
    rack only.

    Order: the ``held`` ones first (proven out of reach above their band: the cluster's fullest, which only a
    partner's search lowers), then ``me``'s rack, then the others, each in ``key`` order. Same-rack partners before
    the others: a swap across racks needs both replicas free to change racks, and at 200 brokers / 200,000 partitions
    96 % of those tried first failed, 25 of the goal's 30 s."""
    pos = np.empty(2 * k, np.int64)
    if not has_racks:
        n = _lowest(order, key, me, rack, False, k, pos)
        for i in range(n):
            out[i] = order[pos[i]]
        return n
    n = _lowest(order, key, me, rack, True, k, pos)
    if not pinned:
        rest = np.empty(k, np.int64)
        for i in range(_lowest(order, key, me, rack, False, k, rest)):
            if rack[order[rest[i]]] != rack[me]:  # (those of me's rack are among its own k already)
                pos[n] = rest[i]
                n += 1
    # held first, then me's rack, then by key and position: an insertion sort of at most 2 k
    rank = np.empty(n, np.int64)
    for i in range(n):
        b = order[pos[i]]
        rank[i] = (0 if held[b] else 2) + (0 if rack[b] == rack[me] else 1)
    for i in range(1, n):
        p, r = pos[i], rank[i]
        j = i
        while j > 0 and (r < rank[j - 1] or (r == rank[j - 1] and _first(key[p], p, key[pos[j - 1]], pos[j - 1]))):
            pos[j], rank[j] = pos[j - 1], rank[j - 1]
            j -= 1
        pos[j], rank[j] = p, r
    for i in range(n):
        out[i] = order[pos[i]]
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
