"""What every goal looks like, and the size-ordered replica index goals pick moves from."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable

import numpy as np

from kafka_rebalance.planner.state import ClusterState

# Candidates examined per search before a (donor, receiver) pair counts as exhausted.
SEARCH_LIMIT = 256


class Goal:
    name = "goal"
    hard = False  # hard goals veto every move, even those of goals optimised before them
    count_goal = False  # a count-neutral swap need not ask a count goal

    def optimize(self, state: ClusterState) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def accept_move(self, state: ClusterState, p: int, src: int, dst: int) -> bool:
        return True


class DonorIndex:
    """A broker's movable replicas sorted by (size, partition), to find the one closest to a wanted size.

    Entries leave the lists as soon as they are taken or found gone, so a search
    never walks over replicas that already moved.
    """

    __slots__ = ("parts", "sizes", "state", "broker")

    def __init__(self, state: ClusterState, broker: int) -> None:
        self.state = state
        self.broker = broker
        ps = state.broker_parts(broker)
        ps = ps[~state.frozen[ps] & ~state.hot[ps]]
        order = np.lexsort((ps, state.sizes[ps]))
        self.parts: list[int] = ps[order].tolist()
        self.sizes: list[int] = state.sizes[ps][order].tolist()

    def put_back(self, p: int) -> None:
        size = int(self.state.sizes[p])
        k = bisect_left(self.sizes, size)
        while k < len(self.parts) and self.sizes[k] == size and self.parts[k] < p:
            k += 1
        self.parts.insert(k, p)
        self.sizes.insert(k, size)

    def find(
        self, desired: float, ok: Callable[[int], bool], limit: int = SEARCH_LIMIT, allow_touched: bool = False
    ) -> int | None:
        """The replica closest in size to ``desired`` that ``ok`` accepts; it leaves the index.

        Partitions already changed by the plan are skipped unless ``allow_touched``:
        moving a second replica of one partition costs no extra move, but it needs a
        second step when only one new replica per partition may be added per batch.
        """
        sizes, parts, touched = self.sizes, self.parts, self.state.touched
        row, broker = self.state.row, self.broker
        n = len(parts)
        i = bisect_left(sizes, desired)
        lo, hi = i - 1, i
        checks = 0
        dead: list[int] = []
        found = None
        while (lo >= 0 or hi < n) and checks < limit:
            if hi >= n or (lo >= 0 and desired - sizes[lo] <= sizes[hi] - desired):
                j = lo
                lo -= 1
            else:
                j = hi
                hi += 1
            p = parts[j]
            if touched[p]:
                if not allow_touched:
                    continue
                if broker not in row(p):  # this very replica has moved already
                    dead.append(j)
                    continue
            checks += 1
            if ok(p):
                dead.append(j)
                found = p
                break
        for j in sorted(dead, reverse=True):
            del parts[j]
            del sizes[j]
        return found


def donor_index(state: ClusterState, broker: int) -> DonorIndex:
    cache = state.__dict__.setdefault("_donor_indexes", {})
    idx = cache.get(broker)
    if idx is None:
        idx = cache[broker] = DonorIndex(state, broker)
    return idx
