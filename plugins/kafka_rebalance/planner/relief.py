"""Relief mode (``plan --relieve``): move only what brings each broker over a limit under it, fewest bytes first.

A broker over a limit (its disk's, or a log dir's that its other dirs cannot absorb, or with ``network-in``
selected its network band's) is a donor: it only sends. Every other eligible broker is only ever a
destination. Per donor, the replicas to send are a small knapsack (reach the excess, spend the fewest bytes):
``fewest_bytes`` picks them, and each goes to the destination that stays furthest under its own limit.
The goals own the limits and call here (disk_capacity.py, network.py); nothing here knows what a limit is.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from kafka_rebalance.planner.state import ClusterState

SWAPS = 64  # improving exchanges tried per donor after the greedy pick (each strictly lowers the bytes)
EXCHANGE_SCAN = 64  # unpicked items examined per picked one and exchange
# The grid of the disk's exact pick: the excess in this many units (a replica is off by at most one unit).
DP_UNITS = 2048
DP_ROUNDING = 64  # units below DP_UNITS where a pick may still reach the excess: each replica rounds by half a unit


def fewest_bytes(cost: Sequence[float], gain: Sequence[float], need: float) -> list[int] | None:
    """Indices of items whose ``gain`` sums to at least ``need`` for few ``cost`` (bytes); None when all of them
    together fall short. The cheaper of two greedy picks, each then trimmed (an item the others cover without is
    dropped, the costliest first) and improved by exchanges (a picked item for a cheaper unpicked one wherever
    the pick still reaches ``need``):

    * cover: while no single item covers what is left, take the best gain per byte (the larger gain among
      equals); then the cheapest item that covers the rest;
    * prefix: the best gains per byte until they cover ``need`` (where a cheap cover of the rest is a poor
      rate per byte: network relief's hot partitions);
    * fill: the largest gains that do not overshoot what is left, then the cheapest item covering the rest.

    * and in the disk's case (gain = cost) a subset sum on a grid (``_subset_sum``), within a grid unit per
      picked replica of the fewest bytes.

    The disk's case, 7 GiB of excess over replicas of 30, 20, 15, 9, 8, 5, 3, 1 and 1 GiB: cover takes the
    8 GiB replica, fill and the subset sum 5 + 1 + 1 = 7 GiB, the fewest there are.
    """
    if need <= 0:
        return []
    if sum(g for g in gain if g > 0) < need:
        return None
    items = [i for i in range(len(cost)) if gain[i] > 0]
    by_ratio = sorted(items, key=lambda i: (cost[i] / gain[i], -gain[i], cost[i], i))
    by_gain = sorted(items, key=lambda i: (-gain[i], cost[i], i))
    greedy = [_cover(cost, gain, need, by_ratio), _prefix(gain, need, by_ratio), _fill(cost, gain, need, by_gain)]
    if all(cost[i] == gain[i] for i in items):
        greedy.append(_subset_sum(cost, need, items))
    picks: list[list[int]] = [_exchange(cost, gain, need, _trim(cost, gain, need, p)) for p in greedy if p is not None]
    def bytes_then_count(pick: list[int]) -> tuple[float, int, list[int]]:
        return sum(cost[i] for i in pick), len(pick), sorted(pick)

    best = min(picks, key=bytes_then_count)
    return sorted(best)


def _subset_sum(size: Sequence[float], need: float, items: Sequence[int]) -> list[int] | None:
    """The disk's case solved on a grid: sizes in units of ``need`` / DP_UNITS, rounded to the nearest unit, every
    sum of units some pick reaches (and one such pick each); the first pick whose bytes reach ``need``, from a few
    units below DP_UNITS up (a pick of exactly ``need`` may round to either side of it). Within about a unit per
    picked replica of the fewest bytes; an item of DP_UNITS x 2 units or more is left to the greedy picks (the
    cheapest single cover is one of theirs)."""
    unit = need / DP_UNITS
    cap = 2 * DP_UNITS + 1
    w = {i: int(round(size[i] / unit)) for i in items}
    small = sorted((i for i in items if 0 < w[i] < cap), key=lambda i: (-size[i], i))
    reach = np.zeros(cap, dtype=bool)
    reach[0] = True
    first = np.full(cap, -1, dtype=np.int64)  # the item that first reached each sum (its predecessor came before it)
    for i in small:
        shifted = np.zeros(cap, dtype=bool)
        shifted[w[i] :] = reach[: cap - w[i]]
        new = shifted & ~reach
        first[new] = i
        reach |= shifted
    for at in np.flatnonzero(reach[DP_UNITS - DP_ROUNDING :]).tolist():
        at += DP_UNITS - DP_ROUNDING
        chosen = []
        while at > 0:
            i = int(first[at])
            chosen.append(i)
            at -= w[i]
        if sum(size[i] for i in chosen) >= need:
            return chosen
    return None


def _covering(cost: Sequence[float], gain: Sequence[float], left: float, pool: Sequence[int]) -> int | None:
    """The cheapest item of ``pool`` whose gain alone covers ``left``."""
    return min((i for i in pool if gain[i] >= left), key=lambda i: (cost[i], -gain[i], i), default=None)


def _cover(cost: Sequence[float], gain: Sequence[float], need: float, order: list[int]) -> list[int] | None:
    pool, chosen, left = list(order), list[int](), need
    while left > 0 and pool:
        cover = _covering(cost, gain, left, pool)
        if cover is not None:
            return [*chosen, cover]
        i = pool.pop(0)
        chosen.append(i)
        left -= gain[i]
    return chosen if left <= 0 else None


def _prefix(gain: Sequence[float], need: float, order: list[int]) -> list[int] | None:
    chosen, left = list[int](), need
    for i in order:
        if left <= 0:
            break
        chosen.append(i)
        left -= gain[i]
    return chosen if left <= 0 else None


def _fill(cost: Sequence[float], gain: Sequence[float], need: float, order: list[int]) -> list[int] | None:
    chosen: list[int] = []
    left = need
    for i in order:
        if gain[i] <= left:
            chosen.append(i)
            left -= gain[i]
    if left <= 0:
        return chosen
    taken = set(chosen)
    cover = _covering(cost, gain, left, [i for i in order if i not in taken])
    return None if cover is None else [*chosen, cover]


def _trim(cost: Sequence[float], gain: Sequence[float], need: float, chosen: list[int]) -> list[int]:
    chosen = list(chosen)
    total = sum(gain[i] for i in chosen)
    for i in sorted(chosen, key=lambda i: (-cost[i], i)):
        if total - gain[i] >= need:
            chosen.remove(i)
            total -= gain[i]
    return chosen


def _exchange(cost: Sequence[float], gain: Sequence[float], need: float, chosen: list[int]) -> list[int]:
    """Exchanges that save bytes, the largest saving first. Unpicked items are kept by gain: those at or above a
    floor are found by bisection and the first EXCHANGE_SCAN of them examined (where gain is the cost, the disk's
    case, the first is the cheapest)."""
    chosen = list(chosen)
    total = sum(gain[i] for i in chosen)
    picked = set(chosen)
    rest = sorted((gain[j], cost[j], j) for j in range(len(cost)) if j not in picked and gain[j] > 0)
    gains = [g for g, _, _ in rest]
    for _ in range(SWAPS):
        best: tuple[float, int, int] | None = None
        for i in chosen:
            k = bisect_left(gains, need - (total - gain[i]))
            for _g, c, j in rest[k : k + EXCHANGE_SCAN]:
                if c < cost[i] and (best is None or cost[i] - c > best[0]):
                    best = (cost[i] - c, i, j)
        if best is None:
            break
        _, i, j = best
        chosen[chosen.index(i)] = j
        total += gain[j] - gain[i]
        k = rest.index((gain[j], cost[j], j))
        del rest[k], gains[k]
        k = bisect_left(rest, (gain[i], cost[i], i))
        rest.insert(k, (gain[i], cost[i], i))
        gains.insert(k, gain[i])
    return chosen


def subset_sum_floor(sizes: Sequence[int], need: int) -> int | None:
    """The fewest bytes of any subset of ``sizes`` reaching ``need`` (exact, by enumeration of reachable sums):
    what ``fewest_bytes`` is measured against on small inputs. None when no subset reaches it."""
    reach = {0}
    for s in sizes:
        reach |= {r + s for r in reach}
    above = [r for r in reach if r >= need]
    return min(above) if above else None


@dataclass(frozen=True)
class Donor:
    """A broker index to relieve, by how much (in the goal's own measure), and which of its replicas may go:
    all of them (``whole``), or those of one log dir (``where``) its broker's other dirs cannot relieve. A donor
    of ``need`` 0 sends nothing and receives nothing (a dir its other dirs relieve: they keep their room)."""

    broker: int
    need: float
    parts: tuple[int, ...]
    whole: bool = True
    where: str = ""  # the log dir, for a donor that is one


def relieve(state: ClusterState, donors: Sequence[Donor], gain: Callable[[int], float],
            fill: Callable[[int, int], float], fits: Callable[[int, int], bool]) -> list[int]:  # fmt: skip
    """Send from each donor (in the given order) the fewest bytes whose ``gain`` covers its ``need``, each replica
    to the destination with the least ``fill(p, b)`` (the fraction of its limit it ends at) that ``fits(p, b)``
    and every hard goal accepts. A donor never receives; a broker that is no donor never sends. Returns the
    donors (broker indices) left short. A broker that sent earlier in the plan (another goal's relief) is no
    destination either: it would receive after it sent."""
    sending = {d.broker for d in donors} | {src for _, src, _ in state.changes if src >= 0}
    short = []
    for donor in donors:
        b = donor.broker
        pool = [p for p in donor.parts if b in state.row(p) and not state.frozen[p] and not state.hot[p]]
        # A follower before a leader of the same size: a moved leader is a leader change clients see.
        pool.sort(key=lambda p: (int(state.sizes[p]), int(state.leader[p]) == b, p))
        need = donor.need
        if not donor.whole:  # its need is the dir's at the snapshot: what its broker's own relief sent from it counts
            need -= sum(gain(p) for p in donor.parts if b not in state.row(p))
        while need > 0:
            pick = fewest_bytes([float(state.sizes[p]) for p in pool], [gain(p) for p in pool], need)
            if pick is None:
                short.append(b)
                break
            chosen = [pool[i] for i in pick]
            stuck = None
            done: list[tuple[int, int]] = []
            for p in sorted(chosen, key=lambda p: (-int(state.sizes[p]), p)):
                dst = _destination(state, p, b, sending, fill, fits)
                if dst is None:
                    stuck = p
                    break
                state.move(p, b, dst)
                done.append((p, dst))
            if stuck is None:
                need -= sum(gain(p) for p in chosen)
                break
            for p, dst in reversed(done):  # this pick cannot all be placed: undo it, drop the replica, pick again
                state.move(p, dst, b)
                state.restore(p)
            pool.remove(stuck)
    return short


def spread(state: ClusterState, fill: Callable[[int, int], float], fits: Callable[[int, int], bool]) -> int:
    """Each replica a plan sends (the largest first) to the destination with the least ``fill``, where that is
    less than at its own: the exact model picks which replicas leave by their bytes alone, and any destination
    within the limits is as cheap to it. Bytes and sources do not change. Returns how many replicas it moved."""
    moved = 0
    arrivals = sorted(((p, b) for p, row in list(state.cur.items()) for b in row if b not in state.original_row(p)),
                      key=lambda pb: (-int(state.sizes[pb[0]]), pb))
    senders = {b for p in state.cur for b in state.original_row(p) if b not in state.row(p)}
    for p, b in arrivals:
        src = next(s for s in state.original_row(p) if s not in state.row(p))
        state.move(p, b, src)  # as if it had not arrived: the destinations are judged from there
        dst = _destination(state, p, src, senders, fill, fits)
        if dst is None or dst == b or fill(p, dst) >= fill(p, b):
            dst = b
        state.move(p, src, dst)
        moved += dst != b
    return moved


def _destination(state: ClusterState, p: int, src: int, sending: set[int], fill: Callable[[int, int], float],
                 fits: Callable[[int, int], bool]) -> int | None:  # fmt: skip
    row = state.row(p)
    best: tuple[float, int, int] | None = None
    for dst in state.eligible_idx:
        if dst in sending or dst in row or not fits(p, dst) or not state.accepts(p, src, dst):
            continue
        key = (fill(p, dst), int(state.bytes[dst]), dst)
        if best is None or key < best:
            best = key
    return None if best is None else best[2]


def disk_fill(state: ClusterState) -> Callable[[int, int], float]:
    """The fraction of its disk limit broker ``b`` ends at with a replica of ``p`` (brokers without a limit rank
    after every limited one: +1 beyond any fraction a destination may reach, then by bytes)."""
    limit = state.disk_limit

    def fill(p: int, b: int) -> float:
        after = float(state.bytes[b]) + float(state.sizes[p])
        return after / max(float(limit[b]), 1.0) if np.isfinite(limit[b]) else 2.0

    return fill
